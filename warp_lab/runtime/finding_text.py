"""A simulator launch's findings in the user's terms (what :func:`sim_backend.run` returns).

The simulator speaks PTX: shared variables by symbol (``k_tile_3``), global
accesses by address and byte offset, lanes by number. :func:`user_findings`
rewrites each finding of a launch of a :class:`CompiledKernel` as the user
wrote the kernel: a shared variable as its Python array and line, an access
outside an array argument as that array's element index (``x[100] is past the
end of x (100 elements)``), a race or uninitialized read of whole elements of a
shared array as the element (``buf[63]``) and a race's other access by its Python
line and text, a lost update of a shared element with its atomic (``wl.atomic_or(s, 3,
value)``), a trap with the line its thread printed, and a
warp-sync or initcheck finding caused by the entry guard of a ``dim=`` launch
with a partial last block with that cause and the fix. ``details`` keep the
simulator's own terms (PTX symbol, byte offset). The simulator records in
``details["place"]`` the phrase of its message that says where an access lies
(``memops._fault``, ``racecheck.RaceTracker._report``, ``initcheck._report``); that
exact phrase is what gets replaced, so no pattern here restates the simulator's
wording.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from warp_lab.compiler.artifact import INDEX_CHECK_MARK
from warp_lab.compiler.source_lines import line_label, source_line_text
from warp_lab.compiler.typed_ast import DYNAMIC_SHARED
from warp_lab.errors import source_label

__all__ = ["user_findings", "merge_by_line", "ptx_columns", "element_place", "inside_index",
           "name_shared_arrays", "cell_text", "index_finding", "without_index_marks"]

#: what an ``index_checks`` kernel prints before its trap (``lower_expr._index_check``)
_INDEX_SAID = re.compile(re.escape(INDEX_CHECK_MARK) + r"(?P<file>.*):(?P<line>\d+):(?P<col>\d+): "
                         r"index \((?P<index>[-\d, ]+)\) out of bounds for shape "
                         r"\((?P<shape>[\d, ]+)\) in (?P<what>.*)$")


def cell_text(text: str, ck) -> str:
    """``text`` printed by ``ck`` (a debug-mode trap names its file) with each notebook
    cell's artifact name replaced by the cell it stands for now, as the notebook names it
    (:meth:`SourceMap.renamed <warp_lab.compiler.source_map.SourceMap.renamed>`)."""
    return ck.source_map.renamed(text, label=source_label)


def located_simulator_error(exc, ck):
    """``exc`` (a :class:`~warp_lab.errors.SimulatorError` of a launch of ``ck``: an
    opcode the simulator does not implement, a fault) with the source line its PTX line
    came from (``ck.source_map``): "... (line 6 of In[3]: x[i] = h2exp2(x[i]);)", the
    C++ or Python line the user wrote; ``exc`` itself when it names no PTX line or that
    line has none."""
    from warp_lab.errors import SimulatorError, source_label

    ptx_line = getattr(exc, "ptx_line", 0)
    if not ptx_line or getattr(exc, "source_line", 0):
        return exc
    where = ck.source_map.line_of_ptx(ptx_line)
    if where is None:
        return exc
    own = not ck.source_map.is_other_file(where.file)
    text = ck.source.line(where.line).strip() if own else ""
    said = f"line {where.line} of {source_label(where.file)}" + (f": {text}" if text else "")
    return SimulatorError(f"{exc} ({said})", ptx_line=ptx_line, source_line=where.line)


def user_findings(findings, ck, regions, bases, grid, block, launch_dim) -> list:
    """The simulator's ``findings`` of a launch of ``ck`` in the user's terms (:func:`_named`),
    one per problem at a Python line (:func:`merge_by_line`, with the ``.loc`` columns of
    ``ck.ptx``): what :func:`run` returns, and
    the notebook debugger's ``run_to_end``.

    Args:
        findings: :class:`~warp_lab.sim.result.Finding` records of the simulator.
        ck: the compiled kernel.
        regions, bases: from :func:`prepare`.
        grid, block, launch_dim: the launch's ``(x, y, z)`` triples.
    """
    named = _named(findings, ck, _view_places(ck, regions, bases), block, grid, launch_dim)
    return merge_by_line(named, ptx_columns(ck.ptx) if len(named) > 1 else None)


_PTX_LINE = re.compile(r"PTX line \d+")
#: what differs between the findings of LLVM's copies of one access (an unrolled loop's):
#: element indices, thread triples, addresses, counts
_EXAMPLE_SAID = re.compile(r"\[[^\]]*\]|0x[0-9a-fA-F]+|\d+")
#: a ``.loc file line column`` directive (PTX ISA, "Debugging Directives")
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
#: at most this many elements / threads are listed in a merged finding's message
_LISTED = 8


def ptx_columns(ptx: str) -> dict:
    """PTX line (1-based) → the column of the ``.loc`` in force there (1-based, as LLVM's
    ``DILocation`` has it; 0: none given) for every line after the first ``.loc`` of
    ``ptx``: an unrolled loop's copies of one access have the column of that access, two
    accesses of one line (``tile[t] + tile[t + 2]``) their own."""
    out, col = {}, None
    for n, text in enumerate(ptx.splitlines(), 1):
        m = _LOC.match(text)
        if m:
            col = int(m.group(3))
        elif col is not None:
            out[n] = col
    return out


def _merge_key(f, columns):
    """What findings of one group share (:func:`merge_by_line`): kind, file, line, and
    either the message with its PTX line numbers left out, or, given ``columns``, for a
    finding about an array or shared variable (``details["array"]`` / ``"variable"``: a
    race, an uninitialized read, a conflicting global store), that name, the access's
    column, the race's other line and kind of access, and the message with its indices,
    numbers and addresses left out."""
    d = f.details
    name = d.get("array", d.get("variable"))
    if name is None or columns is None:
        return (f.kind, f.source_file, f.source_line, _PTX_LINE.sub("PTX line #", f.message))
    return (f.kind, f.source_file, f.source_line, name, columns.get(f.ptx_line),
            d.get("other_source_line"), d.get("atomic"), d.get("read_ptx_line") is not None,
            d.get("space"),
            _EXAMPLE_SAID.sub("#", f.message))


def _listed(items) -> str:
    """``items`` (strings) joined with ", ", the first :data:`_LISTED` of them."""
    return ", ".join(items[:_LISTED]) + (", ..." if len(items) > _LISTED else "")


def merge_by_line(findings, columns=None) -> list:
    """``findings`` with those of one kind at one Python line (same file) that say one
    problem merged into the first of them, which then says how many PTX instructions,
    elements and threads it covers: ``"... (7 PTX instructions of this line: 63, 75, 87, 99,
    111, 123, 136; 7 elements of buf: buf[64], buf[32], ...)"``. The simulator reports once
    per PTX instruction, and a Python line may be several: an unrolled loop's copies of
    one ``shfl``, or of one shared-memory access, whose race is seen at another element
    and pair of threads in each copy. One problem: the same message but for its PTX line
    numbers; or, given ``columns`` (PTX line → ``.loc`` column, :func:`ptx_columns`), for a
    finding about an array or shared variable, the same array, the same access (its
    column), the same other line of a race, and the same message but for its
    element indices, thread indices, addresses and counts. Findings at other lines, of
    other kinds, about other arrays or other accesses of one line (``tile[t]`` and
    ``tile[t + 2]``), or racing with another line, stay apart; a finding on no Python
    line is kept as is. Order is that of each group's first finding, whose message,
    block, thread, PTX line and details stand for the group; a merged one's details add
    ``"ptx_lines"`` (sorted), a race's ``"other_ptx_lines"``, ``"merged"`` (how many
    findings) and ``"examples"``: per finding, in order, a dict of its ``ptx_line``,
    ``block``, ``thread`` and, where known, ``index`` and ``other_thread``.

    Args:
        findings: :class:`~warp_lab.sim.result.Finding` records in the user's terms.
        columns: PTX line → ``.loc`` column (:func:`ptx_columns` of the kernel's PTX), or
            None: only findings whose messages differ in PTX line numbers alone merge.
    """
    groups: dict = {}
    for f in findings:
        key = _merge_key(f, columns) if f.source_line else id(f)
        groups.setdefault(key, []).append(f)
    out = []
    for same in groups.values():
        first = same[0]
        if len(same) == 1:
            out.append(first)
            continue
        lines = sorted({f.ptx_line for f in same if f.ptx_line})
        examples = [{"ptx_line": f.ptx_line, "block": f.block, "thread": f.thread,
                     **{k: f.details[k] for k in ("index", "other_thread")
                        if f.details.get(k) is not None}} for f in same]
        details = {**first.details, "ptx_lines": lines, "merged": len(same),
                   "examples": examples}
        other = [f.details["other_ptx_line"] for f in same if "other_ptx_line" in f.details]
        if other:
            details["other_ptx_lines"] = sorted(set(other))
        said = []
        if len(lines) > 1:
            said.append(f"{len(lines)} PTX instructions of this line: "
                        f"{', '.join(map(str, lines))}")
        # messages alike but for PTX lines name no element or thread that differs
        alike = len({_PTX_LINE.sub("PTX line #", f.message) for f in same}) == 1
        name = first.details.get("array")
        indices = list(dict.fromkeys(e["index"] for e in examples if "index" in e))
        if name is not None and len(indices) > 1 and not alike:
            said.append(f"{len(indices)} elements of {name}: " + _listed(
                [f"{name}[{', '.join(map(str, i))}]" for i in indices]))
        threads = list(dict.fromkeys((f.block, f.thread) for f in same
                                     if f.thread is not None))
        if len(threads) > 1 and not alike:
            blocks = {b for b, _ in threads}
            said.append(f"{len(threads)} threads: " + _listed(
                [f"{t}" if len(blocks) == 1 else f"{t} of block {b}" for b, t in threads]))
        message = first.message + (f" ({'; '.join(said)})" if said else "")
        out.append(dataclasses.replace(first, message=message, details=details))
    return out


def _named(findings, ck, places=(), block=(1, 1, 1), grid=(1, 1, 1), launch_dim=None):
    """``findings`` as the user wrote the kernel: a shared variable named as its Python array
    and line (:func:`name_shared_arrays`; ``details`` keep the PTX symbol), a global access
    outside an array argument as that array's element index (:func:`element_place`, with
    ``places`` from :func:`_view_places` and ``block``, the threads per block), and the
    cells ``ck``'s debug-mode messages name as they are now: a trap finding quotes the line
    its thread printed (:func:`cell_text`). With ``grid`` and ``launch_dim``, a warp-sync or
    initcheck finding that threads removed by the entry guard of a ``dim=`` launch with a
    partial last block explain says so (:func:`_guard_cause`)."""
    sm = ck.source_map
    arrays: dict | None = None     # worked out only when a finding needs it

    def shared_arrays() -> dict:
        nonlocal arrays
        if arrays is None:
            arrays = sm.array_lines()
        return arrays

    shapes = {a.symbol for a in sm.arrays if a.shape is not None}
    out = []
    guarded = (launch_dim is not None and ck.entry_guard
               and any(d != g * b for d, g, b in zip(launch_dim, grid, block)))
    for f in findings:
        if guarded and f.kind in ("warp_sync", "uninitialized"):
            f = _guard_cause(f, ck, block, launch_dim)
        if f.kind == "out_of_bounds" and f.details.get("space") == "global" and places:
            f = _element_finding(f, ck, places, block)
        elif f.kind == "global_conflict" and places:
            f = _conflict_finding(f, places)
        elif f.kind == "out_of_bounds" and f.details.get("variable") in shapes:
            f = _shared_element_finding(f, ck, shared_arrays())
        elif f.kind in _SHARED_BYTE_KINDS and f.details.get("variable") is not None:
            f = _shared_byte_finding(f, ck, shared_arrays())
        if f.kind.startswith("race_") and f.details.get("other_ptx_line"):
            f = _other_access_line(f, ck)
        if f.kind == "divergent_barrier" and f.details.get("branch_ptx_line"):
            f = _branch_line(f, ck)
        if f.kind == "race_waw" and f.details.get("fix") and f.details.get("array"):
            f = _shared_update_finding(f, ck)
        if "shared variable" in f.message or DYNAMIC_SHARED in f.message:
            f = dataclasses.replace(f, message=name_shared_arrays(f.message, shared_arrays()))
        said = f.details.get("printed") if f.kind == "trap" else None
        if said and said.startswith(INDEX_CHECK_MARK):
            f, said = index_finding(f, shared_arrays()), None
        if said:
            f = dataclasses.replace(f, message=cell_text(f.message, ck),
                                    details={**f.details, "printed": cell_text(said, ck)})
        elif f.kind == "trap" and sm.cells:   # a CUDA assert's "file:line" (__assertfail)
            f = dataclasses.replace(f, message=cell_text(f.message, ck))
        out.append(f)
    return out


def index_finding(f, shared_arrays=None):
    """The ``trap`` finding ``f`` of an ``index_checks`` kernel's failed bounds check
    (:attr:`~warp_lab.options.CompileOptions.index_checks`; its thread printed
    :data:`~warp_lab.compiler.artifact.INDEX_CHECK_MARK`, the indices and the shape) as
    memcheck's ``out_of_bounds`` finding: the access as written and its column, the
    first axis whose index is out of bounds (the words of ``debug=True``'s message), the
    element and the array's shape (as an address finding says them, :func:`element_place`),
    with the declaring line of a shared array (``shared_arrays``: from
    :meth:`~warp_lab.compiler.source_map.SourceMap.array_lines`). ``details`` has them too:
    ``array``, ``index`` (the element, a tuple), ``shape``, ``axis``, ``axis_index``,
    ``extent``, ``column``, ``access``; ``check`` is ``"index"``. Its ``ptx_line`` is 0:
    the trap is in the variant's PTX, which no pane shows (``details["checked_ptx_line"]``
    keeps it). ``f`` itself when what it printed is not such a message.
    """
    m = _INDEX_SAID.match(f.details.get("printed", ""))
    if m is None:
        return f
    element = tuple(int(v) for v in m["index"].split(","))
    shape = tuple(int(v) for v in m["shape"].split(","))
    axis = next((k for k, (i, n) in enumerate(zip(element, shape)) if not 0 <= i < n), 0)
    what = m["what"]
    name = what.split("[", 1)[0] if "[" in what else "the array"
    shared = [lines for sname, lines in (shared_arrays or {}).values() if sname == name]
    of = f", the shared array of {_lines_of(shared[0])}" if len(shared) == 1 else ""
    details = {k: v for k, v in f.details.items() if k != "printed"}
    details.update(check="index", array=name, index=element, shape=shape, axis=axis,
                   axis_index=element[axis], extent=shape[axis], column=int(m["col"]),
                   access=what)
    details["checked_ptx_line"] = f.ptx_line   # of the variant, not the cell's PTX
    return dataclasses.replace(
        f, kind="out_of_bounds", ptx_line=0,
        message=f"out-of-bounds index in {what or 'an array access'} at column {m['col']} "
                f"(index {element[axis]} out of bounds for axis {axis} with size "
                f"{shape[axis]}): {name}[{', '.join(map(str, element))}] is outside {name} "
                f"(shape {shape}){of}",
        details=details)


def without_index_marks(text: str) -> str:
    """``text`` a launch printed without the lines of an ``index_checks`` kernel's
    failed bounds checks (:func:`index_finding` reports them as findings)."""
    if INDEX_CHECK_MARK not in text:
        return text
    return "".join(ln for ln in text.splitlines(keepends=True)
                   if not ln.startswith(INDEX_CHECK_MARK))


def _lines_of(lines) -> str:
    """``"line 7"`` or ``"lines 7, 9"``: where a shared array is declared."""
    return f"line{'s' * (len(lines) > 1)} {', '.join(map(str, lines))}"


def _past_dim(f, block, launch_dim, linear) -> list:
    """Of the threads of ``f``'s block with linear thread indices ``linear``, the indices of
    those at or past ``launch_dim`` on some axis: the entry guard returned them at once."""
    bx, by, _ = block
    out = []
    for t in linear:
        tid = (t % bx, (t // bx) % by, t // (bx * by))
        if any(b * n + i >= d for b, n, i, d in zip(f.block, block, tid, launch_dim)):
            out.append(t)
    return out


def _dim_text(ck, launch_dim) -> str:
    """``dim=`` as the launch gave it: ``1000`` or ``(30, 40)`` (the last index along x)."""
    dims = tuple(reversed(launch_dim[:ck.launch_ndim]))
    return str(dims[0]) if len(dims) == 1 else str(dims)


def _guard_cause(f, ck, block, launch_dim):
    """``f`` with its cause added when it comes from threads the entry guard removed (a
    ``dim=`` launch whose last block is partial: threads at or past ``dim`` return at the
    kernel's entry, as docs/language.md says):

    - ``warp_sync``: every lane of the membermask that had exited is past ``dim``, so they
      never reach the warp-synchronous instruction;
    - ``uninitialized``: the block has threads past ``dim``, which never write their part
      of shared memory.

    Other findings, and these when no thread involved is past ``dim``, are returned as is.
    """
    if f.block is None or f.thread is None:
        return f
    dim = _dim_text(ck, launch_dim)
    bx, by, bz = block
    x, y, z = f.thread
    if f.kind == "warp_sync":
        exited = f.details.get("exited", 0)
        warp = (x + y * bx + z * bx * by) // 32 * 32
        lanes = [warp + k for k in range(32) if exited >> k & 1]
        if not lanes or _past_dim(f, block, launch_dim, lanes) != lanes:
            return f
        op = f.message.split(" membermask", 1)[0]
        hint = f.details.get("hint")    # the simulator's fix for a mask: this one replaces it
        message = f.message.removesuffix(f"; fix: {hint}") if hint else f.message
        cause = (f"; its lanes past dim={dim} exited at the kernel's entry (wl.launch's dim= "
                 f"guard), so they never reach the {op}: launch whole warps (grid=/block=, or "
                 f"dim= a multiple of 32) so that every lane reaches it, and guard the "
                 f"loads and stores, not the {op}, with `if i < n`")
        return dataclasses.replace(f, message=message + cause,
                                   details={**f.details, "past_dim": len(lanes)})
    past = _past_dim(f, block, launch_dim, range(bx * by * bz))
    if not past:
        return f
    cause = (f"; {len(past)} of this block's {bx * by * bz} threads are past dim={dim} and "
             "exited at the kernel's entry (wl.launch's dim= guard), so shared memory that "
             "only they would write is never written: launch whole blocks (grid=/block=, or "
             "dim= a multiple of the block size) and guard the work with `if i < n`, "
             "writing a neutral value (such as 0) where i >= n")
    return dataclasses.replace(f, message=f.message + cause,
                               details={**f.details, "past_dim": len(past)})


def _view_places(ck, regions, bases) -> list:
    """``(name, element-0 address, element bytes, shape, strides, lo, hi)`` of each array
    argument on the simulator: the address of its element ``[0, ..., 0]``, the size of one
    element of its parameter's type, its extents and element strides, and the simulator
    span ``[lo, hi)`` of the region (allocation) holding it."""
    types = dict(ck.params)
    out = []
    for r in regions:
        base = bases[id(r)]
        for v in r.views:
            size = getattr(getattr(types.get(v.name), "dtype", None), "size", 0)
            if size:
                out.append((v.name, r.device_address(v, base), size, tuple(v.shape),
                            tuple(v.strides), base, base + r.nbytes))
    return out


def _element_finding(f, ck, places, block):
    """An out-of-bounds global finding ``f`` said by the element index of the array argument
    whose allocation it missed (:func:`element_place`) instead of bytes ("0 bytes past the
    end of 'x'" read as if in bounds), when exactly one argument lies in that allocation and
    the access is one whole element of it; else ``f``, bytes kept."""
    addr, size = f.details.get("address"), f.details.get("size", 0)
    place = f.details.get("place")            # memops._fault's, as in the message
    said = f" ({place})"
    if addr is None or place is None or said not in f.message:
        return f
    near = min(places, key=lambda p: max(p[5] - addr, addr - p[6] + 1, 0))
    same = [p for p in places if p[5:] == near[5:]]
    if len(same) != 1:
        return f   # aliasing arguments: which one the access went through is not known
    tid = None
    if f.thread is not None and f.block is not None and ck.launch_ndim == len(near[3]):
        g = [b * n + t for b, n, t in zip(f.block, block, f.thread)]
        tid = tuple(reversed(g[:ck.launch_ndim]))     # wl.tid(): (y, x), (z, y, x)
    found = element_place(near[0], addr - near[1], size, near[2], near[3], near[4], tid)
    if found is None:
        return f
    index, text = found
    return dataclasses.replace(f, message=f.message.replace(said, f": {text}", 1),
                               details={**f.details, "array": near[0], "index": index})


#: the Python operator of an update ``x op= v`` (store_conflicts' ``update_op``)
_UPDATE_SYMBOL = {"add": "+", "sub": "-", "or": "|", "and": "&", "xor": "^"}


def _conflict_finding(f, places):
    """A ``global_conflict`` finding ``f`` (threads of one store writing different values
    to one address, or the same value each computed from what it read there:
    :mod:`~warp_lab.sim.store_conflicts`) said as the array element it
    hits (``out[0]``, the one array argument whose element that is) with what the user can
    do: ``wl.atomic_add(out, 0, value)`` for a sum, or a reduction; with the
    read-modify-write cause (``out[0] += ...`` in every thread) when the threads read the
    element first. ``f`` unchanged when no single argument's element is the address (two
    arguments alias it, or the store is not one whole element)."""
    d = f.details
    addr, size = d.get("address"), d.get("size", 0)
    if addr is None:
        return f
    hits = [(p[0], idx) for p in places
            if (idx := inside_index(addr - p[1], size, p[2], p[3], p[4])) is not None]
    if len(hits) != 1:
        return f
    name, index = hits[0]
    said = ", ".join(map(str, index))
    element = f"{name}[{said}]"
    k, more = d.get("threads", 0), d.get("more_addresses", 0)
    if d.get("values", 2) > 1:
        text = (f"{k} threads store different values to {element} at once: only one "
                "thread's value is kept (which one is undefined on a GPU)")
    else:
        text = (f"{k} threads update {element} at once, all with the same value: one "
                f"update is kept where {k} were made")
    op = d.get("update_op")
    if d.get("read_ptx_line") is not None:
        text += (f"; each thread read {element} before any wrote it, so the other threads' "
                 f"updates are lost: a data race (`{_update_said(element, op)}` is a read, "
                 "then a separate write, not one atomic update)")
    if more:
        text += f"; {more} other element{'s' * (more > 1)} of {name} too"
    combine = _atomic_fix(name, said, op)
    if d.get("read_ptx_line") is None and d.get("values", 2) > 1:
        # a plain store, no read-modify-write: most often an index that is not one
        # element per thread (a forgotten block offset, swapped row and column)
        text += (f"; if each thread should write an element of its own, the index gives "
                 f"{k} threads this one: check how it is computed from wl.tid() (or "
                 f"wl.thread_idx and wl.block_idx); if their values should be combined, "
                 f"use {combine}")
    else:
        text += f"; fix: {combine}"
    return dataclasses.replace(f, message=text,
                               details={**d, "array": name, "index": index})


def _update_said(element: str, op) -> str:
    """The update ``x op= ...`` of ``element`` as the user wrote it (``h[0] |= ...``), from
    its PTX operation ``op`` (store_conflicts' ``update_op``; None: a sum is assumed)."""
    return (f"{element} {_UPDATE_SYMBOL[op]}= ..." if op in _UPDATE_SYMBOL else
            f"{element} = {op}({element}, ...)" if op else f"{element} += ...")


def _atomic_fix(name: str, said: str, op) -> str:
    """The fix of lost updates of element ``said`` (its index as written) of array ``name``:
    the atomic of their operation ``op`` (None: ``wl.atomic_add`` for a sum), or a
    reduction."""
    if op:
        # (update_op is found only for a read-modify-write: the atomic of its operation)
        return (f"wl.atomic_{op}({name}, {said}, value), which does the update in one "
                "step, or a reduction (each thread combines into a register or its own "
                "element, then one thread or one atomic per block combines them)")
    return (f"wl.atomic_add({name}, {said}, value) for a sum (wl.atomic_max/min/... "
            "likewise), or a reduction (each thread adds into a register or its own "
            "element, then one thread or one atomic per block combines them)")


def _shared_update_finding(f, ck):
    """A racecheck lost-update finding ``f`` (``s[k] |= bit`` by several threads of a block:
    :meth:`~warp_lab.sim.racecheck.RaceTracker._lost_update`) about a whole element of a shared
    array said as the user wrote it: the element read, the update (`` `s[0] |= ...` is a
    read, then a separate write``) and the atomic that fixes it (``wl.atomic_or(s, 0,
    value)``), as :func:`_conflict_finding` says a global one. Replaces the phrases the
    simulator recorded (``details["read"]``, ``"update"``, ``"fix"``)."""
    d = f.details
    index = d["index"]
    said = str(index[0]) if len(index) == 1 else f"({', '.join(map(str, index))})"
    element = f"{d['array']}[{', '.join(map(str, index))}]"
    read = f"this thread's read of {element}"
    key = ck.source_map.key_of_ptx(int(d["read_ptx_line"]))
    if key and key != f.source_line:
        read += f" at line {line_label(ck, key)}"
    message = f.message
    for phrase, text in ((d.get("read"), read),
                         (d["update"], f"a data race: `{_update_said(element, d.get('update_op'))}`"
                                       " is a read, then a separate write, not one atomic "
                                       "update"),
                         (d["fix"], _atomic_fix(d["array"], said, d.get("update_op")))):
        if phrase:
            message = message.replace(phrase, text, 1)
    return dataclasses.replace(f, message=message)


def inside_index(offset: int, size: int, itemsize: int, shape: tuple, strides: tuple):
    """The index of the element of an array that an access ``offset`` bytes from its
    element ``[0, ..., 0]`` is, or None: the access is not one whole element, or no
    in-bounds index reaches it.

    Args:
        offset: bytes from element 0 (negative before it).
        size: bytes accessed.
        itemsize: bytes per element.
        shape, strides: extents and strides in elements (a negative stride: a reversed
            axis; a zero stride, a broadcast axis, is left out when its extent is 1, else
            no index is returned since several reach the address).
    """
    if size != itemsize or offset % itemsize or not shape or 0 in shape:
        return None
    e = offset // itemsize
    if any(s == 0 and n > 1 for s, n in zip(strides, shape)):
        return None
    # a reversed axis counts from its far end: i * s == (n - 1) * s + (n - 1 - i) * |s|
    e -= sum((n - 1) * s for s, n in zip(strides, shape) if s < 0)
    index = [0] * len(shape)
    for k in sorted(range(len(shape)), key=lambda k: -abs(strides[k])):
        s = abs(strides[k])
        if s == 0:
            continue
        j = e // s
        if not 0 <= j < shape[k]:
            return None
        e -= j * s
        index[k] = j if strides[k] > 0 else shape[k] - 1 - j
    return tuple(index) if e == 0 else None


def _shared_element_finding(f, ck, arrays):
    """An out-of-bounds finding ``f`` about a ``wl.shared_array`` said by its element index
    (:func:`element_place`, the thread's own index ``(z, y, x)`` breaking ties, as shared
    arrays are indexed by ``wl.thread_idx``) when the access is one whole element; else ``f``."""
    sym = f.details["variable"]
    array = ck.source_map.shaped(sym)
    itemsize, shape = array.itemsize, array.shape
    name, lines = arrays.get(sym, (None, ()))
    place = f.details.get("place")             # memops._var_place's, as in the message
    if name is None or not place or place not in f.message or "variable_offset" not in f.details:
        return f
    strides = tuple(int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape)))
    tid = tuple(reversed(f.thread[:len(shape)])) if f.thread is not None else None
    offset = f.details["address"] - f.details["variable_offset"]
    offset = (offset + (1 << 31)) % (1 << 32) - (1 << 31)  # 32-bit offsets wrap below 0
    said = element_place(name, offset, f.details.get("size", 0), itemsize, shape, strides, tid)
    if said is None:
        return f
    index, text = said
    return dataclasses.replace(
        f, message=f.message.replace(place, f"{text}, the shared array of {_lines_of(lines)}", 1),
        details={**f.details, "array": name, "index": index})


