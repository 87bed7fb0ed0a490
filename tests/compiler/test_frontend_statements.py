"""Statements of the front end checked against Python: each kernel's result on the
simulator is compared with what plain Python (or NumPy) gives for the same code.

Found by review of ``compiler/frontend*.py``: an annotated array alias lost its stores,
``range()`` bounds that do not fit the counter's type wrapped, comparisons with a literal
outside the other operand's type wrapped the literal.
"""

from __future__ import annotations

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.errors import KernelCompileError

from test_diagnostics import cell_kernel, diagnose

#: a module-level array type, the way to annotate an array variable
F32 = wl.array(dtype=wl.float32)


def _assembles(kernel):
    """ptxas accepts the kernel's PTX for sm_80 and sm_90."""
    for arch in ("sm_80", "sm_90"):
        ck = wl.compile(kernel, arch=arch, cache=False, sass=False)
        assert ck.cubin and "cubin" not in ck.missing, ck.missing


def _annotated_alias_kernel():
    k = cell_kernel("""
        @wl.kernel
        def k(o: wl.array(dtype=wl.float32), x: wl.array(dtype=wl.float32)):
            p: F32 = o
            p[0] = x[0] + 1.0
    """)
    k.fn.__globals__["F32"] = F32
    return k


def test_a_store_through_an_annotated_array_alias_marks_the_array_written():
    k = _annotated_alias_kernel()
    ck = wl.compile(k, cache=False, sass=False)
    assert ck.written_params == ("o",)
    o, x = np.zeros(2, np.float32), np.full(2, 4.0, np.float32)
    res = wl.launch(k, dim=1, inputs=[o, x], device="sim")
    assert res.findings == []
    assert o.tolist() == [5.0, 0.0]   # copied back: the store reached o


def test_an_annotated_array_variable_cannot_be_rebound_or_left_without_value():
    k = cell_kernel("""
        @wl.kernel
        def k(o: wl.array(dtype=wl.float32), x: wl.array(dtype=wl.float32)):
            q = x
            q: F32 = o
            q[0] = 1.0
    """)
    k.fn.__globals__["F32"] = F32
    err = diagnose(k)
    assert (err.line, err.col) == (4, 5) and "cannot be rebound" in err.message
    k = cell_kernel("""
        @wl.kernel
        def k(o: wl.array(dtype=wl.float32)):
            q: F32
            o[0] = 1.0
    """)
    k.fn.__globals__["F32"] = F32
    err = diagnose(k)
    assert (err.line, err.col) == (3, 5) and "needs a value" in err.message


def test_a_call_as_a_local_annotation_is_named_as_such():
    """Python does not evaluate a local's annotation, so ``wl.array(...)`` there is not a
    type: the error says so (it was 'warp_lab.array is a Python function')."""
    err = diagnose(cell_kernel("""
        @wl.kernel
        def k(o: wl.array(dtype=wl.float32)):
            p: wl.array(dtype=wl.float32) = o
            p[0] = 1.0
    """))
    assert (err.line, err.col) == (3, 8)
    assert "cannot annotate a local variable" in err.message and "F = wl.array" in err.hint
    assert isinstance(err, KernelCompileError)


def _range_counts(n, m, u):
    """The kernel below in plain Python: counts and last values of four range loops."""
    c1 = last = 0
    for i in range(n, 5_000_000_000, 1_000_000_000):   # a bound past int32
        c1 += 1
        last = i
    c2 = 0
    for j in range(m, 300):                            # m: int8, 300 past int8
        c2 += 1
    c3 = 0
    for q in range(u, 5_000_000_000, 2_000_000_000):    # u: uint32, a bound past uint32
        c3 += 1
    c4 = 0
    for r in range(u, -1, -1):                         # u: uint32 counting down to 0
        c4 += 1
    return [c1, last, c2, c3, c4]


