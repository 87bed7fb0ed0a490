"""HTML views of a :class:`~warp_lab.compiler.artifact.CompiledKernel`.

Every function here returns a self-contained HTML *snippet* (its own
``<style>`` scoped under ``.wl-kernel``, a body, and optionally a small
inline script), fit to embed several times in one page, the way Cython's
``clean_annotated_html`` does. The static part carries everything: the
colours of corresponding lines are inline ``style`` attributes, panes are
``<details>`` elements, so a saved notebook or an nbconvert HTML export shows
the full view without a kernel or JavaScript. Where JavaScript runs, hovering
a line highlights its counterparts in the other panes and scrolls them into
view.

Every piece of user text (kernel source, names, messages, tool output) goes
through :func:`html.escape`; nothing from the user is ever put inside the
script.

Panes and their line correspondence, read from the compiler's
:class:`~warp_lab.compiler.source_map.SourceMap` (never re-derived here):
Python (file/cell line numbers) | LLVM IR optimised (``source_map.rows_of("llvm")``,
the unoptimised IR in a closed pane beside it) | PTX (``rows_of("ptx")``) |
SASS (``rows_of("sass")``).
"""

from __future__ import annotations

import html
import re
import secrets
from typing import Callable, Mapping, Sequence

from warp_lab.analysis.occupancy import FACTOR_NAMES, factor_list
from warp_lab.compiler.artifact import DIALECT_LABEL, SHARED_DECL
from warp_lab.compiler.source_map import SourceLine
from warp_lab.compiler.linemap import is_sass_file_comment, is_sass_instruction
from warp_lab.compiler.source_lines import (cell_label, file_lines, line_label,
                                            python_location, source_line_text)
from warp_lab.compiler.typed_ast import DYNAMIC_SHARED
from warp_lab.lang.kernel import python_lines
from warp_lab.notebook.highlight import highlight_lines, line_colors, token_css
from warp_lab.notebook.panes import PANES as PANE_SPECS, panes_for

__all__ = ["PANES", "FACTOR_NAMES", "kernel_html", "pane_html", "python_pane_lines",
           "python_row_numbers", "python_location", "source_line_text", "line_label",
           "cell_label", "pane_text", "pane_renames", "pane_count", "compact_sass",
           "resource_card_html", "resource_rows", "error_html", "pane_line_maps", "style_block",
           "new_root_id",
           "STYLE"]

#: pane id -> (title, CompiledKernel attribute, LineMap attribute), read from the pane
#: table (:data:`warp_lab.notebook.panes.PANES`, where a pane is added)
PANES = {p.key: (p.title, p.attr, p.line_map) for p in PANE_SPECS}

#: heat column key (as in the bundle's ``heat``) -> column title
HEAT_TITLES = {"instructions": "instr.", "live_registers": "live regs"}

#: Lines each pane of the HTML view renders at most. A 1,500-statement kernel
#: has ~31,000 lines of unoptimised LLVM IR: rendered in full, its view was
#: 18 MB of HTML, more than a notebook stays responsive with; at 1,000 lines
#: per pane it is 2.2 MB. Longer panes show their head and a note; the bundle
#: (``application/vnd.warp-lab.kernel+json``) and the CompiledKernel keep the
#: full text.
PANE_MAX_LINES = 1000

