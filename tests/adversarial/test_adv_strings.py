"""Strings where numbers go: ``float('nan')`` / ``float('-inf')`` (Python's spelling of the
special values) were refused as "cannot convert string to float32", and ``x[0] = 'a'``
was told to "write wl.float32(...) to convert explicitly"."""

import math

import numpy as np
import pytest

import warp_lab as wl
from adv_cells import cell_kernel


@pytest.mark.parametrize("expr, want", [
    ("float('nan')", math.nan), ("float('-inf')", -math.inf), ("float(' Infinity ')", math.inf),
    ("wl.float64('inf')", math.inf), ("float('1.5')", 1.5),
])
def test_float_of_a_string_constant_is_its_value(expr, want):
    kernel = cell_kernel(f"@wl.kernel\ndef k(out: wl.array(dtype=wl.float64)):\n"
                         f"    out[0] = {expr}\n    out[1] = 1.0 if {expr} == {expr} else 2.0\n")
    out = np.zeros(2, np.float64)
    wl.launch(kernel, dim=1, inputs=[out], device="sim")
    np.testing.assert_equal(out, [want, 1.0 if want == want else 2.0])


def test_float_of_a_string_that_is_no_number_points_at_it():
    kernel = cell_kernel("@wl.kernel\ndef k(out: wl.array(dtype=wl.float32)):\n"
                         "    out[0] = float('abc')\n")
    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(kernel, cache=False)
    err = info.value
    assert (err.line, err.col) == (3, 20) and "float('abc'): the string is not a number" in str(err)
    assert "math.nan" in str(err)


def test_storing_a_string_says_strings_are_messages():
    kernel = cell_kernel("@wl.kernel\ndef k(out: wl.array(dtype=wl.float32)):\n    out[0] = 'a'\n")
    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(kernel, cache=False)
    assert (info.value.line, info.value.col) == (3, 14)
    assert "print() or assert message" in str(info.value)
    assert "wl.float32(...)" not in str(info.value)
