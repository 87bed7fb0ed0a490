"""racecheck: shared-memory hazards between threads with no barrier between them.

Per byte of each block's shared memory the tracker remembers the last writer
and the reader(s) since the last barrier (``-1`` none, ``-2`` several
threads). An access by thread *t* is a hazard when another thread wrote the
byte (read-after-write, write-after-write) or another thread read it
(write-after-read) since the block's last completed barrier; a barrier
resets the block's records. This is the hazard definition of
compute-sanitizer's racecheck tool (CUDA Compute Sanitizer documentation,
"Racecheck Tool"). Each (kind, line pair) is reported once, with both threads
and both PTX lines. A read-modify-write update of a cell by several threads (``s[k] |=
bit``: :func:`~warp_lab.sim.store_conflicts.shared_updates`) is reported once per store,
as a lost update (``race_waw``) with the atomic that does it in one step, instead of as
its write-after-read, write-after-write and read-after-write hazards (as memcheck's
``global_conflict`` says it for global memory).

Atomics (``atom``/``red`` on shared memory, generic ones that land there) and
strong ``ld``/``st`` (``.relaxed``/``.acquire``/``.release``/``.volatile``:
``wl.atomic_load``/``wl.atomic_store``) are *morally strong*: two of them are no
data race, but one of them and a plain access that conflict are (PTX ISA 8.8
"Memory Consistency Model": a data race is two conflicting accesses, not both
morally strong, that no happens-before orders). So an atomic (it reads and
writes) is checked against the plain writer (read-after-write; a strong ``st``
or ``red``: write-after-write) and the plain readers (write-after-read) and
recorded, not as a writer, in a second readers-only record per cell: the atomic and strong
accesses since the last plain write, by the same clocks and per-lane rows as
plain readers. A plain read after them is read-after-write, a plain write
write-after-write (which then forgets them: an atomic before it that is
unordered with a later access is unordered with the write, or the write with
that access, found there). The finding says which access was the atomic one
and that a ``wl.syncthreads()`` between the plain accesses (an initialisation)
and the atomics orders them: the bins zeroed by 16 threads and counted into with
``atomic_add`` with no barrier between run right here, in order, and not on a
GPU. A strong ``ld`` is checked against plain writes and recorded in a third
readers-only record (the strong loads since the last plain write), which a plain write
checks (write-after-read: ``wl.atomic_load`` of a cell and a plain store to it by another
thread with nothing between race; a plain read does not conflict with it).
Strong accesses and fences also *synchronize* (PTX ISA 8.8 "Memory Consistency Model",
"Release and Acquire Patterns"): a release pattern (a fence, ``membar``/``fence.sc``/
``fence.acq_rel``/``fence.release`` (``wl.threadfence*``), followed in program order by a
strong write, or a ``.release`` write) synchronizes with an acquire pattern (a strong read
followed by an acquire fence, or an ``.acquire`` read) whose read observes the write,
directly or through a chain of atomic read-modify-writes (observation order); what the
releasing thread did before its fence then happens before what the acquiring one does
after its. In a module with a fence (or a ``.release``/``.acquire`` access) and a strong
access (:func:`has_fence_sync`) the tracker stamps accesses with its clock as for warp
syncs, and keeps per thread a row of clocks over its block's threads (made when it first
fences or reads a released flag): ``hb`` (accesses of thread *j* stamped below ``hb[t,
j]`` happen before *t*'s), ``rel`` (``hb`` as of the thread's last release fence, its own
entry the clock there) and ``pend`` (what its strong reads took since, made its own at its
next acquire fence); a strong write puts its thread's ``rel`` on the location (an atomic
adds it to what is there, lane by lane in the simulator's order; a store replaces it), a
strong read takes it. The flag may be in shared or global memory (``sync_access``, called
for strong accesses of every space); only threads of one block count (racecheck checks
shared memory). The readers of a cell are then kept per warp once several warps read it
(a row of ``sub``: one record per warp of the block, each as one warp's readers are kept,
below), so a buffer read by three warps and overwritten after each one's release is no
race, and a write is checked against each warp's readers (the race names one of them).
The scope of the fences is not checked (every scope includes the threads of a block). A
release hands on what warp syncs ordered before it, and a warp sync what its lanes
acquired to the lanes it syncs them with (lane 0 spins on a flag and fences,
``__syncwarp()``, every lane reads the data: each lane's ``hb`` row becomes the maximum of
its group's). Not modelled: ordering through ``fence.sc`` order alone (two ``fence.sc``
with no flag observed between them: the order is the run's choice, so a kernel relying on
it races in another run), and a *plain* write of a flag (it races with the strong accesses
of it anyway).
A fence after the flag's store or before the flag's load is no release (acquire) pattern:
the data accesses race.

``bar.warp.sync`` (``__syncwarp``) orders memory among the lanes that execute it
together (CUDA Programming Guide, ``__syncwarp()``: "guarantees memory ordering
among threads participating in the barrier"; PTX ISA, ``bar.warp.sync``). In a
module that has one, the tracker stamps each access with a sync counter and
keeps, per thread, the last sync it shared with each lane of its warp: an access
by a lane of the writer's (or readers') warp is no hazard when both lanes took
part in a warp sync after it, or are linked by a chain of them (happens-before
is transitive: a sync passes on what each lane had already seen). A write is
checked against each reader lane's own last read clock: a byte's readers keep
one clock while they all read at it, and a row of 32 (one per lane, 128 bytes)
from the first read at another clock until the next write or barrier, so
readers ordered before the writer by different partial-mask syncs are no
hazard. Lanes of one warp with no sync between them, and different warps with
no ``bar.sync``, are still hazards (as compute-sanitizer reports them under
independent thread scheduling).

Cost: the records are int32 and kept per aligned 4-byte word while every access of the
word covers it whole (naturally aligned 4-, 8- and 16-byte accesses: ``f32``/``s32``,
``f64``, ``v2``/``v4``), so such an access is checked with one record per word, not four;
a 1- or 2-byte access splits the words it touches into per-byte records until the next
barrier (exact: a whole word's four bytes always have equal records). While nothing was
written (read) since every record was last forgotten, accesses skip the check against
writers (readers), and while no atomic was recorded, plain accesses skip the check
against atomics (a module with no atomic or strong access of shared memory has no such
record at all). Memory per shared byte: :func:`bookkeeping_per_byte`.
"""

from __future__ import annotations

import numpy as np

from warp_lab.sim.initcheck import variable_at
from warp_lab.sim.provenance import address_variable
from warp_lab.sim.ptx import cached_on, type_dtype
from warp_lab.sim.store_conflicts import shared_updates

__all__ = ["RaceTracker", "has_warp_sync", "bookkeeping_per_byte"]

_WEIGHTS = np.uint32(1) << np.arange(32, dtype=np.uint32)
_NOT_SHARED = ("global", "param", "const", "local")


def has_warp_sync(mod) -> bool:
    """Whether module ``mod`` has a ``bar.warp.sync`` (cached on the module)."""
    return cached_on(mod, "_has_warp_sync", lambda: any(
        c.op in ("bar", "barrier") and "warp" in c.mods for c in mod.code))


_ORDERS = ("acquire", "release", "acq_rel")


def _sync_fence(c) -> bool:
    """Whether instruction ``c`` is a memory fence that orders (``membar``, ``fence.sc``,
    ``fence.acq_rel``, ``fence.acquire``/``.release``; not ``fence.proxy`` or
    ``fence.mbarrier_init``)."""
    return c.op == "membar" or (c.op == "fence" and not any(
        s in c.mods for s in ("proxy", "mbarrier_init")) and not any(
        s.startswith("proxy") for s in c.mods))


def has_fence_sync(mod) -> bool:
    """Whether module ``mod`` may synchronize threads through release and acquire patterns:
    it has a fence (:func:`_sync_fence`) or an ``.acquire``/``.release``/``.acq_rel``
    access, and an atomic or strong access of any space (the flag). racecheck then stamps
    accesses with a clock and keeps, per thread, what it learned of its block's threads
    (:class:`RaceTracker`; cached on the module)."""
    def find():
        fence = any(_sync_fence(c) or (c.op in ("ld", "st", "atom", "red") and any(
            q in c.mods for q in _ORDERS)) for c in mod.code)
        return fence and any(c.op in ("atom", "red") or (
            c.op in ("ld", "st") and strong_access(c)) for c in mod.code)
    return cached_on(mod, "_race_fence_sync", find)


