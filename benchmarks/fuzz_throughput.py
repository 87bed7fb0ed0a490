"""Differential fuzzer throughput (issue 23): kernels per second of ``tests/fuzz``'s
engine, each a fresh random kernel of ``EXPRS_PER_KERNEL`` statements compiled by warp_lab
(LLVM, ptxas; the launch's index-checked variant too), launched on the simulator with the
default checks and compared with its NumPy reference. Prints one Markdown table.

Usage: ``python benchmarks/fuzz_throughput.py [--kernels 30] [--seed 0]``. The counts of a
long run come from ``python -m tools.fuzz --minutes N`` (see ``benchmarks/findings.md``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
import fuzz_engine as F  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    os.environ.setdefault("WARP_LAB_CACHE_DIR", tempfile.mkdtemp(prefix="wl-fuzz-bench-"))
    if args.seed < 0 or args.kernels < 1:
        ap.error("--seed must be >= 0 and --kernels >= 1")
    # imports and first-compile costs out of the timing: a kernel past the timed seeds
    F.run_case(args.seed + args.kernels)
    counts: dict[str, int] = {}
    t0 = time.perf_counter()
    for k in range(args.kernels):
        status = F.run_case(args.seed + k).status
        counts[status] = counts.get(status, 0) + 1
    dt = time.perf_counter() - t0
    n = args.kernels
    print("kernels | statements | s | kernels/s | statements/s | ok | internal | wrong | "
          "findings | rejected")
    print(" | ".join(["---"] * 10))
    print(f"{n} | {n * F.EXPRS_PER_KERNEL} | {dt:.1f} | {n / dt:.2f} | "
          f"{n * F.EXPRS_PER_KERNEL / dt:.1f} | " + " | ".join(
              str(counts.get(s, 0)) for s in ("ok", "internal", "wrong", "finding", "rejected")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
