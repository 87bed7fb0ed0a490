"""Arithmetic, comparison, conversion and bit instructions as LLVM IR, with the
interpreter's semantics (:mod:`warp_lab.sim.alu`, :mod:`~warp_lab.sim.bits`,
:mod:`~warp_lab.sim.convert`, :mod:`~warp_lab.sim.fp`; PTX ISA 9.7.1–9.7.9).

``EMITTERS`` maps a base opcode to ``emit(t, ins)``, where ``t`` is the
:class:`~warp_lab.sim.compiled.translate.Translator` (its builder ``t.b``, operand
``t.read(op, dtype)`` and ``t.write(op, V)``). Where LLVM's host operation gives other
bits than the interpreter (NaN payloads of float32 results, ``max(+0, -0)``, shifts by
the width or more, division by zero, ``INT_MIN / -1``, float → integer conversion out of
range or of NaN) the PTX rule the interpreter follows is emitted explicitly. What the
compiled tier does not cover (float64 directed rounding, ``.f16`` conversions, directed
integer → float rounding) raises :class:`~warp_lab.sim.compiled.values.Unsupported`, and
the launch runs on the interpreter.
"""

from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from warp_lab.sim.compiled import fpemit as fe
from warp_lab.sim.compiled.values import (BOOL, F32, F64, I1, I32, I64, I128, RAW,
                                          Unsupported, V, astype, const, lty, view)
from warp_lab.sim.ptx import type_dtype

__all__ = ["EMITTERS"]

U32 = np.dtype(np.uint32)
F32D, F64D = np.dtype(np.float32), np.dtype(np.float64)
_BITWISE_FLOAT = {"abs", "neg", "copysign", "mov", "selp", "slct", "testp"}


def _typ(ins, k=0):
    if len(ins.types) <= k:
        raise Unsupported(f"{ins.op} without a type suffix", ins.line)
    return ins.types[k]


def _rmode(ins):
    return next((r for r in ("rn", "rz", "rm", "rp") if r in ins.mods), "rn")


def _post(t, ins, x: V) -> V:
    """``opbuild._fpost``: ftz, sat, canonical NaN of a float result."""
    if x.dt.kind != "f":
        return x
    if "ftz" in ins.mods and x.dt == F32D:
        x = fe.ftz(t.b, x)
    if "sat" in ins.mods:
        x = fe.sat(t.b, x)
    if x.dt == F32D and ins.op not in _BITWISE_FLOAT:
        x = fe.canonical_nan(t.b, x)
    return x


def _srcs(t, ins, dt, n=None):
    """The sources read as ``dt``, f32 inputs flushed under ``.ftz`` (``_nary``)."""
    srcs = ins.srcs if n is None else ins.srcs[:n]
    vals = [t.read(s, dt) for s in srcs]
    if "ftz" in ins.mods and np.dtype(dt) == F32D:
        vals = [fe.ftz(t.b, v) for v in vals]
    return vals


def _nary(t, ins, fn, dt=None, n=None):
    """``d = fn(*sources)`` with ``_nary``'s reading, post-processing and writing."""
    dt = np.dtype(dt or type_dtype(_typ(ins)))
    vals = _srcs(t, ins, dt, n)
    out = fn(*vals)
    t.write(ins.dsts[0], _post(t, ins, out) if dt.kind == "f" else out)


def _wide(dt):
    return np.dtype({1: (np.int16, np.uint16), 2: (np.int32, np.uint32),
                     4: (np.int64, np.uint64)}[dt.itemsize][0 if dt.kind == "i" else 1])


# ---------------------------------------------------------------- float helpers

def _f64_then(t, x: V, fn, dt) -> V:
    """``fn`` computed in float64 and converted to ``dt`` (``alu._f64``)."""
    b = t.b
    d = astype(b, x, F64D)
    r = V(fn(d.v), F64D)
    return astype(b, r, dt)


def _directed32(t, op, mode):
    """``opbuild._directed``: an f32 binary op in float64, rounded in ``mode``."""
    b = t.b

    def f(x, y):
        xd, yd = b.fpext(x.v, F64), b.fpext(y.v, F64)
        return V(fe.round_f64_to_f32(b, op(xd, yd), mode), F32D)
    return f


