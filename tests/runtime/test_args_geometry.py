"""Argument checking and launch geometry: pure host-side logic, no kernel needed."""

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.errors import CudaError, LaunchError
from warp_lab.lang import types as T
from warp_lab.runtime.args import check_arguments, group_regions
from warp_lab.runtime.device import get_device
from warp_lab.runtime.launch import launch_geometry

F32_1D = T.ArrayType(T.float32, 1)
F32_2D = T.ArrayType(T.float32, 2)


def test_dim_1d_rounds_up_to_whole_blocks():
    grid, block, dim = launch_geometry(1, dim=1000, block_dim=256)
    assert block == (256, 1, 1) and grid == (4, 1, 1) and dim == (1000, 1, 1)


def test_dim_2d_maps_fastest_index_to_x():
    grid, block, dim = launch_geometry(2, dim=(100, 70), block_dim=256)
    assert dim == (70, 100, 1)
    assert block == (32, 8, 1)
    assert grid == (3, 13, 1)  # ceil(70/32), ceil(100/8)


def test_explicit_form_sets_extents_to_grid_times_block():
    grid, block, dim = launch_geometry(1, grid=(4, 2), block=(64, 2))
    assert (grid, block, dim) == ((4, 2, 1), (64, 2, 1), (256, 4, 1))


@pytest.mark.parametrize("kwargs, message", [
    (dict(dim=10, grid=1, block=1), "not both"),
    (dict(), "not both or neither"),
    (dict(dim=(4, 4)), r"dim=\(4, 4\) has 2 axes but the kernel.s wl.tid\(\) gives 1 index"),
    (dict(dim=10, block_dim=2048), "block_dim must be 1..1024"),
    (dict(grid=1, block=(32, 32, 2)), "at most 1024"),
    (dict(grid=(1, 70000), block=32), "exceeds"),
    (dict(dim=-3), "non-negative"),
])
def test_bad_geometry(kwargs, message):
    with pytest.raises(LaunchError, match=message):
        launch_geometry(1, **kwargs)


def test_arguments_checked_and_converted():
    x = np.arange(10, dtype=np.float32)
    values, views = check_arguments([("x", F32_1D), ("a", T.float32), ("n", T.int32)],
                                    [x, 2, np.int64(10)])
    assert views[0].shape == (10,) and views[0].strides == (1,)
    assert values[1:] == [2.0, 10]


def test_non_contiguous_views_have_element_strides():
    a = np.zeros((6, 8), dtype=np.float32)
    _, views = check_arguments([("a", F32_2D)], [a[::2, ::-1]])
    v = views[0]
    assert v.shape == (3, 8) and v.strides == (16, -1)
    # element 0 of the reversed view is the last column of row 0
    assert v.element0 == a.ctypes.data + 7 * 4


def test_aliasing_views_share_one_region():
    x = np.zeros(16, dtype=np.float32)
    y = np.zeros(4, dtype=np.float32)
    _, views = check_arguments([("a", F32_1D), ("b", F32_1D), ("c", F32_1D)],
                               [x[::2], x[1::2], y])
    regions = group_regions(views)
    assert len(regions) == 2
    big = next(r for r in regions if len(r.views) == 2)
    assert big.nbytes == 16 * 4


@pytest.mark.parametrize("params, inputs, message", [
    ([("x", F32_1D)], [np.zeros(3, np.float64)], "parameter 'x' expects dtype float32, got an array of dtype float64"),
    ([("x", F32_1D)], [np.zeros((3, 3), np.float32)], "expects a 1-D array, got shape \\(3, 3\\)"),
    ([("x", F32_1D)], [[1.0, 2.0]], "pass a numpy array or a wl.array"),
    ([("n", T.int32)], [2.5], "expects an integer \\(int32\\), got float 2.5; convert explicitly"),
    ([("n", T.int32)], [2**31], "out of range for int32"),
    ([("n", T.uint8)], [-1], "out of range for uint8"),
    ([("s", T.float32)], ["a"], "expects a number"),
    ([("x", F32_1D), ("n", T.int32)], [np.zeros(3, np.float32)], "takes 2 argument\\(s\\) \\(x, n\\), got 1"),
    ([("v", T.vec3)], [(1.0, 2.0)], "expects wl.vec3"),
])
def test_argument_errors_name_the_parameter(params, inputs, message):
    with pytest.raises(LaunchError, match=message):
        check_arguments(params, inputs)


