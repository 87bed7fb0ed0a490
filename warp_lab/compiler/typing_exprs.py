"""Typing of expressions: names, constants, operators, subscripts, attributes, calls.

A mixin of :class:`~warp_lab.compiler.frontend.FunctionTyper`; each
``visit_*`` stamps ``wl_ty`` (and ``wl_const``/``wl_weak`` when the value is
known at compile time) on its node and returns the type.
"""

from __future__ import annotations

import ast
import builtins as _py
import copy
import types as _pytypes
from dataclasses import dataclass

import numpy as np

from warp_lab.compiler.typed_ast import NO_CONST, const_of
from warp_lab.compiler.typing_rules import (BINOP_SYMBOLS, BINOPS, CMPOPS, NONE, FoldError, Meta,
                                            c_div, cast_value, float_for, fits, fold_binop,
                                            fold_compare, fold_unary, implicit_ok,
                                            int_needed_hint, literal_type, lossy_hint, no_value,
                                            promote, type_name)
from warp_lab.compiler.typing_shadow import shadowing
from warp_lab.errors import KernelCompileError
from warp_lab.lang import builtins as B, types as _lang_types
from warp_lab.lang.kernel import (STATIC, Constant, ConstantArray, Func, Kernel, TypeFactory,
                                  Unsupported)
from warp_lab.lang.types import (ArrayType, Matrix, Quaternion, Scalar, StructType,
                                 Transformation, TupleType, Type, Vector, VECTORS,
                                 as_type, bool_, float64, int32, int64, uint64)

__all__ = ["ExprTyper", "PyBuiltin", "static_resolve", "vector_of", "matrix_of"]


@dataclass(frozen=True)
class PyBuiltin:
    """A Python builtin a kernel may use (``range``, ``len``, ``min``, ``print``, ...)."""

    name: str


def vector_of(elem: Scalar, n: int) -> Vector:
    """The vector type with ``n`` components of ``elem`` (a named one when it exists)."""
    for v in VECTORS.values():
        if v.elem == elem and v.n == n:
            return v
    return Vector(elem, n, f"vec{n}_{elem.name}")


def matrix_of(elem: Scalar, rows: int, cols: int) -> Matrix:
    """The ``rows`` x ``cols`` matrix type of ``elem`` (a named one when it exists)."""
    from warp_lab.lang.types import MATRICES
    for m in MATRICES.values():
        if m.elem == elem and m.rows == rows and m.cols == cols:
            return m
    return Matrix(elem, rows, cols, f"mat{rows}{cols}_{elem.name}")


def _spatial_kind(ty):
    """``"quat"``/``"transform"`` for Warp's quaternion/transformation types (the keys of
    :data:`warp_lab.lang.spatial.OPERATORS`), else None."""
    return "quat" if isinstance(ty, Quaternion) else \
        "transform" if isinstance(ty, Transformation) else None


def _lookup(typer, name: str):
    """A global name's value: closure, module globals, then the Python builtins allowed."""
    if name in typer.namespace:
        value = typer.namespace[name]
        if name in B.PYTHON_BUILTINS and value is getattr(_py, name):
            return PyBuiltin(name)  # from builtins import range: still Python's range
        return value
    if name in B.PYTHON_BUILTINS:
        return PyBuiltin(name)
    if name in ("enumerate", "zip"):  # (a for loop's iterable is typed before this)
        raise typer.error(f"{name}() is only a for loop's iterable in kernels",
                          hint="loop over it directly, " + ("for k, v in enumerate(t)"
                               if name == "enumerate" else "for a, b in zip(t, u)")
                               + " (of tuples): it cannot be nested in a call or stored")
    fallback = getattr(typer.fn_obj, "warp_builtin", None)  # (warp_lab.warp's kernels)
    if fallback is not None and fallback(name) is not None:
        return fallback(name)
    if hasattr(_py, name):
        raise typer.error(f"the Python builtin {name!r} is not available in kernels",
                          hint="kernels may use range, len, print, int, float, bool, abs, min, "
                               "max, round and pow (and enumerate/zip as a for loop's iterable)")
    raise typer.error(f"name {name!r} is not defined", hint=_undefined_hint(name))


def _array_attr_hint(a: str, attr: str, ndim: int) -> str:
    """The hint for a NumPy array attribute or method a kernel's array ``a`` lacks: what to
    write for the common ones (``a.size``, ``a.T``, ``a.sum()``), else nothing."""
    if attr == "size":
        whole = " * ".join(f"{a}.shape[{k}]" for k in range(ndim))
        return f"write len({a}), its element count" if ndim == 1 else \
            f"its element count is {whole}"
    if attr == "T":
        return f"index the other way round: {a}[j, i] is element (i, j) of the transpose"
    if attr in ("sum", "max", "min", "mean", "argmax", "argmin", "cumsum", "dot", "prod"):
        return ("array methods do not run in kernels: write the loop, or a reduction over "
                "threads (docs/language.md, warp and atomic builtins)")
    return ""


#: modules a kernel uses by name (``math.inf``, ``wl.exp``) and the import that binds them
_MODULE_IMPORTS = {"math": "import math", "wl": "import warp_lab as wl",
                   "np": "import numpy as np", "numpy": "import numpy"}


def kernel_language_name(name: str):
    """What ``wl.<name>`` is when the kernel language (``lang/``, which the public namespace
    re-exports) defines it: a builtin (``lang.builtins.BUILTINS``), ``thread_idx`` & co,
    or a public name of ``lang.builtins`` or ``lang.types`` (``FULL_MASK``, ``float32``);
    else None. Read from ``lang/`` itself, so the compiler never imports the facade."""
    if name in B.BUILTINS:
        return B.BUILTINS[name]
    for module in (B, _lang_types):
        if name in module.__all__:
            return getattr(module, name)
    value = getattr(B, name, None)
    return value if isinstance(value, B.Dim3) else None


def _undefined_hint(name: str) -> str:
    """The hint for an undefined global ``name``: warp_lab's name for a CUDA C++ spelling
    (``__syncthreads`` -> ``wl.syncthreads()``), or, for a warp_lab builtin written without
    its module (``syncthreads()``, ``thread_idx.x``), the ``wl.`` spelling."""
    if name in _CUDA_NAMES:
        return f"warp_lab's name for it: {_CUDA_NAMES[name]}"
    if name in _MODULE_IMPORTS:  # -math.inf before any import math
        return (f"{_MODULE_IMPORTS[name]} first: kernels read modules from the notebook or "
                "file that defines them (an earlier cell, or this cell above the def)")
    # what a kernel can use of warp_lab's namespace: the kernel language's builtins,
    # thread_idx & co, types, FULL_MASK (lang/, which wl re-exports); not its host API
    # (wl.debug, wl.compile, wl.launch), which the hint sent a kernel's undefined
    # debug/compile to, only to fail there as a Python function
    if not name.startswith("_") and isinstance(kernel_language_name(name),
                                               (B.Builtin, B.Dim3, Type, int, float,
                                                np.generic)):
        return (f"warp_lab's builtins are attributes of its module: write wl.{name} "
                f"(with import warp_lab as wl), or import the name: "
                f"from warp_lab import {name}")
    return ""


def static_resolve(expr, typer):
    """Resolve ``wl.tid`` / ``range`` style callee expressions without typing them."""
    if isinstance(expr, ast.Name):
        if expr.id in typer.scope:
            return None
        return _lookup(typer, expr.id)
    if isinstance(expr, ast.Attribute):
        base = static_resolve(expr.value, typer)
        if isinstance(base, _pytypes.ModuleType):
            return getattr(base, expr.attr, None)
    return None


_CONST_PY = (bool, int, float, np.bool_, np.integer, np.floating)


#: hint for a tuple of arrays (``t = (a, b)``): what a tuple can hold of them
_ARRAYS_HINT = ("index the arrays where they are used; a tuple may hold their elements, "
                "(a[i], b[i])")
