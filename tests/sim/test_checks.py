"""Planted-bug kernels, one per check: each must produce exactly the expected finding,
naming the right thread, PTX line and source line."""

import numpy as np
import pytest

from warp_lab import sim
from warp_lab.errors import SimulatorError

from sim_helpers import compile_ir, with_lines
from sim_kernels import REDUCE

TID = """
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x() ;@2
  %cta = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() ;@2
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x() ;@2
  %b = mul i32 %cta, %ntid ;@2
  %i = add i32 %b, %tid ;@2
  %i64 = sext i32 %i to i64 ;@2
"""

OOB_WRITE = with_lines("""
define ptx_kernel void @fill(ptr addrspace(1) %y) {
entry:""" + TID + """
  %p = getelementptr i32, ptr addrspace(1) %y, i64 %i64 ;@3
  store i32 %i, ptr addrspace(1) %p ;@3
  ret void ;@4
}
""")

OFF_BY_ONE = with_lines("""
define ptx_kernel void @shift(ptr addrspace(1) %x, ptr addrspace(1) %y, i32 %n) {
entry:""" + TID + """
  %ok = icmp slt i32 %i, %n ;@3
  br i1 %ok, label %body, label %exit ;@3
body:
  %j = add i32 %i, 1 ;@4
  %j64 = sext i32 %j to i64 ;@4
  %px = getelementptr float, ptr addrspace(1) %x, i64 %j64 ;@4
  %v = load float, ptr addrspace(1) %px ;@4
  %py = getelementptr float, ptr addrspace(1) %y, i64 %i64 ;@5
  store float %v, ptr addrspace(1) %py ;@5
  br label %exit ;@5
exit:
  ret void ;@6
}
""")

MISALIGNED = with_lines("""
define ptx_kernel void @mis(ptr addrspace(1) %x, ptr addrspace(1) %y) {
entry:""" + TID + """
  %off = mul i64 %i64, 4 ;@3
  %o2 = add i64 %off, 2 ;@3
  %px = getelementptr i8, ptr addrspace(1) %x, i64 %o2 ;@3
  %v = load i32, ptr addrspace(1) %px, align 4 ;@7
  %py = getelementptr i32, ptr addrspace(1) %y, i64 %i64 ;@8
  store i32 %v, ptr addrspace(1) %py ;@8
  ret void ;@9
}
""")

RUNAWAY = with_lines("""
define ptx_kernel void @spin(ptr addrspace(1) %y) {
entry:""" + TID + """
  br label %loop ;@3
loop:
  %k = phi i32 [0, %entry], [%k1, %loop] ;@4
  %k1 = add i32 %k, 1 ;@4
  %p = getelementptr i32, ptr addrspace(1) %y, i64 %i64 ;@5
  store volatile i32 %k1, ptr addrspace(1) %p ;@5
  br label %loop ;@6
}
""")

DIVERGENT_BARRIER = with_lines("""
define ptx_kernel void @halfsync(ptr addrspace(1) %y) {
entry:""" + TID + """
  %low = icmp ult i32 %tid, 16 ;@3
  br i1 %low, label %sync, label %after ;@3
sync:
  call void @llvm.nvvm.barrier0() ;@4
  br label %after ;@4
after:
  %p = getelementptr i32, ptr addrspace(1) %y, i64 %i64 ;@5
  store i32 %tid, ptr addrspace(1) %p ;@5
  ret void ;@6
}
""")


def _line_of(ptx, needle):
    return next(i + 1 for i, t in enumerate(ptx.split("\n")) if needle in t)


def test_out_of_bounds_write_names_first_bad_thread(gpu):
    n = 100
    ay = gpu.put(np.zeros(n, np.int32), "y")
    ptx = compile_ir(OOB_WRITE)
    res = gpu.launch(ptx, "fill", 2, 64, [ay])
    assert res.partial
    [f] = res.findings
    assert f.kind == "out_of_bounds"
    assert (f.block, f.thread) == ((1, 0, 0), (36, 0, 0))      # global index 100 = n
    assert f.ptx_line == _line_of(ptx, "st.global")
    assert (f.source_file, f.source_line) == ("/tmp/kern.py", 3)
    assert f.details["address"] == ay + 4 * n and f.details["size"] == 4
    assert "0 bytes past the end of 'y'" in f.message
    # both blocks run in one batch, so the faulting store is one instruction for all 128
    # threads: it is checked before any byte is written and no lane writes
    assert gpu.get(ay).tolist() == [0] * n


def test_off_by_one_read(gpu):
    n = 64
    ax, ay = gpu.put(np.ones(n, np.float32), "x"), gpu.put(np.zeros(n, np.float32), "y")
    ptx = compile_ir(OFF_BY_ONE)
    res = gpu.launch(ptx, "shift", 1, 64, [ax, ay, n])
    [f] = res.findings
    assert f.kind == "out_of_bounds" and "read" in f.message
    assert f.thread == (63, 0, 0) and f.block == (0, 0, 0)
    assert f.ptx_line == _line_of(ptx, "ld.global")
    assert f.source_line == 4


