"""initcheck: reads of shared memory that no thread of the block has written.

On a GPU a block's shared memory holds whatever was there before (another
block's data, another kernel's) when the block starts: CUDA never initialises
it, and a ``__shared__`` variable cannot be initialised in its declaration
(CUDA Programming Guide, "Variable Memory Space Specifiers"). A kernel that
reads a shared byte before any thread of its block stored to it computes with
garbage. compute-sanitizer's initcheck tool
("Initcheck Tool" in the Compute Sanitizer documentation) reports such reads
for global memory; this is the same check for shared memory, where the
simulator can follow every byte.

Per byte of each block's shared memory (static variables and the dynamic
``extern .shared`` memory alike) the tracker keeps one flag, "written since
the block started". ``st`` and generic stores that land in the shared window,
``atom`` and ``red`` set it; ``ld``/``ldu`` (shared or generic), ``atom`` and
``red`` (which read the old value) check it first, except ``atom.exch``,
whose result does not depend on the old value (``atomicExch(&flag, 0)`` is a
way to initialise). Barriers change nothing; every block starts with no byte
written (blocks of one batch each have their own flags, and a new batch gets
new ones). The simulator itself still zero-fills shared memory, so results
stay deterministic; the check only reports.

Reporting: an uninitialised read is a bug but not a fault (the GPU does not
abort the launch, it returns garbage), so the launch goes on and every
instruction that reads uninitialised bytes is reported once, as an
``uninitialized`` finding at its first offending lane (block, thread, PTX
line, source line), naming the variable and the byte offset. Stopping at the
first one, as memcheck does for an illegal address, would hide the values the
rest of the launch computes; reporting every lane would bury the user's line
under thousands of copies. An instruction already reported is not checked
again (its stores still set flags).

Limits: the check sees the PTX. A shared array that nothing ever stores to is
``undef`` to LLVM, which from -O1 folds its loads away (the kernel then stores
an undefined value and the PTX has no ``ld.shared``), so such a read shows only
at ``opt=0``; the loads of an array the kernel also stores to stay.
"""

from __future__ import annotations

import numpy as np

__all__ = ["InitTracker", "KIND"]

#: the finding kind of an uninitialised shared read
KIND = "uninitialized"

_RAW = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_SHIFT = {2: 1, 4: 2, 8: 3}
#: per element width, the flag element whose bytes are all written (1)
_ONES = {w: t(int.from_bytes(b"\x01" * w, "little")) for w, t in _RAW.items()}


class InitTracker:
    """Written-byte flags for the shared memory of one batch of blocks.

    Args:
        m: the machine (for thread coordinates, variable bounds and findings).
        nb: blocks in the batch.
        stride: bytes of shared memory per block (a multiple of 16).

    Memory: one byte per shared byte per block of the batch (``nb * stride``).
    """

    def __init__(self, m, nb: int, stride: int):
        self.m = m
        self.stride = stride
        self.flags = np.zeros(nb * stride, np.uint8)   # 1: written since the block started

    def _shared(self, groups, idx):
        """The shared part of an access resolved by :func:`warp_lab.sim.memops.access`:
        ``(byte offsets in the batch's shared buffer, batch thread indices)`` (those
        offsets are the ones the access uses, so nothing is recomputed), or ``None``."""
        shared = self.m.shared
        for buf, lanes, off in groups:
            if buf is shared:   # (a generic access has at most one shared group)
                return off, (idx if lanes is None else idx[lanes])
        return None

    def _words(self, off, size):
        """Flag view and element indices covering ``size`` bytes per lane (accesses are
        aligned to their size, memcheck or the window check having passed, and blocks
        start at multiples of 16, so whole elements of ``min(size, 8)`` bytes cover them)."""
        w = min(size, 8)
        e = off >> _SHIFT[w] if w > 1 else off
        if size > w:
            e = (e[:, None] + np.arange(size // w)).reshape(-1)
        return self.flags.view(_RAW[w]), e, w

    def write(self, groups, idx, size):
        """Lanes ``idx`` (batch thread indices) store ``size`` bytes each where ``groups``
        (what :func:`~warp_lab.sim.memops.access` returned for them) says: the shared
        bytes among them are initialised."""
        got = self._shared(groups, idx)
        if got is None:
            return
        view, e, w = self._words(got[0], size)
        view[e] = _ONES[w]

    def read(self, ins, groups, idx, size, var=None):
        """Lanes ``idx`` read ``size`` bytes each at ``groups``: records an
        ``uninitialized`` finding (at most one per instruction, the launch goes on) when
        a shared byte was not written since its block started. ``var``: the variable
        provenance derived the address from (``None``: unknown), preferred when naming
        the dynamic shared memory."""
        m = self.m
        if (KIND, ins.pc, None) in m._seen:
            return
        got = self._shared(groups, idx)
        if got is None:
            return
        off, t = got
        view, e, w = self._words(off, size)
        vals = view[e]
        bad = vals != _ONES[w]
        if not bad.any():
            return
        k = int(np.argmax(bad))
        per = size // w
        lane = k // per
        word = int(vals[k])
        # the first byte of the element not written (little-endian: byte j is bits 8j..)
        j = next(j for j in range(w) if not (word >> (8 * j)) & 1)
        start = int(off[lane]) % self.stride
        self._report(ins, start, size, int(t[lane]), start + (k % per) * w + j, var)

    def _report(self, ins, addr, size, t, off, var):
        m = self.m
        name, lo, hi = variable_at(m, off, var)
        if name is None:
            place = f"byte {off} of the block's {m.shared_size} bytes of shared memory"
        elif name in m.dynamic_vars:
            place = (f"byte {off - lo} of the dynamic shared memory ({name}, the launch's "
                     f"shared_mem={hi - lo} bytes, at offset {lo:#x})")
        else:
            place = (f"byte {off - lo} of shared variable {name} of {hi - lo} bytes at "
                     f"offset {lo:#x}")
        verb = {"atom": "atomic read-modify-write", "red": "reduction (read-modify-write)"}.get(
            ins.op, "read")
        m.finding(KIND, f"{verb} of {size} bytes of uninitialized shared memory at address "
                  f"{addr:#x}: {place} was not written by any thread of the block since it "
                  "started (a GPU's shared memory holds garbage then; the simulator reads "
                  "zeros)", ins, t, address=addr, size=size, space="shared", variable=name,
                  offset=None if name is None else off - lo, shared_offset=off, place=place)


def variable_at(m, off, var):
    """``(name, start, end)`` of the shared variable holding block offset ``off``
    (``var`` first when it holds it: several ``extern`` names share the dynamic
    memory), or ``(None, 0, 0)`` (padding between variables)."""
    order = ([var] if var is not None else []) + sorted(m.var_bounds)
    for name in order:
        b = m.var_bounds.get(name)
        if b is not None and b[0] == "shared" and b[1] <= off < b[2]:
            return name, b[1], b[2]
    return None, 0, 0
