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
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LABEXTENSION = REPO / "warp_lab" / "labextension"
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


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_lab(base: Path) -> tuple[subprocess.Popen, str]:
    """``jupyter lab`` on ``base/root`` with its own Jupyter folders: (process, URL prefix).

    Raises:
        RuntimeError: the server exited or did not answer within 90 s (its log attached).
    """
    root, data = base / "root", base / "data"
    (data / "labextensions").mkdir(parents=True)
    (data / "labextensions" / "warp-lab").symlink_to(LABEXTENSION, target_is_directory=True)
    news = base / "settings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    env = dict(os.environ, JUPYTER_PATH=str(data), JUPYTER_CONFIG_DIR=str(base / "config"),
               JUPYTER_DATA_DIR=str(base / "userdata"), JUPYTER_RUNTIME_DIR=str(base / "rt"),
               JUPYTERLAB_SETTINGS_DIR=str(base / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(base / "workspaces"),
               IPYTHONDIR=str(base / "ipython"),
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    port, token = _free_port(), secrets.token_hex(16)
    log = open(base / "lab.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
         "--LabApp.news_url=", "--LabApp.extension_manager=readonly",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         "--LabApp.expose_app_in_browser=True",
         *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else [])],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    end = time.monotonic() + 90
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited ({proc.returncode}):\n"
                               + (base / "lab.log").read_text()[-4000:])
        try:
            req = urllib.request.Request(f"http://127.0.0.1:{port}/api/status",
                                         headers={"Authorization": f"token {token}"})
            urllib.request.urlopen(req, timeout=5).close()
            return proc, f"http://127.0.0.1:{port}/lab/tree/{{}}?token={token}&reset"
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.5)
    proc.terminate()
    raise RuntimeError("jupyter lab did not answer within 90 s:\n"
                       + (base / "lab.log").read_text()[-4000:])


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
        proc, url = start_lab(base)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
                    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update"])
                try:
                    for name in names:
                        for path in shoot_notebook(browser, url, name, kinds, out):
                            print(path)
                finally:
                    browser.close()
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
