"""CUDA samples-style kernels (warp_lab/examples/cuda_samples.py) on the simulator: each
matches numpy and gets no finding from memcheck, racecheck, initcheck or the barrier
check, as compute-sanitizer gives none on them."""

from __future__ import annotations

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.examples import cuda_samples

pytest.importorskip("cuda.bindings.nvrtc")


@pytest.fixture(scope="module")
def kernels():
    names = [s.name for s in cuda_samples.SAMPLES]
    return wl.cuda_kernels(cuda_samples.SOURCE, instantiate=[n for n in names if "<" in n],
                           arch="sm_80")


@pytest.mark.parametrize("sample", cuda_samples.SAMPLES, ids=lambda s: s.name)
def test_sample_matches_numpy_without_findings(sample, kernels):
    args = sample.make_inputs()
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    r = wl.launch(kernels[sample.name], grid=sample.grid, block=sample.block, inputs=args,
                  shared_mem=sample.shared_mem, device="sim",
                  checks=("memcheck", "racecheck", "initcheck", "barrier"))
    assert r.sim.findings == []
    for k, want in sample.reference(before).items():
        if sample.exact:
            np.testing.assert_array_equal(args[k], want, err_msg=f"argument {k}")
        else:
            np.testing.assert_allclose(args[k], want, rtol=1e-5, err_msg=f"argument {k}")


def test_template_samples_are_instantiations_with_mangled_entries(kernels):
    ck = wl.compile(kernels["MatrixMulCUDA<16>"], sass=False)
    assert ck.entry == "_Z13MatrixMulCUDAILi16EEvPfPKfS2_ii"
    assert [repr(t) for _, t in ck.params] == ["float*", "const float*", "const float*",
                                               "wl.int32", "wl.int32"]
    names = {a.name for a in ck.source_map.arrays}
    assert names == {"As", "Bs"}
