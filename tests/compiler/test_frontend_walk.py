"""The front end's faster tree helpers give what the standard library gives.

``frontend_flow.walk`` stands in for ``list(ast.walk(tree))`` and
``frontend._load_copy`` for ``copy.deepcopy`` plus resetting every ``ctx`` to
``Load``; both are checked against those references on the source of every
corpus kernel and on a few shapes the corpus lacks.
"""

from __future__ import annotations

import ast
import copy

import pytest

from warp_lab.compiler.frontend import _load_copy
from warp_lab.compiler.frontend_flow import walk
from warp_lab.examples import CORPUS

_EXTRA = """
def f(a, b):
    x, (y, z) = a[i, j + 1].x, (b.y, -c[k])
    a[i][j].x += lambda_(1 if p else 2, *q, key=r)
    while not (u < v <= w):
        break
"""


def _trees():
    yield "extra", ast.parse(_EXTRA)
    for ex in CORPUS:
        yield ex.name, ast.parse(ex.kernel.source.text)


def _deepcopy_as_load(node):
    out = copy.deepcopy(node)
    for n in ast.walk(out):
        if hasattr(n, "ctx"):
            n.ctx = ast.Load()
    return out


def test_walk_is_ast_walk_in_order():
    checked = 0
    for name, tree in _trees():
        got, want = walk(tree), list(ast.walk(tree))
        assert len(got) == len(want), name
        assert all(g is w for g, w in zip(got, want)), name
        checked += 1
    assert checked == len(CORPUS) + 1


def test_load_copy_matches_deepcopy_for_every_store_target():
    targets = [t for _, tree in _trees() for n in ast.walk(tree)
               for t in (n.targets if isinstance(n, ast.Assign) else
                         [n.target] if isinstance(n, (ast.AugAssign, ast.AnnAssign)) else [])
               if not isinstance(t, ast.Name)]
    assert len(targets) > 20  # subscripts, attributes and tuples of the corpus
    for t in targets:
        before = ast.dump(t, include_attributes=True)
        got = _load_copy(t)
        assert ast.dump(got, include_attributes=True) == \
            ast.dump(_deepcopy_as_load(t), include_attributes=True)
        assert ast.dump(t, include_attributes=True) == before  # the target is untouched
        originals = {id(n) for n in ast.walk(t)}
        assert not any(id(n) in originals for n in ast.walk(got)
                       if not isinstance(n, ast.expr_context)), "shares a node with the target"
        assert all(isinstance(n.ctx, ast.Load) for n in ast.walk(got) if hasattr(n, "ctx"))


@pytest.mark.parametrize("src", ["a[i] = 1", "a.x = 1", "a, b[0] = t"])
def test_load_copy_keeps_positions(src):
    target = ast.parse(src).body[0].targets[0]
    got = _load_copy(target)
    assert (got.lineno, got.col_offset, got.end_col_offset) == \
        (target.lineno, target.col_offset, target.end_col_offset)
