"""``wl.dynamic_shared_array``: CUDA's ``extern __shared__``, sized by the launch.

Compiled by the real LLVM and ptxas for two archs, run on the simulator with
every check on, and compared with numpy; an undersized ``shared_mem`` must be
an out-of-bounds finding at the user's line.
"""

import inspect

import numpy as np
import pytest

import warp_lab as wl

ALL_CHECKS = ("memcheck", "racecheck", "barrier")


@wl.kernel
def block_reverse(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    buf = wl.dynamic_shared_array(wl.float32)
    t = wl.thread_idx.x
    i = wl.block_idx.x * wl.block_dim.x + t
    buf[t] = x[i]
    wl.syncthreads()
    y[i] = buf[wl.block_dim.x - 1 - t]


@wl.func
def partial_sums(vals: wl.array(dtype=wl.float32), counts: wl.array(dtype=wl.int32), t: int):
    # a device function sees the same dynamic shared memory as the kernel
    sv = wl.dynamic_shared_array(wl.float64)
    sc = wl.dynamic_shared_array(wl.int32, offset=wl.block_dim.x * 8)
    sv[t] = wl.float64(vals[t])
    sc[t] = counts[t]


@wl.kernel
def carve(vals: wl.array(dtype=wl.float32), counts: wl.array(dtype=wl.int32),
          out: wl.array(dtype=wl.float64), lens: wl.array(dtype=wl.int32)):
    # static shared memory next to dynamic: the two must not overlap
    tag = wl.shared_array(3, wl.int32)
    t = wl.thread_idx.x
    n = wl.block_dim.x
    if t < 3:
        tag[t] = 100 + t
    partial_sums(vals, counts, t)
    wl.syncthreads()
    sv = wl.dynamic_shared_array(wl.float64)
    sc = wl.dynamic_shared_array(wl.int32, offset=n * 8)
    out[t] = sv[n - 1 - t] * wl.float64(sc[t]) + wl.float64(tag[t % 3])
    if t == 0:
        lens[0] = len(sv)
        lens[1] = len(sc)
        lens[2] = sc.shape[0]


@wl.kernel
def length_of(lens: wl.array(dtype=wl.int32), offset: int):
    a = wl.dynamic_shared_array(wl.vec4, offset=offset)
    lens[0] = len(a)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_ptx_declares_one_extern_shared_buffer_that_ptxas_accepts(arch):
    ck = wl.compile(carve, arch=arch, cache=False)
    lines = [line.strip() for line in ck.ptx.splitlines()]
    assert lines.count(".extern .shared .align 16 .b8 __wl_dynamic_shared[];") == 1
    assert "%dynamic_smem_size" in ck.ptx
    # only the static tag[3] (12 bytes), padded to the 16-byte alignment of the extern
    # buffer that follows it; the dynamic part is the launch's
    assert ck.resources.shared == 16


def test_block_reverse_matches_numpy_with_every_check():
    x = np.random.default_rng(1).standard_normal(512).astype(np.float32)
    y = np.zeros_like(x)
    r = wl.launch(block_reverse, inputs=[x, y], grid=4, block=128, shared_mem=128 * 4,
                  device="sim", checks=ALL_CHECKS)
    assert not r.findings and not r.partial
    np.testing.assert_array_equal(y, x.reshape(4, 128)[:, ::-1].ravel())


def test_views_at_two_offsets_partition_the_buffer_next_to_static_shared():
    n = 64
    g = np.random.default_rng(2)
    vals = g.standard_normal(n).astype(np.float32)
    counts = g.integers(-50, 50, n).astype(np.int32)
    out = np.zeros(n, np.float64)
    lens = np.zeros(3, np.int32)
    shared_mem = n * 8 + n * 4 + 20  # 20 spare bytes: 5 more int32, 2 more float64
    r = wl.launch(carve, inputs=[vals, counts, out, lens], grid=1, block=n,
                  shared_mem=shared_mem, device="sim", checks=ALL_CHECKS)
    assert not r.findings
    ref = vals[::-1].astype(np.float64) * counts + (100 + np.arange(n) % 3)
    np.testing.assert_array_equal(out, ref)
    assert list(lens) == [shared_mem // 8, (shared_mem - n * 8) // 4, (shared_mem - n * 8) // 4]


@pytest.mark.parametrize("shared_mem, offset, expected", [
    (256, 0, 16), (256, 48, 13), (250, 16, 14), (256, 256, 0), (256, 512, 0), (0, 0, 0)])
def test_length_is_the_launch_size_past_the_offset(shared_mem, offset, expected):
    lens = np.full(1, -1, np.int32)
    r = wl.launch(length_of, inputs=[lens, offset], grid=1, block=1, shared_mem=shared_mem,
                  device="sim")
    assert not r.findings
    assert lens[0] == expected


def test_too_little_shared_mem_is_a_finding_at_the_users_line():
    x = np.arange(256, dtype=np.float32)
    y = np.zeros_like(x)
    r = wl.launch(block_reverse, inputs=[x, y], grid=2, block=128, shared_mem=64 * 4,
                  device="sim")
    assert r.partial and not y.any()  # stopped; the arrays untouched
    (f,) = r.findings
    assert f.kind == "out_of_bounds"
    assert "dynamic shared memory" in f.message and "shared_mem=256 bytes" in f.message
    lines, first = inspect.getsourcelines(block_reverse.fn)
    store = first + next(k for k, line in enumerate(lines) if "buf[t] = x[i]" in line)
    assert f.source_line == store


@wl.kernel
def wide_offsets(lens: wl.array(dtype=wl.int32), o64: wl.int64, o32: int):
    a = wl.dynamic_shared_array(wl.float32, offset=o64)
    b = wl.dynamic_shared_array(wl.float32, offset=o32)
    lens[0] = len(a)
    lens[1] = len(b)


@wl.kernel
def read_at(out: wl.array(dtype=wl.float32), o64: wl.int64):
    a = wl.dynamic_shared_array(wl.float32, offset=o64)
    out[0] = a[0]


@pytest.mark.parametrize("o64, o32, expected", [
    (16, 16, [60, 60]), ((1 << 32) + 16, -4, [0, 0]), (-16, 1 << 30, [0, 0])])
def test_offsets_past_32_bits_or_negative_give_no_memory(o64, o32, expected):
    # a wider offset must not wrap into the buffer (2**32 + 16 is not 16)
    lens = np.full(2, -1, np.int32)
    r = wl.launch(wide_offsets, inputs=[lens, o64, o32], grid=1, block=1, shared_mem=256,
                  device="sim")
    assert not r.findings
    assert list(lens) == expected
    # reading through such a view is a finding, not a byte of the buffer
    out = np.zeros(1, np.float32)
    r = wl.launch(read_at, inputs=[out, o64], grid=1, block=1, shared_mem=256, device="sim")
    # (inside the buffer, the byte read was never written: initcheck, on by default here)
    assert [f.kind for f in r.findings] == (["uninitialized"] if o64 == 16
                                            else ["out_of_bounds"])


def test_forgotten_shared_mem_says_past_the_end_and_how_to_give_it():
    x = np.arange(128, dtype=np.float32)
    r = wl.launch(block_reverse, inputs=[x, np.zeros_like(x)], grid=1, block=128, device="sim")
    (f,) = r.findings
    assert "0 bytes past the end of the dynamic shared memory" in f.message
    assert "shared_mem=0 bytes" in f.message and "wl.launch(..., shared_mem=bytes)" in f.message


def test_shared_mem_is_checked_against_the_compiled_arch_on_the_simulator():
    # sm_75 (T4) gives a block at most 64 KB; the simulator itself models sm_90
    ck = wl.compile(block_reverse, arch="sm_75", sass=False)
    x = np.arange(32, dtype=np.float32)
    with pytest.raises(wl.LaunchError, match="sm_75's 65536 bytes"):
        wl.launch(ck, inputs=[x, np.zeros_like(x)], grid=1, block=32, shared_mem=100 * 1024,
                  device="sim")
    r = wl.launch(ck, inputs=[x, np.zeros_like(x)], grid=1, block=32, shared_mem=64 * 1024,
                  device="sim")
    assert not r.findings
