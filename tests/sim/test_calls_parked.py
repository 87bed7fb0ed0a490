"""Device-function calls while the forward-progress scheduler has parked warps (status
YIELD): each thread's return address is its own (a parked warp neither gets the
caller's address nor loses its own when the other warps return), and an engine
program counter that leaves the code is an internal error, never a silent hang."""

import signal
import struct

import numpy as np
import pytest

from sim_helpers import compile_ir
from warp_lab import sim
from warp_lab.errors import SimulatorError
from warp_lab.sim.machine import Machine

# tri(z, n) = sum(j for j < n) + n * z[0]: a loop that reads global memory, so its warps
# yield to others after SPIN_QUANTUM divergent iterations; called twice from two sites
# (the second with n & 7), and the second function returns from two sites.
IR = """
define internal i32 @tri(ptr addrspace(1) %z, i32 %n) noinline {
entry:
  br label %head
head:
  %j = phi i32 [0, %entry], [%j1, %body]
  %s = phi i32 [0, %entry], [%s2, %body]
  %c = icmp slt i32 %j, %n
  br i1 %c, label %body, label %done
body:
  %v = load volatile i32, ptr addrspace(1) %z
  %s1 = add i32 %s, %j
  %s2 = add i32 %s1, %v
  %j1 = add i32 %j, 1
  br label %head
done:
  ret i32 %s
}

define internal i32 @not3(i32 %v) noinline {
entry:
  %r = srem i32 %v, 3
  %c = icmp eq i32 %r, 0
  br i1 %c, label %zero, label %one
zero:
  ret i32 0
one:
  ret i32 1
}

define ptx_kernel void @k(ptr addrspace(1) %trips, ptr addrspace(1) %out, ptr addrspace(1) %z) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %pt = getelementptr i32, ptr addrspace(1) %trips, i32 %t
  %n = load i32, ptr addrspace(1) %pt
  %a = call i32 @tri(ptr addrspace(1) %z, i32 %n)
  %m = and i32 %n, 7
  %b = call i32 @tri(ptr addrspace(1) %z, i32 %m)
  %c = call i32 @not3(i32 %t)
  %ab = add i32 %a, %b
  %r = add i32 %ab, %c
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %r, ptr addrspace(1) %po
  ret void
}
"""


@pytest.fixture(scope="module")
def mod():
    m = sim.parse_module(compile_ir(IR, opt=0))
    assert sum(c.op == "call" for c in m.code) == 3   # real calls, not inlined
    return m


def _tri(n):
    return n * (n - 1) // 2


def _patterns():
    base = np.where(np.arange(96) < 32, 3, 300)
    one_early = base.copy()
    one_early[33] = 5                       # warp 1 diverges inside the loop
    first_slow = np.where(np.arange(96) < 32, 1, 200)
    first_slow[0] = 100                     # warp 0 diverges, warps 1-2 run long
    stairs = (np.arange(96) * 7) % 260      # every warp divergent
    return [one_early, first_slow, stairs]


@pytest.mark.parametrize("trips", _patterns(), ids=["one_early", "first_slow", "stairs"])
@pytest.mark.parametrize("block", [64, 96])
def test_calls_with_parked_warps_return_to_their_own_site(gpu, mod, trips, block):
    trips = trips[:block].astype(np.int32)
    t, o, z = gpu.put(trips), gpu.put(np.zeros(block, np.int32)), gpu.put(np.zeros(1, np.int32))
    old = signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt))
    signal.setitimer(signal.ITIMER_REAL, 5.0)   # a hang becomes an 'interrupted' finding
    try:
        res = sim.run(mod, "k", 1, block, struct.pack("<QQQ", t, o, z), gpu.mem,
                      max_instructions=5_000_000)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert res.findings == [] and not res.partial
    want = _tri(trips) + _tri(trips & 7) + (np.arange(block) % 3 != 0)
    np.testing.assert_array_equal(gpu.get(o), want)


@pytest.mark.parametrize("bad", [-1, 10_000])
def test_a_pc_outside_the_code_is_an_internal_error_not_a_hang(gpu, mod, bad):
    t, o, z = (gpu.put(np.zeros(64, np.int32)), gpu.put(np.zeros(64, np.int32)),
               gpu.put(np.zeros(1, np.int32)))
    m = Machine(mod, "k", 1, 64, struct.pack("<QQQ", t, o, z), gpu.mem)
    m.start_batch()
    m.run_batch(limit=6)   # a few instructions run first
    m.diverge()
    m.pc[40:] = bad        # an engine bug: some lanes lost their program counter
    old = signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt))
    signal.setitimer(signal.ITIMER_REAL, 5.0)
    try:
        with pytest.raises(SimulatorError, match=r"internal simulator error: a program "
                           rf"counter left the code \(pc {bad}, .*PTX line \d+") as info:
            m.run_batch()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert info.value.ptx_line > 0
