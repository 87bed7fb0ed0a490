"""The per-Python-line table of a simulated launch, as text cells for both views.

For each Python line with code: thread-instructions executed, warp-instructions
issued, mean active lanes per warp-instruction (SIMT efficiency), divergent
branches, and for a line that accesses memory its global sectors per request
and its shared-memory wavefronts per request and bank conflicts. The numbers
are the simulator's per-PTX-line counters summed per Python line through the
compiler's line map (:meth:`warp_lab.sim.result.Metrics.by_line`,
``LaunchResult.line_metrics``). The launch view's HTML
(``warp_lab.notebook.results``) and ``LaunchResult``'s text both show
:func:`line_table`'s rows: the :data:`TOP_LINES` lines that issued the most
warp-instructions, in line order, one row summing the others, and one for
instructions on no Python line.
"""

from __future__ import annotations

from dataclasses import dataclass

from warp_lab.sim.result import LineStats

__all__ = ["TOP_LINES", "COLUMNS", "TEXT_COLUMNS", "LineRow", "LineTable", "line_table",
           "cells", "table_rows", "compact", "line_table_text"]

#: lines a table shows at most; the rest are summed into one row
TOP_LINES = 12

#: the table's column heads (:func:`cells` gives a row's values in this order)
COLUMNS = ("line", "source", "thread-instr.", "warp-instr.", "active lanes / 32",
           "divergent branches", "global sectors / request", "shared wavefronts / request",
           "bank conflicts (extra wavefronts)")
#: the same, short, for the text table (:func:`line_table_text` explains them under it)
TEXT_COLUMNS = ("line", "source", "thread-instr", "warp-instr", "lanes/32", "divergent",
                "sectors/req", "wavefronts/req", "bank conflicts")
_TEXT_WORDS = {"lanes/32": "mean active lanes per warp-instruction (SIMT efficiency)",
               "divergent": "warp-level branches whose active lanes split",
               "sectors/req": "32-byte global sectors per warp-level request",
               "wavefronts/req": "shared-memory wavefronts per warp-level request",
               "bank conflicts": "extra shared-memory wavefronts, in all and per request"}


@dataclass(frozen=True)
class LineRow:
    """One row: ``label`` (``"7"``, or ``"In[3] line 7"`` for a device function's other
    cell), the line's ``source`` text (indentation kept, less the indentation all rows
    share, so the HTML table shows the nesting; trailing space stripped), its
    :class:`LineStats`."""

    label: str
    source: str
    stats: LineStats


@dataclass(frozen=True)
class LineTable:
    """What :func:`line_table` returns.

    Attributes:
        rows: the busiest lines (most warp-instructions issued), in line order.
        rest: the other Python lines with code summed (None when every line is a row).
        rest_lines: how many lines ``rest`` sums.
        unplaced: instructions on no Python line (``.loc`` line 0 code the compiler
            merged from several lines; None when there are none).
    """

    rows: tuple[LineRow, ...]
    rest: LineStats | None
    rest_lines: int
    unplaced: LineStats | None


def line_table(result, top: int = TOP_LINES) -> LineTable | None:
    """The per-line table of a ``LaunchResult`` (None without simulator metrics: a GPU run).

    Args:
        result: a :class:`~warp_lab.runtime.result.LaunchResult`.
        top: rows at most (an int >= 1); the lines beyond are summed in ``rest``.
    """
    from warp_lab.compiler.source_lines import line_label, source_line_text

    metrics = result.metrics
    if metrics is None:
        return None
    ck = result.compiled
    per_line = result.line_metrics
    busiest = sorted(per_line, key=lambda ln: (-per_line[ln].warp_instructions, ln))[:top]
    texts = {ln: source_line_text(ck, ln, strip=False) for ln in busiest}
    common = min((len(t) - len(t.lstrip(" ")) for t in texts.values() if t.strip()), default=0)
    rows = tuple(LineRow(line_label(ck, ln), texts[ln][common:], per_line[ln])
                 for ln in sorted(busiest))
    rest, rest_lines = None, len(per_line) - len(busiest)
    if rest_lines:
        rest = LineStats()
        for ln in set(per_line) - set(busiest):
            rest.add(per_line[ln])
    py_of = ck.source_map.ptx_keys
    unplaced = LineStats()
    for ptx_line, st in metrics.per_ptx_line_stats().items():
        if ptx_line not in py_of:
            unplaced.add(st)
    return LineTable(rows, rest, rest_lines, unplaced if unplaced.warp_instructions else None)


def cells(label: str, source: str, st: LineStats) -> tuple[str, ...]:
    """A row's values as text, in :data:`COLUMNS` order; memory columns are ``""`` for a
    line without such accesses, divergent branches ``""`` for a line without a branch
    that split."""
    lanes = (f"{st.active_lanes:.1f} ({st.simt_efficiency:.0%})"
             if st.warp_instructions else "")
    sectors = f"{st.sectors_per_request:.2f}" if st.global_requests else ""
    wavefronts = f"{st.wavefronts_per_request:.2f}" if st.shared_requests else ""
    conflicts = (f"{st.bank_conflicts:,} ({st.conflicts_per_request:.2f} / request)"
                 if st.shared_requests else "")
    return (label, source, f"{st.thread_instructions:,}", f"{st.warp_instructions:,}", lanes,
            f"{st.divergent_branches:,}" if st.divergent_branches else "", sectors,
            wavefronts, conflicts)


def table_rows(table: LineTable) -> list[tuple[str, ...]]:
    """All rows of ``table`` as :func:`cells`: its lines, then the summed rest and the
    instructions on no Python line (when there are any)."""
    out = [cells(r.label, r.source, r.stats) for r in table.rows]
    if table.rest is not None:
        n = table.rest_lines
        out.append(cells("…", f"{n} other line{'s' * (n != 1)}", table.rest))
    if table.unplaced is not None:
        out.append(cells("–", "on no Python line (.loc 0)", table.unplaced))
    return out


def compact(heads: tuple[str, ...], rows: list[tuple[str, ...]]):
    """``(heads, rows)`` without the columns past the active lanes that are empty in every
    row (no divergent branch, no global or no shared access in the kernel)."""
    keep = [k for k in range(len(heads)) if k < 5 or any(r[k] for r in rows)]
    return tuple(heads[k] for k in keep), [tuple(r[k] for k in keep) for r in rows]


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def line_table_text(result, top: int = TOP_LINES, width: int = 28) -> list[str]:
    """The table as aligned text lines (``[]`` on a GPU), source cut to ``width`` chars,
    memory and divergence columns only when a line has numbers in them, and under it
    what the short column heads count."""
    table = line_table(result, top)
    if table is None or not (table.rows or table.unplaced):
        return []
    heads, rows = compact(TEXT_COLUMNS, [
        r[:1] + (_cut(r[1].strip(), width),) + r[2:] for r in table_rows(table)])
    rows = [heads] + rows
    widths = [max(len(r[k]) for r in rows) for k in range(len(heads))]
    out = ["  ".join(c.ljust(w) if k < 2 else c.rjust(w)
                     for k, (c, w) in enumerate(zip(r, widths))).rstrip() for r in rows]
    return out + [f"  {h}: {_TEXT_WORDS[h]}" for h in rows[0] if h in _TEXT_WORDS]
