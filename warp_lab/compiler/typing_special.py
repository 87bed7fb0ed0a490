"""Typing of the special forms: ``print``/``wl.printf`` (format strings checked and
rewritten for ``vprintf``), ``wl.shared_array``/``wl.local_array`` (static
shapes, sizes, one ``.shared`` variable per call site) and
``wl.dynamic_shared_array`` (the one ``extern .shared`` buffer, sized at launch).

Part of :mod:`warp_lab.compiler.typing_builtins`'s rule table.
"""

from __future__ import annotations

import ast
import re

from warp_lab.compiler.source_map import SharedArray
from warp_lab.compiler.typed_ast import DYNAMIC_SHARED, SharedDecl, const_of
from warp_lab.compiler.typing_calls import _args, _target
from warp_lab.compiler.typing_exprs import PyBuiltin
from warp_lab.compiler.typing_rules import NONE, Meta, literal_type, type_name
from warp_lab.lang.types import (ArrayType, Matrix, Scalar, TupleType, Vector, as_type, float32,
                                 int32)

__all__ = ["type_printf", "type_print", "type_alloc_array", "type_fixedarray_zeros",
           "type_dynamic_shared_array",
           "SHARED_STATIC_LIMIT", "LOCAL_LIMIT"]

#: static shared memory per block without opt-in (CUDA Programming Guide, "Shared Memory",
#: compute capability table: 48 KB static limit)
SHARED_STATIC_LIMIT = 48 * 1024
#: the way past :data:`SHARED_STATIC_LIMIT`: kernels using more than 48 KB of shared memory
#: per block must use dynamic shared memory, not statically sized arrays, and opt in
#: (CUDA C++ Programming Guide, compute capability 7.x+ "Shared Memory"); ``wl.launch`` opts in
_DYNAMIC_HINT = ("for more than 48 KB per block use wl.dynamic_shared_array(dtype) and size it "
                 "at launch, wl.launch(..., shared_mem=bytes): CUDA allows more than 48 KB "
                 "only as dynamic shared memory (up to the GPU's opt-in limit, e.g. 227 KB on "
                 "sm_90)")
#: the most shared memory any architecture gives one block, with opt-in (CUDA Programming
#: Guide, "Technical Specifications per Compute Capability": 227 KB on 9.0 and 10.0)
SHARED_OPTIN_MAX = 227 * 1024
#: a generous cap on per-thread local arrays (bytes); the hardware allows 512 KB
LOCAL_LIMIT = 64 * 1024


_CONV = re.compile(r"%([-+ #0]*)(\d+|\*)?(?:\.(\d*|\*))?(hh|h|ll|l|z|j|t|L)?([diouxXfFeEgGaAcsp%])")


def _printf_args(t, args, aggregates=False):
    tys = []
    for a in args:
        ty = t.value_type(a)
        if isinstance(ty, Meta) and isinstance(ty.value, str):
            tys.append(ty)
            continue
        if aggregates and isinstance(ty, (Vector, Matrix)):
            tys.append(ty)
            continue
        if not isinstance(ty, Scalar):
            raise t.error(f"{'print' if aggregates else 'printf'} cannot print a "
                          f"{type_name(ty)}", a, "print its components one by one")
        if getattr(a, "wl_weak", False):
            ty = literal_type(const_of(a))
        tys.append(ty)
    return tys


def _check_percents(t, fmt: str, fmt_node) -> None:
    """Refuse a ``%`` of ``fmt`` that starts no C conversion (``%n``, ``%y``, ``100%``):
    C leaves the output undefined (C11 7.21.6.1: "If a conversion specification is invalid,
    the behavior is undefined"), and it would reach vprintf as it is."""
    covered = set()
    for m in _CONV.finditer(fmt):
        covered.update(range(m.start(), m.end()))
    bad = next((k for k, ch in enumerate(fmt) if ch == "%" and k not in covered), None)
    if bad is not None:
        raise t.error(f"{fmt[bad:bad + 2]!r} in the format is not a printf conversion",
                      fmt_node, "write %% for a percent sign; the conversions are %d %i %u "
                      "%o %x %X %c %f %F %e %E %g %G %a %A and %s, e.g. %5.2f")


