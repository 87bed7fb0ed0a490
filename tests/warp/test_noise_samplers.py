"""Warp's Perlin noise (``noise``, ``pnoise``, ``curlnoise``: warp/native/noise.h) and
samplers (``sample_*``, ``sample_cdf``, ``poisson``: rand.h), against warp-lang's CPU
device with the same inputs: bit for bit where the C++ uses only arithmetic, ``floor`` and
``sqrt``; within 4 ulp where it calls ``sin``/``cos``/``acos``/``pow`` (libdevice here, the
host libm there)."""

from __future__ import annotations

import numpy as np
import pytest

from wpc_helpers import load_module

SOURCE = '''
import warp as wp

@wp.kernel
def noises(seed: int, xs: wp.array(dtype=float), p2: wp.array(dtype=wp.vec2),
           p3: wp.array(dtype=wp.vec3), p4: wp.array(dtype=wp.vec4),
           o: wp.array(dtype=float, ndim=2), c2: wp.array(dtype=wp.vec2),
           c3: wp.array(dtype=wp.vec3), c4: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    state = wp.rand_init(seed)
    o[i, 0] = wp.noise(state, xs[i])
    o[i, 1] = wp.noise(state, p2[i])
    o[i, 2] = wp.noise(state, p3[i])
    o[i, 3] = wp.noise(state, p4[i])
    o[i, 4] = wp.pnoise(state, wp.abs(xs[i]), 3)
    o[i, 5] = wp.pnoise(state, wp.vec2(wp.abs(p2[i][0]), wp.abs(p2[i][1])), 3, 4)
    o[i, 6] = wp.pnoise(state, wp.vec4(wp.abs(p4[i][0]), wp.abs(p4[i][1]),
                                       wp.abs(p4[i][2]), wp.abs(p4[i][3])), 2, 3, 4, 5)
    c2[i] = wp.curlnoise(state, p2[i])
    c3[i] = wp.curlnoise(state, p3[i], wp.uint32(3), 2.0, 0.5)
    c4[i] = wp.curlnoise(state, p4[i], wp.uint32(2))

@wp.kernel
def samplers(seed: int, cdf: wp.array(dtype=float), v2: wp.array(dtype=wp.vec2, ndim=2),
             v3: wp.array(dtype=wp.vec3, ndim=2), ci: wp.array(dtype=int),
             po: wp.array(dtype=wp.uint32, ndim=2), states: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    state = wp.rand_init(seed, i)
    v2[i, 0] = wp.sample_unit_square(state)
    v2[i, 1] = wp.sample_triangle(state)
    v2[i, 2] = wp.sample_unit_ring(state)
    v2[i, 3] = wp.sample_unit_disk(state)
    v3[i, 0] = wp.sample_unit_cube(state)
    v3[i, 1] = wp.sample_unit_sphere_surface(state)
    v3[i, 2] = wp.sample_unit_sphere(state)
    v3[i, 3] = wp.sample_unit_hemisphere_surface(state)
    v3[i, 4] = wp.sample_unit_hemisphere(state)
    ci[i] = wp.sample_cdf(state, cdf)
    po[i, 0] = wp.poisson(state, 3.0)
    po[i, 1] = wp.poisson(state, 42.0)
    po[i, 2] = wp.poisson(state, 0.0)
    po[i, 3] = wp.poisson(states[i], 12.0)   # a copy of the element: states stays as it is
    po[i, 4] = wp.randu(state)               # where the state stands after all of them
'''

N = 32


def _noise_args(wp, rng):
    xs = (rng.random(N) * 20 - 4).astype(np.float32)
    p = [(rng.random((N, k)) * 20 - 4).astype(np.float32) for k in (2, 3, 4)]
    return [7, wp.array(xs, dtype=float, device="cpu"),
            wp.array(p[0], dtype=wp.vec2, device="cpu"),
            wp.array(p[1], dtype=wp.vec3, device="cpu"),
            wp.array(p[2], dtype=wp.vec4, device="cpu"),
            wp.zeros((N, 7), dtype=float, device="cpu"),
            wp.zeros(N, dtype=wp.vec2, device="cpu"), wp.zeros(N, dtype=wp.vec3, device="cpu"),
            wp.zeros(N, dtype=wp.vec3, device="cpu")]


def _sampler_args(wp, rng):
    cdf = np.cumsum(rng.random(10)).astype(np.float32)
    states = rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    return [11, wp.array(cdf / cdf[-1], dtype=float, device="cpu"),
            wp.zeros((N, 4), dtype=wp.vec2, device="cpu"),
            wp.zeros((N, 5), dtype=wp.vec3, device="cpu"), wp.zeros(N, dtype=int, device="cpu"),
            wp.zeros((N, 5), dtype=wp.uint32, device="cpu"),
            wp.array(states, dtype=wp.uint32, device="cpu")]


