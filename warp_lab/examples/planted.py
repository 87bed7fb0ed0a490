"""Kernels with deliberate bugs, one per simulator check.

These are not in :data:`warp_lab.examples.CORPUS` (they have no correct
output); they are in :data:`warp_lab.examples.PLANTED_BUGS`, each with the
report the simulator must produce: which check, what kind of fault, the
offending source line (by marker) and the first offending block/thread.

A misaligned access cannot be written in the kernel language (it has no
pointer casts), so the simulator tests cover it with hand-written PTX.
"""

import numpy as np

import warp_lab as wl
from warp_lab.examples.example import Launch, PlantedBug, rng

f32 = np.float32
BUG_BLOCK = 128
BUG_BINS = 16


@wl.kernel
def oob_write(y: wl.array(dtype=wl.float32), n: int):
    i = wl.block_idx.x * wl.block_dim.x + wl.thread_idx.x
    if i <= n:  # should be i < n
        y[i] = 2.0 * float(i)  # BUG: writes y[n]


@wl.kernel
def off_by_one_read(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    i = wl.tid()
    y[i] = x[i] + x[i + 1]  # BUG: reads x[n] in the last thread


@wl.kernel
def missing_syncthreads(x: wl.array(dtype=wl.float32), partial: wl.array(dtype=wl.float32)):
    buf = wl.shared_array(BUG_BLOCK, wl.float32)
    t = wl.thread_idx.x
    buf[t] = x[wl.block_idx.x * BUG_BLOCK + t]
    wl.syncthreads()
    s = BUG_BLOCK // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]  # BUG: reads what another warp wrote without a barrier
        s //= 2
    if t == 0:
        partial[wl.block_idx.x] = buf[0]


@wl.kernel
def divergent_syncthreads(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    buf = wl.shared_array(BUG_BLOCK, wl.float32)
    t = wl.thread_idx.x
    if t < 16:
        buf[t] = x[t]
        wl.syncthreads()  # BUG: only threads 0..15 reach this barrier
    y[t] = buf[t % 16]


@wl.kernel
def unzeroed_shared_histogram(x: wl.array(dtype=wl.int32), hist: wl.array(dtype=wl.int32)):
    bins = wl.shared_array(BUG_BINS, wl.int32)
    t = wl.thread_idx.x
    # missing: bins[t] = 0 for t < BUG_BINS, then wl.syncthreads()
    wl.atomic_add(bins, x[wl.block_idx.x * BUG_BLOCK + t], 1)  # BUG: bins never zeroed
    wl.syncthreads()
    if t < BUG_BINS:
        wl.atomic_add(hist, t, bins[t])


@wl.kernel
def runaway_loop(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.int32)):
    i = wl.tid()
    k = 0
    while x[i] >= 0.0:  # BUG: x[i] never changes
        k += 1
    y[i] = k


PLANTED_BUGS = [
    PlantedBug("oob_write", oob_write, lambda: [np.zeros(100, f32), 100],
               lambda a: Launch(grid=(2, 1, 1), block=(64, 1, 1)), "memcheck",
               "out-of-bounds write", "# BUG: writes y[n]", block=(1, 0, 0), thread=(36, 0, 0),
               description="the guard is i <= n, so thread n writes one past the end"),
    PlantedBug("off_by_one_read", off_by_one_read, lambda: [np.ones(100, f32), np.zeros(100, f32)],
               lambda a: Launch(dim=100, block_dim=64), "memcheck", "out-of-bounds read",
               "# BUG: reads x[n]", block=(1, 0, 0), thread=(35, 0, 0),
               description="x[i + 1] in the last thread reads one past the end"),
    PlantedBug("missing_syncthreads", missing_syncthreads,
               lambda: [rng("missing_syncthreads").standard_normal(2 * BUG_BLOCK).astype(f32),
                        np.zeros(2, f32)],
               lambda a: Launch(grid=(2, 1, 1), block=(BUG_BLOCK, 1, 1)), "racecheck",
               "read-after-write hazard", "# BUG: reads what another warp wrote",
               block=None, thread=None,
               description="the tree reduction lacks the barrier between steps"),
    PlantedBug("divergent_syncthreads", divergent_syncthreads,
               lambda: [np.ones(BUG_BLOCK, f32), np.zeros(BUG_BLOCK, f32)],
               lambda a: Launch(grid=(1, 1, 1), block=(BUG_BLOCK, 1, 1)), "barrier",
               "divergent barrier", "# BUG: only threads 0..15", block=(0, 0, 0),
               description="syncthreads inside a branch taken by part of the block"),
    PlantedBug("unzeroed_shared_histogram", unzeroed_shared_histogram,
               lambda: [rng("unzeroed_shared_histogram").integers(0, BUG_BINS, 2 * BUG_BLOCK)
                        .astype(np.int32), np.zeros(BUG_BINS, np.int32)],
               lambda a: Launch(grid=(2, 1, 1), block=(BUG_BLOCK, 1, 1)), "initcheck",
               "uninitialized shared read", "# BUG: bins never zeroed", block=(0, 0, 0),
               thread=(0, 0, 0),
               description="shared-memory bins counted into with atomics before anyone "
                           "zeroed them (shared memory starts as garbage on a GPU)"),
    PlantedBug("runaway_loop", runaway_loop, lambda: [np.ones(32, f32), np.zeros(32, np.int32)],
               lambda a: Launch(dim=32, block_dim=32), "budget", "instruction budget exceeded",
               "# BUG: x[i] never changes",
               description="a while loop whose condition never changes"),
]
