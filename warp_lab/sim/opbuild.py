"""Shared pieces of the instruction builders: operand typing, float post-processing,
the generic n-ary builder."""

from __future__ import annotations

import numpy as np

from warp_lab.errors import SimulatorError
from warp_lab.sim import fp
from warp_lab.sim.operands import reader, writer
from warp_lab.sim.ptx import type_dtype

__all__ = ["U32", "BOOL", "_err", "_typ", "_fpost", "_rmode", "_nary", "_directed"]

U32 = np.dtype(np.uint32)
BOOL = np.dtype(np.bool_)


def _err(ins, msg):
    return SimulatorError(f"PTX line {ins.line}: {msg}: {ins.text}", ptx_line=ins.line)


def _typ(ins, k=0):
    if len(ins.types) <= k:
        raise _err(ins, f"instruction {ins.op!r} needs a type suffix")
    return ins.types[k]


#: opcodes that only move or flip bits: their NaN results keep the input's pattern
_BITWISE_FLOAT = {"abs", "neg", "copysign", "mov", "selp", "slct", "testp"}


def _fpost(ins, dt):
    """Post-processing for float results: ftz, sat, canonical NaN (None when nothing to do).

    float32 arithmetic on NVIDIA GPUs returns one canonical NaN, bit pattern 0x7fffffff,
    whatever the input payloads (CUDA C Programming Guide, floating-point standard notes).
    """
    steps = []
    if "ftz" in ins.mods and dt == np.float32:
        steps.append(fp.ftz)
    if "sat" in ins.mods:
        steps.append(fp.sat)
    if dt == np.float32 and ins.op not in _BITWISE_FLOAT:
        steps.append(fp.canonical_nan)
    if not steps:
        return None

    def post(v):
        for s in steps:
            v = s(v)
        return v
    return post


def _rmode(ins):
    for r in ("rn", "rz", "rm", "rp"):
        if r in ins.mods:
            return r
    return "rn"


def _nary(ins, mod, fn, dt=None, n=None):
    """Generic ``d = fn(a, b, ...)`` with inputs read as ``dt``."""
    t = _typ(ins)
    dt = np.dtype(dt or type_dtype(t))
    srcs = ins.srcs if n is None else ins.srcs[:n]
    rs = [reader(s, dt, mod, ins.line) for s in srcs]
    w = writer(ins.dsts[0], mod, ins.line)
    post = _fpost(ins, dt) if dt.kind == "f" else None
    ftz_in = "ftz" in ins.mods and dt == np.float32
    if ftz_in:
        rs = [(lambda r: (lambda m: fp.ftz(np.asarray(r(m)))))(r) for r in rs]
    if len(rs) == 1:
        r0 = rs[0]
        if post is None:
            return lambda m, mask: w(m, fn(r0(m)), mask)
        return lambda m, mask: w(m, post(fn(r0(m))), mask)
    if len(rs) == 2:
        r0, r1 = rs
        if post is None:
            return lambda m, mask: w(m, fn(r0(m), r1(m)), mask)
        return lambda m, mask: w(m, post(fn(r0(m), r1(m))), mask)
    if post is None:
        return lambda m, mask: w(m, fn(*[r(m) for r in rs]), mask)
    return lambda m, mask: w(m, post(fn(*[r(m) for r in rs])), mask)


def _directed(op, mode):
    """An f32 binary op computed exactly in float64 and rounded with ``mode``."""
    def f(a, b):
        return fp.round_f64_to_f32(op(np.float64(a) if np.ndim(a) == 0 else a.astype(np.float64),
                                      np.float64(b) if np.ndim(b) == 0 else b.astype(np.float64)),
                                   mode)
    return f
