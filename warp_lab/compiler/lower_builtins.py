"""Code generation for calls: builtins (each found through its record's implementation,
:mod:`warp_lab.compiler.builtin_rules`), casts, constructors and device-function calls.

Sources of the instruction choices: NVVM intrinsics (``llvm.nvvm.*``, LLVM's
NVPTXUsage guide), libdevice's ``__nv_*`` functions (libdevice user's guide),
``vprintf`` (CUDA Programming Guide, "Formatted Output": the argument buffer
holds each value at its natural alignment, floats promoted to double).
"""

from __future__ import annotations

import ast
import re

from llvmlite import ir

from warp_lab.compiler.lower_expr import (I1, I32, I64, ArrayVal, flatten, flatten_types_count,
                                          llty, memty, unflatten, zero_value)
from warp_lab.compiler.lower_ops import compare, dot, float_call, intrinsic, scalar_binop
from warp_lab.compiler.typing_rules import NONE
from warp_lab.lang.types import (Matrix, Scalar, Vector, float32, float64, int32, is_fixed_array,
                                 uint32, uint64)

__all__ = ["lower_call", "emit_trap", "emit_printf", "PY_LOWER"]

#: libdevice names for (float32, float64)
LIBDEVICE = {n: (f"__nv_{n}f", f"__nv_{n}") for n in (
    "rsqrt", "cbrt", "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "sin",
    "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
    "erf", "erfc", "atan2", "fmod", "hypot")}
#: libdevice's approximate float32 versions, used under fast_math
FAST32 = {"sin": "__nv_fast_sinf", "cos": "__nv_fast_cosf", "tan": "__nv_fast_tanf",
          "exp": "__nv_fast_expf", "exp10": "__nv_fast_exp10f", "log": "__nv_fast_logf",
          "log2": "__nv_fast_log2f", "log10": "__nv_fast_log10f"}
#: functions that are LLVM intrinsics (the back end picks the PTX instruction)
LLVM_MATH = {"sqrt": "sqrt", "floor": "floor", "ceil": "ceil", "trunc": "trunc",
             "round": "round", "rint": "rint", "copysign": "copysign"}


def _args(node):
    return getattr(node, "wl_args", node.args)


def _vals(lw, node, tys):
    return [None if a is None else lw.convert(lw.expr(a), a.wl_ty, t)
            for a, t in zip(_args(node), tys)]


def _math(lw, node, call):
    t = call.info["ty"]
    name = call.name
    args = [lw.convert(lw.expr(a), a.wl_ty, t) for a in _args(node)]
    if t.is_bf16:  # float32's function, rounded once (Warp: bfloat16(::sinf(float(x))))
        from warp_lab.compiler.bf16 import round_f32
        if name in ("asin", "acos"):   # Warp's ::asinf(min(max(float(x), -1.0f), 1.0f))
            one = ir.Constant(ir.FloatType(), 1.0)
            args = [intrinsic(lw, "minnum", float32, [intrinsic(
                lw, "maxnum", float32, [args[0], ir.Constant(ir.FloatType(), -1.0)]), one])]
        return round_f32(lw.b, _math_f(lw, name, float32, args))
    if t.bits == 16:  # compute half precision in float32
        f = ir.FloatType()
        r = _math_f(lw, name, float32, [lw.b.fpext(a, f) for a in args])
        return lw.b.fptrunc(r, llty(t))
    return _math_f(lw, name, t, args)


def _math_f(lw, name, t, args):
    if name in LLVM_MATH:
        return intrinsic(lw, LLVM_MATH[name], t, args)
    if t.bits == 32 and lw.m.fast_math and name in FAST32:
        return float_call(lw, FAST32[name], t, args)
    return float_call(lw, LIBDEVICE[name][0 if t.bits == 32 else 1], t, args)


def _pow(lw, node, call):
    t = call.info["ty"]
    a, b = _vals(lw, node, [t, t])
    return scalar_binop(lw, "pow", a, b, t)


def _abs1(lw, v, t):
    if t.is_float:
        return intrinsic(lw, "fabs", t, [v])
    if not t.is_signed:
        return v
    fn = lw.m.declare(f"llvm.abs.i{t.bits}", llty(t), [llty(t), I1])
    return lw.b.call(fn, [v, ir.Constant(I1, 0)])


def _abs(lw, node, call):
    t = call.info["ty"]
    (v,) = _vals(lw, node, [t])
    if isinstance(t, Vector):
        return tuple(_abs1(lw, x, t.elem) for x in v)
    return _abs1(lw, v, t)


