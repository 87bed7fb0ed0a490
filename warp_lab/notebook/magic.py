"""The ``%%warp_kernel`` cell magic and the ``%warp_kernel`` line magic.

Load with ``%load_ext warp_lab``. A ``%%warp_kernel`` cell holds ordinary
Python: its top-level functions are compiled as kernels (``@wl.kernel``) or
device functions (``@wl.func``); the decorators are optional: an
undecorated top-level function is a kernel unless another function in the
cell calls it or it returns a value, then it is a device function. Everything the cell defines is
bound in the notebook's namespace, and the cell's output is the compiled
kernel's view: Python | LLVM IR | PTX | SASS side by side, the resource card,
optionally the occupancy widget and a launch's results.

Line numbers in every message are the cell's own (the ``%%warp_kernel``
line is line 1): the cell is registered in :mod:`linecache` under
``<cell N>`` (N the execution count) so :func:`inspect.getsource` reads it.

The line magic sets defaults for later cells (``%warp_kernel --arch sm_80
--show ptx,resources``); with no arguments it prints the defaults in force.
"""

from __future__ import annotations

import __future__
import ast
import dataclasses
import html
import linecache

from IPython.core import magic_arguments
from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.display import display

from warp_lab.errors import (KernelCompileError, LaunchError, LaunchInterrupted, SimulatorError,
                             WarpLabError, unreadable_character)
from warp_lab.lang.kernel import Func, Kernel, python_lines
from warp_lab.notebook import launch_option
from warp_lab.notebook.bundle import KernelView
from warp_lab.notebook.cell_defs import (DEFINED, classify_functions, describe,
                                         is_kernel_decorator, rebinding_line, recording_defs,
                                         returns_value, why_no_kernel)
from warp_lab.notebook.launch_option import unquote, unquote_int
from warp_lab.notebook.panes import SHOW_NAMES
from warp_lab.options import (KERNEL_OPTION_DEFAULTS, KERNEL_OPTIONS, SUPPORTED_ARCHS,
                              check_options)

__all__ = ["WarpKernelMagics", "classify_functions", "SHOW_CHOICES", "BUILTIN_DEFAULTS"]

#: ``--show``/``--hide`` names: the panes' (:data:`warp_lab.notebook.panes.SHOW_NAMES`),
#: then the resource card and the occupancy widget
SHOW_CHOICES = (*SHOW_NAMES, "resources", "occupancy")
CHECK_CHOICES = ("memcheck", "racecheck", "initcheck")

#: the options in force when neither the cell nor the line magic sets them: the compile
#: options' defaults (the arch by default the device's), then the view's and --launch's
BUILTIN_DEFAULTS = {
    **KERNEL_OPTION_DEFAULTS, "arch": None, "block_dim": 256,
    "device": "auto", "show": "source,llvm,ptx,sass,resources", "hide": "", "launch": None,
    "repeat": 1, "check": "", "no_cache": False, "diff": None, "shared_mem": 0,
}


def _split(value: str | None, choices, option: str) -> list[str]:
    """The comma list of an option; quotes around it (``--show "source, ptx"``) are dropped."""
    items = [x.strip() for x in unquote(value or "").split(",") if x.strip()]
    bad = [x for x in items if x not in choices]
    if bad:
        raise UsageError(f"{option}: unknown {', '.join(map(repr, bad))}; "
                         f"choose from {', '.join(choices)}")
    return list(dict.fromkeys(items))   # once each: --show ptx,ptx drew the PTX pane twice


