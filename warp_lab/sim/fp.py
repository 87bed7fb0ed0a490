"""Floating-point helpers with the exact semantics PTX specifies.

numpy computes float32 and float64 ``+ - * /`` and ``sqrt`` with IEEE
round-to-nearest-even, which is what PTX ``.rn`` means, so those are used
directly. This module adds what numpy lacks: fused multiply-add with one
rounding, directed rounding (``.rz``, ``.rm``, ``.rp``), subnormal flushing
(``.ftz``), saturation (``.sat``) and float → integer conversion with PTX's
clamping (PTX ISA "cvt": NaN converts to 0, out-of-range values saturate).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = ["fma", "directed", "ftz", "sat", "signed_zeros", "canonical_nan", "round_f64_to_f32",
           "nan_to_int", "to_int", "div_approx_f32", "gross_f64", "round_integral", "div_directed", "sqrt_directed", "round_to_float"]

_F32_TINY = np.float32(np.finfo(np.float32).tiny)
_F64_TINY = np.float64(np.finfo(np.float64).tiny)


def ftz(x):
    """Flush subnormals to zero of the same sign (``.ftz``; f32 only in PTX)."""
    tiny = _F32_TINY if x.dtype == np.float32 else _F64_TINY
    return np.where(np.abs(x) < tiny, np.copysign(np.zeros((), x.dtype), x), x)


def signed_zeros(fn, big: bool):
    """``fn`` (numpy's float max or min: ``big`` says which, a callable ``(a, b)``) with
    PTX's rule for two zeros: "if values of both inputs are 0.0, then +0.0 > -0.0" (PTX
    ISA "max", "min"; ``atom.min/max`` are the same operations). numpy returns one of
    two equal operands by position, so ``np.fmax(0.0, -0.0)`` is -0.0."""
    def minmax(a, b):
        r = fn(a, b)
        zeros = (a == 0) & (b == 0)
        if not np.any(zeros):
            return r
        # max is -0.0 only when both are; min is -0.0 when either is
        neg = np.signbit(a) & np.signbit(b) if big else np.signbit(a) | np.signbit(b)
        zero = r.dtype.type
        return np.where(zeros, np.where(neg, zero(-0.0), zero(0.0)), r).astype(r.dtype)
    return minmax


_CANON_F32 = np.uint32(0x7FFFFFFF).view(np.float32)


def div_approx_f32(a, b):
    """``div.approx.f32`` (PTX ISA 9.7.3.8 "div"): "computed as d = a * (1/b)"; for |b| in
    [2^-126, 2^126] within 2 ulp, and "for 2^126 < |b| < 2^128, if a is infinity,
    div.approx.f32 returns NaN, otherwise it returns a sign-preserving zero" — the
    reciprocal there is subnormal and is flushed. Here 1/b is rounded to float32 (as
    ``rcp.approx.f32``, within its 1 ulp), flushed when subnormal, and multiplied by ``a``
    in float32: at most ~1.5 ulp from a / b in the 2-ulp range, and the ISA's zero or NaN
    past it (2^100 / 2^127 is +0.0, not 2^-27)."""
    a = np.asarray(a, np.float32)
    with np.errstate(all="ignore"):
        r = (1.0 / np.asarray(b, np.float32).astype(np.float64)).astype(np.float32)
        r = np.where(np.abs(r) < _F32_TINY, np.copysign(np.float32(0), r), r)
        return (a * r).astype(np.float32)


_HI_WORD = np.uint64(0xFFFFFFFF00000000)
_CANON_F64_GROSS = np.uint64(0x7FFFFFFF00000000)


def gross_f64(a, fn):
    """``rcp.approx.ftz.f64`` / ``rsqrt.approx.ftz.f64`` (PTX ISA 9.7.3.14, 9.7.3.17): ``fn``
    (``1/x`` or ``1/sqrt(x)``) of the upper word of ``a`` only ("ignore the
    least-significant 32 bits of a"), the result's upper word kept and its low 32 bits
    zeroed; subnormal inputs and results flushed to sign-preserving zero (so a subnormal
    gives ±Inf), a NaN gives the canonical ``0x7fffffff00000000``. The upper word is
    truncated, one of the values "a fast, gross approximation" allows."""
    a = np.asarray(a, np.float64)
    with np.errstate(all="ignore"):
        hi = (a.view(np.uint64) & _HI_WORD).view(np.float64)
        hi = ftz(hi)
        r = ftz(np.asarray(fn(hi), np.float64))
        bits = r.view(np.uint64) & _HI_WORD
        bits = np.where(np.isnan(r), _CANON_F64_GROSS, bits)
        return bits.astype(np.uint64).view(np.float64)


def canonical_nan(x):
    """Replace float32 NaNs by the GPU's canonical NaN (0x7fffffff)."""
    if x.dtype != np.float32:
        return x
    nan = np.isnan(x)
    if np.ndim(x) == 0:
        return _CANON_F32 if nan else x
    return np.where(nan, _CANON_F32, x) if nan.any() else x


def sat(x):
    """Clamp to [0.0, 1.0], NaN → 0.0 (``.sat`` on floating-point results)."""
    z = np.zeros((), x.dtype)
    return np.where(np.isnan(x), z, np.clip(x, z, np.ones((), x.dtype)))


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _round_odd_sum(a, b):
    """a + b in float64 rounded to odd (sticky bit kept in the last place)."""
    s, e = _two_sum(a, b)
    bits = s.view(np.uint64)
    fix = (e != 0) & ((bits & np.uint64(1)) == 0) & np.isfinite(s)
    if np.any(fix):
        toward = np.where(e > 0, np.inf, -np.inf)
        s = np.where(fix, np.nextafter(s, toward), s)
    return s


def _split(a):
    c = a * 134217729.0  # 2**27 + 1 (Veltkamp splitting)
    hi = c - (c - a)
    return hi, a - hi


def _two_prod(a, b):
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def fma(a, b, c, mode: str = "rn"):
    """``a*b + c`` rounded once (``fma.rn``/``mad.rn``; ``.rz``/``.rm``/``.rp`` with ``mode``).

    float32: the product is exact in float64, the sum is rounded to odd in
    float64 and then to float32 in ``mode``, which is a correctly rounded result
    in every mode (Boldo & Melquiond, "Emulation of FMA and correctly rounded
    sums: proved algorithms using rounding to odd", IEEE TC 2008).
    float64: the product is split exactly (Dekker TwoProduct) and the three
    terms are summed with the same round-to-odd algorithm; a directed ``mode``
    moves the nearest result one ulp when the exact error points the other way
    (:func:`directed`). Non-finite inputs fall back to ``a*b + c``.
    """
    dt = np.result_type(a, b, c)
    with np.errstate(all="ignore"):
        if dt == np.float32 or dt == np.float16:
            p = np.asarray(a, np.float64) * np.asarray(b, np.float64)
            s = _round_odd_sum(p, np.asarray(c, np.float64))
            plain = p + np.asarray(c, np.float64)
            s = np.where(np.isfinite(s), s, plain)
            if mode == "rn" or dt == np.float16:
                return s.astype(dt)
            return round_f64_to_f32(s, mode)
        a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
        ph, pl = _two_prod(a, b)
        th, tl = _two_sum(c, ph)
        v = _round_odd_sum(tl, pl)
        z, e = _two_sum(th, v)
        finite = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
        # Dekker's product is exact only away from underflow and overflow; those lanes
        # (rare) are computed exactly with rationals
        aph = np.abs(ph)
        hard = finite & (((aph < 2.0 ** -960) & (a != 0) & (b != 0)) | (aph > 2.0 ** 1000) |
                         ~np.isfinite(z) | (np.abs(z) < 2.0 ** -960))
        out = np.where(finite, z, a * b + c)
        if mode != "rn":
            # exact - z: the error of th + v, else what rounding tl + pl to odd left out
            s1, e1 = _two_sum(tl, pl)
            err = np.where(e != 0, e, (s1 - v) + e1)
        if np.any(hard):
            out = np.array(out, np.float64, copy=True)
            if mode != "rn":
                err = np.array(np.broadcast_to(err, out.shape), np.float64, copy=True)
            flat = np.broadcast_arrays(out, a, b, c)
            o, aa, bb, cc = (np.ascontiguousarray(x).reshape(-1) for x in flat)
            er = err.reshape(-1) if mode != "rn" else None
            for k in np.flatnonzero(np.broadcast_to(hard, out.shape).reshape(-1)):
                o[k], rest = _fma_exact(float(aa[k]), float(bb[k]), float(cc[k]))
                if er is not None:
                    er[k] = rest
            out = o.reshape(out.shape)
        if mode == "rn":
            return out
        return directed(out, err, mode, finite)


def directed(r, err, mode: str, finite_inputs=True):
    """A round-to-nearest result ``r`` re-rounded in ``mode`` (``rz``, ``rm``, ``rp``).

    Args:
        r: float32/float64 array, the correctly rounded-to-nearest result.
        err: array of the same shape with the sign of ``exact - r`` (0 when exact).
        mode: ``rz`` (toward zero), ``rm`` (toward -inf), ``rp`` (toward +inf).
        finite_inputs: bool array, where the inputs were finite: an infinite ``r``
            there is an overflow, which ``rz`` (and ``rm``/``rp`` away from their
            infinity) turn into the largest finite value (IEEE 754 7.4).

    Returns:
        the directed result, same dtype.
    """
    r = np.asarray(r)
    err = np.asarray(err)
    big = np.finfo(r.dtype).max
    with np.errstate(all="ignore"):
        if mode == "rz":
            step, target = ((err < 0) & (r > 0)) | ((err > 0) & (r < 0)), 0.0
            over = np.isinf(r)
        elif mode == "rm":
            step, target = err < 0, -np.inf
            over = r == np.inf
        else:
            step, target = err > 0, np.inf
            over = r == -np.inf
        out = np.where(step & np.isfinite(r), np.nextafter(r, r.dtype.type(target)), r)
        out = np.where(over & finite_inputs, np.copysign(big, r), out)
    return out.astype(r.dtype)


def _fma_exact(a: float, b: float, c: float) -> tuple[float, float]:
    """Correctly rounded ``a*b + c`` for finite floats (CPython's int/int division rounds
    correctly, subnormals included; IEEE sign rules for an exact zero), and the sign
    of what the rounding left out (``exact - result``: -1.0, 0.0 or 1.0; 0.0 on overflow)."""
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        p = a * b  # exact zero product or cancellation: sign per IEEE 754 (RN: +0 unless both -0)
        return (p + c if (a == 0 or b == 0) else 0.0), 0.0
    try:
        r = exact.numerator / exact.denominator
    except OverflowError:
        return (float("inf") if exact > 0 else float("-inf")), 0.0
    if math.isinf(r):
        return r, 0.0
    rest = exact - Fraction(r)
    return r, float((rest > 0) - (rest < 0))


def round_f64_to_f32(x, mode: str):
    """float64 → float32 with rounding ``mode`` in ``rn``/``rz``/``rm``/``rp``."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        r = x.astype(np.float32)
        if mode == "rn":
            return r
        back = r.astype(np.float64)
        if mode == "rz":
            step = np.abs(back) > np.abs(x)
            target = np.float32(0)
        elif mode == "rm":
            step = back > x
            target = np.float32(-np.inf)
        else:
            step = back < x
            target = np.float32(np.inf)
        step &= np.isfinite(x)
        return np.where(step, np.nextafter(r, target), r).astype(np.float32)


def div_directed(a, b, mode: str):
    """float64 ``a / b`` rounded in ``mode`` (``rz``, ``rm``, ``rp``; PTX ISA "div":
    ``div.rz.f64`` etc. are IEEE 754 compliant).

    The nearest quotient ``q`` is moved one ulp when the exact quotient lies on the other
    side: the sign of ``a/b - q`` is that of the remainder ``a - q*b`` (computed by
    :func:`fma` with one rounding, which keeps its sign) times that of ``b``. Lanes whose
    remainder may underflow (a quotient below 2**-960) are done with rationals. A zero
    divisor gives an exact infinity, never the overflow that ``rz`` clamps.
    """
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    with np.errstate(all="ignore"):
        q = a / b
        err = np.sign(fma(-q, b, a)) * np.sign(b)
        err = _exact_sign_where(np.abs(q) < 2.0 ** -960, err, q,
                                lambda x, y: Fraction(x) / Fraction(y), a, b)
    return directed(q, err, mode, np.isfinite(a) & np.isfinite(b) & (b != 0))


def sqrt_directed(a, mode: str):
    """``sqrt(a)`` rounded in ``mode`` (``rz``, ``rm``, ``rp``) for float32 or float64
    ``a`` (PTX ISA "sqrt": ``sqrt.rz`` etc. are IEEE 754 compliant).

    float32: the float64 square root is rounded in ``mode`` (a float64 square root of a
    float32 never lands on a float32 unless it is exact, so nothing is lost). float64:
    the nearest root ``r`` is moved one ulp when ``a - r*r`` (by :func:`fma`) says the
    exact root lies on the other side; inputs below 2**-900 are done with rationals.
    """
    a = np.asarray(a)
    with np.errstate(all="ignore"):
        if a.dtype != np.float64:
            return round_f64_to_f32(np.sqrt(a.astype(np.float64)), mode).astype(a.dtype)
        r = np.sqrt(a)
        err = np.sign(fma(-r, r, a))
        err = _exact_sign_where((a > 0) & (a < 2.0 ** -900), err, r,
                                lambda x: Fraction(x), a, square=True)
    return directed(r, err, mode, np.isfinite(a))


def _exact_sign_where(hard, err, r, exact, *args, square=False):
    """``err`` with the lanes ``hard`` (bool array) replaced by the sign of ``exact(*args)
    - r`` (``exact(*args) - r*r`` when ``square``), computed with rationals."""
    hard = np.broadcast_to(hard, np.shape(err)) & np.isfinite(np.broadcast_to(r, np.shape(err)))
    if not hard.any():
        return err
    err = np.array(err, np.float64, copy=True)
    flat = [np.broadcast_to(v, err.shape) for v in (r, *args)]
    for k in zip(*np.nonzero(hard)):
        rk = Fraction(float(flat[0][k]))
        d = exact(*(float(v[k]) for v in flat[1:])) - (rk * rk if square else rk)
        err[k] = (d > 0) - (d < 0)
    return err


def round_to_float(a, dtype, mode: str):
    """Integers (int64/uint64 array) or floats converted to float ``dtype`` (float16,
    float32 or float64) rounded in ``mode`` (``rn``, ``rz``, ``rm``, ``rp``; PTX ISA
    "cvt": ``cvt.frnd.f32.s64`` etc.).

    numpy's conversion rounds to nearest; the sign of what it left out is computed
    exactly (an integer as two 32-bit halves, each exact in float64, so ``(high - r) +
    low`` has no rounding error; a float's difference is exact or keeps its sign), and
    :func:`directed` moves the result one ulp where the mode asks.
    """
    a = np.asarray(a)
    dtype = np.dtype(dtype)
    with np.errstate(all="ignore"):
        r = a.astype(dtype)
        if mode == "rn":
            return r
        rf = r.astype(np.float64)
        if a.dtype.kind in "iu":
            hi = ((a >> 32) << 32).astype(np.float64) if a.dtype.itemsize == 8 else 0.0
            lo = (a & 0xFFFFFFFF).astype(np.float64) if a.dtype.itemsize == 8 else \
                a.astype(np.float64)
            err = np.sign((hi - rf) + lo)
            finite = True
        else:
            err = np.sign(a.astype(np.float64) - rf)
            finite = np.isfinite(a)
    return directed(r, err, mode, finite)


def round_integral(x, mode: str):
    """Round to an integral value in the float type (``rni``, ``rzi``, ``rmi``, ``rpi``)."""
    return {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[mode](x)


def nan_to_int(src_f64: bool, dtype) -> int:
    """What a NaN converts to in a float → integer ``cvt`` into ``dtype``, from an f64
    source when ``src_f64`` (PTX ISA 9.7.9.21 "cvt", Integer Notes: "Zero if source is not
    .f64 and destination is not .s64, .u64. Otherwise 1 << (BitWidth(dst) - 1)
    corresponding to the value of (MAXINT >> 1) + 1 for unsigned type or MININT for signed
    type"): ``cvt.rzi.s32.f64`` of NaN is -2147483648, ``cvt.rzi.u32.f64`` 2147483648,
    ``cvt.rzi.s64.f32`` -2**63, ``cvt.rzi.s32.f32`` 0."""
    dt = np.dtype(dtype)
    if not src_f64 and dt.itemsize < 8:
        return 0
    return int(np.iinfo(dt).min) if dt.kind == "i" else 1 << (8 * dt.itemsize - 1)


def to_int(x, mode: str, dtype, nan: int = 0):
    """Float → integer ``dtype`` with rounding ``mode`` (``rni``/``rzi``/``rmi``/``rpi``).

    PTX ISA "cvt": float-to-integer conversions saturate to the destination
    range; NaN converts to ``nan`` (:func:`nan_to_int` gives the ISA's value).
    """
    info = np.iinfo(dtype)
    with np.errstate(all="ignore"):
        r = round_integral(np.asarray(x, np.float64), mode)
        r = np.where(np.isnan(r), float(nan), r)
        r = np.clip(r, float(info.min), float(info.max))
        if np.dtype(dtype).itemsize == 8:
            # 2**63 / 2**64 are not representable; clip in integer space
            big = r >= float(info.max)
            out = r.astype(np.float64)
            res = np.where(big, 0, out).astype(dtype)
            return np.where(big, info.max, res).astype(dtype)
        return r.astype(dtype)
