"""Blocks that wait for each other, and the simulator's batches of blocks.

The simulator runs a grid a batch of blocks at a time (the debugger one block at a time),
as a GPU runs as many blocks at once as fit on its SMs. A block spinning on a flag that
only a block of a later batch sets can never see it: the later batch starts when this one
ends. CUDA gives no guarantee that the blocks of a grid are resident together or start in
any order (Programming Guide: thread blocks must be able to execute independently; only a
cooperative launch guarantees co-residency), so such a kernel can hang on a GPU too. The
simulator stops it quickly with a ``co_residency`` finding (``ForwardProgress.spin_turn``) instead
of running until ``max_instructions`` or Ctrl-C; patterns in which a block waits only for
blocks that started before it (a chained scan, a "last block" counter) keep working across
batches and in the debugger.
"""

import time

import numpy as np
import pytest

import warp_lab as wl
from warp_lab import sim
from warp_lab.examples import source_line
from warp_lab.notebook.debugger import debug
from warp_lab.sim import progress

SAFETY = 2 * 10 ** 7    # a budget, so that a missed detection fails instead of hanging


@wl.kernel
def wait_for_last(flag: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.int32)):
    b = wl.block_idx.x
    t = wl.thread_idx.x
    if b == wl.grid_dim.x - 1 and t == 0:
        wl.atomic_store(flag, 0, 1)
    if b == 0 and t == 0:
        while wl.atomic_load(flag, 0) == 0:    # marker: waits for the last block
            pass
    out[wl.tid()] = 1


@wl.kernel
def reverse_chain(flags: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.int32)):
    # block b waits for block b + 1 (thread 0 spins, the others wait at the barrier)
    b = wl.block_idx.x
    t = wl.thread_idx.x
    if t == 0 and b + 1 < wl.grid_dim.x:
        while wl.atomic_load(flags, b + 1) == 0:    # marker: waits for the next block
            pass
    wl.syncthreads()
    out[wl.tid()] = b + 1
    if t == 0:
        wl.atomic_store(flags, b, 1)


@wl.kernel
def chained_scan(x: wl.array(dtype=wl.int32), flags: wl.array(dtype=wl.int32),
                 prefix: wl.array(dtype=wl.int32)):
    # inclusive prefix of the block sums; block b waits for block b - 1 (a chained scan,
    # the serial core of a decoupled look-back: the block it waits for started before it)
    b = wl.block_idx.x
    t = wl.thread_idx.x
    s = wl.shared_array(1, wl.int32)
    if t == 0:
        s[0] = 0
    wl.syncthreads()
    wl.atomic_add(s, 0, x[wl.tid()])
    wl.syncthreads()
    if t == 0:
        before = 0
        if b > 0:
            while wl.atomic_load(flags, b - 1) == 0:    # marker: waits for the block before
                pass
            before = wl.atomic_load(prefix, b - 1)
        wl.atomic_store(prefix, b, before + s[0])
        wl.threadfence()
        wl.atomic_store(flags, b, 1)


@wl.kernel
def last_block_sums(x: wl.array(dtype=wl.int32), partial: wl.array(dtype=wl.int32),
                    count: wl.array(dtype=wl.int32), total: wl.array(dtype=wl.int32)):
    # CUDA's threadFenceReduction: the block that finishes last adds the partial sums
    b = wl.block_idx.x
    t = wl.thread_idx.x
    s = wl.shared_array(1, wl.int32)
    last = wl.shared_array(1, wl.int32)
    if t == 0:
        s[0] = 0
    wl.syncthreads()
    wl.atomic_add(s, 0, x[wl.tid()])
    wl.syncthreads()
    if t == 0:
        wl.atomic_store(partial, b, s[0])
        wl.threadfence()
        ticket = wl.atomic_add(count, 0, 1)
        last[0] = 1 if ticket == wl.grid_dim.x - 1 else 0
    wl.syncthreads()
    if last[0] == 1 and t == 0:
        acc = 0
        for k in range(wl.grid_dim.x):
            acc += wl.atomic_load(partial, k)
        total[0] = acc


