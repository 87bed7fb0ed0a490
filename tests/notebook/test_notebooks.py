"""Every teaching notebook runs top to bottom in a real Jupyter kernel (nbclient), on the simulator.

The notebooks assert their own results in their cells; a failing assertion
fails the test with the cell's error. Also: the notebooks hold what
``notebooks/make_notebooks.py`` writes (cell types, ids, sources, tags: the outputs,
execution counts and metadata a notebook run and saved in JupyterLab gets do not
count, and a difference is named with what to run), the committed ones carry no
outputs, and an nbconvert HTML export of notebook 01 carries the static views.
"""

from __future__ import annotations

import copy
import importlib.util
import re
import subprocess
import sys
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


def test_notebooks_on_disk_hold_what_make_notebooks_writes():
    message = _generator().check(ROOT / "notebooks")
    if message:
        pytest.fail(message, pytrace=False)


def _git_head_text(path: Path) -> str | None:
    """``path`` as the checkout's last commit holds it, or None outside a git checkout."""
    try:
        done = subprocess.run(["git", "-C", str(ROOT), "show", f"HEAD:{path.relative_to(ROOT)}"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def test_committed_notebooks_have_no_outputs():
    """Outputs saved into the working copy (``make lab``, Run All, save) are allowed; the
    commit holds none."""
    found = []
    for path in NOTEBOOKS:
        text = _git_head_text(path)
        if text is None:
            pytest.skip("not a git checkout (or git missing): no committed notebooks to read")
        nb = nbformat.reads(text, as_version=4)
        found += [f"{path.name} cell {c.get('id')}" for c in nb.cells if c.cell_type == "code"
                  and (c.outputs or c.execution_count is not None)]
    if found:
        pytest.fail("committed with outputs: " + ", ".join(found)
                    + "\nrun `python notebooks/make_notebooks.py` and commit the notebooks",
                    pytrace=False)


def _copy_of(path: Path, folder: Path) -> Path:
    """A copy of a committed notebook under its own name in ``folder``."""
    copy = folder / path.name
    copy.write_text(path.read_text())
    return copy


def test_a_changed_cell_source_fails_with_what_differs_and_what_to_run(tmp_path):
    gen = _generator()
    copy = _copy_of(_notebook("04_occupancy_registers"), tmp_path)
    nb = nbformat.read(copy, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    code[0].source = code[0].source.replace("import numpy as np", "import numpy")
    nbformat.write(nb, copy)
    assert gen.differences(copy) == [
        f"04_occupancy_registers.ipynb: cell 1 (id 04-01, code): source differs at line 2: "
        f"on disk 'import numpy', generated 'import numpy as np'"]
    message = gen.check(tmp_path)
    assert "04_occupancy_registers.ipynb: cell 1 (id 04-01, code): source differs" in message
    assert "`python notebooks/make_notebooks.py`" in message
    # the others are missing from tmp_path: each is named
    assert "01_first_kernel.ipynb: missing" in message


def test_a_removed_tag_and_a_deleted_cell_are_differences(tmp_path):
    gen = _generator()
    copy = _copy_of(_notebook("01_first_kernel"), tmp_path)
    nb = nbformat.read(copy, as_version=4)
    tagged = next(k for k, c in enumerate(nb.cells) if c.metadata.get("tags"))
    nb.cells[tagged].metadata["tags"] = []
    del nb.cells[-1]
    nbformat.write(nb, copy)
    found = gen.differences(copy)
    assert found[0].startswith(f"01_first_kernel.ipynb: cell {tagged} (id 01-{tagged:02d}, code): "
                               "tags on disk [], generated ['raises-exception']")
    assert found[-1] == (f"01_first_kernel.ipynb: {len(nb.cells)} cells on disk, "
                         f"{len(nb.cells) + 1} generated")


def test_make_notebooks_check_exits_nonzero_with_the_message(tmp_path):
    script = ROOT / "notebooks" / "make_notebooks.py"
    for path in NOTEBOOKS:
        _copy_of(path, tmp_path)
    assert _generator().check(tmp_path) is None
    nb = nbformat.read(tmp_path / "05_branch_divergence.ipynb", as_version=4)
    nb.cells[0].source += "\nedited in JupyterLab"
    nbformat.write(nb, tmp_path / "05_branch_divergence.ipynb")
    done = subprocess.run([sys.executable, str(script), "--check", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "05_branch_divergence.ipynb: cell 0 (id 05-00, markdown): source differs at line" \
        in done.stderr and "'edited in JupyterLab'" in done.stderr
    assert "run `python notebooks/make_notebooks.py`" in done.stderr


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


@pytest.mark.slow
@_group(NOTEBOOKS[0].stem)
def test_a_notebook_run_and_saved_with_its_outputs_still_passes_the_check(tmp_path):
    """``make lab``, Run All, save: the notebook on disk gets outputs, execution counts, the
    kernel's ``language_info`` and per-cell timings (nbclient's ``execution`` metadata, as
    JupyterLab's), and the check still passes; a changed line of it does not."""
    gen = _generator()
    nb = copy.deepcopy(_execute(NOTEBOOKS[0], tmp_path))
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code) and sum(len(c.outputs) for c in code) > 5
    assert "execution" in code[0].metadata and "version" in nb.metadata["language_info"]
    saved = tmp_path / "saved"
    saved.mkdir()
    path = saved / NOTEBOOKS[0].name
    nbformat.write(nb, path)
    assert gen.differences(path) == []
    kernel = next(c for c in code if c.source.startswith("%%warp_kernel"))
    kernel.source = kernel.source.replace("c[i] = a[i] + b[i]", "c[i] = a[i] - b[i]")
    nbformat.write(nb, path)
    [found] = gen.differences(path)
    assert f"(id {kernel.id}, code): source differs at line 5: on disk '    c[i] = a[i] - b[i]'" \
        in found, found


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
    assert "<td>32.00</td><td>31.00</td><td>1,015,808</td></tr>" in table, table  # 1024 blocks x 992
    _, printed = _cell_output(nb, "def atomics(r):")
    ratio = float(printed.split("sum_shuffle executes ")[1].split("x ")[0])
    assert 1.5 < ratio < 2.0  # what the markdown says: less than twice as many


@pytest.mark.slow
@_group("05_branch_divergence")
def test_05_shows_the_divergent_kernels_launch(tmp_path):
    nb = _execute(_notebook("05_branch_divergence"), tmp_path)
    view, _ = _cell_output(nb, 'runs["by_lane"]')
    assert "by_lane on " in view and "by_warp on" not in view
    # what the markdown points at: the per-line table, the `if` line's 32,768 divergent
    # branches (one per warp), the loop bodies at 16 of 32 lanes
    table = view.split("<summary>Per line: active lanes, divergence, memory")[1]
    table = table.split("</details>")[0]
    # the source cell is code, its indentation kept (results._SOURCE_STYLE)
    assert '<code style="white-space:pre;' in table and ">    if i % 2 == 0:</code>" in table
    code = re.compile(r'<code style="[^"]*" title="[^"]*">(.*)</code>')
    rows = {r[0]: [code.sub(lambda m: m[1].strip(), c) for c in r[1:]]
            for r in (re.findall(r"<td>(.*?)</td>", tr)
                      for tr in re.findall(r"<tr>(.*?)</tr>", table)[1:])}
    assert rows["5"][0] == "if i % 2 == 0:" and rows["5"][4] == "32,768"  # 2**20 threads: one per warp
    assert rows["7"][0] == "v = v * 0.5 + 1.0" and rows["7"][3] == "16.0 (50%)"
    assert rows["10"][0] == "v = v * 2.0 - 1.0" and rows["10"][3] == "16.0 (50%)"
    _, printed = _cell_output(nb, "lines = {k: runs[k].line_metrics")
    assert "by_lane line 7: 16.0 active lanes; divergent branches: 32768" in printed
    assert "by_warp line 18: 32.0 active lanes; divergent branches: 0" in printed


@pytest.mark.slow
@_group("04_occupancy_registers")
def test_nbconvert_export_of_04_shows_a_static_occupancy_card_for_each_widget(tmp_path):
    """Saved by JupyterLab (which keeps no widget state unless "Save Widget State
    Automatically" is on) and exported by nbconvert, each occupancy widget's output shows
    its static card (the text/html the widget's bundle carries): summary and chart.
    (A notebook saved with widget state, as nbclient's run keeps it, is exported with the
    widgets drawn by the HTML widget manager nbconvert's page loads from its CDN.)"""
    from nbconvert import HTMLExporter

    nb = copy.deepcopy(_execute(_notebook("04_occupancy_registers"), tmp_path))
    widgets = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
               if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert widgets, "notebook 04 shows no occupancy widget"
    assert all("data-wl-static" in o["data"].get("text/html", "") for o in widgets)
    nb.metadata.pop("widgets", None)  # what JupyterLab saves by default
    body, _ = HTMLExporter().from_notebook_node(nb)
    cards = re.split(r"<div data-wl-static=[\"']occupancy[\"']>", body)[1:]
    assert len(cards) == len(widgets), (len(cards), len(widgets))
    for card in cards:  # (up to the next card or the page's end)
        head = card[:card.index("</div></div>") + 12] if "</div></div>" in card else card
        assert "blocks" in head and "data:image/png;base64," in card.split("<div data-wl")[0]
