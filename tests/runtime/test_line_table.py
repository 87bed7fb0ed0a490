"""Per-Python-line metrics (``LaunchResult.line_metrics``) and the launch's per-line table,
checked against numbers worked out independently: the lanes a branch leaves active, a numpy
model of 32 shared-memory banks, and the simulator's per-warp counters."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.runtime.line_table import TOP_LINES, line_table, line_table_text
from warp_lab.sim.result import LineStats


@wl.kernel
def by_lane(x: wl.array(dtype=wl.float32), steps: int):
    i = wl.tid()
    v = x[i]
    if i % 2 == 0:
        for k in range(steps):
            v = v * 0.5 + 1.0
    else:
        for k in range(steps):
            v = v * 2.0 - 1.0
    x[i] = v


@wl.kernel
def strided_shared(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32),
                   stride: int):
    s = wl.shared_array(1024, wl.float32)
    t = wl.thread_idx.x
    s[t] = x[t]
    wl.syncthreads()
    out[t] = s[(t * stride) % 1024]


def _file_line(kernel, text: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    [k] = [n for n, ln in enumerate(lines) if text in ln]
    return first + k


def test_divergent_branch_lines_run_at_half_the_lanes():
    n, steps = 1024, 16
    x = np.linspace(0, 1, n, dtype=np.float32)
    res = wl.launch(by_lane, dim=n, inputs=[x, steps], device="sim")
    per_line = res.line_metrics
    even = per_line[_file_line(by_lane, "v * 0.5 + 1.0")]
    odd = per_line[_file_line(by_lane, "v * 2.0 - 1.0")]
    branch = per_line[_file_line(by_lane, "if i % 2 == 0")]
    load = per_line[_file_line(by_lane, "v = x[i]")]
    # every warp runs both loop bodies, each with its 16 even or odd lanes, `steps` times
    for body in (even, odd):
        assert body.active_lanes == 16.0 and body.simt_efficiency == 0.5
        assert body.warp_instructions % (n // 32 * steps) == 0
    # the `if` splits each of the n/32 warps once; nothing else splits
    assert branch.divergent_branches == n // 32
    assert sum(st.divergent_branches for st in per_line.values()) == n // 32
    assert load.active_lanes == 32.0 and load.sectors_per_request == 4.0  # 32 lanes x 4 B
    # the per-line sums equal the per-warp counters, which the simulator keeps separately
    m = res.metrics
    assert sum(st.thread_instructions for st in per_line.values()) == \
        int(m.warp_active_lanes.sum()) == res.sim.instructions
    assert sum(st.warp_instructions for st in per_line.values()) == int(m.warp_issued.sum())
    # .loc's own (file, line) keys give the same lines for a kernel without device functions
    by_loc = m.by_line()
    assert {line for _, line in by_loc} == set(per_line)
    assert all(by_loc[key].thread_instructions == per_line[key[1]].thread_instructions
               for key in by_loc)
    assert m.totals().divergent_branches == m.divergent_branches == n // 32


def _bank_model(words: np.ndarray) -> tuple[int, int]:
    """Wavefronts and extra wavefronts of one warp's 4-byte shared access (``words``: the 32
    lanes' word indices): the most distinct words any one of the 32 banks holds."""
    per_bank = [len(set(words[words % 32 == b].tolist())) for b in range(32)]
    wavefronts = max(per_bank)
    return wavefronts, wavefronts - 1


@pytest.mark.parametrize("stride", [1, 2, 3, 8, 32, 33])
def test_bank_conflicts_per_line_match_a_numpy_bank_model(stride):
    block = 1024    # every element of s written before the strided read
    x = np.arange(1024, dtype=np.float32)
    out = np.zeros(block, np.float32)
    res = wl.launch(strided_shared, grid=1, block=block, inputs=[x, out, stride],
                    device="sim")
    np.testing.assert_array_equal(out, x[(np.arange(block) * stride) % 1024])
    st = res.line_metrics[_file_line(strided_shared, "s[(t * stride) % 1024]")]
    want = [_bank_model((np.arange(w * 32, w * 32 + 32) * stride) % 1024)
            for w in range(block // 32)]
    assert st.shared_requests == block // 32
    assert st.shared_wavefronts == sum(w for w, _ in want)
    assert st.bank_conflicts == sum(c for _, c in want)
    assert st.wavefronts_per_request == sum(w for w, _ in want) / (block // 32)
    assert st.conflicts_per_request == st.wavefronts_per_request - 1
    store = res.line_metrics[_file_line(strided_shared, "s[t] = x[t]")]
    assert store.shared_wavefronts == store.shared_requests == block // 32
    assert store.bank_conflicts == 0
    # the simulator's own attributes stay per PTX line, and sum to the same
    assert sum(res.metrics.bank_conflicts.values()) == st.bank_conflicts


def test_text_table_shows_every_line_with_its_numbers():
    n = 256
    x = np.linspace(0, 1, n, dtype=np.float32)
    res = wl.launch(by_lane, dim=n, inputs=[x, 4], device="sim")
    text = repr(res)
    assert "per Python line (the busiest by warp-instructions):" in text
    body = _file_line(by_lane, "v * 0.5 + 1.0")
    st = res.line_metrics[body]
    [row] = [ln for ln in text.splitlines() if ln.split()[:1] == [str(body)]]
    assert "v = v * 0.5 + 1.0" in row and f"{st.thread_instructions:,}" in row
    assert "16.0 (50%)" in row
    branch = _file_line(by_lane, "if i % 2 == 0")
    [row] = [ln for ln in text.splitlines() if ln.split()[:1] == [str(branch)]]
    assert row.rstrip().endswith(f"{n // 32}")    # its divergent branches
    assert "divergent: warp-level branches whose active lanes split" in text
    assert "bank conflicts" not in text   # no shared memory: no shared columns


def test_shared_columns_state_their_unit():
    x = np.arange(1024, dtype=np.float32)
    res = wl.launch(strided_shared, grid=1, block=1024,
                    inputs=[x, np.zeros(1024, np.float32), 32], device="sim")
    assert res.findings == []
    text = "\n".join(line_table_text(res))
    # stride 32: every lane in bank 0, 32 distinct words: 32 wavefronts, 31 extra, per warp
    assert "992 (31.00 / request)" in text and "32.00" in text
    assert "bank conflicts: extra shared-memory wavefronts, in all and per request" in text


def test_top_lines_and_the_rest_add_up():
    x = np.linspace(0, 1, 256, dtype=np.float32)
    res = wl.launch(by_lane, dim=256, inputs=[x, 4], device="sim")
    per_line = res.line_metrics
    assert len(per_line) > 3 and len(per_line) <= TOP_LINES
    full = line_table(res)
    assert full.rest is None and len(full.rows) == len(per_line)
    table = line_table(res, top=3)
    assert len(table.rows) == 3 and table.rest_lines == len(per_line) - 3
    busiest = sorted(per_line.values(), key=lambda st: -st.warp_instructions)
    assert min(r.stats.warp_instructions for r in table.rows) >= \
        max(st.warp_instructions for st in busiest[3:])
    labels = [int(r.label) for r in table.rows]
    assert labels == sorted(labels)                     # shown in line order
    total = LineStats()
    for r in table.rows:
        total.add(r.stats)
    total.add(table.rest)
    assert total.thread_instructions == res.sim.instructions
    assert "…" in "\n".join(line_table_text(res, top=3))
