"""Real-world kernels through warp_lab, round 2 (round 1: test_real_kernels.py).

New shapes only: a bank-conflict-free Blelloch scan, argmax with (value, index)
warp shuffles and a packed 64-bit atomic_max, a Floyd-Warshall step with the
pivot row/column cached in shared memory, uint32/uint64 hashes (murmur3, PCG,
xorshift, FNV-1a), bit intrinsics, float16 SAXPY, batched matmul with 3-D blocks
(thread_idx.z), the threadFenceReduction sample, table-driven CRC-32, CSR
vector SpMV, an N-body tile loop on vec4, Game of Life on uint8 with torus
wrap, Mandelbrot, a segmented warp scan (ballot/clz), bilinear resize, periodic
wrap with float % and //, intra-warp spin locks, a printf table, double-buffered
SGEMM tiles, a median filter, a shared-memory hash group-by, padded vec3 views,
stream compaction by a shuffle block scan, a warp bitonic sort and a vec3 warp sum.

Each kernel is compiled for sm_80 and sm_90 (ptxas must accept it), run on the
simulator with memcheck, racecheck and the barrier check, and compared with an
independent numpy/Python reference (exact for integers, a tolerance stated per
kernel for floats). A test marked ``xfail(strict=True)`` is a warp_lab bug; its
reason names the bug and the code at fault.
"""

import math
import zlib

import numpy as np
import pytest

import warp_lab as wl
from rk_common import _blocks, _compile_both, _rng, _sim

f16 = np.float16
f32 = np.float32
f64 = np.float64
i32 = np.int32
u8 = np.uint8
u32 = np.uint32
u64 = np.uint64

M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF


# =====================================================================================
# 1. Work-efficient (Blelloch) exclusive scan of 512 elements per block with the
#    bank-conflict-free padding of GPU Gems 3 ch. 39 (CONFLICT_FREE_OFFSET).
# =====================================================================================
SCAN_N = 512
LOG_BANKS = 5


@wl.func
def cfo(n: int) -> int:
    return n >> LOG_BANKS


