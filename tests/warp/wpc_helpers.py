"""Helpers of the Warp-namespace tests (a module of its own name: ``conftest`` is also
tests/notebook's)."""

from __future__ import annotations

import importlib.util
import sys


def load_module(path, text: str, target: str, name: str):
    """``text`` with ``import warp as wp`` made ``import TARGET as wp``, written to
    ``path`` and imported as module ``name`` (a real file: both Warp and warp_lab read
    kernels' source through ``inspect``)."""
    path.write_text(text.replace("import warp as wp", f"import {target} as wp"))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
