"""Launch options and scalar ranges: every bad value is a LaunchError before the simulator runs.

The kernel is a real compile (cached) run on the real simulator; each refused
launch must leave the output array untouched.
"""

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.errors import LaunchError
from warp_lab.lang import types as T
from warp_lab.runtime.args import check_arguments
from warp_lab.runtime.launch import launch_geometry


@wl.kernel
def _scale(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), a: float):
    i = wl.tid()
    y[i] = a * x[i]


@wl.kernel
def _scale_vec(y: wl.array(dtype=wl.float32), v: wl.vec3, h: wl.float16):
    i = wl.tid()
    y[i] = v[0] + float(h)


def _inputs():
    return [np.arange(8, dtype=np.float32), np.ones(8, np.float32), 2.0]


def _option_id(v) -> str:
    """A test id of the options: their repr, an object without one of its own (an
    iterator) by its type, so that each xdist worker collects the same ids."""
    if not isinstance(v, dict):
        return ""
    return repr({k: x if type(x).__repr__ is not object.__repr__ else f"<{type(x).__name__}>"
                 for k, x in v.items()})


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(dim=8, max_instructions="5"), "max_instructions"),
    (dict(dim=8, max_instructions=0), "max_instructions"),
    (dict(dim=8, max_instructions=2.5), "max_instructions"),
    (dict(dim=8, checks="memchek"), "unknown checks"),
    (dict(dim=8, checks=("memcheck", 3)), "checks must be"),
    (dict(dim=8, checks=5), "checks must be"),
    (dict(dim=8, shared_mem=2 ** 40), "shared_mem=1099511627776 bytes"),
    (dict(dim=8, shared_mem=228 * 1024), "per block"),
    (dict(dim=8, shared_mem=1.5), "shared_mem must be"),
    (dict(grid=0, block=8), "grid must be a positive int"),
    (dict(grid=(0, 1, 1), block=8), "grid must be a positive int"),
    (dict(grid=1, block=(8, 0)), "block must be a positive int"),
    (dict(dim=8, opt=9), "opt must be 0, 1, 2 or 3"),
    (dict(dim=8, opt=True), "opt must be 0, 1, 2 or 3"),
    (dict(dim=8, fast_math="yes"), "fast_math must be True or False"),
    (dict(dim=8, debug=1j), "debug must be True or False"),
    (dict(dim=8, block_dim="32"), "block_dim must be"),
    (dict(dim=8, block_dim=(32.0,)), "block_dim must be"),
    (dict(dim=8.0), "dim must be"),
    (dict(dim=True), "dim must be"),
    (dict(dim=[8, "1"]), "dim must be"),
    (dict(dim=8, inputs=None), "inputs must be a list"),
    (dict(dim=8, inputs=iter(_inputs())), "inputs must be a list"),
    (dict(dim=8, device="cuda:-1"), "bad device name 'cuda:-1'"),
    (dict(dim=8, device="cuda: 0"), "bad device name"),
], ids=_option_id)
def test_bad_option_is_refused_before_running(kwargs, fragment):
    inputs = kwargs.pop("inputs", _inputs())
    y = inputs[1] if isinstance(inputs, list) else None
    with pytest.raises(LaunchError) as info:
        wl.launch(_scale, inputs=inputs, **{"device": "sim", **kwargs})
    assert fragment in str(info.value)
    if y is not None:
        assert (y == 1.0).all()


def test_numpy_integers_are_accepted_wherever_ints_are():
    x, y, a = _inputs()
    r = wl.launch(_scale, dim=np.int64(8), block_dim=np.int32(4), inputs=[x, y, np.float32(3)],
                  repeat=np.uint8(2), max_instructions=np.int64(10 ** 6), shared_mem=np.int16(0),
                  device="sim")
    assert r.grid == (2, 1, 1) and r.block == (4, 1, 1)
    np.testing.assert_array_equal(y, 3 * x)
    assert launch_geometry(2, dim=(np.int64(3), np.int64(40)), block_dim=64)[2] == (40, 3, 1)


def test_checks_as_one_name_means_that_check():
    x, y, _ = _inputs()
    x = x[:4]  # y[i] = a * x[i] reads past x for i >= 4
    r = wl.launch(_scale, dim=8, inputs=[x, y, 1.0], checks="memcheck", device="sim")
    assert r.sim.findings and all(f.kind == "out_of_bounds" for f in r.sim.findings)
    with pytest.raises(wl.SimulatorError, match="enable memcheck"):  # no checks: a plain fault
        wl.launch(_scale, dim=8, inputs=[x, np.ones(8, np.float32), 1.0], checks=None,
                  device="sim")


def test_dim_zero_is_a_no_op():
    """dim=0 launches one block whose threads all fail the tid() guard: nothing is written."""
    x, y, _ = _inputs()
    r = wl.launch(_scale, dim=0, inputs=[x, y, 5.0], device="sim")
    assert r.launch_dim == (0, 1, 1) and r.grid == (1, 1, 1)
    assert (y == 1.0).all()
    assert not r.sim.findings


