"""Typing rules of calls: builtins, casts, vector/matrix constructors and device functions.

Each builtin rule takes the typer, the ``ast.Call`` node and the builtin's name, checks the
arguments, stamps ``node.wl_call`` (a :class:`CallTarget`) and returns the result type.
:func:`type_call` finds a builtin's rule through its record's ``impl``
(:mod:`warp_lab.compiler.builtin_rules`, where each rule is paired with its code generator
of :mod:`warp_lab.compiler.lower_builtins`).
"""

from __future__ import annotations

import ast
import math
import typing

import numpy as np

from warp_lab.options import sm_number
from warp_lab.compiler.typed_ast import NO_CONST, CallTarget, const_of
from warp_lab.compiler.typing_calls import _args, _convertible, _join, _scalar, _target, _weak
from warp_lab.compiler.typing_exprs import PyBuiltin, matrix_of, vector_of
from warp_lab.compiler.typing_rules import (NONE, Meta, cast_value, fits, float_for,
                                            literal_type, promote, type_name)
from warp_lab.compiler.typing_special import (type_alloc_array, type_dynamic_shared_array,
                                              type_print, type_printf)
from warp_lab.lang import builtins as B
from warp_lab.lang.kernel import Constant, Func, TypeFactory
from warp_lab.lang.types import (ANY, SCALARS, ArrayType, Matrix, Scalar, StructType, TupleType,
                                 Quaternion, Transformation, TypeFamily, Vector, as_type,
                                 bool_, float32, int32, int64, uint32)

__all__ = ["type_call"]

# -- individual rules ---------------------------------------------------------------
def _math1(t, node, name, target=None):
    (x,) = _args(t, node, ["x"], 1, name)
    xt = _scalar(t, x)
    ft = float_for(int32 if xt.is_bool else xt)
    _target(node, target or name, ft, ty=ft)
    return t.mark(node, ft)


def _py_round(t, node, name):
    """Python's ``round(x)``: halfway cases to even (``rint``), where ``wl.round`` is CUDA's
    ``roundf``, away from zero; a float of ``x``'s type, not Python's int."""
    return _math1(t, node, name, target="rint")


def _math2(t, node, name):
    a, b = _args(t, node, ["x", "y"], 2, name)
    ty = _join(t, [a, b])
    ft = float_for(int32 if ty.is_bool else ty)
    _target(node, name, ft, ty=ft)
    return t.mark(node, ft)


def _pow(t, node, name):
    a, b = _args(t, node, ["x", "y"], 2, name)
    ty = _join(t, [a, b])
    ty = int32 if ty.is_bool else ty
    t.check_literals_fit((a, b), ty)
    _target(node, "pow", ty, ty=ty)
    return t.mark(node, ty)


def _fp_class(t, node, name):
    (x,) = _args(t, node, ["x"], 1, name)
    xt = _scalar(t, x)
    _target(node, name, bool_, ty=xt)
    if not xt.is_float:
        return t.mark(node, bool_, name == "isfinite", weak=True)
    return t.mark(node, bool_)


def _minmax(t, node, name):
    if node.keywords or len(node.args) < 2:
        raise t.error(f"{name}() takes two or more positional arguments", node)
    tys = [t.value_type(a) for a in node.args]
    if all(isinstance(x, (Vector)) for x in tys) and len(set(tys)) == 1:
        _target(node, name, tys[0], ty=tys[0])
        return t.mark(node, tys[0])
    ty = _join(t, node.args)
    ty = int32 if ty.is_bool else ty
    consts = [const_of(a) for a in node.args]
    if not ty.is_float and all(_weak(a) and type(c) is int for a, c in zip(node.args, consts)):
        # integer constant expressions alone: Python's exact min/max, typed as a literal of
        # that value (fuzzer seed 502587: min(-2 * 10**9, 5 << 61), whose promotion is
        # uint64, once wrapped the negative one and gave 5 << 61)
        v = (max if name == "max" else min)(consts)
        vt = t._exact_literal_type(v, node)
        _target(node, name, vt, ty=vt)
        return t.mark(node, vt, v, weak=True)
    t.check_literals_fit(node.args, ty)
    _target(node, name, ty, ty=ty)
    if all(c is not NO_CONST for c in consts):
        vals = [cast_value(c, ty) for c in consts]
        return t.mark(node, ty, _fold_minmax(vals, name == "max", ty),
                      weak=all(_weak(a) for a in node.args))
    return t.mark(node, ty)


def _fold_minmax(vals: list, big: bool, ty):
    """min (max when ``big``) of constants ``vals`` of scalar type ``ty`` as the lowered
    code computes it: for floats LLVM's ``minnum``/``maxnum``, PTX's ``min``/``max``
    (IEEE 754 minNum: a NaN operand is ignored, NaN only when all are; of two zeros
    +0.0 is the larger, PTX ISA "max"), not Python's, whose NaN result depends on the
    order of the arguments."""
    if not ty.is_float:
        return (max if big else min)(vals)
    out = vals[0]
    for v in vals[1:]:
        if math.isnan(out) or math.isnan(v):
            out = v if math.isnan(out) else out
        elif out == v == 0:
            neg = math.copysign(1, out) < 0, math.copysign(1, v) < 0
            out = -0.0 if (all(neg) if big else any(neg)) else 0.0
        else:
            out = (max if big else min)(out, v)
    return out


def _abs_sign(t, node, name):
    (x,) = _args(t, node, ["x"], 1, name)
    xt = t.value_type(x)
    if isinstance(xt, Vector) and name == "abs":
        _target(node, name, xt, ty=xt)
        return t.mark(node, xt)
    if not isinstance(xt, Scalar):
        raise t.error(f"{name}() needs a number, not {type_name(xt)}", x)
    ty = int32 if xt.is_bool else xt
    _target(node, name, ty, ty=ty)
    c = const_of(x)
    if c is not NO_CONST and name == "abs":
        return t.mark(node, ty, cast_value(abs(c), ty), weak=_weak(x))
    return t.mark(node, ty)


def _clamp(t, node, name):
    args = _args(t, node, ["x", "lo", "hi"], 3, name)
    ty = _join(t, args)
    ty = int32 if ty.is_bool else ty
    t.check_literals_fit(args, ty)
    _target(node, name, ty, ty=ty)
    return t.mark(node, ty)


def _fma(t, node, name):
    args = _args(t, node, ["a", "b", "c"], 3, name)
    ty = float_for(_join(t, args))
    _target(node, name, ty, ty=ty)
    return t.mark(node, ty)


