"""Lowering of Warp's ``bfloat16``: a float32 in registers, 16 bits in memory.

A bfloat16 value lives in an LLVM ``float`` whose low 16 bits are zero (every bfloat16 is
a float32), so comparisons, negation and the conversions out of it are float32's, as in
Warp (``wp_bfloat16``'s operators convert to float32: ``warp/native/builtin.h``). Every
operation that makes a bfloat16 computes in float32 and rounds once (:func:`round_f32`),
as Warp's CPU operators do (``float_to_bfloat16(bfloat16_to_float(a) + ...)``). An array
element or a parameter is its 16 bits (:func:`from_bits`, :func:`to_bits`).

Why integer operations and not PTX's ``cvt.rn.bf16.f32`` (inline asm, sm_80+): the goal
is warp-lang's CPU device bit for bit, and that device rounds with
``wp_float_to_bfloat16_bits_sw``, which keeps a NaN's sign and top payload bits (only
setting the quiet bit when they are all zero), where ``cvt.rn.bf16.f32`` gives the
canonical NaN. The integer form is also the same code on every arch (Warp itself uses
it below sm_80), needs no llvmlite ``bfloat`` type (llvmlite 0.50 has none), and is a few
ALU instructions. The rule, on the float32 bits ``u``: if the exponent is all ones, the
top 16 bits (with ``0x0040`` or'ed in when a NaN's top 7 mantissa bits are zero); else
``(u + 0x7fff + ((u >> 16) & 1)) >> 16``, round to nearest, ties to even (a finite value
past the largest bfloat16 carries into the exponent and becomes inf).
"""

from __future__ import annotations

from llvmlite import ir

from warp_lab.lang.types import Scalar, float32

__all__ = ["round_f32", "from_bits", "to_bits", "convert_bf16", "atomic_bf16", "BF16_BINOPS",
           "BF16_IMPLS"]

#: the binary operators on bfloat16 that warp_lab lowers: Warp's ``+ - * /`` and ``%``
#: (``fmodf`` of the float32 values) and ``**`` (``powf``), each rounded once, and ``//``:
#: Warp's ``floorf(float(a / b))``, the floor of the *rounded* quotient.
BF16_BINOPS = ("add", "sub", "mul", "truediv", "cmod", "pow", "floordiv", "ffloordiv")

#: the builtin implementations (``compiler/builtin_rules``) that take bfloat16: the math
#: functions (``sin``, ``sqrt``, ``atan2``, ``pow``...: float32's, rounded once, as
#: ``warp/native/builtin.h``'s bfloat16 overloads ``bfloat16(::sinf(float(x)))``), and those
#: whose result is one of their bfloat16 arguments or exact (``abs``, ``sign``, ``min``/``max``,
#: ``clamp``, ``select``; ``isnan``/``isinf``/``isfinite``), and ``print`` (``printf("%g")`` of the
#: float32 value)
BF16_IMPLS = ("math1", "math2", "pow", "abs", "sign", "minmax", "clamp", "fp_class", "select")

_I16 = ir.IntType(16)
_I32 = ir.IntType(32)
_F32 = ir.FloatType()


def _c(v: int) -> ir.Constant:
    return ir.Constant(_I32, v)


def round_f32(b: ir.IRBuilder, v) -> ir.Value:
    """The float32 ``v`` rounded to bfloat16, still a float32 (the rule in the module
    docstring; Warp's ``wp_float_to_bfloat16_bits_sw``, ``warp/native/builtin.h``).

    Args:
        b: the builder; ``v``: an LLVM ``float`` value.

    Returns:
        An LLVM ``float`` whose low 16 bits are zero.
    """
    u = b.bitcast(v, _I32)
    special = b.icmp_unsigned("==", b.and_(u, _c(0x7F800000)), _c(0x7F800000))
    top = b.and_(u, _c(0xFFFF0000 - (1 << 32)))
    payload_lost = b.and_(b.icmp_unsigned("!=", b.and_(u, _c(0x007FFFFF)), _c(0)),
                          b.icmp_unsigned("==", b.and_(u, _c(0x007F0000)), _c(0)))
    spec = b.select(payload_lost, b.or_(top, _c(0x00400000)), top)
    bias = b.add(_c(0x7FFF), b.and_(b.lshr(u, _c(16)), _c(1)))
    rounded = b.and_(b.add(u, bias), _c(0xFFFF0000 - (1 << 32)))
    return b.bitcast(b.select(special, spec, rounded), _F32)