def test_array_too_large_for_int32_indexing():
    # a zero-stride view is huge in extent without allocating memory
    big = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), shape=(2**31,), strides=(0,))
    with pytest.raises(LaunchError, match="too large for int32 indexing"):
        check_arguments([("x", F32_1D)], [big])


def test_vector_arrays_take_a_trailing_component_axis():
    pts = np.zeros((5, 3), dtype=np.float32)
    _, views = check_arguments([("p", T.ArrayType(T.vec3, 1))], [pts])
    assert views[0].shape == (5,) and views[0].strides == (1,)
    with pytest.raises(LaunchError, match="trailing shape"):
        check_arguments([("p", T.ArrayType(T.vec3, 1))], [np.zeros((5, 4), np.float32)])


def test_wl_array_roles():
    assert wl.array(dtype=wl.float32, ndim=2) == T.ArrayType(T.float32, 2)
    a = wl.array([1, 2, 3], dtype=wl.float32)
    assert a.dtype == np.float32 and a.numpy().tolist() == [1.0, 2.0, 3.0]
    assert wl.zeros((2, 3), dtype=wl.vec3).shape == (2, 3, 3)
    assert wl.full(4, 7, dtype=wl.int32).numpy().tolist() == [7] * 4


def test_devices_without_a_gpu():
    auto = get_device("auto")
    if auto.kind == "sim":
        assert "simulator" in auto.reason
        with pytest.raises(CudaError, match="device='sim'"):
            get_device("cuda")
    assert get_device("sim").kind == "sim"
    with pytest.raises(LaunchError):
        get_device("tpu")


def test_wl_array_annotation_with_the_element_type_first():
    assert wl.array(wl.float32) == T.ArrayType(T.float32, 1)
    assert wl.array(wl.vec3, ndim=2) == T.ArrayType(T.vec3, 2)
    assert wl.array(int) == T.ArrayType(T.int32, 1)
    assert wl.array(np.arange(3)).numpy().tolist() == [0, 1, 2]  # data, not a type


@wl.kernel
def _tid_1d(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    x[i] += 1.0


@wl.kernel
def _thread_idx_2d(x: wl.array(dtype=wl.float32)):
    x[wl.thread_idx.y * 16 + wl.thread_idx.x] += 1.0


def test_a_1d_tid_with_a_2d_block_is_refused():
    """block=(16, 16) for ``i = wl.tid()``: the 16 threads of each x share one index (each
    element was incremented 16 times, a silent race on a GPU); dim= already refused it."""
    x = np.zeros(64, np.float32)
    for geometry in ({"grid": (2, 2), "block": (16, 16)}, {"grid": (4, 1, 2), "block": 16}):
        with pytest.raises(LaunchError, match=r"wl.tid\(\) is 1-D .* the same wl.tid\(\)"):
            wl.launch(_tid_1d, inputs=[x], device="sim", **geometry)
    assert not x.any()  # refused before anything ran
    wl.launch(_tid_1d, grid=4, block=16, inputs=[x], device="sim")
    np.testing.assert_array_equal(x, np.ones(64, np.float32))
    # a kernel indexing with thread_idx itself takes any block shape
    y = np.zeros(256, np.float32)
    wl.launch(_thread_idx_2d, grid=1, block=(16, 16), inputs=[y], device="sim")
    np.testing.assert_array_equal(y, np.ones(256, np.float32))


def test_a_1d_tid_with_a_2d_block_dim_tuple_is_refused():
    """dim=64, block_dim=(16, 4) for ``i = wl.tid()``: the 4 threads along y of each x
    shared one index (each element was incremented 4 times), as block=(16, 4) did."""
    x = np.zeros(64, np.float32)
    with pytest.raises(LaunchError, match=r"wl.tid\(\) is 1-D .* block 4 along y .* "
                                          r"give block_dim as an int"):
        wl.launch(_tid_1d, dim=64, block_dim=(16, 4), inputs=[x], device="sim")
    assert not x.any()  # refused before anything ran
    wl.launch(_tid_1d, dim=64, block_dim=(16,), inputs=[x], device="sim")
    np.testing.assert_array_equal(x, np.ones(64, np.float32))
