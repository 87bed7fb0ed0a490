"""The debugger API: breakpoints by PTX and source line (optionally per block/thread),
stepping, warp inspection, step back by replay, run to end."""

import numpy as np
import pytest

from warp_lab import sim

from sim_helpers import compile_ir, pack, with_lines
from sim_kernels import REDUCE

KERNEL = with_lines("""
define ptx_kernel void @scale(ptr addrspace(1) %x, i32 %k) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x() ;@10
  %cta = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() ;@10
  %b = mul i32 %cta, 64 ;@10
  %i = add i32 %b, %tid ;@10
  %i64 = sext i32 %i to i64 ;@10
  %p = getelementptr float, ptr addrspace(1) %x, i64 %i64 ;@11
  %v = load float, ptr addrspace(1) %p ;@11
  %odd = and i32 %i, 1 ;@12
  %c = icmp eq i32 %odd, 1 ;@12
  br i1 %c, label %o, label %e ;@12
o:
  %kf = sitofp i32 %k to float ;@13
  %w = fmul float %v, %kf ;@13
  store float %w, ptr addrspace(1) %p ;@13
  br label %e ;@13
e:
  ret void ;@14
}
""")


def _setup(gpu, n=128):
    x = np.arange(n, dtype=np.float32)
    ax = gpu.put(x, "x")
    ptx = compile_ir(KERNEL)
    mod = sim.parse_module(ptx)
    return mod, ax, x, pack(mod, "scale", [ax, 3])


def test_breakpoint_by_source_line_and_block(gpu):
    mod, ax, x, params = _setup(gpu)
    dbg = sim.Debugger(mod, "scale", 2, 64, params, gpu.mem)
    bp = dbg.add_breakpoint(source_line=13, block=(1, 0, 0))
    stop = dbg.cont()
    assert stop.breakpoint == bp and stop.block == (1, 0, 0) and stop.source_line == 13
    assert stop.lanes == 32                              # the odd threads of block 1
    w = dbg.warp(block=(1, 0, 0), warp=0)
    assert w.active.tolist() == [lane % 2 == 1 for lane in range(32)]
    # LLVM sinks the load into the odd branch: odd lanes hold x[i], even lanes never
    # wrote the register (masked writes leave it 0)
    ld = next(i for i in mod.code if i.op == "ld" and "global" in i.mods)
    name = mod.reg_names[ld.dsts[0][1]][1]
    lane = np.arange(32)
    np.testing.assert_array_equal(w.as_type(name, "f32"), np.where(lane % 2 == 1, x[64:96], 0))
    assert all(s == "running" for s in w.status)
    # block 0 has already finished: nothing of it is stored yet in block 1's view, but
    # global memory shows block 0's odd elements tripled
    got = np.frombuffer(dbg.read_memory(ax, 4 * 64), np.float32)
    np.testing.assert_array_equal(got, np.where(np.arange(64) % 2 == 1, x[:64] * 3, x[:64]))


def test_breakpoint_by_ptx_line_and_thread_then_step_and_step_back(gpu):
    mod, ax, x, params = _setup(gpu)
    mul = next(i for i in mod.code if i.op == "mul" and "f32" in i.types)
    dbg = sim.Debugger(mod, "scale", 2, 64, params, gpu.mem)
    dbg.add_breakpoint(ptx_line=mul.line, thread=(5, 0, 0))
    stop = dbg.cont()
    assert stop.ptx_line == mul.line and stop.block == (0, 0, 0)
    s0 = stop.step
    after = dbg.step()
    assert after.step == s0 + 1 and after.ptx_line > mul.line
    w = dbg.warp((0, 0, 0), 0)
    prod = w.as_type(mod.reg_names[mul.dsts[0][1]][1], "f32")
    assert prod[5] == x[5] * 3
    back = dbg.step_back()
    assert back.step == s0 and back.ptx_line == mul.line
    again = dbg.cont()                                   # block 1 also has thread 5
    assert again.block == (1, 0, 0) and again.ptx_line == mul.line


