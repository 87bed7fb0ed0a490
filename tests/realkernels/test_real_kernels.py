"""Real-world kernels (CUDA samples, PMPP, ML and scientific code) through warp_lab.

Each kernel is written the way a CUDA programmer would port it, compiled for
sm_80 and sm_90 (ptxas must accept it), run on the simulator with memcheck,
racecheck and the barrier check, and compared with an independent numpy
reference (exact for integers, a tolerance stated per kernel for floats).
None of these shapes is in ``warp_lab/examples``.

A test marked ``xfail(strict=True)`` is a warp_lab bug found by this file; its
reason names the bug and the code at fault. Strict: the fix makes it XPASS, which
fails, so the marker goes with the fix.

Sizes are small on purpose: the simulator issues roughly 10^4 warp-steps per
second, and divergent per-thread loops (kNN insertion) cost one step per PC group.
"""

import math

import numpy as np
import pytest

import warp_lab as wl
from rk_common import ARCHS, _blocks, _compile_both, _rng, _sim

f16 = np.float16
f32 = np.float32
f64 = np.float64
i8 = np.int8
i32 = np.int32
u32 = np.uint32



# =====================================================================================
# 1. Bitonic sort of 256-key chunks in shared memory (CUDA sample sortingNetworks,
#    bitonicSortShared): a device function swaps in shared memory.
# =====================================================================================
SORT_N = 256


@wl.func
def cmp_swap(keys, vals, a: int, b: int, ascending: int):
    ka = keys[a]
    kb = keys[b]
    if (ka > kb) == (ascending != 0):
        keys[a] = kb
        keys[b] = ka
        va = vals[a]
        vals[a] = vals[b]
        vals[b] = va


