"""The table builders of ``python -m benchmarks``' interactive and Warp compatibility sections,
fed records those benchmarks measured on this project's machine (tests/benchmarks/data/,
written by ``python -m benchmarks.interactive --json`` and ``python -m benchmarks.warp_compat
--json``): medians, targets, verdicts and failure classes come out as the records say.
Nothing here is timed."""

from __future__ import annotations

import copy
import json
import os
import statistics
from collections import Counter

import pytest

from benchmarks import interactive, warp_compat

DATA = os.path.join(os.path.dirname(__file__), "data")


def _load(name: str):
    with open(os.path.join(DATA, name)) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def run():
    return _load("interactive_run.json")


def _row(md: list[str], label: str) -> list[str]:
    rows = [ln for ln in md if ln.startswith(f"| {label} |")]
    assert len(rows) == 1, (label, md)
    return [c.strip() for c in rows[0].strip("|").split("|")]


def _values(run, ns, scenario, field):
    return [r[field] for r in run["records"] if r["ns"] == ns and r["scenario"] == scenario
            and r.get(field) is not None]


def test_recorded_run_has_every_scenario_for_both_namespaces(run):
    kinds = Counter((r["ns"], r["scenario"]) for r in run["records"])
    for ns in interactive.NAMESPACES:
        for scen in ("edit", "hit", "launch", "launch_again", "magic_launch", "fresh"):
            assert kinds[ns, scen] == run["repeats"] >= 3, (ns, scen)
    # every edit was a real compile (no SASS in its first output), every hit had its SASS
    assert all(r["first_has_sass"] is False for r in run["records"] if r["scenario"] == "edit")
    assert all(r["first_has_sass"] for r in run["records"] if r["scenario"] == "hit")


def test_medians_are_the_records_medians(run):
    s = interactive.summarise(run)
    for ns in interactive.NAMESPACES:
        for key, (scen, field) in {"edit_first": ("edit", "first"),
                                   "edit_update": ("edit", "update"),
                                   "sass_after_nvdisasm": ("edit", "sass_after_nvdisasm"),
                                   "hit": ("hit", "first"), "launch": ("launch", "done"),
                                   "launch_again": ("launch_again", "done"),
                                   "magic_launch": ("magic_launch", "done"),
                                   "fresh_import": ("fresh", "import"),
                                   "fresh_cell": ("fresh", "first")}.items():
            vals = _values(run, ns, scen, field)
            assert s[ns][key] == statistics.median(vals), (ns, key)
            assert s["samples"][ns][key] == len(vals)
        fresh = [r["import"] + r["first"] for r in run["records"]
                 if r["ns"] == ns and r["scenario"] == "fresh"]
        assert s[ns]["fresh"] == statistics.median(fresh)
        edits = [r["timings"]["ptxas"] for r in run["records"]
                 if r["ns"] == ns and r["scenario"] == "edit"]
        assert s["stages"][ns]["ptxas"] == statistics.median(edits)


def test_table_rows_show_medians_targets_and_verdicts(run):
    md = interactive.table(run, "python -m benchmarks.interactive")
    s = interactive.summarise(run)
    assert md[0].startswith("Output of `python -m benchmarks.interactive`")
    assert f"median of {run['repeats']} interleaved rounds" in md[0]
    for key, label in interactive.SCENARIOS.items():
        cells = _row(md, label)
        a, b = s["native"][key], s["warp"][key]
        assert cells[1] == f"{a * 1e3:.0f}" and cells[2] == f"{b * 1e3:.0f}", key
        assert cells[3] == f"{b / a:.2f}×"
        if key in interactive.TARGETS:
            t = interactive.TARGETS[key]
            assert cells[4] == f"≤ {t * 1e3:.0f}"
            assert cells[5] == ("met" if a <= t else "not met"), key
            assert cells[6] == ("met" if b <= t else "not met"), key
        else:
            assert cells[4:] == ["–", "–", "–"]
    a, b = s["native"]["edit_first"], s["warp"]["edit_first"]
    line = next(ln for ln in md if ln.startswith("Issue 19:"))
    assert line.endswith(("met" if b <= 1.1 * a else "not met") + " (no slower, within 10%).")


def test_notes_say_where_the_time_goes(run):
    md = interactive.table(run, "python -m benchmarks.interactive")
    stages = [ln for ln in md if ln.startswith("- pipeline stages")]
    assert len(stages) == 2 and all("ptxas" in ln and "nvdisasm" in ln for ln in stages)
    profiled = [ln for ln in md if ln.startswith("- cProfile of")]
    assert len(profiled) == len(run["profiles"]) > 0
    for ln in profiled:
        entries = ln.split("cumulative): ", 1)[1].split("; ")
        assert 0 < len(entries) <= 6
        assert all(e.split(" ms ", 1)[0].isdigit() for e in entries), ln
        # the harness's own frames and IPython's cell machinery are left out
        assert "_wlb" not in ln and "/ipykernel_" not in ln and "run_cell" not in ln


def test_top_entries_parse_pstats_rows():
    text = ("   ncalls  tottime  percall  cumtime  percall filename:lineno(function)\n"
            "    91084 function calls (90001 primitive calls) in 0.3 seconds\n"
            "      2/1    0.000    0.000    0.361    0.361 /x/interactiveshell.py:1(run_code)\n"
            "        1    0.001    0.001    0.271    0.271 /w/warp_lab/notebook/views.py:374("
            "kernel_html)\n"
            "       64    0.100    0.002    0.150    0.002 {method 'acquire' of "
            "'_thread.lock' objects}\n")
    assert interactive._top_entries(text) == [
        "271 ms /w/warp_lab/notebook/views.py:374(kernel_html)",
        "150 ms {method 'acquire' of '_thread.lock' objects}"]


