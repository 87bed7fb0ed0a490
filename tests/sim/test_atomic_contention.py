"""Atomics of many lanes on few addresses: the simulator applies them in lane order per
address (each lane sees what the lanes before it left), however it batches the work.

The reference is a plain Python loop over the lanes in lane order with NumPy scalars of
the element type; the simulator's ``_atomic_rmw`` picks rounds of distinct addresses, a
segmented prefix sum (integer add) or one address at a time (contended CAS loops, float
add), so every path is compared with it, including the flag that says whether some lane
changed the bytes it found (CAS A -> B -> A changes memory twice and ends where it began).
Then a real CAS loop: 1,000 threads adding float64 on sm_52, where ``atom.add.f64`` does
not exist (PTX ISA 9.7.13.5), against numpy's sum."""

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.sim.memops import _atomic_rmw

OPS = ["add", "min", "max", "and", "or", "xor", "exch", "cas", "inc", "dec"]


def _reference(mem, e, b, c, op, dt):
    mem = mem.copy()
    vd = mem.view(dt)
    old = np.empty(e.size, dt)
    changed = False
    with np.errstate(over="ignore"):
        for i in range(e.size):
            o = vd[e[i]]
            old[i] = o
            if op == "add":
                n = o + b[i]
            elif op in ("min", "max"):
                n = (np.fmin if op == "min" else np.fmax)(o, b[i]) if dt.kind == "f" else \
                    (min if op == "min" else max)(o, b[i])
            elif op in ("and", "or", "xor"):
                n = {"and": o & b[i], "or": o | b[i], "xor": o ^ b[i]}[op]
            elif op == "exch":
                n = b[i]
            elif op == "cas":
                n = c[i] if o == b[i] else o
            elif op == "inc":
                n = dt.type(0) if o >= b[i] else o + dt.type(1)
            else:  # dec
                n = b[i] if (o == 0 or o > b[i]) else o - dt.type(1)
            vd[e[i]] = n
            changed = changed or np.array(n, dt).tobytes() != np.array(o, dt).tobytes()
    return mem, old, changed


# PTX has no float bitwise or inc/dec atomics
CASES = [(op, dt) for op in OPS for dt in ("int32", "uint32", "uint64", "float32", "float64")
         if not (dt.startswith("float") and op in ("and", "or", "xor", "inc", "dec"))]


@pytest.mark.parametrize("op,dtype", CASES)
# one address (serial), a few (serial per address), many (rounds of distinct addresses)
@pytest.mark.parametrize("lanes,addresses", [(32, 1), (1000, 1), (300, 3), (200, 100)])
def test_contended_atomics_apply_in_lane_order(op, dtype, lanes, addresses):
    dt = np.dtype(dtype)
    g = np.random.default_rng([OPS.index(op), lanes, addresses, dt.itemsize])
    raw = np.uint32 if dt.itemsize == 4 else np.uint64
    small = g.integers(0, 4, 8).astype(dt)             # few values: CAS hits and ABA chains
    mem = small[g.integers(0, 8, addresses)].view(raw).copy()
    e = g.integers(0, addresses, lanes)
    b = small[g.integers(0, 8, lanes)] if op == "cas" else g.integers(0, 5, lanes).astype(dt)
    c = small[g.integers(0, 8, lanes)] if op == "cas" else None
    if dt.kind == "f" and op == "add":
        b = g.standard_normal(lanes).astype(dt) * dt.type(1e3)   # rounding order shows
    want_mem, want_old, want_changed = _reference(mem, e, b, c, op, dt)
    old, changed = _atomic_rmw(mem, e, b, c, op, dt)
    np.testing.assert_array_equal(old.view(raw), want_old.view(raw))
    np.testing.assert_array_equal(mem, want_mem)
    assert changed == want_changed


def test_cas_a_b_a_counts_as_changed():
    mem = np.zeros(1, np.uint32)
    e = np.zeros(3, np.int64)
    b = np.array([0, 1, 5], np.uint32)         # lane 0: 0 -> 1, lane 1: 1 -> 0, lane 2 fails
    c = np.array([1, 0, 9], np.uint32)
    old, changed = _atomic_rmw(mem, e, b, c, "cas", np.dtype(np.uint32))
    assert old.tolist() == [0, 1, 0] and mem[0] == 0 and changed


@wl.kernel
def cas_sum64(x: wl.array(dtype=wl.float64), total: wl.array(dtype=wl.float64)):
    wl.atomic_add(total, 0, x[wl.tid()])


def test_float64_atomic_add_cas_loop_on_sm_52():
    x = np.random.default_rng(3).standard_normal(1000)
    total = np.zeros(1)
    ck = wl.compile(cas_sum64, arch="sm_52", cache=False, sass=False)
    assert "atom.global.cas.b64" in ck.ptx and "atom.global.add.f64" not in ck.ptx
    r = wl.launch(ck, dim=x.size, inputs=[x, total], device="sim")
    assert not r.findings
    np.testing.assert_allclose(total[0], x.sum(), rtol=1e-12)


@wl.kernel
def half_sums(x: wl.array(dtype=wl.float16), total: wl.array(dtype=wl.float16),
              old: wl.array(dtype=wl.float16)):
    i = wl.tid()
    old[i] = wl.atomic_add(total, i % 3, x[i])
    wl.atomic_sub(total, 2, x[i])


@pytest.mark.parametrize("arch", ["sm_70", "sm_80", "sm_90"])
def test_float16_atomic_add_rounds_each_add_to_half(arch):
    """CUDA's atomicAdd(__half*): native ``atom.add.noftz.f16`` from sm_70 (no CAS loop on
    the 32-bit word around the element, which would read past an odd-length array's end);
    the block's 200 threads run the atomic as one instruction, so in thread order."""
    ck = wl.compile(half_sums, arch=arch, cache=False, sass=False)
    assert "atom.global.add.noftz.f16" in ck.ptx and ".cas." not in ck.ptx
    x = (np.random.default_rng(5).standard_normal(200) * 4).astype(np.float16)
    total, old = np.zeros(3, np.float16), np.zeros(200, np.float16)
    r = wl.launch(ck, dim=200, block_dim=256, inputs=[x, total, old], device="sim")
    assert not r.findings
    acc, want_old = np.zeros(3, np.float16), np.zeros(200, np.float16)
    for i in range(200):                       # each add rounded to half, in thread order
        want_old[i] = acc[i % 3]
        acc[i % 3] = np.float16(acc[i % 3] + x[i])
    for i in range(200):
        acc[2] = np.float16(acc[2] - x[i])
    np.testing.assert_array_equal(old, want_old)
    np.testing.assert_array_equal(total, acc)


def test_float16_atomics_other_than_add_and_before_sm_70_are_located_errors():
    with pytest.raises(wl.KernelCompileError, match=r"needs sm_70 or newer") as e:
        wl.compile(half_sums, arch="sm_61", cache=False)
    assert "wl.atomic_add(total, i % 3, x[i])" in str(e.value)

    @wl.kernel
    def half_max(x: wl.array(dtype=wl.float16)):
        wl.atomic_max(x, 0, x[1])

    with pytest.raises(wl.KernelCompileError, match=r"only atomic_add and atomic_sub"):
        wl.compile(half_max, arch="sm_90", cache=False)
