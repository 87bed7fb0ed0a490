"""Warp's samplers and Perlin noise as device functions of the Warp dialect.

``sample_*``, ``sample_cdf`` and ``poisson`` follow warp-lang 1.19's ``warp/native/rand.h``;
``noise``, ``pnoise`` and ``curlnoise`` (1-D to 4-D, periodic and not) its
``warp/native/noise.h``; their signatures and defaults are ``warp/_src/builtins.py``'s
(``curlnoise(state, xy, octaves: uint32 = 1, lacunarity = 2.0, gain = 0.5)``).

Each is a ``@wp.func`` (:class:`~warp_lab.lang.kernel.Func` of dialect ``"warp"``) whose
body performs the C++'s float operations one by one, in its order: one operation per
statement, because warp_lab contracts ``a * b + c`` written in one expression into a
fused multiply-add (``docs/decisions/0002``) and Warp's C++ is compiled without
contraction. So ``noise``, ``pnoise``, ``curlnoise``, ``sample_unit_square``/``cube``
and ``sample_triangle``'s first coordinate give warp-lang's CPU device's bits; those
that call ``sin``, ``cos``, ``acos``, ``pow``, ``log`` or ``exp`` get libdevice's
results, within an ulp or two of the host libm's (so ``poisson``'s rejection test can,
rarely, decide the other way).

The samplers take Warp's ``uint32& state``: they are stateful functions
(``Func.state_param``) returning ``(new state, value)``, and the caller's state variable
is updated (``typing_builtins._stateful_call``). The noise functions read the state and
never advance it, as in Warp.
"""

from __future__ import annotations

import warp_lab as wl
from warp_lab.lang.kernel import Func, FuncOverloads
from warp_lab.warp._funcs import _pcg

__all__ = ["noise", "pnoise", "curlnoise", "sample_triangle", "sample_unit_ring",
           "sample_unit_disk", "sample_unit_sphere_surface", "sample_unit_sphere",
           "sample_unit_hemisphere_surface", "sample_unit_hemisphere", "sample_unit_square",
           "sample_unit_cube", "sample_unit_hypercube", "sample_cdf", "poisson"]


def _warp(fn) -> Func:
    return Func(fn, dialect="warp")


def _stateful(fn) -> Func:
    f = Func(fn, dialect="warp")
    f.state_param = True
    return f


# -- rand.h: uniform pieces ------------------------------------------------------------------

@_warp
def _unit(s: wl.uint32):
    # randf of a state already advanced: (state >> 8) * (1.0f / 16777216.0f)
    return wl.float32(s >> wl.uint32(8)) * 5.9604644775390625e-08


@_warp
def _two_pi_times(s: wl.uint32):
    # randf(state, 0.f, 2.f * M_PI_F) = (2pi - 0) * randf(state) + 0
    t = 6.2831854820251465 * _unit(s)
    return t + 0.0


@_stateful
def sample_triangle(state: wl.uint32):
    # r = sqrt(randf); u = 1 - r; v = randf * r; vec2(u, v)
    s1 = _pcg(state)
    r = wl.sqrt(_unit(s1))
    s2 = _pcg(s1)
    v = _unit(s2) * r
    return s2, wl.vec2(1.0 - r, v)


@_stateful
def sample_unit_ring(state: wl.uint32):
    s = _pcg(state)
    theta = _two_pi_times(s)
    return s, wl.vec2(wl.cos(theta), wl.sin(theta))


@_stateful
def sample_unit_disk(state: wl.uint32):
    s1 = _pcg(state)
    r = wl.sqrt(_unit(s1))
    s2 = _pcg(s1)
    theta = _two_pi_times(s2)
    return s2, wl.vec2(r * wl.cos(theta), r * wl.sin(theta))


@_stateful
def sample_unit_sphere_surface(state: wl.uint32):
    # phi = acos(1 - 2 randf); theta = randf(0, 2pi)
    s1 = _pcg(state)
    t = 2.0 * _unit(s1)
    phi = wl.acos(1.0 - t)
    s2 = _pcg(s1)
    theta = _two_pi_times(s2)
    sp = wl.sin(phi)
    return s2, wl.vec3(wl.cos(theta) * sp, wl.sin(theta) * sp, wl.cos(phi))


@_stateful
def sample_unit_sphere(state: wl.uint32):
    # as the surface, with r = pow(randf, 1/3): x = r * cos(theta) * sin(phi), left to right
    s1 = _pcg(state)
    t = 2.0 * _unit(s1)
    phi = wl.acos(1.0 - t)
    s2 = _pcg(s1)
    theta = _two_pi_times(s2)
    s3 = _pcg(s2)
    r = wl.pow(_unit(s3), 0.3333333432674408)
    sp = wl.sin(phi)
    x = r * wl.cos(theta)
    y = r * wl.sin(theta)
    return s3, wl.vec3(x * sp, y * sp, r * wl.cos(phi))


