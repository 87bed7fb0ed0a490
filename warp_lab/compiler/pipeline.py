"""``wl.compile``: the driver that calls the stages in order and nothing else.

    frontend.make_typed_ast → lower.make_llvm_ir → nvptx.make_ptx (with
      line_zero.attribute_line_zero) → toolchain.make_cubin → toolchain.disassemble
      → linemap.build_line_map (into the SourceMap)

Each stage's product lands in one field of the :class:`CompiledKernel`.
When ptxas or nvdisasm is missing or fails, the fields that need it are None
and ``missing`` says why; everything before them still works.

nvdisasm costs 0.4-0.7 s of CPU per run whatever the kernel (its start-up),
more than the rest of the pipeline together, so ``sass=False`` skips it:
``wl.launch`` compiles that way. A later ``compile(..., sass=True)`` of the
same kernel finds the cached cubin and only disassembles it. The register
life ranges (``life_ranges=True``, which the notebook view asks for) need a
second nvdisasm run; it goes concurrently with the listing's.
"""

from __future__ import annotations

import inspect

import contextlib
import dataclasses
import functools
import os
import sys
import time

import llvmlite
import llvmlite.binding as llvm

from warp_lab.compiler import abi, cache as _cache, frontend, linemap, lower, nvptx, toolchain
from warp_lab.compiler.artifact import SHARED_DECL, CompiledKernel
from warp_lab.compiler.source_map import SourceMap
from warp_lab.compiler.ice import internal_error
from warp_lab.errors import ToolchainError, WarpLabError
from warp_lab.lang.kernel import Kernel
from warp_lab.options import (CompileOptions, check_options, given_options, resolve_options,
                              sm_number)
from warp_lab.version import __version__

__all__ = ["compile", "add_disassembly", "needs_disassembly", "make_ptx_text", "toolchain_versions"]


# Python frames the typer and lowering may stack: a few per level of nesting (each
# term of a + b + ..., each elif), so CPython's default limit (1000) refused about 330
# levels, where Python's own compiler takes about 3000 (its C limit). From Python 3.11
# a call from Python to Python takes no C stack, so a deeper limit cannot crash.
_RECURSION_LIMIT = 20_000


@contextlib.contextmanager
def _deep_recursion():
    """Raise the recursion limit to :data:`_RECURSION_LIMIT` (Python 3.11+) while the
    front end and lowering walk a kernel, then restore it."""
    before = sys.getrecursionlimit()
    if sys.version_info >= (3, 11) and before < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


@functools.lru_cache(maxsize=None)
def toolchain_versions(arch: str) -> dict[str, str]:
    """What produced an artifact for ``arch``: warp_lab, llvmlite/LLVM, ptxas, nvdisasm and
    libdevice versions (a missing tool as ``"missing: <why>"``); part of the cache key."""
    sm = sm_number(arch)
    out = {"warp_lab": __version__, "llvmlite": llvmlite.__version__,
           "llvm": ".".join(map(str, llvm.llvm_version_info))}
    for name in ("ptxas", "nvdisasm"):
        try:
            tool = toolchain.find_tool(name, sm)
            out[name] = f"{tool.version} ({tool.path})"
        except ToolchainError as exc:
            out[name] = f"missing: {exc}"
    try:
        st = os.stat(nvptx.libdevice_path())
        out["libdevice"] = f"{st.st_size}:{int(st.st_mtime)}"
    except (ToolchainError, OSError):
        out["libdevice"] = "missing"
    return out


