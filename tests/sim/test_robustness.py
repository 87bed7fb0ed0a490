"""Bad input never produces an engine traceback or a hang: mutated PTX, interrupts,
unsupported features, runaway launches."""

import signal
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warp_lab import sim
from warp_lab.errors import LaunchInterrupted, SimulatorError

from sim_helpers import Launcher, compile_ir, pack
from sim_kernels import DIVERGE, REDUCE

BASE = compile_ir(DIVERGE)
BASE_LINES = BASE.split("\n")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(BASE_LINES) - 1),
                          st.sampled_from(["drop", "dup", "swap_ops", "garble", "truncate"])),
                min_size=1, max_size=3))
def test_mutated_ptx_runs_or_raises_simulator_error(edits):
    lines = list(BASE_LINES)
    for k, how in edits:
        k %= len(lines)
        if how == "drop":
            del lines[k]
        elif how == "dup":
            lines.insert(k, lines[k])
        elif how == "swap_ops":
            parts = lines[k].rsplit(",", 2)
            if len(parts) == 3:
                lines[k] = ",".join([parts[0], parts[2].rstrip(";"), parts[1]]) + ";"
        elif how == "garble":
            lines[k] = lines[k].replace("%r", "%q").replace(".s32", ".x17")
        else:
            lines[k] = lines[k][: len(lines[k]) // 2]
    text = "\n".join(lines)
    g = Launcher()
    bufs = [g.put(np.arange(64, dtype=np.int32)) for _ in range(3)]
    try:
        mod = sim.parse_module(text)
        params = struct.pack("<3Q", *bufs)
        res = sim.run(mod, "diverge", 1, 64, params, g.mem, max_instructions=200_000)
    except SimulatorError:
        return
    assert isinstance(res, sim.SimResult)


def test_keyboard_interrupt_stops_cleanly():
    ptx = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry spin(.param .u64 p)
{
  .reg .b32 %r<3>;
  mov.u32 %r1, 0;
LOOP:
  add.u32 %r1, %r1, 1;
  bra LOOP;
}
"""
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        with pytest.raises(LaunchInterrupted) as info:
            sim.run(sim.parse_module(ptx), "spin", 4, 256, bytes(8), sim.GlobalMemory())
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    res = info.value.result
    assert res.partial and res.findings[-1].kind == "interrupted"
    assert res.instructions > 0


def test_module_globals_are_freed_after_the_launch():
    ptx = """
.version 8.0
.target sm_90
.address_size 64
.global .align 4 .b32 table[4] = {10, 20, 30, 40};
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  mov.u64 %rd3, table;
  add.s64 %rd4, %rd3, %rd2;
  ld.global.u32 %r2, [%rd4];
  add.s64 %rd5, %rd1, %rd2;
  st.global.u32 [%rd5], %r2;
  ret;
}
"""
    g = Launcher()
    out = g.put(np.zeros(4, np.int32))
    res = sim.run(sim.parse_module(ptx), "k", 1, 4, struct.pack("<Q", out), g.mem)
    assert res.findings == []
    assert g.get(out).tolist() == [10, 20, 30, 40]
    assert len(g.mem.allocations()) == 1


def test_recursion_and_packed_halves_are_reported():
    rec = """
.version 8.0
.target sm_90
.address_size 64
.func f()
{
  call.uni f, ();
  ret;
}
.visible .entry k()
{
  call.uni f, ();
  ret;
}
"""
    with pytest.raises(SimulatorError, match="recursive call of f"):
        sim.run(sim.parse_module(rec), "k", 1, 32, b"", sim.GlobalMemory())
    half = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{
  .reg .b32 %r<3>;
  ex2.approx.f16x2 %r1, %r2;
  ret;
}
"""
    # (add/sub/mul/fma/min/max/neg/abs/setp/set/cvt on .f16x2 run: sim/packed_half.py)
    with pytest.raises(SimulatorError, match=r"PTX line 8: ex2 on .f16x2"):
        sim.run(sim.parse_module(half), "k", 1, 32, b"", sim.GlobalMemory())


def test_large_launch_stays_in_bounded_memory():
    """2**18 threads of a barrier kernel in batches of 2**13: peak extra memory is the
    batch's registers and shared memory (a few MB), not the grid's (the per-thread state of
    2**18 threads alone would be ~40 MB)."""
    import tracemalloc
    ptx = compile_ir(REDUCE.replace("BARRIER", "call void @llvm.nvvm.barrier0()"))
    mod = sim.parse_module(ptx)
    g = Launcher()
    n = 1 << 18
    x = g.put(np.ones(n, np.float32))
    o = g.put(np.zeros(n // 256, np.float32))
    tracemalloc.start()
    res = sim.run(mod, "reduce", n // 256, 256, pack(mod, "reduce", [x, o]), g.mem,
                  metrics=False, batch_threads=1 << 13)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert (g.get(o) == 256).all() and res.findings == []
    assert peak < 12 * (1 << 20), peak


def test_bad_run_arguments_are_simulator_errors():
    mod = sim.parse_module(BASE)
    mem = sim.GlobalMemory()
    cases = [
        (dict(kernel=["diverge"]), "entry's name"),
        (dict(params="abc"), "parameter buffer as bytes"),
        (dict(dynamic_shared=-1), "dynamic_shared"),
        (dict(max_instructions=-5), "max_instructions"),
        (dict(checks=("memcheck", "speling")), "unknown checks"),
        (dict(grid=(0,)), "positive extents"),
        (dict(block=(32, 32, 2)), "2048 threads"),
    ]
    for kw, msg in cases:
        args = dict(kernel="diverge", grid=1, block=32, params=bytes(24), memory=mem)
        args.update(kw)
        with pytest.raises(SimulatorError, match=msg):
            sim.run(mod, args.pop("kernel"), **args)
    with pytest.raises(SimulatorError, match="GlobalMemory"):
        sim.run(mod, "diverge", 1, 32, bytes(24), memory={})


def test_a_negative_host_read_is_an_error_not_the_rest_of_the_allocation():
    """``GlobalMemory.read(addr, -8)`` sliced ``buf[off:off - 8]``: every byte of the
    allocation but the last eight (or nothing), instead of an error."""
    mem = sim.GlobalMemory()
    addr = mem.alloc(64, name="x")
    with pytest.raises(sim.SimulatorError, match="-8 bytes at .*must be >= 0"):
        mem.read(addr, -8)
    assert mem.read(addr, 0) == b""
