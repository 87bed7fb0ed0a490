"""A new user's mistakes in a real Jupyter kernel (ipykernel + nbclient), not a test shell.

ipykernel numbers cells and names their files its own way (IPython 9 counts
a cell before running it; an ordinary cell is compiled as
``/tmp/ipykernel_<pid>/<hash>.py``), so what a notebook shows is checked
here: a %%warp_kernel diagnostic names the cell ``In[N]``, as the notebook numbers it,
a @wl.kernel error in an ordinary cell says ``In[N]``, and an unclosed quote
in the magic's options is one line, not a traceback.
"""

import pytest

from nb_exec import cell_output_text, execute_cells
from nb_htmlparse import parse_view

EXPANDED_KERNEL = ("def k_exp(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):\n"
                   "    y[wl.tid()] = x[wl.tid()] + 1.0\n")

CELLS = [
    "%load_ext warp_lab\nimport numpy as np",
    "%%warp_kernel\ndef bad_magic(x: wl.array(dtype=wl.float32)):\n    x[0] = nope\n",
    "@wl.kernel\ndef bad_plain(x: wl.array(dtype=wl.float32)):\n    i = wl.tid()\n"
    "    x[i] = undefined_here\nwl.compile(bad_plain)\n",
    '%%warp_kernel --launch "dim=4\ndef k(x: wl.array(dtype=wl.float32)):\n    x[0] = 1.0\n',
    # 4: a student's kernel with a device function, an uninitialised read and a race
    "x = np.arange(64, dtype=np.float32); y = np.zeros(64, np.float32)",
    '%%warp_kernel --launch "dim=64, inputs=[x, y], block_dim=64" --check initcheck,racecheck\n'
    "@wl.func\n"
    "def helper(v: float) -> float:\n"
    "    return v * 2.0\n"
    "\n"
    "def k_dev(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):\n"
    "    tile = wl.shared_array(64, wl.float32)\n"
    "    t = wl.thread_idx.x\n"
    "    if t < 32:\n"
    "        tile[t] = x[wl.tid()]\n"
    "    wl.syncthreads()\n"
    "    y[wl.tid()] = helper(tile[63 - t])\n"
    "    tile[t] = 0.0\n",
    # 6, 7: dynamic shared memory past the 48 KB default (wl.launch opts in), and past sm_90's
    # 227 KB opt-in limit
    "%%warp_kernel --arch sm_90 --shared-mem 100000 --show resources,occupancy\n"
    "def k_dyn(x: wl.array(dtype=wl.float32)):\n"
    "    buf = wl.dynamic_shared_array(dtype=wl.float32)\n"
    "    buf[0] = 1.0\n"
    "    x[0] = buf[0]\n",
    "%%warp_kernel --arch sm_90 --shared-mem 300000 --show resources,occupancy\n"
    "def k_dyn2(x: wl.array(dtype=wl.float32)):\n"
    "    buf = wl.dynamic_shared_array(dtype=wl.float32)\n"
    "    x[0] = buf[0]\n",
    # 8: --check without memcheck, and a shared access past the (unsized) dynamic array
    '%%warp_kernel --launch "dim=64, inputs=[x]" --check initcheck --show resources\n'
    "def k_forgot(x: wl.array(dtype=wl.float32)):\n"
    "    buf = wl.dynamic_shared_array(dtype=wl.float32)\n"
    "    buf[wl.thread_idx.x] = 1.0\n"
    "    x[wl.tid()] = buf[0]\n",
    # 9: a kernel of an ordinary cell, shown; 10, 11: cells without a kernel
    "@wl.kernel\ndef ok_plain(x: wl.array(dtype=wl.float32)):\n    x[wl.tid()] = 1.0\n"
    "wl.compile(ok_plain)\n",
    "%%warp_kernel\n@wl.func\ndef only_helper(v: float) -> float:\n    return v\n",
    "%%warp_kernel\nn_items = 3\n",
    # 12..15: IPython's $name/{expression} in the magic line: expanded in the options,
    # not in --launch's Python (there {lx} was the arrays' printout, a syntax error)
    "arch = 'sm_80'; lx = [x, y]; bd = 32",
    '%%warp_kernel --arch $arch --block-dim {2 * bd} --show resources --device sim '
    '--launch "dim=64, inputs=lx"\n' + EXPANDED_KERNEL,
    '%%warp_kernel --show resources --device sim --launch "dim=64, inputs={lx}"\n'
    + EXPANDED_KERNEL,
    '%%warp_kernel --show resources --device sim --launch "dim=64, inputs=lx, block_dim=$bd"\n'
    + EXPANDED_KERNEL,
]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    return execute_cells(CELLS, tmp_path_factory.mktemp("nb"))


