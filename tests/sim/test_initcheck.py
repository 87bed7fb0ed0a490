"""initcheck: a read of a shared byte that no thread of the block has written since the
block started is an ``uninitialized`` finding at the user's line (CUDA Programming Guide,
``__shared__``: no initialization; a GPU's shared memory holds garbage at block start).
The simulator fills fresh shared memory with the word 0x7FF8DEAD (a NaN as float32,
2146016941 as int32; ``fill=`` of ``sim.run``/``wl.launch``), so values are checked
against numpy references computed with that pattern where the kernel read garbage — a
visibly wrong result, where zeros often gave the lucky right one."""

import struct

import numpy as np
import pytest

import warp_lab as wl
from warp_lab import sim
from warp_lab.examples import CORPUS
from warp_lab.examples.example import source_line

BS = 64
CHECKS = ("memcheck", "initcheck", "barrier")
FILL_I32 = np.int32(np.uint32(0x7FF8DEAD).view(np.int32))


@wl.kernel
def tree_sum(x: wl.array(dtype=wl.float32), partial: wl.array(dtype=wl.float32), start: int):
    buf = wl.shared_array(2 * BS, wl.float32)
    t = wl.thread_idx.x
    buf[t] = x[wl.block_idx.x * BS + t]
    wl.syncthreads()
    s = start
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]  # marker: tree step
        wl.syncthreads()
        s //= 2
    if t == 0:
        partial[wl.block_idx.x] = buf[0]


@wl.kernel
def dynamic_read_first(y: wl.array(dtype=wl.float32)):
    d = wl.dynamic_shared_array(wl.float32)
    t = wl.thread_idx.x
    v = d[t]  # marker: read before write
    wl.syncthreads()
    d[t] = 1.0
    wl.syncthreads()
    y[t] = v + d[(t + 1) % BS]


@wl.kernel
def block0_writes(y: wl.array(dtype=wl.float32)):
    buf = wl.shared_array(1, wl.float32)
    t = wl.thread_idx.x
    if wl.block_idx.x == 0 and t == 0:
        buf[0] = 7.0
    wl.syncthreads()
    y[wl.block_idx.x * BS + t] = buf[0]  # marker: every block reads


@wl.kernel
def count_positive(x: wl.array(dtype=wl.float32), counts: wl.array(dtype=wl.int32),
                   zero_first: int):
    c = wl.shared_array(1, wl.int32)
    t = wl.thread_idx.x
    if zero_first != 0:
        if t == 0:
            c[0] = 0
        wl.syncthreads()
    if x[wl.block_idx.x * BS + t] > 0.0:
        wl.atomic_add(c, 0, 1)  # marker: shared counter
    wl.syncthreads()
    if t == 0:
        counts[wl.block_idx.x] = c[0]


@wl.kernel
def forgot_to_fill(y: wl.array(dtype=wl.float32)):
    tile = wl.shared_array(BS, wl.float32)
    t = wl.thread_idx.x
    wl.syncthreads()
    y[t] = tile[BS - 1 - t] * 2.0  # marker: never written


def _launch(kernel, inputs, **kw):
    kw.setdefault("checks", CHECKS)
    return wl.launch(kernel, inputs=inputs, device="sim", block=(BS, 1, 1), **kw)


def _only(res, kernel, marker):
    """The one ``uninitialized`` finding of ``res``, at ``marker``'s line of ``kernel``."""
    assert not res.partial
    assert [f.kind for f in res.findings] == ["uninitialized"], [str(f) for f in res.findings]
    f = res.findings[0]
    assert f.source_line == source_line(kernel, marker), str(f)
    assert f.source_file.endswith("test_initcheck.py")
    return f


