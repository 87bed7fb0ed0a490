"""What the SIMT engine and the semantic modules it drives share: thread states and
check names.

:mod:`~warp_lab.sim.machine` (the engine) imports the modules that execute instructions
(:mod:`~warp_lab.sim.dispatch`, :mod:`~warp_lab.sim.control`, :mod:`~warp_lab.sim.sync`,
...) and forward progress (:mod:`~warp_lab.sim.progress`); they read a thread's status
from here, so none of them imports the engine.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CHECKS", "RUN", "EXITED", "BARWAIT", "PAD", "WSYNC", "YIELD", "NO_PC"]

#: every check the engine knows (``initcheck``: :mod:`warp_lab.sim.initcheck`)
CHECKS = ("memcheck", "racecheck", "initcheck", "barrier")

# thread status: runnable, exited, waiting at a barrier, padding lane past the block's
# last thread, waiting at a warp-synchronous instruction for the rest of its membermask,
# yielded to other warps (forward progress; runnable again when they cannot run)
RUN, EXITED, BARWAIT, PAD, WSYNC, YIELD = 0, 1, 2, 3, 4, 5
#: the pc of a thread that is not runnable; its next pc is in the engine's ``resume``
NO_PC = np.int32(2**31 - 1)
