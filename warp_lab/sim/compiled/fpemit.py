"""The interpreter's floating-point rules (:mod:`warp_lab.sim.fp`) as LLVM IR.

Each function emits, at the builder's position, the same computation the interpreter
does with numpy, step for step where LLVM's own operation would give other bits:
``.ftz`` flushing, ``.sat`` clamping, the GPU's canonical float32 NaN (0x7fffffff),
round-to-odd sums for a single-rounding float32 FMA in a directed mode, re-rounding a
float64 to float32 toward zero/-inf/+inf, ``nextafter``, and PTX's rule that ``max``
of +0.0 and -0.0 is +0.0 (numpy's and LLVM's pick one by position).
"""

from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from warp_lab.sim.compiled.values import F32, F64, I1, I32, I64, V, lty

__all__ = ["ftz", "sat", "canonical_nan", "isnan", "isfinite", "nextafter", "round_f64_to_f32",
           "round_odd_sum", "signbit", "fminmax", "intrinsic", "select"]

_TINY32 = float(np.finfo(np.float32).tiny)
_TINY64 = float(np.finfo(np.float64).tiny)


def intrinsic(b: ir.IRBuilder, name: str, ret, args):
    """Call LLVM intrinsic ``name`` (e.g. ``llvm.fma.f32``) with ``args`` (ir values)."""
    mod = b.module
    fn = mod.globals.get(name)
    if fn is None:
        fn = ir.Function(mod, ir.FunctionType(ret, [a.type for a in args]), name=name)
    return b.call(fn, args)


def select(b, c, x, y):
    return b.select(c, x, y)


def isnan(b, x):
    return b.fcmp_unordered("uno", x, x)


def isfinite(b, x):
    """``|x| < inf`` (false for NaN and ±inf)."""
    ax = intrinsic(b, f"llvm.fabs.{_suffix(x.type)}", x.type, [x])
    return b.fcmp_ordered("<", ax, ir.Constant(x.type, float("inf")))


def _suffix(t):
    return {F32: "f32", F64: "f64"}.get(t) or ("f16" if isinstance(t, ir.HalfType) else "f64")


def _ity(t):
    return I32 if t == F32 else I64


def signbit(b, x):
    """The sign bit of float ``x`` as ``i1``."""
    it = _ity(x.type)
    return b.icmp_signed("<", b.bitcast(x, it), ir.Constant(it, 0))


def ftz(b, x: V) -> V:
    """:func:`warp_lab.sim.fp.ftz`: a subnormal becomes a zero of its sign (f32 only;
    the interpreter applies it where ``.ftz`` is written and the type is f32)."""
    t = x.v.type
    tiny = _TINY32 if t == F32 else _TINY64
    ax = intrinsic(b, f"llvm.fabs.{_suffix(t)}", t, [x.v])
    small = b.fcmp_ordered("<", ax, ir.Constant(t, tiny))
    zero = intrinsic(b, f"llvm.copysign.{_suffix(t)}", t, [ir.Constant(t, 0.0), x.v])
    return V(b.select(small, zero, x.v), x.dt)


def sat(b, x: V) -> V:
    """:func:`warp_lab.sim.fp.sat`: clamp to [0, 1], NaN → +0.0 (``np.clip`` keeps the
    sign of a -0.0 input, as here)."""
    t = x.v.type
    zero, one = ir.Constant(t, 0.0), ir.Constant(t, 1.0)
    lo = b.fcmp_ordered("<", x.v, zero)
    hi = b.fcmp_ordered(">", x.v, one)
    v = b.select(lo, zero, b.select(hi, one, x.v))
    return V(b.select(isnan(b, x.v), zero, v), x.dt)


def canonical_nan(b, x: V) -> V:
    """:func:`warp_lab.sim.fp.canonical_nan`: a float32 NaN becomes 0x7fffffff.

    Done on the bits and returned as the ``uint32`` bits: LLVM treats NaN payloads as
    unspecified, so a float ``select(isnan(x), NaN, x)`` may be folded to ``x``; an
    integer select keeps the pattern. The value goes to a register (raw bits) next."""
    if x.v.type != F32:
        return x
    bits = b.bitcast(x.v, I32)
    mag = b.and_(bits, ir.Constant(I32, 0x7FFFFFFF))
    nan = b.icmp_unsigned(">", mag, ir.Constant(I32, 0x7F800000))
    return V(b.select(nan, ir.Constant(I32, 0x7FFFFFFF), bits), np.dtype(np.uint32))


