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

import warp_lab as wl

from warp_lab.lang.kernel import Kernel, cell_source

LANES, STEPS, PROGRAMS = 4, 12, 32
READ, WRITE, SYNC, ATOMIC = 0, 1, 2, 3


def _program(rng):
    prog = []
    for _ in range(STEPS):
        op = int(rng.choice([READ, WRITE, SYNC, ATOMIC], p=[0.3, 0.12, 0.45, 0.13]))
        mask = 0
        while op == SYNC and bin(mask).count("1") < 2:
            mask = int(rng.integers(1, 1 << LANES))
        prog.append((op, int(rng.integers(LANES)), int(rng.integers(2)), mask))
    return prog


def _kernel(progs):
    """One ``@wl.kernel`` whose warp ``w`` runs ``progs[w]`` on shared ints ``2w, 2w+1``."""
    lines = ["@wl.kernel", "def races(x: wl.array(dtype=wl.int32)):",
             f"    buf = wl.shared_array({2 * len(progs)}, wl.int32)",
             "    t = wl.thread_idx.x", "    w = t // 32", "    lane = t % 32"]
    for w, prog in enumerate(progs):
        lines.append(f"    if w == {w}:")
        for s, (op, a, i, mask) in enumerate(prog):
            if op == SYNC:
                who = " or ".join(f"lane == {ln}" for ln in range(LANES) if mask >> ln & 1)
                lines += [f"        if {who}:", f"            wl.syncwarp({mask:#x})"]
            elif op == READ:
                lines += [f"        if lane == {a}:", f"            x[t] += buf[{2 * w + i}]"]
            elif op == ATOMIC:
                lines += [f"        if lane == {a}:",
                          f"            wl.atomic_add(buf, {2 * w + i}, {s})"]
            else:
                lines += [f"        if lane == {a}:", f"            buf[{2 * w + i}] = {s}"]
    code = "\n".join(lines) + "\n"
    cell_source(code, "<racecheck programs>")
    ns = {"wl": wl, "__name__": "racecheck_programs"}
    exec(compile(code, "<racecheck programs>", "exec"), ns)  # noqa: S102 - generated here
    return next(v for v in ns.values() if isinstance(v, Kernel))


def _races(prog, atomics_race=False):
    """How many pairs of accesses of an element by different lanes, one a write or an
    atomic, not both atomics, no chain of program order and shared warp syncs orders in
    ``prog`` (``atomics_race``: two atomics count too, as if they were plain writes)."""
    before = {}                     # step -> the steps ordered before it
    last = [None] * LANES           # each lane's latest step
    accesses = []                   # (step, lane, element, is_write, is_atomic)
    n = 0

    def seen(lanes):
        out = set()
        for ln in lanes:
            if last[ln] is not None:
                out |= before[last[ln]] | {last[ln]}
        return out

    for s, (op, a, i, mask) in enumerate(prog):
        lanes = [ln for ln in range(LANES) if mask >> ln & 1] if op == SYNC else [a]
        before[s] = seen(lanes)
        for ln in lanes:
            last[ln] = s
        if op == SYNC:
            continue
        atomic = op == ATOMIC
        n += sum(i2 == i and a2 != a and (w2 or op != READ)
                 and not (at2 and atomic and not atomics_race)
                 and s2 not in before[s] for s2, a2, i2, w2, at2 in accesses)
        accesses.append((s, a, i, op != READ, atomic))
    return n


def _programs():
    """Half of them with no unordered pair, half with exactly one (the hardest to see)."""
    rng = np.random.default_rng(11)
    clean, racy = [], []
    while len(clean) < PROGRAMS // 2 or len(racy) < PROGRAMS // 2:
        prog = _program(rng)
        n = _races(prog)
        writes = sum(op == WRITE for op, *_ in prog)
        atomics = sum(op == ATOMIC for op, *_ in prog)
        if n == 0 and writes and atomics and len(clean) < PROGRAMS // 2:
            clean.append(prog)
        elif n == 1 and len(racy) < PROGRAMS // 2:
            racy.append(prog)
    return [p for pair in zip(clean, racy) for p in pair]


def test_racecheck_matches_a_happens_before_model_under_partial_syncwarp():
    progs = _programs()
    want = [_races(p) > 0 for p in progs]
    # the programs hold what the test is about: unordered atomics that are no race, and
    # races only an atomic takes part in (with the atomics left out, no race is left)
    assert any(not w and _races(p, atomics_race=True) for p, w in zip(progs, want))
    assert any(w and not _races([s for s in p if s[0] != ATOMIC]) for p, w in zip(progs, want))
    res = wl.launch(_kernel(progs), inputs=[np.zeros(32 * PROGRAMS, np.int32)],
                    grid=(1, 1, 1), block=(32 * PROGRAMS, 1, 1), device="sim",
                    checks=("racecheck",))
    assert not res.partial
    got = [False] * PROGRAMS
    for f in res.findings:
        assert f.kind in ("race_raw", "race_war", "race_waw"), f
        got[f.thread[0] // 32] = True
    assert got == want, [(w, progs[w]) for w in range(PROGRAMS) if got[w] != want[w]]