#: hint for a loop over a tuple of arrays (``for x in (a, b):``): a tuple loop is
#: unrolled over numbers, vectors and matrices only (docs/language.md)
_LOOP_ARRAYS_HINT = ("a loop over a tuple takes numbers, vectors and matrices, not arrays: "
                     "to read them, iterate their elements (for x in (a[i], b[i]):); to "
                     "store, write the loop body once per array by hand")


class ExprTyper:
    """Expression typing (mixed into FunctionTyper, which provides error/visit/scope)."""

    # -- helpers -------------------------------------------------------------
    @staticmethod
    def mark(node, ty, const=NO_CONST, weak=False):
        """Stamp type, constant value and weakness on ``node``; returns the type."""
        node.wl_ty = ty
        if const is not NO_CONST:
            node.wl_const = const
        node.wl_weak = weak
        return ty

    def truth(self, node):
        """Type a condition: any scalar (nonzero is true); in Warp's dialect also an array
        (true unless it is the null array a ``None`` argument gives: Warp's ``array_t``
        tests its data pointer, warp/native/array.h ``operator bool``)."""
        self.visit(node)
        if isinstance(node.wl_ty, ArrayType) and \
                getattr(self.fn_obj, "dialect", "python") == "warp":
            return
        if not isinstance(node.wl_ty, Scalar):
            raise self.error(f"a {type_name(node.wl_ty)} cannot be used as a condition", node,
                             "compare it explicitly, e.g. x != 0")

    def value_type(self, node):
        """Type ``node`` and require a runtime value (not a module, type or function)."""
        self.visit(node)
        ty = node.wl_ty
        if isinstance(ty, Meta) and not isinstance(ty.value, str):
            raise self.error(f"{ast.unparse(node)} is {type_name(ty)}, not a value", node)
        if ty == NONE:
            raise self.error(no_value(node), node)
        return ty

    def check_literals_fit(self, nodes, ty) -> None:
        """Refuse an integer literal among ``nodes`` that ``ty``, the type a typed operand
        beside it gives it, cannot hold (``n // 3_000_000_000``, ``max(n, 2**40)`` or
        ``n if c else 2**40`` with ``n: int``): converted, it would wrap (to -1294967296)
        and the quotient, the shift, the maximum or the choice would not be Python's.
        NumPy 2 raises OverflowError for these (NEP 50). ``+ - * & | ^`` do not come here:
        their result with the wrapped literal is Python's wrapped to ``ty``, the
        language's overflow rule; comparisons widen instead (:meth:`_exact_compare_type`).

        Args:
            nodes: the typed operand nodes; nothing is checked when all are literals
                (they fold exactly).
            ty: the scalar type the operands are converted to.

        Raises:
            KernelCompileError: at the first literal that does not fit.
        """
        if not (isinstance(ty, Scalar) and ty.is_int) or \
                all(getattr(n, "wl_weak", False) for n in nodes):
            return
        for n in nodes:
            c = const_of(n)
            if getattr(n, "wl_weak", False) and c is not NO_CONST and \
                    not isinstance(c, float) and not fits(int(c), ty):
                raise self.error(f"the literal {c} does not fit in {type_name(ty)}, the type "
                                 "of the value beside it (NumPy 2 raises OverflowError here)",
                                 n, "convert that value to a type that holds the literal, "
                                 "e.g. wl.int64(...)")

    def classify(self, node, value, what: str):
        """Stamp the type of a compile-time Python ``value`` found under ``what``."""
        wrapped = isinstance(value, Constant)
        if wrapped:
            value = value.value
        if isinstance(value, (bool, int, float, str, tuple, np.generic)):
            self.ctx.captured[f"{self.fn_obj.name}: {what}"] = repr(value)
        elif isinstance(value, Func):
            self.ctx.captured[f"{self.fn_obj.name}: {what}"] = value.source.text
        if isinstance(value, (bool, np.bool_)):
            return self.mark(node, bool_, bool(value), weak=True)
        if isinstance(value, (np.integer, np.floating)):  # typed, not weak: a lossy store says
            node.wl_numpy = (ast.unparse(node), type(value).__name__)  # numpy_scalar_hint
        if isinstance(value, (int, np.integer)):
            if isinstance(value, np.integer):
                t = as_type(value.dtype)
                return self.mark(node, t, int(value))
            if not (fits(value, int64) or fits(value, uint64)):
                raise self.error(f"{what} = {value} does not fit in 64 bits", node)
            t = literal_type(value) if fits(value, int64) else uint64
            return self.mark(node, t, int(value), weak=True)
        if isinstance(value, (float, np.floating)):
            if isinstance(value, np.floating):
                return self.mark(node, as_type(value.dtype), float(value))
            return self.mark(node, literal_type(1.0), float(value), weak=True)
        if isinstance(value, tuple):
            if not value or not all(isinstance(v, _CONST_PY) for v in value):
                raise self.error(f"{what} is a tuple that is not made of numbers", node)
            elems = tuple(literal_type(v) if isinstance(v, (bool, int, float)) else
                          as_type(np.asarray(v).dtype) for v in value)
            return self.mark(node, TupleType(elems), tuple(value), weak=True)
        if isinstance(value, str):
            self.check_text(value, node)
            return self.mark(node, Meta(value), value)
        if value is _py.print:   # wp.print is Python's print (warp_lab.warp)
            return self.mark(node, Meta(PyBuiltin("print")))
        if isinstance(value, Unsupported):
            raise self.error(value.message(), node,
                             "docs/language.md, 'The Warp namespace', lists what warp_lab has "
                             "of Warp")
        if isinstance(value, Kernel):
            raise self.error(f"{what} is a kernel; kernels cannot call kernels", node,
                             "make the shared code a @wl.func")
        if isinstance(value, (Func, B.Builtin, B.Dim3, PyBuiltin, _pytypes.ModuleType, Type,
                              TypeFactory, _lang_types.TypeFamily)) \
                or value is STATIC or (_hashable(value) and value in B.MATH_MODULE):
            return self.mark(node, Meta(value))
        if isinstance(value, type) and issubclass(value, np.generic):
            try:
                return self.mark(node, Meta(as_type(value)))
            except TypeError:
                pass
        if isinstance(value, np.ndarray) and (isinstance(value, ConstantArray) or wrapped) \
                and value.ndim in (1, 2) and 0 < value.size <= 64 and value.dtype.kind in "biuf":
            # wl.constant(wl.vec3(...)), wp.constant(vec3b([...])): a vector/matrix value
            elem = as_type(value.dtype)
            ty = vector_of(elem, value.shape[0]) if value.ndim == 1 else \
                matrix_of(elem, *value.shape)
            self.ctx.captured[f"{self.fn_obj.name}: {what}"] = \
                f"{type_name(ty)}{value.tolist()!r}"
            node.wl_captured = tuple(value.reshape(-1).tolist())
            return self.mark(node, ty)
        if isinstance(value, np.ndarray):
            raise self.error(f"{what} is a numpy array; kernels cannot capture arrays", node,
                             "pass it as a kernel parameter annotated wl.array(dtype=...)")
        if isinstance(value, type) and getattr(value, "wl_kernel_not_yet", None):
            raise self.error(f"{value.wl_kernel_not_yet} is not supported yet", node,
                             "pass the array as a kernel argument, or index a wp.zeros array "
                             "made in the kernel")
        if isinstance(value, type):  # (callable, but calling it is not what failed)
            raise self.error(f"{what} is a Python class; kernels cannot use classes or their "
                             "attributes", node, "capture the values it holds as module-level "
                             "constants (V = P.v) or wl.constant(...)")
        if callable(value) and getattr(value, "wl_device_form", None) is not None:
            return self.mark(node, Meta(value))   # wp.zeros: also a kernel form (type_call)
        if callable(value) and getattr(value, "__module__", "").startswith("warp_lab"):
            # wl.launch, wp.get_device, wp.zeros: host API, no @wl.func would make it run
            raise self.error(f"{what} is a host function of warp_lab's API: it runs in "
                             "Python, not in a kernel", node,
                             "call it before the launch and pass the result as a kernel "
                             "argument")
        if callable(value):
            raise self.error(f"{what} is a Python function; kernels can only call @wl.func "
                             "functions and warp_lab builtins", node,
                             _numpy_hint(value) or "decorate it with @wl.func")
        raise self.error(f"{what} is a {type(value).__name__} object, which kernels cannot use",
                         node, "kernels can use int/float/bool constants, wl.constant(...) "
                               "values, @wl.func functions and warp_lab builtins")

    # -- leaves --------------------------------------------------------------
    def check_text(self, text: str, node):
        """Reject a string the kernel cannot carry: it must encode as UTF-8 (PTX data).

        Raises:
            KernelCompileError: at ``node`` for a lone surrogate (``'\\udcff'``).
        """
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            bad = text[exc.start:exc.end]
            raise self.error(f"string contains {ascii(bad)}, a lone surrogate that is not a "
                             f"character and cannot be stored as UTF-8", node,
                             "remove it, or write the character it stands for") from None

    def visit_Constant(self, node):
        v = node.value
        if isinstance(v, (bool, int, float)):
            if isinstance(v, int) and not isinstance(v, bool) and not fits(v, int64):
                if fits(v, uint64):
                    return self.mark(node, uint64, v, weak=True)
                raise self.error(f"integer literal {v} does not fit in 64 bits", node)
            return self.mark(node, literal_type(v), v, weak=True)
        if isinstance(v, str):
            self.check_text(v, node)
            return self.mark(node, Meta(v), v)
        if v is None:
            return self.mark(node, NONE, None)
        raise self.error(f"{type(v).__name__} literals are not supported in kernels", node)

    def visit_Name(self, node):
        name = node.id
        if name in self.scope:
            node.wl_local = True
            via = getattr(self, "numpy_vars", {}).get(name)
            if via is not None:     # its type came from a NumPy scalar: numpy_scalar_hint
                node.wl_numpy_var = via
            return self.mark(node, self.scope[name])
        if name in self.assigned:
            raise self.error(f"variable {name!r} is used before it is assigned", node)
        node.wl_local = False
        value = _lookup(self, name)
        try:
            return self.classify(node, value, f"{name!r}")
        except KernelCompileError as exc:
            shadow = self.shadowed(node)
            if shadow is None:
                raise
            raise self.error(f"{name} is shadowed by {shadow[0]}, so this is not Python's "
                             f"{name}(): {exc.message}", node, shadow[1]) from None

    def visit_Tuple(self, node):
        elems = []
        consts = []
        for e in node.elts:
            elems.append(self.value_type(e))
            consts.append(const_of(e))
        if any(isinstance(t, (ArrayType, Meta)) for t in elems):
            hint = ""
            if any(isinstance(t, ArrayType) for t in elems):
                hint = _LOOP_ARRAYS_HINT if node is self.iterated else \
                    _ARRAYS_HINT
            raise self.error("tuples may hold only numbers, vectors and matrices", node, hint)
        weak = all(getattr(e, "wl_weak", False) for e in node.elts)
        if all(c is not NO_CONST for c in consts):
            return self.mark(node, TupleType(tuple(elems)), tuple(consts), weak=weak)
        return self.mark(node, TupleType(tuple(elems)))

    # -- attributes and subscripts ---------------------------------------------
    def visit_Attribute(self, node):
        self.visit(node.value)
        bty = node.value.wl_ty
        attr = node.attr
        if isinstance(bty, Meta):
            base = bty.value
            if isinstance(base, B.Dim3):
                if attr not in ("x", "y", "z"):
                    raise self.error(f"wl.{base.name} has .x, .y and .z, not .{attr}", node)
                node.wl_sreg = (base.sreg, attr)
                return self.mark(node, int32)
            if isinstance(base, _pytypes.ModuleType):
                if not hasattr(base, attr):
                    raise self.error(f"module {base.__name__!r} has no attribute {attr!r}", node,
                                     _did_you_mean(base, attr))
                return self.classify(node, getattr(base, attr), f"{base.__name__}.{attr}")
            raise self.error(f"{type_name(bty)} has no attribute {attr!r} usable in kernels", node)
        if isinstance(bty, Transformation):
            # Warp's t.p (components 0..2, a 3-vector) and t.q (3..6, a quaternion),
            # codegen.py transform_component; no .x/.y/.z/.w
            if attr not in ("p", "q"):
                raise self.error(f"a transformation has .p (translation) and .q (rotation), "
                                 f"not .{attr}", node, "index its seven components: t[0]..t[6]")
            node.wl_component = slice(0, 3) if attr == "p" else slice(3, 7)
            return self.mark(node, bty.p_type if attr == "p" else bty.q_type)
        if isinstance(bty, Vector):
            k = "xyzw".find(attr) if len(attr) == 1 else -1
            if not 0 <= k < bty.n:
                raise self.error(f"{bty.name} has components {', '.join('xyzw'[:bty.n])}, "
                                 f"not .{attr}", node)
            node.wl_component = k
            return self.mark(node, bty.elem)
        if isinstance(bty, Matrix) and attr == "T":
            return self.mark(node, matrix_of(bty.elem, bty.cols, bty.rows))
        if isinstance(bty, StructType):
            from warp_lab.compiler.typing_structs import struct_field
            return struct_field(self, node, bty)
        if isinstance(bty, ArrayType):
            if attr == "shape":
                if bty.shape is not None:
                    return self.mark(node, TupleType((int32,) * bty.ndim), tuple(bty.shape),
                                     weak=True)
                return self.mark(node, TupleType((int32,) * bty.ndim))
            if attr == "ndim":
                return self.mark(node, int32, bty.ndim, weak=True)
            if attr == "dtype":
                return self.mark(node, Meta(bty.dtype))
            if attr == "ptr" and getattr(self.fn_obj, "dialect", "python") == "warp":
                raise self.error("an array's .ptr in a kernel (Warp's wp.array(ptr=..., "
                                 "shape=..., dtype=...) views of it) is not supported yet",
                                 node, "index the array itself; arrays have .shape, .ndim "
                                 "and .dtype")
            raise self.error(f"arrays have .shape, .ndim and .dtype, not .{attr}", node,
                             _array_attr_hint(ast.unparse(node.value), attr, bty.ndim))
        raise self.error(f"{type_name(bty)} has no attribute {attr!r}", node)

    def index_type(self, node):
        """Type an index expression: an integer (or bool) scalar."""
        ty = self.value_type(node)
        if not (isinstance(ty, Scalar) and (ty.is_int or ty.is_bool)):
            raise self.error(f"indices must be integers, not {type_name(ty)}", node,
                             int_needed_hint(node))
        return ty

    def visit_Subscript(self, node):
        bty = self.value_type(node.value)
        sl = node.slice
        if isinstance(sl, ast.Slice) and isinstance(bty, Vector) and \
                isinstance(node.ctx, ast.Load):
            # v[a:b:c] of a vector, quaternion or transformation with constant bounds: the
            # vector of those components (Warp's codegen.py slices them at compile time,
            # "indices must be constant"; NumPy's slice of a small array)
            idx = _spread_indices(self, node.value, sl, bty.n, "a vector slice")
            if not idx:
                raise self.error(f"this slice of a {type_name(bty)} selects no component",
                                 sl)
            node.wl_slice = idx
            return self.mark(node, vector_of(bty.elem, len(idx)))
        if isinstance(sl, ast.Slice) or (isinstance(sl, ast.Tuple) and
                                         any(isinstance(e, ast.Slice) for e in sl.elts)):
            if isinstance(bty, ArrayType) and bty.shape is not None:
                return self._static_slice(node, bty)
            if isinstance(bty, ArrayType):
                raise self.error("slices are not supported yet of an array whose shape is "
                                 "known only at run time (a kernel parameter, "
                                 "wl.dynamic_shared_array)", sl, "index single elements: a[i] or a[i, j]; "
                                 "slices of wp.zeros/wl.local_array/wl.shared_array arrays "
                                 "with constant bounds are views")
            raise self.error("slices are not supported in kernels", sl,
                             "index single elements: a[i] or a[i, j]")
        idx = list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]
        if isinstance(bty, ArrayType):
            if len(idx) == 1 and isinstance(sl, ast.Name) and isinstance(
                    self.scope.get(sl.id), TupleType):
                raise self.error("index arrays with separate indices", sl,
                                 f"write a[{sl.id}[0], {sl.id}[1]] or unpack the tuple first")
            for i in idx:
                self.index_type(i)
            if len(idx) > bty.ndim:
                raise self.error(f"a {bty.ndim}-D array takes at most {bty.ndim} "
                                 f"{'index' if bty.ndim == 1 else 'indices'}, got {len(idx)}",
                                 sl)
            for k, i in enumerate(idx):
                self._check_const_array_index(i, bty, k)
            node.wl_indices = idx
            if len(idx) < bty.ndim:
                # a[i] of a 2-D array: row i, a 1-D view of the same memory (NumPy's and
                # Numba's a[i]); a[i][j] is then element (i, j)
                k = len(idx)
                return self.mark(node, ArrayType(bty.dtype, bty.ndim - k, bty.space,
                                                 bty.shape[k:] if bty.shape else None))
            return self.mark(node, bty.dtype)
        if isinstance(bty, Vector):
            if len(idx) != 1:
                raise self.error("vectors take one index", sl)
            self.index_type(idx[0])
            idx[0] = self._check_const_index(idx[0], bty.n)
            node.wl_indices = idx
            return self.mark(node, bty.elem)
        if isinstance(bty, Matrix):
            for i in idx:
                self.index_type(i)
            if len(idx) > 2:
                raise self.error("matrices take one or two indices", sl)
            idx[0] = self._check_const_index(idx[0], bty.rows)
            if len(idx) == 2:
                idx[1] = self._check_const_index(idx[1], bty.cols)
                node.wl_indices = idx
                return self.mark(node, bty.elem)
            node.wl_indices = idx
            return self.mark(node, vector_of(bty.elem, bty.cols))
        if isinstance(bty, TupleType):
            if len(idx) != 1:
                raise self.error("tuples take one index", sl)
            self.index_type(idx[0])
            c = const_of(idx[0])
            n = len(bty.elems)
            if c is NO_CONST:
                if len(set(bty.elems)) != 1:
                    raise self.error("a tuple of mixed types needs a constant index", idx[0])
                node.wl_indices = idx
                return self.mark(node, bty.elems[0])
            k = int(c) + n if int(c) < 0 else int(c)
            if n <= k < 4 and getattr(self.fn_obj, "dialect", "python") == "warp" and \
                    isinstance(node.value, ast.Attribute) and node.value.attr == "shape" \
                    and isinstance(getattr(node.value.value, "wl_ty", None), ArrayType):
                # Warp's shape_t holds ARRAY_MAX_DIMS (4) extents, 0 past ndim
                # (warp/native/array.h; test_fixedarray.py reads r0.shape[1] == 0)
                return self.mark(node, int32, 0, weak=True)
            if not 0 <= k < n:
                raise self.error(f"tuple index {c} out of range (length {n})", idx[0])
            node.wl_tuple_index = k
            base_c = const_of(node.value)
            if base_c is not NO_CONST:
                return self.mark(node, bty.elems[k], base_c[k],
                                 weak=getattr(node.value, "wl_weak", False))
            return self.mark(node, bty.elems[k])
        hint = ""
        if isinstance(bty, Scalar) and bty.is_int:
            hint = ("an integer is one number; if it holds wl.tid() of a 2-D or 3-D launch, "
                    "unpack it: i, j = wl.tid() (and index with a[i, j])")
        raise self.error(f"{type_name(bty)} cannot be indexed", node, hint)

    def _static_slice(self, node, bty):
        """``a[:2, 1:]`` (also ``a[0, 1:]``, ``a[::2]``) of an array of static shape (Warp's
        fixedarray, ``wl.local_array``, ``wl.shared_array``): a view of the same memory with
        the sliced extents (warp-lang 1.19 ``codegen.py`` ``emit_Subscript``: a slice of an
        array is a view, NumPy's rule for each axis). Bounds and steps must be compile-time
        integers; an integer index drops its axis. Stamps ``node.wl_slice``: per axis
        ``("index", node)`` or ``("slice", start, step)``.

        Raises:
            KernelCompileError: a bound that is not a compile-time integer (not yet), a step that is
                not positive, more axes than the array has, or an empty result.
        """
        sl = node.slice
        parts = list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]
        if len(parts) > bty.ndim:
            raise self.error(f"a {bty.ndim}-D array takes at most {bty.ndim} "
                             f"{'index' if bty.ndim == 1 else 'indices'}, got {len(parts)}", sl)
        out, shape = [], []
        for axis, p in enumerate(parts):
            n = bty.shape[axis]
            if not isinstance(p, ast.Slice):
                self.index_type(p)
                self._check_const_array_index(p, bty, axis)
                out.append(("index", p))
                continue
            vals = []
            for b in (p.lower, p.upper, p.step):
                if b is None:
                    vals.append(None)
                    continue
                self.index_type(b)
                c = const_of(b)
                if c is NO_CONST:
                    raise self.error("a slice whose bounds are known only at run time is "
                                     "not supported yet (warp_lab's views of a fixed-size "
                                     "array have a static shape)", b,
                                     "use literals, constants or wp.static(...) bounds, or "
                                     "index single elements")
                vals.append(int(c))
            if vals[2] is not None and vals[2] <= 0:
                raise self.error("a slice's step must be a positive integer here, not "
                                 f"{vals[2]}", p.step)
            start, stop, step = slice(*vals).indices(n)
            length = len(range(start, stop, step))
            if length == 0:
                raise self.error(f"this slice of an axis of size {n} is empty", p)
            out.append(("slice", start, step))
            shape.append(length)
        shape += list(bty.shape[len(parts):])
        node.wl_slice = out
        return self.mark(node, ArrayType(bty.dtype, len(shape), bty.space, tuple(shape)))

    def _check_const_array_index(self, node, bty, axis: int):
        """A constant array index must be >= 0 (and, for shared and local arrays, whose
        shape is static, below the extent): indices do not count from the end."""
        c = const_of(node)
        if c is NO_CONST or isinstance(c, bool) or not isinstance(c, int):
            return
        if c < 0:
            raise self.error(f"negative index {c}: array indices do not count from the end "
                             "as in Python (this would address memory before the array)", node,
                             "write the element's position, e.g. x[n - 1] for the last one")
        shape = getattr(bty, "shape", None)
        if bty.space != "global" and shape and c >= shape[axis]:
            raise self.error(f"index {c} is out of bounds for axis {axis} with size "
                             f"{shape[axis]}", node)

    def _check_const_index(self, node, n):
        """A constant component index of a vector/matrix of extent ``n``: in range, or in
        Warp's dialect a negative one counting from the end (``-n <= c < 0``, as
        warp-lang 1.19's ``vec.h`` ``extract``/``component_ref`` wrap it). Returns the
        index node to use (a typed constant ``n + c`` for a negative one).

        Raises:
            KernelCompileError: at the index, when it is out of range."""
        c = const_of(node)
        if c is NO_CONST or isinstance(c, bool) or not isinstance(c, (int, np.integer)):
            return node
        c = int(c)
        if -n <= c < 0 and getattr(self.fn_obj, "dialect", "python") == "warp":
            fixed = ast.copy_location(ast.Constant(n + c), node)
            self.visit(fixed)
            return fixed
        if not 0 <= c < n:
            lo = -n if getattr(self.fn_obj, "dialect", "python") == "warp" else 0
            raise self.error(f"index {c} out of range {lo}..{n - 1}", node)
        return node

    # -- operators --------------------------------------------------------------
    def visit_BinOp(self, node):
        op = BINOPS.get(type(node.op))
        lt = self.value_type(node.left)
        rt = self.value_type(node.right)
        node.wl_op = op
        if isinstance(lt, Scalar) and isinstance(rt, Scalar):
            return self._scalar_binop(node, op, lt, rt)
        return self._aggregate_binop(node, op, lt, rt)

    def _scalar_binop(self, node, op, lt, rt):
        lw, rw = getattr(node.left, "wl_weak", False), getattr(node.right, "wl_weak", False)
        sym = BINOP_SYMBOLS.get(op, "?")
        if op == "matmul":
            raise self.error("@ needs a matrix", node, "use * for scalars")
        t = promote(lt, rt, lw, rw)
        if op in ("shl", "shr", "and", "or", "xor"):
            if lt.is_float or rt.is_float:
                raise self.error(f"{sym} needs integers, not {type_name(lt)} and {type_name(rt)}",
                                 node, "convert with int(...)")
            if t.is_bool and op in ("shl", "shr"):
                t = int32
        if t.is_bool and op in ("add", "sub", "mul", "floordiv", "mod", "pow"):
            t = int32
        if getattr(self.fn_obj, "dialect", "python") == "warp":
            op = self._warp_op(node, op, t)
            if op == "cdiv" and t.is_bool:
                t = int32
        if op == "truediv":
            t = float_for(t)
        if t.is_bf16:
            from warp_lab.compiler.bf16 import BF16_BINOPS
            if op not in BF16_BINOPS:
                raise self.error(f"{sym} on bfloat16 is a Warp operation that warp_lab does "
                                 "not have yet (bfloat16 has + - * / // % ** and comparisons)",
                                 node, "convert to float32 first: wp.float32(x)")
        if op == "pow" and t.is_int:
            c = const_of(node.right)
            if c is not NO_CONST and c < 0:
                raise self.error("an integer raised to a negative power is not an integer",
                                 node, "write a float base, e.g. 2.0 ** n")
        rty = t
        node.wl_opty = t
        if op in ("floordiv", "mod", "cdiv", "cmod", "pow", "shl", "shr"):
            self.check_literals_fit((node.left, node.right), t)
        cl, cr = const_of(node.left), const_of(node.right)
        if op in ("shl", "shr") and cr is not NO_CONST and cr < 0:
            raise self.error(f"negative shift count ({sym} {cr}): Python raises ValueError "
                             "here", node.right,
                             f"shift the other way by {-cr} ({'>>' if op == 'shl' else '<<'} "
                             f"{-cr}), or multiply/divide by a power of two")
        if op in ("floordiv", "mod", "cdiv", "cmod") and t.is_int and cl is NO_CONST \
                and cr is not NO_CONST and cr == 0:
            raise self.error(f"integer division by zero ({sym} 0)", node,
                             "Python raises ZeroDivisionError here; on the GPU the result "
                             "would be undefined")
        if lw and rw and t.is_int and cl is not NO_CONST and cr is not NO_CONST:
            return self._fold_literals(node, op, int(cl), int(cr), t)
        if cl is not NO_CONST and cr is not NO_CONST:
            try:
                # float literals fold in double precision, like Python; the weak result
                # rounds to its final type where it is used (0.1 * 3 stored to float64)
                ft = float64 if (lw and rw and t.is_float) else t
                v = fold_binop(op, cast_value(cl, ft), cast_value(cr, ft), ft)
            except FoldError as exc:
                raise self.error(str(exc), node) from None
            except (OverflowError, ValueError):
                v = None
            if v is not None:
                return self.mark(node, rty, v, weak=lw and rw)
        return self.mark(node, rty)

    @staticmethod
    def _warp_op(node, op: str, t: Scalar) -> str:
        """The operator of the Warp dialect for Python's ``op`` on scalars of type ``t``
        (warp-lang 1.19, ``warp/native/builtin.h``): an integer ``/`` is C's truncating
        division (``div``, ``-7 / 2`` is -3), ``%`` is C's remainder with the dividend's
        sign for integers (``-7 % 3`` is -1) and ``fmod`` for floats (``-7.5 % 2.0`` is
        -1.5), a float ``//`` is ``floor(a / b)``; an integer ``//`` floors, as Python's.
        The new name is stamped on ``node.wl_op`` for the code generator."""
        if op == "truediv" and not t.is_float:
            op = "cdiv"
        elif op == "mod":
            op = "cmod"
        elif op == "floordiv" and t.is_float:
            op = "ffloordiv"
        node.wl_op = op
        return op

    def _fold_literals(self, node, op, a: int, b: int, t):
        """Integer literals fold exactly, as Python does (``1 << 40`` is int64, not 0;
        a negative shift count was refused before, :meth:`_scalar_binop`)."""
        if op in ("pow", "shl") and b > 64 and a not in (0, 1, -1):
            raise self.error("this constant expression does not fit in 64 bits", node)
        if op in ("floordiv", "mod", "cdiv", "cmod") and b == 0:
            raise self.error("division by zero in a constant expression", node)
        exact = {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
                 "floordiv": lambda: a // b, "mod": lambda: a % b,
                 "cdiv": lambda: c_div(a, b), "cmod": lambda: a - b * c_div(a, b),
                 "pow": lambda: a ** b, "shl": lambda: a << b, "shr": lambda: a >> b,
                 "and": lambda: a & b,
                 "or": lambda: a | b, "xor": lambda: a ^ b}
        value = exact[op]()
        ty = t if t.bits == 64 and fits(value, t) else self._exact_literal_type(value, node)
        node.wl_opty = ty
        return self.mark(node, ty, value, weak=True)

    def _exact_literal_type(self, value: int, node):
        """The type of the exact integer ``value`` of a constant expression, as of a literal
        (int32, int64 if it needs it, uint64 past int64: ``2**63``, so that ``-2**63`` folds
        to int64's minimum).

        Raises:
            KernelCompileError: ``value`` fits in neither int64 nor uint64.
        """
        if fits(value, int64):
            return literal_type(value)
        if fits(value, uint64):
            return uint64
        raise self.error(f"this constant expression ({value}) does not fit in 64 bits", node)

    def _aggregate_binop(self, node, op, lt, rt):
        sym = BINOP_SYMBOLS.get(op, "?")
        bad = self.error(f"unsupported operand types for {sym}: {type_name(lt)} and "
                         f"{type_name(rt)}", node)
        agg = (Vector, Matrix)
        kinds = (_spatial_kind(lt), _spatial_kind(rt))
        if kinds != (None, None):
            from warp_lab.compiler.frontend import specialize
            from warp_lab.lang.spatial import OPERATORS
            fn = OPERATORS.get((op, *kinds))
            if fn is not None and lt.elem == rt.elem:   # q * q, t * t: a device function
                tf = specialize(self.ctx, fn, [lt, rt], node, self)
                node.wl_kind = "func"
                node.wl_func = tf
                return self.mark(node, tf.ret)
            if isinstance(lt, Vector) and isinstance(rt, Vector) and lt != rt or \
                    op == "mul" and isinstance(lt, Vector) and isinstance(rt, Vector):
                raise self.error(f"unsupported operand types for {sym}: {type_name(lt)} and "
                                 f"{type_name(rt)}", node,
                                 "Warp defines q * q (the quaternion product), t * t "
                                 "(transform_multiply), + and - of one type, and scaling")
        if op == "matmul" or (op == "mul" and isinstance(lt, Matrix) and isinstance(rt, Vector)):
            if isinstance(lt, Matrix) and isinstance(rt, Vector) and lt.cols == rt.n \
                    and lt.elem == rt.elem:
                node.wl_kind = "mv"
                return self.mark(node, vector_of(lt.elem, lt.rows))
            if isinstance(lt, Vector) and isinstance(rt, Matrix) and lt.n == rt.rows \
                    and lt.elem == rt.elem:
                node.wl_kind = "vm"
                return self.mark(node, vector_of(lt.elem, rt.cols))
            if isinstance(lt, Matrix) and isinstance(rt, Matrix) and lt.cols == rt.rows \
                    and lt.elem == rt.elem:
                node.wl_kind = "mm"
                return self.mark(node, matrix_of(lt.elem, lt.rows, rt.cols))
            raise bad
        if op in ("shl", "shr", "and", "or", "xor") and isinstance(lt, agg) and lt == rt and \
                lt.elem.is_int and kinds == (None, None):
            # Warp's lshift/rshift/bit_and/bit_or/bit_xor of integer vectors and matrices
            # (builtins.py): per component, as the scalar operator
            node.wl_kind = "aa"
            return self.mark(node, lt)
        if op not in ("add", "sub", "mul", "truediv"):
            raise bad
        ints = [x for x in (lt, rt) if isinstance(x, (Vector, Matrix)) and not x.elem.is_float]
        if op == "truediv" and ints:
            raise self.error(f"/ on {type_name(ints[0])} would need float components", node,
                             f"convert first, e.g. wl.vec{getattr(ints[0], 'n', 3)}(v) / 2.0")
        if isinstance(lt, agg) and isinstance(rt, agg):
            if lt != rt:
                raise self.error(f"{type_name(lt)} {sym} {type_name(rt)}: both sides must have "
                                 "the same vector or matrix type", node)
            if isinstance(lt, Matrix) and op in ("mul", "truediv"):
                raise self.error(f"{type_name(lt)} {sym} {type_name(rt)} is not defined", node,
                                 "use a @ b for the matrix product")
            node.wl_kind = "aa"
            return self.mark(node, lt)
        if isinstance(lt, agg) and isinstance(rt, Scalar):
            if op in ("add", "sub"):
                raise self.error(f"{type_name(lt)} {sym} scalar is not defined", node,
                                 f"write {type_name(lt)}(s) to broadcast the scalar")
            self._check_elem(node.right, lt.elem)
            node.wl_kind = "as"
            return self.mark(node, lt)
        if isinstance(lt, Scalar) and isinstance(rt, agg) and (
                op == "mul" or op == "truediv" and (isinstance(rt, Quaternion) or
                                                    rt.elem.is_float)):
            # (s / q, s / v, s / m: Warp's div(Scalar, quat | vector | matrix), s / x[k] per
            # component: vec.h, mat.h div(Type s, ...))
            self._check_elem(node.left, rt.elem)
            node.wl_kind = "sa"
            return self.mark(node, rt)
        raise bad

    def _check_elem(self, node, elem):
        c = const_of(node)
        weak = c if getattr(node, "wl_weak", False) and c is not NO_CONST else None
        if not implicit_ok(node.wl_ty, elem, weak):
            raise self.error(f"cannot combine {type_name(node.wl_ty)} with {type_name(elem)} "
                             "components without losing information", node,
                             lossy_hint(node.wl_ty, elem))

    def visit_UnaryOp(self, node):
        t = self.value_type(node.operand)
        op = {ast.USub: "neg", ast.UAdd: "pos", ast.Invert: "invert", ast.Not: "not"}[
            type(node.op)]
        node.wl_op = op
        if op == "not":
            self.truth(node.operand)
            c = const_of(node.operand)
            return self.mark(node, bool_, *((not c, True) if c is not NO_CONST else ()))
        if isinstance(t, (Vector, Matrix)) and (op in ("neg", "pos") or
                                                op == "invert" and t.elem.is_int):
            return self.mark(node, t)   # (~v: Warp's invert of integer vectors, matrices)
        if not isinstance(t, Scalar):
            raise self.error(f"unary operator on {type_name(t)} is not supported", node)
        if op == "invert" and t.is_float:
            raise self.error("~ needs an integer", node)
        rt = int32 if t.is_bool else t
        node.wl_opty = rt
        c = const_of(node.operand)
        if c is not NO_CONST:
            weak = getattr(node.operand, "wl_weak", False)
            ft = float64 if (weak and rt.is_float) else rt  # -0.1 stays the double -0.1
            exact = {"neg": lambda v: -v, "invert": lambda v: ~v}.get(op)
            if weak and rt.is_int and exact is not None and not fits(exact(int(c)), rt):
                # exact, as Python: -(2**31) is int32, -(2**63) int64, -(-2**63) uint64
                rt = self._exact_literal_type(exact(int(c)), node)
                ft = rt
            if op == "neg" and rt.is_bf16:   # Warp's neg(x) is 0 - x: -(0.0) is +0.0
                return self.mark(node, rt, fold_binop("sub", 0.0, cast_value(c, rt), rt))
            return self.mark(node, rt, fold_unary(op, cast_value(c, ft), ft), weak=weak)
        return self.mark(node, rt)

    def visit_BoolOp(self, node):
        """``a and b`` / ``a or b`` with Python's result: the deciding operand.

        All-bool operands give a bool. Numeric operands give their common type
        (as ``a if c else b`` does) and the value of the operand that decided:
        ``n or 7`` is ``n`` when ``n != 0`` and 7 otherwise.
        """
        consts, tys = [], []
        for v in node.values:
            self.truth(v)
            tys.append(v.wl_ty)
            consts.append(const_of(v))
        is_and = isinstance(node.op, ast.And)
        if any(isinstance(t, ArrayType) for t in tys):
            # (Warp's dialect only, truth() refuses arrays otherwise: Warp's && and || of
            # its operands' truth, a bool)
            return self.mark(node, bool_)
        if all(t.is_bool for t in tys):
            t = bool_
        else:
            weak = [getattr(v, "wl_weak", False) for v in node.values]
            t, w = tys[0], weak[0]
            for u, uw in zip(tys[1:], weak[1:]):
                t, w = promote(t, u, w, uw), w and uw
            if all(weak):
                t = literal_type(consts[0])
                for c in consts[1:]:
                    t = promote(t, literal_type(c))
        if all(c is not NO_CONST for c in consts):
            r = consts[-1]
            for c in consts[:-1]:
                if bool(c) != is_and:  # or: the first true operand; and: the first false
                    r = c
                    break
            try:
                r = bool(r) if t.is_bool else cast_value(r, t)
            except (ValueError, OverflowError):
                return self.mark(node, t)
            return self.mark(node, t, r, weak=all(getattr(v, "wl_weak", False)
                                                  for v in node.values))
        return self.mark(node, t)

    def visit_Compare(self, node):
        operands = [node.left] + list(node.comparators)
        for op in node.ops:
            if type(op) not in CMPOPS:
                name = {ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
                        ast.NotIn: "not in"}.get(type(op), "this")
                raise self.error(f"the {name!r} operator is not supported in kernels", node,
                                 "compare numbers with ==, !=, <, <=, >, >=")
        for o in operands:
            self.value_type(o)
        tys = []
        result = True
        for op, a, b in zip(node.ops, operands, operands[1:]):
            at, bt = a.wl_ty, b.wl_ty
            if isinstance(at, (Vector, Matrix)) and type(op) in (ast.Eq, ast.NotEq) and \
                    len(node.ops) == 1:
                # Warp's == / != of vectors and matrices (warp/native/vec.h, mat.h
                # operator==): True when every component is equal, one bool
                if at != bt:
                    raise self.error(f"cannot compare {type_name(at)} and {type_name(bt)}: "
                                     "== of vectors or matrices needs the same type on both "
                                     "sides", node, f"convert one side, {type_name(at)}(...)")
                node.wl_cmp_tys = [at]
                return self.mark(node, bool_)
            if not (isinstance(at, Scalar) and isinstance(bt, Scalar)):
                raise self.error(f"cannot compare {type_name(at)} and {type_name(bt)}", node)
            t = promote(at, bt, getattr(a, "wl_weak", False), getattr(b, "wl_weak", False))
            t = self._exact_compare_type(t, a, b)
            tys.append(t)
            ca, cb = const_of(a), const_of(b)
            if result is not None and ca is not NO_CONST and cb is not NO_CONST:
                both_weak = getattr(a, "wl_weak", False) and getattr(b, "wl_weak", False)
                if both_weak and not t.is_float:
                    # two integer constant expressions: Python's exact comparison (found
                    # by the fuzzer, seed 502302: ~4294967296 < min(0, 10**9 << 34), whose
                    # promotion is uint64, was False once -4294967297 wrapped in it)
                    result = result and fold_compare(CMPOPS[type(op)], int(ca), int(cb))
                    continue
                ft = float64 if (both_weak and t.is_float) else t
                result = result and fold_compare(CMPOPS[type(op)], cast_value(ca, ft),
                                                 cast_value(cb, ft))
            else:
                result = None
        node.wl_cmp_tys = tys
        if result is not None:
            return self.mark(node, bool_, bool(result), weak=True)
        return self.mark(node, bool_)

    def _exact_compare_type(self, t, a, b):
        """The type comparing ``a`` and ``b`` in ``t`` (their promotion), widened to int64
        when one is an integer literal ``t`` cannot hold: Python and NumPy 2 compare the
        exact values (``n < 3_000_000_000`` with ``n: int`` is True), where converting the
        literal to int32 would wrap it (to -1294967296: False).

        Raises:
            KernelCompileError: a uint64 value compared with a negative literal, or a
                signed one with a literal past int64 (no integer type holds both).
        """
        if not t.is_int:
            return t
        for lit, other in ((a, b), (b, a)):
            c = const_of(lit)
            if not getattr(lit, "wl_weak", False) or getattr(other, "wl_weak", False) \
                    or c is NO_CONST or isinstance(c, float) or fits(int(c), t):
                continue
            if not fits(int(c), int64) or (t.bits == 64 and not t.is_signed):
                raise self.error(f"{c} compared with {type_name(t)}: no integer type "
                                 "holds both", lit, "convert one side, e.g. to float64")
            return int64
        return t

    def visit_IfExp(self, node):
        self.truth(node.test)
        a = self.value_type(node.body)
        b = self.value_type(node.orelse)
        if isinstance(a, Scalar) and isinstance(b, Scalar):
            aw, bw = getattr(node.body, "wl_weak", False), getattr(node.orelse, "wl_weak", False)
            t = promote(a, b, aw, bw)
            self.check_literals_fit((node.body, node.orelse), t)
            if aw and bw:
                t = promote(literal_type(const_of(node.body)), literal_type(const_of(node.orelse)))
                test = const_of(node.test)
                if test is not NO_CONST and not isinstance(test, tuple):
                    # literals alone fold exactly, like Python (docs/language.md, "Literals
                    # and conversions"): (63 if True else 1) << 31 is 63 << 31, an int64,
                    # not an int32 select shifted and wrapped to -2**31 (found by the fuzzer)
                    value = const_of(node.body if test else node.orelse)
                    return self.mark(node, t, value, weak=True)
        elif a == b and not isinstance(a, (ArrayType, Meta)):
            t = a
        elif isinstance(a, ArrayType) or isinstance(b, ArrayType):
            # (the message was "the two branches give <array> and <array>", the same type)
            raise self.error("a conditional expression cannot choose an array: arrays are "
                             "not values that can be picked at run time", node,
                             "choose the index, a[0 if c else 1], or the element, "
                             "x[j] if c else y[j]")
        else:
            raise self.error(f"the two branches give {type_name(a)} and {type_name(b)}", node)
        return self.mark(node, t)

    # -- calls ----------------------------------------------------------------
    def visit_Call(self, node):
        from warp_lab.compiler.typing_builtins import type_call
        self.visit(node.func)
        fty = node.func.wl_ty
        if not isinstance(fty, Meta):
            what = f"{ast.unparse(node.func)} ({type_name(fty)}) is not callable"
            shadow = self.shadowed(node.func)
            if shadow is not None:
                raise self.error(f"{node.func.id} is shadowed by {shadow[0]}, so this is not "
                                 f"Python's {node.func.id}(): {what}", node, shadow[1])
            raise self.error(what, node)
        self.check_call_unpacking(node)
        if fty.value is STATIC:
            return self._static(node)
        return type_call(self, node, fty.value)

    def _static(self, node):
        """``wp.static(expr)``: ``expr`` evaluated by Python now, in the function's globals
        and closure (not its local variables, which have no value yet), then typed as a
        captured value (a constant number or tuple, a device function, a type)."""
        if len(node.args) != 1 or node.keywords:
            raise self.error("wp.static takes one expression", node)
        text = ast.unparse(node.args[0])
        names = dict(self.namespace)
        for local, ty in self.scope.items():   # len(t) of a local tuple/vector is known
            n = len(ty.elems) if isinstance(ty, TupleType) else ty.n if isinstance(
                ty, Vector) else ty.rows if isinstance(ty, Matrix) else None
            if n is not None:
                names[local] = _LengthOnly(local, n)
        try:
            value = eval(compile(ast.Expression(node.args[0]), "<wp.static>", "eval"),  # noqa: S307
                         names)
        except Exception as exc:  # noqa: BLE001 - the user's own expression
            raise self.error(f"wp.static({text}) could not be evaluated when the kernel "
                             f"compiled: {type(exc).__name__}: {exc}", node.args[0],
                             "it may use module-level names and the closure, not the "
                             "kernel's own variables") from None
        return self.classify(node, value, f"wp.static({text})")

    def _spread(self, call, star):
        """One ``*value`` of ``call`` as its items (:func:`_spread_items`)."""
        return _spread_items(self, call, star)

    def shadowed(self, func):
        """:func:`~warp_lab.compiler.typing_shadow.shadowing` of a callee that is a plain
        name (``range``, ``min``...), else None."""
        return shadowing(self, func.id) if isinstance(func, ast.Name) else None

    def check_call_unpacking(self, node):
        """Spread ``f(*v)`` over its components, refuse ``f(**kwargs)``, whatever ``f`` is.

        ``*v`` of a value whose length the compile knows (a vector: its components, a
        matrix: its rows, a tuple: its items, a constant slice of any of these or of an
        array, ``*a[:3]``) becomes ``v[0], v[1], ...`` in the call (Warp's
        ``codegen.py`` does the same: unpacking of vectors, matrices, quaternions and
        slices in calls); anything else is refused at the ``*``: arguments are bound at
        compile time, one typed value per parameter. One check for every callee
        (builtins, casts, constructors, ``@wl.func``) keeps the message the same.

        Raises:
            KernelCompileError: at the ``*`` for a value of unknown length, a slice of
                non-constant bounds, an array without a stop, or an expression with side
                effects that would run once per component.
        """
        if any(isinstance(a, ast.Starred) for a in node.args):
            spread = []
            for a in node.args:
                spread += self._spread(node, a) if isinstance(a, ast.Starred) else [a]
            node.args = spread
        for kw in node.keywords:
            if kw.arg is None:
                raise self.error("** keyword unpacking is not supported in kernel calls", kw,
                                 f"pass each argument by position or as name=value in "
                                 f"{ast.unparse(node.func)}(...)")


