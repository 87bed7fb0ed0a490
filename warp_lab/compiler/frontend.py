"""Front end: Python AST -> typed AST (types inferred, every rejected construct diagnosed).

``make_typed_ast(kernel, options)`` parses the kernel's source, resolves
names (locals, closure variables, module globals, warp_lab builtins), infers
the type of every expression (rules in :mod:`~warp_lab.compiler.typing_rules`,
builtins in :mod:`~warp_lab.compiler.typing_builtins`), specialises each
``@wl.func`` per argument types, and stamps the results onto the AST nodes
(see :mod:`~warp_lab.compiler.typed_ast`).

Every problem is a :class:`~warp_lab.errors.KernelCompileError` pointing at the
user's file or cell line and 1-based column: :meth:`FunctionTyper.visit`
stamps the current node (the shape of Triton's ``CodeGenerator.visit``). Any
other exception is a bug of ours and becomes one
:class:`~warp_lab.errors.InternalCompilerError` (:mod:`~warp_lab.compiler.ice`),
located at the node :meth:`FunctionTyper.visit` was typing, or, outside it (the
flow check, return typing, ``launch_ndim`` inference, :func:`specialize`), where
:func:`make_typed_ast` finds it.
"""

from __future__ import annotations

import ast
import builtins as _py
from types import ModuleType

from warp_lab.compiler.budget import check_unroll_budget
from warp_lab.compiler.frontend_flow import check_flow, walk
from warp_lab.compiler.frontend_unroll import iterates_helper, type_unrolled_for
from warp_lab.compiler.frontend_parse import (UNSUPPORTED, compile_error, declared_return,
                                              evaluate_annotation, location, param_types,
                                              parse_function, ptx_name, reserved_entry)
from warp_lab.compiler.typed_ast import NO_CONST, TypedFunction, TypedKernel, const_of
from warp_lab.compiler.typing_exprs import ExprTyper, PyBuiltin, static_resolve
from warp_lab.compiler.typing_rules import (BINOP_SYMBOLS, BINOPS, NONE, ConstRangeError, Meta,
                                            fits, implicit_ok, int_needed_hint, literal_type,
                                            lossy_hint, no_value, promote, type_name)
from warp_lab.compiler.typing_shadow import shadowing
from warp_lab.compiler.ice import internal_error, raised_by_user_code
from warp_lab.errors import KernelCompileError, WarpLabError, source_label
from warp_lab.lang import builtins as B
from warp_lab.lang.kernel import Func, Kernel
from warp_lab.compiler import typing_structs
from warp_lab.lang.types import (ArrayType, Matrix, Scalar, StructType, TupleType, Vector,
                                 as_type, int32, int64, is_fixed_array)
from warp_lab.options import SUPPORTED_ARCHS, sm_number

__all__ = ["make_typed_ast", "FunctionTyper", "UNSUPPORTED", "specialize", "parse_function",
           "evaluate_annotation"]


def _calls_reversed(typer, it) -> bool:
    """Whether the loop iterable ``it`` calls Python's own ``reversed`` (a name the
    function or its module does not rebind)."""
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
            and it.func.id == "reversed"):
        return False
    if "reversed" in typer.scope or "reversed" in typer.assigned:
        return False
    value = typer.namespace.get("reversed", _py.reversed)
    return value is _py.reversed

class _Context:
    """State shared by every function of one kernel compile."""

    def __init__(self, kernel: Kernel, options):
        self.kernel = kernel
        self.options = options
        self.launch_ndim = 1
        self.funcs: dict = {}          # (Func, types) -> TypedFunction, callees first
        self.in_progress: list = []    # specialisation keys being typed (recursion check)
        self.shared: list = []          # wl.shared_array declarations: TypedKernel.shared
        self.shared_arrays: list = []   # source_map.SharedArray records: TypedKernel
        self.counter = 0
        self.captured: dict = {}       # "fn: name" -> repr of a captured value (cache keys)
        self.trees: dict = {}          # Func -> its parsed tree, read but never typed (parse)

    def parse(self, func: Func) -> ast.FunctionDef:
        """``func``'s tree for reading its signature and calls, parsed once per compile.

        Not for typing: typing stamps the tree, and each specialisation parses
        its own (:func:`specialize`).

        Raises:
            KernelCompileError: as :func:`parse_function` (not remembered).
        """
        tree = self.trees.get(func)
        if tree is None:
            tree = self.trees[func] = parse_function(func)
        return tree

    def unique(self, stem: str) -> str:
        """A fresh symbol name ``stem_N`` (LLVM function and shared-variable names).

        ``N`` counts up over the compile, so two such names never meet; only the
        entry's own name, which has no counter (a kernel ``g_s_1`` beside the shared
        array ``s`` of a ``@wl.func g``), could equal one, and is skipped."""
        entry = ptx_name(self.kernel.name)
        while True:
            self.counter += 1
            name = f"{stem}_{self.counter}"
            if name != entry:
                return name


