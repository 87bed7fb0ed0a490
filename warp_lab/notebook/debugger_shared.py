"""The debugger's view of shared memory: a block's shared arrays by their Python names.

    dbg.shared("buf")                 # numpy copy of buf in the stopped block, shape (256,)
    dbg.shared("tile", block=(1, 0, 0))
    dbg.shared_html()                 # every shared array of the block, as the panel shows it

The compiler records each shared array's PTX symbol, Python name, element type
and shape (one :class:`~warp_lab.compiler.source_map.SharedArray` each in
``CompiledKernel.source_map.arrays``); the simulator knows where each ``.shared`` variable lies in
a block's shared memory (``Machine.var_bounds``: ``("shared", start, end)`` bytes)
and holds the bytes of the blocks it is simulating now (one block at a time
under the debugger). A ``wl.dynamic_shared_array`` views the launch's dynamic
shared memory (``extern .shared``, CUDA Programming Guide, "Shared Memory")
from its ``offset`` to the end of ``shared_mem``.
"""

from __future__ import annotations

import dataclasses
import html
import re

import numpy as np

from warp_lab.compiler.typed_ast import DYNAMIC_SHARED
from warp_lab.errors import SimulatorError
from warp_lab.sim.debugger import format_lane_value

__all__ = ["SharedArray", "shared_arrays", "read_shared_array", "batch_blocks", "snapshot",
           "shared_html"]

#: elements shown per row of a 1-D array (16 float32: a 256-float buffer is 16 rows)
ROW = 16
#: rows shown at most; the rest is "… n more rows"
MAX_ROWS = 16


@dataclasses.dataclass(frozen=True)
class SharedArray:
    """One shared array of the kernel as the debugger reads it.

    Attributes:
        name: the Python variable name (``""`` if the array was not assigned to a name).
        symbol: its PTX ``.shared`` variable (``__wl_dynamic_shared`` for every
            ``wl.dynamic_shared_array``).
        type_name: element type as ``warp_lab.lang.types`` names it (``"float32"``, ``"vec4"``).
        line: the file (cell) line that declares it.
        start: byte offset of element 0 in the block's shared memory (None if unknown).
        shape: the array's shape (a dynamic array: ``(elements,)`` that fit in
            ``shared_mem`` past its offset).
        problem: why its values cannot be shown (``""`` when they can).
    """

    name: str
    symbol: str
    type_name: str
    line: int
    start: int | None
    shape: tuple
    problem: str = ""

    @property
    def element(self):
        """The :mod:`warp_lab.lang.types` element type."""
        from warp_lab.lang import types as T
        return T.ELEMENT_TYPES[self.type_name]

    @property
    def label(self) -> str:
        """``buf: float32[256]`` (``[4, 8]`` for 2-D)."""
        dims = ", ".join(str(n) for n in self.shape)
        dyn = " (dynamic)" if self.symbol == DYNAMIC_SHARED else ""
        return f"{self.name or self.symbol}: {self.type_name}[{dims}]{dyn}"


def _components(element) -> tuple:
    """The trailing axes of one element: ``()`` scalar, ``(4,)`` vec4, ``(3, 3)`` mat33."""
    if hasattr(element, "rows"):
        return (element.rows, element.cols)
    if hasattr(element, "n"):
        return (element.n,)
    return ()


