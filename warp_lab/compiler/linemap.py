"""Build a SourceMap's rows (:class:`~warp_lab.compiler.source_map.LineMap`) from debug
locations.

Three independent sources, each read from the text the user sees:

* LLVM IR: ``!dbg !N`` on an instruction, ``!N = !DILocation(line: L, ...,
  scope: !S)`` and the scope chain up to a ``DISubprogram``/``DIFile``
  (so code inlined from another file is not attributed to the kernel's lines);
* PTX: ``.file K "name"`` and ``.loc K L C`` directives (PTX ISA, "Debugging
  Directives"); every instruction after a ``.loc`` belongs to line L;
* SASS: nvdisasm ``-g`` comments ``//## File "name", line L`` before the
  instructions ``/*0040*/ ...`` they describe.

Views, the simulator report and the register heat column read the result;
nobody re-derives it.

Lines of the kernel's own file are keyed by their line number; lines of the
other files code was inlined from (a ``@wl.func`` of another notebook cell or
module) by the line keys :func:`~warp_lab.compiler.source_map.file_keys` gives
(:meth:`~warp_lab.compiler.source_map.SourceMap.line` undoes them).
"""

from __future__ import annotations

import os
import re

from warp_lab.compiler.line_zero import LOC_RE, is_instruction
from warp_lab.compiler.source_map import LineMap, file_keys

__all__ = ["build_line_map", "llvm_lines", "ptx_lines", "sass_lines", "is_sass_file_comment",
           "is_sass_instruction"]

_DBG_RE = re.compile(r"!dbg !(\d+)")
_META_RE = re.compile(r"^!(\d+) = (?:distinct )?!(\w+)\((.*)\)\s*$")
_FIELD_RE = re.compile(r"(\w+): (\"(?:[^\"\\]|\\.)*\"|[^,]+)")


def _metadata(lines: list[str]) -> dict[int, tuple[str, str]]:
    """``{N: (kind, operands text)}`` of the ``!N = !Kind(...)`` lines (operands parsed by
    :func:`_fields` when a node is read: most of a module's nodes are locations no
    instruction of the wanted files names)."""
    nodes = {}
    for line in lines:
        if line[:1] == "!":
            m = _META_RE.match(line)
            if m:
                nodes[int(m.group(1))] = (m.group(2), m.group(3))
    return nodes


def _fields(node: tuple[str, str], parsed: dict) -> dict[str, str]:
    """The operands of a node of :func:`_metadata` by name (kept in ``parsed``)."""
    got = parsed.get(node[1])
    if got is None:
        got = parsed[node[1]] = dict(_FIELD_RE.findall(node[1]))
    return got


def _file_of(nodes, ref: str, parsed: dict, depth: int = 0) -> str | None:
    if depth > 32 or not ref.startswith("!"):
        return None
    node = nodes.get(int(ref[1:]))
    if node is None:
        return None
    kind, fields = node[0], _fields(node, parsed)
    if kind == "DIFile":  # PTX's .file joins directory and filename the same way
        name = fields.get("filename", "").strip('"')
        directory = fields.get("directory", "").strip('"')
        return os.path.join(directory, name) if directory and not os.path.isabs(name) else name
    for key in ("file", "scope"):
        if key in fields:
            found = _file_of(nodes, fields[key], parsed, depth + 1)
            if found is not None:
                return found
    return None


def _offsets(filename) -> dict[str, int]:
    """``{filename: 0}`` for one name, a file name -> key offset mapping as it is."""
    return {filename: 0} if isinstance(filename, str) else dict(filename)


def llvm_lines(llvm_ir: str, filename) -> dict[int, list[int]]:
    """Python line → 1-based lines of ``llvm_ir`` carrying a location in ``filename`` (a
    name, or file name -> offset added to its line numbers)."""
    offsets = _offsets(filename)
    lines = llvm_ir.splitlines()
    nodes = _metadata(lines)
    parsed: dict = {}
    out: dict[int, list[int]] = {}
    files: dict[str, str | None] = {}
    keys: dict[int, int | None] = {}  # !N -> its key, None where it adds no line
    for n, line in enumerate(lines, 1):
        if "!dbg !" not in line or line[:1] == "!":
            continue
        m = _DBG_RE.search(line)
        if not m:
            continue
        ref = int(m.group(1))
        if ref in keys:
            key = keys[ref]
        else:
            key = keys[ref] = _location_key(nodes, ref, offsets, files, parsed)
        if key is not None:
            out.setdefault(key, []).append(n)
    return out


