"""``@wl.kernel``, ``@wl.func`` and ``wl.constant``: what the compiler is given.

A :class:`Kernel` or :class:`Func` is only a record of a Python function and
where its source came from (file or notebook cell, first line), so that every
diagnostic and every line map can point at the user's own line numbers.
Compiling happens in :mod:`warp_lab.compiler.pipeline`.
"""

from __future__ import annotations

import numpy as np

import ast
import difflib
import inspect
import linecache
import re
import sys
import textwrap
from dataclasses import dataclass, field

from warp_lab.errors import KernelCompileError, KernelOptionError, source_label
from warp_lab.options import KERNEL_OPTIONS, SUPPORTED_ARCHS, check_options

__all__ = ["Source", "Kernel", "Func", "Constant", "kernel", "func", "constant", "is_cell_file",
           "TypeFactory",
           "DIALECTS", "Unsupported", "check_kernel_options", "python_lines"]

_NEWLINE = re.compile(r"(\r\n|\r|\n)")


def python_lines(text: str, keepends: bool = False) -> list[str]:
    """``text``'s lines as Python's tokenizer ends them: at ``\\n``, ``\\r\\n`` and ``\\r``
    only. ``str.splitlines`` also breaks at ``\\x0b``, ``\\x0c``, ``\\x1c``-``\\x1e``,
    ``\\x85``, U+2028 and U+2029, which Python keeps inside a line (a comment, a string,
    a form feed before an indent), so its line numbers would drift from Python's."""
    parts = _NEWLINE.split(text)
    lines = [parts[i] + (parts[i + 1] if keepends else "") for i in range(0, len(parts) - 1, 2)]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


@dataclass(frozen=True)
class Source:
    """A function's source text and where it sits.

    Attributes:
        text: the function's source, dedented, starting at its first
            decorator or ``def`` line.
        filename: the file or cell name used in diagnostics.
        first_line: 1-based line number of ``text``'s first line in that file
            or cell; line ``k`` of ``text`` (1-based) is line
            ``first_line + k - 1`` of the file.
        col_offset: columns removed by dedenting (added back to columns in
            diagnostics).
    """

    text: str
    filename: str
    first_line: int = 1
    col_offset: int = 0

    def line(self, lineno: int) -> str:
        """The text of file line ``lineno`` (``""`` if outside the function)."""
        lines = python_lines(self.text)
        k = lineno - self.first_line
        if 0 <= k < len(lines):
            return " " * self.col_offset + lines[k]
        return ""


def source_of(fn) -> Source:
    """Read ``fn``'s source through :mod:`inspect` (works for files and IPython cells).

    Raises:
        KernelCompileError: the source cannot be found (a lambda typed at a
            plain ``python`` prompt, a function built with ``exec`` of a string
            that was not registered in :mod:`linecache`).
    """
    filename = fn.__code__.co_filename
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise KernelCompileError(
            f"cannot read the source of {fn.__qualname__!r} ({exc})", filename,
            fn.__code__.co_firstlineno,
            hint="define kernels in a file, a notebook cell or a %%warp_kernel cell",
        ) from None
    last = _last_code_line(fn.__code__)
    end = first + len(lines) - 1
    if last > end and is_cell_file(filename):  # IPython keeps cells split by str.splitlines
        raise KernelCompileError(
            f"cannot read the whole source of {fn.__qualname__!r}: the copy of "
            f"{source_label(filename)} Python keeps for it ends the function at line {end}, "
            f"but its code runs to line {last}; the copy was split into lines at a "
            "character Python keeps inside a line (a U+2028 or U+2029 line or paragraph "
            "separator, a form feed, U+0085), in a comment or a string", filename, end,
            hint="delete that character (it often comes with text pasted from a web page "
                 "or a PDF), or define the kernel in a %%warp_kernel cell") from None
    if last > end:
        raise KernelCompileError(
            f"cannot read the whole source of {fn.__qualname__!r}: in {filename} as it is "
            f"now the function ends at line {end}, but the code Python loaded runs to line "
            f"{last}: the file changed since it was imported", filename, end,
            hint="re-import it (importlib.reload(module)) or restart the kernel") from None
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    col = len(lines[0]) - len(lines[0].lstrip()) if text != raw else 0
    return Source(text, filename, max(first, 1), col)


def _last_code_line(code) -> int:
    """The last source line ``code`` (and the functions nested in it) has code on."""
    last = max((line for _, _, line in code.co_lines() if line is not None),
               default=code.co_firstlineno)
    for c in code.co_consts:
        if inspect.iscode(c):
            last = max(last, _last_code_line(c))
    return last


