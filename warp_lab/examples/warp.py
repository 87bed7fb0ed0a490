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


# -- warp-aggregated atomics (match_any_sync + activemask; "CUDA Pro Tip: Optimized
#    Filtering with Warp-Aggregated Atomics") ----------------------------------------------
@wl.kernel
def aggregated_histogram(keys: wl.array(dtype=wl.int32), hist: wl.array(dtype=wl.int32)):
    i = wl.tid()
    k = keys[i]
    active = wl.activemask()                  # the last warp is partial: dim=n stops early
    if wl.match_all_sync(active, k) != 0:     # the whole warp holds one key (warp-uniform)
        peers = active
    else:
        peers = wl.match_any_sync(active, k)  # marker: match_any
    leader = wl.ffs(peers) - 1                # lowest lane holding this key
    if wl.lane_id() == leader:
        wl.atomic_add(hist, k, wl.popc(peers))    # one atomic per key per warp


def _aggregated_inputs(size="small"):
    n = pick(size, 1000, 1 << 22)
    keys = rng("aggregated_histogram").integers(0, 6, n).astype(i32)   # few keys: big groups
    keys[256:320] = 3                                                  # two one-key warps
    return [keys, np.zeros(8, i32)]


def _aggregated_ref(keys, hist):
    return {"hist": np.bincount(keys, minlength=len(hist)).astype(i32)}


# -- warp and block reductions in one instruction (redux.sync, bar.red; sm_80+) ----------------
@wl.kernel
def block_stats(x: wl.array(dtype=wl.int32), per_warp: wl.array2d(dtype=wl.int32),
                bits: wl.array2d(dtype=wl.uint32), per_block: wl.array2d(dtype=wl.int32),
                cycles: wl.array(dtype=wl.int64)):
    i = wl.tid()
    t0 = wl.clock64()
    v = x[i]
    total = wl.reduce_add_sync(wl.FULL_MASK, v)       # marker: redux
    lo = wl.reduce_min_sync(wl.FULL_MASK, v)
    hi = wl.reduce_max_sync(wl.FULL_MASK, v)
    u = wl.uint32(v)
    high = wl.reduce_max_sync(wl.FULL_MASK, u)        # unsigned: negatives are large
    both = wl.reduce_and_sync(wl.FULL_MASK, u)
    either = wl.reduce_or_sync(wl.FULL_MASK, u)
    parity = wl.reduce_xor_sync(wl.FULL_MASK, u)
    positives = wl.syncthreads_count(v > 0)           # marker: bar.red
    small = wl.syncthreads_and(abs(v) < 1000)
    huge = wl.syncthreads_or(v > 1000)
    if wl.lane_id() == 0:
        w = i // 32
        per_warp[0, w] = total
        per_warp[1, w] = lo
        per_warp[2, w] = hi
        bits[0, w] = high
        bits[1, w] = both
        bits[2, w] = either
        bits[3, w] = parity
    if wl.thread_idx.x == 0:
        b = wl.block_idx.x
        per_block[0, b] = positives
        per_block[1, b] = 1 if small else 0
        per_block[2, b] = 1 if huge else 0
        cycles[b] = wl.clock64() - t0             # SM cycles (simulator: issue steps)


_STATS_BLOCK = 128


def _stats_inputs(size="small"):
    n = pick(size, 4 * _STATS_BLOCK, 1 << 22)
    x = rng("block_stats").integers(-999, 1000, n).astype(i32)
    x[_STATS_BLOCK + 7] = 5000            # block 1: one huge value (or holds, and fails)
    x[2 * _STATS_BLOCK:3 * _STATS_BLOCK] = np.abs(x[2 * _STATS_BLOCK:3 * _STATS_BLOCK]) + 1
    warps, blocks = n // WARP, n // _STATS_BLOCK
    return [x, np.zeros((3, warps), i32), np.zeros((4, warps), u32),
            np.zeros((3, blocks), i32), np.zeros(blocks, np.int64)]


def _stats_ref(x, per_warp, bits, per_block, cycles):
    w = x.reshape(-1, WARP)
    u = w.view(u32)
    b = x.reshape(-1, _STATS_BLOCK)
    return {
        "per_warp": np.stack([w.astype(np.int64).sum(1).astype(np.uint32).view(i32),
                              w.min(1), w.max(1)]),
        "bits": np.stack([u.max(1), np.bitwise_and.reduce(u, 1), np.bitwise_or.reduce(u, 1),
                          np.bitwise_xor.reduce(u, 1)]),
        "per_block": np.stack([(b > 0).sum(1), (np.abs(b) < 1000).all(1),
                               (b > 1000).any(1)]).astype(i32),
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
    Example("aggregated_histogram", aggregated_histogram, _aggregated_inputs,
            lambda a: Launch(dim=len(a[0]), block_dim=128), _aggregated_ref, ("hist",),
            description="warp-aggregated atomics: activemask, match_any_sync, one leader "
                        "per key", min_sm=70),
    Example("block_stats", block_stats, _stats_inputs,
            lambda a: Launch(dim=len(a[0]), block_dim=_STATS_BLOCK), _stats_ref,
            ("per_warp", "bits", "per_block"),
            description="redux.sync warp reductions, syncthreads_count/and/or, clock64",
            min_sm=80),
]
