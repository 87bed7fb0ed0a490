"""The errors warp_lab raises.

User errors (the kernel or the launch is wrong) and internal errors (warp_lab
is wrong) are different classes, so that a notebook can show the first as a
compact diagnostic pointing at the user's line and the second with what is
needed to report it.
"""

from __future__ import annotations

import re
import sys

__all__ = [
    "WarpLabError", "KernelCompileError", "KernelOptionError", "InternalCompilerError",
    "ToolchainError", "LaunchError", "CudaError", "SimulatorError", "LaunchInterrupted",
    "source_label", "unreadable_character",
]


#: the name the ``%%warp_kernel`` magic registers a cell under (``magic._cell_name``)
_MAGIC_CELL = re.compile(r"<cell (\d+)(?:\.\d+)?>")


def source_label(filename: str) -> str:
    """``filename`` as the user's notebook names it, for messages and views.

    ``In[N]`` for the file ipykernel compiled an ordinary cell under
    (``/tmp/ipykernel_1/123.py``), as IPython's own tracebacks name it
    (``shell.compile.format_code_name``), and likewise for a ``%%warp_kernel``
    cell's ``<cell N>`` (``<cell N.k>`` when another text ran under the same
    count), so that a notebook's cells have one name whichever kind they are;
    any other name (a real file path) unchanged. IPython is asked only when the
    process has already imported it, so scripts never import it.

    Args:
        filename: a code object's ``co_filename`` or :class:`Source` file name.
    """
    magic = _MAGIC_CELL.fullmatch(filename)
    if magic:
        return f"In[{magic.group(1)}]"
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return filename
    try:
        shell = ipython.get_ipython()
        named = shell.compile.format_code_name(filename) if shell is not None else None
    except Exception:  # noqa: BLE001 - a label is a nicety, never a new error
        named = None
    return named[1] if named else filename


class WarpLabError(Exception):
    """Base class of every error warp_lab raises on purpose."""


#: characters of a long source line shown in a diagnostic
_EXCERPT = 120


