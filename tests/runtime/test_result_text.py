"""What a ``LaunchResult`` prints: a teacher's reduction with the barrier of its loop left
out gave 7 findings and the repr showed 5 with no word about the other 2. (Those 7, one per
unrolled copy of the loop's line, are one finding now: ``tests/runtime/test_finding_merge.py``;
the reduction here is unrolled by hand, one line per step, so its 7 races are 7 findings.)"""

import numpy as np

import warp_lab as wl
from warp_lab.runtime.result import REPR_FINDINGS


@wl.kernel
def sum_no_barrier(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    buf = wl.shared_array(256, wl.float32)
    t = wl.thread_idx.x
    buf[t] = x[wl.block_idx.x * 256 + t]
    wl.syncthreads()
    if t < 128:
        buf[t] += buf[t + 128]
    if t < 64:
        buf[t] += buf[t + 64]   # no wl.syncthreads() between the steps: a race per step
    if t < 32:
        buf[t] += buf[t + 32]
    if t < 16:
        buf[t] += buf[t + 16]
    if t < 8:
        buf[t] += buf[t + 8]
    if t < 4:
        buf[t] += buf[t + 4]
    if t < 2:
        buf[t] += buf[t + 2]
    if t < 1:
        buf[t] += buf[t + 1]
    if t == 0:
        wl.atomic_add(out, 0, buf[0])


def test_repr_counts_the_findings_it_leaves_out():
    x, out = np.ones(256, np.float32), np.zeros(1, np.float32)
    res = wl.launch(sum_no_barrier, grid=1, block=256, inputs=[x, out], device="sim",
                    checks=("memcheck", "racecheck", "barrier"))
    n = len(res.findings)
    assert n > REPR_FINDINGS, [str(f) for f in res.findings]
    text = repr(res)
    assert text.count("  finding: ") == REPR_FINDINGS
    more = n - REPR_FINDINGS
    assert f"... and {more} more finding{'s' if more > 1 else ''} (.findings lists all {n})" \
        in text
    for f in res.findings[:REPR_FINDINGS]:
        assert str(f) in text


@wl.kernel
def add_one(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    x[i] += 1.0


def test_a_partial_block_says_how_many_threads_run_the_kernel():
    # notebook 01: "dim=n runs exactly n threads", then the launch said "(1024 threads)"
    from warp_lab.notebook.results import launch_html

    x = np.zeros(1000, np.float32)
    res = wl.launch(add_one, dim=1000, inputs=[x], device="sim")
    assert res.threads == 1024 and x.sum() == 1000
    want = "1,024 threads: 1,000 inside dim=, 24 past it return at entry"
    assert res.threads_text == want
    assert f"({want})" in repr(res) and f"({want})" in launch_html(res)
    y = np.zeros((5, 40), np.float32)             # 2-D: 64 x 8 threads, 200 inside
    res = wl.launch(add_one_2d, dim=y.shape, inputs=[y], device="sim")
    total = res.threads
    assert res.threads_text == f"{total:,} threads: 200 inside dim=, {total - 200:,} past it " \
        "return at entry"
    # whole blocks, and grid=/block= launches: every thread runs the kernel
    res = wl.launch(add_one, dim=1024, inputs=[np.zeros(1024, np.float32)], device="sim")
    assert res.threads_text == "1,024 threads" and "(1,024 threads)" in repr(res)
    res = wl.launch(add_one, grid=2, block=64, inputs=[np.zeros(128, np.float32)],
                    device="sim")
    assert res.threads_text == "128 threads"


@wl.kernel
def add_one_2d(y: wl.array2d(dtype=wl.float32)):
    i, j = wl.tid()
    y[i, j] += 1.0


@wl.kernel
def _scale(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    x[i] = 2.0 * x[i]


def test_simulator_time_is_labelled_cpu_time_not_gpu_time():
    # a lecturer's students read the simulator's "median 13.6 ms" as GPU time ("padding
    # made it 4x slower"): the text and the notebook view say what the time is
    from warp_lab.notebook.results import launch_html

    res = wl.launch(_scale, dim=64, inputs=[np.ones(64, np.float32)], device="sim")
    ms = f"{res.time * 1e3:.3f} ms"
    said = f"1 launch, simulated in {ms} (CPU simulator time, not GPU time)"
    assert res.time_text == said and said in repr(res), repr(res)
    assert said in launch_html(res)
    assert "median" not in repr(res).splitlines()[1]
    res = wl.launch(_scale, dim=64, inputs=[np.ones(64, np.float32)], device="sim", repeat=3)
    ms = f"{res.time * 1e3:.3f} ms"
    assert res.time_text == (f"3 launches, simulated in {ms} each (median; CPU simulator "
                             "time, not GPU time)")
