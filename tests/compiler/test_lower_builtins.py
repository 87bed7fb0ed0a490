"""Every builtin of the language types, lowers and emits PTX; math goes to libdevice or LLVM.

The expected libdevice names come from libdevice's own bitcode: each
``__nv_*`` function a kernel declares must exist in ``libdevice.10.bc``
(read with llvmlite), with the argument type of the call.
"""

from __future__ import annotations

import functools
import math
import re
import textwrap

import llvmlite.binding as llvm
import pytest

import warp_lab as wl
from warp_lab.options import CompileOptions
from warp_lab.compiler.frontend import make_typed_ast
from warp_lab.compiler.lower import TRIPLE, make_llvm_ir
from warp_lab.lang import builtins as B
from warp_lab.lang.kernel import Kernel, cell_source

llvm.initialize_all_targets()
llvm.initialize_all_asmprinters()
_n = [0]


def kernel_from(text: str) -> Kernel:
    _n[0] += 1
    name = f"<builtins {_n[0]}>"
    code = textwrap.dedent(text).lstrip("\n")
    cell_source(code, name)
    ns = {"wl": wl, "math": math}
    exec(compile(code, name, "exec"), ns)  # noqa: S102 - the test's own source
    return [v for v in ns.values() if isinstance(v, Kernel)][-1]


def lower_text(text: str, **opts) -> str:
    o = CompileOptions(**opts)
    return make_llvm_ir(make_typed_ast(kernel_from(text), o), o).llvm_ir


def ptx_of(llvm_ir: str, arch: str = "sm_90") -> str:
    mod = llvm.parse_assembly(llvm_ir)
    mod.verify()
    tm = llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=arch, opt=2)
    return tm.emit_assembly(mod)


@functools.lru_cache(maxsize=1)
def libdevice_functions() -> dict:
    from cuda.pathfinder import find_bitcode_lib
    mod = llvm.parse_bitcode(open(find_bitcode_lib("device"), "rb").read())
    return {f.name: str(f.type) for f in mod.functions}


def test_every_builtin_has_a_typing_rule_and_a_code_generator():
    from warp_lab.compiler.builtin_rules import IMPLS, impl_of

    for name, record in B.BUILTINS.items():
        impl = impl_of(name)
        assert impl.name == record.impl and callable(impl.type) and callable(impl.lower), name
    named = {r.impl for r in B.BUILTINS.values()}
    assert set(IMPLS) == named, f"implementations no record names: {set(IMPLS) - named}"


@pytest.mark.parametrize("name", B.MATH_UNARY + B.MATH_BINARY)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_math_functions_lower_to_libdevice_or_llvm(name, dtype):
    args = "v" if name in B.MATH_UNARY else "v, w"
    ir_text = lower_text(f"""
        @wl.kernel
        def k(a: wl.array(dtype=wl.{dtype}), b: wl.array(dtype=wl.{dtype})):
            i = wl.tid()
            v = a[i]
            w = b[i]
            a[i] = wl.{name}({args})
    """)
    ty = "float" if dtype == "float32" else "double"
    decls = re.findall(r'declare (\w+) @"([\w.]+)"\(([^)]*)\)', ir_text)
    called = [(r, n, p) for r, n, p in decls if not n.startswith("llvm.nvvm.read")]
    assert called, ir_text
    for ret, fname, params in called:
        if fname.startswith("__nv_"):
            assert fname in libdevice_functions(), fname
            assert ret == ty and all(p.strip().startswith(ty) for p in params.split(","))
        else:
            assert fname.startswith("llvm.") and fname.endswith(".f32" if ty == "float" else ".f64")
    assert re.search(r"\.entry k\(", ptx_of(ir_text))


