"""NVIDIA Warp's quaternion, transformation and spatial-vector math, as device functions.

Each function is a Warp-dialect device function whose body is what warp-lang 1.19's
``warp/native/quat.h`` and ``spatial.h`` compute, in the same order of operations
(quoted beside it), so it compiles through the same front end as the user's code,
specialised per component type (float16/32/64), shows in the Python pane as any device
function does, and runs as plain numpy Python on the host (Warp exports these to Python
too: ``wp.quat_from_axis_angle(axis, a)`` outside a kernel).

Parameters are annotated with Warp's generic type hints, :class:`~warp_lab.lang.types.TypeFamily`
values (``Quaternion`` is any quaternion, ``Vec3`` any float 3-vector, ``Float`` any float):
a call with another type is a located error naming the parameter, and every generic
argument of one call must have the same component type (Warp's ``float_infer_type``);
a float literal takes that type.

The compiler's operator table uses :data:`OPERATORS`: ``q * q`` is :func:`quat_mul`,
``t * t`` is :func:`transform_multiply` (``compiler/typing_exprs``), and ``normalize`` of a
quaternion is :func:`quat_normalize` (``typing_builtins._vecop``).
"""

from __future__ import annotations

import math as _math

from warp_lab.lang import builtins as B
from warp_lab.lang import types as T
from warp_lab.lang.kernel import Func, FuncOverloads

__all__ = ["OPERATORS", "quat_mul", "quat_normalize", "quat_from_axis_angle",
           "quat_to_axis_angle", "quat_rpy", "quat_inverse", "quat_rotate", "quat_rotate_inv",
           "quat_slerp", "quat_to_matrix", "quat_from_matrix", "quat_between_vectors",
           "transform_get_translation", "transform_get_rotation", "transform_multiply",
           "transform_point", "transform_vector", "transform_inverse",
           "transform_set_translation", "transform_set_rotation", "spatial_top",
           "spatial_bottom", "spatial_dot", "spatial_cross", "spatial_cross_dual",
           "quat_to_rpy", "quat_from_euler", "transform_twist", "transform_wrench",
           "transform_from_matrix", "transform_to_matrix", "quat_twist", "quat_twist_angle",
           "quat_twist_angle_signed", "velocity_at_point", "quat_to_euler"]

# Warp's generic type hints (warp/_src/types.py: Quaternion, Transformation, Float...)
Quaternion = T.TypeFamily("quaternion", "quat")
Transformation = T.TypeFamily("transformation", "transform")
Float = T.TypeFamily("float", "float")
Vec3 = T.TypeFamily("vector", "vec3")
Vec6 = T.TypeFamily("spatial_vector", "vec6")
Mat33 = T.TypeFamily("matrix", "mat3")
Mat44 = T.TypeFamily("matrix", "mat4")
_vec3 = T.TypeFamily("vector", "vec3")          # constructors whose type is the arguments'
_mat33 = T.TypeFamily("matrix", "mat3")
_mat44 = T.TypeFamily("matrix", "mat4")
_vec6 = T.TypeFamily("spatial_vector", "vec6")


class _ByShape(FuncOverloads):
    """An overload set whose host call picks by the first argument's shape: a 4x4 matrix
    takes the second function (the ``mat44`` form), anything else the first."""

    def __call__(self, *args, **kwargs):
        import numpy as np
        return self.overloads[1 if np.shape(args[0]) == (4, 4) else 0].fn(*args, **kwargs)


def _warp(fn) -> Func:
    return Func(fn, dialect="warp")


def _inout(fn) -> Func:
    """A function that changes its first argument in place (Warp's ``transform_t& t``): it
    returns ``(new value, 0)`` and the front end stores the new value back into the caller's
    variable (``Func.state_param``, as ``wp.randf`` updates its state)."""
    f = Func(fn, dialect="warp")
    f.state_param = True
    return f


# -- quaternions (quat.h) -------------------------------------------------------------------