def _add_sub(t, ins):
    dt = type_dtype(_typ(ins))
    if "cc" in ins.mods or ins.op in ("addc", "subc"):
        return _carry(t, ins)
    b = t.b
    sub = ins.op == "sub"
    if dt.kind == "f":
        mode = _rmode(ins)
        if mode == "rn":
            op = b.fsub if sub else b.fadd
            return _nary(t, ins, lambda x, y: V(op(x.v, y.v), dt))
        if dt != F32D:
            raise Unsupported(f"{ins.op}.{mode}.f64 (float64 directed rounding)", ins.line)

        def directed(x, y):
            yv = b.fneg(y.v) if sub else y.v
            r = _directed32(t, b.fadd, mode)(x, V(yv, dt)).v
            if mode == "rm":   # an exact zero sum of opposite signs is -0 (IEEE 754 6.3)
                zero = b.fcmp_ordered("==", r, ir.Constant(F32, 0.0))
                neg = b.or_(b.or_(fe.signbit(b, x.v), fe.signbit(b, yv)),
                            b.fcmp_unordered("!=", x.v, ir.Constant(F32, 0.0)))
                negabs = b.fneg(fe.intrinsic(b, "llvm.fabs.f32", F32, [r]))
                r = b.select(b.and_(zero, neg), negabs, r)
            return V(r, dt)
        return _nary(t, ins, directed)
    if "sat" in ins.mods:
        def sat(x, y):
            xa, ya = b.sext(x.v, I64), b.sext(y.v, I64)
            r = b.sub(xa, ya) if sub else b.add(xa, ya)
            lo, hi = ir.Constant(I64, -2**31), ir.Constant(I64, 2**31 - 1)
            r = b.select(b.icmp_signed("<", r, lo), lo, b.select(b.icmp_signed(">", r, hi), hi, r))
            return V(b.trunc(r, I32), np.dtype(np.int32))
        return _nary(t, ins, sat)
    op = b.sub if sub else b.add
    return _nary(t, ins, lambda x, y: V(op(x.v, y.v), dt))


def _mulhi(b, x: V, y: V, dt) -> V:
    ext = b.sext if dt.kind == "i" else b.zext
    w = ir.IntType(2 * 8 * dt.itemsize)
    p = b.mul(ext(x.v, w), ext(y.v, w))
    sh = (b.ashr if dt.kind == "i" else b.lshr)(p, ir.Constant(w, 8 * dt.itemsize))
    return V(b.trunc(sh, lty(dt)), dt)


def _mul(t, ins):
    dt = type_dtype(_typ(ins))
    b = t.b
    if dt.kind == "f":
        mode = _rmode(ins)
        if mode == "rn":
            return _nary(t, ins, lambda x, y: V(b.fmul(x.v, y.v), dt))
        if dt != F32D:
            raise Unsupported(f"mul.{mode}.f64 (float64 directed rounding)", ins.line)
        return _nary(t, ins, _directed32(t, b.fmul, mode))
    if "wide" in ins.mods:
        wd = _wide(dt)
        return _nary(t, ins, lambda x, y: V(b.mul(astype(b, x, wd).v, astype(b, y, wd).v), wd))
    if "hi" in ins.mods:
        return _nary(t, ins, lambda x, y: _mulhi(b, x, y, dt))
    return _nary(t, ins, lambda x, y: V(b.mul(x.v, y.v), dt))


def _fma32(t, x, y, z, mode):
    """:func:`warp_lab.sim.fp.fma` for float32: the product exact in float64, the sum
    rounded to odd, then to float32 in ``mode``; a non-finite sum is ``p + c``."""
    b = t.b
    if mode == "rn":
        # the round-to-odd sum rounded to nearest is the correctly rounded a*b + c
        # (Boldo & Melquiond), which is what IEEE fusedMultiplyAdd gives: the host's
        # FMA instruction (or libm's fmaf) has the same bits, NaNs aside (made
        # canonical after); a non-finite sum is p + c either way
        return fe.intrinsic(b, "llvm.fma.f32", F32, [x, y, z])
    p = b.fmul(b.fpext(x, F64), b.fpext(y, F64))
    c = b.fpext(z, F64)
    s = fe.round_odd_sum(b, p, c)
    s = b.select(fe.isfinite(b, s), s, b.fadd(p, c))
    return fe.round_f64_to_f32(b, s, mode)


def _mad(t, ins):
    dt = type_dtype(_typ(ins))
    b = t.b
    if dt.kind == "f":
        mode = _rmode(ins)
        if dt == F32D:
            return _nary(t, ins, lambda x, y, z: V(_fma32(t, x.v, y.v, z.v, mode), dt))
        if dt == F64D and mode == "rn":
            # fp.fma is correctly rounded (Dekker products, rationals where they fail):
            # the host's fused multiply-add gives the same double
            # with a non-finite input, fp.fma computes a*b + c (NaN propagation as the
            # host's multiply and add, not its FMA)
            def fma64(x, y, z):
                fused = fe.intrinsic(b, "llvm.fma.f64", F64, [x.v, y.v, z.v])
                finite = b.and_(b.and_(fe.isfinite(b, x.v), fe.isfinite(b, y.v)),
                                fe.isfinite(b, z.v))
                return V(b.select(finite, fused, b.fadd(b.fmul(x.v, y.v), z.v)), dt)
            return _nary(t, ins, fma64)
        raise Unsupported(f"{ins.op}.{mode}.{_typ(ins)}", ins.line)
    if "cc" in ins.mods or ins.op == "madc":
        return _carry(t, ins)
    if "wide" in ins.mods:
        wd = _wide(dt)
        x, y = (t.read(s, dt) for s in ins.srcs[:2])
        z = t.read(ins.srcs[2], wd)
        p = b.mul(astype(b, x, wd).v, astype(b, y, wd).v)
        return t.write(ins.dsts[0], V(b.add(p, z.v), wd))
    if "hi" in ins.mods:
        return _nary(t, ins, lambda x, y, z: V(b.add(_mulhi(b, x, y, dt).v, z.v), dt))
    return _nary(t, ins, lambda x, y, z: V(b.add(b.mul(x.v, y.v), z.v), dt))


