"""Barriers and warp-synchronous instructions (PTX ISA 9.7.12.1–9.7.12.9, 9.7.8.6–9.7.8.9).

* ``bar.sync``/``barrier.sync``/``bar.red``/``bar.arrive`` with a barrier id
  (0–15) and an optional thread count (counted per warp, a multiple of 32; each
  time that many have arrived the barrier completes for them, in arrival order,
  and starts again); without a count every live thread of the block must arrive,
  exited threads counting as arrived.
* ``shfl.sync`` (up, down, bfly, idx with the clamp/segment operand ``c``),
  ``vote.sync`` (all, any, uni, ballot), ``match.sync`` (any, all),
  ``redux.sync``, ``bar.warp.sync``: lanes wait (status ``WSYNC``) until every
  live lane of their ``membermask`` has reached the instruction with the same
  membermask, then execute it together, one group per instruction and membermask
  (lanes of the mask waiting there with another mask are another rendezvous; a
  vote, match or redux combines its own group's lanes only); a membermask naming
  exited lanes is a ``warp_sync`` finding (when the barrier check is on) and
  lanes that can never be joined are a deadlock, its message naming a member lane
  that waits with another mask or elsewhere. For ``.target`` sm_70 and newer a
  ``bar.warp.sync`` rendezvous spans instructions: lanes waiting at any
  ``bar.warp.sync`` of the module with the same membermask are one group, each
  continuing after its own instruction (PTX ISA 9.7.12.3: only "for .target sm_6x
  or below, all threads in membermask must execute the same bar.warp.sync
  instruction"); shfl/vote/match/redux.sync stay per instruction.
"""

from __future__ import annotations

import re

import numpy as np

from warp_lab.errors import SimulatorError
from warp_lab.sim.control import ALL, guard_mask, transfer
from warp_lab.sim.state import BARWAIT, EXITED, PAD, RUN, WSYNC
from warp_lab.sim.operands import reader, writer
from warp_lab.sim.ptx import cached_on
from warp_lab.sim.result import code_place

__all__ = ["SYNC", "WARP", "barrier_deadlock", "lane_ranges", "release_barriers",
           "release_warp_sync", "warp_bar_sites", "warp_sync_deadlock"]

U32 = np.dtype(np.uint32)
_BIG = np.int32(2**31 - 1)  # the pc of a thread that is not runnable
BOOL = np.dtype(np.bool_)


def _bar(ins, mod):
    mods = set(ins.mods)
    if "warp" in mods:  # bar.warp.sync membermask: waits for the member lanes
        rm = reader(ins.srcs[0], U32, mod, ins.line)
        # (it orders shared memory among the lanes executing it together: the wrapper
        # tells racecheck, with each lane's own mask when the group spans instructions)
        return _warp_sync(ins, mod, None, rm, combine=False)
    red = "red" in mods
    arrive = "arrive" in mods
    srcs = list(ins.srcs)
    if red:
        redop = next(x for x in ("popc", "and", "or") if x in mods)
        wd = writer(srcs[0], mod, ins.line)   # the parser lists bar's operands as sources
        rc = reader(srcs[-1], BOOL, mod, ins.line)
        srcs = srcs[1:-1]
    ra = reader(srcs[0], U32, mod, ins.line) if srcs else (lambda m: np.uint32(0))
    rb = reader(srcs[1], U32, mod, ins.line) if len(srcs) > 1 else None

    def ex(m, act, p):
        eff = guard_mask(m, ins, act)
        if eff is None:
            transfer(m, act, None, p, p + 1)
            return
        bid = ra(m)
        if np.ndim(bid) != 0:
            bid = bid[np.argmax(act)] if act is not None else bid[0]
        bid = int(bid)
        if bid > 15:
            raise SimulatorError(f"PTX line {ins.line}: barrier id {bid} > 15", ptx_line=ins.line)
        count = 0
        if rb is not None:
            c = rb(m)
            count = int(c if np.ndim(c) == 0 else c[np.argmax(act) if act is not None else 0])
        lanes = act if eff is ALL else eff
        if arrive:
            sel = lanes if lanes is not None else (m.status == RUN)
            for b in np.unique(m.blk[sel]):
                nw = int(np.count_nonzero(sel[m.blk == b].reshape(-1, 32).any(1)))
                m.arrive[(int(b), bid)] = m.arrive.get((int(b), bid), 0) + 32 * nw
            transfer(m, act, None, p, p + 1)
            return
        if (not red and count == 0 and m.upc >= 0 and eff is ALL and m.unact == m.nlive):
            # every live thread of every block is here: the barrier completes at once
            if m.collect:
                m.metrics.barriers += m.uwarps
            if m.race is not None:
                m.race.reset(None)
            if m.stored is not None:
                m.stored.fill(False)
            m.upc = p + 1
            return
        m.diverge()
        if lanes is None:
            lanes = m.status == RUN
        m.status[lanes] = BARWAIT
        m.resume[lanes] = p + 1
        m.pc[lanes] = _BIG
        m.waitbar[lanes] = bid
        m.waitpc[lanes] = p
        m.waitcnt[lanes] = min(count, 2**31 - 1)   # (int32; a count that big never completes)
        m.waitseq[lanes] = m.barseq
        m.barseq += 1
        if red:
            if m.barred is None:
                m.barred = np.zeros(m.T, bool)
            m.barred[lanes] = np.broadcast_to(rc(m), (m.T,))[lanes]
            m.barred_ops[p] = (redop, wd)
        m.waiters += np.bincount(m.blk[lanes], minlength=m.nb)
        if m.worked is None:
            m.worked = np.zeros(m.T, bool)
        if eff is not ALL:
            rest = (act if act is not None else np.ones(m.T, bool)) & ~lanes
            m.pc[rest] = p + 1
        m.recount()
    return ex


