"""LaunchResult rich output built from the runtime's real records."""

import re

from warp_lab.runtime.device import SIMULATOR, DeviceInfo
from warp_lab.runtime.result import LaunchResult
from warp_lab.notebook import results as R
from warp_lab.notebook.results import LaunchView, launch_html

from nb_htmlparse import parse_view
from nb_records import saxpy_record

H200 = DeviceInfo("cuda", 0, "NVIDIA H200", "sm_90", sm_count=132,
                  memory_clock_khz=2_619_000, bus_width_bits=6144)


def test_gpu_result_shows_times_bandwidth_against_peak():
    ck = saxpy_record()
    times = tuple(1e-5 * (1 + 0.01 * k) for k in range(20))
    r = LaunchResult(ck, H200, (4, 1, 1), (256, 1, 1), (1024, 1, 1), times,
                     argument_bytes=3 * 4 * 1024 * 1024, printed="x < y & z\n")
    markup = launch_html(r)
    bw = r.bandwidth
    peak = H200.peak_bandwidth
    assert f"achieved {bw / 1e9:.1f} GB/s" in markup
    assert f"({100 * bw / peak:.0f}% of the {peak / 1e9:.0f} GB/s peak)" in markup
    assert markup.count('<svg class="wl-chart"') == 1  # the time distribution
    assert "kernel time over repeats" in markup and "<img" not in markup
    assert "x &lt; y &amp; z" in markup  # printed output, escaped
    assert "compile time: 12.0 ms (ptx 2.0, ptxas 10.0)" in markup


def test_single_gpu_launch_has_no_distribution_chart():
    r = LaunchResult(saxpy_record(), H200, (1, 1, 1), (32, 1, 1), (32, 1, 1), (1e-5,), 256)
    assert "<svg" not in launch_html(r)


def test_launch_view_bundle():
    r = LaunchResult(saxpy_record(), SIMULATOR, (1, 1, 1), (32, 1, 1), (32, 1, 1), (1e-3,), 256,
                     notes=("note <b>",))
    data = LaunchView(r)._repr_mimebundle_()
    assert data["text/plain"].startswith("<LaunchResult saxpy")
    assert "note &lt;b&gt;" in data["text/html"]
    assert parse_view(data["text/html"]).scripts == []


# -- with the real compiler and simulator ---------------------------------------------------

def _kernel(src: str, name: str):
    """Compile-ready Kernel from source text registered like a cell."""
    import linecache

    import warp_lab as wl

    filename = f"<test {name}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"wl": wl}
    exec(compile(src, filename, "exec"), ns)
    return wl.kernel(ns[name])


STRIDED = """\
def strided(src: wl.array(dtype=wl.float32), dst: wl.array(dtype=wl.float32), stride: int):
    i = wl.tid()
    v = src[i * stride]
    dst[i] = v
"""


def test_sim_launch_view_counts_sectors_per_line():
    import numpy as np

    import warp_lab as wl

    k = _kernel(STRIDED, "strided")
    src = np.arange(512, dtype=np.float32)
    dst = np.zeros(256, dtype=np.float32)
    r = wl.launch(k, dim=256, inputs=[src, dst, 2], device="sim")
    mem = R.memory_lines(r)
    # line 3 loads with stride 2 (8 sectors per 32-lane request), line 4 stores contiguously (4)
    assert mem[3] == {"requests": 8, "sectors": 64, "sectors_per_request": 8.0}
    assert mem[4] == {"requests": 8, "sectors": 32, "sectors_per_request": 4.0}
    per_line = R.instructions_per_line(r)
    assert sum(per_line.values()) <= r.sim.instructions and per_line[3] > 0
    markup = launch_html(r)
    view = parse_view(markup)
    assert "<td>8.00</td>" in markup and "<td>4.00</td>" in markup
    heat = {int(x["ln"]): x["heat"] for x in view.panes["python"]}
    assert heat[3] == [f"{per_line[3]:,}"]
    assert markup.count('<svg class="wl-chart"') == 2  # SIMT histogram, instruction mix
    assert "<img" not in markup


