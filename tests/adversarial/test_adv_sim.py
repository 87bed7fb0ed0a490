"""Adversarial kernels on the simulator: wrong memory accesses and runaway loops.

The strict xfails document bugs: silent wrong memory accesses that memcheck
does not report, loops whose Python semantics are broken by int32
wrap-around, and launch semantics that differ from what ``dim=`` promises.
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


@pytest.mark.xfail(strict=True, reason="memcheck checks shared accesses only against the "
                   "block's whole shared window: s[4] of a 4-element shared array silently "
                   "overwrites the next shared array t[0]")
def test_shared_array_overflow_into_neighbour_is_reported():
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
    r = wl.launch(kernel, dim=4, inputs=[np.zeros(4, np.int32), 4], device="sim")
    assert "out_of_bounds" in {f.kind for f in r.findings}


@pytest.mark.xfail(strict=True, reason="the simulator does not interleave warps of a block: "
                   "thread 0 spinning on a flag that warp 7 sets never sees it (on a GPU "
                   "all warps of the block progress); without max_instructions it hangs")
def test_spin_wait_on_another_warp_of_the_block_terminates():
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
