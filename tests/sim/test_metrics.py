"""Metric examples with textbook answers, asserted exactly (Nsight Compute definitions:
a request is one warp-level instruction, a sector is 32 bytes; shared memory has 32 banks
of 4 bytes and a conflict is a wavefront beyond the one the access needs)."""

import numpy as np
import pytest

from sim_helpers import compile_ir

STRIDED = """
define ptx_kernel void @strided(ptr addrspace(1) %x, ptr addrspace(1) %y, i32 %s) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %cta = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %b = mul i32 %cta, 128
  %i = add i32 %b, %tid
  %j = mul i32 %i, %s
  %j64 = sext i32 %j to i64
  %px = getelementptr float, ptr addrspace(1) %x, i64 %j64
  %v = load float, ptr addrspace(1) %px
  %i64 = sext i32 %i to i64
  %py = getelementptr float, ptr addrspace(1) %y, i64 %i64
  store float %v, ptr addrspace(1) %py
  ret void
}
"""

TILE = """
@tile = internal addrspace(3) global [32 x [W x float]] undef, align 4
define ptx_kernel void @transpose(ptr addrspace(1) %x, ptr addrspace(1) %y) {
entry:
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %row = mul i32 %ty, 32
  %g = add i32 %row, %tx
  %g64 = zext i32 %g to i64
  %px = getelementptr float, ptr addrspace(1) %x, i64 %g64
  %v = load float, ptr addrspace(1) %px
  %ps = getelementptr [32 x [W x float]], ptr addrspace(3) @tile, i32 0, i32 %ty, i32 %tx
  store float %v, ptr addrspace(3) %ps
  call void @llvm.nvvm.barrier0()
  %pc = getelementptr [32 x [W x float]], ptr addrspace(3) @tile, i32 0, i32 %tx, i32 %ty
  %c = load float, ptr addrspace(3) %pc
  %py = getelementptr float, ptr addrspace(1) %y, i64 %g64
  store float %c, ptr addrspace(1) %py
  ret void
}
"""


def _lines(ptx, needle):
    return [i + 1 for i, t in enumerate(ptx.split("\n")) if needle in t]


@pytest.mark.parametrize("stride,sectors", [(1, 4), (2, 8), (8, 32), (0, 1)])
def test_sectors_per_request(gpu, stride, sectors):
    n = 256
    ax = gpu.put(np.arange(n * max(stride, 1), dtype=np.float32))
    ay = gpu.put(np.zeros(n, np.float32))
    ptx = compile_ir(STRIDED)
    res = gpu.launch(ptx, "strided", 2, 128, [ax, ay, stride])
    [ld] = _lines(ptx, "ld.global")
    [st] = _lines(ptx, "st.global")
    g = res.metrics.global_memory
    assert g[ld].requests == n // 32
    assert g[ld].sectors_per_request == sectors
    assert g[st].sectors_per_request == 4           # the store is contiguous
    np.testing.assert_array_equal(gpu.get(ay), np.arange(n, dtype=np.float32) * stride)


@pytest.mark.parametrize("width,conflicts_per_request", [(32, 31), (33, 0)])
def test_shared_tile_column_read_bank_conflicts(gpu, width, conflicts_per_request):
    x = np.arange(1024, dtype=np.float32)
    ax, ay = gpu.put(x), gpu.put(np.zeros(1024, np.float32))
    ptx = compile_ir(TILE.replace("W x", f"{width} x"))
    res = gpu.launch(ptx, "transpose", 1, (32, 32), [ax, ay])
    assert res.findings == []
    np.testing.assert_array_equal(gpu.get(ay).reshape(32, 32), x.reshape(32, 32).T)
    [st] = _lines(ptx, "st.shared")
    [ld] = _lines(ptx, "ld.shared")
    met = res.metrics
    assert met.shared_requests[st] == 32 and met.bank_conflicts[st] == 0   # row writes
    assert met.shared_requests[ld] == 32
    assert met.bank_conflicts[ld] == 32 * conflicts_per_request
    assert met.shared_wavefronts[ld] == 32 * (conflicts_per_request + 1)


def test_simt_efficiency_per_warp(gpu):
    # warp 0 takes the branch on half its lanes, warp 1 on none
    ptx = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry half(.param .u64 p)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 16;
  @!%p1 bra DONE;
  add.s32 %r2, %r1, 1;
  add.s32 %r2, %r2, 1;
DONE:
  ret;
}
"""
    res = gpu.launch(ptx, "half", 1, 64, [0])
    met = res.metrics
    # warp 0: mov, setp, bra (32 lanes), 2 adds (16 lanes), ret (32) -> 6 issues
    # warp 1: mov, setp, bra, ret -> 4 issues, all 32 lanes
    assert met.warp_issued.tolist() == [6, 4]
    assert met.warp_active_lanes.tolist() == [4 * 32 + 2 * 16, 4 * 32]
    assert met.simt_efficiency.tolist() == [(4 * 32 + 2 * 16) / (6 * 32), 1.0]
    assert met.divergent_branches == 1
    assert res.instructions == 4 * 32 + 2 * 16 + 4 * 32
