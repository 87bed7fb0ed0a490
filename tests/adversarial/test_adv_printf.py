"""Adversarial ``wl.printf`` formats: what the simulator prints is what C's printf prints.

References are C's printf rules (C11 7.21.6.1), which CUDA's device printf follows
(CUDA Programming Guide, "Formatted Output"). Found: ``%c`` of an int64 became
``%llc`` (no C conversion) and its 8-byte slot shifted the next value
(``'%c%d', wl.int64(65), 3`` printed ``A0``; fixed in
warp_lab/compiler/typing_special.py: ``%c`` takes an int); ``'%.f'`` (precision 0) was
refused as no conversion (fixed there and in warp_lab/sim/printf.py).
"""

import pytest

import numpy as np

import warp_lab as wl

from adv_cells import cell_kernel


def _printed(body: str, n: int = 3) -> str:
    kernel = cell_kernel("@wl.kernel\ndef k(x: wl.array(dtype=wl.float32), n: int):\n" + body)
    r = wl.launch(kernel, dim=1, inputs=[np.zeros(1, np.float32), n], device="sim")
    assert not r.findings
    return r.printed


@pytest.mark.parametrize("value", ["wl.int64(65)", "wl.uint64(2**32 + 65)"])
def test_char_of_a_64_bit_integer_keeps_the_next_values(value):
    assert _printed(f"    wl.printf('%c%d|%c\\n', {value}, n, {value})\n") == "A3|A\n"
    ck = wl.compile(cell_kernel("@wl.kernel\ndef k(x: wl.array(dtype=wl.float32)):\n"
                                f"    wl.printf('%c', {value})\n"), sass=False)
    assert "%llc" not in ck.llvm_ir


def test_a_precision_without_digits_is_precision_zero():
    """'%.f' is C for precision 0 (C11 7.21.6.1: "if only the period is specified, the
    precision is taken as zero"); it was no conversion: 'the format has 0 conversions'."""
    assert _printed("    wl.printf('[%.f] [%5.e] [%.s]\\n', 2.5, 1.0, 'abc')\n") == \
        "[2] [1e+00] []\n"
