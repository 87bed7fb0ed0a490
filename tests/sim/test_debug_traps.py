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


@wl.kernel
def shifted_copy(x: wl.array(dtype=wl.int32), y: wl.array(dtype=wl.int32)):
    t = wl.thread_idx.x
    y[t] = x[t + 1]  # marker: shifted read


@pytest.mark.parametrize("kernel,inputs,said", [
    (checked_copy, [np.array([0, 1, 2, -3, 4, 5, 6, 7], np.int32), np.zeros(N, np.int32)],
     "assert", ),
    (shifted_copy, [np.arange(N, dtype=np.int32), np.zeros(N, np.int32)], "shifted read"),
])
def test_a_trap_finding_quotes_what_the_trapping_thread_printed(kernel, inputs, said):
    """The line the check printed before its trap is in the finding's message (and its
    details), not only in ``printed``: what a student reads in ``print(*r.findings)``."""
    res = _run(kernel, inputs, debug=True)
    line = source_line(kernel, f"# marker: {said}")
    (f,) = res.findings
    last = [ln for ln in res.printed.splitlines() if f"test_debug_traps.py:{line}:" in ln]
    assert f.kind == "trap" and f.source_line == line and last, (str(f), res.printed)
    assert f.details["printed"] == last[-1]
    assert f"after the thread printed {last[-1]!r}" in f.message, f.message
    if kernel is shifted_copy:  # thread 7 reads x[8]
        assert f.thread == (N - 1, 0, 0)
        assert "index 8 out of bounds for axis 0 with size 8" in f.message, f.message


@wl.kernel
def next_row_read(x: wl.array(dtype=wl.int32, ndim=2), y: wl.array(dtype=wl.int32, ndim=2)):
    i, j = wl.tid()
    y[i, j] = x[i, j + 8]  # marker: axis 1 overrun


def test_an_axis_overrun_inside_the_array_is_found_by_memchecks_index_check_and_debug():
    """What docs/language.md says: ``x[i, j + 8]`` past axis 1 of a (4, 8) array reads row
    ``i + 1``, an address inside the array (compute-sanitizer gives no finding): memcheck's
    index check on the simulator reports it at the line, without it the row is read;
    ``debug=True`` checks every axis and traps with NumPy's message."""
    x = np.arange(32, dtype=np.int32).reshape(4, 8)
    y = np.zeros((2, 8), np.int32)
    line = source_line(next_row_read, "# marker: axis 1 overrun")
    found = wl.launch(next_row_read, dim=y.shape, inputs=[x, y], device="sim")
    (f,) = found.findings
    assert f.kind == "out_of_bounds" and f.source_line == line and not y.any()
    assert "(index 8 out of bounds for axis 1 with size 8): x[0, 8] is outside x" in f.message
    plain = wl.launch(next_row_read, dim=y.shape, inputs=[x, y], device="sim",
                      checks=("barrier",))
    assert plain.findings == [] and (y == x[1:3]).all()
    checked = wl.launch(next_row_read, dim=y.shape, inputs=[x, y], device="sim", debug=True)
    assert checked.findings and checked.findings[0].kind == "trap"
    assert checked.findings[0].source_line == line
    assert "index 8 out of bounds for axis 1 with size 8" in checked.findings[0].message
