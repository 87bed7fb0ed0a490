"""Compile latency of every corpus kernel, stage by stage (a benchmark, not a test).

    python benchmarks/compile_latency.py [--arch sm_90] [--repeats 5] [--kernels saxpy,...]
                                         [--no-cold]

For each kernel it prints a Markdown table row with:

* the median over ``--repeats`` warm compiles (same process, artifact cache
  bypassed) of each stage in ``CompiledKernel.timings``: frontend (Python AST
  → typed AST), lower (→ LLVM IR text), optimize (LLVM parse and verify,
  libdevice link, pass pipeline), ptx (NVPTX emission and the optimised IR's
  text), ptxas, nvdisasm; and parse→PTX, their sum up to PTX (all of
  ``frontend.make_typed_ast``, ``lower.make_llvm_ir`` and ``nvptx.make_ptx``);
* the cold total: a fresh ``python`` process (``sys.executable``) that
  imports warp_lab and compiles the kernel once with the cache bypassed,
  timed inside that process (compile only) and from outside (process wall
  time, including interpreter start and imports);
* the cache-hit time: the median wall time of ``wl.compile`` when the
  artifact is already in the in-memory cache;
* registers per thread from ``ptxas -v``.

Targets (issue 2): parse→PTX under 50 ms median warm per kernel, a cache hit
under 2 ms. The last lines say whether each was met.

All times are wall-clock seconds from ``time.perf_counter``, printed in ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

STAGES = ("frontend", "lower", "optimize", "ptx", "ptxas", "nvdisasm")
PARSE_TO_PTX = ("frontend", "lower", "optimize", "ptx")
TARGET_PTX_S = 0.050
TARGET_HIT_S = 0.002

_COLD_SCRIPT = """
import json, sys, time
t0 = time.perf_counter()
import warp_lab as wl
from warp_lab.examples import get
t1 = time.perf_counter()
ck = wl.compile(get(sys.argv[1]).kernel, arch=sys.argv[2], cache=False)
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "compile": t2 - t1}))
"""


def warm_timings(ex, arch: str, repeats: int) -> tuple[dict[str, float], object]:
    """Median seconds per stage over ``repeats`` uncached compiles (after one warm-up)."""
    import warp_lab as wl

    ck = wl.compile(ex.kernel, arch=arch, cache=False)         # warm-up: imports, libdevice
    runs = []
    for _ in range(repeats):
        ck = wl.compile(ex.kernel, arch=arch, cache=False)
        runs.append(dict(ck.timings))
    med = {s: statistics.median(r.get(s, float("nan")) for r in runs) for s in STAGES}
    med["parse_to_ptx"] = statistics.median(sum(r.get(s, 0.0) for s in PARSE_TO_PTX)
                                            for r in runs)
    return med, ck


def cold_timing(name: str, arch: str) -> dict[str, float]:
    """Compile in a new interpreter; returns in-process import/compile and outside wall time."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _COLD_SCRIPT, name, arch],
                          capture_output=True, text=True, timeout=300, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"cold compile of {name} failed:\n{proc.stderr[-2000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall"] = wall
    return out


def cache_hit_time(ex, arch: str, repeats: int) -> float:
    """Median wall seconds of ``wl.compile`` answered from the in-memory cache."""
    import warp_lab as wl

    wl.compile(ex.kernel, arch=arch)                           # fill the cache
    times = []
    for _ in range(max(repeats, 5)):
        t0 = time.perf_counter()
        wl.compile(ex.kernel, arch=arch)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _ms(seconds: float) -> str:
    return "–" if seconds != seconds else f"{seconds * 1e3:.1f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", default="sm_90", help="target SM (default sm_90)")
    parser.add_argument("--repeats", type=int, default=5, help="warm compiles per kernel (5)")
    parser.add_argument("--kernels", default="", help="comma-separated corpus names (all)")
    parser.add_argument("--no-cold", action="store_true", help="skip the new-process compiles")
    args = parser.parse_args(argv)

    from warp_lab.examples import CORPUS

    chosen = [e for e in CORPUS if not args.kernels or e.name in args.kernels.split(",")]
    if not chosen:
        parser.error(f"no corpus kernel among {args.kernels!r}")
    header = ["kernel", *STAGES, "parse→PTX", "cold compile", "cold process", "cache hit",
              "registers"]
    print(f"Compile latency, {args.arch}, median of {args.repeats} warm compiles (ms)\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    ptx_times, hit_times, failed = {}, {}, {}
    for ex in chosen:
        try:
            med, ck = warm_timings(ex, args.arch, args.repeats)
            cold = {"compile": float("nan"), "wall": float("nan")} if args.no_cold \
                else cold_timing(ex.name, args.arch)
            hit = cache_hit_time(ex, args.arch, args.repeats)
        except Exception as exc:  # noqa: BLE001 - a benchmark reports and goes on
            failed[ex.name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
            print(f"| {ex.name} | failed: {failed[ex.name]} |")
            continue
        ptx_times[ex.name], hit_times[ex.name] = med["parse_to_ptx"], hit
        regs = ck.resources.registers if ck.resources else "–"
        row = [ex.name, *(_ms(med[s]) for s in STAGES), _ms(med["parse_to_ptx"]),
               _ms(cold["compile"]), _ms(cold["wall"]), f"{hit * 1e3:.3f}", str(regs)]
        print("| " + " | ".join(row) + " |", flush=True)

    print()
    if ptx_times:
        slow = sorted(n for n, t in ptx_times.items() if t >= TARGET_PTX_S)
        worst = max(ptx_times, key=ptx_times.get)
        print(f"parse→PTX < {TARGET_PTX_S * 1e3:.0f} ms median warm: "
              f"{'met' if not slow else 'NOT met'} ({len(ptx_times) - len(slow)}/"
              f"{len(ptx_times)} kernels under; slowest {worst}: {ptx_times[worst] * 1e3:.1f} ms)"
              + (f"; over: {', '.join(slow)}" if slow else ""))
        slow_hits = sorted(n for n, t in hit_times.items() if t >= TARGET_HIT_S)
        worst = max(hit_times, key=hit_times.get)
        print(f"cache hit < {TARGET_HIT_S * 1e3:.0f} ms: "
              f"{'met' if not slow_hits else 'NOT met'} ({len(hit_times) - len(slow_hits)}/"
              f"{len(hit_times)} kernels under; slowest {worst}: {hit_times[worst] * 1e3:.3f} ms)")
    if failed:
        print(f"{len(failed)} kernels failed to compile: " + ", ".join(sorted(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
