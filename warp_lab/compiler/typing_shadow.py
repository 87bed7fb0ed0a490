"""Where a Python builtin a kernel may use (``range``, ``min``, ``print``...) is shadowed.

A kernel that binds ``range = 3``, takes a parameter named ``range``, or runs in
a module or notebook where ``range = 3`` was set at top level does not see
Python's ``range`` there, and ``for i in range(2)`` cannot be typed. The
diagnostics say so and name the binding (Python's own scoping: local, then
enclosing function, then module globals, then builtins; Python Language
Reference, "Resolution of names").
"""

from __future__ import annotations

import ast
import builtins as _py
import linecache

from warp_lab.errors import source_label
from warp_lab.lang import builtins as B
from warp_lab.lang.kernel import is_cell_file

__all__ = ["shadowing"]


def _top_level_binding(filename: str, name: str) -> int:
    """The line of the last top-level statement of ``filename`` that binds ``name`` (0: none).

    The text comes from :mod:`linecache` (a file, or a notebook cell IPython or
    the ``%%warp_kernel`` magic registered); a text that does not parse gives 0.
    """
    text = "".join(linecache.getlines(filename))
    if not text:
        return 0
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return 0
    found = 0
    for stmt in module.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if stmt.name == name:
                found = stmt.lineno
            continue
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name.split(".")[0]) == name for a in stmt.names):
                found = stmt.lineno
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) \
                    and node.id == name:
                found = node.lineno
                break
    return found


def _first_store(tree, name: str):
    """The first node of ``tree`` (by line, column) that stores into ``name``, or None."""
    stores = [n for n in ast.walk(tree)
              if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == name]
    return min(stores, key=lambda n: (n.lineno, n.col_offset), default=None)


def shadowing(typer, name: str):
    """What hides Python's builtin ``name`` from the function ``typer`` types.

    Args:
        typer: the :class:`~warp_lab.compiler.frontend.FunctionTyper` of the function.
        name: a name the function uses.

    Returns:
        ``(what, hint)``: ``what`` names the binding and its line
        (``"the kernel variable 'range' (assigned on line 3)"``), ``hint`` says
        what to do; or None when ``name`` is not one of the Python builtins
        kernels may use (:data:`warp_lab.lang.builtins.PYTHON_BUILTINS`) or is
        not rebound.
    """
    if name not in B.PYTHON_BUILTINS:
        return None
    src = typer.source
    fn = typer.fn_obj.name
    rename = f"{name}_"
    if name in typer.scope or name in typer.assigned:
        param = next((a for a in typer.tree.args.args if a.arg == name), None)
        if param is not None:
            line = src.first_line + param.lineno - 1
            return (f"the parameter {name!r} of {fn}() (line {line})",
                    f"rename the parameter (e.g. {rename}) so that {name}() is "
                    f"Python's {name} again")
        store = _first_store(typer.tree, name)
        at = f" (assigned on line {src.first_line + store.lineno - 1})" if store else ""
        return (f"the variable {name!r} of {fn}(){at}",
                f"rename the variable (e.g. {rename} = ...) so that {name}() is "
                f"Python's {name} again")
    closure = typer.fn_obj.closure
    if name in closure:
        return (f"{name!r}, a variable of the function enclosing {fn}() "
                f"(= {_short(closure[name])})",
                f"rename that variable (e.g. {rename}) so that {name}() is Python's {name}")
    module = typer.fn_obj.globals
    if name in module and module[name] is not getattr(_py, name):
        value = _short(module[name])
        filename = src.filename
        line = _top_level_binding(filename, name)
        cell = is_cell_file(filename)
        where = "a notebook global" if cell else \
            f"a global of module {module.get('__name__', '?')}"
        at = f", set on line {line} of {source_label(filename)}" if line else ""
        undo = f"run `del {name}` in a cell" if cell else f"rename the module's {name}"
        return (f"{name!r}, {where} (= {value}{at})",
                f"{undo} (or rename it, e.g. {rename}) so that {name}() in kernels is "
                f"Python's {name} again")
    return None


def _short(value, limit: int = 40) -> str:
    """``repr(value)``, cut to ``limit`` characters."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a user object's __repr__ may fail
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
