"""Control flow: ``bra``, ``ret``, ``exit``, ``call``, ``trap`` (PTX ISA 9.7.12).

Control builders return ``exec(machine, act, pc)``; they evaluate their own
guard predicate and move the program counters of the lanes in ``act``.
Calls to ``.func`` device functions copy the caller's ``.param`` arguments
to the callee's parameters and remember a per-thread return address per
function (recursion is not supported). ``vprintf`` and ``__assertfail`` are
simulator built-ins.
"""

from __future__ import annotations

import numpy as np

from warp_lab.errors import SimulatorError
from warp_lab.sim.state import EXITED, PAD, RUN
from warp_lab.sim.provenance import thread_private
from warp_lab.sim.ptx import cached_on

__all__ = ["CONTROL", "ALL", "guard_mask", "transfer", "loop_may_wait", "polled_loads",
           "poll_turns_repeat"]

ALL = object()  # "every lane of act"


def guard_mask(m, ins, act):
    """The lanes of ``act`` whose guard holds: ``ALL``, ``None`` (no lane) or a bool array."""
    g = ins.guard
    if g is None:
        return ALL
    pv = m.regs[g[0]]
    if g[1]:
        pv = ~pv
    if np.ndim(pv) == 0:
        return ALL if pv else None
    return pv if act is None else (act & pv)


def transfer(m, act, eff, p, newpc):
    """Send the lanes ``eff`` of ``act`` to ``newpc`` (int or per-thread array); the
    rest of ``act`` falls through to ``p + 1``."""
    scalar = np.ndim(newpc) == 0
    if eff is None:
        eff_n = 0
    elif eff is ALL:
        eff_n = -1
    else:
        eff_n = int(np.count_nonzero(eff))
    if m.upc >= 0:
        if eff_n == 0:
            m.upc = p + 1
            return
        if scalar and (eff_n == -1 or eff_n == m.unact):
            m.upc = int(newpc)
            return
        m.diverge()
    a = act if act is not None else np.ones(m.T, bool)
    if eff_n == 0:
        m.pc[a] = p + 1
        return
    if eff is ALL:
        eff = a
    elif eff_n != -1:
        m.pc[a] = p + 1
    m.pc[eff] = newpc if scalar else newpc[eff]


def _count_divergence(m, ins, act, eff):
    if not m.collect or eff is ALL or eff is None:
        return
    a = act if act is not None else np.ones(m.T, bool)
    ta = (a & eff).reshape(-1, 32).sum(1)
    aa = a.reshape(-1, 32).sum(1)
    n = int(np.count_nonzero((ta > 0) & (ta < aa)))
    if n:
        met = m.metrics
        met.divergent_branches += n
        met.divergent_branches_per_line[ins.line] = met.divergent_branches_per_line.get(
            ins.line, 0) + n