@_warp
def quat_mul(a: Quaternion, b: Quaternion):
    # quat.h mul(quat, quat): the Hamilton product, a applied after b
    return T.quaternion(a[3] * b[0] + b[3] * a[0] + a[1] * b[2] - b[1] * a[2],
                        a[3] * b[1] + b[3] * a[1] + a[2] * b[0] - b[2] * a[0],
                        a[3] * b[2] + b[3] * a[2] + a[0] * b[1] - b[0] * a[1],
                        a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2])


@_warp
def quat_normalize(q: Quaternion):
    # quat.h normalize: q * (1 / length(q)); a zero quaternion gives the identity
    ln = B.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    if ln > 0.0:
        inv = 1.0 / ln
        return T.quaternion(q[0] * inv, q[1] * inv, q[2] * inv, q[3] * inv)
    z = q[3] - q[3]
    return T.quaternion(z, z, z, z + 1.0)


@_warp
def _vec_normalize(v: Vec3):
    # vec.h normalize: v / length(v); a zero vector stays zero
    ln = B.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    if ln > 0.0:
        return _vec3(v[0] / ln, v[1] / ln, v[2] / ln)
    return v - v


@_warp
def quat_from_axis_angle(axis: Vec3, angle: Float):
    # half = angle * 0.5; quat(axis * sin(half), cos(half))
    half = angle * 0.5
    w = B.cos(half)
    s = B.sin(half)
    return T.quaternion(axis[0] * s, axis[1] * s, axis[2] * s, w)


@_warp
def quat_to_axis_angle(quat: Quaternion):
    # axis = q.w < 0 ? -normalize(v) : normalize(v); angle = 2 * atan2(length(v), abs(q.w))
    v = _vec3(quat[0], quat[1], quat[2])
    axis = _vec_normalize(v)
    if quat[3] < 0.0:
        axis = -axis
    angle = 2.0 * B.atan2(B.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]), B.abs(quat[3]))
    return axis, angle


@_warp
def quat_rpy(roll: Float, pitch: Float, yaw: Float):
    # quat.h quat_rpy: extrinsic x-y-z (roll, then pitch, then yaw)
    cy = B.cos(yaw * 0.5)
    sy = B.sin(yaw * 0.5)
    cr = B.cos(roll * 0.5)
    sr = B.sin(roll * 0.5)
    cp = B.cos(pitch * 0.5)
    sp = B.sin(pitch * 0.5)
    w = cy * cr * cp + sy * sr * sp
    x = cy * sr * cp - sy * cr * sp
    y = cy * cr * sp + sy * sr * cp
    z = sy * cr * cp - cy * sr * sp
    return T.quaternion(x, y, z, w)


@_warp
def quat_to_rpy(q: Quaternion):
    # warp/_src/math.py quat_to_rpy (a @wp.func there): the inverse of quat_rpy
    x = q[0]
    y = q[1]
    z = q[2]
    w = q[3]
    t0 = 2.0 * (w * x + y * z)
    t1 = 1.0 - 2.0 * (x * x + y * y)
    roll_x = B.atan2(t0, t1)
    t2 = 2.0 * (w * y - z * x)
    t2 = B.clamp(t2, -1.0, 1.0)
    pitch_y = B.asin(t2)
    t3 = 2.0 * (w * z + x * y)
    t4 = 1.0 - 2.0 * (y * y + z * z)
    yaw_z = B.atan2(t3, t4)
    return _vec3(roll_x, pitch_y, yaw_z)


_PI = _math.pi
_HALF_PI = _math.pi / 2


