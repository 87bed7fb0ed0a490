"""A finite float constant that its type cannot hold is a located error, not a silent inf.

IEEE 754 round-to-nearest turns a magnitude of at least max + ulp/2 into infinity, so
``wl.float32(1e39)`` or ``h[i] = 70000.0`` into float16 would compute with a number the user
never wrote. The reference for each type's limit and rounding is numpy (``np.finfo``, the
conversion itself); the launch-argument check (``runtime.args``) says the same of parameters.
Infinity written as such (``math.inf``, ``float('inf')``, ``1e400``, which Python reads
as inf) still compiles and runs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.errors import KernelCompileError

from test_diagnostics import cell_kernel

HEAD = ("@wl.kernel\ndef k(y: wl.array(dtype=wl.float32), h: wl.array(dtype=wl.float16),\n"
        "      d: wl.array(dtype=wl.float64), a: wl.float32, i: wl.int32):\n")

#: (id, kernel body (line 4 of the cell), column of the constant, its text, its type)
REFUSED = [
    ("cast32", "    y[0] = wl.float32(1e39)", 23, "1e+39", "float32"),
    ("cast32_neg", "    y[0] = wl.float32(-1e39)", 23, "-1e+39", "float32"),
    ("cast16", "    h[0] = wl.float16(70000.0)", 23, "70000.0", "float16"),
    ("cast32_string", "    y[0] = wl.float32('1e39')", 12, "1e+39", "float32"),
    ("store32", "    y[0] = 1e39", 12, "1e+39", "float32"),
    ("store16", "    h[0] = 70000.0", 12, "70000.0", "float16"),
    ("store16_half_ulp", "    h[0] = 65520.0", 12, "65520.0", "float16"),
    ("store32_half_ulp", "    y[0] = 3.4028236e38", 12, "3.4028236e+38", "float32"),
    ("operand", "    y[0] = a * 1e39", 16, "1e+39", "float32"),
    ("int_operand", "    y[0] = i * 1e39", 16, "1e+39", "float32"),
    ("new_variable", "    v = 1e39\n    y[0] = v", 9, "1e+39", "float32"),
    ("folded", "    y[0] = 0.5 * 1e39 * 4", 12, "2e+39", "float32"),
    ("builtin_arg", "    y[0] = wl.sqrt(1e39)", 20, "1e+39", "float32"),
    ("min_max", "    y[0] = max(a, 1e39)", 19, "1e+39", "float32"),
    ("compare", "    y[0] = a if a > 1e39 else 0.0", 21, "1e+39", "float32"),
    ("strong_times_weak", "    y[0] = wl.float32(2.0) * 1e39", 30, "1e+39", "float32"),
    ("half_operand", "    h[0] = wl.float16(a) * 70000.0", 28, "70000.0", "float16"),
    ("vector", "    v = wl.vec3(1.0, 1e39, 2.0)\n    y[0] = v[0]", 22, "1e+39", "float32"),
    ("tuple", "    t = (1.0, 1e39)\n    d[0] = t[1]", 9, "1e+39", "float32"),
    ("print", "    print(1e39)", 11, "1e+39", "float32"),
]


@pytest.mark.parametrize("body,col,text,tname", [c[1:] for c in REFUSED],
                         ids=[c[0] for c in REFUSED])
def test_overflowing_constant_is_a_located_error(body, col, text, tname):
    k = cell_kernel(HEAD + body + "\n")
    with pytest.raises(KernelCompileError) as info:
        wl.compile(k, arch="sm_80", cache=False)
    err = info.value
    limit = float(np.finfo(np.dtype(tname)).max)   # 3.4028235e+38, 65504
    assert err.message == (f"{text} overflows {tname} (largest finite value {limit:.8g}): "
                           "the constant would become inf"), str(err)
    assert (err.line, err.col) == (4, col), str(err)
    assert err.source_line == (HEAD + body).splitlines()[3]
    assert "math.inf" in err.hint
    with np.errstate(over="ignore"):               # numpy agrees it would be inf
        assert np.isinf(np.dtype(tname).type(float(text)))


#: (id, kernel body, array, expected element 0): values that fit, or infinity meant as such
ACCEPTED = [
    ("math_inf", "    y[0] = math.inf", "y", np.float32(np.inf)),
    ("neg_math_inf", "    y[0] = -math.inf", "y", np.float32(-np.inf)),
    ("float_inf", "    y[0] = wl.float32(float('inf'))", "y", np.float32(np.inf)),
    ("py_inf_literal", "    y[0] = 1e400", "y", np.float32(np.inf)),
    ("rounds_to_max32", "    y[0] = 3.40282356e38", "y", np.float32(3.40282356e38)),
    ("rounds_to_max16", "    h[0] = 65519.0", "h", np.float16(65504.0)),
    ("float64_holds_it", "    d[0] = 1e39", "d", np.float64(1e39)),
    ("float64_fold", "    d[0] = 0.5 * 1e39 * 4", "d", np.float64(2e39)),
    ("arithmetic_overflow", "    y[0] = wl.float32(3e38) * wl.float32(10.0)", "y",
     np.float32(np.inf)),   # IEEE arithmetic overflow, as at run time: not a constant's range
]


@pytest.mark.parametrize("body,arr,want", [c[1:] for c in ACCEPTED],
                         ids=[c[0] for c in ACCEPTED])
def test_constant_in_range_or_meant_infinite_runs(body, arr, want):
    k = cell_kernel(HEAD + body + "\n")
    arrays = {"y": np.zeros(1, np.float32), "h": np.zeros(1, np.float16),
              "d": np.zeros(1, np.float64)}
    wl.launch(k, dim=1, device="sim", arch="sm_80",
              inputs=[arrays["y"], arrays["h"], arrays["d"], 1.0, 2])
    got = arrays[arr][0]
    assert got == want and math.copysign(1, got) == math.copysign(1, want), (got, want)