def _bra(ins, mod):
    if not isinstance(ins.target, int):
        raise SimulatorError(f"PTX line {ins.line}: indirect branch {ins.text!r} is not supported",
                             ptx_line=ins.line)
    target = ins.target

    def ex(m, act, p):
        eff = guard_mask(m, ins, act)
        _count_divergence(m, ins, act, eff)
        transfer(m, act, eff, p, target)
        return eff   # (the engine ignores it; ex_back reads it)

    if target > ins.pc:
        return ex
    lo, hi = _loop_range(ins, mod)
    # an inner loop closed by itself in an outer loop that is not (the outer one touches
    # memory): looked at while no thread runs the rest of the outer loop
    inner = closed_loop_registers(ins, mod, own=True) if (lo, hi) != (target, ins.pc) \
        else None
    if not loop_may_wait(ins, mod):
        regs = closed_loop_registers(ins, mod)
        batch = regs is None
        if batch:   # barriers or warp-synchronous instructions in it: the whole batch's
            regs = closed_loop_registers(ins, mod, batch=True)
        if regs is None and inner is not None:
            def ex_inner(m, act, p):
                if ex(m, act, p) is not None:
                    m.progress.closed_loop_turn(ins, target, target, ins.pc, inner, outer=(lo, hi))
            return ex_inner
        if regs is None:
            # a wait on the clock (while wl.clock64() - t0 < n): closed but for reading it
            timed = closed_loop_registers(ins, mod, clock=True)
            if timed is None:
                timed = closed_loop_registers(ins, mod, batch=True, clock=True)
            if timed is None:
                return ex
            # a 32-bit clock wraps every 2**32 cycles: jump less than that at a time
            cap = 1 << 28 if any(s[0] == "s" and s[1] in ("clock", "globaltimer_lo")
                                 for c in mod.code[lo:hi + 1] for s in c.srcs) else None

            def ex_timed(m, act, p):
                if ex(m, act, p) is not None:
                    m.progress.clock_turn(ins, target, lo, hi, cap)
            return ex_timed

        def ex_closed(m, act, p):
            # a loop that can only end by itself: every LOOP_CHECK turns, see whether the
            # lanes came back to its head unchanged (then it never ends)
            if ex(m, act, p) is not None:
                m.progress.closed_loop_turn(ins, target, lo, hi, regs, batch)
        return ex_closed
    intra = 1 if loop_has_atomic(ins, mod) else None
    # a poll (ld/atom, compare, branch back) whose turn repeats itself while no memory
    # changes: it hands the turn on as soon as a turn changed nothing (ForwardProgress.poll_turn)
    poll = poll_turns_repeat(ins, mod)
    reads = closed_loop_registers(ins, mod, loads=True)   # a loop that only reads memory
    # else one that reads and writes shared memory, between barriers, say
    whole = closed_loop_registers(ins, mod, batch=True) if reads is None else None
    # else a spin-wait with collectives in it (while not wl.all_sync(mask, flag == 1))
    polls = closed_loop_registers(ins, mod, loads=True, batch=True) \
        if reads is None and whole is None else None
    # (a lone spin with nothing yielded that spin_turn looks at is left to it)
    poll = (target, reads is not None) if poll else None

    def ex_back(m, act, p):
        # an iteration of a loop that reads memory (it may be waiting for another
        # thread): while other threads wait (diverged, at a barrier or a warp-sync) or
        # yielded, count it towards handing the turn on (forward progress,
        # ForwardProgress.back_edge)
        eff = ex(m, act, p)
        if eff is None:
            return
        idle = poll and m.progress.poll_turn(ins, act if eff is ALL else eff, *poll)
        if m.upc < 0 or m.nyield or m.nwsync or m.waiters.any():
            m.progress.back_edge(target, intra, idle)
        if inner is not None:
            m.progress.closed_loop_turn(ins, target, target, ins.pc, inner, outer=(lo, hi))
        if reads is not None:
            # a spin-wait: if every running thread of the batch spins here and every
            # other one waits for them, no thread of the batch can end the wait
            m.progress.spin_turn(ins, target, reads, lo, hi)
        elif whole is not None:
            m.progress.closed_loop_turn(ins, target, lo, hi, whole, batch=True)
        elif polls is not None:
            m.progress.spin_turn(ins, target, polls, lo, hi, batch=True)
    return ex_back


def _backward_edges(fn, code):
    """``(target, pc)`` of every backward branch (``bra``, ``brx`` table entries) of ``fn``
    that lies on a cycle: ``pc`` is reachable from ``target``. A backward branch on no
    cycle (at opt=0 LLVM lays a loop's exit block out before the loop and jumps back to
    it from the loop's exit) closes no loop, and would make the loop's range take in the
    exit block's code (cached on ``fn``)."""
    def compute():
        out = []
        for c in code[fn.start:fn.end]:
            if c.op == "bra" and isinstance(c.target, int) and c.target <= c.pc:
                out.append((c.target, c.pc))
            elif c.op == "brx" and isinstance(c.target, list):
                out.extend((t, c.pc) for t in c.target if t <= c.pc)
        return [e for e in out if _reaches(fn, code, *e)]
    return cached_on(fn, "_cycle_edges", compute)


