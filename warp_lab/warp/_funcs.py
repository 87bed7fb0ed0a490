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
from warp_lab.lang.types import TypeFamily

#: the ``v`` of math.py's norms: a float vector of any length (a located error otherwise)
FloatVector = TypeFamily("vector", "vec")

__all__ = ["lerp", "where", "select", "smoothstep", "step", "nonzero", "sign", "frac",
           "degrees", "radians", "block_dim", "add", "sub", "mul", "div", "mod", "floordiv", "neg", "pos",
           "cw_mul", "cw_div", "norm_l1", "norm_l2", "norm_huber", "norm_pseudo_huber",
           "smooth_normalize", "expect_eq", "expect_neq", "expect_near", "unot", "rand_init",
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
