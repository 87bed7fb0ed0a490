"""Shared memory, barriers and atomics: reductions, scans, tiles, histograms."""

import numpy as np

import warp_lab as wl
from warp_lab.examples.example import Example, Launch, Tolerance, dyadic, pick, rng

f32 = np.float32
i32 = np.int32

RED_BLOCK = 256
SCAN_BLOCK = 128
TILE = 16
T_TILE = 32
T_ROWS = 8
NUM_BINS = 64


# -- shared-memory tree reduction ------------------------------------------------------
@wl.kernel
def block_sum(x: wl.array(dtype=wl.float32), partial: wl.array(dtype=wl.float32), n: int):
    buf = wl.shared_array(RED_BLOCK, wl.float32)
    t = wl.thread_idx.x
    i = wl.block_idx.x * RED_BLOCK + t
    buf[t] = x[i] if i < n else 0.0
    wl.syncthreads()
    s = RED_BLOCK // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]  # marker: tree step
        wl.syncthreads()
        s //= 2
    if t == 0:
        partial[wl.block_idx.x] = buf[0]


def _block_sum_inputs(size="small"):
    n = pick(size, 1000, 1 << 22)
    blocks = -(-n // RED_BLOCK)
    return [rng("block_sum").standard_normal(n).astype(f32), np.zeros(blocks, f32), n]


def _block_sum_ref(x, partial, n):
    padded = np.zeros(len(partial) * RED_BLOCK, np.float64)
    padded[:n] = x
    return {"partial": padded.reshape(-1, RED_BLOCK).sum(axis=1).astype(f32)}


# -- per-block sum and count of the positive values: block size chosen at launch ----------
@wl.kernel
def positive_stats(x: wl.array(dtype=wl.float32), sums: wl.array(dtype=wl.float32),
                   counts: wl.array(dtype=wl.int32), n: int):
    nt = wl.block_dim.x
    vals = wl.dynamic_shared_array(wl.float32)
    hits = wl.dynamic_shared_array(wl.int32, offset=nt * 4)  # marker: dynamic shared
    t = wl.thread_idx.x
    i = wl.block_idx.x * nt + t
    v = x[i] if i < n else 0.0
    vals[t] = max(v, 0.0)
    hits[t] = 1 if v > 0.0 else 0
    wl.syncthreads()
    half = nt // 2
    while half > 0:
        if t < half:
            vals[t] += vals[t + half]
            hits[t] += hits[t + half]
        wl.syncthreads()
        half //= 2
    if t == 0:
        sums[wl.block_idx.x] = vals[0]
        counts[wl.block_idx.x] = hits[0]


POS_BLOCK = 128  # any power of two: only the launch knows it


def _positive_inputs(size="small"):
    n = pick(size, 1000, 1 << 22)
    blocks = -(-n // POS_BLOCK)
    return [rng("positive_stats").standard_normal(n).astype(f32), np.zeros(blocks, f32),
            np.zeros(blocks, np.int32), n]


def _positive_launch(a):
    return Launch(grid=(len(a[1]), 1, 1), block=(POS_BLOCK, 1, 1),
                  shared_mem=POS_BLOCK * (4 + 4))


def _positive_ref(x, sums, counts, n):
    padded = np.zeros(len(sums) * POS_BLOCK, np.float64)
    padded[:n] = x
    blocks = padded.reshape(-1, POS_BLOCK)
    return {"sums": np.maximum(blocks, 0).sum(axis=1).astype(f32),
            "counts": (blocks > 0).sum(axis=1).astype(np.int32)}


# -- block-wide inclusive scan (Hillis-Steele, double-buffered) ----------------------------
@wl.kernel
def block_scan(x: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.int32),
               totals: wl.array(dtype=wl.int32), n: int):
    buf = wl.shared_array((2, SCAN_BLOCK), wl.int32)
    t = wl.thread_idx.x
    i = wl.block_idx.x * SCAN_BLOCK + t
    buf[0, t] = x[i] if i < n else 0
    wl.syncthreads()
    src = 0
    d = 1
    while d < SCAN_BLOCK:
        dst = 1 - src
        if t >= d:
            buf[dst, t] = buf[src, t] + buf[src, t - d]
        else:
            buf[dst, t] = buf[src, t]
        wl.syncthreads()
        src = dst
        d *= 2
    if i < n:
        out[i] = buf[src, t]
    if t == SCAN_BLOCK - 1:
        totals[wl.block_idx.x] = buf[src, t]


def _block_scan_inputs(size="small"):
    n = pick(size, 300, 1 << 20)
    blocks = -(-n // SCAN_BLOCK)
    return [rng("block_scan").integers(-50, 50, n).astype(i32), np.zeros(n, i32),
            np.zeros(blocks, i32), n]


def _block_scan_ref(x, out, totals, n):
    padded = np.zeros(len(totals) * SCAN_BLOCK, i32)
    padded[:n] = x
    scans = np.cumsum(padded.reshape(-1, SCAN_BLOCK), axis=1).astype(i32)
    return {"out": scans.reshape(-1)[:n], "totals": scans[:, -1]}


# -- tiled matrix multiply --------------------------------------------------------------
@wl.kernel
def matmul_tiled(a: wl.array2d(dtype=wl.float32), b: wl.array2d(dtype=wl.float32),
                 c: wl.array2d(dtype=wl.float32)):
    sa = wl.shared_array((TILE, TILE), wl.float32)
    sb = wl.shared_array((TILE, TILE), wl.float32)
    tx = wl.thread_idx.x
    ty = wl.thread_idx.y
    row = wl.block_idx.y * TILE + ty
    col = wl.block_idx.x * TILE + tx
    m = a.shape[0]
    kdim = a.shape[1]
    n = b.shape[1]
    acc = 0.0
    for k0 in range(0, kdim, TILE):
        sa[ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < kdim else 0.0
        sb[ty, tx] = b[k0 + ty, col] if k0 + ty < kdim and col < n else 0.0
        wl.syncthreads()
        for k in range(TILE):
            acc += sa[ty, k] * sb[k, tx]  # marker: matmul inner product
        wl.syncthreads()
    if row < m and col < n:
        c[row, col] = acc


def _matmul_inputs(size="small"):
    m, k, n = pick(size, (40, 36, 24), (1024, 1024, 1024))
    g = rng("matmul_tiled")
    return [dyadic(g, (m, k), 64, 16), dyadic(g, (k, n), 64, 16), np.zeros((m, n), f32)]


def _matmul_launch(args):
    m, n = args[0].shape[0], args[1].shape[1]
    return Launch(grid=(-(-n // TILE), -(-m // TILE), 1), block=(TILE, TILE, 1))


# -- transpose through a shared tile (padded and not) -------------------------------------
@wl.kernel
def transpose_padded(src: wl.array2d(dtype=wl.float32), dst: wl.array2d(dtype=wl.float32)):
    tile = wl.shared_array((T_TILE, T_TILE + 1), wl.float32)
    h = src.shape[0]
    w = src.shape[1]
    x = wl.block_idx.x * T_TILE + wl.thread_idx.x
    y = wl.block_idx.y * T_TILE + wl.thread_idx.y
    for r in range(0, T_TILE, T_ROWS):
        if x < w and y + r < h:
            tile[wl.thread_idx.y + r, wl.thread_idx.x] = src[y + r, x]
    wl.syncthreads()
    x = wl.block_idx.y * T_TILE + wl.thread_idx.x
    y = wl.block_idx.x * T_TILE + wl.thread_idx.y
    for r in range(0, T_TILE, T_ROWS):
        if x < h and y + r < w:
            dst[y + r, x] = tile[wl.thread_idx.x, wl.thread_idx.y + r]  # marker: padded read


@wl.kernel
def transpose_naive(src: wl.array2d(dtype=wl.float32), dst: wl.array2d(dtype=wl.float32)):
    tile = wl.shared_array((T_TILE, T_TILE), wl.float32)
    h = src.shape[0]
    w = src.shape[1]
    x = wl.block_idx.x * T_TILE + wl.thread_idx.x
    y = wl.block_idx.y * T_TILE + wl.thread_idx.y
    for r in range(0, T_TILE, T_ROWS):
        if x < w and y + r < h:
            tile[wl.thread_idx.y + r, wl.thread_idx.x] = src[y + r, x]
    wl.syncthreads()
    x = wl.block_idx.y * T_TILE + wl.thread_idx.x
    y = wl.block_idx.x * T_TILE + wl.thread_idx.y
    for r in range(0, T_TILE, T_ROWS):
        if x < h and y + r < w:
            dst[y + r, x] = tile[wl.thread_idx.x, wl.thread_idx.y + r]  # marker: column read


def _transpose_inputs(size="small"):
    h, w = pick(size, (40, 72), (2048, 2048))
    src = rng("transpose").standard_normal((h, w)).astype(f32)
    return [src, np.zeros((w, h), f32)]


def _transpose_launch(args):
    h, w = args[0].shape
    return Launch(grid=(-(-w // T_TILE), -(-h // T_TILE), 1), block=(T_TILE, T_ROWS, 1))


# -- 2-D five-point stencil --------------------------------------------------------
@wl.kernel
def stencil_2d(u: wl.array2d(dtype=wl.float32), out: wl.array2d(dtype=wl.float32)):
    i, j = wl.tid()
    h = u.shape[0]
    w = u.shape[1]
    if i == 0 or j == 0 or i == h - 1 or j == w - 1:
        out[i, j] = u[i, j]
        return
    out[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])  # marker: stencil


def _stencil_inputs(size="small"):
    shape = pick(size, (20, 33), (2048, 2048))
    return [rng("stencil_2d").standard_normal(shape).astype(f32), np.zeros(shape, f32)]


def _stencil_ref(u, out):
    res = u.copy()
    s = ((u[:-2, 1:-1] + u[2:, 1:-1]) + u[1:-1, :-2]) + u[1:-1, 2:]
    res[1:-1, 1:-1] = f32(0.25) * s
    return {"out": res}


# -- histogram: shared-memory atomics, then global atomics ----------------------------------
@wl.kernel
def histogram(data: wl.array(dtype=wl.uint8), hist: wl.array(dtype=wl.int32), n: int):
    local_hist = wl.shared_array(NUM_BINS, wl.int32)
    t = wl.thread_idx.x
    if t < NUM_BINS:
        local_hist[t] = 0
    wl.syncthreads()
    i = wl.block_idx.x * wl.block_dim.x + t
    stride = wl.block_dim.x * wl.grid_dim.x
    while i < n:
        wl.atomic_add(local_hist, int(data[i]) >> 2, 1)  # marker: shared atomic
        i += stride
    wl.syncthreads()
    if t < NUM_BINS:
        wl.atomic_add(hist, t, local_hist[t])


def _histogram_inputs(size="small"):
    n = pick(size, 2000, 1 << 24)
    data = rng("histogram").integers(0, 256, n).astype(np.uint8)
    return [data, np.zeros(NUM_BINS, i32), n]


def _histogram_ref(data, hist, n):
    return {"hist": np.bincount(data >> 2, minlength=NUM_BINS).astype(i32)}


# -- every atomic on global memory, and the old values they return ----------------------------
@wl.kernel
def atomics_all(vals: wl.array(dtype=wl.int32), acc: wl.array(dtype=wl.int32),
                lock: wl.array(dtype=wl.int32), order: wl.array(dtype=wl.int32),
                facc: wl.array(dtype=wl.float32)):
    i = wl.tid()
    v = vals[i]
    wl.atomic_add(acc, 0, v)
    wl.atomic_sub(acc, 1, v)
    wl.atomic_min(acc, 2, v)
    wl.atomic_max(acc, 3, v)
    wl.atomic_and(acc, 4, v | 0x100)
    wl.atomic_or(acc, 5, v & 0xFF0)
    wl.atomic_xor(acc, 6, v)
    wl.atomic_exch(acc, 7, 42)
    if wl.atomic_cas(lock, 0, 0, i + 1) == 0:  # marker: compare-and-swap
        wl.atomic_add(acc, 8, 1)   # exactly one thread wins
    slot = wl.atomic_add(acc, 9, 1)  # the old value: a unique slot per thread
    order[slot] = v
    wl.atomic_add(facc, 0, float(v))


def _atomics_inputs(size="small"):
    n = pick(size, 256, 1 << 20)
    vals = rng("atomics_all").integers(-1000, 1000, n).astype(i32)
    acc = np.array([5, 5, 10**6, -10**6, -1, 0, 0, 0, 0, 0], i32)
    return [vals, acc, np.zeros(1, i32), np.zeros(n, i32), np.zeros(1, f32)]


def _atomics_ref(vals, acc, lock, order, facc):
    and_all = np.bitwise_and.reduce(vals | 0x100)
    or_all = np.bitwise_or.reduce(vals & 0xFF0)
    xor_all = np.bitwise_xor.reduce(vals)
    n = len(vals)
    res = np.array([5 + vals.sum(), 5 - vals.sum(), min(10**6, vals.min()),
                    max(-10**6, vals.max()), -1 & and_all, or_all, xor_all, 42, 1, n], i32)
    return {"acc": res, "order": vals.copy(), "facc": np.array([vals.sum()], f32)}


# -- one warp hands its result to another through global memory and a flag read and
#    written atomically (racecheck checks shared memory only) --------------------------------
HANDOFF_BLOCK = 64


@wl.kernel
def warp_handoff(x: wl.array(dtype=wl.float32), scratch: wl.array(dtype=wl.float32),
                 ready: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.float32)):
    t = wl.thread_idx.x
    b = wl.block_idx.x
    i = b * HANDOFF_BLOCK + t
    if t >= 32:                                  # warp 1 produces ...
        scratch[i - 32] = x[i] * x[i]
        wl.threadfence()                         # its writes before the flag
        wl.syncwarp()
        if t == 32:
            wl.atomic_store(ready, b, 1)
    else:                                        # ... warp 0 waits, then consumes
        while wl.atomic_load(ready, b) == 0:     # marker: spin on the flag
            pass
        wl.threadfence()
        out[i] = x[i] + scratch[i]


def _handoff_inputs(size="small"):
    n = pick(size, 4 * HANDOFF_BLOCK, 1 << 20)
    return [rng("warp_handoff").standard_normal(n).astype(f32), np.zeros(n, f32),
            np.zeros(n // HANDOFF_BLOCK, i32), np.zeros(n, f32)]


def _handoff_ref(x, scratch, ready, out):
    b = x.reshape(-1, 2, 32)
    res = np.zeros_like(b)
    res[:, 0] = b[:, 0] + b[:, 1] * b[:, 1]
    return {"out": res.reshape(-1), "ready": np.ones_like(ready)}


def _blocks(n, b):
    return Launch(grid=(-(-n // b), 1, 1), block=(b, 1, 1))


EXAMPLES = [
    Example("block_sum", block_sum, _block_sum_inputs, lambda a: _blocks(a[2], RED_BLOCK),
            _block_sum_ref, ("partial",), default_tolerance=Tolerance(rtol=1e-5, atol=1e-4),
            description="shared-memory tree reduction, 256 threads per block"),
    Example("positive_stats", positive_stats, _positive_inputs, _positive_launch, _positive_ref,
            ("sums", "counts"), tolerance={"sums": Tolerance(rtol=1e-5, atol=1e-4)},
            description="two views of dynamic shared memory (float sums, int counts), "
                        "block size set at launch"),
    Example("block_scan", block_scan, _block_scan_inputs, lambda a: _blocks(a[3], SCAN_BLOCK),
            _block_scan_ref, ("out", "totals"),
            description="Hillis-Steele inclusive scan in a 2-D shared array"),
    Example("matmul_tiled", matmul_tiled, _matmul_inputs, _matmul_launch,
            lambda a, b, c: {"c": a @ b}, ("c",),
            description="16x16 shared-memory tiled matmul, edges guarded"),
    Example("transpose_padded", transpose_padded, _transpose_inputs, _transpose_launch,
            lambda src, dst: {"dst": src.T.copy()}, ("dst",),
            description="32x33 padded shared tile: no bank conflicts"),
    Example("transpose_naive", transpose_naive, _transpose_inputs, _transpose_launch,
            lambda src, dst: {"dst": src.T.copy()}, ("dst",),
            description="32x32 shared tile read by column: 32-way bank conflicts"),
    Example("stencil_2d", stencil_2d, _stencil_inputs, lambda a: Launch(dim=a[0].shape),
            _stencil_ref, ("out",), description="five-point Jacobi step with boundary copy"),
    Example("histogram", histogram, _histogram_inputs,
            lambda a: Launch(grid=(max(4, min(1024, a[2] // 4096)), 1, 1), block=(128, 1, 1)),
            _histogram_ref, ("hist",),
            description="privatised shared histogram, then global atomics"),
    Example("atomics_all", atomics_all, _atomics_inputs,
            lambda a: Launch(dim=len(a[0]), block_dim=64), _atomics_ref,
            ("acc", "order", "facc"), tolerance={"order": Tolerance(unordered=True)},
            description="atomic add/sub/min/max/and/or/xor/exch/cas and their old values"),
    Example("warp_handoff", warp_handoff, _handoff_inputs,
            lambda a: _blocks(len(a[0]), HANDOFF_BLOCK), _handoff_ref, ("out", "ready"),
            default_tolerance=Tolerance(rtol=1e-6, atol=1e-6),
            description="warp 0 spins on a flag (wl.atomic_load) that warp 1 sets "
                        "(wl.atomic_store) after its results"),
]
