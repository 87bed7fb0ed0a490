"""The corpus on a real GPU, compared with numpy and, bit for bit, with the simulator.

Skipped where no GPU is present (see conftest.py); ``tests/gpu/run.sh`` runs
these plus the launch-overhead benchmark on a GPU machine.
"""

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.options import sm_number
from warp_lab.errors import CudaError
from warp_lab.examples import CORPUS, get
from warp_lab.runtime.device import get_device


def _copy(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.gpu
@pytest.mark.parametrize("ex", CORPUS, ids=lambda e: e.name)
def test_corpus_on_gpu_matches_numpy_and_simulator(ex):
    dev = get_device("cuda")
    if sm_number(dev.arch) < ex.min_sm:
        pytest.skip(f"{ex.name} needs sm_{ex.min_sm}; this GPU is {dev.arch}")
    gpu_args = ex.make_inputs()
    sim_args = _copy(gpu_args)
    before = _copy(gpu_args)
    res = wl.launch(ex.kernel, inputs=gpu_args, device="cuda", **ex.launch(gpu_args).kwargs())
    assert res.device.kind == "cuda" and res.compiled.arch == dev.arch
    ex.check(before, gpu_args)
    wl.launch(ex.kernel, inputs=sim_args, device="sim", **ex.launch(sim_args).kwargs())
    for name, k in ex.output_indices().items():
        tol = ex.tolerance_of(name)
        if tol.exact and not tol.unordered:  # .rn work is bit-identical on both
            np.testing.assert_array_equal(gpu_args[k].view(np.uint8), sim_args[k].view(np.uint8),
                                          err_msg=name)


@pytest.mark.gpu
def test_wl_array_stays_on_device_between_launches():
    ex = get("saxpy")
    n = 4096
    x = wl.array(np.ones(n, np.float32))
    y = wl.zeros(n)
    for _ in range(3):
        wl.launch(ex.kernel, dim=n, inputs=[x, y, 1.0], device="cuda")
    np.testing.assert_array_equal(y.numpy(), 3.0)


@pytest.mark.gpu
def test_wl_array_sharing_memory_with_a_numpy_argument_is_brought_up_to_date():
    # y's newer data was on the device only: the launch that copies its memory from the host
    # (a numpy view of it is the other argument) copied the stale host bytes (y = 0 + 0),
    # and y.numpy() then brought back the first launch's device copy (1), losing this one
    ex = get("saxpy")   # y[i] = a * x[i] + y[i]
    n = 256
    y = wl.zeros(n)
    host = y.numpy()   # a view of y's host memory, taken before the launches
    wl.launch(ex.kernel, dim=n, inputs=[wl.array(np.ones(n, np.float32)), y, 1.0],
              device="cuda")
    wl.launch(ex.kernel, dim=n, inputs=[host, y, 1.0], device="cuda")   # y = y + y
    np.testing.assert_array_equal(y.numpy(), 2.0)
    np.testing.assert_array_equal(host, 2.0)


@pytest.mark.gpu
def test_repeat_times_with_events():
    ex = get("saxpy")
    args = ex.make_inputs()
    before = _copy(args)
    res = wl.launch(ex.kernel, inputs=args, device="cuda", repeat=5, **ex.launch(args).kwargs())
    assert len(res.times) == 5 and all(t > 0 for t in res.times)
    assert res.bandwidth and res.bandwidth < 1e13
    # on a GPU the time is the kernel's, measured with CUDA events, and says so
    said = f"5 launches, median {res.time * 1e3:.3f} ms GPU time (CUDA events)"
    assert res.time_text == said and said in repr(res)
    assert "simulat" not in res.time_text
    ex.check(before, args)


@pytest.mark.gpu
def test_too_many_threads_is_a_clear_error():
    ex = get("saxpy")
    x = np.ones(10, np.float32)
    with pytest.raises((CudaError, wl.LaunchError)):
        wl.launch(ex.kernel, grid=(1, 1, 1), block=(2048, 1, 1), inputs=[x, x, 1.0], device="cuda")


@wl.kernel
def _reverse_in_dynamic_shared(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32),
                               lens: wl.array(dtype=wl.int32)):
    buf = wl.dynamic_shared_array(wl.float32, offset=16)
    t = wl.thread_idx.x
    i = wl.block_idx.x * wl.block_dim.x + t
    buf[t] = x[i]
    wl.syncthreads()
    y[i] = buf[wl.block_dim.x - 1 - t]
    if i == 0:
        lens[0] = len(buf)