def test_reading_past_the_initialised_part_is_reported_at_the_users_line():
    x = np.arange(-64, 64, dtype=np.float32)        # two blocks, exact float sums
    partial = np.zeros(2, np.float32)
    res = _launch(tree_sum, [x, partial, BS], grid=(2, 1, 1))
    f = _only(res, tree_sum, "# marker: tree step")
    # thread 0 of block 0 reads buf[64]: byte 256 of the 512-byte variable
    assert (f.block, f.thread) == ((0, 0, 0), (0, 0, 0))
    assert f.details["variable"].startswith("tree_sum_buf_")  # named after `buf`
    assert f.details["offset"] == 4 * BS and f.details["size"] == 4
    # wl.launch names the Python array and its line (the PTX symbol stays in details)
    buf = source_line(tree_sum, "buf = wl.shared_array")
    assert f.message.startswith("read of uninitialized shared memory: buf[64], the shared "
                                f"array of line {buf}, was not written"), f.message
    assert f.details["index"] == (64,)
    # the simulator read the fill pattern there, a NaN: the sum is visibly wrong
    assert np.isnan(partial).all()
    # with zeros (fill="zeros") the same bug sums right: what the pattern is for
    res = _launch(tree_sum, [x, partial, BS], grid=(2, 1, 1), fill="zeros")
    np.testing.assert_array_equal(partial, x.reshape(2, BS).sum(1))


