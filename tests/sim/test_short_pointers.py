"""32-bit state-space addresses (LLVM's ``--nvptx-short-ptr``, nvcc's default) and ``cvta``
in both directions and both sizes.

Rules (PTX ISA "Generic Addressing", "Addresses as Operands", "cvta"): a ``.shared``,
``.local`` or ``.const`` address is an offset within its state space; ``[%r+imm]`` with a
32-bit register is 32-bit arithmetic (wraps modulo 2**32); ``cvta.space`` adds the
window base, ``cvta.to.space`` subtracts it; ``cvt.u64.u32`` / ``cvt.u32.u64`` change
the width. References: the values each thread stored, and plain-Python statements of
those rules."""

import struct

import numpy as np

from warp_lab import sim
from warp_lab.compiler import nvptx

from sim_helpers import pack


def _kernel(body, decls=""):
    return f"""
.version 8.0
.target sm_90
.address_size 64
{decls}
.visible .entry k(.param .u64 out)
{{
  .reg .pred %p<8>;
  .reg .b32 %r<40>;
  .reg .b64 %rd<40>;
  .shared .align 16 .b8 pad[48];
  .shared .align 4 .b8 sh[256];
  .local .align 8 .b8 depot[64];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 16;
  add.s64 %rd3, %rd1, %rd2;
{body}
  ret;
}}
"""


def _run(gpu, body, block=64, decls="", nout=4):
    out = gpu.put(np.zeros((block, nout), np.uint32))
    res = sim.run(sim.parse_module(_kernel(body, decls)), "k", 1, block,
                  struct.pack("<Q", out), gpu.mem)
    return gpu.get(out), res


def test_shared_32bit_addresses_wrap_like_32bit_arithmetic(gpu):
    """The libdevice pattern that broke: base - k, then [reg + k] (thread 0's base - 8 wraps
    below zero; the 32-bit sum must come back to the right offset, not 4 GiB above it)."""
    body = """
  mov.b32 %r2, sh;
  shl.b32 %r3, %r1, 2;
  add.s32 %r4, %r2, %r3;
  mul.lo.u32 %r5, %r1, 3;
  st.shared.u32 [%r4], %r5;
  bar.sync 0;
  xor.b32 %r6, %r1, 1;
  shl.b32 %r7, %r6, 2;
  add.s32 %r8, %r2, %r7;
  sub.s32 %r9, %r8, 56;
  ld.shared.u32 %r10, [%r9+56];
  st.global.u32 [%rd3], %r10;
  st.global.u32 [%rd3+4], %r2;
"""
    out, res = _run(gpu, body)
    assert res.findings == [], [str(f) for f in res.findings]
    t = np.arange(64)
    np.testing.assert_array_equal(out[:, 0], (t ^ 1) * 3)
    # sh follows 48 bytes of pad: its shared-space address is the offset 48
    np.testing.assert_array_equal(out[:, 1], 48)


def test_cvta_shared_both_directions_and_both_sizes(gpu):
    body = """
  mov.b32 %r2, sh;
  shl.b32 %r3, %r1, 2;
  add.s32 %r4, %r2, %r3;
  add.s32 %r5, %r1, 1000;
  st.shared.u32 [%r4], %r5;
  bar.sync 0;
  // shared (32-bit) -> generic (64-bit), as LLVM emits it: cvt.u64.u32 + cvta.shared.u64
  cvt.u64.u32 %rd4, %r4;
  cvta.shared.u64 %rd5, %rd4;
  ld.u32 %r6, [%rd5];
  st.global.u32 [%rd3], %r6;
  isspacep.shared %p1, %rd5;
  selp.u32 %r7, 1, 0, %p1;
  // generic -> shared, 64-bit then truncated, read through the 32-bit address
  cvta.to.shared.u64 %rd6, %rd5;
  cvt.u32.u64 %r8, %rd6;
  ld.shared.u32 %r9, [%r8];
  add.u32 %r9, %r9, %r7;
  st.global.u32 [%rd3+4], %r9;
  // the .u32 forms: cvta.to.shared.u32 of the generic address's low 32 bits
  cvt.u32.u64 %r10, %rd5;
  cvta.to.shared.u32 %r11, %r10;
  st.global.u32 [%rd3+8], %r11;
  // a generic store lands in the block's shared memory
  add.s32 %r12, %r5, 5000;
  st.u32 [%rd5], %r12;
  ld.shared.u32 %r13, [%r4];
  st.global.u32 [%rd3+12], %r13;
"""
    out, res = _run(gpu, body)
    assert res.findings == [], [str(f) for f in res.findings]
    t = np.arange(64)
    np.testing.assert_array_equal(out[:, 0], t + 1000)
    np.testing.assert_array_equal(out[:, 1], t + 1001)       # +1: isspacep.shared was true
    np.testing.assert_array_equal(out[:, 2], 48 + 4 * t)      # back to the shared offset
    np.testing.assert_array_equal(out[:, 3], t + 6000)