@wl.kernel
def bitonic_sort_shared(keys: wl.array(dtype=wl.uint32), vals: wl.array(dtype=wl.int32),
                        ascending: int):
    sk = wl.shared_array(SORT_N, wl.uint32)
    sv = wl.shared_array(SORT_N, wl.int32)
    t = wl.thread_idx.x
    base = wl.block_idx.x * SORT_N
    sk[t] = keys[base + t]
    sv[t] = vals[base + t]
    sk[t + SORT_N // 2] = keys[base + t + SORT_N // 2]
    sv[t + SORT_N // 2] = vals[base + t + SORT_N // 2]
    size = 2
    while size < SORT_N:
        ddd = ascending ^ ((t & (size // 2)) != 0)
        stride = size // 2
        while stride > 0:
            wl.syncthreads()
            pos = 2 * t - (t & (stride - 1))
            cmp_swap(sk, sv, pos, pos + stride, ddd)
            stride >>= 1
        size <<= 1
    stride = SORT_N // 2
    while stride > 0:
        wl.syncthreads()
        pos = 2 * t - (t & (stride - 1))
        cmp_swap(sk, sv, pos, pos + stride, ascending)
        stride >>= 1
    wl.syncthreads()
    keys[base + t] = sk[t]
    vals[base + t] = sv[t]
    keys[base + t + SORT_N // 2] = sk[t + SORT_N // 2]
    vals[base + t + SORT_N // 2] = sv[t + SORT_N // 2]


def test_bitonic_sort_shared():
    _compile_both(bitonic_sort_shared)
    g = _rng(1)
    chunks = 3
    keys = g.permutation(1 << 20)[:chunks * SORT_N].astype(u32) * u32(4093)
    vals = np.arange(chunks * SORT_N, dtype=i32)
    k0, v0 = keys.copy(), vals.copy()
    _sim(bitonic_sort_shared, [keys, vals, 1], grid=(chunks, 1, 1), block=(SORT_N // 2, 1, 1))
    for c in range(chunks):
        sl = slice(c * SORT_N, (c + 1) * SORT_N)
        order = np.argsort(k0[sl], kind="stable")
        np.testing.assert_array_equal(keys[sl], k0[sl][order])
        np.testing.assert_array_equal(vals[sl], v0[sl][order])
    # descending
    keys2, vals2 = k0.copy(), v0.copy()
    _sim(bitonic_sort_shared, [keys2, vals2, 0], grid=(chunks, 1, 1), block=(SORT_N // 2, 1, 1))
    for c in range(chunks):
        sl = slice(c * SORT_N, (c + 1) * SORT_N)
        order = np.argsort(k0[sl], kind="stable")[::-1]
        np.testing.assert_array_equal(keys2[sl], k0[sl][order])
        np.testing.assert_array_equal(vals2[sl], v0[sl][order])


# =====================================================================================
# 2. Tiled 2-D convolution with a halo in shared memory (PMPP ch. 7, strategy 2:
#    load the input tile with its halo cooperatively, zero outside the image).
# =====================================================================================
CONV_R = 2
CONV_T = 16
CONV_S = CONV_T + 2 * CONV_R


@wl.kernel
def conv2d_halo(img: wl.array2d(dtype=wl.float32), filt: wl.array2d(dtype=wl.float32),
                out: wl.array2d(dtype=wl.float32)):
    tile = wl.shared_array((CONV_S, CONV_S), wl.float32)
    tx = wl.thread_idx.x
    ty = wl.thread_idx.y
    ox = wl.block_idx.x * CONV_T
    oy = wl.block_idx.y * CONV_T
    h = img.shape[0]
    w = img.shape[1]
    idx = ty * CONV_T + tx
    while idx < CONV_S * CONV_S:
        sy = idx // CONV_S
        sx = idx % CONV_S
        gy = oy + sy - CONV_R
        gx = ox + sx - CONV_R
        v = 0.0
        if 0 <= gy < h and 0 <= gx < w:
            v = img[gy, gx]
        tile[sy, sx] = v
        idx += CONV_T * CONV_T
    wl.syncthreads()
    y = oy + ty
    x = ox + tx
    if y < h and x < w:
        acc = 0.0
        for fy in range(2 * CONV_R + 1):
            for fx in range(2 * CONV_R + 1):
                acc += filt[fy, fx] * tile[ty + fy, tx + fx]
        out[y, x] = acc


def test_conv2d_halo():
    _compile_both(conv2d_halo)
    g = _rng(2)
    h, w = 37, 45
    img = g.standard_normal((h, w)).astype(f32)
    filt = g.standard_normal((2 * CONV_R + 1, 2 * CONV_R + 1)).astype(f32)
    out = np.zeros((h, w), f32)
    _sim(conv2d_halo, [img, filt, out], grid=(_blocks(w, CONV_T), _blocks(h, CONV_T), 1),
         block=(CONV_T, CONV_T, 1))
    pad = np.pad(img.astype(f64), CONV_R)
    want = np.zeros((h, w))
    for fy in range(2 * CONV_R + 1):
        for fx in range(2 * CONV_R + 1):
            want += filt[fy, fx] * pad[fy:fy + h, fx:fx + w]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


# =====================================================================================
# 3. Register-tiled SGEMM: a 32x32 block tile, 8x8 threads, each thread a 4x4
#    micro-tile in local arrays, loops over constants (C = alpha*A@B + beta*C).
# =====================================================================================
GB_M = 32
GB_N = 32
GB_K = 8
G_TM = 4
G_TN = 4


@wl.kernel
def gemm_reg_tiled(a: wl.array2d(dtype=wl.float32), b: wl.array2d(dtype=wl.float32),
                   c: wl.array2d(dtype=wl.float32), alpha: float, beta: float):
    As = wl.shared_array((GB_K, GB_M), wl.float32)
    Bs = wl.shared_array((GB_K, GB_N), wl.float32)
    tx = wl.thread_idx.x
    ty = wl.thread_idx.y
    t = ty * 8 + tx
    row0 = wl.block_idx.y * GB_M
    col0 = wl.block_idx.x * GB_N
    M, K = a.shape
    N = b.shape[1]
    acc = wl.local_array((G_TM, G_TN), wl.float32)
    ra = wl.local_array(G_TM, wl.float32)
    rb = wl.local_array(G_TN, wl.float32)
    for i in range(G_TM):
        for j in range(G_TN):
            acc[i, j] = 0.0
    for k0 in range(0, K, GB_K):
        for l in range(4):
            e = t + l * 64
            m = e // GB_K
            k = e % GB_K
            gr = row0 + m
            gk = k0 + k
            As[k, m] = a[gr, gk] if gr < M and gk < K else 0.0
            kk = e // GB_N
            n = e % GB_N
            gk2 = k0 + kk
            gc = col0 + n
            Bs[kk, n] = b[gk2, gc] if gk2 < K and gc < N else 0.0
        wl.syncthreads()
        for k in range(GB_K):
            for i in range(G_TM):
                ra[i] = As[k, ty * G_TM + i]
            for j in range(G_TN):
                rb[j] = Bs[k, tx * G_TN + j]
            for i in range(G_TM):
                for j in range(G_TN):
                    acc[i, j] += ra[i] * rb[j]
        wl.syncthreads()
    for i in range(G_TM):
        for j in range(G_TN):
            r = row0 + ty * G_TM + i
            cc = col0 + tx * G_TN + j
            if r < M and cc < N:
                c[r, cc] = alpha * acc[i, j] + beta * c[r, cc]


def test_gemm_register_tiled():
    _compile_both(gemm_reg_tiled)
    g = _rng(3)
    m, k, n = 45, 27, 38
    a = g.standard_normal((m, k)).astype(f32)
    b = g.standard_normal((k, n)).astype(f32)
    c = g.standard_normal((m, n)).astype(f32)
    want = 1.5 * (a.astype(f64) @ b.astype(f64)) - 0.5 * c.astype(f64)
    _sim(gemm_reg_tiled, [a, b, c, 1.5, -0.5], grid=(_blocks(n, GB_N), _blocks(m, GB_M), 1),
         block=(8, 8, 1))
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)
    # no spills on either arch: the micro-tile lives in registers
    for arch in ARCHS:
        res = wl.compile(gemm_reg_tiled, arch=arch, sass=False).resources
        assert res.spill_stores == 0 and res.local == 0, res


# =====================================================================================
# 4. LayerNorm, one warp per row, butterfly (shfl_xor) all-reductions in a device
#    function; rows past the end return early as whole warps.
# =====================================================================================
@wl.func
def warp_allreduce_sum(v: float) -> float:
    off = 16
    while off > 0:
        v += wl.shfl_xor_sync(wl.FULL_MASK, v, off)
        off //= 2
    return v


@wl.kernel
def layernorm_warp(x: wl.array2d(dtype=wl.float32), gamma: wl.array(dtype=wl.float32),
                   beta: wl.array(dtype=wl.float32), y: wl.array2d(dtype=wl.float32),
                   eps: float):
    row = wl.block_idx.x * (wl.block_dim.x // 32) + wl.warp_id()
    lane = wl.lane_id()
    rows = x.shape[0]
    n = x.shape[1]
    if row >= rows:
        return
    s = 0.0
    for j in range(lane, n, 32):
        s += x[row, j]
    mean = warp_allreduce_sum(s) / n
    ss = 0.0
    for j in range(lane, n, 32):
        d = x[row, j] - mean
        ss += d * d
    var = warp_allreduce_sum(ss) / n
    inv = wl.rsqrt(var + eps)
    for j in range(lane, n, 32):
        y[row, j] = (x[row, j] - mean) * inv * gamma[j] + beta[j]


def test_layernorm_warp_per_row():
    _compile_both(layernorm_warp)
    g = _rng(4)
    rows, n = 11, 100
    x = (g.standard_normal((rows, n)) * 3 + 1).astype(f32)
    gamma = g.uniform(0.5, 1.5, n).astype(f32)
    beta = g.standard_normal(n).astype(f32)
    y = np.zeros_like(x)
    _sim(layernorm_warp, [x, gamma, beta, y, 1e-5], grid=(_blocks(rows, 4), 1, 1),
         block=(128, 1, 1))
    xd = x.astype(f64)
    mu = xd.mean(axis=1, keepdims=True)
    var = ((xd - mu) ** 2).mean(axis=1, keepdims=True)
    want = (xd - mu) / np.sqrt(var + 1e-5) * gamma + beta
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=2e-5)


# =====================================================================================
# 5. RMSNorm in float16 with float32 math, one block per row: shfl_down warp sums,
#    per-warp partials in shared memory, the first warp finishes.
# =====================================================================================
RMS_BLOCK = 128


@wl.kernel
def rmsnorm_f16(x: wl.array2d(dtype=wl.float16), weight: wl.array(dtype=wl.float16),
                y: wl.array2d(dtype=wl.float16), eps: float):
    partial = wl.shared_array(RMS_BLOCK // 32, wl.float32)
    total = wl.shared_array(1, wl.float32)
    row = wl.block_idx.x
    t = wl.thread_idx.x
    lane = t % 32
    warp = t // 32
    n = x.shape[1]
    ss = 0.0
    for j in range(t, n, RMS_BLOCK):
        v = wl.float32(x[row, j])
        ss += v * v
    off = 16
    while off > 0:
        ss += wl.shfl_down_sync(wl.FULL_MASK, ss, off)
        off //= 2
    if lane == 0:
        partial[warp] = ss
    wl.syncthreads()
    if warp == 0:
        v = partial[lane] if lane < RMS_BLOCK // 32 else 0.0
        off = 16
        while off > 0:
            v += wl.shfl_down_sync(wl.FULL_MASK, v, off)
            off //= 2
        if lane == 0:
            total[0] = wl.rsqrt(v / n + eps)
    wl.syncthreads()
    scale = total[0]
    for j in range(t, n, RMS_BLOCK):
        y[row, j] = wl.float16(wl.float32(x[row, j]) * scale * wl.float32(weight[j]))


def test_rmsnorm_float16():
    _compile_both(rmsnorm_f16)
    g = _rng(5)
    rows, n = 5, 300
    x = g.standard_normal((rows, n)).astype(f16)
    w = g.uniform(0.5, 2.0, n).astype(f16)
    y = np.zeros_like(x)
    _sim(rmsnorm_f16, [x, w, y, 1e-6], grid=(rows, 1, 1), block=(RMS_BLOCK, 1, 1))
    xd = x.astype(f64)
    want = xd / np.sqrt((xd * xd).mean(axis=1, keepdims=True) + 1e-6) * w.astype(f64)
    # one float16 rounding of the output (2**-11 relative) plus float32 noise
    np.testing.assert_allclose(y.astype(f64), want, rtol=2e-3, atol=1e-3)


# =====================================================================================
# 6. Black-Scholes (CUDA sample BlackScholes) in float32 with erfc/exp/log/sqrt,
#    grid-stride loop; checked against float64 numpy.
# =====================================================================================
@wl.func
def cnd(d: float) -> float:
    return 0.5 * wl.erfc(-d * 0.70710678118654752)


@wl.kernel
def black_scholes(call: wl.array(dtype=wl.float32), put: wl.array(dtype=wl.float32),
                  price: wl.array(dtype=wl.float32), strike: wl.array(dtype=wl.float32),
                  years: wl.array(dtype=wl.float32), r: float, v: float, n: int):
    i = wl.block_idx.x * wl.block_dim.x + wl.thread_idx.x
    while i < n:
        s = price[i]
        x = strike[i]
        t = years[i]
        sqrt_t = wl.sqrt(t)
        d1 = (wl.log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
        d2 = d1 - v * sqrt_t
        c1 = cnd(d1)
        c2 = cnd(d2)
        exp_rt = wl.exp(-r * t)
        call[i] = s * c1 - x * exp_rt * c2
        put[i] = x * exp_rt * (1.0 - c2) - s * (1.0 - c1)
        i += wl.block_dim.x * wl.grid_dim.x


def _bs_ref(s, x, t, r, v):
    s, x, t = (a.astype(f64) for a in (s, x, t))
    erfc = np.vectorize(math.erfc)
    sqrt_t = np.sqrt(t)
    d1 = (np.log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    c1 = 0.5 * erfc(-d1 / math.sqrt(2))
    c2 = 0.5 * erfc(-d2 / math.sqrt(2))
    e = np.exp(-r * t)
    return s * c1 - x * e * c2, x * e * (1 - c2) - s * (1 - c1)


def test_black_scholes():
    _compile_both(black_scholes)
    g = _rng(6)
    n = 1000
    s = g.uniform(5.0, 30.0, n).astype(f32)
    x = g.uniform(1.0, 100.0, n).astype(f32)
    t = g.uniform(0.25, 10.0, n).astype(f32)
    call = np.zeros(n, f32)
    put = np.zeros(n, f32)
    _sim(black_scholes, [call, put, s, x, t, 0.02, 0.30, n], grid=(2, 1, 1), block=(128, 1, 1))
    want_c, want_p = _bs_ref(s, x, t, 0.02, 0.30)
    # CUDA sample's acceptance: max abs error ~1e-5 relative to prices of O(10..100)
    np.testing.assert_allclose(call, want_c, rtol=1e-4, atol=2e-4)
    np.testing.assert_allclose(put, want_p, rtol=1e-4, atol=2e-4)


# =====================================================================================
# 7. One LSD radix-sort pass, three kernels: per-block 4-bit digit histogram
#    (shared atomics), a work-efficient Blelloch exclusive scan of the
#    digit-major counts, and a stable scatter (rank = equal digits before me).
# =====================================================================================
RADIX_BITS = 4
RADIX = 1 << RADIX_BITS
RS_BLOCK = 64
SCAN_T = 128


@wl.kernel
def radix_histogram(keys: wl.array(dtype=wl.uint32), counts: wl.array2d(dtype=wl.int32),
                    shift: int, n: int):
    hist = wl.shared_array(RADIX, wl.int32)
    t = wl.thread_idx.x
    b = wl.block_idx.x
    if t < RADIX:
        hist[t] = 0
    wl.syncthreads()
    i = b * RS_BLOCK + t
    if i < n:
        d = wl.int32((keys[i] >> shift) & (RADIX - 1))
        wl.atomic_add(hist, d, 1)
    wl.syncthreads()
    if t < RADIX:
        counts[t, b] = hist[t]


@wl.kernel
def blelloch_scan(data: wl.array(dtype=wl.int32), n: int):
    temp = wl.shared_array(2 * SCAN_T, wl.int32)
    t = wl.thread_idx.x
    temp[2 * t] = data[2 * t] if 2 * t < n else 0
    temp[2 * t + 1] = data[2 * t + 1] if 2 * t + 1 < n else 0
    offset = 1
    d = SCAN_T
    while d > 0:  # up-sweep
        wl.syncthreads()
        if t < d:
            ai = offset * (2 * t + 1) - 1
            bi = offset * (2 * t + 2) - 1
            temp[bi] += temp[ai]
        offset *= 2
        d >>= 1
    if t == 0:
        temp[2 * SCAN_T - 1] = 0
    d = 1
    while d < 2 * SCAN_T:  # down-sweep
        offset >>= 1
        wl.syncthreads()
        if t < d:
            ai = offset * (2 * t + 1) - 1
            bi = offset * (2 * t + 2) - 1
            x = temp[ai]
            temp[ai] = temp[bi]
            temp[bi] += x
        d *= 2
    wl.syncthreads()
    if 2 * t < n:
        data[2 * t] = temp[2 * t]
    if 2 * t + 1 < n:
        data[2 * t + 1] = temp[2 * t + 1]


@wl.kernel
def radix_scatter(keys: wl.array(dtype=wl.uint32), out: wl.array(dtype=wl.uint32),
                  offsets: wl.array2d(dtype=wl.int32), shift: int, n: int):
    digits = wl.shared_array(RS_BLOCK, wl.int32)
    t = wl.thread_idx.x
    b = wl.block_idx.x
    i = b * RS_BLOCK + t
    key = keys[i] if i < n else wl.uint32(0)
    d = wl.int32((key >> shift) & (RADIX - 1))
    digits[t] = d if i < n else -1
    wl.syncthreads()
    if i >= n:
        return
    rank = 0
    for j in range(t):
        if digits[j] == d:
            rank += 1
    out[offsets[d, b] + rank] = key


def test_radix_sort_passes():
    for k in (radix_histogram, blelloch_scan, radix_scatter):
        _compile_both(k)
    g = _rng(7)
    n = 1000
    nb = _blocks(n, RS_BLOCK)
    assert RADIX * nb <= 2 * SCAN_T
    keys = g.integers(0, 1 << 16, n).astype(u32)
    orig = keys.copy()
    for p in range(16 // RADIX_BITS):
        shift = p * RADIX_BITS
        counts = np.zeros((RADIX, nb), i32)
        _sim(radix_histogram, [keys, counts, shift, n], grid=(nb, 1, 1), block=(RS_BLOCK, 1, 1))
        dig = ((keys >> shift) & (RADIX - 1)).astype(np.int64)
        blk = np.arange(n) // RS_BLOCK
        want = np.zeros((RADIX, nb), np.int64)
        np.add.at(want, (dig, blk), 1)
        np.testing.assert_array_equal(counts, want)
        flat = counts.reshape(-1)  # digit-major: counts[d, b]
        _sim(blelloch_scan, [flat, flat.size], grid=(1, 1, 1), block=(SCAN_T, 1, 1))
        np.testing.assert_array_equal(flat, np.concatenate([[0], np.cumsum(want)[:-1]]))
        out = np.zeros(n, u32)
        _sim(radix_scatter, [keys, out, counts, shift, n], grid=(nb, 1, 1),
             block=(RS_BLOCK, 1, 1))
        np.testing.assert_array_equal(out, keys[np.argsort(dig, kind="stable")])
        keys = out
    np.testing.assert_array_equal(keys, np.sort(orig))


# =====================================================================================
# 8. Sparse matrix-vector product, ELLPACK stored column-major (coalesced: entry k
#    of every row is contiguous), padding marked by column -1 (break at the end).
# =====================================================================================
@wl.kernel
def spmv_ell(cols: wl.array2d(dtype=wl.int32), vals: wl.array2d(dtype=wl.float32),
             x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    row = wl.tid()
    acc = 0.0
    for k in range(cols.shape[0]):
        c = cols[k, row]
        if c < 0:
            break
        acc += vals[k, row] * x[c]
    y[row] = acc


def test_spmv_ell():
    _compile_both(spmv_ell)
    g = _rng(8)
    nrows, ncols, width = 200, 150, 9
    cols = np.full((width, nrows), -1, i32)
    vals = np.zeros((width, nrows), f32)
    dense = np.zeros((nrows, ncols))
    for r in range(nrows):
        nnz = g.integers(0, width + 1)
        cs = np.sort(g.choice(ncols, nnz, replace=False))
        vs = g.standard_normal(nnz).astype(f32)
        cols[:nnz, r] = cs
        vals[:nnz, r] = vs
        dense[r, cs] = vs
    x = g.standard_normal(ncols).astype(f32)
    y = np.full(nrows, np.nan, f32)
    _sim(spmv_ell, [cols, vals, x, y], dim=nrows, block_dim=64)
    np.testing.assert_allclose(y, dense @ x.astype(f64), rtol=1e-5, atol=1e-5)


# =====================================================================================
# 9. Jacobi iterations for the 2-D Poisson equation (ping-pong buffers, Dirichlet
#    boundary copied), with the squared update norm accumulated by float64 atomics.
# =====================================================================================
@wl.kernel
def jacobi_step(u: wl.array2d(dtype=wl.float32), f: wl.array2d(dtype=wl.float32),
                u_new: wl.array2d(dtype=wl.float32), h2: float,
                diff2: wl.array(dtype=wl.float64)):
    i, j = wl.tid()
    ny = u.shape[0]
    nx = u.shape[1]
    if i == 0 or j == 0 or i == ny - 1 or j == nx - 1:
        u_new[i, j] = u[i, j]
        return
    v = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - h2 * f[i, j])
    u_new[i, j] = v
    d = wl.float64(v - u[i, j])
    wl.atomic_add(diff2, 0, d * d)


def test_jacobi_poisson():
    _compile_both(jacobi_step)
    g = _rng(9)
    ny, nx = 20, 27
    u = np.zeros((ny, nx), f32)
    u[0, :] = 1.0
    u[:, -1] = g.uniform(0, 1, ny).astype(f32)
    f = g.standard_normal((ny, nx)).astype(f32)
    h2 = f32(1.0 / 64)
    ref = u.copy()
    a, b = u.copy(), np.zeros_like(u)
    for _ in range(12):
        diff2 = np.zeros(1, f64)
        _sim(jacobi_step, [a, f, b, float(h2), diff2], dim=(ny, nx), block_dim=(8, 16))
        new = ref.copy()
        new[1:-1, 1:-1] = f32(0.25) * (ref[:-2, 1:-1] + ref[2:, 1:-1] + ref[1:-1, :-2]
                                       + ref[1:-1, 2:] - h2 * f[1:-1, 1:-1])
        np.testing.assert_allclose(b, new, rtol=1e-6, atol=1e-6)
        want_d2 = ((new[1:-1, 1:-1] - ref[1:-1, 1:-1]).astype(f64) ** 2).sum()
        np.testing.assert_allclose(diff2[0], want_d2, rtol=1e-5)
        ref = new
        a, b = b, a


# =====================================================================================
# 10. Particle binning (uniform grid, as in CUDA sample particles / SPH codes):
#     cell index from a vec2 position, slot by atomic_add's old value, overflow count.
# =====================================================================================
BIN_CAP = 8


@wl.kernel
def bin_particles(pos: wl.array(dtype=wl.vec2), origin: wl.vec2, inv_cell: float,
                  gx: int, gy: int, counts: wl.array(dtype=wl.int32),
                  bins: wl.array2d(dtype=wl.int32), overflow: wl.array(dtype=wl.int32)):
    i = wl.tid()
    p = (pos[i] - origin) * inv_cell
    cx = wl.clamp(int(wl.floor(p.x)), 0, gx - 1)
    cy = wl.clamp(int(wl.floor(p.y)), 0, gy - 1)
    cell = cy * gx + cx
    slot = wl.atomic_add(counts, cell, 1)
    if slot < BIN_CAP:
        bins[cell, slot] = i
    else:
        wl.atomic_add(overflow, 0, 1)


def test_particle_binning():
    _compile_both(bin_particles)
    g = _rng(10)
    n, gx, gy = 500, 9, 7
    pos = g.uniform(-1.2, 1.2, (n, 2)).astype(f32)  # some outside: clamped to edge cells
    origin = np.array([-1.0, -1.0], f32)
    inv_cell = 4.0
    counts = np.zeros(gx * gy, i32)
    bins = np.full((gx * gy, BIN_CAP), -1, i32)
    overflow = np.zeros(1, i32)
    _sim(bin_particles, [pos, origin, inv_cell, gx, gy, counts, bins, overflow], dim=n,
         block_dim=128)
    p = (pos - origin) * f32(inv_cell)
    cx = np.clip(np.floor(p[:, 0]).astype(int), 0, gx - 1)
    cy = np.clip(np.floor(p[:, 1]).astype(int), 0, gy - 1)
    cell = cy * gx + cx
    want_counts = np.bincount(cell, minlength=gx * gy)
    np.testing.assert_array_equal(counts, want_counts)
    assert overflow[0] == np.maximum(want_counts - BIN_CAP, 0).sum()
    for c in range(gx * gy):
        got = bins[c][bins[c] >= 0]
        members = np.flatnonzero(cell == c)
        assert len(got) == min(BIN_CAP, len(members))
        assert set(got) <= set(members) and len(set(got)) == len(got)


# =====================================================================================
# 11. Quantised GEMV: int8 weights x int8 activations, int32 accumulation (4 per
#     step, as dp4a), one warp per row with a shfl_down reduction, float dequant.
# =====================================================================================
@wl.kernel
def gemv_int8(w: wl.array2d(dtype=wl.int8), x: wl.array(dtype=wl.int8),
              row_scale: wl.array(dtype=wl.float32), x_scale: float,
              acc_out: wl.array(dtype=wl.int32), y: wl.array(dtype=wl.float32)):
    row = (wl.block_idx.x * wl.block_dim.x + wl.thread_idx.x) // 32
    lane = wl.lane_id()
    if row >= w.shape[0]:
        return
    acc = 0
    for k in range(lane * 4, w.shape[1], 128):
        acc += (wl.int32(w[row, k]) * wl.int32(x[k]) + wl.int32(w[row, k + 1]) * wl.int32(x[k + 1])
                + wl.int32(w[row, k + 2]) * wl.int32(x[k + 2])
                + wl.int32(w[row, k + 3]) * wl.int32(x[k + 3]))
    off = 16
    while off > 0:
        acc += wl.shfl_down_sync(wl.FULL_MASK, acc, off)
        off //= 2
    if lane == 0:
        acc_out[row] = acc
        y[row] = float(acc) * row_scale[row] * x_scale


def test_gemv_int8_int32_accumulate():
    _compile_both(gemv_int8)
    g = _rng(11)
    m, k = 10, 264  # k a multiple of 4, not of 128
    w = g.integers(-128, 128, (m, k)).astype(i8)
    x = g.integers(-128, 128, k).astype(i8)
    scale = g.uniform(0.001, 0.01, m).astype(f32)
    acc = np.zeros(m, i32)
    y = np.zeros(m, f32)
    _sim(gemv_int8, [w, x, scale, 0.05, acc, y], grid=(_blocks(m * 32, 128), 1, 1),
         block=(128, 1, 1))
    want = w.astype(np.int64) @ x.astype(np.int64)
    np.testing.assert_array_equal(acc, want)
    np.testing.assert_allclose(y, want * scale.astype(f64) * f64(f32(0.05)), rtol=1e-6)


# =====================================================================================
# 12. 3-D 7-point stencil (heat equation step) with a 3-D tid(): (z, y, x).
# =====================================================================================
@wl.kernel
def stencil7_3d(u: wl.array3d(dtype=wl.float32), out: wl.array3d(dtype=wl.float32),
                c0: float, c1: float):
    k, j, i = wl.tid()
    nz, ny, nx = u.shape
    if k == 0 or j == 0 or i == 0 or k == nz - 1 or j == ny - 1 or i == nx - 1:
        out[k, j, i] = u[k, j, i]
        return
    out[k, j, i] = c0 * u[k, j, i] + c1 * (u[k - 1, j, i] + u[k + 1, j, i] + u[k, j - 1, i]
                                           + u[k, j + 1, i] + u[k, j, i - 1] + u[k, j, i + 1])


def test_stencil7_3d():
    _compile_both(stencil7_3d)
    g = _rng(12)
    shape = (6, 9, 13)
    u = g.standard_normal(shape).astype(f32)
    out = np.full(shape, np.nan, f32)
    _sim(stencil7_3d, [u, out, 0.4, 0.1], dim=shape, block_dim=(2, 4, 8))
    want = u.astype(f64).copy()
    ud = u.astype(f64)
    want[1:-1, 1:-1, 1:-1] = 0.4 * ud[1:-1, 1:-1, 1:-1] + 0.1 * (
        ud[:-2, 1:-1, 1:-1] + ud[2:, 1:-1, 1:-1] + ud[1:-1, :-2, 1:-1] + ud[1:-1, 2:, 1:-1]
        + ud[1:-1, 1:-1, :-2] + ud[1:-1, 1:-1, 2:])
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


# =====================================================================================
# 13. Complex arithmetic with vec2: a naive DFT (one output bin per thread) and the
#     cross-power spectrum X * conj(Y), through device functions on vec2.
# =====================================================================================
@wl.func
def cmul(a: wl.vec2, b: wl.vec2) -> wl.vec2:
    return wl.vec2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x)


@wl.func
def conj(a: wl.vec2) -> wl.vec2:
    return wl.vec2(a.x, -a.y)


@wl.kernel
def dft_cross_power(x: wl.array(dtype=wl.vec2), y: wl.array(dtype=wl.vec2),
                    xf: wl.array(dtype=wl.vec2), cross: wl.array(dtype=wl.vec2)):
    k = wl.tid()
    n = x.shape[0]
    accx = wl.vec2(0.0, 0.0)
    accy = wl.vec2(0.0, 0.0)
    for t in range(n):
        ang = -2.0 * math.pi * float((k * t) % n) / float(n)
        tw = wl.vec2(wl.cos(ang), wl.sin(ang))
        accx += cmul(x[t], tw)
        accy += cmul(y[t], tw)
    xf[k] = accx
    cross[k] = cmul(accx, conj(accy))


def _c2v(z):
    return np.ascontiguousarray(z.astype(np.complex64)).view(f32).reshape(-1, 2)


def test_dft_complex_vec2():
    _compile_both(dft_cross_power)
    g = _rng(13)
    n = 48
    x = g.standard_normal(n) + 1j * g.standard_normal(n)
    y = g.standard_normal(n) + 1j * g.standard_normal(n)
    xv, yv = _c2v(x), _c2v(y)
    xf = np.zeros((n, 2), f32)
    cross = np.zeros((n, 2), f32)
    _sim(dft_cross_power, [xv, yv, xf, cross], dim=n, block_dim=32)
    X = np.fft.fft(xv[:, 0].astype(f64) + 1j * xv[:, 1])
    Y = np.fft.fft(yv[:, 0].astype(f64) + 1j * yv[:, 1])
    np.testing.assert_allclose(xf[:, 0] + 1j * xf[:, 1], X, rtol=0, atol=1e-4 * n)
    np.testing.assert_allclose(cross[:, 0] + 1j * cross[:, 1], X * np.conj(Y), rtol=0,
                               atol=1e-3 * n * n)


# =====================================================================================
# 14. Grid-stride sum of squares accumulated in float64: per-thread float64,
#     64-bit warp shuffles, one float64 atomic_add per warp.
# =====================================================================================
@wl.kernel
def sumsq_f64(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float64), n: int):
    acc: wl.float64 = 0.0
    i = wl.block_idx.x * wl.block_dim.x + wl.thread_idx.x
    stride = wl.block_dim.x * wl.grid_dim.x
    while i < n:
        v = wl.float64(x[i])
        acc += v * v
        i += stride
    off = 16
    while off > 0:
        acc += wl.shfl_down_sync(wl.FULL_MASK, acc, off)
        off //= 2
    if wl.lane_id() == 0:
        wl.atomic_add(out, 0, acc)


def test_grid_stride_sumsq_float64_atomic():
    _compile_both(sumsq_f64)
    g = _rng(14)
    n = 5000
    x = g.standard_normal(n).astype(f32)
    out = np.zeros(1, f64)
    _sim(sumsq_f64, [x, out, n], grid=(3, 1, 1), block=(96, 1, 1))
    want = (x.astype(f64) ** 2).sum()
    np.testing.assert_allclose(out[0], want, rtol=1e-13)


# =====================================================================================
# 15. Tiled transpose (CUDA sample transposeCoalesced, padded shared tile) of a
#     non-square, non-contiguous numpy view into another view.
# =====================================================================================
TR_TILE = 32
TR_ROWS = 8


@wl.kernel
def transpose_coalesced(src: wl.array2d(dtype=wl.float32), dst: wl.array2d(dtype=wl.float32)):
    tile = wl.shared_array((TR_TILE, TR_TILE + 1), wl.float32)
    h = src.shape[0]
    w = src.shape[1]
    x = wl.block_idx.x * TR_TILE + wl.thread_idx.x
    y = wl.block_idx.y * TR_TILE + wl.thread_idx.y
    for r in range(0, TR_TILE, TR_ROWS):
        if x < w and y + r < h:
            tile[wl.thread_idx.y + r, wl.thread_idx.x] = src[y + r, x]
    wl.syncthreads()
    x = wl.block_idx.y * TR_TILE + wl.thread_idx.x
    y = wl.block_idx.x * TR_TILE + wl.thread_idx.y
    for r in range(0, TR_TILE, TR_ROWS):
        if x < h and y + r < w:
            dst[y + r, x] = tile[wl.thread_idx.x, wl.thread_idx.y + r]


def test_transpose_of_strided_views():
    _compile_both(transpose_coalesced)
    base = np.arange(90 * 200, dtype=f32).reshape(90, 200)
    src = base[1::2, 5::3]                      # 45 x 65, strides (400, 3) elements
    out_base = np.full((2 * 65, 50), -1.0, f32)
    dst = out_base[::2, 3:48]                   # 65 x 45, row stride 100 elements
    h, w = src.shape
    _sim(transpose_coalesced, [src, dst], grid=(_blocks(w, TR_TILE), _blocks(h, TR_TILE), 1),
         block=(TR_TILE, TR_ROWS, 1))
    np.testing.assert_array_equal(dst, src.T)
    untouched = np.ones_like(out_base, bool)
    untouched[::2, 3:48] = False
    assert (out_base[untouched] == -1.0).all()
    # and into a transposed (column-major) destination: inner stride != 1
    dst2_base = np.zeros((45, 65), f32)
    _sim(transpose_coalesced, [src, dst2_base.T],
         grid=(_blocks(w, TR_TILE), _blocks(h, TR_TILE), 1), block=(TR_TILE, TR_ROWS, 1))
    np.testing.assert_array_equal(dst2_base, src)


# =====================================================================================
# 16. Device functions calling each other with arrays (binary search over a sorted
#     array, a writer function), early returns, while True with break/continue.
# =====================================================================================
@wl.func
def lower_bound(a, n: int, key: int) -> int:
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


@wl.func
def count_equal(a, key: int) -> int:
    n = a.shape[0]
    return lower_bound(a, n, key + 1) - lower_bound(a, n, key)


@wl.func
def is_prime(v: int) -> bool:
    if v < 2:
        return False
    if v % 2 == 0:
        return v == 2
    d = 3
    while d * d <= v:
        if v % d == 0:
            return False
        d += 2
    return True


@wl.func
def record(out, i: int, a: int, b: int):
    out[i, 0] = a
    out[i, 1] = b


@wl.kernel
def count_and_next_prime(sorted_keys: wl.array(dtype=wl.int32),
                         queries: wl.array(dtype=wl.int32), out: wl.array2d(dtype=wl.int32)):
    i = wl.tid()
    q = queries[i]
    if q < 0:
        record(out, i, -1, -1)
        return
    c = count_equal(sorted_keys, q)
    p = q
    while True:
        if p < 2:
            p = 2
            continue
        if p % 2 == 0 and p != 2:
            p += 1
            continue
        if is_prime(p):
            break
        p += 2
    record(out, i, c, p)


def _next_prime(q):
    def prime(v):
        return v >= 2 and all(v % d for d in range(2, int(v ** 0.5) + 1))
    p = q
    while not prime(p):
        p += 1
    return p


def test_device_functions_search_and_control_flow():
    _compile_both(count_and_next_prime)
    g = _rng(16)
    keys = np.sort(g.integers(0, 60, 150)).astype(i32)
    queries = g.integers(-10, 70, 100).astype(i32)
    out = np.zeros((100, 2), i32)
    _sim(count_and_next_prime, [keys, queries, out], dim=100, block_dim=64)
    for i, q in enumerate(queries):
        if q < 0:
            assert tuple(out[i]) == (-1, -1)
        else:
            assert tuple(out[i]) == ((keys == q).sum(), _next_prime(int(q))), (i, q)


# =====================================================================================
# 17. Stream compaction with warp-aggregated atomics (CUDA blog "warp-aggregated
#     atomics"): ballot, the leader (ffs) reserves popc slots, shfl broadcasts.
# =====================================================================================
@wl.kernel
def compact_positive(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32),
                     count: wl.array(dtype=wl.int32), n: int):
    i = wl.tid()
    keep = i < n and x[i] > 0.0
    lane = wl.lane_id()
    mask = wl.ballot_sync(wl.FULL_MASK, keep)
    leader = wl.ffs(mask) - 1
    base = 0
    if lane == leader:
        base = wl.atomic_add(count, 0, wl.popc(mask))
    base = wl.shfl_sync(wl.FULL_MASK, base, leader)
    if keep:
        out[base + wl.popc(mask & ((1 << lane) - 1))] = x[i]


def test_warp_aggregated_compaction():
    _compile_both(compact_positive)
    g = _rng(17)
    n = 300
    x = g.standard_normal(n).astype(f32)
    x[64:96] = -1.0  # a warp with nothing to keep: leader is -1 and no atomic
    out = np.full(n, np.nan, f32)
    count = np.zeros(1, i32)
    _sim(compact_positive, [x, out, count, n], dim=320, block_dim=64)
    kept = x[x > 0]
    assert count[0] == len(kept)
    np.testing.assert_array_equal(np.sort(out[:count[0]]), np.sort(kept))
    assert np.isnan(out[count[0]:]).all()


# =====================================================================================
# 18. GPU hash table insert, open addressing with linear probing and atomic_cas
#     (while True / break, unsigned multiplicative hashing).
# =====================================================================================
HT_EMPTY = -1


@wl.kernel
def hash_insert(keys: wl.array(dtype=wl.int32), vals: wl.array(dtype=wl.int32),
                table_k: wl.array(dtype=wl.int32), table_v: wl.array(dtype=wl.int32)):
    i = wl.tid()
    k = keys[i]
    cap = table_k.shape[0]
    slot = wl.int32((wl.uint32(k) * wl.uint32(2654435761)) % wl.uint32(cap))
    while True:
        prev = wl.atomic_cas(table_k, slot, HT_EMPTY, k)
        if prev == HT_EMPTY or prev == k:
            table_v[slot] = vals[i]
            break
        slot = (slot + 1) % cap


def test_hash_table_insert_cas():
    _compile_both(hash_insert)
    g = _rng(18)
    n, cap = 150, 256
    keys = g.permutation(5000)[:n].astype(i32)
    vals = (keys * 7 + 1).astype(i32)
    tk = np.full(cap, HT_EMPTY, i32)
    tv = np.zeros(cap, i32)
    _sim(hash_insert, [keys, vals, tk, tv], dim=n, block_dim=64)
    used = tk != HT_EMPTY
    assert used.sum() == n and set(tk[used].tolist()) == set(keys.tolist())
    np.testing.assert_array_equal(tv[used], tk[used] * 7 + 1)
    # every key sits at or after (cyclically) its home slot with no empty slot between
    home = ((keys.astype(np.uint64) * 2654435761) % (1 << 32) % cap).astype(int)
    for k, h in zip(keys, home):
        s = int(np.flatnonzero(tk == k)[0])
        path = [(h + d) % cap for d in range((s - h) % cap + 1)]
        assert all(tk[p] != HT_EMPTY for p in path)


# =====================================================================================
# 19. Single-pass prefix sum with decoupled look-back (Merrill & Garland; CUB):
#     dynamic block ids from a ticket, flags polled with atomics, blocks wait on
#     their predecessors (needs forward progress between resident blocks).
# =====================================================================================
LB_BLOCK = 64
LB_NONE = 0
LB_AGG = 1
LB_PREFIX = 2


@wl.kernel
def lookback_scan(x: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.int32),
                  ticket: wl.array(dtype=wl.int32), flags: wl.array(dtype=wl.int32),
                  aggs: wl.array(dtype=wl.int32), prefs: wl.array(dtype=wl.int32), n: int):
    buf = wl.shared_array(LB_BLOCK, wl.int32)
    bid = wl.shared_array(1, wl.int32)
    excl_s = wl.shared_array(1, wl.int32)
    t = wl.thread_idx.x
    if t == 0:
        bid[0] = wl.atomic_add(ticket, 0, 1)
    wl.syncthreads()
    b = bid[0]
    i = b * LB_BLOCK + t
    buf[t] = x[i] if i < n else 0
    wl.syncthreads()
    d = 1
    while d < LB_BLOCK:  # Hillis-Steele in place, two barriers per step
        v = buf[t - d] if t >= d else 0
        wl.syncthreads()
        buf[t] += v
        wl.syncthreads()
        d *= 2
    if t == 0:
        total = buf[LB_BLOCK - 1]
        excl = 0
        if b == 0:
            prefs[0] = total
            wl.threadfence()
            wl.atomic_exch(flags, 0, LB_PREFIX)
        else:
            aggs[b] = total
            wl.threadfence()
            wl.atomic_exch(flags, b, LB_AGG)
            j = b - 1
            while j >= 0:
                f = wl.atomic_add(flags, j, 0)
                if f == LB_NONE:
                    continue
                if f == LB_PREFIX:
                    excl += wl.atomic_add(prefs, j, 0)
                    break
                excl += wl.atomic_add(aggs, j, 0)
                j -= 1
            prefs[b] = excl + total
            wl.threadfence()
            wl.atomic_exch(flags, b, LB_PREFIX)
        excl_s[0] = excl
    wl.syncthreads()
    if i < n:
        out[i] = buf[t] + excl_s[0]


def test_decoupled_lookback_scan():
    _compile_both(lookback_scan)
    g = _rng(19)
    n = 2000
    nb = _blocks(n, LB_BLOCK)
    x = g.integers(-20, 20, n).astype(i32)
    out = np.zeros(n, i32)
    flags = np.zeros(nb, i32)
    _sim(lookback_scan, [x, out, np.zeros(1, i32), flags, np.zeros(nb, i32), np.zeros(nb, i32), n],
         grid=(nb, 1, 1), block=(LB_BLOCK, 1, 1))
    np.testing.assert_array_equal(out, np.cumsum(x))
    assert (flags == LB_PREFIX).all()


# =====================================================================================
# 20. Batched small dense solves (one 4x4 system per thread, float64) with partial
#     pivoting in a per-thread 2-D local array; singular systems return early.
# =====================================================================================
LU_N = 4


@wl.kernel
def batched_solve4(a: wl.array3d(dtype=wl.float64), b: wl.array2d(dtype=wl.float64),
                   x: wl.array2d(dtype=wl.float64), info: wl.array(dtype=wl.int32)):
    p = wl.tid()
    m = wl.local_array((LU_N, LU_N + 1), wl.float64)
    for r in range(LU_N):
        for c in range(LU_N):
            m[r, c] = a[p, r, c]
        m[r, LU_N] = b[p, r]
    for col in range(LU_N):
        piv = col
        best = abs(m[col, col])
        for r in range(col + 1, LU_N):
            if abs(m[r, col]) > best:
                best = abs(m[r, col])
                piv = r
        if best == 0.0:
            info[p] = col + 1
            return
        if piv != col:
            for c in range(LU_N + 1):
                m[col, c], m[piv, c] = m[piv, c], m[col, c]
        for r in range(col + 1, LU_N):
            f = m[r, col] / m[col, col]
            for c in range(col, LU_N + 1):
                m[r, c] -= f * m[col, c]
    for r in range(LU_N - 1, -1, -1):
        s = m[r, LU_N]
        for c in range(r + 1, LU_N):
            s -= m[r, c] * x[p, c]
        x[p, r] = s / m[r, r]
    info[p] = 0


def test_batched_solve_pivoting():
    _compile_both(batched_solve4)
    g = _rng(20)
    nsys = 40
    a = g.standard_normal((nsys, LU_N, LU_N))
    a[5] = 0.0          # singular at column 1
    a[7, :, 2] = 0.0    # singular at column 3
    b = g.standard_normal((nsys, LU_N))
    x = np.zeros((nsys, LU_N))
    info = np.full(nsys, -9, i32)
    _sim(batched_solve4, [a, b, x, info], dim=nsys, block_dim=32)
    assert info[5] == 1 and info[7] == 3
    for p in set(range(nsys)) - {5, 7}:
        assert info[p] == 0
        np.testing.assert_allclose(x[p], np.linalg.solve(a[p], b[p]), rtol=1e-10, atol=1e-12)


# =====================================================================================
# 21. Brute-force k-nearest neighbours: per-thread sorted top-k in local arrays
#     (insertion with a run-time index), vec3 distances, continue/while.
# =====================================================================================
KNN_K = 8


@wl.kernel
def knn_bruteforce(q: wl.array(dtype=wl.vec3), ref: wl.array(dtype=wl.vec3),
                   idx: wl.array2d(dtype=wl.int32), dist: wl.array2d(dtype=wl.float32)):
    i = wl.tid()
    p = q[i]
    bd = wl.local_array(KNN_K, wl.float32)
    bi = wl.local_array(KNN_K, wl.int32)
    for k in range(KNN_K):
        bd[k] = math.inf
        bi[k] = -1
    for j in range(ref.shape[0]):
        d = wl.length_sq(ref[j] - p)
        if d >= bd[KNN_K - 1]:
            continue
        k = KNN_K - 1
        while k > 0 and bd[k - 1] > d:
            bd[k] = bd[k - 1]
            bi[k] = bi[k - 1]
            k -= 1
        bd[k] = d
        bi[k] = j
    for k in range(KNN_K):
        idx[i, k] = bi[k]
        dist[i, k] = bd[k]


def test_knn_local_arrays():
    _compile_both(knn_bruteforce)
    g = _rng(21)
    nq, nr = 40, 64  # small: divergent insertion runs ~100 us per simulated step
    q = g.standard_normal((nq, 3)).astype(f32)
    r = g.standard_normal((nr, 3)).astype(f32)
    idx = np.zeros((nq, KNN_K), i32)
    dist = np.zeros((nq, KNN_K), f32)
    _sim(knn_bruteforce, [q, r, idx, dist], dim=nq, block_dim=32)
    d = ((r[None, :, :].astype(f64) - q[:, None, :]) ** 2).sum(axis=2)
    want = np.argsort(d, axis=1, kind="stable")[:, :KNN_K]
    np.testing.assert_array_equal(idx, want)
    np.testing.assert_allclose(dist, np.take_along_axis(d, want, axis=1), rtol=1e-5)


# =====================================================================================
# 22. Attention forward (FlashAttention-style): one warp per query row, K/V tiles in
#     shared memory, scores by lane, online softmax with shfl_xor max/sum, P@V by
#     broadcasting each lane's probability with shfl_sync.
# =====================================================================================
ATT_D = 32
ATT_WARPS = 4
@wl.kernel
def attention_fwd(q: wl.array2d(dtype=wl.float32), k: wl.array2d(dtype=wl.float32),
                  v: wl.array2d(dtype=wl.float32), o: wl.array2d(dtype=wl.float32), scale: float):
    ks = wl.shared_array((32, ATT_D + 1), wl.float32)
    vs = wl.shared_array((32, ATT_D), wl.float32)
    qs = wl.shared_array((ATT_WARPS, ATT_D), wl.float32)
    t = wl.thread_idx.x
    lane = wl.lane_id()
    w = wl.warp_id()
    row = wl.block_idx.x * ATT_WARPS + w
    nq = q.shape[0]
    nk = k.shape[0]
    qs[w, lane] = q[row, lane] * scale if row < nq else 0.0
    m = -math.inf
    l = 0.0
    acc = 0.0
    for k0 in range(0, nk, 32):
        wl.syncthreads()
        for e in range(t, 32 * ATT_D, 32 * ATT_WARPS):
            r = e // ATT_D
            c = e % ATT_D
            ks[r, c] = k[k0 + r, c] if k0 + r < nk else 0.0
            vs[r, c] = v[k0 + r, c] if k0 + r < nk else 0.0
        wl.syncthreads()
        s = -math.inf
        if k0 + lane < nk:
            s = 0.0
            for d in range(ATT_D):
                s += qs[w, d] * ks[lane, d]
        tile_max = s
        off = 16
        while off > 0:
            tile_max = max(tile_max, wl.shfl_xor_sync(wl.FULL_MASK, tile_max, off))
            off //= 2
        m_new = max(m, tile_max)
        p = wl.exp(s - m_new)
        psum = p
        off = 16
        while off > 0:
            psum += wl.shfl_xor_sync(wl.FULL_MASK, psum, off)
            off //= 2
        corr = wl.exp(m - m_new)
        l = l * corr + psum
        acc = acc * corr
        for j in range(32):
            pj = wl.shfl_sync(wl.FULL_MASK, p, j)
            acc += pj * vs[j, lane]
        m = m_new
    if row < nq:
        o[row, lane] = acc / l


def test_attention_forward_online_softmax():
    _compile_both(attention_fwd)
    g = _rng(22)
    nq, nk = 10, 70  # 3 warps idle in the last block, a partial key tile
    q = g.standard_normal((nq, ATT_D)).astype(f32)
    k = g.standard_normal((nk, ATT_D)).astype(f32)
    v = g.standard_normal((nk, ATT_D)).astype(f32)
    o = np.zeros((nq, ATT_D), f32)
    scale = 1 / math.sqrt(ATT_D)
    _sim(attention_fwd, [q, k, v, o, scale], grid=(_blocks(nq, ATT_WARPS), 1, 1),
         block=(32 * ATT_WARPS, 1, 1))
    s = (q.astype(f64) * f32(scale)) @ k.T.astype(f64)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(o, p @ v.astype(f64), rtol=1e-4, atol=1e-5)


# =====================================================================================
# Bugs found by these kernels (strict xfails: each turns into a failure when fixed,
# so the marker is removed with the fix).
# =====================================================================================
@wl.func
def not_mult3(v: int) -> int:
    if v % 3 == 0:
        return 0          # two ret sites: lanes leave the function at different times
    return 1


@wl.kernel
def triangle_plus_call(trips: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.int32)):
    i = wl.tid()
    s = 0
    for j in range(trips[i]):   # per-thread trip counts: the simulator parks looping warps
        s += j
    out[i] = s + not_mult3(i)   # a real call at opt=0


def test_calls_at_opt0_while_warps_are_parked():
    trips = np.where(np.arange(64) < 32, 1, 200).astype(i32)
    trips[0] = 100
    out = np.zeros(64, i32)
    _sim(triangle_plus_call, [trips, out], dim=64, block_dim=64, opt=0)
    want = trips * (trips - 1) // 2 + (np.arange(64) % 3 != 0)
    np.testing.assert_array_equal(out, want)


def test_device_functions_kernel_at_opt0():
    g = _rng(16)
    keys = np.sort(g.integers(0, 60, 150)).astype(i32)
    queries = g.integers(-10, 70, 64).astype(i32)
    out = np.zeros((64, 2), i32)
    _sim(count_and_next_prime, [keys, queries, out], dim=64, block_dim=64, opt=0)
    for i, q in enumerate(queries):
        want = (-1, -1) if q < 0 else ((keys == q).sum(), _next_prime(int(q)))
        assert tuple(out[i]) == want


@wl.func
def tri_number(n: int) -> int:
    s = 0
    for j in range(n):
        s += j
    return s


@wl.kernel
def tri_numbers(trips: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.int32)):
    i = wl.tid()
    out[i] = tri_number(trips[i]) + 1


def test_parked_warp_returning_from_a_call_hangs():
    import signal

    trips = np.where(np.arange(64) < 32, 3, 300).astype(i32)
    trips[33] = 5
    out = np.zeros(64, i32)

    def on_alarm(signum, frame):
        raise KeyboardInterrupt  # the simulator turns this into a partial result

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 3.0)
    try:
        res = wl.launch(tri_numbers, inputs=[trips, out], dim=64, block_dim=64, device="sim",
                        opt=0, max_instructions=1_000_000)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert not res.partial, [str(f) for f in res.findings]
    np.testing.assert_array_equal(out, trips * (trips - 1) // 2 + 1)


WR_BLOCK = 64


@wl.kernel
def warp_sync_reduce(x: wl.array(dtype=wl.int32), sums: wl.array(dtype=wl.int32)):
    """CUDA samples reduction, final warp unrolled with __syncwarp (post-Volta form)."""
    buf = wl.shared_array(WR_BLOCK, wl.int32)
    t = wl.thread_idx.x
    buf[t] = x[wl.block_idx.x * WR_BLOCK + t]
    wl.syncthreads()
    if t < 32:
        v = buf[t] + buf[t + 32]
        off = 16
        while off > 0:
            wl.syncwarp(wl.FULL_MASK)
            buf[t] = v
            wl.syncwarp(wl.FULL_MASK)
            v += buf[t + off]
            off //= 2
        if t == 0:
            sums[wl.block_idx.x] = v


def test_warp_synchronous_reduction_values():
    x = np.arange(3 * WR_BLOCK, dtype=i32) * 3 - 100
    sums = np.zeros(3, i32)
    wl.launch(warp_sync_reduce, inputs=[x, sums], grid=(3, 1, 1), block=(WR_BLOCK, 1, 1),
              device="sim", checks=("memcheck", "barrier"))
    np.testing.assert_array_equal(sums, x.reshape(3, -1).sum(axis=1))


def test_warp_synchronous_reduction_racecheck():
    x = np.arange(3 * WR_BLOCK, dtype=i32)
    sums = np.zeros(3, i32)
    _sim(warp_sync_reduce, [x, sums], grid=(3, 1, 1), block=(WR_BLOCK, 1, 1))


@wl.kernel
def warp_reduce_no_first_sync(x: wl.array(dtype=wl.int32), sums: wl.array(dtype=wl.int32)):
    """warp_sync_reduce without the __syncwarp before the store: lane t overwrites
    buf[t] while lane t - off may not have read it yet (write-after-read)."""
    buf = wl.shared_array(WR_BLOCK, wl.int32)
    t = wl.thread_idx.x
    buf[t] = x[wl.block_idx.x * WR_BLOCK + t]
    wl.syncthreads()
    if t < 32:
        v = buf[t] + buf[t + 32]
        off = 16
        while off > 0:
            buf[t] = v
            wl.syncwarp(wl.FULL_MASK)
            v += buf[t + off]
            off //= 2
        if t == 0:
            sums[wl.block_idx.x] = v


@wl.kernel
def warps_talk_through_syncwarp(x: wl.array(dtype=wl.int32)):
    """Warp 0 writes, warp 1 reads, with only __syncwarp between: it orders the lanes
    of one warp, not two warps (read-after-write)."""
    buf = wl.shared_array(64, wl.int32)
    t = wl.thread_idx.x
    if t < 32:
        buf[t] = t
    wl.syncwarp(wl.FULL_MASK)
    if t >= 32:
        x[t] = buf[t - 32]


def _race_kinds(kernel, inputs, block):
    res = wl.launch(kernel, inputs=inputs, grid=(1, 1, 1), block=block, device="sim",
                    checks=("racecheck",))
    return {f.kind for f in res.findings}


def test_racecheck_still_sees_a_missing_syncwarp():
    x = np.arange(WR_BLOCK, dtype=i32)
    assert _race_kinds(warp_reduce_no_first_sync, [x, np.zeros(1, i32)],
                       (WR_BLOCK, 1, 1)) == {"race_war"}


def test_racecheck_syncwarp_does_not_order_two_warps():
    assert _race_kinds(warps_talk_through_syncwarp, [np.zeros(64, i32)], (64, 1, 1)) \
        == {"race_raw"}


@wl.func
def scaled_by(v: float, scale: float = 2.0) -> float:
    return v * scale


@wl.kernel
def uses_default_arg(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    x[i] = scaled_by(x[i])


def test_default_parameter_value_of_a_helper_is_used():
    x = np.arange(64, dtype=np.float32)
    _sim(uses_default_arg, [x], dim=64)
    np.testing.assert_array_equal(x, np.arange(64, dtype=np.float32) * 2.0)


@wl.kernel
def countdown_unsigned(out: wl.array(dtype=wl.int32), n: wl.uint32, step: int):
    c = 0
    for k in range(n, 0, step):        # step -3: Python runs 7, 4, 1
        c += 1
    out[0] = c
    c = 0
    for k in range(n - 1, -1, -1):     # the usual countdown over n items
        c += 1
    out[1] = c


def test_range_countdown_with_unsigned_bound():
    out = np.zeros(2, i32)
    try:
        _sim(countdown_unsigned, [out, np.uint32(7), -3], dim=1)
    except wl.KernelCompileError:
        return  # a diagnostic is an acceptable fix
    np.testing.assert_array_equal(out, [len(range(7, 0, -3)), len(range(6, -1, -1))])
