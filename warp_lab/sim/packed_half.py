"""Packed half (``.f16x2``), bfloat16 (``.bf16``) and packed bfloat16 (``.bf16x2``)
arithmetic: what NVRTC emits for CUDA's ``__half2``, ``__nv_bfloat16`` and
``__nv_bfloat162`` (``cuda_fp16.hpp`` / ``cuda_bf16.hpp`` inline PTX).

PTX ISA 9.7.4 "Half Precision Floating-Point Instructions" and 9.7.9.21 "cvt":

* a ``.f16x2``/``.bf16x2`` register holds two values, element ``.x`` in the lower 16
  bits and ``.y`` in the upper; an operation works on each element;
* ``add``/``sub``/``mul``/``fma`` round to nearest even (``.rn``, the only rounding);
  ``.ftz`` flushes subnormal inputs and results of ``.f16`` to sign-preserving zero,
  ``.sat`` clamps to [0, 1], ``.relu`` clamps negatives (and NaN) to 0... of ``fma``;
  a NaN result is the canonical NaN ``0x7fff``;
* ``min``/``max`` return the other operand for one NaN and the canonical NaN for two
  (``.NaN`` returns the canonical NaN if either is);
* ``cvt.rn.f16x2.f32 d, a, b`` and ``cvt.rn.bf16x2.f32 d, a, b`` put ``a`` in the upper
  half and ``b`` in the lower; ``cvt.{rn,rz}.bf16.f32`` rounds, ``cvt.f32.bf16`` is exact;
* ``setp.CmpOp.f16x2 p|q, a, b`` sets ``p`` from the lower elements and ``q`` from the
  upper; ``set.CmpOp.u32.f16x2`` writes 0xffff or 0 per element.

Values are computed in float64 (a product of two 11- or 8-bit significands, and a sum
with a third, is exact or rounds once far below half an ulp of the 16-bit result) and
rounded once to the 16-bit format: the GPU's bits.
"""

from __future__ import annotations

import numpy as np

from warp_lab.sim.alu import _compare
from warp_lab.sim.opbuild import _err
from warp_lab.sim.operands import reader, writer

__all__ = ["BUILDERS", "handles"]

_U16, _U32 = np.dtype(np.uint16), np.dtype(np.uint32)
_NAN = np.uint16(0x7FFF)
_PACKED = ("f16x2", "bf16", "bf16x2")


def handles(ins) -> bool:
    """Whether this module executes ``ins`` (a packed or bfloat16 type it implements)."""
    b = BUILDERS.get(ins.op)
    return b is not None and bool(set(ins.types) & set(_PACKED))


def _fmt(t: str) -> str:
    return "bf16" if t.startswith("bf16") else "f16"


def _decode(bits, fmt: str):
    """16-bit patterns (uint16 array) -> float64 values."""
    bits = np.asarray(bits, _U16)
    if fmt == "f16":
        return bits.view(np.float16).astype(np.float64)
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _f32_round_odd(x):
    """float64 -> float32, rounded to odd (truncate, set the last bit when inexact): a
    later rounding to a narrower format then rounds as once from ``x``."""
    with np.errstate(all="ignore"):
        r = x.astype(np.float32)
        back = r.astype(np.float64)
        over = np.isfinite(x) & (np.abs(back) > np.abs(x))
        r = np.where(over, np.nextafter(r, np.float32(0)), r)
        inexact = np.isfinite(x) & (r.astype(np.float64) != x)
        bits = r.view(np.uint32) | inexact.astype(np.uint32)
    return bits


def _encode(x, fmt: str, mode: str = "rn"):
    """float64 values -> 16-bit patterns, rounded in ``mode`` (``rn`` or ``rz``); NaN is
    the canonical 0x7fff."""
    x = np.asarray(x, np.float64)
    nan = np.isnan(x)
    with np.errstate(all="ignore"):
        if fmt == "f16":
            if mode == "rn":
                out = x.astype(np.float16).view(_U16)
            else:
                from warp_lab.sim import fp

                out = np.asarray(fp.round_to_float(x, np.float16, mode)).view(_U16)
        else:
            bits = _f32_round_odd(x).astype(np.uint64)
            if mode == "rn":
                lsb = (bits >> 16) & 1
                out = ((bits + 0x7FFF + lsb) >> 16).astype(_U16)
            else:   # rz: truncate (the round-to-odd bit never reaches bit 16)
                out = (bits >> 16).astype(_U16)
            # a finite value rounding past bf16's largest: rn -> inf (the add above does
            # it); rz keeps the largest finite 0x7f7f, which truncation gives
    return np.where(nan, _NAN, out).astype(_U16)