class _LengthOnly:
    """What ``wp.static(...)`` sees of a local tuple, vector or matrix: its length
    (``wp.static(len(t))``, as warp-lang allows), nothing else (a value it does not have
    when the kernel compiles)."""

    def __init__(self, name: str, n: int):
        self._name, self._n = name, n

    def __len__(self) -> int:
        return self._n

    def __getattr__(self, attr):
        raise TypeError(f"only len({self._name}) of the local {self._name!r} is known when "
                        "the kernel compiles")

    def __getitem__(self, key):
        raise TypeError(f"only len({self._name}) of the local {self._name!r} is known when "
                        "the kernel compiles")


def _pure(node) -> bool:
    """Whether ``node`` is names, attributes, constants and subscripts only (no call:
    repeating it per component repeats no side effect)."""
    return all(isinstance(n, (ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.Load,
                              ast.Slice, ast.Tuple, ast.UnaryOp, ast.USub, ast.BinOp, ast.Add,
                              ast.Sub, ast.Mult))
               for n in ast.walk(node))


def _spread_indices(t, base_node, slc, n, what="a slice unpacked with *"):
    """The indices a constant slice ``slc`` of a value of ``n`` items (None: an array,
    whose length the compile does not know) selects; ``what`` names the slice in the
    error of a bound that is not a constant integer."""
    parts = []
    for part in (slc.lower, slc.upper, slc.step):
        if part is None:
            parts.append(None)
            continue
        t.visit(part)
        c = const_of(part)
        if c is NO_CONST or isinstance(c, float) or isinstance(c, bool):
            raise t.error(f"{what} needs constant integer bounds", part,
                          "the compile fixes a slice's length: use constants, or index "
                          "the components one by one")
        parts.append(int(c))
    if parts[2] == 0:
        raise t.error("slice step cannot be zero", slc.step)
    if n is None:
        start, stop, step = parts
        if stop is None or stop < 0 or (start or 0) < 0:
            raise t.error("an array slice unpacked with * needs a constant, non-negative stop "
                          "(*a[:3]): the compile does not know the array's length", slc)
        return list(range(start or 0, stop, step or 1))
    return list(range(*slice(*parts).indices(n)))


