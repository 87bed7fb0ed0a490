"""The notebook debugger on the simulator: breakpoints by cell line, lanes, step back, the panel."""

import linecache

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.errors import SimulatorError

from nb_htmlparse import parse_view  # noqa: F401  (keeps the helper importable in this folder)

SRC = """\
%%warp_kernel
def scale(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), a: float):
    i = wl.tid()
    t = a * x[i]
    y[i] = t + 1.0
"""


@pytest.fixture()
def session():
    from warp_lab.notebook.debugger import debug

    linecache.cache["<dbg cell>"] = (len(SRC), None, SRC.splitlines(True), "<dbg cell>")
    ns = {"wl": wl}
    exec(compile("\n" + SRC.split("\n", 1)[1], "<dbg cell>", "exec"), ns)
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, dtype=np.float32)
    return debug(wl.kernel(ns["scale"]), dim=64, inputs=[x, y, 2.0], block_dim=32), y


def test_breakpoint_on_cell_line_stops_there(session):
    dbg, _ = session
    dbg.add_breakpoint(line=5)
    stop = dbg.cont()
    assert stop.source_line == 5 and stop.breakpoint is not None
    assert stop.block == (0, 0, 0) and stop.lanes == 32
    assert "Python line 5: <code>y[i] = t + 1.0</code>" in dbg.status_html()
    # the breakpoint fires again for the second block, not again in the first: y's address
    # arithmetic, hoisted above line 4 and credited to line 5 by line_zero, is no place to
    # stop (DWARF's is_stmt false), so the stop is at line 5's own add
    from warp_lab.compiler.line_zero import attributed_lines

    assert attributed_lines(dbg.compiled.ptx) and \
        stop.ptx_line not in attributed_lines(dbg.compiled.ptx)
    stop2 = dbg.cont()
    assert stop2.source_line == 5 and stop2.block == (1, 0, 0)


def test_lane_registers_and_changes_since_last_stop(session):
    dbg, _ = session
    dbg.add_breakpoint(line=5)
    dbg.cont()
    before = dbg.lanes()
    dbg.step()
    after = dbg.lanes()
    changed = {(name, k) for name in after.registers for k in range(32)
               if before.registers[name][k] != after.registers[name][k]}
    assert changed  # one instruction wrote one register in (some) lanes
    assert len({name for name, _ in changed}) == 1
    markup = dbg.lanes_html()
    assert markup.count("background:#fd4a") == len(changed)
    # at the store of line 5 a float32 register holds 2 * x[lane] + 1 in all 32 lanes
    while not dbg.where().text.startswith("st.global"):
        dbg.step()
    at_store = dbg.lanes()
    expected = 2.0 * np.arange(32, dtype=np.float32) + 1.0
    assert any(np.array_equal(at_store.as_type(name, "f32"), expected)
               for name, raw in at_store.raw.items() if raw.dtype.itemsize == 4)


def test_step_back_replays_to_the_same_state(session):
    dbg, _ = session
    dbg.step(7)
    state7 = dbg.lanes()
    dbg.step(3)
    stop = dbg.step_back(3)
    assert stop.step == 7
    again = dbg.lanes()
    for name in state7.raw:
        assert np.array_equal(state7.raw[name], again.raw[name])


def test_run_to_end_leaves_user_arrays_alone_and_reports(session):
    dbg, y = session
    res = dbg.run_to_end()
    assert not res.partial and res.findings == []
    end = dbg.where()
    assert not end and end.finished and end.findings == 0
    assert f"the launch has finished</b> after {end.step:,} steps" in dbg.status_html()
    assert not y.any()  # a debugging session works on simulator copies


def test_bad_breakpoint_is_a_clear_error(session):
    dbg, _ = session
    with pytest.raises(SimulatorError, match="no instruction on source line 40"):
        dbg.add_breakpoint(line=40)
    # the magic line has no code: the message says which lines of the kernel do
    with pytest.raises(SimulatorError, match=r"source line 1\b.*lines with code: .*3, 4, 5"):
        dbg.add_breakpoint(line=1)