def _check_options(opts: dict) -> None:
    """Refuse option values argparse lets through (as a one-line UsageError, no traceback).

    ``--arch`` must be one of :data:`warp_lab.options.SUPPORTED_ARCHS`;
    ``--maxrregcount`` 1..255 (255 registers per thread is the limit of every
    architecture, CUDA Programming Guide "Technical Specifications per Compute
    Capability"); ``--repeat`` positive; ``--block-dim`` 1..1024 (threads per
    block, the same table); ``--shared-mem`` 0 or more bytes, at most the arch's
    opt-in limit per block once the arch is known (``sharedMemPerBlockOptin``,
    same table; the kernel's static shared memory, known after the compile,
    is checked by the occupancy model and ``wl.launch``).
    """
    for name in ("arch", "maxrregcount"):
        try:
            check_options(**{name: opts.get(name)})
        except ValueError as exc:
            raise UsageError(f"--{name} {opts[name]}: {exc}") from None
    for name in ("repeat", "block_dim"):
        value = opts.get(name)
        if value is not None and value < 1:
            raise UsageError(f"--{name.replace('_', '-')} {value}: must be a positive int")
    shared_mem = opts.get("shared_mem")
    if shared_mem is not None and shared_mem < 0:
        raise UsageError(f"--shared-mem {shared_mem}: must be a number of bytes, 0 or more")
    if shared_mem and opts.get("arch"):
        from warp_lab.analysis import arch_properties

        optin = arch_properties(opts["arch"]).shared_mem_per_block_optin
        if shared_mem > optin:  # no launch can have it (the widget's box would clamp it)
            raise UsageError(f"--shared-mem {shared_mem}: {opts['arch']} allows at most "
                             f"{optin} bytes ({optin // 1024} KB) of shared memory per block")
    if shared_mem and not opts.get("arch"):  # the line magic: no arch can launch it
        from warp_lab.analysis import arch_properties

        most = max(arch_properties(a).shared_mem_per_block_optin for a in SUPPORTED_ARCHS)
        if shared_mem > most:
            raise UsageError(f"--shared-mem {shared_mem}: no architecture allows more than "
                             f"{most} bytes ({most // 1024} KB) of shared memory per block")
    block_dim = opts.get("block_dim")
    if block_dim is not None and block_dim > 1024:  # the occupancy view would show 0 %
        raise UsageError(f"--block-dim {block_dim}: CUDA allows at most 1024 threads per block")
    # the comma lists, so that the line magic refuses a default every later cell would refuse
    for name, choices in (("show", SHOW_CHOICES), ("hide", SHOW_CHOICES),
                          ("check", CHECK_CHOICES)):
        if opts.get(name):
            _split(opts[name], choices, f"--{name}")


def _defaults_text(opts: dict) -> str:
    """The options in force as lines one could type (``--arch sm_80``, ``--fast-math``), then
    one line naming the options that are off or not set."""
    lines, unset = [], []
    for key, value in opts.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            lines.append(flag)
        elif value is None or value is False or isinstance(value, str) \
                and not unquote(value).strip():  # --hide '' and --launch "" set nothing
            unset.append(flag)
        else:
            lines.append(f"{flag} {value}")
    if unset:
        lines.append("(off or not set: " + ", ".join(unset) + ")")
    return "\n".join(lines)


#: the line magic's usage, added under the cell magic's in ``%%warp_kernel?``
LINE_FORM = ("  %warp_kernel [the same options]   (line magic: defaults for later cells;\n"
             "                                    without options, prints the defaults in force)")


def _with_line_form(doc: str) -> str:
    """``doc`` (the help IPython's ``magic_arguments`` built: ``::``, the usage lines, a blank
    line, the docstring, the options) with :data:`LINE_FORM` after the usage lines."""
    head = doc.find("\n\n", doc.find("::") + 4)
    return doc if head < 0 else doc[:head] + "\n" + LINE_FORM + doc[head:]


def _too_deep(filename: str, line: int, col: int, text: str) -> KernelCompileError:
    return KernelCompileError("expression too deeply nested (Python's compiler ran out of "
                              "recursion depth); split it into several statements",
                              filename, line, col, text)


def _deepest_statement(tree: ast.AST) -> ast.AST | None:
    """The statement holding the most deeply nested node (walked without recursion)."""
    best, best_depth = None, -1
    stack = [(tree, 0, None)]
    while stack:
        node, depth, stmt = stack.pop()
        if isinstance(node, ast.stmt):
            stmt = node
        if depth > best_depth and stmt is not None:
            best, best_depth = stmt, depth
        stack.extend((child, depth + 1, stmt) for child in ast.iter_child_nodes(node))
    return best


def _compile_cell(tree: ast.Module, filename: str, code_text: str):
    """``compile(tree)``, with its own errors as :class:`KernelCompileError` at the cell line.

    The cell's annotations are deferred (``from __future__ import annotations``,
    PEP 563): the compile evaluates a kernel's, so a bad one is a located compile error
    rather than a traceback at the ``def``; a string annotation is still evaluated
    (:func:`~warp_lab.compiler.frontend_parse.evaluate_annotation`).

    ``ast.parse`` accepts some cells that ``compile`` refuses: ``break``
    outside a loop, ``await`` outside an async function, ``nonlocal`` of a
    parameter (SyntaxError from the symbol table / code generator), and very
    deeply nested expressions (RecursionError).

    Raises:
        KernelCompileError: with the cell's line and column (1-based).
    """
    try:
        # annotations deferred on purpose (PEP 563), not inherited from this module: a bad
        # kernel annotation (wl.array(ndim=9)) is then a compile error at its cell column
        return compile(tree, filename, "exec", flags=__future__.annotations.compiler_flag,
                       dont_inherit=True)
    except SyntaxError as exc:  # compiled from a tree: exc.text is None, take the cell's line
        lines = python_lines(code_text)
        text = exc.text or (lines[exc.lineno - 1] if 0 < (exc.lineno or 0) <= len(lines) else "")
        raise KernelCompileError(f"syntax error: {exc.msg}", filename, exc.lineno or 0,
                                 exc.offset or 0, text.rstrip("\n")) from None
    except RecursionError:
        stmt = _deepest_statement(tree)
        lines = python_lines(code_text)
        line = getattr(stmt, "lineno", 1)
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        raise _too_deep(filename, line, getattr(stmt, "col_offset", 0) + 1, text) from None


