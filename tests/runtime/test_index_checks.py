"""memcheck on the simulator checks each index of a 2-D (or wider) array access against its
axis's extent: ``wl.launch`` runs the ``index_checks`` variant, whose failed check is an
``out_of_bounds`` finding at the Python line and column, naming axis, index and extent.
An index past one axis that stays inside the array (``x[j, i]`` swapped) lands on another
row's element, which memcheck's address check (compute-sanitizer's too) cannot see. Real
kernels, compiled by LLVM and run on the simulator; the expected element values are
numpy's."""

import dataclasses
import inspect

import numpy as np

import warp_lab as wl
from warp_lab.compiler.artifact import INDEX_CHECK_MARK


@wl.kernel
def transpose_swapped(x: wl.array2d(dtype=wl.float32), y: wl.array2d(dtype=wl.float32)):
    i, j = wl.tid()
    y[i, j] = x[j, i]  # marker: swapped


@wl.kernel
def fill(x: wl.array2d(dtype=wl.int32)):
    i, j = wl.tid()
    x[i, j] = i * 100 + j  # marker: fill


@wl.kernel
def row_above(x: wl.array2d(dtype=wl.int32), y: wl.array2d(dtype=wl.int32)):
    i, j = wl.tid()
    y[i, j] = x[i - 1, j]  # marker: above


@wl.kernel
def neighbours(x: wl.array2d(dtype=wl.float32), y: wl.array2d(dtype=wl.float32)):
    i, j = wl.tid()
    if 0 < i < x.shape[0] - 1 and 0 < j < x.shape[1] - 1:
        y[i, j] = x[i, j - 1] + x[i, j + 1] + x[i - 1, j] + x[i + 1, j]


def _line(kernel, marker):
    lines, first = inspect.getsourcelines(kernel.fn)
    k = next(k for k, text in enumerate(lines) if f"# marker: {marker}" in text)
    return first + k, lines[k]


def test_swapped_indices_inside_the_array_are_a_finding_at_the_line_and_column():
    x = np.arange(40 * 30, dtype=np.float32).reshape(40, 30)
    y = np.zeros((40, 30), np.float32)
    r = wl.launch(transpose_swapped, dim=(40, 30), inputs=[x, y], device="sim")
    (f,) = r.findings
    assert f.kind == "out_of_bounds" and r.partial
    assert "index 30 out of bounds for axis 1 with size 30" in f.message
    assert "x[j, i]" in f.message
    line, text = _line(transpose_swapped, "swapped")
    assert f.source_line == line
    col = text.index("x[j, i]") + 1
    assert f"column {col}" in f.message
    assert f.details == {"check": "index", "array": "x", "index": (f.details["index"][0], 30),
                         "shape": (40, 30), "axis": 1, "axis_index": 30, "extent": 30,
                         "column": col, "access": "x[j, i]",
                         "checked_ptx_line": f.details["checked_ptx_line"]}
    assert f.ptx_line == 0 and "PTX line" not in str(f)  # the variant's PTX is in no pane
    assert f.details["checked_ptx_line"] > 0
    assert f.message.endswith(f"x[{f.details['index'][0]}, 30] is outside x (shape (40, 30))")
    # the thread: i = block.y * block_y + thread.y reaches 30, its j (x) is < 30
    by, ty = f.block[1], f.thread[1]
    assert by * r.block[1] + ty == 30 and f.block[0] * r.block[0] + f.thread[0] < 30
    assert INDEX_CHECK_MARK not in r.printed and r.printed == ""
    assert not y.any()  # the launch stopped: nothing written back


def test_a_grid_too_wide_for_the_second_axis_is_a_finding():
    x = np.zeros((32, 32), np.int32)
    r = wl.launch(fill, grid=4, block=256, inputs=[x], device="sim")
    (f,) = r.findings
    assert f.kind == "out_of_bounds"
    assert "index 32 out of bounds for axis 1 with size 32" in f.message
    assert f.details["axis"] == 1 and f.details["index"] == (0, 32)
    assert f.details["axis_index"] == 32 and f.details["extent"] == 32
    assert f.message.endswith(": x[0, 32] is outside x (shape (32, 32))"), f.message
    assert f.block == (0, 0, 0) and f.thread == (32, 0, 0)
    assert f.source_line == _line(fill, "fill")[0]