def _bitcast_source(t, x, kind: str, bits: int, name: str):
    """The type whose bits a bit cast reads from argument ``x``: a float (``kind`` "f") or
    an integer of either signedness ("i") of ``bits`` bits, no conversion. A literal
    takes that width (an integer literal the signed type when it fits, else the
    unsigned one, as C's ``0xFFFFFFFF`` is unsigned)."""
    xt = _scalar(t, x)
    c = const_of(x)
    want = f"a {bits}-bit float" if kind == "f" else f"a {bits}-bit integer"
    if _weak(x) and c is not NO_CONST and not xt.is_bool:
        if kind == "f" and f"float{bits}" in SCALARS:
            return SCALARS[f"float{bits}"]
        if kind == "i" and not isinstance(c, float):
            for ty in (SCALARS[f"int{bits}"], SCALARS[f"uint{bits}"]):
                if fits(c, ty):
                    return ty
            raise t.error(f"{name}() needs {want}; {c} does not fit in {bits} bits", x)
    ok = xt.bits == bits and not xt.is_bool and (xt.is_float if kind == "f" else xt.is_int)
    if not ok:
        cast = (f"wl.float{bits}(x)" if kind == "f" else f"wl.int{bits}(x)")
        raise t.error(f"{name}() needs {want}, not {type_name(xt)}", x,
                      f"convert the value first, {cast}, or use wl.bitcast(x, dtype) with a "
                      f"dtype of {xt.bits} bits")
    return xt


def _fold_bitcast(t, node, name, x, src, dst):
    """Mark ``node`` (a call of builtin ``name``) as a bit cast of ``x`` (type ``src``) to
    ``dst``, folded when ``x`` is a constant (numpy's ``view``; a NaN result is left to run
    time, which keeps its payload)."""
    _target(node, name, dst, ty=src)
    c = const_of(x)
    if c is not NO_CONST:
        v = np.array(cast_value(c, src), dtype=src.numpy).view(dst.numpy)[()]
        if not (dst.is_float and np.isnan(v)):
            return t.mark(node, dst, float(v) if dst.is_float else int(v))
    return t.mark(node, dst)


def _bitcast_fixed(t, node, name):
    """``wl.float_as_int(x)`` and the other CUDA type-casting intrinsics (:data:`B.BITCASTS`)."""
    kind, bits, res = B.BITCASTS[name]
    (x,) = _args(t, node, ["x" if kind == "f" else "i"], 1, name)
    return _fold_bitcast(t, node, name, x, _bitcast_source(t, x, kind, bits, name),
                         as_type(res))


def _bitcast(t, node, name):
    """``wl.bitcast(x, dtype)``: x's bits as a scalar ``dtype`` of the same width."""
    x, dtype_n = _args(t, node, ["x", "dtype"], 2, name)
    t.visit(dtype_n)
    v = dtype_n.wl_ty.value if isinstance(dtype_n.wl_ty, Meta) else None
    if isinstance(v, PyBuiltin) and v.name in ("int", "float"):
        v = {"int": int, "float": float}[v.name]
    try:
        dst = as_type(v) if v is not None else None
    except TypeError:
        dst = None
    if not isinstance(dst, Scalar) or dst.is_bool:
        raise t.error(f"bitcast() needs a scalar type for dtype, not {ast.unparse(dtype_n)}",
                      dtype_n, "e.g. wl.bitcast(x, wl.int32)")
    xt = _scalar(t, x)
    if xt.is_bool:
        raise t.error("bitcast() of a bool: a bool has no defined bits", x,
                      "convert it first, wl.int32(b)")
    if _weak(x) and const_of(x) is not NO_CONST and (
            not isinstance(const_of(x), float) or f"float{dst.bits}" in SCALARS):
        kind = "f" if isinstance(const_of(x), float) else "i"
        src = _bitcast_source(t, x, kind, dst.bits, name)
    else:
        src = xt
    if src.bits != dst.bits:
        raise t.error(f"bitcast() keeps the bits: {type_name(src)} has {src.bits} bits but "
                      f"{dst.name} has {dst.bits}", node,
                      f"convert to a {dst.bits}-bit type first, or pick a {src.bits}-bit dtype")
    return _fold_bitcast(t, node, name, x, src, dst)


def _no_args(res):
    def rule(t, node, name):
        _args(t, node, [], 0, name)
        if name == "tid":
            t.uses_tid = True
            n = t.ctx.launch_ndim
            ty = int32 if n == 1 else TupleType((int32,) * n)
            _target(node, name, ty, ndim=n)
            return t.mark(node, ty)
        _target(node, name, res)
        return t.mark(node, res)
    return rule


def _syncwarp(t, node, name):
    (mask,) = _args(t, node, ["mask"], 0, name)
    if mask is not None:
        _scalar(t, mask)
        _convertible(t, mask, uint32, "the mask")
    _target(node, name, NONE)
    return t.mark(node, NONE)


def _shfl(t, node, name):
    third = "src_lane" if name == "shfl_sync" else ("lane_mask" if name == "shfl_xor_sync"
                                                   else "delta")
    mask, value, lane, width = _args(t, node, ["mask", "value", third, "width"], 3, name)
    _scalar(t, mask)
    _convertible(t, mask, uint32, "the mask")
    agg = t.value_type(value)
    if isinstance(agg, (Vector, Matrix)):  # CUDA shuffles 32/64-bit words only, too
        raise t.error(f"the shuffled value must be a number, not {type_name(agg)}", value,
                      f"shuffle each component and rebuild it: wl.{type_name(agg)}"
                      f"(wl.{name}(mask, v[0], ...), wl.{name}(mask, v[1], ...), ...)"
                      if isinstance(agg, Vector) else
                      "shuffle each element m[r, c] and rebuild the matrix")
    vt = _scalar(t, value, "the shuffled value")
    if _weak(value):
        vt = literal_type(const_of(value))
    if vt.is_bool or vt.bits < 32:
        vt = int32 if not vt.is_float else float32
    _scalar(t, lane)
    _convertible(t, lane, int32, f"the {third}")
    if width is not None:
        _scalar(t, width)
        _convertible(t, width, int32, "the width")
        w = const_of(width)
        if w is not NO_CONST and w not in (1, 2, 4, 8, 16, 32):
            raise t.error("width must be a power of two from 1 to 32", width)
    _target(node, name, vt, ty=vt)
    return t.mark(node, vt)


def _vote(t, node, name):
    mask, pred = _args(t, node, ["mask", "predicate"], 2, name)
    _scalar(t, mask)
    _convertible(t, mask, uint32, "the mask")
    t.truth(pred)
    res = uint32 if name == "ballot_sync" else bool_
    _target(node, name, res)
    return t.mark(node, res)


def _needs_sm(t, node, name, sm: int, ptx: str):
    """Refuse ``name`` when compiling for an architecture older than ``sm_<sm>`` (LLVM
    cannot select ``ptx`` there, and ptxas would refuse it without pointing at the call)."""
    arch = getattr(t.ctx.options, "arch", None)
    if arch is not None and sm_number(arch) < sm:
        raise t.error(f"wl.{name}() needs sm_{sm} or newer ({ptx}); this kernel is compiled "
                      f"for {arch}", node, f"compile with arch='sm_{sm}' or newer")


