"""Property tests: random inputs through compiled arithmetic/bitwise kernels agree with
numpy (or exact rational arithmetic) bit for bit, on int32/uint32/int64/float32/float64."""

import functools
from fractions import Fraction

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from warp_lab import sim

from sim_helpers import Launcher, compile_ir, pack

N = 64
LL = {"int32": "i32", "uint32": "i32", "int64": "i64", "float32": "float", "float64": "double"}

INT_OPS = {
    "add": ("add", lambda a, b: a + b),
    "sub": ("sub", lambda a, b: a - b),
    "mul": ("mul", lambda a, b: a * b),
    "and": ("and", lambda a, b: a & b),
    "or": ("or", lambda a, b: a | b),
    "xor": ("xor", lambda a, b: a ^ b),
}
FLOAT_OPS = {
    "fadd": ("fadd", lambda a, b: a + b),
    "fsub": ("fsub", lambda a, b: a - b),
    "fmul": ("fmul", lambda a, b: a * b),
    "fdiv": ("fdiv", lambda a, b: a / b),
}


def _kernel(ty, body):
    t = LL[ty]
    return f"""
define ptx_kernel void @k(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c,
                          ptr addrspace(1) %out) {{
entry:
  %i = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i64 = zext i32 %i to i64
  %pa = getelementptr {t}, ptr addrspace(1) %a, i64 %i64
  %pb = getelementptr {t}, ptr addrspace(1) %b, i64 %i64
  %pc = getelementptr {t}, ptr addrspace(1) %c, i64 %i64
  %x = load {t}, ptr addrspace(1) %pa
  %y = load {t}, ptr addrspace(1) %pb
  %z = load {t}, ptr addrspace(1) %pc
{body}
  %po = getelementptr {t}, ptr addrspace(1) %out, i64 %i64
  store {t} %r, ptr addrspace(1) %po
  ret void
}}
declare float @llvm.fma.f32(float, float, float)
declare double @llvm.fma.f64(double, double, double)
"""


@functools.lru_cache(maxsize=None)
def _module(ty, body):
    return sim.parse_module(compile_ir(_kernel(ty, body)))


def _run(ty, body, a, b, c):
    g = Launcher()
    dt = np.dtype(ty)
    ptrs = [g.put(np.ascontiguousarray(v, dt)) for v in (a, b, c)]
    out = g.put(np.zeros(N, dt))
    mod = _module(ty, body)
    res = sim.run(mod, "k", 1, N, pack(mod, "k", ptrs + [out]), g.mem)
    assert res.findings == []
    return g.get(out)


def _ints(ty):
    return hnp.arrays(np.dtype(ty), N, elements=st.integers(np.iinfo(ty).min, np.iinfo(ty).max))


def _floats(ty):
    return hnp.arrays(np.dtype(ty), N, elements=st.floats(width=np.dtype(ty).itemsize * 8,
                                                          allow_nan=True, allow_infinity=True))


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype == np.float32:
        # the GPU's float32 NaN is canonical: 0x7fffffff whatever numpy's payload
        nan = np.isnan(want)
        assert (got.view(np.uint32)[nan] == 0x7FFFFFFF).all()
    if got.dtype.kind == "f":
        both_nan = np.isnan(got) & np.isnan(want)
        u = np.dtype(f"u{got.dtype.itemsize}")
        assert np.array_equal(np.where(both_nan, 0, got.view(u)), np.where(both_nan, 0, want.view(u)))
    else:
        np.testing.assert_array_equal(got, want)


SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@given(data=st.data(), ty=st.sampled_from(["int32", "uint32", "int64"]),
       op=st.sampled_from(sorted(INT_OPS)))
def test_integer_binary_ops_wrap_like_numpy(data, ty, op):
    a, b = data.draw(_ints(ty)), data.draw(_ints(ty))
    llop, ref = INT_OPS[op]
    got = _run(ty, f"  %r = {llop} {LL[ty]} %x, %y", a, b, a)
    with np.errstate(all="ignore"):
        _same_bits(got, ref(a, b))


@SETTINGS
@given(data=st.data(), ty=st.sampled_from(["int32", "uint32", "int64"]),
       op=st.sampled_from(["shl", "lshr", "ashr", "udiv", "sdiv", "urem", "srem", "min", "max"]))
