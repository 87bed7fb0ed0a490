"""The SIMT engine: thread blocks in batches, warps of 32 lanes, min-PC reconvergence.

A launch is executed a *batch* of blocks at a time. Every thread of the batch
has a program counter and a status; each step the engine picks the smallest
PC among the runnable threads and executes that instruction for exactly the
threads sitting at it, all at once, as numpy operations over a ``(T,)`` mask.
Within one warp this is min-PC scheduling (the lanes at the lowest PC issue
first, so lanes that took different sides of a branch reconverge at the first
common instruction, and a loop keeps its lanes together until they leave it);
across warps and blocks it is one legal interleaving. When all runnable threads
share a PC (convergent code, the common case) the engine stays in *uniform*
mode: no per-thread PC work at all, one numpy op per instruction for the
whole batch, which is where the simulator's speed comes from.

Forward progress: min-PC alone would let lanes spinning in a loop (waiting for a
flag another warp sets) starve every thread at a higher PC. The CUDA
Programming Guide ("Independent Thread Scheduling"; warps of a block all make
progress) guarantees the others run, so the engine counts taken backward
branches of loops that read memory (only those can wait for another thread;
``control.loop_may_wait``) while the batch is divergent or has yielded
threads, and every ``SPIN_QUANTUM`` of them hands the turn on
(:meth:`Machine.back_edge`): the
warps holding the looping lanes *yield* (status ``YIELD``, whole warps, so the
lanes of a warp still reconverge) while other warps can run; when no other
warp can, the yielded ones come back (round-robin). Only when a warp's own
lanes starve each other for ``INTRA_ROUNDS`` quanta (one quantum for a loop with
an atomic: a spin lock held by a lane of the same warp) do the looping lanes
yield alone; those quanta are counted per warp whenever other runnable lanes of the
warp wait behind the loopers, however the turn went on (``Machine.starve``), so the
lanes past a divergence point run even while two warps hand the turn back and forth. A poll whose turn changed nothing (no thread wrote memory since its
branch was last taken: ``control.poll_turns_repeat``) ends its quantum at once, so
warps that wait for each other hand the turn on after about two turns, not 64.
Yielded threads also come back whenever nothing else is runnable.
A spin-wait that no thread of the batch can end any more (:meth:`Machine.spin_turn`;
polls in any number of loops, :meth:`Machine.poll_turn`) stops the launch with a
finding. Per-thread instruction counts do not depend on this;
warp-level counts only change for a loop that reads memory and keeps lanes of one warp
apart for over ``SPIN_QUANTUM * INTRA_ROUNDS`` iterations (``INTRA_ROUNDS`` turns that
changed nothing, for a poll).

Barriers: a thread reaching ``bar.sync`` waits; a block's barrier completes
when its waiting threads (plus ``bar.arrive`` arrivals) reach the expected
count, exited threads counting as arrived (PTX ISA "bar, barrier": sm_70+
semantics). Completion is decided when nothing else in the batch can run,
which is an allowed schedule because threads of a block cannot pass a barrier
before it completes anyway, or, while lanes spin in a loop that reads memory, at
their turn hand-over (:meth:`Machine.back_edge`): they may wait for a flag another
block sets after its barrier, which a GPU's co-resident blocks would set.
"""

from __future__ import annotations

import time

import numpy as np

from warp_lab.errors import LaunchInterrupted, SimulatorError
from warp_lab.sim.result import (Finding, Metrics, MemoryLineStats, SimResult, code_place,
                                 instruction_class)

__all__ = ["Machine", "CHECKS", "RUN", "EXITED", "BARWAIT", "PAD", "WSYNC", "YIELD"]

#: every check the engine knows (``initcheck``: :mod:`warp_lab.sim.initcheck`)
CHECKS = ("memcheck", "racecheck", "initcheck", "barrier")

# thread status: runnable, exited, waiting at a barrier, padding lane past the block's
# last thread, waiting at a warp-synchronous instruction for the rest of its membermask,
# yielded to other warps (forward progress; runnable again when they cannot run)
RUN, EXITED, BARWAIT, PAD, WSYNC, YIELD = 0, 1, 2, 3, 4, 5
#: taken backward branches (contended) after which the looping warps yield
SPIN_QUANTUM = 64
#: quanta a warp's looping lanes may starve its other lanes before they yield alone
INTRA_ROUNDS = 16
#: a poll whose turn changed nothing hands the turn on at once (Machine.back_edge); False
#: gives the scheduling of quanta alone (benchmarks/spin_handoff.py's "before")
IDLE_HANDOFF = True
#: taken back-edges of a closed loop between two looks at its lanes' registers
LOOP_CHECK = 4096
#: taken back-edges of a spin-wait (a loop that reads memory and writes none but through
#: atomics) between two looks at the whole batch (:meth:`Machine.spin_turn`)
SPIN_CHECK = 256
#: taken back-edges of a loop closed but for barriers, warp-synchronous instructions and
#: shared memory between two looks at the whole batch (every turn of one runs a
#: collective over the batch, so a look costs little next to them)
BATCH_CHECK = 256
#: simulated cycles past which the clock is no longer advanced for a wait on it
#: (:meth:`Machine.clock_turn`): 2**62 cycles, 73 years at 2 GHz
CLOCK_LIMIT = 1 << 62
_BIG = np.int32(2**31 - 1)
SPARSE = 1
NSM = 132  # %nsmid reported by the simulator (an H100 SXM has 132 SMs)
#: What fresh shared and local memory holds: this 32-bit word, repeated (little-endian
#: bytes ``AD DE F8 7F``). The PTX ISA gives those state spaces no initial value (5.1.7
#: "Shared State Space", 5.1.5 "Local State Space"), and a GPU leaves there whatever an
#: earlier kernel wrote; zeros would make a read of memory nobody wrote look right (a sum
#: that starts from an unwritten bin). This pattern is a NaN read as float32 or float64
#: (0x7FF8DEAD, 0x7FF8DEAD7FF8DEAD) and 2146016941 as int32, so such a read gives a visibly
#: wrong result even without initcheck (which, like compute-sanitizer's initcheck tool,
#: names the read). ``fill=None`` in :func:`warp_lab.sim.run` gives zeros.
FILL = 0x7FF8DEAD


