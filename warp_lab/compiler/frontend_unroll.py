"""Typing of ``for x in <tuple>``: a loop unrolled at compile time, one body copy per element.

``for off in (16, 8, 4, 2, 1):`` (a literal tuple, a tuple-valued local such as
``a.shape`` or ``wl.tid()`` of a 2-D launch, or a module-level constant tuple),
``for k, v in enumerate(t):`` and ``for a, b in zip(t, u):`` are accepted. The
tuple is evaluated once, before the first iteration, as Python does; lowering
(:mod:`~warp_lab.compiler.lower_unroll`) then emits the body once per element,
stores the element into the loop variable at the top of each copy, and chains the
copies: ``continue`` jumps to the next copy, ``break`` past the last.

The body is typed once, so the loop variable has one type for every element (the
typer's scope is flat: one type per name). The elements' types are joined as
literals are (``(n, 1)`` with ``n: int64`` gives int64; ``(1, 2**40)`` int64), but
never across kinds (an int and a float, Python's ``for x in (1, 2.5)``, would be an
int in one iteration and a float in the next): that is a located error at the
element, as is a tuple of vectors of different types. The loop variable is a
run-time variable, so a body that needs a compile-time constant from it (a
``wl.shared_array`` shape) is refused as it would be in a ``range`` loop; after
unrolling, LLVM propagates the constants (``shfl.sync.down.b32 ..., 16, ...``).
After the loop the variable holds the last element it was given (Python's rule).
"""

from __future__ import annotations

import ast
import builtins as _py
from dataclasses import dataclass

from warp_lab.compiler.typed_ast import NO_CONST, const_of
from warp_lab.compiler.typing_rules import implicit_ok, promote, type_name
from warp_lab.lang.types import Scalar, TupleType, Type, int32

__all__ = ["Unroll", "type_unrolled_for", "iterates_helper"]

#: Python's builtins a tuple loop may iterate through (``enumerate(t)``, ``zip(t, u)``)
_HELPERS = ("enumerate", "zip")


@dataclass
class Unroll:
    """What lowering needs for one ``for ... in <tuple>`` (``node.wl_unroll``).

    Attributes:
        kind: ``"tuple"``, ``"enumerate"`` or ``"zip"``.
        sources: the tuple expression nodes (one; several for ``zip``), typed.
        parts: per source, the one type its elements are converted to.
        elem: the type of one element as the loop target receives it (``parts[0]``
            for a tuple; ``(int32, parts[0])`` for enumerate; the tuple of ``parts``
            for zip).
        count: the number of iterations (body copies).
    """

    kind: str
    sources: tuple
    parts: tuple
    elem: Type
    count: int


def iterates_helper(typer, it) -> str | None:
    """``"enumerate"``/``"zip"`` when ``it`` calls Python's own ``enumerate``/``zip``
    (not a local or global that shadows it), else None."""
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
            and it.func.id in _HELPERS):
        return None
    name = it.func.id
    if name in typer.scope or name in typer.assigned:
        return None
    if name in typer.namespace and typer.namespace[name] is not getattr(_py, name):
        return None
    return name


def _kind(t: Scalar) -> str:
    return "int" if t.is_int else t.kind


def _items(src) -> list:
    """``(type, weak constant or NO_CONST, node)`` per element of the typed tuple ``src``."""
    ty = src.wl_ty
    if isinstance(src, ast.Tuple):  # a literal: each element knows its own weakness
        return [(e.wl_ty, const_of(e) if getattr(e, "wl_weak", False) else NO_CONST, e)
                for e in src.elts]
    c = const_of(src) if getattr(src, "wl_weak", False) else NO_CONST
    return [(t, NO_CONST if c is NO_CONST else c[k], src) for k, t in enumerate(ty.elems)]


def _join(typer, items) -> Type:
    """The one type of the loop variable for elements ``items`` (see the module docstring).

    Raises:
        KernelCompileError: at the first element that does not fit the others' type.
    """
    tys = [t for t, _, _ in items]
    if all(isinstance(t, TupleType) for t in tys):
        n = len(tys[0].elems)
        for t, _, nd in items:
            if len(t.elems) != n:
                raise typer.error(f"the tuple's elements are tuples of {n} and of "
                                  f"{len(t.elems)} values; a loop variable has one type", nd)
        return TupleType(tuple(
            _join(typer, [(t.elems[k], NO_CONST if c is NO_CONST else c[k], nd)
                          for t, c, nd in items]) for k in range(n)))
    if all(isinstance(t, Scalar) for t in tys):
        for t, _, nd in items:
            if _kind(t) != _kind(tys[0]):  # Python's x would change type between iterations
                raise typer.error(
                    f"this element is {type_name(t)} but the first is {type_name(tys[0])}: "
                    "an unrolled loop's variable has one type", nd,
                    "give every element one type, e.g. write 1.0 for a float, or convert "
                    "with wl.float32(...) / wl.int32(...)")
        strong = [t for t, c, _ in items if c is NO_CONST] or tys
        ty = strong[0]
        for t in strong[1:]:
            ty = promote(ty, t)
        for t, c, nd in items:
            if not implicit_ok(t, ty, None if c is NO_CONST else c):
                raise typer.error(
                    f"this element is {type_name(t)}, which the loop variable's type "
                    f"{type_name(ty)} (from the other elements) cannot hold without a cast",
                    nd, "convert the elements to one type, e.g. wl.int64(...)")
        return ty
    for t, _, nd in items:
        if t != tys[0]:
            raise typer.error(f"this element is {type_name(t)} but another is "
                              f"{type_name(tys[0])}: an unrolled loop's variable has one type",
                              nd)
    return tys[0]


