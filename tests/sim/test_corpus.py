"""The compiler's corpus on the simulator at O0 and O3 with every check on, and the
planted-bug kernels with the exact report each must produce."""

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.examples import CORPUS, PLANTED_BUGS

ALL = ("memcheck", "racecheck", "initcheck", "barrier")


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
          "uninitialized shared read": ("uninitialized", "uninitialized"),
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


@wl.kernel
def _trig(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32),
          xd: wl.array(dtype=wl.float64), yd: wl.array(dtype=wl.float64)):
    i = wl.tid()
    y[i] = wl.sin(x[i])
    yd[i] = wl.cos(xd[i])


@pytest.mark.parametrize("opt", [0, 3])
def test_libdevice_trig_with_huge_arguments(opt):
    """Payne-Hanek reduction in libdevice: the __cudart_i2opi tables (initialised module
    globals), a .local depot, and inline-asm carry chains with scoped registers."""
    x = np.array([0.5, 1e4, 1e6, 3e7, 1e20, 1e30, -2.5e38, 7.0] * 8, np.float32)
    xd = x.astype(np.float64) * 1.0000001
    y, yd = np.zeros_like(x), np.zeros_like(xd)
    ck = wl.compile(_trig, opt=opt)
    assert "__cudart_i2opi" in ck.ptx and ".local" in ck.ptx and "madc" in ck.ptx
    res = wl.launch(_trig, inputs=[x, y, xd, yd], dim=64, device="sim", opt=opt, checks=ALL)
    assert not res.sim.findings
    # libdevice: sinf within 2 ulp, cos within 1 ulp (CUDA Programming Guide, Table
    # "Single-Precision Mathematical Standard Library Functions with Maximum ULP Error")
    np.testing.assert_allclose(y, np.sin(x.astype(np.float64)), rtol=0, atol=2 * 2.0 ** -24)
    np.testing.assert_allclose(yd, np.cos(xd), rtol=0, atol=2.0 ** -52)
