"""Messages that named the wrong thing: each must say what the user did, where.

A shadowed builtin (``range = 3``) made ``for i in range(2)`` say "for loops must
iterate over range(...)"; ``max(*t)`` said "max() takes two or more positional
arguments" (it now spreads the tuple, as Python does); an unknown ``@wl.kernel(...)`` option, a ``%%warp_kernel`` cell whose
kernel was not taken, a negative shift count, ``checks="memcheck"`` and a masked
array each gave an internal traceback, a wrong answer or no explanation.
"""

import importlib.util

import numpy as np
import pytest

import warp_lab as wl
from adv_cells import cell_kernel

HEAD = "@wl.kernel\ndef k(x: wl.array(dtype=wl.float32), n: int):\n"
LOOP = "    for i in range(2):\n        x[i] = 1.0\n"


def _error(kernel) -> wl.KernelCompileError:
    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(kernel, cache=False, sass=False)
    return info.value


def _caret_col(err) -> int:
    """The 1-based column the caret of ``str(err)`` sits under."""
    caret = str(err).splitlines()[2]
    assert caret.strip() == "^"
    return len(caret) - 4


# -- 1. a shadowed builtin ------------------------------------------------------------
@pytest.mark.parametrize("cell,line,binding,hint", [
    (HEAD + "    range = 3\n" + LOOP, 4, "the variable 'range' of k() (assigned on line 3)",
     "rename the variable"),
    ("@wl.kernel\ndef k(x: wl.array(dtype=wl.float32), range: int):\n" + LOOP, 3,
     "the parameter 'range' of k() (line 2)", "rename the parameter"),
    ("range = 3\n" + HEAD + LOOP, 4, "a notebook global (= 3, set on line 1 of <adv",
     "run `del range` in a cell"),
], ids=["local", "parameter", "global"])
def test_shadowed_range_names_the_binding(cell, line, binding, hint):
    err = _error(cell_kernel(cell))
    assert err.message.startswith("range is shadowed by ") and binding in err.message
    assert "for loops must iterate" not in err.message
    assert (err.line, err.col) == (line, 14) and _caret_col(err) == 14
    assert hint in err.hint


@pytest.mark.parametrize("name,use", [
    ("min", "x[0] = min(1.0, 2.0)"), ("max", "x[0] = max(1.0, 2.0)"),
    ("abs", "x[0] = abs(1.0)"), ("len", "n = len(x)"), ("float", "x[0] = float(n)"),
    ("int", "n = int(x[0])"), ("print", "print(n)"),
])
@pytest.mark.parametrize("binding", ["local", "parameter", "global"])
def test_every_shadowed_builtin_says_so(name, use, binding):
    body = f"    {use}\n"
    head = "@wl.kernel\ndef k(x: wl.array(dtype=wl.float32), n: wl.int32):\n"
    if binding == "local":
        cell, where = head + f"    {name} = 3\n" + body, "the variable"
    elif binding == "parameter":
        cell = (f"@wl.kernel\ndef k(x: wl.array(dtype=wl.float32), n: wl.int32, "
                f"{name}: wl.int32):\n" + body)
        where = "the parameter"
    else:
        cell, where = f"{name} = 3\n" + head + body, "a notebook global"
    err = _error(cell_kernel(cell))
    assert err.message.startswith(f"{name} is shadowed by ") and where in err.message
    assert f"Python's {name}()" in err.message and name in err.hint


def test_shadowed_int_in_an_annotation_says_so():
    err = _error(cell_kernel("int = 3\n" + HEAD + "    x[0] = 1.0\n"))
    assert err.message == ("the annotation of 'n' is int, which is shadowed here (= 3), "
                           "not Python's int")
    assert (err.line, err.col) == (3, 41) and "wl.int32" in err.hint