@_warp
def quat_to_euler(q: T.quat, i: int, j: int, k: int):
    # warp/_src/math.py quat_to_euler (a @wp.func on wp.quat there), line for line: the
    # angles about the fixed axes i, j, k (0-based), indexed by axis
    q0 = q[3]
    q1 = q[0]
    q2 = q[1]
    q3 = q[2]
    i += 1
    j += 1
    k += 1
    not_proper = True
    if i == k:
        not_proper = False
        k = 6 - i - j
    e = float((i - j) * (j - k) * (k - i)) / 2.0
    a = q0
    b = q1
    c = q1
    d = q1 * e
    if i == 2:
        b = q2
    elif i == 3:
        b = q3
    if j == 2:
        c = q2
    elif j == 3:
        c = q3
    if k == 2:
        d = q2 * e
    elif k == 3:
        d = q3 * e
    if not_proper:
        qj = q1
        qk = q1
        qi = q1
        if j == 2:
            qj = q2
        elif j == 3:
            qj = q3
        if k == 2:
            qk = q2
        elif k == 3:
            qk = q3
        if i == 2:
            qi = q2
        elif i == 3:
            qi = q3
        a -= qj
        b += qk * e
        c += q0
        d -= qi
    t2 = B.acos(2.0 * (a * a + b * b) / (a * a + b * b + c * c + d * d) - 1.0)
    tp = B.atan2(b, a)
    tm = B.atan2(d, c)
    t1 = 0.0
    t3 = 0.0
    if B.abs(t2) < 1e-6:
        t3 = 2.0 * tp - t1
    elif B.abs(t2 - _PI) < 1e-6:
        t3 = 2.0 * tm + t1
    else:
        t1 = tp - tm
        t3 = tp + tm
    if not_proper:
        t2 -= _HALF_PI
        t3 *= e
    ex = t1
    ey = t2
    ez = t3
    if i == 2:
        ex = t2
        ey = t1
    elif i == 3:
        ex = t3
        ez = t1
    if j == 1:
        ex = t2
    elif j == 2:
        ey = t2
    else:
        ez = t2
    if k == 1:
        ex = t3
    elif k == 2:
        ey = t3
    else:
        ez = t3
    return T.vec3(ex, ey, ez)


@_warp
def _quat_axis(axis: int, s: Float, c: Float):
    # the rotation of angle 2 atan2(s, c) about unit axis 0, 1 or 2: quat(s e_axis, c)
    zero = s - s
    q = T.quaternion(zero, zero, s, c)
    if axis == 0:
        q = T.quaternion(s, zero, zero, c)
    elif axis == 1:
        q = T.quaternion(zero, s, zero, c)
    return q


@_warp
def quat_from_euler(e: Vec3, i: int, j: int, k: int):
    # warp/_src/math.py quat_from_euler (a @wp.func there): extrinsic rotations about the
    # fixed axes i, j, k, composed qk * qj * qi; e is indexed by axis
    hi = 0.5 * e[i]
    hj = 0.5 * e[j]
    hk = 0.5 * e[k]
    qi = _quat_axis(i, B.sin(hi), B.cos(hi))
    qj = _quat_axis(j, B.sin(hj), B.cos(hj))
    qk = _quat_axis(k, B.sin(hk), B.cos(hk))
    return quat_mul(qk, quat_mul(qj, qi))


@_warp
def quat_twist(axis: Vec3, q: Quaternion):
    # warp/_src/math.py quat_twist: the twist of q about the unit axis
    a = _vec3(q[0], q[1], q[2])
    proj = B.dot(a, axis)
    a = proj * axis
    return quat_normalize(T.quaternion(a[0], a[1], a[2], q[3]))


@_warp
def quat_twist_angle(axis: Vec3, q: Quaternion):
    # warp/_src/math.py quat_twist_angle: 2 atan2(|axis . v|, w)
    sin_half = B.abs(B.dot(axis, _vec3(q[0], q[1], q[2])))
    return 2.0 * B.atan2(sin_half, q[3])


@_warp
def quat_twist_angle_signed(axis: Vec3, q: Quaternion):
    # warp/_src/math.py quat_twist_angle_signed: 2 atan2(axis . v, w)
    sin_half = B.dot(axis, _vec3(q[0], q[1], q[2]))
    return 2.0 * B.atan2(sin_half, q[3])


