"""The benchmark kernels written for NVIDIA Warp (``warp-lang``), where Warp can express them.

Importing this module imports ``warp``. Only the kernels that need no static
shared memory, block barrier or warp shuffle have a Warp twin: Warp's kernel
language exposes shared memory only through its tile API and has no
``__syncthreads``/``__shfl_*`` builtins, so ``block_sum``, ``warp_sum``,
``matmul_tiled``, ``transpose_padded``, ``histogram``, ``block_scan`` and
``softmax_rows`` are reported as n/a for Warp (:data:`MISSING`).

Every kernel is its own Warp module (``module="unique"``) with the adjoint
(backward) kernel switched off, so ``wp.compile_aot_module`` compiles that
one forward kernel, as warp_lab and NVRTC do.
"""

from __future__ import annotations

import warp as wp

__all__ = ["TWINS", "MISSING", "warmup"]

wp.config.quiet = True

_OPTS = {"module": "unique", "enable_backward": False}


@wp.kernel(**_OPTS)
def saxpy(x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32), a: wp.float32):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel(**_OPTS)
def stencil_2d(u: wp.array2d(dtype=wp.float32), out: wp.array2d(dtype=wp.float32)):
    i, j = wp.tid()
    h = u.shape[0]
    w = u.shape[1]
    if i == 0 or j == 0 or i == h - 1 or j == w - 1:
        out[i, j] = u[i, j]
        return
    out[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])


@wp.kernel(**_OPTS)
def mandelbrot(counts: wp.array2d(dtype=wp.int32), x0: wp.float32, y0: wp.float32,
               dx: wp.float32, max_iter: wp.int32):
    i, j = wp.tid()
    cr = x0 + wp.float32(j) * dx
    ci = y0 + wp.float32(i) * dx
    zr = float(0.0)
    zi = float(0.0)
    k = int(0)
    while k < max_iter and zr * zr + zi * zi <= 4.0:
        t = zr * zr - zi * zi + cr
        zi = 2.0 * zr * zi + ci
        zr = t
        k += 1
    counts[i, j] = k


@wp.func
def _body_accel(pi: wp.vec3, pj: wp.vec3, mj: wp.float32, eps2: wp.float32):
    d = pj - pi
    r2 = wp.dot(d, d) + eps2
    inv = 1.0 / wp.sqrt(r2)
    return d * (mj * inv * inv * inv)


@wp.kernel(**_OPTS)
def nbody_step(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3),
               mass: wp.array(dtype=wp.float32), new_pos: wp.array(dtype=wp.vec3),
               new_vel: wp.array(dtype=wp.vec3), dt: wp.float32, eps2: wp.float32):
    i = wp.tid()
    p = pos[i]
    acc = wp.vec3(0.0, 0.0, 0.0)
    for j in range(pos.shape[0]):
        acc += _body_accel(p, pos[j], mass[j], eps2)
    v = vel[i] + acc * dt
    new_vel[i] = v
    new_pos[i] = p + v * dt


@wp.kernel(**_OPTS)
def spmv_csr(row_ptr: wp.array(dtype=wp.int32), col_idx: wp.array(dtype=wp.int32),
             values: wp.array(dtype=wp.float32), x: wp.array(dtype=wp.float32),
             y: wp.array(dtype=wp.float32)):
    row = wp.tid()
    s = float(0.0)
    for k in range(row_ptr[row], row_ptr[row + 1]):
        s += values[k] * x[col_idx[k]]
    y[row] = s


@wp.kernel(**_OPTS)
def warmup(x: wp.array(dtype=wp.float32)):
    """Not a benchmark kernel: the latency worker's warm-up compile."""
    i = wp.tid()
    x[i] = x[i] + 1.0


#: kernel name -> Warp kernel.
TWINS = {"saxpy": saxpy, "stencil_2d": stencil_2d, "mandelbrot": mandelbrot,
         "nbody_step": nbody_step, "spmv_csr": spmv_csr}

_NO_SHARED = "Warp's kernel language has no static shared array/__syncthreads outside its tile API"
#: kernel name -> why it has no Warp twin.
MISSING = {
    "block_sum": _NO_SHARED, "matmul_tiled": _NO_SHARED, "transpose_padded": _NO_SHARED,
    "histogram": _NO_SHARED, "block_scan": _NO_SHARED, "softmax_rows": _NO_SHARED,
    "warp_sum": "Warp's kernel language has no warp-shuffle builtins",
}