def _spread_items(self, call, star):
    """:meth:`ExprTyper.check_call_unpacking`'s items for one ``*value``."""
    value = star.value
    callee = ast.unparse(call.func)
    hint = f"write the arguments out, {callee}(t[0], t[1], ...), not {callee}(*t)"
    if not _pure(value):
        raise self.error("* unpacking of an expression with calls in it is not supported "
                         "(it would run once per component)", star,
                         "store it in a variable first and unpack that")
    slc = None
    base = value
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice):
        slc, base = value.slice, value.value
    ty = self.value_type(base)
    if isinstance(ty, Vector):
        n = ty.n
    elif isinstance(ty, Matrix):
        n = ty.rows
    elif isinstance(ty, TupleType):
        n = len(ty.elems)
    elif isinstance(ty, ArrayType) and slc is not None and ty.ndim == 1:
        n = None
    else:
        raise self.error(f"* unpacking is not supported in kernel calls for a "
                         f"{type_name(ty)} (only for vectors, matrices, tuples and constant "
                         "slices of them or of 1-D arrays)", star, hint)
    idx = _spread_indices(self, base, slc, n) if slc is not None else list(range(n))
    out = []
    for k in idx:
        item = ast.Subscript(value=copy.deepcopy(base), slice=ast.Constant(k), ctx=ast.Load())
        out.append(ast.fix_missing_locations(ast.copy_location(item, star)))
    return out


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