def _location_key(nodes, ref: int, offsets, files: dict, parsed: dict) -> int | None:
    """The line key of ``!DILocation`` node ``ref``, None for another node or a line of
    another file (or line 0); ``files`` keeps each scope's file."""
    node = nodes.get(ref)
    if node is None or node[0] != "DILocation":
        return None
    fields = _fields(node, parsed)
    scope = fields.get("scope", "")
    if scope not in files:
        files[scope] = _file_of(nodes, scope, parsed)
    src_line = int(fields.get("line", "0"))
    if files[scope] in offsets and src_line > 0:
        return offsets[files[scope]] + src_line
    return None


_PTX_FILE_RE = re.compile(r'^\s*\.file\s+(\d+)\s+"((?:[^"\\]|\\.)*)"')


def ptx_lines(ptx: str, filename) -> dict[int, list[int]]:
    """Python line → 1-based PTX lines of the instructions its ``.loc`` covers (``filename``
    as for :func:`llvm_lines`)."""
    offsets = _offsets(filename)
    lines = ptx.splitlines()
    file_ids = {m.group(1): offsets[m.group(2)]
                for m in map(_PTX_FILE_RE.match, [ln for ln in lines if ".file" in ln])
                if m and m.group(2) in offsets}
    out: dict[int, list[int]] = {}
    current = None
    for n, line in enumerate(lines, 1):
        if ".loc" in line:
            m = LOC_RE.match(line)
            if m:
                file_id, line_no, _ = m.groups()
                line_no = int(line_no)
                current = file_ids[file_id] + line_no \
                    if file_id in file_ids and line_no else None
                continue
        if not current:  # (a "}" would set it None)
            continue
        stripped = line.strip()
        if stripped == "}":  # the end of a function
            current = None
        elif is_instruction(stripped):
            out.setdefault(current, []).append(n)
    return out


_SASS_FILE_RE = re.compile(r'//## File "((?:[^"\\]|\\.)*)", line (\d+)')
_SASS_INSN_RE = re.compile(r"/\*([0-9a-f]{4,})\*/")


def is_sass_file_comment(line: str) -> bool:
    """Whether ``line`` of nvdisasm's output is one of its ``//## File "name", line L``
    comments (``--print-line-info``; ``... inlined at ...`` too): the line map's source,
    no instruction. Views hide them (the colours say the same) and count only
    instructions."""
    return line.lstrip().startswith("//## File ") and _SASS_FILE_RE.search(line) is not None


def is_sass_instruction(line: str) -> bool:
    """Whether ``line`` of nvdisasm's output prints an instruction (its ``/*offset*/``;
    labels, ``//`` comments and section headers are not instructions)."""
    return not line.lstrip().startswith("//") and _SASS_INSN_RE.search(line) is not None


def sass_lines(sass: str, filename) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    """Python line → SASS instruction offsets, and Python line → SASS text lines (1-based)
    (``filename`` as for :func:`llvm_lines`)."""
    keys = _offsets(filename)
    offsets: dict[int, list[int]] = {}
    text_lines: dict[int, list[int]] = {}
    current = None
    for n, line in enumerate(sass.splitlines(), 1):
        m = _SASS_FILE_RE.search(line)
        if m:
            line_no = int(m.group(2))
            current = keys[m.group(1)] + line_no if m.group(1) in keys and line_no else None
            continue
        if line.lstrip().startswith(("//---", ".section")):
            current = None
        m = _SASS_INSN_RE.search(line)
        if m and current:
            offsets.setdefault(current, []).append(int(m.group(1), 16))
            text_lines.setdefault(current, []).append(n)
    return offsets, text_lines


def build_line_map(llvm_ir_optimized: str, ptx: str, sass: str | None, filename: str,
                   others=()) -> LineMap:
    """The :class:`LineMap` of one compile.

    Args:
        llvm_ir_optimized: the optimised module text.
        ptx: the PTX text.
        sass: nvdisasm ``-g`` output, or None when there is none.
        filename: the kernel's file or cell name (the ``DIFile``/``.file`` name).
        others: names of the other files code came from (device functions of
            other cells or modules), in the order of :attr:`LineMap.files`;
            their lines get the line keys of :mod:`~warp_lab.compiler.source_map`.
    """
    others = tuple(others)
    names = file_keys(filename, others)
    offsets, text_lines = sass_lines(sass, names) if sass else ({}, {})
    return LineMap(llvm=llvm_lines(llvm_ir_optimized, names),
                   ptx=ptx_lines(ptx, names), sass=offsets, sass_lines=text_lines,
                   files=others)
