"""Every math builtin in float32 and float64, and vector/matrix arithmetic.

The references are numpy in float64 (``math.erf`` for erf), rounded to the
output type; tolerances allow the few ulp libdevice documents (CUDA Math API,
"Mathematical Functions" accuracy tables: at most 4 ulp for the float32
functions used here, 2 ulp for float64).

``wl.round`` rounds halfway cases away from zero (CUDA ``roundf``), Python's
``round`` to even; the inputs contain no halfway cases, so both agree.
"""

import math

import numpy as np

import warp_lab as wl
from warp_lab.examples.example import Example, Launch, Tolerance, pick, rng

f32 = np.float32
i32 = np.int32

#: row of ``out`` -> function name, in the kernels' order
MATH_ROWS = ("sqrt", "rsqrt", "cbrt", "exp", "exp2", "log", "log2", "log10", "pow", "sin", "cos",
             "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "erf", "floor",
             "ceil", "trunc", "round", "abs", "min", "max", "clamp", "fma", "copysign", "**")


@wl.kernel
def math_f32(u: wl.array(dtype=wl.float32), p: wl.array(dtype=wl.float32),
             q: wl.array(dtype=wl.float32), special: wl.array(dtype=wl.float32),
             out: wl.array2d(dtype=wl.float32), flags: wl.array2d(dtype=wl.int32)):
    i = wl.tid()
    a = u[i]
    b = p[i]
    c = q[i]
    out[0, i] = wl.sqrt(b)
    out[1, i] = wl.rsqrt(b)
    out[2, i] = wl.cbrt(c)
    out[3, i] = wl.exp(c)
    out[4, i] = wl.exp2(c)
    out[5, i] = wl.log(b)  # marker: math_f32 log
    out[6, i] = wl.log2(b)
    out[7, i] = wl.log10(b)
    out[8, i] = wl.pow(b, c)
    out[9, i] = wl.sin(c)
    out[10, i] = wl.cos(c)
    out[11, i] = wl.tan(a)
    out[12, i] = wl.asin(a)
    out[13, i] = wl.acos(a)
    out[14, i] = wl.atan(c)
    out[15, i] = wl.atan2(a, c)
    out[16, i] = wl.sinh(a)
    out[17, i] = wl.cosh(a)
    out[18, i] = wl.tanh(c)
    out[19, i] = wl.erf(c)
    out[20, i] = wl.floor(c)
    out[21, i] = wl.ceil(c)
    out[22, i] = wl.trunc(c)
    out[23, i] = wl.round(c)
    out[24, i] = wl.abs(c)
    out[25, i] = wl.min(a, c)
    out[26, i] = wl.max(a, c)
    out[27, i] = wl.clamp(c, -1.0, 1.0)
    out[28, i] = wl.fma(a, b, c)
    out[29, i] = wl.copysign(b, a)
    out[30, i] = b ** c
    s = special[i]
    flags[0, i] = wl.int32(wl.isnan(s))
    flags[1, i] = wl.int32(wl.isinf(s))
    flags[2, i] = wl.int32(wl.isfinite(s))


