"""Running the same cell again, in a real Jupyter kernel (ipykernel + nbclient).

A cell's name changes with each run (``<cell N>`` of ``%%warp_kernel``, ipykernel's
``/tmp/ipykernel_<pid>/<hash>.py`` of an ordinary cell, which changes with the cell's
whole text), so the compiled artifacts carry a content-derived name instead
(``cache.artifact_files``): the second run of a kernel is a cache hit, from memory
and from disk, while every view, finding, error and debugger stop names the cell
of the run that shows it; an ordinary cell's is ``In[N]``.
"""

import re

import pytest

from nb_exec import cell_output_text, execute_cells
from nb_htmlparse import parse_view

KCELL = ('%%warp_kernel --launch "dim=64, inputs=[x]"{extra}\n'
         "@wl.func\n"
         "def twice(v: float) -> float:\n"
         "    return v * 2.0\n"
         "\n"
         "def k_rerun(x: wl.array(dtype=wl.float32)):\n"
         "    i = wl.tid()\n"
         "    x[i + 1] = twice(x[i])\n")  # i = 63 writes past the end: line 8

PLAIN = ("@wl.kernel\n"
         "def k_plain(x: wl.array(dtype=wl.float32)):\n"
         "    i = wl.tid()\n"
         "    x[i + 1] = x[i]\n")

CELLS = [
    # 0: a disk cache of this notebook's own
    "import os, tempfile\nos.environ['WARP_LAB_CACHE_DIR'] = tempfile.mkdtemp()\n"
    "%load_ext warp_lab\nimport numpy as np\nfrom warp_lab.compiler import cache as C\n"
    "x = np.zeros(64, np.float32)\n",
    KCELL.format(extra=""),                                        # 1: compiled
    KCELL.format(extra=""),                                        # 2: from memory
    "ck = _launch.compiled\nprint('RUN', 'cache' in ck.timings, ck.source.filename)\n"
    "print('FINDING', _launch.findings[0])\nC.default_cache().clear()\n",   # 3
    KCELL.format(extra=" --diff previous"),                        # 4: from disk
    "ck = _launch.compiled\nprint('RUN', 'cache' in ck.timings, ck.source.filename)\n"
    "from warp_lab.notebook.debugger import debug\n"
    "dbg = debug(k_rerun, dim=64, inputs=[np.zeros(64, np.float32)])\n"
    "dbg.add_breakpoint(line=4)\nstop = dbg.cont()\n"
    "print('STOP', stop.source_file, stop.source_line)\n",         # 5
    "%%warp_kernel\ndef k_err(x: wl.array(dtype=wl.float32)):\n    x[0] = nope\n",   # 6
    "%%warp_kernel\ndef k_err(x: wl.array(dtype=wl.float32)):\n    x[0] = nope\n",   # 7
    # 8, 9: the same kernel lines in two ordinary cells (two ipykernel files)
    PLAIN + "ck1 = wl.compile(k_plain)\nprint('RUN', 'cache' in ck1.timings)\n",
    PLAIN + "ck2 = wl.compile(k_plain)\nprint('RUN', 'cache' in ck2.timings)\n"
    "r = wl.launch(k_plain, dim=64, inputs=[x], device='sim')\nprint(r)\n"
    "print('FINDING', r.findings[0])\n",
    # 10: an error of an ordinary cell's kernel, as str() gives it
    "@wl.kernel\ndef k_bad(x: wl.array(dtype=wl.float32)):\n    x[0] = nope\n"
    "try:\n    wl.compile(k_bad)\nexcept wl.KernelCompileError as exc:\n"
    "    print('ERROR', str(exc).splitlines()[0])\n",
    # 11, 12: a device function of an ordinary cell, called by a %%warp_kernel cell's kernel
    "@wl.func\ndef put(x: wl.array(dtype=wl.float32), i: int, v: float):\n    x[i] = v * 3.0\n",
    "%%warp_kernel\ndef k_cross(x: wl.array(dtype=wl.float32)):\n    put(x, wl.tid(), 2.0)\n",
    # 13, 14: a --debug kernel's bounds check traps; its finding quotes the check's message
    '%%warp_kernel --debug --launch "dim=64, inputs=[x]"\n'
    "def k_trap(x: wl.array(dtype=wl.float32)):\n    i = wl.tid()\n    x[i + 1] = x[i]\n",
    "print('TRAP', _launch.findings[0])\n",
]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    return execute_cells(CELLS, tmp_path_factory.mktemp("nb"))


_text = cell_output_text


def _kernel_view(cell) -> str:
    """The kernel view's markup, without a ``--diff`` block appended to it."""
    markup = next(o["data"]["text/html"] for o in cell.outputs
                  if 'data-pane="ptx"' in o.get("data", {}).get("text/html", ""))
    return markup.split('<div class="wl-title">diff:')[0]


