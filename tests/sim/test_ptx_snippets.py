"""Hand-written PTX for instructions the compiler rarely emits: shfl modes, vote, match,
redux, atom.cas, bar with thread counts, bar.red, cvt rounding modes, bit operations,
carry chains. References are numpy or plain-Python statements of the PTX ISA rules."""

import struct

import numpy as np
import pytest

from warp_lab import sim

HEAD = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 inp)
{
  .reg .pred %p<8>;
  .reg .b32 %r<40>;
  .reg .b64 %rd<16>;
  .reg .f32 %f<8>;
  .reg .f64 %fd<8>;
  .reg .b16 %rs<8>;
  .shared .align 4 .b8 sh[1024];
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [inp];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.u32 %r2, [%rd5];
"""
TAIL = """
  st.global.u32 [%rd4], %r3;
  ret;
}
"""


def run_snippet(gpu, body, inp, block=32, raw=False):
    """Run BODY (input in %r2, thread index in %r1, result in %r3) on ``inp`` (uint32 bits)."""
    inp = np.asarray(inp)
    bits = inp.view(np.uint32) if inp.dtype.itemsize == 4 else inp.astype(np.uint32)
    a_in = gpu.put(np.ascontiguousarray(bits))
    a_out = gpu.put(np.zeros(block, np.uint32))
    ptx = HEAD + body + TAIL
    res = sim.run(sim.parse_module(ptx), "k", 1, block,
                  struct.pack("<QQ", a_out, a_in), gpu.mem)
    assert res.findings == [], [str(f) for f in res.findings]
    return gpu.get(a_out), res


LANE = np.arange(32)
DATA = (LANE * 7 + 3).astype(np.uint32)


def _c(width):
    return ((32 - width) << 8) | 31 if width < 32 else 31


@pytest.mark.parametrize("width", [32, 8])
@pytest.mark.parametrize("mode,b", [("up", 3), ("down", 5), ("bfly", 6), ("idx", 13)])
def test_shfl_modes_follow_cuda_width_semantics(gpu, mode, b, width):
    c = _c(width) if mode != "up" else ((32 - width) << 8)  # __shfl_up_sync passes c = 0 (+seg)
    body = f"  shfl.sync.{mode}.b32 %r3|%p1, %r2, {b}, {c}, -1;\n"
    out, _ = run_snippet(gpu, body, DATA)
    seg = LANE // width * width
    if mode == "up":
        src = np.where(LANE - seg >= b, LANE - b, LANE)
    elif mode == "down":
        src = np.where(LANE - seg + b < width, LANE + b, LANE)
    elif mode == "bfly":
        src = np.where((LANE ^ b) < seg + width, LANE ^ b, LANE)
    else:
        src = seg + b % width
    np.testing.assert_array_equal(out, DATA[src])


def test_vote_any_all_uni_ballot(gpu):
    body = """
  setp.gt.u32 %p1, %r2, 100;
  vote.sync.ballot.b32 %r4, %p1, -1;
  vote.sync.any.pred %p2, %p1, -1;
  vote.sync.all.pred %p3, %p1, -1;
  vote.sync.uni.pred %p4, %p1, -1;
  selp.u32 %r5, 1, 0, %p2;
  selp.u32 %r6, 2, 0, %p3;
  selp.u32 %r7, 4, 0, %p4;
  or.b32 %r8, %r5, %r6;
  or.b32 %r8, %r8, %r7;
  setp.eq.u32 %p5, %r1, 0;
  selp.u32 %r3, %r4, %r8, %p5;
"""
    out, _ = run_snippet(gpu, body, DATA)
    pred = DATA > 100
    ballot = int(sum(1 << i for i in range(32) if pred[i]))
    assert out[0] == ballot
    assert (out[1:] == (1 | 0 | 0)).all()      # any, not all, not uniform


def test_match_and_redux(gpu):
    body = """
  and.b32 %r4, %r2, 3;
  match.any.sync.b32 %r5, %r4, -1;
  redux.sync.add.u32 %r6, %r2, -1;
  redux.sync.min.u32 %r7, %r2, -1;
  setp.lt.u32 %p1, %r1, 16;
  selp.u32 %r3, %r5, %r6, %p1;
  setp.eq.u32 %p2, %r1, 31;
  selp.u32 %r3, %r7, %r3, %p2;