STYLE = """
.wl-kernel { font-family: var(--jp-ui-font-family, sans-serif); font-size: 12px; margin: 4px 0; }
.wl-kernel .wl-title { font-weight: bold; margin: 2px 0 4px 0; }
.wl-kernel .wl-panes { display: flex; flex-wrap: wrap; gap: 6px; align-items: flex-start; }
.wl-kernel details.wl-pane { flex: 1 1 320px; min-width: 260px; max-width: 100%;
  border: 1px solid #8884; border-radius: 3px; }
.wl-kernel details.wl-pane:not([open]) { flex: 0 0 auto; min-width: 0; }
.wl-kernel .wl-code .err { border: none; }
.wl-kernel details.wl-pane > summary { cursor: pointer; padding: 2px 6px; font-weight: bold;
  background: #8881; }
.wl-kernel .wl-code { max-height: 420px; overflow: auto; font-family:
  var(--jp-code-font-family, monospace); font-size: 11.5px; line-height: 1.35; }
.wl-kernel .wl-line { white-space: pre; display: flex; tab-size: 4; }
.wl-kernel .wl-line[hidden], .wl-kernel .wl-line.wl-hidden { display: none; }
.wl-kernel .wl-count { font-weight: normal; color: #888; margin-left: 6px;
  white-space: nowrap; }
.wl-kernel .wl-ln { color: #888; min-width: 3.2em; text-align: right; padding-right: 8px;
  user-select: none; flex: none; }
.wl-kernel .wl-heat { min-width: 3.5em; text-align: right; padding-right: 6px; flex: none;
  color: #333; font-size: 10.5px; }
.wl-kernel .wl-code .wl-src { flex: 1 0 auto; margin: 0; padding: 0; border: 0;
  background: transparent; color: inherit; font: inherit; white-space: pre; overflow: visible; }
.wl-kernel .wl-line.wl-hot { outline: 1px solid #d33; background-color: #ff08 !important; }
.wl-kernel .wl-missing { color: #a60; padding: 4px 8px; font-style: italic; }
.wl-kernel table.wl-card { border-collapse: collapse; margin: 4px 0; }
.wl-kernel table.wl-card td, .wl-kernel table.wl-card th { padding: 1px 8px; text-align: left;
  border-bottom: 1px solid #8883; }
.wl-kernel .wl-warn { color: #b35900; }
.wl-kernel table.wl-facts { display: block; border: 0; }
.wl-kernel table.wl-facts > tbody { display: grid; gap: 2px 12px;
  grid-template-columns: repeat(auto-fill, minmax(15em, 1fr)); }
.wl-kernel table.wl-facts tr { display: block; padding: 1px 4px; border-left: 2px solid #8885; }
.wl-kernel table.wl-facts th, .wl-kernel table.wl-facts td { display: block; padding: 0;
  border: 0; text-align: left; }
.wl-kernel table.wl-facts th { font-weight: normal; color: #888; font-size: 11px; }
.wl-kernel .wl-error { border-left: 4px solid #d33; background: #d331; padding: 4px 8px;
  font-family: var(--jp-code-font-family, monospace); white-space: pre; }
.wl-kernel .wl-del { background: #f443; } .wl-kernel .wl-add { background: #4c43; }
"""


def _script(root_id: str) -> str:
    # Hover-linking: the only dynamic part. It reads data-py attributes that
    # views write as integers; no user text is involved.
    return """<script>(function(){
var root=document.getElementById("%s"); if(!root) return;
function clear(){root.querySelectorAll(".wl-hot").forEach(function(x){x.classList.remove("wl-hot");});}
root.addEventListener("mouseover",function(e){
 var l=e.target.closest&&e.target.closest(".wl-line[data-py]"); if(!l) return;
 clear(); var here=l.closest(".wl-code"), done=[];
 root.querySelectorAll('.wl-line[data-py="'+l.getAttribute("data-py")+'"]').forEach(function(x){
  x.classList.add("wl-hot"); var c=x.closest(".wl-code");
  if(c&&c!==here&&done.indexOf(c)<0){done.push(c);
   c.scrollTop=x.offsetTop-c.offsetTop-c.clientHeight/3;}});});
root.addEventListener("mouseleave",clear);})();</script>""" % root_id


def new_root_id() -> str:
    """A fresh element id for one snippet (hover-linking stays inside it)."""
    return "wl-k-" + secrets.token_hex(6)


