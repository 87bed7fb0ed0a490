"""A compiled kernel's Python lines as the user names them: which cell, which line, what text.

A line key of ``CompiledKernel.source_map`` is a line of the kernel's file or cell, or a
line of another file or cell whose ``@wl.func`` the kernel calls (the map says which:
:meth:`~warp_lab.compiler.source_map.SourceMap.line`). Views, findings and the debugger
name such a line ``7`` in the kernel's own cell and ``In[3] line 7`` in another
(:func:`line_label`), and quote its text (:func:`source_line_text`) from
:mod:`linecache`, where the magic and ipykernel register their cells.
"""

from __future__ import annotations

__all__ = ["python_location", "cell_label", "source_line_text", "line_label", "file_lines"]


def file_lines(filename: str) -> list[str]:
    """The lines of the file or cell ``filename`` (:mod:`linecache`: the magic registers its
    cells there, ipykernel its own), IPython magic and shell lines blanked so that the
    text parses; ``[]`` when unknown."""
    import linecache

    lines = [ln.rstrip("\r\n") for ln in linecache.getlines(filename)]
    return ["" if ln.lstrip().startswith(("%", "!")) else ln for ln in lines]


def python_location(ck, key: int) -> tuple[str, int]:
    """``(file or cell, line)`` of a line key of ``ck.source_map``: the cell as named in
    this run, the line in its own numbering (:meth:`SourceMap.line
    <warp_lab.compiler.source_map.SourceMap.line>`).

    Raises:
        KeyError: the key names no file of the map."""
    where = ck.source_map.line(key)
    return where.file, where.line


def cell_label(filename: str) -> str:
    """``filename`` as the notebook names it: ``In[N]`` for the file ipykernel compiled an
    ordinary cell under (``/tmp/ipykernel_1/123.py``), anything else unchanged
    (:func:`warp_lab.errors.source_label`)."""
    from warp_lab.errors import source_label

    return source_label(filename)


def _other_file(ck, filename: str | None) -> bool:
    """Whether ``filename`` (a simulator location's, cells named as in this run) is a file
    or cell other than ``ck``'s kernel's: a device function defined elsewhere."""
    return ck.source_map.is_other_file(filename)


def source_line_text(ck, line: int, filename: str | None = None, strip: bool = True) -> str:
    """The text of file line ``line`` of ``ck``'s kernel or of a device function in its file
    or, given ``filename`` (a finding's or debugger stop's ``source_file``) of another file
    or cell, of that one's line (stripped; ``""`` when unknown). Without ``filename``,
    ``line`` is a line map key: one of another file's lines names that line. With
    ``strip=False`` the leading indentation is kept (tabs expanded, trailing space
    stripped), for a table that shows the code's nesting."""
    cut = str.strip if strip else (lambda t: t.expandtabs().rstrip())
    if not line:
        return ""
    if filename is None and not ck.source_map.is_own(line):
        try:
            filename, line = python_location(ck, line)
        except KeyError:
            return ""
    if _other_file(ck, filename):
        lines = file_lines(filename)
        return cut(lines[int(line) - 1]) if 0 < int(line) <= len(lines) else ""
    text = ck.source.line(int(line))
    if not text:
        lines = file_lines(ck.source.filename)
        text = lines[int(line) - 1] if 0 < int(line) <= len(lines) else ""
    return cut(text)


def line_label(ck, line: int, filename: str | None = None) -> str:
    """How a view names a Python line: ``"7"`` in the kernel's own file or cell, ``"In[3]
    line 7"`` (:func:`cell_label`) in another one: a ``@wl.func`` of another cell whose code
    a finding or a debugger stop is in (``filename``: its ``source_file``; without it,
    ``line`` is a line map key, see :func:`python_location`)."""
    if filename is None and not ck.source_map.is_own(line):
        try:
            filename, line = python_location(ck, line)
        except KeyError:
            return str(line)
    if _other_file(ck, filename):
        return f"{cell_label(filename)} line {line}"
    return str(line)