def test_generic_shared_address_is_window_base_plus_offset(gpu):
    """cvta.shared.u64 adds the window base (memory.SHARED_WINDOW); cvta.shared.u32 keeps
    the low 32 bits, which for the 4 GiB-aligned window is the offset itself."""
    body = """
  mov.u64 %rd4, sh;
  cvta.shared.u64 %rd5, %rd4;
  st.global.u64 [%rd3], %rd5;
  mov.b32 %r2, sh;
  cvta.shared.u32 %r3, %r2;
  st.global.u32 [%rd3+8], %r3;
"""
    out, res = _run(gpu, body, block=32)
    assert res.findings == []
    gen = out[:, :2].copy().view(np.uint64)[:, 0]
    np.testing.assert_array_equal(gen, sim.memory.SHARED_WINDOW + 48)
    np.testing.assert_array_equal(out[:, 2], 48)


def test_local_32bit_depot_and_cvta_both_directions(gpu):
    """The short-pointer stack: mov.b32 of the depot, 32-bit st.local/ld.local with
    offsets, cvta.local to a generic address and back; each thread sees its own depot."""
    body = """
  mov.b32 %r2, depot;
  mul.lo.u32 %r3, %r1, 7;
  st.local.u32 [%r2+4], %r3;
  add.s32 %r4, %r2, 12;
  sub.s32 %r5, %r4, 16;
  add.u32 %r6, %r3, 1;
  st.local.u32 [%r5+16], %r6;
  cvt.u64.u32 %rd4, %r2;
  cvta.local.u64 %rd5, %rd4;
  ld.u32 %r7, [%rd5+4];
  st.global.u32 [%rd3], %r7;
  ld.u32 %r8, [%rd5+12];
  st.global.u32 [%rd3+4], %r8;
  cvta.to.local.u64 %rd6, %rd5;
  cvt.u32.u64 %r9, %rd6;
  add.u32 %r10, %r3, 2;
  st.local.u32 [%r9+8], %r10;
  cvt.u32.u64 %r11, %rd5;
  cvta.to.local.u32 %r12, %r11;
  ld.local.u32 %r13, [%r12+8];
  st.global.u32 [%rd3+8], %r13;
  isspacep.local %p1, %rd5;
  selp.u32 %r14, 1, 0, %p1;
  st.global.u32 [%rd3+12], %r14;
"""
    out, res = _run(gpu, body)
    assert res.findings == [], [str(f) for f in res.findings]
    t = np.arange(64)
    np.testing.assert_array_equal(out[:, 0], 7 * t)
    np.testing.assert_array_equal(out[:, 1], 7 * t + 1)
    np.testing.assert_array_equal(out[:, 2], 7 * t + 2)
    np.testing.assert_array_equal(out[:, 3], 1)


def test_32bit_shared_address_below_zero_is_reported_where_it_points(gpu):
    """sh - 52 wraps to 0xfffffffc in 32 bits: an out-of-bounds read at that address
    (not at a 64-bit sum 4 GiB higher, and not silently at pad's bytes)."""
    body = """
  mov.b32 %r2, sh;
  sub.s32 %r3, %r2, 52;
  ld.shared.u32 %r4, [%r3];
  st.global.u32 [%rd3], %r4;
"""
    out, res = _run(gpu, body, block=32)
    [f] = res.findings
    assert f.kind == "out_of_bounds" and res.partial
    assert f.details["address"] == 0xFFFF_FFFC and f.details["space"] == "shared"
    assert "shared read of 4 bytes at address 0xfffffffc" in f.message
    # 32-bit arithmetic past the end of the block's 304 bytes of shared memory
    body = """
  mov.b32 %r2, sh;
  ld.shared.u32 %r4, [%r2+256];
  st.global.u32 [%rd3], %r4;
"""
    out, res = _run(gpu, body, block=32)
    [f] = res.findings
    assert f.details["address"] == 48 + 256