class FunctionTyper(ExprTyper):
    """Types one function: statements here, expressions in :class:`ExprTyper`."""

    def __init__(self, ctx: _Context, fn_obj, tree: ast.FunctionDef, params, is_kernel: bool):
        self.ctx = ctx
        self.fn_obj = fn_obj
        self.source = fn_obj.source
        self.tree = tree
        self.is_kernel = is_kernel
        self.scope: dict = dict(params)
        self.params = tuple(params)
        self.arrays = {n for n, t in params if isinstance(t, ArrayType)}
        self.array_binding = {n: None for n in self.arrays}  # name -> the one binding statement
        self.array_alias: dict = {}   # array variable -> the array name it was bound to, or None
        self.written: set = set()     # array names stored into (see mark_written)
        # variable -> (name, numpy type, line) of the captured NumPy scalar that gave its
        # first assignment (which fixes its type) that type, directly or through another
        # such variable (line: where the scalar is): numpy_scalar_hint says it
        self.numpy_vars: dict = {}
        self.facts = _TreeFacts(tree)
        self.assigned = self.facts.stores
        self.loop_depth = 0
        self.returns: list = []
        self.uses_tid = False
        self.cur = tree
        self.iterated = None          # the tuple a for loop iterates, while it is typed
        self.namespace = dict(fn_obj.globals)
        self.namespace.update(fn_obj.closure)

    # -- diagnostics and dispatch ------------------------------------------
    def error(self, message: str, node=None, hint: str = "") -> KernelCompileError:
        """A KernelCompileError at ``node`` (default: the node being typed)."""
        return compile_error(self.source, node if node is not None else self.cur, message, hint)

    def visit(self, node):
        """Type ``node``.

        Raises:
            KernelCompileError: the construct is outside the language or mistyped, or
                the user's own code raised while it was evaluated (located at ``node``).
            InternalCompilerError: any other exception, a warp_lab bug (located at
                ``node``, the exception chained).
        """
        prev, self.cur = self.cur, node
        try:
            if type(node) in UNSUPPORTED:
                what, hint = UNSUPPORTED[type(node)]
                raise self.error(what, node, hint)
            method = getattr(self, "visit_" + type(node).__name__, None)
            if method is None:
                raise self.error(f"{type(node).__name__} is not supported in kernels", node)
            return method(node)
        except WarpLabError:  # the user's located error, or an inner node's internal one
            raise
        except RecursionError:
            raise self.error("expression nested too deeply", node) from None
        except ConstRangeError as exc:  # a folded constant that its float type cannot hold
            raise self.error(str(exc), node, exc.hint) from None
        except MemoryError:  # the machine's limit, not a bug
            raise
        except Exception as exc:  # noqa: BLE001 - every other exception is re-raised
            where = raised_by_user_code(exc)
            if where:  # the user's own Python (an object's __index__ ...) raised it
                raise self.error(f"evaluating this raised {type(exc).__name__}: {exc} "
                                 f"(in your code at {where})", node) from exc
            raise internal_error(exc, "frontend", self.ctx.kernel.name,
                                 f"options {self.ctx.options!r}", self.source, node) from exc
        finally:
            self.cur = prev

    def run(self):
        """Type the whole function body."""
        args = self.tree.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or (
                args.defaults and self.is_kernel):
            raise self.error("kernel and device-function parameters must be plain names "
                             "(no *args, **kwargs or keyword-only parameters; no defaults "
                             "in a kernel: wl.launch passes every argument)", self.tree)
        self.body(self.tree.body)  # (no statement left in a local: see ice._where)
        check_flow(self)

    def body(self, stmts):
        """Type a statement list."""
        for s in stmts:
            self.visit(s)

    # -- statements ----------------------------------------------------------
    def visit_Pass(self, node):
        pass

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring or a bare string: no code
        self.visit(node.value)
        ty = getattr(node.value, "wl_ty", None)
        if isinstance(ty, Meta) and isinstance(ty.value, (B.Builtin, Func, PyBuiltin)):
            # ``wl.syncthreads`` without ``()``: Python evaluates the name and drops it, so
            # the barrier a student meant is silently not there
            src = ast.unparse(node.value)
            raise self.error(f"{src} is not called: this line does nothing", node.value,
                             f"write {src}(...) to call it" if not src.endswith("syncthreads")
                             else f"write {src}() for the barrier")

    def visit_Assign(self, node):
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            # ``tile = wl.shared_array(...)``: the .shared variable is named after ``tile``
            node.value.wl_bound_name = node.targets[0].id
        self.visit(node.value)
        for target in node.targets:
            self.assign(target, node.value)

    def visit_AnnAssign(self, node):
        if not isinstance(node.target, ast.Name):
            raise self.error("annotated assignment needs a plain variable name", node.target)
        if isinstance(node.annotation, ast.Call):  # Python never evaluates it: a local's
            # annotation is not run, so wl.array(dtype=...) here would be typed as a call
            raise self.error(f"{ast.unparse(node.annotation)} cannot annotate a local "
                             "variable", node.annotation,
                             f"an array variable takes its type from its value: write "
                             f"{node.target.id} = ... without the annotation, or name the "
                             "type at module level (F = wl.array(...)) and annotate with F")
        self.visit(node.annotation)
        declared = _annotation_type(node.annotation.wl_ty)
        if declared is None:
            raise self.error(f"{ast.unparse(node.annotation)} is not a warp_lab type",
                             node.annotation, "annotate with wl.float32, wl.int32, int, float, ...")
        name = node.target.id
        if name in self.scope and self.scope[name] != declared:
            raise self.error(f"variable {name!r} already has type {type_name(self.scope[name])}",
                             node.target)
        if isinstance(declared, ArrayType):
            # ``p: wl.array(...) = a`` binds an array variable as ``p = a`` does: it must
            # go through assign_name, which records the alias (so that stores through
            # ``p`` mark ``a`` written) and refuses rebinding
            if node.value is None:
                raise self.error(f"array variable {name!r} needs a value", node,
                                 f"bind it to an array: {name}: ... = some_array")
            self.visit(node.value)
            self.check_convert(node.value, declared, f"variable {name!r}")
            self.assign_name(node.target, node.value)
            return
        self.scope[name] = declared
        node.target.wl_var_ty = declared
        if node.value is not None:
            self.visit(node.value)
            self.check_convert(node.value, declared, f"variable {name!r}")

    def visit_AugAssign(self, node):
        target = node.target
        if not isinstance(target, (ast.Name, ast.Subscript, ast.Attribute)):
            raise self.error("augmented assignment needs a variable, element or component",
                             target)
        if isinstance(target, ast.Name) and target.id in self.arrays:
            raise self.error(f"arrays cannot be updated with augmented assignment: {target.id} "
                             f"is an array", target,
                             f"update its elements: {target.id}[i] {_op_sym(node.op)}= ...")
        load = _as_load(target)
        binop = ast.copy_location(ast.BinOp(left=load, op=node.op, right=node.value), node)
        self.visit(binop)
        node.wl_binop = binop
        tty = load.wl_ty
        if not implicit_ok(binop.wl_ty, tty):
            hint = (_float_into_int_hint(target.id, binop.wl_ty, tty)
                    if isinstance(target, ast.Name) else lossy_hint(binop.wl_ty, tty))
            hint = numpy_scalar_hint(node.value, binop.wl_ty, hint)
            raise self.error(
                f"{ast.unparse(target)} {_op_sym(node.op)}= ... gives {type_name(binop.wl_ty)}, "
                f"which cannot be stored in {type_name(tty)} without losing information",
                node, hint)
        if isinstance(target, (ast.Subscript, ast.Attribute)):
            self.check_store_target(target)
            self.mark_store_target(target)
        target.wl_var_ty = tty

    def assign(self, target, value):
        """Type a store of expression ``value`` (already typed) into ``target``."""
        vty = value.wl_ty
        if isinstance(target, (ast.Tuple, ast.List)):
            elts = target.elts
            star = next((e for e in elts if isinstance(e, ast.Starred)), None)
            if star is not None:
                raise self.error(f"starred assignment ({ast.unparse(star)}) is not supported "
                                 "in kernels", star,
                                 "unpack into one name per element, e.g. a, b, c = t")
            if isinstance(vty, TupleType):
                parts = vty.elems
            elif isinstance(vty, Vector):
                parts = (vty.elem,) * vty.n
            else:
                hint = ("if it holds wl.tid() of a 2-D launch, unpack the call: "
                        "i, j = wl.tid() (wl.tid() is a tuple in kernels that unpack it "
                        "somewhere, or compiled with launch_ndim=2)"
                        if isinstance(vty, Scalar) and vty.is_int else "")
                raise self.error(f"cannot unpack {type_name(vty)} into {len(elts)} names",
                                 target, hint)
            if len(parts) != len(elts):
                raise self.error(f"cannot unpack {len(parts)} values into {len(elts)} names",
                                 target)
            sub_nodes = value.elts if isinstance(value, ast.Tuple) else None
            for k, (elt, pty) in enumerate(zip(elts, parts)):
                if sub_nodes is not None:
                    self.assign(elt, sub_nodes[k])
                else:
                    self.assign(elt, _Typed(pty))
            target.wl_ty = vty
            return
        if isinstance(target, ast.Name):
            self.assign_name(target, value)
        elif isinstance(target, (ast.Subscript, ast.Attribute)):
            self.visit(_as_load(target))
            self.check_store_target(target)
            self.mark_store_target(target)
            tty = target.wl_load.wl_ty
            typing_structs.check_field_store(self, target, value)
            self.check_convert(value, tty, ast.unparse(target))
            if isinstance(tty, ArrayType):   # s.arr = a: stores through s.arr reach a
                self.mark_written(value)
            target.wl_var_ty = tty
        elif isinstance(target, ast.Starred):
            raise self.error(f"starred assignment ({ast.unparse(target)}) is not supported "
                             "in kernels", target,
                             "unpack into one name per element, e.g. a, b, c = t")
        else:
            raise self.error(f"cannot assign to {ast.unparse(target)}", target,
                             "assign to a variable name, an array element x[i] or a vector "
                             "component v.x")

    def assign_name(self, target: ast.Name, value):
        """Type a store into a plain name: declares the variable on first assignment."""
        name = target.id
        vty = value.wl_ty
        if isinstance(vty, ArrayType):
            if name in self.scope and name not in self.arrays:
                raise self.error(f"{name!r} holds a {type_name(self.scope[name])}; it cannot "
                                 "become an array", target)
            if name in self.arrays and self.array_binding.get(name, target) is not target:
                raise self.error(f"array variable {name!r} cannot be rebound to another array",
                                 target, "use a new name for the other array")
            self.array_binding[name] = target
            self.array_alias[name] = _array_origin(value)
            self.scope[name] = vty
            self.arrays.add(name)
            target.wl_var_ty = vty
            return
        if isinstance(vty, Meta):
            raise self.error(f"cannot store {type_name(vty)} (a compile-time value) in a "
                             "variable", value if hasattr(value, "lineno") else target,
                             "use it directly where it is needed")
        if vty == NONE:
            where = value if hasattr(value, "lineno") else target
            raise self.error(no_value(where), where)
        if name in self.arrays:
            raise self.error(f"array variable {name!r} cannot be reassigned", target,
                             "use a new name")
        if name in self.scope:
            dst = self.scope[name]
            self.check_convert(value, dst, f"variable {name!r}", numpy_scalar_hint(
                value, vty, _float_into_int_hint(name, vty, dst)))
        else:
            ty = vty
            if getattr(value, "wl_weak", False) and isinstance(vty, Scalar):
                c = const_of(value)
                ty = literal_type(c) if c is not NO_CONST else vty
            self.scope[name] = ty
            origin = numpy_scalar_of(value, ty)
            if origin is not None:
                self.numpy_vars[name] = (*origin, self.source.first_line + target.lineno - 1)
            elif isinstance(value, ast.AST):  # w = v + 1.0, v's type from one: so is w's
                via = next((getattr(n, "wl_numpy_var", None) for n in ast.walk(value)
                            if getattr(n, "wl_numpy_var", None) is not None
                            and getattr(n, "wl_ty", None) == ty), None)
                if via is not None:
                    self.numpy_vars[name] = via
        target.wl_var_ty = self.scope[name]

    def mark_written(self, arr):
        """Record a store into the array expression ``arr`` (element, component, atomic).

        A plain name (or a view of one, ``a[i]``) is recorded; anything else (no such
        expression exists in the language today) conservatively counts as a store into
        every array parameter.
        """
        arr = _array_root(arr)
        if typing_structs.is_struct_rooted(arr):
            return   # an array in a struct: the runtime counts every such array written
        self.written.add(arr.id if isinstance(arr, ast.Name) else _ANY_ARRAY)

    def mark_store_target(self, target):
        """:meth:`mark_written` for the array under a subscript/attribute store target."""
        node = target.wl_load
        while isinstance(node, (ast.Subscript, ast.Attribute)):
            node = node.value
            if isinstance(getattr(node, "wl_ty", None), ArrayType):
                self.mark_written(node)
                return

    def written_params(self) -> frozenset:
        """The array parameters this function may store into, aliases followed."""
        params = {n for n, t in self.params if isinstance(t, ArrayType)}
        out = set()
        for name in self.written:
            seen = set()
            while name in self.array_alias and name not in seen:
                seen.add(name)
                name = self.array_alias[name]
            if name is _ANY_ARRAY:
                return frozenset(params)
            if name in params:
                out.add(name)
        return frozenset(out)

    def check_store_target(self, target):
        """A subscript or attribute store: only into arrays and local vector/matrix variables."""
        base = target.wl_load.value
        bty = base.wl_ty
        if isinstance(bty, StructType) or isinstance(bty, (Vector, Matrix)) and \
                typing_structs.is_struct_rooted(base):
            if typing_structs.storable(self, base):
                return
            raise self.error(f"cannot assign to {ast.unparse(target)}: {ast.unparse(base)} is "
                             "a value, not a variable, parameter or array element", target,
                             "store it in a variable first, change the field there")
        if isinstance(bty, ArrayType):
            if isinstance(target.wl_load.wl_ty, ArrayType):  # a[i] = ... of a 2-D array
                raise self.error(f"cannot assign to {ast.unparse(target)}: it is a "
                                 f"{target.wl_load.wl_ty.ndim}-D view of "
                                 f"{ast.unparse(base)}, not one element", target,
                                 f"assign elements: {ast.unparse(target)[:-1]}, j] = ..."
                                 if ast.unparse(target).endswith("]") else "")
            if isinstance(target, ast.Attribute):  # x.shape = ...
                raise self.error(f"{ast.unparse(target)} is read-only: an array's shape is "
                                 "fixed by the argument passed at launch", target)
            return
        if isinstance(bty, (Vector, Matrix)) and isinstance(base, ast.Name) and \
                base.id in self.scope:
            return
        # a component of an array element: p[i].x = ..., p[i][1] = ..., m[i][r, c] = ...
        if isinstance(bty, (Vector, Matrix)) and isinstance(base, ast.Subscript) and \
                isinstance(base.value.wl_ty, ArrayType):
            load = target.wl_load
            whole_row = isinstance(bty, Matrix) and isinstance(load, ast.Subscript) and \
                len(load.wl_indices) == 1
            if not whole_row:
                return
        # a component of a matrix row: m[2][1] = ..., s.m[2][1] = ..., a[i][2][1] = ...
        if isinstance(bty, Vector) and isinstance(base, ast.Subscript) and \
                isinstance(base.value.wl_ty, Matrix) and len(base.wl_indices) == 1 and \
                typing_structs.storable(self, base.value):
            if not typing_structs.in_memory(base.value) and \
                    const_of(base.wl_indices[0]) is NO_CONST:
                raise self.error(f"cannot assign to {ast.unparse(target)}: the row of the "
                                 f"local matrix {ast.unparse(base.value)} is chosen at run "
                                 "time", target, "index the element itself: m[i, j] = ...")
            return
        if isinstance(bty, Meta):  # wl.tid = 3, math.pi = 3: a module or other global
            what = f"the module {bty.value.__name__}" if isinstance(bty.value, ModuleType) \
                else type_name(bty)
            raise self.error(f"cannot assign to {ast.unparse(target)}: {ast.unparse(base)} is "
                             f"{what}, a compile-time name, not a variable", target,
                             "store into a local variable or an array parameter instead")
        if isinstance(bty, TupleType):
            raise self.error(f"cannot assign to an element of the tuple {ast.unparse(base)}: "
                             "tuples are immutable", target,
                             "build a new tuple, or use a vector (wl.vec3) or wl.local_array")
        raise self.error(f"cannot assign to an element of {type_name(bty)}", target,
                         "only array elements and components of vector/matrix variables "
                         "can be assigned")

    def check_convert(self, value, dst, what: str, hint: str | None = None):
        """Raise a diagnostic naming the cast when ``value`` cannot be stored in ``dst``
        (``hint`` replaces the default one, which names the cast)."""
        src = value.wl_ty
        if isinstance(src, ArrayType) and not isinstance(dst, ArrayType):
            where = value if hasattr(value, "lineno") else None
            sub = ast.unparse(value) if where is not None else "the value"
            raise self.error(f"cannot store {sub}, a {src.ndim}-D view of an array, in {what} "
                             f"of type {type_name(dst)}", where,
                             f"index every axis: {sub[:-1]}, j]" if sub.endswith("]") else
                             "index every axis of the array")
        if is_fixed_array(dst) and src != dst:   # -> wp.fixedarray(shape=..., dtype=...)
            where = value if hasattr(value, "lineno") else None
            raise self.error(f"{what} is a {type_name(src)}, not a {type_name(dst)}", where,
                             "a fixed-size array is returned by value: the same shape and "
                             "dtype as its annotation")
        if src == NONE and hasattr(value, "lineno"):   # x[i] = None, x[i] = wl.syncthreads()
            raise self.error(no_value(value), value)
        c = const_of(value)
        weak = c if getattr(value, "wl_weak", False) and c is not NO_CONST else None
        if not implicit_ok(src, dst, weak):
            if not hint and _true_division_of_ints(value) and isinstance(dst, Scalar) \
                    and dst.is_int:
                floor = ast.unparse(value).replace(" / ", " // ", 1)
                hint = (f"/ is true division, a float even of two integers; for the "
                        f"integer quotient write // ({floor}), or convert: wl.{dst.name}(...)")
            raise self.error(f"cannot store {type_name(src)} in {what} of type {type_name(dst)} "
                             "without losing information",
                             value if hasattr(value, "lineno") else None,
                             hint or numpy_scalar_hint(value, src, lossy_hint(src, dst)))

    def visit_If(self, node):
        self.truth(node.test)
        self.body(node.body)
        self.body(node.orelse)

    def visit_While(self, node):
        if node.orelse:
            raise self.error("while ... else is not supported", node,
                             "use a flag variable set before break")
        self.truth(node.test)
        self.loop_depth += 1
        self.body(node.body)
        self.loop_depth -= 1

    def visit_For(self, node):
        if node.orelse:
            raise self.error("for ... else is not supported", node,
                             "use a flag variable set before break")
        it = node.iter
        node.wl_reversed = False
        if _calls_reversed(self, it):   # for i in reversed(range(...)): Python's order, reversed
            it = self.reversed_range(it)
            node.wl_reversed = True
        fn = static_resolve(it.func, self) if isinstance(it, ast.Call) and \
            iterates_helper(self, it) is None else None
        if not (isinstance(fn, PyBuiltin) and fn.name == "range"):
            shadow = shadowing(self, "range") if isinstance(it, ast.Call) and \
                isinstance(it.func, ast.Name) and it.func.id == "range" else None
            if shadow is not None:
                raise self.error(f"range is shadowed by {shadow[0]}, so this is not "
                                 "Python's range(...), which for loops iterate over",
                                 it.func, shadow[1])
            if type_unrolled_for(self, node):  # for x in <tuple>: unrolled (frontend_unroll)
                return
            what = type_name(it.wl_ty)
            raise self.error(f"for loops must iterate over range(...) or a tuple, not {what}",
                             it, "write for i in range(n) and index the array: a[i]"
                             if isinstance(it.wl_ty, ArrayType) else
                             "write for i in range(n) and index it, or iterate a tuple")
        self.check_call_unpacking(it)
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.error("range() takes 1 to 3 positional arguments", it)
        for a in it.args:
            self.visit(a)
            if not (isinstance(a.wl_ty, Scalar) and (a.wl_ty.is_int or a.wl_ty.is_bool)):
                raise self.error(f"range() arguments must be integers, not {type_name(a.wl_ty)}",
                                 a, int_needed_hint(a))
        ty = self.range_type(it.args)
        step = const_of(it.args[2]) if len(it.args) == 3 else 1
        if step == 0:
            raise self.error("range() step must not be zero", it.args[2])
        node.wl_range_ty = ty
        node.wl_step = step if step is not NO_CONST else None
        if not isinstance(node.target, ast.Name):
            raise self.error("the loop variable must be a plain name", node.target)
        name = node.target.id
        if name in self.scope:
            if not implicit_ok(ty, self.scope[name]):
                had = type_name(self.scope[name])
                raise self.error(f"loop variable {name!r} has type {had} "
                                 f"but range() yields {type_name(ty)}", node.target,
                                 f"{name!r} has type {had} from its earlier use, and a kernel "
                                 "variable keeps one type: give this loop another variable, "
                                 f"or convert the bounds, range(wl.{had}(...))")
        else:
            self.scope[name] = ty
        node.target.wl_var_ty = self.scope[name]
        self.loop_depth += 1
        self.body(node.body)
        self.loop_depth -= 1

    def reversed_range(self, it: ast.Call) -> ast.Call:
        """The ``range(...)`` call of a loop over ``reversed(range(...))`` (Python's
        ``reversed`` of a range; warp-lang 1.19's ``reversed`` builtin, ``range.h``
        ``iter_reverse``: the same values, last first).

        Raises:
            KernelCompileError: ``reversed`` of anything but one ``range(...)`` call.
        """
        inner = it.args[0] if len(it.args) == 1 and not it.keywords else None
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and \
                inner.func.id == "range" and iterates_helper(self, inner) is None:
            fn = static_resolve(inner.func, self)
            if isinstance(fn, PyBuiltin) and fn.name == "range":
                return inner
        raise self.error("reversed() in a kernel takes one range(...) (as a for loop's "
                         "iterable)", it, "write for i in reversed(range(a, b, s)), or "
                         "iterate the range with a negative step: range(b - 1, a - 1, -1)")

    def range_type(self, args) -> Scalar:
        """The type of a ``range(*args)`` loop's counter and variable (``args`` typed ints).

        The arguments' common type as arithmetic promotes typed values (literals are
        weak: ``range(n)`` with ``n: int8`` counts in int8), int32 when all are literals
        (int64 if one needs it). Python's range counts with unbounded ints, so where a
        bound does not fit that type the loop counts in int64 instead: a signed value
        beside an unsigned type (C's conversions would make ``range(n, -1, -1)`` with
        ``n: uint32`` count from 7 to 2**32 - 1, zero times, where Python counts 8
        times), or a literal past the type (``range(n, 5_000_000_000)`` with ``n: int``).

        Raises:
            KernelCompileError: a uint64 argument beside a signed one, or a literal past
                int64 beside a signed type (no integer type holds both).
        """
        weak = [getattr(a, "wl_weak", False) for a in args]
        consts = [const_of(a) if w else NO_CONST for a, w in zip(args, weak)]
        strong = [a.wl_ty for a, w in zip(args, weak) if not w]
        ty = strong[0] if strong else int32
        for t in strong[1:]:
            ty = promote(ty, t)
        if ty.is_bool:
            ty = int32
        signed = [a for a, w, c in zip(args, weak, consts) if (a.wl_ty.is_signed and not w) or
                  (c is not NO_CONST and c < 0)]
        if not ty.is_signed and signed and ty.bits == 64:
            raise self.error("range() mixes uint64 with a signed value; there is no "
                             "integer type for both", signed[0],
                             "convert explicitly, e.g. wl.int64(n)")
        huge = [a for a, c in zip(args, consts) if c is not NO_CONST and not fits(int(c), ty)
                and not fits(int(c), int64)]
        if huge:  # a uint64 literal beside a signed type
            raise self.error(f"range() bound {const_of(huge[0])} does not fit in int64, and "
                             f"the other arguments are {type_name(ty)}: there is no integer "
                             "type for both", huge[0], "convert explicitly, e.g. wl.uint64(n)")
        if (not ty.is_signed and signed) or any(c is not NO_CONST and not fits(int(c), ty)
                                                for c in consts):
            ty = int64
        return ty

    def visit_Break(self, node):
        if not self.loop_depth:
            raise self.error("break outside a loop", node)

    def visit_Continue(self, node):
        if not self.loop_depth:
            raise self.error("continue outside a loop", node)

    def visit_Return(self, node):
        if node.value is None or (isinstance(node.value, ast.Constant)
                                  and node.value.value is None):
            self.returns.append((node, NONE))
            return
        if self.is_kernel:
            raise self.error("a kernel cannot return a value", node.value,
                             "store results into an array parameter")
        self.visit(node.value)
        ty = node.value.wl_ty
        if is_fixed_array(ty):   # Warp's fixedarray (wp.zeros in a func): returned by value
            pass                 # (its elements: lower.py, _ret_types)
        elif isinstance(ty, (Meta, ArrayType)) or ty == NONE:
            raise self.error(f"a device function cannot return {type_name(ty)}", node.value,
                             "a per-thread array (wl.local_array, wp.zeros) is returned by "
                             "value; other arrays cannot be" if isinstance(ty, ArrayType)
                             else "")
        self.returns.append((node, ty))

    def visit_Assert(self, node):
        self.truth(node.test)
        if node.msg is not None:
            self.visit(node.msg)
            if not (isinstance(node.msg.wl_ty, Meta) and isinstance(const_of(node.msg), str)):
                raise self.error("the assert message must be a string literal", node.msg)

    # -- results -------------------------------------------------------------
    def return_type(self, declared=None):
        """The function's return type: ``declared`` (its ``->`` annotation) when given,
        else the join of every ``return``'s type (scalars promote; others must agree)."""
        valued = [(n, t) for n, t in self.returns if t != NONE]
        if isinstance(declared, ArrayType) and declared.space == "global":
            # codegen.py: a fixedarray returned where `-> wp.array...` is annotated
            n = next((n for n, t in valued if is_fixed_array(t)), None)
            if n is None:
                raise self.error("a device function cannot return an array",
                                 self.tree.returns or self.tree)
            raise self.error(f"The function `{self.fn_obj.name}` returns a fixed-size array "
                             "whereas it has its return type annotated as "
                             f"`Array[{type_name(declared.dtype)}]`.", n.value,
                             "annotate it -> wp.fixedarray(shape=..., dtype=...), or leave "
                             "the return type out")
        if declared is not None:
            if declared != NONE and len(valued) != len(self.returns):
                bare = next(n for n, t in self.returns if t == NONE)
                raise self.error(f"this function is declared to return {type_name(declared)}",
                                 bare)
            for n, t in valued:
                if declared == NONE:
                    raise self.error("this function is declared to return None", n)
                self.check_convert(n.value, declared, "the return value")
            return declared
        if not valued:
            return NONE
        if len(valued) != len(self.returns):
            bare = next(n for n, t in self.returns if t == NONE)
            raise self.error("this function returns a value elsewhere; every return needs one",
                             bare)
        ty = None
        weak = True
        for n, t in valued:
            w = getattr(n.value, "wl_weak", False)
            if ty is None:
                ty, weak = t, w
            elif isinstance(ty, Scalar) and isinstance(t, Scalar):
                ty = promote(ty, t, weak, w)
                weak = weak and w
            elif ty != t:
                raise self.error(f"returns {type_name(t)} here but {type_name(ty)} elsewhere", n)
        if weak and isinstance(ty, Scalar):
            ty = literal_type(const_of(valued[0][0].value)) if len(valued) == 1 else ty
        for n, t in valued:
            self.check_convert(n.value, ty, "the return value")
        return ty


