"""``*`` unpacking in kernel calls, ``==``/``!=`` of vectors and matrices, ``wp.print`` of
vectors and matrices, ``wp.expect_*`` (``expect_near``'s default tolerance), against
warp-lang's CPU device."""

from __future__ import annotations

import numpy as np
import pytest

import warp_lab as wl
from wpc_helpers import load_module

UNPACK = '''
import warp as wp

@wp.func
def add3(a: float, b: float, c: float):
    return a + b * 10.0 + c * 100.0

@wp.kernel
def k(arr: wp.array(dtype=int), out: wp.array(dtype=float)):
    v = wp.vec4(1.0, 2.0, 3.0, 4.0)
    v2 = wp.vec2(*v[1:3])
    v3 = wp.vec3(*v[-3:])
    v4 = wp.vec4(*v2, *v2)
    a = wp.vec3i(*arr[:3])
    b = wp.vec2i(*arr[0:4:2])
    out[0] = wp.max(*v2)
    out[1] = add3(*v3)
    out[2] = v4[3] + v4[0] * 10.0
    out[3] = float(a[0] + a[1] * 10 + a[2] * 100)
    out[4] = float(b[0] + b[1] * 10)
    out[5] = add3(*v[::2], 7.0)
'''

COMPARE = '''
import warp as wp

@wp.kernel
def k(arr: wp.array(dtype=int), out: wp.array(dtype=float)):
    v = wp.vec3(1.0, 2.0, float(arr[0]))
    w = wp.vec3(1.0, 2.0, 5.0)
    m = wp.mat22(1.0, 2.0, 3.0, float(arr[1]))
    n = wp.mat22(1.0, 2.0, 3.0, 4.0)
    vi = wp.vec2i(arr[0], arr[1])
    out[0] = float(v == w)
    out[1] = float(not (v == w))
    out[2] = float(m == n)
    out[3] = float(not (m == n))
    out[4] = float(vi == wp.vec2i(5, 6))
    if v == w and not (m == n):
        out[5] = 1.0
    wp.print(v)
    print(m)
    wp.print(out[0])
    wp.expect_eq(v, w)
    wp.expect_neq(m, n)
    wp.expect_near(1.0, 1.05, 0.1)
    wp.expect_near(1.0, 1.0000001)
    wp.expect_near(1.0, 1.1)
'''


def _run(m, mod, dev="cpu"):
    a = m.array(np.array([5, 6, 7, 8], np.int32), dtype=m.int32, device=dev)
    o = m.zeros(8, dtype=m.float32, device=dev)
    m.launch(mod.k, dim=1, inputs=[a, o], device=dev)
    m.synchronize()
    return o.numpy()


@pytest.mark.parametrize("name, src", [("unpack", UNPACK), ("compare", COMPARE)])
def test_calls_and_compares_match_warp_cpu(tmp_path, warp_ref, capfd, name, src):
    ref = load_module(tmp_path / f"ref_{name}.py", src, "warp", f"wpc_ref_calls_{name}")
    lab = load_module(tmp_path / f"lab_{name}.py", src, "warp_lab.warp", f"wpc_lab_calls_{name}")
    import warp_lab.warp as wp

    want = _run(warp_ref, ref)
    capfd.readouterr()
    got = _run(wp, lab)
    np.testing.assert_array_equal(got, want)
    if name == "compare":
        printed = capfd.readouterr().out
        assert want[:6].tolist() == [1, 0, 0, 1, 1, 1]
        # Warp's vec/mat print (components '%g ' a row) and expect_near's report, once
        assert printed.startswith("1 2 5 \n1 2 \n3 6 \n1\n"), printed
        assert printed.count("Error, expect_near() failed with tolerance") == 1, printed


def test_vector_not_equal_is_any_component_differs(tmp_path):
    """``!=`` of vectors (Warp's C++ has no ``operator!=`` for them: its CPU build fails;
    warp_lab gives ``not (a == b)``, NaN components unequal as IEEE's ==)."""
    src = ("import warp as wp\n\n@wp.kernel\ndef ne(a: wp.array(dtype=wp.vec2), "
           "b: wp.array(dtype=wp.vec2), out: wp.array(dtype=int)):\n    i = wp.tid()\n"
           "    out[i] = int(a[i] != b[i])\n")
    lab = load_module(tmp_path / "lab_ne.py", src, "warp_lab.warp", "wpc_lab_calls_ne")
    import warp_lab.warp as wp

    a = np.array([[1, 2], [1, 2], [np.nan, 0], [0, 0]], np.float32)
    b = np.array([[1, 2], [1, 3], [np.nan, 0], [-0.0, 0]], np.float32)
    out = wp.zeros(4, dtype=wp.int32)
    wp.launch(lab.ne, dim=4, inputs=[wp.array(a, dtype=wp.vec2), wp.array(b, dtype=wp.vec2),
                                     out], device="cpu")
    assert out.numpy().tolist() == [0, 1, 1, 0]


