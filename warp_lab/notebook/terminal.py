"""The kernel view as text, for a terminal IPython (no Jupyter front end to draw panes).

A ``%%warp_kernel`` cell in ``ipython`` prints what the notebook shows, one pane after
the other, from the same view description the bundle carries
(:func:`~warp_lab.notebook.view_spec.view_description`): the panes ``--show``/``--hide``
ask for, in their order, each under a header naming where its text is
(``_.compiled.ptx``), every line with the Python line it was compiled from in a margin
(the Python pane: its cell line), then the resource card's rows and the ``--diff
previous`` table. Highlighted with Pygments' ``TerminalFormatter`` when the terminal
takes colour (:func:`terminal_colour`), plain text otherwise.
"""

from __future__ import annotations

import os
import sys

from warp_lab.compiler.linemap import is_sass_file_comment
from warp_lab.lang.kernel import python_lines
from warp_lab.notebook.bundle import KernelView, kernel_text
from warp_lab.notebook.lexers import get_lexer
from warp_lab.notebook.panes import pane_spec
from warp_lab.notebook.view_spec import DEFAULT_SHOW, view_description
from warp_lab.notebook.views import compact_sass, pane_count, pane_line_maps, pane_text, \
    python_pane_lines, python_row_numbers

__all__ = ["kernel_terminal_text", "terminal_colour", "TerminalKernelView"]

_BOLD, _DIM, _RED, _GREEN, _YELLOW, _RESET = (
    "\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[39;49;00m")


def terminal_colour(shell=None, stream=None) -> bool:
    """Whether the view is printed in colour: not when IPython's colour setting is
    ``NoColor`` (``%colors nocolor``, ``--colors=nocolor``), not when the ``NO_COLOR``
    environment variable is set (no-color.org), otherwise when ``stream`` (default
    ``sys.stdout``) is a terminal.

    Args:
        shell: the IPython shell, or None.
        stream: the stream the view goes to, or None for ``sys.stdout``.
    """
    if str(getattr(shell, "colors", "")).lower() == "nocolor" or os.environ.get("NO_COLOR"):
        return False
    stream = sys.stdout if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or stream-less stdout
        return False


def _highlighted(text: str, language: str, colour: bool) -> list[str]:
    """``text``'s lines, each with the ANSI colours of its tokens when ``colour``."""
    lines = python_lines(text)
    if not colour or not text:
        return lines
    from pygments import highlight
    from pygments.formatters import TerminalFormatter

    out = python_lines(highlight(text, get_lexer(language), TerminalFormatter()))
    # TerminalFormatter colours each line on its own; a count that differs (a lexer that
    # ate a line) falls back to the plain text rather than shift the margin
    return out[:len(lines)] if len(out) >= len(lines) else lines


def _pane_rows(ck, key: str, colour: bool) -> tuple[list[str], list[str], str]:
    """(margin labels, coloured lines, what the header counts) of pane ``key``."""
    spec = pane_spec(key)
    if spec.attr is None:  # the source pane: its cell's line numbers
        rows = python_pane_lines(ck)
        shown = python_row_numbers(ck, rows)
        lines = _highlighted("\n".join(t for _, t in rows), spec.language, colour)
        margin = ["⋮" if n is None and not t else "" if n is None else str(n)
                  for n, (_, t) in zip(shown, rows)]
        count = sum(n is not None for n in shown)
        return margin, lines, f"{count:,} line{'' if count == 1 else 's'}"
    text = pane_text(ck, spec.attr) or ""
    shown_text = compact_sass(text) if key == "sass" else text
    lines = _highlighted(shown_text, spec.language, colour)
    raw = python_lines(text)
    py_of = pane_line_maps(ck).get(key, {})
    keep = [k for k in range(len(raw)) if not (key == "sass" and is_sass_file_comment(raw[k]))]
    # the margin: the Python line (in its own cell) each row was compiled from
    margin = []
    for k in keep:
        py = py_of.get(k + 1)
        margin.append("" if py is None else str(ck.source_map.line(py).line))
    return margin, [lines[k] for k in keep], pane_count(key, text)