def _stamped(mod) -> bool:
    """Whether racecheck stamps accesses with a clock in module ``mod`` (warp syncs or
    release/acquire synchronization may order them)."""
    return has_warp_sync(mod) or has_fence_sync(mod)


def _may_split(mod) -> bool:
    """Whether module ``mod`` has an ``ld``/``st`` of fewer than 4 bytes per lane that may
    touch shared memory (``.shared`` or generic): racecheck then keeps records per byte
    for the words it touches (cached on the module)."""
    return cached_on(mod, "_race_may_split", lambda: any(_sub_word(c) for c in mod.code))


def _sub_word(c) -> bool:
    """Whether instruction ``c`` is an ``ld``/``st`` of fewer than 4 bytes per lane (or of
    a type this cannot size) that may touch shared memory (:func:`_may_split`)."""
    if c.op not in ("ld", "st") or not c.types or any(s in _NOT_SHARED for s in c.mods):
        return False
    vec = next((int(s[1:]) for s in c.mods if s in ("v2", "v4", "v8")), 1)
    try:
        return type_dtype(c.types[0]).itemsize * vec < 4
    except (KeyError, TypeError, ValueError):
        return True


def has_strong(mod) -> bool:
    """Whether module ``mod`` has an atomic (``atom``/``red``) or strong ``ld``/``st``
    (:func:`strong_access`) that may touch shared memory (``.shared`` or generic): racecheck
    then keeps a record of them per cell (cached on the module)."""
    return cached_on(mod, "_race_has_strong", lambda: any(
        (c.op in ("atom", "red") or (c.op in ("ld", "st") and strong_access(c)))
        and not any(s in _NOT_SHARED for s in c.mods) for c in mod.code))


def _regs(operand) -> set:
    """The registers (``("r", n)`` tuples) inside a decoded operand."""
    if isinstance(operand, tuple) and len(operand) == 2 and operand[0] == "r":
        return {operand}
    out = set()
    if isinstance(operand, (tuple, list)):
        for part in operand:
            out |= _regs(part)
    return out


#: how far (instructions) after its seed load a compare-and-swap loop's ``atom.cas`` may be
_CAS_WINDOW = 32


def cas_seeds(mod) -> frozenset:
    """The pcs of the ``ld`` instructions that seed a compare-and-swap loop: a load whose
    destination is the compare operand of a later ``atom.cas`` of the same address (same
    operand, its registers and the loaded one not written in between, no branch between;
    cached on the module). That is how an atomic read-modify-write with no instruction of
    its own is built — LLVM's expansion of ``atomicrmw fmax``/``fmin`` on float32 (a shared
    ``wl.atomic_max``/``atomic_min``), and the CUDA Programming Guide's ``atomicAdd`` of
    ``double`` from ``atomicCAS`` ("Atomic Functions": ``old = *address`` then the loop).
    The load only guesses the old value, which the ``atom.cas`` checks, so racecheck counts
    it as part of the atomic: a strong access (no race with the other threads' atomics, a
    race still with their plain accesses)."""
    def find():
        seeds = set()
        code = mod.code
        for ld in code:
            if ld.op != "ld" or len(ld.dsts) != 1 or not ld.srcs or ld.srcs[0][0] != "a":
                continue
            dst, addr = ld.dsts[0], ld.srcs[0]
            if dst[0] != "r":
                continue
            watch = _regs(addr) | {dst}
            space = [x for x in ld.mods if x in ("shared", "global", "local")]
            for c in code[ld.pc + 1:ld.pc + 1 + _CAS_WINDOW]:
                if c.function != ld.function or c.op in ("bra", "ret", "exit", "call"):
                    break
                if c.op == "atom" and "cas" in c.mods and len(c.srcs) >= 2 \
                        and c.srcs[0] == addr and c.srcs[1] == dst \
                        and [x for x in c.mods if x in ("shared", "global", "local")] == space:
                    seeds.add(ld.pc)
                    break
                if any(_regs(d) & watch for d in c.dsts):
                    break
        return frozenset(seeds)
    return cached_on(mod, "_race_cas_seeds", find)


def has_strong_load(mod) -> bool:
    """Whether module ``mod`` has a strong ``ld`` (:func:`strong_access`; ``wl.atomic_load``)
    that may touch shared memory: racecheck then keeps a record of them per cell, for the
    plain writes after them (cached on the module)."""
    return cached_on(mod, "_race_has_strong_load", lambda: any(
        c.op == "ld" and (strong_access(c) or c.pc in cas_seeds(mod))
        and not any(s in _NOT_SHARED for s in c.mods) for c in mod.code))


def strong_access(ins) -> bool:
    """Whether ``ld``/``st`` ``ins`` is a *strong* access (``.relaxed``/``.acquire``/
    ``.release``, or ``.volatile``, which PTX treats as ``.relaxed.sys``; ``wl.atomic_load``
    and ``wl.atomic_store``): two strong (or atomic) accesses of one location are morally
    strong and no data race, a plain access and a strong one that conflict are (PTX ISA 8.8
    "Memory Consistency Model: Data-race")."""
    return any(q in ins.mods for q in ("relaxed", "acquire", "release", "volatile"))


def bookkeeping_per_byte(mod) -> int:
    """Bytes of racecheck records per byte of shared memory for module ``mod`` (for the
    simulator's batch sizing): 16 bytes per 4-byte word, 32 with ``bar.warp.sync``;
    8 (20) more with atomics or strong accesses of shared memory (:func:`has_strong`), as
    many again with strong loads (:func:`has_strong_load`);
    as many again per byte when a sub-word access may split words into bytes. The rows
    of per-lane read clocks made on demand are not counted."""
    ws = _stamped(mod)
    per_cell = (32 if ws else 16) + ((20 if ws else 8) if has_strong(mod) else 0) \
        + ((20 if ws else 8) if has_strong_load(mod) else 0)
    return per_cell // 4 + (per_cell if _may_split(mod) else 0)


class _Cells:
    """Hazard records of ``n`` cells (a cell: one 4-byte word, or one byte), int32.

    ``writer``/``reader``: batch thread of the last write / of the reads since it
    (``-1`` none, ``-2`` several threads); ``wpc``/``rpc``: their instruction indices.
    With ``bar.warp.sync`` (``ws``): ``wst`` the clock at the last write; ``rst`` the
    readers' clock (``>= 0``: all read at it; ``-(row + 1)``: per lane, row ``row`` of
    the tracker's ``rtab``); ``rwarp`` the readers' warp (``-2`` several); ``rlanes``
    their lanes (bit per lane); with release/acquire synchronization a cell read by several
    warps has ``rwarp`` -3 and ``rst`` ``-(row + 1)``, row ``row`` of the tracker's
    ``sub`` (these records, one per warp of the block). ``readers_only``: no writer
    fields (the record of the atomic and strong accesses since the last plain write, kept
    as "readers" because they are no hazard to each other).
    """

    def __init__(self, n: int, ws: bool, readers_only: bool = False):
        self.reader = np.full(n, -1, np.int32)
        self.rpc = np.zeros(n, np.int32)
        self.fields = ["reader", "rpc"]
        if not readers_only:
            self.writer = np.full(n, -1, np.int32)
            self.wpc = np.zeros(n, np.int32)
            self.fields += ["writer", "wpc"]
        if ws:
            self.rst = np.zeros(n, np.int32)
            self.rwarp = np.full(n, -1, np.int32)
            self.rlanes = np.zeros(n, np.uint32)
            self.fields += ["rst", "rwarp", "rlanes"]
            if not readers_only:
                self.wst = np.zeros(n, np.int32)
                self.fields.append("wst")
        self.readers_only = readers_only

    def forget(self, sl):
        """Forget the writers and readers of cells ``sl`` (a slice)."""
        if not self.readers_only:
            self.writer[sl] = -1
        self.reader[sl] = -1


