"""A ``%%warp_kernel`` cell answers before nvdisasm: the SASS pane comes by a display update.

Run in a real Jupyter kernel (nbclient, with a fresh compile cache): the cell's first
output is the view without SASS (the PTX, LLVM IR and Python panes, the resource card),
published while nvdisasm runs; then one ``update_display_data`` of the same display id
brings the whole view (the SASS listing and its live-register column). nbclient applies
the update as JupyterLab does, so the executed notebook ends with the whole view only,
and no second copy as the cell's result. A cache hit that has its SASS already is one
plain display.
"""

from __future__ import annotations

import os
import time

import nbformat
import pytest

from warp_lab.notebook.bundle import MIME_TYPE
from warp_lab.notebook.magic import SASS_PENDING

CELL = '''%%warp_kernel --arch sm_90
def later_saxpy(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), a: float):
    i = wl.tid()
    y[i] = a * x[i] + y[i]
'''


def _run(cells, tmp_path):
    """Execute ``cells`` in a fresh kernel whose compile cache is empty; the notebook and
    every iopub message nbclient processed, as (cell index, msg_type, content, seconds)."""
    from nbclient import NotebookClient

    class Recording(NotebookClient):
        def process_message(self, msg, cell, cell_index):
            seen.append((cell_index, msg["msg_type"], msg["content"], time.monotonic()))
            return super().process_message(msg, cell, cell_index)

    seen: list = []
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    old = os.environ.get("WARP_LAB_CACHE_DIR")
    os.environ["WARP_LAB_CACHE_DIR"] = str(cache)  # the kernel inherits it
    try:
        Recording(nb, timeout=240, kernel_name="python3",
                  resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        if old is None:
            os.environ.pop("WARP_LAB_CACHE_DIR")
        else:
            os.environ["WARP_LAB_CACHE_DIR"] = old
    return nb, seen


def _view_messages(seen, cell_index):
    return [(kind, content, t) for i, kind, content, t in seen if i == cell_index
            and kind in ("display_data", "update_display_data", "execute_result")
            and MIME_TYPE in content.get("data", {})]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    return _run(["%load_ext warp_lab", CELL, CELL], tmp_path_factory.mktemp("later"))


def test_first_output_has_every_pane_but_sass_then_an_update_brings_it(executed):
    nb, seen = executed
    msgs = _view_messages(seen, 1)
    assert [kind for kind, _, _ in msgs] == ["display_data", "update_display_data"]
    (_, first, t_first), (_, update, t_update) = msgs
    assert first["transient"]["display_id"] == update["transient"]["display_id"]
    assert t_first <= t_update
    early = first["data"][MIME_TYPE]
    assert early["panes"]["sass"] == {"text": None, "missing": SASS_PENDING}
    assert ".entry later_saxpy" in early["panes"]["ptx"]["text"]
    assert "define" in early["panes"]["llvm"]["text"]
    assert early["resources"]["registers"] > 0
    assert SASS_PENDING in first["data"]["text/html"]
    full = update["data"][MIME_TYPE]
    assert "/*0000*/" in full["panes"]["sass"]["text"]
    assert full["line_map"]["sass"]  # SASS lines of the kernel's Python lines
    assert full["pane_heat"]["sass"]["live_registers"]  # the SASS pane's register column
    assert full["heat"]["live_registers"]
    assert SASS_PENDING not in update["data"]["text/html"]
    # the executed notebook keeps the updated view, once
    outs = [o for o in nb.cells[1].outputs if MIME_TYPE in o.get("data", {})]
    assert len(outs) == 1 and outs[0].output_type == "display_data"
    assert outs[0]["data"][MIME_TYPE] == full


def test_a_cache_hit_with_its_sass_is_one_display(executed):
    nb, seen = executed
    msgs = _view_messages(seen, 2)
    assert [kind for kind, _, _ in msgs] == ["display_data"]
    assert "/*0000*/" in msgs[0][1]["data"][MIME_TYPE]["panes"]["sass"]["text"]
    assert [o.output_type for o in nb.cells[2].outputs] == ["display_data"]
