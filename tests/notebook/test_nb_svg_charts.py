"""The launch view's SVG charts: well-formed, escaped, and saying the launch's own numbers.

Each chart is read back as XML (the standard library's parser): the bars' tooltips and
heights must give the counts a plain Python count of the samples gives (numpy's histogram
rule: bins closed on the left, the last one on both sides), the instruction mix's bars
must be as long as their counts say, and no text may come through unescaped.
"""

from __future__ import annotations

import os
import random
import re
import statistics
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from warp_lab.notebook.svg_charts import eng, instruction_mix_svg, nice_ticks, \
    simt_histogram_svg, time_distribution_svg

SVG = "{http://www.w3.org/2000/svg}"
REPO = Path(__file__).resolve().parents[2]


def _bars(svg: str) -> list[tuple[float, float, float, str]]:
    """(x, width, height, tooltip) of each bar, in document order."""
    root = ET.fromstring(svg)
    return [(float(r.get("x")), float(r.get("width")), float(r.get("height")),
             r.find(f"{SVG}title").text) for r in root.iter(f"{SVG}rect")]


def _count(values, lo, hi, bins):
    """The samples per bin, counted one by one (left-closed bins, the last closed)."""
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        if lo <= v <= hi:
            counts[min(int((v - lo) / width), bins - 1)] += 1
    return counts


def test_simt_histogram_bars_count_the_warps_of_each_5_percent_bin():
    rng = random.Random(7)
    # active lanes / 32: whole lanes, many warps at 100 % (a bin edge), some at 50 %
    eff = [rng.randint(1, 32) / 32 for _ in range(300)] + [1.0] * 40 + [0.5] * 9
    svg = simt_histogram_svg(eff)
    bars = _bars(svg)
    want = _count([100 * e for e in eff], 0, 100, 20)
    assert len(bars) == 20
    assert [int(re.search(r": (\d+) warps?$", tip)[1]) for *_, tip in bars] == want
    assert bars[0][3].startswith("0-5 %: ") and bars[-1][3].startswith("95-100 %: ")
    # heights in proportion to the counts
    top = max(want)
    tall = max(h for _, _, h, _ in bars)
    for (_, _, h, _), c in zip(bars, want):
        assert h == pytest.approx(tall * c / top, abs=0.02)
    assert ET.fromstring(svg).get("aria-label") == "SIMT efficiency per warp"


def test_instruction_mix_bars_have_their_counts_lengths_and_escaped_names():
    mix = {"arithmetic": 123_456, "memory": 40_000, "<script>alert(1)</script>": 7, "sync": 0}
    svg = instruction_mix_svg(mix)
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    bars = _bars(svg)
    assert [tip for *_, tip in bars] == [
        "arithmetic: 123,456 thread-instructions", "memory: 40,000 thread-instructions",
        "<script>alert(1)</script>: 7 thread-instructions", "sync: 0 thread-instructions"]
    widths = [w for _, w, _, _ in bars]
    assert widths[1] / widths[0] == pytest.approx(40_000 / 123_456, rel=1e-3)
    assert widths[3] == 0
    labels = [t.text for t in ET.fromstring(svg).iter(f"{SVG}text")]
    assert "123k" in labels and "40k" in labels and "7" in labels


def test_time_distribution_marks_the_median_and_counts_every_repeat():
    times = [1e-5 * (1 + 0.013 * k) for k in range(20)] + [3e-5]
    svg = time_distribution_svg(times)
    bars = _bars(svg)
    counts = [int(re.search(r": (\d+) launch", tip)[1]) for *_, tip in bars]
    assert sum(counts) == len(times) and len(bars) == 21
    us = [1e6 * t for t in times]
    assert counts == _count(us, min(us), max(us), 21)
    med = statistics.median(us)
    assert f"median {med:.1f} µs" in svg
    # one repeat: a bin around it, as numpy's histogram of one value
    assert [tip for *_, tip in _bars(time_distribution_svg([2e-5]))] == [
        "19.5-20.5 µs: 1 launch"]


def test_tick_steps_and_counts_are_what_a_reader_expects():
    assert nice_ticks(34, integer=True) == [0, 10, 20, 30, 40]
    assert nice_ticks(1, integer=True) == [0, 1]
    assert nice_ticks(0.9) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert [eng(x) for x in (0, 7, 999, 1000, 1234, 999_999, 2.5e6, 3e9)] == [
        "0", "7", "999", "1k", "1.23k", "1M", "2.5M", "3G"]


def test_the_launch_view_imports_no_matplotlib():
    """The speed-up's mechanism: building a launch view (its module, every chart) loads
    neither matplotlib nor ipywidgets."""
    code = ("import sys\n"
            "from warp_lab.notebook import results, svg_charts\n"
            "svg_charts.simt_histogram_svg([0.5, 1.0]); svg_charts.instruction_mix_svg({'a': 1})\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('matplotlib', 'ipywidgets')))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO),
                                                        os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


def test_load_ext_prepares_the_first_cells_lexers_and_pipeline_in_the_background():
    """``%load_ext warp_lab`` starts a warm-up thread: once it ends, the compile pipeline is
    imported and every view lexer has its regular expressions compiled (Pygments' ``_tokens``),
    which a first ``%%warp_kernel`` cell would otherwise build on its critical path."""
    code = ("import sys, threading\n"
            "from IPython.core.interactiveshell import InteractiveShell\n"
            "from warp_lab.notebook import lexers\n"
            "classes = [lexers._LEXERS[p] for p in ('python', 'llvm', 'ptx', 'sass')]\n"
            "before = [c for c in classes if '_tokens' in vars(c)]\n"
            "ip = InteractiveShell.instance()\n"
            "ip.run_line_magic('load_ext', 'warp_lab')\n"
            "for t in threading.enumerate():\n"
            "    if t.name == 'warp_lab-warm-up':\n"
            "        t.join(60)\n"
            "print(len(before), all('_tokens' in vars(c) for c in classes),\n"
            "      'warp_lab.compiler.pipeline' in sys.modules)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO),
                                                        os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120, check=True)
    assert out.stdout.split() == ["0", "True", "True"], out.stdout + out.stderr
