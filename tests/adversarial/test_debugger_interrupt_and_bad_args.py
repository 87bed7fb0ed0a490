"""Ctrl-C and wrong arguments in a debugger session.

Found by interrupting ``wl.debug`` sessions and poking their inspection methods:

* Ctrl-C during ``step``/``cont``/``run_to_end`` could land inside an instruction,
  after its memory update and before its program counter moved; the session went on
  from there and ran the instruction again: an ``atomic_add`` counted twice
  (352 instead of 320), and ``cont`` lost count of the steps it had run.
* ``lanes(warp=1.5)`` was a bare TypeError from numpy slicing, ``lanes(warp=True)``
  showed "warp True", and once the launch had ended ``lanes()`` said the block was
  not running "now (current blocks 1..1)" instead of that the launch had finished.
"""

import signal
import sys

import numpy as np
import pytest

import warp_lab as wl

from adv_cells import cell_kernel

COUNT = """
@wl.kernel
def count(x: wl.array(dtype=wl.int32), n: int):
    for j in range(n):
        wl.atomic_add(x, 0, 1)
"""


def _ctrl_c_after_atomic(nth: int):
    """A trace function that sends SIGINT (what Ctrl-C and a notebook's interrupt send)
    as the ``nth`` atomic's memory update returns: Python runs the handler at the next
    bytecode, inside the instruction, before its program counter moves."""
    calls = [0]

    def local(frame, event, arg):
        if event == "return":
            calls[0] += 1
            if calls[0] == nth:
                signal.raise_signal(signal.SIGINT)
        return local

    def tracer(frame, event, arg):
        return local if event == "call" and frame.f_code.co_name == "_atomic_rmw" else None

    return tracer


def _at(stop):
    """Where a session stands: the next PTX line, or "ended" (a falsy LaunchEnded)."""
    return stop.ptx_line if stop else "ended"


@pytest.fixture()
def python_sigint():
    """Python's own SIGINT handler (KeyboardInterrupt), whatever the test runner left."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("motion", ["step", "cont", "run_to_end", "step_back"])
def test_ctrl_c_inside_an_atomic_leaves_a_session_that_counts_right(motion, python_sigint):
    x = np.zeros(1, np.int32)
    dbg = wl.debug(cell_kernel(COUNT), dim=32, inputs=[x, 10])
    if motion == "step_back":
        dbg.step(30)   # step_back(1) replays 29 steps, three atomics among them
    move = {"step": lambda: dbg.step(10 ** 6), "cont": dbg.cont,
            "run_to_end": dbg.run_to_end, "step_back": lambda: dbg.step_back(1)}[motion]
    sys.settrace(_ctrl_c_after_atomic(3))
    try:
        with pytest.raises(KeyboardInterrupt):
            move()
    finally:
        sys.settrace(None)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler   # put back
    stopped = dbg.debugger.step_count
    # the session stands where a fresh one stands after as many steps
    fresh = wl.debug(cell_kernel(COUNT), dim=32, inputs=[x, 10])
    fresh.step(stopped)
    assert _at(dbg.where()) == _at(fresh.where())
    np.testing.assert_array_equal(dbg.array("x"), fresh.array("x"))
    dbg.run_to_end()
    np.testing.assert_array_equal(dbg.array("x"), [32 * 10])   # each atomic counted once
    assert (x == 0).all()   # the session works on copies


def test_ctrl_c_outside_the_main_thread_is_not_held():
    """A session driven from another thread (no signal handlers there) still runs."""
    import threading

    out = []
    dbg = wl.debug(cell_kernel(COUNT), dim=32, inputs=[np.zeros(1, np.int32), 3])
    worker = threading.Thread(target=lambda: out.append(dbg.run_to_end()))
    worker.start()
    worker.join(60)
    assert out and dbg.array("x")[0] == 96


@pytest.fixture()
def session():
    x = np.zeros(1, np.int32)
    return wl.debug(cell_kernel(COUNT), dim=64, inputs=[x, 2])


@pytest.mark.parametrize("warp", [1.5, True, "0", None.__class__])
def test_lanes_of_a_warp_that_is_not_a_number_is_a_clear_error(session, warp):
    with pytest.raises(wl.SimulatorError, match="warp must be the number of a warp"):
        session.lanes(warp=warp)


def test_lanes_after_the_end_say_the_launch_has_finished(session):
    session.run_to_end()
    with pytest.raises(wl.SimulatorError, match="the launch has finished"):
        session.lanes()
    assert "the launch has finished" in session.lanes_html()
