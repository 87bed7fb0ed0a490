"""Internal compiler errors: a bug of ours is reported as warp_lab's, located, chained.

Faults are injected through real code paths: one of warp_lab's own internal
functions or methods is replaced by ``int``, which raises a TypeError on the
arguments it is given (from C, so the innermost Python frame is warp_lab's own,
as with a real bug). User errors must still come out as located
KernelCompileErrors, untouched.
"""

from __future__ import annotations

import pickle
import textwrap
import types

import pytest

import warp_lab as wl
from warp_lab.compiler import cache as C
from warp_lab.compiler import frontend, linemap
from warp_lab.compiler.lower_expr import ExprLowerer
from warp_lab.compiler.typing_exprs import ExprTyper
from warp_lab.errors import InternalCompilerError, KernelCompileError
from warp_lab.lang.kernel import Kernel, cell_source

_counter = [0]


def cell_kernel(text: str):
    """Run ``text`` as a notebook cell ``<cell N>`` (as test_diagnostics does) and return
    the last kernel it defines."""
    _counter[0] += 1
    name = f"<cell {9000 + _counter[0]}>"
    code = textwrap.dedent(text).lstrip("\n")
    cell_source(code, name)
    ns = {"wl": wl, "__name__": "cell"}
    exec(compile(code, name, "exec"), ns)  # noqa: S102 - the test's own source
    return [v for v in ns.values() if isinstance(v, Kernel)][-1]

#: the kernel every fault is injected into; line 4 has non-ASCII text before ``a[i] + 1.0``
KERNEL = '''
@wl.kernel
def k(a: wl.array(dtype=wl.float32)):
    i = wl.tid()
    print("héllo"); a[i] = a[i] + 1.0
'''
LINE, TEXT = 4, '    print("héllo"); a[i] = a[i] + 1.0'


def internal_error(kernel) -> InternalCompilerError:
    with pytest.raises(InternalCompilerError) as info:
        wl.compile(kernel, arch="sm_80", cache=False, sass=False)
    err = info.value
    assert not isinstance(err, KernelCompileError)
    text = str(err)
    assert "bug in warp_lab, not in your kernel" in text and "compiling kernel 'k'" in text
    assert isinstance(err.__cause__, TypeError) and str(err.__cause__) in text
    assert err.kernel == "k"
    return err


def test_fault_typing_an_expression_is_ours_at_its_column(monkeypatch):
    monkeypatch.setattr(ExprTyper, "visit_BinOp", int)
    err = internal_error(cell_kernel(KERNEL))
    assert err.stage == "frontend" and "cannot compile this construct" not in str(err)
    # the column counts characters: é is two UTF-8 bytes
    assert (err.line, err.col, err.source_line) == (LINE, TEXT.index("a[i] +") + 1, TEXT)
    assert err.filename.startswith("<cell ") and f":{LINE}:{err.col}:" in str(err)


@pytest.mark.parametrize("name, line", [
    ("check_flow", 2),  # the flow check after typing: the function's def line
    ("_static_callee", 3),  # launch_ndim inference before it: the call it was reading
])
def test_fault_outside_the_typers_visit_is_ours(monkeypatch, name, line):
    monkeypatch.setattr(frontend, name, int)
    err = internal_error(cell_kernel(KERNEL))
    assert err.stage == "frontend" and err.filename.startswith("<cell ")
    assert err.line == line


def test_fault_in_a_device_function_names_its_line(monkeypatch):
    monkeypatch.setattr(ExprTyper, "visit_BinOp", int)
    k = cell_kernel('''
        @wl.func
        def twice(x: float):
            return x * 2.0

        @wl.kernel
        def k(a: wl.array(dtype=wl.float32)):
            a[0] = twice(a[1])
    ''')
    err = internal_error(k)
    assert (err.line, err.col) == (3, 12) and "x * 2.0" in err.source_line
    assert "was called at" not in str(err)  # not dressed up as the user's error


def test_fault_lowering_an_expression_is_ours_at_its_column(monkeypatch):
    monkeypatch.setattr(ExprLowerer, "visit_BinOp", int)
    err = internal_error(cell_kernel(KERNEL))
    assert err.stage == "lower" and "arch='sm_80'" in err.request
    assert (err.line, err.col, err.source_line) == (LINE, TEXT.index("a[i] +") + 1, TEXT)


def test_fault_after_lowering_names_the_stage(monkeypatch):
    monkeypatch.setattr(linemap, "build_line_map", int)
    err = internal_error(cell_kernel(KERNEL))
    assert err.stage == "line map" and "arch='sm_80'" in err.request


def test_user_errors_pass_untouched():
    err_k = cell_kernel('''
        @wl.kernel
        def k(a: wl.array(dtype=wl.float32)):
            y = [i for i in range(3)]
    ''')
    with pytest.raises(KernelCompileError) as info:
        wl.compile(err_k, cache=False, sass=False)
    err = info.value
    assert (err.line, err.col) == (3, 9) and "comprehension" in err.message
    assert err.__cause__ is None and "bug in warp_lab" not in str(err)


class _Settings(types.ModuleType):
    """A module whose attributes the user's own code computes, and fails to."""

    def __getattr__(self, name):
        raise RuntimeError(f"setting {name} is not configured")


@pytest.mark.parametrize("cache", [False, True])
def test_users_own_code_raising_is_the_users_error(cache, tmp_path, monkeypatch):
    # with the cache on, the key is computed first: it must not raise the user's error
    # itself, unlocated (it did, a RuntimeError out of cache.fingerprint)
    monkeypatch.setattr(C, "_default", C.KernelCache(str(tmp_path)))
    settings = _Settings("settings")
    k = cell_kernel('''
        @wl.kernel
        def k(a: wl.array(dtype=wl.float32)):
            a[0] = settings.scale
    ''')
    k.fn.__globals__["settings"] = settings
    with pytest.raises(KernelCompileError) as info:
        wl.compile(k, cache=cache, sass=False)
    err = info.value
    assert (err.line, err.col) == (3, 12)
    assert "evaluating this raised RuntimeError: setting scale is not configured" in err.message
    assert "test_internal_errors.py" in err.message  # where the user's code raised
    assert isinstance(err.__cause__, RuntimeError)


def test_internal_error_pickles_with_its_location():
    err = InternalCompilerError("KeyError: 'x'", "lower", "options ...", kernel="k",
                                filename="<cell 3>", line=4, col=7, source_line="    a = b")
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == str(err) and (again.line, again.col, again.kernel) == (4, 7, "k")
    assert "In[3]:4:7" in str(err) and "\n          ^" in str(err)
