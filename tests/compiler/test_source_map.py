"""The SourceMap of real compiles: a kernel cell calling a ``@wl.func`` of an earlier cell,
and a CUDA C++ kernel with a ``__shared__`` tile. Every question a view, a finding or the
debugger asks (row -> line, line -> rows, symbol -> array, offset -> element, artifact name
-> this run's cell) is answered from the record the pipeline built."""

from __future__ import annotations

import linecache

import pytest

import warp_lab as wl
from warp_lab.compiler.source_map import SharedArray, SourceLine, SourceMap

HELPER_CELL = '''import warp_lab as wl

@wl.func
def twice(v: float) -> float:
    return v * 2.0
'''

KERNEL_CELL = '''
@wl.kernel
def k_map(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    tile = wl.shared_array((2, 4), wl.float32)
    tile[i // 4 % 2, i % 4] = x[i]
    wl.syncthreads()
    x[i] = twice(tile[(i // 4 + 1) % 2, i % 4])
'''

CUDA = '''
__global__ void tiles(float* out, const float* in) {
    __shared__ float tile[4][8];
    int t = threadIdx.x;
    tile[t / 8][t % 8] = in[t];
    __syncthreads();
    out[t] = tile[(t / 8 + 1) % 4][t % 8];
}
'''


def _cell(name: str, text: str, ns=None) -> dict:
    """Run ``text`` as IPython runs a cell: registered in linecache, compiled under ``name``."""
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    ns = {} if ns is None else ns
    exec(compile(text, name, "exec"), ns)  # noqa: S102 - the test's own cell text
    return ns


def _line_of(text: str, code: str) -> int:
    return next(n for n, ln in enumerate(text.splitlines(), 1) if code in ln)


@pytest.fixture(scope="module")
def two_cells():
    ns = _cell("<cell 21>", HELPER_CELL)
    return wl.compile(_cell("<cell 22>", KERNEL_CELL, ns)["k_map"], cache=False)


def _ptx_row(ck, row: int) -> str:
    return ck.ptx.splitlines()[row - 1].strip()


def test_lines_of_both_cells_and_their_rows(two_cells):
    ck, sm = two_cells, two_cells.source_map
    assert sm.filename == "<cell 22>" and sm.other_files == ("<cell 21>",)
    assert set(sm.cells.values()) == {"<cell 21>", "<cell 22>"}
    assert sm.cell(sm.artifact_filename) == "<cell 22>" and sm.cell("/a/file.py") == "/a/file.py"
    helper = sm.key(SourceLine("<cell 21>", _line_of(HELPER_CELL, "v * 2.0")))
    store = _line_of(KERNEL_CELL, "tile[i // 4 % 2")
    assert helper is not None and not sm.is_own(helper) and sm.is_own(store)
    assert sm.line(helper) == SourceLine("<cell 21>", 5) and sm.line(store) == SourceLine("<cell 22>", 6)
    assert sm.keys[-1] == helper and all(sm.is_own(k) for k in sm.keys[:-1])   # own file first
    assert sm.keys_in("<cell 21>") == [helper] and store in sm.keys_in("<cell 22>")
    assert sm.key(SourceLine("<cell 99>", 5)) is None
    # line -> rows: the helper's multiply is in the kernel's PTX; the store is st.shared
    assert any(_ptx_row(ck, r).startswith(("add", "mul")) for r in sm.rows_for("ptx", helper))
    assert any(_ptx_row(ck, r).startswith("st.shared") for r in sm.rows_for("ptx", store))
    assert sm.rows_for("ptx", 1) == () and store in sm.own_lines("ptx")
    assert helper not in sm.own_lines("ptx")
    # row -> line, in every pane, and back
    for pane in ("llvm", "ptx", "sass", "sass_offsets"):
        back = sm.pane_keys(pane)
        assert back and all(r in sm.rows_for(pane, k) for r, k in back.items())
        assert helper in sm.rows_of(pane)
    for key in sm.keys:
        for row in sm.rows_for("ptx", key):
            assert sm.key_of_ptx(row) == key and sm.line_of_ptx(row) == sm.line(key)
        for offset in sm.rows_for("sass_offsets", key):
            assert sm.key_of_sass(offset) == key
    assert sm.line_of_ptx(1) is None and sm.key_of_ptx(10 ** 6) is None
    with pytest.raises(KeyError):
        sm.line(7 * 1_000_000 + 1)    # a key of no file of this map


