"""Small applications: mandelbrot, an n-body step, row softmax, sparse matrix-vector."""

import numpy as np

import warp_lab as wl
from warp_lab.examples.example import Example, Launch, Tolerance, dyadic, pick, rng

f32 = np.float32
i32 = np.int32
SM_BLOCK = 128


# -- mandelbrot: float32 escape-time loop ---------------------------------------------------
@wl.kernel
def mandelbrot(counts: wl.array2d(dtype=wl.int32), x0: float, y0: float, dx: float,
               max_iter: int):
    i, j = wl.tid()
    cr = x0 + float(j) * dx
    ci = y0 + float(i) * dx
    zr = 0.0
    zi = 0.0
    k = 0
    while k < max_iter and zr * zr + zi * zi <= 4.0:  # marker: escape test
        t = zr * zr - zi * zi + cr
        zi = 2.0 * zr * zi + ci
        zr = t
        k += 1
    counts[i, j] = k


def _mandelbrot_inputs(size="small"):
    h, w = pick(size, (24, 32), (1024, 1536))
    dx = 3.0 / w
    return [np.zeros((h, w), i32), -2.25, -dx * h / 2, dx, pick(size, 64, 256)]


def _mandelbrot_ref(counts, x0, y0, dx, max_iter):
    h, w = counts.shape
    jj, ii = np.meshgrid(np.arange(w), np.arange(h))
    cr = f32(x0) + jj.astype(f32) * f32(dx)
    ci = f32(y0) + ii.astype(f32) * f32(dx)
    zr = np.zeros_like(cr)
    zi = np.zeros_like(cr)
    k = np.zeros((h, w), i32)
    four, two = f32(4.0), f32(2.0)
    for _ in range(max_iter):
        active = zr * zr + zi * zi <= four
        if not active.any():
            break
        t = zr * zr - zi * zi + cr
        nzi = two * zr * zi + ci
        zr = np.where(active, t, zr)
        zi = np.where(active, nzi, zi)
        k += active
    return {"counts": k}


# -- n-body: one explicit Euler step with vec3 -----------------------------------------------
@wl.func
def body_accel(pi: wl.vec3, pj: wl.vec3, mj: float, eps2: float) -> wl.vec3:
    d = pj - pi
    r2 = wl.dot(d, d) + eps2
    inv = wl.rsqrt(r2)
    return d * (mj * inv * inv * inv)


@wl.kernel
def nbody_step(pos: wl.array(dtype=wl.vec3), vel: wl.array(dtype=wl.vec3),
               mass: wl.array(dtype=wl.float32), new_pos: wl.array(dtype=wl.vec3),
               new_vel: wl.array(dtype=wl.vec3), dt: float, eps2: float):
    i = wl.tid()
    p = pos[i]
    acc = wl.vec3(0.0, 0.0, 0.0)
    for j in range(pos.shape[0]):
        acc += body_accel(p, pos[j], mass[j], eps2)  # marker: nbody accumulate
    v = vel[i] + acc * dt
    new_vel[i] = v
    new_pos[i] = p + v * dt


def _nbody_inputs(size="small"):
    n = pick(size, 64, 4096)
    g = rng("nbody_step")
    pos = g.uniform(-1, 1, (n, 3)).astype(f32)
    vel = g.uniform(-0.1, 0.1, (n, 3)).astype(f32)
    mass = g.uniform(0.5, 1.5, n).astype(f32)
    return [pos, vel, mass, np.zeros((n, 3), f32), np.zeros((n, 3), f32), 0.01, 0.01]


def _nbody_ref(pos, vel, mass, new_pos, new_vel, dt, eps2):
    p = pos.astype(np.float64)
    d = p[None, :, :] - p[:, None, :]                    # d[i, j] = p[j] - p[i]
    r2 = (d * d).sum(axis=2) + eps2
    acc = (d * (mass[None, :] / r2 ** 1.5)[:, :, None]).sum(axis=1)
    v = vel + acc * dt
    return {"new_vel": v.astype(f32), "new_pos": (p + v * dt).astype(f32)}