def _block_vote(t, node, name):
    """``wl.syncthreads_count/and/or(predicate)``: CUDA's ``__syncthreads_count`` & co.
    (CUDA Programming Guide "Synchronization Functions"; PTX ``bar.red``)."""
    (pred,) = _args(t, node, ["predicate"], 1, name)
    t.truth(pred)
    res = int32 if name == "syncthreads_count" else bool_
    _target(node, name, res)
    return t.mark(node, res)


def _sync_operand(t, mask, value):
    """Type ``mask`` (a uint32) and ``value`` (a number) of a warp match/reduce; the value's
    type with literals at their own type and bool/8/16-bit integers widened to 32 bits."""
    _scalar(t, mask)
    _convertible(t, mask, uint32, "the mask")
    vt = _scalar(t, value, "the value")
    if _weak(value) and not vt.is_float:
        vt = literal_type(const_of(value))
    if vt.is_bool or vt.bits < 32:
        vt = uint32 if vt.kind == "u" else int32
    return vt


def _match(t, node, name):
    """``wl.match_any_sync/match_all_sync(mask, value)`` (CUDA Programming Guide "Warp Match
    Functions"; PTX ISA 9.7.13.8 ``match.sync``, sm_70+): values compared by their bits."""
    mask, value = _args(t, node, ["mask", "value"], 2, name)
    vt = _sync_operand(t, mask, value)
    _needs_sm(t, node, name, 70, "match.sync")
    _target(node, name, uint32, ty=vt)
    return t.mark(node, uint32)


def _reduce(t, node, name):
    """``wl.reduce_<op>_sync(mask, value)`` (CUDA Programming Guide "Warp Reduce Functions";
    PTX ISA 9.7.13.10 ``redux.sync``, sm_80+): 32-bit integers; add wraps; min/max compare
    signed or unsigned by the value's type."""
    mask, value = _args(t, node, ["mask", "value"], 2, name)
    vt = _sync_operand(t, mask, value)
    if vt.is_float or vt.bits != 32:
        raise t.error(f"wl.{name}() reduces 32-bit integers (redux.sync), not "
                      f"{type_name(vt)}", value,
                      "reduce floats with wl.shfl_xor_sync in a loop (offset 16, 8, 4, 2, 1)"
                      if vt.is_float else "reduce the low and high halves separately, or "
                      "use wl.shfl_xor_sync in a loop")
    _needs_sm(t, node, name, 80, "redux.sync")
    _target(node, name, vt, ty=vt)
    return t.mark(node, vt)


_ATOMIC_TYPES = ("int32", "uint32", "int64", "uint64", "float16", "float32", "float64")


def _atomic(t, node, name):
    """``wl.atomic_<op>(arr, index..., [compare,] value)``, ``wl.atomic_load(arr, index...)``
    and ``wl.atomic_store(arr, index..., value)``: relaxed, device scope (CUDA's
    ``atomicAdd`` & co.; ``cuda::atomic_ref<T, thread_scope_device>`` ``load``/``store``
    with ``memory_order_relaxed``)."""
    op = name[len("atomic_"):]
    nval = {"cas": 2, "load": 0}.get(op, 1)
    if node.keywords:
        raise t.error(f"{name}() takes positional arguments only", node)
    if len(node.args) < 2 + nval:
        vals = {0: "", 1: ", value", 2: ", compare, value"}[nval]
        raise t.error(f"{name}() needs (array, index{vals})", node)
    arr = node.args[0]
    at = t.value_type(arr)
    if not isinstance(at, ArrayType):
        raise t.error(f"the first argument of {name}() must be an array, not {type_name(at)}",
                      arr)
    if at.space == "local":
        raise t.error("atomics need a global or shared array, not a local array", arr)
    if op != "load":
        t.mark_written(arr)
    idx = node.args[1:len(node.args) - nval]
    for i in idx:
        t.value_type(i)
    if len(idx) == 1 and isinstance(idx[0].wl_ty, TupleType):
        if len(idx[0].wl_ty.elems) != at.ndim or not all(
                isinstance(e, Scalar) and e.is_int for e in idx[0].wl_ty.elems):
            raise t.error(f"the index of a {at.ndim}-D array must be {at.ndim} integers", idx[0])
        tuple_index = True
    else:
        if len(idx) != at.ndim:
            raise t.error(f"a {at.ndim}-D array needs {at.ndim} indices, got {len(idx)}", node)
        for i in idx:
            t.index_type(i)
        tuple_index = False
    dt = at.dtype
    if not (isinstance(dt, Scalar) and (dt.name in _ATOMIC_TYPES or dt.is_bf16)):
        raise t.error(f"{name}() works on int32, uint32, int64, uint64, float32 and float64 "
                      f"arrays (float16: atomic_add and atomic_sub), not {type_name(dt)}", arr)
    if isinstance(dt, Scalar) and dt.is_bf16:
        # Warp's atomic_add/sub/min/max(bfloat16*): a CAS loop on the 16-bit element
        # (builtin.h; compiler/bf16.atomic_bf16), PTX atom.cas.b16 (sm_70+)
        if op not in ("add", "sub", "min", "max"):
            raise t.error(f"{name}() on bfloat16 arrays is not in warp_lab yet: atomic_add, "
                          "atomic_sub, atomic_min and atomic_max are", arr)
        _needs_sm(t, node, name, 70, "atom.cas.b16")
    elif dt.bits == 16:
        # CUDA's atomicAdd(__half*) (sm_70+); PTX ISA 9.7.13.5 atom.add.noftz.f16. Other
        # operations would be CAS loops on the aligned 32-bit word around the element, which
        # reach past the end of an array with an odd number of halves
        if op not in ("add", "sub"):
            raise t.error(f"{name}() does not work on float16 arrays: only atomic_add and "
                          "atomic_sub do (CUDA's atomicAdd(__half*))", arr)
        _needs_sm(t, node, name, 70, "atom.add.noftz.f16")
    if dt.is_float and op in ("and", "or", "xor"):
        raise t.error(f"{name}() needs an integer array", arr)
    for v in node.args[len(node.args) - nval:]:
        _scalar(t, v, "the value")
        _convertible(t, v, dt, "the value")
    res = NONE if op == "store" else dt
    _target(node, name, res, op=op, ty=dt, tuple_index=tuple_index, nidx=len(idx))
    return t.mark(node, res)