#: CUDA C++ (and numpy) spellings students reach for, and warp_lab's name for each
_CUDA_NAMES = {
    "threadIdx": "wl.thread_idx", "blockIdx": "wl.block_idx", "blockDim": "wl.block_dim",
    "gridDim": "wl.grid_dim", "warpSize": "wl.warp_size", "__syncthreads": "wl.syncthreads()",
    "syncThreads": "wl.syncthreads()", "__syncwarp": "wl.syncwarp(mask)",
    "__shfl_down_sync": "wl.shfl_down_sync", "__shfl_sync": "wl.shfl_sync",
    "__shfl_xor_sync": "wl.shfl_xor_sync", "__shfl_up_sync": "wl.shfl_up_sync",
    "__ballot_sync": "wl.ballot_sync", "atomicAdd": "wl.atomic_add", "atomicCAS": "wl.atomic_cas",
    "atomicMax": "wl.atomic_max", "atomicMin": "wl.atomic_min", "__threadfence": "wl.threadfence()",
    "inf": "math.inf (import math)", "nan": "math.nan (import math)", "pi": "math.pi (import math)",
    "sum": "a loop, or wl.atomic_add / a reduction across threads",
    "zeros": "wl.local_array(shape, dtype) or wl.shared_array(shape, dtype) inside a kernel",
}


