"""A kernel or device function whose ``__name__`` is not an identifier (set by hand, or by
a code generator): the name never reaches the LLVM text unescaped (issue 25). It was the
module's name, written raw into the IR's first line (``; ModuleID = "..."``): a newline
ended that comment, an internal compiler error, and a name holding IR lines compiled
them into the kernel's module.
"""

from __future__ import annotations

import numpy as np
import pytest

import warp_lab as wl

INJECT = 'k"() {\nret void\n}\ndefine void @evil() {\n  ret void\n}\n; '


def _kernel(name: str, func_name: str | None = None):
    def twice(v: float):
        return v * 2.0

    if func_name is not None:
        twice.__name__ = func_name
    helper = wl.func(twice)

    def k(x: wl.array(dtype=wl.float32)):
        i = wl.tid()
        x[i] = helper(x[i]) + 1.0

    k.__name__ = name
    return wl.kernel(k)


@pytest.mark.parametrize("name", ["a\nb", INJECT, "x y", "!\\\"", "1st"])
def test_a_name_that_is_no_identifier_is_escaped_and_compiles(name):
    kernel = _kernel(name, func_name=name)
    ck = wl.compile(kernel, arch="sm_90", cache=False)
    first = ck.llvm_ir.splitlines()[0]
    assert first == f'; ModuleID = "{ck.entry}"' and ck.entry.replace("$", "_").isidentifier()
    defined = [ln for ln in ck.llvm_ir.splitlines() if ln.startswith("define")]
    assert not any("@evil" in ln or '@"evil"' in ln for ln in defined)
    assert ck.ptx.count(".entry ") == 1 and "evil" not in ck.ptx.replace("$", " ").split()
    assert ck.cubin                                       # ptxas took it
    x = np.arange(8, dtype=np.float32)
    wl.launch(ck, dim=8, inputs=[x], device="sim")
    np.testing.assert_array_equal(x, np.arange(8) * 2 + 1)
