"""The JupyterLab extension in a real JupyterLab and a real Chromium.

A notebook runs ``%load_ext warp_lab`` and a ``%%warp_kernel`` cell (the
real pipeline: llvmlite, ptxas, nvdisasm); the tests check what a user sees
against the bundle the kernel emitted (read back from the saved notebook):
four highlighted panes, linked hover highlighting through the line map, the
PTX opcode tooltip, copy and collapse buttons, the view in a notebook
reopened untrusted, and `.ptx`/`.ll` files highlighted in the editor.  A
hand-made bundle (kernel_bundle.py) checks the SASS map and heat columns.
"""

from __future__ import annotations

import html
import re
import time
from html.parser import HTMLParser

import nbformat
import pytest
from nbformat.sign import NotebookNotary

from kernel_bundle import make_bundle

# one JupyterLab server and one Chromium for every browser test: one xdist worker
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

MIME = "application/vnd.warp-lab.kernel+json"
TIMEOUT_MS = 60_000
#: the kernel view in the visible notebook (not one in a background tab)
VIEW = ".jp-NotebookPanel:not(.lm-mod-hidden) .wl-kernel-view"

KERNEL_CELL = '''%%warp_kernel
import warp_lab as wl
def saxpy(a: wl.float32, x: wl.array(wl.float32), y: wl.array(wl.float32)):
    i = wl.tid()
    if i < x.shape[0]:  # <img src=x onerror="window.__wl_xss = 1"> stays text
        y[i] = a * x[i] + y[i]'''

DISPLAY_CELL = '''from IPython.display import display
from kernel_bundle import make_bundle
display({"application/vnd.warp-lab.kernel+json": make_bundle(),
         "text/plain": "saxpy (warp_lab kernel bundle)"}, raw=True)
display({"application/vnd.warp-lab.kernel+json": {"version": 2, "panes": {}},
         "text/plain": "a bundle from the future"}, raw=True)
display({"application/vnd.warp-lab.kernel+json": {**make_bundle(), "resources": {
             "registers": 1, "spill_stores": 0, "spill_loads": 0, "shared": 2048,
             "local": 12288, "barriers": 1}},
         "text/plain": "saxpy with more resources"}, raw=True)'''


def _write_notebook(path, *sources: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells.extend(nbformat.v4.new_code_cell(src) for src in sources)
    nbformat.write(nb, str(path))


def _new_page(browser, artifacts, width=1600, height=1000):
    context = browser.new_context(viewport={"width": width, "height": height})
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda exc: pg.errors.append(str(exc)))
    pg.set_default_timeout(TIMEOUT_MS)
    return context, pg


def _run_notebook(pg, lab_server, artifacts, name: str, n_cells: int) -> None:
    """Open `name`, run its cells one by one and wait for the kernel view."""
    pg.goto(lab_server.url(f"lab/tree/{name}"))
    # run only once the kernel is connected and idle: keys pressed before
    # that are dropped, not queued
    pg.wait_for_function("""() => {
        const panel = window.jupyterapp?.shell.currentWidget;
        const kernel = panel?.sessionContext?.session?.kernel;
        return !!kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
    }""")
    pg.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell .cm-content").first.click()
    for _ in range(n_cells):
        pg.keyboard.press("Shift+Enter")
    try:
        pg.locator(f"{VIEW} .wl-pane").first.wait_for()
    except Exception:
        pg.screenshot(path=str(artifacts / "notebook_failure.png"))
        raise AssertionError("the kernel view did not appear; outputs: "
                             + " | ".join(pg.locator(".jp-OutputArea").all_inner_texts())
                             + "; page errors: " + "; ".join(pg.errors))


