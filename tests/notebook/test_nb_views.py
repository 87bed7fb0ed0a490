"""The static HTML views on real PTX/SASS: pane text, escaping, colours per the line map."""

import json
import re

import warp_lab as wl
from warp_lab.errors import KernelCompileError
from warp_lab.notebook.bundle import MIME_TYPE, KernelView, kernel_bundle
from warp_lab.notebook.highlight import PALETTE
from warp_lab.notebook.views import compact_sass, error_html, kernel_html

from nb_htmlparse import parse_view
from nb_records import PY_SOURCE, saxpy_record


def test_every_pane_carries_its_text_line_by_line():
    ck = saxpy_record()
    view = parse_view(kernel_html(ck))
    expected = {"python": ck.source.text, "llvm": ck.llvm_ir_optimized,
                "llvm_unoptimized": ck.llvm_ir, "ptx": ck.ptx, "sass": compact_sass(ck.sass)}
    for pane, text in expected.items():
        got = [line["src"] for line in view.panes[pane]]
        assert got == text.splitlines(), pane


def test_python_pane_uses_cell_line_numbers():
    ck = saxpy_record()
    lines = parse_view(kernel_html(ck)).panes["python"]
    assert [int(x["ln"]) for x in lines] == list(range(2, 2 + len(PY_SOURCE.splitlines())))


def test_user_text_is_escaped():
    ck = saxpy_record()
    markup = kernel_html(ck)
    # the kernel comment holds <script>alert("x")</script>: it must appear only as text
    assert "<script>alert" not in markup
    assert "&lt;script&gt;alert" in markup
    view = parse_view(markup)
    assert len(view.scripts) == 1 and "alert" not in view.scripts[0]
    assert any('<script>alert("x")</script>' in line["src"] for line in view.panes["python"])


def test_colour_of_python_line_equals_colour_of_its_ptx_llvm_sass_lines():
    ck = saxpy_record()
    view = parse_view(kernel_html(ck))
    py_style = {int(line["ln"]): line["style"] for line in view.panes["python"]}
    sm = ck.source_map
    assert sm.rows_of("ptx") and sm.rows_of("sass") and sm.rows_of("llvm")
    for pane, mapping in ((pane, sm.rows_of(pane)) for pane in ("ptx", "llvm", "sass")):
        by_number = {int(line["ln"]): line for line in view.panes[pane]}
        for py, pane_lines in mapping.items():
            assert py_style[py] and "background-color" in py_style[py]
            for n in pane_lines:
                assert by_number[n]["style"] == py_style[py], (pane, py, n)
                assert by_number[n]["py"] == str(py)
    # distinct Python lines get distinct colours
    colours = {py_style[py] for py in sm.keys}
    assert len(colours) == len(sm.keys)
    # lines that no Python line produced carry no colour
    ptx_mapped = {n for ns in sm.rows_of("ptx").values() for n in ns}
    for line in view.panes["ptx"]:
        if int(line["ln"]) not in ptx_mapped:
            assert line["style"] is None and line["py"] is None


def test_missing_stage_is_explained():
    import dataclasses
    ck = dataclasses.replace(saxpy_record(), sass=None, missing={"sass": "nvdisasm not <found>"})
    markup = kernel_html(ck)
    assert "nvdisasm not &lt;found&gt;" in markup
    assert parse_view(markup).panes["sass"] == []


def test_heat_column_values():
    ck = saxpy_record()
    view = parse_view(kernel_html(ck, heat={"instr": {3: 4096, 5: 1024}}, script=False))
    by_ln = {int(x["ln"]): x for x in view.panes["python"]}
    assert by_ln[3]["heat"] == ["4,096"] and by_ln[5]["heat"] == ["1,024"]
    assert by_ln[4]["heat"] == [""]
    assert view.scripts == []


def test_snippets_embed_side_by_side():
    ck = saxpy_record()
    a, b = kernel_html(ck), kernel_html(ck)
    ida = parse_view(a).scripts[0].split('"')[1]
    idb = parse_view(b).scripts[0].split('"')[1]
    assert ida != idb and f'id="{ida}"' in a


def test_resource_card_shows_ptxas_numbers():
    ck = saxpy_record()
    markup = kernel_html(ck)
    assert f"<th>registers / thread</th><td>{ck.resources.registers}</td>" in markup


def test_error_box_has_cell_line_caret_and_escapes():
    err = KernelCompileError("cannot assign to <script>", "<stdin>", 4, 9,
                             "    y = '<script>'", hint="use a local")
    markup = error_html(err)
    assert "&lt;stdin&gt;:4:9: error: cannot assign to &lt;script&gt;" in markup
    assert "<script>" not in markup
    assert "\n            ^" in markup  # caret under column 9, after the 4-space indent
    assert "Traceback" not in markup


