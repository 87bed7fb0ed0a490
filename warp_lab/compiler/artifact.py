"""The records the pipeline produces: :class:`CompiledKernel` and what it holds.

Its options are :class:`warp_lab.options.CompileOptions` (the ground floor).

All of them are frozen. Views, the occupancy model, the simulator report and
the runtime read these; nobody recomputes what is stored here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping

from warp_lab.compiler.source_map import SourceMap
from warp_lab.lang.kernel import Source
from warp_lab.options import CompileOptions

__all__ = ["Resources", "SourceMap", "CompiledKernel", "SHARED_DECL",
           "INDEX_CHECK_MARK"]


#: What an ``index_checks`` kernel prints before its bounds-check trap, followed by
#: ``FILE:LINE:COL: index I out of bounds for axis K with size N``
#: (:func:`warp_lab.runtime.finding_text.index_finding` reads it back).
INDEX_CHECK_MARK = "warp_lab index check: "


@dataclass(frozen=True)
class Resources:
    """What ptxas reports for one entry function (``ptxas -v``).

    Attributes:
        arch: the SM it was assembled for.
        registers: registers per thread.
        spill_stores: spill store bytes per thread.
        spill_loads: spill load bytes per thread.
        stack_frame: local-memory stack frame bytes per thread.
        shared: static shared memory bytes per block.
        const: constant-bank bytes used by the entry (``cmem[0]`` etc., summed).
        local: local memory bytes per thread: ``bytes lmem`` from an older ptxas,
            else the ``cumulative stack size`` (the stack frame plus those of the
            deepest call chain; spill slots and local arrays are in it), else
            ``stack_frame`` (:func:`~warp_lab.compiler.toolchain.parse_ptxas_log`).
        barriers: named barriers used.
        global_bytes: global-memory bytes of module-scope variables (``gmem``).
    """

    arch: str
    registers: int
    spill_stores: int = 0
    spill_loads: int = 0
    stack_frame: int = 0
    shared: int = 0
    const: int = 0
    local: int = 0
    barriers: int = 0
    global_bytes: int = 0

    @property
    def spills(self) -> bool:
        """Whether ptxas reported spill stores or loads (bytes per thread)."""
        return bool(self.spill_stores or self.spill_loads)


#: what the panes say of a kernel of the Warp dialect (:attr:`CompiledKernel.dialect`)
DIALECT_LABEL = "Warp dialect: C's integer / and %, Warp's print"


@dataclass(frozen=True)
class CompiledKernel:
    """Everything one compile produced (immutable).

    Attributes:
        name: the kernel's Python name; ``entry`` is its PTX entry name.
        source: the kernel's :class:`~warp_lab.lang.kernel.Source` (text,
            file or cell name, first line).
        options: the :class:`CompileOptions` used.
        params: ``(name, Type)`` of the user parameters, in order.
        param_layout: :class:`~warp_lab.compiler.abi.ParamSlot` records,
            hidden ``launch_dim`` first; what the runtime must pack.
        launch_ndim: what ``wl.tid()`` returns (1, 2 or 3; 4 in a Warp-dialect kernel,
            ``i, j, k, l = wp.tid()``).
        llvm_ir: LLVM IR as generated; ``llvm_ir_optimized`` after the
            pass pipeline and libdevice linking.
        ptx: PTX text (NVPTX back end).
        cubin: ptxas output, or None (see ``missing``).
        sass: nvdisasm output, or None (see ``missing``).
        life_ranges: nvdisasm's register life-range table (``-c
            --life-range-mode count``: registers occupied per register file
            at each instruction; read by
            :func:`warp_lab.analysis.registers.register_pressure`), when
            compiled with ``life_ranges=True``; else None.
        resources: parsed ``ptxas -v``, or None.
        source_map: the :class:`~warp_lab.compiler.source_map.SourceMap`: row maps
            (Python line <-> LLVM/PTX/SASS rows), the cells as named in this run and
            one :class:`~warp_lab.compiler.source_map.SharedArray` record per shared
            array; ask it which line, cell, array or element a row, a symbol or an
            offset belongs to.
        timings: seconds per stage (``frontend``, ``lower``, ``optimize``,
            ``ptx``, ``ptxas``, ``nvdisasm``); a cache hit has ``cache``.
        missing: field name → why it is None (tool not found, tool failed).
        toolchain: tool name → version string and path used.
        cache_key: the content hash this artifact is cached under.
        entry_guard: whether the entry returns for threads at or past the
            launch extent (``options.entry_guard`` resolved for this kernel);
            without it every thread of the grid runs the body.
        written_params: names of the array parameters the kernel may store
            into (the front end's :attr:`TypedKernel.written_params`), in
            parameter order, then the dotted paths of the arrays in struct parameters
            (``"s.arr"``, every one counted written); the others are only read, so a
            launch may pass them read-only and need not copy them back.
        dialect: the language the kernel was written in, ``"python"`` (``@wl.kernel``)
            or ``"warp"`` (``@wp.kernel`` of :mod:`warp_lab.warp`: Warp's integer ``/``
            and ``%`` and its ``print``), as :attr:`warp_lab.lang.kernel.Kernel.dialect`;
            part of the cache key, and the panes say it.
        kernel: the ``@wl.kernel`` it was compiled from (set by
            ``wl.compile``; not part of equality or the disk cache), so that
            ``wl.launch`` can compile the variant a launch needs (general
            strides, entry guard) with the same options; None when unknown.
        language: the source language: ``"python"`` (a ``@wl.kernel``, through LLVM) or
            ``"cuda"`` (a ``wl.cuda_kernel``, through NVRTC: ``llvm_ir`` is empty, the
            parameters have the C ABI, no hidden ``launch_dim``, and ``source`` is the
            CUDA C++ translation unit).
    """

    name: str
    entry: str
    source: Source
    options: CompileOptions
    params: tuple
    param_layout: tuple
    launch_ndim: int
    llvm_ir: str
    llvm_ir_optimized: str
    ptx: str
    cubin: bytes | None = None
    sass: str | None = None
    life_ranges: str | None = None
    resources: Resources | None = None
    source_map: SourceMap = field(default_factory=SourceMap)
    timings: Mapping[str, float] = field(default_factory=dict)
    missing: Mapping[str, str] = field(default_factory=dict)
    toolchain: Mapping[str, str] = field(default_factory=dict)
    cache_key: str = ""
    entry_guard: bool = True
    written_params: tuple = ()
    dialect: str = "python"
    kernel: object = field(default=None, compare=False, repr=False)
    language: str = "python"

    def __post_init__(self):
        if not self.source_map.filename:   # a record made by hand: the kernel's own file
            object.__setattr__(self, "source_map", self.source_map.for_run(
                self.source.filename, self.source_map.cells))

    @property
    def arch(self) -> str:
        """The ``sm_XX`` compiled for (``options.arch``)."""
        return self.options.arch

    @property
    def artifact_filename(self) -> str:
        """The name the kernel's own file or cell has in the debug info (``.file``,
        ``DIFile``): what the row maps were built from."""
        return self.source_map.artifact_filename

    @property
    def own_ptx(self) -> str:
        """The PTX of this kernel: ``ptx``, less the other kernels' ``.entry`` bodies of a
        CUDA C++ translation unit (whose module holds every ``__global__`` function of the
        source; device functions and module-scope variables stay)."""
        if self.language != "cuda" or not self.ptx:
            return self.ptx or ""
        return without_other_entries(self.ptx, self.entry)

    @property
    def uses_shared_memory(self) -> bool:
        """Whether the PTX declares a ``.shared`` variable: a ``wl.shared_array`` the code
        kept (one only declared is dropped by LLVM) or ``wl.dynamic_shared_array`` (of a
        CUDA C++ kernel, one its entry's body declares or names)."""
        if self.language == "cuda":
            own = self.own_ptx
            return any(m.start() >= own.find(".entry") or re.search(
                rf"\b{re.escape(m.group(1))}\b", own[own.find(".entry"):])
                for m in SHARED_DECL.finditer(own))
        return SHARED_DECL.search(self.ptx or "") is not None

    @property
    def has_block_barrier(self) -> bool:
        """Whether the PTX has a block-wide barrier (``bar.sync``, ``bar.red``,
        ``barrier.sync``: PTX ISA 9.7.13.1; not ``bar.warp.sync``), what the simulator's
        barrier check watches (read from the PTX: ptxas's count is missing without it)."""
        return _BLOCK_BARRIER.search(self.own_ptx) is not None

    def __repr__(self) -> str:
        regs = f", {self.resources.registers} registers" if self.resources else ""
        dialect = ", Warp dialect" if self.dialect == "warp" else ""
        return f"<CompiledKernel {self.name} for {self.options.label()}{regs}{dialect}>"


#: a PTX shared variable declaration (``.shared .align 4 .b8 k_tile_1[64];``, ``.extern
#: .shared .align 16 .b8 __wl_dynamic_shared[];``, a scalar LLVM split off an array:
#: ``.shared .align 16 .u32 k_flag_1_$_0;``, which ``lower.ModuleContext.keep_shared_whole``
#: now prevents; PTX from elsewhere may still have one), its name
SHARED_DECL = re.compile(r"^\s*(?:\.extern\s+)?\.shared\s[^;]*?([\w$]+)\s*(?:\[|;)", re.M)

#: a block-wide barrier instruction (:attr:`CompiledKernel.has_block_barrier`)
_BLOCK_BARRIER = re.compile(r"^\s*(?:@!?%\w+\s+)?(?:bar|barrier)\.(?!warp)", re.M)


_ENTRY_HEAD = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([\w$]+)", re.M)


def without_other_entries(ptx: str, entry: str) -> str:
    """``ptx`` without the ``.entry`` functions other than ``entry`` (each from its head to
    the brace closing its body)."""
    out, pos = [], 0
    for m in _ENTRY_HEAD.finditer(ptx):
        if m.group(1) == entry or m.start() < pos:
            continue
        open_ = ptx.find("{", m.end())
        if open_ < 0:
            break
        depth, k = 0, open_
        while k < len(ptx):
            depth += {"{": 1, "}": -1}.get(ptx[k], 0)
            k += 1
            if depth == 0:
                break
        out.append(ptx[pos:m.start()])
        pos = k
    out.append(ptx[pos:])
    return "".join(out)
