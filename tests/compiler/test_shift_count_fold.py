"""A 64-bit ``<<`` of a constant by a run-time count of 2**32 or more (found by the
differential fuzzer, issue 23, seed 600254): docs/language.md promises 0 for a count
past the width, also for 64-bit counts of 2**32 or more. At opt=3 LLVM drops the count's
clamp (``umin(b, 64)``: where it matters the ``select(b > 63, 0, ...)`` discards the
shift), and the NVPTX back end folds the select into PTX's clamping ``shl.b64``, whose
count is a ``.u32`` (PTX ISA 9.7.8.8), truncating b: ``(-255) << (2**32 + 1)`` gave -510.
A 64-bit shift by a run-time count is now that PTX instruction as inline PTX, given the
count clamped to 64 (``lower_ops._shift``), at every opt level.
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


def test_constant_shifted_by_a_huge_count_is_0_at_opt3():
    assert _run(3) == [-510, 0, 0, 0]


@wl.kernel
def _shifts64(a: wl.array(dtype=wl.int64), u: wl.array(dtype=wl.uint64),
              b: wl.array(dtype=wl.int64), o: wl.array(dtype=wl.int64),
              ou: wl.array(dtype=wl.uint64)):
    i = wl.tid()
    o[3 * i] = a[i] << b[i]
    o[3 * i + 1] = a[i] >> b[i]
    ou[i] = u[i] >> wl.uint64(b[i])


def _reference(a: int, u: int, b: int) -> tuple[int, int, int]:
    """docs/language.md's rule, in Python integers: a count past the width (a negative
    one is a huge unsigned count) gives 0, and the sign's fill for a signed >>."""
    count = b % (1 << 64)
    shl = 0 if count >= 64 else ((a << count) + (1 << 63)) % (1 << 64) - (1 << 63)
    shr = (-1 if a < 0 else 0) if count >= 64 else a >> count
    return shl, shr, 0 if count >= 64 else u >> count


@pytest.mark.parametrize("opt", [0, 3])
def test_64_bit_shifts_by_every_kind_of_count_follow_the_rule(opt):
    counts = [0, 1, 31, 32, 33, 63, 64, 65, 2 ** 32, 2 ** 32 + 1, 2 ** 40 + 7, -1, -64]
    rng = np.random.default_rng(7)
    a = rng.integers(-2 ** 62, 2 ** 62, len(counts)).astype(np.int64)
    a[:2] = [-255, -1]
    u = rng.integers(0, 2 ** 63, len(counts)).astype(np.uint64) * np.uint64(2) + np.uint64(1)
    b = np.array(counts, np.int64)
    o = np.zeros(3 * len(counts), np.int64)
    ou = np.zeros(len(counts), np.uint64)
    wl.launch(_shifts64, dim=len(counts), inputs=[a, u, b, o, ou], device="sim", opt=opt)
    for i, count in enumerate(counts):
        shl, shr, ushr = _reference(int(a[i]), int(u[i]), count)
        assert (int(o[3 * i]), int(o[3 * i + 1]), int(ou[i])) == (shl, shr, ushr), \
            (count, int(a[i]), int(u[i]))
