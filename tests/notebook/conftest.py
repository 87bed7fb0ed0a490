import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(scope="session")
def ip():
    """A real IPython shell with warp_lab's extension loaded."""
    from IPython.testing import globalipapp

    shell = globalipapp.get_ipython()
    shell.run_line_magic("load_ext", "warp_lab")
    return shell


def needs_compiler():
    """Skip when the compiler's front end has not landed in this tree yet."""
    try:
        import warp_lab.compiler.frontend  # noqa: F401
        import warp_lab.compiler.lower  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"compiler front end not available: {exc}")