class _Typed:
    """A stand-in 'node' carrying only a type (parts of an unpacked tuple)."""

    def __init__(self, ty):
        self.wl_ty = ty


def _as_load(target):
    """The load twin of a store target (kept on ``target.wl_load``)."""
    if getattr(target, "wl_load", None) is None:
        target.wl_load = _load_copy(target)
    return target.wl_load


def _load_copy(node):
    """A copy of the expression tree ``node`` with every ``ctx`` set to ``Load``.

    What ``copy.deepcopy`` and a walk resetting ``ctx`` give, at a fifth of the
    cost: the nodes (and lists of nodes) under ``node``'s fields are copied, the
    other attributes (names, constants, positions: immutable) are shared.
    """
    new = type(node).__new__(type(node))
    attrs = new.__dict__
    attrs.update(node.__dict__)
    for field in node._fields:
        value = attrs.get(field)
        if isinstance(value, ast.AST):
            attrs[field] = _load_copy(value)
        elif isinstance(value, list):
            attrs[field] = [_load_copy(v) if isinstance(v, ast.AST) else v for v in value]
    if "ctx" in attrs:
        attrs["ctx"] = ast.Load()
    return new


def _op_sym(op) -> str:
    """The Python spelling of the binary operator node ``op`` (``ast.Add()`` -> ``+``)."""
    return BINOP_SYMBOLS.get(BINOPS.get(type(op), ""), "?")


