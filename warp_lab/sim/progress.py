"""Forward progress and hang detection of the SIMT engine (:mod:`~warp_lab.sim.machine`).

Forward progress: min-PC alone would let lanes spinning in a loop (waiting for a
flag another warp sets) starve every thread at a higher PC. The CUDA
Programming Guide ("Independent Thread Scheduling"; warps of a block all make
progress) guarantees the others run, so the engine counts taken backward
branches of loops that read memory (only those can wait for another thread;
``control.loop_may_wait``) while the batch is divergent or has yielded
threads, and every ``SPIN_QUANTUM`` of them hands the turn on
(:meth:`back_edge`): the
warps holding the looping lanes *yield* (status ``YIELD``, whole warps, so the
lanes of a warp still reconverge) while other warps can run; when no other
warp can, the yielded ones come back (round-robin). Only when a warp's own
lanes starve each other for ``INTRA_ROUNDS`` quanta (one quantum for a loop with
an atomic: a spin lock held by a lane of the same warp) do the looping lanes
yield alone; those quanta are counted per warp whenever other runnable lanes of the
warp wait behind the loopers, however the turn went on (``ForwardProgress.starve``), so
the lanes past a divergence point run even while two warps hand the turn back and forth.
A poll whose turn changed nothing (no thread wrote memory since its
branch was last taken: ``control.poll_turns_repeat``) ends its quantum at once, so
warps that wait for each other hand the turn on after about two turns, not 64.
Yielded threads also come back whenever nothing else is runnable.
A spin-wait that no thread of the batch can end any more (:meth:`spin_turn`;
polls in any number of loops, :meth:`poll_turn`) stops the launch with a
finding. Per-thread instruction counts do not depend on this;
warp-level counts only change for a loop that reads memory and keeps lanes of one warp
apart for over ``SPIN_QUANTUM * INTRA_ROUNDS`` iterations (``INTRA_ROUNDS`` turns that
changed nothing, for a poll).

:class:`ForwardProgress` holds this state for one batch (the engine makes one in
``Machine.start_batch``, as ``Machine.progress``): the turn counters, the looks at loops
and the polls' last turns. It reads and changes the engine's threads (status, pc,
``resume``) through the :class:`~warp_lab.sim.machine.Machine` it is given; the engine's
activity counters (``writes``, ``events``, ``changes``, ``last_write``) and its clock offset
(``clock_skew``) stay the engine's, kept by the instructions that change them.
"""

from __future__ import annotations

import numpy as np

from warp_lab.sim.control import deciding_loads, poll_clock, polled_loads
from warp_lab.sim.result import code_place
from warp_lab.sim.state import BARWAIT, EXITED, NO_PC as _BIG, PAD, RUN, WSYNC, YIELD
from warp_lab.sim.sync import release_barriers, release_warp_sync

__all__ = ["ForwardProgress", "SPIN_QUANTUM", "INTRA_ROUNDS", "IDLE_HANDOFF", "LOOP_CHECK",
           "SPIN_CHECK", "BATCH_CHECK", "CLOCK_LIMIT"]

#: taken backward branches (contended) after which the looping warps yield
SPIN_QUANTUM = 64
#: quanta a warp's looping lanes may starve its other lanes before they yield alone
INTRA_ROUNDS = 16
#: a poll whose turn changed nothing hands the turn on at once
#: (:meth:`ForwardProgress.back_edge`); False
#: gives the scheduling of quanta alone (benchmarks/spin_handoff.py's "before")
IDLE_HANDOFF = True
#: taken back-edges of a closed loop between two looks at its lanes' registers
LOOP_CHECK = 4096
#: taken back-edges of a spin-wait (a loop that reads memory and writes none but through
#: atomics) between two looks at the whole batch (:meth:`spin_turn`)
SPIN_CHECK = 256
#: taken back-edges of a loop closed but for barriers, warp-synchronous instructions and
#: shared memory between two looks at the whole batch (every turn of one runs a
#: collective over the batch, so a look costs little next to them)
BATCH_CHECK = 256
#: simulated cycles past which the clock is no longer advanced for a wait on it
#: (:meth:`clock_turn`): 2**62 cycles, 73 years at 2 GHz
CLOCK_LIMIT = 1 << 62

