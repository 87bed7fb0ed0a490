"""``for x in <tuple>``: unrolled at compile time, checked against Python and numpy.

A ``@wl.func`` runs as plain Python on the host, so the same function body gives the
reference: the kernel calls it on the simulator, the test calls it in Python, and the
results must be equal (``break``, ``continue``, the loop variable after the loop,
``enumerate``, ``zip``). The warp reduction is checked against numpy's emulation of
``shfl.sync.down`` (a lane past the warp's end reads its own value, PTX ISA "shfl.sync").
"""

from __future__ import annotations

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.compiler.frontend import make_typed_ast

from test_diagnostics import cell_kernel, diagnose

OFFSETS = (16, 8, 4, 2, 1)
WEIGHTS = (0.5, 0.25, 2.0)


@wl.kernel
def _warp_sum(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    i = wl.tid()
    v = x[i]
    for off in (16, 8, 4, 2, 1):
        v += wl.shfl_down_sync(0xFFFFFFFF, v, off)
    out[i] = v


def _shfl_down_sum(x):
    v = x.reshape(-1, 32).copy()
    for off in OFFSETS:
        src = np.arange(32) + off
        v = v + np.where(src < 32, v[:, np.minimum(src, 31)], v)
    return v.reshape(-1)


@pytest.mark.parametrize("opt", [0, 3])
def test_warp_reduction_with_a_tuple_of_offsets(opt):
    x = np.random.default_rng(3).standard_normal(128).astype(np.float32)
    out = np.zeros_like(x)
    res = wl.launch(_warp_sum, dim=128, inputs=[x, out], device="sim", opt=opt)
    assert res.findings == []
    np.testing.assert_array_equal(out, _shfl_down_sum(x))
    np.testing.assert_allclose(out[::32], x.reshape(-1, 32).sum(axis=1), rtol=1e-5)


def test_offsets_are_immediates_in_the_ptx():
    ck = wl.compile(_warp_sum, sass=False, cache=False)
    shfl = [ln.split()[-3] for ln in ck.ptx.splitlines() if "shfl.sync.down" in ln]
    assert shfl == ["16,", "8,", "4,", "2,", "1,"]
    assert ck.cubin


@wl.func
def loops(n: int, f: float):
    """Every form, with break/continue; returns what Python's own run returns."""
    s = 0
    for o in OFFSETS:                       # a module-level constant tuple
        if o == n:
            continue
        if o < n:
            break
        s += o
    last = o                                # the loop variable keeps its last value
    acc = 0.0
    for k, w in enumerate(WEIGHTS):
        if k == 2 and n > 8:
            break
        acc += w * f
    for a, b in zip((1, 2, 3), (n, 2 * n)):   # zip stops at the shorter tuple
        s += a * b
    t = (n, n + 1, n * 3)                     # a tuple-valued local
    m = 0
    for e in t:
        for d in (1, -1):                     # nested
            m = m * 3 + e * d
    for pair in ((1, 2), (3, 4)):             # tuples of tuples
        x, y = pair
        m += x * y
    return s, last, acc, m


@wl.kernel
def _loops_kernel(ns: wl.array(dtype=wl.int32), fs: wl.array(dtype=wl.float32),
                  out: wl.array2d(dtype=wl.int32), facc: wl.array(dtype=wl.float32)):
    i = wl.tid()
    s, last, acc, m = loops(ns[i], fs[i])
    out[0, i] = s
    out[1, i] = last
    out[2, i] = m
    facc[i] = acc


@pytest.mark.parametrize("opts", [{}, {"opt": 0}, {"debug": True}])
def test_break_continue_and_last_value_match_python(opts):
    ns = np.array([0, 1, 2, 3, 4, 5, 8, 9, 16, 17, -3], np.int32)
    fs = np.linspace(-2, 2, len(ns)).astype(np.float32)
    out, facc = np.zeros((3, len(ns)), np.int32), np.zeros(len(ns), np.float32)
    res = wl.launch(_loops_kernel, dim=len(ns), inputs=[ns, fs, out, facc], device="sim",
                    **opts)
    assert res.findings == []
    for j, (n, f) in enumerate(zip(ns.tolist(), fs.tolist())):
        s, last, acc, m = loops(n, np.float32(f))     # plain Python on the host
        assert (out[0, j], out[1, j], out[2, j]) == (s, last, m), n
        assert facc[j] == np.float32(acc), n


def test_shape_and_tid_tuples_iterate():
    k = cell_kernel("""
        @wl.kernel
        def k(a: wl.array2d(dtype=wl.int32)):
            i, j = wl.tid()
            t = 0
            for e in a.shape:
                t = t * 100 + e
            for c in wl.tid():
                t = t * 100 + c
            a[i, j] = t
    """)
    a = np.zeros((3, 5), np.int32)
    wl.launch(k, dim=(3, 5), inputs=[a], device="sim")
    i, j = np.indices((3, 5))
    np.testing.assert_array_equal(a, ((3 * 100 + 5) * 100 + i) * 100 + j)


def test_elements_join_like_literals():
    k = cell_kernel("""
        @wl.kernel
        def k(o: wl.array(dtype=wl.int64), n: wl.int64):
            big = wl.int64(0)
            for v in (n, 1, 2**40):
                big += v
            w: wl.int64 = 0
            for v2 in (1, 2):           # weak literals into an existing int64
                w = v2
            o[0] = big + w
    """)
    tk = make_typed_ast(k)
    assert tk.kernel.locals["v"].name == "int64" and tk.kernel.locals["v2"].name == "int32"
    o = np.zeros(1, np.int64)
    wl.launch(k, dim=1, inputs=[o, 5], device="sim")
    assert o[0] == 5 + 1 + 2**40 + 2


def test_assigned_in_the_body_is_assigned_after_the_loop():
    # the tuple is never empty, so the body runs at least once (as Python knows too)
    k = cell_kernel("""
        @wl.kernel
        def k(o: wl.array(dtype=wl.int32)):
            for v in (3, 4):
                w = v * 2
            o[0] = w + v
    """)
    o = np.zeros(1, np.int32)
    wl.launch(k, dim=1, inputs=[o], device="sim")
    assert o[0] == 8 + 4


@pytest.mark.parametrize("body, at, message, hint", [
    ("for v in (1, 2.5):\n        o[0] = v", "2.5", "this element is float32 but the first "
     "is int32", "write 1.0"),
    ("for v in (n, wl.uint32(1)):\n        o[0] = v", "n,", "this element is int32, which the "
     "loop variable's type uint32", ""),
    ("for v in ():\n        o[0] = 1.0", "()", "is an empty tuple", "remove the loop"),
    ("for v in o:\n        pass", "o:", "for loops must iterate over range(...) or a tuple, "
     "not global 1-D array", "index the array"),
    ("for v in wl.vec3(1.0):\n        pass", "wl.vec3", "or a tuple, not vec3", "iterate a tuple"),
    ("for v in enumerate(o):\n        pass", "o)", "enumerate() in a kernel iterates tuples, "
     "not global 1-D array", "range(n)"),
    ("for v in enumerate((1, 2), 1):\n        pass", "enumerate", "takes one tuple", ""),
    ("for o[0] in (1.0, 2.0):\n        pass", "o[0]", "the loop variable must be a plain name",
     ""),
    ("for a, b in (1, 2):\n        pass", "a, b", "cannot unpack 1 value into 2 names", ""),
    ("m = wl.int8(1)\n    for m in (n, 2):\n        pass", "m in", "loop variable 'm' has type "
     "int8 but the tuple yields int32", "new name"),
    ("for v in (wl.vec2(1.0), wl.vec3(1.0)):\n        pass", "wl.vec3", "this element is vec3 "
     "but another is vec2", ""),
    # a tuple of arrays (docs/language.md: tuple loops take numbers, vectors, matrices)
    ("for v in (o, o):\n        v[0] = 1.0", "(o, o)", "tuples may hold only numbers",
     "write the loop body once per array by hand"),
    ("for i, v in enumerate((o, o)):\n        v[i] = 1.0", "(o, o)",
     "tuples may hold only numbers", "iterate their elements (for x in (a[i], b[i]):)"),
    ("t = (o, o)", "(o, o)", "tuples may hold only numbers", "index the arrays where"),
])
def test_bad_tuple_loops_are_located(body, at, message, hint):
    code = f"@wl.kernel\ndef k(o: wl.array(dtype=wl.float32), n: int):\n    {body}\n"
    err = diagnose(cell_kernel(code))
    lines = code.split("\n")
    row = next(r for r, text in enumerate(lines) if at in text and r >= 2)
    assert (err.line, err.col) == (row + 1, lines[row].index(at) + 1), err
    assert message in err.message
    assert hint in err.hint


def test_a_shadowed_enumerate_is_not_pythons():
    k = cell_kernel("""
        enumerate = 3

        @wl.kernel
        def k(o: wl.array(dtype=wl.float32)):
            for v in enumerate((1, 2)):
                pass
    """)
    err = diagnose(k)
    assert "not callable" in err.message or "enumerate" in err.message