def _minmax1(lw, name, a, b, t):
    if t.is_float:
        return intrinsic(lw, "minnum" if name == "min" else "maxnum", t, [a, b])
    pre = "s" if t.is_signed else "u"
    return intrinsic(lw, pre + name, t, [a, b])


def _minmax(lw, node, call):
    t = call.info["ty"]
    vals = _vals(lw, node, [t] * len(_args(node)))
    out = vals[0]
    for v in vals[1:]:
        if isinstance(t, Vector):
            out = tuple(_minmax1(lw, call.name, x, y, t.elem) for x, y in zip(out, v))
        else:
            out = _minmax1(lw, call.name, out, v, t)
    return out


def _clamp(lw, node, call):
    t = call.info["ty"]
    x, lo, hi = _vals(lw, node, [t] * 3)
    return _minmax1(lw, "min", _minmax1(lw, "max", x, lo, t), hi, t)


def _sign(lw, node, call):
    t = call.info["ty"]
    (x,) = _vals(lw, node, [t])
    ty = llty(t)
    zero = ir.Constant(ty, 0.0 if t.is_float else 0)
    pos = compare(lw, "gt", x, zero, t)
    neg = compare(lw, "lt", x, zero, t)
    if t.is_float:
        return lw.b.select(pos, ir.Constant(ty, 1.0),
                           lw.b.select(neg, ir.Constant(ty, -1.0), x))
    return lw.b.sub(lw.b.zext(pos, ty), lw.b.zext(neg, ty))


def _fma(lw, node, call):
    t = call.info["ty"]
    return intrinsic(lw, "fma", t, _vals(lw, node, [t] * 3))


def _fp_class(lw, node, call):
    t = call.info["ty"]
    if not t.is_float:
        return ir.Constant(I1, int(call.name == "isfinite"))
    (x,) = _vals(lw, node, [t])
    if call.name == "isnan":
        return lw.b.fcmp_unordered("uno", x, x)
    ax = intrinsic(lw, "fabs", t, [x], fast=False)
    inf = ir.Constant(llty(t), float("inf"))
    if call.name == "isinf":
        return lw.b.fcmp_ordered("==", ax, inf)
    return lw.b.fcmp_ordered("!=", ax, inf)  # ordered: NaN is not finite


def _bitcast(lw, node, call):
    """``wl.bitcast`` and CUDA's ``__float_as_int`` family: LLVM ``bitcast`` (PTX ``mov.b32``)."""
    (x,) = _vals(lw, node, [call.info["ty"]])
    return lw.b.bitcast(x, llty(call.type))


def _tid(lw, node, call):
    if lw.tid_value is not None:
        return lw.tid_value
    n = call.info["ndim"]
    idx = [lw.global_index(a) for a in "xyz"[:n]]
    return idx[0] if n == 1 else tuple(reversed(idx))


def _lane_id(lw, node, call):
    return lw.sreg("laneid")


def _warp_id(lw, node, call):
    b = lw.b
    lin = b.add(b.mul(b.add(b.mul(lw.sreg("tid.z"), lw.sreg("ntid.y")), lw.sreg("tid.y")),
                      lw.sreg("ntid.x")), lw.sreg("tid.x"))
    return b.lshr(lin, ir.Constant(I32, 5))


def _void_intrinsic(name, args=()):
    def gen(lw, node, call):
        fn = lw.m.declare(name, ir.VoidType(), [I32] * len(args))
        lw.b.call(fn, [ir.Constant(I32, a) for a in args])
    return gen


def _syncwarp(lw, node, call):
    (mask,) = _args(node)
    m = ir.Constant(I32, 0xFFFFFFFF) if mask is None else \
        lw.convert(lw.expr(mask), mask.wl_ty, uint32)
    lw.b.call(lw.m.declare("llvm.nvvm.bar.warp.sync", ir.VoidType(), [I32]), [m])


def _fence(scope):
    def gen(lw, node, call):
        lw.b.fence("seq_cst", scope)
    return gen


_SHFL = {"shfl_sync": ("idx", 0x1F), "shfl_up_sync": ("up", 0),
         "shfl_down_sync": ("down", 0x1F), "shfl_xor_sync": ("bfly", 0x1F)}


