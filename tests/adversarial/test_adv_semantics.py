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
