"""Occupancy: how many blocks of a kernel fit on one SM, and what stops more.

A faithful Python rendering of the CUDA toolkit's own calculator,
``cuda_occupancy.h`` (``cudaOccMaxActiveBlocksPerMultiprocessor``,
``cudaOccMaxPotentialOccupancyBlockSize`` and
``cudaOccAvailableDynamicSMemPerBlock``), fed with the per-architecture
numbers of :mod:`warp_lab.analysis.archs`. The test suite compiles the header
with g++ and checks this module against it, configuration by configuration.

    >>> from warp_lab.analysis import occupancy
    >>> occ = occupancy(registers=64, arch="sm_80", block_size=256)
    >>> occ.active_blocks_per_sm, occ.occupancy, occ.limiters
    (4, 0.5, ('registers',))
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from warp_lab.analysis.archs import AnalysisError, ArchProperties, arch_properties

__all__ = ["Occupancy", "SuggestedBlockSize", "KernelUsage", "occupancy", "occupancy_curve",
           "suggest_block_size", "available_dynamic_shared_mem", "launch_dynamic_shared_optin",
           "SharedAllocation", "shared_allocation", "FACTOR_NAMES", "factor_list"]

#: occupancy limiting factors (:attr:`Occupancy.limiters`) in the CUDA Occupancy
#: Calculator's words, as every view and ``repr`` names them
FACTOR_NAMES = {"warps": "warp slots", "blocks": "blocks per SM", "registers": "registers",
                "shared_memory": "shared memory", "barriers": "barriers",
                "virtual_resources": "virtual resources"}

INT_MAX = 2**31 - 1  # the header's "no limit from this factor"

_CACHE_CONFIGS = ("none", "shared", "l1", "equal")  # cudaOccCacheConfig
_GC_CONFIGS = ("off", "on", "strict")  # cudaOccPartitionedGCConfig
# cudaOccCacheConfig -> carveout percent (cudaOccSMemPreferenceVoltaPlus)
_CACHE_TO_CARVEOUT = {"l1": 0, "shared": 100, "equal": 50, "none": -1}
# Limiting-factor names, in the order of the header's cudaOccLimitingFactor bits.
FACTORS = ("warps", "registers", "shared_memory", "blocks", "barriers", "virtual_resources")


def _whole(name: str, value, what: str, low: int = 0, high: int | None = None) -> int:
    """``value`` as a Python int in ``low..high`` (a NumPy integer is one).

    Raises:
        AnalysisError: ``"{name} must be {what}, not {value!r}"`` for a bool, a float, a
            string or a number out of range.
    """
    if isinstance(value, np.integer):
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < low \
            or (high is not None and value > high):
        raise AnalysisError(f"{name} must be {what}, not {value!r}")
    return value


@dataclass(frozen=True)
class KernelUsage:
    """What one kernel asks of an SM (``cudaOccFuncAttributes``).

    Attributes:
        registers: registers per thread.
        shared: static shared memory, bytes per block.
        barriers: block barriers used (ptxas "used N barriers").
        max_threads_per_block: the kernel's own block-size limit (launch
            bounds); None for the device's.
        max_dynamic_shared_mem: None for the default 48 KB per-block limit;
            a byte count for a kernel opted in with
            ``cudaFuncAttributeMaxDynamicSharedMemorySize`` (then dynamic
            shared memory above it gives 0 blocks).
        partitioned_gc: partitioned global caching, ``"off"`` (default),
            ``"on"`` (turned off when it would give 0 blocks) or ``"strict"``.
        virtual_resources: virtual resources used (10.0+; 0 = none).
    """

    registers: int
    shared: int = 0
    barriers: int = 0
    max_threads_per_block: int | None = None
    max_dynamic_shared_mem: int | None = None
    partitioned_gc: str = "off"
    virtual_resources: int = 0

    def __post_init__(self):
        # a NumPy integer is stored as a Python int; anything but a whole number is refused
        for name in ("registers", "shared", "barriers", "virtual_resources"):
            object.__setattr__(self, name, _whole(name, getattr(self, name),
                                                  "a non-negative integer"))
        if self.max_threads_per_block is not None:
            object.__setattr__(self, "max_threads_per_block", _whole(
                "max_threads_per_block", self.max_threads_per_block,
                "a positive number of threads", 1))
        if self.max_dynamic_shared_mem is not None:
            object.__setattr__(self, "max_dynamic_shared_mem", _whole(
                "max_dynamic_shared_mem", self.max_dynamic_shared_mem,
                "0..2**31-1 bytes", 0, INT_MAX))
        if not isinstance(self.partitioned_gc, str) or self.partitioned_gc not in _GC_CONFIGS:
            raise AnalysisError(f"partitioned_gc must be one of {_GC_CONFIGS}, "
                                f"not {self.partitioned_gc!r}")


@dataclass(frozen=True)
class Occupancy:
    """The calculator's answer for one kernel, arch and block size.

    Attributes:
        arch: ``"sm_80"``.
        block_size: threads per block.
        registers: registers per thread assumed.
        shared_per_block: static + dynamic shared memory asked for, bytes.
        active_blocks_per_sm: resident blocks per SM (0: cannot launch).
        active_warps_per_sm: resident warps per SM.
        max_warps_per_sm: the SM's warp slots.
        occupancy: ``active_warps_per_sm / max_warps_per_sm`` (0..1).
        limiters: the factors whose limit equals the result (the header's
            ``limitingFactors``, except that it also keeps factors that
            limited before the 9.0+ barrier limit lowered the result), among
            ``"warps"``, ``"blocks"``, ``"registers"``, ``"shared_memory"``,
            ``"barriers"``, ``"virtual_resources"``.
        limits: factor -> blocks per SM that factor alone allows (None: that
            factor sets no limit).
        allocated_registers_per_block: registers reserved for one block
            (after rounding per warp).
        allocated_shared_mem_per_block: bytes reserved for one block (with
            the driver's reserved bytes, rounded up to the granularity;
            :attr:`shared_allocation` says how).
        partitioned_gc: whether partitioned global caching stays on.
        dynamic_shared_mem: the dynamic shared memory per block asked for,
            bytes (part of ``shared_per_block``).
    """

    arch: str
    block_size: int
    registers: int
    shared_per_block: int
    active_blocks_per_sm: int
    active_warps_per_sm: int
    max_warps_per_sm: int
    occupancy: float
    limiters: tuple[str, ...]
    limits: Mapping[str, int | None] = field(default_factory=dict)
    allocated_registers_per_block: int = 0
    allocated_shared_mem_per_block: int = 0
    partitioned_gc: bool = False
    dynamic_shared_mem: int = 0

    def __post_init__(self):
        object.__setattr__(self, "limits", MappingProxyType(dict(self.limits)))

    @property
    def shared_allocation(self) -> "SharedAllocation":
        """How :attr:`allocated_shared_mem_per_block` comes about (:func:`shared_allocation`)."""
        return shared_allocation(self.arch, self.shared_per_block - self.dynamic_shared_mem,
                                 self.dynamic_shared_mem)

    @property
    def limiter(self) -> str:
        """The first limiting factor (``"warps"`` before others), for a one-word summary."""
        return self.limiters[0] if self.limiters else ""

    def to_dict(self) -> dict:
        """JSON-ready values, as the notebook bundle's ``"occupancy"`` entry."""
        return {
            "arch": self.arch, "block_size": self.block_size, "registers": self.registers,
            "shared_per_block": self.shared_per_block,
            "active_blocks_per_sm": self.active_blocks_per_sm,
            "active_warps_per_sm": self.active_warps_per_sm,
            "max_warps_per_sm": self.max_warps_per_sm, "occupancy": self.occupancy,
            "limiter": self.limiter, "limiters": list(self.limiters),
            "limits": dict(self.limits),
            "allocated_registers_per_block": self.allocated_registers_per_block,
            "allocated_shared_mem_per_block": self.allocated_shared_mem_per_block,
            "partitioned_gc": self.partitioned_gc,
            "dynamic_shared_mem": self.dynamic_shared_mem,
        }

    def __repr__(self) -> str:
        return (f"<Occupancy {self.arch} block {self.block_size}: "
                f"{self.active_blocks_per_sm} blocks, {self.active_warps_per_sm}/"
                f"{self.max_warps_per_sm} warps per SM ({self.occupancy:.0%}), "
                f"limited by {factor_list(self.limiters) or 'nothing'}>")


