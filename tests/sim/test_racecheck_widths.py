"""racecheck with accesses of different widths on the same shared bytes.

racecheck keeps its records per aligned 4-byte word while every access covers whole
words, and per byte for the words a 1- or 2-byte access touched
(:class:`warp_lab.sim.racecheck.RaceTracker`). Its findings must be those of a per-byte
tracker: compute-sanitizer's hazards are per byte (CUDA Compute Sanitizer
documentation, "Racecheck Tool"), so two threads writing different bytes of one word is
no hazard, and a byte written by one thread and read as part of a word by another is.
The overlapping views are ``wl.dynamic_shared_array`` calls of different dtypes, which
all view the same memory (CUDA's ``extern __shared__`` cast to several types).
"""

import numpy as np

import warp_lab as wl

from racecheck_model import (
    ATOMIC, LANES, READ, SYNC, WRITE, clean_and_racy, program_kernel, racecheck_verdicts,
    sync_mask, unordered_pairs)

CHECKS = ("memcheck", "racecheck", "barrier")
WIDTHS = {1: "wl.uint8", 2: "wl.uint16", 4: "wl.int32", 8: "wl.int64"}


def _launch(kernel, n_threads=64, blocks=1, shared=64, **kw):
    out = np.zeros(blocks * n_threads, np.int32)
    res = wl.launch(kernel, inputs=[out], grid=(blocks, 1, 1), block=(n_threads, 1, 1),
                    shared_mem=shared, device="sim", checks=CHECKS, **kw)
    assert not res.partial, res.findings
    return res, out


def _races(res):
    return [f for f in res.findings if f.kind.startswith("race")]


@wl.kernel
def disjoint_bytes(out: wl.array(dtype=wl.int32)):
    words = wl.dynamic_shared_array(wl.int32)
    b = wl.dynamic_shared_array(wl.uint8)
    t = wl.thread_idx.x
    if t == 0:
        words[0] = 0x01020304
    wl.syncthreads()
    if t < 4:
        b[t] = wl.uint8(t + 1)      # four threads, four bytes of word 0: no hazard
    wl.syncthreads()
    out[t] = words[0]


@wl.kernel
def byte_then_word(out: wl.array(dtype=wl.int32)):
    words = wl.dynamic_shared_array(wl.int32)
    b = wl.dynamic_shared_array(wl.uint8)
    t = wl.thread_idx.x
    if t < 8:
        words[t] = 0
    wl.syncthreads()
    if t == 1:
        b[6] = wl.uint8(7)          # byte 2 of word 1
    if t == 0:
        out[t] = words[1]           # marker: word read over another thread's byte


@wl.kernel
def word_then_byte(out: wl.array(dtype=wl.int32)):
    words = wl.dynamic_shared_array(wl.int32)
    b = wl.dynamic_shared_array(wl.uint8)
    t = wl.thread_idx.x
    if t == 0:
        words[1] = 0x01020304
    if t == 1:
        out[t] = int(b[7])          # byte 3 of the word thread 0 wrote


@wl.kernel
def own_bytes(out: wl.array(dtype=wl.int32)):
    words = wl.dynamic_shared_array(wl.int32)
    h = wl.dynamic_shared_array(wl.uint16)
    b = wl.dynamic_shared_array(wl.uint8)
    t = wl.thread_idx.x
    words[t] = t                    # each thread its own word, then its bytes in it
    h[2 * t + 1] = wl.uint16(t)
    b[4 * t] = wl.uint8(t)
    out[t] = words[t] + int(h[2 * t]) + int(b[4 * t + 3])
    wl.syncthreads()
    words[(t + 1) % 64] = 5         # the next thread's word, after the barrier: no hazard
    wl.syncthreads()
    out[t] += int(b[4 * t + 2])


def test_threads_writing_different_bytes_of_one_word_do_not_race():
    res, out = _launch(disjoint_bytes)
    assert _races(res) == []
    assert (out == 0x04030201).all()      # little-endian: byte t is t + 1


def test_a_byte_write_and_a_word_read_by_another_thread_race_at_that_byte():
    res, _ = _launch(byte_then_word)
    (f,) = _races(res)
    assert f.kind == "race_raw"
    assert f.thread == (0, 0, 0) and f.details["other_thread"] == (1, 0, 0)
    assert f.details["shared_offset"] == 6           # the byte, not the word's first
    assert (f.details["address"], f.details["size"]) == (4, 4)


def test_a_word_write_and_a_byte_read_by_another_thread_race():
    res, _ = _launch(word_then_byte)
    (f,) = _races(res)
    assert f.kind == "race_raw"
    assert f.thread == (1, 0, 0) and f.details["other_thread"] == (0, 0, 0)
    assert f.details["shared_offset"] == 7
    assert (f.details["address"], f.details["size"]) == (7, 1)


