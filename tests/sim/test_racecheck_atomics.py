"""racecheck with atomics: a plain shared access and an atomic one with no barrier between.

PTX ISA 8.8 "Memory Consistency Model" (Data-race): two conflicting accesses (one of them
a write; an atomic reads and writes) race when they are not ordered and not both morally
strong; atomics are strong, a plain ``ld``/``st`` is not. So the classic student bug, bins
zeroed by some threads and counted into by ``wl.atomic_add`` with no ``wl.syncthreads()``
between, is a race the simulator's in-order execution hides (it gives the right counts);
two atomics of one bin are none. The kernels are compiled and run for real: the
simulator's answer is checked too, and each finding's lines and threads.
"""

import inspect

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.examples import CORPUS

from sim_helpers import Launcher

CHECKS = ("memcheck", "racecheck", "barrier")


def _line(kernel, marker):
    """The file line of ``kernel``'s source holding ``marker`` (a comment)."""
    src, first = inspect.getsourcelines(kernel.fn if hasattr(kernel, "fn") else kernel)
    (k,) = [k for k, text in enumerate(src) if marker in text]
    return first + k


def _races(res):
    return [f for f in res.findings if f.kind.startswith("race")]


@wl.kernel
def histogram(x: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.int32), sync: int):
    local = wl.shared_array(16, wl.int32)
    t = wl.thread_idx.x
    if t < 16:
        local[t] = 0                                        # zero
    if sync:
        wl.syncthreads()
    wl.atomic_add(local, x[wl.block_idx.x * 64 + t], 1)     # count
    wl.syncthreads()
    if t < 16:
        wl.atomic_add(out, t, local[t])


@wl.kernel
def one_counter(out: wl.array(dtype=wl.int32), sync: int):
    local = wl.shared_array(1, wl.int32)
    t = wl.thread_idx.x
    if t == 0:
        local[0] = 5                                        # set
    if sync:
        wl.syncthreads()
    wl.atomic_add(local, 0, 1)                              # add
    wl.syncthreads()
    if t == 0:
        out[0] = local[0]


def _fix_named(f):
    assert "wl.syncthreads()" in f.message, f.message


def test_histogram_zeroed_without_a_barrier_races_with_its_atomics():
    x = (np.arange(128) % 16).astype(np.int32)
    for sync in (0, 1):
        out = np.zeros(16, np.int32)
        res = wl.launch(histogram, inputs=[x, out, sync], grid=(2, 1, 1), block=(64, 1, 1),
                        device="sim", checks=CHECKS)
        assert (out == 8).all()                 # in-order simulation: right either way
        races = _races(res)
        if sync:
            assert races == []
            continue
        (f,) = races
        assert f.kind == "race_raw" and f.details["atomic"] == "this"
        assert f.source_line == _line(histogram, "# count")
        # thread 16 counts into bin 0 (x = t % 16), which thread 0 zeroed
        assert f.block == (0, 0, 0) and f.thread == (16, 0, 0)
        assert f.details["other_thread"] == (0, 0, 0)
        assert f.details["other_source_text"].startswith("local[t] = 0")
        assert f.details["index"] == (0,)
        assert "this atomic access races with a plain (non-atomic) access" in f.message
        _fix_named(f)


def test_a_counter_set_by_thread_0_without_a_barrier_races_with_the_atomics():
    for sync in (0, 1):
        out = np.zeros(1, np.int32)
        res = wl.launch(one_counter, inputs=[out, sync], grid=(1, 1, 1), block=(64, 1, 1),
                        device="sim", checks=CHECKS)
        assert out[0] == 69                     # a GPU may add some before the 5 lands
        if sync:
            assert _races(res) == []
            continue
        (f,) = _races(res)
        assert f.kind == "race_raw" and f.details["atomic"] == "this"
        assert f.source_line == _line(one_counter, "# add")
        assert f.thread == (1, 0, 0) and f.details["other_thread"] == (0, 0, 0)
        assert f.details["other_source_line"] == _line(one_counter, "# set")
        _fix_named(f)


@wl.kernel
def after_atomics(out: wl.array(dtype=wl.int32), mode: int):
    c = wl.shared_array(1, wl.int32)
    t = wl.thread_idx.x
    if t == 0:
        c[0] = 0
    wl.syncthreads()
    if mode == 0:
        wl.atomic_add(c, 0, 1)
        out[t] = c[0]                                       # read
    elif mode == 1:
        wl.atomic_add(c, 0, 1)
        if t == 0:
            c[0] = 100                                      # write
    else:
        out[t] = c[0]                                       # plain read first
        wl.atomic_max(c, 0, t)                              # then an atomic
    wl.syncthreads()
    if t == 0:
        out[64] = c[0]