@pytest.mark.parametrize("expr,pattern", [
    ("wl.popc(u)", r"popc\.b32"), ("wl.clz(u)", r"clz\.b32"), ("wl.brev(u)", r"brev\.b32"),
    ("wl.ffs(u)", r"(popc|bfind|brev)\.b32"), ("wl.mulhi(u, u)", r"mul\.hi\.s32"),
    ("wl.abs(u)", r"abs\.s32"), ("wl.min(u, 3)", r"min\.s32"), ("wl.max(u, 3)", r"max\.s32"),
    ("int(wl.floor(f))", r"cvt\.rmi\.f32\.f32"), ("int(wl.sqrt(f))", r"sqrt\.rn\.f32"),
    ("int(wl.fma(f, f, f))", r"fma\.rn\.f32"), ("int(wl.isnan(f))", r"setp\.nan\.f32"),
    ("wl.lane_id()", r"%laneid"), ("wl.select(f > 0.0, u, 2)", r"selp\.b32"),
    ("wl.clamp(u, 0, 10)", r"(min|max)\.s32"), ("int(wl.sign(f))", r"setp"),
    ("wl.all_sync(wl.FULL_MASK, u > 0)", r"vote\.sync\.all\.pred"),
    ("wl.any_sync(wl.FULL_MASK, u > 0)", r"vote\.sync\.any\.pred"),
    ("wl.shfl_sync(wl.FULL_MASK, u, 0)", r"shfl\.sync\.idx\.b32"),
    ("wl.shfl_up_sync(wl.FULL_MASK, u, 1)", r"shfl\.sync\.up\.b32\s+\S+, \S+, 1, 0, -1"),
    ("wl.shfl_xor_sync(wl.FULL_MASK, u, 1, 16)", r"shfl\.sync\.bfly\.b32\s+\S+, \S+, 1, 4127"),
    ("wl.atomic_or(a, 0, u)", r"atom\.(relaxed\.gpu\.)?global\.or\.b32"),
    ("wl.atomic_exch(a, 0, u)", r"atom\.(relaxed\.gpu\.)?global\.exch\.b32"),
    ("wl.atomic_min(a, 0, u)", r"atom\.(relaxed\.gpu\.)?global\.min\.s32"),
])
def test_builtins_pick_the_ptx_instruction(expr, pattern):
    ir_text = lower_text(f"""
        @wl.kernel
        def k(a: wl.array(dtype=wl.int32), f32: wl.array(dtype=wl.float32)):
            i = wl.tid()
            u = a[i]
            f = f32[i]
            a[i] = {expr}
    """)
    assert re.search(pattern, ptx_of(ir_text)), expr


def test_float_atomics_and_64_bit_shuffles():
    ptx = ptx_of(lower_text("""
        @wl.kernel
        def k(a: wl.array(dtype=wl.float64), f: wl.array(dtype=wl.float32)):
            i = wl.tid()
            a[i] = wl.shfl_down_sync(wl.FULL_MASK, a[i], 2)
            wl.atomic_add(a, 0, 1.0)
            wl.atomic_sub(f, 0, 1.0)
            wl.atomic_max(f, 1, 2.0)
    """))
    assert len(re.findall(r"shfl\.sync\.down\.b32", ptx)) == 2  # a double moves in two halves
    assert re.search(r"atom\.(relaxed\.gpu\.)?global\.add\.f64", ptx)
    assert re.search(r"atom\.(relaxed\.gpu\.)?global\.add\.f32", ptx)  # sub = add of -value
    assert re.search(r"atom\.(relaxed\.gpu\.)?global\.(cas|max)", ptx)  # float max: CAS loop


def test_vectors_and_matrices_lower_to_scalar_code():
    ir_text = lower_text("""
        @wl.kernel
        def k(p: wl.array(dtype=wl.vec3), m: wl.array(dtype=wl.mat33), out: wl.array(dtype=wl.float32)):
            i = wl.tid()
            v = wl.normalize(p[i])
            w = wl.cross(v, wl.vec3(0.0, 0.0, 1.0))
            r = wl.transpose(m[i]) @ w
            out[i] = wl.dot(r, v) + wl.length(w) + wl.outer(v, w)[2, 1]
    """)
    assert "<3 x float>" not in ir_text and "[3 x float]" in ir_text  # memory layout only
    assert "llvm.sqrt.f32" in ir_text
    ptx = ptx_of(ir_text)
    assert "fma.rn.f32" in ptx and "sqrt.rn.f32" in ptx


def test_local_arrays_and_printf_in_device_functions():
    ir_text = lower_text("""
        @wl.func
        def show(buf, n):
            for k in range(n):
                wl.printf("%d: %f\\n", k, buf[k])

        @wl.kernel
        def k(out: wl.array(dtype=wl.float32)):
            buf = wl.local_array(8, wl.float32)
            for k in range(8):
                buf[k] = out[k]
            show(buf, 8)
    """)
    assert re.search(r"alloca \[8 x float\]", ir_text)
    # an array argument travels as its pointer, extents and strides
    assert re.search(r'define internal void @"k__show_\d+"\(ptr %"buf", i32 %"buf\.1", '
                     r'i32 %"buf\.2", i32 %"n"\)', ir_text)
    assert 'c"%d: %f\\0a\\00"' in ir_text.lower()
    assert "vprintf" in ptx_of(ir_text)