def is_cell_file(filename: str) -> bool:
    """Whether ``filename`` names code held in memory (a notebook cell) rather than a file.

    True for a pseudo-file name in angle brackets (``<cell 3>`` of the
    ``%%warp_kernel`` magic, ``<string>``) and for a name :mod:`linecache` holds
    with no modification time, which is how IPython registers every cell it runs
    (``/tmp/ipykernel_<pid>/<hash>.py`` under ipykernel, ``CachingCompiler.cache``;
    ``linecache.checkcache`` never drops such entries). Such a name changes when
    the same cell runs again (the count, the process id), so compiled artifacts
    do not carry it (:func:`warp_lab.compiler.cache.artifact_files`).
    """
    if filename.startswith("<") and filename.endswith(">"):
        return True
    entry = linecache.cache.get(filename)
    return entry is not None and len(entry) == 4 and entry[1] is None


def cell_source(text: str, filename: str, first_line: int = 1) -> None:
    """Register a cell's text in :mod:`linecache` so :func:`inspect.getsource` finds it."""
    linecache.cache[filename] = (len(text), None, python_lines(text, keepends=True), filename)


#: the dialects a kernel or device function may be written in: ``"python"`` (``@wl.kernel``:
#: Python's ``/``, ``%`` and ``print``) and ``"warp"`` (``@wp.kernel`` of
#: :mod:`warp_lab.warp`: NVIDIA Warp's C-like integer ``/`` and ``%`` and its ``print``)
DIALECTS = ("python", "warp")


@dataclass(eq=False)
class _Function:
    fn: object
    source: Source = field(default=None)
    #: the language the function's source is written in (:data:`DIALECTS`): a property
    #: of the function, so a ``@wp.func`` called from a ``@wl.kernel`` keeps Warp's rules
    dialect: str = field(default="python", kw_only=True)

    def __post_init__(self):
        if not inspect.isfunction(self.fn):
            raise TypeError(f"@{self.kind_name} needs a Python function, not {type(self.fn).__name__}")
        if self.dialect not in DIALECTS:
            raise ValueError(f"dialect must be one of {DIALECTS}, not {self.dialect!r}")
        if self.source is None:
            self.source = source_of(self.fn)
        self.__name__ = self.fn.__name__
        self.__qualname__ = self.fn.__qualname__
        self.__doc__ = self.fn.__doc__
        self.__module__ = self.fn.__module__

    kind_name = "function"

    @property
    def name(self) -> str:
        return self.fn.__name__

    @property
    def globals(self) -> dict:
        """The namespace used to resolve names (constants, other funcs, ``wl``)."""
        return self.fn.__globals__

    @property
    def closure(self) -> dict:
        """Free variables captured from an enclosing function, by name."""
        if not self.fn.__closure__:
            return {}
        return {n: c.cell_contents for n, c in zip(self.fn.__code__.co_freevars, self.fn.__closure__)}


@dataclass(eq=False)
class Kernel(_Function):
    """A kernel: a Python function that runs once per GPU thread.

    Parameters must be annotated (``x: wl.array(dtype=wl.float32)``,
    ``a: float``). Compile with :func:`warp_lab.compile`, launch with
    :func:`warp_lab.launch`.

    Attributes:
        options: compile options the kernel carries, by name (a subset of
            :data:`~warp_lab.options.KERNEL_OPTIONS`), as Numba's ``@cuda.jit(debug=True)`` does:
            ``wl.compile`` and ``wl.launch`` use each where their caller
            passes None (``arch`` only on the simulator: a GPU launch compiles
            for the GPU). Set by ``@wl.kernel(...)`` and by a
            ``%%warp_kernel`` cell's options.
    """

    options: dict = field(default_factory=dict)
    kind_name = "wl.kernel"

    def __call__(self, *args, **kwargs):
        raise TypeError(f"kernel {self.name!r} cannot be called directly; launch it with "
                        f"wl.launch({self.name}, dim=..., inputs=[...])")

    def __repr__(self) -> str:
        return f"<wl.kernel {self.name} ({source_label(self.source.filename)}:" \
               f"{self.source.first_line})>"


class Func(_Function):
    """A device function: callable from kernels and other device functions.

    Parameters may be annotated; unannotated ones take the types of the
    arguments at each call site (one specialisation per type combination).
    Called on the host it runs as plain Python.
    """

    kind_name = "wl.func"

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<wl.func {self.name} ({source_label(self.source.filename)}:" \
               f"{self.source.first_line})>"


@dataclass(frozen=True)
class Constant:
    """A value captured at compile time: ``N = wl.constant(256)``."""

    value: object

    def __int__(self):
        return int(self.value)

    def __float__(self):
        return float(self.value)

    def __index__(self):
        return int(self.value)