#: numpy's spellings of warp_lab's math builtins, where they differ (np.round rounds
#: halfway cases to even, as wl.rint does; wl.round is CUDA's, away from zero)
_NUMPY_NAMES = {
    "absolute": "abs", "fabs": "abs", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
    "arctan2": "atan2", "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh",
    "power": "pow", "maximum": "max", "fmax": "max", "minimum": "min", "fmin": "min",
    "clip": "clamp", "round": "rint", "around": "rint",
}


def _numpy_hint(value) -> str:
    """A hint for a numpy function called in a kernel (``np.sqrt(x)``): the warp_lab
    builtin that computes it (``wl.sqrt``), else where the builtins are; "" for a
    function not from numpy (its hint is ``@wl.func``)."""
    module = getattr(value, "__module__", None) or type(value).__module__ or ""
    if module.split(".")[0] != "numpy":
        return ""
    name = getattr(value, "__name__", "")
    name = _NUMPY_NAMES.get(name, name)
    if name in B.MATH_UNARY + B.MATH_BINARY + ("abs", "min", "max", "clamp", "sign", "isnan",
                                                "isinf", "isfinite"):
        return f"numpy functions do not run in kernels; warp_lab's builtin for it: wl.{name}"
    return ("numpy functions do not run in kernels: use warp_lab's math builtins (wl.sqrt, "
            "wl.exp, ...: docs/language.md, Builtins) or write it as a @wl.func")


