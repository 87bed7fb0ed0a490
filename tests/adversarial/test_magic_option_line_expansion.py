"""The ``%%warp_kernel`` option line with quotes, IPython's ``{expr}``/``$name`` expansion and
a ``--launch`` text that only ``compile`` refuses, in a real shell."""

import numpy as np
import pytest
from IPython.core.error import UsageError

import warp_lab as wl

KERNEL = "def a11_k(x: wl.array(dtype=wl.float32), a: float):\n    x[wl.tid()] += a\n"


@pytest.fixture()
def shell(ip):
    ip.run_cell("import warp_lab as wl\nimport numpy as np\n"
                "a11_x = np.zeros(4, np.float32)\na11_arch = 'sm_80'")
    return ip


@pytest.mark.parametrize("line, arch", [
    ('--arch "sm_80"', "sm_80"), ("--arch 'sm_75'", "sm_75"),   # was: unsupported '"sm_80"'
    ("--arch {a11_arch}", "sm_80"), ("--arch $a11_arch", "sm_80"),   # IPython expands these
])
def test_quoted_and_expanded_arch(shell, line, arch):
    res = shell.run_cell(f"%%warp_kernel --show source {line}\n" + KERNEL)
    assert res.error_in_exec is None, res.error_in_exec
    assert res.result.compiled.options.arch == arch


@pytest.mark.parametrize("line", ['--device "sim"', "--device 'sim'", '--diff "previous"'])
def test_quoted_choices(shell, line):
    # was: UsageError "argument --device: invalid choice: '"sim"'"
    launch = '--launch "dim=4, inputs=[a11_x, 1.0]"' if "device" in line else ""
    res = shell.run_cell(f"%%warp_kernel --show source {line} {launch}\n" + KERNEL)
    assert res.error_in_exec is None, res.error_in_exec
    if launch:
        assert (shell.user_ns["a11_x"] == 1.0).all()


def test_an_unknown_quoted_choice_is_still_refused(shell):
    res = shell.run_cell('%%warp_kernel --device "gpu"\n' + KERNEL)
    assert isinstance(res.error_in_exec, UsageError)
    assert "invalid choice: 'gpu'" in str(res.error_in_exec)


@pytest.mark.parametrize("text", ["dim=4, inputs=[a11_x, 1.0], dim=8",
                                  "dim=4, inputs=[a11_x, 1.0], **{}, inputs=[]"])
def test_a_keyword_given_twice_is_a_launch_error(shell, text):
    # was: a SyntaxError traceback from compile() ("keyword argument repeated: dim")
    res = shell.run_cell(f'%%warp_kernel --show source --device sim --launch "{text}"\n'
                         + KERNEL)
    err = res.error_in_exec
    assert isinstance(err, wl.LaunchError), err
    assert f'--launch "{text}": SyntaxError: keyword argument repeated' in str(err)
    assert (shell.user_ns["a11_x"] == 0).all()