def _reaches(fn, code, start: int, goal: int) -> bool:
    """Whether control can flow from code index ``start`` to ``goal`` inside function
    ``fn`` (calls return; an indirect branch may go anywhere)."""
    seen = np.zeros(fn.end - fn.start, bool)
    todo = [start]
    while todo:
        i = todo.pop()
        if i == goal:
            return True
        if not fn.start <= i < fn.end or seen[i - fn.start]:
            continue
        seen[i - fn.start] = True
        c = code[i]
        if c.op in ("bra", "brx"):
            targets = c.target if isinstance(c.target, list) else [c.target]
            if not all(isinstance(t, int) for t in targets):
                return True
            todo.extend(targets)
            if c.guard is None:
                continue
        elif c.op in ("ret", "exit", "trap") and c.guard is None:
            continue
        todo.append(i + 1)
    return False


def _reads_shared_state(c, mod) -> bool:
    """Whether ``c`` may observe what other threads write: a load from memory other
    threads can write (not ``.param``/``.const``, nor the thread's own local memory,
    :func:`~warp_lab.sim.provenance.thread_private`), an atomic, or a call."""
    if c.op in ("ld", "ldu"):
        return not any(s in c.mods for s in ("param", "const")) and not thread_private(mod, c)
    return c.op in ("atom", "call")


def _loop_range(ins, mod) -> tuple[int, int]:
    """``(lo, hi)`` code indices of the loop closed by backward branch ``ins``: every
    cycle of the control flow lies inside the union of overlapping ``[target, pc]``
    ranges of backward branches, so the loop is that union."""
    edges = _backward_edges(mod.functions[ins.function], mod.code)
    lo, hi = ins.target, ins.pc
    grown = True
    while grown:
        grown = False
        for t, p in edges:
            if t <= hi and p >= lo and (t < lo or p > hi):
                lo, hi, grown = min(lo, t), max(hi, p), True
    return lo, hi


def loop_may_wait(ins, mod) -> bool:
    """Whether the loop closed by backward branch ``ins`` may be waiting for another
    thread: some instruction in it reads memory other threads write (a loop that does
    not can only end by itself, so it never needs to yield, and pure-arithmetic
    divergent loops keep their lanes together however long they run)."""
    return bool(polled_loads(ins, mod))


#: instructions whose effect is not a function of the executing lane's registers alone:
#: memory accesses, other lanes or threads, calls, leaving the loop's function, the carry
#: flag (``CC.CF`` is not a register)
_OPEN_OPS = frozenset({"ld", "ldu", "st", "atom", "red", "call", "ret", "exit", "bar",
                       "barrier", "shfl", "vote", "match", "redux", "activemask", "trap",
                       "brkpt", "pmevent", "addc", "subc", "madc", "prefetch", "prefetchu"})
#: special registers that change by themselves
_TIME_SREGS = frozenset({"clock", "clock64", "globaltimer", "globaltimer_lo",
                         "globaltimer_hi"})


def _dst_registers(op, out: set) -> bool:
    """Add the register ids destination operand ``op`` writes to ``out``; False for a kind
    of destination this does not understand."""
    kind = op[0]
    if kind == "r":
        out.add(op[1])
    elif kind in ("v", "pair"):
        return all(_dst_registers(o, out) for o in (op[1] if kind == "v" else op[1:]))
    elif kind != "_":
        return False
    return True


#: collective instructions a *batch-closed* loop may run (:func:`closed_loop_registers`
#: with ``batch=True``): what they do is a function of the batch's threads' registers and
#: statuses (a barrier, other lanes' registers, the active mask)
_BATCH_OPS = frozenset({"bar", "barrier", "shfl", "vote", "match", "redux", "activemask"})