def test_the_correct_reduction_and_the_corpus_have_no_finding():
    x = np.arange(-64, 64, dtype=np.float32)
    partial = np.zeros(2, np.float32)
    res = _launch(tree_sum, [x, partial, BS // 2], grid=(2, 1, 1))
    assert not res.findings, [str(f) for f in res.findings]
    np.testing.assert_array_equal(partial, x.reshape(2, BS).sum(1))
    ran = []
    for ex in CORPUS:
        if ".shared" not in wl.compile(ex.kernel, sass=False).ptx:
            continue
        args = ex.make_inputs()
        before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        res = wl.launch(ex.kernel, inputs=args, device="sim", checks=("initcheck",),
                        **ex.launch(args).kwargs())
        assert not res.findings, (ex.name, [str(f) for f in res.findings])
        ex.check(before, args)
        ran.append(ex.name)
    assert {"block_sum", "block_scan", "transpose_padded", "matmul_tiled", "histogram",
            "positive_stats"} <= set(ran)


def test_dynamic_shared_memory_read_before_write_names_it():
    y = np.zeros(BS, np.float32)
    res = _launch(dynamic_read_first, [y], grid=(1, 1, 1), shared_mem=4 * BS)
    f = _only(res, dynamic_read_first, "# marker: read before write")
    assert f.thread == (0, 0, 0)
    assert "the dynamic shared memory" in f.message and f"shared_mem={4 * BS} bytes" in f.message
    assert f.details["offset"] == 0
    assert np.isnan(y).all()                                       # NaN pattern + 1.0
    _launch(dynamic_read_first, [y], grid=(1, 1, 1), shared_mem=4 * BS, fill=None)
    np.testing.assert_array_equal(y, np.ones(BS, np.float32))      # zeros + 1.0


@pytest.mark.parametrize("opt", [0, 3])
def test_an_array_no_thread_ever_writes_is_reported_at_every_opt_level(opt):
    # With LLVM's `undef` as the array's initial value, O3 folded `tile[...] * 2.0` to a
    # NaN constant: no shared load was left to check, and y was silently NaN.
    ck = wl.compile(forgot_to_fill, opt=opt, sass=False)
    assert "ld.shared" in ck.ptx
    y = np.full(BS, 5.0, np.float32)
    res = _launch(forgot_to_fill, [y], grid=(1, 1, 1), opt=opt)
    f = _only(res, forgot_to_fill, "# marker: never written")
    assert f.details["variable"].startswith("forgot_to_fill_tile_")
    assert np.isnan(y).all()                                     # the NaN pattern, times 2


def test_a_block_does_not_inherit_another_blocks_initialisation():
    y = np.full(2 * BS, -1.0, np.float32)
    res = _launch(block0_writes, [y], grid=(2, 1, 1))
    f = _only(res, block0_writes, "# marker: every block reads")
    assert (f.block, f.thread) == ((1, 0, 0), (0, 0, 0))
    np.testing.assert_array_equal(y, np.r_[np.full(BS, 7.0), np.full(BS, np.nan)]
                                  .astype(np.float32))


BLOCK0_PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry b(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .shared .align 4 .b8 s[4];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %tid.x;
  or.b32 %r3, %r1, %r2;
  setp.ne.u32 %p1, %r3, 0;
  @%p1 bra SKIP;
  st.shared.u32 [s], 7;
SKIP:
  bar.sync 0;
  ld.shared.u32 %r4, [s];
  mad.lo.u32 %r5, %r1, 32, %r2;
  mul.wide.u32 %rd2, %r5, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
  ret;
}
"""


@pytest.mark.parametrize("batch_threads", [32, 1 << 16])
def test_block_isolation_with_one_or_several_blocks_per_batch(gpu, batch_threads):
    out = gpu.put(np.full(64, 99, np.uint32))
    res = sim.run(sim.parse_module(BLOCK0_PTX), "b", 2, 32, struct.pack("<Q", out), gpu.mem,
                  checks=("initcheck",), batch_threads=batch_threads)
    assert [(f.kind, f.block, f.thread) for f in res.findings] == [
        ("uninitialized", (1, 0, 0), (0, 0, 0))], [str(f) for f in res.findings]
    assert res.findings[0].details["variable"] == "s"
    np.testing.assert_array_equal(gpu.get(out), np.r_[np.full(32, 7), np.full(32, 0x7FF8DEAD)])


def test_atomics_on_an_unzeroed_shared_counter():
    rng = np.random.default_rng(5)
    x = rng.standard_normal(3 * BS).astype(np.float32)
    x[::BS] = 1.0                                 # every block has a positive value
    want = (x.reshape(3, BS) > 0).sum(1).astype(np.int32)
    counts = np.zeros(3, np.int32)
    res = _launch(count_positive, [x, counts, 0], grid=(3, 1, 1))
    f = _only(res, count_positive, "# marker: shared counter")
    assert (f.block, f.thread) == ((0, 0, 0), (0, 0, 0))
    assert "read-modify-write" in f.message
    np.testing.assert_array_equal(counts, want + FILL_I32)   # counted up from the pattern
    counts[:] = 0
    res = _launch(count_positive, [x, counts, 1], grid=(3, 1, 1))
    assert not res.findings, [str(f) for f in res.findings]
    np.testing.assert_array_equal(counts, want)


PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .shared .align 4 .b8 sh[16];
  ld.param.u64 %rd1, [out];
  st.shared.u32 [sh], 5;
  mov.u64 %rd2, sh;
  cvta.shared.u64 %rd3, %rd2;
  ld.u32 %r1, [%rd3];
  atom.shared.exch.b32 %r2, [sh+8], 9;
  ld.shared.u32 %r3, [sh+8];
  ld.u32 %r4, [%rd3+4];
  st.global.u32 [%rd1], %r1;
  st.global.u32 [%rd1+4], %r3;
  st.global.u32 [%rd1+8], %r4;
  ret;
}
"""


def test_generic_loads_exch_and_the_default_checks(gpu):
    """A generic load into the shared window is checked; ``atom.exch`` only writes; a
    plain ``sim.run`` (default checks) does not run initcheck."""
    mod = sim.parse_module(PTX)
    out = gpu.put(np.zeros(3, np.uint32))
    res = sim.run(mod, "k", 1, 1, struct.pack("<Q", out), gpu.mem,
                  checks=("memcheck", "initcheck"))
    np.testing.assert_array_equal(gpu.get(out), [5, 9, 0x7FF8DEAD])
    assert [f.kind for f in res.findings] == ["uninitialized"], [str(f) for f in res.findings]
    f = res.findings[0]
    lines = PTX.splitlines()
    assert lines[f.ptx_line - 1].strip() == "ld.u32 %r4, [%rd3+4];"
    assert f.details["variable"] == "sh" and f.details["offset"] == 4
    res = sim.run(mod, "k", 1, 1, struct.pack("<Q", out), gpu.mem)
    assert not res.findings
    assert "initcheck" in sim.ALL_CHECKS and "initcheck" not in sim.DEFAULT_CHECKS
    with pytest.raises(wl.LaunchError, match="initcheck"):
        wl.launch(block0_writes, inputs=[np.zeros(BS, np.float32)], device="sim",
                  grid=(1, 1, 1), block=(BS, 1, 1), checks=("initchek",))
