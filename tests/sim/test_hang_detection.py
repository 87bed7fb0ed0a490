"""Endless loops found within seconds, finite ones of the same shapes left to end.

Each case runs in a subprocess under a timeout (``hang_cases.py``): a detection that
regresses fails the test (timeout) instead of hanging the run. The finite cases check their
results against numpy.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from warp_lab.examples import source_line

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import hang_cases  # noqa: E402  (the kernels, for their source lines)

TIMEOUT = 120   # seconds; each case takes under ~5 s on one core


def _run(name: str) -> dict:
    env = dict(os.environ)
    root = str(HERE.parent.parent)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    try:
        done = subprocess.run([sys.executable, str(HERE / "hang_cases.py"), name],
                              capture_output=True, text=True, timeout=TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{name}: still running after {TIMEOUT} s (the loop was not stopped)")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


ENDLESS = {
    # case: (kernel, marker on the loop's line, words the finding must hold)
    "sync_forever": ("sync_forever", "# marker: sync forever", []),
    "shuffle_no_halving": ("shuffle_no_halving", "# marker: shuffle",
                           ["8 wait at a barrier or warp-sync", "24 ran nothing since"]),
    "reduce_no_halving": ("reduce_no_halving", "# marker: reduce",
                          ["32 run elsewhere in the loop"]),
    "vote_on_unset_flag": ("vote_on_unset_flag", "# marker: vote", ["no thread is left"]),
    "any_on_unset_flag": ("any_on_unset_flag", "# marker: any", ["no thread is left"]),
    "clock_loop_that_never_ends": ("clock_loop_that_never_ends", "# marker: clock forever",
                                   ["2**62 cycles"]),
    # two warps in two different spin-waits, each waiting for the other to go first
    "two_waits_forever": ("two_waits_forever", "# marker: second wait",
                          ["the loops at PTX line", "no thread is left"]),
    # a cycle of registers in an inner loop whose outer loop reads and writes memory
    "nested_cycle_forever": ("nested_cycle", "# marker: nested cycle",
                             ["in the state they had"]),
    # a spin-wait with a clock in its loop (`or` for `and`): the flag alone keeps it going
    "poll_or_timeout": ("poll_or_timeout", "# marker: or timeout", ["no thread is left"]),
    # a timeout of 2**63 - 1 cycles: the clock goes to 2**62, and the wait goes on
    "spin_with_timeout_forever": ("spin_with_timeout", "# marker: timeout",
                                  ["2**62 cycles", "its timeout never ends it"]),
    # two lanes of one warp waiting for each other (was: no finding after 400 s; the
    # lanes past the divergence point never ran, so the batch never looked stuck)
    "lanes_wait_for_each_other": ("lanes_wait_for_each_other", "# marker: lane 0 waits",
                                  ["every live thread of the launch (2)"]),
    "lanes_wait_for_each_other_2": ("lanes_wait_for_each_other", "# marker: lane 0 waits",
                                    ["every live thread of the launch (2)"]),
    # thread 0 and thread 32 poll flags nobody sets (was: only max_instructions ended it)
    "two_warps_poll_unset_flags": ("two_warps_poll_unset_flags", "# marker: thread 32 polls",
                                   ["every live thread of the launch (2)"]),
}

#: the cases above found within a second of simulation (the launch less its compile)
FAST = ("lanes_wait_for_each_other", "lanes_wait_for_each_other_2",
        "two_warps_poll_unset_flags")


@pytest.mark.parametrize("case", list(ENDLESS))
def test_an_endless_loop_stops_with_an_infinite_loop_finding_at_its_line(case):
    kernel, marker, words = ENDLESS[case]
    r = _run(case)
    loops = [f for f in r["findings"] if f["kind"] == "infinite_loop"]
    assert loops, r["findings"]
    assert loops[0]["source_line"] == source_line(getattr(hang_cases, kernel), marker)
    for w in words:
        assert w in loops[0]["message"], loops[0]["message"]
    assert r["partial"] and r["seconds"] < 30
    if case in FAST:
        assert r["sim_seconds"] < 1.0


@pytest.mark.parametrize("case", ["lanes_set_in_turn", "lane_waits_for_its_warp"])
def test_lanes_of_one_warp_that_wait_for_each_other_in_turn_end(case):
    r = _run(case)
    assert not r["findings"] and not r["partial"]
    want = {"lanes_set_in_turn": [1, 1, 7], "lane_waits_for_its_warp": [1, 9, 0]}[case]
    assert r["x"][:3] == want


def test_finite_loops_of_the_same_shapes_end_with_no_finding():
    x = np.arange(128, dtype=np.int32) % 7
    r = _run("reduce_halving")       # a tree reduction whose lanes split at t < k
    assert not r["findings"] and not r["partial"]
    assert r["x"][:64] == [int(x[:64].sum())] * 64
    r = _run("long_shuffle_loop")    # 5001 shuffles: many looks, the state always new
    assert not r["findings"] and not r["partial"]
    assert r["x"][:64] == (x[:64][np.arange(64) ^ 1] + 5001).tolist()
    r = _run("vote_on_flag_set_later")   # warp 1 sets the flag after 3000 atomics
    assert not r["findings"] and not r["partial"]
    assert r["x"][:3] == [1, 7, 32 * 3000]


def test_a_ping_pong_and_a_nested_loop_that_end_give_their_results():
    r = _run("two_waits_in_turn")    # the waits of two_waits_forever, warp 0 first
    assert not r["findings"] and not r["partial"]
    assert r["x"][:41] == [0] + [k + 10 for k in range(40)]
    r = _run("nested_cycle")         # odd values meet 3
    x = 0
    for j in range(3):
        v = x * 2 + 1
        while v != 3:
            v = (v + 2) % 10
        x += v + j
    assert not r["findings"] and not r["partial"] and r["x"][:64] == [x] * 64


def test_a_spin_wait_with_a_timeout_of_10_to_the_12_cycles_ends_with_the_clock_advanced():
    # thread 0 polls a flag no thread sets until 10**12 cycles have passed (nothing
    # else runs: the clock jumps), then one warp 1 set long before
    r = _run("spin_with_timeout")
    assert not r["findings"] and not r["partial"]
    assert 10 ** 12 <= r["out"][0] <= 2 * 10 ** 12 and r["out"][1] == 5, r["out"][:2]
    assert r["x"][:3] == [0, 5, 200] and r["seconds"] < 30


def test_a_wait_of_10_to_the_12_cycles_ends_with_the_clock_advanced():
    r = _run("clock_wait")
    assert not r["findings"] and not r["partial"]
    assert all(10 ** 12 <= c <= 2 * 10 ** 12 for c in r["out"][:32]), r["out"][:4]
    assert r["seconds"] < 30


def test_short_clock_waits_are_not_advanced():
    r = _run("clock_wait_short")
    assert not r["findings"] and all(1000 <= c < 1200 for c in r["out"][:32]), r["out"][:4]
    # another warp works meanwhile: the clock counts steps only, it is not advanced
    r = _run("clock_wait_beside_work")
    assert not r["findings"] and r["x"][0] == 32 * 2000
    assert all(3000 <= c < 3200 for c in r["out"][:32]), r["out"][:4]


def test_a_wait_on_the_32_bit_clock_is_advanced_in_steps_that_do_not_wrap_it():
    # a jump past 2**32 would wrap %clock and step over the end of the wait
    r = _run("clock32_wait")
    assert not r["findings"] and not r["partial"]
    assert 3_000_000_000 <= r["out"][0] < 2 ** 32