_text = cell_output_text


def test_magic_diagnostic_names_the_cell_as_the_notebook_numbers_it(executed):
    cell = executed.cells[1]
    assert f"In[{cell.execution_count}]:3:12: error: name 'nope'" in _text(cell), _text(cell)
    assert "TRACEBACK" not in _text(cell)


def test_plain_cell_kernel_diagnostic_says_in_n(executed):
    cell = executed.cells[2]
    text = _text(cell)
    assert f"In[{cell.execution_count}]:4:12: error: name 'undefined_here'" in text, text
    assert "ipykernel_" not in text and "TRACEBACK" not in text


def test_unclosed_quote_is_a_one_line_usage_error(executed):
    text = _text(executed.cells[3])
    assert "UsageError" in text and "No closing quotation" in text, text
    assert "shlex" not in text


def _html(cell) -> list[str]:
    return [o["data"]["text/html"] for o in cell.outputs if "text/html" in o.get("data", {})]


def _launch_html(cell) -> str:
    return next(h for h in _html(cell) if "Findings" in h)


def test_device_function_lines_are_in_the_python_pane(executed):
    # helper's line 4 produced code (the multiply); the pane shows it, in cell numbering,
    # with its text, linked (data-py) to the PTX lines it became
    cell = executed.cells[5]
    kernel_view = next(h for h in _html(cell) if 'data-pane="ptx"' in h)
    for markup in (kernel_view, _launch_html(cell)):
        py = {ln["ln"]: ln for ln in parse_view(markup).panes["python"]}
        assert py["4"]["src"].strip() == "return v * 2.0", sorted(py)
        assert py["4"]["py"] == "4"
        assert py["7"]["src"].strip().startswith("tile = wl.shared_array")
        assert "5" in py and "⋮" not in py  # only a blank line between helper and kernel
    ptx_py = {ln["py"] for ln in parse_view(kernel_view).panes["ptx"]}
    assert "4" in ptx_py  # the line is in the map, so the pane must show it
    # the PTX declaration of tile's .shared variable is linked to the line declaring tile
    decl = [ln for ln in parse_view(kernel_view).panes["ptx"] if ".shared" in ln["src"]
            and "k_dev_tile" in ln["src"]]
    assert decl and decl[0]["py"] == "7", decl
    # the card describes the launch of this cell: block_dim=64 of --launch, not the default 256
    assert "<th>block size</th><td>64</td>" in kernel_view
    assert "<th>active warps / SM</th><td>64</td>" in kernel_view  # 32 blocks of 2 warps


def test_findings_name_the_python_array_and_the_racing_line(executed):
    markup = _launch_html(executed.cells[5])
    rows = [r for r in markup.split("<tr>") if "uninitialized" in r or "race_" in r]
    uninit = next(r for r in rows if "uninitialized" in r)
    # "byte 252 of shared variable k_dev_tile_1" -> the element, the line declaring tile:
    # thread 0 reads tile[63], which threads 32..63 never wrote
    assert "read of uninitialized shared memory: <code>tile[63]</code>, the shared array " \
        "of line 7, was not written" in uninit, uninit
    race = next(r for r in rows if "race_war" in r)
    # the other access of the race is the read of line 12, the write is line 13
    assert "13: tile[t] = 0.0" in race
    assert "at line 12 (<code>y[wl.tid()] = helper(tile[63 - t])</code>), with no " \
        "barrier between them" in race, race