def kernel(fn=None, *, source: Source | None = None, **options):
    """Decorator: make ``fn`` a :class:`Kernel` (``@wl.kernel`` or ``@wl.kernel(debug=True)``).

    Args:
        fn: the Python function (None when called with options).
        source: its source, when :func:`inspect.getsource` cannot find it.
        options: compile options the kernel carries (:attr:`Kernel.options`):
            ``arch`` (``"sm_80"``...), ``opt`` (0..3), ``fast_math``, ``debug``
            (bools) and ``maxrregcount`` (1..255 registers per thread).

    Raises:
        KernelOptionError: an option that is not one of :data:`~warp_lab.options.KERNEL_OPTIONS`
            (also a TypeError) or a bad value (also a ValueError; the check
            ``wl.compile`` makes), at the option in the caller's decorator line.
    """
    try:
        options = check_kernel_options(options)
    except (TypeError, ValueError) as exc:
        raise _option_error(exc, options, sys._getframe(1)) from None
    if fn is None:
        return lambda f: Kernel(f, source, dict(options))
    return Kernel(fn, source, options)


def check_kernel_options(options: dict) -> dict:
    """``options`` checked for :attr:`Kernel.options` (None values dropped: not set).

    Raises:
        TypeError: a name that is not one of :data:`~warp_lab.options.KERNEL_OPTIONS`.
        ValueError: a bad value (:func:`warp_lab.options.check_options`).
    """
    unknown = sorted(set(options) - set(KERNEL_OPTIONS))
    if unknown:
        raise TypeError(f"@wl.kernel got unknown option(s) {', '.join(unknown)}; "
                        f"a kernel carries {', '.join(KERNEL_OPTIONS)}")
    options = {k: v for k, v in options.items() if v is not None}
    check_options(**options)
    return options


def _option_error(exc: Exception, options: dict, frame) -> KernelOptionError:
    """:class:`KernelOptionError` for ``exc`` raised checking ``options``, located at the
    call ``wl.kernel(...)`` that ``frame`` (the caller's) is executing: its line and
    column from the code object's positions (PEP 657), the caret under the bad keyword."""
    unknown = sorted(set(options) - set(KERNEL_OPTIONS))
    if unknown:
        bad = unknown[0]
        close = difflib.get_close_matches(bad, KERNEL_OPTIONS, n=1)
        message = f"@wl.kernel got unknown option {', '.join(map(repr, unknown))}"
        hint = (f"did you mean {close[0]}=...? " if close else "") + \
            f"a kernel's options are {', '.join(KERNEL_OPTIONS)}"
    else:
        bad, message, hint = "", f"@wl.kernel: {exc}", ""
        for name, value in options.items():  # the one value that fails on its own
            try:
                check_options(**{name: value})
            except ValueError as one:
                bad, message = name, f"@wl.kernel: {one}"
                break
        if bad == "arch":
            message = f"@wl.kernel: unsupported architecture {options['arch']!r}"
            hint = "warp_lab compiles for " + ", ".join(SUPPORTED_ARCHS)
    filename, line, col, text = _call_site(frame, bad)
    return KernelOptionError(message, filename, line, col, text, hint)


