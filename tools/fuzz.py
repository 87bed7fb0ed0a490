"""The differential fuzzer at length (issue 23): random kernels of the documented subset
(``tests/fuzz/fuzz_engine.py``) compiled with warp_lab, launched on the simulator with the
default checks and compared bit-exactly with the NumPy reference of ``docs/language.md``'s
rules. Prints the seed of every kernel that failed, its source (paste it into a cell) and
the counts: kernels, kernels per second, internal errors, wrong results, false findings.

Usage (from the repository root; one process, so ``nice`` it on a shared machine)::

    nice -n 19 python -m tools.fuzz --minutes 20 [--seed S]
    nice -n 19 python -m tools.fuzz --kernels 500 --seed 1000
    python -m tools.fuzz --replay 1234          # one kernel: its source, inputs and result

Kernel ``k`` of a run is seed ``S + k``. Exits with 1 when a kernel failed.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fuzz"))
import fuzz_engine as F  # noqa: E402  (the fuzz test's engine)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=None, help="run for this long")
    parser.add_argument("--kernels", type=int, default=None, help="run this many kernels")
    parser.add_argument("--seed", type=int, default=None, help="first seed (default: time)")
    parser.add_argument("--replay", type=int, default=None, help="print and run one seed")
    args = parser.parse_args(argv)
    # fuzz kernels are all different: keep them out of the user's compile cache
    os.environ.setdefault("WARP_LAB_CACHE_DIR", tempfile.mkdtemp(prefix="wl-fuzz-"))
    if args.replay is not None:
        case = F.make_case(args.replay)
        print(case.source)
        print(F.inputs_note(case))
        out = F.run_case(args.replay)
        print(out.status, out.detail)
        return 0 if out.status == "ok" else 1
    if args.minutes is None and args.kernels is None:
        args.minutes = 1.0
    seed = args.seed if args.seed is not None else time.time_ns() % (1 << 31)
    print(f"first seed {seed}", flush=True)
    end = time.monotonic() + 60 * args.minutes if args.minutes is not None else None
    counts = {"ok": 0, "internal": 0, "wrong": 0, "finding": 0, "rejected": 0}
    start = time.monotonic()
    k = 0
    signal.signal(signal.SIGTERM, _interrupt)  # `timeout`/kill: stop, still print the counts
    try:
        k = _loop(args, seed, end, counts)
    except KeyboardInterrupt:
        k = sum(counts.values())
        print("interrupted: the counts so far", flush=True)
    seconds = time.monotonic() - start
    print(f"kernels {k} (seeds {seed}..{seed + k - 1}), statements {k * F.EXPRS_PER_KERNEL}, "
          f"{seconds:.1f} s, {k / max(seconds, 1e-9):.2f} kernels/s; internal errors "
          f"{counts['internal']}, wrong results {counts['wrong']}, false findings "
          f"{counts['finding']}, rejected by the compiler (fuzzer bugs) {counts['rejected']}")
    return 0 if counts["ok"] == k else 1


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _loop(args, seed, end, counts) -> int:
    """Run kernels ``seed, seed + 1, ...`` until ``args.kernels`` or the time ``end``;
    failures are printed with their source; returns how many ran."""
    start = time.monotonic()
    k = 0
    while True:
        if args.kernels is not None and k >= args.kernels:
            break
        if end is not None and time.monotonic() >= end:
            break
        out = F.run_case(seed + k)
        counts[out.status] += 1
        if out.status != "ok":
            print(f"--- seed {out.seed}: {out.status}\n{out.detail}\n{out.source}", flush=True)
        k += 1
        if k % 50 == 0:
            print(f"{k} kernels, {time.monotonic() - start:.0f} s, {counts}", file=sys.stderr,
                  flush=True)
    return k


if __name__ == "__main__":
    sys.exit(main())
