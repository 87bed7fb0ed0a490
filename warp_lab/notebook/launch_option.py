"""``%%warp_kernel --launch TEXT``: TEXT read as ``wl.launch`` keyword arguments, the launch
shape the views show, and simulator faults in cell terms.

Split from :mod:`warp_lab.notebook.magic`, which calls these; nothing here
imports IPython.
"""

from __future__ import annotations

import ast
import inspect
import re

from warp_lab.errors import LaunchError, SimulatorError

__all__ = ["launch_kwargs", "launch_shape", "launch_syntax", "at_cell_line", "unquote"]

#: ``--launch TEXT`` is read as the call ``_KWARGS(TEXT)``: a name no notebook binds, so a
#: notebook variable called ``dict`` does not stand in for the builtin that collects them
_KWARGS = "__warp_lab_launch_kwargs__"
_HOW = "write keyword arguments, e.g. dim=n, inputs=[x, y]"


def unquote(value: str) -> str:
    """``value`` stripped, without one pair of surrounding quotes: magic_arguments splits
    the line non-POSIX, so ``--show "source, ptx"`` keeps its quotes."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def unquote_int(value: str) -> int:
    """``int(unquote(value))``: a whole-number option's value, quoted or not
    (``--block-dim "128"``, as ``--arch "sm_80"``; ``{2 * warp}`` expanded inside quotes).

    Raises:
        ValueError: not an integer (argparse reports ``invalid int value``).
    """
    return int(unquote(value))


unquote_int.__name__ = "int"  # argparse names the type in its message: "invalid int value"


def launch_syntax(text: str, exc: SyntaxError) -> str:
    """A syntax error of ``--launch TEXT`` (compiled as a call, ``_KWARGS(TEXT)``) in terms
    of TEXT.

    Python reports an unclosed bracket of TEXT against the ``)`` warp_lab
    added ("closing parenthesis ')' does not match opening parenthesis '['"),
    so the brackets of TEXT are matched here first.
    """
    import io
    import tokenize

    stack = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.OP and tok.string in "([{":
                stack.append(tok)
            elif tok.type == tokenize.OP and tok.string in ")]}" and stack:
                stack.pop()
    except (tokenize.TokenError, SyntaxError):  # the unclosed bracket ends the input
        pass
    if stack:
        tok = stack[-1]
        return f"SyntaxError: '{tok.string}' at column {tok.start[1] + 1} was never closed"
    close, bracket = _unmatched_close(text)
    if close:   # Python names the line of the ")" warp_lab adds, or no place at all
        return f"SyntaxError: unmatched '{bracket}' at column {close}; {_HOW}"
    col = (exc.offset or 0) - len(_KWARGS) - 1 if exc.lineno == 1 else 0
    where = f" at column {col}" if 0 < col <= len(text) else ""
    dollar = re.search(r"\$\{?([A-Za-z_]\w*)", text)
    if dollar:  # IPython's $name, which --launch does not expand (it is no Python)
        return (f"SyntaxError: {exc.msg}{where}; {dollar.group(0)} at column "
                f"{dollar.start() + 1}: {_NO_EXPANSION}; write {dollar.group(1)}")
    return f"SyntaxError: {exc.msg}{where}; {_HOW}"


#: why ``$name`` and ``{name}`` in ``--launch TEXT`` are not what they are in other options
_NO_EXPANSION = ("--launch's text is Python evaluated in the notebook namespace, without "
                 "IPython's $name/{name} expansion")


def _expansion_sets(tree: ast.AST, text: str) -> None:
    """Refuse a one-name set display, ``{lx}`` or ``{cfg.n}``, in ``--launch TEXT``:
    IPython's ``{expression}`` expansion, which ``--launch`` does not do (no
    ``wl.launch`` argument is a set; evaluated it was an ``unhashable type`` error or a
    set where a list or a number belongs).

    Raises:
        LaunchError: naming the set's column and what to write instead.
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.Set) and len(node.elts) == 1 and \
                isinstance(node.elts[0], (ast.Name, ast.Attribute)) and node.lineno == 1:
            col = node.col_offset - len(_KWARGS)  # TEXT starts after "_KWARGS("
            inner = ast.unparse(node.elts[0])
            raise LaunchError(f"--launch \"{text}\": {{{inner}}} at column {col} is a set: "
                              f"{_NO_EXPANSION}; write {inner}")


def _unmatched_close(text: str) -> tuple[int, str]:
    """The column (from 1) and text of the first ``)``, ``]`` or ``}`` of ``text`` that
    closes no bracket of its own (``(0, "")`` when none): ``dim=4) + (1`` would close
    the call warp_lab wraps TEXT in."""
    import io
    import tokenize

    depth = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.OP and tok.string in "([{":
                depth += 1
            elif tok.type == tokenize.OP and tok.string in ")]}":
                if depth == 0:
                    return tok.start[1] + 1, tok.string
                depth -= 1
    except (tokenize.TokenError, SyntaxError):
        pass
    return 0, ""