def compile(kernel: Kernel, options: CompileOptions | None = None, *, cache: bool = True,
            sass: bool = True, life_ranges: bool = False, **overrides) -> CompiledKernel:
    """Compile a kernel for one architecture.

        wl.compile(k)                                   # the kernel's own options, else defaults
        wl.compile(k, arch="sm_80", opt=2)              # those two set, the rest as above
        wl.compile(k, opts)                             # exactly opts (a CompileOptions)
        wl.compile(k, dataclasses.replace(ck.options, read_only_cache=False))   # a variant

    Args:
        kernel: a ``@wl.kernel`` function, or a ``wl.cuda_kernel`` (compiled by NVRTC:
            :func:`warp_lab.compiler.cuda_pipeline.compile_cuda`, which takes ``arch``,
            ``opt``, ``fast_math``, ``debug``, ``lineinfo``, ``maxrregcount`` and the
            cache/SASS switches; its other options do not apply).
        options: a :class:`~warp_lab.options.CompileOptions` taken as it is (the kernel's
            own options do not apply), or None (default): the kernel's own
            (:attr:`Kernel.options`: ``@wl.kernel(...)``, its ``%%warp_kernel`` cell's
            options), else :data:`~warp_lab.options.KERNEL_OPTION_DEFAULTS`
            (``"sm_90"``, ``-O3``, no fast math, no debug, no register cap).
        cache: look up and store the result in the memory + disk cache.
        sass: disassemble the cubin (``sass``, SASS line map); False leaves
            ``sass`` None with ``missing["sass"]`` saying so.
        life_ranges: also keep nvdisasm's register life-range table
            (``life_ranges``, what the register heat columns and
            :func:`~warp_lab.analysis.registers.register_pressure` read); its
            nvdisasm run goes concurrently with the listing's.
        overrides: fields of :class:`~warp_lab.options.CompileOptions` by name, applied
            over ``options`` (or over the kernel's own and the defaults); ``arch``,
            ``opt``, ``fast_math``, ``debug`` and ``maxrregcount`` given as None are not
            set. The fields:

            - ``arch``: target ``sm_XX`` (:data:`warp_lab.options.SUPPORTED_ARCHS`).
            - ``opt``: LLVM optimisation level 0..3.
            - ``fast_math``: fast-math flags, flush-to-zero, approximate division.
            - ``debug``: ``assert``, array and run-time vector/tuple bounds, a zero
              ``range()`` step and a negative shift count become traps that print their
              message (docs/language.md).
            - ``lineinfo``: line tables in PTX (``.loc``), cubin and SASS (default True).
            - ``maxrregcount``: registers-per-thread cap handed to ptxas.
            - ``launch_ndim``: force what ``wl.tid()`` returns (default: inferred).
            - ``unit_inner_stride``: compile for arrays with element stride 1 in the last
              dimension (default); False for any strides.
            - ``entry_guard``: threads at or past the launch extent return at entry; None
              (default) for kernels that use ``wl.tid()`` only.
            - ``aligned_vectors``: one vector load/store per ``vec2``/``vec4`` array
              element (default); False for elements of any alignment.
            - ``read_only_cache``: ``ld.global.nc`` for the array parameters the kernel
              never writes (default).
            - ``index_checks``: array bounds checks reported as simulator findings (what
              ``wl.launch`` compiles for memcheck).

    Returns:
        the immutable :class:`CompiledKernel`.

    Raises:
        TypeError: ``kernel`` is not a ``@wl.kernel``, ``options`` is not a
            CompileOptions, or an override names no compile option.
        KernelCompileError: the kernel is outside the language or mistyped
            (points at the user's line and column).
        ValueError: an option out of range (:func:`warp_lab.options.check_options`).
        ToolchainError: libdevice, needed for a math function, is not installed. A ptxas
            or nvdisasm failure is not raised: the compile keeps its LLVM IR and PTX and
            says why the rest is missing in ``missing`` (``"cubin"``, ``"resources"``,
            ``"sass"``, ``"life_ranges"``).
        InternalCompilerError: a bug in warp_lab: any exception of a stage that is
            not one of the above or a :class:`ToolchainError` (chained as
            ``__cause__``), naming the stage, the kernel and the line when known.
    """
    if getattr(kernel, "language", None) == "cuda":   # a wl.cuda_kernel: NVRTC, not LLVM
        from warp_lab.compiler.cuda_pipeline import compile_cuda

        try:
            given = given_options(options, overrides)
        except TypeError as exc:
            raise TypeError(str(exc)) from None
        # the Python front end's variant switches (launch_ndim, entry_guard, ...) that a
        # record carries mean nothing to NVRTC's code (a CUDA kernel's own record sets them)
        taken = inspect.signature(compile_cuda).parameters
        given = {name: value for name, value in given.items() if name in taken}
        return compile_cuda(kernel, cache=cache, sass=sass, life_ranges=life_ranges, **given)
    if not isinstance(kernel, Kernel):
        raise TypeError(f"wl.compile needs a @wl.kernel function or a wl.cuda_kernel, got "
                        f"{type(kernel).__name__}")
    try:
        options = resolve_options(options, kernel.options, overrides)
        check_options(cache=cache, sass=sass, life_ranges=life_ranges)
    except ValueError as exc:  # the caller's value: its traceback ends here, not in options
        raise ValueError(str(exc)) from None
    except TypeError as exc:
        raise TypeError(str(exc)) from None
    t_start = time.perf_counter()
    cells = _cache.artifact_files(kernel)  # cell name -> the name its artifacts carry
    files = {artifact: cell for cell, artifact in cells.items()}
    key = _cache.cache_key(kernel, options, toolchain_versions(options.arch), cells) \
        if cache else ""
    hit = _from_cache(key, sass, life_ranges) if cache else None
    if hit is not None:  # the same text and lines, maybe from another cell or process
        return dataclasses.replace(
            hit, timings={**hit.timings, "cache": time.perf_counter() - t_start},
            source=kernel.source, kernel=kernel,
            source_map=hit.source_map.for_run(kernel.source.filename, files))

    stage = ["frontend"]  # the stage running, for an internal error's report
    try:
        ck = _build(kernel, options, cells, files, key, sass, life_ranges, t_start, stage)
    except (WarpLabError, MemoryError):  # the user's located errors pass untouched
        raise
    except Exception as exc:  # noqa: BLE001 - our bug: re-raised as InternalCompilerError
        raise internal_error(exc, stage[0], kernel.name, f"options {options!r}") from exc
    if cache and _complete(ck.missing):
        _cache.default_cache().put(key, ck)
    return ck


