"""The view-build speed-ups give the same output as the code they replaced.

``highlight_lines`` (one class lookup per token type, one-part tokens without a split,
a cache of recent results) must equal the highlighter it replaced
(``benchmarks.view_build.reference_highlight_lines``) on real LLVM IR, PTX and SASS
(corpus kernels and a generated kernel) and on Python.
"""

from __future__ import annotations

import pytest

import warp_lab as wl
from benchmarks.view_build import big_kernel_source, reference_highlight_lines
from warp_lab.examples import get
from warp_lab.notebook.highlight import _highlight, highlight_lines
from warp_lab.notebook.views import PANES, pane_text

ASM_PANES = ("llvm", "llvm_unoptimized", "ptx", "sass")


@pytest.fixture(scope="module")
def pane_texts(ip):
    """(pane, text) of every asm pane of a few corpus kernels and of a generated one."""
    out = []
    for name in ("saxpy", "warp_sum", "block_sum", "positive_stats"):
        ck = wl.compile(get(name).kernel, arch="sm_90")
        out += [(p, pane_text(ck, PANES[p][1])) for p in ASM_PANES]
    view = ip.run_cell_magic("warp_kernel", "--no-cache --arch sm_90",
                             "import warp_lab as wl\n" + big_kernel_source(6, "hl_kernel"))
    out += [(p, pane_text(view.compiled, PANES[p][1])) for p in ASM_PANES]
    out = [(p, t) for p, t in out if t]
    assert len(out) >= 8 and sum(len(t) for _, t in out) > 100_000
    return out


def test_highlight_lines_equals_the_replaced_loop(pane_texts):
    python = "def k(x):\n    # a <comment> & more\n    return x  \r\n\n'''doc\nstring'''\n"
    for pane, text in [("python", python), *pane_texts]:
        _highlight.cache_clear()
        assert highlight_lines(text, pane) == reference_highlight_lines(text, pane), pane


def test_highlight_cache_returns_fresh_lists():
    _highlight.cache_clear()
    first = highlight_lines("mov.u32 %r1, %tid.x;\nret;", "ptx")
    first.append("changed")
    again = highlight_lines("mov.u32 %r1, %tid.x;\nret;", "ptx")
    assert _highlight.cache_info().hits == 1
    assert len(again) == 2 and again == reference_highlight_lines("mov.u32 %r1, %tid.x;\nret;",
                                                                   "ptx")
    assert highlight_lines("", "ptx") == []
    with pytest.raises(KeyError):
        highlight_lines("x", "no such pane")


def test_view_build_benchmark_measures_one_small_kernel(ip):
    from benchmarks.view_build import measure

    row = measure(ip, 1, 1)  # raises if the new highlighter differs from the old
    assert row["size: static HTML"] > 10_000 and row["size: bundle JSON"] > 1_000
    assert row["heat lines"] > 5 and row["lines (LLVM+PTX+SASS)"] > 100
    assert all(row[k] >= 0 for k in row)