def _batch_private(c) -> bool:
    """Whether instruction ``c`` reads and writes only state of the batch's own threads
    that a look at them holds: a collective of :data:`_BATCH_OPS` that waits for its
    threads (not ``bar.arrive``, which leaves a barrier counted part way, nor a cluster
    barrier, which waits for other blocks), or a ``.shared`` (CTA) memory access."""
    if c.op in _BATCH_OPS:
        return "arrive" not in c.mods and "cluster" not in c.mods
    if c.op in ("ld", "st", "atom", "red"):
        return "shared" in c.mods or "shared::cta" in c.mods
    return False


def closed_loop_registers(ins, mod, loads: bool = False, batch: bool = False,
                          clock: bool = False, own: bool = False) -> tuple | None:
    """The registers written by the loop closed by backward branch ``ins`` when the loop is
    *closed*: each of its instructions computes from registers and the thread's own
    local memory alone (no other memory but ``.param``/``.const`` reads, no other lane
    or thread, no clock). Such a loop is a deterministic function of those registers and
    that memory, so lanes that come back to its head with all of them unchanged loop
    forever (:meth:`~warp_lab.sim.machine.Machine.
    closed_loop_turn`). ``None`` for a loop that is not closed.

    ``loads``: also allow loads from memory other threads write, and atomics (a spin-wait
    on a flag, read with ``ld`` or ``atom``): while no other thread runs and no atomic
    changes memory, nothing changes what it reads, so it is closed too
    (:meth:`~warp_lab.sim.progress.ForwardProgress.spin_turn`).

    ``batch``: also allow barriers, warp-synchronous instructions and ``.shared`` memory
    (:func:`_batch_private`): such a loop is a function of its registers, local memory
    and shared memory *when every live thread of the batch runs it*, so a batch whose
    threads all come back to its head with all of those unchanged loops forever (a tree
    reduction whose ``s //= 2`` was forgotten; ``while True: wl.syncthreads()``).

    ``clock``: also allow reading the clocks (``%clock``, ``%clock64``, ``%globaltimer``): a
    loop that waits for time to pass (:meth:`~warp_lab.sim.progress.ForwardProgress.clock_turn`).

    ``own``: of the code ``target..pc`` that ``ins`` itself closes, not of the loops it
    overlaps: an inner loop, closed inside an outer one that is not."""
    lo, hi = (ins.target, ins.pc) if own else _loop_range(ins, mod)
    written: set = set()
    for c in mod.code[lo:hi + 1]:
        if c.op in _OPEN_OPS and not (c.op == "ld" and ("param" in c.mods or
                                                        "const" in c.mods)) \
                and not (c.op in ("ld", "st") and thread_private(mod, c)) \
                and not (loads and c.op in ("ld", "ldu", "atom")) \
                and not (batch and _batch_private(c)):
            return None
        if "cc" in c.mods or (not clock and any(s[0] == "s" and s[1] in _TIME_SREGS
                                                for s in c.srcs)):
            return None
        if not all(_dst_registers(d, written) for d in c.dsts):
            return None
    return tuple(sorted(written))


def polled_loads(ins, mod, own: bool = False) -> tuple:
    """The instructions of the loop closed by backward branch ``ins`` that read memory
    other threads write (:func:`_reads_shared_state`: loads, atomics, calls), in code
    order: what a spin-wait polls. ``own``: of the code ``ins`` itself closes only
    (``target..pc``, a poll of :func:`poll_turns_repeat`), not of the loops around it."""
    lo, hi = (ins.target, ins.pc) if own else _loop_range(ins, mod)
    return tuple(c for c in mod.code[lo:hi + 1] if _reads_shared_state(c, mod))


def _registers(ops, out: set) -> set:
    """Add the register ids ``ops`` (operands, nested ones included) read to ``out``."""
    for op in ops:
        if not isinstance(op, tuple) or not op:
            continue
        if op[0] == "r":
            out.add(op[1])
        elif op[0] == "a" and isinstance(op[1], tuple):
            _registers([op[1]], out)
        elif op[0] in ("pair", "neg"):
            _registers(op[1:], out)
        elif op[0] == "v":
            _registers(op[1], out)
    return out


