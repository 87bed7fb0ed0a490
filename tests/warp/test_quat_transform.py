"""Warp's quaternions, transformations and spatial vectors (warp/native/quat.h, spatial.h):
every builtin and operator run on warp-lang's CPU device and on warp_lab's simulator with
the same random inputs, through ``import warp_lab.warp as wp``; wrong argument types are
located compile errors."""

from __future__ import annotations

import numpy as np
import pytest

from wpc_helpers import load_module

SOURCE = '''
import warp as wp

@wp.kernel
def quats(qa: wp.array(dtype=wp.quat), qb: wp.array(dtype=wp.quat), v: wp.array(dtype=wp.vec3),
          s: wp.array(dtype=float), t1: wp.array(dtype=wp.transform),
          t2: wp.array(dtype=wp.transform), m4: wp.array(dtype=wp.mat44),
          sv: wp.array(dtype=wp.spatial_vector),
          oq: wp.array2d(dtype=wp.quat), ov: wp.array2d(dtype=wp.vec3),
          of: wp.array2d(dtype=float), ot: wp.array2d(dtype=wp.transform),
          om: wp.array(dtype=wp.mat33), osv: wp.array2d(dtype=wp.spatial_vector)):
    i = wp.tid()
    a = qa[i]
    b = qb[i]
    na = wp.normalize(a)
    nb = wp.normalize(b)
    x = v[i]
    oq[i, 0] = a * b
    oq[i, 1] = na
    oq[i, 2] = wp.quat_inverse(a)
    oq[i, 3] = wp.quat_from_axis_angle(wp.normalize(x), s[i])
    oq[i, 4] = wp.quat_rpy(x[0], x[1], x[2])
    oq[i, 5] = wp.quat_slerp(na, nb, 0.3)
    oq[i, 6] = wp.quat_from_matrix(wp.quat_to_matrix(na))
    oq[i, 7] = 2.0 * a - b
    oq[i, 8] = wp.quat(x, s[i])
    oq[i, 9] = -a + a / 2.0
    oq[i, 10] = wp.quat_identity()
    oq[i, 11] = wp.lerp(a, b, 0.25)
    oq[i, 12] = wp.quat_from_matrix(m4[i])
    oq[i, 13] = wp.normalize(a - a)
    q = wp.quat(a.x, a.y, a.z, a.w)
    q[1] = 5.0
    q.z = q.z * 2.0
    q *= 0.5
    oq[i, 14] = q
    oq[i, 15] = wp.quaternion(x[0], x[1], x[2], 1.0)
    oq[i, 16] = t1[i].q
    ov[i, 0] = wp.quat_rotate(na, x)
    ov[i, 1] = wp.quat_rotate_inv(na, x)
    ov[i, 2] = wp.transform_point(t1[i], x)
    ov[i, 3] = wp.transform_vector(t1[i], x)
    axis, angle = wp.quat_to_axis_angle(na)
    ov[i, 4] = axis
    ov[i, 5] = t1[i].p
    ov[i, 6] = wp.transform_get_translation(t2[i])
    ov[i, 7] = wp.spatial_top(sv[i])
    ov[i, 8] = wp.spatial_bottom(sv[i])
    ov[i, 9] = wp.transform_point(m4[i], x)
    ov[i, 10] = wp.transform_vector(m4[i], x)
    of[i, 0] = angle
    of[i, 1] = wp.dot(a, b)
    of[i, 2] = wp.length(a)
    of[i, 3] = wp.length_sq(a)
    of[i, 4] = wp.spatial_dot(sv[i], sv[i])
    of[i, 5] = a.x + a.w * a[2]
    t = t1[i]
    u = t2[i]
    ot[i, 0] = t * u
    ot[i, 1] = wp.transform_multiply(u, t)
    ot[i, 2] = wp.transform_inverse(t)
    ot[i, 3] = wp.transform(x, q=na)
    ot[i, 4] = wp.transform(p=x)
    ot[i, 5] = wp.transform_identity()
    w = t
    w.p = x
    w.q = nb
    ot[i, 6] = w
    r = t
    wp.transform_set_translation(r, wp.vec3(1.0, 2.0, 3.0))
    wp.transform_set_rotation(r, wp.transform_get_rotation(u))
    ot[i, 7] = r
    ot[i, 8] = t - u * 2.0
    e = u
    e.p += x
    e[6] = 0.5
    ot[i, 9] = e
    oq[i, 15] = oq[i, 15] + 2.0 / a
    om[i] = wp.quat_to_matrix(na)
    osv[i, 0] = wp.spatial_cross(sv[i], sv[i] * 0.5 + wp.spatial_vector(x, x))
    osv[i, 1] = wp.spatial_cross_dual(sv[i], wp.spatial_vector(1.0, 2.0, 3.0, 4.0, 5.0, 6.0))


@wp.kernel
def doubles(qa: wp.array(dtype=wp.quatd), v: wp.array(dtype=wp.vec3d),
            t: wp.array(dtype=wp.transformd), oq: wp.array2d(dtype=wp.quatd),
            ov: wp.array2d(dtype=wp.vec3d), ot: wp.array2d(dtype=wp.transformd)):
    i = wp.tid()
    a = wp.normalize(qa[i])
    oq[i, 0] = a * qa[i]
    oq[i, 1] = wp.quat_from_axis_angle(v[i], wp.float64(0.7))
    oq[i, 2] = wp.quat_identity(dtype=wp.float64)
    ov[i, 0] = wp.quat_rotate(a, v[i])
    ov[i, 1] = wp.transform_point(t[i], v[i])
    ot[i, 0] = t[i] * wp.transform_inverse(t[i])
    ot[i, 1] = wp.transformd(v[i], a)


@wp.kernel
def math_funcs(qa: wp.array(dtype=wp.quat), v: wp.array(dtype=wp.vec3),
               t: wp.array(dtype=wp.transform), sv: wp.array(dtype=wp.spatial_vector),
               oq: wp.array2d(dtype=wp.quat), ov: wp.array2d(dtype=wp.vec3),
               om: wp.array(dtype=wp.mat44), ot: wp.array(dtype=wp.transform),
               osv: wp.array2d(dtype=wp.spatial_vector)):
    i = wp.tid()
    a = wp.normalize(qa[i])
    oq[i, 0] = wp.quat_from_euler(v[i], 0, 1, 2)
    oq[i, 1] = wp.quat_from_euler(v[i], 2, 0, 2)
    oq[i, 2] = wp.quat_from_euler(v[i], i % 3, (i + 1) % 3, (i + 2) % 3)
    ov[i, 0] = wp.quat_to_rpy(a)
    ov[i, 1] = wp.quat_to_rpy(wp.quat_rpy(v[i][0], v[i][1], v[i][2]))
    om[i] = wp.transform_to_matrix(t[i])
    ot[i] = wp.types.transformation(wp.transform_from_matrix(wp.transform_to_matrix(t[i])))
    oq[i, 4] = wp.types.quaternion(1.0, v[i][0], 3.0, 4.0, dtype=float)
    n = t[i]
    n[-1] = 123.0
    n[-5] *= 2.0
    n[3] = n[-7] + a[-1]
    osv[i, 2] = wp.spatial_vector(n[0], n[1], n[2], n[3], n[4], n[-1])
    osv[i, 0] = wp.transform_twist(t[i], sv[i])
    osv[i, 1] = wp.transform_wrench(t[i], sv[i])
    ax = wp.normalize(v[i])
    oq[i, 3] = wp.quat_twist(ax, a)
    ov[i, 2] = wp.vec3(wp.quat_twist_angle(ax, a), wp.quat_twist_angle_signed(ax, a), 0.0)
    ov[i, 3] = wp.velocity_at_point(sv[i], v[i])
    ov[i, 4] = wp.quat_to_euler(a, i % 3, (i + 1) % 3, (i + 2) % 3)
    ov[i, 6] = wp.quat_to_euler(a, i % 3, (i + 2) % 3, (i + 1) % 3)
    ov[i, 5] = wp.quat_to_euler(a, 2, 0, 2)
'''