def _printed(cell, tag: str) -> str:
    return next(ln[len(tag) + 1:] for ln in _text(cell).splitlines() if ln.startswith(tag + " "))


@pytest.mark.parametrize("index", [1, 2, 4])
def test_each_run_shows_its_own_cell(executed, index):
    cell = executed.cells[index]
    name = f"In[{cell.execution_count}]"       # the notebook's name, for every kind of cell
    view = parse_view(_kernel_view(cell))
    assert f"Python  {name}" in view.summaries, view.summaries
    ptx = view.panes["ptx"]
    assert any(f'.file 1 "{name}"' in " ".join(ln["src"].split()) for ln in ptx), \
        [ln["src"] for ln in ptx if ".file" in ln["src"]]
    assert not any("<cell of" in ln["src"] for pane in view.panes.values() for ln in pane)
    # the Python <-> PTX correspondence, the helper's line 4 of the same cell included
    py = {ln["ln"]: ln for ln in view.panes["python"]}
    assert py["4"]["src"].strip() == "return v * 2.0" and py["4"]["py"] == "4"
    assert {"4", "8"} <= {ln["py"] for ln in ptx}
    card = _kernel_view(cell)
    assert ("cache hit in" in card) == (index != 1), index


def test_the_second_run_is_a_cache_hit_from_memory_then_from_disk(executed):
    for index, shown in ((3, 2), (5, 4)):
        hit, filename = _printed(executed.cells[index], "RUN").split(maxsplit=1)
        assert hit == "True" and filename == f"<cell {executed.cells[shown].execution_count}>"


def test_a_finding_of_a_rerun_names_the_new_cell(executed):
    finding = _printed(executed.cells[3], "FINDING")
    assert finding.startswith("[out_of_bounds]"), finding
    assert finding.endswith(f"In[{executed.cells[2].execution_count}] line 8)"), finding


def test_diff_previous_after_a_rerun_is_unchanged(executed):
    html_out = [o["data"]["text/html"] for o in executed.cells[4].outputs
                if "text/html" in o.get("data", {})]
    diff = next(h for h in html_out if "diff:" in h)
    assert "PTX: unchanged" in diff and "SASS: unchanged" in diff, diff


def test_the_debugger_stops_in_the_current_cell(executed):
    assert _printed(executed.cells[5], "STOP") == \
        f"<cell {executed.cells[4].execution_count}> 4"


@pytest.mark.parametrize("index", [6, 7])
def test_an_error_of_a_rerun_cell_names_it(executed, index):
    cell = executed.cells[index]
    text = _text(cell)
    assert f"In[{cell.execution_count}]:3:12: error: name 'nope'" in text, text


def test_an_ordinary_cell_kernel_is_a_hit_in_another_cell_and_names_it_in_n(executed):
    assert _printed(executed.cells[8], "RUN") == "False"
    cell = executed.cells[9]
    assert _printed(cell, "RUN") == "True"  # another ipykernel file, the same lines
    finding = _printed(cell, "FINDING")
    assert finding.endswith(f"In[{cell.execution_count}] line 4)"), finding
    text = _text(cell)
    assert re.search(rf"finding: \[out_of_bounds\].*In\[{cell.execution_count}\] line 4", text)
    assert "ipykernel_" not in text


def test_an_ordinary_cell_kernel_error_says_in_n(executed):
    cell = executed.cells[10]
    assert _printed(cell, "ERROR").startswith(
        f"In[{cell.execution_count}]:3:12: error: name 'nope'"), _text(cell)


# -- a device function of another cell (in process: cells registered as IPython does) ------

HELPER_CELL = ("import warp_lab as wl\n"
               "@wl.func\n"
               "def put(x: wl.array(dtype=wl.float32), i: int, v: float):\n"
               "    x[i + 1] = v\n")           # line 4: past the end for the last thread
KERNEL_CELL = ("\n\n"
               "@wl.kernel\n"
               "def k_cross(x: wl.array(dtype=wl.float32)):\n"
               "    i = wl.tid()\n"
               "    put(x, i, 2.0)\n")         # line 6; line 4 here is the def line


def _run_cell(name: str, text: str, ns: dict) -> dict:
    import linecache

    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    exec(compile(text, name, "exec"), ns)  # noqa: S102 - the test's own cell text
    return ns