def pane_line_maps(ck) -> dict[str, dict[int, int]]:
    """For each pane, pane line -> Python line key, from ``ck.source_map``.

    Returns:
        ``{"python": {...}, "llvm": {...}, "ptx": {...}, "sass": {...}}``; the
        Python pane maps each line to itself; the unoptimised IR gets no map
        (the line map describes the optimised IR).
    """
    first = ck.source.first_line
    out = {"python": {first + k: first + k for k in range(len(python_lines(ck.source.text)))}}
    for spec in PANE_SPECS:
        if spec.line_map:
            out[spec.key] = ck.source_map.pane_keys(spec.key)
    return out


def _function_spans(lines: list[str]) -> list[tuple[int, int]]:
    """``(first, last)`` file lines of every function of ``lines`` (decorators included)."""
    import ast

    try:
        tree = ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError):
        return []
    return [(min([n.lineno] + [d.lineno for d in n.decorator_list]), n.end_lineno)
            for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def python_pane_lines(ck) -> list[tuple[int | None, str]]:
    """The Python pane's ``(line key, text)`` rows: the kernel, the device functions of its
    file or cell that produced code in it, then those of other files or cells.

    The source map (``ck.source_map``) holds every line code came from, device
    functions inlined into the kernel included; those outside the kernel's own
    source are shown with the whole function around them, read through
    :mod:`linecache`, in file order. A ``(None, "")`` row stands between rows
    whose lines are not consecutive. A device function of another file or
    cell (a ``@wl.func`` defined in an earlier notebook cell) follows under a
    ``(None, "# In[3]")`` row naming that cell (:func:`cell_label`); its rows
    are keyed by the source map's line keys
    (:meth:`~warp_lab.compiler.source_map.SourceMap.key`), and
    :func:`python_row_numbers` gives the line numbers to show.
    """
    src = ck.source
    own = python_lines(src.text)
    rows = [(src.first_line + k, text) for k, text in enumerate(own)]
    inside = range(src.first_line, src.first_line + len(own))
    sm = ck.source_map
    lines = file_lines(src.filename)
    extra = [ln for ln in sm.keys
             if sm.is_own(ln) and ln not in inside and 0 < ln <= len(lines)]
    if extra:
        rows = _file_parts(lines, inside, extra)
    for filename in sm.other_files:
        lines = file_lines(filename)
        wanted = [sm.line(key).line for key in sm.keys_in(filename)]
        part = _file_parts(lines, (), [ln for ln in wanted if 0 < ln <= len(lines)])
        if part:
            rows.append((None, f"# {cell_label(filename)}"))
            rows += [(None if n is None else sm.key(SourceLine(filename, n)), text)
                     for n, text in part]
    return rows


def _file_parts(lines: list[str], wanted, extra: list[int]) -> list[tuple[int | None, str]]:
    """Rows of file ``lines``: the ``wanted`` line numbers and the innermost function around
    each of ``extra`` (else the line alone), in file order, dedented together, blank lines
    between two parts joining them and a ``(None, "")`` row for any other gap."""
    import textwrap

    spans = _function_spans(lines)
    wanted = set(wanted)
    for ln in extra:
        around = [sp for sp in spans if sp[0] <= ln <= sp[1]]
        first, last = min(around, key=lambda sp: sp[1] - sp[0]) if around else (ln, ln)
        wanted.update(range(first, last + 1))
    numbers = sorted(n for n in wanted if 0 < n <= len(lines))
    for a, b in zip(numbers, numbers[1:]):  # blank lines between two parts join them
        if all(not lines[n - 1].strip() for n in range(a + 1, b)):
            wanted.update(range(a + 1, b))
    numbers = sorted(n for n in wanted if 0 < n <= len(lines))
    texts = textwrap.dedent("\n".join(lines[n - 1] for n in numbers)).split("\n")
    out: list[tuple[int | None, str]] = []
    for n, text in zip(numbers, texts):
        if out and out[-1][0] is not None and n != out[-1][0] + 1:
            out.append((None, ""))
        out.append((n, text))
    return out


def python_row_numbers(ck, rows) -> list[int | None]:
    """The line number to show for each of :func:`python_pane_lines`'s rows: the line in
    its own file or cell (a device function of another cell keeps its cell's numbering);
    None for a gap or label row."""
    return [None if key is None else ck.source_map.line(key).line for key, _ in rows]


def _shared_declarations(ck, ptx: str) -> dict[int, int]:
    """PTX line of each ``.shared`` variable declaration -> the Python line declaring its
    array (one line; none when the array is declared on several)."""
    arrays = ck.source_map.array_lines()
    out = {}
    for k, line in enumerate(ptx.splitlines(), 1):
        m = SHARED_DECL.match(line)  # a .shared declaration, its name
        lines = arrays.get(m.group(1), (None, ()))[1] if m else ()
        if len(lines) == 1:
            out[k] = lines[0]
    return out


def pane_text(ck, attr: str) -> str | None:
    """The text of ``ck``'s field ``attr`` (``ptx``, ``sass``, ``llvm_ir_optimized``, ...)
    as a pane shows it: a notebook cell's content-derived name in the debug info
    (``.file 1 "<cell of k>"``, ``//## File "<cell of k>"``, ``!DIFile(filename: ...)``)
    replaced by the cell it stands for in this run, as :func:`cell_label` names it
    (:meth:`SourceMap.renamed <warp_lab.compiler.source_map.SourceMap.renamed>`). Only
    quoted names change, so every line keeps its number."""
    text = getattr(ck, attr, None)
    if text:
        for name, label in pane_renames(ck):
            text = text.replace(name, label)
    return text


def pane_renames(ck) -> tuple[tuple[str, str], ...]:
    """What :func:`pane_text` replaces in ``ck``'s texts: ``('"<cell of k>"', '"In [3]"')``
    pairs (quoted content-derived cell names, the cells they stand for in this run)."""
    return tuple((f'"{name}"', f'"{cell_label(cell)}"')
                 for name, cell in ck.source_map.cells.items())


_SASS_ROW = re.compile(r"^\s*(/\*[0-9a-f]{4,}\*/)\s*(@!?U?P\w+\s+)?(.*)$")


def compact_sass(text: str) -> str:
    """nvdisasm's text as the SASS pane shows it, line for line: an instruction's fixed
    columns (about 30 blanks between its ``/*offset*/`` and the opcode, which push the
    code out of a pane) become the offset, a 4-character guard-predicate column
    (``@P0``, ``@!UP1``) and the instruction; other lines keep at most two leading
    blanks. The extension's ``compactSass`` (``extension/src/view.ts``) does the same."""
    out = []
    for line in text.split("\n"):
        m = _SASS_ROW.match(line)
        if m is None:
            out.append(re.sub(r"^\s{2,}", "  ", line))
        else:
            out.append(f"{m.group(1)} {(m.group(2) or '').strip():<4} {m.group(3)}")
    return "\n".join(out)


def pane_count(pane: str, text: str | None) -> str:
    """What a pane's header counts: ``"20 instructions"`` for SASS (nvdisasm's labels and
    ``//## File`` comments are no instructions), ``"42 lines"`` for the others; ``""``
    without text."""
    if not text:
        return ""
    lines = python_lines(text)
    if pane == "sass":
        n = sum(map(is_sass_instruction, lines))
        return f"{n:,} instruction{'' if n == 1 else 's'}"
    return f"{len(lines):,} line{'' if len(lines) == 1 else 's'}"


def pane_html(pane: str, text: str | None, *, numbers=None, shown=None,
              py_of_line: Mapping[int, int] = {},
              colors: Mapping[int, str] = {}, heat: Mapping[str, Mapping[int, object]] = {},
              title: str | None = None, open_: bool = True, missing: str = "",
              max_lines: int = PANE_MAX_LINES, count: str = "",
              hide: Callable[[str], bool] | None = None,
              display: Callable[[str], str] | None = None, lexer: str | None = None,
              renames: Sequence[tuple[str, str]] = ()) -> str:
    """One collapsible, highlighted, line-numbered pane.

    Args:
        pane: pane id (a key of :data:`PANES`); picks the lexer.
        text: the pane's text, or None when the stage did not run.
        numbers: the line number of each line (default 1, 2, ...), what
            ``py_of_line`` and ``heat`` are keyed by; None marks a gap between
            parts (shown as ``⋮``, no line number).
        shown: the number to show for each line when it is not ``numbers``'
            (the Python pane: a device function of another cell shows its own
            cell's line numbers, :func:`python_row_numbers`).
        py_of_line: pane line number -> Python line (gives ``data-py`` and colour).
        colors: Python line -> CSS colour.
        heat: column title -> {pane line number -> value}: extra columns
            before the code (instructions executed, live registers).
        title: summary text (default from :data:`PANES`).
        open_: whether the ``<details>`` starts open.
        missing: why ``text`` is None (shown instead of code).
        max_lines: lines rendered at most (the first ones), with a note of how
            many more there are; default :data:`PANE_MAX_LINES`.
        count: shown after the title, e.g. ``"20 instructions"`` (:func:`pane_count`).
        hide: text line -> whether its row is hidden (``hidden``, which needs no
            style sheet): in the page and keeping its number, so the gutter shows
            the text's own line numbers (the SASS pane's ``//## File`` comments,
            :func:`~warp_lab.compiler.linemap.is_sass_file_comment`).
        display: text -> the text shown, line for line (the SASS pane's
            :func:`compact_sass`); ``hide`` reads the text itself.
        lexer: the lexer's name (:func:`~warp_lab.notebook.lexers.get_lexer`) when it is
            not the pane's (a CUDA C++ kernel's source pane: ``"cuda"``).
        renames: ``(old, new)`` replacements shown in place of ``text``'s own
            (:func:`pane_renames`), put into the highlighted lines
            (:func:`~warp_lab.notebook.highlight.highlight_lines`).
    """
    title = title if title is not None else PANES[pane][0]
    counted = f' <span class="wl-count">{html.escape(count)}</span>' if count else ""
    head = (f'<details class="wl-pane" data-pane="{pane}"{" open" if open_ else ""}>'
            f"<summary>{html.escape(title)}{counted}</summary>")
    if text is None:
        why = html.escape(missing or "not available")
        return f'{head}<div class="wl-missing">{why}</div></details>'
    all_lines = python_lines(text)
    hidden = max(0, len(all_lines) - max_lines)
    if hidden:  # highlight only what is shown: the lexer's time grows with the text too
        text = "\n".join(all_lines[:max_lines])
    lines = highlight_lines(display(text) if display else text, lexer or pane, renames)
    numbers = list(numbers) if numbers is not None else list(range(1, len(lines) + 1))
    shown = list(shown) if shown is not None else numbers
    heat_cols = [(HEAT_TITLES.get(name, name), col) for name, col in heat.items()]
    out = [head, '<div class="wl-code">']
    if heat_cols:
        cols = "".join(f'<span class="wl-heat">{html.escape(name)}</span>' for name, _ in heat_cols)
        out.append(f'<div class="wl-line wl-head"><span class="wl-ln"></span>{cols}</div>')
    maxima = {name: max((float(v) for v in col.values()), default=0.0) or 1.0
              for name, col in heat_cols}
    raw = all_lines[:max_lines]
    for k, (number, label, code) in enumerate(zip(numbers, shown, lines)):
        py = py_of_line.get(number) if number is not None else None
        attrs = ' class="wl-line wl-hidden" hidden' if hide and hide(raw[k]) else ' class="wl-line"'

        if py is not None:
            attrs += f' data-py="{int(py)}"'
            if py in colors:
                attrs += f' style="background-color:{html.escape(colors[py])}"'
        cells = []
        for name, col in heat_cols:
            v = col.get(number) if number is not None else None
            if v is None:
                cells.append('<span class="wl-heat"></span>')
            else:
                a = min(float(v) / maxima[name], 1.0) * 0.6
                cells.append(f'<span class="wl-heat" style="background-color:rgba(230,80,20,'
                             f'{a:.2f})">{html.escape(_fmt(v))}</span>')
        label = "⋮" if number is None or label is None else int(label)
        out.append(f'<div{attrs}><span class="wl-ln">{label}</span>'
                   f'{"".join(cells)}<pre class="wl-src">{code}</pre></div>')
    out.append("</div>")
    if hidden:
        out.append(f'<div class="wl-missing">... truncated: {hidden:,} more line(s) not shown '
                   f"(the view shows the first {max_lines:,}; the full text is on the "
                   "CompiledKernel)</div>")
    out.append("</details>")
    return "".join(out)


def _fmt(v) -> str:
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.2f}"
    return f"{int(v):,}"


