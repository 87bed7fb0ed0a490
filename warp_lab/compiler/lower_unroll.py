"""Lowering of ``for x in <tuple>`` (typed by :mod:`~warp_lab.compiler.frontend_unroll`).

The tuple (each tuple of ``zip``) is evaluated once, then the body is emitted
once per element as a chain of blocks::

    <tuple evaluated>  x = t[0]; body copy 0  ->  tuple_for.1: x = t[1]; body copy 1
      -> ... -> tuple_for.end

Inside copy ``k``, ``continue`` branches to copy ``k + 1`` (or the end after the
last) and ``break`` to ``tuple_for.end``, so both keep Python's meaning, and the
loop variable keeps the last element stored into it. There is no back edge: the
result is straight-line code (with the body's own branches), which LLVM
simplifies with the elements as constants, as nvcc's ``#pragma unroll`` does.
"""

from __future__ import annotations

from llvmlite import ir

from warp_lab.compiler.lower_expr import I32

__all__ = ["lower_unrolled_for"]


def lower_unrolled_for(lw, node) -> None:
    """Emit the unrolled loop ``node`` (its ``wl_unroll``) at ``lw``'s insertion point.

    Args:
        lw: the :class:`~warp_lab.compiler.lower.FunctionLowerer`.
        node: the ``ast.For`` whose ``wl_unroll`` is a
            :class:`~warp_lab.compiler.frontend_unroll.Unroll`.
    """
    plan = node.wl_unroll
    values = [lw.expr(s) for s in plan.sources]
    end_bb = lw.fn.append_basic_block("tuple_for.end")
    for k in range(plan.count):
        parts = [lw.convert(v[k], s.wl_ty.elems[k], t)
                 for v, s, t in zip(values, plan.sources, plan.parts)]
        if plan.kind == "enumerate":
            elem = (ir.Constant(I32, k), parts[0])
        elif plan.kind == "zip":
            elem = tuple(parts)
        else:
            elem = parts[0]
        lw.store(node.target, elem, plan.elem)
        nxt = end_bb if k == plan.count - 1 else lw.fn.append_basic_block(f"tuple_for.{k + 1}")
        lw.loop_body(node.body, nxt, end_bb)
        lw.b.position_at_end(nxt)
