"""A conditional expression of literals with a constant test folds exactly, like Python
(docs/language.md, "Literals and conversions": "Expressions made only of literals and
captured constants fold exactly, like Python"). Found by the differential fuzzer (issue
23, tests/fuzz): ``(63 if 1.0 <= 1024.0 else ~33) << 31`` was typed as an int32 select and
shifted in 32 bits, -2**31, where Python gives 63 << 31 = 135291469824 (an int64, as
``63 << 31`` written alone already was). The reference is Python's own value.
"""

from __future__ import annotations

import numpy as np
import pytest

import warp_lab as wl


@wl.kernel
def _folds(o: wl.array(dtype=wl.int64), n: int):
    o[0] = wl.int64((63 if 1.0 <= 1024.0 else (~33)) << 31)
    o[1] = wl.int64((63 if True else 1) << 31)
    o[2] = wl.int64((1 if False else 3) << 40)
    o[3] = wl.int64((63 if n > 0 else 1) << 31)  # a run-time test: an int32 select, wrapped


@pytest.mark.parametrize("opt", [0, 3])
def test_conditional_of_literals_folds_exactly_like_python(opt):
    o = np.zeros(4, np.int64)
    wl.launch(_folds, dim=1, inputs=[o, 1], device="sim", opt=opt)
    wrapped = int(np.array([63 << 31 & 0xFFFF_FFFF], np.uint32).view(np.int32)[0])
    assert o.tolist() == [(63 if 1.0 <= 1024.0 else (~33)) << 31, (63 if True else 1) << 31,
                          (1 if False else 3) << 40, wrapped]


@wl.kernel
def _compares(o: wl.array(dtype=wl.int64)):
    # (fuzzer seed 502302: the promotion of -4294967297 and min(0, 10**9 << 34) is uint64,
    # in which the comparison once wrapped the negative side and gave False)
    o[0] = wl.int64(-3 if (~4294967296) < min((33 >> 15), (1000000000 << 34)) else 7)
    o[1] = wl.int64(-3 if (1 << 63) > -1 else 7)
    o[2] = wl.int64(-3 if -(1 << 63) < (1 << 63) <= 18446744073709551615 else 7)
    o[3] = wl.int64(-3 if (~0) == 18446744073709551615 else 7)
    # (seed 502587: min of a negative and a uint64-sized constant, once in uint64)
    o[4] = wl.int64(min((-(1000000000 + 1000000000)), ((5 if 7 < 33 else 33) << 61)))
    o[5] = wl.int64(max(-1, 1 << 63) >> 62)


@pytest.mark.parametrize("opt", [0, 3])
def test_comparisons_and_min_max_of_constant_expressions_are_pythons_exact_ones(opt):
    o = np.zeros(6, np.int64)
    wl.launch(_compares, dim=1, inputs=[o], device="sim", opt=opt)
    assert o.tolist() == [
        -3 if (~4294967296) < min((33 >> 15), (1000000000 << 34)) else 7,
        -3 if (1 << 63) > -1 else 7,
        -3 if -(1 << 63) < (1 << 63) <= 18446744073709551615 else 7,
        -3 if (~0) == 18446744073709551615 else 7,
        min((-(1000000000 + 1000000000)), ((5 if 7 < 33 else 33) << 61)),
        max(-1, 1 << 63) >> 62]
