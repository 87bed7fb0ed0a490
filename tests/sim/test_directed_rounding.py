"""Directed rounding (``.rz``, ``.rm``, ``.rp``) of ``fma``, ``add``, ``sub``, ``mul``, ``div``,
``rcp``, ``sqrt`` and ``cvt`` (64-bit integers to floats, floats to f16).

PTX ISA 9.7.3 (floating-point instructions): the rounding modifier rounds the
one result of the operation; for ``fma`` that is ``a*b + c`` computed exactly
and rounded once. The reference is exact rational arithmetic (``Fraction``)
rounded to the neighbouring float32/float64 in the mode, found by stepping
with ``np.nextafter``; nothing of warp_lab's ``sim.fp`` is used.

Found by an adversarial pass: ``fma.rz.f32`` was rounded to nearest, and
libdevice's ``fmodf`` (inlined by NVPTX with an ``fma.rz`` step) gave float32
``%`` off by a whole divisor when the quotient is large. A review found ``div``/``rcp``
``.f64``, ``sqrt`` (both widths), ``cvt`` from 64-bit integers and ``cvt`` to ``f16`` rounded
to nearest whatever the mode.
"""

from fractions import Fraction

import numpy as np
import pytest

from warp_lab import sim

KERNEL = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 pa, .param .u64 pb, .param .u64 pc)
{{
  .reg .b32 %r<4>;
  .reg .b64 %rd<16>;
  .reg .{t} %x<5>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [pa];
  ld.param.u64 %rd3, [pb];
  ld.param.u64 %rd4, [pc];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd5, %r1, {size};
  add.s64 %rd6, %rd2, %rd5;
  add.s64 %rd7, %rd3, %rd5;
  add.s64 %rd8, %rd4, %rd5;
  add.s64 %rd9, %rd1, %rd5;
  ld.global.{t} %x1, [%rd6];
  ld.global.{t} %x2, [%rd7];
  ld.global.{t} %x3, [%rd8];
  {op}
  st.global.{t} [%rd9], %x4;
  ret;
}}
"""

OPS = {
    "fma": ("fma.{mode}.{t} %x4, %x1, %x2, %x3;", lambda a, b, c: a * b + c),
    "add": ("add.{mode}.{t} %x4, %x1, %x2;", lambda a, b, c: a + b),
    "sub": ("sub.{mode}.{t} %x4, %x1, %x2;", lambda a, b, c: a - b),
    "mul": ("mul.{mode}.{t} %x4, %x1, %x2;", lambda a, b, c: a * b),
    "div": ("div.{mode}.{t} %x4, %x1, %x2;", lambda a, b, c: a / b),
    "rcp": ("rcp.{mode}.{t} %x4, %x1;", lambda a, b, c: 1 / a),
}


def _run(gpu, op, mode, dt, a, b, c):
    t = "f32" if dt == np.float32 else "f64"
    ptx = KERNEL.format(t=t, size=dt.itemsize, op=OPS[op][0].format(mode=mode, t=t))
    n = len(a)
    args = [gpu.put(np.zeros(n, dt))] + [gpu.put(np.asarray(v, dt)) for v in (a, b, c)]
    res = gpu.launch(ptx, "k", 1, n, args)
    assert not res.findings
    return gpu.get(args[0])


def _round(exact: Fraction, dt, mode):
    """``exact`` rounded to ``dt`` in ``mode``, by bracketing it between neighbours."""
    x = dt.type(float(exact))          # within one ulp of exact (double rounding at most)
    if Fraction(float(x)) == exact:
        return x
    if Fraction(float(x)) < exact:
        lo, hi = x, np.nextafter(x, dt.type(np.inf))
    else:
        lo, hi = np.nextafter(x, dt.type(-np.inf)), x
    assert Fraction(float(lo)) < exact < Fraction(float(hi))
    return {"rz": lo if exact > 0 else hi, "rm": lo, "rp": hi}[mode]


def _cases(dt, seed):
    """32 lanes of operands whose exact results are mostly not representable: mixed
    magnitudes, cancellation (a*b close to -c), and sub-normal-free ranges."""
    g = np.random.default_rng(seed)
    a = g.uniform(-4, 4, 32) * 2.0 ** g.integers(-20, 20, 32)
    b = g.uniform(-4, 4, 32) * 2.0 ** g.integers(-20, 20, 32)
    c = g.uniform(-4, 4, 32) * 2.0 ** g.integers(-30, 30, 32)
    a, b, c = (v.astype(dt) for v in (a, b, c))
    c[:8] = -(a[:8].astype(np.float64) * b[:8]).astype(dt)       # near-cancellation in fma
    a[8:10], b[8:10], c[8:10] = dt.type(1.0), dt.type(2.0 ** -30), dt.type(0)
    b[10], a[10] = -b[10], -a[10]
    return a, b, c


@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.float64)], ids=["f32", "f64"])
@pytest.mark.parametrize("mode", ["rz", "rm", "rp"])
@pytest.mark.parametrize("op", list(OPS))
def test_directed_rounding_matches_exact_arithmetic(gpu, op, mode, dt):
    a, b, c = _cases(dt, list(OPS).index(op) * 3 + ["rz", "rm", "rp"].index(mode))
    out = _run(gpu, op, mode, dt, a, b, c)
    f = OPS[op][1]
    inexact = 0
    for k in range(32):
        exact = f(Fraction(float(a[k])), Fraction(float(b[k])), Fraction(float(c[k])))
        if exact == 0:
            continue   # zero signs: test_exact_zero_sum_sign
        want = _round(exact, dt, mode)
        inexact += Fraction(float(want)) != exact
        assert out[k] == want, (op, mode, k, a[k], b[k], c[k], out[k], want)
    assert inexact >= 8      # the cases do exercise rounding


@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.float64)], ids=["f32", "f64"])
def test_fmod_style_fma_rz_of_a_large_quotient(gpu, dt):
    """The step of libdevice's fmodf that broke: ``fma.rz(-q, b, a)`` with q = a/b
    rounded, where a*b products need all their bits."""
    a = np.full(32, -2.0 ** 31, dt)
    b = np.full(32, 3.3, dt)
    q = np.trunc(a.astype(np.float64) / b.astype(np.float64)).astype(dt)
    out = _run(gpu, "fma", "rz", dt, -q, b, a)
    exact = -Fraction(float(q[0])) * Fraction(float(b[0])) + Fraction(float(a[0]))
    assert out[0] == _round(exact, dt, "rz")


@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.float64)], ids=["f32", "f64"])
def test_exact_zero_sum_sign(gpu, dt):
    """IEEE 754 6.3: x + (-x) is -0 when rounding toward -inf, +0 otherwise."""
    x = np.full(32, 3.0, dt)
    for mode, neg in (("rm", True), ("rz", False), ("rp", False)):
        out = _run(gpu, "add", mode, dt, x, -x, x)
        assert (out == 0).all() and bool(np.signbit(out).all()) == neg, mode


@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.float64)], ids=["f32", "f64"])
def test_overflow_toward_zero_is_the_largest_finite(gpu, dt):
    big = np.finfo(dt).max
    a = np.full(32, big, dt)
    out = {mode: _run(gpu, "add", mode, dt, a, a, a)[0] for mode in ("rz", "rm", "rp")}
    assert out == {"rz": big, "rm": big, "rp": np.inf}
    out = {mode: _run(gpu, "mul", mode, dt, -a, a, a)[0] for mode in ("rz", "rm", "rp")}
    assert out == {"rz": -big, "rm": -np.inf, "rp": -big}


CONVERT = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 inp)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<8>;
  .reg .SRC %a;
  .reg .DST %d;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [inp];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 8;
  add.s64 %rd4, %rd2, %rd3;
  add.s64 %rd5, %rd1, %rd3;
  ld.global.SRC %a, [%rd4];
  OP %d, %a;
  st.global.DST [%rd5], %d;
  ret;
}
"""