def _saved_output(path, deadline_s: float = 30.0) -> dict:
    """The data of the output holding the kernel bundle in the saved notebook at `path`
    (waits for the save): the bundle under MIME, the static view under text/html."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            nb = nbformat.read(str(path), as_version=4)
        except ValueError:  # caught mid-write (NotJSONError is a ValueError)
            time.sleep(0.5)
            continue
        for cell in nb.cells:
            for out in cell.get("outputs", []):
                if MIME in out.get("data", {}):
                    return out["data"]
        time.sleep(0.5)
    raise AssertionError(f"{path.name} was not saved with a kernel bundle")


def _save_when_sass_is_in(pg) -> None:
    """Ctrl-S once every kernel view has its SASS: a view first comes without it (nvdisasm
    runs on in the kernel, then the display is updated), and a save before that keeps the
    first one."""
    pg.wait_for_function(
        "() => !document.body.innerText.includes('nvdisasm is disassembling the cubin')",
        timeout=60_000)
    pg.keyboard.press("Control+s")


def _saved_bundle(path, deadline_s: float = 30.0) -> dict:
    """The kernel bundle in the saved notebook at `path` (waits for the save)."""
    return _saved_output(path, deadline_s)[MIME]


@pytest.fixture(scope="module")
def magic(browser, lab_server, artifacts):
    """(page, bundle): the %%warp_kernel notebook run and saved, and its bundle."""
    path = lab_server.root / "kernel_view.ipynb"
    _write_notebook(path, "%load_ext warp_lab", KERNEL_CELL)
    context, pg = _new_page(browser, artifacts)
    _run_notebook(pg, lab_server, artifacts, path.name, 2)
    _save_when_sass_is_in(pg)
    yield pg, _saved_bundle(path)
    context.close()


def _line_count(text: str) -> int:
    """Rows a pane shows for `text` (a final newline opens no empty row)."""
    return len(text.removesuffix("\n").split("\n"))


def _lines(locator) -> list[int]:
    return sorted(locator.evaluate_all("rs => rs.map(r => Number(r.dataset.line))"))


def test_four_panes_render_with_highlighted_tokens(magic):
    pg, bundle = magic
    view = pg.locator(VIEW)
    panes = view.locator(".wl-pane")
    assert [panes.nth(i).get_attribute("data-pane") for i in range(panes.count())] == \
        ["python", "llvm", "ptx", "sass"]
    for pane in ["python", "llvm", "ptx", "sass"]:
        text = bundle["panes"][pane]["text"]
        assert text, f"the {pane} pane is missing: {bundle['panes'][pane]}"
        assert view.locator(f".wl-pane-{pane} .wl-line").count() == _line_count(text), pane
        assert view.locator(f".wl-pane-{pane} .wl-tok-keyword").count() > 0, pane
        assert view.locator(f".wl-pane-{pane} .wl-tok-variable").count() > 0, pane
    ptx_ops = view.locator(".wl-pane-ptx .wl-tok-keyword").all_text_contents()
    expected = re.findall(r"^\s+(?:@%p\d+\s+)?([a-z][a-z0-9_.]*)", bundle["panes"]["ptx"]["text"], re.M)
    assert [op for op in ptx_ops if op != "ret"][:5] == [op for op in expected if op != "ret"][:5]
    assert any(op.startswith("ld.global") for op in ptx_ops)
    sass_ops = view.locator(".wl-pane-sass .wl-tok-keyword").all_text_contents()
    assert "EXIT" in sass_ops and any(op.startswith("STG") for op in sass_ops)
    colors = pg.evaluate("""() => {
        const kw = document.querySelector('.wl-pane-ptx .wl-tok-keyword');
        const reg = document.querySelector('.wl-pane-ptx .wl-tok-variable');
        return [getComputedStyle(kw).color, getComputedStyle(reg).color];
    }""")
    assert colors[0] != colors[1]
    # the resource card: the view's rows (the static view's), label over value
    facts = dict(view.locator(".wl-resources .wl-fact").evaluate_all(
        "fs => fs.map(f => [f.querySelector('.wl-fact-label').textContent, f.querySelector('.wl-fact-value').textContent])"))
    assert facts == dict(map(tuple, bundle["view"]["resources"]["rows"]))
    assert facts["registers / thread"] == str(bundle["resources"]["registers"])
    assert pg.errors == []


def test_user_text_is_inserted_as_text(magic):
    pg, _ = magic
    view = pg.locator(VIEW)
    assert view.locator("img").count() == 0
    assert '<img src=x onerror="window.__wl_xss = 1">' in view.locator(".wl-pane-python").inner_text()
    assert pg.evaluate("() => window.__wl_xss") is None


def test_hovering_a_python_line_highlights_its_ptx_lines(magic):
    pg, bundle = magic
    view = pg.locator(VIEW)
    first = bundle["panes"]["python"]["first_line"]
    py_line = max(bundle["line_map"]["ptx"], key=lambda k: len(bundle["line_map"]["ptx"][k]))
    row = int(py_line) - first + 1
    view.locator(f'.wl-pane-python .wl-line[data-line="{row}"]').hover()
    assert _lines(view.locator(".wl-pane-ptx .wl-line.wl-linked")) == bundle["line_map"]["ptx"][py_line]
    assert _lines(view.locator(".wl-pane-llvm .wl-line.wl-linked")) == \
        sorted(bundle["line_map"]["llvm"].get(py_line, []))
    # the first linked PTX line was scrolled into the PTX pane's view
    assert pg.evaluate("""() => {
        const body = document.querySelector('.wl-pane-ptx .wl-pane-body');
        const row = body.querySelector('.wl-line.wl-linked');
        const b = body.getBoundingClientRect(), r = row.getBoundingClientRect();
        return r.top >= b.top && r.bottom <= b.bottom;
    }""")
    # a linked row's gutter is marked (the sticky gutter covers the row's left edge)
    gutter = "g => getComputedStyle(g).backgroundColor"
    assert view.locator(".wl-pane-ptx .wl-line.wl-linked .wl-gutter").first.evaluate(gutter) != \
        view.locator(".wl-pane-ptx .wl-line:not(.wl-linked) .wl-gutter").first.evaluate(gutter)
    # and back: hovering one of those PTX lines lights up the Python line
    ptx_line = bundle["line_map"]["ptx"][py_line][0]
    view.locator(f'.wl-pane-ptx .wl-line[data-line="{ptx_line}"]').hover()
    assert _lines(view.locator(".wl-pane-python .wl-line.wl-linked")) == [row]


def test_keyboard_cursor_links_lines_like_hovering(magic, artifacts):
    """Each pane body is a focusable, labelled region; its arrow keys move a cursor line
    that links the other panes as hovering does, without moving the notebook's cell."""
    pg, bundle = magic
    view = pg.locator(VIEW)
    pg.mouse.move(5, 5)
    first = bundle["panes"]["python"]["first_line"]
    py_line = max(bundle["line_map"]["ptx"], key=lambda k: len(bundle["line_map"]["ptx"][k]))
    row = int(py_line) - first + 1
    body = view.locator(".wl-pane-python .wl-pane-body")
    assert body.get_attribute("tabindex") == "0" and body.get_attribute("role") == "region"
    assert body.get_attribute("aria-label").startswith("Python code; arrow keys")
    body.focus()
    cell = "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"
    active = pg.evaluate(cell)
    for _ in range(row):
        pg.keyboard.press("ArrowDown")
    cursor = view.locator(".wl-line.wl-cursor")
    assert cursor.count() == 1 and cursor.get_attribute("data-line") == str(row)
    assert cursor.get_attribute("aria-current") == "true"
    assert _lines(view.locator(".wl-pane-ptx .wl-line.wl-linked")) == bundle["line_map"]["ptx"][py_line]
    assert _lines(view.locator(".wl-pane-sass .wl-line.wl-linked")) == \
        sorted(bundle["line_map"]["sass"].get(py_line, []))
    assert pg.evaluate(cell) == active  # the arrows stayed in the pane
    view.screenshot(path=str(artifacts / "kernel_view_keyboard.png"))
    # from a PTX line back to its Python line; End goes to the last line
    ptx_line = bundle["line_map"]["ptx"][py_line][0]
    view.locator(".wl-pane-ptx .wl-pane-body").focus()
    pg.keyboard.press("Home")
    for _ in range(ptx_line - 1):
        pg.keyboard.press("ArrowDown")
    assert cursor.get_attribute("data-line") == str(ptx_line)
    assert _lines(view.locator(".wl-pane-python .wl-line.wl-linked")) == [row]
    pg.keyboard.press("End")
    assert cursor.get_attribute("data-line") == str(_line_count(bundle["panes"]["ptx"]["text"]))
    pg.keyboard.press("Escape")
    assert cursor.count() == 0 and view.locator(".wl-line.wl-linked").count() == 0
    assert pg.errors == []


