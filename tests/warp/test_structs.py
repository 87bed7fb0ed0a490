"""``@wp.struct`` against warp-lang's CPU device: struct kernel parameters (scalars,
vectors, matrices, arrays and nested structs as fields, set on the host by attribute),
structs built and changed in kernels and device functions, passed to and returned from
them, arrays of structs (numpy structured elements); the layout against the PTX
``.param``; located errors for what Warp refuses."""


import numpy as np
import pytest

from wpc_helpers import load_module

PARAMS = '''
import warp as wp

@wp.struct
class Inner:
    a: float
    b: wp.vec3

@wp.struct
class S:
    x: float
    i: int
    v: wp.vec3
    m: wp.mat22
    arr: wp.array(dtype=float)
    inn: Inner
    flag: wp.bool
    h: wp.uint8
    d: wp.float64

@wp.func
def mk(x: float) -> S:
    s = S()
    s.x = x
    s.inn.a = x * 2.0
    return s

@wp.kernel
def k(s: S, out: wp.array(dtype=float), dout: wp.array(dtype=wp.float64)):
    i = wp.tid()
    t = mk(s.x)
    s.x = 5.0            # a struct parameter is a copy: the field may change
    s.arr[i] = s.arr[i] * 3.0
    v = s.v
    if s.flag:
        v = v * 2.0
    out[i] = s.x + s.arr[i] + v[1] + s.m[1, 0] + float(s.i) + s.inn.b[2] + t.inn.a \\
        + float(s.h)
    dout[i] = s.d * wp.float64(i)
'''

ELEMENTS = '''
import warp as wp

@wp.struct
class Inner:
    a: float
    b: wp.vec3

@wp.struct
class Particle:
    pos: wp.vec3
    vel: wp.vec3
    mass: float
    id: int
    inner: Inner
    m: wp.mat22
    alive: wp.bool
    h: wp.float16
    d: wp.float64

@wp.func
def step(p: Particle, dt: float) -> Particle:
    q = p
    q.pos = p.pos + p.vel * dt
    q.inner.a = q.inner.a + dt
    q.inner.b[1] = q.inner.b[1] + 1.0
    return q

@wp.func
def make(i: int) -> Particle:
    p = Particle()
    p.id = i
    p.mass = float(i) * 0.5
    p.vel = wp.vec3(1.0, float(i), 2.0)
    p.m = wp.mat22(1.0, 2.0, 3.0, float(i))
    p.alive = i % 2 == 0
    p.d = wp.float64(i) * wp.float64(0.1)
    p.h = wp.float16(float(i) * 0.25)
    return p

@wp.kernel
def build(ps: wp.array(dtype=Particle)):
    i = wp.tid()
    ps[i] = make(i)

@wp.kernel
def integrate(ps: wp.array(dtype=Particle), dt: float, out: wp.array(dtype=float)):
    i = wp.tid()
    p = ps[i]
    c = p
    c.mass = 100.0       # a copy: p keeps its mass
    p = step(p, dt)
    ps[i] = p
    ps[i].mass += 1.0
    ps[i].inner.b[2] = 7.0
    ps[i].vel.x = ps[i].vel.x * 2.0
    out[i] = ps[i].pos[0] + ps[i].inner.a + float(ps[i].id) + ps[i].mass

@wp.kernel
def ctor(out: wp.array(dtype=Inner)):
    i = wp.tid()
    if i % 2 == 0:
        out[i] = Inner(float(i), wp.vec3(1.0, 2.0, float(i)))
    else:
        out[i] = Inner(b=wp.vec3(3.0), a=-1.0)
'''


def _params_inputs(wp, mod, n):
    s = mod.S()
    s.x, s.i, s.flag, s.h, s.d = 1.5, 3, True, 200, 0.1
    s.v = wp.vec3(1.0, 2.0, 3.0)
    s.m = wp.mat22(1.0, 2.0, 3.0, 4.0)
    s.arr = wp.array(np.arange(n, dtype=np.float32) * 0.25, dtype=float, device="cpu")
    s.inn.b = wp.vec3(0.0, 0.0, 7.0)
    return s, wp.zeros(n, dtype=float, device="cpu"), wp.zeros(n, dtype=wp.float64,
                                                                  device="cpu")


def test_struct_parameter_matches_warp_cpu(tmp_path, warp_ref):
    import warp_lab.warp as wp
    ref = load_module(tmp_path / "ref_sp.py", PARAMS, "warp", "wpc_ref_structp")
    lab = load_module(tmp_path / "lab_sp.py", PARAMS, "warp_lab.warp", "wpc_lab_structp")
    n = 8
    r, l_ = _params_inputs(warp_ref, ref, n), _params_inputs(wp, lab, n)
    warp_ref.launch(ref.k, dim=n, inputs=list(r), device="cpu")
    wp.launch(lab.k, dim=n, inputs=list(l_), device="cpu")
    np.testing.assert_array_equal(l_[1].numpy(), r[1].numpy())
    np.testing.assert_array_equal(l_[2].numpy(), r[2].numpy())
    # the array in the struct was written through it; the host instance is unchanged
    np.testing.assert_array_equal(l_[0].arr.numpy(), r[0].arr.numpy())
    assert l_[0].x == r[0].x == 1.5
    assert not wp.last_launch().sim.findings


