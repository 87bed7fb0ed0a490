"""Warp's generics (``typing.Any`` in ``@wp.func`` and ``@wp.kernel``: one specialisation
per set of argument types), tuple returns and ``wp.static``, against warp-lang's CPU."""

from __future__ import annotations

import numpy as np

from wpc_helpers import load_module

SOURCE = '''
import typing
import warp as wp

SCALE = 3

@wp.func
def twice(x: typing.Any):
    return x + x

@wp.func
def first(a: wp.array(dtype=typing.Any)):
    return a[0]

@wp.func
def split(x: float) -> tuple[float, int]:
    return x * 2.0, int(x)

@wp.kernel
def generic(a: wp.array(dtype=typing.Any), b: wp.array(dtype=typing.Any), s: typing.Any):
    i = wp.tid()
    b[i] = twice(a[i]) + first(a) * s

@wp.kernel
def tuples(x: wp.array(dtype=float), y: wp.array(dtype=float), n: wp.array(dtype=int)):
    i = wp.tid()
    f, k = split(x[i])
    y[i] = f
    n[i] = k + wp.static(SCALE * 2)
'''


def test_generic_kernels_static_and_tuple_returns_match_warp_cpu(tmp_path, warp_ref):
    import warp_lab.warp as wp
    ref = load_module(tmp_path / "ref_gen.py", SOURCE, "warp", "wpc_ref_gen")
    lab = load_module(tmp_path / "lab_gen.py", SOURCE, "warp_lab.warp", "wpc_lab_gen")
    for dt, s in (("float32", 2.0), ("int32", 3), ("float64", None)):
        ra = warp_ref.array([1, 2, 3], dtype=getattr(warp_ref, dt), device="cpu")
        la = wp.array([1, 2, 3], dtype=getattr(wp, dt))
        rb, lb = warp_ref.zeros_like(ra), wp.zeros_like(la)
        if s is None:   # a float64 scalar: Warp's own type object (numpy's is refused)
            rs, ls = warp_ref.float64(0.5), wp.float64(0.5)
        else:
            rs = ls = s
        warp_ref.launch(ref.generic, dim=3, inputs=[ra, rb, rs], device="cpu")
        wp.launch(lab.generic, dim=3, inputs=[la, lb, ls], device="cpu")
        assert lb.numpy().dtype == rb.numpy().dtype
        np.testing.assert_array_equal(lb.numpy(), rb.numpy(), err_msg=dt)
    assert len(lab.generic._specialisations) == 3
    x = np.array([1.5, -2.25, 7.0], np.float32)
    rargs = [warp_ref.array(x, dtype=float, device="cpu"),
             warp_ref.zeros(3, dtype=float, device="cpu"), warp_ref.zeros(3, dtype=int, device="cpu")]
    largs = [wp.array(x, dtype=float), wp.zeros(3, dtype=float), wp.zeros(3, dtype=int)]
    warp_ref.launch(ref.tuples, dim=3, inputs=rargs, device="cpu")
    wp.launch(lab.tuples, dim=3, inputs=largs, device="cpu")
    for r, a in zip(rargs, largs):
        np.testing.assert_array_equal(a.numpy(), r.numpy())
