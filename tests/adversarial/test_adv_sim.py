"""Adversarial kernels on the simulator: wrong memory accesses and runaway loops.

Each test once documented a bug as a strict xfail: silent wrong memory
accesses that memcheck did not report, loops whose Python semantics were
broken by int32 wrap-around, launch semantics that differed from what
``dim=`` promises, a spin-wait across warps that never ended; a spin on a flag
another block sets after its ``wl.syncthreads()`` that never ended (the barrier
completed only when nothing else could run; fixed in warp_lab/sim/machine.py,
``Machine._release_arrived``).
"""

import numpy as np
import pytest

import warp_lab as wl

from adv_cells import cell_kernel


def test_atomic_out_of_range_index_is_reported_and_memory_kept():
    kernel = cell_kernel("""
        @wl.kernel
        def k(x: wl.array(dtype=wl.int32)):
            i = wl.tid()
            wl.atomic_add(x, -i - 1, 1)
    """)
    x = np.zeros(4, np.int32)
    r = wl.launch(kernel, dim=64, inputs=[x], device="sim")
    kinds = {f.kind for f in r.findings}
    assert kinds == {"out_of_bounds"}
    assert r.findings[0].source_line == 4
    assert (x == 0).all()


def test_shared_overflow_past_the_block_window_is_reported():
    kernel = cell_kernel("""
        @wl.kernel
        def k(x: wl.array(dtype=wl.int32), n: int):
            s = wl.shared_array(4, wl.int32)
            i = wl.tid()
            if i == 0:
                s[n] = 5
            wl.syncthreads()
            x[i] = s[0]
    """)
    r = wl.launch(kernel, dim=4, inputs=[np.zeros(4, np.int32), 64], device="sim")
    assert [f.kind for f in r.findings] == ["out_of_bounds"]
    assert "shared" in r.findings[0].message


def test_int64_index_is_not_truncated():
    kernel = cell_kernel("""
        @wl.kernel
        def k(x: wl.array(dtype=wl.int64), s: wl.int64):
            x[s] = wl.int64(7)
    """)
    x = np.zeros(4, np.int64)
    r = wl.launch(kernel, dim=1, inputs=[x, 2 ** 32 + 1], device="sim")
    assert (x == 0).all()
    assert [f.kind for f in r.findings] == ["out_of_bounds"]


def test_range_ending_at_int32_max_terminates():
    kernel = cell_kernel("""
        @wl.kernel
        def k(x: wl.array(dtype=wl.int32), n: int):
            c = 0
            for i in range(n - 7, n, 3):
                c += 1
            x[0] = c
    """)
    x = np.zeros(1, np.int32)
    r = wl.launch(kernel, dim=1, inputs=[x, 2 ** 31 - 1], device="sim", max_instructions=20000)
    assert not r.findings
    assert x[0] == 3


def test_dim_one_runs_one_thread_without_tid():
    kernel = cell_kernel("""
        @wl.kernel
        def k(x: wl.array(dtype=wl.int32)):
            wl.atomic_add(x, 0, 1)
    """)
    x = np.zeros(1, np.int32)
    wl.launch(kernel, dim=1, inputs=[x], device="sim")
    assert x[0] == 1


def test_shared_array_overflow_into_neighbour_is_reported():
    # s[4] of a 4-element shared array is inside the block's shared window (t follows s)
    kernel = cell_kernel("""
        @wl.kernel
        def k(x: wl.array(dtype=wl.int32), n: int):
            s = wl.shared_array(4, wl.int32)
            t = wl.shared_array(4, wl.int32)
            i = wl.tid()
            if i == 0:
                s[n] = 5
                t[0] = 1
            wl.syncthreads()
            x[i] = t[0] + s[n]
    """)
    x = np.zeros(4, np.int32)
    r = wl.launch(kernel, dim=4, inputs=[x, 4], device="sim")
    assert [(f.kind, f.source_line, f.thread) for f in r.findings] == [
        ("out_of_bounds", 7, (0, 0, 0))]
    assert "s[4] is past the end of s (4 elements)" in r.findings[0].message and (x == 0).all()
    r = wl.launch(kernel, dim=4, inputs=[x, 3], device="sim")   # the last element is fine
    assert not r.findings and (x == 1 + 5).all()


def test_spin_wait_on_another_warp_of_the_block_terminates():
    # thread 0 spins on a flag that warp 7 sets: on a GPU every warp of the block progresses
    kernel = cell_kernel("""
        @wl.kernel
        def k(x: wl.array(dtype=wl.int32)):
            i = wl.tid()
            if i == 0:
                while wl.atomic_add(x, 0, 0) == 0:
                    pass
            if i == 255:
                wl.atomic_exch(x, 0, 1)
    """)
    x = np.zeros(1, np.int32)
    r = wl.launch(kernel, dim=256, inputs=[x], device="sim", max_instructions=20000)
    assert not r.findings
    assert x[0] == 1


