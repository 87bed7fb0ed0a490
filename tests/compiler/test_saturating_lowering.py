"""Float → int conversions and 64-bit shifts keep their documented results under LLVM's
optimiser (issue 23).

* A float → integer conversion lowers to NVVM's ``cvt.rzi`` intrinsics, whose result is
  defined for every input (PTX ISA 9.7.9.21, "Integer Notes": toward zero, "clamped to the
  destination range by default", NaN giving 0 from a non-f64 source into a 32-bit
  integer). LLVM's ``fptosi`` is poison out of range, which let the optimiser fold
  ``fptosi(sitofp x)`` into ``trunc x`` (``wl.int32(wl.float64(x))`` wrapped) and delete
  the store of a NaN conversion.
* ``wl.int8``/``wl.uint8`` of a float saturate to the 8-bit range (``docs/language.md``),
  where a ``cvt.rzi.s16`` then ``st.b8`` wrapped (300.0 → 44).
* A 64-bit ``<<``/``>>`` by a count ≥ 2**32 is a shift by the width or more (0, or -1 for
  ``>>`` of a negative value), where NVPTX folded the count into ``shl.b64``'s 32-bit count
  register (PTX ISA 9.7.8.8: the count is ``.u32``), so 2**32 + 1 shifted by 1.

References are Python's and NumPy's values with the ISA's rule, never warp_lab's output.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import warp_lab as wl


@wl.kernel
def _conversions(q: wl.array(dtype=wl.int32), f: wl.array(dtype=wl.float32),
                 big: wl.array(dtype=wl.int64), b8: wl.array(dtype=wl.int8),
                 u8: wl.array(dtype=wl.uint8), u16: wl.array(dtype=wl.uint16)):
    q[0] = int(f[0] * 0.0 + math.nan)
    q[1] = wl.int32(wl.float64(big[0]))
    q[2] = wl.int32(wl.float64(big[1]))
    q[3] = wl.int32(f[3])
    for i in range(4):
        b8[i] = wl.int8(f[i])
        u8[i] = wl.uint8(f[i])
        u16[i] = wl.uint16(f[i] * 1000.0)


@pytest.mark.parametrize("opt", [0, 3])
def test_float_to_int_conversions_saturate_and_survive_the_optimiser(opt):
    f = np.array([1.0, 300.0, -300.0, 3e9], np.float32)
    big = np.array([2**40 + 5, -(2**40) - 5], np.int64)
    q = np.full(4, 7, np.int32)
    b8, u8, u16 = np.zeros(4, np.int8), np.zeros(4, np.uint8), np.zeros(4, np.uint16)
    wl.launch(_conversions, dim=1, inputs=[q, f, big, b8, u8, u16], device="sim", opt=opt)
    # PTX ISA 9.7.9.21: NaN from f32 into s32 is 0; out of range clamps
    assert q.tolist() == [0, 2**31 - 1, -2**31, 2**31 - 1]
    t = np.trunc(f.astype(np.float64))
    np.testing.assert_array_equal(b8, np.clip(t, -128, 127).astype(np.int8))    # 1 127 -128 127
    np.testing.assert_array_equal(u8, np.clip(t, 0, 255).astype(np.uint8))      # 1 255 0 255
    t16 = np.trunc((f * np.float32(1000.0)).astype(np.float64))
    np.testing.assert_array_equal(u16, np.clip(t16, 0, 65535).astype(np.uint16))


def test_float_to_int_lowers_to_cvt_rzi_not_poisonous_fptosi():
    ck = wl.compile(_conversions, opt=3, sass=False)
    assert "fptosi" not in ck.llvm_ir and "fptoui" not in ck.llvm_ir
    assert "llvm.nvvm.d2i.rz" in ck.llvm_ir and "llvm.nvvm.f2i.rz" in ck.llvm_ir
    assert "cvt.rzi.s32.f64" in ck.ptx and "cvt.rzi.s32.f32" in ck.ptx


@wl.kernel
def _shifts(s: wl.array(dtype=wl.int64), a: wl.int64, c: wl.int64, x: wl.int32,
            u: wl.uint64):
    s[0] = a << c
    s[1] = x << c            # int32 << int64: an int64 shift
    s[2] = a >> c
    s[3] = (-a) >> c
    s[4] = wl.int64(u >> wl.uint64(c))
    s[5] = a << (c - wl.int64(2**32))   # a count below the width still shifts


@wl.kernel
def _nans(q: wl.array(dtype=wl.int64), f: wl.array(dtype=wl.float32)):
    d = wl.float64(f[0]) * 0.0 + math.nan
    q[0] = wl.int64(wl.int32(d))
    q[1] = wl.int64(f[0] * 0.0 + math.nan)
    q[2] = wl.int64(wl.int32(f[0] * 0.0 + math.nan))
    q[3] = wl.int64(wl.uint32(d))


@pytest.mark.parametrize("opt", [0, 3])
def test_nan_to_int_is_the_isas_value_run_or_folded(opt):
    """PTX ISA 9.7.9.21: NaN gives 0 from a non-f64 source into a 32-bit integer, else
    ``1 << (bits - 1)``. At ``opt=3`` LLVM folds the NVVM intrinsic with that rule; at
    ``opt=0`` the simulator's ``cvt`` computes it: both must agree."""
    q = np.zeros(4, np.int64)
    wl.launch(_nans, dim=1, inputs=[q, np.ones(1, np.float32)], device="sim", opt=opt)
    assert q.tolist() == [-2**31, -2**63, 0, 2**31]


@pytest.mark.parametrize("opt", [0, 3])
def test_64_bit_shift_by_a_count_past_2_to_the_32_is_a_shift_past_the_width(opt):
    """``docs/language.md``: shifts by the type width or more give 0 (or -1 for ``>>`` of a
    negative value); Python's ``a << c`` wrapped to 64 bits is 0 for ``c >= 64``."""
    s = np.full(6, 9, np.int64)
    a, c = 3, 2**32 + 1
    wl.launch(_shifts, dim=1, inputs=[s, a, c, 5, 2**63 + 3], device="sim", opt=opt)
    # Python's a << c is a multiple of 2**c, so 0 wrapped to 64 bits; a >> c is 0, -a >> c -1
    assert s.tolist() == [0, 0, a >> c, (-a) >> c, 0, a << 1]
