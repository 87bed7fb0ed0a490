"""``wp.types.vector``/``wp.types.matrix``: types made at module level used as
constructors, and the factories called inside kernels (Warp's ``vector(*args,
length=, dtype=)`` and ``matrix(*args, shape=, dtype=)`` builtins), against warp-lang's
CPU device."""

from __future__ import annotations

import numpy as np
import pytest

import warp_lab as wl
from wpc_helpers import load_module

SOURCE = '''
import warp as wp
vec5 = wp.types.vector(length=5, dtype=wp.float32)
mat23 = wp.types.matrix(shape=(2, 3), dtype=wp.float64)

@wp.kernel
def k(out: wp.array(dtype=wp.float32), outd: wp.array(dtype=wp.float64)):
    a = wp.vec2(1.5, -2.0)
    b = wp.types.vector(a, dtype=wp.float16)
    c = wp.types.vector(1.0, 2.0, 3.0, dtype=float)
    d = wp.types.vector(2.5, length=3, dtype=wp.float64)
    e = wp.types.vector(length=2, dtype=wp.int32)
    f = vec5(1.0, 2.0, 3.0, 4.0, 5.0)
    m = wp.types.matrix(shape=(2, 3), dtype=wp.float64)
    n = wp.types.matrix(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, shape=(2, 3))
    p = mat23(1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
    g = wp.types.vector(a)
    out[0] = float(b[0]) + float(b[1]) + g[1] * 10.0
    out[1] = c[2] + f[0] + f[1] + f[2] + f[3]
    out[2] = float(e[1])
    out[3] = f[4]
    out[4] = n[1, 2]
    outd[0] = d[1] + m[1, 2] + p[1, 1]
'''


def test_vector_and_matrix_factories_match_warp_cpu(tmp_path, warp_ref):
    ref = load_module(tmp_path / "ref_types.py", SOURCE, "warp", "wpc_ref_types")
    lab = load_module(tmp_path / "lab_types.py", SOURCE, "warp_lab.warp", "wpc_lab_types")
    import warp_lab.warp as wp

    outs = []
    for m, mod in ((warp_ref, ref), (wp, lab)):
        o = m.zeros(5, dtype=m.float32, device="cpu")
        od = m.zeros(1, dtype=m.float64, device="cpu")
        m.launch(mod.k, dim=1, inputs=[o, od], device="cpu")
        outs.append((o.numpy(), od.numpy()))
    np.testing.assert_array_equal(outs[1][0], outs[0][0])
    np.testing.assert_array_equal(outs[1][1], outs[0][1])
    assert outs[1][0].tolist() == [-20.5, 13.0, 0.0, 5.0, 6.0]


@pytest.mark.parametrize("body, message", [
    ("m = wp.types.matrix(1.0, 2.0, 3.0, 4.0)", "needs shape="),
    ("m = wp.types.matrix(wp.vec2(), wp.vec2(), shape=(2, 2))", "passing vectors"),
    ("v = wp.types.vector(1.0, size=2)", "takes length= and dtype=, not size="),
    ("v = wp.types.vector(1.0, length=n)", "compile-time constant"),
])
def test_factory_misuse_is_a_located_error(tmp_path, body, message):
    src = f"import warp as wp\n\n@wp.kernel\ndef bad(n: int):\n    {body}\n"
    lab = load_module(tmp_path / "lab_bad.py", src, "warp_lab.warp", "wpc_lab_types_bad")
    with pytest.raises(wl.KernelCompileError, match=message) as info:
        wl.compile(lab.bad)
    assert ":5:" in str(info.value)