@wl.kernel
def grid_barrier(count: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.int32)):
    # a grid-wide barrier made of a counter: right only when every block is resident
    t = wl.thread_idx.x
    if t == 0:
        wl.atomic_add(count, 0, 1)
        while wl.atomic_add(count, 0, 0) < wl.grid_dim.x:    # marker: grid barrier
            pass
    wl.syncthreads()
    out[wl.tid()] = wl.atomic_load(count, 0)


@wl.kernel
def wait_for_a_long_reader(x: wl.array(dtype=wl.float32), n: int,
                           flag: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.float32)):
    # warp 1 reads for a long time (a loop that reads memory and writes none, like the
    # spin) before it sets the flag warp 0 waits for: the wait must not be reported
    t = wl.thread_idx.x
    if t == 32:
        acc = 0.0
        for k in range(n):
            acc += x[k]
        out[1] = acc
        wl.threadfence()
        wl.atomic_store(flag, 0, 1)
    if t == 0:
        while wl.atomic_load(flag, 0) == 0:
            pass
        out[0] = out[1]


def _launch(kernel, grid, block, inputs):
    return wl.launch(kernel, grid=grid, block=block, inputs=inputs, device="sim",
                     max_instructions=SAFETY)


def _debug(kernel, grid, block, inputs):
    """``run_to_end`` of a notebook debugging session, and its wall-clock seconds (the
    debugger's SimResult has none)."""
    session = debug(kernel, grid=grid, block=block, inputs=inputs)
    session.debugger.machine.budget = SAFETY // 10
    t0 = time.perf_counter()
    res = session.run_to_end()
    return res, time.perf_counter() - t0


def _co_residency(r, kernel, marker, waiting=0):
    """The one ``co_residency`` finding of ``r`` (a launch's SimResult), at ``marker``."""
    assert [f.kind for f in r.findings] == ["co_residency"], [str(f) for f in r.findings]
    f = r.findings[0]
    assert f.source_line == source_line(kernel, marker)
    assert f.details["waiting"] == waiting and r.partial
    assert "only a cooperative launch makes them all resident at once" in f.message
    assert "on a GPU this can hang too" in f.message
    return f


def test_a_block_waiting_for_a_later_batch_is_a_co_residency_finding():
    # 65 blocks of 1024 threads: the simulator runs 64 at a time, so block 64 starts only
    # after block 0 ended, and block 0 waits for it
    flag, out = np.zeros(1, np.int32), np.zeros(65 * 1024, np.int32)
    r = _launch(wait_for_last, 65, 1024, [flag, out])
    f = _co_residency(r.sim, wait_for_last, "# marker: waits for the last block")
    assert f.block == (0, 0, 0) and f.thread == (0, 0, 0)
    assert f.details["blocks_not_started"] == 1 and f.details["blocks_at_a_time"] == 64
    assert f.details["spinning"] == 1
    assert ("1 thread of block 0 spins in the loop" in f.message
            and "no thread of the running blocks 0 to 63 writes what it waits for" in f.message
            and "Block 64 (1 of 65) starts only after these end: the simulator runs 64 "
                "blocks at a time" in f.message), f.message
    assert r.sim.seconds < 5 and r.sim.instructions < 2 * 10 ** 6   # early, not by a budget
    assert flag[0] == 0 and (out == 0).all()     # a stopped launch leaves the arrays alone
    # the same kernel with every block in one batch ends: block 1 sets the flag
    flag, out = np.zeros(1, np.int32), np.zeros(8 * 64, np.int32)
    r = _launch(wait_for_last, 8, 64, [flag, out])
    assert not r.findings and flag[0] == 1 and (out == 1).all()


def test_the_debugger_runs_one_block_at_a_time_so_any_cross_block_wait_is_found():
    flag, out = np.zeros(1, np.int32), np.zeros(2 * 32, np.int32)
    res, seconds = _debug(wait_for_last, 2, 32, [flag, out])
    f = _co_residency(res, wait_for_last, "# marker: waits for the last block")
    assert "the debugger runs 1 block at a time" in f.message
    assert f.details["blocks_at_a_time"] == 1 and seconds < 5


