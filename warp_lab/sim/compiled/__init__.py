"""The simulator's compiled tier: a kernel's PTX translated once into host code.

    from warp_lab.sim import compiled
    why = compiled.why_not(mod, "saxpy", checks, metrics=False, max_instructions=None)
    res = compiled.run(mod, "saxpy", grid, block, params, memory, checks=("memcheck",))

The same parsed PTX the interpreter runs (:mod:`warp_lab.sim.ptx`) becomes LLVM IR
(:mod:`~warp_lab.sim.compiled.translate`, arithmetic in :mod:`~warp_lab.sim.compiled.alu`
with the interpreter's float rules in :mod:`~warp_lab.sim.compiled.fpemit`), compiled by
llvmlite's MCJIT for the host CPU (:mod:`~warp_lab.sim.compiled.engine`) and run one
thread per iteration of a loop over the grid, as Warp's CPU back end runs a kernel. The
slice covers kernels whose threads cannot see each other: no shared memory, barriers,
warp-level instructions, atomics or fences. :func:`warp_lab.sim.run` picks the tier
(``tier="auto"``) and falls back to the interpreter, which stays the reference, with the
reason in ``SimResult.tier_reason``.
"""

from warp_lab.sim.compiled.engine import NeedsInterpreter, compiled_kernel, run, why_not
from warp_lab.sim.compiled.translate import coverage

__all__ = ["run", "why_not", "coverage", "NeedsInterpreter", "compiled_kernel"]