@wl.kernel
def math_f64(u: wl.array(dtype=wl.float64), p: wl.array(dtype=wl.float64),
             q: wl.array(dtype=wl.float64), special: wl.array(dtype=wl.float64),
             out: wl.array2d(dtype=wl.float64), flags: wl.array2d(dtype=wl.int32)):
    i = wl.tid()
    a = u[i]
    b = p[i]
    c = q[i]
    out[0, i] = wl.sqrt(b)
    out[1, i] = wl.rsqrt(b)
    out[2, i] = wl.cbrt(c)
    out[3, i] = wl.exp(c)
    out[4, i] = wl.exp2(c)
    out[5, i] = wl.log(b)  # marker: math_f64 log
    out[6, i] = wl.log2(b)
    out[7, i] = wl.log10(b)
    out[8, i] = wl.pow(b, c)
    out[9, i] = wl.sin(c)
    out[10, i] = wl.cos(c)
    out[11, i] = wl.tan(a)
    out[12, i] = wl.asin(a)
    out[13, i] = wl.acos(a)
    out[14, i] = wl.atan(c)
    out[15, i] = wl.atan2(a, c)
    out[16, i] = wl.sinh(a)
    out[17, i] = wl.cosh(a)
    out[18, i] = wl.tanh(c)
    out[19, i] = wl.erf(c)
    out[20, i] = wl.floor(c)
    out[21, i] = wl.ceil(c)
    out[22, i] = wl.trunc(c)
    out[23, i] = wl.round(c)
    out[24, i] = wl.abs(c)
    out[25, i] = wl.min(a, c)
    out[26, i] = wl.max(a, c)
    out[27, i] = wl.clamp(c, -1.0, 1.0)
    out[28, i] = wl.fma(a, b, c)
    out[29, i] = wl.copysign(b, a)
    out[30, i] = b ** c
    s = special[i]
    flags[0, i] = wl.int32(wl.isnan(s))
    flags[1, i] = wl.int32(wl.isinf(s))
    flags[2, i] = wl.int32(wl.isfinite(s))


def _math_inputs(dtype, size):
    n = pick(size, 128, 1 << 18)
    g = rng(f"math_{np.dtype(dtype).name}")
    u = g.uniform(-0.95, 0.95, n)
    p = g.uniform(0.1, 20.0, n)
    q = g.uniform(-3.0, 3.0, n)
    q[np.abs(q - np.round(q)) == 0.5] += 1e-3        # no halfway cases for round()
    special = np.resize(np.array([np.nan, np.inf, -np.inf, 0.0, -1.5, 1e30]), n)
    return [u.astype(dtype), p.astype(dtype), q.astype(dtype), special.astype(dtype),
            np.zeros((len(MATH_ROWS), n), dtype), np.zeros((3, n), i32)]


def _math_ref(u, p, q, special, out, flags):
    a, b, c = (v.astype(np.float64) for v in (u, p, q))
    erf = np.vectorize(math.erf)
    rows = [np.sqrt(b), 1 / np.sqrt(b), np.cbrt(c), np.exp(c), np.exp2(c), np.log(b),
            np.log2(b), np.log10(b), np.power(b, c), np.sin(c), np.cos(c), np.tan(a),
            np.arcsin(a), np.arccos(a), np.arctan(c), np.arctan2(a, c), np.sinh(a), np.cosh(a),
            np.tanh(c), erf(c), np.floor(c), np.ceil(c), np.trunc(c),
            np.sign(c) * np.floor(np.abs(c) + 0.5), np.abs(c), np.minimum(a, c),
            np.maximum(a, c), np.clip(c, -1, 1), a * b + c, np.copysign(b, a), np.power(b, c)]
    s = special
    return {"out": np.stack(rows).astype(u.dtype),
            "flags": np.stack([np.isnan(s), np.isinf(s), np.isfinite(s)]).astype(i32)}


# -- vectors and matrices ----------------------------------------------------------
@wl.kernel
def vec_mat(a: wl.array(dtype=wl.vec3), b: wl.array(dtype=wl.vec3),
            m: wl.array(dtype=wl.mat33), crossed: wl.array(dtype=wl.vec3),
            unit: wl.array(dtype=wl.vec3), mv: wl.array(dtype=wl.vec3),
            mt: wl.array(dtype=wl.mat33), combo: wl.array(dtype=wl.vec3),
            scalars: wl.array2d(dtype=wl.float32)):
    i = wl.tid()
    u = a[i]
    v = b[i]
    mat = m[i]
    crossed[i] = wl.cross(u, v)
    unit[i] = wl.normalize(v)
    mv[i] = mat @ u  # marker: matrix-vector product
    t = wl.transpose(mat)
    mt[i] = t
    w = u * 2.0 + v - wl.vec3(1.0, 0.0, -1.0)
    combo[i] = w
    scalars[i, 0] = wl.dot(u, v)
    scalars[i, 1] = wl.length(u)
    scalars[i, 2] = t[0, 1] + mat[2, 0]
    scalars[i, 3] = w.x + w[1] + u.z
    q = wl.vec4(u.x, u.y, u.z, 1.0)
    scalars[i, 4] = wl.dot(q, wl.vec4(1.0, 2.0, 3.0, 4.0))
    r = wl.mat22(1.0, 2.0, 3.0, 4.0) @ wl.vec2(v.x, v.y)
    scalars[i, 5] = r[0] - r.y


