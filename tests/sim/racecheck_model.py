"""Random straight-line warp programs for the racecheck tests, and their happens-before model.

A program is a list of steps ``(op, lane, ..., mask)``: ``op`` READ, WRITE or ATOMIC by lane
``lane``, or SYNC, a ``wl.syncwarp(mask)`` executed together by the lanes of ``mask``. The
model orders steps by program order per lane and by the warp syncs: a sync orders what its
lanes did before it before what they do after it, transitively (CUDA Programming Guide
``__syncwarp()``: "guarantees memory ordering among threads participating in the barrier").
Two accesses race when they are by different lanes, touch a common cell, one writes (an
atomic reads and writes), they are not both atomic (PTX ISA "Memory Consistency Model":
morally strong accesses are no data race) and no chain orders them. Used by
test_racecheck_warp_sync.py, test_racecheck_widths.py and test_warp_sync_masks.py.
"""

import numpy as np

import warp_lab as wl
from warp_lab.lang.kernel import Kernel, cell_source

LANES = 4
READ, WRITE, SYNC, ATOMIC = 0, 1, 2, 3


def sync_mask(rng, lanes=LANES):
    """A random membermask (int) over lanes ``0..lanes-1`` with two or more lanes."""
    while True:
        m = int(rng.integers(1, 1 << lanes))
        if bin(m).count("1") >= 2:
            return m


def hb_accesses(prog):
    """Yield ``(s, step, before)`` for each access step ``prog[s]`` (SYNC steps left out),
    ``before`` the set of step indices ordered before it."""
    before = {}                     # step -> the steps ordered before it
    last = [None] * LANES           # each lane's latest step
    for s, step in enumerate(prog):
        op, a, mask = step[0], step[1], step[-1]
        lanes = [ln for ln in range(LANES) if mask >> ln & 1] if op == SYNC else [a]
        seen = set()
        for ln in lanes:
            if last[ln] is not None:
                seen |= before[last[ln]] | {last[ln]}
        before[s] = seen
        for ln in lanes:
            last[ln] = s
        if op != SYNC:
            yield s, step, seen


def unordered_pairs(prog, cells, atomics_race=False):
    """The racing pairs ``(s2, s)`` (step indices, ``s2 < s``) of ``prog``; ``cells(step)``:
    the set of cells a step touches; ``atomics_race``: two atomics race too, as if they were
    plain writes."""
    accesses, found = [], []        # (step, lane, cells, is_write, is_atomic)
    for s, (op, a, *_), seen in hb_accesses(prog):
        span = cells(prog[s])
        atomic = op == ATOMIC
        found += [(s2, s) for s2, a2, span2, w2, at2 in accesses
                  if span & span2 and a2 != a and (w2 or op != READ) and s2 not in seen
                  and not (atomic and at2 and not atomics_race)]
        accesses.append((s, a, span, op != READ, atomic))
    return found


def clean_and_racy(rng, program, races, n, clean_ok):
    """``n`` programs ``program(rng)``, alternately one with no race (``races(prog) == 0``)
    for which ``clean_ok(prog)`` holds and one with exactly one race (the hardest to see)."""
    clean, racy = [], []
    while len(clean) < n // 2 or len(racy) < n // 2:
        prog = program(rng)
        k = races(prog)
        if k == 0 and clean_ok(prog) and len(clean) < n // 2:
            clean.append(prog)
        elif k == 1 and len(racy) < n // 2:
            racy.append(prog)
    return [p for pair in zip(clean, racy) for p in pair]


def program_kernel(progs, header, access, name):
    """One ``@wl.kernel`` (compiled from generated source named ``<name>``) whose warp ``w``
    runs ``progs[w]`` on its lanes ``0..LANES-1``; ``header``: the ``def`` line and the
    kernel's first lines, which bind ``t``, ``w`` and ``lane``; ``access(w, s, step)``: the
    statement lane ``step[1]`` executes for access step ``s``."""
    lines = ["@wl.kernel", *header]
    for w, prog in enumerate(progs):
        lines.append(f"    if w == {w}:")
        for s, step in enumerate(prog):
            if step[0] == SYNC:
                mask = step[-1]
                who = " or ".join(f"lane == {ln}" for ln in range(LANES) if mask >> ln & 1)
                lines += [f"        if {who}:", f"            wl.syncwarp({mask:#x})"]
            else:
                lines += [f"        if lane == {step[1]}:", f"            {access(w, s, step)}"]
    code = "\n".join(lines) + "\n"
    filename = f"<{name}>"
    cell_source(code, filename)
    ns = {"wl": wl, "__name__": name.replace(" ", "_")}
    exec(compile(code, filename, "exec"), ns)  # noqa: S102 - generated here
    return next(v for v in ns.values() if isinstance(v, Kernel))


def racecheck_verdicts(kernel, n, **launch):
    """Launch ``kernel`` on one block of ``n`` warps under racecheck (``launch``: more
    ``wl.launch`` arguments); per warp, whether racecheck reported a race in it. Asserts the
    launch completed and reported races only."""
    res = wl.launch(kernel, inputs=[np.zeros(32 * n, np.int32)], grid=(1, 1, 1),
                    block=(32 * n, 1, 1), device="sim", checks=("racecheck",), **launch)
    assert not res.partial
    got = [False] * n
    for f in res.findings:
        assert f.kind in ("race_raw", "race_war", "race_waw"), f
        got[f.thread[0] // 32] = True
    return got