"""
    out, _ = run_snippet(gpu, body, DATA)
    key = DATA & 3
    match = np.array([sum(1 << j for j in range(32) if key[j] == key[i]) for i in range(32)],
                     np.uint32)
    np.testing.assert_array_equal(out[:16], match[:16])
    assert (out[16:31] == DATA.sum()).all() and out[31] == DATA.min()


@pytest.mark.parametrize("op", ["min", "max"])
@pytest.mark.parametrize("mods", ["", ".abs", ".NaN", ".abs.NaN"])
def test_redux_f32_min_max(gpu, op, mods):
    """``redux.sync.{min,max}{.abs}{.NaN}.f32`` over lanes 0-15 (membermask 0xffff): NaN
    ignored unless ``.NaN`` (then the canonical NaN), +0.0 above -0.0 (PTX ISA
    "redux.sync"). Before the fix the simulator compared the float bits as unsigned
    integers."""
    body = f"""
  mov.b32 %f1, %r2;
  setp.lt.u32 %p1, %r1, 16;
  @%p1 redux.sync.{op}{mods}.f32 %f2, %f1, 0xffff;
  mov.b32 %r3, %f2;
"""
    v = (LANE.astype(np.float32) - 7.5) * 3
    v[4], v[20] = np.nan, -1000.0          # a NaN in the group, an extreme outside it
    out, _ = run_snippet(gpu, body, v)
    group = np.abs(v[:16]) if "abs" in mods else v[:16]
    if "NaN" in mods:
        want = np.uint32(0x7FFFFFFF)
    else:
        num = group[~np.isnan(group)]
        want = np.float32(num.max() if op == "max" else num.min()).view(np.uint32)
    assert (out[:16] == want).all(), (out[:16], want)


def test_redux_f32_zeros_and_all_nan(gpu):
    """``max`` of +0.0 and -0.0 is +0.0, ``min`` -0.0; only NaNs give the canonical NaN."""
    body = """
  mov.b32 %f1, %r2;
  redux.sync.max.f32 %f2, %f1, -1;
  redux.sync.min.f32 %f3, %f1, -1;
  setp.lt.u32 %p1, %r1, 16;
  selp.f32 %f4, %f2, %f3, %p1;
  mov.b32 %r3, %f4;
"""
    zeros = np.where(LANE % 2 == 0, 0.0, -0.0).astype(np.float32)
    out, _ = run_snippet(gpu, body, zeros)
    assert (out[:16] == 0).all() and (out[16:] == 0x80000000).all()
    out, _ = run_snippet(gpu, body, np.full(32, np.nan, np.float32))
    assert (out == 0x7FFFFFFF).all()


def test_atom_cas_exactly_one_winner(gpu):
    body = """
  mov.u64 %rd6, sh;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 st.shared.u32 [sh], 0;
  bar.sync 0;
  add.u32 %r4, %r1, 1;
  atom.shared.cas.b32 %r5, [%rd6], 0, %r4;
  bar.sync 0;
  ld.shared.u32 %r6, [sh];
  shl.b32 %r6, %r6, 16;
  or.b32 %r3, %r6, %r5;
"""
    out, _ = run_snippet(gpu, body, np.zeros(64, np.uint32), block=64)
    old = out & 0xFFFF
    final = out >> 16
    winners = np.flatnonzero(old == 0)
    assert winners.size == 1
    assert (final == winners[0] + 1).all()
    assert (np.delete(old, winners) == winners[0] + 1).all()


def test_atom_add_global_returns_distinct_old_values(gpu):
    body = """
  atom.global.add.u32 %r3, [%rd2], 5;
