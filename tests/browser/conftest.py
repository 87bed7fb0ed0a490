"""Fixtures for the browser tests: a JupyterLab server and a headless Chromium.

The server runs on 127.0.0.1 with a random free port and a random token, in a
temporary root folder, with its own config/data/runtime folders (so the
tests neither read nor write the user's Jupyter state).  The built
extension in ``warp_lab/labextension`` is made visible to it through
``JUPYTER_PATH`` (a ``labextensions/warp-lab`` link), which works for an
editable checkout; an installed wheel's shared-data copy would be found the
same way.  Tests skip with a reason when Chromium or the built extension is
missing.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LABEXTENSION = REPO / "warp_lab" / "labextension"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = REPO / "test-artifacts"
SERVER_START_TIMEOUT_S = 90


def _missing_reason() -> str | None:
    if not os.path.exists(CHROMIUM):
        return f"Chromium not found at {CHROMIUM} (apt-get install chromium)"
    if not (LABEXTENSION / "package.json").exists():
        return ("the JupyterLab extension is not built (cd extension && jlpm install && "
                "jlpm build:prod)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright (Python) is not installed"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabServer:
    """A running ``jupyter lab``: ``url(path)`` gives a tokenized URL."""

    def __init__(self, root: Path, data_dir: Path, port: int, token: str,
                 proc: subprocess.Popen, log: Path):
        self.root, self.data_dir, self.port, self.token = root, data_dir, port, token
        self.proc, self.log = proc, log

    def url(self, path: str, reset: bool = True) -> str:
        """The URL of `path` with the token; `reset` starts from an empty
        workspace (no documents restored from earlier pages)."""
        query = f"token={self.token}" + ("&reset" if reset else "")
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}?{query}"

    def api(self, path: str) -> dict:
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/api/{path}",
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.load(resp)


def _wait_until_up(server: LabServer) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited ({server.proc.returncode}):\n"
                               + server.log.read_text()[-4000:])
        try:
            server.api("status")
            return
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.5)
    raise RuntimeError("jupyter lab did not answer within "
                       f"{SERVER_START_TIMEOUT_S} s:\n" + server.log.read_text()[-4000:])


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory):
    """A JupyterLab server in a temporary root, stopped after the session."""
    reason = _missing_reason()
    if reason:
        pytest.skip(reason)
    base = tmp_path_factory.mktemp("lab")
    root, data = base / "root", base / "data"
    root.mkdir()
    (data / "labextensions").mkdir(parents=True)
    (data / "labextensions" / "warp-lab").symlink_to(LABEXTENSION, target_is_directory=True)
    # no "official Jupyter news?" toast over the pages
    news = base / "settings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    env = dict(os.environ)
    env.update({
        "JUPYTER_PATH": str(data),
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "JUPYTER_DATA_DIR": str(base / "userdata"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(base / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
        "IPYTHONDIR": str(base / "ipython"),
        "PYTHONPATH": os.pathsep.join([str(REPO), str(Path(__file__).parent),
                                       env.get("PYTHONPATH", "")]),
    })
    port, token = _free_port(), secrets.token_hex(16)
    log = base / "lab.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
             f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
             "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
             "--LabApp.extension_manager=readonly",
             # window.jupyterapp, so a test can wait for the kernel connection
             "--LabApp.expose_app_in_browser=True",
             *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else [])],
            cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
    server = LabServer(root, base / "userdata", port, token, proc, log)
    try:
        _wait_until_up(server)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium, headless, driven by Playwright."""
    reason = _missing_reason()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser):
    """A fresh page, 1600x1000; console errors are collected in ``page.errors``."""
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda exc: pg.errors.append(str(exc)))
    yield pg
    context.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """test-artifacts/ at the repository root (gitignored)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
