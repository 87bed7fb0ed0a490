"""``reversed(range(...))`` loops, ``wp.matrix_from_rows``/``matrix_from_cols``,
``wp.argmin``/``argmax``, ``wp.smooth_normalize`` and the ``wp.norm_*`` functions of
``warp/_src/math.py``, and ``wp.div_approx``: each against warp-lang 1.19's CPU device on the
same random inputs (and edge cases: empty ranges, negative and run-time steps, NaN and tied
components, zero vectors), bit for bit; a misuse of each is a located ``KernelCompileError``.
"""

from __future__ import annotations

import numpy as np
import pytest

import warp_lab as wl
from wpc_helpers import load_module

REVERSED = '''
import warp as wp

@wp.kernel
def sweep(starts: wp.array(dtype=wp.int32), ends: wp.array(dtype=wp.int32),
          steps: wp.array(dtype=wp.int32), counts: wp.array(dtype=wp.int32),
          values: wp.array2d(dtype=wp.int32)):
    t = wp.tid()
    c = wp.int32(0)
    for i in reversed(range(starts[t], ends[t], steps[t])):
        if c < values.shape[1]:
            values[t, c] = i
        c += 1
    counts[t] = c

@wp.kernel
def forms(n: int, out: wp.array2d(dtype=wp.int32)):
    c = int(0)
    for i in reversed(range(n)):
        out[0, c] = i
        c += 1
    c = int(0)
    for i in reversed(range(2, n)):
        out[1, c] = i
        c += 1
    c = int(0)
    for i in reversed(range(10, -1, -3)):
        out[2, c] = i
        c += 1
    c = int(0)
    for i in reversed(range(n, 0, 4)):      # empty
        out[3, c] = i
        c += 1
    out[3, 15] = c
    c = int(0)
    for i in reversed(range(-5, n, 2)):
        if i == 3:
            continue
        if i < -2:
            break
        out[4, c] = i
        c += 1
    c = int(0)
    for i in reversed(range(3)):
        for j in reversed(range(i, 3)):
            out[5, c] = i * 10 + j
            c += 1
'''


def _sweep_cases():
    cases = [(s, e, k) for s in range(-7, 8) for e in range(-7, 8) for k in range(-4, 5)
             if k != 0]
    cases += [(2**31 - 5, 2**31 - 1, 3), (-2**31 + 9, -2**31 + 1, -4)]   # near the int32 ends
    return np.array(cases, np.int32)


#: bounds where Warp's ``iter_reverse`` overflows ``int`` (its end, ``start - step``, leaves
#: int32: C's undefined behaviour, zero iterations on its CPU device); warp_lab gives Python's
FAR = np.array([(-2**31, 2**31 - 1, 2**30), (2**31 - 1, -2**31, -2**30),
                (-2**31, -2**31 + 7, 2), (-2**31 + 1, -2**31 + 9, 4)], np.int32)


def _run_reversed(m, mod):
    cases = _sweep_cases()
    n = len(cases)
    s, e, k = (m.array(np.ascontiguousarray(cases[:, j]), dtype=m.int32, device="cpu")
               for j in range(3))
    counts = m.zeros(n, dtype=m.int32, device="cpu")
    values = m.zeros((n, 12), dtype=m.int32, device="cpu")
    m.launch(mod.sweep, dim=n, inputs=[s, e, k, counts, values], device="cpu")
    out = m.zeros((6, 16), dtype=m.int32, device="cpu")
    m.launch(mod.forms, dim=1, inputs=[9, out], device="cpu")
    m.synchronize()
    return counts.numpy(), values.numpy(), out.numpy()


def test_reversed_range_loops_match_warp_cpu(tmp_path, warp_ref):
    """Every start/stop/step in [-7, 7] (empty ranges and negative steps among them), far
    int32 bounds, and the one-, two- and three-argument forms with constant steps, nested,
    with break and continue: the values and counts warp-lang's ``iter_reverse`` gives,
    which are Python's ``reversed(range(...))``."""
    ref = load_module(tmp_path / "ref_rev.py", REVERSED, "warp", "wpc_ref_vecmath_rev")
    lab = load_module(tmp_path / "lab_rev.py", REVERSED, "warp_lab.warp", "wpc_lab_vecmath_rev")
    import warp_lab.warp as wp

    want = _run_reversed(warp_ref, ref)
    got = _run_reversed(wp, lab)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    counts, values, _ = got
    for t, c in enumerate(_sweep_cases().tolist()):   # and Python's own order
        expect = list(reversed(range(*c)))
        assert counts[t] == len(expect), c
        assert values[t, :min(12, len(expect))].tolist() == expect[:12], c