def test_heat_columns_are_labelled_and_sass_registers_are_per_instruction(magic):
    pg, bundle = magic
    view = pg.locator(VIEW)
    for pane in ("python", "sass"):
        label = view.locator(f".wl-pane-{pane} .wl-heat-head .wl-heat-label")
        assert label.all_inner_texts() == ["regs"], pane
        assert "live registers" in label.get_attribute("title")
    # the SASS column: nvdisasm's count at each instruction, from the bundle's pane_heat
    per_line = bundle["pane_heat"]["sass"]["live_registers"]
    shown = view.locator(".wl-pane-sass .wl-line").evaluate_all(
        "rs => rs.map(r => [r.dataset.line, r.querySelector('.wl-heat-registers').textContent])")
    assert {line: int(text) for line, text in shown if text} == \
        {line: n for line, n in per_line.items()}
    assert len(set(per_line.values())) > 1
    assert pg.errors == []


def test_ptx_opcode_tooltip(magic, artifacts):
    pg, _ = magic
    view = pg.locator(VIEW)
    tooltip = view.locator(".wl-tooltip")
    load = view.locator(".wl-pane-ptx .wl-tok-keyword", has_text=re.compile(r"^ld\.global\."))
    op = load.first.inner_text()
    load.first.hover()
    tooltip.wait_for(state="visible")
    text = tooltip.inner_text()
    assert text.startswith(op)
    assert "PTX ISA: Data Movement and Conversion Instructions: ld" in text
    assert "global memory" in text
    view.screenshot(path=str(artifacts / "kernel_view.png"))
    fp = view.locator(".wl-pane-ptx .wl-tok-keyword", has_text=re.compile(r"^(fma|mul|add)\.rn\.f32$"))
    fp.first.hover()
    tooltip.wait_for(state="visible")
    assert re.search(r"PTX ISA: Floating-Point Instructions: (fma|mul|add)$", tooltip.inner_text())
    assert "round to nearest even" in tooltip.inner_text()
    pg.mouse.move(5, 5)
    tooltip.wait_for(state="hidden")


