"""Adversarial launch sizes and argument kinds on the simulator.

Found: a grid CUDA allows but far too big to finish on the simulator,
``grid=(65535, 65535, 1)`` of 1024 threads, raised numpy's MemoryError out of
``wl.launch`` before its first block: the simulator allocated its per-warp
counters (``Metrics.warp_issued``) for the whole grid, 2**37 of them (fixed in
warp_lab/sim/machine.py: they grow with the blocks started).
"""

import numpy as np

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
