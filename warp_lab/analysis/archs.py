"""Per-architecture limits: one table for occupancy, launch checks and the simulator.

Every compute capability from 5.0 to 12.1 that the CUDA 13 toolkit's
``cuda_occupancy.h`` knows has one :class:`ArchProperties` record in
:data:`ARCHS`, but 10.7 (the header's 16 blocks and 328 KB carveout, with no
published threads or shared memory per SM yet). Two kinds of numbers live in a
record:

* what the driver reports as device properties (``cudaDeviceProp``: threads,
  registers and shared memory per SM and per block). Source: the CUDA C++
  Programming Guide, "Technical Specifications per Compute Capability"
  (table "Technical Specifications per Compute Capability" and the shared
  memory capacities in the per-architecture sections, CUDA 12.9 / 13.0).
* what the occupancy calculator hard-codes per architecture (allocation
  granularities, blocks per SM, sub-partitions, carveout sizes, barrier and
  virtual-resource pools). Source: ``cuda_occupancy.h`` from the
  ``nvidia-cuda-runtime`` 13.x wheel, function named in each comment. The test
  suite checks these against the header itself.

``arch_properties`` accepts ``"sm_80"``, ``80``, ``(8, 0)``, an
:class:`ArchProperties` or a device object (anything with a
``compute_capability``), whose reported properties then override the table.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from types import MappingProxyType
from typing import Any, Mapping

from warp_lab.errors import WarpLabError

__all__ = ["AnalysisError", "ArchProperties", "ARCHS", "arch_properties"]

KB = 1024


class AnalysisError(WarpLabError, ValueError):
    """Bad input to the occupancy or register analysis (unknown arch, negative
    sizes, a block size of 0, ...). A ``ValueError`` too, for plain callers."""


@dataclass(frozen=True)
class ArchProperties:
    """The limits of one compute capability that occupancy depends on.

    Device properties (Programming Guide, "Technical Specifications per
    Compute Capability"; the driver reports the same numbers in
    ``cudaDeviceProp``):

    Attributes:
        name: ``"sm_80"``.
        major, minor: the compute capability.
        warp_size: threads per warp (32).
        max_threads_per_block: threads per block (1024).
        max_threads_per_sm: resident threads per SM.
        max_blocks_per_sm: resident blocks per SM (also
            ``cudaOccMaxBlocksPerMultiprocessor`` in ``cuda_occupancy.h``).
        registers_per_sm: 32-bit registers per SM (65536).
        registers_per_block: 32-bit registers one block may use.
        max_registers_per_thread: registers per thread ptxas may assign (255).
        shared_mem_per_sm: bytes of shared memory per SM at the largest
            carveout (``sharedMemPerMultiprocessor``).
        shared_mem_per_block: bytes per block without opt-in (48 KB).
        shared_mem_per_block_optin: bytes per block with
            ``cudaFuncAttributeMaxDynamicSharedMemorySize`` opt-in.
        reserved_shared_mem_per_block: bytes the driver reserves in every
            block (1 KB from 8.0 on, 0 before).

    Calculator constants (``cuda_occupancy.h``):

    Attributes:
        occupancy_register_limit: registers per thread above which the
            calculator gives 0 blocks (``cudaOccRegAllocationMaxPerThread``:
            255 for 5.x/6.x, 256 from 7.0 on).
        register_allocation_granularity: registers per warp are rounded up
            to a multiple of this (``cudaOccRegAllocationGranularity``: 256).
        sub_partitions: SM sub-partitions (``cudaOccSubPartitionsPerMultiprocessor``);
            registers are split evenly between them, and it is the warp
            allocation granularity of the per-block register check.
        shared_mem_allocation_granularity: bytes; shared memory per block is
            rounded up to it (``cudaOccSMemAllocationGranularity``).
        shared_mem_configs: the carveout sizes in bytes the SM can be set to
            (``cudaOccAlignUpShmemSizeVoltaPlus``); empty before 7.0, where
            shared memory is fixed at ``shared_mem_per_sm``.
        partitioned_global_caching: whether the SM can split into halves for
            partitioned global caching
            (``cudaOccPartitionedGlobalCachingModeSupport``: 5.2, 5.3, 6.1, 6.2).
        barriers_per_sm: block barriers an SM holds
            (``cudaOccMaxBlocksPerSMBlockBarrierLimit``: blocks per SM times 1
            or 2); the calculator applies it from 9.0 on.
        virtual_resources_per_sm: ``cudaOccMaxVirtualResourceCountPerSM``
            (128 from 10.0 on, 0 before).
        multiprocessor_count: SMs on a concrete device; None for an arch.

    Launch limits (Guide, the same from 5.0 to 12.x), for launch checks and
    the simulator:

    Attributes:
        max_block_dims: largest block extent in x, y, z (threads).
        max_grid_dims: largest grid extent in x, y, z (blocks).
        constant_memory: bytes of ``__constant__`` memory per device.
        local_memory_per_thread: bytes of local memory per thread.
    """

    name: str
    major: int
    minor: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    shared_mem_per_sm: int
    shared_mem_per_block_optin: int
    shared_mem_allocation_granularity: int
    shared_mem_configs: tuple[int, ...]
    sub_partitions: int
    barriers_per_sm: int
    occupancy_register_limit: int
    registers_per_block: int = 64 * KB
    registers_per_sm: int = 64 * KB
    max_registers_per_thread: int = 255
    register_allocation_granularity: int = 256
    warp_size: int = 32
    max_threads_per_block: int = 1024
    shared_mem_per_block: int = 48 * KB
    reserved_shared_mem_per_block: int = 0
    partitioned_global_caching: bool = False
    virtual_resources_per_sm: int = 0
    multiprocessor_count: int | None = None
    # Guide, same for every capability from 5.0 on: block and grid extents,
    # constant memory, local memory per thread.
    max_block_dims: tuple[int, int, int] = (1024, 1024, 64)
    max_grid_dims: tuple[int, int, int] = (2**31 - 1, 65535, 65535)
    constant_memory: int = 64 * KB
    local_memory_per_thread: int = 512 * KB

    @property
    def compute_capability(self) -> tuple[int, int]:
        """``(major, minor)``."""
        return (self.major, self.minor)

    @property
    def max_warps_per_sm(self) -> int:
        """Resident warps per SM: ``max_threads_per_sm // warp_size``."""
        return self.max_threads_per_sm // self.warp_size

    def to_dict(self) -> dict:
        """The record as JSON-ready plain values."""
        d = asdict(self)
        for name in ("shared_mem_configs", "max_block_dims", "max_grid_dims"):
            d[name] = list(d[name])
        d["max_warps_per_sm"] = self.max_warps_per_sm
        return d


