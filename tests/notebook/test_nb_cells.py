"""Running the same cell again, in a real Jupyter kernel (ipykernel + nbclient).

A cell's name changes with each run (``<cell N>`` of ``%%warp_kernel``, ipykernel's
``/tmp/ipykernel_<pid>/<hash>.py`` of an ordinary cell, which changes with the cell's
whole text), so the compiled artifacts carry a content-derived name instead
(``cache.artifact_files``): the second run of a kernel is a cache hit, from memory
and from disk, while every view, finding, error and debugger stop names the cell
of the run that shows it; an ordinary cell's is ``In[N]``.
"""

import re

import nbformat
import pytest

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
]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    NotebookClient(nb, timeout=240, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path_factory.mktemp("nb"))}}).execute()
    return nb


def _text(cell) -> str:
    out = []
    for o in cell.outputs:
        if o.output_type == "stream":
            out.append(o.text)
        elif o.output_type == "error":
            out.append(f"TRACEBACK {o.ename}: {o.evalue}")
        else:
            out.append(str(o.get("data", {}).get("text/plain", "")))
    return "\n".join(out)


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
    name = f"<cell {cell.execution_count}>"
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
    assert finding.endswith(f"<cell {executed.cells[2].execution_count}> line 8)"), finding


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
    assert f"<cell {cell.execution_count}>:3:12: error: name 'nope'" in text, text


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
