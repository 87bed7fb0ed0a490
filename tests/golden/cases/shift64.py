"""64-bit shifts by a 64-bit count (docs/language.md "shifts"; issue 23).

PTX ISA 9.7.8.8 "shl" and 9.7.8.9 "shr": the count operand is ``.u32``, and a count above
the register width is clamped to the width (``shl``/``shr.u`` give 0, ``shr.s`` the sign).
A 64-bit count must therefore be clamped before it is cut to 32 bits: cut first, 2**32 + 1
would shift by 1. So each count reaches ``shl.b64``/``shr.u64`` through ``min.u64 …, 64``
and a ``cvt.u32.u64`` of that, and ``shr.s64`` gets a count no wider than 63 or 64, again
of the clamped value; a count ≥ 64 selects 0 for ``<<`` (where LLVM's ``shl`` would be
poison).
"""
import warp_lab as wl

# RUN: CHECK arch=sm_80
# CHECK: ld.param.b64 [[C:%rd[0-9]+]], [shifts_param_3];
# CHECK: min.u64 [[M:%rd[0-9]+]], [[C]], 64;
# CHECK: cvt.u32.u64 [[N:%r[0-9]+]], [[M]];
# CHECK: shl.b64 [[L:%rd[0-9]+]], {{%rd[0-9]+}}, [[N]];
# CHECK: selp.b64 [[L0:%rd[0-9]+]], 0, [[L]], {{%p[0-9]+}};
# CHECK: st.global.b64 [{{%rd[0-9]+}}], [[L0]];
# CHECK: selp.b64 [[S:%rd[0-9]+]], 63, [[M]], {{%p[0-9]+}};
# CHECK: cvt.u32.u64 [[SN:%r[0-9]+]], [[S]];
# CHECK: shr.s64 [[R:%rd[0-9]+]], {{%rd[0-9]+}}, [[SN]];
# CHECK: st.global.b64 [{{%rd[0-9]+}}+8], [[R]];
# CHECK: shr.u64 {{%rd[0-9]+}}, {{%rd[0-9]+}}, [[N]];

# RUN: NOBARE arch=sm_80
# NOBARE: ld.param.b64 [[C:%rd[0-9]+]], [shifts_param_3];
# NOBARE-NOT: cvt.u32.u64 {{%r[0-9]+}}, [[C]];

# RUN: O0 arch=sm_80 opt=0
# O0: min.u64 [[M:%rd[0-9]+]], {{%rd[0-9]+}}, 64;
# O0-NEXT: cvt.u32.u64 [[N:%r[0-9]+]], [[M]];
# O0-NEXT: shl.b64 {{%rd[0-9]+}}, {{%rd[0-9]+}}, [[N]];
# O0: shr.s64
# O0: min.u64 [[M2:%rd[0-9]+]], {{%rd[0-9]+}}, 64;
# O0-NEXT: cvt.u32.u64 [[N2:%r[0-9]+]], [[M2]];
# O0-NEXT: shr.u64 {{%rd[0-9]+}}, {{%rd[0-9]+}}, [[N2]];


@wl.kernel
def shifts(s: wl.array(dtype=wl.int64), a: wl.int64, c: wl.int64, u: wl.uint64):
    s[0] = a << c
    s[1] = a >> c
    s[2] = wl.int64(u >> wl.uint64(c))