N = 16


def _inputs(wp, rng, dev):
    def arr(data, dtype):
        return wp.array(data, dtype=dtype, device=dev)

    qa = rng.standard_normal((N, 4)).astype(np.float32)
    qb = rng.standard_normal((N, 4)).astype(np.float32)
    v = rng.standard_normal((N, 3)).astype(np.float32)
    s = rng.uniform(-3, 3, N).astype(np.float32)
    tq = rng.standard_normal((N, 4))
    tq /= np.linalg.norm(tq, axis=1, keepdims=True)
    t1 = np.concatenate([rng.standard_normal((N, 3)), tq], axis=1).astype(np.float32)
    t2 = np.concatenate([rng.standard_normal((N, 3)), tq[::-1]], axis=1).astype(np.float32)
    m4 = rng.standard_normal((N, 4, 4)).astype(np.float32)
    sv = rng.standard_normal((N, 6)).astype(np.float32)
    ins = [arr(qa, wp.quat), arr(qb, wp.quat), arr(v, wp.vec3), arr(s, float),
           arr(t1, wp.transform), arr(t2, wp.transform), arr(m4, wp.mat44),
           arr(sv, wp.spatial_vector)]
    outs = [wp.zeros((N, 17), dtype=wp.quat, device=dev), wp.zeros((N, 11), dtype=wp.vec3, device=dev),
            wp.zeros((N, 6), dtype=float, device=dev), wp.zeros((N, 10), dtype=wp.transform, device=dev),
            wp.zeros(N, dtype=wp.mat33, device=dev),
            wp.zeros((N, 2), dtype=wp.spatial_vector, device=dev)]
    return ins, outs


