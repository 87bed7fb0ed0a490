"""Fixtures for the simulator tests."""

import pytest

from sim_helpers import Launcher


@pytest.fixture
def gpu():
    """A fresh :class:`sim_helpers.Launcher` (simulated global memory + launch helper)."""
    return Launcher()