def test_panel_buttons_drive_the_session(session):
    dbg, _ = session
    panel = dbg.panel()
    panel.line.value = 5
    panel.buttons["add breakpoint"].click()
    assert "#1: line 5" in panel.breakpoints.value
    panel.buttons["continue"].click()
    assert "Python line 5" in panel.status.value
    step = dbg.where().step
    panel.buttons["step"].click()
    assert dbg.where().step == step + 1 and "background:#fd4a" in panel.lanes.value
    panel.line.value = 99
    panel.buttons["add breakpoint"].click()
    assert "no instruction on source line 99" in panel.message.value
    panel.warp.value = 5  # a warp the block does not have: said, not raised
    assert "warps 0..0" in panel.lanes.value


def test_panel_line_inputs_start_at_the_kernels_first_line(session):
    """They started at 0, a line no kernel has; the toggle says which one a breakpoint
    takes, and editing an input selects it."""
    dbg, _ = session
    panel = dbg.panel()
    sm = dbg.compiled.source_map
    ptx_rows = sm.rows_of("ptx")
    first = min(ln for ln, ptx in ptx_rows.items() if sm.is_own(ln) and ptx)
    assert first >= dbg.compiled.source.first_line     # a line of the kernel, not 0
    assert panel.line.value == first and panel.ptx_line.value == min(ptx_rows[first])
    assert panel.break_at.value == "Python line"
    other = sorted({x for ln, xs in ptx_rows.items() if sm.is_own(ln) for x in xs})[1]
    panel.ptx_line.value = other  # another PTX line with code
    assert panel.break_at.value == "PTX line"
    panel.buttons["add breakpoint"].click()
    assert f"PTX {other}" in panel.breakpoints.value, panel.message.value
    panel.line.value = first + 1
    assert panel.break_at.value == "Python line"
    assert panel.buttons["add breakpoint"].layout.width == "auto"


def test_run_to_end_words_findings_as_wl_launch_does():
    """The session's findings name the Python array and the element, as ``wl.launch``'s do
    (not the PTX symbol and byte offsets)."""
    from warp_lab.notebook.debugger import debug

    src = ("%%warp_kernel\ndef shifted(x: wl.array(dtype=wl.float32), "
           "y: wl.array(dtype=wl.float32)):\n"
           "    tile = wl.shared_array(32, wl.float32)\n    t = wl.thread_idx.x\n"
           "    tile[t] = x[t]\n    wl.syncthreads()\n    y[t] = tile[t + 1] + x[t + 1]\n")
    linecache.cache["<dbg oob>"] = (len(src), None, src.splitlines(True), "<dbg oob>")
    ns = {"wl": wl}
    exec(compile("\n" + src.split("\n", 1)[1], "<dbg oob>", "exec"), ns)
    x = np.arange(32, dtype=np.float32)
    dbg = debug(wl.kernel(ns["shifted"]), dim=32, inputs=[x, np.zeros_like(x)], block_dim=32)
    (f,) = dbg.run_to_end().findings
    assert f.kind == "out_of_bounds" and f.thread == (31, 0, 0)
    assert "(tile[32] is past the end of tile (32 elements), the shared array of line 3;" \
        in f.message, f.message


# -- wl.debug and the lanes' printout ---------------------------------------------------------

def _vector_add_session(n=40, block_dim=64):
    from warp_lab.examples.basic import vector_add

    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 0.5, np.float32)
    dbg = wl.debug(vector_add, dim=n, inputs=[a, b, np.zeros(n, np.float32)],
                   block_dim=block_dim)
    return dbg, vector_add


def test_wl_debug_is_the_notebook_debugger():
    from warp_lab.notebook.debugger import DebugSession

    dbg, _ = _vector_add_session()
    assert isinstance(dbg, DebugSession)
    with pytest.raises(wl.LaunchError):  # wl.launch's argument checks, as documented
        wl.debug(_vector_add_session()[1], dim=40, inputs=[np.zeros(40, np.float32)])


