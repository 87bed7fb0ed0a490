"""Forward progress: a thread spinning on a flag that another warp (or another lane of
its warp) sets must see it (CUDA Programming Guide, "Independent Thread Scheduling"),
with barriers, checks, metrics, the debugger and the instruction budget unchanged."""

import signal
import struct

import numpy as np
import pytest

from warp_lab import sim
from warp_lab.errors import LaunchInterrupted
from warp_lab.sim import progress
from warp_lab.sim.control import loop_may_wait

HEAD = """
.version 8.0
.target sm_90
.address_size 64
"""

# thread `waiter` spins until flag[0] != 0, then copies flag[1] to out[0];
# thread `setter` writes flag[1] = 42, then flag[0] = 1. The spin loop sits at lower
# PCs than the setter's code, so min-PC scheduling alone would never run the setter.
SPIN = sim.parse_module(HEAD + """
.visible .entry spin(.param .u64 flag, .param .u64 out, .param .u32 waiter, .param .u32 setter)
{
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  .reg .pred %p<4>;
  ld.param.u64 %rd1, [flag];
  ld.param.u64 %rd2, [out];
  ld.param.u32 %r1, [waiter];
  ld.param.u32 %r2, [setter];
  mov.u32 %r3, %tid.x;
  setp.ne.u32 %p1, %r3, %r1;
  @%p1 bra NOTWAITER;
SPIN:
  atom.global.or.b32 %r4, [%rd1], 0;
  setp.eq.u32 %p2, %r4, 0;
  @%p2 bra SPIN;
  ld.global.u32 %r6, [%rd1+4];
  st.global.u32 [%rd2], %r6;
NOTWAITER:
  setp.ne.u32 %p3, %r3, %r2;
  @%p3 bra DONE;
  st.global.u32 [%rd1+4], 42;
  atom.global.exch.b32 %r7, [%rd1], 1;
DONE:
  ret;
}
""")


def _spin(gpu, waiter, setter, block, **kw):
    flag, out = gpu.put(np.zeros(2, np.int32)), gpu.put(np.zeros(1, np.int32))
    res = sim.run(SPIN, "spin", 1, block, struct.pack("<QQII", flag, out, waiter, setter),
                  gpu.mem, **kw)
    return res, gpu.get(flag), gpu.get(out)


@pytest.mark.parametrize("waiter,setter,block", [
    (0, 1023, 1024),     # warp 0 waits for warp 31
    (1000, 3, 1024),     # warp 31 waits for warp 0
    (0, 255, 256),
    (0, 31, 32),         # lanes of one warp (independent thread scheduling)
    (31, 0, 32),
])
def test_spin_wait_on_another_thread_terminates(gpu, waiter, setter, block):
    res, flag, out = _spin(gpu, waiter, setter, block, max_instructions=200_000)
    assert res.findings == [] and not res.partial
    assert flag.tolist() == [1, 42] and out.tolist() == [42]


def test_spin_on_a_flag_nobody_sets_is_an_infinite_loop_not_a_budget(gpu):
    # the spin's atom.or leaves memory as it is and every other thread has exited: after
    # two looks (SPIN_CHECK turns apart) at the same register, nothing can end it
    res, flag, out = _spin(gpu, 0, 5000, 256, max_instructions=200_000)
    assert [f.kind for f in res.findings] == ["infinite_loop"] and res.partial
    f = res.findings[0]
    spin = next(i.line for i in SPIN.code if i.text.startswith("atom.global.or"))
    assert f.details["polled_loads"] == [spin] and f.thread == (0, 0, 0)
    assert "(its atomics leave memory as it is)" in f.message
    assert res.instructions < 3 * 3 * progress.SPIN_CHECK + 256 * 20
    assert out.tolist() == [0]


# SPIN whose loop also counts its turns in flag[2] (an atomic that changes memory): no
# look can prove that it never ends
SPIN_COUNTING = sim.parse_module(SPIN.text.replace(
    "  atom.global.or.b32 %r4, [%rd1], 0;",
    "  atom.global.add.u32 %r8, [%rd1+8], 1;\n  atom.global.or.b32 %r4, [%rd1], 0;"))


def test_a_spin_that_changes_memory_stops_at_the_budget_or_ctrl_c(gpu):
    flag, out = gpu.put(np.zeros(3, np.int32)), gpu.put(np.zeros(1, np.int32))
    params = struct.pack("<QQII", flag, out, 0, 5000)
    res = sim.run(SPIN_COUNTING, "spin", 1, 256, params, gpu.mem, max_instructions=20_000)
    assert [f.kind for f in res.findings] == ["budget"] and res.partial
    assert 20_000 < res.instructions <= 20_000 + 256

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        with pytest.raises(LaunchInterrupted) as info:
            sim.run(SPIN_COUNTING, "spin", 1, 256, params, gpu.mem)  # runs until Ctrl-C
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    res = info.value.result
    assert [f.kind for f in res.findings] == ["interrupted"] and res.partial