def test_const_32bit_addresses_and_cvta_const(gpu):
    decls = ".const .align 4 .b32 tab[4] = {10, 20, 30, 40};\n" \
            ".const .align 8 .b64 big[2] = {7, 9};"
    body = """
  mov.b32 %r2, tab;
  and.b32 %r3, %r1, 3;
  shl.b32 %r4, %r3, 2;
  add.s32 %r5, %r2, %r4;
  ld.const.u32 %r6, [%r5];
  st.global.u32 [%rd3], %r6;
  cvt.u64.u32 %rd4, %r5;
  cvta.const.u64 %rd5, %rd4;
  ld.u32 %r7, [%rd5];
  st.global.u32 [%rd3+4], %r7;
  cvta.to.const.u64 %rd6, %rd5;
  cvt.u32.u64 %r8, %rd6;
  mov.b32 %r9, big;
  ld.const.u32 %r10, [%r9+8];
  add.u32 %r10, %r10, %r8;
  sub.u32 %r10, %r10, %r5;
  st.global.u32 [%rd3+8], %r10;
  ld.const.u32 %r11, [tab+12];
  st.global.u32 [%rd3+12], %r11;
"""
    out, res = _run(gpu, body, block=32, decls=decls)
    assert res.findings == [], [str(f) for f in res.findings]
    t = np.arange(32)
    tab = np.array([10, 20, 30, 40])
    np.testing.assert_array_equal(out[:, 0], tab[t & 3])
    np.testing.assert_array_equal(out[:, 1], tab[t & 3])
    np.testing.assert_array_equal(out[:, 2], 9)   # cvta.to.const gave back the same offset
    np.testing.assert_array_equal(out[:, 3], 40)
    assert all(not name.startswith("const ") for _, _, name in gpu.mem.allocations())


def test_llvm_short_pointer_output_runs(gpu):
    """LLVM IR through warp_lab's own target machine (which enables --nvptx-short-ptr):
    shared pointers are 32-bit, addrspacecast in both directions becomes
    cvt + cvta(.to).shared.u64; the simulator must agree with the IR's meaning."""
    tm = nvptx.target_machine("sm_90", 3)
    ir = f"""
target triple = "nvptx64-nvidia-cuda"
target datalayout = "{tm.target_data}"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()
@sh = internal addrspace(3) global [64 x i32] undef, align 4
define void @k(ptr %out, ptr %gen) {{
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr i32, ptr addrspace(3) @sh, i32 %t
  %v0 = mul i32 %t, 5
  store i32 %v0, ptr addrspace(3) %p
  call void @llvm.nvvm.barrier0()
  %g = addrspacecast ptr addrspace(3) %p to ptr
  %tw = zext i32 %t to i64
  %slot = getelementptr ptr, ptr %gen, i64 %tw
  store volatile ptr %g, ptr %slot
  %g2 = load volatile ptr, ptr %slot
  %s2 = addrspacecast ptr %g2 to ptr addrspace(3)
  %n = xor i32 %t, 1
  %q = getelementptr i32, ptr addrspace(3) @sh, i32 %n
  %a = load i32, ptr addrspace(3) %s2
  %b = load i32, ptr addrspace(3) %q
  %c = load i32, ptr %g2
  %s = add i32 %a, %b
  %s3 = add i32 %s, %c
  %o = getelementptr i32, ptr %out, i64 %tw
  store i32 %s3, ptr %o
  ret void
}}
!nvvm.annotations = !{{!0}}
!0 = !{{ptr @k, !"kernel", i32 1}}
"""
    import llvmlite.binding as llvm
    ptx = tm.emit_assembly(llvm.parse_assembly(ir))
    assert "cvta.shared.u64" in ptx and "cvta.to.shared.u64" in ptx
    assert "mov.b32" in ptx and ".shared.b32" in ptx
    mod = sim.parse_module(ptx)
    out = gpu.put(np.zeros(64, np.uint32))
    gen = gpu.put(np.zeros(64, np.uint64))
    res = sim.run(mod, "k", 1, 64, pack(mod, "k", [out, gen]), gpu.mem)
    assert res.findings == [], [str(f) for f in res.findings]
    t = np.arange(64)
    np.testing.assert_array_equal(gpu.get(out), 5 * t + 5 * (t ^ 1) + 5 * t)
    np.testing.assert_array_equal(gpu.get(gen), sim.memory.SHARED_WINDOW + 4 * t)