@_stateful
def sample_unit_hemisphere_surface(state: wl.uint32):
    s1 = _pcg(state)
    phi = wl.acos(1.0 - _unit(s1))
    s2 = _pcg(s1)
    theta = _two_pi_times(s2)
    sp = wl.sin(phi)
    return s2, wl.vec3(wl.cos(theta) * sp, wl.sin(theta) * sp, wl.cos(phi))


@_stateful
def sample_unit_hemisphere(state: wl.uint32):
    s1 = _pcg(state)
    phi = wl.acos(1.0 - _unit(s1))
    s2 = _pcg(s1)
    theta = _two_pi_times(s2)
    s3 = _pcg(s2)
    r = wl.pow(_unit(s3), 0.3333333432674408)
    sp = wl.sin(phi)
    x = r * wl.cos(theta)
    y = r * wl.sin(theta)
    return s3, wl.vec3(x * sp, y * sp, r * wl.cos(phi))


@_stateful
def sample_unit_square(state: wl.uint32):
    s1 = _pcg(state)
    s2 = _pcg(s1)
    return s2, wl.vec2(_unit(s1) - 0.5, _unit(s2) - 0.5)


@_stateful
def sample_unit_cube(state: wl.uint32):
    s1 = _pcg(state)
    s2 = _pcg(s1)
    s3 = _pcg(s2)
    return s3, wl.vec3(_unit(s1) - 0.5, _unit(s2) - 0.5, _unit(s3) - 0.5)


@_stateful
def sample_unit_hypercube(state: wl.uint32):
    s1 = _pcg(state)
    s2 = _pcg(s1)
    s3 = _pcg(s2)
    s4 = _pcg(s3)
    return s4, wl.vec4(_unit(s1) - 0.5, _unit(s2) - 0.5, _unit(s3) - 0.5, _unit(s4) - 0.5)


@_stateful
def sample_cdf(state: wl.uint32, cdf: wl.array(dtype=wl.float32)):
    # u = randf(state); lower_bound(cdf, u) (array.h): a binary search over [0, n - 1] for
    # the first entry >= u (n - 1 when there is none)
    s = _pcg(state)
    u = _unit(s)
    lo = 0
    hi = cdf.shape[0] - 1
    while lo < hi:
        mid = lo + (hi - lo) / 2
        if cdf[mid] < u:
            lo = mid + 1
        else:
            hi = mid
    return s, lo


# -- rand.h: Poisson (Hoermann's transformed rejection; Knuth's products below 10) -------------

@_warp
def _loggam(x: float):
    # random_loggam (SPECFUN, Zhang & Jin): Stirling's series after shifting x past 7
    if x == 1.0 or x == 2.0:
        return 0.0
    n = wl.uint32(0)
    if x < 7.0:
        n = wl.uint32(7.0 - x)
    x0 = x + wl.float32(n)
    r = 1.0 / x0
    x2 = r * r
    gl0 = -1.3924322169059
    gl0 = gl0 * x2
    gl0 = gl0 + 0.1796443723688307
    gl0 = gl0 * x2
    gl0 = gl0 + -0.02955065359477124
    gl0 = gl0 * x2
    gl0 = gl0 + 0.00641025641025641
    gl0 = gl0 * x2
    gl0 = gl0 + -0.001917526917526918
    gl0 = gl0 * x2
    gl0 = gl0 + 0.0008417508417508418
    gl0 = gl0 * x2
    gl0 = gl0 + -0.0005952380952380952
    gl0 = gl0 * x2
    gl0 = gl0 + 0.0007936507936507937
    gl0 = gl0 * x2
    gl0 = gl0 + -0.002777777777777778
    gl0 = gl0 * x2
    gl0 = gl0 + 0.08333333333333333
    # gl = gl0 / x0 + 0.5f * lg2pi + (x0 - 0.5f) * log(x0) - x0, left to right
    a = gl0 / x0
    a = a + 0.9189385332046727          # 0.5f * 1.8378770664093453f
    h = x0 - 0.5
    lx = wl.log(x0)
    p = h * lx
    gl = a + p
    gl = gl - x0
    if x < 7.0:
        k = wl.uint32(1)
        while k <= n:
            gl = gl - wl.log(x0 - 1.0)
            x0 = x0 - 1.0
            k = k + wl.uint32(1)
    return gl