def test_misaligned_access(gpu):
    ax, ay = gpu.put(np.zeros(64, np.int32), "x"), gpu.put(np.zeros(32, np.int32), "y")
    ptx = compile_ir(MISALIGNED)
    res = gpu.launch(ptx, "mis", 1, 32, [ax, ay])
    [f] = res.findings
    assert f.kind == "misaligned" and f.thread == (0, 0, 0)
    assert f.details["address"] == ax + 2 and f.source_line == 7


def test_out_of_bounds_without_memcheck_is_an_error_not_a_crash(gpu):
    ay = gpu.put(np.zeros(10, np.int32), "y")
    with pytest.raises(SimulatorError, match="illegal global memory access") as info:
        gpu.launch(compile_ir(OOB_WRITE), "fill", 1, 32, [ay], checks=())
    # without memcheck's details, the error still names the source line (from .loc)
    assert info.value.source_line == 3 and "kern.py line 3" in str(info.value)


def test_runaway_loop_stops_at_budget(gpu):
    ay = gpu.put(np.zeros(32, np.int32), "y")
    res = gpu.launch(compile_ir(RUNAWAY), "spin", 1, 32, [ay], max_instructions=20_000)
    assert res.partial
    [f] = res.findings
    assert f.kind == "budget" and "20000" in f.message
    assert 20_000 < res.instructions <= 20_000 + 32
    assert f.source_line in (4, 5, 6)


def test_missing_syncthreads_in_reduction_is_a_race():
    ir = with_lines(REDUCE.replace("BARRIER", "%nop = add i32 0, 0"))
    ptx = compile_ir(ir)
    from sim_helpers import Launcher
    g = Launcher()
    x = g.put(np.ones(256, np.float32))
    out = g.put(np.zeros(1, np.float32))
    res = g.launch(ptx, "reduce", 1, 256, [x, out])
    kinds = {f.kind for f in res.findings}
    assert "race_raw" in kinds
    raw = next(f for f in res.findings if f.kind == "race_raw")
    assert raw.ptx_line == _line_of(ptx, "ld.shared.b32") or "ld.shared" in \
        ptx.split("\n")[raw.ptx_line - 1]
    assert "st.shared" in ptx.split("\n")[raw.details["other_ptx_line"] - 1]
    # the finding names the shared variable the byte belongs to (its PTX name)
    assert raw.details["variable"] == "sm" and "of shared variable sm)" in raw.message
    assert not res.partial  # races are reported, the launch runs on

    # the same kernel with the barrier: no findings at all
    ok = compile_ir(with_lines(REDUCE.replace("BARRIER", "call void @llvm.nvvm.barrier0()")))
    res = g.launch(ok, "reduce", 1, 256, [x, out])
    assert res.findings == []


def test_racecheck_can_be_switched_off(gpu):
    ptx = compile_ir(REDUCE.replace("BARRIER", "%nop = add i32 0, 0"))
    x, out = gpu.put(np.ones(256, np.float32)), gpu.put(np.zeros(1, np.float32))
    res = gpu.launch(ptx, "reduce", 1, 256, [x, out], checks=("memcheck",))
    assert res.findings == []


def test_syncthreads_in_divergent_branch(gpu):
    ay = gpu.put(np.zeros(64, np.int32))
    ptx = compile_ir(DIVERGENT_BARRIER)
    res = gpu.launch(ptx, "halfsync", 1, 64, [ay])
    kinds = [f.kind for f in res.findings]
    assert kinds == ["divergent_barrier"]
    f = res.findings[0]
    assert f.ptx_line == _line_of(ptx, "bar.sync") and f.source_line == 4
    # the 48 did not run past the barrier: they skipped it at the branch around it (line 3,
    # whose PTX line the runtime turns into the Python line) and exited at the kernel's ret
    ret, bra = _line_of(ptx, "ret;"), _line_of(ptx, "bra")
    assert ("barrier reached by 16 threads of the block while 48 others never reached it: "
            f"they took another path at PTX line {bra} and exited (at PTX line {ret})") \
        in f.message, f.message
    assert f.details == {"branch_ptx_line": bra}
    assert "@%p" in ptx.split("\n")[bra - 1]       # the guarded bra of the `if`
    assert gpu.get(ay).tolist() == list(range(64))   # still completes (sm_70+ semantics)


def test_early_exit_before_barrier_is_not_reported(gpu):
    # the common "if i >= n: return" guard before a reduction must stay quiet
    ir = REDUCE.replace("BARRIER", "call void @llvm.nvvm.barrier0()")
    x, out = gpu.put(np.ones(512, np.float32)), gpu.put(np.zeros(2, np.float32))
    res = gpu.launch(compile_ir(ir), "reduce", 2, 256, [x, out])
    assert res.findings == []


DEADLOCK_PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry dl(.param .u64 p)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 32;
  @%p1 bra WAIT;
  ret;
WAIT:
  bar.sync 1, 64;
  ret;
}
"""


def test_deadlock_is_detected_not_hung(gpu):
    """Only one warp reaches a barrier that expects 64 threads; exited threads do not
    count toward an explicit thread count."""
    res = sim.run(sim.parse_module(DEADLOCK_PTX), "dl", 1, 64, bytes(8), gpu.mem)
    assert res.partial
    [f] = res.findings
    assert f.kind == "deadlock" and f.ptx_line == 14
    assert "32 of 32 live threads" in f.message
