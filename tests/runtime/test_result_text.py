"""What a ``LaunchResult`` prints: a teacher's reduction with the barrier of its loop left
out gave 7 findings and the repr showed 5 with no word about the other 2."""

import numpy as np

import warp_lab as wl
from warp_lab.runtime.result import REPR_FINDINGS


@wl.kernel
def sum_no_barrier(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    buf = wl.shared_array(256, wl.float32)
    t = wl.thread_idx.x
    buf[t] = x[wl.block_idx.x * 256 + t]
    wl.syncthreads()
    s = 128
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]    # no wl.syncthreads() in the loop: a race per step
        s //= 2
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
