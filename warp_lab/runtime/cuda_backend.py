"""The GPU back end: load a :class:`CompiledKernel` with cuda-python and launch it.

The cubin is loaded when it was built for the device's exact architecture,
else the PTX (the driver JIT-compiles it). Loaded modules are cached per
device and artifact. Parameters are packed by
:func:`warp_lab.compiler.abi.pack_params` — the same bytes the simulator gets
— and handed to ``cuLaunchKernel`` as one pointer per ``.param`` slot.
Kernel time is measured with CUDA events around each launch. What a kernel's
``printf``/``print`` writes (the driver copies the device's printf buffer to the
process's C-level stdout when the launch is synchronised) is captured into
``LaunchResult.printed``, as the simulator's is, with wurlitzer.

``wl.array`` arguments keep a device copy between launches and are copied
back only when the host reads them (``Array.numpy()``); plain numpy
arguments are copied in and out around each launch, as is a ``wl.array`` whose memory
another argument shares (the array brought up to date from its device copy first). A
Ctrl-C during the copies back is held until they are done
(:func:`~warp_lab.runtime.interrupt.deferred_sigint`).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import io

import numpy as np

from warp_lab.compiler import abi
from warp_lab.errors import CudaError
from warp_lab.runtime.args import group_regions, place_views, written_regions
from warp_lab.runtime.finding_text import cell_text
from warp_lab.runtime.interrupt import deferred_sigint
from warp_lab.runtime.result import LaunchResult

__all__ = ["run", "check", "device_printf", "EXPLANATIONS"]

#: What the common driver errors usually mean (CUDA Driver API, "Error Handling").
EXPLANATIONS = {
    "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES": "too many resources requested for this launch: "
    "usually registers per thread × threads per block exceed the SM's register file; use a "
    "smaller block_dim or cap registers (maxrregcount)",
    "CUDA_ERROR_ILLEGAL_ADDRESS": "the kernel accessed memory outside any allocation; run it "
    "on the simulator (device='sim', checks=('memcheck',)) to see which thread and line",
    "CUDA_ERROR_MISALIGNED_ADDRESS": "a load or store was not aligned to its size; run it on "
    "the simulator with memcheck to find the line",
    "CUDA_ERROR_INVALID_VALUE": "a launch argument is invalid (grid/block size, shared memory)",
    "CUDA_ERROR_OUT_OF_MEMORY": "the GPU has no memory left for the arrays",
    "CUDA_ERROR_NO_BINARY_FOR_GPU": "the kernel was built for another architecture and no PTX "
    "was usable",
    "CUDA_ERROR_UNSUPPORTED_PTX_VERSION": "the driver is older than the PTX ISA version; "
    "update the driver or compile for an older arch",
    "CUDA_ERROR_ASSERT": "a device-side assert failed",
    "CUDA_ERROR_LAUNCH_TIMEOUT": "the kernel ran too long (display watchdog)",
    "CUDA_ERROR_INVALID_PTX": "the driver's JIT rejected the PTX",
}


def check(result_tuple):
    """Raise :class:`CudaError` unless a cuda.bindings call returned CUDA_SUCCESS.

    Args:
        result_tuple: what a ``cuda.bindings.driver`` function returns:
            ``(CUresult, *values)``.

    Returns:
        the values after the status (one value unwrapped, several as a tuple).
    """
    from cuda.bindings import driver

    err, *values = result_tuple
    if err != driver.CUresult.CUDA_SUCCESS:
        name = getattr(err, "name", str(err))
        raise CudaError(name, EXPLANATIONS.get(name, ""))
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


@functools.lru_cache(maxsize=None)
def _context(index: int):
    from cuda.core import Device

    dev = Device(index)
    dev.set_current()
    return dev


@functools.lru_cache(maxsize=128)
def _function(index: int, key: str, arch: str, entry: str, cubin: bytes | None, ptx: str):
    from cuda.bindings import driver
    from cuda.core import ObjectCode

    dev = _context(index)
    if cubin is not None and f"sm_{dev.compute_capability.major}{dev.compute_capability.minor}" == arch:
        code = ObjectCode.from_cubin(cubin)
    else:
        code = ObjectCode.from_ptx(ptx.encode())
    kernel = code.get_kernel(entry)
    return code, driver.CUfunction(int(kernel.handle))


class _DeviceCopy:
    """A device allocation mirroring a :class:`wl.Array`'s host memory."""

    def __init__(self, ptr: int, nbytes: int, index: int):
        self.ptr, self.nbytes, self.index = ptr, nbytes, index
        self.stale = False

    def copy_to_host(self, host: np.ndarray):
        from cuda.bindings import driver

        _context(self.index)
        check(driver.cuMemcpyDtoH(host.ctypes.data, self.ptr, self.nbytes))

    def __del__(self):
        try:
            from cuda.bindings import driver

            driver.cuMemFree(self.ptr)
        except Exception:  # interpreter shutdown: the driver frees it with the context
            pass


