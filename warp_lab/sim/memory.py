"""Simulated global memory and the generic address map.

Global memory is a set of allocations at fake 64-bit addresses with unmapped
gaps between them, so an access that runs off the end of one array does not
land in another: the simulator checks every lane's address against the
allocation bounds before it touches a byte and never reads or writes outside
an allocation.

Generic addressing (PTX ISA "Generic Addressing"): shared and local memory
appear in the generic address space as windows; ``cvta.shared``/``cvta.local``
add the window base, ``cvta.to.*`` subtract it; any generic address outside
both windows is a global address.
"""

from __future__ import annotations

import numpy as np

from warp_lab.errors import SimulatorError

__all__ = ["GlobalMemory", "SHARED_WINDOW", "LOCAL_WINDOW", "WINDOW_SIZE", "GLOBAL_BASE"]

#: generic address of shared-space address 0 (each block sees its own shared memory there)
SHARED_WINDOW = 0x7E00_0000_0000
#: generic address of local-space address 0 (each thread sees its own local memory there)
LOCAL_WINDOW = 0x7D00_0000_0000
#: size of each window in bytes
WINDOW_SIZE = 1 << 32
#: first global allocation address
GLOBAL_BASE = 0x1000_0000_0000
_GAP = 1 << 20          # unmapped bytes between allocations
_ALIGN = 256            # allocation alignment (cudaMalloc gives at least 256)