def deciding_loads(ins, mod, own: bool = False) -> tuple:
    """The loads of memory other threads can write (:func:`_reads_shared_state`) that the
    closed loop closed by backward branch ``ins`` depends on to end or to be entered: the
    predicates of its own conditional branches and of the branches into it, followed back
    through the registers they are computed from (every write to a register in the function
    counts, wherever it is). A closed loop reads no such memory itself, so any load found
    lies before it: a spin-wait whose load LLVM moved out of the loop (it may assume no
    other thread writes there) spins on a register. Empty when what decides the loop comes
    from registers, parameters and the thread's own memory alone (a loop variable that
    never advances). ``own``: of the code ``target..pc`` that ``ins`` closes (an inner
    closed loop), not of the loops around it."""
    lo, hi = (ins.target, ins.pc) if own else _loop_range(ins, mod)
    fn = mod.functions[ins.function]
    code = mod.code[fn.start:fn.end]
    todo: set = set()
    for c in code:
        inside = lo <= c.pc <= hi
        into = isinstance(c.target, int) and lo <= c.target <= hi
        if c.op in ("bra", "brx") and c.guard is not None and (inside or into):
            todo.add(c.guard[0])
        if c.op == "brx" and (inside or into):
            _registers(c.srcs, todo)
    before = mod.code[lo - 1] if lo > fn.start else None
    if before is not None and before.op == "bra" and before.guard is not None:
        todo.add(before.guard[0])   # lanes fall into the loop when that guard fails
    defs: dict = {}
    for c in code:
        for r in _registers(c.dsts, set()):
            defs.setdefault(r, []).append(c)
    seen, loads = set(), []
    while todo:
        r = todo.pop()
        if r in seen:
            continue
        seen.add(r)
        for c in defs.get(r, ()):
            if c.op in ("ld", "ldu") and _reads_shared_state(c, mod):
                if c not in loads:
                    loads.append(c)
                continue
            _registers(c.srcs, todo)
            if c.guard is not None:
                todo.add(c.guard[0])
    return tuple(sorted(loads, key=lambda c: c.pc))


#: instructions a turn of :func:`poll_turns_repeat` may not run: memory writes but
#: through atomics (``st``, ``red``), calls, anything that waits for or reads other lanes,
#: and the carry flag (not a register)
_NOT_POLL_OPS = frozenset({"st", "red", "call", "bar", "barrier", "shfl", "vote", "match",
                           "redux", "activemask", "addc", "subc", "madc"})


