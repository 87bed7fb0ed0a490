"""CUDA C++ kernels in the style of NVIDIA's CUDA samples (github.com/NVIDIA/cuda-samples),
written for warp_lab's tests: each with its inputs, launch and a numpy reference.

The samples' kernels, re-written here (not copied): ``vectorAdd``
(0_Introduction/vectorAdd), a reduction with warp shuffles (2_Concepts_and_Techniques/
reduction, its ``reduce6``-style grid-stride load and ``__shfl_down_sync`` warp sums,
templated on the block size), ``transposeNoBankConflicts`` (6_Performance/transpose: a
32 × 33 tile), ``histogram64`` with per-block ``__shared__`` atomics
(2_Concepts_and_Techniques/histogram), ``shfl_scan`` (2_Concepts_and_Techniques/
shfl_scan: warp scans with ``__shfl_up_sync``, then the warp sums scanned) and
``matrixMul`` (0_Introduction/matrixMul: ``template <int BLOCK_SIZE>`` shared tiles).
Each is correct: compute-sanitizer finds nothing in them, and neither must the
simulator's checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["CudaSample", "SAMPLES", "SOURCE"]

SOURCE = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// 0_Introduction/vectorAdd
__global__ void vectorAdd(const float *A, const float *B, float *C, int numElements)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < numElements) {
        C[i] = A[i] + B[i] + 0.0f;
    }
}

// 2_Concepts_and_Techniques/reduction: grid-stride sums, then warp shuffles
template <unsigned int blockSize>
__global__ void reduceShfl(const float *g_idata, float *g_odata, unsigned int n)
{
    __shared__ float warpSums[blockSize / 32];
    unsigned int tid = threadIdx.x;
    unsigned int gridSize = blockSize * gridDim.x;
    float mySum = 0.0f;
    for (unsigned int i = blockIdx.x * blockSize + tid; i < n; i += gridSize) {
        mySum += g_idata[i];
    }
    for (int offset = warpSize / 2; offset > 0; offset /= 2) {
        mySum += __shfl_down_sync(0xffffffff, mySum, offset);
    }
    if ((tid % warpSize) == 0) warpSums[tid / warpSize] = mySum;
    __syncthreads();
    if (tid < warpSize) {
        mySum = tid < blockSize / warpSize ? warpSums[tid] : 0.0f;
        for (int offset = warpSize / 2; offset > 0; offset /= 2) {
            mySum += __shfl_down_sync(0xffffffff, mySum, offset);
        }
        if (tid == 0) g_odata[blockIdx.x] = mySum;
    }
}

// 6_Performance/transpose: coalesced reads and writes through a padded tile
#define TILE_DIM 32
#define BLOCK_ROWS 8
__global__ void transposeNoBankConflicts(float *odata, const float *idata, int width,
                                         int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    int xIndex = blockIdx.x * TILE_DIM + threadIdx.x;
    int yIndex = blockIdx.y * TILE_DIM + threadIdx.y;
    int index_in = xIndex + yIndex * width;
    for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) {
        tile[threadIdx.y + i][threadIdx.x] = idata[index_in + i * width];
    }
    __syncthreads();
    xIndex = blockIdx.y * TILE_DIM + threadIdx.x;
    yIndex = blockIdx.x * TILE_DIM + threadIdx.y;
    int index_out = xIndex + yIndex * height;
    for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) {
        odata[index_out + i * height] = tile[threadIdx.x][threadIdx.y + i];
    }
}

// 2_Concepts_and_Techniques/histogram: a block's histogram in shared memory
#define HISTOGRAM64_BIN_COUNT 64
__global__ void histogram64Kernel(unsigned int *d_Histogram, const unsigned char *d_Data,
                                  unsigned int dataCount)
{
    __shared__ unsigned int s_Hist[HISTOGRAM64_BIN_COUNT];
    for (unsigned int i = threadIdx.x; i < HISTOGRAM64_BIN_COUNT; i += blockDim.x) {
        s_Hist[i] = 0;
    }
    __syncthreads();
    for (unsigned int pos = blockIdx.x * blockDim.x + threadIdx.x; pos < dataCount;
         pos += blockDim.x * gridDim.x) {
        atomicAdd(&s_Hist[d_Data[pos] >> 2], 1u);
    }
    __syncthreads();
    for (unsigned int i = threadIdx.x; i < HISTOGRAM64_BIN_COUNT; i += blockDim.x) {
        atomicAdd(&d_Histogram[i], s_Hist[i]);
    }
}

// 2_Concepts_and_Techniques/shfl_scan: an inclusive scan of each block's elements
__global__ void shfl_scan_test(int *data, int width, int *partial_sums)
{
    extern __shared__ int sums[];
    int id = ((blockIdx.x * blockDim.x) + threadIdx.x);
    int lane_id = id % warpSize;
    int warp_id = threadIdx.x / warpSize;
    int value = data[id];
    for (int i = 1; i <= width; i *= 2) {
        int n = __shfl_up_sync(0xffffffff, value, i, width);
        if (lane_id >= i) value += n;
    }
    if (threadIdx.x % warpSize == warpSize - 1) sums[warp_id] = value;
    __syncthreads();
    if (warp_id == 0 && lane_id < (blockDim.x / warpSize)) {
        int warp_sum = sums[lane_id];
        int mask = (1 << (blockDim.x / warpSize)) - 1;
        for (int i = 1; i <= (blockDim.x / warpSize); i *= 2) {
            int n = __shfl_up_sync(mask, warp_sum, i, (blockDim.x / warpSize));
            if (lane_id >= i) warp_sum += n;
        }
        sums[lane_id] = warp_sum;
    }
    __syncthreads();
    int blockSum = 0;
    if (warp_id > 0) blockSum = sums[warp_id - 1];
    value += blockSum;
    data[id] = value;
    if (partial_sums != NULL && threadIdx.x == blockDim.x - 1) {
        partial_sums[blockIdx.x] = value;
    }
}

// 0_Introduction/matrixMul: C = A * B with BLOCK_SIZE x BLOCK_SIZE shared tiles
template <int BLOCK_SIZE>
__global__ void MatrixMulCUDA(float *C, const float *A, const float *B, int wA, int wB)
{
    int bx = blockIdx.x, by = blockIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    int aBegin = wA * BLOCK_SIZE * by;
    int aEnd = aBegin + wA - 1;
    int aStep = BLOCK_SIZE;
    int bBegin = BLOCK_SIZE * bx;
    int bStep = BLOCK_SIZE * wB;
    float Csub = 0;
    for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {
        __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
        __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];
        As[ty][tx] = A[a + wA * ty + tx];
        Bs[ty][tx] = B[b + wB * ty + tx];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BLOCK_SIZE; ++k) {
            Csub += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    int c = wB * BLOCK_SIZE * by + BLOCK_SIZE * bx;
    C[c + wB * ty + tx] = Csub;
}

// cooperative groups: a tile of 16 threads sums its values (reduction's cg variant)
__global__ void cgTileSum(const int *in, int *out)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
    int v = in[block.thread_rank()];
    for (int i = tile.size() / 2; i > 0; i /= 2) v += tile.shfl_down(v, i);
    if (tile.thread_rank() == 0) out[block.thread_rank() / 16] = v;
}
"""


