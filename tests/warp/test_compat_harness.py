"""The Warp compatibility harness (``python -m benchmarks.warp_compat``) on a fixed, small
subset of warp-lang's own files: kernels cut out of the wheel's sources, run on Warp's CPU
device and on warp_lab's simulator with the same inputs, outputs compared. The whole
corpus is the benchmark's (docs/benchmarks.md)."""

from __future__ import annotations

import os

import pytest

from benchmarks import warp_compat


@pytest.fixture(scope="module")
def root():
    pytest.importorskip("warp")
    return warp_compat.warp_root()


def test_extract_keeps_kernels_and_swaps_nothing_else(root):
    text, kernels = warp_compat.extract(os.path.join(root, "tests", "test_bool.py"))
    names = [n for n, _ in kernels]
    assert "identity_test" in names and "check_compile_constant" in names
    assert "import warp as wp" in text and "unittest" not in text


@pytest.mark.slow  # a warp-lang worker process and its CPU compile: ~10-30 s
def test_subset_matches_warp_cpu_and_excludes_meshes(root, tmp_path):
    results = {"tests/test_bool.py": warp_compat.run_file(
        os.path.join(root, "tests", "test_bool.py"), str(tmp_path))}
    assert results["tests/test_bool.py"]["identity_test"]["status"] == "matched"
    assert results["tests/test_bool.py"]["check_compile_constant"]["status"] == "matched"
    _, kernels = warp_compat.extract(os.path.join(root, "examples/core/example_mesh.py"))
    assert dict((n, warp_compat.is_excluded(src)) for n, src in kernels)["simulate"]
    s = warp_compat.summarise(results)
    assert s["matched"] >= 2 and s["kernels"] == len(results["tests/test_bool.py"])
    md = "\n".join(warp_compat.table(s, "python -m benchmarks.warp_compat"))
    assert "| files | kernels |" in md and "matched" in md