def poll_turns_repeat(ins, mod) -> bool:
    """Whether a turn of the code ``target..pc`` that backward branch ``ins`` closes is a
    function of memory and of registers that code does not write, so that with memory
    unchanged every turn repeats the one before: a poll such as ``ld``/``atom.cas``,
    ``setp``, ``@p bra`` (``while wl.atomic_load(flag, 0) != 0``). Then a turn in which
    no thread changed memory shows the lanes waiting for another thread
    (:meth:`~warp_lab.sim.progress.ForwardProgress.poll_turn`).

    Holds when no branch from outside the code enters it past its first instruction
    (every turn starts at the head; branches inside it, forward or back to the head,
    and out of it are fine), the code runs none of :data:`_NOT_POLL_OPS` and no
    instruction with a carry (``.cc``), and on every path through it each register it
    writes is written, unguarded, before it is read (no value carried from one turn to
    the next; a loop counter is one). Reading the clock is allowed (a spin with a
    timeout: :meth:`~warp_lab.sim.progress.ForwardProgress.poll_turn` moves the clock on)."""
    lo, hi = ins.target, ins.pc
    fn = mod.functions[ins.function]
    into: dict = {}     # pc in the code -> the pcs inside it that branch there
    for c in mod.code[fn.start:fn.end]:
        if c.op in ("bra", "brx"):
            ts = c.target if isinstance(c.target, list) else [c.target]
            for t in ts:
                if not isinstance(t, int):
                    return False
                if lo < t <= hi:
                    if not lo <= c.pc < t:      # from outside, or backward to the middle
                        return False
                    into.setdefault(t, []).append(c.pc)
    written: set = set()
    for c in mod.code[lo:hi + 1]:
        if c.op in _NOT_POLL_OPS or "cc" in c.mods:
            return False
        if not all(_dst_registers(d, written) for d in c.dsts):
            return False
    # registers written on every path from the head to each instruction (forward edges
    # only, so one pass in code order); None: not reached by falling through
    out: dict = {}
    for c in mod.code[lo:hi + 1]:
        preds = [out[q] for q in into.get(c.pc, ()) if q in out]
        prev = mod.code[c.pc - 1] if c.pc > lo else None
        if c.pc == lo:
            preds.append(set())
        elif prev.pc in out and not (prev.guard is None and
                                     prev.op in ("bra", "brx", "ret", "exit", "trap")):
            preds.append(out[prev.pc])
        if not preds:
            continue    # unreachable from the head
        defined = set.intersection(*preds)
        reads = _registers(c.srcs, set())
        if c.guard is not None:
            reads.add(c.guard[0])
        if (reads & written) - defined:
            return False
        if c.guard is None:
            defined = set(defined)
            for d in c.dsts:
                _dst_registers(d, defined)
        out[c.pc] = defined
    return True


def poll_clock(ins, mod) -> int:
    """The clock a poll closed by backward branch ``ins`` (code ``target..pc``) reads: 0
    for none, 64 for ``%clock64``/``%globaltimer`` only, 32 when it reads a clock that
    wraps every 2**32 cycles (``%clock``, ``%globaltimer_lo``): a spin with a timeout,
    whose clock :meth:`~warp_lab.sim.progress.ForwardProgress.poll_turn` moves on."""
    names = {s[1] for c in mod.code[ins.target:ins.pc + 1] for s in c.srcs
             if s[0] == "s" and s[1] in _TIME_SREGS}
    return 32 if names & {"clock", "globaltimer_lo"} else 64 if names else 0


def loop_has_atomic(ins, mod) -> bool:
    """Whether the loop closed by backward branch ``ins`` contains an ``atom``: a spin
    lock (``while atomicCAS(lock, 0, 1) != 0``) or a CAS retry loop. Lanes looping
    there can wait on lanes of their own warp that got past it (the lock holder), so
    they yield to them after one quantum instead of ``INTRA_ROUNDS``
    (:meth:`~warp_lab.sim.progress.ForwardProgress.back_edge`)."""
    lo, hi = _loop_range(ins, mod)
    return any(c.op == "atom" for c in mod.code[lo:hi + 1])


def _brx(ins, mod):
    """``brx.idx index, table``: jump to the index-th label of a ``.branchtargets`` list
    (LLVM's jump tables for dense ``switch``); an index past the list is undefined
    behaviour in PTX and stops the launch with a finding."""
    from warp_lab.sim.operands import reader
    if not isinstance(ins.target, list):
        raise SimulatorError(f"PTX line {ins.line}: brx needs a .branchtargets table",
                             ptx_line=ins.line)
    table = np.array(ins.target, np.int32)
    r = reader(ins.srcs[0], np.dtype(np.uint32), mod, ins.line)

    def ex(m, act, p):
        eff = guard_mask(m, ins, act)
        if eff is None:
            transfer(m, act, None, p, p + 1)
            return
        k = r(m)
        lanes = act if eff is ALL else eff
        kk = k if np.ndim(k) == 0 or lanes is None else k[lanes]
        if np.any(kk >= table.size):
            bad = (np.broadcast_to(k, (m.T,)) >= table.size) & (
                np.ones(m.T, bool) if lanes is None else lanes)
            m.finding("out_of_bounds", f"brx.idx index {int(np.max(kk))} is past the "
                      f"{table.size}-entry branch table", ins, int(np.argmax(bad)), stop=True)
        if np.ndim(kk) == 0 or (kk == kk.flat[0]).all():
            transfer(m, act, eff, p, int(table[int(np.asarray(kk).flat[0])]))
            return
        newpc = table[np.minimum(np.broadcast_to(k, (m.T,)), table.size - 1)]
        if m.collect:
            first = table[kk.flat[0]]
            _count_divergence(m, ins, act, (newpc == first) & (
                np.ones(m.T, bool) if lanes is None else lanes))
        transfer(m, act, eff, p, newpc)
    return ex


