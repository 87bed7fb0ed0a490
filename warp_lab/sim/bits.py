"""Bit-manipulation semantics: shifts, funnel shifts, logic, ``lop3``, ``popc``, ``clz``,
``bfind``, ``brev``, ``bfe``, ``bfi``, ``prmt`` (PTX ISA 9.7.1.x "Integer Arithmetic" and
9.7.7 "Logic and Shift"). Bit-field rules follow the ISA's pseudocode for each instruction.
"""

from __future__ import annotations

import numpy as np

from warp_lab.sim.operands import RAW, reader, writer
from warp_lab.sim.ptx import type_dtype
from warp_lab.sim.opbuild import BOOL, U32, _err, _nary, _typ

__all__ = ["BITS"]


def _bitlen(x, width):
    """Number of significant bits of unsigned ``x`` (0 for 0)."""
    x = np.asarray(x).astype(np.uint64)
    n = np.zeros(x.shape, np.uint32)
    for s in (32, 16, 8, 4, 2, 1):
        if s >= width:
            continue
        big = (x >> np.uint64(s)) != 0
        n = n + np.where(big, np.uint32(s), np.uint32(0))
        x = np.where(big, x >> np.uint64(s), x)
    return n + (x != 0).astype(np.uint32)


def _clz(ins, mod):
    dt = type_dtype(_typ(ins))
    width = 8 * dt.itemsize
    return _nary(ins, mod, lambda a: (np.uint32(width) - _bitlen(a, width)).astype(np.uint32))


def _bfind(ins, mod):
    dt = type_dtype(_typ(ins))
    width = 8 * dt.itemsize
    shiftamt = "shiftamt" in ins.mods

    def f(a):
        a = np.asarray(a, dt)
        u = a.astype(RAW[dt.itemsize])
        if dt.kind == "i":
            u = np.where(a < 0, ~u, u)
        n = _bitlen(u, width).astype(np.int64)
        pos = n - 1
        if shiftamt:
            pos = np.where(n == 0, -1, width - 1 - pos)
        return pos.astype(np.uint32)
    return _nary(ins, mod, f)


_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], np.uint8)


def _brev(ins, mod):
    dt = type_dtype(_typ(ins))
    raw = RAW[dt.itemsize]

    def f(a):
        arr = np.atleast_1d(np.asarray(a).astype(raw))
        b = _REV8[arr.view(np.uint8).reshape(-1, dt.itemsize)[:, ::-1]]
        out = np.ascontiguousarray(b).view(raw).reshape(arr.shape)
        return out if np.ndim(a) else out[0]
    return _nary(ins, mod, f, dt=raw)


def _ones(k, width):
    """uint64 masks of the low ``k`` bits (k may equal 64)."""
    k = np.asarray(k, np.uint64)
    full = k >= np.uint64(64)
    return np.where(full, np.uint64(0xFFFFFFFFFFFFFFFF),
                    (np.uint64(1) << np.minimum(k, np.uint64(63))) - np.uint64(1))


def _bfe(ins, mod):
    dt = type_dtype(_typ(ins))
    width = 8 * dt.itemsize
    raw = RAW[dt.itemsize]
    ra = reader(ins.srcs[0], dt, mod, ins.line)
    rb = reader(ins.srcs[1], U32, mod, ins.line)
    rc = reader(ins.srcs[2], U32, mod, ins.line)
    w = writer(ins.dsts[0], mod, ins.line)
    msb = width - 1

    def ex(m, mask):
        u = np.asarray(ra(m)).astype(raw).astype(np.uint64)
        pos = (np.asarray(rb(m), np.uint32) & np.uint32(0xFF)).astype(np.int64)
        ln = (np.asarray(rc(m), np.uint32) & np.uint32(0xFF)).astype(np.int64)
        eff = np.clip(np.minimum(ln, msb + 1 - pos), 0, None)
        val = (u >> np.minimum(pos, msb).astype(np.uint64)) & _ones(eff, width)
        if dt.kind == "i":
            sidx = np.minimum(pos + ln - 1, msb).clip(0).astype(np.uint64)
            sbit = ((u >> sidx) & np.uint64(1)) != 0
            sbit &= ln != 0
            val = np.where(sbit, val | (~_ones(eff, width)), val)
        w(m, val.astype(raw), mask)
    return ex


def _bfi(ins, mod):
    dt = type_dtype(_typ(ins))
    width = 8 * dt.itemsize
    raw = RAW[dt.itemsize]
    ra = reader(ins.srcs[0], raw, mod, ins.line)
    rb = reader(ins.srcs[1], raw, mod, ins.line)
    rc = reader(ins.srcs[2], U32, mod, ins.line)
    rd = reader(ins.srcs[3], U32, mod, ins.line)
    w = writer(ins.dsts[0], mod, ins.line)

    def ex(m, mask):
        a = np.asarray(ra(m)).astype(np.uint64)
        b = np.asarray(rb(m)).astype(np.uint64)
        pos = (np.asarray(rc(m), np.uint32) & np.uint32(0xFF)).astype(np.int64)
        ln = (np.asarray(rd(m), np.uint32) & np.uint32(0xFF)).astype(np.int64)
        eff = np.clip(np.minimum(ln, width - pos), 0, None)
        sh = np.minimum(pos, 63).astype(np.uint64)
        msk = _ones(eff, width) << sh
        d = np.where(eff > 0, (b & ~msk) | ((a << sh) & msk), b)
        w(m, d.astype(raw), mask)
    return ex