def _device_arch(device: str) -> str:
    """The architecture of the device a launch would use (``sm_90`` for the simulator)."""
    from warp_lab.runtime.device import SIM_ARCH, get_device

    try:
        return get_device(device).arch
    except WarpLabError:  # "cuda" asked for without a GPU: the launch will say so
        return SIM_ARCH


#: the SASS pane's words while nvdisasm runs (the pane fills in when it ends)
SASS_PENDING = "nvdisasm is disassembling the cubin: the SASS pane fills in when it ends"


class _ShownKernelView(KernelView):
    """A :class:`~warp_lab.notebook.bundle.KernelView` the magic has displayed already
    (in a Jupyter kernel, where its SASS pane came later by a display update).

    Returned as the cell's value, IPython's display hook calls ``_ipython_display_``
    instead of publishing the view as the cell's result, so it is not shown twice (the
    hook still binds it to ``_`` and ``Out``); displayed again later (``display(view)``,
    or a cell ending with it) it shows as any view.
    """

    def __init__(self, ck, **view_options):
        super().__init__(ck, **view_options)
        self._shown = True

    def _ipython_display_(self):
        if self._shown:
            self._shown = False
            return
        display(self._repr_mimebundle_(), raw=True)


def _note(text: str) -> None:
    """Show one line of explanation (italic, the colour of a missing pane) as cell output."""
    display({"text/plain": text, "text/html": f'<div class="wl-missing" style="color:'
             f'#a60;font-style:italic">{html.escape(text)}</div>'}, raw=True)


