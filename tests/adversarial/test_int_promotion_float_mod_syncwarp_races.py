"""Small mixed-sign integer promotion,
NumPy float ``%``/``//``, and racecheck's ``bar.warp.sync`` ordering.

References are independent: NumPy for arithmetic, and for races the CUDA
Programming Guide's ``__syncwarp()`` ("guarantees memory ordering among threads
participating in the barrier"), whose happens-before order is transitive.
Found: racecheck reported a chain of partial-mask syncs (lane 0 writes, syncs
with lane 1, lane 1 syncs with lane 2, lane 2 reads) as a read-after-write race
(fixed in warp_lab/sim/racecheck.py); the simulator rounded ``fma.rz.f32`` to
nearest, so libdevice-style ``fmodf`` (which NVPTX inlines with an ``fma.rz``
step) gave float32 ``%`` off by a whole divisor when the quotient is large
(fixed in warp_lab/sim/fp.py; tests/sim/test_directed_rounding.py); racecheck
kept one read clock per byte, so readers at two partial-mask sync epochs, each
ordered before a writer, were a false write-after-read (fixed in
warp_lab/sim/racecheck.py: a read clock per reader lane).
"""

import numpy as np
import pytest

import warp_lab as wl

from adv_cells import cell_kernel

# ------------------------------------------------------------ small mixed-sign ints

A8 = np.array([-128, -1, 0, 1, 127, -100, 77], np.int8)
U8 = np.array([255, 255, 7, 200, 128, 3, 250], np.uint8)
U16 = np.array([65535, 1, 9, 40000, 12345, 7, 65000], np.uint16)


@pytest.mark.parametrize("op", ["*", "-", "//", "%", "|", "<"])
def test_int8_uint8_runtime_and_folded_match_numpy(op):
    """a[i] op b[i] at run time, and the same op on the constants of lane 0 (folded)."""
    kernel = cell_kernel(f"""
@wl.kernel
def k(a: wl.array(dtype=wl.int8), b: wl.array(dtype=wl.uint8), c: wl.array(dtype=wl.uint16),
      o: wl.array(dtype=wl.int64)):
    i = wl.tid()
    o[i] = wl.int64(a[i] {op} b[i])
    o[7 + i] = wl.int64(a[i] {op} c[i])
    if i == 0:
        o[14] = wl.int64(wl.int8({int(A8[0])}) {op} wl.uint8({int(U8[0])}))
""")
    o = np.zeros(15, np.int64)
    wl.launch(kernel, dim=7, inputs=[A8, U8, U16, o], device="sim")
    want8 = eval(f"A8 {op} U8").astype(np.int64)      # noqa: S307 - the test's own operator
    want16 = eval(f"A8 {op} U16").astype(np.int64)    # noqa: S307
    np.testing.assert_array_equal(o[:7], want8)
    np.testing.assert_array_equal(o[7:14], want16)
    assert o[14] == want8[0]


def test_augmented_narrowing_points_at_the_line():
    kernel = cell_kernel("""
@wl.kernel
def k(a: wl.array(dtype=wl.int8), o: wl.array(dtype=wl.int32)):
    x = wl.uint8(200)
    x += a[0]
    o[0] = wl.int32(x)
""")
    with pytest.raises(wl.KernelCompileError) as info:
        wl.compile(kernel, sass=False)
    msg = str(info.value)
    assert ":4:5:" in msg and "int16" in msg and "wl.uint8(" in msg


# ------------------------------------------------------------ float % and //

NASTY = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.1, -3.3, 1e30, -2.0**31, 7.0, 1e-30]


def _float_mod(dtype, a, b):
    name = np.dtype(dtype).name
    kernel = cell_kernel(f"""
@wl.kernel
def k(a: wl.array(dtype=wl.{name}), b: wl.array(dtype=wl.{name}),
      m: wl.array(dtype=wl.{name}), q: wl.array(dtype=wl.{name})):
    i = wl.tid()
    m[i] = a[i] % b[i]
    q[i] = a[i] // b[i]
""")
    m, q = np.zeros_like(a), np.zeros_like(a)
    wl.launch(kernel, dim=a.size, inputs=[a, b, m, q], device="sim")
    return m, q


