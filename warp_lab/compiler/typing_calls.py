"""Helpers shared by the call typing rules (:mod:`~warp_lab.compiler.typing_builtins`,
:mod:`~warp_lab.compiler.typing_special`): argument binding, scalar checks, joins.
"""

from __future__ import annotations


from warp_lab.compiler.typed_ast import NO_CONST, CallTarget, const_of
from warp_lab.compiler.typing_rules import implicit_ok, literal_type, lossy_hint, promote, type_name
from warp_lab.lang.types import Scalar

__all__ = ["_args", "_scalar", "_weak", "_join", "_target", "_convertible"]


def _args(t, node, names, required, name):
    """Positional + keyword arguments of a call, in the order of ``names``
    (``*``/``**`` unpacking was refused before: ``ExprTyper.check_call_unpacking``)."""
    out = list(node.args)
    form = _call_form(name, names, required)
    if len(out) > len(names):
        most = f"at most {len(names)} arguments" if names else "no arguments"
        raise t.error(f"{name}() takes {most}, got {len(out)}", node, form)
    out += [None] * (len(names) - len(out))
    for kw in node.keywords:
        if kw.arg not in names:
            raise t.error(f"{name}() has no parameter {kw.arg!r}", kw.value, form)
        k = names.index(kw.arg)
        if out[k] is not None:
            raise t.error(f"{name}() got {kw.arg!r} twice", kw.value, form)
        out[k] = kw.value
    for k in range(required):
        if out[k] is None:
            raise t.error(f"{name}() needs the argument {names[k]!r}", node, form)
    node.wl_args = out
    return out


def _call_form(name, names, required) -> str:
    """The hint of a call with missing, extra or unknown arguments: the builtin's
    parameters in order, optional ones in brackets, ``"the call is
    shfl_down_sync(mask, value, delta[, width])"``, so that a CUDA habit (no mask) or a
    swapped order shows against the whole list."""
    opt = "".join(f"[, {n}]" if k or required else f"[{n}]"
                  for k, n in enumerate(names[required:]))
    return f"the call is {name}({', '.join(names[:required])}{opt})"


def _scalar(t, a, what="argument"):
    ty = t.value_type(a)
    if not isinstance(ty, Scalar):
        raise t.error(f"{what} must be a number, not {type_name(ty)}", a)
    return ty


def _weak(a):
    return getattr(a, "wl_weak", False)


def _join(t, nodes):
    """Promote the types of scalar argument nodes (weak literals adopt the others' type)."""
    ty, weak = None, True
    for a in nodes:
        at = _scalar(t, a)
        if ty is None:
            ty, weak = at, _weak(a)
        else:
            ty = promote(ty, at, weak, _weak(a))
            weak = weak and _weak(a)
    if weak and ty is not None and not ty.is_float:
        ty = literal_type(const_of(nodes[0])) if len(nodes) == 1 else ty
    return ty


def _target(node, name, result, **info):
    node.wl_call = CallTarget("builtin", name, type=result, info=info)
    return node.wl_call


def _convertible(t, a, dst, what):
    c = const_of(a)
    weak = c if _weak(a) and c is not NO_CONST else None
    if not implicit_ok(a.wl_ty, dst, weak):
        hint = lossy_hint(a.wl_ty, dst)
        if what == "the mask":   # CUDA code passes -1 or 0xffffffff (an int there)
            hint = ("a lane mask is a uint32: wl.FULL_MASK (0xFFFFFFFF) for all 32 lanes, "
                    f"wl.activemask() for the lanes running here; else {hint}")
        raise t.error(f"{what} must be {type_name(dst)}; {type_name(a.wl_ty)} would lose "
                      "information", a, hint)