def _vec_mat_inputs(size="small"):
    n = pick(size, 100, 1 << 18)
    g = rng("vec_mat")
    a = g.uniform(-2, 2, (n, 3)).astype(f32)
    b = g.uniform(-2, 2, (n, 3)).astype(f32)
    m = g.uniform(-1, 1, (n, 3, 3)).astype(f32)
    z3 = np.zeros((n, 3), f32)
    return [a, b, m, z3, z3.copy(), z3.copy(), np.zeros((n, 3, 3), f32), z3.copy(),
            np.zeros((n, 6), f32)]


def _vec_mat_ref(a, b, m, *outs):
    a64, b64, m64 = a.astype(np.float64), b.astype(np.float64), m.astype(np.float64)
    w = a64 * 2 + b64 - np.array([1.0, 0.0, -1.0])
    r = b64[:, :2] @ np.array([[1.0, 2.0], [3.0, 4.0]]).T
    scalars = np.stack([(a64 * b64).sum(1), np.linalg.norm(a64, axis=1),
                        m64[:, 1, 0] + m64[:, 2, 0], w[:, 0] + w[:, 1] + a64[:, 2],
                        a64 @ np.array([1.0, 2.0, 3.0]) + 4.0, r[:, 0] - r[:, 1]], axis=1)
    return {"crossed": np.cross(a64, b64).astype(f32),
            "unit": (b64 / np.linalg.norm(b64, axis=1, keepdims=True)).astype(f32),
            "mv": np.einsum("nij,nj->ni", m64, a64).astype(f32),
            "mt": np.transpose(m, (0, 2, 1)).copy(), "combo": w.astype(f32),
            "scalars": scalars.astype(f32)}


# -- the rest of the builtin table, Python's builtins and math module ----------------------
EXTRA_ROWS = ("exp10", "expm1", "log1p", "asinh", "acosh", "atanh", "erfc", "rint", "fmod",
              "hypot", "sign", "abs()", "min()", "max()", "pow()", "math.sqrt", "math.floor",
              "math.fabs", "length_sq", "warp_id")


@wl.kernel
def math_extras(u: wl.array(dtype=wl.float32), p: wl.array(dtype=wl.float32),
                q: wl.array(dtype=wl.float32), out: wl.array2d(dtype=wl.float32),
                outer_out: wl.array(dtype=wl.mat33), mv: wl.array(dtype=wl.vec3),
                flags: wl.array2d(dtype=wl.int32)):
    i = wl.tid()
    a = u[i]
    b = p[i]
    c = q[i]
    out[0, i] = wl.exp10(a)
    out[1, i] = wl.expm1(a)
    out[2, i] = wl.log1p(b)
    out[3, i] = wl.asinh(c)
    out[4, i] = wl.acosh(b + 1.0)
    out[5, i] = wl.atanh(a)
    out[6, i] = wl.erfc(c)
    out[7, i] = wl.rint(c)
    out[8, i] = wl.fmod(c, 0.75)
    out[9, i] = wl.hypot(b, c)
    out[10, i] = wl.sign(c)
    out[11, i] = abs(c)
    out[12, i] = min(a, c)
    out[13, i] = max(a, b, c)
    out[14, i] = pow(b, a)
    out[15, i] = math.sqrt(b)
    out[16, i] = math.floor(c)
    out[17, i] = math.fabs(c)
    v = wl.vec3(a, b, c)
    out[18, i] = wl.length_sq(v)
    out[19, i] = float(wl.warp_id())
    m = wl.outer(v, wl.vec3(1.0, 2.0, 3.0))
    outer_out[i] = m
    mv[i] = wl.mul(m, v)
    wl.threadfence_block()
    wl.threadfence()
    flags[0, i] = int(round(c))   # round() is a float here, like wl.round
    flags[1, i] = len(u)
    flags[2, i] = wl.int32(bool(i % 3))


