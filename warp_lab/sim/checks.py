"""racecheck: shared-memory hazards between threads with no barrier between them.

Per byte of each block's shared memory the tracker remembers the last writer
and the reader(s) since the last barrier (``-1`` none, ``-2`` several
threads). An access by thread *t* is a hazard when another thread wrote the
byte (read-after-write, write-after-write) or another thread read it
(write-after-read) since the block's last completed barrier; a barrier
resets the block's records. This is the hazard definition of
compute-sanitizer's racecheck tool (CUDA Compute Sanitizer documentation,
"Racecheck Tool"). Atomics are not hazards. Each (kind, line pair) is
reported once, with both threads and both PTX lines.

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
"""

from __future__ import annotations

import numpy as np

from warp_lab.sim.initcheck import variable_at
from warp_lab.sim.provenance import address_variable

__all__ = ["RaceTracker", "has_warp_sync"]

_WEIGHTS = np.uint32(1) << np.arange(32, dtype=np.uint32)


def has_warp_sync(mod) -> bool:
    """Whether module ``mod`` has a ``bar.warp.sync`` (cached on the module)."""
    v = getattr(mod, "_has_warp_sync", None)
    if v is None:
        v = any(c.op in ("bar", "barrier") and "warp" in c.mods for c in mod.code)
        try:
            mod._has_warp_sync = v
        except AttributeError:
            pass
    return v