"""
    out, _ = run_snippet(gpu, body, np.zeros(64, np.uint32), block=64)
    assert sorted(out.tolist()) == list(range(0, 5 * 64, 5))


def test_bar_arrive_and_sync_with_thread_count(gpu):
    """Producer warps 0-1 write shared memory and bar.arrive; consumer warps 2-3
    bar.sync on barrier 1 with 128 threads (PTX ISA 'bar.arrive' example)."""
    body = """
  setp.lt.u32 %p1, %r1, 64;
  mul.wide.u32 %rd6, %r1, 4;
  mov.u64 %rd7, sh;
  add.s64 %rd8, %rd7, %rd6;
  @!%p1 bra CONSUMER;
  mul.lo.u32 %r4, %r2, 3;
  st.shared.u32 [%rd8], %r4;
  bar.arrive 1, 128;
  mov.u32 %r3, 0;
  bra DONE;
CONSUMER:
  bar.sync 1, 128;
  ld.shared.u32 %r3, [%rd8+-256];
DONE:
"""
    inp = np.arange(128, dtype=np.uint32) + 10
    out, res = run_snippet(gpu, body, inp, block=128)
    np.testing.assert_array_equal(out[64:], inp[:64] * 3)
    assert (out[:64] == 0).all()


def test_a_counted_barrier_completes_once_per_count_in_arrival_order(gpu):
    """``bar.sync 1, 64`` taken by four warps: warps 0-2 arrive early, warp 3 after a
    loop that reads memory (so the simulator looks at the barrier while warp 3 still
    runs). The first 64 arrivals complete a round and the barrier starts again (PTX ISA
    "bar, barrier": reinitialized when it completes), so warp 2 waits for warp 3. Before
    the fix all three early warps were released together and warp 3, alone, was reported
    as a deadlock. Each warp records the round it was released in (a shared counter
    bumped by an atomic after its release)."""
    body = """
  shr.u32 %r10, %r1, 5;
  setp.eq.u32 %p1, %r10, 3;
  mov.u32 %r11, 0;
  mov.u64 %rd9, sh;
  @%p1 bra SLOW;
ARRIVE:
  bar.sync 1, 64;
  atom.shared.add.u32 %r3, [%rd9], 1;
  bra.uni END;
SLOW:
  ld.volatile.global.u32 %r12, [%rd5];
  add.u32 %r11, %r11, 1;
  setp.lt.u32 %p2, %r11, 2000;
  @%p2 bra SLOW;
  bra.uni ARRIVE;
END:
"""
    out, res = run_snippet(gpu, body, np.zeros(128, np.uint32), block=128)
    assert res.findings == []
    # old counter values: 0..127 in release order, counted up from the word fresh shared
    # memory holds (sim.machine.FILL; nothing zeroes the counter)
    order = (out - np.uint32(0x7FF8DEAD)).reshape(4, 32)
    first, second = order[:2].ravel(), order[2:].ravel()
    assert sorted(first.tolist()) == list(range(64))     # warps 0 and 1: the first round
    assert sorted(second.tolist()) == list(range(64, 128))


def test_bar_red_popc_and_or(gpu):
    body = """
  setp.lt.u32 %p1, %r2, 40;
  bar.red.popc.u32 %r4, 0, %p1;
  setp.eq.u32 %p2, %r2, 77;
  bar.red.or.pred %p3, 0, %p2;
  selp.u32 %r5, 1000, 0, %p3;
  add.u32 %r3, %r4, %r5;
"""
    inp = np.arange(64, dtype=np.uint32) * 2
    out, _ = run_snippet(gpu, body, inp, block=64)
    assert (out == np.sum(inp < 40) + 0).all()       # no thread has 77


def test_bar_red_result_is_not_written_by_a_later_bar_sync(gpu):
    """Only a ``bar.red`` writes its destination: a plain ``bar.sync`` completed later (here
    by warps arriving apart) leaves the register, reused by ``mov``, alone. Before the fix
    every barrier completion after a ``bar.red`` rewrote its destination with a count."""
    body = """
  setp.lt.u32 %p1, %r2, 40;
  bar.red.popc.u32 %r4, 0, %p1;
  mov.u32 %r4, 123;
  setp.lt.u32 %p2, %r1, 32;
  @%p2 bra WORK;