def _shfl(lw, node, call):
    t = call.info["ty"]
    mask_n, value_n, lane_n, width_n = _args(node)
    b = lw.b
    mask = lw.convert(lw.expr(mask_n), mask_n.wl_ty, uint32)
    value = lw.convert(lw.expr(value_n), value_n.wl_ty, t)
    lane = lw.convert(lw.expr(lane_n), lane_n.wl_ty, int32)
    mode, clamp = _SHFL[call.name]
    if width_n is None:
        c = ir.Constant(I32, clamp)
    else:
        w = lw.convert(lw.expr(width_n), width_n.wl_ty, int32)
        c = b.or_(b.shl(b.sub(ir.Constant(I32, 32), w), ir.Constant(I32, 8)),
                  ir.Constant(I32, clamp))
        if isinstance(w, ir.Constant):
            c = ir.Constant(I32, ((32 - w.constant) << 8) | clamp)

    def shfl32(v, kind):
        ty = ir.FloatType() if kind == "f32" else I32
        fn = lw.m.declare(f"llvm.nvvm.shfl.sync.{mode}.{kind}", ty, [I32, ty, I32, I32])
        return b.call(fn, [mask, v, lane, c])

    if t.bits == 32:
        return shfl32(value, "f32" if t.is_float else "i32")
    bits = b.bitcast(value, I64) if t.is_float else value
    lo = shfl32(b.trunc(bits, I32), "i32")
    hi = shfl32(b.trunc(b.lshr(bits, ir.Constant(I64, 32)), I32), "i32")
    r = b.or_(b.zext(lo, I64), b.shl(b.zext(hi, I64), ir.Constant(I64, 32)))
    return b.bitcast(r, llty(t)) if t.is_float else r


def _vote(lw, node, call):
    mask_n, pred_n = _args(node)
    mask = lw.convert(lw.expr(mask_n), mask_n.wl_ty, uint32)
    pred = lw.truth(pred_n)
    kind = call.name[:-len("_sync")]
    ret = I32 if kind == "ballot" else I1
    fn = lw.m.declare(f"llvm.nvvm.vote.{kind}.sync", ret, [I32, I1])
    return lw.b.call(fn, [mask, pred])


def _activemask(lw, node, call):
    return lw.b.call(lw.m.declare("llvm.nvvm.activemask", I32, []), [])


def _clock64(lw, node, call):
    return lw.b.call(lw.m.declare("llvm.nvvm.read.ptx.sreg.clock64", I64, []), [])


def _block_vote(lw, node, call):
    """``bar.red.popc.u32`` / ``bar.red.and.pred`` / ``bar.red.or.pred`` on barrier 0."""
    (pred_n,) = _args(node)
    pred = lw.b.zext(lw.truth(pred_n), I32)
    kind = call.name[len("syncthreads_"):]
    fn = lw.m.declare(f"llvm.nvvm.barrier0.{'popc' if kind == 'count' else kind}", I32, [I32])
    r = lw.b.call(fn, [pred])
    return r if kind == "count" else lw.b.icmp_unsigned("!=", r, ir.Constant(I32, 0))


def _match(lw, node, call):
    """``match.any.sync.b32/.b64`` / ``match.all.sync``; floats are matched by their bits."""
    mask_n, value_n = _args(node)
    t = call.info["ty"]
    mask = lw.convert(lw.expr(mask_n), mask_n.wl_ty, uint32)
    value = lw.convert(lw.expr(value_n), value_n.wl_ty, t)
    width = ir.IntType(t.bits)
    if t.is_float:
        value = lw.b.bitcast(value, width)
    if call.name == "match_any_sync":
        fn = lw.m.declare(f"llvm.nvvm.match.any.sync.i{t.bits}", I32, [I32, width])
        return lw.b.call(fn, [mask, value])
    fn = lw.m.declare(f"llvm.nvvm.match.all.sync.i{t.bits}p",
                      ir.LiteralStructType([I32, I1]), [I32, width])
    return lw.b.extract_value(lw.b.call(fn, [mask, value]), 0)


def _reduce(lw, node, call):
    """``redux.sync.{add,min,max,and,or,xor}`` (``.u32`` min/max for unsigned values)."""
    mask_n, value_n = _args(node)
    t = call.info["ty"]
    mask = lw.convert(lw.expr(mask_n), mask_n.wl_ty, uint32)
    value = lw.convert(lw.expr(value_n), value_n.wl_ty, t)
    op = call.name[len("reduce_"):-len("_sync")]
    if op in ("min", "max") and t.kind == "u":
        op = "u" + op
    fn = lw.m.declare(f"llvm.nvvm.redux.sync.{op}", I32, [I32, I32])
    return lw.b.call(fn, [value, mask])


