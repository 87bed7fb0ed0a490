"""Markdown tables and target checks from the workers' JSON (:mod:`benchmarks.worker`).

Ratios are written ``peer ÷ warp_lab``: for times, above 1 means warp_lab is
faster; for registers and instructions, :func:`quality_table` prints
``warp_lab ÷ NVRTC`` (below 1 means warp_lab's code is smaller).
"""

from __future__ import annotations

from collections import Counter

__all__ = ["latency_tables", "quality_table", "features_table", "quality_targets",
           "latency_targets", "gap_evidence", "whatif_table", "NA"]

NA = "n/a"
_QTOOLS = ("warp_lab", "nvrtc", "nvrtc_restrict", "numba", "warp")
_QLABEL = {"warp_lab": "warp_lab", "nvrtc": "NVRTC", "nvrtc_restrict": "NVRTC+restrict",
           "numba": "Numba", "warp": "Warp"}


def _ms(s) -> str:
    return NA if s is None else f"{s * 1e3:.1f}"


def _ratio(num, den) -> str:
    if num is None or den is None or den == 0:
        return NA
    return f"{num / den:.2f}×"


class _Notes:
    """Collects n/a reasons once each, numbered, for the footnotes under a table."""

    def __init__(self):
        self.reasons: dict[str, int] = {}

    def na(self, reason: str) -> str:
        n = self.reasons.setdefault(reason, len(self.reasons) + 1)
        return f"{NA}[{n}]"

    def lines(self) -> list[str]:
        return [f"[{n}] {r}" for r, n in self.reasons.items()]


def _get(lat: dict, tool: str, name: str, phase: str, key: str = "ptx"):
    rec = lat.get(tool, {}).get("kernels", {}).get(name)
    if not rec or "na" in rec:
        return None
    return rec.get(phase, {}).get(key)


def _why(lat: dict, tool: str, name: str) -> str:
    col = lat.get(tool, {})
    if "unavailable" in col:
        return f"{tool}: {col['unavailable']}"
    if "error" in col:
        return f"{tool}: {col['error']}"
    rec = col.get("kernels", {}).get(name, {})
    return rec.get("na", f"{tool}: not measured")


def latency_tables(lat: dict, kernels) -> list[str]:
    """Markdown: process-cold table and per-kernel warm/first table (milliseconds)."""
    notes = _Notes()
    out = ["| tool | import (ms) | first compile in a fresh process, saxpy (ms) |",
           "|---|---:|---:|"]
    for tool in ("warp_lab", "nvrtc", "numba", "warp"):
        col = lat.get(tool, {})
        cold = col.get("process_cold")
        if cold is None:
            reason = col.get("process_cold_na") or col.get("unavailable") or col.get("error") \
                or "not measured"
            out.append(f"| {tool} | {_ms(col.get('import_s'))} | {notes.na(reason)} |")
            continue
        extra = f" (→SASS {_ms(cold['sass'])})" if "sass" in cold else ""
        out.append(f"| {tool} | {_ms(col.get('import_s'))} | {_ms(cold['ptx'])}{extra} |")
    out += ["", "| kernel | warp_lab →PTX warm | warp_lab →SASS warm | warp_lab cache hit | "
            "NVRTC warm | Numba first | Numba warm | Warp first | Warp warm | NVRTC ÷ wl | "
            "Numba first ÷ wl | Warp warm ÷ wl |", "|---|" + "---:|" * 11]
    hits = lat.get("warp_lab", {}).get("cache_hit", {})
    for name in kernels:
        cells = []
        wl = _get(lat, "warp_lab", name, "warm")
        for tool, phase, key in (("warp_lab", "warm", "ptx"), ("warp_lab", "warm", "sass"),
                                 ("warp_lab", "hit", ""), ("nvrtc", "warm", "ptx"),
                                 ("numba", "first", "ptx"),
                                 ("numba", "warm", "ptx"), ("warp", "first", "ptx"),
                                 ("warp", "warm", "ptx")):
            if phase == "hit":
                cells.append(f"{hits[name] * 1e3:.2f}" if name in hits else NA)
                continue
            v = _get(lat, tool, name, phase, key)
            cells.append(_ms(v) if v is not None else notes.na(_why(lat, tool, name)))
        cells += [_ratio(_get(lat, "nvrtc", name, "warm"), wl),
                  _ratio(_get(lat, "numba", name, "first"), wl),
                  _ratio(_get(lat, "warp", name, "warm"), wl)]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out + [""] + notes.lines()