def test_range_bounds_past_the_counters_type_count_like_python():
    k = cell_kernel("""
        @wl.kernel
        def k(o: wl.array(dtype=wl.int64), n: int, m: wl.int8, u: wl.uint32):
            c1 = wl.int64(0)
            last = wl.int64(0)
            for i in range(n, 5_000_000_000, 1_000_000_000):
                c1 += 1
                last = i
            c2 = 0
            for j in range(m, 300):
                c2 += 1
            c3 = 0
            for q in range(u, 5_000_000_000, 2_000_000_000):
                c3 += 1
            c4 = 0
            for r in range(u, -1, -1):
                c4 += 1
            o[0] = c1
            o[1] = last
            o[2] = c2
            o[3] = c3
            o[4] = c4
    """)
    o = np.zeros(5, np.int64)
    res = wl.launch(k, dim=1, inputs=[o, np.int32(-3), np.int8(-7), np.uint32(7)],
                    device="sim")
    assert res.findings == []
    assert o.tolist() == _range_counts(-3, -7, 7)   # [6, 4999999997, 307, 3, 8]
    _assembles(k)


def _compares(n, u):
    return [n < 3_000_000_000, n == 2**32 + 1, 0 <= n < 2**40, u > -1, u == -1,
            n >= -2**33, -1 < u <= 2**32]


def test_comparisons_with_a_literal_outside_the_others_type_are_exact():
    """Python (and NumPy 2) compare the exact values; the literal was converted to the
    other operand's type first, so ``n < 3_000_000_000`` was False and
    ``n == 2**32 + 1`` True for ``n = 1``."""
    k = cell_kernel("""
        @wl.kernel
        def k(o: wl.array2d(dtype=wl.bool_), ns: wl.array(dtype=wl.int32),
              us: wl.array(dtype=wl.uint32)):
            i = wl.tid()
            n = ns[i]
            u = us[i]
            o[i, 0] = n < 3_000_000_000
            o[i, 1] = n == 2**32 + 1
            o[i, 2] = 0 <= n < 2**40
            o[i, 3] = u > -1
            o[i, 4] = u == -1
            o[i, 5] = n >= -2**33
            o[i, 6] = -1 < u <= 2**32
    """)
    ns = np.array([1, -1, 0, 2**31 - 1, -2**31], np.int32)
    us = np.array([0, 2**32 - 1, 1, 2**31, 7], np.uint32)
    o = np.zeros((len(ns), 7), np.bool_)
    res = wl.launch(k, dim=len(ns), inputs=[o, ns, us], device="sim")
    assert res.findings == []
    want = [_compares(int(n), int(u)) for n, u in zip(ns, us)]
    assert o.tolist() == want
    _assembles(k)
    # NumPy 2 agrees (NEP 50 compares a Python int exactly)
    assert [bool(ns[0] < 3_000_000_000), bool(us[1] == -1)] == [want[0][0], want[1][4]]