def _persistent_owner(region):
    """The wl.Array whose whole contiguous buffer is this region, or None."""
    owners = {id(v.owner): v.owner for v in region.views}
    if len(owners) != 1 or None in owners.values():
        return None
    owner = next(iter(owners.values()))
    host = owner._host_array()
    if not host.flags.c_contiguous or host.ctypes.data != region.lo or host.nbytes != region.nbytes:
        return None
    return owner


@contextlib.contextmanager
def device_printf(ptx: str, into: list):
    """Capture what a launch's device-side ``printf`` writes, for the duration of the block.

    The device writes into a buffer that the driver prints to the process's stdout file
    descriptor when the host synchronises with the launch (CUDA C++ Programming Guide,
    "Formatted Output": at ``cuEventSynchronize``, ``cuStreamSynchronize``, a blocking
    copy, the next launch). In Jupyter that descriptor is the server's terminal, not the
    cell, so the text is read back through a pipe (``wurlitzer.pipes``: it redirects file
    descriptor 1 and flushes C's ``stdout``) and appended to ``into`` as one ``str``.

    Args:
        ptx: the kernel's PTX; without a ``vprintf`` call nothing is redirected.
        into: a list that receives the captured text (also when the block raises).
    """
    if "vprintf" not in ptx:
        yield
        return
    from wurlitzer import pipes

    out = io.StringIO()
    try:
        with pipes(stdout=out, stderr=None):
            yield
    finally:
        into.append(out.getvalue())


#: dynamic shared memory per block a launch may use without opting in (bytes)
_DEFAULT_DYNAMIC_SHARED = 48 * 1024


