"""Float → integer conversions saturate (docs/language.md; issue 23).

PTX ISA 9.7.9.21 "cvt", Integer Notes: a float → integer ``cvt`` rounds with the ``.rzi``
modifier (toward zero, as C's cast) and its result is clamped to the destination range
by default, NaN giving 0 into a 32-bit integer from f32. So ``wl.int32``/``wl.uint32`` of a
float are one ``cvt.rzi`` (never LLVM's ``fptosi``/``fptoui``, poison out of range, which
the optimiser may fold or delete), and ``wl.int8``/``wl.uint8`` clamp to their own 8-bit
range before the byte is stored (a ``cvt.rzi.s32`` then ``st.b8`` alone would wrap: 300.0
→ 44): either a ``cvt`` to the 8-bit type, or the 32-bit one clamped with ``max``/``min``.
"""
import warp_lab as wl

# RUN: CHECK arch=sm_80
# CHECK: cvt.rzi.s32.f32 [[A:%r[0-9]+]], {{%r[0-9]+}};
# CHECK: st.global.b32 [{{%rd[0-9]+}}], [[A]];
# CHECK: cvt.rzi.s32.f64 [[B:%r[0-9]+]], {{%rd[0-9]+}};
# CHECK: st.global.b32 [{{%rd[0-9]+}}+4], [[B]];
# CHECK: cvt.rzi.u32.f32 [[C:%r[0-9]+]], {{%r[0-9]+}};
# CHECK: st.global.b32 [{{%rd[0-9]+}}], [[C]];
# CHECK: cvt.rzi.s32.f32 [[D:%r[0-9]+]], {{%r[0-9]+}};
# CHECK-NEXT: max.s32 [[E:%r[0-9]+]], [[D]], -128;
# CHECK-NEXT: min.s32 [[F:%r[0-9]+]], [[E]], 127;
# CHECK: st.global.b8 [{{%rd[0-9]+}}], [[F]];
# CHECK: cvt.rzi.s32.f32 [[G:%r[0-9]+]], {{%r[0-9]+}};
# CHECK-NEXT: max.s32 [[H:%r[0-9]+]], [[G]], 0;
# CHECK-NEXT: min.s32 [[I:%r[0-9]+]], [[H]], 255;
# CHECK: st.global.b8 [{{%rd[0-9]+}}], [[I]];

# RUN: O0 arch=sm_80 opt=0
# O0: cvt.rzi.s32.f32
# O0: cvt.rzi.s32.f64
# O0: cvt.rzi.u32.f32
# O0: max.s32 {{%r[0-9]+}}, {{%r[0-9]+}}, -128;
# O0: min.s32 {{%r[0-9]+}}, {{%r[0-9]+}}, 127;
# O0: max.s32 {{%r[0-9]+}}, {{%r[0-9]+}}, 0;
# O0: min.s32 {{%r[0-9]+}}, {{%r[0-9]+}}, 255;

# RUN: NOWRAP arch=sm_80
# NOWRAP-NOT: cvt.rzi.s16


@wl.kernel
def conv(q: wl.array(dtype=wl.int32), u: wl.array(dtype=wl.uint32),
         b8: wl.array(dtype=wl.int8), u8: wl.array(dtype=wl.uint8),
         f: wl.array(dtype=wl.float32), d: wl.array(dtype=wl.float64)):
    q[0] = wl.int32(f[0])
    q[1] = wl.int32(d[0])
    u[0] = wl.uint32(f[1])
    b8[0] = wl.int8(f[2])
    u8[0] = wl.uint8(f[3])
