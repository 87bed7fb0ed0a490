"""A ``%%warp_kernel`` cell's annotations are the cell's, not the magic's: magic.py's own
``from __future__ import annotations`` was inherited by ``compile()``, so every annotation in
a cell became a string, and an annotation written as a string (a forward reference) became
a string of a string, refused as "not a warp_lab type"."""

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


def test_cell_annotations_are_objects_unless_the_cell_asks(shell):
    res = shell.run_cell("%%warp_kernel --show source\nclass AdvP:\n    n: int\n"
                         "def k(x: wl.array(dtype=wl.float32)):\n    x[wl.tid()] = 1.0\n")
    assert res.error_in_exec is None
    assert shell.user_ns["AdvP"].__annotations__ == {"n": int}
    res = shell.run_cell("%%warp_kernel --show source\nfrom __future__ import annotations\n"
                         "class AdvQ:\n    n: int\n"
                         "def k(x: wl.array(dtype=wl.float32)):\n    x[wl.tid()] = 1.0\n")
    assert res.error_in_exec is None
    assert shell.user_ns["AdvQ"].__annotations__ == {"n": "int"}