def run(ck, device, grid, block, launch_dim, values, views, repeat=1, shared_mem=0,
        checks=(), max_instructions=None) -> LaunchResult:
    """Launch ``ck`` on GPU ``device.index``; the back-end half of :func:`warp_lab.launch`.

    Arguments as for :func:`warp_lab.runtime.sim_backend.run` (``checks`` and
    ``max_instructions`` apply to the simulator only).

    Raises:
        CudaError: a driver call failed (with the error name and what it means).
    """
    from cuda.bindings import driver

    _context(device.index)
    _, func = _function(device.index, ck.cache_key or ck.ptx, ck.options.arch, ck.entry, ck.cubin,
                        ck.ptx)
    static = getattr(ck.resources, "shared", 0) or 0
    if shared_mem + static > _DEFAULT_DYNAMIC_SHARED:
        # above 48 KB of static and dynamic shared memory together a kernel must opt in
        # (CUDA Programming Guide, "Shared Memory": the default dynamic limit is 48 KB less
        # the static bytes; cudaFuncAttributeMaxDynamicSharedMemorySize raises it, and
        # analysis.launch_dynamic_shared_optin says so for the occupancy views);
        # launch.check_shared_mem has kept the sum within the arch's opt-in limit
        check(driver.cuFuncSetAttribute(
            func, driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            int(shared_mem)))
    regions = group_regions(views)
    allocations, temporary = {}, []
    for region in regions:
        owner = _persistent_owner(region)
        if owner is None:   # copied from the host: a wl.array's device copy may be newer
            for v in region.views:
                if v.owner is not None:
                    v.owner._sync_to_host()
        copy = owner._device_copy if owner is not None else None
        if copy is not None and (copy.index != device.index or copy.nbytes != region.nbytes):
            copy = None
        if copy is None:
            ptr = int(check(driver.cuMemAlloc(max(region.nbytes, 1))))
            copy = _DeviceCopy(ptr, region.nbytes, device.index)
            copy.stale = True
            if owner is not None:
                owner._attach_device_copy(copy)
            else:
                temporary.append(copy)
        if copy.stale:
            check(driver.cuMemcpyHtoD(copy.ptr, region.lo, region.nbytes))
            copy.stale = False
        allocations[id(region)] = copy

    region_of = {id(v): r for r in regions for v in r.views}
    packed = place_views(values, lambda v: abi.ArrayArg(
        region_of[id(v)].device_address(v, allocations[id(region_of[id(v)])].ptr),
        v.shape, v.strides))
    buf = ctypes.create_string_buffer(abi.pack_params(ck.param_layout, launch_dim, packed))
    pointers = (ctypes.c_void_p * len(ck.param_layout))(
        *[ctypes.addressof(buf) + slot.offset for slot in ck.param_layout])

    stream = check(driver.cuStreamCreate(0))
    start, stop = check(driver.cuEventCreate(0)), check(driver.cuEventCreate(0))
    written = written_regions(regions, ck.written_params)
    snapshots = []
    if repeat > 1:
        for region in written:
            copy = allocations[id(region)]
            snap = int(check(driver.cuMemAlloc(max(region.nbytes, 1))))
            check(driver.cuMemcpyDtoD(snap, copy.ptr, region.nbytes))
            snapshots.append((snap, copy.ptr, region.nbytes))
    times, printed = [], []   # printed: each launch's printf text (the last one is kept)
    try:
        for i in range(repeat + (1 if repeat > 1 else 0)):  # one warm-up launch when timing
            for snap, ptr, n in snapshots:
                check(driver.cuMemcpyDtoDAsync(ptr, snap, n, stream))
            with device_printf(ck.ptx, printed):
                check(driver.cuEventRecord(start, stream))
                check(driver.cuLaunchKernel(func, *grid, *block, shared_mem, stream,
                                            ctypes.addressof(pointers), 0))
                check(driver.cuEventRecord(stop, stream))
                check(driver.cuEventSynchronize(stop))
            if repeat == 1 or i > 0:
                times.append(check(driver.cuEventElapsedTime(start, stop)) / 1e3)
        check(driver.cuStreamSynchronize(stream))
    except CudaError as exc:
        said = cell_text(printed[-1], ck).strip() if printed else ""
        if not said:
            raise
        # a failed assert or --debug bounds check prints its message, then traps
        raise CudaError(exc.name, f"{exc.explanation}; the kernel printed:\n{said}"
                        if exc.explanation else f"the kernel printed:\n{said}") from None
    finally:
        for snap, _, _ in snapshots:
            driver.cuMemFree(snap)
        driver.cuEventDestroy(start)
        driver.cuEventDestroy(stop)
        driver.cuStreamDestroy(stream)

    with deferred_sigint():   # every output array copied back, or (before) none
        for region in written:
            copy = allocations[id(region)]
            owner = _persistent_owner(region)
            if owner is not None:
                owner._mark_device_newer()  # copied back when the host reads it
            elif region.writeable:
                check(driver.cuMemcpyDtoH(region.lo, copy.ptr, region.nbytes))
                for v in region.views:   # the host now has what a device copy lacks
                    if v.owner is not None:
                        v.owner._mark_host_newer()
    temporary.clear()  # frees the per-launch allocations
    return LaunchResult(compiled=ck, device=device, grid=grid, block=block,
                        launch_dim=launch_dim, times=tuple(times),
                        argument_bytes=sum(v.array.nbytes for v in views),
                        printed=cell_text(printed[-1], ck) if printed else "")
