"""numpy long doubles as scalar and vector arguments: taken as the
numbers they are, and refused, never made infinite, where the parameter's type cannot
hold them; ``wl.array``/``wl.full`` data their ``dtype`` cannot hold is refused, as
``wl.launch`` refuses such scalars, instead of numpy's silent wrap, truncation or inf."""

import numpy as np
import pytest

import warp_lab as wl


@wl.kernel
def _a11_scale(y: wl.array(dtype=wl.float64), a: wl.float64, b: wl.float32):
    i = wl.tid()
    y[i] = a + wl.float64(b)


@wl.kernel
def _a11_vec(y: wl.array(dtype=wl.float64), v: wl.vec3d):
    y[wl.tid()] = v[2]


def test_long_double_scalars_are_numbers():
    # was: "parameter 'a' expects a number (float64), got longdouble np.longdouble('2.5')"
    y = np.zeros(4)
    wl.launch(_a11_scale, dim=4, inputs=[y, np.longdouble(2.5), np.longdouble(0.25)],
              device="sim")
    np.testing.assert_array_equal(y, 2.75)


@pytest.mark.parametrize("big, where", [
    ((np.longdouble("1e4000"), 1.0), "parameter 'a'"),
    ((1.0, np.longdouble("1e300")), "parameter 'b'"),
])
def test_long_double_scalars_beyond_the_type_are_refused(big, where):
    y = np.zeros(4)
    with pytest.raises(wl.LaunchError, match=f"{where}: longdouble .* overflows float"):
        wl.launch(_a11_scale, dim=4, inputs=[y, *big], device="sim")
    assert not y.any()


def test_long_double_vector_component_beyond_float64_is_refused():
    # was: the component became inf without a word (float(np.longdouble('1e4000')))
    y = np.zeros(4)
    v = np.array([1, 2, "1e4000"], dtype=np.longdouble)
    if not np.isfinite(v[2]):
        pytest.skip("this platform's long double is float64: 1e4000 is already inf")
    with pytest.raises(wl.LaunchError, match=r"parameter 'v\[2\]': longdouble .* overflows "
                                             r"float64"):
        wl.launch(_a11_vec, dim=4, inputs=[y, v], device="sim")
    wl.launch(_a11_vec, dim=4, inputs=[y, np.array([1, 2, 3], np.longdouble)], device="sim")
    np.testing.assert_array_equal(y, 3.0)


@pytest.mark.parametrize("data, dtype, said", [
    (np.array([1, 2**40]), wl.int32, "element [1] = 1099511627776 is out of range"),  # was 0
    ([[0.5, 1.0], [2.0, 2.7]], wl.int32, "element [0, 0] = 0.5 is not an integer"),  # was 0
    (np.array([3.0, np.nan]), wl.int64, "element [1] = nan is not an integer"),
    ([-1], wl.uint32, "element [0] = -1 is out of range [0, 4294967295]"),
    (np.array([1e300]), wl.float32, "element [0] = 1e+300 overflows to inf"),   # was inf
    (np.array([1 + 2j]), wl.float64, "element [0] = (1+2j) has an imaginary part"),
    ([0, 2], wl.bool_, "element [1] = 2 is not 0 or 1"),
])
def test_wl_array_refuses_data_its_dtype_cannot_hold(data, dtype, said):
    with pytest.raises(ValueError) as err:
        wl.array(data, dtype=dtype)
    assert f"wl.array: {said}" in str(err.value)


@pytest.mark.parametrize("value, dtype, said", [
    (2.7, wl.int32, "2.7 is not an integer"), (-1, wl.uint8, "-1 is out of range [0, 255]"),
    (1e300, wl.float32, "1e+300 overflows to inf"), (float("nan"), wl.int32, "nan is not an"),
])
def test_wl_full_refuses_a_value_its_dtype_cannot_hold(value, dtype, said):
    with pytest.raises(ValueError) as err:
        wl.full(4, value, dtype=dtype)
    assert f"wl.full: {said}" in str(err.value)


@pytest.mark.parametrize("data, dtype, want", [
    (np.array([0.1, -2.5e38]), wl.float32, np.array([0.1, -2.5e38], np.float32)),  # rounding
    (np.array([3.0, -7.0]), wl.int32, np.array([3, -7], np.int32)),   # whole floats
    (np.array([2**31 - 1, -2**31]), wl.int32, np.array([2**31 - 1, -2**31], np.int32)),
    (np.array([1 + 0j, np.inf]), wl.float32, np.array([1, np.inf], np.float32)),
    ([True, False], wl.float32, np.array([1, 0], np.float32)),
    (np.arange(3, dtype=">f4"), wl.float32, np.arange(3, dtype=np.float32)),
])
def test_wl_array_still_converts_what_its_dtype_holds(data, dtype, want):
    got = wl.array(data, dtype=dtype).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert wl.full(2, data[0], dtype=dtype).numpy().tolist() == [want[0]] * 2
