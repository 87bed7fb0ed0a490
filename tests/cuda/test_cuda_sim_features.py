"""NVRTC's PTX for CUDA C++ intrinsics, atomics, warp collectives, cooperative groups,
16-bit and half/bfloat16 arithmetic, run on the simulator against numpy / ml_dtypes."""

from __future__ import annotations

import numpy as np
import pytest

import warp_lab as wl

pytest.importorskip("cuda.bindings.nvrtc")

SRC = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ __noinline__ float load_generic(const float* p, int i) { return p[i]; }
extern "C" __global__ void bits(const unsigned* x, unsigned* out) {
    int i = threadIdx.x; unsigned v = x[i];
    out[6*i+0] = __popc(v); out[6*i+1] = __clz(v); out[6*i+2] = __brev(v);
    out[6*i+3] = __byte_perm(v, 0x12345678u, 0x5140); out[6*i+4] = (v >> 5) & 0x3f;
    out[6*i+5] = __umulhi(v, 0x9e3779b9u);
}
extern "C" __global__ void warpops(const int* x, int* out) {
    int i = threadIdx.x; int v = x[i];
    out[6*i+0] = __ballot_sync(0xffffffffu, v & 1);
    out[6*i+1] = __any_sync(0xffffffffu, v > 90); out[6*i+2] = __all_sync(0xffffffffu, v >= 0);
    out[6*i+3] = __shfl_xor_sync(0xffffffffu, v, 3);
    out[6*i+4] = __reduce_add_sync(0xffffffffu, v);
    out[6*i+5] = __match_any_sync(0xffffffffu, v % 4);
}
extern "C" __global__ void atomics(int* c, unsigned* u, float* f, double* d) {
    int i = threadIdx.x;
    atomicAdd(&c[0], 1); atomicMax(&c[1], i); atomicMin(&c[2], -i); atomicExch(&c[3], 7);
    atomicCAS(&c[4], 0, i + 100); atomicOr(&u[0], 1u << (i % 32)); atomicXor(&u[1], i);
    atomicInc(&u[2], 10u); atomicAdd(&f[0], 0.5f); atomicAdd(&d[0], 0.25);
}
extern "C" __global__ void generic(const float* x, float* out) {
    __shared__ float s[64];
    s[threadIdx.x] = x[threadIdx.x] * 2.0f;
    __syncthreads();
    out[threadIdx.x] = load_generic(s, 63 - threadIdx.x) + load_generic(x, threadIdx.x);
}
extern "C" __global__ void shorts(const short* a, const unsigned short* b, short* out,
                                  long long* w) {
    int i = threadIdx.x;
    out[i] = (short)(a[i] * 3 + (short)b[i]);
    w[i] = (long long)a[i] * (long long)b[i] * 1000003LL;
}
extern "C" __global__ void tiles(const int* x, int* out) {
    auto tile = cg::tiled_partition<8>(cg::this_thread_block());
    int v = x[threadIdx.x];
    for (int o = tile.size() / 2; o > 0; o /= 2) v += tile.shfl_down(v, o);
    if (tile.thread_rank() == 0) out[threadIdx.x / 8] = v;
}
extern "C" __global__ void half2s(const __half2* a, const __half2* b, __half2* out, float* f) {
    int i = threadIdx.x; __half2 x = a[i], y = b[i];
    out[6*i+0] = __hadd2(x, y); out[6*i+1] = __hsub2(x, y); out[6*i+2] = __hmul2(x, y);
    out[6*i+3] = __hfma2(x, y, x); out[6*i+4] = __hmax2(x, y);
    out[6*i+5] = __floats2half2_rn(f[i], f[i] * 2.0f);
    f[32 + i] = __hblt2(x, y) ? 1.0f : 0.0f;
}
extern "C" __global__ void bf16s(const __nv_bfloat16* a, const __nv_bfloat16* b,
                                 __nv_bfloat16* o, const float* f, __nv_bfloat162* p) {
    int i = threadIdx.x; __nv_bfloat16 x = a[i], y = b[i];
    o[5*i+0] = __hadd(x, y); o[5*i+1] = __hmul(x, y); o[5*i+2] = __hfma(x, y, x);
    o[5*i+3] = __float2bfloat16(f[i]); o[5*i+4] = __float2bfloat16_rz(f[i]);
    p[i] = __hadd2(p[i], __floats2bfloat162_rn(f[i], 2.0f));
}
extern "C" __global__ void prints(int n) { if (threadIdx.x < n) printf("hello %d\n", threadIdx.x); }
"""


@pytest.fixture(scope="module", params=["sm_80", "sm_90"])
def ks(request):
    return wl.cuda_kernels(SRC, arch=request.param)


def _run(k, inputs, block=32):
    r = wl.launch(k, grid=1, block=block, inputs=inputs, device="sim")
    assert r.sim.findings == []
    return r


def test_bit_intrinsics(ks):
    x = np.random.default_rng(1).integers(0, 2**32, 32, dtype=np.uint32)
    out = np.zeros(192, np.uint32)
    _run(ks["bits"], [x, out])
    o = out.reshape(32, 6)
    assert list(o[:, 0]) == [bin(int(v)).count("1") for v in x]
    assert list(o[:, 1]) == [32 - int(v).bit_length() for v in x]
    assert list(o[:, 2]) == [int(f"{int(v):032b}"[::-1], 2) for v in x]
    both = [int(v) | 0x12345678 << 32 for v in x]   # __byte_perm selectors 0,4,1,5
    assert list(o[:, 3]) == [sum(((b >> (8 * s)) & 0xFF) << (8 * k)
                                 for k, s in enumerate((0, 4, 1, 5))) for b in both]
    assert np.array_equal(o[:, 4], (x >> 5) & 0x3F)
    assert list(o[:, 5]) == [(int(v) * 0x9E3779B9) >> 32 for v in x]


def test_warp_collectives(ks):
    x = np.random.default_rng(2).integers(0, 100, 32).astype(np.int32)
    out = np.zeros(192, np.int32)
    _run(ks["warpops"], [x, out])
    o = out.reshape(32, 6)
    ballot = sum(1 << k for k in range(32) if x[k] & 1)
    assert np.all(o[:, 0].view(np.uint32) == ballot)
    assert np.all(o[:, 1] == int((x > 90).any())) and np.all(o[:, 2] == 1)
    assert np.array_equal(o[:, 3], x[np.arange(32) ^ 3])
    assert np.all(o[:, 4] == x.sum())
    for i in range(32):
        assert o[i, 5].view(np.uint32) == sum(1 << k for k in range(32) if x[k] % 4 == x[i] % 4)


def test_atomics(ks):
    c = np.array([0, -5, 5, 0, 0], np.int32)
    u = np.array([0, 0, 0], np.uint32)
    f, d = np.zeros(1, np.float32), np.zeros(1)
    _run(ks["atomics"], [c, u, f, d], block=64)
    assert list(c) == [64, 63, -63, 7, 100] or (list(c[:4]) == [64, 63, -63, 7]
                                                and 100 <= c[4] < 164)
    # atomicInc wraps at 10: 64 increments from 0 -> 64 mod 11
    assert list(u) == [0xFFFFFFFF, 0, 64 % 11] and f[0] == 32.0 and d[0] == 16.0


def test_generic_addressing_short_ints_and_tiles(ks):
    x = np.random.default_rng(3).random(64).astype(np.float32)
    out = np.zeros(64, np.float32)
    _run(ks["generic"], [x, out], block=64)   # a __noinline__ function's generic ld
    assert np.array_equal(out, 2 * x[::-1] + x)
    rng = np.random.default_rng(4)
    a = rng.integers(-1000, 1000, 32).astype(np.int16)
    b = rng.integers(0, 60000, 32).astype(np.uint16)
    so, w = np.zeros(32, np.int16), np.zeros(32, np.int64)
    _run(ks["shorts"], [a, b, so, w])
    assert np.array_equal(so, (a.astype(np.int32) * 3 + b.astype(np.int16)).astype(np.int16))
    assert np.array_equal(w, a.astype(np.int64) * b.astype(np.int64) * 1000003)
    xi, oi = np.arange(32, dtype=np.int32), np.zeros(4, np.int32)
    _run(ks["tiles"], [xi, oi])
    assert np.array_equal(oi, xi.reshape(4, 8).sum(1))


def test_half2_arithmetic_matches_numpy_float16(ks):
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((32, 2)) * 3).astype(np.float16)
    b = (rng.standard_normal((32, 2)) * 3).astype(np.float16)
    a[0, 0], b[1, 1] = np.nan, np.inf
    f = np.concatenate([rng.standard_normal(32) * 1000, np.zeros(32)]).astype(np.float32)
    out = np.zeros((192, 2), np.float16)
    _run(ks["half2s"], [a, b, out, f])
    o = out.reshape(32, 6, 2)
    with np.errstate(all="ignore"):
        want = [a + b, a - b, a * b,
                (a.astype(np.float64) * b + a).astype(np.float16),
                np.fmax(a, b),
                np.stack([f[:32], f[:32] * np.float32(2)], 1).astype(np.float16)]
    for k, w in enumerate(want):
        np.testing.assert_array_equal(o[:, k], w, err_msg=f"result {k}")
    assert np.all(o[0, 0:3, 0].view(np.uint16) == 0x7FFF)   # canonical NaN
    assert np.array_equal(f[32:], ((a[:, 0] < b[:, 0]) & (a[:, 1] < b[:, 1])).astype(np.float32))


def test_bfloat16_arithmetic_matches_ml_dtypes(ks):
    ml = pytest.importorskip("ml_dtypes")
    bf = ml.bfloat16
    rng = np.random.default_rng(6)
    a = (rng.standard_normal(32) * 7).astype(bf)
    b = (rng.standard_normal(32) * 7).astype(bf)
    f = (rng.standard_normal(32) * 100).astype(np.float32)
    o = np.zeros(160, np.uint16)
    p = (rng.standard_normal((32, 2))).astype(bf)
    p_bits = p.view(np.uint16).copy()
    # bfloat16 arrays pass as their 16-bit patterns (no NumPy dtype)
    _run(ks["bf16s"], [a.view(np.uint16), b.view(np.uint16), o, f, p_bits])
    got = o.view(bf).reshape(32, 5)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = [(a64 + b64).astype(bf), (a64 * b64).astype(bf), (a64 * b64 + a64).astype(bf),
            f.astype(bf)]
    for k, w in enumerate(want):
        np.testing.assert_array_equal(got[:, k].view(np.uint16), w.view(np.uint16),
                                      err_msg=f"result {k}")
    trunc = (f.view(np.uint32) >> 16).astype(np.uint16)        # round toward zero
    assert np.array_equal(got[:, 4].view(np.uint16), trunc)
    pair = np.stack([f, np.full(32, 2, np.float32)], 1).astype(bf).astype(np.float64)
    np.testing.assert_array_equal(p_bits.view(bf), (p.astype(np.float64) + pair).astype(bf))


def test_printf(ks):
    r = _run(ks["prints"], [3])
    assert sorted(r.printed.splitlines()) == ["hello 0", "hello 1", "hello 2"]


def test_an_opcode_the_simulator_lacks_names_it_and_the_cpp_line():
    src = ("extern \"C\" __global__ void k(unsigned* x)\n{\n    unsigned r;\n"
           "    asm volatile(\"fns.b32 %0, %1, 0, 1;\" : \"=r\"(r) : \"r\"(x[0]));\n"
           "    x[threadIdx.x] = r;\n}\n")
    with pytest.raises(wl.SimulatorError) as e:
        wl.launch(wl.cuda_kernel(src), grid=1, block=4, inputs=[np.ones(4, np.uint32)],
                  device="sim")
    msg = str(e.value)
    assert "opcode 'fns'" in msg and e.value.source_line == 4
    assert 'line 4 of <cuda source of k>: asm volatile("fns.b32' in msg


DOTS = r"""
extern "C" __global__ void dots(const int* a, const unsigned* b, int* out, unsigned* uout, int n)
{
    int i = threadIdx.x;
    out[3 * i + 0] = __dp4a(a[i], (int)b[i], 5);
    out[3 * i + 1] = __dp2a_lo(a[i], (int)b[i], -7);
    out[3 * i + 2] = __dp2a_hi(a[i], (int)b[i], 0);
    uout[i] = __dp4a((unsigned)a[i], b[i], 1u);
    assert(i < n);
}
"""


def _bytes(v, signed):
    out = [(v >> (8 * k)) & 0xFF for k in range(4)]
    return [x - 256 if signed and x >= 128 else x for x in out]


def _halves(v, signed):
    out = [(v >> (16 * k)) & 0xFFFF for k in range(2)]
    return [x - 65536 if signed and x >= 32768 else x for x in out]


def _wrap(x, signed=True):
    x &= 0xFFFFFFFF
    return x - 2**32 if signed and x >= 2**31 else x


def test_dp4a_dp2a_and_assert():
    rng = np.random.default_rng(7)
    a = rng.integers(-2**31, 2**31, 16).astype(np.int32)
    b = rng.integers(0, 2**32, 16, dtype=np.uint32)
    out, uout = np.zeros(48, np.int32), np.zeros(16, np.uint32)
    k = wl.cuda_kernel(DOTS, arch="sm_80")
    _run(k, [a, b, out, uout, 16], block=16)
    for i in range(16):
        ua, ub = int(a[i]) & 0xFFFFFFFF, int(b[i])
        sa, sb = _bytes(ua, True), _bytes(ub, True)   # (int) casts: both signed
        assert out[3 * i] == _wrap(5 + sum(x * y for x, y in zip(sa, sb)))
        ha = _halves(ua, True)
        assert out[3 * i + 1] == _wrap(-7 + ha[0] * sb[0] + ha[1] * sb[1])
        assert out[3 * i + 2] == _wrap(ha[0] * sb[2] + ha[1] * sb[3])
        assert uout[i] == _wrap(1 + sum(x * y for x, y in zip(_bytes(ua, False),
                                                            _bytes(ub, False))), False)
    r = wl.launch(k, grid=1, block=16, inputs=[a, b, out, uout, 8], device="sim")
    traps = [f for f in r.sim.findings if f.kind == "trap"]
    assert traps and traps[0].source_line == 9
    assert "i < n" in traps[0].message and "<cuda source of dots>:9" in traps[0].message