# thread `prod` hands n values k*k to thread `cons` one at a time through turn/buf
# (turn = flag[0], buf = flag[1]): each value needs both threads to take turns
PINGPONG = sim.parse_module(HEAD + """
.visible .entry pingpong(.param .u64 flag, .param .u64 out, .param .u32 prod,
                         .param .u32 cons, .param .u32 n)
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<6>;
  .reg .pred %p<4>;
  ld.param.u64 %rd1, [flag];
  ld.param.u64 %rd2, [out];
  ld.param.u32 %r1, [prod];
  ld.param.u32 %r2, [cons];
  ld.param.u32 %r9, [n];
  mov.u32 %r3, %tid.x;
  setp.ne.u32 %p1, %r3, %r1;
  @%p1 bra CONS;
  mov.u32 %r5, 0;
PWAIT:
  atom.global.or.b32 %r4, [%rd1], 0;
  setp.ne.u32 %p2, %r4, 0;
  @%p2 bra PWAIT;
  mul.lo.u32 %r6, %r5, %r5;
  st.global.u32 [%rd1+4], %r6;
  atom.global.exch.b32 %r7, [%rd1], 1;
  add.u32 %r5, %r5, 1;
  setp.lt.u32 %p2, %r5, %r9;
  @%p2 bra PWAIT;
CONS:
  setp.ne.u32 %p1, %r3, %r2;
  @%p1 bra DONE;
  mov.u32 %r5, 0;
CWAIT:
  atom.global.or.b32 %r4, [%rd1], 0;
  setp.ne.u32 %p2, %r4, 1;
  @%p2 bra CWAIT;
  ld.global.u32 %r6, [%rd1+4];
  mul.wide.u32 %rd3, %r5, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r6;
  atom.global.exch.b32 %r7, [%rd1], 0;
  add.u32 %r5, %r5, 1;
  setp.lt.u32 %p2, %r5, %r9;
  @%p2 bra CWAIT;
DONE:
  ret;
}
""")


@pytest.mark.parametrize("prod,cons,block,n", [(5, 1000, 1024, 20), (1000, 5, 1024, 20),
                                               (3, 17, 32, 3)])
def test_producer_consumer_take_turns(gpu, prod, cons, block, n):
    flag, out = gpu.put(np.zeros(2, np.int32)), gpu.put(np.zeros(n, np.int32))
    res = sim.run(PINGPONG, "pingpong", 1, block,
                  struct.pack("<QQIII", flag, out, prod, cons, n), gpu.mem,
                  max_instructions=2_000_000)
    assert res.findings == [] and not res.partial
    np.testing.assert_array_equal(gpu.get(out), np.arange(n) ** 2)


# lane 0 of each warp takes a spin lock (CAS), increments a counter with a plain
# load and store, and releases the lock: the count is exact only under mutual exclusion
MUTEX = sim.parse_module(HEAD + """
.visible .entry mutex(.param .u64 lock)
{
  .reg .b32 %r<10>;
  .reg .b64 %rd<2>;
  .reg .pred %p<4>;
  ld.param.u64 %rd1, [lock];
  mov.u32 %r3, %tid.x;
  and.b32 %r4, %r3, 31;
  setp.ne.u32 %p1, %r4, 0;
  @%p1 bra DONE;
LOCK:
  atom.global.cas.b32 %r5, [%rd1], 0, 1;
  setp.ne.u32 %p2, %r5, 0;
  @%p2 bra LOCK;
  ld.volatile.global.u32 %r6, [%rd1+4];
  add.u32 %r6, %r6, 1;
  st.volatile.global.u32 [%rd1+4], %r6;
  atom.global.exch.b32 %r7, [%rd1], 0;
DONE:
  ret;
}
""")