class KernelCompileError(WarpLabError):
    """A kernel is outside the language or mistyped.

    Attributes:
        message: what is wrong, in one sentence.
        filename: the file or cell name (``"<cell 3>"``; ipykernel's file of an
            ordinary cell, which ``str()`` shows as ``In[N]``: :func:`source_label`).
        line: 1-based line in that file or cell.
        col: 1-based column (0 when unknown).
        source_line: the text of the offending line (may be ``""``).
        hint: what to write instead (may be ``""``).
        call_noted: True once the hint names the call of the device function the
            error is in (``"f(x: float32) was called at In[3]:7"``), which the front
            end adds once, at the innermost call (``frontend.specialize``).

    ``str()`` reads like a compiler diagnostic::

        <cell 3>:4:12: error: ...
            y = [i for i in range(3)]
                ^
        hint: ...
    """

    def __init__(self, message: str, filename: str = "<unknown>", line: int = 0,
                 col: int = 0, source_line: str = "", hint: str = "", *,
                 call_noted: bool = False):
        self.message = message
        self.call_noted = call_noted
        self.filename = filename
        self.line = line
        self.col = col
        self.source_line = source_line
        self.hint = hint
        super().__init__(self.format())

    def format(self) -> str:
        """The diagnostic text (what ``str()`` returns)."""
        name = source_label(self.filename)
        where = f"{name}:{self.line}:{self.col}" if self.line else name
        text = f"{where}: error: {self.message}"
        if self.source_line:
            line, col = self.source_line.rstrip("\n"), self.col
            if len(line) > _EXCERPT:  # a capped window around the column (Triton caps too)
                start = max(0, min(col - 1 - _EXCERPT // 3, len(line) - _EXCERPT))
                head = "..." if start else ""
                tail = "..." if start + _EXCERPT < len(line) else ""
                line = head + line[start: start + _EXCERPT] + tail
                col = col - start + len(head) if col else 0
            text += "\n    " + line
            if col:
                # the caret sits under the column, tabs kept so it lines up
                pad = "".join(c if c == "\t" else " " for c in line[: col - 1])
                text += "\n    " + pad + "^"
        if self.hint:
            text += f"\nhint: {self.hint}"
        return text

    def __reduce__(self):
        return (type(self), (self.message, self.filename, self.line, self.col,
                             self.source_line, self.hint), {"call_noted": self.call_noted})


class KernelOptionError(KernelCompileError, TypeError, ValueError):
    """``@wl.kernel(...)`` was given an option it does not know or a bad value.

    Located like :class:`KernelCompileError`, at the option in the decorator
    line of the user's code; also a :class:`TypeError` (what Python raises for
    an unknown keyword) and a :class:`ValueError` (a bad value), as before.
    """


#: a character no compiler reads: NUL, or half of a UTF-16 surrogate pair
_UNREADABLE = re.compile("[\x00\ud800-\udfff]")


def unreadable_character(text: str, filename: str, first_line: int = 1):
    """A located :class:`KernelCompileError` for the first character of ``text`` that no
    compiler reads, or None when there is none.

    A NUL ends the text for NVRTC, which takes a C string (the rest of the source was
    dropped: "identifier __wl_sig is undefined"), and Python's parser refuses it without
    a line ("source code string cannot contain null bytes"); a lone surrogate (``\\udcff``:
    a ``str`` decoded from bytes with ``errors="surrogateescape"``, or a ``\\ud83d`` escape
    in a notebook's JSON) has no UTF-8 encoding, and encoding the cell raised
    ``UnicodeEncodeError`` out of the parser and out of NVRTC's call.

    Args:
        text: the source; its first line is line ``first_line`` of ``filename``.
        filename: the cell or file name the error names.
    """
    m = _UNREADABLE.search(text)
    if m is None:
        return None
    start = text.rfind("\n", 0, m.start()) + 1
    end = text.find("\n", m.start())
    line_text = text[start: len(text) if end < 0 else end]
    char = m.group(0)
    what = "a NUL character (\\x00)" if char == "\x00" else \
        f"a lone surrogate ({ascii(char)[1:-1]}), which is no UTF-8 text"
    return KernelCompileError(f"the source holds {what}", filename,
                              first_line + text.count("\n", 0, m.start()), m.start() - start + 1,
                              _UNREADABLE.sub("\ufffd", line_text),
                              "delete it: no compiler reads it (a copy from a binary file or "
                              "a terminal can bring one in)")


class InternalCompilerError(WarpLabError):
    """warp_lab failed on a kernel it should have compiled; please report it.

    Not the user's error: the text says so, names the kernel and the Python line
    being compiled when known, and the exception that failed is chained as
    ``__cause__`` (``raise ... from exc``) for whoever fixes it.

    Attributes:
        stage: the pipeline stage that failed (``"frontend"``, ``"lower"``, ``"nvptx"``...).
        request: a description of the compile request that reproduces it.
        kernel: the kernel's name (``""`` when unknown).
        filename: the file or cell of the line being compiled (``""`` when unknown).
        line: its 1-based line in that file or cell (0 when unknown).
        col: 1-based column, in characters (0 when unknown).
        source_line: the text of that line (may be ``""``).
    """

    def __init__(self, message: str, stage: str = "", request: str = "", *, kernel: str = "",
                 filename: str = "", line: int = 0, col: int = 0, source_line: str = ""):
        self.message = message
        self.stage = stage
        self.request = request
        self.kernel = kernel
        self.filename = filename
        self.line = line
        self.col = col
        self.source_line = source_line
        text = f"internal compiler error in stage {stage!r}"
        if kernel:
            text += f" compiling kernel {kernel!r}"
        if filename:
            where = source_label(filename) + (f":{line}" if line else "") + (
                f":{col}" if line and col else "")
            text += f" at {where}"
        text += f": {message}"
        if source_line:
            text += "\n    " + source_line.rstrip("\n")
            if col:
                text += "\n    " + "".join(c if c == "\t" else " "
                                           for c in source_line[: col - 1]) + "^"
        if request:
            text += f"\nrequest: {request}"
        text += ("\nThis is a bug in warp_lab, not in your kernel; please report it with the "
                 "kernel source.")
        super().__init__(text)

    def __reduce__(self):
        return (_rebuild_internal, (self.message, self.stage, self.request, self.kernel,
                                    self.filename, self.line, self.col, self.source_line))


def _rebuild_internal(message, stage, request, kernel, filename, line, col, source_line):
    """Unpickle an :class:`InternalCompilerError` (its location is keyword-only)."""
    return InternalCompilerError(message, stage, request, kernel=kernel, filename=filename,
                                 line=line, col=col, source_line=source_line)


class ToolchainError(WarpLabError):
    """An NVIDIA tool (ptxas, nvdisasm) is missing or failed.

    Attributes:
        tool: tool name.
        argv: the full argument vector that was run (empty if the tool is missing).
        returncode: exit status (None if it did not run).
        log: what the tool printed.
    """

    def __init__(self, message: str, tool: str = "", argv=(), returncode=None, log: str = ""):
        self.tool = tool
        self.argv = list(argv)
        self.returncode = returncode
        self.log = log
        text = message
        if self.argv:
            text += f"\ncommand: {' '.join(self.argv)}"
        if returncode is not None:
            text += f"\nexit status: {returncode}"
        if log:
            text += f"\n{log.rstrip()}"
        super().__init__(text)


class UnsupportedFeatureError(WarpLabError, NotImplementedError):
    """A feature of NVIDIA Warp that warp_lab's Warp namespace (:mod:`warp_lab.warp`) does
    not have yet (meshes, volumes, BVHs, ``wp.Tape`` autodiff, ...), used on the host; in a
    kernel the same name is a :class:`KernelCompileError` at its line."""


class LaunchError(WarpLabError):
    """A launch was asked for with wrong arguments or an impossible configuration."""


class CudaError(WarpLabError):
    """The CUDA driver reported an error.

    Attributes:
        name: the CUDA error name (``"CUDA_ERROR_ILLEGAL_ADDRESS"``).
        explanation: what it usually means and what to try.
    """

    def __init__(self, name: str, explanation: str = ""):
        self.name = name
        self.explanation = explanation
        super().__init__(f"{name}: {explanation}" if explanation else name)


class SimulatorError(WarpLabError):
    """The CPU simulator cannot execute a kernel, or the kernel faulted.

    Attributes:
        ptx_line: 1-based line of the PTX text (0 if unknown).
        source_line: the kernel source line from ``.loc`` (0 if unknown).
    """

    def __init__(self, message: str, ptx_line: int = 0, source_line: int = 0):
        self.ptx_line = ptx_line
        self.source_line = source_line
        super().__init__(message)


class LaunchInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) stopped a simulated launch: a ``KeyboardInterrupt`` carrying what ran.

    A subclass of ``KeyboardInterrupt``, not of :class:`WarpLabError`: a user's interrupt
    stops the cell (and a loop of launches) like any other Ctrl-C, and ``except
    KeyboardInterrupt`` catches it. The launch's output arrays are left as they were
    (or, for a Ctrl-C that came while they were copied back, all written:
    :func:`~warp_lab.runtime.interrupt.deferred_sigint`).

    Raised by :func:`warp_lab.launch` (``result`` a
    :class:`~warp_lab.runtime.result.LaunchResult`, also returned by
    :func:`warp_lab.last_launch`), by :func:`warp_lab.sim.run` (a
    :class:`~warp_lab.sim.result.SimResult`) and by a debugger session's motions
    (``wl.debug(...).run_to_end()``: the session's result so far; the session can go on).

    Attributes:
        result: what the launch did until the interrupt: ``partial=True`` and an
            ``interrupted`` finding when the simulator was stopped, ``partial=False``
            when the Ctrl-C came after the last block (it was delivered once the
            arrays were written back).
    """

    def __init__(self, result, message: str = ""):
        self.result = result
        super().__init__(message or "the launch was interrupted (Ctrl-C); the partial result "
                         "is the exception's .result (wl.last_launch() after wl.launch)")
