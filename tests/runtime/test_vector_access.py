"""One vector load/store per ``vec2``/``vec4`` array element (``aligned_vectors``).

nvcc turns a ``float4`` element access into one ``LDG.E.128``; warp_lab does the
same for arrays whose elements are aligned to their size, and ``wl.launch``
falls back to per-component accesses for an argument that is not (checked
against numpy on the simulator, whose memcheck faults a misaligned ``ld.v4``
as the GPU does).
"""

import re

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.runtime.args import check_arguments, misaligned_vectors


@wl.kernel
def scale4(a: wl.array(dtype=wl.vec4), out: wl.array(dtype=wl.vec4), s: float):
    i = wl.tid()
    out[i] = a[i] * s


@wl.kernel
def mixed(raw: wl.array(dtype=wl.float32), v: wl.array(dtype=wl.vec4),
          out: wl.array(dtype=wl.vec4)):
    i = wl.tid()
    out[i] = v[i] + wl.vec4(raw[i], 0.0, 0.0, 0.0)


@wl.kernel
def kinds(a2: wl.array(dtype=wl.vec2), ai: wl.array(dtype=wl.vec4i),
          ad: wl.array(dtype=wl.vec2d), a3: wl.array(dtype=wl.vec3),
          out2: wl.array(dtype=wl.vec2), outi: wl.array(dtype=wl.vec4i),
          outd: wl.array(dtype=wl.vec2d), out3: wl.array(dtype=wl.vec3)):
    i = wl.tid()
    tile = wl.shared_array(64, wl.vec4)
    t = wl.thread_idx.x
    tile[t] = wl.vec4(a2[i].x, a2[i].y, 1.0, 2.0)
    wl.syncthreads()
    v = tile[63 - t]
    out2[i] = wl.vec2(v.x + v.z, v.y + v.w)
    outi[i] = ai[i] * 2
    outd[i] = ad[i] + ad[i]
    out3[i] = a3[i] * 3.0


def _accesses(ptx: str) -> list[str]:
    return re.findall(r"\b(?:ld|st)\.(?:global|shared)(?:\.nc)?(?:\.v[24])?\.b(?:32|64)", ptx)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_each_element_is_one_vector_access_and_ptxas_takes_it(arch):
    ck = wl.compile(scale4, arch=arch, cache=False)
    assert _accesses(ck.ptx) == ["ld.global.nc.v4.b32", "st.global.v4.b32"]  # a: read-only
    assert ck.sass.count("LDG.E.128") == 1 and ck.sass.count("STG.E.128") == 1
    per_component = wl.compile(scale4, arch=arch, cache=False, aligned_vectors=False)
    assert _accesses(per_component.ptx) == ["ld.global.nc.b32"] * 4 + ["st.global.b32"] * 4
    assert ck.resources.registers <= per_component.resources.registers


def test_which_element_types_get_vector_accesses():
    ck = wl.compile(kinds, arch="sm_90", cache=False)
    assert ck.cubin is not None  # ptxas took it
    ptx = ck.ptx
    acc = _accesses(ptx)
    assert "ld.global.nc.v2.b32" in acc and "st.global.v2.b32" in acc   # vec2
    assert "ld.global.nc.v4.b32" in acc and "st.global.v4.b32" in acc   # vec4i
    assert "ld.global.nc.v2.b64" in acc and "st.global.v2.b64" in acc   # vec2d
    assert "st.shared.v4.b32" in acc and "ld.shared.v4.b32" in acc      # static shared vec4
    assert acc.count("ld.global.nc.b32") == 3 and acc.count("st.global.b32") == 3  # vec3


def test_aligned_arrays_run_vectorised_and_match_numpy():
    n = 256
    a = np.random.default_rng(4).standard_normal((n, 4)).astype(np.float32)
    out = np.zeros_like(a)
    r = wl.launch(scale4, dim=n, inputs=[a, out, 1.5], device="sim")
    assert not r.findings and r.compiled.options.aligned_vectors
    np.testing.assert_array_equal(out, a * np.float32(1.5))


def test_a_view_misaligned_within_its_region_gets_the_per_component_variant():
    n = 64
    buf = np.random.default_rng(5).standard_normal(4 * n + 1).astype(np.float32)
    raw = buf                          # the region starts here ...
    v = buf[1:].reshape(n, 4)          # ... and the vec4 view 4 bytes in: not 16-aligned
    out = np.zeros((n, 4), np.float32)
    ck = wl.compile(mixed, sass=False)
    _, views = check_arguments(ck.params, [raw, v, out])
    assert misaligned_vectors(ck.params, views) == ["v"]
    r = wl.launch(ck, dim=n, inputs=[raw, v, out], device="sim")
    assert not r.findings and not r.compiled.options.aligned_vectors
    ref = v.copy()
    ref[:, 0] += buf[:n]
    np.testing.assert_array_equal(out, ref)
    # the same view on its own starts its region: aligned on the device
    params = wl.compile(scale4, sass=False).params
    _, views = check_arguments(params, [v, out, 1.0])
    assert misaligned_vectors(params, views) == []


def test_the_vectorised_kernel_faults_on_a_misaligned_element_as_a_gpu_would():
    # forcing the aligned variant onto misaligned data: the simulator's memcheck says so
    from warp_lab.runtime import sim_backend
    from warp_lab.runtime.device import get_device
    from warp_lab.runtime.launch import launch_geometry

    n = 32
    buf = np.zeros(4 * n + 1, np.float32)
    v = buf[1:].reshape(n, 4)
    out = np.zeros((n, 4), np.float32)
    ck = wl.compile(mixed, sass=False)
    values, views = check_arguments(ck.params, [buf, v, out])
    grid, block, dim = launch_geometry(1, dim=n, block_dim=32)
    r = sim_backend.run(ck, get_device("sim"), grid, block, dim, values, views)
    assert [f.kind for f in r.findings] == ["misaligned"]


@wl.kernel
def copy_all(a: wl.array(dtype=wl.vec4), out: wl.array(dtype=wl.vec4), m: wl.array(dtype=wl.mat22)):
    for i in range(len(a)):
        out[i] = a[i]
    if len(m) > 0:
        out[0] = wl.vec4(m[0][0, 0], 0.0, 0.0, 0.0)


def test_empty_vector_and_matrix_arrays_launch():
    # NumPy gives np.zeros((0, 4)) the strides (0, 0): nothing to check for no elements
    empty = np.zeros((0, 4), np.float32)
    r = wl.launch(copy_all, dim=1, inputs=[empty, np.zeros((0, 4), np.float32),
                                           np.zeros((0, 2, 2), np.float32)], device="sim")
    assert not r.findings
    out = np.zeros((2, 4), np.float32)
    wl.launch(copy_all, dim=1, inputs=[wl.zeros(0, dtype=wl.vec4), out,
                                       np.zeros((0, 2, 2), np.float32)], device="sim")
    assert not out.any()
