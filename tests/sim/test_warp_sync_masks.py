"""Warp-synchronous instructions reached at one site by lanes with different membermasks.

PTX ISA 9.7.12.3 (``bar.warp.sync``): the executing thread waits "until all
threads corresponding to membermask have executed a bar.warp.sync with the
same membermask value"; 9.7.8.6/9.7.8.7 (``shfl.sync``, ``vote.sync``): "...
have executed shfl.sync [vote.sync] with the same qualifiers and same
membermask". Lanes waiting at one instruction with different membermasks are
so different rendezvous: a group completes when every live lane of its mask
waits there with that mask, and a ``vote``/``redux``/``match`` combines the
lanes of its group only. (CUDA Programming Guide, "Warp Vote Functions" and
``__syncwarp()``: each named thread must execute the same intrinsic "with the
same mask".)

The kernels below are legal CUDA: per-group masks in loops whose trip counts
differ, and masks that change from one iteration to the next so that a lane
left out of one round runs ahead to a later round while the others still
wait. Each output is checked against numpy's reading of those rules; the
race-free programs must give racecheck nothing to report.
"""

import linecache
import struct

import numpy as np
import pytest

import warp_lab as wl
from warp_lab import sim

from racecheck_model import LANES, READ, SYNC, WRITE, sync_mask, unordered_pairs

CHECKS = ("racecheck", "memcheck", "barrier")


def _launch(kernel, inputs, threads):
    return wl.launch(kernel, inputs=inputs, grid=(1, 1, 1), block=(threads, 1, 1),
                     device="sim", checks=CHECKS)


def _rand_masks(rng, rounds, lanes):
    """``rounds`` membermasks over lanes ``0..lanes-1``, each with two or more lanes."""
    return [sync_mask(rng, lanes) for _ in range(rounds)]


# ------------------------------------------------------------ vote: one group per mask