def _fields_equal(lab: np.ndarray, ref: np.ndarray):
    """Bit-equal field by field (the padding bytes of Warp's elements are not set)."""
    assert lab.dtype == ref.dtype
    if ref.dtype.names is None:
        assert lab.tobytes() == ref.tobytes()
        return
    for name in ref.dtype.names:
        a, b = lab[name], ref[name]
        if a.dtype.names:
            _fields_equal(a, b)
        else:
            assert a.tobytes() == b.tobytes(), name


def _run_elements(wp, mod, n):
    ps = wp.zeros(n, dtype=mod.Particle, device="cpu")
    wp.launch(mod.build, dim=n, inputs=[ps], device="cpu")
    out = wp.zeros(n, dtype=float, device="cpu")
    wp.launch(mod.integrate, dim=n, inputs=[ps, 0.5, out], device="cpu")
    io = wp.array([mod.Inner() for _ in range(n)], dtype=mod.Inner, device="cpu")
    wp.launch(mod.ctor, dim=n, inputs=[io], device="cpu")
    return ps, out, io


def test_arrays_of_structs_and_struct_funcs_match_warp_cpu(tmp_path, warp_ref):
    import warp_lab.warp as wp
    ref = load_module(tmp_path / "ref_se.py", ELEMENTS, "warp", "wpc_ref_structe")
    lab = load_module(tmp_path / "lab_se.py", ELEMENTS, "warp_lab.warp", "wpc_lab_structe")
    n = 6
    r, l_ = _run_elements(warp_ref, ref, n), _run_elements(wp, lab, n)
    assert lab.Particle.numpy_dtype() == ref.Particle.numpy_dtype()
    for a, b in zip(l_, r):
        assert a.shape == b.shape
        _fields_equal(a.numpy(), b.numpy())


def test_struct_param_layout_is_the_ptx_param():
    """The struct's C layout (Warp's ctypes offsets for the fields without arrays) is the
    ``.param .align A .b8 name[size]`` NVPTX declares, and what the packer writes."""
    import warp_lab as wl
    import warp_lab.warp as wp
    from warp_lab.compiler import abi

    @wp.struct
    class P:
        flag: wp.bool
        d: wp.float64
        v: wp.vec3
        arr: wp.array(dtype=wp.int32, ndim=2)
        h: wp.float16

    assert P.offsets == (0, 8, 16, 32, 56) and P.align == 8 and P.size == 64

    @wp.kernel
    def kp(p: P, o: wp.array(dtype=wp.float64)):
        o[0] = p.d + wp.float64(p.v[2]) + wp.float64(p.arr.shape[1])

    ck = wl.compile(kp)
    assert ".param .align 8 .b8 kp_param_1[64]" in ck.ptx
    slot = ck.param_layout[1]
    assert (slot.offset, slot.size, slot.align) == (16, 64, 8)
    s = P()
    s.d, s.v = 0.5, wp.vec3(1.0, 2.0, 4.0)
    s.arr = wp.zeros((2, 3), dtype=wp.int32)
    o = wp.zeros(1, dtype=wp.float64)
    wp.launch(kp, dim=1, inputs=[s, o], device="cpu")
    assert o.numpy()[0] == 0.5 + 4.0 + 3.0
    data = abi._value_bytes(P, [1, 0.5, [1.0, 2.0, 4.0], abi.ArrayArg(64, (2, 3), (3, 1)), 1.0])
    assert data[8:16] == np.float64(0.5).tobytes() and data[40:48] == \
        np.array([2, 3], dtype=np.int32).tobytes()


def test_struct_array_field_left_none_and_findings_name_the_field():
    """An array field never set is Warp's null array (extent 0); an access past it is a
    memcheck finding naming ``s.arr``, and a field set to an array is its own view."""
    import warp_lab.warp as wp

    @wp.struct
    class H:
        n: int
        arr: wp.array(dtype=float)

    @wp.kernel
    def kn(s: H, o: wp.array(dtype=int)):
        o[0] = s.arr.shape[0] + s.n

    @wp.kernel
    def past(s: H):
        s.arr[s.n] = 1.0

    h, o = H(), wp.zeros(1, dtype=int)
    h.n = 4
    wp.launch(kn, dim=1, inputs=[h, o], device="cpu")
    assert o.numpy()[0] == 4
    h.arr = wp.zeros(4, dtype=float)
    wp.launch(past, dim=1, inputs=[h], device="cpu")
    text = " ".join(str(f) for f in wp.last_launch().sim.findings)
    assert "s.arr" in text