BAR:
  bar.sync 0;
  mov.u32 %r3, %r4;
  bra.uni DONE;
WORK:
  add.u32 %r5, %r4, 1;
  bra.uni BAR;
DONE:
"""
    out, _ = run_snippet(gpu, body, np.arange(64, dtype=np.uint32), block=64)
    assert (out == 123).all()


def test_two_bar_red_kinds_completing_together_each_get_their_own_result(gpu):
    """Warp 0 counts at ``bar.red.popc`` on barrier 1, warp 1 ands at ``bar.red.and`` on
    barrier 2 (32 threads each): each reduction is over its own barrier's threads and is
    written with its own instruction's operation (PTX ISA "bar.red")."""
    body = """
  setp.lt.u32 %p1, %r2, 40;
  setp.lt.u32 %p5, %r1, 32;
  @!%p5 bra W1;
  bar.red.popc.u32 %r4, 1, 32, %p1;
  bra.uni DONE1;
W1:
  bar.red.and.pred %p3, 2, 32, %p1;
  selp.u32 %r4, 1000, 2000, %p3;
DONE1:
  mov.u32 %r3, %r4;
"""
    inp = np.r_[np.arange(32) * 2, np.arange(32)].astype(np.uint32)
    out, _ = run_snippet(gpu, body, inp, block=64)
    assert (out[:32] == np.count_nonzero(inp[:32] < 40)).all()      # 20
    assert (out[32:] == 1000).all()                                  # all of 0..31 < 40


def _f32_bits(x):
    return np.float32(x).view(np.uint32)


FLOATS = np.array([2.5, -2.5, 3.5, -0.5, 1.7, -1.7, 1e10, -3e9, np.nan, np.inf, 0.49999997,
                   -7.0] + [0.0] * 20, np.float32)


@pytest.mark.parametrize("mode,ref", [
    ("rni", np.rint), ("rzi", np.trunc), ("rmi", np.floor), ("rpi", np.ceil)])
def test_cvt_float_to_int_rounding_and_saturation(gpu, mode, ref):
    out, _ = run_snippet(gpu, f"  cvt.{mode}.s32.f32 %r3, %r2;\n", FLOATS)
    want = ref(FLOATS.astype(np.float64))
    want = np.where(np.isnan(want), 0, np.clip(want, -2**31, 2**31 - 1)).astype(np.int64)
    np.testing.assert_array_equal(out.view(np.int32), want)


def test_cvt_float_to_unsigned_saturates_negative_to_zero(gpu):
    out, _ = run_snippet(gpu, "  cvt.rzi.u32.f32 %r3, %r2;\n", FLOATS)
    want = np.where(np.isnan(FLOATS), 0, np.clip(np.trunc(FLOATS.astype(np.float64)), 0,
                                                  2**32 - 1)).astype(np.uint32)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("cvt,want", [
    # PTX ISA 9.7.9.21 "cvt", Integer Notes: a NaN input gives "Zero if source is not .f64
    # and destination is not .s64, .u64. Otherwise 1 << (BitWidth(dst) - 1) corresponding
    # to the value of (MAXINT >> 1) + 1 for unsigned type or MININT for signed type."
    ("cvt.rzi.s32.f32 %r3, %r2;", 0),
    ("cvt.rzi.u32.f32 %r3, %r2;", 0),
    ("cvt.rzi.s16.f32 %rs1, %r2;\n  cvt.s32.s16 %r3, %rs1;", 0),
    ("cvt.f64.f32 %fd1, %r2;\n  cvt.rzi.s32.f64 %r3, %fd1;", -2**31),
    ("cvt.f64.f32 %fd1, %r2;\n  cvt.rni.u32.f64 %r3, %fd1;", 2**31),
    ("cvt.f64.f32 %fd1, %r2;\n  cvt.rzi.s16.f64 %rs1, %fd1;\n  cvt.s32.s16 %r3, %rs1;", -2**15),
    ("cvt.rzi.s64.f32 %rd6, %r2;\n  shr.u64 %rd6, %rd6, 32;\n  cvt.u32.u64 %r3, %rd6;",
     -2**31),                       # the high word of -2**63
    ("cvt.f64.f32 %fd1, %r2;\n  cvt.rzi.u64.f64 %rd6, %fd1;\n  shr.u64 %rd6, %rd6, 32;\n"
     "  cvt.u32.u64 %r3, %rd6;", 2**31),     # the high word of 2**63
])
def test_cvt_of_nan_to_int_follows_the_isa_rule(gpu, cvt, want):
    out, _ = run_snippet(gpu, f"  {cvt}\n", np.full(32, np.nan, np.float32))
    assert (out == np.uint32(want % 2**32)).all(), (cvt, out[:2])


