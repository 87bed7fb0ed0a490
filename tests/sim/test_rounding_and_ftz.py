"""Rounding to an integral value and fast math's flush-to-zero, on the simulator against numpy.

``wl.round`` is CUDA's ``roundf``/``round``: halfway cases away from zero (CUDA C++
Programming Guide, "Mathematical Functions"); Python's ``round`` and ``wl.rint`` round them
to even. ``fast_math=True`` is nvcc's ``--use_fast_math``, which implies ``-ftz=true``:
float32 subnormal inputs and results are flushed to zero of the same sign (PTX ISA 9.7.3,
"Floating-Point Instructions": ``.ftz``)."""

import re

import numpy as np
import pytest

import warp_lab as wl


@wl.kernel
def rounding(a: wl.array(dtype=wl.float32), d: wl.array(dtype=wl.float64),
             o: wl.array2d(dtype=wl.float32), od: wl.array2d(dtype=wl.float64)):
    i = wl.tid()
    o[0, i] = wl.round(a[i])
    o[1, i] = round(a[i])
    o[2, i] = wl.rint(a[i])
    od[0, i] = wl.round(d[i])
    od[1, i] = round(d[i])
    od[2, i] = wl.rint(d[i])


HALFWAY = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1048576.5, -3.5, 4.5]
# the largest float below 0.5: adding 0.5 and truncating (a classic roundf bug) gives 1
TRICKY = [np.nextafter(np.float32(0.5), np.float32(0)), 8388609.0, 1e30, -0.0, np.inf, np.nan]


def _away(v):
    """Halfway cases away from zero: the truncation, one further when the part cut off is
    at least a half (exact: no ``|v| + 0.5``, which rounds up just below a half)."""
    with np.errstate(invalid="ignore"):
        t = np.trunc(v)
        return np.where(np.abs(v - t) >= 0.5, t + np.sign(v), t).astype(v.dtype)


@pytest.mark.parametrize("opt", [0, 3])
def test_round_is_away_from_zero_and_python_round_is_to_even(opt):
    a = np.array(HALFWAY + TRICKY, np.float32)
    d = np.array(HALFWAY + [np.nextafter(0.5, 0.0)] + TRICKY[1:], np.float64)
    o, od = np.zeros((3, a.size), np.float32), np.zeros((3, d.size))
    r = wl.launch(rounding, dim=a.size, inputs=[a, d, o, od], device="sim", opt=opt)
    assert not r.findings
    np.testing.assert_array_equal(o[0], _away(a).astype(np.float32))
    np.testing.assert_array_equal(o[1], np.rint(a))
    np.testing.assert_array_equal(o[2], np.rint(a))
    np.testing.assert_array_equal(od[0], _away(d))
    np.testing.assert_array_equal(od[1], np.rint(d))
    np.testing.assert_array_equal(od[2], np.rint(d))


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90"])
def test_round_assembles(arch):
    ck = wl.compile(rounding, arch=arch, cache=False, sass=False)
    assert ck.cubin and ck.resources.spill_stores == 0


@wl.kernel
def arith(a: wl.array(dtype=wl.float32), b: wl.array(dtype=wl.float32),
          o: wl.array2d(dtype=wl.float32), gt: wl.array(dtype=wl.int32)):
    i = wl.tid()
    x = a[i]
    y = b[i]
    o[0, i] = x * y
    o[1, i] = x + y
    o[2, i] = x - y
    o[3, i] = x / y
    o[4, i] = wl.sqrt(x)
    o[5, i] = wl.fma(x, y, y)
    o[6, i] = min(x, y)
    o[7, i] = wl.erf(x)     # a libdevice body: inlined, and flushing as well
    gt[i] = 1 if x > 0.0 else 0


def _flush(v):
    v = np.asarray(v, np.float32)
    return np.where(np.abs(v) < np.finfo(np.float32).tiny, np.copysign(np.float32(0), v), v)