@_warp
def quat_inverse(quat: Quaternion):
    # the conjugate (-x, -y, -z, w)
    return T.quaternion(-quat[0], -quat[1], -quat[2], quat[3])


@_warp
def quat_rotate(quat: Quaternion, vec: Vec3):
    # quat.h quat_rotate: x*(2w^2 - 1) + q.xyz*(2 q.xyz.x) + cross(q.xyz, x)*w*2
    c = 2.0 * quat[3] * quat[3] - 1.0
    d = 2.0 * (quat[0] * vec[0] + quat[1] * vec[1] + quat[2] * vec[2])
    return _vec3(vec[0] * c + quat[0] * d + (quat[1] * vec[2] - quat[2] * vec[1]) * quat[3] * 2.0,
                 vec[1] * c + quat[1] * d + (quat[2] * vec[0] - quat[0] * vec[2]) * quat[3] * 2.0,
                 vec[2] * c + quat[2] * d + (quat[0] * vec[1] - quat[1] * vec[0]) * quat[3] * 2.0)


@_warp
def quat_rotate_inv(quat: Quaternion, vec: Vec3):
    # quat.h quat_rotate_inv: quat_rotate with the cross term's sign flipped
    c = 2.0 * quat[3] * quat[3] - 1.0
    d = 2.0 * (quat[0] * vec[0] + quat[1] * vec[1] + quat[2] * vec[2])
    return _vec3(vec[0] * c + quat[0] * d - (quat[1] * vec[2] - quat[2] * vec[1]) * quat[3] * 2.0,
                 vec[1] * c + quat[1] * d - (quat[2] * vec[0] - quat[0] * vec[2]) * quat[3] * 2.0,
                 vec[2] * c + quat[2] * d - (quat[0] * vec[1] - quat[1] * vec[0]) * quat[3] * 2.0)


@_warp
def quat_slerp(a: Quaternion, b: Quaternion, t: Float):
    # quat.h quat_slerp: axis, angle of inverse(q0) * q1; q0 * from_axis_angle(axis, t * angle)
    axis, angle = quat_to_axis_angle(quat_mul(quat_inverse(a), b))
    return quat_mul(a, quat_from_axis_angle(axis, t * angle))


@_warp
def quat_to_matrix(quat: Quaternion):
    # the columns are the rotated unit vectors (matrix_from_cols)
    one = quat[3] - quat[3] + 1.0
    zero = one - one
    c1 = quat_rotate(quat, _vec3(one, zero, zero))
    c2 = quat_rotate(quat, _vec3(zero, one, zero))
    c3 = quat_rotate(quat, _vec3(zero, zero, one))
    return _mat33(c1[0], c2[0], c3[0], c1[1], c2[1], c3[1], c1[2], c2[2], c3[2])


@_warp
def quat_from_matrix(m: Mat33):
    # quat.h quat_from_matrix: Shepperd's method on the trace or the largest diagonal
    tr = m[0, 0] + m[1, 1] + m[2, 2]
    zero = tr - tr
    x = zero
    y = zero
    z = zero
    w = zero
    if tr >= 0.0:
        h = B.sqrt(tr + 1.0)
        w = 0.5 * h
        h = 0.5 / h
        x = (m[2, 1] - m[1, 2]) * h
        y = (m[0, 2] - m[2, 0]) * h
        z = (m[1, 0] - m[0, 1]) * h
    else:
        max_diag = 0
        if m[1, 1] > m[0, 0]:
            max_diag = 1
        if m[2, 2] > m[max_diag, max_diag]:
            max_diag = 2
        if max_diag == 0:
            h = B.sqrt((m[0, 0] - (m[1, 1] + m[2, 2])) + 1.0)
            x = 0.5 * h
            h = 0.5 / h
            y = (m[0, 1] + m[1, 0]) * h
            z = (m[2, 0] + m[0, 2]) * h
            w = (m[2, 1] - m[1, 2]) * h
        elif max_diag == 1:
            h = B.sqrt((m[1, 1] - (m[2, 2] + m[0, 0])) + 1.0)
            y = 0.5 * h
            h = 0.5 / h
            z = (m[1, 2] + m[2, 1]) * h
            x = (m[0, 1] + m[1, 0]) * h
            w = (m[0, 2] - m[2, 0]) * h
        if max_diag == 2:
            h = B.sqrt((m[2, 2] - (m[0, 0] + m[1, 1])) + 1.0)
            z = 0.5 * h
            h = 0.5 / h
            x = (m[2, 0] + m[0, 2]) * h
            y = (m[1, 2] + m[2, 1]) * h
            w = (m[1, 0] - m[0, 1]) * h
    return quat_normalize(T.quaternion(x, y, z, w))


