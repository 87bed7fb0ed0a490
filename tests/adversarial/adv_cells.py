"""Kernels written as notebook cells, for the adversarial tests.

A kernel is defined the way IPython defines it (the cell text registered in
:mod:`linecache` under ``<adv N>``, then executed), so diagnostics carry cell
line and column numbers exactly as a user sees them.
"""

import math
import textwrap

import numpy as np

import warp_lab as wl
from warp_lab.lang.kernel import Kernel, cell_source

_counter = [0]

# the cell a new user writes first (README): y = a * x + y
SAXPY = """
@wl.kernel
def saxpy(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), a: float):
    i = wl.tid()
    y[i] = a * x[i] + y[i]
"""


def cell_kernel(text: str) -> Kernel:
    """Run ``text`` as a cell ``<adv N>`` and return the last ``@wl.kernel`` it defines."""
    _counter[0] += 1
    name = f"<adv {_counter[0]}>"
    code = textwrap.dedent(text).lstrip("\n")
    cell_source(code, name)
    ns = {"wl": wl, "math": math, "np": np, "__name__": "adv_cell"}
    exec(compile(code, name, "exec"), ns)  # noqa: S102 - the test's own source
    return [v for v in ns.values() if isinstance(v, Kernel)][-1]
