"""``python -m benchmarks``: warp_lab side by side with NVRTC, Numba CUDA and Warp, in one run.

    python -m benchmarks [--repeats 3] [--archs sm_80,sm_90] [--kernels saxpy,...]
                         [--out docs/benchmarks.md] [--artifacts DIR] [--no-sim]
                         [--interactive-repeats 3] [--warp-compat subset|full|off]

Prints Markdown and writes it (with the machine and the tool versions) to
``--out``. Sections:

1. compile latency, warm and cold (one fresh worker process per tool);
2. code quality per kernel and arch, every tool's PTX through the same
   ptxas/nvdisasm, with the issue-8 target checks and the evidence for
   each gap;
   and what-if experiments that price candidate compiler changes
   (:mod:`benchmarks.whatif`);
3. simulator throughput (``benchmarks/sim_throughput.py`` when present), and the
   compiled tier vs the interpreter vs Warp's CPU device (:mod:`benchmarks.sim_compiled`);
4. launch overhead (needs a GPU);
5. interactive latency through a real Jupyter kernel (:mod:`benchmarks.interactive`,
   issue 24): ``--interactive-repeats N`` rounds, 0 to skip;
6. Warp compatibility (:mod:`benchmarks.warp_compat`, issue 19): ``--warp-compat
   subset`` (default, a fixed subset, a few minutes), ``full`` (the whole corpus, ~8
   minutes, rewrites ``benchmarks/warp_compat_full.md``, quoted by later subset runs) or
   ``off``;
7. CUDA C++ cells (``benchmarks/cuda_cells.py``, issue 20), ``--no-cuda-cells`` to skip;
8. the differential fuzzer's rate (``benchmarks/fuzz_throughput.py``, issue 23),
   ``--no-fuzz`` to skip;
9. the hand-written analysis of the gaps, ``benchmarks/findings.md``, copied in (and
   section 8 copies the long fuzzer runs' counts from ``benchmarks/fuzz_runs.md``);
10. the stress suite's counts (``python -m tools.stress``, issue 25) for
   ``--stress-minutes`` (default 2, 0 to skip).

Hand-written analysis of the gaps lives in ``benchmarks/findings.md`` and is
copied into the report after the generated tables.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

from benchmarks import report
from benchmarks.kernels import BENCH_KERNELS
from benchmarks.worker import TOOLS

__all__ = ["main", "run_worker", "run_workers_parallel", "machine_lines", "warp_compat_section",
           "stress_section"]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_WORKER_TIMEOUT_S = 240
_SIM_TIMEOUT_S = 150
#: arguments for benchmarks/sim_throughput.py that keep it inside the run's time box
SIM_ARGS: list[str] = []
_INTERACTIVE_TIMEOUT_S = 600
#: benchmarks/sim_compiled.py: the interpreter's mandelbrot 1024² is ~15 s a column
_SIM_COMPILED_TIMEOUT_S = 600
_WARP_COMPAT_SUBSET_TIMEOUT_S = 600
_WARP_COMPAT_FULL_TIMEOUT_S = 3600
#: the whole-corpus Warp compatibility table, kept from the last full run (~8 min on 2 cores)
WARP_COMPAT_FULL = os.path.join(ROOT, "benchmarks", "warp_compat_full.md")


#: the tools whose *first* compile is a column of the latency table (Numba's is also the
#: issue-8 yardstick); the extra first-compile rounds measure only these
FIRST_ROUND_TOOLS = ("numba", "warp")


def merge_first_compiles(lat: dict, rounds: list[dict]) -> None:
    """Replace each tool's per-kernel *first* times in ``lat`` by their median over ``rounds``.

    A first compile happens once per process, so one process gives one sample of it, and on
    a shared machine one sample can land on a load spike either way (Numba's spmv_csr once
    measured 72 ms first against 104 ms warm). ``rounds`` are ``latency`` worker results from
    fresh processes, ``lat`` among them; a round that failed, or lacks a tool or kernel,
    contributes nothing there. Each kernel's ``first_samples`` says how many samples its
    median has.

    Args:
        lat: the main ``latency`` result (with the warm repeats), changed in place.
        rounds: every round's result, ``lat`` first.
    """
    import statistics

    for tool in FIRST_ROUND_TOOLS:
        kernels = lat.get(tool, {}).get("kernels", {})
        for name, rec in kernels.items():
            if "first" not in rec:
                continue
            samples: dict[str, list[float]] = {}
            for r in rounds:
                first = r.get(tool, {}).get("kernels", {}).get(name, {}).get("first", {})
                for key, v in first.items():
                    if key != "missing":
                        samples.setdefault(key, []).append(v)
            rec["first"] = {**rec["first"],
                            **{k: statistics.median(v) for k, v in samples.items()}}
            rec["first_samples"] = len(samples.get("ptx", ()))


def run_worker(args: list[str], timeout: float = _WORKER_TIMEOUT_S) -> dict:
    """Run ``python -m benchmarks.worker *args`` in a fresh process; its JSON result.

    A worker that fails or times out gives ``{"error": "..."}`` (shown as n/a),
    never an exception: one broken peer must not lose the other columns.
    """
    with tempfile.TemporaryDirectory(prefix="wl-bench-") as tmp:
        out = os.path.join(tmp, "result.json")
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
        try:
            proc = subprocess.run([sys.executable, "-m", "benchmarks.worker", *args, "--out", out],
                                  cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"worker {' '.join(args[:3])} timed out after {timeout:.0f} s"}
        if proc.returncode != 0 or not os.path.exists(out):
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            return {"error": f"worker exited {proc.returncode}: {tail[0][:300]}"}
        with open(out) as f:
            return json.load(f)


def run_workers_parallel(jobs: list[list[str]], timeout: float = _WORKER_TIMEOUT_S) -> list[dict]:
    """:func:`run_worker` for several jobs at once (threads around subprocesses), in order.

    Used for the code-quality workers only: they measure no time, so
    running them side by side does not bias anything.
    """
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, min(len(jobs), os.cpu_count() or 1))) as pool:
        return list(pool.map(lambda job: run_worker(job, timeout), jobs))


def _tool_line(name: str, sm: int) -> str:
    try:
        from warp_lab.compiler.toolchain import find_tool

        t = find_tool(name, sm)
        return f"{t.version} ({t.path})"
    except Exception as exc:  # missing tool: say so in the header
        return f"missing ({exc})"


def _gpu_line() -> str:
    try:
        from warp_lab.runtime.device import get_device

        dev = get_device("cuda")
        return f"{dev.name} (sm_{dev.compute_capability[0]}{dev.compute_capability[1]})"
    except Exception as exc:  # no driver / no GPU here: the usual case
        why = str(exc).split(" (")[0].strip() or type(exc).__name__
        return f"none ({why})"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_lines() -> list[str]:
    """Markdown bullet lines: date, machine, Python and every tool's version."""
    import llvmlite
    import llvmlite.binding as llvm

    from benchmarks import peers

    v = peers.versions()
    return [
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- machine: {platform.machine()}, {_cpu_model()}, {os.cpu_count()} logical CPUs "
        f"(shared with other jobs), {platform.system()} {platform.release()}",
        f"- GPU: {_gpu_line()}",
        f"- Python {platform.python_version()}; llvmlite {llvmlite.__version__} "
        f"(LLVM {'.'.join(map(str, llvm.llvm_version_info))})",
        f"- ptxas {_tool_line('ptxas', 90)}; nvdisasm {_tool_line('nvdisasm', 90)}",
        f"- NVRTC {v['NVRTC']}; numba-cuda {v['numba-cuda']} (numba {v['numba']}); "
        f"warp-lang {v['warp-lang']}",
    ]


