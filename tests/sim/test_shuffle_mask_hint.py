"""The fix a divergent shuffle's ``warp_sync`` finding suggests comes out clean itself.

A ``shfl.sync`` with membermask 0xffffffff inside ``if lane < 16`` is undefined (CUDA
Programming Guide, "Warp Shuffle Functions": every thread of the mask must execute it).
The hint used to say "pass a mask of only the lanes that execute it (wl.activemask())"
always; for ``shfl_down_sync(..., 1)`` that makes lane 15 read lane 16, outside the new
mask, which the PTX ISA leaves undefined too (9.7.9.6 "shfl.sync": "results are undefined
if a thread sources a register from an inactive thread or a thread that is not in
membermask") and the simulator reports. The hint now looks at the lanes the shuffle reads:
``wl.activemask()`` when they stay among the executing lanes, else moving the shuffle out
of the branch. Each test follows the hint it got and checks the launch is clean.
"""

import numpy as np

import warp_lab as wl


@wl.kernel
def _xor_in_branch(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    v = x[i]
    if i % 32 < 16:
        v = v + wl.shfl_xor_sync(0xFFFFFFFF, v, 1)
    x[i] = v


@wl.kernel
def _xor_in_branch_activemask(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    v = x[i]
    if i % 32 < 16:
        v = v + wl.shfl_xor_sync(wl.activemask(), v, 1)
    x[i] = v


@wl.kernel
def _down_in_branch(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    v = x[i]
    if i % 32 < 16:
        v = wl.shfl_down_sync(0xFFFFFFFF, v, 1)
    x[i] = v


@wl.kernel
def _down_in_branch_activemask(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    v = x[i]
    if i % 32 < 16:
        v = wl.shfl_down_sync(wl.activemask(), v, 1)
    x[i] = v


@wl.kernel
def _down_moved_out(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    v = x[i]
    w = wl.shfl_down_sync(0xFFFFFFFF, v, 1)
    if i % 32 < 16:
        v = w
    x[i] = v


def _run(kernel):
    x = np.arange(32, dtype=np.float32)
    r = wl.launch(kernel, dim=32, block_dim=32, inputs=[x], device="sim")
    return r.findings, x


def test_a_shuffle_reading_only_executing_lanes_is_told_to_pass_activemask():
    [f] = _run(_xor_in_branch)[0]
    assert f.kind == "warp_sync" and f.details["lanes"] == 0x0000FFFF
    assert "pass a mask of only the lanes that execute it (here 0x0000ffff, which " \
           "wl.activemask() gives" in f.details["hint"]
    findings, x = _run(_xor_in_branch_activemask)           # the hint, followed
    assert findings == []
    lanes = np.arange(32)
    assert x.tolist() == np.where(lanes < 16, lanes + (lanes ^ 1), lanes).tolist()


def test_a_shuffle_reading_past_the_executing_lanes_is_told_to_move_out_of_the_branch():
    [f] = _run(_down_in_branch)[0]
    hint = f.details["hint"]
    assert f.kind == "warp_sync" and hint.startswith("move the shfl.sync out of the `if`")
    assert "the shuffle reads lanes outside it" in hint and "0x0000ffff" in hint
    assert f.details["outside_reads"] == [(15, 16)]
    assert "pass a mask of only" not in hint
    # what the old hint led to: a finding of its own
    [g] = _run(_down_in_branch_activemask)[0]
    assert g.kind == "warp_sync" and "lane 15 reads lane 16" in g.message
    findings, x = _run(_down_moved_out)                      # the hint, followed
    assert findings == []
    lanes = np.arange(32)
    assert x.tolist() == np.where(lanes < 16, lanes + 1, lanes).tolist()
