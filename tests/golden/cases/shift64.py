"""64-bit shifts by a 64-bit count (docs/language.md "shifts"; issue 23).

PTX ISA 9.7.8.8 "shl" and 9.7.8.9 "shr": the count operand is ``.u32``, and a count above
the register width is clamped to the width (``shl``/``shr.u`` give 0, ``shr.s`` the sign).
A 64-bit count must therefore be clamped before it is cut to 32 bits: cut first, 2**32 + 1
would shift by 1. So each count reaches the shift through ``min.u64 …, 64`` and a
``cvt.u32.u64`` of that, and the shift is that PTX instruction itself, as inline PTX
(``lower_ops._shift``): LLVM's ``shl`` of a count ≥ 64 is poison, and at opt=3 LLVM
dropped a clamp written in LLVM IR (the select's other arm knows the count is < 64), after
which the back end's clamping ``shl.b64`` took the count's low 32 bits. At opt=3 the three
shifts share one clamp, and no ``selp`` is left.
"""
import warp_lab as wl

# RUN: CHECK arch=sm_80
# CHECK: ld.param.b64 [[C:%rd[0-9]+]], [shifts_param_3];
# CHECK: min.u64 [[M:%rd[0-9]+]], [[C]], 64;
# CHECK: cvt.u32.u64 [[N:%r[0-9]+]], [[M]];
# CHECK: // begin inline asm
# CHECK-NEXT: shl.b64 [[L:%rd[0-9]+]], {{%rd[0-9]+}}, [[N]];
# CHECK: st.global.b64 [{{%rd[0-9]+}}], [[L]];
# CHECK: // begin inline asm
# CHECK-NEXT: shr.s64 [[R:%rd[0-9]+]], {{%rd[0-9]+}}, [[N]];
# CHECK: st.global.b64 [{{%rd[0-9]+}}+8], [[R]];
# CHECK: // begin inline asm
# CHECK-NEXT: shr.u64 {{%rd[0-9]+}}, {{%rd[0-9]+}}, [[N]];
# CHECK-NOT: selp.b64

# RUN: NOBARE arch=sm_80
# NOBARE: ld.param.b64 [[C:%rd[0-9]+]], [shifts_param_3];
# NOBARE-NOT: cvt.u32.u64 {{%r[0-9]+}}, [[C]];

# RUN: O0 arch=sm_80 opt=0
# O0: min.u64 [[M:%rd[0-9]+]], {{%rd[0-9]+}}, 64;
# O0-NEXT: cvt.u32.u64 [[N:%r[0-9]+]], [[M]];
# O0-NEXT: // begin inline asm
# O0-NEXT: shl.b64 {{%rd[0-9]+}}, {{%rd[0-9]+}}, [[N]];
# O0: min.u64 [[M1:%rd[0-9]+]], {{%rd[0-9]+}}, 64;
# O0-NEXT: cvt.u32.u64 [[N1:%r[0-9]+]], [[M1]];
# O0-NEXT: // begin inline asm
# O0-NEXT: shr.s64 {{%rd[0-9]+}}, {{%rd[0-9]+}}, [[N1]];
# O0: min.u64 [[M2:%rd[0-9]+]], {{%rd[0-9]+}}, 64;
# O0-NEXT: cvt.u32.u64 [[N2:%r[0-9]+]], [[M2]];
# O0-NEXT: // begin inline asm
# O0-NEXT: shr.u64 {{%rd[0-9]+}}, {{%rd[0-9]+}}, [[N2]];


@wl.kernel
def shifts(s: wl.array(dtype=wl.int64), a: wl.int64, c: wl.int64, u: wl.uint64):
    s[0] = a << c
    s[1] = a >> c
    s[2] = wl.int64(u >> wl.uint64(c))
