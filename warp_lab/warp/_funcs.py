"""Warp builtins that warp_lab writes as device functions of the Warp dialect.

Each is a ``@wp.func`` whose body is what warp-lang 1.19's ``warp/native/builtin.h``
computes (quoted beside it), so it compiles through the same front end as the user's
code, specialised per argument types, and shows in the Python pane as any device
function does. Their names are Warp's (``wp.lerp``, ``wp.where``, ``wp.select`` with
Warp's argument order). Called on the host, each runs as plain Python.
"""

from __future__ import annotations

import warp_lab as wl
from warp_lab.lang.kernel import Func
from warp_lab.lang import types as _types
from warp_lab.lang.types import TypeFamily

#: the ``v`` of math.py's norms: a float vector of any length (a located error otherwise)
FloatVector = TypeFamily("vector", "vec")

__all__ = ["lerp", "where", "select", "smoothstep", "step", "nonzero", "sign", "frac",
           "degrees", "radians", "block_dim", "add", "sub", "mul", "div", "mod", "floordiv", "neg", "pos",
           "cw_mul", "cw_div", "norm_l1", "norm_l2", "norm_huber", "norm_pseudo_huber",
           "smooth_normalize", "determinant", "inverse", "inverse_approx", "expect_eq", "expect_neq", "expect_near", "unot", "rand_init",
           "randi", "randu", "randf", "randn"]


def _warp(fn) -> Func:
    return Func(fn, dialect="warp")


@_warp
def lerp(a, b, t):
    # builtin.h: lerp(a, b, t) = a*(1-t) + b*t
    return a * (1.0 - t) + b * t


@_warp
def where(cond, value_if_true, value_if_false):
    # builtin.h: where(cond, a, b) = cond ? a : b
    return wl.select(cond, value_if_true, value_if_false)


@_warp
def select(cond, value_if_false, value_if_true):
    # builtin.h: select(cond, a, b) = cond ? b : a (Warp's order, deprecated for where)
    return wl.select(cond, value_if_true, value_if_false)


