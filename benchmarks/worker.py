"""Measurement workers, one fresh process per job: ``python -m benchmarks.worker JOB --out F.json``.

Jobs:

* ``latency-cold --tool {warp_lab,nvrtc,numba,warp}``: one tool alone in a
  fresh process (so no tool pays for, or profits from, another's LLVM or
  CUDA initialisation): the import of the tool and the *process-cold*
  compile (the first compile in the process, of ``saxpy``; it pays lazy
  initialisation).
* ``latency``: every tool (or ``--tools``) in one process, interleaved (see
  :func:`latency`): per kernel the *first* compile of that kernel and the median
  of ``--repeats`` *warm* compiles (none with ``--repeats 0``: the extra
  first-compile rounds of ``run_all``); warp_lab's cache-hit time.
* ``quality --arch sm_XX``: every tool's PTX for every kernel through the
  same ptxas/nvdisasm (:mod:`benchmarks.quality`); ``--artifacts DIR``
  also writes each PTX and SASS there for reading.
* ``whatif --arch sm_XX``: the :mod:`benchmarks.whatif` experiments (what a
  candidate compiler change would buy).

The result is JSON in ``--out``; stdout/stderr are free for the tools'
chatter (Warp prints a banner).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

from benchmarks.kernels import BENCH_KERNELS

TOOLS = ("warp_lab", "nvrtc", "numba", "warp")
QUALITY_TOOLS = ("warp_lab", "nvrtc", "nvrtc_restrict", "numba", "warp")


def _import_tool(tool: str) -> None:
    if tool == "warp_lab":
        import warp_lab.compiler.pipeline  # noqa: F401
        import warp_lab.examples  # noqa: F401
    elif tool == "nvrtc":
        from cuda.bindings import nvrtc  # noqa: F401
    elif tool == "numba":
        from benchmarks.kernels import numba_twins  # noqa: F401
    elif tool == "warp":
        from benchmarks.kernels import warp_twins  # noqa: F401


def _warp_lab_to_ptx(name: str, arch: str) -> float:
    """Seconds of warp_lab's parse→PTX stages alone (what ``wl.compile`` runs before ptxas)."""
    from benchmarks.kernels import warp_lab_kernel
    from warp_lab.compiler import frontend, lower, nvptx
    from warp_lab.options import CompileOptions

    kernel = warp_lab_kernel(name)
    t0 = time.perf_counter()
    options = CompileOptions(arch=arch)
    lowered = lower.make_llvm_ir(frontend.make_typed_ast(kernel, options), options)
    nvptx.make_ptx(lowered.llvm_ir, options, lowered.entry)
    return time.perf_counter() - t0


def _compile_once(tool: str, name: str, arch: str, sass: bool = True) -> dict:
    """One compile; seconds by measure: ``ptx``, and for warp_lab ``sass`` unless ``sass`` is
    False (then only the stages up to PTX run: nvdisasm alone costs ~0.6 s a call here)."""
    from benchmarks import peers

    t0 = time.perf_counter()
    if tool == "warp_lab" and not sass:
        try:
            return {"ptx": _warp_lab_to_ptx(name, arch)}
        except Exception as exc:  # same failure as wl.compile: n/a with the reason
            raise peers.PeerUnavailable(f"warp_lab: {type(exc).__name__}: {exc}") from None
    if tool == "warp_lab":
        _, _, ck = peers.warp_lab_ptx(name, arch)
        t = dict(ck.timings)
        back = {"ptxas", "nvdisasm", "total", "cache"}
        out = {"ptx": sum(v for k, v in t.items() if k not in back),
               "sass": t.get("total", time.perf_counter() - t0)}
        if ck.missing:
            out["missing"] = dict(ck.missing)
        return out
    fn = {"nvrtc": peers.nvrtc_ptx, "numba": peers.numba_ptx, "warp": peers.warp_ptx}[tool]
    fn(name, arch)
    return {"ptx": time.perf_counter() - t0}


