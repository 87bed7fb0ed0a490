"""Bad input in the notebook layer: one-line errors at the cell line, bounded HTML.

A real IPython shell runs ``%%warp_kernel`` cells; kernels compile with the
real toolchain and launch on the real simulator.
"""

import dataclasses
import linecache

import numpy as np
import pytest
from IPython.core.error import UsageError

import warp_lab as wl
from warp_lab.options import SUPPORTED_ARCHS

SAXPY = ("def saxpy(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), a: float):\n"
         "    i = wl.tid()\n    y[i] = a * x[i] + y[i]\n")


@pytest.fixture()
def shell(ip):
    ip.run_cell("import warp_lab as wl\nimport numpy as np\n"
                "rb_x = np.zeros(8, np.float32)\nrb_y = np.ones(8, np.float32)")
    return ip


def _kernel(text: str, name: str):
    """Define the last kernel of ``text`` as a cell ``name`` (registered in linecache)."""
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    ns = {"wl": wl}
    exec(compile(text, name, "exec"), ns)  # noqa: S102 - the test's own source
    return [v for v in ns.values() if isinstance(v, wl.Kernel)][-1]


# -- magic options -----------------------------------------------------------------------------

@pytest.mark.parametrize("line, fragment", [
    ("--arch sm_1", "--arch sm_1: unsupported architecture 'sm_1'"),
    ("--arch banana", "warp_lab compiles for " + ", ".join(SUPPORTED_ARCHS)),
    ("--maxrregcount -5", "--maxrregcount -5: maxrregcount must be 1..255 registers per thread"),
    ("--maxrregcount 0", "1..255"),
    ("--maxrregcount 256", "1..255"),
    ("--repeat 0", "--repeat 0: must be a positive int"),
    ("--block-dim -32", "--block-dim -32"),
])
def test_bad_option_values_are_one_line_usage_errors(shell, line, fragment):
    res = shell.run_cell(f"%%warp_kernel {line}\n{SAXPY}")
    assert isinstance(res.error_in_exec, UsageError)
    assert fragment in str(res.error_in_exec)


def test_line_magic_refuses_a_bad_default_and_keeps_the_old_ones(shell):
    magics = shell.magics_manager.registry["WarpKernelMagics"]
    before = dict(magics.defaults)
    res = shell.run_cell("%warp_kernel --arch sm_1 --opt 2")
    assert isinstance(res.error_in_exec, UsageError)
    assert magics.defaults == before


def test_supported_arch_and_register_cap_still_compile(shell):
    res = shell.run_cell(f"%%warp_kernel --arch sm_80 --maxrregcount 32 --show resources\n{SAXPY}")
    assert res.error_in_exec is None
    ck = res.result.compiled
    assert ck.options.arch == "sm_80" and ck.options.maxrregcount == 32


@pytest.mark.parametrize("launch, unknown", [
    ('"dims=8, inputs=[rb_x, rb_y, 1.0]"', "'dims'"),
    ('"kernel=3, dim=8, inputs=[rb_x, rb_y, 1.0]"', "'kernel'"),
])
def test_launch_unknown_keyword_names_it_and_the_option(shell, launch, unknown):
    res = shell.run_cell(f"%%warp_kernel --device sim --launch {launch}\n{SAXPY}")
    err = res.error_in_exec
    assert isinstance(err, wl.LaunchError)
    # the option as the user typed it, not its repr ('"dims=8, ..."')
    assert str(err).startswith(f"--launch {launch}: ") and f"unknown keyword(s) {unknown}" \
        in str(err), str(err)
    assert "block_dim" in str(err)  # lists what wl.launch takes
    assert (shell.user_ns["rb_y"] == 1.0).all()


# -- errors from Python's compile() ------------------------------------------------------------

@pytest.mark.parametrize("stmt, message", [
    ("break", "'break' outside loop"),
    ("await x", "'await' outside async function"),
    ("nonlocal x", "name 'x' is parameter and nonlocal"),
    ("return 1\n    yield 2", "'return' with value in async generator"),
])
def test_compile_time_syntax_error_points_at_the_cell_line(shell, stmt, message):
    if "yield" in stmt:  # 'return' + 'yield' in a plain def is legal: use an async def
        cell = f"async def k(x: wl.array(dtype=wl.float32)):\n    {stmt}\n"
    else:
        cell = f"def k(x: wl.array(dtype=wl.float32)):\n    {stmt}\n"
    res = shell.run_cell(f"%%warp_kernel\n{cell}")
    err = res.error_in_exec
    assert isinstance(err, wl.KernelCompileError)
    assert message in str(err)
    assert (err.line, err.col) == (3, 5)
    assert err.source_line.strip() == stmt.split("\n")[0]