def fresh_memory(nbytes: int, fill: int | None) -> np.ndarray:
    """``nbytes`` of uint8 holding ``fill`` (a 32-bit word, repeated from byte 0) or, for
    ``None``, zeros."""
    if fill is None:
        return np.zeros(nbytes, np.uint8)
    words = np.full((nbytes + 3) // 4, fill & 0xFFFFFFFF, np.uint32)
    return words.view(np.uint8)[:nbytes]


class _Stop(Exception):
    """Raised inside the engine to end the launch (the finding is already recorded)."""


class Machine:
    """State of one simulated launch. Use :func:`warp_lab.sim.run`; the debugger drives
    :meth:`step` directly.

    Args:
        mod: the parsed module.
        entry: kernel name.
        grid, block: ``(x, y, z)`` extents.
        params: parameter buffer bytes.
        memory: :class:`~warp_lab.sim.memory.GlobalMemory`.
        dynamic_shared: bytes of dynamic shared memory per block.
        checks: enabled checks (any of :data:`CHECKS`: ``"memcheck"``, ``"racecheck"``,
            ``"initcheck"``, ``"barrier"``).
        metrics: collect :class:`Metrics`.
        max_instructions: thread-instruction budget (``None``: unlimited).
        batch_threads: threads per batch (blocks are grouped up to this many).
        fill: the 32-bit word fresh shared and local memory holds (:data:`FILL`), or
            None for zeros.

    Attributes (some):
        track_written: set True before the first batch (the debugger does) to keep
            ``written``: per register, False (no lane has written it in this batch), True
            (every lane) or a bool array over the batch's threads. PTX registers start
            undefined; the simulator holds 0 there, which a debugger must not show as a
            value.
    """

    def __init__(self, mod, entry, grid, block, params, memory, dynamic_shared=0,
                 checks=("memcheck", "racecheck", "barrier"), metrics=True,
                 max_instructions=None, batch_threads=1 << 16, fill=FILL):
        from warp_lab.sim.dispatch import build  # late import: dispatch imports this module
        self._build = build
        self.fill = fill
        self.mod = mod
        self.fn = mod.entry(entry)
        self.grid = _dim3(grid, "grid")
        self.block = _dim3(block, "block")
        self.bs = self.block[0] * self.block[1] * self.block[2]
        if self.bs > 1024:
            raise SimulatorError(f"block of {self.bs} threads exceeds the 1024-thread limit "
                                 "(CUDA Programming Guide, Table 'Technical Specifications')")
        self.nblocks = self.grid[0] * self.grid[1] * self.grid[2]
        self.bs_pad = (self.bs + 31) // 32 * 32
        self.wpb = self.bs_pad // 32
        self.params = bytes(params)
        need = self.fn.param_size
        if len(self.params) < need:
            raise SimulatorError(f"kernel {entry} expects a {need}-byte parameter buffer, "
                                 f"got {len(self.params)} bytes")
        self.kparams = {name: (off, size) for name, off, size, _ in self.fn.params}
        self.memory = memory
        self.checks = frozenset(checks or ())
        unknown = self.checks - set(CHECKS)
        if unknown:
            raise SimulatorError(f"unknown checks {sorted(unknown)}; "
                                 f"known: {', '.join(CHECKS)}")
        self.collect = bool(metrics)
        self.track_written = False
        self.written = None     # see track_written; None: not tracked
        self.budget = max_instructions
        self.dynamic_shared = int(dynamic_shared)
        self.findings: list[Finding] = []
        # memcheck, for modules with ld.global.nc: the global allocations (buffer ids) read
        # through the read-only data cache and those written during the launch
        # (memops._note_nc); one allocation both ways is a stale-read hazard on a GPU
        self.nc_reads = self.nc_writes = None
        if "memcheck" in self.checks and any(
                c.op == "ld" and "nc" in c.mods for c in self.mod.code):
            self.nc_reads, self.nc_writes = set(), set()
        # memcheck's conflicting-store check: pcs of the stores already reported
        # (store_conflicts; None: memcheck off)
        self.conflict_pcs = set() if "memcheck" in self.checks else None
        self.block_loads: dict = {}   # store pc -> the loads before it in its basic block
        self.conflict_scratch = np.empty(0, np.int32)   # store_conflicts._distinct's table
        self.printed: list[str] = []
        self.executed = 0
        self.warp_executed = 0
        self.steps = 0
        self.stop = False
        self.partial = False
        # barrier and warp-sync completions, and atomics that changed memory, so far: a
        # spin-wait whose batch saw none of them between two looks is stuck (spin_turn)
        self.events = 0
        self.changes = 0   # atomics that changed memory so far (spin_turn of a batch loop)
        # stores (but to .param space) and atomics that changed memory so far (poll_turn)
        self.writes = 0
        self.clock_skew = 0   # cycles the clock was advanced past the steps (clock_turn)
        # who runs the batches, for findings that depend on how many blocks run at once
        self.batch_runner = "simulator"
        self._seen = set()
        self._temp_allocs: list[int] = []
        self._layout_symbols()
        n = len(mod.code)
        self.tcount = np.zeros(n, np.int64)
        self.wcount = np.zeros(n, np.int64)
        # per-warp counters grow with the blocks started (_grow_warp_metrics), not with the
        # grid: a (65535, 65535) grid would need a terabyte of them before its first block
        self.metrics = Metrics() if self.collect else None
        # blocks per batch: bounded by threads, and by the shared/local memory they carry
        # (racecheck's records: checks.bookkeeping_per_byte, plus a 128-byte row of
        # per-lane read clocks for each word or byte whose readers read at different
        # warp-sync clocks, made on demand: not counted here; initcheck keeps one byte
        # per shared byte)
        bpb = max(1, min(self.nblocks, batch_threads // self.bs_pad))
        if self.shared_stride:
            from warp_lab.sim.checks import bookkeeping_per_byte, has_fence_sync
            per_block = self.shared_stride * (
                1 + (bookkeeping_per_byte(mod) if "racecheck" in self.checks else 0)
                + ("initcheck" in self.checks))
            bpb = min(bpb, max(1, (64 << 20) // per_block))
            if "racecheck" in self.checks and has_fence_sync(mod):
                # release/acquire: up to 3 int32 rows over the block's threads per thread
                bpb = min(bpb, max(1, (64 << 20) // (12 * self.bs_pad * self.bs_pad)))
        if self.local_size:
            bpb = min(bpb, max(1, (256 << 20) // (self.local_size * self.bs_pad)))
        self.bpb = bpb
        self.next_block = 0
        self.T = 0
        self._batch_done = False
        # the uniform-mode counters start_batch sets: a Ctrl-C before the first batch is set
        # up still leaves a result() (an `interrupted` finding) to fold them into
        self.upc, self.usteps, self.ulanes = -1, 0, None

    # ------------------------------------------------------------------ launch layout
    def _layout_symbols(self):
        mod, sym = self.mod, {}
        off = 0
        dyn = []
        # .const variables are global allocations; their const-space address (what
        # `mov d, var` yields, 32 bits with short pointers) is the offset from the
        # first one, and cvta.const adds const_base back (allocations only grow)
        self.const_base = 0
        for v in mod.variables.values():
            if v.space in ("global", "const"):
                addr = self.memory.alloc(max(v.size, 1), name=f"{v.space} {v.name}")
                self._temp_allocs.append(addr)
                if v.init:
                    self.memory.write(addr, v.init)
                if v.space == "const" and not self.const_base:
                    self.const_base = addr
                sym[v.name] = addr - self.const_base if v.space == "const" else addr
            elif v.space == "shared":
                if v.extern or v.size == 0:
                    dyn.append(v)
                    continue
                a = max(v.align, 1)
                off = (off + a - 1) // a * a
                sym[v.name] = off
                off += v.size
        self.static_shared = off
        off = (off + 15) // 16 * 16
        for v in dyn:
            sym[v.name] = off
        #: the ``extern .shared`` variables: all of them are the launch's dynamic shared memory
        self.dynamic_vars = frozenset(v.name for v in dyn)
        self.shared_size = off + self.dynamic_shared
        if self.shared_size > 228 * 1024:
            raise SimulatorError(f"{self.shared_size} bytes of shared memory per block exceed "
                                 "the 227 KiB limit of sm_90")
        self.shared_stride = (self.shared_size + 15) // 16 * 16
        # memcheck bounds of each shared/local variable in its space: [start, end) bytes;
        # dynamic shared memory runs to the end of the block's window
        bounds = {}
        for v in mod.variables.values():
            if v.space == "shared":
                end = self.shared_size if (v.extern or v.size == 0) else sym[v.name] + v.size
                bounds[v.name] = ("shared", sym[v.name], end)
        for fname, vars_ in mod.local_vars.items():
            for v in vars_:
                sym[v.name] = v.offset
                bounds[v.name] = ("local", v.offset, v.offset + v.size)
        self.var_bounds = bounds
        self.local_size = mod.local_size
        self.sym = sym

    def release(self):
        """Free the module variables allocated in global memory for this launch."""
        for a in self._temp_allocs:
            self.memory.free(a)
        self._temp_allocs = []

    def symbol(self, name: str, line: int = 0) -> int:
        """Address of a variable in its own state space (what ``mov d, var`` yields)."""
        try:
            return self.sym[name]
        except KeyError:
            if name in self.kparams:
                raise SimulatorError(f"PTX line {line}: taking the address of kernel "
                                     f"parameter {name} is not supported", ptx_line=line) from None
            raise SimulatorError(f"PTX line {line}: unknown symbol {name}", ptx_line=line) from None

    # ------------------------------------------------------------------ batches
    def start_batch(self) -> bool:
        """Set up the next batch of blocks; False when every block has run."""
        if self.next_block >= self.nblocks:
            return False
        nb = min(self.bpb, self.nblocks - self.next_block)
        self.first_block = self.next_block
        self.next_block += nb
        self.nb = nb
        if self.collect:
            self._grow_warp_metrics(self.next_block * self.wpb)
        T = nb * self.bs_pad
        self.T = T
        local_ids = np.arange(self.bs_pad, dtype=np.uint32)
        self.lin = np.tile(local_ids, nb)                       # thread index within block
        self.blk = np.repeat(np.arange(nb, dtype=np.int64), self.bs_pad)
        self.status = np.where(self.lin < self.bs, RUN, PAD).astype(np.uint8)
        # pc of runnable threads; _BIG for the others, whose next pc is in `resume` (an
        # exited thread's `resume` is the exit instruction it executed: messages say where)
        self.pc = np.where(self.status == RUN, np.int32(self.fn.start), _BIG).astype(np.int32)
        self.resume = np.full(T, self.fn.start, np.int32)
        self.regs = [r.type(0) for r in self.mod.reg_raw]
        self.written = [False] * len(self.regs) if self.track_written else None
        self.cc = np.uint32(0)
        self.cparams = {}
        self.retaddr = {}
        self.shared = fresh_memory(nb * self.shared_stride, self.fill)
        self.local = fresh_memory(T * self.local_size, self.fill) if self.local_size else None
        self.waitbar = np.zeros(T, np.int32)
        self.waitpc = np.zeros(T, np.int32)
        self.waitcnt = np.zeros(T, np.int32)
        self.waitseq = np.zeros(T, np.int64)   # arrival order at barriers (counted ones)
        self.barseq = 0
        self.arrive = {}
        self.barred = None      # bar.red: each thread's predicate (sync.release_barriers)
        self.barred_ops = {}    # bar.red pc -> (reduction, destination writer)
        self.worked = None
        # threads that stored to (or atomically changed) memory since their block's last
        # completed barrier: one that exits past a barrier the others reach is a divergent
        # barrier (sync._check_divergence); kept only for the barrier check
        self.stored = np.zeros(T, bool) if "barrier" in self.checks else None
        self.waiters = np.zeros(nb, np.int64)
        # batch thread -> what it printed last in this batch (a trap finding quotes it: a
        # debug-mode bounds check or assert prints its message, then traps)
        self.last_printed: dict[int, str] = {}
        self._sregs = {}
        self.nlive = int(np.count_nonzero(self.status == RUN))
        self.nrun = self.nlive
        self.nwsync = 0
        self.nyield = 0
        self.spin = 0
        self.spin_rounds = 0
        # per warp of the batch: quanta its looping lanes ended while other runnable lanes
        # of the warp waited behind them (back_edge); reset only when none wait
        self.starve = np.zeros(T // 32, np.int32)
        self.loop_turns = {}    # loop back-edge pc -> closed_loop_turn's / spin_turn's state
        # per thread, for polls (poll_turn): writes + events when it last took a poll's
        # branch, when it last took one with none in between (a turn that changed
        # nothing), and that poll's pc; None until the first poll turn
        self.took = self.idled = self.poll_pc = None
        self.poll_jump = None   # poll_turn's clock jumps: (writes + events, factor, steps)
        # the last store or memory-changing atomic: its threads (indices), writes + events
        # after it, its pc (poll_turn)
        self.last_write = None
        self.calls = 0          # calls executed (closed_loop_turn)
        self.race = None
        if "racecheck" in self.checks and self.shared_size:
            from warp_lab.sim.checks import RaceTracker
            self.race = RaceTracker(self, nb, self.shared_stride)
        self.init = None
        if "initcheck" in self.checks and self.shared_size:
            from warp_lab.sim.initcheck import InitTracker
            self.init = InitTracker(self, nb, self.shared_stride)
        self.upc = -1
        self.usteps = 0
        self._last = None
        self._set_uniform(self.fn.start, None if self.bs == self.bs_pad else self.status == RUN)
        return True

    def _grow_warp_metrics(self, n: int) -> None:
        """Make the per-warp counters cover the first ``n`` warps of the grid (zeros for the
        new ones), at least doubling them so that growing costs O(warps) in all."""
        met = self.metrics
        have = met.warp_issued.size
        if n <= have:
            return
        size = min(max(n, 2 * have), self.nblocks * self.wpb)
        for name in ("warp_issued", "warp_active_lanes"):
            grown = np.zeros(size, np.int64)
            grown[:have] = getattr(met, name)
            setattr(met, name, grown)

    def _set_uniform(self, p, mask):
        self._flush_uniform()
        self.upc = p
        self.umask = mask
        if mask is None:
            self.unact = self.T
            self.uwarps = self.T // 32
            self.ulanes = None
        else:
            lanes = mask.reshape(-1, 32).sum(1)
            self.ulanes = lanes
            self.unact = int(lanes.sum())
            self.uwarps = int(np.count_nonzero(lanes))

    def _flush_uniform(self):
        if self.usteps and self.collect:
            w0 = self.first_block * self.wpb
            sl = slice(w0, w0 + self.nb * self.wpb)
            if self.ulanes is None:
                self.metrics.warp_issued[sl] += self.usteps
                self.metrics.warp_active_lanes[sl] += 32 * self.usteps
            else:
                self.metrics.warp_issued[sl] += self.usteps * (self.ulanes > 0)
                self.metrics.warp_active_lanes[sl] += self.usteps * self.ulanes
        self.usteps = 0

    def _pcs(self):
        """Each batch thread's pc, running lanes' in uniform mode too (``self.pc`` is stale
        then: every running lane is at ``upc``), without leaving uniform mode."""
        return self.pc if self.upc < 0 else np.full(self.T, self.upc, self.pc.dtype)

    def recount(self):
        """Update the runnable-thread count after status changes."""
        self.nrun = int(np.count_nonzero(self.status == RUN))

    def diverge(self):
        """Leave uniform mode: materialise the per-thread PCs."""
        if self.upc >= 0:
            if self.umask is None:
                self.pc.fill(self.upc)
            else:
                self.pc[self.umask] = self.upc
            self._flush_uniform()
            self.upc = -1

    # ------------------------------------------------------------------ forward progress
    def back_edge(self, target: int, intra_rounds: int | None = None, idle: bool = False):
        """Lanes just took a backward branch to ``target`` while the batch is divergent, has
        yielded threads or threads waiting at a barrier or warp-sync (the caller checks
        that). Every :data:`SPIN_QUANTUM` such
        branches, the turn goes on: the warps of the looping lanes yield when other
        warps can run; else yielded warps come back; else, after ``intra_rounds``
        quanta (default :data:`INTRA_ROUNDS`; 1 for a loop with an atomic, a spin lock
        whose holder may be a lane of the same warp), the looping lanes yield to the
        other lanes of their warps.

        ``idle``: the turn just taken changed nothing (:meth:`poll_turn`): the lanes can
        only wait for another thread, and the turn goes on now, as at the end of a
        quantum (with :data:`IDLE_HANDOFF`). Handing on sooner is another legal schedule
        (CUDA Programming Guide, "Independent Thread Scheduling": any thread may be
        scheduled at any time); it saves a ping-pong of two warps some 64 to 128 turns
        a hand-over."""
        self.spin += 1
        if idle and IDLE_HANDOFF:
            self.spin = SPIN_QUANTUM
        if self.spin < SPIN_QUANTUM:
            return
        self.spin = 0
        self.diverge()
        run = self.status == RUN
        looping = run & (self.pc == target)
        if not looping.any():
            return
        looping_warps = looping.reshape(-1, 32).any(1)
        # lanes of the looping warps that could run but sit at a higher pc (past the
        # divergence point, waiting to reconverge): min-pc never schedules them while the
        # loopers loop, and parking whole warps for other warps keeps them behind too
        behind = looping_warps & (run & ~looping).reshape(-1, 32).any(1)
        starve = self.starve
        starve[looping_warps & ~behind] = 0
        starve[behind] += 1
        ripe = behind & (starve >= (intra_rounds or INTRA_ROUNDS))
        if ripe.any():
            # after INTRA_ROUNDS hand-overs (however the turn went on: to other warps, or
            # back from them), the looping lanes of such a warp yield alone, so that its
            # other lanes get past the divergence point (they may be what the loop waits
            # for, or exit); the count is not reset by a yield, only once no lane waits
            # behind, so two loopers of one warp both yield in turn
            self._park(looping & np.repeat(ripe, 32))
            return
        warps = np.repeat(looping_warps, 32)
        if (run & ~warps).any():
            self._park(run & warps)
        elif self.nyield:
            self.unpark()
        elif not self._release_arrived():
            self.spin_rounds += 1
            if self.spin_rounds >= (intra_rounds or INTRA_ROUNDS) and (run & ~looping).any():
                self._park(looping)

    def poll_turn(self, ins, lanes, target: int, spin_checked: bool) -> bool:
        """Lanes ``lanes`` (bool over the batch, None: all) took back-edge ``ins`` (to
        ``target``) of a poll: a loop whose turn is a function of memory and of registers
        it does not write (:func:`~warp_lab.sim.control.poll_turns_repeat`). Returns
        whether some of them went round a whole turn with no store, memory-changing
        atomic, barrier or warp-sync completion anywhere in the batch (:attr:`writes`,
        :attr:`events`) since their previous poll branch, or since their own write that
        was the batch's last (:attr:`last_write`; made outside the loop, so before the
        turn began): such a turn changed nothing and the next repeats it, so the lanes
        wait for another thread (:meth:`back_edge` hands the turn on).

        When every live thread of the batch is in such a turn (or waits at a barrier or
        warp-sync that cannot complete) nothing can change memory any more, whichever
        loops they are in. A poll that reads the clock
        (:func:`~warp_lab.sim.control.poll_clock`) waits for time too: the clock jumps
        ahead by the cycles the batch took since the last look, times 1, 2, 4, ... (as
        :meth:`clock_turn`), so a timeout of n cycles ends after about log2(n) looks;
        past :data:`CLOCK_LIMIT` cycles (2**34 of jumps for a 32-bit clock), or with no
        clock read, the launch stops: an ``infinite_loop`` finding when every block has
        started, ``co_residency`` otherwise (:meth:`_report_spin`). Spinners in one loop
        that :meth:`spin_turn` looks at (``spin_checked``) with nothing yielded are left
        to it."""
        P = self.writes + self.events
        if self.took is None:
            self.took = np.full(self.T, -1, np.int64)
            self.idled = np.full(self.T, -1, np.int64)
            self.poll_pc = np.zeros(self.T, np.int32)
        if lanes is None:
            lanes = np.ones(self.T, bool)
        again = lanes & (self.took == P)
        self.took[lanes] = P
        if not again.any():
            # a first turn after the lanes' own write before the loop (a ping-pong's flag),
            # with no write since: it ran over memory as it is now, and changed nothing
            last = self.last_write
            return (last is not None and last[1] == P and not target <= last[2] <= ins.pc
                    and bool(lanes[last[0]].any()))
        self.idled[again] = P
        self.poll_pc[again] = ins.pc
        st = self.status
        moving = (st == RUN) | (st == YIELD)
        if (moving & (self.idled != P)).any() or self._release_arrived():
            return True
        # every live thread repeats a poll turn over unchanged memory, or waits
        from warp_lab.sim.control import poll_clock

        code = self.mod.code
        loops = [code[q] for q in np.unique(self.poll_pc[moving]).tolist()]
        clocks = {poll_clock(c, self.mod) for c in loops}
        if clocks != {0}:
            self._jump_clock(ins, moving, P, 1 << 28 if 32 in clocks else None)
            return True
        if len(loops) == 1 and spin_checked and not self.nyield:
            return True   # (spin_turn's look says it with the loop's registers)
        self._report_spin(ins, target, moving, loops)
        return True

    def _jump_clock(self, ins, stuck, P: int, cap: int | None):
        """:meth:`poll_turn`'s clock jump for the polls ``stuck`` (bool over the batch),
        every one of which waits for memory no thread changes any more and some for the
        clock; ``P``: writes + events now. Stops the launch with an ``infinite_loop``
        finding once the clock went past :data:`CLOCK_LIMIT` (or 2**34 cycles of jumps on
        a 32-bit clock, ``cap`` set) with the polls still running."""
        last, factor, steps, waited = self.poll_jump or (-1, 1, self.steps, 0)
        if last != P:    # something changed since the last jump: start afresh, one step
            factor, waited, steps = 1, 0, self.steps - 1
        waited, ahead = self._skip_clock(steps, factor, waited, cap)
        self.poll_jump = (P, factor * 2, self.steps, waited)
        if ahead is None:
            return
        n = int(np.count_nonzero(stuck))
        self.finding("infinite_loop", (
            f"infinite loop: {n} thread{'s' * (n > 1)} keep{'s' * (n == 1)} polling memory "
            f"that no thread changes any more in the loop at PTX line "
            f"{self.mod.code[ins.target].line}{' and others' * (self._npolls(stuck) > 1)}, "
            f"which also read{'s' * (self._npolls(stuck) == 1)} the clock: the simulator "
            f"advanced its clock {ahead} while nothing else ran, and the loop still runs, "
            "so its timeout never ends it (a wait whose condition never becomes true?)"),
            ins, int(np.argmax(stuck)), stop=True,
            clock_cycles=int(self.clock_skew + 4 * self.steps))

    def _skip_clock(self, steps: int, factor: int, waited: int,
                    cap: int | None) -> tuple[int, str | None]:
        """Move the simulated clock ahead for a wait that only the clock can end: by 4
        cycles per step since step ``steps`` (at least one) times ``factor`` (doubled by
        the caller at each look), at most ``cap`` cycles for a 32-bit clock.

        Returns:
            ``(waited, ahead)``: the cycles skipped in this wait so far, and None while
            the wait may still end, else how far the clock went for the finding's text
            (past :data:`CLOCK_LIMIT`, or 2**34 capped cycles, four wraps of the clock).
        """
        jump = 4 * max(self.steps - steps, 1) * factor
        jump = jump if cap is None else min(jump, cap)
        self.clock_skew += jump
        waited += jump
        if cap is None and self.clock_skew + 4 * self.steps < CLOCK_LIMIT or \
                cap is not None and waited < 1 << 34:
            return waited, None
        return waited, ("to 2**62 cycles (73 years at 2 GHz)" if cap is None else
                        "by 2**34 cycles, four times round its 32-bit clock,")

    def _npolls(self, stuck) -> int:
        """How many different polls the threads ``stuck`` (bool over the batch) last idled in."""
        return int(np.unique(self.poll_pc[stuck]).size)

    def _release_arrived(self) -> bool:
        """While looping lanes keep the batch busy, complete the barriers (and warp-sync
        groups) every thread of which has arrived: the looping lanes may be waiting for
        what the waiting threads do after it (a flag another block sets after its
        ``__syncthreads()``), and resolve_stall, which completes them otherwise, runs only
        when nothing can run. True if some threads were released."""
        from warp_lab.sim.sync import release_barriers, release_warp_sync
        done = False
        if self.nwsync:
            done = release_warp_sync(self, self.status == WSYNC)
        waiting = self.status == BARWAIT
        if waiting.any():
            done = release_barriers(self, waiting) or done
        return done

    def closed_loop_turn(self, ins, target: int, lo: int, hi: int, regs: tuple,
                         batch: bool = False, outer: tuple | None = None):
        """Lanes took back-edge ``ins`` (to ``target``) of a closed loop (code ``lo..hi``,
        writing registers ``regs``: :func:`~warp_lab.sim.control.closed_loop_registers`).

        Every :data:`LOOP_CHECK` turns, when every lane inside the loop is at its head,
        compare those lanes, their ``regs`` and their local memory with a saved look:
        the same lanes with the same values will run the same iterations again,
        forever (nothing but their registers and local memory decides what the loop
        does), so the launch stops with an ``infinite_loop`` finding instead of running
        until the instruction budget or Ctrl-C. A loop that still changes a register, or
        whose lanes are spread over its body, is looked at again later. The saved look
        is replaced after 1, 2, 4, 8, ... looks (Brent's cycle detection), so a state
        that comes back only after several looks (registers that cycle with a period
        that does not divide :data:`LOOP_CHECK`) is found too, after a few times its
        period, with one snapshot kept.

        ``batch``: a loop closed but for barriers, warp-synchronous instructions and shared
        memory (``closed_loop_registers(..., batch=True)``). It is looked at only when
        every live thread of the batch is at its head (none waiting elsewhere, none
        yielded), and the look holds the batch's shared memory too: those threads and
        that memory are all its iterations depend on.

        ``outer``: ``(lo, hi)`` of the loop around ``lo..hi`` (the union of the backward
        branches it overlaps, :func:`~warp_lab.sim.control._loop_range`), which is not
        closed: the look also holds the thread-instructions executed in that loop's
        other code so far. Equal at two looks, no lane left the inner loop and came back
        through the outer one in between (every way back runs some of it), so the lanes
        went round the inner loop alone, as a closed loop's do.
        """
        # (spin_turn keeps ins.pc's turns)
        key = ("batch", ins.pc) if batch else ("inner", ins.pc) if outer else ins.pc
        turns, saved, since, looks, power = self.loop_turns.get(key, (0, None, 0, 0, 1))
        turns += 1
        if turns < (BATCH_CHECK if batch else LOOP_CHECK):
            self.loop_turns[key] = (turns, saved, since, looks, power)
            return
        st = self.status
        run = st == RUN
        pc = self._pcs()
        inside = run & (pc >= lo) & (pc <= hi)
        head = inside & (pc == target)
        since += turns
        if batch:   # lanes may be anywhere: the look holds the whole batch
            if not head.any() or self.nyield or self.arrive:   # (bar.arrive counts pending)
                self.loop_turns[key] = (0, saved, since, looks, power)
                return
            live = (st != EXITED) & (st != PAD)
            snap = self._loop_snapshot(live, regs, self._batch_state(lo, hi))
        else:
            if not head.any() or (inside & ~head).any():
                self.loop_turns[key] = (0, saved, since, looks, power)
                return
            around = b""
            if outer is not None:
                tc = self.tcount
                around = int(tc[outer[0]:lo].sum() + tc[hi + 1:outer[1] + 1].sum()).to_bytes(
                    8, "little")
            snap = self._loop_snapshot(head, regs, around)
        if not _same_snapshot(saved, snap):
            looks += 1
            if saved is None or looks == power:   # Brent: save this look, wait twice as long
                saved, since, looks, power = snap, 0, 0, power * 2
            self.loop_turns[key] = (0, saved, since, looks, power)
            return
        n = int(np.count_nonzero(head))
        # the loads before the loop that decide it (read only to word the finding)
        from warp_lab.sim.control import deciding_loads

        loads = deciding_loads(ins, self.mod, own=outer is not None)
        said = (f"infinite loop: {n} thread{'s' if n > 1 else ''} came back to the loop "
                f"head at PTX line {self.mod.code[target].line} ")
        if looks:   # a cycle longer than one look
            said += (f"in the state they had {since} iterations earlier (every register "
                     "the loop writes has the same value again), so they go round the same "
                     "iterations forever")
        else:
            said += (f"with every register the loop writes"
                     f"{' and the shared memory of their blocks' if batch else ''} unchanged "
                     f"after {since} more iterations")
        if not loads and looks:
            said += (", and nothing another thread writes decides whether the loop ends: "
                     "its variables go round values that never end it")
        elif not loads:
            said += (", and nothing another thread writes decides whether the loop ends, so "
                     "it never does (a loop variable never advanced, such as a forgotten "
                     "k += 1?)")
        else:
            where = [code_place(c.line, *self.mod.source_of(c)) for c in loads]
            said += (f"; the loop reads no memory, and what decides whether it ends was "
                     f"loaded once before it ({'; '.join(where)}): either a loop variable "
                     "never advances, or the loop waits for another thread to write that "
                     "memory and the compiler moved the plain load out of the loop (it may "
                     "assume no other thread writes there): read such a flag with "
                     "wl.atomic_load(...) on every iteration")
        if batch:   # the rest of the batch, which the look held as well
            live = (self.status != EXITED) & (self.status != PAD)
            held = live & ((self.status == BARWAIT) | (self.status == WSYNC))
            pcs = self._pcs()
            run = live & (self.status == RUN) & ~head
            parts = []
            if held.any():
                parts.append(f"{np.count_nonzero(held)} wait at a barrier or warp-sync "
                             "(wl.syncthreads(), a shuffle, a vote) in the loop")
            if (run & (pcs >= lo) & (pcs <= hi)).any():
                parts.append(f"{np.count_nonzero(run & (pcs >= lo) & (pcs <= hi))} run "
                             "elsewhere in the loop")
            if (run & ((pcs < lo) | (pcs > hi))).any():
                parts.append(f"{np.count_nonzero(run & ((pcs < lo) | (pcs > hi)))} ran "
                             "nothing since (they are past the loop; a thread past dim= "
                             "returns at the kernel's entry and must not be named by a "
                             "warp-synchronous mask)")
            if parts:
                said += (". The other live threads of the batch, all as they were: "
                         + "; ".join(parts))
        self.finding("infinite_loop", said, ins, int(np.argmax(head)), stop=True,
                     hoisted_loads=[c.line for c in loads])

    def _batch_state(self, lo: int, hi: int) -> bytes:
        """What, besides registers and local memory, decides the future of a batch that
        runs only the code ``lo..hi`` of a loop closed but for barriers, warp-synchronous
        instructions and shared memory: each thread's status and pc (where a waiting or
        yielded one resumes), the barrier and warp-sync waits (barrier id, count, place,
        arrival order), ``bar.red`` predicates, the shared memory, the counters that time
        yields (``spin_rounds`` matters only up to the most a yield waits for), and the
        thread-instructions executed outside ``lo..hi`` so far: equal at two looks, no
        thread ran anything but the loop in between, so threads elsewhere (runnable past
        the loop but never scheduled while it runs, waiting at a barrier or warp-sync,
        yielded) did not change, and the batch repeats the same steps forever."""
        st = self.status
        pcs = np.where(st == RUN, self._pcs(), self.resume)
        wait = st == BARWAIT
        order = np.where(wait, self.barseq - self.waitseq, 0)
        outside = self.executed - int(self.tcount[lo:hi + 1].sum())
        return b"".join((st.tobytes(), pcs.tobytes(), np.where(wait, self.waitbar, 0).tobytes(),
                         np.where(wait, self.waitcnt, 0).tobytes(),
                         np.where(wait, self.waitpc, 0).tobytes(), order.tobytes(),
                         b"" if self.barred is None else self.barred.tobytes(),
                         self.shared.tobytes(),
                         np.minimum(self.starve, INTRA_ROUNDS).tobytes(),
                         repr((self.spin, min(self.spin_rounds, INTRA_ROUNDS), outside,
                               self.nlive)).encode()))

    def _loop_snapshot(self, head, regs: tuple, extra: bytes = b"") -> tuple:
        """What decides the future of lanes ``head`` (a bool mask) in a loop writing
        ``regs``: the lanes, their ``regs`` and local memory, the calls so far (lanes that
        leave a loop never come back to it in the same activation of its function: a
        path back would be a backward branch overlapping the loop, hence part of it; only
        a call can bring them back, a .func called twice at opt=0, in the same state at
        both looks, so a call in between voids the comparison), and ``extra``."""
        snap = (head.tobytes() + self.calls.to_bytes(8, "little") + extra,
                [np.broadcast_to(self.regs[r], (self.T,))[head].copy() for r in regs])
        if self.local is not None:  # the loop may keep its variables there (opt=0)
            snap[1].append(self.local.reshape(self.T, -1)[head].copy())
        return snap

    def spin_turn(self, ins, target: int, regs: tuple, lo: int = -1, hi: int = -1,
                  batch: bool = False):
        """Lanes took back-edge ``ins`` (to ``target``) of a spin-wait: a loop (code
        ``lo..hi``, writing registers ``regs``: :func:`~warp_lab.sim.control.
        closed_loop_registers` with ``loads=True``) that reads memory other threads write
        and writes none but through atomics.

        Every :data:`SPIN_CHECK` turns, when every running thread of the batch is at the
        loop's head and every other live thread waits at a barrier or a warp-sync (none
        yielded, none elsewhere), compare with the previous look: the same lanes with the
        same registers and local memory, the same waiting threads, and no barrier or
        warp-sync completed and no atomic changed memory since (:attr:`events`). Then
        each of those lanes ran at least one whole turn over memory that nothing changed
        and came back as it was; its turns are a function of its registers and that
        memory, so it spins forever, the waiting threads wait for it, and no thread of the
        batch writes memory any more. Only a block that has not started could, so the
        launch stops: an ``infinite_loop`` finding when every block has started (nothing
        can end the wait), a ``co_residency`` one otherwise (the batch waits for a block
        that runs only after it: on a GPU, for a block that need not be resident).

        ``batch``: the loop also runs barriers, warp-synchronous instructions (a
        ``wl.all_sync`` over the polled value) or shared memory
        (``closed_loop_registers(..., loads=True, batch=True)``): barrier and warp-sync
        completions inside it are part of its turns, so the look holds the whole batch's
        state instead (:meth:`_batch_state`) and counts only atomics that changed memory.
        """
        turns, last = self.loop_turns.get(ins.pc, (0, None))
        turns += 1
        if turns < SPIN_CHECK:
            self.loop_turns[ins.pc] = (turns, last)
            return
        st = self.status
        run = st == RUN
        head = run & (self._pcs() == target)
        if self.nyield or not head.any() or (run & ~head).any() or (batch and self.arrive):
            self.loop_turns[ins.pc] = (0, None)
            return
        if batch:
            live = (st != EXITED) & (st != PAD)
            snap = self._loop_snapshot(live, regs, self._batch_state(lo, hi) +
                                       self.changes.to_bytes(8, "little"))
        else:
            snap = self._loop_snapshot(head, regs,
                                       st.tobytes() + self.events.to_bytes(8, "little"))
        self.loop_turns[ins.pc] = (0, snap)
        if _same_snapshot(last, snap):
            self._report_spin(ins, target, head)

    def clock_turn(self, ins, target: int, lo: int, hi: int, cap: int | None = None):
        """Lanes took back-edge ``ins`` (to ``target``) of a loop (code ``lo..hi``) closed but
        for reading the clock: a wait for time to pass (``while wl.clock64() - t0 < n``).

        The simulated clock counts 4 cycles per issue step (:meth:`sreg`), so a wait of
        10**12 cycles would take some 10**11 steps. Every :data:`SPIN_CHECK` turns, when
        every running thread of the batch is at the loop's head (the others wait, at a
        barrier or warp-sync, or have exited: nothing but the wait runs), the clock jumps
        ahead by the cycles those turns took times 1, 2, 4, ... (doubling at each look
        while the loop keeps running alone), so a wait of n cycles ends after about
        log2(n) looks, at most twice as late as it asked. Legal on a GPU too: a warp may be
        descheduled for any time, and nothing but the clock changes. Past
        :data:`CLOCK_LIMIT` cycles the loop does not wait for time (its end does not depend
        on the clock, or on a time 73 years ahead): an ``infinite_loop`` finding.

        ``cap``: the most cycles one jump may take (the loop reads a 32-bit clock,
        ``%clock`` or ``%globaltimer_lo``, which wraps every 2**32: a bigger jump could
        step over the end of the wait).
        """
        key = ("clock", ins.pc)
        turns, factor, outside, steps, waited = self.loop_turns.get(
            key, (0, 1, -1, self.steps, 0))
        turns += 1
        if turns < SPIN_CHECK:
            self.loop_turns[key] = (turns, factor, outside, steps, waited)
            return
        run = self.status == RUN
        head = run & (self._pcs() == target)
        now = self.executed - int(self.tcount[lo:hi + 1].sum())
        if self.nyield or not head.any() or (run & ~head).any():
            self.loop_turns[key] = (0, 1, -1, self.steps, 0)
            return
        if now != outside:   # something else ran since the last look: start afresh
            factor, waited = 1, 0
        waited, ahead = self._skip_clock(steps, factor, waited, cap)
        self.loop_turns[key] = (0, factor * 2, now, self.steps, waited)
        if ahead is None:
            return
        n = int(np.count_nonzero(head))
        self.finding("infinite_loop", (
            f"infinite loop: {n} thread{'s' * (n > 1)} keep{'s' * (n == 1)} running the loop "
            f"at PTX line {self.mod.code[target].line}, which does nothing but read the clock "
            f"(wl.clock64()) and registers: the simulator advanced its clock {ahead} while "
            "nothing else ran, and the loop still runs, so it does not end when time passes "
            "(a wait whose condition never becomes true, or a variable that never "
            "advances?)"), ins, int(np.argmax(head)), stop=True,
            clock_cycles=int(self.clock_skew + 4 * self.steps))

    def _report_spin(self, ins, target, head, loops=None):
        """The finding (which stops the launch) for :meth:`spin_turn`'s stuck batch, or
        :meth:`poll_turn`'s: ``loops``, the back-edges of the polls the threads ``head``
        (bool over the batch; the running and yielded ones) went round with nothing
        changed."""
        from warp_lab.sim.control import polled_loads

        code = self.mod.code
        n = int(np.count_nonzero(head))
        st = self.status
        nwait = int(np.count_nonzero((st == BARWAIT) | (st == WSYNC)))
        t = int(np.argmax(head))
        if loops is None:
            polls = polled_loads(ins, self.mod)
            lines = f"PTX line {code[target].line}"
            same = f"every register it writes unchanged after {SPIN_CHECK} more iterations"
        else:   # (the code each poll's branch closes: a loop around it may write memory)
            polls = tuple(c for b in loops for c in polled_loads(b, self.mod, own=True))
            places = [code_place(code[b.target].line, *self.mod.source_of(code[b.target]))
                      for b in loops]
            lines = places[0] if len(places) == 1 else \
                "; ".join(places[:-1]) + " and " + places[-1]
            same = ("each thread having gone round its loop again with no thread writing "
                    "memory in between")
        atomic = any(c.op == "atom" for c in polls)
        their = "their" if len(loops or ()) > 1 else "its"
        loop = (f"the loop{'s' * (len(loops or ()) > 1)} at {lines}, which "
                f"read{'s' * (len(loops or ()) < 2)} memory but write"
                f"{'s' * (len(loops or ()) < 2)} none"
                + (f" ({their} atomics leave memory as it is)" if atomic else ""))
        waiting = (f"; the other {nwait} live thread{'s' * (nwait > 1)} wait at a barrier or "
                   f"warp-sync that the spinning threads never reach") if nwait else ""
        details = {"polled_loads": [c.line for c in polls], "spinning": n, "waiting": nwait}
        if self.next_block >= self.nblocks:
            if not nwait:
                said = (f"infinite loop: every live thread of the launch ({n}) waits in {loop}, "
                        f"with {same}: no thread is left to write what they wait for (a flag "
                        "no thread sets, or one a thread sets only after the wait?)")
            else:
                said = (f"infinite loop: {n} thread{'s' * (n > 1)} wait in {loop}, with "
                        f"{same}{waiting}: no thread is left to write what they wait for (a "
                        "flag no thread sets, or one a thread sets only after the wait or "
                        "after that barrier?)")
            self.finding("infinite_loop", said, ins, t, stop=True, **details)
            return
        spinning = np.unique(self.blk[head]) + self.first_block
        left = self.nblocks - self.next_block
        running = self._blocks_text(range(self.first_block, self.next_block))
        said = (f"{n} thread{'s' * (n > 1)} of {self._blocks_text(spinning)} "
                f"spin{'s' * (n == 1)} in {loop}, with {same}{waiting}: no thread of the "
                f"running {running} writes what {'they wait' if n > 1 else 'it waits'} for any "
                f"more, only a block that "
                f"has not started could (or no thread ever does). "
                f"{self._blocks_text(range(self.next_block, self.nblocks)).capitalize()} "
                f"({left} of "
                f"{self.nblocks}) start{'s' * (left == 1)} only after these end: the "
                f"{self.batch_runner} runs {self.bpb} block{'s' * (self.bpb > 1)} at a time, "
                "a GPU as many as fit on its SMs. CUDA does not guarantee that a grid's "
                "blocks run at the same time or in any order (Programming Guide: thread "
                "blocks must be able to execute independently; only a cooperative launch "
                "makes them all resident at once), so on a GPU this can hang too. Let a "
                "block wait only for blocks that have already started (number the blocks in "
                "the order they start with an atomic counter, as decoupled look-back scans "
                "do), or split the work into two kernel launches")
        details.update(blocks_not_started=left, blocks_at_a_time=self.bpb)
        self.finding("co_residency", said, ins, t, stop=True, **details)

    def _blocks_text(self, linear) -> str:
        """``"block 3"``, ``"blocks 0 and 1"``, ``"blocks 0 to 63"``, ``"blocks 0, 2 and
        5"`` for linear block indices ``linear`` (sorted, none repeated); a block of a 2-D
        or 3-D grid is named by its ``(x, y, z)`` index (x fastest), and a run of them is
        said to be in launch order, which is no rectangle of the grid."""
        ids = [int(b) for b in linear]
        one_d = self.grid[1] == self.grid[2] == 1

        def name(b):
            return str(b) if one_d else str(self._block_index(b))
        order = "" if one_d else " in launch order (x fastest)"
        if len(ids) == 1:
            return f"block {name(ids[0])}"
        contiguous = ids[-1] - ids[0] == len(ids) - 1
        if len(ids) <= 4 and (len(ids) == 2 or not one_d or not contiguous):
            return f"blocks {', '.join(map(name, ids[:-1]))} and {name(ids[-1])}"
        if contiguous:
            return f"blocks {name(ids[0])} to {name(ids[-1])}{order}"
        return f"{len(ids)} blocks from {name(ids[0])} to {name(ids[-1])}{order}"

    def _park(self, lanes):
        """Lanes ``lanes`` (runnable) yield: not scheduled until :meth:`unpark`."""
        self.resume[lanes] = self.pc[lanes]
        self.pc[lanes] = _BIG
        self.status[lanes] = YIELD
        self.nyield = int(np.count_nonzero(self.status == YIELD))
        self.spin_rounds = 0
        self.recount()

    def unpark(self) -> bool:
        """Make every yielded thread runnable again; True if there was one."""
        if not self.nyield:
            return False
        back = self.status == YIELD
        self.status[back] = RUN
        self.pc[back] = self.resume[back]
        self.nyield = 0
        self.spin = 0
        self.spin_rounds = 0
        self.recount()
        return True

    # ------------------------------------------------------------------ special registers
    def sreg(self, name: str, comp: str):
        """Value of special register ``%name.comp`` for every thread (uint32, or uint64
        for ``%clock64``/``%globaltimer``). Clocks advance with the step count so
        runs are deterministic."""
        key = (name, comp)
        v = self._sregs.get(key)
        if v is not None:
            return v
        c = "xyz".find(comp) if comp in ("x", "y", "z") else 0
        bx, by, bz = self.block
        if name == "tid":
            lin = self.lin.astype(np.uint32)
            v = (lin % np.uint32(bx), (lin // np.uint32(bx)) % np.uint32(by),
                 lin // np.uint32(bx * by))[c]
        elif name == "ntid":
            v = np.uint32(self.block[c])
        elif name == "nctaid":
            v = np.uint32(self.grid[c])
        elif name == "ctaid":
            ids = (self.first_block + self.blk).astype(np.uint32)
            gx, gy = self.grid[0], self.grid[1]
            v = (ids % np.uint32(gx), (ids // np.uint32(gx)) % np.uint32(gy),
                 ids // np.uint32(gx * gy))[c]
        elif name == "laneid":
            v = self.lin % np.uint32(32)
        elif name == "warpid":
            v = self.lin // np.uint32(32)
        elif name == "nwarpid":
            v = np.uint32(64)
        elif name == "smid":
            v = ((self.first_block + self.blk) % NSM).astype(np.uint32)
        elif name == "nsmid":
            v = np.uint32(NSM)
        elif name in ("clock", "clock64", "globaltimer", "globaltimer_lo", "globaltimer_hi"):
            t = (self.steps * 4 + self.clock_skew) & 0xFFFFFFFFFFFFFFFF
            return np.uint64(t) if name in ("clock64", "globaltimer") else np.uint32(t & 0xFFFFFFFF)
        elif name.startswith("lanemask"):
            lane = (self.lin % np.uint32(32)).astype(np.uint64)
            one = np.uint64(1) << lane
            kind = name.split("_")[1]
            full = np.uint64(0xFFFFFFFF)
            v = {"eq": one, "lt": one - np.uint64(1), "le": (one << np.uint64(1)) - np.uint64(1),
                 "gt": full & ~((one << np.uint64(1)) - np.uint64(1)),
                 "ge": full & ~(one - np.uint64(1))}[kind].astype(np.uint32)
        elif name in ("dynamic_smem_size",):
            v = np.uint32(self.dynamic_shared)
        elif name == "total_smem_size":
            v = np.uint32(self.shared_size)
        elif name == "warpsz":
            v = np.uint32(32)
        elif name == "gridid":
            v = np.uint32(1)
        else:
            v = np.uint32(0)
        self._sregs[key] = v
        return v

    # ------------------------------------------------------------------ findings
    def where(self, t: int):
        """``(block (x,y,z), thread (x,y,z))`` of batch thread ``t``."""
        lin = int(self.lin[t])
        bx, by = self.block[0], self.block[1]
        return (self._block_index(self.first_block + int(self.blk[t])),
                (lin % bx, (lin // bx) % by, lin // (bx * by)))

    def _block_index(self, b: int) -> tuple:
        """The ``(x, y, z)`` index of the grid's block of linear index ``b`` (x fastest)."""
        gx, gy = self.grid[0], self.grid[1]
        return (b % gx, (b // gx) % gy, b // (gx * gy))

    def finding(self, kind, message, ins=None, t=None, stop=False, **details):
        """Record a :class:`Finding` (deduplicated by kind and line); ``stop`` ends the launch."""
        key = (kind, ins.pc if ins is not None else None, details.get("dedupe"))
        details.pop("dedupe", None)
        if key not in self._seen:
            self._seen.add(key)
            blk, thr = self.where(t) if t is not None else (None, None)
            sf, sl = self.mod.source_of(ins) if ins is not None else ("", 0)
            self.findings.append(Finding(kind, message, blk, thr, ins.line if ins else 0, sf, sl,
                                         details))
        if stop:
            self.stop = True
            self.partial = True
            raise _Stop()

    # ------------------------------------------------------------------ the loop
    def run(self, progress=None) -> SimResult:
        """Run every batch to completion (or until a stop); returns the :class:`SimResult`.

        ``progress(blocks_done, blocks_total)`` is called after each batch that
        finished without a stop; an exception from it ends the launch like
        Ctrl-C does (an ``interrupted`` finding, ``partial=True``).
        """
        t0 = time.perf_counter()
        interrupt = None
        try:
            with np.errstate(all="ignore"):
                while not self.stop and self.start_batch():
                    self.run_batch()
                    if progress is not None and not self.stop:
                        try:
                            progress(self.next_block, self.nblocks)
                        except Exception as exc:
                            raise _ProgressStop(exc) from exc
        except KeyboardInterrupt as exc:
            # the user's interrupt stops the caller too (LaunchInterrupted below), with the
            # partial result it carries; memory may hold some of the blocks' stores
            interrupt = exc
            self.partial = True
            self.findings.append(Finding("interrupted", "the launch was interrupted "
                                         "(KeyboardInterrupt); memory holds a partial result"))
        except _ProgressStop as stop:
            exc = stop.args[0]
            self.partial = True
            self.findings.append(Finding(
                "interrupted", f"the progress callback stopped the launch after "
                f"{self.next_block} of {self.nblocks} blocks ({type(exc).__name__}: {exc}); "
                "memory holds a partial result"))
        except SimulatorError:
            raise
        except Exception as exc:  # never let an engine traceback reach the user
            raise SimulatorError(f"internal simulator error ({type(exc).__name__}: {exc}); "
                                 "this is a bug in warp_lab's simulator, please report it "
                                 "with the PTX") from None
        finally:
            self.release()
        result = self.result(time.perf_counter() - t0)
        if interrupt is not None:
            raise LaunchInterrupted(result) from interrupt
        return result

    def run_batch(self, limit=None):
        """Execute the current batch until it finishes, stops, or ``limit`` steps ran.

        Returns True when the batch finished (or the launch stopped)."""
        code = self.code = self.mod.code
        tcount, wcount = self.tcount, self.wcount
        budget = self.budget
        collect = self.collect
        n = 0
        ins = self._last   # the instruction executed last (named if a pc goes astray)
        try:
            while not self.stop:
                if limit is not None and n >= limit:
                    return False
                n += 1
                p = self.upc
                if p >= 0:
                    act = self.umask
                    nact = self.unact
                    nw = self.uwarps
                    self.usteps += 1
                else:
                    nrun = self.nrun
                    p = int(self.pc.min()) if nrun else _BIG
                    if p == _BIG:
                        if not self.resolve_stall():
                            return True
                        n -= 1
                        continue
                    if p < 0:
                        raise self._lost_pc(p, ins)
                    act = self.pc == p
                    nact = int(np.count_nonzero(act))
                    if nact == nrun:
                        self._set_uniform(p, None if nrun == self.T else act)
                        n -= 1
                        continue
                    if collect:
                        lanes = act.reshape(-1, 32).sum(1)
                        nw = int(np.count_nonzero(lanes))
                        w0 = self.first_block * self.wpb
                        sl = slice(w0, w0 + self.nb * self.wpb)
                        self.metrics.warp_issued[sl] += lanes > 0
                        self.metrics.warp_active_lanes[sl] += lanes
                    else:
                        nw = int(np.count_nonzero(act.reshape(-1, 32).any(1)))
                ins = code[p]
                tcount[p] += nact
                wcount[p] += nw
                self.executed += nact
                self.warp_executed += nw
                self.steps += 1
                if budget is not None and self.executed > budget:
                    self.finding("budget", f"instruction budget of {budget} thread-instructions "
                                 "exhausted (runaway loop?); the launch was stopped",
                                 ins, stop=True)
                ex = ins.exec
                if ex is None:
                    ex = self._build(ins, self.mod)
                if ins.klass == "control":
                    ex(self, act, p)
                    continue
                if self.worked is not None:
                    # threads doing work while others of their block wait at a barrier
                    w = self.waiters[self.blk] > 0
                    self.worked |= w if act is None else (act & w)
                g = ins.guard
                mask = act
                if g is not None:
                    pv = self.regs[g[0]]
                    if g[1]:
                        pv = ~pv
                    if np.ndim(pv) == 0:
                        mask = act if pv else False
                    else:
                        mask = pv if act is None else (act & pv)
                        nact = int(np.count_nonzero(mask))
                        if nact == 0:
                            mask = False
                if mask is not False:
                    if (mask is not None and nact * 4 < self.T and self.T >= 1024 * SPARSE
                            and ins.klass == "arithmetic"):
                        # few lanes: compute on those lanes only, not the whole batch
                        ex(_Lanes(self, np.flatnonzero(mask)), None)
                    else:
                        ex(self, mask)
                if self.upc >= 0:
                    self.upc = p + 1
                else:
                    self.pc[act] = p + 1
        except _Stop:
            return True
        except SimulatorError:
            raise
        except (MemoryError, RecursionError, ValueError, TypeError, IndexError, KeyError,
                ZeroDivisionError, OverflowError, AttributeError) as exc:
            if isinstance(exc, IndexError) and not 0 <= p < len(code):
                raise self._lost_pc(p, ins) from None   # (the uniform path reads code[p])
            ins = code[p] if 0 <= p < len(code) else None
            where = f"PTX line {ins.line}: {ins.text}" if ins else "engine"
            raise SimulatorError(f"simulator failure at {where}: {type(exc).__name__}: {exc}",
                                 ptx_line=ins.line if ins else 0) from None
        finally:
            self._last = ins
        return True

    def _lost_pc(self, p, last):
        """The error for a program counter that left the code (``p`` outside
        ``[0, len(code))``): an engine bug, raised rather than looping forever (no
        instruction would run, so the budget could not stop it). Returns a
        :class:`SimulatorError` naming the PTX line executed last before it."""
        where = f"after PTX line {last.line} ({last.text})" if last is not None else \
            "at the start of the batch"
        return SimulatorError(f"internal simulator error: a program counter left the code "
                              f"(pc {p}, {len(self.mod.code)} instructions) {where}; this is a "
                              "bug in warp_lab's simulator, please report it with the PTX",
                              ptx_line=last.line if last is not None else 0)

    # ------------------------------------------------------------------ single steps (debugger)
    def step_once(self) -> bool:
        """Execute exactly one scheduled instruction (for the lanes at the scheduled PC).

        Returns False when the launch has finished or stopped."""
        with np.errstate(all="ignore"):
            while not self.stop:
                if self.T == 0 or self._batch_done:
                    if not self.start_batch():
                        return False
                    self._batch_done = False
                before = self.steps
                if self.run_batch(limit=1):
                    self._batch_done = True
                if self.steps > before:
                    return True
        return False

    def note_written(self, i: int, mask) -> None:
        """:func:`note_written` for a write of register ``i`` where ``mask`` (None: all)."""
        note_written(self, i, mask)

    def peek(self):
        """``(pc, lanes)`` the next step will execute (lanes a bool mask over the batch),
        or ``None`` when the current batch has nothing left (or the launch stopped)."""
        if self.stop or self.T == 0 or self._batch_done:
            return None
        with np.errstate(all="ignore"):
            while True:
                if self.upc >= 0:
                    return self.upc, (np.ones(self.T, bool) if self.umask is None else self.umask)
                run = self.status == RUN
                if run.any():
                    pcs = np.where(run, self.pc, _BIG)
                    p = int(pcs.min())
                    return p, pcs == p
                try:
                    if not self.resolve_stall():
                        return None
                except _Stop:
                    return None

    # ------------------------------------------------------------------ barriers
    def resolve_stall(self) -> bool:
        """Nothing is runnable: resume yielded threads, complete barriers, or report a
        deadlock. True if progress."""
        from warp_lab.sim.sync import (barrier_deadlock, release_barriers, release_warp_sync,
                                       warp_sync_deadlock)
        if self.unpark():
            return True
        wsync = self.status == WSYNC
        if wsync.any() and release_warp_sync(self, wsync):
            return True
        waiting = self.status == BARWAIT
        if not waiting.any():
            if wsync.any():
                t, ins, message = warp_sync_deadlock(self, wsync)
                self.finding("deadlock", message, ins, t, stop=True)
            return False
        if release_barriers(self, waiting):
            return True
        # deadlock: some threads wait and nothing can release them
        t, ins, message, details = barrier_deadlock(self, waiting)
        self.finding("deadlock", message, ins, t, stop=True, **details)
        return False

    # ------------------------------------------------------------------ results
    def result(self, seconds: float) -> SimResult:
        """The launch's :class:`SimResult`: printed text, thread- and warp-instruction
        counts, findings, ``partial``, and (when collected) the metrics folded per PTX and
        ``.loc`` line; ``seconds`` is the wall time to report."""
        self._flush_uniform()
        res = SimResult(printed="".join(self.printed), instructions=int(self.executed),
                        warp_instructions=int(self.warp_executed), seconds=seconds,
                        findings=self.findings, partial=self.partial)
        if self.collect:
            met = self.metrics
            started = self.next_block * self.wpb   # the warps of the blocks that ran
            met.warp_issued = met.warp_issued[:started]
            met.warp_active_lanes = met.warp_active_lanes[:started]
            code = self.mod.code
            for p in np.nonzero(self.tcount)[0]:
                ins = code[int(p)]
                c = int(self.tcount[p])
                met.per_ptx_line[ins.line] = met.per_ptx_line.get(ins.line, 0) + c
                met.warp_per_ptx_line[ins.line] = met.warp_per_ptx_line.get(ins.line, 0) + \
                    int(self.wcount[p])
                k = ins.klass if ins.klass in ("memory", "control", "sync", "special") else \
                    instruction_class(ins)
                met.mix[k] = met.mix.get(k, 0) + c
                if ins.loc is not None:
                    key = met.ptx_source[ins.line] = self.mod.source_of(ins)
                    met.per_source_line[key] = met.per_source_line.get(key, 0) + c
            res.metrics = met
        return res

    def mem_stats(self, ins) -> MemoryLineStats:
        """The global-memory counters (requests, sectors) of ``ins``'s PTX line, created
        on first use."""
        st = self.metrics.global_memory.get(ins.line)
        if st is None:
            st = self.metrics.global_memory[ins.line] = MemoryLineStats()
        return st


def _same_snapshot(last, snap) -> bool:
    """Whether two :meth:`Machine._loop_snapshot` results are equal (``last`` may be None)."""
    return last is not None and last[0] == snap[0] and len(last[1]) == len(snap[1]) and all(
        np.array_equal(a, b) for a, b in zip(last[1], snap[1]))


def note_written(m, i: int, mask, lanes=None) -> None:
    """Record in ``m.written`` that register ``i`` was written where ``mask`` is set.

    Args:
        m: the :class:`Machine` (``m.written`` not None).
        i: the register's index.
        mask: None (every thread of the batch, or every thread of ``lanes``) or a bool array.
        lanes: thread indices the write covered (a :class:`_Lanes` step), or None.
    """
    old = m.written[i]
    if old is True:
        return
    if lanes is not None:
        new = np.zeros(m.T, bool) | old
        new[lanes if mask is None else lanes[mask]] = True
        m.written[i] = new
    elif mask is None:
        m.written[i] = True
    else:
        m.written[i] = mask | old


class _GatherRegs:
    """Register file of a :class:`_Lanes` view: reads gather, writes scatter."""

    __slots__ = ("m", "idx")

    def __init__(self, m, idx):
        self.m, self.idx = m, idx

    def __getitem__(self, i):
        v = self.m.regs[i]
        return v if np.ndim(v) == 0 else v[self.idx]

    def __setitem__(self, i, value):
        old = self.m.regs[i]
        new = np.full(self.m.T, old) if np.ndim(old) == 0 else old.copy()
        new[self.idx] = value
        self.m.regs[i] = new


class _Lanes:
    """The machine seen through lanes ``idx`` only: arithmetic closures run on
    ``len(idx)`` elements instead of the whole batch (sparse steps in divergent code)."""

    __slots__ = ("m", "idx", "T", "regs")

    def __init__(self, m, idx):
        self.m, self.idx, self.T = m, idx, idx.size
        self.regs = _GatherRegs(m, idx)

    @property
    def written(self):
        return self.m.written

    def note_written(self, i, mask):
        note_written(self.m, i, mask, self.idx)

    def sreg(self, name, comp):
        v = self.m.sreg(name, comp)
        return v if np.ndim(v) == 0 else v[self.idx]

    def symbol(self, name, line=0):
        return self.m.symbol(name, line)

    @property
    def checks(self):
        return self.m.checks

    def finding(self, kind, message, ins=None, t=None, stop=False, **details):
        """:meth:`Machine.finding` with ``t`` counted among these lanes."""
        return self.m.finding(kind, message, ins, None if t is None else int(self.idx[t]),
                              stop, **details)

    @property
    def cc(self):
        v = self.m.cc
        return v if np.ndim(v) == 0 else v[self.idx]

    @cc.setter
    def cc(self, value):
        old = self.m.cc
        new = np.full(self.m.T, old) if np.ndim(old) == 0 else np.array(old, copy=True)
        new[self.idx] = value
        self.m.cc = new


class _ProgressStop(Exception):
    """An exception raised by a ``progress`` callback (carried as ``args[0]``)."""


def _dim3(v, what):
    if isinstance(v, (int, np.integer)):
        v = (int(v),)
    try:
        t = tuple(int(x) for x in v)
    except TypeError:
        raise SimulatorError(f"{what} must be an int or a tuple of up to 3 ints, got {v!r}") from None
    if not 1 <= len(t) <= 3 or any(x < 1 for x in t):
        raise SimulatorError(f"{what} must have 1-3 positive extents, got {v!r}")
    t = t + (1,) * (3 - len(t))
    limits = (2**31 - 1, 65535, 65535) if what == "grid" else (1024, 1024, 64)
    for x, lim, ax in zip(t, limits, "xyz"):
        if x > lim:
            raise SimulatorError(f"{what}.{ax} = {x} exceeds the limit {lim}")
    return t
