"""Operand readers and writers: the bridge between decoded operands and lane values.

Registers hold raw bits (``uint8/16/32/64`` arrays, ``bool`` for predicates);
an instruction reads each operand *as its type suffix says* (a ``.f32`` add
views the ``.b32`` register as float32) and writes its result back as bits.
A register's value is either a ``(T,)`` array (one element per thread of the
batch) or a numpy scalar when every thread holds the same value (kernel
parameters, constants, ``%ntid``), which numpy broadcasting handles for free.

Readers and writers are closures built once per instruction, so the hot loop
does no string work and no type dispatch.
"""

from __future__ import annotations

import numpy as np

from warp_lab.errors import SimulatorError

__all__ = ["reader", "writer", "imm_value", "RAW"]

RAW = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
       8: np.dtype(np.uint64)}
_BOOL = np.dtype(np.bool_)


def imm_value(op, dt: np.dtype, line: int):
    """A decoded immediate as a numpy scalar of ``dt`` (integers wrap to the width)."""
    if op[0] == "i":
        if dt == _BOOL:
            return np.bool_(op[1] != 0)
        if dt.kind == "f":
            return dt.type(op[1])
        bits = op[1] & ((1 << (8 * dt.itemsize)) - 1)
        return np.array(bits, RAW[dt.itemsize]).view(dt)[()]
    if op[0] == "f":
        bits, nbytes = op[1], op[2]
        val = np.array(bits, RAW[nbytes]).view(np.float32 if nbytes == 4 else np.float64)[()]
        if dt.kind == "f":
            return dt.type(val) if dt.itemsize != nbytes else val
        if dt.itemsize == nbytes:
            return np.array(bits, RAW[nbytes]).view(dt)[()]
        raise SimulatorError(f"PTX line {line}: float immediate used as {dt}", ptx_line=line)
    raise SimulatorError(f"PTX line {line}: operand {op} is not an immediate", ptx_line=line)


def reader(op, dt, mod, line: int):
    """A closure ``f(machine) -> value`` reading operand ``op`` as dtype ``dt``.

    Registers narrower or wider than ``dt`` are truncated or zero-extended
    (PTX allows a wider register for a narrower type in ``cvt``, ``ld``/``st``
    and the like). Raises :class:`SimulatorError` for operand kinds that are
    not values (addresses, vectors).
    """
    dt = np.dtype(dt)
    kind = op[0]
    if kind == "r":
        idx = op[1]
        raw = mod.reg_raw[idx]
        if dt == raw:
            return lambda m: m.regs[idx]
        if raw == _BOOL:
            if dt.kind in "iu":
                return lambda m: np.asarray(m.regs[idx]).astype(dt)
            raise SimulatorError(f"PTX line {line}: predicate register read as {dt}", ptx_line=line)
        if dt == _BOOL:
            return lambda m: m.regs[idx] != 0
        if dt.itemsize == raw.itemsize:
            return lambda m: m.regs[idx].view(dt)
        same = RAW[dt.itemsize]
        if dt == same:
            return lambda m: m.regs[idx].astype(same)
        return lambda m: m.regs[idx].astype(same).view(dt)
    if kind in ("i", "f"):
        v = imm_value(op, dt, line)
        return lambda m: v
    if kind == "s":
        name, comp = op[1], op[2]
        if dt.itemsize == 4 and dt.kind == "u":
            return lambda m: m.sreg(name, comp)
        return lambda m: np.asarray(m.sreg(name, comp)).astype(RAW[dt.itemsize]).view(dt)
    if kind == "sym":
        name = op[1]
        return lambda m: np.array(m.symbol(name, line), np.uint64).astype(
            RAW[dt.itemsize]).view(dt)[()]
    if kind == "neg":
        inner = reader(op[1], _BOOL, mod, line)
        return lambda m: ~inner(m)
    raise SimulatorError(f"PTX line {line}: operand {op[0]!r} cannot be read as a value",
                         ptx_line=line)


def _to_raw(v, raw):
    if v.dtype == raw:
        return v
    if raw == _BOOL:
        return v != 0
    if v.dtype == _BOOL:
        return v.astype(raw)
    if v.dtype.itemsize == raw.itemsize:
        return v.view(raw)
    if v.dtype.kind == "f":
        v = v.view(RAW[v.dtype.itemsize])
    return v.astype(raw)


def writer(op, mod, line: int):
    """A closure ``f(machine, value, mask)`` writing ``value`` into operand ``op``.

    ``mask`` is ``None`` (every thread of the batch) or a bool array of the
    lanes that execute. Values are converted to the register's raw bits
    (floats by bit pattern; narrower integers sign- or zero-extended as their
    signedness says, PTX ISA "Operand Size Exceeding Instruction-Type Size").
    """
    if op[0] == "_":
        return lambda m, v, mask: None
    if op[0] != "r":
        raise SimulatorError(f"PTX line {line}: destination must be a register", ptx_line=line)
    idx = op[1]
    raw = mod.reg_raw[idx]

    def w(m, v, mask):
        v = _to_raw(v, raw) if v.dtype != raw else v
        if mask is None:
            m.regs[idx] = v
        else:
            m.regs[idx] = np.where(mask, v, m.regs[idx])
        if m.written is not None:  # the debugger's "not yet written" (Machine.track_written)
            m.note_written(idx, mask)
    return w
