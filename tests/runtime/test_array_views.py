"""``a[i]`` of a 2-D (or 3-D) array is a view of row ``i``, as in NumPy and Numba:
``a[i][j]`` is element ``(i, j)``, a row can be passed to a device function and
written through. Checked against NumPy on the simulator, for contiguous and
transposed (strided) arguments."""

import numpy as np

import warp_lab as wl


@wl.func
def _row_sum(r: wl.array(dtype=wl.float32)) -> wl.float32:
    s = wl.float32(0.0)
    for j in range(r.shape[0]):
        s += r[j]
    return s


@wl.kernel
def rows(a: wl.array2d(dtype=wl.float32), b: wl.array3d(dtype=wl.float32),
         out: wl.array2d(dtype=wl.float32), sums: wl.array(dtype=wl.float32),
         tiles: wl.array2d(dtype=wl.float32)):
    i = wl.tid()
    row = a[i]
    sums[i] = _row_sum(row) + _row_sum(b[i, 1])
    o = out[i]                                   # written through the view
    for j in range(o.shape[0]):
        o[j] = row[j] * 2.0 + a[i][j] + b[i][0][j]
    out[i][0] = -1.0
    t = wl.shared_array((4, 8), wl.float32)      # a row of a shared array
    t[i % 4][i % 8] = wl.float32(i)
    wl.syncthreads()
    tiles[i, 0] = t[i % 4][i % 8]


def _inputs(a):
    n = a.shape[0]
    b = np.arange(n * 2 * 6, dtype=np.float32).reshape(n, 2, 6) / 7
    return [a, b, np.zeros((n, 6), np.float32), np.zeros(n, np.float32),
            np.zeros((n, 1), np.float32)]


def _check(args):
    a, b, out, sums, tiles = args
    ref = a * 2 + a + b[:, 0]
    ref[:, 0] = -1
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_allclose(sums, a.sum(1) + b[:, 1].sum(1), rtol=1e-6)
    np.testing.assert_array_equal(tiles[:, 0], np.arange(len(a), dtype=np.float32))


def test_row_views_read_write_and_pass_to_device_functions():
    a = np.random.default_rng(5).standard_normal((4, 6)).astype(np.float32)
    for arg in (a, np.ascontiguousarray(a.T).T):        # C order, then a transposed view
        args = _inputs(arg)
        r = wl.launch(rows, dim=4, block_dim=4, inputs=args, device="sim",
                      checks=("memcheck", "racecheck", "barrier"))
        assert not r.findings
        _check([a] + args[1:])


def test_a_write_through_a_row_marks_only_its_array_written():
    ck = wl.compile(rows, cache=False, sass=False)
    assert ck.written_params == ("out", "sums", "tiles")    # a and b: read-only, .nc loads
    assert "ld.global.nc" in ck.ptx
