"""The article's code (``/work/shared/seed_snippets``, copied under ``tests/warp/seeds``)
with only ``import warp as wp`` changed to ``import warp_lab.warp as wp`` does what the
article says; where the article shows what is not Warp (``a.__wp_device__``,
``wp.get_device()`` in a kernel, ``wp.Tape`` replay, ``wp.memory``) the error is clear."""

from __future__ import annotations

import os
import runpy

import pytest

SEEDS = os.path.join(os.path.dirname(__file__), "seeds")


def _run(name, tmp_path, capsys):
    text = open(os.path.join(SEEDS, name), encoding="utf-8").read()
    assert text.count("import warp as wp\n") == 1
    path = tmp_path / name
    path.write_text(text.replace("import warp as wp\n", "import warp_lab.warp as wp\n"))
    from warp_lab.warp import _host
    _host._MODULE_OPTIONS.pop("__main__", None)   # each snippet is a script of its own
    runpy.run_path(str(path), run_name="__main__")
    return capsys.readouterr().out


def test_s1_vector_add_on_the_simulator(tmp_path, capsys):
    assert _run("s1_vector_add_sim.py", tmp_path, capsys) == "Simulation result: [5. 7. 9.]\n"


def test_s2_vector_add_on_cuda0(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", os.environ.get("CUDA_VISIBLE_DEVICES", "0"))
    from warp_lab.runtime.device import cuda_devices
    if cuda_devices()[0]:
        assert _run("s2_vector_add_gpu.py", tmp_path, capsys) == "GPU result: [5. 7. 9.]\n"
    else:
        import warp_lab as wl
        with pytest.raises(wl.CudaError, match="cuda:0.*not available"):
            _run("s2_vector_add_gpu.py", tmp_path, capsys)


def test_s3_printf_at_the_start_and_math_sqrt(tmp_path, capsys):
    out = _run("s3_printf_sqrt.py", tmp_path, capsys)
    assert out.count("Debug: start\n") == 6          # one per thread, two launches of 3
    assert "wp.sqrt + wp.sin: [1.841471  1.2431974 3.4121184]" in out
    assert "math.sqrt: [1. 2. 3.]" in out           # Warp's kernels take math.sqrt too


def test_s4_device_attributes_and_a_host_call_in_a_kernel(tmp_path, capsys):
    out = _run("s4_device_safe_launch.py", tmp_path, capsys)
    assert "wp.get_device(): cpu" in out or "wp.get_device(): cuda:0" in out
    # not Warp: an array has no __wp_device__ (Warp's arrays have .device), as in Warp
    assert "a.__wp_device__ -> AttributeError" in out
    assert ("kernel with wp.get_device() -> KernelCompileError" in out
            and "host function" in out and ":38:" in out)


def test_s5_func_vec3_mat33_and_a_shaped_array(tmp_path, capsys):
    out = _run("s5_func_vec3_mat33.py", tmp_path, capsys)
    assert ("transform: [[0.0, 0.0, 0.0], [2.0, 6.0, 12.0], [8.0, 24.0, 48.0], "
            "[18.0, 54.0, 108.0]]") in out
    assert "wp.vec3f is wp.vec3: True" in out
    assert "wp.array(dtype=wp.float32, shape=(1024,)): array (1024,) bytes: 4096" in out


def test_s6_init_capture_and_tape(tmp_path, capsys):
    out = _run("s6_capture_tape.py", tmp_path, capsys)
    assert "wp.init() ok" in out and "wp.synchronize() ok" in out
    assert "capture_begin/end ok: <wp.Graph of 1 launch(es)" in out
    assert "wp.Tape -> UnsupportedFeatureError wp.Tape is a Warp feature (autodiff" in out


def test_s7_launch_returns_none_and_wp_memory_is_not_warp(tmp_path, capsys):
    out = _run("s7_error_as_value_malloc.py", tmp_path, capsys)
    assert "wp.launch returned: NoneType truthy: False" in out
    assert "Launch failed" not in out
    assert "wp.memory.malloc -> AttributeError" in out and "Warp 1.19 has no such name" in out