def test_bundle_follows_schema_and_is_json():
    ck = saxpy_record()
    b = kernel_bundle(ck, heat={"instructions": {3: 10}})
    json.dumps(b)
    assert b["version"] == 1 and b["name"] == "saxpy" and b["arch"] == "sm_90"
    assert b["panes"]["python"] == {"text": PY_SOURCE, "first_line": 2, "filename": "In[1]"}
    assert b["panes"]["ptx"]["text"] == ck.ptx
    assert b["line_map"]["ptx"] == {str(k): list(v) for k, v in ck.source_map.rows_of("ptx").items()}
    assert b["line_map"]["sass"] == {str(k): list(v) for k, v in ck.source_map.rows_of("sass").items()}
    assert set(b["colors"]) == {str(k) for k in ck.source_map.keys}
    assert all(c in PALETTE for c in b["colors"].values())
    assert b["resources"]["registers"] == ck.resources.registers
    assert b["heat"] == {"instructions": {"3": 10}}


def test_kernel_view_mimebundle():
    view = KernelView(saxpy_record())
    data = view._repr_mimebundle_()
    assert set(data) == {"text/plain", "text/html", MIME_TYPE}
    assert data["text/plain"].startswith("<CompiledKernel saxpy for sm_90 -O3")
    assert set(view._repr_mimebundle_(include={"text/plain"})) == {"text/plain"}
    assert MIME_TYPE not in view._repr_mimebundle_(exclude={MIME_TYPE})


def test_a_gap_between_pane_parts_has_no_number_and_no_link():
    from warp_lab.notebook.views import pane_html

    markup = pane_html("python", "def f():\n    pass\n\ndef k():\n    f()",
                       numbers=[2, 3, None, 9, 10], py_of_line={2: 2, 3: 3, 9: 9, 10: 10})
    lines = parse_view(markup).panes["python"]
    assert [(ln["ln"], ln["py"]) for ln in lines] == \
        [("2", "2"), ("3", "3"), ("⋮", None), ("9", "9"), ("10", "10")]


def test_constant_memory_ptxas_did_not_report_is_not_shown_as_0():
    # ptxas -v prints no "cmem[0]" for sm_90 though the parameters live in constant bank 0
    # (the SASS reads c[0x0][...]): the card must not claim 0 bytes
    from warp_lab.notebook.views import resource_card_html

    ck = saxpy_record()
    assert ck.resources.const == 0 and "c[0x0]" in ck.sass
    card = resource_card_html(ck)
    assert "<th>constant memory</th><td>0 bytes</td>" not in card
    assert "<th>constant memory</th><td>not reported by ptxas for sm_90</td>" in card


@wl.kernel
def _flag_and_dynamic(out: wl.array(dtype=wl.int32)):
    flag = wl.shared_array(1, wl.int32)
    dyn = wl.dynamic_shared_array(wl.float32)
    t = wl.thread_idx.x
    if t == 0:
        wl.atomic_store(flag, 0, 3)
    wl.syncthreads()
    dyn[t] = 1.0
    out[t] = wl.atomic_load(flag, 0) + wl.int32(dyn[0])


def test_shared_variables_map_to_the_python_arrays():
    # a one-element shared array stays one .shared array (lower.keep_shared_whole: LLVM
    # split it into the scalar k_flag_N_$_0 before); the dynamic shared memory maps to
    # the wl.dynamic_shared_array
    from warp_lab.notebook.results import _finding_text
    from warp_lab.runtime.finding_text import name_shared_arrays
    from warp_lab.sim.result import Finding

    ck = wl.compile(_flag_and_dynamic, cache=False, sass=False)
    first = _flag_and_dynamic.source.first_line
    arrays = ck.source_map.array_lines()
    split = [s for s in arrays if s.startswith("_flag_and_dynamic_flag_")]
    assert len(split) == 1 and "$" not in split[0], arrays
    assert arrays[split[0]] == ("flag", (first + 2,))
    assert arrays["__wl_dynamic_shared"] == ("dyn", (first + 3,))
    f = Finding("uninitialized", name_shared_arrays(
        f"read of byte 0 of shared variable {split[0]} of 4 bytes", arrays))
    assert f.message == f"read of byte 0 of shared array flag (line {first + 2}) of 4 bytes"
    assert f"shared array <code>flag</code> (line {first + 2})" in _finding_text(f, ck)
    f = Finding("out_of_bounds", "out-of-bounds shared read (flag[1] is past the end of flag "
                "(1 element), the shared array of line 5; the block has 8 bytes)")
    assert "<code>" not in _finding_text(f, ck)



