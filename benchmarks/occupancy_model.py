"""Occupancy model: how fast it is, and what it says across architectures.

    python benchmarks/occupancy_model.py

Prints (1) the time per ``occupancy()`` call and, when g++ and the toolkit's
``cuda_occupancy.h`` are present, how many sampled configurations per arch
agree with the header's ``cudaOccMaxActiveBlocksPerMultiprocessor``; (2) a
table of occupancy at 256 threads per block and the suggested block size for
typical register counts (TOOLCHAIN.md's reference kernels on sm_90: saxpy 12,
16x16 shared-tile matmul 32 registers + 2 KB shared, and 64 / 128 / 255).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from warp_lab.analysis import ARCHS, occupancy, suggest_block_size
from warp_lab.analysis.occupancy import _occupancy

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "analysis"))
from test_an_occupancy_header import _query_fields, _samples  # noqa: E402  (same sampler)


def _harness(tmp: str) -> Path | None:
    from cuda import pathfinder
    include = pathfinder.find_nvidia_header_directory("cudart")
    gxx = shutil.which("g++")
    if not gxx or not include:
        return None
    exe = Path(tmp) / "occ"
    subprocess.run([gxx, "-O1", "-I", include, str(ROOT / "tests/analysis/occ_harness.cpp"),
                    "-o", str(exe)], check=True)
    return exe


def speed_and_agreement() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        exe = _harness(tmp)
        print(f"{'arch':8} {'samples':>8} {'us/call':>8} {'agree':>8}")
        for a in ARCHS.values():
            samples = _samples(a)
            t0 = time.perf_counter()
            ours = [_occupancy(a, u, b, d, c, cc).active_blocks_per_sm
                    for u, b, d, c, cc in samples]
            per_call = (time.perf_counter() - t0) / len(samples) * 1e6
            agree = "-"
            if exe:
                queries = "".join(f"O {_query_fields(a, u, c, cc)} {b} {d}\n"
                                  for u, b, d, c, cc in samples)
                out = subprocess.run([str(exe)], input=queries, capture_output=True, text=True,
                                     check=True).stdout.splitlines()
                agree = str(sum(int(line.split()[1]) == o for line, o in zip(out, ours)))
            print(f"{a.name:8} {len(samples):8} {per_call:8.1f} {agree:>8}")


def table() -> None:
    kernels = [("saxpy", 12, 0), ("matmul16", 32, 2048), ("64 regs", 64, 0),
               ("128 regs", 128, 0), ("255 regs", 255, 0)]
    print("\noccupancy at 256 threads per block (limiter), then the suggested block size")
    print(f"{'arch':8}" + "".join(f"{name:>22}" for name, _, _ in kernels))
    for a in ARCHS.values():
        cells = []
        for _, regs, shared in kernels:
            occ = occupancy(registers=regs, shared=shared, arch=a, block_size=256)
            best = suggest_block_size(registers=regs, shared=shared, arch=a)
            cells.append(f"{occ.occupancy:4.0%} {occ.limiter[:5]:5} /{best.block_size:5}")
        print(f"{a.name:8}" + "".join(f"{c:>22}" for c in cells))


if __name__ == "__main__":
    speed_and_agreement()
    table()