_quat_from_matrix33 = quat_from_matrix


@_warp
def quat_from_matrix_mat44(mat: Mat44):
    # the top-left 3x3 block
    return _quat_from_matrix33(_mat33(mat[0, 0], mat[0, 1], mat[0, 2], mat[1, 0], mat[1, 1],
                                      mat[1, 2], mat[2, 0], mat[2, 1], mat[2, 2]))


quat_from_matrix = _ByShape([_quat_from_matrix33, quat_from_matrix_mat44])


@_warp
def quat_between_vectors(a: Vec3, b: Vec3):
    # warp/_src/utils.py quat_between_vectors (a host function in Warp; opposite
    # directions are not handled there either): normalize(quat(cross(a, b), 1 + dot(a, b)))
    # of the normalized a and b
    na = _vec_normalize(a)
    nb = _vec_normalize(b)
    c = B.cross(na, nb)
    d = B.dot(na, nb)
    return quat_normalize(T.quaternion(c[0], c[1], c[2], 1.0 + d))


# -- transformations (spatial.h) --------------------------------------------------------------

@_warp
def transform_get_translation(xform: Transformation):
    return xform.p


@_warp
def transform_get_rotation(xform: Transformation):
    return xform.q


@_inout
def transform_set_translation(xform: Transformation, p: Vec3):
    # spatial.h: t.p = p, in place
    out = xform
    out.p = p
    return out, 0


@_inout
def transform_set_rotation(xform: Transformation, q: Quaternion):
    # spatial.h: t.q = q, in place
    out = xform
    out.q = q
    return out, 0


@_warp
def transform_multiply(a: Transformation, b: Transformation):
    # spatial.h: { quat_rotate(a.q, b.p) + a.p, mul(a.q, b.q) }
    return T.transformation(quat_rotate(a.q, b.p) + a.p, quat_mul(a.q, b.q))


@_warp
def transform_point(xform: Transformation, point: Vec3):
    # spatial.h: t.p + quat_rotate(t.q, x)
    return xform.p + quat_rotate(xform.q, point)


@_warp
def transform_point_mat44(mat: Mat44, point: Vec3):
    # mat.h transform_point(mat44, vec3): rows of m times (x, y, z, 1), the fourth dropped
    return _vec3(mat[0, 0] * point[0] + mat[0, 1] * point[1] + mat[0, 2] * point[2] + mat[0, 3],
                 mat[1, 0] * point[0] + mat[1, 1] * point[1] + mat[1, 2] * point[2] + mat[1, 3],
                 mat[2, 0] * point[0] + mat[2, 1] * point[1] + mat[2, 2] * point[2] + mat[2, 3])


@_warp
def transform_vector(xform: Transformation, vec: Vec3):
    # spatial.h: quat_rotate(t.q, x)
    return quat_rotate(xform.q, vec)


