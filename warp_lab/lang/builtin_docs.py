"""The docs' builtin table (``docs/language.md``, section "Builtins"), made from the records.

Each :class:`~warp_lab.lang.builtins.Builtin` record (and ``thread_idx`` & co, and the
constants) carries its group, signature and doc line; :func:`builtin_table` prints one
Markdown table per group of :data:`~warp_lab.lang.builtins.GROUPS`, in that order, with the
group's note under it. The committed table sits between :data:`BEGIN` and :data:`END` in
``docs/language.md``; ``tests/test_builtin_table.py`` fails when it differs from what the
records give. After changing a record, regenerate it::

    python -m warp_lab.lang.builtin_docs --update     # rewrite docs/language.md's table
    python -m warp_lab.lang.builtin_docs              # print the table

The model is NVIDIA Warp, whose ``add_builtin(..., doc=..., group=...)`` records feed its
API reference (``warp/_src/builtins.py``, ``docs/`` generation).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from warp_lab.lang import builtins as B

__all__ = ["BEGIN", "END", "COMMAND", "builtin_table", "replace_table", "main"]

#: the command that regenerates the committed table (what a failing check tells you to run)
COMMAND = "python -m warp_lab.lang.builtin_docs --update"
BEGIN = ("<!-- the builtin table: generated from the records of warp_lab/lang/builtins.py by "
         f"`{COMMAND}`; edit the records, not this table -->")
END = "<!-- end of the generated builtin table -->"
#: the file the table lives in, for a checkout (``--update`` writes it)
DOC = Path(__file__).resolve().parents[2] / "docs" / "language.md"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _rows(group: str) -> list[tuple[str, str]]:
    rows = [(f"`wl.{b.name}{b.signature}`", b.doc) for b in B.BUILTINS.values()
            if b.group == group]
    if group == B.INDEXING:
        rows += [(f"`wl.{d.name}.x/.y/.z`", d.doc) for d in B.DIM3S.values()]
    rows += [(f"`wl.{name}`", doc) for name, (g, doc) in B.CONSTANTS.items() if g == group]
    return rows


def builtin_table() -> str:
    """The Markdown text between :data:`BEGIN` and :data:`END`: per group a ``###`` heading,
    a table ``| builtin | what it does |`` of the group's records in declaration order, and
    the group's note."""
    parts = []
    for title, note in B.GROUPS.values():
        lines = [f"### {title}", "", "| builtin | what it does |", "|---|---|"]
        lines += [f"| {_cell(a)} | {_cell(b)} |" for a, b in _rows(title)]
        if note:
            lines += ["", note]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def replace_table(text: str) -> str:
    """``text`` (a ``docs/language.md``) with its generated table replaced by the records'.

    Raises:
        ValueError: ``text`` lacks the :data:`BEGIN`/:data:`END` markers, or has them out of
            order.
    """
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"no generated builtin table (the lines {BEGIN!r} ... {END!r})")
    return text[:start] + BEGIN + "\n\n" + builtin_table() + "\n\n" + text[end:]


def main(argv=None) -> int:
    """``python -m warp_lab.lang.builtin_docs [--update] [--doc PATH]``: print the table, or
    rewrite it in ``PATH`` (default: this checkout's ``docs/language.md``). Returns 0."""
    ap = argparse.ArgumentParser(prog="python -m warp_lab.lang.builtin_docs",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true",
                    help="rewrite the table in --doc instead of printing it")
    ap.add_argument("--doc", type=Path, default=DOC, help="the Markdown file (default: %(default)s)")
    args = ap.parse_args(argv)
    if not args.update:
        print(builtin_table())
        return 0
    old = args.doc.read_text(encoding="utf-8")
    new = replace_table(old)
    if new != old:
        args.doc.write_text(new, encoding="utf-8")
        print(f"{args.doc}: builtin table updated")
    else:
        print(f"{args.doc}: builtin table already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
