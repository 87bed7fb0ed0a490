"""Parsing a kernel's source, reading its parameter annotations, and the table of
Python constructs outside the kernel language (with what to write instead).

Helpers of :mod:`warp_lab.compiler.frontend`; every failure here is a
:class:`~warp_lab.errors.KernelCompileError` at the user's file/cell line and
1-based column.
"""

from __future__ import annotations

import ast
import copy
import builtins
import typing
import warnings

from warp_lab.errors import KernelCompileError
from warp_lab.compiler.typing_rules import NONE
from warp_lab.lang.types import ANY, ArrayType, StructType, TupleType, as_type

__all__ = ["UNSUPPORTED", "compile_error", "parse_function", "evaluate_annotation",
           "param_types", "location", "ptx_name", "reserved_entry", "declared_return"]

#: constructs outside the language: node class -> (what it is, what to write instead)
UNSUPPORTED = {
    ast.ClassDef: ("class definitions are not allowed in kernels",
                   "define classes outside the kernel; use wl.vec3/wl.mat33 or several arrays"),
    ast.FunctionDef: ("nested function definitions are not allowed in kernels",
                      "define a module-level @wl.func and call it"),
    ast.AsyncFunctionDef: ("async functions are not allowed in kernels",
                           "define a module-level @wl.func"),
    ast.Lambda: ("lambda expressions are not allowed in kernels", "define a @wl.func instead"),
    ast.ListComp: ("list comprehensions are not allowed in kernels",
                   "use a for loop over range() storing into a wl.local_array"),
    ast.SetComp: ("set comprehensions are not allowed in kernels", "use a for loop"),
    ast.DictComp: ("dict comprehensions are not allowed in kernels", "use a for loop"),
    ast.GeneratorExp: ("generator expressions are not allowed in kernels",
                       "use a for loop over range()"),
    ast.Try: ("try/except is not supported in kernels (GPU threads have no exceptions)",
              "test the condition with if, or use assert (a trap in debug mode)"),
    ast.With: ("with statements are not supported in kernels", "write the body directly"),
    ast.AsyncWith: ("async with is not supported in kernels", "write the body directly"),
    ast.AsyncFor: ("async for is not supported in kernels", "use for i in range(n)"),
    ast.Raise: ("raise is not supported in kernels", "use assert (a trap in debug mode)"),
    ast.Yield: ("generators (yield) are not supported in kernels",
                "store results into an array instead"),
    ast.YieldFrom: ("generators (yield from) are not supported in kernels",
                    "store results into an array instead"),
    ast.Await: ("await is not supported in kernels", "kernels are synchronous per thread"),
    ast.List: ("lists are not supported in kernels (no dynamic memory on the GPU)",
               "use a tuple for a fixed group of values or wl.local_array(n, dtype)"),
    ast.Dict: ("dicts are not supported in kernels", "use arrays indexed by integers"),
    ast.Set: ("sets are not supported in kernels", "use arrays indexed by integers"),
    ast.Global: ("global declarations are not allowed in kernels",
                 "write results into an array parameter"),
    ast.Nonlocal: ("nonlocal declarations are not allowed in kernels",
                   "write results into an array parameter"),
    ast.Delete: ("del is not supported in kernels", "simply stop using the variable"),
    ast.Import: ("import inside a kernel is not allowed", "import at module level"),
    ast.ImportFrom: ("import inside a kernel is not allowed", "import at module level"),
    ast.JoinedStr: ("f-strings are not supported in kernels",
                    "use print('x =', x) or wl.printf('x = %d\\n', x)"),
    ast.Starred: ("* unpacking is not supported in kernels", "pass the arguments one by one"),
    ast.Slice: ("slices are not supported in kernels", "index single elements: a[i] or a[i, j]"),
    ast.NamedExpr: ("the := operator is not supported in kernels",
                    "assign in a separate statement"),
}
if hasattr(ast, "Match"):
    UNSUPPORTED[ast.Match] = ("match statements are not supported in kernels", "use if/elif")
if hasattr(ast, "TryStar"):
    UNSUPPORTED[ast.TryStar] = UNSUPPORTED[ast.Try]


def location(source, node):
    """(file line, 1-based column) of ``node`` in ``source``.

    The column counts characters, as the quoted line and its caret do: ``ast`` gives
    ``col_offset`` in UTF-8 bytes (Python's ``ast`` documentation), which is further
    right after a non-ASCII character (``print("é", x)``).
    """
    line = source.first_line + getattr(node, "lineno", 1) - 1
    offset = getattr(node, "col_offset", -1)
    text = source.line(line)[source.col_offset:]  # the line as parsed (dedented)
    if offset > 0 and not text.isascii():
        offset = len(text.encode("utf-8")[:offset].decode("utf-8", errors="ignore"))
    col = offset + 1 + source.col_offset
    return line, max(col, 0)


