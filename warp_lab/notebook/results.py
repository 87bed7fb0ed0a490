"""Rich output of a ``LaunchResult``: what a launch did, per Python line.

Simulator runs show the instruction count per Python line as a heat column
on the source pane, SIMT efficiency per warp (histogram), sectors per
request for each global memory line, shared-memory bank conflicts per line,
the instruction mix, the checks' findings with their source lines, and the
kernel's printed output. GPU runs show the kernel time over repeats, the
achieved bandwidth against the device's peak and the compile-stage timings.

The numbers are the simulator's (``LaunchResult.sim.metrics``, issue 3's
metrics); the accessor functions below (:func:`instructions_per_line`,
:func:`memory_lines`, :func:`bank_conflicts_per_line`, ...) are the one
place that reads them, and the teaching notebooks use them too.
"""

from __future__ import annotations

import html

from warp_lab.notebook.charts import figure_img_html, instruction_mix_chart, simt_histogram, \
    time_distribution
from warp_lab.notebook.views import STYLE, kernel_html, new_root_id

__all__ = ["launch_html", "LaunchView", "instructions_per_line", "memory_lines",
           "bank_conflicts_per_line", "simt_efficiencies", "instruction_mix", "findings"]


def _metrics(result):
    return getattr(result, "metrics", None)


def _get(obj, name, default=None):
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def instructions_per_line(result) -> dict[int, int]:
    """Thread-instructions executed per Python line (empty on a GPU)."""
    m = _metrics(result)
    return {int(k): int(v) for k, v in (_get(m, "instructions_per_python_line") or {}).items()}


def memory_lines(result) -> dict[int, dict]:
    """Global memory lines: ``{python line: {"requests", "sectors", "sectors_per_request"}}``.

    A request is one warp-level load or store instruction; a sector is a
    32-byte segment of global memory it touches (Nsight Compute's
    ``l1tex__t_sectors`` / ``l1tex__t_requests``).
    """
    m = _metrics(result)
    out = {}
    for line, rec in (_get(m, "global_memory_per_python_line") or {}).items():
        req, sec = int(_get(rec, "requests", 0)), int(_get(rec, "sectors", 0))
        out[int(line)] = {"requests": req, "sectors": sec,
                          "sectors_per_request": sec / req if req else 0.0}
    return out


def bank_conflicts_per_line(result) -> dict[int, int]:
    """Extra shared-memory wavefronts (bank conflicts) per Python line."""
    m = _metrics(result)
    return {int(k): int(v) for k, v in (_get(m, "bank_conflicts_per_python_line") or {}).items()}


def simt_efficiencies(result) -> list[float]:
    """SIMT efficiency per warp: mean active lanes / 32 over its issued instructions (0..1)."""
    m = _metrics(result)
    return [float(x) for x in (_get(m, "simt_efficiency_per_warp") or ())]


def instruction_mix(result) -> dict[str, int]:
    """Warp instructions issued per class (arithmetic, memory, control, sync, special)."""
    m = _metrics(result)
    return {str(k): int(v) for k, v in (_get(m, "instruction_mix") or {}).items()}


def findings(result) -> list:
    """The checks' findings (memcheck, racecheck, barrier), as the simulator reports them."""
    return list(getattr(result, "findings", []) or [])


def _table(head, rows) -> str:
    h = "".join(f"<th>{html.escape(str(x))}</th>" for x in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(x))}</td>" for x in r) + "</tr>"
                   for r in rows)
    return f'<table class="wl-card"><tr>{h}</tr>{body}</table>'


def _source_line(ck, line) -> str:
    return ck.source.line(int(line)).strip() if line else ""


def _findings_html(result) -> str:
    items = findings(result)
    if not items:
        return ""
    ck = result.compiled
    rows = []
    for f in items:
        line = _get(f, "python_line") or _get(f, "source_line")
        rows.append((_get(f, "kind", ""), str(_get(f, "message", f)),
                     f"{line}: {_source_line(ck, line)}" if line else "",
                     _get(f, "ptx_line", "") or ""))
    return ('<details open><summary>Findings</summary>'
            + _table(("check", "what", "Python line", "PTX line"), rows) + "</details>")


def launch_html(result) -> str:
    """The HTML snippet for one ``LaunchResult`` (escaped; charts inlined as PNG)."""
    ck = result.compiled
    dev = result.device
    head = (f"{ck.name} on {dev}: grid {result.grid}, block {result.block} "
            f"({result.threads:,} threads); {len(result.times)} launch(es), median "
            f"{result.time * 1e3:.3f} ms")
    parts = [f'<div class="wl-title">{html.escape(head)}</div>']
    notes = ([dev.reason] if dev.reason else []) + list(result.notes)
    if result.partial:
        notes.append("the simulator stopped early: outputs are partial")
    parts += [f'<div class="wl-warn">{html.escape(n)}</div>' for n in notes]
    parts.append(_findings_html(result))
    charts = []
    if dev.kind == "sim":
        mem = memory_lines(result)
        if mem:
            parts.append("<details open><summary>Global memory per line</summary>" + _table(
                ("line", "source", "requests", "sectors", "sectors / request"),
                [(ln, _source_line(ck, ln), r["requests"], r["sectors"],
                  f"{r['sectors_per_request']:.2f}") for ln, r in sorted(mem.items())])
                + "</details>")
        conflicts = bank_conflicts_per_line(result)
        if conflicts:
            parts.append("<details open><summary>Shared-memory bank conflicts per line</summary>"
                         + _table(("line", "source", "conflicts"),
                                  [(ln, _source_line(ck, ln), n)
                                   for ln, n in sorted(conflicts.items())]) + "</details>")
        eff = simt_efficiencies(result)
        if eff:
            charts.append(figure_img_html(simt_histogram(eff), "SIMT efficiency per warp"))
        mix = instruction_mix(result)
        if mix:
            charts.append(figure_img_html(instruction_mix_chart(mix), "instruction mix"))
    else:
        if len(result.times) > 1:
            charts.append(figure_img_html(time_distribution(result.times), "kernel times"))
        bw = result.bandwidth
        if bw:
            peak = dev.peak_bandwidth
            text = f"achieved {bw / 1e9:.1f} GB/s over the arguments"
            if peak:
                text += f" ({100 * bw / peak:.0f}% of the {peak / 1e9:.0f} GB/s peak)"
            parts.append(f"<div>{html.escape(text)}</div>")
    if ck.timings:
        parts.append("<div>compile stages: " + html.escape(", ".join(
            f"{k} {1000 * float(v):.1f} ms" for k, v in ck.timings.items())) + "</div>")
    if charts:
        parts.append(f'<div class="wl-panes">{"".join(charts)}</div>')
    if result.printed:
        parts.append("<details open><summary>printed</summary><div class=\"wl-error\" "
                     f"style=\"border-color:#888;background:none\">{html.escape(result.printed)}"
                     "</div></details>")
    heat = {"instructions": instructions_per_line(result)}
    source = ""
    if heat["instructions"]:
        source = kernel_html(ck, show=("source",), heat=heat, script=False)
    return (f"<style>{STYLE}</style><div class=\"wl-kernel\" id=\"{new_root_id()}\">"
            f'{"".join(parts)}</div>{source}')


class LaunchView:
    """A ``LaunchResult`` with rich notebook output (``text/html`` and ``text/plain``).

    Attributes:
        result: the launch result.
    """

    def __init__(self, result):
        self.result = result

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/plain": repr(self.result), "text/html": launch_html(self.result)}

    def __repr__(self) -> str:
        return repr(self.result)
