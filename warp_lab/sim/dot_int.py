"""Integer dot products of packed bytes and halves: ``dp4a`` and ``dp2a`` (PTX ISA 9.7.1.23
and 9.7.1.24; CUDA's ``__dp4a``, ``__dp2a_lo``, ``__dp2a_hi``; sm_61+).

* ``dp4a.atype.btype d, a, b, c``: ``d = c + Σ a.byte[i] * b.byte[i]`` over the four bytes,
  each sign-extended when its type is ``.s32`` and zero-extended for ``.u32``;
* ``dp2a.mode.atype.btype d, a, b, c``: ``d = c + a.half[0] * b.byte[k] + a.half[1] *
  b.byte[k + 1]``, ``k`` 0 for ``.lo`` and 2 for ``.hi``, halves and bytes extended likewise.

The sum wraps to 32 bits (the destination is ``.s32`` when either source type is signed,
else ``.u32``).
"""

from __future__ import annotations

import numpy as np

from warp_lab.sim.opbuild import _err
from warp_lab.sim.operands import reader, writer

__all__ = ["BUILDERS"]

_U32 = np.dtype(np.uint32)


def _parts(v, width: int, signed: bool):
    """``v`` (uint32) split into ``32 // width`` lanes of ``width`` bits, as int64 arrays."""
    v = np.asarray(v, _U32).astype(np.int64)
    out = []
    for k in range(32 // width):
        p = (v >> (width * k)) & ((1 << width) - 1)
        if signed:
            p = np.where(p >= 1 << (width - 1), p - (1 << width), p)
        out.append(p)
    return out


def _build(ins, mod, half: bool):
    types = [t for t in ins.types if t in ("s32", "u32")]
    if len(types) != 2:
        raise _err(ins, f"{ins.op} needs two source types (.s32/.u32)")
    sa, sb = types[0] == "s32", types[1] == "s32"
    ra, rb = (reader(ins.srcs[k], _U32, mod, ins.line) for k in (0, 1))
    rc = reader(ins.srcs[2], _U32, mod, ins.line)
    w = writer(ins.dsts[0], mod, ins.line)
    k0 = 2 if "hi" in ins.mods else 0
    out_dt = np.int32 if (sa or sb) else np.uint32

    def ex(m, mask):
        a = _parts(ra(m), 16 if half else 8, sa)
        b = _parts(rb(m), 8, sb)
        total = np.asarray(rc(m), _U32).astype(np.int64)
        if half:
            total = total + a[0] * b[k0] + a[1] * b[k0 + 1]
        else:
            total = total + sum(x * y for x, y in zip(a, b))
        w(m, (total & 0xFFFFFFFF).astype(np.uint32).view(out_dt), mask)
    return ex


BUILDERS = {"dp4a": lambda ins, mod: _build(ins, mod, False),
            "dp2a": lambda ins, mod: _build(ins, mod, True)}
