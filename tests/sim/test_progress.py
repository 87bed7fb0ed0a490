"""sim.run's ``progress`` callback: (blocks_done, blocks_total) after each batch, counts
increasing to the total; an exception from it stops the launch like Ctrl-C (partial)."""

import struct

import numpy as np
import pytest

from warp_lab import sim
from warp_lab.errors import LaunchInterrupted, SimulatorError

# each thread writes its global index: out[ctaid.x * ntid.x + tid.x] = index
PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
  ret;
}
"""
MOD = sim.parse_module(PTX)


def _launch(gpu, progress, grid=10, block=32, batch_threads=64, **kw):
    """``(result, out)``; a LaunchInterrupted's result for a Ctrl-C (``interrupted=True``
    asks for one, else it propagates)."""
    interrupted = kw.pop("interrupted", False)
    out = gpu.put(np.full(grid * block, 0xFFFFFFFF, np.uint32))
    try:
        res = sim.run(MOD, "k", grid, block, struct.pack("<Q", out), gpu.mem,
                      batch_threads=batch_threads, progress=progress, **kw)
        assert not interrupted, "the Ctrl-C was swallowed"
    except LaunchInterrupted as exc:
        if not interrupted:
            raise
        res = exc.result
    return res, gpu.get(out)


def test_progress_counts_increase_to_the_total_once_per_batch(gpu):
    calls = []
    res, out = _launch(gpu, lambda d, t: calls.append((d, t)))
    assert not res.partial and res.findings == []
    # 64 threads per batch / 32 per block: 2 blocks per batch, 10 blocks
    assert calls == [(2, 10), (4, 10), (6, 10), (8, 10), (10, 10)]
    np.testing.assert_array_equal(out, np.arange(320))
    # one batch: a single call, at the total
    calls.clear()
    _launch(gpu, lambda d, t: calls.append((d, t)), grid=7, batch_threads=1 << 16)
    assert calls == [(7, 7)]


@pytest.mark.parametrize("exc", [ValueError("cancel"), KeyboardInterrupt()],
                         ids=["ValueError", "KeyboardInterrupt"])
def test_exception_from_progress_stops_the_launch_cleanly(gpu, exc):
    calls = []

    def cb(done, total):
        calls.append(done)
        if done >= 4:
            raise exc

    # a Ctrl-C in the callback is raised again (LaunchInterrupted), another exception not
    res, out = _launch(gpu, cb, interrupted=isinstance(exc, KeyboardInterrupt))
    assert res.partial
    assert calls == [2, 4]
    [f] = res.findings
    assert f.kind == "interrupted"
    if isinstance(exc, ValueError):
        assert "progress callback" in f.message and "ValueError: cancel" in f.message
        assert "after 4 of 10 blocks" in f.message
    # the first two batches ran (blocks 0-3), the rest never started
    np.testing.assert_array_equal(out[:128], np.arange(128))
    assert (out[128:] == 0xFFFFFFFF).all()


def test_progress_is_not_called_after_a_fault(gpu):
    calls = []
    out = gpu.put(np.zeros(8, np.uint32))       # room for 8 threads, 320 launched
    res = sim.run(MOD, "k", 10, 32, struct.pack("<Q", out), gpu.mem, batch_threads=64,
                  progress=lambda d, t: calls.append(d))
    assert res.partial and res.findings[0].kind == "out_of_bounds"
    assert calls == []


def test_progress_must_be_callable(gpu):
    with pytest.raises(SimulatorError, match="progress must be None or a callable"):
        _launch(gpu, progress=5)
