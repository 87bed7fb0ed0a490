"""Which functions of a ``%%warp_kernel`` cell are kernels, and why not.

The magic (:mod:`warp_lab.notebook.magic`) parses a cell, runs it, and compiles the
kernels its top-level ``def`` statements made: :func:`classify_functions` tells a kernel
from a device function by the code alone (an undecorated function that returns a value
is a device function), :func:`recording_defs` makes the cell hand back each function
its ``def`` made whatever the cell binds the name to afterwards, and
:func:`why_no_kernel` says, for a cell that made no kernel, what it found instead.
"""

from __future__ import annotations

import ast

from warp_lab.lang.kernel import Func, Kernel

__all__ = ["classify_functions", "why_no_kernel", "recording_defs", "rebinding_line", "describe",
           "is_kernel_decorator", "returns_value", "DEFINED"]


def is_kernel_decorator(node: ast.expr) -> bool:
    """Whether a decorator expression names kernel/func (``wl.kernel``, ``kernel(...)``)."""
    if isinstance(node, ast.Call):
        node = node.func
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name in ("kernel", "func")


def classify_functions(tree: ast.Module) -> dict[str, str]:
    """Which top-level undecorated functions of a cell are kernels and which are funcs.

    Args:
        tree: the parsed cell.

    Returns:
        ``{name: "kernel" | "func"}`` for every top-level ``def`` without a
        ``kernel``/``func`` decorator: ``"func"`` when another function in
        the cell calls it by name, or when it returns a value (``return v``
        or a return annotation other than ``None``: a kernel cannot, so a
        helper written in a cell of its own, before the kernels that call
        it, is a device function), else ``"kernel"``. Functions with other
        decorators are left alone (not in the result).
    """
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    called: set[str] = set()
    for fn in defs:
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id != fn.name:
                called.add(node.func.id)
    return {fn.name: ("func" if fn.name in called or returns_value(fn) else "kernel")
            for fn in defs if not fn.decorator_list}


def returns_value(fn: ast.FunctionDef) -> bool:
    """Whether ``fn`` is annotated to return something other than None or returns a value.

    Only ``fn``'s own ``return`` statements count: one in a function or class nested in
    it returns from that one (the compiler then refuses the nested ``def``, at its line)."""
    ann = fn.returns
    if ann is not None and not (isinstance(ann, ast.Constant) and ann.value is None):
        return True
    return any(isinstance(node, ast.Return) and node.value is not None
               and not (isinstance(node.value, ast.Constant) and node.value.value is None)
               for node in _own_nodes(fn))


#: nodes whose bodies are scopes of their own (a ``return`` in them is not the function's)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _own_nodes(fn: ast.FunctionDef):
    """The nodes of ``fn``'s body, not descending into the functions, lambdas and classes
    it defines."""
    todo = list(fn.body)
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, _SCOPES):
            continue
        todo.extend(ast.iter_child_nodes(node))


#: the namespace entry through which a cell's code hands back each function its top-level
#: ``def`` made (:func:`recording_defs`), whatever the cell binds the name to afterwards
DEFINED = "__warp_kernel_defined__"


def recording_defs(tree: ast.Module) -> ast.Module:
    """``tree`` with ``__warp_kernel_defined__[i] = NAME`` after the top-level ``def NAME``
    at ``tree.body[i]`` (located at the def's last line), so that the magic compiles the
    function each ``def`` made even when the cell then rebinds or deletes its name
    (``k = 5``, ``k = other_kernel``, ``del k``)."""
    body = []
    for i, node in enumerate(tree.body):
        body.append(node)
        if isinstance(node, ast.FunctionDef):
            record = ast.parse(f"{DEFINED}[{i}] = {node.name}").body[0]
            for sub in ast.walk(record):
                sub.lineno = sub.end_lineno = node.end_lineno
                sub.col_offset = sub.end_col_offset = 0
            body.append(record)
    return ast.Module(body=body, type_ignores=tree.type_ignores)