@_stateful
def poisson(state: wl.uint32, lam: float):
    # lam >= 10: random_poisson (transformed rejection, W. Hoermann 1993);
    # lam == 0: 0 without advancing; else random_poisson_mult (product of uniforms)
    s = state
    if lam == 0.0:
        return s, wl.uint32(0)
    if lam < 10.0:
        enlam = wl.exp(-lam)
        x = wl.uint32(0)
        prod = 1.0
        while True:
            s = _pcg(s)
            prod = prod * _unit(s)
            if prod > enlam:
                x = x + wl.uint32(1)
            else:
                return s, x
    slam = wl.sqrt(lam)
    loglam = wl.log(lam)
    b = 2.53 * slam
    b = 0.931 + b
    a = 0.02483 * b
    a = -0.059 + a
    invalpha = 1.1328 / (b - 3.4)
    invalpha = 1.1239 + invalpha
    vr = 3.6224 / (b - 2.0)
    vr = 0.9277 - vr
    while True:
        s = _pcg(s)
        u = _unit(s) - 0.5
        s = _pcg(s)
        v = _unit(s)
        us = 0.5 - wl.abs(u)
        # k = floor((2.f * a / us + b) * U + lam + 0.43f)
        q = 2.0 * a
        q = q / us
        q = q + b
        q = q * u
        q = q + lam
        k = wl.floor(q + 0.43)
        if us >= 0.07 and v <= vr:
            return s, wl.uint32(k)
        if k < 0.0 or (us < 0.013 and v > us):
            continue
        # log(V) + log(invalpha) - log(a / (us * us) + b) <= -lam + k * loglam - loggam(k + 1)
        lhs = wl.log(v) + wl.log(invalpha)
        w = us * us
        w = a / w
        lhs = lhs - wl.log(w + b)
        kl = k * loglam
        rhs = -lam + kl
        rhs = rhs - _loggam(k + 1.0)
        if lhs <= rhs:
            return s, wl.uint32(k)
    return s, wl.uint32(0)


# -- noise.h: Perlin noise ---------------------------------------------------------------------

@_warp
def _smootherstep(t: float):
    # t * t * t * (t * (t * 6.f - 15.f) + 10.f)
    u = t * 6.0
    u = u - 15.0
    u = t * u
    u = u + 10.0
    c = t * t
    c = c * t
    return c * u


@_warp
def _smootherstep_gradient(t: float):
    # 30.f * t * t * (t * (t - 2.f) + 1.f)
    u = t - 2.0
    u = t * u
    u = u + 1.0
    c = 30.0 * t
    c = c * t
    return c * u


@_warp
def _interpolate(a0: float, a1: float, t: float):
    # (a1 - a0) * smootherstep(t) + a0
    p = (a1 - a0) * _smootherstep(t)
    return p + a0


@_warp
def _interpolate_gradient(a0: float, a1: float, t: float, d_a0, d_a1, d_t):
    # (d_a1 - d_a0) * smootherstep(t) + (a1 - a0) * smootherstep_gradient(t) * d_t + d_a0,
    # vectors component-wise
    p = (d_a1 - d_a0) * _smootherstep(t)
    k = (a1 - a0) * _smootherstep_gradient(t)
    q = k * d_t
    r = p + q
    return r + d_a0


@_warp
def _u(x: int):
    # C's int -> uint32 conversion (the lattice hash's arithmetic is unsigned)
    return wl.bitcast(x, wl.uint32)


@_warp
def _dot2(ax: float, ay: float, b: wl.vec2):
    p = ax * b[0]
    q = ay * b[1]
    return p + q


@_warp
def _dot3(ax: float, ay: float, az: float, b: wl.vec3):
    p = ax * b[0]
    q = ay * b[1]
    r = p + q
    p = az * b[2]
    return r + p


@_warp
def _dot4(ax: float, ay: float, az: float, at: float, b: wl.vec4):
    # vec.h's generic dot: ret = 0; ret += a[i] * b[i]
    p = ax * b[0]
    r = 0.0 + p
    p = ay * b[1]
    r = r + p
    p = az * b[2]
    r = r + p
    p = at * b[3]
    return r + p


@_warp
def _gradient_1d(state: wl.uint32, ix: int):
    # idx = ix * 73856093 + state; randf(idx, -1.f, 1.f)
    idx = _u(ix) * wl.uint32(73856093) + state
    t = 2.0 * _unit(_pcg(idx))
    return t + -1.0