def test_reversed_range_at_the_int32_ends_is_pythons():
    """Where Warp's ``start - step`` end overflows int32 (:data:`FAR`), warp_lab counts the
    trips as Python does (docs/language.md, the Warp namespace table)."""
    import warp_lab.warp as wp

    mod = load_module.__globals__["sys"].modules.get("wpc_lab_vecmath_rev")
    if mod is None:
        pytest.skip("needs test_reversed_range_loops_match_warp_cpu's module")
    n = len(FAR)
    s, e, k = (wp.array(np.ascontiguousarray(FAR[:, j]), dtype=wp.int32) for j in range(3))
    counts, values = wp.zeros(n, dtype=wp.int32), wp.zeros((n, 12), dtype=wp.int32)
    wp.launch(mod.sweep, dim=n, inputs=[s, e, k, counts, values], device="cpu")
    for t, c in enumerate(FAR.tolist()):
        expect = list(reversed(range(*c)))
        assert counts.numpy()[t] == len(expect) and \
            values.numpy()[t, :len(expect)].tolist() == expect, c


def test_reversed_range_in_a_wl_kernel_and_unsigned_counters():
    """``reversed`` is Python's in a ``@wl.kernel`` too, uint32 and int64 counters
    included (the simulator against Python's ``reversed(range(...))``)."""
    @wl.kernel
    def k(n: wl.uint32, big: wl.int64, out: wl.array2d(dtype=wl.int64)):
        c = 0
        for i in reversed(range(n)):
            out[0, c] = wl.int64(i)
            c += 1
        c = 0
        for j in reversed(range(big - 10, big, 3)):
            out[1, c] = j
            c += 1

    out = np.zeros((2, 8), np.int64)
    big = 2**62
    wl.launch(k, 1, [np.uint32(5), np.int64(big), out])
    assert out[0, :5].tolist() == list(reversed(range(5)))
    assert out[1, :4].tolist() == list(reversed(range(big - 10, big, 3)))


VECMATH = '''
import warp as wp

@wp.kernel
def vm(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), c: wp.array(dtype=wp.vec2d),
       rows: wp.array(dtype=wp.mat33), cols: wp.array(dtype=wp.mat33),
       rows32: wp.array(dtype=wp.types.matrix((3, 2), dtype=wp.float64)),
       cols23: wp.array(dtype=wp.types.matrix((2, 3), dtype=wp.float64)),
       idx: wp.array2d(dtype=wp.uint32), vecs: wp.array2d(dtype=wp.vec3),
       s: wp.array2d(dtype=float), m22: wp.array(dtype=wp.mat22), q: wp.array(dtype=wp.quat),
       ia: wp.array(dtype=wp.vec4i)):
    i = wp.tid()
    u = a[i]
    v = b[i]
    rows[i] = wp.matrix_from_rows(u, v, u + v)
    cols[i] = wp.matrix_from_cols(u, v, u - v)
    rows32[i] = wp.matrix_from_rows(c[i], c[i] * wp.float64(2.0), wp.vec2d(1.0, -1.0))
    cols23[i] = wp.matrix_from_cols(c[i], c[i] * wp.float64(2.0), wp.vec2d(1.0, -1.0))
    idx[i, 0] = wp.argmin(u)
    idx[i, 1] = wp.argmax(u)
    idx[i, 2] = wp.argmin(ia[i])
    idx[i, 3] = wp.argmax(ia[i])
    idx[i, 4] = wp.argmin(c[i])
    idx[i, 5] = wp.argmax(wp.vec4(u[0], v[1], u[2], v[0]))
    vecs[i, 0] = wp.smooth_normalize(u)
    vecs[i, 1] = wp.smooth_normalize(v, 0.25)
    vecs[i, 2] = wp.div_approx(u, v[0])
    s[i, 0] = wp.norm_l1(u)
    s[i, 1] = wp.norm_l2(u)
    s[i, 2] = wp.norm_huber(u)
    s[i, 3] = wp.norm_huber(v, 0.5)
    s[i, 4] = wp.norm_pseudo_huber(u)
    s[i, 5] = wp.norm_pseudo_huber(v, 0.3)
    s[i, 6] = wp.div_approx(u[0], v[1])
    s[i, 7] = float(wp.div_approx(c[i][0], c[i][1]))
    m22[i] = wp.div_approx(wp.mat22(u[0], u[1], v[0], v[1]), u[2])
    q[i] = wp.div_approx(wp.quat(u[0], u[1], u[2], v[0]), v[2])
'''


