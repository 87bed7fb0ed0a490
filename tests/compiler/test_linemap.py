"""Line correspondence: chosen Python statements → the PTX instructions under their ``.loc``.

Statements are found by the ``# marker: ...`` comments in the corpus source
(never by hard-coded line numbers). For each, the PTX is parsed here,
independently of :mod:`warp_lab.compiler.linemap`: the instructions that
follow a ``.loc <file> <line>`` directive belong to that line. Each chosen
statement must own the instructions that only it can produce (its shuffle,
its atomic, its ``vprintf`` call, its float adds), and ``ck.source_map`` must
agree with this parse for that line, in PTX, LLVM IR and SASS.
"""

from __future__ import annotations

import re

import pytest
from corpus_artifacts import compiled

import warp_lab as wl
from warp_lab.examples import get, source_line

_FILE_RE = re.compile(r'^\s*\.file\s+(\d+)\s+"((?:[^"\\]|\\.)*)"')
_LOC_RE = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+")


def ptx_by_line(ptx: str, filename: str) -> dict[int, list[tuple[int, str]]]:
    """Python line → ``(1-based PTX line, instruction text)`` under its ``.loc`` directives."""
    lines = ptx.splitlines()
    ids = {m.group(1) for m in map(_FILE_RE.match, lines) if m and m.group(2) == filename}
    out: dict[int, list[tuple[int, str]]] = {}
    current = None
    for n, text in enumerate(lines, 1):
        loc = _LOC_RE.match(text)
        if loc:
            # line 0 is DWARF's "no source line" (code the compiler made up)
            current = int(loc.group(2)) if loc.group(1) in ids and loc.group(2) != "0" else None
            continue
        s = text.strip()
        if s == "}" or s.startswith((".entry", ".visible", ".func")):
            current = None
            continue
        is_insn = s and not s.startswith(("//", ".", "{", "}", "(", ")")) and not s.endswith(":")
        if current is not None and is_insn:
            out.setdefault(current, []).append((n, s))
    return out


#: (example, marker, [regexes some instruction under the line must match],
#:  regex whose every match in the PTX must sit under this line, or None).
#: LLVM 22 writes loads/stores with bit types (ld.global.b32) and atomics with
#: their memory order (atom.relaxed.gpu.global.cas.b32); float arithmetic may be
#: contracted into fma (nvcc's -fmad=true default).
_F32_LOAD = r"^ld\.global(\.nc)?\.[bf]32"
CASES = [
    ("saxpy", "# marker: saxpy body",
     [_F32_LOAD, r"^st\.global\.[bf]32", r"^(fma|mul)(\.rn)?\.f32"], r"^st\.global"),
    ("stencil_2d", "# marker: stencil", [_F32_LOAD, r"^add(\.rn)?\.f32", r"^mul(\.rn)?\.f32"],
     r"^add(\.rn)?\.f32"),
    ("warp_sum", "# marker: shfl_down", [r"^shfl\.sync\.down\.b32"], r"^shfl\.sync\.down"),
    ("warp_scan_vote", "# marker: shfl_up", [r"^shfl\.sync\.up\.b32"], r"^shfl\.sync\.up"),
    ("histogram", "# marker: shared atomic", [r"^(atom|red)\.[\w.]*shared[\w.]*\.add"],
     r"^(atom|red)\.[\w.]*shared"),
    ("atomics_all", "# marker: compare-and-swap", [r"^atom\.[\w.]*global[\w.]*\.cas\.b32"],
     r"\.cas\."),
    ("hello_printf", "# marker: printf", [r"\bvprintf\b"], None),
    ("matmul_tiled", "# marker: matmul inner product",
     [r"^ld\.shared(\.v\d)?\.[bf]32", r"^(fma|mul|add)(\.rn)?\.f32"], r"^ld\.shared"),
    ("device_funcs", "# marker: func calls func", [r"^(add|fma)(\.rn)?\.f32"], None),
    ("floordiv_mod", "# marker: floor division", [r"^(div|rem)\.s32"], None),
    ("softmax_rows", "# marker: softmax normalise", [r"^div\.(rn|full|approx)\.f32"],
     r"^div\.[a-z.]*f32"),
    ("mandelbrot", "# marker: escape test", [r"^setp\.\w+\.f32"], None),
]


def _marker_line(ex, marker: str) -> int:
    try:
        return source_line(ex.kernel, marker)
    except LookupError:
        # the statement lives in a device function of the same module
        funcs = [v for v in ex.kernel.globals.values() if isinstance(v, wl.Func)]
        hits = [f for f in funcs if marker in f.source.text]
        assert len(hits) == 1, f"{marker!r} not found in {ex.name} or its device functions"
        return source_line(hits[0], marker)


@pytest.mark.parametrize("opt", [0, 3])
@pytest.mark.parametrize("name,marker,present,exclusive", CASES,
                         ids=[c[0] for c in CASES])
def test_statement_owns_its_ptx(name, marker, present, exclusive, opt):
    ex = get(name)
    line = _marker_line(ex, marker)
    ck = compiled(ex, "sm_90", opt)
    by_line = ptx_by_line(ck.ptx, ex.kernel.source.filename)
    mine = [text for _, text in by_line.get(line, [])]
    assert mine, f"no PTX instruction under .loc line {line} ({marker})"
    for pattern in present:
        assert any(re.search(pattern, t) for t in mine), \
            f"line {line}: no instruction matching {pattern!r} in {mine}"
    if exclusive:
        owners = {py for py, insns in by_line.items() for _, t in insns if re.search(exclusive, t)}
        assert owners == {line}, f"{exclusive!r} attributed to lines {sorted(owners)}, not {line}"
    # the compiler's own line map agrees with this parse
    assert sorted(ck.source_map.rows_of("ptx").get(line, ())) == [n for n, _ in by_line[line]]
    assert ck.source_map.key_of_ptx(by_line[line][0][0]) == line
    assert ck.source_map.rows_of("llvm").get(line), "LLVM IR has !dbg locations for the line"
    if opt == 3:
        assert ck.source_map.rows_of("sass_offsets").get(line), "SASS instructions carry the line"
        offsets = ck.source_map.rows_of("sass_offsets")[line]
        assert all(ck.source_map.key_of_sass(o) == line for o in offsets)


def test_loc_lines_follow_the_source_when_it_moves():
    """The same kernel text at another first line moves every .loc by the same amount."""
    import textwrap

    from warp_lab.lang.kernel import Source

    ex = get("saxpy")
    src = ex.kernel.source
    line = source_line(ex.kernel, "# marker: saxpy body")
    text = textwrap.dedent(src.text)
    namespace = dict(ex.kernel.globals)
    filename = "<corpus saxpy moved>"
    shifted = Source(text, filename, first_line=src.first_line + 100)
    # drop the decorator line; the def then sits on the line after shifted.first_line
    code = compile("\n" * shifted.first_line + text.split("\n", 1)[1], filename, "exec")
    exec(code, namespace)  # noqa: S102 - defines the undecorated function at the moved lines
    moved = wl.kernel(namespace["saxpy"], source=shifted)
    ck = wl.compile(moved, arch="sm_90", cache=False)
    # an in-memory file (as a notebook cell) is compiled under a content-derived name
    assert ck.artifact_filename == "<cell of saxpy>" and ck.source_map.cells == {"<cell of saxpy>": filename}
    by_line = ptx_by_line(ck.ptx, ck.artifact_filename)
    assert line + 100 in by_line and line not in by_line
    assert set(ck.source_map.rows_of("ptx")) == set(by_line)
