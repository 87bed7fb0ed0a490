"""The integer intrinsics (``wl.popc``, ``wl.clz``, ``wl.ffs``, ``wl.brev``, ``wl.mulhi``,
the funnel shifts ``wl.funnelshift_l/_lc/_r/_rc`` and ``wl.byte_perm``):
typing rule and lowering side by side, one :class:`~warp_lab.compiler.builtin_rules.Impl`
each, named by the records' ``impl`` in :mod:`warp_lab.lang.builtins`.

Sources: CUDA Math API, "Integer Intrinsics" (``__popc``, ``__clz``, ``__ffs``, ``__brev``,
``__mulhi``, ``__funnelshift_l``... , ``__byte_perm``); the LLVM intrinsics they lower to
(``llvm.ctpop``, ``llvm.ctlz``, ``llvm.cttz``, ``llvm.bitreverse``, ``llvm.fshl``/``fshr``,
``llvm.nvvm.fshl.clamp``/``fshr.clamp``, ``llvm.nvvm.prmt``) select PTX ISA 9.7.1 ``popc``,
``clz``, ``brev`` and 9.7.8 ``shf``, ``prmt``.
"""

from __future__ import annotations

from llvmlite import ir

from warp_lab.compiler.lower_builtins import _vals
from warp_lab.compiler.lower_expr import I1, I32, llty
from warp_lab.compiler.lower_ops import intrinsic
from warp_lab.compiler.typed_ast import NO_CONST, const_of
from warp_lab.compiler.typing_calls import _args, _join, _scalar, _target, _weak
from warp_lab.compiler.typing_rules import literal_type, type_name
from warp_lab.lang.types import int32, uint32

__all__ = ["IMPLS"]


# -- popc, clz, ffs, brev ------------------------------------------------------------------
def type_int_unary(t, node, name):
    """One integer ``x`` (8/16-bit and bool widened to int32, a literal at its own type);
    ``brev`` returns ``x``'s type, the others int32 (CUDA's ``int __popc(unsigned)``)."""
    (x,) = _args(t, node, ["x"], 1, name)
    xt = _scalar(t, x)
    if not xt.is_int:
        raise t.error(f"{name}() needs an integer, not {type_name(xt)}", x)
    ty = literal_type(const_of(x)) if _weak(x) else xt
    if ty.bits < 32:
        ty = int32
    res = ty if name == "brev" else int32
    _target(node, name, res, ty=ty)
    return t.mark(node, res)


def lower_int_unary(lw, node, call):
    t = call.info["ty"]
    (x,) = _vals(lw, node, [t])
    ty = llty(t)
    b = lw.b
    name = call.name
    if name == "brev":
        return intrinsic(lw, "bitreverse", t, [x])
    if name == "popc":
        r = intrinsic(lw, "ctpop", t, [x])
    else:
        which = "ctlz" if name == "clz" else "cttz"
        fn = lw.m.declare(f"llvm.{which}.i{t.bits}", ty, [ty, I1])
        # ffs(0) is selected away below, so cttz may treat 0 as poison (no zero branch)
        r = b.call(fn, [x, ir.Constant(I1, int(name == "ffs"))])
        if name == "ffs":
            r = b.select(b.icmp_unsigned("==", x, ir.Constant(ty, 0)), ir.Constant(ty, 0),
                         b.add(r, ir.Constant(ty, 1)))
    return b.trunc(r, I32) if t.bits > 32 else r


# -- mulhi -----------------------------------------------------------------------------------
def type_mulhi(t, node, name):
    """Two integers joined to one type of 32 or 64 bits (signed or not: ``__mulhi`` /
    ``__umulhi``, ``__mul64hi`` / ``__umul64hi``)."""
    args = _args(t, node, ["a", "b"], 2, name)
    ty = _join(t, args)
    if not ty.is_int:
        raise t.error("mulhi() needs integers", node)
    ty = int32 if ty.bits < 32 else ty
    t.check_literals_fit(args, ty)
    _target(node, name, ty, ty=ty)
    return t.mark(node, ty)


def lower_mulhi(lw, node, call):
    """The high half of the double-width product (LLVM selects ``mul.hi``)."""
    t = call.info["ty"]
    a, c = _vals(lw, node, [t, t])
    wide = ir.IntType(2 * t.bits)
    ext = lw.b.sext if t.is_signed else lw.b.zext
    p = lw.b.mul(ext(a, wide), ext(c, wide))
    return lw.b.trunc(lw.b.lshr(p, ir.Constant(wide, t.bits)), llty(t))


