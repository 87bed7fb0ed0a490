"""A hostile but realistic user: constants, arguments and cells at the edges.

Each test states what went wrong before its fix: the input and what happened.
"""

import sys

import numpy as np
import pytest

import warp_lab as wl

from adv_cells import cell_kernel


@pytest.mark.parametrize("expr, shown", [("int(1e30)", "1e+30"), ("wl.uint32(-1.0)", "-1.0"),
                                         ("wl.int8(300.0)", "300.0"),
                                         ("wl.int64(1e19)", "1e+19"),
                                         ("wl.int64(wl.vec2i(0, 1.5e10).y)", "15000000000.0")])
def test_constant_float_out_of_an_ints_range_is_a_compile_error(expr, shown):
    """``int(1e30)`` folded to 0 (the exact integer wrapped to 32 bits) where the same
    conversion at run time clamps (PTX ``cvt.rzi`` saturates) and Python gives an int no
    int32 holds: a number the user never wrote. Like ``int(float('inf'))``, it is a
    located compile error naming the value and the range."""
    kernel = cell_kernel(f"""
        @wl.kernel
        def k(x: wl.array(dtype=wl.int64)):
            x[0] = wl.int64({expr})
    """)
    with pytest.raises(wl.KernelCompileError) as exc:
        wl.compile(kernel)
    text = str(exc.value)
    assert ":3:" in text and expr in text and shown in text and "out of range" in text, text
    assert "Traceback" not in text


def test_constant_float_in_an_ints_range_still_folds_like_the_run_time_conversion():
    kernel = cell_kernel("""
        @wl.kernel
        def k(x: wl.array(dtype=wl.int64), v: float):
            x[0] = int(-2.75)
            x[1] = int(v)
            x[2] = wl.int64(wl.uint8(255.9))
            x[3] = wl.int64(wl.uint32(-0.5))
    """)
    x = np.zeros(4, np.int64)
    wl.launch(kernel, dim=1, inputs=[x, -2.75], device="sim")
    assert x.tolist() == [-2, -2, 255, 0]


def test_array_with_data_and_a_shape_keeps_the_data_or_refuses():
    """``wl.array([1, 2, 3, 4], shape=(3,))`` returned three zeros: the data was dropped
    without a word. Data of the given shape is kept; another shape is refused, naming both."""
    a = wl.array([1.0, 2.0, 3.0, 4.0], dtype=wl.float32, shape=(2, 2))
    assert a.numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    a = wl.array([1.0, 2.0, 3.0], dtype=wl.float32, shape=3)
    assert a.numpy().tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match=r"4 elements.*shape=\(3,\)"):
        wl.array([1.0, 2.0, 3.0, 4.0], dtype=wl.float32, shape=(3,))


def test_array_of_vectors_needs_their_trailing_extent():
    """``wl.array(np.zeros((4, 2)), dtype=wl.vec3)`` made a (4, 2) float32 array, refused
    only later, at a launch, as the wrong shape; and ``ndim=`` with data was ignored."""
    assert wl.array(np.zeros((4, 3)), dtype=wl.vec3).shape == (4, 3)
    with pytest.raises(ValueError, match=r"wl.vec3.*trailing extents are \(3,\).*\(4, 2\)"):
        wl.array(np.zeros((4, 2)), dtype=wl.vec3)
    with pytest.raises(ValueError, match=r"wl.mat22"):
        wl.array(np.zeros((4, 2)), dtype=wl.mat22)
    with pytest.raises(ValueError, match=r"ndim=1.*2-D"):
        wl.array(np.zeros((4, 2)), dtype=wl.float32, ndim=1)
    assert wl.array(np.zeros((4, 2)), dtype=wl.float32, ndim=2).shape == (4, 2)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Python 3.10 recurses on the C stack")
@pytest.mark.parametrize("what, body", [
    ("a sum of 2000 terms", "    x[i] = " + " + ".join(["n"] * 2000) + "\n"),
    ("2000 unary minus", "    x[i] = " + "-" * 2000 + "n\n"),
    ("an elif chain of 1000", "    a = 0\n    if n == 0:\n        a = 1\n"
     + "".join(f"    elif n == {j}:\n        a = {j}\n" for j in range(1, 1000))
     + "    x[i] = a\n")])
