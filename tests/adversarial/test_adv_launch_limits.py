"""Adversarial launch sizes and argument kinds on the simulator.

Found: a grid CUDA allows but far too big to finish on the simulator,
``grid=(65535, 65535, 1)`` of 1024 threads, raised numpy's MemoryError out of
``wl.launch`` before its first block: the simulator allocated its per-warp
counters (``Metrics.warp_issued``) for the whole grid, 2**37 of them (fixed in
warp_lab/sim/machine.py: they grow with the blocks started).
"""

import numpy as np
import pytest

import warp_lab as wl

from adv_cells import cell_kernel


def test_huge_grid_starts_and_stops_cleanly_on_the_simulator():
    kernel = cell_kernel("""
        @wl.kernel
        def k(x: wl.array(dtype=wl.int32)):
            i = wl.block_idx.x * wl.block_dim.x + wl.thread_idx.x
            if i < len(x) and wl.block_idx.y == 0:
                x[i] = i
    """)
    x = np.zeros(64, np.int32)
    batches = []

    def stop_after_one_batch(done, total):
        batches.append((done, total))
        raise RuntimeError("enough")

    r = wl.launch(kernel, grid=(65535, 65535, 1), block=(1024, 1, 1), inputs=[x],
                  device="sim", progress=stop_after_one_batch)
    assert r.partial and [f.kind for f in r.findings] == ["interrupted"]
    done, total = batches[0]
    assert total == 65535 * 65535 and 0 < done < 1000
    assert (x == 0).all()   # a stopped launch leaves the arrays as they were
    met = r.sim.metrics
    assert met.warp_issued.size == met.warp_active_lanes.size == done * 32
    assert (met.warp_issued > 0).all()


VEC = """
@wl.kernel
def k(o: wl.array(dtype=wl.float32), v: wl.vec3i, w: wl.vec2):
    o[0] = float(v.x + v.y + v.z) + w.x + w.y
"""


@pytest.mark.parametrize("v, w, fragment", [
    ([1, 2, 3.7], [0.0, 0.0], "floats (v[2] = 3.7)"),           # was 3: truncated silently
    (np.array([1.0, 2.0, 3.0]), [0.0, 0.0], "floats (v[0] = 1.0)"),
    ([1, 2, float("nan")], [0.0, 0.0], "floats (v[2] = nan)"),
    ([1, 2, 3], [True, False], "bools (w[0] = True)"),          # was 1.0, 0.0
])
def test_vector_components_follow_the_scalar_rules(v, w, fragment):
    """An int32 scalar parameter refuses 3.0 and a float one refuses True; the components of
    a vec3i/vec2 parameter were converted instead (3.7 became 3)."""
    o = np.zeros(1, np.float32)
    with pytest.raises(wl.LaunchError, match="expects wl.vec") as info:
        wl.launch(cell_kernel(VEC), dim=1, inputs=[o, v, w], device="sim")
    assert fragment in str(info.value) and "astype" in str(info.value)
    assert o[0] == 0


def test_vector_components_of_the_right_kind_are_accepted():
    o = np.zeros(1, np.float32)
    wl.launch(cell_kernel(VEC), dim=1, inputs=[o, np.array([1, 2, 3], np.int64), (0.5, 2)],
              device="sim")
    assert o[0] == 8.5


@pytest.mark.parametrize("dtype", [np.int8, np.bool_, np.float32])
def test_element_zero_of_an_empty_array_is_out_of_bounds(dtype):
    """An empty array was simulated as one byte: x[0] of an empty int8 or bool array was
    read and written without a memcheck finding (and 'x' was 'of 1 bytes' in the others)."""
    name = np.dtype(dtype).name.rstrip("_") if dtype is not np.bool_ else "bool_"
    kernel = cell_kernel(f"""
        @wl.kernel
        def k(x: wl.array(dtype=wl.{name}), o: wl.array(dtype=wl.int32)):
            o[0] = wl.int32(x[0])
            x[0] = x[1]
    """)
    o = np.full(1, 7, np.int32)
    r = wl.launch(kernel, dim=1, inputs=[np.zeros(0, dtype), o], device="sim")
    assert [(f.kind, f.source_line) for f in r.findings] == [("out_of_bounds", 3)]
    assert "past the end of 'x' (0 bytes at" in r.findings[0].message
    assert o[0] == 7


def test_empty_arrays_launch_and_come_back_empty():
    kernel = cell_kernel("""
        @wl.kernel
        def k(x: wl.array(dtype=wl.int8), a: wl.array2d(dtype=wl.float32)):
            i = wl.tid()
            if i < len(x):
                x[i] = wl.int8(1)
            if i < a.shape[0] and a.shape[1] > 0:
                a[i][0] = 1.0
    """)
    x, a = np.zeros(0, np.int8), np.zeros((0, 3), np.float32)
    r = wl.launch(kernel, dim=4, inputs=[x, a], device="sim")
    assert not r.findings and x.size == 0 and a.shape == (0, 3)


def test_occupancy_takes_numpy_integers_as_launches_do():
    """wl.launch takes block_dim=np.int64(128); the occupancy calculator refused it as 'not
    a positive number of threads' (np.int64(128) is not an int)."""
    from warp_lab.analysis import occupancy

    ck = wl.compile(cell_kernel("@wl.kernel\ndef k(x: wl.array(dtype=wl.float32)):\n"
                                "    x[wl.tid()] = 1.0\n"), sass=False)
    want = occupancy(ck, arch="sm_90", block_size=128, dynamic_shared_mem=1024)
    got = occupancy(ck, arch="sm_90", block_size=np.int64(128),
                    dynamic_shared_mem=np.uint32(1024))
    assert got == want and got.block_size == 128 and type(got.block_size) is int
    with pytest.raises(wl.WarpLabError, match="block_size must be a positive number"):
        occupancy(ck, arch="sm_90", block_size=np.float64(128))
