"""memcheck reports an integer ``div``/``rem`` by zero in an active lane.

The PTX ISA leaves the quotient unspecified and the GPU traps nothing, so without
the check a zero divisor is a silently wrong value. References: numpy for the
values that are defined, the thread and line the zero sits at for the finding.
"""

import struct

import numpy as np

import warp_lab as wl
from warp_lab import sim
from warp_lab.examples import source_line


@wl.kernel
def ratios(a: wl.array(dtype=wl.int32), b: wl.array(dtype=wl.int32),
           q: wl.array(dtype=wl.int32), safe: wl.array(dtype=wl.int32)):
    i = wl.tid()
    q[i] = a[i] // b[i]  # marker: unguarded
    if b[i] != 0:
        safe[i] = a[i] % b[i]


def _run(b, checks=("memcheck",)):
    a = np.arange(-20, 20, 3, dtype=np.int32)[:len(b)]
    b = np.asarray(b, np.int32)
    q, safe = np.zeros_like(a), np.full_like(a, 99)
    r = wl.launch(ratios, dim=len(a), inputs=[a, b, q, safe], device="sim", checks=checks)
    return a, b, q, safe, r


def test_a_zero_divisor_is_reported_at_the_users_line_naming_the_first_thread():
    b = [3, -2, 5, 0, 7, 0, 1, 2]
    a, b, q, safe, r = _run(b)
    assert [f.kind for f in r.findings] == ["division_by_zero"], [str(f) for f in r.findings]
    f = r.findings[0]
    assert f.source_line == source_line(ratios, "# marker: unguarded")
    assert f.thread == (3, 0, 0) and f.block == (0, 0, 0)
    assert "divisor 0 in 2 active threads" in f.message and "undefined" in f.message
    ok = b != 0
    np.testing.assert_array_equal(q[ok], a[ok] // b[ok])                 # Python's floor
    np.testing.assert_array_equal(safe[ok], a[ok] % b[ok])
    # (safe[~ok] is not checked: having divided by b[i], LLVM may assume b[i] != 0 and
    # drop the guard, as a C++ compiler may: undefined behaviour, which is why the
    # finding matters)
    assert not r.partial                                                 # the launch went on


def test_no_finding_when_no_active_thread_divides_by_zero_or_memcheck_is_off():
    _, _, _, _, r = _run([3, -2, 5, 4, 7, 9, 1, 2])
    assert r.findings == []
    # the zero is only in the guarded % (the // of lane 3 is the only unguarded use)
    _, _, _, _, r = _run([3, -2, 5, 0], checks=())
    assert r.findings == []


PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 inp)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [inp];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 8;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.u64 %rd6, [%rd5];
  setp.lt.u32 %p1, %r1, 16;
  @%p1 rem.s64 %rd7, 1000, %rd6;
  @!%p1 div.u64 %rd7, 1000, %rd6;
  st.global.u64 [%rd4], %rd7;
  ret;
}
"""


def test_hand_written_ptx_rem_and_div_under_predicates(gpu):
    # zeros at lanes 5 (rem.s64, predicated on) and 20 (div.u64), plus lane 9 whose
    # divisor is zero in the *other* instruction's lanes only
    d = np.arange(1, 33, dtype=np.int64)
    d[[5, 20]] = 0
    a_in, a_out = gpu.put(d), gpu.put(np.zeros(32, np.int64))
    res = sim.run(sim.parse_module(PTX), "k", 1, 32, struct.pack("<QQ", a_out, a_in), gpu.mem,
                  checks=("memcheck",))
    got = {(f.kind, f.thread[0], f.ptx_line) for f in res.findings}
    lines = PTX.splitlines()
    rem_line = next(k for k, s in enumerate(lines, 1) if "rem.s64" in s)
    div_line = next(k for k, s in enumerate(lines, 1) if "div.u64" in s)
    assert got == {("division_by_zero", 5, rem_line), ("division_by_zero", 20, div_line)}
    out = gpu.get(a_out).view(np.int64)
    ok = d != 0
    lanes = np.arange(32)
    expect = np.where(lanes < 16, np.fmod(1000, np.where(ok, d, 1)), 1000 // np.where(ok, d, 1))
    np.testing.assert_array_equal(out[ok], expect[ok])
