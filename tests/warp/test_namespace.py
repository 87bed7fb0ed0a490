"""``import warp_lab.warp as wp``: Warp's host API and names, checked against warp-lang."""

from __future__ import annotations

import numpy as np
import pytest

import warp_lab as wl
import warp_lab.warp as wp


def test_arrays_have_warps_shape_dtype_and_methods(warp_ref):
    for make in (lambda m: m.zeros(4, dtype=m.vec3), lambda m: m.ones((2, 3), dtype=m.float32),
                 lambda m: m.full(3, 7, dtype=m.int32), lambda m: m.array([[1, 2], [3, 4]],
                                                                           dtype=m.float32)):
        ours, ref = make(wp), make(warp_ref)
        assert ours.shape == ref.shape and ours.ndim == ref.ndim and ours.size == ref.size
        np.testing.assert_array_equal(ours.numpy(), ref.numpy())
    a = wp.zeros(4, dtype=wp.vec3)
    a.fill_(wp.vec3(1.0, 2.0, 3.0))
    assert a.numpy().tolist() == [[1.0, 2.0, 3.0]] * 4 and a.dtype is wp.vec3
    a.zero_()
    assert not a.numpy().any()
    assert str(a.device) == "cpu" or str(a.device).startswith("cuda")
    b = wp.clone(wp.array(np.arange(5, dtype=np.float32)))
    c = wp.zeros(5, dtype=wp.float32)
    wp.copy(c, b, dest_offset=1, src_offset=0, count=4)
    assert c.numpy().tolist() == [0, 0, 1, 2, 3]
    # dtype Any takes numpy's dtype of the data, as Warp's does (float64 for Python floats)
    assert wp.array([1.0, 2.0]).dtype.name == warp_ref.array([1.0, 2.0], device="cpu").dtype.__name__


def test_annotations_all_spell_the_same_array_type():
    t = wl.array(dtype=wl.float32)
    assert wp.array(dtype=wp.float32) == wp.array[wp.float32] == wp.array1d[float] == t
    assert wp.array2d(dtype=wp.vec3) == wl.array(dtype=wl.vec3, ndim=2) == wp.array2d[wp.vec3]
    assert wp.array(dtype=wp.int32, ndim=3) == wp.array3d[int]
    assert wp.types.vector(length=3, dtype=wp.float32) is wp.vec3
    assert wp.types.matrix(shape=(3, 2), dtype=wp.float64).rows == 3


def test_warp_builtins_under_warps_names_and_argument_order(warp_ref, capsys):
    @wp.kernel
    def k(x: wp.array(dtype=float), out: wp.array2d(dtype=float), n: wp.array(dtype=int)):
        i = wp.tid()
        v = x[i]
        out[i, 0] = wp.lerp(v, 2.0, 0.25)
        out[i, 1] = wp.select(v > 0.0, 10.0, 20.0)   # Warp: (cond, if_false, if_true)
        out[i, 2] = wp.where(v > 0.0, 10.0, 20.0)
        out[i, 3] = wp.clamp(v, -0.5, 0.5) + wp.step(v) + wp.sign(0.0) * 100.0
        out[i, 4] = wp.smoothstep(0.0, 1.0, v) + wp.pi
        wp.atomic_add(n, 0, 1)
        wp.expect_eq(i, 0)

    x = wp.array([0.5, -1.0], dtype=float)
    out = wp.zeros((2, 5), dtype=float)
    n = wp.zeros(1, dtype=int)
    assert wp.launch(k, dim=2, inputs=[x, out, n], device="cpu") is None
    got = out.numpy()
    assert got[:, 1].tolist() == [20.0, 10.0] and got[:, 2].tolist() == [10.0, 20.0]
    np.testing.assert_allclose(got[:, 0], [0.5 * 0.75 + 0.5, -1.0 * 0.75 + 0.5])
    np.testing.assert_allclose(got[:, 3], [100.5, 100.5])   # sign(0) is 1 in Warp
    assert n.numpy()[0] == 2
    printed = capsys.readouterr().out
    assert "Error, expect_eq() failed:\n\t Expected: 0\n\t Actual: 1\n" in printed
    from warp_lab.runtime.result import LaunchResult
    assert isinstance(wp.last_launch(), LaunchResult)
    assert wp.last_launch().compiled.dialect == "warp"


def test_warp_features_warp_lab_lacks_are_one_clear_error():
    @wp.kernel
    def k(x: wp.array(dtype=float)):
        i = wp.tid()
        x[i] = wp.volume_sample_f(1, 2)

    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(k)
    assert "wp.volume_sample_f is a Warp feature (volumes" in str(info.value)
    assert info.value.line == k.source.first_line + 3
    with pytest.raises(wl.errors.UnsupportedFeatureError, match="meshes"):
        wp.Mesh(points=None, indices=None)
    with pytest.raises(wl.errors.UnsupportedFeatureError, match="autodiff"):
        wp.zeros(3, requires_grad=True)
    with pytest.raises(AttributeError, match="no such name"):
        wp.not_a_warp_name  # noqa: B018


def test_module_options_config_mode_and_timer(capsys):
    import warp_lab.warp.config as config

    @wp.kernel
    def oob(x: wp.array(dtype=float)):
        i = wp.tid()
        x[i + 1] = 1.0

    x = wp.zeros(2, dtype=float)
    config.mode = "debug"
    try:
        wp.launch(oob, dim=2, inputs=[x], device="cpu")
    finally:
        config.mode = "release"
    assert wp.last_launch().compiled.options.debug          # bounds-checked build
    assert wp.last_launch().findings or wp.last_launch().printed
    wp.launch(oob, dim=1, inputs=[x], device="cpu")
    assert not wp.last_launch().compiled.options.debug
    with wp.ScopedTimer("step"):
        pass
    out = capsys.readouterr().out
    assert "index 2 out of bounds for axis 0 with size 2" in out   # debug's check, printed
    assert out.endswith("\n") and "\nstep took " in out
    with wp.ScopedDevice("cpu"):
        assert wp.get_device() == "cpu" and wp.get_device().is_cpu


def test_hints_point_at_kernel_names_only_and_know_pythons_print():
    @wl.kernel
    def k(x: wl.array(dtype=float)):
        x[0] = wl.tile_zeros(3)

    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(k)
    assert "wl.zeros" not in str(info.value)      # a host function: no kernel can call it

    @wp.kernel
    def p(x: wp.array(dtype=float)):
        wp.print(x[0])       # Warp 1.19 has wp.print: Python's print in a kernel

    assert wl.compile(p).ptx.count("vprintf") >= 1

    @wp.kernel
    def h(x: wp.array(dtype=float)):
        x[0] = wp.ones(3)       # (wp.zeros is also Warp 1.19's in-kernel fixedarray)

    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(h)
    assert "host function" in info.value.message and "@wl.func" not in info.value.hint
