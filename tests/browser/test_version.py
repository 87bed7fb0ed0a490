"""The extension's npm version equals the Python package's (anywidget's test_version idea)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_package_json_version_matches_pyproject():
    package = json.loads((REPO / "extension" / "package.json").read_text())
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert package["version"] == project["version"]
    assert package["name"] == "warp-lab"


def test_shared_data_target_is_the_package_name():
    package = json.loads((REPO / "extension" / "package.json").read_text())
    wheel = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]
    out_dir = (REPO / "extension" / package["jupyterlab"]["outputDir"]).resolve()
    shared = wheel["shared-data"][str(out_dir.relative_to(REPO))]
    assert shared == f"share/jupyter/labextensions/{package['name']}"
