"""The ``%%cuda_kernel`` cell magic: a cell of CUDA C++, compiled by NVRTC, shown as
CUDA C++ | PTX | SASS side by side with the resource card and occupancy, launched on a
GPU or on the simulator like a ``%%warp_kernel`` cell.

    %%cuda_kernel --arch sm_80 -D BLOCK=256 --launch "grid=4, block=256, inputs=[x, y, 2.0, n]"
    extern "C" __global__ void saxpy(const float* x, float* y, float a, int n)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i] + y[i];
    }

Every ``__global__`` function of the cell (``extern "C"`` or C++; each ``--instantiate``
of a kernel template) is bound in the notebook under its name (an instantiation under
its letters joined by ``_``: ``scale<float>`` as ``scale_float``) as a
:class:`~warp_lab.lang.cuda.CudaKernel` that ``wl.compile``, ``wl.launch`` and
``wl.debug`` take, carrying the cell's compile options. Line numbers are the cell's own:
the ``%%cuda_kernel`` line is line 1 (NVRTC gets a blank line in its place). A source NVRTC
refuses is a located error box (its first error's line, column, source line and caret;
the others in the hint), and unbinds the names the cell declares, so no stale kernel of
an earlier run stays bound under them.

The line magic ``%cuda_kernel --arch sm_80`` sets defaults for later cells.
"""

from __future__ import annotations

import linecache

from IPython.core import magic_arguments
from IPython.core.error import UsageError
from IPython.core.magic import line_cell_magic, magics_class, no_var_expand
from IPython.display import display

from warp_lab.errors import KernelCompileError, LaunchError
from warp_lab.lang.kernel import KERNEL_OPTIONS, python_lines
from warp_lab.notebook import launch_option
from warp_lab.notebook.launch_option import unquote, unquote_int
from warp_lab.notebook.magic import (BUILTIN_DEFAULTS, CHECK_CHOICES, SHOW_CHOICES,
                                     WarpKernelMagics, _check_options, _defaults_text,
                                     _device_arch, _note, _split)

__all__ = ["CudaKernelMagics", "CUDA_DEFAULTS"]

#: a %%cuda_kernel cell's options in force when neither it nor the line magic sets them
CUDA_DEFAULTS = {**BUILTIN_DEFAULTS, "show": "source,llvm,ptx,sass,resources",
                 "defines": None, "std": None, "instantiate": None}


