"""Devices: the CPU simulator and NVIDIA GPUs found through cuda.core.

``get_device("auto")`` is a GPU when a driver and a usable GPU are present,
else the simulator, and says which and why. Nothing here raises when there is
no driver: discovery failures become the ``reason`` of the fallback.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass

from warp_lab.errors import CudaError, LaunchError

__all__ = ["DeviceInfo", "get_device", "cuda_devices", "SIM_ARCH"]

#: The architecture the simulator compiles for (its PTX is what it executes;
#: any target works, sm_90 matches the default of ``wl.compile``).
SIM_ARCH = "sm_90"


@dataclass(frozen=True)
class DeviceInfo:
    """A device a kernel can run on.

    Attributes:
        kind: ``"sim"`` or ``"cuda"``.
        index: CUDA device ordinal (0 for the simulator).
        name: marketing name (``"NVIDIA H200"``) or ``"warp_lab SIMT simulator"``.
        arch: ``sm_XX`` to compile for.
        sm_count: streaming multiprocessors (None for the simulator).
        registers_per_sm: 32-bit registers per SM.
        shared_per_sm: shared memory per SM, bytes.
        max_threads_per_sm: resident threads per SM.
        max_blocks_per_sm: resident blocks per SM.
        memory_clock_khz: memory clock, kHz.
        bus_width_bits: memory bus width, bits.
        reason: why this device was chosen (for ``device="auto"``).
    """

    kind: str
    index: int
    name: str
    arch: str
    sm_count: int | None = None
    registers_per_sm: int | None = None
    shared_per_sm: int | None = None
    max_threads_per_sm: int | None = None
    max_blocks_per_sm: int | None = None
    memory_clock_khz: int | None = None
    bus_width_bits: int | None = None
    reason: str = ""

    @property
    def peak_bandwidth(self) -> float | None:
        """Theoretical DRAM bandwidth in bytes/s: 2 (double data rate) × clock × bus width / 8.

        (CUDA Programming Guide / bandwidthTest convention.) None when unknown.
        """
        if not self.memory_clock_khz or not self.bus_width_bits:
            return None
        return 2.0 * self.memory_clock_khz * 1e3 * self.bus_width_bits / 8

    @property
    def label(self) -> str:
        return "sim" if self.kind == "sim" else f"cuda:{self.index}"

    def __str__(self) -> str:
        return f"{self.label} ({self.name}, {self.arch})"


SIMULATOR = DeviceInfo("sim", 0, "warp_lab SIMT simulator", SIM_ARCH)


#: the CUDA driver's library on Linux, which cuda.bindings loads through cuda.pathfinder
#: (``load_nvidia_dynamic_lib("cuda")``: a driver library is found only as the system's
#: ``dlopen`` finds it, never in a wheel)
_LINUX_DRIVER = "libcuda.so.1"


def _no_driver_library() -> bool:
    """Whether the CUDA driver's library surely cannot be loaded: on Linux, ``dlopen`` of
    ``libcuda.so.1`` fails, as cuda.pathfinder's would (elsewhere: not known, False).

    Importing cuda.core and cuda.bindings costs 0.2-0.5 s (several seconds on a loaded
    machine) before ``cuInit`` can say there is no driver; this ``dlopen`` takes about a
    millisecond, so a machine without a GPU driver (the simulator's users) does not pay
    for that import in its first cell.
    """
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        ctypes.CDLL(_LINUX_DRIVER)
    except OSError:
        return True
    return False


@functools.lru_cache(maxsize=1)
def cuda_devices() -> tuple[tuple[DeviceInfo, ...], str]:
    """The GPUs cuda.core can see, and why there are none when empty.

    Without a driver library (:func:`_no_driver_library`) the answer is "no NVIDIA driver
    installed" at once, without importing cuda-python.

    Returns:
        ``(devices, reason)``; ``reason`` is ``""`` when at least one was found.
    """
    if _no_driver_library():
        return (), "no NVIDIA driver installed"
    try:
        from cuda.bindings import driver
        from cuda.core import Device
    except Exception as exc:  # cuda-python missing or broken
        return (), f"cuda-python is not importable ({exc})"
    try:
        (err,) = driver.cuInit(0)
        if err != driver.CUresult.CUDA_SUCCESS:
            return (), f"no usable CUDA driver ({err.name})"
        err, count = driver.cuDeviceGetCount()
    except Exception as exc:  # libcuda.so missing
        if type(exc).__name__ == "DynamicLibNotFoundError":  # cuda.pathfinder: no libcuda.so
            return (), "no NVIDIA driver installed"
        return (), f"the CUDA driver could not be loaded ({type(exc).__name__}: {exc})"
    if err != driver.CUresult.CUDA_SUCCESS or not count:
        return (), "the CUDA driver reports no GPU"
    found = []
    for i in range(count):
        try:
            dev = Device(i)
            props = dev.properties
            cc = dev.compute_capability
            found.append(DeviceInfo(
                "cuda", i, dev.name, f"sm_{cc.major}{cc.minor}",
                sm_count=props.multiprocessor_count,
                registers_per_sm=props.max_registers_per_multiprocessor,
                shared_per_sm=props.max_shared_memory_per_multiprocessor,
                max_threads_per_sm=props.max_threads_per_multiprocessor,
                max_blocks_per_sm=props.max_blocks_per_multiprocessor,
                memory_clock_khz=getattr(props, "memory_clock_rate", None),
                bus_width_bits=getattr(props, "global_memory_bus_width", None)))
        except Exception as exc:
            return tuple(found), f"GPU {i} is not usable ({type(exc).__name__}: {exc})"
    return tuple(found), ""


def get_device(spec: str = "auto") -> DeviceInfo:
    """Resolve a device name.

    Args:
        spec: ``"auto"`` (first GPU, else the simulator), ``"sim"``,
            ``"cuda"`` (GPU 0) or ``"cuda:N"``.

    Returns:
        the :class:`DeviceInfo`; for ``"auto"`` its ``reason`` says why.

    Raises:
        CudaError: ``"cuda"``/``"cuda:N"`` asked for and no such usable GPU.
        LaunchError: ``spec`` is not a device name.
    """
    if not isinstance(spec, str):
        raise LaunchError(f"device must be 'auto', 'sim', 'cuda' or 'cuda:N', not {spec!r}")
    if spec == "sim":
        return SIMULATOR
    if spec == "auto":
        devices, why = cuda_devices()
        if devices:
            d = devices[0]
            return DeviceInfo(**{**d.__dict__, "reason": "a CUDA GPU is present"})
        return DeviceInfo(**{**SIMULATOR.__dict__,
                             "reason": f"no usable GPU ({why}); running on the CPU simulator"})
    if spec == "cuda" or spec.startswith("cuda:"):
        number = spec[5:] if ":" in spec else "0"
        if not (number.isascii() and number.isdigit()):  # refuses 'cuda:-1', 'cuda: 1', 'cuda:x'
            raise LaunchError(f"bad device name {spec!r}; use 'cuda:N' with N = 0, 1, ...")
        index = int(number)
        devices, why = cuda_devices()
        if index < len(devices):
            return devices[index]
        raise CudaError("CUDA_ERROR_NO_DEVICE",
                        f"device {spec!r} is not available: {why or f'only {len(devices)} GPU(s)'}; "
                        "use device='sim' (or 'auto') to run on the CPU simulator")
    raise LaunchError(f"device must be 'auto', 'sim', 'cuda' or 'cuda:N', not {spec!r}")