def test_copy_collapse_and_unoptimized_toggle(magic):
    pg, bundle = magic
    view = pg.locator(VIEW)
    view.locator(".wl-pane-ptx .wl-copy").click()
    assert pg.evaluate("() => navigator.clipboard.readText()") == bundle["panes"]["ptx"]["text"]
    body = view.locator(".wl-pane-llvm .wl-pane-body")
    view.locator(".wl-pane-llvm .wl-collapse").click()
    body.wait_for(state="hidden")
    view.locator(".wl-pane-llvm .wl-collapse").click()
    body.wait_for(state="visible")
    # the unoptimised IR has no line map: its lines carry no colours
    view.locator(".wl-pane-llvm .wl-variant").click()
    assert view.locator(".wl-pane-llvm .wl-line").count() == \
        _line_count(bundle["panes"]["llvm_unoptimized"]["text"])
    assert view.locator(".wl-pane-llvm .wl-line.wl-mapped").count() == 0
    view.locator(".wl-pane-llvm .wl-variant").click()
    assert view.locator(".wl-pane-llvm .wl-line.wl-mapped").count() > 0


def test_pane_headers_show_their_whole_line_count(magic, artifacts):
    """Each header's "N lines" is whole at the default width, the LLVM pane's (title, cell
    label, count, -O0 and Copy buttons) included: it once read "196 li…". The SASS pane
    counts its instructions, as the static view does (it counted the hidden `//## File`
    rows and the labels as lines)."""
    pg, bundle = magic
    view = pg.locator(VIEW)
    counts = view.locator(".wl-pane-header .wl-pane-count").evaluate_all("""cs => cs.map(c => [
        c.closest('.wl-pane').dataset.pane, c.textContent, c.scrollWidth, c.clientWidth,
        c.getBoundingClientRect().right, c.closest('.wl-pane').getBoundingClientRect().right])""")
    pg.screenshot(path=str(artifacts / "pane_headers.png"))
    assert [c[0] for c in counts] == ["python", "llvm", "ptx", "sass"]
    for pane, text, scroll_w, client_w, right, pane_right in counts:
        assert re.fullmatch(r"[\d,]+ instructions" if pane == "sass" else r"[\d,]+ lines", text), \
            (pane, text)
        assert scroll_w <= client_w and right <= pane_right, (pane, text, scroll_w, client_w)
    llvm = dict((c[0], c[1]) for c in counts)["llvm"]
    assert llvm == f"{_line_count(bundle['panes']['llvm']['text']):,} lines"
    sass = bundle["panes"]["sass"]["text"]
    offsets = re.findall(r"^\s*/\*([0-9a-f]{4})\*/", sass, re.M)  # 16 bytes each (sm_70+)
    assert [int(o, 16) for o in offsets] == list(range(0, 16 * len(offsets), 16))
    assert dict((c[0], c[1]) for c in counts)["sass"] == f"{len(offsets):,} instructions"


