"""memcheck's conflicting-store check: threads of one plain global store that write
different values to the same bytes.

When several threads of a warp store to one address in one instruction, the GPU
keeps one of the values and which one is undefined (CUDA Programming Guide,
"Compute Capability 5.x and later, Global Memory": "If a non-atomic instruction
executed by a warp writes to the same location in global memory for more than one
of the threads of the warp, only one thread performs a write and which thread does
it is undefined"); threads of different warps storing to one location without an
ordering between them are a data race (PTX ISA 8.8 "Memory Consistency Model:
Data-race"). A student's first dot product, ``out[0] += a[i] * b[i]`` in every
thread, is this: each thread reads ``out[0]``, adds its product and stores, and one
store survives. The launch still runs without a fault, so memcheck's address checks
see nothing; this check reports it.

What counts: a plain (weak) ``st`` to global memory, or a generic ``st`` whose lanes
land in global memory, whose active lanes (every lane the simulator executes the
instruction for at once: those of a warp, and of other warps and blocks at the same
instruction) write at least two different byte patterns to the same address, or the
same bytes that each computed from a load of that address (``h[x[i]] = h[x[i]] + 1``:
the colliding threads all read 0 and store 1, so one count is kept where several were
made; the bytes must change, so ``if found[0] == 0: found[0] = 1`` is no finding: its
stored value derives from no load). Every
lane of one ``st`` stores the same number of bytes at an address aligned to that
size (memcheck's alignment check runs first), so overlapping bytes means the same
address. Not counted: lanes storing the same value (``found[0] = 1`` from every
thread that finds something is common and harmless), atomics (``atom``/``red``),
strong stores (``st.relaxed``/``.release``/``.volatile``: ``wl.atomic_store``; two
strong accesses are morally strong, no data race), and shared memory (racecheck's).

Cost: the usual store (one address per lane, increasing with the lane) is ruled out
by one O(n) comparison of neighbouring addresses; a uniform address (one register
for all lanes) with different values by one comparison of the values; only other
patterns are sorted. Lanes sharing an address with one value look further only when
a load in the store's basic block feeds the stored value (found once per store by a
backward pass over the block's registers).
An instruction already reported is not checked again, and the launch goes on (the
GPU does not fault: it keeps one value).

The finding names the address, the allocation it lies in (``details["place"]``, for
:mod:`warp_lab.runtime.finding_text` to say as an array element), how many threads
store there (``"threads"``) and how many other addresses of the same execution
conflict too (``"more_addresses"``), and, when the lanes read that address earlier in
the same basic block (a load of the same address whose address register is not
written between the two, ``"read_ptx_line"``), that they read it before any wrote it:
the read-modify-write ``+=`` pattern.
"""

from __future__ import annotations

import numpy as np

from warp_lab.sim.memory import LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE
from warp_lab.sim.ptx import cached_on

__all__ = ["check_store", "update_op", "shared_updates"]

_ENDS_BLOCK = ("bra", "brx", "call", "ret", "exit", "bar", "barrier", "trap")


