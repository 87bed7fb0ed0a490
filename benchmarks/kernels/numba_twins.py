"""The benchmark kernels written for Numba CUDA (``numba-cuda``).

Importing this module imports ``numba.cuda``; do it only in a process meant
for Numba (the code-quality and latency workers), never after
``NUMBA_ENABLE_CUDASIM=1`` has been set if PTX is wanted.

Each twin does the same work as the warp_lab corpus kernel of the same name,
written the way a Numba user writes it: ``cuda.grid``, ``cuda.shared.array``,
``cuda.atomic``, float32 literals wrapped in ``float32(...)`` (a bare ``0.5``
is float64 in Numba). Array signatures are C-contiguous (``float32[::1]``,
``float32[:, ::1]``): the type Numba infers when a kernel is launched with a
freshly allocated numpy array, hence the code users get.
"""

from __future__ import annotations

import math

from numba import cuda, float32, int32, uint8, void
from numba.cuda import libdevice

__all__ = ["TWINS", "signature_of", "warmup", "WARMUP_SIG"]

RED_BLOCK = 256
SCAN_BLOCK = 128
TILE = 16
T_TILE = 32
T_ROWS = 8
T_PAD = T_TILE + 1  # Numba needs the shared shape as a plain constant
NUM_BINS = 64
SM_BLOCK = 128


def saxpy(x, y, a):
    i = cuda.grid(1)
    if i < x.shape[0]:
        y[i] = a * x[i] + y[i]


def stencil_2d(u, out):
    j, i = cuda.grid(2)
    h, w = u.shape
    if i >= h or j >= w:
        return
    if i == 0 or j == 0 or i == h - 1 or j == w - 1:
        out[i, j] = u[i, j]
        return
    out[i, j] = float32(0.25) * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])


