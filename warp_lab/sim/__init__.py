"""warp_lab's CPU simulator: executes PTX with SIMT semantics.

    from warp_lab import sim
    mod = sim.parse_module(ptx_text)             # parse once, run many times
    mem = sim.GlobalMemory()
    x = mem.alloc(4 * n, name="x"); mem.write(x, host_array)
    res = sim.run(mod, "saxpy", grid=(n // 256,), block=(256,), params=param_bytes, memory=mem)
    res.printed, res.findings, res.metrics, res.instructions, res.partial

The simulator knows PTX, not Python: source lines come from ``.loc``
directives. See :func:`run` for the launch contract,
:class:`~warp_lab.sim.result.SimResult` / :class:`Finding` / :class:`Metrics` for
what comes back, and :class:`~warp_lab.sim.debugger.Debugger` for stepping
through a launch (breakpoints, warp state, step back).

Modules: ``ptx``/``ptx_syntax`` (parser), ``machine`` (SIMT engine and
scheduling), ``alu``/``bits``/``convert``/``fp`` (arithmetic semantics),
``memops``/``memory`` (state spaces, memcheck, coalescing and bank metrics),
``store_conflicts`` (memcheck's conflicting global stores),
``control`` (branches, calls, exit), ``sync`` (barriers, warp-synchronous ops),
``racecheck``, ``initcheck`` (uninitialised shared reads), ``provenance`` (which shared/local variable an address
points into, for memcheck), ``printf`` (vprintf, __assertfail), ``debugger``.

Known limits: no recursion or indirect calls; ``f16x2``/``bf16`` arithmetic,
16-bit atomics, ``cp.async``, tensor-core and texture instructions are
reported as not implemented; float32 arithmetic returns the GPU's canonical
NaN (0x7fffffff), float64 NaN results keep the host's (x86) bit pattern.
"""

from __future__ import annotations

from typing import Callable

from warp_lab.errors import SimulatorError
from warp_lab.sim.memory import GlobalMemory
from warp_lab.sim.ptx import PtxModule, parse_module
from warp_lab.sim.dispatch import implemented_opcodes
from warp_lab.sim.machine import FILL
from warp_lab.sim.state import CHECKS
from warp_lab.sim.result import Finding, MemoryLineStats, Metrics, SimResult

__all__ = ["parse_module", "PtxModule", "GlobalMemory", "run", "SimResult", "Finding",
           "Metrics", "MemoryLineStats", "SimulatorError", "Debugger", "ALL_CHECKS",
           "DEFAULT_CHECKS", "implemented_opcodes"]

#: every check :func:`run` knows
ALL_CHECKS = CHECKS
#: the checks :func:`run` enables when not told (initcheck is asked for by name)
DEFAULT_CHECKS = ("memcheck", "racecheck", "barrier")