# Carveout sizes, cuda_occupancy.h cudaOccAlignUpShmemSizeVoltaPlus.
_VOLTA_CONFIGS = (0, 8 * KB, 16 * KB, 32 * KB, 64 * KB, 96 * KB)
_TURING_CONFIGS = (32 * KB, 64 * KB)  # no 0 KB: a request of 0 gets 32 KB
_GA10X_CONFIGS = (0, 8 * KB, 16 * KB, 32 * KB, 64 * KB, 100 * KB)  # 8.6, 8.8, 8.9, 12.x
_GA100_CONFIGS = _GA10X_CONFIGS + (132 * KB, 164 * KB)  # 8.0, 8.7
_HOPPER_CONFIGS = _GA100_CONFIGS + (196 * KB, 228 * KB)  # 9.0, 10.0, 10.1, 10.3, 11.0


def _maxwell_pascal(cc: int, shared_per_sm: int, regs_per_block: int, pgc: bool,
                    sub_partitions: int = 4) -> ArchProperties:
    # Guide: 2048 threads and 32 blocks per SM, 48 KB per block and no opt-in
    # (the driver reports sharedMemPerBlockOptin = 48 KB).
    # Header: shared granularity 256 B, register limit 255, barrier pool 2x blocks.
    return ArchProperties(
        name=f"sm_{cc}", major=cc // 10, minor=cc % 10,
        max_threads_per_sm=2048, max_blocks_per_sm=32,
        shared_mem_per_sm=shared_per_sm, shared_mem_per_block_optin=48 * KB,
        shared_mem_allocation_granularity=256, shared_mem_configs=(),
        sub_partitions=sub_partitions, barriers_per_sm=64, occupancy_register_limit=255,
        registers_per_block=regs_per_block, partitioned_global_caching=pgc)


def _volta_plus(cc: int, threads: int, blocks: int, shared_per_sm: int, optin: int,
                configs: tuple[int, ...], barrier_factor: int) -> ArchProperties:
    major = cc // 10
    return ArchProperties(
        name=f"sm_{cc}", major=major, minor=cc % 10,
        max_threads_per_sm=threads, max_blocks_per_sm=blocks,
        shared_mem_per_sm=shared_per_sm, shared_mem_per_block_optin=optin,
        # header: 256 B on 7.x, 128 B from 8.0 on
        shared_mem_allocation_granularity=256 if major == 7 else 128,
        shared_mem_configs=configs, sub_partitions=4,
        barriers_per_sm=blocks * barrier_factor, occupancy_register_limit=256,
        # Guide: "1 KB of shared memory is reserved for system use" from 8.0 on
        reserved_shared_mem_per_block=1 * KB if major >= 8 else 0,
        virtual_resources_per_sm=128 if major >= 10 else 0)


