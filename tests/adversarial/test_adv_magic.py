"""Adversarial ``%%warp_kernel`` cells in a real IPython shell.

Bad options and bad cells must end in a UsageError or a warp_lab error (shown
as a compact box), with the cell's own line numbers, and every piece of user
text in the HTML output must be escaped. The strict xfails document bugs.
"""

import html
import re

import numpy as np
import pytest
from IPython.core.error import UsageError

import warp_lab as wl

SAXPY = ("def saxpy(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), a: float):\n"
         "    i = wl.tid()\n    y[i] = a * x[i] + y[i]\n")
XSS = "<script>alert(1)</script>"


@pytest.fixture()
def shell(ip):
    ip.run_cell("import warp_lab as wl\nimport numpy as np\n"
                "adv_x = np.zeros(8, np.float32)\nadv_y = np.ones(8, np.float32)")
    return ip


def _html(published, result) -> str:
    parts = [str(d.get("text/html", "")) for d in published]
    if result is not None and hasattr(result, "_repr_mimebundle_"):
        bundle = result._repr_mimebundle_()
        bundle = bundle[0] if isinstance(bundle, tuple) else bundle
        parts.append(str(bundle.get("text/html", "")))
    return "\n".join(parts)


@pytest.mark.parametrize("line", ["--opt 7", "--opt x", "--show nonsense", "--frobnicate",
                                  "--device sim --check nonsense"])
def test_bad_option_is_a_usage_error(shell, line):
    res = shell.run_cell(f"%%warp_kernel {line}\n{SAXPY}")
    assert isinstance(res.error_in_exec, UsageError)


@pytest.mark.parametrize("launch, fragment", [
    ('"garbage("', "SyntaxError"), ('"dim=1/0"', "ZeroDivisionError"),
    ('"8"', "8 at column 1 is not key=value"), ('"dim=8, inputs=[adv_x]"', "takes 3 argument"),
    ("\"dim=8, inputs=[adv_x, adv_y, 'a']\"", "parameter 'a'"),
])
def test_bad_launch_is_a_launch_error(shell, launch, fragment):
    res = shell.run_cell(f"%%warp_kernel --device sim --launch {launch}\n{SAXPY}")
    assert isinstance(res.error_in_exec, wl.LaunchError)
    assert fragment in str(res.error_in_exec)


@pytest.mark.parametrize("cell, line, col", [
    ("def k(x: wl.array(dtype=wl.float32)):\n    i = wl.tid()\n    x[i] = (1\n", 4, 12),
    ("def k(x: wl.array(dtype=wl.float32):\n    pass\n", 2, 36),
    ("def k(x: wl.array(dtype=wl.float32)):\n    i = wl.tid()\n      x[i] = 1.0\n", 4, 6),
    ("def k(x: wl.array(dtype=wl.float32)):\n    i = wl.tid()\n\tx[i] = 1.0\n", 4, 1),
    ("\n\ndef k(x: wl.array(dtype=wl.float32)):\n    i = wl.tid()\n    x[i] = x\n", 6, 12),
])
def test_errors_carry_the_cells_line_numbers(shell, published, cell, line, col):
    """The %%warp_kernel line is line 1; the error box shows the caret line."""
    res = shell.run_cell(f"%%warp_kernel\n{cell}")
    err = res.error_in_exec
    assert isinstance(err, wl.KernelCompileError)
    assert (err.line, err.col) == (line, col)
    assert "^" in str(err)
    box = _html(published, None)
    assert html.escape(err.source_line.strip()) in box


@pytest.mark.parametrize("cell", ["# only a comment\n# and another\n", "\n\n   \n"])
def test_cells_without_functions_show_nothing(shell, cell):
    res = shell.run_cell(f"%%warp_kernel\n{cell}")
    assert res.error_in_exec is None and res.result is None