def _extras_inputs(size="small"):
    n = pick(size, 96, 1 << 18)
    g = rng("math_extras")
    u = g.uniform(-0.9, 0.9, n)
    p = g.uniform(0.1, 5.0, n)
    q = g.uniform(-3.0, 3.0, n)
    q[np.abs(q - np.round(q)) > 0.49] = 0.25            # no halfway cases for round/rint
    return [u.astype(f32), p.astype(f32), q.astype(f32),
            np.zeros((len(EXTRA_ROWS), n), f32), np.zeros((n, 3, 3), f32),
            np.zeros((n, 3), f32), np.zeros((3, n), i32)]


def _extras_ref(u, p, q, out, outer_out, mv, flags):
    a, b, c = (v.astype(np.float64) for v in (u, p, q))
    erfc = np.vectorize(math.erfc)
    n = len(u)
    v = np.stack([a, b, c], axis=1)
    outer = v[:, :, None] * np.array([1.0, 2.0, 3.0])[None, None, :]
    rows = [10.0 ** a, np.expm1(a), np.log1p(b), np.arcsinh(c), np.arccosh(b + 1), np.arctanh(a),
            erfc(c), np.rint(c), np.fmod(c, 0.75), np.hypot(b, c), np.sign(c), np.abs(c),
            np.minimum(a, c), np.maximum(np.maximum(a, b), c), b ** a, np.sqrt(b), np.floor(c),
            np.abs(c), (v * v).sum(axis=1), (np.arange(n) % 64) // 32]
    return {"out": np.stack(rows).astype(f32), "outer_out": outer.astype(f32),
            "mv": np.einsum("nij,nj->ni", outer, v).astype(f32),
            "flags": np.stack([np.sign(c) * np.floor(np.abs(c) + 0.5), np.full(n, n),
                               (np.arange(n) % 3 != 0)]).astype(i32)}


# -- matrices from vectors, argmin/argmax, div_approx (Warp's mat.h/vec.h builtins) ----------
@wl.kernel
def vec_builders(a: wl.array(dtype=wl.vec3), b: wl.array(dtype=wl.vec3),
                 rows: wl.array(dtype=wl.mat33), cols: wl.array(dtype=wl.mat33),
                 idx: wl.array2d(dtype=wl.uint32), scaled: wl.array(dtype=wl.vec3)):
    i = wl.tid()
    u = a[i]
    v = b[i]
    rows[i] = wl.matrix_from_rows(u, v, u - v)
    cols[i] = wl.matrix_from_cols(u, v, u - v)
    idx[0, i] = wl.argmin(u)
    idx[1, i] = wl.argmax(u)
    total = wl.uint32(0)
    for k in reversed(range(3)):            # Python's reversed(range(...))
        total = total * wl.uint32(4) + wl.argmax(v) + wl.uint32(k)
    idx[2, i] = total
    scaled[i] = wl.div_approx(u, 4.0)


def _builders_inputs(size="small"):
    n = pick(size, 64, 1 << 18)
    g = rng("vec_builders")
    a = g.uniform(-2, 2, (n, 3)).astype(f32)
    b = g.uniform(-2, 2, (n, 3)).astype(f32)
    a[0] = [1.0, 1.0, -1.0]                          # ties: the first index
    a[1] = [np.nan, 3.0, 0.5]                        # NaNs are skipped
    return [a, b, np.zeros((n, 3, 3), f32), np.zeros((n, 3, 3), f32), np.zeros((3, n), np.uint32),
            np.zeros((n, 3), f32)]


def _builders_ref(a, b, rows, cols, idx, scaled):
    m = np.stack([a, b, a - b], axis=1)
    am = np.where(np.isnan(a), np.inf, a).argmin(axis=1)
    ax = np.where(np.isnan(a), -np.inf, a).argmax(axis=1)
    bx = b.argmax(axis=1).astype(np.uint64)
    total = np.zeros(len(a), np.uint64)
    for k in (2, 1, 0):
        total = total * 4 + bx + k
    return {"rows": m, "cols": np.transpose(m, (0, 2, 1)).copy(),
            "idx": np.stack([am, ax, total]).astype(np.uint32), "scaled": a / f32(4.0)}


# -- vector and matrix kernel parameters ------------------------------------------------------
@wl.kernel
def affine(pts: wl.array(dtype=wl.vec3), out: wl.array(dtype=wl.vec3), m: wl.mat33,
           shift: wl.vec3, scale: float):
    i = wl.tid()
    out[i] = (m @ pts[i]) * scale + shift


def _affine_inputs(size="small"):
    n = pick(size, 50, 1 << 20)
    g = rng("affine")
    return [g.uniform(-1, 1, (n, 3)).astype(f32), np.zeros((n, 3), f32),
            np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]], f32),
            np.array([0.5, -0.25, 1.0], f32), 1.5]