def _vecmath_inputs():
    g = np.random.default_rng(19)
    n = 64
    a = g.uniform(-2, 2, (n, 3)).astype(np.float32)
    b = g.uniform(-2, 2, (n, 3)).astype(np.float32)
    c = g.uniform(-3, 3, (n, 2))
    ia = g.integers(-3, 3, (n, 4)).astype(np.int32)     # ties: the first index wins
    a[0] = 0.0                                           # zero vectors: smooth_normalize 0
    b[1] = 0.0
    a[2] = [np.nan, 1.0, -1.0]                           # NaNs skipped by argmin/argmax
    a[3] = [1.0, np.nan, np.nan]
    a[4] = np.nan                                        # all NaN: index 0
    a[5] = [1.0, 1.0, 1.0]                               # ties
    a[6] = [-0.0, 0.0, -0.0]
    a[7] = [np.inf, -np.inf, 0.0]
    c[8] = [np.nan, 1.0]
    c[9] = [2.0, 2.0]
    b[10, 0] = 0.0                                       # division by zero: inf/nan
    return n, a, b, c, ia


def _run_vecmath(m, mod):
    n, a, b, c, ia = _vecmath_inputs()
    mat32 = m.types.matrix((3, 2), dtype=m.float64)
    mat23 = m.types.matrix((2, 3), dtype=m.float64)
    outs = [m.zeros(n, dtype=m.mat33), m.zeros(n, dtype=m.mat33), m.zeros(n, dtype=mat32),
            m.zeros(n, dtype=mat23), m.zeros((n, 6), dtype=m.uint32),
            m.zeros((n, 3), dtype=m.vec3), m.zeros((n, 8), dtype=m.float32),
            m.zeros(n, dtype=m.mat22), m.zeros(n, dtype=m.quat)]
    ins = [m.array(a, dtype=m.vec3, device="cpu"), m.array(b, dtype=m.vec3, device="cpu"),
           m.array(c, dtype=m.vec2d, device="cpu")]
    m.launch(mod.vm, dim=n, inputs=ins + outs + [m.array(ia, dtype=m.vec4i, device="cpu")],
             device="cpu")
    m.synchronize()
    return [o.numpy() for o in outs]


def test_vector_matrix_builtins_match_warp_cpu_bit_for_bit(tmp_path, warp_ref):
    """matrix_from_rows/cols (square float32 and non-square float64), argmin/argmax of
    float, int and float64 vectors with NaNs, ties, signed zeros and infinities,
    smooth_normalize and the four norms with default and given deltas (zero vectors
    among them), div_approx of scalars, vectors, matrices and quaternions: the same bits
    as warp-lang's CPU device (its float32 code is deterministic and uncontracted), NaNs
    compared as NaNs (their payload bits are the host's, not Warp's)."""
    ref = load_module(tmp_path / "ref_vm.py", VECMATH, "warp", "wpc_ref_vecmath_vm")
    lab = load_module(tmp_path / "lab_vm.py", VECMATH, "warp_lab.warp", "wpc_lab_vecmath_vm")
    import warp_lab.warp as wp

    want = _run_vecmath(warp_ref, ref)
    got = _run_vecmath(wp, lab)
    names = ("rows", "cols", "rows32", "cols23", "idx", "vecs", "s", "m22", "q")
    for name, g, w in zip(names, got, want):
        assert g.dtype == w.dtype, name
        if g.dtype.kind == "f":   # a NaN's payload is the platform's (x86: 0xffc00000)
            nan = np.isnan(w)
            np.testing.assert_array_equal(np.isnan(g), nan, err_msg=name)
            g, w = np.where(nan, 0, g), np.where(nan, 0, w)
        np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8), err_msg=name)
    idx = got[4]
    assert idx[2, :2].tolist() == [2, 1] and idx[3, :2].tolist() == [0, 0]
    assert idx[4, :2].tolist() == [0, 0] and idx[5, :2].tolist() == [0, 0]
    assert not got[5][0, 0].any()                        # smooth_normalize(0) == 0


