"""racecheck's cost: simulation time with racecheck on ÷ off, on shared-memory kernels.

    python benchmarks/racecheck_cost.py            # 5 interleaved runs per kernel
    python benchmarks/racecheck_cost.py --reps 3 --init
    python benchmarks/racecheck_cost.py --case fenced   # the kernels whose name has it

Each repetition runs the launch with ``checks=("memcheck", "barrier")`` and then with
racecheck added (and initcheck, ``--init``), one after the other, so a noisy machine
slows both alike; the table gives the median "off" seconds and the median of the
per-repetition ratios. Kernels: the corpus's block_sum, transpose_padded,
matmul_tiled, block_scan and histogram at sizes of about a second, a tree sum whose
last warp synchronises with ``wl.syncwarp`` (racecheck's warp-sync clocks), a sum whose
last warp to count in (``wl.atomic_add``) reads the others' partials after fences
(racecheck's release/acquire rows), the same with a table every warp reads (racecheck's
per-warp records of a cell read by several warps) and a kernel of 1-byte shared accesses
(racecheck's per-byte records). docs/decisions/0005-simulator-semantics-and-checks.md
quotes the table.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import warp_lab as wl
from warp_lab.examples import get
from warp_lab.examples.example import dyadic, rng
from warp_lab.examples.memory import SCAN_BLOCK

f32, i32 = np.float32, np.int32


@wl.kernel
def sum_syncwarp(x: wl.array(dtype=wl.float32), partial: wl.array(dtype=wl.float32), n: int):
    buf = wl.shared_array(256, wl.float32)
    t = wl.thread_idx.x
    i = wl.block_idx.x * 256 + t
    buf[t] = x[i] if i < n else 0.0
    wl.syncthreads()
    s = 128
    while s > 16:
        if t < s:
            buf[t] += buf[t + s]
        wl.syncthreads()
        s //= 2
    if t < 32:
        s = 16
        while s > 0:
            v = buf[t] + buf[t + s]
            wl.syncwarp()
            buf[t] = v
            wl.syncwarp()
            s //= 2
    if t == 0:
        partial[wl.block_idx.x] = buf[0]


@wl.kernel
def sum_last_warp(x: wl.array(dtype=wl.float32), partial: wl.array(dtype=wl.float32),
                  n: int):
    buf = wl.shared_array(256, wl.float32)
    part = wl.shared_array(8, wl.float32)
    count = wl.shared_array(1, wl.int32)
    t = wl.thread_idx.x
    i = wl.block_idx.x * 256 + t
    buf[t] = x[i] if i < n else 0.0
    if t == 0:
        count[0] = 0
    wl.syncthreads()
    if t % 32 == 0:
        s = 0.0
        for k in range(32):
            s += buf[t + k]
        part[t // 32] = s
        wl.threadfence_block()                  # release: the partial before the count
        if wl.atomic_add(count, 0, 1) == 7:
            wl.threadfence_block()              # acquire: the count before the partials
            total = 0.0
            for w in range(8):
                total += part[w]
            partial[wl.block_idx.x] = total


@wl.kernel
def table_last_warp(x: wl.array(dtype=wl.float32), partial: wl.array(dtype=wl.float32),
                    n: int):
    tab = wl.shared_array(256, wl.float32)
    part = wl.shared_array(8, wl.float32)
    count = wl.shared_array(1, wl.int32)
    t = wl.thread_idx.x
    i = wl.block_idx.x * 256 + t
    tab[t] = x[i] if i < n else 0.0
    if t < 8:
        part[t] = 0.0
    if t == 0:
        count[0] = 0
    wl.syncthreads()
    s = 0.0
    for k in range(8):
        s += tab[(t + 33 * k) % 256]                # each cell read by several warps
    wl.atomic_add(part, t // 32, s)
    wl.syncwarp()
    if t % 32 == 0:
        wl.threadfence_block()                      # release: the warp's adds
        if wl.atomic_add(count, 0, 1) == 7:
            wl.threadfence_block()                  # acquire: every warp's
            total = 0.0
            for w in range(8):
                total += part[w]
            partial[wl.block_idx.x] = total


@wl.kernel
def byte_flags(x: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.int32), n: int):
    f = wl.shared_array(256, wl.uint8)
    t = wl.thread_idx.x
    i = wl.block_idx.x * 256 + t
    f[t] = wl.uint8(1 if x[i] > 0 else 0)
    wl.syncthreads()
    out[i] = int(f[t]) + int(f[(t + 1) % 256]) + int(f[(t + 7) % 256])


def _corpus(name, args):
    return get(name).kernel, args, get(name).launch(args).kwargs()


def _blocks(n):
    return dict(grid=(n // 256, 1, 1), block=(256, 1, 1))


CASES = {
    "block_sum (2^20)": lambda: _corpus("block_sum", [
        rng("b").standard_normal(1 << 20).astype(f32), np.zeros(1 << 12, f32), 1 << 20]),
    "transpose_padded (2048²)": lambda: _corpus("transpose_padded", [
        rng("t").standard_normal((2048, 2048)).astype(f32), np.zeros((2048, 2048), f32)]),
    "matmul_tiled (256³)": lambda: _corpus("matmul_tiled", [
        dyadic(rng("m"), (256, 256), 64, 16), dyadic(rng("m2"), (256, 256), 64, 16),
        np.zeros((256, 256), f32)]),
    "block_scan (2^19)": lambda: _corpus("block_scan", [
        rng("s").integers(-50, 50, 1 << 19).astype(i32), np.zeros(1 << 19, i32),
        np.zeros((1 << 19) // SCAN_BLOCK, i32), 1 << 19]),
    "histogram (2^22)": lambda: _corpus("histogram", [
        rng("h").integers(0, 256, 1 << 22).astype(np.uint8), np.zeros(64, i32), 1 << 22]),
    "syncwarp tree sum (2^19)": lambda: (sum_syncwarp, [
        rng("w").standard_normal(1 << 19).astype(f32), np.zeros(1 << 11, f32), 1 << 19],
        _blocks(1 << 19)),
    "fenced last-warp sum (2^19)": lambda: (sum_last_warp, [
        rng("l").standard_normal(1 << 19).astype(f32), np.zeros(1 << 11, f32), 1 << 19],
        _blocks(1 << 19)),
    "fenced table reads (2^19)": lambda: (table_last_warp, [
        rng("r").standard_normal(1 << 19).astype(f32), np.zeros(1 << 11, f32), 1 << 19],
        _blocks(1 << 19)),
    "uint8 shared flags (2^19)": lambda: (byte_flags, [
        rng("f").integers(-5, 5, 1 << 19).astype(i32), np.zeros(1 << 19, i32), 1 << 19],
        _blocks(1 << 19)),
}


def _seconds(case, checks) -> float:
    kernel, args, kw = case()
    t = time.perf_counter()
    res = wl.launch(kernel, inputs=args, device="sim", checks=checks, **kw)
    dt = time.perf_counter() - t
    if res.findings:
        raise AssertionError(f"unexpected findings: {res.findings}")
    return dt


def main(argv=None) -> None:
    """Print the table (kernel, off seconds, on ÷ off)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--init", action="store_true", help="add initcheck to the 'on' runs")
    ap.add_argument("--case", default="", help="only the kernels whose name has this text")
    a = ap.parse_args(argv)
    off = ("memcheck", "barrier")
    on = ("memcheck", "racecheck", "barrier") + (("initcheck",) if a.init else ())
    print(f"{'kernel':28s} {'off s':>7s} {'on ÷ off':>9s}")
    for name, case in CASES.items():
        if a.case not in name:
            continue
        _seconds(case, off), _seconds(case, on)          # compile, warm up
        offs, ratios = [], []
        for _ in range(a.reps):
            t0 = _seconds(case, off)
            offs.append(t0)
            ratios.append(_seconds(case, on) / t0)
        print(f"{name:28s} {statistics.median(offs):7.2f} {statistics.median(ratios):8.2f}×",
              flush=True)


if __name__ == "__main__":
    main()
