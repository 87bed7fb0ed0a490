"""Multiply-add contraction (docs/language.md "fast_math"; 0002-compiler-stages.md).

Without ``fast_math`` a float ``a * b + c`` within one expression is one ``fma.rn``
(nvcc's default ``--fmad=true``), and a product and a sum in separate statements stay a
``mul.rn`` and an ``add.rn``: the PTX ISA (9.7.3.1 "add", 9.7.3.3 "mul") lets the code
optimiser fuse a ``mul``/``add`` pair only when they carry no rounding modifier, so the
explicit ``.rn`` keeps ptxas from fusing them behind the PTX and the simulator computes
the GPU's bits. With ``fast_math`` both become ``fma`` and every f32 instruction flushes
subnormals (``.ftz``). At ``opt=0`` the expression is still one ``fma``.
"""
import warp_lab as wl

# RUN: CHECK kernel=axpy arch=sm_80
# CHECK: fma.rn.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}};
# CHECK-NOT: fma.rn
# CHECK: mul.rn.f32 [[T:%r[0-9]+]], {{%r[0-9]+}}, {{%r[0-9]+}};
# CHECK-NOT: fma.rn
# CHECK: add.rn.f32 {{%r[0-9]+}}, {{(%r[0-9]+, )?}}[[T]]
# CHECK-NOT: fma.rn

# RUN: O0 kernel=axpy arch=sm_80 opt=0
# O0: fma.rn.f32
# O0: mul.rn.f32
# O0: add.rn.f32

# RUN: FAST kernel=axpy arch=sm_80 fast_math=True
# FAST: fma.rn.ftz.f32
# FAST: fma.rn.ftz.f32
# FAST-NOT: mul.{{(rn.)?}}ftz.f32
# FAST-NOT: add.{{(rn.)?}}ftz.f32

# RUN: NOPLAIN kernel=axpy arch=sm_80 fast_math=True
# NOPLAIN-NOT: {{(mul|add|fma)(\.rn)?}}.f32


@wl.kernel
def axpy(y: wl.array(dtype=wl.float32), z: wl.array(dtype=wl.float32),
         x: wl.array(dtype=wl.float32), a: wl.float32):
    i = wl.tid()
    y[i] = a * x[i] + y[i]
    t = a * x[i]
    z[i] = t + z[i]
