"""A JupyterLab server of its own for the browser tests and ``tools/view_screenshots.py``.

Its own Jupyter folders under one base folder (no user settings, workspaces or
extensions leak in), warp_lab's built extension linked in, news and update checks off,
``window.jupyterapp`` exposed so a page can drive the notebook.
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

REPO = Path(__file__).resolve().parents[2]
LABEXTENSION = REPO / "warp_lab" / "labextension"
SERVER_START_TIMEOUT_S = 90

__all__ = ["LabServer", "start_lab", "free_port", "REPO", "LABEXTENSION"]


def free_port() -> int:
    """A TCP port of 127.0.0.1 free now."""
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
        """The JSON of ``/api/<path>``."""
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/api/{path}",
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.load(resp)

    def stop(self) -> None:
        """Terminate the server (kill it after 20 s)."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


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
    server.stop()
    raise RuntimeError("jupyter lab did not answer within "
                       f"{SERVER_START_TIMEOUT_S} s:\n" + server.log.read_text()[-4000:])


def start_lab(base: Path, python_path: tuple[Path, ...] = ()) -> LabServer:
    """Start ``jupyter lab`` on ``base/root`` (which must exist) with its Jupyter folders
    under ``base``, and wait until it answers.

    Args:
        base: an empty folder but for ``root/`` (the notebooks the server shows).
        python_path: folders put on the kernels' ``PYTHONPATH`` after the repository.

    Raises:
        RuntimeError: the server exited or did not answer within
            :data:`SERVER_START_TIMEOUT_S` seconds (its log attached).
    """
    root, data = base / "root", base / "data"
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
        "PYTHONPATH": os.pathsep.join([str(REPO), *map(str, python_path),
                                       env.get("PYTHONPATH", "")]),
    })
    port, token = free_port(), secrets.token_hex(16)
    log = base / "lab.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
             f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
             "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
             "--LabApp.extension_manager=readonly",
             # window.jupyterapp, so a page can wait for the kernel connection
             "--LabApp.expose_app_in_browser=True",
             *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else [])],
            cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
    server = LabServer(root, base / "userdata", port, token, proc, log)
    _wait_until_up(server)
    return server
