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


_COMPILER_STATE = []


def needs_compiler():
    """Skip while the compiler's modules have not all landed in this tree (a missing module only)."""
    if not _COMPILER_STATE:
        import warp_lab as wl

        def probe(x: wl.array(dtype=wl.float32)):
            x[wl.tid()] = 1.0

        try:
            from warp_lab.compiler.pipeline import compile as compile_kernel
            compile_kernel(wl.kernel(probe), cache=False)
            _COMPILER_STATE.append("")
        except ImportError as exc:
            _COMPILER_STATE.append(f"compiler not complete in this tree: {exc}")
        except wl.InternalCompilerError as exc:
            if not isinstance(exc.__cause__, ImportError):
                raise
            _COMPILER_STATE.append(f"compiler not complete in this tree: {exc.__cause__}")
    if _COMPILER_STATE[0]:
        pytest.skip(_COMPILER_STATE[0])