def test_a_device_function_of_another_cell_is_named_with_its_own_cell():
    import numpy as np

    import warp_lab as wl
    from warp_lab.notebook.debugger import debug
    from warp_lab.notebook.results import launch_html

    ns = _run_cell("<cell 21>", HELPER_CELL, {})
    _run_cell("<cell 22>", KERNEL_CELL, ns)
    ck = wl.compile(ns["k_cross"], sass=False)
    assert ck.source_map.cells == {"<cell of k_cross>": "<cell 22>", "<cell of put>": "<cell 21>"}
    res = wl.launch(ck, dim=8, inputs=[np.zeros(8, np.float32)], device="sim")
    [f] = [f for f in res.findings if f.kind == "out_of_bounds"]
    assert (f.source_file, f.source_line) == ("<cell 21>", 4)
    assert str(f).endswith("In[21] line 4)")
    # the view names the helper's own cell and line, not line 4 of the kernel's cell
    page = launch_html(res)
    assert "In[21] line 4: x[i + 1] = v" in page, page[page.find("Findings"):][:600]
    found = page[page.find("Findings"):]
    assert "def k_cross" not in found[:found.index("</details>")]
    # the per-line table too (where the kernel's def line, its parameter loads, is a row)
    lines = page[page.index("<summary>Per line"):]
    lines = lines[:lines.index("</details>")]
    # the source cell is code, its indentation kept (results._CODE_STYLE)
    assert re.search(r"<td>In\[21\] line 4</td><td><code [^>]*> *x\[i \+ 1\] = v</code></td>",
                     lines), lines
    # per-line metrics of the helper's line are its cell's line
    page = launch_html(wl.launch(ck, dim=8, inputs=[np.zeros(9, np.float32)], device="sim"))
    table = page[page.index("Global memory per line"):]
    assert "<td>In[21] line 4</td><td>x[i + 1] = v</td>" in table, table[:500]
    # without memcheck the fault is located by its .loc (what the magic's --launch shows)
    from warp_lab.errors import SimulatorError
    from warp_lab.notebook.launch_option import at_cell_line

    with pytest.raises(SimulatorError) as fault:
        wl.launch(ck, dim=8, inputs=[np.zeros(8, np.float32)], device="sim", checks=())
    text = str(at_cell_line(fault.value, ck))
    assert text.endswith("at In[21] line 4: x[i + 1] = v"), text
    # a breakpoint on line 4 is the kernel cell's line 4 (its def), not the helper's store
    dbg = debug(ck, dim=8, inputs=[np.zeros(8, np.float32)])
    dbg.add_breakpoint(line=4)
    stops, stop = [], dbg.cont()
    while stop and len(stops) < 20:   # a falsy LaunchEnded at the end
        stops.append((stop.source_file, stop.source_line))
        stop = dbg.cont()
    assert stops and set(stops) == {("<cell 22>", 4)}, stops
    # a stop in the helper is shown with the helper's cell, line and text
    dbg = debug(ck, dim=8, inputs=[np.zeros(8, np.float32)])
    stop = dbg.step()
    for _ in range(200):
        if not stop or stop.source_file == "<cell 21>":
            break
        stop = dbg.step()
    assert (stop.source_file, stop.source_line) == ("<cell 21>", 4)
    status = dbg.status_html()
    assert "Python line In[21] line 4: <code>x[i + 1] = v</code>" in status, status


def test_a_device_function_of_another_cell_is_in_the_view_under_its_cell(executed):
    helper_cell, cell = executed.cells[11], executed.cells[12]
    markup = _kernel_view(cell)
    view = parse_view(markup)
    rows = [(ln["ln"], ln["py"], ln["src"].strip()) for ln in view.panes["python"]]
    label = f"# In[{helper_cell.execution_count}]"
    assert ("⋮", None, label) in rows, rows
    # the helper's rows show its own cell's numbers and link by their line map keys
    store = next(r for r in rows if r[2] == "x[i] = v * 3.0")
    assert store[0] == "3" and int(store[1]) == 1_000_003, rows
    ptx = [ln for ln in view.panes["ptx"] if ln["py"] == store[1]]
    assert any("st.global" in ln["src"] for ln in ptx), [ln["src"] for ln in ptx]
    style = next(ln["style"] for ln in view.panes["python"] if ln["py"] == store[1])
    assert style and all(ln["style"] == style for ln in ptx)
    bundle = next(o["data"]["application/vnd.warp-lab.kernel+json"] for o in cell.outputs
                  if "application/vnd.warp-lab.kernel+json" in o.get("data", {}))
    assert [None, label] in bundle["python_rows"] and "1000003" in bundle["line_map"]["ptx"]
    k = bundle["python_rows"].index([1_000_003, "    x[i] = v * 3.0"])
    assert bundle["python_row_numbers"][k] == 3


def test_a_debug_trap_finding_says_what_its_thread_printed_in_the_current_cell(executed):
    """Thread 63's bounds check prints "In[N]:4: index 64 ..." and traps: the finding
    quotes that line, with the cell named as in this run, not its artifact name."""
    finding = _printed(executed.cells[14], "TRAP")
    cell = f"In[{executed.cells[13].execution_count}]"
    assert finding.startswith("[trap] trap instruction executed after the thread printed "
                              f"'{cell}:4: index 64 out of bounds for axis 0 with size 64'"), \
        finding
    assert "<cell of" not in finding