def _select(t, node, name):
    cond, a, b = _args(t, node, ["cond", "a", "b"], 3, name)
    t.truth(cond)
    at, bt = t.value_type(a), t.value_type(b)
    if isinstance(at, Scalar) and isinstance(bt, Scalar):
        ty = promote(at, bt, _weak(a), _weak(b))
        t.check_literals_fit((a, b), ty)
    elif at == bt and isinstance(at, (Vector, Matrix)):
        ty = at
    else:
        raise t.error(f"select() needs two values of one type, got {type_name(at)} and "
                      f"{type_name(bt)}", node)
    _target(node, name, ty, ty=ty)
    return t.mark(node, ty)


def _len(t, node, name):
    (x,) = _args(t, node, ["x"], 1, name)
    xt = t.value_type(x)
    _target(node, "len", int32)
    if isinstance(xt, ArrayType):
        if xt.shape is not None:
            return t.mark(node, int32, xt.shape[0], weak=True)
        return t.mark(node, int32)
    if isinstance(xt, Vector):
        return t.mark(node, int32, xt.n, weak=True)
    if isinstance(xt, TupleType):
        return t.mark(node, int32, len(xt.elems), weak=True)
    raise t.error(f"len() of {type_name(xt)} is not defined", x)


def _vec_args(t, node, name, n):
    args = _args(t, node, [f"v{k}" for k in range(n)], n, name)
    tys = [t.value_type(a) for a in args]
    return args, tys


def _vecop(t, node, name):
    if name in ("length", "length_sq", "normalize", "transpose"):
        (a,), (at,) = _vec_args(t, node, name, 1)
        if name == "normalize" and isinstance(at, Quaternion):
            from warp_lab.lang.spatial import quat_normalize   # (a zero one: the identity)
            return _call_func(t, node, quat_normalize)
        if name == "transpose":
            if not isinstance(at, Matrix):
                raise t.error("transpose() needs a matrix", a)
            ty = matrix_of(at.elem, at.cols, at.rows)
        else:
            if not (isinstance(at, Vector) and at.elem.is_float):
                raise t.error(f"{name}() needs a float vector, not {type_name(at)}", a)
            ty = at if name == "normalize" else at.elem
        _target(node, name, ty, ty=at)
        return t.mark(node, ty)
    (a, b), (at, bt) = _vec_args(t, node, name, 2)
    if name == "mul":
        node.wl_op = "matmul" if isinstance(at, Matrix) else "mul"
        from warp_lab.compiler.typing_exprs import ExprTyper
        fake = ast.BinOp(left=a, op=ast.MatMult() if isinstance(at, Matrix) else ast.Mult(),
                         right=b)
        ast.copy_location(fake, node)
        ty = ExprTyper.visit_BinOp(t, fake)
        _target(node, name, ty, binop=fake)
        return t.mark(node, ty)
    if not (isinstance(at, Vector) and at == bt):
        raise t.error(f"{name}() needs two vectors of one type, got {type_name(at)} and "
                      f"{type_name(bt)}", node)
    if name == "cross" and at.n != 3:
        raise t.error("cross() needs 3-vectors", node)
    ty = {"dot": at.elem, "cross": at, "outer": matrix_of(at.elem, at.n, at.n)}[name]
    _target(node, name, ty, ty=at)
    return t.mark(node, ty)


def _matrix_from_vecs(t, node, name):
    """``matrix_from_rows(*vs)`` / ``matrix_from_cols(*vs)``: the matrix whose rows (columns)
    are the vectors, ``len(vs)`` x n (n x ``len(vs)``), of their component type (warp-lang
    1.19 ``builtins.py`` ``matrix_from_vecs_create_value_func``: every argument a vector, one
    length, one dtype; ``mat.h`` ``matrix_from_rows``/``matrix_from_cols``)."""
    form = f"{name}(v0, v1, ...): vectors of one type, each a {name[12:-1]}"
    if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        raise t.error(f"{name}() takes vectors, positionally", node, form)
    if not node.args:
        raise t.error(f"{name}() needs at least one vector", node, form)
    tys = [t.value_type(a) for a in node.args]
    for a, at in zip(node.args, tys):
        if type(at) is not Vector or at.elem.is_bool:
            raise t.error(f"{name}() takes vectors, not {type_name(at)}", a, form)
    for a, at in zip(node.args[1:], tys[1:]):
        if at != tys[0]:
            what = "length" if at.n != tys[0].n else "component type"
            raise t.error(f"{name}() needs vectors of one type: {type_name(tys[0])} and "
                          f"{type_name(at)} differ in {what}", a, form)
    n, k = tys[0].n, len(tys)
    ty = matrix_of(tys[0].elem, k, n) if name == "matrix_from_rows" else \
        matrix_of(tys[0].elem, n, k)
    _target(node, name, ty, ty=tys[0])
    return t.mark(node, ty)


def _argminmax(t, node, name):
    """``argmin(v)`` / ``argmax(v)``: the uint32 index of the smallest (largest) component of
    a vector, the first of equal ones; NaN components are skipped, and a vector of NaNs
    gives 0 (warp-lang 1.19 ``vec.h`` ``argmin``/``argmax``)."""
    (a,) = _args(t, node, ["v"], 1, name)
    at = t.value_type(a)
    if not isinstance(at, Vector) or at.elem.is_bool:
        raise t.error(f"{name}() needs a vector, not {type_name(at)}", a,
                      f"{name}(v) of a vector such as wp.vec3; for two numbers write "
                      f"{'min' if name == 'argmin' else 'max'}(a, b) or a comparison")
    _target(node, name, uint32, ty=at)
    return t.mark(node, uint32)


def _div_approx(t, node, name):
    """``div_approx(a, b)``: ``a / b`` of a float and a float, or of a float vector,
    matrix or quaternion and a float of its type, either way round (warp-lang 1.19 ``builtins.py``
    ``div_approx``; ``builtin.h`` ``approx_div``). Exact (IEEE) division here, as Warp's CPU
    device computes it; Warp's GPU code uses ``div.approx``/``rcp.approx``."""
    a, b = _args(t, node, ["a", "b"], 2, name)
    at, bt = t.value_type(a), t.value_type(b)
    ae = at.elem if isinstance(at, (Vector, Matrix)) else at
    be = bt.elem if isinstance(bt, (Vector, Matrix)) else bt
    form = "div_approx(a, b): floats, or a float vector/matrix/quaternion and a float"
    for x, xt, xe in ((a, at, ae), (b, bt, be)):
        if not (isinstance(xe, Scalar) and xe.is_float) and not (
                isinstance(xt, Scalar) and _weak(x)):
            raise t.error(f"div_approx() takes floats, not {type_name(xt)}", x, form)
    if not (isinstance(at, Scalar) or isinstance(bt, Scalar)):
        raise t.error(f"div_approx() divides by a float, not by {type_name(bt)}", b, form)
    if not (ae.is_float or be.is_float):
        raise t.error("div_approx() takes floats, not two integer literals", node, form)
    from warp_lab.compiler.typing_exprs import ExprTyper
    fake = ast.copy_location(ast.BinOp(left=a, op=ast.Div(), right=b), node)
    ty = ExprTyper.visit_BinOp(t, fake)
    _target(node, name, ty, binop=fake)
    return t.mark(node, ty)


