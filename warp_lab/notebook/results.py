"""Rich output of a ``LaunchResult``: what a launch did, per Python line.

Simulator runs show the instruction count per Python line as a heat column
on the source pane, a per-line table (thread- and warp-instructions, mean
active lanes, divergent branches, sectors per request, shared wavefronts
and bank conflicts per request; :mod:`warp_lab.runtime.line_table`), SIMT
efficiency per warp (histogram), sectors per request for each global memory
line, shared-memory bank conflicts per line (extra wavefronts),
the instruction mix, the checks' findings with their source lines, and the
kernel's printed output. GPU runs show the kernel time over repeats, the
achieved bandwidth against the device's peak and the compile-stage timings.

The numbers are the simulator's (:class:`warp_lab.sim.result.Metrics`, per
PTX line), summed per Python line through the compiler's line map
(``LaunchResult.line_metrics``); the accessor functions below
(:func:`line_metrics`, :func:`instructions_per_line`, :func:`memory_lines`,
:func:`shared_memory_lines`, :func:`bank_conflicts_per_line`, ...) are what
the views read, and the teaching notebooks use them too.
"""

from __future__ import annotations

import html
import re

from warp_lab.notebook.svg_charts import instruction_mix_svg, simt_histogram_svg, \
    time_distribution_svg
from warp_lab.notebook.views import STYLE, compile_time_text, kernel_html, \
    line_label, new_root_id, source_line_text
from warp_lab.runtime.result import PARTIAL_NOTE

__all__ = ["launch_html", "LaunchView", "line_metrics", "instructions_per_line",
           "memory_lines", "shared_memory_lines", "bank_conflicts_per_line",
           "simt_efficiencies", "instruction_mix", "findings"]


def _metrics(result):
    return getattr(result, "metrics", None)


def line_metrics(result) -> dict:
    """Every simulator counter per Python line: ``{line: LineStats}`` (``{}`` on a GPU).

    ``LaunchResult.line_metrics``: the simulator's per-PTX-line counters
    (:class:`~warp_lab.sim.result.Metrics`) summed per Python line through the
    compiler's source map. Keys are its line keys: the kernel's file or cell lines, and a
    device function's of another cell (``compiled.source_map.line(key)`` says which file
    and line). The accessors below read it.
    """
    return dict(getattr(result, "line_metrics", None) or {})


def instructions_per_line(result) -> dict[int, int]:
    """Thread-instructions executed per Python line (empty on a GPU).

    Read from the simulator's per-PTX-line counts (``Metrics.per_ptx_line``)
    and summed per Python line through ``compiled.source_map.rows_of("ptx")``.
    """
    return {ln: st.thread_instructions for ln, st in line_metrics(result).items()
            if st.thread_instructions}


def memory_lines(result) -> dict[int, dict]:
    """Global memory per Python line: ``{line: {"requests", "sectors", "sectors_per_request"}}``.

    A request is one warp-level load or store instruction; a sector is a
    32-byte segment of global memory it touches (Nsight Compute's
    ``l1tex__t_requests`` and ``l1tex__t_sectors``). The PTX load/store
    lines of one Python line are summed.
    """
    return {ln: {"requests": st.global_requests, "sectors": st.global_sectors,
                 "sectors_per_request": st.sectors_per_request}
            for ln, st in line_metrics(result).items() if st.global_requests}


def shared_memory_lines(result) -> dict[int, dict]:
    """Shared memory per Python line: ``{line: {"requests", "wavefronts",
    "wavefronts_per_request", "bank_conflicts", "conflicts_per_request"}}``.

    A request is one warp-level shared load/store; a wavefront one pass through the 32
    banks (4 bytes each); ``bank_conflicts`` are the *extra* wavefronts, beyond the
    fewest the access width needs (Nsight Compute's "bank conflicts" and "wavefronts
    per request"): a 32-way conflict is 32 wavefronts and 31 conflicts per request.
    """
    return {ln: {"requests": st.shared_requests, "wavefronts": st.shared_wavefronts,
                 "wavefronts_per_request": st.wavefronts_per_request,
                 "bank_conflicts": st.bank_conflicts,
                 "conflicts_per_request": st.conflicts_per_request}
            for ln, st in line_metrics(result).items() if st.shared_requests}


def bank_conflicts_per_line(result) -> dict[int, int]:
    """Shared-memory bank conflicts per Python line, in extra wavefronts (those beyond
    the fewest each request needs), every line with a shared access (0 included);
    per request: :func:`shared_memory_lines`."""
    return {ln: r["bank_conflicts"] for ln, r in shared_memory_lines(result).items()}


