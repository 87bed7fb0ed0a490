"""Occupancy and register-pressure analysis.

* :mod:`~warp_lab.analysis.archs`: the per-architecture limits table
  (:data:`ARCHS`, :func:`arch_properties`), shared with launch checks and the
  simulator.
* :mod:`~warp_lab.analysis.occupancy`: :func:`occupancy`,
  :func:`occupancy_curve`, :func:`suggest_block_size`, equal to the CUDA
  toolkit's ``cuda_occupancy.h``.
"""

from warp_lab.analysis.archs import ARCHS, AnalysisError, ArchProperties, arch_properties
from warp_lab.analysis.occupancy import (KernelUsage, Occupancy, SuggestedBlockSize, occupancy,
                                         occupancy_curve, suggest_block_size)

__all__ = ["ARCHS", "AnalysisError", "ArchProperties", "arch_properties", "KernelUsage",
           "Occupancy", "SuggestedBlockSize", "occupancy", "occupancy_curve",
           "suggest_block_size"]