def test_shared_mem_at_the_arch_limit_is_accepted():
    x, y, _ = _inputs()
    wl.launch(_scale, dim=8, inputs=[x, y, 1.0], shared_mem=227 * 1024, device="sim")
    np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize("ptype, value", [
    (T.float32, 1e300), (T.float32, 10 ** 400), (T.float32, -3.5e38), (T.float64, 10 ** 400),
    (T.float16, 70000.0), (T.float32, np.float64(1e39)),
])
def test_float_scalar_that_overflows_its_type_is_refused(ptype, value):
    with pytest.raises(LaunchError, match=f"parameter 'a': .* overflows {ptype.name}"):
        check_arguments([("a", ptype)], [value])


@pytest.mark.parametrize("ptype, value, expected", [
    (T.float32, 3.4028235e38, 3.4028235e38),             # float32 max itself
    (T.float32, float("inf"), float("inf")),             # asked for explicitly
    (T.float32, 1e-60, 1e-60),                           # underflow to 0 is not an error
    (T.float16, 65504.0, 65504.0),
    (T.float64, 10 ** 300, 1e300),
])
def test_float_scalar_in_range_is_kept(ptype, value, expected):
    values, _ = check_arguments([("a", ptype)], [value])
    assert values == [expected]


def test_vector_and_half_components_are_range_checked():
    y = np.zeros(4, np.float32)
    with pytest.raises(LaunchError, match="'v\\[1\\]'.*overflows float32"):
        wl.launch(_scale_vec, dim=4, inputs=[y, [1.0, 1e300, 0.0], 0.5], device="sim")
    with pytest.raises(LaunchError, match="'h'.*overflows float16"):
        wl.launch(_scale_vec, dim=4, inputs=[y, [1.0, 0.0, 0.0], 1e6], device="sim")
    with pytest.raises(LaunchError, match="parameter 'v' expects"):
        wl.launch(_scale_vec, dim=4, inputs=[y, [1.0, [2.0, 3.0]], 0.5], device="sim")
    assert (y == 0).all()
    wl.launch(_scale_vec, dim=4, inputs=[y, [1.5, 0.0, 0.0], 0.25], device="sim")
    np.testing.assert_array_equal(y, np.full(4, 1.75, np.float32))


def test_a_device_arch_the_compiler_does_not_know_is_a_launch_error():
    from warp_lab.runtime.launch import prepare_launch

    with pytest.raises(LaunchError, match="the device is sm_110, which warp_lab cannot compile"):
        prepare_launch(_scale, "sm_110", _inputs(), dim=8)


@wl.kernel
def _lane_cols(out: wl.array(dtype=wl.int32, ndim=2)):
    i, j = wl.tid()
    out[i, j] = wl.thread_idx.x


def test_a_block_dim_tuple_is_x_y_the_reverse_of_dims_rows_cols():
    """What the ``launch`` docstring and docs/language.md say: ``block_dim=(32, 8)`` with
    ``dim=(rows, cols)`` is 32 threads along ``cols`` (``thread_idx.x``), 8 along rows."""
    out = np.full((20, 70), -1, np.int32)
    r = wl.launch(_lane_cols, dim=out.shape, inputs=[out], block_dim=(32, 8), device="sim")
    assert r.block == (32, 8, 1) and r.grid == (3, 3, 1)          # ceil(70/32), ceil(20/8)
    np.testing.assert_array_equal(out, np.broadcast_to(np.arange(70) % 32, out.shape))
    assert launch_geometry(2, dim=(20, 70), block_dim=256)[1] == (32, 8, 1)


@wl.kernel
def _register_hungry(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    i = wl.tid()
    acc = wl.local_array(96, wl.float32)   # unrolled into registers: ~120 per thread
    for k in range(96):
        acc[k] = x[(i + k * 7) % 1024] * 1.5 + k
    for r in range(4):
        for k in range(96):
            acc[k] = acc[k] * acc[(k + r) % 96] + 1.0
    s = 0.0
    for k in range(96):
        s += acc[k]
    y[i] = s


def test_a_block_whose_registers_do_not_fit_an_sm_is_refused_as_a_gpu_refuses_it():
    """registers × threads over the 64 K registers a block may use: CUDA's launch fails
    with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, so the simulator and the debugger refuse it
    too (they ran it before), naming the largest block that fits (cuda_occupancy.h's
    register limit, analysis.occupancy)."""
    from warp_lab.analysis import occupancy
    from warp_lab.notebook.debugger import debug

    ck = wl.compile(_register_hungry, arch="sm_90", sass=False)
    regs = ck.resources.registers
    assert regs > 64, regs                        # the premise: 1024 × regs > 65536
    fits = max(b for b in range(32, 1025, 32)
               if occupancy(ck, block_size=b).active_blocks_per_sm)
    x = np.ones(1024, np.float32)
    y = np.zeros(1024, np.float32)
    for run in (wl.launch, debug):
        with pytest.raises(LaunchError) as info:
            run(_register_hungry, grid=1, block=1024, inputs=[x, y], device="sim") \
                if run is wl.launch else run(_register_hungry, grid=1, block=1024, inputs=[x, y])
        msg = str(info.value)
        assert f"({regs} per thread × 1024 threads, allocated per warp)" in msg, msg
        assert "more than the 65,536 a block may use on sm_90" in msg
        assert "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES" in msg
        assert f"launch blocks of at most {fits} threads" in msg
    assert (y == 0).all()
    r = wl.launch(_register_hungry, grid=1024 // fits, block=fits, inputs=[x, y], device="sim")
    assert r.findings == [] and (y != 0).all()