def _carry(t, ins):
    """``alu._carry``: add.cc/addc/sub.cc/subc/mad.lo.cc/madc with the carry flag."""
    dt = type_dtype(_typ(ins))
    ud = RAW[dt.itemsize]
    it = lty(ud)
    b = t.b
    vals = [t.read(s, ud).v for s in ins.srcs]
    sets = "cc" in ins.mods
    uses = ins.op in ("addc", "subc", "madc")
    op = ins.op.rstrip("c") if uses else ins.op
    cin = b.trunc(b.load(t.cc), it) if uses and it != I64 else (b.load(t.cc) if uses else
                                                                  ir.Constant(it, 0))
    if op == "sub":
        a, c = vals
        d = b.sub(b.sub(a, c), cin)
        cout = b.or_(b.icmp_unsigned("<", a, c),
                     b.and_(b.icmp_unsigned("==", a, c), b.icmp_unsigned("!=", cin,
                                                                         ir.Constant(it, 0))))
    else:
        if op == "mad":
            a, m2, c = vals
            x = _mulhi(b, V(a, ud), V(m2, ud), ud).v if "hi" in ins.mods else b.mul(a, m2)
        else:
            x, c = vals
        s1 = b.add(x, c)
        c1 = b.icmp_unsigned("<", s1, x)
        d = b.add(s1, cin)
        cout = b.or_(c1, b.icmp_unsigned("<", d, s1))
    t.write(ins.dsts[0], V(d, ud))
    if sets:
        b.store(b.zext(cout, I64), t.cc)


def _zero_divisor(t, ins, divisor):
    """memcheck: a zero divisor is a ``division_by_zero`` finding, which the
    interpreter reports: leave for it."""
    if "memcheck" in t.checks:
        zero = t.b.icmp_unsigned("==", divisor.v, ir.Constant(divisor.v.type, 0))
        t.bail_if(zero, "division_by_zero", ins)


def _div(t, ins):
    dt = type_dtype(_typ(ins))
    b = t.b
    if dt.kind == "f":
        mode = _rmode(ins)
        if mode != "rn" and "approx" not in ins.mods and "full" not in ins.mods:
            if dt != F32D:
                raise Unsupported(f"div.{mode}.f64 (float64 directed rounding)", ins.line)
            return _nary(t, ins, _directed32(t, b.fdiv, mode))
        if "approx" in ins.mods and dt == F32D:
            def approx(x, y):   # fp.div_approx_f32
                r = b.fptrunc(b.fdiv(ir.Constant(F64, 1.0), b.fpext(y.v, F64)), F32)
                r = fe.ftz(b, V(r, F32D)).v
                return V(b.fmul(x.v, r), dt)
            return _nary(t, ins, approx)
        return _nary(t, ins, lambda x, y: V(b.fdiv(x.v, y.v), dt))
    x, y = (t.read(s, dt) for s in ins.srcs)
    _zero_divisor(t, ins, y)
    it = lty(dt)
    zero = b.icmp_unsigned("==", y.v, ir.Constant(it, 0))
    ones = ir.Constant(it, -1)
    if dt.kind == "i":
        m1 = b.icmp_signed("==", y.v, ones)
        safe = b.select(b.or_(zero, m1), ir.Constant(it, 1), y.v)
        q = b.select(m1, b.neg(x.v), b.sdiv(x.v, safe))
    else:
        safe = b.select(zero, ir.Constant(it, 1), y.v)
        q = b.udiv(x.v, safe)
    t.write(ins.dsts[0], V(b.select(zero, ones, q), dt))


def _rem(t, ins):
    dt = type_dtype(_typ(ins))
    b = t.b
    x, y = (t.read(s, dt) for s in ins.srcs)
    _zero_divisor(t, ins, y)
    it = lty(dt)
    zero = b.icmp_unsigned("==", y.v, ir.Constant(it, 0))
    if dt.kind == "i":
        m1 = b.icmp_signed("==", y.v, ir.Constant(it, -1))
        safe = b.select(b.or_(zero, m1), ir.Constant(it, 1), y.v)
        r = b.srem(x.v, safe)
    else:
        safe = b.select(zero, ir.Constant(it, 1), y.v)
        r = b.urem(x.v, safe)
    t.write(ins.dsts[0], V(b.select(zero, x.v, r), dt))


