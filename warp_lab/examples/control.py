"""Control flow and program structure: loops, branches, device functions,
constants, local arrays, printf and assert.

This module (alone in the corpus) uses ``from __future__ import annotations``,
so its kernels' annotations reach the compiler as strings, as they do in any
user module that opts into PEP 563.
"""

from __future__ import annotations

import numpy as np

import warp_lab as wl
from warp_lab.examples.example import Example, Launch, dyadic, pick, rng

f32 = np.float32
i32 = np.int32

#: module-level constants, captured when the kernel is compiled
CONST_BLOCK = 64
SCALE = wl.constant(3)
OFFSET = wl.constant(0.25)
SORT_WIDTH = 8


# -- while / break / continue --------------------------------------------------
@wl.kernel
def collatz(start: wl.array(dtype=wl.int32), steps: wl.array(dtype=wl.int32), limit: int):
    i = wl.tid()
    v = start[i]
    count = 0
    while True:
        if v == 1:
            break  # marker: collatz break
        count += 1
        if count >= limit:
            break
        if v % 2 == 0:
            v = v // 2
            continue
        v = 3 * v + 1
    steps[i] = count


def _collatz_inputs(size="small"):
    n = pick(size, 96, 1 << 18)
    return [np.arange(1, n + 1, dtype=i32), np.zeros(n, i32), 60]


def _collatz_ref(start, steps, limit):
    out = np.zeros_like(steps)
    for k, v in enumerate(start.tolist()):
        count = 0
        while v != 1:
            count += 1
            if count >= limit:
                break
            v = v // 2 if v % 2 == 0 else 3 * v + 1
        out[k] = count
    return {"steps": out}


# -- range() in all its forms ----------------------------------------------------
@wl.kernel
def range_forms(out: wl.array2d(dtype=wl.int32), step: int):
    i = wl.tid()
    a = 0
    for k in range(i):
        a += k
    b = 0
    for k in range(10, i, -3):  # marker: negative step
        b += k
    c = 0
    for k in range(-i, i + 5, step):
        if k == 0:
            continue
        c += k
    d = 0
    for k in range(2, 50):
        if k * k > i * 7:
            break
        d += 1
    e = 0
    for k in range(i, -4, -step):
        e = e * 3 + k
    out[i, 0] = a
    out[i, 1] = b
    out[i, 2] = c
    out[i, 3] = d
    out[i, 4] = e


def _range_forms_inputs(size="small"):
    n = pick(size, 40, 4096)
    return [np.zeros((n, 5), i32), 3]


def _range_forms_ref(out, step):
    res = np.zeros_like(out)
    for i in range(out.shape[0]):
        a = sum(range(i))
        b = sum(range(10, i, -3))
        c = sum(k for k in range(-i, i + 5, step) if k != 0)
        d = 0
        for k in range(2, 50):
            if k * k > i * 7:
                break
            d += 1
        e = 0
        for k in range(i, -4, -step):
            e = e * 3 + k
        res[i] = [a, b, c, d, e]
    return {"out": res}


# -- branches, conditional expressions, select, bool parameters -----------------------
@wl.kernel
def classify(x: wl.array(dtype=wl.float32), cls: wl.array(dtype=wl.int32),
             mag: wl.array(dtype=wl.float32), lo: float, hi: float, flip: bool):
    i = wl.tid()
    v = x[i]
    c = 0
    if v < lo:
        c = -1
    elif lo <= v < hi:  # marker: chained comparison
        c = 0 if v < 0.0 else 1
    else:
        pass
    if v >= hi:
        c = 2
    if flip and not (c == 2):
        c = -c
    cls[i] = c
    mag[i] = wl.select(v > 0.0, v, -v)


def _classify_inputs(size="small"):
    n = pick(size, 300, 1 << 20)
    return [rng("classify").standard_normal(n).astype(f32) * f32(2.0),
            np.zeros(n, i32), np.zeros(n, f32), -1.0, 1.5, True]


def _classify_ref(x, cls, mag, lo, hi, flip):
    c = np.where(x < lo, -1, np.where(x < hi, np.where(x < 0, 0, 1), 2))
    if flip:
        c = np.where(c == 2, c, -c)
    return {"cls": c.astype(i32), "mag": np.abs(x)}


# -- short-circuit and/or guard memory accesses -----------------------------------
@wl.kernel
def short_circuit(x: wl.array(dtype=wl.float32), flags: wl.array(dtype=wl.int32), n: int):
    i = wl.block_idx.x * wl.block_dim.x + wl.thread_idx.x
    if not (i < n):
        return
    # x[i + 1] is read only when i + 1 < n: `and` must not evaluate it otherwise
    rising = i + 1 < n and x[i + 1] > x[i]  # marker: short-circuit and
    # x[i - 1] is read only when i > 0
    peak = i == 0 or x[i - 1] < x[i]
    flags[i] = wl.int32(rising) + 2 * wl.int32(peak)


def _short_circuit_inputs(size="small"):
    n = pick(size, 200, 1 << 20)
    return [rng("short_circuit").standard_normal(n).astype(f32), np.full(n, -1, i32), n]


def _short_circuit_ref(x, flags, n):
    rising = np.zeros(n, bool)
    rising[:-1] = x[1:] > x[:-1]
    peak = np.ones(n, bool)
    peak[1:] = x[:-1] < x[1:]
    return {"flags": (rising.astype(i32) + 2 * peak.astype(i32)).astype(i32)}


# -- device functions calling device functions ----------------------------------
@wl.func
def square(v: float) -> float:
    return v * v


