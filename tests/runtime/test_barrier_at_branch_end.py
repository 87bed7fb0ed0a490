"""A barrier only some threads of a block reach, at the end of a branch: the threads that
skipped it stored to memory since the block's last barrier and then exited, so the
barrier orders nothing for them (PTX ISA "bar": ``bar.sync`` is ``.aligned``, every thread
of a warp must execute the same barrier instruction). It gave no finding, because those
threads did no work *while* the others waited. The entry guard's threads (``dim=`` not a
multiple of the block), which skip the whole kernel, still give none.
"""

from __future__ import annotations

import numpy as np
import pytest

import warp_lab as wl

I32 = wl.array(dtype=wl.int32)


@wl.kernel
def barrier_at_end(x: I32):
    t = wl.thread_idx.x
    x[t] = t
    if t < 16:
        wl.syncthreads()


@wl.kernel
def reduce_with_guard(x: I32, out: I32):
    s = wl.shared_array(64, wl.int32)
    t = wl.thread_idx.x
    s[t] = x[wl.tid()]
    wl.syncthreads()
    if t == 0:
        total = 0
        for k in range(64):
            total += s[k]
        out[0] = total


@wl.kernel
def exit_then_barrier(x: I32):
    # stores, a barrier all reach, then half the block leaves before the next barrier
    s = wl.shared_array(64, wl.int32)
    t = wl.thread_idx.x
    s[t] = t
    wl.syncthreads()
    if t >= 32:
        return
    wl.syncthreads()
    x[t] = s[63 - t]


@pytest.mark.parametrize("block", [32, 64])
def test_a_barrier_at_the_end_of_a_branch_is_a_divergent_barrier(block):
    x = np.zeros(block, np.int32)
    r = wl.launch(barrier_at_end, grid=1, block=block, inputs=[x], device="sim")
    [f] = [f for f in r.findings if f.kind == "divergent_barrier"]
    assert f"while {block - 16} others never reached it" in f.message
    assert "if t < 16:" in f.message
    assert x.tolist() == list(range(block))   # still completes (sm_70+ semantics)


def test_threads_the_entry_guard_stops_are_no_divergent_barrier():
    x = np.arange(40, dtype=np.int32)
    out = np.zeros(1, np.int32)
    r = wl.launch(reduce_with_guard, dim=40, block_dim=64, inputs=[x, out], device="sim",
                  checks="memcheck,barrier")
    assert r.findings == []


def test_threads_that_leave_with_nothing_stored_since_the_last_barrier_are_no_finding():
    # their stores were ordered by the first barrier; the second orders nothing of theirs
    x = np.zeros(64, np.int32)
    r = wl.launch(exit_then_barrier, grid=1, block=64, inputs=[x], device="sim",
                  checks="memcheck,barrier")
    assert r.findings == []
    assert x[:32].tolist() == list(range(63, 31, -1))
