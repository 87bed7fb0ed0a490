"""The notebook debugger's view of shared memory: DebugSession.shared and the panel's section.

Every kernel is compiled by the real compiler and run by the simulator; the values are
checked against a numpy model of what the kernel wrote up to the stop.
"""

import html
import re

import numpy as np

from warp_lab.sim.machine import FILL
import pytest

import warp_lab as wl
from warp_lab import sim
from warp_lab.errors import SimulatorError
from warp_lab.examples.memory import T_ROWS, T_TILE, transpose_padded
from warp_lab.notebook.debugger import DebugSession

from nb_htmlparse import parse_view  # noqa: F401  (keeps the helper importable in this folder)


def _line(kernel, marker: str) -> int:
    """The file line of ``kernel``'s source line that contains ``marker``."""
    lines = kernel.source.text.splitlines()
    k = next(i for i, text in enumerate(lines) if marker in text)
    return kernel.source.first_line + k


def _stop_at(dbg, kernel, marker: str, block=None):
    dbg.add_breakpoint(line=_line(kernel, marker), block=block)
    stop = dbg.cont()
    assert stop, "the launch ended before the breakpoint"
    return stop


def _transpose_session(h=64, w=96):
    src = (np.arange(h * w, dtype=np.float32) * 0.5).reshape(h, w)
    dst = np.zeros((w, h), np.float32)
    dbg = wl.debug(transpose_padded, inputs=[src, dst], grid=(w // T_TILE, h // T_TILE),
                   block=(T_TILE, T_ROWS))
    return dbg, src


_FILL_F32 = np.uint32(FILL).view(np.float32)


def _tile_model(src, bx, by):
    """``tile`` after the load loop of transpose_padded in block (bx, by): the block's
    32x32 tile of ``src``, the padding column 32 never written (the simulator's fresh-memory
    pattern, ``sim.machine.FILL``: a NaN as float32)."""
    tile = np.full((T_TILE, T_TILE + 1), _FILL_F32, np.float32)
    tile[:, :T_TILE] = src[by * T_TILE:(by + 1) * T_TILE, bx * T_TILE:(bx + 1) * T_TILE]
    return tile


def test_a_2d_float32_tile_equals_the_block_of_the_input():
    dbg, src = _transpose_session()
    stop = _stop_at(dbg, transpose_padded, "wl.syncthreads()")
    assert stop.block == (0, 0, 0)
    tile = dbg.shared("tile")
    assert tile.dtype == np.float32 and tile.shape == (T_TILE, T_TILE + 1)
    np.testing.assert_array_equal(tile, _tile_model(src, 0, 0))
    # a copy: changing it changes nothing in the simulator
    tile[:] = -1
    np.testing.assert_array_equal(dbg.shared("tile"), _tile_model(src, 0, 0))


def test_another_block_after_continuing_and_a_block_not_running():
    dbg, src = _transpose_session()
    bp = _line(transpose_padded, "wl.syncthreads()")
    dbg.add_breakpoint(line=bp, block=(2, 1, 0))
    stop = dbg.cont()
    assert stop.block == (2, 1, 0)
    np.testing.assert_array_equal(dbg.shared("tile"), _tile_model(src, 2, 1))
    np.testing.assert_array_equal(dbg.shared("tile", block=(2, 1)), _tile_model(src, 2, 1))
    with pytest.raises(SimulatorError) as err:
        dbg.shared("tile", block=(0, 0, 0))   # finished long ago: its shared memory is gone
    msg = str(err.value)
    assert "block (0, 0, 0) is not running now" in msg and "holds block (2, 1, 0)" in msg
    with pytest.raises(SimulatorError, match=r"block \(3, 0, 0\) is outside the launch"):
        dbg.shared("tile", block=3)                        # the grid is 3 x 2 blocks
    dbg.run_to_end()
    with pytest.raises(SimulatorError, match="the launch has finished"):
        dbg.shared("tile")


def test_a_block_other_than_the_stop_s_in_a_batch_of_several():
    """A simulator debugger that runs several blocks together (sim.Debugger's
    batch_blocks) holds them all: shared(block=...) reads another one than the stop's."""
    base, src = _transpose_session()
    several = sim.Debugger(base.debugger.module, *base.debugger._args, batch_blocks=3)
    dbg = DebugSession(base.compiled, several, grid=base.grid, block_shape=base.block_shape)
    stop = _stop_at(dbg, transpose_padded, "wl.syncthreads()")
    assert stop.block == (0, 0, 0)
    for bx in range(3):
        np.testing.assert_array_equal(dbg.shared("tile", block=(bx, 0, 0)),
                                      _tile_model(src, bx, 0))
    with pytest.raises(SimulatorError, match=r"holds blocks \(0, 0, 0\), \(1, 0, 0\), "
                                             r"\(2, 0, 0\)"):
        dbg.shared("tile", block=(0, 1, 0))


@wl.func
def _flip_half(v: wl.float32, t: wl.int32) -> wl.float32:
    hb = wl.shared_array(64, wl.float16)
    hb[t] = wl.float16(v)
    wl.syncthreads()
    return wl.float32(hb[63 - t])  # marker: helper read


@wl.kernel
def _typed_arrays(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    vv = wl.shared_array(16, wl.vec4)
    dyn = wl.dynamic_shared_array(wl.int32, offset=32)
    t = wl.thread_idx.x
    vv[t % 16] = wl.vec4(x[wl.tid()], 1.5, -2.0, wl.float32(t))
    dyn[t] = t * 3 + wl.block_idx.x
    wl.syncthreads()
    out[wl.tid()] = _flip_half(x[wl.tid()], t) + vv[(t + 1) % 16][0] \
        + wl.float32(dyn[63 - t])  # marker: kernel read


def _typed_session(shared_mem=64 * 4 + 32):
    x = np.linspace(-3, 3, 128, dtype=np.float32)
    dbg = wl.debug(_typed_arrays, dim=128, inputs=[x, np.zeros(128, np.float32)],
                   block_dim=64, shared_mem=shared_mem)
    return dbg, x


def test_vec4_float16_dynamic_and_helper_arrays_equal_a_numpy_model():
    dbg, x = _typed_session()
    _stop_at(dbg, _flip_half, "helper read", block=1)
    block_x = x[64:]
    t = np.arange(64)
    vv = dbg.shared("vv")
    assert vv.dtype == np.float32 and vv.shape == (16, 4)   # vec4: a trailing axis
    model = np.zeros((16, 4), np.float32)
    for lane in t:  # lanes t and t + 16, ... write vv[t % 16]: the last one wins
        model[lane % 16] = (block_x[lane], 1.5, -2.0, lane)
    np.testing.assert_array_equal(vv, model)
    # the dynamic array: 1-D, int32, sized by shared_mem less its 32-byte offset
    dyn = dbg.shared("dyn")
    assert dyn.dtype == np.int32 and dyn.shape == (64,)
    np.testing.assert_array_equal(dyn, t * 3 + 1)
    # the @wl.func helper's own array, float16
    hb = dbg.shared("hb")
    assert hb.dtype == np.float16 and hb.shape == (64,)
    np.testing.assert_array_equal(hb, block_x.astype(np.float16))


def test_a_dynamic_array_follows_the_launch_s_shared_mem():
    dbg, _ = _typed_session(shared_mem=32 + 100 * 4 + 2)   # 100 int32 and 2 bytes left over
    _stop_at(dbg, _typed_arrays, "kernel read")
    dyn = dbg.shared("dyn")
    assert dyn.shape == (100,)
    np.testing.assert_array_equal(dyn[:64], np.arange(64) * 3)
    np.testing.assert_array_equal(dyn[64:], np.int32(FILL))   # not written: the fill pattern


def test_unknown_names_list_the_kernel_s_shared_arrays():
    dbg, _ = _typed_session()
    with pytest.raises(SimulatorError) as err:
        dbg.shared("buf")
    msg = str(err.value)
    assert "kernel _typed_arrays has no shared array 'buf'" in msg
    for name in ("vv", "dyn", "hb"):
        assert re.search(rf"\b{name} \(line \d+\)", msg), msg
    with pytest.raises(SimulatorError, match="a str"):
        dbg.shared(3)


def test_an_array_without_shared_memory_says_the_kernel_has_none():
    from warp_lab.examples.basic import vector_add

    a = np.zeros(8, np.float32)
    dbg = wl.debug(vector_add, dim=8, inputs=[a, a, a.copy()])
    with pytest.raises(SimulatorError, match="declares no wl.shared_array"):
        dbg.shared("buf")
    assert dbg.shared_html() == ""


BUF_SRC = '''
@wl.kernel
def tree_sum(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    buf = wl.shared_array(256, wl.float32)
    t = wl.thread_idx.x
    if t < 250:
        buf[t] = x[wl.tid()]
    wl.syncthreads()
    s = 128
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        wl.syncthreads()  # stop here
        s //= 2
    if t == 0:
        out[wl.block_idx.x] = buf[0]
'''


def _tree_session(tmp_path):
    path = tmp_path / "tree_sum.py"
    path.write_text("import warp_lab as wl\n" + BUF_SRC)
    ns = {}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    kernel = ns["tree_sum"]
    x = (np.arange(512) % 7).astype(np.float32)
    return wl.debug(kernel, dim=512, inputs=[x, np.zeros(2, np.float32)], block_dim=256), \
        kernel, x


def _cells(section: str) -> list[tuple[str, str]]:
    """``(style, text)`` of every value cell of an HTML section."""
    return [(style, html.unescape(text)) for style, text in
            re.findall(r"<td style='([^']*)'[^>]*>([^<]*)</td>", section)]


def test_the_panel_section_shows_a_256_float_buffer_step_by_step(tmp_path):
    dbg, kernel, x = _tree_session(tmp_path)
    _stop_at(dbg, kernel, "stop here")
    model = np.where(np.arange(256) < 250, x[:256], _FILL_F32).astype(np.float32)
    model[:128] += model[128:]
    np.testing.assert_array_equal(dbg.shared("buf"), model)
    section = dbg.shared_html()
    assert "shared memory of block (0, 0, 0)" in section and "buf: float32[256]" in section
    assert section in dbg._repr_html_()
    cells = _cells(section)
    assert len(cells) == 256   # 16 rows of 16: in full, no "…"
    assert [text for _, text in cells] == [f"{v:.6g}" for v in model]
    # elements 250..255 were never written (initcheck runs for a shared-memory kernel)
    grey = [k for k, (style, _) in enumerate(cells) if "color:#aaa" in style]
    assert grey == list(range(250, 256))
    # changed since the launch's start (the fill pattern then): every element whose bits
    # differ from it (x + the fill's NaN keeps the NaN's bits: elements 122..127 unchanged)
    changed = [k for k, (style, _) in enumerate(cells) if "background" in style]
    assert changed == list(np.flatnonzero(model.view(np.uint32) != FILL))
    # the next stop: elements 0..63 were written, those that got a non-zero added changed
    dbg.cont()
    before = model.copy()
    model[:64] += model[64:128]
    np.testing.assert_array_equal(dbg.shared("buf"), model)
    cells = _cells(dbg.shared_html())
    changed = [k for k, (style, _) in enumerate(cells) if "background" in style]
    assert changed == list(np.flatnonzero(before.view(np.uint32) != model.view(np.uint32)))
    assert changed
    assert [text for _, text in cells] == [f"{v:.6g}" for v in model]


def test_a_large_2d_array_shows_its_first_rows_and_columns():
    dbg, src = _transpose_session()
    _stop_at(dbg, transpose_padded, "wl.syncthreads()")
    section = dbg.shared_html()
    assert "tile: float32[32, 33]" in section
    rows = re.findall(r"<tr>(.*?)</tr>", section)
    assert len(rows) == 1 + 16    # a header of column indices, the first 16 of 32 rows
    assert "… 16 more rows" in section
    first = _cells(rows[1])
    assert [t for _, t in first] == [f"{v:.6g}" for v in src[0, :16]] + ["…"]


def test_the_panel_redraws_the_shared_section(tmp_path):
    dbg, kernel, _ = _tree_session(tmp_path)
    panel = dbg.panel()
    assert "shared memory of block (0, 0, 0)" in panel.shared.value
    dbg.add_breakpoint(line=_line(kernel, "stop here"), block=1)
    panel.buttons["continue"].click()
    assert "shared memory of block (1, 0, 0)" in panel.shared.value
    assert panel.shared.value == dbg.shared_html()


@wl.kernel
def _runtime_offset(x: wl.array(dtype=wl.float32)):
    head = wl.dynamic_shared_array(wl.int32)
    tail = wl.dynamic_shared_array(wl.float32, offset=wl.block_dim.x * 4)
    t = wl.thread_idx.x
    head[t] = t
    tail[t] = x[wl.tid()]
    wl.syncthreads()
    x[wl.tid()] = tail[31 - t] + wl.float32(head[0])  # marker: read back


def test_a_dynamic_array_at_a_run_time_offset_says_why_it_cannot_be_shown():
    x = np.arange(32, dtype=np.float32)
    dbg = wl.debug(_runtime_offset, dim=32, inputs=[x], block_dim=32, shared_mem=2 * 32 * 4)
    _stop_at(dbg, _runtime_offset, "read back")
    np.testing.assert_array_equal(dbg.shared("head"), np.r_[np.arange(32), x.view(np.int32)])
    with pytest.raises(SimulatorError, match="'tail'.*offset is computed at run time"):
        dbg.shared("tail")
    section = dbg.shared_html()
    assert "head: int32[64] (dynamic)" in section and "offset is computed at run time" in section