def test_a_thread_mixing_widths_on_its_own_word_does_not_race():
    res, out = _launch(own_bytes, shared=256)
    assert _races(res) == []
    t = np.arange(64)
    # words[t] is t | t << 16 once h and b wrote their parts of it (bytes t, 0, t, 0);
    # after the barrier its bytes are 5, 0, 0, 0
    assert np.array_equal(out, (t | t << 16) + t)


@wl.kernel
def vectors(out: wl.array(dtype=wl.int32), sync: int, offset: int):
    buf = wl.shared_array(256, wl.float32)
    t = wl.thread_idx.x
    buf[4 * t] = 1.0                # four adjacent stores: one st.shared.v4
    buf[4 * t + 1] = 2.0
    buf[4 * t + 2] = 3.0
    buf[4 * t + 3] = 4.0
    if sync:
        wl.syncthreads()
    u = (t + 1) % 64
    out[t] = int(buf[4 * u + offset])


@wl.kernel
def vector_reads(out: wl.array(dtype=wl.int32), sync: int):
    buf = wl.shared_array(256, wl.float32)
    t = wl.thread_idx.x
    buf[4 * t + 3] = 4.0            # one word of each thread's four
    if sync:
        wl.syncthreads()
    u = (t + 1) % 64
    v = buf[4 * u] + buf[4 * u + 1] + buf[4 * u + 2] + buf[4 * u + 3]   # one ld.shared.v4
    out[t] = int(v)


def test_vector_accesses_race_at_the_byte_of_the_word_they_share():
    # (16-byte accesses: four records per lane on the word path)
    assert "st.shared.v4" in wl.compile(vectors).ptx
    assert "ld.shared.v4" in wl.compile(vector_reads).ptx
    for sync in (1, 0):
        out = np.zeros(64, np.int32)
        res = wl.launch(vectors, inputs=[out, sync, 2], grid=(1, 1, 1), block=(64, 1, 1),
                        device="sim", checks=CHECKS)
        races = _races(res)
        assert (out == 3).all()
        if sync:
            assert races == []
        else:
            (f,) = races
            assert f.kind == "race_raw" and f.thread == (0, 0, 0)
            assert f.details["other_thread"] == (1, 0, 0)
            assert f.details["shared_offset"] == 16 + 8
            assert (f.details["address"], f.details["size"]) == (24, 4)
        out = np.zeros(64, np.int32)
        # the v4 load also reads three words nobody wrote: zeros there keep the sum 4
        res = wl.launch(vector_reads, inputs=[out, sync], grid=(1, 1, 1), block=(64, 1, 1),
                        device="sim", checks=CHECKS, fill="zeros")
        races = _races(res)
        if sync:
            assert races == [] and (out == 4).all()
        else:
            (f,) = races
            assert f.kind == "race_raw" and f.thread == (0, 0, 0)
            assert f.details["shared_offset"] == 16 + 12     # the one word written
            assert (f.details["address"], f.details["size"]) == (16, 16)


@wl.kernel
def warp_sum(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32), sync: int):
    buf = wl.shared_array(64, wl.float32)
    t = wl.thread_idx.x
    v = x[wl.block_idx.x * 64 + t]
    v += wl.shfl_xor_sync(0xFFFFFFFF, v, 16)      # shuffles: registers, not memory
    buf[t] = v
    wl.syncthreads()
    if t < 32:
        s = 8
        while s > 0:
            w = buf[t] + buf[t + s]
            if sync:
                wl.syncwarp()
            buf[t] = w                # lane t - s read buf[t] just now
            wl.syncwarp()
            s //= 2
    if t == 0:
        out[wl.block_idx.x] = buf[0]


def test_warp_synchronous_reduction_is_ordered_by_syncwarp_only():
    x = np.random.default_rng(3).integers(-8, 8, 4 * 64).astype(np.float32)
    ref = x.reshape(4, 2, 32)[:, 0].sum(axis=1)       # warp 0's sum (exact: small integers)
    for sync in (1, 0):
        out = np.zeros(4, np.float32)
        res = wl.launch(warp_sum, inputs=[x, out, sync], grid=(4, 1, 1), block=(64, 1, 1),
                        device="sim", checks=CHECKS)
        assert np.array_equal(out, ref)
        if sync:
            assert _races(res) == []
        else:
            assert {f.kind for f in _races(res)} == {"race_war"}