def _markdown_part(stdout: str) -> str:
    """The Markdown a script printed, without banners before it (Warp prints one), its
    headings demoted below this report's section headings."""
    lines = stdout.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith(("#", "|")) or " | " in ln),
                 len(lines))
    return "\n".join("##" + ln if ln.startswith("#") else ln for ln in lines[start:]).rstrip()


def _script_section(name: str, args: list[str], what: str,
                    timeout: float = _SIM_TIMEOUT_S) -> list[str]:
    """Run ``benchmarks/<name>`` (a script, or ``-m benchmarks.<module>`` for a name without
    ``.py``) in a fresh process and quote its Markdown, or say why not."""
    module = not name.endswith(".py")
    path = os.path.join(ROOT, "benchmarks", name + (".py" if module else ""))
    cmd = " ".join(["python", *(["-m", f"benchmarks.{name}"] if module
                                else [f"benchmarks/{name}"]), *args])
    if not os.path.exists(path):
        return [f"{report.NA}: benchmarks/{os.path.basename(path)} is not in this tree yet."]
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    argv = [sys.executable, *(["-m", f"benchmarks.{name}"] if module else [path]), *args]
    try:
        proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return [f"{report.NA}: `{cmd}` ran past {timeout:.0f} s."]
    text = _markdown_part(proc.stdout)
    if proc.returncode != 0 or not text:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return [f"{report.NA}: `{cmd}` exited {proc.returncode}: {tail[0][:300]}"]
    if text.startswith("Output of `"):  # the script says itself what it ran
        return [text]
    return [f"Output of `{cmd}` ({what}), same run.", "", text]


