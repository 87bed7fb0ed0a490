"""Default parameter values and keyword arguments of ``@wl.func`` device functions.

A default is Python's own value (evaluated when the ``def`` ran), a number or a tuple of
numbers, typed like a captured constant; anything else is a located error at the default.
Results come from the real simulator and are checked against numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.compiler.frontend import make_typed_ast

from test_diagnostics import cell_kernel, diagnose

HI = 1.0


@wl.func
def clamp(x: float, lo: float = 0.0, hi: float = HI):
    return wl.min(wl.max(x, lo), hi)


@wl.func
def scaled(x, k=2, shift=np.float64(0.5)):       # unannotated: the default's own type
    return x * k + shift


@wl.kernel
def _clamps(x: wl.array(dtype=wl.float32), out: wl.array2d(dtype=wl.float32),
            d: wl.array(dtype=wl.float64)):
    i = wl.tid()
    v = x[i]
    out[0, i] = clamp(v)
    out[1, i] = clamp(v, -1.0)
    out[2, i] = clamp(v, hi=2.0)
    out[3, i] = clamp(hi=0.75, x=v, lo=0.5)
    out[4, i] = clamp(v, -0.5, 0.5)
    d[i] = scaled(v)


def test_defaults_and_keywords_match_python():
    n = 64
    x = np.linspace(-3, 3, n, dtype=np.float32)
    out, d = np.zeros((5, n), np.float32), np.zeros(n)
    res = wl.launch(_clamps, dim=n, inputs=[x, out, d], device="sim")
    assert res.findings == []
    for row, (lo, hi) in enumerate([(0, 1), (-1, 1), (0, 2), (0.5, 0.75), (-0.5, 0.5)]):
        np.testing.assert_array_equal(out[row], np.clip(x, np.float32(lo), np.float32(hi)))
    np.testing.assert_array_equal(d, x.astype(np.float64) * 2 + 0.5)    # float64: the default's
    host = [clamp(float(v)) for v in x[:4]]                             # the same on the host
    assert host == [0.0, 0.0, 0.0, 0.0]


def test_a_default_is_a_captured_constant_of_the_kernel():
    tk = make_typed_ast(_clamps)
    captured = dict(tk.captured)
    assert captured["_clamps: clamp(hi=...)"] == repr(1.0)
    scaled_tf = next(f for f in tk.funcs if f.name == "scaled")
    assert [t.name for _, t in scaled_tf.params] == ["float32", "int32", "float64"]


def test_the_default_is_the_value_when_the_def_ran():
    k = cell_kernel("""
        LIMIT = 3

        @wl.func
        def cap(v: int, top: int = LIMIT):
            return min(v, top)

        LIMIT = 100          # Python keeps the value the def saw

        @wl.kernel
        def k(o: wl.array(dtype=wl.int32)):
            i = wl.tid()
            o[i] = cap(i)
    """)
    o = np.zeros(8, np.int32)
    wl.launch(k, dim=8, inputs=[o], device="sim")
    np.testing.assert_array_equal(o, np.minimum(np.arange(8), 3))


@pytest.mark.parametrize("default, shown", [
    ("None", "is None:"),
    ("[1.0]", "is [1.0], a list"),
    ("'x'", "is 'x', a str"),
    ("np.zeros(2)", "is np.zeros(2), a ndarray"),
])
def test_a_default_that_is_not_a_constant_is_located_at_the_default(default, shown):
    k = cell_kernel(f"""
        import numpy as np

        @wl.func
        def f(v: float, w=  {default}):
            return v

        @wl.kernel
        def k(o: wl.array(dtype=wl.float32)):
            o[0] = f(o[1])
    """)
    err = diagnose(k)
    assert (err.line, err.col) == (4, 21), err
    assert f"the default value of f(w) {shown}" in err.message
    assert "constant number" in err.message
    assert "or pass w at the call" in err.hint and ":9)" in err.hint


def test_a_default_passed_explicitly_is_not_evaluated():
    k = cell_kernel("""
        @wl.func
        def f(v: float, w=None):
            return v + w

        @wl.kernel
        def k(o: wl.array(dtype=wl.float32)):
            o[0] = f(o[1], 2.0) + f(o[1], w=3.0)
    """)
    make_typed_ast(k)


@pytest.mark.parametrize("call, line, col, message", [
    ("clampf(o[1], up=2.0)", 7, 28, "clampf() has no parameter 'up'"),
    ("clampf(o[1], 0.0, lo=2.0)", 7, 33, "clampf() got 'lo' twice"),
    ("clampf(lo=1.0)", 7, 12, "clampf() needs the argument 'x'"),
    ("clampf(o[1], 0.0, 1.0, 2.0)", 7, 12, "clampf() takes at most 3 arguments, got 4"),
])
def test_bad_keyword_calls_are_located(call, line, col, message):
    k = cell_kernel(f"""
        @wl.func
        def clampf(x: float, lo: float = 0.0, hi: float = 1.0):
            return wl.min(wl.max(x, lo), hi)

        @wl.kernel
        def k(o: wl.array(dtype=wl.float32)):
            o[0] = {call}
    """)
    err = diagnose(k)
    assert (err.line, err.col) == (line, col), err
    assert message in err.message


def test_kernel_parameters_still_take_no_defaults():
    k = cell_kernel("""
        @wl.kernel
        def k(o: wl.array(dtype=wl.float32), n: int = 4):
            o[0] = 1.0
    """)
    err = diagnose(k)
    assert "no defaults in a kernel" in err.message


def test_keyword_only_parameters_are_still_refused():
    k = cell_kernel("""
        @wl.func
        def f(v: float, *, w: float = 1.0):
            return v * w

        @wl.kernel
        def k(o: wl.array(dtype=wl.float32)):
            o[0] = f(o[1])
    """)
    err = diagnose(k)
    assert "keyword-only" in err.message and ":7)" in err.hint


def test_the_cache_key_follows_the_defaults_the_def_saw():
    from warp_lab.compiler.cache import fingerprint
    from warp_lab.lang.kernel import cell_source

    code = "@wl.func\ndef cap(v: int, top: int = LIMIT):\n    return min(v, top)\n"
    cell_source(code, "<cell defaults-key>")
    ns = {"wl": wl, "LIMIT": 3}
    exec(compile(code, "<cell defaults-key>", "exec"), ns)  # noqa: S102 - the test's own
    first = ns["cap"]
    ns["LIMIT"] = 100
    exec(compile(code, "<cell defaults-key>", "exec"), ns)  # noqa: S102
    second = ns["cap"]
    # same text, same cell, same current LIMIT: only the defaults differ
    assert fingerprint(first) != fingerprint(second)
    assert "defaults=(3,)" in fingerprint(first)
