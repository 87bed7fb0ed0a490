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
    split into bytes) and words of the other half: no race (several blocks, so many cells
    with readers of several warps). Without warp 3's fence, its lanes' reads race with the
    overwrite."""
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


@wl.kernel
def set_bits(x: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.int32), how: int):
    s = wl.shared_array(8, wl.int32)
    t = wl.thread_idx.x
    if t < 8:
        s[t] = 0
    wl.syncthreads()
    k = x[wl.block_idx.x * 64 + t]
    bit = 1 << (t % 31)
    if how == 0:
        s[k] |= bit                                         # update once
    elif how == 1:
        wl.atomic_or(s, k, bit)
    else:
        for j in range(t % 3):                              # lanes diverge
            s[(k + j) % 8] |= bit                           # update in a loop
    wl.syncthreads()
    if t < 8:
        out[wl.block_idx.x * 8 + t] = s[t]


def test_an_update_of_shared_memory_by_many_threads_is_one_lost_update_finding():
    """``s[k] |= bit`` in every thread is a read, then a separate write: the threads that
    share a ``k`` lose all but one update (the simulator's answer differs from numpy's
    ``bitwise_or.at``). racecheck reports it once, as a lost update with the fix
    ``wl.atomic_or`` (as memcheck's ``global_conflict`` says it for global memory), not as
    a write-after-read and a write-after-write hazard; with ``wl.atomic_or`` the answer is
    numpy's and there is no finding. Lanes that update in separate executions (a loop
    whose trip count differs by lane) give the same one finding: the update's load after
    another thread's store is left to the store."""
    x = (np.arange(128) * 5 % 8).astype(np.int32)
    bits = 1 << (np.arange(64) % 31)
    for how, marker in ((1, None), (0, "# update once"), (2, "# update in a loop")):
        out = np.zeros(16, np.int32)
        res = wl.launch(set_bits, inputs=[x, out, how], grid=(2, 1, 1), block=(64, 1, 1),
                        device="sim", checks=CHECKS)
        want = np.zeros((2, 8), np.int32)
        for b in range(2):
            if how == 2:
                t = np.arange(64)
                for j in range(2):
                    sel = t % 3 > j
                    np.bitwise_or.at(want[b], (x[b * 64 + t[sel]] + j) % 8, bits[sel])
            else:
                np.bitwise_or.at(want[b], x[b * 64:(b + 1) * 64], bits)
        if how == 1:
            np.testing.assert_array_equal(out.reshape(2, 8), want)
            assert res.findings == [], [str(f) for f in res.findings]
            continue
        assert not np.array_equal(out.reshape(2, 8), want)  # updates were lost
        (f,) = res.findings
        assert f.kind == "race_waw" and f.source_line == _line(set_bits, marker), str(f)
        assert f.details["update_op"] == "or"
        assert "lost update" in f.message and "PTX line" not in f.message
        assert "`s[" in f.message and "|= ...` is a read, then a separate write" in f.message
        index = f.details["index"][0]
        assert f"fix: wl.atomic_or(s, {index}, value)" in f.message, f.message


@wl.kernel
def normalize(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), final: int):
    buf = wl.shared_array(128, wl.float32)
    t = wl.thread_idx.x
    buf[t] = x[t]
    wl.syncthreads()
    s = 64
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]                            # tree step
        if s > 1 or final:
            wl.syncthreads()
        s //= 2
    wl.threadfence_block()                                  # (a fence orders nothing alone)
    y[t] = x[t] / buf[0]                                    # every thread reads the sum


@wl.kernel
def double_buffered(a: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32),
                    sync: int):
    tile = wl.shared_array((2, 64), wl.float32)
    t = wl.thread_idx.x
    tile[0, t] = a[t]
    wl.syncthreads()
    acc = 0.0
    for k in range(4):
        if k + 1 < 4:
            tile[(k + 1) % 2, t] = a[(k + 1) * 64 + t]      # load the next tile
        acc += tile[k % 2, (t + 1) % 64]                    # use this one
        if sync:
            wl.syncthreads()
    out[t] = acc


def test_a_tree_reduction_read_by_every_thread_needs_its_final_barrier():
    """The sum's last step is thread 0's: with the final ``wl.syncthreads()`` every thread
    reads ``buf[0]`` after it (no race, a fence in the module changes nothing); without
    it, thread 1 reads what thread 0 wrote with nothing between (a fence alone is no
    release pattern)."""
    x = np.arange(1, 129, dtype=np.float32)
    for final in (1, 0):
        y = np.zeros(128, np.float32)
        res = wl.launch(normalize, inputs=[x, y, final], dim=128, device="sim", checks=CHECKS)
        np.testing.assert_allclose(y, x / x.sum(), rtol=1e-6)
        races = _races(res)
        if final:
            assert races == [], [str(f) for f in races]
            continue
        (f,) = races
        assert f.kind == "race_raw" and f.source_line == _line(normalize, "# every thread")
        assert f.thread == (1, 0, 0) and f.details["other_thread"] == (0, 0, 0)


def test_double_buffered_tiles_need_one_barrier_per_tile():
    """Loading the next tile into the other buffer while the block reads this one needs one
    barrier per tile (the buffer loaded next was last read before the previous one): no
    race. With none, the loads overwrite what other threads still read, and the reads see
    other threads' fresh loads."""
    a = np.arange(256, dtype=np.float32)
    want = a.reshape(4, 64)[:, (np.arange(64) + 1) % 64].sum(0)
    for sync in (1, 0):
        out = np.zeros(64, np.float32)
        res = wl.launch(double_buffered, inputs=[a, out, sync], dim=64, device="sim",
                        checks=CHECKS)
        np.testing.assert_array_equal(out, want)
        kinds = {(f.kind, f.source_line) for f in _races(res)}
        if sync:
            assert kinds == set(), kinds
            continue
        assert kinds == {("race_war", _line(double_buffered, "# load the next")),
                         ("race_raw", _line(double_buffered, "# use this one"))}, kinds
