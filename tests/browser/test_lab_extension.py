"""The JupyterLab extension in a real JupyterLab and a real Chromium.

A notebook cell displays a kernel bundle (made by hand from llvmlite PTX and
nvdisasm SASS, see kernel_bundle.py); the tests check what a user sees: four
highlighted panes, linked hover highlighting through the line map, the PTX
opcode tooltip, copy and collapse buttons, the view in a notebook reopened
untrusted, and `.ptx`/`.ll` files highlighted in the editor.
"""

from __future__ import annotations

import json

import nbformat
import pytest
from nbformat.sign import NotebookNotary

from kernel_bundle import make_bundle

pytestmark = pytest.mark.browser

MIME = "application/vnd.warp-lab.kernel+json"
TIMEOUT_MS = 60_000

CELL = '''from IPython.display import display
from kernel_bundle import make_bundle
display({"application/vnd.warp-lab.kernel+json": make_bundle(),
         "text/plain": "saxpy (warp_lab kernel bundle)"}, raw=True)'''


def _write_notebook(path, source: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells.append(nbformat.v4.new_code_cell(source))
    nbformat.write(nb, str(path))


@pytest.fixture(scope="module")
def bundle() -> dict:
    """The same bundle the notebook's kernel displays (the fixture is deterministic)."""
    return make_bundle()


@pytest.fixture(scope="module")
def notebook_page(browser, lab_server, artifacts):
    """A page with the notebook open and its cell run; the notebook is saved."""
    _write_notebook(lab_server.root / "kernel_view.ipynb", CELL)
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda exc: pg.errors.append(str(exc)))
    pg.set_default_timeout(TIMEOUT_MS)
    pg.goto(lab_server.url("lab/tree/kernel_view.ipynb"))
    pg.locator(".jp-Notebook .jp-Cell .cm-content").first.click()
    pg.keyboard.press("Shift+Enter")
    try:
        pg.locator(".wl-kernel-view .wl-pane").first.wait_for()
    except Exception:
        pg.screenshot(path=str(artifacts / "notebook_failure.png"))
        raise AssertionError("the kernel view did not appear; outputs: "
                             + " | ".join(pg.locator(".jp-OutputArea").all_inner_texts())
                             + "; page errors: " + "; ".join(pg.errors))
    pg.keyboard.press("Control+s")
    yield pg
    context.close()


def _saved_notebook(lab_server, deadline_s: float = 30.0):
    import time
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        nb = nbformat.read(str(lab_server.root / "kernel_view.ipynb"), as_version=4)
        if nb.cells[0].get("outputs"):
            return nb
        time.sleep(0.5)
    raise AssertionError("the notebook was not saved with its output")


def test_four_panes_render_with_highlighted_tokens(notebook_page, bundle):
    view = notebook_page.locator(".wl-kernel-view")
    panes = view.locator(".wl-pane")
    assert [panes.nth(i).get_attribute("data-pane") for i in range(panes.count())] == \
        ["python", "llvm", "ptx", "sass"]
    for pane in ["python", "llvm", "ptx", "sass"]:
        text = bundle["panes"][pane]["text"]
        rows = view.locator(f".wl-pane-{pane} .wl-line")
        assert rows.count() == len(text.split("\n")), pane
        assert view.locator(f".wl-pane-{pane} .wl-tok-keyword").count() > 0, pane
        assert view.locator(f".wl-pane-{pane} .wl-tok-comment, .wl-pane-{pane} "
                            f".wl-tok-variable, .wl-pane-{pane} .wl-tok-meta").count() > 0, pane
    # an opcode token is exactly the instruction text, in the keyword colour
    ptx_ops = view.locator(".wl-pane-ptx .wl-tok-keyword").all_text_contents()
    assert "ld.global.b32" in ptx_ops and "st.global.b32" in ptx_ops
    sass_ops = view.locator(".wl-pane-sass .wl-tok-keyword").all_text_contents()
    assert "FMUL" in sass_ops and "STG.E" in sass_ops
    colors = notebook_page.evaluate("""() => {
        const kw = document.querySelector('.wl-pane-ptx .wl-tok-keyword');
        const reg = document.querySelector('.wl-pane-ptx .wl-tok-variable');
        return [getComputedStyle(kw).color, getComputedStyle(reg).color];
    }""")
    assert colors[0] != colors[1]
    assert notebook_page.errors == []


def test_user_text_is_inserted_as_text(notebook_page):
    view = notebook_page.locator(".wl-kernel-view")
    assert view.locator("img").count() == 0
    assert '<img src=x onerror="window.__wl_xss = 1">' in view.locator(".wl-pane-python").inner_text()
    assert notebook_page.evaluate("() => window.__wl_xss") is None


