"""memcheck per PTX variable: a shared or local access whose address derives from a
variable (its symbol plus an offset, PTX ISA "State Spaces") must stay inside that
variable, not merely inside the block's shared window or the thread's local memory."""

import struct

import numpy as np
import pytest

import warp_lab as wl
from warp_lab import sim
from warp_lab.sim.provenance import address_variables

HEAD = """
.version 8.0
.target sm_90
.address_size 64
"""


def _kernel(body, decls):
    """Kernel k(out, i): ``decls`` declares variables; ``body`` may use %r1 = i, %rd1 = out."""
    return sim.parse_module(HEAD + f"""
.visible .entry k(.param .u64 out, .param .u32 i)
{{
  .reg .b32 %r<12>;
  .reg .b64 %rd<12>;
  .reg .pred %p<4>;
  {decls}
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [i];
{body}
  ret;
}}
""")


def _run(gpu, mod, i, n_out=4, **kw):
    out = gpu.put(np.zeros(n_out, np.int32))
    res = sim.run(mod, "k", 1, 1, struct.pack("<QI", out, i), gpu.mem, **kw)
    return res, gpu.get(out)


SHARED2 = ".shared .align 4 .b8 a[16];\n  .shared .align 4 .b8 b[16];"

# a[i] = 5 (thread 0), then out[0] = b[0], out[1] = a[3]: 32-bit shared addresses
STORE_A = _kernel("""
  mov.u32 %r2, %tid.x;
  setp.ne.u32 %p1, %r2, 0;
  @%p1 bra END;
  st.shared.u32 [b], 1;
  mov.u32 %r3, a;
  shl.b32 %r4, %r1, 2;
  add.s32 %r5, %r3, %r4;
  st.shared.u32 [%r5], 5;
  ld.shared.u32 %r6, [b];
  st.global.u32 [%rd1], %r6;
  ld.shared.u32 %r7, [a+12];
  st.global.u32 [%rd1+4], %r7;
END:
""", SHARED2)


def test_one_past_a_shared_array_into_its_neighbour_is_reported(gpu):
    res, out = _run(gpu, STORE_A, 4)
    [f] = res.findings
    store = next(ins.line for ins in STORE_A.code if ins.text.startswith("st.shared.u32 [%r5]"))
    assert (f.kind, f.ptx_line, f.thread) == ("out_of_bounds", store, (0, 0, 0))
    assert f.details["address"] == 16 and f.details["space"] == "shared"
    assert "0 bytes past the end of shared variable a of 16 bytes" in f.message
    assert res.partial and out.tolist() == [0, 0, 0, 0]       # stopped before the store


def test_last_element_of_a_shared_array_is_not_reported(gpu):
    res, out = _run(gpu, STORE_A, 3)
    assert res.findings == [] and out.tolist() == [1, 5, 0, 0]


def test_shared_index_below_the_array_is_reported(gpu):
    res, _ = _run(gpu, STORE_A, 0xFFFFFFFF)     # a[-1]: wraps to 0xfffffffc
    [f] = res.findings
    assert f.kind == "out_of_bounds" and "4 bytes before shared variable a" in f.message


def test_without_memcheck_only_the_window_is_enforced(gpu):
    res, out = _run(gpu, STORE_A, 4, checks=())
    # b[0] overwritten; a[3], never written, holds the fill word fresh shared memory has
    assert res.findings == [] and out.tolist() == [5, 0x7FF8DEAD, 0, 0]


# generic addressing: cvta.shared of b, then b[i] through a 64-bit generic pointer
GENERIC_B = _kernel("""
  mov.u64 %rd2, b;
  cvta.shared.u64 %rd3, %rd2;
  mul.wide.u32 %rd4, %r1, 4;
  add.s64 %rd5, %rd3, %rd4;
  st.u32 [%rd5], 9;
  ld.u32 %r2, [%rd5];
  st.global.u32 [%rd1], %r2;
""", SHARED2 + "\n  .shared .align 4 .b8 c[16];")


@pytest.mark.parametrize("i,ok", [(0, True), (3, True), (4, False)])
def test_generic_pointer_into_shared_array(gpu, i, ok):
    res, out = _run(gpu, GENERIC_B, i)
    if ok:
        assert res.findings == [] and out[0] == 9
    else:
        [f] = res.findings
        assert f.kind == "out_of_bounds" and "shared variable b" in f.message


# a loop-carried pointer (phi through mov), stepping 4 bytes: writes a[0..i-1]
LOOP_A = _kernel("""
  mov.u32 %r2, a;
  mov.u32 %r3, 0;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra END;
LOOP:
  st.shared.u32 [%r2], %r3;
  add.s32 %r2, %r2, 4;
  add.s32 %r3, %r3, 1;
  setp.lt.u32 %p2, %r3, %r1;
  @%p2 bra LOOP;
END:
""", SHARED2)


def test_loop_carried_pointer_is_checked_at_each_access(gpu):
    res, _ = _run(gpu, LOOP_A, 4)
    assert res.findings == []
    res, _ = _run(gpu, LOOP_A, 5)
    assert [f.kind for f in res.findings] == ["out_of_bounds"]