def check_store(m, ins, space: str, addr: np.ndarray, idx: np.ndarray, vals: np.ndarray,
                uniform: bool, groups) -> None:
    """Report a ``global_conflict`` finding when lanes of store ``ins`` write different
    values to the same global address, or the same value computed from what each read
    there (the module docstring says what counts).

    Args:
        m: the machine (memcheck on; ``m.conflict_pcs`` holds the pcs already reported).
        ins: the ``st`` instruction (plain, global or generic space).
        space: ``"global"`` or ``"generic"``.
        addr: uint64 address of each executing lane, shape ``(k,)``.
        idx: batch thread index of each lane, shape ``(k,)``.
        vals: the stored raw values, shape ``(k, vector width)``.
        uniform: one address for every lane (a scalar address register).
        groups: :func:`~warp_lab.sim.memops.access`'s resolution of ``addr`` (the bytes
            there now, for the same-value case).
    """
    if idx.size < 2:
        return
    if space == "generic":
        glob = ~(((addr - np.uint64(SHARED_WINDOW)) < np.uint64(WINDOW_SIZE))
                 | ((addr - np.uint64(LOCAL_WINDOW)) < np.uint64(WINDOW_SIZE)))
        if not glob.all():
            return _check_generic(m, ins, addr, idx, vals, glob, groups)
    if uniform:
        order = np.arange(idx.size)
        dup = np.ones(idx.size, bool)
        differ = not (vals == vals[0]).all()
        first, more = addr[0], 0
    else:
        if (addr[1:] > addr[:-1]).all():
            return          # distinct addresses, increasing with the lane: the usual store
        if _distinct(m, addr, vals.shape[1] * vals.itemsize):
            return
        order = np.argsort(addr, kind="stable")
        s = addr[order]
        same = s[1:] == s[:-1]
        if not same.any():
            return
        v = vals[order]
        pair = same & (v[1:] != v[:-1]).any(axis=1)
        differ = pair.any()
        if differ:
            bad = s[1:][pair]
            more = int(np.count_nonzero(np.r_[True, bad[1:] != bad[:-1]])) - 1
            first = bad[0]
        dup = np.zeros(idx.size, bool)       # in sorted order: lanes sharing their address
        dup[1:] |= same
        dup[:-1] |= same
    if differ:
        lanes = order[addr[order] == first]
        return _report(m, ins, int(first), vals, idx, lanes, more)
    # one value per address: a lost update when the value was computed from a load of
    # that address in the same lanes and changes the bytes there (h[k] = h[k] + 1)
    lost = _lost_updates(m, ins, addr, idx, vals, order[dup], groups)
    if lost is not None and lost.size:
        la = addr[lost]
        bad = np.unique(la)
        lanes = lost[la == bad[0]]
        _report(m, ins, int(bad[0]), vals, idx, lanes, bad.size - 1)


#: the most elements of the scratch table :func:`_distinct` keeps (int32: 64 MiB)
_SCRATCH_MAX = 1 << 24


