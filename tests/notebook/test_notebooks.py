"""Every teaching notebook runs top to bottom in a real Jupyter kernel (nbclient), on the simulator.

The notebooks assert their own results in their cells; a failing assertion
fails the test with the cell's error. Also: the committed notebooks carry
no outputs and equal what ``notebooks/make_notebooks.py`` writes, and an
nbconvert HTML export of notebook 01 carries the static views.
"""

from __future__ import annotations

import copy
import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

from nb_htmlparse import parse_view

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("0*.ipynb"))


def _generator():
    spec = importlib.util.spec_from_file_location("make_notebooks",
                                                  ROOT / "notebooks" / "make_notebooks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_EXECUTED: dict[Path, nbformat.NotebookNode] = {}


def _execute(path: Path, tmp_path: Path) -> nbformat.NotebookNode:
    """Run a notebook once per test session (the export test reuses the run)."""
    from nbclient import NotebookClient

    if path in _EXECUTED:
        return _EXECUTED[path]
    nb = nbformat.read(path, as_version=4)
    # generous per-cell timeout: two shared CPU cores; the notebooks themselves are small
    client = NotebookClient(nb, timeout=240, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    _EXECUTED[path] = nb
    return nb


def test_all_eight_notebooks_exist():
    assert [p.name[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04", "05", "06", "07", "08"]


def test_committed_notebooks_are_generated_and_have_no_outputs():
    gen = _generator()
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, path.name
        expected = gen.build(path.stem, gen.NOTEBOOKS[path.stem])
        assert [c.source for c in nb.cells] == [c.source for c in expected.cells], \
            f"{path.name} differs from make_notebooks.py: rerun it"


def _group(stem: str):
    """The xdist group of the tests that read notebook ``stem``'s one run (tests/conftest.py):
    they run on one worker, so the notebook runs once."""
    return pytest.mark.xdist_group(f"notebook {stem}")


@pytest.mark.slow
@pytest.mark.parametrize("path", [pytest.param(p, marks=_group(p.stem)) for p in NOTEBOOKS],
                         ids=lambda p: p.stem)
def test_notebook_runs_on_the_simulator(path, tmp_path):
    nb = _execute(path, tmp_path)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error" and "raises-exception" not in c.metadata.get("tags", [])]
    assert errors == []


@pytest.mark.slow
@_group(NOTEBOOKS[0].stem)
def test_nbconvert_html_export_of_01_has_static_views(tmp_path):
    from nbconvert import HTMLExporter

    nb = _execute(NOTEBOOKS[0], tmp_path)
    body, _ = HTMLExporter().from_notebook_node(copy.deepcopy(nb))
    view = parse_view(body)
    # the vector_add cell's view: every pane present, with its text, coloured lines
    for pane in ("python", "llvm", "ptx", "sass"):
        assert view.panes.get(pane), pane
    assert any("c[i] = a[i] + b[i]" in line["src"] for line in view.panes["python"])
    assert any(".entry" in line["src"] for line in view.panes["ptx"])
    coloured = [line for line in view.panes["ptx"] if line["style"]]
    assert coloured and all("background-color:#" in line["style"] for line in coloured)
    # the compile-error box of the broken cell, as static HTML
    assert 'class="wl-error"' in body and "not_defined_anywhere" in body


def _cell_output(nb, marker: str) -> tuple[str, str]:
    """(text/html of the displayed value, printed stdout) of the code cell containing
    ``marker``."""
    cell = next(c for c in nb.cells if c.cell_type == "code" and marker in c.source)
    html = "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs
                   if o.output_type in ("execute_result", "display_data"))
    text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
    return html, text


def _notebook(stem: str) -> Path:
    return next(p for p in NOTEBOOKS if p.stem == stem)


@pytest.mark.slow
@_group("03_reduction_and_banks")
def test_03_shows_the_conflicting_transpose_and_the_measured_ratio(tmp_path):
    nb = _execute(_notebook("03_reduction_and_banks"), tmp_path)
    view, printed = _cell_output(nb, 'runs["tile_transpose"]')
    assert "tile_transpose on " in view and "tile_transpose_padded on" not in view
    assert "Shared-memory bank conflicts per line" in view and "tile[tx, ty]" in view
    # the padded one: the same table (what the markdown says), 0 on every line
    padded, _ = _cell_output(nb, 'runs["tile_transpose_padded"]   #')
    table = padded.split("Shared-memory bank conflicts per line")[1].split("</details>")[0]
    counts = re.findall(r"<td>(\d+)</td></tr>", table)
    assert counts and set(counts) == {"0"}, table
    # the unpadded one's column read: a 32-way conflict, 31 extra wavefronts per request
    table = view.split("Shared-memory bank conflicts per line")[1].split("</details>")[0]
    assert "(conflicts: wavefronts beyond the fewest each request needs)" in table
    assert "<td>32.00</td><td>31.00</td><td>992</td></tr>" in table, table
    _, printed = _cell_output(nb, "def atomics(r):")
    ratio = float(printed.split("sum_shuffle executes ")[1].split("x ")[0])
    assert 1.5 < ratio < 2.0  # what the markdown says: less than twice as many


@pytest.mark.slow
@_group("05_branch_divergence")
def test_05_shows_the_divergent_kernels_launch(tmp_path):
    nb = _execute(_notebook("05_branch_divergence"), tmp_path)
    view, _ = _cell_output(nb, 'runs["by_lane"]')
    assert "by_lane on " in view and "by_warp on" not in view
    # what the markdown points at: the per-line table, the `if` line's 32 divergent
    # branches (one per warp), the loop bodies at 16 of 32 lanes
    table = view.split("<summary>Per line: active lanes, divergence, memory")[1]
    table = table.split("</details>")[0]
    # the source cell is code, its indentation kept (results._SOURCE_STYLE)
    assert '<code style="white-space:pre;' in table and ">    if i % 2 == 0:</code>" in table
    code = re.compile(r'<code style="[^"]*" title="[^"]*">(.*)</code>')
    rows = {r[0]: [code.sub(lambda m: m[1].strip(), c) for c in r[1:]]
            for r in (re.findall(r"<td>(.*?)</td>", tr)
                      for tr in re.findall(r"<tr>(.*?)</tr>", table)[1:])}
    assert rows["5"][0] == "if i % 2 == 0:" and rows["5"][4] == "32"
    assert rows["7"][0] == "v = v * 0.5 + 1.0" and rows["7"][3] == "16.0 (50%)"
    assert rows["10"][0] == "v = v * 2.0 - 1.0" and rows["10"][3] == "16.0 (50%)"
    _, printed = _cell_output(nb, "lines = {k: runs[k].line_metrics")
    assert "by_lane line 7: 16.0 active lanes; divergent branches: 32" in printed
    assert "by_warp line 18: 32.0 active lanes; divergent branches: 0" in printed