#: CUDA's atomicAdd & co. are relaxed and device-scoped (PTX ``atom`` without ``.sys``);
#: llvmlite writes the ordering text verbatim, so the sync scope rides along with it
_DEVICE_RELAXED = 'syncscope("device") monotonic'


def _atomic(lw, node, call):
    info = call.info
    t = info["ty"]
    args = node.args
    arr = lw.expr(args[0])
    if info["tuple_index"]:
        tv = lw.expr(args[1])
        idx = [lw.array_index_value(v, et) for v, et in zip(tv, args[1].wl_ty.elems)]
    else:
        idx = [lw.array_index(a) for a in args[1:1 + info["nidx"]]]
    what = ""
    if lw.m.index_checks:  # the element as written, x[i, j], for the check's message
        where = (args[1] if info["tuple_index"] else
                 ast.Tuple(list(args[1:1 + info["nidx"]]), ast.Load()))
        what = f"{ast.unparse(args[0])}[{ast.unparse(where).strip('()')}]"
    ptr = lw.elem_ptr(arr, idx, what=what)
    vals = [lw.convert(lw.expr(a), a.wl_ty, t) for a in args[1 + info["nidx"]:]]
    op = info["op"]
    b = lw.b
    if t.is_bf16:   # add/sub/min/max (typing_builtins._atomic): a CAS loop
        from warp_lab.compiler.bf16 import atomic_bf16
        return atomic_bf16(lw, op, ptr, vals[0], _DEVICE_RELAXED)
    if op == "load":
        return b.load_atomic(ptr, _DEVICE_RELAXED, t.size, typ=llty(t))
    if op == "store":
        (v,) = vals
        # IRBuilder.store_atomic reads ptr.type.pointee, which opaque pointers do not
        # have (llvmlite 0.50); the instruction itself prints fine
        b._insert(ir.instructions.StoreAtomicInstr(b.block, v, ptr, _DEVICE_RELAXED, t.size))
        return None
    if op == "cas":
        cmp, new = vals
        if t.is_float:
            it = ir.IntType(t.bits)
            cmp, new = b.bitcast(cmp, it), b.bitcast(new, it)
        pair = b.cmpxchg(ptr, cmp, new, _DEVICE_RELAXED, "monotonic")
        old = b.extract_value(pair, 0)
        return b.bitcast(old, llty(t)) if t.is_float else old
    (v,) = vals
    if op == "sub" and t.is_float:
        op, v = "add", b.fneg(v)
    if t.is_float:
        rmw = {"add": "fadd", "min": "fmin", "max": "fmax", "exch": "xchg"}[op]
    elif op in ("min", "max"):
        rmw = op if t.is_signed else "u" + op
    else:
        rmw = {"exch": "xchg"}.get(op, op)
    return b.atomic_rmw(rmw, ptr, v, _DEVICE_RELAXED)


def _select(lw, node, call):
    t = call.info["ty"]
    c_n, a_n, b_n = _args(node)
    cond = lw.truth(c_n)
    a = lw.convert(lw.expr(a_n), a_n.wl_ty, t)
    bv = lw.convert(lw.expr(b_n), b_n.wl_ty, t)
    if isinstance(t, Scalar):
        return lw.b.select(cond, a, bv)
    return tuple(lw.b.select(cond, x, y) for x, y in zip(a, bv))


def emit_printf(lw, fmt: str, values, tys):
    """``vprintf(fmt, buffer)``: the buffer holds each value, floats as double, ints >= 32 bits."""
    _vprintf(lw, lw.b.addrspacecast(lw.m.cstring(fmt), ir.PointerType()), values, tys)


def _vprintf(lw, fmt_ptr, values, tys):
    """``vprintf(fmt_ptr, buffer)`` with a generic pointer to a constant format string."""
    b = lw.b
    ptr0 = ir.PointerType()
    vprintf = lw.m.declare("vprintf", I32, [ptr0, ptr0])
    items = []
    for v, t in zip(values, tys):
        if t.is_float:
            items.append(v if t.bits == 64 else b.fpext(v, ir.DoubleType()))
        elif t.bits < 32:
            items.append(b.zext(v, I32) if (t.is_bool or not t.is_signed) else b.sext(v, I32))
        else:
            items.append(v)
    if not items:
        b.call(vprintf, [fmt_ptr, ir.Constant(ptr0, None)])
        return
    st = ir.LiteralStructType([x.type for x in items])
    buf = lw.ab.alloca(st)
    buf.align = 8
    buf.type = ir.PointerType()
    for k, x in enumerate(items):
        b.store(x, b.gep(buf, [ir.Constant(I32, 0), ir.Constant(I32, k)], inbounds=True,
                         source_etype=st))
    b.call(vprintf, [fmt_ptr, buf])


