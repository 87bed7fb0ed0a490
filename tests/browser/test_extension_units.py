"""The extension's TypeScript unit tests (tokenizers, bundle validation, line
links, PTX instruction docs) under node:test, run through `jlpm test`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXTENSION = Path(__file__).resolve().parents[2] / "extension"


def test_typescript_unit_tests_pass():
    # `make test` runs .venv/bin/python without activating the venv: look beside it too
    jlpm = shutil.which("jlpm") or shutil.which("jlpm", path=str(Path(sys.executable).parent))
    if jlpm is None or shutil.which("node") is None:
        pytest.skip("node or jlpm (from jupyterlab) not found")
    if not (EXTENSION / "node_modules" / "typescript").exists():
        pytest.skip("extension/node_modules missing (cd extension && jlpm install)")
    proc = subprocess.run([jlpm, "test"], cwd=EXTENSION, capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "# fail 0" in proc.stdout