def test_sass_file_comments_are_hidden_but_keep_their_line_numbers(magic):
    """nvdisasm's `//## File "In[2]", line N` took every other SASS row; the pane hides
    them (the colours and links say the same), rows keep the text's line numbers, so the
    line map still applies, and the keyboard cursor steps over them."""
    pg, bundle = magic
    view = pg.locator(VIEW)
    text = bundle["panes"]["sass"]["text"].removesuffix("\n").split("\n")
    comments = [k for k, line in enumerate(text, 1) if line.lstrip().startswith("//## File")]
    assert len(comments) > 3
    rows = view.locator(".wl-pane-sass .wl-line").evaluate_all(
        "rs => rs.map(r => [Number(r.dataset.line), r.offsetParent !== null, r.textContent])")
    assert [n for n, _, _ in rows] == list(range(1, len(text) + 1))
    assert [n for n, shown, _ in rows if not shown] == comments
    assert not any("//##" in t for _, shown, t in rows if shown)
    # every mapped instruction row is still there to link
    mapped = {n for lines in bundle["line_map"]["sass"].values() for n in lines}
    assert {n for n, shown, _ in rows if shown} >= mapped - set(comments)
    view.locator(".wl-pane-sass .wl-pane-body").focus()
    pg.keyboard.press("Home")
    seen = []
    for _ in range(12):
        pg.keyboard.press("ArrowDown")
        seen.append(int(view.locator(".wl-line.wl-cursor").get_attribute("data-line")))
    assert seen == sorted(set(seen)) and not set(seen) & set(comments)
    pg.keyboard.press("Escape")


def _pane_boxes(view) -> dict:
    return dict(view.locator(".wl-pane").evaluate_all("""ps => ps.map(p => {
        const r = p.getBoundingClientRect();
        return [p.dataset.pane, {left: r.left, right: r.right, top: r.top, width: r.width}];
    })"""))


def test_panes_stack_in_a_narrow_window_and_a_collapsed_pane_gives_up_its_width(magic, artifacts):
    pg, _ = magic
    view = pg.locator(VIEW)
    wide = _pane_boxes(view)
    view.locator(".wl-pane-llvm .wl-collapse").click()
    collapsed = _pane_boxes(view)
    assert collapsed["llvm"]["width"] < 40  # its header only, not a 10em column
    # the open panes of its row take the row's width but its strip's
    row = [b for b in collapsed.values() if abs(b["top"] - collapsed["llvm"]["top"]) < 2]
    width = view.locator(".wl-panes").evaluate("p => p.clientWidth")
    assert len(row) >= 2 and sum(b["width"] for b in row) > width - 4 * len(row) - 2, row
    assert max(b["right"] for b in row) - min(b["left"] for b in row) > width - 2
    assert sum(b["width"] for b in row if b is not collapsed["llvm"]) > \
        sum(b["width"] for k, b in wide.items() if abs(b["top"] - wide["llvm"]["top"]) < 2
            and k != "llvm")
    view.locator(".wl-pane-llvm .wl-collapse").click()
    pg.set_viewport_size({"width": 760, "height": 1000})
    try:
        pg.wait_for_function("""() => {
            const v = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .wl-kernel-view');
            return v.getBoundingClientRect().width < 500;
        }""")
        pg.wait_for_timeout(100)  # the layout follows the width on the next frame
        box = view.evaluate("v => { const r = v.getBoundingClientRect();"
                            " return {left: r.left, right: r.right, sw: v.scrollWidth, cw: v.clientWidth}; }")
        narrow = _pane_boxes(view)
        view.screenshot(path=str(artifacts / "kernel_view_narrow.png"))
        assert box["sw"] <= box["cw"] + 1  # nothing sticks out of the output
        for pane, b in narrow.items():
            assert box["left"] - 1 <= b["left"] and b["right"] <= box["right"] + 1, pane
        assert len({round(b["top"]) for b in narrow.values()}) == 4  # one pane a row
        assert narrow["python"]["width"] > 0.9 * (box["right"] - box["left"])
    finally:
        pg.set_viewport_size({"width": 1600, "height": 1000})


def test_reopened_untrusted_notebook_renders_with_the_extension(browser, lab_server, magic, artifacts):
    _, bundle = magic
    nb = nbformat.read(str(lab_server.root / "kernel_view.ipynb"), as_version=4)
    nb.metadata["reopened_copy"] = True  # new content: no signature in the notary database
    copy = lab_server.root / "reopened.ipynb"
    nbformat.write(nb, str(copy))
    notary = NotebookNotary(data_dir=str(lab_server.data_dir))
    assert not notary.check_signature(nbformat.read(str(copy), as_version=4))
    context, pg = _new_page(browser, artifacts)
    try:
        pg.goto(lab_server.url(f"lab/tree/{copy.name}"))
        view = pg.locator(VIEW)
        view.locator(".wl-pane-ptx .wl-tok-keyword").first.wait_for()
        assert view.locator(".wl-pane").count() == 4
        py_line, ptx_lines = next(iter(bundle["line_map"]["ptx"].items()))
        row = int(py_line) - bundle["panes"]["python"]["first_line"] + 1
        view.locator(f'.wl-pane-python .wl-line[data-line="{row}"]').hover()
        assert _lines(view.locator(".wl-pane-ptx .wl-line.wl-linked")) == ptx_lines
        assert pg.errors == []
    finally:
        context.close()