# -- softmax of each row: one block per row, shared-memory max and sum ------------------------
@wl.kernel
def softmax_rows(x: wl.array2d(dtype=wl.float32), y: wl.array2d(dtype=wl.float32)):
    red = wl.shared_array(SM_BLOCK, wl.float32)
    row = wl.block_idx.x
    t = wl.thread_idx.x
    cols = x.shape[1]
    m = -3.0e38
    for c in range(t, cols, SM_BLOCK):
        m = wl.max(m, x[row, c])
    red[t] = m
    wl.syncthreads()
    s = SM_BLOCK // 2
    while s > 0:
        if t < s:
            red[t] = wl.max(red[t], red[t + s])
        wl.syncthreads()
        s //= 2
    row_max = red[0]
    wl.syncthreads()
    total = 0.0
    for c in range(t, cols, SM_BLOCK):
        total += wl.exp(x[row, c] - row_max)
    red[t] = total
    wl.syncthreads()
    s = SM_BLOCK // 2
    while s > 0:
        if t < s:
            red[t] += red[t + s]
        wl.syncthreads()
        s //= 2
    denom = red[0]
    for c in range(t, cols, SM_BLOCK):
        y[row, c] = wl.exp(x[row, c] - row_max) / denom  # marker: softmax normalise


def _softmax_inputs(size="small"):
    rows, cols = pick(size, (6, 300), (1024, 4096))
    x = rng("softmax_rows").standard_normal((rows, cols)).astype(f32) * f32(3.0)
    return [x, np.zeros_like(x)]


def _softmax_ref(x, y):
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return {"y": (e / e.sum(axis=1, keepdims=True)).astype(f32)}


# -- sparse matrix-vector product, CSR, one thread per row -------------------------------------
@wl.kernel
def spmv_csr(row_ptr: wl.array(dtype=wl.int32), col_idx: wl.array(dtype=wl.int32),
             values: wl.array(dtype=wl.float32), x: wl.array(dtype=wl.float32),
             y: wl.array(dtype=wl.float32)):
    row = wl.tid()
    s = 0.0
    for k in range(row_ptr[row], row_ptr[row + 1]):
        s += values[k] * x[col_idx[k]]  # marker: spmv gather
    y[row] = s


def _spmv_inputs(size="small"):
    rows, cols, density = pick(size, (50, 40, 0.15), (1 << 16, 1 << 16, 0.0005))
    g = rng("spmv_csr")
    # distinct (row, col) positions, sorted row-major: CSR order (sort + dedupe is
    # several times faster here than numpy 2.4's hash-based np.unique)
    flat = np.sort(g.integers(0, rows * cols, int(rows * cols * density)))
    flat = flat[np.concatenate([[True], flat[1:] != flat[:-1]])]
    r, c = np.divmod(flat, cols)
    row_ptr = np.searchsorted(r, np.arange(rows + 1)).astype(i32)
    return [row_ptr, c.astype(i32), dyadic(g, len(c)), dyadic(g, cols), np.zeros(rows, f32)]


def _spmv_ref(row_ptr, col_idx, values, x, y):
    dense = np.zeros((len(row_ptr) - 1, len(x)), np.float64)
    for r in range(len(row_ptr) - 1):
        dense[r, col_idx[row_ptr[r]:row_ptr[r + 1]]] = values[row_ptr[r]:row_ptr[r + 1]]
    return {"y": (dense @ x.astype(np.float64)).astype(f32)}


EXAMPLES = [
    Example("mandelbrot", mandelbrot, _mandelbrot_inputs,
            lambda a: Launch(dim=a[0].shape), _mandelbrot_ref, ("counts",),
            description="float32 escape-time loop with a short-circuit while condition"),
    Example("nbody_step", nbody_step, _nbody_inputs, lambda a: Launch(dim=len(a[0]), block_dim=64),
            _nbody_ref, ("new_pos", "new_vel"),
            default_tolerance=Tolerance(rtol=1e-4, atol=1e-5),
            description="all-pairs gravity with vec3, dot, rsqrt and a @wl.func"),
    Example("softmax_rows", softmax_rows, _softmax_inputs,
            lambda a: Launch(grid=(a[0].shape[0], 1, 1), block=(SM_BLOCK, 1, 1)), _softmax_ref,
            ("y",), default_tolerance=Tolerance(rtol=1e-5, atol=1e-8),
            description="one block per row: shared max and sum reductions, exp"),
    Example("spmv_csr", spmv_csr, _spmv_inputs, lambda a: Launch(dim=len(a[4]), block_dim=32),
            _spmv_ref, ("y",), description="CSR sparse matrix times vector, runtime loop bounds"),
]