def test_run_to_end_matches_plain_run(gpu):
    mod, ax, x, params = _setup(gpu)
    dbg = sim.Debugger(mod, "scale", 2, 64, params, gpu.mem)
    dbg.add_breakpoint(source_line=12)
    dbg.cont()
    dbg.step(3)
    res = dbg.run_to_end()
    assert dbg.where() is None and not res.partial
    out = gpu.get(ax)
    want = np.where(np.arange(128) % 2 == 1, x * 3, x)
    np.testing.assert_array_equal(out, want)
    plain = sim.run(mod, "scale", 2, 64, params, gpu.mem)   # memory now holds the result
    assert plain.instructions == res.instructions
    lines = plain.metrics.source_line_counts("kern.py")
    # LLVM keeps only the store on line 13 (the load and multiply carry line 0)
    assert lines[13] == 64 and set(lines) == {10, 12, 13, 14}


def test_barrier_state_is_visible(gpu):
    ptx = compile_ir(REDUCE.replace("BARRIER", "call void @llvm.nvvm.barrier0()"))
    mod = sim.parse_module(ptx)
    ax = gpu.put(np.ones(256, np.float32))
    ao = gpu.put(np.zeros(1, np.float32))
    dbg = sim.Debugger(mod, "reduce", 1, 256, pack(mod, "reduce", [ax, ao]), gpu.mem)
    add = next(i for i in mod.code if i.op == "add" and "f32" in i.types)
    dbg.add_breakpoint(ptx_line=add.line)
    stop = dbg.cont()
    assert stop.lanes == 128                             # first round: threads 0..127
    w = dbg.warp((0, 0, 0), 7)                           # threads 224..255 wait at the barrier
    assert set(w.status) == {"at barrier"} and not w.active.any()
    assert np.frombuffer(dbg.read_shared(0, 0, 16), np.float32).tolist() == [1.0] * 4
    res = dbg.run_to_end()
    assert gpu.get(ao)[0] == 256 and res.findings == []


def test_bad_requests_are_simulator_errors(gpu):
    mod, ax, x, params = _setup(gpu)
    dbg = sim.Debugger(mod, "scale", 2, 64, params, gpu.mem)
    with pytest.raises(sim.SimulatorError, match="no instruction on source line 99"):
        dbg.add_breakpoint(source_line=99)
    with pytest.raises(sim.SimulatorError, match="not running now"):
        dbg.warp((1, 0, 0), 0)
    with pytest.raises(sim.SimulatorError, match="warps 0..1"):
        dbg.warp((0, 0, 0), 5)


def test_misuse_is_a_simulator_error_not_a_wrong_answer(gpu):
    """A negative step count went the other way, a negative byte count read the rest of
    the buffer, a block or thread outside the launch made a breakpoint that never fires,
    and a malformed index raised ValueError/TypeError: each is now a SimulatorError
    saying what is allowed, and the debugger's position is unchanged."""
    mod, ax, x, params = _setup(gpu)
    dbg = sim.Debugger(mod, "scale", 2, 64, params, gpu.mem)
    dbg.step(3)
    for call, match in [
            (lambda: dbg.step_back(-2), "step_back: n must be an int >= 0, got -2"),
            (lambda: dbg.step(-1), "step: n must be an int >= 0"),
            (lambda: dbg.step(1.5), "step: n must be an int >= 0"),
            (lambda: dbg.read_memory(ax, -8), "read_memory: nbytes must be an int >= 0"),
            (lambda: dbg.read_shared(0, 0, -5), "read_shared: nbytes must be an int >= 0"),
            (lambda: dbg.read_local(0, 0, 0, -1), "read_local: nbytes must be an int >= 0"),
            (lambda: dbg.add_breakpoint(source_line=13, block=(2, 0, 0)),
             r"block \(2, 0, 0\) is outside the grid \(2, 1, 1\)"),
            (lambda: dbg.add_breakpoint(source_line=13, thread=64),
             r"thread \(64, 0, 0\) is outside the block \(64, 1, 1\)"),
            (lambda: dbg.warp((0, 1), 0), r"block \(0, 1, 0\) is outside the grid"),
            (lambda: dbg.warp((0, 0, 0, 0), 0), "block must be an int or a tuple of 1-3 ints"),
            (lambda: dbg.warp("a", 0), "block must be an int or a tuple of 1-3 ints"),
            (lambda: dbg.warp(0, "1"), r"an int 0..1\), got '1'")]:
        with pytest.raises(sim.SimulatorError, match=match):
            call()
    assert dbg.where().step == 3 and dbg.breakpoints == []
    assert dbg.step_back(0).step == 3 and dbg.step(0).step == 3


