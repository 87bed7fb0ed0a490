"""The stress suite in its bounded form (issue 25): one round of each part of
``stress_suite.py``, about 15 s in all. ``WARP_LAB_STRESS_ROUNDS=N`` runs N rounds of each,
``WARP_LAB_STRESS_SEED=S`` replays a run (each failure message names its seed);
``python -m tools.stress --minutes N`` runs them for longer and prints the counts.

Each test holds one of the promises ``docs/architecture.md`` lists under "Promises".
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import stress_suite as S  # noqa: E402

pytestmark = pytest.mark.stress

ROUNDS = int(os.environ.get("WARP_LAB_STRESS_ROUNDS", "1"))

#: The promises' 1 s (an interrupt honoured, a hang found) are speed targets: one quiet
#: process measures them (``python -m benchmarks``' stress section, ``tools.stress``). Here
#: the suite's workers, Chromium and Jupyter share two cores, and a worker can wait seconds
#: for one, so a test holds calls to this wider bound, which still tells an honoured
#: interrupt or a found hang from an ignored one (the watchdog stops a part at 60 s).
BOUND_S = float(os.environ.get("WARP_LAB_STRESS_BOUND_S", "10"))


def _tally() -> S.Tally:
    return S.Tally(honour_s=BOUND_S, find_s=BOUND_S)


@pytest.fixture()
def seeded():
    """``(rng, seed)``: a random seed unless WARP_LAB_STRESS_SEED gives one."""
    seed = int(os.environ.get("WARP_LAB_STRESS_SEED", time.time_ns() % (1 << 31)))
    return np.random.default_rng(seed), seed


def _held(tally: S.Tally, seed: int) -> None:
    failures = tally.failures()
    assert not failures, f"WARP_LAB_STRESS_SEED={seed}\n" + "\n".join(failures) \
        + "\n" + tally.summary()


def test_every_interrupt_is_honoured_and_no_array_is_lost(seeded):
    rng, seed = seeded
    tally = _tally()
    S.interrupts(rng, ROUNDS, tally)
    _held(tally, seed)
    # (a short launch or a compile may end before its random moment: those are not counted)
    assert tally.interrupts_tried >= 5 * ROUNDS, tally.summary()
    assert {"launch", "launch (compile)", "wl.debug run_to_end", "wl.compile (LLVM O3)",
            "%%warp_kernel --launch"} \
        <= set(tally.interrupt_phases), tally.summary()


def test_every_hang_shape_is_found_and_progress_is_not_a_hang(seeded):
    rng, seed = seeded
    tally = _tally()
    S.hang_shapes(rng, ROUNDS, tally)
    _held(tally, seed)
    shapes = sum(len(shapes) for _, _, shapes in S.HANGS)
    assert len(tally.hang_shapes) == shapes, tally.summary()
    assert tally.progress_shapes == 6 * ROUNDS


def test_bad_and_huge_inputs_at_every_entry_are_located_user_errors(seeded):
    rng, seed = seeded
    tally = _tally()
    S.bad_inputs(rng, ROUNDS, tally)
    _held(tally, seed)
    assert set(tally.bad_inputs_by_entry) == {
        "wl.compile", "wl.launch", "wl.debug", "wl.cuda_kernel", "wp.launch",
        "%%warp_kernel", "%%cuda_kernel"}, tally.summary()


def test_crafted_entries_hostile_folders_and_concurrent_writers_are_misses(seeded):
    rng, seed = seeded
    tally = _tally()
    S.cache_attacks(rng, ROUNDS, tally)
    _held(tally, seed)
    assert tally.cache_attacks >= 18 * ROUNDS, tally.summary()
