"""``wl.launch``: one call that runs a kernel on a GPU or on the simulator.

    wl.launch(kernel, dim=n, inputs=[...])                     # Warp style
    wl.launch(kernel, grid=(gx, gy, gz), block=(bx, by, bz), inputs=[...])  # CUDA style

The steps: resolve the device, compile for its architecture (cached), work
out grid and block, check the arguments against the signature, then hand the
packed parameters to the device's back end, which returns a
:class:`~warp_lab.runtime.result.LaunchResult`.
"""

from __future__ import annotations

import dataclasses
import difflib
import operator
import time

from warp_lab.compiler.artifact import CompiledKernel
from warp_lab.errors import LaunchError, LaunchInterrupted
from warp_lab.lang.kernel import Kernel
from warp_lab.options import check_options, sm_number
from warp_lab.runtime import args as _args
from warp_lab.runtime.device import get_device
from warp_lab.runtime.result import LaunchResult

__all__ = ["launch", "last_launch", "prepare_launch", "launch_geometry", "check_launch_arch",
           "MAX_THREADS_PER_BLOCK"]

#: CUDA Programming Guide, "Technical Specifications per Compute Capability":
#: at most 1024 threads per block (all CCs 2.0+), block z ≤ 64, grid y/z ≤ 65535,
#: grid x ≤ 2^31 - 1.
MAX_THREADS_PER_BLOCK = 1024
_MAX_BLOCK = (1024, 1024, 64)
_MAX_GRID = (2**31 - 1, 65535, 65535)