def _prmt(ins, mod):
    modes = [x for x in ins.mods if x in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")]
    if modes:
        raise _err(ins, f"prmt mode .{modes[0]} is not implemented")
    ra, rb, rc = (reader(s, U32, mod, ins.line) for s in ins.srcs)
    w = writer(ins.dsts[0], mod, ins.line)

    def ex(m, mask):
        a = np.asarray(ra(m), np.uint64)
        b = np.asarray(rb(m), np.uint64)
        c = np.asarray(rc(m), np.uint32)
        word = a | (b << np.uint64(32))
        out = np.zeros(np.broadcast(a, b, c).shape, np.uint32)
        for i in range(4):
            sel = (c >> np.uint32(4 * i)) & np.uint32(0xF)
            byte = ((word >> (np.uint64(8) * (sel & np.uint32(7)).astype(np.uint64)))
                    & np.uint64(0xFF)).astype(np.uint32)
            sign = (sel & np.uint32(8)) != 0
            byte = np.where(sign, np.where(byte & np.uint32(0x80), np.uint32(0xFF), np.uint32(0)),
                            byte)
            out = out | (byte << np.uint32(8 * i))
        w(m, out, mask)
    return ex


def _shift(ins, mod):
    dt = type_dtype(_typ(ins))
    width = 8 * dt.itemsize
    ra = reader(ins.srcs[0], dt, mod, ins.line)
    rb = reader(ins.srcs[1], U32, mod, ins.line)
    w = writer(ins.dsts[0], mod, ins.line)
    left = ins.op == "shl"
    zero = dt.type(0)

    def ex(m, mask):
        a = ra(m)
        n = np.asarray(rb(m), np.uint32)
        if left or dt.kind == "u":
            big = n >= width
            nn = np.minimum(n, width - 1).astype(dt)
            v = (a << nn) if left else (a >> nn)
            w(m, np.where(big, zero, v).astype(dt) if np.any(big) else np.asarray(v, dt), mask)
        else:
            w(m, np.asarray(a >> np.minimum(n, width - 1).astype(dt), dt), mask)
    return ex


def _shf(ins, mod):
    left = "l" in ins.mods
    clamp = "clamp" in ins.mods
    ra, rb, rc = (reader(s, U32, mod, ins.line) for s in ins.srcs)
    w = writer(ins.dsts[0], mod, ins.line)

    def ex(m, mask):
        a = np.asarray(ra(m), np.uint64)
        b = np.asarray(rb(m), np.uint64)
        c = np.asarray(rc(m), np.uint32)
        n = np.minimum(c, np.uint32(32)) if clamp else c & np.uint32(31)
        n = n.astype(np.uint64)
        word = a | (b << np.uint64(32))
        if left:
            d = ((word << n) >> np.uint64(32)) & np.uint64(0xFFFFFFFF)
            d = np.where(n == 64, 0, d)
        else:
            d = (word >> n) & np.uint64(0xFFFFFFFF)
        w(m, d.astype(np.uint32), mask)
    return ex


def _logic(ins, mod):
    t = _typ(ins)
    dt = type_dtype(t)
    fn = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}.get(ins.op)
    if ins.op == "not":
        return _nary(ins, mod, np.logical_not if dt == BOOL else np.invert)
    if ins.op == "cnot":
        return _nary(ins, mod, lambda a: (a == 0).astype(dt))
    return _nary(ins, mod, fn)


def _lop3(ins, mod):
    ra, rb, rc = (reader(s, U32, mod, ins.line) for s in ins.srcs[:3])
    lut = ins.srcs[3]
    if lut[0] != "i":
        raise _err(ins, "lop3 needs an immediate lookup table")
    lut = lut[1]
    w = writer(ins.dsts[0], mod, ins.line)

    def ex(m, mask):
        a, b, c = np.asarray(ra(m)), np.asarray(rb(m)), np.asarray(rc(m))
        out = np.uint32(0)
        for i in range(8):
            if lut >> i & 1:
                ta = a if i & 4 else ~a
                tb = b if i & 2 else ~b
                tc = c if i & 1 else ~c
                out = out | (ta & tb & tc)
        w(m, np.asarray(out, np.uint32), mask)
    return ex


def _popc(ins, mod):
    return _nary(ins, mod, lambda a: np.bitwise_count(np.asarray(a)).astype(np.uint32))


BITS = {
    "and": _logic, "or": _logic, "xor": _logic, "not": _logic, "cnot": _logic, "lop3": _lop3,
    "shl": _shift, "shr": _shift, "shf": _shf,
    "popc": _popc, "clz": _clz, "bfind": _bfind, "brev": _brev, "bfe": _bfe, "bfi": _bfi,
    "prmt": _prmt,
}