def _ftz(x, fmt: str):
    if fmt != "f16":
        return x
    tiny = np.abs(x) < 2.0 ** -14
    return np.where(tiny & (x != 0), np.copysign(0.0, x), x)


def _elements(ins, mod, k: int, t: str):
    """Readers of source ``k``'s element values: ``[lower, upper]`` for a packed type,
    ``[value]`` for ``bf16``; float64 arrays."""
    fmt = _fmt(t)
    if t.endswith("x2"):
        r = reader(ins.srcs[k], _U32, mod, ins.line)
        return (lambda m: _decode(np.asarray(r(m)) & 0xFFFF, fmt),
                lambda m: _decode(np.asarray(r(m)) >> 16, fmt))
    r = reader(ins.srcs[k], _U16, mod, ins.line)
    return (lambda m: _decode(r(m), fmt),)


def _store(ins, mod, t: str):
    """``w(m, values, mask)`` packing element results (float64 or uint16 patterns)."""
    w = writer(ins.dsts[0], mod, ins.line)
    if t.endswith("x2"):
        def put(m, parts, mask):
            lo, hi = (np.asarray(p, _U16).astype(_U32) for p in parts)
            w(m, lo | (hi << np.uint32(16)), mask)
        return put
    return lambda m, parts, mask: w(m, np.asarray(parts[0], _U16), mask)


_OPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b}


def _arith(ins, mod):
    t = next(x for x in ins.types if x in _PACKED)
    fmt = _fmt(t)
    n = 3 if ins.op in ("fma", "mad") else (1 if ins.op in ("neg", "abs") else 2)
    srcs = [_elements(ins, mod, k, t) for k in range(n)]
    put = _store(ins, mod, t)
    ftz, sat, relu = "ftz" in ins.mods, "sat" in ins.mods, "relu" in ins.mods
    nan_mode = "NaN" in ins.mods or "nan" in ins.mods
    if ins.op in _OPS:
        op = _OPS[ins.op]
    elif ins.op in ("fma", "mad"):
        def op(a, b, c):
            return a * b + c
    elif ins.op in ("min", "max"):
        pick = np.fmin if ins.op == "min" else np.fmax

        def op(a, b):
            r = pick(a, b)
            if nan_mode:
                r = np.where(np.isnan(a) | np.isnan(b), np.nan, r)
            return r
    elif ins.op in ("neg", "abs"):   # bitwise: the sign bit only, NaN payloads kept
        bit = np.uint16(0x8000)
        raw = (reader(ins.srcs[0], _U32, mod, ins.line) if t.endswith("x2")
               else reader(ins.srcs[0], _U16, mod, ins.line))

        def ex(m, mask):
            v = np.asarray(raw(m))
            parts = [(v & 0xFFFF).astype(_U16), (v >> 16).astype(_U16)] if t.endswith("x2") \
                else [v.astype(_U16)]
            parts = [(p ^ bit) if ins.op == "neg" else (p & np.uint16(0x7FFF)) for p in parts]
            put(m, parts, mask)
        return ex
    else:
        raise _err(ins, f"{ins.op} on .{t} is not implemented")

    def ex(m, mask):
        parts = []
        for e in range(len(srcs[0])):
            vals = [s[e](m) for s in srcs]
            if ftz:
                vals = [_ftz(v, fmt) for v in vals]
            with np.errstate(all="ignore"):
                r = np.asarray(op(*vals), np.float64)
            bits = _encode(r, fmt)
            if ftz or sat or relu:
                r = _decode(bits, fmt)
                if ftz:
                    r = _ftz(r, fmt)
                if sat:
                    r = np.where(np.isnan(r), 0.0, np.clip(r, 0.0, 1.0))
                if relu:
                    r = np.where(np.isnan(r), np.nan, np.maximum(r, 0.0))
                bits = _encode(r, fmt)
            parts.append(bits)
        put(m, parts, mask)
    return ex