def test_printed_lanes_are_a_table_with_names_types_and_inactive_lanes():
    from warp_lab.sim.debugger import WarpState

    dbg, kernel = _vector_add_session()
    body = kernel.source.first_line + 3  # c[i] = a[i] + b[i]
    dbg.add_breakpoint(line=body)
    dbg.cont()
    while not dbg.where().text.startswith("st.global"):
        dbg.step()
    lanes = dbg.lanes(warp=1)  # lanes 8..31 of warp 1 are past dim=40: absent
    assert isinstance(lanes, WarpState)
    text = str(lanes)
    assert text == repr(lanes) and "array([" not in text and len(text.splitlines()) < 80, text
    rows = {ln.split()[0]: ln for ln in text.splitlines() if ln.startswith("%")}
    # the parameters by name, the index by its Python line, the sum as float32
    for name in ("a.ptr", "b.ptr", "c.ptr", "dim.x", "wl.thread_idx.x"):
        assert sum(r.split()[2] == name for r in rows.values()) == 1, (name, text)
    index = next(r for r in rows.values() if "i = wl.tid()" in r)
    assert "32, 33, 34 … 63 (step 1)" in index
    sums = [r for r, ln in rows.items() if " f32 " in ln and "c[i] = a[i] + b[i]" in ln]
    expect = np.arange(32, 64, dtype=np.float32) + np.float32(0.5)
    found = [r for r in sums if np.array_equal(lanes.as_type(r, "f32")[:8], expect[:8])]
    assert found, text
    line = next(ln for ln in text.splitlines() if ln.startswith(found[0]))
    assert "32.5 33.5 34.5" in " ".join(line.split())  # floats short, lanes 0-7 active
    assert "[" in text.split(found[0], 1)[1].splitlines()[1]  # lanes 8-15: not running
    assert rows["%p1"].split()[1] == "pred" and " T " in rows["%p1"]  # predicates T/F
    # the arrays stay: every register's 32 values, typed and raw
    assert set(lanes.registers) == set(lanes.raw) and len(lanes.active) == 32
    assert lanes.active[:8].all() and not lanes.active[8:].any()