def nextafter(b, x, up):
    """``np.nextafter(x, +inf if up else -inf)`` for a finite or infinite ``x`` (``up``
    an ``i1``; NaN is left to the caller): zeros step to the smallest subnormal of the
    direction's sign, other values one unit in the last place."""
    t = x.type
    it = _ity(t)
    bits = b.bitcast(x, it)
    is_zero = b.fcmp_ordered("==", x, ir.Constant(t, 0.0))
    pos = b.icmp_signed(">=", bits, ir.Constant(it, 0))
    grow = b.icmp_unsigned("==", pos, up)          # magnitude grows: +1 on the bits
    stepped = b.select(grow, b.add(bits, ir.Constant(it, 1)), b.sub(bits, ir.Constant(it, 1)))
    sign = ir.Constant(it, 1 << (it.width - 1))
    tiny = b.select(up, ir.Constant(it, 1), b.or_(sign, ir.Constant(it, 1)))
    return b.bitcast(b.select(is_zero, tiny, stepped), t)


def _toward(b, x, target: float):
    """``np.nextafter(x, target)`` for ``target`` 0.0, -inf or +inf and ``x != target``."""
    t = x.type
    if target == 0.0:
        up = b.fcmp_ordered("<", x, ir.Constant(t, 0.0))
    else:
        up = ir.Constant(I1, int(target > 0))
    return nextafter(b, x, up)


def round_f64_to_f32(b, x, mode: str):
    """:func:`warp_lab.sim.fp.round_f64_to_f32`: float64 ``x`` (ir double) → float32 in
    ``mode`` (``rn``, ``rz``, ``rm``, ``rp``)."""
    r = b.fptrunc(x, F32)
    if mode == "rn":
        return r
    back = b.fpext(r, F64)
    if mode == "rz":
        fabs = lambda v: intrinsic(b, "llvm.fabs.f64", F64, [v])  # noqa: E731
        step = b.fcmp_ordered(">", fabs(back), fabs(x))
        target = 0.0
    elif mode == "rm":
        step = b.fcmp_ordered(">", back, x)
        target = float("-inf")
    else:
        step = b.fcmp_ordered("<", back, x)
        target = float("inf")
    step = b.and_(step, isfinite(b, x))
    return b.select(step, _toward(b, r, target), r)


def round_odd_sum(b, a, c):
    """:func:`warp_lab.sim.fp._round_odd_sum`: float64 ``a + c`` rounded to odd (the
    two-sum error kept as a sticky last bit)."""
    s = b.fadd(a, c)
    bb = b.fsub(s, a)
    e = b.fadd(b.fsub(a, b.fsub(s, bb)), b.fsub(c, bb))
    even = b.icmp_unsigned("==", b.and_(b.bitcast(s, I64), ir.Constant(I64, 1)),
                           ir.Constant(I64, 0))
    fix = b.and_(b.and_(b.fcmp_unordered("!=", e, ir.Constant(F64, 0.0)), even),
                 isfinite(b, s))
    moved = nextafter(b, s, b.fcmp_ordered(">", e, ir.Constant(F64, 0.0)))
    return b.select(fix, moved, s)


def fminmax(b, x, y, big: bool, nan_propagating: bool):
    """PTX ``max``/``min`` of two floats (:func:`warp_lab.sim.alu._minmax`): without
    ``.NaN`` numpy's ``fmax``/``fmin`` (a NaN operand gives the other), with it
    ``maximum``/``minimum`` (a NaN operand gives NaN, the first one's); then
    :func:`warp_lab.sim.fp.signed_zeros` (two zeros: max is -0.0 only when both are, min
    is -0.0 when either is)."""
    t = x.type
    cmp = b.fcmp_ordered(">" if big else "<", x, y)
    # numpy: fmax(a, b) is a when a >= b or b is NaN; maximum(a, b) is NaN when either
    # is (a's NaN when a is one, else b's)
    pick = b.select(cmp, x, y)
    eq = b.fcmp_ordered("==", x, y)
    pick = b.select(eq, x, pick)
    nx, ny = isnan(b, x), isnan(b, y)
    if nan_propagating:   # maximum(a, b): the first NaN
        r = b.select(nx, x, b.select(ny, y, pick))
    else:                 # fmax(a, b): the other operand; both NaN: the first
        r = b.select(b.and_(nx, b.not_(ny)), y, b.select(ny, x, pick))
    zero = ir.Constant(t, 0.0)
    zeros = b.and_(b.fcmp_ordered("==", x, zero), b.fcmp_ordered("==", y, zero))
    sx, sy = signbit(b, x), signbit(b, y)
    neg = b.and_(sx, sy) if big else b.or_(sx, sy)
    z = b.select(neg, ir.Constant(t, -0.0), zero)
    return b.select(zeros, z, r)


def ltype(dt):
    return lty(dt)