class _TreeFacts:
    """What the front end reads off a whole function tree, gathered in one walk.

    Attributes:
        stores: the names assigned anywhere (``Name`` nodes in ``Store`` context).
        calls: every ``Call`` node, in ``ast.walk`` order.
        tuple_assigns: every ``a, b = <call>`` (one tuple target, a call as the
            value), in ``ast.walk`` order.
    """

    def __init__(self, tree):
        self.stores: set = set()
        self.calls: list = []
        self.tuple_assigns: list = []
        name_type, store, call, assign = ast.Name, ast.Store, ast.Call, ast.Assign
        for n in walk(tree):
            if isinstance(n, name_type):
                if isinstance(n.ctx, store):
                    self.stores.add(n.id)
            elif isinstance(n, call):
                self.calls.append(n)
            elif isinstance(n, assign) and len(n.targets) == 1 and \
                    isinstance(n.targets[0], ast.Tuple) and isinstance(n.value, call):
                self.tuple_assigns.append(n)


def _annotation_type(ty):
    """The warp_lab type a typed local annotation names (``int`` is int32, like a
    parameter's), or None when it names none."""
    if isinstance(ty, Meta):
        v = ty.value
        if isinstance(v, PyBuiltin) and v.name in ("int", "float", "bool"):
            return as_type({"int": int, "float": float, "bool": bool}[v.name])
        try:
            return as_type(v)
        except TypeError:
            return None
    return None