def _arith_ref(a, b, flush):
    """The kernel's results in float64 rounded once to float32, subnormals flushed or not."""
    f = _flush if flush else (lambda v: np.asarray(v, np.float32))
    x, y = f(a).astype(np.float64), f(b).astype(np.float64)
    erf = np.vectorize(__import__("math").erf)
    with np.errstate(all="ignore"):             # 2 / 1e-39 overflows float32: inf
        rows = [x * y, x + y, x - y, x / y, np.sqrt(x), x * y + y, np.minimum(x, y), erf(x)]
        return np.stack([f(r.astype(np.float32)) for r in rows]), (x > 0).astype(np.int32)


# subnormal inputs (1e-40, 3e-39), results that underflow (1e-20 * 1e-20), normal values
A = np.array([1e-40, -1e-40, 1e-20, 2.0, 1e-38, 3e-39, 0.75, -2.5], np.float32)
B = np.array([1.0, 1.0, 1e-20, 1e-39, 0.5, 4.0, 1.25, 0.5], np.float32)


@pytest.mark.parametrize("fast", [False, True])
def test_fast_math_flushes_float32_subnormals(fast):
    o, gt = np.zeros((8, A.size), np.float32), np.zeros(A.size, np.int32)
    wl.launch(arith, dim=A.size, inputs=[A, B, o, gt], device="sim", fast_math=fast)
    want, want_gt = _arith_ref(A, B, flush=fast)
    exact = [0, 1, 2, 5, 6]                     # mul add sub fma min: correctly rounded
    np.testing.assert_array_equal(o[exact], want[exact])
    np.testing.assert_array_equal(np.signbit(o[exact]), np.signbit(want[exact]))
    np.testing.assert_allclose(o[[3, 4, 7]], want[[3, 4, 7]], rtol=4 * 2.0 ** -23, atol=0)
    np.testing.assert_array_equal(gt, want_gt)  # setp.ftz sees 1e-40 as 0
    if fast:
        assert o[0, 2] == 0.0 and o[4, 0] == 0.0 and gt[0] == 0
    else:
        assert o[0, 2] > 0.0 and o[4, 0] > 0.0 and gt[0] == 1


def test_fast_math_ptx_has_ftz_on_every_float32_op_and_inlines_libdevice():
    fast = wl.compile(arith, arch="sm_90", cache=False, sass=False, fast_math=True).ptx
    strict = wl.compile(arith, arch="sm_90", cache=False, sass=False).ptx
    body = fast[fast.index("{"):]
    ops = re.findall(r"^\s+((?:mul|add|sub|div|sqrt|fma|min|max|setp)[.\w]*\.f32)\s", body, re.M)
    assert ops and all(".ftz" in op for op in ops), ops
    assert "call" not in body                          # erf inlined under the same attribute
    assert not re.search(r"^\s+(?:mul|add|sub|div|fma)\.\w*\.?ftz", strict, re.M)


@wl.kernel
def ftz_examples(a: wl.array(dtype=wl.float32), o: wl.array(dtype=wl.float32),
                 gt: wl.array(dtype=wl.int32)):
    x = a[0]
    o[0] = x * 2.0
    o[1] = x * 1.0      # an identity: LLVM removes the multiply, nothing is flushed
    o[2] = x + 0.0
    gt[0] = 1 if x > 0.0 else 0


def test_fast_math_examples_of_the_language_reference():
    """docs/language.md's examples: ``x * 2.0`` of a run-time 1e-40 flushes (so does the
    compare), but ``x * 1.0`` and ``x + 0.0`` are identities LLVM removes, so x stays
    subnormal (the reference once said ``1e-40 * 1.0`` is 0.0)."""
    a = np.array([1e-40], np.float32)
    o, gt = np.zeros(3, np.float32), np.zeros(1, np.int32)
    wl.launch(ftz_examples, dim=1, inputs=[a, o, gt], device="sim", fast_math=True)
    assert o[0] == 0.0 and gt[0] == 0
    assert o[1] == a[0] and o[2] == a[0]
    ptx = wl.compile(ftz_examples, arch="sm_90", fast_math=True, sass=False).ptx
    assert "add.ftz.f32" in ptx or "mul.ftz.f32" in ptx      # x * 2.0 (as x + x)
    assert "setp.gt.ftz.f32" in ptx