@magics_class
class WarpKernelMagics(Magics):
    """IPython magics of warp_lab (registered by ``%load_ext warp_lab``)."""

    def __init__(self, shell):
        super().__init__(shell)
        self.defaults: dict = {}
        self.previous: dict = {}  # kernel name -> last CompiledKernel (for --diff previous)
        self.cell_texts: dict[str, str] = {}

    # named "%warp_kernel" so that the usage line IPython writes ("%" + name) reads
    # "%%warp_kernel [--arch ARCH] ...", the cell magic; _with_line_form adds the line magic
    @magic_arguments.magic_arguments(name="%warp_kernel")
    @magic_arguments.argument("--arch", type=unquote,
                              help="target SM, e.g. sm_75, sm_80, sm_90 (default: the "
                              "GPU --device selects, sm_90 on the simulator)")
    @magic_arguments.argument("--opt", type=unquote_int, choices=range(4),
                              help="LLVM optimisation level 0..3 (default 3)")
    @magic_arguments.argument("--fast-math", action="store_const", const=True, dest="fast_math",
                              help="fast-math flags, flush-to-zero, approximate division")
    @magic_arguments.argument("--debug", action="store_const", const=True,
                              help="compile asserts, bounds checks and the range() step "
                                   "check into the kernel")
    @magic_arguments.argument("--maxrregcount", type=unquote_int,
                              help="cap on registers per thread passed to ptxas")
    @magic_arguments.argument("--block-dim", type=unquote_int, dest="block_dim",
                              help="threads per block for the occupancy view and --launch "
                                   "(default 256)")
    @magic_arguments.argument("--shared-mem", type=unquote_int, dest="shared_mem",
                              help="dynamic shared memory per block in bytes "
                                   "(wl.dynamic_shared_array) for the occupancy view and "
                                   "--launch (default 0)")
    @magic_arguments.argument("--device", type=unquote, choices=("sim", "cuda", "auto"),
                              help="where --launch runs: the CPU simulator, the GPU, or the GPU "
                                   "when present (auto, the default)")
    @magic_arguments.argument("--show", help="comma list of views: " + ",".join(SHOW_CHOICES)
                              + " (default source,llvm,ptx,sass,resources)")
    @magic_arguments.argument("--hide", help="comma list of views to leave out")
    @magic_arguments.argument("--launch", help='launch the last kernel of the cell, e.g. '
                              '"dim=n, inputs=[x, y, 2.0]", evaluated in the notebook namespace '
                              '(--launch "" launches nothing, over a line-magic default)')
    @magic_arguments.argument("--repeat", type=unquote_int,
                              help="timed launches of --launch (default 1); the arrays are "
                                   "restored between them, so each starts from the same "
                                   "inputs: x[i] += 1 with --repeat 3 ends with x + 1")
    @magic_arguments.argument("--check", help="simulator checks for --launch: comma list of "
                              "memcheck,racecheck,initcheck (the barrier check always runs; "
                              "default memcheck, and racecheck,initcheck too when the kernel "
                              "uses shared memory)")
    @magic_arguments.argument("--no-cache", action="store_const", const=True, dest="no_cache",
                              help="recompile even when the kernel is in the compile cache")
    @magic_arguments.argument("--diff", type=unquote, choices=("previous",),
                              help="show what changed since this kernel's previous compile")
    @no_var_expand  # done per option by _expand_line: --launch's text is Python as written
    @line_cell_magic
    def warp_kernel(self, line: str, cell: str | None = None):
        """Compile the functions of a cell into GPU kernels and show what they become.

        Usage::

            %%warp_kernel --arch sm_80 --show ptx,sass,resources
            def saxpy(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), a: float):
                i = wl.tid()
                y[i] = a * x[i] + y[i]

            %%warp_kernel --launch "dim=n, inputs=[x, y, 2.0]" --check memcheck
            ...

            %warp_kernel --arch sm_75 --opt 2     # defaults for later cells
            %warp_kernel                          # print the defaults in force

            %%warp_kernel --arch $arch --block-dim {2 * warp}   # notebook variables

        IPython's expansion of ``$name`` and ``{expression}`` (as in any magic's line)
        applies to every option but ``--launch``, whose text is Python evaluated in the
        notebook namespace as written: ``--launch "dim=n, inputs=lx"`` (``{lx}`` there
        would be a set, and is refused with a message saying to write ``lx``).

        Undecorated top-level functions are kernels unless another function in
        the cell calls them or they return a value (then they are device
        functions). Kernels and
        functions are bound in the notebook namespace, and a kernel keeps the
        compile options chosen here or with the line magic (``--arch``,
        ``--opt``, ``--fast-math``, ``--debug``, ``--maxrregcount``): a later
        ``wl.launch``/``wl.compile`` of it uses them unless given others (a GPU
        launch compiles for the GPU's arch). ``--launch`` binds the
        launch result as ``_launch`` (a simulator launch running longer than
        0.5 s shows a progress bar of simulated blocks; the resource card and
        the occupancy widget then describe that launch: its ``block_dim`` or
        ``block`` and ``shared_mem``). Compile errors show as a box with the
        cell line and a caret; a cell without a kernel says so. A kernel whose name
        the cell rebinds or deletes after its ``def`` is still the one shown, with a
        note naming the line; of two ``def`` statements of one name, the last.

        Option values may be quoted (``--arch "sm_80"``). The magic expands IPython's
        ``{expression}`` and ``$name`` in every option but ``--launch`` (``--arch $arch
        --block-dim {2 * warp}``; ``$$`` and ``{{ }}`` keep the characters); a line that
        cannot be expanded stays as typed. ``--launch`` TEXT is Python evaluated in the
        notebook as typed, so write names there as they are (``inputs=[x, a]``): a
        ``{a}`` or ``$a`` there is refused with a message saying to write ``a``.
        """
        __tracebackhide__ = True  # an exception of the cell's own code shows the cell's frames
        try:
            args = self.warp_kernel.parser.parse_args(self._expand_line(line))
        except ValueError as exc:  # shlex: "No closing quotation" for --launch "dim=4
            raise UsageError(f"%%warp_kernel {line.strip()}: {exc}") from None
        given = {k: v for k, v in vars(args).items() if v is not None}
        _check_options(given)
        if cell is None:
            self.defaults.update(given)
            if not given:
                print(_defaults_text({**BUILTIN_DEFAULTS, **self.defaults}))
            return None
        opts = {**BUILTIN_DEFAULTS, **self.defaults, **given}
        # the compile options the user chose (here or with the line magic), which the cell's
        # kernels keep for wl.compile/wl.launch elsewhere in the notebook (Kernel.options)
        chosen = {**self.defaults, **given}
        carried = {k: chosen[k] for k in KERNEL_OPTIONS if chosen.get(k) is not None}
        if not unquote(opts["launch"] or "").strip():  # --launch "": no launch (over a default)
            opts["launch"] = None
        if opts["arch"] is None:
            opts["arch"] = _device_arch(opts["device"])
        _check_options(opts)  # a GPU's own arch may be one warp_lab cannot target
        return self._run_cell(line, cell, opts, carried)

    warp_kernel.__doc__ = _with_line_form(warp_kernel.__doc__)

    def _expand_line(self, line: str) -> list[str]:
        """The magic line's arguments, split as ``magic_arguments`` splits them, after
        IPython's variable expansion of all but ``--launch``'s value: ``$name`` and
        ``{expression}`` from the notebook namespace, ``$$`` and ``{{ }}`` for the
        characters themselves (``InteractiveShell.var_expand``'s ``DollarFormatter``, on
        the line as IPython does; a line it cannot expand stays as typed, as there).

        ``--launch TEXT`` is Python evaluated in the notebook namespace
        (:func:`~warp_lab.notebook.launch_option.launch_kwargs`): IPython opts such magics
        out of expansion (``@no_var_expand``, "when the magic executes Python code"); in
        TEXT, ``inputs={lx}`` became the arrays' printout and ``{'k': 1}`` stopped the
        whole line's expansion. TEXT is passed on as typed.

        Raises:
            ValueError: unbalanced quotes (``arg_split``'s ``No closing quotation``).
        """
        from IPython.utils.process import arg_split
        from IPython.utils.text import DollarFormatter

        kept: dict[str, str] = {}  # placeholder -> a --launch value (or --launch=TEXT) as typed
        parts, pos, value_next = [], 0, False
        for token in arg_split(line, strict=True):
            at = line.index(token, pos)  # non-POSIX splitting keeps each token as typed
            name = token.split("=", 1)[0]
            is_flag = len(name) > 2 and "--launch".startswith(name)  # argparse abbreviates
            if value_next or (is_flag and "=" in token):
                key = f"__warp_lab_launch_{len(kept)}__"
                kept[key] = token
                parts.append(line[pos:at] + key)
            else:
                parts.append(line[pos:at + len(token)])
            value_next = is_flag and "=" not in token
            pos = at + len(token)
        masked = "".join(parts) + line[pos:]
        try:
            expanded = DollarFormatter().vformat(masked, args=[], kwargs=self.shell.user_ns)
        except Exception:  # noqa: BLE001 - as IPython: a line it cannot expand stays
            expanded = masked
        return [kept.get(token, token) for token in arg_split(expanded, strict=True)]

    # -- the cell ---------------------------------------------------------------------------

    def _execution_count(self) -> int:
        """The ``In [N]`` number of the cell being run.

        IPython 9 increments ``shell.execution_count`` before it runs a cell
        (IPython 8 after), so the count of the result being built is the one
        the notebook shows; outside a cell, the next count.
        """
        count = getattr(getattr(self.shell.displayhook, "exec_result", None),
                        "execution_count", None)
        return count if isinstance(count, int) else self.shell.execution_count

    def _cell_name(self, full_text: str) -> str:
        count = self._execution_count()
        name, k = f"<cell {count}>", 1
        while name in self.cell_texts and self.cell_texts[name] != full_text:
            k += 1
            name = f"<cell {count}.{k}>"
        self.cell_texts[name] = full_text
        return name

    def _run_cell(self, line: str, cell: str, opts: dict, carried: dict):
        __tracebackhide__ = True
        show = _split(opts["show"], SHOW_CHOICES, "--show")
        hide = set(_split(opts["hide"], SHOW_CHOICES, "--hide"))
        show = [s for s in show if s not in hide]
        checks = _split(opts["check"], CHECK_CHOICES, "--check")

        full_text = f"%%warp_kernel {line}".rstrip() + "\n" + cell
        filename = self._cell_name(full_text)
        linecache.cache[filename] = (len(full_text), None, python_lines(full_text, keepends=True),
                                     filename)
        code_text = "\n" + cell  # line 1 is the magic line: code lines keep the cell's numbers
        unreadable = unreadable_character(code_text, filename)
        if unreadable is not None:
            raise unreadable
        try:
            tree = ast.parse(code_text, filename)
        except SyntaxError as exc:
            raise KernelCompileError(f"syntax error: {exc.msg}", filename, exc.lineno or 0,
                                     exc.offset or 0, (exc.text or "").rstrip("\n")) from None
        except RecursionError:  # no tree to point into: the cell's longest line is the suspect
            lines = python_lines(code_text)
            k = max(range(len(lines)), key=lambda i: len(lines[i]))
            indent = len(lines[k]) - len(lines[k].lstrip())
            raise _too_deep(filename, k + 1, indent + 1, lines[k]) from None
        kinds = classify_functions(tree)
        ns = self.shell.user_ns
        code = _compile_cell(recording_defs(tree), filename, code_text)
        for node in tree.body:
            if isinstance(node, ast.AsyncFunctionDef) and (
                    not node.decorator_list or any(map(is_kernel_decorator, node.decorator_list))):
                raise KernelCompileError("async functions cannot be kernels or device functions",
                                         filename, node.lineno, node.col_offset + 1,
                                         python_lines(code_text)[node.lineno - 1],
                                         "write def instead of async def")
        defined: dict[int, object] = {}
        ns[DEFINED] = defined
        try:
            exec(code, ns)  # noqa: S102 - the user's own cell
        finally:
            ns.pop(DEFINED, None)
        kernels, notes = [], []
        defs = [(i, node) for i, node in enumerate(tree.body) if isinstance(node, ast.FunctionDef)]
        last_def = {node.name: i for i, node in defs}
        for i, node in defs:
            if last_def[node.name] != i or i not in defined:  # a later def of the name wins
                continue
            obj = made = defined[i]
            if node.name in kinds and callable(obj) and not isinstance(obj, (Kernel, Func)):
                obj = (Kernel if kinds[node.name] == "kernel" else Func)(obj)
            now = ns.get(node.name, DEFINED)
            if isinstance(now, (Kernel, Func)) and now.fn is made:  # k = wl.kernel(debug=1)(k)
                obj = now
            rebound = now is not made and now is not obj
            if not rebound:
                ns[node.name] = obj
            if isinstance(obj, Kernel):
                # the cell's options, over an @wl.kernel(...)'s own where both set one
                obj.options.update(carried)
                kernels.append(obj)
                if rebound:
                    at = rebinding_line(tree, i, node.name)
                    notes.append(
                        f"{node.name} is {'deleted' if now is DEFINED else 'rebound'}"
                        f"{f' at line {at}' if at else ''} after its def at line "
                        f"{node.lineno}"
                        f"{'' if now is DEFINED else f' (it is now {describe(now)})'}: shown "
                        f"is the kernel that def made, which the notebook's "
                        f"{node.name} no longer names")
        for note in notes:
            _note(note)
        if not kernels:  # a word instead of nothing (a student who wrote only a helper)
            funcs = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)
                     and isinstance(ns.get(n.name), Func)]
            if funcs:
                one = len(funcs) == 1
                returning = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)
                             and n.name in funcs and returns_value(n)]
                why_func = (f"; {', '.join(returning)} returns a value, which a kernel cannot "
                            "(a kernel writes its results into an output array: "
                            "out[i] = ... instead of return ...)") if returning else ""
                _note(f"no kernel in this cell: {', '.join(funcs)} "
                      f"{'is a device function' if one else 'are device functions'}, compiled "
                      f"into the kernels that call {'it' if one else 'them'}{why_func}")
                return None
            why = why_no_kernel(tree, ns)  # only now: what the cell made instead
            _note(f"no kernel in this cell: {'; '.join(why)}" if why else
                  "no kernel in this cell: %%warp_kernel compiles the functions a cell defines")
            return None
        launch_kwargs = launch_error = None
        view_opts = opts
        if opts["launch"]:  # read before the views, whose card and widget show this launch
            try:
                launch_kwargs = launch_option.launch_kwargs(opts, checks, self.shell.user_ns)
            except LaunchError as exc:  # raised after the views: a compile error comes first
                launch_error = exc
            else:
                view_opts = {**opts, **launch_option.launch_shape(launch_kwargs)}
        for k in kernels[:-1]:  # shown as each compiles: an error in a later one keeps them
            view = self._compile_and_view(k, view_opts, show)
            if not isinstance(view, _ShownKernelView):
                display(view)
        last = self._compile_and_view(kernels[-1], view_opts, show)
        if opts["launch"]:
            if not isinstance(last, _ShownKernelView):
                display(last)
            if launch_error is not None:
                raise launch_error
            return self._launch(last.compiled, launch_kwargs)
        return last

    def _updates_displays(self) -> bool:
        """Whether the front end replaces a display in place (``update_display_data``): a
        Jupyter kernel's (ipykernel's shell has a ``kernel``); a terminal IPython would
        print the view twice."""
        return getattr(self.shell, "kernel", None) is not None

    def _compile_and_view(self, kernel: Kernel, opts: dict, show: list[str]):
        """Compile ``kernel`` and make its view.

        In a Jupyter kernel, a view with a SASS pane or register columns is shown before
        nvdisasm ends: the compile stops after ptxas (``sass=False``, 10-60 ms), nvdisasm
        (0.3-0.8 s, :func:`~warp_lab.compiler.pipeline.add_disassembly`) starts in a
        thread, the other panes are displayed (``display_id``) while it runs, and its
        output replaces that display with the whole view (``update_display``: JupyterLab
        redraws the output in place, the saved notebook and nbclient's run keep the
        final one). The view returned then is a :class:`_ShownKernelView`.
        """
        from warp_lab.compiler.pipeline import add_disassembly, compile as compile_kernel, \
            needs_disassembly

        heat_wanted = "source" in show or "sass" in show
        later = self._updates_displays() and (heat_wanted or "sass" in show)
        # the kernel's options: the cell's choices (Kernel.options), an @wl.kernel(...)'s own
        # where the cell chose none, and the defaults; the arch by default the device's
        ck = compile_kernel(kernel, arch=None if "arch" in kernel.options else opts["arch"],
                            cache=not opts["no_cache"], sass=not later,
                            life_ranges=heat_wanted and not later)
        pending = None
        if later and needs_disassembly(ck, life_ranges=heat_wanted):
            import concurrent.futures
            pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="warp_lab-sass")
            pending = pool.submit(add_disassembly, ck, life_ranges=heat_wanted,
                                  cache=not opts["no_cache"])
            pool.shutdown(wait=False)
        occ = None
        if ck.resources is not None and ("occupancy" in show or "resources" in show):
            from warp_lab.analysis import launch_dynamic_shared_optin, occupancy
            # above 48 KB wl.launch opts the kernel in, as the occupancy widget assumes
            occ = occupancy(ck, block_size=opts["block_dim"],
                            dynamic_shared_mem=opts["shared_mem"],
                            max_dynamic_shared_mem=launch_dynamic_shared_optin(
                                ck.options.arch, opts["shared_mem"], ck.resources.shared))
        if "occupancy" in show and ck.resources is not None:
            from warp_lab.notebook.widgets import occupancy_widget
            display(occupancy_widget(ck, arch=ck.options.arch, block_size=opts["block_dim"],
                                     dynamic_shared_mem=opts["shared_mem"]))
        if pending is None:
            view = self._view(kernel, ck, opts, show, occ, heat_wanted)
            if not later:
                return view
            display(view._repr_mimebundle_(), raw=True)
            return _ShownKernelView(ck, **view.view_options)
        early = dataclasses.replace(ck, missing={**ck.missing, "sass": SASS_PENDING})
        handle = display(_ShownKernelView(early, show=tuple(show), occupancy=occ)
                         ._repr_mimebundle_(), raw=True, display_id=True)
        ck = pending.result()
        view = self._view(kernel, ck, opts, show, occ, heat_wanted)
        handle.update(view._repr_mimebundle_(), raw=True)
        return _ShownKernelView(ck, **view.view_options)

    def _view(self, kernel: Kernel, ck, opts: dict, show: list[str], occ, heat_wanted: bool):
        """The :class:`~warp_lab.notebook.bundle.KernelView` of a whole compile: the
        ``--diff previous`` box and the register heat columns added (recorded as the
        kernel's previous compile). Outside a Jupyter kernel (a terminal IPython) a
        :class:`~warp_lab.notebook.terminal.TerminalKernelView`, whose ``text/plain`` is
        the panes' text, coloured when the terminal takes it."""
        changes = None
        if opts["diff"] == "previous":   # the view's diff table (HTML and bundle alike)
            from warp_lab.notebook.diff import diff
            prev = self.previous.get(kernel.name)
            changes = diff(prev, ck) if prev is not None else \
                "no earlier compile of this kernel"
        self.previous[kernel.name] = ck
        heat = pane_heat = None
        if heat_wanted:
            from warp_lab.notebook.heat import register_heat
            regs = register_heat(ck)
            if regs is not None:
                heat = {"live_registers": regs[0]}
                pane_heat = {"sass": {"live_registers": regs[1]}}
        if not self._updates_displays():  # a terminal IPython prints text/plain only
            from warp_lab.notebook.terminal import TerminalKernelView, terminal_colour
            return TerminalKernelView(ck, colour=terminal_colour(self.shell), show=tuple(show),
                                      occupancy=occ, diff=changes, heat=heat,
                                      pane_heat=pane_heat)
        return KernelView(ck, show=tuple(show), occupancy=occ, diff=changes, heat=heat,
                          pane_heat=pane_heat)

    def _launch(self, ck, kwargs: dict):
        from warp_lab.notebook.progress import LaunchProgress
        from warp_lab.notebook.results import LaunchView
        from warp_lab.runtime.launch import launch

        # a bar for simulator launches running past half a second (a GPU ignores it)
        bar = LaunchProgress()
        kwargs.setdefault("progress", bar)
        partial = True
        try:
            result = launch(ck, **kwargs)
            partial = result.partial
        except SimulatorError as exc:  # a fault the checks asked for did not catch
            raise launch_option.at_cell_line(exc, ck) from None
        except LaunchInterrupted as exc:   # Ctrl-C stops the cell; what ran stays at hand
            self.shell.user_ns["_launch"] = exc.result
            raise
        finally:
            bar.finish(partial)
        self.shell.user_ns["_launch"] = result
        return LaunchView(result, progress=bar)