def _launch_ndim(ctx, typer: FunctionTyper) -> int:
    """The arity of ``i, j = wl.tid()`` in the kernel or a device function it calls
    (1 when ``wl.tid()`` is never unpacked)."""
    n = getattr(ctx.options, "launch_ndim", None)
    if n is not None:  # (0 is refused, not taken for "infer it")
        if isinstance(n, bool) or n not in (1, 2, 3):
            raise KernelCompileError(f"launch_ndim must be 1, 2 or 3, not {n!r}",
                                     typer.source.filename, typer.source.first_line)
        return n
    found = None
    todo, seen = [typer], set()
    while todo:
        t = todo.pop()
        for call in t.facts.calls:
            callee = _static_callee(call, t)
            if isinstance(callee, Func) and callee not in seen:
                seen.add(callee)
                try:
                    tree = ctx.parse(callee)
                except KernelCompileError:
                    continue  # reported when the call is typed
                todo.append(FunctionTyper(ctx, callee, tree, [], is_kernel=False))
        for node in t.facts.tuple_assigns:
            if _static_callee(node.value, t) is not B.tid:
                continue
            n = len(node.targets[0].elts)
            most = 4 if getattr(typer.fn_obj, "dialect", "python") == "warp" else 3
            if not 1 <= n <= most:
                raise t.error("wp.tid() gives 1 to 4 indices" if most == 4 else
                              "wl.tid() gives 1, 2 or 3 indices", node.targets[0],
                              None if most == 4 else "a kernel of the Warp dialect "
                              "(@wp.kernel) may unpack 4, as Warp does")
            if n == 4 and t is not typer:
                raise t.error("a 4-index wp.tid() must be in the kernel itself, not in a "
                              "function it calls (Warp allows wp.tid() in kernels only)",
                              node.targets[0])
            if found is not None and n != found:
                raise t.error(f"wl.tid() is unpacked into {n} names here but into "
                              f"{found} elsewhere", node.targets[0])
            found = n
    return found or 1


