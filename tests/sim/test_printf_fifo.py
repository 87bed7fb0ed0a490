"""A launch printing more than a GPU's printf FIFO holds shows what a GPU would.

CUDA Programming Guide, "Formatted Output": printf's arguments and metadata reach the host
through a FIFO of ``cudaLimitPrintfFifoSize`` bytes (1 MiB by default) that "is circular
and if more output is produced during kernel execution than can fit in the buffer, older
output is overwritten". The simulator counts each call's record (its argument buffer plus
the format string's address), keeps the newest calls that fit in ``LaunchResult.printed``,
says so in the notes, and keeps everything in ``result.sim.printed``.
"""

import numpy as np

import warp_lab as wl
from warp_lab.sim.printf import PRINTF_FIFO_BYTES, RECORD_HEAD_BYTES, fifo_overwritten

_FMT = " ".join(["%lld"] * 32) + "\n"     # 32 arguments, CUDA printf's most: 256 bytes


@wl.kernel
def _loud(x: wl.array(dtype=wl.int64)):
    i = wl.tid()
    v = x[i]
    wl.printf(_FMT, i, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v,
              v, v, v, v, v, v, v, v, v)
    x[i] = v + 1


def test_fifo_keeps_the_newest_records_that_fit():
    assert fifo_overwritten([]) == 0
    assert fifo_overwritten([PRINTF_FIFO_BYTES]) == 0                 # exactly full
    assert fifo_overwritten([1, PRINTF_FIFO_BYTES]) == 1              # the older one goes
    assert fifo_overwritten([10, 20, 30, 40], fifo_bytes=70) == 2     # 30 + 40 fit
    assert fifo_overwritten([10, 20, 30, 40], fifo_bytes=69) == 3


def test_output_past_the_fifo_keeps_the_newest_calls_and_says_so():
    n = 4096                                  # 4096 * 264 bytes: past 1 MiB
    record = RECORD_HEAD_BYTES + 32 * 8
    x = np.arange(n, dtype=np.int64)
    r = wl.launch(_loud, dim=n, block_dim=256, inputs=[x], device="sim")
    kept = PRINTF_FIFO_BYTES // record       # 3971 calls fit
    assert r.sim.printf_calls == n and r.sim.printf_bytes == n * record
    assert r.sim.printf_overwritten == n - kept
    lines = r.printed.splitlines()
    everything = r.sim.printed.splitlines()
    assert len(everything) == n and len(lines) == kept
    assert lines == everything[n - kept:]     # the newest, in order
    assert lines[-1].split()[0] == str(n - 1) and lines[0].split()[0] == str(n - kept)
    [note] = [t for t in r.notes if t.startswith("printf:")]
    assert f"{n:,} printf calls" in note and f"oldest {n - kept:,} calls" in note
    assert "cudaLimitPrintfFifoSize" in note and ".sim.printed" in note
    assert x.tolist() == list(range(1, n + 1))   # the launch itself is complete
    assert "printf:" in repr(r)


def test_output_within_the_fifo_is_all_there_without_a_note():
    x = np.arange(64, dtype=np.int64)
    r = wl.launch(_loud, dim=64, block_dim=64, inputs=[x], device="sim")
    assert r.sim.printf_overwritten == 0 and r.printed == r.sim.printed
    assert len(r.printed.splitlines()) == 64
    assert not any(t.startswith("printf:") for t in r.notes)
