"""The approximate instructions (``.approx``, ``div.full``) against the PTX ISA's special
cases, ``.ftz`` rules and stated error bounds (PTX ISA 9.7.3.8 "div", 9.7.3.13 "rcp",
9.7.3.14 "rcp.approx.ftz.f64", 9.7.3.15 "sqrt", 9.7.3.16 "rsqrt", 9.7.3.17
"rsqrt.approx.ftz.f64", 9.7.3.18 "sin", 9.7.3.19 "cos", 9.7.3.20 "lg2", 9.7.3.21 "ex2",
9.7.3.22 "tanh"). References are numpy in float64, never the simulator's own output;
no GPU here, so the simulator's values are checked against the documented bounds."""

import struct

import numpy as np
import pytest

from warp_lab import sim

_HEAD = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 pa, .param .u64 pb)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<12>;
  .reg .f32 %f<8>;
  .reg .f64 %fd<8>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [pa];
  ld.param.u64 %rd3, [pb];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mad.lo.u32 %r1, %r2, 256, %r1;
  mul.wide.u32 %rd4, %r1, {size};
  add.s64 %rd5, %rd1, %rd4;
  add.s64 %rd6, %rd2, %rd4;
  add.s64 %rd7, %rd3, %rd4;
"""
_F32 = """  ld.global.f32 %f1, [%rd6];
  ld.global.f32 %f2, [%rd7];
  {op} %f3, {args};
  st.global.f32 [%rd5], %f3;
  ret;
}}
"""
_F64 = """  ld.global.f64 %fd1, [%rd6];
  ld.global.f64 %fd2, [%rd7];
  {op} %fd3, {args};
  st.global.f64 [%rd5], %fd3;
  ret;
}}
"""


def run(gpu, op, a, b=None):
    """``op`` on each element of ``a`` (and ``b``), one thread per element."""
    a = np.asarray(a)
    wide = a.dtype == np.float64
    b = np.zeros_like(a) if b is None else np.asarray(b, a.dtype)
    n = a.size
    pad = -n % 256
    a, b = np.r_[a, np.ones(pad, a.dtype)], np.r_[b, np.ones(pad, a.dtype)]
    reg = "%fd" if wide else "%f"
    nargs = 2 if op.startswith("div") else 1
    args = ", ".join(f"{reg}{k}" for k in range(1, nargs + 1))
    ptx = (_HEAD.replace("{size}", "8" if wide else "4")
           + (_F64 if wide else _F32).format(op=op, args=args))
    out = gpu.put(np.zeros_like(a))
    pa, pb = gpu.put(a), gpu.put(b)
    res = sim.run(sim.parse_module(ptx), "k", a.size // 256, 256,
                  struct.pack("<QQQ", out, pa, pb), gpu.mem)
    assert res.findings == []
    return gpu.get(out)[:n]


def _ulps(got, want):
    """|got - want| in float32 ulps of ``want`` (float64 reference)."""
    want = np.asarray(want, np.float64)
    ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - want) / ulp


_RNG = np.random.default_rng(23)
_NORMALS = np.concatenate([
    _RNG.uniform(-4, 4, 400), np.exp2(_RNG.uniform(-120, 120, 400)) * _RNG.choice([-1, 1], 400),
]).astype(np.float32)
_POS = np.abs(_NORMALS)
_POS = _POS[_POS > 0]
_SUB = np.float32(2.0 ** -130)              # a float32 subnormal


# -- div -------------------------------------------------------------------------------

def test_div_approx_is_a_times_reciprocal_with_the_isas_zero_for_huge_divisors(gpu):
    """PTX ISA 9.7.3.8: for 2^126 < |b| < 2^128 ``div.approx.f32`` returns a sign-preserving
    zero, or NaN if a is infinity. 2^100 / 2^127 is +0.0 there (2^-27 exactly divided)."""
    a = np.array([2.0**100, -2.0**100, 1.0, np.inf, 3.0, -np.inf], np.float32)
    b = np.array([2.0**127, 2.0**127, -2.0**126 * 1.5, 2.0**127, 3e38, -2.0**127], np.float32)
    got = run(gpu, "div.approx.f32", a, b)
    assert got[0] == 0 and not np.signbit(got[0])
    assert got[1] == 0 and np.signbit(got[1])
    assert got[2] == 0 and np.signbit(got[2])
    assert np.isnan(got[3]) and got[4] == 0 and np.isnan(got[5])


def test_div_approx_and_full_are_within_2_ulp(gpu):
    """PTX ISA 9.7.3.8: ``div.approx.f32`` within 2 ulp for |b| in [2^-126, 2^126];
    ``div.full.f32`` within 2 ulp across the full range (also past 2^126)."""
    a = _NORMALS
    b = np.roll(_NORMALS, 7)
    ok = (np.abs(b) >= 2.0**-126) & (np.abs(b) <= 2.0**126)
    want = a.astype(np.float64) / b.astype(np.float64)
    ok &= (np.abs(want) > 2.0**-126) & (np.abs(want) < 3e38)
    assert _ulps(run(gpu, "div.approx.f32", a, b)[ok], want[ok]).max() <= 2
    big = np.array([2.0**127, -2.0**127.5, 3e38], np.float32)
    a2, b2 = np.r_[a[ok], np.float32([2.0**100] * 3)], np.r_[b[ok], big]
    want2 = a2.astype(np.float64) / b2.astype(np.float64)
    got = run(gpu, "div.full.f32", a2, b2)
    assert _ulps(got, want2).max() <= 2
    assert got[-3] != 0                      # full range: 2^100 / 2^127 is 2^-27


def test_div_approx_ftz_flushes_subnormal_inputs_and_results(gpu):
    """``div.ftz.f32`` "flushes subnormal inputs and results to sign-preserving zero"."""
    a = np.array([_SUB, 1.0, -2.0**-120], np.float32)
    b = np.array([1.0, _SUB, 2.0**10], np.float32)
    got = run(gpu, "div.approx.ftz.f32", a, b)
    assert got[0] == 0 and np.isinf(got[1])              # 1 / (flushed 0) = inf
    assert got[2] == 0 and np.signbit(got[2])            # -2^-130: a subnormal result
    got = run(gpu, "div.approx.f32", a, np.float32([1.0, 2.0, 2.0**10]))
    assert got[0] == _SUB and got[2] == np.float32(-2.0**-130)   # without .ftz: kept


# -- unary approximations: special-case tables, then error bounds ----------------------

_SPECIAL = np.array([-np.inf, -0.0, 0.0, np.inf, np.nan], np.float32)
_TABLES = {
    # PTX ISA tables "Input | Result" for -Inf, -0.0, +0.0, +Inf, NaN
    "rcp.approx.f32": [-0.0, -np.inf, np.inf, 0.0, np.nan],
    "sqrt.approx.f32": [np.nan, -0.0, 0.0, np.inf, np.nan],
    "rsqrt.approx.f32": [np.nan, -np.inf, np.inf, 0.0, np.nan],
    "sin.approx.f32": [np.nan, -0.0, 0.0, np.nan, np.nan],
    "cos.approx.f32": [np.nan, 1.0, 1.0, np.nan, np.nan],
    "lg2.approx.f32": [np.nan, -np.inf, -np.inf, np.inf, np.nan],
    "ex2.approx.f32": [0.0, 1.0, 1.0, np.inf, np.nan],
    "tanh.approx.f32": [-1.0, -0.0, 0.0, 1.0, np.nan],
}


@pytest.mark.parametrize("op", sorted(_TABLES))
def test_special_cases_follow_the_isa_tables(gpu, op):
    got = run(gpu, op, _SPECIAL)
    want = np.array(_TABLES[op], np.float32)
    np.testing.assert_array_equal(got, want)                      # NaN == NaN here
    np.testing.assert_array_equal(np.signbit(got[~np.isnan(want)]),
                                  np.signbit(want[~np.isnan(want)]))
    # a negative normal input of sqrt/rsqrt/lg2 is NaN too ("-normal | NaN")
    if op.split(".")[0] in ("sqrt", "rsqrt", "lg2"):
        assert np.isnan(run(gpu, op, np.float32([-2.5]))).all()


def _rel(got, want):
    want = np.asarray(want, np.float64)
    return np.abs(got.astype(np.float64) - want) / np.abs(want)


def test_unary_approximations_are_within_the_isas_error_bounds(gpu):
    x = _POS
    assert _ulps(run(gpu, "rcp.approx.f32", x), 1.0 / x.astype(np.float64)).max() <= 1
    assert _rel(run(gpu, "sqrt.approx.f32", x), np.sqrt(x.astype(np.float64))).max() <= 2**-23
    assert _rel(run(gpu, "rsqrt.approx.f32", x),
                1 / np.sqrt(x.astype(np.float64))).max() <= 2**-22.9
    e = np.clip(_NORMALS, -120, 120)
    assert _ulps(run(gpu, "ex2.approx.f32", e), np.exp2(e.astype(np.float64))).max() <= 2
    lg = run(gpu, "lg2.approx.f32", x)
    near = (x > 0.5) & (x < 2)
    ref = np.log2(x.astype(np.float64))
    assert np.abs(lg[near] - ref[near]).max() <= 2**-22                 # absolute there
    assert _rel(lg[~near], ref[~near]).max() <= 2**-22                  # relative elsewhere
    for op, fn in (("sin", np.sin), ("cos", np.cos)):
        for lim, bound in ((2 * np.pi, 2**-20.5), (100 * np.pi, 2**-14.7)):
            t = np.linspace(-lim, lim, 997).astype(np.float32)
            err = np.abs(run(gpu, f"{op}.approx.f32", t) - fn(t.astype(np.float64)))
            assert err.max() <= bound, (op, lim)
    t = _NORMALS
    assert _rel(run(gpu, "tanh.approx.f32", t), np.tanh(t.astype(np.float64))).max() <= 2**-11


def test_ftz_flushes_subnormal_inputs_of_the_approximations(gpu):
    """``.ftz`` "flushes subnormal inputs and results to sign-preserving zero"; without it
    subnormals are supported (sm_20+), and ``tanh`` passes them through."""
    x = np.float32([_SUB, -_SUB])
    np.testing.assert_array_equal(run(gpu, "ex2.approx.ftz.f32", x), [1.0, 1.0])
    assert np.isinf(run(gpu, "lg2.approx.ftz.f32", x)[0])              # lg2(+0) = -inf
    np.testing.assert_array_equal(run(gpu, "rcp.approx.ftz.f32", x), [np.inf, -np.inf])
    assert np.isfinite(run(gpu, "lg2.approx.f32", x[:1])).all()         # -130 without .ftz
    np.testing.assert_array_equal(run(gpu, "tanh.approx.f32", x), x)
    # a result that is subnormal is flushed: rcp(2^127) = 2^-127
    assert run(gpu, "rcp.approx.ftz.f32", np.float32([2.0**127]))[0] == 0
    assert run(gpu, "rcp.approx.f32", np.float32([2.0**127]))[0] == np.float32(2.0**-127)


# -- the f64 gross approximations ------------------------------------------------------

def _hi_word(x):
    return (np.asarray(x, np.float64).view(np.uint64) >> np.uint64(32)).astype(np.uint32)


@pytest.mark.parametrize("op,fn", [("rcp.approx.ftz.f64", lambda v: 1 / v),
                                   ("rsqrt.approx.ftz.f64", lambda v: 1 / np.sqrt(v))])
def test_f64_gross_approximations_use_and_give_only_the_upper_word(gpu, op, fn):
    """PTX ISA 9.7.3.14/9.7.3.17: the reciprocal (square root) of ``a[63:32]`` only, placed
    in ``d[63:32]`` with ``d[31:0] = 0``; subnormal inputs give ±Inf, NaN gives
    ``0x7fffffff00000000``."""
    x = np.abs(_RNG.normal(size=200) * 10.0 ** _RNG.integers(-30, 30, 200)) + 1e-300
    got = run(gpu, op, x)
    assert (got.view(np.uint64) & np.uint64(0xFFFFFFFF)).max() == 0
    hi = (x.view(np.uint64) & np.uint64(0xFFFFFFFF00000000)).view(np.float64)
    # 20 mantissa bits kept: within 2^-19 of fn(upper word), far from fn(x)'s last bits
    assert _rel(got, fn(hi)).max() <= 2.0**-19
    sp = run(gpu, op, np.array([5e-324, -5e-324, np.nan, np.inf, 0.0]))
    assert sp[0] == np.inf and sp[1] == -np.inf and sp[3] == 0 and sp[4] == np.inf
    assert _hi_word(sp[2]) == 0x7FFFFFFF and sp[2:3].view(np.uint64)[0] & 0xFFFFFFFF == 0
