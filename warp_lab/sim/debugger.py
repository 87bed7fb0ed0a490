"""Step through a simulated launch: breakpoints, single steps, warp inspection, step back.

    from warp_lab import sim
    dbg = sim.Debugger(mod, "reduce", grid=2, block=256, params=buf, memory=mem)
    dbg.add_breakpoint(source_line=14, block=(1, 0, 0))   # or ptx_line=..., thread=(x, y, z)
    stop = dbg.cont()                # runs to the breakpoint; None when the launch ended
    w = dbg.warp(block=(1, 0, 0), warp=0)
    w.registers["%r5"], w.predicates["%p1"], w.active, w.pc, w.ptx_line
    dbg.read_memory(addr, n); dbg.read_shared(block, off, n); dbg.read_local(block, thread, off, n)
    dbg.step(); dbg.step_back()      # step back replays the launch deterministically
    res = dbg.run_to_end()           # the SimResult

The debugger runs one block per batch (``batch_blocks=1``), so "the current
block" is always well defined; a launch's results do not depend on the batch
size. Execution is deterministic (clocks count steps, atomics apply in lane
order), so :meth:`Debugger.step_back` re-runs the launch from a snapshot of
global memory to the previous step.

Ctrl-C (SIGINT, a notebook's "interrupt the kernel") during :meth:`Debugger.step`,
``cont``, ``step_back``, ``restart`` or ``run_to_end`` stops between two steps, never
inside one: an instruction is executed whole or not at all (an atomic interrupted
after its memory update but before its program counter moved would otherwise run
twice), so the session goes on from a consistent state.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from dataclasses import dataclass, field

import numpy as np

from warp_lab.errors import LaunchInterrupted, SimulatorError
from warp_lab.sim.machine import Machine
from warp_lab.sim.state import BARWAIT, EXITED, PAD, RUN, WSYNC, YIELD
from warp_lab.sim.ptx import type_dtype
from warp_lab.sim.result import Finding

__all__ = ["Debugger", "Breakpoint", "Stop", "WarpState", "format_lane_value"]

#: steps run between two looks for a held Ctrl-C when a batch runs at full speed
#: (a few milliseconds of simulation: the interrupt still feels immediate)
_CHUNK_STEPS = 1024

_STATUS = {RUN: "running", EXITED: "exited", BARWAIT: "at barrier", PAD: "absent",
           WSYNC: "at warp sync", YIELD: "yielded"}


@dataclass(frozen=True)
class Breakpoint:
    """Stop before an instruction on ``ptx_line`` or from source line ``source_line``
    (``.loc``; ``source_file`` optional), executed by a lane of ``block`` / ``thread``
    (``None``: any)."""

    id: int
    ptx_line: int | None = None
    source_line: int | None = None
    source_file: str | None = None
    block: tuple | None = None
    thread: tuple | None = None


@dataclass(frozen=True, repr=False)
class Stop:
    """Where execution stands: the *next* instruction to run.

    Attributes:
        step: steps executed so far.
        ptx_line, text: the next instruction's PTX line and text.
        source_file, source_line: its ``.loc`` (``""``/0 if none).
        block: the block running it.
        lanes: how many threads of that block execute it (all its warps' active lanes
            together: 256 for a whole 256-thread block, not at most 32).
        breakpoint: the :class:`Breakpoint` that stopped execution, else ``None``.
    """

    step: int
    ptx_line: int
    text: str
    source_file: str
    source_line: int
    block: tuple
    lanes: int
    breakpoint: Breakpoint | None = None

    def __repr__(self) -> str:
        # the cell as messages name it (In[3], not <cell 3>), what a notebook shows
        from warp_lab.sim.result import code_place

        who = f"{self.lanes} thread{'s' if self.lanes != 1 else ''} of block {self.block}"
        why = f", at breakpoint {self.breakpoint.id}" if self.breakpoint else ""
        return (f"<Stop before {code_place(self.ptx_line, self.source_file, self.source_line)}"
                f": {' '.join(self.text.split())!r}, {who}, after {self.step} steps{why}>")

    @property
    def finished(self) -> bool:
        """False: the launch goes on (``wl.debug``'s session returns a falsy
        ``LaunchEnded`` with ``finished`` True once it has ended; this debugger, None)."""
        return False


@dataclass
class WarpState:
    """A warp's 32 lanes at the current position.

    Attributes:
        block, warp: which warp.
        registers: PTX register name → 32 values typed by the declared type
            (``.b``/``.u`` unsigned, ``.s`` signed, ``.f`` float); the function's
            own registers (not scoped inline-assembly temporaries).
        raw: register name → 32 raw bit patterns (uint).
        predicates: predicate register name → 32 bools.
        active: the lanes that execute the next instruction.
        pc: per lane program counter (index into the module's instructions).
        ptx_line: per lane PTX line of its next instruction.
        status: per lane ``"running"``, ``"at barrier"``, ``"at warp sync"`` (waiting
            for its membermask at ``shfl.sync`` and the like), ``"yielded"`` (gave the
            turn to other warps in a long loop; runnable again later), ``"exited"`` or
            ``"absent"`` (past the end of a partial block).
        function: the PTX function the warp is in.
        notes: register name → ``(ptx_type, what)`` that the caller knows (the
            notebook debugger: the type the instructions use, the parameter or
            Python line behind it); used by the text form only.
        written: register name (predicates too) → 32 bools, False for a lane where no
            instruction has written the register yet (its value is undefined in PTX; the
            simulator holds 0). Empty when not tracked (then every value counts as set).

    ``print(state)`` (``str``/``repr``) is a table of one row per register: its type,
    what it holds and the 32 lanes' values (uniform values and ramps shortened, floats
    to 6 digits, predicates ``T``/``F``, lanes that do not execute the next instruction
    in brackets, lanes that have not written the register yet ``—``). The arrays above stay
    as they are.
    """

    block: tuple
    warp: int
    registers: dict
    raw: dict
    predicates: dict
    active: np.ndarray
    pc: np.ndarray
    ptx_line: np.ndarray
    status: list
    function: str = ""
    notes: dict = field(default_factory=dict)
    written: dict = field(default_factory=dict)

    def is_set(self, name: str) -> np.ndarray:
        """The 32 lanes where register ``name`` has been written (all True when not tracked)."""
        w = self.written.get(name)
        return np.ones(32, bool) if w is None else w

    def typed(self, name: str) -> tuple[np.ndarray, str]:
        """Register ``name``'s 32 values as its note's type says (else as declared), and
        that type (``"pred"`` for a predicate)."""
        if name in self.predicates:
            return self.predicates[name], "pred"
        ptx_type = self.notes.get(name, ("", ""))[0]
        if ptx_type and ptx_type != "pred":
            try:
                return self.as_type(name, ptx_type), ptx_type
            except SimulatorError:
                pass
        values = self.registers[name]
        return values, f"{values.dtype.kind.replace('i', 's')}{8 * values.dtype.itemsize}"

    def __repr__(self) -> str:
        marks = {"running": "·", "at barrier": "⏸", "at warp sync": "⏸", "yielded": "↻",
                 "exited": "×", "absent": " "}
        lanes = "".join("●" if a else marks.get(s, "?") for a, s in zip(self.active, self.status))
        where = f", {self.function}" if self.function else ""
        head = [f"warp {self.warp} of block {self.block}{where}: "
                f"{int(np.count_nonzero(self.active))} of 32 lanes execute the next instruction",
                f"lanes 0..31  {lanes}  (● next, · other path, ⏸ waiting, ↻ yielded, "
                "× exited)"]
        rows, unused = [], []
        for name in [*self.predicates, *self.registers]:
            if self.notes and name not in self.notes:  # declared, but no instruction writes it
                unused.append(name)
                continue
            values, ptx_type = self.typed(name)
            what = self.notes.get(name, ("", ""))[1]
            rows.append((name, ptx_type, what,
                         _lane_values(values, self.active, self.is_set(name))))
        if not rows:
            return "\n".join(head + ["(no registers)"])
        w_name = max(len("register"), *(len(r[0]) for r in rows))
        w_what = min(max(len(r[2]) for r in rows), 40)
        out = head + [f"{'register':<{w_name}}  type  {'holds':<{w_what}}  values"]
        for name, ptx_type, what, vals in rows:
            what = what if len(what) <= w_what else what[: w_what - 1] + "…"
            lead = f"{name:<{w_name}}  {ptx_type:<4}  {what:<{w_what}}  "
            out.append(lead + vals[0])
            out += [" " * len(lead) + v for v in vals[1:]]
        if unused:
            out.append(f"(not written by any instruction: {', '.join(unused)})")
        return "\n".join(out)

    __str__ = __repr__

    def as_type(self, name: str, ptx_type: str) -> np.ndarray:
        """Register ``name`` reinterpreted as PTX type ``ptx_type`` (e.g. ``"f32"``).

        Args:
            name: a register of this warp's function (``"%r1"``; see ``raw``).
            ptx_type: a PTX fundamental type suffix (PTX ISA 5.2.2): ``b8``..``b64``,
                ``u8``..``u64``, ``s8``..``s64``, ``f16``, ``f32``, ``f64``.

        Returns:
            the 32 lanes' values, shape ``(32,)``.

        Raises:
            SimulatorError: an unknown register or type (the message lists what exists).
        """
        try:
            dt = type_dtype(ptx_type)
        except (KeyError, TypeError):
            from warp_lab.sim.ptx_syntax import _TYPES
            known = ", ".join(t for t in _TYPES if t != "pred")
            raise SimulatorError(f"as_type: unknown PTX type {ptx_type!r}; use one of "
                                 f"{known}") from None
        raw = self.raw.get(name) if isinstance(name, str) else None
        if raw is None:
            regs = list(self.raw)
            shown = ", ".join(regs[:12]) + (", ..." if len(regs) > 12 else "")
            raise SimulatorError(f"as_type: this warp's function has no register {name!r}"
                                 f" (registers: {shown or 'none'})")
        if raw.dtype.itemsize != dt.itemsize:
            raw = raw.astype(np.dtype(f"u{dt.itemsize}"))
        return raw.view(dt)


class Debugger:
    """Interactive control of one launch (same arguments as :func:`warp_lab.sim.run`).

    Args:
        module: :class:`~warp_lab.sim.ptx.PtxModule` or PTX text.
        kernel, grid, block, params, memory, dynamic_shared, checks: as for ``run``.
        batch_blocks: blocks simulated together (1 keeps "the current block" simple).
        not_statements: PTX line numbers (1-based) a source-line breakpoint passes by
            while its line has other instructions: code the compiler credited to a line
            it does not start (:func:`warp_lab.compiler.line_zero.attributed_lines`).

    Global memory is snapshotted at construction; :meth:`step_back` and
    :meth:`restart` restore it.
    """

    def __init__(self, module, kernel, grid, block, params, memory, dynamic_shared=0,
                 checks=("memcheck", "racecheck", "barrier"), batch_blocks: int = 1,
                 not_statements: frozenset = frozenset()):
        from warp_lab import sim
        self.module = sim.parse_module(module) if isinstance(module, str) else module
        self._args = (kernel, grid, block, params, memory, dynamic_shared, checks)
        self.memory = memory
        self._snapshot = memory.snapshot()
        self._batch_blocks = batch_blocks
        self._breakpoints: dict[int, Breakpoint] = {}
        self._next_id = 1
        self._not_statements = frozenset(not_statements)
        # ids of the breakpoints that pass by the not_statements lines
        self._passes_by: set[int] = set()
        self._held_interrupt = None   # (signum, frame) of a SIGINT held until a step ends
        self._outer_handler = None    # the SIGINT handler _between_steps replaced, meanwhile
        self.restart()

    # ---- lifecycle
    @contextlib.contextmanager
    def _between_steps(self):
        """Hold Ctrl-C (SIGINT) while the machine runs, and deliver it through the handler
        that was installed (normally Python's: ``KeyboardInterrupt``) only between two
        steps (:meth:`_interrupt_point`) or when the motion ends.

        Python runs a signal handler between any two bytecodes, so a plain
        ``KeyboardInterrupt`` can land inside an instruction's execution: its registers or
        memory written, its program counter not yet moved, and the next step runs it again
        (an ``atom.add`` twice). Outside the main thread (no signal handlers there) or when
        SIGINT is ignored or left at the operating system's default, nothing is held."""
        if self._outer_handler is not None or \
                threading.current_thread() is not threading.main_thread():
            yield   # nested in another motion (step_back restarts), or no handlers here
            return
        previous = signal.getsignal(signal.SIGINT)
        if not callable(previous):   # SIG_IGN, SIG_DFL or not set from Python
            yield
            return

        def hold(signum, frame):
            self._held_interrupt = (signum, frame)

        self._outer_handler = previous
        signal.signal(signal.SIGINT, hold)
        try:
            yield
            self._interrupt_point()   # one that came during the last step
        finally:
            signal.signal(signal.SIGINT, previous)
            self._outer_handler = self._held_interrupt = None

    def _interrupt_point(self):
        """Between two steps: deliver a Ctrl-C that :meth:`_between_steps` held, through
        the handler it replaced (raises ``KeyboardInterrupt`` for Python's)."""
        held = self._held_interrupt
        if held is not None and self._outer_handler is not None:
            self._held_interrupt = None
            self._outer_handler(*held)

    def restart(self):
        """Go back to the start of the launch (global memory restored)."""
        with self._between_steps():
            self._restart()

    def _restart(self):
        kernel, grid, block, params, memory, dyn, checks = self._args
        if getattr(self, "machine", None) is not None:
            self.machine.release()
        memory.restore(self._snapshot)
        m = Machine(self.module, kernel, grid, block, params, memory, dyn, checks, True, None,
                    batch_threads=1)
        m.track_written = True         # WarpState.written: registers not set yet show as such
        m.bpb = self._batch_blocks
        m.batch_runner = "debugger"    # (named by a co_residency finding)
        self.machine = m
        self.step_count = 0
        self.finished = False
        self._ensure()

    def _ensure(self):
        """Make sure a batch with work is loaded; sets :attr:`finished` when none is left."""
        m = self.machine
        while not self.finished:
            if m.T and m.peek() is not None:
                return
            if m.stop or not m.start_batch():
                self.finished = True
                return
            m._batch_done = False

    # ---- breakpoints
    def add_breakpoint(self, ptx_line: int | None = None, source_line: int | None = None,
                       source_file: str | None = None, block=None, thread=None) -> Breakpoint:
        """Add a breakpoint; returns it (its ``id`` removes it).

        Raises:
            SimulatorError: neither line given, no instruction on that line, or a
                ``block`` outside the grid / ``thread`` outside the block (it could
                never fire).
        """
        if ptx_line is None and source_line is None:
            raise SimulatorError("a breakpoint needs ptx_line or source_line")
        block, thread = self._block(block, "block"), self._thread(thread)
        code = self.module.code
        probe = Breakpoint(0, ptx_line, source_line, source_file)
        lines = {ins.line for ins in code if self._matches_line(probe, ins)}
        if not lines:
            where = f"PTX line {ptx_line}" if ptx_line is not None else f"source line {source_line}"
            raise SimulatorError(f"no instruction on {where}")
        bp = Breakpoint(self._next_id, ptx_line, source_line, source_file, block, thread)
        self._breakpoints[bp.id] = bp
        if ptx_line is None and lines - self._not_statements:
            self._passes_by.add(bp.id)
        self._next_id += 1
        return bp

    def remove_breakpoint(self, bp) -> None:
        """Remove a breakpoint (the object or its id)."""
        key = bp.id if isinstance(bp, Breakpoint) else bp
        self._breakpoints.pop(key, None)
        self._passes_by.discard(key)

    @property
    def breakpoints(self) -> list[Breakpoint]:
        """The breakpoints set, in the order they were added."""
        return list(self._breakpoints.values())

    def _matches_line(self, bp, ins) -> bool:
        if bp.ptx_line is not None and ins.line != bp.ptx_line:
            return False
        if bp.source_line is not None:
            f, line = self.module.source_of(ins)
            if line != bp.source_line:
                return False
            if bp.source_file is not None and not f.endswith(bp.source_file):
                return False
        return True

    def _hit(self, p, lanes):
        m = self.machine
        ins = self.module.code[p]
        for bp in self._breakpoints.values():
            if not self._matches_line(bp, ins) or (
                    bp.id in self._passes_by and ins.line in self._not_statements):
                continue
            if bp.block is None and bp.thread is None:
                return bp
            for t in np.flatnonzero(lanes)[:4096]:
                blk, thr = m.where(int(t))
                if (bp.block is None or blk == bp.block) and (bp.thread is None or thr == bp.thread):
                    return bp
        return None

    def _block(self, v, what: str):
        """``v`` as a block index ``(x, y, z)`` of the launch's grid (``None`` stays
        ``None``)."""
        return _index(v, self.machine.grid, what, "the grid")

    def _thread(self, v):
        """``v`` as a thread index ``(x, y, z)`` of a block (``None`` stays ``None``)."""
        return _index(v, self.machine.block, "thread", "the block")

    # ---- motion
    def where(self) -> Stop | None:
        """The next instruction to run, or ``None`` when the launch has finished."""
        return self._stop_info(None)

    def _stop_info(self, bp):
        if self.finished:
            return None
        m = self.machine
        nxt = m.peek()
        if nxt is None:
            return None
        p, lanes = nxt
        ins = self.module.code[p]
        f, line = self.module.source_of(ins)
        t = int(np.argmax(lanes))
        return Stop(self.step_count, ins.line, ins.text, f, line, m.where(t)[0],
                    int(np.count_nonzero(lanes)), bp)

    def step(self, n: int = 1) -> Stop | None:
        """Execute ``n`` instructions (each for the lanes scheduled together).

        Raises:
            SimulatorError: ``n`` is not an int >= 0.
        """
        _count(n, "step")
        with self._between_steps():
            for _ in range(n):
                if self.finished:
                    break
                self._interrupt_point()
                self.machine.step_once()
                self.step_count += 1
                self._ensure()
        return self.where()

    def cont(self, max_steps: int = 10_000_000) -> Stop | None:
        """Run until a breakpoint is about to execute (past the current position) or the
        launch ends (returns ``None``)."""
        first = True
        with self._between_steps():
            for _ in range(max_steps):
                if self.finished:
                    return None
                self._interrupt_point()
                if not first and not self._may_stop_in_batch():
                    self._finish_batch()
                    continue
                p, lanes = self.machine.peek()
                if not first:
                    bp = self._hit(p, lanes)
                    if bp is not None:
                        return self._stop_info(bp)
                first = False
                self.machine.step_once()
                self.step_count += 1
                self._ensure()
        return self.where()

    def _may_stop_in_batch(self) -> bool:
        """Whether a breakpoint could fire in the blocks being simulated now."""
        m = self.machine
        if not self._breakpoints:
            return False
        lo, hi = m.first_block, m.first_block + m.nb
        gx, gy = m.grid[0], m.grid[1]
        for bp in self._breakpoints.values():
            if bp.block is None:
                return True
            lin = bp.block[0] + gx * (bp.block[1] + gy * bp.block[2])
            if lo <= lin < hi:
                return True
        return False

    def _finish_batch(self):
        """Run the current batch to its end at full speed (no breakpoint can fire in it),
        :data:`_CHUNK_STEPS` steps at a time, a held Ctrl-C delivered between them."""
        m = self.machine
        with np.errstate(all="ignore"):
            while True:
                before = m.steps
                done = m.run_batch(limit=_CHUNK_STEPS)
                self.step_count += m.steps - before
                if done:
                    break
                self._interrupt_point()
        m._batch_done = True
        self._ensure()

    def step_back(self, n: int = 1) -> Stop | None:
        """Go back ``n`` steps by replaying the launch from the start.

        Raises:
            SimulatorError: ``n`` is not an int >= 0 (a negative one went forward).
        """
        _count(n, "step_back")
        target = max(0, self.step_count - n)
        with self._between_steps():
            self._restart()
            while self.step_count < target and not self.finished:
                self._interrupt_point()
                self.machine.step_once()
                self.step_count += 1
                self._ensure()
        return self.where()

    def run_to_end(self):
        """Run the rest of the launch without stopping; returns the SimResult.

        Raises:
            LaunchInterrupted: Ctrl-C (between two steps, :meth:`_between_steps`), as
                :func:`warp_lab.launch` raises it: a ``KeyboardInterrupt`` whose
                ``result`` is the SimResult so far (``partial=True``, an
                ``interrupted`` finding added to that copy). The session stands at a
                whole step and can go on.
        """
        m = self.machine
        try:
            with self._between_steps(), np.errstate(all="ignore"):
                while not self.finished:
                    self._interrupt_point()
                    if not m.step_once():
                        break
                    self.step_count += 1
                    self._ensure()
        except KeyboardInterrupt as exc:
            if isinstance(exc, LaunchInterrupted):
                raise
            res = self.result()
            res.findings = list(res.findings) + [Finding(
                "interrupted", f"the session was interrupted (KeyboardInterrupt) after "
                f"{self.step_count} steps; memory holds a partial result")]
            raise LaunchInterrupted(res) from exc
        self.finished = True
        return self.result()

    def result(self):
        """The :class:`~warp_lab.sim.result.SimResult` so far (``partial`` until the end)."""
        res = self.machine.result(0.0)
        if not self.finished:
            res.partial = True
        return res

    @property
    def findings(self):
        """The :class:`~warp_lab.sim.result.Finding` records of the launch so far."""
        return list(self.machine.findings)

    # ---- inspection
    def warp(self, block=(0, 0, 0), warp: int = 0) -> WarpState:
        """The state of warp ``warp`` of ``block`` (which must be in the current batch).

        Raises:
            SimulatorError: ``block`` is not a block index of the grid, the block is not
                being simulated now (it has finished or not started; run or step until
                it is; the launch has ended), or ``warp`` is not the number of one of its
                warps (an int, not a bool).
        """
        m = self.machine
        b = self._block(block, "block")
        lin = b[0] + m.grid[0] * (b[1] + m.grid[1] * b[2])
        k = lin - m.first_block
        if self.finished:
            raise SimulatorError(f"block {b} is not running now: the launch has finished "
                                 "(restart() or step_back() to go back into it)")
        if m.T == 0 or not 0 <= k < m.nb:
            raise SimulatorError(f"block {b} is not running now (current blocks "
                                 f"{m.first_block}..{m.first_block + m.nb - 1} in linear order)")
        if not isinstance(warp, (int, np.integer)) or isinstance(warp, bool):
            raise SimulatorError(f"warp must be the number of a warp of the block (an int "
                                 f"0..{m.wpb - 1}), got {warp!r}")
        if not 0 <= warp < m.wpb:
            raise SimulatorError(f"block has warps 0..{m.wpb - 1}, not {warp}")
        sl = slice(k * m.bs_pad + 32 * warp, k * m.bs_pad + 32 * warp + 32)
        nxt = m.peek()
        active = np.zeros(32, bool)
        if nxt is not None:
            active = np.asarray(nxt[1][sl], bool)
        pcs = np.full(32, m.upc, np.int32) if m.upc >= 0 else m.pc[sl].copy()
        pcs = np.where(m.status[sl] == RUN, pcs, m.resume[sl])
        code = self.module.code
        lines = np.array([code[int(q)].line if 0 <= q < len(code) else 0 for q in pcs])
        fname = code[int(pcs[active][0] if active.any() else pcs[0])].function \
            if len(code) else ""
        regs, raw, preds, written = {}, {}, {}, {}
        scopes = {}
        for idx, (fn, name) in enumerate(self.module.reg_names):
            if fn != fname or name in scopes:
                continue
            scopes[name] = idx
            if m.written is not None:
                written[name] = np.broadcast_to(m.written[idx], (m.T,))[sl].copy()
            v = np.broadcast_to(m.regs[idx], (m.T,))[sl].copy()
            typ = self.module.reg_types[idx]
            if typ == "pred":
                preds[name] = v.astype(bool)
                continue
            raw[name] = v
            regs[name] = v.view(type_dtype(typ)) if type_dtype(typ).itemsize == v.dtype.itemsize \
                else v
        status = [_STATUS[int(s)] for s in m.status[sl]]
        return WarpState(b, warp, regs, raw, preds, active, pcs, lines, status, fname,
                         written=written)

    def read_memory(self, address: int, nbytes: int) -> bytes:
        """Global memory bytes (see :meth:`GlobalMemory.read`).

        Raises:
            SimulatorError: ``nbytes`` < 0, or the range is not inside one allocation.
        """
        _count(nbytes, "read_memory", "nbytes")
        return self.memory.read(address, nbytes)

    def read_shared(self, block, offset: int, nbytes: int) -> bytes:
        """Shared memory bytes of ``block`` (in the current batch).

        Raises:
            SimulatorError: the block is not running now, or the range (``nbytes`` >= 0)
                is not inside the block's shared memory.
        """
        _count(nbytes, "read_shared", "nbytes")
        m = self.machine
        b = self._block(block, "block")
        k = b[0] + m.grid[0] * (b[1] + m.grid[1] * b[2]) - m.first_block
        if m.T == 0 or not 0 <= k < m.nb:
            raise SimulatorError(f"block {b} is not running now")
        if offset < 0 or offset + nbytes > m.shared_size:
            raise SimulatorError(f"shared range {offset}+{nbytes} outside {m.shared_size} bytes")
        base = k * m.shared_stride + offset
        return m.shared[base: base + nbytes].tobytes()


    def read_local(self, block, thread, offset: int, nbytes: int) -> bytes:
        """Local memory bytes (the ``.local`` depot) of one thread of a block in the batch.

        Raises:
            SimulatorError: the thread is not running now, or the range (``nbytes`` >= 0)
                is not inside its local memory.
        """
        _count(nbytes, "read_local", "nbytes")
        m = self.machine
        b, t = self._block(block, "block"), self._thread(thread)
        k = b[0] + m.grid[0] * (b[1] + m.grid[1] * b[2]) - m.first_block
        lin = t[0] + m.block[0] * (t[1] + m.block[1] * t[2])
        if m.T == 0 or not 0 <= k < m.nb or not 0 <= lin < m.bs:
            raise SimulatorError(f"thread {t} of block {b} is not running now")
        if m.local is None or offset < 0 or offset + nbytes > m.local_size:
            raise SimulatorError(f"local range {offset}+{nbytes} outside {m.local_size} bytes")
        base = (k * m.bs_pad + lin) * m.local_size + offset
        return m.local[base: base + nbytes].tobytes()


def format_lane_value(v) -> str:
    """One lane's register value as the lane tables (text and HTML) show it: a predicate
    ``T``/``F``, a float to 6 significant digits, an integer of 2**32 or more in hex (a
    64-bit value that large is an address: global memory starts at ``GLOBAL_BASE`` =
    ``0x100000000000``, shared and local windows above it), else in decimal."""
    if isinstance(v, (bool, np.bool_)):
        return "T" if v else "F"
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.6g}"
    return f"{int(v):#x}" if abs(int(v)) >= 1 << 32 else str(int(v))  # 64-bit: addresses


