"""One finding per problem at a Python line: LLVM unrolls a reduction's loop, the simulator
reports once per PTX instruction (one race per unrolled copy, each at another element),
and ``wl.launch`` merges those copies into one finding that says how many instructions and
elements it covers (``finding_text.merge_by_line``), while other problems, at other lines,
other accesses of one line or racing with another line, stay apart. Real kernels compiled by
LLVM and run on the simulator; the expected elements follow from the reduction's steps."""

import re

import numpy as np

import warp_lab as wl
from warp_lab.examples import source_line
from warp_lab.examples.planted import PLANTED_BUGS

ALL = ("memcheck", "racecheck", "initcheck", "barrier")
TREE = 256


@wl.kernel
def tree_no_barrier(x: wl.array(dtype=wl.float32), partial: wl.array(dtype=wl.float32)):
    buf = wl.shared_array(TREE, wl.float32)
    t = wl.thread_idx.x
    buf[t] = x[wl.block_idx.x * TREE + t]
    wl.syncthreads()
    s = TREE // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]  # marker: tree step
        s //= 2
    if t == 0:
        partial[wl.block_idx.x] = buf[0]


@wl.kernel
def tail_no_syncwarp(x: wl.array(dtype=wl.float32), partial: wl.array(dtype=wl.float32)):
    buf = wl.shared_array(64, wl.float32)
    t = wl.thread_idx.x
    buf[t] = x[wl.block_idx.x * 64 + t]
    wl.syncthreads()
    s = 32
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]  # marker: tail step
        s //= 2
    if t == 0:
        partial[wl.block_idx.x] = buf[0]


@wl.kernel
def two_trees(x: wl.array(dtype=wl.float32), partial: wl.array(dtype=wl.float32)):
    a = wl.shared_array(64, wl.float32)
    b = wl.shared_array(64, wl.float32)
    t = wl.thread_idx.x
    a[t] = x[t]  # marker: fill a
    b[t] = x[t] * 2.0
    wl.syncthreads()
    s = 32
    while s > 0:
        if t < s:
            a[t] += a[t + s]  # marker: a step
        s //= 2
    s = 32
    while s > 0:
        if t < s:
            b[t] += b[t + s]  # marker: b step
        s //= 2
    if t == 0:
        partial[0] = a[0] + b[0]


@wl.kernel
def tree_no_barriers_at_all(x: wl.array(dtype=wl.float32), partial: wl.array(dtype=wl.float32)):
    buf = wl.shared_array(64, wl.float32)
    t = wl.thread_idx.x
    buf[t] = x[t]  # marker: fill
    s = 32
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]  # marker: step
        s //= 2
    if t == 0:
        partial[0] = buf[0]


def _launch(kernel, block, grid=1):
    x = np.random.default_rng(3).standard_normal(grid * block).astype(np.float32)
    return wl.launch(kernel, grid=grid, block=block, inputs=[x, np.zeros(grid, np.float32)],
                     device="sim", checks=ALL)


def _copies(ck, line, text):
    """The PTX lines of ``ck`` at Python ``line`` that are a ``ld.shared`` whose address has
    a constant offset (``[%r3+256]``: the read of ``buf[t + s]`` in each unrolled step)."""
    return [n for n, ins in enumerate(ck.ptx.splitlines(), 1)
            if ck.source_map.key_of_ptx(n) == line and re.search(text, ins)]


