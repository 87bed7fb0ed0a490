"""Internal compiler errors: an unexpected exception becomes one report that blames warp_lab.

The compile pipeline raises :class:`~warp_lab.errors.KernelCompileError` (and its
subclasses) for the user's mistakes, :class:`~warp_lab.errors.ToolchainError` for
a missing or failing NVIDIA tool, and nothing else on purpose. Any other exception
escaping a stage is a bug of ours: :func:`internal_error` turns it into an
:class:`~warp_lab.errors.InternalCompilerError` naming the stage, the kernel and,
when it can tell, the Python line being compiled, and the caller chains the
original (``raise internal_error(...) from exc``). :func:`raised_by_user_code`
tells such a bug apart from an exception that the user's own Python code (a
captured object's ``__index__``, a module's ``__getattr__``) raised while the
front end evaluated it, which is the user's to fix.
"""

from __future__ import annotations

import ast
import os
import sysconfig

from warp_lab.errors import InternalCompilerError, source_label

__all__ = ["internal_error", "raised_by_user_code"]

#: warp_lab's package folder: frames under it are ours
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

#: folders of the standard library and installed packages: frames under them are
#: libraries we (or the user's code) called, neither the user's code nor ours
_LIBRARIES = tuple(sorted({os.path.abspath(p) + os.sep for k in ("stdlib", "platstdlib",
                                                                 "purelib", "platlib")
                           if (p := sysconfig.get_paths().get(k))}))


def _frames(exc: BaseException) -> list:
    """The frames of ``exc``'s traceback, innermost first."""
    out, tb = [], exc.__traceback__
    while tb is not None:
        out.append(tb.tb_frame)
        tb = tb.tb_next
    return out[::-1]


def _is_user_file(filename: str) -> bool:
    """Whether a code object's file is the user's (a script, a notebook cell): neither
    warp_lab's nor the standard library's or an installed package's."""
    if filename.startswith("<frozen"):
        return False
    path = os.path.abspath(filename) if not filename.startswith("<") else filename
    return not path.startswith(_PACKAGE) and not path.startswith(_LIBRARIES)


def raised_by_user_code(exc: BaseException) -> str:
    """Where the user's own code raised ``exc`` (``"In[3]:5"``), or ``""`` when no frame
    of its traceback is the user's (then the exception is ours, or a library's we called).

    Args:
        exc: an exception caught while compiling (its ``__traceback__`` is read).
    """
    for frame in _frames(exc):
        name = frame.f_code.co_filename
        if _is_user_file(name):
            return f"{source_label(name)}:{frame.f_lineno}"
    return ""


def _where(exc: BaseException):
    """``(source, node)`` being compiled when ``exc`` was raised, read from its traceback:
    the innermost AST node held by a frame (a statement or expression before a whole
    ``def``) and the :class:`~warp_lab.lang.kernel.Source` of the innermost typer or
    lowerer at or around that frame; ``None`` for what is not found."""
    from warp_lab.lang.kernel import Source

    source = node = None
    frames = _frames(exc)
    for pass_ in ("node", "def"):  # a def node only when no finer one is held
        for k, frame in enumerate(frames):
            local = list(frame.f_locals.values())
            hit = next((v for v in local if isinstance(v, ast.AST) and hasattr(v, "lineno")
                        and (pass_ == "def" or not isinstance(v, ast.FunctionDef))), None)
            if hit is None:
                continue
            for outer in frames[k:]:
                for v in outer.f_locals.values():
                    held = v if isinstance(v, Source) else getattr(v, "source", None)
                    if isinstance(held, Source):
                        return held, hit
            node = node or hit
        if node is not None:
            break
    for frame in frames:  # no node: at least the function
        for v in frame.f_locals.values():
            held = v if isinstance(v, Source) else getattr(v, "source", None)
            if isinstance(held, Source):
                return held, None
    return source, None


def internal_error(exc: BaseException, stage: str, kernel: str = "", request: str = "",
                   source=None, node=None) -> InternalCompilerError:
    """The :class:`~warp_lab.errors.InternalCompilerError` for ``exc``, a bug of ours.

    Args:
        exc: the unexpected exception (not a :class:`~warp_lab.errors.WarpLabError`).
        stage: the pipeline stage it escaped (``"frontend"``, ``"lower"``...).
        kernel: the kernel's name.
        request: how to reproduce it (the compile options).
        source: the :class:`~warp_lab.lang.kernel.Source` being compiled, and
        node: the AST node being compiled in it; both looked for in ``exc``'s
            traceback when not given.

    Returns:
        the error, its message ``"<ExceptionType>: <text>"``, located at ``node``'s
        line and character column when known; the caller chains ``exc``.
    """
    if source is None:
        source, found = _where(exc)
        node = node if node is not None else found
    filename, line, col, text = "", 0, 0, ""
    if source is not None:
        from warp_lab.compiler.frontend_parse import location

        if node is not None and hasattr(node, "lineno"):
            line, col = location(source, node)
        else:
            line = source.first_line
        filename, text = source.filename, source.line(line)
    return InternalCompilerError(f"{type(exc).__name__}: {exc}", stage, request, kernel=kernel,
                                 filename=filename, line=line, col=col, source_line=text)
