"""``wl.cuda_kernel``: CUDA C++ kernels, compiled by NVRTC, taken by ``wl.compile``,
``wl.launch`` and ``wl.debug`` like ``@wl.kernel`` functions.

A :class:`CudaProgram` is one translation unit (the source, where it came from, the
preprocessor defines, the C++ standard, the template instantiations asked for); a
:class:`CudaKernel` is one ``__global__`` function of it (or one instantiation of a
kernel template). Nothing here calls NVRTC: compiling happens in
:mod:`warp_lab.compiler.cuda_pipeline` (``wl.compile``), so defining a kernel is free and
``import warp_lab`` never loads ``libnvrtc``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from warp_lab.compiler import cuda_source
from warp_lab.errors import KernelCompileError, unreadable_character
from warp_lab.lang.kernel import Source, check_kernel_options

__all__ = ["CudaProgram", "CudaKernel", "cuda_kernel", "cuda_kernels", "python_name",
           "check_defines", "STANDARDS"]

#: what ``std=`` / ``--std`` takes (NVRTC's ``--std``; NVRTC 13's default is c++17)
STANDARDS = ("c++11", "c++14", "c++17", "c++20")


@dataclass(frozen=True)
class CudaProgram:
    """One CUDA C++ translation unit.

    Attributes:
        source: its :class:`~warp_lab.lang.kernel.Source` (text, file or cell name,
            ``first_line`` 1: NVRTC numbers the text's own lines).
        defines: ``(NAME, VALUE)`` pairs, NVRTC's ``-D NAME=VALUE`` (VALUE ``None`` for
            ``-D NAME``), in order.
        std: the C++ standard (one of :data:`STANDARDS`), None for NVRTC's default.
        instantiate: the template instantiations to compile (``"scale<float>"``): NVRTC
            name expressions, each one more kernel.
    """

    source: Source
    defines: tuple = ()
    std: str | None = None
    instantiate: tuple = ()

    @property
    def defines_dict(self) -> dict:
        """``defines`` as a dict (``-D NAME`` is ``1``, as the preprocessor defines it)."""
        return {k: ("1" if v is None else v) for k, v in self.defines}


@dataclass(eq=False)
class CudaKernel:
    """One ``__global__`` function of a :class:`CudaProgram`.

    Attributes:
        program: the translation unit.
        expression: the C++ name the kernel is known by: its name, or an instantiation
            (``"scale<float>"``); NVRTC lowers it to the PTX entry name.
        decl: what the source says about it (line, parameter names, body).
        options: compile options the kernel carries (a subset of ``KERNEL_OPTIONS``:
            ``arch``, ``opt``, ``fast_math``, ``debug``, ``maxrregcount``), as
            :attr:`warp_lab.lang.kernel.Kernel.options`.
    """

    program: CudaProgram
    expression: str
    decl: cuda_source.KernelDecl
    options: dict = field(default_factory=dict)

    language = "cuda"

    @property
    def name(self) -> str:
        """The name to call the kernel by in Python (:func:`python_name`)."""
        return python_name(self.expression)

    @property
    def source(self) -> Source:
        return self.program.source

    def __call__(self, *args, **kwargs):
        raise TypeError(f"CUDA kernel {self.expression!r} cannot be called directly; launch "
                        f"it with wl.launch({self.name}, grid=..., block=..., inputs=[...])")

    def __repr__(self) -> str:
        return f"<wl.cuda_kernel {self.expression} (line {self.decl.line})>"


def python_name(expression: str) -> str:
    """A Python identifier for a kernel's C++ name: itself, or for an instantiation its
    letters and digits joined by ``_`` (``"scale<float>"`` -> ``scale_float``,
    ``"tile<32, float>"`` -> ``tile_32_float``)."""
    words = re.findall(r"[A-Za-z0-9]+", expression.replace("::", "_"))
    name = "_".join(words) or "kernel"
    return "_" + name if name[0].isdigit() else name


_DEFINE = re.compile(r"[A-Za-z_]\w*")


def check_defines(defines) -> tuple:
    """``defines`` (a dict ``{NAME: VALUE}``, a list of ``"NAME=VALUE"``/``"NAME"``
    strings or of pairs) as ``(NAME, VALUE)`` pairs, VALUE a string or None.

    Raises:
        ValueError: a name that is not a C identifier, or a value with a newline.
    """
    if defines is None:
        return ()
    items = defines.items() if isinstance(defines, dict) else defines
    out = []
    for item in items:
        if isinstance(item, str):
            name, _, value = item.partition("=")
            value = value if "=" in item else None
        else:
            name, value = item
        if not isinstance(name, str) or not _DEFINE.fullmatch(name):
            raise ValueError(f"a define's name must be a C identifier, got {name!r}")
        if value is not None:
            value = str(value)
            if "\n" in value or "\r" in value:
                raise ValueError(f"the value of define {name} has a line break")
        out.append((name, value))
    return tuple(out)


def _program(source, filename, defines, std, instantiate) -> CudaProgram:
    if not isinstance(source, str):
        raise TypeError(f"wl.cuda_kernel needs the CUDA C++ source as a str, got "
                        f"{type(source).__name__}")
    if std is not None and std not in STANDARDS:
        raise ValueError(f"std must be one of {', '.join(STANDARDS)}, got {std!r}")
    if isinstance(instantiate, str):
        instantiate = (instantiate,)
    instantiate = tuple(instantiate or ())
    for inst in instantiate:
        if not isinstance(inst, str) or not re.fullmatch(r"\s*[A-Za-z_][\w:]*\s*<.*>\s*", inst) \
                or "\n" in inst or ";" in inst:
            raise ValueError(f"an instantiation is a kernel template's name with its "
                             f"arguments, such as 'scale<float>', got {inst!r}")
    instantiate = tuple(" ".join(i.split()) for i in instantiate)
    if filename is None:
        first = next((k.name for k in cuda_source.find_kernels(source)), "source")
        filename = f"<cuda source of {first}>"
    unreadable = unreadable_character(source, filename)
    if unreadable is not None:
        raise unreadable
    return CudaProgram(Source(source, filename, 1), check_defines(defines), std, instantiate)


def _kernels(program: CudaProgram, options: dict) -> dict:
    """Every kernel of ``program`` by its C++ expression: the non-template kernels and
    the instantiations asked for."""
    decls = cuda_source.find_kernels(program.source.text)
    by_name = {d.name: d for d in decls}
    out = {}
    for d in decls:
        if not d.template:
            out[d.name] = CudaKernel(program, d.name, d, dict(options))
    for inst in program.instantiate:
        base = inst.split("<", 1)[0].strip()
        d = by_name.get(base) or next(
            (k for n, k in by_name.items() if n.split("::")[-1] == base.split("::")[-1]
             and base.count("::") < n.count("::") and n.endswith("::" + base)), None)
        if d is None or not d.template:
            known = ", ".join(n for n, k in by_name.items() if k.template) or "none"
            raise KernelCompileError(
                f"--instantiate {inst!r}: the source has no __global__ template {base!r}",
                program.source.filename, 0,
                hint=f"kernel templates of this source: {known}")
        out[inst] = CudaKernel(program, inst, d, dict(options))
    return out


def cuda_kernels(source: str, *, filename: str | None = None, defines=None,
                 std: str | None = None, instantiate=(), **options) -> dict:
    """Every ``__global__`` function of a CUDA C++ source, as kernels.

    Args:
        source: the translation unit (``extern "C"`` and C++ kernels both; ``#include`` of
            NVRTC's built-in headers and the CUDA runtime's, such as ``cuda_fp16.h``).
        filename: the name diagnostics and the line tables give the source (default
            ``<cuda source of FIRST>``, FIRST its first kernel's name).
        defines: preprocessor macros, NVRTC's ``-D``: ``{"N": 256}``, ``["N=256",
            "USE_X"]``.
        std: ``"c++17"`` etc. (:data:`STANDARDS`); None for NVRTC's default.
        instantiate: kernel template instantiations to compile (``["scale<float>",
            "scale<double>"]``); a template kernel without one is not compiled.
        options: compile options the kernels carry: ``arch`` (``"sm_80"``), ``opt``
            (0..3, NVVM's level, ``-Xnvvm -opt=N``), ``fast_math`` (``--use_fast_math``),
            ``debug`` (``-G``), ``maxrregcount`` (ptxas's cap).

    Returns:
        ``{C++ name: CudaKernel}`` in source order, instantiations after the plain kernels
        (``"saxpy"``, ``"scale<float>"``).

    Raises:
        TypeError: ``source`` is not a str, or an option is unknown.
        ValueError: a bad option value, ``std``, define or instantiation.
        KernelCompileError: an instantiation of a template the source does not have.
    """
    options = check_kernel_options(options)
    program = _program(source, filename, defines, std, instantiate)
    return _kernels(program, options)


def cuda_kernel(source: str, name: str | None = None, *, filename: str | None = None,
                defines=None, std: str | None = None, instantiate=(), **options) -> CudaKernel:
    """One CUDA C++ kernel: ``wl.cuda_kernel(src, "saxpy")``, then ``wl.compile``,
    ``wl.launch(k, grid=..., block=..., inputs=[...])`` and ``wl.debug`` take it.

    Args:
        source: the CUDA C++ translation unit.
        name: the kernel's C++ name, or a template instantiation (``"scale<float>"``,
            added to ``instantiate``); None when the source has exactly one kernel.
        filename, defines, std, instantiate, options: as for :func:`cuda_kernels`
            (``arch``, ``opt``, ``fast_math``, ``debug``, ``maxrregcount``).

    Raises:
        KernelCompileError: ``name`` is not a kernel of the source, or ``name`` is None
            and the source has none or several (the message lists them).
        TypeError, ValueError: as for :func:`cuda_kernels`.
    """
    instantiate = (instantiate,) if isinstance(instantiate, str) else tuple(instantiate or ())
    if name is not None and "<" in name and " ".join(name.split()) not in instantiate:
        instantiate += (name,)
    kernels = cuda_kernels(source, filename=filename, defines=defines, std=std,
                           instantiate=instantiate, **options)
    program_file = next(iter(kernels.values())).source.filename if kernels else \
        (filename or "<cuda source>")
    if name is None:
        if len(kernels) == 1:
            return next(iter(kernels.values()))
        raise KernelCompileError(
            "the source has " + (f"{len(kernels)} kernels" if kernels else "no __global__ "
                                 "function to compile") + "; name the one you want",
            program_file, 0, hint=("wl.cuda_kernel(source, name) with name one of "
                                   + ", ".join(kernels)) if kernels else
            "a kernel template needs an instantiation: instantiate=['scale<float>']")
    key = " ".join(name.split())
    if key not in kernels:
        raise KernelCompileError(f"the source has no __global__ function {name!r}", program_file,
                                 0, hint="its kernels: " + (", ".join(kernels) or "none"))
    return kernels[key]


