"""Adversarial ``wl.printf`` formats: what the simulator prints is what C's printf prints.

References are C's printf rules (C11 7.21.6.1), which CUDA's device printf follows
(CUDA Programming Guide, "Formatted Output"). Found: ``%c`` of an int64 became
``%llc`` (no C conversion) and its 8-byte slot shifted the next value
(``'%c%d', wl.int64(65), 3`` printed ``A0``; fixed in
warp_lab/compiler/typing_special.py: ``%c`` takes an int); ``'%.f'`` (precision 0) was
refused as no conversion (fixed there and in warp_lab/sim/printf.py); a ``%`` that starts
no conversion (``%n``, ``100%``) reached vprintf (now a compile error).
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


@pytest.mark.parametrize("fmt, shown", [("%n", "'%n'"), ("%y %d", "'%y'"), ("100%", "'%'"),
                                        ("%5\\n", "'%5'")])
def test_a_percent_that_starts_no_conversion_is_a_compile_error(fmt, shown):
    """'%n', '%y' or a trailing '%' reached vprintf unchanged (undefined in C; the
    simulator printed them as text) when the values matched the real conversions."""
    args = ", n" if "%d" in fmt else ""
    kernel = cell_kernel("@wl.kernel\ndef k(x: wl.array(dtype=wl.float32), n: int):\n"
                         f"    wl.printf('{fmt}'{args})\n")
    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(kernel, sass=False)
    assert info.value.message == f"{shown} in the format is not a printf conversion"
    assert (info.value.line, info.value.col) == (3, 15) and "%%" in str(info.value)


def test_percent_signs_written_as_C_wants_them_print():
    assert _printed("    wl.printf('100%% %d%%\\n', n)\n    print('50%', n)\n") == \
        "100% 3%\n50% 3\n"