def test_integer_shifts_divisions_minmax(data, ty, op):
    dt = np.dtype(ty)
    bits = 8 * dt.itemsize
    t = LL[ty]
    a, b = data.draw(_ints(ty)), data.draw(_ints(ty))
    ua, ub = a.astype(f"u{dt.itemsize}"), b.astype(f"u{dt.itemsize}")
    sa, sb = ua.view(f"i{dt.itemsize}"), ub.view(f"i{dt.itemsize}")
    if op in ("shl", "lshr", "ashr"):
        ub = ub % np.array(bits, ub.dtype)
        b = ub.view(dt)
        body = f"  %r = {op} {t} %x, %y"
        ref = {"shl": ua << ub, "lshr": ua >> ub, "ashr": (sa >> ub.astype(sa.dtype)).view(ua.dtype)}[op]
    elif op in ("udiv", "urem"):
        ub = np.where(ub == 0, 1, ub).astype(ub.dtype)
        b = ub.view(dt)
        body = f"  %r = {op} {t} %x, %y"
        ref = ua // ub if op == "udiv" else ua % ub
    elif op in ("sdiv", "srem"):
        sb = np.where((sb == 0) | (sb == -1), 3, sb).astype(sb.dtype)
        b = sb.view(dt)
        body = f"  %r = {op} {t} %x, %y"
        # C semantics: the quotient truncates toward zero, the remainder takes x's sign
        qs = [_cdiv(int(x), int(y)) for x, y in zip(sa, sb)]
        ref = np.array([q if op == "sdiv" else int(x) - q * int(y)
                        for q, x, y in zip(qs, sa, sb)], dtype=sa.dtype).view(ua.dtype)
    else:
        cmp = "slt" if op == "min" else "sgt"
        body = f"  %cc = icmp {cmp} {t} %x, %y\n  %r = select i1 %cc, {t} %x, {t} %y"
        ref = (np.minimum(sa, sb) if op == "min" else np.maximum(sa, sb)).view(ua.dtype)
    got = _run(ty, body, a, b, a)
    with np.errstate(all="ignore"):
        _same_bits(got.view(ua.dtype), ref)


def _cdiv(x, y):
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


@SETTINGS
@given(data=st.data(), ty=st.sampled_from(["float32", "float64"]),
       op=st.sampled_from(sorted(FLOAT_OPS)))
def test_float_ops_are_ieee_round_to_nearest(data, ty, op):
    a, b = data.draw(_floats(ty)), data.draw(_floats(ty))
    llop, ref = FLOAT_OPS[op]
    got = _run(ty, f"  %r = {llop} {LL[ty]} %x, %y", a, b, a)
    with np.errstate(all="ignore"):
        _same_bits(got, ref(a, b))


def _round_exact(fr: Fraction, dt) -> float:
    """Correctly rounded (nearest, ties to even) value of the rational ``fr`` in ``dt``."""
    r = dt.type(float(fr))
    best = None
    for cand in (np.nextafter(r, dt.type(-np.inf)), r, np.nextafter(r, dt.type(np.inf))):
        if not np.isfinite(cand):
            continue
        err = abs(Fraction(float(cand)) - fr)
        even = int(np.array(cand).view(f"u{dt.itemsize}")) % 2 == 0
        key = (err, not even)
        if best is None or key < best[0]:
            best = (key, cand)
    return best[1]


def _fma_ref(x, y, z, dt):
    exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
    if exact == 0:
        # IEEE 754 sign of an exact zero: (+-0) + (+-0) keeps a common sign, x - x is +0
        if x == 0 or y == 0:
            return dt.type(dt.type(x) * dt.type(y) + dt.type(z))
        return dt.type(0.0)
    return _round_exact(exact, dt)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), ty=st.sampled_from(["float32", "float64"]))
def test_fma_rounds_once(data, ty):
    dt = np.dtype(ty)
    w = dt.itemsize * 8
    lim = 2.0 ** (100 if w == 64 else 50)
    el = st.floats(width=w, min_value=-lim, max_value=lim, allow_nan=False, allow_infinity=False)
    a, b, c = (data.draw(hnp.arrays(dt, N, elements=el)) for _ in range(3))
    fn = "llvm.fma.f32" if ty == "float32" else "llvm.fma.f64"
    got = _run(ty, f"  %r = call {LL[ty]} @{fn}({LL[ty]} %x, {LL[ty]} %y, {LL[ty]} %z)", a, b, c)
    want = np.array([_fma_ref(x, y, z, dt) for x, y, z in zip(a, b, c)], dt)
    _same_bits(got, want)