def release_barriers(m, waiting) -> bool:
    """Complete every barrier whose arrival condition holds; True if any completed."""
    live = (m.status != EXITED) & (m.status != PAD)
    rel = np.zeros(m.T, bool)
    counted = np.zeros(m.T, bool)  # released by an explicit thread count
    wbar, wcnt = m.waitbar[waiting], m.waitcnt[waiting]
    if not m.arrive and not wbar.any() and not wcnt.any():
        nwait = np.bincount(m.blk[waiting], minlength=m.nb)
        nlive = np.bincount(m.blk[live], minlength=m.nb)
        ok = (nwait > 0) & (nwait == nlive)
        rel = waiting & ok[m.blk]
    else:
        wblk = m.blk[waiting]
        for b, bid in set(zip(wblk.tolist(), wbar.tolist())):
            sel = waiting & (m.blk == b) & (m.waitbar == bid)
            c = int(m.waitcnt[sel].max())
            if c:
                done = _counted_rounds(m, sel, (b, bid), c)
                rel |= done
                counted |= done
            elif np.count_nonzero(sel) >= np.count_nonzero(live & (m.blk == b)):
                rel |= sel
                m.arrive.pop((b, bid), None)
    if not rel.any():
        return False
    blocks = np.unique(m.blk[rel])
    if "barrier" in m.checks:
        # partial participation is the point of a counted barrier: check only the others
        whole = rel & ~counted
        if whole.any():
            _check_divergence(m, whole, np.unique(m.blk[whole]))
    if m.barred is not None:
        _bar_red_results(m, rel)
    if m.collect:
        m.metrics.barriers += int(np.count_nonzero(rel.reshape(-1, 32).any(1)))
    if m.race is not None:
        m.race.reset(blocks)
    if m.stored is not None:
        m.stored[np.isin(m.blk, blocks)] = False
    m.status[rel] = RUN
    m.events += 1     # (a spin-wait may end now: ForwardProgress.spin_turn)
    m.pc[rel] = m.resume[rel]
    m.recount()
    m.waiters -= np.bincount(m.blk[rel], minlength=m.nb)
    if m.worked is not None:
        m.worked[np.isin(m.blk, blocks)] = False
        if not m.waiters.any():
            m.worked = None
    return True