def rebinding_line(tree: ast.Module, after: int, name: str) -> int | None:
    """The line of the last top-level statement after ``tree.body[after]`` that binds or
    deletes ``name`` (assignment, ``del``, ``for``/``with`` target, import, later ``def``),
    or None when none does (``globals()[name] = ...``)."""
    line = None
    for stmt in tree.body[after + 1:]:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            hit = stmt.name == name
        else:
            hit = any(isinstance(n, ast.Name) and n.id == name
                      and isinstance(n.ctx, (ast.Store, ast.Del)) or
                      isinstance(n, ast.alias) and (n.asname or n.name.split(".")[0]) == name
                      for n in ast.walk(stmt))
        if hit:
            line = stmt.lineno
    return line


#: what a compound statement is called in a note (``k is defined inside an if block``)
_BLOCKS = {ast.If: "an if block", ast.For: "a for loop", ast.AsyncFor: "an async for loop",
           ast.While: "a while loop", ast.With: "a with block",
           ast.AsyncWith: "an async with block", ast.Try: "a try block"}
if hasattr(ast, "TryStar"):
    _BLOCKS[ast.TryStar] = "a try block"
if hasattr(ast, "Match"):
    _BLOCKS[ast.Match] = "a match block"


def _nested_defs(stmts, inside: str = ""):
    """``(def node, what it is inside)`` of every def below ``stmts`` that is not at the top
    level of the cell and not inside another function (whose own defs are its business)."""
    for stmt in stmts:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if inside:
                yield stmt, inside
            continue
        if isinstance(stmt, ast.ClassDef):
            yield from _nested_defs(stmt.body, f"class {stmt.name}")
            continue
        here = inside or _BLOCKS.get(type(stmt), "a block")
        for field in ("body", "orelse", "finalbody"):
            yield from _nested_defs(getattr(stmt, field, ()), here)
        for handler in getattr(stmt, "handlers", ()):
            yield from _nested_defs(handler.body, here)
        for case in getattr(stmt, "cases", ()):
            yield from _nested_defs(case.body, here)


def why_no_kernel(tree: ast.Module, ns: dict) -> list[str]:
    """Why the functions of a cell that made no kernel were not taken as kernels.

    Args:
        tree: the parsed cell (line 1 is the ``%%warp_kernel`` line).
        ns: the namespace the cell ran in.

    Returns:
        one phrase per function that is neither a kernel nor a device function:
        a top-level ``def`` with a decorator warp_lab does not know (its result is
        what that decorator returned, not a function warp_lab can compile), a
        ``def`` inside an ``if``/``for``/``while``/``with``/``try``/``match``
        block or a class (``%%warp_kernel`` compiles the cell's top-level defs),
        and a lambda bound to a name.
    """
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.decorator_list and \
                not isinstance(ns.get(node.name), (Kernel, Func)):
            unknown = [d for d in node.decorator_list if not is_kernel_decorator(d)]
            names = ", ".join("@" + _shorten(ast.unparse(d)) for d in unknown)
            out.append(f"{node.name} has decorator {names} (line {unknown[0].lineno}), "
                       "which warp_lab does not know: %%warp_kernel compiles undecorated defs "
                       "and @wl.kernel / @wl.func ones")
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            names = ", ".join(ast.unparse(t) for t in node.targets)
            out.append(f"{names} (line {node.lineno}) is a lambda: write def {names}(...): "
                       "for a kernel")
    for node, inside in _nested_defs(tree.body):
        made = ns.get(node.name)
        if isinstance(made, Kernel):  # @wl.kernel inside the block: made, but not shown
            out.append(f"{node.name} (line {node.lineno}) is a kernel defined inside {inside}, "
                       f"which %%warp_kernel does not show: it compiles the cell's top-level "
                       f"defs (wl.compile({node.name}) works)")
        elif not isinstance(made, Func):
            out.append(f"{node.name} (line {node.lineno}) is defined inside {inside}: "
                       "%%warp_kernel compiles the cell's top-level defs")
    return out


def _shorten(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe(value) -> str:
    """A short phrase for what a name holds now (``the kernel other``, ``an int``)."""
    if isinstance(value, (Kernel, Func)):
        return f"the {'kernel' if isinstance(value, Kernel) else 'device function'} " \
               f"{value.name}"
    kind = type(value).__name__
    return f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}"
