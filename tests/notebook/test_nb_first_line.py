"""``%%warp_kernel`` below a cell's first line, in a real Jupyter kernel (nbclient).

A student's habit: a comment above the magic. IPython runs a cell magic only from the first
line; lower down its escape transformer makes ``%%warp_kernel`` the line magic
``%warp_kernel`` (one ``%`` kept), whose lookup failed with IPython's "Line magic function
`%%warp_kernel` not found". warp_lab registers that name to say what to move, and the cell
still fails, so Run All stops there and the functions below are not bound as plain Python.
"""

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from nb_exec import cell_output_text

CELLS = [
    "%load_ext warp_lab\n",
    "# my kernel\n"
    "%%warp_kernel --arch sm_80\n"
    "def k_first(x: wl.array(dtype=wl.float32)):\n"
    "    x[wl.tid()] = 1.0\n",
    "print('RAN', 'k_first' in dir())\n",
]


@pytest.fixture(scope="module")
def run_all(tmp_path_factory):
    """The notebook run as Run All does: stopping at the first failing cell."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    client = NotebookClient(nb, timeout=240, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path_factory.mktemp("nb"))}})
    with pytest.raises(CellExecutionError) as info:
        client.execute()
    return nb, info.value


def test_a_comment_above_the_magic_says_the_magic_must_be_the_first_line(run_all):
    nb, _ = run_all
    text = cell_output_text(nb.cells[1])
    assert ("UsageError: %%warp_kernel --arch sm_80 is not the cell's first line: a cell "
            "magic must start its cell") in text, text
    assert "Move what is above it (a comment, code) below it" in text
    assert "not found" not in text


def test_the_cell_fails_so_run_all_stops_there(run_all):
    nb, error = run_all
    assert "%%warp_kernel --arch sm_80" in str(error)      # the failing cell is the magic's
    assert nb.cells[2].outputs == []                        # the next cell never ran
