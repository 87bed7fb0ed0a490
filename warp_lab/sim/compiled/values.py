"""Typed values of the compiled tier: an LLVM value with the numpy dtype the interpreter
would hold it in, and the conversions between them that the interpreter's operand
readers and writers (:mod:`warp_lab.sim.operands`) make.

The interpreter computes with numpy arrays whose dtype follows the instruction's type
suffix; a register holds raw bits (``uint8/16/32/64``, ``bool`` for predicates). The
compiled tier keeps the same pairing: every value is a :class:`V` (``llvmlite.ir``
value, numpy dtype), integers signless in LLVM with the dtype saying signed or unsigned,
floats as LLVM ``float``/``double``, predicates ``i1``. :func:`convert` is numpy's
``astype``/``view`` as the readers and writers use them, so a value crosses a register
with the bits the interpreter gives it.
"""

from __future__ import annotations

from typing import NamedTuple

import llvmlite.ir as ir
import numpy as np

__all__ = ["V", "I1", "I8", "I16", "I32", "I64", "F16", "F32", "F64", "lty", "RAW", "BOOL",
           "Unsupported", "raw_of", "as_raw", "view", "astype", "const"]

I1, I8, I16, I32, I64, I128 = (ir.IntType(n) for n in (1, 8, 16, 32, 64, 128))
F16, F32, F64 = ir.HalfType(), ir.FloatType(), ir.DoubleType()
RAW = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
       8: np.dtype(np.uint64)}
BOOL = np.dtype(np.bool_)


class Unsupported(Exception):
    """What the compiled tier does not translate: ``reason`` (one sentence) and the PTX
    ``line`` (0: the whole kernel). The launch then runs on the interpreter, and the
    result says why."""

    def __init__(self, reason: str, line: int = 0):
        super().__init__(reason)
        self.reason = reason
        self.line = line


class V(NamedTuple):
    """A value: ``v`` the ``llvmlite.ir`` value, ``dt`` the numpy dtype it stands for."""

    v: object
    dt: np.dtype


def lty(dt) -> ir.Type:
    """The LLVM type of numpy dtype ``dt`` (``bool`` → ``i1``, floats by width, ints by
    width; signedness lives in the dtype, not the LLVM type)."""
    dt = np.dtype(dt)
    if dt == BOOL:
        return I1
    if dt.kind == "f":
        return {2: F16, 4: F32, 8: F64}[dt.itemsize]
    return ir.IntType(8 * dt.itemsize)


def raw_of(dt) -> np.dtype:
    """The unsigned dtype of ``dt``'s width (``bool`` stays ``bool``)."""
    dt = np.dtype(dt)
    return dt if dt == BOOL else RAW[dt.itemsize]


def const(dt, value) -> V:
    """``value`` (a Python or numpy number) as a constant of dtype ``dt``, converted the
    way numpy's ``astype`` converts it; floats are made from their bits, so NaN payloads
    and -0.0 survive."""
    dt = np.dtype(dt)
    x = np.array(value).astype(dt)
    if dt == BOOL:
        return V(ir.Constant(I1, int(bool(x))), dt)
    bits = int(x.view(RAW[dt.itemsize]))
    c = ir.Constant(ir.IntType(8 * dt.itemsize), bits)
    if dt.kind == "f":
        return V(c.bitcast(lty(dt)), dt)
    return V(c, dt)


def view(b: ir.IRBuilder, x: V, dt) -> V:
    """numpy's ``x.view(dt)`` for a dtype of the same width (a bitcast)."""
    dt = np.dtype(dt)
    if x.dt == dt:
        return x
    if lty(x.dt) == lty(dt):
        return V(x.v, dt)
    return V(b.bitcast(x.v, lty(dt)), dt)


def astype(b: ir.IRBuilder, x: V, dt) -> V:
    """numpy's ``x.astype(dt)``: integers truncated or extended by the source's
    signedness, floats converted (round to nearest), ``bool`` as 0/1 or ``!= 0``."""
    dt = np.dtype(dt)
    s = x.dt
    if s == dt:
        return x
    t = lty(dt)
    if dt == BOOL:
        if s.kind == "f":
            return V(b.fcmp_unordered("!=", x.v, ir.Constant(lty(s), 0.0)), dt)
        return V(b.icmp_unsigned("!=", x.v, ir.Constant(lty(s), 0)), dt)
    if s == BOOL:
        if dt.kind == "f":
            return V(b.uitofp(x.v, t), dt)
        return V(b.zext(x.v, t), dt)
    if s.kind == "f" and dt.kind == "f":
        if s.itemsize < dt.itemsize:
            return V(b.fpext(x.v, t), dt)
        if s.itemsize > dt.itemsize:
            return V(b.fptrunc(x.v, t), dt)
        return V(x.v, dt)
    if s.kind == "f":
        raise Unsupported("a float to integer cast outside cvt")
    if dt.kind == "f":
        return V((b.sitofp if s.kind == "i" else b.uitofp)(x.v, t), dt)
    if s.itemsize == dt.itemsize:
        return V(x.v, dt)
    if s.itemsize > dt.itemsize:
        return V(b.trunc(x.v, t), dt)
    return V((b.sext if s.kind == "i" else b.zext)(x.v, t), dt)


def as_raw(b: ir.IRBuilder, x: V, raw) -> V:
    """The interpreter's ``_to_raw``: a result converted to a register's raw dtype
    (``bool`` by ``!= 0``; floats by bit pattern; narrower integers extended by their
    signedness, PTX ISA "Operand Size Exceeding Instruction-Type Size")."""
    raw = np.dtype(raw)
    v = x
    if v.dt == raw:
        return v
    if raw == BOOL:
        return astype(b, v, BOOL)
    if v.dt == BOOL:
        return astype(b, v, raw)
    if v.dt.itemsize == raw.itemsize:
        return view(b, v, raw)
    if v.dt.kind == "f":
        v = view(b, v, RAW[v.dt.itemsize])
    return astype(b, v, raw)