class ForwardProgress:
    """The forward-progress state of one batch of the engine ``m`` and what acts on it:
    turn hand-over (:meth:`back_edge`, :meth:`park`, :meth:`unpark`) and hang detection
    (:meth:`poll_turn`, :meth:`closed_loop_turn`, :meth:`spin_turn`, :meth:`clock_turn`),
    which stop the launch with an ``infinite_loop`` or ``co_residency`` finding.

    Args:
        m: the :class:`~warp_lab.sim.machine.Machine` whose batch this is (just set up).
    """

    def __init__(self, m):
        self.m = m
        self.spin = 0
        self.spin_rounds = 0
        # per warp of the batch: quanta its looping lanes ended while other runnable lanes
        # of the warp waited behind them (back_edge); reset only when none wait
        self.starve = np.zeros(m.T // 32, np.int32)
        self.loop_turns = {}    # loop back-edge pc -> closed_loop_turn's / spin_turn's state
        # per thread, for polls (poll_turn): writes + events when it last took a poll's
        # branch, when it last took one with none in between (a turn that changed
        # nothing), and that poll's pc; None until the first poll turn
        self.took = self.idled = self.poll_pc = None
        self.poll_jump = None   # poll_turn's clock jumps: (writes + events, factor, steps)

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
        m = self.m
        self.spin += 1
        if idle and IDLE_HANDOFF:
            self.spin = SPIN_QUANTUM
        if self.spin < SPIN_QUANTUM:
            return
        self.spin = 0
        m.diverge()
        run = m.status == RUN
        looping = run & (m.pc == target)
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
            self.park(looping & np.repeat(ripe, 32))
            return
        warps = np.repeat(looping_warps, 32)
        if (run & ~warps).any():
            self.park(run & warps)
        elif m.nyield:
            self.unpark()
        elif not self._release_arrived():
            self.spin_rounds += 1
            if self.spin_rounds >= (intra_rounds or INTRA_ROUNDS) and (run & ~looping).any():
                self.park(looping)

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
        m = self.m
        P = m.writes + m.events
        if self.took is None:
            self.took = np.full(m.T, -1, np.int64)
            self.idled = np.full(m.T, -1, np.int64)
            self.poll_pc = np.zeros(m.T, np.int32)
        if lanes is None:
            lanes = np.ones(m.T, bool)
        again = lanes & (self.took == P)
        self.took[lanes] = P
        if not again.any():
            # a first turn after the lanes' own write before the loop (a ping-pong's flag),
            # with no write since: it ran over memory as it is now, and changed nothing
            last = m.last_write
            return (last is not None and last[1] == P and not target <= last[2] <= ins.pc
                    and bool(lanes[last[0]].any()))
        self.idled[again] = P
        self.poll_pc[again] = ins.pc
        st = m.status
        moving = (st == RUN) | (st == YIELD)
        if (moving & (self.idled != P)).any() or self._release_arrived():
            return True
        # every live thread repeats a poll turn over unchanged memory, or waits
        code = m.mod.code
        loops = [code[q] for q in np.unique(self.poll_pc[moving]).tolist()]
        clocks = {poll_clock(c, m.mod) for c in loops}
        if clocks != {0}:
            self._jump_clock(ins, moving, P, 1 << 28 if 32 in clocks else None)
            return True
        if len(loops) == 1 and spin_checked and not m.nyield:
            return True   # (spin_turn's look says it with the loop's registers)
        self._report_spin(ins, target, moving, loops)
        return True

    def _jump_clock(self, ins, stuck, P: int, cap: int | None):
        """:meth:`poll_turn`'s clock jump for the polls ``stuck`` (bool over the batch),
        every one of which waits for memory no thread changes any more and some for the
        clock; ``P``: writes + events now. Stops the launch with an ``infinite_loop``
        finding once the clock went past :data:`CLOCK_LIMIT` (or 2**34 cycles of jumps on
        a 32-bit clock, ``cap`` set) with the polls still running."""
        m = self.m
        last, factor, steps, waited = self.poll_jump or (-1, 1, m.steps, 0)
        if last != P:    # something changed since the last jump: start afresh, one step
            factor, waited, steps = 1, 0, m.steps - 1
        waited, ahead = self._skip_clock(steps, factor, waited, cap)
        self.poll_jump = (P, factor * 2, m.steps, waited)
        if ahead is None:
            return
        n = int(np.count_nonzero(stuck))
        m.finding("infinite_loop", (
            f"infinite loop: {n} thread{'s' * (n > 1)} keep{'s' * (n == 1)} polling memory "
            f"that no thread changes any more in the loop at PTX line "
            f"{m.mod.code[ins.target].line}{' and others' * (self._npolls(stuck) > 1)}, "
            f"which also read{'s' * (self._npolls(stuck) == 1)} the clock: the simulator "
            f"advanced its clock {ahead} while nothing else ran, and the loop still runs, "
            "so its timeout never ends it (a wait whose condition never becomes true?)"),
            ins, int(np.argmax(stuck)), stop=True,
            clock_cycles=int(m.clock_skew + 4 * m.steps))

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
        m = self.m
        jump = 4 * max(m.steps - steps, 1) * factor
        jump = jump if cap is None else min(jump, cap)
        m.clock_skew += jump
        waited += jump
        if cap is None and m.clock_skew + 4 * m.steps < CLOCK_LIMIT or \
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
        m = self.m
        done = False
        if m.nwsync:
            done = release_warp_sync(m, m.status == WSYNC)
        waiting = m.status == BARWAIT
        if waiting.any():
            done = release_barriers(m, waiting) or done
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
        m = self.m
        # (spin_turn keeps ins.pc's turns)
        key = ("batch", ins.pc) if batch else ("inner", ins.pc) if outer else ins.pc
        turns, saved, since, looks, power = self.loop_turns.get(key, (0, None, 0, 0, 1))
        turns += 1
        if turns < (BATCH_CHECK if batch else LOOP_CHECK):
            self.loop_turns[key] = (turns, saved, since, looks, power)
            return
        st = m.status
        run = st == RUN
        pc = m._pcs()
        inside = run & (pc >= lo) & (pc <= hi)
        head = inside & (pc == target)
        since += turns
        if batch:   # lanes may be anywhere: the look holds the whole batch
            if not head.any() or m.nyield or m.arrive:   # (bar.arrive counts pending)
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
                tc = m.tcount
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
        loads = deciding_loads(ins, m.mod, own=outer is not None)
        said = (f"infinite loop: {n} thread{'s' if n > 1 else ''} came back to the loop "
                f"head at PTX line {m.mod.code[target].line} ")
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
            where = [code_place(c.line, *m.mod.source_of(c)) for c in loads]
            said += (f"; the loop reads no memory, and what decides whether it ends was "
                     f"loaded once before it ({'; '.join(where)}): either a loop variable "
                     "never advances, or the loop waits for another thread to write that "
                     "memory and the compiler moved the plain load out of the loop (it may "
                     "assume no other thread writes there): read such a flag with "
                     "wl.atomic_load(...) on every iteration")
        if batch:   # the rest of the batch, which the look held as well
            live = (m.status != EXITED) & (m.status != PAD)
            held = live & ((m.status == BARWAIT) | (m.status == WSYNC))
            pcs = m._pcs()
            run = live & (m.status == RUN) & ~head
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
        m.finding("infinite_loop", said, ins, int(np.argmax(head)), stop=True,
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
        m = self.m
        st = m.status
        pcs = np.where(st == RUN, m._pcs(), m.resume)
        wait = st == BARWAIT
        order = np.where(wait, m.barseq - m.waitseq, 0)
        outside = m.executed - int(m.tcount[lo:hi + 1].sum())
        return b"".join((st.tobytes(), pcs.tobytes(), np.where(wait, m.waitbar, 0).tobytes(),
                         np.where(wait, m.waitcnt, 0).tobytes(),
                         np.where(wait, m.waitpc, 0).tobytes(), order.tobytes(),
                         b"" if m.barred is None else m.barred.tobytes(),
                         m.shared.tobytes(),
                         np.minimum(self.starve, INTRA_ROUNDS).tobytes(),
                         repr((self.spin, min(self.spin_rounds, INTRA_ROUNDS), outside,
                               m.nlive)).encode()))

    def _loop_snapshot(self, head, regs: tuple, extra: bytes = b"") -> tuple:
        """What decides the future of lanes ``head`` (a bool mask) in a loop writing
        ``regs``: the lanes, their ``regs`` and local memory, the calls so far (lanes that
        leave a loop never come back to it in the same activation of its function: a
        path back would be a backward branch overlapping the loop, hence part of it; only
        a call can bring them back, a .func called twice at opt=0, in the same state at
        both looks, so a call in between voids the comparison), and ``extra``."""
        m = self.m
        snap = (head.tobytes() + m.calls.to_bytes(8, "little") + extra,
                [np.broadcast_to(m.regs[r], (m.T,))[head].copy() for r in regs])
        if m.local is not None:  # the loop may keep its variables there (opt=0)
            snap[1].append(m.local.reshape(m.T, -1)[head].copy())
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
        m = self.m
        turns, last = self.loop_turns.get(ins.pc, (0, None))
        turns += 1
        if turns < SPIN_CHECK:
            self.loop_turns[ins.pc] = (turns, last)
            return
        st = m.status
        run = st == RUN
        head = run & (m._pcs() == target)
        if m.nyield or not head.any() or (run & ~head).any() or (batch and m.arrive):
            self.loop_turns[ins.pc] = (0, None)
            return
        if batch:
            live = (st != EXITED) & (st != PAD)
            snap = self._loop_snapshot(live, regs, self._batch_state(lo, hi) +
                                       m.changes.to_bytes(8, "little"))
        else:
            snap = self._loop_snapshot(head, regs,
                                       st.tobytes() + m.events.to_bytes(8, "little"))
        self.loop_turns[ins.pc] = (0, snap)
        if _same_snapshot(last, snap):
            self._report_spin(ins, target, head)

    def clock_turn(self, ins, target: int, lo: int, hi: int, cap: int | None = None):
        """Lanes took back-edge ``ins`` (to ``target``) of a loop (code ``lo..hi``) closed but
        for reading the clock: a wait for time to pass (``while wl.clock64() - t0 < n``).

        The simulated clock counts 4 cycles per issue step
        (:meth:`~warp_lab.sim.machine.Machine.sreg`), so a wait of
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
        m = self.m
        key = ("clock", ins.pc)
        turns, factor, outside, steps, waited = self.loop_turns.get(
            key, (0, 1, -1, m.steps, 0))
        turns += 1
        if turns < SPIN_CHECK:
            self.loop_turns[key] = (turns, factor, outside, steps, waited)
            return
        run = m.status == RUN
        head = run & (m._pcs() == target)
        now = m.executed - int(m.tcount[lo:hi + 1].sum())
        if m.nyield or not head.any() or (run & ~head).any():
            self.loop_turns[key] = (0, 1, -1, m.steps, 0)
            return
        if now != outside:   # something else ran since the last look: start afresh
            factor, waited = 1, 0
        waited, ahead = self._skip_clock(steps, factor, waited, cap)
        self.loop_turns[key] = (0, factor * 2, now, m.steps, waited)
        if ahead is None:
            return
        n = int(np.count_nonzero(head))
        m.finding("infinite_loop", (
            f"infinite loop: {n} thread{'s' * (n > 1)} keep{'s' * (n == 1)} running the loop "
            f"at PTX line {m.mod.code[target].line}, which does nothing but read the clock "
            f"(wl.clock64()) and registers: the simulator advanced its clock {ahead} while "
            "nothing else ran, and the loop still runs, so it does not end when time passes "
            "(a wait whose condition never becomes true, or a variable that never "
            "advances?)"), ins, int(np.argmax(head)), stop=True,
            clock_cycles=int(m.clock_skew + 4 * m.steps))

    def _report_spin(self, ins, target, head, loops=None):
        """The finding (which stops the launch) for :meth:`spin_turn`'s stuck batch, or
        :meth:`poll_turn`'s: ``loops``, the back-edges of the polls the threads ``head``
        (bool over the batch; the running and yielded ones) went round with nothing
        changed."""
        m = self.m
        code = m.mod.code
        n = int(np.count_nonzero(head))
        st = m.status
        nwait = int(np.count_nonzero((st == BARWAIT) | (st == WSYNC)))
        t = int(np.argmax(head))
        if loops is None:
            polls = polled_loads(ins, m.mod)
            lines = f"PTX line {code[target].line}"
            same = f"every register it writes unchanged after {SPIN_CHECK} more iterations"
        else:   # (the code each poll's branch closes: a loop around it may write memory)
            polls = tuple(c for b in loops for c in polled_loads(b, m.mod, own=True))
            places = [code_place(code[b.target].line, *m.mod.source_of(code[b.target]))
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
        if m.next_block >= m.nblocks:
            if not nwait:
                said = (f"infinite loop: every live thread of the launch ({n}) waits in {loop}, "
                        f"with {same}: no thread is left to write what they wait for (a flag "
                        "no thread sets, or one a thread sets only after the wait?)")
            else:
                said = (f"infinite loop: {n} thread{'s' * (n > 1)} wait in {loop}, with "
                        f"{same}{waiting}: no thread is left to write what they wait for (a "
                        "flag no thread sets, or one a thread sets only after the wait or "
                        "after that barrier?)")
            m.finding("infinite_loop", said, ins, t, stop=True, **details)
            return
        spinning = np.unique(m.blk[head]) + m.first_block
        left = m.nblocks - m.next_block
        running = self._blocks_text(range(m.first_block, m.next_block))
        said = (f"{n} thread{'s' * (n > 1)} of {self._blocks_text(spinning)} "
                f"spin{'s' * (n == 1)} in {loop}, with {same}{waiting}: no thread of the "
                f"running {running} writes what {'they wait' if n > 1 else 'it waits'} for any "
                f"more, only a block that "
                f"has not started could (or no thread ever does). "
                f"{self._blocks_text(range(m.next_block, m.nblocks)).capitalize()} "
                f"({left} of "
                f"{m.nblocks}) start{'s' * (left == 1)} only after these end: the "
                f"{m.batch_runner} runs {m.bpb} block{'s' * (m.bpb > 1)} at a time, "
                "a GPU as many as fit on its SMs. CUDA does not guarantee that a grid's "
                "blocks run at the same time or in any order (Programming Guide: thread "
                "blocks must be able to execute independently; only a cooperative launch "
                "makes them all resident at once), so on a GPU this can hang too. Let a "
                "block wait only for blocks that have already started (number the blocks in "
                "the order they start with an atomic counter, as decoupled look-back scans "
                "do), or split the work into two kernel launches")
        details.update(blocks_not_started=left, blocks_at_a_time=m.bpb)
        m.finding("co_residency", said, ins, t, stop=True, **details)

    def _blocks_text(self, linear) -> str:
        """``"block 3"``, ``"blocks 0 and 1"``, ``"blocks 0 to 63"``, ``"blocks 0, 2 and
        5"`` for linear block indices ``linear`` (sorted, none repeated); a block of a 2-D
        or 3-D grid is named by its ``(x, y, z)`` index (x fastest), and a run of them is
        said to be in launch order, which is no rectangle of the grid."""
        m = self.m
        ids = [int(b) for b in linear]
        one_d = m.grid[1] == m.grid[2] == 1

        def name(b):
            return str(b) if one_d else str(m._block_index(b))
        order = "" if one_d else " in launch order (x fastest)"
        if len(ids) == 1:
            return f"block {name(ids[0])}"
        contiguous = ids[-1] - ids[0] == len(ids) - 1
        if len(ids) <= 4 and (len(ids) == 2 or not one_d or not contiguous):
            return f"blocks {', '.join(map(name, ids[:-1]))} and {name(ids[-1])}"
        if contiguous:
            return f"blocks {name(ids[0])} to {name(ids[-1])}{order}"
        return f"{len(ids)} blocks from {name(ids[0])} to {name(ids[-1])}{order}"

    def park(self, lanes):
        """Lanes ``lanes`` (runnable) yield: not scheduled until :meth:`unpark`."""
        m = self.m
        m.resume[lanes] = m.pc[lanes]
        m.pc[lanes] = _BIG
        m.status[lanes] = YIELD
        m.nyield = int(np.count_nonzero(m.status == YIELD))
        self.spin_rounds = 0
        m.recount()

    def unpark(self) -> bool:
        """Make every yielded thread runnable again; True if there was one."""
        m = self.m
        if not m.nyield:
            return False
        back = m.status == YIELD
        m.status[back] = RUN
        m.pc[back] = m.resume[back]
        m.nyield = 0
        self.spin = 0
        self.spin_rounds = 0
        m.recount()
        return True


def _same_snapshot(last, snap) -> bool:
    """Whether two :meth:`ForwardProgress._loop_snapshot` results are equal (``last`` may be
    None)."""
    return last is not None and last[0] == snap[0] and len(last[1]) == len(snap[1]) and all(
        np.array_equal(a, b) for a, b in zip(last[1], snap[1]))