@_warp
def transform_vector_mat44(mat: Mat44, vec: Vec3):
    # mat.h transform_vector(mat44, vec3): rows of m times (x, y, z, 0)
    return _vec3(mat[0, 0] * vec[0] + mat[0, 1] * vec[1] + mat[0, 2] * vec[2],
                 mat[1, 0] * vec[0] + mat[1, 1] * vec[1] + mat[1, 2] * vec[2],
                 mat[2, 0] * vec[0] + mat[2, 1] * vec[1] + mat[2, 2] * vec[2])


transform_point = _ByShape([transform_point, transform_point_mat44])
transform_vector = _ByShape([transform_vector, transform_vector_mat44])


@_warp
def transform_inverse(xform: Transformation):
    # spatial.h: q_inv = quat_inverse(t.q); transform(-quat_rotate(q_inv, t.p), q_inv)
    q_inv = quat_inverse(xform.q)
    return T.transformation(-quat_rotate(q_inv, xform.p), q_inv)


@_warp
def transform_to_matrix(xform: Transformation):
    # warp/_src/math.py transform_to_matrix: [R(q) p; 0 0 0 1]
    p = xform.p
    rot = quat_to_matrix(xform.q)
    zero = p[0] - p[0]
    return _mat44(rot[0, 0], rot[0, 1], rot[0, 2], p[0],
                  rot[1, 0], rot[1, 1], rot[1, 2], p[1],
                  rot[2, 0], rot[2, 1], rot[2, 2], p[2],
                  zero, zero, zero, zero + 1.0)


@_warp
def transform_from_matrix(mat: Mat44):
    # warp/_src/math.py transform_from_matrix: p the last column, q quat_from_matrix(mat)
    p = _vec3(mat[0, 3], mat[1, 3], mat[2, 3])
    return T.transformation(p, quat_from_matrix_mat44(mat))


# -- spatial vectors (spatial.h: vec_t<6>, w = the top three, v = the bottom three) ----------

@_warp
def spatial_top(a: Vec6):
    return _vec3(a[0], a[1], a[2])


@_warp
def spatial_bottom(a: Vec6):
    return _vec3(a[3], a[4], a[5])


@_warp
def spatial_dot(a: Vec6, b: Vec6):
    return B.dot(a, b)


@_warp
def spatial_cross(a: Vec6, b: Vec6):
    # w = cross(w_a, w_b); v = cross(v_a, w_b) + cross(w_a, v_b)
    w = B.cross(spatial_top(a), spatial_top(b))
    v = B.cross(spatial_bottom(a), spatial_top(b)) + B.cross(spatial_top(a), spatial_bottom(b))
    return _vec6(w, v)


@_warp
def spatial_cross_dual(a: Vec6, b: Vec6):
    # w = cross(w_a, w_b) + cross(v_a, v_b); v = cross(w_a, v_b)
    w = B.cross(spatial_top(a), spatial_top(b)) + B.cross(spatial_bottom(a), spatial_bottom(b))
    v = B.cross(spatial_top(a), spatial_bottom(b))
    return _vec6(w, v)


@_warp
def transform_twist(t: Transformation, x: Vec6):
    # warp/_src/math.py transform_twist: w' = R w, v' = R v + p x w'
    w = quat_rotate(t.q, spatial_top(x))
    v = quat_rotate(t.q, spatial_bottom(x)) + B.cross(t.p, w)
    return _vec6(w, v)


@_warp
def transform_wrench(t: Transformation, x: Vec6):
    # warp/_src/math.py transform_wrench: f' = R f, tau' = R tau + p x f'
    f = quat_rotate(t.q, spatial_bottom(x))
    tau = quat_rotate(t.q, spatial_top(x)) + B.cross(t.p, f)
    return _vec6(tau, f)


@_warp
def velocity_at_point(qd: Vec6, r: Vec3):
    # warp/_src/math.py velocity_at_point: v + w x r
    return spatial_bottom(qd) + B.cross(spatial_top(qd), r)


#: the operators on these types: (Python operator, left kind, right kind) -> function
OPERATORS = {("mul", "quat", "quat"): quat_mul,
             ("mul", "transform", "transform"): transform_multiply}