class GlobalMemory:
    """The simulator's global memory: allocations at fake addresses.

    Addresses are Python ints (bytes). Each allocation is a zero-filled numpy
    ``uint8`` buffer; its address is a multiple of 256 and allocations are
    separated by 1 MiB of unmapped addresses, so out-of-bounds accesses are
    caught instead of silently hitting a neighbour.

    Example::

        mem = GlobalMemory()
        x = mem.alloc(4 * n, name="x")
        mem.write(x, np.arange(n, dtype=np.float32))
        back = np.frombuffer(mem.read(x, 4 * n), np.float32)
    """

    def __init__(self):
        self._bases: list[int] = []          # sorted
        self._bufs: dict[int, np.ndarray] = {}
        self._names: dict[int, str] = {}
        self._sizes: dict[int, int] = {}
        self._next = GLOBAL_BASE
        self._arr_bases = np.zeros(0, np.uint64)
        self._arr_ends = np.zeros(0, np.uint64)

    # ---- allocation
    def alloc(self, nbytes: int, name: str = "") -> int:
        """Allocate ``nbytes`` zeroed bytes; returns the address.

        Raises:
            SimulatorError: ``nbytes`` negative or larger than 2**40.
        """
        nbytes = int(nbytes)
        if nbytes < 0 or nbytes > 1 << 40:
            raise SimulatorError(f"cannot allocate {nbytes} bytes")
        addr = self._next
        # buffers are padded to 16 bytes so every aligned typed view covers them
        self._bufs[addr] = np.zeros((max(nbytes, 1) + 15) // 16 * 16, np.uint8)
        self._sizes[addr] = nbytes
        self._names[addr] = name or f"alloc@{addr:#x}"
        self._bases.append(addr)
        self._next = (addr + nbytes + _GAP + _ALIGN - 1) // _ALIGN * _ALIGN
        self._reindex()
        return addr

    def free(self, addr: int) -> None:
        """Release the allocation starting at ``addr``.

        Raises:
            SimulatorError: ``addr`` is not the start of a live allocation.
        """
        if addr not in self._bufs:
            raise SimulatorError(f"free of {addr:#x}, which is not an allocation")
        del self._bufs[addr], self._sizes[addr], self._names[addr]
        self._bases.remove(addr)
        self._reindex()

    def _reindex(self):
        self._arr_bases = np.array(self._bases, np.uint64)
        self._arr_ends = np.array([b + self._sizes[b] for b in self._bases], np.uint64)

    def allocations(self) -> list[tuple[int, int, str]]:
        """``(address, nbytes, name)`` of every live allocation, by address."""
        return [(b, self._sizes[b], self._names[b]) for b in self._bases]

    def find(self, addr: int):
        """``(base, nbytes, name)`` of the allocation containing ``addr``, else ``None``."""
        i = int(np.searchsorted(self._arr_bases, np.uint64(addr), "right")) - 1
        if i >= 0:
            b = self._bases[i]
            if addr < b + self._sizes[b]:
                return b, self._sizes[b], self._names[b]
        return None

    # ---- host access
    def _span(self, addr: int, nbytes: int):
        if nbytes < 0:   # (a slice to off + nbytes would return the wrong bytes)
            raise SimulatorError(f"host access of {nbytes} bytes at {addr:#x}: the byte "
                                 "count must be >= 0")
        if nbytes == 0 and addr in self._bufs:   # an empty allocation (a 0-element array)
            return self._bufs[addr], 0
        hit = self.find(addr)
        if hit is None or addr + nbytes > hit[0] + hit[1]:
            raise SimulatorError(f"host access of {nbytes} bytes at {addr:#x} is outside "
                                 "every allocation")
        off = addr - hit[0]
        return self._bufs[hit[0]], off

    def write(self, addr: int, data) -> None:
        """Copy ``bytes`` or a numpy array (its raw bytes, C order) to ``addr``.

        Raises:
            SimulatorError: the range is not inside one allocation.
        """
        raw = np.ascontiguousarray(data).view(np.uint8).reshape(-1) if isinstance(
            data, np.ndarray) else np.frombuffer(bytes(data), np.uint8)
        buf, off = self._span(addr, raw.size)
        buf[off: off + raw.size] = raw

    def read(self, addr: int, nbytes: int) -> bytes:
        """``nbytes`` bytes starting at ``addr``.

        Raises:
            SimulatorError: the range is not inside one allocation.
        """
        buf, off = self._span(addr, nbytes)
        return buf[off: off + nbytes].tobytes()

    def host_buffers(self) -> list[tuple[int, int, str, np.ndarray]]:
        """``(address, nbytes, name, buffer)`` of every live allocation, by address: the
        uint8 numpy buffer (at least ``nbytes`` long, padded to 16) the simulator reads and
        writes, for the compiled tier to address directly."""
        return [(b, self._sizes[b], self._names[b], self._bufs[b]) for b in self._bases]

    def snapshot(self) -> dict:
        """A copy of every allocation's bytes (the debugger replays from it)."""
        return {b: self._bufs[b].copy() for b in self._bases}

    def restore(self, snap: dict) -> None:
        """Put back the bytes saved by :meth:`snapshot` (allocations must still exist)."""
        for b, data in snap.items():
            if b in self._bufs:
                self._bufs[b][:] = data

    # ---- simulator access (vectorised)
    def locate(self, addr: np.ndarray, size: int):
        """Map lane addresses to ``(buffers, offsets)`` for an access of ``size`` bytes.

        Args:
            addr: uint64 addresses, one per lane.
            size: bytes each lane accesses.

        Returns:
            ``(groups, bad)``: ``groups`` a list of ``(buffer, lane_index or None,
            byte_offsets)`` (``None``: all lanes in one allocation), ``bad`` the
            index of the first lane outside every allocation (or ``-1``).
        """
        if addr.size == 0:
            return [], -1
        lo, hi = int(addr.min()), int(addr.max())
        bases = self._arr_bases
        i = int(np.searchsorted(bases, np.uint64(lo), "right")) - 1
        if i >= 0 and hi + size <= int(self._arr_ends[i]):
            b = self._bases[i]
            return [(self._bufs[b], None, (addr - np.uint64(b)).astype(np.int64))], -1
        j = np.searchsorted(bases, addr, "right").astype(np.int64) - 1
        jc = np.maximum(j, 0)
        ok = (j >= 0) & (addr + np.uint64(size) <= self._arr_ends[jc]) if bases.size else \
            np.zeros(addr.shape, bool)
        if not ok.all():
            return [], int(np.argmin(ok))
        groups = []
        for k in np.unique(j):
            b = self._bases[int(k)]
            lanes = np.nonzero(j == k)[0]
            groups.append((self._bufs[b], lanes, (addr[lanes] - np.uint64(b)).astype(np.int64)))
        return groups, -1