def test_memcheck_finding_points_at_the_source_line():
    import numpy as np

    import warp_lab as wl

    k = _kernel("def oob(x: wl.array(dtype=wl.float32)):\n"
                "    i = wl.block_idx.x * wl.block_dim.x + wl.thread_idx.x\n"
                "    x[i] = 1.0\n", "oob")
    x = np.zeros(40, dtype=np.float32)
    r = wl.launch(k, grid=(1, 1, 1), block=(64, 1, 1), inputs=[x], device="sim",
                  checks=("memcheck",))
    found = R.findings(r)
    assert found and all(f.source_line == 3 for f in found)
    markup = launch_html(r)
    # the source text in full in the cell's hover title (the cell cuts a long line)
    assert re.search(r'<td><code style="[^"]*" title="3: x\[i\] = 1.0">3: x\[i\] = 1.0</code>'
                     r'</td>', markup)


def test_findings_of_the_index_checked_build_say_whose_ptx_lines_they_give():
    """memcheck on a kernel with a 2-D access runs an index-checked build, so a finding's
    PTX line is one of that build's PTX, not of the PTX pane (it pointed past the pane's
    end): the table says so; a 1-D kernel runs as compiled and needs no note."""
    import numpy as np

    import warp_lab as wl

    k = _kernel("def race2(x: wl.array(dtype=wl.float32, ndim=2)):\n"
                "    i, j = wl.tid()\n"
                "    x[0, 0] = float(i + j)\n", "race2")
    x = np.zeros((4, 8), dtype=np.float32)
    r = wl.launch(k, dim=(4, 8), inputs=[x], device="sim")
    assert r.compiled.options.index_checks and R.findings(r)
    assert r.compiled.ptx != wl.compile(k, sass=False).ptx
    assert "PTX lines are those of the index-checked build" in launch_html(r)
    k1 = _kernel("def race1(x: wl.array(dtype=wl.float32)):\n"
                 "    i = wl.tid()\n"
                 "    x[0] = float(i)\n", "race1")
    r1 = wl.launch(k1, dim=32, inputs=[np.zeros(4, np.float32)], device="sim")
    assert R.findings(r1) and "index-checked build" not in launch_html(r1)


def test_dynamic_shared_finding_names_the_python_array():
    """A launch that forgets shared_mem: the finding says which wl.dynamic_shared_array."""
    import linecache

    import numpy as np

    import warp_lab as wl

    src = ("%%warp_kernel\ndef forgot(x: wl.array(dtype=wl.float32)):\n"
           "    buf = wl.dynamic_shared_array(dtype=wl.float32)\n"
           "    buf[wl.thread_idx.x] = 1.0\n    x[wl.tid()] = buf[0]\n")
    linecache.cache["<res cell>"] = (len(src), None, src.splitlines(True), "<res cell>")
    ns = {"wl": wl}
    exec(compile("\n" + src.split("\n", 1)[1], "<res cell>", "exec"), ns)
    r = wl.launch(wl.kernel(ns["forgot"]), dim=32, inputs=[np.zeros(32, np.float32)],
                  block_dim=32, device="sim")
    assert [f.kind for f in r.findings] == ["out_of_bounds"]
    markup = launch_html(r)
    assert "dynamic shared memory (wl.dynamic_shared_array <code>buf</code>, line 3," in markup
    assert "__wl_dynamic_shared" not in markup