def kernel_terminal_text(ck, *, show=DEFAULT_SHOW, occupancy=None, diff=None,
                         colour: bool = False) -> str:
    """The kernel view as terminal text.

    Args:
        ck: a :class:`~warp_lab.compiler.artifact.CompiledKernel`.
        show: the ``--show`` names left after ``--hide`` (see
            :func:`~warp_lab.notebook.view_spec.view_description`).
        occupancy: the occupancy record the resource card shows, or None.
        diff: ``--diff previous``: a :class:`~warp_lab.notebook.diff.KernelDiff`, the
            reason there is none, or None.
        colour: ANSI colours (Pygments' ``TerminalFormatter`` for the code, bold
            headers, green/red diff lines); False gives plain text.

    Returns:
        the text, lines separated by ``\\n``: a title line, then per pane a header
        (title, count, the expression holding the text) and its lines, each after a
        margin with the Python line it comes from; the resource rows; the diff.
    """
    view = view_description(ck, show=show, occupancy=occupancy, diff=diff)

    def bold(s):
        return f"{_BOLD}{s}{_RESET}" if colour else s

    def dim(s):
        return f"{_DIM}{s}{_RESET}" if colour else s

    out = [bold(kernel_text(ck, occupancy))]
    for pane in view["panes"]:
        spec = pane_spec(pane["key"])
        if not pane["open"] and pane["variant_of"]:   # the -O0 IR: say where it is
            out.append(dim(f"── {pane['title']}: _.compiled.{spec.attr}"))
            continue
        where = f"_.compiled.{spec.attr}" if spec.attr else "_.compiled.source.text"
        if pane["absent"] is not None or (spec.attr and pane_text(ck, spec.attr) is None):
            why = pane["absent"] or ck.missing.get(spec.attr, "not available")
            out.append(bold(f"── {pane['title']} ──") + f" not available: {why}")
            continue
        margin, lines, count = _pane_rows(ck, pane["key"], colour)
        out.append(bold(f"── {pane['title']} ── {count} ── {where} ──"))
        width = max([len(m) for m in margin] + [1])
        out += [f"{dim(m.rjust(width))} │ {line}" for m, line in zip(margin, lines)]
    resources = view["resources"]
    if resources is not None:
        if "missing" in resources:
            out.append(bold("── Resources ──") + f" {resources['missing']}")
        else:
            out.append(bold(f"── Resources ({resources['arch']}) ──"))
            width = max(len(label) for label, _ in resources["rows"])
            out += [f"  {label.ljust(width)}  {value}" for label, value in resources["rows"]]
            out += [(f"{_YELLOW}⚠ {w}{_RESET}" if colour else f"⚠ {w}")
                    for w in resources["warnings"]]
    record = view["diff"]
    if record is not None:
        if "missing" in record:
            out.append(f"--diff previous: {record['missing']}")
        else:
            out.append(bold(f"── diff: {record['a_label']} → {record['b_label']} ──"))
            if not record["rows"]:
                out.append("  resources and options unchanged")
            width = max([len(f) for f, _, _ in record["rows"]] + [1])
            out += [f"  {f.ljust(width)}  {a} → {b}" for f, a, b in record["rows"]]
            for block in record["blocks"]:
                out.append(bold(f"── {block['title']}: {block['summary']} ──"))
                for line in block["lines"]:
                    if colour and line[:1] == "+" and not line.startswith("+++"):
                        line = f"{_GREEN}{line}{_RESET}"
                    elif colour and line[:1] == "-" and not line.startswith("---"):
                        line = f"{_RED}{line}{_RESET}"
                    out.append(line)
    return "\n".join(out)


class TerminalKernelView(KernelView):
    """A :class:`~warp_lab.notebook.bundle.KernelView` whose ``text/plain`` is the whole
    view (:func:`kernel_terminal_text`): what a terminal IPython, which prints only
    ``text/plain``, shows for a ``%%warp_kernel`` cell. Its other MIME types are the
    notebook's, so ``display(view)`` in a notebook later still draws the panes.

    Args:
        ck: the compiled kernel.
        colour: print with ANSI colours (:func:`terminal_colour`).
        **view_options: as for :class:`~warp_lab.notebook.bundle.KernelView`.
    """

    def __init__(self, ck, *, colour: bool = False, **view_options):
        super().__init__(ck, **view_options)
        self.colour = colour

    def terminal_text(self) -> str:
        """The view as :func:`kernel_terminal_text` prints it."""
        opts = self.view_options
        return kernel_terminal_text(self.compiled, show=opts.get("show", DEFAULT_SHOW),
                                    occupancy=opts.get("occupancy"), diff=opts.get("diff"),
                                    colour=self.colour)

    def _repr_mimebundle_(self, include=None, exclude=None):
        data = super()._repr_mimebundle_(include, exclude)
        if "text/plain" in data:
            data["text/plain"] = self.terminal_text()
        return data