def test_plain_accesses_after_atomics_and_atomics_after_plain_reads_race():
    want = {0: ("race_raw", "# read", "other"), 1: ("race_waw", "# write", "other"),
            2: ("race_war", "# then an atomic", "this")}
    for mode, (kind, marker, which) in want.items():
        out = np.zeros(65, np.int32)
        res = wl.launch(after_atomics, inputs=[out, mode], grid=(1, 1, 1), block=(64, 1, 1),
                        device="sim", checks=CHECKS)
        races = _races(res)
        assert [f.kind for f in races] == [kind], [str(f) for f in races]
        (f,) = races
        assert f.source_line == _line(after_atomics, marker)
        assert f.details["atomic"] == which
        if which == "other":
            assert "this plain (non-atomic) access races with an atomic access" in f.message
            assert "between the atomics and the plain accesses after them" in f.message
        else:
            assert "this atomic access races with a plain (non-atomic) access" in f.message
    # (mode 2: thread 0 read c[0] and thread 1's atomic_max came after: write-after-read)


@wl.kernel
def flag(out: wl.array(dtype=wl.int32), sync: int):
    f = wl.shared_array(1, wl.int32)
    t = wl.thread_idx.x
    if t == 0:
        f[0] = 1                                            # plain store
    if sync:
        wl.syncthreads()
    out[t] = wl.atomic_load(f, 0)                           # strong load


def test_a_strong_load_of_a_plain_store_races_and_strong_accesses_do_not():
    assert "ld.relaxed" in wl.compile(flag).ptx
    for sync in (0, 1):
        res = wl.launch(flag, inputs=[np.zeros(64, np.int32), sync], grid=(1, 1, 1),
                        block=(64, 1, 1), device="sim", checks=CHECKS)
        if sync:
            assert _races(res) == []
            continue
        (f,) = _races(res)
        assert f.kind == "race_raw" and f.details["atomic"] == "this"
        assert f.source_line == _line(flag, "# strong load")


def test_corpus_kernels_with_shared_atomics_have_no_race():
    shared_atomics = [ex for ex in CORPUS if any(
        s in wl.compile(ex.kernel).ptx for s in ("atom.shared", "red.shared"))]
    assert "histogram" in [ex.name for ex in shared_atomics]
    for ex in shared_atomics:
        args = ex.make_inputs()
        before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        res = wl.launch(ex.kernel, inputs=args, device="sim", checks=CHECKS,
                        **ex.launch(args).kwargs())
        assert not res.findings, [str(f) for f in res.findings]
        ex.check(before, args)


@wl.kernel
def fenced_message(out: wl.array(dtype=wl.int32)):
    t = wl.thread_idx.x
    s = wl.shared_array(2, wl.int32)
    if t == 0:
        s[1] = 0
    wl.syncthreads()
    if t == 0:
        s[0] = 42                       # the message: a plain write
        wl.threadfence_block()          # release: fence, then a strong store
        wl.atomic_store(s, 1, 1)
    if t == 32:
        while wl.atomic_load(s, 1) == 0:
            pass
        wl.threadfence_block()          # acquire: strong load, then fence
        out[0] = s[0]


def test_fenced_message_passing_through_a_flag_is_no_race():
    """PTX ISA memory model: a fence then a strong store (release pattern) and a strong
    load then a fence (acquire pattern) that reads it synchronize, so the plain write of
    the message happens before its plain read in the other warp: no race."""
    out = np.zeros(1, np.int32)
    res = wl.launch(fenced_message, dim=64, inputs=[out], device="sim", checks=CHECKS)
    assert out[0] == 42
    assert _races(res) == []


@wl.kernel
def load_then_store(out: wl.array(dtype=wl.int32), mode: int):
    s = wl.shared_array(1, wl.int32)
    t = wl.thread_idx.x
    if t == 0:
        s[0] = 7
    wl.syncthreads()
    if t == 32:
        out[0] = wl.atomic_load(s, 0)                       # atomic read
    if mode == 1:
        wl.syncthreads()
    if t == 0:
        if mode == 2:
            wl.atomic_store(s, 0, 9)                        # atomic write
        elif mode == 3:
            wl.atomic_add(s, 0, 2)                          # atomic add
        else:
            s[0] = 9                                        # plain write


