"""Python semantics of the generated code, checked by running it on the host CPU.

Pure-arithmetic ``@wl.func`` bodies use no NVVM intrinsic, so their lowered
LLVM IR runs unchanged on the host: the device function alone is lowered
into a module with the host triple, JIT-compiled by llvmlite's MCJIT and
called through ctypes. Results must equal Python's own (``//`` and ``%``
floor, shifts past the width, wrapping int32 overflow, ``range`` with
negative and runtime steps, short-circuit ``and``/``or``, chained
comparisons) and NumPy's float32 for float ops. The same expressions
folded at compile time must agree with the run-time results.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math

import llvmlite.binding as llvm
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import warp_lab as wl
from warp_lab.options import CompileOptions
from warp_lab.compiler.frontend import make_typed_ast
from warp_lab.compiler.lower import FunctionLowerer, ModuleContext
from warp_lab.compiler.typing_rules import fold_binop, wrap_int

llvm.initialize_native_target()
llvm.initialize_native_asmprinter()

# float ``%`` and ``//`` call libdevice's exact fmod (``__nv_fmod[f]``) on the device;
# on the host the C library's fmod is the same function (IEEE fmod is exact).
_LIBM = ctypes.CDLL(ctypes.util.find_library("m"))
for _dev, _host in (("__nv_fmodf", "fmodf"), ("__nv_fmod", "fmod")):
    llvm.add_symbol(_dev, ctypes.cast(getattr(_LIBM, _host), ctypes.c_void_p).value)

_C = {"int32": ctypes.c_int32, "uint32": ctypes.c_uint32, "int64": ctypes.c_int64,
      "float32": ctypes.c_float, "float64": ctypes.c_double, "bool": ctypes.c_bool}
_ENGINES = []


#: NVVM's ``cvt.rzi`` intrinsics (float → int conversions lower to them) written for the
#: host from the PTX ISA's rule (9.7.9.21, "Integer Notes"): toward zero, clamped to the
#: destination's range (LLVM's ``fptosi.sat``), NaN giving 0 unless the source is f64 or
#: the destination 64-bit, where it gives ``1 << (bits - 1)``.
_CVT_RZI = {"f2i": ("float", 32, "s"), "f2ui": ("float", 32, "u"), "d2i": ("double", 32, "s"),
            "d2ui": ("double", 32, "u"), "f2ll": ("float", 64, "s"),
            "f2ull": ("float", 64, "u"), "d2ll": ("double", 64, "s"),
            "d2ull": ("double", 64, "u")}


def _host_cvt_rzi(text: str) -> str:
    """``text`` with each declared ``llvm.nvvm.<cvt>.rz`` defined for the host."""
    for name, (fty, bits, sign) in _CVT_RZI.items():
        decl = f"declare i{bits} @\"llvm.nvvm.{name}.rz\"({fty} %\".1\")"
        if decl not in text:
            continue
        nan = 1 << (bits - 1) if (fty == "double" or bits == 64) else 0
        sfx = "f64" if fty == "double" else "f32"
        text = text.replace(decl, f"""declare i{bits} @llvm.fpto{sign}i.sat.i{bits}.{sfx}({fty})