@pytest.mark.parametrize("how", ["launch", "debug"])
def test_threads_waiting_at_the_barrier_for_the_spinning_thread_are_named(how):
    # thread 0 of each block spins, the other threads of the block wait at its barrier
    if how == "launch":
        grid, block = 65, 1024
        flags, out = np.zeros(grid, np.int32), np.zeros(grid * block, np.int32)
        res = _launch(reverse_chain, grid, block, [flags, out]).sim
        seconds, waiting = res.seconds, 64 * 1023
    else:
        grid, block = 3, 64
        flags, out = np.zeros(grid, np.int32), np.zeros(grid * block, np.int32)
        res, seconds = _debug(reverse_chain, grid, block, [flags, out])
        waiting = 63
    f = _co_residency(res, reverse_chain, "# marker: waits for the next block", waiting)
    assert f"the other {waiting} live threads wait at a barrier or warp-sync" in f.message
    assert seconds < 10


def test_the_reverse_chain_ends_when_its_blocks_run_together():
    grid, block = 6, 64
    flags, out = np.zeros(grid, np.int32), np.zeros(grid * block, np.int32)
    r = _launch(reverse_chain, grid, block, [flags, out])
    assert not r.findings and (flags == 1).all()
    assert (out == np.repeat(np.arange(1, grid + 1), block)).all()


def test_a_grid_barrier_needs_every_block_resident():
    # atomics that leave memory as it is (atomic_add of 0) poll like atomic_load
    grid, block = 4, 32
    count, out = np.zeros(1, np.int32), np.zeros(grid * block, np.int32)
    r = _launch(grid_barrier, grid, block, [count, out])
    assert not r.findings and count[0] == grid and (out == grid).all()
    count, out = np.zeros(1, np.int32), np.zeros(grid * block, np.int32)
    res, _ = _debug(grid_barrier, grid, block, [count, out])
    f = _co_residency(res, grid_barrier, "# marker: grid barrier", waiting=31)
    assert "(its atomics leave memory as it is)" in f.message
    assert "Blocks 1 to 3 (3 of 4) start only after these end" in f.message


@pytest.mark.parametrize("how", ["launch one batch", "launch two batches", "debug"])
def test_a_chained_scan_waits_only_for_blocks_that_started_before(how):
    grid, block = (65, 1024) if how == "launch two batches" else (7, 64)
    rng = np.random.default_rng(5)
    x = rng.integers(-50, 50, grid * block).astype(np.int32)
    flags, prefix = np.zeros(grid, np.int32), np.zeros(grid, np.int32)
    if how == "debug":
        res, _ = _debug(chained_scan, grid, block, [x, flags, prefix])
        assert not res.findings and not res.partial
        return   # (a debugging session works on copies: nothing to compare with here)
    r = _launch(chained_scan, grid, block, [x, flags, prefix])
    assert not r.findings and not r.partial
    np.testing.assert_array_equal(prefix, np.cumsum(x.reshape(grid, block).sum(1)))
    assert (flags == 1).all()


@pytest.mark.parametrize("how", ["launch", "debug"])
def test_a_last_block_counter_needs_no_co_residency(how):
    grid, block = 9, 64
    x = np.arange(grid * block, dtype=np.int32) % 97
    partial, count, total = (np.zeros(grid, np.int32), np.zeros(1, np.int32),
                             np.zeros(1, np.int32))
    if how == "debug":
        res, _ = _debug(last_block_sums, grid, block, [x, partial, count, total])
        assert not res.findings and not res.partial
        return
    r = _launch(last_block_sums, grid, block, [x, partial, count, total])
    assert not r.findings and count[0] == grid and total[0] == x.sum()


def test_a_spin_waiting_for_a_long_read_only_loop_of_another_warp_is_not_reported():
    # many looks while warp 1 reads: every register of the spin stays the same, but warp 1
    # runs elsewhere, so nothing is reported and the wait ends
    n = 8 * progress.SPIN_CHECK
    x = np.ones(n, np.float32)
    flag, out = np.zeros(1, np.int32), np.zeros(2, np.float32)
    r = _launch(wait_for_a_long_reader, 1, 64, [x, n, flag, out])
    assert not r.findings and out.tolist() == [n, n]
    res, _ = _debug(wait_for_a_long_reader, 1, 64, [x, n, flag, out])
    assert not res.findings and not res.partial