def _spin_on_flag_set_after_a_barrier(sync: str, setter: int):
    """Thread 0 (or 64) spins on a flag that the first thread of the other block sets after
    that block's ``sync``: on a GPU both blocks are resident and it ends."""
    spinner = 64 - setter
    return cell_kernel(f"""
        @wl.kernel
        def k(x: wl.array(dtype=wl.int32)):
            i = wl.tid()
            if i == {spinner}:
                while wl.atomic_load(x, 0) == 0:
                    pass
            elif (i >= 64) == ({setter} >= 64):
                {sync}
                if i == {setter}:
                    wl.atomic_store(x, 0, 1)
    """)


@pytest.mark.parametrize("setter", [64, 0])
def test_spin_on_a_flag_another_block_sets_after_its_barrier_ends(setter):
    """The block's barrier completed only when nothing else in the batch could run, and
    the spinning thread always could: the launch ran until Ctrl-C."""
    kernel = _spin_on_flag_set_after_a_barrier("wl.syncthreads()", setter)
    x = np.zeros(1, np.int32)
    r = wl.launch(kernel, dim=128, block_dim=64, inputs=[x], device="sim",
                  max_instructions=2_000_000)
    assert not r.findings and x[0] == 1


def test_spin_on_a_flag_set_after_a_syncwarp_naming_exited_lanes_ends():
    """The same for a warp-sync group released because its other lanes exited (the
    warp_sync check reports the mask; the launch no longer hangs)."""
    kernel = cell_kernel("""
        @wl.kernel
        def k(x: wl.array(dtype=wl.int32)):
            i = wl.tid()
            if i == 0:
                while wl.atomic_load(x, 0) == 0:
                    pass
            if i >= 48:
                return
            if i >= 32:
                wl.syncwarp(wl.FULL_MASK)
                if i == 32:
                    wl.atomic_store(x, 0, 1)
    """)
    x = np.zeros(1, np.int32)
    r = wl.launch(kernel, dim=64, block_dim=64, inputs=[x], device="sim",
                  max_instructions=2_000_000)
    assert [f.kind for f in r.findings] == ["warp_sync"] and x[0] == 1


def test_a_spin_its_own_block_barrier_waits_for_still_never_ends():
    """Thread 0 spins on a flag thread 40 sets after a barrier thread 0 never reaches: a
    deadlock on a GPU too; the barrier must not complete without thread 0."""
    kernel = cell_kernel("""
        @wl.kernel
        def k(x: wl.array(dtype=wl.int32)):
            i = wl.tid()
            if i == 0:
                while wl.atomic_load(x, 0) == 0:
                    pass
            wl.syncthreads()
            if i == 40:
                wl.atomic_store(x, 0, 1)
    """)
    x = np.zeros(1, np.int32)
    r = wl.launch(kernel, dim=64, block_dim=64, inputs=[x], device="sim",
                  max_instructions=50_000)
    # (it ran into the budget; now found: 63 threads wait at the barrier for thread 0)
    assert [(f.kind, f.source_line) for f in r.findings] == [("infinite_loop", 5)], r.findings
    assert "the other 63 live threads wait at a barrier" in r.findings[0].message
    assert r.partial and x[0] == 0


@pytest.mark.parametrize("who, dim, block_dim", [
    ("i == 0", 64, 64),            # one thread spins, the others have exited
    ("i >= 0", 64, 32),            # every thread of two blocks spins
    ("i % 3 == 1", 256, 128),      # spinners in every warp of two blocks
])
def test_a_spin_on_a_flag_no_thread_sets_is_an_infinite_loop(who, dim, block_dim):
    """wl.atomic_load in a loop that writes nothing, with every live thread of the launch
    in it: nothing can ever set the flag. It ran until Ctrl-C (max_instructions here)."""
    kernel = cell_kernel(f"""
        @wl.kernel
        def k(x: wl.array(dtype=wl.int32)):
            i = wl.tid()
            if {who}:
                while wl.atomic_load(x, 0) == 0:
                    pass
            x[1] = 1
    """)
    x = np.zeros(2, np.int32)
    r = wl.launch(kernel, dim=dim, block_dim=block_dim, inputs=[x], device="sim",
                  max_instructions=20_000_000)
    assert [(f.kind, f.source_line) for f in r.findings] == [("infinite_loop", 5)]
    assert "every live thread of the launch" in r.findings[0].message
    assert r.partial and (x == 0).all()