@_warp
def _gradient_2d(state: wl.uint32, ix: int, iy: int):
    # idx = ix * p1 ^ iy * p2 + state (C: + binds before ^); normalize(sample_unit_square(idx))
    idx = (_u(ix) * wl.uint32(73856093)) ^ (_u(iy) * wl.uint32(19349663) + state)
    s1 = _pcg(idx)
    s2 = _pcg(s1)
    x = _unit(s1) - 0.5
    y = _unit(s2) - 0.5
    xx = x * x
    yy = y * y
    ln = wl.sqrt(xx + yy)
    g = wl.vec2(0.0, 0.0)
    if ln > 0.0:
        g = wl.vec2(x / ln, y / ln)
    return g


@_warp
def _gradient_3d(state: wl.uint32, ix: int, iy: int, iz: int):
    idx = (_u(ix) * wl.uint32(73856093)) ^ (_u(iy) * wl.uint32(19349663)) ^ \
        (_u(iz) * wl.uint32(53471161) + state)
    s1 = _pcg(idx)
    s2 = _pcg(s1)
    s3 = _pcg(s2)
    x = _unit(s1) - 0.5
    y = _unit(s2) - 0.5
    z = _unit(s3) - 0.5
    xx = x * x
    yy = y * y
    zz = z * z
    ss = xx + yy
    ln = wl.sqrt(ss + zz)
    g = wl.vec3(0.0, 0.0, 0.0)
    if ln > 0.0:
        g = wl.vec3(x / ln, y / ln, z / ln)
    return g


@_warp
def _gradient_4d(state: wl.uint32, ix: int, iy: int, iz: int, it: int):
    idx = (_u(ix) * wl.uint32(73856093)) ^ (_u(iy) * wl.uint32(19349663)) ^ \
        (_u(iz) * wl.uint32(53471161)) ^ (_u(it) * wl.uint32(10000019) + state)
    s1 = _pcg(idx)
    s2 = _pcg(s1)
    s3 = _pcg(s2)
    s4 = _pcg(s3)
    x = _unit(s1) - 0.5
    y = _unit(s2) - 0.5
    z = _unit(s3) - 0.5
    w = _unit(s4) - 0.5
    ln = wl.sqrt(_dot4(x, y, z, w, wl.vec4(x, y, z, w)))
    g = wl.vec4(0.0, 0.0, 0.0, 0.0)
    if ln > 0.0:
        g = wl.vec4(x / ln, y / ln, z / ln, w / ln)
    return g


@_warp
def _noise_1d(state: wl.uint32, x0: int, x1: int, dx: float):
    v0 = dx * _gradient_1d(state, x0)
    v1 = (dx - 1.0) * _gradient_1d(state, x1)
    return _interpolate(v0, v1, dx)


@_warp
def _noise_2d(state: wl.uint32, x0: int, y0: int, x1: int, y1: int, dx: float, dy: float):
    ex = dx - 1.0
    ey = dy - 1.0
    v00 = _dot2(dx, dy, _gradient_2d(state, x0, y0))
    v10 = _dot2(ex, dy, _gradient_2d(state, x1, y0))
    xi0 = _interpolate(v00, v10, dx)
    v01 = _dot2(dx, ey, _gradient_2d(state, x0, y1))
    v11 = _dot2(ex, ey, _gradient_2d(state, x1, y1))
    xi1 = _interpolate(v01, v11, dx)
    return _interpolate(xi0, xi1, dy)


@_warp
def _noise_3d(state: wl.uint32, x0: int, y0: int, z0: int, x1: int, y1: int, z1: int,
              dx: float, dy: float, dz: float):
    ex = dx - 1.0
    ey = dy - 1.0
    ez = dz - 1.0
    v000 = _dot3(dx, dy, dz, _gradient_3d(state, x0, y0, z0))
    v100 = _dot3(ex, dy, dz, _gradient_3d(state, x1, y0, z0))
    xi00 = _interpolate(v000, v100, dx)
    v010 = _dot3(dx, ey, dz, _gradient_3d(state, x0, y1, z0))
    v110 = _dot3(ex, ey, dz, _gradient_3d(state, x1, y1, z0))
    xi10 = _interpolate(v010, v110, dx)
    yi0 = _interpolate(xi00, xi10, dy)
    v001 = _dot3(dx, dy, ez, _gradient_3d(state, x0, y0, z1))
    v101 = _dot3(ex, dy, ez, _gradient_3d(state, x1, y0, z1))
    xi01 = _interpolate(v001, v101, dx)
    v011 = _dot3(dx, ey, ez, _gradient_3d(state, x0, y1, z1))
    v111 = _dot3(ex, ey, ez, _gradient_3d(state, x1, y1, z1))
    xi11 = _interpolate(v011, v111, dx)
    yi1 = _interpolate(xi01, xi11, dy)
    return _interpolate(yi0, yi1, dz)


