"""Integer arithmetic, bit manipulation and conversions between types."""

import numpy as np

import warp_lab as wl
from warp_lab.examples.example import Example, Launch, pick, rng

f32 = np.float32
i32 = np.int32
u32 = np.uint32


# -- casts and narrow types ----------------------------------------------------------
@wl.kernel
def casts(f: wl.array(dtype=wl.float32), h: wl.array(dtype=wl.float16),
          to_i32: wl.array(dtype=wl.int32), to_i64: wl.array(dtype=wl.int64),
          to_u8: wl.array(dtype=wl.uint8), to_i8: wl.array(dtype=wl.int8),
          to_u16: wl.array(dtype=wl.uint16), to_u64: wl.array(dtype=wl.uint64),
          to_f64: wl.array(dtype=wl.float64), to_f16: wl.array(dtype=wl.float16),
          back_f32: wl.array(dtype=wl.float32), to_bool: wl.array(dtype=wl.bool_)):
    i = wl.tid()
    v = f[i]
    to_i32[i] = int(v)                              # truncates toward zero
    to_i64[i] = wl.int64(i) * 1000000 * 1000 + wl.int64(v)  # marker: int64 arithmetic
    to_u8[i] = wl.uint8(i * 37)                     # wraps modulo 256
    to_i8[i] = wl.int8(i * 5 - 100)
    to_u16[i] = wl.uint16(i * 1000)
    to_u64[i] = wl.uint64(i) << 40
    to_f64[i] = wl.float64(v) * 0.5
    to_f16[i] = wl.float16(float(h[i]) * 2.0)       # float16 storage and conversion
    back_f32[i] = float(i) + wl.float32(wl.uint32(i) * 3)
    to_bool[i] = v > 0.0


def _casts_inputs(size="small"):
    n = pick(size, 300, 1 << 20)
    g = rng("casts")
    f = (g.uniform(-1000, 1000, n)).astype(f32)
    h = g.uniform(-100, 100, n).astype(np.float16)
    return [f, h, np.zeros(n, i32), np.zeros(n, np.int64), np.zeros(n, np.uint8),
            np.zeros(n, np.int8), np.zeros(n, np.uint16), np.zeros(n, np.uint64),
            np.zeros(n, np.float64), np.zeros(n, np.float16), np.zeros(n, f32),
            np.zeros(n, bool)]


def _casts_ref(f, h, *outs):
    i = np.arange(len(f), dtype=np.int64)
    return {
        "to_i32": np.trunc(f).astype(i32),
        "to_i64": i * 1_000_000_000 + np.trunc(f).astype(np.int64),
        "to_u8": ((i * 37) % 256).astype(np.uint8),
        "to_i8": (((i * 5 - 100 + 128) % 256) - 128).astype(np.int8),
        "to_u16": ((i * 1000) % 65536).astype(np.uint16),
        "to_u64": (i.astype(np.uint64) << np.uint64(40)),
        "to_f64": f.astype(np.float64) * 0.5,
        "to_f16": (h.astype(f32) * f32(2.0)).astype(np.float16),
        "back_f32": i.astype(f32) + (i * 3).astype(f32),
        "to_bool": f > 0,
    }


# -- floor division and modulo with negative operands -----------------------------------
@wl.kernel
def floordiv_mod(a: wl.array(dtype=wl.int32), b: wl.array(dtype=wl.int32),
                 q: wl.array(dtype=wl.int32), r: wl.array(dtype=wl.int32),
                 qc: wl.array(dtype=wl.int32), rc: wl.array(dtype=wl.int32),
                 q64: wl.array(dtype=wl.int64), r64: wl.array(dtype=wl.int64)):
    i = wl.tid()
    x = a[i]
    y = b[i]
    q[i] = x // y  # marker: floor division
    r[i] = x % y
    qc[i] = x // 4
    rc[i] = x % -3
    big = wl.int64(x) * 100003
    q64[i] = big // wl.int64(y)
    r64[i] = big % wl.int64(y)