def _rz_f64_to_f32(x: float) -> float:
    """Round toward zero by truncating the float64 significand to 24 bits (normal range)."""
    if x == 0 or not np.isfinite(x):
        return np.float32(x)
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    bits &= ~((1 << 29) - 1)
    return np.float32(struct.unpack("<d", struct.pack("<Q", bits))[0])


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_cvt_f64_to_f32_directed_rounding(gpu, mode):
    vals = np.array([1 + 2**-30, -(1 + 2**-30), 1 / 3, -1 / 3, 0.1, 1e-3, 2.0, -5.0] * 4)
    body = """
  mul.wide.u32 %rd9, %r1, 8;
  add.s64 %rd10, %rd2, %rd9;
  ld.global.f64 %fd1, [%rd10];
  cvt.MODE.f32.f64 %f1, %fd1;
  mov.b32 %r3, %f1;
""".replace("MODE", mode)
    a_in = gpu.put(vals)
    a_out = gpu.put(np.zeros(32, np.float32))
    sim.run(sim.parse_module(HEAD + body + TAIL), "k", 1, 32, struct.pack("<QQ", a_out, a_in),
            gpu.mem)
    out = gpu.get(a_out)
    for v, o in zip(vals, out):
        rz = _rz_f64_to_f32(v)
        exact = float(rz) == v
        up = np.nextafter(rz, np.float32(np.copysign(np.inf, v)))  # away from zero
        want = {"rz": rz,
                "rm": rz if exact or v > 0 else up,
                "rp": rz if exact or v < 0 else up,
                "rn": np.float32(v)}[mode]
        assert o == want, (mode, v, o, want)


@pytest.mark.parametrize("mode,want", [("rn", 16777216.0), ("rz", 16777216.0),
                                       ("rm", 16777216.0), ("rp", 16777218.0)])
def test_cvt_int_to_float_rounding(gpu, mode, want):
    inp = np.full(32, 16777217, np.uint32)   # 2**24 + 1 is not representable in float32
    out, _ = run_snippet(gpu, f"  cvt.{mode}.f32.s32 %f1, %r2;\n  mov.b32 %r3, %f1;\n", inp)
    assert (out.view(np.float32) == np.float32(want)).all()


def test_cvt_f16_and_sat(gpu):
    body = """
  cvt.rn.f16.f32 %rs1, %r2;
  cvt.f32.f16 %f1, %rs1;
  cvt.sat.f32.f32 %f2, %f1;
  mov.b32 %r4, %f1;
  mov.b32 %r5, %f2;
  setp.lt.u32 %p1, %r1, 16;
  selp.b32 %r3, %r4, %r5, %p1;
"""
    vals = np.linspace(-2, 2, 32).astype(np.float32) * np.float32(1.0001)
    out, _ = run_snippet(gpu, body, vals)
    half = vals.astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(out.view(np.float32)[:16], half[:16])
    np.testing.assert_array_equal(out.view(np.float32)[16:], np.clip(half[16:], 0, 1))