def test_a_negative_index_is_a_finding():
    x = np.arange(64, dtype=np.int32).reshape(8, 8)
    y = np.zeros_like(x)
    r = wl.launch(row_above, dim=(8, 8), inputs=[x, y], device="sim")
    (f,) = r.findings
    assert "index -1 out of bounds for axis 0 with size 8" in f.message
    assert f.details["index"][0] == -1 and f.details["axis"] == 0
    assert f.thread[1] == 0 and f.block[1] == 0  # i == 0


def test_in_bounds_kernels_give_no_finding_and_numpys_values():
    x = np.zeros((32, 32), np.int32)
    r = wl.launch(fill, dim=(32, 32), inputs=[x], device="sim")
    assert not r.findings
    i, j = np.indices((32, 32))
    np.testing.assert_array_equal(x, i * 100 + j)
    assert r.compiled.options.index_checks  # memcheck ran the checked variant

    a = np.random.default_rng(1).standard_normal((24, 40)).astype(np.float32)
    y = np.zeros_like(a)
    r = wl.launch(neighbours, dim=a.shape, inputs=[a, y], device="sim")
    assert not r.findings
    want = np.zeros_like(a)
    want[1:-1, 1:-1] = a[1:-1, :-2] + a[1:-1, 2:] + a[:-2, 1:-1] + a[2:, 1:-1]
    np.testing.assert_array_equal(y, want)


def test_strided_views_are_checked_against_their_own_shape():
    big = np.arange(40 * 64, dtype=np.int32).reshape(40, 64)
    view = big[::2, 10:40]                    # (20, 30), strides (128, 1) elements
    y = np.zeros((20, 30), np.int32)
    r = wl.launch(row_above, dim=(20, 30), inputs=[view[1:], y[1:]], device="sim")
    (f,) = r.findings                          # i - 1 == -1 still lies inside big
    assert "index -1 out of bounds for axis 0 with size 19" in f.message
    af = np.arange(40 * 64, dtype=np.float32).reshape(40, 64)
    v = af[::-1, ::2]                          # (40, 32): negative and non-unit strides
    out = np.zeros((40, 32), np.float32)
    r = wl.launch(neighbours, dim=v.shape, inputs=[v, out], device="sim")
    assert not r.findings
    want = np.zeros_like(out)
    want[1:-1, 1:-1] = v[1:-1, :-2] + v[1:-1, 2:] + v[:-2, 1:-1] + v[2:, 1:-1]
    np.testing.assert_array_equal(out, want)


def test_without_memcheck_the_plain_kernel_runs():
    x = np.arange(40 * 30, dtype=np.float32).reshape(40, 30)
    y = np.zeros((40, 30), np.float32)
    r = wl.launch(transpose_swapped, dim=(40, 30), inputs=[x, y], device="sim",
                  checks=("barrier",))
    assert not r.findings and not r.compiled.options.index_checks
    assert y.any()


def test_the_cells_ptx_has_no_index_checks():
    ck = wl.compile(transpose_swapped)
    assert not ck.options.index_checks and INDEX_CHECK_MARK not in ck.ptx
    assert "trap" not in ck.ptx and "vprintf" not in ck.ptx
    checked = wl.compile(transpose_swapped, index_checks=True)
    assert "vprintf" in checked.ptx and "trap;" in checked.ptx  # the string is bytes
    assert checked.options.label().endswith("index-checks")


def test_debug_keeps_its_trap_message():
    x = np.arange(40 * 30, dtype=np.float32).reshape(40, 30)
    y = np.zeros((40, 30), np.float32)
    r = wl.launch(transpose_swapped, dim=(40, 30), inputs=[x, y], device="sim", debug=True)
    (f,) = r.findings
    assert f.kind == "trap" and "index 30 out of bounds for axis 1 with size 30" in f.message
    assert INDEX_CHECK_MARK not in f.message


@wl.kernel
def count_right(x: wl.array2d(dtype=wl.int32)):
    i, j = wl.tid()
    wl.atomic_add(x, (i, j + 1), 1)


def test_an_atomics_index_is_checked_too():
    x = np.zeros((4, 8), np.int32)
    r = wl.launch(count_right, dim=(4, 8), inputs=[x], device="sim")
    (f,) = r.findings
    assert f.message.startswith("out-of-bounds index in x[i, j + 1] at column 5 (index 8 out "
                                "of bounds for axis 1 with size 8): x[0, 8] is outside x"), \
        f.message
    x = np.zeros((4, 9), np.int32)
    r = wl.launch(count_right, dim=(4, 8), inputs=[x], device="sim")
    assert not r.findings and (x[:, 1:] == 1).all() and not x[:, 0].any()


