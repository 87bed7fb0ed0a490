"""wl.launch(..., progress=...) on the simulator: counts per batch of blocks over every
repeat, increasing to the total; an exception from the callback stops the launch with
partial=True and leaves the user's arrays unchanged."""

import numpy as np
import pytest

import warp_lab as wl


@wl.kernel
def _double(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    i = wl.tid()
    y[i] = x[i] * 2.0


# 4 batches: the simulator runs 65536 threads (256 blocks of 256) at a time
N = 4 * 65536


def _arrays():
    return np.arange(N, dtype=np.float32), np.full(N, -1.0, np.float32)


def test_progress_counts_increase_to_the_total():
    x, y = _arrays()
    calls = []
    res = wl.launch(_double, dim=N, inputs=[x, y], device="sim",
                    progress=lambda d, t: calls.append((d, t)))
    assert not res.partial
    assert calls == [(256, 1024), (512, 1024), (768, 1024), (1024, 1024)]
    np.testing.assert_array_equal(y, 2.0 * x)


def test_progress_runs_over_all_repeats():
    x, y = _arrays()
    calls = []
    wl.launch(_double, dim=N // 2, inputs=[x, y], device="sim", repeat=2,
              progress=lambda d, t: calls.append((d, t)))
    assert calls == [(256, 1024), (512, 1024), (768, 1024), (1024, 1024)]


def test_exception_from_progress_stops_cleanly_and_leaves_arrays_unchanged():
    x, y = _arrays()
    before = y.copy()

    def cancel(done, total):
        if done >= 512:
            raise RuntimeError("user pressed stop")

    res = wl.launch(_double, dim=N, inputs=[x, y], device="sim", progress=cancel)
    assert res.partial
    assert any(f.kind == "interrupted" and "user pressed stop" in f.message
               for f in res.sim.findings)
    np.testing.assert_array_equal(y, before)
    # one statement of what the arrays hold (was: "PARTIAL: ... outputs are incomplete"
    # beside "note: ... your arrays were left unchanged")
    text = repr(res)
    assert "your arrays hold what they held before the launch" in text, text
    assert "incomplete" not in text and "note: the simulator stopped early" not in text, text
    assert text.count("stopped early") == 1, text


def test_progress_must_be_callable():
    x, y = _arrays()
    with pytest.raises(wl.LaunchError, match="progress must be None or a callable"):
        wl.launch(_double, dim=64, inputs=[x[:64], y[:64]], device="sim", progress="yes")