#: print() of scalar floats: how many get Python's form from a choice of whole formats (one
#: format per combination, 2**n strings); past that, each is "%g%s" with a ".0" suffix
PY_FLOAT_FORMATS_MAX = 4
#: |v| below which an integral value prints as "%.1f" (Python's str(float) writes every digit
#: of an integral value below 1e16, then switches to exponent notation)
PY_FLOAT_FIXED_LIMIT = 1e16
#: |v| below which "%g" (6 significant digits) writes every digit of an integral value
G_EXACT_LIMIT = 1e6

#: the conversions print() writes into its format (typing_special._conversion), and "%%"
_PRINT_CONV = re.compile(r"%%|%(?:ll)?[dugs]")


def _integral_below(lw, v, limit: float):
    """i1: double ``v`` is integral (not NaN or infinite) and ``|v| < limit``."""
    d = ir.DoubleType()
    whole = lw.b.fcmp_ordered("==", v, intrinsic(lw, "trunc", float64, [v], fast=False))
    small = lw.b.fcmp_ordered("<", intrinsic(lw, "fabs", float64, [v], fast=False),
                              ir.Constant(d, limit))
    return lw.b.and_(whole, small)


def _python_float_format(lw, fmt: str, values, tys, floats):
    """The format pointer and values for a print() whose scalar floats (positions
    ``floats`` among ``values``) are written as Python's ``str(float)`` does for an
    integral value: ``1.0``, ``-0.0``, ``100.0`` (``%.1f`` when integral and below
    :data:`PY_FLOAT_FIXED_LIMIT`), and as ``%g`` otherwise (``0.5``, ``1e+16``, ``inf``,
    ``nan``), chosen at run time.

    The format stays a constant string of the module (CUDA's printf takes precision
    digits, not ``.*``: CUDA Programming Guide, "Formatted Output", Format Specifiers):
    up to :data:`PY_FLOAT_FORMATS_MAX` floats select one of the 2**n formats; more
    floats each print ``%g%s`` with a ``%s`` of ``".0"`` or ``""`` (the same text for
    integral values below :data:`G_EXACT_LIMIT`, ``%g`` above).
    """
    b = lw.b
    convs = [m for m in _PRINT_CONV.finditer(fmt) if m.group() != "%%"]
    doubles = {k: b.fpext(values[k], ir.DoubleType()) if tys[k].bits < 64 else values[k]
               for k in floats}
    ptr0 = ir.PointerType()

    def text(pick):  # fmt with the conversion of value k replaced by pick(k) when a float
        out, pos = [], 0
        for k, m in enumerate(convs):
            out.append(fmt[pos:m.start()])
            out.append(pick(k) if k in doubles else m.group())
            pos = m.end()
        return "".join(out) + fmt[pos:]

    if len(floats) <= PY_FLOAT_FORMATS_MAX:
        conds = [_integral_below(lw, doubles[k], PY_FLOAT_FIXED_LIMIT) for k in floats]

        def choose(fixed):  # the format for the floats decided so far, then the rest
            if len(fixed) == len(floats):
                chosen = dict(zip(floats, fixed))
                g = lw.m.cstring(text(lambda k: "%.1f" if chosen[k] else "%g"))
                return b.addrspacecast(g, ptr0)
            on, off = choose(fixed + (True,)), choose(fixed + (False,))
            return b.select(conds[len(fixed)], on, off)

        return choose(()), values, tys
    suffix = {True: lw.m.cstring(".0"), False: lw.m.cstring("")}
    out_vals, out_tys = [], []
    for k, (v, t) in enumerate(zip(values, tys)):
        out_vals.append(v)
        out_tys.append(t)
        if k in doubles:
            cond = _integral_below(lw, doubles[k], G_EXACT_LIMIT)
            on, off = (b.addrspacecast(suffix[x], ptr0) for x in (True, False))
            out_vals.append(b.ptrtoint(b.select(cond, on, off), I64))
            out_tys.append(uint64)
    fmt_ptr = lw.m.cstring(text(lambda k: "%g%s"))
    return b.addrspacecast(fmt_ptr, ptr0), out_vals, out_tys


