"""``wl.launch(..., arch=)``: the simulator runs the PTX compiled for that arch, and an arch a
GPU cannot run is a LaunchError before anything runs.

Real compiles (ptxas) and the real simulator. ``wl.reduce_add_sync`` exists from sm_80
(``redux.sync``, PTX ISA), so whether a launch compiled for sm_75 or sm_80 shows in whether
it compiles at all; ``.target`` in the PTX says the rest.
"""

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.errors import KernelCompileError, LaunchError
from warp_lab.runtime.device import DeviceInfo
from warp_lab.runtime.launch import check_launch_arch


@wl.kernel
def _warp_sum(x: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.int32)):
    i = wl.tid()
    out[i] = wl.reduce_add_sync(wl.FULL_MASK, x[i])


@wl.kernel(arch="sm_75")
def _warp_sum_75(x: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.int32)):
    i = wl.tid()
    out[i] = wl.reduce_add_sync(wl.FULL_MASK, x[i])


def _inputs():
    return [np.arange(64, dtype=np.int32), np.zeros(64, np.int32)]


def _expected(x):
    return np.repeat(x.reshape(2, 32).sum(axis=1), 32).astype(np.int32)


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_90"])
def test_simulator_runs_the_ptx_of_the_arch_asked_for(arch):
    x, out = _inputs()
    res = wl.launch(_warp_sum, dim=64, inputs=[x, out], device="sim", arch=arch)
    np.testing.assert_array_equal(out, _expected(x))
    assert res.compiled.options.arch == arch and res.device.arch == arch
    assert f".target {arch}" in res.compiled.ptx


def test_an_arch_without_the_instruction_is_the_compile_error_of_that_arch():
    x, out = _inputs()
    with pytest.raises(KernelCompileError, match="sm_80"):
        wl.launch(_warp_sum, dim=64, inputs=[x, out], device="sim", arch="sm_75")
    assert (out == 0).all()


def test_launch_arch_overrides_the_kernels_own():
    x, out = _inputs()
    with pytest.raises(KernelCompileError):   # the kernel's own sm_75, on the simulator
        wl.launch(_warp_sum_75, dim=64, inputs=[x, out], device="sim")
    res = wl.launch(_warp_sum_75, dim=64, inputs=[x, out], device="sim", arch="sm_80")
    assert res.compiled.options.arch == "sm_80"
    np.testing.assert_array_equal(out, _expected(x))


def test_a_compiled_kernel_for_another_arch_is_recompiled():
    ck = wl.compile(_warp_sum, arch="sm_90", sass=False)
    x, out = _inputs()
    res = wl.launch(ck, dim=64, inputs=[x, out], device="sim", arch="sm_80")
    assert res.compiled.options.arch == "sm_80" and ck.options.arch == "sm_90"
    np.testing.assert_array_equal(out, _expected(x))
    same = wl.launch(ck, dim=64, inputs=[x, out], device="sim", arch="sm_90")
    assert same.compiled is ck


@pytest.mark.parametrize("arch, fragment", [
    ("sm_81", "unsupported architecture 'sm_81'"),
    (80, "unsupported architecture 80"),
    ("SM_80", "sm_80"),          # the message lists the names it takes
])
def test_an_unknown_arch_is_refused_before_running(arch, fragment):
    x, out = _inputs()
    with pytest.raises(LaunchError) as info:
        wl.launch(_warp_sum, dim=64, inputs=[x, out], device="sim", arch=arch)
    assert fragment in str(info.value) and "arch=" in str(info.value)
    assert (out == 0).all()


def test_a_gpu_refuses_an_arch_newer_than_itself():
    gpu = DeviceInfo("cuda", 0, "an sm_80 GPU", "sm_80")
    assert check_launch_arch("sm_80", gpu) == "sm_80"
    assert check_launch_arch("sm_75", gpu) == "sm_75"   # its PTX is JIT-compiled for sm_80
    with pytest.raises(LaunchError, match="newer than the device.*sm_80.*Application "
                                          "Compatibility"):
        check_launch_arch("sm_90", gpu)
    sim = DeviceInfo("sim", 0, "simulator", "sm_90")
    assert check_launch_arch("sm_120", sim) == "sm_120"
