"""Compile budgets: how much code unrolling and inlining may make of a kernel.

``for x in <tuple>`` emits its body once per element (:mod:`~warp_lab.compiler.
lower_unroll`), and LLVM inlines device functions into their callers; both multiply
code, and LLVM's time and memory grow faster than the code does (a 16,000-element tuple
loop of one line took 202 s and 1 GB to compile, and a chain of 14 device functions each
calling the next twice 4 s, doubling with every level). Nothing in the kernel's text
says it is that big, so the compile is bounded up front instead of left to run:

- **Unrolling** is counted in *operations*: the AST nodes the lowering emits (a
  statement, an expression, a name; the contexts and operator tokens not), an unrolled
  loop counting ``copies × body`` and nested unrolled loops multiplying, a call of a
  device function counting what inlining it adds (at most :data:`MAX_INLINED_OPS`).
  More than :data:`MAX_UNROLLED_OPS` in one kernel is a :class:`KernelCompileError` at the
  unrolled loop that makes most of them, whose hint says what to write instead: a
  ``range`` loop, which LLVM keeps a loop (measured: at the limit a compile takes
  about 2 s on one core; ``python -m benchmarks.stress``).
- **Inlining** (:func:`inline_ops`): the lowering forces inlining (``alwaysinline``) of
  a device function only when everything that inlines into it stays within
  :data:`MAX_INLINED_OPS` operations; a bigger one is left to LLVM's inliner, whose cost
  model stops at its threshold. That is not an error: the kernel is right and compiles
  (the function is then called rather than copied, and may read a read-only array with
  ``ld.global`` rather than ``ld.global.nc``).
"""

from __future__ import annotations

import ast

from warp_lab.compiler.frontend_parse import compile_error

__all__ = ["MAX_UNROLLED_OPS", "MAX_INLINED_OPS", "check_unroll_budget", "inline_ops"]

#: operations (AST nodes, see the module docstring) unrolled tuple loops may add to one
#: kernel: 2,000 copies of ``s += a[i] * float(x)`` compile in ~3 s on one core
MAX_UNROLLED_OPS = 20_000
#: operations a device function may have with everything inlined into it for the lowering
#: to force its inlining (``alwaysinline``), and the most a call counts for in an unrolled
#: loop's body
MAX_INLINED_OPS = 4_000

#: AST node classes that are tokens of their parent, not code of their own
_TOKENS = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


def _callee(node):
    """The :class:`~warp_lab.compiler.typed_ast.TypedFunction` a typed call calls, or None."""
    target = getattr(node, "wl_call", None)
    return target.func if target is not None and target.kind == "func" else None


class _Sizer:
    """Operation counts of typed functions, each function walked once (iteratively, so a
    long expression chain cannot exhaust Python's stack)."""

    def __init__(self):
        self.of_function: dict[int, int] = {}   # id(TypedFunction) -> ops, calls inlined
        self.loops: list = []                   # (ops, count, body ops, node, function)

    def function(self, tf) -> int:
        key = id(tf)
        if key not in self.of_function:
            self.of_function[key] = 0               # (no recursion: the front end refuses it)
            self.of_function[key] = self.block(tf.tree.body, tf)
        return self.of_function[key]

    def block(self, nodes, tf) -> int:
        return sum(self.node(n, tf) for n in nodes)

    def node(self, root, tf) -> int:
        total = 0
        stack = [root]
        while stack:
            node = stack.pop()
            if isinstance(node, _TOKENS):
                continue
            total += 1
            plan = getattr(node, "wl_unroll", None)
            if plan is not None and isinstance(node, ast.For):
                body = self.block(node.body, tf)
                ops = plan.count * body
                self.loops.append((ops, plan.count, body, node, tf))
                total += ops
                stack.extend(plan.sources)
                stack.extend(node.orelse)
                continue
            callee = _callee(node)
            if callee is not None:
                total += min(self.function(callee), MAX_INLINED_OPS)
            stack.extend(ast.iter_child_nodes(node))
        return total


def check_unroll_budget(tk) -> None:
    """Refuse a kernel whose unrolled tuple loops make more than :data:`MAX_UNROLLED_OPS`
    operations (see the module docstring).

    Args:
        tk: the :class:`~warp_lab.compiler.typed_ast.TypedKernel` (typed: its tuple loops
            carry ``wl_unroll``, its calls ``wl_call``).

    Raises:
        KernelCompileError: at the unrolled loop that makes the most operations (in the
            kernel or the device function it is in), with the counts and a hint.
    """
    sizer = _Sizer()
    sizer.function(tk.kernel)
    for tf in tk.funcs:
        sizer.function(tf)
    # what unrolling adds: each loop's copies beyond the first, times the calls of the
    # function it is in are not counted (each function is lowered once, LLVM inlines)
    added = sum(ops - body for ops, _, body, _, _ in sizer.loops)
    worst = max(sizer.loops, key=lambda loop: loop[0], default=None)
    if worst is None or (added <= MAX_UNROLLED_OPS and worst[0] <= MAX_UNROLLED_OPS):
        return
    ops, count, body, node, tf = worst
    alone = ops > MAX_UNROLLED_OPS
    raise compile_error(
        tf.source, node,
        f"this loop over a tuple of {count:,} elements unrolls into {count:,} copies of its "
        f"body ({body:,} operations each, {ops:,} in all"
        + ("" if alone else f"; the kernel's unrolled loops make {added:,}")
        + f"): more than the {MAX_UNROLLED_OPS:,} operations warp_lab unrolls in one kernel "
        "(a compile's time and memory grow faster than the copies)",
        "write a range loop, which stays a loop: put the values in an array argument "
        "(vals = np.array(t, dtype=np.float32)) and loop "
        "`for k in range(vals.shape[0]): x = vals[k]`; keep tuple loops for a few "
        "elements (shuffle offsets, a stencil's taps)")


def inline_ops(tf, sizes: dict) -> int:
    """The operations of device function ``tf`` with every device function it calls
    inlined (each call site a copy), memoised in ``sizes`` (``id(tf)`` → ops).

    The lowering forces inlining of ``tf`` only when this is at most
    :data:`MAX_INLINED_OPS` (see the module docstring).
    """
    key = id(tf)
    if key not in sizes:
        sizes[key] = 0          # (no recursion: the front end refuses it)
        sizes[key] = sum(_inlined(s, sizes) for s in tf.tree.body)
    return sizes[key]


def _inlined(root, sizes) -> int:
    """:func:`inline_ops`'s count for the statement or expression ``root``."""
    total = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, _TOKENS):
            continue
        total += 1
        plan = getattr(node, "wl_unroll", None)
        if plan is not None and isinstance(node, ast.For):
            stack.extend(plan.sources)
            stack.extend(node.orelse)
            total += plan.count * sum(_inlined(s, sizes) for s in node.body)
            continue
        callee = _callee(node)
        if callee is not None:
            total += inline_ops(callee, sizes)
        stack.extend(ast.iter_child_nodes(node))
    return total