def kernel_html(ck, *, show=("source", "llvm", "ptx", "sass", "resources"), heat=None,
                pane_heat=None, occupancy=None, script: bool = True,
                root_id: str | None = None, diff=None, extra: str = "") -> str:
    """The side-by-side view of one compiled kernel.

    Args:
        ck: a :class:`~warp_lab.compiler.artifact.CompiledKernel`.
        show: which parts, from ``source``, ``llvm``, ``ptx``, ``sass``,
            ``resources`` (``occupancy`` is shown inside the resource card when
            ``occupancy`` is given).
        heat: optional ``{"instructions" | "live_registers" | title: {python line:
            value}}`` shown beside the Python pane (instructions executed, live
            registers per line); the same keys as the bundle's ``heat``.
        pane_heat: optional ``{pane: {column key: {pane line: value}}}`` for
            the other panes (live registers per SASS line).
        occupancy: optional occupancy record for the resource card.
        script: include the hover-linking script.
        root_id: element id of the snippet (default: a fresh random one).
        diff: ``--diff previous``: a :class:`~warp_lab.notebook.diff.KernelDiff` (its
            table after the resource card), a string saying why there is none, or None.
        extra: trusted HTML appended inside the snippet (other views' output).

    Returns:
        an HTML snippet (``<style>`` + ``<div class="wl-kernel">``).
    """
    root_id = root_id or new_root_id()
    maps = pane_line_maps(ck)
    colors = line_colors(ck.source_map.keys)
    src = ck.source
    front_end = getattr(ck, "language", "python")
    parts = []
    for spec in panes_for(front_end, show):
        pane = spec.key
        absent = spec.absent_reason(front_end)
        if absent is not None:   # e.g. NVRTC gives no NVVM IR: the strip says so
            parts.append(pane_html(pane, None, open_=False, missing=absent))
            continue
        if spec.attr is None:   # the source pane (Python or CUDA C++)
            rows = python_pane_lines(ck)
            numbers = [n for n, _ in rows]
            code_rows = sum(n is not None for n in numbers)  # gap and cell-label rows: no
            parts.append(pane_html(pane, "\n".join(t for _, t in rows), numbers=numbers,
                                   count=f"{code_rows:,} line{'' if code_rows == 1 else 's'}",
                                   shown=python_row_numbers(ck, rows),
                                   py_of_line={n: n for n in numbers if n is not None},
                                   colors=colors, heat=heat or {},
                                   lexer=spec.language,
                                   title=f"{spec.title}  {cell_label(src.filename)}"))
            continue
        attr = spec.attr
        # highlighted with the content-derived cell names, which stay the same when the cell
        # runs again (the highlight cache's key), the labels of this run put in after
        raw, text = getattr(ck, attr, None), pane_text(ck, attr)
        py_of_line = maps.get(pane, {})
        if pane == "ptx" and text:  # a .shared declaration -> the line declaring the array
            py_of_line = {**_shared_declarations(ck, text), **py_of_line}
        parts.append(pane_html(pane, raw or text, py_of_line=py_of_line, colors=colors,
                               heat=(pane_heat or {}).get(pane, {}),
                               renames=pane_renames(ck) if raw else (),
                               open_=spec.opened, count=pane_count(pane, text),
                               hide=is_sass_file_comment if pane == "sass" else None,
                               display=compact_sass if pane == "sass" else None,
                               lexer=spec.language,
                               missing=ck.missing.get(attr, "") if text is None else ""))
    dialect = f" · {DIALECT_LABEL}" if ck.dialect == "warp" else ""
    title = (f'<div class="wl-title">{html.escape(ck.name)} — '
             f"{html.escape(ck.options.label() + dialect)}</div>")
    card = resource_card_html(ck, occupancy) if "resources" in show else ""
    if isinstance(diff, str):
        extra = f'<div class="wl-missing">--diff previous: {html.escape(diff)}</div>' + extra
    elif diff is not None:
        from warp_lab.notebook.diff import diff_html
        extra = diff_html(diff) + extra
    body = (f'<div class="wl-kernel" id="{root_id}">{title}<div class="wl-panes">'
            f'{"".join(parts)}</div>{card}{extra}</div>')
    return style_block() + body + (_script(root_id) if script else "")