def test_spin_lock_across_warps(gpu):
    lock = gpu.put(np.zeros(2, np.int32))
    res = sim.run(MUTEX, "mutex", 2, 256, struct.pack("<Q", lock), gpu.mem,
                  max_instructions=1_000_000)
    assert res.findings == [] and not res.partial
    assert gpu.get(lock).tolist() == [0, 2 * 256 // 32]


# thread 40 (warp 1) waits for thread 0 to publish s = 7 before the block's barrier;
# every thread reads s after it: no race, no divergent barrier, all see 7
BARRIER = sim.parse_module(HEAD + """
.visible .entry bar(.param .u64 flag, .param .u64 out)
{
  .reg .b32 %r<10>;
  .reg .b64 %rd<6>;
  .reg .pred %p<4>;
  .shared .align 4 .b8 s[4];
  ld.param.u64 %rd1, [flag];
  ld.param.u64 %rd2, [out];
  mov.u32 %r3, %tid.x;
  setp.ne.u32 %p1, %r3, 40;
  @%p1 bra SETTER;
SPIN:
  atom.global.or.b32 %r4, [%rd1], 0;
  setp.eq.u32 %p2, %r4, 0;
  @%p2 bra SPIN;
SETTER:
  setp.ne.u32 %p1, %r3, 0;
  @%p1 bra SYNC;
  st.shared.u32 [s], 7;
  atom.global.exch.b32 %r5, [%rd1], 1;
SYNC:
  bar.sync 0;
  ld.shared.u32 %r6, [s];
  mul.wide.u32 %rd3, %r3, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r6;
  ret;
}
""")


def test_spin_before_a_barrier_keeps_barrier_and_racecheck_semantics(gpu):
    flag, out = gpu.put(np.zeros(1, np.int32)), gpu.put(np.zeros(128, np.int32))
    res = sim.run(BARRIER, "bar", 1, 128, struct.pack("<QQ", flag, out), gpu.mem,
                  max_instructions=200_000)
    assert res.findings == [] and not res.partial
    assert gpu.get(out).tolist() == [7] * 128
    assert res.metrics.barriers == 128 // 32


# lane l of warp 0 loops `base + step*l` times, lane l of warp 1 (if any) l times; with
# `poll` the loop also reads out[0] (so, as far as the simulator can tell, it may be
# waiting for another thread)
def _loop(base, step, poll):
    return sim.parse_module(HEAD + f"""
.visible .entry loop(.param .u64 out)
{{
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  .reg .pred %p<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r3, %tid.x;
  and.b32 %r4, %r3, 31;
  setp.lt.u32 %p1, %r3, 32;
  mad.lo.u32 %r5, %r4, {step}, {base};
  selp.b32 %r6, %r5, %r4, %p1;
  mov.u32 %r7, 0;
  setp.eq.u32 %p2, %r6, 0;
  @%p2 bra DONE;
LOOP:
  {"ld.global.u32 %r8, [%rd1];" if poll else ""}
  add.u32 %r7, %r7, 1;
  setp.lt.u32 %p3, %r7, %r6;
  @%p3 bra LOOP;
DONE:
  mul.wide.u32 %rd2, %r3, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r7;
  ret;
}}
""")


def test_yielding_warps_keep_warp_metrics_of_reconverged_lanes(gpu):
    # warp 1 leaves its loop long before warp 0, so warp 0 yields to it (several
    # times: the loop reads memory); the lanes of each warp still run together
    mod = _loop(100, 3, poll=True)
    assert loop_may_wait(next(i for i in mod.code if i.op == "bra" and i.target <= i.pc), mod)
    out = gpu.put(np.zeros(64, np.int32))
    res = sim.run(mod, "loop", 1, 64, struct.pack("<Q", out), gpu.mem)
    lane = np.arange(32)
    trips = np.r_[100 + 3 * lane, lane]
    assert res.findings == []
    np.testing.assert_array_equal(gpu.get(out), trips)
    add_line = next(i.line for i in mod.code if i.text.startswith("add.u32 %r7"))
    met = res.metrics
    assert met.per_ptx_line[add_line] == trips.sum()
    assert met.warp_per_ptx_line[add_line] == trips[:32].max() + trips[32:].max()
    # per warp: 9 instructions up to the loop, 4 per iteration of its longest lane, 4 after
    assert met.warp_issued.tolist() == [9 + 4 * 193 + 4, 9 + 4 * 31 + 4]


def test_long_pure_arithmetic_divergent_loop_never_splits_its_warp(gpu):
    # 100 + 40*lane iterations (up to 1340, past the intra-warp yield threshold): a loop
    # that reads no memory cannot wait for anyone, so its lanes stay together
    mod = _loop(100, 40, poll=False)
    assert not loop_may_wait(next(i for i in mod.code if i.op == "bra" and i.target <= i.pc),
                             mod)
    out = gpu.put(np.zeros(32, np.int32))
    res = sim.run(mod, "loop", 1, 32, struct.pack("<Q", out), gpu.mem)
    trips = 100 + 40 * np.arange(32)
    np.testing.assert_array_equal(gpu.get(out), trips)
    assert res.metrics.warp_issued.tolist() == [9 + 3 * 1340 + 4]
    assert res.metrics.simt_efficiency[0] == pytest.approx(
        (9 * 32 + 3 * trips.sum() + 4 * 32) / (32 * (9 + 3 * 1340 + 4)))


def test_debugger_shows_the_spinning_warp_yielded(gpu):
    flag, out = gpu.put(np.zeros(2, np.int32)), gpu.put(np.zeros(1, np.int32))
    dbg = sim.Debugger(SPIN, "spin", 1, 64, struct.pack("<QQII", flag, out, 0, 63), gpu.mem)
    store = next(i.line for i in SPIN.code if i.text.startswith("st.global.u32 [%rd1+4]"))
    dbg.add_breakpoint(ptx_line=store)
    stop = dbg.cont()
    assert stop is not None and stop.ptx_line == store
    w0, w1 = dbg.warp(warp=0), dbg.warp(warp=1)
    assert w0.status[0] == "yielded" and w1.status[31] == "running"
    res = dbg.run_to_end()
    assert res.findings == [] and gpu.get(out).tolist() == [42]