def _counted_rounds(m, sel, key, count: int):
    """Complete barrier ``key`` (block, id) with thread count ``count`` as often as its
    arrivals allow; returns the waiting threads of ``sel`` (bool ``(T,)``) released.

    PTX ISA "bar, barrier": arrivals are counted per warp (32 threads each, ``bar.arrive``
    ones in :attr:`Machine.arrive`); once ``count`` is reached the barrier completes and
    is reinitialized, so warps arriving past the first ``count`` threads wait for the next
    round (a named barrier that pairs of warps take in turn: a later partner completes
    it). The warps that arrived first go first (``Machine.waitseq``); ``bar.arrive``
    arrivals are taken before waiting warps (their order is not kept)."""
    rel = np.zeros(m.T, bool)
    rows = sel.reshape(-1, 32)
    warps = np.flatnonzero(rows.any(1))
    first = np.argmax(rows[warps], axis=1) + 32 * warps
    warps = warps[np.argsort(m.waitseq[first], kind="stable")]   # in arrival order
    arrived = m.arrive.pop(key, 0)
    while 32 * warps.size + arrived >= count:
        take = max(0, -(-(count - arrived) // 32))
        arrived = max(0, arrived - count)
        rel[(32 * warps[:take, None] + np.arange(32)).reshape(-1)] = True
        warps = warps[take:]
    if arrived:
        m.arrive[key] = arrived
    return rel & sel


def _bar_red_results(m, rel):
    """Write the results of the ``bar.red`` instructions among the threads ``rel`` (bool
    ``(T,)``) a barrier just released: each thread that waited at a ``bar.red`` gets the
    reduction of the predicates of the threads released with it from the same barrier of
    its block (PTX ISA "bar.red": ``.popc`` counts the threads whose predicate is true,
    ``.and``/``.or`` combine them). Threads released from a plain ``bar.sync`` get
    nothing: their registers are not the ``bar.red``'s destination."""
    red = rel & np.isin(m.waitpc, list(m.barred_ops))
    if not red.any():
        return
    key = m.blk * 16 + m.waitbar          # one reduction per block and barrier id
    true = np.bincount(key[red & m.barred], minlength=m.nb * 16)
    total = np.bincount(key[red], minlength=m.nb * 16)
    for q in np.unique(m.waitpc[red]).tolist():
        redop, wd = m.barred_ops[q]
        if redop == "popc":
            res = true.astype(np.uint32)[key]
        elif redop == "and":
            res = (true == total)[key]
        else:
            res = (true > 0)[key]
        wd(m, res, red & (m.waitpc == q))


def _check_divergence(m, rel, blocks):
    code = m.mod.code
    for b in blocks[:4]:
        inb = rel & (m.blk == b)
        pcs = np.unique(m.waitpc[inb])
        if len(pcs) > 1:
            t = int(np.argmax(inb & (m.waitpc == pcs[1])))
            lines = ", ".join(str(code[int(q)].line) for q in pcs)
            m.finding("divergent_barrier", f"threads of one block completed a barrier at "
                      f"different barrier instructions (PTX lines {lines}): a barrier inside "
                      "divergent code", code[int(pcs[1])], t)
        # threads that exited past the barrier having done work while the others waited,
        # or having stored to memory since the block's last barrier (which this one
        # would have ordered against the others' accesses after it: `x[t] = t` then `if
        # t < 16: wl.syncthreads()` at the kernel's end); an entry guard's threads, which
        # skip the whole kernel, do neither
        late = m.worked if m.worked is not None else m.stored
        if late is not None and m.stored is not None and late is not m.stored:
            late = late | m.stored
        if late is not None:
            bad = (m.blk == b) & (m.status == EXITED) & late
            if bad.any():
                t = int(np.argmax(bad))
                nb = int(np.count_nonzero(bad))
                nw = int(np.count_nonzero(inb))
                ins = code[int(m.waitpc[int(np.argmax(inb))])]
                br = _branch_around(m, ins.pc)
                at = f" at PTX line {br.line}" if br is not None else ""
                m.finding("divergent_barrier", f"barrier reached by {nw} threads of the block "
                          f"while {nb} others never reached it: they took another path{at} "
                          f"and exited ({_exits(m, bad)}): the barrier is inside divergent "
                          "code (undefined behaviour on the GPU); put it where every thread "
                          "of the block reaches it", ins, t,
                          **({"branch_ptx_line": br.line} if br is not None else {}))


def _branch_around(m, b: int):
    """The conditional branch that lets threads skip the barrier at pc ``b``: the nearest
    guarded ``bra`` before it in its function whose target is past it (an ``if`` around
    the barrier, or an early ``return`` guard before it), as an ``Instr``; None when there
    is none (the barrier's code placed after its skip target, or it is in a loop's body).
    Its ``.loc`` is the Python line of that ``if``: the runtime's message names that line
    (``finding_text._branch_line``)."""
    code = m.mod.code
    fn = m.mod.functions.get(code[b].function)
    lo = fn.start if fn is not None else 0
    for q in range(b - 1, lo - 1, -1):
        ins = code[q]
        if ins.op == "bra" and ins.guard is not None and isinstance(ins.target, int) \
                and ins.target > b:
            return ins
    return None


# ------------------------------------------------------------------ warp-synchronous ops

def lane_ranges(bits: int) -> str:
    """The lanes set in ``bits`` (a 32-bit lane mask, lane i = bit i) in words, as
    ranges: ``"lane 5"``, ``"lanes 8–31"``, ``"lanes 0–3, 6 and 8–31"``; ``"no lanes"``
    when none is set."""
    runs, lane = [], 0
    while lane < 32:
        if bits >> lane & 1:
            end = lane
            while end + 1 < 32 and bits >> (end + 1) & 1:
                end += 1
            runs.append(str(lane) if end == lane else f"{lane}–{end}")
            lane = end + 1
        else:
            lane += 1
    if not runs:
        return "no lanes"
    if len(runs) == 1 and "–" not in runs[0]:
        return f"lane {runs[0]}"
    return "lanes " + (runs[0] if len(runs) == 1 else ", ".join(runs[:-1]) + " and " + runs[-1])


def _place(m, q) -> str:
    """Where instruction ``q`` (a pc) is: ``"PTX line 42 (In[3] line 5)"``, or ``"PTX line
    42"`` when its ``.loc`` names no line."""
    ins = m.mod.code[int(q)]
    src = code_place(0, *m.mod.source_of(ins))
    return f"PTX line {ins.line}" + (f" ({src})" if src else "")


def _exits(m, sel) -> str:
    """Where the exited threads ``sel`` (bool ``(T,)``) exited: ``"at PTX line 60"`` (their
    ``resume``, set by the exit; the first two places when several). No Python line: LLVM
    merges a kernel's returns into one ``ret`` whose ``.loc`` names none of them."""
    qs = [q for q in np.unique(m.resume[sel]).tolist() if 0 <= q < len(m.mod.code)]
    if not qs:
        return "at the kernel's exit"
    lines = " and ".join(str(m.mod.code[q].line) for q in qs[:2])
    return f"at PTX line{'s' * (len(qs) > 1)} {lines}" + (" and others" if len(qs) > 2 else "")


def _sync_name(ins) -> str:
    return "bar.warp.sync" if _is_warp_bar(ins) else f"{ins.op}.sync"


def _mask_hint(name: str, bits: int, reads=()) -> str:
    """The fix for a warp-synchronous instruction ``name`` whose membermask names lanes
    that do not execute it, ``bits`` the lanes that do (CUDA Programming Guide, "Warp
    Shuffle Functions": each thread of the mask must execute the same intrinsic with the
    same mask, or the result is undefined).

    ``reads``: for a shuffle, ``(lane, source lane)`` of each executing lane whose source
    is in range. When a source lies outside ``bits``, a mask of only the executing lanes
    (what ``wl.activemask()`` gives there) is no fix: the shuffle would read a lane outside
    its membermask, undefined too (PTX ISA 9.7.9.6 "shfl.sync"), so the hint is to move the
    shuffle where every lane of the mask executes it and use its result in the branch."""
    if any(not bits >> j & 1 for _, j in reads):
        # one text for every unrolled copy of the shuffle (each reads other lanes), so that
        # finding_text.merge_by_line merges them; the lanes are in outside_reads()
        return (f"move the {name} out of the `if` or loop that only some lanes of the mask "
                f"enter, so that every lane of the mask executes it, and use its result "
                f"inside; a mask of only the lanes that execute it here ({bits:#010x}, "
                f"what wl.activemask() gives in that code) is no fix: the shuffle reads "
                f"lanes outside it, undefined too")
    return (f"pass a mask of only the lanes that execute it (here {bits:#010x}, which "
            f"wl.activemask() gives in that code), or move the {name} out of the `if` or "
            "loop that only some lanes of the mask enter")


def outside_reads(bits: int, reads) -> list:
    """The ``(lane, source lane)`` pairs of ``reads`` whose source is not in ``bits``
    (the lanes executing a shuffle): why a mask of only those lanes is no fix."""
    return [(k, j) for k, j in reads if not bits >> j & 1]


def _warp_view(m, v, dt):
    """Operand value ``v`` (scalar or ``(T,)``) as ``dt``, one row of 32 lanes per warp."""
    return np.broadcast_to(np.asarray(v, dt), (m.T,)).reshape(-1, 32)


def _bits(mask2d):
    """Per warp: a uint32 of the lanes set in a ``(warps, 32)`` bool array."""
    # lane i is bit i: eight lanes a byte, least significant first, four bytes a uint32
    return np.packbits(mask2d, axis=1, bitorder="little").view("<u4").reshape(-1).astype(
        np.uint32, copy=False)


def _ready(mm, here2, live, scalar):
    """Which lanes of ``here2`` (bool ``(warps, 32)``, the lanes at a warp-synchronous
    instruction) may execute it now, as a bool ``(warps, 32)`` array, and whether some
    warp holds lanes with different masks there. ``mm`` (uint32 ``(warps, 32)``) is each
    lane's membermask, ``live`` (uint32 per warp) the lanes that have not exited.

    A lane's group is the lanes of its warp there with the same membermask (PTX ISA
    9.7.12.3 bar.warp.sync: "until all threads corresponding to membermask have executed
    a bar.warp.sync with the same membermask value"; shfl/vote.sync likewise); it may go
    when every live lane of its mask is in its group."""
    hm = np.where(here2, mm, np.uint32(0))
    need = np.bitwise_or.reduce(hm, axis=1)
    ok = (need & live & ~_bits(here2)) == 0     # right wherever a warp has one mask here
    rl = np.broadcast_to(ok[:, None], here2.shape)
    if scalar:
        return rl, False
    lo = np.bitwise_and.reduce(np.where(here2, mm, np.uint32(0xFFFFFFFF)), axis=1)
    mixed = lo != need
    if mixed.any():
        mixed &= here2.any(1)                   # (a warp with no lane here: lo > need)
    if not mixed.any():
        return rl, False
    if not mixed.all():
        idx = np.flatnonzero(mixed)
        sub, h, lv = mm[idx], here2[idx], live[idx]
    else:
        idx, sub, h, lv = None, mm, here2, live
    ok = ~h
    for key, sel in _groups(sub, h):
        ok |= sel & ((key & lv & ~_bits(sel)) == 0)[:, None]
    if idx is None:
        return ok, True
    rl = rl.copy()
    rl[idx] = ok
    return rl, True


def _groups(mm, lanes2):
    """The membermask groups of ``lanes2`` (bool ``(warps, 32)``), one per warp at a time:
    yields ``(mask, sel)``, ``mask`` (uint32 per warp) and ``sel`` (bool ``(warps, 32)``)
    the lanes with that mask (as many rounds as a warp has distinct masks)."""
    rest = lanes2.copy()
    rows = np.arange(len(rest))
    while True:
        anyw = rest.any(1)
        if not anyw.any():
            return
        key = mm[rows, np.argmax(rest, axis=1)]
        sel = rest & (mm == key[:, None]) & anyw[:, None]
        yield key, sel
        rest &= ~sel


def _by_group(m, inner, go, mm):
    """Run ``inner`` once per membermask group of the lanes ``go`` (bool ``(T,)``, ``None``
    all): lanes of one warp with different masks are different rendezvous, and a vote,
    redux or match combines the lanes of its own group only."""
    for _, sel in _groups(mm, (np.ones(m.T, bool) if go is None else go).reshape(-1, 32)):
        inner(m, sel.reshape(-1))


def _sm(target: str):
    """The ``sm_XY`` number of a ``.target`` directive's text (``"sm_90a"`` -> 90), or
    ``None`` when it names none."""
    mt = re.search(r"\bsm_(\d+)", target or "")
    return int(mt.group(1)) if mt else None


def _is_warp_bar(ins) -> bool:
    return ins.op in ("bar", "barrier") and "warp" in ins.mods


def warp_bar_sites(mod):
    """Where ``bar.warp.sync`` lanes of module ``mod`` meet across instructions: a bool
    array over the module's pcs marking its ``bar.warp.sync`` instructions, or ``None``
    when each instruction is its own rendezvous (cached on the module).

    PTX ISA 9.7.12.3 (bar.warp.sync): "For .target sm_6x or below, all threads in
    membermask must execute the same bar.warp.sync instruction in convergence"; from
    sm_70 on (independent thread scheduling, CUDA Programming Guide ``__syncwarp()``)
    the lanes of a membermask may meet at different ones. ``None`` too for a target
    below sm_70 or a module with at most one ``bar.warp.sync``; a module with no
    ``sm_`` target gets the sm_70+ rule (the simulator models sm_90)."""
    def compute():
        sm = _sm(mod.target)
        at = np.array([_is_warp_bar(c) for c in mod.code], bool)
        return at if (sm is None or sm >= 70) and np.count_nonzero(at) > 1 else None
    return cached_on(mod, "_warp_bar_sites", compute)


def _elsewhere(m, p, sites, mm):
    """Lanes waiting at ``bar.warp.sync`` instructions other than ``p`` (bool ``(T,)``,
    or ``None`` when there are none) and ``mm`` (uint32 ``(warps, 32)``, the
    membermasks at ``p``) with their own instructions' membermasks filled in."""
    w = np.flatnonzero(m.status == WSYNC)
    rw = m.resume[w]
    w = w[sites[rw] & (rw != p)]
    if w.size == 0:
        return None, mm
    away = np.zeros(m.T, bool)
    away[w] = True
    mm = np.array(mm, np.uint32).reshape(-1)
    for q in np.unique(m.resume[away]).tolist():
        at = away & (m.resume == q)
        mm[at] = np.broadcast_to(_mask_at(m, q), (m.T,))[at]
    return away, mm.reshape(-1, 32)


def _mask_at(m, q):
    """The membermask (uint32, scalar or ``(T,)``) of warp-synchronous instruction ``q``
    as its lanes see it (a waiting lane's mask register keeps the value it waited with)."""
    return np.asarray(m.mod.code[q].exec.membermask(m), np.uint32)


_LANE_BITS = np.arange(32, dtype=np.uint32)


def _not_in_own_mask(m, ins, name, arrived, mm):
    """A ``warp_sync`` finding for lanes (``arrived``, bool ``(W, 32)``) that execute
    warp-synchronous instruction ``name`` with a membermask (``mm``, ``(W, 32)``) leaving
    themselves out: "The behavior of shfl.sync [vote.sync, bar.warp.sync, match.sync,
    redux.sync] is undefined if the executing thread is not in the membermask" (PTX ISA
    9.7.9.6, 9.7.13.9, 9.7.13.2, 9.7.13.10, 9.7.13.12). ``ballot_sync(0x0000FFFF, ...)``
    called by all 32 lanes is one: lanes 16–31 are not in their mask."""
    out = arrived & (((mm >> _LANE_BITS) & 1) == 0)
    if not out.any():
        return
    t = int(np.argmax(out))
    w = t // 32
    mask = int(mm[w, t % 32])
    outside = int(_bits(out[w:w + 1] & (mm[w:w + 1] == mask))[0])
    callers = int(_bits(arrived[w:w + 1])[0])
    hint = (f"pass a mask that names every lane that calls it — here {callers:#010x}, which "
            "wl.activemask() gives in that code — or have only the lanes of the mask call it")
    m.finding("warp_sync", f"{name} membermask {mask:#010x} leaves out {lane_ranges(outside)}, "
              f"which execute it: the PTX ISA leaves {name} undefined for a lane not in its "
              f"membermask ({lane_ranges(callers)} call it); fix: {hint}", ins, t, membermask=mask, lanes=outside,
              callers=callers, hint=hint, dedupe="not_in_mask")


def _warp_sync(ins, mod, inner, rmask, combine=True, sources=None):
    """Wrap a warp-synchronous op: lanes wait until every live lane of their membermask is
    at this instruction with the same membermask, then each such group executes it
    together (PTX ISA: "shfl.sync ... causes executing thread to wait until all
    non-exited threads corresponding to membermask have executed shfl.sync with the same
    qualifiers and same membermask"). Lanes of the mask waiting here with another mask
    are another rendezvous: the lanes keep waiting (a deadlock when nothing else can
    run, :func:`release_warp_sync`). ``combine``: ``inner`` combines its lanes (vote,
    match, redux), so it runs once per group; else once for every group ready.
    ``inner`` ``None``: ``bar.warp.sync``, which only orders shared memory among the
    lanes released together (racecheck); where the module's target lets it meet across
    instructions (:func:`warp_bar_sites`) the lanes waiting at the other ones join its
    groups, and those released continue after their own instruction. ``sources``: for a
    shuffle, ``sources(m) -> (j, ok)``, each thread's source lane and whether it is in
    range (:func:`_shfl_sources`), which the fix of a finding here takes into account."""
    bar = inner is None
    name = "bar.warp.sync" if bar else f"{ins.op}.sync"
    sites = warp_bar_sites(mod) if bar else None

    def order(m, go, mm):
        # the lanes released together are ordered after each other's accesses
        if m.race is not None:
            m.race.warp_sync(go, mm if np.ndim(mm) == 0 else mm.reshape(-1))

    def ex(m, act, p):
        eff = guard_mask(m, ins, act)
        if eff is None:
            transfer(m, act, None, p, p + 1)
            return
        lanes = act if eff is ALL else eff
        here = np.ones(m.T, bool) if lanes is None else lanes
        arrived = here
        waiting = (m.status == WSYNC) & (m.resume == p) if m.nwsync else None
        if waiting is not None:
            if waiting.any():
                here = here | waiting
            else:
                waiting = None
        raw = np.asarray(rmask(m), np.uint32)
        mm = np.broadcast_to(raw, (m.T,)).reshape(-1, 32)
        away = None
        if sites is not None and m.nwsync:
            away, mm = _elsewhere(m, p, sites, mm)
        here2 = here.reshape(-1, 32)
        live = _bits(((m.status != EXITED) & (m.status != PAD)).reshape(-1, 32))
        if "barrier" in m.checks:
            _not_in_own_mask(m, ins, name, arrived.reshape(-1, 32), mm)
            notpad = _bits(~((m.status == PAD).reshape(-1, 32)))
            bad = here2 & ((mm & (~live & notpad)[:, None]) != 0)
            if bad.any():
                t = int(np.argmax(bad))
                w = t // 32
                mask = int(mm[w, t % 32])
                gone = mask & ~int(live[w]) & int(notpad[w])
                with_it = int(_bits(here2[w:w + 1] & (mm[w:w + 1] == mask))[0])
                sel = np.zeros(m.T, bool)
                sel[32 * w:32 * w + 32] = (gone >> np.arange(32) & 1).astype(bool)
                reads = ()
                if sources is not None:
                    j, ok = (np.broadcast_to(v, (m.T,))[32 * w:32 * w + 32]
                             for v in sources(m))
                    reads = [(k, int(j[k])) for k in range(32)
                             if with_it >> k & 1 and ok[k]]
                hint = _mask_hint(name, with_it, reads)
                far = outside_reads(with_it, reads)
                m.finding("warp_sync", f"{name} membermask {mask:#010x} names "
                          f"{lane_ranges(gone)}, which do not execute it: they took another "
                          f"path and exited ({_exits(m, sel)}), so only {lane_ranges(with_it)} "
                          "execute it and the result is undefined on the GPU; fix: " + hint,
                          ins, t, membermask=mask, live=int(live[w]), exited=gone,
                          lanes=with_it, hint=hint,
                          **({"outside_reads": far} if far else {}))
        if away is not None:
            here2 = (here | away).reshape(-1, 32)
        ready, mixed = _ready(mm, here2, live, raw.ndim == 0 and away is None)
        if bar:
            run = (lambda m_, go_: order(m_, go_, raw if away is None else mm))
        else:
            run = (lambda m_, go_: _by_group(m_, inner, go_, mm)) if mixed and combine \
                else inner
        if waiting is None and away is None and ready.all():
            run(m, lanes)
            transfer(m, act, None, p, p + 1)
            return
        m.diverge()
        go = here2.reshape(-1) & ready.reshape(-1)
        if go.any():
            run(m, go)
        if away is not None:
            back = go & away         # released at their own bar.warp.sync: go on past it
            if back.any():
                m.status[back] = RUN
                m.pc[back] = m.resume[back] + 1
            go &= ~away
        stay = here & ~go
        a = np.ones(m.T, bool) if act is None else act
        m.pc[a] = p + 1          # guarded-off lanes and executing lanes move on
        m.pc[go] = p + 1
        m.status[go] = RUN
        m.resume[stay] = p
        m.pc[stay] = _BIG
        m.status[stay] = WSYNC
        m.nwsync = int(np.count_nonzero(m.status == WSYNC))
        m.recount()
    ex.membermask = rmask       # read again by release_warp_sync for the waiting lanes
    ex.sources = sources        # and by a deadlock's fix (_stuck_at_warp_sync)
    return ex


def release_warp_sync(m, wsync) -> bool:
    """Nothing else can run: the groups of lanes waiting at a warp-synchronous
    instruction (one group per instruction and membermask, as in :func:`_ready`) whose
    other member lanes have all exited since are let through (reported by the warp-sync
    check when they execute). True if any lane was released; False when no group can
    complete (a deadlock: :func:`warp_sync_deadlock` says why)."""
    live = _bits(((m.status != EXITED) & (m.status != PAD)).reshape(-1, 32))
    rel = np.zeros(m.T, bool)
    done = set()
    for p in np.unique(m.resume[wsync]).tolist():
        if p in done:
            continue
        at, mm, pcs = _site(m, wsync, p)
        done.update(pcs)
        ready, _ = _ready(mm, at.reshape(-1, 32), live, False)
        rel |= at & ready.reshape(-1)
    if not rel.any():
        return False
    m.status[rel] = RUN
    m.events += 1     # (a spin-wait may end now: ForwardProgress.spin_turn)
    # they execute the instruction they waited at again (a group spanning several
    # bar.warp.sync instructions meets again when the last of them executes its own)
    m.pc[rel] = m.resume[rel]
    m.nwsync = int(np.count_nonzero(m.status == WSYNC))
    m.recount()
    return True


def _site(m, wsync, p):
    """The rendezvous of lanes ``wsync`` (bool ``(T,)``) waiting at instruction ``p``:
    ``(at, mm, pcs)``, ``at`` (bool ``(T,)``) the waiting lanes that meet there (those at
    ``p``, or at any ``bar.warp.sync`` when :func:`warp_bar_sites` lets them meet across
    instructions), ``mm`` (uint32 ``(warps, 32)``) each lane's own membermask, and
    ``pcs`` the instructions involved."""
    sites = warp_bar_sites(m.mod)
    if sites is not None and sites[p]:
        at = np.zeros(m.T, bool)
        w = np.flatnonzero(wsync)
        at[w[sites[m.resume[w]]]] = True
    else:
        at = wsync & (m.resume == p)
    pcs = np.unique(m.resume[at]).tolist()
    if len(pcs) == 1:
        return at, np.broadcast_to(_mask_at(m, p), (m.T,)).reshape(-1, 32), pcs
    mm = np.zeros(m.T, np.uint32)
    for q in pcs:
        sel = at & (m.resume == q)
        mm[sel] = np.broadcast_to(_mask_at(m, q), (m.T,))[sel]
    return at, mm.reshape(-1, 32), pcs


def warp_sync_deadlock(m, wsync):
    """``(thread, instruction, message)`` for lanes ``wsync`` (bool ``(T,)``) that wait at
    warp-synchronous instructions no group of which can complete: the first waiting lane,
    its mask, and where the live lanes of its mask are (waiting there with another mask,
    waiting elsewhere, or not yet there)."""
    t = int(np.argmax(wsync))
    p = int(m.resume[t])
    ins = m.mod.code[p]
    at, mm, _ = _site(m, wsync, p)
    mm = mm.reshape(-1)
    w0 = t - t % 32
    mask = int(mm[t])
    live = (m.status[w0:w0 + 32] != EXITED) & (m.status[w0:w0 + 32] != PAD)
    other = [ln for ln in range(32) if mask >> ln & 1 and live[ln] and ln != t - w0]
    there = [ln for ln in other if at[w0 + ln]]
    diff = [ln for ln in there if int(mm[w0 + ln]) != mask]
    a = t - w0
    msg = (f"deadlock: lane {a} waits at the warp-synchronous instruction on PTX line "
           f"{ins.line} with membermask {mask:#010x}")
    if diff:
        ln = diff[0]
        where = ("there" if m.resume[w0 + ln] == p else
                 f"at PTX line {m.mod.code[int(m.resume[w0 + ln])].line}")
        msg += (f", and lane {ln} of that mask waits {where} with membermask "
                f"{int(mm[w0 + ln]):#010x}: lanes meet only with the same membermask (PTX ISA "
                "bar.warp.sync, shfl.sync, vote.sync)")
    elif other:
        ln = next((x for x in other if x not in there), other[0])
        q = int(m.resume[w0 + ln])
        where = f"waits at PTX line {m.mod.code[q].line}" if wsync[w0 + ln] else "is elsewhere"
        msg += f", and lane {ln} of that mask {where} and never arrives"
        sm = _sm(m.mod.target)
        if wsync[w0 + ln] and sm is not None and sm < 70 and _is_warp_bar(ins) and \
                _is_warp_bar(m.mod.code[q]):
            msg += (f": for .target sm_{sm}, lanes meet only at the same bar.warp.sync "
                    "instruction (PTX ISA bar.warp.sync; sm_70 and newer meet across them)")
    else:
        msg += " for membermask lanes that never arrive"
    return t, ins, msg


def barrier_deadlock(m, waiting):
    """``(thread, instruction, message)`` for a stall in which threads ``waiting`` (bool
    ``(T,)``) wait at barriers none of which can complete: the first waiting thread, its
    barrier, and where the live threads of its block that are not there are stuck (lanes
    waiting at a warp-synchronous instruction for lanes of their membermask that wait at
    the barrier, or elsewhere, and so never arrive: :func:`_stuck_at_warp_sync`)."""
    t = int(np.argmax(waiting))
    ins = m.mod.code[int(m.waitpc[t])]
    b = int(m.blk[t])
    inblk = m.blk == b
    nwait = int(np.count_nonzero(waiting & inblk))
    nlive = int(np.count_nonzero(inblk & (m.status != EXITED) & (m.status != PAD)))
    msg = (f"deadlock: {nwait} of {nlive} live threads of the block wait at the barrier on "
           f"{_place(m, int(m.waitpc[t]))}")
    stuck = inblk & (m.status == WSYNC)
    if not stuck.any():
        return t, ins, msg + " and no other thread can reach it", {}
    why, details = _stuck_at_warp_sync(m, stuck, int(m.waitpc[t]))
    return t, ins, msg + f", and the other {nlive - nwait} never reach it: {why}", details


def _stuck_at_warp_sync(m, stuck, barpc):
    """Why the lanes ``stuck`` (bool ``(T,)``, waiting at warp-synchronous instructions
    of one block) never reach the barrier at pc ``barpc``: the first warp's lanes at the
    first such instruction, their membermask, and where the lanes of the mask they wait
    for are (at that barrier, at another barrier or warp-synchronous instruction), with
    the fix; ``(text, details)``."""
    t = int(np.argmax(stuck))
    q = int(m.resume[t])
    w0 = t - t % 32
    sl = slice(w0, w0 + 32)
    ins = m.mod.code[q]
    name = _sync_name(ins)
    mm = np.broadcast_to(_mask_at(m, q), (m.T,))
    mask = int(mm[t])
    group = stuck[sl] & (m.resume[sl] == q) & (mm[sl] == mask)
    gbits = int(_bits(group[None, :])[0])
    missing = mask & ~gbits
    status = m.status[sl]
    where = []
    for ln in range(32):
        if not missing >> ln & 1 or status[ln] in (EXITED, PAD):
            continue
        if status[ln] == BARWAIT:
            pc = int(m.waitpc[w0 + ln])
            where.append(("wait at this barrier" if pc == barpc else
                          f"wait at the barrier on {_place(m, pc)}", ln))
        elif status[ln] == WSYNC:
            other = m.mod.code[int(m.resume[w0 + ln])]
            where.append((f"wait at the {_sync_name(other)} on "
                          f"{_place(m, int(m.resume[w0 + ln]))}", ln))
        else:
            where.append(("are elsewhere", ln))
    groups: dict[str, int] = {}
    for text, ln in where:
        groups[text] = groups.get(text, 0) | (1 << ln)
    warp = int(m.lin[t]) // 32
    reads = ()
    sources = getattr(ins.exec, "sources", None)
    if sources is not None:   # a shuffle: the lanes its waiting lanes would read
        j, ok = (np.broadcast_to(v, (m.T,))[sl] for v in sources(m))
        reads = [(k, int(j[k])) for k in range(32) if gbits >> k & 1 and ok[k]]
    said = "; ".join(f"{lane_ranges(bits)} {text}" for text, bits in groups.items())
    text = (f"{lane_ranges(gbits)} of warp {warp} wait at the {name} on {_place(m, q)} with "
            f"membermask {mask:#010x} for the other lanes of that mask, which never execute "
            f"it ({said or 'they never arrive'}); fix: {_mask_hint(name, gbits, reads)}")
    src = m.mod.source_of(ins)
    return text, {"stuck_ptx_line": ins.line, "stuck_source_line": src[1],
                  "membermask": mask, "lanes": gbits}


def _source_outside_mask(m, ins, mode, mask, lane, j, ok, rmask):
    """A ``warp_sync`` finding for executing lanes (``mask``) of a ``shfl.sync`` whose
    source lane ``j`` (in range: ``ok``) is not in their membermask: "results are undefined
    if a thread sources a register from an inactive thread or a thread that is not in
    membermask" (PTX ISA 9.7.9.6 "shfl.sync"). Lane 0 alone calling
    ``wl.shfl_sync(0x1, v, 5)`` reads lane 5, which neither is in the mask nor executes it."""
    mm = np.broadcast_to(np.asarray(rmask(m), np.uint32), (m.T,)).astype(np.int64)
    jj = np.broadcast_to(j, (m.T,))
    bad = np.broadcast_to(ok, (m.T,)) & (((mm >> jj) & 1) == 0)
    if mask is not None:
        bad = bad & mask
    if not bad.any():
        return
    t = int(np.argmax(bad))
    w = t // 32
    row = bad[32 * w:32 * w + 32]
    readers = int(_bits(row[None, :])[0])
    sources = 0
    for k in np.flatnonzero(row).tolist():
        sources |= 1 << int(jj[32 * w + k])
    mask_w = int(mm[t])
    hint = (f"read only lanes of the mask (membermask {mask_w:#010x} names "
            f"{lane_ranges(mask_w)}), or widen the mask to the lanes read — and have those "
            "lanes execute the shuffle too")
    m.finding("warp_sync", f"shfl.sync.{mode} in {lane_ranges(readers)} reads "
              f"{lane_ranges(sources)}, not in membermask {mask_w:#010x}: the PTX ISA "
              "leaves the result undefined for a source lane that is not in membermask or "
              f"not executing the shfl.sync; fix: {hint}", ins, t, membermask=mask_w,
              lanes=readers, sources=sources, hint=hint, dedupe="source_outside")


def _shfl(ins, mod):
    mode = next(x for x in ("up", "down", "bfly", "idx") if x in ins.mods)
    ra = reader(ins.srcs[0], U32, mod, ins.line)
    rb = reader(ins.srcs[1], U32, mod, ins.line)
    rc = reader(ins.srcs[2], U32, mod, ins.line)
    rmask = reader(ins.srcs[3], U32, mod, ins.line) if len(ins.srcs) > 3 else (lambda m: np.uint32(
        0xFFFFFFFF))
    d = ins.dsts[0]
    wd = writer(d[1] if d[0] == "pair" else d, mod, ins.line)
    wp = writer(d[2], mod, ins.line) if d[0] == "pair" else None

    sources = _shfl_sources(mode, rb, rc)

    def ex(m, mask):
        a = np.broadcast_to(np.asarray(ra(m), np.uint32), (m.T,))
        lane = (np.arange(m.T) % 32).astype(np.int64)
        j, ok = sources(m)
        if "barrier" in m.checks:
            _source_outside_mask(m, ins, mode, mask, lane, j, ok, rmask)
        src = np.arange(m.T) - lane + j
        wd(m, a[src], mask)
        if wp is not None:
            wp(m, np.broadcast_to(ok, (m.T,)).copy(), mask)
    return _warp_sync(ins, mod, ex, rmask, combine=False, sources=sources)


def _shfl_sources(mode: str, rb, rc):
    """``f(m) -> (j, ok)`` for a ``shfl.sync.mode`` with operands ``b`` and ``c`` (readers):
    each thread's source lane ``j`` (its own lane where out of range) and whether it is in
    range, by the PTX ISA's pseudocode (9.7.9.6 "shfl.sync": ``maxLane``/``minLane`` from
    ``c``'s clamp value and segment mask; ``.up`` in range for ``j >= maxLane``, the others
    for ``j <= maxLane``)."""
    def sources(m):
        lane = (np.arange(m.T) % 32).astype(np.int64)
        b = np.asarray(rb(m), np.int64) & 31
        c = np.asarray(rc(m), np.int64)
        cval, seg = c & 31, (c >> 8) & 31
        max_lane = (lane & seg) | (cval & ~seg)
        min_lane = lane & seg
        if mode == "up":
            j = lane - b
            ok = j >= max_lane
        elif mode == "down":
            j = lane + b
            ok = j <= max_lane
        elif mode == "bfly":
            j = lane ^ b
            ok = j <= max_lane
        else:
            j = min_lane | (b & ~seg)
            ok = j <= max_lane
        return np.where(ok, j, lane), ok
    return sources


def _vote(ins, mod):
    mode = next(x for x in ("all", "any", "uni", "ballot") if x in ins.mods)
    rp = reader(ins.srcs[0], BOOL, mod, ins.line)
    rmask = reader(ins.srcs[1], U32, mod, ins.line) if len(ins.srcs) > 1 else (
        lambda m: np.uint32(0xFFFFFFFF))
    wd = writer(ins.dsts[0], mod, ins.line)

    def ex(m, mask):
        act = np.ones((m.T // 32, 32), bool) if mask is None else mask.reshape(-1, 32)
        p = _warp_view(m, rp(m), bool)
        if mode == "ballot":
            wd(m, np.repeat(_bits(p & act), 32), mask)
            return
        if mode == "all":
            r = (p | ~act).all(1)
        elif mode == "any":
            r = (p & act).any(1)
        else:
            r = (p | ~act).all(1) | (~p | ~act).all(1)
        wd(m, np.repeat(r, 32), mask)
    return _warp_sync(ins, mod, ex, rmask)


def _match(ins, mod):
    allmode = "all" in ins.mods
    dt = np.dtype(np.uint64 if "b64" in ins.types else np.uint32)
    ra = reader(ins.srcs[0], dt, mod, ins.line)
    rmask = reader(ins.srcs[1], U32, mod, ins.line)
    d = ins.dsts[0]
    wd = writer(d[1] if d[0] == "pair" else d, mod, ins.line)
    wp = writer(d[2], mod, ins.line) if d[0] == "pair" else None

    def ex(m, mask):
        act = np.ones((m.T // 32, 32), bool) if mask is None else mask.reshape(-1, 32)
        v = _warp_view(m, ra(m), dt)
        eq = (v[:, :, None] == v[:, None, :]) & act[:, None, :]
        bits = _bits(eq.reshape(-1, 32)).reshape(eq.shape[:2])   # per lane: its equals
        actbits = _bits(act)
        if allmode:
            same = bits == actbits[:, None]
            allsame = (same | ~act).all(1)
            res = np.where(allsame[:, None], actbits[:, None], np.uint32(0))
            res = np.broadcast_to(res, bits.shape).reshape(-1)
            wd(m, res, mask)
            if wp is not None:
                wp(m, np.repeat(allsame, 32), mask)
        else:
            wd(m, bits.reshape(-1), mask)
    return _warp_sync(ins, mod, ex, rmask)


def _redux(ins, mod):
    """``redux.sync.op.type d, a, membermask`` (PTX ISA "redux.sync"): ``.add``/``.min``/
    ``.max`` of ``.u32``/``.s32`` (``.add`` wraps to 32 bits), ``.and``/``.or``/``.xor`` of
    ``.b32``, and ``.min``/``.max`` of ``.f32`` (:func:`_redux_f32`) over the lanes of the
    group executing it together."""
    op = next(x for x in ("add", "min", "max", "and", "or", "xor") if x in ins.mods)
    t = ins.types[0]
    if t == "f32":
        return _redux_f32(ins, mod, op)
    if t not in ("u32", "s32", "b32"):
        raise SimulatorError(f"PTX line {ins.line}: redux.sync.{op}.{t} is not a PTX form "
                             "(.u32/.s32/.b32, or .f32 min/max)", ptx_line=ins.line)
    dt = np.dtype(np.int32 if t == "s32" else np.uint32)
    ra = reader(ins.srcs[0], dt, mod, ins.line)
    rmask = reader(ins.srcs[1], U32, mod, ins.line)
    wd = writer(ins.dsts[0], mod, ins.line)
    ident = {"add": 0, "and": -1, "or": 0, "xor": 0,
             "min": np.iinfo(dt).max, "max": np.iinfo(dt).min}[op]
    fn = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
          "or": np.bitwise_or, "xor": np.bitwise_xor}[op]

    def ex(m, mask):
        act = np.ones((m.T // 32, 32), bool) if mask is None else mask.reshape(-1, 32)
        v = _warp_view(m, ra(m), dt)
        v = np.where(act, v, np.array(ident).astype(dt))
        r = fn.reduce(v, axis=1, dtype=dt)
        wd(m, np.repeat(r, 32), mask)
    return _warp_sync(ins, mod, ex, rmask)


def _redux_f32(ins, mod, op):
    """``redux.sync.{min,max}{.abs}{.NaN}.f32`` (PTX ISA "redux.sync", sm_100a): the
    minimum or maximum of the group's values (of their magnitudes with ``.abs``), +0.0
    above -0.0; NaN inputs are ignored, the result is the canonical NaN only when every
    input is NaN, or, with ``.NaN``, when any is."""
    if op not in ("min", "max"):
        raise SimulatorError(f"PTX line {ins.line}: redux.sync.{op}.f32 is not a PTX form "
                             "(.f32 has .min and .max)", ptx_line=ins.line)
    from warp_lab.sim import fp

    big = op == "max"
    nan_prop = "NaN" in ins.mods
    fn = fp.signed_zeros((np.maximum if big else np.minimum) if nan_prop else
                         (np.fmax if big else np.fmin), big)
    absolute = "abs" in ins.mods
    f32 = np.dtype(np.float32)
    ra = reader(ins.srcs[0], f32, mod, ins.line)
    rmask = reader(ins.srcs[1], U32, mod, ins.line)
    wd = writer(ins.dsts[0], mod, ins.line)

    def ex(m, mask):
        act = np.ones((m.T // 32, 32), bool) if mask is None else mask.reshape(-1, 32)
        v = _warp_view(m, ra(m), f32)
        if absolute:
            v = np.abs(v)
        # a lane outside the group: NaN, which fmin/fmax ignore, or (.NaN) the identity
        skip = np.float32(np.nan) if not nan_prop else np.float32(-np.inf if big else np.inf)
        v = np.where(act, v, skip)
        r = v[:, 0]
        for lane in range(1, 32):
            r = fn(r, v[:, lane])
        wd(m, np.repeat(fp.canonical_nan(np.asarray(r, f32)), 32), mask)
    return _warp_sync(ins, mod, ex, rmask)


def _activemask(ins, mod):
    wd = writer(ins.dsts[0], mod, ins.line)

    def ex(m, mask):
        act = np.ones((m.T // 32, 32), bool) if mask is None else mask.reshape(-1, 32)
        wd(m, np.repeat(_bits(act), 32), mask)
    return ex


def _nop(ins, mod):
    return lambda m, mask: None


def _fence(ins, mod):
    """``membar``/``fence``: no effect on the simulator's in-order memory; racecheck
    orders accesses through it (release and acquire patterns, ``RaceTracker.fence``)."""
    def ex(m, mask):
        if m.race is not None:
            m.race.fence(ins, mask)
    return ex


SYNC = {"bar": _bar, "barrier": _bar, "shfl": _shfl, "vote": _vote, "match": _match,
        "redux": _redux}
WARP = {"activemask": _activemask, "membar": _fence, "fence": _fence, "nanosleep": _nop,
        "prefetch": _nop, "prefetchu": _nop, "pmevent": _nop, "discard": _nop}