@pytest.mark.parametrize("body, message", [
    ("x = wp.max(*wp.vec2(1.0, 2.0))", "expression with calls"),
    ("x = wp.max(*a[1:n])", "constant integer bounds"),
    ("x = wp.max(*a)", r"unpacking is not supported in kernel calls for a"),
    ("x = wp.vec2(1.0, 2.0) == wp.vec3(1.0, 2.0, 3.0)", "needs the same type"),
])
def test_unpacking_and_compare_misuse_is_located(tmp_path, body, message):
    src = (f"import warp as wp\n\n@wp.kernel\ndef bad(a: wp.array(dtype=float), n: int):\n"
           f"    {body}\n")
    lab = load_module(tmp_path / "lab_bad.py", src, "warp_lab.warp", "wpc_lab_calls_bad")
    with pytest.raises(wl.KernelCompileError, match=message) as info:
        wl.compile(lab.bad)
    assert ":5:" in str(info.value)


BARE = '''
import warp as wp

@wp.kernel
def k(arr: wp.array(dtype=int), out: wp.array(dtype=float)):
    v = wp.vec3(1.0, 2.0, float(arr[0]))
    out[0] = dot(v, v)
    out[1] = clamp(float(arr[1]), 0.0, 3.0)
    expect_eq(out[1], 3.0)
    expect_eq(v, wp.vec3(1.0, 2.0, 6.0))
'''


def test_bare_builtin_names_resolve_as_warp_does(tmp_path, warp_ref, capfd):
    """A call of a Warp builtin without ``wp.`` (``dot(v, v)``, ``expect_eq(x, y)``)
    resolves among Warp's builtins in a Warp kernel (warp-lang's codegen does), and is
    still an undefined name in a ``@wl.kernel``."""
    ref = load_module(tmp_path / "ref_bare.py", BARE, "warp", "wpc_ref_calls_bare")
    lab = load_module(tmp_path / "lab_bare.py", BARE, "warp_lab.warp", "wpc_lab_calls_bare")
    import warp_lab.warp as wp

    want = _run(warp_ref, ref)
    ref_out = capfd.readouterr().out
    got = _run(wp, lab)
    np.testing.assert_array_equal(got, want)
    out = capfd.readouterr().out
    assert out.count("expect_eq() failed") == ref_out.count("expect_eq() failed") == 1

    @wl.kernel
    def py(out: wl.array(dtype=float)):
        out[0] = expect_eq(1.0, 2.0)  # noqa: F821

    with pytest.raises(wl.KernelCompileError, match="name 'expect_eq' is not defined"):
        wl.compile(py)


PRINTS = """
import warp as wp

@wp.kernel
def k(value: int, f: float, b: wp.bool):
    wp.print(wp.int8(value))
    wp.print(wp.uint64(value))
    wp.print(wp.float16(value))
    wp.print(wp.float64(value))
    wp.print(f)
    wp.print(f * 1.0e10)
    wp.print(f / 3.0)
    wp.print(b)
    wp.print(not b)
    print(wp.vec3h(wp.float16(1.5), wp.float16(2.0), wp.float16(-0.25)))
    print(wp.vec2d(1.0e-7, 123456789.0))
    print(wp.vec2i(3, -4))
    print(1.0e-5)
"""