def test_a_plain_write_after_another_threads_atomic_load_races():
    """PTX ISA 8.8 "Memory Consistency Model: Data-race": the atomic load (``ld.relaxed``,
    strong) and the plain store (weak) of ``s[0]`` conflict (one writes), are not both
    morally strong and nothing orders them: a GPU may run thread 0's store first and
    thread 32 then reads 9. With a barrier between they are ordered; with an atomic
    store or add both are morally strong: no race either way."""
    for mode in (0, 1, 2, 3):
        out = np.zeros(1, np.int32)
        res = wl.launch(load_then_store, inputs=[out, mode], grid=(1, 1, 1),
                        block=(64, 1, 1), device="sim", checks=CHECKS)
        assert out[0] == 7
        if mode:
            assert _races(res) == [], [str(f) for f in _races(res)]
            continue
        (f,) = _races(res)
        assert f.kind == "race_war" and f.details["atomic"] == "other"
        assert f.source_line == _line(load_then_store, "# plain write")
        assert f.thread == (0, 0, 0) and f.details["other_thread"] == (32, 0, 0)
        assert f.details["other_source_line"] == _line(load_then_store, "# atomic read")
        assert "races with an atomic load by thread (32, 0, 0)" in f.message, f.message


@wl.kernel
def message(out: wl.array(dtype=wl.int32), flag: wl.array(dtype=wl.int32), w_fence: int,
            r_fence: int, in_global: int):
    t = wl.thread_idx.x
    s = wl.shared_array(2, wl.int32)
    if t == 0:
        s[1] = 0
    wl.syncthreads()
    if t == 0:
        s[0] = 42                                           # data
        if w_fence == 1:
            wl.threadfence_block()
        if in_global:
            wl.atomic_store(flag, 0, 1)
        else:
            wl.atomic_store(s, 1, 1)
        if w_fence == 2:
            wl.threadfence_block()
    if t == 32:
        if r_fence == 2:
            wl.threadfence()
        if in_global:
            while wl.atomic_load(flag, 0) == 0:
                pass
        else:
            while wl.atomic_load(s, 1) == 0:
                pass
        if r_fence == 1:
            wl.threadfence()
        out[0] = s[0]                                       # read


@pytest.mark.parametrize("in_global", [0, 1])
def test_message_passing_needs_a_fence_on_each_side_in_the_right_place(in_global):
    """PTX ISA 8.8 "Release and Acquire Patterns": a release pattern is a release fence
    *followed* by a strong write, an acquire pattern a strong read *followed* by an acquire
    fence; the write of the release pattern observed by the read of the acquire pattern
    makes it synchronize, and so the data write happen before the data read. A fence
    missing on either side, or after the flag store / before the flag load, leaves the two
    plain accesses of ``s[0]`` unordered: a race (a GPU may reorder them). The flag may be
    in shared or global memory; the fences may have block (``membar.cta``) or device scope
    (``fence.sc.gpu``), both include both threads."""
    for w_fence in (0, 1, 2):
        for r_fence in (0, 1, 2):
            out, flag = np.zeros(1, np.int32), np.zeros(1, np.int32)
            res = wl.launch(message, inputs=[out, flag, w_fence, r_fence, in_global],
                            dim=64, device="sim", checks=CHECKS)
            assert out[0] == 42
            races = _races(res)
            if (w_fence, r_fence) == (1, 1):
                assert races == [], [str(f) for f in races]
                continue
            assert [f.kind for f in races] == ["race_raw"], (w_fence, r_fence, races)
            (f,) = races
            assert f.source_line == _line(message, "# read")
            assert f.thread == (32, 0, 0) and f.details["other_thread"] == (0, 0, 0)
            assert f.details["other_source_line"] == _line(message, "# data")


@wl.kernel
def last_warp_reads(out: wl.array(dtype=wl.int32), fence: int):
    t = wl.thread_idx.x
    w = t // 32
    part = wl.shared_array(4, wl.int32)
    count = wl.shared_array(1, wl.int32)
    if t == 0:
        count[0] = 0
    wl.syncthreads()
    if t % 32 == 0:
        part[w] = w + 1                                     # partial
        if fence:
            wl.threadfence_block()
        if wl.atomic_add(count, 0, 1) == 3:                 # the last warp
            if fence:
                wl.threadfence_block()
            out[0] = part[0] + part[1] + part[2] + part[3]  # sum


def _race_only_without_fences(kernel, dim, kind, marker, other_marker, out=None):
    """Launch ``kernel(out, fence)`` with its fences (no race finding) and without them
    (exactly one ``kind`` finding at the line marked ``marker``, against ``other_marker``'s);
    ``out``: the value ``out[0]`` must hold after either launch (None: not checked)."""
    for fence in (1, 0):
        result = np.zeros(1, np.int32)
        res = wl.launch(kernel, inputs=[result, fence], dim=dim, device="sim", checks=CHECKS)
        if out is not None:
            assert result[0] == out
        races = _races(res)
        if fence:
            assert races == [], [str(f) for f in races]
            continue
        (f,) = races
        assert f.kind == kind and f.source_line == _line(kernel, marker)
        assert f.details["other_source_line"] == _line(kernel, other_marker)