BAD = {   # body, message, line, column (the kernel's body starts on line 14)
    "unknown_store": ("s = Inner()\n    s.zz = 1.0", "struct Inner has no field 'zz'", 15, 5),
    "unknown_load": ("s = Inner()\n    x = s.zz", "struct Inner has no field 'zz'", 15, 9),
    "int_into_float": ("s = Inner()\n    s.a = 1\n    a[0] = s",
                       "assigning int32 to the struct field s.a of type float32", 15, 11),
    "field_of_value": ("mk().a = 1.0", "mk() is a value, not a variable", 14, 5),
    "missing_field": ("a[0] = Inner(1.0)", "Inner() needs the argument 'b'", 14, 12),
    "wrong_field": ("a[0] = Inner(1.0, 2.0)", "field 'b' of Inner is a vec3, not float32",
                    14, 23),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_struct_use_is_a_located_error(tmp_path, case):
    import warp_lab as wl
    from warp_lab.errors import KernelCompileError

    body, message, line, col = BAD[case]
    text = ("import warp as wp\n\n@wp.struct\nclass Inner:\n    a: float\n    b: wp.vec3\n\n"
            "@wp.func\ndef mk() -> Inner:\n    return Inner()\n\n"
            "@wp.kernel\ndef bad(a: wp.array(dtype=Inner)):\n    " + body + "\n")
    mod = load_module(tmp_path / f"bad_{case}.py", text, "warp_lab.warp", f"wpc_bad_{case}")
    with pytest.raises(KernelCompileError) as info:
        wl.compile(mod.bad)
    err = info.value
    assert message in err.message
    assert err.filename.endswith(f"bad_{case}.py")
    assert (err.line, err.col) == (line, col)


def test_host_side_struct_errors():
    import warp_lab.warp as wp
    from warp_lab.errors import LaunchError

    @wp.struct
    class A:
        x: float
        v: wp.vec3
        arr: wp.array(dtype=float)

    @wp.struct
    class B:
        x: float

    @wp.kernel
    def ka(s: A):
        pass

    s = A()
    with pytest.raises(AttributeError, match="no field 'y'"):
        s.y = 1.0
    with pytest.raises(TypeError, match="A.x expects a number"):
        s.x = "one"
    with pytest.raises(TypeError, match="A.v expects vec3"):
        s.v = [1.0, 2.0]
    with pytest.raises(TypeError, match="A.arr expects dtype float32, got int32"):
        s.arr = wp.zeros(3, dtype=int)
    with pytest.raises(LaunchError, match="expects a struct A .* got a struct B"):
        wp.launch(ka, dim=1, inputs=[B()], device="cpu")
    with pytest.raises(TypeError, match="element 1 of the data is int"):
        wp.array([B(), 3], dtype=B)


def test_struct_kernel_survives_the_disk_cache(tmp_path, monkeypatch):
    """A struct parameter's type is written into the cached artifact and read back equal
    (no pickle), so a cache hit packs the same parameter buffer."""
    import warp_lab as wl
    import warp_lab.warp as wp
    from warp_lab.compiler import cache

    @wp.struct
    class C:
        x: float
        v: wp.vec2

    @wp.struct
    class D:
        c: C
        arr: wp.array(dtype=C)

    @wp.kernel
    def kc(d: D):
        d.arr[0] = d.c

    ck = wl.compile(kc)
    back = cache._from_json(cache._to_json(ck), None)
    assert back.params == ck.params and back.param_layout == ck.param_layout


ROWS = '''
import warp as wp

@wp.struct
class MatStruct:
    m: wp.mat44

@wp.kernel
def rows(out: wp.array[wp.mat44], r: int):
    s = MatStruct()
    s.m[0, 0] = 2.0
    s.m[2][1] = 5.0
    out[0] = s.m
    out[0][1][1] = 7.0
    out[0][r][3] = 8.0
    m = wp.mat22()
    m[1][0] = 4.0
    out[1][0][0] = m[1][0]
'''


def test_matrix_row_components_store_as_warp_cpu(tmp_path, warp_ref):
    """``s.m[2][1] = v`` (a local's or a struct field's matrix row) and ``a[i][r][c] = v``
    (an array element's row, ``r`` at run time) store one component, as in Warp."""
    import warp_lab.warp as wp
    ref = load_module(tmp_path / "ref_rows.py", ROWS, "warp", "wpc_ref_rows")
    lab = load_module(tmp_path / "lab_rows.py", ROWS, "warp_lab.warp", "wpc_lab_rows")
    r = warp_ref.zeros(2, dtype=warp_ref.mat44, device="cpu")
    g = wp.zeros(2, dtype=wp.mat44, device="cpu")
    warp_ref.launch(ref.rows, dim=1, inputs=[r, 3], device="cpu")
    wp.launch(lab.rows, dim=1, inputs=[g, 3], device="cpu")
    np.testing.assert_array_equal(g.numpy(), r.numpy())


def test_local_matrix_row_chosen_at_run_time_is_refused(tmp_path):
    import warp_lab as wl
    from warp_lab.errors import KernelCompileError

    text = ("import warp as wp\n\n@wp.kernel\ndef bad(r: int):\n    m = wp.mat22()\n"
            "    m[r][0] = 1.0\n")
    mod = load_module(tmp_path / "bad_row.py", text, "warp_lab.warp", "wpc_bad_row")
    with pytest.raises(KernelCompileError, match="chosen at run time") as info:
        wl.compile(mod.bad)
    assert (info.value.line, info.value.col) == (6, 5)
