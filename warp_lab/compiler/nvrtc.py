"""NVRTC: CUDA C++ -> PTX, in process (``cuda.bindings.nvrtc`` + the ``nvidia-cuda-nvrtc``
wheel's ``libnvrtc``).

Nothing here runs at import: :func:`load` opens the library on first use. One call,
:func:`compile_program`, creates a program, registers name expressions (NVRTC's way to
learn the lowered, mangled name of a ``__global__`` function or ``__device__`` variable:
``nvrtcAddNameExpression`` / ``nvrtcGetLoweredName``), compiles with the given options and
returns the PTX, the lowered names and NVRTC's log. A failed compile is an
:class:`NvrtcError` carrying the log and each diagnostic read from it
(:func:`parse_log`: NVRTC prints EDG's ``file(line): error: text``, then the source line
and a caret under the column).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from warp_lab.errors import ToolchainError

__all__ = ["load", "version", "compile_program", "NvrtcResult", "NvrtcError", "Diagnostic",
           "parse_log", "include_directories"]


@functools.lru_cache(maxsize=1)
def load():
    """``cuda.bindings.nvrtc`` with ``libnvrtc`` loaded.

    Raises:
        ToolchainError: ``cuda.bindings`` or the NVRTC library is missing
            (``pip install nvidia-cuda-nvrtc``).
    """
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:
        raise ToolchainError(f"cuda.bindings.nvrtc is not importable ({exc}); pip install "
                             "cuda-bindings nvidia-cuda-nvrtc", tool="nvrtc") from None
    try:
        err, _, _ = nvrtc.nvrtcVersion()
    except Exception as exc:  # noqa: BLE001 - the loader's RuntimeError: no libnvrtc
        raise ToolchainError(f"libnvrtc not found ({exc}); pip install nvidia-cuda-nvrtc",
                             tool="nvrtc") from None
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise ToolchainError(f"nvrtcVersion failed: {err}", tool="nvrtc")
    return nvrtc


@functools.lru_cache(maxsize=1)
def version() -> str:
    """NVRTC's version, ``"13.5"`` (part of a CUDA C++ kernel's cache key).

    Raises:
        ToolchainError: NVRTC is missing (:func:`load`).
    """
    _, major, minor = load().nvrtcVersion()
    return f"{major}.{minor}"


@functools.lru_cache(maxsize=1)
def include_directories() -> tuple[str, ...]:
    """Header folders handed to NVRTC with ``-I``: the CUDA runtime's headers
    (``cuda_fp16.h``, ``cooperative_groups.h``, ... from the ``nvidia-cuda-runtime``
    wheel or a toolkit, found by ``cuda.pathfinder``); NVRTC's own built-in headers
    (``cuda_runtime.h`` basics, vector types) need none. Empty when none is found."""
    out = []
    try:
        from cuda import pathfinder
    except ImportError:
        return ()
    for lib in ("cudart", "cccl"):
        try:
            found = pathfinder.find_nvidia_header_directory(lib)
        except Exception:  # noqa: BLE001 - a missing optional header set
            found = None
        if found and found not in out:
            out.append(found)
    return tuple(out)


@dataclass(frozen=True)
class Diagnostic:
    """One message of NVRTC's log.

    Attributes:
        filename: the file it names (the program's name for the user's source).
        line: 1-based line (0 when the log gives none).
        col: 1-based column from the caret line (0 when there is none).
        severity: ``"error"``, ``"catastrophic error"``, ``"warning"``, ``"remark"``.
        message: the text after the severity.
        source_line: the source line NVRTC quoted ("" when none).
    """

    filename: str
    line: int
    col: int
    severity: str
    message: str
    source_line: str = ""


_HEAD = re.compile(r"^(.*?)\((\d+)\): (catastrophic error|error|warning|remark|note)"
                   r"(?: #[\w-]+)?: (.*)$")


def parse_log(log: str) -> list[Diagnostic]:
    """The diagnostics of an NVRTC log, in order (notes attached to none)."""
    lines = log.splitlines()
    out = []
    for k, text in enumerate(lines):
        m = _HEAD.match(text)
        if m is None or m.group(3) == "note":
            continue
        source_line, col = "", 0
        if k + 2 < len(lines) and lines[k + 2].strip() == "^":
            source_line = lines[k + 1]
            col = lines[k + 2].index("^") + 1
            # NVRTC indents the quoted line by two spaces
            if source_line.startswith("  "):
                source_line, col = source_line[2:], max(1, col - 2)
        out.append(Diagnostic(m.group(1), int(m.group(2)), col, m.group(3), m.group(4),
                              source_line))
    return out


class NvrtcError(Exception):
    """NVRTC refused a program (``NVRTC_ERROR_COMPILATION`` or another result).

    Attributes:
        result: NVRTC's result name.
        log: the whole log.
        diagnostics: :func:`parse_log` of it.
    """

    def __init__(self, result: str, log: str):
        self.result = result
        self.log = log
        self.diagnostics = parse_log(log)
        super().__init__(f"{result}: {log.strip()}")


@dataclass(frozen=True)
class NvrtcResult:
    """What :func:`compile_program` returns.

    Attributes:
        ptx: the PTX text.
        lowered: name expression -> its lowered (mangled) name.
        log: NVRTC's log (warnings; "" when quiet).
    """

    ptx: str
    lowered: dict
    log: str


def _text(nvrtc, prog, size_fn, get_fn) -> str:
    _, size = size_fn(prog)
    # A writable buffer of our own: ``b" " * size`` (cuda-python's example) is CPython's
    # cached one-byte ``b" "`` when the log is empty (size 1), and NVRTC's NUL written into
    # it turned every later ``b" "`` of the process into ``b"\\0"`` (print's separator too).
    buf = bytearray(size)
    get_fn(prog, buf)
    return bytes(buf).rstrip(b"\0").decode(errors="replace")


def compile_program(source: str, name: str, options, name_expressions=()) -> NvrtcResult:
    """Compile one CUDA C++ translation unit to PTX.

    Args:
        source: the translation unit's text.
        name: the program's name (what ``#line``, the log and PTX ``.file`` name).
        options: NVRTC options as strings (``"--gpu-architecture=compute_90"``,
            ``"-lineinfo"``).
        name_expressions: C++ expressions naming ``__global__`` functions or the
            address of ``__device__`` variables (``"scale<float>"``, ``"&v<int>"``),
            whose lowered names to return.

    Returns:
        the :class:`NvrtcResult`.

    Raises:
        ToolchainError: NVRTC is missing.
        NvrtcError: NVRTC refused the program (with its log).
    """
    nvrtc = load()
    ok = nvrtc.nvrtcResult.NVRTC_SUCCESS
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], [])
    if err != ok:
        raise NvrtcError(err.name, "")
    try:
        for expr in name_expressions:
            (err,) = nvrtc.nvrtcAddNameExpression(prog, expr.encode())
            if err != ok:
                raise NvrtcError(err.name, f"name expression {expr!r} refused")
        opts = [o.encode() for o in options]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        log = _text(nvrtc, prog, nvrtc.nvrtcGetProgramLogSize, nvrtc.nvrtcGetProgramLog)
        if err != ok:
            raise NvrtcError(err.name, log)
        ptx = _text(nvrtc, prog, nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX)
        lowered = {}
        for expr in name_expressions:
            err, low = nvrtc.nvrtcGetLoweredName(prog, expr.encode())
            if err == ok and low is not None:
                lowered[expr] = low.decode()
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return NvrtcResult(ptx, lowered, log)