def _exit_lanes(m, act, eff, p):
    if eff is None:
        transfer(m, act, None, p, p + 1)
        return
    lanes = act if eff is ALL else eff
    if lanes is None:
        lanes = m.status == RUN
    if m.upc >= 0:
        m.diverge()
    going = lanes & (m.status == RUN)
    m.status[going] = EXITED
    m.pc[going] = np.int32(2**31 - 1)
    m.resume[going] = p         # where they exited (warp-sync and deadlock messages say it)
    m.nlive = int(np.count_nonzero((m.status != EXITED) & (m.status != PAD)))
    m.recount()
    if eff is not ALL:
        rest = (act if act is not None else np.ones(m.T, bool)) & ~eff & (m.status == RUN)
        m.pc[rest] = p + 1


def _ret(ins, mod):
    fn = mod.functions[ins.function]
    if fn.kind == "entry" or ins.op == "exit":
        def ex_exit(m, act, p):
            _exit_lanes(m, act, guard_mask(m, ins, act), p)
        return ex_exit

    def ex_ret(m, act, p):
        eff = guard_mask(m, ins, act)
        if eff is None:
            transfer(m, act, None, p, p + 1)
            return
        ra = m.retaddr.get(fn.name)
        if ra is None:
            raise SimulatorError(f"PTX line {ins.line}: ret from {fn.name} without a call",
                                 ptx_line=ins.line)
        lanes = act if eff is ALL else eff
        sites = [int(ra)] if np.ndim(ra) == 0 else \
            [int(x) for x in np.unique(ra if lanes is None else ra[lanes])]
        if sites and sites[0] < 0:
            # a returning lane has no return address: the bookkeeping lost its call
            raise SimulatorError(f"internal simulator error at PTX line {ins.line}: ret from "
                                 f"{fn.name} by a thread with no return address; this is a "
                                 "bug in warp_lab's simulator, please report it with the PTX",
                                 ptx_line=ins.line)
        for site in sites:
            call = mod.code[site - 1]
            sel = lanes if np.ndim(ra) == 0 else ((ra == site) if lanes is None else
                                                  (lanes & (ra == site)))
            for (rname, _, size, _), dst in zip(fn.rets, call.dsts):
                _copy_param(m, rname, dst, size, sel)
        # every live thread returns (none parked, waiting or left behind by a guard)?
        everyone = lanes is None or (m.upc >= 0 and eff is ALL and m.unact == m.nlive)
        transfer(m, act, eff, p, ra)
        # the returning lanes' frames are free again (a later call may reuse them); the
        # other lanes (a warp parked inside the function, say) keep their return address
        if everyone:
            m.retaddr[fn.name] = np.int32(-1)
        else:
            base = np.full(m.T, ra, np.int32) if np.ndim(ra) == 0 else ra
            m.retaddr[fn.name] = np.where(lanes, np.int32(-1), base)
    return ex_ret


def _copy_param(m, src, dst, size, lanes):
    s = m.cparams.get(src)
    if s is None:
        s = np.zeros((m.T, size), np.uint8)
    if s.shape[1] < size:
        s = np.concatenate([s, np.zeros((m.T, size - s.shape[1]), np.uint8)], 1)
    if lanes is None:
        m.cparams[dst] = s[:, :size].copy()
        return
    d = m.cparams.get(dst)
    if d is None or d.shape[1] < size:
        nd = np.zeros((m.T, size), np.uint8)
        if d is not None:
            nd[:, :d.shape[1]] = d
        d = nd
    d[lanes, :size] = s[lanes, :size]
    m.cparams[dst] = d


