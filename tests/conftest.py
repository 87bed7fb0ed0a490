"""Test-suite-wide hooks: how ``make test`` spreads the tests over pytest-xdist workers.

``make test`` runs ``pytest -n auto --dist loadgroup`` (one worker per core): each test is
a unit of work a free worker takes, except the tests of one ``xdist_group``, which all run
on one worker. So that nothing expensive is built once per worker, and nothing that must
be one is made twice, the groups are:

- a test module whose tests share a module-scoped fixture (a notebook run by a real
  Jupyter kernel, a big compile) is one group (the module's path), added here;
- tests that share a session fixture of their own mark themselves (the browser tests
  share one JupyterLab server and one Chromium: ``xdist_group("browser")``; the
  teaching-notebook tests that read one executed notebook share its group).

The slow tests (``@pytest.mark.slow``) are put first, in collection order otherwise:
a worker that takes a 30 s notebook last would keep the run going after the other
finished. Without xdist (``python -m pytest tests/sim``) the order is the same and the
groups mean nothing.
"""

from __future__ import annotations

import pytest


def _module_group(item) -> str | None:
    """The module's path when ``item`` uses a module-scoped fixture, else None."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for defs in info.name2fixturedefs.values():
        if defs and defs[-1].scope == "module":
            return item.nodeid.split("::", 1)[0]
    return None


# tryfirst: before xdist's own hook, which appends each item's group to its node id
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            group = _module_group(item)
            if group is not None:
                item.add_marker(pytest.mark.xdist_group(group))
    # stable: the slow tests first, each part in collection order
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
