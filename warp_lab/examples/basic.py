"""Elementwise kernels: indexing in 1-D/2-D/3-D, views, explicit grids, early exits."""

import numpy as np

import warp_lab as wl
from warp_lab.examples.example import Example, Launch, dyadic, pick, rng

f32 = np.float32


# -- saxpy -------------------------------------------------------------------
@wl.kernel
def saxpy(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), a: float):
    i = wl.tid()
    y[i] = a * x[i] + y[i]  # marker: saxpy body


def _saxpy_inputs(size="small"):
    n = pick(size, 1000, 1 << 22)
    g = rng("saxpy")
    return [dyadic(g, n), dyadic(g, n), 2.5]


def _saxpy_ref(x, y, a):
    return {"y": f32(a) * x + y}


# -- vector add ---------------------------------------------------------------
@wl.kernel
def vector_add(a: wl.array(dtype=wl.float32), b: wl.array(dtype=wl.float32),
               c: wl.array(dtype=wl.float32)):
    i = wl.tid()
    c[i] = a[i] + b[i]


def _vector_add_inputs(size="small"):
    n = pick(size, 777, 1 << 22)
    g = rng("vector_add")
    return [g.standard_normal(n).astype(f32), g.standard_normal(n).astype(f32),
            np.zeros(n, f32)]


# -- 2-D indexing -------------------------------------------------------------
@wl.kernel
def index_2d(a: wl.array2d(dtype=wl.float32), out: wl.array(dtype=wl.float32, ndim=2),
             ids: wl.array2d(dtype=wl.int32)):
    i, j = wl.tid()
    out[i, j] = a[i, j] * 2.0 + float(i * 100 + j)
    ids[i, j] = i * 1000 + j  # marker: index_2d ids


def _index_2d_inputs(size="small"):
    h, w = pick(size, (13, 37), (2048, 2048))
    g = rng("index_2d")
    return [g.standard_normal((h, w)).astype(f32), np.zeros((h, w), f32),
            np.full((h, w), -1, np.int32)]


def _index_2d_ref(a, out, ids):
    ii, jj = np.indices(a.shape)
    return {"out": a * f32(2.0) + (ii * 100 + jj).astype(f32),
            "ids": (ii * 1000 + jj).astype(np.int32)}


# -- 3-D indexing -------------------------------------------------------------
@wl.kernel
def index_3d(a: wl.array3d(dtype=wl.float32), out: wl.array(dtype=wl.float32, ndim=3),
             ids: wl.array3d(dtype=wl.int32)):
    i, j, k = wl.tid()
    out[i, j, k] = a[i, j, k] - wl.float32(k)
    ids[i, j, k] = i * 10000 + j * 100 + k


def _index_3d_inputs(size="small"):
    shape = pick(size, (3, 5, 17), (128, 128, 128))
    g = rng("index_3d")
    return [g.standard_normal(shape).astype(f32), np.zeros(shape, f32),
            np.full(shape, -1, np.int32)]


def _index_3d_ref(a, out, ids):
    ii, jj, kk = np.indices(a.shape)
    return {"out": a - kk.astype(f32), "ids": (ii * 10000 + jj * 100 + kk).astype(np.int32)}


# -- non-contiguous views ----------------------------------------------------
@wl.kernel
def strided_rows(src: wl.array2d(dtype=wl.float32), scaled: wl.array2d(dtype=wl.float32),
                 row_sum: wl.array(dtype=wl.float32)):
    i = wl.tid()
    s = 0.0
    for j in range(src.shape[1]):
        v = src[i, j]
        scaled[i, j] = v * 3.0
        s += v
    row_sum[i] = s


def _strided_rows_inputs(size="small"):
    rows, cols = pick(size, (24, 40), (1024, 2048))
    g = rng("strided_rows")
    base = g.standard_normal((rows, cols)).astype(f32)
    src = base[:, ::2].T                              # (cols/2, rows), strides (2, cols)
    scaled = np.zeros((2 * src.shape[0], 2 * src.shape[1] + 1), f32)[::2, 1::2]
    row_sum = np.zeros(3 * src.shape[0], f32)[::3]
    return [src, scaled, row_sum]


def _strided_rows_ref(src, scaled, row_sum):
    s = np.zeros(src.shape[0], f32)
    for j in range(src.shape[1]):   # same left-to-right order as the kernel
        s = s + src[:, j]
    return {"scaled": src * f32(3.0), "row_sum": s}


@wl.kernel
def reversed_view(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    i = wl.tid()
    out[i] = x[i] * 2.0 - x[x.shape[0] - 1 - i]


def _reversed_view_inputs(size="small"):
    n = pick(size, 301, 1 << 20)
    g = rng("reversed_view")
    return [dyadic(g, n)[::-1], np.zeros(2 * n, f32)[::-2]]


def _reversed_view_ref(x, out):
    return {"out": x * f32(2.0) - x[::-1]}


# -- explicit grid: grid-stride loop --------------------------------------------
@wl.kernel
def grid_stride(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32), n: int):
    i = wl.block_idx.x * wl.block_dim.x + wl.thread_idx.x
    stride = wl.block_dim.x * wl.grid_dim.x
    while i < n:
        out[i] = x[i] * 0.5 + 1.0
        i += stride


