"""``wl.funnelshift_l/_lc/_r/_rc`` and ``wl.byte_perm``: the PTX instruction each becomes, and
located errors for operands that are not 32-bit words.

The values are checked in the corpus example ``funnel_shifts`` (warp_lab/examples/ints.py),
run on the simulator at O0 and O3 (tests/sim/test_corpus.py) against the CUDA Math API's
word-by-word definitions in numpy/Python ints; here the real pipeline (LLVM, ptxas) shows
the instructions: PTX ISA 9.7.8.9 ``shf.{l,r}.{wrap,clamp}.b32`` and 9.7.8.7 ``prmt.b32``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.examples.ints import funnel_shifts

from test_diagnostics import cell_kernel, diagnose


@pytest.mark.parametrize("arch", ["sm_70", "sm_90"])
def test_each_builtin_is_its_ptx_instruction(arch):
    ptx = wl.compile(funnel_shifts, arch=arch).ptx
    ops = re.findall(r"^\s*(shf\.[lr]\.(?:wrap|clamp)\.b32|prmt\.b32)\s", ptx, re.M)
    assert sorted(ops) == sorted(["shf.l.wrap.b32", "shf.l.clamp.b32", "shf.r.wrap.b32",
                                  "shf.r.clamp.b32", "shf.l.wrap.b32", "prmt.b32",
                                  "prmt.b32"])
    # the run-time selector is masked as CUDA's __byte_perm (libdevice: and 0x7777)
    sel = re.search(r"prmt\.b32\s+%r\d+, %r\d+, %r\d+, (%r\d+);", ptx).group(1)
    assert re.search(rf"and\.b32\s+{re.escape(sel)}, %r\d+, 30583;", ptx)
    # a rotate: shf.l.wrap with the same register twice and an immediate count
    assert re.search(r"shf\.l\.wrap\.b32\s+%r\d+, (%r\d+), \1, 8;", ptx)


def test_operand_order_is_lo_hi_shift():
    """``__funnelshift_l(lo, hi, 4)``: hi's bits move up, lo's top nibble comes in."""
    k = cell_kernel("""
        @wl.kernel
        def k(o: wl.array(dtype=wl.uint32), lo: wl.uint32, hi: wl.uint32, n: int):
            o[0] = wl.funnelshift_l(lo, hi, n)
            o[1] = wl.funnelshift_r(lo, hi, n)
            o[2] = wl.byte_perm(lo, hi, 0x7604)   # bytes: y0, x0, y2, y3
    """)
    o = np.zeros(3, np.uint32)
    wl.launch(k, dim=1, inputs=[o, 0xA0000001, 0x0000000B, 4], device="sim")
    assert [hex(v) for v in o] == ["0xba", "0xba000000", "0x10b"]


@pytest.mark.parametrize("args, what, hint", [
    ("lo, 1.5, 3", "hi is float", "wl.uint32(hi)"),
    ("lo, w, 3", "hi is int64", "wl.uint32(hi >> 32)"),
    ("lo, 2**32, 3", "does not fit in 32 bits", ""),
    ("lo, True, 3", "hi is bool", "wl.uint32(hi)"),
])
def test_a_wrong_operand_is_a_located_error(args, what, hint):
    k = cell_kernel(f"""
        @wl.kernel
        def k(o: wl.array(dtype=wl.uint32), lo: wl.uint32, w: wl.int64):
            o[0] = wl.funnelshift_lc({args})
    """)
    err = diagnose(k)
    assert what in err.message and hint in err.hint
    assert err.line == 3 and err.col == len("    o[0] = wl.funnelshift_lc(lo, ") + 1


def test_missing_selector_names_the_parameters():
    k = cell_kernel("""
        @wl.kernel
        def k(o: wl.array(dtype=wl.uint32)):
            o[0] = wl.byte_perm(1, 2)
    """)
    err = diagnose(k)
    assert "needs the argument 's'" in err.message and "byte_perm(x, y, s)" in err.hint
