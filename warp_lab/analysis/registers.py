"""Register pressure of a compiled kernel, and the ``maxrregcount`` what-if.

:func:`register_pressure` disassembles a cubin with nvdisasm's life ranges
and folds the counts onto Python lines (:mod:`warp_lab.analysis.liveness`);
:func:`register_cap_whatif` re-assembles the PTX with ptxas
``--maxrregcount N`` for a few caps and reports registers, spills and the
occupancy each cap buys (:mod:`warp_lab.analysis.occupancy`).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

from warp_lab.analysis.archs import AnalysisError, arch_properties
from warp_lab.analysis.liveness import (LiveInstruction, max_live_per_line, parse_life_ranges,
                                        spill_offsets)
from warp_lab.analysis.occupancy import Occupancy, _whole, occupancy

__all__ = ["RegisterPressure", "RegisterCap", "register_pressure", "live_registers_per_line",
           "register_cap_whatif"]

_DEFAULT_CAPS = (None, 128, 96, 64, 48, 32)


@dataclass(frozen=True)
class RegisterPressure:
    """Where a kernel's registers go.

    Attributes:
        arch: the SM the cubin is for.
        entry: the kernel's entry name (its ``.text`` section).
        registers: registers per thread ptxas allocated (None if unknown).
        spill_stores, spill_loads: spill bytes per thread (ptxas ``-v``).
        max_live: the most GPRs occupied at any instruction.
        per_instruction: SASS byte offset -> occupied GPRs.
        per_line: Python line -> most GPRs occupied at one of its instructions.
        spill_offsets: offsets of local-memory instructions (``LDL``/``STL``).
        spill_lines: Python lines holding those instructions.
        instructions: the parsed :class:`LiveInstruction` rows.
    """

    arch: str
    entry: str
    registers: int | None
    spill_stores: int
    spill_loads: int
    max_live: int
    per_instruction: Mapping[int, int] = field(default_factory=dict)
    per_line: Mapping[int, int] = field(default_factory=dict)
    spill_offsets: tuple[int, ...] = ()
    spill_lines: tuple[int, ...] = ()
    instructions: tuple[LiveInstruction, ...] = ()

    def __post_init__(self):
        for name in ("per_instruction", "per_line"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))

    def to_dict(self) -> dict:
        """JSON-ready form; ``live_registers`` is the bundle's ``heat`` entry
        (Python line as a string -> registers)."""
        return {
            "arch": self.arch, "entry": self.entry, "registers": self.registers,
            "spill_stores": self.spill_stores, "spill_loads": self.spill_loads,
            "max_live": self.max_live,
            "live_registers": {str(k): v for k, v in sorted(self.per_line.items())},
            "spill_lines": list(self.spill_lines),
        }


@functools.lru_cache(maxsize=32)  # views re-render; the same cubin gives the same listing
def _sass_with_life_ranges(cubin: bytes, arch: str) -> str:
    from warp_lab.compiler import toolchain  # a tool run, not needed to import analysis
    return toolchain.disassemble(cubin, arch, listing=False, life_ranges=True)[1]


@functools.lru_cache(maxsize=32)
def _sass_line_offsets(cubin: bytes, arch: str, llvm_ir_optimized: str, ptx: str,
                       filename: str, others: tuple = ()) -> dict:
    """Python line -> SASS offsets of a kernel compiled with ``sass=False`` (as
    ``wl.launch`` compiles): its listing made now, and the line map built from it
    (``others``: the debug-info names of the other files, ``source_map.rows.files``)."""
    from warp_lab.compiler import linemap, toolchain
    listing = toolchain.make_sass(cubin, arch, compact=True)
    return dict(linemap.build_line_map(llvm_ir_optimized, ptx, listing, filename, others).sass)


def register_pressure(kernel: Any = None, *, cubin: bytes | None = None,
                      arch: str | None = None, entry: str | None = None,
                      line_offsets: Mapping[int, Sequence[int]] | None = None,
                      resources: Any = None, sass: str | None = None) -> RegisterPressure:
    """Live registers per instruction and per Python line.

    Args:
        kernel: a :class:`~warp_lab.compiler.artifact.CompiledKernel` (its
            ``life_ranges`` when it was compiled with ``life_ranges=True``,
            else its ``cubin`` disassembled here; ``options.arch``,
            ``entry``, ``source_map`` and ``resources``; a kernel
            compiled with ``sass=False``, as ``wl.launch`` compiles, gets its
            listing made here for the Python lines), or None with the
            keywords below.
        cubin: ELF bytes from ptxas.
        arch: ``"sm_90"`` (or anything
            :func:`~warp_lab.analysis.arch_properties` reads); chooses the nvdisasm.
        entry: the entry to report when the cubin has several.
        line_offsets: line key -> SASS offsets (``source_map.rows_of("sass_offsets")``); empty
            ``per_line`` without it.
        resources: ptxas's :class:`~warp_lab.compiler.artifact.Resources`.
        sass: ready ``nvdisasm -c --print-life-ranges`` text (any
            ``--life-range-mode``) instead of
            running nvdisasm on ``cubin``.

    Raises:
        AnalysisError: no cubin (the kernel's ``missing`` says why) or no
            life-range table.
        ToolchainError: nvdisasm is missing or fails.
    """
    if kernel is not None:
        if not hasattr(kernel, "cubin") or not hasattr(kernel, "source_map"):
            raise AnalysisError(f"register_pressure needs a CompiledKernel, not "
                                f"{type(kernel).__name__}; or pass cubin= and arch=")
        if kernel.cubin is None and sass is None:
            why = kernel.missing.get("cubin", "ptxas did not run")
            raise AnalysisError(f"kernel {kernel.name!r} has no cubin: {why}")
        cubin = kernel.cubin if cubin is None else cubin
        arch = arch or kernel.options.arch
        entry = entry or kernel.entry
        if line_offsets is None:
            line_offsets = kernel.source_map.rows_of("sass_offsets")
            if kernel.sass is None and kernel.cubin is not None and kernel.options.lineinfo:
                # compiled without the listing: the Python lines need its line info
                line_offsets = _sass_line_offsets(kernel.cubin, kernel.options.arch,
                                                  kernel.llvm_ir_optimized, kernel.ptx,
                                                  kernel.artifact_filename,
                                                  kernel.source_map.rows.files)
        resources = kernel.resources if resources is None else resources
        if sass is None and cubin is kernel.cubin:
            sass = kernel.life_ranges
    if sass is None:
        if cubin is None or arch is None:
            raise AnalysisError("register_pressure needs a CompiledKernel, or cubin= and arch=")
        # a clear error for an unknown arch before running tools; nvdisasm is chosen by
        # the sm_XX name (arch may be 90, "9.0", (9, 0), as everywhere in analysis)
        arch = arch_properties(arch).name
        sass = _sass_with_life_ranges(cubin, arch)
    rows = parse_life_ranges(sass)
    sections = list(dict.fromkeys(r.section for r in rows))
    if entry is None:
        if len(sections) != 1:
            raise AnalysisError(f"the cubin holds {len(sections)} entries; name one with entry=")
        entry = sections[0]
    rows = [r for r in rows if r.section == entry]
    if not rows:
        raise AnalysisError(f"no entry {entry!r} in the SASS; it has {', '.join(sections)}")
    per_insn = {r.offset: r.gpr for r in rows}
    per_line = max_live_per_line(per_insn, line_offsets or {})
    spills = spill_offsets(rows)
    spill_set = set(spills)
    spill_lines = sorted(line for line, offs in (line_offsets or {}).items()
                         if spill_set.intersection(offs))
    return RegisterPressure(
        arch=arch or "", entry=entry,
        registers=getattr(resources, "registers", None),
        spill_stores=getattr(resources, "spill_stores", 0),
        spill_loads=getattr(resources, "spill_loads", 0),
        max_live=max(per_insn.values(), default=0), per_instruction=per_insn,
        per_line=per_line, spill_offsets=tuple(spills), spill_lines=tuple(spill_lines),
        instructions=tuple(rows))


def live_registers_per_line(kernel: Any) -> dict[int, int]:
    """Python line -> most registers live at one of its SASS instructions
    (the source heat map's column); ``register_pressure(kernel).per_line``.

    Raises:
        AnalysisError, ToolchainError: as :func:`register_pressure`.
    """
    return dict(register_pressure(kernel).per_line)


@dataclass(frozen=True)
class RegisterCap:
    """One ptxas run under a register cap.

    Attributes:
        maxrregcount: the cap (None: ptxas's own choice).
        registers: registers per thread ptxas used.
        spill_stores, spill_loads: spill bytes per thread.
        stack_frame: local-memory stack frame bytes per thread.
        occupancy: the :class:`Occupancy` at the what-if's block size.
    """

    maxrregcount: int | None
    registers: int
    spill_stores: int
    spill_loads: int
    stack_frame: int
    occupancy: Occupancy

    def to_dict(self) -> dict:
        """JSON-ready form: the counts, and the occupancy as its fraction, blocks per SM
        and limiting factors."""
        return {"maxrregcount": self.maxrregcount, "registers": self.registers,
                "spill_stores": self.spill_stores, "spill_loads": self.spill_loads,
                "stack_frame": self.stack_frame, "occupancy": self.occupancy.occupancy,
                "active_blocks_per_sm": self.occupancy.active_blocks_per_sm,
                "limiters": list(self.occupancy.limiters)}


def register_cap_whatif(kernel: Any = None, *, ptx: str | None = None, arch: str | None = None,
                        entry: str | None = None,
                        caps: Iterable[int | None] = _DEFAULT_CAPS, block_size: int = 256,
                        dynamic_shared_mem: int = 0) -> list[RegisterCap]:
    """What capping registers per thread (ptxas ``--maxrregcount N``) costs and buys.

    Re-assembles the PTX once per cap (without line info) and computes the
    occupancy of each result at ``block_size``.

    Args:
        kernel: a :class:`~warp_lab.compiler.artifact.CompiledKernel` (its
            ``ptx``, ``entry`` and ``options``), or None with ``ptx``,
            ``arch`` and ``entry``.
        caps: register caps to try; None is the uncapped compile. CUDA
            13's ptxas silently raises caps below 24 to 24 (measured for
            sm_75 .. sm_120), so compare ``registers``, not the cap.
        block_size: threads per block for the occupancy column.
        dynamic_shared_mem: dynamic shared bytes per block.

    Raises:
        AnalysisError: missing PTX/arch/entry, unknown arch, a cap outside 1..255.
        ToolchainError: ptxas is missing or rejects the PTX.
    """
    from warp_lab.compiler import toolchain
    from warp_lab.options import CompileOptions

    if kernel is not None:
        ptx = ptx or kernel.ptx
        entry = entry or kernel.entry
        options = dataclasses.replace(kernel.options, arch=arch or kernel.options.arch,
                                      lineinfo=False)
    else:
        if not (ptx and arch and entry):
            raise AnalysisError("register_cap_whatif needs a CompiledKernel, or ptx=, arch= "
                                "and entry=")
        options = CompileOptions(arch=arch, lineinfo=False)
    props = arch_properties(options.arch)
    # ptxas takes the sm_XX name (arch may be 90, "9.0", (9, 0), as everywhere in analysis)
    options = dataclasses.replace(options, arch=props.name)
    # every cap checked before ptxas runs for any (a bool is not a cap; np.int64(64) is)
    caps = [None if cap is None else _whole("a register cap", cap, "1..255", 1, 255)
            for cap in caps]
    out = []
    for cap in caps:
        _, res, _ = toolchain.make_cubin(ptx, dataclasses.replace(options, maxrregcount=cap),
                                         entry)
        occ = occupancy(res, props, block_size, dynamic_shared_mem)
        out.append(RegisterCap(maxrregcount=cap, registers=res.registers,
                               spill_stores=res.spill_stores, spill_loads=res.spill_loads,
                               stack_frame=res.stack_frame, occupancy=occ))
    return out
