"""The occupancy model against the CUDA driver's own answer, on a real GPU.

``cuOccupancyMaxActiveBlocksPerMultiprocessor`` and
``cuOccupancyMaxPotentialBlockSize`` for kernels assembled by warp_lab's
toolchain, and the device's reported limits against the arch table. Skipped
without an NVIDIA driver and device.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from an_kernels import dot_kernel_ir
from warp_lab.analysis import ARCHS, arch_properties, occupancy, suggest_block_size
from warp_lab.compiler import nvptx, toolchain
from warp_lab.options import CompileOptions

pytestmark = pytest.mark.gpu


def _check(result):
    err, *values = result
    assert int(err) == 0, f"CUDA driver error {err}"
    return values[0] if len(values) == 1 else values


@pytest.fixture(scope="module")
def gpu():
    try:
        from cuda.bindings import driver as cu
        err, = cu.cuInit(0)
        if int(err) != 0:
            pytest.skip(f"cuInit failed: {err}")
    except Exception as exc:  # no driver library: the normal case on CPU machines
        pytest.skip(f"no CUDA driver: {exc}")
    if _check(cu.cuDeviceGetCount()) == 0:
        pytest.skip("no CUDA device")
    dev = _check(cu.cuDeviceGet(0))
    ctx = _check(cu.cuDevicePrimaryCtxRetain(dev))
    _check((cu.cuCtxSetCurrent(ctx)[0], None))
    A = cu.CUdevice_attribute

    def attr(name):
        return _check(cu.cuDeviceGetAttribute(getattr(A, "CU_DEVICE_ATTRIBUTE_" + name), dev))

    props = SimpleNamespace(
        max_threads_per_multiprocessor=attr("MAX_THREADS_PER_MULTIPROCESSOR"),
        max_blocks_per_multiprocessor=attr("MAX_BLOCKS_PER_MULTIPROCESSOR"),
        max_registers_per_multiprocessor=attr("MAX_REGISTERS_PER_MULTIPROCESSOR"),
        max_registers_per_block=attr("MAX_REGISTERS_PER_BLOCK"),
        max_shared_memory_per_multiprocessor=attr("MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"),
        max_shared_memory_per_block=attr("MAX_SHARED_MEMORY_PER_BLOCK"),
        max_shared_memory_per_block_optin=attr("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
        reserved_shared_memory_per_block=attr("RESERVED_SHARED_MEMORY_PER_BLOCK"),
        multiprocessor_count=attr("MULTIPROCESSOR_COUNT"))
    cc = (attr("COMPUTE_CAPABILITY_MAJOR"), attr("COMPUTE_CAPABILITY_MINOR"))
    if cc not in ARCHS:
        pytest.skip(f"compute capability {cc} is not in the table")
    device = SimpleNamespace(compute_capability=cc, properties=props)
    yield SimpleNamespace(cu=cu, device=device, cc=cc)
    cu.cuDevicePrimaryCtxRelease(dev)


def test_device_reports_the_table(gpu):
    table = ARCHS[gpu.cc]
    reported = arch_properties(gpu.device)
    for name in ("max_threads_per_sm", "max_blocks_per_sm", "registers_per_sm",
                 "registers_per_block", "shared_mem_per_sm", "shared_mem_per_block",
                 "shared_mem_per_block_optin", "reserved_shared_mem_per_block"):
        assert getattr(reported, name) == getattr(table, name), name


@pytest.mark.parametrize("n", [2, 40])
def test_driver_occupancy_equals_model(gpu, n):
    cu = gpu.cu
    arch = f"sm_{gpu.cc[0]}{gpu.cc[1]}"
    opts = CompileOptions(arch=arch, lineinfo=False)
    ptx = nvptx.make_ptx(dot_kernel_ir(n), opts, "dot")[1]
    cubin, res, _ = toolchain.make_cubin(ptx, opts, "dot")
    module = _check(cu.cuModuleLoadData(cubin))
    func = _check(cu.cuModuleGetFunction(module, b"dot"))
    try:
        for block in [1, 31, 32, 33, 96, 100, 128, 256, 384, 512, 640, 768, 1024]:
            for dyn in (0, 4096, 20000, 48 * 1024 - res.shared):
                want = _check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(func, block, dyn))
                got = occupancy(res, gpu.device, block, dyn)
                assert got.active_blocks_per_sm == want, (n, block, dyn, got)
        optin = arch_properties(gpu.device).shared_mem_per_block_optin - res.shared
        F = cu.CUfunction_attribute
        _check((cu.cuFuncSetAttribute(
            func, F.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin)[0], None))
        for dyn in (64 * 1024, optin // 2, optin):
            want = _check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(func, 128, dyn))
            got = occupancy(res, gpu.device, 128, dyn, max_dynamic_shared_mem=optin)
            assert got.active_blocks_per_sm == want, (n, dyn, got)
        min_grid, block = _check(cu.cuOccupancyMaxPotentialBlockSize(func, None, 0, 0))
        best = suggest_block_size(res, gpu.device, max_dynamic_shared_mem=optin)
        assert (best.block_size, best.min_grid_size) == (block, min_grid)
    finally:
        cu.cuModuleUnload(module)