def _did_you_mean(module, attr: str) -> str:
    """A hint for a missing ``module.attr``: warp_lab's name for a CUDA C++ spelling
    (``threadIdx`` -> ``wl.thread_idx``), else the closest public names a kernel can use
    (builtins, types, device functions, numbers: never a host function such as
    ``wl.zeros`` for ``wl.tile_zeros``)."""
    import difflib

    def usable(name):
        v = getattr(module, name, None)
        return isinstance(v, (B.Builtin, B.Dim3, Type, Func, int, float, np.generic))

    names = [n for n in dir(module) if not n.startswith("_") and usable(n)]
    if attr == "print" and module.__name__ in ("warp_lab", "warp_lab.warp"):
        return ("write print(...): Python's print works in kernels (printf takes a C format: "
                f"{'wl' if module.__name__ == 'warp_lab' else 'wp'}.printf(\"%f\\n\", x))")
    if module.__name__ == "warp_lab":
        if attr in _CUDA_NAMES:
            return f"warp_lab's name for it: {_CUDA_NAMES[attr]}"
        close = difflib.get_close_matches(attr.lower(), names, n=3, cutoff=0.6)
        return f"did you mean {', '.join('wl.' + c for c in close)}?" if close else ""
    prefix = "wp" if module.__name__ == "warp_lab.warp" else module.__name__
    close = difflib.get_close_matches(attr, names, n=3, cutoff=0.7)
    return f"did you mean {', '.join(f'{prefix}.{c}' for c in close)}?" if close else ""
