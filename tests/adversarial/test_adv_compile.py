"""Adversarial kernels: constructs outside the language must be KernelCompileErrors.

Each rejected kernel must raise :class:`warp_lab.KernelCompileError` (never
another exception type) whose line and column point at the offending
construct in the cell, with the caret in ``str()``. These add the constructs
``tests/compiler/test_diagnostics.py`` does not cover.
"""

import re

import numpy as np
import pytest

import warp_lab as wl

from adv_cells import cell_kernel

HEAD = "@wl.kernel\ndef k(x: wl.array(dtype=wl.float32), n: int):\n"

#: (id, body after HEAD, line, col, message fragment)
REJECTED = [
    ("dict", "    d = {1: 2}\n", 3, 9, "dicts are not supported"),
    ("set", "    d = {1, 2}\n", 3, 9, "sets are not supported"),
    ("setcomp", "    d = {i for i in range(3)}\n", 3, 9, "set comprehensions"),
    ("walrus", "    if (m := n) > 0:\n        x[0] = 1.0\n", 3, 9, ":= operator"),
    ("match", "    match n:\n        case 1:\n            pass\n", 3, 5, "match statements"),
    ("while_else", "    while n > 0:\n        n -= 1\n    else:\n        x[0] = 1.0\n", 3, 5,
     "while ... else"),
    ("del", "    del n\n", 3, 5, "del is not supported"),
    ("import", "    import os\n", 3, 5, "import inside a kernel"),
    ("raise", "    raise ValueError()\n", 3, 5, "raise is not supported"),
    ("global", "    global G\n    G = 1\n", 3, 5, "global declarations"),
    ("nested_def", "    def g():\n        return 1\n", 3, 5, "nested function definitions"),
    ("nested_async_def", "    async def g():\n        pass\n", 3, 5, "async functions"),
    ("yield_from", "    yield from n\n", 3, 5, "yield from"),
    ("in_operator", "    if n in (1, 2):\n        pass\n", 3, 8, "'in' operator"),
    ("complex", "    x[0] = 1j\n", 3, 12, "complex literals"),
    ("ellipsis", "    m = ...\n", 3, 9, "ellipsis literals"),
    ("bytes", "    s = b'abc'\n", 3, 9, "bytes literals"),
    ("star_call", "    wl.printf(*n)\n", 3, 15, "unpacking is not supported"),
    ("numpy_call", "    x[0] = np.sqrt(2.0)\n", 3, 12, "numpy.sqrt is a Python function"),
    ("unpack_count", "    a, b = 1, 2, 3\n", 3, 5, "cannot unpack 3 values into 2 names"),
    ("unpack_int", "    a, b = n\n", 3, 5, "cannot unpack"),
    ("tid_four", "    i, j, k, l = wl.tid()\n", 3, 5, "1, 2 or 3 indices"),
    ("tid_arity_mismatch", "    i, j = wl.tid()\n    a, b, c = wl.tid()\n", 4, 5,
     "unpacked into 3 names here but into 2 elsewhere"),
    ("tid_argument", "    i = wl.tid(3)\n", 3, 9, "tid() takes no arguments, got 1"),
    ("shared_negative", "    s = wl.shared_array(-4, wl.float32)\n", 3, 25, "positive extents"),
    ("shared_4d", "    s = wl.shared_array((2, 2, 2, 2), wl.float32)\n", 3, 25,
     "1 to 3 positive extents"),
    ("local_too_big", "    s = wl.local_array(1 << 28, wl.float32)\n    s[n] = 1.0\n", 3, 9,
     "exceeds the 64 KB limit"),
    ("mod_zero_const", "    x[0] = float(1 % 0)\n", 3, 18, "division by zero"),
    ("huge_pow", "    m = 10 ** 1000000\n", 3, 9, "does not fit in 64 bits"),
    ("negative_int_pow", "    m = 2 ** -1\n", 3, 9, "negative power"),
    ("tuple_index_oob", "    t = (1, 2)\n    x[0] = float(t[5])\n", 4, 20, "out of range"),
    ("vec_index_oob", "    v = wl.vec3(1.0, 2.0, 3.0)\n    x[0] = v[5]\n", 4, 14, "out of range"),
    ("retype_to_array", "    m = 1.5\n    m = x\n", 4, 5, "cannot become an array"),
    ("array_to_int", "    x = 3\n", 3, 5, "cannot be reassigned"),
    ("call_kernel", "    k(x, n)\n", 3, 5, "kernels cannot call kernels"),
    # (2000 unary minus, once refused as nested too deeply, compile as in Python:
    # test_adv_hostile.test_code_python_compiles_is_not_nested_too_deeply_for_a_kernel)
    ("str_annotation", "    m: str = 1\n", 3, 8, "'str' is not available"),
    ("print_shadowed", "    print = 3\n    print(3)\n", 4, 5, "print is shadowed by the variable"),
]