STAR_MODULE = '''
import warp_lab as wl
from warp_lab import *


@wl.kernel
def star_round(x: wl.array(dtype=wl.float32), o: wl.array2d(dtype=wl.float32)):
    i = wl.tid()
    o[0, i] = round(x[i])
    o[1, i] = wl.round(x[i])
'''


def test_round_under_a_star_import_is_still_pythons(tmp_path, monkeypatch):
    """``from warp_lab import *`` binds ``round`` to ``wl.round``, whose host call is
    Python's round (so host code keeps working); in a kernel that ``round`` rounded
    halfway cases away from zero, contrary to the language reference (Python's
    ``round``: to even). The name ``round`` keeps Python's meaning; ``wl.round`` CUDA's."""
    import importlib

    (tmp_path / "wl_star_round.py").write_text(STAR_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("wl_star_round")
    assert mod.round is wl.round and mod.round(2.5) == 2      # the host call: Python's
    x = np.array(HALFWAY, np.float32)
    o = np.zeros((2, x.size), np.float32)
    wl.launch(mod.star_round, dim=x.size, inputs=[x, o], device="sim")
    np.testing.assert_array_equal(o[0], np.rint(x))
    np.testing.assert_array_equal(o[1], _away(x))


@wl.kernel
def zero_min_max(a: wl.array(dtype=wl.float32), b: wl.array(dtype=wl.float32),
                 o: wl.array2d(dtype=wl.float32)):
    i = wl.tid()
    o[0, i] = max(a[i], b[i])
    o[1, i] = min(a[i], b[i])


def _signed_zero_ref(a, b, big):
    """PTX ISA "max"/"min": NaN operands ignored, and "if values of both inputs are 0.0,
    then +0.0 > -0.0" (the operands' order does not matter)."""
    with np.errstate(invalid="ignore"):
        r = np.where(np.isnan(a), b, np.where(np.isnan(b), a,
                                               np.where(a > b, a, b) if big else
                                               np.where(a < b, a, b)))
        zeros = (a == 0) & (b == 0)
        neg = (np.signbit(a) & np.signbit(b)) if big else (np.signbit(a) | np.signbit(b))
        return np.where(zeros, np.where(neg, np.float32(-0.0), np.float32(0.0)), r)


@pytest.mark.parametrize("fast", [False, True])
def test_min_max_of_signed_zeros_follow_ptx(fast):
    """max(+0.0, -0.0) is +0.0 and min is -0.0 in either order; under fast math two
    subnormals of opposite signs flush to such zeros first. The simulator used numpy's
    fmax/fmin, which return one operand of equal ones by position (max(0.0, -0.0) gave
    -0.0)."""
    a = np.array([0.0, -0.0, -0.0, 0.0, 1e-40, -1e-40, np.nan, 2.0], np.float32)
    b = np.array([-0.0, 0.0, -0.0, 0.0, -1e-40, 1e-40, -0.0, np.nan], np.float32)
    o = np.full((2, a.size), 7.0, np.float32)
    wl.launch(zero_min_max, dim=a.size, inputs=[a, b, o], device="sim", fast_math=fast)
    f = _flush if fast else (lambda v: v)
    for row, big in ((0, True), (1, False)):
        want = f(_signed_zero_ref(f(a), f(b), big)).astype(np.float32)
        np.testing.assert_array_equal(o[row].view(np.uint32), want.view(np.uint32))


@wl.kernel
def atomic_subnormal(x: wl.array(dtype=wl.float32), g: wl.array(dtype=wl.float32),
                     o: wl.array(dtype=wl.float32)):
    i = wl.tid()
    s = wl.shared_array(4, wl.float32)
    if i < 4:
        s[i] = g[i]
    wl.syncthreads()
    wl.atomic_add(g, i % 4, x[i])
    wl.atomic_add(s, i % 4, x[i])
    wl.syncthreads()
    if i < 4:
        o[i] = s[i]


@pytest.mark.parametrize("fast", [False, True])
def test_float32_atomic_add_flushes_subnormals_in_global_memory_only(fast):
    """PTX ISA "atom": "atom.add.f32 ... without .noftz, flushes subnormal inputs and results
    to sign-preserving zero on global memory but supports subnormal inputs and results ...
    on shared memory" (with or without fast math). The simulator added subnormals in
    global memory too."""
    x = np.array([1e-40, 2e-40, 1e-40, 1.0] * 2, np.float32)
    g0 = np.array([0.0, 1e-39, -0.0, 2.0], np.float32)
    g, o = g0.copy(), np.zeros(4, np.float32)
    r = wl.launch(atomic_subnormal, dim=x.size, inputs=[x, g, o], device="sim",
                  fast_math=fast)
    assert not r.findings
    ptx = wl.compile(atomic_subnormal, arch="sm_90", sass=False, fast_math=fast).ptx
    assert "atom.global.add.f32" in ptx or "red.global.add.f32" in ptx
    gl, sh = g0.astype(np.float32).copy(), g0.astype(np.float32).copy()
    for i, v in enumerate(x):                  # lane order; each add rounded to float32
        k = i % 4
        gl[k] = _flush(_flush(gl[k]) + _flush(v))
        sh[k] = np.float32(sh[k] + v)
    np.testing.assert_array_equal(g.view(np.uint32), gl.view(np.uint32))
    np.testing.assert_array_equal(o.view(np.uint32), sh.view(np.uint32))
    assert g[0] == 0.0 and o[0] > 0.0     # 1e-40 + 1e-40: flushed in global, kept in shared


NAN = float("nan")


@wl.kernel
def folded_min_max(x: wl.array(dtype=wl.float32), o: wl.array2d(dtype=wl.float32)):
    o[0, 0] = min(NAN, 1.0)           # constants: folded by the front end
    o[0, 1] = wl.max(NAN, 1.0)
    o[0, 2] = max(-0.0, 0.0)
    o[0, 3] = min(0.0, -0.0)
    o[0, 4] = min(2.0, NAN, -1.0)
    o[1, 0] = min(x[0], 1.0)          # the same at run time (x = nan, 1, -0.0, 0.0, 2.0)
    o[1, 1] = wl.max(x[0], x[1])
    o[1, 2] = max(x[2], x[3])
    o[1, 3] = min(x[3], x[2])
    o[1, 4] = min(x[4], x[0], -1.0)


def test_folded_float_min_max_is_the_instructions():
    """A constant min/max folds to what the run-time instruction gives: a NaN operand
    ignored (language.md: ``min(nan, 0.0)`` is 0.0) and +0.0 > -0.0 (PTX ISA "min").
    Folding used Python's min/max, so ``min(NAN, 1.0)`` was NaN and ``max(-0.0, 0.0)``
    was -0.0."""
    x = np.array([np.nan, 1.0, -0.0, 0.0, 2.0], np.float32)
    o = np.zeros((2, 5), np.float32)
    wl.launch(folded_min_max, dim=1, inputs=[x, o], device="sim")
    want = np.array([1.0, 1.0, 0.0, -0.0, -1.0], np.float32)
    np.testing.assert_array_equal(o[1].view(np.uint32), want.view(np.uint32))
    np.testing.assert_array_equal(o[0].view(np.uint32), want.view(np.uint32))


@wl.kernel
def f64_f32(d: wl.array(dtype=wl.float64), f: wl.array(dtype=wl.float32),
            y: wl.array(dtype=wl.float32), w: wl.array(dtype=wl.float64)):
    i = wl.tid()
    y[i] = wl.float32(d[i])       # cvt.rn(.ftz).f32.f64
    w[i] = wl.float64(f[i])       # cvt(.ftz).f64.f32


TWIN_F64_F32 = """
extern "C" __global__ void f64_f32(const double* d, const float* f, float* y, double* w,
                                   int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { y[i] = (float)d[i]; w[i] = (double)f[i]; }
}
"""


def _nvrtc_ptx(source: str, options: list[str]) -> str:
    """PTX of a CUDA C++ source from NVRTC for sm_80, or a skip without the NVRTC wheel."""
    from benchmarks import peers

    try:
        peers.load_nvrtc()
    except peers.PeerUnavailable as exc:
        pytest.skip(f"NVRTC is not installed: {exc}")
    return peers.nvrtc_compile(source, "twin", "sm_80", options=options)


def _cvts(ptx: str) -> list[str]:
    return sorted(set(re.findall(r"^\s+(cvt\.[.\w]*f(?:32|64)\.f(?:32|64))\s", ptx, re.M)))


@pytest.mark.parametrize("fast", [False, True])
def test_f64_f32_conversions_are_nvcc_s_under_fast_math(fast):
    """nvcc's ``--use_fast_math`` (NVRTC here) narrows with ``cvt.rn.ftz.f32.f64`` and widens
    with ``cvt.ftz.f64.f32``; without it, ``cvt.rn.f32.f64`` and ``cvt.f64.f32``. warp_lab's
    PTX has the same forms."""
    nvcc = _nvrtc_ptx(TWIN_F64_F32, ["--use_fast_math"] if fast else [])
    ours = wl.compile(f64_f32, arch="sm_80", fast_math=fast, sass=False, cache=False).ptx
    want = ["cvt.ftz.f64.f32", "cvt.rn.ftz.f32.f64"] if fast else \
        ["cvt.f64.f32", "cvt.rn.f32.f64"]
    assert _cvts(nvcc) == want
    assert _cvts(ours) == want


def _same_bits(got, want) -> bool:
    """Equal bit patterns (so -0.0 is not 0.0), any NaN matching any NaN."""
    nan = np.isnan(want)
    u = np.uint32 if got.dtype == np.float32 else np.uint64
    return bool((np.isnan(got) == nan).all() and
                (got[~nan].view(u) == want[~nan].view(u)).all())


@pytest.mark.parametrize("fast", [False, True])
def test_f64_f32_conversions_flush_subnormal_float32_under_fast_math(fast):
    """PTX ISA 9.7.9.21 "cvt": ``.ftz`` flushes subnormal .f32 inputs and results to zero of
    the same sign; an .f64 input is not flushed (1e-39 narrows to a float32 subnormal,
    then that is flushed). numpy's conversion, then flushing, is the reference."""
    tiny = np.finfo(np.float32).tiny                       # 2**-126, the smallest normal
    d = np.array([1e-39, -1e-39, 2.0 ** -149, -(2.0 ** -149), 2.0 ** -127, float(tiny),
                  -float(tiny), 1e-300, -1e-300, 0.0, -0.0, 1.5, 3.0e38, 1e39, -np.inf,
                  np.nan], np.float64)
    f = np.array([1e-39, -1e-39, 1e-45, -1e-45, tiny / 2, tiny, -tiny, 0.0, -0.0, 1.5,
                  3.0e38, np.inf, -np.inf, np.nan, 6e-39, -6e-39], np.float32)
    y, w = np.zeros(d.size, np.float32), np.zeros(f.size)
    wl.launch(f64_f32, dim=d.size, inputs=[d, f, y, w], device="sim", fast_math=fast)
    with np.errstate(over="ignore"):
        want_y = d.astype(np.float32)                      # 1e39: inf, as cvt.rn gives
    want_w = f.astype(np.float64)
    subnormal_y = (np.abs(want_y) < tiny) & (want_y != 0)
    subnormal_f = (np.abs(f) < tiny) & (f != 0)
    assert subnormal_y.sum() == 5 and subnormal_f.sum() == 7    # the cases are there
    if fast:
        want_y = _flush(want_y)
        want_w = np.where(subnormal_f, np.copysign(0.0, f), want_w)
    assert _same_bits(y, want_y), (y, want_y)
    assert _same_bits(w, want_w), (w, want_w)