def test_lanes_display_as_html_in_a_jupyter_kernel(tmp_path):
    from nb_exec import execute_cells

    cells = ["import numpy as np, warp_lab as wl\n"
             "from warp_lab.examples.basic import vector_add\n"
             "n = 40\n"
             "dbg = wl.debug(vector_add, dim=n, inputs=[np.arange(n, dtype=np.float32), "
             "np.ones(n, np.float32), np.zeros(n, np.float32)])\n"
             "dbg.add_breakpoint(line=vector_add.source.first_line + 3); dbg.cont()\n"
             "for _ in range(9): dbg.step()",
             "dbg.lanes()"]
    nb = execute_cells(cells, tmp_path)
    errors = [o for c in nb.cells for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    data = nb.cells[1].outputs[0]["data"]
    page = data["text/html"]
    assert "<table class='wl-lanes'" in page and "a.ptr" in page and "<script" not in page
    assert "i = wl.tid()" in page  # the Python line, escaped text
    assert "array([" not in data["text/plain"] and "c.ptr" in data["text/plain"]



@wl.kernel
def _add_first(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    wl.atomic_add(out, 0, x[0])


def test_a_pointer_used_only_as_an_address_shows_as_an_address():
    # out.ptr is read only inside [...] of atom.global.add.f32: a u64 address, not a float
    # (it showed as 'f32 ... 0', the pointer's bits read as a float)
    from warp_lab.notebook.debugger import debug

    x, out = np.full(4, 3.0, np.float32), np.zeros(1, np.float32)
    dbg = debug(_add_first, dim=1, inputs=[x, out], block_dim=32)
    while not dbg.where().text.startswith("atom."):
        dbg.step()
    lanes = dbg.lanes()
    rows = {ln.split()[2]: ln.split() for ln in str(lanes).splitlines()
            if ln.startswith("%") and ln.split()[2].endswith(".ptr")}
    assert "out.ptr" in rows, str(lanes)
    reg, typ = rows["out.ptr"][:2]
    address = int(lanes.raw[reg][0])  # lane 0, the one thread inside dim=1
    assert typ == "u64" and address != 0, str(lanes)
    assert f"0x{address:x}" in rows["out.ptr"], str(lanes)
    # the HTML table says it the same way, in hex (it said 17592186044416 in decimal),
    # and its tooltip gives the decimal
    page = lanes._repr_html_()
    assert f" title='{address:,}'>0x{address:x}</td>" in page, page
    assert f">{address}</td>" not in page


def test_the_launch_end_is_said_not_none(session):
    """At the end of the launch cont(), where() and step() return a LaunchEnded that says
    so (it printed nothing: they returned None); falsy, so `while dbg.cont()` ends."""
    from warp_lab.notebook.debugger import LaunchEnded

    dbg, _ = session
    dbg.add_breakpoint(line=5)
    stops = []
    while (stop := dbg.cont()):
        stops.append(stop)
    assert [s.block for s in stops] == [(0, 0, 0), (1, 0, 0)] and not any(
        s.finished for s in stops)
    assert isinstance(stop, LaunchEnded) and stop.finished and stop.findings == 0
    assert stop == dbg.where() == dbg.cont() == dbg.step()   # and it stays there
    assert stop.step == dbg.debugger.step_count > 0
    assert repr(stop) == (f"<the launch has finished after {stop.step:,} steps, 0 findings; "
                          "run_to_end() returns the SimResult>")
    assert repr(dbg) == f"<DebugSession scale: finished after {stop.step:,} steps>"
    assert "the launch has finished" in dbg._repr_html_()
    back = dbg.step_back()
    assert back and back.step == stop.step - 1   # a Stop again


@wl.kernel
def _interior(u: wl.array(dtype=wl.float32, ndim=2), v: wl.array(dtype=wl.float32, ndim=2)):
    i, j = wl.tid()
    if i > 0 and j > 0 and i < u.shape[0] - 1 and j < u.shape[1] - 1:
        v[i, j] = u[i - 1, j] + u[i + 1, j]


def test_a_breakpoint_stop_shows_a_warp_that_runs_the_line():
    # warp 0 of block (0, 0, 0) is row i = 0, which skips the line: lanes() showed it,
    # '0 of 32 lanes execute the next instruction', instead of a warp at the breakpoint
    from warp_lab.notebook.debugger import debug

    u = np.arange(12 * 40, dtype=np.float32).reshape(12, 40)
    dbg = debug(_interior, dim=u.shape, inputs=[u, np.zeros_like(u)], block_dim=(32, 4))
    dbg.add_breakpoint(line=_interior.source.first_line + 4)  # v[i, j] = ...
    stop = dbg.cont()
    assert stop.block == (0, 0, 0) and stop.source_line == _interior.source.first_line + 4
    lanes = dbg.lanes()
    assert lanes.warp == 1 == dbg.warp, str(lanes)  # row i = 1: lanes j = 1..31 run it
    assert list(np.flatnonzero(lanes.active)) == list(range(1, 32)), str(lanes)
    assert "31 of 32 lanes execute the next instruction" in str(lanes)
    assert dbg.lanes(warp=0).warp == 0  # any warp can still be asked for
    dbg.step()
    assert dbg.warp == 1  # a step keeps the warp shown
    dbg.restart()
    dbg.warp = 0
    panel = dbg.panel()
    panel.buttons["continue"].click()  # the panel's warp box follows the stop
    assert panel.warp.value == 1 == dbg.warp


@wl.kernel
def _reads_unwritten(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    s = wl.shared_array(64, wl.float32)
    t = wl.thread_idx.x
    s[t] = x[t]
    wl.syncthreads()
    out[t] = s[t + 32]   # lanes 0..31 of a 32-thread block: s[32..63] is never written


def test_debug_runs_the_checks_wl_launch_runs_by_default():
    """wl.debug's checks default to wl.launch's "auto" (racecheck and initcheck for a
    shared-memory kernel); it left initcheck out, so the session missed what the launch
    reported."""
    from warp_lab.runtime.launch import auto_checks

    x, out = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    launched = wl.launch(_reads_unwritten, dim=32, inputs=[x, out], block_dim=32,
                         device="sim")
    dbg = wl.debug(_reads_unwritten, dim=32, inputs=[x, out], block_dim=32)
    assert dbg.checks == launched.checks == auto_checks(dbg.compiled) == (
        "memcheck", "racecheck", "initcheck", "barrier")
    found = dbg.run_to_end().findings
    assert [f.kind for f in found] == [f.kind for f in launched.findings]
    assert found and {f.kind for f in found} == {"uninitialized"}
    # without shared memory: memcheck and barrier, as wl.launch; and checks= still chooses
    plain, _ = _vector_add_session()
    assert plain.checks == ("memcheck", "barrier") == auto_checks(plain.compiled)
    none = wl.debug(_reads_unwritten, dim=32, inputs=[x, out], block_dim=32, checks=None)
    assert none.checks == () and none.run_to_end().findings == []


@wl.kernel
def first_sixteen(x: wl.array(dtype=wl.int32)):
    t = wl.thread_idx.x
    if t < 16:
        x[t] = 1
    x[t + 32] = 2


def test_a_branch_predicate_shows_its_compiled_test_not_the_python_condition():
    """LLVM may branch on the opposite of ``if t < 16:``; the lane table says what the
    predicate tests, and the values it shows are that test's, lane by lane."""
    import operator

    from warp_lab.notebook.debugger import debug

    dbg = debug(first_sixteen, dim=32, block_dim=32, inputs=[np.zeros(64, np.int32)])
    dbg.add_breakpoint(line=first_sixteen.source.first_line + 5)  # x[t + 32] = 2
    dbg.cont()
    lanes = dbg.lanes()
    preds = {r: what for r, (ty, what) in lanes.notes.items() if ty == "pred"
             and "if t < 16:" in what}
    assert len(preds) == 1, lanes.notes
    reg, what = preds.popitem()
    lhs, op, rhs = what.split(" (")[0].split()
    assert lhs == "wl.thread_idx.x", what
    ops = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
           "==": operator.eq, "!=": operator.ne}
    want = ops[op](np.arange(32), int(rhs))
    np.testing.assert_array_equal(lanes.predicates[reg], want)
    assert what.split(" (")[0] in str(lanes)   # the test leads the column: never cut off


def test_array_shows_what_the_simulated_launch_wrote_and_the_inputs_stay():
    from warp_lab.notebook.debugger import debug

    x = np.zeros(64, np.int32)
    dbg = debug(first_sixteen, dim=32, block_dim=32, inputs=[x])
    np.testing.assert_array_equal(dbg.array("x"), np.zeros(64, np.int32))
    dbg.run_to_end()
    want = np.zeros(64, np.int32)
    want[:16], want[32:] = 1, 2
    got = dbg.array("x")
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int32 and not x.any()     # the session worked on copies
    dbg.restart()
    np.testing.assert_array_equal(dbg.array("x"), np.zeros(64, np.int32))
    with pytest.raises(SimulatorError, match=r"'y' is not an array argument .*its arrays: x"):
        dbg.array("y")


BRANCH_SRC = """\
%%warp_kernel
def branch(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    i = wl.tid()
    v = x[i] * 2.0
    if i < 5:
        v = v + x[i + 32]
    y[i] = v
"""


def _html_row(markup: str, register: str) -> list[tuple[str, str]]:
    """(text, title) of the 32 lane cells of ``register``'s row in a lanes_html table."""
    import re

    row = next(r for r in markup.split("<tr>") if r.startswith(
        f"<th style='text-align:left'>{register}<"))
    return [(text, title or "") for title, text in
            re.findall(r"<td style='[^']*'(?: title='([^']*)')?>([^<]*)</td>", row)]


def test_registers_not_written_yet_show_as_not_set_not_zero():
    """PTX registers start undefined (the simulator holds 0): until an instruction writes
    one in a lane, the text table, the HTML table and the panel show ``—`` there."""
    import re

    from warp_lab.notebook.debugger import debug

    linecache.cache["<dbg branch>"] = (len(BRANCH_SRC), None, BRANCH_SRC.splitlines(True),
                                       "<dbg branch>")
    ns = {"wl": wl}
    exec(compile("\n" + BRANCH_SRC.split("\n", 1)[1], "<dbg branch>", "exec"), ns)
    x = np.arange(64, dtype=np.float32)
    dbg = debug(wl.kernel(ns["branch"]), dim=32, inputs=[x, np.zeros(32, np.float32)],
                block_dim=32)
    # nothing has run: every register of every lane is unset (the first instruction,
    # ld.param, has not executed yet)
    first = dbg.lanes()
    assert all(not first.is_set(n).any() for n in [*first.registers, *first.predicates])
    rows = [ln for ln in str(first).splitlines() if ln.startswith("%")]
    assert rows and all(ln.endswith("— ×32") for ln in rows), str(first)
    # one step: exactly the ld.param's destination is set, in all 32 lanes, to dim.x (32)
    dbg.step()
    ptx = dbg.compiled.ptx.splitlines()
    first_ins = ptx[dbg.debugger.module.code[0].line - 1].split()
    assert first_ins[0] == "ld.param.b32"
    dest = first_ins[1].rstrip(",")
    after = dbg.lanes()
    assert [n for n in after.registers if after.is_set(n).any()] == [dest]
    assert [c[0] for c in _html_row(dbg.lanes_html(), dest)] == ["32"] * 32
    # at the store: the load of x[i + 32] ran only in the lanes where i < 5 (the PTX
    # branches around it), so its register holds x[32..36] there and is unset elsewhere
    while not dbg.where().text.startswith("st.global"):
        dbg.step()
    load = next(ln for ln in ptx if re.search(r"ld\.global.*\+128\]", ln))
    reg = load.split()[1].rstrip(",")
    state = dbg.lanes()
    assert list(state.is_set(reg)) == [k < 5 for k in range(32)]
    cells = _html_row(dbg.lanes_html(), reg)
    assert [c[0] for c in cells[:5]] == ["32", "33", "34", "35", "36"]  # x[i + 32]
    assert all(text == "—" and "not set yet" in title for text, title in cells[5:])
    text_row = next(ln for ln in str(state).splitlines() if ln.startswith(reg))
    assert text_row.split()[-8:] == ["32", "33", "34", "35", "36", "—", "—", "—"]
    # the panel draws the same table
    assert _html_row(dbg.panel().lanes.value, reg) == cells


def test_a_long_register_note_is_cut_to_one_line_with_the_whole_note_in_its_title(session):
    """A note as long as a whole ``def`` line stays on one row of the lane table (ellipsis),
    the full text in the span's title; user text is escaped in both places."""
    import dataclasses
    import re

    from warp_lab.notebook.debugger import lanes_html

    dbg, _ = session
    dbg.add_breakpoint(line=5)
    dbg.cont()
    state = dbg.lanes()
    assert state.notes  # the real notes: parameters and lines
    name = next(iter(state.registers))
    long = ("line 2: def scale(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), "
            "a: float):  # '<b>x</b>' & \"y\"")
    page = lanes_html(dataclasses.replace(state, notes={**state.notes,
                                                         name: ("b32", long)}))
    spans = re.findall(r"<br><span style='([^']*)' title='([^']*)'>([^<]*)</span>", page)
    assert len(spans) > 2  # every register's note, the long one among them
    for style, title, text in spans:
        assert title == text
        assert "white-space:nowrap" in style and "text-overflow:ellipsis" in style
        assert "max-width" in style and "overflow:hidden" in style
    escaped = ("line 2: def scale(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32),"
               " a: float):  # &#x27;&lt;b&gt;x&lt;/b&gt;&#x27; &amp; &quot;y&quot;")
    assert (f"title='{escaped}'>{escaped}</span>") in page
    assert "<b>x</b>" not in page