def warp_compat_section(mode: str) -> list[str]:
    """The Warp compatibility table (:mod:`benchmarks.warp_compat`) run in a fresh process:
    ``mode`` ``"subset"`` runs its fixed ``SUBSET`` and quotes the last whole-corpus table
    (:data:`WARP_COMPAT_FULL`, dated, from an earlier run) below it; ``"full"`` runs the
    whole corpus and rewrites that file."""
    if mode == "full":
        return _script_section("warp_compat",
                               ["--md-out", os.path.relpath(WARP_COMPAT_FULL, ROOT)],
                               "issue 19", timeout=_WARP_COMPAT_FULL_TIMEOUT_S)
    out = _script_section("warp_compat", ["--subset"], "issue 19, the fixed subset",
                          timeout=_WARP_COMPAT_SUBSET_TIMEOUT_S)
    if os.path.exists(WARP_COMPAT_FULL):
        with open(WARP_COMPAT_FULL, encoding="utf-8") as f:
            full = _markdown_part(f.read())
        out += ["", "The whole corpus, from the last `python -m benchmarks --warp-compat full` "
                "(or `python -m benchmarks.warp_compat`) run, dated in its text: not this run "
                f"(benchmarks/{os.path.basename(WARP_COMPAT_FULL)}).", "", full]
    return out


def stress_section(minutes: float, parts: str | None = None,
                   timeout: float = _SIM_TIMEOUT_S) -> list[str]:
    """Run the stress suite (``python -m tools.stress``, issue 25) for ``minutes`` (float,
    at least one round of each part) in a fresh process and quote its counts: interrupts
    tried and honoured within a second, hang shapes found and the simulated seconds to
    find each, bad inputs and cache attacks tried, lost arrays, internal errors and hangs.
    ``parts``: a comma-separated subset of the suite's parts (default all). A broken
    promise (exit 1) is said above the counts; a crash or a run past ``timeout`` (seconds,
    beyond ``minutes``) is said instead of them."""
    args = ["--minutes", f"{minutes:g}", "--seed", str(time.time_ns() % (1 << 31))]
    args += ["--parts", parts] if parts else []
    cmd = " ".join(["python -m tools.stress", *args])
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    try:
        proc = subprocess.run([sys.executable, "-m", "tools.stress", *args], cwd=ROOT,
                              env=env, capture_output=True, text=True,
                              timeout=60 * minutes + timeout)
    except subprocess.TimeoutExpired:
        return [f"{report.NA}: `{cmd}` ran past {60 * minutes + timeout:.0f} s."]
    text = proc.stdout.strip()
    if proc.returncode not in (0, 1) or not text:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return [f"{report.NA}: `{cmd}` exited {proc.returncode}: {tail[0][:300]}"]
    verdict = ("every promise held (0 lost arrays, 0 internal errors, 0 hangs)"
               if proc.returncode == 0 else "**a promise broke**: the FAILED lines say which")
    return [f"Output of `{cmd}`, same run: {verdict}.", "", "```", text, "```"]


def _hand_kept(name: str) -> list[str]:
    """The text of ``benchmarks/<name>`` (hand-kept Markdown copied into the report), as
    one item; nothing when the file is missing."""
    path = os.path.join(ROOT, "benchmarks", name)
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [f.read().rstrip()]