@_warp
def smoothstep(a, b, x):
    # builtin.h: t = clamp((x - a) / (b - a), 0, 1); t * t * (3 - 2 * t)
    t = wl.clamp((x - a) / (b - a), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


@_warp
def step(x):
    # builtin.h: step(x) = x < 0 ? 1 : 0, in x's type
    s = wl.sign(x)
    z = s - s
    return wl.select(x < 0, z + 1, z)


@_warp
def nonzero(x):
    # builtin.h: nonzero(x) = x == 0 ? 0 : 1, in x's type
    s = wl.sign(x)
    z = s - s
    return wl.select(x == 0, z, z + 1)


@_warp
def sign(x):
    # builtin.h: sign(x) = x < 0 ? -1 : 1 (0 gives 1, unlike wl.sign)
    s = wl.sign(x)
    return wl.select(x < 0, s, s - s + 1)


@_warp
def frac(x):
    # builtin.h: frac(x) = x - trunc(x)
    return x - wl.trunc(x)


@_warp
def degrees(x):
    # builtin.h: x * RAD_TO_DEG
    return x * 57.29577951308232


@_warp
def radians(x):
    # builtin.h: x * DEG_TO_RAD
    return x * 0.017453292519943295


@_warp
def block_dim():
    # Warp's block_dim(): the launch's threads per block (1-D blocks: CUDA's blockDim.x)
    return wl.block_dim.x


@_warp
def add(a, b):
    return a + b


@_warp
def sub(a, b):
    return a - b


@_warp
def mul(a, b):
    return a * b


@_warp
def div(a, b):
    # Warp's div: C's truncating integer division (the dialect's /)
    return a / b


@_warp
def mod(a, b):
    # Warp's mod: C's remainder (fmod for floats; the dialect's %)
    return a % b


@_warp
def floordiv(a, b):
    return a // b


@_warp
def neg(x):
    return -x


@_warp
def pos(x):
    return x


@_warp
def unot(b):
    return not b


@_warp
def cw_mul(a, b):
    return a * b


@_warp
def cw_div(a, b):
    return a / b


# -- norms (warp-lang 1.19 warp/_src/math.py: @wp.func bodies, the same statements) --------
@_warp
def _dot_self(v):
    # vec.h dot(v, v): ret += v[i] * v[i], a rounding per operation (Warp's C++ is compiled
    # without contraction; warp_lab fuses a * b + c written in one expression, wl.dot too)
    a = v[0] * v[0]
    for i in range(1, len(v)):
        p = v[i] * v[i]
        a = a + p
    return a


@_warp
def norm_l1(v: FloatVector):
    # math.py norm_l1: sum of |v_i|, accumulated in float32 (n = float(0.0))
    n = wl.float32(0.0)
    for i in range(len(v)):
        n += wl.abs(v[i])
    return n


@_warp
def norm_l2(v: FloatVector):
    # math.py norm_l2: wp.length(v), vec.h's sqrt(dot(v, v)) (unfused: _dot_self)
    return wl.sqrt(_dot_self(v))


@_warp
def norm_huber(v: FloatVector, delta: float = 1.0):
    # math.py norm_huber: a = dot(v, v); 0.5 a if a <= delta^2 else delta (sqrt(a) - delta / 2)
    a = _dot_self(v)
    if a <= delta * delta:
        return 0.5 * a
    h = 0.5 * delta
    return delta * (wl.sqrt(a) - h)


@_warp
def norm_pseudo_huber(v: FloatVector, delta: float = 1.0):
    # math.py norm_pseudo_huber: delta * sqrt(1 + dot(v, v) / delta^2)
    a = _dot_self(v)
    return delta * wl.sqrt(1.0 + a / (delta * delta))


@_warp
def smooth_normalize(v: FloatVector, delta: float = 1.0):
    # math.py smooth_normalize: v / norm_pseudo_huber(v, delta) (a zero vector gives zero)
    return v / norm_pseudo_huber(v, delta)


@_warp
def expect_eq(actual, expected):
    # builtin.h: if (!(actual == expected)) { printf("Error, expect_eq() failed:\n"); ... }
    if actual != expected:
        print("Error, expect_eq() failed:")
        wl.printf("\t Expected: ")
        print(expected)
        wl.printf("\t Actual: ")
        print(actual)


@_warp
def expect_neq(actual, expected):
    if actual == expected:
        print("Error, expect_neq() failed:")
        wl.printf("\t Expected: ")
        print(expected)
        wl.printf("\t Actual: ")
        print(actual)


@_warp
def expect_near(actual, expected, tolerance=1.0e-6):
    # (builtins.py: tolerance defaults to 1.0e-6)
    if wl.abs(actual - expected) > tolerance:
        wl.printf("Error, expect_near() failed with tolerance ")
        print(tolerance)
        wl.printf("    Expected: ")
        print(expected)
        wl.printf("    Actual: ")
        print(actual)
        wl.printf("    Absolute difference: ")
        print(wl.abs(actual - expected))


# -- random numbers (warp/native/rand.h: PCG hash, Jarzynski & Olano, JCGT 2020) -----------
# A state is a uint32 the caller keeps (state = wp.rand_init(seed)); randf(state) and the
# others take it by reference in Warp (uint32& state): here they return (new state, value)
# and the front end stores the new state back into the caller's variable
# (Func.state_param, typing_builtins._stateful_call), so the streams are Warp's, bit for bit.

def _stateful(fn) -> Func:
    f = Func(fn, dialect="warp")
    f.state_param = True
    return f


@_warp
def _pcg(state: wl.uint32):
    b = state * wl.uint32(747796405) + wl.uint32(2891336453)
    c = ((b >> ((b >> wl.uint32(28)) + wl.uint32(4))) ^ b) * wl.uint32(277803737)
    return (c >> wl.uint32(22)) ^ c


@_warp
def _rand_init1(seed: int):
    # rand_init(seed) = rand_pcg(uint32(seed))
    return _pcg(wl.bitcast(seed, wl.uint32))


@_warp
def _rand_init2(seed: int, offset: int):
    # rand_init(seed, offset) = rand_pcg(uint32(seed) + rand_pcg(uint32(offset)))
    return _pcg(wl.bitcast(seed, wl.uint32) + _pcg(wl.bitcast(offset, wl.uint32)))


@_stateful
def _randi1(state: wl.uint32):
    s = _pcg(state)
    return s, wl.bitcast(s, wl.int32)


@_stateful
def _randi3(state: wl.uint32, low: int, high: int):
    # state % (max - min) + min, in C's unsigned arithmetic, returned as int
    s = _pcg(state)
    return s, wl.bitcast(s % wl.bitcast(high - low, wl.uint32) + wl.bitcast(low, wl.uint32),
                         wl.int32)


@_stateful
def _randu1(state: wl.uint32):
    s = _pcg(state)
    return s, s


@_stateful
def _randu3(state: wl.uint32, low: wl.uint32, high: wl.uint32):
    s = _pcg(state)
    return s, s % (high - low) + low


@_stateful
def _randf1(state: wl.uint32):
    # (state >> 8) * (1.0f / 16777216.0f): [0, 1 - 2**-24] in steps of 2**-24
    s = _pcg(state)
    return s, wl.float32(s >> wl.uint32(8)) * 5.9604644775390625e-08


@_stateful
def _randf3(state: wl.uint32, low: float, high: float):
    # (max - min) * randf(state) + min, rounded twice (no fused multiply-add), as C++ writes it
    s = _pcg(state)
    t = (high - low) * (wl.float32(s >> wl.uint32(8)) * 5.9604644775390625e-08)
    return s, t + low


@_stateful
def randn(state: wl.uint32):
    # sqrt(-2 log(randf(state) + RANDN_EPSILON)) * cos(2 pi randf(state)), left to right
    s1 = _pcg(state)
    u1 = wl.float32(s1 >> wl.uint32(8)) * 5.9604644775390625e-08
    s2 = _pcg(s1)
    u2 = wl.float32(s2 >> wl.uint32(8)) * 5.9604644775390625e-08
    r = wl.sqrt(-2.0 * wl.log(u1 + 5.96e-8))
    return s2, r * wl.cos(6.2831854820251465 * u2)


def _overloads(*fs):
    from warp_lab.lang.kernel import FuncOverloads
    return FuncOverloads(list(fs))


rand_init = _overloads(_rand_init1, _rand_init2)
randi = _overloads(_randi1, _randi3)
randu = _overloads(_randu1, _randu3)
randf = _overloads(_randf1, _randf3)


# -- determinant, inverse (warp-lang 1.19 warp/native/mat.h, 2x2, 3x3, 4x4) ------------------
# One float operation per statement (Warp's C++ is compiled without contraction), in mat.h's
# order and precisions: the 4x4 forms keep mat.h's double-precision 2x2 minors and cofactors
# (``double y01, ...``) beside its Type ones. One function per matrix type (float32, float64).

def _typed(fn, name: str, **annotations) -> Func:
    """``fn`` as a Warp-dialect function called ``name`` whose parameters have the types
    ``annotations`` (one overload of a set)."""
    fn.__annotations__ = dict(annotations)
    fn.__name__ = fn.__qualname__ = name
    return Func(fn, dialect="warp")


def _matrix_funcs(T, M2, M3, M4):
    """determinant, inverse of ``M2``/``M3``/``M4`` (matrices of the float type ``T``)."""
    D = wl.float64

    def det2(m):
        # m00 * m11 - m10 * m01
        p = m[0, 0] * m[1, 1]
        q = m[1, 0] * m[0, 1]
        return p - q

    def det3(m):
        # dot(row 0, cross(row 1, row 2)); vec.h cross and the 3-vector dot, left to right
        p = m[1, 1] * m[2, 2]
        q = m[1, 2] * m[2, 1]
        c0 = p - q
        p = m[1, 2] * m[2, 0]
        q = m[1, 0] * m[2, 2]
        c1 = p - q
        p = m[1, 0] * m[2, 1]
        q = m[1, 1] * m[2, 0]
        c2 = p - q
        s = m[0, 0] * c0
        t = m[0, 1] * c1
        s = s + t
        t = m[0, 2] * c2
        return s + t

    def minor(a, b, c, d):
        # a * b - c * d in Type, then widened (mat.h: double y01 = x00 * x11 - x10 * x01)
        p = a * b
        q = c * d
        return D(p - q)

    def cof(a, y1, b, y2, c, y3, plus: bool):
        # a * y1 - b * y2 (+|-) c * y3 in double (a float times a double is a double)
        p = D(a) * y1
        q = D(b) * y2
        r = p - q
        s = D(c) * y3
        if plus:
            return r + s
        return r - s

    def elems4(m):
        # a 4x4's elements, the first two columns' then the last two's (mat.h's names)
        return (m[0, 0], m[0, 1], m[1, 0], m[1, 1], m[2, 0], m[2, 1], m[3, 0], m[3, 1],
                m[0, 2], m[0, 3], m[1, 2], m[1, 3], m[2, 2], m[2, 3], m[3, 2], m[3, 3])

    def det4_parts(m):
        # mat.h 4x4: the cofactors of the first two columns from the minors of the last two
        (x00, x01, x10, x11, x20, x21, x30, x31,
         x02, x03, x12, x13, x22, x23, x32, x33) = elems4(m)
        y01 = minor(x02, x13, x12, x03)
        y02 = minor(x02, x23, x22, x03)
        y03 = minor(x02, x33, x32, x03)
        y12 = minor(x12, x23, x22, x13)
        y13 = minor(x12, x33, x32, x13)
        y23 = minor(x22, x33, x32, x23)
        z30 = T(cof(x11, y02, x21, y01, x01, y12, False))
        z20 = T(cof(x01, y13, x11, y03, x31, y01, True))
        z10 = T(cof(x21, y03, x31, y02, x01, y23, False))
        z00 = T(cof(x11, y23, x21, y13, x31, y12, True))
        # det = x30 * z30 + x20 * z20 + x10 * z10 + x00 * z00, in Type
        s = x30 * z30
        t = x20 * z20
        s = s + t
        t = x10 * z10
        s = s + t
        t = x00 * z00
        return s + t, y01, y02, y03, y12, y13, y23

    def det4(m):
        det, y01, y02, y03, y12, y13, y23 = det4_parts(m)
        return det

    def inv2(m):
        det = det2(m)
        if det > 0.0 or det < -0.0:
            rcp = 1.0 / det
            return M2(m[1, 1], -m[0, 1], -m[1, 0], m[0, 0]) * rcp
        return M2()

    def inv3(m):
        det = det3(m)
        if det != 0.0:
            b00 = m[1, 1] * m[2, 2]
            t = m[1, 2] * m[2, 1]
            b00 = b00 - t
            b10 = m[1, 2] * m[2, 0]
            t = m[1, 0] * m[2, 2]
            b10 = b10 - t
            b20 = m[1, 0] * m[2, 1]
            t = m[1, 1] * m[2, 0]
            b20 = b20 - t
            b01 = m[0, 2] * m[2, 1]
            t = m[0, 1] * m[2, 2]
            b01 = b01 - t
            b11 = m[0, 0] * m[2, 2]
            t = m[0, 2] * m[2, 0]
            b11 = b11 - t
            b21 = m[0, 1] * m[2, 0]
            t = m[0, 0] * m[2, 1]
            b21 = b21 - t
            b02 = m[0, 1] * m[1, 2]
            t = m[0, 2] * m[1, 1]
            b02 = b02 - t
            b12 = m[0, 2] * m[1, 0]
            t = m[0, 0] * m[1, 2]
            b12 = b12 - t
            b22 = m[0, 0] * m[1, 1]
            t = m[0, 1] * m[1, 0]
            b22 = b22 - t
            rcp = 1.0 / det
            return M3(b00, b01, b02, b10, b11, b12, b20, b21, b22) * rcp
        return M3()

    def inv4(m):
        (x00, x01, x10, x11, x20, x21, x30, x31,
         x02, x03, x12, x13, x22, x23, x32, x33) = elems4(m)
        # the minors of the first two columns, the cofactors of the last two (double)
        y01 = minor(x00, x11, x10, x01)
        y02 = minor(x00, x21, x20, x01)
        y03 = minor(x00, x31, x30, x01)
        y12 = minor(x10, x21, x20, x11)
        y13 = minor(x10, x31, x30, x11)
        y23 = minor(x20, x31, x30, x21)
        z33 = cof(x02, y12, x12, y02, x22, y01, True)
        z23 = cof(x12, y03, x32, y01, x02, y13, False)
        z13 = cof(x02, y23, x22, y03, x32, y02, True)
        z03 = cof(x22, y13, x32, y12, x12, y23, False)
        z32 = cof(x13, y02, x23, y01, x03, y12, False)
        z22 = cof(x03, y13, x13, y03, x33, y01, True)
        z12 = cof(x23, y03, x33, y02, x03, y23, False)
        z02 = cof(x13, y23, x23, y13, x33, y12, True)
        det, y01, y02, y03, y12, y13, y23 = det4_parts(m)
        z30 = T(cof(x11, y02, x21, y01, x01, y12, False))
        z20 = T(cof(x01, y13, x11, y03, x31, y01, True))
        z10 = T(cof(x21, y03, x31, y02, x01, y23, False))
        z00 = T(cof(x11, y23, x21, y13, x31, y12, True))
        z31 = T(cof(x00, y12, x10, y02, x20, y01, True))
        z21 = T(cof(x10, y03, x30, y01, x00, y13, False))
        z11 = T(cof(x00, y23, x20, y03, x30, y02, True))
        z01 = T(cof(x20, y13, x30, y12, x10, y23, False))
        d = D(det)
        if wl.abs(d) > 0.0:
            rcp = 1.0 / d
            return M4(T(D(z00) * rcp), T(D(z10) * rcp), T(D(z20) * rcp), T(D(z30) * rcp),
                      T(D(z01) * rcp), T(D(z11) * rcp), T(D(z21) * rcp), T(D(z31) * rcp),
                      T(z02 * rcp), T(z12 * rcp), T(z22 * rcp), T(z32 * rcp),
                      T(z03 * rcp), T(z13 * rcp), T(z23 * rcp), T(z33 * rcp))
        return M4()

    helpers = [Func(f, dialect="warp") for f in (minor, cof, elems4, det4_parts)]
    minor, cof, elems4, det4_parts = helpers   # (the closures above call these device functions)
    det2, det3 = _typed(det2, "determinant", m=M2), _typed(det3, "determinant", m=M3)
    dets = [det2, det3, _typed(det4, "determinant", m=M4)]   # (inv2, inv3 call det2, det3)
    invs = [_typed(inv2, "inverse", m=M2), _typed(inv3, "inverse", m=M3),
            _typed(inv4, "inverse", m=M4)]
    return dets, invs


_DETS, _INVS = [], []
for _T, _Ms in ((_types.float32, (_types.mat22, _types.mat33, _types.mat44)),
                (_types.float64, (_types.mat22d, _types.mat33d, _types.mat44d))):
    _d, _i = _matrix_funcs(_T, *_Ms)
    _DETS += _d
    _INVS += _i
determinant = _overloads(*_DETS)
inverse = _overloads(*_INVS)
# builtin.h approx_inverse: on the CPU the same code as inverse (approx_rcp is 1 / x there);
# Warp's GPU code takes the determinant's reciprocal with rcp.approx.f32 / rcp.approx.ftz.f64
inverse_approx = _overloads(*_INVS)
