"""racecheck under partial-mask ``__syncwarp``, against an independent happens-before model.

Each warp of one kernel runs its own random straight-line program on 4 lanes:
a lane reads, writes or atomically adds to one of two shared ints, or a set of
lanes executes ``wl.syncwarp(mask)`` together. The reference builds the
happens-before graph (program order per lane; a warp sync orders what its lanes
did before it before what they do after it, CUDA Programming Guide
``__syncwarp()``: "guarantees memory ordering among threads participating in the
barrier"; transitively) and says whether two accesses of one element by different
lanes, one a write (an atomic reads and writes), not both atomic, are unordered
(PTX ISA "Memory Consistency Model": a data race needs an access that is not
morally strong). compute-sanitizer's racecheck (CUDA Compute Sanitizer
documentation, "Racecheck Tool") checks an access against the last write and the
reads since it; whatever the order the lanes ran in, it then reports a hazard in a
program exactly when such an unordered pair exists (an unordered pair with writes
between them has an unordered pair closer together), so the test compares that
yes/no per warp.
"""

import numpy as np

from racecheck_model import (
    ATOMIC, LANES, READ, SYNC, WRITE, clean_and_racy, program_kernel, racecheck_verdicts,
    sync_mask, unordered_pairs)

STEPS, PROGRAMS = 12, 32


def _program(rng):
    prog = []
    for _ in range(STEPS):
        op = int(rng.choice([READ, WRITE, SYNC, ATOMIC], p=[0.3, 0.12, 0.45, 0.13]))
        mask = sync_mask(rng) if op == SYNC else 0
        prog.append((op, int(rng.integers(LANES)), int(rng.integers(2)), mask))
    return prog


def _access(w, s, step):
    op, _, i, _ = step
    if op == READ:
        return f"x[t] += buf[{2 * w + i}]"
    if op == ATOMIC:
        return f"wl.atomic_add(buf, {2 * w + i}, {s})"
    return f"buf[{2 * w + i}] = {s}"


def _kernel(progs):
    """One ``@wl.kernel`` whose warp ``w`` runs ``progs[w]`` on shared ints ``2w, 2w+1``."""
    header = ["def races(x: wl.array(dtype=wl.int32)):",
              f"    buf = wl.shared_array({2 * len(progs)}, wl.int32)",
              "    t = wl.thread_idx.x", "    w = t // 32", "    lane = t % 32"]
    return program_kernel(progs, header, _access, "racecheck programs")


def _races(prog, atomics_race=False):
    """How many pairs of accesses of an element by different lanes, one a write or an
    atomic, not both atomics, no chain of program order and shared warp syncs orders in
    ``prog`` (``atomics_race``: two atomics count too, as if they were plain writes)."""
    return len(unordered_pairs(prog, lambda step: {step[2]}, atomics_race))


def _programs():
    """Half of them with no unordered pair, half with exactly one (the hardest to see)."""
    return clean_and_racy(
        np.random.default_rng(11), _program, _races, PROGRAMS,
        lambda p: any(op == WRITE for op, *_ in p) and any(op == ATOMIC for op, *_ in p))


def test_racecheck_matches_a_happens_before_model_under_partial_syncwarp():
    progs = _programs()
    want = [_races(p) > 0 for p in progs]
    # the programs hold what the test is about: unordered atomics that are no race, and
    # races only an atomic takes part in (with the atomics left out, no race is left)
    assert any(not w and _races(p, atomics_race=True) for p, w in zip(progs, want))
    assert any(w and not _races([s for s in p if s[0] != ATOMIC]) for p, w in zip(progs, want))
    got = racecheck_verdicts(_kernel(progs), PROGRAMS)
    assert got == want, [(w, progs[w]) for w in range(PROGRAMS) if got[w] != want[w]]
