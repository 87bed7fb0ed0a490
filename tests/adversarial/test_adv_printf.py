"""Adversarial ``wl.printf`` formats: what the simulator prints is what C's printf prints.

References are C's printf rules (C11 7.21.6.1), which CUDA's device printf follows
(CUDA Programming Guide, "Formatted Output"). Found: ``%c`` of an int64 became
``%llc`` (no C conversion) and its 8-byte slot shifted the next value
(``'%c%d', wl.int64(65), 3`` printed ``A0``; fixed in
warp_lab/compiler/typing_special.py: ``%c`` takes an int); ``'%.f'`` (precision 0) was
refused as no conversion (fixed there and in warp_lab/sim/printf.py); a ``%`` that starts
no conversion (``%n``, ``100%``) reached vprintf (now a compile error); the simulator
formatted numbers with Python's ``%``, not C's (``%#o``, ``%#x`` of 0, precision 0 of 0,
zero-padded inf, ``%a`` printed as ``%e``; fixed in warp_lab/sim/printf.py, checked against
the C library's snprintf).
"""

import functools
import itertools
import math

import numpy as np
import pytest

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


# ------------------------------------------------------------ the simulator's printf vs C's

@functools.lru_cache(maxsize=None)
def _libc():
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if name is None:
        pytest.skip("no C library to compare with")
    return ctypes, ctypes.CDLL(name)


def _c_printf(fmt: str, value) -> str:
    ctypes, libc = _libc()
    buf = ctypes.create_string_buffer(512)
    arg = ctypes.c_double(value) if isinstance(value, float) else \
        ctypes.c_longlong(value) if "ll" in fmt else ctypes.c_int(value)
    libc.snprintf(buf, 512, fmt.encode(), arg)
    return buf.value.decode("latin-1")


def _sim_printf(fmt: str, value) -> str:
    from warp_lab.sim.printf import format_c

    def fetch(size, kind):
        if kind == "f":
            return value
        v = value & ((1 << 8 * size) - 1)
        return v - (1 << 8 * size) if kind == "s" and v >> (8 * size - 1) else v

    return format_c(fmt, fetch, lambda ptr: "")


FLAGS = ["", "-", "+", " ", "#", "0", "-#", "+0", "#0"]
CASES = [("d", [0, 5, -5, 2**31 - 1, -2**31]), ("u", [0, 5, -5]), ("o", [0, 8, -1]),
         ("x", [0, 255, -1]), ("X", [0, 255]), ("lld", [0, -2**63]), ("llx", [0, 2**63 - 1]),
         ("f", [0.0, -0.0, 2.5, -1.5e-7, math.inf, -math.inf, math.nan]),
         ("e", [0.0, 2.5, -1e-300, math.inf]), ("g", [1e-5, 123456789.0, 100.0, -math.inf]),
         ("a", [0.0, 1.0, 3.0, -0.1, 5e-324, 1e308, 1 / 3, math.inf, math.nan]), ("A", [3.0])]


@pytest.mark.parametrize("conv, values", CASES, ids=[c for c, _ in CASES])
def test_simulator_printf_matches_the_c_library(conv, values):
    """Every flag, width and precision of each conversion against the C library's snprintf.
    The simulator used Python's % (``%#o`` of 3 gave ``0o3``, ``%#x`` of 0 ``0x0``, ``%.0d``
    of 0 ``0``, ``%06f`` of inf ``000inf``) and printed ``%a`` as ``%e``."""
    bad = []
    for flags, width, prec in itertools.product(FLAGS, ["", "1", "6"], [None, "", "0", "3"]):
        fmt = "%" + flags + width + ("" if prec is None else "." + prec) + conv
        for v in values:
            want, got = _c_printf(fmt, v), _sim_printf(fmt, v)
            if want != got:
                bad.append((fmt, v, want, got))
    assert not bad, bad[:5]


def test_hex_float_rounding_matches_the_c_library():
    """%a with precisions 0..14 rounds the fraction to nearest, ties to even (the lead digit
    counts at precision 0: 0x1.8p+1 is 0x2p+1)."""
    rng = np.random.default_rng(7)
    values = list(rng.standard_normal(200) * 10.0 ** rng.integers(-300, 300, 200))
    values += [3.0, 1.5, 2.5, 1.0 + 2**-52, 2.0 - 2**-52, 2**-1074 * 3]
    bad = [(p, v) for v in values for p in range(15)
           if _c_printf(f"%.{p}a", float(v)) != _sim_printf(f"%.{p}a", float(v))]
    assert not bad, bad[:5]


def test_kernel_prints_c_forms():
    body = "    wl.printf('%#o %#x %.0d| %a %08.3f\\n', n, n - 3, n - 3, 3.0, -1.5)\n"
    assert _printed(body) == "03 0 | 0x1.8p+1 -001.500\n"