def _call_site(frame, keyword: str):
    """(file, line, 1-based column, source line) of the call ``frame`` is executing, the
    column that of its argument ``keyword=`` when the call's text shows it (0: unknown)."""
    code = frame.f_code
    filename, line, col = code.co_filename, frame.f_lineno, 0
    try:
        pos = list(code.co_positions())[frame.f_lasti // 2]
    except (AttributeError, IndexError):  # no PEP 657 positions (python -X no_debug_ranges)
        pos = (None,) * 4
    if None not in pos:
        line, end_line, start, end = pos
        # (PEP 657 columns count UTF-8 bytes: the call's text is cut from the encoded lines)
        lines = [ln.encode() for ln in linecache.getlines(filename)[line - 1: end_line]]
        col = len(lines[0][:start].decode(errors="replace")) + 1 if lines else start + 1
        if lines:
            lines[-1] = lines[-1][:end] if end_line > line else lines[-1]
            lines[0] = lines[0][:end] if end_line == line else lines[0]
            lines[0] = lines[0][start:]
            lines = [ln.decode(errors="replace") for ln in lines]
            try:
                call = ast.parse("".join(lines).strip(), mode="eval").body
            except SyntaxError:
                call = None
            kw = next((k for k in getattr(call, "keywords", ()) if k.arg == keyword), None)
            if kw is not None:  # (ast columns count UTF-8 bytes too)
                line += kw.lineno - 1
                text = linecache.getline(filename, line).encode()
                at = kw.col_offset + (start if kw.lineno == 1 else 0)
                col = len(text[:at].decode(errors="replace")) + 1
    return filename, line, col, linecache.getline(filename, line).rstrip("\n")


def func(fn=None, *, source: Source | None = None):
    """Decorator: make ``fn`` a device function :class:`Func` (``@wl.func``)."""
    if fn is None:
        return lambda f: Func(f, source)
    return Func(fn, source)


class ConstantArray(np.ndarray):
    """A vector or matrix value marked constant (Warp's ``wp.constant(wp.vec3(...))``):
    a numpy array on the host, and in a kernel that captures it a compile-time vector
    (1-D) or matrix (2-D) of its dtype (``typing_exprs.ExprTyper.classify``)."""


def constant(value) -> Constant:
    """Mark a module-level value as a compile-time constant of kernels that use it."""
    return Constant(value)


@dataclass(frozen=True)
class Unsupported:
    """A name of another kernel language that warp_lab does not have yet: NVIDIA Warp's
    ``wp.Mesh``, ``wp.mesh_query_point``, ``wp.Tape``... in :mod:`warp_lab.warp`.

    In a kernel the front end makes its use a located ``KernelCompileError`` with
    :meth:`message`; called (or instantiated) on the host it raises
    :class:`~warp_lab.errors.UnsupportedFeatureError`; any attribute of it raises too,
    so no ``AttributeError`` from inside warp_lab reaches the user.

    Attributes:
        name: the name as the user wrote it (``"wp.mesh_query_point"``).
        feature: the feature it belongs to (``"meshes"``, ``"autodiff (wp.Tape)"``).
    """

    name: str
    feature: str

    def message(self) -> str:
        """The sentence the errors say."""
        return (f"{self.name} is a Warp feature ({self.feature}) that warp_lab does not have "
                "yet")

    def __call__(self, *args, **kwargs):
        from warp_lab.errors import UnsupportedFeatureError

        raise UnsupportedFeatureError(self.message() + "; docs/language.md, 'The Warp "
                                      "namespace', lists what it has")

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return self.__call__()

    def __repr__(self) -> str:
        return f"<{self.name}: not in warp_lab yet ({self.feature})>"


class StaticMarker:
    """``wp.static(expr)``: ``expr`` is evaluated by Python when the kernel compiles (in
    the kernel's module globals and closure, as warp-lang 1.19 evaluates it) and its value
    used as a constant: a number, a tuple of numbers, a ``@wp.func`` to call. On the host
    ``wp.static(x)`` is ``x``."""

    def __call__(self, expr):
        return expr

    def __repr__(self) -> str:
        return "<wp.static>"


STATIC = StaticMarker()


class TypeFactory:
    """Warp's ``wp.types.vector`` / ``wp.types.matrix`` (also ``wp.vector``,
    ``wp.matrix``): on the host ``host(length/shape, dtype)`` gives the type; in a kernel
    the call is Warp's ``vector(*args, length=, dtype=)`` / ``matrix(*args, shape=,
    dtype=)`` builtin (``warp/_src/builtins.py``): a value of the type the keywords and
    the arguments give (``compiler.typing_builtins._factory``).

    Args:
        name: ``"vector"`` or ``"matrix"``.
        host: the host function that makes the type.
    """

    def __init__(self, name: str, host):
        self.name, self.host = name, host
        self.__doc__ = host.__doc__

    def __call__(self, *args, **kwargs):
        return self.host(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<wp.types.{self.name}>"


class FuncOverloads(Func):
    """Several device functions of one name (Warp's ``@wp.func`` defined twice with other
    parameter types or counts): a call takes the first whose parameters fit the arguments
    (count, then the annotated types: exact first, then an implicit conversion), as
    warp-lang 1.19 resolves overloads. Acts as its first function elsewhere (its name,
    its host call).

    Attributes:
        overloads: the functions, in the order they were defined.
    """

    def __init__(self, funcs):
        first = funcs[0]
        super().__init__(first.fn, first.source, dialect=first.dialect)
        self.overloads = list(funcs)

    def add(self, fn: Func) -> "FuncOverloads":
        """This set with ``fn`` added (a function of the same signature replaces the
        earlier one, as a redefinition does in Python)."""
        sig = _signature_text(fn)
        kept = [f for f in self.overloads if _signature_text(f) != sig]
        return FuncOverloads(kept + [fn])

    def __call__(self, *args, **kwargs):
        return self.overloads[-1].fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<{self.kind_name} {self.name}: {len(self.overloads)} overloads>"


def _signature_text(fn: Func) -> str:
    anns = getattr(fn.fn, "__annotations__", {})
    code = fn.fn.__code__
    return repr([(n, repr(anns.get(n))) for n in code.co_varnames[:code.co_argcount]])

