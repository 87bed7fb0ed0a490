"""Python semantics a clueless user relies on, checked against Python itself on the simulator.

Each expression runs in a one-thread kernel for several (v: float32, n: int32)
pairs and must equal what CPython computes (all the chosen inputs are exact
in float32). The strict xfail documents ``and``/``or`` giving a bool where
Python gives an operand.
"""

import numpy as np
import pytest

import warp_lab as wl

from adv_cells import cell_kernel

VALUES = [(2.5, -7), (-2.5, 5), (0.5, 0), (-0.75, -1), (3.5, 3), (1.5, -4)]

EXPRS = {
    "float(round(v))": lambda v, n: float(round(v)),      # half to even
    "float(int(v))": lambda v, n: float(int(v)),          # truncation
    "v % 1.0": lambda v, n: v % 1.0,                      # sign of the divisor
    "v // 1.0": lambda v, n: v // 1.0,
    "float(n % -3)": lambda v, n: float(n % -3),
    "float(n // -3)": lambda v, n: float(n // -3),
    "float(-n // 2)": lambda v, n: float(-n // 2),
    "float(n >> 1)": lambda v, n: float(n >> 1),
    "float(~n)": lambda v, n: float(~n),
    "n / 2": lambda v, n: n / 2,
    "float(n > 1 > -10)": lambda v, n: float(n > 1 > -10),
    "float(not v)": lambda v, n: float(not v),
    "float(min(v, n))": lambda v, n: float(min(v, n)),
    "float(abs(n))": lambda v, n: float(abs(n)),
}


def _run(expr, v, n):
    kernel = cell_kernel(f"@wl.kernel\ndef k(x: wl.array(dtype=wl.float32), v: float, n: int):\n"
                         f"    x[0] = {expr}\n")
    x = np.full(1, np.nan, np.float32)
    wl.launch(kernel, dim=1, inputs=[x, v, n], device="sim")
    return float(x[0])


@pytest.mark.parametrize("expr", list(EXPRS))
def test_matches_python(expr):
    got = [_run(expr, v, n) for v, n in VALUES]
    want = [float(np.float32(EXPRS[expr](v, n))) for v, n in VALUES]
    assert got == want


@pytest.mark.parametrize("expr, n, want", [("float(n or 7)", 0, 7.0), ("float(n or 7)", -4, -4.0),
                                           ("float(n and 5)", 3, 5.0)])
def test_and_or_give_an_operand_or_are_rejected(expr, n, want):
    try:
        got = _run(expr, 0.0, n)
    except wl.KernelCompileError:
        return  # rejecting non-bool operands is an acceptable answer
    assert got == want


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_integer_power_with_a_negative_run_time_exponent(dtype):
    """3 ** -2 with a run-time exponent gave 1 (the squaring loop did not run); it is now
    int(3 ** -2) = 0, as for every base but 1 and -1, and a trap under debug=True."""
    name = np.dtype(dtype).name
    kernel = cell_kernel(f"@wl.kernel\ndef k(o: wl.array(dtype=wl.{name}), "
                         f"a: wl.array(dtype=wl.{name}), b: wl.array(dtype=wl.{name})):\n"
                         "    i = wl.tid()\n    o[i] = a[i] ** b[i]\n")
    a = np.array([3, 1, -1, -1, 0, 2, -2, 5, 7], dtype)
    b = np.array([-2, -5, -3, -4, -1, 3, 3, 0, 1], dtype)
    want = [0 if x == 0 and y < 0 else int(float(x) ** float(y))
            for x, y in zip(a.tolist(), b.tolist())]
    o = np.zeros_like(a)
    wl.launch(kernel, dim=a.size, inputs=[o, a, b], device="sim")
    assert o.tolist() == want == [0, 1, -1, 1, 0, 8, -8, 1, 7]
    ck = wl.compile(kernel, debug=True, sass=False)
    r = wl.launch(ck, dim=a.size, inputs=[o, a, b], device="sim")
    assert [f.kind for f in r.findings] == ["trap"]
    assert ":4: an integer raised to a negative power (-2) is not an integer" in r.printed