def test_shared_array_record_answers_symbol_and_offset(two_cells):
    sm = two_cells.source_map
    (tile,) = sm.arrays
    assert tile == SharedArray(tile.symbol, "tile", _line_of(KERNEL_CELL, "wl.shared_array"),
                               "float32", 4, (2, 4), 0)
    assert tile.symbol in sm.ptx_shared and f"{tile.symbol}[32]" in two_cells.ptx
    assert sm.array(tile.symbol) is tile and sm.array(tile.symbol + "_$_0") is tile
    assert sm.shaped(tile.symbol) is tile and sm.array("nothing") is None
    assert sm.array_lines() == {tile.symbol: ("tile", (5,))}
    assert tile.element(0) == (0, 0) and tile.element(4 * 5) == (1, 1)
    assert tile.element(4 * 7) == (1, 3) and tile.element(4 * 8) is None
    assert tile.element(2) is None and tile.element(-4) is None
    assert SharedArray.from_json(tile.to_json()) == tile


def test_this_run_names_the_cells(two_cells):
    sm = two_cells.source_map
    helper = sm.key(SourceLine("<cell 21>", 5))
    again = sm.for_run("<cell 30>", {a: {"<cell 21>": "<cell 29>", "<cell 22>": "<cell 30>"}[c]
                                     for a, c in sm.cells.items()})
    assert again == sm        # the same compile, only named for another run
    assert again.line(helper) == SourceLine("<cell 29>", 5)
    assert again.line(6) == SourceLine("<cell 30>", 6)
    assert again.key(SourceLine("<cell 29>", 5)) == helper
    ptx = sm.renamed(two_cells.ptx, quoted=True)
    assert '"<cell 21>"' in ptx and '"<cell 22>"' in ptx
    assert not any(f'"{artifact}"' in ptx for artifact in sm.cells)
    assert ptx.count("\n") == two_cells.ptx.count("\n")
    artifact = next(a for a, c in sm.cells.items() if c == "<cell 21>")
    assert sm.renamed(f"at {artifact}:5", label=lambda c: f"[{c}]") == "at [<cell 21>]:5"


def test_the_disk_form_keeps_everything_but_the_run_names(two_cells):
    sm = two_cells.source_map
    back = SourceMap.from_json(sm.to_json(), sm.filename, sm.cells)
    assert back == sm and back.rows.files == sm.rows.files and back.arrays == sm.arrays
    assert [back.line(k) for k in back.keys] == [sm.line(k) for k in sm.keys]


def test_a_cuda_kernel_s_map():
    ck = wl.compile(wl.cuda_kernel(CUDA, "tiles"), cache=False)
    sm = ck.source_map
    assert ck.language == "cuda" and sm.filename == ck.source.filename
    assert sm.other_files == () and all(sm.is_own(k) for k in sm.keys)
    barrier = _line_of(CUDA, "__syncthreads")
    assert [_ptx_row(ck, r) for r in sm.rows_for("ptx", barrier)] == ["bar.sync \t0;"]
    assert sm.line(barrier) == SourceLine(ck.source.filename, barrier)
    store = _line_of(CUDA, "tile[t / 8][t % 8] = in[t]")
    assert any(_ptx_row(ck, r).startswith("st.shared") for r in sm.rows_for("ptx", store))
    (tile,) = sm.arrays
    assert (tile.name, tile.line, tile.dtype, tile.itemsize, tile.shape, tile.offset) == (
        "tile", _line_of(CUDA, "__shared__"), "float32", 4, (4, 8), 0)
    assert tile.symbol in sm.ptx_shared and sm.array(tile.symbol) is tile
    assert sm.array_lines() == {tile.symbol: ("tile", (3,))}
    assert tile.element(4 * 9) == (1, 1) and tile.element(4 * 32) is None
    for offset in sm.rows_for("sass_offsets", barrier):
        assert sm.key_of_sass(offset) == barrier