def compile_error(source, node, message, hint="") -> KernelCompileError:
    """A :class:`KernelCompileError` at ``node`` of ``source`` (file/cell line, 1-based column)."""
    line, col = location(source, node) if node is not None else (source.first_line, 0)
    return KernelCompileError(message, source.filename, line, col, source.line(line), hint)


def parse_function(fn_obj) -> ast.FunctionDef:
    """Parse the source of a Kernel/Func into its ``ast.FunctionDef``.

    Raises:
        KernelCompileError: a syntax error, a lambda (it has no ``def`` to
            parse: its source line is the surrounding statement), or no ``def``.
    """
    src = fn_obj.source
    if getattr(getattr(fn_obj, "fn", None), "__name__", None) == "<lambda>":
        what = "kernel" if type(fn_obj).__name__ == "Kernel" else "device function"
        deco = "@wl.kernel" if what == "kernel" else "@wl.func"
        raise KernelCompileError(f"a lambda cannot be a {what}", src.filename, src.first_line,
                                 0, src.line(src.first_line),
                                 f"write it as a function: {deco} on the line above "
                                 f"def name(x: ...):")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings of odd literals: not our output
            module = ast.parse(src.text)
    except SyntaxError as exc:
        line = src.first_line + (exc.lineno or 1) - 1
        col = (exc.offset or 0) + (src.col_offset if exc.offset else 0)
        raise KernelCompileError(f"syntax error: {exc.msg}", src.filename, line, col,
                                 src.line(line)) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise KernelCompileError(f"cannot parse the function: {exc}", src.filename,
                                 src.first_line) from None
    defs = [n for n in module.body if isinstance(n, ast.FunctionDef)]
    if not defs:
        node = module.body[0] if module.body else None
        raise compile_error(src, node, "expected a function definition (def ...)")
    if getattr(fn_obj, "dialect", "python") == "warp":
        _unroll_static_loops(defs[0])
    return defs[0]


#: most copies :func:`_unroll_static_loops` makes of one loop's body
STATIC_UNROLL_LIMIT = 1024


def _static_calls(node):
    """The ``wp.static(...)``/``static(...)`` calls under ``node``."""
    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and n.args and
            (getattr(n.func, "attr", None) == "static" or getattr(n.func, "id", None) == "static")]


def _mentions(node, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _const_range(node):
    """The values of ``range(c...)`` with constant int arguments, else None."""
    if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "range"
            and not node.keywords and 1 <= len(node.args) <= 3):
        return None
    vals = [a.value if isinstance(a, ast.Constant) else
            -a.operand.value if isinstance(a, ast.UnaryOp) and isinstance(a.op, ast.USub)
            and isinstance(a.operand, ast.Constant) else None for a in node.args]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in vals) or \
            (len(vals) == 3 and vals[2] == 0):
        return None
    return range(*vals)


def _assigns(node, name: str) -> bool:
    """Whether ``node`` binds ``name`` anywhere (an assignment or loop target)."""
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
               for n in ast.walk(node))


def _substituted(stmts, name: str, value: int):
    """Copies of ``stmts`` with ``name`` in their ``wp.static`` arguments replaced by
    ``value``, following rebinding in order (after ``for name in range(c):`` the name
    holds that range's last value, as in Python); None when a ``wp.static`` reads the
    name after a rebinding whose value the compile cannot know."""
    out, cur = [], value
    for st in stmts:
        st = copy.deepcopy(st)
        rng = _const_range(st.iter) if isinstance(st, ast.For) else None
        if isinstance(st, ast.For) and isinstance(st.target, ast.Name) and \
                st.target.id == name and rng is not None:
            out.append(st)
            cur = rng[-1] if len(rng) else cur
            continue
        rebinds = _assigns(st, name)
        for call in _static_calls(st):
            if _mentions(call.args[0], name):
                if cur is None or rebinds:
                    return None
                arg = call.args[0]
                if isinstance(arg, ast.Name):
                    call.args[0] = ast.copy_location(ast.Constant(cur), arg)
                    continue
                for n in ast.walk(arg):
                    for field, child in ast.iter_fields(n):
                        if isinstance(child, ast.Name) and child.id == name:
                            setattr(n, field, ast.copy_location(ast.Constant(cur), child))
                        elif isinstance(child, list):
                            child[:] = [ast.copy_location(ast.Constant(cur), c)
                                        if isinstance(c, ast.Name) and c.id == name else c
                                        for c in child]
        if rebinds:
            cur = None
        out.append(st)
    return out