def run(module, kernel: str, grid, block, params: bytes, memory: GlobalMemory,
        dynamic_shared: int = 0, checks=DEFAULT_CHECKS, max_instructions: int | None = None,
        metrics: bool = True, batch_threads: int = 1 << 16,
        progress: Callable[[int, int], None] | None = None,
        fill: int | None = FILL, tier: str = "interpreter",
        restore: Callable[[], None] | None = None) -> SimResult:
    """Execute one kernel launch on the CPU.

    Args:
        module: a :class:`PtxModule` from :func:`parse_module` (or PTX text).
        kernel: the ``.entry`` name.
        grid: blocks per grid, ``int`` or ``(x[, y[, z]])``.
        block: threads per block, ``int`` or ``(x[, y[, z]])`` (at most 1024 threads).
        params: the parameter buffer, laid out as the entry's ``.param`` declarations
            say (each parameter at the next multiple of its alignment; for warp_lab
            kernels :func:`warp_lab.compiler.abi.pack_params` produces it). Global
            pointers inside it are :class:`GlobalMemory` addresses.
        memory: the global memory holding the kernel's arrays. Module-scope
            ``.global``/``.const`` variables are allocated in it for the launch and
            freed afterwards.
        dynamic_shared: bytes of dynamic (``extern .shared``) shared memory per block.
        checks: any of ``"memcheck"`` (out-of-bounds / misaligned accesses, shared and
            local ones against the PTX variable the address derives from when that is
            known; without it an illegal access raises :class:`SimulatorError`; also
            integer division by zero, ``.nc`` loads of written memory, and threads of one
            global store writing conflicting values to one address:
            :mod:`~warp_lab.sim.store_conflicts`),
            ``"racecheck"``
            (shared-memory hazards), ``"initcheck"`` (reads of shared bytes no
            thread of the block wrote since it started: ``uninitialized``
            findings, the launch goes on; :mod:`~warp_lab.sim.initcheck`),
            ``"barrier"`` (divergent barriers, warp-sync membership). Default
            :data:`DEFAULT_CHECKS` (all but initcheck). Deadlocks are always detected.
        max_instructions: thread-instruction budget; exceeding it stops the launch
            with a ``budget`` finding and ``partial=True``. ``None``: unlimited. Warps
            spinning on a flag another warp sets take turns with it (forward progress),
            and a spin-wait that no running thread can end stops with an
            ``infinite_loop`` or ``co_residency`` finding, so only a loop that never
            ends and keeps changing memory or registers runs into the budget.
        metrics: collect per-line counts, coalescing and bank-conflict metrics
            (costs some speed).
        batch_threads: how many threads are simulated together (bounds memory:
            roughly 8 bytes × registers × batch_threads).
        progress: ``progress(blocks_done, blocks_total)``, called after each batch
            of blocks (``batch_threads`` threads' worth of whole blocks) that ran to
            its end, with ``blocks_done`` increasing and ``blocks_total`` at the
            last call; not called after a fault. An ``Exception`` raised by it stops
            the launch: an ``interrupted`` finding naming it, and ``partial=True``
            (so a notebook's "cancel" can be a raising callback); a
            ``KeyboardInterrupt`` from it is a Ctrl-C (below).
        fill: what each block's fresh shared memory and each thread's fresh local
            memory hold: a 32-bit word repeated from the first byte (default
            :data:`~warp_lab.sim.machine.FILL`, ``0x7FF8DEAD``: NaN as float32 and
            float64), or None for zeros. The PTX ISA gives these state spaces no
            initial value, so a kernel that reads what it never wrote computes with
            garbage on a GPU; the pattern makes that visible here too.
        tier: ``"interpreter"`` (default: the SIMT engine, :mod:`~warp_lab.sim.machine`),
            ``"compiled"`` (the kernel's PTX translated into host code,
            :mod:`warp_lab.sim.compiled`; a :class:`SimulatorError` naming the reason when
            it cannot cover the kernel or the options: metrics on, a budget, shared memory,
            barriers, warp-level or atomic instructions) or ``"auto"`` (the compiled tier
            where it covers the launch, else the interpreter). Either way the results are
            the interpreter's bit for bit; a compiled run that meets anything the
            interpreter would report (a fault, a division by zero or two threads storing
            to one word under memcheck, a trap or printf, a loop of 2**24 turns) is run
            again on the interpreter from the launch's first memory contents, which then
            reports it. ``SimResult.tier`` and ``tier_reason`` say which ran and why.
        restore: for the compiled tier's rerun: a callable that puts ``memory``'s
            allocations back as they were before the launch (``wl.launch`` copies the
            host arrays in again). None: a :meth:`GlobalMemory.snapshot` is taken before a
            compiled run.

    Returns:
        :class:`SimResult`. A fault (out-of-bounds access, trap, deadlock, budget,
        an exception from ``progress``) ends the launch early with a
        finding and ``partial=True``; memory outside the user's allocations is
        never touched.

    Raises:
        SimulatorError: bad launch configuration, unknown kernel, an opcode the
            simulator does not implement (message names opcode and PTX line).
        LaunchInterrupted: a ``KeyboardInterrupt`` (Ctrl-C, SIGINT) while it ran; its
            ``result`` is the partial :class:`SimResult` (an ``interrupted`` finding,
            ``partial=True``).
    """
    from warp_lab.sim.machine import Machine
    if isinstance(module, str):
        module = parse_module(module)
    if not isinstance(module, PtxModule):
        raise SimulatorError(f"run expects a PtxModule or PTX text, got {type(module).__name__}")
    if not isinstance(memory, GlobalMemory):
        raise SimulatorError("memory must be a warp_lab.sim.GlobalMemory")
    if not isinstance(kernel, str):
        raise SimulatorError(f"kernel must be the entry's name (str), got {type(kernel).__name__}")
    if not isinstance(params, (bytes, bytearray, memoryview)):
        raise SimulatorError(f"params must be the parameter buffer as bytes, got "
                             f"{type(params).__name__}")
    if isinstance(checks, str):
        checks = (checks,)
    if not isinstance(dynamic_shared, (int,)) or dynamic_shared < 0:
        raise SimulatorError(f"dynamic_shared must be a non-negative int, got {dynamic_shared!r}")
    if progress is not None and not callable(progress):
        raise SimulatorError(f"progress must be None or a callable (blocks_done, blocks_total), "
                             f"got {type(progress).__name__}")
    if max_instructions is not None and (not isinstance(max_instructions, int)
                                         or max_instructions < 0):
        raise SimulatorError(f"max_instructions must be None or a non-negative int, got "
                             f"{max_instructions!r}")
    if fill is not None and (not isinstance(fill, int) or isinstance(fill, bool)
                             or not 0 <= fill < 2**32):
        raise SimulatorError(f"fill must be None or a 32-bit word (0 <= fill < 2**32), got "
                             f"{fill!r}")
    if tier not in ("interpreter", "compiled", "auto"):
        raise SimulatorError(f"tier must be 'interpreter', 'compiled' or 'auto', got {tier!r}")
    reason = "asked for (tier='interpreter')"
    if tier != "interpreter":
        from warp_lab.sim import compiled
        try:
            why = compiled.why_not(module, kernel, checks, metrics, max_instructions)
            if why is not None:
                raise compiled.NeedsInterpreter(why)
            if restore is None:
                snap = memory.snapshot()
                restore = lambda: memory.restore(snap)  # noqa: E731
            res = compiled.run(module, kernel, grid, block, params, memory, dynamic_shared,
                               checks, fill, progress)
            res.tier_reason = f"tier={tier!r}: the compiled tier covers this launch"
            return res
        except compiled.NeedsInterpreter as exc:
            if tier == "compiled" and exc.static:
                raise SimulatorError(f"the compiled tier cannot run {kernel}: {exc.reason} "
                                     "(tier='auto' runs it on the interpreter)") from None
            if exc.touched:
                restore()
            reason = exc.reason
    m = Machine(module, kernel, grid, block, params, memory, dynamic_shared, checks, metrics,
                max_instructions, batch_threads, fill)
    res = m.run(progress)
    res.tier_reason = reason
    return res


def __getattr__(name):
    if name == "Debugger":
        from warp_lab.sim.debugger import Debugger
        return Debugger
    raise AttributeError(name)
