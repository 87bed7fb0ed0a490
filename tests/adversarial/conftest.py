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


@pytest.fixture()
def published(shell, monkeypatch):
    """Every display bundle a cell publishes (the HTML a notebook would show; the error
    box goes through display() too). ``shell`` is the test module's own fixture."""
    out = []
    monkeypatch.setattr(shell.display_pub, "publish",
                        lambda data, metadata=None, **kw: out.append(data))
    return out