def _distinct(m, addr, size) -> bool:
    """Whether the (aligned, ``size``-byte) addresses ``addr`` are all different, without
    sorting: decreasing with the lane, or, within a span of at most ``_SCRATCH_MAX``
    elements, by writing each lane's number into a scratch table at its element and
    reading them back (a lane whose number was overwritten shares its element; nothing
    is cleared, only the entries just written are read). Else by sorting."""
    if (addr[1:] < addr[:-1]).all():
        return True
    lo = addr.min()
    span = int(addr.max() - lo) // size + 1
    if span > _SCRATCH_MAX:
        s = np.sort(addr)
        return not (s[1:] == s[:-1]).any()
    if m.conflict_scratch.size < span:
        m.conflict_scratch = np.empty(max(span, 2 * m.conflict_scratch.size), np.int32)
    e = ((addr - lo) // np.uint64(size)).astype(np.intp)
    lanes = np.arange(addr.size, dtype=np.int32)
    m.conflict_scratch[e] = lanes
    return bool((m.conflict_scratch[e] == lanes).all())


def _check_generic(m, ins, addr, idx, vals, glob, groups):
    """:func:`check_store` for a generic store some of whose lanes land in shared or local
    memory (not this check's): the global lanes alone."""
    pos = np.flatnonzero(glob)
    if pos.size < 2:
        return
    sub = [(buf, lanes, off) for buf, lanes, off in groups
           if buf is not m.shared and buf is not m.local]
    # (access resolves each window separately; the global lanes are positions in pos)
    remap = np.full(idx.size, -1)
    remap[pos] = np.arange(pos.size)
    sub = [(buf, remap[lanes] if lanes is not None else None, off) for buf, lanes, off in sub]
    check_store(m, ins, "global", addr[pos], idx[pos], vals[pos], False, sub)


def _lost_updates(m, ins, addr, idx, vals, cand, groups):
    """Of lane positions ``cand`` (lanes sharing their address with another), those whose
    stored value derives from a load, earlier in the basic block, of the address it is
    stored to, and differs from the bytes there now: several such lanes at one address are
    updates of which one is kept. None when no load of the block feeds the stored value."""
    from warp_lab.sim.memops import _gather, address_of   # (memops imports this module)
    feeding = [p for p, depends in _block_loads(m, ins) if depends]
    if not feeding or cand.size < 2:
        return None
    read = np.zeros(cand.size, bool)
    for p in feeding:
        a = np.broadcast_to(np.asarray(address_of(m, p), np.uint64), (m.T,))
        read |= a[idx[cand]] == addr[cand]
    if not read.any():
        return None
    now = _gather(groups, addr.size, vals.itemsize, vals.shape[1])
    changes = (now[cand] != vals[cand]).any(axis=1)
    lost = cand[read & changes]
    # an address counts when at least two of its lanes lose their update
    if lost.size < 2:
        return lost[:0]
    la = addr[lost]
    u, inv, counts = np.unique(la, return_inverse=True, return_counts=True)
    return lost[counts[inv] > 1]
def _report(m, ins, addr, vals, idx, lanes, more):
    """Record the finding for the lanes at positions ``lanes`` storing to ``addr``."""
    m.conflict_pcs.add(ins.pc)
    size = vals.shape[1] * vals.itemsize
    threads = idx[lanes]
    nvalues = np.unique(vals[lanes], axis=0).shape[0]
    hit = m.memory.find(addr)
    place = ""
    if hit is not None:
        base, n, name = hit
        place = f"byte {addr - base} of {name!r}, {n} bytes at {base:#x}"
    read = _read_before(m, ins, threads, addr)
    update = update_op(m.mod, ins) if read is not None else None
    k = threads.size
    where = (f"the same {size} bytes of global memory at address {addr:#x}"
             + (f" ({place})" if place else ""))
    if nvalues > 1:
        message = (f"{k} threads store {nvalues} different values to {where}: only one "
                   "thread's value is kept (which one is undefined on a GPU)")
    else:
        message = (f"{k} threads update {where} with the same value: one update is kept "
                   f"where {k} were made")
    if read is not None:
        message += (f"; each thread read these bytes (PTX line {read}) before any wrote "
                    "them, so the other threads' updates are lost (a data race: the read "
                    "and the write are two accesses, not one atomic update)")
    if more:
        message += f"; {more} other address{'es' * (more > 1)} of this store too"
    message += (f"; fix: an atomic (atom.global.{update})" if update else
                "; fix: an atomic (atom.global.add for a sum)") + " or a reduction"
    m.finding("global_conflict", message, ins, int(threads[0]), address=addr, size=size,
              space="global", threads=k, values=nvalues, more_addresses=more,
              **({"update_op": update} if update else {}),
              **({"place": place} if place else {}),
              **({"read_ptx_line": read} if read is not None else {}))


#: PTX operations an update ``x = x <op> v`` may end with that an atomic does in one step
#: (``atom.<op>``; ``wl.atomic_<op>``)
_ATOMIC_UPDATES = ("add", "sub", "or", "and", "xor", "max", "min")


def update_op(mod, ins):
    """The operation (one of :data:`_ATOMIC_UPDATES`) that computes the value store ``ins``
    (of module ``mod``) writes, found backwards in its basic block through ``mov``/``cvt``
    copies, or None (another operation, or the value comes from elsewhere): ``h[k] |= bit``
    ends with an ``or``, so ``atom.or`` (``wl.atomic_or``) is the update done atomically."""
    fn = mod.functions[ins.function]
    starts = set(fn.labels.values())
    src = ins.srcs[1] if len(ins.srcs) > 1 else None
    if src is None or src[0] != "r":
        return None
    want = src
    pc = ins.pc
    while pc > fn.start and pc not in starts:
        pc -= 1
        p = mod.code[pc]
        if p.op in _ENDS_BLOCK:
            return None
        if want not in set(_regs(p.dsts)):
            continue
        if p.op in ("mov", "cvt") and p.srcs and p.srcs[0][0] == "r":
            want = p.srcs[0]
            continue
        return p.op if p.op in _ATOMIC_UPDATES else None
    return None


#: what ends the search for a shared update's load (:func:`shared_updates`) besides the end
#: of the basic block: an instruction that may order another thread's access between the
#: load and the store (a fence, an atomic)
_ORDERING = ("membar", "fence", "atom", "red")
_NOT_SHARED = ("global", "param", "const", "local")


def shared_updates(mod) -> dict:
    """The read-modify-write updates of shared memory in module ``mod``: ``{store pc: (load,
    op)}`` for each plain, unguarded ``st`` that may touch shared memory (``.shared`` or
    generic) and writes back a value computed from a plain, unguarded ``ld`` of the same
    address operand earlier in its basic block (``s[k] |= bit``: ``ld [%r8]``, ``or``, ``st
    [%r8]``), with the address register not written, and no fence, atomic, strong access or
    other store to that address, between them; ``op`` the update's operation
    (:func:`update_op`, None when no atomic does it). racecheck reports the races of such a
    pair by several threads as one lost update, with the atomic that fixes it (as this
    module's ``global_conflict`` finding does for global memory). Cached on the module.
    """
    from warp_lab.sim.racecheck import strong_access        # (racecheck imports this module)

    def plain(c):
        return (c.guard is None and c.srcs and c.srcs[0][0] == "a" and not strong_access(c)
                and not any(q in c.mods for q in _NOT_SHARED))

    def find():
        out = {}
        for ins in mod.code:
            if ins.op != "st" or not plain(ins):
                continue
            fn = mod.functions[ins.function]
            starts = set(fn.labels.values())
            addr, base = ins.srcs[0], ins.srcs[0][1]
            live = set(_regs(ins.srcs[1:]))
            written: set = set()
            pc = ins.pc
            while pc > fn.start and pc not in starts:
                pc -= 1
                p = mod.code[pc]
                if p.op in _ENDS_BLOCK or p.op in _ORDERING or (
                        p.op in ("ld", "st") and strong_access(p)) or (
                        p.op == "st" and p.srcs and p.srcs[0] == addr):
                    break
                dsts = set(_regs(p.dsts))
                if (p.op == "ld" and plain(p) and p.srcs[0] == addr and dsts & live
                        and not (isinstance(base, tuple) and base in written | dsts)):
                    out[ins.pc] = (p, update_op(mod, ins))
                    break
                if dsts & live:
                    live -= dsts
                    live.update(_regs(p.srcs))
                written |= dsts
        return out
    return cached_on(mod, "_shared_updates", find)


def _read_before(m, ins, threads, addr):
    """The PTX line of a load, earlier in ``ins``'s basic block, of ``addr`` by every
    one of ``threads`` (batch thread indices), or None."""
    from warp_lab.sim.memops import address_of   # (memops imports this module)
    for p, _ in _block_loads(m, ins):
        a = np.broadcast_to(np.asarray(address_of(m, p), np.uint64), (m.T,))[threads]
        if (a == np.uint64(addr)).all():
            return p.line
    return None


def _block_loads(m, ins) -> list:
    """``(load, feeds)`` for each unguarded global or generic ``ld`` earlier in store
    ``ins``'s basic block whose address register is not written between it and ``ins``
    (so that register holds now the address the load used), nearest first; ``feeds``:
    the stored value derives from the loaded one (through the registers the instructions
    between write). Computed once per store (``m.block_loads``)."""
    hit = m.block_loads.get(ins.pc)
    if hit is not None:
        return hit
    mod = m.mod
    fn = mod.functions[ins.function]
    starts = set(fn.labels.values())
    written: set = set()
    live = set(_regs(ins.srcs[1:]))      # what the stored value derives from
    out = []
    pc = ins.pc
    while pc > fn.start and pc not in starts:
        pc -= 1
        p = mod.code[pc]
        if p.op in _ENDS_BLOCK:
            break
        dsts = set(_regs(p.dsts))
        if (p.op in ("ld", "ldu") and p.guard is None and p.srcs and p.srcs[0][0] == "a"
                and not any(s in p.mods for s in _OTHER_SPACES)):
            base = p.srcs[0][1]
            if not (isinstance(base, tuple) and (base in written or base in dsts)):
                out.append((p, bool(dsts & live)))
        if dsts & live:
            live -= dsts
            live.update(_regs(p.srcs))
        written |= dsts
    m.block_loads[ins.pc] = out
    return out


_OTHER_SPACES = ("shared", "shared::cta", "local", "param", "const")


def _regs(ops):
    """The registers among operands ``ops`` (an address's base register too)."""
    for d in ops:
        if d[0] == "r":
            yield d
        elif d[0] == "a" and isinstance(d[1], tuple):
            yield d[1]
        elif d[0] == "v":
            yield from _regs(d[1])
        elif d[0] in ("pair", "neg"):
            yield from _regs(d[1:])
