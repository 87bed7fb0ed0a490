"""Front end: typing rules, inferred types, specialisation, captured constants, launch_ndim.

The expectations are written from the language rules of issue 2 (int
literals int32, float literals float32, weak literals take the other
operand's type as in NumPy 2's NEP 50, int -> float and 32 -> 64-bit
promotion, C's same-width unsigned rule), not read back from the code.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import warp_lab as wl
from warp_lab.options import CompileOptions
from warp_lab.compiler.frontend import make_typed_ast
from warp_lab.compiler.typed_ast import const_of
from warp_lab.compiler.typing_rules import fold_binop, implicit_ok, promote, wrap_int
from warp_lab.lang.types import (TupleType, bool_, float16, float32, float64, int8, int32, int64,
                                 uint8, uint32, vec3)

GLOBAL_N = 48
GLOBAL_SCALE = 2.5
GLOBAL_SHAPE = (4, 8)
TILE = wl.constant(16)
FLAG = False


# -- rule tables --------------------------------------------------------------------------------
@pytest.mark.parametrize("a,b,a_weak,b_weak,want", [
    (int32, int32, False, False, int32),
    (int32, float32, False, False, float32),
    (int32, int64, False, False, int64),
    (float32, float64, False, False, float64),
    (int32, uint32, False, False, uint32),       # same width: unsigned wins (C)
    (uint8, int32, False, False, int32),
    (float32, int32, False, True, float32),      # x * 2 stays float32
    (float64, float32, False, True, float64),    # x64 * 0.5 stays float64
    (int8, int32, False, True, int8),            # i8 + 1 stays int8
    (int32, float32, False, True, float32),      # i + 0.5 is float32
    (int64, float32, False, True, float64),      # i64 + 0.5 is float64
    (float16, int32, False, False, float32),
    (bool_, bool_, False, False, bool_),
    (bool_, int32, False, False, int32),
])
def test_promotion(a, b, a_weak, b_weak, want):
    assert promote(a, b, a_weak, b_weak) == want
    assert promote(b, a, b_weak, a_weak) == want


_INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


@pytest.mark.parametrize("a", _INTS)
@pytest.mark.parametrize("b", _INTS)
def test_integer_promotion_is_numpys_below_32_bits_and_cs_above(a, b):
    """Below 32 bits the common type is NumPy's (``np.result_type``), which holds
    every value of both, so the result is what C computes in ``int``. From 32 bits
    C's usual arithmetic conversions (C11 6.3.1.8): the wider type, and the unsigned
    one at equal width, where NumPy widens int32 + uint32 to int64 and int64 +
    uint64 to float64."""
    from warp_lab.lang import types

    got = promote(getattr(types, a), getattr(types, b))
    na, nb = np.dtype(a), np.dtype(b)
    if max(na.itemsize, nb.itemsize) < 4 or (na.kind == nb.kind) or \
            (na.kind == "u" and na.itemsize < nb.itemsize) or \
            (nb.kind == "u" and nb.itemsize < na.itemsize):
        want = np.result_type(na, nb).name
    else:   # an unsigned 32/64-bit operand at least as wide as the signed one
        want = (na if na.kind == "u" else nb).name if na.itemsize == nb.itemsize else \
            max(na, nb, key=lambda d: d.itemsize).name
    assert got.name == want


@pytest.mark.parametrize("src,dst,weak,ok", [
    (int32, int64, None, True), (int64, int32, None, False), (float32, float64, None, True),
    (float64, float32, None, False), (float32, int32, None, False), (int32, float32, None, True),
    (int32, uint32, None, False), (uint32, int64, None, True), (uint8, int32, None, True),
    (bool_, int32, None, True), (int32, bool_, None, False),
    (int32, int8, 100, True), (int32, int8, 300, False), (float32, int32, 1.5, False),
    (int32, float16, 7, True), (float32, float16, 0.5, True), (int32, uint8, -1, False),
    (vec3, vec3, None, True), (float32, vec3, None, False),
])
def test_implicit_conversions(src, dst, weak, ok):
    assert implicit_ok(src, dst, weak) is ok


@settings(max_examples=300, deadline=None, derandomize=True)
@given(op=st.sampled_from(["add", "sub", "mul", "floordiv", "mod", "and", "or", "xor"]),
       a=st.integers(-(2 ** 31), 2 ** 31 - 1), b=st.integers(-(2 ** 31), 2 ** 31 - 1))
def test_int32_folding_wraps_like_the_hardware(op, a, b):
    if op in ("floordiv", "mod") and b == 0:
        return
    py = {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
          "floordiv": lambda: a // b, "mod": lambda: a % b, "and": lambda: a & b,
          "or": lambda: a | b, "xor": lambda: a ^ b}[op]()
    want = int(np.array(py & 0xFFFFFFFF, dtype=np.uint64).astype(np.uint32).view(np.int32))
    assert fold_binop(op, a, b, int32) == want == wrap_int(py, int32)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(op=st.sampled_from(["add", "sub", "mul", "truediv", "floordiv", "mod"]),
       a=st.floats(-1e6, 1e6, width=32), b=st.floats(-1e6, 1e6, width=32).filter(bool))
def test_float32_folding_matches_numpy(op, a, b):
    x, y = np.float32(a), np.float32(b)
    want = {"add": x + y, "sub": x - y, "mul": x * y, "truediv": x / y,
            "floordiv": np.floor_divide(x, y), "mod": np.mod(x, y)}[op]
    assert fold_binop(op, a, b, float32) == float(want)


# -- kernels ----------------------------------------------------------------------------------
@wl.func
def halve(v):
    return v / 2


@wl.func
def clamp01(v: float):
    if v < 0.0:
        return 0
    if v > 1.0:
        return 1
    return v


@wl.func
def divmod_(a, b):
    return a // b, a % b


@wl.kernel
def typed(x: wl.array(dtype=wl.float32), d: wl.array(dtype=wl.float64),
          n: wl.array(dtype=wl.int32), big: wl.array(dtype=wl.int64)):
    i = wl.tid()
    s = 0.0
    k = 3
    h = x[i] * 2
    dd = d[i] * 0.5
    m = n[i] + 1
    b = big[i] + m
    f = m / 2
    u = wl.uint32(m) + 1
    half = halve(x[i])
    halfi = halve(m)
    c = clamp01(x[i])
    q, r = divmod_(m, 3)
    cmp = 0 < m < 10
    lit = 1 << 40
    for j in range(k):
        s += x[j]
    x[i] = s + h + half + c + f + GLOBAL_SCALE
    d[i] = dd + halfi
    n[i] = m + q + r + GLOBAL_N + TILE + int(cmp) + wl.int32(u)
    big[i] = b + lit


def test_local_types_follow_the_rules():
    tk = make_typed_ast(typed)
    want = {"i": int32, "s": float32, "k": int32, "h": float32, "dd": float64, "m": int32,
            "b": int64, "f": float32, "u": uint32, "half": float32, "halfi": float32,
            "c": float32, "q": int32, "r": int32, "cmp": bool_, "lit": int64, "j": int32}
    got = {k: v for k, v in tk.kernel.locals.items() if k in want}
    assert got == want
    assert tk.launch_ndim == 1 and tk.uses_tid


def test_device_functions_specialise_per_argument_types():
    tk = make_typed_ast(typed)
    sigs = sorted((f.name, tuple(t.name for _, t in f.params), f.ret.name if hasattr(f.ret, "name")
                   else repr(f.ret)) for f in tk.funcs)
    assert sigs == [("clamp01", ("float32",), "float32"),
                    ("divmod_", ("int32", "int32"), "tuple[wl.int32, wl.int32]"),
                    ("halve", ("float32",), "float32"),
                    ("halve", ("int32",), "float32")]
    assert len({f.symbol for f in tk.funcs}) == 4


@wl.kernel
def two_d(a: wl.array2d(wl.float32)):
    i, j = wl.tid()
    a[i, j] = 0.0


@wl.kernel
def three_d(a: wl.array3d(wl.float32)):
    k, j, i = wl.tid()
    a[k, j, i] = 0.0


@wl.kernel
def whole(a: wl.array2d(wl.float32)):
    t = wl.tid()
    a[t[0], t[1]] = 0.0


@wl.kernel
def manual(a: wl.array(dtype=wl.float32)):
    a[wl.block_idx.x * wl.block_dim.x + wl.thread_idx.x] = 1.0


@wl.func
def where_2d():
    r, c = wl.tid()
    return r * 100 + c


@wl.kernel
def via_func(a: wl.array2d(wl.int32)):
    a[0, 0] = where_2d()


def test_launch_ndim_is_the_arity_of_tid():
    assert make_typed_ast(via_func).launch_ndim == 2
    assert make_typed_ast(two_d).launch_ndim == 2
    assert make_typed_ast(three_d).launch_ndim == 3
    tk = make_typed_ast(whole, CompileOptions(launch_ndim=2))
    assert tk.launch_ndim == 2 and tk.kernel.locals["t"] == TupleType((int32, int32))
    m = make_typed_ast(manual)
    assert m.launch_ndim == 1 and not m.uses_tid


def make_closure_kernel(width: int, scale: float):
    @wl.kernel
    def closure(a: wl.array(dtype=wl.float32)):
        s = wl.shared_array(GLOBAL_SHAPE, wl.float32)
        t = wl.shared_array((TILE, width), dtype=wl.int64)
        s[0, 0] = scale * width
        t[1, 2] = wl.int64(width)
        if FLAG:
            a[0] = 1.0
        a[1] = s[0, 0]
    return closure


def test_constants_are_captured_at_compile_time():
    k = make_closure_kernel(8, 0.25)
    tk = make_typed_ast(k)
    assert [(d.dtype, d.shape, d.nbytes) for d in tk.shared] == [
        (float32, (4, 8), 128), (int64, (16, 8), 1024)]
    assert tk.shared_bytes == 1152
    stmt = tk.kernel.tree.body[2]  # s[0, 0] = scale * width
    assert const_of(stmt.value) == 2.0
    assert const_of(tk.kernel.tree.body[4].test) is False
    # what a cache key must include besides the source text
    assert dict(tk.captured) == {"closure: 'FLAG'": "False", "closure: 'GLOBAL_SHAPE'": "(4, 8)",
                                 "closure: 'TILE'": "16", "closure: 'scale'": "0.25",
                                 "closure: 'width'": "8"}


@wl.kernel
def prints(a: wl.array(dtype=wl.int64), f: float):
    print("a =", a[0], "f =", f, 7, True, sep=" ", end="!\n")
    wl.printf("%d %5.2f %x\n", a[0], f, wl.int32(3))


def test_print_and_printf_formats():
    tk = make_typed_ast(prints)
    calls = [s.value.wl_call for s in tk.kernel.tree.body]
    assert calls[0].info["fmt"] == "a = %lld f = %g %d %s!\n"   # a bool: True/False
    assert calls[0].info["python_bools"] == (3,)
    assert calls[1].info["fmt"] == "%lld %5.2f %x\n"


@wl.kernel
def literals(d: wl.array(dtype=wl.float64), f: wl.array(dtype=wl.float32),
             q: wl.array(dtype=wl.int64)):
    d[0] = -0.1
    d[1] = 0.1 * 3
    d[2] = 1e300 * 10.0
    f[0] = 0.1 * 3
    q[0] = 1 << 40
    q[1] = -(2 ** 31)
    q[2] = 7 // -2 + -7 % 3


def test_literal_expressions_fold_like_python_and_round_where_used():
    tk = make_typed_ast(literals)
    values = [const_of(s.value) for s in tk.kernel.tree.body]
    assert values[:3] == [-0.1, 0.1 * 3, 1e301]  # double precision, as Python computes
    assert values[4:] == [1 << 40, -(2 ** 31), 7 // -2 + -7 % 3]
    from warp_lab.compiler.lower import make_llvm_ir
    text = make_llvm_ir(tk).llvm_ir
    assert "double 0xbfb999999999999a" in text  # -0.1 exactly, not float32's -0.1
    assert "float 0x3fd3333340000000" in text   # 0.3 rounded once, to float32, at the store


@wl.kernel
def annotated(d: wl.array(dtype=wl.float64)):
    acc: wl.float64 = 0
    n: int = 3
    for j in range(n):
        acc += d[j]
    d[0] = acc


def test_annotated_locals_take_the_declared_type():
    tk = make_typed_ast(annotated)
    assert tk.kernel.locals["acc"] == float64 and tk.kernel.locals["n"] == int32
