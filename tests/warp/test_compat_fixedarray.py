"""Warp 1.19's fixed-size arrays in kernels (``wp.zeros(shape, dtype)`` called in a kernel
or ``@wp.func``, ``wp.fixedarray(shape, dtype)`` as its annotation): the kernels of
warp-lang's ``warp/tests/test_fixedarray.py`` (bodies copied, ``import warp`` swapped) on
warp_lab's simulator and on warp-lang's CPU device, their ``wp.expect_*`` reports compared;
a kernel writing what they check into a result array, compared; a memcheck finding for an
index past a ``wp.zeros`` array; and the compile errors that test file checks."""

from __future__ import annotations

import re

import numpy as np
import pytest

import warp_lab as wl
from wpc_helpers import load_module

# the kernels of warp-lang 1.19's warp/tests/test_fixedarray.py, as written there
KERNELS = '''
from typing import Any

import warp as wp


@wp.kernel
def test_zeros():
    arr = wp.zeros(shape=(2, 3), dtype=int)
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            arr[i][j] = i * arr.shape[1] + j

    wp.expect_eq(arr[0][0], 0)
    wp.expect_eq(arr[0][1], 1)
    wp.expect_eq(arr[0][2], 2)
    wp.expect_eq(arr[1][0], 3)
    wp.expect_eq(arr[1][1], 4)
    wp.expect_eq(arr[1][2], 5)

    r0 = arr[0]
    wp.expect_eq(r0.shape[0], 3)
    wp.expect_eq(r0.shape[1], 0)
    wp.expect_eq(r0[0], 0)
    wp.expect_eq(r0[1], 1)
    wp.expect_eq(r0[2], 2)

    r1 = arr[1]
    wp.expect_eq(r1.shape[0], 3)
    wp.expect_eq(r1.shape[1], 0)
    wp.expect_eq(r1[0], 3)
    wp.expect_eq(r1[1], 4)
    wp.expect_eq(r1[2], 5)

    s = arr[:2, 1:]
    wp.expect_eq(s.shape[0], 2)
    wp.expect_eq(s.shape[1], 2)
    wp.expect_eq(s.shape[2], 0)
    wp.expect_eq(s[0, 0], 1)
    wp.expect_eq(s[0, 1], 2)
    wp.expect_eq(s[1, 0], 4)
    wp.expect_eq(s[1, 1], 5)


@wp.func
def test_func_arg_func(arr: wp.array2d[int]):
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            arr[i][j] = i * arr.shape[1] + j


@wp.kernel
def test_func_arg():
    arr = wp.zeros(shape=(2, 3), dtype=int)
    test_func_arg_func(arr)

    wp.expect_eq(arr[0][0], 0)
    wp.expect_eq(arr[0][1], 1)
    wp.expect_eq(arr[0][2], 2)
    wp.expect_eq(arr[1][0], 3)
    wp.expect_eq(arr[1][1], 4)
    wp.expect_eq(arr[1][2], 5)


@wp.func
def test_func_return_func():
    arr = wp.zeros(shape=2, dtype=int)
    for i in range(arr.shape[0]):
        arr[i] = i

    return arr


@wp.kernel
def test_func_return():
    arr = test_func_return_func()

    wp.expect_eq(arr[0], 0)
    wp.expect_eq(arr[1], 1)


@wp.func
def test_func_return_annotation_func() -> wp.fixedarray(shape=(2, 3), dtype=int):
    arr = wp.zeros(shape=(2, 3), dtype=int)
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            arr[i][j] = i * arr.shape[1] + j

    return arr


@wp.kernel
def test_func_return_annotation():
    arr = test_func_return_annotation_func()

    wp.expect_eq(arr[0][0], 0)
    wp.expect_eq(arr[0][1], 1)
    wp.expect_eq(arr[0][2], 2)
    wp.expect_eq(arr[1][0], 3)
    wp.expect_eq(arr[1][1], 4)
    wp.expect_eq(arr[1][2], 5)


@wp.kernel
def test_capture_if_kernel():
    arr = wp.zeros(shape=(2, 3), dtype=int)
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            arr[i][j] = i * arr.shape[1] + j

    wp.expect_eq(arr[0][0], 0)
    wp.expect_eq(arr[0][1], 1)
    wp.expect_eq(arr[0][2], 2)
    wp.expect_eq(arr[1][0], 3)
    wp.expect_eq(arr[1][1], 4)
    wp.expect_eq(arr[1][2], 5)


@wp.struct
class test_func_struct_MyStruct:
    offset: int
    dist: float


@wp.func
def test_func_struct_func():
    arr = wp.zeros(shape=(2, 3), dtype=test_func_struct_MyStruct)
    count = float(arr.shape[0] * arr.shape[1] - 1)
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            arr[i][j].offset = i * arr.shape[1] + j
            arr[i][j].dist = float(arr[i][j].offset) / count

    return arr


@wp.kernel
def test_func_struct():
    arr = test_func_struct_func()

    wp.expect_eq(arr[0][0].offset, 0)
    wp.expect_near(arr[0][0].dist, 0.0)
    wp.expect_eq(arr[0][1].offset, 1)
    wp.expect_near(arr[0][1].dist, 0.2)
    wp.expect_eq(arr[0][2].offset, 2)
    wp.expect_near(arr[0][2].dist, 0.4)
    wp.expect_eq(arr[1][0].offset, 3)
    wp.expect_near(arr[1][0].dist, 0.6)
    wp.expect_eq(arr[1][1].offset, 4)
    wp.expect_near(arr[1][1].dist, 0.8)
    wp.expect_eq(arr[1][2].offset, 5)
    wp.expect_near(arr[1][2].dist, 1.0)


@wp.func
def array_template_func_concrete(arr: wp.array[wp.vec2f]):
    """Match a fixed array against a concrete array template."""
    return arr[0]


@wp.func
def array_template_func_generic(arr: wp.array[Any]):
    """Match a fixed array against a generic array template."""
    return arr[0]


@wp.kernel
def test_fixedarray_array_polymorphism():
    """Test that fixedarray matches array templates with both concrete and generic dtypes."""
    fixed_arr_vec2 = wp.zeros(shape=(3,), dtype=wp.vec2f)
    fixed_arr_vec2[0] = wp.vec2f(1.0, 2.0)
    result_vec2 = array_template_func_concrete(fixed_arr_vec2)
    wp.expect_eq(result_vec2, wp.vec2f(1.0, 2.0))

    fixed_arr_int = wp.zeros(shape=(5,), dtype=int)
    fixed_arr_int[0] = 42
    result_int = array_template_func_generic(fixed_arr_int)
    wp.expect_eq(result_int, 42)

    fixed_arr_float = wp.zeros(shape=(4,), dtype=float)
    fixed_arr_float[0] = 3.14
    result_float = array_template_func_generic(fixed_arr_float)
    wp.expect_eq(result_float, 3.14)

    fixed_arr_vec3 = wp.zeros(shape=(2,), dtype=wp.vec3f)
    fixed_arr_vec3[0] = wp.vec3f(1.0, 2.0, 3.0)
    result_vec3 = array_template_func_generic(fixed_arr_vec3)
    wp.expect_eq(result_vec3, wp.vec3f(1.0, 2.0, 3.0))


@wp.kernel
def failing_expectation():
    arr = wp.zeros(shape=(2, 3), dtype=int)
    arr[1][2] = 7
    wp.expect_eq(arr[1][2], 5)
'''