@wl.kernel
def _group_votes(x: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.uint32),
                 flags: wl.array(dtype=wl.int32), cnt: wl.array(dtype=wl.int32)):
    t = wl.thread_idx.x
    lane = t % 32
    m = wl.uint32(0xFF) << wl.uint32(lane // 8 * 8)     # the lane's group of 8
    n = cnt[t // 8]
    acc = wl.uint32(0)
    nall = 0
    nany = 0
    i = 0
    while i < n:
        acc += wl.ballot_sync(m, x[t] > i)
        if wl.all_sync(m, x[t] >= i):
            nall += 1
        if wl.any_sync(m, x[t] == i):
            nany += 1
        i += 1
    out[t] = acc
    flags[2 * t] = nall
    flags[2 * t + 1] = nany


def test_vote_in_groups_of_eight_lanes_with_different_trip_counts():
    # four groups per warp, each looping its own number of times: the groups reach the
    # same vote instructions with different masks and must not see each other's lanes
    # (was: one ballot over the whole warp, all/any over lanes outside the mask)
    rng = np.random.default_rng(3)
    x = rng.integers(0, 6, 64).astype(np.int32)
    cnt = np.array([3, 1, 5, 2, 0, 4, 4, 6], np.int32)
    out = np.zeros(64, np.uint32)
    flags = np.zeros(128, np.int32)
    res = _launch(_group_votes, [x, out, flags, cnt], 64)
    assert res.findings == [], [str(f) for f in res.findings]
    want = np.zeros(64, np.uint64)
    nall = np.zeros(64, np.int32)
    nany = np.zeros(64, np.int32)
    for g in range(8):
        lanes = np.arange(8 * g, 8 * g + 8)
        shift = lanes % 32
        for i in range(cnt[g]):
            want[lanes] += int(np.sum(np.where(x[lanes] > i, 1 << shift, 0)))
            nall[lanes] += bool(np.all(x[lanes] >= i))
            nany[lanes] += bool(np.any(x[lanes] == i))
    np.testing.assert_array_equal(out, want.astype(np.uint32))
    np.testing.assert_array_equal(flags[0::2], nall)
    np.testing.assert_array_equal(flags[1::2], nany)


# ------------------------------------------------------------ masks that change per round

@wl.kernel
def _rounds(v: wl.array(dtype=wl.int32), bal: wl.array(dtype=wl.uint32),
            masks: wl.array(dtype=wl.uint32), src: wl.array(dtype=wl.int32),
            rounds: wl.int32):
    t = wl.thread_idx.x
    w = t // 32
    lane = t % 32
    val = v[t]
    b = wl.uint32(0)
    r = 0
    while r < rounds:
        m = masks[w * rounds + r]
        if (m >> wl.uint32(lane)) & wl.uint32(1):
            b = b * wl.uint32(3) + wl.ballot_sync(m, (val & 1) == 1)
            val = wl.shfl_sync(m, val, src[w * rounds + r]) + lane
        r += 1
    v[t] = val
    bal[t] = b


def _rounds_reference(v, masks, src, rounds, warps):
    """Round by round: the lanes of the round's mask vote, then read ``val`` of lane ``src``."""
    val = v.astype(np.int64).copy()
    b = np.zeros(len(v), np.uint64)
    for w in range(warps):
        base = 32 * w
        for r in range(rounds):
            m, s = masks[w * rounds + r], src[w * rounds + r]
            mem = [ln for ln in range(32) if m >> ln & 1]
            ballot = sum(1 << ln for ln in mem if val[base + ln] & 1)
            old = val[base:base + 32].copy()
            for ln in mem:
                b[base + ln] = (b[base + ln] * 3 + ballot) % 2**32
                val[base + ln] = old[s] + ln
    return val.astype(np.int32), b.astype(np.uint32)


def test_shfl_and_ballot_with_a_mask_that_changes_every_round():
    # a lane outside round r's mask runs ahead to round r+1 while round r's lanes wait at
    # the same instructions with another mask: it must wait for round r+1's own lanes
    # (was: released with round r's lanes, reading values one round early)
    rng = np.random.default_rng(5)
    warps, rounds = 4, 10
    masks, src = [], []
    for _ in range(warps):
        for m in _rand_masks(rng, rounds, 6):
            masks.append(m)
            src.append(int(rng.choice([ln for ln in range(6) if m >> ln & 1])))
    masks = np.array(masks, np.uint32)
    src = np.array(src, np.int32)
    v = rng.integers(0, 1000, 32 * warps).astype(np.int32)
    want_v, want_b = _rounds_reference(v, masks, src, rounds, warps)
    bal = np.zeros(32 * warps, np.uint32)
    res = _launch(_rounds, [v, bal, masks, src, rounds], 32 * warps)
    assert res.findings == [], [str(f) for f in res.findings]
    np.testing.assert_array_equal(v, want_v)
    np.testing.assert_array_equal(bal, want_b)


# ------------------------------------------------------------ racecheck: one __syncwarp site

STEPS = 12


def _make_interp(two_sites: bool):
    """The interpreter kernel: warp w runs program w on lanes 0..3 (read or write one of
    two shared ints, or __syncwarp(mask)). Every round's sync is one instruction, or with
    ``two_sites`` one of two by lane parity (a captured constant: the other branch is
    compiled out)."""
    @wl.kernel
    def interp(prog: wl.array(dtype=wl.int32), x: wl.array(dtype=wl.int32),
               steps: wl.int32):
        buf = wl.shared_array(64, wl.int32)
        t = wl.thread_idx.x
        w = t // 32
        lane = t % 32
        if lane < 2:
            buf[2 * w + lane] = 0
        if lane < 4:
            wl.syncwarp(0xF)
            s = 0
            while s < steps:
                k = 4 * (w * steps + s)
                op = prog[k]
                if op == 2:
                    m = wl.uint32(prog[k + 3])
                    if (m >> wl.uint32(lane)) & wl.uint32(1):
                        if two_sites and lane % 2 == 1:
                            wl.syncwarp(m)
                        else:
                            wl.syncwarp(m)
                elif lane == prog[k + 1]:
                    if op == 0:
                        x[t] = x[t] * 31 + buf[2 * w + prog[k + 2]]
                    else:
                        buf[2 * w + prog[k + 2]] = s + 1
                s += 1
    return interp


_interp = _make_interp(False)


def _program(rng):
    prog = []
    for _ in range(STEPS):
        op = int(rng.choice([READ, WRITE, SYNC], p=[0.35, 0.15, 0.5]))
        mask = sync_mask(rng) if op == SYNC else 0
        prog.append((op, int(rng.integers(LANES)), int(rng.integers(2)), mask))
    return prog


def _hb_reference(prog):
    """(racy, x): whether two accesses of an element by different lanes, one a write,
    are unordered by program order and shared syncs (transitively), and what each lane's
    ``x`` ends as when the reads see the writes in step order (the only outcome when
    nothing races)."""
    racy = bool(unordered_pairs(prog, lambda step: {step[2]}))
    buf = [0, 0]
    x = [0] * LANES
    for s, (op, a, i, _) in enumerate(prog):
        if op == READ:
            x[a] = (x[a] * 31 + buf[i]) % 2**32
        elif op == WRITE:
            buf[i] = s + 1
    return racy, x


def _programs(want_racy, n, seed):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        prog = _program(rng)
        racy, x = _hb_reference(prog)
        if racy == want_racy and any(op == WRITE for op, *_ in prog):
            out.append((prog, x))
    return out


def _run_programs(progs, kernel):
    flat = np.array([p for prog, _ in progs for p in prog], np.int32).reshape(-1)
    x = np.zeros(32 * len(progs), np.int32)
    res = _launch(kernel, [flat, x, STEPS], 32 * len(progs))
    return res, x.reshape(len(progs), 32)


def _check_race_free(progs, kernel):
    """One program per warp: no finding, and every read sees the step-order writes."""
    res, x = _run_programs(progs, kernel)
    assert res.findings == [], [str(f) for f in res.findings]
    want = np.array([xs for _, xs in progs], np.int64).astype(np.int32)
    np.testing.assert_array_equal(x[:, :LANES], want)


def _check_racy(progs, kernel):
    """One racy program per launch (findings are deduplicated per line across a launch)."""
    for prog, _ in progs:
        res, _ = _run_programs([(prog, None)], kernel)
        kinds = {f.kind for f in res.findings}
        assert kinds and kinds <= {"race_raw", "race_war", "race_waw"}, (prog, kinds)


def test_race_free_programs_at_one_syncwarp_site_report_nothing():
    # was: a lane outside a sync's mask ran ahead and was released with lanes waiting
    # under another mask -- races that do not exist, values read early
    _check_race_free(_programs(False, 32, seed=7), _interp)


def test_racy_programs_at_one_syncwarp_site_are_reported():
    _check_racy(_programs(True, 4, seed=8), _interp)


# ------------------------------------------------------------ groups that never complete

@wl.kernel
def _mismatch(x: wl.array(dtype=wl.int32)):
    t = wl.thread_idx.x
    if t < 2:
        m = wl.uint32(0x3) if t == 0 else wl.uint32(0x7)
        wl.syncwarp(m)
    x[t] = 1


def test_lanes_waiting_at_one_syncwarp_with_different_masks_are_a_deadlock():
    # lane 0 waits with mask 0x3 for lane 1, which waits there with 0x7 for lane 2 (it
    # exits): neither rendezvous can complete; the deadlock names the user's line
    # (was: lanes 0 and 1 released together, as if they had executed it with one mask)
    x = np.zeros(32, np.int32)
    res = _launch(_mismatch, [x], 32)
    assert [f.kind for f in res.findings] == ["deadlock"], [str(f) for f in res.findings]
    f = res.findings[0]
    assert "wl.syncwarp(m)" in linecache.getline(f.source_file, f.source_line)
    assert "0x00000003" in f.message and "0x00000007" in f.message, f.message
    assert res.partial


# ------------------------------------------------------------ redux and match (PTX)

_PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 inp)
{
  .reg .pred %p<4>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [inp];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.u32 %r2, [%rd5];
  and.b32 %r3, %r1, 31;
  setp.lt.u32 %p1, %r3, 12;
  selp.b32 %r4, 4095, -4096, %p1;
  redux.sync.add.u32 %r5, %r2, %r4;
  and.b32 %r6, %r2, 3;
  match.any.sync.b32 %r7, %r6, %r4;
  mul.wide.u32 %rd3, %r1, 8;
  add.s64 %rd4, %rd1, %rd3;
  st.global.v2.u32 [%rd4], {%r5, %r7};
  ret;
}
"""


def test_redux_and_match_combine_only_the_lanes_of_their_mask(gpu):
    # lanes 0-11 with mask 0x00000FFF, lanes 12-31 with 0xFFFFF000, at one instruction
    data = (np.arange(32) * 7 + 3).astype(np.uint32)
    a_in = gpu.put(data)
    a_out = gpu.put(np.zeros(64, np.uint32))
    res = sim.run(sim.parse_module(_PTX), "k", 1, 32, struct.pack("<QQ", a_out, a_in),
                  gpu.mem, checks=CHECKS)
    assert res.findings == [], [str(f) for f in res.findings]
    out = gpu.get(a_out).reshape(32, 2)
    group = np.arange(32) >= 12
    key = data & 3
    for ln in range(32):
        mates = np.flatnonzero(group == group[ln])
        assert out[ln, 0] == data[mates].sum() % 2**32, ln
        assert out[ln, 1] == sum(1 << int(j) for j in mates if key[j] == key[ln]), ln


# ------------------------------------------------------------ one rendezvous, several syncwarps
# PTX ISA 9.7.12.3 (bar.warp.sync): "For .target sm_6x or below, all threads in
# membermask must execute the same bar.warp.sync instruction in convergence" -- from
# sm_70 on, lanes of the mask meet at different bar.warp.sync instructions (CUDA
# Programming Guide, __syncwarp(): Volta's independent thread scheduling), e.g. one
# __syncwarp() in each arm of a divergent if/else. shfl/vote/match/redux still meet
# per instruction (above).

@wl.kernel
def _arms(x: wl.array(dtype=wl.int32), y: wl.array(dtype=wl.int32)):
    buf = wl.shared_array(64, wl.int32)
    t = wl.thread_idx.x
    lane = t % 32
    if lane < 16:
        buf[t] = x[t] * 2
        wl.syncwarp()
    else:
        buf[t] = x[t] + 100
        wl.syncwarp()
    y[t] = buf[t - lane + 31 - lane]


@wl.kernel
def _one_arm(x: wl.array(dtype=wl.int32), y: wl.array(dtype=wl.int32)):
    buf = wl.shared_array(64, wl.int32)
    t = wl.thread_idx.x
    lane = t % 32
    if lane < 16:
        buf[t] = x[t] * 2
        wl.syncwarp()
    else:
        buf[t] = x[t] + 100
    y[t] = buf[t - lane + 31 - lane]


@wl.kernel
def _arms_racy(x: wl.array(dtype=wl.int32), y: wl.array(dtype=wl.int32)):
    buf = wl.shared_array(64, wl.int32)
    t = wl.thread_idx.x
    lane = t % 32
    if lane < 16:
        buf[t] = x[t] * 2
        y[t] = buf[t - lane + 31 - lane]
        wl.syncwarp()
    else:
        buf[t] = x[t] + 100
        wl.syncwarp()
        y[t] = buf[t - lane + 31 - lane]


def _arms_reference(x):
    lane = np.arange(len(x)) % 32
    v = np.where(lane < 16, x * 2, x + 100)
    return v[np.arange(len(x)) - lane + 31 - lane]


def _launch_arch(kernel, arch, inputs, threads):
    ck = wl.compile(kernel, arch=arch, sass=False)
    assert ck.ptx.count("bar.warp.sync") >= 2 or kernel is _one_arm, ck.ptx
    return wl.launch(ck, inputs=inputs, grid=(1, 1, 1), block=(threads, 1, 1), device="sim",
                     checks=CHECKS)


def _at_user_line(f, text):
    return text in linecache.getline(f.source_file, f.source_line)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_syncwarp_in_each_arm_of_a_divergent_branch_is_one_rendezvous(arch):
    # lanes 0-15 wait at the first arm's __syncwarp(), lanes 16-31 reach the second arm's:
    # one rendezvous (was: a deadlock, lanes grouped per instruction)
    x = np.arange(64, dtype=np.int32) * 3 - 50
    y = np.zeros(64, np.int32)
    res = _launch_arch(_arms, arch, [x, y], 64)
    assert res.findings == [], [str(f) for f in res.findings]
    np.testing.assert_array_equal(y, _arms_reference(x))


def test_syncwarp_missing_in_one_arm_is_still_reported_at_the_users_line():
    # lanes 16-31 skip the sync, read, and exit: lanes 0-15 wait for lanes that never
    # arrive (the exited-lanes finding, or a deadlock), and the unsynchronised reads race
    x = np.arange(64, dtype=np.int32)
    y = np.zeros(64, np.int32)
    res = _launch_arch(_one_arm, "sm_80", [x, y], 64)
    sync = [f for f in res.findings if f.kind in ("deadlock", "warp_sync")]
    assert sync and all(_at_user_line(f, "wl.syncwarp()") for f in sync), \
        [str(f) for f in res.findings]
    assert {f.kind for f in res.findings} & {"race_raw", "race_war"}, \
        [str(f) for f in res.findings]


def test_read_before_the_syncwarp_of_its_arm_is_a_race():
    # lanes 0-15 read lanes 16-31's slots before the rendezvous: a read-after-write or
    # write-after-read hazard at the read, whichever order the simulator picks
    x = np.arange(64, dtype=np.int32)
    y = np.zeros(64, np.int32)
    res = _launch_arch(_arms_racy, "sm_90", [x, y], 64)
    races = [f for f in res.findings if f.kind.startswith("race_")]
    assert races, [str(f) for f in res.findings]
    assert not [f for f in res.findings if f.kind in ("deadlock", "warp_sync")], \
        [str(f) for f in res.findings]


def test_sm_60_keeps_one_rendezvous_per_syncwarp_instruction():
    # sm_6x: "all threads in membermask must execute the same bar.warp.sync instruction
    # in convergence" -- the divergent if/else never completes
    x = np.arange(32, dtype=np.int32)
    y = np.zeros(32, np.int32)
    res = _launch_arch(_arms, "sm_60", [x, y], 32)
    assert [f.kind for f in res.findings] == ["deadlock"], [str(f) for f in res.findings]
    assert _at_user_line(res.findings[0], "wl.syncwarp()")
    assert "sm_60, lanes meet only at the same bar.warp.sync" in res.findings[0].message


_PTX_ARMS = """
.version 8.0
.target {target}
.address_size 64
.visible .entry k(.param .u64 out)
{{
  .reg .pred %p<4>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r9, -1;
  setp.lt.u32 %p1, %r1, 16;
  @%p1 bra A;
  setp.eq.u32 %p2, %r1, 31;
  @%p2 bra C;
  bar.warp.sync %r9;
  mov.u32 %r2, 200;
  bra J;
A:
  bar.warp.sync -1;
  mov.u32 %r2, 100;
  bra J;
C:
  mov.u32 %r3, 0;
L:
  add.u32 %r3, %r3, 1;
  setp.lt.u32 %p3, %r3, 5;
  @%p3 bra L;
  ret;
J:
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  st.global.u32 [%rd4], %r2;
  ret;
}}
"""


@pytest.mark.parametrize("target", ["sm_90", "sm_70", "sm_61"])
def test_lanes_at_two_bar_warp_syncs_released_when_the_last_member_exits(gpu, target):
    # lanes 16-30 wait at one bar.warp.sync (mask in a register), lanes 0-15 at another
    # (an immediate mask), lane 31 loops and exits: on sm_70+ nothing else can run and the
    # group across both instructions is released (the exited member is a warp_sync
    # finding); on sm_61 they are two rendezvous that never complete
    ptx = _PTX_ARMS.format(target=target)
    a_out = gpu.put(np.zeros(32, np.uint32))
    res = sim.run(sim.parse_module(ptx), "k", 1, 32, struct.pack("<Q", a_out), gpu.mem,
                  checks=CHECKS)
    out = gpu.get(a_out)
    kinds = [f.kind for f in res.findings]
    if target == "sm_61":
        assert kinds == ["deadlock"], [str(f) for f in res.findings]
        return
    assert set(kinds) == {"warp_sync"}, [str(f) for f in res.findings]
    want = np.where(np.arange(32) < 16, 100, 200)
    want[31] = 0
    np.testing.assert_array_equal(out, want)


_interp_two_sites = _make_interp(True)


def _two_sites():
    ck = wl.compile(_interp_two_sites, arch="sm_90", sass=False)
    assert ck.ptx.count("bar.warp.sync") == 3, ck.ptx
    return ck


def test_race_free_programs_with_the_sync_split_over_two_instructions_report_nothing():
    # odd and even lanes of each round's mask meet at different bar.warp.sync
    # instructions: same values as the step-order reference and racecheck's
    # happens-before across the split group (was: a deadlock)
    _check_race_free(_programs(False, 16, seed=11), _two_sites())


def test_racy_programs_with_the_sync_split_over_two_instructions_are_reported():
    _check_racy(_programs(True, 3, seed=12), _two_sites())