def simt_efficiencies(result) -> list[float]:
    """SIMT efficiency per warp that issued instructions: active lanes / 32, 0..1."""
    import math

    m = _metrics(result)
    if m is None:
        return []
    return [float(x) for x in m.simt_efficiency if not math.isnan(x)]


def instruction_mix(result) -> dict[str, int]:
    """Thread-instructions per class (arithmetic, memory, control, sync, special)."""
    m = _metrics(result)
    return {str(k): int(v) for k, v in (m.mix if m is not None else {}).items()}


def findings(result) -> list:
    """The checks' :class:`~warp_lab.sim.result.Finding` records (memcheck, racecheck, barrier)."""
    return list(getattr(result, "findings", []) or [])


class _Markup(str):
    """A table cell that is HTML already (its user text escaped where it was built)."""


#: A launch table's source text, kept on one line and cut at :data:`SOURCE_WIDTH`
#: characters with an ellipsis, the whole text in its title (hover): a long line of
#: source widened its table until the last columns (bank conflicts) left the output.
#: Inline, as the rest of the static HTML, so an nbconvert export keeps it.
SOURCE_WIDTH = 48
_SOURCE_STYLE = ("white-space:pre;font-family:var(--jp-code-font-family,monospace);"
                 "font-size:var(--jp-code-font-size,12px);background:none;padding:0;"
                 "display:inline-block;max-width:%dch;overflow:hidden;text-overflow:ellipsis;"
                 "vertical-align:bottom")
#: the table scrolls sideways inside the output when it is still wider than it (a narrow
#: window), its column heads wrap to a few words a line
_WRAP_STYLE = "overflow-x:auto;max-width:100%"
_HEAD_STYLE = "white-space:normal;max-width:11em;vertical-align:bottom"


def _source_cell(text: str, width: int = SOURCE_WIDTH) -> _Markup:
    """A table cell of source text (escaped): monospaced, its indentation kept, cut to
    ``width`` characters with an ellipsis, the whole line in its ``title``."""
    escaped = html.escape(text)
    return _Markup(f'<code style="{_SOURCE_STYLE % width}" title="{escaped}">{escaped}</code>')


def _table(head, rows) -> str:
    def cell(x):
        return x if isinstance(x, _Markup) else html.escape(str(x))

    h = "".join(f'<th style="{_HEAD_STYLE}">{html.escape(str(x))}</th>' for x in head)
    body = "".join("<tr>" + "".join(f"<td>{cell(x)}</td>" for x in r) + "</tr>" for r in rows)
    return (f'<div class="wl-table" style="{_WRAP_STYLE}"><table class="wl-card"><tr>{h}</tr>'
            f"{body}</table></div>")


#: a finding's Python array names (``finding_text.name_shared_arrays``), shown as code
_ARRAY_NAME = re.compile(r"(shared array )(\w+)(?= \(lines? \d)"
                         r"|(wl\.dynamic_shared_array )(\w+(?:, \w+)*)(?=, lines? \d)")
#: an element of a shared array a finding names (``finding_text._shared_byte_finding``)
_ELEMENT = re.compile(r"\w+\[-?\d+(?:, -?\d+)*\](?=, the shared array of lines? \d)")


def _finding_text(f, ck) -> _Markup:
    """A finding's message as HTML: the Python arrays and elements it names as code, and
    the text of the line of a race's other access, which the message quotes
    (``finding_text._other_access_line``; ``details["other_source_text"]``)."""
    text = _ARRAY_NAME.sub(lambda m: f"{m.group(1) or m.group(3)}<code>"
                           f"{m.group(2) or m.group(4)}</code>", html.escape(f.message))
    text = _ELEMENT.sub(lambda m: f"<code>{m.group(0)}</code>", text)
    code = (f.details or {}).get("other_source_text")
    if code:
        said = html.escape(f"({code})")
        text = text.replace(said, f"(<code>{html.escape(code)}</code>)", 1)
    return _Markup(text)


def _source_word(ck) -> str:
    """What the kernel's source is written in, for column titles: "Python" or "C++"."""
    return "C++" if getattr(ck, "language", "python") == "cuda" else "Python"


