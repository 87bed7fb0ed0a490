"""Kernels compiled by llvmlite's NVPTX back end, executed on the simulator, checked
against numpy."""

import numpy as np
import pytest

from warp_lab import sim
from warp_lab.errors import SimulatorError

from sim_helpers import compile_ir
from sim_kernels import ATOMICS, CALL, DIVERGE, GRID2D, LOCALARR, PRINTF, REDUCE, SAXPY


@pytest.mark.parametrize("opt", [0, 3])
def test_saxpy_matches_numpy_exactly(gpu, opt):
    n = 1000  # not a multiple of the block: the guard must stop the tail
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    ax, ay = gpu.put(x), gpu.put(y)
    res = gpu.launch(compile_ir(SAXPY, opt), "saxpy", (n + 127) // 128, 128,
                     [ax, ay, np.float32(1.5), n])
    assert res.findings == [] and not res.partial
    np.testing.assert_array_equal(gpu.get(ay), np.float32(1.5) * x + y)
    assert res.instructions > 10 * n


@pytest.mark.parametrize("opt", [0, 3])
def test_divergent_branch_and_loop(gpu, opt):
    n = 300
    x = np.arange(n, dtype=np.int32) * 7 - 50
    ax, ao, ac = gpu.put(x), gpu.put(np.zeros(n, np.int32)), gpu.put(np.zeros(n, np.int32))
    res = gpu.launch(compile_ir(DIVERGE, opt), "diverge", 3, 100, [ax, ao, ac])
    assert res.findings == []
    i = np.arange(n)
    np.testing.assert_array_equal(gpu.get(ao), np.where(i % 3 == 0, x * 2, x + 1))
    trip = i % 7
    np.testing.assert_array_equal(gpu.get(ac), trip * (trip - 1) // 2)
    assert res.metrics.divergent_branches > 0
    assert res.metrics.mean_simt_efficiency < 1.0


def _tree_sum(x):
    ref = x.reshape(-1, 256).copy()
    s = 128
    while s >= 1:
        ref[:, :s] = ref[:, :s] + ref[:, s:2 * s]
        s //= 2
    return ref[:, 0]


@pytest.mark.parametrize("opt", [0, 3])
def test_shared_memory_tree_reduction(gpu, opt):
    nb = 6
    x = np.random.default_rng(2).random(nb * 256).astype(np.float32)
    ax, ao = gpu.put(x), gpu.put(np.zeros(nb, np.float32))
    ir = REDUCE.replace("BARRIER", "call void @llvm.nvvm.barrier0()")
    res = gpu.launch(compile_ir(ir, opt), "reduce", nb, 256, [ax, ao])
    assert res.findings == []
    np.testing.assert_array_equal(gpu.get(ao), _tree_sum(x))
    # one barrier after the stores plus eight in the loop, per warp of each block
    assert res.metrics.barriers == nb * 8 * 9


def test_small_batches_give_the_same_answer(gpu):
    nb = 5
    x = np.random.default_rng(3).random(nb * 256).astype(np.float32)
    ax, ao = gpu.put(x), gpu.put(np.zeros(nb, np.float32))
    ir = REDUCE.replace("BARRIER", "call void @llvm.nvvm.barrier0()")
    gpu.launch(compile_ir(ir), "reduce", nb, 256, [ax, ao], batch_threads=256)
    np.testing.assert_array_equal(gpu.get(ao), _tree_sum(x))


@pytest.mark.parametrize("opt", [0, 3])
def test_device_function_call_from_divergent_paths(gpu, opt):
    n = 64
    x = np.linspace(-3, 3, n).astype(np.float32)
    ax, ay = gpu.put(x), gpu.put(np.zeros(n, np.float32))
    ptx = compile_ir(CALL, opt)
    assert ".func" in ptx and "call" in ptx
    res = gpu.launch(ptx, "callk", 2, 32, [ax, ay])
    assert res.findings == []
    k = np.where(np.arange(n) % 2 == 1, np.float32(1), np.float32(2))
    np.testing.assert_array_equal(gpu.get(ay), x * x + k)


def test_atomics_return_per_lane_old_values(gpu):
    n = 256
    x = np.random.default_rng(4).integers(0, 1000, n).astype(np.int32)
    ax, ah = gpu.put(x), gpu.put(np.zeros(16, np.int32))
    aold, af = gpu.put(np.zeros(n, np.int32)), gpu.put(np.zeros(1, np.float32))
    res = gpu.launch(compile_ir(ATOMICS), "hist", 2, 128, [ax, ah, aold, af])
    assert res.findings == []
    bins = x & 15
    np.testing.assert_array_equal(gpu.get(ah), np.bincount(bins, minlength=16))
    old = gpu.get(aold)
    # within each bin, the old values are a permutation of 0..count-1 (each lane saw a
    # distinct previous count, as on the GPU)
    for b in range(16):
        np.testing.assert_array_equal(np.sort(old[bins == b]), np.arange(np.sum(bins == b)))
    assert gpu.get(af)[0] == np.float32(x.sum())  # small integers: exact in any order


@pytest.mark.parametrize("opt", [0, 3])
def test_local_memory_array(gpu, opt):
    n = 64
    ao = gpu.put(np.zeros(n, np.int32))
    ptx = compile_ir(LOCALARR, opt)
    assert ".local" in ptx
    res = gpu.launch(ptx, "localarr", 2, 32, [ao])
    assert res.findings == []
    i = np.arange(n)
    np.testing.assert_array_equal(gpu.get(ao), (i & 7) * i)


def test_printf_formats_like_c(gpu):
    res = gpu.launch(compile_ir(PRINTF, 0), "pr", 1, 3, [np.float32(2.5)])
    assert res.findings == []
    assert res.printed == "".join(f"t={t} v=2.50 big=-5000000000 s=hi!\n" for t in range(3))


def test_two_dimensional_grid(gpu):
    w, h = 48, 20
    ao = gpu.put(np.zeros(w * h, np.int32))
    res = gpu.launch(compile_ir(GRID2D), "grid2d", (3, 5), (16, 4), [ao, w])
    assert res.findings == []
    yy, xx = np.mgrid[0:h, 0:w]
    np.testing.assert_array_equal(gpu.get(ao).reshape(h, w), yy * 1000 + xx)


def test_metrics_attribute_counts_to_lines(gpu):
    n = 256
    ax, ay = gpu.put(np.ones(n, np.float32)), gpu.put(np.ones(n, np.float32))
    ptx = compile_ir(SAXPY)
    res = gpu.launch(ptx, "saxpy", 2, 128, [ax, ay, np.float32(2), n])
    lines = ptx.split("\n")
    fmul = next(i + 1 for i, t in enumerate(lines) if "mul.rn.f32" in t)
    assert res.metrics.per_ptx_line[fmul] == n
    assert res.metrics.warp_per_ptx_line[fmul] == n // 32
    assert sum(res.metrics.per_ptx_line.values()) == res.instructions
    assert sum(res.metrics.mix.values()) == res.instructions
    assert res.metrics.mix["memory"] >= 3 * n


def test_unknown_kernel_and_bad_launch_are_simulator_errors(gpu):
    mod = sim.parse_module(compile_ir(SAXPY))
    with pytest.raises(SimulatorError, match="no kernel entry 'nope'.*saxpy"):
        sim.run(mod, "nope", 1, 32, b"", gpu.mem)
    with pytest.raises(SimulatorError, match="2048 threads exceeds the 1024-thread"):
        sim.run(mod, "saxpy", 1, (64, 32), bytes(24), gpu.mem)
    with pytest.raises(SimulatorError, match="block.x = 2048 exceeds the limit 1024"):
        sim.run(mod, "saxpy", 1, 2048, bytes(24), gpu.mem)
    with pytest.raises(SimulatorError, match="24-byte parameter buffer"):
        sim.run(mod, "saxpy", 1, 32, b"", gpu.mem)


SWITCH = """
define ptx_kernel void @sw(ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %k = urem i32 %t, 8
  switch i32 %k, label %d [ i32 0, label %a0  i32 1, label %a1  i32 2, label %a2
                            i32 3, label %a3  i32 4, label %a4  i32 5, label %a5 ]
a0:
  br label %j
a1:
  br label %j
a2:
  br label %j
a3:
  br label %j
a4:
  br label %j
a5:
  br label %j
d:
  br label %j
j:
  %v = phi i32 [11, %a0], [23, %a1], [37, %a2], [41, %a3], [59, %a4], [61, %a5], [99, %d]
  %t64 = zext i32 %t to i64
  %p = getelementptr i32, ptr addrspace(1) %out, i64 %t64
  store volatile i32 %v, ptr addrspace(1) %p
  ret void
}
"""


@pytest.mark.parametrize("opt", [0, 3])
def test_switch_jump_table_brx_idx(gpu, opt):
    ptx = compile_ir(SWITCH, opt)
    assert "brx.idx" in ptx and ".branchtargets" in ptx
    out = gpu.put(np.zeros(64, np.int32))
    res = gpu.launch(ptx, "sw", 1, 64, [out])
    assert res.findings == []
    table = [11, 23, 37, 41, 59, 61, 99, 99]
    assert gpu.get(out).tolist() == [table[t % 8] for t in range(64)]
    assert res.metrics.divergent_branches >= 2
