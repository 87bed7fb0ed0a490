"""The kernel bundle's Python rows (``python_rows``): a ``%%warp_kernel`` cell's device function
above the kernel is in them with its cell line numbers, a gap row stands for the skipped lines,
every Python line of the line map has a row, and the static view shows the same rows."""

import json

import warp_lab as wl

from nb_htmlparse import parse_view

# cell line 1 is the %%warp_kernel line; the comment between helper and kernel is skipped
CELL = """\
@wl.func
def scale(v: wl.float32) -> wl.float32:
    return v * 3.0 + 1.0  # <b>stays text</b>

# the kernel follows
N_UNUSED = 4

def k_rows(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    i = wl.tid()
    y[i] = scale(x[i])
"""


def _cell_line(text: str) -> int:
    """The cell line (magic line = 1) of the line of CELL starting with `text` (stripped)."""
    return next(k for k, ln in enumerate(CELL.splitlines(), start=2) if ln.strip().startswith(text))


def test_python_rows_hold_the_device_function_a_gap_and_the_kernel(ip):
    from warp_lab.notebook.bundle import MIME_TYPE

    ip.user_ns["wl"] = wl
    view = ip.run_cell_magic("warp_kernel", "--arch sm_80", CELL)
    data = view._repr_mimebundle_()
    bundle = json.loads(json.dumps(data[MIME_TYPE]))  # as the front end receives it
    lines = CELL.splitlines()
    helper = range(_cell_line("@wl.func"), _cell_line("return v") + 1)
    kernel = range(_cell_line("def k_rows"), len(lines) + 2)
    # the lines between them (not only blank ones) are one gap row
    expected = [[n, lines[n - 2]] for n in helper] + [[None, ""]] \
        + [[n, lines[n - 2]] for n in kernel]
    rows = bundle["python_rows"]
    assert rows == expected
    # the helper's return line produced PTX; that PTX links to a row the pane shows
    ret = _cell_line("return v")
    assert str(ret) in bundle["line_map"]["ptx"]
    shown = {n for n, _ in rows if n is not None}
    for pane in ("llvm", "ptx", "sass"):
        assert {int(k) for k in bundle["line_map"][pane]} <= shown, pane
    # older renderers read the kernel's own text from first_line, as before
    assert bundle["panes"]["python"]["text"].startswith("def k_rows(")
    assert bundle["panes"]["python"]["first_line"] == kernel[0]
    # the static view's Python pane shows the same rows (its gap row numbered "⋮")
    html_rows = [(ln["ln"], ln["src"]) for ln in parse_view(data["text/html"]).panes["python"]]
    assert html_rows == [("⋮" if n is None else str(n), t) for n, t in rows]


def test_the_sass_live_register_column_is_per_instruction_in_the_bundle(ip):
    """The bundle carries the SASS pane's live registers at each instruction (nvdisasm's
    life ranges), as the static view shows them, not only each Python line's most."""
    import re

    from warp_lab.analysis.registers import register_pressure
    from warp_lab.notebook.bundle import MIME_TYPE

    ip.user_ns["wl"] = wl
    view = ip.run_cell_magic("warp_kernel", "--arch sm_80", CELL)
    bundle = json.loads(json.dumps(view._repr_mimebundle_()[MIME_TYPE]))
    per_sass_line = bundle["pane_heat"]["sass"]["live_registers"]
    sass = bundle["panes"]["sass"]["text"].split("\n")
    by_offset = register_pressure(view.compiled).per_instruction
    expected = {}
    for k, line in enumerate(sass, 1):
        m = re.search(r"/\*([0-9a-f]{4,})\*/", line)
        if m and int(m.group(1), 16) in by_offset:
            expected[str(k)] = by_offset[int(m.group(1), 16)]
    assert per_sass_line == expected and len(expected) > 5
    # the Python column is each line's most over its SASS lines, so the two differ
    per_py = bundle["heat"]["live_registers"]
    sass_of = bundle["line_map"]["sass"]
    for py, most in per_py.items():
        shown = [per_sass_line[str(n)] for n in sass_of.get(py, []) if str(n) in per_sass_line]
        assert not shown or max(shown) <= most, py
    assert sorted(set(per_sass_line.values())) != sorted(set(per_py.values()))