def type_printf(t, node, name):
    """``wl.printf(fmt, *values)``: conversions checked against the values' types."""
    if node.keywords or not node.args:
        raise t.error("printf() takes a format string and values", node)
    fmt_node, args = node.args[0], node.args[1:]
    t.visit(fmt_node)
    fmt = const_of(fmt_node)
    if not isinstance(fmt, str):
        raise t.error("the printf format must be a string literal", fmt_node)
    tys = _printf_args(t, args)
    _check_percents(t, fmt, fmt_node)
    convs = [m for m in _CONV.finditer(fmt) if m.group(5) != "%"]
    if len(convs) != len(args):
        raise t.error(f"the format has {len(convs)} conversions but {len(args)} values are "
                      "given", node)
    out, pos, vals, vtys = [], 0, [], []
    for m, a, ty in zip(convs, args, tys):
        out.append(fmt[pos:m.start()])
        flags, width, prec, _, conv = m.groups()
        if isinstance(ty, Meta) and isinstance(ty.value, str) and conv == "s" and \
                width != "*" and prec != "*":
            # a string constant (CUDA's printf("%s", "literal")): known at compile time,
            # so it is formatted into the format text, with its width and precision
            spec = "%" + (flags or "") + (width or "") + (f".{prec}" if prec is not None
                                                          else "") + "s"
            out.append((spec % ty.value).replace("%", "%%"))
            pos = m.end()
            continue
        if isinstance(ty, Meta) or conv in "sp*" or width == "*" or prec == "*":
            raise t.error(f"%{conv} cannot print this value", a,
                          "%s takes a string constant; numbers take %d, %u, %x, %f, %g or "
                          "%e; widths and precisions must be written into the format")
        if conv in "fFeEgGaA" and not ty.is_float:
            raise t.error(f"%{conv} needs a float, got {type_name(ty)}", a,
                          "use %d for integers or convert with float(...)")
        if conv in "diouxXc" and ty.is_float:
            raise t.error(f"%{conv} needs an integer, got {type_name(ty)}", a,
                          "use %f for floats or convert with int(...)")
        if conv == "c" and ty.bits == 64:
            # C's %c takes an int (and prints it as an unsigned char): "%llc" is no
            # conversion, and its 8-byte slot would shift every later value's
            ty = int32
        length = "ll" if (ty.is_int and ty.bits == 64 and conv not in "fFeEgGaA") else ""
        spec = "%" + (flags or "") + (width or "") + (f".{prec}" if prec is not None else "")
        out.append(spec + length + conv)
        pos = m.end()
        vals.append(a)
        vtys.append(ty)
    out.append(fmt[pos:])
    _target(node, "printf", NONE, fmt="".join(out), args=vals, tys=vtys)
    return t.mark(node, NONE)


def type_print(t, node, name):
    """``print(*values, sep=, end=)`` as one ``vprintf`` format.

    In the Warp dialect each value is written as warp-lang's ``print`` overloads write it
    (``warp/native/builtin.h``): a float ``%g`` (``2`` for 2.0), a vector ``"%g "`` per
    component, a matrix a line per row; ints and bools as in Python. (Warp's ``print``
    takes one value; several are joined by ``sep`` here.)"""
    sep, end = " ", "\n"
    for kw in node.keywords:
        t.visit(kw.value)
        v = const_of(kw.value)
        if kw.arg not in ("sep", "end") or not isinstance(v, str):
            raise t.error("print() accepts only sep='...' and end='...' string keywords",
                          kw.value)
        sep, end = (v, end) if kw.arg == "sep" else (sep, v)
    tys = _printf_args(t, node.args, aggregates=True)
    warp = getattr(t.fn_obj, "dialect", "python") == "warp"
    parts, vals, vtys, floats, bools = [], [], [], [], []
    for a, ty in zip(node.args, tys):
        if isinstance(ty, Meta):
            parts.append(str(const_of(a)).replace("%", "%%"))
            continue
        if warp and isinstance(ty, Vector):  # Warp's print(vec_t): "%g " per component
            parts.append("%g " * ty.n)
        elif warp and isinstance(ty, Matrix):  # Warp's print(mat_t): a line per row
            parts.append("\n".join(["%g " * ty.cols] * ty.rows))
        elif warp and ty.is_float:  # Warp's print(float): "%g"
            parts.append("%g")
        elif isinstance(ty, Vector):  # NumPy's style: [1 2 3]
            parts.append("[" + " ".join([_conversion(ty.elem)] * ty.n) + "]")
        elif isinstance(ty, Matrix):
            row = "[" + " ".join([_conversion(ty.elem)] * ty.cols) + "]"
            parts.append("[" + " ".join([row] * ty.rows) + "]")
        else:
            if ty.is_float:  # formatted like Python's float at run time (lower_builtins)
                floats.append(len(vals))
            elif ty.is_bool:
                bools.append(len(vals))
            parts.append(_conversion(ty))
        vals.append(a)
        vtys.append(ty)
    fmt = sep.replace("%", "%%").join(parts) + end.replace("%", "%%")
    # python_floats: the args (indices) that are scalar floats, each printed by a "%g" of
    # fmt, in order; the lowering picks "%.1f" for an integral value as Python's str() does;
    # python_bools: the scalar bools, each a "%s" of "True" or "False"
    # warp_components: Warp prints every vector or matrix component as float(v[i]) with "%g"
    _target(node, "printf", NONE, fmt=fmt, args=vals, tys=vtys, python_floats=tuple(floats),
            python_bools=tuple(bools), warp_components=warp)
    return t.mark(node, NONE)