def test_bit_operations(gpu):
    body = """
  bfe.u32 %r4, %r2, 4, 7;
  bfe.s32 %r5, %r2, 28, 4;
  bfi.b32 %r6, %r1, %r2, 8, 5;
  popc.b32 %r7, %r2;
  clz.b32 %r8, %r2;
  brev.b32 %r9, %r2;
  prmt.b32 %r10, %r2, %r1, 0x5140;
  bfind.u32 %r11, %r2;
  xor.b32 %r3, %r4, %r5;
  add.u32 %r3, %r3, %r6;
  mul.lo.u32 %r12, %r7, 65599;
  add.u32 %r3, %r3, %r12;
  mul.lo.u32 %r12, %r8, 977;
  add.u32 %r3, %r3, %r12;
  xor.b32 %r3, %r3, %r9;
  add.u32 %r3, %r3, %r10;
  mul.lo.u32 %r12, %r11, 31;
  add.u32 %r3, %r3, %r12;
"""
    x = np.random.default_rng(5).integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
    x[0], x[1] = 0, 0xFFFFFFFF
    out, _ = run_snippet(gpu, body, x)

    def ref(v, t):
        v, t = int(v), int(t)
        bfe_u = (v >> 4) & 0x7F
        f = (v >> 28) & 0xF
        bfe_s = (f - 16 if f & 8 else f) & 0xFFFFFFFF
        mask = ((1 << 5) - 1) << 8
        bfi = (v & ~mask | ((t << 8) & mask)) & 0xFFFFFFFF
        popc = bin(v).count("1")
        clz = 32 - v.bit_length()
        brev = int(f"{v:032b}"[::-1], 2)
        bytes_ = [(v >> (8 * k)) & 0xFF for k in range(4)] + [(t >> (8 * k)) & 0xFF for k in range(4)]
        prmt = sum(bytes_[(0x5140 >> (4 * k)) & 7] << (8 * k) for k in range(4))
        bfind = v.bit_length() - 1 & 0xFFFFFFFF
        r = (bfe_u ^ bfe_s) + bfi + popc * 65599 + clz * 977
        r = (r & 0xFFFFFFFF) ^ brev
        return (r + prmt + bfind * 31) & 0xFFFFFFFF
    assert out.tolist() == [ref(v, t) for v, t in zip(x, range(32))]


def test_carry_chain_and_mul_hi(gpu):
    """64-bit add via add.cc/addc on 32-bit halves, and mul.hi.u32, against Python ints."""
    body = """
  mul.lo.u32 %r4, %r2, 2654435761;
  add.cc.u32 %r5, %r2, %r4;
  addc.u32 %r6, %r1, 7;
  mul.hi.u32 %r7, %r2, %r4;
  mad.lo.cc.u32 %r8, %r2, %r2, %r4;
  madc.hi.u32 %r9, %r2, %r2, 0;
  xor.b32 %r3, %r5, %r6;
  add.u32 %r3, %r3, %r7;
  xor.b32 %r3, %r3, %r8;
  add.u32 %r3, %r3, %r9;
"""
    x = np.random.default_rng(6).integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
    out, _ = run_snippet(gpu, body, x)
    M = 0xFFFFFFFF
    want = []
    for t, v in enumerate(x.tolist()):
        r4 = v * 2654435761 & M
        s = v + r4
        r5, c = s & M, s >> 32
        r6 = (t + 7 + c) & M
        r7 = (v * r4) >> 32
        s2 = (v * v & M) + r4
        r8, c2 = s2 & M, s2 >> 32
        r9 = (((v * v) >> 32) + c2) & M
        want.append(((((r5 ^ r6) + r7) & M ^ r8) + r9) & M)
    assert out.tolist() == want


def test_unimplemented_opcode_names_opcode_and_line(gpu):
    body = "  frobnicate.b32 %r3, %r2;\n"
    line = HEAD.count("\n") + 1
    with pytest.raises(sim.SimulatorError, match=rf"PTX line {line}: opcode 'frobnicate'"):
        run_snippet(gpu, body, DATA)


