"""Screenshots of the teaching notebooks' views in a real JupyterLab, for a reviewer to look at.

Not a test: it asserts nothing. It starts ``jupyter lab`` on a copy of ``notebooks/`` (the
committed notebooks are never opened, so nothing is autosaved into them) with the built
extension (``warp_lab/labextension``; build it with ``cd extension && jlpm build``), opens
each notebook in Debian's Chromium through Playwright, runs its cells one by one, and
writes a PNG of the first output of each kind it meets, at each window size:

- ``kernel``: the first kernel view (the extension's ``application/vnd.warp-lab.kernel+json``
  renderer), once its SASS is in;
- ``occupancy``: the first occupancy widget (``OccupancyWidget``, class ``wl-occupancy``);
- ``launch``: the first launch result with a per-line table (``LaunchView``);
- ``debugger``: the first debugger panel (``DebugPanel``, class ``wl-debug-panel``).

Each PNG is the browser window (1366x768 and 1920x1080 by default) with the output scrolled
to the top of the notebook, named ``<notebook>_<kind>_<width>x<height>.png``.

Usage::

    python tools/view_screenshots.py [OUT_DIR] [--notebooks 01,04] [--kinds kernel,occupancy]

``OUT_DIR`` defaults to ``test-artifacts/screenshots`` (gitignored). Needs Chromium at
``/usr/bin/chromium`` (``apt-get install chromium``) and the ``playwright`` package.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))
from lab_server import LABEXTENSION, REPO, start_lab  # noqa: E402  (the browser tests' server)

CHROMIUM = "/usr/bin/chromium"
SIZES = ((1366, 768), (1920, 1080))
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
#: kind -> CSS selector of the output element to show
KINDS = {
    "kernel": f"{PANEL} .wl-kernel-view",
    "occupancy": f"{PANEL} .wl-occupancy",
    "launch": f"{PANEL} .jp-OutputArea-output:has(table.wl-card):has(.wl-title)",
    "debugger": f"{PANEL} .wl-debug-panel",
}
KERNEL_IDLE = """() => {
    const k = window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel;
    return !!k && k.connectionStatus === 'connected' && k.status === 'idle';
}"""
#: run cell i (a markdown cell renders) and wait for it: the command's promise resolves
#: once the kernel has answered the execute request
RUN_CELL = """async i => {
    const app = window.jupyterapp, panel = app.shell.currentWidget;
    panel.content.activeCellIndex = i;
    await app.commands.execute('notebook:run-cell');
}"""


def _shoot(page, element, out: Path, stem: str) -> list[Path]:
    """The window at each of :data:`SIZES` with ``element`` scrolled to its top."""
    written = []
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(400)  # JupyterLab relays out on resize
        element.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)
        path = out / f"{stem}_{width}x{height}.png"
        page.screenshot(path=str(path))
        written.append(path)
    return written


def shoot_notebook(browser, url: str, name: str, kinds: list[str], out: Path,
                   cell_timeout_ms: int = 240_000) -> list[Path]:
    """Run notebook ``name`` cell by cell and screenshot the first output of each kind."""
    context = browser.new_context(viewport={"width": SIZES[0][0], "height": SIZES[0][1]})
    page = context.new_page()
    page.set_default_timeout(cell_timeout_ms)
    written, todo = [], list(kinds)
    try:
        page.goto(url.format(name))
        page.wait_for_function(KERNEL_IDLE)
        n = page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets.length")
        for i in range(n):
            if not todo:
                break
            page.evaluate(RUN_CELL, i)
            page.wait_for_function(KERNEL_IDLE)
            for kind in list(todo):
                found = page.locator(KINDS[kind])
                if found.count() == 0:
                    continue
                if kind == "kernel":  # the view comes first without SASS, then is updated
                    page.wait_for_function("() => !document.body.innerText.includes("
                                           "'nvdisasm is disassembling the cubin')")
                written += _shoot(page, found.first, out, f"{Path(name).stem}_{kind}")
                todo.remove(kind)
    finally:
        context.close()
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", default=str(REPO / "test-artifacts" / "screenshots"),
                    help="folder for the PNGs (default: test-artifacts/screenshots, gitignored)")
    ap.add_argument("--notebooks", default="",
                    help="comma-separated notebook number prefixes (default: all), e.g. 01,04")
    ap.add_argument("--kinds", default=",".join(KINDS),
                    help=f"outputs to show, among {', '.join(KINDS)} (default: all)")
    args = ap.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        ap.error(f"unknown kind(s) {', '.join(bad)}: choose among {', '.join(KINDS)}")
    if not (LABEXTENSION / "package.json").exists():
        ap.error("the extension is not built: cd extension && jlpm install && jlpm build")
    if not os.path.exists(CHROMIUM):
        ap.error(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    prefixes = [p for p in args.notebooks.split(",") if p]
    names = [p.name for p in sorted((REPO / "notebooks").glob("0*.ipynb"))
             if not prefixes or p.name.startswith(tuple(prefixes))]
    with tempfile.TemporaryDirectory(prefix="wl-shots-") as tmp:
        base = Path(tmp)
        (base / "root").mkdir()
        for name in names:  # a copy: JupyterLab autosaves outputs into what it opens
            shutil.copy(REPO / "notebooks" / name, base / "root" / name)
        server = start_lab(base)
        url = server.url("lab/tree/{}")
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
                    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update"],
                    ignore_default_args=["--hide-scrollbars"])  # the scrollbars users see
                try:
                    for name in names:
                        for path in shoot_notebook(browser, url, name, kinds, out):
                            print(path)
                finally:
                    browser.close()
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