def test_read_local_memory_of_a_thread(gpu):
    from sim_kernels import LOCALARR
    ptx = compile_ir(LOCALARR, 0)
    mod = sim.parse_module(ptx)
    out = gpu.put(np.zeros(64, np.int32))
    dbg = sim.Debugger(mod, "localarr", 2, 32, pack(mod, "localarr", [out]), gpu.mem)
    ld = next(i for i in mod.code if i.op == "ld" and i.line > 0 and "volatile" in i.mods)
    dbg.add_breakpoint(ptx_line=ld.line, block=1)
    assert dbg.cont().block == (1, 0, 0)
    # thread 3 of block 1 is global index 35: its array holds k * 35 for k = 0..7
    data = np.frombuffer(dbg.read_local((1, 0, 0), (3, 0, 0), 0, 32), np.int32)
    assert data.tolist() == [k * 35 for k in range(8)]
    with pytest.raises(sim.SimulatorError, match="outside 32 bytes"):
        dbg.read_local(1, 3, 16, 32)


def test_continue_skips_blocks_a_breakpoint_cannot_fire_in(gpu):
    """With a block-restricted breakpoint, earlier blocks run at full speed; the step count
    still counts their instructions, and step back replays to the same place."""
    n = 64 * 40
    x = np.arange(n, dtype=np.float32)
    ax = gpu.put(x)
    mod = sim.parse_module(compile_ir(KERNEL))
    dbg = sim.Debugger(mod, "scale", 40, 64, pack(mod, "scale", [ax, 3]), gpu.mem)
    dbg.add_breakpoint(source_line=13, block=(37, 0, 0))
    stop = dbg.cont()
    assert stop.block == (37, 0, 0) and stop.source_line == 13
    plain = sim.run(mod, "scale", 37, 64, pack(mod, "scale", [gpu.put(x), 3]), gpu.mem)
    assert stop.step > plain.warp_instructions // 8   # 37 blocks' worth of steps
    got = np.frombuffer(dbg.read_memory(ax, 4 * 64 * 37), np.float32)
    i = np.arange(64 * 37)
    np.testing.assert_array_equal(got, np.where(i % 2 == 1, x[:64 * 37] * 3, x[:64 * 37]))
    back = dbg.step_back(0)
    assert back.step == stop.step and back.ptx_line == stop.ptx_line
    assert dbg.run_to_end().findings == []


def test_as_type_names_the_unknown_register_or_type():
    """An unknown register or PTX type is a SimulatorError that says which and lists the
    known ones (was a bare KeyError)."""
    from warp_lab.errors import SimulatorError
    from warp_lab.sim.debugger import WarpState
    raw = {"%r1": np.arange(32, dtype=np.uint32) + np.uint32(0x3F800000)}
    w = WarpState((0, 0, 0), 0, {}, raw, {}, np.ones(32, bool), np.zeros(32, np.int32),
                  np.zeros(32, np.int32), ["running"] * 32)
    assert w.as_type("%r1", "f32")[0] == 1.0     # 0x3f800000 is 1.0f
    with pytest.raises(SimulatorError, match=r"no register '%nope' \(registers: %r1\)"):
        w.as_type("%nope", "f32")
    with pytest.raises(SimulatorError, match=r"unknown PTX type 'f99'; use one of .*f32"):
        w.as_type("%r1", "f99")


def test_stop_reads_as_the_messages_do():
    """A notebook shows a Stop's repr: the cell as In[3] (as findings name it), the
    threads of the block that run the instruction, and the breakpoint."""
    from warp_lab.sim.debugger import Breakpoint, Stop

    s = Stop(12, 41, "st.global.b32 \t[%rd1], %r1;", "<cell 3>", 5, (1, 0, 0), 256,
             Breakpoint(1, source_line=5))
    assert repr(s) == ("<Stop before PTX line 41, In[3] line 5: 'st.global.b32 [%rd1], %r1;', "
                       "256 threads of block (1, 0, 0), after 12 steps, at breakpoint 1>")