def test_a_2d_grid_names_blocks_by_their_index():
    @wl.kernel
    def wait_2d(flag: wl.array(dtype=wl.int32)):
        if wl.block_idx.x == 1 and wl.block_idx.y == 1 and wl.thread_idx.x == 0:
            wl.atomic_store(flag, 0, 1)
        if wl.block_idx.x == 0 and wl.block_idx.y == 0 and wl.thread_idx.x == 0:
            while wl.atomic_load(flag, 0) == 0:
                pass

    res, _ = _debug(wait_2d, (2, 2), 32, [np.zeros(1, np.int32)])
    (f,) = res.findings
    assert f.kind == "co_residency" and f.block == (0, 0, 0)
    assert "1 thread of block (0, 0, 0) spins" in f.message
    # named one by one: "(1, 0, 0) to (1, 1, 0)" read as a rectangle, which (0, 1, 0) is not in
    assert "Blocks (1, 0, 0), (0, 1, 0) and (1, 1, 0) (3 of 4) start only after" in f.message, \
        f.message


def test_sim_run_names_the_loop_by_ptx_line():
    ck = wl.compile(wait_for_last, cache=False, sass=False)
    from warp_lab.runtime.sim_backend import kernel_module
    mod = kernel_module(ck)
    mem = sim.GlobalMemory()
    flag, out = mem.alloc(4), mem.alloc(4 * 4 * 32)
    from warp_lab.compiler import abi
    params = abi.pack_params(ck.param_layout, (128, 1, 1),
                             [abi.ArrayArg(flag, (1,), (1,)), abi.ArrayArg(out, (128,), (1,))])
    # 4 blocks of 32, two at a time: blocks 2 and 3 start after 0 and 1 end
    res = sim.run(mod, ck.entry, 4, 32, params, mem, batch_threads=64,
                  max_instructions=SAFETY)
    (f,) = res.findings
    assert f.kind == "co_residency" and f.details["blocks_at_a_time"] == 2
    poll = f.details["polled_loads"]
    assert [mod.code[i].text.split()[0] for i in range(len(mod.code))
            if mod.code[i].line in poll] == ["ld.relaxed.gpu.global.b32"]
    assert "running blocks 0 and 1" in f.message and "Blocks 2 and 3 (2 of 4)" in f.message


def test_a_spin_wait_compiled_at_opt_0_is_found():
    # at opt=0 LLVM lays the loop's exit block out before the loop and jumps back to it
    # from the loop's exit (a backward branch on no cycle): the spin-wait is still the
    # two-instruction loop, not one with the exit block's store and ret in it
    ck = wl.compile(wait_for_last, cache=False, sass=False, opt=0)
    from warp_lab.compiler import abi
    from warp_lab.runtime.sim_backend import kernel_module
    mod = kernel_module(ck)
    mem = sim.GlobalMemory()
    flag, out = mem.alloc(4), mem.alloc(4 * 4 * 32)
    params = abi.pack_params(ck.param_layout, (128, 1, 1),
                             [abi.ArrayArg(flag, (1,), (1,)), abi.ArrayArg(out, (128,), (1,))])
    res = sim.run(mod, ck.entry, 4, 32, params, mem, batch_threads=64,
                  max_instructions=SAFETY // 10)
    assert [f.kind for f in res.findings] == ["co_residency"], [str(f) for f in res.findings]
    assert res.instructions < 10 ** 5      # found by the spin check, not by the budget
    # and a wait that ends still ends at opt=0
    flag, out = np.zeros(1, np.int32), np.zeros(8 * 64, np.int32)
    r = wl.launch(wait_for_last, grid=8, block=64, inputs=[flag, out], device="sim",
                  max_instructions=SAFETY, opt=0)
    assert not r.findings and flag[0] == 1 and (out == 1).all()
