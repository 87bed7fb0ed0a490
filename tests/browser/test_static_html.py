"""The static HTML views (what a notebook shows without the extension) exported by nbconvert
(lab template, light and dark theme) and read in Debian's Chromium.

nbconvert's HTML exporter passes the page through BeautifulSoup and puts it under
JupyterLab's rendered-HTML styles (``.jp-RenderedHTMLCommon pre``, right-aligned table
cells): the kernel view and the occupancy card must keep their indentation, colours and
alignment there, in both themes.
"""

from __future__ import annotations

import nbformat
import pytest

import warp_lab as wl
from warp_lab.examples import get
from warp_lab.notebook.views import compact_sass, kernel_html
from warp_lab.notebook.widgets import OccupancyWidget

# one JupyterLab server and one Chromium for every browser test: one xdist worker
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """{theme: path} of one notebook (a corpus kernel's view, an occupancy card at a
    48-thread block) exported by nbconvert's lab template; and the compiled kernel."""
    from nbconvert import HTMLExporter

    ck = wl.compile(get("warp_sum").kernel, arch="sm_90")
    card = OccupancyWidget(ck, arch="sm_90", block_size=48).static_html()
    nb = nbformat.v4.new_notebook()
    for markup in (kernel_html(ck), card):
        cell = nbformat.v4.new_code_cell("")
        cell.outputs = [nbformat.v4.new_output("display_data", data={
            "text/html": markup, "text/plain": ""})]
        nb.cells.append(cell)
    out = tmp_path_factory.mktemp("static")
    paths = {}
    for theme in ("light", "dark"):
        body, _ = HTMLExporter(template_name="lab", theme=theme).from_notebook_node(nb)
        paths[theme] = out / f"{theme}.html"
        paths[theme].write_text(body, encoding="utf-8")
    return paths, ck


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_exported_kernel_view_keeps_code_columns_colours_and_hidden_rows(
        page, exported, artifacts, theme):
    paths, ck = exported
    page.goto(paths[theme].as_uri())
    view = page.locator(".wl-kernel").first
    python = view.locator("[data-pane=python] .wl-line .wl-src").all_inner_texts()
    assert python == ck.source.text.splitlines()  # indentation kept (it was lost)
    rows = view.locator("[data-pane=sass] .wl-line").evaluate_all(
        "rs => rs.map(r => [r.offsetParent !== null, r.querySelector('.wl-src').innerText])")
    assert [text for _, text in rows] == compact_sass(ck.sass).splitlines()
    hidden = [text for shown, text in rows if not shown]
    assert hidden and all(t.lstrip().startswith('//## File "') for t in hidden)
    assert not any("//##" in t for shown, t in rows if shown)
    count = view.locator("[data-pane=sass] summary .wl-count").inner_text()
    assert count == f"{sum(t.lstrip().startswith('/*') for _, t in rows)} instructions"
    # JupyterLab's `pre` rule paints its own background and text colour (light text in
    # the dark theme): the code keeps its box's colour and its row's line colour shows
    colours = view.locator("[data-pane=ptx] .wl-line[data-py]").first.evaluate("""r => {
        const s = getComputedStyle(r.querySelector('.wl-src'));
        return [s.color, getComputedStyle(r.closest('.wl-code')).color, s.backgroundColor,
                s.marginTop, s.paddingLeft]; }""")
    assert colours[0] == colours[1] == "rgb(0, 0, 0)", colours
    assert colours[2:] == ["rgba(0, 0, 0, 0)", "0px", "0px"], colours
    view.screenshot(path=str(artifacts / f"static_kernel_view_{theme}.png"))


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_exported_occupancy_card_reads_left_to_right(page, exported, artifacts, theme):
    """JupyterLab right-aligns rendered table cells: the card's values (a sentence about
    the block's warps, the shared-memory sum) were pushed to the far right."""
    paths, _ = exported
    page.goto(paths[theme].as_uri())
    card = page.locator("[data-wl-static=occupancy]")
    aligns = card.locator("td").evaluate_all("cs => cs.map(c => getComputedStyle(c).textAlign)")
    assert aligns and set(aligns) == {"left"}, aligns
    assert "48 threads = 2 warps" in card.inner_text()
    card.screenshot(path=str(artifacts / f"static_occupancy_{theme}.png"))