@dataclass(frozen=True)
class SuggestedBlockSize:
    """``cudaOccMaxPotentialOccupancyBlockSize``'s answer.

    Attributes:
        block_size: the smallest-grid block size reaching the best occupancy
            (0: the kernel cannot run).
        blocks_per_sm: resident blocks per SM at that size.
        min_grid_size: blocks to fill every SM (``blocks_per_sm`` times the
            SM count), None when the SM count is unknown (an arch, not a device).
        occupancy: the :class:`Occupancy` at ``block_size`` (None if 0).
    """

    block_size: int
    blocks_per_sm: int
    min_grid_size: int | None
    occupancy: Occupancy | None

    def __repr__(self) -> str:
        if not self.block_size:
            return "<SuggestedBlockSize: the kernel cannot run (no block size fits one SM)>"
        grid = (f"grid of at least {self.min_grid_size} blocks to fill every SM"
                if self.min_grid_size is not None
                else "minimum grid size unknown (an arch, not a device: no SM count)")
        occ = f" ({self.occupancy.occupancy:.0%} occupancy)" if self.occupancy else ""
        return (f"<SuggestedBlockSize: block {self.block_size}, {self.blocks_per_sm} blocks "
                f"per SM{occ}; {grid}>")


def factor_list(factors) -> str:
    """Limiting factors (:attr:`Occupancy.limiters` names) in :data:`FACTOR_NAMES`' words,
    comma-separated; ``""`` for none. An unknown name is shown as it is."""
    return ", ".join(FACTOR_NAMES.get(str(f), str(f)) for f in factors)