def _conversion(ty: Scalar) -> str:
    """The printf conversion ``print`` uses for a scalar type (a bool is the string
    ``True``/``False`` the lowering chooses, as Python prints it)."""
    if ty.is_bool:
        return "%s"
    if ty.is_float:
        return "%g"
    if ty.bits == 64:
        return "%lld" if ty.is_signed else "%llu"
    return "%d" if ty.is_signed else "%u"


def _alloc_dtype(t, dtype_n):
    """The element type named by an allocation's ``dtype`` argument (float32 if absent)."""
    if dtype_n is None:
        return float32
    t.visit(dtype_n)
    ty = dtype_n.wl_ty
    v = ty.value if isinstance(ty, Meta) else None
    if isinstance(v, PyBuiltin) and v.name in ("int", "float", "bool"):
        v = {"int": int, "float": float, "bool": bool}[v.name]
    try:
        if v is None:  # a runtime value (np.dtype(None) would be float64)
            raise TypeError
        dtype = as_type(v)
    except TypeError:
        raise t.error(f"dtype must be a warp_lab type, not {ast.unparse(dtype_n)}",
                      dtype_n) from None
    if isinstance(dtype, (ArrayType, TupleType)):
        raise t.error(f"arrays cannot hold {type_name(dtype)}", dtype_n)
    return dtype


def type_alloc_array(t, node, name):
    """``wl.shared_array(shape, dtype)`` / ``wl.local_array(shape, dtype)``."""
    shape_n, dtype_n = _args(t, node, ["shape", "dtype"], 1, name)
    t.visit(shape_n)
    shape = const_of(shape_n)
    if isinstance(shape, (int, bool)):
        shape = (shape,)
    if not (isinstance(shape, tuple) and shape and all(isinstance(s, int) for s in shape)):
        raise t.error(f"the shape of {name}() must be a compile-time integer or tuple of "
                      "integers", shape_n, "use literals, module-level constants or wl.constant")
    if not 1 <= len(shape) <= 3 or any(s <= 0 for s in shape):
        raise t.error(f"{name}() needs 1 to 3 positive extents, got {shape}", shape_n)
    dtype = _alloc_dtype(t, dtype_n)
    count = 1
    for s in shape:
        count *= s
    nbytes = count * dtype.size
    space = "shared" if name == "shared_array" else "local"
    limit = SHARED_STATIC_LIMIT if space == "shared" else LOCAL_LIMIT
    if nbytes > limit:
        raise t.error(f"{name}() of {nbytes} bytes exceeds the {limit // 1024} KB limit",
                      node, _DYNAMIC_HINT if space == "shared" else "")
    total = nbytes + sum(d.nbytes for d in t.ctx.shared) if space == "shared" else 0
    if total > limit:  # ptxas: "uses too much shared data (..., 0xc000 max)"
        raise t.error(f"{name}() of {nbytes} bytes brings the kernel's static shared memory "
                      f"to {total} bytes, over the {limit // 1024} KB limit", node,
                      _DYNAMIC_HINT)
    aty = ArrayType(dtype, len(shape), space, tuple(shape))
    info = {}
    if space == "shared":
        # named after the Python variable when there is one (``k_tile_3`` for ``tile`` in
        # kernel ``k``), so the PTX/SASS views and memcheck/initcheck findings say which
        # array; unique() keeps two same-named arrays (two device functions) apart
        bound = getattr(node, "wl_bound_name", "")
        var = re.sub(r"\W", "_", bound, flags=re.ASCII)
        sym = t.ctx.unique(f"{t.fn_obj.name}_{var}" if var else f"__shared_{t.fn_obj.name}")
        t.ctx.shared.append(SharedDecl(sym, dtype, tuple(shape), nbytes))
        t.ctx.shared_arrays.append(SharedArray(sym, bound, _file_line(t, node), dtype.name,
                                               dtype.size, tuple(shape), 0))
        info["symbol"] = sym
    _target(node, name, aty, **info)
    return t.mark(node, aty)


