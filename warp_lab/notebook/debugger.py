"""A debugger for the notebook, on the simulator's :class:`warp_lab.sim.Debugger`.

    dbg = debug(saxpy, dim=1024, inputs=[x, y, 2.0])   # nothing runs yet
    dbg.add_breakpoint(line=5)              # a cell line of the kernel (or ptx_line=...)
    dbg.cont()                              # -> Stop at the breakpoint
    dbg.lanes()                             # warp 0 of the stopped block, 32 lanes
    dbg.step(); dbg.step_back()             # step back replays the launch
    dbg.shared("buf"); dbg.array("out")     # a shared array of the block; an array argument
    dbg                                     # in a notebook: the control panel widget

:func:`debug` prepares a launch exactly as ``wl.launch(..., device="sim")``
does (the same argument checks, launch geometry and parameter packing) and
hands it to the simulator's debugger. :class:`DebugSession` adds what a
notebook needs: Python line numbers in and out, the 32 lanes' registers as
an HTML table that marks what changed since the last stop, and an
ipywidgets panel (continue, step, step back, restart, breakpoints, block
and warp choice).
"""

from __future__ import annotations

import dataclasses
import html
import itertools

import numpy as np

from warp_lab.errors import LaunchInterrupted, SimulatorError
from warp_lab.sim.debugger import NOT_SET, WarpState, format_lane_value

__all__ = ["debug", "DebugSession", "Lanes", "LaunchEnded", "lanes_html"]


def debug(kernel, dim=None, inputs=(), block_dim=256, grid=None, block=None, shared_mem=0,
          checks="auto") -> "DebugSession":
    """Start a debugging session of one simulated launch (nothing runs until you step).

    Args:
        kernel: a ``@wl.kernel`` (compiled for the simulator, cached) or a
            :class:`~warp_lab.compiler.artifact.CompiledKernel`.
        dim, inputs, block_dim, grid, block, shared_mem: as for ``wl.launch``.
        checks: simulator checks that run while stepping, as ``wl.launch`` takes them
            (``"memcheck"``, ``"racecheck"``, ``"initcheck"``, ``"barrier"``: one name, a
            comma list or a tuple; None or ``""`` for none). ``"auto"`` (the default) is
            ``wl.launch``'s default too (``runtime.launch.auto_checks``): memcheck and
            barrier, and racecheck and initcheck for a kernel that uses shared memory.

    Returns:
        a :class:`DebugSession`. The user's arrays are not written back: a
        debugging session works on copies in simulator memory.

    Raises:
        LaunchError: bad arguments or configuration (as ``wl.launch``: also
            ``checks`` and ``shared_mem``).
    """
    from warp_lab import sim
    from warp_lab.compiler.line_zero import attributed_lines
    from warp_lab.runtime.device import SIM_ARCH
    from warp_lab.runtime.launch import (auto_checks, check_block_registers, check_checks,
                                         check_shared_mem, prepare_launch)
    from warp_lab.runtime.finding_text import user_findings
    from warp_lab.runtime.sim_backend import kernel_module, prepare

    auto = isinstance(checks, str) and checks.strip() == "auto"
    checks = () if auto else check_checks(checks)
    ck, grd, blk, launch_dim, values, views = prepare_launch(
        kernel, SIM_ARCH, inputs, dim=dim, grid=grid, block=block, block_dim=block_dim)
    if auto:
        checks = auto_checks(ck)
    shared_mem = check_shared_mem(shared_mem, ck, ck.options.arch)  # the arch it targets
    check_block_registers(ck, blk, ck.options.arch)                   # as wl.launch does
    memory, regions, bases, params = prepare(ck, launch_dim, values, views)
    dbg = sim.Debugger(kernel_module(ck), ck.entry, grd, blk, params, memory, shared_mem, checks,
                       not_statements=attributed_lines(ck.ptx))
    session = DebugSession(ck, dbg, grid=grd, block_shape=blk, checks=checks)
    session._global = (memory, regions, bases, views)
    # findings in the user's terms, as wl.launch gives them
    session._findings = lambda found: user_findings(found, ck, regions, bases, grd, blk,
                                                    launch_dim)
    return session


