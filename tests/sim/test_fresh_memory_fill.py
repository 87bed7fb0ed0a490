"""Fresh shared and local memory hold a visible pattern, not zeros (issue 23).

The PTX ISA gives the shared and local state spaces no initial value (5.1.5 "Local State
Space", 5.1.7 "Shared State Space"; the CUDA Programming Guide's ``__shared__`` has no
initialization), so a kernel reading what it never wrote computes with garbage on a GPU.
With zeros there the simulator often gave the lucky right answer (a sum of 100.0 that
reads an unwritten bin came out 100.0) and, with initcheck off, nothing said otherwise.
The default fill is the word 0x7FF8DEAD (NaN as float32 and float64), configurable with
``fill=`` (compute-sanitizer's initcheck is the model for naming such reads; the pattern
makes the result show it too)."""

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.runtime.launch import FILL_NAN
from warp_lab.sim.machine import FILL


@wl.kernel
def sum_with_a_hole(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    s = wl.shared_array(128, wl.float32)
    t = wl.thread_idx.x
    s[t] = x[t]              # 100 threads write 100 of 128 cells
    wl.syncthreads()
    if t == 0:
        acc = 0.0
        for j in range(101):  # off by one: reads s[100], never written
            acc += s[j]
        out[0] = acc


@wl.kernel
def local_read_first(out: wl.array(dtype=wl.int32), n: int):
    a = wl.local_array(8, wl.int32)
    for j in range(n):       # run-time trip count: a lives in local memory
        a[j] = j
    out[wl.tid()] = a[n]     # one past what the loop wrote


def test_an_unwritten_shared_cell_shows_in_the_result_not_only_in_initcheck():
    x = np.ones(100, np.float32)
    out = np.zeros(1, np.float32)
    res = wl.launch(sum_with_a_hole, inputs=[x, out], grid=1, block=100, device="sim",
                    checks=("memcheck",))
    assert not res.findings
    assert np.isnan(out[0])                          # 100 ones + the NaN pattern
    wl.launch(sum_with_a_hole, inputs=[x, out], grid=1, block=100, device="sim",
              checks=("memcheck",), fill="zeros")
    assert out[0] == 100.0                           # the lucky right answer zeros gave
    wl.launch(sum_with_a_hole, inputs=[x, out], grid=1, block=100, device="sim",
              checks=("memcheck",), fill=0x3F800000)  # the word of 1.0f
    assert out[0] == 101.0
    res = wl.launch(sum_with_a_hole, inputs=[x, out], grid=1, block=100, device="sim",
                    checks=("initcheck",))
    assert [f.kind for f in res.findings] == ["uninitialized"]


def test_fresh_local_memory_holds_the_pattern_too():
    out = np.zeros(32, np.int32)
    wl.launch(local_read_first, inputs=[out, 3], dim=32, device="sim", opt=0,
              checks=("memcheck",))
    assert (out == np.uint32(FILL).view(np.int32)).all()
    wl.launch(local_read_first, inputs=[out, 3], dim=32, device="sim", opt=0,
              checks=("memcheck",), fill=None)
    assert (out == 0).all()


def test_the_pattern_is_nan_in_both_float_widths_and_one_constant():
    assert FILL == FILL_NAN == 0x7FF8DEAD
    word = np.array([FILL], np.uint32)
    assert np.isnan(word.view(np.float32)[0])
    assert np.isnan(np.array([FILL, FILL], np.uint32).view(np.float64)[0])


@pytest.mark.parametrize("bad", [-1, 2**32, 1.5, "nans", True])
def test_a_bad_fill_is_a_launch_error(bad):
    with pytest.raises(wl.LaunchError, match="fill must be"):
        wl.launch(sum_with_a_hole, inputs=[np.ones(100, np.float32), np.zeros(1, np.float32)],
                  grid=1, block=100, device="sim", fill=bad)
