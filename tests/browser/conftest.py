"""Fixtures for the browser tests: a JupyterLab server and a headless Chromium.

The server runs on 127.0.0.1 with a random free port and a random token, in a
temporary root folder, with its own config/data/runtime folders (so the
tests neither read nor write the user's Jupyter state).  The built
extension in ``warp_lab/labextension`` is made visible to it through
``JUPYTER_PATH`` (a ``labextensions/warp-lab`` link), which works for an
editable checkout; an installed wheel's shared-data copy would be found the
same way.  Tests skip with a reason when Chromium or the built extension is
missing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lab_server import LABEXTENSION, REPO, start_lab

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = REPO / "test-artifacts"


def _missing_reason() -> str | None:
    if not os.path.exists(CHROMIUM):
        return f"Chromium not found at {CHROMIUM} (apt-get install chromium)"
    if not (LABEXTENSION / "package.json").exists():
        return ("the JupyterLab extension is not built (cd extension && jlpm install && "
                "jlpm build:prod)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright (Python) is not installed"
    return None


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory):
    """A JupyterLab server in a temporary root, stopped after the session."""
    reason = _missing_reason()
    if reason:
        pytest.skip(reason)
    base = tmp_path_factory.mktemp("lab")
    (base / "root").mkdir()
    server = start_lab(base, python_path=(Path(__file__).parent,))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium, headless, driven by Playwright."""
    reason = _missing_reason()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        # with the scrollbars a user sees (Playwright hides them in headless mode): the
        # tests read whether a pane that cuts its lines shows a horizontal scrollbar
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                      ignore_default_args=["--hide-scrollbars"])
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser):
    """A fresh page, 1600x1000; console errors are collected in ``page.errors``."""
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda exc: pg.errors.append(str(exc)))
    yield pg
    context.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """test-artifacts/ at the repository root (gitignored)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