def test_a_scenario_without_records_is_na_not_an_error(run):
    part = copy.deepcopy(run)
    part["records"] = [r for r in part["records"]
                       if not (r["scenario"] == "fresh" and r["ns"] == "warp")]
    part["profiles"] = {}
    md = interactive.table(part, "cmd")
    cells = _row(md, interactive.SCENARIOS["fresh_cell"])
    assert cells[2] == "n/a" and cells[3] == "n/a" and cells[6] == "n/a"
    assert cells[1] != "n/a"


@pytest.fixture(scope="module")
def compat():
    return _load("warp_compat_subset.json")


def test_warp_compat_table_counts_and_target(compat):
    s = warp_compat.summarise(compat)
    status = Counter(r["status"] for recs in compat.values() for r in recs.values())
    counted = sum(status.values()) - status["excluded"] - status["no_reference"] \
        - status["undefined"]
    assert s["counted"] == counted and s["matched"] == status["matched"] > 0
    assert s["compiled"] == counted - status["compile_failed"]
    md = warp_compat.table(s, "python -m benchmarks.warp_compat --subset", "2026-12-02 19:00 UTC")
    assert "`python -m benchmarks.warp_compat --subset` (2026-12-02 19:00 UTC)" in md[2]
    row = [c.strip() for c in md[6].strip("|").split("|")]
    assert row[0] == str(len(compat)) and row[1] == str(sum(status.values()))
    assert row[2] == str(status["excluded"]) and row[5] == str(counted)
    rate = status["matched"] / counted
    assert row[7] == f"{status['matched']} ({100 * rate:.0f}%)"
    assert row[8] == str(counted - status["matched"])
    target = next(ln for ln in md if ln.startswith("Target (issue 19)"))
    assert target.endswith("met." if rate >= 0.85 else "not met.")
    assert target.endswith(" not met.") == (rate < warp_compat.TARGET_MATCH)


def test_warp_compat_failure_classes_cover_every_failed_kernel(compat):
    s = warp_compat.summarise(compat)
    md = warp_compat.table(s, "cmd")
    start = md.index("| failed: class | kernels |")
    rows = md[start + 2:md.index("", start)]
    assert sum(int(r.rsplit("|", 2)[1]) for r in rows) == s["counted"] - s["matched"]
    labels = {"compile_failed": "compile failed", "launch_failed": "launch failed",
              "mismatch": "outputs differ"}
    for recs in compat.values():
        for rec in recs.values():
            if rec["status"] in labels:
                want = f"| {labels[rec['status']]}: {rec['why'].replace('|', '/')} |"
                assert any(r.startswith(want) for r in rows), want


def test_notebook_launch_table_finds_the_slowest_launch_and_judges_the_limit():
    from benchmarks import notebook_launches as nbl
    fast = {"kernel": "saxpy", "device": "sim", "threads": 1 << 20,
            "checks": ["memcheck", "barrier"], "seconds": 0.25}
    slow = {"kernel": "many_live", "device": "sim", "threads": 1 << 14,
            "checks": [], "seconds": nbl.LIMIT_S + 0.5}
    md = nbl.table({"01_first_kernel": [fast], "04_occupancy_registers": [fast, slow],
                    "09_empty": []})
    assert md[2] == ("| 01_first_kernel | 1 | 1,048,576 (saxpy) | saxpy (1,048,576 threads, "
                     "checks: memcheck, barrier) | 0.25 | met |")
    assert md[3].startswith("| 04_occupancy_registers | 2 | 1,048,576 (saxpy) | many_live "
                            "(16,384 threads, checks: none) | 1.50 | not met |")
    assert md[4] == "| 09_empty | 0 | – | – | – | – |"
    assert md[-1] == "Slowest launch of all: 1.50 s (target ≤ 1 s: not met)."


def test_notebook_launch_recorder_keeps_the_launch_signature_and_records_a_launch():
    """The magic checks --launch keywords against wl.launch's signature: the recorder the
    benchmark puts in front of each notebook must keep it, and record real launches."""
    import inspect

    import numpy as np

    import warp_lab.runtime.launch as launch_mod
    from benchmarks import notebook_launches as nbl
    from warp_lab.examples import get

    original = launch_mod.launch
    ns: dict = {}
    try:
        exec(nbl.RECORDER, ns)
        assert inspect.signature(launch_mod.launch) == inspect.signature(original)
        ex = get("saxpy")
        args = ex.make_inputs("small")
        launch_mod.launch(ex.kernel, dim=args[0].size, inputs=args, device="sim")
    finally:
        launch_mod.launch = original
    (rec,) = ns["_wl_launches"]
    assert rec["kernel"] == "saxpy" and rec["device"] == "sim" and rec["seconds"] > 0
    assert rec["threads"] >= args[0].size and "memcheck" in rec["checks"]


def test_stress_section_quotes_the_suites_counts_from_a_real_run():
    from benchmarks.run_all import stress_section
    lines = stress_section(0, parts="cache_attacks")
    assert lines[0].startswith("Output of `python -m tools.stress --minutes 0 --seed ")
    assert "every promise held" in lines[0], lines
    text = "\n".join(lines)
    tried = int(text.split("cache attacks tried: ")[1].split()[0])
    assert tried >= 18, text
    assert "lost arrays: 0" in text and "internal errors: 0" in text