def _usage(caller: str, kernel: Any, arch: Any,
           overrides: dict) -> tuple[KernelUsage, ArchProperties]:
    """The kernel's usage (with the ``overrides`` that are not None) and the properties of
    ``arch``, or else of the arch the kernel was compiled for.

    Raises:
        AnalysisError: no resource usage, no arch (both named for ``caller``, the public
            function), an unknown arch.
    """
    overrides = {k: v for k, v in overrides.items() if v is not None}
    compiled_arch = None
    if isinstance(kernel, KernelUsage):
        base = kernel
    elif kernel is None:
        if "registers" not in overrides:
            raise AnalysisError(f"{caller} needs a kernel's resources: pass Resources, a "
                                "CompiledKernel or registers=")
        base = KernelUsage(registers=overrides["registers"])
    else:
        res = kernel
        if hasattr(kernel, "resources") and hasattr(kernel, "options"):  # CompiledKernel
            res, compiled_arch = kernel.resources, kernel.options.arch
            if res is None:
                why = getattr(kernel, "missing", {}).get("resources", "ptxas did not run")
                raise AnalysisError(f"kernel {kernel.name!r} has no resource usage: {why}")
        if not hasattr(res, "registers"):
            raise AnalysisError(f"cannot read resource usage from {type(kernel).__name__}")
        compiled_arch = compiled_arch or getattr(res, "arch", None)
        base = KernelUsage(registers=res.registers, shared=res.shared, barriers=res.barriers)
    usage = replace(base, **overrides) if overrides else base
    if arch is None:
        if compiled_arch is None:
            raise AnalysisError(f"{caller} needs an arch (e.g. arch='sm_80')")
        arch = compiled_arch
    return usage, arch_properties(arch)


@dataclass(frozen=True)
class SharedAllocation:
    """The shared memory one resident block takes from its SM, and where it comes from.

    ``cuda_occupancy.h`` (``cudaOccMaxBlocksPerSMSmemLimit``): a block takes its
    static shared memory (``ptxas -v``'s ``smem``) plus the dynamic shared memory of
    the launch plus the bytes CUDA reserves in every block
    (``cudaDevAttrReservedSharedMemoryPerBlock``: 1 KB from compute capability 8.0 on,
    the CUDA Programming Guide's "1 KB of shared memory is reserved for system use";
    0 before), rounded up to the allocation unit (the header's
    ``sharedMemAllocationUnitSize``: 256 bytes up to 7.x, 128 from 8.0).

    Attributes:
        arch: ``"sm_80"``.
        static: static shared memory per block, bytes.
        dynamic: dynamic shared memory per block, bytes.
        reserved: bytes CUDA reserves per block on ``arch``.
        unit: allocation unit, bytes.
        allocated: ``static + dynamic + reserved`` rounded up to ``unit``.
    """

    arch: str
    static: int
    dynamic: int
    reserved: int
    unit: int
    allocated: int

    @property
    def requested(self) -> int:
        """``static + dynamic + reserved``, bytes (before rounding)."""
        return self.static + self.dynamic + self.reserved

    def describe(self) -> str:
        """One line: ``"2432 bytes = 1296 static + 0 dynamic + 1024 reserved by CUDA per block
        (sm_80+) = 2320, rounded up to the 128-byte allocation unit"``."""
        parts = f"{self.static} static + {self.dynamic} dynamic"
        if self.reserved:
            parts += f" + {self.reserved} reserved by CUDA per block (sm_80+)"
        text = f"{self.allocated} bytes = {parts}"
        if self.allocated != self.requested:
            text += (f" = {self.requested}, rounded up to the {self.unit}-byte "
                     "allocation unit")
        return text