def _ulps(a, b):
    """Distance in float32 units in the last place (same-sign values)."""
    return np.abs(a.view(np.int32).astype(np.int64) - b.view(np.int32).astype(np.int64))


@pytest.mark.slow   # ~25 s: every dimension of every function (the fast form is below)
def test_noise_and_samplers_match_warp_cpu(tmp_path, warp_ref):
    import warp_lab.warp as wp
    ref = load_module(tmp_path / "ref_noise.py", SOURCE, "warp", "wpc_ref_noise")
    lab = load_module(tmp_path / "lab_noise.py", SOURCE, "warp_lab.warp", "wpc_lab_noise")
    out = {}
    for mod, w in ((ref, warp_ref), (lab, wp)):
        a = _noise_args(w, np.random.default_rng(3))
        s = _sampler_args(w, np.random.default_rng(4))
        w.launch(mod.noises, dim=N, inputs=a, device="cpu")
        w.launch(mod.samplers, dim=N, inputs=s, device="cpu")
        out[mod] = [x.numpy() for x in a[1:] + s[1:]]
    r, l_ = out[ref], out[lab]
    for k in (4, 5, 6, 7):                       # noise, pnoise, curlnoise: bit for bit
        np.testing.assert_array_equal(l_[k].view(np.uint32), r[k].view(np.uint32), str(k))
    assert np.abs(r[4]).max() > 0.05 and np.abs(r[7]).max() > 0.05   # a field, not zeros
    v2r, v2l, v3r, v3l = r[9], l_[9], r[10], l_[10]
    np.testing.assert_array_equal(v2l[:, 0].view(np.uint32), v2r[:, 0].view(np.uint32))
    np.testing.assert_array_equal(v3l[:, 0].view(np.uint32), v3r[:, 0].view(np.uint32))
    np.testing.assert_array_equal(v2l[:, 1, 0], v2r[:, 1, 0])   # triangle's u: sqrt only
    for lv, rv in ((v2l[:, 1:], v2r[:, 1:]), (v3l[:, 1:], v3r[:, 1:])):
        np.testing.assert_allclose(lv, rv, rtol=0, atol=3e-7)    # sin/cos/acos/pow
    for k in (11, 12, 13):                      # sample_cdf, poisson and randu after, states
        np.testing.assert_array_equal(l_[k], r[k], str(k))
    assert len(set(r[11].tolist())) > 3 and r[12][:, 1].mean() > 30


FAST = '''
import warp as wp

@wp.kernel
def small(seed: int, p2: wp.array(dtype=wp.vec2), o: wp.array(dtype=float, ndim=2),
          c2: wp.array(dtype=wp.vec2), po: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    state = wp.rand_init(seed)
    o[i, 0] = wp.noise(state, p2[i])
    o[i, 1] = wp.pnoise(state, p2[i][0] + 4.0, 3)
    c2[i] = wp.curlnoise(state, p2[i])
    s = wp.rand_init(seed, i)
    q = wp.sample_unit_square(s)
    o[i, 2] = q[0]
    po[i] = wp.poisson(s, 3.0)
'''


def test_noise_fast_form_matches_warp_cpu(tmp_path, warp_ref):
    """The bounded form: 2-D noise, 1-D periodic noise, 2-D curl noise, a square sample and a
    Poisson count, bit for bit."""
    import warp_lab.warp as wp
    ref = load_module(tmp_path / "ref_small.py", FAST, "warp", "wpc_ref_small")
    lab = load_module(tmp_path / "lab_small.py", FAST, "warp_lab.warp", "wpc_lab_small")
    p2 = (np.random.default_rng(5).random((16, 2)) * 12 - 4).astype(np.float32)
    out = {}
    for mod, w in ((ref, warp_ref), (lab, wp)):
        a = [9, w.array(p2, dtype=w.vec2, device="cpu"), w.zeros((16, 3), dtype=float, device="cpu"),
             w.zeros(16, dtype=w.vec2, device="cpu"), w.zeros(16, dtype=w.uint32, device="cpu")]
        w.launch(mod.small, dim=16, inputs=a, device="cpu")
        out[mod] = [x.numpy() for x in a[2:]]
    for r, l_ in zip(out[ref], out[lab]):
        np.testing.assert_array_equal(l_.view(np.uint32), r.view(np.uint32))
    assert np.abs(out[ref][0][:, 0]).max() > 0.05
