"""Arithmetic with Python semantics on LLVM values: one table per operator family.

Functions take the :class:`~warp_lab.compiler.lower.FunctionLowerer` (``lw``)
and operands already converted to the operation type ``t``.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from warp_lab.compiler.lower_expr import I1, llty
from warp_lab.lang.types import Scalar

__all__ = ["scalar_binop", "aggregate_binop", "compare", "intrinsic", "float_call", "ipow",
           "dot", "float_to_int"]

_FLOAT_BINOPS = {"add": "fadd", "sub": "fsub", "mul": "fmul", "truediv": "fdiv"}
_INT_BINOPS = {"add": "add", "sub": "sub", "mul": "mul", "and": "and_", "or": "or_",
               "xor": "xor"}
_SUFFIX = {16: "f16", 32: "f32", 64: "f64"}


def intrinsic(lw, name: str, t: Scalar, args, fast=True, nargs=None):
    """Call ``llvm.<name>.<type>`` (``llvm.sqrt.f32``) on values of type ``t`` (bfloat16:
    its float32 registers' ``.f32``; a caller whose result may not be a bfloat16 rounds it,
    ``compiler/bf16.round_f32``)."""
    if t.is_bf16:
        from warp_lab.lang.types import float32 as t
    ty = llty(t)
    suffix = _SUFFIX[t.bits] if t.is_float else f"i{t.bits}"
    fn = lw.m.declare(f"llvm.{name}.{suffix}", ty, [ty] * (nargs or len(args)))
    return lw.b.call(fn, list(args), fastmath=lw.fflags if (fast and t.is_float) else ())


def float_call(lw, libname: str, t: Scalar, args, ret=None):
    """Call a libdevice function (``__nv_powf``) declared here, linked by compiler/nvptx."""
    ty = llty(t)
    fn = lw.m.declare(libname, ret or ty, [ty] * len(args))
    return lw.b.call(fn, list(args))


def _libdevice_pow(lw, a, b, t):
    if t.bits == 16:
        from warp_lab.lang.types import float32
        f = ir.FloatType()
        r = _libdevice_pow(lw, lw.b.fpext(a, f), lw.b.fpext(b, f), float32)
        return lw.b.fptrunc(r, llty(t))
    if t.bits == 32:
        name = "__nv_fast_powf" if lw.m.fast_math else "__nv_powf"
    else:
        name = "__nv_pow"
    return float_call(lw, name, t, [a, b])


def ipow(lw, a, b, t):
    """Integer power by repeated squaring.

    A negative run-time exponent of a signed type gives the integer part of Python's
    float result, ``int(a ** b)``: 1 for ``a == 1``, 1 or -1 for ``a == -1`` (by the
    exponent's parity), else 0 (also for ``a == 0``, where Python raises
    ZeroDivisionError); with ``debug`` it traps with the compile-time rule's message. (A
    negative constant exponent is a compile error, typing_exprs.)"""
    bld = lw.b
    ty = llty(t)
    if isinstance(b, ir.Constant) and isinstance(b.constant, int) and 0 <= b.constant <= 64:
        result, base, e = ir.Constant(ty, 1), a, b.constant
        while e:
            if e & 1:
                result = bld.mul(result, base) if not (isinstance(result, ir.Constant)
                                                       and result.constant == 1) else base
            e >>= 1
            if e:
                base = bld.mul(base, base)
        return result
    res_slot, base_slot, e_slot = (lw.ab.alloca(ty) for _ in range(3))
    bld.store(ir.Constant(ty, 1), res_slot)
    bld.store(a, base_slot)
    bld.store(b, e_slot)
    cond_bb = lw.fn.append_basic_block("ipow.cond")
    body_bb = lw.fn.append_basic_block("ipow.body")
    end_bb = lw.fn.append_basic_block("ipow.end")
    bld.branch(cond_bb)
    bld.position_at_end(cond_bb)
    e = bld.load(e_slot)
    bld.cbranch(bld.icmp_signed(">", e, ir.Constant(ty, 0)) if t.is_signed else
                bld.icmp_unsigned("!=", e, ir.Constant(ty, 0)), body_bb, end_bb)
    bld.position_at_end(body_bb)
    base = bld.load(base_slot)
    r = bld.load(res_slot)
    odd = bld.trunc(e, I1)
    bld.store(bld.select(odd, bld.mul(r, base), r), res_slot)
    bld.store(bld.mul(base, base), base_slot)
    bld.store(bld.lshr(e, ir.Constant(ty, 1)), e_slot)
    bld.branch(cond_bb)
    bld.position_at_end(end_bb)
    res = bld.load(res_slot)
    if not t.is_signed:
        return res
    zero, one = ir.Constant(ty, 0), ir.Constant(ty, 1)
    negative = bld.icmp_signed("<", b, zero)
    if lw.m.debug:
        from warp_lab.compiler.lower_builtins import emit_trap
        from warp_lab.lang.types import int32, int64
        where = f"{lw.filename}:{lw.cur_line}".replace("%", "%%")
        wide = t.bits == 64
        bb = b if t.bits in (32, 64) else bld.sext(b, ir.IntType(32))
        emit_trap(lw, bld.not_(negative), f"{where}: an integer raised to a negative power "
                  f"({'%lld' if wide else '%d'}) is not an integer; write a float base, e.g. "
                  "2.0 ** n", [bb], [int64 if wide else int32])
    # int(a ** b) for b < 0: only a == 1 and a == -1 keep a magnitude of 1
    minus_one = ir.Constant(ty, -1)
    odd = bld.trunc(b, I1)
    unit = bld.select(bld.icmp_signed("==", a, one), one,
                      bld.select(bld.icmp_signed("==", a, minus_one),
                                 bld.select(odd, minus_one, one), zero))
    return bld.select(negative, unit, res)


def _int_floordiv_mod(lw, op, a, b, t):
    bld = lw.b
    if not t.is_signed:
        return bld.udiv(a, b) if op == "floordiv" else bld.urem(a, b)
    zero = ir.Constant(llty(t), 0)
    q = bld.sdiv(a, b)
    r = bld.srem(a, b)
    # Python floors: adjust when the remainder is nonzero and its sign differs from b's
    fix = bld.and_(bld.icmp_signed("!=", r, zero),
                   bld.icmp_signed("<", bld.xor(r, b), zero))
    if op == "floordiv":
        return bld.sub(q, bld.zext(fix, llty(t)))
    return bld.select(fix, bld.add(r, b), r)


def _float_floordiv_mod(lw, op, a, b, t):
    """Python/NumPy float ``//`` and ``%`` (NumPy's ``npy_divmod``, CPython's float_divmod).

    The remainder is the exact ``fmod`` (libdevice ``__nv_fmod[f]``) moved to the
    divisor's sign; the quotient is ``(a - mod) / b`` snapped to an integer, so
    ``1.0 // 0.1`` is 9 (not ``floor(1.0 / 0.1)`` = 10) and agrees with the
    constant folder (``np.floor_divide``). LLVM's ``frem`` is not used: NVPTX
    expands it to ``a - b * trunc(a / b)``, wrong by far more than an ulp once
    ``a / b`` is past 2**24 (``-2.0**31 % 3`` gave 64). float16 is computed in
    float32 and rounded once, as NumPy's half loops do. ``b == 0`` gives
    ``a / b`` and NaN, as NumPy does.
    """
    bld = lw.b
    if t.bits == 16:
        from warp_lab.lang.types import float32
        f = ir.FloatType()
        r = _float_floordiv_mod(lw, op, bld.fpext(a, f), bld.fpext(b, f), float32)
        return bld.fptrunc(r, llty(t))
    ty = llty(t)
    fl = lw.fflags
    zero, one, half = (ir.Constant(ty, v) for v in (0.0, 1.0, 0.5))
    mod = float_call(lw, "__nv_fmodf" if t.bits == 32 else "__nv_fmod", t, [a, b])
    b_zero = bld.fcmp_ordered("==", b, zero)
    mod_nz = bld.fcmp_unordered("!=", mod, zero)          # C's `if (mod)`: NaN is true
    flip = bld.and_(mod_nz, bld.xor(bld.fcmp_ordered("<", b, zero),
                                    bld.fcmp_ordered("<", mod, zero)))
    if op == "mod":
        fixed = bld.select(flip, bld.fadd(mod, b, flags=fl),
                           bld.select(mod_nz, mod, intrinsic(lw, "copysign", t, [zero, b])))
        return bld.select(b_zero, mod, fixed)
    div = bld.fdiv(bld.fsub(a, mod, flags=fl), b, flags=fl)
    div = bld.select(flip, bld.fsub(div, one, flags=fl), div)
    fd = intrinsic(lw, "floor", t, [div])
    fd = bld.select(bld.fcmp_ordered(">", bld.fsub(div, fd, flags=fl), half),
                    bld.fadd(fd, one, flags=fl), fd)
    q = bld.fdiv(a, b, flags=fl)
    fd = bld.select(bld.fcmp_unordered("!=", div, zero), fd,
                    intrinsic(lw, "copysign", t, [zero, q]))
    return bld.select(b_zero, q, fd)


def _shift(lw, op, a, b, t):
    bld = lw.b
    ty = llty(t)
    width = ir.Constant(ty, t.bits)
    if isinstance(b, ir.Constant) and isinstance(b.constant, int) and 0 <= b.constant < t.bits:
        if op == "shl":
            return bld.shl(a, b)
        return bld.ashr(a, b) if t.is_signed else bld.lshr(a, b)
    if t.bits == 64:
        # PTX's shl.b64/shr.b64 take a .u32 count and clamp it to 64 (PTX ISA 9.7.8.8,
        # "shift amounts greater than the register width N are clamped to N"): the NVPTX
        # back end folds `select(b >= 64, 0, shl a, b)` into that one clamping shift and
        # truncates b to 32 bits on the way, so b = 2**32 + 1 would shift by 1. A clamp of
        # the count in LLVM IR (umin(b, 64)) does not survive opt=3: in the select's
        # other arm b < 64, so InstCombine drops it. So the shift is that PTX instruction
        # itself (inline PTX, which LLVM does not look into), given the count clamped to
        # 64 and truncated to its .u32: one shl/shr, and the clamp, as before.
        count = lw.b.trunc(intrinsic(lw, "umin", t, [b, width]), ir.IntType(32))
        mnemonic = "shl.b64" if op == "shl" else "shr.s64" if t.is_signed else "shr.u64"
        return bld.asm(ir.FunctionType(ty, [ty, ir.IntType(32)]), f"{mnemonic} $0, $1, $2;",
                       "=l,l,r", [a, count], side_effect=False)
    big = bld.icmp_unsigned(">=", b, width)
    if op == "shr" and t.is_signed:
        return bld.ashr(a, bld.select(big, ir.Constant(ty, t.bits - 1), b))
    raw = bld.shl(a, b) if op == "shl" else bld.lshr(a, b)
    return bld.select(big, ir.Constant(ty, 0), raw)


#: NVVM's float → integer conversions by (source bits, destination bits, signed): each is
#: one ``cvt.rzi`` (PTX ISA 9.7.9.21), which truncates toward zero, saturates to the
#: destination's range and gives a defined value for NaN. LLVM's ``fptosi``/``fptoui``
#: would give poison there, which the optimiser may fold away (``fptosi(sitofp x)`` →
#: ``trunc x``, a store of ``fptosi(NaN)`` deleted); LLVM folds these intrinsics with the
#: PTX rule instead (NaN: 0, or ``1 << (bits - 1)`` from an f64 or into a 64-bit integer).
_CVT_RZI = {(32, 32, True): "f2i", (32, 32, False): "f2ui", (64, 32, True): "d2i",
            (64, 32, False): "d2ui", (32, 64, True): "f2ll", (32, 64, False): "f2ull",
            (64, 64, True): "d2ll", (64, 64, False): "d2ull"}


def float_to_int(lw, v, src: Scalar, dst: Scalar):
    """``v`` (float type ``src``) converted to integer type ``dst`` as PTX's ``cvt.rzi``
    does (PTX ISA 9.7.9.21, "Integer Notes"): toward zero, clamped to ``dst``'s range
    ("for float-to-integer conversions, the result is clamped to the destination range
    by default"), NaN giving 0 — or ``1 << (bits - 1)`` when the source is f64 or ``dst``
    is 64-bit. A float16 source is widened to f32 first (exact, and the same NaN rule).
    An 8- or 16-bit ``dst`` is the signed 32-bit conversion clamped to its range
    (``wl.int8(300.0)`` is 127, ``wl.uint8(-5.0)`` 0; NaN: 0 from float32, ``dst``'s
    minimum from float64), since PTX stores those through 16-bit registers where a
    narrower ``cvt`` would wrap at ``st.b8``."""
    bld = lw.b
    if src.bits == 16:
        v = bld.fpext(v, ir.FloatType())
    sbits = 64 if src.bits == 64 else 32
    dbits = 64 if dst.bits == 64 else 32
    signed = dst.is_signed or dst.bits < 32
    name = _CVT_RZI[(sbits, dbits, signed)]
    fty = ir.DoubleType() if sbits == 64 else ir.FloatType()
    ity = ir.IntType(dbits)
    r = bld.call(lw.m.declare(f"llvm.nvvm.{name}.rz", ity, [fty]), [v])
    if dst.bits >= 32:
        return r
    info = np.iinfo(dst.numpy)
    i32 = ir.IntType(32)
    for op, bound in (("smax", info.min), ("smin", info.max)):
        r = bld.call(lw.m.declare(f"llvm.{op}.i32", i32, [i32, i32]), [r, ir.Constant(i32, int(bound))])
    return bld.trunc(r, llty(dst))


def _warp_float_op(lw, op, a, b, t):
    """The Warp dialect's float ``%`` (C's ``fmod``, libdevice's exact ``__nv_fmod[f]``:
    the dividend's sign) and ``//`` (``floor(a / b)``), as warp-lang's ``builtin.h``
    computes them; float16 in float32, rounded once (Warp: ``fmodf(float(a), float(b))``)."""
    bld = lw.b
    if t.bits == 16:
        from warp_lab.lang.types import float32
        f = ir.FloatType()
        r = _warp_float_op(lw, op, bld.fpext(a, f), bld.fpext(b, f), float32)
        return bld.fptrunc(r, llty(t))
    if op == "cmod":
        return float_call(lw, "__nv_fmodf" if t.bits == 32 else "__nv_fmod", t, [a, b])
    return intrinsic(lw, "floor", t, [bld.fdiv(a, b, flags=lw.fflags)])


def scalar_binop(lw, op: str, a, b, t: Scalar):
    """``a <op> b`` for scalars of type ``t``: Python's semantics, or, for the Warp
    dialect's operators (``typing_rules.WARP_OPS``), C's: ``cdiv`` (``sdiv``/``udiv``,
    truncating), ``cmod`` (``srem``/``urem``; ``fmod`` for floats), ``ffloordiv``."""
    bld = lw.b
    if t.is_bf16:   # in float32, rounded once (compiler/bf16; Warp's wp_bfloat16 operators)
        from warp_lab.compiler.bf16 import BF16_BINOPS, round_f32
        from warp_lab.lang.types import float32
        if op not in BF16_BINOPS:  # pragma: no cover - refused by typing_exprs
            raise TypeError(f"bfloat16 {op}")
        if op in ("floordiv", "ffloordiv"):   # Warp: floorf(float(a / b)), a / b rounded
            q = round_f32(bld, scalar_binop(lw, "truediv", a, b, float32))
            return round_f32(bld, intrinsic(lw, "floor", float32, [q]))
        return round_f32(bld, scalar_binop(lw, op, a, b, float32))
    if op == "cdiv":
        return bld.sdiv(a, b) if t.is_signed else bld.udiv(a, b)
    if op == "cmod" and not t.is_float:
        return bld.srem(a, b) if t.is_signed else bld.urem(a, b)
    if t.is_float:
        if op in ("cmod", "ffloordiv"):
            return _warp_float_op(lw, op, a, b, t)
        if op in _FLOAT_BINOPS:
            return getattr(bld, _FLOAT_BINOPS[op])(a, b, flags=lw.fflags)
        if op in ("floordiv", "mod"):
            return _float_floordiv_mod(lw, op, a, b, t)
        if op == "pow":
            if isinstance(b, ir.Constant) and b.constant == 2.0:
                return bld.fmul(a, a, flags=lw.fflags)
            return _libdevice_pow(lw, a, b, t)
        raise TypeError(f"float {op}")
    if op in _INT_BINOPS:
        return getattr(bld, _INT_BINOPS[op])(a, b)
    if op in ("floordiv", "mod"):
        return _int_floordiv_mod(lw, op, a, b, t)
    if op in ("shl", "shr"):
        return _shift(lw, op, a, b, t)
    if op == "pow":
        return ipow(lw, a, b, t)
    raise TypeError(f"integer {op}")


def compare(lw, op: str, a, b, t: Scalar):
    """An i1 comparison; float ``!=`` is unordered (true for NaN), the rest ordered."""
    sym = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[op]
    if t.is_float:
        if op == "ne":
            return lw.b.fcmp_unordered(sym, a, b)
        return lw.b.fcmp_ordered(sym, a, b)
    if t.is_signed:
        return lw.b.icmp_signed(sym, a, b)
    return lw.b.icmp_unsigned(sym, a, b)


def _dot(lw, xs, ys, elem):
    """x0*y0 + x1*y1 + ...: a multiply, then one fused multiply-add per term for
    floats (``llvm.fmuladd`` → ``fma.rn``, as CUDA's vector helpers use ``fmaf``)."""
    acc = None
    for x, y in zip(xs, ys):
        if acc is None:
            acc = scalar_binop(lw, "mul", x, y, elem)
        elif elem.is_float and elem.bits > 16 and not lw.m.fast_math:
            acc = intrinsic(lw, "fmuladd", elem, [x, y, acc], fast=False)
        else:
            acc = scalar_binop(lw, "add", acc, scalar_binop(lw, "mul", x, y, elem), elem)
    return acc


def aggregate_binop(lw, node, a, b, lt, rt):
    """Vector/matrix arithmetic (elementwise, scaling, matrix products)."""
    kind = node.wl_kind
    op = node.wl_op
    if kind == "aa":
        return tuple(scalar_binop(lw, op, x, y, lt.elem) for x, y in zip(a, b))
    if kind == "as":
        s = lw.convert(b, rt, lt.elem)
        return tuple(scalar_binop(lw, op, x, s, lt.elem) for x in a)
    if kind == "sa":
        s = lw.convert(a, lt, rt.elem)
        return tuple(scalar_binop(lw, op, s, y, rt.elem) for y in b)
    if kind == "mv":
        c = lt.cols
        return tuple(_dot(lw, a[r * c:(r + 1) * c], b, lt.elem) for r in range(lt.rows))
    if kind == "vm":
        c = rt.cols
        return tuple(_dot(lw, a, [b[r * c + j] for r in range(rt.rows)], lt.elem)
                     for j in range(c))
    if kind == "mm":
        n, k, m = lt.rows, lt.cols, rt.cols
        return tuple(_dot(lw, a[i * k:(i + 1) * k], [b[r * m + j] for r in range(k)], lt.elem)
                     for i in range(n) for j in range(m))
    raise TypeError(f"aggregate op {kind}")


def dot(lw, xs, ys, elem):
    """Sum of products (used by dot, length, matrix products)."""
    return _dot(lw, xs, ys, elem)

