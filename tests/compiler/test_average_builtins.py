"""``wl.hadd``/``wl.rhadd``: CUDA's ``__hadd``/``__uhadd`` and ``__rhadd``/``__urhadd``
(CUDA Math API, "Integer Intrinsics"): the average of two 32-bit integers rounded down
(up), computed without the overflow of ``(a + b) >> 1``. Reference: NumPy in int64."""

from __future__ import annotations

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.errors import KernelCompileError


@wl.kernel
def _averages(a: wl.array(dtype=wl.int32), b: wl.array(dtype=wl.int32),
              u: wl.array(dtype=wl.uint32), v: wl.array(dtype=wl.uint32),
              out: wl.array(dtype=wl.int32, ndim=2), uout: wl.array(dtype=wl.uint32, ndim=2)):
    i = wl.tid()
    out[0, i] = wl.hadd(a[i], b[i])
    out[1, i] = wl.rhadd(a[i], b[i])
    uout[0, i] = wl.hadd(u[i], v[i])
    uout[1, i] = wl.rhadd(u[i], v[i])


def test_hadd_and_rhadd_are_the_overflow_free_averages():
    i32, u32 = np.iinfo(np.int32), np.iinfo(np.uint32)
    a = np.array([1, 2, -3, -4, i32.max, i32.min, i32.max, 7], np.int32)
    b = np.array([2, 2, 0, -1, i32.max, i32.min, i32.min, -8], np.int32)
    u = np.array([1, 2, 3, u32.max, u32.max, 0, 5, 2**31], np.uint32)
    v = np.array([2, 2, 0, u32.max, 0, 0, 6, 2**31], np.uint32)
    out, uout = np.zeros((2, 8), np.int32), np.zeros((2, 8), np.uint32)
    wl.launch(_averages, dim=8, inputs=[a, b, u, v, out, uout], device="sim")
    s = a.astype(np.int64) + b
    t = u.astype(np.int64) + v
    np.testing.assert_array_equal(out, np.stack([s >> 1, (s + 1) >> 1]).astype(np.int32))
    np.testing.assert_array_equal(uout, np.stack([t >> 1, (t + 1) >> 1]).astype(np.uint32))


def test_hadd_of_64_bit_or_float_arguments_is_a_located_error():
    @wl.kernel
    def wide(x: wl.array(dtype=wl.int64)):
        x[0] = wl.hadd(x[0], x[1])

    @wl.kernel
    def flt(x: wl.array(dtype=wl.float32)):
        x[0] = wl.rhadd(x[0], x[1])

    with pytest.raises(KernelCompileError, match=r"hadd\(\) takes 32-bit integers") as e:
        wl.compile(wide, cache=False, sass=False)
    assert e.value.line is not None
    with pytest.raises(KernelCompileError, match=r"rhadd\(\) needs integers"):
        wl.compile(flt, cache=False, sass=False)