#: the findings that name a byte of a shared variable (``details["place"]``): racecheck's
#: hazards (``racecheck.RaceTracker._report``) and initcheck's unwritten byte
_SHARED_BYTE_KINDS = ("race_raw", "race_war", "race_waw", "uninitialized")


def _shared_byte_finding(f, ck, arrays):
    """A race or ``uninitialized`` finding ``f`` about a byte of a ``wl.shared_array`` said
    by the element holding that byte (``buf[63]``, ``tile[3, 7]``, the array's line) when
    the access is whole elements of it (``details["address"]`` and ``"size"``: the access's
    first byte in the block's shared memory and its bytes per thread); else ``f``, bytes
    kept: an access inside an element (a vector's component) and the dynamic shared memory,
    whose ``wl.dynamic_shared_array`` views may differ in element type and which one the
    access went through is not known."""
    sym, d = f.details["variable"], f.details
    array = ck.source_map.shaped(sym)
    name, lines = arrays.get(sym, (None, ()))
    said = d.get("place")                       # the simulator's, as in the message
    if f.kind == "uninitialized" and said:      # "... of 4 bytes ... at address 0xfc: <place> "
        said = (f" of {d.get('size')} bytes of uninitialized shared memory at address "
                f"{d.get('address', 0):#x}: {said} ")
    if (array is None or name is None or not said or said not in f.message
            or sym == DYNAMIC_SHARED
            or any(d.get(k) is None for k in ("address", "size", "offset", "shared_offset"))):
        return f
    itemsize, shape = array.itemsize, array.shape
    start = d["address"] - (d["shared_offset"] - d["offset"])   # from the array's start
    e, size = d["offset"] // itemsize, d["size"]
    if not shape or start % itemsize or size % itemsize or not 0 <= e < np.prod(shape):
        return f
    index = tuple(int(i) for i in np.unravel_index(e, shape))   # row-major, as declared
    place = f"{name}[{', '.join(map(str, index))}], the shared array of {_lines_of(lines)}"
    if f.kind == "uninitialized":
        text = f" of uninitialized shared memory: {place}, "
    else:
        text = place
    return dataclasses.replace(f, message=f.message.replace(said, text, 1),
                               details={**d, "array": name, "index": index})


