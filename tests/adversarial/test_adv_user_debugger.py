"""A learner's wrong arguments to the notebook debugger: a clear SimulatorError, no motion.

Found by poking ``debug(...)`` sessions: ``step(-1)`` did nothing silently,
``step_back(-2)`` went *forward* two instructions, ``step("a")`` was a bare
TypeError, and breakpoints on line 0 or line 2.0 were accepted (line 0 is
the compiler's "no line").
"""

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.notebook.debugger import debug

from adv_cells import cell_kernel

SCALE = """
@wl.kernel
def scale(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), a: float):
    i = wl.tid()
    y[i] = a * x[i] + 1.0
"""


@pytest.fixture()
def session():
    x = np.arange(64, dtype=np.float32)
    return debug(cell_kernel(SCALE), dim=64, inputs=[x, np.zeros_like(x), 2.0], block_dim=32)


@pytest.mark.parametrize("method, n, fragment", [
    ("step", -1, "use step_back(1)"), ("step_back", -2, "use step(2)"),
    ("step", "a", "n must be an int >= 0, got 'a'"), ("step", 1.5, "got 1.5"),
    ("step_back", True, "got True"),
])
def test_bad_step_count_is_refused_without_moving(session, method, n, fragment):
    session.step(3)
    before = session.where().step
    with pytest.raises(wl.SimulatorError, match="n must be an int >= 0") as info:
        getattr(session, method)(n)
    assert fragment in str(info.value)
    assert session.where().step == before == 3


def test_step_counts_still_move_both_ways(session):
    assert session.step(np.int64(4)).step == 4
    assert session.step_back(3).step == 1
    assert session.step(0).step == 1


@pytest.mark.parametrize("kwargs", [dict(line=0), dict(line=-1), dict(line="5"), dict(line=2.0),
                                    dict(line=True), dict(ptx_line=0)])
def test_breakpoint_line_must_be_a_line_number(session, kwargs):
    with pytest.raises(wl.SimulatorError, match="must be a line number"):
        session.add_breakpoint(**kwargs)
    assert session.debugger.breakpoints == []


def test_panel_shows_a_bad_breakpoint_line_as_a_message(session):
    panel = session.panel()
    panel.line.value = -3
    panel.buttons["add breakpoint"].click()
    assert "must be a line number" in panel.message.value
    assert session.debugger.breakpoints == []


def test_lane_values_show_their_float_reading_on_hover(session):
    """a = 2.0 sits in a .b32 register as 1073741824; the code uses it as an f32, so the
    cell shows 2 and its title the bits (a register of no known type: the other way)."""
    from warp_lab.notebook.debugger import lanes_html

    session.add_breakpoint(line=4)  # y[i] = a * x[i] + 1.0
    assert session.cont().source_line == 4
    while session.where().text.startswith("ld.param"):  # the line loads its parameters first
        session.step()
    page = lanes_html(session.lanes())
    assert "title='bits 0x40000000'>2</td>" in page
    assert "title='a'>a</span>" in page  # the parameter's name


BARRIER = """
@wl.kernel
def halves(x: wl.array(dtype=wl.float32)):
    t = wl.thread_idx.x
    if t % 32 >= 24:
        return
    x[t] = 1.0
    wl.syncthreads()
    x[t] += 1.0
"""


def test_active_row_tells_waiting_lanes_from_exited_ones():
    """Lanes 0..23 of each warp wait at the barrier while 24..31 leave: the waiting
    lanes are drawn ⏸ ("at barrier" on hover), not × as exited ones are."""
    from warp_lab.notebook.debugger import lanes_html

    def active_row(state):
        return lanes_html(state).split("<th>active</th>")[1].split("</tr>")[0]

    x = np.zeros(64, dtype=np.float32)
    s = debug(cell_kernel(BARRIER), dim=64, inputs=[x], block_dim=64)
    for _ in range(100):
        s.step(1)
        state = s.lanes(warp=0)
        if "at barrier" in state.status:
            break
    assert state.status[:24] == ["at barrier"] * 24
    row = active_row(state)
    assert row.count("title='at barrier'>⏸</td>") == 24 and "×" not in row
    while "exited" not in state.status:
        s.step(1)
        state = s.lanes(warp=0)
    assert state.status[24:] == ["exited"] * 8
    assert active_row(state).count("title='exited'>×</td>") == 8