def _minmax(t, ins):
    dt = type_dtype(_typ(ins))
    b = t.b
    big = ins.op == "max"
    if dt.kind == "f":
        nanp = "NaN" in ins.mods

        def fn(x, y):
            return V(fe.fminmax(b, x.v, y.v, big, nanp), dt)
    else:
        sig = dt.kind == "i"

        def fn(x, y):
            c = (b.icmp_signed if sig else b.icmp_unsigned)(">" if big else "<", x.v, y.v)
            return V(b.select(c, x.v, y.v), dt)
    if len(ins.srcs) == 3:
        return _nary(t, ins, lambda x, y, z: fn(fn(x, y), z))
    return _nary(t, ins, fn)


# ---------------------------------------------------------------- comparisons

_ORD = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
        "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}


def _compare(b, cmp, dt, x, y):
    if dt.kind == "f":
        if cmp in _ORD:
            return b.fcmp_ordered(_ORD[cmp], x, y)   # ne: ordered and different
        if cmp in ("equ", "neu", "ltu", "leu", "gtu", "geu"):
            return b.fcmp_unordered(_ORD[cmp[:-1]], x, y)
        if cmp == "num":
            return b.fcmp_ordered("ord", x, y)
        if cmp == "nan":
            return b.fcmp_unordered("uno", x, y)
        return None
    if cmp not in _ORD:
        return None
    if dt == BOOL:
        return b.icmp_unsigned(_ORD[cmp], x, y) if cmp in ("eq", "ne") else None
    return (b.icmp_signed if dt.kind == "i" else b.icmp_unsigned)(_ORD[cmp], x, y)


def _setp(t, ins):
    cmp = ins.mods[0]
    dt = type_dtype(_typ(ins))
    if dt.kind in "iu" and cmp in ("lo", "ls", "hi", "hs"):
        dt = RAW[dt.itemsize]
    b = t.b
    x, y = t.read(ins.srcs[0], dt), t.read(ins.srcs[1], dt)
    if "ftz" in ins.mods and dt == F32D:
        x, y = fe.ftz(b, x), fe.ftz(b, y)
    p = _compare(b, cmp, dt, x.v, y.v)
    if p is None:
        raise Unsupported(f"setp.{cmp}.{_typ(ins)}", ins.line)
    boolop = next((o for o in ("and", "or", "xor") if o in ins.mods[1:]), None)
    d = ins.dsts[0]
    dp, dq = (d[1], d[2]) if d[0] == "pair" else (d, None)
    q = b.not_(p)
    if boolop:
        c = t.read(ins.srcs[2], BOOL).v
        comb = {"and": b.and_, "or": b.or_, "xor": b.xor}[boolop]
        p, q = comb(p, c), comb(q, c)
    t.write(dp, V(p, BOOL))
    if dq is not None:
        t.write(dq, V(q, BOOL))


def _selp(t, ins):
    dt = type_dtype(_typ(ins))
    x, y = t.read(ins.srcs[0], dt), t.read(ins.srcs[1], dt)
    p = t.read(ins.srcs[2], BOOL)
    t.write(ins.dsts[0], V(t.b.select(p.v, x.v, y.v), dt))


def _slct(t, ins):
    dt, ct = type_dtype(ins.types[0]), type_dtype(ins.types[1])
    b = t.b
    x, y, c = t.read(ins.srcs[0], dt), t.read(ins.srcs[1], dt), t.read(ins.srcs[2], ct)
    ge = b.fcmp_ordered(">=", c.v, ir.Constant(c.v.type, 0.0)) if ct.kind == "f" else \
        b.icmp_signed(">=", c.v, ir.Constant(c.v.type, 0))
    t.write(ins.dsts[0], V(b.select(ge, x.v, y.v), dt))


# ---------------------------------------------------------------- float math

_LIBM = {"ex2": "llvm.exp2.f64", "lg2": "llvm.log2.f64", "sin": "llvm.sin.f64",
         "cos": "llvm.cos.f64"}


