"""Register pressure: live registers per SASS instruction and per Python line.

The numbers come from nvdisasm itself: ``nvdisasm --print-life-ranges``
(``-plr``; also ``--life-range-mode count|narrow|wide``) appends to every
instruction a table whose ``#`` column is the number of occupied registers
of each register file (``GPR``, ``PRED``, ``UGPR``, ``UPRED``) at that
instruction. This module reads that table; it does not run its own dataflow
analysis. Through the line map (``LineMap.sass``: Python line -> SASS byte
offsets) the per-instruction counts become per-Python-line maxima, which the
register widget and the source heat map show.

The GPR count includes ``R1`` (the stack pointer every kernel loads), so it
can exceed the registers a line "needs" by one; ptxas's "Used N registers" is
the register file size allocated per thread, which is at least the largest
count (ptxas also counts registers it reserves).

    sass = nvdisasm(-c -plr kernel.cubin)
    per_insn = live_registers(sass)                 # {offset: live GPRs}
    per_line = max_live_per_line(per_insn, ck.source_map.rows_of("sass_offsets"))
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping, Sequence

from warp_lab.analysis.archs import AnalysisError

__all__ = ["LiveInstruction", "parse_life_ranges", "live_registers", "max_live_per_line",
           "spill_offsets"]

_SECTION_RE = re.compile(r"^\s*\.section\s+\.text\.([^\s,]+)")
_LABEL_RE = re.compile(r"^([^\s/][^\s:]*):\s*(//.*)?$")
_INSN_RE = re.compile(r"/\*([0-9a-fA-F]{4,})\*/\s*(.*?)\s*//\s*\|(.*)\|\s*$")
_TABLE_ROW_RE = re.compile(r"^\s*//\s*\|(.*)\|\s*$")
# Local-memory instructions: spills and fills (or a local array).
_LOCAL_RE = re.compile(r"\b(STL|LDL)(\.[\w.]+)?\b")


@dataclass(frozen=True)
class LiveInstruction:
    """One SASS instruction with nvdisasm's occupied-register counts.

    Attributes:
        section: the entry whose ``.text`` section holds it (byte offsets
            are relative to that section).
        function: the label the instruction falls under: the entry, or a
            device function ptxas kept as a subroutine (``$entry$helper``).
        offset: byte offset in the section (``/*0040*/`` -> 64).
        text: the instruction as printed (``FMUL R0, R0, R9 ;``).
        live: register file -> occupied registers at this instruction
            (``{"GPR": 7, "PRED": 0, "UGPR": 2}``).
    """

    section: str
    function: str
    offset: int
    text: str
    live: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "live", MappingProxyType(dict(self.live)))

    @property
    def gpr(self) -> int:
        """Occupied general-purpose (per-thread) registers."""
        return self.live.get("GPR", 0)


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.split("|")]


def parse_life_ranges(sass: str) -> list[LiveInstruction]:
    """Every instruction of an ``nvdisasm --print-life-ranges`` listing, in order.

    Args:
        sass: nvdisasm output (``-c -plr``, any ``--life-range-mode``) for
            one cubin; several entries are kept apart by ``section``.

    Returns:
        one :class:`LiveInstruction` per instruction that carries counts.

    Raises:
        AnalysisError: the text has no life-range table (nvdisasm was run
            without ``--print-life-ranges``).
    """
    out: list[LiveInstruction] = []
    section = function = ""
    groups: list[str] = []
    saw_table = False
    for line in sass.splitlines():
        m = _SECTION_RE.match(line)
        if m:
            section = function = m.group(1)
            groups = []
            continue
        m = _INSN_RE.search(line)
        if m:
            if not groups:
                continue
            counts = {}
            for name, cell in zip(groups, _cells(m.group(3))):
                first = cell.split()[0] if cell.split() else ""
                counts[name] = int(first) if first.isdigit() else 0
            out.append(LiveInstruction(section, function, int(m.group(1), 16),
                                       m.group(2).rstrip(), counts))
            continue
        m = _TABLE_ROW_RE.match(line)
        if m and not line.lstrip().startswith("/*"):
            cells = _cells(m.group(1))
            # the header row names the register files: "GPR", "PRED", "UGPR", ...
            if cells and all(re.fullmatch(r"U?(GPR|PRED)", c) for c in cells):
                groups, saw_table = cells, True
            continue
        m = _LABEL_RE.match(line)
        if m and not m.group(1).startswith("."):  # not .L_x_0 or .text.NAME
            function = m.group(1)
    if not saw_table:
        raise AnalysisError("this SASS has no register life ranges; disassemble with "
                            "`nvdisasm -c --print-life-ranges` (make_sass(cubin, arch, "
                            "('--print-life-ranges',)))")
    return out


def _one_section(rows: list[LiveInstruction], section: str | None) -> list[LiveInstruction]:
    sections = list(dict.fromkeys(r.section for r in rows))
    if section is None:
        if len(sections) > 1:
            raise AnalysisError(f"the SASS holds several entries ({', '.join(sections)}); "
                                "name one with section=")
        return rows
    if section not in sections:
        raise AnalysisError(f"no entry {section!r} in the SASS; it has {', '.join(sections)}")
    return [r for r in rows if r.section == section]


def live_registers(sass: str | Sequence[LiveInstruction], section: str | None = None,
                   register_file: str = "GPR") -> dict[int, int]:
    """Occupied registers at each instruction of one entry.

    Args:
        sass: ``nvdisasm -c --print-life-ranges`` text, or its parse
            (:func:`parse_life_ranges`).
        section: the entry's name when the cubin holds several.
        register_file: ``"GPR"`` (default; per-thread registers, what
            occupancy counts), ``"PRED"``, ``"UGPR"`` or ``"UPRED"``.

    Returns:
        SASS byte offset -> occupied registers (registers per thread).

    Raises:
        AnalysisError: no life-range table, or an ambiguous/unknown entry.
    """
    rows = parse_life_ranges(sass) if isinstance(sass, str) else list(sass)
    return {r.offset: r.live.get(register_file, 0) for r in _one_section(rows, section)}


def max_live_per_line(live: Mapping[int, int],
                      line_offsets: Mapping[int, Sequence[int]]) -> dict[int, int]:
    """The most registers live at any instruction of each Python line.

    Args:
        live: SASS offset -> occupied registers (from :func:`live_registers`).
        line_offsets: Python line -> SASS offsets of its instructions
            (``CompiledKernel.source_map.rows_of("sass_offsets")``).

    Returns:
        Python line -> maximum occupied registers; lines none of whose
        offsets has a count are left out.
    """
    out = {}
    for line, offsets in line_offsets.items():
        counts = [live[o] for o in offsets if o in live]
        if counts:
            out[line] = max(counts)
    return out


def spill_offsets(rows: Sequence[LiveInstruction]) -> list[int]:
    """Offsets of local-memory loads and stores (``LDL``/``STL``): register
    spills and fills when ptxas reports spill bytes, else local arrays."""
    return [r.offset for r in rows if _LOCAL_RE.search(r.text)]
