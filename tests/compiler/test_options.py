"""One options record: ``wl.compile(kernel, options=None, **overrides)`` and the variants
``wl.launch`` derives from a compile's own options with ``dataclasses.replace``.

The PTX facts checked here (``.nc`` loads, the register cap ptxas honours, ``.loc`` lines)
are read from the emitted PTX and ptxas's own resource report.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.notebook.magic import BUILTIN_DEFAULTS
from warp_lab.options import (KERNEL_OPTION_DEFAULTS, KERNEL_OPTIONS, CompileOptions,
                              resolve_options)


@wl.kernel
def scale(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    i = wl.tid()
    y[i] = 2.0 * x[i]


@wl.kernel(opt=1, debug=True)
def carried(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    x[i] = x[i] + 1.0


def test_a_given_record_is_used_as_it_is_and_the_kernels_own_options_do_not_apply():
    opts = CompileOptions(arch="sm_80", opt=2, lineinfo=False, read_only_cache=False)
    ck = wl.compile(carried, opts, sass=False)
    assert ck.options == opts                           # not the kernel's opt=1, debug=True
    assert ".loc" not in ck.ptx and ".target sm_80" in ck.ptx
    own = wl.compile(carried, sass=False)
    assert (own.options.opt, own.options.debug) == (1, True)


def test_keyword_overrides_apply_over_a_record_and_over_the_kernels_own():
    base = CompileOptions(arch="sm_80")
    assert wl.compile(scale, base, read_only_cache=False, sass=False).options == \
        dataclasses.replace(base, read_only_cache=False)
    # None for a kernel option is "not set": the record's (or the kernel's) own stays
    assert wl.compile(scale, base, arch=None, opt=None, sass=False).options == base
    assert wl.compile(carried, opt=None, debug=False, sass=False).options == \
        CompileOptions(opt=1, debug=False)


def test_a_variant_is_the_record_with_one_field_replaced():
    ck = wl.compile(scale, arch="sm_75", opt=2, maxrregcount=40, lineinfo=False, sass=False)
    assert "ld.global.nc" in ck.ptx
    var = wl.compile(scale, dataclasses.replace(ck.options, read_only_cache=False), sass=False)
    assert "ld.global.nc" not in var.ptx and "ld.global" in var.ptx
    assert var.resources.registers <= 40 and ".loc" not in var.ptx


def test_wl_launch_variants_keep_every_other_option_of_the_compile():
    """A strided argument makes ``wl.launch`` compile the general-stride variant; it must
    keep the cap, line tables, optimisation level and arch of the kernel it replaces."""
    ck = wl.compile(scale, arch="sm_75", opt=2, maxrregcount=40, lineinfo=False, sass=False)
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, dtype=np.float32)
    res = wl.launch(ck, dim=32, inputs=[x[::2], y], device="sim")
    assert res.compiled.options == dataclasses.replace(ck.options, unit_inner_stride=False)
    np.testing.assert_array_equal(y[:32], 2.0 * x[::2])


def test_bad_overrides_and_records_are_the_callers_errors():
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'fastmath'; did you mean "
                                        r"'fast_math'\?"):
        wl.compile(scale, fastmath=True)
    with pytest.raises(TypeError, match="options must be a warp_lab CompileOptions"):
        wl.compile(scale, "sm_80")
    with pytest.raises(ValueError, match="unsupported architecture 'sm_91'") as info:
        wl.compile(scale, CompileOptions(arch="sm_91"))
    assert info.traceback[-1].name == "compile"
    with pytest.raises(ValueError, match="maxrregcount must be 1..255"):
        wl.compile(scale, CompileOptions(), maxrregcount=0)
    with pytest.raises(ValueError, match="sass must be True or False"):
        wl.compile(scale, sass="yes")


def test_resolved_options_are_plain_python_values():
    """numpy integers and bools pass the check; the record (and the JSON cache key) holds
    Python ints and bools."""
    o = resolve_options(None, {}, {"opt": np.int64(2), "maxrregcount": np.int32(64),
                                   "fast_math": np.bool_(True), "launch_ndim": np.int8(1)})
    assert o == CompileOptions(opt=2, maxrregcount=64, fast_math=True, launch_ndim=1)
    assert [type(v) for v in (o.opt, o.maxrregcount, o.fast_math, o.launch_ndim)] == \
        [int, int, bool, int]


def test_the_defaults_are_the_records_own_and_the_magic_reads_them():
    fresh = CompileOptions()
    assert set(KERNEL_OPTION_DEFAULTS) == set(KERNEL_OPTIONS)
    assert all(KERNEL_OPTION_DEFAULTS[k] == getattr(fresh, k) for k in KERNEL_OPTIONS)
    assert all(BUILTIN_DEFAULTS[k] == getattr(fresh, k) for k in KERNEL_OPTIONS if k != "arch")
    assert BUILTIN_DEFAULTS["arch"] is None               # the magic's: the device's arch
    with pytest.raises(TypeError):
        KERNEL_OPTION_DEFAULTS["opt"] = 0                 # read-only


_SAXPY_CU = """
extern "C" __global__ void saxpy(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def _nvrtc_ok() -> bool:
    try:
        from warp_lab.compiler import nvrtc
        nvrtc.load()
    except Exception:   # noqa: BLE001 - any failure to load means: not installed here
        return False
    return True


@pytest.mark.skipif(not _nvrtc_ok(), reason="libnvrtc not installed")
def test_a_cuda_kernel_takes_the_same_record_and_overrides():
    k = wl.cuda_kernel(_SAXPY_CU, "saxpy")
    ck = wl.compile(k, CompileOptions(arch="sm_80", opt=2, maxrregcount=32), sass=False)
    assert (ck.options.arch, ck.options.opt, ck.options.maxrregcount) == ("sm_80", 2, 32)
    assert ".target sm_80" in ck.ptx and ck.resources.registers <= 32
    # an arch-only variant keeps the rest (what wl.launch asks for with arch=)
    var = wl.compile(k, dataclasses.replace(ck.options, arch="sm_75"), sass=False)
    assert (var.options.arch, var.options.opt, var.options.maxrregcount) == ("sm_75", 2, 32)
    with pytest.raises(TypeError, match="unexpected keyword argument 'maxregcount'"):
        wl.compile(k, maxregcount=32)
    x = np.arange(64, dtype=np.float32)
    y = np.ones(64, dtype=np.float32)
    wl.launch(var, grid=1, block=64, inputs=[x, y, 2.0, 64], device="sim", arch="sm_80")
    np.testing.assert_array_equal(y, 2.0 * np.arange(64, dtype=np.float32) + 1.0)
