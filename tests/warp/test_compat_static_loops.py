"""``wp.static(v)`` of a constant ``range`` loop's variable reads the loop's value, not a
module global of that name (warp-lang unrolls such loops), against warp-lang's CPU device,
with the kernels of warp-lang's own ``tests/test_static.py``."""

from __future__ import annotations

import numpy as np
import pytest

import warp_lab as wl
from wpc_helpers import load_module

SOURCE = '''
import warp as wp

_global_test_idx = 999
_global_test_j = 888

@wp.kernel
def loop_var(results: wp.array[int]):
    for _global_test_idx in range(3):
        results[_global_test_idx] = wp.static(_global_test_idx)

@wp.kernel
def loop_var_in_expr(results: wp.array[int]):
    for _global_test_idx in range(3):
        results[_global_test_idx] = wp.static(_global_test_idx * 2 + 1)

@wp.kernel
def nested(results: wp.array[int]):
    for _global_test_idx in range(2):
        for _global_test_j in range(2):
            idx = _global_test_idx * 2 + _global_test_j
            results[idx] = wp.static(_global_test_idx * 10 + _global_test_j)

@wp.kernel
def nested_same_var(results: wp.array[int]):
    idx = 0
    for _global_test_idx in range(2):
        for _global_test_idx in range(3):
            pass
        results[idx] = wp.static(_global_test_idx)
        idx += 1

@wp.func
def count(values: wp.vec3):
    return wp.static(len(values))

@wp.kernel
def local_len(results: wp.array[int]):
    t = (1, 2.0, 3, 4)
    m = wp.mat22()
    results[0] = wp.static(len(t)) + wp.static(len(m)) * 10 + count(wp.vec3()) * 100
    for i in range(wp.static(len(t))):
        results[1 + i] = i

@wp.kernel
def after_loop(results: wp.array[int]):
    for _global_test_idx in range(1, 7, 2):
        results[_global_test_idx] = wp.static(_global_test_idx) + _global_test_idx
    results[0] = _global_test_idx
'''

NAMES = ["loop_var", "loop_var_in_expr", "nested", "nested_same_var", "local_len",
         "after_loop"]


def test_static_of_a_loop_variable_matches_warp_cpu(tmp_path, warp_ref):
    ref = load_module(tmp_path / "ref_static.py", SOURCE, "warp", "wpc_ref_static_loops")
    lab = load_module(tmp_path / "lab_static.py", SOURCE, "warp_lab.warp", "wpc_lab_static_loops")
    import warp_lab.warp as wp

    for name in NAMES:
        want = warp_ref.zeros(8, dtype=warp_ref.int32, device="cpu")
        warp_ref.launch(getattr(ref, name), dim=1, inputs=[want], device="cpu")
        got = wp.zeros(8, dtype=wp.int32)
        wp.launch(getattr(lab, name), dim=1, inputs=[got], device="cpu")
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=name)
    assert got.numpy().tolist() == [5, 2, 0, 6, 0, 10, 0, 0]


def test_static_of_a_local_reads_only_its_length(tmp_path):
    import warp_lab.warp as wp

    src = ("import warp as wp\n\n@wp.kernel\ndef bad(out: wp.array(dtype=int)):\n"
           "    t = (1, 2)\n    out[0] = wp.static(t[0])\n")
    lab = load_module(tmp_path / "lab_len.py", src, "warp_lab.warp", "wpc_lab_static_len")
    with pytest.raises(wl.KernelCompileError, match=r"only len\(t\) of the local 't' is known"):
        wl.compile(lab.bad)


def test_only_loops_whose_static_reads_the_variable_unroll():
    """A loop is unrolled only when a ``wp.static`` in it reads its variable (and it has
    constant bounds, no break): other loops stay loops."""
    import ast

    import warp_lab.warp as wp
    from warp_lab.compiler.frontend_parse import parse_function

    @wp.kernel
    def w(results: wp.array(dtype=wp.int32), n: int):
        for i in range(3):
            results[i] = wp.static(7)
        for j in range(2):
            results[j] = wp.static(j)
        for k in range(n):
            results[k] = 1
        for m in range(4):
            if m == 2:
                break
            results[m] = wp.static(m)

    text = ast.unparse(parse_function(w))
    assert "for i in range(3)" in text and "for j in" not in text
    assert "j = 1\n    results[j] = wp.static(1)" in text
    assert "for k in range(n)" in text and "for m in range(4)" in text