def _compile(text: str):
    """``--launch TEXT`` compiled as ``_KWARGS(TEXT)``, after checking that TEXT is the
    whole argument list of that call: keyword arguments (``**mapping`` too), nothing
    outside it (a ``)`` of TEXT closing the call early, a trailing ``#`` comment hiding
    the closing one).

    Raises:
        LaunchError: a syntax error, a positional argument, a ``)`` closing no bracket of
            TEXT, IPython's ``$name`` or ``{name}`` (not expanded here); located by TEXT's
            column; or a keyword given twice (``compile`` refuses it, not the parser).
    """
    try:
        # the newline ends a comment TEXT may end with, which would hide the ")"
        tree = ast.parse(f"{_KWARGS}({text}\n)", "<--launch>", "eval")
    except SyntaxError as exc:
        raise LaunchError(f"--launch \"{text}\": {launch_syntax(text, exc)}") from None
    call = tree.body
    whole = isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and \
        call.func.id == _KWARGS and (call.end_lineno, call.end_col_offset) == (2, 1)
    if not whole:
        col, bracket = _unmatched_close(text)
        where = f"'{bracket}' at column {col}" if col else "')'"
        raise LaunchError(f"--launch \"{text}\": SyntaxError: unmatched {where}; {_HOW}")
    if call.args:
        arg = call.args[0]
        col = arg.col_offset - len(_KWARGS)
        raise LaunchError(f"--launch \"{text}\": {ast.unparse(arg)} at column {col} is not "
                          f"key=value; {_HOW}")
    _expansion_sets(tree, text)
    try:
        return compile(tree, "<--launch>", "eval")
    except SyntaxError as exc:  # what the parser lets through: dim=4, dim=8 (repeated)
        raise LaunchError(f"--launch \"{text}\": SyntaxError: {exc.msg}; {_HOW}") from None


def launch_kwargs(opts: dict, checks: list[str], namespace: dict) -> dict:
    """The keyword arguments of ``wl.launch`` that ``--launch TEXT`` and the options give.

    Args:
        opts: the magic's options in force (``launch`` the TEXT, quotes kept; ``device``,
            ``repeat``, ``shared_mem``, ``block_dim`` the defaults it does not set).
        checks: the ``--check`` names (the barrier check is added to them).
        namespace: where TEXT is evaluated (the notebook's).

    Raises:
        LaunchError: TEXT is not ``key=value, ...`` Python, raises when evaluated in
            the notebook namespace, or names a keyword ``wl.launch`` does not take.
    """
    from warp_lab.runtime.launch import launch

    text = unquote(opts["launch"])
    code = _compile(text)
    try:
        kwargs = eval(code, namespace, {_KWARGS: dict})  # noqa: S307
    except Exception as exc:  # the user's expression: report it as theirs
        raise LaunchError(f"--launch \"{text}\": {type(exc).__name__}: {exc}") from None

    known = [p for p in inspect.signature(launch).parameters if p != "kernel"]
    unknown = [k for k in kwargs if k not in known]
    if unknown:  # the kernel is the cell's own; a typo such as dims= is no TypeError wall
        raise LaunchError(f"--launch \"{text}\": unknown keyword(s) "
                          f"{', '.join(map(repr, unknown))}; wl.launch takes "
                          f"{', '.join(known)}")
    kwargs.setdefault("device", opts["device"])
    kwargs.setdefault("repeat", opts["repeat"])
    kwargs.setdefault("shared_mem", opts["shared_mem"])
    if "grid" not in kwargs:
        kwargs.setdefault("block_dim", opts["block_dim"])
    if checks:
        kwargs.setdefault("checks", ("barrier", *checks))
    return kwargs


def launch_shape(kwargs: dict) -> dict:
    """``{"block_dim": threads per block, "shared_mem": bytes}`` of a launch, for the
    occupancy the views show (each key only when ``kwargs`` gives a usable value).

    ``block=(x, y, z)`` (with ``grid=``) or ``block_dim=(x, y, z)`` give ``x*y*z``
    threads; ``block_dim=n`` is the block's thread count for any ``dim`` (``wl.launch``
    shapes 2-D/3-D blocks from it). Values ``wl.launch`` will refuse are left out
    (the options' values stay, and the launch reports them).
    """
    def count(v) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v > 0

    out = {}
    shape = kwargs.get("block") if "grid" in kwargs else kwargs.get("block_dim")
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if 1 <= len(dims) <= 3 and all(map(count, dims)):
        threads = 1
        for d in dims:
            threads *= d
        if threads <= 1024:
            out["block_dim"] = threads
    shared = kwargs.get("shared_mem")
    if count(shared) or shared == 0:
        out["shared_mem"] = shared
    return out


def at_cell_line(exc: SimulatorError, ck) -> SimulatorError:
    """A simulator fault of a ``--launch`` with the cell line its PTX line came from.

    Args:
        exc: the simulator's error (``ptx_line``, ``source_line``).
        ck: the :class:`~warp_lab.compiler.artifact.CompiledKernel` launched.

    Without memcheck the simulator stops at an illegal access with only the
    PTX line; its ``.loc`` gives the Python line and the cell (a device
    function's own cell when it was defined in another one), and in the magic
    the way to the details is ``--check``, not ``checks=``.
    """
    from warp_lab.compiler.source_lines import cell_label, source_line_text
    from warp_lab.runtime.sim_backend import kernel_module

    message = str(exc).replace("(enable memcheck for block/thread details)",
                               "(add memcheck to --check for the block and thread)")
    file, line = ck.source.filename, exc.source_line
    if exc.ptx_line:  # its .loc: the kernel's cell, or a device function's other cell
        module = kernel_module(ck)
        ins = next((i for i in module.code if i.line == exc.ptx_line), None)
        where = module.source_of(ins) if ins is not None else ("", 0)
        if where[1]:
            file, line = where
    if line:
        message += (f"\n  at {cell_label(file)} line {line}: "
                    f"{source_line_text(ck, line, file)}")
    return SimulatorError(message, ptx_line=exc.ptx_line, source_line=line or 0)