NAMES = ["test_zeros", "test_func_arg", "test_func_return", "test_func_return_annotation",
         "test_capture_if_kernel", "test_func_struct", "test_fixedarray_array_polymorphism"]


@pytest.fixture(scope="module")
def modules(tmp_path_factory, warp_ref):
    d = tmp_path_factory.mktemp("fixedarray")
    ref = load_module(d / "ref_fixed.py", KERNELS, "warp", "wpc_ref_fixedarray")
    lab = load_module(d / "lab_fixed.py", KERNELS, "warp_lab.warp", "wpc_lab_fixedarray")
    return ref, lab


def _reports(m, kernel, capfd) -> str:
    capfd.readouterr()
    m.launch(kernel, dim=1, inputs=[], device="cpu")
    m.synchronize()
    return "".join(line for line in capfd.readouterr().out.splitlines(keepends=True)
                   if not line.startswith("Module "))   # (Warp's own build message)


@pytest.mark.parametrize("name", NAMES)
def test_warps_fixedarray_kernels_expect_what_warp_cpu_does(modules, capfd, name):
    """Each kernel's ``wp.expect_eq``/``expect_near`` checks print nothing on either
    device (a failed one prints "Error, expect_eq() failed" on both, see the next test)."""
    ref, lab = modules
    import warp_lab.warp as wp

    want = _reports(ref.wp, getattr(ref, name), capfd)
    got = _reports(wp, getattr(lab, name), capfd)
    assert got == want == "", (got, want)


