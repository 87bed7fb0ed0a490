"""Bit casts (CUDA's ``__float_as_int`` family and ``wl.bitcast``): the same bits as numpy's
``view``, folded at compile time for constants, and located errors for the wrong width.

Run for real: the front end, LLVM, ptxas (``wl.compile``) and the simulator; the reference is
numpy's ``ndarray.view``. The corpus example ``bit_casts`` (warp_lab/examples/ints.py) checks
the same on every architecture the corpus is compiled for.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.compiler.frontend import make_typed_ast
from warp_lab.compiler.typed_ast import const_of

from test_diagnostics import cell_kernel, diagnose


@wl.kernel
def _round_trip(x: wl.array(dtype=wl.float32), d: wl.array(dtype=wl.float64),
                h: wl.array(dtype=wl.float16), oi: wl.array(dtype=wl.int32),
                of: wl.array(dtype=wl.float32), ol: wl.array(dtype=wl.int64),
                od: wl.array(dtype=wl.float64), oh: wl.array(dtype=wl.float16),
                ou: wl.array(dtype=wl.uint64)):
    i = wl.tid()
    oi[i] = wl.float_as_int(x[i])
    of[i] = wl.int_as_float(wl.float_as_int(x[i]) ^ 1)             # the lowest mantissa bit
    ol[i] = wl.double_as_longlong(d[i])
    od[i] = wl.longlong_as_double(wl.double_as_longlong(d[i]) ^ 1)
    oh[i] = wl.bitcast(wl.bitcast(h[i], wl.uint16) ^ 0x8000, wl.float16)    # -h
    ou[i] = wl.bitcast(d[i], wl.uint64)


@pytest.mark.parametrize("opt", [0, 3])
def test_simulator_gives_numpys_bits(opt):
    n = 96
    g = np.random.default_rng(7)
    x = (g.standard_normal(n) * 1e30).astype(np.float32)
    x[:7] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-40]
    x[7] = np.array(0x7FA01234, np.uint32).view(np.float32)     # a signalling NaN payload
    d = g.standard_normal(n) * 1e-300
    d[:3] = [-0.0, np.inf, 5e-324]
    h = g.standard_normal(n).astype(np.float16)
    h[:2] = [np.float16(6e-8), -np.inf]
    outs = [np.zeros(n, t) for t in (np.int32, np.float32, np.int64, np.float64, np.float16,
                                     np.uint64)]
    res = wl.launch(_round_trip, dim=n, inputs=[x, d, h, *outs], device="sim", opt=opt)
    assert res.findings == []
    oi, of, ol, od, oh, ou = outs
    np.testing.assert_array_equal(oi, x.view(np.int32))
    np.testing.assert_array_equal(of.view(np.int32), x.view(np.int32) ^ 1)
    np.testing.assert_array_equal(ol, d.view(np.int64))
    np.testing.assert_array_equal(od.view(np.int64), d.view(np.int64) ^ 1)
    np.testing.assert_array_equal(oh.view(np.uint16), h.view(np.uint16) ^ np.uint16(0x8000))
    np.testing.assert_array_equal(ou, d.view(np.uint64))


def test_lowered_to_llvm_bitcast_and_ptxas_accepts_it():
    ck = wl.compile(_round_trip, opt=0, sass=False, cache=False)
    for cast in ("float %.* to i32", "i32 %.* to float", "double %.* to i64",
                 "i64 %.* to double", "half %.* to i16", "i16 %.* to half"):
        assert re.search(rf"= bitcast {cast}", ck.llvm_ir), cast
    assert ck.cubin  # ptxas assembled it (the loads and stores move the bits themselves)


def _folded(expr: str, dtype="wl.int64"):
    k = cell_kernel(f"""
        @wl.kernel
        def k(o: wl.array(dtype={dtype})):
            o[0] = {expr}
    """)
    tk = make_typed_ast(k)
    store = tk.kernel.tree.body[0]
    return store.value.wl_ty.name, const_of(store.value)


@pytest.mark.parametrize("expr, ty, want", [
    ("wl.float_as_int(1.0)", "int32", int(np.float32(1.0).view(np.int32))),
    ("wl.float_as_int(-0.0)", "int32", int(np.float32(-0.0).view(np.int32))),
    ("wl.float_as_uint(math.inf)", "uint32", 0x7F800000),
    ("wl.float_as_int(math.nan)", "int32", int(np.float32(np.nan).view(np.int32))),
    ("wl.float_as_int(2)", "int32", int(np.float32(2).view(np.int32))),   # a literal 2.0f
    ("wl.int_as_float(0x3F800000)", "float32", 1.0),
    ("wl.uint_as_float(0xBF800000)", "float32", -1.0),                 # unsigned literal
    ("wl.int_as_float(1)", "float32", float(np.int32(1).view(np.float32))),   # a denormal
    ("wl.double_as_longlong(0.1)", "int64", int(np.float64(0.1).view(np.int64))),
    ("wl.longlong_as_double(0x4000000000000001)", "float64",
     float(np.int64(0x4000000000000001).view(np.float64))),
    ("wl.bitcast(0xFFFF, wl.int16)", "int16", -1),
    ("wl.bitcast(wl.float16(1.5), wl.uint16)", "uint16",
     int(np.float16(1.5).view(np.uint16))),
    ("wl.bitcast(-1, wl.uint64)", "uint64", 2**64 - 1),
])
def test_constants_fold_to_numpys_view(expr, ty, want):
    name, value = _folded(expr, "wl.float64" if "float" in ty else "wl.int64"
                          if ty != "uint64" else "wl.uint64")
    assert name == ty
    assert value == want and type(value) is type(want)


def test_a_nan_result_is_left_to_run_time():
    # a folded float would be a Python float, which cannot promise the payload's bits
    name, value = _folded("wl.int_as_float(0x7FC01234)", "wl.float64")
    assert name == "float32" and value is not None
    from warp_lab.compiler.typed_ast import NO_CONST
    assert value is NO_CONST


def test_a_folded_cast_is_a_compile_time_constant():
    k = cell_kernel("""
        @wl.kernel
        def k(o: wl.array(dtype=wl.float32)):
            s = wl.shared_array(wl.float_as_int(1e-44), wl.float32)    # 7 elements
            s[0] = 1.0
            o[0] = s[0] + float(len(s))
    """)
    assert make_typed_ast(k).shared[0].shape == (7,)


@pytest.mark.parametrize("body, at, message, hint", [
    ("o[0] = wl.float_as_int(wl.float64(o[0]))", "wl.float64(", "float_as_int() needs a 32-bit "
     "float, not float64", "wl.bitcast(x, dtype) with a dtype of 64 bits"),
    ("o[0] = wl.float_as_int(n)", "n)", "needs a 32-bit float, not int32", "wl.float32(x)"),
    ("o[0] = wl.int_as_float(1.5)", "1.5", "int_as_float() needs a 32-bit integer, not float32",
     "wl.int32(x)"),
    ("o[0] = wl.int_as_float(2**40)", "2**40", "1099511627776 does not fit in 32 bits", ""),
    ("o[0] = wl.longlong_as_double(n)", "n)", "needs a 64-bit integer, not int32", ""),
    ("o[0] = wl.bitcast(n, wl.float64)", "wl.bitcast", "int32 has 32 bits but float64 has 64",
     "pick a 32-bit dtype"),
    ("o[0] = wl.bitcast(n, wl.vec2)", "wl.vec2", "needs a scalar type for dtype", ""),
    ("o[0] = wl.bitcast(n > 0, wl.int8)", "n > 0", "a bool has no defined bits", ""),
    ("o[0] = wl.bitcast(n)", "wl.bitcast", "needs the argument 'dtype'", ""),
])
def test_wrong_width_or_kind_is_a_located_error(body, at, message, hint):
    k = cell_kernel(f"""
        @wl.kernel
        def k(o: wl.array(dtype=wl.float64), n: int):
            {body}
    """)
    err = diagnose(k)
    assert (err.line, err.col) == (3, 4 + body.index(at) + 1), err
    assert message in err.message
    assert hint in err.hint


def test_host_call_says_to_use_it_in_a_kernel():
    with pytest.raises(TypeError, match="inside a @wl.kernel"):
        wl.float_as_int(1.0)
    assert math.isfinite(1.0)
