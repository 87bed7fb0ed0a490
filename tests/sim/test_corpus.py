"""The compiler's corpus on the simulator at O0 and O3 with every check on, and the
planted-bug kernels with the exact report each must produce."""

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.examples import CORPUS, PLANTED_BUGS

ALL = ("memcheck", "racecheck", "barrier")


@pytest.mark.parametrize("opt", [0, 3])
@pytest.mark.parametrize("ex", CORPUS, ids=lambda e: e.name)
def test_corpus_kernel_matches_numpy(ex, opt):
    args = ex.make_inputs()
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    res = wl.launch(ex.kernel, inputs=args, device="sim", opt=opt, checks=ALL,
                    **ex.launch(args).kwargs())
    assert not res.partial
    assert not res.findings, [str(f) for f in res.findings]
    ex.check(before, args)


_KINDS = {"out-of-bounds write": ("out_of_bounds", "write"),
          "out-of-bounds read": ("out_of_bounds", "read"),
          "read-after-write hazard": ("race_raw", "read-after-write"),
          "divergent barrier": ("divergent_barrier", "divergent"),
          "instruction budget exceeded": ("budget", "budget")}


@pytest.mark.parametrize("opt", [0, 3])
@pytest.mark.parametrize("bug", PLANTED_BUGS, ids=lambda b: b.name)
def test_planted_bug_is_reported(bug, opt):
    args = bug.make_inputs()
    res = wl.launch(bug.kernel, inputs=args, device="sim", opt=opt, checks=ALL,
                    max_instructions=100_000, **bug.launch(args).kwargs())
    kind, word = _KINDS[bug.kind]
    hits = [f for f in res.findings if f.kind == kind]
    assert hits, [str(f) for f in res.findings]
    f = hits[0]
    assert word in f.message
    assert f.source_line == bug.line(), str(f)
    assert f.source_file.endswith("planted.py")
    if bug.block is not None:
        assert f.block == bug.block
    if bug.thread is not None:
        assert f.thread == bug.thread
    assert res.partial == (kind in ("out_of_bounds", "budget"))
