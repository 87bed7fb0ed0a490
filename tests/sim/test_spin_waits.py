"""Waiting for another thread: ``wl.atomic_load``/``wl.atomic_store`` (strong accesses the
compiler keeps in the loop) and the simulator's ``infinite_loop`` finding for a loop that
can only repeat itself (a plain load moved out of a spin-wait, a counter never advanced).

A closed loop (registers only) whose lanes come back to its head with every register it
writes unchanged runs the same iterations forever; the finding replaces a launch that
would otherwise run until Ctrl-C.
"""

import re

import numpy as np

import warp_lab as wl
from warp_lab.examples import source_line

SAFETY = 10 ** 7    # a budget, so that a broken detection fails instead of hanging


@wl.kernel
def handoff(flag: wl.array(dtype=wl.int32), data: wl.array(dtype=wl.float32),
            out: wl.array(dtype=wl.float32)):
    t = wl.thread_idx.x
    if t == 32:
        data[0] = 42.0
        wl.threadfence()
        wl.atomic_store(flag, 0, 1)
    if t == 0:
        while wl.atomic_load(flag, 0) == 0:
            pass
        wl.threadfence()
        out[0] = data[0]


@wl.kernel
def plain_spin(flag: wl.array(dtype=wl.int32), data: wl.array(dtype=wl.float32),
               out: wl.array(dtype=wl.float32)):
    t = wl.thread_idx.x
    if t == 32:
        data[0] = 42.0
        wl.threadfence()
        flag[0] = 1
    if t == 0:
        while flag[0] == 0:     # marker: plain spin
            pass
        out[0] = data[0]


def _three():
    return [np.zeros(1, np.int32), np.zeros(1, np.float32), np.zeros(1, np.float32)]


def test_atomic_load_and_store_are_strong_accesses_on_every_arch():
    for arch, ld, st in (("sm_60", "ld.volatile.global", "st.volatile.global"),
                         ("sm_70", "ld.relaxed.gpu.global", "st.relaxed.gpu.global"),
                         ("sm_90", "ld.relaxed.gpu.global", "st.relaxed.gpu.global")):
        ck = wl.compile(handoff, arch=arch, cache=False, sass=False)
        assert re.search(rf"{re.escape(ld)}\.b32", ck.ptx) and re.search(
            rf"{re.escape(st)}\.b32", ck.ptx), arch
        assert ck.written_params == ("flag", "data", "out")
    # an array only read with atomic_load is not written, and not read through the
    # read-only cache either (its loads are the strong ones above)
    ck = wl.compile(_reader, cache=False, sass=False)
    assert ck.written_params == ("out",) and "ld.global.nc" not in ck.ptx


@wl.kernel
def _reader(flag: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.int32)):
    out[0] = wl.atomic_load(flag, 0)


def test_a_spin_wait_on_atomic_load_ends_when_another_warp_sets_the_flag():
    flag, data, out = _three()
    r = wl.launch(handoff, dim=64, block_dim=64, inputs=[flag, data, out], device="sim",
                  max_instructions=SAFETY)
    assert not r.findings and not r.partial
    assert out[0] == 42.0 and flag[0] == 1


def test_a_spin_wait_on_a_plain_load_is_an_infinite_loop_at_the_users_line():
    # LLVM moves flag[0] out of the loop (nothing in the loop writes it), so thread 0
    # spins on a register: on a GPU the kernel never ends
    flag, data, out = _three()
    r = wl.launch(plain_spin, dim=64, block_dim=64, inputs=[flag, data, out], device="sim",
                  max_instructions=SAFETY)
    assert [f.kind for f in r.findings] == ["infinite_loop"], [str(f) for f in r.findings]
    f = r.findings[0]
    assert f.source_line == source_line(plain_spin, "# marker: plain spin")
    assert f.thread == (0, 0, 0) and "wl.atomic_load" in f.message
    assert r.partial and r.sim.instructions < 10 ** 6    # found early, not by the budget
    # the finding names the load LLVM moved before the loop: flag[0], a global load
    ptx = wl.compile(plain_spin).ptx.splitlines()
    assert [ptx[k - 1].split()[0] for k in f.details["hoisted_loads"]] == ["ld.global.b32"]
    assert f"loaded once before it (PTX line {f.details['hoisted_loads'][0]}" in f.message


@wl.kernel
def forgot_increment(n: int, out: wl.array(dtype=wl.int32)):
    i = wl.tid()
    j = 0
    s = 0
    while j < n:    # marker: never advanced
        s = i * 2
    out[i] = s + j


