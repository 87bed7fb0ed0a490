"""Compile options: the one record of what to compile for and how, and its checks.

This module is on the ground floor of warp_lab: it imports none of warp_lab's packages,
so the kernel language (``lang/``), the compiler, the runtime and the notebook all read
the same record without an import reaching up.

    CompileOptions            the frozen record (what ``CompiledKernel.options`` holds)
    SUPPORTED_ARCHS           the ``sm_XX`` warp_lab compiles for, with their PTX ISA version
    check_arch, check_options the one validation ``wl.compile``, ``wl.launch``,
                              ``@wl.kernel(...)`` and the magic share
    KERNEL_OPTIONS            the options a kernel may carry (``@wl.kernel(debug=True)``)
    KERNEL_OPTION_DEFAULTS    their values when neither the caller nor the kernel sets them
                              (read from :class:`CompileOptions`' own defaults)
    given_options             a caller's record and keyword overrides → the fields it set
    resolve_options           those + the kernel's own + the defaults → the checked
                              :class:`CompileOptions` that ``wl.compile`` uses
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

import numpy as np

__all__ = ["CompileOptions", "SUPPORTED_ARCHS", "check_arch", "check_options", "sm_number",
           "KERNEL_OPTIONS", "KERNEL_OPTION_DEFAULTS", "given_options", "resolve_options"]

#: Architectures warp_lab compiles for, with the PTX ISA version each gets:
#: the minimum the target needs (PTX ISA, "PTX Module Directives: .target" and
#: the release notes' table of targets per version), which keeps the PTX
#: acceptable to the oldest ptxas that knows the target — but at least 6.2
#: (CUDA 9.2): 6.0 is where the ``.sync`` warp instructions (``shfl.sync``,
#: ``vote.sync``, ``bar.warp.sync``) that ``wl.shfl_*_sync`` and friends lower
#: to first exist, and 6.2 adds ``activemask`` (``wl.activemask``). (With an
#: older version, LLVM's instruction selection of those intrinsics aborts the
#: process.) sm_70 and sm_72 get 6.3, where ``atom.add.noftz.f16`` (``wl.atomic_add`` of
#: float16, sm_70+) first exists; with 6.2 LLVM makes it a CAS loop on the 32-bit word
#: around the element, which reads past the end of an array with an odd number of halves.
SUPPORTED_ARCHS: dict[str, str] = {
    "sm_50": "6.2", "sm_52": "6.2", "sm_53": "6.2",
    "sm_60": "6.2", "sm_61": "6.2", "sm_62": "6.2",
    "sm_70": "6.3", "sm_72": "6.3", "sm_75": "6.3",
    "sm_80": "7.0", "sm_86": "7.1", "sm_87": "7.4", "sm_89": "7.8",
    "sm_90": "7.8", "sm_100": "8.6", "sm_103": "8.8", "sm_120": "8.7", "sm_121": "8.8",
}


def sm_number(arch: str) -> int:
    """The compute capability of an ``sm_XY[a]`` name as an integer: ``"sm_90a"`` -> 90."""
    return int(arch.split("_")[1].rstrip("a"))


def check_arch(arch: str) -> str:
    """Validate an ``sm_XX`` name; return it.

    Raises:
        ValueError: ``arch`` is not in :data:`SUPPORTED_ARCHS`; the message
            lists the supported ones.
    """
    if not isinstance(arch, str) or arch not in SUPPORTED_ARCHS:  # (a list is unhashable)
        raise ValueError(f"unsupported architecture {arch!r}; warp_lab compiles for "
                         + ", ".join(SUPPORTED_ARCHS))
    return arch


@dataclass(frozen=True)
class CompileOptions:
    """What to compile for and how.

    Attributes:
        arch: target SM, ``"sm_90"`` (default); see :data:`SUPPORTED_ARCHS`.
        opt: LLVM optimisation level 0..3 (default 3).
        fast_math: allow fast-math flags, flush-to-zero and approximate
            division/square root (default False).
        debug: keep ``assert`` as a trap with its message and compile
            bounds checks (default False).
        lineinfo: emit line tables (``.loc`` in PTX, line info in the cubin
            and SASS); default True, it costs no code quality.
        maxrregcount: cap on registers per thread passed to ptxas
            (``--maxrregcount``), None for ptxas's own choice.
        launch_ndim: 1, 2 or 3: what ``wl.tid()`` returns; None to infer
            from the kernel (the arity of ``i, j = wl.tid()``).
        unit_inner_stride: assume every global array parameter has element
            stride 1 in its last dimension (default True, what numpy arrays
            and row slices have). Index math then skips that multiply, as
            nvcc's code for a plain ``T*`` does; ``wl.launch`` compiles the
            general variant (False) by itself when an argument is strided
            there (``x[::2]``, ``a[:, ::-1]``, a transposed view).
        entry_guard: whether threads at or past the launch extent (the hidden
            ``launch_dim`` parameter) return at entry. None (default): only
            in kernels that use ``wl.tid()``, where ``dim=N`` must run exactly
            N threads, like the C++ ``if (i >= n) return;``. A kernel written
            in ``block_idx``/``thread_idx`` terms gets none, as in CUDA C++;
            ``wl.launch`` compiles it with True by itself for a ``dim=``
            launch that is not a whole number of blocks, and refuses a
            guardless CompiledKernel for such a launch.
        aligned_vectors: assume every global array of ``vec2``/``vec4``
            (``vec2i``, ``vec4i``, ``vec2d``) elements has its elements aligned
            to their size, as NumPy arrays of them are (default True): each
            element is then one ``ld``/``st.global.v2``/``.v4``, as nvcc emits
            for ``float4``. ``wl.launch`` compiles the variant without it
            (False: one access per component) by itself for an argument whose
            elements are not (a view starting mid-element).
        read_only_cache: load the array parameters the kernel never writes
            through the read-only data cache (``ld.global.nc``, what CUDA's
            ``__ldg`` and ``const __restrict__`` give; default True). Sound
            only when no argument the kernel writes shares their memory:
            ``wl.launch`` compiles the variant without it (False) by itself
            for a launch where one does (the same array passed as input and
            output, overlapping views).
        index_checks: check every array index against its axis's extent, as
            ``debug`` does, but print the failure with
            :data:`~warp_lab.compiler.artifact.INDEX_CHECK_MARK` before the trap, so the
            simulator's launch reports it as an ``out_of_bounds`` finding (default False).
            ``wl.launch`` compiles this variant by itself for a simulator launch with
            memcheck: an index past one axis that stays inside the array (``a[i, j]``,
            ``j >= a.shape[1]``) then gets a finding, where memcheck's address check sees
            none, and so does an index past a ``wl.local_array`` (at ``opt=0`` it lands in
            another variable's slot of the thread's one PTX ``__local_depot``). Never
            compiled for a GPU.

    A launch's variants are this record with one field changed
    (``dataclasses.replace(ck.options, unit_inner_stride=False)``), compiled with
    ``wl.compile(kernel, options)``. The constructor does not validate;
    :func:`check_options` (which ``wl.compile`` applies) does.
    """

    arch: str = "sm_90"
    opt: int = 3
    fast_math: bool = False
    debug: bool = False
    lineinfo: bool = True
    maxrregcount: int | None = None
    launch_ndim: int | None = None
    unit_inner_stride: bool = True
    entry_guard: bool | None = None
    aligned_vectors: bool = True
    read_only_cache: bool = True
    index_checks: bool = False

    @property
    def sm(self) -> int:
        """The compute capability as an integer: ``"sm_86"`` -> 86."""
        return sm_number(self.arch)

    @property
    def flags(self) -> tuple[str, ...]:
        """The options a reader must know to read the code, as words after ``-O3``:
        ``fast-math``, ``debug`` (asserts, bounds checks and the ``range()`` step check
        compiled in), ``maxrregcount=N``; what views and reprs print after the arch."""
        out = (("fast-math",) if self.fast_math else ()) + (("debug",) if self.debug else ())
        out += ("index-checks",) if self.index_checks and not self.debug else ()
        return out + ((f"maxrregcount={self.maxrregcount}",) if self.maxrregcount else ())

    def label(self) -> str:
        """``"sm_90 -O3"`` followed by :attr:`flags` (``"sm_75 -O0 debug"``)."""
        return " ".join((self.arch, f"-O{int(self.opt)}", *self.flags))


#: the field names of :class:`CompileOptions`, in its order
COMPILE_OPTION_NAMES = tuple(f.name for f in dataclasses.fields(CompileOptions))

#: the compile options a kernel can carry (``@wl.kernel(debug=True)``, a ``%%warp_kernel``
#: cell's ``--debug``): what ``wl.compile`` and ``wl.launch`` use where their caller passes none
KERNEL_OPTIONS = ("arch", "opt", "fast_math", "debug", "maxrregcount")

#: what ``wl.compile`` uses for an option neither its caller nor the kernel sets:
#: :class:`CompileOptions`' own defaults (read-only)
KERNEL_OPTION_DEFAULTS: Mapping[str, object] = MappingProxyType(
    {name: getattr(CompileOptions(), name) for name in KERNEL_OPTIONS})


def check_options(arch: str | None = None, opt=None, maxrregcount=None, launch_ndim=None,
                  **flags) -> None:
    """Validate compile options; the one check ``wl.compile``, ``wl.launch`` and the magic share.

    Args:
        arch: ``sm_XX`` from :data:`SUPPORTED_ARCHS`.
        opt: LLVM optimisation level, 0..3.
        maxrregcount: None or 1..255 registers per thread (255 is every
            architecture's limit, CUDA Programming Guide "Technical
            Specifications per Compute Capability").
        launch_ndim: None (inferred) or 1..3, what ``wl.tid()`` returns.
        flags: boolean options by name (``fast_math=``, ``debug=``, ...).

    Raises:
        ValueError: the first bad value, named as the option is spelled.
    """
    if arch is not None:
        check_arch(arch)
    if opt is not None and (isinstance(opt, bool) or opt not in (0, 1, 2, 3)):
        raise ValueError(f"opt must be 0, 1, 2 or 3 (the LLVM optimisation level), got {opt!r}")
    if maxrregcount is not None and (isinstance(maxrregcount, bool)
                                     or not isinstance(maxrregcount, (int, np.integer))
                                     or not 1 <= maxrregcount <= 255):
        raise ValueError(f"maxrregcount must be 1..255 registers per thread, got {maxrregcount!r}")
    if launch_ndim is not None and (isinstance(launch_ndim, bool)
                                    or not isinstance(launch_ndim, (int, np.integer))
                                    or launch_ndim not in (1, 2, 3)):
        raise ValueError(f"launch_ndim must be 1, 2 or 3 (what wl.tid() returns), "
                         f"got {launch_ndim!r}")
    for name, flag in flags.items():
        if not isinstance(flag, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {flag!r}")


def given_options(options: CompileOptions | None, overrides: Mapping[str, object],
                  caller: str = "compile") -> dict:
    """The options a caller set, by name: every field of ``options`` (when given) with
    ``overrides`` over them; an override of None for one of :data:`KERNEL_OPTIONS` is "not
    set" (left out, or ``options``' own kept), for ``launch_ndim`` and ``entry_guard`` it is
    their None. Not checked for values.

    Raises:
        TypeError: ``options`` is not a :class:`CompileOptions` or None, or an override
            names no field of it.
    """
    unknown = [name for name in overrides if name not in COMPILE_OPTION_NAMES]
    if unknown:
        close = difflib.get_close_matches(unknown[0], COMPILE_OPTION_NAMES, n=1)
        raise TypeError(f"{caller}() got an unexpected keyword argument {unknown[0]!r}"
                        + (f"; did you mean {close[0]!r}?" if close else ""))
    if options is not None and not isinstance(options, CompileOptions):
        raise TypeError(f"{caller}() options must be a warp_lab CompileOptions or None, got "
                        f"{type(options).__name__}; pass single options by keyword "
                        "(arch='sm_80', opt=2)")
    given = {} if options is None else dataclasses.asdict(options)
    given.update({name: value for name, value in overrides.items()
                  if value is not None or name not in KERNEL_OPTIONS})
    return given


def resolve_options(options: CompileOptions | None, kernel_options: Mapping[str, object],
                    overrides: Mapping[str, object], caller: str = "compile") -> CompileOptions:
    """The checked :class:`CompileOptions` a compile uses.

    Args:
        options: the caller's record, taken as it is (the kernel's own options do not
            apply), or None: then :data:`KERNEL_OPTION_DEFAULTS` overlaid with
            ``kernel_options``.
        kernel_options: the options the kernel carries (``Kernel.options``, names from
            :data:`KERNEL_OPTIONS`).
        overrides: fields of :class:`CompileOptions` by name, applied last
            (:func:`given_options`).
        caller: the function named in a TypeError (``compile``).

    Returns:
        the record with plain Python ints and bools (``np.int64(2)`` passes the check;
        the cache key is JSON).

    Raises:
        TypeError: as :func:`given_options`.
        ValueError: a bad value (:func:`check_options`).
    """
    given = given_options(options, overrides, caller)
    fields = given if options is not None else \
        {**KERNEL_OPTION_DEFAULTS, **kernel_options, **given}
    check_arch(fields["arch"])  # (check_options takes a None arch as "not set")
    check_options(**{name: value for name, value in fields.items()
                     if not (name == "entry_guard" and value is None)})  # None: by kernel
    as_int = {"opt": int, "maxrregcount": int, "launch_ndim": int, "entry_guard": bool}
    return CompileOptions(**{
        name: (None if value is None and name in as_int
               else as_int[name](value) if name in as_int
               else value if name == "arch" else bool(value))
        for name, value in fields.items()})