def _findings_html(result) -> str:
    items = findings(result)
    if not items:
        return ""
    ck = result.compiled
    rows = []
    for f in items:
        line, file = f.source_line, f.source_file  # file: a device function's other cell
        where = ", ".join(x for x in (f"block {f.block}" if f.block is not None else "",
                                      f"thread {f.thread}" if f.thread is not None else "") if x)
        rows.append((f.kind, _finding_text(f, ck), where,
                     _source_cell(f"{line_label(ck, line, file)}: "
                                  f"{source_line_text(ck, line, file)}") if line else "",
                     f.ptx_line or ""))
    note = ""
    if ck.options.index_checks:  # memcheck ran launch.index_checked's build, not the panes'
        note = ('<p class="wl-note">PTX lines are those of the index-checked build memcheck '
                'ran (the launch result\'s <code>compiled.ptx</code>: a bounds check on every 2-D '
                'access), not of the PTX pane.</p>')
    return ('<details open><summary>Findings</summary>'
            + _table(("check", "what", "where", _source_word(ck) + " line", "PTX line"), rows)
            + note
            + "</details>")


#: What the HTML view shows of a launch's printed text at most: 10,000 lines and
#: 1 MiB, the size of a GPU's default printf FIFO (``cudaLimitPrintfFifoSize``,
#: CUDA Programming Guide "Formatted Output"). ``LaunchResult.printed`` keeps all.
PRINTED_MAX_LINES = 10_000
PRINTED_MAX_BYTES = 1 << 20


def cap_text(text: str, max_lines: int = PRINTED_MAX_LINES,
             max_bytes: int = PRINTED_MAX_BYTES) -> tuple[str, str]:
    """The head of ``text`` a notebook can show, and a note on what was left out.

    Args:
        text: the full text.
        max_lines: lines kept at most.
        max_bytes: UTF-8 bytes kept at most (cut at a line end when there is one).

    Returns:
        ``(shown, note)``; ``note`` is ``""`` when nothing was cut, else
        ``"... truncated: N more lines (B bytes) not shown"``.
    """
    lines = text.splitlines(keepends=True)
    head = lines[:max_lines]
    shown = "".join(head)
    if len(shown.encode()) > max_bytes:
        cut = shown.encode()[:max_bytes].decode(errors="ignore")
        shown = cut[: cut.rfind("\n") + 1] or cut
    if len(shown) == len(text):
        return text, ""
    rest = text[len(shown):]
    more = rest.count("\n") + (0 if rest.endswith("\n") else 1)
    return shown, (f"... truncated: {more:,} more line(s) ({len(rest.encode()):,} bytes) not "
                   "shown; the full text is in the result's .printed")


def _instruction_total_html(result) -> str:
    """The simulator's thread-instruction total, and how many of them ran on no Python line
    (PTX under ``.loc F 0`` that :mod:`~warp_lab.compiler.line_zero` could not place: code
    merged from several lines), which the source pane's instruction column leaves out."""
    total = getattr(getattr(result, "sim", None), "instructions", None)
    m = _metrics(result)
    if total is None or m is None:
        return ""
    unplaced = sum(int(v) for v in m.per_ptx_line.values()) - \
        sum(instructions_per_line(result).values())
    text = f"{int(total):,} thread-instructions"
    if unplaced > 0:
        text += (f"; {unplaced:,} of them on no {_source_word(result.compiled)} line (code the "
                 "compiler merged from "
                 "several lines, PTX .loc line 0), not in the source pane's instr. column")
    return f"<div>{html.escape(text)}</div>"



def _line_table_html(result) -> str:
    """The per-Python-line table (:mod:`warp_lab.runtime.line_table`): the busiest lines
    by warp-instructions issued, in line order, then the rest summed."""
    from warp_lab.runtime.line_table import COLUMNS, compact, line_table, table_rows

    table = line_table(result)
    if table is None or not (table.rows or table.unplaced):
        return ""
    which = "every line that ran instructions"
    if table.rest is not None:
        which = (f"the {len(table.rows)} lines that issued the most warp-instructions; the "
                 f"other {table.rest_lines} summed")
    heads, rows = compact(COLUMNS, table_rows(table))
    # the source column as code: monospaced, its indentation kept (a proportional font
    # with collapsed white space lost the nesting); the rest/unplaced rows' words stay text
    code = len(table.rows)
    rows = [r[:1] + (_source_cell(r[1]),) + r[2:] if k < code else r
            for k, r in enumerate(rows)]
    words = {"active lanes / 32": "active lanes: mean active lanes per warp-instruction "
             "(SIMT efficiency)",
             "divergent branches": "divergent branches: warp-level branches whose active "
             "lanes split",
             "bank conflicts (extra wavefronts)": "bank conflicts: shared-memory wavefronts "
             "beyond the fewest each request needs"}
    note = "; ".join(words[h] for h in heads if h in words)
    return (f"<details open><summary>Per line: active lanes, divergence, memory "
            f"({html.escape(which)})</summary>"
            + _table(heads, rows)
            + '<div style="font-size:11px;color:var(--jp-ui-font-color2,#666)">'
            + f'{html.escape(note)}</div></details>')