def _static_callee(node, typer):
    """What a call node calls, when its callee is a plain global name or module attribute."""
    if not isinstance(node, ast.Call):
        return None
    try:
        return static_resolve(node.func, typer)
    except KernelCompileError:
        return None


def specialize(ctx: _Context, func: Func, arg_types, call_node, caller) -> TypedFunction:
    """Type the ``@wl.func`` ``func`` for ``arg_types`` once per kernel compile.

    Args:
        ctx: the compile's shared state (its ``funcs`` cache the result).
        func: the device function called.
        arg_types: the types of the call's arguments, one per parameter, in order
            (defaults already filled in by the call's typing).
        call_node: the ``ast.Call`` node, where a recursion or arity error points.
        caller: the :class:`FunctionTyper` of the calling function.

    Returns:
        the :class:`~warp_lab.compiler.typed_ast.TypedFunction`, its symbol unique.

    Raises:
        KernelCompileError: recursion, more than 64 nested calls, a wrong argument
            count (at the call), or any error in ``func``'s body (at that line, its
            hint naming the signature and the call site).
    """
    key = (func, tuple(arg_types))
    if key in ctx.funcs:
        return ctx.funcs[key]
    chain = [k[0].name for k in ctx.in_progress]
    if any(k[0] is func for k in ctx.in_progress):
        path = " -> ".join(chain[chain.index(func.name):] + [func.name])
        raise caller.error(f"recursion is not supported on the GPU ({path})", call_node,
                           "rewrite the recursion as a loop")
    if len(ctx.in_progress) > 64:
        raise caller.error("device functions nest more than 64 calls deep", call_node)
    tree = parse_function(func)
    names = [a.arg for a in tree.args.args]
    if len(names) != len(arg_types):
        raise caller.error(f"{func.name}() takes {len(names)} arguments, got {len(arg_types)}",
                           call_node)
    params = list(zip(names, arg_types))
    ctx.in_progress.append(key)
    try:
        typer = FunctionTyper(ctx, func, tree, params, is_kernel=False)
        typer.run()
        ret = typer.return_type(declared_return(func, typer, tree))
    except KernelCompileError as exc:
        if exc.call_noted:  # a call deeper in the chain is named already
            raise
        line, _ = location(caller.source, call_node)
        sig = ", ".join(f"{n}: {type_name(t)}" for n, t in params)
        note = f"{func.name}({sig}) was called at {source_label(caller.source.filename)}:{line}"
        raise type(exc)(exc.message, exc.filename, exc.line, exc.col, exc.source_line,
                        f"{exc.hint}; {note}" if exc.hint else note, call_noted=True) from exc
    finally:
        ctx.in_progress.pop()
    tf = TypedFunction(ctx.unique(ptx_name(f"{ctx.kernel.name}__{func.name}")), func.name,
                       func.source,
                       tree, tuple(params), ret, dict(typer.scope), False, typer.uses_tid,
                       typer.written_params())
    ctx.funcs[key] = tf
    return tf