def test_the_last_of_a_counter_sees_every_partial_released_before_it():
    """The "last block" pattern of CUDA's threadFenceReduction sample, within a block:
    each warp writes its partial, fences, and counts with ``atomic_add``; the warp whose
    add returns 3 fences and sums them. Its add observes the others' through the chain of
    read-modify-writes (PTX ISA "Memory Consistency Model": observation order), so every
    release synchronizes with its acquire: no race. Without the fences, a race."""
    _race_only_without_fences(last_warp_reads, 128, "race_raw", "# sum", "# partial", out=10)


@wl.kernel
def reuse_after_done(out: wl.array(dtype=wl.int32), fence: int):
    t = wl.thread_idx.x
    s = wl.shared_array(2, wl.int32)
    if t == 0:
        s[0] = 5
        s[1] = 0
    wl.syncthreads()
    if t == 32:
        out[0] = s[0]                                       # consume
        if fence:
            wl.threadfence_block()
        wl.atomic_store(s, 1, 1)                            # done
    if t == 0:
        while wl.atomic_load(s, 1) == 0:
            pass
        if fence:
            wl.threadfence_block()
        s[0] = 6                                            # overwrite


def test_a_buffer_reused_after_a_release_acquire_done_flag_is_no_race():
    """Write-after-read ordered the same way: the consumer reads, releases a "done" flag;
    the producer acquires it and overwrites. Without the fences a write-after-read race."""
    _race_only_without_fences(reuse_after_done, 64, "race_war", "# overwrite", "# consume")


@wl.kernel
def synced_then_released(out: wl.array(dtype=wl.int32), sync: int):
    t = wl.thread_idx.x
    s = wl.shared_array(2, wl.int32)
    if t == 0:
        s[1] = 0
    wl.syncthreads()
    if t < 32:
        if t == 1:
            s[0] = 42                                       # lane 1 writes
        if sync:
            wl.syncwarp()
        if t == 0:
            wl.threadfence_block()
            wl.atomic_store(s, 1, 1)
    if t == 32:
        while wl.atomic_load(s, 1) == 0:
            pass
        wl.threadfence_block()
        out[0] = s[0]                                       # another warp reads


def test_a_release_hands_on_what_a_warp_sync_ordered_before_it():
    """Lane 1's write is ordered before lane 0's fence by ``__syncwarp`` (CUDA guide:
    memory ordering among the participating threads), so lane 0's release pattern hands it
    on to thread 32's acquire (happens-before is transitive). Without the warp sync, lane
    1's write is unordered with the read: a race."""
    for sync in (1, 0):
        out = np.zeros(1, np.int32)
        res = wl.launch(synced_then_released, inputs=[out, sync], dim=64, device="sim",
                        checks=CHECKS)
        assert out[0] == 42
        races = _races(res)
        if sync:
            assert races == [], [str(f) for f in races]
            continue
        (f,) = races
        assert f.kind == "race_raw" and f.thread == (32, 0, 0)
        assert f.details["other_thread"] == (1, 0, 0)


_ACQ_REL_PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .pred %p<4>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  .shared .align 4 .b8 sh[8];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra SKIP;
  st.shared.u32 [sh], 42;
  st.STORE.cta.shared.u32 [sh+4], 1;
SKIP:
  setp.ne.u32 %p2, %r1, 32;
  @%p2 bra DONE;
SPIN:
  ld.LOAD.cta.shared.u32 %r2, [sh+4];
  setp.eq.u32 %p3, %r2, 0;
  @%p3 bra SPIN;
  ld.shared.u32 %r3, [sh];
  st.global.u32 [%rd1], %r3;
