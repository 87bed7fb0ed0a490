"""Compile budgets (compiler/budget.py): an unrolled tuple loop that would make a huge
kernel is a located error saying what to write instead, and a chain of inlined device
functions no longer doubles LLVM's work per level.

Without the budgets a 16,000-element tuple loop of one line compiled for 202 s in 1 GB,
and a chain of 14 device functions each calling the next twice (with a read-only array,
so each call was forced inline) took 4 s to optimise, doubling per level.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.compiler.artifact import CompileOptions
from warp_lab.compiler.frontend import make_typed_ast

from test_diagnostics import cell_kernel


def _typing_error(kernel):
    with pytest.raises(wl.KernelCompileError) as info:
        make_typed_ast(kernel, CompileOptions())
    return info.value


def _tuple_kernel(n: int, body: str = "s += a[i] * float(x)"):
    return cell_kernel(f"""
        T = tuple(range({n}))

        @wl.kernel
        def k(a: wl.array(dtype=wl.float32)):
            i = wl.tid()
            s = 0.0
            for x in T:
                {body}
            a[i] = s
    """)


def test_a_tuple_loop_past_the_budget_is_an_error_at_the_loop_with_a_range_hint():
    # 2,300 copies of a 9-operation body: 20,700 > 20,000 (it compiled, in ~6 s; 16,000
    # copies took 202 s)
    err = _typing_error(_tuple_kernel(2_300))
    assert (err.line, err.col) == (7, 5) and err.source_line.strip() == "for x in T:"
    assert "2,300 copies of its body (9 operations each, 20,700 in all)" in err.message
    assert "20,000" in err.message
    assert "range" in err.hint and "vals[k]" in err.hint


def test_the_error_comes_before_lowering_in_a_blink_for_a_huge_tuple():
    t0 = time.perf_counter()
    err = _typing_error(_tuple_kernel(20_000))
    assert "20,000 copies" in err.message
    assert time.perf_counter() - t0 < 5   # typing the tuple, then the count: no LLVM


def test_nested_tuple_loops_multiply_and_the_outer_loop_is_named():
    kernel = cell_kernel("""
        T = tuple(range(200))

        @wl.kernel
        def k(a: wl.array(dtype=wl.float32)):
            i = wl.tid()
            s = 0.0
            for x in T:
                for y in T:
                    s += float(x * y)
            a[i] = s
    """)
    err = _typing_error(kernel)
    assert err.line == 7 and "200 copies of its body" in err.message   # the outer loop


def test_many_loops_each_within_the_budget_add_up():
    loops = "\n".join(f"    for x{j} in T:\n        s += a[i] * float(x{j})" for j in range(12))
    kernel = cell_kernel("T = tuple(range(200))\n\n@wl.kernel\n"
                         "def k(a: wl.array(dtype=wl.float32)):\n    i = wl.tid()\n"
                         f"    s = 0.0\n{loops}\n    a[i] = s\n")
    err = _typing_error(kernel)   # 12 loops x 200 copies x 9 operations
    assert "the kernel's unrolled loops make" in err.message and err.line == 7


def test_a_tuple_loop_in_a_device_function_is_named_in_the_function():
    kernel = cell_kernel("""
        T = tuple(range(5000))

        @wl.func
        def total(a: wl.array(dtype=wl.float32), i: int):
            s = 0.0
            for x in T:
                s += a[i] * float(x)
            return s

        @wl.kernel
        def k(a: wl.array(dtype=wl.float32)):
            i = wl.tid()
            a[i] = total(a, i)
    """)
    err = _typing_error(kernel)
    assert err.line == 6 and err.source_line.strip() == "for x in T:"


def test_small_tuple_loops_and_calls_in_them_are_within_the_budget():
    kernel = cell_kernel("""
        @wl.func
        def tap(a: wl.array(dtype=wl.float32), j: int):
            return a[j] * 0.5

        @wl.kernel
        def k(a: wl.array(dtype=wl.float32), b: wl.array(dtype=wl.float32)):
            i = wl.tid()
            s = 0.0
            for off in (16, 8, 4, 2, 1):
                s += tap(a, (i + off) % 64)
            b[i] = s
    """)
    a = np.arange(64, dtype=np.float32)
    b = np.zeros(64, np.float32)
    wl.launch(kernel, dim=64, inputs=[a, b], device="sim")
    want = sum(0.5 * a[(np.arange(64) + off) % 64] for off in (16, 8, 4, 2, 1))
    np.testing.assert_allclose(b, want)


def _chain(depth: int):
    """f_depth calls f_{depth-1} twice, ..., f0 reads the read-only array x."""
    lines = ["@wl.func", "def f0(x: wl.array(dtype=wl.float32), v: float):",
             "    return v * 1.5 + x[0]"]
    for j in range(1, depth + 1):
        lines += ["@wl.func", f"def f{j}(x: wl.array(dtype=wl.float32), v: float):",
                  f"    return f{j - 1}(x, v) + f{j - 1}(x, v * 0.5)"]
    lines += ["@wl.kernel", "def k(a: wl.array(dtype=wl.float32), x: wl.array(dtype=wl.float32)):",
              "    i = wl.tid()", f"    a[i] = f{depth}(x, a[i])"]
    return cell_kernel("\n".join(lines) + "\n")


def _python_chain(depth: int, x0: float, v: float) -> float:
    if depth == 0:
        return np.float32(v) * np.float32(1.5) + np.float32(x0)
    return _python_chain(depth - 1, x0, v) + _python_chain(depth - 1, x0, np.float32(v) * 0.5)


def test_a_chain_of_inlined_functions_is_forced_inline_only_within_the_budget():
    kernel = _chain(20)
    ck = wl.compile(kernel, arch="sm_90", cache=False, sass=False)
    forced = {line.split("@")[1].split("(")[0] for line in ck.llvm_ir.splitlines()
              if line.startswith("define") and "alwaysinline" in line}
    # every f_j with 2**j copies of f0 inlined within MAX_INLINED_OPS, none above
    assert forced and all("__f" in name for name in forced)
    depths = sorted(int(name.split("__f")[1].split("_")[0]) for name in forced)
    assert depths == list(range(len(depths))) and len(depths) < 21
    assert ck.timings["optimize"] < 10   # was minutes: 2**20 copies of f0


def test_a_chain_of_inlined_functions_computes_what_python_does():
    kernel = _chain(12)
    a = np.linspace(0, 1, 64).astype(np.float32)
    x = np.array([0.25], np.float32)
    want = np.array([_python_chain(12, x[0], v) for v in a], np.float32)
    wl.launch(kernel, dim=64, inputs=[a, x], device="sim")
    np.testing.assert_allclose(a, want, rtol=1e-5)


def test_the_hints_range_loop_over_an_array_compiles_and_computes_the_same():
    kernel = cell_kernel("""
        @wl.kernel
        def k(a: wl.array(dtype=wl.float32), vals: wl.array(dtype=wl.float32)):
            i = wl.tid()
            s = 0.0
            for k in range(vals.shape[0]):
                x = vals[k]
                s += a[i] * x
            a[i] = s
    """)
    vals = np.arange(3_000, dtype=np.float32)   # past the budget as a tuple loop
    a = np.linspace(0, 1, 32).astype(np.float32)
    want = a * vals.sum(dtype=np.float64)
    ck = wl.compile(kernel, arch="sm_90", cache=False, sass=False)
    assert ck.timings["optimize"] < 5
    wl.launch(ck, dim=32, inputs=[a, vals], device="sim")
    np.testing.assert_allclose(a, want, rtol=1e-3)
