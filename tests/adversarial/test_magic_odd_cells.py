"""Odd ``%%warp_kernel`` cells, in a real IPython shell.

Found by feeding the magic unusual kernels:

* a kernel with a nested ``def`` that returns a value was taken for a device
  function ("no kernel in this cell: k returns a value") because the ``return`` of the
  nested function counted as the kernel's own; the compiler's located "nested function
  definitions are not allowed" was never shown;
* the ``None`` literal where a value is needed (``x[None]``, ``y = None``,
  ``1 + None``) said "this call returns no value" with no call there, and storing a
  call that returns nothing (``x[0] = wl.syncthreads()``) said "cannot store None ...
  without losing information".
"""

import pytest

import warp_lab as wl

A = "x: wl.array(dtype=wl.int32)"


@pytest.fixture()
def shell(ip):
    ip.run_cell("import warp_lab as wl\nimport numpy as np")
    return ip


@pytest.mark.parametrize("nested", [
    "    def inner(a):\n        return a\n",
    "    class Inner:\n        def get(self):\n            return 1\n",
])
def test_return_of_a_nested_function_does_not_make_the_kernel_a_func(shell, nested):
    res = shell.run_cell(f"%%warp_kernel --show source\ndef a10_nest({A}):\n{nested}"
                         "    x[0] = 1\n")
    err = res.error_in_exec
    assert isinstance(err, wl.KernelCompileError), err
    assert (err.line, err.col) == (3, 5)
    assert "are not allowed in kernels" in err.message
    assert isinstance(shell.user_ns["a10_nest"], wl.Kernel)


def test_a_lambda_returning_a_value_still_reaches_the_compiler(shell):
    res = shell.run_cell(f"%%warp_kernel --show source\ndef a10_lam({A}):\n"
                         "    f = lambda a: a + 1\n    x[0] = 1\n")
    err = res.error_in_exec
    assert isinstance(err, wl.KernelCompileError) and (err.line, err.col) == (3, 9), err
    assert "lambda" in err.message


def test_the_functions_own_return_still_makes_it_a_device_function(shell, published):
    res = shell.run_cell(f"%%warp_kernel --show source\ndef a10_helper(a: int):\n"
                         "    def unused():\n        pass\n    return a + 1\n")
    assert res.error_in_exec is None
    assert isinstance(shell.user_ns["a10_helper"], wl.Func)
    text = "\n".join(str(d.get("text/plain", "")) for d in published)
    assert "a10_helper returns a value" in text


@pytest.mark.parametrize("body, col, message", [
    ("x[None] = 1", 7, "None is not a value in a kernel"),
    ("y = None", 9, "None is not a value in a kernel"),
    ("x[0] = 1 + None", 16, "None is not a value in a kernel"),
    ("wl.atomic_add(x, None, 1)", 22, "None is not a value in a kernel"),
    ("x[0] = None", 12, "None is not a value in a kernel"),
    ("x[0] = wl.syncthreads()", 12, "this call returns no value"),
    ("y = wl.syncthreads()", 9, "this call returns no value"),
])
def test_none_where_a_value_is_needed_says_what_it_is(shell, body, col, message):
    res = shell.run_cell(f"%%warp_kernel --show source\ndef a10_none({A}):\n    {body}\n")
    err = res.error_in_exec
    assert isinstance(err, wl.KernelCompileError), err
    assert (err.line, err.col) == (3, col)
    assert err.message.startswith(message), err.message


KERNEL = "def a10_launch(x: wl.array(dtype=wl.int32)):\n    x[wl.tid()] += 1\n"


@pytest.mark.parametrize("launch, message", [
    # a ")" of the text closed warp_lab's dict( early: "unsupported operand type(s) for +"
    ('"dim=4, inputs=[a10_x]) + (1"', "SyntaxError: unmatched ')' at column 22"),
    ('"dim=4, inputs=[a10_x])"', "SyntaxError: unmatched ')' at column 22"),
    ('"dim=4, inputs=[a10_x]]"', "SyntaxError: unmatched ']' at column 22"),
    # was "TypeError: dict expected at most 1 argument, got 2"
    ('"4, [a10_x]"', "4 at column 1 is not key=value; write keyword arguments"),
    ('"dim=4, inputs=[a10_x], *[1]"', "*[1] at column 24 is not key=value"),
])
def test_launch_text_that_is_not_keyword_arguments_is_located(shell, launch, message):
    shell.run_cell("a10_x = np.zeros(4, np.int32)")
    res = shell.run_cell(f"%%warp_kernel --show source --device sim --launch {launch}\n"
                         + KERNEL)
    assert isinstance(res.error_in_exec, wl.LaunchError), res.error_in_exec
    assert message in str(res.error_in_exec)
    assert (shell.user_ns["a10_x"] == 0).all()


@pytest.mark.parametrize("launch", ['"dim=4, inputs=[a10_x]  # four threads"',
                                    '"**a10_kw, inputs=[a10_x]"'])
def test_launch_text_with_a_comment_or_a_mapping_launches(shell, launch):
    """A trailing comment hid the closing ")" ("'(' was never closed")."""
    shell.run_cell("a10_x = np.zeros(4, np.int32)\na10_kw = {'dim': 4}")
    res = shell.run_cell(f"%%warp_kernel --show source --device sim --launch {launch}\n"
                         + KERNEL)
    assert res.error_in_exec is None, res.error_in_exec
    assert (shell.user_ns["a10_x"] == 1).all()


def test_a_notebook_variable_named_dict_does_not_break_launch(shell):
    """--launch was evaluated as dict(TEXT) in the notebook: dict = 5 made it
    "TypeError: 'int' object is not callable"."""
    shell.run_cell("a10_x = np.zeros(4, np.int32)\ndict = 5")
    try:
        res = shell.run_cell("%%warp_kernel --show source --device sim "
                             "--launch \"dim=4, inputs=[a10_x]\"\n" + KERNEL)
    finally:
        shell.run_cell("del dict")
    assert res.error_in_exec is None, res.error_in_exec
    assert (shell.user_ns["a10_x"] == 1).all()
