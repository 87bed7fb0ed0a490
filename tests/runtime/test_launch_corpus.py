"""Every corpus kernel through ``wl.launch(..., device="sim")``, checked against numpy.

This is the runtime's end-to-end test: compile → check arguments → pack the
parameters by the ABI → run the PTX on the simulator → copy back → compare
with the example's independent numpy reference.
"""

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.examples import CORPUS, get


def _copy(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("ex", CORPUS, ids=lambda e: e.name)
def test_corpus_kernel_on_simulator(ex):
    args = ex.make_inputs()
    before = _copy(args)
    result = wl.launch(ex.kernel, inputs=args, device="sim", **ex.launch(args).kwargs())
    assert result.device.kind == "sim" and not result.partial
    assert not result.findings, [str(f) for f in result.findings]
    ex.check(before, args)
    if ex.printed is not None:
        want = sorted(ex.printed(before))
        assert sorted(result.printed.splitlines()) == want


def test_wl_arrays_and_numpy_give_the_same_result():
    ex = get("saxpy")
    args = ex.make_inputs()
    before = _copy(args)
    x, y = wl.array(args[0]), wl.array(args[1])
    wl.launch(ex.kernel, inputs=[x, y, args[2]], device="sim", **ex.launch(args).kwargs())
    wl.launch(ex.kernel, inputs=args, device="sim", **ex.launch(args).kwargs())
    np.testing.assert_array_equal(y.numpy(), args[1])
    ex.check(before, [before[0], y.numpy(), before[2]])


def test_non_contiguous_and_aliasing_views():
    ex = get("saxpy")
    base = np.arange(64, dtype=np.float32)
    x, y = base[::2], base[1::2]  # interleaved views of one buffer
    want = 3.0 * x + y
    wl.launch(ex.kernel, dim=32, inputs=[x, y, 3.0], device="sim")
    np.testing.assert_array_equal(base[1::2], want)
    np.testing.assert_array_equal(base[::2], np.arange(0, 64, 2, dtype=np.float32))
    r = np.arange(16, dtype=np.float32)
    out = np.zeros(16, dtype=np.float32)
    wl.launch(ex.kernel, dim=16, inputs=[r[::-1], out, 1.0], device="sim")
    np.testing.assert_array_equal(out, r[::-1])


def test_repeat_starts_every_launch_from_the_same_inputs():
    ex = get("saxpy")
    args = ex.make_inputs()
    before = _copy(args)
    res = wl.launch(ex.kernel, inputs=args, device="sim", repeat=3, **ex.launch(args).kwargs())
    assert len(res.times) == 3
    ex.check(before, args)


def test_explicit_grid_form_and_dim_guard():
    ex = get("saxpy")
    x = np.ones(100, dtype=np.float32)
    y = np.zeros(100, dtype=np.float32)
    # 128 threads for 100 elements: tid() >= dim never runs, so nothing past 100 is touched
    res = wl.launch(ex.kernel, dim=100, block_dim=128, inputs=[x, y, 2.0], device="sim")
    assert res.grid == (1, 1, 1) and res.block == (128, 1, 1) and not res.findings
    np.testing.assert_array_equal(y, 2.0)
    y2 = np.zeros(128, dtype=np.float32)
    wl.launch(ex.kernel, grid=(2, 1, 1), block=(64, 1, 1), inputs=[np.ones(128, np.float32), y2, 1.0],
              device="sim")
    np.testing.assert_array_equal(y2, 1.0)


def test_launch_accepts_a_compiled_kernel_and_reports():
    ck = wl.compile(get("vector_add").kernel)
    a = np.arange(10, dtype=np.float32)
    c = np.zeros(10, dtype=np.float32)
    res = wl.launch(ck, dim=10, inputs=[a, a, c], device="sim")
    np.testing.assert_array_equal(c, 2 * a)
    text = repr(res)
    assert "vector_add" in text and "sim" in text and "thread-instructions" in text
    assert res.compiled is ck and res.argument_bytes == 3 * 40


def test_strided_arguments_get_the_general_variant():
    kernel = get("saxpy").kernel
    unit = wl.compile(kernel, sass=False)
    general = wl.compile(kernel, sass=False, unit_inner_stride=False)
    assert unit.options.unit_inner_stride and not general.options.unit_inner_stride
    # the unit-stride variant indexes without multiplying by the stride (nvcc's T* code)
    assert "mul.lo.s32" not in unit.ptx and "mul.lo.s32" in general.ptx
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(32, dtype=np.float32)
    res = wl.launch(kernel, dim=32, inputs=[x[::2], y, 1.0], device="sim")
    assert not res.compiled.options.unit_inner_stride
    np.testing.assert_array_equal(y, x[::2])
    # a CompiledKernel gets the variant compiled with its own options (arch, opt, ...)
    y[:] = 0
    res = wl.launch(unit, dim=32, inputs=[x[::2], y, 1.0], device="sim")
    assert not res.compiled.options.unit_inner_stride and res.compiled.arch == unit.arch
    np.testing.assert_array_equal(y, x[::2])
    # ... unless it does not know its @wl.kernel
    import dataclasses

    orphan = dataclasses.replace(unit, kernel=None)
    with pytest.raises(wl.LaunchError, match="'x' is strided there.*unit_inner_stride=False"):
        wl.launch(orphan, dim=32, inputs=[x[::2], y, 1.0], device="sim")
    # a row slice of a 2-D array keeps unit inner stride: no recompile needed
    ex = get("index_2d")
    args = ex.make_inputs()
    a = np.zeros((2 * args[0].shape[0], args[0].shape[1]), np.float32)
    a[::2] = args[0]
    before = [c.copy() for c in args]
    args[0] = a[::2]
    res = wl.launch(ex.kernel, inputs=args, device="sim", **ex.launch(args).kwargs())
    assert res.compiled.options.unit_inner_stride
    ex.check(before, args)


@wl.kernel
def _mark_block_threads(out: wl.array(dtype=wl.int32)):
    # CUDA-style indexing with no bounds check of its own: the entry guard is all there is
    out[wl.block_idx.x * wl.block_dim.x + wl.thread_idx.x] = wl.block_idx.x + 1


def test_kernel_without_tid_gets_an_entry_guard_only_for_partial_blocks():
    expected = np.repeat(np.arange(1, 5, dtype=np.int32), 256)  # 4 blocks of 256
    # explicit grid: every thread runs, compiled without a guard (as nvcc would)
    out = np.zeros(1024, np.int32)
    res = wl.launch(_mark_block_threads, grid=4, block=256, inputs=[out], device="sim")
    assert not res.compiled.entry_guard
    np.testing.assert_array_equal(out, expected)
    # dim= a whole number of blocks: the same guardless variant
    out[:] = 0
    res = wl.launch(_mark_block_threads, dim=1024, block_dim=256, inputs=[out], device="sim")
    assert not res.compiled.entry_guard
    np.testing.assert_array_equal(out, expected)
    # dim=1000: the last block's threads 1000..1023 must not run
    out[:] = -7
    res = wl.launch(_mark_block_threads, dim=1000, block_dim=256, inputs=[out], device="sim")
    assert res.compiled.entry_guard and res.grid == (4, 1, 1)
    np.testing.assert_array_equal(out[:1000], expected[:1000])
    np.testing.assert_array_equal(out[1000:], -7)
    # a guardless CompiledKernel gets the guarded variant with its own options (arch, opt)
    bare = wl.compile(_mark_block_threads, arch="sm_80", opt=2, sass=False)
    out[:] = -7
    res = wl.launch(bare, dim=1000, block_dim=256, inputs=[out], device="sim")
    assert res.compiled.entry_guard and (res.compiled.arch, res.compiled.options.opt) == \
        ("sm_80", 2)
    np.testing.assert_array_equal(out[1000:], -7)
    # one that does not know its @wl.kernel is refused, never run past the extent
    import dataclasses

    with pytest.raises(wl.LaunchError, match="without an entry guard.*dim=1000.*entry_guard=True"):
        wl.launch(dataclasses.replace(bare, kernel=None), dim=1000, block_dim=256,
                  inputs=[out], device="sim")
    guarded = wl.compile(_mark_block_threads, sass=False, entry_guard=True)
    out[:] = -7
    wl.launch(guarded, dim=1000, block_dim=256, inputs=[out], device="sim")
    np.testing.assert_array_equal(out[1000:], -7)
    with pytest.raises(ValueError, match="entry_guard must be True or False"):
        wl.compile(_mark_block_threads, entry_guard="yes")


@wl.kernel
def _guarded_read(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32), n: int):
    i = wl.tid()
    if i < n and x[i] > 0.0:  # x[i] must not be read for i >= n: x has n elements
        out[i] = x[i]


def test_short_circuit_skips_the_out_of_bounds_read():
    x = np.array([1.0, -2.0, 3.0], np.float32)
    out = np.zeros(8, np.float32)
    res = wl.launch(_guarded_read, dim=8, inputs=[x, out, 3], device="sim",
                    checks=("memcheck",))
    assert res.findings == []
    np.testing.assert_array_equal(out, [1, 0, 3, 0, 0, 0, 0, 0])
