"""The stress suite at length: rounds of every part of ``tests/stress/stress_suite.py`` for
a number of minutes, then its counts (interrupts tried and honoured within a second, hang
shapes found and the time to find each, bad inputs tried, cache attacks tried, lost
arrays, internal errors, hangs). Not a test: ``tests/stress/test_stress.py`` runs one round
of each part in the test suite.

Usage (from the repository root; one process, so ``nice`` it on a shared machine)::

    nice -n 19 python -m tools.stress --minutes 20 [--seed S] [--parts interrupts,cache_attacks]

Exits with 1 when a promise broke (the lines that say which are printed first).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "stress"))
import stress_suite as S  # noqa: E402  (the stress tests' engine)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=1.0,
                        help="how long to run rounds (default 1); the round under way ends")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: time)")
    parser.add_argument("--parts", default=",".join(S.PARTS),
                        help=f"comma-separated parts (default all: {', '.join(S.PARTS)})")
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = [p for p in parts if p not in S.PARTS]
    if unknown:
        parser.error(f"unknown part(s) {', '.join(unknown)}; choose from {', '.join(S.PARTS)}")
    seed = args.seed if args.seed is not None else time.time_ns() % (1 << 31)
    rng = np.random.default_rng(seed)
    tally = S.Tally()
    shell = S._shell() if {"bad_inputs", "interrupts"} & set(parts) else None
    start = time.monotonic()
    end = start + 60 * args.minutes
    rounds = 0
    seconds = dict.fromkeys(parts, 0.0)
    while rounds == 0 or time.monotonic() < end:
        for part in parts:
            t0 = time.monotonic()
            if part in ("bad_inputs", "interrupts"):
                S.PARTS[part](rng, 1, tally, shell)
            else:
                S.PARTS[part](rng, 1, tally)
            seconds[part] += time.monotonic() - t0
        rounds += 1
        print(f"round {rounds}: {time.monotonic() - start:.0f} s, "
              f"{len(tally.failures())} failures", file=sys.stderr, flush=True)
    failures = tally.failures()
    for line in failures:
        print("FAILED:", line)
    print(f"python -m tools.stress --minutes {args.minutes:g} --seed {seed}: {rounds} rounds "
          f"in {time.monotonic() - start:.0f} s ("
          + ", ".join(f"{p} {s:.0f} s" for p, s in seconds.items()) + ")")
    print(tally.summary())
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