def latency_targets(lat: dict, kernels) -> list[str]:
    """Issue 8's compile-latency targets, one line each, with the failing kernels."""
    fast, slow_numba, slow_nvrtc, missing = [], [], [], []
    for name in kernels:
        wl = _get(lat, "warp_lab", name, "warm")
        numba = _get(lat, "numba", name, "first")
        nvrtc = _get(lat, "nvrtc", name, "warm")
        if wl is None:
            missing.append(name)
            continue
        if numba is not None and numba < 5 * wl:
            slow_numba.append(f"{name} ({numba / wl:.1f}×)")
        if nvrtc is not None and wl > nvrtc:
            slow_nvrtc.append(f"{name} ({wl * 1e3:.1f} vs {nvrtc * 1e3:.1f} ms)")
        fast.append(name)
    n = len(fast)
    lines = []
    miss = f"; not compiled by warp_lab: {', '.join(missing)}" if missing else ""
    ok = not slow_numba and not missing
    lines.append(f"- {'PASS' if ok else 'FAIL'}: warp_lab parse→PTX (warm) ≥ 5× faster than "
                 f"Numba's first compile_ptx on {n - len(slow_numba)}/{len(kernels)} kernels"
                 + (f"; short: {', '.join(slow_numba)}" if slow_numba else "") + miss)
    ok = not slow_nvrtc and not missing
    lines.append(f"- {'PASS' if ok else 'FAIL'}: warp_lab parse→PTX (warm) no slower than NVRTC "
                 f"(warm) on {n - len(slow_nvrtc)}/{len(kernels)} kernels"
                 + (f"; slower: {', '.join(slow_nvrtc)}" if slow_nvrtc else "") + miss)
    return lines


def _qcell(q: dict, key: str, notes: _Notes) -> str:
    if q is None:
        return "–"
    if "na" in q:
        return notes.na(q["na"])
    return str(q[key])


def quality_table(qual: dict, kernels) -> list[str]:
    """Markdown: registers, SASS instructions, spills, shared and stack per kernel, one arch."""
    notes = _Notes()
    head = ["kernel"] + [f"regs {_QLABEL[t]}" for t in _QTOOLS] + ["regs wl÷NVRTC"] \
        + [f"SASS {_QLABEL[t]}" for t in _QTOOLS] + ["SASS wl÷NVRTC", "spill B wl/NVRTC",
                                                      "smem B wl/NVRTC", "stack B wl/NVRTC"]
    out = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for name in kernels:
        row = qual.get("kernels", {}).get(name, {})
        wl, nv = row.get("warp_lab"), row.get("nvrtc")
        both = wl and nv and "na" not in wl and "na" not in nv
        cells = [_qcell(row.get(t), "registers", notes) for t in _QTOOLS]
        cells.append(_ratio(wl["registers"], nv["registers"]) if both else NA)
        cells += [_qcell(row.get(t), "sass_instructions", notes) for t in _QTOOLS]
        cells.append(_ratio(wl["sass_instructions"], nv["sass_instructions"]) if both else NA)
        if both:
            cells += [f"{wl['spill_stores'] + wl['spill_loads']}/"
                      f"{nv['spill_stores'] + nv['spill_loads']}",
                      f"{wl['shared']}/{nv['shared']}", f"{wl['stack_frame']}/{nv['stack_frame']}"]
        else:
            cells += [NA] * 3
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out + [""] + notes.lines()


_FEATURES = ("int64_arith", "ld_global", "ld_global_nc", "ld_generic", "st_generic", "cvta",
             "vector_mem", "setp", "bra", "call")


def features_table(qual: dict, kernels) -> list[str]:
    """Markdown: PTX feature counts warp_lab / NVRTC per kernel (see :mod:`benchmarks.quality`)."""
    head = ["kernel", "PTX lines"] + list(_FEATURES)
    out = ["| " + " | ".join(head) + " (wl / NVRTC) |", "|---|" + "---:|" * (len(head) - 1)]
    for name in kernels:
        row = qual.get("kernels", {}).get(name, {})
        wl, nv = row.get("warp_lab"), row.get("nvrtc")
        if not (wl and nv and "na" not in wl and "na" not in nv):
            continue
        cells = [f"{wl['ptx_lines']} / {nv['ptx_lines']}"]
        cells += [f"{wl['ptx'][f]} / {nv['ptx'][f]}" for f in _FEATURES]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out