_PY = {"print": type_print, "len": _len, "abs": _abs_sign, "min": _minmax, "max": _minmax,
       "round": _py_round, "pow": _pow}


def _cast(t, node, ty: Scalar, weak_result=False):
    (x,) = _args(t, node, ["x"], 1, ty.name)
    xt = t.value_type(x)
    if isinstance(xt, Meta) and isinstance(xt.value, str) and ty.is_float:
        # float('nan'), float('-inf'): Python's own spelling of the special values
        try:
            value = float(xt.value)
        except ValueError:
            raise t.error(f"{ast.unparse(node)}: the string is not a number", x,
                          "write the number itself, or math.nan / math.inf") from None
        return t.mark(node, ty, cast_value(value, ty), weak=weak_result)
    if not isinstance(xt, Scalar):
        raise t.error(f"cannot convert {type_name(xt)} to {ty.name}", x)
    node.wl_call = CallTarget("cast", type=ty, info={"src": xt})
    c = const_of(x)
    if c is not NO_CONST:
        try:
            return t.mark(node, ty, cast_value(c, ty), weak=weak_result and _weak(x))
        except ValueError as exc:
            raise t.error(str(exc), x, getattr(exc, "hint", "")) from None
    return t.mark(node, ty)


def _construct(t, node, ty, keywords=()):
    """A type's constructor call: ``vec3(x, y, z)``, ``mat22(...)``, and Warp's forms of
    ``quat(x, y, z, w)`` / ``quat(ijk, real)`` / ``quat(q)`` and ``transform(p, q)`` /
    ``transform(p)`` (the identity rotation) / ``transform(s)`` / seven components /
    ``transform(t)``, ``spatial_vector(w, v)`` (warp-lang 1.19 ``builtins.py``
    ``quaternion``, ``transformation``, ``spatial_vector``). ``keywords``: the keyword
    names the caller took already (``dtype`` of a :class:`TypeFamily` call)."""
    if isinstance(ty, Transformation) and node.keywords and len(node.args) < 2 and \
            {k.arg for k in node.keywords} <= {"p", "q"} - ({"p"} if node.args else set()):
        # transform(p=..., q=...), transform(p, q=...): Warp's keywords, as the positional
        # (p, q) / (p) forms
        kw = {k.arg: k.value for k in node.keywords}
        if node.args:
            kw["p"] = node.args[0]
        if "p" not in kw:
            raise t.error(f"{ty.name}(q=...) needs p too", node, "write transform(p, q)")
        node.args = [kw["p"]] + ([kw["q"]] if "q" in kw else [])
        node.keywords = []
    if any(k.arg not in keywords for k in node.keywords) or \
            any(isinstance(a, ast.Starred) for a in node.args):
        raise t.error(f"{ty.name}() takes positional components", node)
    args = node.args
    tys = [t.value_type(a) for a in args]
    info = {"tys": tys}
    scalars = all(isinstance(x, Scalar) for x in tys)

    def vec3(x):
        return type(x) is Vector and x.n == 3

    if isinstance(ty, Quaternion):
        ok = (len(args) in (0, 4) and scalars) or (
            len(args) == 1 and isinstance(tys[0], Quaternion)) or (
            len(args) == 2 and vec3(tys[0]) and isinstance(tys[1], Scalar))
        if not ok:
            raise t.error(f"{ty.name}() takes 4 numbers (x, y, z, w), a 3-vector and a number "
                          f"(ijk, real), or a quaternion; got ({', '.join(map(type_name, tys))})",
                          node)
    elif isinstance(ty, Transformation):
        ok = (len(args) in (0, 1, 7) and scalars) or (
            len(args) == 1 and isinstance(tys[0], Transformation)) or (
            len(args) in (1, 2) and vec3(tys[0]) and
            (len(args) == 1 or isinstance(tys[1], Quaternion)))
        if not ok:
            raise t.error(f"{ty.name}() takes a 3-vector p and a quaternion q, p alone, one "
                          f"number or 7; got ({', '.join(map(type_name, tys))})", node)
        info["identity_q"] = len(args) == 1 and vec3(tys[0])
    elif isinstance(ty, Vector):
        n = ty.n
        ok = (len(args) in (0, 1, n) and scalars) or (
            len(args) == 1 and isinstance(tys[0], Vector) and tys[0].n == n) or (
            n == 6 and len(args) == 2 and vec3(tys[0]) and vec3(tys[1]))
        if not ok:
            raise t.error(f"{ty.name}() takes 0, 1 or {n} numbers (or one {n}-vector)", node)
    else:
        r, c = ty.rows, ty.cols
        ok = (len(args) in (0, 1, r * c) and scalars) or (
            len(args) == r and all(isinstance(x, Vector) and x.n == c for x in tys))
        if not ok:   # (one number fills the matrix: Warp's mat_t(Type s))
            raise t.error(f"{ty.name}() takes 0, 1 or {r * c} numbers, or {r} row vectors",
                          node)
    for a, at in zip(args, tys):   # a constant component converts as _cast's would
        c = const_of(a) if isinstance(at, Scalar) else NO_CONST
        if c is not NO_CONST:
            try:
                cast_value(c, ty.elem)
            except ValueError as exc:
                raise t.error(str(exc), a, getattr(exc, "hint", "")) from None
    node.wl_call = CallTarget("construct", type=ty, info=info)
    return t.mark(node, ty)


def _compile_time(t, node, what: str):
    """The compile-time value of a keyword of ``vector()``/``matrix()``: an int, a tuple
    of ints, or a type (``float`` is float32, ``int`` int32)."""
    t.visit(node)
    ty = node.wl_ty
    if isinstance(ty, Meta):
        v = ty.value
        if isinstance(v, PyBuiltin) and v.name in ("float", "int", "bool"):
            return as_type({"float": float, "int": int, "bool": bool}[v.name])
        if isinstance(v, Scalar):
            return v
    c = const_of(node)
    if c is not NO_CONST:
        return c
    raise t.error(f"{what} must be a compile-time constant", node)