def test_print_formats_of_every_kind_match_warp_cpu(tmp_path, warp_ref, capfd):
    """``wp.print`` of each scalar kind (int8, uint64 of a negative, float16, float64,
    bool), of float results (``%g``: 7e+09, 0.233333) and of half/double/int vectors: the
    same text as warp-lang's CPU device prints."""
    ref = load_module(tmp_path / "ref_prints.py", PRINTS, "warp", "wpc_ref_calls_prints")
    lab = load_module(tmp_path / "lab_prints.py", PRINTS, "warp_lab.warp",
                      "wpc_lab_calls_prints")
    import warp_lab.warp as wp

    capfd.readouterr()
    warp_ref.launch(ref.k, dim=1, inputs=[-3, 0.7, True], device="cpu")
    warp_ref.synchronize()
    want = "".join(line for line in capfd.readouterr().out.splitlines(keepends=True)
                   if not line.startswith("Module "))   # (Warp's own build message)
    wp.launch(lab.k, dim=1, inputs=[-3, 0.7, True], device="cpu")
    got = capfd.readouterr().out
    assert got == want and "18446744073709551613\n" in got and "7e+09\n" in got


FLOAT_BUILTIN = '''
import warp as wp

@wp.kernel
def k(h: wp.array(dtype=wp.float16), i: wp.array(dtype=int), out: wp.array(dtype=float)):
    t = wp.tid()
    out[t] = wp.float(h[t]) * 2.0 + wp.float(i[t]) / 3.0 + wp.float(0.5)
'''


def test_wp_float_in_a_kernel_is_warps_float32_conversion(tmp_path, warp_ref):
    # (warp/tests/test_fp16.py and test_codegen.py call wp.float in kernels)
    ref = load_module(tmp_path / "ref_float.py", FLOAT_BUILTIN, "warp", "wpc_ref_float")
    lab = load_module(tmp_path / "lab_float.py", FLOAT_BUILTIN, "warp_lab.warp", "wpc_lab_float")
    import warp_lab.warp as wp

    h = np.array([1.5, -2.25, 65504.0, 0.0], np.float16)
    i = np.array([7, -8, 1 << 24, 1], np.int32)
    outs = []
    for m, mod in ((warp_ref, ref), (wp, lab)):
        o = m.zeros(4, dtype=m.float32, device="cpu")
        m.launch(mod.k, dim=4, inputs=[m.array(h, dtype=m.float16, device="cpu"),
                                       m.array(i, dtype=m.int32, device="cpu"), o],
                 device="cpu")
        outs.append(o.numpy())
    assert outs[1].tobytes() == outs[0].tobytes(), outs


ARRAY_TRUTH = '''
import warp as wp

@wp.kernel
def k_and(arr: wp.array(dtype=int), result: wp.array(dtype=int)):
    tid = wp.tid()
    if arr and tid >= 0 and arr[tid] == 0:
        result[tid] = -1
        return
    result[tid] = 1

@wp.kernel
def k_or(arr: wp.array(dtype=int), result: wp.array(dtype=int)):
    tid = wp.tid()
    b = not arr
    if b or tid < 0 or arr[tid] == 0:
        result[tid] = -1
        return
    result[tid] = 2 if arr else 3
'''


def test_an_array_as_a_condition_is_its_data_pointers_truth_as_in_warp(tmp_path, warp_ref):
    # (warp/tests/test_conditional.py's short-circuit kernels; a None array is not yet)
    ref = load_module(tmp_path / "ref_truth.py", ARRAY_TRUTH, "warp", "wpc_ref_truth")
    lab = load_module(tmp_path / "lab_truth.py", ARRAY_TRUTH, "warp_lab.warp", "wpc_lab_truth")
    import warp_lab.warp as wp

    data = np.array([0, 1, 0, 2, 5], np.int32)
    for name in ("k_and", "k_or"):
        outs = []
        for m, mod in ((warp_ref, ref), (wp, lab)):
            r = m.zeros(5, dtype=m.int32, device="cpu")
            m.launch(getattr(mod, name), dim=5, inputs=[m.array(data, dtype=m.int32,
                                                                device="cpu"), r], device="cpu")
            outs.append(r.numpy().tolist())
        assert outs[1] == outs[0], (name, outs)


def test_an_array_as_a_condition_stays_refused_in_warp_labs_dialect():
    @wl.kernel
    def truth_of_array(a: wl.array(dtype=wl.int32)):
        if a:
            a[0] = 1

    with pytest.raises(wl.KernelCompileError, match="cannot be used as a condition") as e:
        wl.compile(truth_of_array, arch="sm_80")
    assert e.value.line


SCALAR_DIV = '''
import warp as wp

@wp.kernel
def k(x: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat22), y: wp.array(dtype=wp.vec3),
      n: wp.array(dtype=wp.mat22)):
    i = wp.tid()
    y[i] = 1.0 / x[i]
    n[i] = 3.0 / m[i]
'''