def _grid_stride_inputs(size="small"):
    n = pick(size, 1000, 1 << 22)
    g = rng("grid_stride")
    return [g.standard_normal(n).astype(f32), np.zeros(n, f32), n]


# -- explicit 3-D grid and block, 4-D array --------------------------------------
@wl.kernel
def block_coords(out: wl.array(dtype=wl.int32, ndim=4)):
    x = wl.block_idx.x * wl.block_dim.x + wl.thread_idx.x
    y = wl.block_idx.y * wl.block_dim.y + wl.thread_idx.y
    z = wl.block_idx.z * wl.block_dim.z + wl.thread_idx.z
    t = (wl.thread_idx.z * wl.block_dim.y + wl.thread_idx.y) * wl.block_dim.x + wl.thread_idx.x
    b = (wl.block_idx.z * wl.grid_dim.y + wl.block_idx.y) * wl.grid_dim.x + wl.block_idx.x
    out[z, y, x, 0] = t
    out[z, y, x, 1] = b


_COORD_GRID, _COORD_BLOCK = (2, 3, 2), (8, 4, 2)


def _block_coords_inputs(size="small"):
    grid, block = _COORD_GRID, _COORD_BLOCK
    shape = (grid[2] * block[2], grid[1] * block[1], grid[0] * block[0], 2)
    return [np.full(shape, -1, np.int32)]


def _block_coords_ref(out):
    (gx, gy, _), (bx, by, bz) = _COORD_GRID, _COORD_BLOCK
    z, y, x = np.indices(out.shape[:3])
    t = ((z % bz) * by + (y % by)) * bx + (x % bx)
    b = ((z // bz) * gy + (y // by)) * gx + (x // bx)
    return {"out": np.stack([t, b], axis=-1).astype(np.int32)}


# -- early return ------------------------------------------------------------
@wl.kernel
def early_return(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32), n: int):
    i = wl.block_idx.x * wl.block_dim.x + wl.thread_idx.x
    if i >= n:
        return
    v = x[i]
    if v < 0.0:
        out[i] = 0.0
        return  # marker: early_return negative
    out[i] = v * 2.0


def _early_return_inputs(size="small"):
    n = pick(size, 500, 1 << 22)
    g = rng("early_return")
    return [g.standard_normal(n).astype(f32), np.full(n, -7.0, f32), n]


def _early_return_ref(x, out, n):
    return {"out": np.where(x < 0, f32(0.0), x * f32(2.0)).astype(f32)}


def _blocks(n, b):
    """A 1-D explicit launch of blocks of ``b`` threads covering ``n`` (plus a spare block)."""
    return Launch(grid=(-(-n // b) + 1, 1, 1), block=(b, 1, 1))


EXAMPLES = [
    Example("saxpy", saxpy, _saxpy_inputs, lambda a: Launch(dim=len(a[0]), block_dim=128),
            _saxpy_ref, ("y",), description="y = a*x + y, one thread per element"),
    Example("vector_add", vector_add, _vector_add_inputs, lambda a: Launch(dim=len(a[0])),
            lambda a, b, c: {"c": a + b}, ("c",), description="c = a + b"),
    Example("index_2d", index_2d, _index_2d_inputs, lambda a: Launch(dim=a[0].shape),
            _index_2d_ref, ("out", "ids"), description="i, j = wl.tid() over a 2-D array"),
    Example("index_3d", index_3d, _index_3d_inputs, lambda a: Launch(dim=a[0].shape),
            _index_3d_ref, ("out", "ids"), description="i, j, k = wl.tid() over a 3-D array"),
    Example("strided_rows", strided_rows, _strided_rows_inputs,
            lambda a: Launch(dim=a[0].shape[0], block_dim=32), _strided_rows_ref,
            ("scaled", "row_sum"),
            description="transposed, sliced input and strided outputs; a.shape[k]"),
    Example("reversed_view", reversed_view, _reversed_view_inputs,
            lambda a: Launch(dim=a[0].shape[0], block_dim=64), _reversed_view_ref, ("out",),
            description="negative strides (x[::-1]) in and out"),
    Example("grid_stride", grid_stride, _grid_stride_inputs,
            lambda a: Launch(grid=(max(4, min(1024, a[2] // 1024)), 1, 1), block=(64, 1, 1)),
            lambda x, out, n: {"out": x * f32(0.5) + f32(1.0)}, ("out",),
            description="grid-stride while loop with block_idx/block_dim/grid_dim"),
    Example("block_coords", block_coords, _block_coords_inputs,
            lambda a: Launch(grid=_COORD_GRID, block=_COORD_BLOCK), _block_coords_ref,
            ("out",), description="3-D grid and block, thread_idx.y/.z, a 4-D array"),
    Example("early_return", early_return, _early_return_inputs,
            lambda a: _blocks(a[2], 64),
            _early_return_ref, ("out",),
            description="return from a kernel in two places"),
]