@pytest.mark.parametrize("expr, col, numpy_op", [
    ("n // 3_000_000_000", 17, lambda n: n // 3_000_000_000),
    ("n % 3_000_000_000", 16, lambda n: n % 3_000_000_000),
    ("n >> 2**32", 17, lambda n: n >> 2**32),
    ("max(n, 3_000_000_000)", 19, lambda n: np.maximum(n, 3_000_000_000)),
    ("n if c else 2**40", 24, None),       # (NumPy has no operator for these three)
    ("wl.select(c, n, 2**40)", 28, None),
    ("wl.clamp(n, 0, 2**40)", 27, None),
])
def test_a_literal_that_wraps_in_the_other_operands_type_is_an_error(expr, col, numpy_op):
    """Converted to ``n``'s int32 the literal wrapped (``n // 3_000_000_000`` was -1 for
    ``n = 5``, ``max(n, 3_000_000_000)`` 5); NumPy 2 raises OverflowError for the same."""
    err = diagnose(cell_kernel(f"""
        @wl.kernel
        def k(o: wl.array(dtype=wl.int64), n: int, c: bool):
            o[0] = {expr}
    """))
    assert (err.line, err.col) == (3, col) and "does not fit in int32" in err.message
    if numpy_op is not None:
        with pytest.raises(OverflowError):
            numpy_op(np.int32(5))


def test_wrapping_arithmetic_with_a_wide_literal_stays_allowed():
    """``+ - * & | ^`` with the literal wrapped give Python's result wrapped to int32."""
    k = cell_kernel("""
        @wl.kernel
        def k(o: wl.array(dtype=wl.int32), n: int, u: wl.uint32):
            o[0] = n * 2**31
            o[1] = n & 0xFFFF_FFF0
            o[2] = n - 3_000_000_000
            o[3] = wl.int32(u & -4)
    """)
    o = np.zeros(4, np.int32)
    wl.launch(k, dim=1, inputs=[o, np.int32(-7), np.uint32(7)], device="sim")
    wrap = [((v + 2**31) % 2**32) - 2**31 for v in (-7 * 2**31, -7 & 0xFFFF_FFF0,
                                                    -7 - 3_000_000_000, 7 & -4)]
    assert o.tolist() == wrap


@pytest.mark.parametrize("use", ["o[0] = x", "x += 1"])
def test_a_declared_but_never_assigned_variable_names_its_annotation(use):
    """``x: int`` gives no value (Python raises UnboundLocalError at the use); the error
    said 'it is first assigned at line 3' (the declaration), or for ``x += 1`` named
    the augmented assignment itself as the first assignment."""
    err = diagnose(cell_kernel(f"""
        @wl.kernel
        def k(o: wl.array(dtype=wl.int32)):
            x: int
            {use}
    """))
    assert err.line == 4 and "x is used but never assigned" in err.message
    assert "annotation at line 3" in err.message and "x: int = 0" in err.hint


def test_augmented_assignment_to_a_whole_array_says_so():
    """The message for ``a += 1`` was 'unsupported operand types for +: global 1-D array
    of float32 and int32': the array check came after typing ``a + 1``, so never ran."""
    err = diagnose(cell_kernel("""
        @wl.kernel
        def k(a: wl.array(dtype=wl.float32)):
            a += 1
    """))
    assert (err.line, err.col) == (3, 5)
    assert "arrays cannot be updated with augmented assignment" in err.message
    assert "a[i] += ..." in err.hint


def test_columns_count_characters_after_non_ascii_text():
    """``ast`` gives byte offsets: after ``"héllo wörld"`` the column (and the caret
    under the quoted line) was two to the right of ``undefined_x``."""
    line = '    print("héllo wörld", undefined_x)'
    err = diagnose(cell_kernel("@wl.kernel\ndef k(a: wl.array(dtype=wl.float32)):\n" + line))
    assert err.line == 3 and err.col == line.index("undefined_x") + 1
    caret = str(err).splitlines()
    quoted = next(k for k, ln in enumerate(caret) if ln.strip() == line.strip())
    assert caret[quoted + 1].index("^") - caret[quoted].index("print") == \
        line.index("undefined_x") - line.index("print")


@pytest.mark.parametrize("line, col, fragment", [
    ("o[0] = n < 0xFFFF_FFFF_FFFF_FFFF", 16, "compared with int32: no integer type holds both"),
    ("o[0] = u > -1", 16, "compared with uint64: no integer type holds both"),
    ("for i in range(n, 0xFFFF_FFFF_FFFF_FFFF):\n                pass", 23,
     "does not fit in int64, and the other arguments are int32"),
])
def test_a_literal_no_integer_type_holds_beside_the_other_value_is_an_error(line, col,
                                                                             fragment):
    """In int64 a uint64 literal would wrap to -1 (``n < 2**64 - 1`` False)."""
    err = diagnose(cell_kernel(f"""
        @wl.kernel
        def k(o: wl.array(dtype=wl.bool_), n: int, u: wl.uint64):
            {line}
    """))
    assert (err.line, err.col) == (3, col) and fragment in err.message


def test_unpacking_an_integer_hints_at_unpacking_wl_tid():
    err = diagnose(cell_kernel("""
        @wl.kernel
        def k(a: wl.array2d(dtype=wl.int32)):
            t = wl.tid()
            i, j = t
            a[i, j] = 1
    """))
    assert (err.line, err.col) == (4, 5) and err.message == "cannot unpack int32 into 2 names"
    assert "i, j = wl.tid()" in err.hint


@pytest.mark.parametrize("src, line, col", [
    ("@wl.kernel\ndef k(o: wl.array(dtype=wl.float32), x: None):\n    o[0] = 1.0\n", 2, 38),
    ("@wl.func\ndef f(v: None):\n    return v\n@wl.kernel\n"
     "def k(o: wl.array(dtype=wl.float64)):\n    o[0] = f(1.0)\n", 6, 14),
])
def test_none_as_an_annotation_is_not_float64(src, line, col):
    """``as_type`` handed None to ``np.dtype``, whose None is float64: ``x: None`` made a
    float64 kernel parameter, ``v: None`` a float64 device-function parameter."""
    err = diagnose(cell_kernel(src))
    assert (err.line, err.col) == (line, col) and "not a warp_lab type" in err.message


@pytest.mark.parametrize("bad", [0, True, 4, "2", 2.0])
def test_a_bad_launch_ndim_is_a_value_error(bad):
    """0 and True were taken as 'infer it', 2.0 failed inside the typer ('cannot compile
    this construct (TypeError: can't multiply sequence by non-int of type 'float')')."""
    k = cell_kernel("""
        @wl.kernel
        def k(o: wl.array2d(dtype=wl.int32)):
            t = wl.tid()
            o[t[0], t[1]] = 1
    """)
    with pytest.raises(ValueError, match=r"launch_ndim must be 1, 2 or 3 .*got"):
        wl.compile(k, cache=False, sass=False, launch_ndim=bad)
    assert wl.compile(k, cache=False, sass=False, launch_ndim=2).launch_ndim == 2


_EXACT = ["-2**63", "-(2**63 - 1) - 1", "1 << 63", "(1 << 63) - 1", "2**63 // 2",
          "-(-2**63)", "0x8000_0000_0000_0000 - 2**63 - 1"]


def test_constant_expressions_fold_exactly_through_2_to_the_63():
    """Python's value, stored in int64 (negative) or uint64: an intermediate 2**63 was
    'this constant expression (9223372036854775808) does not fit in 64 bits'."""
    stores = "\n".join(f"    {'o' if eval(e) < 2**63 else 'u'}[{k}] = {e}"
                       for k, e in enumerate(_EXACT))
    k = cell_kernel("@wl.kernel\ndef k(o: wl.array(dtype=wl.int64), "
                    "u: wl.array(dtype=wl.uint64)):\n" + stores + "\n")
    o, u = np.zeros(len(_EXACT), np.int64), np.zeros(len(_EXACT), np.uint64)
    wl.launch(k, dim=1, inputs=[o, u], device="sim")
    got = [int(o[k]) if eval(e) < 2**63 else int(u[k]) for k, e in enumerate(_EXACT)]
    assert got == [eval(e) for e in _EXACT]


@pytest.mark.parametrize("expr", ["-0xFFFF_FFFF_FFFF_FFFF", "~0xFFFF_FFFF_FFFF_FFFF"])
def test_a_constant_past_64_bits_after_a_unary_operator_is_an_error(expr):
    """They wrapped: ``-0xFFFF_FFFF_FFFF_FFFF`` stored 1 into a uint64, ``~`` of it 0."""
    err = diagnose(cell_kernel(f"""
        @wl.kernel
        def k(u: wl.array(dtype=wl.uint64)):
            u[0] = {expr}
    """))
    assert (err.line, err.col) == (3, 12) and f"({eval(expr)}) does not fit in 64 bits" \
        in err.message


def test_zip_outside_a_loops_iterable_is_named_as_such():
    """It said 'the Python builtin 'zip' is not available in kernels', though a loop over
    zip(t, u) is the language."""
    err = diagnose(cell_kernel("""
        @wl.kernel
        def k(a: wl.array(dtype=wl.int32)):
            for j, (p, q) in enumerate(zip((1, 2), (3, 4))):
                a[j] = p * q
    """))
    assert (err.line, err.col) == (3, len("    for j, (p, q) in enumerate(") + 1)
    assert err.message == "zip() is only a for loop's iterable in kernels"
    assert "for a, b in zip(t, u)" in err.hint