def _printf(lw, node, call):
    info = call.info
    floats = set(info.get("python_floats", ()))  # print()'s scalar floats (typing_special)
    bools = set(info.get("python_bools", ()))    # and bools, a "%s" each
    vals, tys, at = [], [], []
    for k, (a, t) in enumerate(zip(info["args"], info["tys"])):
        v = lw.convert(lw.expr(a), a.wl_ty, t)
        if isinstance(t, (Vector, Matrix)) and info.get("warp_components"):
            vals += [lw.convert(x, t.elem, float64) for x in v]  # Warp: float(v[i]), "%g"
            tys += [float64] * len(v)
        elif isinstance(t, (Vector, Matrix)):  # print() of a vector: its components
            vals += list(v)
            tys += [t.elem] * len(v)
        elif k in bools:  # Python's words for it
            words = (lw.b.addrspacecast(lw.m.cstring(w), ir.PointerType())
                     for w in ("True", "False"))
            vals.append(lw.b.ptrtoint(lw.b.select(lw.truth_value(v, t), *words), I64))
            tys.append(uint64)
        else:
            if k in floats:
                at.append(len(vals))
            vals.append(v)
            tys.append(t)
    if not at:
        emit_printf(lw, info["fmt"], vals, tys)
        return
    fmt_ptr, vals, tys = _python_float_format(lw, info["fmt"], vals, tys, at)
    _vprintf(lw, fmt_ptr, vals, tys)


def emit_trap(lw, ok, message: str, values=(), tys=()):
    """When ``ok`` is false: print ``message`` and trap (``llvm.trap`` -> PTX ``trap``).

    ``message`` is a printf format when ``values`` (with their ``tys``) are given,
    plain text otherwise.
    """
    fail = lw.fn.append_basic_block("trap")
    cont = lw.fn.append_basic_block("ok")
    lw.b.cbranch(ok, cont, fail)
    lw.b.position_at_end(fail)
    fmt = message if values else message.replace("%", "%%")
    emit_printf(lw, fmt + "\n", list(values), list(tys))
    lw.b.call(lw.m.declare("llvm.trap", ir.VoidType(), []), [])
    lw.b.unreachable()
    lw.b.position_at_end(cont)


def _static_array(shape):
    strides, s = [], 1
    for n in reversed(shape):
        strides.insert(0, s)
        s *= n
    return [ir.Constant(I32, n) for n in shape], [ir.Constant(I32, x) for x in strides], s


def _shared_array(lw, node, call):
    aty = node.wl_ty
    shape, strides, _ = _static_array(aty.shape)
    return ArrayVal(lw.m.shared[call.info["symbol"]], shape, strides, aty)


def _dynamic_shared_array(lw, node, call):
    """A view of the module's one ``extern .shared`` buffer: base + offset bytes, and
    ``(%dynamic_smem_size - offset) / itemsize`` elements (0 past the end)."""
    aty = node.wl_ty
    (_, offset_n) = _args(node)
    b = lw.b
    if offset_n is None:
        offset = ir.Constant(I32, 0)
    elif offset_n.wl_ty.bits == 64:  # 2**32 or more (or negative): past any shared memory,
        wide = lw.convert(lw.expr(offset_n), offset_n.wl_ty, uint64)  # kept 16-byte aligned
        big = b.icmp_unsigned(">", wide, ir.Constant(I64, 0xFFFFFFF0))
        offset = b.select(big, ir.Constant(I32, 0xFFFFFFF0), b.trunc(wide, I32))
    else:  # a negative int32 becomes a huge offset: length 0, accesses out of bounds
        offset = lw.convert(lw.expr(offset_n), offset_n.wl_ty, uint32)
    size = lw.sreg("dynamic_smem_size")
    ptr = b.gep(lw.m.dynamic_shared(), [offset], source_etype=ir.IntType(8))
    n = b.udiv(b.sub(size, offset), ir.Constant(I32, aty.dtype.size))
    n = b.select(b.icmp_unsigned(">", offset, size), ir.Constant(I32, 0), n)
    return ArrayVal(ptr, [n], [ir.Constant(I32, 1)], aty)


