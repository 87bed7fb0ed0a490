"""Checks compiled only with ``debug=True`` (CUDA's ``assert``: a ``trap`` after a printed
message), run on the simulator: a failed ``assert`` and a ``range()`` whose run-time step is
zero (Python raises ``ValueError: range() arg 3 must not be zero``). Without ``debug`` the
assert is gone and a zero step runs the loop zero times, as docs/language.md says."""

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.examples.example import source_line

N = 8


@wl.kernel
def stepped_sum(y: wl.array(dtype=wl.int32), step: int):
    t = wl.thread_idx.x
    acc = 0
    for k in range(t, 40, step):  # marker: range step
        acc += k
    y[t] = acc


@wl.kernel
def checked_copy(x: wl.array(dtype=wl.int32), y: wl.array(dtype=wl.int32)):
    t = wl.thread_idx.x
    assert x[t] >= 0, "negative input"  # marker: assert
    y[t] = x[t]


def _run(kernel, inputs, debug):
    return wl.launch(kernel, inputs=inputs, device="sim", grid=(1, 1, 1), block=(N, 1, 1),
                     debug=debug)


@pytest.mark.parametrize("debug", [False, True])
def test_a_nonzero_runtime_step_counts_like_python(debug):
    y = np.full(N, -1, np.int32)
    res = _run(stepped_sum, [y, -3], debug)
    assert not res.findings
    np.testing.assert_array_equal(y, [sum(range(t, 40, -3)) for t in range(N)])  # all zero
    res = _run(stepped_sum, [y, 7], debug)
    assert not res.findings
    np.testing.assert_array_equal(y, [sum(range(t, 40, 7)) for t in range(N)])


def test_a_zero_step_without_debug_runs_the_loop_zero_times():
    y = np.full(N, -1, np.int32)
    res = _run(stepped_sum, [y, 0], debug=False)
    assert not res.findings and not res.printed
    np.testing.assert_array_equal(y, np.zeros(N, np.int32))


def test_a_zero_step_with_debug_traps_with_pythons_message_at_the_users_line():
    y = np.full(N, -1, np.int32)
    res = _run(stepped_sum, [y, 0], debug=True)
    line = source_line(stepped_sum, "# marker: range step")
    assert [f.kind for f in res.findings] == ["trap"], [str(f) for f in res.findings]
    assert res.findings[0].source_line == line
    assert f"test_debug_traps.py:{line}: range() arg 3 must not be zero" in res.printed
    np.testing.assert_array_equal(y, np.full(N, -1, np.int32))   # the launch was aborted


def test_a_failed_assert_traps_only_with_debug():
    x = np.array([0, 1, 2, -3, 4, 5, 6, 7], np.int32)
    y = np.zeros(N, np.int32)
    res = _run(checked_copy, [x, y], debug=True)
    line = source_line(checked_copy, "# marker: assert")
    assert [f.kind for f in res.findings] == ["trap"], [str(f) for f in res.findings]
    assert (f"test_debug_traps.py:{line}: assertion failed: x[t] >= 0: negative input"
            in res.printed)
    y[:] = 0
    res = _run(checked_copy, [x, y], debug=False)
    assert not res.findings
    np.testing.assert_array_equal(y, x)
