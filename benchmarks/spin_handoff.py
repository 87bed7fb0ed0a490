"""Spin-waits between warps on the simulator: seconds per launch before and after the
idle hand-over (``warp_lab.sim.progress.IDLE_HANDOFF``).

    python benchmarks/spin_handoff.py                 # 300 rounds a case, 3 runs each
    python benchmarks/spin_handoff.py --rounds 3000 --reps 1 --after-only

Every case is a launch whose warps wait for each other through memory: a ping-pong of
two warps of one block through a flag in shared memory (``wl.atomic_load`` and
``wl.atomic_store``), the same through a flag in global memory polled with
``wl.atomic_cas`` and set with ``wl.atomic_exch`` after ``wl.threadfence()``, a spin
lock (``wl.atomic_cas``) that every thread of blocks of 128 takes to increment a
counter with plain loads and stores, a producer/consumer between two blocks through a
one-item mailbox (its flag set and cleared after ``wl.threadfence()``), and the
last-block-done sum (a ticket counter, no wait). "before" runs with ``IDLE_HANDOFF =
False`` (a spinning warp hands the turn on after ``SPIN_QUANTUM`` turns only), "after"
with it on; both are checked against numpy. The table gives the median seconds of
``--reps`` interleaved runs (compile excluded) and before ÷ after.
docs/decisions/0005-simulator-semantics-and-checks.md quotes it.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import warp_lab as wl
from warp_lab.sim import progress

I32 = wl.array(dtype=wl.int32)

__all__ = ["CASES", "run_case", "main"]


@wl.kernel
def pingpong_shared(out: I32, n: wl.int32):
    flag = wl.shared_array(1, wl.int32)
    t = wl.thread_idx.x
    if t == 0:
        flag[0] = 0
    wl.syncthreads()
    if t == 0:          # warp 0: writes out[k], then passes the turn
        k = 0
        while k < n:
            while wl.atomic_load(flag, 0) != 0:
                pass
            out[k] = 2 * k
            wl.atomic_store(flag, 0, 1)
            k += 1
    elif t == 32:       # warp 1: reads it back, then passes the turn back
        k = 0
        while k < n:
            while wl.atomic_load(flag, 0) != 1:
                pass
            out[n + k] = out[k] + 1
            wl.atomic_store(flag, 0, 0)
            k += 1


@wl.kernel
def pingpong_global(flag: I32, out: I32, n: wl.int32):
    t = wl.thread_idx.x
    if t == 0:
        k = 0
        while k < n:
            while wl.atomic_cas(flag, 0, 0, 0) != 0:
                pass
            out[k] = 2 * k
            wl.threadfence()
            wl.atomic_exch(flag, 0, 1)
            k += 1
    elif t == 32:
        k = 0
        while k < n:
            while wl.atomic_cas(flag, 0, 1, 1) != 1:
                pass
            wl.threadfence()
            out[n + k] = out[k] + 1
            wl.threadfence()
            wl.atomic_exch(flag, 0, 0)
            k += 1


@wl.kernel
def lock_counter(lock: I32, counter: I32):
    # every thread takes the lock, then increments counter[0] and adds its index to
    # counter[1] with plain loads and stores: exact only under mutual exclusion
    i = wl.tid()
    while wl.atomic_cas(lock, 0, 0, 1) != 0:
        pass
    wl.threadfence()
    counter[0] = counter[0] + 1
    counter[1] = counter[1] + i
    wl.threadfence()
    wl.atomic_exch(lock, 0, 0)


@wl.kernel
def producer_consumer(flag: I32, data: I32, out: I32, n: wl.int32):
    # thread 0 of block 0 hands n items to thread 0 of block 1 through a one-item mailbox:
    # data[0] is published by flag[0] = 1 after a fence, taken back by flag[0] = 0
    if wl.thread_idx.x == 0:
        if wl.block_idx.x == 0:
            k = 0
            while k < n:
                while wl.atomic_load(flag, 0) != 0:
                    pass
                data[0] = k * k - 3 * k
                wl.threadfence()
                wl.atomic_store(flag, 0, 1)
                k += 1
        else:
            k = 0
            s = 0
            while k < n:
                while wl.atomic_load(flag, 0) != 1:
                    pass
                wl.threadfence()
                s += data[0]
                out[k] = s
                wl.threadfence()
                wl.atomic_store(flag, 0, 0)
                k += 1


@wl.kernel
def last_block_sum(x: I32, partial: I32, ticket: I32, out: I32, n: wl.int32):
    # each block sums its 64 elements; the last block to take a ticket sums the partials
    s = wl.shared_array(64, wl.int32)
    t = wl.thread_idx.x
    b = wl.block_idx.x
    i = b * 64 + t
    s[t] = x[i] if i < n else 0
    wl.syncthreads()
    k = 32
    while k > 0:
        if t < k:
            s[t] += s[t + k]
        wl.syncthreads()
        k //= 2
    if t == 0:
        partial[b] = s[0]
        wl.threadfence()
        if wl.atomic_add(ticket, 0, 1) == wl.grid_dim.x - 1:
            wl.threadfence()
            total = 0
            j = 0
            while j < wl.grid_dim.x:
                total += wl.atomic_load(partial, j)
                j += 1
            out[0] = total


def _pingpong_shared(n):
    out = np.zeros(2 * n, np.int32)
    k = np.arange(n)
    return (pingpong_shared, [out, n], dict(grid=1, block=64),
            lambda: np.array_equal(out, np.r_[2 * k, 2 * k + 1]))


def _pingpong_global(n):
    out = np.zeros(2 * n, np.int32)
    k = np.arange(n)
    return (pingpong_global, [np.zeros(1, np.int32), out, n], dict(grid=1, block=64),
            lambda: np.array_equal(out, np.r_[2 * k, 2 * k + 1]))


def _lock_counter(n):
    threads = max(32, n // 32 * 32)        # whole warps
    lock, counter = np.zeros(1, np.int32), np.zeros(2, np.int32)
    return (lock_counter, [lock, counter], dict(dim=threads, block_dim=min(threads, 128)),
            lambda: counter.tolist() == [threads, threads * (threads - 1) // 2]
            and lock[0] == 0)


def _producer_consumer(n):
    out = np.zeros(n, np.int32)
    k = np.arange(n)
    return (producer_consumer, [np.zeros(1, np.int32), np.zeros(1, np.int32), out, n],
            dict(grid=2, block=32),   # (the int32 sum wraps past 2**31, as numpy's cast)
            lambda: np.array_equal(out, np.cumsum(k * k - 3 * k).astype(np.int32)))


def _last_block_sum(n):
    m = 64 * n
    x = (np.arange(m, dtype=np.int64) * 7919 % 1000 - 500).astype(np.int32)
    out = np.zeros(1, np.int32)
    return (last_block_sum, [x, np.zeros(n, np.int32), np.zeros(1, np.int32), out, m],
            dict(grid=n, block=64), lambda: int(out[0]) == int(x.sum()))


#: name -> (what ``rounds`` counts, maker): ``maker(rounds)`` returns ``(kernel, inputs,
#: launch keywords, check)``, ``check()`` comparing the outputs with numpy after the launch
CASES = {
    "ping-pong, shared flag": ("rounds", _pingpong_shared),
    "ping-pong, global flag (CAS)": ("rounds", _pingpong_global),
    "spin lock counter": ("threads", _lock_counter),
    "producer/consumer mailbox": ("items", _producer_consumer),
    "last-block-done sum": ("blocks", _last_block_sum),
}


def run_case(name: str, rounds: int, **launch) -> tuple[float, object, bool]:
    """Launch case ``name`` of :data:`CASES` with ``rounds`` rounds on the simulator;
    returns ``(seconds, LaunchResult, outputs match numpy)``. ``launch``: extra
    ``wl.launch`` keywords (``max_instructions``, ``checks``)."""
    kernel, inputs, kw, check = CASES[name][1](rounds)
    t = time.perf_counter()
    res = wl.launch(kernel, inputs=inputs, device="sim", **kw, **launch)
    return time.perf_counter() - t, res, check()


def _seconds(name, rounds, idle) -> float:
    progress.IDLE_HANDOFF = idle
    try:
        dt, res, ok = run_case(name, rounds)
    finally:
        progress.IDLE_HANDOFF = True
    if res.findings or not ok:
        raise AssertionError(f"{name}: wrong result or findings {res.findings}")
    return dt


def main(argv=None) -> None:
    """Print the table (case, rounds, before seconds, after seconds, before ÷ after)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--after-only", action="store_true", help="skip the 'before' runs")
    a = ap.parse_args(argv)
    print(f"{'case':30s} {'rounds':>14s} {'before s':>9s} {'after s':>8s} {'÷':>7s}")
    for name, (unit, _) in CASES.items():
        n = a.rounds if unit != "blocks" else max(2, a.rounds // 10)
        _seconds(name, min(n, 20), True)        # compile, warm up
        before, after = [], []
        for _ in range(a.reps):                 # interleaved: load slows both alike
            if not a.after_only:
                before.append(_seconds(name, n, False))
            after.append(_seconds(name, n, True))
        f = statistics.median(after)
        if before:
            b = statistics.median(before)
            cols = f"{b:9.2f} {f:8.2f} {b / f:6.1f}×"
        else:
            cols = f"{'—':>9s} {f:8.2f} {'—':>7s}"
        print(f"{name:30s} {n:6d} {unit:>7s} {cols}", flush=True)

if __name__ == "__main__":
    main()
