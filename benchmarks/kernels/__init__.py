"""The twelve benchmark kernels, each in every form we compare.

    from benchmarks.kernels import BENCH_KERNELS, warp_lab_kernel
    for name in BENCH_KERNELS:
        k = warp_lab_kernel(name)            # the corpus @wl.kernel (warp_lab/examples)
        src = cuda_src.source_of(name)       # CUDA C++ for NVRTC

The warp_lab form is the corpus kernel itself (:mod:`warp_lab.examples`),
not a copy, so the benchmark measures the code the tests check. The CUDA C++
twins live in :mod:`benchmarks.kernels.cuda_src`, the Numba twins in
:mod:`benchmarks.kernels.numba_twins` and the Warp twins in
:mod:`benchmarks.kernels.warp_twins`; the last two import their peer and are
imported only inside the worker process of that peer.
"""

from __future__ import annotations

from benchmarks.kernels import cuda_src

__all__ = ["BENCH_KERNELS", "warp_lab_kernel", "cuda_src"]

#: benchmark kernel names, in table order (issue 8's list).
BENCH_KERNELS: tuple[str, ...] = (
    "saxpy", "stencil_2d", "block_sum", "warp_sum", "matmul_tiled", "transpose_padded",
    "histogram", "block_scan", "mandelbrot", "nbody_step", "softmax_rows", "spmv_csr",
)


def warp_lab_kernel(name: str):
    """The corpus ``@wl.kernel`` called ``name`` (a :class:`warp_lab.Kernel`).

    Raises:
        KeyError: no corpus kernel of that name.
    """
    from warp_lab.examples import get

    return get(name).kernel