def test_simulator_view_gives_the_total_and_what_no_python_line_holds():
    """The heat column sums to the total less the instructions under '.loc 1 0' (code the
    compiler merged from several lines that names none of them: here the two branches'
    identical ``out[i] = out[i + 64]``, one load and one store after LLVM merges them; a
    merged store of a value computed on a line goes to that line, ``line_zero``): the
    view says both numbers, so the totals add up."""
    import re

    import numpy as np

    import warp_lab as wl

    src = ("def gather(out: wl.array(dtype=wl.float32), stride: int):\n"
           "    i = wl.tid()\n"
           "    if i % stride == 0:\n"
           "        out[i] = out[i + 64]\n"
           "    else:\n"
           "        out[i] = out[i + 64]\n")
    import linecache

    linecache.cache["<res cell 2>"] = (len(src), None, src.splitlines(True), "<res cell 2>")
    ns = {"wl": wl}
    exec(compile(src, "<res cell 2>", "exec"), ns)
    r = wl.launch(wl.kernel(ns["gather"]), dim=64, inputs=[np.zeros(128, np.float32), 2],
                  block_dim=64, device="sim")
    assert not r.findings
    # independent of the line map: walk the PTX, tracking the current .loc line
    line0, current = 0, None
    for k, text in enumerate(r.compiled.ptx.splitlines(), 1):
        m = re.match(r"\s*\.loc\s+\d+\s+(\d+)", text)
        if m:
            current = int(m.group(1))
        elif current == 0:
            line0 += r.metrics.per_ptx_line.get(k, 0)
    assert line0 > 0  # the merged load and store and their address
    markup = launch_html(r)
    assert f"{r.sim.instructions:,} thread-instructions" in markup
    assert f"{line0:,} of them on no Python line" in markup


GUARDED = """\
def guarded(x: wl.array(dtype=wl.float32), n: int):
    i = wl.tid()
    v = x[i]
    if i % 4 != 0:
        for k in range(n):
            v = v + 1.0 if k < i else v   # <b>not markup</b>
    x[i] = v
"""


def test_sim_launch_view_has_a_per_line_table_with_active_lanes():
    """The per-line table: every line that ran instructions, its lanes and divergence,
    user text escaped; the numbers are line_metrics' (checked against the lanes the guard keeps)."""
    import re

    import numpy as np

    import warp_lab as wl
    from warp_lab.runtime.line_table import line_table_text

    k = _kernel(GUARDED, "guarded")
    x = np.zeros(256, np.float32)
    r = wl.launch(k, dim=256, inputs=[x, 20], device="sim")
    i = np.arange(256)
    np.testing.assert_array_equal(x, np.where(i % 4 != 0, np.minimum(i, 20), 0))
    markup = launch_html(r)
    head = ("<summary>Per line: active lanes, divergence, memory (every line that ran "
            "instructions)")
    assert head in markup
    table = markup.split(head)[1].split("</details>")[0]
    assert "<b>not markup</b>" not in markup
    assert "v = v + 1.0 if k &lt; i else v   # &lt;b&gt;not markup&lt;/b&gt;" in table
    # the source column is code: monospaced, white space kept, so the nesting shows
    sources = re.findall(r'<td><code style="([^"]*)" title="[^"]*">(.*?)</code></td>', table)
    assert len(sources) == 7
    assert all("white-space:pre" in style and "monospace" in style for style, _ in sources)
    texts = [text for _, text in sources]
    assert texts[0].startswith("def guarded(") and "    i = wl.tid()" in texts
    assert "        for k in range(n):" in texts
    assert "            v = v + 1.0 if k &lt; i else v   # &lt;b&gt;not markup&lt;/b&gt;" in texts
    rows = {int(m[0]): m[1:] for m in (
        re.findall(r"<td>(.*?)</td>", tr) for tr in re.findall(r"<tr>(.*?)</tr>", table)[1:])}
    per_line = R.line_metrics(r)
    assert set(rows) == set(per_line) and len(rows) == 7
    # i % 4 != 0 keeps 24 of each warp's 32 lanes in the loop; the `if` splits all 8 warps
    for line in (5, 6):
        assert per_line[line].active_lanes == 24.0 and rows[line][3] == "24.0 (75%)"
    assert per_line[4].divergent_branches == 8 and rows[4][4] == "8"
    assert rows[3][5] == "4.00"          # x[i]: 32 lanes x 4 bytes, 4 sectors per request
    assert "bank conflicts" not in table    # no shared memory: no shared columns
    # the text printout has the same rows
    assert "\n    ".join(line_table_text(r)) in repr(r)
