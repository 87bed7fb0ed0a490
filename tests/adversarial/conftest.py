"""Fixtures of the adversarial tests (helpers live in adv_cells.py: a module named
``conftest`` would collide with the other test folders' conftest modules)."""

import pytest


@pytest.fixture(scope="session")
def ip():
    """A real IPython shell with warp_lab's extension loaded."""
    from IPython.testing import globalipapp

    shell = globalipapp.get_ipython()
    shell.run_line_magic("load_ext", "warp_lab")
    return shell