def _call(ins, mod):
    name = ins.target
    if name == "vprintf":
        from warp_lab.sim.printf import vprintf
        return _builtin(ins, vprintf)
    if name == "__assertfail":
        from warp_lab.sim.printf import assertfail
        return _builtin(ins, assertfail)
    callee = mod.functions.get(name)
    if callee is None or callee.start < 0:
        raise SimulatorError(f"PTX line {ins.line}: call to {name}, which has no body in the "
                             "module (only vprintf and __assertfail are built in)",
                             ptx_line=ins.line)
    if len(ins.srcs) != len(callee.params):
        raise SimulatorError(f"PTX line {ins.line}: {name} takes {len(callee.params)} "
                             f"parameters, the call passes {len(ins.srcs)}", ptx_line=ins.line)

    def ex(m, act, p):
        eff = guard_mask(m, ins, act)
        if eff is None:
            transfer(m, act, None, p, p + 1)
            return
        lanes = act if eff is ALL else eff
        old = m.retaddr.get(name)
        if old is not None and (np.any(old >= 0) if lanes is None or np.ndim(old) == 0
                                else np.any(old[lanes] >= 0)):
            raise SimulatorError(f"PTX line {ins.line}: recursive call of {name} is not "
                                 "supported by the simulator", ptx_line=ins.line)
        m.calls += 1   # a new activation: closed loops in the callee start afresh
        for (pname, _, size, _), arg in zip(callee.params, ins.srcs):
            _copy_param(m, arg, pname, size, lanes)
        if lanes is None or (m.upc >= 0 and eff is ALL and m.unact == m.nlive):
            # every live thread calls from here (none yielded, waiting or guarded off)
            m.retaddr[name] = np.int32(p + 1)
        else:
            old = m.retaddr.get(name)
            base = np.full(m.T, -1 if old is None else old, np.int32) if (
                old is None or np.ndim(old) == 0) else old
            m.retaddr[name] = np.where(lanes, np.int32(p + 1), base)
        transfer(m, act, eff, p, callee.start)
    return ex


def _builtin(ins, fn):
    def ex(m, act, p):
        eff = guard_mask(m, ins, act)
        if eff is not None:
            lanes = act if eff is ALL else eff
            idx = np.arange(m.T) if lanes is None else np.flatnonzero(lanes)
            idx = idx[m.status[idx] == RUN]
            fn(m, ins, idx)
        transfer(m, act, None, p, p + 1)
    return ex


def _trap(ins, mod):
    def ex(m, act, p):
        eff = guard_mask(m, ins, act)
        if eff is None:
            transfer(m, act, None, p, p + 1)
            return
        lanes = act if eff is ALL else eff
        t = 0 if lanes is None else int(np.argmax(lanes))
        said = last_printed_line(m, t)
        m.finding("trap", "trap instruction executed" + (
            f" after the thread printed {said!r}" if said else "") + "; the launch was aborted",
            ins, t, stop=True, **({"printed": said} if said else {}))
    return ex


def last_printed_line(m, t: int) -> str:
    """The last non-empty line batch thread ``t`` of ``m`` (a machine or a lane view) printed
    in this batch, "" when none: a debug-mode check prints its message, then traps."""
    machine = getattr(m, "m", m)
    idx = getattr(m, "idx", None)
    text = machine.last_printed.get(int(idx[t]) if idx is not None else t, "")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _nop(ins, mod):
    def ex(m, act, p):
        transfer(m, act, None, p, p + 1)
    return ex


CONTROL = {"bra": _bra, "brx": _brx, "ret": _ret, "exit": _ret, "call": _call, "trap": _trap, "brkpt": _nop}