@dataclass(frozen=True)
class CudaSample:
    """One sample kernel: how to make its inputs, launch it and what numpy says.

    Attributes:
        name: the kernel (or instantiation) name in :data:`SOURCE`.
        make_inputs: ``() -> list`` of the kernel's arguments (fixed seed).
        grid, block: the CUDA launch shape for those inputs.
        reference: ``(inputs before the launch) -> {argument index: expected array}``.
        shared_mem: dynamic shared memory bytes (``extern __shared__``).
        exact: compare exactly (else ``rtol=1e-5``).
    """

    name: str
    make_inputs: Callable[[], list]
    grid: tuple
    block: tuple
    reference: Callable[[list], dict]
    shared_mem: int = 0
    exact: bool = True


def _rng(seed):
    return np.random.default_rng(seed)


def _dyadic(g, shape):
    """Multiples of 1/64 in [-4, 4): sums and products of them are exact in float32."""
    return (g.integers(-256, 256, shape) / 64).astype(np.float32)


def _vector_add():
    g = _rng(1)
    return [_dyadic(g, 5000), _dyadic(g, 5000), np.zeros(5000, np.float32), 5000]


def _reduce():
    return [_dyadic(_rng(2), 10000), np.zeros(8, np.float32), 10000]


def _transpose():
    return [np.zeros((64, 96), np.float32),
            np.arange(96 * 64, dtype=np.float32).reshape(96, 64), 64, 96]


def _histogram():
    data = _rng(3).integers(0, 256, 3000).astype(np.uint8)
    return [np.zeros(64, np.uint32), data, data.size]


def _scan():
    return [_rng(4).integers(-50, 50, 512).astype(np.int32), 32, np.zeros(4, np.int32)]


def _matmul():
    g = _rng(5)
    return [np.zeros((32, 48), np.float32), _dyadic(g, (32, 64)), _dyadic(g, (64, 48)), 64, 48]


def _cg():
    return [np.arange(64, dtype=np.int32) * 3 - 40, np.zeros(4, np.int32)]


def _block_sums(x):
    """reduceShfl<256>'s result on 8 blocks: block k sums the elements whose index modulo
    the grid's 2048 threads falls in its 256 (dyadic inputs: exact in any order)."""
    idx = np.arange(x.size)
    return np.array([x[(idx % 2048) // 256 == k].sum(dtype=np.float64) for k in range(8)],
                    np.float32)


SAMPLES: list[CudaSample] = [
    CudaSample("vectorAdd", _vector_add, ((5000 + 255) // 256,), (256,),
               lambda a: {2: a[0] + a[1]}),
    CudaSample("reduceShfl<256>", _reduce, (8,), (256,), lambda a: {1: _block_sums(a[0])}),
    CudaSample("transposeNoBankConflicts", _transpose, (2, 3), (32, 8),
               lambda a: {0: a[1].T}),
    CudaSample("histogram64Kernel", _histogram, (4,), (128,),
               lambda a: {0: np.bincount(a[1] >> 2, minlength=64).astype(np.uint32)}),
    CudaSample("shfl_scan_test", _scan, (4,), (128,),
               lambda a: {0: np.concatenate([np.cumsum(a[0][k * 128:(k + 1) * 128])
                                             for k in range(4)]).astype(np.int32),
                          2: np.array([a[0][k * 128:(k + 1) * 128].sum() for k in range(4)],
                                      np.int32)},
               shared_mem=4 * 4),
    CudaSample("MatrixMulCUDA<16>", _matmul, (3, 2), (16, 16),
               lambda a: {0: (a[1].astype(np.float64) @ a[2]).astype(np.float32)}),
    CudaSample("cgTileSum", _cg, (1,), (64,),
               lambda a: {1: a[0].reshape(4, 16).sum(1).astype(np.int32)}),
]