@wl.kernel
def long_but_finite(n: int, out: wl.array(dtype=wl.int32), fx: wl.array(dtype=wl.float32)):
    i = wl.tid()
    s = 0
    for k in range(n):
        s = (s * 31 + k) & 0xFFFF          # revisits values, but k moves on
    x = wl.float32(i)
    while x != 1.0:                        # converges to exactly 1.0, then ends
        x = x * 0.5 + 0.5
    out[i] = s
    fx[i] = x


def _mix16(n: int) -> int:
    """``long_but_finite``'s ``s`` after ``n`` turns, in plain Python."""
    s = 0
    for k in range(n):
        s = (s * 31 + k) & 0xFFFF
    return s


@wl.kernel
def forgot_increment_from_memory(start: wl.array(dtype=wl.int32), n: int,
                                 out: wl.array(dtype=wl.int32)):
    i = wl.tid()
    j = start[0]
    s = 0
    while j < n:    # marker: from memory
        s = i * 2
    out[i] = s + j


def test_spin_wait_advice_only_when_a_load_before_the_loop_decides_it():
    """A forgotten ``j += 1`` whose loop depends on registers and parameters alone gets only
    the loop-variable cause (at opt=3 and at opt=0, where ``j`` lives in the thread's own
    local memory); when the condition's value was loaded from memory before the loop, the
    finding gives both causes as alternatives, naming that load."""
    for opt in (3, 0):
        out = np.zeros(40, np.int32)
        r = wl.launch(forgot_increment, dim=40, inputs=[5, out], device="sim", opt=opt,
                      max_instructions=SAFETY)
        (f,) = r.findings
        assert f.kind == "infinite_loop" and f.details["hoisted_loads"] == [], str(f)
        assert "a loop variable never advanced, such as a forgotten k += 1?" in f.message
        assert "atomic_load" not in f.message and "flag" not in f.message, f.message
    out = np.zeros(40, np.int32)
    r = wl.launch(forgot_increment_from_memory, dim=40, inputs=[np.zeros(1, np.int32), 5, out],
                  device="sim", max_instructions=SAFETY)
    (f,) = r.findings
    assert f.source_line == source_line(forgot_increment_from_memory, "# marker: from memory")
    ptx = wl.compile(forgot_increment_from_memory).ptx.splitlines()
    assert [ptx[k - 1].split()[0] for k in f.details["hoisted_loads"]] == ["ld.global.nc.b32"]
    assert "either a loop variable never advances, or the loop waits" in f.message, f.message


def test_only_loops_that_repeat_a_state_are_reported():
    out = np.zeros(40, np.int32)
    r = wl.launch(forgot_increment, dim=40, inputs=[5, out], device="sim",
                  max_instructions=SAFETY)
    assert [f.kind for f in r.findings] == ["infinite_loop"]
    assert r.findings[0].source_line == source_line(forgot_increment, "# marker: never")
    n = 3 * 4096 + 5                       # several looks at the registers
    out, fx = np.zeros(40, np.int32), np.zeros(40, np.float32)
    r = wl.launch(long_but_finite, dim=40, inputs=[n, out, fx], device="sim",
                  max_instructions=SAFETY)
    assert not r.findings and not r.partial
    assert (out == _mix16(n)).all() and (fx == 1.0).all()


@wl.kernel
def shared_flag(out: wl.array(dtype=wl.int32)):
    flag = wl.shared_array(1, wl.int32)
    t = wl.thread_idx.x
    if t == 0:
        wl.atomic_store(flag, 0, 0)
    wl.syncthreads()
    if t == 40:
        wl.atomic_store(flag, 0, 7)
    if t == 0:
        while wl.atomic_load(flag, 0) == 0:
            pass
        out[0] = wl.atomic_load(flag, 0)


def test_strong_accesses_to_a_shared_flag_are_not_races():
    # PTX: two strong accesses to one location are morally strong, not a data race
    out = np.zeros(1, np.int32)
    r = wl.launch(shared_flag, dim=64, block_dim=64, inputs=[out], device="sim",
                  checks=("memcheck", "racecheck", "initcheck", "barrier"),
                  max_instructions=SAFETY)
    assert not r.findings and out[0] == 7