def test_a_scalar_divided_by_a_vector_or_matrix_is_per_component_as_in_warp(tmp_path, warp_ref):
    # (warp/tests/test_vec.py scalar_vec_div: Warp's div(Scalar, vector | matrix))
    ref = load_module(tmp_path / "ref_sdiv.py", SCALAR_DIV, "warp", "wpc_ref_sdiv")
    lab = load_module(tmp_path / "lab_sdiv.py", SCALAR_DIV, "warp_lab.warp", "wpc_lab_sdiv")
    import warp_lab.warp as wp

    x = np.array([[1.0, 2.0, 4.0], [-3.0, 0.0, 7.0]], np.float32)
    m = np.array([[[1.0, -2.0], [0.5, 0.0]], [[3.0, 9.0], [-0.0, 1e-30]]], np.float32)
    outs = []
    for mm, mod in ((warp_ref, ref), (wp, lab)):
        y, n = mm.zeros(2, dtype=mm.vec3, device="cpu"), mm.zeros(2, dtype=mm.mat22, device="cpu")
        mm.launch(mod.k, dim=2, inputs=[mm.array(x, dtype=mm.vec3, device="cpu"),
                                        mm.array(m, dtype=mm.mat22, device="cpu"), y, n],
                  device="cpu")
        outs.append((y.numpy().tobytes(), n.numpy().tobytes()))
    assert outs[1] == outs[0]


SLICES = '''
import warp as wp

vec7 = wp.types.vector(7, float)

@wp.kernel
def k(a: wp.array(dtype=wp.vec4), out: wp.array(dtype=float)):
    v = a[0]
    r = v[::-1]
    w = v[1:3]
    e = v[-3:]
    s = v[::2]
    q = wp.quat(v[0], v[1], v[2], v[3])
    qq = q[-2:]
    t = wp.transform(p=wp.vec3(v[0], v[1], v[2]))
    tt = t[:]
    u = t[1::3]
    out[0] = r[0] + r[1] * 10.0 + r[3] * 100.0
    out[1] = w[0] + w[1] * 10.0
    out[2] = e[0] + e[2] * 10.0
    out[3] = s[1]
    out[4] = qq[0] + qq[1] * 10.0
    out[5] = tt[6] + tt[2] * 10.0
    out[6] = u[0] + u[1] * 10.0
    out[7] = wp.length(v[:2])
    out[8] = float(tt == vec7(v[0], v[1], v[2], 0.0, 0.0, 0.0, 1.0))
'''


def test_constant_slices_of_vectors_quaternions_and_transforms_match_warp_cpu(tmp_path,
                                                                              warp_ref):
    # (warp/tests/test_spatial.py's t[:] == vec7(...), test_constant_precision.py's f[0:3])
    ref = load_module(tmp_path / "ref_slices.py", SLICES, "warp", "wpc_ref_slices")
    lab = load_module(tmp_path / "lab_slices.py", SLICES, "warp_lab.warp", "wpc_lab_slices")
    import warp_lab.warp as wp

    v = np.array([[1.5, -2.0, 3.25, 4.0]], np.float32)
    outs = []
    for m, mod in ((warp_ref, ref), (wp, lab)):
        o = m.zeros(9, dtype=m.float32, device="cpu")
        m.launch(mod.k, dim=1, inputs=[m.array(v, dtype=m.vec4, device="cpu"), o], device="cpu")
        outs.append(o.numpy())
    assert outs[1].tobytes() == outs[0].tobytes(), outs


@pytest.mark.parametrize("body, message", [
    ("n = 2\n    out[0] = v[0:n][0]", "a vector slice needs constant integer bounds"),
    ("out[0] = v[2:1][0]", "selects no component"),
    ("out[0] = v[::0][0]", "slice step cannot be zero"),
])
def test_bad_vector_slices_are_located(tmp_path, body, message):
    src = f'''
import warp as wp

@wp.kernel
def k(out: wp.array(dtype=float)):
    v = wp.vec4(1.0, 2.0, 3.0, 4.0)
    {body}
'''
    mod = load_module(tmp_path / "bad_slice.py", src, "warp_lab.warp",
                      f"wpc_bad_slice_{abs(hash(body))}")
    with pytest.raises(wl.KernelCompileError, match=message) as e:
        wl.compile(mod.k, arch="sm_80")
    assert e.value.line
