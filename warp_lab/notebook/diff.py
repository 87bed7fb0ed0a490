"""``wl.diff(compiled_a, compiled_b)``: what changed between two versions of a kernel.

PTX and SASS are compared line by line with :mod:`difflib`. SASS offsets
(``/*0040*/``) and PTX ``.loc`` lines are dropped before comparing, because
they change whenever anything above them moves and would hide the real
changes; so are PTX ``.file`` lines (and SASS ``//## File`` comments), which
name the cell and change when the same cell is run again. Resources are compared field by field.
"""

from __future__ import annotations

import dataclasses
import difflib
import html
import re

from warp_lab.notebook.views import STYLE, new_root_id

__all__ = ["KernelDiff", "diff", "diff_html", "diff_record"]

_SASS_OFFSET = re.compile(r"/\*[0-9a-fA-F]{4,}\*/\s*")
_RESOURCE_FIELDS = ("registers", "spill_stores", "spill_loads", "stack_frame", "shared",
                    "local", "const", "barriers")


def _normalise(text: str | None, pane: str) -> list[str]:
    if not text:
        return []
    out = []
    for line in text.splitlines():
        if pane == "sass":
            line = _SASS_OFFSET.sub("", line).rstrip()
            if line.lstrip().startswith("//##"):
                continue
        elif pane == "ptx" and line.lstrip().startswith((".loc", ".file")):
            continue  # .file names the cell, which a re-run renumbers
        out.append(line.rstrip())
    return out


@dataclasses.dataclass(frozen=True)
class KernelDiff:
    """The difference between two compiled kernels.

    Attributes:
        a_label, b_label: names shown for the two sides.
        ptx, sass: unified diff lines (``difflib.unified_diff``, 3 lines of context).
        resources: ``(field, a, b)`` for every resource field that differs.
        options: ``(option, a, b)`` for every compile option that differs.
    """

    a_label: str
    b_label: str
    ptx: tuple[str, ...]
    sass: tuple[str, ...]
    resources: tuple[tuple[str, object, object], ...]
    options: tuple[tuple[str, object, object], ...]

    @property
    def unchanged(self) -> bool:
        return not (self.ptx or self.sass or self.resources)

    def __str__(self) -> str:
        parts = [f"diff {self.a_label} -> {self.b_label}"]
        parts += [f"option {k}: {a} -> {b}" for k, a, b in self.options]
        parts += [f"{k}: {a} -> {b}" for k, a, b in self.resources]
        for name, lines in (("PTX", self.ptx), ("SASS", self.sass)):
            parts.append(f"{name}: " + ("unchanged" if not lines else f"{_count(lines)}"))
        return "\n".join(parts)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return diff_html(self)


def _count(lines) -> str:
    add = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++"))
    rem = sum(1 for x in lines if x.startswith("-") and not x.startswith("---"))
    return f"+{add} -{rem} lines"


def diff(a, b, a_label: str | None = None, b_label: str | None = None) -> KernelDiff:
    """Compare two :class:`~warp_lab.compiler.artifact.CompiledKernel` records.

    Args:
        a, b: the old and the new compile.
        a_label, b_label: names for the two sides (default: kernel name,
            arch and ``-O`` level; ``(previous)`` is added when both are equal).

    Returns:
        a :class:`KernelDiff`; it renders as HTML in a notebook and as a
        summary with ``str()``.

    Raises:
        TypeError: ``a`` or ``b`` is not a CompiledKernel (``wl.compile``'s result).
    """
    from warp_lab.compiler.artifact import CompiledKernel

    for side, ck in (("first", a), ("second", b)):
        if not isinstance(ck, CompiledKernel):
            raise TypeError(f"wl.diff compares two compiled kernels (wl.compile(...)); the "
                            f"{side} argument is {type(ck).__name__}")

    def label(ck):
        return f"{ck.name} {ck.options.label()}"

    a_label = a_label or label(a)
    b_label = b_label or label(b)
    if a_label == b_label:
        a_label += " (previous)"
    ptx = tuple(difflib.unified_diff(_normalise(a.ptx, "ptx"), _normalise(b.ptx, "ptx"),
                                     a_label, b_label, lineterm=""))
    sass = tuple(difflib.unified_diff(_normalise(a.sass, "sass"), _normalise(b.sass, "sass"),
                                      a_label, b_label, lineterm=""))
    res = []
    if a.resources is not None and b.resources is not None:
        for f in _RESOURCE_FIELDS:
            va, vb = getattr(a.resources, f), getattr(b.resources, f)
            if va != vb:
                res.append((f, va, vb))
    opts = [(f.name, getattr(a.options, f.name), getattr(b.options, f.name))
            for f in dataclasses.fields(a.options)
            if getattr(a.options, f.name) != getattr(b.options, f.name)]
    return KernelDiff(a_label, b_label, ptx, sass, tuple(res), tuple(opts))