def load_ipython_extension(ip) -> None:
    """Register the magics, the rich display of compiled kernels and the error boxes.

    Also binds ``wl`` (the ``warp_lab`` module) in the user namespace unless
    the name is taken, so a ``%%warp_kernel`` cell's annotations
    (``x: wl.array(dtype=wl.float32)``) work right after ``%load_ext``.
    """
    import warp_lab
    from warp_lab.compiler.artifact import CompiledKernel
    from warp_lab.notebook.bundle import compiled_kernel_mimebundle
    from warp_lab.notebook.results import LaunchView
    from warp_lab.runtime.result import LaunchResult

    ip.register_magics(WarpKernelMagics)
    from warp_lab.notebook.cuda_magic import CudaKernelMagics

    ip.register_magics(CudaKernelMagics)   # %%cuda_kernel: CUDA C++ through NVRTC
    # "%%warp_kernel" below a cell's first line reaches IPython as the line magic
    # "%warp_kernel" (its escape transformer strips one "%"): say what is wrong there
    ip.register_magic_function(_misplaced_cell_magic, "line", "%warp_kernel")
    ip.user_ns.setdefault("wl", warp_lab)
    formatter = ip.display_formatter.mimebundle_formatter
    formatter.for_type(CompiledKernel, compiled_kernel_mimebundle)  # with the live regs
    formatter.for_type(LaunchResult, lambda r: LaunchView(r)._repr_mimebundle_())
    if not ip.custom_exceptions:
        ip.set_custom_exc((WarpLabError,), _show_error)
    _warm_up()


