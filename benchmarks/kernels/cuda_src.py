"""The benchmark kernels written in CUDA C++ (the nvcc reference), as NVRTC sources.

Each twin does the same work as the warp_lab corpus kernel of the same name
(``warp_lab/examples``): same algorithm, same block-size constants, same
bounds checks, same float32 precision (``expf``/``rsqrtf``, precise
division), and the same launch convention: a ``wl.tid()`` kernel returns at
once for threads past the launch extent, so the twin takes the extent as an
``int`` and returns early.

What differs is only what the languages force:

* warp_lab arrays carry ``shape`` and ``strides`` (non-contiguous numpy views
  work); the twins take bare pointers and row-major extents, as CUDA code
  is written.
* Pointer parameters are spelled ``const T* RESTRICT``. ``RESTRICT`` is
  empty by default, so the reference has the same aliasing rules as
  warp_lab (any two arrays may overlap); compiling with
  ``-DRESTRICT=__restrict__`` gives the "what a tuned CUDA programmer
  writes" variant (``ld.global.nc`` and free reordering of loads).

Every entry is ``extern "C"``, so its PTX entry name is the kernel name.
"""

from __future__ import annotations

__all__ = ["PRELUDE", "SOURCES", "WARMUP", "source_of", "twin_launch"]

PRELUDE = r"""
#ifndef RESTRICT
#define RESTRICT
#endif
"""

SAXPY = r"""
extern "C" __global__ void saxpy(const float* RESTRICT x, float* RESTRICT y, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    y[i] = a * x[i] + y[i];
}
"""

STENCIL_2D = r"""
extern "C" __global__ void stencil_2d(const float* RESTRICT u, float* RESTRICT out, int h, int w)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= h || j >= w) return;
    if (i == 0 || j == 0 || i == h - 1 || j == w - 1) {
        out[i * w + j] = u[i * w + j];
        return;
    }
    out[i * w + j] = 0.25f * (u[(i - 1) * w + j] + u[(i + 1) * w + j]
                              + u[i * w + j - 1] + u[i * w + j + 1]);
}
"""

BLOCK_SUM = r"""
#define RED_BLOCK 256
extern "C" __global__ void block_sum(const float* RESTRICT x, float* RESTRICT partial, int n)
{
    __shared__ float buf[RED_BLOCK];
    int t = threadIdx.x;
    int i = blockIdx.x * RED_BLOCK + t;
    buf[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int s = RED_BLOCK / 2; s > 0; s /= 2) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = buf[0];
}
"""

WARP_SUM = r"""
extern "C" __global__ void warp_sum(const float* RESTRICT x, float* RESTRICT warp_sums,
                                    float* RESTRICT total, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    if ((threadIdx.x & 31) == 0) {
        warp_sums[i / 32] = v;
        atomicAdd(total, v);
    }
}
"""

MATMUL_TILED = r"""
#define TILE 16
extern "C" __global__ void matmul_tiled(const float* RESTRICT a, const float* RESTRICT b,
                                        float* RESTRICT c, int m, int kdim, int n)
{
    __shared__ float sa[TILE][TILE];
    __shared__ float sb[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < kdim; k0 += TILE) {
        sa[ty][tx] = (row < m && k0 + tx < kdim) ? a[row * kdim + k0 + tx] : 0.0f;
        sb[ty][tx] = (k0 + ty < kdim && col < n) ? b[(k0 + ty) * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += sa[ty][k] * sb[k][tx];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = acc;
}
"""

TRANSPOSE_PADDED = r"""
#define T_TILE 32
#define T_ROWS 8
extern "C" __global__ void transpose_padded(const float* RESTRICT src, float* RESTRICT dst,
                                            int h, int w)
{
    __shared__ float tile[T_TILE][T_TILE + 1];
    int x = blockIdx.x * T_TILE + threadIdx.x;
    int y = blockIdx.y * T_TILE + threadIdx.y;
    for (int r = 0; r < T_TILE; r += T_ROWS)
        if (x < w && y + r < h) tile[threadIdx.y + r][threadIdx.x] = src[(y + r) * w + x];
    __syncthreads();
    x = blockIdx.y * T_TILE + threadIdx.x;
    y = blockIdx.x * T_TILE + threadIdx.y;
    for (int r = 0; r < T_TILE; r += T_ROWS)
        if (x < h && y + r < w) dst[(y + r) * h + x] = tile[threadIdx.x][threadIdx.y + r];
}
"""

