"""memcheck's conflicting-store check (:mod:`warp_lab.sim.store_conflicts`): threads of one
plain global store writing different values to the same element get a ``global_conflict``
finding; the same value, atomics, strong stores and shared memory do not.

References: numpy for what the kernels compute, the kernel's own source for the line,
numpy's strides for the element a byte offset is.
"""

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.examples import source_line
from warp_lab.runtime.finding_text import inside_index

from sim_helpers import Launcher


@wl.kernel
def dot(a: wl.array(dtype=wl.float32), b: wl.array(dtype=wl.float32),
        out: wl.array(dtype=wl.float32)):
    i = wl.tid()
    out[0] += a[i] * b[i]  # marker: racy sum


@wl.kernel
def dot_atomic(a: wl.array(dtype=wl.float32), b: wl.array(dtype=wl.float32),
               out: wl.array(dtype=wl.float32)):
    i = wl.tid()
    wl.atomic_add(out, 0, a[i] * b[i])


@wl.kernel
def find_flag(x: wl.array(dtype=wl.int32), limit: int, found: wl.array(dtype=wl.int32)):
    i = wl.tid()
    if x[i] > limit:
        found[0] = 1


@wl.kernel
def find_once(x: wl.array(dtype=wl.int32), limit: int, found: wl.array(dtype=wl.int32)):
    i = wl.tid()
    if x[i] > limit:
        if found[0] == 0:
            found[0] = 1


@wl.kernel
def find_where(x: wl.array(dtype=wl.int32), limit: int, found: wl.array(dtype=wl.int32)):
    i = wl.tid()
    if x[i] > limit:
        found[0] = i  # marker: which one


@wl.kernel
def histogram(x: wl.array(dtype=wl.int32), h: wl.array(dtype=wl.int32)):
    i = wl.tid()
    h[x[i]] = h[x[i]] + 1  # marker: racy bin


@wl.kernel
def flag_store(x: wl.array(dtype=wl.int32), flag: wl.array(dtype=wl.int32)):
    i = wl.tid()
    wl.atomic_store(flag, 0, x[i])


@wl.kernel
def flag_plain(x: wl.array(dtype=wl.int32), flag: wl.array(dtype=wl.int32)):
    i = wl.tid()
    flag[0] = x[i]


@wl.kernel
def row_first(y: wl.array(dtype=wl.float32, ndim=2)):
    r, c = wl.tid()
    y[r, 1] = wl.float32(c)  # marker: row store


@wl.kernel
def shared_last(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    buf = wl.shared_array(1, wl.float32)
    buf[0] = x[wl.tid()]
    wl.syncthreads()
    y[wl.tid()] = buf[0]


def _dot_inputs(n=3000):
    rng = np.random.default_rng(0)
    return rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)


@pytest.mark.parametrize("opt", [0, 3])
def test_the_racy_dot_product_is_reported_at_its_line_naming_out_0(opt):
    a, b = _dot_inputs()
    out = np.zeros(1, np.float32)
    r = wl.launch(dot, dim=a.size, inputs=[a, b, out], device="sim", opt=opt)
    assert r.checks == ("memcheck", "barrier")       # the default checks catch it
    assert [f.kind for f in r.findings] == ["global_conflict"], [str(f) for f in r.findings]
    f = r.findings[0]
    assert f.source_line == source_line(dot, "# marker: racy sum")
    assert f.details["array"] == "out" and f.details["index"] == (0,)
    assert f.details["threads"] == a.size
    assert "threads store different values to out[0]" in f.message
    assert "only one thread's value is kept (which one is undefined on a GPU)" in f.message
    assert "each thread read out[0] before any wrote it" in f.message
    assert "the index gives" not in f.message     # read-modify-write: the index is meant
    assert "wl.atomic_add(out, 0, value)" in f.message and "reduction" in f.message
    # it still computes what it computes: one thread's product survives, not the sum
    assert not r.partial
    assert out[0] in a * b
    assert abs(out[0] - float(a.astype(np.float64) @ b)) > 100


def test_the_atomic_dot_product_is_not_reported_and_sums():
    a, b = _dot_inputs()
    racy, fixed = np.zeros(1, np.float32), np.zeros(1, np.float32)
    bad = wl.launch(dot, dim=a.size, inputs=[a, b, racy], device="sim")
    good = wl.launch(dot_atomic, dim=a.size, inputs=[a, b, fixed], device="sim")
    assert [f.kind for f in bad.findings] == ["global_conflict"]
    assert good.findings == []
    np.testing.assert_allclose(fixed[0], a.astype(np.float64) @ b, rtol=1e-4)