#: a pane whose diff changes more lines than this starts collapsed (its summary gives the
#: counts): a --maxrregcount what-if rewrites most of the SASS, thousands of lines that
#: would push the rest of the notebook a long way down
OPEN_DIFF_MAX_LINES = 200


def _diff_block(title: str, lines) -> str:
    if not lines:
        return (f'<details class="wl-pane"><summary>{html.escape(title)}: unchanged'
                "</summary></details>")
    rows = []
    for line in lines:
        cls = ""
        if line.startswith("+") and not line.startswith("+++"):
            cls = "wl-add"
        elif line.startswith("-") and not line.startswith("---"):
            cls = "wl-del"
        rows.append(f'<div class="wl-line {cls}"><span class="wl-src">{html.escape(line)}'
                    f"</span></div>")
    changed = sum(1 for x in lines if x[:1] in "+-" and x[:3] not in ("+++", "---"))
    big = changed > OPEN_DIFF_MAX_LINES
    note = " (collapsed: click to show)" if big else ""
    return (f'<details class="wl-pane"{"" if big else " open"}><summary>{html.escape(title)}: '
            f'{_count(lines)}{note}</summary><div class="wl-code">{"".join(rows)}</div>'
            "</details>")


def diff_html(d: KernelDiff) -> str:
    """The HTML snippet of a :class:`KernelDiff` (escaped, no script)."""
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(a))}</td>"
                   f"<td>{html.escape(str(b))}</td></tr>" for k, a, b in d.options + d.resources)
    table = (f'<table class="wl-card"><tr><th></th><th>{html.escape(d.a_label)}</th>'
             f"<th>{html.escape(d.b_label)}</th></tr>{rows}</table>") if rows else \
        "<div>resources and options unchanged</div>"
    return (f"<style>{STYLE}</style><div class=\"wl-kernel\" id=\"{new_root_id()}\">"
            f'<div class="wl-title">diff: {html.escape(d.a_label)} → {html.escape(d.b_label)}'
            f'</div>{table}<div class="wl-panes">{_diff_block("PTX", d.ptx)}'
            f'{_diff_block("SASS", d.sass)}</div></div>')


def diff_record(d: KernelDiff) -> dict:
    """The JSON form of a :class:`KernelDiff`, as the bundle's ``view.diff`` carries it
    for the JupyterLab extension; the same facts as :func:`diff_html`.

    Returns:
        ``{"a_label", "b_label", "rows": [[field, a, b], ...] (options, then resources),
        "blocks": [{"title": "PTX", "summary": "+3 -1 lines" or "unchanged", "open":
        bool, "lines": [unified diff lines]}, SASS]}``; a block changing more than
        :data:`OPEN_DIFF_MAX_LINES` lines starts closed.
    """
    def block(title, lines):
        changed = sum(1 for x in lines if x[:1] in "+-" and x[:3] not in ("+++", "---"))
        return {"title": title, "summary": _count(lines) if lines else "unchanged",
                "open": bool(lines) and changed <= OPEN_DIFF_MAX_LINES, "lines": list(lines)}

    return {"a_label": d.a_label, "b_label": d.b_label,
            "rows": [[str(k), str(a), str(b)] for k, a, b in d.options + d.resources],
            "blocks": [block("PTX", d.ptx), block("SASS", d.sass)]}
