"""String annotations (forward references) in a ``%%warp_kernel`` cell, whose annotations
are deferred (PEP 563): ``x: "float"`` is stored as ``"'float'"``, which evaluated to the
string ``'float'`` and was refused as "not a warp_lab type"; ``typing.get_type_hints``
evaluates such a string again, and so does the compile now."""

import numpy as np
import pytest


@pytest.fixture(scope="module")
def shell(ip):
    return ip


def test_string_annotation_is_evaluated_like_pythons(shell):
    shell.user_ns["adv_sa"] = y = np.zeros(4, np.float32)
    res = shell.run_cell('%%warp_kernel --show source --device sim --launch "dim=4, '
                         'inputs=[adv_sa, 2.5]"\n'
                         'def k(x: "wl.array(dtype=wl.float32)", a: "float"):\n'
                         "    x[wl.tid()] = a\n")
    assert res.error_in_exec is None, res.error_in_exec
    assert (y == 2.5).all()


def test_string_annotation_of_a_device_function_in_a_cell(shell):
    shell.user_ns["adv_sb"] = y = np.zeros(4, np.float32)
    res = shell.run_cell('%%warp_kernel --show source --device sim --launch "dim=4, '
                         'inputs=[adv_sb]"\n'
                         'def f(a: "float") -> "float":\n    return a * 2.0\n'
                         'def k(x: wl.array(dtype=wl.float32)):\n    x[wl.tid()] = f(1.5)\n')
    assert res.error_in_exec is None, res.error_in_exec
    assert (y == 3.0).all()