@wl.func
def norm2(a: float, b: float) -> float:
    return square(a) + square(b)  # marker: func calls func


@wl.func
def sign_of(v: float) -> int:
    if v > 0.0:
        return 1
    if v < 0.0:
        return -1
    return 0


@wl.func
def poly(t):
    # unannotated: specialised for each argument type it is called with
    return t * t + t + 1


@wl.kernel
def device_funcs(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32),
                 r2: wl.array(dtype=wl.float32), isign: wl.array(dtype=wl.int32),
                 pf: wl.array(dtype=wl.float32)):
    i = wl.tid()
    r2[i] = norm2(x[i], y[i])
    isign[i] = sign_of(x[i]) + poly(i)
    pf[i] = poly(y[i])


def _device_funcs_inputs(size="small"):
    n = pick(size, 129, 1 << 20)
    g = rng("device_funcs")
    x = dyadic(g, n)
    x[::7] = 0.0
    return [x, dyadic(g, n), np.zeros(n, f32), np.zeros(n, i32), np.zeros(n, f32)]


def _device_funcs_ref(x, y, r2, isign, pf):
    i = np.arange(len(x), dtype=i32)
    return {"r2": x * x + y * y, "isign": (np.sign(x).astype(i32) + i * i + i + 1).astype(i32),
            "pf": y * y + y + f32(1.0)}


# -- module constants, wl.constant, assert -----------------------------------------
@wl.kernel
def constants_assert(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32), n: int):
    i = wl.block_idx.x * CONST_BLOCK + wl.thread_idx.x
    if i < n:
        assert i < x.shape[0], "index past the end of x"  # marker: assert
        out[i] = x[i] * SCALE + OFFSET


def _constants_inputs(size="small"):
    n = pick(size, 250, 1 << 20)
    return [dyadic(rng("constants"), n), np.zeros(n, f32), n]


# -- per-thread local array ------------------------------------------------------------
@wl.kernel
def local_sort(x: wl.array2d(dtype=wl.int32), out: wl.array2d(dtype=wl.int32)):
    i = wl.tid()
    buf = wl.local_array(SORT_WIDTH, wl.int32)
    for k in range(SORT_WIDTH):
        buf[k] = x[i, k]
    for a in range(1, SORT_WIDTH):   # insertion sort
        v = buf[a]
        b = a - 1
        while b >= 0 and buf[b] > v:
            buf[b + 1] = buf[b]
            b -= 1
        buf[b + 1] = v
    for k in range(SORT_WIDTH):
        out[i, k] = buf[k]


def _local_sort_inputs(size="small"):
    n = pick(size, 64, 1 << 18)
    x = rng("local_sort").integers(-100, 100, size=(n, SORT_WIDTH)).astype(i32)
    return [x, np.zeros_like(x)]


# -- printf and print ---------------------------------------------------------------------
@wl.kernel
def hello_printf(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    wl.printf("thread %d: x=%f\n", i, x[i])  # marker: printf
    if i == 0:
        print("hello from thread", i)


def _hello_inputs(size="small"):
    return [np.arange(pick(size, 4, 64), dtype=f32) * f32(0.5) + f32(1.0)]


def _hello_printed(args):
    (x,) = args
    lines = [f"thread {i}: x={float(v):f}" for i, v in enumerate(x)]
    return lines + ["hello from thread 0"]


EXAMPLES = [
    Example("collatz", collatz, _collatz_inputs, lambda a: Launch(dim=len(a[0]), block_dim=32),
            _collatz_ref, ("steps",), description="while True with break and continue"),
    Example("range_forms", range_forms, _range_forms_inputs,
            lambda a: Launch(dim=a[0].shape[0], block_dim=32), _range_forms_ref, ("out",),
            description="range with 1-3 arguments, negative and runtime steps"),
    Example("classify", classify, _classify_inputs, lambda a: Launch(dim=len(a[0]), block_dim=64),
            _classify_ref, ("cls", "mag"),
            description="if/elif/else, chained comparison, x if c else y, select, bool param"),
    Example("short_circuit", short_circuit, _short_circuit_inputs,
            lambda a: Launch(grid=(-(-a[2] // 64) + 1, 1, 1), block=(64, 1, 1)),
            _short_circuit_ref, ("flags",),
            description="and/or/not short-circuit: the right side guards a memory access"),
    Example("device_funcs", device_funcs, _device_funcs_inputs,
            lambda a: Launch(dim=len(a[0]), block_dim=64), _device_funcs_ref,
            ("r2", "isign", "pf"),
            description="@wl.func calling @wl.func, early returns, generic specialisation"),
    Example("constants_assert", constants_assert, _constants_inputs,
            lambda a: Launch(grid=(-(-a[2] // CONST_BLOCK), 1, 1), block=(CONST_BLOCK, 1, 1)),
            lambda x, out, n: {"out": x * f32(3.0) + f32(0.25)}, ("out",),
            description="module constants, wl.constant and an assert that holds"),
    Example("local_sort", local_sort, _local_sort_inputs,
            lambda a: Launch(dim=a[0].shape[0], block_dim=32),
            lambda x, out: {"out": np.sort(x, axis=1)}, ("out",),
            description="wl.local_array insertion sort, while with short-circuit condition"),
    Example("hello_printf", hello_printf, _hello_inputs, lambda a: Launch(dim=len(a[0])),
            lambda x: {}, (), printed=_hello_printed,
            description="wl.printf with int and float arguments, print()"),
]