def test_a_hang_in_full_warps_is_found_too():
    # every thread of full blocks in the loop: the simulator runs them in its uniform
    # mode (one pc for the batch), where the per-thread pcs are not kept up to date;
    # the look at the loop head must not read them (it did: the budget ran out instead)
    out = np.zeros(64, np.int32)
    r = wl.launch(forgot_increment, dim=64, block_dim=32, inputs=[5, out], device="sim",
                  max_instructions=SAFETY)
    assert [f.kind for f in r.findings] == ["infinite_loop"], [str(f) for f in r.findings]
    assert r.findings[0].source_line == source_line(forgot_increment, "# marker: never")
    assert r.sim.instructions < 10 ** 6


def test_a_hang_at_opt_0_is_found_too(monkeypatch):
    # at opt=0 LLVM keeps every variable in the thread's stack (generic ld/st through
    # cvta.local of __local_depot): memory no other thread can reach, so the loop is
    # still closed; it ran until the budget. (Fewer turns between looks: ~8 PTX
    # instructions a turn at opt=0 make 2 x 4096 turns slow to simulate.)
    from warp_lab.sim import progress
    monkeypatch.setattr(progress, "LOOP_CHECK", 256)
    out = np.zeros(40, np.int32)
    r = wl.launch(forgot_increment, dim=40, inputs=[5, out], device="sim", opt=0,
                  max_instructions=SAFETY)
    assert [f.kind for f in r.findings] == ["infinite_loop"], [str(f) for f in r.findings]
    assert r.findings[0].source_line == source_line(forgot_increment, "# marker: never")
    assert r.sim.instructions < 10 ** 6
    n = 3 * 256 + 5                        # a finite loop at opt=0 is left alone
    out, fx = np.zeros(40, np.int32), np.zeros(40, np.float32)
    r = wl.launch(long_but_finite, dim=40, inputs=[n, out, fx], device="sim", opt=0,
                  max_instructions=SAFETY)
    assert not r.findings and not r.partial
    assert (out == _mix16(n)).all() and (fx == 1.0).all()


@wl.func
def _count_to(n: int) -> int:
    j = 0
    x = 0
    while j < n:
        j += 1
        x = x * 0
    return x


@wl.kernel
def count_twice(out: wl.array(dtype=wl.int32), n: int):
    i = wl.tid()
    a = _count_to(n)
    b = _count_to(n)
    out[i] = a + b + 1


def test_a_loop_entered_again_by_a_second_call_is_not_an_infinite_loop(monkeypatch):
    # at opt=0 _count_to is a .func called twice; with n turns a call, the look at the
    # end of the first call and the one at the end of the second saw the same lanes,
    # registers and stack (a == 0 before and after the first call): a false finding
    from warp_lab.sim import progress
    monkeypatch.setattr(progress, "LOOP_CHECK", 256)
    out = np.zeros(32, np.int32)
    r = wl.launch(count_twice, dim=32, inputs=[out, 256], device="sim", opt=0,
                  max_instructions=SAFETY)
    assert not r.findings, [str(f) for f in r.findings]
    assert (out == 1).all()


@wl.kernel
def cycling(out: wl.array(dtype=wl.int32), start: int):
    i = wl.tid()
    a = start + i % 2 * 2
    while a != 3:              # marker: cycles
        a = (a + 2) % 10       # 0, 2, 4, 6, 8, 0, ...: never 3
    out[i] = a


def test_a_loop_whose_state_cycles_is_an_infinite_loop(monkeypatch):
    """A closed loop whose registers cycle with a period that is no divisor of the
    turns between two looks (here 5 turns) never shows the same state at consecutive
    looks; it must still be found (Brent's cycle detection over the looks), not run
    until the budget or Ctrl-C. (Fewer turns between looks, to keep the test short.)"""
    from warp_lab.sim import progress
    monkeypatch.setattr(progress, "LOOP_CHECK", 256)
    out = np.zeros(32, np.int32)
    r = wl.launch(cycling, dim=32, inputs=[out, 0], device="sim", max_instructions=SAFETY)
    assert [f.kind for f in r.findings] == ["infinite_loop"], [str(f) for f in r.findings]
    (f,) = r.findings
    assert f.source_line == source_line(cycling, "# marker: cycles")
    assert "in the state they had 1280 iterations earlier" in f.message, f.message
    assert "go round values that never end it" in f.message, f.message
    assert "forgotten" not in f.message, f.message
    assert r.sim.instructions < 32 * 15 * 256 * 12   # lanes x looks x turns x instructions
    assert (out == 0).all()    # stopped: nothing stored
