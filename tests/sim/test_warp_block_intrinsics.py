"""CUDA's warp and block intrinsics beyond shuffles and votes: ``__activemask``,
``__syncthreads_count/and/or``, ``__match_any_sync``/``__match_all_sync``,
``__reduce_*_sync`` and ``clock64``, compiled to their PTX instructions (accepted by
ptxas for the archs that have them, refused with a located error for those that
do not) and run on the simulator against numpy's reading of the CUDA Programming
Guide ("Warp Vote Functions", "Warp Match Functions", "Warp Reduce Functions",
"Synchronization Functions")."""

import re

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.errors import KernelCompileError

CHECKS = ("memcheck", "racecheck", "barrier")
WARPS = 4
N = 32 * WARPS


def _warps(a):
    return np.asarray(a).reshape(-1, 32)


def _bits(rows):
    """uint32 per row of a bool (warps, 32) array: bit l set when lane l is True."""
    return (rows.astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(1).astype(np.uint32)


@wl.kernel
def active_lanes(x: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.uint32)):
    i = wl.tid()
    out[i] = 0
    if x[i] > 0:
        out[i] = wl.activemask()


def test_activemask_is_the_lanes_in_the_branch():
    x = np.random.default_rng(1).integers(-3, 4, N).astype(np.int32)
    out = np.zeros(N, np.uint32)
    r = wl.launch(active_lanes, dim=N, inputs=[x, out], block_dim=64, device="sim", checks=CHECKS)
    assert not r.findings
    taken = _warps(x > 0)
    expect = np.where(taken, _bits(taken)[:, None], 0).ravel()
    np.testing.assert_array_equal(out, expect)
    assert "activemask.b32" in r.compiled.ptx


@wl.kernel
def block_votes(x: wl.array(dtype=wl.int32), count: wl.array(dtype=wl.int32),
                every: wl.array(dtype=wl.int32), some: wl.array(dtype=wl.int32)):
    i = wl.tid()
    p = x[i] > 0
    c = wl.syncthreads_count(p)
    a = wl.syncthreads_and(p)
    o = wl.syncthreads_or(x[i] > 2)
    if wl.thread_idx.x == 0:
        b = wl.block_idx.x
        count[b] = c
        every[b] = 1 if a else 0
        some[b] = 1 if o else 0


def test_syncthreads_count_and_or_combine_the_whole_block():
    rng = np.random.default_rng(2)
    blocks, bs = 6, 96
    x = rng.integers(-1, 3, blocks * bs).astype(np.int32)
    x[:bs] = 1                      # block 0: every thread's predicate true
    x[bs:2 * bs] = -1               # block 1: none
    count, every, some = (np.full(blocks, -7, np.int32) for _ in range(3))
    r = wl.launch(block_votes, dim=blocks * bs, inputs=[x, count, every, some], block_dim=bs,
                  device="sim", checks=CHECKS)
    assert not r.findings
    per = x.reshape(blocks, bs)
    np.testing.assert_array_equal(count, (per > 0).sum(1))
    np.testing.assert_array_equal(every, (per > 0).all(1))
    np.testing.assert_array_equal(some, (per > 2).any(1))
    ptx = r.compiled.ptx
    assert re.search(r"bar\.red\.popc\.u32", ptx) and re.search(r"bar\.red\.and\.pred", ptx)
    assert re.search(r"bar\.red\.or\.pred", ptx)


