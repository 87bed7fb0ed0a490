"""Diagnostics: every rejected construct is a KernelCompileError at the user's line and column.

Kernels are written as notebook-style cells (registered in :mod:`linecache`
like IPython does, then executed), so lines are cell lines and columns are
1-based, exactly what the user sees. Each case checks line, column, the
message and, where there is one, the hint.
"""

from __future__ import annotations

import math
import runpy
import textwrap

import pytest

import warp_lab as wl
from warp_lab.options import CompileOptions
from warp_lab.compiler.frontend import make_typed_ast
from warp_lab.compiler.lower import make_llvm_ir
from warp_lab.errors import KernelCompileError
from warp_lab.lang.kernel import Kernel, Source, cell_source

_counter = [0]


def cell_kernel(text: str, first_line: int = 1):
    """Run ``text`` as a notebook cell ``<cell N>`` and return the last kernel it defines."""
    _counter[0] += 1
    name = f"<cell {_counter[0]}>"
    code = "\n" * (first_line - 1) + textwrap.dedent(text).lstrip("\n")
    cell_source(code, name)
    ns = {"wl": wl, "math": math, "__name__": "cell"}
    exec(compile(code, name, "exec"), ns)  # noqa: S102 - the test's own source
    return [v for v in ns.values() if isinstance(v, Kernel)][-1]


def diagnose(kernel, **opts) -> KernelCompileError:
    options = CompileOptions(**opts)
    with pytest.raises(KernelCompileError) as info:
        make_llvm_ir(make_typed_ast(kernel, options), options)
    return info.value


HEAD = "@wl.kernel\ndef k(x: wl.array(dtype=wl.float32), n: int):\n"