def block_sum(x, partial, n):
    buf = cuda.shared.array(RED_BLOCK, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * RED_BLOCK + t
    buf[t] = x[i] if i < n else float32(0.0)
    cuda.syncthreads()
    s = RED_BLOCK // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = buf[0]


def warp_sum(x, warp_sums, total, n):
    i = cuda.grid(1)
    v = x[i] if i < n else float32(0.0)
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        warp_sums[i // 32] = v
        cuda.atomic.add(total, 0, v)


def matmul_tiled(a, b, c):
    sa = cuda.shared.array((TILE, TILE), float32)
    sb = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m, kdim = a.shape
    n = b.shape[1]
    acc = float32(0.0)
    for k0 in range(0, kdim, TILE):
        sa[ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < kdim else float32(0.0)
        sb[ty, tx] = b[k0 + ty, col] if k0 + ty < kdim and col < n else float32(0.0)
        cuda.syncthreads()
        for k in range(TILE):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc


def transpose_padded(src, dst):
    tile = cuda.shared.array((T_TILE, T_PAD), float32)
    h, w = src.shape
    x = cuda.blockIdx.x * T_TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * T_TILE + cuda.threadIdx.y
    for r in range(0, T_TILE, T_ROWS):
        if x < w and y + r < h:
            tile[cuda.threadIdx.y + r, cuda.threadIdx.x] = src[y + r, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * T_TILE + cuda.threadIdx.x
    y = cuda.blockIdx.x * T_TILE + cuda.threadIdx.y
    for r in range(0, T_TILE, T_ROWS):
        if x < h and y + r < w:
            dst[y + r, x] = tile[cuda.threadIdx.x, cuda.threadIdx.y + r]


def histogram(data, hist, n):
    local_hist = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    if t < NUM_BINS:
        local_hist[t] = 0
    cuda.syncthreads()
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    stride = cuda.blockDim.x * cuda.gridDim.x
    while i < n:
        cuda.atomic.add(local_hist, data[i] >> 2, 1)
        i += stride
    cuda.syncthreads()
    if t < NUM_BINS:
        cuda.atomic.add(hist, t, local_hist[t])


def block_scan(x, out, totals, n):
    buf = cuda.shared.array((2, SCAN_BLOCK), int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * SCAN_BLOCK + t
    buf[0, t] = x[i] if i < n else 0
    cuda.syncthreads()
    src = 0
    d = 1
    while d < SCAN_BLOCK:
        dst = 1 - src
        if t >= d:
            buf[dst, t] = buf[src, t] + buf[src, t - d]
        else:
            buf[dst, t] = buf[src, t]
        cuda.syncthreads()
        src = dst
        d *= 2
    if i < n:
        out[i] = buf[src, t]
    if t == SCAN_BLOCK - 1:
        totals[cuda.blockIdx.x] = buf[src, t]


def mandelbrot(counts, x0, y0, dx, max_iter):
    j, i = cuda.grid(2)
    if i >= counts.shape[0] or j >= counts.shape[1]:
        return
    cr = x0 + float32(j) * dx
    ci = y0 + float32(i) * dx
    zr = float32(0.0)
    zi = float32(0.0)
    k = 0
    while k < max_iter and zr * zr + zi * zi <= float32(4.0):
        t = zr * zr - zi * zi + cr
        zi = float32(2.0) * zr * zi + ci
        zr = t
        k += 1
    counts[i, j] = k


def nbody_step(pos, vel, mass, new_pos, new_vel, dt, eps2):
    i = cuda.grid(1)
    n = pos.shape[0]
    if i >= n:
        return
    px, py, pz = pos[i, 0], pos[i, 1], pos[i, 2]
    ax = float32(0.0)
    ay = float32(0.0)
    az = float32(0.0)
    for j in range(n):
        dx = pos[j, 0] - px
        dy = pos[j, 1] - py
        dz = pos[j, 2] - pz
        r2 = dx * dx + dy * dy + dz * dz + eps2
        inv = libdevice.rsqrtf(r2)
        s = mass[j] * inv * inv * inv
        ax += dx * s
        ay += dy * s
        az += dz * s
    vx = vel[i, 0] + ax * dt
    vy = vel[i, 1] + ay * dt
    vz = vel[i, 2] + az * dt
    new_vel[i, 0] = vx
    new_vel[i, 1] = vy
    new_vel[i, 2] = vz
    new_pos[i, 0] = px + vx * dt
    new_pos[i, 1] = py + vy * dt
    new_pos[i, 2] = pz + vz * dt


def softmax_rows(x, y):
    red = cuda.shared.array(SM_BLOCK, float32)
    row = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]
    m = float32(-3.0e38)
    for c in range(t, cols, SM_BLOCK):
        m = max(m, x[row, c])
    red[t] = m
    cuda.syncthreads()
    s = SM_BLOCK // 2
    while s > 0:
        if t < s:
            red[t] = max(red[t], red[t + s])
        cuda.syncthreads()
        s //= 2
    row_max = red[0]
    cuda.syncthreads()
    total = float32(0.0)
    for c in range(t, cols, SM_BLOCK):
        total += math.exp(x[row, c] - row_max)
    red[t] = total
    cuda.syncthreads()
    s = SM_BLOCK // 2
    while s > 0:
        if t < s:
            red[t] += red[t + s]
        cuda.syncthreads()
        s //= 2
    denom = red[0]
    for c in range(t, cols, SM_BLOCK):
        y[row, c] = math.exp(x[row, c] - row_max) / denom


def spmv_csr(row_ptr, col_idx, values, x, y):
    row = cuda.grid(1)
    if row >= y.shape[0]:
        return
    s = float32(0.0)
    for k in range(row_ptr[row], row_ptr[row + 1]):
        s += values[k] * x[col_idx[k]]
    y[row] = s


def warmup(x):
    """Not a benchmark kernel: the latency worker's warm-up compile."""
    x[cuda.threadIdx.x] += float32(1.0)


_f1, _f2, _i1 = float32[::1], float32[:, ::1], int32[::1]
WARMUP_SIG = void(_f1)

#: kernel name -> (Python function, Numba signature).
TWINS = {
    "saxpy": (saxpy, void(_f1, _f1, float32)),
    "stencil_2d": (stencil_2d, void(_f2, _f2)),
    "block_sum": (block_sum, void(_f1, _f1, int32)),
    "warp_sum": (warp_sum, void(_f1, _f1, _f1, int32)),
    "matmul_tiled": (matmul_tiled, void(_f2, _f2, _f2)),
    "transpose_padded": (transpose_padded, void(_f2, _f2)),
    "histogram": (histogram, void(uint8[::1], _i1, int32)),
    "block_scan": (block_scan, void(_i1, _i1, _i1, int32)),
    "mandelbrot": (mandelbrot, void(int32[:, ::1], float32, float32, float32, int32)),
    "nbody_step": (nbody_step, void(_f2, _f2, _f1, _f2, _f2, float32, float32)),
    "softmax_rows": (softmax_rows, void(_f2, _f2)),
    "spmv_csr": (spmv_csr, void(_i1, _i1, _f1, _f1, _f1)),
}


def signature_of(name: str):
    """``(python_function, numba_signature)`` of the Numba twin of kernel ``name``.

    Raises:
        KeyError: no Numba twin is written for ``name``.
    """
    return TWINS[name]