def _unary_float(t, ins):
    dt = type_dtype(_typ(ins))
    b = t.b
    op = ins.op
    mode = _rmode(ins)
    exact = any(r in ins.mods for r in ("rn", "rz", "rm", "rp"))
    one64 = ir.Constant(F64, 1.0)
    sqrt64 = lambda v: fe.intrinsic(b, "llvm.sqrt.f64", F64, [v])  # noqa: E731
    if dt.itemsize == 2:
        raise Unsupported(f"{op}.f16", ins.line)
    if op in ("abs", "neg"):
        sfx = "f32" if dt == F32D else "f64"
        fn = (lambda x: V(fe.intrinsic(b, f"llvm.fabs.{sfx}", x.v.type, [x.v]), dt)) \
            if op == "abs" else (lambda x: V(b.fneg(x.v), dt))
        return _nary(t, ins, fn)
    if op in ("rcp", "rsqrt") and dt == F64D and "approx" in ins.mods and "ftz" in ins.mods:
        return _nary(t, ins, lambda x: _gross_f64(t, x, op))
    if op == "rcp" and exact and mode != "rn":
        if dt != F32D:
            raise Unsupported(f"rcp.{mode}.f64 (float64 directed rounding)", ins.line)
        return _nary(t, ins, lambda x: V(fe.round_f64_to_f32(
            b, b.fdiv(one64, b.fpext(x.v, F64)), mode), dt))
    if op == "sqrt" and exact and mode != "rn":
        if dt != F32D:
            raise Unsupported(f"sqrt.{mode}.f64 (float64 directed rounding)", ins.line)
        return _nary(t, ins, lambda x: V(fe.round_f64_to_f32(b, sqrt64(b.fpext(x.v, F64)),
                                                              mode), dt))
    if op == "sqrt":
        if exact or dt == F64D:
            sfx = "f32" if dt == F32D else "f64"
            return _nary(t, ins, lambda x: V(fe.intrinsic(b, f"llvm.sqrt.{sfx}", x.v.type,
                                                          [x.v]), dt))
        return _nary(t, ins, lambda x: _f64_then(t, x, sqrt64, dt))
    if op == "rsqrt":
        return _nary(t, ins, lambda x: _f64_then(t, x, lambda v: b.fdiv(one64, sqrt64(v)), dt))
    if op == "rcp":
        if exact:
            return _nary(t, ins, lambda x: V(b.fdiv(ir.Constant(x.v.type, 1.0), x.v), dt))
        return _nary(t, ins, lambda x: _f64_then(t, x, lambda v: b.fdiv(one64, v), dt))
    if op in _LIBM:
        return _nary(t, ins, lambda x: _f64_then(
            t, x, lambda v: fe.intrinsic(b, _LIBM[op], F64, [v]), dt))
    if op == "tanh":
        return _nary(t, ins, lambda x: _f64_then(t, x, lambda v: t.libm("tanh", v), dt))
    raise Unsupported(f"{op}.{_typ(ins)}", ins.line)


def _gross_f64(t, x: V, op) -> V:
    """:func:`warp_lab.sim.fp.gross_f64`: ``rcp``/``rsqrt.approx.ftz.f64`` of the upper
    word, the result's upper word kept, subnormals flushed, NaN → 0x7fffffff00000000."""
    b = t.b
    hi_mask = ir.Constant(I64, 0xFFFFFFFF00000000)
    hi = b.bitcast(b.and_(b.bitcast(x.v, I64), hi_mask), F64)
    hi = fe.ftz(b, V(hi, F64D)).v
    one = ir.Constant(F64, 1.0)
    r = b.fdiv(one, hi) if op == "rcp" else b.fdiv(one, fe.intrinsic(b, "llvm.sqrt.f64", F64,
                                                                     [hi]))
    r = fe.ftz(b, V(r, F64D)).v
    bits = b.and_(b.bitcast(r, I64), hi_mask)
    bits = b.select(fe.isnan(b, r), ir.Constant(I64, 0x7FFFFFFF00000000), bits)
    return V(b.bitcast(bits, F64), F64D)


def _copysign(t, ins):
    b = t.b
    dt = type_dtype(_typ(ins))
    sfx = "f32" if dt == F32D else "f64"
    _nary(t, ins, lambda x, y: V(fe.intrinsic(b, f"llvm.copysign.{sfx}", y.v.type,
                                              [y.v, x.v]), dt))


def _testp(t, ins):
    kind = ins.mods[0]
    dt = type_dtype(_typ(ins))
    b = t.b
    x = t.read(ins.srcs[0], dt).v
    tiny = ir.Constant(x.type, float(np.finfo(dt).tiny))
    ax = fe.intrinsic(b, f"llvm.fabs.{'f32' if dt == F32D else 'f64'}", x.type, [x])
    inf = ir.Constant(x.type, float("inf"))
    fns = {"finite": lambda: b.fcmp_ordered("<", ax, inf),
           "infinite": lambda: b.fcmp_ordered("==", ax, inf),
           "number": lambda: b.fcmp_ordered("ord", x, x),
           "notanumber": lambda: b.fcmp_unordered("uno", x, x),
           "normal": lambda: b.and_(b.fcmp_ordered("<", ax, inf), b.fcmp_ordered(">=", ax, tiny)),
           "subnormal": lambda: b.and_(b.fcmp_ordered("<", ax, tiny),
                                       b.fcmp_ordered("!=", x, ir.Constant(x.type, 0.0)))}
    if kind not in fns:
        raise Unsupported(f"testp.{kind}", ins.line)
    t.write(ins.dsts[0], V(fns[kind](), BOOL))