def _doubles(wp, rng, dev):
    qa = rng.standard_normal((N, 4))
    v = rng.standard_normal((N, 3))
    tq = rng.standard_normal((N, 4))
    tq /= np.linalg.norm(tq, axis=1, keepdims=True)
    t = np.concatenate([rng.standard_normal((N, 3)), tq], axis=1)
    ins = [wp.array(qa, dtype=wp.quatd, device=dev), wp.array(v, dtype=wp.vec3d, device=dev),
           wp.array(t, dtype=wp.transformd, device=dev)]
    outs = [wp.zeros((N, 3), dtype=wp.quatd, device=dev), wp.zeros((N, 2), dtype=wp.vec3d, device=dev),
            wp.zeros((N, 2), dtype=wp.transformd, device=dev)]
    return ins, outs


def _math_funcs(wp, rng, dev):
    qa = rng.standard_normal((N, 4)).astype(np.float32)
    v = rng.uniform(-1.5, 1.5, (N, 3)).astype(np.float32)
    tq = rng.standard_normal((N, 4))
    tq /= np.linalg.norm(tq, axis=1, keepdims=True)
    t = np.concatenate([rng.standard_normal((N, 3)), tq], axis=1).astype(np.float32)
    sv = rng.standard_normal((N, 6)).astype(np.float32)
    ins = [wp.array(qa, dtype=wp.quat, device=dev), wp.array(v, dtype=wp.vec3, device=dev),
           wp.array(t, dtype=wp.transform, device=dev),
           wp.array(sv, dtype=wp.spatial_vector, device=dev)]
    outs = [wp.zeros((N, 5), dtype=wp.quat, device=dev), wp.zeros((N, 7), dtype=wp.vec3, device=dev),
            wp.zeros(N, dtype=wp.mat44, device=dev), wp.zeros(N, dtype=wp.transform, device=dev),
            wp.zeros((N, 3), dtype=wp.spatial_vector, device=dev)]
    return ins, outs


def test_quaternion_and_transform_builtins_match_warp_cpu(tmp_path, warp_ref):
    import warp_lab.warp as wp
    ref = load_module(tmp_path / "ref_quat.py", SOURCE, "warp", "wpc_ref_quat")
    lab = load_module(tmp_path / "lab_quat.py", SOURCE, "warp_lab.warp", "wpc_lab_quat")
    for kernel, make, tol in (("quats", _inputs, 2e-5), ("doubles", _doubles, 1e-12),
                               ("math_funcs", _math_funcs, 2e-5)):
        r_in, r_out = make(warp_ref, np.random.default_rng(7), "cpu")
        l_in, l_out = make(wp, np.random.default_rng(7), "cpu")
        warp_ref.launch(getattr(ref, kernel), dim=N, inputs=r_in + r_out, device="cpu")
        wp.launch(getattr(lab, kernel), dim=N, inputs=l_in + l_out, device="cpu")
        for k, (r, l_) in enumerate(zip(r_out, l_out)):
            assert l_.numpy().shape == r.numpy().shape, (kernel, k)
            np.testing.assert_allclose(l_.numpy(), r.numpy(), rtol=tol, atol=tol,
                                       err_msg=f"{kernel} output {k}")