def _other_access_line(f, ck):
    """A race finding ``f`` naming its other access by its Python line and that line's text
    (``at line 5 (buf[t] = x[wl.tid()])``, another cell's as ``In[3] line 5``) instead of
    its PTX line, which ``details["other_ptx_line"]`` keeps (``"other_source_line"``: the
    line's key in ``ck.source_map``, ``"other_source_text"``: its text); ``f`` when the PTX
    line is on no Python line."""
    return _said_at_python_line(f, ck, "other", "at")


def _branch_line(f, ck):
    """A ``divergent_barrier`` finding ``f`` naming the branch its exited threads took
    around the barrier by its Python line and that line's text (``took another path at
    line 8 (if t < 16:)``, another cell's as ``In[3] line 8``) instead of its PTX line,
    which ``details["branch_ptx_line"]`` keeps (``"branch_source_line"``: the line's key
    in ``ck.source_map``, ``"branch_source_text"``: its text); ``f`` when the PTX line is
    on no Python line."""
    return _said_at_python_line(f, ck, "branch", "another path at")


def _said_at_python_line(f, ck, what: str, lead: str):
    """``f`` with ``"{lead} PTX line N"`` of its message (N: ``details[what + "_ptx_line"]``)
    said as ``"{lead} line L (source)"``, and ``what + "_source_line"``/``"_source_text"``
    added to its details; ``f`` when line N is on no Python line or the message does not
    say it."""
    ptx = int(f.details[f"{what}_ptx_line"])
    key = ck.source_map.key_of_ptx(ptx)
    said = f"{lead} PTX line {ptx}"
    if not key or said not in f.message:
        return f
    label, code = line_label(ck, key), source_line_text(ck, key)
    where = f"{lead} line {label}" if label.isdigit() else f"{lead} {label}"
    if code:
        where += f" ({code})"
    return dataclasses.replace(f, message=f.message.replace(said, where, 1),
                               details={**f.details, f"{what}_source_line": key,
                                        f"{what}_source_text": code})