def style_block() -> str:
    """The ``<style>`` element every snippet starts with."""
    return f"<style>{STYLE}\n{token_css('.wl-kernel .wl-code')}</style>"




def _occ_fields(occ) -> list[tuple[str, str]]:
    rows = []
    if occ is None:
        return rows
    frac = getattr(occ, "occupancy", None)
    if frac is not None:
        rows.append(("occupancy", f"{100 * float(frac):.0f}%"))
    for label, attr in (("block size", "block_size"), ("active blocks / SM", "active_blocks_per_sm"),
                        ("active warps / SM", "active_warps_per_sm")):
        v = getattr(occ, attr, None)
        if v is not None:
            rows.append((label, str(v)))
    lim = getattr(occ, "limiters", None) or getattr(occ, "limiter", None)
    if lim:
        lim = (lim,) if isinstance(lim, str) else lim
        rows.append(("limited by", factor_list(lim)))
    return rows


def resource_warnings(resources, occupancy=None) -> list[str]:
    """The warnings a resource card shows (spills, no block fits, register-limited occupancy)."""
    warns = []
    if getattr(occupancy, "active_blocks_per_sm", None) == 0:
        why = factor_list(getattr(occupancy, "limiters", ()))
        warns.append("no block of this size fits on an SM: this configuration cannot launch"
                     + (f" (limited by {why})" if why else ""))
    if resources is not None and resources.spills:
        warns.append(f"registers spill to local memory: {resources.spill_stores} bytes stored, "
                     f"{resources.spill_loads} bytes loaded per thread")
    lim = getattr(occupancy, "limiters", None) or getattr(occupancy, "limiter", None) or ()
    lim = (lim,) if isinstance(lim, str) else tuple(lim)
    if "registers" in lim and getattr(occupancy, "occupancy", 1.0) < 1.0:
        regs = getattr(occupancy, "registers", None) or (resources.registers if resources else "?")
        warns.append(f"occupancy is limited by registers ({regs} per thread): fewer registers "
                     "per thread would fit more blocks per SM")
    return warns