def _local_array(lw, node, call):
    aty = node.wl_ty
    shape, strides, count = _static_array(aty.shape)
    slot = lw.ab.alloca(ir.ArrayType(memty(aty.dtype), count))
    slot.align = max(4, aty.dtype.align)
    if call.info.get("zero"):   # wp.zeros(shape, dtype) in a kernel: Warp's fixedarray_t
        lw.b.store(ir.Constant(slot.allocated_type, None), slot)   # is zero-initialised
    slot.type = ir.PointerType()  # opaque: element addresses come from typed GEPs
    return ArrayVal(slot, shape, strides, aty)


def fixed_array_type(aty) -> ir.ArrayType:
    """The LLVM value a device function returns a fixed-size array as (``[n x T]``, its
    elements in row-major order): Warp's ``fixedarray_t`` is returned by value
    (``warp/native/fixedarray.h``), so the caller gets a copy, not the callee's storage."""
    count = 1
    for n in aty.shape:
        count *= n
    return ir.ArrayType(memty(aty.dtype), count)


def fixed_array_load(lw, arr: ArrayVal):
    """The elements of the fixed-size array ``arr`` (any view of static shape: its
    strides are honoured) as one :func:`fixed_array_type` value."""
    import itertools
    aty = arr.ty
    agg = ir.Constant(fixed_array_type(aty), ir.Undefined)
    etype = memty(aty.dtype)
    for k, idx in enumerate(itertools.product(*(range(n) for n in aty.shape))):
        off = None
        for i, st in zip(idx, arr.strides):
            term = lw.b.mul(ir.Constant(I32, i), st)
            off = term if off is None else lw.b.add(off, term)
        ptr = lw.b.gep(arr.ptr, [lw.b.sext(off, I64)], source_etype=etype)
        agg = lw.b.insert_value(agg, lw.b.load(ptr, typ=etype), k)
    return agg


def fixed_array_store(lw, agg, aty) -> ArrayVal:
    """A new per-thread array (as ``wl.local_array``) holding the returned value ``agg``
    of a fixed-size array of type ``aty``: the caller's copy."""
    shape, strides, _ = _static_array(aty.shape)
    slot = lw.ab.alloca(agg.type)
    slot.align = max(4, aty.dtype.align)
    lw.b.store(agg, slot)
    slot.type = ir.PointerType()
    return ArrayVal(slot, shape, strides, aty)


def _len(lw, node, call):
    arr = lw.expr(_args(node)[0])
    return arr.shape[0]


def _vecop(lw, node, call):
    name = call.name
    if name == "mul":
        fake = call.info["binop"]
        return lw.binop_values(fake, lw.expr(fake.left), lw.expr(fake.right))
    t = call.info["ty"]
    vals = [lw.expr(a) for a in _args(node)]
    e = t.elem
    if name == "transpose":
        r, c = t.rows, t.cols
        return tuple(vals[0][i * c + j] for j in range(c) for i in range(r))
    if name == "dot":
        return dot(lw, vals[0], vals[1], e)
    if name == "length_sq":
        return dot(lw, vals[0], vals[0], e)
    if name in ("length", "normalize"):
        n = intrinsic(lw, "sqrt", e, [dot(lw, vals[0], vals[0], e)])
        if name == "length":
            return n
        return tuple(scalar_binop(lw, "truediv", x, n, e) for x in vals[0])
    a, c = vals
    if name == "cross":
        def m(i, j):
            return scalar_binop(lw, "mul", a[i], c[j], e)
        return (scalar_binop(lw, "sub", m(1, 2), m(2, 1), e),
                scalar_binop(lw, "sub", m(2, 0), m(0, 2), e),
                scalar_binop(lw, "sub", m(0, 1), m(1, 0), e))
    # outer
    return tuple(scalar_binop(lw, "mul", x, y, e) for x in a for y in c)


def _matrix_from_vecs(lw, node, call):
    vals = [lw.expr(a) for a in _args(node)]
    if call.name == "matrix_from_rows":
        return tuple(x for v in vals for x in v)
    return tuple(vals[c][r] for r in range(call.info["ty"].n) for c in range(len(vals)))