@_warp
def _noise_4d_slab(state: wl.uint32, x0: int, y0: int, z0: int, x1: int, y1: int, z1: int,
                   t: int, dx: float, dy: float, dz: float, dt: float):
    # the 3-D cube of corners at time lattice index t (offset dt), interpolated in x, y, z
    ex = dx - 1.0
    ey = dy - 1.0
    ez = dz - 1.0
    v000 = _dot4(dx, dy, dz, dt, _gradient_4d(state, x0, y0, z0, t))
    v100 = _dot4(ex, dy, dz, dt, _gradient_4d(state, x1, y0, z0, t))
    xi00 = _interpolate(v000, v100, dx)
    v010 = _dot4(dx, ey, dz, dt, _gradient_4d(state, x0, y1, z0, t))
    v110 = _dot4(ex, ey, dz, dt, _gradient_4d(state, x1, y1, z0, t))
    xi10 = _interpolate(v010, v110, dx)
    yi0 = _interpolate(xi00, xi10, dy)
    v001 = _dot4(dx, dy, ez, dt, _gradient_4d(state, x0, y0, z1, t))
    v101 = _dot4(ex, dy, ez, dt, _gradient_4d(state, x1, y0, z1, t))
    xi01 = _interpolate(v001, v101, dx)
    v011 = _dot4(dx, ey, ez, dt, _gradient_4d(state, x0, y1, z1, t))
    v111 = _dot4(ex, ey, ez, dt, _gradient_4d(state, x1, y1, z1, t))
    xi11 = _interpolate(v011, v111, dx)
    yi1 = _interpolate(xi01, xi11, dy)
    return _interpolate(yi0, yi1, dz)


@_warp
def _noise_4d(state: wl.uint32, x0: int, y0: int, z0: int, t0: int, x1: int, y1: int, z1: int,
              t1: int, dx: float, dy: float, dz: float, dt: float):
    zi0 = _noise_4d_slab(state, x0, y0, z0, x1, y1, z1, t0, dx, dy, dz, dt)
    zi1 = _noise_4d_slab(state, x0, y0, z0, x1, y1, z1, t1, dx, dy, dz, dt - 1.0)
    return _interpolate(zi0, zi1, dt)


@_warp
def _lattice(x: float):
    # (int)floor(x)
    return wl.int32(wl.floor(x))


@_warp
def _noise1(state: wl.uint32, x: float):
    x0 = _lattice(x)
    return _noise_1d(state, x0, x0 + 1, x - wl.floor(x))


@_warp
def _noise2(state: wl.uint32, xy: wl.vec2):
    x0 = _lattice(xy[0])
    y0 = _lattice(xy[1])
    return _noise_2d(state, x0, y0, x0 + 1, y0 + 1, xy[0] - wl.floor(xy[0]),
                     xy[1] - wl.floor(xy[1]))


@_warp
def _noise3(state: wl.uint32, xyz: wl.vec3):
    x0 = _lattice(xyz[0])
    y0 = _lattice(xyz[1])
    z0 = _lattice(xyz[2])
    return _noise_3d(state, x0, y0, z0, x0 + 1, y0 + 1, z0 + 1, xyz[0] - wl.floor(xyz[0]),
                     xyz[1] - wl.floor(xyz[1]), xyz[2] - wl.floor(xyz[2]))


@_warp
def _noise4(state: wl.uint32, xyzt: wl.vec4):
    x0 = _lattice(xyzt[0])
    y0 = _lattice(xyzt[1])
    z0 = _lattice(xyzt[2])
    t0 = _lattice(xyzt[3])
    return _noise_4d(state, x0, y0, z0, t0, x0 + 1, y0 + 1, z0 + 1, t0 + 1,
                     xyzt[0] - wl.floor(xyzt[0]), xyzt[1] - wl.floor(xyzt[1]),
                     xyzt[2] - wl.floor(xyzt[2]), xyzt[3] - wl.floor(xyzt[3]))


@_warp
def _pnoise1(state: wl.uint32, x: float, px: int):
    # x0 = mod((int)floor(x), px); x1 = mod(x0 + 1, px): C's %, as the dialect's
    x0 = _lattice(x) % px
    return _noise_1d(state, x0, (x0 + 1) % px, x - wl.floor(x))