def _warm_up() -> None:
    """Prepare what the first ``%%warp_kernel`` cell of a session needs, in a daemon thread,
    while the user reads or types: the compile pipeline's modules and the view's lexers,
    whose regular expressions Pygments compiles on first use (0.1-0.2 s, most of a first
    view's time). A cell run at once shares the work: an import the thread has begun is
    waited for, not done twice. Nothing here touches LLVM (not thread-safe) or a GPU."""
    import threading

    def work():
        try:
            import warp_lab.compiler.pipeline  # noqa: F401
            from warp_lab.notebook.lexers import get_lexer

            for pane in ("python", "llvm", "ptx", "sass"):
                get_lexer(pane)
        except Exception:  # noqa: BLE001 - only a warm-up: the cell reports real trouble
            pass

    threading.Thread(target=work, name="warp_lab-warm-up", daemon=True).start()


def _misplaced_cell_magic(line: str) -> None:
    """``%%warp_kernel`` written below a cell's first line: a comment or code above it.

    IPython runs a cell magic only from the cell's first line; lower down, its escape
    transformer turns ``%%warp_kernel ...`` into the line magic ``%warp_kernel`` (with
    one ``%`` kept), whose lookup failed with "Line magic function `%%warp_kernel` not
    found". Registered under that name, this says what to move instead.

    Raises:
        UsageError: always, so the cell stops before the functions below the line run
            as plain Python.
    """
    raise UsageError(f"%%warp_kernel {line}".rstrip() + " is not the cell's first line: a "
                     "cell magic must start its cell (IPython's rule). Move what is above "
                     "it (a comment, code) below it or into a cell of its own.")


def _show_error(shell, etype, value, tb, tb_offset=None):
    """Custom exception handler: warp_lab user errors as a compact box, not a traceback."""
    from warp_lab.errors import InternalCompilerError
    from warp_lab.notebook.views import error_html

    if isinstance(value, InternalCompilerError):  # our bug: the full traceback helps
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return None
    # a KernelCompileError from an ordinary cell already says In[N] (errors.source_label)
    display({"text/plain": f"{etype.__name__}: {value}", "text/html": error_html(value)},
            raw=True)
    return None
