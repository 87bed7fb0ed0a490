"""Helpers for the Warp-namespace tests: one kernel source run by warp-lang's CPU device
(the reference) and by warp_lab's simulator through ``import warp_lab.warp as wp``."""

from __future__ import annotations

import importlib.util
import sys

import pytest


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


@pytest.fixture(scope="session")
def warp_ref():
    """warp-lang itself (its CPU device), or the test is skipped where it is missing."""
    wp = pytest.importorskip("warp")
    wp.config.quiet = True
    wp.init()
    return wp