def test_new_vector_builtins_are_in_wl_too():
    """matrix_from_rows/cols, argmin/argmax and div_approx are generic builtins: ``wl``
    has them under the same names (the simulator against numpy)."""
    @wl.kernel
    def k(a: wl.array(dtype=wl.vec3), m: wl.array(dtype=wl.mat33), i: wl.array(dtype=wl.uint32),
          d: wl.array(dtype=wl.vec3)):
        t = wl.tid()
        m[t] = wl.matrix_from_cols(a[t], a[t] * 2.0, wl.vec3(1.0, 2.0, 3.0))
        i[t] = wl.argmax(a[t]) * wl.uint32(10) + wl.argmin(a[t])
        d[t] = wl.div_approx(a[t], 4.0)

    a = np.array([[1, 5, -2], [0, 0, 0], [3, -1, 3]], np.float32)
    m, i, d = np.zeros((3, 3, 3), np.float32), np.zeros(3, np.uint32), np.zeros((3, 3), np.float32)
    wl.launch(k, 3, [a, m, i, d])
    np.testing.assert_array_equal(m, np.stack([a, 2 * a, np.tile([1, 2, 3], (3, 1))], axis=2))
    assert i.tolist() == [12, 0, 1] and d.tolist() == (a / 4).tolist()


@pytest.mark.parametrize("body, message, hint", [
    ("for i in reversed(a):\n        pass", r"reversed\(\) in a kernel takes one range",
     "reversed(range(a, b, s))"),
    ("x = wp.matrix_from_rows(wp.vec3(), wp.vec2())", "differ in length", "vectors of one type"),
    ("x = wp.matrix_from_cols(wp.vec3(), 1.0)", r"takes vectors, not float", "each a col"),
    ("x = wp.matrix_from_rows()", "at least one vector", "matrix_from_rows(v0, v1"),
    ("x = wp.argmin(1.0)", r"argmin\(\) needs a vector, not float", "min(a, b)"),
    ("x = wp.argmax(wp.vec3(), wp.vec3())", r"takes at most 1 argument", "argmax(v)"),
    ("x = wp.div_approx(wp.vec3(), wp.vec3())", "divides by a float", "div_approx(a, b)"),
    ("x = wp.div_approx(n, 2)", r"takes floats, not int32", "div_approx(a, b)"),
    ("x = wp.smooth_normalize(1.0)", "expects a float vector for 'v', got float", ""),
    ("x = wp.norm_l1(wp.vec3i())", "expects a float vector for 'v', got vec3i", ""),
])
def test_misuse_is_a_located_error_with_a_hint(tmp_path, body, message, hint):
    src = ("import warp as wp\n\n@wp.kernel\ndef bad(a: wp.array(dtype=float), n: int):\n"
           f"    {body}\n")
    lab = load_module(tmp_path / "lab_bad.py", src, "warp_lab.warp", "wpc_lab_vecmath_bad")
    with pytest.raises(wl.KernelCompileError, match=message) as info:
        wl.compile(lab.bad)
    assert ":5:" in str(info.value) or "line 5" in str(info.value), str(info.value)
    assert hint in str(info.value), str(info.value)


SHIFTS = '''
import warp as wp

mat22ui = wp.types.matrix((2, 2), dtype=wp.uint32)

@wp.kernel
def sh(a: wp.array(dtype=wp.vec3ui), b: wp.array(dtype=wp.vec3ui), c: wp.array(dtype=wp.vec4i),
       n: wp.array(dtype=wp.vec4i), out: wp.array2d(dtype=wp.vec3ui), outi: wp.array2d(dtype=wp.vec4i),
       m: wp.array(dtype=mat22ui)):
    i = wp.tid()
    out[i, 0] = a[i] << b[i]
    out[i, 1] = a[i] >> b[i]
    out[i, 2] = a[i] & b[i]
    out[i, 3] = a[i] | b[i]
    out[i, 4] = (a[i] ^ b[i]) & ~b[i]
    outi[i, 0] = c[i] << n[i]
    outi[i, 1] = c[i] >> n[i]
    x = mat22ui(a[i][0], a[i][1], a[i][2], b[i][0])
    y = mat22ui(b[i][1], b[i][2], b[i][0], b[i][1])
    m[i] = (x << y) ^ (x >> y) ^ ~x
'''