class RaceTracker:
    """Hazard bookkeeping for the shared memory of one batch of blocks.

    Records are kept per aligned 4-byte word while every access of the word covers it
    whole (a naturally aligned access of 4, 8 or 16 bytes: the word's four bytes then
    have the same records, so one check per word is the per-byte check); the first
    access of fewer than 4 bytes *splits* the words it touches: their records are copied
    to per-byte records, which serve every later access of those words until a barrier
    forgets them (``split``). Findings and their byte offsets are the per-byte ones.

    Args:
        m: the machine (for thread coordinates and findings).
        nb: blocks in the batch.
        stride: bytes of shared memory per block (a multiple of 16).
    """

    def __init__(self, m, nb: int, stride: int):
        self.m = m
        self.stride = stride
        self.nb = nb
        self.ws = _stamped(m.mod)
        # release/acquire through fences and strong accesses (None: the module has none)
        self.fs = has_fence_sync(m.mod)
        self.hb = None          # (T, block threads): what each thread learned (clocks)
        self.rel = None         # the same, as of each thread's last release
        self.pend = None        # the same, read by strong reads since the last acquire
        self.flags = {}         # location -> {block: clocks released into it}
        self.words = _Cells(nb * stride // 4, self.ws)
        self.bytes = None       # per-byte records, made at the first sub-word access
        # the atomic and strong accesses since the last plain write, per word and per byte
        # (None: the module has none that may touch shared memory)
        self.awords = _Cells(len(self.words.reader), self.ws, True) \
            if has_strong(m.mod) else None
        self.abytes = None
        # the strong loads since the last plain write (None: the module has none)
        self.lwords = _Cells(len(self.words.reader), self.ws, True) \
            if has_strong_load(m.mod) else None
        self.lbytes = None
        self.split = None       # per word: its records are in ``bytes`` (bool)
        self.splitting = None   # the words being split now (int64), while their records copy
        self.any_split = False  # whether a word may be split (False: none is)
        # whether any access wrote / read since every record was last forgotten: while
        # not, every writer / reader is -1 and the access needs no check against them
        self.wrote = self.read = False
        self.atomic = False     # whether an atomic or strong access was recorded since then
        self.sload = False      # whether a strong load was recorded since then
        self.base = self.tids = None    # per batch thread: its block's first byte; itself
        # read-modify-write updates (s[k] |= bit): store pc -> (load, op); load pc -> store pc
        self.updates = shared_updates(m.mod)
        self.update_loads = {ld.pc: pc for pc, (ld, _) in self.updates.items()}
        if self.ws:
            self.g = 0                                    # warp syncs so far (a clock)
            self.seen = np.zeros((m.T, 32), np.int32)     # last sync of thread t with lane j
            self.rtab = np.zeros((0, 32), np.int32)       # per-lane read clocks, by row
            self.nrows = 0                                # rows of rtab in use
        if self.fs:
            # readers of several warps of a cell: a row of ``sub`` per cell, one record per
            # warp of the block (a cell's ``rst`` is ``-(row + 1)``, its ``rwarp`` -3)
            self.nw = m.bs_pad // 32
            self.sub = _Cells(0, True, True)
            self.nsub = 0                                 # rows of sub in use

    def warp_sync(self, lanes, membermask):
        """Lanes ``lanes`` (bool ``(T,)``, ``None`` all) execute ``bar.warp.sync`` together
        with per-thread ``membermask`` (uint32): each becomes ordered after the accesses
        so far of the lanes of its warp that execute it with it and are in its mask."""
        if not self.ws:
            return
        m = self.m
        here = np.ones(m.T, bool) if lanes is None else lanes
        idx = np.flatnonzero(here)
        if idx.size == 0:
            return
        self.g += 1
        bits = np.packbits(here, bitorder="little").view("<u4")      # lanes here, per warp
        mm = np.asarray(membermask, np.uint32)
        if mm.ndim:
            mm = mm[idx]
            if (mm == mm[0]).all():
                mm = mm[0]
        if mm.ndim == 0:
            self._warp_sync_one_mask(idx, bits, mm)
            return
        together = bits[idx >> 5] & mm
        sel = ((together[:, None] >> np.arange(32, dtype=np.uint32)) & np.uint32(1)).astype(bool)
        # happens-before is transitive: each lane learns what its partners had seen
        # (lane 0 writes, syncs with lane 1, which syncs with lane 2: lane 2 may read)
        # (one group per warp and mask: usually one per warp, so O(threads * 32))
        key = (idx.astype(np.int64) >> 5 << 32) | together.astype(np.int64)
        _, first, inv = np.unique(key, return_index=True, return_inverse=True)
        gsel = sel[first]                                                    # (G, 32)
        partners = self.seen[((idx[first] >> 5) << 5)[:, None] + np.arange(32)]  # (G, 32, 32)
        rows = np.where(gsel[:, :, None], partners, 0).max(1)[inv.reshape(-1)]
        rows = np.maximum(rows, self.seen[idx])
        rows[sel] = self.g
        self.seen[idx] = rows
        self._warp_sync_hb(idx, together)

    def _warp_sync_one_mask(self, idx, bits, mm):
        """:meth:`warp_sync` of lanes ``idx`` when they all give mask ``mm``: one group per
        warp (``bits``: its lanes here), the lanes ``bits & mm`` together."""
        tog = bits & mm
        wi = idx >> 5
        if self.hb is not None:
            self._warp_sync_hb(idx, tog[wi])
        full = tog[wi] == np.uint32(0xFFFFFFFF)
        # a whole warp together: each lane is ordered after every access of all 32
        if full.all():
            self.seen[idx] = self.g
            return
        self.seen[idx[full]] = self.g
        li = idx[~full]
        wp = np.flatnonzero((tog != 0xFFFFFFFF) & (bits != 0))     # the other warps here
        tb = ((tog[wp][:, None] >> np.arange(32, dtype=np.uint32)) & np.uint32(1)).astype(bool)
        partners = self.seen.reshape(-1, 32, 32)[wp]                 # (G, 32, 32)
        learned = np.where(tb[:, :, None], partners, 0).max(1)      # (G, 32)
        gi = np.searchsorted(wp, li >> 5)
        rows = np.maximum(learned[gi], self.seen[li])
        self.seen[li] = np.where(tb[gi], np.int32(self.g), rows)

    def _warp_sync_hb(self, idx, together):
        """Hand what lanes ``idx`` learned through release/acquire synchronization (their
        ``hb`` rows) to the lanes they execute a warp sync with (``together``: uint32 per lane
        of ``idx``, the lanes of its warp with it): happens-before is transitive, so what lane
        0 acquired before a ``__syncwarp`` is ordered before what the other lanes do after it
        (CUDA Programming Guide ``__syncwarp()``: memory ordering among the participating
        threads). Each group (a warp's lanes with one mask) gets the maximum of its lanes'
        rows; lanes of groups in which no lane has a row are left alone."""
        if self.hb is None or not self.nsync:
            return
        has = self.row[idx] >= 0
        if not has.any():
            return
        key = (idx.astype(np.int64) >> 5 << 32) | together.astype(np.int64)
        _, inv = np.unique(key, return_inverse=True)
        inv = inv.reshape(-1)
        busy = np.zeros(inv.max() + 1, bool)
        busy[inv[has]] = True
        sel = busy[inv]
        lanes, g = idx[sel], inv[sel]
        order = np.argsort(g, kind="stable")
        lanes, g = lanes[order], g[order]
        r = self._rows_of(lanes)                       # (the tables may grow: fetch after)
        cut = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
        merged = np.maximum.reduceat(self.hb[r], cut, axis=0)
        self.hb[r] = merged[np.repeat(np.arange(cut.size), np.diff(np.r_[cut, g.size]))]

    # ------------------------------------------------ release/acquire through fences

    def _hb_tables(self):
        """Make the tables of release/acquire synchronization (first use): rows of
        ``hb``/``rel``/``pend`` are given to threads as they take part (``row``, -1 none),
        so a kernel whose lane 0s alone fence keeps 1/32 of the rows."""
        if self.hb is None:
            m = self.m
            self.bs = m.bs_pad
            self.row = np.full(m.T, -1, np.int32)
            self.nsync = 0
            self.hb = self.rel = self.pend = np.zeros((0, self.bs), np.int32)
            self.released = np.zeros(m.T, bool)

    def _rows_of(self, idx):
        """The rows of threads ``idx`` in ``hb``/``rel``/``pend`` (int32), given to those that
        have none (zero: they learned nothing yet); the tables may grow (fetch them after)."""
        self._hb_tables()
        r = self.row[idx]
        new = r < 0
        if new.any():
            fresh = np.unique(idx[new])
            k = fresh.size
            if self.nsync + k > len(self.hb):
                cap = min(max(64, 2 * (self.nsync + k)), self.m.T)
                grown = []
                for t in (self.hb, self.rel, self.pend):
                    g = np.zeros((cap, self.bs), np.int32)
                    g[:self.nsync] = t[:self.nsync]
                    grown.append(g)
                self.hb, self.rel, self.pend = grown
            self.row[fresh] = np.arange(self.nsync, self.nsync + k, dtype=np.int32)
            self.nsync += k
            r = self.row[idx]
        return r

    def fence(self, ins, mask):
        """Lanes ``mask`` (bool ``(T,)``, None: all) execute fence ``ins`` (``membar``,
        ``fence.sc``/``.acq_rel``: acquire then release; ``fence.acquire``/``.release``)."""
        if not self.fs or not _sync_fence(ins):
            return
        idx = np.arange(self.m.T) if mask is None else np.flatnonzero(mask)
        if idx.size == 0:
            return
        rel = "acquire" not in ins.mods
        if "release" not in ins.mods:
            self._acquire(idx)
        if rel:
            self._release(idx)

    def _acquire(self, idx):
        """Acquire for threads ``idx``: what their strong reads since their last acquire
        read (released clocks) becomes theirs (PTX ISA "Release and Acquire Patterns":
        a strong read followed by an acquire fence)."""
        if self.hb is None:
            return
        r = self.row[idx]
        r = r[r >= 0]
        self.hb[r] = np.maximum(self.hb[r], self.pend[r])

    def _release(self, idx):
        """Release for threads ``idx``: a later strong write of each hands on what it
        learned and its own accesses so far (a release fence followed by a strong write)."""
        r = self._rows_of(idx)
        self.g += 1
        rel = self.hb[r]
        # what warp syncs ordered before the thread (the lanes of its warp) is handed on too
        rows = np.arange(idx.size)[:, None]
        cols = (idx % self.bs)[:, None] // 32 * 32 + np.arange(32)
        rel[rows, cols] = np.maximum(rel[rows, cols], self.seen[idx])
        rel[np.arange(idx.size), idx % self.bs] = self.g
        self.rel[r] = rel
        self.released[idx] = True

    def sync_access(self, ins, space, addr, idx, reads, writes):
        """Strong (or atomic) access ``ins`` of lanes ``idx`` at addresses ``addr`` (uint64,
        ``space`` as decoded) in a module with release/acquire patterns: a read takes the
        clocks released into the location (acquired at the next acquire fence, at once for
        ``.acquire``); a write puts its thread's last release there (``.release``: a
        release just before it), an atomic (read-modify-write) adding to those there, a
        store replacing them (PTX ISA "Memory Consistency Model": observation order runs
        from a write through atomic read-modify-writes to the read that sees it).
        Locations of global memory count per block (only threads of one block share the
        shared memory racecheck checks)."""
        if not self.fs or idx.size == 0:
            return
        m = self.m
        blk = m.blk[idx]
        a = addr.astype(np.int64)
        if space == "generic":
            from warp_lab.sim.memory import SHARED_WINDOW, WINDOW_SIZE
            rel = addr - np.uint64(SHARED_WINDOW)
            sh = rel < np.uint64(WINDOW_SIZE)
            a = np.where(sh, rel.astype(np.int64) + blk * self.stride, a)
            kind = np.where(sh, 1, 0)
        elif space == "shared":
            a, kind = a + blk * self.stride, np.ones(idx.size, np.int64)
        else:
            kind = np.zeros(idx.size, np.int64)
        key = a * 2 + kind          # (one key per location of the launch's batch)
        if any(q in ins.mods for q in ("release", "acq_rel")) and writes:
            self._release(idx)
        rmw = ins.op in ("atom", "red")
        if self.hb is None and not self.flags:
            return                  # nothing was released: nothing to hand on or take
        self._hb_tables()
        # only locations holding released clocks, or written by a thread that released,
        # change anything (a histogram's atomics in a kernel with a fence skip the loop)
        held = np.isin(key, np.fromiter(self.flags, np.int64, len(self.flags))) \
            if self.flags else np.zeros(key.size, bool)
        if writes and self.hb is not None:
            held |= self.released[idx]
        if not held.any():
            return
        # lanes in the order they access each location (the simulator's: lane order),
        # grouped by location and block; only the busy groups
        order = np.lexsort((blk, key))
        ks, bks = key[order], blk[order]
        cut = np.flatnonzero(np.r_[True, (ks[1:] != ks[:-1]) | (bks[1:] != bks[:-1]), True])
        busy = np.logical_or.reduceat(held[order], cut[:-1])
        size = np.diff(cut)
        gid = np.repeat(np.arange(busy.size), size)
        keep = busy[gid]
        order, ks, bks = order[keep], ks[keep], bks[keep]
        first = np.r_[0, np.cumsum(size[busy])[:-1]]     # each group's first sorted lane
        gid = np.repeat(np.arange(first.size), size[busy])
        lanes = idx[order]
        gk, gb = ks[first].tolist(), bks[first].tolist()
        # what each location holds for the group's block now
        curs = np.zeros((first.size, self.bs), np.int32)
        for g, (k, b) in enumerate(zip(gk, gb)):
            got = self.flags.get(k, {}).get(b)
            if got is not None:
                curs[g] = got
        if not rmw:
            if reads:
                r = self._rows_of(lanes)
                self.pend[r] = np.maximum(self.pend[r], curs[gid])
            if writes:
                # a store: the location now holds what its group's last lane released
                last = lanes[np.r_[first[1:], lanes.size] - 1]
                for g, (k, b) in enumerate(zip(gk, gb)):
                    t = int(last[g])
                    if self.released[t]:
                        self.flags[k] = {b: self.rel[self.row[t]].copy()}
                    else:
                        self.flags.pop(k, None)
            if reads and any(q in ins.mods for q in ("acquire", "acq_rel")):
                self._acquire(idx)
            return
        # read-modify-writes in lane order: each reads what those before it in its group
        # released, and what the location held (a running maximum per group, position by
        # position: as many steps as the largest group has lanes)
        done = self.released[lanes]
        run = np.zeros((lanes.size, self.bs), np.int32)
        if done.any():
            run[done] = self.rel[self.row[lanes[done]]]
        run[first] = np.maximum(run[first], curs)
        pos = np.arange(lanes.size) - first[gid]
        for p in range(1, int(pos.max()) + 1):
            at = np.flatnonzero(pos == p)
            run[at] = np.maximum(run[at], run[at - 1])
        if reads:
            seen = np.empty((lanes.size, self.bs), np.int32)
            seen[1:] = run[:-1]
            seen[first] = curs
            r = self._rows_of(lanes)
            self.pend[r] = np.maximum(self.pend[r], seen)
        final = run[np.r_[first[1:], lanes.size] - 1]
        for g, (k, b) in enumerate(zip(gk, gb)):
            if final[g].any():
                self.flags.setdefault(k, {})[b] = final[g]
        if reads and any(q in ins.mods for q in ("acquire", "acq_rel")):
            self._acquire(idx)

    def _ordered(self, tid, other, stamp):
        """Whether thread ``other``'s access at clock ``stamp`` is ordered before ``tid``'s
        by a warp sync both took part in, or by release/acquire synchronization (arrays of
        equal length)."""
        o = np.maximum(other, 0)
        ok = ((o >> 5) == (tid >> 5)) & (self.seen[tid, o & 31] > stamp)
        if self.hb is not None:
            bs = self.bs
            r = self.row[tid]
            ok |= (r >= 0) & ((o // bs) == (tid // bs)) & (
                self.hb[np.maximum(r, 0), o % bs] > stamp) if self.nsync else False
        return ok

    def _readers_ordered(self, c, tid, cell):
        """Whether every reader of ``cell`` (records ``c``) since the last write is ordered
        before ``tid``: each reader lane's last read clock against ``tid``'s last sync with
        that lane, and, for a cell read by several warps, each warp's readers so."""
        if self.fs and self.nsub:
            blk = c.rwarp[cell] == -3
            if blk.any():
                done = np.zeros(cell.size, bool)
                rest = ~blk
                if rest.any():
                    done[rest] = self._readers_ordered(c, tid[rest], cell[rest])
                nw = self.nw
                rows = np.clip(-c.rst[cell[blk]] - 1, 0, self.nsub - 1)
                sc = (rows[:, None] * nw + np.arange(nw)).reshape(-1)
                tb = np.repeat(tid[blk], nw)
                ok = self.sub.reader[sc] == -1
                if not ok.all():
                    ok[~ok] = self._readers_ordered(self.sub, tb[~ok], sc[~ok])
                done[blk] = ok.reshape(-1, nw).all(1)
                return done
        st = c.rst[cell]
        many = st < 0
        if many.any():
            # (st < 0 only on cells with readers, which are the ones the caller uses)
            row = np.clip(-st - 1, 0, len(self.rtab) - 1)
            stamps = np.where(many[:, None], self.rtab[row], st[:, None])
        else:
            stamps = st[:, None]
        ok = self.seen[tid] > stamps
        okbits = np.where(ok, _WEIGHTS, np.uint32(0)).sum(1, dtype=np.uint32) | (
            np.uint32(1) << (tid & 31).astype(np.uint32))
        rw = c.rwarp[cell]
        done = (rw == (tid >> 5)) & ((c.rlanes[cell] & ~okbits) == 0)
        if self.hb is not None:
            # readers of one warp of tid's block, each ordered by release/acquire
            bs = self.bs
            first = np.maximum(rw, 0).astype(np.int64) * 32
            r = self.row[tid]
            same = (rw >= 0) & (first // bs == tid // bs) & (r >= 0)
            if same.any():
                cols = first[:, None] % bs + np.arange(32)
                ok2 = self.hb[np.maximum(r, 0)[:, None], cols] > stamps
                ok2 |= ok & (rw == (tid >> 5))[:, None]
                bits2 = np.where(ok2, _WEIGHTS, np.uint32(0)).sum(1, dtype=np.uint32) | \
                    np.where(rw == (tid >> 5), np.uint32(1) << (tid & 31).astype(np.uint32),
                             np.uint32(0))
                done |= same & ((c.rlanes[cell] & ~bits2) == 0)
        return done

    def reset(self, blocks):
        """Forget the records of ``blocks`` (all when ``None``): a barrier completed."""
        cs = [c for c in (self.words, self.bytes, self.awords, self.abytes, self.lwords,
                          self.lbytes) if c is not None]
        if blocks is None or len(blocks) == self.nb:
            for c in cs:
                c.forget(slice(None))
                if self.ws:
                    c.rst.fill(0)
            if self.ws:
                self.nrows = 0
            if self.fs:
                self.nsub = 0
            if self.any_split:
                self.split.fill(False)
                self.any_split = False
            self.wrote = self.read = self.atomic = self.sload = False
            return
        for b in blocks:
            lo = int(b) * self.stride
            self.words.forget(slice(lo >> 2, (lo + self.stride) >> 2))
            for c in (self.awords, self.lwords):
                if c is not None:
                    c.forget(slice(lo >> 2, (lo + self.stride) >> 2))
            if self.any_split:
                for c in (self.bytes, self.abytes, self.lbytes):
                    if c is not None:
                        c.forget(slice(lo, lo + self.stride))
                self.split[lo >> 2:(lo + self.stride) >> 2] = False
        # (the others' split words stay split: any_split stays as it is)

    def access(self, ins, space, addr, idx, size, is_write, strong=False):
        """Record lanes ``idx`` accessing shared bytes ``addr..addr+size`` (per lane;
        ``addr`` a multiple of ``size``, which memops checked). ``strong``: an atomic
        (``is_write``: it reads and writes) or a strong ``ld`` (not ``is_write``) or ``st``
        (``is_write``), checked against plain accesses only (:meth:`_strong_access`)."""
        m = self.m
        if space == "generic":
            from warp_lab.sim.memory import SHARED_WINDOW, WINDOW_SIZE
            rel = addr - np.uint64(SHARED_WINDOW)
            sel = rel < np.uint64(WINDOW_SIZE)
            if not sel.any():
                return
            addr, idx = rel[sel], idx[sel]
        elif space != "shared":
            return
        if idx.size == m.T:
            # every thread of the batch (idx is 0..T-1): the usual case, cached
            if self.base is None:
                self.base = m.blk * self.stride
                self.tids = np.arange(m.T, dtype=np.int32)
            flat, tid = self.base + addr.astype(np.int64), self.tids
        else:
            flat, tid = m.blk[idx] * self.stride + addr.astype(np.int64), idx.astype(np.int32)
        if size >= 4:
            # whole aligned words: one record per word, unless one of them is split
            q = size >> 2
            cell = flat >> 2
            if q > 1:
                cell = (cell[:, None] + np.arange(q)).reshape(-1)
            if not self.any_split or not self.split[cell].any():
                t = tid if q == 1 else np.repeat(tid, q)
                if strong:
                    self._strong_access(self.words, self.awords, self.lwords, 4, ins, cell, t,
                                        size, is_write)
                else:
                    self._access(self.words, self.awords, self.lwords, 4, ins, cell, t, size,
                                 is_write)
                return
        byte = (flat[:, None] + np.arange(size)).reshape(-1)
        self._split(byte >> 2)
        if strong:
            self._strong_access(self.bytes, self.abytes, self.lbytes, 1, ins, byte,
                                np.repeat(tid, size), size, is_write)
        else:
            self._access(self.bytes, self.abytes, self.lbytes, 1, ins, byte,
                         np.repeat(tid, size), size, is_write)

    def _split(self, words):
        """Copy the records of ``words`` (int64, repeats allowed) not split yet to their
        bytes, which hold them from now on (a row of per-lane read clocks each)."""
        if self.bytes is None:
            self.bytes = _Cells(len(self.words.writer) * 4, self.ws)
            self.split = np.zeros(len(self.words.writer), bool)
            if self.awords is not None:
                self.abytes = _Cells(len(self.words.writer) * 4, self.ws, True)
            if self.lwords is not None:
                self.lbytes = _Cells(len(self.words.writer) * 4, self.ws, True)
        w = words[~self.split[words]]
        if w.size == 0:
            return
        # (lanes' words come in order, mostly: repeats side by side; any left are harmless
        # but to the rows, which are made for distinct words)
        w = w[np.concatenate(([True], w[1:] != w[:-1]))]
        if not (self.wrote or self.read or self.atomic or self.sload):
            # nothing recorded since every record was forgotten: the bytes' say so too
            self.split[w] = True
            self.any_split = True
            return
        # (while copying, both the words' and their bytes' records are current: rows made
        # for the bytes of one record must not drop those of another's)
        self.splitting = w
        self._copy_to_bytes(self.words, self.bytes, w)
        if self.atomic:
            self._copy_to_bytes(self.awords, self.abytes, w)
        if self.sload:
            self._copy_to_bytes(self.lwords, self.lbytes, w)
        self.splitting = None
        self.split[w] = True
        self.any_split = True

    def _current(self, c, cells):
        """Whether the records of ``cells`` of ``c`` are the ones in use (bool per cell): a
        split word's records are its bytes', a whole word's bytes are stale (for the row
        tables' clean-ups, :meth:`_rows` and :meth:`_sub_rows`)."""
        if self.split is None:
            return np.ones(cells.size, bool)
        words = c.reader.size == self.split.size
        ok = ~self.split[cells] if words else self.split[cells >> 2]
        if self.splitting is not None:
            ok |= np.isin(cells if words else cells >> 2, self.splitting)
        return ok

    def _copy_to_bytes(self, wc, bc, w):
        """Copy records ``wc`` of distinct words ``w`` to their bytes' records ``bc``."""
        rows = blk = None
        if self.fs and self.nsub:
            several = (wc.rwarp[w] == -3) & (wc.reader[w] != -1)
            if several.any():
                # read by several warps: each byte gets its own copy of its word's row
                blk = w[several]
                brows = self._sub_rows(4 * blk.size)    # (may renumber the words' rows)
        if self.ws:
            row = (wc.rst[w] < 0) & (wc.reader[w] != -1) & (wc.rwarp[w] >= 0)
            if row.any():
                u = np.unique(w[row])
                w = np.concatenate((u, w[~row]))
                row = np.arange(len(w)) < len(u)
                rows = self._rows(4 * int(row.sum()))   # (may renumber the words' rows)
        b = (w[:, None] * 4 + np.arange(4)).reshape(-1)
        for f in wc.fields:
            getattr(bc, f)[b] = np.repeat(getattr(wc, f)[w], 4)
        if self.ws:
            bc.rst[b[bc.rst[b] < 0]] = 0
            if rows is not None:
                # each byte gets its own copy of its word's row
                bw = b.reshape(-1, 4)[row].reshape(-1)
                self.rtab[rows] = np.repeat(self.rtab[-wc.rst[w[row]] - 1], 4, axis=0)
                bc.rst[bw] = -rows - 1
        if blk is not None:
            self._copy_sub_rows(np.repeat(-wc.rst[blk] - 1, 4), brows)
            bc.rst[(blk[:, None] * 4 + np.arange(4)).reshape(-1)] = -brows - 1

    def _copy_sub_rows(self, src, dst):
        """Copy rows ``src`` of ``sub`` to rows ``dst`` (int32 arrays of equal length), with
        a copy of each per-lane row of ``rtab`` they hold."""
        nw, sub = self.nw, self.sub
        s = (src[:, None] * nw + np.arange(nw)).reshape(-1)
        d = (dst[:, None] * nw + np.arange(nw)).reshape(-1)
        for f in sub.fields:
            getattr(sub, f)[d] = getattr(sub, f)[s]
        own = d[(sub.rst[d] < 0) & (sub.reader[d] != -1) & (sub.rwarp[d] >= 0)]
        if own.size:
            rows = self._rows(own.size)                 # (may renumber the rows they hold)
            sub = self.sub
            self.rtab[rows] = self.rtab[-sub.rst[own] - 1]
            sub.rst[own] = -rows - 1

    def _writer_hazard(self, c, tid, cell):
        """(writer, hazard): the last writer of each ``cell`` in records ``c`` and whether it
        is another thread than ``tid`` that no warp sync orders before it."""
        w = c.writer[cell]
        hz = (w >= 0) & (w != tid)
        if self.ws and hz.any():
            hz &= ~self._ordered(tid, w, c.wst[cell])
        return w, hz

    def _reader_hazard(self, c, tid, cell):
        """(reader, hazard): each ``cell``'s reader field in records ``c`` (-2: several) and
        whether a reader other than ``tid`` is unordered with it by warp syncs."""
        r = c.reader[cell]
        hz = (r == -2) | ((r >= 0) & (r != tid))
        if self.ws and hz.any():
            hz &= ~self._readers_ordered(c, tid, cell)
            k = int(np.argmax(hz))
            if hz[k] and self.fs and c.rwarp[cell[k]] == -3:
                # (the lane _report_first reports: name a reader it races with)
                r = r.copy()
                r[k] = self._unordered_reader(c, tid[k], cell[k])
        return r, hz

    def _unordered_reader(self, c, t, cell):
        """A reader of ``cell`` (records ``c``, read by several warps) that no warp sync or
        release/acquire orders before thread ``t``: the one reader of the first warp with
        one, else -2 (several lanes of it)."""
        nw = self.nw
        sc = (-int(c.rst[cell]) - 1) * nw + np.arange(nw)
        sc = sc[self.sub.reader[sc] != -1]
        bad = sc[~self._readers_ordered(self.sub, np.full(sc.size, t, np.int32), sc)]
        return int(self.sub.reader[bad[0]]) if bad.size else -2

    def _access(self, c, a, ld, unit, ins, cell, tid, size, is_write):
        """Check and record a plain access of ``cell`` (int64 indices into records ``c`` of
        ``unit``-byte cells; ``size // unit`` consecutive ones per lane) by threads
        ``tid`` (int32, one per cell); ``a``: the cells' records of atomic and strong
        accesses (None: the module has none), ``ld``: of strong loads (None likewise),
        which a write checks (write-after-read) and forgets."""
        pc = ins.pc
        if is_write and self.sload:
            # a strong load (wl.atomic_load) by another thread since the last plain write:
            # the load and this plain write conflict and are not both morally strong
            r, hz = self._reader_hazard(ld, tid, cell)
            if hz.any():
                self._report_first(hz, "race_war", "write-after-read", ins, tid, r, ld.rpc,
                                   cell, size, unit, atomic="other")
            ld.reader[cell] = -1
        if self.atomic:
            # an atomic or strong access by another thread since the last plain write:
            # read-after-write (a plain read), write-after-write (a plain write)
            r, hz = self._reader_hazard(a, tid, cell)
            if hz.any():
                kind, what = (("race_waw", "write-after-write") if is_write
                              else ("race_raw", "read-after-write"))
                self._report_first(hz, kind, what, ins, tid, r, a.rpc, cell, size, unit,
                                   atomic="other")
            if is_write:
                # (an atomic before this write and unordered with a later access is
                # unordered with this write, or this write with that access: found there)
                a.reader[cell] = -1
        if is_write:
            waw = war = None
            if self.wrote:
                w, waw = self._writer_hazard(c, tid, cell)
            if self.read:
                r, war = self._reader_hazard(c, tid, cell)
            if self.ws:
                c.wst[cell] = self.g
            c.writer[cell] = tid
            # two lanes of this instruction writing the same cell
            same = c.writer[cell] != tid
            upd = self.updates.get(pc) if self.updates else None
            if upd is not None and (same.any() or (waw is not None and waw.any())
                                    or (war is not None and war.any())):
                waw, war, same = self._lost_update(upd, c, ins, tid, cell, size, unit, waw, w
                                                   if waw is not None else None, war,
                                                   r if war is not None else None, same)
            if waw is not None and waw.any():
                self._report_first(waw, "race_waw", "write-after-write", ins, tid, w, c.wpc,
                                   cell, size, unit)
            if war is not None and war.any():
                self._report_first(war, "race_war", "write-after-read", ins, tid, r, c.rpc,
                                   cell, size, unit)
            if same.any():
                k = int(np.argmax(same))
                self._report("race_waw", "write-after-write", ins, int(tid[k]),
                             int(c.writer[cell[k]]), pc, cell, k, size, unit)
            c.wpc[cell] = pc
            if self.read:
                c.reader[cell] = -1
            self.wrote = True
        else:
            if self.wrote:
                w, raw = self._writer_hazard(c, tid, cell)
                if raw.any() and pc in self.update_loads:
                    # the load of an update after the same update by another thread: its
                    # store finds the race (write-after-write) and reports the lost update
                    raw &= c.wpc[cell] != self.update_loads[pc]
                if raw.any():
                    self._report_first(raw, "race_raw", "read-after-write", ins, tid, w, c.wpc,
                                       cell, size, unit)
            self._add_readers(c, tid, cell, pc, self.read)
            self.read = True

    def _lost_update(self, upd, c, ins, tid, cell, size, unit, waw, w, war, r, same):
        """Report the hazards of update store ``ins`` (``upd``: its load and operation,
        :func:`~warp_lab.sim.store_conflicts.shared_updates`) that are another thread's
        update of the same cell (a write by this store, a read by its load, another lane
        of this execution) as one lost update; returns ``waw``, ``war`` and ``same`` (bool
        per cell, or None) without them, for :meth:`_access` to report the others."""
        load, op = upd
        lost = same.copy()
        other = np.where(same, c.writer[cell], -1)
        opc = np.full(cell.size, ins.pc)
        if war is not None:
            mine = war & (c.rpc[cell] == load.pc)
            other = np.where(mine & ~lost, r, other)
            opc[mine & ~lost] = load.pc
            lost |= mine
            war = war & ~mine
        if waw is not None:
            mine = waw & (c.wpc[cell] == ins.pc)
            other = np.where(mine & ~lost, w, other)
            lost |= mine
            waw = waw & ~mine
        if lost.any():
            k = int(np.argmax(lost))
            o = int(other[k])
            self._report("race_waw", "write-after-write", ins, int(tid[k]), o if o >= 0 else -1,
                         int(opc[k]), cell, k, size, unit, update=upd)
        return waw, war, np.zeros_like(same)

    def _add_readers(self, c, tid, cell, pc, any_readers):
        """Record threads ``tid`` as readers of ``cell`` (records ``c``; ``any_readers``:
        whether ``c`` may have readers now) at instruction ``pc``."""
        ws = self.ws
        r = c.reader[cell] if any_readers or ws else None
        if ws:
            self._note_readers(c, tid, cell, r)
        c.reader[cell] = tid
        multi = c.reader[cell] != tid
        if r is not None:
            multi |= (r == -2) | ((r >= 0) & (r != tid))
        # (several lanes of this instruction reading one cell: all of them or none,
        # mostly)
        if multi.all():
            c.reader[cell] = -2
        elif multi.any():
            c.reader[cell[multi]] = -2
        c.rpc[cell] = pc

    def _strong_access(self, c, a, ld, unit, ins, cell, tid, size, is_write):
        """Check and record an atomic or strong access (as :meth:`_access`): a hazard with
        a plain access by another thread since the barrier (an atomic reads and writes:
        read-after-write after a plain write, write-after-read after a plain read; a
        strong ``st`` or a ``red`` (no old value) after a plain write is
        write-after-write; a strong ``ld`` is checked against plain writes only), none
        with another atomic or strong access (PTX ISA 8.8 "Memory Consistency Model":
        morally strong accesses are no data race). Atomics and strong stores are
        recorded in ``a`` for the plain accesses after them, a strong ``ld`` in ``ld``
        for the plain writes after it (write-after-read; a plain read after it is no
        conflict)."""
        if self.wrote:
            w, hz = self._writer_hazard(c, tid, cell)
            if hz.any():
                kind, what = (("race_waw", "write-after-write") if ins.op in ("st", "red")
                              else ("race_raw", "read-after-write"))
                self._report_first(hz, kind, what, ins, tid, w, c.wpc, cell, size, unit,
                                   atomic="this")
        if not is_write:
            self._add_readers(ld, tid, cell, ins.pc, self.sload)
            self.sload = True
            return
        if self.read:
            r, hz = self._reader_hazard(c, tid, cell)
            if hz.any():
                self._report_first(hz, "race_war", "write-after-read", ins, tid, r, c.rpc,
                                   cell, size, unit, atomic="this")
        self._add_readers(a, tid, cell, ins.pc, self.atomic)
        self.atomic = True

    def _note_readers(self, c, tid, cell, r):
        """Add readers ``tid`` of ``cell`` (previous reader field ``r``) to the readers' warp
        and lanes, stamped with the current clock; with release/acquire synchronization, a
        cell read by several warps keeps a record per warp (:meth:`_note_block_readers`)."""
        if self.fs:
            wt = tid >> 5
            pw = c.rwarp[cell]
            several = (r != -1) & (pw != wt)          # read by another warp (or several)
            c.rwarp[cell] = wt
            several |= c.rwarp[cell] != wt           # lanes of several warps here
            if several.all():
                c.rwarp[cell] = pw
                self._note_block_readers(c, tid, cell, r, pw)
                return
            if several.any():
                c.rwarp[cell[several]] = -5          # (every lane of those cells)
                several = c.rwarp[cell] == -5
                c.rwarp[cell[several]] = pw[several]
                self._note_block_readers(c, tid[several], cell[several], r[several],
                                         pw[several])
                rest = ~several
                if not rest.any():
                    return
                tid, cell, r = tid[rest], cell[rest], r[rest]
            # (the others' cells hold their warp already)
            self._note_warp_readers(c, tid, cell, r, one_warp=True)
            return
        self._note_warp_readers(c, tid, cell, r)

    def _note_block_readers(self, c, tid, cell, r, pw):
        """Add readers ``tid`` of ``cell`` read by several warps (previous reader field
        ``r``, readers' warp ``pw``) to the record of their warp in the cell's row of
        ``sub``, made from the cell's one-warp record when it has none: a write is then
        checked against each warp's readers as against one warp's (exact: per lane)."""
        nw = self.nw
        new = ~((r != -1) & (pw == -3))
        if new.any():
            u, first = np.unique(cell[new], return_index=True)
            rows = self._sub_rows(u.size)           # (may renumber and grow sub)
            sub = self.sub
            ru, pu = r[new][first], pw[new][first]
            had = (ru != -1) & (pu >= 0)
            if had.any():
                # the readers so far (one warp) become their warp's record
                sc = rows[had] * nw + pu[had] % nw
                uh = u[had]
                for f in sub.fields:
                    getattr(sub, f)[sc] = getattr(c, f)[uh]
            c.rwarp[u] = -3
            c.rst[u] = -rows - 1
        sub = self.sub
        wt = tid >> 5
        sc = (-c.rst[cell] - 1) * nw + wt % nw
        rs = sub.reader[sc]
        sub.rwarp[sc] = wt
        self._note_warp_readers(sub, tid, sc, rs, one_warp=True)
        sub.reader[sc] = tid
        multi = (sub.reader[sc] != tid) | (rs == -2) | ((rs >= 0) & (rs != tid))
        sub.reader[sc[multi]] = -2

    def _sub_rows(self, k):
        """``k`` free rows of ``sub`` (int32 indices), their records empty; drops the rows
        of cells whose readers were forgotten first (as :meth:`_rows`)."""
        sub, nw = self.sub, self.nw
        if (self.nsub + k) * nw > len(sub.reader):
            lives = []
            for c in self._all_cells():
                live = np.flatnonzero((c.rwarp == -3) & (c.rst < 0))
                keep = c.reader[live] != -1
                keep &= self._current(c, live)
                dead = live[~keep]
                c.rst[dead], c.rwarp[dead] = 0, -1
                lives.append((c, live[keep]))
            n = sum(len(live) for _, live in lives)
            cap = max(16, 2 * (n + k)) * nw
            grown = _Cells(cap, True, True)
            at = 0
            for c, live in lives:
                src = ((-c.rst[live] - 1)[:, None] * nw + np.arange(nw)).reshape(-1)
                dst = np.arange(at * nw, (at + len(live)) * nw)
                for f in sub.fields:
                    getattr(grown, f)[dst] = getattr(sub, f)[src]
                c.rst[live] = -np.arange(at + 1, at + len(live) + 1, dtype=np.int32)
                at += len(live)
            self.sub, self.nsub = grown, n
            sub = grown
        rows = np.arange(self.nsub, self.nsub + k, dtype=np.int32)
        sub.reader[self.nsub * nw:(self.nsub + k) * nw] = -1
        self.nsub += k
        return rows

    def _all_cells(self):
        """The records in use (words, bytes, and those of atomic and strong accesses)."""
        return [c for c in (self.words, self.bytes, self.awords, self.abytes, self.lwords,
                            self.lbytes) if c is not None]

    def _note_warp_readers(self, c, tid, cell, r, one_warp=False):
        """:meth:`_note_readers` of one warp's record (several warps: ``rwarp`` -2).
        ``one_warp``: each cell's ``rwarp`` is already its readers' one warp, that of these
        lanes (:meth:`_note_readers` made it so)."""
        bit = np.uint32(1) << (tid & 31).astype(np.uint32)
        fresh = r == -1
        # other lanes of this warp read the cell at an earlier clock (or at several):
        # one clock no longer describes the readers, so the cell gets one per lane
        lanes = c.rlanes[cell]
        if one_warp:
            mix = ~fresh & (c.rst[cell] != self.g) & ((lanes & ~bit) != 0)
            c.rlanes[cell[fresh]] = 0
        else:
            wt = tid >> 5
            pw = c.rwarp[cell]
            mix = ~fresh & (pw == wt) & (c.rst[cell] != self.g) & ((lanes & ~bit) != 0)
            neww = np.where(fresh | (pw == wt), wt, np.int32(-2))
            c.rlanes[cell[fresh | (pw != wt)]] = 0
            c.rwarp[cell] = neww
            # lanes of several warps reading one cell in this instruction
            c.rwarp[cell[c.rwarp[cell] != neww]] = -2
        np.bitwise_or.at(c.rlanes, cell, bit)
        if mix.any():
            self._stamp_lanes(c, tid, cell, mix, lanes)
        else:
            c.rst[cell] = self.g

    def _stamp_lanes(self, c, tid, cell, mix, lanes):
        """Stamp reads ``tid`` of ``cell`` lane by lane, giving a row of ``rtab`` to the
        cells ``cell[mix]`` (readers' lanes ``lanes`` before this read) that have none."""
        bm = cell[mix]
        new = c.rst[bm] >= 0
        if new.any():
            bn = bm[new]
            st = c.rst[bn]                      # the one clock of their readers so far
            ix = np.arange(len(bn), dtype=np.int32)
            c.rst[bn] = ix                      # one element per cell: the last one sticks
            first = c.rst[bn] == ix
            rows = self._rows(int(first.sum()))  # (may renumber the rows in use)
            had = ((lanes[mix][new][first][:, None] >> np.arange(32, dtype=np.uint32))
                   & np.uint32(1)).astype(bool)
            self.rtab[rows] = np.where(had, st[first][:, None], 0)
            c.rst[bn[first]] = -rows - 1
        rs = c.rst[bm]
        c.rst[cell] = self.g
        c.rst[bm] = rs
        sel = c.rst[cell] < 0                   # every read of those cells here
        self.rtab[-c.rst[cell[sel]] - 1, tid[sel] & 31] = self.g

    def _rows(self, k):
        """``k`` free rows of ``rtab`` (int32 indices); drops the rows of cells whose
        readers were forgotten (a write, a barrier, readers of several warps, a word
        split into bytes) first."""
        if self.nrows + k > len(self.rtab):
            lives = []
            if self.fs and self.nsub:
                # the warps' records of cells read by several warps (rows in use)
                st = self.sub.rst[:self.nsub * self.nw]
                live = np.flatnonzero(st < 0)
                keep = (self.sub.reader[live] != -1) & (self.sub.rwarp[live] >= 0)
                st[live[~keep]] = 0
                lives.append((st, live[keep]))
            for c in self._all_cells():
                st = c.rst
                live = np.flatnonzero((st < 0) & (c.rwarp != -3))
                keep = (c.reader[live] != -1) & (c.rwarp[live] >= 0)
                keep &= self._current(c, live)
                st[live[~keep]] = 0
                lives.append((st, live[keep]))
            n = sum(len(live) for _, live in lives)
            cap = max(64, len(self.rtab), 2 * (n + k))
            tab = np.zeros((cap, 32), np.int32)
            at = 0
            for st, live in lives:
                tab[at:at + len(live)] = self.rtab[-st[live] - 1]
                st[live] = -np.arange(at + 1, at + len(live) + 1, dtype=np.int32)
                at += len(live)
            self.rtab, self.nrows = tab, n
        rows = np.arange(self.nrows, self.nrows + k, dtype=np.int32)
        self.nrows += k
        return rows

    def _report_first(self, hazard, kind, what, ins, tid, other, other_pc, cells, size, unit,
                      atomic=None):
        """:meth:`_report` the first lane with a ``hazard`` (bool per cell of ``cells``,
        accessed by threads ``tid``), against the thread in ``other`` (the cells' writer
        or reader field, -2: several readers) whose access was at ``other_pc`` (the
        records' pc array, indexed by cell)."""
        k = int(np.argmax(hazard))
        o = int(other[k])
        self._report(kind, what, ins, int(tid[k]), o if o >= 0 else -1,
                     int(other_pc[cells[k]]), cells, k, size, unit, atomic=atomic)

    def _report(self, kind, what, ins, t, other, other_pc, cells, k, size, unit, atomic=None,
                update=None):
        """Record a ``kind`` hazard at cell ``cells[k]`` (of ``unit`` bytes, flat, of this
        batch) of the access of ``size`` bytes per lane whose cells are ``cells``, by
        thread ``t``, against thread ``other`` (-1: several) at instruction ``other_pc``.
        ``details`` give the block offsets of the racing byte (the cell's first) and of
        the access's first byte. ``atomic``: ``"this"`` (this access is the atomic or
        strong one, the other plain), ``"other"`` (the other one is), or None (both
        plain); the message then says which and how to order them
        (``details["atomic"]``). ``update``: ``(load, op)`` when the hazard is a lost update
        (:meth:`_lost_update`): one finding per store (``details["read_ptx_line"]``,
        ``"update_op"``, and the phrases ``"update"`` and ``"fix"`` of the message that
        :mod:`~warp_lab.runtime.finding_text` says with the array's element)."""
        m = self.m
        code = m.mod.code
        oline = code[other_pc].line if 0 <= other_pc < len(code) else 0
        byte = int(cells[k]) * unit
        offset = byte % self.stride
        start = (byte - k * unit % size) % self.stride
        ot = m.where(other)[1] if other >= 0 else None
        who = "other threads of the same block" if ot is None else f"thread {ot} of the same block"
        name, lo, _ = variable_at(m, offset, address_variable(m.mod, ins))
        place = f"shared offset {offset}" if name is None else \
            f"shared offset {offset} (byte {offset - lo} of shared variable {name})"
        if update is not None:
            load, op = update
            race = "a data race: the read and the write are two accesses, not one atomic update"
            fix = (f"an atomic (atom.shared.{op})" if op else
                   "an atomic (atom.shared.add for a sum)") + " or a reduction"
            read = f"this thread's read of these bytes (PTX line {load.line})"
            m.finding(kind, f"shared-memory lost update ({what} hazard) at {place}: this store "
                      f"writes back a value computed from {read}, and {who} does the same "
                      f"update at PTX line {oline}, with no barrier between them, so all but "
                      f"one of the updates are lost ({race}); fix: {fix}", ins, t,
                      dedupe=("update",),
                      other_thread=ot, other_ptx_line=oline, read_ptx_line=load.line,
                      read=read, update=race, fix=fix,
                      **({"update_op": op} if op else {}),
                      shared_offset=offset, variable=name, address=start, size=size,
                      space="shared", place=place, offset=None if name is None else offset - lo)
            return
        if atomic is None:
            text = f"this access races with {who} at PTX line {oline}, with no barrier " \
                   "between them"
        else:
            strong_ins = ins if atomic == "this" else code[other_pc]
            word = "atomic" if strong_ins.op in ("atom", "red") or \
                "volatile" not in strong_ins.mods else "volatile"
            if atomic == "other":
                word = "an atomic" if word == "atomic" else "a volatile"
            if atomic == "this":
                text = (f"this {word} access races with a plain (non-atomic) access by {who} "
                        f"at PTX line {oline}")
            else:
                what_other = f"{word} load" if strong_ins.op == "ld" else f"{word} access"
                text = (f"this plain (non-atomic) access races with {what_other} by "
                        f"{who} at PTX line {oline}")
            text += (", with no barrier between them (atomics are ordered only among "
                     "themselves, not with plain accesses: put a barrier, wl.syncthreads(), "
                     + ("between the plain accesses, such as an initialisation, and the "
                        "atomics)" if atomic == "this" else
                        "between the atomics and the plain accesses after them)"))
        m.finding(kind, f"shared-memory {what} hazard at {place}: {text}", ins, t,
                  dedupe=(other_pc,), other_thread=ot,
                  **({} if atomic is None else {"atomic": atomic}),
                  other_ptx_line=oline, shared_offset=offset, variable=name,
                  address=start, size=size, space="shared", place=place,
                  offset=None if name is None else offset - lo)
