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