def make_ptx_text(kernel: Kernel, options: CompileOptions) -> str:
    """The PTX :func:`compile` makes of ``kernel`` with exactly ``options``, from the
    front end, lowering and NVPTX stages alone (no ptxas, no cache, no timings): what a
    caller needs to tell whether a variant's code differs, at a third of a compile's time.

    Raises:
        what :func:`compile` raises for the kernel's own errors; a bug of a stage
        propagates as it is (``compile`` turns it into an InternalCompilerError).
    """
    cells = _cache.artifact_files(kernel)
    with _deep_recursion():
        typed = frontend.make_typed_ast(kernel, options)
        lowered = lower.make_llvm_ir(typed, options, cells)
    return nvptx.make_ptx(lowered.llvm_ir, options, lowered.entry, {})[1]


def _to_disassemble(ck: CompiledKernel, life_ranges: bool) -> tuple[bool, bool]:
    """(add the SASS listing, add the life ranges): what :func:`add_disassembly` would run
    nvdisasm for."""
    return (ck.missing.get("sass") == _NOT_REQUESTED,
            life_ranges and ck.life_ranges is None and ck.cubin is not None)


def needs_disassembly(ck: CompiledKernel, life_ranges: bool = False) -> bool:
    """Whether :func:`add_disassembly` of ``ck`` would run nvdisasm (False: it returns
    ``ck`` as it is)."""
    return any(_to_disassemble(ck, life_ranges))


def add_disassembly(ck: CompiledKernel, life_ranges: bool = False,
                    cache: bool = True) -> CompiledKernel:
    """``ck``, compiled with ``sass=False``, with its SASS listing (and SASS line map) and,
    when asked, its register life ranges: what ``compile(..., sass=True,
    life_ranges=life_ranges)`` of the same kernel returns, without compiling again.

    This is nvdisasm's part of a compile on its own (0.3-0.8 s, most of a compile), so a
    caller can show what exists before it ends: the ``%%warp_kernel`` view draws the
    panes from a ``sass=False`` compile while this runs in a thread, then fills in the
    SASS pane (``notebook/magic.py``).

    Args:
        ck: a :class:`CompiledKernel`; one that already has what is asked (or no cubin,
            or whose SASS failed rather than was not asked for) is returned as it is.
        life_ranges: add nvdisasm's register life-range table too.
        cache: store the completed record under ``ck.cache_key`` (when it has one and
            nothing else is missing), as ``compile`` would have.

    Returns:
        the completed :class:`CompiledKernel` (``timings["nvdisasm"]`` added); an
        nvdisasm failure is in ``missing`` as in ``compile``.
    """
    add_sass, add_ranges = _to_disassemble(ck, life_ranges)
    if not (add_sass or add_ranges):
        return ck
    done = _add_disassembly(ck, add_sass, add_ranges)
    if cache and ck.cache_key and all(reason == _NOT_REQUESTED
                                      for reason in done.missing.values()):
        _cache.default_cache().put(ck.cache_key, done)
    return done


def _from_cache(key: str, sass: bool, life_ranges: bool) -> CompiledKernel | None:
    """The cached compile under ``key``, or None; with the SASS listing or life ranges
    asked for and not yet in it added from its cubin (and stored again when complete)."""
    hit = _cache.default_cache().get(key)
    if hit is None:
        return None
    add_sass = sass and hit.missing.get("sass") == _NOT_REQUESTED
    add_ranges = life_ranges and hit.life_ranges is None and hit.cubin is not None
    if add_sass or add_ranges:
        hit = _add_disassembly(hit, add_sass, add_ranges)
        if _complete(hit.missing):
            _cache.default_cache().put(key, hit)
    return hit