@_warp
def _pnoise2(state: wl.uint32, xy: wl.vec2, px: int, py: int):
    x0 = _lattice(xy[0]) % px
    y0 = _lattice(xy[1]) % py
    return _noise_2d(state, x0, y0, (x0 + 1) % px, (y0 + 1) % py, xy[0] - wl.floor(xy[0]),
                     xy[1] - wl.floor(xy[1]))


@_warp
def _pnoise3(state: wl.uint32, xyz: wl.vec3, px: int, py: int, pz: int):
    x0 = _lattice(xyz[0]) % px
    y0 = _lattice(xyz[1]) % py
    z0 = _lattice(xyz[2]) % pz
    return _noise_3d(state, x0, y0, z0, (x0 + 1) % px, (y0 + 1) % py, (z0 + 1) % pz,
                     xyz[0] - wl.floor(xyz[0]), xyz[1] - wl.floor(xyz[1]),
                     xyz[2] - wl.floor(xyz[2]))


@_warp
def _pnoise4(state: wl.uint32, xyzt: wl.vec4, px: int, py: int, pz: int, pt: int):
    x0 = _lattice(xyzt[0]) % px
    y0 = _lattice(xyzt[1]) % py
    z0 = _lattice(xyzt[2]) % pz
    t0 = _lattice(xyzt[3]) % pt
    return _noise_4d(state, x0, y0, z0, t0, (x0 + 1) % px, (y0 + 1) % py, (z0 + 1) % pz,
                     (t0 + 1) % pt, xyzt[0] - wl.floor(xyzt[0]), xyzt[1] - wl.floor(xyzt[1]),
                     xyzt[2] - wl.floor(xyzt[2]), xyzt[3] - wl.floor(xyzt[3]))


# -- noise.h: gradients and curl noise -----------------------------------------------------------

@_warp
def _noise_2d_gradient(state: wl.uint32, x0: int, y0: int, x1: int, y1: int, dx: float,
                       dy: float):
    ex = dx - 1.0
    ey = dy - 1.0
    g00 = _gradient_2d(state, x0, y0)
    v00 = _dot2(dx, dy, g00)
    g10 = _gradient_2d(state, x1, y0)
    v10 = _dot2(ex, dy, g10)
    g01 = _gradient_2d(state, x0, y1)
    v01 = _dot2(dx, ey, g01)
    g11 = _gradient_2d(state, x1, y1)
    v11 = _dot2(ex, ey, g11)
    ux = wl.vec2(1.0, 0.0)
    xi0 = _interpolate(v00, v10, dx)
    gxi0 = _interpolate_gradient(v00, v10, dx, g00, g10, ux)
    xi1 = _interpolate(v01, v11, dx)
    gxi1 = _interpolate_gradient(v01, v11, dx, g01, g11, ux)
    return _interpolate_gradient(xi0, xi1, dy, gxi0, gxi1, wl.vec2(0.0, 1.0))


@_warp
def _noise_3d_gradient(state: wl.uint32, x0: int, y0: int, z0: int, x1: int, y1: int, z1: int,
                       dx: float, dy: float, dz: float):
    ex = dx - 1.0
    ey = dy - 1.0
    ez = dz - 1.0
    g000 = _gradient_3d(state, x0, y0, z0)
    v000 = _dot3(dx, dy, dz, g000)
    g100 = _gradient_3d(state, x1, y0, z0)
    v100 = _dot3(ex, dy, dz, g100)
    g010 = _gradient_3d(state, x0, y1, z0)
    v010 = _dot3(dx, ey, dz, g010)
    g110 = _gradient_3d(state, x1, y1, z0)
    v110 = _dot3(ex, ey, dz, g110)
    g001 = _gradient_3d(state, x0, y0, z1)
    v001 = _dot3(dx, dy, ez, g001)
    g101 = _gradient_3d(state, x1, y0, z1)
    v101 = _dot3(ex, dy, ez, g101)
    g011 = _gradient_3d(state, x0, y1, z1)
    v011 = _dot3(dx, ey, ez, g011)
    g111 = _gradient_3d(state, x1, y1, z1)
    v111 = _dot3(ex, ey, ez, g111)
    ux = wl.vec3(1.0, 0.0, 0.0)
    xi00 = _interpolate(v000, v100, dx)
    gxi00 = _interpolate_gradient(v000, v100, dx, g000, g100, ux)
    xi10 = _interpolate(v010, v110, dx)
    gxi10 = _interpolate_gradient(v010, v110, dx, g010, g110, ux)
    xi01 = _interpolate(v001, v101, dx)
    gxi01 = _interpolate_gradient(v001, v101, dx, g001, g101, ux)
    xi11 = _interpolate(v011, v111, dx)
    gxi11 = _interpolate_gradient(v011, v111, dx, g011, g111, ux)
    uy = wl.vec3(0.0, 1.0, 0.0)
    yi0 = _interpolate(xi00, xi10, dy)
    gyi0 = _interpolate_gradient(xi00, xi10, dy, gxi00, gxi10, uy)
    yi1 = _interpolate(xi01, xi11, dy)
    gyi1 = _interpolate_gradient(xi01, xi11, dy, gxi01, gxi11, uy)
    return _interpolate_gradient(yi0, yi1, dz, gyi0, gyi1, wl.vec3(0.0, 0.0, 1.0))