def from_bits(b: ir.IRBuilder, h) -> ir.Value:
    """An ``i16`` of bfloat16 bits as the float32 it is (exact: the bits shifted up 16,
    Warp's ``wp_bfloat16_bits_to_float_sw``)."""
    return b.bitcast(b.shl(b.zext(h, _I32), _c(16)), _F32)


def to_bits(b: ir.IRBuilder, v) -> ir.Value:
    """A float32 holding a bfloat16 value (low 16 bits zero) as its ``i16`` bits."""
    return b.trunc(b.lshr(b.bitcast(v, _I32), _c(16)), _I16)


def convert_bf16(lw, v, src: Scalar, dst: Scalar):
    """Convert ``v`` of scalar type ``src`` to ``dst``, one of them bfloat16, as Warp does.

    Out of bfloat16 (``wp_bfloat16``'s conversion operators): the float32 value, then
    float32's conversion to ``dst`` (``static_cast<int32>(float)``: warp_lab's float32 rule,
    ``lower_ops.float_to_int``). Into bfloat16 (the ``wp_bfloat16(float)`` constructor):
    the value converted to float32 first (an int by ``sitofp``/``uitofp``, a float64 by
    ``fptrunc``, both round to nearest), then rounded to bfloat16, so a float64 is rounded
    twice, as in Warp.

    Args:
        lw: the lowerer (``lower_expr``); ``v``: the LLVM value of type ``llty(src)``.

    Returns:
        The LLVM value of type ``llty(dst)``.
    """
    if src.is_bf16 and dst.is_bf16:
        return v
    if src.is_bf16:
        return lw.convert(v, float32, dst) if dst != float32 else v
    f = v if src == float32 else lw.convert(v, src, float32)
    if isinstance(f, ir.Constant) and isinstance(f.constant, float):
        from warp_lab.lang.bf16 import round_value
        return ir.Constant(_F32, round_value(f.constant))
    return round_f32(lw.b, f)


def atomic_bf16(lw, op: str, ptr, v, ordering: str):
    """``atomic_<op>(arr, i, v)`` on a bfloat16 element: Warp's CAS loop (``builtin.h``
    ``atomic_add/min/max(bfloat16*, bfloat16)``: the float32 sum, ``min`` or ``max`` of the
    old value and ``v``, rounded, swapped in with ``atomicCAS`` until no other thread got
    there first), with inline PTX ``atom.relaxed.gpu.cas.b16`` (sm_70+) on the element's
    generic address: LLVM's ``cmpxchg i16`` is a CAS loop on the aligned 32-bit word
    around it, which reads past the end of an array with an odd number of elements.

    Args:
        lw: the lowerer; ``op``: ``add``, ``sub``, ``min`` or ``max``; ``ptr``: the
            element's pointer; ``v``: the value (a float32 holding a bfloat16);
            ``ordering``: unused (the asm is relaxed, device scope: CUDA's atomicCAS).

    Returns:
        The old value (a float32 holding it), as Warp's atomics return.
    """
    b = lw.b
    first = b.load(ptr, typ=_I16, align=2)
    generic = ptr if ptr.type.addrspace == 0 else b.addrspacecast(ptr, ir.PointerType())
    head = b.block
    loop = lw.fn.append_basic_block("bf16.cas")
    done = lw.fn.append_basic_block("bf16.cas.end")
    b.branch(loop)
    b.position_at_end(loop)
    old = b.phi(_I16)
    old.add_incoming(first, head)
    f = from_bits(b, old)
    if op in ("add", "sub"):
        new = (b.fadd if op == "add" else b.fsub)(f, v)
    else:
        from warp_lab.compiler.lower_ops import intrinsic
        new = intrinsic(lw, "minnum" if op == "min" else "maxnum", float32, [f, v], fast=False)
    seen = b.asm(ir.FunctionType(_I16, [ir.PointerType(), _I16, _I16]),
                 "atom.relaxed.gpu.cas.b16 $0, [$1], $2, $3;", "=h,l,h,h,~{memory}",
                 [generic, old, to_bits(b, round_f32(b, new))], side_effect=True)
    old.add_incoming(seen, loop)
    b.cbranch(b.icmp_unsigned("==", seen, old), done, loop)
    b.position_at_end(done)
    return from_bits(b, seen)