def _run_shifts(m, mod):
    g = np.random.default_rng(23)
    n = 32
    a = g.integers(0, 2**32, (n, 3), dtype=np.uint64).astype(np.uint32)
    b = g.integers(0, 32, (n, 3)).astype(np.uint32)        # counts below the width (C's rule)
    c = g.integers(-2**31, 2**31, (n, 4)).astype(np.int32)
    k = g.integers(0, 31, (n, 4)).astype(np.int32)
    mat22ui = m.types.matrix((2, 2), dtype=m.uint32)
    out, outi = m.zeros((n, 5), dtype=m.vec3ui), m.zeros((n, 2), dtype=m.vec4i)
    mm = m.zeros(n, dtype=mat22ui)
    m.launch(mod.sh, dim=n, inputs=[m.array(a, dtype=m.vec3ui), m.array(b, dtype=m.vec3ui),
                                    m.array(c, dtype=m.vec4i), m.array(k, dtype=m.vec4i),
                                    out, outi, mm], device="cpu")
    m.synchronize()
    return out.numpy(), outi.numpy(), mm.numpy()


def test_integer_vector_shifts_and_bit_operators_match_warp_cpu(tmp_path, warp_ref):
    """``<<``, ``>>``, ``&``, ``|``, ``^``, ``~`` of integer vectors and matrices per component
    (warp-lang 1.19's ``lshift``/``rshift``/``bit_*`` of vectors and matrices); ``>>`` of a
    signed vector is arithmetic; counts below the component width (C leaves wider ones
    undefined)."""
    ref = load_module(tmp_path / "ref_sh.py", SHIFTS, "warp", "wpc_ref_vecmath_sh")
    lab = load_module(tmp_path / "lab_sh.py", SHIFTS, "warp_lab.warp", "wpc_lab_vecmath_sh")
    import warp_lab.warp as wp

    for g, w in zip(_run_shifts(wp, lab), _run_shifts(warp_ref, ref)):
        np.testing.assert_array_equal(g, w)


def test_shift_of_float_vectors_is_a_located_error(tmp_path):
    src = ("import warp as wp\n\n@wp.kernel\ndef bad(a: wp.array(dtype=float), n: int):\n"
           "    x = wp.vec3(1.0) << wp.vec3(2.0)\n")
    lab = load_module(tmp_path / "lab_bad.py", src, "warp_lab.warp", "wpc_lab_vecmath_badsh")
    with pytest.raises(wl.KernelCompileError, match="unsupported operand types for <<: vec3 "
                       "and vec3") as info:
        wl.compile(lab.bad)
    assert ":5:" in str(info.value)


INVERSE = '''
import warp as wp

@wp.kernel
def inv(m2: wp.array(dtype=wp.mat22), m3: wp.array(dtype=wp.mat33), m4: wp.array(dtype=wp.mat44),
        d2: wp.array(dtype=wp.mat22d), d3: wp.array(dtype=wp.mat33d), d4: wp.array(dtype=wp.mat44d),
        o2: wp.array(dtype=wp.mat22), o3: wp.array(dtype=wp.mat33), o4: wp.array(dtype=wp.mat44),
        od2: wp.array(dtype=wp.mat22d), od3: wp.array(dtype=wp.mat33d),
        od4: wp.array(dtype=wp.mat44d), dets: wp.array2d(dtype=float),
        ddets: wp.array2d(dtype=wp.float64), approx: wp.array(dtype=wp.mat44)):
    i = wp.tid()
    o2[i] = wp.inverse(m2[i])
    o3[i] = wp.inverse(m3[i])
    o4[i] = wp.inverse(m4[i])
    od2[i] = wp.inverse_approx(d2[i])
    od3[i] = wp.inverse_approx(d3[i])
    od4[i] = wp.inverse(d4[i])
    approx[i] = wp.inverse_approx(m4[i])
    dets[i, 0] = wp.determinant(m2[i])
    dets[i, 1] = wp.determinant(m3[i])
    dets[i, 2] = wp.determinant(m4[i])
    ddets[i, 0] = wp.determinant(d2[i])
    ddets[i, 1] = wp.determinant(d3[i])
    ddets[i, 2] = wp.determinant(d4[i])
'''


