"""Ctrl-C (a real SIGINT) during a simulated wl.launch: the launch ends with its output
arrays all written or all untouched, never half, and never with an internal error.

The signal is raised with ``signal.raise_signal`` from a ``sys.settrace`` hook at a chosen
line of warp_lab's code: Python runs the handler at the next bytecode boundary, as it
does for a Ctrl-C typed at that moment (the Jupyter kernel's interrupt sends SIGINT too).
"""

import inspect
import signal
import sys

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.runtime import sim_backend
from warp_lab.sim import machine


@wl.kernel
def _two_outputs(x: wl.array(dtype=wl.float32), a: wl.array(dtype=wl.float32),
                 b: wl.array(dtype=wl.float32)):
    i = wl.tid()
    a[i] = x[i] + 1.0
    b[i] = x[i] * 2.0


N = 300


def _line_of(fn, text: str) -> int:
    """The file line of ``fn``'s first source line containing ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def _sigint_at(fn, text: str, nth: int = 1):
    """A trace hook raising SIGINT the ``nth`` time ``fn`` reaches its line with ``text``."""
    code, line = fn.__code__, _line_of(fn, text)
    seen = [0]

    def local(frame, event, arg):
        if event == "line" and frame.f_lineno == line:
            seen[0] += 1
            if seen[0] == nth:
                sys.settrace(None)
                signal.raise_signal(signal.SIGINT)
                return None
        return local

    def hook(frame, event, arg):
        return local if frame.f_code is code else None

    return hook, seen


def _launch_with(hook):
    x = np.arange(N, dtype=np.float32)
    a, b = np.zeros(N, np.float32), np.zeros(N, np.float32)
    wl.launch(_two_outputs, dim=N, inputs=[x, a, b], device="sim")  # compiled, parsed
    a[:], b[:] = 0, 0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    sys.settrace(hook)
    try:
        result = wl.launch(_two_outputs, dim=N, inputs=[x, a, b], device="sim")
    except KeyboardInterrupt:
        result = None
    finally:
        sys.settrace(None)
    return x, a, b, result


def test_ctrl_c_while_the_output_arrays_are_copied_back_waits_for_the_copies():
    # SIGINT between the copy of one output region and the next: KeyboardInterrupt came
    # with `a` written and `b` not (or the other way round); now it comes after both
    hook, seen = _sigint_at(sim_backend.run, "data = memory.read(bases[id(r)]", nth=2)
    x, a, b, result = _launch_with(hook)
    assert seen[0] == 2
    assert result is None   # the Ctrl-C is delivered, as KeyboardInterrupt, after the copies
    np.testing.assert_array_equal(a, x + 1)
    np.testing.assert_array_equal(b, 2 * x)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_before_the_first_batch_is_set_up_is_a_partial_launch():
    # SIGINT inside Machine.start_batch before it had set the uniform-mode counters:
    # result() raised AttributeError ('Machine' object has no attribute 'usteps')
    hook, seen = _sigint_at(machine.Machine.start_batch, "T = nb * self.bs_pad")
    x, a, b, result = _launch_with(hook)
    assert seen[0] == 1
    assert result is not None and result.partial
    assert [f.kind for f in result.findings] == ["interrupted"]
    assert not a.any() and not b.any()   # nothing copied back


@pytest.mark.parametrize("nth", [1, 2, 3])
def test_ctrl_c_while_blocks_run_leaves_the_arrays_unchanged(nth):
    hook, seen = _sigint_at(machine.Machine.run_batch, "n += 1", nth=nth * 5)
    x, a, b, result = _launch_with(hook)
    assert seen[0] == nth * 5
    assert result is not None and result.partial
    assert not a.any() and not b.any()