def make_typed_ast(kernel: Kernel, options=None) -> TypedKernel:
    """Parse and type ``kernel`` and every device function it calls.

    Args:
        kernel: a :class:`~warp_lab.lang.kernel.Kernel` (``@wl.kernel``).
        options: :class:`~warp_lab.options.CompileOptions` (only
            ``launch_ndim`` and ``arch`` matter here: the kernel parameter space
            and the ``sm_80`` warp reductions); None for defaults (sm_90).

    Returns:
        the :class:`~warp_lab.compiler.typed_ast.TypedKernel`.

    Raises:
        KernelCompileError: the kernel is outside the language or mistyped;
            the error carries file/cell, line, 1-based column, the source line
            and a hint.
        InternalCompilerError: a warp_lab bug (any other exception, chained as
            ``__cause__``), naming the kernel and the line being typed when known.
    """
    if not isinstance(kernel, Kernel):
        raise TypeError(f"expected a @wl.kernel, got {type(kernel).__name__}")
    try:
        return _make_typed_ast(kernel, options)
    except KernelCompileError as exc:
        # show the user's code, not the compiler's frames (Triton's filter_traceback);
        # a wrapped foreign exception keeps its own traceback in __cause__
        raise exc.with_traceback(None)  # noqa: B904
    except WarpLabError:  # an InternalCompilerError already made, with its traceback
        raise
    except MemoryError:  # the machine's limit, not a bug
        raise
    except Exception as exc:  # noqa: BLE001 - our bug outside FunctionTyper.visit: re-raised
        raise internal_error(exc, "frontend", kernel.name, f"options {options!r}") from exc


def _make_typed_ast(kernel: Kernel, options) -> TypedKernel:
    ctx = _Context(kernel, options)
    tree = parse_function(kernel)

    def err(msg, node, hint=""):
        """A diagnostic in the kernel's own source."""
        return compile_error(kernel.source, node, msg, hint)

    whose = reserved_entry(ptx_name(kernel.name))
    if whose is not None:
        raise err(f"a kernel cannot be named {kernel.name}: its PTX name would clash with "
                  f"{whose}", tree, "rename the kernel")
    params = param_types(kernel, tree, err)
    _check_param_space(params, getattr(options, "arch", "sm_90"), tree, err)
    if tree.returns is not None and not (isinstance(tree.returns, ast.Constant)
                                         and tree.returns.value is None):
        raise err("a kernel cannot return a value", tree.returns,
                  "store results into an array parameter")
    typer = FunctionTyper(ctx, kernel, tree, params, is_kernel=True)
    ctx.launch_ndim = _launch_ndim(ctx, typer)
    typer.run()
    entry = ptx_name(kernel.name)
    # an array in a struct parameter counts as written (stores through copies of the struct,
    # device functions and struct-valued locals are not followed): its dotted path, the
    # name its argument's view has at launch ("s.arr", "s.inner.arr")
    written = typer.written_params() | frozenset(
        path for n, t in params if isinstance(t, StructType)
        for path in typing_structs.array_paths(n, t))
    tk_fn = TypedFunction(entry, kernel.name, kernel.source, tree, tuple(params), NONE,
                          dict(typer.scope), True, typer.uses_tid, written)
    funcs = tuple(ctx.funcs.values())
    uses_tid = typer.uses_tid or any(f.uses_tid for f in funcs)
    tk = TypedKernel(kernel.name, entry, kernel.source, tk_fn, funcs, tuple(params),
                     ctx.launch_ndim, uses_tid, tuple(ctx.shared),
                     tuple(sorted(ctx.captured.items())), tk_fn.written_params,
                     tuple(ctx.shared_arrays))
    check_unroll_budget(tk)
    return tk