HISTOGRAM = r"""
#define NUM_BINS 64
extern "C" __global__ void histogram(const unsigned char* RESTRICT data, int* RESTRICT hist, int n)
{
    __shared__ int local_hist[NUM_BINS];
    int t = threadIdx.x;
    if (t < NUM_BINS) local_hist[t] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + t;
    int stride = blockDim.x * gridDim.x;
    while (i < n) {
        atomicAdd(&local_hist[data[i] >> 2], 1);
        i += stride;
    }
    __syncthreads();
    if (t < NUM_BINS) atomicAdd(&hist[t], local_hist[t]);
}
"""

BLOCK_SCAN = r"""
#define SCAN_BLOCK 128
extern "C" __global__ void block_scan(const int* RESTRICT x, int* RESTRICT out,
                                      int* RESTRICT totals, int n)
{
    __shared__ int buf[2][SCAN_BLOCK];
    int t = threadIdx.x;
    int i = blockIdx.x * SCAN_BLOCK + t;
    buf[0][t] = i < n ? x[i] : 0;
    __syncthreads();
    int src = 0;
    for (int d = 1; d < SCAN_BLOCK; d *= 2) {
        int dst = 1 - src;
        if (t >= d) buf[dst][t] = buf[src][t] + buf[src][t - d];
        else buf[dst][t] = buf[src][t];
        __syncthreads();
        src = dst;
    }
    if (i < n) out[i] = buf[src][t];
    if (t == SCAN_BLOCK - 1) totals[blockIdx.x] = buf[src][t];
}
"""

MANDELBROT = r"""
extern "C" __global__ void mandelbrot(int* RESTRICT counts, int h, int w, float x0, float y0,
                                      float dx, int max_iter)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= h || j >= w) return;
    float cr = x0 + (float)j * dx;
    float ci = y0 + (float)i * dx;
    float zr = 0.0f, zi = 0.0f;
    int k = 0;
    while (k < max_iter && zr * zr + zi * zi <= 4.0f) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
        ++k;
    }
    counts[i * w + j] = k;
}
"""

NBODY_STEP = r"""
__device__ __forceinline__ float3 body_accel(float3 pi, float3 pj, float mj, float eps2)
{
    float3 d = make_float3(pj.x - pi.x, pj.y - pi.y, pj.z - pi.z);
    float r2 = d.x * d.x + d.y * d.y + d.z * d.z + eps2;
    float inv = rsqrtf(r2);
    float s = mj * inv * inv * inv;
    return make_float3(d.x * s, d.y * s, d.z * s);
}

extern "C" __global__ void nbody_step(const float3* RESTRICT pos, const float3* RESTRICT vel,
                                      const float* RESTRICT mass, float3* RESTRICT new_pos,
                                      float3* RESTRICT new_vel, int n, float dt, float eps2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float3 p = pos[i];
    float3 acc = make_float3(0.0f, 0.0f, 0.0f);
    for (int j = 0; j < n; ++j) {
        float3 a = body_accel(p, pos[j], mass[j], eps2);
        acc.x += a.x; acc.y += a.y; acc.z += a.z;
    }
    float3 v = vel[i];
    v = make_float3(v.x + acc.x * dt, v.y + acc.y * dt, v.z + acc.z * dt);
    new_vel[i] = v;
    new_pos[i] = make_float3(p.x + v.x * dt, p.y + v.y * dt, p.z + v.z * dt);
}
"""

SOFTMAX_ROWS = r"""
#define SM_BLOCK 128
extern "C" __global__ void softmax_rows(const float* RESTRICT x, float* RESTRICT y, int cols)
{
    __shared__ float red[SM_BLOCK];
    int row = blockIdx.x;
    int t = threadIdx.x;
    float m = -3.0e38f;
    for (int c = t; c < cols; c += SM_BLOCK) m = fmaxf(m, x[row * cols + c]);
    red[t] = m;
    __syncthreads();
    for (int s = SM_BLOCK / 2; s > 0; s /= 2) {
        if (t < s) red[t] = fmaxf(red[t], red[t + s]);
        __syncthreads();
    }
    float row_max = red[0];
    __syncthreads();
    float total = 0.0f;
    for (int c = t; c < cols; c += SM_BLOCK) total += expf(x[row * cols + c] - row_max);
    red[t] = total;
    __syncthreads();
    for (int s = SM_BLOCK / 2; s > 0; s /= 2) {
        if (t < s) red[t] += red[t + s];
        __syncthreads();
    }
    float denom = red[0];
    for (int c = t; c < cols; c += SM_BLOCK)
        y[row * cols + c] = expf(x[row * cols + c] - row_max) / denom;
}
"""

