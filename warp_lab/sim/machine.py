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

Forward progress (yielding warps so that spinning lanes do not starve others) and hang
detection (loops and spin-waits nothing can end) are :mod:`warp_lab.sim.progress`'s: a
``ForwardProgress`` per batch, ``Machine.progress``.

Barriers: a thread reaching ``bar.sync`` waits; a block's barrier completes
when its waiting threads (plus ``bar.arrive`` arrivals) reach the expected
count, exited threads counting as arrived (PTX ISA "bar, barrier": sm_70+
semantics). Completion is decided when nothing else in the batch can run,
which is an allowed schedule because threads of a block cannot pass a barrier
before it completes anyway, or, while lanes spin in a loop that reads memory, at
their turn hand-over
(:meth:`~warp_lab.sim.progress.ForwardProgress.back_edge`): they may wait for a flag
another block sets after its barrier, which a GPU's co-resident blocks would set.
"""

from __future__ import annotations

import time

import numpy as np

from warp_lab.errors import LaunchInterrupted, SimulatorError
from warp_lab.sim.dispatch import build
from warp_lab.sim.printf import fifo_overwritten
from warp_lab.sim.progress import ForwardProgress
from warp_lab.sim.result import Finding, Metrics, MemoryLineStats, SimResult, instruction_class
from warp_lab.sim.state import BARWAIT, CHECKS, NO_PC as _BIG, PAD, RUN, WSYNC
from warp_lab.sim.sync import (barrier_deadlock, release_barriers, release_warp_sync,
                               warp_sync_deadlock)

__all__ = ["Machine", "FILL", "fresh_memory"]

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
        self.printf_bytes: list[int] = []   # each call's printf FIFO record (sim/printf.py)
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
        # (racecheck's records: racecheck.bookkeeping_per_byte, plus a 128-byte row of
        # per-lane read clocks for each word or byte whose readers read at different
        # warp-sync clocks, made on demand: not counted here; initcheck keeps one byte
        # per shared byte)
        bpb = max(1, min(self.nblocks, batch_threads // self.bs_pad))
        if self.shared_stride:
            from warp_lab.sim.racecheck import bookkeeping_per_byte, has_fence_sync
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
        """Address of a variable in its own state space (what ``mov d, var`` yields). A
        kernel parameter's is its offset in the launch's parameter buffer: PTX ISA 5.1.6.1
        "Kernel Function Parameters": "the address of a kernel parameter may be moved into
        a register using the mov instruction. The resulting address is in the .param state
        space and is accessed using ld.param instructions" (LLVM does this for a select
        between two by-value array parameters, ``a if flag else b``)."""
        try:
            return self.sym[name]
        except KeyError:
            if name in self.kparams:
                return self.kparams[name][0]
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
        self.progress = ForwardProgress(self)   # turn hand-over and hang detection
        # the last store or memory-changing atomic: its threads (indices), writes + events
        # after it, its pc (poll_turn)
        self.last_write = None
        self.calls = 0          # calls executed (closed_loop_turn)
        self.race = None
        if "racecheck" in self.checks and self.shared_size:
            from warp_lab.sim.racecheck import RaceTracker
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
        if self.progress.unpark():
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
        lost = fifo_overwritten(self.printf_bytes)
        res = SimResult(printed="".join(self.printed), instructions=int(self.executed),
                        printf_calls=len(self.printed), printf_bytes=sum(self.printf_bytes),
                        printf_overwritten=lost,
                        printf_overwritten_chars=sum(map(len, self.printed[:lost])),
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
