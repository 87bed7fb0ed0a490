"""Kernels for ``test_hang_detection.py``, run one per subprocess (``python hang_cases.py
NAME`` prints the launch's findings and outputs as JSON), so that a detection that regresses
makes the test time out and fail instead of hanging the test run.

Endless loops the simulator used to run until Ctrl-C (no default instruction budget): a
loop with barriers or shuffles while some threads of the batch are elsewhere (past ``dim=``,
or in the other half of a loop LLVM split), a vote over memory no thread writes, a wait of
10**12 cycles on ``wl.clock64()``; and finite loops of the same shapes, which must run to
their end with no finding.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

import warp_lab as wl

I32 = wl.array(dtype=wl.int32)
I64 = wl.array(dtype=wl.int64)


@wl.kernel
def sync_forever(x: I32):
    while True:     # marker: sync forever
        wl.syncthreads()


@wl.kernel
def shuffle_no_halving(x: I32):
    i = wl.tid()
    v = x[i]
    off = 16
    while off > 0:      # marker: shuffle
        v += wl.shfl_down_sync(wl.FULL_MASK, v, off)
    x[i] = v


@wl.kernel
def reduce_no_halving(x: I32):
    s = wl.shared_array(64, wl.int32)
    t = wl.thread_idx.x
    s[t] = x[t]
    wl.syncthreads()
    k = 32
    while k > 0:        # (k never changes: LLVM drops this test, no PTX is on this line)
        if t < k:       # marker: reduce (the lanes split here into two loops)
            s[t] += s[t + k]
        wl.syncthreads()
    x[t] = s[t]


@wl.kernel
def reduce_halving(x: I32):
    s = wl.shared_array(64, wl.int32)
    t = wl.thread_idx.x
    s[t] = x[t]
    wl.syncthreads()
    k = 32
    while k > 0:
        if t < k:
            s[t] += s[t + k]
        wl.syncthreads()
        k //= 2
    x[t] = s[0]


@wl.kernel
def vote_on_unset_flag(x: I32):
    while not wl.all_sync(wl.FULL_MASK, wl.atomic_load(x, 0) == 1):   # marker: vote
        pass


@wl.kernel
def any_on_unset_flag(x: I32):
    while not wl.any_sync(wl.FULL_MASK, wl.atomic_load(x, 0) == 1):   # marker: any
        pass


@wl.kernel
def vote_on_flag_set_later(x: I32):
    # warp 1 works for a while, then sets the flag warp 0 votes on
    t = wl.thread_idx.x
    if t >= 32:
        k = 0
        while k < 3000:
            wl.atomic_add(x, 2, 1)
            k += 1
        if t == 32:
            wl.atomic_store(x, 0, 1)
    else:
        while not wl.any_sync(wl.FULL_MASK, wl.atomic_load(x, 0) == 1):
            pass
        x[1] = 7


@wl.kernel
def long_shuffle_loop(x: I32, n: wl.int32):
    i = wl.tid()
    v = x[i]
    k = 0
    while k < n:
        v = wl.shfl_xor_sync(wl.FULL_MASK, v, 1) + 1
        k += 1
    x[i] = v


@wl.kernel
def clock_wait(x: I32, out: I64, cycles: wl.int64):
    t0 = wl.clock64()
    while wl.clock64() - t0 < cycles:     # marker: clock wait
        pass
    out[wl.tid()] = wl.clock64() - t0


@wl.kernel
def clock_wait_beside_work(x: I32, out: I64, cycles: wl.int64):
    # warp 0 waits on the clock while warp 1 works: the clock only counts steps
    t = wl.thread_idx.x
    t0 = wl.clock64()
    if t < 32:
        while wl.clock64() - t0 < cycles:
            pass
        out[t] = wl.clock64() - t0
    else:
        k = 0
        while k < 2000:
            wl.atomic_add(x, 0, 1)
            k += 1


@wl.kernel
def clock_loop_that_never_ends(x: I32, out: I64, cycles: wl.int64):
    t0 = wl.clock64()
    k = x[0]
    while wl.clock64() - t0 < cycles or k == 0:     # marker: clock forever
        pass
    out[wl.tid()] = 1


@wl.kernel
def two_waits_forever(x: I32):
    # each warp waits for the other to go first: two different spin-waits, no setter
    t = wl.thread_idx.x
    if t < 32:
        while wl.atomic_load(x, 0) != 1:     # marker: first wait
            pass
        wl.atomic_store(x, 0, 2)
    else:
        while wl.atomic_load(x, 0) != 2:     # marker: second wait
            pass
        wl.atomic_store(x, 0, 1)


@wl.kernel
def two_waits_in_turn(x: I32, n: wl.int32):
    # the same two waits, warp 0 going first: a ping-pong of n rounds
    t = wl.thread_idx.x
    k = 0
    while k < n:
        if t == 0:
            while wl.atomic_load(x, 0) != 0:
                pass
            x[1 + k] = k
            wl.atomic_store(x, 0, 1)
        elif t == 32:
            while wl.atomic_load(x, 0) != 1:
                pass
            x[1 + k] += 10
            wl.atomic_store(x, 0, 0)
        k += 1


@wl.kernel
def nested_cycle(x: I32, n: wl.int32, c: wl.int32):
    # an inner loop of registers only, in an outer loop that reads and writes memory:
    # an even v goes round 0, 2, 4, 6, 8 and never meets 3 (c = 0); an odd one does
    i = wl.thread_idx.x
    j = 0
    while j < n:
        v = wl.atomic_load(x, i) * 2 + c
        while v != 3:           # marker: nested cycle
            v = (v + 2) % 10
        wl.atomic_add(x, i, v + j)
        j += 1


@wl.kernel
def spin_with_timeout(x: I32, out: I64, cycles: wl.int64):
    # a spin-wait with a timeout of `cycles`: thread 0 waits for a flag no thread sets
    # (x[0]), or one warp 1 sets after 200 atomics (x[1])
    t = wl.thread_idx.x
    t0 = wl.clock64()
    if t == 0:
        while wl.atomic_load(x, 0) == 0 and wl.clock64() - t0 < cycles:  # marker: timeout
            pass
        out[0] = wl.clock64() - t0
        while wl.atomic_load(x, 1) == 0 and wl.clock64() - t0 < 2 * cycles:
            pass
        out[1] = wl.atomic_load(x, 1)
    elif t == 32:
        k = 0
        while k < 200:
            wl.atomic_add(x, 2, 1)
            k += 1
        wl.atomic_store(x, 1, 5)


@wl.kernel
def poll_or_timeout(x: I32, out: I64, cycles: wl.int64):
    # `or` where `and` was meant: while the flag is unset the loop goes on, whatever time
    t0 = wl.clock64()
    while wl.atomic_load(x, 0) == 0 or wl.clock64() - t0 < cycles:  # marker: or timeout
        pass
    out[wl.thread_idx.x] = 1


@wl.kernel
def lanes_wait_for_each_other(x: I32):
    # two lanes of one warp, each polling a flag the other sets only after its own wait
    t = wl.thread_idx.x
    if t == 0:
        while wl.atomic_load(x, 1) == 0:     # marker: lane 0 waits
            pass
        wl.atomic_store(x, 0, 1)
    elif t == 1:
        while wl.atomic_load(x, 0) == 0:     # marker: lane 1 waits
            pass
        wl.atomic_store(x, 1, 1)


@wl.kernel
def lanes_set_in_turn(x: I32):
    # the same two lanes, lane 1 going first: it ends
    t = wl.thread_idx.x
    if t == 0:
        while wl.atomic_load(x, 1) == 0:
            pass
        wl.atomic_store(x, 0, 1)
    elif t == 1:
        wl.atomic_store(x, 1, 1)
        while wl.atomic_load(x, 0) == 0:
            pass
        x[2] = 7


@wl.kernel
def two_warps_poll_unset_flags(x: I32):
    # thread 0 polls x[0], thread 32 polls x[1]; nobody writes either (the other lanes of
    # both warps wait past the divergence point to exit)
    t = wl.thread_idx.x
    if t == 0:
        while wl.atomic_load(x, 0) == 0:     # marker: thread 0 polls
            pass
    elif t == 32:
        while wl.atomic_load(x, 1) == 0:     # marker: thread 32 polls
            pass


@wl.kernel
def lane_waits_for_its_warp(x: I32):
    # lane 0 waits for a flag lane 5 sets past the divergence point: it ends
    t = wl.thread_idx.x
    if t == 0:
        while wl.atomic_load(x, 0) == 0:
            pass
        x[1] = 9
    if t == 5:
        wl.atomic_store(x, 0, 1)


CASES = {
    # name: (kernel, launch keywords, extra inputs)
    "sync_forever": (sync_forever, dict(dim=40, block_dim=64), []),
    "shuffle_no_halving": (shuffle_no_halving, dict(dim=40, block_dim=64), []),
    "reduce_no_halving": (reduce_no_halving, dict(grid=1, block=64), []),
    "reduce_halving": (reduce_halving, dict(grid=1, block=64), []),
    "vote_on_unset_flag": (vote_on_unset_flag, dict(grid=1, block=64), []),
    "any_on_unset_flag": (any_on_unset_flag, dict(dim=40, block_dim=64), []),
    "vote_on_flag_set_later": (vote_on_flag_set_later, dict(grid=1, block=64), []),
    "long_shuffle_loop": (long_shuffle_loop, dict(grid=1, block=64), [5001]),
    "clock_wait": (clock_wait, dict(grid=1, block=32), ["out", 10 ** 12]),
    "clock_wait_short": (clock_wait, dict(grid=1, block=32), ["out", 1000]),
    "clock_wait_beside_work": (clock_wait_beside_work, dict(grid=1, block=64),
                               ["out", 3000]),
    "clock_loop_that_never_ends": (clock_loop_that_never_ends, dict(grid=1, block=32),
                                   ["out", 1000]),
    "two_waits_forever": (two_waits_forever, dict(grid=1, block=64), []),
    "two_waits_in_turn": (two_waits_in_turn, dict(grid=1, block=64), [40]),
    "nested_cycle_forever": (nested_cycle, dict(grid=1, block=64), [3, 0]),
    "nested_cycle": (nested_cycle, dict(grid=1, block=64), [3, 1]),
    "spin_with_timeout": (spin_with_timeout, dict(grid=1, block=64), ["out", 10 ** 12]),
    "spin_with_timeout_forever": (spin_with_timeout, dict(grid=1, block=64),
                                  ["out", 2 ** 63 - 1]),
    "poll_or_timeout": (poll_or_timeout, dict(grid=1, block=64), ["out", 10 ** 6]),
    "lanes_wait_for_each_other": (lanes_wait_for_each_other, dict(grid=1, block=32), []),
    "lanes_wait_for_each_other_2": (lanes_wait_for_each_other, dict(grid=1, block=64), []),
    "lanes_set_in_turn": (lanes_set_in_turn, dict(grid=1, block=32), []),
    "two_warps_poll_unset_flags": (two_warps_poll_unset_flags, dict(grid=1, block=64), []),
    "lane_waits_for_its_warp": (lane_waits_for_its_warp, dict(grid=1, block=32), []),
}


#: a wait on the 32-bit ``%clock`` (hand-written PTX: wl has only clock64), which wraps
#: every 2**32 cycles; ``n`` cycles as the second parameter
CLOCK32_PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry clock32(.param .u64 out, .param .u32 n)
{
  .reg .b32 %r<6>; .reg .b64 %rd<4>; .reg .pred %p<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r4, [n];
  mov.u32 %r1, %clock;
WAIT:
  mov.u32 %r2, %clock;
  sub.s32 %r3, %r2, %r1;
  setp.lt.u32 %p1, %r3, %r4;
  @%p1 bra WAIT;
  st.global.u32 [%rd1], %r3;
  ret;
}
"""


