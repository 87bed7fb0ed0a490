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
