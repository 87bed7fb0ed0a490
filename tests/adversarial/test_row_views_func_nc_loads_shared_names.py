"""Row views, device-function ``.nc`` loads and shared-variable names
(docs/language.md, "arrays" and "shared memory").

References are NumPy. Found: a shared array's symbol ``<function>_<array>_<N>`` could be
the name of the kernel itself (kernel ``g_s_1`` calling a ``@wl.func g`` with a shared
array ``s``): llvmlite raised ``DuplicatedNameError`` out of the compiler (fixed in
warp_lab/compiler/frontend.py: generated symbols skip the entry's name).
"""

import numpy as np
import pytest

import warp_lab as wl

from adv_cells import cell_kernel


def test_a_kernel_named_like_a_generated_shared_symbol_compiles_and_runs():
    kernel = cell_kernel("""
@wl.func
def g(i: int) -> float:
    s = wl.shared_array(32, wl.float32)
    s[i] = float(i)
    wl.syncthreads()
    return s[31 - i]

@wl.kernel
def g_s_1(o: wl.array(dtype=wl.float32)):
    i = wl.tid()
    o[i] = g(i)
""")
    o = np.zeros(32, np.float32)
    r = wl.launch(kernel, dim=32, inputs=[o], device="sim", checks=("memcheck", "racecheck"))
    assert not r.findings
    np.testing.assert_array_equal(o, np.arange(32, dtype=np.float32)[::-1])


def test_rows_of_strided_and_reversed_inputs_written_through_a_device_function():
    kernel = cell_kernel("""
@wl.func
def fill(row, src, v: float):
    for j in range(len(row)):
        row[j] = src[j] * 2.0 + v

@wl.kernel
def k(dst: wl.array2d(dtype=wl.float32), src: wl.array2d(dtype=wl.float32)):
    i = wl.tid()
    fill(dst[i], src[i], float(i))
""")
    base = np.arange(48, dtype=np.float32).reshape(6, 8)
    src = base[::-2, 1::2]                     # negative row stride, column stride 2
    dst = np.zeros((4, 3), np.float32).T       # transposed: a row is a column
    r = wl.launch(kernel, dim=3, inputs=[dst, src], device="sim", checks=("memcheck",))
    assert not r.findings
    np.testing.assert_array_equal(dst, src * 2 + np.arange(3, dtype=np.float32)[:, None])


def test_conditional_choice_of_a_row_says_arrays_cannot_be_chosen():
    """`a[0] if c else a[1]` said "the two branches give global 1-D array of float32 and
    global 1-D array of float32", two equal types, as if they differed."""
    import pytest

    kernel = cell_kernel("""
@wl.kernel
def k(a: wl.array2d(dtype=wl.float32), x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    r = a[0] if i > 1 else a[1]
    r[i] = -1.0
""")
    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(kernel, sass=False)
    err = info.value
    assert (err.line, err.col) == (4, 9)
    assert "cannot choose an array" in err.message and "a[0 if c else 1]" in str(err)
    assert "the two branches give" not in err.message


SMALL_INDEX = {
    "vector": ("    v = wl.vec3(1.0, 2.0, 3.0)\n    o[0] = v[n + 7]\n", "index 10", "size 3"),
    "vector_store": ("    v = wl.vec3(1.0, 2.0, 3.0)\n    v[n + 7] = 9.0\n    o[0] = v.x\n",
                     "index 10", "size 3"),
    "tuple": ("    t = (10.0, 20.0, 30.0)\n    o[0] = t[n + 100]\n", "index 103", "size 3"),
    "matrix": ("    a = wl.mat22(1.0, 2.0, 3.0, 4.0)\n    o[0] = a[n, 0]\n", "index 3", "size 2"),
    "matrix_col": ("    a = wl.mat22(1.0, 2.0, 3.0, 4.0)\n    o[0] = a[0, n]\n",
                   "index 3", "axis 1 with size 2"),
    "array_of_vectors": ("    p[0][n] = 5.0\n", "index 3", "size 3"),
    "uint64_index": ("    v = wl.vec3(1.0, 2.0, 3.0)\n"
                     "    o[0] = v[wl.uint64(2**32) + wl.uint64(n - 3)]\n", "index 4294967296",
                     "size 3"),
}


@pytest.mark.parametrize("case", list(SMALL_INDEX))
def test_debug_checks_run_time_indices_of_vectors_matrices_and_tuples(case):
    """debug=True bounds-checked array indices only: v[n + 7] of a vec3 picked v[0] (or
    stored nothing, or wrote past p[0]'s components) without a word; Python raises
    IndexError. Without debug the result is unspecified, as in C."""
    body, index, size = SMALL_INDEX[case]
    kernel = cell_kernel("@wl.kernel\ndef k(o: wl.array(dtype=wl.float32), "
                         "p: wl.array(dtype=wl.vec3), n: int):\n" + body)
    ck = wl.compile(kernel, debug=True, sass=False)
    o, p = np.zeros(1, np.float32), np.zeros((2, 3), np.float32)
    r = wl.launch(ck, dim=1, inputs=[o, p, 3], device="sim")
    assert [f.kind for f in r.findings] == ["trap"]
    assert "<adv " in r.printed and f"{index} out of bounds for axis" in r.printed
    assert size in r.printed and (p == 0).all()