def test_a_failed_expectation_prints_on_both_devices(modules, capfd):
    """The comparison above can fail: a wrong expectation on a wp.zeros array prints
    Warp's report on the simulator as on Warp's CPU."""
    ref, lab = modules
    import warp_lab.warp as wp

    want = _reports(ref.wp, ref.failing_expectation, capfd)
    got = _reports(wp, lab.failing_expectation, capfd)
    assert "Error, expect_eq() failed" in want and got.count("expect_eq() failed") == 1
    assert got.split() == want.split(), (got, want)


VALUES = '''
import warp as wp


@wp.func
def fill(arr: wp.array2d[int], base: int):
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            arr[i, j] = base + i * 10 + j


@wp.func
def make(base: int):
    a = wp.zeros(shape=(3, 4), dtype=int)
    fill(a, base)
    return a


@wp.func
def make_vec() -> wp.fixedarray(shape=3, dtype=wp.vec3):
    v = wp.zeros(shape=3, dtype=wp.vec3)
    for i in range(3):
        v[i] = wp.vec3(float(i), float(i) * 2.0, 1.5)
    return v


@wp.kernel
def k(n: int, out: wp.array(dtype=float)):
    tid = wp.tid()
    z = wp.zeros(shape=(2, 3), dtype=float)
    out[0] = z[1, 2] + float(z.shape[0] * 10 + z.shape[1])
    a = make(n)
    a[0, 0] = -1
    b = make(n)                                    # a copy each call: a's write not seen
    out[1] = float(a[0, 0])
    out[2] = float(b[0, 0])
    out[3] = float(a[2][3])
    r = a[1]
    r[1] = 99                                     # a row is a view: a sees the write
    out[4] = float(a[1, 1])
    out[5] = float(r.shape[0] * 10 + r.shape[1])
    s = a[1:, ::2]
    out[6] = float(s.shape[0] * 10 + s.shape[1])
    out[7] = float(s[1, 1])
    s[0, 0] = 55
    out[8] = float(a[1, 0])
    t = a[2, 1:3]
    out[9] = float(t[1] + t.shape[0] * 1000)
    v = make_vec()
    out[10] = wp.dot(v[2], v[1])
    for it in range(3):                           # re-zeroed every time it runs
        c = wp.zeros(shape=2, dtype=int)
        c[it % 2] += it + 1
        out[11 + it] = float(c[0] * 10 + c[1])
    out[14] = float(tid)
'''


def test_fixedarray_values_match_warp_cpu(tmp_path, warp_ref):
    """wp.zeros arrays written and read by index, row and slice views (which share the
    array's memory), passed to a @wp.func by reference, returned from one by value
    (a copy per call), of vectors, and zero-filled each time the call runs: the values
    warp-lang's CPU device computes."""
    ref = load_module(tmp_path / "ref_vals.py", VALUES, "warp", "wpc_ref_fixedarray_vals")
    lab = load_module(tmp_path / "lab_vals.py", VALUES, "warp_lab.warp",
                      "wpc_lab_fixedarray_vals")
    import warp_lab.warp as wp

    outs = []
    for m, mod in ((warp_ref, ref), (wp, lab)):
        o = m.zeros(16, dtype=m.float32, device="cpu")
        m.launch(mod.k, dim=1, inputs=[7, o], device="cpu")
        m.synchronize()
        outs.append(o.numpy())
    np.testing.assert_array_equal(outs[1], outs[0])
    assert outs[0][1] == -1 and outs[0][2] == 7 and outs[0][4] == 99