def _coords(value, what: str, limit) -> tuple[int, int, int] | None:
    """``value`` (None, an int or 1..3 ints) as an ``(x, y, z)`` inside ``limit``, or an error.

    Raises:
        SimulatorError: not integers, or outside ``limit`` (the grid for a
            block, the block shape for a thread); the message gives the range.
    """
    if value is None:
        return None
    items = (value,) if isinstance(value, (int, np.integer)) else value
    ok = isinstance(items, (tuple, list)) and 1 <= len(items) <= 3 and all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in items)
    if not ok:
        raise SimulatorError(f"{what} must be an int or a tuple of up to 3 ints (x, y, z), "
                             f"got {value!r}")
    xyz = tuple(int(v) for v in items) + (0,) * (3 - len(items))
    if limit is not None and not all(0 <= v < n for v, n in zip(xyz, limit)):
        raise SimulatorError(f"{what} {xyz} is outside the launch: {what} indices run "
                             f"(0, 0, 0)..{tuple(n - 1 for n in limit)}")
    return xyz  # type: ignore[return-value]


def _is_int(value) -> bool:
    """Whether ``value`` is an int (numpy ints too, not bool)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_count(value, least: int) -> bool:
    """Whether ``value`` is an int (numpy ints too, not bool) of at least ``least``."""
    return _is_int(value) and value >= least


def _check_steps(n, method: str) -> None:
    """Refuse a step count that is not an int >= 0 (a negative one would go the other way)."""
    if _is_count(n, 0):
        return
    hint = ""
    if _is_int(n):
        hint = f"; use {'step_back' if method == 'step' else 'step'}({-n}) to go the other way"
    raise SimulatorError(f"{method}(n): n must be an int >= 0, got {n!r}{hint}")


# the "active" row: a lane that does not execute the next instruction, by its status
# (hover shows the word): diverged away, waiting, or gone
_LANE_GLYPH = {"running": "·", "at barrier": "⏸", "at warp sync": "⏸", "yielded": "↻",
               "exited": "×", "absent": " "}


def lanes_html(state, previous=None, max_registers: int = 64) -> str:
    """A warp's 32 lanes as an HTML table: one row per register, one column per lane.

    Args:
        state: a :class:`warp_lab.sim.debugger.WarpState`.
        previous: the same warp's state at the previous stop, or None; cells
            whose value changed since then are highlighted.
        max_registers: rows shown at most (registers are listed in PTX order).

    Returns:
        an escaped HTML snippet; inactive lanes are greyed, exited lanes dimmed.
        The ``active`` row marks each lane: ``●`` executes the next instruction,
        ``·`` running on another path (diverged), ``⏸`` waiting at a barrier or
        warp sync, ``↻`` yielded to other warps, ``×`` exited, blank absent.
        PTX registers are untyped bits (``.b32``/``.b64``); a register whose
        instructions use it as a float (its type in ``state.notes``, ``f32``/``f64``) is
        shown as that float, its bits in the hover (``2.0f``: ``bits 0x40000000``), any
        other as an integer (one of 2**32 or more, an address, in hex, as the text table
        shows it: :func:`~warp_lab.sim.debugger.format_lane_value`), hovering a 32- or
        64-bit integer showing the same bits as a float32 / float64 (1073741824: 2.0),
        an address its decimal value. A lane that has not written a register yet
        shows ``—`` (:data:`~warp_lab.sim.debugger.NOT_SET`), its title saying so, not the
        0 the simulator holds for PTX's undefined value; as in the text table
        (``print(state)``), registers no instruction writes (not in ``state.notes``, when it
        has notes) get no row but a line under the table. A register's note is cut to
        one line with an ellipsis, the whole note in its ``title``.
    """
    head = "".join(f"<th>{k}</th>" for k in range(32))
    rows = [f"<tr><th>lane</th>{head}</tr>"]
    status = "".join(
        f"<td title='{html.escape(s)}'>{'●' if state.active[k] else _LANE_GLYPH.get(s, '?')}"
        "</td>" for k, s in enumerate(state.status))
    rows.append(f"<tr><th>active</th>{status}</tr>")
    notes = getattr(state, "notes", {}) or {}
    names = list(state.predicates) + list(state.registers)
    unused = [n for n in names if notes and n not in notes]  # declared, written by nothing
    names = [n for n in names if n not in unused]
    for name in names[:max_registers]:
        is_set = state.is_set(name)
        was_set = previous.is_set(name) if previous is not None and (
            name in previous.raw or name in previous.predicates) else None
        values = state.predicates.get(name)
        typed = False
        if values is None:
            values = state.registers[name]
            ptx_type = notes.get(name, ("", ""))[0]
            if ptx_type.startswith("f"):  # a float the code uses as one: shown as one
                values, typed = state.as_type(name, ptx_type), True
        old = None
        if previous is not None:
            if typed and name in previous.raw:
                old = previous.as_type(name, ptx_type)
            else:
                old = previous.predicates.get(name, previous.registers.get(name))
        cells = []
        for k in range(32):
            v = values[k]
            changed = old is not None and (not _same(old[k], v) or (
                was_set is not None and was_set[k] != is_set[k]))
            style = "background:#fd4a" if changed else ""
            if not state.active[k]:
                style += ";color:#999"
            if not is_set[k]:
                cells.append(f"<td style='{style}' title='{_NOT_SET_TITLE}'>{NOT_SET}</td>")
                continue
            text = format_lane_value(v)
            title = ""
            if name in state.registers:
                title = (f" title='bits {int(state.raw[name][k]):#x}'" if typed
                         else f" title='{int(v):,}'" if text.startswith(("0x", "-0x"))
                         else _as_float_title(v))
            cells.append(f"<td style='{style}'{title}>{html.escape(text)}</td>")
        what = html.escape(notes.get(name, ("", ""))[1])  # quotes too: it goes in title=''
        head = html.escape(name) + (f"<br><span style='{_NOTE_STYLE}' title='{what}'>{what}"
                                    "</span>" if what else "")
        rows.append(f"<tr><th style='text-align:left'>{head}</th>{''.join(cells)}</tr>")
    more = len(names) - max_registers
    note = f"<div>… {more} more registers</div>" if more > 0 else ""
    if unused:
        note += ("<div>not written by any instruction: "
                 f"{html.escape(', '.join(unused))}</div>")
    return ("<table style='font-family:monospace;font-size:11px;border-collapse:collapse'>"
            + "".join(rows) + "</table>" + note)


#: a register's note (a whole ``def`` line, say) stays on one line, cut with an ellipsis; the
#: full note is the span's title (it once wrapped over six rows of the lane table)
_NOTE_STYLE = ("font-weight:normal;display:inline-block;max-width:24ch;overflow:hidden;"
               "text-overflow:ellipsis;white-space:nowrap;vertical-align:bottom")

_NOT_SET_TITLE = ("not set yet: no instruction has written this register in this lane "
                  "(PTX leaves it undefined; the simulator holds 0)")


def _as_float_title(v) -> str:
    """`` title='as f32: 2'`` for a 32-bit register value (f64 for 64 bits), else ``""``."""
    v = np.asarray(v)
    if v.dtype.kind not in "iu" or v.dtype.itemsize not in (4, 8):
        return ""
    as_float = v.view(np.float32 if v.dtype.itemsize == 4 else np.float64)
    return f" title='as f{8 * v.dtype.itemsize}: {float(as_float):.9g}'"


def _same(a, b) -> bool:
    if isinstance(a, (float, np.floating)) and np.isnan(a) and np.isnan(b):
        return True
    return a == b


@dataclasses.dataclass(frozen=True)
class LaunchEnded:
    """What :class:`DebugSession`'s ``cont``, ``step``, ``step_back``, ``restart`` and
    ``where`` return once the launch has finished, where they otherwise return the
    simulator's :class:`~warp_lab.sim.debugger.Stop`: it prints what happened, and it is
    falsy, so ``while dbg.cont(): ...`` runs to the end (the simulator's own
    ``sim.Debugger`` returns None there).

    Attributes:
        step: steps executed in all.
        findings: the checks' findings so far (:meth:`DebugSession.run_to_end` gives the
            ``SimResult`` with them, worded as ``wl.launch`` words them).
        finished: True (a ``Stop``'s is False).
    """

    step: int
    findings: int
    finished: bool = True

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        n = self.findings
        return (f"<the launch has finished after {self.step:,} steps, {n} finding"
                f"{'s' * (n != 1)}; run_to_end() returns the SimResult>")


@dataclasses.dataclass(repr=False)
class Lanes(WarpState):
    """:meth:`DebugSession.lanes`: a :class:`~warp_lab.sim.debugger.WarpState` whose
    ``notes`` say what each register holds (the kernel parameter or special register it
    was loaded from, else the Python line whose code writes it, and the type the code
    uses), printed as a text table and shown in Jupyter as :func:`lanes_html`'s table."""

    def _repr_html_(self) -> str:
        return lanes_html(self)


class DebugSession:
    """One simulated launch under the debugger, in the kernel's own line numbers.

    Attributes:
        compiled: the :class:`~warp_lab.compiler.artifact.CompiledKernel`.
        debugger: the simulator's :class:`~warp_lab.sim.Debugger`.
        block, warp: the warp shown by :meth:`lanes` and the panel (default
            the block of the last stop, warp 0).
        grid, block_shape: the launch's blocks and threads per block, ``(x, y,
            z)`` (None when not known: then block/thread indices go unchecked).
        checks: the simulator checks that run (``()`` when not known).

    The motion methods return the simulator's :class:`~warp_lab.sim.debugger.Stop`
    (where execution stands), or a falsy :class:`LaunchEnded` once the launch has
    finished.
    """

    def __init__(self, compiled, debugger, grid=None, block_shape=None, checks=()):
        self.compiled = compiled
        self.debugger = debugger
        self.checks = tuple(checks)
        self.grid = grid  # (x, y, z) blocks, None when unknown
        self.block_shape = block_shape  # (x, y, z) threads per block
        self.block = (0, 0, 0)
        self.warp = 0
        self._previous = None  # WarpState at the previous stop, for "what changed"
        self._previous_shared = None  # (block, debugger_shared.snapshot) at the previous stop
        self._panel = None
        self._findings = None  # the simulator's findings -> as wl.launch words them
        self._register_notes: dict = {}  # PTX function -> register notes (lanes' "holds")

    # -- control, each returning the simulator's Stop (LaunchEnded once the launch ended) --

    def add_breakpoint(self, line: int | None = None, ptx_line: int | None = None,
                       block=None, thread=None):
        """Stop before code of Python ``line`` (the cell's or file's numbering) or ``ptx_line``.

        Args:
            line, ptx_line: where to stop (one of them).
            block, thread: stop only in this block / thread, each an int or
                ``(x, y, z)`` inside the launch's grid / block.

        Raises:
            SimulatorError: no instruction comes from that line, or ``block`` /
                ``thread`` is not 1..3 ints inside the launch.
        """
        if line is None and ptx_line is None:
            raise SimulatorError("a breakpoint needs line= (Python) or ptx_line=")
        for what, value in (("line", line), ("ptx_line", ptx_line)):
            if value is not None and not _is_count(value, 1):
                raise SimulatorError(f"{what} must be a line number (an int from 1), "
                                     f"got {value!r}")
        block = _coords(block, "block", self.grid)
        thread = _coords(thread, "thread", self.block_shape)
        try:
            # a line of the kernel's own file or cell, not the same number in the cell of
            # a device function defined elsewhere
            source_file = self.compiled.source.filename if line is not None else None
            return self.debugger.add_breakpoint(ptx_line=ptx_line, source_line=line,
                                                source_file=source_file, block=block,
                                                thread=thread)
        except SimulatorError as exc:
            # the kernel's own lines (a breakpoint's numbering)
            code = self.compiled.source_map.own_lines("ptx")
            if line is None or line in code or not code:
                raise
            # a blank or comment line, a declaration such as wl.shared_array, code the
            # optimiser removed: say where one can stop instead
            after = [n for n in code if n > line]
            hint = f"; the next line with code is {after[0]}" if after else ""
            raise SimulatorError(f"{exc} (it has no code: blank, a comment, a declaration or "
                                 f"optimised away){hint}; lines with code: "
                                 f"{', '.join(map(str, code))}", exc.ptx_line,
                                 exc.source_line) from None

    def _moved(self, stop):
        """Follow a stop's block; the launch's end (the simulator's None) as a
        :class:`LaunchEnded`."""
        if stop is None:
            return self._ended()
        self.block = stop.block
        return stop

    def _ended(self) -> LaunchEnded:
        return LaunchEnded(self.debugger.step_count, len(self.debugger.findings))

    def _remember(self):
        try:
            self._previous = self.debugger.warp(self.block, self.warp)
        except SimulatorError:
            self._previous = None
        if self.compiled.source_map.arrays:
            from warp_lab.notebook.debugger_shared import snapshot
            self._previous_shared = (self.block, snapshot(self.compiled, self.debugger.machine,
                                                          self.block))

    def cont(self):
        """Run to the next breakpoint; returns the ``Stop`` there, or :class:`LaunchEnded`
        when the launch finished first.

        A Python-line breakpoint stops once when the block enters that line,
        not at each of the line's PTX instructions: from a stop on such a
        line, the rest of the line runs first (instructions without a line,
        ``.loc`` 0, count as the same line). At a stop, :meth:`lanes` shows the
        current warp if it runs the stopped-at instruction, else the block's first
        warp that does.
        """
        self._remember()
        here = self.debugger.where()
        if here is not None and here.source_line and self._line_breakpoint(here) is not None:
            nxt = here
            while nxt is not None and nxt.block == here.block and \
                    nxt.source_line in (here.source_line, 0):
                nxt = self.debugger.step()
            if nxt is None:
                return self._ended()
            bp = self._line_breakpoint(nxt)
            if bp is not None:  # the next line is itself a breakpoint: stop on entering it
                return self._focus(self._moved(dataclasses.replace(nxt, breakpoint=bp)))
        return self._focus(self._moved(self.debugger.cont()))

    def _focus(self, stop):
        """After a breakpoint stop, show a warp that runs the stopped-at instruction: the
        current warp if it does, else the block's first that does (cuda-gdb, too, moves
        its focus to the thread that hit the breakpoint). Warp 0 of a stencil's block is
        often all boundary threads that skip the line: its table said '0 of 32 lanes'."""
        if not stop:  # the launch has ended
            return stop
        for warp in itertools.chain((self.warp,), itertools.count()):
            try:
                state = self.debugger.warp(self.block, warp)
            except SimulatorError:  # past the block's last warp: keep the focus
                return stop
            if state.active.any():
                self.warp = warp
                return stop

    def _line_breakpoint(self, stop):
        """A Python-line breakpoint matching ``stop``'s line and block (thread filters aside)."""
        for bp in self.debugger.breakpoints:
            if bp.source_line == stop.source_line and bp.ptx_line is None and \
                    (bp.block is None or bp.block == stop.block):
                return bp
        return None

    def step(self, n: int = 1):
        """Execute ``n`` instructions (an int >= 0); the ``Stop`` after them, or
        :class:`LaunchEnded`.

        Raises:
            SimulatorError: ``n`` is not an int >= 0 (go back with :meth:`step_back`).
        """
        _check_steps(n, "step")
        self._remember()
        return self._moved(self.debugger.step(n))

    def step_back(self, n: int = 1):
        """Go back ``n`` instructions (an int >= 0; replays the launch deterministically).

        Raises:
            SimulatorError: ``n`` is not an int >= 0 (go forward with :meth:`step`).
        """
        _check_steps(n, "step_back")
        self._remember()
        return self._moved(self.debugger.step_back(n))

    def restart(self):
        """Back to the start of the launch."""
        self._previous = self._previous_shared = None
        self.debugger.restart()
        return self._moved(self.debugger.where())

    def run_to_end(self):
        """Finish the launch; returns the simulator's SimResult (findings, metrics), its
        findings worded as ``wl.launch``'s (the Python arrays and element indices).

        Raises:
            LaunchInterrupted: Ctrl-C, as ``wl.launch`` raises it (a ``KeyboardInterrupt``
                whose ``result`` is the SimResult so far, worded likewise); the session
                stands at a whole step and can go on."""
        try:
            result = self.debugger.run_to_end()
        except LaunchInterrupted as exc:
            raise LaunchInterrupted(self._worded(exc.result)) from exc.__cause__
        return self._worded(result)

    def _worded(self, result):
        if self._findings is None or not result.findings:
            return result
        return dataclasses.replace(result, findings=self._findings(result.findings))

    def where(self):
        """The next instruction to run (a ``Stop``), or :class:`LaunchEnded` (falsy) when the
        launch has finished."""
        stop = self.debugger.where()
        return self._ended() if stop is None else stop

    def lanes(self, block=None, warp: int | None = None):
        """The :class:`~warp_lab.sim.debugger.WarpState` of a warp of the running block.

        Raises:
            SimulatorError: ``block`` outside the grid or not running now, or no such warp.
        """
        block = _coords(block, "block", self.grid)
        state = self.debugger.warp(self.block if block is None else block,
                                   self.warp if warp is None else warp)
        fields = {f.name: getattr(state, f.name) for f in dataclasses.fields(state)}
        fields["notes"] = self._notes(state.function)
        return Lanes(**fields)

    def _notes(self, function: str) -> dict:
        """Register → ``(ptx_type, what)`` for ``function``: the parameter or special
        register it was loaded from, else the Python line(s) whose code writes it."""
        if function not in self._register_notes:
            from warp_lab.analysis.ptx_registers import register_notes
            from warp_lab.compiler.source_lines import line_label, source_line_text

            ck, notes = self.compiled, {}
            for reg, note in register_notes(ck, function).items():
                what = note.name
                if not what and note.lines:
                    first = note.lines[0]
                    what = f"line {line_label(ck, first)}: {source_line_text(ck, first)}"
                    if len(note.lines) > 1:
                        what = f"lines {', '.join(line_label(ck, ln) for ln in note.lines)}"
                if note.test:  # a branch predicate: the compiled test, often the opposite
                    what = f"{note.test} ({what})" if what else note.test  # of the Python one
                notes[reg] = (note.type, what)
            self._register_notes[function] = notes
        return self._register_notes[function]

    # -- global memory ----------------------------------------------------------------------

    def array(self, name: str) -> np.ndarray:
        """The array argument ``name`` as the simulated launch has left it so far, as a numpy
        array (a copy, the argument's shape and dtype): a session works on copies in
        simulator memory, so the arrays passed to :func:`debug` never change, and this
        is how to see what the kernel wrote (after :meth:`run_to_end`, its results).

        Raises:
            SimulatorError: ``name`` is not an array parameter of the kernel (the
                message lists them).
        """
        memory, regions, bases, views = self._global
        view = next((v for v in views if v.name == name), None)
        if view is None:
            have = ", ".join(v.name for v in views) or "none"
            raise SimulatorError(f"{name!r} is not an array argument of {self.compiled.name} "
                                 f"(its arrays: {have})")
        region = next(r for r in regions if any(v is view for v in r.views))
        data = memory.read(bases[id(region)], region.nbytes)
        a = view.array
        return np.ndarray(a.shape, a.dtype, buffer=bytearray(data),
                          offset=int(a.__array_interface__["data"][0]) - region.lo,
                          strides=a.strides).copy()

    # -- shared memory ----------------------------------------------------------------------

    def shared(self, name: str, block=None) -> np.ndarray:
        """The values of shared array ``name`` in ``block`` now, as a numpy array (a copy).

        Args:
            name: the Python variable name of a ``wl.shared_array(...)`` or
                ``wl.dynamic_shared_array(...)`` in the kernel or a ``@wl.func`` it calls
                (``buf`` for ``buf = wl.shared_array(256, wl.float32)``); the PTX symbol
                (``k_buf_1``) selects one of two arrays of the same name.
            block: an int or ``(x, y, z)`` inside the grid; default :attr:`block` (the
                block of the last stop, or the one chosen in the panel).

        Returns:
            the array's shape, plus the element's axes for a vector or matrix element type
            (``(8, 4)`` for ``wl.shared_array(8, wl.vec4)``), its numpy dtype (float16,
            float32, int32, ...). A dynamic shared array is 1-D: the elements that fit in
            the launch's ``shared_mem`` bytes past its ``offset``. The simulator zero-fills
            shared memory, so elements no thread has written read 0 (a GPU's hold garbage;
            the panel greys them when initcheck runs).

        Raises:
            SimulatorError: no shared array ``name`` (the message lists the kernel's),
                ``block`` outside the grid or not running now (a block's shared memory
                exists only while it runs; the message says which blocks are), or an
                array the PTX does not keep whole (LLVM removed or split it) or whose
                offset is computed at run time.
        """
        from warp_lab.notebook import debugger_shared as S

        block = _coords(block, "block", self.grid) or self.block
        m = self.debugger.machine
        array = S.find(S.shared_arrays(self.compiled, m), name, self.compiled.name)
        k = S.check_block(m, block, self.debugger.finished)
        return S.read_shared_array(m, array, k)[0]

    def shared_html(self) -> str:
        """The section "shared memory of block (x, y, z)" for :attr:`block`: each shared
        array of the kernel, small ones in full, large ones' first rows then ``…``, values
        formatted as in the lane table, elements changed since the previous stop
        highlighted, elements never written greyed when initcheck runs (``""`` for a
        kernel without shared arrays)."""
        from warp_lab.notebook.debugger_shared import shared_html
        prev = self._previous_shared
        before = prev[1] if prev is not None and prev[0] == self.block else None
        return shared_html(self.compiled, self.debugger.machine, self.block, before,
                           self.debugger.finished)

    # -- display ----------------------------------------------------------------------------

    def status_html(self) -> str:
        """Where execution stands: step, Python line and text, PTX line and text."""
        stop = self.where()
        if not stop:
            n = stop.findings
            return (f"<b>the launch has finished</b> after {stop.step:,} steps ({n} finding"
                    f"{'s' * (n != 1)})")
        py = ""
        if stop.source_line:
            from warp_lab.compiler.source_lines import line_label, source_line_text

            # device functions too, of this cell or another one (named then)
            ck, line, file = self.compiled, stop.source_line, stop.source_file
            text = source_line_text(ck, line, file)
            py = (f"Python line {html.escape(line_label(ck, line, file))}: "
                  f"<code>{html.escape(text)}</code><br>")
        bp = f" — breakpoint {stop.breakpoint.id}" if stop.breakpoint is not None else ""
        return (f"<b>step {stop.step}</b>, block {html.escape(str(stop.block))}, "
                f"{stop.lanes} thread(s){bp}<br>{py}PTX line {stop.ptx_line}: "
                f"<code>{html.escape(stop.text)}</code>")

    def lanes_html(self) -> str:
        """The current warp's lanes, changes since the previous stop highlighted."""
        try:
            state = self.lanes()
        except SimulatorError as exc:
            return f"<div>{html.escape(str(exc))}</div>"
        prev = self._previous if self._previous is not None and \
            self._previous.block == state.block and self._previous.warp == state.warp else None
        return lanes_html(state, prev)

    def _repr_html_(self) -> str:
        return f"<div>{self.status_html()}</div>{self.lanes_html()}{self.shared_html()}"

    def panel(self):
        """The ipywidgets control panel (built once per session)."""
        if self._panel is None:
            from warp_lab.notebook.debugger_panel import DebugPanel
            self._panel = DebugPanel(self)
        return self._panel

    def _repr_mimebundle_(self, include=None, exclude=None):
        data = dict(self.panel()._repr_mimebundle_(include=include, exclude=exclude) or {})
        data["text/html"] = self._repr_html_()
        data["text/plain"] = repr(self)
        return data

    def __repr__(self) -> str:
        stop = self.where()
        at = f"step {stop.step}, PTX line {stop.ptx_line}" if stop else \
            f"finished after {stop.step:,} steps"
        return f"<DebugSession {self.compiled.name}: {at}>"
