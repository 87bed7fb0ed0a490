"""Warp's random streams (``rand_init``, ``randf``, ``randi``, ``randn``: warp/native/rand.h)
and ``@wp.func`` overloads by parameter types and count, against warp-lang's CPU device."""

from __future__ import annotations

import numpy as np

from wpc_helpers import load_module

SOURCE = '''
import warp as wp

@wp.func
def f(x: float):
    return x * 2.0

@wp.func
def f(x: int):
    return x + 100

@wp.func
def f(x: float, y: float):
    return x - y

@wp.kernel
def streams(seed: int, u: wp.array(dtype=float), g: wp.array(dtype=float),
            n: wp.array(dtype=int), m: wp.array(dtype=int), z: wp.array(dtype=float)):
    i = wp.tid()
    state = wp.rand_init(seed, i)
    u[i] = wp.randf(state)
    g[i] = wp.randf(state, -2.0, 3.0)
    n[i] = wp.randi(state)
    m[i] = wp.randi(state, -5, 17)
    z[i] = wp.randn(state)

@wp.kernel
def overloads(a: wp.array(dtype=float), b: wp.array(dtype=int)):
    i = wp.tid()
    a[i] = f(a[i]) + f(1.0, 0.25)
    b[i] = f(b[i])
'''


def _arrays(wp, dev, n):
    return [wp.zeros(n, dtype=float, device=dev), wp.zeros(n, dtype=float, device=dev),
            wp.zeros(n, dtype=int, device=dev), wp.zeros(n, dtype=int, device=dev),
            wp.zeros(n, dtype=float, device=dev)]


def test_random_streams_and_overloads_match_warp_cpu(tmp_path, warp_ref):
    import warp_lab.warp as wp
    ref = load_module(tmp_path / "ref_rand.py", SOURCE, "warp", "wpc_ref_rand")
    lab = load_module(tmp_path / "lab_rand.py", SOURCE, "warp_lab.warp", "wpc_lab_rand")
    r, l_ = _arrays(warp_ref, "cpu", 64), _arrays(wp, "cpu", 64)
    warp_ref.launch(ref.streams, dim=64, inputs=[42] + r, device="cpu")
    wp.launch(lab.streams, dim=64, inputs=[42] + l_, device="cpu")
    for k in range(4):   # randf, randf(lo, hi), randi, randi(lo, hi): bit for bit
        np.testing.assert_array_equal(l_[k].numpy(), r[k].numpy(), err_msg=str(k))
    # randn: the same uniforms; log and cos are libdevice's here, the host libm's there
    np.testing.assert_allclose(l_[4].numpy(), r[4].numpy(), rtol=0, atol=1e-6)
    x = np.array([1.0, -2.5], np.float32)
    ra, rb = warp_ref.array(x, dtype=float, device="cpu"), warp_ref.array([1, 2], dtype=int,
                                                                            device="cpu")
    la, lb = wp.array(x, dtype=float), wp.array([1, 2], dtype=int)
    warp_ref.launch(ref.overloads, dim=2, inputs=[ra, rb], device="cpu")
    wp.launch(lab.overloads, dim=2, inputs=[la, lb], device="cpu")
    np.testing.assert_array_equal(la.numpy(), ra.numpy())
    np.testing.assert_array_equal(lb.numpy(), rb.numpy())
    assert len(lab.f.overloads) == 3