def test_an_index_past_a_zeros_array_is_a_memcheck_finding_naming_it(tmp_path):
    """A run-time index past a wp.zeros array's extent: an out-of-bounds finding that
    names the access (the same index checks as wl.local_array's)."""
    src = ("import warp as wp\n\n@wp.kernel\ndef past(n: int, out: wp.array(dtype=int)):\n"
           "    row = wp.zeros(shape=(2, 3), dtype=int)\n    row[1, n] = 5\n"
           "    out[0] = row[1, 2]\n")
    lab = load_module(tmp_path / "lab_past.py", src, "warp_lab.warp", "wpc_lab_fixedarray_past")
    import warp_lab.warp as wp

    out = wp.zeros(1, dtype=int)
    wp.launch(lab.past, dim=1, inputs=[2, out], device="cpu")
    assert out.numpy()[0] == 5 and not wp.last_launch().sim.findings
    wp.launch(lab.past, dim=1, inputs=[3, out], device="cpu")
    text = " ".join(str(f) for f in wp.last_launch().sim.findings)
    assert "row[1, n]" in text and "out of bounds" in text, text


ERRORS = {   # body of a kernel (a @wp.func `f` may precede it), message, line, column
    "runtime_shape": ("    tid = wp.tid()\n    wp.zeros(shape=(tid,), dtype=int)\n",
                      r"the `shape` argument must be specified as a constant when "
                      r"zero-initializing an array$", 6, 20),
    "annotated_array": ("    arr = f()\n",
                        r"The function `f` returns a fixed-size array whereas it has its "
                        r"return type annotated as `Array\[int32\]`\.$", None, None),
    "runtime_slice": ("    tid = wp.tid()\n    a = wp.zeros(shape=4, dtype=int)\n"
                      "    b = a[tid:]\n", "known only at run time is not supported yet", 7, 11),
    "ptr": ("    a = wp.zeros(shape=4, dtype=float)\n    p = a.ptr\n",
            r"\.ptr .* not supported yet", 6, 9),
    "array_at_ptr": ("    m_b = wp.zeros(shape=(24,), dtype=wp.float32)\n"
                     "    m_b_2d = wp.array(ptr=m_b.ptr, shape=(12,), dtype=wp.vec2)\n",
                     r"wp\.array\(ptr=\.\.\..* is not supported yet", 6, 14),
}

FUNC = ('@wp.func\ndef f() -> wp.array2d[int]:\n    arr = wp.zeros(shape=(2, 3), dtype=int)\n'
        '    return arr\n\n')


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_fixedarray_misuse_is_a_located_compile_error(tmp_path, case):
    """The errors warp-lang's test_fixedarray.py checks (a shape known only at run time,
    a fixed-size array returned as `-> wp.array2d[int]`), with Warp's words, located; and
    what warp_lab does not have yet (a slice with run-time bounds, ``.ptr``, the
    ``wp.array(ptr=...)`` of test_fixedarray_ptr_reinterpret)."""
    body, message, line, col = ERRORS[case]
    func = FUNC if case == "annotated_array" else ""
    src = f"import warp as wp\n\n{func}@wp.kernel\ndef bad():\n{body}"
    if func:   # (at the func's `return arr`)
        line, col = src.splitlines().index("    return arr") + 1, 12
    lab = load_module(tmp_path / f"lab_{case}.py", src, "warp_lab.warp",
                      f"wpc_lab_fixedarray_bad_{case}")
    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(lab.bad)
    assert re.search(message, info.value.message), info.value.message
    assert f":{line}:{col}:" in str(info.value), str(info.value)
