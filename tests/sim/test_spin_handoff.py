"""Warps waiting for each other through memory: a ping-pong through a shared or global
flag, a spin lock every thread takes, a producer/consumer mailbox between blocks and the
last-block-done sum give numpy's answer, and a waiting warp hands the turn on after a
turn that changed nothing (``ForwardProgress.back_edge``'s ``idle``) instead of after
``SPIN_QUANTUM`` turns, so a hand-over costs a few turns, not 64 to 128.

The kernels are ``benchmarks/spin_handoff.py``'s, which times them.
"""

import pytest

from benchmarks.spin_handoff import CASES, run_case
from warp_lab import sim
from warp_lab.sim.control import poll_turns_repeat

from test_forward_progress import PINGPONG, SPIN, _loop

SAFETY = 50_000_000     # a budget, so that a scheduling bug fails instead of hanging


@pytest.mark.parametrize("name", list(CASES))
def test_spin_waits_between_warps_give_numpys_answer(name):
    _, res, ok = run_case(name, 40, max_instructions=SAFETY)
    assert ok and not res.findings and not res.sim.partial, res.findings


@pytest.mark.parametrize("name,per_round", [
    ("ping-pong, shared flag", 60), ("ping-pong, global flag (CAS)", 60),
    ("producer/consumer mailbox", 60),
    # 128 threads in 4 warps, each waiting for the lock holder of its own warp too
    ("spin lock counter", 600)])
def test_a_hand_over_costs_a_few_turns_of_the_waiting_warp(name, per_round):
    # before the idle hand-over each round cost some 400 thread-instructions (the waiting
    # warp spun SPIN_QUANTUM = 64 turns of 3 instructions before yielding, twice a round),
    # and each thread of the spin lock about 8,800
    n = 128
    _, res, ok = run_case(name, n, max_instructions=SAFETY)
    assert ok and not res.findings
    assert res.sim.instructions < per_round * n, res.sim.instructions / n


def _back_edges(mod):
    return [c for c in mod.code if c.op == "bra" and c.target <= c.pc]


def test_only_a_poll_whose_turns_repeat_hands_the_turn_on_early():
    # the spin of SPIN: atom.or, setp, bra; nothing carried from a turn to the next
    assert [poll_turns_repeat(c, SPIN) for c in _back_edges(SPIN)] == [True]
    # PINGPONG's polls repeat; its outer loops store and count (%r5 carried)
    assert [poll_turns_repeat(c, PINGPONG) for c in _back_edges(PINGPONG)] == [
        True, False, True, False]
    # a loop that reads memory and counts its turns in a register is making progress
    mod = _loop(100, 3, poll=True)
    assert [poll_turns_repeat(c, mod) for c in _back_edges(mod)] == [False]


HEAD = """
.version 8.0
.target sm_90
.address_size 64
"""

#: polls that carry state in ways the look must see: a register written under a guard
#: only (%r5 keeps its old value where %p1 fails), a branch into the middle of the loop
#: (a turn need not start at its head), a store to memory
NOT_POLLS = {
    "guarded write": """
SPIN:
  @%p1 ld.global.u32 %r5, [%rd1];
  setp.eq.u32 %p2, %r5, 0;
  @%p2 bra SPIN;""",
    "branch into the loop": """
  @%p1 bra MID;
SPIN:
  ld.global.u32 %r5, [%rd1];
MID:
  setp.eq.u32 %p2, %r5, 0;
  @%p2 bra SPIN;""",
    "store": """
SPIN:
  ld.global.u32 %r5, [%rd1];
  st.global.u32 [%rd1+4], %r5;
  setp.eq.u32 %p2, %r5, 0;
  @%p2 bra SPIN;""",
}


@pytest.mark.parametrize("case", list(NOT_POLLS))
def test_loops_that_may_carry_state_are_not_polls(case):
    mod = sim.parse_module(HEAD + """
.visible .entry k(.param .u64 a)
{
  .reg .b32 %r<8>; .reg .b64 %rd<2>; .reg .pred %p<4>;
  ld.param.u64 %rd1, [a];
  mov.u32 %r3, %tid.x;
  setp.eq.u32 %p1, %r3, 0;
""" + NOT_POLLS[case] + """
  ret;
}
""")
    assert [poll_turns_repeat(c, mod) for c in _back_edges(mod)] == [False]


def test_the_idle_hand_over_keeps_results_with_every_check_on():
    # racecheck orders the shared flag's strong accesses; initcheck sees the flag written
    n = 64
    _, res, ok = run_case("ping-pong, shared flag", n, max_instructions=SAFETY,
                          checks=("memcheck", "racecheck", "initcheck", "barrier"))
    assert ok and not res.findings