def quality_targets(quals: list[dict], kernels) -> list[str]:
    """Issue 8's code-quality targets over every kernel × arch pair, one line each."""
    pairs, reg_ok, sass_bad, spill_bad, missing = 0, 0, [], [], []
    reg_bad = []
    for qual in quals:
        arch = qual.get("arch", "?")
        for name in kernels:
            row = qual.get("kernels", {}).get(name, {})
            wl, nv = row.get("warp_lab"), row.get("nvrtc")
            if not nv or "na" in nv:
                continue
            if not wl or "na" in wl:
                missing.append(f"{name}/{arch}")
                continue
            pairs += 1
            if wl["registers"] <= nv["registers"]:
                reg_ok += 1
            else:
                reg_bad.append(f"{name}/{arch} ({wl['registers']} vs {nv['registers']})")
            r = wl["sass_instructions"] / nv["sass_instructions"]
            if r > 1.10:
                sass_bad.append(f"{name}/{arch} ({wl['sass_instructions']} vs "
                                f"{nv['sass_instructions']}, {r:.2f}×)")
            wl_sp = wl["spill_stores"] + wl["spill_loads"]
            nv_sp = nv["spill_stores"] + nv["spill_loads"]
            if wl_sp and not nv_sp:
                spill_bad.append(f"{name}/{arch} ({wl_sp} B)")
    total = pairs + len(missing)
    miss = f"; warp_lab could not compile: {', '.join(missing)}" if missing else ""
    share = reg_ok / total if total else 0.0
    lines = [
        f"- {'PASS' if share >= 0.9 else 'FAIL'}: registers ≤ NVRTC on {reg_ok}/{total} "
        f"kernel×arch pairs ({share:.0%}, target ≥ 90%)"
        + (f"; more: {', '.join(reg_bad)}" if reg_bad else "") + miss,
        f"- {'PASS' if not sass_bad and not missing else 'FAIL'}: SASS instruction count "
        f"within 10% of NVRTC on {pairs - len(sass_bad)}/{total} pairs"
        + (f"; over: {', '.join(sass_bad)}" if sass_bad else "") + miss,
        f"- {'PASS' if not spill_bad and not missing else 'FAIL'}: no spills where NVRTC has "
        f"none ({pairs - len(spill_bad)}/{total} pairs)"
        + (f"; spills: {', '.join(spill_bad)}" if spill_bad else "") + miss,
    ]
    return lines


def gap_evidence(qual: dict, kernels, top: int = 6) -> list[str]:
    """For each kernel where warp_lab's code is bigger than NVRTC's: the largest SASS opcode
    differences and the PTX feature differences (warp_lab − NVRTC), as evidence lines."""
    out = []
    for name in kernels:
        row = qual.get("kernels", {}).get(name, {})
        wl, nv = row.get("warp_lab"), row.get("nvrtc")
        if not (wl and nv and "na" not in wl and "na" not in nv):
            continue
        if wl["sass_instructions"] <= nv["sass_instructions"] and \
                wl["registers"] <= nv["registers"]:
            continue
        diff = Counter(wl["sass_ops"])
        diff.subtract(nv["sass_ops"])
        ops = sorted(((op, d) for op, d in diff.items() if d), key=lambda x: -abs(x[1]))[:top]
        feats = [f"{f} {wl['ptx'][f]} vs {nv['ptx'][f]}" for f in _FEATURES
                 if wl["ptx"][f] != nv["ptx"][f]]
        out.append(f"- **{name}** ({qual.get('arch')}): {wl['registers']} vs "
                   f"{nv['registers']} registers, {wl['sass_instructions']} vs "
                   f"{nv['sass_instructions']} SASS; SASS opcodes wl−NVRTC: "
                   + ", ".join(f"{op} {d:+d}" for op, d in ops)
                   + ("; PTX: " + ", ".join(feats) if feats else ""))
    return out


def whatif_table(whatif: dict, qual: dict, kernels) -> list[str]:
    """Markdown: registers / SASS of NVRTC, warp_lab and each what-if experiment, one arch."""
    exps = []
    for row in whatif.get("kernels", {}).values():
        exps += [e for e in row if e not in exps]
    head = ["kernel", "NVRTC", "warp_lab"] + [f"wl {e}" for e in exps]
    out = ["| " + " | ".join(head) + " (registers / SASS) |", "|---|" + "---:|" * (len(head) - 1)]
    for name in kernels:
        q = qual.get("kernels", {}).get(name, {})
        cells = []
        for tool in ("nvrtc", "warp_lab"):
            r = q.get(tool)
            cells.append(f"{r['registers']} / {r['sass_instructions']}"
                         if r and "na" not in r else NA)
        for e in exps:
            r = whatif.get("kernels", {}).get(name, {}).get(e)
            if not r or "na" in r:
                cells.append(NA)
            else:
                cells.append(f"{r['registers']} / {r['sass_instructions']}"
                             + (" (no change)" if r["changed"] is False else ""))
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out
