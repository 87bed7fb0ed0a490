"""The integer intrinsics (``wl.popc``, ``wl.clz``, ``wl.ffs``, ``wl.brev``, ``wl.mulhi``):
typing rule and lowering side by side, one :class:`~warp_lab.compiler.builtin_rules.Impl`
each, named by the records' ``impl`` in :mod:`warp_lab.lang.builtins`.

Sources: CUDA Math API, "Integer Intrinsics" (``__popc``, ``__clz``, ``__ffs``, ``__brev``,
``__mulhi``); the LLVM intrinsics they lower to (``llvm.ctpop``, ``llvm.ctlz``,
``llvm.cttz``, ``llvm.bitreverse``) select PTX ISA 9.7.1 ``popc``, ``clz``, ``brev``.
"""

from __future__ import annotations

from llvmlite import ir

from warp_lab.compiler.lower_builtins import _vals
from warp_lab.compiler.lower_expr import I1, I32, llty
from warp_lab.compiler.lower_ops import intrinsic
from warp_lab.compiler.typed_ast import const_of
from warp_lab.compiler.typing_calls import _args, _join, _scalar, _target, _weak
from warp_lab.compiler.typing_rules import literal_type, type_name
from warp_lab.lang.types import int32

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


#: this group's implementations, by the name a record's ``impl`` gives
IMPLS = {
    "int_unary": (type_int_unary, lower_int_unary),
    "mulhi": (type_mulhi, lower_mulhi),
}