DONE:
  ret;
}
"""


@pytest.mark.parametrize("store, load", [("release", "acquire"), ("relaxed", "acquire"),
                                         ("release", "relaxed")])
def test_release_store_and_acquire_load_synchronize_without_fences(store, load):
    """PTX ISA 8.8 "Release and Acquire Patterns": ``st.release`` is a release operation
    and ``ld.acquire`` an acquire operation; the acquire observing the release makes the
    plain write of ``sh[0]`` happen before the plain read. With either side relaxed (and
    no fence) they do not synchronize: the plain accesses race."""
    ptx = _ACQ_REL_PTX.replace("STORE", store).replace("LOAD", load)
    g = Launcher()
    out = g.put(np.zeros(1, np.uint32))
    res = g.launch(ptx, "k", (1, 1, 1), (64, 1, 1), [out],
                   checks=("memcheck", "racecheck", "barrier"))
    assert g.get(out)[0] == 42
    races = [f for f in res.findings if f.kind.startswith("race")]
    if (store, load) == ("release", "acquire"):
        assert races == [], [str(f) for f in races]
        return
    (f,) = races
    assert f.kind == "race_raw" and f.thread == (32, 0, 0)
    assert f.details["other_thread"] == (0, 0, 0)


@wl.kernel
def reuse_after_all_done(out: wl.array(dtype=wl.int32), unfenced: int):
    t = wl.thread_idx.x
    s = wl.shared_array(2, wl.int32)
    if t == 0:
        s[0] = 5
        s[1] = 0
    wl.syncthreads()
    if t >= 32 and t % 32 == 0:
        out[t // 32] = s[0]                                 # three warps consume
        if t // 32 != unfenced:
            wl.threadfence_block()
        wl.atomic_add(s, 1, 1)                              # and count themselves done
    if t == 0:
        while wl.atomic_load(s, 1) < 3:
            pass
        wl.threadfence_block()
        s[0] = 6                                            # then thread 0 overwrites


def test_a_buffer_read_by_several_warps_and_reused_after_their_releases_is_no_race():
    """Each consumer warp's release (fence, then its add) is observed by thread 0's
    acquire through the chain of adds, so all three reads happen before the overwrite
    (PTX ISA "Release and Acquire Patterns", observation order): no race. The reads of
    one cell by several warps are kept per warp, so each warp's are checked against what
    thread 0 acquired. When warp 2 adds without its fence, its read is not ordered before
    the overwrite: a write-after-read race against thread 64 (the reader it names)."""
    for unfenced in (0, 2):
        out = np.zeros(4, np.int32)
        res = wl.launch(reuse_after_all_done, inputs=[out, unfenced], dim=128,
                        device="sim", checks=CHECKS)
        assert (out[1:] == 5).all()
        races = _races(res)
        if not unfenced:
            assert races == [], [str(f) for f in races]
            continue
        (f,) = races
        assert f.kind == "race_war" and f.thread == (0, 0, 0)
        assert f.source_line == _line(reuse_after_all_done, "# then thread 0 overwrites")
        assert f.details["other_thread"] == (64, 0, 0), str(f)
        assert f.details["other_source_line"] == _line(reuse_after_all_done,
                                                       "# three warps consume")


@wl.kernel
def shared_float_extrema(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32),
                         sync: int):
    hi = wl.shared_array(1, wl.float32)
    lo = wl.shared_array(1, wl.float32)
    t = wl.thread_idx.x
    if t == 0:
        hi[0] = -1e30                                       # init
        lo[0] = 1e30
    if sync:
        wl.syncthreads()
    wl.atomic_max(hi, 0, x[t])                              # max
    wl.atomic_min(lo, 0, x[t])
    wl.syncthreads()
    if t == 0:
        out[0] = hi[0]
        out[1] = lo[0]


def test_float_atomic_max_min_cas_loop_fenced_by_barriers_is_no_race():
    """A shared float32 ``wl.atomic_max``/``atomic_min`` is a compare-and-swap loop
    (LLVM's expansion of ``atomicrmw fmax``): a plain ``ld.shared`` guesses the old value,
    then ``atom.cas``. The load is part of the atomic (the CAS checks it; the CUDA
    Programming Guide's "Atomic Functions" builds ``atomicAdd`` of double the same way),
    so with barriers around it racecheck has nothing to report — it called it a
    ``race_war`` with the other threads' CAS. Without the first barrier the plain
    initialisation still races with the atomics."""
    ptx = wl.compile(shared_float_extrema, sass=False).ptx
    assert "atom.relaxed.gpu.shared.cas" in ptx or "atom.shared.cas" in ptx
    x = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    out = np.zeros(2, np.float32)
    res = wl.launch(shared_float_extrema, inputs=[x, out, 1], grid=(1, 1, 1),
                    block=(64, 1, 1), device="sim", checks=CHECKS)
    assert not res.findings, [str(f) for f in res.findings]
    assert out.tolist() == [x.max(), x.min()]
    res = wl.launch(shared_float_extrema, inputs=[x, out, 0], grid=(1, 1, 1),
                    block=(64, 1, 1), device="sim", checks=CHECKS)
    races = _races(res)
    assert races and {f.source_line for f in races} <= {
        _line(shared_float_extrema, "# init"), _line(shared_float_extrema, "# max"),
        _line(shared_float_extrema, "# max") + 1}, [str(f) for f in races]