def launch_html(result) -> str:
    """The HTML snippet for one ``LaunchResult`` (escaped; the charts inline SVG,
    :mod:`warp_lab.notebook.svg_charts`)."""
    ck = result.compiled
    dev = result.device
    head = (f"{ck.name} on {dev}: grid {result.grid}, block {result.block} "
            f"({result.threads_text}); {result.time_text}")
    parts = [f'<div class="wl-title">{html.escape(head)}</div>']
    notes = ([dev.reason] if dev.reason else []) + list(result.notes)
    if result.partial and PARTIAL_NOTE not in notes:
        notes.append(PARTIAL_NOTE)
    parts += [f'<div class="wl-warn">{html.escape(n)}</div>' for n in notes]
    parts.append(_findings_html(result))
    if result.checks_text:
        parts.append(f'<div class="wl-checks">{html.escape(result.checks_text)}</div>')
    charts = []
    if dev.kind == "sim":
        parts.append(_instruction_total_html(result))
        parts.append(_line_table_html(result))
        mem = memory_lines(result)
        if mem:
            parts.append("<details open><summary>Global memory per line</summary>" + _table(
                ("line", "source", "requests", "sectors", "sectors / request"),
                [(line_label(ck, ln), _source_cell(source_line_text(ck, ln)), f"{r['requests']:,}",
                  f"{r['sectors']:,}",
                  f"{r['sectors_per_request']:.2f}") for ln, r in sorted(mem.items())])
                + "</details>")
        shared = shared_memory_lines(result)
        if shared:
            parts.append("<details open><summary>Shared-memory bank conflicts per line "
                         "(conflicts: wavefronts beyond the fewest each request needs)"
                         "</summary>" + _table(
                             ("line", "source", "requests", "wavefronts",
                              "wavefronts / request", "conflicts / request",
                              "bank conflicts (extra wavefronts)"),
                             [(line_label(ck, ln), _source_cell(source_line_text(ck, ln)),
                               f"{r['requests']:,}",
                               f"{r['wavefronts']:,}", f"{r['wavefronts_per_request']:.2f}",
                               f"{r['conflicts_per_request']:.2f}", f"{r['bank_conflicts']:,}")
                              for ln, r in sorted(shared.items())]) + "</details>")
        eff = simt_efficiencies(result)
        if eff:
            charts.append(simt_histogram_svg(eff))
        mix = instruction_mix(result)
        if mix:
            charts.append(instruction_mix_svg(mix))
    else:
        if len(result.times) > 1:
            charts.append(time_distribution_svg(result.times))
        bw = result.bandwidth
        if bw:
            peak = dev.peak_bandwidth
            text = f"achieved {bw / 1e9:.1f} GB/s over the arguments"
            if peak:
                text += f" ({100 * bw / peak:.0f}% of the {peak / 1e9:.0f} GB/s peak)"
            parts.append(f"<div>{html.escape(text)}</div>")
    if ck.timings:
        parts.append(f"<div>compile time: {html.escape(compile_time_text(ck.timings))}</div>")
    if charts:
        parts.append(f'<div class="wl-panes">{"".join(charts)}</div>')
    if result.printed:
        shown, note = cap_text(result.printed)
        parts.append("<details open><summary>printed</summary><div class=\"wl-error\" "
                     f"style=\"border-color:#888;background:none\">{html.escape(shown)}"
                     + (f'<div class="wl-warn">{html.escape(note)}</div>' if note else "")
                     + "</div></details>")
    heat = {"instructions": instructions_per_line(result)}
    source = ""
    if heat["instructions"]:
        source = kernel_html(ck, show=("source",), heat=heat, script=False)
    return (f"<style>{STYLE}</style><div class=\"wl-kernel\" id=\"{new_root_id()}\">"
            f'{"".join(parts)}</div>{source}')


class LaunchView:
    """A ``LaunchResult`` with rich notebook output (``text/html`` and ``text/plain``).

    Attributes:
        result: the launch result.
        progress: the :class:`~warp_lab.notebook.progress.LaunchProgress` that
            followed the launch (``%%warp_kernel --launch``; its ``bar`` is None
            when the launch was too short for one), else None.
    """

    def __init__(self, result, progress=None):
        self.result = result
        self.progress = progress

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/plain": repr(self.result), "text/html": launch_html(self.result)}

    def __repr__(self) -> str:
        return repr(self.result)