#: (id, kernel body lines (after HEAD), line, col, message fragment, hint fragment)
CASES = [
    ("comprehension", "    y = [i for i in range(3)]", 3, 9,
     "list comprehensions are not allowed", "for loop"),
    ("class", "    class A:\n        pass", 3, 5, "class definitions are not allowed", "wl.vec3"),
    ("try", "    try:\n        pass\n    except Exception:\n        pass", 3, 5,
     "try/except is not supported", "assert"),
    ("lambda", "    f = lambda v: v", 3, 9, "lambda expressions are not allowed", "@wl.func"),
    ("list", "    y = [1, 2]", 3, 9, "lists are not supported", "wl.local_array"),
    ("generator", "    yield 1", 3, 5, "generators (yield) are not supported", ""),
    ("with", "    with n:\n        pass", 3, 5, "with statements are not supported", ""),
    ("fstring", '    print(f"{n}")', 3, 11, "f-strings are not supported", "print('x =', x)"),
    ("undefined", "    x[0] = undefined_thing", 3, 12, "name 'undefined_thing' is not defined", ""),
    ("before_assign", "    x[0] = v\n    v = 1.0", 3, 12, "'v' is used before it is assigned", ""),
    ("lossy_store", "    x[0] = wl.float64(n)", 3, 12,
     "cannot store float64 in x[0] of type float32 without losing information", "wl.float32("),
    ("lossy_var", "    m = 1\n    m = x[0]", 4, 9,
     "cannot store float32 in variable 'm' of type int32", "wl.int32("),
    ("lossy_aug", "    m = 0\n    m += x[0]", 4, 5, "m += ... gives float32", "wl.int32("),
    ("python_call", "    x[0] = helper(1.0)", 3, 12, "is a Python function", "@wl.func"),
    ("numpy_math", "    x[0] = numpy.sqrt(x[0])", 3, 12, "numpy.sqrt is a Python function",
     "numpy functions do not run in kernels; warp_lab's builtin for it: wl.sqrt"),
    ("numpy_round_to_even", "    x[0] = numpy.round(x[0])", 3, 12, "is a Python function",
     "warp_lab's builtin for it: wl.rint"),
    ("numpy_other", "    x[0] = numpy.cumsum(x)", 3, 12, "is a Python function",
     "use warp_lab's math builtins (wl.sqrt, wl.exp, ..."),
    # a builtin called with an argument missing, extra or misspelt: the hint lists them all
    ("shfl_without_mask", "    x[0] = wl.shfl_down_sync(x[0], 16)", 3, 12,
     "shfl_down_sync() needs the argument 'delta'",
     "the call is shfl_down_sync(mask, value, delta[, width])"),
    ("shfl_misspelt_keyword", "    x[0] = wl.shfl_sync(wl.FULL_MASK, x[0], 1, widht=16)", 3,
     54, "shfl_sync() has no parameter 'widht'",
     "the call is shfl_sync(mask, value, src_lane[, width])"),
    ("ballot_no_args", "    n = wl.ballot_sync()", 3, 9, "needs the argument 'mask'",
     "the call is ballot_sync(mask, predicate)"),
    ("activemask_extra", "    n = wl.activemask(1)", 3, 9,
     "activemask() takes no arguments, got 1", "the call is activemask()"),
    # warp_lab's names without wl., NumPy's array attributes, range over a shape
    ("bare_builtin", "    syncthreads()", 3, 5, "name 'syncthreads' is not defined",
     "write wl.syncthreads (with import warp_lab as wl), or import the name"),
    ("bare_thread_idx", "    x[thread_idx.x] = 0.0", 3, 7, "name 'thread_idx' is not defined",
     "write wl.thread_idx"),
    ("array_size", "    x[0] = x.size", 3, 12, "arrays have .shape, .ndim and .dtype, not .size",
     "write len(x), its element count"),
    ("array_method", "    x[0] = x.sum()", 3, 12, "not .sum",
     "array methods do not run in kernels"),
    ("range_of_shape", "    for k in range(x.shape):\n        pass", 3, 20,
     "range() arguments must be integers, not tuple of int32",
     "a tuple is not a number: take one element, x.shape[0]"),
    ("cuda_name", "    x[threadIdx.x] = 0.0", 3, 7, "name 'threadIdx' is not defined",
     "warp_lab's name for it: wl.thread_idx"),
    ("mask_minus_one", "    x[0] = wl.shfl_down_sync(-1, x[0], 1)", 3, 30,
     "the mask must be uint32; int32 would lose information",
     "a lane mask is a uint32: wl.FULL_MASK (0xFFFFFFFF) for all 32 lanes"),
    ("cuda_barrier", "    __syncthreads()", 3, 5, "name '__syncthreads' is not defined",
     "warp_lab's name for it: wl.syncthreads()"),
    ("for_non_range", "    for v in x:\n        pass", 3, 14, "for loops must iterate over range",
     "for i in range(n)"),
    ("range_float", "    for k in range(1.5):\n        pass", 3, 20,
     "range() arguments must be integers", "int("),
    ("range_zero_step", "    for k in range(0, n, 0):\n        pass", 3, 26,
     "range() step must not be zero", ""),
    ("kernel_return", "    return 1", 3, 12, "a kernel cannot return a value", "array parameter"),
    ("index_count", "    y = wl.local_array((4, 4), wl.float32)\n    x[0] = y[1]", 4, 12,
     "cannot store y[1], a 1-D view of an array, in x[0]", "y[1, j]"),
    ("too_many_indices", "    y = wl.local_array((4, 4), wl.float32)\n    x[0] = y[1, 2, 3]",
     4, 14, "a 2-D array takes at most 2 indices, got 3", ""),
    ("assign_row", "    y = wl.local_array((4, 4), wl.float32)\n    y[1] = 0.0", 4, 5,
     "cannot assign to y[1]: it is a 1-D view of y, not one element", "y[1, j] = ..."),
    ("float_index", "    x[1.5] = 0.0", 3, 7, "indices must be integers, not float32", "int("),
    ("true_division_index", "    x[n / 2] = 0.0", 3, 7, "indices must be integers, not float32",
     "/ is true division, a float even for integers (as in Python): write n // 2"),
    ("true_division_range", "    for k in range(n / 2):\n        pass", 3, 20,
     "range() arguments must be integers", "write n // 2 for the integer quotient"),
    ("slice", "    x[1:3] = 0.0", 3, 7, "slices are not supported", "a[i]"),
    ("vec_plus_scalar", "    v = wl.vec3(1.0, 2.0, 3.0) + 1.0", 3, 9,
     "vec3 + scalar is not defined", "vec3(s)"),
    ("printf_mismatch", '    wl.printf("%d\\n", x[0])', 3, 23, "%d needs an integer", "%f"),
    ("printf_count", '    wl.printf("%d %d\\n", n)', 3, 5,
     "the format has 2 conversions but 1 values", ""),
    ("shared_runtime_shape", "    s = wl.shared_array(n, wl.float32)", 3, 25,
     "must be a compile-time integer", "wl.constant"),
    ("shared_too_big", "    s = wl.shared_array(100000, wl.float32)", 3, 9,
     "exceeds the 48 KB limit", "use wl.dynamic_shared_array(dtype) and size it at launch, "
     "wl.launch(..., shared_mem=bytes)"),
    ("shared_total_too_big", "    s = wl.shared_array(10000, wl.float32)\n"
     "    u = wl.shared_array(3000, wl.float32)", 4, 9,
     "brings the kernel's static shared memory to 52000 bytes, over the 48 KB limit",
     "wl.dynamic_shared_array"),
    ("dynamic_shared_misaligned", "    s = wl.dynamic_shared_array(wl.float64, offset=12)", 3, 52,
     "must be a non-negative multiple of 8 bytes (the alignment of float64), got 12", ""),
    ("dynamic_shared_float_offset", "    s = wl.dynamic_shared_array(wl.int32, offset=1.5)", 3, 50,
     "the offset of dynamic_shared_array() is a number of bytes, an integer", ""),
    ("dynamic_shared_shape", "    s = wl.dynamic_shared_array((4, 4), wl.float32)", 3, 33,
     "dynamic_shared_array() takes no shape", "shared_mem=n * 4"),
    ("dynamic_shared_bad_dtype", "    s = wl.dynamic_shared_array(dtype=n)", 3, 39,
     "dtype must be a warp_lab type, not n", ""),
    ("shared_runtime_dtype", "    s = wl.shared_array(4, n)", 3, 28,
     "dtype must be a warp_lab type, not n", ""),
    ("atomic_local", "    y = wl.local_array(4, wl.int32)\n    wl.atomic_add(y, 0, 1)", 4, 19,
     "atomics need a global or shared array", ""),
    ("is_operator", "    if x[0] is None:\n        pass", 3, 8, "the 'is' operator is not supported",
     "=="),
    ("python_builtin", "    m = sorted(n)", 3, 9, "the Python builtin 'sorted' is not available",
     "range, len"),
    ("meta_in_variable", "    f = wl.sin", 3, 9, "cannot store sin (a compile-time value)", ""),
    ("array_rebind", "    x = wl.local_array(4, wl.float32)", 3, 5,
     "array variable 'x' cannot be rebound", "new name"),
    ("for_else", "    for k in range(n):\n        pass\n    else:\n        pass", 3, 5,
     "for ... else is not supported", ""),
    ("tid_arity", "    i, j = wl.tid()\n    a, b, c = wl.tid()", 4, 5,
     "wl.tid() is unpacked into 3 names here but into 2 elsewhere", ""),
    ("module_attr", "    wl.nonexistent()", 3, 5, "module 'warp_lab' has no attribute 'nonexistent'",
     ""),
    ("vec_component", "    v = wl.vec3(1.0, 2.0, 3.0)\n    x[0] = v.w", 4, 12,
     "vec3 has components x, y, z, not .w", ""),
    ("const_div_zero", "    x[0] = 1 // 0", 3, 12, "division by zero in a constant expression", ""),
    ("int_acc_of_floats", "    acc = 0\n    acc += x[0]", 4, 5, "cannot be stored in int32",
     "start it as one (acc = 0.0)"),
    ("range_uint64_signed", "    for k in range(wl.uint64(n), 0, -1):\n        pass", 3, 37,
     "range() mixes uint64 with a signed value", "wl.int64(n)"),
    ("big_literal", "    m = 123456789012345678901234567890", 3, 9, "does not fit in 64 bits", ""),
    ("numpy_capture", "    x[0] = table[0]", 3, 12, "is a numpy array", "kernel parameter"),
    ("bitop_on_float", "    m = x[0] << 2", 3, 9, "<< needs integers", "int("),
    ("int_vector_division", "    v = wl.vec3i(1, 2, 3) / 2", 3, 9, "/ on vec3i would need float",
     "wl.vec3(v) / 2.0"),
    ("condition_vector", "    if wl.vec3(1.0):\n        pass", 3, 8, "a vec3 cannot be used as a condition",
     "x != 0"),
]