@magics_class
class CudaKernelMagics(WarpKernelMagics):
    """The ``%%cuda_kernel`` magic (registered by ``%load_ext warp_lab``); it shares
    ``%%warp_kernel``'s views, ``--launch`` and ``--diff`` machinery, with defaults,
    previous compiles and cell names of its own."""

    @magic_arguments.magic_arguments(name="%cuda_kernel")
    @magic_arguments.argument("--arch", type=unquote,
                              help="target SM, e.g. sm_75, sm_80, sm_90 (default: the GPU "
                              "--device selects, sm_90 on the simulator); NVRTC gets "
                              "compute_XX, ptxas sm_XX")
    @magic_arguments.argument("-O", "--opt", type=unquote_int, choices=range(4), dest="opt",
                              help="NVVM optimisation level 0..3 (-Xnvvm -opt=N; default 3)")
    @magic_arguments.argument("--fast-math", action="store_const", const=True,
                              dest="fast_math", help="NVRTC's --use_fast_math")
    @magic_arguments.argument("--debug", action="store_const", const=True,
                              help="NVRTC's -G (device debug: no optimisation)")
    @magic_arguments.argument("--maxrregcount", type=unquote_int,
                              help="cap on registers per thread passed to ptxas")
    @magic_arguments.argument("-D", dest="defines", action="append", metavar="NAME[=VALUE]",
                              help="a preprocessor macro (repeatable): -D BLOCK=256 -D USE_X")
    @magic_arguments.argument("--std", type=unquote,
                              choices=("c++11", "c++14", "c++17", "c++20"),
                              help="the C++ standard (NVRTC's default: c++17)")
    @magic_arguments.argument("--instantiate", action="append", type=unquote,
                              help='a kernel template instantiation to compile, e.g. '
                                   '--instantiate "scale<float>" (repeatable)')
    @magic_arguments.argument("--block-dim", type=unquote_int, dest="block_dim",
                              help="threads per block for the occupancy view (default 256)")
    @magic_arguments.argument("--shared-mem", type=unquote_int, dest="shared_mem",
                              help="dynamic shared memory per block in bytes (extern "
                                   "__shared__) for the occupancy view and --launch")
    @magic_arguments.argument("--device", type=unquote, choices=("sim", "cuda", "auto"),
                              help="where --launch runs (default auto: the GPU when present)")
    @magic_arguments.argument("--show", help="comma list of views: " + ",".join(SHOW_CHOICES)
                              + " (llvm: a note, NVRTC gives no IR)")
    @magic_arguments.argument("--hide", help="comma list of views to leave out")
    @magic_arguments.argument("--launch", help='launch the last kernel of the cell, e.g. '
                              '"grid=4, block=256, inputs=[x, y, 2.0, n]"')
    @magic_arguments.argument("--repeat", type=unquote_int, help="timed launches of --launch")
    @magic_arguments.argument("--check", help="simulator checks for --launch: comma list of "
                              "memcheck,racecheck,initcheck")
    @magic_arguments.argument("--no-cache", action="store_const", const=True, dest="no_cache",
                              help="recompile even when the kernel is in the compile cache")
    @magic_arguments.argument("--diff", type=unquote, choices=("previous",),
                              help="show what changed since this kernel's previous compile")
    @no_var_expand
    @line_cell_magic
    def cuda_kernel(self, line: str, cell: str | None = None):
        """Compile a cell of CUDA C++ with NVRTC and show what its kernels become.

        Usage::

            %%cuda_kernel --arch sm_80 -D TILE=16 --show source,ptx,sass,resources
            extern "C" __global__ void saxpy(const float* x, float* y, float a, int n)
            { ... }

            %%cuda_kernel --instantiate "scale<float>" --launch "grid=1, block=32, inputs=[x, 2.0, 32]"
            template <typename T> __global__ void scale(T* x, T s, int n) { ... }

            %cuda_kernel --arch sm_75      # defaults for later cells

        The options are ``%%warp_kernel``'s, with ``-O`` for ``--opt`` and the C++ ones:
        ``-D NAME=VALUE``, ``--std c++17``, ``--instantiate "T<args>"``.
        """
        __tracebackhide__ = True
        try:
            args = self.cuda_kernel.parser.parse_args(self._expand_line(line))
        except ValueError as exc:
            raise UsageError(f"%%cuda_kernel {line.strip()}: {exc}") from None
        given = {k: v for k, v in vars(args).items() if v is not None}
        _check_options(given)
        if cell is None:
            self.defaults.update(given)
            if not given:
                print(_defaults_text({**CUDA_DEFAULTS, **self.defaults}))
            return None
        opts = {**CUDA_DEFAULTS, **self.defaults, **given}
        chosen = {**self.defaults, **given}
        carried = {k: chosen[k] for k in KERNEL_OPTIONS if chosen.get(k) is not None}
        if not unquote(opts["launch"] or "").strip():
            opts["launch"] = None
        if opts["arch"] is None:
            opts["arch"] = _device_arch(opts["device"])
        _check_options(opts)
        return self._run_cuda_cell(line, cell, opts, carried)

    def _run_cuda_cell(self, line: str, cell: str, opts: dict, carried: dict):
        __tracebackhide__ = True
        from warp_lab.compiler import cuda_source
        from warp_lab.lang.cuda import CudaKernel, cuda_kernels, python_name

        show = _split(opts["show"], SHOW_CHOICES, "--show")
        hide = set(_split(opts["hide"], SHOW_CHOICES, "--hide"))
        show = [s for s in show if s not in hide]
        checks = _split(opts["check"], CHECK_CHOICES, "--check")
        full_text = f"%%cuda_kernel {line}".rstrip() + "\n" + cell
        filename = self._cell_name(full_text)
        linecache.cache[filename] = (len(full_text), None,
                                     python_lines(full_text, keepends=True), filename)
        source = "\n" + cell   # line 1 is the magic line: the C++ keeps the cell's numbers
        ns = self.shell.user_ns
        declared = [python_name(d.name) for d in cuda_source.find_kernels(source)]
        declared += [python_name(i) for i in opts["instantiate"] or ()]

        def unbind():
            """Drop the kernels bound under the names this cell declares (of an earlier
            run): a cell NVRTC refuses leaves none of them callable."""
            for name in declared:
                if isinstance(ns.get(name), CudaKernel):
                    del ns[name]
        try:
            kernels = cuda_kernels(source, filename=filename, defines=opts["defines"],
                                   std=opts["std"], instantiate=opts["instantiate"] or (),
                                   **carried)
        except (TypeError, ValueError) as exc:
            unbind()
            raise UsageError(f"%%cuda_kernel: {exc}") from None
        except KernelCompileError:
            unbind()
            raise
        if not kernels:
            unbind()
            templates = [d.name for d in cuda_source.find_kernels(source) if d.template]
            _note("no kernel in this cell: " + (
                f"{', '.join(templates)} {'is a template' if len(templates) == 1 else 'are templates'}"
                f"; add --instantiate \"{templates[0]}<float>\" (the arguments you need)"
                if templates else "%%cuda_kernel compiles the __global__ functions of a cell"))
            return None
        launch_kwargs = launch_error = None
        view_opts = opts
        if opts["launch"]:
            try:
                launch_kwargs = launch_option.launch_kwargs(opts, checks, ns)
            except LaunchError as exc:
                launch_error = exc
            else:
                view_opts = {**opts, **launch_option.launch_shape(launch_kwargs)}
        listed = list(kernels.values())
        try:
            views = [self._compile_and_view(k, view_opts, show) for k in listed]
        except KernelCompileError:
            unbind()
            raise
        for k in listed:   # bound only once every kernel of the cell compiled
            ns[k.name] = k
        for v in views[:-1]:
            display(v)
        last = views[-1]
        if opts["launch"]:
            display(last)
            if launch_error is not None:
                raise launch_error
            return self._launch(last.compiled, launch_kwargs)
        return last