# a pointer that may point into a or b (selp) is checked against the window only:
# b[3] through it is a legal access and must not be reported against a
SELECT = _kernel("""
  mov.u32 %r2, a;
  mov.u32 %r3, b;
  setp.ne.u32 %p1, %r1, 0;
  selp.b32 %r4, %r3, %r2, %p1;
  st.shared.u32 [%r4+12], 7;
  ld.shared.u32 %r5, [b+12];
  st.global.u32 [%rd1], %r5;
""", SHARED2)


def test_pointer_into_one_of_two_arrays_is_not_misattributed(gpu):
    store = next(i.pc for i in SELECT.code if i.op == "st" and "shared" in i.mods)
    assert store not in address_variables(SELECT)
    [a_store] = [i.pc for i in STORE_A.code if i.text.startswith("st.shared.u32 [%r5]")]
    assert address_variables(STORE_A)[a_store] == "a"
    res, out = _run(gpu, SELECT, 1)
    assert res.findings == [] and out[0] == 7


# local memory: the kernel's depot is followed by a device function's depot, so
# depot[4] stays inside the thread's local memory but outside the kernel's depot
LOCAL = sim.parse_module(HEAD + """
.func helper()
{
  .local .align 4 .b8 fdepot[16];
  ret;
}
.visible .entry k(.param .u64 out, .param .u32 i)
{
  .local .align 4 .b8 depot[16];
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [i];
  mov.u64 %rd2, depot;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.local.u32 [%rd4], 3;
  ld.local.u32 %r2, [%rd4];
  st.global.u32 [%rd1], %r2;
  ret;
}
""")


@pytest.mark.parametrize("i,ok", [(3, True), (4, False)])
def test_local_array_overflow_into_another_depot(gpu, i, ok):
    res, out = _run(gpu, LOCAL, i)
    if ok:
        assert res.findings == [] and out[0] == 3
    else:
        [f] = res.findings
        assert f.kind == "out_of_bounds" and "local variable depot" in f.message
        assert "32 bytes of local memory" in f.message


def test_warp_lab_kernel_shared_atomic_one_past_the_end_is_reported():
    @wl.kernel
    def k(x: wl.array(dtype=wl.int32), n: int):
        s = wl.shared_array(8, wl.int32)
        t = wl.shared_array(8, wl.int32)
        i = wl.tid()
        s[i] = 0
        t[i] = 0
        wl.syncthreads()
        if i == 0:
            wl.atomic_add(s, n, 1)
        wl.syncthreads()
        x[i] = s[i] + 10 * t[i]

    x = np.zeros(8, np.int32)
    r = wl.launch(k, dim=8, block_dim=8, inputs=[x, 7], device="sim")
    assert not r.findings and x.tolist() == [0] * 7 + [1]
    r = wl.launch(k, dim=8, block_dim=8, inputs=[x, 8], device="sim")
    assert [f.kind for f in r.findings] == ["out_of_bounds"]
    assert "atomic" in r.findings[0].message


@wl.kernel
def _two_local_arrays(x: wl.array(dtype=wl.int32), n: int):
    a = wl.local_array(4, wl.int32)
    b = wl.local_array(4, wl.int32)
    for j in range(4):
        a[j] = j
        b[j] = 10 + j
    a[n] = 99
    x[0] = a[0]
    x[1] = b[0]


@pytest.mark.parametrize("opt", [0, 3])
def test_local_array_index_past_its_end_is_named_at_every_opt_level(opt):
    """At ``opt=0`` LLVM lays ``a`` and ``b`` (and the scalar variables) out in one PTX
    ``__local_depot0``, so ``a[4]`` is ``b[0]``'s slot: inside the thread's local memory,
    and an address check alone sees nothing. memcheck's index check names the array and
    the element at every opt level, and stops the thread before the store."""
    x = np.zeros(2, np.int32)
    r = wl.launch(_two_local_arrays, dim=1, block_dim=1, inputs=[x, 3], device="sim", opt=opt)
    assert r.findings == [] and x.tolist() == [0, 10]
    x[:] = -1
    r = wl.launch(_two_local_arrays, dim=1, block_dim=1, inputs=[x, 4], device="sim", opt=opt)
    [f] = r.findings
    assert f.kind == "out_of_bounds" and f.source_line == _two_local_arrays.source.first_line + 7
    assert "a[4] is outside a (shape (4,))" in f.message and "__local_depot" not in f.message
    assert (f.details["array"], f.details["index"]) == ("a", (4,))
    assert x.tolist() == [-1, -1]          # the thread stopped at the bad store


def test_without_memcheck_the_overflow_lands_in_the_neighbour_at_opt0():
    """What the check prevents: the same launch without memcheck writes ``b[0]``."""
    x = np.zeros(2, np.int32)
    r = wl.launch(_two_local_arrays, dim=1, block_dim=1, inputs=[x, 4], device="sim", opt=0,
                  checks=())
    assert r.findings == [] and x.tolist() == [0, 99]
