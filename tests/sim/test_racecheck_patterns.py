"""racecheck on common teaching patterns: what it must report and what it must not.

Each kernel is compiled and run on the simulator in a correct form (no race finding) and
with the one thing missing that makes it a race (exactly the expected finding); the
simulator's answer is checked against numpy too.
"""

import inspect

import numpy as np

import warp_lab as wl

CHECKS = ("memcheck", "racecheck", "barrier")


def _line(kernel, marker):
    """The file line of ``kernel``'s source holding ``marker`` (a comment)."""
    src, first = inspect.getsourcelines(kernel.fn)
    (k,) = [k for k, text in enumerate(src) if marker in text]
    return first + k


def _races(res):
    return [f for f in res.findings if f.kind.startswith("race")]


@wl.kernel
def lane0_acquires(out: wl.array(dtype=wl.int32), mask: wl.uint32):
    s = wl.shared_array(33, wl.int32)
    t = wl.thread_idx.x
    if t == 0:
        s[32] = 0
    wl.syncthreads()
    if t >= 32:
        s[t - 32] = t                                       # the producer warp writes
        wl.syncwarp()
        if t == 32:
            wl.threadfence_block()                          # release
            wl.atomic_store(s, 32, 1)
    else:
        if t == 0:
            while wl.atomic_load(s, 32) == 0:
                pass
            wl.threadfence_block()                          # lane 0 acquires
        if (mask >> wl.uint32(t)) & wl.uint32(1) != wl.uint32(0):
            wl.syncwarp(mask)
        out[t] = s[t]                                       # every lane reads


def test_what_lane_0_acquired_reaches_the_lanes_it_then_syncs_with():
    """Lane 0 acquires the producer warp's release, then ``wl.syncwarp()``: the warp sync
    orders lane 0's acquire before the other lanes' reads (CUDA Programming Guide
    ``__syncwarp()``: memory ordering among the participating threads; happens-before is
    transitive), so no race. With no warp sync every lane but 0 reads unordered data, and
    with a mask of lanes 0-15 only, lanes 16-31 do: the first such lane is reported."""
    for mask, first in ((0xFFFFFFFF, None), (0, 1), (0xFFFF, 16)):
        out = np.zeros(32, np.int32)
        res = wl.launch(lane0_acquires, inputs=[out, mask], dim=64, device="sim",
                        checks=CHECKS)
        np.testing.assert_array_equal(out, np.arange(32, 64))
        races = _races(res)
        if first is None:
            assert races == [], [str(f) for f in races]
            continue
        (f,) = races
        assert f.kind == "race_raw" and f.thread == (first, 0, 0), str(f)
        assert f.details["other_thread"] == (32 + first, 0, 0)
        assert f.source_line == _line(lane0_acquires, "# every lane reads")


@wl.kernel
def table_reused(out: wl.array(dtype=wl.int32), unfenced: int):
    tab = wl.dynamic_shared_array(wl.int32)
    b = wl.dynamic_shared_array(wl.uint8)
    t = wl.thread_idx.x
    w = t // 32
    if t == 0:
        tab[64] = 0
    if t < 64:
        tab[t] = t
    wl.syncthreads()
    v = 0
    if t >= 32:
        v = tab[t % 64]                                     # every warp reads the table
        wl.syncwarp()
        v += tab[(t + 7) % 64]                              # at another clock
        wl.syncwarp()
        if t % 32 == 0:
            if w != unfenced:
                wl.threadfence_block()
            wl.atomic_add(tab, 64, 1)                       # count this warp done
    out[wl.block_idx.x * 128 + t] = v
    if t == 0:
        while wl.atomic_load(tab, 64) < 3:
            pass
        wl.threadfence_block()
        for k in range(32):
            b[4 * (k + 32) + 1] = wl.uint8(1)               # thread 0 reuses bytes
            tab[k] = -1                                     # and words of the table


def test_a_table_read_by_every_warp_is_reused_after_their_releases():
    """Warps 1-3 read every cell of a table (two reads per lane, a warp sync between: per
    lane clocks), sync, and lane 0 of each releases and counts; thread 0 acquires all three
    through the count and overwrites the table, bytes of half of it (the words' records
    split into bytes) and words of the other half: no race (several blocks, so many cells with readers of several
    warps). Without warp 3's fence, its lanes' reads race with the overwrite."""
    t = np.arange(128)
    want = np.where(t >= 32, t % 64 + (t + 7) % 64, 0)
    for unfenced in (0, 3):
        out = np.zeros(4 * 128, np.int32)
        res = wl.launch(table_reused, inputs=[out, unfenced], grid=(4, 1, 1),
                        block=(128, 1, 1), shared_mem=65 * 4, device="sim", checks=CHECKS)
        np.testing.assert_array_equal(out.reshape(4, 128), np.broadcast_to(want, (4, 128)))
        races = _races(res)
        if not unfenced:
            assert races == [], [str(f) for f in races]
            continue
        # (one finding per PTX store: LLVM unrolls the loop; the other thread is a lane of
        # warp 3, or None where several of its lanes read the cell)
        assert races and all(f.kind == "race_war" and f.thread == (0, 0, 0) for f in races)
        assert {f.source_line for f in races} == {
            _line(table_reused, "# thread 0 reuses bytes"), _line(table_reused, "# and words")}
        others = {f.details["other_thread"] for f in races}
        assert {o[0] // 32 for o in others - {None}} == {3}, others