def _run_inverse(m, mod):
    g = np.random.default_rng(29)
    n = 48
    f = [g.uniform(-2, 2, (n, k, k)).astype(np.float32) for k in (2, 3, 4)]
    d = [g.uniform(-2, 2, (n, k, k)) for k in (2, 3, 4)]
    for a in f + d:
        a[0] = 0.0                      # singular: the zero matrix
        a[1] = 1.0                      # singular, determinant exactly 0
        a[2] = np.eye(len(a[2])) * 1e-20
        a[3, 0, 0] = np.nan
        a[4, 0, 0] = np.inf
    types = (m.mat22, m.mat33, m.mat44, m.mat22d, m.mat33d, m.mat44d)
    ins = [m.array(a, dtype=t, device="cpu") for a, t in zip(f + d, types)]
    outs = [m.zeros(n, dtype=t, device="cpu") for t in types] + [
        m.zeros((n, 3), dtype=m.float32, device="cpu"),
        m.zeros((n, 3), dtype=m.float64, device="cpu"), m.zeros(n, dtype=m.mat44, device="cpu")]
    m.launch(mod.inv, dim=n, inputs=ins + outs, device="cpu")
    m.synchronize()
    return [o.numpy() for o in outs]


def test_inverse_and_determinant_match_warp_cpu_bit_for_bit(tmp_path, warp_ref):
    """``wp.inverse``, ``wp.inverse_approx`` (on Warp's CPU device the same code: its
    ``approx_rcp`` is ``1 / x`` there) and ``wp.determinant`` of 2x2, 3x3 and 4x4 float32
    and float64 matrices (mat.h's formulas, the 4x4 one with its double minors), singular,
    tiny, NaN and infinite ones among them: warp-lang's CPU device's bits (NaNs as NaNs)."""
    ref = load_module(tmp_path / "ref_inv.py", INVERSE, "warp", "wpc_ref_vecmath_inv")
    lab = load_module(tmp_path / "lab_inv.py", INVERSE, "warp_lab.warp", "wpc_lab_vecmath_inv")
    import warp_lab.warp as wp

    got, want = _run_inverse(wp, lab), _run_inverse(warp_ref, ref)
    for k, (g, w) in enumerate(zip(got, want)):
        nan = np.isnan(w)
        np.testing.assert_array_equal(np.isnan(g), nan, err_msg=str(k))
        g, w = np.where(nan, 0, g), np.where(nan, 0, w)
        np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8), err_msg=str(k))
    assert not got[0][0].any() and not got[2][1].any()      # singular: zeros


@pytest.mark.parametrize("body, message", [
    ("x = wp.inverse(wp.vec3())", r"no overload of inverse\(\) takes \(vec3\)"),
    ("x = wp.inverse_approx(1.0)", r"no overload of inverse\(\) takes \(float32\)"),
    ("x = wp.determinant(wp.matrix_from_rows(wp.vec3(), wp.vec3()))",
     r"no overload of determinant\(\) takes \(mat23_float32\)"),
])
def test_inverse_misuse_is_located(tmp_path, body, message):
    src = ("import warp as wp\n\n@wp.kernel\ndef bad(a: wp.array(dtype=float), n: int):\n"
           f"    {body}\n")
    lab = load_module(tmp_path / "lab_bad.py", src, "warp_lab.warp", "wpc_lab_vecmath_badinv")
    with pytest.raises(wl.KernelCompileError, match=message) as info:
        wl.compile(lab.bad)
    assert ":5:" in str(info.value) and "its overloads: inverse(m)" in str(info.value) or \
        "determinant(m)" in str(info.value)


BOOLS = '''
import warp as wp

vec3b = wp.types.vector(length=3, dtype=wp.bool)
vec2b = wp.types.vector(length=2, dtype=bool)
mat22b = wp.types.matrix((2, 2), dtype=wp.bool)
SEL = wp.constant(vec3b([True, False, True]))
SELM = wp.constant(mat22b([True, False, False, True]))
SCALE = wp.constant(wp.vec3(0.5, -2.0, 4.0))
ROT = wp.constant(wp.mat22(0.0, -1.0, 1.0, 0.0))

@wp.kernel
def k(a: wp.array(dtype=vec3b), m: wp.array(dtype=mat22b), out: wp.array(dtype=vec3b),
      om: wp.array(dtype=mat22b), n: wp.array2d(dtype=int), f: wp.array(dtype=wp.vec3),
      fm: wp.array(dtype=wp.mat22)):
    i = wp.tid()
    v = a[i]
    w = vec3b(v[2], v[0], not v[1])
    out[i] = w
    x = mat22b()
    x[0, 1] = v[0]
    x[1] = vec2b(v[1], True)
    om[i] = x
    n[i, 0] = int(v[0]) + 2 * int(m[i][1, 1])
    n[i, 1] = int(w == v)
    n[i, 2] = int(vec3b(True)[1]) + 2 * int(mat22b(True)[1, 0])
    n[i, 3] = int(SEL[0]) + 2 * int(SEL[1]) + 4 * int(SELM[1, 1]) + 8 * int(SELM[0, 1])
    n[i, 4] = int(wp.types.vector(True, False, v[2]) == vec3b(True, False, v[2]))
    f[i] = SCALE * float(i)
    fm[i] = ROT * float(i) + wp.mat22(float(i))
'''