HELPER_CELL = '''%%warp_kernel
import warp_lab as wl
@wl.func
def scale(v: wl.float32) -> wl.float32:
    return v * 3.0 + 1.0  # <img src=x onerror="window.__wl_xss_helper = 1"> stays text

# not shown: the lines between the device function and the kernel are one gap row
N_UNUSED = 4

def scaled(x: wl.array(wl.float32), y: wl.array(wl.float32)):
    i = wl.tid()
    if i < x.shape[0]:
        y[i] = scale(x[i])'''


class _PythonPaneRows(HTMLParser):
    """The line numbers of the static view's Python pane (``⋮`` for a gap), in order."""

    def __init__(self):
        super().__init__()
        self.numbers: list[str] = []
        self._pane = self._number = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self._pane = a.get("data-pane", self._pane)
        self._number = "" if self._pane == "python" and a.get("class") == "wl-ln" else None

    def handle_data(self, data):
        if self._number is not None:
            self._number += data

    def handle_endtag(self, tag):
        if self._number is not None and tag == "span":
            if self._number.strip():  # the heat columns' header row has no number
                self.numbers.append(self._number.strip())
            self._number = None


def test_device_function_rows_gap_and_links_in_the_python_pane(browser, lab_server, artifacts):
    """A device function above the kernel: its lines, a ⋮ gap row, the kernel; its PTX links."""
    path = lab_server.root / "device_function.ipynb"
    _write_notebook(path, "%load_ext warp_lab", HELPER_CELL)
    cell = HELPER_CELL.split("\n")  # cell line n is cell[n - 1] (the magic is line 1)
    line_of = {key: next(n for n, text in enumerate(cell, start=1) if text.startswith(key))
               for key in ("@wl.func", "    return v", "def scaled")}
    helper = list(range(line_of["@wl.func"], line_of["    return v"] + 1))
    kernel = list(range(line_of["def scaled"], len(cell) + 1))
    context, pg = _new_page(browser, artifacts)
    try:
        _run_notebook(pg, lab_server, artifacts, path.name, 2)
        _save_when_sass_is_in(pg)
        data = _saved_output(path)
        bundle = data[MIME]
        view = pg.locator(VIEW)
        rows = view.locator(".wl-pane-python .wl-line").evaluate_all(
            "rs => rs.map(r => [r.querySelector('.wl-gutter').textContent.trim(),"
            " r.querySelector('.wl-code').textContent, r.classList.contains('wl-gap')])")
        gutter = [number for number, _, _ in rows]
        assert gutter == [*map(str, helper), "⋮", *map(str, kernel)], rows
        for number, text, gap in rows:  # each row is its cell line, as text
            assert gap == (number == "⋮")
            assert text.rstrip() == ("" if gap else cell[int(number) - 1].rstrip()), number
        assert view.locator("img").count() == 0
        assert pg.evaluate("() => window.__wl_xss_helper") is None
        # the pane names the cell as the notebook numbers it, as the static view's title does
        filename = view.locator(".wl-pane-python .wl-pane-file").inner_text()
        assert filename == bundle["panes"]["python"]["filename"] == "In[2]"
        assert f"Python  {html.escape(filename)}" in data["text/html"]
        # the static view (text/html) shows the same rows
        html_rows = _PythonPaneRows()
        html_rows.feed(data["text/html"])
        assert html_rows.numbers == gutter
        # hovering a PTX line of the inlined helper lights up the helper's Python line ...
        ret = line_of["    return v"]
        ptx_lines = bundle["line_map"]["ptx"][str(ret)]
        ret_row = view.locator(".wl-pane-python .wl-line").nth(gutter.index(str(ret)))
        ptx_row = view.locator(f'.wl-pane-ptx .wl-line[data-line="{ptx_lines[0]}"]')
        ptx_row.hover()
        linked = view.locator(".wl-pane-python .wl-line.wl-linked .wl-gutter").all_text_contents()
        assert [t.strip() for t in linked] == [str(ret)]
        # ... which has the colour of that PTX line
        color = "r => r.style.backgroundColor"
        assert ret_row.evaluate(color) != "" and ret_row.evaluate(color) == ptx_row.evaluate(color)
        # and back: the helper's line lights up its PTX lines; the gap row links nothing
        ret_row.hover()
        assert _lines(view.locator(".wl-pane-ptx .wl-line.wl-linked")) == sorted(ptx_lines)
        gap_row = view.locator(".wl-pane-python .wl-line.wl-gap")
        assert gap_row.evaluate(color) == ""
        gap_row.hover()
        assert view.locator(".wl-line.wl-linked").count() == 0
        view.screenshot(path=str(artifacts / "kernel_view_device_function.png"))
        assert pg.errors == []
    finally:
        context.close()