def _factory(t, node, factory):
    """Warp's ``vector(*args, length=None, dtype=None)`` / ``matrix(*args, shape=None,
    dtype=None)`` in a kernel (``warp/_src/builtins.py``'s ``vector``/``matrix``
    builtins): the type's extent from the keyword or, for a vector, the arguments (one
    vector: its length; else how many; a matrix needs ``shape=``), its dtype from the keyword or the arguments' components
    (a float literal float32); then the call is that type's constructor.

    Raises:
        KernelCompileError: an unknown or non-constant keyword, an extent that cannot be
            told, a dtype that is not a scalar type; the constructor's own errors.
    """
    size_kw = "length" if factory.name == "vector" else "shape"
    kws = {}
    for kw in node.keywords:
        if kw.arg not in (size_kw, "dtype"):
            raise t.error(f"wp.types.{factory.name}() takes {size_kw}= and dtype=, not "
                          f"{kw.arg}=", kw)
        kws[kw.arg] = _compile_time(t, kw.value, f"{factory.name}({kw.arg}=...)")
    tys = [t.value_type(a) for a in node.args]
    dtype = kws.get("dtype")
    if dtype is None:
        comps = [x.elem if isinstance(x, (Vector, Matrix)) else x for x in tys]
        strong = [c for c, a in zip(comps, node.args)
                  if isinstance(c, Scalar) and not (isinstance(c, Scalar) and _weak(a))]
        dtype = strong[0] if strong else (
            literal_type(const_of(node.args[0])) if node.args and isinstance(tys[0], Scalar)
            else float32)
    if not isinstance(dtype, Scalar):
        raise t.error(f"wp.types.{factory.name}(dtype=...) needs a scalar type", node)
    size = kws.get(size_kw)
    if factory.name == "vector":
        if size is None:
            size = tys[0].n if len(tys) == 1 and isinstance(tys[0], Vector) else len(tys)
        if not isinstance(size, int) or size < 1:
            raise t.error("wp.types.vector() needs length= (a positive int) or its "
                          "components", node)
        ty = vector_of(dtype, size)
    else:
        if any(isinstance(x, Vector) for x in tys):   # (Warp refuses them as well)
            raise t.error("passing vectors to wp.types.matrix() is not supported (nor in "
                          "Warp)", node, "give the components, or build the matrix from "
                          "row vectors with the matrix type itself: wp.mat22(r0, r1)")
        if size is None:    # (Warp's own rule: builtins.py matrix_value_func)
            raise t.error("wp.types.matrix() needs shape=(rows, cols): the shape argument "
                          "must be specified when initializing a matrix by value", node)
        if not (isinstance(size, tuple) and len(size) == 2 and
                all(isinstance(v, int) and v >= 1 for v in size)):
            raise t.error("wp.types.matrix() needs shape=(rows, cols) of positive ints, "
                          "or row vectors", node)
        ty = matrix_of(dtype, *size)
    node.keywords = []
    return _construct(t, node, ty)


def _construct_family(t, node, family: TypeFamily):
    """``wp.quaternion(...)``, ``wp.transformation(...)``, ``wp.quat_identity(dtype=...)``:
    the component type is ``dtype=`` when given, else the first argument's (a literal:
    float32), as Warp's ``quaternion_value_func``/``transformation_value_func`` infer it;
    then the member type's constructor."""
    dtype = None
    for kw in node.keywords:
        if kw.arg != "dtype":
            raise t.error(f"{family.name}() has no parameter {kw.arg!r}", kw.value)
        t.visit(kw.value)
        v = kw.value.wl_ty.value if isinstance(kw.value.wl_ty, Meta) else None
        if isinstance(v, PyBuiltin) and v.name == "float":
            v = float
        try:
            dtype = as_type(v)
        except TypeError:
            raise t.error(f"{family.name}() needs a float type for dtype, not "
                          f"{ast.unparse(kw.value)}", kw.value, "e.g. dtype=wp.float64") from None
    if dtype is None and node.args and not family.identity:
        first = t.value_type(node.args[0])
        dtype = getattr(first, "elem", first)
        if _weak(node.args[0]) or not isinstance(dtype, Scalar) or not dtype.is_float:
            dtype = float32 if _weak(node.args[0]) else dtype
    try:
        ty = family.of(dtype or float32)
    except TypeError as exc:
        raise t.error(str(exc), node, "Warp's quaternions and transformations have float16, "
                      "float32 or float64 components") from None
    if family.identity:
        if node.args:
            raise t.error(f"{family.name}() takes only dtype=", node.args[0])
        node.wl_call = CallTarget("construct", type=ty, info={"tys": [], "identity": True})
        return t.mark(node, ty)
    return _construct(t, node, ty, keywords=("dtype",))


#: what a device function's default value may be: a number (or a tuple of numbers), as a
#: captured module constant may (ExprTyper.classify)
_DEFAULT_TYPES = (bool, int, float, np.bool_, np.integer, np.floating, Constant)


def _default_arg(t, call, func: Func, default: ast.expr, pname: str, k: int):
    """A typed constant node standing for the default value of ``func``'s parameter ``pname``
    at ``call`` (which did not pass it).

    The value is Python's own, evaluated once when the ``def`` ran
    (``func.fn.__defaults__[k]``); the node is located at the call, and the value is
    recorded in ``TypedKernel.captured`` (a cache key changes with it).

    Raises:
        KernelCompileError: at the default in the function's source when the value is
            not a number or a tuple of numbers (``None``, a list, an array...).
    """
    from warp_lab.compiler.frontend_parse import compile_error
    from warp_lab.errors import source_label

    values = getattr(func.fn, "__defaults__", None) or ()
    value = values[k] if len(values) > k else None
    ok = isinstance(value, _DEFAULT_TYPES) or (
        isinstance(value, tuple) and value and all(isinstance(v, _DEFAULT_TYPES[:-1])
                                                   for v in value))
    if not ok:
        line = t.source.first_line + call.lineno - 1
        raise compile_error(
            func.source, default,
            f"the default value of {func.name}({pname}) is {ast.unparse(default)}"
            f"{f', a {type(value).__name__}' if value is not None else ''}: a default "
            "must be a constant number (or a tuple of them)",
            f"write a number (lo: float = 0.0), or pass {pname} at the call "
            f"({source_label(t.source.filename)}:{line})")
    stand_in = ast.copy_location(ast.Constant(value=None), call)
    t.classify(stand_in, value, f"{func.name}({pname}=...)")
    stand_in.wl_default = True
    return stand_in