def _run_bools(m, mod):
    g = np.random.default_rng(31)
    n = 16
    a = g.random((n, 3)) > 0.5
    mm = g.random((n, 2, 2)) > 0.5
    outs = [m.zeros(n, dtype=mod.vec3b), m.zeros(n, dtype=mod.mat22b),
            m.zeros((n, 5), dtype=m.int32), m.zeros(n, dtype=m.vec3), m.zeros(n, dtype=m.mat22)]
    m.launch(mod.k, dim=n, inputs=[m.array(a, dtype=mod.vec3b), m.array(mm, dtype=mod.mat22b)]
             + outs, device="cpu")
    m.synchronize()
    return [o.numpy() for o in outs]


def test_bool_vectors_matrices_and_captured_constants_match_warp_cpu(tmp_path, warp_ref):
    """``wp.types.vector(length=3, dtype=wp.bool)`` and ``matrix((2, 2), dtype=bool)`` as
    array dtypes (one byte a component), locals, constructors (zero, one value filling,
    components, the inferring ``wp.types.vector(True, ...)``), component stores and ``==``;
    ``wp.constant`` of bool and float vectors and matrices read in a kernel; a float
    matrix filled from one number: the values of warp-lang's CPU device."""
    ref = load_module(tmp_path / "ref_b.py", BOOLS, "warp", "wpc_ref_vecmath_b")
    lab = load_module(tmp_path / "lab_b.py", BOOLS, "warp_lab.warp", "wpc_lab_vecmath_b")
    import warp_lab.warp as wp

    got, want = _run_bools(wp, lab), _run_bools(warp_ref, ref)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    assert got[2][0, 3] == 1 + 4 and got[2][0, 2] == 3
    assert isinstance(lab.SEL, np.ndarray) and lab.SEL.tolist() == [True, False, True]


SCALAR_DIV = '''
import warp as wp

@wp.kernel
def sd(x: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat22d), y: wp.array(dtype=wp.vec3),
       z: wp.array(dtype=wp.mat22d), w: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = 1.0 / x[i]
    z[i] = wp.float64(3.0) / m[i]
    w[i] = wp.div_approx(2.5, x[i])
'''


def _run_scalar_div(m, mod):
    g = np.random.default_rng(37)
    n = 16
    x = g.uniform(-3, 3, (n, 3)).astype(np.float32)
    x[0] = [0.0, -0.0, np.inf]
    mm = g.uniform(-3, 3, (n, 2, 2))
    outs = [m.zeros(n, dtype=m.vec3), m.zeros(n, dtype=m.mat22d), m.zeros(n, dtype=m.vec3)]
    m.launch(mod.sd, dim=n, inputs=[m.array(x, dtype=m.vec3), m.array(mm, dtype=m.mat22d)] + outs,
             device="cpu")
    m.synchronize()
    return [o.numpy() for o in outs]


def test_scalar_divided_by_vector_or_matrix_matches_warp_cpu(tmp_path, warp_ref):
    """``s / v`` and ``s / m`` of float vectors and matrices per component (Warp's
    ``div(Scalar, vector | matrix)``, ``vec.h``/``mat.h``), and ``div_approx(s, v)``;
    zeros and infinities among the divisors: warp-lang's CPU device's bits."""
    ref = load_module(tmp_path / "ref_sd.py", SCALAR_DIV, "warp", "wpc_ref_vecmath_sd")
    lab = load_module(tmp_path / "lab_sd.py", SCALAR_DIV, "warp_lab.warp", "wpc_lab_vecmath_sd")
    import warp_lab.warp as wp

    for g, w in zip(_run_scalar_div(wp, lab), _run_scalar_div(warp_ref, ref)):
        np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))