def _affine_ref(pts, out, m, shift, scale):
    p = pts.astype(np.float64)
    return {"out": (p @ m.astype(np.float64).T * scale + shift).astype(f32)}


_F32_MATH = Tolerance(rtol=2e-6, atol=1e-6)
_F64_MATH = Tolerance(rtol=1e-14, atol=1e-15)

EXAMPLES = [
    Example("math_f32", math_f32, lambda size="small": _math_inputs(np.float32, size),
            lambda a: Launch(dim=len(a[0]), block_dim=64), _math_ref, ("out", "flags"),
            tolerance={"out": _F32_MATH},
            description="every float32 math builtin through libdevice, isnan/isinf/isfinite"),
    Example("math_f64", math_f64, lambda size="small": _math_inputs(np.float64, size),
            lambda a: Launch(dim=len(a[0]), block_dim=64), _math_ref, ("out", "flags"),
            tolerance={"out": _F64_MATH},
            description="every float64 math builtin through libdevice"),
    Example("vec_mat", vec_mat, _vec_mat_inputs, lambda a: Launch(dim=len(a[0]), block_dim=64),
            _vec_mat_ref, ("crossed", "unit", "mv", "mt", "combo", "scalars"),
            default_tolerance=Tolerance(rtol=1e-5, atol=1e-6),
            description="vec2/3/4, mat22/33: cross, dot, length, normalize, transpose, m @ v"),
    Example("math_extras", math_extras, _extras_inputs,
            lambda a: Launch(dim=len(a[0]), block_dim=64), _extras_ref,
            ("out", "outer_out", "mv", "flags"),
            tolerance={"out": _F32_MATH, "outer_out": _F32_MATH,
                       "mv": Tolerance(rtol=1e-5, atol=1e-5)},
            description="exp10..hypot, sign, outer, mul, length_sq, warp_id, fences; "
                        "Python abs/min/max/pow/round/len/bool and math.sqrt/floor/fabs"),
    Example("vec_builders", vec_builders, _builders_inputs,
            lambda a: Launch(dim=len(a[0]), block_dim=64), _builders_ref,
            ("rows", "cols", "idx", "scaled"), default_tolerance=Tolerance(rtol=0, atol=0),
            description="matrix_from_rows/cols, argmin/argmax (ties, NaNs), div_approx, "
                        "a reversed(range(...)) loop"),
    Example("affine", affine, _affine_inputs, lambda a: Launch(dim=len(a[0]), block_dim=64),
            _affine_ref, ("out",), default_tolerance=Tolerance(rtol=1e-6, atol=1e-6),
            description="mat33 and vec3 kernel parameters passed by value"),
]