def test_malformed_ptx_names_the_line():
    with pytest.raises(sim.SimulatorError, match="PTX line 3"):
        sim.parse_module(".version 8.0\n.target sm_90\n.visible .entry k(.param .zz x)\n{\nret;\n}\n")


def _kernel(body, regs=".reg .b32 %r<8>;\n  .reg .b64 %rd<8>;\n  .reg .pred %p<4>;", extra=""):
    return f"""
.version 8.0
.target sm_90
.address_size 64
{extra}
.visible .entry k(.param .u64 out)
{{
  {regs}
{body}
}}
"""


def test_dynamic_shared_memory_and_shared_bounds(gpu):
    body = """
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  mov.u64 %rd3, dyn;
  add.s64 %rd4, %rd3, %rd2;
  st.shared.u32 [%rd4], %r1;
  bar.sync 0;
  xor.b32 %r2, %r1, 1;
  mul.wide.u32 %rd5, %r2, 4;
  add.s64 %rd6, %rd3, %rd5;
  ld.shared.u32 %r3, [%rd6];
  add.s64 %rd7, %rd1, %rd2;
  st.global.u32 [%rd7], %r3;
  ret;
"""
    ptx = _kernel(body, extra=".extern .shared .align 16 .b8 dyn[];")
    mod = sim.parse_module(ptx)
    out = gpu.put(np.zeros(64, np.uint32))
    res = sim.run(mod, "k", 1, 64, struct.pack("<Q", out), gpu.mem, dynamic_shared=256)
    assert res.findings == []
    assert gpu.get(out).tolist() == [t ^ 1 for t in range(64)]
    # 128 bytes of dynamic shared memory are too few for 64 threads x 4 bytes
    res = sim.run(mod, "k", 1, 64, struct.pack("<Q", out), gpu.mem, dynamic_shared=128)
    [f] = res.findings
    assert f.kind == "out_of_bounds" and f.thread == (32, 0, 0)
    assert "shared write of 4 bytes at address 0x80" in f.message
    assert "128 bytes of shared memory" in f.message


def test_local_memory_bounds(gpu):
    body = """
  mov.u64 %rd1, depot;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.local.u32 [%rd3], %r1;
  ret;
"""
    ptx = _kernel(body, regs=".local .align 4 .b8 depot[32];\n  .reg .b32 %r<4>;\n"
                             "  .reg .b64 %rd<4>;")
    res = sim.run(sim.parse_module(ptx), "k", 1, 32, bytes(8), gpu.mem)
    [f] = res.findings
    assert f.kind == "out_of_bounds" and f.thread == (8, 0, 0)
    assert "local write" in f.message and "32 bytes of local memory" in f.message


def test_trap_and_assertfail_stop_the_launch(gpu):
    trap = _kernel("""
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, 7;
  @%p1 trap;
  ret;
""")
    res = sim.run(sim.parse_module(trap), "k", 1, 32, bytes(8), gpu.mem)
    assert res.partial and [f.kind for f in res.findings] == ["trap"]
    assert res.findings[0].thread == (7, 0, 0) and res.findings[0].ptx_line == 14

    msg = b"x > 0\0"
    extra = (f".global .align 1 .b8 msg[{len(msg)}] = {{{', '.join(str(b) for b in msg)}}};\n"
             ".global .align 1 .b8 file[5] = {107, 46, 112, 121, 0};\n"
             ".extern .func __assertfail(.param .b64 a, .param .b64 b, .param .b32 c, "
             ".param .b64 d, .param .b64 e);")
    body = """
  mov.u64 %rd1, msg;
  cvta.global.u64 %rd2, %rd1;
  mov.u64 %rd3, file;
  cvta.global.u64 %rd4, %rd3;
  {
  .param .b64 param0;
  st.param.b64 [param0], %rd2;
  .param .b64 param1;
  st.param.b64 [param1], %rd4;
  .param .b32 param2;
  st.param.b32 [param2], 12;
  .param .b64 param3;
  st.param.b64 [param3], 0;
  .param .b64 param4;
  st.param.b64 [param4], 1;
  call.uni __assertfail, (param0, param1, param2, param3, param4);
  }
  ret;
"""
    res = sim.run(sim.parse_module(_kernel(body, extra=extra)), "k", 2, 32, bytes(8), gpu.mem)
    assert res.partial
    [f] = res.findings
    assert f.kind == "trap" and "device assertion failed: x > 0 (k.py:12)" in f.message
    assert f.block == (0, 0, 0) and f.thread == (0, 0, 0)


