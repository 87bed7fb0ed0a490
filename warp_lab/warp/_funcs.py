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

__all__ = ["lerp", "where", "select", "smoothstep", "step", "nonzero", "sign", "frac",
           "degrees", "radians", "add", "sub", "mul", "div", "mod", "floordiv", "neg", "pos",
           "cw_mul", "cw_div", "expect_eq", "expect_neq", "expect_near", "unot"]


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
def expect_near(actual, expected, tolerance):
    if wl.abs(actual - expected) > tolerance:
        wl.printf("Error, expect_near() failed with tolerance ")
        print(tolerance)
        wl.printf("    Expected: ")
        print(expected)
        wl.printf("    Actual: ")
        print(actual)
        wl.printf("    Absolute difference: ")
        print(wl.abs(actual - expected))