def test_dynamic_shared_memory_past_48_kb_is_opted_in_as_wl_launch_does(executed):
    # sm_90: 228 KB of shared memory per SM (233472 bytes); a block takes 100000 bytes plus
    # the driver's 1 KB, rounded up to 128 bytes: 101120 -> 2 blocks of 8 warps of 64 slots
    card = next(h for h in _html(executed.cells[6]) if "Resources" in h)
    assert "<th>occupancy</th><td>25%</td>" in card, card
    assert "<th>shared memory (dynamic)</th><td>100000 bytes / block</td>" in card
    assert "limited by</th><td>shared memory<" in card


def test_dynamic_shared_memory_past_the_arch_limit_is_a_usage_error(executed):
    text = _text(executed.cells[7])
    assert "UsageError: --shared-mem 300000" in text and "232448" in text, text
    assert "TRACEBACK" not in text


def test_simulator_fault_without_memcheck_names_the_cell_line(executed):
    cell = executed.cells[8]
    text = _text(cell)
    assert "SimulatorError: illegal shared memory access" in text, text
    assert f"In[{cell.execution_count}] line 4: buf[wl.thread_idx.x] = 1.0" in text, text
    assert "add memcheck to --check" in text and "TRACEBACK" not in text


def test_plain_cell_kernel_view_names_the_cell_as_in_n(executed):
    cell = executed.cells[9]
    summaries = parse_view(next(h for h in _html(cell) if "wl-pane" in h)).summaries
    assert f"Python  In[{cell.execution_count}]" in summaries, summaries
    assert not any("ipykernel_" in s for s in summaries)
    bundle = next(o["data"]["application/vnd.warp-lab.kernel+json"] for o in cell.outputs
                  if "application/vnd.warp-lab.kernel+json" in o.get("data", {}))
    assert bundle["panes"]["python"]["filename"] == f"In[{cell.execution_count}]"


def test_cell_without_a_kernel_says_so(executed):
    # a student who wrote only a helper, or no function, gets a word instead of nothing
    assert "only_helper" in _text(executed.cells[10]) and "no kernel" in _text(executed.cells[10])
    assert "no kernel" in _text(executed.cells[11])


def test_variables_expand_in_the_options_but_not_in_launch_python(executed):
    """``--arch $arch --block-dim {2 * bd}`` are the notebook's sm_80 and 64, as IPython
    expands any magic's line; ``--launch``'s text is Python as typed (``inputs=lx``)."""
    cell = executed.cells[13]
    text = _text(cell)
    assert "TRACEBACK" not in text, text
    assert "<CompiledKernel k_exp for sm_80" in text and "block=(64, 1, 1)" in text, text
    card = next(h for h in _html(cell) if "wl-card" in h)
    assert "<th>block size</th><td>64</td>" in card


def test_launch_text_with_ipython_expansion_says_to_write_the_name(executed):
    """``inputs={lx}`` was expanded into the arrays' printout (an 'unterminated string
    literal' at the magic line, or ``name 'array' is not defined``); now one line
    saying it is a set and what to write, the cell's line as typed."""
    text = _text(executed.cells[14])
    assert ("LaunchError: --launch \"dim=64, inputs={lx}\": {lx} at column 16 is a "
            "set: --launch's text is Python evaluated in the notebook namespace, without "
            "IPython's $name/{name} expansion; write lx") in text, text
    assert "array(" not in text and "unterminated" not in text
    text = _text(executed.cells[15])
    assert "$bd at column 30" in text and "write bd" in text, text
