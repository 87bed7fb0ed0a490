"""Adversarial launches on the simulator: misuse gives warp_lab errors, never corrupted data.

Every bad launch must raise :class:`warp_lab.LaunchError` (or another
:class:`warp_lab.WarpLabError`) that names the parameter, never a bare
TypeError/IndexError/OverflowError from inside the runtime; the user's input
arrays must come back unchanged when a launch is refused. The strict xfails
document bugs found by adversarial testing (see each reason).
"""

import numpy as np
import pytest

import warp_lab as wl

from adv_cells import SAXPY, cell_kernel

@pytest.fixture(scope="module")
def saxpy():
    return wl.compile(cell_kernel(SAXPY), arch="sm_90")


def _x():
    return np.arange(8, dtype=np.float32)


BAD_X = [
    ("float16", lambda: _x().astype(np.float16), "dtype float32"),
    ("bool", lambda: _x().astype(bool), "dtype float32"),
    ("structured", lambda: np.zeros(8, dtype=[("a", "f4")]), "dtype float32"),
    ("object", lambda: np.zeros(8, dtype=object), "dtype float32"),
    ("big_endian", lambda: _x().astype(">f4"), "dtype float32"),
    ("two_d", lambda: np.zeros((8, 1), np.float32), "1-D"),
    ("zero_d", lambda: np.array(1.0, np.float32), "parameter 'x'"),
    ("list", lambda: [1.0] * 8, "pass a numpy array"),
    ("none", lambda: None, "pass a numpy array"),
    ("bytearray", lambda: bytearray(32), "pass a numpy array"),
]


@pytest.mark.parametrize("case", BAD_X, ids=[c[0] for c in BAD_X])
def test_bad_array_argument_names_the_parameter(saxpy, case):
    _, make, fragment = case
    y = np.ones(8, np.float32)
    with pytest.raises(wl.LaunchError, match="parameter 'x'") as info:
        wl.launch(saxpy, dim=8, inputs=[make(), y, 2.0], device="sim")
    assert fragment in str(info.value)
    assert (y == 1.0).all()  # refused before anything ran


@pytest.mark.parametrize("value", [None, "2", 1j, np.array(2.0), np.array([2.0])],
                         ids=["none", "str", "complex", "0d", "1elem"])
def test_bad_scalar_argument_names_the_parameter(saxpy, value):
    with pytest.raises(wl.LaunchError, match="parameter 'a'"):
        wl.launch(saxpy, dim=8, inputs=[_x(), np.ones(8, np.float32), value], device="sim")


@pytest.mark.parametrize("kwargs", [
    dict(dim=-1), dict(dim="8"), dict(dim=()), dict(dim=(1, 1, 2, 4)), dict(dim=(2, 4)),
    dict(dim=2 ** 40), dict(dim=8, block_dim=0), dict(dim=8, block_dim=2000),
    dict(dim=8, block_dim=32.0), dict(dim=8, block_dim=None), dict(grid=1),
    dict(dim=8, grid=1, block=8), dict(grid=(-1, 1, 1), block=8), dict(grid=(1, 1, 1, 1), block=8),
    dict(grid=2 ** 31, block=8), dict(dim=8, repeat=0), dict(dim=8, repeat=2.5),
    dict(dim=8, shared_mem=-1), dict(dim=8, device="gpu"), dict(dim=8, device=None),
    dict(dim=8, device="cuda:x"),
], ids=lambda kw: ",".join(f"{k}={v!r}" for k, v in kw.items()))
def test_bad_geometry_or_option_is_a_launch_error(saxpy, kwargs):
    y = np.ones(8, np.float32)
    with pytest.raises(wl.LaunchError):
        wl.launch(saxpy, inputs=[_x(), y, 2.0], **{"device": "sim", **kwargs})
    assert (y == 1.0).all()


def test_broadcast_input_is_not_written_through(saxpy):
    """A zero-stride read-only view must never write into the array it views."""
    src = np.float32([5.0])
    view = np.broadcast_to(src, (8,))
    try:
        wl.launch(saxpy, dim=8, inputs=[_x(), view, 1.0], device="sim")
    except wl.LaunchError:
        pass
    assert src[0] == 5.0


def test_interrupt_leaves_arrays_unchanged():
    """Ctrl-C during a runaway launch stops it cleanly: a marked partial result, arrays untouched."""
    import os
    import signal
    import threading

    kernel = cell_kernel("""
        @wl.kernel
        def spin(x: wl.array(dtype=wl.int32)):
            i = wl.tid()
            s = 0
            for k in range(2000000000):     # finite, but far too long to wait for
                s += x[k & 63]
            x[i] = s
    """)
    ck = wl.compile(kernel, arch="sm_90")
    x = np.zeros(64, np.int32)
    # Python ignores SIGINT when its parent did (a background job of a non-interactive
    # shell, `nohup ... &`): without its handler the signal never arrives, and the test
    # would spin until killed. The budget is a backstop: tens of seconds, then a failure.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(wl.LaunchInterrupted) as info:
            wl.launch(ck, dim=64, inputs=[x], device="sim", max_instructions=4_000_000_000)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    r = info.value.result
    assert [f.kind for f in r.findings] == ["interrupted"]
    assert (x == 0).all()


# -- bugs --------------------------------------------------------------------------------------

def _no_foreign_exception(fn):
    """Run ``fn``; a warp_lab error is fine, any other exception type is the bug."""
    try:
        fn()
    except wl.WarpLabError:
        pass


def test_huge_float_scalar(saxpy):
    _no_foreign_exception(lambda: wl.launch(saxpy, dim=8, inputs=[_x(), _x(), 1e300],
                                            device="sim"))


def test_huge_int_for_float_scalar(saxpy):
    _no_foreign_exception(lambda: wl.launch(saxpy, dim=8, inputs=[_x(), _x(), 10 ** 400],
                                            device="sim"))


def test_numpy_integer_dim(saxpy):
    _no_foreign_exception(lambda: wl.launch(saxpy, dim=np.int64(8), inputs=[_x(), _x(), 1.0],
                                            device="sim"))


def test_float_dim(saxpy):
    _no_foreign_exception(lambda: wl.launch(saxpy, dim=8.0, inputs=[_x(), _x(), 1.0],
                                            device="sim"))


def test_negative_cuda_ordinal():
    _no_foreign_exception(lambda: wl.get_device("cuda:-1"))


def test_inputs_none(saxpy):
    _no_foreign_exception(lambda: wl.launch(saxpy, dim=8, inputs=None, device="sim"))


def test_string_block_dim_is_refused(saxpy):
    with pytest.raises(wl.LaunchError):
        wl.launch(saxpy, dim=8, block_dim="32", inputs=[_x(), _x(), 1.0], device="sim")


def test_read_only_output_is_refused(saxpy):
    y = np.ones(8, np.float32)
    y.setflags(write=False)
    with pytest.raises(wl.LaunchError, match="'y'"):
        wl.launch(saxpy, dim=8, inputs=[_x(), y, 1.0], device="sim")