def numpy_scalar_hint(value, src, hint: str) -> str:
    """The hint for a lossy store whose value has type ``src`` because of a captured NumPy
    scalar: ``HALF = np.float64(0.5)`` is a typed float64, unlike the Python number ``0.5``,
    which takes the type of the value beside it (NumPy 2's rule, NEP 50; docs/language.md,
    "Literals and conversions"), so ``x[i] * HALF`` is float64 with ``x`` float32.

    Args:
        value: the typed expression stored (``ast`` node; its leaves carry ``wl_numpy``
            when :meth:`ExprTyper.classify` typed them from a NumPy scalar).
        src: its type, the one that does not fit the target.
        hint: the hint otherwise given (the cast to write).

    Returns:
        ``hint`` prefixed by the name of the first such scalar of type ``src``, or
        ``hint`` unchanged when there is none.
    """
    if not isinstance(value, ast.AST):     # a value typed without a node (tuple unpacking)
        return hint
    for n in ast.walk(value):
        via = getattr(n, "wl_numpy_var", None)      # a variable that took the type from one
        if via is not None and getattr(n, "wl_ty", None) == src:
            name, kind, line = via
            py = "float" if kind.startswith("float") else "int"
            return (f"{n.id} is {type_name(src)}: {name} is a numpy.{kind}, a typed "
                    f"constant, which made line {line} {type_name(src)} (a Python {py} would "
                    f"take the type beside it): bind {name} to a Python {py} ({name} = "
                    f"{py}(...)), or {hint}")
    origin = numpy_scalar_of(value, src)
    if origin is not None:
        name, kind = origin
        py = "float" if kind.startswith("float") else "int"
        return (f"{name} is a numpy.{kind}, a typed constant, so the expression is "
                f"{type_name(src)} (a Python {py} would take the type beside it): bind "
                f"{name} to a Python {py} ({name} = {py}(...)), or {hint}")
    return hint


def numpy_scalar_of(value, ty):
    """``(name, numpy type name)`` of the first captured NumPy scalar of type ``ty`` in the
    typed expression ``value`` (its leaves carry ``wl_numpy``, set by
    :meth:`ExprTyper.classify`), or None: ``("HALF", "float64")`` in ``x[i] * HALF``;
    None for a value that is no ``ast`` node (an element of a tuple unpacked)."""
    if not isinstance(value, ast.AST):
        return None
    for n in ast.walk(value):
        origin = getattr(n, "wl_numpy", None)
        if origin is not None and getattr(n, "wl_ty", None) == ty:
            return origin
    return None


def _float_into_int_hint(name: str, src, dst) -> str:
    """The hint for storing a float ``src`` into the integer variable ``name``: C's
    ``float v = 0;`` ported as ``v = 0`` made it an integer, so say how to start it as a
    float before naming the (truncating) cast; other cases get :func:`lossy_hint`."""
    hint = lossy_hint(src, dst)
    if isinstance(dst, Scalar) and not dst.is_float and isinstance(src, Scalar) and src.is_float:
        return (f"{name} is an integer variable; if it should hold floats, start it as one "
                f"({name} = 0.0) or annotate it ({name}: float = 0); else {hint}")
    return hint


#: Stands for "some array, not known which" in :meth:`FunctionTyper.mark_written`.
_ANY_ARRAY = object()


def _array_root(node):
    """The array a view ``a[i]`` (``a[i][j]`` ...) is part of: ``a``'s node."""
    while isinstance(node, ast.Subscript) and isinstance(getattr(node, "wl_ty", None),
                                                         ArrayType):
        node = node.value
    return node


def _array_origin(value):
    """What an array variable is bound to: another array's name (also through a view
    ``a[i]``), None for a new array (``wl.shared_array``, ``wl.local_array``), or
    :data:`_ANY_ARRAY` when unknown."""
    value = _array_root(value)
    if isinstance(value, ast.Name):
        return value.id
    if typing_structs.is_struct_rooted(value):
        return None   # an array held in a struct: every such array counts as written
    t = getattr(value, "wl_ty", None)
    if isinstance(value, ast.Call) and isinstance(t, ArrayType) and t.space != "global":
        return None
    return _ANY_ARRAY


def param_space_limit(arch: str) -> int:
    """Bytes of kernel parameters ptxas accepts for ``arch`` with warp_lab's PTX version.

    4352 bytes up to PTX ISA 8.0; 32764 bytes from PTX ISA 8.1 on sm_70 and newer
    (PTX ISA 8.1 release notes; CUDA C++ Programming Guide, "Function Parameters").
    The PTX version is :data:`warp_lab.options.SUPPORTED_ARCHS`'s for ``arch``.
    """
    major, minor = (int(p) for p in SUPPORTED_ARCHS.get(arch, "6.0").split("."))
    return 32764 if (major, minor) >= (8, 1) and sm_number(arch) >= 70 else 4352


def _check_param_space(params, arch: str, tree: ast.FunctionDef, err) -> None:
    """Refuse parameters that overflow the kernel parameter space, at the first one past it."""
    from warp_lab.compiler import abi

    limit = param_space_limit(arch)
    layout = abi.param_layout(params)
    if abi.buffer_size(layout) <= limit:
        return
    first = next(s for s in layout if s.offset + s.size > limit)
    node = next((a for a in tree.args.args if a.arg == first.name), tree)
    ptx = SUPPORTED_ARCHS.get(arch, "?")
    raise err(f"the kernel's parameters take {abi.buffer_size(layout)} bytes; {arch} kernels "
              f"(PTX ISA {ptx}) take at most {limit} bytes, and {first.name!r} ends at byte "
              f"{first.offset + first.size}", node,
              "pass fewer arrays: stack arrays of one shape into one array with an extra "
              "dimension (each array parameter is 8 + 8 * ndim bytes)")


def _true_division_of_ints(value) -> bool:
    """Whether ``value`` is ``a / b`` of two integers (a float in Python and in kernels),
    which a student storing into an integer array usually meant as ``a // b``."""
    return isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div) and all(
        isinstance(getattr(v, "wl_ty", None), Scalar) and v.wl_ty.is_int
        for v in (value.left, value.right))