CELLS_WITH_HTML = [
    ("comment", "", SAXPY + f"    # {XSS}\n"),
    ("docstring", "", f"def k(x: wl.array(dtype=wl.float32)):\n    '''{XSS}'''\n    i = wl.tid()\n"),
    ("error_source", "", f"def k(x: wl.array(dtype=wl.float32)):\n    x[0] = '{XSS}'\n"),
    ("syntax_error", "", f"def k(x: wl.array(dtype=wl.float32)):\n    x[0] = 1 '{XSS}'\n"),
    ("printf", '--device sim --launch "dim=2, inputs=[adv_x]"',
     f"def k(x: wl.array(dtype=wl.float32)):\n    i = wl.tid()\n    print('{XSS}', i)\n"),
    ("assert", '--device sim --debug --launch "dim=2, inputs=[adv_x]"',
     f"def k(x: wl.array(dtype=wl.float32)):\n    i = wl.tid()\n    assert i > 5, '{XSS}'\n"),
    ("launch_error", f"--device sim --launch \"dim=2, inputs=['{XSS}']\"",
     "def k(x: wl.array(dtype=wl.float32)):\n    i = wl.tid()\n"),
    ("launch_garbage", f'--device sim --launch "{XSS}"',
     "def k(x: wl.array(dtype=wl.float32)):\n    i = wl.tid()\n"),
]


@pytest.mark.parametrize("case", CELLS_WITH_HTML, ids=[c[0] for c in CELLS_WITH_HTML])
def test_user_text_is_escaped_in_html(shell, published, case):
    _, line, cell = case
    res = shell.run_cell(f"%%warp_kernel {line}\n{cell}")
    page = _html(published, res.result)
    assert page, "the cell showed nothing"
    assert "<script>alert" not in page
    assert re.search(r"&lt;script&gt;alert\(1\)&lt;/script&gt;|alert\(1\)", page)


def test_launch_result_printf_html_is_escaped():
    """A LaunchResult's own rich view (no magic) escapes what the kernel printed."""
    from adv_cells import cell_kernel
    from warp_lab.notebook.results import LaunchView

    kernel = cell_kernel(f"@wl.kernel\ndef k(x: wl.array(dtype=wl.float32)):\n"
                         f"    print('{XSS}')\n    x[wl.tid()] = 1.0\n")
    r = wl.launch(kernel, dim=1, inputs=[np.zeros(1, np.float32)], device="sim")
    assert XSS in r.printed
    bundle = LaunchView(r)._repr_mimebundle_()
    bundle = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "<script>alert" not in bundle["text/html"]
    assert html.escape(XSS) in bundle["text/html"]


# -- bugs --------------------------------------------------------------------------------------

def _is_clean(err) -> bool:
    return isinstance(err, (UsageError, wl.WarpLabError))


@pytest.mark.parametrize("arch", ["sm_1", "banana"])
def test_bad_arch_option_is_clean(shell, arch):
    res = shell.run_cell(f"%%warp_kernel --arch {arch}\n{SAXPY}")
    assert _is_clean(res.error_in_exec)


@pytest.mark.parametrize("launch", ['"dims=8, inputs=[adv_x, adv_y, 1.0]"',
                                    '"kernel=3, dim=8, inputs=[adv_x, adv_y, 1.0]"'])
def test_launch_unknown_keyword_is_a_launch_error(shell, launch):
    res = shell.run_cell(f"%%warp_kernel --device sim --launch {launch}\n{SAXPY}")
    assert isinstance(res.error_in_exec, wl.LaunchError)


@pytest.mark.parametrize("cell", [
    "def k(x: wl.array(dtype=wl.float32)):\n    break\n",
    "def k(x: wl.array(dtype=wl.float32)):\n    await x\n",
    "def k(x: wl.array(dtype=wl.float32)):\n    nonlocal x\n",
])
def test_compile_time_syntax_errors_are_compile_errors(shell, cell):
    res = shell.run_cell(f"%%warp_kernel\n{cell}")
    err = res.error_in_exec
    assert isinstance(err, wl.KernelCompileError) and err.line == 3


def test_very_deep_expression_is_a_compile_error(shell):
    body = "+".join(["1"] * 5000)
    res = shell.run_cell(f"%%warp_kernel\ndef k(x: wl.array(dtype=wl.float32)):\n    m = {body}\n")
    assert isinstance(res.error_in_exec, wl.KernelCompileError)