def compile_time_text(timings) -> str:
    """``"12.3 ms (frontend 1.0, ...)"`` from ``CompiledKernel.timings`` (seconds per stage).

    A cache hit (a ``cache`` entry) keeps the first compile's stage times; it
    reads ``"cache hit in 0.2 ms; first compile ..."``.
    """
    stages = {k: float(v) for k, v in timings.items() if k not in ("total", "cache")}
    total = float(timings.get("total", sum(stages.values())))
    text = f"{1000 * total:.1f} ms (" + ", ".join(
        f"{k} {1000 * v:.1f}" for k, v in stages.items()) + ")"
    if "cache" in timings:
        text = f"cache hit in {1000 * float(timings['cache']):.1f} ms; first compile {text}"
    return text


def resource_rows(ck, occupancy=None) -> list[tuple[str, str]] | None:
    """The resource card's ``(label, value)`` rows, the facts every renderer shows (the
    static card here, the bundle's ``view.resources`` for the extension); None when
    ptxas did not run (``ck.missing["resources"]`` says why). Arguments as
    :func:`resource_card_html`'s. Tools appear by version, never by path (a path of
    the machine that ran the notebook has no place in an exported page)."""
    r = ck.resources
    if r is None:
        return None
    # the occupancy record's shared bytes are static + the dynamic ones asked for
    dynamic = max(0, int(getattr(occupancy, "shared_per_block", 0) or 0) - r.shared)
    allocation = getattr(occupancy, "shared_allocation", None)
    rows = [("registers / thread", r.registers),
            ("spill stores / loads", f"{r.spill_stores} / {r.spill_loads} bytes"
             + (" (to and from local memory)" if r.spills else "")),
            ("stack frame", f"{r.stack_frame} bytes"),
            ("shared memory (static)", f"{r.shared} bytes / block"),
            *([("shared memory (dynamic)", f"{dynamic} bytes / block")] if dynamic else []),
            *([("shared memory / block (allocated)", allocation.describe())] if allocation
              else []),
            # ptxas's stack: spilled registers and local arrays live there (Resources.local)
            ("local memory", f"{r.local} bytes / thread" + (
                " (stack frame: spilled registers, local arrays)" if r.local else "")),
            # every kernel has parameters in constant bank 0, so 0 is ptxas saying nothing
            # (CUDA 13's ptxas -v prints no cmem[0] for sm_90)
            ("constant memory", f"{r.const} bytes" if r.const else
             f"not reported by ptxas for {r.arch}"),
            ("barriers", r.barriers)]
    rows += _occ_fields(occupancy)
    if ck.timings:
        rows.append(("compile time", compile_time_text(ck.timings)))
    ptxas = ck.toolchain.get("ptxas") if ck.toolchain else None
    if ptxas:   # "13.0.88 (/path/to/ptxas)": the version only
        rows.append(("ptxas", str(ptxas).split(" (")[0]))
    return [(str(k), str(v)) for k, v in rows]