def _findings() -> list[str]:
    return _hand_kept("findings.md")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3, help="warm compiles per kernel (median)")
    ap.add_argument("--archs", default="sm_80,sm_90")
    ap.add_argument("--latency-arch", default="sm_90")
    ap.add_argument("--first-rounds", type=int, default=5,
                    help="fresh processes measuring each peer's first compile (median)")
    ap.add_argument("--kernels", default=",".join(BENCH_KERNELS))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"),
                    help="Markdown file to write ('-' for stdout only)")
    ap.add_argument("--artifacts", default=None, help="write every PTX and SASS here")
    ap.add_argument("--no-sim", action="store_true", help="skip the simulator section")
    ap.add_argument("--no-whatif", action="store_true", help="skip the what-if experiments")
    ap.add_argument("--interactive-repeats", type=int, default=3,
                    help="interleaved rounds of the interactive (Jupyter kernel) table; 0 skips it")
    ap.add_argument("--warp-compat", choices=("subset", "full", "off"), default="subset",
                    help="Warp compatibility table: the fixed subset (a few minutes, default), "
                         "the whole corpus (~8 min; also rewrites benchmarks/warp_compat_full.md)"
                         ", or none")
    ap.add_argument("--no-notebooks", action="store_true",
                    help="skip timing the teaching notebooks' launches "
                         "(benchmarks/notebook_launches.py)")
    ap.add_argument("--stress-minutes", type=float, default=2.0,
                    help="minutes of the stress suite (python -m tools.stress); 0 to skip")
    ap.add_argument("--no-fuzz", action="store_true",
                    help="skip the differential fuzzer's throughput (benchmarks/fuzz_throughput.py)")
    ap.add_argument("--no-cuda-cells", action="store_true",
                    help="skip the CUDA C++ cells section (benchmarks/cuda_cells.py)")
    args = ap.parse_args(argv)
    kernels = [k for k in args.kernels.split(",") if k]
    unknown = sorted(set(kernels) - set(BENCH_KERNELS))
    if unknown:
        ap.error(f"unknown kernels {unknown}; choose from {', '.join(BENCH_KERNELS)}")
    archs = [a for a in args.archs.split(",") if a]
    t_start = time.perf_counter()
    common = ["--kernels", ",".join(kernels)]

    phases: dict[str, float] = {}

    def lap(name: str, t0: float) -> float:
        now = time.perf_counter()
        phases[name] = now - t0
        return now

    t = t_start
    lat = run_worker(["latency", "--arch", args.latency_arch, "--repeats", str(args.repeats),
                      *common])
    if "error" in lat:
        lat = {tool: {"error": lat["error"]} for tool in TOOLS}
    rounds = [lat] + [run_worker(["latency", "--arch", args.latency_arch, "--repeats", "0",
                                  "--tools", ",".join(FIRST_ROUND_TOOLS), *common])
                      for _ in range(args.first_rounds - 1)]
    merge_first_compiles(lat, rounds)
    t = lap("warm latency", t)
    for tool in TOOLS:
        cold = run_worker(["latency-cold", "--tool", tool, "--arch", args.latency_arch])
        lat.setdefault(tool, {}).update({k: v for k, v in cold.items() if k != "tool"})
    t = lap("cold latency", t)
    extra = ["--artifacts", args.artifacts] if args.artifacts else []
    # NVRTC+restrict (≤ 1 SASS instruction from NVRTC so far) only on the latency arch: time box
    jobs = [["quality", "--arch", arch, *common, *extra,
             *([] if arch == args.latency_arch else
               ["--tools", "warp_lab,nvrtc,numba,warp"])] for arch in archs]
    if not args.no_whatif:
        jobs += [["whatif", "--arch", arch, *common, *flag] for arch in archs
                 for flag in ([], ["--short-ptr"])]
    results = run_workers_parallel(jobs)
    t = lap("code quality + what-if", t)
    quals = results[:len(archs)]
    whatifs = {}
    for res, job in zip(results[len(archs):], jobs[len(archs):]):
        arch = job[2]
        merged = whatifs.setdefault(arch, {"arch": arch, "kernels": {}})
        if "error" in res:
            merged.setdefault("errors", []).append(res["error"])
            continue
        for name, row in res["kernels"].items():
            merged["kernels"].setdefault(name, {}).update(row)
    for q, arch in zip(quals, archs):
        q.setdefault("arch", arch)

    md = ["# Benchmarks: warp_lab side by side with NVRTC, Numba CUDA and Warp", "",
          "Generated by `python -m benchmarks` (benchmarks/run_all.py); every number below "
          "comes from the one run described here. Do not edit by hand: edit "
          "benchmarks/findings.md for the analysis. Reproduce: `pip install -e .[bench]` (NVRTC, "
          "numba-cuda, warp-lang), then `python -m benchmarks` (`--help` for options; "
          "`--artifacts DIR` keeps every PTX and SASS compared here).", "", *machine_lines(),
          f"- repeats: {args.repeats} warm compiles per kernel (median); first compiles: "
          f"median of {args.first_rounds} fresh processes", "",
          "Kernels: the warp_lab corpus kernels (warp_lab/examples) and their twins written "
          "for each peer in benchmarks/kernels/ (CUDA C++ for NVRTC, Numba CUDA, Warp).", "",
          f"## 1. Compile latency ({args.latency_arch}, milliseconds)", "",
          "Process-cold: each tool alone in a fresh process (import, then its first compile). "
          "Per kernel: all tools in one process after one warm-up compile each (of a kernel "
          "outside the list), interleaved (rotating order) so load on the shared machine hits "
          "all alike; *first* is the first compile of that kernel (one sample per process, "
          "so the median over the fresh processes named above, the one with the warm repeats "
          "among them), *warm* the median of the repeats that follow. "
          "warp_lab: `wl.compile(kernel, cache=False)`, →PTX = "
          "frontend+lower+optimise+PTX stages (`ck.timings`), →SASS = the whole `wl.compile` "
          "including ptxas and nvdisasm (one warm compile). "
          "NVRTC: CUDA C++ → PTX. Numba: `compile_ptx`. Warp: `wp.compile_aot_module` → PTX "
          "(its own codegen + NVRTC). Ratios: peer time ÷ warp_lab →PTX time.", "",
          *report.latency_tables(lat, kernels), "", "Targets (issue 8):", "",
          *report.latency_targets(lat, kernels), ""]
    md += ["## 2. Code quality", "",
           "Every tool's PTX assembled by the same ptxas (`-O3`, no line info); instructions "
           "counted from the same nvdisasm's listing, or for the columns without opcode "
           "evidence straight from the cubin (the counts agree, tests/benchmarks). NVRTC = CUDA C++ twin, default flags (= `nvcc -O3`), pointers "
           "may alias like warp_lab's arrays; NVRTC+restrict = the same source with "
           f"`__restrict__` on every pointer, compiled for {args.latency_arch} only (– elsewhere, "
           "to keep the run short). SASS = static instruction count, NOP padding left "
           "out. wl÷NVRTC below 1 means warp_lab's code is smaller.", ""]
    for q in quals:
        md += [f"### {q['arch']}", ""]
        if "error" in q:
            md += [f"{report.NA}: {q['error']}", ""]
            continue
        md += [*report.quality_table(q, kernels), ""]
    md += ["Targets (issue 8, NVRTC without restrict as the reference):", "",
           *report.quality_targets([q for q in quals if "error" not in q], kernels), ""]
    for q in quals:
        if "error" in q:
            continue
        md += [f"PTX features, {q['arch']} (static counts, see benchmarks/quality.py):", "",
               *report.features_table(q, kernels), ""]
    evidence = [ln for q in quals if "error" not in q for ln in report.gap_evidence(q, kernels)]
    if evidence:
        md += ["Where warp_lab's code is bigger than NVRTC's (SASS opcode and PTX differences, "
               "warp_lab − NVRTC):", "", *evidence, ""]
    if whatifs:
        md += ["### What-if experiments", "",
               "warp_lab's own LLVM IR rewritten the way a candidate compiler change would emit "
               "it, then the real optimiser and ptxas, instructions counted from the cubin "
               "(benchmarks/whatif.py): "
               "*unit_stride* = innermost stride of every array known to be 1 (a kernel "
               "specialised for contiguous rows); *nsw_all* = every integer add/sub/mul/shl "
               "marked no-signed-wrap (C's overflow rule instead of warp_lab's wrapping int32); "
               "*short_ptr* = LLVM's `-nvptx-short-ptr` (32-bit shared/local addresses, as "
               "NVVM emits). \"no change\": the PTX came out identical.", ""]
        for q in quals:
            w = whatifs.get(q.get("arch"))
            if not w:
                continue
            md += [f"{q['arch']}:", ""]
            md += [f"{report.NA}: {e}" for e in w.get("errors", [])]
            md += [*report.whatif_table(w, q, kernels), ""]
    if not args.no_sim:
        md += ["## 3. Simulator throughput", "",
               *_script_section("sim_throughput.py", SIM_ARGS, "simulator issue 3"), "",
               "### The compiled tier beside the interpreter and Warp's CPU back end "
               "(issue 24)", "",
               *_script_section("sim_compiled", ["--repeats", "3"], "issue 24",
                                timeout=_SIM_COMPILED_TIMEOUT_S), ""]
        t = lap("simulator", t)
    md += ["## 4. Launch overhead", "", f"GPU: {_gpu_line()}.", "",
           *_script_section("launch_overhead.py", [], "runtime issue 4"), ""]
    t = lap("launch", t)
    if args.interactive_repeats > 0:
        md += ["## 5. Interactive latency (issue 24)", "",
               *_script_section("interactive", ["--repeats", str(args.interactive_repeats)],
                                "issue 24", timeout=_INTERACTIVE_TIMEOUT_S), ""]
        t = lap("interactive", t)
    if not args.no_notebooks:
        md += ["### Teaching notebooks: every launch (issue 24)", "",
               *_script_section("notebook_launches", [], "issue 24",
                                timeout=_INTERACTIVE_TIMEOUT_S), ""]
        t = lap("notebook launches", t)
    if args.warp_compat != "off":
        md += ["## 6. Warp compatibility (issue 19)", "", *warp_compat_section(args.warp_compat),
               ""]
        t = lap("warp compat", t)
    if not args.no_cuda_cells:
        md += ["## 7. CUDA C++ cells (issue 20)", "",
               "Table 1: seconds from a cell's start to its first output (the magic's MIME "
               "bundle) in a real IPython shell, warm (the cell ran once before: imports and "
               "compile cache warm), median; `%%cuda_kernel` runs the CUDA C++ twin of "
               "benchmarks/kernels/cuda_src.py, `%%warp_kernel` the corpus kernel. Table 2: "
               "the simulator (no checks, no metrics) on NVRTC's PTX of the twin and on "
               "warp_lab's PTX of the corpus kernel, same inputs and launch.", "",
               *_script_section("cuda_cells.py", [], "issue 20"), ""]
        t = lap("cuda cells", t)
    if not args.no_fuzz:
        md += ["## 8. Differential fuzzer (issue 23)", "",
               "Random kernels of the documented subset (tests/fuzz/fuzz_engine.py), each "
               "compiled, launched on the simulator with the default checks and compared "
               "bit-exactly with its NumPy reference; a short run for the rate "
               "(`python -m tools.fuzz --minutes N` for the counts of a long one).", "",
               *_script_section("fuzz_throughput.py", [], "issue 23"), "",
               # the long runs' counts: too long for this run, kept by hand as they ran
               *_hand_kept("fuzz_runs.md"), ""]
        t = lap("fuzzer", t)
    md += [*_findings(), ""]
    if args.stress_minutes > 0:
        md += ["## 10. Stress suite (issue 25)", "",
               "Random SIGINTs over compiles, launches, `wl.debug` and a `%%warp_kernel "
               "--launch` cell; every spin and deadlock shape between random threads as "
               "lanes of one warp, warps of one block and blocks of a grid; bad and huge "
               "inputs at every public entry; crafted cache entries, hostile folders and "
               "concurrent writers (`tests/stress/stress_suite.py`; the test suite runs one "
               "round of each part).", "",
               *stress_section(args.stress_minutes), ""]
        t = lap("stress", t)
    spent = ", ".join(f"{k} {v:.0f} s" for k, v in phases.items())
    md += [f"_Whole run: {time.perf_counter() - t_start:.0f} s ({spent}) on "
           f"the machine above, shared with other jobs._", ""]
    text = "\n".join(md)
    print(text)
    if args.out != "-":
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
