"""The Warp dialect against warp-lang's CPU device: integer ``/`` truncates, ``%`` has C's
sign (``fmod`` for floats), a float ``//`` is ``floor(a / b)``, ``print`` writes ``%g``;
``@wl.kernel`` keeps Python's rules; the dialect is in the cache key and the panes."""

from __future__ import annotations

import numpy as np

import warp_lab as wl
from wpc_helpers import load_module

SOURCE = '''
import warp as wp

@wp.func
def cdiv(a: int, b: int):
    return a / b

@wp.kernel
def arith(a: wp.array(dtype=wp.int32), b: wp.array(dtype=wp.int32),
          q: wp.array(dtype=wp.int32), r: wp.array(dtype=wp.int32),
          fl: wp.array(dtype=wp.int32), fq: wp.array(dtype=wp.int32),
          x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32),
          fm: wp.array(dtype=wp.float32), ff: wp.array(dtype=wp.float32),
          u: wp.array(dtype=wp.uint32), uq: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    q[i] = a[i] / b[i]
    r[i] = a[i] % b[i]
    fl[i] = a[i] // b[i]
    fq[i] = cdiv(a[i], b[i]) + (-7 / 2) * 100 + (-7 % 3) * 1000
    fm[i] = x[i] % y[i]
    ff[i] = x[i] // y[i]
    uq[i] = u[i] / wp.uint32(3) + u[i] % wp.uint32(5)

@wp.kernel
def printing(x: float, n: int, v: wp.vec3, m: wp.mat22):
    print(x)
    print(2.0)
    print(n)
    print(v)
    print(m)
    print(n > 2)
'''


def _inputs(wp, dev):
    a = np.array([-7, 7, -7, 7, 5, -1, 0, -2147483647], np.int32)
    b = np.array([2, -2, -2, 2, 3, 3, 5, 10], np.int32)
    x = np.array([-7.5, 7.5, 1.0, 2.0, 3.25, -0.5, 5.0, -1e-3], np.float32)
    y = np.array([2, -2, 0.1, 1, 1, 0.25, -3, 7], np.float32)
    u = np.array([0, 1, 7, 8, 4294967295, 100, 3, 9], np.uint32)
    ints = [wp.zeros(8, dtype=wp.int32, device=dev) for _ in range(4)]
    floats = [wp.zeros(8, dtype=wp.float32, device=dev) for _ in range(2)]
    args = [wp.array(a, dtype=wp.int32, device=dev), wp.array(b, dtype=wp.int32, device=dev),
            *ints, wp.array(x, dtype=wp.float32, device=dev),
            wp.array(y, dtype=wp.float32, device=dev), *floats,
            wp.array(u, dtype=wp.uint32, device=dev), wp.zeros(8, dtype=wp.uint32, device=dev)]
    return args


def test_integer_and_float_division_match_warp_cpu(tmp_path, warp_ref):
    ref = load_module(tmp_path / "ref_div.py", SOURCE, "warp", "wpc_ref_div")
    lab = load_module(tmp_path / "lab_div.py", SOURCE, "warp_lab.warp", "wpc_lab_div")
    ref_args = _inputs(warp_ref, "cpu")
    warp_ref.launch(ref.arith, dim=8, inputs=ref_args, device="cpu")
    import warp_lab.warp as wp
    lab_args = _inputs(wp, "cpu")
    wp.launch(lab.arith, dim=8, inputs=lab_args, device="cpu")
    for k in (2, 3, 4, 5, 8, 9, 11):
        np.testing.assert_array_equal(lab_args[k].numpy(), ref_args[k].numpy(), err_msg=str(k))
    # the values the dialect is about, spelled out (C's sign, truncation)
    assert lab_args[2].numpy()[:4].tolist() == [-3, -3, 3, 3]
    assert lab_args[3].numpy()[:4].tolist() == [-1, 1, -1, 1]
    assert lab_args[8].numpy()[0] == np.float32(-1.5)
    assert wp.last_launch().compiled.dialect == "warp"