@pytest.mark.gpu
@pytest.mark.parametrize("shared_mem", [16 + 256 * 4, 64 * 1024])  # the second needs the opt-in
def test_dynamic_shared_memory_on_gpu_matches_numpy(shared_mem):
    x = np.random.default_rng(3).standard_normal(1024).astype(np.float32)
    y, lens = np.zeros_like(x), np.zeros(1, np.int32)
    wl.launch(_reverse_in_dynamic_shared, inputs=[x, y, lens], grid=4, block=256,
              shared_mem=shared_mem, device="cuda")
    np.testing.assert_array_equal(y, x.reshape(4, 256)[:, ::-1].ravel())
    assert lens[0] == (shared_mem - 16) // 4


@wl.kernel
def _static_and_dynamic_shared(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    fixed = wl.shared_array(4096, wl.float32)  # 16 KB static
    buf = wl.dynamic_shared_array(wl.float32)
    t = wl.thread_idx.x
    i = wl.block_idx.x * wl.block_dim.x + t
    fixed[t] = x[i]
    buf[len(buf) - 1 - t] = x[i] * 2.0
    wl.syncthreads()
    y[i] = fixed[wl.block_dim.x - 1 - t] + buf[len(buf) - wl.block_dim.x + t]


@pytest.mark.gpu
def test_static_plus_dynamic_shared_memory_over_48_kb_is_opted_in():
    # 16 KB static + 40 KB dynamic: within every sm_70+ opt-in, over the 48 KB a kernel
    # gets without it (the default dynamic limit is 48 KB less the static bytes)
    if sm_number(get_device("cuda").arch) < 70:
        pytest.skip("no opt-in above 48 KB before sm_70")
    x = np.random.default_rng(5).standard_normal(1024).astype(np.float32)
    y = np.zeros_like(x)
    wl.launch(_static_and_dynamic_shared, inputs=[x, y], grid=4, block=256,
              shared_mem=40 * 1024, device="cuda")
    want = 3.0 * x.reshape(4, 256)[:, ::-1].ravel()  # 1x from the static, 2x the dynamic
    np.testing.assert_allclose(y, want, rtol=1e-6)


@wl.kernel
def _scale4(a: wl.array(dtype=wl.vec4), out: wl.array(dtype=wl.vec4), s: float):
    i = wl.tid()
    out[i] = a[i] * s


@wl.kernel
def _shift_add(src: wl.array(dtype=wl.float32), dst: wl.array(dtype=wl.float32)):
    i = wl.tid()
    dst[i] = dst[i] + src[i] * 2.0


@pytest.mark.gpu
def test_vector_and_read_only_cache_loads_on_gpu_match_numpy():
    a = np.random.default_rng(6).standard_normal((4096, 4)).astype(np.float32)
    out = np.zeros_like(a)
    r = wl.launch(_scale4, dim=4096, inputs=[a, out, 0.5], device="cuda")
    assert "ld.global.nc.v4" in r.compiled.ptx
    np.testing.assert_array_equal(out, a * np.float32(0.5))
    # the same array read (src) and written (dst): the coherent variant, 3 * y
    y = np.random.default_rng(7).standard_normal(4096).astype(np.float32)
    expected = y + 2 * y
    r = wl.launch(_shift_add, dim=4096, inputs=[y, y], device="cuda")
    assert not r.compiled.options.read_only_cache
    np.testing.assert_array_equal(y, expected)


@pytest.mark.gpu
def test_printf_on_gpu_is_captured_like_the_simulators():
    ex = get("hello_printf")
    gpu_args, sim_args = ex.make_inputs(), ex.make_inputs()
    gpu = wl.launch(ex.kernel, inputs=gpu_args, device="cuda", **ex.launch(gpu_args).kwargs())
    sim = wl.launch(ex.kernel, inputs=sim_args, device="sim", **ex.launch(sim_args).kwargs())
    assert sim.printed
    # warps may print in another order on the GPU; each line is the same text
    assert sorted(gpu.printed.splitlines()) == sorted(sim.printed.splitlines())
