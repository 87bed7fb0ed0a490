"""``mov`` (including vector pack/unpack) and ``cvt`` with every rounding mode,
saturation and ``.ftz`` (PTX ISA 9.7.9.21 "cvt", 9.7.9.1 "mov")."""

from __future__ import annotations

import numpy as np

from warp_lab.sim import fp
from warp_lab.sim.operands import RAW, reader, writer
from warp_lab.sim.ptx import type_dtype
from warp_lab.sim.opbuild import _err, _typ

__all__ = ["CONVERT"]


def _mov(ins, mod):
    t = _typ(ins)
    dt = type_dtype(t)
    d, s = ins.dsts[0], ins.srcs[0]
    if s[0] == "v":  # pack: mov.b64 %rd, {%r1, %r2} (element 0 in the low bits)
        n = len(s[1])
        edt = RAW[dt.itemsize // n]
        rs = [reader(x, edt, mod, ins.line) for x in s[1]]
        w = writer(d, mod, ins.line)
        wide = RAW[dt.itemsize]

        def pack(m, mask):
            out = wide.type(0)
            for k, r in enumerate(rs):
                out = out | (np.asarray(r(m)).astype(wide) << wide.type(8 * edt.itemsize * k))
            w(m, np.asarray(out, wide), mask)
        return pack
    if d[0] == "v":  # unpack
        n = len(d[1])
        edt = RAW[dt.itemsize // n]
        r = reader(s, RAW[dt.itemsize], mod, ins.line)
        ws = [writer(x, mod, ins.line) for x in d[1]]
        wide = RAW[dt.itemsize]

        def unpack(m, mask):
            v = np.asarray(r(m))
            for k, wk in enumerate(ws):
                wk(m, (v >> wide.type(8 * edt.itemsize * k)).astype(edt), mask)
        return unpack
    r = reader(s, dt, mod, ins.line)
    w = writer(d, mod, ins.line)
    return lambda m, mask: w(m, np.asarray(r(m)), mask)


def _cvt(ins, mod):
    if len(ins.types) < 2:
        raise _err(ins, "cvt needs destination and source types")
    dtn, stn = ins.types[0], ins.types[1]
    ddt, sdt = type_dtype(dtn), type_dtype(stn)
    if "bf16" in (dtn, stn) or "f16x2" in (dtn, stn) or "bf16x2" in (dtn, stn):
        raise _err(ins, f"cvt .{dtn}.{stn} is not implemented")
    r = reader(ins.srcs[0], sdt, mod, ins.line)
    w = writer(ins.dsts[0], mod, ins.line)
    mods = ins.mods
    irnd = next((x for x in ("rni", "rzi", "rmi", "rpi") if x in mods), None)
    frnd = next((x for x in ("rn", "rz", "rm", "rp") if x in mods), "rn")
    ftz = "ftz" in mods
    sat = "sat" in mods

    def fin(x):
        x = np.asarray(x)
        return fp.ftz(x) if ftz and x.dtype == np.float32 else x

    if ddt.kind == "f" and sdt.kind == "f":
        def f(a):
            a = fin(a)
            if irnd:
                v = fp.round_integral(a, irnd).astype(ddt)
            elif ddt == np.float32 and sdt == np.float64:
                v = fp.round_f64_to_f32(a, frnd)
            elif ddt.itemsize < sdt.itemsize:     # to f16: rounded in frnd
                v = fp.round_to_float(a, ddt, frnd)
            else:
                v = a.astype(ddt)
            v = fp.canonical_nan(fin(v)) if ddt == np.float32 else v
            return fp.sat(v) if sat else v
    elif ddt.kind == "f":  # int -> float
        def f(a):
            a = np.asarray(a)
            v = fp.round_to_float(a, ddt, frnd)
            return fp.sat(v) if sat else v
    elif sdt.kind == "f":  # float -> int, saturating
        mode = irnd or "rzi"
        nan = fp.nan_to_int(stn == "f64", ddt)

        def f(a):  # the result range is the destination type's, even in a wider register
            return fp.to_int(fin(a), mode, ddt, nan)
    else:  # int -> int: truncate or extend; .sat clamps to the destination range
        if sat:
            info = np.iinfo(ddt)

            def f(a):
                a = np.asarray(a)
                if a.dtype.kind == "u":
                    v = np.minimum(a.astype(np.uint64), np.uint64(max(info.max, 0)))
                    return v.astype(ddt)
                return np.clip(a.astype(np.int64), max(info.min, -2**63),
                               min(info.max, 2**63 - 1)).astype(ddt)
        else:
            def f(a):
                return np.asarray(a).astype(ddt)
    return lambda m, mask: w(m, f(r(m)), mask)


CONVERT = {"mov": _mov, "cvt": _cvt}
