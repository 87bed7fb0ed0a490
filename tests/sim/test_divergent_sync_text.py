"""What the warp-sync and barrier messages say about lanes that do not execute a shuffle.

A ``shfl.sync`` with the full membermask inside ``if t < 8:`` is executed by lanes 0–7
only; lanes 8–31 take the other side of the ``if`` (CUDA Programming Guide, "Warp
Shuffle Functions": every thread of the mask must execute the same intrinsic with the
same mask, or the result is undefined). The messages must say which lanes do not take
part (as ranges), where they are (exited, at which PTX line; or waiting at a barrier),
and the fix (a mask of the lanes that take part, or the shuffle moved out of the ``if``),
not that lanes 8–31 "have exited" as if the kernel had lost them. With a
``syncthreads()`` after the ``if``, lanes 0–7 wait at the shuffle for lanes 8–31, which
wait at the barrier: the deadlock must name the shuffle and its Python line.
"""

import linecache

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.sim.sync import lane_ranges

CHECKS = ("memcheck", "barrier")


@wl.kernel
def _shfl_in_if(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    t = wl.thread_idx.x
    v = x[t]
    if t < 8:
        off = 16
        while off > 0:
            v += wl.shfl_down_sync(wl.FULL_MASK, v, off)   # the shuffle
            off //= 2
    out[t] = v


@wl.kernel
def _shfl_in_if_then_barrier(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    t = wl.thread_idx.x
    v = x[t]
    if t < 8:
        off = 16
        while off > 0:
            v += wl.shfl_down_sync(wl.FULL_MASK, v, off)   # the shuffle
            off //= 2
    wl.syncthreads()
    out[t] = v


@wl.kernel
def _shfl_in_if_own_mask(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    t = wl.thread_idx.x
    v = x[t]
    if t < 8:
        off = 4
        while off > 0:
            v += wl.shfl_down_sync(wl.activemask(), v, off)
            off //= 2
    wl.syncthreads()
    out[t] = v


def _launch(kernel, n=64):
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    res = wl.launch(kernel, inputs=[x, out], grid=(1, 1, 1), block=(n, 1, 1), device="sim",
                    checks=CHECKS)
    return res, x, out


def _ptx_lines(res, needle):
    return [n for n, ln in enumerate(res.compiled.ptx.splitlines(), 1) if needle in ln]


def test_lane_ranges():
    assert lane_ranges(0) == "no lanes"
    assert lane_ranges(1 << 5) == "lane 5"
    assert lane_ranges(0xFFFFFF00) == "lanes 8–31"
    assert lane_ranges(0xFFFFFFFF) == "lanes 0–31"
    assert lane_ranges(0b1001111) == "lanes 0–3 and 6"
    assert lane_ranges(0xFFFFFF4F) == "lanes 0–3, 6 and 8–31"
    assert lane_ranges(0x80000001) == "lanes 0 and 31"


def test_shuffle_inside_an_if_names_the_lanes_that_took_the_other_side():
    res, _, _ = _launch(_shfl_in_if, 32)
    [f] = res.findings
    assert f.kind == "warp_sync", str(f)
    assert "the shuffle" in linecache.getline(f.source_file, f.source_line)
    (ret,) = _ptx_lines(res, "ret;")
    assert f.message.startswith(
        "shfl.sync membermask 0xffffffff names lanes 8–31, which do not execute it: they "
        f"took another path and exited (at PTX line {ret}), so only lanes 0–7 execute it "
        "and the result is undefined on the GPU; fix: move the shfl.sync out of the `if` "
        "or loop that only some lanes of the mask enter, so that every lane of the mask "
        "executes it, and use its result inside; a mask of only the lanes that execute it "
        "here (0x000000ff, what wl.activemask() gives in that code) is no fix: the shuffle "
        "reads lanes outside it, undefined too"), f.message
    assert "have exited" not in f.message
    assert f.details["exited"] == 0xFFFFFF00 and f.details["lanes"] == 0xFF
    # the mask fix (not what the hint says) gives lane 0 the right sum (offsets 4, 2, 1 read
    # lanes 1..7 for it), but lanes 4..7 then read lanes 8..11, outside the membermask:
    # undefined in the PTX ISA (shfl.sync), and said as such (a warp_sync finding naming
    # those lanes); tests/sim/test_shuffle_mask_hint.py follows the hints themselves
    res, x, out = _launch(_shfl_in_if_own_mask, 64)
    assert res.findings and all(f.kind == "warp_sync" and "not in membermask 0x000000ff"
                                in f.message for f in res.findings), [str(f) for f in res.findings]
    assert out[0] == pytest.approx(float(x[:8].sum()))
    np.testing.assert_array_equal(out[8:], x[8:])


def test_deadlock_at_a_barrier_names_the_shuffle_the_other_lanes_wait_at():
    res, _, _ = _launch(_shfl_in_if_then_barrier, 64)
    assert res.partial
    [f] = res.findings
    assert f.kind == "deadlock", str(f)
    # the finding stays at the barrier, with thread 8 the first waiting there
    assert "wl.syncthreads()" in linecache.getline(f.source_file, f.source_line)
    assert f.thread == (8, 0, 0)
    shfl = _ptx_lines(res, "shfl.sync")[0]
    line = f.details["stuck_source_line"]
    assert "the shuffle" in linecache.getline(f.source_file, line)
    assert f.details["stuck_ptx_line"] == shfl
    where = f"{f.source_file} line"
    assert (f"deadlock: 56 of 64 live threads of the block wait at the barrier on PTX line "
            f"{f.ptx_line} ({where} {f.source_line}), and the other 8 never reach it: lanes "
            f"0–7 of warp 0 wait at the shfl.sync on PTX line {shfl} ({where} {line}) with "
            "membermask 0xffffffff for the other lanes of that mask, which never execute it "
            "(lanes 8–31 wait at this barrier); fix: move the shfl.sync out of the `if` or "
            "loop") in f.message, f.message
    assert "(0x000000ff, what wl.activemask() gives in that code) is no fix: the shuffle " \
           "reads lanes outside it" in f.message