SPMV_CSR = r"""
extern "C" __global__ void spmv_csr(const int* RESTRICT row_ptr, const int* RESTRICT col_idx,
                                    const float* RESTRICT values, const float* RESTRICT x,
                                    float* RESTRICT y, int rows)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float s = 0.0f;
    int end = row_ptr[row + 1];
    for (int k = row_ptr[row]; k < end; ++k)
        s += values[k] * x[col_idx[k]];
    y[row] = s;
}
"""

#: a kernel outside the benchmark list: the latency worker's warm-up compile
WARMUP = r"""
extern "C" __global__ void warmup(float* x) { x[threadIdx.x] += 1.0f; }
"""

#: kernel name -> CUDA C++ source of its twin (entry name = kernel name).
SOURCES: dict[str, str] = {
    "saxpy": SAXPY,
    "stencil_2d": STENCIL_2D,
    "block_sum": BLOCK_SUM,
    "warp_sum": WARP_SUM,
    "matmul_tiled": MATMUL_TILED,
    "transpose_padded": TRANSPOSE_PADDED,
    "histogram": HISTOGRAM,
    "block_scan": BLOCK_SCAN,
    "mandelbrot": MANDELBROT,
    "nbody_step": NBODY_STEP,
    "softmax_rows": SOFTMAX_ROWS,
    "spmv_csr": SPMV_CSR,
}


def source_of(name: str) -> str:
    """The full translation unit for kernel ``name`` (prelude + kernel).

    Raises:
        KeyError: no CUDA C++ twin is written for ``name``.
    """
    return PRELUDE + SOURCES[name]


def _dims(a):
    return list(a.shape)


#: kernel name -> the twin's arguments from the corpus example's (warp_lab arrays carry
#: their extents; the twin takes them as ints, after the arrays, as its signature says)
_TWIN_ARGS = {
    "saxpy": lambda x, y, a: [x, y, a, x.size],
    "stencil_2d": lambda u, out: [u, out, *_dims(u)],
    "block_sum": lambda x, partial, n: [x, partial, n],
    "warp_sum": lambda x, warp_sums, total, n: [x, warp_sums, total, n],
    "matmul_tiled": lambda a, b, c: [a, b, c, a.shape[0], a.shape[1], b.shape[1]],
    "transpose_padded": lambda src, dst: [src, dst, *_dims(src)],
    "histogram": lambda data, hist, n: [data, hist, n],
    "block_scan": lambda x, out, totals, n: [x, out, totals, n],
    "mandelbrot": lambda counts, x0, y0, dx, max_iter: [counts, *_dims(counts), x0, y0, dx,
                                                        max_iter],
    "nbody_step": lambda pos, vel, mass, new_pos, new_vel, dt, eps2: [
        pos, vel, mass, new_pos, new_vel, len(mass), dt, eps2],
    "softmax_rows": lambda x, y: [x, y, x.shape[1]],
    "spmv_csr": lambda row_ptr, col_idx, values, x, y: [row_ptr, col_idx, values, x, y,
                                                        len(y)],
}


def twin_launch(name: str, args: list, launch) -> tuple[list, tuple, tuple]:
    """The CUDA C++ twin's launch for the corpus example ``name``'s arguments.

    Args:
        name: a kernel of :data:`SOURCES`.
        args: the example's arguments (``warp_lab.examples.get(name).make_inputs()``):
            the twin gets the same arrays (shared, so its outputs land in them) and their
            extents as ints.
        launch: the example's :class:`~warp_lab.examples.Launch`.

    Returns:
        ``(inputs, grid, block)``: a ``dim=`` launch becomes the CUDA configuration that
        covers it, as the twin's early return expects (``(n + b - 1) / b`` blocks; a 2-D
        ``dim`` gets 32 threads along x, the fastest index, as ``wl.launch`` does).

    Raises:
        KeyError: no twin for ``name``.
    """
    inputs = _TWIN_ARGS[name](*args)
    if launch.grid is not None:
        return inputs, tuple(launch.grid), tuple(launch.block)
    dims = (launch.dim,) if isinstance(launch.dim, int) else tuple(launch.dim)
    b = launch.block_dim
    if len(dims) == 1:
        block = (b, 1, 1)
    else:
        block = (32, b // 32, 1) if b >= 32 else (b, 1, 1)
    ext = tuple(reversed(dims)) + (1,) * (3 - len(dims))
    grid = tuple(-(-e // k) for e, k in zip(ext, block))
    return inputs, grid, block