def _convert(gpu, op, src, dst, values, out_dtype):
    """Run ``op %d, %a`` (``%a`` of type ``src`` loaded from ``values``, one 8-byte slot
    per lane) and return ``%d`` (type ``dst``) of each lane as ``out_dtype``."""
    ptx = CONVERT.replace("SRC", src).replace("DST", dst).replace("OP", op)
    slots = np.zeros(len(values), np.uint64)
    raw = np.ascontiguousarray(values)
    slots.view(np.uint8).reshape(len(values), 8)[:, :raw.itemsize] = raw.view(np.uint8).reshape(
        len(values), raw.itemsize)
    out, inp = gpu.put(np.zeros(len(values), np.uint64)), gpu.put(slots)
    assert not gpu.launch(ptx, "k", 1, len(values), [out, inp]).findings
    size = np.dtype(out_dtype).itemsize
    return gpu.get(out).view(np.uint8).reshape(-1, 8)[:, :size].copy().view(out_dtype)[:, 0]


@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.float64)], ids=["f32", "f64"])
@pytest.mark.parametrize("mode", ["rz", "rm", "rp"])
def test_sqrt_directed_rounding_brackets_the_exact_root(gpu, mode, dt):
    """``sqrt.{rz,rm,rp}``: the result ``r`` and its neighbour bracket the exact root
    (``r*r`` against ``a`` in rationals), on the side the mode asks for."""
    g = np.random.default_rng(11)
    a = (g.uniform(0.5, 4, 32) * 2.0 ** g.integers(-60, 60, 32)).astype(dt)
    a[0], a[1] = dt.type(4.0), dt.type(2.0)          # exact root, and an irrational one
    a[2] = dt.type(np.finfo(dt).smallest_subnormal * 7)
    t = "f32" if dt == np.float32 else "f64"
    out = _convert(gpu, f"sqrt.{mode}.{t}", t, t, a, dt)
    inexact = 0
    for k in range(32):
        x, r = Fraction(float(a[k])), out[k]
        if Fraction(float(r)) ** 2 == x:
            continue
        inexact += 1
        if mode == "rp":
            below = np.nextafter(r, dt.type(0))
            assert Fraction(float(below)) ** 2 < x < Fraction(float(r)) ** 2, (k, a[k], r)
        else:   # rz and rm agree for a positive root
            above = np.nextafter(r, dt.type(np.inf))
            assert Fraction(float(r)) ** 2 < x < Fraction(float(above)) ** 2, (k, a[k], r)
    assert out[0] == 2 and inexact >= 20