# Threads/blocks per SM, shared memory per SM and per block (opt-in):
# Programming Guide "Technical Specifications per Compute Capability".
# Blocks per SM, carveout sizes and barrier factor: cuda_occupancy.h
# (cudaOccMaxBlocksPerMultiprocessor, cudaOccAlignUpShmemSizeVoltaPlus,
# cudaOccMaxBlocksPerSMBlockBarrierLimit), equal to the Guide where both say.
_TABLE = [
    # Maxwell: 5.0 GM107 64 KB/SM; 5.2 GM20x 96 KB/SM; 5.3 Tegra X1 64 KB/SM
    # and 32 K registers per block (Guide).
    _maxwell_pascal(50, 64 * KB, 64 * KB, pgc=False),
    _maxwell_pascal(52, 96 * KB, 64 * KB, pgc=True),
    _maxwell_pascal(53, 64 * KB, 32 * KB, pgc=True),
    # Pascal: 6.0 GP100 64 KB/SM and 2 sub-partitions (header); 6.1 GP10x 96 KB/SM;
    # 6.2 Tegra X2 64 KB/SM and 32 K registers per block (Guide).
    _maxwell_pascal(60, 64 * KB, 64 * KB, pgc=False, sub_partitions=2),
    _maxwell_pascal(61, 96 * KB, 64 * KB, pgc=True),
    _maxwell_pascal(62, 64 * KB, 32 * KB, pgc=True),
    # Volta 7.0 / Xavier 7.2: 96 KB per SM, 96 KB per block opt-in.
    _volta_plus(70, 2048, 32, 96 * KB, 96 * KB, _VOLTA_CONFIGS, 2),
    _volta_plus(72, 2048, 32, 96 * KB, 96 * KB, _VOLTA_CONFIGS, 2),
    # Turing 7.5: 1024 threads, 16 blocks, 64 KB per SM and per block opt-in.
    _volta_plus(75, 1024, 16, 64 * KB, 64 * KB, _TURING_CONFIGS, 2),
    # Ampere GA100 8.0: 164 KB per SM, 163 KB per block opt-in.
    _volta_plus(80, 2048, 32, 164 * KB, 163 * KB, _GA100_CONFIGS, 2),
    # GA10x 8.6: 1536 threads, 16 blocks, 100 KB per SM, 99 KB per block opt-in.
    _volta_plus(86, 1536, 16, 100 * KB, 99 * KB, _GA10X_CONFIGS, 1),
    # Orin 8.7: 1536 threads, 16 blocks, 164 KB per SM, 163 KB per block opt-in.
    _volta_plus(87, 1536, 16, 164 * KB, 163 * KB, _GA100_CONFIGS, 1),
    # 8.8 (ptxas sm_88 from CUDA 13): as 8.6 (CCCL cuda/__device/arch_traits.h; the
    # header gives it 8.6's 16 blocks, carveouts and barrier pool).
    _volta_plus(88, 1536, 16, 100 * KB, 99 * KB, _GA10X_CONFIGS, 1),
    # Ada 8.9: 1536 threads, 24 blocks, 100 KB per SM, 99 KB opt-in.
    _volta_plus(89, 1536, 24, 100 * KB, 99 * KB, _GA10X_CONFIGS, 1),
    # Hopper 9.0: 2048 threads, 32 blocks, 228 KB per SM, 227 KB opt-in.
    _volta_plus(90, 2048, 32, 228 * KB, 227 * KB, _HOPPER_CONFIGS, 2),
    # Blackwell 10.0 (B200) and 10.3 (B300): as Hopper; barrier pool 2x only on 10.0.
    _volta_plus(100, 2048, 32, 228 * KB, 227 * KB, _HOPPER_CONFIGS, 2),
    # 10.1 is CUDA 12.8/12.9's name for Thor, renamed 11.0 in CUDA 13; the
    # header still knows it (24 blocks). 1536 threads as 11.0.
    _volta_plus(101, 1536, 24, 228 * KB, 227 * KB, _HOPPER_CONFIGS, 1),
    _volta_plus(103, 2048, 32, 228 * KB, 227 * KB, _HOPPER_CONFIGS, 1),
    # Thor 11.0: 1536 threads, 24 blocks, 228 KB per SM, 227 KB opt-in.
    _volta_plus(110, 1536, 24, 228 * KB, 227 * KB, _HOPPER_CONFIGS, 1),
    # Blackwell GB20x 12.0 / DGX Spark 12.1: 1536 threads, 24 blocks,
    # 100 KB per SM, 99 KB opt-in.
    _volta_plus(120, 1536, 24, 100 * KB, 99 * KB, _GA10X_CONFIGS, 1),
    _volta_plus(121, 1536, 24, 100 * KB, 99 * KB, _GA10X_CONFIGS, 1),
]

