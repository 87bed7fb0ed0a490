"""Occupancy and register-pressure analysis.

* :mod:`~warp_lab.analysis.archs`: the per-architecture limits table
  (:data:`ARCHS`, :func:`arch_properties`), shared with launch checks and the
  simulator.
* :mod:`~warp_lab.analysis.occupancy`: :func:`occupancy`,
  :func:`occupancy_curve`, :func:`suggest_block_size`,
  :func:`available_dynamic_shared_mem`, equal to the CUDA
  toolkit's ``cuda_occupancy.h``.
* :mod:`~warp_lab.analysis.liveness`: nvdisasm's register life ranges per
  SASS instruction and per Python line.
* :mod:`~warp_lab.analysis.registers`: :func:`register_pressure` of a compiled
  kernel and the ``maxrregcount`` what-if :func:`register_cap_whatif`.

    >>> import warp_lab.analysis as wa
    >>> wa.occupancy(registers=64, arch="sm_80", block_size=256)
    <Occupancy sm_80 block 256: 4 blocks, 32/64 warps per SM (50%), limited by registers>
"""

from warp_lab.analysis.archs import ARCHS, AnalysisError, ArchProperties, arch_properties
from warp_lab.analysis.liveness import (LiveInstruction, live_registers, max_live_per_line,
                                        parse_life_ranges)
from warp_lab.analysis.occupancy import (KernelUsage, Occupancy, SharedAllocation,
                                         SuggestedBlockSize, available_dynamic_shared_mem,
                                         launch_dynamic_shared_optin, occupancy,
                                         occupancy_curve, shared_allocation,
                                         suggest_block_size)
from warp_lab.analysis.registers import (RegisterCap, RegisterPressure, live_registers_per_line,
                                         register_cap_whatif, register_pressure)

__all__ = [
    "ARCHS", "AnalysisError", "ArchProperties", "arch_properties",
    "KernelUsage", "Occupancy", "SuggestedBlockSize", "occupancy", "occupancy_curve",
    "suggest_block_size", "available_dynamic_shared_mem", "launch_dynamic_shared_optin",
    "SharedAllocation", "shared_allocation",
    "LiveInstruction", "parse_life_ranges", "live_registers", "max_live_per_line",
    "RegisterPressure", "RegisterCap", "register_pressure", "live_registers_per_line",
    "register_cap_whatif",
]