def _assert_same(got, want):
    np.testing.assert_array_equal(np.signbit(got[~np.isnan(want)]), np.signbit(want[~np.isnan(want)]))
    np.testing.assert_array_equal(got, want)  # NaNs compare equal here


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_float_mod_floordiv_nasty_values_match_numpy(dtype):
    with np.errstate(over="ignore"):  # 1e30 is inf in float16
        a = np.array([x for x in NASTY for _ in NASTY]).astype(dtype)
        b = np.array([y for _ in NASTY for y in NASTY]).astype(dtype)
    m, q = _float_mod(dtype, a, b)
    with np.errstate(all="ignore"):
        _assert_same(m, np.mod(a, b))
        _assert_same(q, np.floor_divide(a, b))


def test_float32_mod_large_quotient_matches_numpy():
    a = np.array([-2.0**31, 1e30, 0.1, 7.0], np.float32)
    b = np.array([3.3, 0.1, 1e-30, 6e-8], np.float32)
    m, q = _float_mod(np.float32, a, b)
    np.testing.assert_array_equal(m, np.mod(a, b))


# ------------------------------------------------------------ racecheck and __syncwarp

_RACE_HEAD = """
@wl.kernel
def k(x: wl.array(dtype=wl.int32)):
    buf = wl.shared_array(64, wl.int32)
    t = wl.thread_idx.x
"""


def _races(body, threads=32):
    kernel = cell_kernel(_RACE_HEAD + body)
    res = wl.launch(kernel, inputs=[np.zeros(128, np.int32)], grid=(2, 1, 1),
                    block=(threads, 1, 1), device="sim", checks=("racecheck",))
    return {f.kind for f in res.findings}


def test_syncwarp_orders_transitively_through_partial_masks():
    # lane 0 writes; lanes 0,1 sync; then lanes 1,2 sync; lane 2 reads: ordered (was race_raw)
    assert _races("""
    if t == 0:
        buf[0] = 5
    if t < 2:
        wl.syncwarp(0x3)
    if t >= 1 and t < 3:
        wl.syncwarp(0x6)
    if t == 2:
        x[0] = buf[0]
""") == set()


def test_syncwarp_chain_in_the_wrong_order_is_still_a_race():
    # lanes 1,2 sync before lane 1 syncs with the writer: lane 2 is not ordered after it
    assert _races("""
    if t == 0:
        buf[0] = 5
    if t >= 1 and t < 3:
        wl.syncwarp(0x6)
    if t < 2:
        wl.syncwarp(0x3)
    if t == 2:
        x[0] = buf[0]
""") == {"race_raw"}


@pytest.mark.parametrize("body, threads, want", [
    # the low half syncs among itself; the high half reads its writes with its own sync
    ("""
    if t < 16:
        buf[t] = t
    m = wl.uint32(0x0000FFFF) if t < 16 else wl.uint32(0xFFFF0000)
    wl.syncwarp(m)
    if t >= 16:
        x[t] = buf[t - 16]
""", 32, {"race_raw"}),
    ("""
    if t < 16:
        buf[t] = t
        wl.syncwarp(0x0000FFFF)
        x[t] = buf[15 - t]
""", 32, set()),
    # 48 threads: the second warp has 16 lanes
    ("""
    buf[t] = t
    if t >= 32:
        wl.syncwarp(0x0000FFFF)
        x[t] = buf[32 + (t + 1) % 16]
""", 48, set()),
    ("""
    buf[t] = t
    wl.syncwarp(wl.FULL_MASK)
    x[t] = buf[47 - t]
""", 48, {"race_raw"}),
])
def test_syncwarp_partial_masks_and_partial_warps(body, threads, want):
    assert _races(body, threads) == want