@wl.func
def host_norm(v):
    return wl.sqrt(wl.dot(v, v)) + wl.floor(1.5) + wl.abs(-1.0) + wl.max(0.0, -2.0)


def test_math_builtins_also_run_on_the_host():
    import numpy as np
    assert host_norm(np.array([3.0, 4.0, 0.0])) == 7.0  # a @wl.func called as Python
    assert wl.erf(0.5) == pytest.approx(math.erf(0.5)) and wl.clamp(5, 0, 3) == 3
    assert wl.round(2.5) == 2 and wl.min(3, 1) == 1  # Python's own, for star imports
    with pytest.raises(TypeError, match="only be called inside"):
        wl.syncthreads()


# -- print() of floats: Python's str(float) for integral values --------------------------------
#: values whose str() ends in ".0" in Python, and values printed by "%g"
_PRINT_VALUES = [1.0, 0.0, -0.0, -3.0, 0.5, 1e6, 16777216.0, 2.0 ** 52, 1e16, 1e-7,
                 float("inf"), float("-inf"), float("nan")]


def _printed_lines(k, *inputs, dim):
    import numpy as np  # noqa: F401 - the launch reads numpy arrays

    res = wl.launch(k, dim=dim, inputs=list(inputs), device="sim")
    return res.printed.splitlines()


def _python_text(v: float) -> str:
    """What print() should show: Python's text for an integral value below 1e16, else %g."""
    return str(v) if v == v and abs(v) < 1e16 and v == int(v) else "%g" % v


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_print_of_a_float_reads_like_python(dtype):
    import numpy as np

    k = kernel_from(f"""
        @wl.kernel
        def show(x: wl.array(dtype=wl.{dtype})):
            i = wl.tid()
            print("x =", x[i], "i =", i)
    """)
    x = np.array(_PRINT_VALUES, dtype=dtype)
    lines = _printed_lines(k, x, dim=len(x))
    want = [f"x = {_python_text(float(v))} i = {i}" for i, v in enumerate(x)]
    assert lines == want
    assert lines[:3] == ["x = 1.0 i = 0", "x = 0.0 i = 1", "x = -0.0 i = 2"]
    for arch in ("sm_80", "sm_90"):  # ptxas accepts the formats' choice for both
        assert wl.compile(k, arch=arch).resources.registers > 0


def test_print_of_a_bool_says_true_or_false_like_python():
    import numpy as np

    k = kernel_from("""
        @wl.kernel
        def flags(x: wl.array(dtype=wl.float32)):
            i = wl.tid()
            print(i, x[i] > 0.0, x[i] < 0.0, x[i], True)
            wl.printf("%d\\n", x[i] > 0.0)       # an explicit format: the number
    """)
    x = np.array([1.5, -2.0], dtype=np.float32)
    lines = _printed_lines(k, x, dim=len(x))
    assert sorted(lines) == sorted(["0 True False 1.5 True", "1 False True -2.0 True", "1", "0"])
    for arch in ("sm_80", "sm_90"):
        assert wl.compile(k, arch=arch).resources.registers > 0


def test_print_of_many_floats_and_printf_keep_their_rules():
    import numpy as np

    k = kernel_from("""
        @wl.kernel
        def many(x: wl.array(dtype=wl.float32)):
            i = wl.tid()
            v = x[i]
            print(v, v, v, v, v, sep=",")      # past the formats' choice: %g plus ".0"
            wl.printf("%g %f\\n", v, v)          # an explicit format is the user's
    """)
    x = np.array([2.0, 0.25, 3e6, 1e20], dtype=np.float32)
    lines = _printed_lines(k, x, dim=len(x))
    assert sorted(lines) == sorted([",".join([t] * 5) for t in ("2.0", "0.25", "3e+06", "1e+20")]
                                   + ["2 2.000000", "0.25 0.250000", "3e+06 3000000.000000",
                                      "1e+20 100000002004087734272.000000"])
    for arch in ("sm_80", "sm_90"):
        assert wl.compile(k, arch=arch).resources.registers > 0
