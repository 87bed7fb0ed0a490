"""Every libdevice math builtin at float32 and float64 on the simulator, against numpy.

Generated kernels (one statement per function) so every ``__nv_*`` body the compiler links
is executed: this catches unimplemented opcodes and parser gaps in libdevice's PTX."""

import numpy as np
import pytest

import warp_lab as wl

UNARY = ('sqrt', 'rsqrt', 'cbrt', 'exp', 'exp2', 'exp10', 'expm1', 'log', 'log2', 'log10', 'log1p', 'sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'sinh', 'cosh', 'tanh', 'asinh', 'acosh', 'atanh', 'erf', 'erfc', 'floor', 'ceil', 'trunc', 'round', 'rint')
BINARY = ('pow', 'atan2', 'copysign', 'fmod', 'hypot')

@wl.kernel
def math_float32(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32, ndim=2)):
    i = wl.tid()
    a = x[i]
    b = y[i]
    out[0, i] = wl.sqrt(a)
    out[1, i] = wl.rsqrt(a)
    out[2, i] = wl.cbrt(a)
    out[3, i] = wl.exp(a)
    out[4, i] = wl.exp2(a)
    out[5, i] = wl.exp10(a)
    out[6, i] = wl.expm1(a)
    out[7, i] = wl.log(a)
    out[8, i] = wl.log2(a)
    out[9, i] = wl.log10(a)
    out[10, i] = wl.log1p(a)
    out[11, i] = wl.sin(a)
    out[12, i] = wl.cos(a)
    out[13, i] = wl.tan(a)
    out[14, i] = wl.asin(a)
    out[15, i] = wl.acos(a)
    out[16, i] = wl.atan(a)
    out[17, i] = wl.sinh(a)
    out[18, i] = wl.cosh(a)
    out[19, i] = wl.tanh(a)
    out[20, i] = wl.asinh(a)
    out[21, i] = wl.acosh(a)
    out[22, i] = wl.atanh(a)
    out[23, i] = wl.erf(a)
    out[24, i] = wl.erfc(a)
    out[25, i] = wl.floor(a)
    out[26, i] = wl.ceil(a)
    out[27, i] = wl.trunc(a)
    out[28, i] = wl.round(a)
    out[29, i] = wl.rint(a)
    out[30, i] = wl.pow(a, b)
    out[31, i] = wl.atan2(a, b)
    out[32, i] = wl.copysign(a, b)
    out[33, i] = wl.fmod(a, b)
    out[34, i] = wl.hypot(a, b)


@wl.kernel
def math_float64(x: wl.array(dtype=wl.float64), y: wl.array(dtype=wl.float64), out: wl.array(dtype=wl.float64, ndim=2)):
    i = wl.tid()
    a = x[i]
    b = y[i]
    out[0, i] = wl.sqrt(a)
    out[1, i] = wl.rsqrt(a)
    out[2, i] = wl.cbrt(a)
    out[3, i] = wl.exp(a)
    out[4, i] = wl.exp2(a)
    out[5, i] = wl.exp10(a)
    out[6, i] = wl.expm1(a)
    out[7, i] = wl.log(a)
    out[8, i] = wl.log2(a)
    out[9, i] = wl.log10(a)
    out[10, i] = wl.log1p(a)
    out[11, i] = wl.sin(a)
    out[12, i] = wl.cos(a)
    out[13, i] = wl.tan(a)
    out[14, i] = wl.asin(a)
    out[15, i] = wl.acos(a)
    out[16, i] = wl.atan(a)
    out[17, i] = wl.sinh(a)
    out[18, i] = wl.cosh(a)
    out[19, i] = wl.tanh(a)
    out[20, i] = wl.asinh(a)
    out[21, i] = wl.acosh(a)
    out[22, i] = wl.atanh(a)
    out[23, i] = wl.erf(a)
    out[24, i] = wl.erfc(a)
    out[25, i] = wl.floor(a)
    out[26, i] = wl.ceil(a)
    out[27, i] = wl.trunc(a)
    out[28, i] = wl.round(a)
    out[29, i] = wl.rint(a)
    out[30, i] = wl.pow(a, b)
    out[31, i] = wl.atan2(a, b)
    out[32, i] = wl.copysign(a, b)
    out[33, i] = wl.fmod(a, b)
    out[34, i] = wl.hypot(a, b)

def _round_half_away(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


REF = {
    "sqrt": np.sqrt, "rsqrt": lambda v: 1 / np.sqrt(v), "cbrt": np.cbrt, "exp": np.exp,
    "exp2": np.exp2, "exp10": lambda v: 10.0 ** v, "expm1": np.expm1, "log": np.log,
    "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "erf": np.vectorize(__import__("math").erf),
    "erfc": np.vectorize(__import__("math").erfc), "floor": np.floor, "ceil": np.ceil,
    "trunc": np.trunc, "round": _round_half_away, "rint": np.rint,
    "pow": np.power, "atan2": np.arctan2, "copysign": np.copysign, "fmod": np.fmod,
    "hypot": np.hypot,
}
# libdevice's documented maximum errors are a few ulp (CUDA Programming Guide, "Mathematical
# Functions" appendix); 8 ulp relative is a loose bound that still catches wrong semantics
TOL = {"float32": dict(rtol=8 * 2.0 ** -24, atol=1e-37),
       "float64": dict(rtol=8 * 2.0 ** -53, atol=1e-300)}


@pytest.mark.parametrize("opt", [0, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_every_math_builtin(dtype, opt):
    kernel = {"float32": math_float32, "float64": math_float64}[dtype]
    g = np.random.default_rng(11)
    n = 64
    x = np.concatenate([g.uniform(0.05, 0.95, n // 2), g.uniform(1.1, 20.0, n // 2)]).astype(dtype)
    y = g.uniform(0.5, 3.0, n).astype(dtype)
    out = np.zeros((len(UNARY) + len(BINARY), n), dtype)
    res = wl.launch(kernel, inputs=[x, y, out], dim=n, block_dim=32, device="sim", opt=opt,
                    checks=("memcheck", "racecheck", "barrier"))
    assert not res.sim.findings
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(all="ignore"):
        for k, name in enumerate(UNARY + BINARY):
            want = REF[name](xd) if name in UNARY else REF[name](xd, yd)
            np.testing.assert_allclose(out[k], want.astype(dtype), equal_nan=True,
                                       err_msg=name, **TOL[dtype])