class RaceTracker:
    """Hazard bookkeeping for the shared memory of one batch of blocks.

    Args:
        m: the machine (for thread coordinates and findings).
        nb: blocks in the batch.
        stride: bytes of shared memory per block.
    """

    def __init__(self, m, nb: int, stride: int):
        self.m = m
        self.stride = stride
        n = nb * stride
        self.writer = np.full(n, -1, np.int64)
        self.wpc = np.zeros(n, np.int32)
        self.reader = np.full(n, -1, np.int64)
        self.rpc = np.zeros(n, np.int32)
        self.ws = has_warp_sync(m.mod)
        if self.ws:
            self.g = 0                                    # warp syncs so far (a clock)
            self.seen = np.zeros((m.T, 32), np.int32)     # last sync of thread t with lane j
            self.wst = np.zeros(n, np.int32)              # clock at the last write
            # the readers' clock: >= 0 when all of them read at that clock, else
            # -(row + 1): their clocks lane by lane are row ``row`` of ``rtab``
            self.rst = np.zeros(n, np.int32)
            self.rwarp = np.full(n, -1, np.int32)         # readers' warp (-2: several warps)
            self.rlanes = np.zeros(n, np.uint32)          # readers' lanes in that warp
            self.rtab = np.zeros((0, 32), np.int32)       # per-lane read clocks, by row
            self.nrows = 0                                # rows of rtab in use

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
        bits = np.where(here.reshape(-1, 32), _WEIGHTS, np.uint32(0)).sum(1, dtype=np.uint32)
        mm = np.broadcast_to(np.asarray(membermask, np.uint32), (m.T,))[idx]
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

    def _ordered(self, tid, other, stamp):
        """Whether thread ``other``'s access at clock ``stamp`` is ordered before ``tid``'s
        by a warp sync both took part in (arrays of equal length)."""
        o = np.maximum(other, 0)
        return ((o >> 5) == (tid >> 5)) & (self.seen[tid, o & 31] > stamp)

    def _readers_ordered(self, tid, byte):
        """Whether every reader of ``byte`` since the last write is ordered before ``tid``:
        each reader lane's last read clock against ``tid``'s last sync with that lane."""
        st = self.rst[byte]
        many = st < 0
        if many.any():
            # (st < 0 only on bytes with readers, which are the ones the caller uses)
            row = np.clip(-st - 1, 0, len(self.rtab) - 1)
            stamps = np.where(many[:, None], self.rtab[row], st[:, None])
        else:
            stamps = st[:, None]
        ok = self.seen[tid] > stamps
        okbits = np.where(ok, _WEIGHTS, np.uint32(0)).sum(1, dtype=np.uint32) | (
            np.uint32(1) << (tid & 31).astype(np.uint32))
        return (self.rwarp[byte] == (tid >> 5)) & ((self.rlanes[byte] & ~okbits) == 0)

    def reset(self, blocks):
        """Forget the records of ``blocks`` (all when ``None``): a barrier completed."""
        if blocks is None:
            self.writer.fill(-1)
            self.reader.fill(-1)
            if self.ws:
                self.rst.fill(0)
                self.nrows = 0
            return
        for b in blocks:
            sl = slice(int(b) * self.stride, (int(b) + 1) * self.stride)
            self.writer[sl] = -1
            self.reader[sl] = -1

    def access(self, ins, space, addr, idx, size, is_write):
        """Record lanes ``idx`` accessing shared bytes ``addr..addr+size`` (per lane)."""
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
        flat = (m.blk[idx] * self.stride + addr.astype(np.int64))
        byte = (flat[:, None] + np.arange(size)).reshape(-1)
        tid = np.repeat(idx.astype(np.int64), size)
        pc = ins.pc
        w = self.writer[byte]
        if is_write:
            waw = (w >= 0) & (w != tid)
            r = self.reader[byte]
            war = (r == -2) | ((r >= 0) & (r != tid))
            if self.ws:
                if waw.any():
                    waw &= ~self._ordered(tid, w, self.wst[byte])
                if war.any():
                    war &= ~self._readers_ordered(tid, byte)
                self.wst[byte] = self.g
            self.writer[byte] = tid
            # two lanes of this instruction writing the same byte
            same = self.writer[byte] != tid
            if waw.any():
                k = int(np.argmax(waw))
                self._report("race_waw", "write-after-write", ins, int(tid[k]), int(w[k]),
                             int(self.wpc[byte[k]]), byte, k, size)
            if war.any():
                k = int(np.argmax(war))
                other = int(r[k]) if r[k] >= 0 else -1
                self._report("race_war", "write-after-read", ins, int(tid[k]), other,
                             int(self.rpc[byte[k]]), byte, k, size)
            if same.any():
                k = int(np.argmax(same))
                self._report("race_waw", "write-after-write", ins, int(tid[k]),
                             int(self.writer[byte[k]]), pc, byte, k, size)
            self.wpc[byte] = pc
            self.reader[byte] = -1
        else:
            raw = (w >= 0) & (w != tid)
            if self.ws and raw.any():
                raw &= ~self._ordered(tid, w, self.wst[byte])
            if raw.any():
                k = int(np.argmax(raw))
                self._report("race_raw", "read-after-write", ins, int(tid[k]), int(w[k]),
                             int(self.wpc[byte[k]]), byte, k, size)
            r = self.reader[byte]
            if self.ws:
                self._note_readers(tid, byte, r)
            multi = (r == -2) | ((r >= 0) & (r != tid))
            self.reader[byte] = tid
            multi |= self.reader[byte] != tid
            self.reader[byte[multi]] = -2
            self.rpc[byte] = pc

    def _note_readers(self, tid, byte, r):
        """Add readers ``tid`` of ``byte`` (previous reader field ``r``) to the readers' warp
        and lanes, stamped with the current clock."""
        wt = (tid >> 5).astype(np.int32)
        bit = np.uint32(1) << (tid & 31).astype(np.uint32)
        fresh = r == -1
        pw = self.rwarp[byte]
        # other lanes of this warp read the byte at an earlier clock (or at several):
        # one clock no longer describes the readers, so the byte gets one per lane
        lanes = self.rlanes[byte]
        mix = ~fresh & (pw == wt) & (self.rst[byte] != self.g) & ((lanes & ~bit) != 0)
        neww = np.where(fresh | (pw == wt), wt, np.int32(-2))
        self.rlanes[byte[fresh | (pw != wt)]] = 0
        self.rwarp[byte] = neww
        # lanes of several warps reading one byte in this instruction
        self.rwarp[byte[self.rwarp[byte] != neww]] = -2
        np.bitwise_or.at(self.rlanes, byte, bit)
        if mix.any():
            self._stamp_lanes(tid, byte, mix, lanes)
        else:
            self.rst[byte] = self.g

    def _stamp_lanes(self, tid, byte, mix, lanes):
        """Stamp reads ``tid`` of ``byte`` lane by lane, giving a row of ``rtab`` to the
        bytes ``byte[mix]`` (readers' lanes ``lanes`` before this read) that have none."""
        bm = byte[mix]
        new = self.rst[bm] >= 0
        if new.any():
            bn = bm[new]
            st = self.rst[bn]                   # the one clock of their readers so far
            ix = np.arange(len(bn), dtype=np.int32)
            self.rst[bn] = ix                   # one element per byte: the last one sticks
            first = self.rst[bn] == ix
            rows = self._rows(int(first.sum()))  # (may renumber the rows in use)
            had = ((lanes[mix][new][first][:, None] >> np.arange(32, dtype=np.uint32))
                   & np.uint32(1)).astype(bool)
            self.rtab[rows] = np.where(had, st[first][:, None], 0)
            self.rst[bn[first]] = -rows - 1
        rs = self.rst[bm]
        self.rst[byte] = self.g
        self.rst[bm] = rs
        sel = self.rst[byte] < 0                # every read of those bytes here
        self.rtab[-self.rst[byte[sel]] - 1, tid[sel] & 31] = self.g

    def _rows(self, k):
        """``k`` free rows of ``rtab`` (int32 indices); drops the rows of bytes whose
        readers were forgotten (a write, a barrier, readers of several warps) first."""
        if self.nrows + k > len(self.rtab):
            st = self.rst
            live = np.flatnonzero(st < 0)
            keep = (self.reader[live] != -1) & (self.rwarp[live] >= 0)
            st[live[~keep]] = 0
            live = live[keep]
            cap = max(64, len(self.rtab), 2 * (len(live) + k))
            tab = np.zeros((cap, 32), np.int32)
            tab[:len(live)] = self.rtab[-st[live] - 1]
            st[live] = -np.arange(1, len(live) + 1, dtype=np.int32)
            self.rtab, self.nrows = tab, len(live)
        rows = np.arange(self.nrows, self.nrows + k, dtype=np.int32)
        self.nrows += k
        return rows

    def _report(self, kind, what, ins, t, other, other_pc, bytes_, k, size):
        """Record a ``kind`` hazard at byte ``bytes_[k]`` (flat, of this batch) of the
        access of ``size`` bytes per lane whose bytes are ``bytes_``, by thread ``t``,
        against thread ``other`` (-1: several) at instruction ``other_pc``. ``details``
        give the block offsets of the racing byte and of the access's first byte."""
        m = self.m
        code = m.mod.code
        oline = code[other_pc].line if 0 <= other_pc < len(code) else 0
        byte = int(bytes_[k])
        offset = byte % self.stride
        start = (byte - k % size) % self.stride
        if other >= 0:
            ob, ot = m.where(other)
            who = f"thread {ot} of the same block"
        else:
            who = "other threads of the same block"
        name, lo, _ = variable_at(m, offset, address_variable(m.mod, ins))
        place = f"shared offset {offset}" if name is None else \
            f"shared offset {offset} (byte {offset - lo} of shared variable {name})"
        m.finding(kind, f"shared-memory {what} hazard at {place}: this access "
                  f"races with {who} at PTX line {oline}, with no barrier between them", ins, t,
                  dedupe=(other_pc,), other_thread=None if other < 0 else m.where(other)[1],
                  other_ptx_line=oline, shared_offset=offset, variable=name,
                  address=start, size=size, space="shared", place=place,
                  offset=None if name is None else offset - lo)
