"""Adversarial use of the compile cache: a changed value a kernel captures must recompile.

The cache key fingerprints the names a kernel's code uses (globals, closure,
device functions). Values that change the generated code but are left out of
the key would give stale, silently wrong results: closure values and type
aliases were such gaps.
"""

import numpy as np

import warp_lab as wl
from warp_lab.lang.kernel import cell_source

_n = [0]


def _run(code: str, ns: dict) -> None:
    _n[0] += 1
    name = f"<adv-cache {_n[0]}>"
    cell_source(code, name)
    exec(compile(code, name, "exec"), ns)  # noqa: S102 - the test's own source


def _value(kernel, dtype=np.int32):
    x = np.zeros(1, dtype)
    wl.launch(kernel, dim=1, inputs=[x], device="sim")
    return x[0]


def test_changed_global_constant_and_func_recompile():
    ns = {"wl": wl}
    _run("C = 1\n@wl.func\ndef f(a: int):\n    return a + 10\n"
         "@wl.kernel\ndef k(x: wl.array(dtype=wl.int32)):\n    x[0] = C + f(0)\n", ns)
    assert _value(ns["k"]) == 11
    ns["C"] = 2
    assert _value(ns["k"]) == 12
    _run("@wl.func\ndef f(a: int):\n    return a + 100\n", ns)
    assert _value(ns["k"]) == 102
    ns["C"] = wl.constant(5)
    assert _value(ns["k"]) == 105


def _make(c):
    @wl.kernel
    def closure_kernel(x: wl.array(dtype=wl.int32)):
        x[0] = c
    return closure_kernel


def test_closure_value_is_part_of_the_cache_key():
    assert _value(_make(7)) == 7
    assert _value(_make(8)) == 8


def test_global_type_alias_is_part_of_the_cache_key():
    ns = {"wl": wl}
    _run("T = wl.int32\n@wl.kernel\ndef k(x: wl.array(dtype=wl.float32)):\n"
         "    x[0] = float(T(2.75))\n", ns)
    assert _value(ns["k"], np.float32) == 2.0
    ns["T"] = wl.float32
    assert _value(ns["k"], np.float32) == 2.75
