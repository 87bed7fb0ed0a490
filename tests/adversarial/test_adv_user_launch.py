"""A new user's wrong arguments to wl.launch: the message says what is wrong with them.

Found by feeding wl.launch what a learner plausibly passes; each refusal must
be a LaunchError naming the parameter and the actual fault, with the arrays
left unchanged.
"""

import numpy as np
import pytest

import warp_lab as wl

from adv_cells import SAXPY, cell_kernel

@pytest.fixture(scope="module")
def saxpy():
    return cell_kernel(SAXPY)


def test_huge_stride_is_named_as_the_stride_not_the_shape(saxpy):
    """8 elements 2**40 bytes apart: the shape is fine, the element stride overflows int32."""
    x = np.lib.stride_tricks.as_strided(np.zeros(2, np.float32), shape=(8,), strides=(2 ** 40,))
    y = np.ones(8, np.float32)
    with pytest.raises(wl.LaunchError, match="parameter 'x': strides") as info:
        wl.launch(saxpy, dim=8, inputs=[x, y, 2.0], device="sim")
    assert "shape (8,) is too large" not in str(info.value)
    assert (y == 1.0).all()


def test_annotation_passed_as_data_says_it_has_no_data(saxpy):
    """wl.array(dtype=...) is the annotation; a learner passing it gets told to allocate."""
    with pytest.raises(wl.LaunchError, match="parameter 'y' got the annotation") as info:
        wl.launch(saxpy, dim=8, inputs=[np.zeros(8, np.float32), wl.array(dtype=wl.float32), 2.0],
                  device="sim")
    assert "wl.zeros" in str(info.value)


def test_strided_and_reversed_views_are_written_in_place(saxpy):
    """Every 4th element and a reversed view: written where numpy says, nothing else touched."""
    base = np.ones(32, np.float32)
    src = np.arange(32, dtype=np.float32)
    wl.launch(saxpy, dim=8, inputs=[src[::4], base[::4], 2.0], device="sim")
    want = np.ones(32, np.float32)
    want[::4] = 2 * src[::4] + 1
    np.testing.assert_array_equal(base, want)
    y = np.ones(8, np.float32)
    wl.launch(saxpy, dim=8, inputs=[src[:8][::-1], y[::-1], 2.0], device="sim")
    np.testing.assert_array_equal(y, 2 * src[:8] + 1)


def test_overlapping_views_alias_like_the_gpu(saxpy):
    """x = w[1:], y = w[:-1]: each thread reads w[i+1] and w[i] before writing w[i]."""
    w = np.arange(9, dtype=np.float32)
    wl.launch(saxpy, dim=8, inputs=[w[1:], w[:-1], 2.0], device="sim")
    # one warp: every load happens before any store (SIMT lockstep), so all reads see the input
    ref = np.arange(9, dtype=np.float32)
    ref[:-1] = 2 * ref[1:] + ref[:-1]
    np.testing.assert_array_equal(w, ref)


@pytest.mark.parametrize("device", ["x", "CUDA", "cuda:-1", None])
def test_array_device_name_is_checked_where_it_is_given(device):
    """wl.zeros(3, device='x') was accepted and kept; the name is now refused at once."""
    with pytest.raises(ValueError, match="device must be 'auto', 'sim', 'cuda' or 'cuda:N'"):
        wl.zeros(3, dtype=wl.float32, device=device)
    assert wl.zeros(3, dtype=wl.float32, device="cuda:1").device == "cuda:1"  # no driver asked


def test_view_of_a_launch_stopped_at_once_draws_without_warnings(saxpy):
    """max_instructions=1 leaves one instruction class: its chart was 0.7 in high and
    matplotlib warned 'constrained_layout not applied' into the notebook."""
    import warnings

    from warp_lab.notebook.results import LaunchView

    y = np.ones(8, np.float32)
    r = wl.launch(saxpy, dim=8, inputs=[np.zeros(8, np.float32), y, 2.0], device="sim",
                  max_instructions=1)
    assert r.partial and (y == 1.0).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        page = LaunchView(r)._repr_mimebundle_()["text/html"]
    assert 'aria-label="instruction mix"' in page   # the inline SVG chart
