"""``LaunchResult.metrics`` prints as a short summary whose numbers are the views' own."""

from __future__ import annotations

import linecache

import numpy as np

import warp_lab as wl
from warp_lab.notebook.results import (bank_conflicts_per_line, instructions_per_line,
                                       memory_lines)

SRC = """\
def strided(out: wl.array(dtype=wl.float32), x: wl.array(dtype=wl.float32)):
    s = wl.shared_array(2048, wl.float32)
    t = wl.thread_idx.x
    s[t * 2] = x[wl.tid() * 2]
    wl.syncthreads()
    out[wl.tid()] = s[(t * 2) % 2048]
"""


def _launch():
    linecache.cache["<metrics cell>"] = (len(SRC), None, SRC.splitlines(True), "<metrics cell>")
    ns = {"wl": wl}
    exec(compile(SRC, "<metrics cell>", "exec"), ns)
    x = np.arange(256, dtype=np.float32)
    out = np.zeros(128, np.float32)
    return wl.launch(wl.kernel(ns["strided"]), dim=128, inputs=[out, x], block_dim=64,
                     device="sim")


def test_metrics_print_a_short_summary_with_the_views_numbers():
    res = _launch()
    m = res.metrics
    text = repr(m)
    assert text == str(m) and len(text.splitlines()) <= 10 and "array(" not in text, text
    rows = dict(ln.strip().split("  ", 1) for ln in text.splitlines()[1:])
    rows = {k.strip(): v.strip() for k, v in rows.items()}
    # the same totals as the per-line accessors the views use
    per_line = instructions_per_line(res)
    assert rows["thread-instructions"].startswith(f"{res.sim.instructions:,} ")
    assert sum(per_line.values()) == res.sim.instructions
    mem = memory_lines(res)
    req = sum(r["requests"] for r in mem.values())
    sec = sum(r["sectors"] for r in mem.values())
    assert rows["global memory"] == (f"{req:,} requests, {sec:,} sectors, "
                                     f"{sec / req:.2f} sectors/request")
    # stride-2 float accesses: two lanes per bank, a 2-way conflict per warp access
    conflicts = sum(bank_conflicts_per_line(res).values())
    # stated in extra wavefronts, and per request as Nsight Compute does: 2 wavefronts each
    requests = sum(m.shared_requests.values())
    assert conflicts == requests > 0 and rows["shared memory"] == (
        f"{requests:,} requests, 2.00 wavefronts/request, {conflicts:,} bank conflicts "
        "(extra wavefronts, 1.00/request)")
    eff = float(np.sum(m.warp_active_lanes)) / (32 * float(np.sum(m.warp_issued)))
    assert rows["SIMT efficiency"].startswith(f"{eff:.1%}")
    busiest = max(per_line, key=per_line.get)
    assert rows["busiest source lines"].startswith(f"line {busiest}: {per_line[busiest]:,}")
    # the raw counters stay attributes
    assert isinstance(m.warp_issued, np.ndarray) and m.per_ptx_line and m.bank_conflicts
    page = m._repr_html_()
    assert page.startswith("<table>") and "bank conflicts" in page and "<script" not in page