#: Compute capability ``(major, minor)`` -> :class:`ArchProperties`, 5.0 .. 12.1.
ARCHS: Mapping[tuple[int, int], ArchProperties] = MappingProxyType(
    {a.compute_capability: a for a in _TABLE})

# Device-property attribute names (cuda.core ``DeviceProperties`` and
# cudaDeviceProp spellings) -> ArchProperties field.
_DEVICE_FIELDS = {
    "warp_size": "warp_size", "warpSize": "warp_size",
    "max_threads_per_block": "max_threads_per_block",
    "maxThreadsPerBlock": "max_threads_per_block",
    "max_threads_per_multiprocessor": "max_threads_per_sm",
    "maxThreadsPerMultiProcessor": "max_threads_per_sm",
    "max_blocks_per_multiprocessor": "max_blocks_per_sm",
    "maxBlocksPerMultiProcessor": "max_blocks_per_sm",
    "max_registers_per_multiprocessor": "registers_per_sm",
    "regsPerMultiprocessor": "registers_per_sm",
    "max_registers_per_block": "registers_per_block",
    "regsPerBlock": "registers_per_block",
    "max_shared_memory_per_multiprocessor": "shared_mem_per_sm",
    "sharedMemPerMultiprocessor": "shared_mem_per_sm",
    "max_shared_memory_per_block": "shared_mem_per_block",
    "sharedMemPerBlock": "shared_mem_per_block",
    "max_shared_memory_per_block_optin": "shared_mem_per_block_optin",
    "sharedMemPerBlockOptin": "shared_mem_per_block_optin",
    "reserved_shared_memory_per_block": "reserved_shared_mem_per_block",
    "reservedSharedMemPerBlock": "reserved_shared_mem_per_block",
    "multiprocessor_count": "multiprocessor_count",
    "multiProcessorCount": "multiprocessor_count",
}


def _cc_of(arch: Any) -> tuple[int, int]:
    if isinstance(arch, tuple) and len(arch) == 2 and all(isinstance(x, int) for x in arch):
        return arch
    if isinstance(arch, int) and not isinstance(arch, bool):
        return divmod(arch, 10)
    if isinstance(arch, str):
        text = arch.strip().lower()
        for prefix in ("sm_", "compute_", "sm"):
            if text.startswith(prefix):
                text = text[len(prefix):]
                break
        text = text.rstrip("af")  # sm_90a, sm_100f: same resources
        if "." in text:
            major, _, minor = text.partition(".")
            if major.isdigit() and minor.isdigit():
                return int(major), int(minor)
        elif text.isdigit() and len(text) >= 2:
            return divmod(int(text), 10)
    raise AnalysisError(
        f"cannot read an architecture from {arch!r}; write 'sm_80', 80, (8, 0) or '8.0'")


def arch_properties(arch: Any) -> ArchProperties:
    """The :class:`ArchProperties` of an architecture or device.

    Args:
        arch: ``"sm_80"`` (also ``"sm_90a"``, ``"compute_80"``, ``"8.0"``),
            ``80``, ``(8, 0)``, an :class:`ArchProperties` (returned as is),
            or a device object with a ``compute_capability`` (``(major,
            minor)`` or an object with ``.major``/``.minor``) whose
            attributes, or whose ``.properties`` attributes, named as in
            cuda.core (``max_threads_per_multiprocessor``,
            ``max_shared_memory_per_multiprocessor``, ...) or cudaDeviceProp
            (``sharedMemPerMultiprocessor``, ...) override the table.

    Raises:
        AnalysisError: the argument is not an architecture, or the compute
            capability is not one ``cuda_occupancy.h`` knows (5.0 .. 12.1).
    """
    if isinstance(arch, ArchProperties):
        return arch
    device = None
    if hasattr(arch, "compute_capability"):
        device = arch
        cc = device.compute_capability
        if hasattr(cc, "major"):
            cc = (int(cc.major), int(cc.minor))
        arch = tuple(int(x) for x in cc) if not isinstance(cc, str) else cc
    cc = _cc_of(arch)
    try:
        props = ARCHS[cc]
    except KeyError:
        known = ", ".join(a.name for a in ARCHS.values())
        raise AnalysisError(
            f"no occupancy data for compute capability {cc[0]}.{cc[1]}; known: {known}") from None
    if device is None:
        return props
    overrides = {}
    for source in (device, getattr(device, "properties", None)):
        if source is None:
            continue
        for attr, field_name in _DEVICE_FIELDS.items():
            try:
                value = getattr(source, attr, None)
            except Exception:  # a driver-backed property that cannot be read here
                value = None
            if isinstance(value, int) and not isinstance(value, bool):
                overrides[field_name] = value
    return replace(props, **overrides)