@_warp
def _noise_4d_gradient_slab(state: wl.uint32, x0: int, y0: int, z0: int, x1: int, y1: int,
                            z1: int, t: int, dx: float, dy: float, dz: float, dt: float):
    # value and gradient of the 3-D cube of corners at time index t, as noise_4d_gradient
    # computes them before its last interpolation (in t)
    ex = dx - 1.0
    ey = dy - 1.0
    ez = dz - 1.0
    g000 = _gradient_4d(state, x0, y0, z0, t)
    v000 = _dot4(dx, dy, dz, dt, g000)
    g100 = _gradient_4d(state, x1, y0, z0, t)
    v100 = _dot4(ex, dy, dz, dt, g100)
    g010 = _gradient_4d(state, x0, y1, z0, t)
    v010 = _dot4(dx, ey, dz, dt, g010)
    g110 = _gradient_4d(state, x1, y1, z0, t)
    v110 = _dot4(ex, ey, dz, dt, g110)
    g001 = _gradient_4d(state, x0, y0, z1, t)
    v001 = _dot4(dx, dy, ez, dt, g001)
    g101 = _gradient_4d(state, x1, y0, z1, t)
    v101 = _dot4(ex, dy, ez, dt, g101)
    g011 = _gradient_4d(state, x0, y1, z1, t)
    v011 = _dot4(dx, ey, ez, dt, g011)
    g111 = _gradient_4d(state, x1, y1, z1, t)
    v111 = _dot4(ex, ey, ez, dt, g111)
    ux = wl.vec4(1.0, 0.0, 0.0, 0.0)
    xi00 = _interpolate(v000, v100, dx)
    gxi00 = _interpolate_gradient(v000, v100, dx, g000, g100, ux)
    xi10 = _interpolate(v010, v110, dx)
    gxi10 = _interpolate_gradient(v010, v110, dx, g010, g110, ux)
    xi01 = _interpolate(v001, v101, dx)
    gxi01 = _interpolate_gradient(v001, v101, dx, g001, g101, ux)
    xi11 = _interpolate(v011, v111, dx)
    gxi11 = _interpolate_gradient(v011, v111, dx, g011, g111, ux)
    uy = wl.vec4(0.0, 1.0, 0.0, 0.0)
    yi0 = _interpolate(xi00, xi10, dy)
    gyi0 = _interpolate_gradient(xi00, xi10, dy, gxi00, gxi10, uy)
    yi1 = _interpolate(xi01, xi11, dy)
    gyi1 = _interpolate_gradient(xi01, xi11, dy, gxi01, gxi11, uy)
    uz = wl.vec4(0.0, 0.0, 1.0, 0.0)
    zi = _interpolate(yi0, yi1, dz)
    return zi, _interpolate_gradient(yi0, yi1, dz, gyi0, gyi1, uz)


@_warp
def _noise_4d_gradient(state: wl.uint32, x0: int, y0: int, z0: int, t0: int, x1: int, y1: int,
                       z1: int, t1: int, dx: float, dy: float, dz: float, dt: float):
    zi0, gzi0 = _noise_4d_gradient_slab(state, x0, y0, z0, x1, y1, z1, t0, dx, dy, dz, dt)
    zi1, gzi1 = _noise_4d_gradient_slab(state, x0, y0, z0, x1, y1, z1, t1, dx, dy, dz,
                                        dt - 1.0)
    return _interpolate_gradient(zi0, zi1, dt, gzi0, gzi1, wl.vec4(0.0, 0.0, 0.0, 1.0))