@wl.kernel
def matches(key: wl.array(dtype=wl.int32), wide: wl.array(dtype=wl.int64),
            any32: wl.array(dtype=wl.uint32), any64: wl.array(dtype=wl.uint32),
            all32: wl.array(dtype=wl.uint32)):
    i = wl.tid()
    any32[i] = wl.match_any_sync(wl.FULL_MASK, key[i])
    any64[i] = wl.match_any_sync(wl.FULL_MASK, wide[i])
    all32[i] = wl.match_all_sync(wl.FULL_MASK, key[i] // 8)


def test_match_any_and_all_group_lanes_by_value():
    rng = np.random.default_rng(3)
    key = rng.integers(0, 13, N).astype(np.int32)
    key[64:96] = 3                                   # warp 2: one value (match_all holds)
    wide = (rng.integers(0, 3, N).astype(np.int64) << 40) + 7   # differ only above bit 32
    any32, any64, all32 = (np.zeros(N, np.uint32) for _ in range(3))
    r = wl.launch(matches, dim=N, inputs=[key, wide, any32, any64, all32], device="sim",
                  checks=CHECKS)
    assert not r.findings
    for got, vals in ((any32, key), (any64, wide)):
        w = _warps(vals)
        same = w[:, :, None] == w[:, None, :]        # [warp, lane, other lane]
        expect = (same.astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(2)
        np.testing.assert_array_equal(_warps(got), expect.astype(np.uint32))
    uniform = (_warps(key // 8) == _warps(key // 8)[:, :1]).all(1)
    np.testing.assert_array_equal(_warps(all32), np.where(uniform, 0xFFFFFFFF, 0)[:, None]
                                  * np.ones((1, 32), np.int64))
    assert uniform[2] and not uniform.all()          # both outcomes are checked
    assert "match.any.sync.b64" in r.compiled.ptx and "match.all.sync.b32" in r.compiled.ptx


@wl.kernel
def reductions(s: wl.array(dtype=wl.int32), u: wl.array(dtype=wl.uint32),
               out: wl.array(dtype=wl.int32), uout: wl.array(dtype=wl.uint32)):
    i = wl.tid()
    w = i // 32
    lane = wl.lane_id()
    half = wl.uint32(0x0000FFFF) if lane < 16 else wl.uint32(0xFFFF0000)
    total = wl.reduce_add_sync(wl.FULL_MASK, s[i])
    mn = wl.reduce_min_sync(wl.FULL_MASK, s[i])
    mx = wl.reduce_max_sync(half, s[i])
    umn = wl.reduce_min_sync(wl.FULL_MASK, u[i])
    a = wl.reduce_and_sync(wl.FULL_MASK, u[i])
    o = wl.reduce_or_sync(wl.FULL_MASK, u[i])
    x = wl.reduce_xor_sync(wl.FULL_MASK, u[i])
    if lane == 0:
        out[6 * w] = total
        out[6 * w + 1] = mn
        out[6 * w + 2] = mx
        uout[4 * w] = umn
        uout[4 * w + 1] = a
        uout[4 * w + 2] = o
        uout[4 * w + 3] = x
    if lane == 16:
        out[6 * w + 3] = mx


def test_reduce_sync_adds_wraps_and_keeps_signedness():
    rng = np.random.default_rng(4)
    s = rng.integers(-2**31, 2**31, N, dtype=np.int64).astype(np.int32)   # sums wrap
    u = rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    u[::7] |= np.uint32(0x80000000)                  # min as unsigned differs from signed
    out = np.zeros(6 * WARPS, np.int32)
    uout = np.zeros(4 * WARPS, np.uint32)
    ck = wl.compile(reductions, arch="sm_80")      # the first arch with redux.sync
    r = wl.launch(ck, dim=N, inputs=[s, u, out, uout], device="sim", checks=CHECKS)
    assert not r.findings
    sw, uw = _warps(s), _warps(u)
    o = out.reshape(WARPS, 6)
    np.testing.assert_array_equal(o[:, 0], sw.astype(np.int64).sum(1).astype(np.uint32)
                                  .view(np.int32))              # wraps like int32 adds
    np.testing.assert_array_equal(o[:, 1], sw.min(1))
    np.testing.assert_array_equal(o[:, 2], sw[:, :16].max(1))   # mask: lanes 0..15
    np.testing.assert_array_equal(o[:, 3], sw[:, 16:].max(1))   # mask: lanes 16..31
    uo = uout.reshape(WARPS, 4)
    np.testing.assert_array_equal(uo[:, 0], uw.min(1))
    np.testing.assert_array_equal(uo[:, 1], np.bitwise_and.reduce(uw, 1))
    np.testing.assert_array_equal(uo[:, 2], np.bitwise_or.reduce(uw, 1))
    np.testing.assert_array_equal(uo[:, 3], np.bitwise_xor.reduce(uw, 1))
    ptx = r.compiled.ptx
    assert "redux.sync.min.s32" in ptx and "redux.sync.min.u32" in ptx


@wl.kernel
def timed(x: wl.array(dtype=wl.float32), ticks: wl.array(dtype=wl.int64)):
    i = wl.tid()
    t0 = wl.clock64()
    v = x[i]
    for _ in range(20):
        v = v * 1.0001 + 0.5
    x[i] = v
    ticks[i] = wl.clock64() - t0


def test_clock64_counts_forward_across_the_work_it_brackets():
    x = np.ones(64, np.float32)
    ticks = np.full(64, -1, np.int64)
    r = wl.launch(timed, dim=64, inputs=[x, ticks], device="sim", checks=CHECKS)
    assert not r.findings and (ticks > 20).all(), ticks
    assert "%clock64" in r.compiled.ptx


@wl.kernel
def float_redux(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    x[i] = wl.reduce_add_sync(wl.FULL_MASK, x[i])


@wl.kernel
def wide_redux(x: wl.array(dtype=wl.int64)):
    i = wl.tid()
    x[i] = wl.reduce_max_sync(wl.FULL_MASK, x[i])


@wl.kernel
def old_redux(x: wl.array(dtype=wl.int32)):
    i = wl.tid()
    x[i] = wl.reduce_add_sync(wl.FULL_MASK, x[i])


@wl.kernel
def old_match(x: wl.array(dtype=wl.int32)):
    i = wl.tid()
    x[i] = wl.match_any_sync(wl.FULL_MASK, x[i])


@pytest.mark.parametrize("kernel, arch, words", [
    (float_redux, "sm_90", ["32-bit integers", "float32"]),
    (wide_redux, "sm_90", ["32-bit integers", "int64"]),
    (old_redux, "sm_75", ["sm_80"]),
    (old_match, "sm_60", ["sm_70"]),
])
def test_unsupported_operands_and_archs_are_located_errors(kernel, arch, words):
    with pytest.raises(KernelCompileError) as info:
        wl.compile(kernel, arch=arch, cache=False)
    e = info.value
    line = kernel.source.line(e.line)
    assert "x[i] = wl." in line and e.col > 1, (e.line, e.col, line)
    assert all(w in str(e) for w in words), str(e)


_CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
import warp_lab as wl
import test_warp_block_intrinsics as T
for arch in ("sm_50", "sm_70"):
    for k in (T.active_lanes, T.block_votes, T.matches, T.reductions, T.timed):
        try:
            wl.compile(k, arch=arch, cache=False, sass=False)
            print(arch, k.name, "compiled")
        except wl.KernelCompileError as exc:
            print(arch, k.name, "rejected", exc.line)
"""


def test_old_archs_compile_or_refuse_at_the_call_never_abort():
    """In a child process: LLVM aborts the interpreter on an intrinsic it cannot select
    (``activemask`` before PTX ISA 6.2, ``match.sync`` before sm_70, ``redux.sync``
    before sm_80), so every arch must compile the kernel or refuse it at the call."""
    import os
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _CHILD, os.path.dirname(__file__)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, f"compiler crashed (rc={proc.returncode}): {proc.stderr[-500:]}"
    got = {tuple(ln.split()[:3]) for ln in proc.stdout.splitlines()}
    compiled = {(a, k, "compiled") for a in ("sm_50", "sm_70")
                for k in ("active_lanes", "block_votes", "timed")}
    assert got == compiled | {("sm_70", "matches", "compiled"), ("sm_50", "matches", "rejected"),
                              ("sm_50", "reductions", "rejected"),
                              ("sm_70", "reductions", "rejected")}, proc.stdout
