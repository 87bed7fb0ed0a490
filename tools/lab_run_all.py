"""The README's notebook flow, as a user does it: ``make lab``, then in Chromium, for each
teaching notebook, Run All (the Run menu) and save; then the server is stopped.

Not a test (issue 21's "``make lab``, Run All, save, then ``make test`` passes in the same
checkout"): run ``make test`` afterwards. Each notebook counts as run once the saved file
has every code cell executed (JupyterLab leaves cells scrolled out of view out of the DOM,
so the file, saved every few seconds, is what is read) and no view still waits for its
SASS; an ``error`` output, or a ``stderr`` stream holding a traceback, is a failure. A
screenshot of each notebook at its end goes to ``OUT_DIR``.

Usage (from the checkout's root; a Python with ``playwright``, Chromium at
``/usr/bin/chromium``)::

    python tools/lab_run_all.py [OUT_DIR] [--url http://localhost:8888/lab?token=...]

``--url`` uses a running server instead of starting ``make lab``. ``OUT_DIR`` defaults to
``test-artifacts/lab_run_all``. Saving writes outputs into the committed notebooks:
``git checkout notebooks`` undoes it. Exits 1 when a notebook failed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: how long a notebook may take to run (s), and ``make lab`` to start (a fresh venv: minutes)
RUN_S, START_S = 400, 900


def _start_lab(out: Path) -> tuple[subprocess.Popen, str]:
    """``make lab`` in its own process group, its Jupyter folders under ``out``; returns
    the process and the tokenized URL it printed."""
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(out / "jupyter-config"),
               JUPYTER_DATA_DIR=str(out / "jupyter-data"),
               JUPYTERLAB_WORKSPACES_DIR=str(out / "workspaces"), BROWSER="true")
    log_path = out / "make_lab.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(["make", "lab"], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                env=env, start_new_session=True)
    end = time.monotonic() + START_S
    while time.monotonic() < end:
        time.sleep(2)
        m = re.search(r"(http://(?:localhost|127\.0\.0\.1):\d+/lab\?token=[0-9a-f]+)",
                      log_path.read_text())
        if m:
            return proc, m.group(1)
        if proc.poll() is not None:
            sys.exit("make lab exited:\n" + log_path.read_text()[-3000:])
    os.killpg(proc.pid, signal.SIGTERM)
    sys.exit(f"make lab printed no URL within {START_S} s (see {log_path})")


def _stop_lab(proc: subprocess.Popen) -> None:
    for _ in range(2):      # Jupyter asks for a second Ctrl-C
        os.killpg(proc.pid, signal.SIGINT)
        time.sleep(2)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


def _run_all(page) -> None:
    """Run > Run All Cells, from the menu bar."""
    page.click(".lm-MenuBar-itemLabel:text-is('Run')")
    page.click("li.lm-Menu-item:has-text('Run All Cells')")


def _run_and_save(page, base: str, token: str, path: Path, out: Path) -> list[str]:
    """Open ``path`` in ``page``, Run All, save until the file holds every cell's output;
    returns the notebook's failures."""
    page.goto(f"{base}/lab/tree/{path.name}?token={token}&reset")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell")
    try:
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                               state="attached", timeout=90_000)
    except Exception:  # noqa: BLE001 - no indicator in this JupyterLab: give the kernel time
        page.wait_for_timeout(10_000)
    _run_all(page)
    end = time.monotonic() + RUN_S
    retried = False
    while True:
        page.wait_for_timeout(4000)
        page.keyboard.press("Control+s")
        page.wait_for_timeout(1500)
        try:
            text = path.read_text()
            code = [c for c in json.loads(text)["cells"] if c["cell_type"] == "code"]
        except ValueError:      # caught mid-write
            continue
        if all(c.get("execution_count") for c in code) and \
                "nvdisasm is disassembling" not in text:
            break
        if not retried and time.monotonic() > end - RUN_S + 60 and \
                not any(c.get("execution_count") for c in code):
            retried = True      # (a kernel still starting can drop the first Run All)
            _run_all(page)
        if time.monotonic() > end:
            return [f"not every cell ran within {RUN_S} s"]
    page.screenshot(path=str(out / f"{path.stem}.png"))
    return [str(o)[:400] for c in code for o in c.get("outputs", [])
            if o["output_type"] == "error" or (o["output_type"] == "stream" and
                                               o["name"] == "stderr" and
                                               "Traceback" in "".join(o["text"]))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", default=str(ROOT / "test-artifacts" / "lab_run_all"))
    ap.add_argument("--url", default=None, help="a running JupyterLab's tokenized URL")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    proc, url = (None, args.url) if args.url else _start_lab(out)
    base, token = url.split("/lab?token=")
    failed = 0
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                        args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            page.set_default_timeout(120_000)
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
                t0 = time.monotonic()
                problems = _run_and_save(page, base, token, path, out)
                failed += bool(problems)
                print(f"{path.name}: {'FAILED ' if problems else ''}ran and saved in "
                      f"{time.monotonic() - t0:.0f} s" + "".join(f"\n  {x}" for x in problems),
                      flush=True)
            browser.close()
            if errors:
                print("page errors:", *errors[:5], sep="\n  ")
    finally:
        if proc is not None:
            _stop_lab(proc)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