@wl.kernel
def uneven_barriers(out: wl.array(dtype=wl.int32), racy: int):
    b = wl.dynamic_shared_array(wl.uint8)
    words = wl.dynamic_shared_array(wl.int32)
    t = wl.thread_idx.x
    for k in range(wl.block_idx.x + 1):     # blocks pass different numbers of barriers
        b[t] = wl.uint8(k + t)
        if racy == 0:
            wl.syncthreads()
        out[wl.block_idx.x * 64 + t] += words[(t // 4 + 1) % 16]
        wl.syncthreads()


def test_sub_word_records_are_forgotten_block_by_block_at_barriers():
    for racy in (0, 1):
        out = np.zeros(4 * 64, np.int32)
        res = wl.launch(uneven_barriers, inputs=[out, racy], grid=(4, 1, 1),
                        block=(64, 1, 1), shared_mem=64, device="sim", checks=CHECKS)
        races = _races(res)
        if racy:
            assert races and all(f.kind == "race_raw" for f in races)
            assert races[0].details["size"] == 4
        else:
            assert races == []
        if racy:
            continue
        t = np.arange(64)
        want = np.zeros((4, 64), np.int32)
        for blk in range(4):
            for k in range(blk + 1):
                words = ((k + t) & 0xFF).astype(np.uint8).view(np.int32)
                want[blk] += words[(t // 4 + 1) % 16]
        assert np.array_equal(out, want.reshape(-1))


# -- random programs of mixed widths under partial syncwarp, against a byte model ---------

STEPS, PROGRAMS = 12, 32


def _program(rng):
    prog = []
    for _ in range(STEPS):
        op = int(rng.choice([READ, WRITE, SYNC, ATOMIC], p=[0.3, 0.15, 0.4, 0.15]))
        mask = sync_mask(rng) if op == SYNC else 0
        # (atomics of 4 and 8 bytes: PTX has no sub-word atom.add)
        width = int(rng.choice([1, 2, 4, 8], p=[0.2, 0.2, 0.4, 0.2]) if op != ATOMIC
                    else rng.choice([4, 8]))
        prog.append((op, int(rng.integers(LANES)), width, int(rng.integers(8 // width)), mask))
    return prog


def _access(w, s, step):
    op, _, width, i, _ = step
    elem = f"v{width}[{8 // width * w + i}]"
    if op == READ:
        # (every bit of the value used: else the load may be narrowed; a sub-word value
        # widens first: 65521 does not fit in its type, and wrapped it would be 241)
        value = elem if width >= 4 else f"wl.int32({elem})"
        return f"x[t] += wl.int32({value} % 65521)"
    if op == ATOMIC:
        return f"wl.atomic_add(v{width}, {8 // width * w + i}, {WIDTHS[width]}({s + 1}))"
    return f"{elem} = {WIDTHS[width]}({s + 1})"


def _kernel(progs):
    """One ``@wl.kernel`` whose warp ``w`` runs ``progs[w]`` on shared bytes ``8w..8w+7``,
    through views of 1, 2, 4 and 8 bytes."""
    header = ["def widths(x: wl.array(dtype=wl.int32)):",
              *(f"    v{n} = wl.dynamic_shared_array({ty})" for n, ty in WIDTHS.items()),
              "    t = wl.thread_idx.x", "    w = t // 32", "    lane = t % 32"]
    return program_kernel(progs, header, _access, "racecheck width programs")


def _races_in(prog, atomics_race=False, pairs=False):
    """Pairs of accesses by different lanes to overlapping bytes, one a write or an
    atomic, not both atomics, that no chain of program order and shared warp syncs
    orders (CUDA Programming Guide ``__syncwarp()``: "guarantees memory ordering among
    threads participating"; PTX ISA "Memory Consistency Model": two morally strong
    accesses are no data race, an atomic and a plain access that overlap are, even when
    their sizes differ). How many (``pairs``: the pairs' step indices); ``atomics_race``:
    two atomics count too."""
    found = unordered_pairs(prog, lambda st: set(range(st[3] * st[2], (st[3] + 1) * st[2])),
                            atomics_race)
    return found if pairs else len(found)


def test_racecheck_matches_a_byte_model_for_mixed_widths_under_partial_syncwarp():
    progs = clean_and_racy(
        np.random.default_rng(5), _program, _races_in, PROGRAMS,
        lambda p: (any(width < 4 and op != SYNC for op, _, width, _, _ in p)
                   and any(op == ATOMIC for op, *_ in p)))
    want = [_races_in(p) > 0 for p in progs]
    # the programs hold what the test is about: races of an atomic with a sub-word plain
    # access, and overlapping unordered atomics that are no race
    pairs = [(p[s1], p[s2]) for p in progs for s1, s2 in _races_in(p, pairs=True)]
    assert any(ATOMIC in (x[0], y[0]) and min(x[2], y[2]) < 4 for x, y in pairs)
    assert any(not w and _races_in(p, atomics_race=True) for p, w in zip(progs, want))
    got = racecheck_verdicts(_kernel(progs), PROGRAMS, shared_mem=8 * PROGRAMS)
    assert got == want, [(w, progs[w]) for w in range(PROGRAMS) if got[w] != want[w]]