def test_host_constructors_and_builtins_match_warp(warp_ref):
    import warp_lab.warp as wp
    axis, ang = (0.6, 0.0, 0.8), 0.7
    cases = [
        (wp.quat_from_axis_angle(wp.vec3(*axis), ang), warp_ref.quat_from_axis_angle(warp_ref.vec3(*axis), ang)),
        (wp.quat_rpy(0.1, -0.4, 2.0), warp_ref.quat_rpy(0.1, -0.4, 2.0)),
        (wp.quat_identity(), warp_ref.quat_identity()),
        (wp.quat(), warp_ref.quat()),
        (wp.transform(), warp_ref.transform()),
        (wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat_rpy(0.0, 0.0, 1.0)),
         warp_ref.transform(warp_ref.vec3(1.0, 2.0, 3.0), warp_ref.quat_rpy(0.0, 0.0, 1.0))),
        (wp.transform((1.0, 2.0, 3.0)), warp_ref.transform((1.0, 2.0, 3.0))),
        (wp.transform(p=(4.0, 5.0, 6.0)), warp_ref.transform(p=(4.0, 5.0, 6.0))),
        (wp.quat_rotate(wp.quat_rpy(0.3, 0.2, 0.1), wp.vec3(1.0, 2.0, 3.0)),
         warp_ref.quat_rotate(warp_ref.quat_rpy(0.3, 0.2, 0.1), warp_ref.vec3(1.0, 2.0, 3.0))),
    ]
    for k, (mine, theirs) in enumerate(cases):
        np.testing.assert_allclose(np.asarray(mine), np.array(theirs), rtol=1e-6, atol=1e-7,
                                   err_msg=str(k))
    t, tr = wp.transform((1.0, 2.0, 3.0), wp.quat_rpy(0.0, 0.0, 1.0)), \
        warp_ref.transform((1.0, 2.0, 3.0), warp_ref.quat_rpy(0.0, 0.0, 1.0))
    t.p, tr.p = (5.0, 6.0, 7.0), (5.0, 6.0, 7.0)
    for mine, theirs in ((t, tr), (t.q, tr.q), (wp.transform_point(t, (1.0, 0.0, 0.0)),
                                                warp_ref.transform_point(tr, warp_ref.vec3(1.0, 0.0, 0.0))),
                         (wp.transform_inverse(t), warp_ref.transform_inverse(tr))):
        np.testing.assert_allclose(np.asarray(mine), np.array(theirs), rtol=1e-6, atol=1e-7)
    a = wp.array([wp.transform()] * 3, dtype=wp.transform)
    assert a.numpy().shape == (3, 7) and a.shape == (3,)
    assert wp.array(np.zeros((5, 4)), dtype=wp.quat).numpy().shape == (5, 4)
    assert wp.quat != wp.vec4 and wp.types.quaternion(dtype=wp.float64) is wp.quatd


BAD = [
    ("wp.quat_rotate(wp.vec4(1.0, 0.0, 0.0, 0.0), x)", "quat_rotate() expects a quaternion",
     "wp.vec4("),
    ("wp.quat_rotate(wp.quatd(0.0, 0.0, 0.0, 1.0), x)",
     "'vec' has float32 components but the other arguments have float64", "x)"),
    ("wp.quat(1.0, 2.0) * wp.quat_identity()", "quat() takes 4 numbers", "wp.quat(1.0"),
    ("wp.quat_identity() * wp.vec4(1.0, 2.0, 3.0, 4.0)", "unsupported operand types for *",
     "wp.quat_identity() *"),
    ("wp.transform_identity().x", "has .p (translation) and .q", "wp.transform_identity().x"),
    ("wp.transform_point(wp.quat_identity(), x)", "no overload of transform_point()",
     "wp.transform_point("),
    ("x[-4] + wp.quat_identity()[4]", "index -4 out of range -3..2", "-4]"),
    ("wp.types.quaternion(1.0, 2.0, 3.0, 4.0, dtype=wp.int32)", "needs float components",
     "wp.types.quaternion("),
]


@pytest.mark.parametrize("expr,message,at", BAD)
def test_wrong_argument_types_are_located_errors(tmp_path, expr, message, at):
    import warp_lab as wl

    src = ("import warp as wp\n\n@wp.kernel\ndef bad(out: wp.array(dtype=float)):\n"
           f"    x = wp.vec3(1.0, 2.0, 3.0)\n    y = {expr}\n")
    mod = load_module(tmp_path / "bad_quat.py", src, "warp_lab.warp",
                      f"wpc_bad_quat_{BAD.index((expr, message, at))}")
    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(mod.bad)
    err = info.value
    assert message in err.message, err.message
    assert err.line == 6 and err.col == src.splitlines()[5].index(at) + 1, (err.line, err.col)