@wl.kernel
def blelloch_scan_padded(x: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.int32),
                         block_sums: wl.array(dtype=wl.int32)):
    temp = wl.shared_array(SCAN_N + SCAN_N // 32, wl.int32)
    t = wl.thread_idx.x
    base = wl.block_idx.x * SCAN_N
    n = len(x)
    ai = t
    bi = t + SCAN_N // 2
    va = 0
    vb = 0
    if base + ai < n:
        va = x[base + ai]
    if base + bi < n:
        vb = x[base + bi]
    temp[ai + cfo(ai)] = va
    temp[bi + cfo(bi)] = vb
    offset = 1
    d = SCAN_N >> 1
    while d > 0:
        wl.syncthreads()
        if t < d:
            a = offset * (2 * t + 1) - 1
            b = offset * (2 * t + 2) - 1
            a += cfo(a)
            b += cfo(b)
            temp[b] += temp[a]
        offset *= 2
        d >>= 1
    if t == 0:
        last = SCAN_N - 1 + cfo(SCAN_N - 1)
        block_sums[wl.block_idx.x] = temp[last]
        temp[last] = 0
    d = 1
    while d < SCAN_N:
        offset >>= 1
        wl.syncthreads()
        if t < d:
            a = offset * (2 * t + 1) - 1
            b = offset * (2 * t + 2) - 1
            a += cfo(a)
            b += cfo(b)
            tmp = temp[a]
            temp[a] = temp[b]
            temp[b] += tmp
        d *= 2
    wl.syncthreads()
    if base + ai < n:
        out[base + ai] = temp[ai + cfo(ai)]
    if base + bi < n:
        out[base + bi] = temp[bi + cfo(bi)]


def test_blelloch_scan_padded():
    _compile_both(blelloch_scan_padded)
    n = 2 * SCAN_N + 77                      # a partial last block
    x = _rng(101).integers(-1000, 1000, n).astype(i32)
    out = np.full(n, 12345, i32)
    nb = _blocks(n, SCAN_N)
    sums = np.zeros(nb, i32)
    _sim(blelloch_scan_padded, [x, out, sums], grid=(nb, 1, 1), block=(SCAN_N // 2, 1, 1))
    for b in range(nb):
        seg = x[b * SCAN_N:(b + 1) * SCAN_N].astype(np.int64)
        np.testing.assert_array_equal(out[b * SCAN_N:(b + 1) * SCAN_N],
                                      np.cumsum(seg) - seg)
        assert sums[b] == seg.sum()


# =====================================================================================
# 2. Argmax: grid-stride per-thread best, (value, index) pairs reduced with
#    shfl_down (ties to the lower index), per-warp pairs in shared memory, one pair
#    per block; and a global argmax of int32 keys with one 64-bit atomic_max of the
#    packed key (order-preserving value bits << 32 | ~index).
# =====================================================================================
AM_BLOCK = 128


@wl.func
def takes_over(v: float, i: int, ov: float, oi: int) -> bool:
    return ov > v or (ov == v and oi < i)


@wl.kernel
def argmax_blocks(x: wl.array(dtype=wl.float32), best_val: wl.array(dtype=wl.float32),
                  best_idx: wl.array(dtype=wl.int32)):
    sv = wl.shared_array(AM_BLOCK // 32, wl.float32)
    si = wl.shared_array(AM_BLOCK // 32, wl.int32)
    t = wl.thread_idx.x
    lane = wl.lane_id()
    w = t // 32
    n = len(x)
    v = -3.0e38
    idx = n
    i = wl.block_idx.x * AM_BLOCK + t
    while i < n:
        if takes_over(v, idx, x[i], i):
            v = x[i]
            idx = i
        i += AM_BLOCK * wl.grid_dim.x
    off = 16
    while off > 0:
        ov = wl.shfl_down_sync(wl.FULL_MASK, v, off)
        oi = wl.shfl_down_sync(wl.FULL_MASK, idx, off)
        if takes_over(v, idx, ov, oi):
            v = ov
            idx = oi
        off //= 2
    if lane == 0:
        sv[w] = v
        si[w] = idx
    wl.syncthreads()
    if t == 0:
        for k in range(1, AM_BLOCK // 32):
            if takes_over(v, idx, sv[k], si[k]):
                v = sv[k]
                idx = si[k]
        best_val[wl.block_idx.x] = v
        best_idx[wl.block_idx.x] = idx


@wl.kernel
def argmax_packed_atomic(x: wl.array(dtype=wl.int32), result: wl.array(dtype=wl.uint64)):
    i = wl.tid()
    if i < len(x):
        key = wl.uint32(x[i]) ^ wl.uint32(0x80000000)        # order-preserving for int32
        packed = (wl.uint64(key) << 32) | wl.uint64(wl.uint32(0xFFFFFFFF) - wl.uint32(i))
        wl.atomic_max(result, 0, packed)


def test_argmax_value_index_pairs():
    _compile_both(argmax_blocks)
    g = _rng(102)
    n, grid = 3000, 4
    x = g.integers(-50, 50, n).astype(f32)       # many ties: the lowest index must win
    bv = np.zeros(grid, f32)
    bi = np.zeros(grid, i32)
    _sim(argmax_blocks, [x, bv, bi], grid=(grid, 1, 1), block=(AM_BLOCK, 1, 1))
    owner = (np.arange(n) // AM_BLOCK) % grid     # grid-stride: which block saw element i
    for b in range(grid):
        members = np.flatnonzero(owner == b)
        j = members[np.argmax(x[members])]       # np.argmax: first maximum
        assert (bv[b], bi[b]) == (x[j], j), b


def test_argmax_packed_uint64_atomic_max():
    _compile_both(argmax_packed_atomic)
    g = _rng(103)
    n = 700
    x = g.integers(-2**31, 2**31, n, dtype=np.int64).astype(i32)
    x[[5, 400, 650]] = 2**31 - 1                  # ties on the maximum: index 5 wins
    res = np.zeros(1, u64)
    _sim(argmax_packed_atomic, [x, res], dim=n, block_dim=128)
    key, inv = int(res[0]) >> 32, int(res[0]) & M32
    assert key ^ 0x80000000 == (int(x.max()) & M32)
    assert M32 - inv == int(np.argmax(x))


# =====================================================================================
# 3. Floyd-Warshall, one launch per pivot k; each block caches its slice of row k
#    and column k in shared memory (d[k][k] == 0, so row/column k never change).
# =====================================================================================
FW_T = 8
FW_INF = 1 << 29


@wl.kernel
def floyd_warshall_step(d: wl.array2d(dtype=wl.int32), k: int):
    row_k = wl.shared_array(FW_T, wl.int32)
    col_k = wl.shared_array(FW_T, wl.int32)
    tx = wl.thread_idx.x
    ty = wl.thread_idx.y
    x = wl.block_idx.x * FW_T + tx
    y = wl.block_idx.y * FW_T + ty
    n = d.shape[0]
    if ty == 0 and x < n:
        row_k[tx] = d[k, x]
    if tx == 0 and y < n:
        col_k[ty] = d[y, k]
    wl.syncthreads()
    if x < n and y < n:
        via = col_k[ty] + row_k[tx]
        if via < d[y, x]:
            d[y, x] = via


def test_floyd_warshall():
    _compile_both(floyd_warshall_step)
    g = _rng(104)
    n = 13
    d = np.where(g.random((n, n)) < 0.25, g.integers(1, 20, (n, n)), FW_INF).astype(i32)
    np.fill_diagonal(d, 0)
    want = d.astype(np.int64)
    for k in range(n):
        want = np.minimum(want, want[:, k:k + 1] + want[k:k + 1, :])
    want = np.minimum(want, FW_INF)
    for k in range(n):
        _sim(floyd_warshall_step, [d, k], grid=(_blocks(n, FW_T), _blocks(n, FW_T), 1),
             block=(FW_T, FW_T, 1))
    np.testing.assert_array_equal(np.minimum(d, FW_INF), want)


# =====================================================================================
# 4. Integer hashing with uint32/uint64 wrap-around: murmur3 fmix32, PCG32
#    (64-bit LCG + xorshift-rotate output, rotation by (-rot) & 31), xorshift32,
#    FNV-1a over the four bytes of the key.
# =====================================================================================
@wl.func
def fmix32(h: wl.uint32) -> wl.uint32:
    h ^= h >> 16
    h *= 0x85EBCA6B
    h ^= h >> 13
    h *= 0xC2B2AE35
    h ^= h >> 16
    return h


@wl.func
def pcg_output(state: wl.uint64) -> wl.uint32:
    xorshifted = wl.uint32(((state >> 18) ^ state) >> 27)
    rot = wl.uint32(state >> 59)
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31))


@wl.kernel
def hashes(keys: wl.array(dtype=wl.uint32), seed: wl.uint32, out: wl.array2d(dtype=wl.uint32)):
    i = wl.tid()
    k = keys[i]
    out[i, 0] = fmix32(k ^ seed)
    state = wl.uint64(k) * 6364136223846793005 + 1442695040888963407
    state = state * 6364136223846793005 + 1442695040888963407
    out[i, 1] = pcg_output(state)
    s = k | 1
    s ^= s << 13
    s ^= s >> 17
    s ^= s << 5
    out[i, 2] = s
    h = wl.uint32(2166136261)
    for b in range(4):
        h ^= (k >> (8 * b)) & 0xFF
        h *= 16777619
    out[i, 3] = h


def _fmix32(h):
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & M32
    return h ^ (h >> 16)


def _pcg(k):
    s = (k * 6364136223846793005 + 1442695040888963407) & M64
    s = (s * 6364136223846793005 + 1442695040888963407) & M64
    xs = (((s >> 18) ^ s) >> 27) & M32
    rot = s >> 59
    return ((xs >> rot) | (xs << ((-rot) & 31))) & M32


def _xorshift(s):
    s |= 1
    s ^= (s << 13) & M32
    s ^= s >> 17
    return s ^ ((s << 5) & M32)


def _fnv1a(k):
    h = 2166136261
    for b in range(4):
        h ^= (k >> (8 * b)) & 0xFF
        h = (h * 16777619) & M32
    return h


def test_integer_hashes_wrap_like_uint32():
    _compile_both(hashes)
    keys = _rng(105).integers(0, 2**32, 96, dtype=np.int64).astype(u32)
    keys[:4] = [0, 1, M32, 0x80000000]
    seed = 0x9E3779B9
    out = np.zeros((96, 4), u32)
    _sim(hashes, [keys, u32(seed), out], dim=96, block_dim=32)
    for i, k in enumerate(int(v) for v in keys):
        want = (_fmix32(k ^ seed), _pcg(k), _xorshift(k), _fnv1a(k))
        assert tuple(int(v) for v in out[i]) == want, (i, hex(k))


# =====================================================================================
# 5. Bit tricks on uint32 and uint64: popc, clz, ffs, brev, floor(log2), next power
#    of two, lowest set bit (x & -x on unsigned), trailing zeros.
# =====================================================================================
@wl.kernel
def bit_tricks(x: wl.array(dtype=wl.uint32), y: wl.array(dtype=wl.uint64),
               out: wl.array2d(dtype=wl.int32), out32: wl.array2d(dtype=wl.uint32),
               out64: wl.array2d(dtype=wl.uint64)):
    i = wl.tid()
    v = x[i]
    out[i, 0] = wl.popc(v)
    out[i, 1] = wl.clz(v)
    out[i, 2] = wl.ffs(v)
    out[i, 3] = 31 - wl.clz(v)                  # floor(log2 v), -1 for 0
    out32[i, 0] = wl.brev(v)
    out32[i, 1] = v & -v
    out32[i, 2] = wl.uint32(1) << (32 - wl.clz(v - 1)) if v > 1 else wl.uint32(1)
    out32[i, 3] = wl.mulhi(v, wl.uint32(0x9E3779B9))
    u = y[i]
    out[i, 4] = wl.popc(u)
    out[i, 5] = wl.clz(u)
    out[i, 6] = wl.ffs(u)
    out64[i, 0] = wl.brev(u)
    out64[i, 1] = u & -u


def _brev(v, bits):
    return int(format(v, f"0{bits}b")[::-1], 2)


def test_bit_intrinsics_uint32_uint64():
    _compile_both(bit_tricks)
    g = _rng(106)
    n = 64
    x = g.integers(0, 2**32, n, dtype=np.int64).astype(u32)
    x[:6] = [0, 1, 2, 3, 0x80000000, M32]
    x[6:12] = [1 << (k * 5 + 1) for k in range(6)]
    y = g.integers(0, 2**63, n, dtype=np.int64).astype(u64) * u64(3)
    y[:4] = [0, 1, 1 << 63, M64]
    out = np.zeros((n, 7), i32)
    out32 = np.zeros((n, 4), u32)
    out64 = np.zeros((n, 2), u64)
    _sim(bit_tricks, [x, y, out, out32, out64], dim=n, block_dim=64)
    for i in range(n):
        v, u = int(x[i]), int(y[i])
        clz = 32 - v.bit_length()
        ffs = (v & -v).bit_length()
        np2 = 1 if v <= 1 else (1 << (v - 1).bit_length()) & M32
        want = (bin(v).count("1"), clz, ffs, 31 - clz, bin(u).count("1"),
                64 - u.bit_length(), (u & -u).bit_length())
        assert tuple(out[i]) == want, (i, hex(v), hex(u))
        assert tuple(int(t) for t in out32[i]) == (
            _brev(v, 32), v & -v & M32, np2, (v * 0x9E3779B9) >> 32), (i, hex(v))
        assert tuple(int(t) for t in out64[i]) == (_brev(u, 64), u & -u & M64), (i, hex(u))


# =====================================================================================
# 6. float16 SAXPY with a grid-stride loop (y = a*x + y in half, a a float16
#    parameter) and a float16 dot product accumulated in float32 (one atomic per warp).
# =====================================================================================
@wl.kernel
def saxpy_half(x: wl.array(dtype=wl.float16), y: wl.array(dtype=wl.float16), a: wl.float16,
               dot: wl.array(dtype=wl.float32)):
    i = wl.tid()
    stride = wl.block_dim.x * wl.grid_dim.x
    acc = 0.0
    while i < len(x):
        acc += float(x[i]) * float(y[i])
        y[i] = a * x[i] + y[i]
        i += stride
    off = 16
    while off > 0:
        acc += wl.shfl_xor_sync(wl.FULL_MASK, acc, off)
        off //= 2
    if wl.lane_id() == 0:
        wl.atomic_add(dot, 0, acc)


def test_saxpy_float16_grid_stride():
    _compile_both(saxpy_half)
    g = _rng(107)
    n = 1000
    x = g.uniform(-2, 2, n).astype(f16)
    y = g.uniform(-2, 2, n).astype(f16)
    a = f16(1.5)
    y0 = y.copy()
    dot = np.zeros(1, f32)
    _sim(saxpy_half, [x, y, a, dot], grid=(2, 1, 1), block=(64, 1, 1))
    want = a.astype(f64) * x.astype(f64) + y0.astype(f64)
    # one float16 rounding (fma) or two (mul, add): within 2 ulp of float16 (2^-10 rel)
    np.testing.assert_allclose(y.astype(f64), want, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(dot[0], (x.astype(f64) * y0.astype(f64)).sum(), rtol=1e-5)


# =====================================================================================
# 7. Batched 8x8 matmul with 3-D blocks: thread_idx.z picks the matrix inside the
#    block, a 3-D shared array holds one A and one B tile per z-slice.
# =====================================================================================
BM = 8
BZ = 4


@wl.kernel
def batched_matmul_3d_block(a: wl.array3d(dtype=wl.float32), b: wl.array3d(dtype=wl.float32),
                            c: wl.array3d(dtype=wl.float32)):
    sa = wl.shared_array((BZ, BM, BM), wl.float32)
    sb = wl.shared_array((BZ, BM, BM), wl.float32)
    tx = wl.thread_idx.x
    ty = wl.thread_idx.y
    tz = wl.thread_idx.z
    batch = wl.block_idx.x * BZ + tz
    nb = a.shape[0]
    if batch < nb:
        sa[tz, ty, tx] = a[batch, ty, tx]
        sb[tz, ty, tx] = b[batch, ty, tx]
    wl.syncthreads()
    if batch < nb:
        acc = 0.0
        for k in range(BM):
            acc += sa[tz, ty, k] * sb[tz, k, tx]
        c[batch, ty, tx] = acc


def test_batched_matmul_3d_blocks():
    _compile_both(batched_matmul_3d_block)
    g = _rng(108)
    nb = 10                                           # 3 blocks, the last half full
    a = g.standard_normal((nb, BM, BM)).astype(f32)
    b = g.standard_normal((nb, BM, BM)).astype(f32)
    c = np.full((nb, BM, BM), np.nan, f32)
    _sim(batched_matmul_3d_block, [a, b, c], grid=(_blocks(nb, BZ), 1, 1), block=(BM, BM, BZ))
    np.testing.assert_allclose(c, a.astype(f64) @ b.astype(f64), rtol=1e-5, atol=1e-5)


# =====================================================================================
# 8. CUDA sample threadFenceReduction: each block writes its partial sum, fences,
#    takes a ticket; the block that takes the last ticket sums the partials and
#    resets the ticket (no second launch).
# =====================================================================================
TF_BLOCK = 64


@wl.func
def block_reduce(buf, t: int):
    stride = TF_BLOCK // 2
    while stride > 0:
        if t < stride:
            buf[t] += buf[t + stride]
        wl.syncthreads()
        stride >>= 1


@wl.kernel
def threadfence_sum(x: wl.array(dtype=wl.float32), partial: wl.array(dtype=wl.float32),
                    ticket: wl.array(dtype=wl.uint32), total: wl.array(dtype=wl.float32)):
    buf = wl.shared_array(TF_BLOCK, wl.float32)
    am_last = wl.shared_array(1, wl.int32)
    t = wl.thread_idx.x
    n = len(x)
    i = wl.block_idx.x * TF_BLOCK * 2 + t
    s = 0.0
    if i < n:
        s += x[i]
    if i + TF_BLOCK < n:
        s += x[i + TF_BLOCK]
    buf[t] = s
    wl.syncthreads()
    block_reduce(buf, t)
    if t == 0:
        partial[wl.block_idx.x] = buf[0]
        wl.threadfence()
        old = wl.atomic_add(ticket, 0, wl.uint32(1))
        am_last[0] = 1 if old == wl.grid_dim.x - 1 else 0
    wl.syncthreads()
    if am_last[0] != 0:
        s2 = 0.0
        j = t
        while j < wl.grid_dim.x:
            s2 += partial[j]
            j += TF_BLOCK
        buf[t] = s2
        wl.syncthreads()
        block_reduce(buf, t)
        if t == 0:
            total[0] = buf[0]
            ticket[0] = 0


def test_threadfence_reduction_last_block():
    _compile_both(threadfence_sum)
    n = 1500
    x = _rng(109).integers(-100, 100, n).astype(f32)      # integer sums: exact in float32
    nb = _blocks(n, 2 * TF_BLOCK)
    partial = np.zeros(nb, f32)
    ticket = np.zeros(1, u32)
    total = np.zeros(1, f32)
    _sim(threadfence_sum, [x, partial, ticket, total], grid=(nb, 1, 1), block=(TF_BLOCK, 1, 1))
    assert total[0] == x.astype(np.int64).sum()
    assert ticket[0] == 0
    np.testing.assert_array_equal(partial, np.add.reduceat(x.astype(np.int64),
                                                           np.arange(0, n, 2 * TF_BLOCK)))


# =====================================================================================
# 9. CRC-32 (zlib polynomial): one kernel builds the 256-entry table (8 conditional
#    shift/xor steps per entry), another checksums one chunk per thread with the
#    table staged in shared memory. Checked against zlib.crc32.
# =====================================================================================
@wl.kernel
def crc32_table(table: wl.array(dtype=wl.uint32)):
    i = wl.tid()
    c = wl.uint32(i)
    for _ in range(8):
        if c & 1:
            c = wl.uint32(0xEDB88320) ^ (c >> 1)
        else:
            c >>= 1
    table[i] = c


@wl.kernel
def crc32_chunks(data: wl.array(dtype=wl.uint8), table: wl.array(dtype=wl.uint32),
                 chunk: int, out: wl.array(dtype=wl.uint32)):
    tab = wl.shared_array(256, wl.uint32)
    j = wl.thread_idx.x
    while j < 256:
        tab[j] = table[j]
        j += wl.block_dim.x
    wl.syncthreads()
    i = wl.tid()
    if i < len(out):
        crc = wl.uint32(0xFFFFFFFF)
        start = i * chunk
        for p in range(start, min(start + chunk, len(data))):
            crc = tab[(crc ^ data[p]) & 0xFF] ^ (crc >> 8)
        out[i] = crc ^ 0xFFFFFFFF


def test_crc32_against_zlib():
    _compile_both(crc32_table)
    _compile_both(crc32_chunks)
    table = np.zeros(256, u32)
    _sim(crc32_table, [table], dim=256, block_dim=128)
    data = _rng(110).integers(0, 256, 300).astype(u8)
    chunk = 11
    nchunks = _blocks(len(data), chunk)                  # 28: the last chunk is short
    out = np.zeros(nchunks, u32)
    _sim(crc32_chunks, [data, table, chunk, out], grid=(1, 1, 1), block=(32, 1, 1))
    want = [zlib.crc32(data[c * chunk:(c + 1) * chunk].tobytes()) for c in range(nchunks)]
    assert [int(v) for v in out] == want
    assert int(table[1]) == 0x77073096 and int(table[255]) == 0x2D02EF8D


# =====================================================================================
# 10. CSR SpMV, vector kernel (Bell & Garland): one warp per row, lanes stride over
#     the row's entries, shfl_down sum; empty and longer-than-32 rows.
# =====================================================================================
@wl.kernel
def spmv_csr_vector(indptr: wl.array(dtype=wl.int32), indices: wl.array(dtype=wl.int32),
                    vals: wl.array(dtype=wl.float32), x: wl.array(dtype=wl.float32),
                    y: wl.array(dtype=wl.float32)):
    row = (wl.block_idx.x * wl.block_dim.x + wl.thread_idx.x) // 32
    lane = wl.lane_id()
    if row >= len(y):
        return
    s = 0.0
    j = indptr[row] + lane
    end = indptr[row + 1]
    while j < end:
        s += vals[j] * x[indices[j]]
        j += 32
    off = 16
    while off > 0:
        s += wl.shfl_down_sync(wl.FULL_MASK, s, off)
        off //= 2
    if lane == 0:
        y[row] = s


def test_spmv_csr_vector():
    _compile_both(spmv_csr_vector)
    g = _rng(111)
    m, ncols = 11, 90
    lens = g.integers(0, 75, m)
    lens[[2, 7]] = 0
    indptr = np.concatenate([[0], np.cumsum(lens)]).astype(i32)
    indices = np.concatenate([np.sort(g.choice(ncols, k, replace=False)) for k in lens]
                             ).astype(i32)
    vals = g.standard_normal(indptr[-1]).astype(f32)
    x = g.standard_normal(ncols).astype(f32)
    y = np.full(m, np.nan, f32)
    _sim(spmv_csr_vector, [indptr, indices, vals, x, y], grid=(_blocks(m * 32, 128), 1, 1),
         block=(128, 1, 1))
    dense = np.zeros((m, ncols))
    for r in range(m):
        dense[r, indices[indptr[r]:indptr[r + 1]]] = vals[indptr[r]:indptr[r + 1]]
    np.testing.assert_allclose(y, dense @ x.astype(f64), rtol=1e-5, atol=1e-5)


# =====================================================================================
# 11. N-body accelerations (GPU Gems 3 ch. 31): positions+mass as vec4, tiles of
#     bodies in a shared array of vec4, softened inverse cube by rsqrt.
# =====================================================================================
NB_T = 32


@wl.kernel
def nbody_accel(pos: wl.array(dtype=wl.vec4), acc: wl.array(dtype=wl.vec3), eps2: float):
    sh = wl.shared_array(NB_T, wl.vec4)
    i = wl.tid()
    n = len(pos)
    p = wl.vec4(0.0)
    if i < n:
        p = pos[i]
    a = wl.vec3(0.0)
    base = 0
    while base < n:
        j = base + wl.thread_idx.x
        q = wl.vec4(0.0)                         # padding bodies have mass 0
        if j < n:
            q = pos[j]
        sh[wl.thread_idx.x] = q
        wl.syncthreads()
        for k in range(NB_T):
            b = sh[k]
            r = wl.vec3(b.x - p.x, b.y - p.y, b.z - p.z)
            inv = wl.rsqrt(wl.dot(r, r) + eps2)
            a += r * (b.w * inv * inv * inv)
        wl.syncthreads()
        base += NB_T
    if i < n:
        acc[i] = a


def test_nbody_shared_vec4_tiles():
    _compile_both(nbody_accel)
    g = _rng(112)
    n, eps2 = 70, 0.01
    pos = np.concatenate([g.standard_normal((n, 3)), g.uniform(0.5, 1.5, (n, 1))],
                         axis=1).astype(f32)
    acc = np.full((n, 3), np.nan, f32)
    _sim(nbody_accel, [pos, acc, eps2], grid=(_blocks(n, NB_T), 1, 1), block=(NB_T, 1, 1))
    p = pos.astype(f64)
    r = p[None, :, :3] - p[:, None, :3]
    inv3 = (np.sum(r * r, axis=2) + f64(f32(eps2))) ** -1.5
    want = np.sum(r * (p[None, :, 3] * inv3)[:, :, None], axis=1)
    np.testing.assert_allclose(acc, want, rtol=1e-4, atol=1e-4)  # rsqrt.approx: ~2 ulp


# =====================================================================================
# 12. Conway's Game of Life on uint8 cells, torus wrap with Python's floor %, a few
#     ping-pong generations; int literals stored into a uint8 array.
# =====================================================================================
@wl.kernel
def life_step(src: wl.array2d(dtype=wl.uint8), dst: wl.array2d(dtype=wl.uint8)):
    y, x = wl.tid()
    h = src.shape[0]
    w = src.shape[1]
    if y >= h or x >= w:
        return
    nbrs = 0
    for dy in range(-1, 2):
        for dx in range(-1, 2):
            if dy != 0 or dx != 0:
                nbrs += src[(y + dy) % h, (x + dx) % w]
    alive = src[y, x] != 0
    if nbrs == 3 or (alive and nbrs == 2):
        dst[y, x] = 1
    else:
        dst[y, x] = 0


def test_game_of_life_torus_uint8():
    _compile_both(life_step)
    h, w = 12, 19
    a = (_rng(113).random((h, w)) < 0.35).astype(u8)
    b = np.full_like(a, 7)
    want = a.astype(int)
    for gen in range(4):
        src, dst = (a, b) if gen % 2 == 0 else (b, a)
        _sim(life_step, [src, dst], dim=(h, w), block_dim=(4, 32))
        n = sum(np.roll(np.roll(want, dy, 0), dx, 1)
                for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dy, dx) != (0, 0))
        want = ((n == 3) | ((want == 1) & (n == 2))).astype(int)
        np.testing.assert_array_equal(dst, want, err_msg=f"generation {gen}")


# =====================================================================================
# 13. Mandelbrot escape counts (divergent while loop, float32). FMA contraction can
#     move a point on the set's boundary by a step: at most 2% of pixels may differ,
#     and the average count must agree to 1%.
# =====================================================================================
MB_ITERS = 40


@wl.kernel
def mandelbrot(counts: wl.array2d(dtype=wl.int32), x0: float, y0: float, step: float):
    py, px = wl.tid()
    if py >= counts.shape[0] or px >= counts.shape[1]:
        return
    cr = x0 + px * step
    ci = y0 + py * step
    zr = 0.0
    zi = 0.0
    it = 0
    while it < MB_ITERS and zr * zr + zi * zi <= 4.0:
        zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
        it += 1
    counts[py, px] = it


def test_mandelbrot_escape_counts():
    _compile_both(mandelbrot)
    h, w = 14, 24
    x0, y0, step = -2.1, -1.05, 0.125
    counts = np.full((h, w), -1, i32)
    _sim(mandelbrot, [counts, x0, y0, step], dim=(h, w), block_dim=(2, 32))
    cr = (f32(x0) + np.arange(w, dtype=f32) * f32(step)).astype(f64)[None, :]
    ci = (f32(y0) + np.arange(h, dtype=f32) * f32(step)).astype(f64)[:, None]
    c = cr + 1j * ci
    z = np.zeros_like(c)
    want = np.zeros((h, w), int)
    for _ in range(MB_ITERS):
        live = np.abs(z) ** 2 <= 4.0
        want += live
        z = np.where(live, z * z + c, z)
    assert counts.min() >= 1 and counts.max() <= MB_ITERS
    assert np.mean(counts != want) <= 0.02
    assert abs(counts.mean() - want.mean()) <= 0.01 * want.mean()


# =====================================================================================
# 14. Segmented inclusive warp scan with head flags: the segment start is found with
#     ballot + clz on the lanes at or below me, then shfl_up steps stay inside it.
# =====================================================================================
@wl.kernel
def segmented_warp_scan(x: wl.array(dtype=wl.int32), head: wl.array(dtype=wl.int32),
                        out: wl.array(dtype=wl.int32)):
    i = wl.tid()
    lane = wl.lane_id()
    v = x[i]
    flags = wl.ballot_sync(wl.FULL_MASK, head[i] != 0 or lane == 0)
    le_mask = wl.uint32(0xFFFFFFFF) >> (31 - lane)
    seg_start = 31 - wl.clz(flags & le_mask)
    d = 1
    while d < 32:
        o = wl.shfl_up_sync(wl.FULL_MASK, v, d)
        if lane - d >= seg_start:
            v += o
        d *= 2
    out[i] = v


def test_segmented_warp_scan_ballot_clz():
    _compile_both(segmented_warp_scan)
    g = _rng(114)
    n = 128
    x = g.integers(-50, 50, n).astype(i32)
    head = (g.random(n) < 0.15).astype(i32)
    out = np.zeros(n, i32)
    _sim(segmented_warp_scan, [x, head, out], dim=n, block_dim=64)
    want = np.zeros(n, np.int64)
    for i in range(n):
        want[i] = x[i] if (head[i] or i % 32 == 0) else want[i - 1] + x[i]
    np.testing.assert_array_equal(out, want)


# =====================================================================================
# 15. Bilinear image resize (align_corners=False, as OpenCV/PyTorch): source
#     coordinate (dst + 0.5) * scale - 0.5, clamped; int(floor) and edge clamping.
# =====================================================================================
@wl.kernel
def resize_bilinear(src: wl.array2d(dtype=wl.float32), dst: wl.array2d(dtype=wl.float32)):
    y, x = wl.tid()
    oh = dst.shape[0]
    ow = dst.shape[1]
    if y >= oh or x >= ow:
        return
    ih = src.shape[0]
    iw = src.shape[1]
    sy = wl.max((y + 0.5) * (ih / oh) - 0.5, 0.0)
    sx = wl.max((x + 0.5) * (iw / ow) - 0.5, 0.0)
    y0 = wl.min(int(wl.floor(sy)), ih - 1)
    x0 = wl.min(int(wl.floor(sx)), iw - 1)
    y1 = wl.min(y0 + 1, ih - 1)
    x1 = wl.min(x0 + 1, iw - 1)
    fy = sy - y0
    fx = sx - x0
    top = src[y0, x0] * (1.0 - fx) + src[y0, x1] * fx
    bot = src[y1, x0] * (1.0 - fx) + src[y1, x1] * fx
    dst[y, x] = top * (1.0 - fy) + bot * fy


def test_bilinear_resize():
    _compile_both(resize_bilinear)
    g = _rng(115)
    src = g.standard_normal((9, 13)).astype(f32)
    dst = np.full((20, 7), np.nan, f32)                  # up in y, down in x
    _sim(resize_bilinear, [src, dst], dim=dst.shape, block_dim=(4, 8))
    ih, iw = src.shape
    oh, ow = dst.shape
    sy = np.maximum((np.arange(oh) + 0.5) * (ih / oh) - 0.5, 0)
    sx = np.maximum((np.arange(ow) + 0.5) * (iw / ow) - 0.5, 0)
    y0 = np.minimum(np.floor(sy).astype(int), ih - 1)
    x0 = np.minimum(np.floor(sx).astype(int), iw - 1)
    y1, x1 = np.minimum(y0 + 1, ih - 1), np.minimum(x0 + 1, iw - 1)
    fy, fx = (sy - y0)[:, None], (sx - x0)[None, :]
    s = src.astype(f64)
    top = s[y0][:, x0] * (1 - fx) + s[y0][:, x1] * fx
    bot = s[y1][:, x0] * (1 - fx) + s[y1][:, x1] * fx
    np.testing.assert_allclose(dst, top * (1 - fy) + bot * fy, rtol=1e-5, atol=1e-5)


# =====================================================================================
# 16. Periodic boundary conditions (molecular dynamics): wrap positions into the box
#     with Python's float % and count box crossings with //, in float32, float64 and
#     float16. Bug found here: float % compiled to LLVM frem, which NVPTX expands to
#     a - b*trunc(a/b) (-2**31 % 3 gave 64.0, 1e30 % 3.3 in float64 gave -5.7e13),
#     and // was floor(a / b) (1 // 0.1 gave 10, NumPy and the constant folder 9).
#     Fixed in compiler/lower_ops._float_floordiv_mod (libdevice fmod + npy_divmod).
# =====================================================================================
@wl.kernel
def periodic_wrap(p32: wl.array(dtype=wl.float32), box32: wl.array(dtype=wl.float32),
                  p64: wl.array(dtype=wl.float64), box64: wl.array(dtype=wl.float64),
                  p16: wl.array(dtype=wl.float16), box16: wl.array(dtype=wl.float16),
                  o32: wl.array2d(dtype=wl.float32), o64: wl.array2d(dtype=wl.float64),
                  o16: wl.array2d(dtype=wl.float16)):
    i = wl.tid()
    o32[i, 0] = p32[i] % box32[i]
    o32[i, 1] = p32[i] // box32[i]
    o64[i, 0] = p64[i] % box64[i]
    o64[i, 1] = p64[i] // box64[i]
    o16[i, 0] = p16[i] % box16[i]
    o16[i, 1] = p16[i] // box16[i]


def test_periodic_wrap_float_mod_floordiv_like_numpy():
    _compile_both(periodic_wrap)
    g = _rng(116)
    n = 64
    p = g.uniform(-50, 50, n)
    box = g.uniform(0.5, 10, n) * np.where(g.random(n) < 0.2, -1, 1)
    p[:8] = [-2.0**31, 2.0**31, 1.0, -1.0, 1e30, -4.0, 7.5, -0.0]
    box[:8] = [3.0, 7.0, 0.1, 0.1, 3.3, 2.0, -2.0, 5.0]
    p16 = np.clip(p, -6e4, 6e4).astype(f16)
    p16[4] = f16(6e4)
    args = [p.astype(f32), box.astype(f32), p * 1.0000001, box, p16, box.astype(f16)]
    outs = [np.zeros((n, 2), t) for t in (f32, f64, f16)]
    _sim(periodic_wrap, args + outs, dim=n, block_dim=64)
    for (a, b), o in zip((args[0:2], args[2:4], args[4:6]), outs):
        for col, ref in enumerate((np.mod, np.floor_divide)):
            want = ref(a, b)
            np.testing.assert_array_equal(o[:, col], want, err_msg=f"{ref.__name__} {a.dtype}")
            assert (np.signbit(o[:, col]) == np.signbit(want)).all(), (ref.__name__, a.dtype)


# =====================================================================================
# 17. Per-bucket spin locks in global memory (the Volta+ independent-thread-scheduling
#     idiom, CUDA Programming Guide "Independent Thread Scheduling"): lanes of one
#     warp contend for one lock; the critical section is a plain float64 RMW.
#     Bug found here: the simulator let the spinning lanes starve the lock holder of
#     their own warp for SPIN_QUANTUM * INTRA_ROUNDS = 1024 iterations per hand-over
#     (16 lanes on one lock took 6 s; 64 threads on 5 locks ran out of a 500k
#     instruction budget). Fixed: a loop with an atomic yields to its own warp's
#     other lanes after one quantum (sim/control.loop_has_atomic, Machine.back_edge).
# =====================================================================================
@wl.kernel
def locked_bucket_sum(lock: wl.array(dtype=wl.int32), acc: wl.array(dtype=wl.float64),
                      keys: wl.array(dtype=wl.int32), vals: wl.array(dtype=wl.float64)):
    i = wl.tid()
    k = keys[i]
    while wl.atomic_cas(lock, k, 0, 1) != 0:
        pass
    acc[k] = acc[k] + vals[i]
    wl.threadfence()
    wl.atomic_exch(lock, k, 0)


def test_spin_lock_within_a_warp():
    _compile_both(locked_bucket_sum)
    g = _rng(117)
    n, nk = 64, 5
    keys = g.integers(0, nk, n).astype(i32)
    keys[:16] = 0                                 # 16 lanes of warp 0 on one lock
    vals = g.integers(0, 100, n).astype(f64)
    lock = np.zeros(nk, i32)
    acc = np.zeros(nk, f64)
    _sim(locked_bucket_sum, [lock, acc, keys, vals], dim=n, block_dim=64,
         max_instructions=300_000)    # ~150k needed; >1M with 1024 spins per hand-over
    np.testing.assert_array_equal(acc, np.bincount(keys, vals, nk))
    np.testing.assert_array_equal(lock, 0)


# =====================================================================================
# 18. A debugging printf table (what a kernel writer prints first): a label through
#     %s, padded and truncated, next to numbers. Bug found here: %s of a string
#     constant (CUDA's printf("%s", "label")) was refused with "%s cannot print this
#     value" and no hint; it is now formatted into the format at compile time
#     (compiler/typing_special.type_printf).
# =====================================================================================
PRINT_LABEL = "row%"


@wl.kernel
def printf_table(x: wl.array(dtype=wl.float32), counts: wl.array(dtype=wl.int64)):
    i = wl.tid()
    wl.printf("%-6s|%3d|%7.3f|%.2s|%lld %s\n", PRINT_LABEL, i, x[i], "abc", counts[i], "ok")


@wl.kernel
def printf_string_as_number(x: wl.array(dtype=wl.float32)):
    wl.printf("%d\n", "abc")


def test_printf_string_constants():
    _compile_both(printf_table)
    x = np.array([1.5, -2.25, 1000.0], f32)
    counts = np.array([-(2**40), 7, 0], np.int64)
    res = _sim(printf_table, [x, counts], dim=3, block_dim=32)
    want = "".join("%-6s|%3d|%7.3f|%.2s|%d %s\n" % (PRINT_LABEL, i, x[i], "abc", counts[i], "ok")
                   for i in range(3))
    assert sorted(res.printed.splitlines()) == sorted(want.splitlines())
    with pytest.raises(wl.KernelCompileError, match=r"%d cannot print") as info:
        wl.compile(printf_string_as_number, sass=False)
    assert "%s takes a string constant" in str(info.value)


# =====================================================================================
# 19. Tiled SGEMM with double-buffered shared tiles (prefetch tile t+1 while
#     computing tile t, one barrier per step, as cp.async pipelines do); guarded loads
#     in conditional expressions; K not a multiple of the tile.
# =====================================================================================
DB_T = 16


@wl.kernel
def matmul_double_buffer(a: wl.array2d(dtype=wl.float32), b: wl.array2d(dtype=wl.float32),
                         c: wl.array2d(dtype=wl.float32)):
    sa = wl.shared_array((2, DB_T, DB_T), wl.float32)
    sb = wl.shared_array((2, DB_T, DB_T), wl.float32)
    tx = wl.thread_idx.x
    ty = wl.thread_idx.y
    row = wl.block_idx.y * DB_T + ty
    col = wl.block_idx.x * DB_T + tx
    n = a.shape[0]
    k = a.shape[1]
    m = b.shape[1]
    ntiles = (k + DB_T - 1) // DB_T
    sa[0, ty, tx] = a[row, tx] if row < n and tx < k else 0.0
    sb[0, ty, tx] = b[ty, col] if ty < k and col < m else 0.0
    wl.syncthreads()
    acc = 0.0
    for t in range(ntiles):
        cur = t % 2
        if t + 1 < ntiles:
            kk = (t + 1) * DB_T
            sa[1 - cur, ty, tx] = a[row, kk + tx] if row < n and kk + tx < k else 0.0
            sb[1 - cur, ty, tx] = b[kk + ty, col] if kk + ty < k and col < m else 0.0
        for q in range(DB_T):
            acc += sa[cur, ty, q] * sb[cur, q, tx]
        wl.syncthreads()
    if row < n and col < m:
        c[row, col] = acc


def test_matmul_double_buffered_tiles():
    _compile_both(matmul_double_buffer)
    g = _rng(118)
    a = g.standard_normal((20, 70)).astype(f32)
    b = g.standard_normal((70, 24)).astype(f32)
    c = np.full((20, 24), np.nan, f32)
    _sim(matmul_double_buffer, [a, b, c], grid=(2, 2, 1), block=(DB_T, DB_T, 1))
    np.testing.assert_allclose(c, a.astype(f64) @ b.astype(f64), rtol=1e-4, atol=1e-4)


# =====================================================================================
# 20. 1-D median filter: the window gathered into a per-thread local array (edge
#     clamped, radius a run-time value, so a run-time fill count), then sorted by an
#     insertion-sort device function (while with a compound condition).
# =====================================================================================
@wl.func
def insertion_sort(buf, n: int):
    for p in range(1, n):
        key = buf[p]
        q = p - 1
        while q >= 0 and buf[q] > key:
            buf[q + 1] = buf[q]
            q -= 1
        buf[q + 1] = key


@wl.kernel
def median_filter(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32), r: int):
    i = wl.tid()
    n = len(x)
    if i >= n:
        return
    win = wl.local_array(9, wl.float32)
    m = 0
    for d in range(-4, 5):
        if d < -r or d > r:
            continue
        win[m] = x[wl.clamp(i + d, 0, n - 1)]
        m += 1
    insertion_sort(win, m)
    out[i] = win[m // 2]


def test_median_filter_local_window():
    _compile_both(median_filter)
    x = _rng(119).standard_normal(100).astype(f32)
    for r in (1, 4):
        out = np.full(100, np.nan, f32)
        _sim(median_filter, [x, out, r], dim=100, block_dim=64)
        win = np.lib.stride_tricks.sliding_window_view(np.pad(x, r, mode="edge"), 2 * r + 1)
        np.testing.assert_array_equal(out, np.median(win, axis=1).astype(f32))


# =====================================================================================
# 21. Group-by aggregation in a per-block shared hash table (GPU databases): keys
#     inserted with atomic_cas and linear probing, sums and counts by shared
#     atomics, the table flushed to global memory with global atomics.
# =====================================================================================
GB_SLOTS = 64
GB_EMPTY = -1


@wl.kernel
def groupby_shared_hash(keys: wl.array(dtype=wl.int32), vals: wl.array(dtype=wl.float32),
                        gsum: wl.array(dtype=wl.float32), gcnt: wl.array(dtype=wl.int32)):
    hk = wl.shared_array(GB_SLOTS, wl.int32)
    hs = wl.shared_array(GB_SLOTS, wl.float32)
    hc = wl.shared_array(GB_SLOTS, wl.int32)
    t = wl.thread_idx.x
    j = t
    while j < GB_SLOTS:
        hk[j] = GB_EMPTY
        hs[j] = 0.0
        hc[j] = 0
        j += wl.block_dim.x
    wl.syncthreads()
    i = wl.block_idx.x * wl.block_dim.x + t
    if i < len(keys):
        k = keys[i]
        slot = wl.int32((wl.uint32(k) * wl.uint32(2654435761)) >> 26)   # Knuth, top 6 bits
        while True:
            prev = wl.atomic_cas(hk, slot, GB_EMPTY, k)
            if prev == GB_EMPTY or prev == k:
                break
            slot = (slot + 1) % GB_SLOTS
        wl.atomic_add(hs, slot, vals[i])
        wl.atomic_add(hc, slot, 1)
    wl.syncthreads()
    j = t
    while j < GB_SLOTS:
        if hk[j] != GB_EMPTY:
            wl.atomic_add(gsum, hk[j], hs[j])
            wl.atomic_add(gcnt, hk[j], hc[j])
        j += wl.block_dim.x


def test_groupby_shared_hash_table():
    _compile_both(groupby_shared_hash)
    g = _rng(120)
    n, nkeys = 500, 40                  # at most 40 distinct keys per block: never full
    keys = g.integers(0, nkeys, n).astype(i32)
    vals = g.integers(0, 10, n).astype(f32)                 # integer sums: exact
    gsum = np.zeros(nkeys, f32)
    gcnt = np.zeros(nkeys, i32)
    _sim(groupby_shared_hash, [keys, vals, gsum, gcnt], dim=n, block_dim=128)
    np.testing.assert_array_equal(gcnt, np.bincount(keys, minlength=nkeys))
    np.testing.assert_array_equal(gsum, np.bincount(keys, vals, nkeys))


# =====================================================================================
# 22. Positions stored float4-padded ((n, 4) float32, as CUDA codes keep them) read as
#     vec3 through the (n, 4)[:, :3] view. The ABI counts strides in whole elements,
#     so the launch refuses it; the error now says what to do (a contiguous copy, or
#     the whole array as vec4) instead of only "byte stride 16 is not a multiple of
#     the element size 12" (runtime/args._padded_hint).
# =====================================================================================
@wl.kernel
def vec3_lengths(p: wl.array(dtype=wl.vec3), out: wl.array(dtype=wl.float32)):
    i = wl.tid()
    out[i] = wl.length(p[i])


@wl.kernel
def vec4_xyz_lengths(p: wl.array(dtype=wl.vec4), out: wl.array(dtype=wl.float32)):
    i = wl.tid()
    q = p[i]
    out[i] = wl.length(wl.vec3(q.x, q.y, q.z))


def test_padded_vec3_view_error_and_the_fixes_it_names():
    g = _rng(121)
    pos = g.standard_normal((20, 4)).astype(f32)
    out = np.zeros(20, f32)
    with pytest.raises(wl.LaunchError, match=r"ascontiguousarray.*wl\.vec4"):
        wl.launch(vec3_lengths, inputs=[pos[:, :3], out], dim=20, device="sim")
    want = np.linalg.norm(pos[:, :3].astype(f64), axis=1)
    _sim(vec3_lengths, [np.ascontiguousarray(pos[:, :3]), out], dim=20)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    out[:] = 0
    _sim(vec4_xyz_lengths, [pos, out], dim=20)
    np.testing.assert_allclose(out, want, rtol=1e-6)


# =====================================================================================
# 23. Row maximum ported from C's `float best = 0; ... best = x[j];` as `best = 0`:
#     the variable is int32 from its first value. The error named only the cast
#     (wl.int32(...), which would truncate); it now says to start the variable as a
#     float (compiler/frontend, plain re-assignment; augmented assignment had it).
# =====================================================================================
@wl.kernel
def row_max_int_start(x: wl.array2d(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    i = wl.tid()
    best = 0
    for j in range(x.shape[1]):
        if x[i, j] > best:
            best = x[i, j]
    out[i] = best


@wl.kernel
def row_max(x: wl.array2d(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    i = wl.tid()
    best = 0.0
    for j in range(x.shape[1]):
        if x[i, j] > best:
            best = x[i, j]
    out[i] = best


def test_int_started_accumulator_hint():
    with pytest.raises(wl.KernelCompileError, match=r"variable 'best' of type int32") as info:
        wl.compile(row_max_int_start, sass=False)
    msg = str(info.value)
    assert "best = 0.0" in msg and "best = x[i, j]" in msg      # the hint and the user's line
    x = _rng(122).standard_normal((40, 9)).astype(f32)
    out = np.zeros(40, f32)
    _sim(row_max, [x, out], dim=40)
    np.testing.assert_array_equal(out, np.maximum(x.max(axis=1), 0))


# =====================================================================================
# 24. Asymmetric int8 quantisation: uint8 weights (zero point 128) times int8
#     activations, int32 accumulation, as a CUDA port writes it (no casts: C promotes
#     both to int). int8 * uint8 is int16 (NumPy's promotion, C's values): -128 * 255
#     is -32640, and int8 < uint8 compares the values (-1 < 1). It was typed uint8 and
#     wrapped at 8 bits until typing_rules._join learnt NumPy's rule below 32 bits.
# =====================================================================================
@wl.kernel
def dot_s8_u8(act: wl.array(dtype=wl.int8), w: wl.array2d(dtype=wl.uint8),
              out: wl.array(dtype=wl.int32), below: wl.array(dtype=wl.int32)):
    r = wl.tid()
    acc = 0
    cnt = 0
    for k in range(w.shape[1]):
        acc += act[k] * w[r, k]
        if act[k] < w[r, k]:
            cnt += 1
    out[r] = acc
    below[r] = cnt


def test_int8_times_uint8_promotes_like_c():
    g = _rng(123)
    act = g.integers(-128, 128, 16).astype(np.int8)
    w = g.integers(0, 256, (8, 16)).astype(u8)
    out = np.zeros(8, i32)
    below = np.zeros(8, i32)
    _sim(dot_s8_u8, [act, w, out, below], dim=8)
    np.testing.assert_array_equal(out, w.astype(np.int64) @ act.astype(np.int64))
    np.testing.assert_array_equal(below, (act.astype(int)[None, :] < w.astype(int)).sum(1))


# =====================================================================================
# 25. Stream compaction with a two-level block scan made of warp shuffles (warp
#     inclusive scans by shfl_up, warp totals in shared memory scanned by warp 0),
#     the block's base reserved by one global atomic; order kept inside a block.
# =====================================================================================
SC_BLOCK = 128


@wl.func
def warp_inclusive_scan(v: int, lane: int) -> int:
    d = 1
    while d < 32:
        o = wl.shfl_up_sync(wl.FULL_MASK, v, d)
        if lane >= d:
            v += o
        d *= 2
    return v


@wl.kernel
def compact_positive(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32),
                     src_idx: wl.array(dtype=wl.int32), count: wl.array(dtype=wl.int32)):
    totals = wl.shared_array(SC_BLOCK // 32, wl.int32)
    base = wl.shared_array(1, wl.int32)
    t = wl.thread_idx.x
    lane = wl.lane_id()
    w = t // 32
    i = wl.block_idx.x * SC_BLOCK + t
    keep = 0
    if i < len(x) and x[i] > 0.0:
        keep = 1
    incl = warp_inclusive_scan(keep, lane)
    if lane == 31:
        totals[w] = incl
    wl.syncthreads()
    if w == 0:
        tv = 0
        if lane < SC_BLOCK // 32:
            tv = totals[lane]
        tincl = warp_inclusive_scan(tv, lane)
        if lane < SC_BLOCK // 32:
            totals[lane] = tincl - tv                  # exclusive warp offsets
        if lane == SC_BLOCK // 32 - 1:
            base[0] = wl.atomic_add(count, 0, tincl)   # the block's total
    wl.syncthreads()
    if keep:
        pos = base[0] + totals[w] + incl - 1
        out[pos] = x[i]
        src_idx[pos] = i


def test_stream_compaction_shuffle_block_scan():
    _compile_both(compact_positive)
    g = _rng(124)
    n = 600
    x = g.standard_normal(n).astype(f32)
    out = np.zeros(n, f32)
    src = np.full(n, -1, i32)
    count = np.zeros(1, i32)
    _sim(compact_positive, [x, out, src, count], grid=(_blocks(n, SC_BLOCK), 1, 1),
         block=(SC_BLOCK, 1, 1))
    c = int(count[0])
    assert c == (x > 0).sum()
    np.testing.assert_array_equal(np.sort(src[:c]), np.flatnonzero(x > 0))
    np.testing.assert_array_equal(out[:c], x[src[:c]])
    for start in range(c):                        # inside one block the order is kept
        if start and src[start] // SC_BLOCK == src[start - 1] // SC_BLOCK:
            assert src[start] > src[start - 1]


# =====================================================================================
# 26. Warp-register bitonic sort of 32 keys with their payloads (shfl_xor partners,
#     direction from the lane bits), as in CUB's warp-merge / segmented top-k.
# =====================================================================================
@wl.kernel
def warp_bitonic_sort(keys: wl.array(dtype=wl.float32), vals: wl.array(dtype=wl.int32)):
    i = wl.tid()
    lane = wl.lane_id()
    k = keys[i]
    v = vals[i]
    size = 2
    while size <= 32:
        stride = size // 2
        while stride > 0:
            ok = wl.shfl_xor_sync(wl.FULL_MASK, k, stride)
            ov = wl.shfl_xor_sync(wl.FULL_MASK, v, stride)
            up = (lane & size) == 0
            lower = (lane & stride) == 0
            # the lower lane of a pair keeps the min when sorting up, the max otherwise
            take_other = (ok < k or (ok == k and ov < v)) == (lower == up)
            if take_other and not (ok == k and ov == v):
                k = ok
                v = ov
            stride //= 2
        size *= 2
    keys[i] = k
    vals[i] = v


def test_warp_bitonic_sort_pairs():
    _compile_both(warp_bitonic_sort)
    g = _rng(125)
    n = 96
    keys = g.integers(0, 20, n).astype(f32)          # duplicates: payload breaks ties
    vals = np.arange(n, dtype=i32)
    k0 = keys.copy()
    _sim(warp_bitonic_sort, [keys, vals], dim=n, block_dim=64)
    for w in range(n // 32):
        sl = slice(32 * w, 32 * w + 32)
        order = np.lexsort((np.arange(32 * w, 32 * w + 32), k0[sl]))
        np.testing.assert_array_equal(keys[sl], k0[sl][order])
        np.testing.assert_array_equal(vals[sl], np.arange(32 * w, 32 * w + 32)[order])


# =====================================================================================
# 27. Warp sum of per-lane vec3 forces (a molecular-dynamics neighbour-list kernel
#     reduces each atom's force over the warp): component-wise shuffles work; a
#     shuffle of the whole vec3 is refused (CUDA shuffles words too), and the error
#     now shows the component-wise rewrite (compiler/typing_builtins._shfl).
# =====================================================================================
@wl.kernel
def warp_force_sum(f: wl.array(dtype=wl.vec3), out: wl.array(dtype=wl.vec3)):
    i = wl.tid()
    v = f[i]
    off = 16
    while off > 0:
        v += wl.vec3(wl.shfl_xor_sync(wl.FULL_MASK, v.x, off),
                     wl.shfl_xor_sync(wl.FULL_MASK, v.y, off),
                     wl.shfl_xor_sync(wl.FULL_MASK, v.z, off))
        off //= 2
    if wl.lane_id() == 0:
        out[i // 32] = v


@wl.kernel
def warp_force_sum_whole_vector(f: wl.array(dtype=wl.vec3), out: wl.array(dtype=wl.vec3)):
    i = wl.tid()
    v = f[i]
    v += wl.shfl_xor_sync(wl.FULL_MASK, v, 16)
    out[i] = v


def test_warp_vec3_reduction_and_vector_shuffle_hint():
    _compile_both(warp_force_sum)
    f = _rng(126).standard_normal((96, 3)).astype(f32)
    out = np.zeros((3, 3), f32)
    _sim(warp_force_sum, [f, out], dim=96, block_dim=96)
    np.testing.assert_allclose(out, f.astype(f64).reshape(3, 32, 3).sum(axis=1), rtol=1e-5,
                               atol=1e-5)
    with pytest.raises(wl.KernelCompileError, match="not vec3") as info:
        wl.compile(warp_force_sum_whole_vector, sass=False)
    assert "wl.vec3(wl.shfl_xor_sync(mask, v[0]" in str(info.value)