def _luminance(hex_color: str) -> float:
    """WCAG 2.1 relative luminance of ``#rrggbb``."""
    channels = [int(hex_color[k:k + 2], 16) / 255 for k in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_code_boxes_set_their_own_text_colour_against_their_background():
    """The code boxes have Pygments' light background; their plain text must not take
    the page's colour (white in JupyterLab Dark or VS Code's dark theme) and vanish."""
    import re
    from warp_lab.notebook.views import style_block

    css = style_block()
    scope = re.escape(".wl-kernel .wl-code")
    backgrounds = re.findall(scope + r" \{[^}]*background: (#[0-9a-fA-F]{6})", css)
    colours = re.findall(scope + r" \{[^}]*[^-]color: (#[0-9a-fA-F]{6})", css)
    assert backgrounds and colours, css
    lighter, darker = sorted((_luminance(backgrounds[-1]), _luminance(colours[-1])), reverse=True)
    assert (lighter + 0.05) / (darker + 0.05) >= 7.0   # WCAG AAA for body text


def test_sass_pane_hides_nvdisasm_file_comments_and_counts_instructions():
    """nvdisasm's ``//## File "...", line N`` rows (every other row of a small kernel) are
    hidden in the static view, as the extension hides them; the header counts instructions
    (16 bytes each from sm_70 on: the last offset says how many), the visible rows keep
    the text's own line numbers and every instruction row its Python line."""
    from warp_lab.examples import get

    for ck in (saxpy_record(), wl.compile(get("device_funcs").kernel, arch="sm_90")):
        view = parse_view(kernel_html(ck))
        rows = view.panes["sass"]
        text = compact_sass(ck.sass).splitlines()
        assert [r["src"] for r in rows] == text and [int(r["ln"]) for r in rows] == list(
            range(1, len(text) + 1))  # the gutter: the text's line numbers, hidden rows too
        hidden = [r for r in rows if r["hidden"]]
        assert hidden and all(r["src"].lstrip().startswith('//## File "') for r in hidden)
        assert all(r["py"] is None for r in hidden)
        assert not any("//##" in r["src"] for r in rows if not r["hidden"])
        offsets = [int(m, 16) for m in re.findall(r"^\s*/\*([0-9a-f]{4})\*/", ck.sass, re.M)]
        assert offsets == list(range(0, 16 * len(offsets), 16))
        assert view.counts["sass"] == f"{len(offsets)} instructions"
        mapped = {n: py for py, ns in ck.source_map.rows_of("sass").items() for n in ns}
        assert mapped and {int(r["ln"]): int(r["py"]) for r in rows if r["py"]} == mapped
        assert view.counts["ptx"] == f"{len(ck.ptx.splitlines())} lines"


def test_nbconvert_html_export_keeps_indentation_and_sass_columns():
    """nbconvert's HTML exporter passes the page through BeautifulSoup, whose html.parser
    turns a whitespace-only text between two tags into one space outside <pre>: every
    Python line's indentation and nvdisasm's columns were lost in an exported notebook.
    Each row's code is a <pre>, whose whitespace survives."""
    import nbformat
    from nbconvert import HTMLExporter

    ck = saxpy_record()
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("saxpy")
    cell.outputs = [nbformat.v4.new_output("display_data", data={
        "text/html": kernel_html(ck), "text/plain": repr(ck)})]
    nb.cells = [cell]
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    view = parse_view(body)
    python = [r["src"] for r in view.panes["python"]]
    assert python == ck.source.text.splitlines()
    assert any(line.startswith("    ") for line in python)
    assert [r["src"] for r in view.panes["sass"]] == compact_sass(ck.sass).splitlines()


def test_sass_pane_shows_instructions_without_nvdisasms_column_padding():
    """As the extension's compactSass: offset, a 4-character guard column, the instruction
    (nvdisasm's ~30 blanks pushed the code out of the pane); the same words, line for
    line, and the guard predicates of a real kernel (@P0 EXIT) in their column."""
    ck = saxpy_record()
    shown = compact_sass(ck.sass).splitlines()
    raw = ck.sass.splitlines()
    assert len(shown) == len(raw) and [a.split() for a in shown] == [b.split() for b in raw]
    rows = [ln for ln in shown if re.match(r"/\*[0-9a-f]{4}\*/ ", ln)]
    assert rows and all(len(ln) > 14 and ln[13] == " " and ln[14] != " " for ln in rows)
    guarded = [ln for ln in rows if ln[9] == "@"]
    assert guarded and all(re.match(r"/\*[0-9a-f]{4}\*/ @!?U?P\w+ +[A-Z]", ln) for ln in guarded)
    for a, b in zip(shown, raw):  # each instruction row at least 20 columns shorter
        assert (len(a) <= len(b) - 20) if a in rows else len(a) <= len(b)