def _overload(t, node, func):
    """The function of the overload set ``func`` a call takes (:class:`FuncOverloads`):
    the first whose parameter count fits, with every annotated parameter's type equal
    to its argument's; else the first the arguments convert to implicitly.

    Raises:
        KernelCompileError: none fits; the message lists the signatures.
    """
    from warp_lab.compiler.frontend import evaluate_annotation
    from warp_lab.compiler.typing_rules import implicit_ok

    given = [a for a in node.args] + [k.value for k in node.keywords]
    tys = [t.value_type(a) for a in given]
    exact, loose = [], []
    for f in func.overloads:
        code = f.fn.__code__
        names = list(code.co_varnames[:code.co_argcount])
        required = len(names) - len(f.fn.__defaults__ or ())
        if not required <= len(given) <= len(names):
            continue
        anns = getattr(f.fn, "__annotations__", {})
        bound = list(zip(names, node.args)) + [(k.arg, k.value) for k in node.keywords]
        if any(n not in names for n, _ in bound):
            continue
        same, fits = True, True
        for n, a in bound:
            ann = anns.get(n)
            if ann is None:
                continue
            try:
                ann = evaluate_annotation(f, ann)
                if ann is typing.Any:
                    continue
                if isinstance(ann, TypeFamily):   # a Warp generic type hint: any member
                    if not (ann.accepts(a.wl_ty) or ann.kind == "float" and _weak(a)):
                        fits = False
                        break
                    continue
                pt = as_type(ann)
            except (TypeError, ValueError):
                fits = False
                break
            at = a.wl_ty
            if isinstance(pt, ArrayType) and isinstance(at, ArrayType):
                ok = pt.ndim == at.ndim and pt.dtype in (at.dtype, ANY)
                same, fits = same and ok, fits and ok
                continue
            if pt != at:
                same = False
                c = const_of(a)
                weak = c if _weak(a) and c is not NO_CONST else None
                if not (isinstance(at, Scalar) and isinstance(pt, Scalar)
                        and implicit_ok(at, pt, weak)):
                    fits = False
        if same and fits:
            exact.append(f)
        elif fits:
            loose.append(f)
    if exact or loose:
        return (exact or loose)[0]
    sigs = "; ".join(f"{f.name}({', '.join(f.fn.__code__.co_varnames[:f.fn.__code__.co_argcount])})"
                     f" at line {f.source.first_line}" for f in func.overloads)
    raise t.error(f"no overload of {func.name}() takes ({', '.join(type_name(x) for x in tys)})",
                  node, f"its overloads: {sigs}")


def _call_func(t, node, func: Func):
    from warp_lab.compiler.frontend import evaluate_annotation, specialize
    if hasattr(func, "overloads"):
        func = _overload(t, node, func)
    tree = t.ctx.parse(func)
    fa = tree.args
    if fa.vararg or fa.kwarg or fa.kwonlyargs or fa.posonlyargs:
        from warp_lab.compiler.frontend_parse import compile_error
        from warp_lab.errors import source_label

        line = t.source.first_line + node.lineno - 1
        where = f"{source_label(t.source.filename)}:{line}"
        raise compile_error(func.source, tree,
                            f"{func.name}() has *args, **kwargs or keyword-only "
                            "parameters; device-function parameters must be plain names "
                            "(with default values if you like)",
                            f"pass every argument at the call ({where})")
    names = [a.arg for a in fa.args]
    args = _args(t, node, names, len(names) - len(fa.defaults), func.name)
    first = len(names) - len(fa.defaults)
    for k in range(first, len(names)):
        if args[k] is None:
            args[k] = _default_arg(t, node, func, fa.defaults[k - first], names[k], k - first)
    anns = getattr(func.fn, "__annotations__", {})
    tys = []
    family_elem = None   # the component type of the TypeFamily-annotated arguments
    for pname, a in zip(names, args):
        at = a.wl_ty if getattr(a, "wl_default", False) else t.value_type(a)  # typed already
        if isinstance(at, Meta):
            raise t.error(f"cannot pass {type_name(at)} to a device function", a)
        annotated = pname in anns
        ann = anns.get(pname)
        if annotated:
            try:
                ann = evaluate_annotation(func, ann)
            except ValueError:
                raise t.error(f"the annotation of {func.name}({pname}) is not a warp_lab type",
                              a) from None
        if annotated and ann is typing.Any:   # Warp's generic parameter: per argument type
            annotated = False
        if annotated and isinstance(ann, TypeFamily):
            pt, family_elem = _family_arg(t, func, pname, ann, a, at, family_elem, args, anns)
            tys.append(pt)
            continue
        if annotated:
            try:
                pt = as_type(ann)
            except (TypeError, ValueError):
                raise t.error(f"the annotation of {func.name}({pname}) is not a warp_lab type",
                              a) from None
            if isinstance(pt, ArrayType) and isinstance(at, ArrayType):
                if pt.dtype == ANY and pt.ndim == at.ndim:   # wp.array(dtype=Any)
                    pt = pt.__class__(at.dtype, pt.ndim, pt.space, pt.shape)
                if pt.dtype != at.dtype or pt.ndim != at.ndim:
                    raise t.error(f"{func.name}() expects {type_name(pt)} for {pname!r}, got "
                                  f"{type_name(at)}", a)
                pt = at
            else:
                _convertible(t, a, pt, f"argument {pname!r} of {func.name}()")
        elif _weak(a) and isinstance(at, Scalar):
            pt = literal_type(const_of(a))
        else:
            pt = at
        tys.append(pt)
    tf = specialize(t.ctx, func, tys, node, t)
    if tf.uses_tid:
        t.uses_tid = True
    for pname, a in zip(names, args):
        if pname in tf.written_params:
            t.mark_written(a)
    info = {"args": args, "tys": tys}
    if getattr(func, "state_param", False):
        return _stateful_call(t, node, func, tf, args, info)
    node.wl_call = CallTarget("func", func=tf, info=info)
    return t.mark(node, tf.ret)


def _family_arg(t, func, pname, family, a, at, elem, args, anns):
    """The parameter type for argument ``a`` (of type ``at``) of a parameter annotated with
    a Warp generic type hint (a :class:`TypeFamily`: any quaternion, any float 3-vector,
    any float, ...): ``at`` itself when the family accepts it and its component type is
    the other generic arguments' (Warp's ``float_infer_type``); a float literal for a
    ``Float`` takes that component type. Returns ``(type, component type)``.

    Raises:
        KernelCompileError: the family does not accept ``at``, or the component types
            differ, at the argument.
    """
    if elem is None:   # the first generic argument that is no literal sets the type
        from warp_lab.compiler.frontend import evaluate_annotation
        for other, oname in zip(args, [n for n in func.fn.__code__.co_varnames]):
            oann = anns.get(oname)
            if oann is None or other is None or _weak(other) or \
                    getattr(other, "wl_default", False):
                continue
            try:
                oann = evaluate_annotation(func, oann)
            except ValueError:
                continue
            if isinstance(oann, TypeFamily):
                ot = t.value_type(other)
                if oann.accepts(ot):
                    elem = getattr(ot, "elem", ot)
                    break
    if family.kind == "float" and isinstance(at, Scalar) and (_weak(a) or at.is_int and
                                                            const_of(a) is not NO_CONST):
        pt = elem or float32
        _convertible(t, a, pt, f"argument {pname!r} of {func.name}()")
        return pt, elem or pt
    if not family.accepts(at):
        raise t.error(f"{func.name}() expects {_family_words(family)} for {pname!r}, got "
                      f"{type_name(at)}", a)
    got = getattr(at, "elem", at)
    if elem is not None and got != elem:
        raise t.error(f"{func.name}(): {pname!r} has {got.name} components but the other "
                      f"arguments have {elem.name} ones; Warp needs one component type", a,
                      f"convert one side, e.g. wp.{elem.name}(x) or wp.vec3{'d' if elem.bits == 64 else ''}(v)")
    return at, got