@_warp
def _curlnoise2(state: wl.uint32, xy: wl.vec2, octaves: wl.uint32 = 1, lacunarity: float = 2.0,
                gain: float = 0.5):
    curl = wl.vec2(0.0, 0.0)
    freq = 1.0
    amplitude = 1.0
    for _i in range(octaves):
        pt = freq * xy
        x0 = _lattice(pt[0])
        y0 = _lattice(pt[1])
        g = _noise_2d_gradient(state, x0, y0, x0 + 1, y0 + 1, pt[0] - wl.floor(pt[0]),
                               pt[1] - wl.floor(pt[1]))
        ag = amplitude * g
        curl = curl + ag
        amplitude = amplitude * gain
        freq = freq * lacunarity
    return wl.vec2(-curl[1], curl[0])


@_warp
def _curlnoise3(state: wl.uint32, xyz: wl.vec3, octaves: wl.uint32 = 1, lacunarity: float = 2.0,
                gain: float = 0.5):
    # three fields: the state, then rand_init(state, 10019689), then rand_init(that, 13112221),
    # carried from octave to octave as noise.h does
    c1 = wl.vec3(0.0, 0.0, 0.0)
    c2 = wl.vec3(0.0, 0.0, 0.0)
    c3 = wl.vec3(0.0, 0.0, 0.0)
    freq = 1.0
    amplitude = 1.0
    s = state
    for _i in range(octaves):
        pt = freq * xyz
        x0 = _lattice(pt[0])
        y0 = _lattice(pt[1])
        z0 = _lattice(pt[2])
        dx = pt[0] - wl.floor(pt[0])
        dy = pt[1] - wl.floor(pt[1])
        dz = pt[2] - wl.floor(pt[2])
        g1 = _noise_3d_gradient(s, x0, y0, z0, x0 + 1, y0 + 1, z0 + 1, dx, dy, dz)
        s = _pcg(s + _pcg(wl.uint32(10019689)))
        g2 = _noise_3d_gradient(s, x0, y0, z0, x0 + 1, y0 + 1, z0 + 1, dx, dy, dz)
        s = _pcg(s + _pcg(wl.uint32(13112221)))
        g3 = _noise_3d_gradient(s, x0, y0, z0, x0 + 1, y0 + 1, z0 + 1, dx, dy, dz)
        a1 = amplitude * g1
        c1 = c1 + a1
        a2 = amplitude * g2
        c2 = c2 + a2
        a3 = amplitude * g3
        c3 = c3 + a3
        amplitude = amplitude * gain
        freq = freq * lacunarity
    return wl.vec3(c3[1] - c2[2], c1[2] - c3[0], c2[0] - c1[1])


@_warp
def _curlnoise4(state: wl.uint32, xyzt: wl.vec4, octaves: wl.uint32 = 1,
                lacunarity: float = 2.0, gain: float = 0.5):
    c1 = wl.vec4(0.0, 0.0, 0.0, 0.0)
    c2 = wl.vec4(0.0, 0.0, 0.0, 0.0)
    c3 = wl.vec4(0.0, 0.0, 0.0, 0.0)
    freq = 1.0
    amplitude = 1.0
    s = state
    for _i in range(octaves):
        pt = freq * xyzt
        x0 = _lattice(pt[0])
        y0 = _lattice(pt[1])
        z0 = _lattice(pt[2])
        t0 = _lattice(pt[3])
        dx = pt[0] - wl.floor(pt[0])
        dy = pt[1] - wl.floor(pt[1])
        dz = pt[2] - wl.floor(pt[2])
        dt = pt[3] - wl.floor(pt[3])
        g1 = _noise_4d_gradient(s, x0, y0, z0, t0, x0 + 1, y0 + 1, z0 + 1, t0 + 1, dx, dy, dz,
                                dt)
        s = _pcg(s + _pcg(wl.uint32(10019689)))
        g2 = _noise_4d_gradient(s, x0, y0, z0, t0, x0 + 1, y0 + 1, z0 + 1, t0 + 1, dx, dy, dz,
                                dt)
        s = _pcg(s + _pcg(wl.uint32(13112221)))
        g3 = _noise_4d_gradient(s, x0, y0, z0, t0, x0 + 1, y0 + 1, z0 + 1, t0 + 1, dx, dy, dz,
                                dt)
        a1 = amplitude * g1
        c1 = c1 + a1
        a2 = amplitude * g2
        c2 = c2 + a2
        a3 = amplitude * g3
        c3 = c3 + a3
        amplitude = amplitude * gain
        freq = freq * lacunarity
    return wl.vec3(c3[1] - c2[2], c1[2] - c3[0], c2[0] - c1[1])


noise = FuncOverloads([_noise1, _noise2, _noise3, _noise4])
pnoise = FuncOverloads([_pnoise1, _pnoise2, _pnoise3, _pnoise4])
curlnoise = FuncOverloads([_curlnoise2, _curlnoise3, _curlnoise4])