@pytest.mark.parametrize("case", REJECTED, ids=[c[0] for c in REJECTED])
def test_rejected_construct_points_at_user_code(case):
    _, body, line, col, fragment = case
    kernel = cell_kernel(HEAD + body)
    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(kernel, cache=False)
    err = info.value
    assert fragment in err.message
    assert err.line == line
    if col:
        assert err.col == col
        text = str(err)
        src, caret = text.splitlines()[1:3]
        assert caret.strip() == "^" and len(caret) - 1 == col - 1 + 4  # under the column
        assert src.strip() == err.source_line.strip()
    assert err.filename.startswith("<adv ")


def test_recursion_through_two_funcs_names_the_cycle():
    kernel = cell_kernel("""
        @wl.func
        def f(n: int) -> int:
            return g(n)

        @wl.func
        def g(n: int) -> int:
            return f(n)

        @wl.kernel
        def k(x: wl.array(dtype=wl.int32)):
            x[0] = f(5)
    """)
    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(kernel, cache=False)
    assert "recursion" in info.value.message and "f -> g -> f" in info.value.message
    assert (info.value.line, info.value.col) == (7, 12)  # g's call of f


@pytest.mark.parametrize("params", ["x: int = 3", "*x: int", "**x: int", "*, x: int", "x: int, /"])
def test_parameter_forms_are_rejected(params):
    kernel = cell_kernel(f"@wl.kernel\ndef q({params}):\n    pass\n")
    with pytest.raises(wl.KernelCompileError, match="plain names"):
        wl.compile(kernel, cache=False)


@pytest.mark.parametrize("annotation", ["wl.array(dtype=str)", "wl.array(dtype=wl.float32, ndim=9)"])
def test_bad_array_annotation_in_magic_is_a_compile_error(ip, annotation):
    res = ip.run_cell(f"%%warp_kernel\ndef k(x: {annotation}):\n    pass\n")
    err = res.error_in_exec
    assert isinstance(err, wl.KernelCompileError)
    assert err.line == 2 and err.col == 7


def test_surrogate_in_string_literal_is_a_compile_error():
    kernel = cell_kernel(HEAD + "    print('\\udcff')\n")
    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(kernel, cache=False)
    assert info.value.line == 3


def test_func_missing_return_on_some_path_is_rejected():
    kernel = cell_kernel("""
        @wl.func
        def g(n: int):
            if n > 0:
                return 7

        @wl.kernel
        def k(x: wl.array(dtype=wl.int32), n: int):
            x[0] = g(n)
    """)
    with pytest.raises(wl.KernelCompileError):
        wl.compile(kernel, cache=False)


@pytest.mark.parametrize("body,read_line", [
    ("    if n > 5:\n        m = 1.5\n    x[0] = m\n", 5),
    ("    while n > 100:\n        m = 3.0\n        break\n    x[0] = m\n", 6),
], ids=["if", "while"])
def test_conditionally_assigned_variable_is_rejected(body, read_line):
    kernel = cell_kernel(HEAD + body)
    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(kernel, cache=False)
    assert info.value.line == read_line  # the line of the read x[0] = m


@pytest.mark.parametrize("arch", [["sm_90"], 90, "sm_90a"])
def test_compile_refuses_an_arch_that_is_not_a_supported_name(arch):
    """A list raised TypeError (unhashable) from the check, not the check's ValueError."""
    kernel = cell_kernel(HEAD + "    x[0] = 1.0\n")
    with pytest.raises(ValueError, match=re.escape(f"unsupported architecture {arch!r}; "
                                                   "warp_lab compiles for sm_50")):
        wl.compile(kernel, arch=arch)


def test_a_captured_class_is_called_a_class():
    """A module-level class (or IntEnum) read in a kernel was 'a Python function'."""
    kernel = cell_kernel("""
        import enum
        class Mode(enum.IntEnum):
            FAST = 3
        @wl.kernel
        def k(x: wl.array(dtype=wl.float32)):
            x[0] = float(Mode.FAST)
    """)
    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(kernel, cache=False, sass=False)
    assert info.value.message.startswith("'Mode' is a Python class")
    assert (info.value.line, info.value.col) == (6, 18)


@pytest.mark.parametrize("options", [dict(opt=np.int64(2)), dict(maxrregcount=np.int32(40)),
                                     dict(opt=2.0)], ids=["opt_np", "maxrreg_np", "opt_float"])
def test_numpy_integer_options_compile_and_launch(options):
    """opt=np.int64(2) (a loop over np.arange(4)) passed the option check and then raised
    TypeError: Object of type int64 is not JSON serializable, from the cache key."""
    kernel = cell_kernel(HEAD + "    x[wl.tid()] = float(n)\n")
    ck = wl.compile(kernel, **options)
    assert {k: type(getattr(ck.options, k)) for k in options} == {k: int for k in options}
    x = np.zeros(4, np.float32)
    wl.launch(kernel, dim=4, inputs=[x, 3], device="sim",
              **{k: v for k, v in options.items() if k == "opt"})   # (launch takes opt)
    assert (x == 3).all()
