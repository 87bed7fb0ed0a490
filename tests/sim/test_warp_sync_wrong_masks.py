"""Warp-synchronous calls whose membermask is wrong for the lanes that make them are
``warp_sync`` findings at the call's line, naming the lanes (issue 23). Each is undefined
in the PTX ISA, where the simulator used to run them with plausible values:

* "The behavior of shfl.sync [vote.sync, bar.warp.sync, match.sync, redux.sync] is
  undefined if the executing thread is not in the membermask" (PTX ISA 9.7.9.6, 9.7.13.9,
  9.7.13.2, 9.7.13.10, 9.7.13.12): ``wl.ballot_sync(0x0000FFFF, p)`` called by all 32
  lanes, a mask that leaves out some of the calling lanes;
* "results are undefined if a thread sources a register from an inactive thread or a
  thread that is not in membermask" (9.7.9.6): lane 0 alone reading lane 5 with mask 0x1.

The fixed versions (the hint's mask) must come out clean."""

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.examples.example import source_line

CHECKS = ("memcheck", "barrier")


@wl.kernel
def ballot_half_mask(o: wl.array(dtype=wl.uint32), m: wl.uint32):
    i = wl.tid()
    o[i] = wl.ballot_sync(m, i % 2 == 0)  # marker: ballot


@wl.kernel
def lane0_reads_lane5(o: wl.array(dtype=wl.float32), x: wl.array(dtype=wl.float32),
                      m: wl.uint32):
    i = wl.tid()
    v = x[i]
    if i % 32 == 0:
        o[i] = wl.shfl_sync(m, v, 5)  # marker: lane 0 reads
    else:
        o[i] = 0.0


@wl.kernel
def mask_leaves_out_callers(o: wl.array(dtype=wl.int32), x: wl.array(dtype=wl.int32),
                            m: wl.uint32):
    i = wl.tid()
    v = x[i]
    if i < 8:
        o[i] = wl.reduce_add_sync(m, v)  # marker: reduce


def _launch(kernel, inputs, arch=None):
    kw = {"arch": arch} if arch else {}
    return wl.launch(kernel, dim=32, inputs=inputs, device="sim", checks=CHECKS, **kw)


def _one(res, kernel, marker):
    assert [f.kind for f in res.findings] == ["warp_sync"], [str(f) for f in res.findings]
    f = res.findings[0]
    assert f.source_line == source_line(kernel, marker), str(f)
    return f


def test_ballot_with_a_half_mask_called_by_the_whole_warp():
    o = np.zeros(32, np.uint32)
    f = _one(_launch(ballot_half_mask, [o, 0x0000FFFF]), ballot_half_mask, "# marker: ballot")
    assert f.details["lanes"] == 0xFFFF0000 and f.details["membermask"] == 0x0000FFFF
    assert "leaves out lanes 16–31" in f.message and "0xffffffff" in f.details["hint"]
    assert not _launch(ballot_half_mask, [o, 0xFFFFFFFF]).findings
    assert (o == 0x55555555).all()                    # even lanes' predicates


def test_lane_0_alone_reading_a_lane_outside_its_mask():
    x = np.arange(32, dtype=np.float32)
    o = np.zeros(32, np.float32)
    f = _one(_launch(lane0_reads_lane5, [o, x, 0x1]), lane0_reads_lane5,
             "# marker: lane 0 reads")
    assert f.thread == (0, 0, 0) and f.details["sources"] == 1 << 5
    assert "lane 0 reads lane 5" in f.message
    # lane 0 reading itself with mask 0x1 is defined
    @wl.kernel
    def lane0_reads_itself(o: wl.array(dtype=wl.float32), x: wl.array(dtype=wl.float32)):
        i = wl.tid()
        if i % 32 == 0:
            o[i] = wl.shfl_sync(wl.uint32(0x1), x[i], 0)
    assert not wl.launch(lane0_reads_itself, dim=32, inputs=[o, x], device="sim",
                         checks=CHECKS).findings


def test_a_mask_that_leaves_out_some_calling_lanes():
    x = np.arange(32, dtype=np.int32)
    o = np.zeros(32, np.int32)
    f = _one(_launch(mask_leaves_out_callers, [o, x, 0xF], arch="sm_80"),
             mask_leaves_out_callers, "# marker: reduce")
    assert f.details["lanes"] == 0xF0 and f.details["callers"] == 0xFF
    assert "leaves out lanes 4–7" in f.message
    res = _launch(mask_leaves_out_callers, [o, x, 0xFF], arch="sm_80")   # the hint's mask
    assert not res.findings
    assert (o[:8] == x[:8].sum()).all()


@pytest.mark.parametrize("ptx_op", ["bar.warp.sync %r2;", "vote.sync.ballot.b32 %r3, %p1, %r2;"])
def test_ptx_lane_outside_its_own_membermask(gpu, ptx_op):
    from warp_lab import sim
    import struct
    ptx = f"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %laneid;
  setp.lt.u32 %p1, %r1, 4;
  mov.u32 %r2, 0x7;
  {ptx_op}
  ret;
}}"""
    res = sim.run(sim.parse_module(ptx), "k", 1, 32, struct.pack("<Q", gpu.put(
        np.zeros(1, np.uint32))), gpu.mem, checks=("barrier",))
    f = [f for f in res.findings if f.kind == "warp_sync"]
    assert f and f[0].details["lanes"] == 0xFFFFFFF8, [str(x) for x in res.findings]