@pytest.mark.parametrize("src", ["s64", "u64"])
@pytest.mark.parametrize("dst", ["f32", "f64"])
@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_cvt_from_64_bit_integers_rounds_in_the_mode(gpu, mode, dst, src):
    """``cvt.{mode}.{f32,f64}.{s64,u64}``: integers that need more bits than the float has,
    rounded as the mode says (reference: Python ints, exact)."""
    g = np.random.default_rng(12)
    idt = np.dtype(np.int64 if src == "s64" else np.uint64)
    fdt = np.dtype(np.float32 if dst == "f32" else np.float64)
    v = g.integers(np.iinfo(idt).min, np.iinfo(idt).max, 32, dtype=idt, endpoint=True) | 1
    v[0], v[1] = np.iinfo(idt).max, (1 << 60) + 1      # 2**64-1 or 2**63-1; just above 2**60
    out = _convert(gpu, f"cvt.{mode}.{dst}.{src}", src, dst, v, fdt)
    for k in range(32):
        exact = Fraction(int(v[k]))
        want = fdt.type(float(exact)) if mode == "rn" else _round(exact, fdt, mode)
        assert out[k] == want, (k, int(v[k]), out[k], want)


@pytest.mark.parametrize("mode", ["rz", "rm", "rp"])
def test_cvt_f32_to_f16_rounds_in_the_mode(gpu, mode):
    """``cvt.{rz,rm,rp}.f16.f32``, overflow included: past 65504 only ``rp`` (positive) and
    ``rm`` (negative) give an infinity (IEEE 754 7.4)."""
    g = np.random.default_rng(13)
    a = (g.standard_normal(32) * 10.0 ** g.integers(-6, 5, 32)).astype(np.float32)
    a[:3] = [70000.0, -70000.0, 3.0]
    out = _convert(gpu, f"cvt.{mode}.f16.f32", "f32", "f16", a, np.float16)
    f16 = np.dtype(np.float16)
    inexact = 0
    for k in range(32):
        if abs(a[k]) > 65504:
            inf = (mode == "rp" and a[k] > 0) or (mode == "rm" and a[k] < 0)
            assert out[k] == np.copysign(np.inf if inf else 65504.0, a[k]), (k, a[k], out[k])
            continue
        want = _round(Fraction(float(a[k])), f16, mode)
        inexact += Fraction(float(want)) != Fraction(float(a[k]))
        assert out[k] == want, (k, a[k], out[k], want)
    assert inexact >= 20