def _as_int(value):
    """``value`` as an int when it is an integer (Python or numpy, not bool), else None.

    ``operator.index`` accepts exactly the integer types (``np.int64`` from
    ``np.prod`` included) and refuses floats, strings and bools' cousins such
    as ``8.0`` that ``int()`` would silently truncate.
    """
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _warp_geometry(launch_ndim: int, extents, dim, block_dim):
    """``(grid, block, launch_dim)`` of a ``dim=`` launch of a Warp-dialect kernel whose
    ``wp.tid()`` has ``launch_ndim`` indices, by warp-lang's rule (see
    :func:`launch_geometry`): ``extents`` padded with 1s to the tid's rank; the extents
    past it multiplied into one count of threads that share coordinates, run along the
    first grid axis the tid does not read (its block extent there is 1, so the count is
    exact and the entry guard need not look at it).

    Raises:
        LaunchError: a ``dim`` of more axes than a 3-index ``wp.tid()`` reads (no grid
            axis is left for the shared coordinates).
    """
    padded = tuple(extents) + (1,) * max(0, launch_ndim - len(extents))
    kept, extras = padded[:launch_ndim], padded[launch_ndim:]
    shared = 1
    for e in extras:
        shared *= e
    if shared > 1 and launch_ndim >= 3:
        raise LaunchError(f"dim={dim!r} has {len(extents)} axes but the kernel's wp.tid() "
                          f"reads {launch_ndim}: Warp runs the threads of the extra axes with "
                          "shared coordinates, which warp_lab can do only for a wp.tid() of "
                          "1 or 2 indices; unpack wp.tid() into as many names as dim has axes")
    if launch_ndim == 4:    # (compiler.lower.FunctionLowerer.tid4 reads this layout)
        i, j, k, l_ = kept
        blk = _block_for(2, block_dim)
        cb = max(1, -(-l_ // blk[0]))
        return (cb * j, max(1, -(-k // blk[1])), i), blk, (l_, k, i)
    launch_dim = tuple(reversed(kept)) + (1,) * (3 - launch_ndim)
    blk = _block_for(launch_ndim, block_dim)
    grd = [max(1, -(-e // b)) for e, b in zip(launch_dim, blk)]
    if shared > 1:
        grd[launch_ndim] = shared
        launch_dim = launch_dim[:launch_ndim] + (shared,) + launch_dim[launch_ndim + 1:]
    return tuple(grd), blk, launch_dim


def _ints(value, what: str, minimum: int, most: int = 3) -> tuple[int, ...]:
    """1 to ``most`` integers from an int or a tuple/list of ints, each at least
    ``minimum``."""
    one = _as_int(value)
    items = (value,) if one is not None else value
    if not isinstance(items, (tuple, list)):
        items = None
    vals = tuple(_as_int(v) for v in items) if items is not None else ()
    if not vals or None in vals or not len(vals) <= most or any(v < minimum for v in vals):
        kind = "positive" if minimum > 0 else "non-negative"
        raise LaunchError(f"{what} must be a {kind} int or a tuple of 1 to {most} of them, "
                          f"got {value!r}")
    return vals  # type: ignore[return-value]


def _triple(value, what: str) -> tuple[int, int, int]:
    vals = _ints(value, what, 1)
    return vals + (1,) * (3 - len(vals))  # type: ignore[return-value]


def _block_for(ndim: int, block_dim) -> tuple[int, int, int]:
    """Threads per block for a ``dim=`` launch of ``ndim`` dimensions.

    An int ``block_dim`` is the thread count: 1-D ``(n,1,1)``; 2-D and 3-D put
    32 threads (a warp) along x, the fastest index, for coalescing, and the
    rest along y.
    """
    if _as_int(block_dim) is None:
        return _triple(block_dim, "block_dim")
    block_dim = _as_int(block_dim)
    if block_dim < 1 or block_dim > MAX_THREADS_PER_BLOCK:
        raise LaunchError(f"block_dim must be 1..{MAX_THREADS_PER_BLOCK}, got {block_dim}")
    if ndim == 1 or block_dim < 32:
        return (block_dim, 1, 1)
    return (32, block_dim // 32, 1)


def launch_geometry(launch_ndim: int, dim=None, grid=None, block=None, block_dim=256, *,
                    uses_tid: bool = False, warp_rule: bool = False):
    """Work out ``(grid, block, launch_dim)`` for a launch.

    Args:
        launch_ndim: what the kernel's ``wl.tid()`` returns (1..3; 4 in a Warp-dialect
            kernel).
        uses_tid: whether the kernel calls ``wl.tid()``; then an explicit grid or block,
            or a ``block_dim`` tuple, with more axes than ``launch_ndim`` (``block=(16,
            16)`` or ``dim=n, block_dim=(32, 4)`` for ``i = wl.tid()``) is refused: the
            threads along the extra axis would all get the same index.
        dim: ``n``, ``(n0, n1)`` or ``(n0, n1, n2)`` threads (``dim=`` form);
            the fastest index (last) maps to x.
        warp_rule: the kernel is of the Warp dialect: a ``dim=`` of another rank than
            its ``wp.tid()`` follows warp-lang's ``_build_launch_bounds_from_tuple``
            (``warp/_src/context.py``): a shorter ``dim`` is padded with 1s (``i, j =
            wp.tid()`` with ``dim=n`` gives ``j = 0``), the axes past the tid's rank are
            folded into threads that share its coordinates (``i = wp.tid()`` with
            ``dim=(n, m)`` runs ``n * m`` threads, ``m`` of each ``i``: they run along the
            grid's first axis the tid does not read), and ``dim`` may have 4 axes.
        grid, block: explicit CUDA-style configuration (both or neither).
        block_dim: threads per block for the ``dim=`` form (int or triple).

    Returns:
        ``(grid, block, launch_dim)``, each an ``(x, y, z)`` triple.

    Raises:
        LaunchError: neither or both forms given, dims that do not match the
            kernel's ``tid()`` (``dim=`` of another rank, or with ``uses_tid`` a grid,
            block or ``block_dim`` tuple over more axes), or limits exceeded (1024 threads
            per block, grid y/z ≤ 65535).
    """
    if (dim is None) == (grid is None and block is None):
        raise LaunchError("give either dim=... or grid=... and block=..., not both or neither")
    if dim is not None and warp_rule:
        grd, blk, launch_dim = _warp_geometry(launch_ndim, _ints(dim, "dim", 0, 4), dim,
                                              block_dim)
        uses_tid = False   # (Warp's rule: threads past the tid's axes share coordinates)
    elif dim is not None:
        extents = _ints(dim, "dim", 0)
        if len(extents) != launch_ndim:
            names = ", ".join("ijk"[:launch_ndim])
            raise LaunchError(f"dim={dim!r} has {len(extents)} "
                              f"{'axis' if len(extents) == 1 else 'axes'} but the kernel's "
                              f"wl.tid() gives {launch_ndim} "
                              f"{'index' if launch_ndim == 1 else 'indices'} ({names} = "
                              "wl.tid()); give dim as many axes as wl.tid() has names")
        launch_dim = tuple(reversed(extents)) + (1,) * (3 - len(extents))
        blk = _block_for(len(extents), block_dim)
        grd = tuple(max(1, -(-e // b)) for e, b in zip(launch_dim, blk))
    else:
        if grid is None or block is None:
            raise LaunchError("the explicit form needs both grid=... and block=...")
        grd, blk = _triple(grid, "grid"), _triple(block, "block")
        launch_dim = tuple(g * b for g, b in zip(grd, blk))
    # (the dim= form's grid is 1 past its axes; its block_dim tuple may have more)
    extra = [f"{what} {val[k]} along {'xyz'[k]}" for k in range(launch_ndim, 3)
             for what, val in (("block", blk), ("grid", grd)) if val[k] > 1]
    if uses_tid and extra:
        names = ", ".join("ijk"[:launch_ndim])
        fix = ("give block_dim as an int" + (f" or a tuple of {launch_ndim}" if launch_ndim > 1
                                             else "")
               if dim is not None else f"launch {'xyz'[:launch_ndim]}-only, use dim=...")
        raise LaunchError(
            f"the kernel's wl.tid() is {launch_ndim}-D ({names} = wl.tid()) but the launch "
            f"has {' and '.join(extra)} (grid={grd}, block={blk}): threads that differ "
            f"only there would get the same wl.tid() and do the same work; {fix}, or "
            "unpack wl.tid() into more names")
    threads = blk[0] * blk[1] * blk[2]
    if threads > MAX_THREADS_PER_BLOCK or any(b > m for b, m in zip(blk, _MAX_BLOCK)):
        raise LaunchError(f"block {blk} has {threads} threads; CUDA allows at most "
                          f"{MAX_THREADS_PER_BLOCK} per block and (1024, 1024, 64) per axis")
    if any(g > m for g, m in zip(grd, _MAX_GRID)):
        raise LaunchError(f"grid {grd} exceeds CUDA's limits {_MAX_GRID}")
    if any(x > _args.INT32_MAX for x in launch_dim):
        raise LaunchError(f"launch extents {launch_dim} exceed int32")
    return grd, blk, launch_dim


#: Simulator checks a launch may ask for (``warp_lab.sim.run``'s ``checks``).
CHECKS = ("memcheck", "racecheck", "initcheck", "barrier")


def auto_checks(ck: CompiledKernel) -> tuple[str, ...]:
    """The checks of ``checks="auto"``, :func:`launch`'s default: memcheck and the barrier
    check for every kernel, racecheck and initcheck too for one that uses shared memory
    (:attr:`~warp_lab.compiler.artifact.CompiledKernel.uses_shared_memory`).

    Races and reads of never-written shared memory are the bugs a shared-memory kernel
    most often has, and a simulator that runs a warp's lanes in lockstep hides them in
    its results (a reduction missing its ``syncthreads()`` still sums right), so only a
    finding shows them. They cost about 1.1–1.9× the simulation time
    (docs/decisions/0005-simulator-semantics-and-checks.md, the racecheck table), which kernels without shared memory do
    not pay. compute-sanitizer's default tool is memcheck alone; its racecheck and
    initcheck are separate runs, where here they share the one launch.
    """
    return CHECKS if ck.uses_shared_memory else ("memcheck", "barrier")


def index_checked(ck: CompiledKernel, on: bool) -> CompiledKernel:
    """``ck`` recompiled (cached, without SASS) with
    :attr:`~warp_lab.options.CompileOptions.index_checks` set to ``on``, its other
    options its own; ``ck`` itself when it already has that setting, was compiled with
    ``debug`` (whose checks trap with their message), or does not know its ``@wl.kernel``;
    ``ck`` too when the variant's PTX is its own (no 2-D or wider array access, no
    ``wl.local_array`` access), or when
    the kernel's source or namespace changed since ``ck`` was compiled (a global it reads
    rebound: the variant would compute something else than ``ck``; with ``on`` False, ``ck``
    then runs with its checks, which on a GPU trap as ``debug``'s do).

    memcheck's address check sees an access outside every array only; ``a[i, j]`` with
    ``j >= a.shape[1]`` lands inside ``a`` (another row's element) and gives no finding
    (as with compute-sanitizer). The ``index_checks`` variant the simulator runs for memcheck
    checks each index against its axis's extent (and each index of a ``wl.local_array``,
    whose neighbour in the thread's one local frame, PTX's ``__local_depot``, the address
    check cannot tell apart from it) and reports a failure as an
    ``out_of_bounds`` finding (:func:`~warp_lab.runtime.finding_text.index_finding`).
    The cell's PTX, SASS and resources stay those of ``ck``; per-line metrics of a
    simulator launch count the checks' instructions too.
    """
    o = ck.options
    if o.debug or o.index_checks == on or ck.kernel is None or ck.language != "python":
        return ck   # (a CUDA C++ kernel's pointers have no shape to check indices against)
    from warp_lab.compiler import cache as _cache
    from warp_lab.compiler.pipeline import compile as _compile, toolchain_versions

    kernel = ck.kernel
    # the variant compiles the kernel as its source and namespace are now: a global it reads
    # (SCALE = 3.0 after wl.compile) changed since ck was compiled, it is not ck's variant
    if ck.cache_key:
        now = _cache.cache_key(kernel, o, toolchain_versions(o.arch),
                               _cache.artifact_files(kernel))
    else:   # (compiled with cache=False: compared by its PTX)
        now = _compile(kernel, o, sass=False).ptx
    if now != (ck.cache_key or ck.ptx):
        return ck
    variant = dataclasses.replace(o, index_checks=on)
    if on and ck.cache_key:
        # most kernels index no array with two or more indices: their variant's PTX is
        # ck's own, found from the PTX stages alone (ptxas is most of a compile, 30-60 ms
        # on the first launch after an edit) and remembered for the later launches
        same = _PLAIN_VARIANT.get(ck.cache_key)
        if same is None:
            from warp_lab.compiler.pipeline import make_ptx_text
            try:
                same = make_ptx_text(kernel, variant) == ck.ptx
            except Exception:  # noqa: BLE001 - the compile below reports it as compile does
                same = False
            if len(_PLAIN_VARIANT) >= _PLAIN_VARIANT_SIZE:
                _PLAIN_VARIANT.pop(next(iter(_PLAIN_VARIANT)))
            _PLAIN_VARIANT[ck.cache_key] = same
        if same:
            return ck
    checked = _compile(kernel, variant, sass=False)
    return ck if on and checked.ptx == ck.ptx else checked   # no 2-D access: ck itself


#: compile-cache key of a kernel -> whether its ``index_checks`` variant's PTX is its own
#: (:func:`index_checked`), the oldest forgotten first past :data:`_PLAIN_VARIANT_SIZE`
_PLAIN_VARIANT: dict[str, bool] = {}
_PLAIN_VARIANT_SIZE = 512


def check_checks(checks) -> tuple[str, ...]:
    """``checks`` as a tuple of check names (in :data:`CHECKS`'s order, the simulator's,
    without repeats): None/() for none, one name, or a sequence.

    A plain string is one check (``checks="memcheck"``), never its characters, or a
    comma list as a ``%%warp_kernel`` cell's ``--check`` takes (``"memcheck,racecheck"``;
    ``""`` is none).

    Raises:
        LaunchError: not a string or a list/tuple of strings, or an unknown name (with
            the closest known one).
    """
    if checks is None:
        return ()
    if isinstance(checks, str):
        checks = tuple(c.strip() for c in checks.split(",") if c.strip())
    if not isinstance(checks, (list, tuple, set, frozenset)) \
            or not all(isinstance(c, str) for c in checks):
        raise LaunchError(f"checks must be a check name or a tuple of them ({', '.join(CHECKS)}), "
                          f"got {checks!r}")
    unknown = sorted(set(checks) - set(CHECKS))
    if unknown:
        close = difflib.get_close_matches(unknown[0], CHECKS, n=1)
        raise LaunchError(f"unknown checks {unknown}; the simulator has {', '.join(CHECKS)}"
                          + (f" (did you mean {close[0]!r}?)" if close else ""))
    return tuple(c for c in CHECKS if c in checks)  # one order however they were asked for


def check_shared_mem(shared_mem, ck: CompiledKernel, arch: str) -> int:
    """Validate the dynamic shared memory request of a launch, bytes per block.

    The limit is the architecture's opt-in maximum per block
    (``sharedMemPerBlockOptin``, CUDA Programming Guide "Technical
    Specifications per Compute Capability", from :mod:`warp_lab.analysis.archs`)
    less the kernel's static shared memory; a GPU refuses more
    (``CUDA_ERROR_INVALID_VALUE``), and the simulator would try to allocate it.

    Raises:
        LaunchError: not a non-negative int, or over the limit.
    """
    value = _as_int(shared_mem)
    if value is None or value < 0:
        raise LaunchError(f"shared_mem must be a non-negative number of bytes, got {shared_mem!r}")
    from warp_lab.analysis.archs import AnalysisError, arch_properties

    try:
        optin = arch_properties(arch).shared_mem_per_block_optin
    except AnalysisError:  # an arch the table does not know: leave it to the device
        return value
    static = getattr(ck.resources, "shared", 0) or 0
    if value + static > optin:
        raise LaunchError(f"shared_mem={value} bytes plus the kernel's {static} bytes of static "
                          f"shared memory exceed {arch}'s {optin} bytes per block")
    return value


def check_block_registers(ck: CompiledKernel, block, arch: str) -> None:
    """Refuse a block whose threads need more registers than one SM of ``arch`` has.

    A GPU refuses such a launch with ``CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES`` ("too many
    resources requested for launch"): all of a block's threads are resident on one SM, and
    ``registers per thread × threads``, allocated per warp, must fit in the registers a
    block may use (``cudaOccMaxBlocksPerSMRegsLimit`` of ``cuda_occupancy.h``, here
    :func:`warp_lab.analysis.occupancy`, giving 0 blocks). The simulator, which has no
    register file, refuses it too, so that what runs there also launches on a GPU.

    Args:
        ck: the compiled kernel (its ``resources.registers``; nothing is checked without).
        block: the block, an ``(x, y, z)`` triple of threads.
        arch: the ``sm_XX`` whose limits apply.

    Raises:
        LaunchError: the registers do not fit; it names the largest block (a multiple of
            32 threads) that does and ``maxrregcount``.
    """
    regs = getattr(ck.resources, "registers", None)
    if not regs:
        return
    from warp_lab.analysis import occupancy
    from warp_lab.analysis.archs import AnalysisError, arch_properties

    threads = block[0] * block[1] * block[2]
    try:
        occ = occupancy(ck, arch, block_size=threads)
        props = arch_properties(arch)
    except AnalysisError:  # an arch the tables do not know: leave it to the device
        return
    if occ.limits.get("registers") != 0:
        return
    fits = next((b for b in range(threads // 32 * 32, 0, -32)
                 if occupancy(ck, arch, block_size=b).limits.get("registers")), 0)
    raise LaunchError(
        f"block {tuple(block)} needs {occ.allocated_registers_per_block:,} registers "
        f"({regs} per thread × {threads} threads, allocated per warp), more than the "
        f"{props.registers_per_block:,} a block may use on {arch}: a GPU refuses this launch "
        "(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 'too many resources requested for launch'), so "
        f"the simulator does too; launch blocks of at most {fits} threads, or cap the "
        "registers per thread with maxrregcount (ptxas then spills to local memory)")


def check_launch_arch(arch, dev) -> str:
    """Validate ``wl.launch(..., arch=)`` for the device ``dev`` (a :class:`DeviceInfo`).

    On the simulator any architecture warp_lab compiles for runs (its PTX is what the
    simulator executes, with that arch's rules). On a GPU the kernel's PTX for ``arch``
    is JIT-compiled by the driver, which can target the device only when ``arch`` is not
    newer than it: PTX compiled for compute capability X runs on X and later ones
    (CUDA C++ Programming Guide, "Application Compatibility").

    Raises:
        LaunchError: ``arch`` is not one of
            :data:`~warp_lab.options.SUPPORTED_ARCHS`, or is newer than the GPU.
    """
    try:
        check_options(arch=arch)
    except ValueError as exc:
        raise LaunchError(f"arch={arch!r}: {exc}") from None
    if dev.kind != "sim" and sm_number(arch) > sm_number(dev.arch):
        raise LaunchError(f"arch={arch!r} is newer than the device, {dev}: PTX compiled for "
                          f"{arch} cannot be JIT-compiled for an older GPU (CUDA Programming "
                          f"Guide, \"Application Compatibility\"); pass arch={dev.arch!r} or an "
                          "older one, or device='sim'")
    return arch


def prepare_launch(kernel, arch: str, inputs, dim=None, grid=None, block=None, block_dim=256,
                   opt: int | None = None, fast_math: bool | None = None,
                   debug: bool | None = None, exact_arch: bool = False):
    """Everything a back end needs, checked: the compiled variant, geometry and arguments.

    A ``@wl.kernel`` is compiled (cached, without SASS) for ``arch``, first
    for arrays with unit stride in their last dimension; if an argument is
    strided there, the general variant is compiled instead; likewise the variant with
    one access per component when a ``vec2``/``vec4`` array's elements would not
    be aligned to their size on the device, and the variant without read-only
    cache loads when an array the kernel only reads shares memory with one it
    writes. A kernel compiled
    without an entry guard (one that does not use ``wl.tid()``) is compiled
    with one when ``dim=`` is not a whole number of blocks, so that exactly
    ``dim`` threads run. A CompiledKernel that needs such a variant gets it
    compiled from its ``kernel`` with its own options (arch included), as is one
    compiled for another arch than ``arch`` when ``exact_arch`` is set.

    Args:
        kernel: a ``@wl.kernel`` or a :class:`CompiledKernel`.
        arch: the ``sm_XX`` to compile a Kernel for (the device's, or ``launch``'s ``arch=``).
        inputs, dim, grid, block, block_dim, opt, fast_math, debug: as for :func:`launch`.
        exact_arch: a CompiledKernel must be for ``arch`` too (``launch``'s ``arch=``).

    Returns:
        ``(compiled, grid, block, launch_dim, values, views)``.

    Raises:
        LaunchError: bad configuration or arguments (``inputs`` not a list or
            tuple, ``opt`` not 0..3, ``fast_math``/``debug`` not bools, a
            read-only array the kernel may write),
            or a CompiledKernel that needs a variant (a strided array, a
            misaligned vector array, aliased read-only and written arrays, or
            no entry guard for a ``dim=`` that
            is not a whole number of blocks)
            and does not know its ``@wl.kernel``.
    """
    try:
        check_options(opt=opt, **{k: v for k, v in (("fast_math", fast_math), ("debug", debug))
                                   if v is not None})
    except ValueError as exc:
        raise LaunchError(str(exc)) from None
    if not isinstance(inputs, (list, tuple)):
        raise LaunchError(f"inputs must be a list of arguments, one per kernel parameter, got "
                          f"{type(inputs).__name__}")
    from warp_lab.compiler.pipeline import compile as _compile

    if getattr(kernel, "language", None) == "cuda" or (
            isinstance(kernel, CompiledKernel) and kernel.language == "cuda"):
        return _prepare_cuda(kernel, arch, inputs, dim, grid, block, block_dim, opt,
                             fast_math, debug, exact_arch)
    if isinstance(kernel, Kernel):
        try:
            check_options(arch=arch)
        except ValueError as exc:  # a GPU newer than the toolchain tables
            raise LaunchError(f"the device is {arch}, which warp_lab cannot compile for ({exc}); "
                              "run on device='sim', or pass a kernel compiled for a compatible "
                              "arch (its PTX is JIT-compiled)") from None
        # launches need no SASS; skipping nvdisasm saves ~0.35 s on a first launch
        ck = _compile(kernel, arch=arch, opt=opt, fast_math=fast_math, debug=debug, sass=False)
    elif isinstance(kernel, CompiledKernel):
        ck = kernel
    else:
        raise LaunchError(f"wl.launch needs a @wl.kernel or a CompiledKernel, got "
                          f"{type(kernel).__name__}")

    def variant(why: str, **changes) -> CompiledKernel:
        """``ck`` recompiled with ``changes`` to its options (the others its own), or
        LaunchError when ``ck`` does not know its ``@wl.kernel``."""
        if ck.kernel is None:
            raise LaunchError(f"{ck.name} {why}; pass the @wl.kernel itself or compile it with "
                              f"wl.compile(..., {', '.join(f'{k}={v}' for k, v in changes.items())})")
        return _compile(ck.kernel, dataclasses.replace(ck.options, **changes), sass=False)

    if exact_arch and ck.options.arch != arch:
        ck = variant(f"was compiled for {ck.options.arch}, not the launch's arch={arch!r}",
                     arch=arch)
    # entry_guard left to its default is exactly "the kernel uses wl.tid()"
    uses_tid = ck.entry_guard and ck.options.entry_guard is None
    grd, blk, launch_dim = launch_geometry(ck.launch_ndim, dim, grid, block, block_dim,
                                           uses_tid=uses_tid, warp_rule=ck.dialect == "warp")
    values, views = _args.check_arguments(ck.params, list(inputs))
    strided = [v.name for v in views if v.shape and v.shape[-1] > 1 and v.strides[-1] != 1]
    if strided and ck.options.unit_inner_stride:
        ck = variant(f"was compiled for arrays with stride 1 in the last dimension, but "
                     f"{', '.join(repr(n) for n in strided)} is strided there",
                     unit_inner_stride=False)
    misaligned = _args.misaligned_vectors(ck.params, views)
    if misaligned and ck.options.aligned_vectors:
        ck = variant(f"was compiled for vec2/vec4 elements aligned to their size (one vector "
                     f"load/store each), but {', '.join(repr(n) for n in misaligned)} is not "
                     "(a view that starts inside an element of the memory it shares)",
                     aligned_vectors=False)
    shared = _args.read_only_aliases(views, ck.written_params)
    if shared and ck.options.read_only_cache:
        ck = variant(f"reads {', '.join(repr(n) for n in shared)} through the read-only data "
                     "cache (ld.global.nc), but an argument it writes shares that memory",
                     read_only_cache=False)
    partial = any(d != g * b for d, g, b in zip(launch_dim, grd, blk))
    if partial and not ck.entry_guard:
        ck = variant(f"was compiled without an entry guard, but dim={dim!r} is not a whole "
                     f"number of blocks of {blk} (the threads of the last block past "
                     f"{launch_dim} would run too; or launch a multiple of the block size)",
                     entry_guard=True)
    _refuse_read_only_outputs(ck, views)
    return ck, grd, blk, launch_dim, values, views


def _prepare_cuda(kernel, arch, inputs, dim, grid, block, block_dim, opt, fast_math, debug,
                  exact_arch):
    """:func:`prepare_launch` for a CUDA C++ kernel (``wl.cuda_kernel`` or its
    CompiledKernel): the C ABI has no variants, no entry guard and no hidden extent, so a
    ``dim=`` launch must be a whole number of blocks (the kernel checks its own bounds, as
    ``if (i >= n) return;`` does); ``grid=``/``block=`` is CUDA's ``<<<grid, block>>>``."""
    from warp_lab.compiler.pipeline import compile as _compile

    if isinstance(kernel, CompiledKernel):
        ck = kernel
        if exact_arch and ck.options.arch != arch:
            if ck.kernel is None:
                raise LaunchError(f"{ck.name} was compiled for {ck.options.arch}, not the "
                                  f"launch's arch={arch!r}; pass the wl.cuda_kernel itself")
            ck = _compile(ck.kernel, dataclasses.replace(ck.options, arch=arch), sass=False)
    else:
        try:
            check_options(arch=arch)
        except ValueError as exc:
            raise LaunchError(f"the device is {arch}, which warp_lab cannot compile for "
                              f"({exc}); run on device='sim'") from None
        ck = _compile(kernel, arch=arch, opt=opt, fast_math=fast_math, debug=debug, sass=False)
    if dim is not None and grid is None and block is None:
        ndim = len(_ints(dim, "dim", 0))
        grd, blk, launch_dim = launch_geometry(ndim, dim, None, None, block_dim)
        if any(d != g * b for d, g, b in zip(launch_dim, grd, blk)):
            fix_grid = tuple(-(-d // b) for d, b in zip(launch_dim, blk))
            raise LaunchError(
                f"dim={dim!r} is not a whole number of blocks of {blk}, and CUDA C++ kernel "
                f"{ck.name} has no entry guard (threads past dim would run its body); launch "
                f"grid={fix_grid[:ndim]}, block={blk[:ndim]} and check the bounds in the "
                "kernel (if (i >= n) return;), or give a dim that the block divides")
    else:
        grd, blk, launch_dim = launch_geometry(3, dim, grid, block, block_dim)
    values, views = _args.check_arguments(ck.params, list(inputs))
    bad = _args.misaligned_pointers(ck.params, views)
    if bad:
        types = dict(ck.params)
        raise LaunchError(", ".join(f"parameter {n!r} ({types[n]!r})" for n in bad)
                          + " would not be aligned to its element type on the device (a "
                          "view starting inside an element); a GPU faults on it (misaligned "
                          "address): pass an array that starts at an element boundary")
    _refuse_read_only_outputs(ck, views)
    return ck, grd, blk, launch_dim, values, views


def _refuse_read_only_outputs(ck: CompiledKernel, views) -> None:
    """A read-only array (``flags.writeable`` False) the kernel may store through is refused.

    Which parameters are stored through is the compiler's
    ``CompiledKernel.written_params``; read-only arrays the kernel only reads,
    such as ``np.broadcast_to`` views, are fine.
    """
    for name in [v.name for v in views if not v.array.flags.writeable]:
        if name in ck.written_params:
            raise LaunchError(f"parameter {name!r} is read-only (flags.writeable is False, e.g. "
                              f"an np.broadcast_to view) but {ck.name} may write it; pass a "
                              "writable copy (np.array(...))")


#: ``wl.launch(fill="nan")``'s word (:data:`warp_lab.sim.machine.FILL`, kept equal by a test)
FILL_NAN = 0x7FF8DEAD


def check_fill(fill) -> int | None:
    """The 32-bit word ``wl.launch(fill=...)`` asks for (None: zeros).

    Raises:
        LaunchError: ``fill`` is none of ``"nan"``, ``"zeros"``, None or an int in
            [0, 2**32).
    """
    if fill is None or (isinstance(fill, str) and fill == "zeros"):
        return None
    if isinstance(fill, str) and fill == "nan":
        return FILL_NAN
    word = _as_int(fill) if not isinstance(fill, (bool, str)) else None
    if word is None or not 0 <= word < 2**32:
        raise LaunchError(f"fill must be \"nan\", \"zeros\", None or a 32-bit word "
                          f"(0 <= fill < 2**32), got {fill!r}")
    return word


def launch(kernel, dim=None, inputs=(), block_dim=256, device: str = "auto", repeat: int = 1,
           shared_mem: int = 0, grid=None, block=None, checks="auto",
           max_instructions: int | None = None, opt: int | None = None,
           fast_math: bool | None = None, debug: bool | None = None,
           progress=None, arch: str | None = None, fill="nan", tier: str = "auto",
           metrics: bool = True) -> LaunchResult:
    """Run a kernel.

    Args:
        kernel: a ``@wl.kernel`` or a ``wl.cuda_kernel`` (compiled on first use for the
            device's architecture, cached; a CUDA C++ kernel's pointer parameters take
            contiguous arrays of their element type, ``dim=`` must then be a whole
            number of blocks) or a :class:`CompiledKernel` (used as is on
            the simulator, but for memcheck's index checks, :func:`index_checked`;
            on a GPU its PTX is JIT-compiled when its arch differs).
        dim: threads to run, ``n`` or ``(n0, n1[, n2])``; ``wl.tid()`` never
            reaches ``dim``.
        inputs: a list or tuple, one argument per kernel parameter: numpy
            arrays (any strides) or ``wl.array`` for arrays, Python/numpy
            numbers for scalars. A finite number that overflows a float
            parameter's type (``1e300`` for a float32) is refused rather than
            becoming ``inf``.
        block_dim: threads per block for the ``dim=`` form (default 256), an
            int or a tuple of up to 3 ints. A tuple is CUDA's ``(x, y, z)``, the
            reverse of ``dim``'s order: with ``dim=(rows, cols)``,
            ``block_dim=(32, 8)`` is 32 threads along ``cols`` (x, the lanes of a
            warp) by 8 along ``rows``. An int puts 32 along x for a 2-D or 3-D
            ``dim`` and the rest along y.
        device: ``"auto"`` (GPU if usable, else simulator), ``"sim"``,
            ``"cuda"`` or ``"cuda:N"``.
        repeat: timed launches; every launch starts from the same inputs, so
            outputs equal those of a single launch.
        shared_mem: dynamic shared memory per block, bytes; at most the
            arch's opt-in limit less the kernel's static shared memory.
        grid, block: the explicit CUDA form instead of ``dim``.
        checks: simulator checks to run (``"memcheck"``, ``"racecheck"``,
            ``"initcheck"`` (reads of shared memory not yet written in the block),
            ``"barrier"``; one name, a comma list ``"memcheck,racecheck"`` as
            ``--check`` takes, or a tuple; None or ``""`` for none); ignored on a GPU.
            ``"auto"`` (the default): all four for a kernel that uses shared memory,
            else memcheck and barrier (:func:`auto_checks`). With memcheck the
            simulator runs the kernel with each index of a 2-D or wider array access
            checked against its axis's extent (:func:`index_checked`; the result's
            ``compiled`` is that variant).
        max_instructions: simulator budget of thread-instructions, a positive
            int (None: no limit).
        opt, fast_math, debug: compile options when ``kernel`` is a Kernel
            (``opt`` 0..3 is checked in any case); None: the kernel's own
            (:attr:`Kernel.options`, e.g. its ``%%warp_kernel`` cell's
            ``--debug``), else 3, False, False. On the simulator a Kernel
            that carries an ``arch`` is compiled for it; on a GPU for the GPU
            (unless ``arch=`` is given).
        progress: simulator only (ignored on a GPU): None or a callable
            ``progress(blocks_done, blocks_total)`` called after each batch of
            simulated blocks, counts increasing and ending at ``blocks_total``
            (over all ``repeat`` runs). Raising from it stops the launch cleanly:
            ``partial=True``, the arrays unchanged. The notebook's ``--launch``
            uses it for a progress bar.
        arch: the ``sm_XX`` to compile for (checked as ``opt`` is), overriding the
            kernel's own (a ``%%warp_kernel --arch`` or ``@wl.kernel(arch=...)``) and the
            device's. On the simulator the PTX for ``arch`` runs with that arch's rules
            (``wl.reduce_add_sync`` needs sm_80, a ``shared_mem`` limit is the arch's) and
            the result names it; on a GPU the driver JIT-compiles that PTX for the GPU,
            so ``arch`` may not be newer than the GPU's (:func:`check_launch_arch`). A
            :class:`CompiledKernel` for another arch is recompiled from its kernel.
        fill: simulator only (ignored on a GPU): what fresh shared and local memory
            hold. ``"nan"`` (the default): the word ``0x7FF8DEAD`` repeated, a NaN read
            as float32 or float64 and 2146016941 as int32, so a kernel that reads shared
            or local memory it never wrote gives a visibly wrong result, as it may on a
            GPU, where those state spaces start with whatever was there (PTX ISA 5.1.5,
            5.1.7) — ``"initcheck"`` names such reads; None or ``"zeros"`` for zeros; or
            any 32-bit word (``0xDEADBEEF``).
        tier: simulator only (ignored on a GPU): ``"auto"`` (the default: the compiled
            tier where it covers the launch, else the interpreter), ``"interpreter"``
            (the SIMT engine) or ``"compiled"`` (the PTX translated once into host code
            through llvmlite and run a thread at a time, :mod:`warp_lab.sim.compiled`; a
            :class:`SimulatorError` says why when it does not cover the kernel). Results
            and findings are the interpreter's either way; ``LaunchResult.tier`` and
            ``tier_reason`` say which ran and why.
        metrics: simulator only: collect the per-line metrics (default True). The
            compiled tier does not count them, so with the default a launch runs on the
            interpreter; ``metrics=False`` lets ``tier="auto"`` pick the compiled tier.

    Returns:
        a :class:`LaunchResult`.

    Raises:
        LaunchError: bad configuration or arguments (names the parameter), or
            ``progress`` neither None nor callable.
        CudaError: the GPU asked for is unavailable, or the driver failed.
        KernelCompileError: the kernel does not compile.
        SimulatorError: the simulator cannot run it, or it faulted.
        LaunchInterrupted: Ctrl-C (SIGINT) during a simulated launch: a
            ``KeyboardInterrupt`` whose ``result`` (also :func:`last_launch`) is the
            partial LaunchResult (``partial=True``, an ``interrupted`` finding, the arrays
            unchanged), or the complete one when the Ctrl-C came while the results were
            copied back (every output array written).
    """
    t0 = time.perf_counter()
    _last[0] = None
    dev = get_device(device)
    if _as_int(repeat) is None or repeat < 1:
        raise LaunchError(f"repeat must be a positive int, got {repeat!r}")
    repeat = _as_int(repeat)
    auto = isinstance(checks, str) and checks.strip() == "auto"
    checks = () if auto else check_checks(checks)
    if max_instructions is not None and (_as_int(max_instructions) is None
                                         or max_instructions < 1):
        raise LaunchError(f"max_instructions must be None or a positive int, got "
                          f"{max_instructions!r}")
    max_instructions = None if max_instructions is None else _as_int(max_instructions)
    exact_arch = arch is not None
    if exact_arch:
        arch = check_launch_arch(arch, dev)
    else:
        arch = dev.arch
        if dev.kind == "sim" and not isinstance(kernel, CompiledKernel) and (
                isinstance(kernel, Kernel) or getattr(kernel, "language", None) == "cuda"):
            # the PTX its cell showed
            arch = kernel.options.get("arch", arch)
    ck, grd, blk, launch_dim, values, views = prepare_launch(
        kernel, arch, inputs, dim=dim, grid=grid, block=block, block_dim=block_dim,
        opt=opt, fast_math=fast_math, debug=debug, exact_arch=exact_arch)
    if dev.kind == "sim" and ck.options.arch != dev.arch:
        # the simulator runs the PTX as compiled (a CompiledKernel's, or the arch a Kernel
        # carries), with that arch's rules and limits: the result names that arch
        dev = dataclasses.replace(dev, arch=ck.options.arch)
    if auto:
        checks = auto_checks(ck)
    # a GPU's own limit; on the simulator, that of the arch the kernel was compiled for
    shared_mem = check_shared_mem(shared_mem, ck, dev.arch)
    if dev.kind == "sim":  # a GPU's driver refuses it itself (cuda_backend.EXPLANATIONS)
        check_block_registers(ck, blk, dev.arch)
    # memcheck on the simulator runs the kernel with its array indices checked per axis;
    # a GPU runs the plain kernel (a LaunchResult.compiled launched again there), but for
    # an index-checked CompiledKernel whose kernel's namespace changed since: it runs as is
    ck = index_checked(ck, dev.kind == "sim" and "memcheck" in checks)
    if progress is not None and not callable(progress):
        raise LaunchError(f"progress must be None or a callable (blocks_done, blocks_total), "
                          f"got {type(progress).__name__}")
    fill_word = check_fill(fill)
    extra = {}
    if dev.kind == "sim":
        from warp_lab.runtime import sim_backend as backend
        extra["progress"] = progress
        extra["fill"] = fill_word
        if tier not in ("interpreter", "compiled", "auto"):
            raise LaunchError(f"tier must be 'interpreter', 'compiled' or 'auto', got {tier!r}")
        if not isinstance(metrics, bool):
            raise LaunchError(f"metrics must be True or False, got {metrics!r}")
        extra["tier"] = tier
        extra["metrics"] = metrics
    else:
        from warp_lab.runtime import cuda_backend as backend
    try:
        result = backend.run(ck, dev, grd, blk, launch_dim, values, views, repeat=repeat,
                             shared_mem=shared_mem, checks=checks,
                             max_instructions=max_instructions, **extra)
    except LaunchInterrupted as exc:
        _last[0] = dataclasses.replace(exc.result, host_seconds=time.perf_counter() - t0)
        raise LaunchInterrupted(_last[0]) from exc.__cause__
    _last[0] = dataclasses.replace(result, host_seconds=time.perf_counter() - t0)
    return _last[0]


#: the LaunchResult of the latest wl.launch call (None: it ended before its back end ran)
_last: list = [None]


def last_launch() -> LaunchResult | None:
    """The :class:`LaunchResult` of the latest :func:`launch` call in this process.

    A Ctrl-C stops a simulated launch by raising
    :class:`~warp_lab.errors.LaunchInterrupted` (a ``KeyboardInterrupt``, so the cell or a
    loop of launches stops too); this is where a notebook finds what that launch did
    afterwards (the exception's ``result`` is the same object)::

        wl.launch(k, dim=n, inputs=[x])     # Ctrl-C: KeyboardInterrupt
        r = wl.last_launch()                # r.partial, r.findings == [interrupted]

    Returns:
        the latest call's result, complete or partial (``partial=True`` and an
        ``interrupted`` finding when the interrupt stopped the simulator; its arrays
        were left unchanged), or ``None`` when that call raised before a back end ran
        (a compile error, bad arguments, a Ctrl-C while compiling) or no launch ran yet.
        One record for the process: a launch from another thread replaces it.
    """
    return _last[0]
