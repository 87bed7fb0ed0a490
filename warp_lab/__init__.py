"""warp_lab: write GPU kernels in Python, see what they become, run them anywhere.

    import warp_lab as wl

    @wl.kernel
    def saxpy(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), a: float):
        i = wl.tid()
        y[i] = a * x[i] + y[i]

    ck = wl.compile(saxpy, arch="sm_90")   # LLVM IR, PTX, cubin, SASS, resources
    wl.launch(saxpy, dim=n, inputs=[x, y, 2.0])   # GPU if present, else the simulator

In Jupyter: ``%load_ext warp_lab`` and a ``%%warp_kernel`` cell.
"""

from warp_lab.errors import (CudaError, InternalCompilerError, KernelCompileError,
                             KernelOptionError, LaunchError, LaunchInterrupted, SimulatorError,
                             ToolchainError, WarpLabError)
from warp_lab.lang.kernel import Constant, Func, Kernel, constant, func, kernel
from warp_lab.lang.cuda import CudaKernel, cuda_kernel, cuda_kernels
from warp_lab.options import CompileOptions
from warp_lab.lang.types import (bool_, float16, float32, float64, int8, int16, int32, int64,
                                 mat22, mat33, mat44, uint8, uint16, uint32, uint64, vec2,
                                 vec2d, vec2i, vec3, vec3d, vec3i, vec4, vec4d, vec4i)

from warp_lab.runtime.arrays import (Array, array, array2d, array3d, array4d, empty,
                                     from_numpy, full, zeros)
from warp_lab.runtime.device import DeviceInfo, get_device

from warp_lab.version import __version__

#: the entry points whose modules load on first use (PEP 562 module ``__getattr__``): the
#: compiler brings llvmlite's LLVM library, the front end and the toolchain, two thirds of
#: the time ``import warp_lab`` took; ``wl.compile`` is still the real function (its
#: signature and docstring), bound here at its first use
_LAZY = {"compile": "warp_lab.compiler.pipeline", "launch": "warp_lab.runtime.launch",
         "last_launch": "warp_lab.runtime.launch"}


def __getattr__(name: str):
    """An entry point of :data:`_LAZY`, imported and bound at its first use.

    Raises:
        AttributeError: any other name (Python's traceback then suggests the closest
            public name: ``@wl.kernal`` in a cell, "Did you mean: 'kernel'?").
    """
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'warp_lab' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *_LAZY})


def diff(a, b, a_label=None, b_label=None):
    """What changed in PTX, SASS, resources and options between two compiles of a kernel.

    See :func:`warp_lab.notebook.diff.diff`; the result renders as HTML in a notebook.
    """
    from warp_lab.notebook.diff import diff as _diff

    return _diff(a, b, a_label, b_label)


def debug(kernel, dim=None, inputs=(), block_dim=256, grid=None, block=None, shared_mem=0,
          checks="auto"):
    """Step through one simulated launch: breakpoints on source lines, a warp's 32 lanes.

        dbg = wl.debug(saxpy, dim=n, inputs=[x, y, 2.0])   # nothing runs yet
        dbg.add_breakpoint(line=5); dbg.cont(); print(dbg.lanes())

    See :func:`warp_lab.notebook.debugger.debug` (arguments as ``wl.launch``'s, ``checks``
    and its ``"auto"`` default too; errors; the returned ``DebugSession``, whose motion
    methods return a falsy ``LaunchEnded`` once the launch has finished); imported on first
    use, so ``import warp_lab`` stays as fast. In a notebook the session displays as a
    control panel.
    """
    from warp_lab.notebook.debugger import debug as _debug

    return _debug(kernel, dim=dim, inputs=inputs, block_dim=block_dim, grid=grid, block=block,
                  shared_mem=shared_mem, checks=checks)


def _jupyter_labextension_paths():
    """Where JupyterLab finds the prebuilt extension (``jupyter labextension develop``)."""
    return [{"src": "labextension", "dest": "warp-lab"}]


def load_ipython_extension(ip):
    """``%load_ext warp_lab``: the ``%%warp_kernel`` magic and rich kernel output.

    The notebook modules (IPython, ipywidgets, matplotlib) are imported only here.
    """
    from warp_lab.notebook.magic import load_ipython_extension as _load

    _load(ip)

# -- the kernel language: array annotations and builtins (lang/types.py, lang/builtins.py) --
from warp_lab.lang.types import array1d  # noqa: E402
from warp_lab.lang import builtins as _builtins  # noqa: E402

# every builtin record, thread_idx & co and the constants (lang/builtins.py's PUBLIC): a new
# builtin is declared once, there, and is public without an edit here
globals().update(_builtins.PUBLIC)
