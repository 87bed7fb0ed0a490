"""Shared fixtures for the analysis tests: the toolkit's occupancy calculator,
compiled once per session from ``cuda_occupancy.h`` with g++."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def _header_dir() -> Path | None:
    try:
        from cuda import pathfinder
        found = pathfinder.find_nvidia_header_directory("cudart")
    except Exception:  # pathfinder absent or too old: fall through to None
        return None
    if found and (Path(found) / "cuda_occupancy.h").is_file():
        return Path(found)
    return None


class OccupancyHarness:
    """``occ_harness.cpp`` built against the toolkit header; one process per batch."""

    def __init__(self, exe: Path):
        self.exe = exe

    def run(self, queries: list[str]) -> list[list[int]]:
        """Answer every query line in one process; one int list per query."""
        out = subprocess.run([str(self.exe)], input="\n".join(queries) + "\n",
                             capture_output=True, text=True, check=True, timeout=120)
        lines = out.stdout.splitlines()
        assert len(lines) == len(queries), out.stderr
        return [[int(x) for x in line.split()] for line in lines]


@pytest.fixture(scope="session")
def occ_harness(tmp_path_factory) -> OccupancyHarness:
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ is not installed: cannot build the cuda_occupancy.h reference harness")
    include = _header_dir()
    if include is None:
        pytest.skip("cuda_occupancy.h not found (install the nvidia-cuda-runtime wheel, "
                    "extra 'test')")
    exe = tmp_path_factory.mktemp("occ") / "occ_harness"
    subprocess.run([gxx, "-O1", "-std=c++11", "-I", str(include), str(HERE / "occ_harness.cpp"),
                    "-o", str(exe)], check=True, capture_output=True, timeout=120)
    return OccupancyHarness(exe)
