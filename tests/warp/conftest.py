"""Helpers for the Warp-namespace tests: one kernel source run by warp-lang's CPU device
(the reference) and by warp_lab's simulator through ``import warp_lab.warp as wp``."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def warp_ref():
    """warp-lang itself (its CPU device), or the test is skipped where it is missing."""
    wp = pytest.importorskip("warp")
    wp.config.quiet = True
    wp.init()
    return wp