def _argminmax(lw, node, call):
    """vec.h's loop: the first non-NaN component, then each later non-NaN one that is
    strictly smaller (larger); 0 when every component is NaN."""
    b = lw.b
    vt = call.info["ty"]
    e = vt.elem
    v = lw.expr(_args(node)[0])
    op = "<" if call.name == "argmin" else ">"
    i32 = ir.IntType(32)
    ret, best = ir.Constant(i32, 0), v[0]
    if e.is_float:
        found = b.fcmp_ordered("ord", v[0], v[0])
    for k in range(1, vt.n):
        x = v[k]
        if e.is_float:
            ok = b.fcmp_ordered("ord", x, x)
            better = b.fcmp_ordered(op, x, best)
            take = b.and_(ok, b.or_(b.not_(found), better))
            found = b.or_(found, ok)
        else:
            take = (b.icmp_signed if e.is_signed else b.icmp_unsigned)(op, x, best)
        ret = b.select(take, ir.Constant(i32, k), ret)
        best = b.select(take, x, best)
    return ret


def _div_approx(lw, node, call):
    fake = call.info["binop"]
    return lw.binop_values(fake, lw.expr(fake.left), lw.expr(fake.right))


#: the code generators of the Python builtins that are no warp_lab record (``len``); the
#: builtins' own are their records' implementations (compiler/builtin_rules.py)
PY_LOWER = {"len": _len}


def _construct(lw, node, call):
    ty = call.type
    e = ty.elem
    vals = [lw.expr(a) for a in node.args]
    tys = call.info["tys"]
    n = ty.n if isinstance(ty, Vector) else ty.rows * ty.cols
    zero = ir.Constant(llty(e), 0.0 if e.is_float else 0)
    one = ir.Constant(llty(e), 1.0 if e.is_float else 1)
    if call.info.get("identity"):   # quat_identity(), transform_identity(): w = 1
        return (zero,) * (n - 1) + (one,)
    if not vals:
        return (zero,) * n
    if len(vals) == 1 and isinstance(tys[0], Scalar):
        return (lw.convert(vals[0], tys[0], e),) * n
    out = []
    for v, t in zip(vals, tys):
        if isinstance(t, (Vector, Matrix)):
            out.extend(lw.convert(x, t.elem, e) for x in v)
        else:
            out.append(lw.convert(v, t, e))
    if call.info.get("identity_q"):   # transform(p): the identity rotation
        out += [zero, zero, zero, one]
    return tuple(out)


def call_function(lw, tf, values, arg_tys, param_tys):
    """Call the typed device function ``tf`` with already-evaluated argument ``values`` (of
    types ``arg_tys``, converted to ``param_tys``); its value (None for none). A call node
    and an operator a device function implements (``q * q``, ``typing_exprs``) use it."""
    flat, read_only = [], set()
    for (name, _), v, at, t in zip(tf.params, values, arg_tys, param_tys):
        v = lw.convert(v, at, t)
        if isinstance(v, ArrayVal) and v.invariant and name not in tf.written_params:
            read_only.add(name)
        flat += flatten(v, t)
    r = lw.b.call(lw.m.function(tf, frozenset(read_only)), flat)
    if tf.ret == NONE:
        return None
    if is_fixed_array(tf.ret):   # returned by value: the caller's own copy
        return fixed_array_store(lw, r, tf.ret)
    n = len(flatten_types_count(tf.ret))
    parts = [r] if n == 1 else [lw.b.extract_value(r, k) for k in range(n)]
    return unflatten(parts, tf.ret)


def lower_call(lw, node):
    """The value of a call node (None for calls that return nothing)."""
    call = node.wl_call
    if call.kind == "cast":
        a = _args(node)[0]
        return lw.convert(lw.expr(a), a.wl_ty, call.type)
    if call.kind == "construct":
        return _construct(lw, node, call)
    if call.kind == "struct":   # S() zeroed, S(v1, ...) every field (typing_structs)
        st = call.type
        if not call.info["args"]:
            return zero_value(st)
        return tuple(lw.convert(lw.expr(a), at, ft) for a, at, (_, ft)
                     in zip(call.info["args"], call.info["tys"], st.fields))
    if call.kind == "func":
        tf = call.func
        args = call.info["args"]
        value = call_function(lw, tf, [lw.expr(a) for a in args], [a.wl_ty for a in args],
                              call.info["tys"])
        if "updates" in call.info:   # (new state, value): the state goes back to its variable
            if call.info["updates"] is not None:   # (None: a temporary's, dropped)
                lw.store_var(lw.var_slot(call.info["updates"]), value[0])
            return value[1]
        return value
    if call.name in PY_LOWER:
        return PY_LOWER[call.name](lw, node, call)
    from warp_lab.compiler.builtin_rules import impl_of

    return impl_of(call.name).lower(lw, node, call)