def _tuple_source(typer, node, what: str):
    """Type ``node`` and require a tuple (what the loop or helper iterates).

    While ``node`` is typed, ``typer.iterated`` is ``node``, so that a literal tuple of
    arrays gets a hint for loops (``ExprTyper.visit_Tuple``).
    """
    before, typer.iterated = typer.iterated, node
    try:
        typer.visit(node)
    finally:
        typer.iterated = before
    ty = node.wl_ty
    if not isinstance(ty, TupleType):
        return None
    if not ty.elems:
        raise typer.error(f"{what} is an empty tuple: the loop body would never run", node,
                          "remove the loop")
    return ty


def type_unrolled_for(typer, node) -> bool:
    """Type ``for <target> in <tuple>`` (or ``enumerate``/``zip`` of tuples) and stamp
    ``node.wl_unroll`` (an :class:`Unroll`); the body is typed once.

    Returns:
        False when ``node.iter`` is not a tuple (nor enumerate/zip of tuples): the
        caller reports the loop. Its expression has been typed then.

    Raises:
        KernelCompileError: an empty tuple, elements of different kinds, a target that
            is not a name or a tuple of names, or a misused enumerate/zip.
    """
    it = node.iter
    helper = iterates_helper(typer, it)
    if helper is not None:
        typer.check_call_unpacking(it)
        if it.keywords or not it.args or (helper == "enumerate" and len(it.args) != 1):
            raise typer.error(f"{helper}() in a kernel takes "
                              f"{'one tuple' if helper == 'enumerate' else 'tuples'}, "
                              "positionally", it)
        sources = list(it.args)
        for s in sources:
            if _tuple_source(typer, s, f"the argument of {helper}()") is None:
                raise typer.error(f"{helper}() in a kernel iterates tuples, not "
                                  f"{type_name(s.wl_ty)}", s,
                                  "loop over range(n) and index the array instead")
    else:
        if _tuple_source(typer, it, "the loop's iterable") is None:
            return False
        sources = [it]
    parts = tuple(_join(typer, _items(s)) for s in sources)
    count = min(len(s.wl_ty.elems) for s in sources)
    if helper == "enumerate":
        elem = TupleType((int32, parts[0]))
    elif helper == "zip":
        elem = TupleType(parts)
    else:
        elem = parts[0]
    _check_target(typer, node.target, elem)
    stand_in = ast.copy_location(ast.Name(id="_", ctx=ast.Load()), node.target)
    stand_in.wl_ty, stand_in.wl_weak = elem, False
    typer.assign(node.target, stand_in)
    node.wl_unroll = Unroll(helper or "tuple", tuple(sources), parts, elem, count)
    typer.loop_depth += 1
    typer.body(node.body)
    typer.loop_depth -= 1
    return True


def _check_target(typer, target, elem):
    """The loop target: a plain name, or a tuple of them that unpacks ``elem``; a name
    that already holds a value must accept ``elem``'s type without a cast."""
    if isinstance(target, ast.Name):
        have = typer.scope.get(target.id)
        if have is not None and not implicit_ok(elem, have):
            raise typer.error(f"loop variable {target.id!r} has type {type_name(have)} but the "
                              f"tuple yields {type_name(elem)}", target,
                              "use a new name for the loop variable")
        return
    if isinstance(target, ast.Tuple) and isinstance(elem, TupleType) \
            and len(target.elts) == len(elem.elems):
        for t, e in zip(target.elts, elem.elems):
            _check_target(typer, t, e)
        return
    if isinstance(target, ast.Tuple):
        n = len(elem.elems) if isinstance(elem, TupleType) else 1
        raise typer.error(f"cannot unpack {n} value{'s' * (n != 1)} into "
                          f"{len(target.elts)} names", target)
    raise typer.error("the loop variable must be a plain name (or names: for k, v in ...)",
                      target)