define internal i{bits} @"llvm.nvvm.{name}.rz"({fty} %x) {{
  %s = call i{bits} @llvm.fpto{sign}i.sat.i{bits}.{sfx}({fty} %x)
  %n = fcmp uno {fty} %x, %x
  %r = select i1 %n, i{bits} {nan}, i{bits} %s
  ret i{bits} %r
}}""")
    return text.replace('@"llvm.nvvm.', '@"host.nvvm.').replace("@llvm.nvvm.", "@host.nvvm.")


def host_function(kernel, func_name: str):
    """The device function ``func_name`` called by ``kernel``, JIT-compiled for the host."""
    options = CompileOptions(lineinfo=False, opt=0)
    typed = make_typed_ast(kernel, options)
    tf = next(f for f in typed.funcs if f.name == func_name)
    mctx = ModuleContext(typed, options)
    fn = mctx.function(tf)
    fn.linkage = "external"
    while mctx.pending:  # tf and the device functions it calls
        FunctionLowerer(mctx, *mctx.pending.pop(0)).lower()
    mctx.module.triple = llvm.get_process_triple()
    mod = llvm.parse_assembly(_host_cvt_rzi(str(mctx.module)))
    mod.verify()
    tm = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    _ENGINES.append(engine)  # keep the code alive
    proto = ctypes.CFUNCTYPE(_C[tf.ret.name], *[_C[t.name] for _, t in tf.params])
    return proto(engine.get_function_address(tf.symbol))


# -- device functions under test ---------------------------------------------------
@wl.func
def i_floordiv(a: wl.int32, b: wl.int32):
    return a // b


@wl.func
def i_mod(a: wl.int32, b: wl.int32):
    return a % b


@wl.func
def i_shl(a: wl.int32, s: wl.int32):
    return a << s


@wl.func
def i_shr(a: wl.int32, s: wl.int32):
    return a >> s


@wl.func
def u_shr(a: wl.uint32, s: wl.uint32):
    return a >> s


@wl.func
def i_pow(a: wl.int32, e: wl.int32):
    return a ** e


@wl.func
def i_mix(a: wl.int32, b: wl.int32):
    return (a * b + 7) ^ (~a & 0xFF) | -b


@wl.func
def f_floordiv(a: wl.float32, b: wl.float32):
    return a // b


@wl.func
def f_mod(a: wl.float32, b: wl.float32):
    return a % b


@wl.func
def f_div(a: wl.int32, b: wl.int32):
    return a / b


@wl.func
def f_to_i(a: wl.float32):
    return int(a)


@wl.func
def l_mod(a: wl.int64, b: wl.int64):
    return a % b


@wl.func
def range_count(a: wl.int32, b: wl.int32, s: wl.int32):
    n = 0
    for k in range(a, b, s):
        n += 1
    return n


@wl.func
def range_count3(a: wl.int32, b: wl.int32):
    n = 0
    for k in range(a, b, 3):
        n += 1
    for k in range(b, a, -5):
        n += 100
    return n


@wl.func
def range_last(a: wl.int32, b: wl.int32):
    last = -999
    for k in range(a, b, -3):
        last = k
    return last


@wl.func
def loop_control(n: wl.int32):
    total = 0
    k = 0
    while True:
        k += 1
        if k > n:
            break
        if k % 3 == 0:
            continue
        total += k
    return total


@wl.func
def chained(a: wl.int32, b: wl.int32, c: wl.int32):
    return 1 if a < b <= c != a else 0


@wl.func
def logic(a: wl.int32, b: wl.int32):
    return 1 if (a > 0 and b // a > 1) or (a == 0 and not b) else 0


@wl.func
def operands(a: wl.int32, b: wl.int32, c: wl.int32):
    return (a or b) * 10000 + (a and b or c) * 100 + (a and b and c) + (0 or a) + (a and 3)


@wl.func
def f_operands(a: wl.float32, b: wl.float32):
    return (a or b) + (a and 2.5) * 3.0


@wl.func
def pick(a: wl.float32, b: wl.float32):
    return a if a > b else b * 2.0


@wl.func
def bits(a: wl.int32, which: wl.int32):
    if which == 0:
        return wl.popc(a)
    if which == 1:
        return wl.clz(a)
    if which == 2:
        return wl.ffs(a)
    if which == 3:
        return wl.brev(a)
    return wl.mulhi(a, which)


@wl.kernel
def harness(x: wl.array(dtype=wl.int32), y: wl.array(dtype=wl.float32), z: wl.array(dtype=wl.int64)):
    i = x[0]
    j = x[1]
    u = wl.uint32(j)
    f = y[0]
    g = y[1]
    x[2] = i_floordiv(i, j) + i_mod(i, j) + i_shl(i, j) + i_shr(i, j) + i_pow(i, j)
    x[3] = i_mix(i, j) + int(u_shr(u, u)) + range_count(i, j, i) + range_last(i, j)
    x[7] = range_count3(i, j)
    x[4] = loop_control(i) + chained(i, j, i) + logic(i, j) + f_to_i(f)
    y[2] = f_floordiv(f, g) + f_mod(f, g) + f_div(i, j) + pick(f, g)
    z[0] = l_mod(z[1], z[2])
    x[5] = bits(i, j)
    x[6] = operands(i, j, i)
    y[3] = f_operands(f, g)


I32 = st.integers(-(2 ** 31), 2 ** 31 - 1)
SMALL = st.integers(-50, 50)
F32 = st.floats(-1e6, 1e6, width=32, allow_subnormal=False)


def py_floordiv(a, b):
    return wrap_int(a // b, wl.int32)


@pytest.fixture(scope="module")
def fns():
    names = ["i_floordiv", "i_mod", "i_shl", "i_shr", "u_shr", "i_pow", "i_mix", "f_floordiv",
             "f_mod", "f_div", "f_to_i", "l_mod", "range_count", "range_count3", "range_last", "loop_control",
             "chained", "logic", "pick", "bits", "operands", "f_operands"]
    return {n: host_function(harness, n) for n in names}


@settings(max_examples=150, deadline=None, derandomize=True)
@given(a=I32, b=I32.filter(lambda v: v != 0))
def test_integer_floor_division_and_modulo_are_pythons(fns, a, b):
    if a == -(2 ** 31) and b == -1:
        return  # the one overflowing quotient; hardware and LLVM leave it undefined
    assert fns["i_floordiv"](a, b) == wrap_int(a // b, wl.int32)
    assert fns["i_mod"](a, b) == a % b
    assert fold_binop("floordiv", a, b, wl.int32) == wrap_int(a // b, wl.int32)
    assert fold_binop("mod", a, b, wl.int32) == a % b


@settings(max_examples=100, deadline=None, derandomize=True)
@given(a=st.integers(-(2 ** 63), 2 ** 63 - 1), b=st.integers(-(2 ** 40), 2 ** 40).filter(bool))
def test_int64_modulo(fns, a, b):
    assert fns["l_mod"](a, b) == a % b


@settings(max_examples=150, deadline=None, derandomize=True)
@given(a=I32, s=st.integers(0, 80))
def test_shifts_past_the_width_and_wrapping(fns, a, s):
    expect_shl = wrap_int(a << s, wl.int32) if s < 32 else 0
    assert fns["i_shl"](a, s) == expect_shl == fold_binop("shl", a, s, wl.int32)
    assert fns["i_shr"](a, s) == a >> min(s, 31) == fold_binop("shr", a, s, wl.int32)
    u = a & 0xFFFFFFFF
    assert fns["u_shr"](u, u) == fold_binop("shr", u, u, wl.uint32)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(a=SMALL, e=st.integers(0, 40), b=I32)
def test_integer_power_and_bit_mixing_wrap_like_int32(fns, a, e, b):
    assert fns["i_pow"](a, e) == wrap_int(a ** e, wl.int32) == fold_binop("pow", a, e, wl.int32)
    assert fns["i_mix"](a, b) == wrap_int((a * b + 7) ^ (~a & 0xFF) | -b, wl.int32)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(a=F32, b=F32.filter(lambda v: abs(v) > 1e-3))
@example(a=1.0, b=0.1).via("1 // 0.1 is 9 in Python and NumPy; floor(1 / 0.1) is 10")
@example(a=-4.0, b=2.0).via("a zero remainder takes the divisor's sign: +0.0")
def test_float_floor_division_and_modulo_match_numpy(fns, a, b):
    fa, fb = np.float32(a), np.float32(b)
    assert fns["f_floordiv"](fa, fb) == float(np.floor_divide(fa, fb))  # 1 // 0.1 is 9
    got = fns["f_mod"](fa, fb)
    assert got == float(np.mod(fa, fb))      # exact: fmod is exact, as is the sign fix
    assert math.copysign(1, got) == math.copysign(1, float(np.mod(fa, fb)))  # signed zeros
    assert (got == 0) or ((got < 0) == (fb < 0))  # the remainder takes the divisor's sign


@settings(max_examples=100, deadline=None, derandomize=True)
@given(a=I32, b=I32.filter(bool), f=F32)
def test_true_division_and_truncating_casts(fns, a, b, f):
    assert fns["f_div"](a, b) == np.float32(np.float32(a) / np.float32(b))
    assert fns["f_to_i"](np.float32(f)) == int(np.float32(f))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(a=SMALL, b=SMALL, s=SMALL.filter(bool))
def test_range_with_negative_and_runtime_steps(fns, a, b, s):
    assert fns["range_count"](a, b, s) == len(range(a, b, s))
    r = list(range(a, b, -3))
    assert fns["range_last"](a, b) == (r[-1] if r else -999)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(edge=st.sampled_from([2 ** 31 - 1, -(2 ** 31)]), d=st.integers(0, 40),
       s=st.integers(-2 ** 31, 2 ** 31 - 1).filter(lambda v: abs(v) > 1e6 or 2 <= abs(v) <= 9))
def test_range_steps_that_would_overflow_the_counter_stop_like_pythons(fns, edge, d, s):
    """The stepped counter would wrap past INT32_MAX/MIN: the loop still ends on time."""
    near = edge - d if edge > 0 else edge + d
    lo, hi = min(near, edge), max(near, edge)
    assert fns["range_count"](lo, hi, s) == len(range(lo, hi, s))
    assert fns["range_count"](hi, lo, s) == len(range(hi, lo, s))
    if abs(s) > 1e6:  # the whole int32 range in few, huge steps
        full = (-(2 ** 31), 2 ** 31 - 1, s) if s > 0 else (2 ** 31 - 1, -(2 ** 31), s)
        assert fns["range_count"](*full) == len(range(*full))
    assert fns["range_count3"](lo, hi) == len(range(lo, hi, 3)) + 100 * len(range(hi, lo, -5))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(a=I32, m=I32)
def test_integer_intrinsics_match_their_cuda_definitions(fns, a, m):
    u = a & 0xFFFFFFFF
    assert fns["bits"](a, 0) == bin(u).count("1")                       # __popc
    assert fns["bits"](a, 1) == 32 - u.bit_length()                     # __clz
    assert fns["bits"](a, 2) == ((u & -u).bit_length() if u else 0)     # __ffs
    assert fns["bits"](a, 3) == wrap_int(int(f"{u:032b}"[::-1], 2), wl.int32)  # __brev
    if m > 3:
        assert fns["bits"](a, m) == (a * m) >> 32                       # __mulhi


@settings(max_examples=100, deadline=None, derandomize=True)
@given(a=SMALL, b=SMALL, c=SMALL)
def test_control_flow_chains_and_short_circuit(fns, a, b, c):
    n = abs(a)
    assert fns["loop_control"](n) == sum(k for k in range(1, n + 1) if k % 3)
    assert fns["chained"](a, b, c) == int(a < b <= c != a)
    # b // a with a == 0 would trap: the and must short-circuit
    assert fns["logic"](a, b) == int((a > 0 and b // a > 1) or (a == 0 and not b))
    # and/or give the deciding operand, as in Python (not a bool)
    assert fns["operands"](a, b, c) == wrap_int((a or b) * 10000 + (a and b or c) * 100
                                                + (a and b and c) + (0 or a) + (a and 3), wl.int32)
    fa, fb = np.float32(a) / 3, np.float32(b) / 7
    assert fns["f_operands"](fa, fb) == np.float32((fa or fb) + np.float32(fa and 2.5) * 3)
    assert fns["pick"](fa, fb) == (fa if fa > fb else np.float32(fb * np.float32(2.0)))