def test_very_deep_expression_is_a_compile_error_at_its_line(shell):
    body = "+".join(["1"] * 5000)
    res = shell.run_cell("%%warp_kernel\ndef k(x: wl.array(dtype=wl.float32)):\n"
                         f"    i = wl.tid()\n    m = {body}\n")
    err = res.error_in_exec
    assert isinstance(err, wl.KernelCompileError)
    assert "too deeply nested" in str(err) and err.line == 4 and err.col == 5


# -- wl.diff -----------------------------------------------------------------------------------

def test_diff_with_something_else_is_a_type_error():
    ck = wl.compile(_kernel("import warp_lab as wl\n@wl.kernel\n" + SAXPY, "<rb diff>"),
                    arch="sm_90", sass=False)
    with pytest.raises(TypeError, match="the second argument is NoneType"):
        wl.diff(ck, None)
    with pytest.raises(TypeError, match="the first argument is str"):
        wl.diff("saxpy", ck)


# -- bounded HTML ------------------------------------------------------------------------------

def test_printed_text_is_capped_in_html_but_kept_whole():
    from warp_lab.notebook.results import PRINTED_MAX_LINES, cap_text, launch_html

    k = _kernel("import warp_lab as wl\n@wl.kernel\n"
                "def p(x: wl.array(dtype=wl.int32)):\n    i = wl.tid()\n    print(i)\n",
                "<rb printf>")
    r = wl.launch(k, dim=4, inputs=[np.zeros(4, np.int32)], device="sim")
    assert sorted(r.printed.split()) == ["0", "1", "2", "3"]
    big = "".join(f"line {n}\n" for n in range(PRINTED_MAX_LINES + 2500))
    page = launch_html(dataclasses.replace(r, printed=big))
    assert f"line {PRINTED_MAX_LINES - 1}\n" in page and f"line {PRINTED_MAX_LINES}\n" not in page
    assert "truncated: 2,500 more line(s)" in page
    assert launch_html(r).count("truncated") == 0
    # the byte cap: one 3 MB line is cut at 1 MiB
    shown, note = cap_text("y" * (3 << 20))
    assert len(shown) == 1 << 20 and "more line(s) (2,097,152 bytes)" in note


def test_long_panes_render_their_head_and_the_bundle_keeps_everything():
    from warp_lab.notebook.bundle import MIME_TYPE, repr_mimebundle
    from warp_lab.notebook.views import PANE_MAX_LINES

    body = "\n".join(f"    a = a * 1.5 + x[(i + {k}) % 8]" for k in range(200))
    k = _kernel("import warp_lab as wl\n@wl.kernel\n"
                "def long_k(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):\n"
                f"    i = wl.tid()\n    a = 0.0\n{body}\n    y[i] = a\n", "<rb long>")
    ck = wl.compile(k, arch="sm_90", sass=False)
    n_ir = len(ck.llvm_ir.splitlines())
    assert n_ir > PANE_MAX_LINES
    data = repr_mimebundle(ck, show=("source", "llvm", "ptx"))
    page = data["text/html"]
    pane = page[page.index('data-pane="llvm_unoptimized"'):]
    pane = pane[:pane.index("</details>")]
    assert pane.count('<span class="wl-ln">') == PANE_MAX_LINES
    assert f"truncated: {n_ir - PANE_MAX_LINES:,} more line(s)" in pane
    python_pane = page[page.index('data-pane="python"'):]
    python_pane = python_pane[:python_pane.index("</details>")]
    assert "truncated" not in python_pane  # short panes are whole
    # the whole text, the cell named as in this run instead of by content (views.pane_text)
    assert data[MIME_TYPE]["panes"]["llvm_unoptimized"]["text"] == \
        ck.llvm_ir.replace('"<cell of long_k>"', '"<rb long>"')
    assert len(page) < 4 * PANE_MAX_LINES * 1000  # bounded whatever the kernel's size


def test_load_ext_binds_wl_for_cells_without_an_import(shell):
    import warp_lab
    from warp_lab.notebook.magic import load_ipython_extension

    saved = shell.user_ns.pop("wl", None)
    try:
        load_ipython_extension(shell)  # what %load_ext warp_lab runs
        assert shell.user_ns["wl"] is warp_lab
        res = shell.run_cell("%%warp_kernel\ndef k(x: wl.array(dtype=wl.float32)):\n"
                             "    x[wl.tid()] = 1.0\n")
        assert res.error_in_exec is None
        shell.user_ns["wl"] = "mine"
        load_ipython_extension(shell)
        assert shell.user_ns["wl"] == "mine"  # a user's own wl is never replaced
    finally:
        shell.user_ns["wl"] = saved if saved is not None else warp_lab