def _cvt(ins, mod):
    dtn, stn = ins.types[0], ins.types[1]
    mode = "rz" if "rz" in ins.mods else "rn"
    w = writer(ins.dsts[0], mod, ins.line)
    if dtn in ("f16x2", "bf16x2") and stn == "f32":
        fmt = _fmt(dtn)
        ra = reader(ins.srcs[0], np.float32, mod, ins.line)
        rb = reader(ins.srcs[1], np.float32, mod, ins.line)
        relu = "relu" in ins.mods

        def conv(v):
            v = np.asarray(v, np.float64)
            return np.where(np.isnan(v), np.nan, np.maximum(v, 0.0)) if relu else v

        def ex(m, mask):
            hi = _encode(conv(ra(m)), fmt, mode).astype(_U32)
            lo = _encode(conv(rb(m)), fmt, mode).astype(_U32)
            w(m, lo | (hi << np.uint32(16)), mask)
        return ex
    if dtn == "bf16" and stn in ("f32", "f64", "f16"):
        r = reader(ins.srcs[0], {"f32": np.float32, "f64": np.float64,
                                 "f16": np.float16}[stn], mod, ins.line)
        return lambda m, mask: w(m, _encode(np.asarray(r(m), np.float64), "bf16", mode), mask)
    if stn == "bf16" and dtn in ("f32", "f64", "f16"):
        r = reader(ins.srcs[0], _U16, mod, ins.line)
        out = {"f32": np.float32, "f64": np.float64}.get(dtn)
        if out is not None:   # exact
            return lambda m, mask: w(m, _decode(r(m), "bf16").astype(out), mask)
        return lambda m, mask: w(m, _encode(_decode(r(m), "bf16"), "f16", mode).view(np.float16),
                                 mask)
    raise _err(ins, f"cvt .{dtn}.{stn} is not implemented")


def _setp(ins, mod):
    t = ins.types[-1]
    cmpf = _compare(ins.mods[0], np.dtype(np.float64))
    if cmpf is None:
        raise _err(ins, f"unknown comparison .{ins.mods[0]}")
    a, b = _elements(ins, mod, 0, t), _elements(ins, mod, 1, t)
    d = ins.dsts[0]
    if t.endswith("x2"):
        if d[0] != "pair":
            raise _err(ins, f"setp .{t} needs two predicates (p|q)")
        wp, wq = writer(d[1], mod, ins.line), writer(d[2], mod, ins.line)

        def ex(m, mask):
            wp(m, np.asarray(cmpf(a[0](m), b[0](m))), mask)
            wq(m, np.asarray(cmpf(a[1](m), b[1](m))), mask)
        return ex
    if d[0] == "pair":   # p|q: q is the complement
        wp, wq = writer(d[1], mod, ins.line), writer(d[2], mod, ins.line)

        def ex2(m, mask):
            p = np.asarray(cmpf(a[0](m), b[0](m)))
            wp(m, p, mask)
            wq(m, ~p, mask)
        return ex2
    wp = writer(d, mod, ins.line)
    return lambda m, mask: wp(m, np.asarray(cmpf(a[0](m), b[0](m))), mask)


def _set(ins, mod):
    dtn, t = ins.types[0], ins.types[-1]
    cmpf = _compare(ins.mods[0], np.dtype(np.float64))
    if cmpf is None:
        raise _err(ins, f"unknown comparison .{ins.mods[0]}")
    a, b = _elements(ins, mod, 0, t), _elements(ins, mod, 1, t)
    if dtn in ("f16x2", "bf16x2"):   # 1.0 or 0.0 per element
        one = np.uint16(0x3C00 if dtn == "f16x2" else 0x3F80)
    else:
        one = np.uint16(0xFFFF)
    w = writer(ins.dsts[0], mod, ins.line)

    def ex(m, mask):
        parts = [np.where(cmpf(a[e](m), b[e](m)), one, np.uint16(0)).astype(_U32)
                 for e in range(len(a))]
        v = parts[0] | (parts[1] << np.uint32(16)) if len(parts) == 2 else parts[0]
        w(m, v, mask)
    return ex


#: opcode -> builder, for the types in ``_PACKED`` (``dispatch.build`` asks :func:`handles`)
BUILDERS = {"add": _arith, "sub": _arith, "mul": _arith, "fma": _arith, "min": _arith,
            "max": _arith, "neg": _arith, "abs": _arith, "cvt": _cvt, "setp": _setp,
            "set": _set}