# -- hadd, rhadd ----------------------------------------------------------------------------
def type_hadd(t, node, name):
    """Two integers joined to int32 or uint32 (CUDA Math API, "Integer Intrinsics":
    ``__hadd``/``__uhadd``, ``__rhadd``/``__urhadd`` take 32-bit ints; 8/16-bit and bool
    widen to int32).

    Raises:
        KernelCompileError: a float or 64-bit argument."""
    args = _args(t, node, ["a", "b"], 2, name)
    ty = _join(t, args)
    if not ty.is_int:
        raise t.error(f"{name}() needs integers", node)
    if ty.bits > 32:
        raise t.error(f"{name}() takes 32-bit integers (CUDA's __{name} / __u{name}), "
                      f"not {type_name(ty)}", node)
    ty = int32 if ty.bits < 32 else ty
    t.check_literals_fit(args, ty)
    _target(node, name, ty, ty=ty)
    return t.mark(node, ty)


def lower_hadd(lw, node, call):
    """``(a + b) >> 1`` (``rhadd``: ``(a + b + 1) >> 1``) computed in 64 bits, so the sum
    cannot overflow: CUDA's average, rounded down (up), signed or not by the type."""
    t = call.info["ty"]
    a, c = _vals(lw, node, [t, t])
    wide = ir.IntType(64)
    ext = lw.b.sext if t.is_signed else lw.b.zext
    total = lw.b.add(ext(a, wide), ext(c, wide))
    if call.name == "rhadd":
        total = lw.b.add(total, ir.Constant(wide, 1))
    half = (lw.b.ashr if t.is_signed else lw.b.lshr)(total, ir.Constant(wide, 1))
    return lw.b.trunc(half, llty(t))


# -- funnel shifts and byte_perm: three 32-bit words in, a uint32 out ----------------------
def _type_words(t, node, name, names):
    """Type a call of three 32-bit words (CUDA's ``unsigned int`` parameters): integers of
    at most 32 bits of either sign (converted as C converts to ``unsigned``: -1 is
    0xFFFFFFFF), literals that fit in 32 bits; the call is a uint32."""
    args = _args(t, node, names, len(names), name)
    for pname, a in zip(names, args):
        at = _scalar(t, a, f"{pname} of {name}()")
        c = const_of(a)
        if at.is_bool or not at.is_int:
            raise t.error(f"{name}() takes 32-bit integers; {pname} is {type_name(at)}", a,
                          f"convert it first: wl.uint32({pname}) (a float's bits: "
                          f"wl.float_as_uint({pname}))")
        if _weak(a) and c is not NO_CONST:
            if not -2**31 <= c < 2**32:
                raise t.error(f"{name}(): {pname} = {c} does not fit in 32 bits", a)
        elif at.bits > 32:
            raise t.error(f"{name}() takes 32-bit words; {pname} is {type_name(at)}", a,
                          f"split it: wl.uint32({pname}) is the low word, "
                          f"wl.uint32({pname} >> 32) the high one")
    _target(node, name, uint32)
    return t.mark(node, uint32)


def type_funnelshift(t, node, name):
    """``wl.funnelshift_l/_lc/_r/_rc(lo, hi, shift)`` (CUDA Math API, "Integer
    Intrinsics")."""
    return _type_words(t, node, name, ["lo", "hi", "shift"])


def _words(lw, node):
    return [lw.convert(lw.expr(a), a.wl_ty, uint32) for a in node.wl_args]


def lower_funnelshift(lw, node, call):
    """``llvm.fshl``/``fshr`` (shift mod 32: PTX ``shf.l/r.wrap.b32``) or
    ``llvm.nvvm.fshl/fshr.clamp`` (shift clamped to 32: ``shf.l/r.clamp.b32``); both take
    ``(hi, lo, shift)``, the PTX instruction ``(lo, hi, shift)`` (PTX ISA 9.7.8.9 "shf")."""
    lo, hi, shift = _words(lw, node)
    side = call.name[len("funnelshift_")]
    name = (f"llvm.nvvm.fsh{side}.clamp.i32" if call.name.endswith("c")
            else f"llvm.fsh{side}.i32")
    fn = lw.m.declare(name, I32, [I32, I32, I32])
    return lw.b.call(fn, [hi, lo, shift])


def type_byte_perm(t, node, name):
    """``wl.byte_perm(x, y, s)``: CUDA's ``__byte_perm``."""
    return _type_words(t, node, name, ["x", "y", "s"])


def lower_byte_perm(lw, node, call):
    """``prmt.b32 d, x, y, s & 0x7777`` (PTX ISA 9.7.8.7 "prmt", default mode): CUDA's
    ``__byte_perm`` ignores the selector's upper half and the sign-replicate bit of each
    nibble, as libdevice's ``__nv_byte_perm`` does by that mask."""
    x, y, s = _words(lw, node)
    fn = lw.m.declare("llvm.nvvm.prmt", I32, [I32, I32, I32])
    return lw.b.call(fn, [x, y, lw.b.and_(s, ir.Constant(I32, 0x7777))])


#: this group's implementations, by the name a record's ``impl`` gives
IMPLS = {
    "int_unary": (type_int_unary, lower_int_unary),
    "mulhi": (type_mulhi, lower_mulhi),
    "hadd": (type_hadd, lower_hadd),
    "funnelshift": (type_funnelshift, lower_funnelshift),
    "byte_perm": (type_byte_perm, lower_byte_perm),
}