@wl.kernel
def shift_1d(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    i = wl.tid()
    y[i] = x[i] * 2.0


def test_a_kernel_without_2d_accesses_runs_as_compiled():
    # its index-checked variant's PTX is its own: the launch runs (and reports) ck itself
    ck = wl.compile(shift_1d, sass=False)
    x = np.arange(64, dtype=np.float32)
    y = np.zeros_like(x)
    r = wl.launch(ck, dim=64, inputs=[x, y], device="sim")
    assert r.compiled is ck and not r.findings
    np.testing.assert_array_equal(y, 2 * x)
    # a CompiledKernel with 2-D accesses (what a %%warp_kernel cell launches) is checked
    ck2 = wl.compile(fill, sass=False)
    r = wl.launch(ck2, grid=4, block=256, inputs=[np.zeros((32, 32), np.int32)], device="sim")
    assert r.compiled.options == dataclasses.replace(ck2.options, index_checks=True)
    assert [f.details["index"] for f in r.findings] == [(0, 32)]


def test_a_1d_kernels_variant_is_told_apart_by_its_ptx_without_ptxas(monkeypatch, tmp_path):
    # the variant's PTX stages alone show it is ck's own code: no compile of it runs ptxas,
    # on the first launch or a later one (ptxas counted through a wrapper; it still runs).
    # The kernel's text is new each run, so no cache holds a variant from an earlier one.
    import importlib.util
    import uuid

    from warp_lab.compiler import toolchain
    from warp_lab.compiler.pipeline import make_ptx_text

    path = tmp_path / "fresh_1d.py"
    path.write_text("import warp_lab as wl\n\n@wl.kernel\n"
                    "def shift_new(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):\n"
                    f"    i = wl.tid()  # {uuid.uuid4().hex}\n"
                    "    y[i] = 2.0 * x[i]\n")
    spec = importlib.util.spec_from_file_location("fresh_1d", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    shift_new = mod.shift_new
    ck = wl.compile(shift_new, sass=False)
    variant = dataclasses.replace(ck.options, index_checks=True)
    assert make_ptx_text(shift_new, variant) == ck.ptx
    runs = []
    real = toolchain.make_cubin
    monkeypatch.setattr(toolchain, "make_cubin", lambda *a, **k: runs.append(a) or real(*a, **k))
    x = np.arange(64, dtype=np.float32)
    for _ in range(2):
        y = np.zeros_like(x)
        r = wl.launch(shift_new, dim=64, inputs=[x, y], device="sim")
        assert r.compiled.ptx == ck.ptx and not r.compiled.options.index_checks
        np.testing.assert_array_equal(y, 2 * x)
    assert runs == []
    # a 2-D kernel's variant differs: make_ptx_text says so, and the launch runs the variant
    ck2 = wl.compile(fill, sass=False)
    assert make_ptx_text(fill, dataclasses.replace(ck2.options, index_checks=True)) != ck2.ptx
    assert make_ptx_text(fill, ck2.options) == ck2.ptx


SCALE = 2.0


@wl.kernel
def scaled(x: wl.array2d(dtype=wl.float32), y: wl.array2d(dtype=wl.float32)):
    i, j = wl.tid()
    y[i, j] = x[i, j] * SCALE


def test_a_compiled_kernel_runs_as_compiled_after_its_global_changed():
    # wl.launch(ck) on the simulator runs ck's code: the index-checked variant, compiled from
    # the kernel's namespace as it is now, would read SCALE = 3 (a GPU runs ck: SCALE = 2)
    global SCALE
    x = np.arange(8 * 32, dtype=np.float32).reshape(8, 32)
    ck = wl.compile(scaled)
    SCALE = 3.0
    try:
        y = np.zeros_like(x)
        r = wl.launch(ck, dim=x.shape, inputs=[x, y], device="sim")
        np.testing.assert_array_equal(y, x * 2)
        assert r.compiled is ck and not r.sim.findings
        plain = np.zeros_like(x)
        wl.launch(ck, dim=x.shape, inputs=[x, plain], device="sim", checks=None)
        np.testing.assert_array_equal(plain, y)
        # the kernel itself compiles with SCALE as it is now, and is index-checked
        fresh = np.zeros_like(x)
        r = wl.launch(scaled, dim=x.shape, inputs=[x, fresh], device="sim")
        np.testing.assert_array_equal(fresh, x * 3)
        assert r.compiled.options.index_checks
    finally:
        SCALE = 2.0
