"""Endless loops with barriers, warp shuffles or shared memory.

The simulator stopped an endless loop of register arithmetic (``infinite_loop``) and a
spin-wait that only reads memory, but a loop with ``wl.syncthreads()``, a warp shuffle or
``wl.syncwarp()`` in it, or one that writes shared memory between barriers, ran until
Ctrl-C (no default instruction budget): ``while True: wl.syncthreads()``, a shuffle
reduction whose ``off //= 2`` was forgotten on all-equal data. When every live thread of
the batch is at the loop's head with the registers the loop writes and the shared memory
unchanged (or back at an earlier state), the batch runs the same iterations forever.
"""

import time

import numpy as np
import pytest

import warp_lab as wl

from adv_cells import cell_kernel

A = "x: wl.array(dtype=wl.int32)"
ENDLESS = {
    "syncthreads": f"def a10_sync({A}):\n    while True:\n        wl.syncthreads()\n",
    "syncwarp": f"def a10_warp({A}):\n    while True:\n        wl.syncwarp()\n",
    "shuffle": (f"def a10_shfl({A}):\n    v = x[wl.tid()]\n    off = 16\n    while off > 0:\n"
                "        v += wl.shfl_down_sync(wl.uint32(0xffffffff), v, off)\n"
                "        # off //= 2 forgotten: on zeros v stays 0\n    x[wl.tid()] = v\n"),
    "shared_cycle": (f"def a10_cycle({A}):\n    s = wl.shared_array(64, wl.int32)\n"
                     "    t = wl.thread_idx.x\n    s[t] = 0\n    wl.syncthreads()\n"
                     "    while s[t] < 10:\n        wl.syncthreads()\n"
                     "        s[t] = (s[t] + 2) % 8\n        wl.syncthreads()\n    x[t] = 1\n"),
}


@pytest.mark.parametrize("name", list(ENDLESS))
def test_endless_loop_with_collectives_stops_with_a_finding(name):
    kernel = cell_kernel("@wl.kernel\n" + ENDLESS[name])
    x = np.zeros(128, np.int32)
    start = time.perf_counter()
    # the budget (far above what the check needs) ends it without the check: a failure
    res = wl.launch(kernel, grid=2, block=64, inputs=[x], device="sim",
                    max_instructions=20_000_000)
    assert time.perf_counter() - start < 60
    loops = [f for f in res.findings if f.kind == "infinite_loop"]
    assert loops and "and the shared memory of their blocks" in loops[0].message, res.findings
    assert res.partial and (x == 0).all()


def test_a_long_loop_over_shared_memory_that_ends_is_not_stopped():
    """A shared counter advanced between barriers: each look differs, so it runs to its end
    (past several looks: LOOP_CHECK turns each)."""
    kernel = cell_kernel(f"""
@wl.kernel
def a10_count({A}):
    s = wl.shared_array(64, wl.int32)
    t = wl.thread_idx.x
    s[t] = 0
    wl.syncthreads()
    while s[0] < 12000:
        wl.syncthreads()
        s[t] = s[t] + 1
        wl.syncthreads()
    x[t] = s[t]
""")
    x = np.zeros(64, np.int32)
    res = wl.launch(kernel, grid=1, block=64, inputs=[x], device="sim")
    assert not res.findings and not res.partial
    assert (x == 12000).all()