def _warmup(tool: str, arch: str) -> None:
    """Compile a kernel outside the benchmark list once, so every benchmark kernel's *first*
    compile is its own first compile with the tool already initialised."""
    import tempfile

    if tool == "warp_lab":
        import warp_lab as wl
        from warp_lab.examples import get

        wl.compile(get("vector_add").kernel, arch=arch, cache=False)
    elif tool == "nvrtc":
        from benchmarks import peers
        from benchmarks.kernels import cuda_src

        peers.nvrtc_compile(cuda_src.WARMUP, "warmup", arch)
    elif tool == "numba":
        from numba import cuda

        from benchmarks.kernels import numba_twins

        sm = int(arch.split("_")[1])
        cuda.compile_ptx(numba_twins.warmup, numba_twins.WARMUP_SIG, cc=(sm // 10, sm % 10))
    elif tool == "warp":
        import warp as wp

        from benchmarks.kernels import warp_twins

        with tempfile.TemporaryDirectory(prefix="wl-bench-warp-") as tmp:
            wp.compile_aot_module(warp_twins.warmup.module, arch=int(arch.split("_")[1]),
                                  use_ptx=True, module_dir=tmp)


def latency_cold(tool: str, arch: str) -> dict:
    """Import ``tool`` and compile ``saxpy`` once in this fresh process (the process-cold cost)."""
    from benchmarks.peers import PeerUnavailable

    out = {"tool": tool, "arch": arch}
    t0 = time.perf_counter()
    try:
        _import_tool(tool)
    except Exception as exc:  # not installed: the whole column is n/a
        out["unavailable"] = f"{type(exc).__name__}: {exc}"
        return out
    out["import_s"] = time.perf_counter() - t0
    try:
        out["process_cold"] = _compile_once(tool, "saxpy", arch)
    except PeerUnavailable as exc:
        out["process_cold_na"] = str(exc)
    return out


def latency(arch: str, repeats: int, kernels: list[str], tools=TOOLS) -> dict:
    """Per-kernel first and warm compile times of every tool, interleaved in one process.

    After one warm-up compile per tool (of a kernel outside the list), for
    each kernel: the first compile with each tool, then ``repeats`` rounds
    of one compile per tool, the tool order rotating between rounds, so a
    load spike on the shared machine hits all tools alike. Returns ``{tool: {"kernels": {name:
    {"first": {...}, "warm": {...}}}}}`` plus warp_lab's cache-hit time.
    """
    from benchmarks.peers import PeerUnavailable

    out: dict = {}
    live = []
    for tool in tools:
        try:
            _import_tool(tool)
            _warmup(tool, arch)                         # lazy initialisation, not timed
            live.append(tool)
            out[tool] = {"kernels": {}}
        except PeerUnavailable as exc:
            out[tool] = {"unavailable": str(exc)}
        except Exception as exc:  # import failure
            out[tool] = {"unavailable": f"{type(exc).__name__}: {exc}"}
    for k, name in enumerate(kernels):
        order = live[k % len(live):] + live[:k % len(live)] if live else []
        runs: dict = {t: [] for t in order}
        firsts: dict = {}
        for tool in order:
            try:
                firsts[tool] = _compile_once(tool, name, arch)
            except PeerUnavailable as exc:
                out[tool]["kernels"][name] = {"na": str(exc)}
        ok = [t for t in order if t in firsts]
        for r in range(repeats):
            for tool in ok[r % len(ok):] + ok[:r % len(ok)]:
                # warp_lab: the whole pipeline (→SASS) in the first warm round, →PTX after
                runs[tool].append(_compile_once(tool, name, arch, sass=r == 0))
        for tool in ok:
            rec = {"first": firsts[tool], "warm": {}}
            for key in firsts[tool]:
                vals = [w[key] for w in runs[tool] if key in w]
                if key != "missing" and vals:
                    rec["warm"][key] = statistics.median(vals)
            out[tool]["kernels"][name] = rec
    if "warp_lab" in live and repeats:
        out["warp_lab"]["cache_hit"] = _cache_hits(arch, kernels, repeats)
    return out


def _cache_hits(arch: str, kernels: list[str], repeats: int) -> dict:
    """Median wall seconds of ``wl.compile`` answered from the in-memory cache, per kernel."""
    import warp_lab as wl
    from benchmarks.kernels import warp_lab_kernel

    hits = {}
    for name in kernels:
        try:
            kern = warp_lab_kernel(name)
            wl.compile(kern, arch=arch)                 # fills the cache
            times = []
            for _ in range(max(repeats, 3)):
                t0 = time.perf_counter()
                wl.compile(kern, arch=arch)
                times.append(time.perf_counter() - t0)
            hits[name] = statistics.median(times)
        except Exception:  # uncompilable kernel: its row already says why
            continue
    return hits


def quality(arch: str, kernels: list[str], artifacts: str | None,
            tools=QUALITY_TOOLS) -> dict:
    """Code quality of every tool's PTX for ``kernels`` on ``arch``; see module doc."""
    from benchmarks import peers, quality as q
    from warp_lab.errors import ToolchainError

    makers = {
        "warp_lab": lambda n: peers.warp_lab_ptx(n, arch)[:2],
        "nvrtc": lambda n: peers.nvrtc_ptx(n, arch),
        "nvrtc_restrict": lambda n: peers.nvrtc_ptx(n, arch, restrict=True),
        "numba": lambda n: peers.numba_ptx(n, arch),
        "warp": lambda n: peers.warp_ptx(n, arch),
    }
    out = {"arch": arch, "kernels": {}}
    for name in kernels:
        row = {}
        for tool, make in makers.items():
            if tool not in tools:
                continue
            try:
                ptx, entry = make(name)
                # opcode counts (nvdisasm, 0.6 s a call) only where the evidence lines use them
                qual, sass = q.assess(ptx, entry, arch,
                                      sass=bool(artifacts) or tool in ("warp_lab", "nvrtc"))
            except peers.PeerUnavailable as exc:
                row[tool] = {"na": str(exc)}
                continue
            except ToolchainError as exc:
                row[tool] = {"na": f"ptxas/nvdisasm: {str(exc).splitlines()[0]}"}
                continue
            row[tool] = qual.to_json()
            if artifacts:
                stem = os.path.join(artifacts, arch, f"{name}.{tool}")
                os.makedirs(os.path.dirname(stem), exist_ok=True)
                with open(stem + ".ptx", "w") as f:
                    f.write(ptx)
                if sass is not None:
                    with open(stem + ".sass", "w") as f:
                        f.write(sass)
        out["kernels"][name] = row
    return out


def whatif(arch: str, kernels: list[str], short_ptr: bool = False) -> dict:
    """Every :mod:`benchmarks.whatif` IR experiment on every kernel for ``arch``; with
    ``short_ptr``, instead only the ``short_ptr`` experiment (it changes the whole process)."""
    from benchmarks import whatif as w
    from warp_lab.errors import WarpLabError

    if short_ptr:
        w.enable_short_ptr()
    out = {"arch": arch, "kernels": {}}
    for name in kernels:
        row = {}
        for exp in (["short_ptr"] if short_ptr else w.EXPERIMENTS):
            try:
                row[exp] = w.run_experiment(exp, name, arch)
            except WarpLabError as exc:
                row[exp] = {"na": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"}
        out["kernels"][name] = row
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.worker")
    ap.add_argument("job", choices=("latency", "latency-cold", "quality", "whatif"))
    ap.add_argument("--tool", choices=TOOLS)
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--kernels", default=",".join(BENCH_KERNELS))
    ap.add_argument("--artifacts", default=None)
    ap.add_argument("--short-ptr", action="store_true", help="whatif: the short_ptr run")
    ap.add_argument("--tools", default=None,
                    help="quality: which PTX makers; latency: which tools (default: all)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    kernels = [k for k in args.kernels.split(",") if k]
    if args.job == "latency-cold":
        if not args.tool:
            ap.error("latency-cold needs --tool")
        result = latency_cold(args.tool, args.arch)
    elif args.job == "latency":
        result = latency(args.arch, args.repeats, kernels,
                         tuple(args.tools.split(",")) if args.tools else TOOLS)
    elif args.job == "whatif":
        result = whatif(args.arch, kernels, args.short_ptr)
    else:
        result = quality(args.arch, kernels, args.artifacts,
                         args.tools.split(",") if args.tools else QUALITY_TOOLS)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
