"""Every launch of the teaching notebooks, timed: sizes and host seconds per launch.

    python -m benchmarks.notebook_launches [--notebooks 01,07]

Issue 24 asks that the teaching notebooks launch at the sizes a GPU course would use
and that each launch take at most a second here. This runs each notebook of
``notebooks/`` top to bottom in a real Jupyter kernel (nbclient, as
tests/notebook/test_notebooks.py does), with one cell put in front that records every
:func:`warp_lab.runtime.launch.launch` call (the function ``wl.launch`` and the magics'
``--launch`` both call): the kernel, its threads (grid × block), the checks that ran and
``LaunchResult.host_seconds`` (the whole ``wl.launch`` call, compile-cache lookup and
argument checks included). The debugger's launches (notebook 06's ``debug(...)``) are
stepped by the user, not timed here. One Markdown table per run on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

__all__ = ["RECORDER", "main", "run_notebook", "table"]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = os.path.join(ROOT, "notebooks")
LIMIT_S = 1.0  # issue 24: each launch of a teaching notebook ≤ 1 s on this machine

#: the cell put in front of each notebook: wraps the launch function to record each call
RECORDER = """import functools as _wl_functools
import json as _wl_json
import warp_lab.runtime.launch as _wl_launch_mod
_wl_launches = []
_wl_launch = _wl_launch_mod.launch
@_wl_functools.wraps(_wl_launch)  # the magic checks --launch keywords against the signature
def _wl_recorded(*args, **kwargs):
    result = _wl_launch(*args, **kwargs)
    grid, block = result.grid, result.block
    _wl_launches.append({"kernel": result.compiled.name, "device": result.device.kind,
                         "threads": grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2],
                         "checks": list(result.checks), "seconds": result.host_seconds})
    return result
_wl_launch_mod.launch = _wl_recorded"""

#: the cell put at the end: prints the records as one JSON line
REPORT = "print('WL-LAUNCHES ' + _wl_json.dumps(_wl_launches))"


def run_notebook(path: str, timeout: int = 600) -> list[dict]:
    """Execute the notebook at ``path`` (str) in a fresh ``python3`` Jupyter kernel with the
    recorder cells around it; return one dict per launch (kernel, device, threads, checks,
    seconds). Raises ``nbclient.exceptions.CellExecutionError`` when a cell fails that is
    not tagged ``raises-exception``."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(RECORDER))
    nb.cells.append(nbformat.v4.new_code_cell(REPORT))
    env_path = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)
    os.environ["PYTHONPATH"] = env_path  # the kernel imports this tree's warp_lab
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": NOTEBOOKS}}).execute()
    for out in nb.cells[-1].get("outputs", []):
        for line in out.get("text", "").splitlines():
            if line.startswith("WL-LAUNCHES "):
                return json.loads(line[len("WL-LAUNCHES "):])
    raise RuntimeError(f"{os.path.basename(path)}: the recorder printed nothing")


def table(runs: dict[str, list[dict]]) -> list[str]:
    """Markdown lines: per notebook, its launches, the largest launch, the slowest one and
    whether every launch met :data:`LIMIT_S`."""
    out = ["| notebook | launches | largest launch (threads) | slowest launch | s | "
           f"every launch ≤ {LIMIT_S:g} s |", "|---|---:|---:|---|---:|---|"]
    worst = 0.0
    for name, launches in runs.items():
        if not launches:
            out.append(f"| {name} | 0 | – | – | – | – |")
            continue
        big = max(launches, key=lambda r: r["threads"])
        slow = max(launches, key=lambda r: r["seconds"])
        worst = max(worst, slow["seconds"])
        met = "met" if slow["seconds"] <= LIMIT_S else "not met"
        out.append(f"| {name} | {len(launches)} | {big['threads']:,} ({big['kernel']}) | "
                   f"{slow['kernel']} ({slow['threads']:,} threads, checks: "
                   f"{', '.join(slow['checks']) or 'none'}) | {slow['seconds']:.2f} | {met} |")
    out += ["", f"Slowest launch of all: {worst:.2f} s (target ≤ {LIMIT_S:g} s: "
            f"{'met' if worst <= LIMIT_S else 'not met'})."]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notebooks", default="",
                    help="comma list of notebook number prefixes (default: all)")
    args = ap.parse_args(argv)
    wanted = [w for w in args.notebooks.split(",") if w]
    names = sorted(f for f in os.listdir(NOTEBOOKS) if f.endswith(".ipynb")
                   and f[:2].isdigit() and (not wanted or f[:2] in wanted))
    t0 = time.perf_counter()
    runs = {n[:-len(".ipynb")]: run_notebook(os.path.join(NOTEBOOKS, n)) for n in names}
    print(f"Output of `python -m benchmarks.notebook_launches` (issue 24): every "
          f"`wl.launch` of the teaching notebooks run top to bottom in a Jupyter kernel, "
          f"host seconds of each call (`LaunchResult.host_seconds`); "
          f"{time.perf_counter() - t0:.0f} s in all.")
    print()
    print("\n".join(table(runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