def test_an_unrolled_tree_reduction_without_its_barrier_is_one_finding():
    r = _launch(tree_no_barrier, TREE, grid=2)
    line = source_line(tree_no_barrier, "# marker: tree step")
    (f,) = r.findings        # seven before: one per unrolled copy of the read of buf[t + s]
    assert (f.kind, f.source_line, f.details["array"]) == ("race_raw", line, "buf")
    # LLVM unrolled the 8 steps into 8 reads of buf[t + s]; the first, of buf[128], comes
    # after the barrier, each later one reads what thread s wrote in the step before
    reads = _copies(r.compiled, line, r"ld\.shared\.\w+\s+%\w+, \[%\w+\+\d+\]")
    assert len(reads) == 8, reads
    elements = [TREE >> k for k in range(2, 9)]                  # 64, 32, ..., 1
    assert f.details["ptx_lines"] == reads[1:] and f.details["merged"] == 7
    assert [e["index"] for e in f.details["examples"]] == [(e,) for e in elements]
    assert [e["other_thread"] for e in f.details["examples"]] == [(e, 0, 0) for e in elements]
    assert all(e["thread"] == (0, 0, 0) and e["block"] == (0, 0, 0)
               for e in f.details["examples"])
    # the first copy is the example: its thread, element, PTX line and other thread
    assert (f.ptx_line, f.thread, f.details["index"]) == (reads[1], (0, 0, 0), (64,))
    assert f.message.startswith("shared-memory read-after-write hazard at buf[64], ")
    said = ", ".join(f"buf[{e}]" for e in elements)
    assert f.message.endswith(f" (7 PTX instructions of this line: "
                              f"{', '.join(map(str, reads[1:]))}; 7 elements of buf: "
                              f"{said})"), f.message
    # the notebook's findings table has one row for it
    from warp_lab.notebook.results import launch_html
    rows = [row for row in launch_html(r).split("<tr>") if "<td>race_raw</td>" in row]
    assert len(rows) == 1, rows


def test_a_warp_synchronous_tail_without_syncwarp_is_one_finding():
    r = _launch(tail_no_syncwarp, 64)
    line = source_line(tail_no_syncwarp, "# marker: tail step")
    (f,) = r.findings        # five before
    assert (f.kind, f.source_line, f.details["merged"]) == ("race_raw", line, 5)
    assert [e["index"] for e in f.details["examples"]] == [(16,), (8,), (4,), (2,), (1,)]
    assert "5 elements of buf: buf[16], buf[8], buf[4], buf[2], buf[1])" in f.message


def test_the_same_race_at_other_lines_or_with_another_line_stays_apart():
    # two reductions, one per array and line: two findings, each of its own copies
    r = _launch(two_trees, 64)
    got = [(f.kind, f.source_line, f.details["array"], f.details["merged"]) for f in r.findings]
    assert got == [("race_raw", source_line(two_trees, "# marker: a step"), "a", 5),
                   ("race_raw", source_line(two_trees, "# marker: b step"), "b", 5)], got
    # one line, two races: its first step reads what the fill wrote (line "fill"), the
    # later ones what the step before wrote (its own line): two findings
    r = _launch(tree_no_barriers_at_all, 64)
    step = source_line(tree_no_barriers_at_all, "# marker: step")
    fill = source_line(tree_no_barriers_at_all, "# marker: fill")
    raw = [f for f in r.findings if f.kind == "race_raw"]
    assert [(f.source_line, f.details["other_source_line"], f.details.get("merged", 1))
            for f in raw] == [(step, fill, 1), (step, step, 5)], [str(f) for f in raw]
    assert raw[0].details["index"] == (32,)


def test_columns_tell_the_accesses_of_one_line_apart():
    from warp_lab.runtime.finding_text import ptx_columns
    # `buf[t] += buf[t + s]`: the read of buf[t + s] in every unrolled copy has one column,
    # the read and write of buf[t] another
    ck = wl.compile(tree_no_barrier, cache=False, sass=False)
    line = source_line(tree_no_barrier, "# marker: tree step")
    cols = ptx_columns(ck.ptx)
    plus = _copies(ck, line, r"ld\.shared\.\w+\s+%\w+, \[%\w+\+\d+\]")
    own = _copies(ck, line, r"(ld|st)\.shared\.\w+\s+(%\w+, )?\[%\w+\]")
    text = tree_no_barrier.source.text.splitlines()[line - tree_no_barrier.source.first_line]
    assert {cols[n] for n in plus} == {text.index("buf[t + s]") + 1}
    assert {cols[n] for n in own} == {text.index("buf[t] +=") + 1}


def test_planted_bugs_are_one_finding_each():
    counts = {}
    for bug in PLANTED_BUGS:
        args = bug.make_inputs()
        r = wl.launch(bug.kernel, inputs=args, device="sim", checks=ALL,
                      max_instructions=200_000, **bug.launch(args).kwargs())
        counts[bug.name] = sorted((f.kind, f.source_line) for f in r.findings)
    step = source_line(PLANTED_BUGS[2].kernel, "# BUG: reads what another warp")
    assert counts["missing_syncthreads"] == [("race_raw", step)]     # six before
    # each other bug is one finding of its check, divergent_syncthreads two at two lines
    assert [len(v) for v in counts.values()] == [1, 1, 1, 2, 1, 1], counts