def clock32(n: int) -> dict:
    """Run :data:`CLOCK32_PTX` for a wait of ``n`` cycles: the findings and the cycles the
    thread saw pass."""
    from warp_lab import sim
    mem = sim.GlobalMemory()
    a = mem.alloc(4)
    start = time.perf_counter()
    r = sim.run(sim.parse_module(CLOCK32_PTX), "clock32", (1, 1, 1), (32, 1, 1),
                a.to_bytes(8, "little") + n.to_bytes(4, "little"), mem)
    return {"findings": [{"kind": f.kind, "message": f.message, "source_line": None}
                         for f in r.findings],
            "out": [int(np.frombuffer(mem.read(a, 4), np.uint32)[0])],
            "partial": bool(r.partial), "seconds": time.perf_counter() - start, "x": []}


def main(name: str) -> None:
    """Launch case ``name`` on the simulator and print ``{"findings": [...], "x": [...],
    "out": [...], "partial": bool, "seconds": float (the launch, its compile included),
    "sim_seconds": float (the simulator's run)}`` as one JSON line."""
    if name == "clock32_wait":
        print(json.dumps(clock32(3_000_000_000)))
        return
    kernel, kw, extra = CASES[name]
    x = np.arange(128, dtype=np.int32) % 7 if name in ("reduce_halving",
                                                        "long_shuffle_loop") \
        else np.zeros(128, np.int32)
    out = np.zeros(64, np.int64)
    inputs = [x] + [out if e == "out" else e for e in extra]
    start = time.perf_counter()
    r = wl.launch(kernel, inputs=inputs, device="sim", **kw)
    print(json.dumps({
        "findings": [{"kind": f.kind, "message": f.message, "source_line": f.source_line}
                     for f in r.findings],
        "x": x.tolist(), "out": out.tolist(), "partial": bool(r.partial),
        "seconds": time.perf_counter() - start, "sim_seconds": sum(r.times)}))


if __name__ == "__main__":
    main(sys.argv[1])