def test_hovering_a_python_line_highlights_its_ptx_lines(notebook_page, bundle):
    view = notebook_page.locator(".wl-kernel-view")
    view.locator('.wl-pane-python .wl-line[data-line="5"]').hover()
    linked = view.locator(".wl-pane-ptx .wl-line.wl-linked")
    lines = sorted(int(x) for x in linked.evaluate_all("rs => rs.map(r => r.dataset.line)"))
    assert lines == bundle["line_map"]["ptx"]["5"]
    assert "ld.global.b32" in " ".join(linked.all_text_contents())
    sass_lines = view.locator(".wl-pane-sass .wl-line.wl-linked").evaluate_all(
        "rs => rs.map(r => Number(r.dataset.line))")
    assert sorted(sass_lines) == bundle["line_map"]["sass"]["5"]
    # the linked PTX lines were scrolled into the PTX pane's view
    visible = notebook_page.evaluate("""() => {
        const body = document.querySelector('.wl-pane-ptx .wl-pane-body');
        const row = body.querySelector('.wl-line.wl-linked');
        const b = body.getBoundingClientRect(), r = row.getBoundingClientRect();
        return r.top >= b.top && r.bottom <= b.bottom;
    }""")
    assert visible
    # hovering a PTX line lights up its Python line
    view.locator(f'.wl-pane-ptx .wl-line[data-line="{bundle["line_map"]["ptx"]["3"][0]}"]').hover()
    py = view.locator(".wl-pane-python .wl-line.wl-linked").evaluate_all(
        "rs => rs.map(r => Number(r.dataset.line))")
    assert py == [3]


def test_ptx_opcode_tooltip(notebook_page, artifacts):
    view = notebook_page.locator(".wl-kernel-view")
    tooltip = view.locator(".wl-tooltip")
    view.locator(".wl-pane-ptx .wl-tok-keyword", has_text="mul.rn.f32").first.hover()
    tooltip.wait_for(state="visible")
    text = tooltip.inner_text()
    assert "PTX ISA: Floating-Point Instructions: mul" in text
    assert "round to nearest even" in text and "32-bit IEEE floating point" in text
    view.locator(".wl-pane-ptx .wl-tok-keyword", has_text="ld.global.b32").first.hover()
    tooltip.wait_for(state="visible")
    text = tooltip.inner_text()
    assert "PTX ISA: Data Movement and Conversion Instructions: ld" in text
    assert "global memory" in text
    view.screenshot(path=str(artifacts / "kernel_view.png"))
    notebook_page.mouse.move(5, 5)
    tooltip.wait_for(state="hidden")


def test_copy_and_collapse_buttons(notebook_page, bundle):
    view = notebook_page.locator(".wl-kernel-view")
    view.locator(".wl-pane-ptx .wl-copy").click()
    assert notebook_page.evaluate("() => navigator.clipboard.readText()") == bundle["panes"]["ptx"]["text"]
    body = view.locator(".wl-pane-llvm .wl-pane-body")
    view.locator(".wl-pane-llvm .wl-collapse").click()
    body.wait_for(state="hidden")
    view.locator(".wl-pane-llvm .wl-collapse").click()
    body.wait_for(state="visible")
    # the unoptimised IR toggle swaps the text and drops the (optimised) line colours
    view.locator(".wl-pane-llvm .wl-variant").click()
    assert view.locator(".wl-pane-llvm .wl-line").count() == \
        len(bundle["panes"]["llvm_unoptimized"]["text"].split("\n"))
    assert view.locator(".wl-pane-llvm .wl-line.wl-mapped").count() == 0
    view.locator(".wl-pane-llvm .wl-variant").click()
    assert view.locator(".wl-pane-llvm .wl-line.wl-mapped").count() > 0


def test_reopened_untrusted_notebook_renders_with_the_extension(browser, lab_server, notebook_page):
    nb = _saved_notebook(lab_server)
    assert any(MIME in out.get("data", {}) for out in nb.cells[0].outputs)
    nb.metadata["reopened_copy"] = True  # new content: no signature in the notary database
    nbformat.write(nb, str(lab_server.root / "reopened.ipynb"))
    notary = NotebookNotary(data_dir=str(lab_server.data_dir))
    assert not notary.check_signature(nbformat.read(str(lab_server.root / "reopened.ipynb"), 4))
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    try:
        pg = context.new_page()
        pg.set_default_timeout(TIMEOUT_MS)
        pg.goto(lab_server.url("lab/tree/reopened.ipynb"))
        view = pg.locator(".jp-Notebook .wl-kernel-view")
        view.locator(".wl-pane-ptx .wl-tok-keyword").first.wait_for()
        assert view.locator(".wl-pane").count() == 4
        view.locator('.wl-pane-python .wl-line[data-line="5"]').hover()
        assert view.locator(".wl-pane-ptx .wl-line.wl-linked").count() == 8
    finally:
        context.close()


@pytest.mark.parametrize("filename,pane,token", [("saxpy.ptx", "ptx", "ld.global.b32"),
                                                 ("saxpy.ll", "llvm", "define")])
def test_assembly_files_open_highlighted(browser, lab_server, bundle, artifacts,
                                         filename, pane, token):
    (lab_server.root / filename).write_text(bundle["panes"][pane]["text"])
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    try:
        pg = context.new_page()
        pg.set_default_timeout(TIMEOUT_MS)
        pg.goto(lab_server.url(f"lab/tree/{filename}"))
        editor = pg.locator(".jp-FileEditor .cm-content")
        editor.locator("span", has_text=token).first.wait_for()
        styled = pg.evaluate("""(token) => {
            const content = document.querySelector('.jp-FileEditor .cm-content');
            const spans = [...content.querySelectorAll('.cm-line span')];
            const hit = spans.find(s => s.textContent === token);
            return {count: spans.length,
                    exact: hit !== undefined,
                    color: hit ? getComputedStyle(hit).color : null,
                    plain: getComputedStyle(content).color};
        }""", token)
        assert styled["exact"], f"{token!r} is not a token of its own"
        assert styled["count"] > 20
        assert styled["color"] != styled["plain"]
        if pane == "ptx":
            pg.locator(".jp-FileEditor").screenshot(path=str(artifacts / "ptx_editor.png"))
    finally:
        context.close()