def test_hand_made_bundle_sass_map_and_heat_columns(browser, lab_server, artifacts):
    """A bundle with instruction counts and a SASS map read from nvdisasm's markers."""
    bundle = make_bundle()
    _write_notebook(lab_server.root / "hand_bundle.ipynb", DISPLAY_CELL)
    context, pg = _new_page(browser, artifacts)
    try:
        _run_notebook(pg, lab_server, artifacts, "hand_bundle.ipynb", 1)
        view = pg.locator(VIEW).first  # the second output is the bad bundle
        view.locator('.wl-pane-python .wl-line[data-line="5"]').hover()
        assert _lines(view.locator(".wl-pane-sass .wl-line.wl-linked")) == bundle["line_map"]["sass"]["5"]
        assert _lines(view.locator(".wl-pane-ptx .wl-line.wl-linked")) == bundle["line_map"]["ptx"]["5"]
        heat = view.locator('.wl-pane-python .wl-line[data-line="5"] .wl-heat-instructions')
        assert heat.inner_text() == str(bundle["heat"]["instructions"]["5"])
        assert heat.get_attribute("title") == f"{bundle['heat']['instructions']['5']} instructions executed"
        regs = view.locator('.wl-pane-python .wl-line[data-line="4"] .wl-heat-registers')
        assert regs.inner_text() == "4"
        assert view.locator(".wl-pane-file").count() == 0  # a bundle without a filename
        # a bundle this renderer cannot read says so, as text
        error = pg.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .wl-error")
        assert error.inner_text() == ("warp_lab: cannot show this kernel bundle: unsupported "
                                      "bundle version 2 (this renderer reads version 1)")
        # byte counts exact, as ptxas -v prints them; one barrier, one register
        more = pg.locator(VIEW).nth(2)  # nth(1): the bundle from the future
        more.locator(".wl-chip").first.wait_for()
        chips = more.locator(".wl-chip").all_inner_texts()
        for chip in ("1 register/thread", "2,048 B shared/block", "12,288 B local/thread",
                     "1 barrier"):
            assert chip in chips, chips
        # a Python line with no given colour gets one from the palette
        assert view.locator('.wl-pane-python .wl-line[data-line="6"]').evaluate(
            "r => r.style.backgroundColor") != ""
        # the view follows JupyterLab's dark theme through its CSS variables
        light = _pane_colors(view)
        pg.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', "
                    "{theme: 'JupyterLab Dark'})")
        pg.locator("body[data-jp-theme-light='false']").wait_for(state="attached")
        pg.wait_for_function("""() => {
            const pane = document.querySelector('.wl-pane-ptx');
            const [r, g, b] = getComputedStyle(pane).backgroundColor.match(/\\d+/g).map(Number);
            return r + g + b < 3 * 128;
        }""")
        dark = _pane_colors(view)
        assert dark["keyword"] != light["keyword"] and dark["text"] != light["text"]
        assert dark["background"] != light["background"]
        view.screenshot(path=str(artifacts / "kernel_view_dark.png"))
        pg.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', "
                    "{theme: 'JupyterLab Light'})")
        pg.locator("body[data-jp-theme-light='true']").wait_for(state="attached")
    finally:
        context.close()


def _pane_colors(view) -> dict:
    return view.locator(".wl-pane-ptx").evaluate("""p => ({
        keyword: getComputedStyle(p.querySelector('.wl-tok-keyword')).color,
        text: getComputedStyle(p.querySelector('.wl-code')).color,
        background: getComputedStyle(p).backgroundColor})""")


@pytest.mark.parametrize("filename,pane,token", [("saxpy.ptx", "ptx", "ld.global.b32"),
                                                 ("saxpy.ll", "llvm", "define")])