@pytest.mark.parametrize("later, mask", [
    ("t == 1", "0x6"),
    ("t == 1 or t == 3", "0xE"),     # two lanes read the byte in one instruction
])
def test_readers_at_two_sync_epochs_each_ordered_before_the_writer(later, mask):
    # lane 0 reads, syncs with lane 2; lane 1 reads later, syncs with lane 2; lane 2 writes
    # (was race_war: one read clock per byte, the latest reader's, checked for both lanes)
    assert _races(f"""
    if t == 0:
        x[0] = buf[5]
    if t == 0 or t == 2:
        wl.syncwarp(0x5)
    if {later}:
        x[t] = buf[5]
    if {later} or t == 2:
        wl.syncwarp({mask})
    if t == 2:
        buf[5] = 7
""") == set()


@pytest.mark.parametrize("first, second", [
    ("0x9", "0x6"),     # lane 0 syncs with lane 3, not the writer: its earlier read races
    ("0x5", "0xA"),     # lane 1 syncs with lane 3, not the writer: its later read races
])
def test_a_reader_at_another_sync_epoch_not_ordered_before_the_writer_races(first, second):
    # as above, but one of the two readers never syncs with the writer (lane 2), directly
    # or through a chain: a write-after-read hazard (CUDA Programming Guide, __syncwarp())
    a, b = int(first, 16), int(second, 16)
    assert _races(f"""
    if t == 0:
        x[0] = buf[5]
    if t == 0 or t == {3 if a & 8 else 2}:
        wl.syncwarp({first})
    if t == 1:
        x[1] = buf[5]
    if t == 1 or t == {3 if b & 8 else 2}:
        wl.syncwarp({second})
    if t == 2:
        buf[5] = 7
""") == {"race_war"}


@pytest.mark.parametrize("first, second, want", [
    ("0x5", "0x6", set()),
    ("0x5", "0xA", {"race_war"}),   # last round: lane 1 syncs with lane 3, not the writer
    ("0x9", "0x6", {"race_war"}),   # last round: lane 0 syncs with lane 3, not the writer
])
def test_readers_at_two_sync_epochs_over_many_bytes_and_rounds(first, second, want):
    # 64 ints read by lanes 0 and 1 at two epochs, then rewritten by lane 2, three rounds
    # (the per-lane read clocks of 2 blocks x 256 bytes, freed by each write and reused);
    # a reader that syncs with lane 3 in the last round is not ordered before the write
    a, b = int(first, 16), int(second, 16)
    assert _races(f"""
    r = 0
    while r < 3:
        if t == 0:
            j = 0
            while j < 64:
                x[0] += buf[j]
                j += 1
        if r < 2 and (t == 0 or t == 2):
            wl.syncwarp(0x5)
        if r == 2 and (t == 0 or t == {3 if a & 8 else 2}):
            wl.syncwarp({first})
        if t == 1:
            j = 0
            while j < 64:
                x[1] += buf[j]
                j += 1
        if r < 2 and (t == 1 or t == 2):
            wl.syncwarp(0x6)
        if r == 2 and (t == 1 or t == {3 if b & 8 else 2}):
            wl.syncwarp({second})
        if t == 2:
            j = 0
            while j < 64:
                buf[j] = r
                j += 1
        if t < 3:
            wl.syncwarp(0x7)
        r += 1
""") == want


def test_a_conditional_mask_with_full_mask_is_uint32():
    """CUDA's ``unsigned m = c ? 0xFF : 0xFFFFFFFF`` ported as ``0xFF if c else
    wl.FULL_MASK``: was int64 and refused ("the mask must be uint32")."""
    from adv_cells import cell_kernel

    k = cell_kernel("""
@wl.kernel
def bcast(x: wl.array(dtype=wl.int32), c: int):
    m = 0xFF if c > 0 else wl.FULL_MASK
    wl.syncwarp(0x0000FFFF if c > 1 else wl.FULL_MASK)
    x[wl.tid()] = wl.shfl_sync(m, x[wl.tid()], 3)
""")
    x = np.arange(64, dtype=np.int32) * 5
    wl.launch(k, dim=64, inputs=[x, 0], device="sim", checks=("memcheck",))
    np.testing.assert_array_equal(x, np.repeat(np.arange(64).reshape(2, 32)[:, 3] * 5, 32))
    assert isinstance(wl.FULL_MASK, np.uint32) and wl.FULL_MASK == 2**32 - 1
