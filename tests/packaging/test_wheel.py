"""A wheel built from the checkout ships the production build of the JupyterLab extension.

The scenario of issue 21: ``make lab`` (an editable install) leaves a development build in
``warp_lab/labextension`` (source maps, unminified bundles, a ``build_log.json`` holding the
builder's local paths); a wheel built afterwards in that checkout must still hold the
production build (``jlpm build:prod``), because the build hook trusts only a production
build there (pyproject.toml, ``skip-if-exists``). The test copies the checkout's files (no
build outputs) into a temporary folder, makes the development build there as the editable
install does, builds a wheel with pip and reads it; then installs it under a prefix and asks
JupyterLab whether it finds the extension.

Needs Node (``jlpm``, JupyterLab's yarn, reaches the npm registry on a cold cache), git,
and hatchling + hatch-jupyter-builder (the ``test`` extra) for a build without isolation.
About a minute.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SHARE = "share/jupyter/labextensions/warp-lab"


def _missing() -> str | None:
    if shutil.which("node") is None or not (BIN / "jlpm").exists():
        return "Node.js or jlpm (JupyterLab's yarn) not found: the extension cannot be built"
    for module in ("hatchling", "hatch_jupyter_builder"):
        if importlib.util.find_spec(module) is None:
            return f"{module} not installed (it is in the test extra: pip install -e '.[test]')"
    if not (ROOT / ".git").exists():
        return "not a git checkout: no list of the checkout's files to copy"
    return None


def _run(args: list[str], cwd: Path, env: dict, timeout: float) -> str:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"{args} exited {done.returncode} in {cwd}:\n"
                             f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout


def _checkout_copy(dest: Path) -> None:
    """The checkout's tracked and unignored files (what a fresh clone holds, with the working
    copy's edits) copied to ``dest``: no node_modules, lib or labextension."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard",
                             "-z"], capture_output=True, check=True, timeout=60).stdout
    for name in filter(None, listed.decode().split("\0")):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


@pytest.mark.slow
def test_a_wheel_built_after_a_development_build_ships_the_production_extension(tmp_path):
    reason = _missing()
    if reason:
        pytest.skip(reason)
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    src = tmp_path / "checkout"
    _checkout_copy(src)
    assert not (src / "warp_lab" / "labextension").exists()
    # what `make lab`'s editable install does (editable-build-kwargs: `jlpm build`)
    _run([str(BIN / "jlpm"), "install"], src / "extension", env, 300)
    _run([str(BIN / "jlpm"), "build"], src / "extension", env, 300)
    dev = src / "warp_lab" / "labextension"
    assert (dev / "build_log.json").exists() and list(dev.glob("static/*.js.map"))

    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
          "-w", str(tmp_path / "dist"), str(src)], tmp_path, env, 400)
    [wheel] = (tmp_path / "dist").glob("warp_lab-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        prefix = next(n.split(SHARE)[0] for n in zf.namelist() if SHARE in n) + SHARE + "/"
        files = {n[len(prefix):]: zf.read(n) for n in zf.namelist() if n.startswith(prefix)}
    # the production build: its license file, no source maps, no build log, minified bundles
    assert "static/third-party-licenses.json" in files, sorted(files)
    assert not [n for n in files if n.endswith(".map") or n == "build_log.json"], sorted(files)
    package = json.loads(files["package.json"])
    entry = files[package["jupyterlab"]["_build"]["load"]].decode()
    assert "webpackBootstrap" not in entry and "sourceMappingURL" not in entry
    assert "install.json" in files
    # no path of the machine that built it
    assert not [n for n, data in files.items() if str(tmp_path).encode() in data]

    # installed under a prefix, JupyterLab finds the extension there and calls it OK
    # (--ignore-installed: else pip first uninstalls the environment's own warp_lab, the
    # editable install every other test imports)
    inst = tmp_path / "inst"
    _run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed",
          "--prefix", str(inst), str(wheel)], tmp_path, env, 200)
    data = inst / "share" / "jupyter"
    assert (data / "labextensions" / "warp-lab" / "static" / "third-party-licenses.json").exists()
    listed = subprocess.run([str(BIN / "jupyter"), "labextension", "list"], cwd=tmp_path,
                            env=dict(env, JUPYTER_PATH=str(data)), capture_output=True,
                            text=True, timeout=120)
    out = listed.stdout + listed.stderr
    section = out.split(str(data / "labextensions"), 1)
    assert len(section) == 2, out
    first = section[1].strip().splitlines()[0]
    assert first.startswith("warp-lab v") and "enabled" in first and "OK" in first, out