def test_shadowing_global_of_a_module_names_its_line(tmp_path):
    path = tmp_path / "shadow_mod.py"
    path.write_text("import warp_lab as wl\n\nmax = 7\n\n\n@wl.kernel\n"
                    "def k(x: wl.array(dtype=wl.float32)):\n    x[0] = max(1.0, 2.0)\n")
    spec = importlib.util.spec_from_file_location("adv_shadow_mod", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    err = _error(module.k)
    assert "a global of module adv_shadow_mod (= 7, set on line 3 of" in err.message
    assert (err.line, err.col) == (8, 12) and "rename the module's max" in err.hint


def test_from_builtins_import_range_is_still_range():
    kernel = cell_kernel("from builtins import range, max\n" + HEAD + LOOP
                         + "    x[1] = max(x[0], 2.0)\n")
    assert wl.compile(kernel, cache=False, sass=False).ptx


# -- 2. * and ** in a kernel call -----------------------------------------------------
# f(*t) of a value whose length the compile knows spreads it, as Python does (and Warp's
# codegen for vectors, matrices and slices); what it cannot spread is a located error
STAR_SPREAD = [
    "x[0] = max(*(1.0, 2.0))", "x[0] = min(*(1.0, 2.0))", "x[0] = abs(*(1.0,))",
    "x[0] = wl.sqrt(*(1.0,))", "x[0] = math.sqrt(*(1.0,))", "x[0] = float(*(1,))",
    "n = int(*(1.0,))", "x[0] = wl.float32(*(1,))", "v = wl.vec2(*(1.0, 2.0))",
    "i = wl.tid(*())", "print(*(1, 2))", "x[0] = g(*(1.0, 2.0))",
    "for i in range(*(0, 2)):\n        x[i] = 1.0",
]
STAR_REFUSED = [   # (use, the error's first words, its column)
    ("x[0] = g(*x)", "* unpacking is not supported in kernel calls for a global 1-D array", 14),
    ("x[0] = g(*x[0:wl.tid()])", "* unpacking of an expression with calls in it", 14),
    ("wl.atomic_add(*(x, 0, 1.0))", "tuples may hold only numbers, vectors and matrices", 20),
    ("s = wl.shared_array(*(4, wl.float32))", "wl.float32 is float32, not a value", 30),
]
KW_CALLS = [
    "x[0] = max(1.0, 2.0, **{})", "v = wl.vec2(**{'x': 1.0})", "print(1, **{'sep': ','})",
    "x[0] = g(**{'a': 1.0, 'b': 2.0})", "x[0] = wl.sqrt(**{'x': 1.0})",
    "for i in range(2, **{}):\n        x[i] = 1.0",
]
G = "@wl.func\ndef g(a, b):\n    return a + b\n"


@pytest.mark.parametrize("use", STAR_SPREAD)
def test_star_of_a_known_length_spreads_in_any_kernel_call(use):
    assert wl.compile(cell_kernel(G + HEAD + f"    {use}\n"), cache=False, sass=False).ptx


def test_spread_arguments_are_the_tuples_items_on_the_simulator():
    kernel = cell_kernel(G + HEAD + "    x[0] = g(*(1.5, 2.0))\n    x[1] = max(*(x[2], 4.0))\n"
                         "    x[2] = wl.float32(*(n,))\n")
    x = np.array([0, 0, 9, 0], np.float32)
    wl.launch(kernel, dim=1, inputs=[x, 7], device="sim")
    assert x.tolist() == [3.5, 9.0, 7.0, 0.0]


@pytest.mark.parametrize("use,message,col", STAR_REFUSED)
def test_star_the_compile_cannot_spread_is_one_located_message(use, message, col):
    err = _error(cell_kernel(G + HEAD + f"    {use}\n"))
    assert err.message.startswith(message), err.message
    assert (err.line, err.col) == (6, col) and _caret_col(err) == err.col


@pytest.mark.parametrize("use", KW_CALLS)
def test_keyword_unpacking_in_any_kernel_call_is_one_located_message(use):
    err = _error(cell_kernel(G + HEAD + f"    {use}\n"))
    first = use.splitlines()[0]
    assert err.message.startswith("** ") and "is not supported in kernel calls" in \
        err.message, err.message
    assert err.line == 6 and err.col == 5 + first.index("**") and _caret_col(err) == err.col
    assert "takes" not in err.message and "dicts" not in err.message


# -- 3. @wl.kernel(...) options -------------------------------------------------------
BODY = "def k(x: wl.array(dtype=wl.float32)):\n    x[0] = 1.0\n"


@pytest.mark.parametrize("deco,col,message,hint", [
    ("@wl.kernel(bogus=1)", 12, "@wl.kernel got unknown option 'bogus'",
     "arch, opt, fast_math, debug, maxrregcount"),
    ("@wl.kernel(debug=True, debgu=True)", 24, "unknown option 'debgu'", "did you mean debug"),
    ("@wl.kernel(arch='sm_1')", 12, "@wl.kernel: unsupported architecture 'sm_1'",
     "sm_80, sm_86"),
    ("@wl.kernel(debug=True, opt=7)", 24, "opt must be 0, 1, 2 or 3", ""),
    ("@wl.kernel(\n    debug='yes')", 5, "debug must be True or False", ""),
])
def test_kernel_option_error_points_at_the_decorator(deco, col, message, hint):
    with pytest.raises(wl.KernelOptionError) as info:
        cell_kernel(deco + "\n" + BODY)
    err = info.value
    assert isinstance(err, wl.KernelCompileError) and message in err.message
    assert err.filename.startswith("<adv ") and err.line == deco.count("\n") + 1
    assert err.col == col and _caret_col(err) == col and hint in err.hint
    # still what Python raises for an unknown keyword / a bad value
    assert isinstance(err, TypeError) and isinstance(err, ValueError)


def test_kernel_option_error_in_a_module_names_the_file_line(tmp_path):
    path = tmp_path / "option_mod.py"
    path.write_text("import warp_lab as wl\n\n\n@wl.kernel(arch='sm_1')\n" + BODY)
    spec = importlib.util.spec_from_file_location("adv_option_mod", path)
    module = importlib.util.module_from_spec(spec)
    with pytest.raises(wl.KernelOptionError) as info:
        spec.loader.exec_module(module)
    err = info.value
    assert (err.filename, err.line, err.col) == (str(path), 4, 12)
    tb = info.traceback
    assert not any("pipeline.py" in str(e.path) or "nvptx.py" in str(e.path) for e in tb)


@pytest.fixture()
def shell(ip):
    ip.run_cell("import warp_lab as wl\nimport functools")
    return ip


def test_kernel_option_error_in_a_warp_kernel_cell_is_a_located_box(shell, published):
    res = shell.run_cell("%%warp_kernel --show ptx\n@wl.kernel(bogus=1)\n" +
                         BODY.replace("def k", "def ce_opt"))
    err = res.error_in_exec
    assert isinstance(err, wl.KernelOptionError)
    assert (err.line, err.col) == (2, 12) and err.filename.startswith("<cell ")
    text = "\n".join(str(d.get("text/plain", "")) for d in published)
    assert "error: @wl.kernel got unknown option 'bogus'" in text
    assert "Traceback" not in text and "kernel.py" not in text


@pytest.mark.parametrize("kw,message", [
    ({"arch": "sm_1"}, "unsupported architecture 'sm_1'"), ({"opt": 9}, "opt must be"),
])
def test_compile_option_error_is_raised_by_compile_itself(kw, message):
    kernel = cell_kernel("@wl.kernel\n" + BODY)
    with pytest.raises(ValueError, match=message) as info:
        wl.compile(kernel, **kw)
    assert info.traceback[-1].name == "compile"   # not options.check_arch's frame


# -- 4. a %%warp_kernel cell whose function was not taken as a kernel -----------------
KBODY = "(x: wl.array(dtype=wl.float32)):\n    x[0] = 1.0\n"


def _indent(text: str) -> str:
    return "".join("    " + ln for ln in text.splitlines(True))


@pytest.mark.parametrize("cell,note", [
    ("if True:\n" + _indent("def ce_if" + KBODY),
     "ce_if (line 3) is defined inside an if block: %%warp_kernel compiles the cell's "
     "top-level defs"),
    ("for _ in range(1):\n" + _indent("def ce_for" + KBODY),
     "ce_for (line 3) is defined inside a for loop"),
    ("class CeC:\n" + _indent("def ce_cls" + KBODY), "ce_cls (line 3) is defined inside class CeC"),
    ("@functools.lru_cache\ndef ce_lru" + KBODY,
     "ce_lru has decorator @functools.lru_cache (line 2), which warp_lab does not know"),
    ("@staticmethod\ndef ce_static" + KBODY, "ce_static has decorator @staticmethod (line 2)"),
    ("try:\n" + _indent("@wl.kernel\ndef ce_try" + KBODY) + "except Exception:\n    pass\n",
     "ce_try (line 4) is a kernel defined inside a try block, which %%warp_kernel does not "
     "show"),
    ("ce_lam = lambda x: x\n", "ce_lam (line 2) is a lambda: write def ce_lam(...)"),
])
def test_no_kernel_note_says_what_was_found_and_why(shell, published, cell, note):
    res = shell.run_cell("%%warp_kernel --show source\n" + cell)
    assert res.error_in_exec is None
    notes = [d["text/plain"] for d in published if "no kernel in this cell" in
             str(d.get("text/plain", ""))]
    assert len(notes) == 1 and note in notes[0], notes
    assert "compiles the functions a cell defines" not in notes[0]


# -- 5. negative shift counts ---------------------------------------------------------
IHEAD = "@wl.kernel\ndef k(x: wl.array(dtype=wl.int32), n: int):\n"


@pytest.mark.parametrize("body,col,sym", [
    ("    x[0] = n << -1\n", 17, "<< -1"), ("    x[0] = n >> -3\n", 17, ">> -3"),
    ("    x[0] = 4 << -1\n", 17, "<< -1"), ("    n <<= -2\n    x[0] = n\n", 11, "<< -2"),
    ("    x[0] = n >> NEG\n", 17, ">> -2"),
])
def test_constant_negative_shift_is_a_located_compile_error(body, col, sym):
    err = _error(cell_kernel("NEG = -2\n" + IHEAD + body))
    assert err.message == f"negative shift count ({sym}): Python raises ValueError here"
    assert (err.line, err.col) == (4, col) and _caret_col(err) == col
    assert "shift the other way" in err.hint


SHIFTS = """
@wl.kernel
def k(x: wl.array(dtype=wl.int32), s: int, w: wl.int64):
    x[0] = x[0] << s
    x[1] = x[1] >> s
    x[2] = wl.int32(wl.int64(x[2]) >> w)
"""


def test_runtime_negative_shift_traps_with_pythons_message_under_debug():
    import numpy as np
    kernel = cell_kernel(SHIFTS)
    x = np.array([5, -5, -5], np.int32)
    res = wl.launch(kernel, dim=1, inputs=[x, -1, 2], device="sim", debug=True)
    cell = kernel.source.filename
    assert f"{cell}:3: negative shift count (-1)" in res.printed, res.printed
    assert [(f.kind, f.source_line) for f in res.findings] == [("trap", 3)]
    np.testing.assert_array_equal(x, [5, -5, -5])           # aborted before any store
    x = np.array([5, -5, -5], np.int32)
    res = wl.launch(kernel, dim=1, inputs=[x, 1, -2], device="sim", debug=True)
    assert f"{cell}:5: negative shift count (-2)" in res.printed, res.printed  # int64 count
    assert [(f.kind, f.source_line) for f in res.findings] == [("trap", 5)]


def test_runtime_negative_shift_without_debug_is_as_documented():
    import numpy as np
    kernel = cell_kernel(SHIFTS)
    x = np.array([5, -5, -5], np.int32)
    res = wl.launch(kernel, dim=1, inputs=[x, -1, -1], device="sim")
    assert not res.findings and not res.printed
    np.testing.assert_array_equal(x, [0, -1, -1])   # docs/language.md: width or more
    x = np.array([5, -5, 7], np.int32)
    wl.launch(kernel, dim=1, inputs=[x, 2, 1], device="sim", debug=True)
    np.testing.assert_array_equal(x, [5 << 2, -5 >> 2, 7 >> 1])  # the check keeps values


# -- 6. checks= as a string, masked arrays ---------------------------------------------
RACY = """
@wl.kernel
def k(x: wl.array(dtype=wl.float32), s: wl.array(dtype=wl.float32)):
    i = wl.tid()
    t = wl.shared_array(1, wl.float32)
    t[0] = x[i]
    s[i] = t[0]
"""


@pytest.mark.parametrize("checks,expect", [
    ("memcheck", ("memcheck",)), ("memcheck,racecheck", ("memcheck", "racecheck")),
    (" racecheck , memcheck ", ("memcheck", "racecheck")), ("", ()), ("racecheck", ("racecheck",)),
])
def test_checks_string_is_a_name_or_a_comma_list_never_characters(checks, expect):
    import numpy as np
    kernel = cell_kernel(RACY)
    res = wl.launch(kernel, dim=4, block_dim=4, device="sim", checks=checks,
                    inputs=[np.arange(4, dtype=np.float32), np.zeros(4, np.float32)])
    assert res.checks == expect
    kinds = {f.kind for f in res.findings}
    assert ("race" in " ".join(kinds)) == ("racecheck" in expect), kinds


def test_misspelled_check_names_the_close_one():
    import numpy as np
    kernel = cell_kernel(RACY)
    with pytest.raises(wl.LaunchError, match=r"unknown checks \['memchek'\].*did you mean "
                                             r"'memcheck'\?"):
        wl.launch(kernel, dim=4, device="sim", checks="memchek",
                  inputs=[np.zeros(4, np.float32), np.zeros(4, np.float32)])


def test_masked_array_argument_is_refused_not_unmasked():
    import numpy as np
    kernel = cell_kernel(RACY)
    m = np.ma.masked_array(np.arange(4, dtype=np.float32), mask=[0, 1, 0, 0])
    out = np.zeros(4, np.float32)
    with pytest.raises(wl.LaunchError) as info:
        wl.launch(kernel, dim=4, device="sim", inputs=[m, out])
    text = str(info.value)
    assert "parameter 'x' got a numpy masked array" in text
    assert "(1 of 4 elements masked) would be ignored" in text and "x.filled(value)" in text
    assert not out.any()
    for make in (wl.array, wl.from_numpy):
        with pytest.raises(TypeError, match="masked array.*data.filled"):
            make(m)


def test_kernel_option_error_column_counts_characters_after_non_ascii_text(tmp_path):
    # PEP 657 and ast columns count UTF-8 bytes: 'переменная' is 20 bytes, 10 characters
    path = tmp_path / "option_utf8.py"
    line = "переменная = wl.kernel(debug=True, bogus=1)"
    path.write_text("import warp_lab as wl\n" + line + "\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location("adv_option_utf8", path)
    module = importlib.util.module_from_spec(spec)
    with pytest.raises(wl.KernelOptionError) as info:
        spec.loader.exec_module(module)
    err = info.value
    assert (err.line, err.col) == (2, line.index("bogus") + 1)
