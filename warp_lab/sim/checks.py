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
"""

from __future__ import annotations

import numpy as np

__all__ = ["RaceTracker"]


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

    def reset(self, blocks):
        """Forget the records of ``blocks`` (all when ``None``): a barrier completed."""
        if blocks is None:
            self.writer.fill(-1)
            self.reader.fill(-1)
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
            self.writer[byte] = tid
            # two lanes of this instruction writing the same byte
            same = self.writer[byte] != tid
            if waw.any():
                k = int(np.argmax(waw))
                self._report("race_waw", "write-after-write", ins, int(tid[k]), int(w[k]),
                             int(self.wpc[byte[k]]), int(byte[k]))
            if war.any():
                k = int(np.argmax(war))
                other = int(r[k]) if r[k] >= 0 else -1
                self._report("race_war", "write-after-read", ins, int(tid[k]), other,
                             int(self.rpc[byte[k]]), int(byte[k]))
            if same.any():
                k = int(np.argmax(same))
                self._report("race_waw", "write-after-write", ins, int(tid[k]),
                             int(self.writer[byte[k]]), pc, int(byte[k]))
            self.wpc[byte] = pc
            self.reader[byte] = -1
        else:
            raw = (w >= 0) & (w != tid)
            if raw.any():
                k = int(np.argmax(raw))
                self._report("race_raw", "read-after-write", ins, int(tid[k]), int(w[k]),
                             int(self.wpc[byte[k]]), int(byte[k]))
            r = self.reader[byte]
            multi = (r == -2) | ((r >= 0) & (r != tid))
            self.reader[byte] = tid
            multi |= self.reader[byte] != tid
            self.reader[byte[multi]] = -2
            self.rpc[byte] = pc

    def _report(self, kind, what, ins, t, other, other_pc, byte):
        m = self.m
        code = m.mod.code
        oline = code[other_pc].line if 0 <= other_pc < len(code) else 0
        offset = byte % self.stride
        if other >= 0:
            ob, ot = m.where(other)
            who = f"thread {ot} of the same block"
        else:
            who = "other threads of the same block"
        m.finding(kind, f"shared-memory {what} hazard at shared offset {offset}: this access "
                  f"races with {who} at PTX line {oline} (no barrier between them)", ins, t,
                  dedupe=(other_pc,), other_thread=None if other < 0 else m.where(other)[1],
                  other_ptx_line=oline, shared_offset=offset)
