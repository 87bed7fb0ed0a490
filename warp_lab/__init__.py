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
                             LaunchError, SimulatorError, ToolchainError, WarpLabError)
from warp_lab.lang.kernel import Constant, Func, Kernel, constant, func, kernel
from warp_lab.lang.types import (bool_, float16, float32, float64, int8, int16, int32, int64,
                                 mat22, mat33, mat44, uint8, uint16, uint32, uint64, vec2,
                                 vec2d, vec2i, vec3, vec3d, vec3i, vec4, vec4d, vec4i)

from warp_lab.runtime.arrays import (Array, array, array2d, array3d, array4d, empty,
                                     from_numpy, full, zeros)
from warp_lab.runtime.device import DeviceInfo, get_device

__version__ = "0.1.0"


def compile(kernel, **options):
    """Compile a kernel; see :func:`warp_lab.compiler.pipeline.compile`."""
    from warp_lab.compiler.pipeline import compile as _compile

    return _compile(kernel, **options)


def launch(kernel, **kwargs):
    """Run a kernel on a GPU or the simulator; see :func:`warp_lab.runtime.launch.launch`."""
    from warp_lab.runtime.launch import launch as _launch

    return _launch(kernel, **kwargs)


def load_ipython_extension(ip):
    """``%load_ext warp_lab``: the ``%%warp_kernel`` magic and rich kernel output.

    The notebook modules (IPython, ipywidgets, matplotlib) are imported only here.
    """
    from warp_lab.notebook.magic import load_ipython_extension as _load

    _load(ip)