def shared_allocation(arch: Any, static: int, dynamic: int = 0) -> SharedAllocation:
    """The shared memory a block of a kernel takes on ``arch`` (:class:`SharedAllocation`).

    Args:
        arch: anything :func:`~warp_lab.analysis.arch_properties` reads.
        static: static shared memory per block (``Resources.shared``), bytes.
        dynamic: dynamic shared memory per block (``wl.launch(shared_mem=...)``), bytes.

    Raises:
        AnalysisError: unknown arch; a size that is not a whole number of bytes 0..2**31-1.
    """
    props = arch if isinstance(arch, ArchProperties) else arch_properties(arch)
    static = _whole("static shared memory", static, "0..2**31-1 bytes", 0, INT_MAX)
    dynamic = _whole("dynamic shared memory", dynamic, "0..2**31-1 bytes", 0, INT_MAX)
    unit = props.shared_mem_allocation_granularity
    reserved = props.reserved_shared_mem_per_block
    allocated = -(-(static + dynamic + reserved) // unit) * unit
    return SharedAllocation(props.name, static, dynamic, reserved, unit, allocated)


def _align_up_shared(size: int, props: ArchProperties) -> int:
    """The smallest carveout holding ``size`` bytes (cudaOccAlignUpShmemSizeVoltaPlus)."""
    for config in props.shared_mem_configs:
        if size <= config:
            return config
    raise AnalysisError(f"{size} bytes of shared memory exceed every {props.name} carveout")


def _shared_preference(props: ArchProperties, carveout: int | None, cache_config: str) -> int:
    """Shared memory per SM the user's preference asks for, bytes
    (cudaOccSMemPerMultiprocessor)."""
    if props.major < 7:  # Maxwell and Pascal: dedicated shared memory
        return props.shared_mem_per_sm
    preference = -1 if carveout is None else carveout
    if preference == -1:
        preference = _CACHE_TO_CARVEOUT[cache_config]
    if preference == -1:
        size = props.shared_mem_per_sm
    else:
        size = preference * props.shared_mem_per_sm // 100
    return _align_up_shared(size, props)


def _shared_limit_per_block(props: ArchProperties, usage: KernelUsage, smem_per_cta: int) -> int:
    """Bytes one block may hold (cudaOccSMemPerBlock)."""
    limit = props.shared_mem_per_block
    if props.major >= 7 and usage.max_dynamic_shared_mem is not None and \
            smem_per_cta > props.shared_mem_per_block:
        limit = props.shared_mem_per_block_optin
    if props.major >= 8:  # the driver's reserved bytes come on top
        limit += props.reserved_shared_mem_per_block
    return limit


def _warps_limit(props, gc_on: bool, block_size: int) -> int:
    """cudaOccMaxBlocksPerSMWarpsLimit."""
    if block_size > props.max_threads_per_block:
        return 0
    warps_per_block = -(-block_size // props.warp_size)
    if gc_on:  # a block stays in one half SM, with half the warp slots
        return (props.max_warps_per_sm // 2 // warps_per_block) * 2
    return props.max_warps_per_sm // warps_per_block


def _registers_limit(props, usage, gc: str, block_size: int, sub_partitions: int):
    """cudaOccMaxBlocksPerSMRegsLimit -> (blocks, gc config after, registers per block)."""
    warps_per_block = -(-block_size // props.warp_size)
    gran = props.register_allocation_granularity
    per_warp = -(-usage.registers * props.warp_size // gran) * gran
    per_block = per_warp * warps_per_block
    # the hardware check assumes every sub-partition gets the block's warps
    assumed = per_warp * (-(-warps_per_block // sub_partitions) * sub_partitions)
    if (props.registers_per_block < assumed or props.registers_per_block < per_block
            or usage.registers > props.occupancy_register_limit):
        return 0, gc, per_block
    if per_warp == 0:
        return INT_MAX, gc, per_block
    warps_per_sub = props.registers_per_sm // sub_partitions // per_warp
    blocks = 0
    if gc != "off":  # a block stays in one half SM, with half the sub-partitions
        blocks = (warps_per_sub * (sub_partitions // 2) // warps_per_block) * 2
    if blocks == 0 and gc != "strict":
        gc = "off"
        blocks = warps_per_sub * sub_partitions // warps_per_block
    return blocks, gc, per_block


def _shared_limit(props, usage, block_size, dynamic, carveout, cache_config):
    """cudaOccMaxBlocksPerSMSmemLimit -> (blocks, allocated bytes per block)."""
    preference = _shared_preference(props, carveout, cache_config)
    static = usage.shared + props.reserved_shared_mem_per_block
    allocated = shared_allocation(props, usage.shared, dynamic).allocated
    max_dynamic = usage.max_dynamic_shared_mem or 0
    exceeded = usage.max_dynamic_shared_mem is not None and dynamic > max_dynamic
    if allocated > _shared_limit_per_block(props, usage, static + max_dynamic):
        exceeded = True
    if exceeded:
        return 0, allocated
    if preference >= allocated:
        per_sm = preference
    elif props.major >= 7:  # the carveout grows to hold one block
        per_sm = _align_up_shared(allocated, props)
    else:
        per_sm = props.shared_mem_per_sm
    return (per_sm // allocated if allocated > 0 else INT_MAX), allocated


def _barrier_limit(props, usage) -> int:
    """cudaOccMaxBlocksPerSMBlockBarrierLimit, applied from 9.0 on."""
    if props.major >= 9 and usage.barriers > 0:
        return props.barriers_per_sm // usage.barriers
    return INT_MAX


def _virtual_limit(props, usage) -> int:
    """cudaOccMaxBlocksPerSMVirtualResource."""
    if props.virtual_resources_per_sm <= 0 or usage.virtual_resources <= 0:
        return INT_MAX
    return props.virtual_resources_per_sm // usage.virtual_resources


def _check_inputs(block_size, dynamic_shared_mem, carveout, cache_config) -> tuple[int, int]:
    """The checked ``(block_size, dynamic_shared_mem)`` as Python ints (a NumPy integer,
    ``np.int64(128)``, is one: it was refused as 'not a positive number of threads').

    Raises:
        AnalysisError: a size that is not a whole number in range, a carveout that is not
            -1 (the default) .. 100 percent or None, an unknown ``cache_config``.
    """
    block_size = _whole("block_size", block_size, "a positive number of threads", 1)
    dynamic_shared_mem = _whole("dynamic_shared_mem", dynamic_shared_mem, "0..2**31-1 bytes",
                                0, INT_MAX)
    if carveout is not None:
        _whole("carveout", carveout, "a percentage 0..100 or None", -1, 100)
    if not isinstance(cache_config, str) or cache_config not in _CACHE_CONFIGS:
        raise AnalysisError(f"cache_config must be one of {_CACHE_CONFIGS}, not {cache_config!r}")
    return block_size, dynamic_shared_mem


def occupancy(kernel: Any = None, arch: Any = None, block_size: int = 256,
              dynamic_shared_mem: int = 0, carveout: int | None = None, *,
              registers: int | None = None, shared: int | None = None,
              barriers: int | None = None, max_dynamic_shared_mem: int | None = None,
              cache_config: str = "none") -> Occupancy:
    """Resident blocks and warps per SM, as ``cudaOccMaxActiveBlocksPerMultiprocessor``.

    Args:
        kernel: a :class:`~warp_lab.compiler.artifact.CompiledKernel` (its
            ``resources`` and ``options.arch``), a
            :class:`~warp_lab.compiler.artifact.Resources`, a
            :class:`KernelUsage`, or None with ``registers=`` (and
            ``shared=``, ``barriers=``) given.
        arch: anything :func:`~warp_lab.analysis.arch_properties` reads
            (``"sm_80"``, ``80``, ``(8, 0)``, a device); defaults to the
            arch the kernel was compiled for.
        block_size: threads per block (1..; above the arch's 1024 gives 0 blocks).
        dynamic_shared_mem: dynamic shared memory per block, bytes.
        carveout: shared-memory carveout preference in percent of the
            largest (``cudaFuncAttributePreferredSharedMemoryCarveout``);
            None for the driver's default. Ignored before 7.0.
        registers, shared, barriers: override or give the kernel's
            registers per thread, static shared bytes per block and block
            barriers.
        max_dynamic_shared_mem: the kernel's opt-in dynamic shared memory
            limit in bytes (``cudaFuncAttributeMaxDynamicSharedMemorySize``);
            None (default) for no opt-in, where a block gets at most 48 KB.
        cache_config: ``"none"``, ``"shared"``, ``"l1"`` or ``"equal"``
            (``cudaFuncSetCacheConfig``); 7.0+ maps it to a carveout when
            ``carveout`` is None.

    Returns:
        An :class:`Occupancy`; ``active_blocks_per_sm == 0`` means the
        configuration cannot launch (too many threads, registers or bytes).

    Raises:
        AnalysisError: unknown arch, no resource usage, bad sizes.
    """
    usage, props = _usage("occupancy", kernel, arch, dict(
        registers=registers, shared=shared, barriers=barriers,
        max_dynamic_shared_mem=max_dynamic_shared_mem))
    block_size, dynamic_shared_mem = _check_inputs(block_size, dynamic_shared_mem, carveout,
                                                   cache_config)
    return _occupancy(props, usage, block_size, dynamic_shared_mem, carveout, cache_config)


def _occupancy(props: ArchProperties, usage: KernelUsage, block_size: int, dynamic: int,
               carveout: int | None, cache_config: str) -> Occupancy:
    gc = usage.partitioned_gc if props.partitioned_global_caching else "off"
    regs, gc, regs_per_block = _registers_limit(props, usage, gc, block_size, props.sub_partitions)
    if props.compute_capability == (6, 0) and regs:
        # GP100 has 2 sub-partitions, GP10x 4: the header refuses on 6.0
        # what would not fit on GP10x, for compatibility within Pascal.
        if _registers_limit(props, usage, gc, block_size, 4)[0] == 0:
            regs = 0
    limits = {
        "warps": _warps_limit(props, gc != "off", block_size),
        "registers": regs,
        "shared_memory": 0,
        "blocks": props.max_blocks_per_sm,
        "barriers": INT_MAX,
        "virtual_resources": _virtual_limit(props, usage),
    }
    limits["shared_memory"], smem_per_block = _shared_limit(
        props, usage, block_size, dynamic, carveout, cache_config)
    blocks = min(limits[f] for f in ("registers", "shared_memory", "warps", "blocks",
                                     "virtual_resources"))
    # From 9.0 the header applies the barrier pool after the other factors.
    limits["barriers"] = _barrier_limit(props, usage)
    blocks = min(blocks, limits["barriers"])
    # The header's bit field also keeps factors that limited before the
    # barrier limit lowered the result; warp_lab names only the factors whose
    # limit equals the result.
    limiters = [f for f in FACTORS if limits[f] == blocks]
    warps_per_block = -(-block_size // props.warp_size)
    warps = blocks * warps_per_block
    return Occupancy(
        arch=props.name, block_size=block_size, registers=usage.registers,
        shared_per_block=usage.shared + dynamic, active_blocks_per_sm=blocks,
        active_warps_per_sm=warps, max_warps_per_sm=props.max_warps_per_sm,
        occupancy=warps / props.max_warps_per_sm,
        limiters=tuple(limiters),
        limits={f: (None if v == INT_MAX else v) for f, v in limits.items()},
        allocated_registers_per_block=regs_per_block,
        allocated_shared_mem_per_block=smem_per_block, partitioned_gc=gc != "off",
        dynamic_shared_mem=dynamic)


def occupancy_curve(kernel: Any = None, arch: Any = None,
                    block_sizes: Iterable[int] = range(32, 1025, 32),
                    dynamic_shared_mem: int | Callable[[int], int] = 0,
                    carveout: int | None = None, **usage) -> list[Occupancy]:
    """:func:`occupancy` at each block size (default 32, 64, ..., 1024).

    ``dynamic_shared_mem`` may be a function of the block size (bytes), as
    for a kernel whose shared buffer grows with the block. Other arguments
    as for :func:`occupancy`.

    Raises:
        AnalysisError: as :func:`occupancy`; ``block_sizes`` is not a sequence of sizes.
    """
    try:
        sizes = list(block_sizes)
    except TypeError:
        raise AnalysisError(f"block_sizes must be a sequence of block sizes (threads), "
                            f"not {block_sizes!r}") from None
    return [occupancy(kernel, arch, b,
                      dynamic_shared_mem(b) if callable(dynamic_shared_mem) else dynamic_shared_mem,
                      carveout, **usage) for b in sizes]


def suggest_block_size(kernel: Any = None, arch: Any = None, dynamic_shared_mem:
                       int | Callable[[int], int] = 0, carveout: int | None = None, *,
                       max_threads_per_block: int | None = None, registers: int | None = None,
                       shared: int | None = None, barriers: int | None = None,
                       max_dynamic_shared_mem: int | None = None,
                       cache_config: str = "none") -> SuggestedBlockSize:
    """The block size with the most resident threads per SM, as
    ``cudaOccMaxPotentialOccupancyBlockSize`` (and its ``VariableSMem`` form).

    Tries multiples of the warp size from the largest allowed block down and
    keeps the first that reaches the highest ``block_size * blocks``; stops at
    once when that fills the SM.

    Args:
        kernel, arch, carveout, registers, shared, barriers,
        max_dynamic_shared_mem, cache_config:
            as for :func:`occupancy`. ``arch`` may be a device with a
            ``multiprocessor_count`` to get ``min_grid_size``.
        dynamic_shared_mem: bytes per block, or a function block size -> bytes.
        max_threads_per_block: the kernel's own limit (launch bounds);
            default the ``KernelUsage``'s, else the arch's 1024.

    Raises:
        AnalysisError: as :func:`occupancy`.
    """
    usage, props = _usage("suggest_block_size", kernel, arch, dict(
        registers=registers, shared=shared, barriers=barriers,
        max_dynamic_shared_mem=max_dynamic_shared_mem))
    limit = props.max_threads_per_block
    if max_threads_per_block is None:
        max_threads_per_block = usage.max_threads_per_block
    if max_threads_per_block is not None:
        limit = min(limit, _whole("max_threads_per_block", max_threads_per_block,
                                  "a positive number of threads", 1))
    gran = props.warp_size
    best = (0, 0, 0)  # threads, block size, blocks
    best_occ = None
    for aligned in range(-(-limit // gran) * gran, 0, -gran):
        size = min(limit, aligned)
        dyn = dynamic_shared_mem(size) if callable(dynamic_shared_mem) else dynamic_shared_mem
        size, dyn = _check_inputs(size, dyn, carveout, cache_config)
        occ = _occupancy(props, usage, size, dyn, carveout, cache_config)
        threads = size * occ.active_blocks_per_sm
        if threads > best[0]:
            best, best_occ = (threads, size, occ.active_blocks_per_sm), occ
        if best[0] == props.max_threads_per_sm:
            break
    count = props.multiprocessor_count
    return SuggestedBlockSize(block_size=best[1], blocks_per_sm=best[2],
                              min_grid_size=best[2] * count if count else None,
                              occupancy=best_occ)


def launch_dynamic_shared_optin(arch: Any, dynamic_shared_mem: int,
                                static_shared_mem: int = 0) -> int | None:
    """The ``max_dynamic_shared_mem`` of a kernel ``wl.launch`` runs with this much dynamic
    shared memory: the dynamic bytes themselves where the block's static and dynamic shared
    memory together exceed the 48 KB default, else None (no opt-in).

    Without opting in, a kernel may use at most 48 KB of shared memory per block, static
    and dynamic together: the driver's default dynamic limit
    (``cudaFuncAttributes.maxDynamicSharedSizeBytes``) is 48 KB less the static bytes, and
    more fails the launch (CUDA Programming Guide, "Shared Memory";
    ``cuda_occupancy.h`` reads a ``cudaFuncAttributes`` so: a kernel with 16 KB static and
    40 KB dynamic gets 0 blocks). Above it a kernel opts in with
    ``cudaFuncAttributeMaxDynamicSharedMemorySize``; warp_lab's CUDA back end does so for
    every launch that needs it, so the occupancy of such a launch is :func:`occupancy`
    with ``max_dynamic_shared_mem`` set to this.

    Args:
        arch: anything :func:`~warp_lab.analysis.arch_properties` reads.
        dynamic_shared_mem: dynamic shared memory per block, bytes.
        static_shared_mem: the kernel's static shared memory per block
            (``Resources.shared``), bytes; default 0.

    Raises:
        AnalysisError: an unknown arch; a size that is not a whole number of bytes.
    """
    props = arch_properties(arch)
    dynamic_shared_mem = _whole("dynamic_shared_mem", dynamic_shared_mem, "0..2**31-1 bytes",
                                0, INT_MAX)
    static_shared_mem = _whole("static_shared_mem", static_shared_mem, "0..2**31-1 bytes",
                               0, INT_MAX)
    needs = static_shared_mem + dynamic_shared_mem > props.shared_mem_per_block
    return dynamic_shared_mem if needs else None


def available_dynamic_shared_mem(kernel: Any = None, arch: Any = None, num_blocks: int = 1,
                                 block_size: int = 256, carveout: int | None = None, *,
                                 registers: int | None = None, shared: int | None = None,
                                 barriers: int | None = None,
                                 max_dynamic_shared_mem: int | None = None,
                                 cache_config: str = "none") -> int:
    """Dynamic shared memory a block may use so that ``num_blocks`` blocks fit
    on one SM, as ``cudaOccAvailableDynamicSMemPerBlock``.

    Args:
        kernel, arch, carveout, registers, shared, barriers, cache_config:
            as for :func:`occupancy`.
        num_blocks: resident blocks per SM wanted (1..).
        block_size: threads per block.
        max_dynamic_shared_mem: the kernel's dynamic shared memory limit
            (``cudaFuncAttributeMaxDynamicSharedMemorySize``); None for the
            driver's default, 48 KB minus the static shared memory.

    Returns:
        bytes of dynamic shared memory per block. Where the header's
        unsigned arithmetic would wrap below zero (a carveout too small for
        ``num_blocks`` blocks of the static size), 0.

    Raises:
        AnalysisError: as :func:`occupancy`, and when fewer than
            ``num_blocks`` blocks fit even without dynamic shared memory.
    """
    usage, props = _usage("available_dynamic_shared_mem", kernel, arch, dict(
        registers=registers, shared=shared, barriers=barriers,
        max_dynamic_shared_mem=max_dynamic_shared_mem))
    num_blocks = _whole("num_blocks", num_blocks, "a positive integer", 1)
    block_size, _ = _check_inputs(block_size, 0, carveout, cache_config)
    if usage.max_dynamic_shared_mem is None:  # cudaFuncAttributes' default limit
        usage = replace(usage, max_dynamic_shared_mem=max(
            0, props.shared_mem_per_block - usage.shared))
    occ = _occupancy(props, usage, block_size, 0, carveout, cache_config)
    if occ.active_blocks_per_sm < num_blocks:
        raise AnalysisError(f"only {occ.active_blocks_per_sm} blocks of {block_size} threads "
                            f"fit on a {props.name} SM (limited by {factor_list(occ.limiters)}), "
                            f"not {num_blocks}")
    limit = _shared_limit_per_block(props, usage, props.shared_mem_per_sm)
    if num_blocks == 1:  # one block may take the largest carveout
        per_sm = limit
    else:
        per_sm = _shared_preference(props, carveout, cache_config)
        if per_sm == 0:  # a carveout of 0 still gives the smallest nonzero size
            per_sm = _align_up_shared(1, props)
    gran = props.shared_mem_allocation_granularity
    available = min(per_sm // num_blocks // gran * gran, limit)
    available -= usage.shared
    if props.major >= 8:
        available -= props.reserved_shared_mem_per_block
    return max(0, min(available, usage.max_dynamic_shared_mem))