def shared_arrays(ck, machine) -> list[SharedArray]:
    """Every shared array of compiled kernel ``ck`` (its own and its ``@wl.func`` helpers'),
    placed in the shared memory of simulator ``machine``.

    Args:
        ck: the :class:`~warp_lab.compiler.artifact.CompiledKernel` (its
            ``source_map.arrays``; an array of an element type warp_lab does not name, a
            CUDA C++ class, is left out).
        machine: the simulator's :class:`~warp_lab.sim.machine.Machine` running it
            (``var_bounds``, ``dynamic_shared``).

    Returns:
        one :class:`SharedArray` per declaration, in declaration order; one whose
        values cannot be read says why in ``problem`` (LLVM removed or split its
        ``.shared`` variable, a run-time ``offset``).
    """
    from warp_lab.lang import types as T

    table = T.ELEMENT_TYPES
    sm = ck.source_map
    shapes = {a.symbol: a.shape for a in sm.arrays if a.shape is not None}
    lines = {(a.symbol, a.name): a.line for a in sm.arrays}
    bounds = machine.var_bounds
    out, seen = [], set()
    for a in sm.arrays:
        sym, name, type_name, offset = a.symbol, a.name, a.dtype, a.offset
        if type_name is None or (sym, name) in seen or type_name not in table:
            continue
        seen.add((sym, name))
        size = table[type_name].size
        b = bounds.get(sym)
        start, shape, problem = None, shapes.get(sym, ()), ""
        if b is None:
            pieces = sorted(s for s in bounds if re.fullmatch(re.escape(sym) + r"_\$_\d+", s))
            problem = (f"LLVM split its .shared variable {sym} into {', '.join(pieces)}; "
                       "read the bytes with dbg.debugger.read_shared(block, offset, n)"
                       if pieces else
                       f"the PTX has no .shared variable {sym}: LLVM removed it (an array "
                       "the kernel never reads back, or code optimised away)")
        elif sym == DYNAMIC_SHARED:
            if offset is None:
                problem = ("its offset is computed at run time; read the bytes with "
                           "dbg.debugger.read_shared(block, offset, n)")
            else:
                start = b[1] + offset
                shape = (max(0, (b[2] - start) // size),)
        else:
            start = b[1]
        out.append(SharedArray(name, sym, type_name, lines.get((sym, name), 0), start,
                               tuple(shape), problem))
    return out


def batch_blocks(machine) -> list[tuple]:
    """The blocks ``(x, y, z)`` the simulator holds now (their shared memory exists)."""
    if machine.T == 0:
        return []
    gx, gy = machine.grid[0], machine.grid[1]
    return [(lin % gx, lin // gx % gy, lin // (gx * gy))
            for lin in range(machine.first_block, machine.first_block + machine.nb)]


def find(arrays: list[SharedArray], name, kernel: str) -> SharedArray:
    """The array ``name`` (a Python name, or the PTX symbol) among ``arrays``.

    Raises:
        SimulatorError: no such array (the message lists the kernel's shared arrays),
            two arrays of that name (it lists their symbols, which select one), or one
            whose values cannot be read (why).
    """
    if not isinstance(name, str):
        raise SimulatorError(f"shared(name): name is the Python name of a shared array "
                             f"(a str), got {name!r}")
    hits = [a for a in arrays if a.name == name] or [a for a in arrays if a.symbol == name]
    if not hits:
        have = ", ".join(f"{a.name or a.symbol} (line {a.line})" for a in arrays)
        raise SimulatorError(f"kernel {kernel} has no shared array {name!r}; "
                             + (f"its shared arrays: {have}" if have else
                                "it declares no wl.shared_array or wl.dynamic_shared_array"))
    if len(hits) > 1:
        raise SimulatorError(f"{len(hits)} shared arrays are named {name!r} (lines "
                             f"{', '.join(str(a.line) for a in hits)}); choose one by its "
                             f"PTX symbol: {', '.join(repr(a.symbol) for a in hits)}")
    if hits[0].problem:
        raise SimulatorError(f"shared array {name!r} (line {hits[0].line}) cannot be shown: "
                             f"{hits[0].problem}")
    return hits[0]


def check_block(machine, block: tuple, finished: bool = False) -> int:
    """``block``'s index in the simulator's current batch.

    Args:
        machine: the simulator's machine; ``finished``: whether the launch has ended
            (``sim.Debugger.finished``: the last batch's memory may still be there).

    Raises:
        SimulatorError: the launch has finished, or ``block`` is not in the batch
            (a block's shared memory exists only while it runs); says which blocks are.
    """
    held = [] if finished else batch_blocks(machine)
    if block in held:
        return held.index(block)
    if not held:
        raise SimulatorError(f"no block is running (the launch has finished), so block "
                             f"{block} has no shared memory; restart() or step_back() "
                             "to go back")
    names = ", ".join(str(b) for b in held)
    raise SimulatorError(f"block {block} is not running now: a block's shared memory exists "
                         f"only while it runs, and the simulator holds block"
                         f"{'s' * (len(held) > 1)} {names}; continue until block {block} "
                         f"runs (e.g. add_breakpoint(line=..., block={block}))")


def read_shared_array(machine, array: SharedArray, k: int) -> tuple[np.ndarray, np.ndarray | None]:
    """The values of ``array`` in the ``k``-th block of the batch, and which were written.

    Returns:
        ``(values, written)``: ``values`` a new array of shape ``array.shape`` plus the
        element's component axes (``(8, 4)`` for ``vec4[8]``), the element's numpy dtype;
        ``written`` a bool array of ``array.shape`` (True: every byte of the element was
        written since the block started) when initcheck runs, else None.
    """
    el = array.element
    n = int(np.prod(array.shape, dtype=np.int64))
    lo = k * machine.shared_stride + array.start
    raw = machine.shared[lo: lo + n * el.size]
    values = raw.view(el.numpy).reshape(array.shape + _components(el)).copy()
    written = None
    if machine.init is not None:
        flags = machine.init.flags[lo: lo + n * el.size].reshape(n, el.size)
        written = flags.all(axis=1).reshape(array.shape)
    return values, written


#: a table cell: numbers right-aligned, a little apart
_TD = "text-align:right;padding:0 4px"


def _cell(value) -> str:
    """One element as the lane table formats a value; a vector/matrix in parentheses."""
    if np.ndim(value):
        return "(" + ", ".join(format_lane_value(v) for v in np.ravel(value)) + ")"
    return format_lane_value(value)


def array_html(array: SharedArray, values: np.ndarray, written, previous=None) -> str:
    """One array as a compact table: a 1-D array in rows of :data:`ROW` elements (fewer
    for vectors), a 2-D or 3-D one by its rows; at most :data:`MAX_ROWS` rows and
    :data:`ROW` columns, the rest as ``…``. Elements never written (``written`` False)
    are grey, hovering says so; elements that differ from ``previous`` (the values at
    the previous stop, same shape) are highlighted as the lane table marks changes."""
    if values.size == 0:
        return "<div style='font-size:11px'>(no elements: shared_mem leaves none)</div>"
    comps = _components(array.element)
    lead = values.reshape((-1,) + comps) if len(array.shape) == 1 else values
    flags = None if written is None else np.asarray(written).reshape(-1)
    changed = None
    if previous is not None and previous.shape == values.shape:
        width = int(np.prod(comps, dtype=np.int64))
        a, b = values.reshape(-1, width), previous.reshape(-1, width)
        same = (a == b) | (np.isnan(a) & np.isnan(b) if a.dtype.kind == "f" else False)
        changed = ~same.all(axis=1)
    if len(array.shape) == 1:
        per = max(1, ROW // max(1, int(np.prod(comps, dtype=np.int64))))
        count = lead.shape[0]
        rows = [(str(r), [(r + c, lead[r + c]) for c in range(min(per, count - r))], False)
                for r in range(0, count, per)]
        heads = [f"+{c}" for c in range(min(per, count))]
    else:
        shape = array.shape
        cols = shape[-1]
        flat = values.reshape((-1, cols) + comps)
        rows = []
        for r in range(flat.shape[0]):
            idx = np.unravel_index(r, shape[:-1])
            label = ", ".join(str(int(i)) for i in idx)
            rows.append((label, [(r * cols + c, flat[r, c]) for c in range(min(cols, ROW))],
                         cols > ROW))
        heads = [str(c) for c in range(min(cols, ROW))]
    out = ["<tr><th></th>" + "".join(f"<th style='{_TD};color:#666;font-weight:normal'>"
                                     f"{h}</th>" for h in heads) + "</tr>"]
    for label, cells, more in rows[:MAX_ROWS]:
        tds = []
        for flat_index, v in cells:
            style, title = _TD, ""
            if changed is not None and changed[flat_index]:
                style += ";background:#fd4a"
            if flags is not None and not flags[flat_index]:
                style += ";color:#aaa"
                title = " title='never written since the block started'"
            tds.append(f"<td style='{style}'{title}>{html.escape(_cell(v))}</td>")
        if more:
            tds.append(f"<td style='{_TD}'>…</td>")
        out.append(f"<tr><th style='{_TD};color:#666'>{html.escape(label)}</th>"
                   + "".join(tds) + "</tr>")
    rest = len(rows) - MAX_ROWS
    note = (f"<div style='font-size:11px'>… {rest} more row{'s' * (rest != 1)}</div>"
            if rest > 0 else "")
    return ("<table style='font-family:monospace;font-size:11px;border-collapse:collapse'>"
            + "".join(out) + "</table>" + note)


def snapshot(ck, machine, block: tuple) -> dict | None:
    """``{(symbol, name): values}`` of every readable shared array of ``block`` now (what
    :func:`shared_html` compares with at the next stop), or None when ``block`` is not
    running or the kernel has no shared arrays."""
    arrays = [a for a in shared_arrays(ck, machine) if not a.problem]
    held = batch_blocks(machine)
    if not arrays or block not in held:
        return None
    k = held.index(block)
    return {(a.symbol, a.name): read_shared_array(machine, a, k)[0] for a in arrays}


def shared_html(ck, machine, block: tuple, previous: dict | None = None,
                finished: bool = False) -> str:
    """The section ``shared memory of block (x, y, z)``: each shared array of the kernel
    (:func:`shared_arrays`) as :func:`array_html` draws it, or why it cannot be shown;
    ``""`` for a kernel without shared arrays. ``previous``: :func:`snapshot` of the same
    block at the previous stop (changed elements highlighted); ``finished``: the launch
    has ended (nothing to show). All user text is escaped."""
    arrays = shared_arrays(ck, machine)
    if not arrays or finished:
        return ""
    head = f"<b>shared memory of block {html.escape(str(block))}</b>"
    try:
        k = check_block(machine, block)
    except SimulatorError as exc:
        return f"<div>{head}: {html.escape(str(exc))}</div>"
    marks = [m for m, on in (("yellow: changed since the previous stop", previous),
                             ("grey: never written since the block started",
                              machine.init is not None)) if on]
    marks = f" ({'; '.join(marks)})" if marks else ""
    parts = [f"<div>{head}{marks}</div>"]
    for a in arrays:
        title = f"<div><code>{html.escape(a.label)}</code> (line {a.line})</div>"
        if a.problem:
            parts.append(title + f"<div style='font-size:11px'>{html.escape(a.problem)}</div>")
            continue
        values, written = read_shared_array(machine, a, k)
        before = (previous or {}).get((a.symbol, a.name))
        parts.append(title + array_html(a, values, written, before))
    return "<div>" + "".join(parts) + "</div>"