def _unroll_static_loops(tree) -> None:
    """Unroll, in place, each ``for v in range(<constants>):`` whose body has a
    ``wp.static(...)`` that reads ``v``: one body copy per value, ``v = k`` first, the
    static's ``v`` replaced by ``k`` (warp-lang's codegen unrolls such loops whatever
    ``max_unroll`` is, so that ``wp.static`` sees the loop variable, not a global of its
    name). Loops with ``break``/``continue``/``else``, or more than
    :data:`STATIC_UNROLL_LIMIT` iterations, stay loops (the static then reads the
    module's name, as before). Inner loops are unrolled first."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list) or not any(isinstance(s, ast.For) for s in stmts):
                continue
            new = []
            for st in stmts:
                new += _unrolled(st) or [st]
            setattr(node, field, new)


def _unrolled(st):
    """:func:`_unroll_static_loops` of one statement: its copies, or None to keep it."""
    if not isinstance(st, ast.For) or not isinstance(st.target, ast.Name) or st.orelse:
        return None
    inner = ast.Module(body=st.body, type_ignores=[])
    _unroll_static_loops(inner)     # (inner loops first)
    st.body = inner.body
    rng = _const_range(st.iter)
    name = st.target.id
    if rng is None or not len(rng) or len(rng) > STATIC_UNROLL_LIMIT or \
            not any(_mentions(c.args[0], name) for c in _static_calls(ast.Module(
                body=st.body, type_ignores=[]))) or \
            any(isinstance(n, (ast.Break, ast.Continue)) for n in ast.walk(
                ast.Module(body=st.body, type_ignores=[]))):
        return None
    out = []
    for k in rng:
        body = _substituted(st.body, name, k)
        if body is None:
            return None
        assign = ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                            value=ast.Constant(k))
        ast.copy_location(assign, st)
        ast.copy_location(assign.targets[0], st.target)
        ast.copy_location(assign.value, st.iter)
        out += [assign] + body
    return out


def evaluate_annotation(fn_obj, ann):
    """An annotation's value; strings (``from __future__ import annotations``) are
    evaluated in the function's module and closure, as ``typing.get_type_hints`` does,
    and so is the string that gives (a string annotation under that import, ``x: "float"``,
    is stored as ``"'float'"``; a ``%%warp_kernel`` cell defers its annotations so).

    Raises:
        ValueError: a string annotation does not evaluate.
    """
    for _ in range(2):
        if not isinstance(ann, str):
            return ann
        try:
            ann = eval(ann, dict(fn_obj.globals), fn_obj.closure)  # noqa: S307 - the user's own
        except Exception as exc:
            raise ValueError(f"{type(exc).__name__}: {exc}") from None
    return ann


#: the warp_lab type each builtin-type annotation means (``x: int`` is ``wl.int32``...)
_EXPLICIT = {"int": "wl.int32", "float": "wl.float32", "bool": "wl.bool_"}


def param_types(fn_obj, tree, ctx_error) -> list:
    """Kernel parameters from annotations (evaluated by Python, or strings evaluated here).

    Args:
        fn_obj: the :class:`~warp_lab.lang.kernel.Kernel`.
        tree: its parsed ``ast.FunctionDef`` (where errors point).
        ctx_error: ``(message, node, hint="") -> KernelCompileError`` in the kernel's source.

    Returns:
        ``[(name, Type), ...]`` in parameter order.

    Raises:
        KernelCompileError: a parameter without an annotation, one that does not
            evaluate or is not a warp_lab type (a shadowed ``int``/``float``/``bool``
            named as such), a shared or local array, or a tuple.
    """
    anns = getattr(fn_obj.fn, "__annotations__", {})
    out = []
    for a in tree.args.args:
        name = a.arg
        ann = anns.get(name)
        if ann is None:
            raise ctx_error(f"kernel parameter {name!r} needs a type annotation", a,
                            f"write {name}: wl.array(dtype=wl.float32) or {name}: float")
        try:
            ann = evaluate_annotation(fn_obj, ann)
        except ValueError as exc:
            raise ctx_error(f"cannot evaluate the annotation of {name!r}: {exc}", a) from None
        generic = ann is typing.Any or (isinstance(ann, ArrayType) and ann.dtype == ANY)
        if generic:
            raise ctx_error(f"kernel parameter {name!r} is generic (typing.Any): a kernel is "
                            "compiled for concrete types", a,
                            "launch it with wp.launch, which specialises it for the "
                            "arguments' types, or annotate the type")
        try:
            ty = as_type(ann)
        except TypeError:
            written = a.annotation.id if isinstance(a.annotation, ast.Name) else None
            if written in ("int", "float", "bool") and ann is not getattr(builtins, written):
                raise ctx_error(f"the annotation of {name!r} is {written}, which is shadowed "
                                f"here (= {ann!r}), not Python's {written}", a.annotation,
                                f"rename that {written} (in a notebook: del {written}), or "
                                f"annotate with {_EXPLICIT[written]}") from None
            raise ctx_error(f"the annotation of {name!r} ({ann!r}) is not a warp_lab type", a,
                            "use wl.array(dtype=...), wl.float32, wl.int32, float, int, bool, "
                            "wl.vec3, ...") from None
        if isinstance(ty, ArrayType) and ty.space != "global":
            raise ctx_error(f"kernel parameter {name!r} must be a global array", a)
        if isinstance(ty, ArrayType) and isinstance(ty.dtype, StructType) and \
                ty.dtype.has_arrays:
            raise ctx_error(f"kernel parameter {name!r} is an array of {ty.dtype.name}, a "
                            "struct with an array field: warp_lab cannot have arrays inside "
                            "array elements yet", a,
                            "pass the inner arrays as parameters of their own, or the "
                            "struct by value")
        if isinstance(ty, TupleType):
            raise ctx_error(f"kernel parameter {name!r} cannot be a tuple", a)
        out.append((name, ty))
    return out


def ptx_name(name: str) -> str:
    """``name`` as a PTX identifier (PTX ISA, "Identifiers": ``[a-zA-Z_][a-zA-Z0-9_$]*``);
    other characters of a Python name (``é``) become ``$XXXX`` with their code point."""
    out = "".join(c if (c.isascii() and (c.isalnum() or c == "_")) else f"${ord(c):04x}"
                  for c in name)
    return out if out[:1].isalpha() or out[:1] == "_" else "_" + out


#: PTX names a kernel's module may declare or define besides the kernel's own (an exact
#: name, or a prefix ending in "_"), and whose they are: a kernel so named made LLVM's
#: module refuse the second symbol (DuplicatedNameError, an internal compiler error)
_RESERVED = {
    "__nv_": "libdevice's math functions (__nv_sinf, __nv_powf, ...), which wl.sin, ** "
             "and the other math builtins call",
    "vprintf": "CUDA's device printf, which print() calls",
    "__wl_": "warp_lab's own symbols (__wl_dynamic_shared, wl.dynamic_shared_array's)",
}


def reserved_entry(name: str) -> str | None:
    """Whose symbol the PTX name ``name`` of a kernel would clash with, or None when it is
    free (:data:`_RESERVED`; device functions and shared arrays get numbered names that
    cannot clash)."""
    for key, whose in _RESERVED.items():
        if name == key or key.endswith("_") and name.startswith(key):
            return whose
    return None


_NO_ANN = object()


def _return_type(ann):
    """A return annotation's type: a warp_lab type, or ``tuple[T1, T2, ...]`` (Warp's
    spelling of a function returning several values) as a :class:`TupleType`."""
    import typing

    if typing.get_origin(ann) is tuple:
        args = typing.get_args(ann)
        if not args or Ellipsis in args:
            raise TypeError("a tuple return annotation needs its element types")
        return TupleType(tuple(as_type(a) for a in args))
    return as_type(ann)


def declared_return(func, typer, tree):
    """The type of a device function's ``-> T`` annotation (None when absent)."""
    ann = getattr(func.fn, "__annotations__", {}).get("return", _NO_ANN)
    if ann is _NO_ANN:
        return None
    if ann is None or ann == "None":
        return NONE
    try:
        ty = _return_type(evaluate_annotation(func, ann))
    except (TypeError, ValueError):
        raise typer.error(f"the return annotation of {func.name}() is not a warp_lab type",
                          tree.returns or tree) from None
    if isinstance(ty, ArrayType) and ty.space != "local" and ty.space != "global":
        raise typer.error("a device function cannot return an array", tree.returns or tree)
    # a fixed-size array (-> wp.fixedarray(shape, dtype)) is returned by value; a global
    # one (-> wp.array2d[int]) is refused by FunctionTyper.return_type, with Warp's message
    # when the function returns a fixed-size array
    return ty

