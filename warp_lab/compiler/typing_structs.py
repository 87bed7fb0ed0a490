"""Typing of structs in kernels and device functions (Warp's ``@wp.struct``).

What NVIDIA Warp 1.19 accepts (``warp/_src/codegen.py``: ``emit_Attribute``,
``_store_attribute``; the value constructors ``Struct.default_constructor`` and
``value_constructor``):

* ``s.f`` reads a field (an unknown one is an error naming the fields);
* ``s.f = v`` / ``s.f += v`` / ``s.v.x = v`` store into a field of a struct variable, a
  struct parameter (kernel parameters are copies: the caller's value does not change) or
  an array element ``a[i].f = v``; a Warp-dialect store needs the field's own type
  ("assigning to struct field `f` (float32) with different type (int32)" in Warp), except
  a literal of the same kind (``1`` into an int64 field);
* ``S()`` is a zeroed value (arrays empty), ``S(a, b, ...)`` / ``S(f=a, ...)`` gives every
  field;
* structs are values: ``t = s`` copies, device functions take and return them.
"""

from __future__ import annotations

import ast

from warp_lab.compiler.typed_ast import NO_CONST, CallTarget, const_of
from warp_lab.compiler.typing_calls import _args, _convertible
from warp_lab.compiler.typing_rules import type_name
from warp_lab.lang.types import ArrayType, Matrix, Scalar, StructType, Vector

__all__ = ["struct_field", "construct_struct", "storable", "check_field_store",
           "is_struct_rooted", "array_paths", "in_memory"]


def array_paths(prefix: str, st: StructType):
    """The dotted paths of the array fields of ``st`` and of the structs in it
    (``"s.arr"``, ``"s.inner.arr"``), ``prefix`` first."""
    for fname, ft in st.fields:
        if isinstance(ft, ArrayType):
            yield f"{prefix}.{fname}"
        elif isinstance(ft, StructType):
            yield from array_paths(f"{prefix}.{fname}", ft)


def _fields_text(st: StructType) -> str:
    return ", ".join(f for f, _ in st.fields) or "none"


def struct_field(t, node, st: StructType):
    """Type ``s.f``: the field's type (``node.wl_field``: its index).

    Raises:
        KernelCompileError: no such field (at the attribute, naming the fields).
    """
    found = st.field(node.attr)
    if found is None:
        raise t.error(f"struct {st.name} has no field {node.attr!r}", node,
                      f"its fields are {_fields_text(st)}")
    node.wl_field = found[0]
    return t.mark(node, found[1])


def construct_struct(t, node, st: StructType):
    """Type ``S()`` (zeroed) or ``S(v1, v2, ...)`` / ``S(f1=v1, ...)`` (every field).

    Raises:
        KernelCompileError: some fields given but not all, an unknown field, a value its
            field cannot hold without losing information.
    """
    names = [f for f, _ in st.fields]
    if not node.args and not node.keywords:
        node.wl_call = CallTarget("struct", type=st, info={"args": [], "tys": []})
        return t.mark(node, st)
    args = _args(t, node, names, len(names), st.name)
    tys = []
    for (fname, ft), a in zip(st.fields, args):
        at = t.value_type(a)
        if at != ft and not (isinstance(ft, Scalar) and isinstance(at, Scalar)):
            raise t.error(f"field {fname!r} of {st.name} is a {type_name(ft)}, not "
                          f"{type_name(at)}", a)
        if isinstance(ft, ArrayType):
            t.mark_written(a)   # (stores through the struct's array reach it)
        else:
            _convertible(t, a, ft, f"field {fname!r} of {st.name}")
        tys.append(at)
    node.wl_call = CallTarget("struct", type=st, info={"args": args, "tys": tys})
    return t.mark(node, st)


def storable(t, node) -> bool:
    """Whether the typed expression ``node`` names storage a store may change: a variable
    or parameter, an array element, or a field or component of one."""
    while True:
        if isinstance(node, ast.Name):
            return node.id in t.scope
        if isinstance(node, ast.Attribute) and isinstance(node.value.wl_ty, StructType):
            node = node.value
            continue
        if isinstance(node, ast.Subscript) and isinstance(node.value.wl_ty, ArrayType):
            return not isinstance(node.wl_ty, ArrayType)
        if isinstance(node, (ast.Subscript, ast.Attribute)) and \
                isinstance(node.value.wl_ty, (Vector, Matrix)):
            node = node.value
            continue
        return False


def in_memory(node) -> bool:
    """Whether the typed expression ``node`` is an array element or a part of one (a field,
    a matrix row: ``a[i]``, ``a[i].m``, ``a[i][2]``), not a local's storage."""
    while True:
        if isinstance(node, ast.Attribute) and isinstance(node.value.wl_ty, StructType):
            node = node.value
        elif isinstance(node, ast.Subscript) and isinstance(node.value.wl_ty, Matrix) and \
                len(node.wl_indices) == 1:
            node = node.value
        else:
            return isinstance(node, ast.Subscript) and isinstance(node.value.wl_ty, ArrayType)


def is_struct_rooted(node) -> bool:
    """Whether the typed expression ``node`` is a field of a struct (``s.a``, ``a[i].b.c``):
    an array held there is reached through the struct."""
    return isinstance(node, ast.Attribute) and isinstance(
        getattr(node.value, "wl_ty", None), StructType)


def check_field_store(t, target, value) -> None:
    """In a Warp-dialect function, a store into a struct field must have the field's type
    (Warp: "assigning to struct field ... with different type"); a literal number of the
    field's kind (an int into an int field, a float into a float field) is taken.

    Raises:
        KernelCompileError: at the value.
    """
    load = target.wl_load
    if getattr(t.fn_obj, "dialect", "python") != "warp" or \
            not isinstance(load, ast.Attribute) or \
            not isinstance(load.value.wl_ty, StructType):
        return
    ft, vt = load.wl_ty, value.wl_ty
    if ft == vt:
        return
    if isinstance(ft, Scalar) and isinstance(vt, Scalar) and getattr(value, "wl_weak", False) \
            and const_of(value) is not NO_CONST and ft.is_float == vt.is_float and \
            ft.is_bool == vt.is_bool:
        return
    raise t.error(f"assigning {type_name(vt)} to the struct field {ast.unparse(load)} of type "
                  f"{type_name(ft)}: Warp stores a field only from a value of its own type",
                  value if hasattr(value, "lineno") else target,
                  f"convert it: wp.{ft.name}(...)" if isinstance(ft, Scalar) else
                  f"build a {type_name(ft)}")