# ---------------------------------------------------------------- mov, cvt

def _mov(t, ins):
    dt = type_dtype(_typ(ins))
    b = t.b
    d, s = ins.dsts[0], ins.srcs[0]
    if s[0] == "v":
        n = len(s[1])
        edt = RAW[dt.itemsize // n]
        wide = RAW[dt.itemsize]
        out = ir.Constant(lty(wide), 0)
        for k, x in enumerate(s[1]):
            v = astype(b, t.read(x, edt), wide).v
            out = b.or_(out, b.shl(v, ir.Constant(lty(wide), 8 * edt.itemsize * k)))
        return t.write(d, V(out, wide))
    if d[0] == "v":
        n = len(d[1])
        edt = RAW[dt.itemsize // n]
        wide = RAW[dt.itemsize]
        v = t.read(s, wide).v
        for k, x in enumerate(d[1]):
            part = b.lshr(v, ir.Constant(lty(wide), 8 * edt.itemsize * k))
            t.write(x, V(b.trunc(part, lty(edt)), edt))
        return None
    t.write(d, t.read(s, dt))


def _cvt(t, ins):
    if len(ins.types) < 2:
        raise Unsupported("cvt without two types", ins.line)
    dtn, stn = ins.types[0], ins.types[1]
    if {"f16", "bf16", "f16x2", "bf16x2"} & {dtn, stn}:
        raise Unsupported(f"cvt.{dtn}.{stn} (half-precision conversion)", ins.line)
    ddt, sdt = type_dtype(dtn), type_dtype(stn)
    b = t.b
    a = t.read(ins.srcs[0], sdt)
    mods = ins.mods
    irnd = next((x for x in ("rni", "rzi", "rmi", "rpi") if x in mods), None)
    frnd = next((x for x in ("rn", "rz", "rm", "rp") if x in mods), "rn")
    ftz = "ftz" in mods
    sat = "sat" in mods

    def fin(x: V) -> V:
        return fe.ftz(b, x) if ftz and x.dt == F32D else x

    if ddt.kind == "f" and sdt.kind == "f":
        x = fin(a)
        if irnd:
            v = V(_round_integral(b, x.v, irnd), x.dt)
            v = astype(b, v, ddt)
        elif ddt == F32D and sdt == F64D:
            v = V(fe.round_f64_to_f32(b, x.v, frnd), ddt)
        else:
            v = astype(b, x, ddt)
        if ddt == F32D:
            v = fin(v)
        v = fe.sat(b, v) if sat else v   # (sat makes a NaN 0: after or before canonical_nan)
        out = fe.canonical_nan(b, v) if ddt == F32D else v
    elif ddt.kind == "f":
        if frnd != "rn":
            raise Unsupported(f"cvt.{frnd}.{dtn}.{stn} (directed integer to float rounding)",
                              ins.line)
        v = astype(b, a, ddt)
        out = fe.sat(b, v) if sat else v
    elif sdt.kind == "f":
        out = _to_int(t, fin(a), irnd or "rzi", ddt, _nan_to_int(stn == "f64", ddt))
    else:
        if sat:
            info = np.iinfo(ddt)
            if a.dt.kind == "u":
                w = astype(b, a, np.dtype(np.uint64)).v
                top = ir.Constant(I64, max(info.max, 0))
                out = astype(b, V(b.select(b.icmp_unsigned(">", w, top), top, w),
                                  np.dtype(np.uint64)), ddt)
            else:
                w = astype(b, a, np.dtype(np.int64)).v
                lo = ir.Constant(I64, max(info.min, -2**63))
                hi = ir.Constant(I64, min(info.max, 2**63 - 1))
                w = b.select(b.icmp_signed("<", w, lo), lo, b.select(b.icmp_signed(">", w, hi),
                                                                     hi, w))
                out = astype(b, V(w, np.dtype(np.int64)), ddt)
        else:
            out = astype(b, a, ddt)
    t.write(ins.dsts[0], out)


def _round_integral(b, x, mode):
    sfx = "f32" if x.type == F32 else "f64"
    name = {"rni": "llvm.rint", "rzi": "llvm.trunc", "rmi": "llvm.floor", "rpi": "llvm.ceil"}[mode]
    return fe.intrinsic(b, f"{name}.{sfx}", x.type, [x])


def _nan_to_int(src_f64: bool, dt) -> int:
    from warp_lab.sim.fp import nan_to_int
    return nan_to_int(src_f64, dt)


def _to_int(t, x: V, mode, dt, nan: int) -> V:
    """:func:`warp_lab.sim.fp.to_int`: rounded in float64, NaN → ``nan``, saturated to
    ``dt``'s range."""
    b = t.b
    r = _round_integral(b, astype(b, x, F64D).v, mode)
    info = np.iinfo(dt)
    it = lty(dt)
    lo, hi = ir.Constant(F64, float(info.min)), ir.Constant(F64, float(info.max))
    conv = (b.fptosi if dt.kind == "i" else b.fptoui)
    # within (min, max) the conversion is exact; the ends and beyond saturate
    inner = b.select(b.and_(b.fcmp_ordered(">", r, lo), b.fcmp_ordered("<", r, hi)), r,
                     ir.Constant(F64, 0.0))
    v = conv(inner, it)
    v = b.select(b.fcmp_ordered("<=", r, lo), ir.Constant(it, int(info.min)), v)
    v = b.select(b.fcmp_ordered(">=", r, hi), ir.Constant(it, int(info.max)), v)
    v = b.select(fe.isnan(b, r), ir.Constant(it, nan), v)
    return V(v, dt)


# ---------------------------------------------------------------- bits

def _shift(t, ins):
    dt = type_dtype(_typ(ins))
    b = t.b
    width = 8 * dt.itemsize
    x = t.read(ins.srcs[0], dt)
    n = t.read(ins.srcs[1], U32).v
    it = lty(dt)
    left = ins.op == "shl"
    big = b.icmp_unsigned(">=", n, ir.Constant(I32, width))
    nn = b.select(big, ir.Constant(I32, width - 1), n)
    nn = b.zext(nn, it) if it.width > 32 else b.trunc(nn, it) if it.width < 32 else nn
    if left or dt.kind == "u":
        v = b.shl(x.v, nn) if left else b.lshr(x.v, nn)
        v = b.select(big, ir.Constant(it, 0), v)
    else:
        v = b.ashr(x.v, nn)
    t.write(ins.dsts[0], V(v, dt))


def _shf(t, ins):
    b = t.b
    left = "l" in ins.mods
    x, y, c = (t.read(s, U32).v for s in ins.srcs)
    n = b.select(b.icmp_unsigned(">", c, ir.Constant(I32, 32)), ir.Constant(I32, 32), c) \
        if "clamp" in ins.mods else b.and_(c, ir.Constant(I32, 31))
    n = b.zext(n, I64)
    word = b.or_(b.zext(x, I64), b.shl(b.zext(y, I64), ir.Constant(I64, 32)))
    if left:
        d = b.lshr(b.shl(word, n), ir.Constant(I64, 32))
    else:
        d = b.lshr(word, n)
    t.write(ins.dsts[0], V(b.trunc(d, I32), U32))


def _logic(t, ins):
    dt = type_dtype(_typ(ins))
    b = t.b
    if ins.op == "not":
        return _nary(t, ins, lambda x: V(b.not_(x.v), dt))
    if ins.op == "cnot":
        return _nary(t, ins, lambda x: V(b.zext(b.icmp_unsigned("==", x.v, ir.Constant(
            x.v.type, 0)), x.v.type), dt))
    op = {"and": b.and_, "or": b.or_, "xor": b.xor}[ins.op]
    _nary(t, ins, lambda x, y: V(op(x.v, y.v), dt))


def _popc(t, ins):
    b = t.b

    def f(x):
        c = fe.intrinsic(b, f"llvm.ctpop.i{x.v.type.width}", x.v.type, [x.v])
        return astype(b, V(c, RAW[x.dt.itemsize]), U32)
    _nary(t, ins, f)


def _clz(t, ins):
    b = t.b

    def f(x):
        c = fe.intrinsic(b, f"llvm.ctlz.i{x.v.type.width}", x.v.type, [x.v, ir.Constant(I1, 0)])
        return astype(b, V(c, RAW[x.dt.itemsize]), U32)
    _nary(t, ins, f)


def _brev(t, ins):
    b = t.b
    dt = type_dtype(_typ(ins))
    raw = RAW[dt.itemsize]
    _nary(t, ins, lambda x: V(fe.intrinsic(b, f"llvm.bitreverse.i{x.v.type.width}",
                                           x.v.type, [x.v]), raw), dt=raw)


def _bfe(t, ins):
    """``bits._bfe`` (PTX ISA "bfe"): position and length are the low bytes of b and c."""
    dt = type_dtype(_typ(ins))
    b = t.b
    width = 8 * dt.itemsize
    msb = width - 1
    raw = RAW[dt.itemsize]
    u = b.zext(astype(b, t.read(ins.srcs[0], dt), raw).v, I64) if width < 64 else \
        t.read(ins.srcs[0], raw).v
    pos = b.zext(b.and_(t.read(ins.srcs[1], U32).v, ir.Constant(I32, 0xFF)), I64)
    ln = b.zext(b.and_(t.read(ins.srcs[2], U32).v, ir.Constant(I32, 0xFF)), I64)
    c = lambda v: ir.Constant(I64, v)  # noqa: E731
    smin = lambda p, q: b.select(b.icmp_signed("<", p, q), p, q)  # noqa: E731
    eff = smin(ln, b.sub(c(msb + 1), pos))
    eff = b.select(b.icmp_signed("<", eff, c(0)), c(0), eff)
    ones = _ones(b, eff)
    val = b.and_(b.lshr(u, smin(pos, c(msb))), ones)
    if dt.kind == "i":
        sidx = smin(b.sub(b.add(pos, ln), c(1)), c(msb))
        sidx = b.select(b.icmp_signed("<", sidx, c(0)), c(0), sidx)
        sbit = b.icmp_unsigned("!=", b.and_(b.lshr(u, sidx), c(1)), c(0))
        sbit = b.and_(sbit, b.icmp_unsigned("!=", ln, c(0)))
        val = b.select(sbit, b.or_(val, b.not_(ones)), val)
    t.write(ins.dsts[0], V(b.trunc(val, lty(raw)) if width < 64 else val, raw))


def _ones(b, k):
    """``bits._ones``: uint64 masks of the low ``k`` bits (k may be 64)."""
    full = b.icmp_unsigned(">=", k, ir.Constant(I64, 64))
    kk = b.select(full, ir.Constant(I64, 63), k)
    m = b.sub(b.shl(ir.Constant(I64, 1), kk), ir.Constant(I64, 1))
    return b.select(full, ir.Constant(I64, -1), m)


def _prmt(t, ins):
    if any(x in ins.mods for x in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")):
        raise Unsupported(f"prmt mode {ins.text}", ins.line)
    b = t.b
    x, y, c = (t.read(s, U32).v for s in ins.srcs)
    word = b.or_(b.zext(x, I64), b.shl(b.zext(y, I64), ir.Constant(I64, 32)))
    out = ir.Constant(I32, 0)
    for i in range(4):
        sel = b.and_(b.lshr(c, ir.Constant(I32, 4 * i)), ir.Constant(I32, 0xF))
        sh = b.zext(b.mul(b.and_(sel, ir.Constant(I32, 7)), ir.Constant(I32, 8)), I64)
        byte = b.trunc(b.and_(b.lshr(word, sh), ir.Constant(I64, 0xFF)), I32)
        sign = b.icmp_unsigned("!=", b.and_(sel, ir.Constant(I32, 8)), ir.Constant(I32, 0))
        neg = b.icmp_unsigned("!=", b.and_(byte, ir.Constant(I32, 0x80)), ir.Constant(I32, 0))
        byte = b.select(sign, b.select(neg, ir.Constant(I32, 0xFF), ir.Constant(I32, 0)), byte)
        out = b.or_(out, b.shl(byte, ir.Constant(I32, 8 * i)))
    t.write(ins.dsts[0], V(out, U32))


def _lop3(t, ins):
    lut = ins.srcs[3]
    if lut[0] != "i":
        raise Unsupported("lop3 without an immediate table", ins.line)
    b = t.b
    x, y, z = (t.read(s, U32).v for s in ins.srcs[:3])
    out = ir.Constant(I32, 0)
    for i in range(8):
        if lut[1] >> i & 1:
            ta = x if i & 4 else b.not_(x)
            tb = y if i & 2 else b.not_(y)
            tc = z if i & 1 else b.not_(z)
            out = b.or_(out, b.and_(b.and_(ta, tb), tc))
    t.write(ins.dsts[0], V(out, U32))


def _abs_neg(t, ins):
    dt = type_dtype(_typ(ins))
    if dt.kind == "f":
        return _unary_float(t, ins)
    b = t.b
    if ins.op == "neg":
        return _nary(t, ins, lambda x: V(b.neg(x.v), dt))
    return _nary(t, ins, lambda x: V(b.select(b.icmp_signed("<", x.v, ir.Constant(
        x.v.type, 0)), b.neg(x.v), x.v), dt))


EMITTERS = {
    "add": _add_sub, "sub": _add_sub, "addc": _carry, "subc": _carry, "madc": _carry,
    "mul": _mul, "mad": _mad, "fma": _mad, "div": _div, "rem": _rem,
    "min": _minmax, "max": _minmax, "abs": _abs_neg, "neg": _abs_neg,
    "setp": _setp, "selp": _selp, "slct": _slct,
    "sqrt": _unary_float, "rsqrt": _unary_float, "rcp": _unary_float, "ex2": _unary_float,
    "lg2": _unary_float, "sin": _unary_float, "cos": _unary_float, "tanh": _unary_float,
    "copysign": _copysign, "testp": _testp,
    "and": _logic, "or": _logic, "xor": _logic, "not": _logic, "cnot": _logic, "lop3": _lop3,
    "shl": _shift, "shr": _shift, "shf": _shf,
    "popc": _popc, "clz": _clz, "brev": _brev, "bfe": _bfe, "prmt": _prmt,
    "mov": _mov, "cvt": _cvt,
}

_ = (I128, const, view)
