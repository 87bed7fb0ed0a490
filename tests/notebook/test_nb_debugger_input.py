"""The notebook debugger refuses a block or thread outside the launch with a clear error."""

import linecache
import re

import numpy as np
import pytest

import warp_lab as wl

SAXPY = ("def saxpy(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), a: float):\n"
         "    i = wl.tid()\n    y[i] = a * x[i] + y[i]\n")


def _kernel(text: str, name: str):
    """Define the last kernel of ``text`` as a cell ``name`` (registered in linecache)."""
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    ns = {"wl": wl}
    exec(compile(text, name, "exec"), ns)  # noqa: S102 - the test's own source
    return [v for v in ns.values() if isinstance(v, wl.Kernel)][-1]


@pytest.fixture()
def session():
    from warp_lab.notebook.debugger import debug

    k = _kernel("import warp_lab as wl\n@wl.kernel\n" + SAXPY, "<rb dbg>")
    x = np.arange(64, dtype=np.float32)
    return debug(k, dim=64, inputs=[x, np.zeros(64, np.float32), 2.0], block_dim=32)


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(thread="x"), "thread must be an int or a tuple of up to 3 ints"),
    (dict(thread=(1.5,)), "thread must be"),
    (dict(block=(5, 0, 0)), "block (5, 0, 0) is outside the launch: block indices run "
                            "(0, 0, 0)..(1, 0, 0)"),
    (dict(block=(0, 1)), "outside the launch"),
    (dict(thread=32), "thread (32, 0, 0) is outside the launch"),
    (dict(block=-1), "outside the launch"),
    (dict(block=(0, 0, 0, 0)), "block must be"),
])
def test_breakpoint_block_and_thread_are_checked(session, kwargs, fragment):
    with pytest.raises(wl.SimulatorError) as info:
        session.add_breakpoint(line=5, **kwargs)
    assert fragment in str(info.value)
    assert session.debugger.breakpoints == []


def test_breakpoint_in_a_given_block_and_thread_stops_there(session):
    session.add_breakpoint(line=5, block=1, thread=(3,))
    stop = session.cont()
    assert stop is not None and stop.block == (1, 0, 0) and stop.source_line == 5
    with pytest.raises(wl.SimulatorError, match=re.escape("block (2, 0, 0) is outside")):
        session.lanes(block=2)
    assert session.lanes(block=(1,)).block == (1, 0, 0)


@pytest.mark.parametrize("kwargs", [dict(checks="racechek"), dict(shared_mem=2 ** 40)])
def test_debug_checks_its_options_like_launch(kwargs):
    from warp_lab.notebook.debugger import debug

    k = _kernel("import warp_lab as wl\n@wl.kernel\n" + SAXPY, "<rb dbg2>")
    with pytest.raises(wl.LaunchError):
        debug(k, dim=8, inputs=[np.zeros(8, np.float32), np.zeros(8, np.float32), 1.0], **kwargs)


def test_panel_chooses_the_block_of_a_2d_grid():
    """A 2-D launch (a stencil, an image filter): the panel picks the block's y too."""
    from warp_lab.notebook.debugger import debug

    k = _kernel("import warp_lab as wl\n@wl.kernel\n"
                "def fill(a: wl.array(dtype=wl.float32, ndim=2)):\n"
                "    i, j = wl.tid()\n    a[i, j] = wl.float32(i)\n", "<rb dbg 2d>")
    dbg = debug(k, dim=(4, 32), inputs=[np.zeros((4, 32), np.float32)], block_dim=(32, 2))
    assert dbg.grid == (1, 2, 1)
    dbg.add_breakpoint(line=5, block=(0, 1, 0))
    stop = dbg.cont()
    assert stop.block == (0, 1, 0)
    panel = dbg.panel()
    assert panel.block_y.value == 1
    panel.block_y.value = 0  # block (0, 0, 0) has finished: said in the lane table
    assert dbg.block == (0, 0, 0) and "not running now" in panel.lanes.value
    panel.block_y.value = 1
    assert dbg.block == (0, 1, 0) and "not running" not in panel.lanes.value
