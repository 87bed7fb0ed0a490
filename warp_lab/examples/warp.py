"""Warp-level programming: shuffles, votes, lane ids and warp barriers."""

import numpy as np

import warp_lab as wl
from warp_lab.examples.example import Example, Launch, Tolerance, pick, rng

f32 = np.float32
i32 = np.int32
u32 = np.uint32
WARP = 32


# -- warp-shuffle sum reduction ------------------------------------------------------------
@wl.kernel
def warp_sum(x: wl.array(dtype=wl.float32), warp_sums: wl.array(dtype=wl.float32),
             total: wl.array(dtype=wl.float32), n: int):
    i = wl.block_idx.x * wl.block_dim.x + wl.thread_idx.x
    v = x[i] if i < n else 0.0
    offset = wl.warp_size // 2
    while offset > 0:
        v += wl.shfl_down_sync(0xFFFFFFFF, v, offset)  # marker: shfl_down
        offset //= 2
    if wl.lane_id() == 0:
        warp_sums[i // wl.warp_size] = v
        wl.atomic_add(total, 0, v)


def _warp_sum_inputs(size="small"):
    n = pick(size, 500, 1 << 22)
    warps = -(-n // 128) * 128 // WARP
    return [rng("warp_sum").standard_normal(n).astype(f32), np.zeros(warps, f32),
            np.zeros(1, f32), n]


def _warp_sum_ref(x, warp_sums, total, n):
    padded = np.zeros(len(warp_sums) * WARP, np.float64)
    padded[:n] = x
    return {"warp_sums": padded.reshape(-1, WARP).sum(axis=1).astype(f32),
            "total": np.array([padded.sum()], f32)}


# -- every shuffle and vote, on integers (exact) ---------------------------------------------
@wl.kernel
def warp_scan_vote(x: wl.array(dtype=wl.int32), bcast: wl.array(dtype=wl.int32),
                   scan: wl.array(dtype=wl.int32), butterfly: wl.array(dtype=wl.int32),
                   ballot: wl.array(dtype=wl.uint32), votes: wl.array2d(dtype=wl.int32)):
    i = wl.block_idx.x * wl.block_dim.x + wl.thread_idx.x
    lane = wl.lane_id()
    v = x[i]
    bcast[i] = wl.shfl_sync(0xFFFFFFFF, v, 3)
    s = v
    d = 1
    while d < wl.warp_size:
        t = wl.shfl_up_sync(0xFFFFFFFF, s, d)  # marker: shfl_up
        if lane >= d:
            s += t
        d *= 2
    scan[i] = s
    b = v
    m = 16
    while m > 0:
        b += wl.shfl_xor_sync(0xFFFFFFFF, b, m)
        m //= 2
    butterfly[i] = b
    ballot[i] = wl.ballot_sync(0xFFFFFFFF, v > 0)
    votes[0, i] = wl.int32(wl.any_sync(0xFFFFFFFF, v > 90))
    votes[1, i] = wl.int32(wl.all_sync(0xFFFFFFFF, v > -90))
    wl.syncwarp()
    votes[2, i] = lane


def _warp_scan_inputs(size="small"):
    n = pick(size, 128, 1 << 20)
    x = rng("warp_scan_vote").integers(-89, 90, n).astype(i32)
    x[5] = 95        # warp 0: any(v > 90) holds
    x[70] = -95      # warp 2: all(v > -90) fails
    z = np.zeros(n, i32)
    return [x, z, z.copy(), z.copy(), np.zeros(n, u32), np.zeros((3, n), i32)]


def _warp_scan_ref(x, bcast, scan, butterfly, ballot, votes):
    w = x.reshape(-1, WARP)
    bits = (w > 0).astype(np.uint64) << np.arange(WARP, dtype=np.uint64)
    per_warp = lambda a: np.repeat(a, WARP)   # noqa: E731
    return {
        "bcast": per_warp(w[:, 3]).astype(i32),
        "scan": np.cumsum(w, axis=1).reshape(-1).astype(i32),
        "butterfly": per_warp(w.sum(axis=1)).astype(i32),
        "ballot": per_warp(bits.sum(axis=1)).astype(u32),
        "votes": np.stack([per_warp((w > 90).any(axis=1)), per_warp((w > -90).all(axis=1)),
                           np.tile(np.arange(WARP), len(w))]).astype(i32),
    }


EXAMPLES = [
    Example("warp_sum", warp_sum, _warp_sum_inputs,
            lambda a: Launch(grid=(-(-a[3] // 128), 1, 1), block=(128, 1, 1)), _warp_sum_ref,
            ("warp_sums", "total"), default_tolerance=Tolerance(rtol=1e-5, atol=1e-4),
            description="shfl_down_sync tree reduction, lane 0 adds atomically"),
    Example("warp_scan_vote", warp_scan_vote, _warp_scan_inputs,
            lambda a: Launch(grid=(len(a[0]) // 64, 1, 1), block=(64, 1, 1)), _warp_scan_ref,
            ("bcast", "scan", "butterfly", "ballot", "votes"),
            description="shfl/shfl_up/shfl_xor, ballot/any/all, lane_id, syncwarp"),
]
