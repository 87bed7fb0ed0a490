"""An out-of-bounds shared store is reported at the user's line at every opt level.

Issue 23 saw the default ``-O3`` name the ``if`` above the store, one line early (LLVM
hoists the store's address arithmetic and the index's parameter load above the ``if``);
``opt=0`` gave the right line. memcheck reports the faulting ``st.shared``/``atom.shared``
by the ``.loc`` before it, which is the store's own line at both levels for the shapes
here (a lane guard, a value guard, an atomic): these tests pin that, and that the PTX
line the finding names is the store itself, not its hoisted address arithmetic.
"""

import numpy as np
import pytest

import warp_lab as wl


@wl.kernel
def _guarded_by_lane(x: wl.array(dtype=wl.float32), n: int):
    s = wl.shared_array(32, wl.float32)
    i = wl.tid()
    if i == 0:
        s[n] = 1.0
    wl.syncthreads()
    x[i] = s[0]


@wl.kernel
def _guarded_by_value(x: wl.array(dtype=wl.float32), n: int):
    s = wl.shared_array(32, wl.float32)
    i = wl.tid()
    v = x[i] + 1.0
    if v > 0.0:
        s[i + n] = v
    wl.syncthreads()
    x[i] = s[i]


@wl.kernel
def _atomic_guarded(x: wl.array(dtype=wl.int32), n: int):
    s = wl.shared_array(32, wl.int32)
    i = wl.tid()
    if i == 0:
        wl.atomic_add(s, n, 1)
    wl.syncthreads()
    x[i] = s[0]


@pytest.mark.parametrize("opt", [0, 3])
@pytest.mark.parametrize("kernel,line,dtype", [(_guarded_by_lane, 5, np.float32),
                                               (_guarded_by_value, 6, np.float32),
                                               (_atomic_guarded, 5, np.int32)])
def test_out_of_bounds_shared_store_is_at_the_store_line(kernel, line, dtype, opt):
    x = np.ones(32, dtype)
    r = wl.launch(kernel, dim=32, block_dim=32, inputs=[x, 32], device="sim", opt=opt)
    assert r.findings, "the store past s's end must be found"
    assert {f.kind for f in r.findings} == {"out_of_bounds"}
    store_line = kernel.source.first_line + line
    assert {f.source_line for f in r.findings} == {store_line}
    ptx_lines = wl.compile(kernel, opt=opt).ptx.splitlines()
    f = r.findings[0]
    assert "st.shared" in ptx_lines[f.ptx_line - 1] or "atom.shared" in ptx_lines[f.ptx_line - 1]