def test_code_python_compiles_is_not_nested_too_deeply_for_a_kernel(what, body):
    """``v0 + v1 + ... + v399`` and an elif chain of 400 (generated code) were refused
    as "expression nested too deeply": the typer and lowering recurse a few Python frames
    per level and hit the default recursion limit (1000) near 330 levels, where Python
    itself compiles about 3000. Whatever Python compiles, a kernel compiles."""
    kernel = cell_kernel("@wl.kernel\ndef k(x: wl.array(dtype=wl.int32), n: int):\n"
                         "    i = wl.tid()\n" + body)
    limit = sys.getrecursionlimit()
    x = np.zeros(1, np.int32)
    wl.launch(kernel, dim=1, inputs=[x, 3], device="sim")
    want = {"a sum of 2000 terms": 6000, "2000 unary minus": 3, "an elif chain of 1000": 3}
    assert x[0] == want[what]
    assert sys.getrecursionlimit() == limit   # restored


@pytest.fixture()
def shell(ip):
    ip.run_cell("import warp_lab as wl\nimport numpy as np")
    return ip


# characters str.splitlines() ends a line at and Python's tokenizer does not (a line or
# paragraph separator pasted from a web page or PDF, a form feed from an old source file)
SEPARATORS = {"U+2028": "\u2028", "U+2029": "\u2029", "form feed": "\x0c", "U+0085": "\x85"}


@pytest.mark.parametrize("sep", list(SEPARATORS))
def test_a_line_separator_in_a_magic_cell_keeps_the_code_python_runs(shell, published, sep):
    """A U+2028 in a comment of a ``%%warp_kernel`` cell ended the kernel there: the cell's
    lines were split with str.splitlines(), which breaks at it, so ``b`` began a new line
    at column 0 and the store after it was silently left out (the array stayed 0). A form
    feed before an indent was a syntax error Python does not raise."""
    ch = SEPARATORS[sep]
    lead = ch if ch == "\x0c" else ""   # Python takes a form feed before an indent
    res = shell.run_cell("%%warp_kernel\ndef k(x: wl.array(dtype=wl.float32)):\n"
                         f"    i = wl.tid()\n    # a{ch}b\n{lead}    x[i] = 5.0\n")
    assert res.error_in_exec is None, res.error_in_exec
    res = shell.run_cell("x = np.zeros(4, np.float32)\n"
                         "wl.launch(k, dim=4, inputs=[x], device='sim')\nx.tolist()")
    assert res.result == [5.0] * 4


def test_a_line_separator_in_a_plain_cell_is_an_error_not_dropped_code(shell):
    """In an ordinary cell, IPython's own copy of the cell (what inspect reads) is split
    at the U+2028, so the kernel's source ends early; the store that Python compiled was
    silently left out. warp_lab now sees that the code runs past the source it read."""
    res = shell.run_cell("@wl.kernel\ndef k(x: wl.array(dtype=wl.float32)):\n"
                         "    i = wl.tid()\n    # a\u2028b\n    x[i] = 5.0\n")
    err = res.error_in_exec
    assert isinstance(err, wl.KernelCompileError), err
    assert "U+2028" in str(err) and "line 5" in str(err), str(err)


def test_a_kernel_file_cut_short_after_import_says_the_file_changed(tmp_path, monkeypatch):
    """The same check on a file: the module was imported, then the file was cut short;
    compiling from the new text would leave the old code's last lines out."""
    import importlib

    path = tmp_path / "adv_cut_kernel.py"
    path.write_text("import warp_lab as wl\n\n\ndef k(x: wl.array(dtype=wl.float32)):\n"
                    "    i = wl.tid()\n    x[i] = 1.0\n    x[i] += 2.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("adv_cut_kernel")
    path.write_text("import warp_lab as wl\n\n\ndef k(x: wl.array(dtype=wl.float32)):\n"
                    "    i = wl.tid()\n")
    import linecache
    linecache.checkcache(str(path))
    with pytest.raises(wl.KernelCompileError, match="changed since it was imported"):
        wl.kernel(mod.k)


@pytest.mark.parametrize("kwargs, match", [
    ({"ndim": 5}, r"1 to 4 dimensions, not ndim=5"),
    ({"ndim": 0}, r"1 to 4 dimensions, not ndim=0"),
    ({"shape": (-1, -2)}, r"shape=\(-1, -2\).*integers >= 0"),
    ({"shape": (2.0,)}, r"integers >= 0"),
    ({"shape": (-1,)}, r"no -1"),
])
def test_array_with_data_checks_ndim_and_shape_as_values(kwargs, match):
    """With data, ``ndim=5`` made a 5-D array (the docstring says 1..4, as the annotation
    checks), ``shape=(-1, -2)`` reached numpy's reshape ("can only specify one unknown
    dimension") and ``shape=(2.0,)`` its TypeError."""
    data = np.zeros((1, 1, 1, 1, 1)) if kwargs.get("ndim") == 5 else np.zeros(2)
    with pytest.raises(ValueError, match=match):
        wl.array(data, dtype=wl.float32, **kwargs)