def element_place(name: str, offset: int, size: int, itemsize: int, shape: tuple,
                  strides: tuple, tid: tuple | None = None):
    """Where an access ``offset`` bytes from element ``[0, ..., 0]`` of array ``name`` falls,
    as an element index: ``((100,), "x[100] is past the end of x (100 elements)")`` or
    ``((-1, -1), "src[-1, -1] is outside src (shape (64, 96))")``.

    Args:
        name: the array's parameter name.
        offset: bytes from element 0 to the access (negative before it).
        size: bytes accessed.
        itemsize: bytes per element (the parameter's dtype).
        shape, strides: the array's extents and strides in elements.
        tid: the accessing thread's ``wl.tid()`` when it has one index per axis, or None.

    Returns:
        ``(index, text)``, or None when the access is not one whole element (the byte
        offset is then the clearer description), or no index reaches the address.

    Several indices of an N-D array reach one address (``src[i, 96]`` is ``src[i + 1, 0]``
    for 96 columns): the one nearest to the array's bounds (sum over axes of how far each
    index lies outside), then nearest to ``tid`` (a stencil's ``src[i - 1, j - 1]`` at
    thread (0, 0) is ``src[-1, -1]``), then the one with the inner indices in bounds.
    """
    if size != itemsize or offset % itemsize or not shape or 0 in shape:
        return None
    e = offset // itemsize
    n = len(shape)
    order = sorted(range(n), key=lambda k: -abs(strides[k]))  # outermost axis first
    if strides[order[-1]] == 0:
        return None

    def rest(e, axes):
        """Indices on ``axes`` (in ``order``) reaching ``e``, outer ones near their floor."""
        if len(axes) == 1:
            s = strides[axes[0]]
            return [{axes[0]: e // s}] if e % s == 0 else []
        s = strides[axes[0]]
        g = e // s if s else 0
        out = []
        for i in ((g - 2, g - 1, g, g + 1, g + 2) if s else (0,)):
            for tail in rest(e - i * s, axes[1:]):
                out.append({axes[0]: i, **tail})
        return out

    found = [tuple(c[k] for k in range(n)) for c in rest(e, order)]
    if not found:
        return None

    def outside(idx):
        return sum(max(-i, i - (d - 1), 0) for i, d in zip(idx, shape))

    def near_tid(idx):
        return sum(abs(i - t) for i, t in zip(idx, tid)) if tid is not None else 0

    def inner_out(idx):
        return [max(-idx[k], idx[k] - (shape[k] - 1), 0) for k in reversed(order)]

    index = min(found, key=lambda idx: (outside(idx), near_tid(idx), inner_out(idx)))
    if not outside(index):
        return None   # an element of the array after all (not for an access it missed)
    if n == 1:
        i = index[0]
        where = "past the end of" if i >= shape[0] else "before the start of"
        count = f"{shape[0]} element{'s' * (shape[0] != 1)}"
        return index, f"{name}[{i}] is {where} {name} ({count})"
    return index, (f"{name}[{', '.join(map(str, index))}] is outside {name} "
                   f"(shape {tuple(shape)})")


_SHARED_VAR = re.compile(r"shared variable ([\w$]+)")


def name_shared_arrays(text: str, arrays: dict) -> str:
    """``text`` (a simulator finding's message) with each PTX shared variable named as the
    Python array and the line declaring it: "shared variable k_tile_3" -> "shared array tile
    (line 7)", "the dynamic shared memory (__wl_dynamic_shared, ..." -> "... (wl.dynamic_
    shared_array buf, line 3, ...". ``arrays``: symbol -> (name, lines), from
    :meth:`~warp_lab.compiler.source_map.SourceMap.array_lines`; a symbol it lacks stays."""
    def array(m):
        name, lines = arrays.get(m.group(1), (None, ()))
        return m.group(0) if name is None else f"shared array {name} ({_lines_of(lines)})"

    text = _SHARED_VAR.sub(array, text)
    name, lines = arrays.get(DYNAMIC_SHARED, (None, ()))
    if name is not None:
        text = text.replace(f"({DYNAMIC_SHARED}, ",
                            f"(wl.dynamic_shared_array {name}, {_lines_of(lines)}, ")
    return text