def test_many_threads_storing_the_same_value_is_not_reported_but_different_values_are():
    x = np.arange(1000, dtype=np.int32)
    found = np.zeros(1, np.int32)
    same = wl.launch(find_flag, dim=x.size, inputs=[x, 500, found], device="sim")
    assert same.findings == [] and found[0] == 1
    once = np.zeros(1, np.int32)    # a read, then a constant: no update is lost
    checked = wl.launch(find_once, dim=x.size, inputs=[x, 500, once], device="sim")
    assert checked.findings == [] and once[0] == 1
    where = np.full(1, -1, np.int32)
    differ = wl.launch(find_where, dim=x.size, inputs=[x, 500, where], device="sim")
    assert [f.kind for f in differ.findings] == ["global_conflict"]
    f = differ.findings[0]
    assert f.source_line == source_line(find_where, "# marker: which one")
    assert f.details["threads"] == 499 and f.details["index"] == (0,)
    assert "read found[0]" not in f.message      # a plain store: no read-modify-write
    # ... so the first suspect is the index; combining the values comes second
    assert "if each thread should write an element of its own, the index gives 499 " \
        "threads this one: check how it is computed from wl.tid()" in f.message
    assert "if their values should be combined, use wl.atomic_add(found, 0, value)" in f.message
    assert 501 <= where[0] < 1000


def test_a_histogram_with_collisions_is_reported_once_naming_the_lowest_bin():
    x = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 0], np.int32)
    h = np.zeros(10, np.int32)
    r = wl.launch(histogram, dim=x.size, inputs=[x, h], device="sim")
    assert [f.kind for f in r.findings] == ["global_conflict"], [str(f) for f in r.findings]
    f = r.findings[0]
    assert f.source_line == source_line(histogram, "# marker: racy bin")
    counts = np.bincount(x, minlength=10)
    assert f.details["index"] == (int(np.flatnonzero(counts > 1)[0]),)     # h[1]
    assert f.details["threads"] == counts[1]
    assert f.details["more_addresses"] == np.count_nonzero(counts > 1) - 1
    assert "each thread read h[1] before any wrote it" in f.message
    # every thread of a bin read 0 and stores 1: one update kept, h is not the count
    assert "update h[1] at once, all with the same value" in f.message
    assert np.array_equal(h, (counts > 0).astype(np.int32))


def test_a_histogram_without_collisions_is_not_reported():
    x = np.random.default_rng(1).permutation(4096).astype(np.int32)   # unordered, distinct
    h = np.zeros(4096, np.int32)
    r = wl.launch(histogram, dim=x.size, inputs=[x, h], device="sim")
    assert r.findings == [] and (h == 1).all()
    # two threads per bin: reported
    x2 = np.concatenate([x[:2048], x[:2048]])
    h2 = np.zeros(4096, np.int32)
    r2 = wl.launch(histogram, dim=x2.size, inputs=[x2, h2], device="sim")
    assert [f.kind for f in r2.findings] == ["global_conflict"]
    assert r2.findings[0].details["more_addresses"] == 2047


def test_strong_stores_shared_memory_and_launches_without_memcheck_are_not_checked():
    x = np.arange(64, dtype=np.int32)
    flag = np.zeros(1, np.int32)
    strong = wl.launch(flag_store, dim=64, inputs=[x, flag], device="sim")
    assert strong.findings == []
    plain = wl.launch(flag_plain, dim=64, inputs=[x, flag], device="sim")
    assert [f.kind for f in plain.findings] == ["global_conflict"]
    off = wl.launch(flag_plain, dim=64, inputs=[x, flag], device="sim",
                    checks=("racecheck", "barrier"))
    assert off.findings == []
    xf = np.arange(64, dtype=np.float32)
    y = np.zeros_like(xf)
    sh = wl.launch(shared_last, dim=64, block_dim=64, inputs=[xf, y], device="sim",
                   checks=("memcheck", "barrier"))
    assert not any(f.kind == "global_conflict" for f in sh.findings)


def test_a_2d_conflict_names_the_element_by_row_and_column():
    y = np.zeros((4, 8), np.float32)
    r = wl.launch(row_first, dim=y.shape, inputs=[y], device="sim")
    assert [f.kind for f in r.findings] == ["global_conflict"]
    f = r.findings[0]
    assert f.source_line == source_line(row_first, "# marker: row store")
    assert f.details["index"] == (0, 1) and f.details["threads"] == 8
    assert f.details["more_addresses"] == 3
    assert "to y[0, 1] at once" in f.message and "wl.atomic_add(y, 0, 1, value)" in f.message


