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


_RERUN_CELL = '''%%warp_kernel --arch sm_90
def rerun_saxpy(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), a: float):
    i = wl.tid()
    y[i] = a * x[i] + y[i] + 0.75
'''


def test_a_rerun_cell_lexes_nothing_again_and_shows_this_runs_cell_label(ip):
    """Each run of a cell names it anew (``<cell N>``, the view's label), while its texts name
    it by a content-derived name: lexed with that name and relabelled after, a re-run's view
    is the view a lexing of the relabelled text gives, from the cache."""
    from warp_lab.notebook.views import kernel_html, pane_renames

    ip.run_cell("import warp_lab as wl", store_history=True)
    first = ip.run_cell(_RERUN_CELL, store_history=True).result.compiled
    second = ip.run_cell(_RERUN_CELL, store_history=True).result.compiled
    renames = pane_renames(second)
    assert renames and renames != pane_renames(first)      # another label this run
    kernel_html(first, root_id="a")
    misses = _highlight.cache_info().misses
    page = kernel_html(second, root_id="a")
    assert _highlight.cache_info().misses == misses         # nothing lexed again
    for pane in ASM_PANES:
        attr = PANES[pane][1]
        shown = pane_text(second, attr)
        if not shown:
            continue
        assert renames[0][1] in shown and renames[0][0] not in shown
        text = getattr(second, attr)
        assert highlight_lines(text, pane, renames) == \
            reference_highlight_lines(shown, pane), pane
    assert renames[0][1].replace("<", "&lt;").replace(">", "&gt;") in page


def test_a_rename_split_between_tokens_lexes_the_renamed_text():
    text = "add.s32 %r1, %r2, 7;\nret;"
    # "%r2, 7" spans a register, a comma and a number token: put in after lexing it would
    # not come out as that text's highlighting, so the renamed text is lexed
    got = highlight_lines(text, "ptx", [("%r2, 7", "%r9, 8")])
    assert got == reference_highlight_lines("add.s32 %r1, %r9, 8;\nret;", "ptx")
    assert highlight_lines(text, "ptx", [("7", "7")]) == reference_highlight_lines(text, "ptx")