#: a lane's register that no instruction has written yet (PTX leaves it undefined), in the
#: text and HTML lane tables
NOT_SET = "—"


def _lane_values(values, active, is_set=None) -> list[str]:
    """32 lane values as text lines: ``v ×32`` when all equal, ``a, b, … z (step d)`` for an
    integer ramp, else four rows of eight (lanes not executing the next instruction in
    brackets; lanes where ``is_set`` is False, not written yet, :data:`NOT_SET`)."""
    text = [format_lane_value(v) for v in values]
    if is_set is not None and not is_set.all():
        text = [t if ok else NOT_SET for t, ok in zip(text, is_set)]
    if len(set(text)) == 1:
        return [f"{text[0]} ×{len(text)}"]
    if values.dtype.kind in "iu" and len(values) > 2 and (is_set is None or is_set.all()):
        step = int(values[1]) - int(values[0])
        if step and all(int(values[k + 1]) - int(values[k]) == step
                        for k in range(len(values) - 1)):
            return [f"{text[0]}, {text[1]}, {text[2]} … {text[-1]} (step {step})"]
    shown = [t if a else f"[{t}]" for t, a in zip(text, active)]
    width = max(len(t) for t in shown)
    return [f"{k:>2}-{k + 7:<2} " + " ".join(f"{t:>{width}}" for t in shown[k:k + 8])
            for k in range(0, len(shown), 8)]


def _index(v, extent, what: str, within: str):
    """``v`` (an int or a tuple of 1-3 ints; ``None`` stays ``None``) as an index ``(x, y,
    z)`` inside ``extent`` (the grid or block dimensions).

    Raises:
        SimulatorError: not ints, more than three, or outside ``extent``.
    """
    if v is None:
        return None
    t = (v,) if isinstance(v, (int, np.integer)) else v
    if not isinstance(t, (tuple, list)) or not 1 <= len(t) <= 3 or not all(
            isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in t):
        raise SimulatorError(f"{what} must be an int or a tuple of 1-3 ints, got {v!r}")
    t = tuple(int(x) for x in t) + (0,) * (3 - len(t))
    if not all(0 <= x < n for x, n in zip(t, extent)):
        raise SimulatorError(f"{what} {t} is outside {within} {tuple(extent)}")
    return t


def _count(n, method: str, name: str = "n") -> None:
    """Refuse a count that is not an int >= 0 (a negative step count went the other way,
    a negative byte count read the rest of the buffer)."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
        raise SimulatorError(f"{method}: {name} must be an int >= 0, got {n!r}")