def _family_words(family: TypeFamily) -> str:
    """How a message names what a generic parameter takes (``"a quaternion"``)."""
    kind = family.kind
    if kind in ("quat", "transform"):
        return "a quaternion" if kind == "quat" else "a transformation"
    if kind == "float":
        return "a float"
    if kind == "vec":
        return "a float vector"
    n = kind[3:]
    return f"a float {n}-vector" if kind.startswith("vec") else f"a float {n}x{n} matrix"


def _stateful_call(t, node, func, tf, args, info):
    """A call of a function that updates its first argument, a random-number state
    (Warp's ``randf(state)`` takes ``uint32& state``): the function returns ``(new state,
    value)``; the call's value is ``value`` and the new state is stored back into the
    variable the caller passed, as Warp's reference parameter does. Any other expression
    (``states[i]``, ``s.rng``) is a temporary copy in Warp's generated code: its new state
    is dropped."""
    a = args[0]
    if isinstance(a, ast.Name) and a.id in t.scope:
        if t.scope[a.id] != tf.ret.elems[0]:
            raise t.error(f"{func.name}()'s state {a.id!r} must be a "
                          f"{type_name(tf.ret.elems[0])} (what wp.rand_init returns), not "
                          f"{type_name(t.scope[a.id])}", a)
        info["updates"] = a.id
    elif isinstance(a, (ast.Subscript, ast.Attribute, ast.Call, ast.BinOp)):
        # an array element, a field, a call's value: Warp passes a copy of it (its codegen
        # loads ``states[i]`` into a temporary), so the advanced state is dropped
        info["updates"] = None
    else:
        raise t.error(f"{func.name}() updates its first argument, the random state: pass a "
                      "variable (state = wp.rand_init(seed) first)", a)
    node.wl_call = CallTarget("func", func=tf, info=info)
    return t.mark(node, tf.ret.elems[1])


def _rule(name: str):
    """The typing rule of builtin ``name``: its record's implementation
    (:mod:`warp_lab.compiler.builtin_rules`)."""
    from warp_lab.compiler.builtin_rules import impl_of

    return impl_of(name).type


def _bf16_in(ty) -> bool:
    """Whether ``ty`` is bfloat16 or an array of it."""
    if isinstance(ty, ArrayType):
        ty = ty.dtype
    return isinstance(ty, Scalar) and ty.is_bf16


def _no_bf16_yet(t, node, name: str, result):
    """``result`` (the typed call), unless the builtin ``name`` was called with a bfloat16
    value or array, or gives one, other than ``print`` and the math builtins of
    ``compiler/bf16.BF16_IMPLS`` and the atomics (``_atomic`` has checked their op): Warp's
    other builtins on bfloat16 (``printf``, vector ones: ``warp/native/builtin.h``) are not
    lowered yet, so the call is a located error rather than a wrong result.

    Raises:
        KernelCompileError: at the call, naming the builtin.
    """
    from warp_lab.compiler.bf16 import BF16_IMPLS
    rec = B.BUILTINS.get(name)
    if name == "print" or (rec is not None and rec.impl in BF16_IMPLS) or \
            (rec is not None and rec.impl == "atomic"):   # _atomic has checked the op
        return result
    args = list(node.args) + [k.value for k in node.keywords]
    if any(_bf16_in(getattr(a, "wl_ty", None)) for a in args) or \
            _bf16_in(getattr(node, "wl_ty", None)):
        raise t.error(f"{name}() on bfloat16 is a Warp feature that warp_lab does not have "
                      "yet (bfloat16 has casts, operators, comparisons, math functions, "
                      "min/max/clamp/abs/sign, isnan/isinf/isfinite, atomic add/sub/min/max "
                      "and print)", node,
                      "compute in float32: wp.float32(x), then wp.bfloat16(result)")
    return result


def type_call(t, node, callee):
    """Type a call of the compile-time value ``callee``."""
    if isinstance(callee, Func):
        return _call_func(t, node, callee)
    if isinstance(callee, Scalar):
        return _cast(t, node, callee)
    if isinstance(callee, (Vector, Matrix)):
        return _construct(t, node, callee)
    if isinstance(callee, TypeFactory):
        return _factory(t, node, callee)
    if isinstance(callee, TypeFamily):
        return _construct_family(t, node, callee)
    if isinstance(callee, StructType):
        from warp_lab.compiler.typing_structs import construct_struct
        return construct_struct(t, node, callee)
    if isinstance(callee, PyBuiltin):
        n = callee.name
        if n in ("int", "float"):
            return _cast(t, node, as_type(int if n == "int" else float), weak_result=True)
        if n == "bool":
            return _cast(t, node, bool_)
        if n == "range":
            raise t.error("range() can only be used in a for loop", node)
        return _PY[n](t, node, n)
    if isinstance(callee, B.Builtin):
        if callee.name == "round" and isinstance(node.func, ast.Name) and \
                node.func.id == "round":
            # Python's round, which `from warp_lab import *` shadows with wl.round (whose
            # host call is Python's round, B._SHADOWING): it keeps Python's meaning here
            # too, halfway cases to even, where wl.round(x) is CUDA's roundf
            return _py_round(t, node, "round")
        return _no_bf16_yet(t, node, callee.name, _rule(callee.name)(t, node, callee.name))
    if getattr(callee, "wl_device_form", None) == "fixedarray_zeros":
        from warp_lab.compiler.typing_special import type_fixedarray_zeros
        return type_fixedarray_zeros(t, node)
    if isinstance(callee, B.Dim3):
        raise t.error(f"wl.{callee.name} is not callable", node,
                      f"use wl.{callee.name}.x, .y or .z")
    try:
        name = B.MATH_MODULE.get(callee)
    except TypeError:
        name = None
    if name is not None:
        return _no_bf16_yet(t, node, name, _rule(name)(t, node, name))
    shadow = t.shadowed(node.func)
    if shadow is not None:
        raise t.error(f"{node.func.id} is shadowed by {shadow[0]}, so this is not "
                      f"Python's {node.func.id}() and cannot be called in a kernel", node,
                      shadow[1])
    raise t.error(f"{ast.unparse(node.func)} cannot be called in a kernel", node,
                  "kernels can call @wl.func functions, warp_lab builtins and type casts")