def _build(kernel: Kernel, options: CompileOptions, cells: dict, files: dict, key: str,
           sass: bool, life_ranges: bool, t_start: float, stage: list) -> CompiledKernel:
    """Run the stages for :func:`compile` (no cache look-up or store), ``stage[0]``
    naming the one running."""
    arch = options.arch
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    with _deep_recursion():
        typed = frontend.make_typed_ast(kernel, options)
        t1 = time.perf_counter()
        stage[0] = "lower"
        lowered = lower.make_llvm_ir(typed, options, cells)
    t2 = time.perf_counter()
    stage[0] = "nvptx"
    timings["frontend"], timings["lower"] = t1 - t0, t2 - t1
    llvm_ir_opt, ptx = nvptx.make_ptx(lowered.llvm_ir, options, lowered.entry, timings)

    missing: dict[str, str] = {}
    cubin = sass_text = ranges = resources = None
    stage[0] = "ptxas"
    t3 = time.perf_counter()
    try:
        cubin, resources, _ = toolchain.make_cubin(ptx, options, lowered.entry)
    except ToolchainError as exc:
        missing["cubin"] = missing["resources"] = missing["sass"] = str(exc)
    t4 = time.perf_counter()
    timings["ptxas"] = t4 - t3
    stage[0] = "nvdisasm"
    if cubin is not None and (sass or life_ranges):
        sass_text, ranges = _disassemble(cubin, arch, resources, sass, life_ranges, missing)
        timings["nvdisasm"] = time.perf_counter() - t4
    if cubin is not None and not sass:
        missing["sass"] = _NOT_REQUESTED

    stage[0] = "line map"
    own_file = cells.get(kernel.source.filename, kernel.source.filename)
    others = sorted({cells.get(f.source.filename, f.source.filename)
                     for f in typed.funcs} - {own_file})
    source_map = SourceMap(linemap.build_line_map(llvm_ir_opt, ptx, sass_text, own_file, others),
                           kernel.source.filename, files, typed.shared_arrays,
                           tuple(SHARED_DECL.findall(ptx)))
    timings["total"] = time.perf_counter() - t_start
    ck = CompiledKernel(
        name=kernel.name, entry=lowered.entry, source=kernel.source, options=options,
        params=tuple(lowered.params), param_layout=abi.param_layout(lowered.params),
        launch_ndim=lowered.launch_ndim, llvm_ir=lowered.llvm_ir,
        llvm_ir_optimized=llvm_ir_opt, ptx=ptx, cubin=cubin, sass=sass_text,
        life_ranges=ranges, resources=resources,
        source_map=source_map, timings=timings, missing=missing,
        toolchain=toolchain_versions(arch), cache_key=key, entry_guard=lowered.entry_guard,
        written_params=tuple(n for n, _ in typed.params if n in typed.written_params) +
        tuple(sorted(n for n in typed.written_params if "." in n)),   # struct fields' arrays
        dialect=kernel.dialect, kernel=kernel)
    return ck


def _complete(missing) -> bool:
    """Whether a compile with these ``missing`` reasons may be cached: nothing failed, only
    SASS not asked for (and a CUDA C++ kernel's LLVM IR, which NVRTC never gives)."""
    return all(reason == _NOT_REQUESTED for k, reason in missing.items() if k != "llvm_ir")


_NOT_REQUESTED = "not disassembled: compiled with sass=False (wl.compile(..., sass=True) adds it)"


def _disassemble(cubin: bytes, arch: str, resources, listing: bool, life_ranges: bool,
                 missing: dict) -> tuple[str | None, str | None]:
    """:func:`toolchain.disassemble`, a failure recorded in ``missing`` instead of raised."""
    spills = resources is None or bool(resources.spill_stores or resources.spill_loads)
    try:
        return toolchain.disassemble(cubin, arch, listing, life_ranges, spills)
    except ToolchainError as exc:
        for asked, name in ((listing, "sass"), (life_ranges, "life_ranges")):
            if asked:
                missing[name] = str(exc)
        return None, None


def _add_disassembly(ck: CompiledKernel, listing: bool = True,
                     life_ranges: bool = False) -> CompiledKernel:
    """``ck`` (from the cache) with what it lacks of the SASS listing (and the
    SASS part of the line map) and the register life ranges."""
    t0 = time.perf_counter()
    missing = {k: v for k, v in ck.missing.items()
               if not (k == "sass" and listing or k == "life_ranges" and life_ranges)}
    sass_text, ranges = _disassemble(ck.cubin, ck.options.arch, ck.resources, listing,
                                     life_ranges, missing)
    changes: dict = {"missing": missing,
                     "timings": {**ck.timings, "nvdisasm": time.perf_counter() - t0}}
    if listing:
        changes["sass"] = sass_text
        rows = linemap.build_line_map(ck.llvm_ir_optimized, ck.ptx, sass_text,
                                      ck.source_map.artifact_filename, ck.source_map.rows.files)
        changes["source_map"] = dataclasses.replace(ck.source_map, rows=rows)
    if life_ranges:
        changes["life_ranges"] = ranges
    return dataclasses.replace(ck, **changes)