def type_fixedarray_zeros(t, node):
    """``wp.zeros(shape, dtype)`` in a kernel or ``@wp.func``: Warp 1.19's fixed-size array
    (``warp/_src/builtins.py`` "zeros", ``zeros_value_func``; ``types.py`` ``fixedarray``),
    a zero-filled per-thread array, here a ``wl.local_array`` (the same ``.local``
    storage and memcheck of its indices) that the code generator zero-fills.

    Args:
        node: the ``ast.Call``; ``shape`` is an int or a tuple of 1 to 3 ints known at
            compile time, ``dtype`` an element type (``int``, ``float``, ``wp.vec3``...).

    Raises:
        KernelCompileError: at the shape for one that is no compile-time constant (Warp's
            "the `shape` argument must be specified as a constant when zero-initializing
            an array"), at the call for a missing argument, an unsupported dtype or a
            size over the local limit.
    """
    shape_n, dtype_n = _args(t, node, ["shape", "dtype"], 2, "zeros")
    t.visit(shape_n)
    shape = const_of(shape_n)
    if isinstance(shape, (int, bool)):
        shape = (shape,)
    if not (isinstance(shape, tuple) and all(isinstance(s, int) for s in shape)):
        raise t.error("the `shape` argument must be specified as a constant when "
                      "zero-initializing an array", shape_n,
                      "a fixed-size array's shape is known at compile time: use literals, "
                      "module-level constants or wp.constant")
    if not 1 <= len(shape) <= 3 or any(s <= 0 for s in shape):
        raise t.error(f"wp.zeros() in a kernel needs 1 to 3 positive extents, got {shape}",
                      shape_n)
    count = 1
    for n in shape:
        count *= n
    nbytes = count * _alloc_dtype(t, dtype_n).size
    if nbytes > LOCAL_LIMIT:
        raise t.error(f"wp.zeros() of {nbytes} bytes in a kernel exceeds the "
                      f"{LOCAL_LIMIT // 1024} KB of a thread's local memory", node,
                      "pass a global array (wp.zeros on the host) as a kernel argument")
    aty = type_alloc_array(t, node, "local_array")
    node.wl_call.info["zero"] = True
    return aty


def type_dynamic_shared_array(t, node, name):
    """``wl.dynamic_shared_array(dtype=float32, offset=0)``: the block's dynamic shared memory
    (``extern .shared``, sized by ``wl.launch(shared_mem=bytes)``) as a 1-D array.

    ``offset`` is in bytes, an integer (a runtime value is allowed, as CUDA code
    carves one ``extern __shared__`` buffer by ``blockDim``); a compile-time
    offset must be a non-negative multiple of the element's alignment.
    """
    dtype_n, offset_n = _args(t, node, ["dtype", "offset"], 0, name)
    if isinstance(dtype_n, ast.Tuple) or (isinstance(dtype_n, ast.Constant)
                                          and type(dtype_n.value) is int):
        raise t.error(f"{name}() takes no shape: its size is the launch's shared_mem bytes",
                      dtype_n, f"pass the element type, e.g. wl.{name}(wl.float32), and launch "
                      "with wl.launch(..., shared_mem=n * 4)")
    dtype = _alloc_dtype(t, dtype_n)
    offset = 0
    if offset_n is not None:
        oty = t.value_type(offset_n)
        if not (isinstance(oty, Scalar) and oty.is_int):
            raise t.error(f"the offset of {name}() is a number of bytes, an integer; not "
                          f"{type_name(oty)}", offset_n)
        offset = const_of(offset_n)
        if isinstance(offset, int) and not isinstance(offset, bool):
            if offset < 0 or offset % dtype.align:
                raise t.error(f"the offset of {name}() must be a non-negative multiple of "
                              f"{dtype.align} bytes (the alignment of {type_name(dtype)}), "
                              f"got {offset}", offset_n)
            if offset >= SHARED_OPTIN_MAX:
                raise t.error(f"the offset of {name}() is {offset} bytes, past the "
                              f"{SHARED_OPTIN_MAX // 1024} KB of shared memory a block can "
                              "have on any GPU", offset_n)
    aty = ArrayType(dtype, 1, "shared", None)
    known = isinstance(offset, int) and not isinstance(offset, bool)
    t.ctx.shared_arrays.append(SharedArray(DYNAMIC_SHARED, getattr(node, "wl_bound_name", ""),
                                           _file_line(t, node), dtype.name, dtype.size, None,
                                           offset if known else None))
    _target(node, name, aty)
    return t.mark(node, aty)


def _file_line(t, node) -> int:
    """The file (or cell) line of ``node`` in the function ``t`` types."""
    return t.source.first_line + node.lineno - 1
