"""A 64-bit ``<<`` of a constant by a run-time count of 2**32 or more (found by the
differential fuzzer, issue 23, seed 600254): docs/language.md promises 0 for a count
past the width, also for 64-bit counts of 2**32 or more. At opt=3 LLVM drops the count's
clamp (``umin(b, 64)``: where it matters the ``select(b > 63, 0, ...)`` discards the
shift), and the NVPTX back end folds the select into PTX's clamping ``shl.b64``, whose
count is a ``.u32`` (PTX ISA 9.7.8.8), truncating b: ``(-255) << (2**32 + 1)`` gives -510.
Open: marked xfail(strict) so the fix shows as an XPASS; opt=0 is right today.
"""

from __future__ import annotations

import numpy as np
import pytest

import warp_lab as wl


@wl.kernel
def _const_shl(b: wl.array(dtype=wl.int64), o: wl.array(dtype=wl.int64),
               f: wl.array(dtype=wl.float32)):
    i = wl.tid()
    x = b[i]
    if wl.float64(x) < wl.float64(f[i]):
        f[i] = 1.0
    wl.atomic_xor(o, i, wl.int64((-255) << x))
    wl.atomic_min(o, i + 4, wl.int64(-x ^ ((-3) // ((x & 7) - 10))))


def _run(opt):
    b = np.array([1, 2 ** 32 + 1, 64, 2 ** 40], np.int64)
    o = np.zeros(8, np.int64)
    wl.launch(_const_shl, dim=4, inputs=[b, o, np.zeros(4, np.float32)], device="sim", opt=opt)
    return o[:4].tolist()


def test_constant_shifted_by_a_huge_count_is_0_at_opt0():
    assert _run(0) == [-510, 0, 0, 0]


@pytest.mark.xfail(strict=True, reason="open: the count clamp is optimised away at opt=3")
def test_constant_shifted_by_a_huge_count_is_0_at_opt3():
    assert _run(3) == [-510, 0, 0, 0]