@pytest.mark.parametrize("body,line,col,msg,hint", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_rejected_construct_points_at_the_user_code(body, line, col, msg, hint):
    prelude = "import numpy\ntable = numpy.zeros(3)\ndef helper(v):\n    return v\n"
    k = cell_kernel(prelude + HEAD + body + "\n")
    err = diagnose(k)
    assert msg in err.message
    assert (err.line - 4, err.col) == (line, col), str(err)
    assert hint in err.hint
    assert err.source_line == (prelude + HEAD + body).splitlines()[err.line - 1]
    assert err.filename == k.source.filename


@pytest.mark.parametrize("body, at, hint", [
    ("    x[0] = x[1] * HALF + PI\n", "x[0] =", "HALF is a numpy.float64, a typed constant, so "
     "the expression is float64 (a Python float would take the type beside it): bind HALF "
     "to a Python float (HALF = float(...)), or write wl.float32(...)"),
    ("    x[0] += x[1] * HALF\n", "x[0]", "HALF is a numpy.float64"),
    ("    m = 0\n    m += n * N\n", "m +=", "N is a numpy.int64, a typed constant, so the "
     "expression is int64 (a Python int would take the type beside it): bind N to a Python "
     "int (N = int(...)), or write wl.int32(...)"),
    # through a local variable, whose first assignment fixed its type: the line it came
    # from (the cell's line 7: four lines of prelude, the decorator, the def, then v = ...)
    ("    v = x[1] * HALF\n    x[0] = v\n", "x[0] = v", "v is float64: HALF is a "
     "numpy.float64, a typed constant, which made line 7 float64 (a Python float would take "
     "the type beside it): bind HALF to a Python float (HALF = float(...)), or write "
     "wl.float32(...)"),
    ("    v = x[1] * HALF\n    w = v + 1.0\n    x[0] = w * 2.0\n", "x[0] = w",
     "w is float64: HALF is a numpy.float64, a typed constant, which made line 7 float64"),
    ("    m = n * N\n    k = 0\n    k = m\n", "k = m", "m is int64: N is a numpy.int64"),
    ("    k = 0\n    k = n * N\n", "k = n", "N is a numpy.int64, a typed constant"),
])
def test_a_lossy_store_names_the_captured_numpy_scalar_that_widened_it(body, at, hint):
    """A student's ``HALF = np.float64(0.5)`` (or a value read from a numpy array) keeps its
    dtype, unlike ``0.5``: the store's hint names it instead of only the cast."""
    prelude = "import numpy, math\nHALF = numpy.float64(0.5)\nPI = math.pi\nN = numpy.int64(3)\n"
    k = cell_kernel(prelude + HEAD + body)
    err = diagnose(k)
    assert "without losing information" in err.message
    assert err.source_line.lstrip().startswith(at)
    assert hint in err.hint, err.hint


def test_a_lossy_store_of_an_explicit_cast_keeps_the_plain_hint():
    k = cell_kernel(HEAD + "    x[0] = x[1] * wl.float64(0.5)\n")
    assert diagnose(k).hint == "write wl.float32(...) to convert explicitly"


def test_a_module_used_before_its_import_says_to_import_it():
    """``-math.inf`` in a cell run before the notebook's ``import math``."""
    k = cell_kernel(HEAD + "    x[0] = -math.inf\n")
    del k.fn.__globals__["math"]
    err = diagnose(k)
    assert (err.line, err.col) == (3, 13) and err.message == "name 'math' is not defined"
    assert err.hint.startswith("import math first: kernels read modules from the notebook")


@pytest.mark.parametrize("name", ["debug", "launch", "zeros"])
def test_an_undefined_name_that_is_warp_labs_host_api_gets_no_wl_hint(name):
    # wl.debug, wl.launch...: no kernel can use them, so "write wl.debug" only led to
    # "'debug' is a Python function" (a kernel's own flag named debug, say)
    k = cell_kernel(HEAD + f"    if {name}:\n        x[0] = 1.0\n")
    err = diagnose(k)
    assert err.message == f"name {name!r} is not defined"
    assert "wl." + name not in err.hint, err.hint
    # the device side still gets it: a builtin, a type, FULL_MASK
    for dev in ("sqrt", "float32", "FULL_MASK"):
        err = diagnose(cell_kernel(HEAD + f"    x[0] = x[0] + {dev}(1)\n"
                                   if dev != "FULL_MASK" else HEAD + "    m = FULL_MASK\n"))
        assert f"write wl.{dev} (with import warp_lab as wl)" in err.hint, err.hint


def test_str_reads_like_a_compiler_diagnostic_with_a_caret():
    k = cell_kernel(HEAD + "    y = [i for i in range(3)]\n", first_line=12)
    text = str(diagnose(k))
    head, src, caret, hint = text.splitlines()
    assert k.source.filename.startswith("<cell ")        # shown as the notebook numbers it
    label = k.source.filename.replace("<cell ", "In[").replace(">", "]")
    assert head == f"{label}:14:9: error: list comprehensions are not allowed in kernels"
    assert src == "        y = [i for i in range(3)]"
    assert caret == "            ^"
    assert hint.startswith("hint: ")


def test_syntax_error_in_cell_text_is_located():
    ok = cell_kernel(HEAD + "    pass\n")
    bad = Kernel(ok.fn, Source(HEAD + "    x[0] = (1 +\n", "<cell 9>", first_line=5))
    err = diagnose(bad)
    assert err.filename == "<cell 9>" and err.line == 7 and "syntax error" in err.message


def test_break_outside_loop_and_missing_annotation():
    ok = cell_kernel(HEAD + "    pass\n")
    err = diagnose(Kernel(ok.fn, Source(HEAD + "    if n:\n        break\n", "<c>", 1)))
    assert (err.line, err.col, err.message) == (4, 9, "break outside a loop")
    k = cell_kernel("@wl.kernel\ndef k(x, n: int):\n    pass\n")
    err = diagnose(k)
    assert (err.line, err.col) == (2, 7) and "'x' needs a type annotation" in err.message
    k = cell_kernel("@wl.kernel\ndef k(x: list):\n    pass\n")
    assert "is not a warp_lab type" in diagnose(k).message


def test_recursion_is_rejected_with_the_call_chain():
    k = cell_kernel("""
        @wl.func
        def f(m):
            return g(m - 1) if m > 0 else 0

        @wl.func
        def g(m):
            return f(m)

        @wl.kernel
        def k(x: wl.array(dtype=wl.int32)):
            x[0] = f(3)
    """)
    err = diagnose(k)
    assert "recursion is not supported on the GPU (f -> g -> f)" in err.message
    assert (err.line, err.col) == (7, 12)  # the call f(m) inside g
    assert "loop" in err.hint


def test_calling_a_kernel_and_wrong_argument_count():
    k = cell_kernel("""
        @wl.kernel
        def other(x: wl.array(dtype=wl.int32)):
            pass

        @wl.kernel
        def k(x: wl.array(dtype=wl.int32)):
            other(x)
    """)
    err = diagnose(k)
    assert "kernels cannot call kernels" in err.message and err.line == 7
    k = cell_kernel("""
        @wl.func
        def one(a):
            return a

        @wl.kernel
        def k(x: wl.array(dtype=wl.int32)):
            x[0] = one(1, 2)
    """)
    err = diagnose(k)
    assert "one() takes at most 1 arguments, got 2" in err.message and (err.line, err.col) == (7, 12)


def test_lossy_argument_and_return_in_device_functions():
    k = cell_kernel("""
        @wl.func
        def half(a: wl.int32):
            return a // 2

        @wl.kernel
        def k(x: wl.array(dtype=wl.float32)):
            x[0] = half(x[1])
    """)
    err = diagnose(k)
    assert "argument 'a' of half() must be int32" in err.message and (err.line, err.col) == (7, 17)
    k = cell_kernel("""
        @wl.func
        def pick(a: float, b: wl.float64):
            if a > 0.0:
                return a
            return b

        @wl.kernel
        def k(x: wl.array(dtype=wl.float32)):
            x[0] = pick(x[1], 2.0)
    """)
    err = diagnose(k)
    assert "cannot store float64" in err.message and "x[0]" in err.message and err.line == 9


def test_columns_of_an_indented_kernel_are_the_file_columns():
    def factory():
        @wl.kernel
        def inner(x: wl.array(dtype=wl.float32)):
            x[0] = {1: 2}
        return inner

    k = factory()
    err = diagnose(k)
    assert err.line == k.source.first_line + 2
    assert err.col == 20 and "dicts are not supported" in err.message
    assert err.source_line.strip() == "x[0] = {1: 2}"


def test_the_traceback_shows_no_compiler_frames():
    import traceback
    k = cell_kernel(HEAD + "    y = [i for i in range(3)]\n")
    err = diagnose(k)
    frames = "".join(traceback.format_tb(err.__traceback__))
    assert "typing_exprs.py" not in frames and "frontend.py\", line" in frames
    assert frames.count("File ") == 2  # the caller (diagnose above), then make_typed_ast


def test_declared_return_types_are_enforced():
    k = cell_kernel("""
        @wl.func
        def half(a: float) -> wl.int32:
            return a / 2.0

        @wl.kernel
        def k(x: wl.array(dtype=wl.float32)):
            x[0] = float(half(x[1]))
    """)
    err = diagnose(k)
    assert "cannot store float32 in the return value of type int32" in err.message
    assert (err.line, err.col) == (3, 12) and "half(a: float32) was called at" in err.hint


#: (id, kernel body after HEAD, line of the read, message fragment, hint fragment) for
#: reads that Python would answer with UnboundLocalError on some path
MAYBE_UNASSIGNED = [
    ("if", "    if n > 5:\n        m = 1.5\n    x[0] = m", 5,
     "m may be used before it is assigned: it is only assigned inside the if at line 3",
     "assign m before the if"),
    ("elif", "    if n > 5:\n        m = 1.5\n    elif n > 2:\n        m = 2.5\n    x[0] = m", 7,
     "only assigned inside the if at line 3", "before the if"),
    ("for", "    for i in range(n):\n        m = 1.5\n    x[0] = m", 5,
     "only assigned inside the for loop at line 3", "before the for loop"),
    ("empty_range", "    for i in range(0):\n        m = 1.5\n    x[0] = m", 5,
     "inside the for loop at line 3", ""),
    ("while_break", "    while n > 100:\n        m = 3.0\n        break\n    x[0] = m", 6,
     "only assigned inside the while loop at line 3", "before the while loop"),
    ("if_in_loop", "    for i in range(4):\n        if i == n:\n            m = 1.0\n"
     "        x[i] = m", 6, "only assigned inside the if at line 4", ""),
    ("continue", "    for i in range(3):\n        if n > 1:\n            continue\n"
     "        m = 1.0\n    x[0] = m", 7, "only assigned inside the for loop at line 3", ""),
    ("later_in_loop", "    for i in range(n):\n        x[i] = m\n        m = 1.0", 4,
     "'m' is used before it is assigned", ""),
    ("augmented", "    if n > 1:\n        s = 0.0\n    s += 1.0\n    x[0] = s", 5,
     "s may be used before it is assigned", ""),
    ("constant_false_if", "    if 1 > 2:\n        m = 1.5\n    x[0] = m", 5,
     "only assigned inside the if at line 3", ""),
    ("declared_only", "    m: float\n    if n > 1:\n        m = 1.0\n    x[0] = m", 6,
     "inside the if at line 4", ""),
]


@pytest.mark.parametrize("body,line,msg,hint", [c[1:] for c in MAYBE_UNASSIGNED],
                         ids=[c[0] for c in MAYBE_UNASSIGNED])
def test_read_of_a_conditionally_assigned_variable_is_rejected(body, line, msg, hint):
    err = diagnose(cell_kernel(HEAD + body + "\n"))
    assert err.line == line
    assert msg in err.message and hint in err.hint


@pytest.mark.parametrize("body", [
    "    if n > 5:\n        m = 1.5\n    else:\n        m = 2.0\n    x[0] = m",
    "    if n > 5:\n        m = 1.5\n    else:\n        return\n    x[0] = m",
    "    while True:\n        m = 3.0\n        break\n    x[0] = m",
    "    for i in range(4):\n        m = 3.0\n    x[0] = m + float(i)",
    "    for i in range(n):\n        m = 3.0\n        x[i] = m",
    "    m = 0.0\n    for i in range(n):\n        if i > 2:\n            m = 3.0\n    x[0] = m",
    "    while n > 0:\n        if n > 3:\n            m = 1.0\n            x[0] = m\n        n -= 1",
    "    if 2 > 1:\n        m = 3.0\n    x[0] = m",
], ids=["if_else", "else_returns", "while_true", "constant_range", "in_body", "before",
        "inner_use", "constant_if"])
def test_definitely_assigned_reads_compile(body):
    make_llvm_ir(make_typed_ast(cell_kernel(HEAD + body + "\n")), CompileOptions())


def test_func_falling_off_the_end_on_some_path_is_rejected():
    k = cell_kernel("""
        @wl.func
        def g(n: int):
            if n > 0:
                return 7
            n += 1

        @wl.kernel
        def k(x: wl.array(dtype=wl.int32), n: int):
            x[0] = g(n)
    """)
    err = diagnose(k)
    assert "not every path of g returns a value" in err.message
    assert err.line == 5 and "add a return at the end" in err.hint


def test_func_returning_on_every_path_compiles():
    k = cell_kernel("""
        @wl.func
        def g(n: int):
            if n > 0:
                return 7
            else:
                return 1

        @wl.func
        def h(n: int):
            while True:
                if n > 3:
                    return n
                n += 1

        @wl.kernel
        def k(x: wl.array(dtype=wl.int32), n: int):
            x[0] = g(n) + h(n)
    """)
    make_llvm_ir(make_typed_ast(k), CompileOptions())


def test_lone_surrogate_in_a_string_is_a_compile_error_at_the_string():
    err = diagnose(cell_kernel(HEAD + "    print('ok \\udcff')\n"))
    assert (err.line, err.col) == (3, 11)
    assert "'\\udcff', a lone surrogate" in err.message and "UTF-8" in err.message


@pytest.mark.parametrize("body,col,msg,hint", [
    ("    a, *b = (1, 2)", 8, "starred assignment (*b) is not supported", "a, b, c = t"),
    ("    x[0] = wl.sqrt(**n)", 20, "** keyword unpacking is not supported",
     "name=value in wl.sqrt(...)"),
    ("    wl.tid = 3", 5, "cannot assign to wl.tid: wl is the module warp_lab, a compile-time "
     "name, not a variable", "local variable"),
    ("    t = (1, 2)\n    t[0] = 3", 5, "element of the tuple t: tuples are immutable",
     "wl.vec3"),
], ids=["starred", "double_star", "module_attribute", "tuple_element"])
def test_odd_targets_are_named_in_user_terms(body, col, msg, hint):
    err = diagnose(cell_kernel(HEAD + body + "\n"))
    assert err.col == col and msg in err.message and hint in err.hint
    assert "None" not in err.message and "Starred" not in err.message


def test_a_lambda_in_a_file_cannot_be_a_kernel(tmp_path, monkeypatch):
    (tmp_path / "lambda_kernel_mod.py").write_text(
        "import warp_lab as wl\n\nk = wl.kernel(lambda x: None)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import lambda_kernel_mod
    with pytest.raises(KernelCompileError) as info:
        make_typed_ast(lambda_kernel_mod.k)
    err = info.value
    assert err.message == "a lambda cannot be a kernel" and err.line == 3
    assert "@wl.kernel on the line above def" in err.hint


@pytest.mark.parametrize("arch", ["sm_80", "sm_100"])
def test_parameter_space_limit_matches_ptxas(arch):
    # launch_dim takes bytes 0..11, each 1-D array 16 bytes from byte 16: the last array
    # that fits ends exactly at the limit, and ptxas (the reference) accepts it
    from warp_lab.compiler.frontend import param_space_limit

    limit = param_space_limit(arch)
    fits = (limit - 16) // 16

    def kernel_with(n):
        params = ", ".join(f"a{k}: wl.array(dtype=wl.float32)" for k in range(n))
        return cell_kernel(f"@wl.kernel\ndef k({params}):\n    a0[0] = 1.0\n")

    ck = wl.compile(kernel_with(fits), arch=arch, cache=False, sass=False)
    assert ck.resources is not None, ck.missing
    err = diagnose(kernel_with(fits + 1), arch=arch)
    assert f"take at most {limit} bytes" in err.message and f"'a{fits}'" in err.message
    assert err.line == 2 and "stack arrays" in err.hint  # the def line, at the parameter


def test_loop_variable_reused_with_another_type_says_how_to_fix_it():
    k = cell_kernel("""
        @wl.kernel
        def k(a: wl.array(dtype=wl.float32), n: wl.int64):
            for j in range(4):
                a[j] = 0.0
            for j in range(n):
                a[j] = 1.0
    """)
    err = diagnose(k)
    assert (err.line, err.col) == (5, 9)
    assert err.message == "loop variable 'j' has type int32 but range() yields int64"
    assert "keeps one type: give this loop another variable" in err.hint
    assert "range(wl.int32(...))" in err.hint


@pytest.mark.parametrize("body,line,col,message,hint", [
    # a barrier without () is silently no barrier in Python
    ("    wl.syncthreads\n", 4, 5, "wl.syncthreads is not called: this line does nothing",
     "write wl.syncthreads() for the barrier"),
    # CUDA C++ spellings get warp_lab's name, typos the closest names
    ("    x[wl.threadIdx.x] = 1.0\n", 4, 7, "module 'warp_lab' has no attribute 'threadIdx'",
     "warp_lab's name for it: wl.thread_idx"),
    ("    x[0] = wl.shfl_dwn_sync(0xFFFFFFFF, x[0], 1)\n", 4, 12,
     "module 'warp_lab' has no attribute 'shfl_dwn_sync'", "did you mean wl.shfl_down_sync"),
    # wl.tid() of a 1-D launch indexed as if it were a 2-D tuple
    ("    i = wl.tid()\n    x[i[0]] = 1.0\n", 5, 7, "int32 cannot be indexed",
     "unpack it: i, j = wl.tid()"),
])
def test_student_slips_get_a_hint_that_names_the_fix(body, line, col, message, hint):
    k = cell_kernel("@wl.kernel\ndef k(x: wl.array(dtype=wl.float32), n: int):\n"
                    "    x[0] = 0.0\n" + body)
    err = diagnose(k)
    assert (err.line, err.col, err.message) == (line, col, message)
    assert hint in err.hint


def test_true_division_into_an_int_array_suggests_floor_division():
    k = cell_kernel("@wl.kernel\ndef k(x: wl.array(dtype=wl.int32)):\n"
                    "    i = wl.tid()\n    x[i] = i / 2\n")
    err = diagnose(k)
    assert err.message == "cannot store float32 in x[i] of type int32 without losing information"
    assert "for the integer quotient write // (i // 2)" in err.hint


def test_call_note_is_a_flag_not_a_phrase_in_the_hint(tmp_path):
    # the callee's own hint may say "was called at" (here a file path in it): the call
    # site is still noted, once, and an error already noted deeper gets no second note
    folder = tmp_path / "what was called at"
    folder.mkdir()
    path = folder / "kernels.py"
    path.write_text(textwrap.dedent("""
        import warp_lab as wl

        @wl.func
        def g(x: float, lo=[0.0]):
            return x + 1.0

        @wl.func
        def f(x: float):
            return g(x)

        @wl.func
        def bad(x: float) -> wl.int32:
            return x / 2.0

        @wl.func
        def mid(x: float):
            return bad(x)

        @wl.kernel
        def k(a: wl.array(dtype=wl.float32)):
            a[0] = f(a[1])

        @wl.kernel
        def k2(a: wl.array(dtype=wl.float32)):
            a[0] = float(mid(a[1]))
    """))
    ns = runpy.run_path(str(path))
    err = diagnose(ns["k"])
    assert "the default value of g(lo)" in err.message
    assert "was called at" in err.hint.split(";")[0]  # the hint names the path
    assert f"f(x: float32) was called at {path}:22" in err.hint and err.call_noted
    err = diagnose(ns["k2"])
    assert err.line == 14 and "mid(x" not in err.hint, err.hint
    assert f"bad(x: float32) was called at {path}:18" in err.hint and err.call_noted