def test_print_formats_match_warp_cpu(tmp_path, warp_ref, capfd):
    ref = load_module(tmp_path / "ref_print.py", SOURCE, "warp", "wpc_ref_print")
    lab = load_module(tmp_path / "lab_print.py", SOURCE, "warp_lab.warp", "wpc_lab_print")
    import warp_lab.warp as wp
    args = [2.0, 3, (1.0, 2.5, -3.0), ((1.0, 2.0), (3.0, 4.5))]
    capfd.readouterr()
    warp_ref.launch(ref.printing, dim=1, inputs=[2.0, 3, warp_ref.vec3(1.0, 2.5, -3.0),
                                                  warp_ref.mat22(1.0, 2.0, 3.0, 4.5)],
                    device="cpu")
    warp_ref.synchronize()
    expected = "".join(ln for ln in capfd.readouterr().out.splitlines(keepends=True)
                       if not ln.startswith("Module "))   # Warp's "Module ... load" line
    wp.launch(lab.printing, dim=1, inputs=[2.0, 3, np.array(args[2], np.float32),
                                           np.array(args[3], np.float32)], device="cpu")
    got = capfd.readouterr().out
    assert got == expected
    assert got.startswith("2\n2\n3\n1 2.5 -3 \n1 2 \n3 4.5 \nTrue\n")


def test_wl_kernel_keeps_python_semantics_and_the_cache_key_differs():
    def body(a: wl.array(dtype=wl.int32), q: wl.array(dtype=wl.float32),
             r: wl.array(dtype=wl.int32)):
        i = wl.tid()
        q[i] = a[i] / 2
        r[i] = a[i] % 3

    py = wl.kernel(body)
    from warp_lab.lang.kernel import Kernel
    warp = Kernel(body, dialect="warp")
    a = np.array([-7, 7], np.int32)
    q, r = np.zeros(2, np.float32), np.zeros(2, np.int32)
    wl.launch(py, dim=2, inputs=[a, q, r], device="sim")
    assert q.tolist() == [-3.5, 3.5] and r.tolist() == [2, 1]   # Python's
    q2, r2 = np.zeros(2, np.float32), np.zeros(2, np.int32)
    wl.launch(warp, dim=2, inputs=[a, q2, r2], device="sim")
    assert q2.tolist() == [-3.0, 3.0] and r2.tolist() == [-1, 1]   # C's, same source
    ck_py = wl.compile(py)
    ck_wp = wl.compile(Kernel(lambda_free_body, dialect="warp"))
    ck_py2 = wl.compile(wl.kernel(lambda_free_body))
    assert ck_wp.cache_key != ck_py2.cache_key
    assert ck_wp.dialect == "warp" and ck_py.dialect == ck_py2.dialect == "python"
    # C's remainder is srem alone; Python's adds the sign fix-up (a select on r ^ b < 0)
    assert "srem" in ck_wp.llvm_ir and "select" not in ck_wp.llvm_ir
    assert "select" in ck_py2.llvm_ir


def lambda_free_body(a: wl.array(dtype=wl.int32), r: wl.array(dtype=wl.int32)):
    i = wl.tid()
    r[i] = a[i] % 3


def test_panes_say_the_dialect():
    from warp_lab.compiler.artifact import DIALECT_LABEL
    from warp_lab.lang.kernel import Kernel
    from warp_lab.notebook.bundle import compiled_kernel_mimebundle
    from warp_lab.notebook.views import kernel_html
    ck = wl.compile(Kernel(lambda_free_body, dialect="warp"))
    import html
    assert html.escape(DIALECT_LABEL) in kernel_html(ck)
    bundle = compiled_kernel_mimebundle(ck)
    assert DIALECT_LABEL in str(bundle)
    assert html.escape(DIALECT_LABEL) not in kernel_html(wl.compile(wl.kernel(lambda_free_body)))