def resource_card_html(ck, occupancy=None) -> str:
    """The resource card: registers, spills, shared/local/constant bytes, barriers, warnings,
    as tiles (label over value) in as many columns as the output has room for, as the
    extension's card (``extension/src/card.ts``) shows the same rows.

    Args:
        ck: the compiled kernel (its ``resources``, ``missing``, ``toolchain``,
            ``timings``).
        occupancy: an occupancy record from :mod:`warp_lab.analysis`, or None; its
            dynamic shared memory (``shared_per_block`` less the static bytes),
            when any, is a row of the card, and so is the shared memory a block
            takes from the SM with where it comes from (static + dynamic + the 1 KB
            CUDA reserves per block from sm_80 on, rounded up to the allocation unit:
            ``cuda_occupancy.h``'s ``cudaOccMaxBlocksPerSMSmemLimit``,
            :class:`~warp_lab.analysis.SharedAllocation`), the same line as the
            occupancy widget's.
    """
    r = ck.resources
    rows = resource_rows(ck, occupancy)
    if rows is None:
        why = html.escape(ck.missing.get("resources", "ptxas did not run"))
        return f'<div class="wl-missing">resources: {why}</div>'
    body = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
                   for k, v in rows)
    warns = "".join(f'<div class="wl-warn">⚠ {html.escape(w)}</div>'
                    for w in resource_warnings(r, occupancy))
    return f'<details class="wl-resources" open><summary>Resources ({html.escape(r.arch)})' \
           f'</summary><table class="wl-card wl-facts">{body}</table>{warns}</details>'


def error_html(exc) -> str:
    """A compact error box for a warp_lab error (no traceback).

    For a :class:`~warp_lab.errors.KernelCompileError`: ``cell:line:col``, the
    offending source line, a caret under the column, the message and the
    hint. Other :class:`~warp_lab.errors.WarpLabError` show their message.
    """
    from warp_lab.errors import KernelCompileError

    if isinstance(exc, KernelCompileError):
        text = exc.format()
    else:
        text = f"{type(exc).__name__}: {exc}"
    return (f"<style>{STYLE}</style>" + f'<div class="wl-kernel"><div class="wl-error">'
            f"{html.escape(text)}</div></div>")