WAIT_BODY = """
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  mov.u32 %r2, 0;
  setp.lt.u32 %p1, %r1, 16;
  @%p1 bra LOW;
  mov.u32 %r2, 100;
SHFL:
  shfl.sync.idx.b32 %r3, %r2, 0, 31, -1;
  st.global.u32 [%rd3], %r3;
  ret;
LOW:
  LOWCODE
"""


def test_shfl_waits_for_lanes_that_arrive_later(gpu):
    """Lanes 16-31 reach the shuffle first (lower PC); they must wait for lanes 0-15,
    which set their value and branch back, so every lane reads lane 0's 7."""
    ptx = _kernel(WAIT_BODY.replace("LOWCODE", "mov.u32 %r2, 7;\n  bra SHFL;"))
    out = gpu.put(np.zeros(32, np.uint32))
    res = sim.run(sim.parse_module(ptx), "k", 1, 32, struct.pack("<Q", out), gpu.mem)
    assert res.findings == []
    assert gpu.get(out).tolist() == [7] * 32


def test_shfl_with_exited_member_lanes_is_reported(gpu):
    ptx = _kernel(WAIT_BODY.replace("LOWCODE", "ret;"))
    out = gpu.put(np.zeros(32, np.uint32))
    res = sim.run(sim.parse_module(ptx), "k", 1, 32, struct.pack("<Q", out), gpu.mem)
    [f] = res.findings
    assert f.kind == "warp_sync" and "exited" in f.message and f.thread == (16, 0, 0)
    assert not res.partial


def test_register_lists_and_scoped_names(gpu):
    """`.reg .u32 a, b, c;` declares every name; a scoped block may reuse names."""
    body = """
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  {
  .reg .u32 lo, hi, %r1;
  mov.u32 %r1, 5;
  mov.b64 {lo, hi}, 0x0000000700000003;
  add.u32 lo, lo, hi;
  add.u32 %r2, lo, %r1;
  }
  add.u32 %r3, %r2, %r1;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
"""
    out = gpu.put(np.zeros(32, np.uint32))
    res = sim.run(sim.parse_module(_kernel(body)), "k", 1, 32, struct.pack("<Q", out), gpu.mem)
    assert res.findings == []
    assert gpu.get(out).tolist() == [3 + 7 + 5 + t for t in range(32)]


def test_float32_nan_results_are_canonical(gpu):
    body = """
  mov.b32 %f1, %r2;
  add.f32 %f2, %f1, %f1;
  mul.rn.f32 %f3, %f1, 0f00000000;
  min.f32 %f4, %f1, %f1;
  neg.f32 %f5, %f1;
  mov.b32 %r4, %f2;
  mov.b32 %r5, %f3;
  mov.b32 %r6, %f4;
  mov.b32 %r7, %f5;
  setp.lt.u32 %p1, %r1, 8;
  selp.b32 %r3, %r4, %r5, %p1;
  setp.ge.u32 %p2, %r1, 16;
  selp.b32 %r3, %r6, %r3, %p2;
  setp.ge.u32 %p3, %r1, 24;
  selp.b32 %r3, %r7, %r3, %p3;
"""
    inp = np.full(32, 0xFFC01234, np.uint32)       # a negative NaN with a payload
    inp[8:16] = np.float32(np.inf).view(np.uint32)  # inf * 0 = NaN
    out, _ = run_snippet(gpu, body, inp)
    assert (out[:24] == 0x7FFFFFFF).all()
    assert (out[24:] == 0x7FC01234).all()            # neg only flips the sign bit
