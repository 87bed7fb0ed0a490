"""A new user's mistakes in a real Jupyter kernel (ipykernel + nbclient), not a test shell.

ipykernel numbers cells and names their files its own way (IPython 9 counts
a cell before running it; an ordinary cell is compiled as
``/tmp/ipykernel_<pid>/<hash>.py``), so what a notebook shows is checked
here: the ``<cell N>`` of a %%warp_kernel diagnostic is the cell's ``In [N]``,
a @wl.kernel error in an ordinary cell says ``In[N]``, and an unclosed quote
in the magic's options is one line, not a traceback.
"""

import nbformat
import pytest

CELLS = [
    "%load_ext warp_lab\nimport numpy as np",
    "%%warp_kernel\ndef bad_magic(x: wl.array(dtype=wl.float32)):\n    x[0] = nope\n",
    "@wl.kernel\ndef bad_plain(x: wl.array(dtype=wl.float32)):\n    i = wl.tid()\n"
    "    x[i] = undefined_here\nwl.compile(bad_plain)\n",
    '%%warp_kernel --launch "dim=4\ndef k(x: wl.array(dtype=wl.float32)):\n    x[0] = 1.0\n',
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


def test_magic_diagnostic_names_the_cell_as_the_notebook_numbers_it(executed):
    cell = executed.cells[1]
    assert f"<cell {cell.execution_count}>:3:12: error: name 'nope'" in _text(cell), _text(cell)
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
