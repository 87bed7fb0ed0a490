"""64-bit integers to float32: never implicit, and rounded to nearest even when written.

* ``docs/language.md``: a conversion that may lose information (64 → 32 bits among them)
  is never implicit, so storing an int64 into a float32 array is a located error naming
  the cast, where it was rounded silently (2**24 + 1 → 2**24; issue 23).
* ``wl.float32(x)`` of an int64/uint64 lowers to LLVM's ``sitofp``/``uitofp``, which NVPTX
  emits as ``cvt.rn.f32.s64``/``cvt.rn.f32.u64`` (PTX ISA 9.7.9.21 "cvt": ``.rn`` rounds
  to nearest, ties to even), and the simulator rounds the 64-bit value once, never through
  float64 (rounding twice gives 2**62 for 2**62 + 2**38 + 1, whose nearest float32 is
  2**62 + 2**39).

The reference is exact integer arithmetic here (:func:`_rne_f32`), not NumPy's cast.
"""

from __future__ import annotations

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.errors import KernelCompileError


def _rne_f32(v: int) -> float:
    """The float32 nearest to integer ``v``, ties to even (IEEE 754 roundTiesToEven;
    |v| < 2**64 never overflows float32), by integer arithmetic alone."""
    if v == 0:
        return 0.0
    sign, m = (-1 if v < 0 else 1), abs(v)
    drop = max(m.bit_length() - 24, 0)          # bits below float32's 24-bit significand
    q, r = divmod(m, 1 << drop)
    half = (1 << drop) >> 1
    if drop and (r > half or (r == half and q & 1)):
        q += 1
    return sign * float(q << drop)               # q << drop has ≤ 25 significant bits


@wl.kernel
def _to_f32(s: wl.array(dtype=wl.int64), u: wl.array(dtype=wl.uint64),
            fs: wl.array(dtype=wl.float32), fu: wl.array(dtype=wl.float32)):
    i = wl.tid()
    fs[i] = wl.float32(s[i])
    fu[i] = wl.float32(u[i])


SIGNED = [2**24 + 1, 2**24 + 3, -(2**24 + 1), 2**25 + 2, 2**25 + 6, 2**53 + 1,
          2**62 + 2**38, 2**62 + 2**38 + 1, 2**62 + 3 * 2**38, -(2**62 + 2**38 + 1),
          2**63 - 1, -2**63, 2**40 + 2**16, 2**40 + 2**16 + 1, 3, -7, 0]
UNSIGNED = [2**64 - 1, 2**63 + 2**39, 2**63 + 2**39 + 1, 2**63 + 3 * 2**39, 2**24 + 1,
            2**53 + 1, 2**62 + 2**38 + 1, 1, 0, 2**64 - 2**40, 2**64 - 2**40 + 1,
            2**32 + 1, 2**31, 2**25 + 1, 2**25 + 3, 2**63, 5]


def test_reference_rounds_ties_to_even():
    assert _rne_f32(2**24 + 1) == 2**24 and _rne_f32(2**24 + 3) == 2**24 + 4
    assert _rne_f32(2**62 + 2**38) == 2**62 and _rne_f32(2**62 + 2**38 + 1) == 2**62 + 2**39
    assert _rne_f32(2**64 - 1) == 2.0**64


@pytest.mark.parametrize("opt", [0, 3])
def test_int64_and_uint64_to_float32_round_to_nearest_even(opt):
    n = len(SIGNED)
    s, u = np.array(SIGNED, np.int64), np.array(UNSIGNED, np.uint64)
    fs, fu = np.full(n, np.nan, np.float32), np.full(n, np.nan, np.float32)
    r = wl.launch(_to_f32, dim=n, block_dim=n, inputs=[s, u, fs, fu], device="sim", opt=opt)
    assert r.findings == []
    assert fs.astype(np.float64).tolist() == [_rne_f32(v) for v in SIGNED]
    assert fu.astype(np.float64).tolist() == [_rne_f32(v) for v in UNSIGNED]


def test_the_conversion_is_ptx_cvt_rn_f32_from_64_bits():
    cvts = [ln.split()[0] for ln in wl.compile(_to_f32).ptx.splitlines()
            if ln.strip().startswith("cvt.")]
    assert cvts == ["cvt.rn.f32.s64", "cvt.rn.f32.u64"]


def test_storing_an_int64_into_a_float32_array_needs_the_cast():
    @wl.kernel
    def implicit(s: wl.array(dtype=wl.int64), f: wl.array(dtype=wl.float32)):
        i = wl.tid()
        f[i] = s[i]

    with pytest.raises(KernelCompileError) as e:
        wl.compile(implicit)
    text = str(e.value)
    assert "cannot store int64 in f[i] of type float32" in text and "wl.float32(...)" in text
    assert f":{implicit.source.first_line + 3}:" in text


@pytest.mark.parametrize("src,dst,ok", [("int64", "float64", True), ("int32", "float32", True),
                                        ("uint64", "float32", False),
                                        ("int16", "float16", True),
                                        ("uint32", "float16", False)])
def test_integer_to_float_is_implicit_only_into_as_many_bits(src, dst, ok):
    from warp_lab.compiler.typing_rules import implicit_ok
    from warp_lab.lang import types

    assert implicit_ok(getattr(types, src), getattr(types, dst)) is ok