def _floordiv_inputs(size="small"):
    n = pick(size, 256, 1 << 20)
    g = rng("floordiv_mod")
    a = g.integers(-60, 61, n).astype(i32)
    b = g.integers(1, 9, n).astype(i32) * g.choice([-1, 1], n).astype(i32)
    z = np.zeros(n, i32)
    return [a, b, z, z.copy(), z.copy(), z.copy(), np.zeros(n, np.int64), np.zeros(n, np.int64)]


def _floordiv_ref(a, b, *outs):
    big = a.astype(np.int64) * 100003
    b64 = b.astype(np.int64)
    return {"q": a // b, "r": a % b, "qc": a // i32(4), "rc": a % i32(-3),
            "q64": big // b64, "r64": big % b64}


# -- integer intrinsics ---------------------------------------------------------------
@wl.kernel
def int_intrinsics(a: wl.array(dtype=wl.int32), b: wl.array(dtype=wl.int32),
                   u: wl.array(dtype=wl.uint32), out: wl.array2d(dtype=wl.int32),
                   uout: wl.array2d(dtype=wl.uint32)):
    i = wl.tid()
    x = a[i]
    out[0, i] = wl.popc(x)
    out[1, i] = wl.clz(x)
    out[2, i] = wl.ffs(x)
    out[3, i] = wl.brev(x)
    out[4, i] = wl.mulhi(x, b[i])
    out[5, i] = wl.hadd(x, b[i])
    out[6, i] = wl.rhadd(x, b[i])
    uout[0, i] = wl.uint32(wl.popc(u[i]))
    uout[1, i] = wl.brev(u[i])
    uout[2, i] = wl.mulhi(u[i], u[i] + 12345)
    uout[3, i] = wl.rhadd(u[i], u[i] + 12345)


def _int_intrinsics_inputs(size="small"):
    n = pick(size, 200, 1 << 20)
    g = rng("int_intrinsics")
    a = g.integers(-2**31, 2**31, n, dtype=np.int64).astype(i32)
    a[:4] = [0, -1, 1, -2**31]
    b = g.integers(-2**31, 2**31, n, dtype=np.int64).astype(i32)
    u = g.integers(0, 2**32, n, dtype=np.int64).astype(u32)
    return [a, b, u, np.zeros((7, n), i32), np.zeros((4, n), u32)]


def _bits(x):
    """The 32 bits of each element, most significant first: shape (n, 32)."""
    return np.unpackbits(np.asarray(x).astype(">u4").view(np.uint8)).reshape(-1, 32)


def _int_intrinsics_ref(a, b, u, out, uout):
    bits = _bits(a.view(u32))
    popc = bits.sum(axis=1)
    any_set = bits.any(axis=1)
    clz = np.where(any_set, np.argmax(bits, axis=1), 32)
    ffs = np.where(any_set, np.argmax(bits[:, ::-1], axis=1) + 1, 0)   # 1-based lowest set bit
    weights = np.uint64(1) << np.arange(32, dtype=np.uint64)   # column j (bit 31-j) -> bit j
    brev = (bits.astype(np.uint64) * weights).sum(axis=1).astype(u32)
    mulhi = ((a.astype(np.int64) * b.astype(np.int64)) >> 32).astype(i32)
    ubits = _bits(u)
    u64 = u.astype(np.uint64)
    umulhi = ((u64 * ((u + u32(12345)).astype(np.uint64))) >> np.uint64(32)).astype(u32)
    total = a.astype(np.int64) + b
    urhadd = ((u64 + (u + u32(12345)).astype(np.uint64) + np.uint64(1)) >> np.uint64(1)).astype(u32)
    return {
        "out": np.stack([popc, clz, ffs, brev.view(i32), mulhi, total >> 1,
                         (total + 1) >> 1]).astype(i32),
        "uout": np.stack([ubits.sum(axis=1).astype(u32),
                          (ubits.astype(np.uint64) * weights).sum(axis=1).astype(u32),
                          umulhi, urhadd]).astype(u32),
    }


# -- bit casts (CUDA's __float_as_int family) ------------------------------------------------
@wl.kernel
def bit_casts(x: wl.array(dtype=wl.float32), d: wl.array(dtype=wl.float64),
              h: wl.array(dtype=wl.float16), bits: wl.array2d(dtype=wl.uint32),
              flip: wl.array(dtype=wl.float32), bits64: wl.array2d(dtype=wl.int64),
              hbits: wl.array(dtype=wl.int16)):
    i = wl.tid()
    v = x[i]
    bits[0, i] = wl.float_as_uint(v)
    bits[1, i] = wl.uint32((wl.float_as_int(v) >> 23) & 0xFF)        # biased exponent
    flip[i] = wl.uint_as_float(wl.float_as_uint(v) ^ 0x80000000)      # -v, NaN payload kept
    bits[2, i] = wl.float_as_uint(wl.int_as_float(wl.float_as_int(v) + 1))  # next away from 0
    bits64[0, i] = wl.double_as_longlong(d[i])
    bits64[1, i] = wl.double_as_longlong(wl.longlong_as_double(wl.double_as_longlong(d[i]) - 1))
    hbits[i] = wl.bitcast(h[i], wl.int16)


def _bit_casts_inputs(size="small"):
    n = pick(size, 200, 1 << 20)
    g = rng("bit_casts")
    x = g.standard_normal(n).astype(f32) * f32(1e3)
    x[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -3.5, 1.0]
    x[8] = np.array(0x7FC01234, u32).view(f32)          # a NaN with a payload
    d = g.standard_normal(n) * 1e100
    d[:4] = [-0.0, np.inf, 5e-324, 1.0]
    h = g.standard_normal(n).astype(np.float16)
    return [x, d, h, np.zeros((3, n), u32), np.zeros(n, f32), np.zeros((2, n), np.int64),
            np.zeros(n, np.int16)]


def _bit_casts_ref(x, d, h, bits, flip, bits64, hbits):
    xb = x.view(u32)
    return {"bits": np.stack([xb, (xb >> u32(23)) & u32(0xFF), xb + u32(1)]),
            "flip": (xb ^ u32(0x80000000)).view(f32),
            "bits64": np.stack([d.view(np.int64), d.view(np.int64) - 1]),
            "hbits": h.view(np.int16)}


# -- bit operators, shifts, wrapping arithmetic ------------------------------------------
@wl.kernel
def bit_ops(a: wl.array(dtype=wl.int32), b: wl.array(dtype=wl.int32),
            s: wl.array(dtype=wl.int32), u: wl.array(dtype=wl.uint32),
            out: wl.array2d(dtype=wl.int32), uout: wl.array2d(dtype=wl.uint32),
            wide: wl.array(dtype=wl.int64)):
    i = wl.tid()
    x = a[i]
    y = b[i]
    k = s[i]
    out[0, i] = x & y
    out[1, i] = x | y
    out[2, i] = x ^ y
    out[3, i] = ~x
    out[4, i] = x << k
    out[5, i] = x >> k                       # arithmetic shift for signed ints
    out[6, i] = x * 1103515245 + 12345       # marker: wrapping multiply
    out[7, i] = -x + (+y)
    uout[0, i] = u[i] >> wl.uint32(k)        # logical shift for unsigned ints
    uout[1, i] = u[i] * wl.uint32(2654435761)
    wide[i] = (wl.int64(x) << 33) ^ wl.int64(y)


def _bit_ops_inputs(size="small"):
    n = pick(size, 200, 1 << 20)
    g = rng("bit_ops")
    big = dict(dtype=np.int64)
    a = g.integers(-2**31, 2**31, n, **big).astype(i32)
    b = g.integers(-2**31, 2**31, n, **big).astype(i32)
    s = g.integers(0, 32, n).astype(i32)
    u = g.integers(0, 2**32, n, **big).astype(u32)
    return [a, b, s, u, np.zeros((8, n), i32), np.zeros((2, n), u32), np.zeros(n, np.int64)]


def _bit_ops_ref(a, b, s, u, out, uout, wide):
    with np.errstate(over="ignore"):
        mul = a * i32(1103515245) + i32(12345)
        neg = -a + b
        umul = u * u32(2654435761)
    return {
        "out": np.stack([a & b, a | b, a ^ b, ~a, a << s, a >> s, mul, neg]).astype(i32),
        "uout": np.stack([u >> s.astype(u32), umul]).astype(u32),
        "wide": (a.astype(np.int64) << 33) ^ b.astype(np.int64),
    }


# -- scalar parameters of every width (the parameter ABI's alignment rules) -------------------
@wl.kernel
def scalar_params(out: wl.array(dtype=wl.float64), a: wl.int8, b: wl.int64, c: wl.uint16,
                  d: wl.float64, e: wl.float16, f: bool, g: wl.uint8, h: float):
    i = wl.tid()
    if i == 0:
        out[0] = wl.float64(a)
        out[1] = wl.float64(b)
        out[2] = wl.float64(c)
        out[3] = d
        out[4] = wl.float64(e)
        out[5] = 1.0 if f else -1.0
        out[6] = wl.float64(g)
        out[7] = wl.float64(h)


_SCALARS = [-7, 2**40 + 3, 65000, -0.125, 1.5, True, 200, 3.25]


def _scalar_params_ref(out, *vals):
    return {"out": np.array([v if not isinstance(v, bool) else (1.0 if v else -1.0)
                             for v in vals], np.float64)}


# -- funnel shifts and byte permutes (CUDA's __funnelshift_l & co., __byte_perm) ----------
@wl.kernel
def funnel_shifts(lo: wl.array(dtype=wl.uint32), hi: wl.array(dtype=wl.int32),
                  shift: wl.array(dtype=wl.int32), sel: wl.array(dtype=wl.uint32),
                  out: wl.array2d(dtype=wl.uint32)):
    i = wl.tid()
    a = lo[i]
    b = hi[i]                                   # int32: its bits, as C's (unsigned)b
    n = shift[i]
    out[0, i] = wl.funnelshift_l(a, b, n)       # shift & 31
    out[1, i] = wl.funnelshift_lc(a, b, n)      # min(shift, 32)
    out[2, i] = wl.funnelshift_r(a, b, n)
    out[3, i] = wl.funnelshift_rc(a, b, n)
    out[4, i] = wl.funnelshift_l(a, a, 8)       # rotate left by 8
    out[5, i] = wl.byte_perm(a, b, sel[i])      # any selector: high half, bit 3 ignored
    out[6, i] = wl.byte_perm(a, 0, 0x0123)      # the bytes of a reversed


def _funnel_inputs(size="small"):
    n = pick(size, 256, 1 << 20)
    g = rng("funnel_shifts")
    lo = g.integers(0, 2**32, n, dtype=np.int64).astype(u32)
    hi = g.integers(-2**31, 2**31, n, dtype=np.int64).astype(i32)
    shift = g.integers(0, 70, n).astype(i32)
    shift[:10] = [0, 1, 31, 32, 33, 63, 64, -1, 2**31 - 1, -2**31]
    sel = g.integers(0, 2**32, n, dtype=np.int64).astype(u32)
    sel[:3] = [0x3210, 0x7654, 0xFFFF89AB]
    return [lo, hi, shift, sel, np.zeros((7, n), u32)]


def _funnel_ref(lo, hi, shift, sel, out):
    """The CUDA Math API's definitions, word by word: __funnelshift_l(lo, hi, s) is
    hi << n | lo >> (32 - n), __funnelshift_r is lo >> n | hi << (32 - n) (n = s & 31, or
    min(s, 32) unsigned for the clamp forms; n = 0 gives hi resp. lo, n = 32 lo resp. hi);
    __byte_perm picks bytes of the 8-byte array x, y by 3-bit selectors."""
    a = [int(x) for x in lo]
    b = [int(x) & 0xFFFFFFFF for x in hi]
    s = [int(x) & 0xFFFFFFFF for x in shift]
    m = 0xFFFFFFFF

    def left(x, y, n):   # x = lo, y = hi
        return y if n == 0 else (x if n == 32 else ((y << n) | (x >> (32 - n))) & m)

    def right(x, y, n):
        return x if n == 0 else (y if n == 32 else ((x >> n) | (y << (32 - n))) & m)

    rows = [[left(x, y, n & 31) for x, y, n in zip(a, b, s)],
            [left(x, y, min(n, 32)) for x, y, n in zip(a, b, s)],
            [right(x, y, n & 31) for x, y, n in zip(a, b, s)],
            [right(x, y, min(n, 32)) for x, y, n in zip(a, b, s)],
            [left(x, x, 8) for x in a]]
    data = np.stack([lo, hi.view(u32)], axis=1).astype("<u4").view(np.uint8)  # (n, 8) bytes
    picks = np.stack([(sel >> u32(4 * k)) & u32(7) for k in range(4)], axis=1)
    perm = np.take_along_axis(data, picks.astype(np.intp), axis=1)       # (n, 4) bytes
    rows.append(perm.copy().view("<u4").reshape(-1))
    rows.append(lo.astype(">u4").view("<u4"))
    return {"out": np.array(rows, dtype=np.uint64).astype(u32)}


EXAMPLES = [
    Example("casts", casts, _casts_inputs, lambda a: Launch(dim=len(a[0]), block_dim=64),
            _casts_ref, ("to_i32", "to_i64", "to_u8", "to_i8", "to_u16", "to_u64", "to_f64",
                         "to_f16", "back_f32", "to_bool"),
            description="int()/float()/wl.T() casts, wrapping narrow ints, float16, bool"),
    Example("floordiv_mod", floordiv_mod, _floordiv_inputs,
            lambda a: Launch(dim=len(a[0]), block_dim=64), _floordiv_ref,
            ("q", "r", "qc", "rc", "q64", "r64"),
            description="// and % floor like Python for negative int32/int64"),
    Example("int_intrinsics", int_intrinsics, _int_intrinsics_inputs,
            lambda a: Launch(dim=len(a[0]), block_dim=64), _int_intrinsics_ref, ("out", "uout"),
            description="popc, clz, ffs, brev, mulhi, hadd, rhadd on int32 and uint32"),
    Example("funnel_shifts", funnel_shifts, _funnel_inputs,
            lambda a: Launch(dim=len(a[0]), block_dim=64), _funnel_ref, ("out",),
            description="funnelshift_l/_lc/_r/_rc (shf.l/r .wrap/.clamp) and byte_perm "
                        "(prmt) against the CUDA Math API's definitions"),
    Example("bit_casts", bit_casts, _bit_casts_inputs,
            lambda a: Launch(dim=len(a[0]), block_dim=64), _bit_casts_ref,
            ("bits", "flip", "bits64", "hbits"),
            description="float_as_int/uint, int/uint_as_float, double_as_longlong, "
                        "longlong_as_double, bitcast: numpy's view, NaN payloads kept"),
    Example("bit_ops", bit_ops, _bit_ops_inputs, lambda a: Launch(dim=len(a[0]), block_dim=64),
            _bit_ops_ref, ("out", "uout", "wide"),
            description="& | ^ ~ << >>, wrapping int32 multiply, unary -/+, int64 shifts"),
    Example("scalar_params", scalar_params, lambda size="small": [np.zeros(8), *_SCALARS],
            lambda a: Launch(dim=1, block_dim=32), _scalar_params_ref, ("out",),
            description="int8/int64/uint16/float64/float16/bool/uint8/float parameters"),
]
