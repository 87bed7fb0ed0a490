"""numpy long doubles as scalar and vector arguments (adversarial pass 11): taken as the
numbers they are, and refused, never made infinite, where the parameter's type cannot
hold them."""

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