_GENERIC = """
.version 7.8
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p, .param .u32 same)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r2, [same];
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 mov.u32 %r1, 7;
    shr.u32 %r3, %tid.x, 2;
    mul.wide.u32 %rd2, %r3, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.u32 [%rd3], %r1;
    ret;
}
"""


@pytest.mark.parametrize("same", [0, 1])
def test_a_generic_store_into_global_memory_is_checked(same):
    """Lanes 4k..4k+3 store to element k through a generic address: reported unless they
    all store the same value (7)."""
    ln = Launcher()
    addr = ln.put(np.zeros(8, np.uint32), "buf")
    r = ln.launch(_GENERIC, "k", 1, 32, [addr, same], checks=("memcheck",))
    kinds = [f.kind for f in r.findings]
    assert kinds == ([] if same else ["global_conflict"]), [str(f) for f in r.findings]
    out = ln.get(addr)
    if same:
        assert (out == 7).all()
    else:
        f = r.findings[0]
        assert f.details["address"] == addr and f.details["threads"] == 4
        assert f.details["more_addresses"] == 7 and f.thread == (0, 0, 0)
        assert "'buf'" in f.message
        assert all(4 * k <= v < 4 * k + 4 for k, v in enumerate(out))


@pytest.mark.parametrize("view", [
    lambda a: a, lambda a: a[::-1], lambda a: a.T, lambda a: a[1:, ::-2],
    lambda a: a[::2, 3:][:, ::-1]])
def test_inside_index_agrees_with_numpy_strides(view):
    base = np.zeros((6, 10), np.float32)
    v = view(base)
    item = base.itemsize
    elem0 = v.__array_interface__["data"][0]
    strides = tuple(s // item for s in v.strides)
    for index in np.ndindex(v.shape):
        addr = elem0 + sum(i * s for i, s in zip(index, v.strides))
        assert inside_index(addr - elem0, item, item, v.shape, strides) == index
    # past the end of the view's last axis, or half an element: no index
    assert inside_index(v.shape[-1] * v.strides[-1] * (v.ndim == 1) + 10**6, item, item,
                        v.shape, strides) is None
    assert inside_index(2, item, item, v.shape, strides) is None


@wl.kernel
def set_bits(x: wl.array(dtype=wl.int32), h: wl.array(dtype=wl.uint32), atomic: int):
    i = wl.tid()
    seen = wl.shared_array(128, wl.int32)       # (shared memory: racecheck runs too)
    seen[wl.thread_idx.x] = x[i]
    bit = wl.uint32(1) << wl.uint32(seen[wl.thread_idx.x] % 32)
    if atomic:
        wl.atomic_or(h, x[i] // 32, bit)
    else:
        h[x[i] // 32] |= bit  # marker: racy or


@pytest.mark.parametrize("opt", [0, 3])
def test_a_bitset_set_with_or_equals_loses_bits_and_is_reported_once_as_a_race(opt):
    """``h[k] |= bit`` in every thread is a load, an ``or`` and a plain store: threads
    setting bits of one word race (PTX ISA 8.8 "Data-race": conflicting plain accesses,
    unordered) and all but one thread's bit are lost (CUDA guide: one thread's store to a
    location wins). The finding says it is a race and suggests ``wl.atomic_or``, which
    sets every bit (numpy's ``np.bitwise_or.at`` is the reference); racecheck (shared
    memory only) does not report it again."""
    x = np.arange(256, dtype=np.int32)
    want = np.zeros(8, np.uint32)
    np.bitwise_or.at(want, x // 32, np.uint32(1) << (x % 32).astype(np.uint32))
    for atomic in (0, 1):
        h = np.zeros(8, np.uint32)
        r = wl.launch(set_bits, inputs=[x, h, atomic], grid=2, block=128, device="sim",
                      opt=opt, checks=("memcheck", "racecheck", "barrier"))
        if atomic:
            assert r.findings == [] and (h == want).all()
            continue
        assert (h != want).any()                  # bits were lost
        assert [f.kind for f in r.findings] == ["global_conflict"], [str(f) for f in r.findings]
        (f,) = r.findings
        assert f.source_line == source_line(set_bits, "# marker: racy or")
        assert f.details["update_op"] == "or" and f.details["index"] == (0,)
        assert "updates are lost: a data race (`h[0] |= ...` is a read, then a separate " \
            "write" in f.message, f.message
        assert "fix: wl.atomic_or(h, 0, value)" in f.message