def test_assembly_files_open_highlighted(browser, lab_server, artifacts, filename, pane, token):
    (lab_server.root / filename).write_text(make_bundle()["panes"][pane]["text"])
    context, pg = _new_page(browser, artifacts, 1200, 800)
    try:
        pg.goto(lab_server.url(f"lab/tree/{filename}"))
        pg.locator(".jp-FileEditor .cm-content span", has_text=token).first.wait_for()
        styled = pg.evaluate("""(token) => {
            const content = document.querySelector('.jp-FileEditor .cm-content');
            const spans = [...content.querySelectorAll('.cm-line span')];
            const hit = spans.find(s => s.textContent === token);
            return {count: spans.length, exact: hit !== undefined,
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


OCCUPANCY_CELL = '''%%warp_kernel --show occupancy --block-dim 48
def saxpy(a: wl.float32, x: wl.array(wl.float32), y: wl.array(wl.float32)):
    i = wl.tid()
    if i < x.shape[0]:
        y[i] = a * x[i] + y[i]'''

_KERNEL_IDLE = """() => {
    const k = window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel;
    return !!k && k.connectionStatus === 'connected' && k.status === 'idle';
}"""


def test_reopened_occupancy_widget_after_a_kernel_restart_shows_its_static_card(
        browser, lab_server, artifacts):
    """The widget's model dies with its kernel: reopened, the (trusted) output showed
    ipywidgets' "Error displaying widget: model not found" although it carries the static
    card under text/html; the extension's widget fallback shows the card instead."""
    path = lab_server.root / "occupancy_restart.ipynb"
    _write_notebook(path, "%load_ext warp_lab", OCCUPANCY_CELL)
    context, pg = _new_page(browser, artifacts)
    pg.goto(lab_server.url(f"lab/tree/{path.name}"))
    pg.wait_for_function(_KERNEL_IDLE)
    pg.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell .cm-content").first.click()
    pg.keyboard.press("Shift+Enter")
    pg.keyboard.press("Shift+Enter")
    pg.locator(".jp-OutputArea .widget-image").first.wait_for()   # the live widget
    pg.wait_for_function(_KERNEL_IDLE)
    # the live widget shows the cell's 48 threads per block (its slider, in warp steps,
    # showed 64), the occupancy of 48, and a slider beside the box
    live = pg.locator(".jp-OutputArea .widget-vbox").first
    assert live.locator("input[type=number]").first.input_value() == "48"
    assert live.locator(".widget-slider").count() == 1
    assert "48 threads = 2 warps" in live.inner_text()
    live.screenshot(path=str(artifacts / "occupancy_widget_live.png"))
    # the chart at its PNG's aspect (a 576x288 image was drawn 576x394) at both sizes
    for width, height in ((1366, 768), (1920, 1080)):
        pg.set_viewport_size({"width": width, "height": height})
        pg.wait_for_timeout(300)
        shown = live.locator(".widget-image").first.evaluate(
            "i => [i.naturalWidth, i.naturalHeight, i.getBoundingClientRect().width,"
            " i.getBoundingClientRect().height]")
        nat_w, nat_h, w, h = shown
        assert nat_w > 0 and w > 0 and abs(w / h - nat_w / nat_h) < 0.02 * nat_w / nat_h, \
            (width, shown)
    pg.set_viewport_size({"width": 1600, "height": 1000})
    _save_when_sass_is_in(pg)
    end = time.monotonic() + 30
    while time.monotonic() < end:
        try:
            outs = [o for c in nbformat.read(str(path), as_version=4).cells
                    for o in c.get("outputs", [])]
        except ValueError:  # caught mid-write
            outs = []
        if any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outs):
            break
        time.sleep(0.5)
    else:
        raise AssertionError("the notebook was not saved with the widget output")
    data = next(o["data"] for o in outs
                if "application/vnd.jupyter.widget-view+json" in o.get("data", {}))
    assert "data-wl-static='occupancy'" in data["text/html"]
    pg.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session"
                ".kernel.restart()")
    pg.wait_for_function(_KERNEL_IDLE)
    context.close()
    # reopen: same session, a restarted kernel with no widget models
    context, pg = _new_page(browser, artifacts)
    pg.goto(lab_server.url(f"lab/tree/{path.name}"))
    pg.wait_for_function(_KERNEL_IDLE)
    card = pg.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .wl-widget-fallback")
    try:
        card.wait_for()
    except Exception:
        pg.screenshot(path=str(artifacts / "widget_fallback_failure.png"))
        raise
    pg.screenshot(path=str(artifacts / "widget_fallback.png"))
    assert "Occupancy of saxpy" in card.inner_text()
    assert card.locator("img[alt='occupancy vs block size']").count() == 1
    outputs = " ".join(pg.locator(".jp-OutputArea").all_inner_texts())
    assert "model not found" not in outputs
    assert not pg.errors, pg.errors
    context.close()
