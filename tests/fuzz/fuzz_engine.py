"""The differential fuzzer's engine (issue 23): random kernels of warp_lab's documented
subset, each with a reference computed in NumPy from ``docs/language.md``'s rules, never
from warp_lab's output.

A kernel holds ``EXPRS_PER_KERNEL`` random statements (to amortise one compile over many
expressions). Each statement is a typed expression tree over the thread's inputs, stored
into its own row of an output array, possibly through an ``if``/``else``, a ``for``-range
or ``while`` loop, a ``@wl.func`` call, a shared-memory exchange between barriers, a warp
shuffle, a vote or a global atomic. The reference evaluates the same tree over all
threads at once with NumPy arrays of the operand type (so integer arithmetic wraps and
float arithmetic rounds as IEEE 754 does); the block-level statements are modelled on
the whole block or warp (``np.roll`` within a block, a lane permutation within a warp, a
sum of ballot bits, a wrapping sum for ``atomic_add``).

The rules the reference implements (``docs/language.md``, "Literals and conversions",
"Operators", the builtin tables; PTX ISA 8.x sections as cited there):

* mixed integer operands promote (int32 with uint32 to uint32, 32 to 64 bits), C's usual
  arithmetic conversions as docs/language.md states them;
* integer ``+ - * & | ^ ~ -`` and ``abs`` wrap (PTX ISA 9.7.1); ``//`` and ``%`` floor as
  in Python (divisors here are never 0 nor -1 with MININT);
* shifts by the width or more, or by a negative count, give 0 (or -1 for ``>>`` of a
  negative signed value), also for 64-bit counts of 2**32 or more (PTX ISA 9.7.8.8-9);
* float ``+ - * /`` and ``wl.sqrt`` are IEEE 754 round-to-nearest (``add.rn``...,
  ``div.rn``, ``sqrt.rn``); because the compiler may contract ``a * b + c`` into ``fma``
  (as nvcc does), a product is never generated as an operand of ``+``/``-`` so the
  exact reference stays exact;
* float ``min``/``max`` are IEEE minNum/maxNum (``np.fmin``/``np.fmax``), +0.0 larger than
  -0.0 (PTX ISA 9.7.3.11-12);
* float → integer conversions truncate and saturate; a NaN gives 0 from float32 into a
  32-bit integer, else ``1 << (bits - 1)`` (PTX ISA 9.7.9.21 ``cvt``); integer → integer
  conversions wrap; to a float, round to nearest even;
* comparisons with a NaN are False but ``!=`` (``setp`` ordered / ``.neu``);
* an expression of literals alone folds exactly, as Python computes it (``const_expr``).

Outputs compare bit-exactly, but any NaN equals any NaN (no payload is documented).
"""

from __future__ import annotations

import dataclasses
import linecache
import math
import re
import time
import traceback
import warnings

import numpy as np

TYPES = ("int32", "int64", "uint32", "float32", "float64")
INTS = ("int32", "int64", "uint32")
FLOATS = ("float32", "float64")
SHORT = {"int32": "i32", "int64": "i64", "uint32": "u32", "float32": "f32", "float64": "f64"}
#: result type -> operand type pairs that promote to it (docs/language.md, "Mixed arithmetic
#: promotes": 32 -> 64 bits; signed and unsigned of one width from 32 bits give the
#: unsigned type, C's usual arithmetic conversions)
MIXED = {"uint32": [("int32", "uint32")], "int64": [("int32", "int64"), ("uint32", "int64")]}
BLOCK = 64
BLOCKS = 2
N = BLOCK * BLOCKS
EXPRS_PER_KERNEL = 12
MAX_DEPTH = 4

SPECIAL_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, math.inf, -math.inf, math.nan, 1e30, -1e30,
                  3e9, -3e9, 2.0 ** 31, -2.0 ** 31, 2.0 ** 32, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64,
                  1e-40, -1e-40, 1e-310, 300.0, -129.5, 65535.9, 1.5e10, 123456789.0, 3.4e38]
SPECIAL_INTS = [0, 1, -1, 2, 7, 31, 32, 33, 63, 64, 65, 2 ** 31 - 1, -2 ** 31, 2 ** 32,
                2 ** 32 + 1, 2 ** 63 - 1, -2 ** 63, 255, 256, 300, -300, 16777217]


_VAR = re.compile(r"\b(a_\w+|b_\w+|p|q|j\d+)\b")


def _np(ty: str):
    return np.dtype(ty).type


def wrap(values, ty: str) -> np.ndarray:
    """Python ints (or int64/uint64 arrays) wrapped to integer type ``ty``, two's complement."""
    bits = np.dtype(ty).itemsize * 8
    flat = values.ravel().tolist() if isinstance(values, np.ndarray) else list(values)
    arr = np.asarray([int(v) & ((1 << bits) - 1) for v in flat], dtype=np.uint64)
    return arr.astype(np.dtype(f"uint{bits}")).view(np.dtype(ty))  # (never np.ravel of a
    # list of Python ints: one past int64's range makes it float64 and rounds the rest)


def float_to_int(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    """PTX ``cvt.rzi`` (PTX ISA 9.7.9.21): toward zero, clamped to the range of ``dst``;
    a NaN is 0 from a non-f64 source into a 32-bit integer, else ``1 << (bits - 1)``."""
    info = np.iinfo(dst)
    bits = info.bits
    x64 = x.astype(np.float64)
    nan_value = 0 if (src == "float32" and bits == 32) else 1 << (bits - 1)
    out = []
    for v in x64:
        if math.isnan(v):
            out.append(nan_value)
        elif v >= info.max:
            out.append(info.max)
        elif v <= info.min:
            out.append(info.min)
        else:
            out.append(int(v))  # truncates toward zero; exact for a float in range
    return wrap(out, dst)


def convert(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    """``wl.<dst>(x)`` of an array of ``src`` by the documented rules."""
    if src == dst:
        return x
    if src in FLOATS and dst in INTS:
        return float_to_int(x, src, dst)
    if src in INTS and dst in INTS:
        return wrap([int(v) for v in x], dst)
    return x.astype(dst)  # to a float: IEEE round to nearest even (numpy's C cast)


def shift(a: np.ndarray, c: np.ndarray, ty: str, left: bool) -> np.ndarray:
    """``a << c`` / ``a >> c`` with the documented clamping: a count outside ``[0, bits)``
    gives 0, or -1 for ``>>`` of a negative signed value (PTX ISA 9.7.8.8-9)."""
    bits = np.dtype(ty).itemsize * 8
    out = []
    for x, n in zip(a.tolist(), c.tolist()):
        big = n < 0 or n >= bits
        if left:
            out.append(0 if big else (x << n))
        else:
            out.append((-1 if x < 0 else 0) if big else (x >> n))
    return wrap(out, ty)


def fmax(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IEEE 754 maxNum with +0.0 larger than -0.0 (PTX ISA 9.7.3.12 ``max``; CUDA's fmaxf)."""
    r = np.fmax(a, b)
    zeros = (a == 0) & (b == 0)
    return np.where(zeros, np.where(np.signbit(a) & np.signbit(b), -0.0, 0.0).astype(r.dtype), r)


def fmin(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IEEE 754 minNum with -0.0 smaller than +0.0 (PTX ISA 9.7.3.11 ``min``; CUDA's fminf)."""
    r = np.fmin(a, b)
    zeros = (a == 0) & (b == 0)
    return np.where(zeros, np.where(np.signbit(a) | np.signbit(b), -0.0, 0.0).astype(r.dtype), r)


@dataclasses.dataclass
class Expr:
    """One typed expression: its source text, type and a NumPy evaluator over an env."""
    src: str
    ty: str
    fn: object
    kind: str = "other"
    #: its value comes from literals alone (a condition may read variables: ``(32 if
    #: a_f64 > b_f64 else 2)``): the compiler types it as the docs type literals (weak,
    #: Python's int), not as ``ty``, so it must not stand for a value of ``ty``
    weak: bool = False

    def eval(self, env):
        with np.errstate(all="ignore"):
            return np.asarray(self.fn(env), dtype=self.ty)


class Generator:
    """Random typed expressions and statements (``rng``: a ``random.Random``-like
    ``numpy.random.Generator``). ``leaves`` maps a type to the variable names of it."""

    def __init__(self, rng: np.random.Generator, leaves: dict):
        self.rng = rng
        self.leaves = leaves

    def choice(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def var(self, ty) -> Expr:
        """A variable of ``ty``, or another type's variable converted to ``ty``."""
        names = self.leaves.get(ty, [])
        if names:
            name = self.choice(names)
            return Expr(name, ty, lambda env, n=name: env[n], "leaf")
        src = self.choice(sorted(self.leaves))
        name = self.choice(self.leaves[src])
        return Expr(f"wl.{ty}({name})", ty,
                    lambda env, n=name: convert(np.asarray(env[n], dtype=src), src, ty))

    def expr(self, ty, depth=0, no_mul=False) -> Expr:
        """A random expression of ``ty``; never one of literals alone, which the compiler
        folds exactly as Python does (``docs/language.md``) rather than in ``ty``."""
        e = self._expr(ty, depth, no_mul)
        if e.kind != "lit" and (e.weak or not _VAR.search(e.src)):
            return self.var(ty)
        return e

    def leaf(self, ty):
        """A variable (4 in 5) or a weak literal of ``ty``."""
        if self.rng.random() < 0.8:
            return self.var(ty)
        if ty in INTS:
            v = int(self.choice([0, 1, 2, 3, 5, 7, 31, 32, 33, 63, 64, 100, 255, 1000, 65535]))
            if ty != "uint32" and self.rng.random() < 0.3:
                return Expr(f"(-{v})", ty, lambda env, v=v: np.full(N, -v, dtype=ty), "lit",
                            weak=True)
            return Expr(str(v), ty, lambda env, v=v: np.full(N, v, dtype=ty), "lit", weak=True)
        v = float(self.choice([0.0, 0.5, 1.0, 2.0, 3.0, 0.25, 1.5, 10.0, 1024.0]))
        if self.rng.random() < 0.3:
            v = -v
        return Expr(repr(v), ty, lambda env, v=v: np.full(N, v, dtype=ty), "lit", weak=True)

    def _expr(self, ty, depth=0, no_mul=False) -> Expr:
        if depth >= MAX_DEPTH or self.rng.random() < 0.25 + 0.15 * depth:
            return self.leaf(ty)
        d = depth + 1
        if ty in INTS:
            kind = self.choice(["bin", "bin", "shift", "div", "unary", "minmax", "select",
                                "convi", "convf"] + (["mixed", "mixed"] if ty in MIXED else []))
        else:
            kind = self.choice(["bin", "bin", "unary", "minmax", "select", "convi", "convf",
                                "sqrt", "div"])
        if kind == "bin":
            if ty in INTS:
                op = self.choice(["+", "-", "*", "&", "|", "^"])
                a, b = self.expr(ty, d), self.expr(ty, d)
            else:
                op = self.choice(["+", "-", "*"] if not no_mul else ["+", "-"])
                under_add = op in "+-"
                a, b = self.expr(ty, d, under_add), self.expr(ty, d, under_add)
                if under_add and (a.kind in ("mul", "neg") or b.kind in ("mul", "neg")):
                    return self.leaf(ty)
            f = {"+": np.add, "-": np.subtract, "*": np.multiply, "&": np.bitwise_and,
                 "|": np.bitwise_or, "^": np.bitwise_xor}[op]
            return Expr(f"({a.src} {op} {b.src})", ty,
                        lambda env: f(a.eval(env), b.eval(env)),
                        "mul" if op == "*" else "other", a.weak and b.weak)
        if kind == "mixed":  # operands of two integer types, promoted as the docs say
            ta, tb = self.choice(MIXED[ty])
            if self.rng.random() < 0.5:
                ta, tb = tb, ta
            op = self.choice(["+", "-", "*", "&", "|", "^"])
            a, b = self.expr(ta, d), self.expr(tb, d)
            if a.kind == "lit" or b.kind == "lit":  # a weak literal takes the other's type
                return self.var(ty)
            f = {"+": np.add, "-": np.subtract, "*": np.multiply, "&": np.bitwise_and,
                 "|": np.bitwise_or, "^": np.bitwise_xor}[op]
            return Expr(f"({a.src} {op} {b.src})", ty, lambda env: f(
                convert(a.eval(env), ta, ty), convert(b.eval(env), tb, ty)))
        if kind == "shift":
            left = self.rng.random() < 0.5
            a, c = self.expr(ty, d), self.expr(ty, d)
            if c.kind == "lit":  # a constant negative count is a compile error (as Python)
                c = self.var(ty)
            op = "<<" if left else ">>"
            return Expr(f"({a.src} {op} {c.src})", ty,
                        lambda env: shift(a.eval(env), c.eval(env), ty, left),
                        weak=a.weak and c.weak)
        if kind == "div":
            a, b = self.expr(ty, d), self.expr(ty, d)
            if ty in FLOATS:
                return Expr(f"({a.src} / {b.src})", ty,
                            lambda env: np.divide(a.eval(env), b.eval(env)), "mul",
                            a.weak and b.weak)
            op = self.choice(["//", "%"])
            neg = ty != "uint32" and self.rng.random() < 0.4
            dsrc = f"(({b.src} & 7) - 10)" if neg else f"(({b.src} & 7) + 2)"

            def divisor(env, b=b, neg=neg):
                bv = np.bitwise_and(b.eval(env), _np(ty)(7))
                return (bv - _np(ty)(10)) if neg else (bv + _np(ty)(2))
            f = np.floor_divide if op == "//" else np.remainder
            return Expr(f"({a.src} {op} {dsrc})", ty, lambda env: f(a.eval(env), divisor(env)),
                        weak=a.weak and b.weak)
        if kind == "unary":
            a = self.expr(ty, d, no_mul)
            if ty in INTS:
                op = self.choice(["-", "~", "abs"])
            else:
                op = self.choice(["-", "abs"])
            if op == "abs":
                return Expr(f"abs({a.src})", ty, lambda env: np.abs(a.eval(env)),
                            "neg" if a.kind in ("mul", "neg") else "other", a.weak)
            f = np.negative if op == "-" else np.invert
            return Expr(f"({op}{a.src})", ty, lambda env: f(a.eval(env)),
                        "neg" if (op == "-" and ty in FLOATS) else "other", a.weak)
        if kind == "minmax":
            name = self.choice(["min", "max"])
            a, b = self.expr(ty, d), self.expr(ty, d)
            if ty in FLOATS:
                f = fmin if name == "min" else fmax
            else:
                f = np.minimum if name == "min" else np.maximum
            return Expr(f"{name}({a.src}, {b.src})", ty, lambda env: f(a.eval(env), b.eval(env)),
                        weak=a.weak and b.weak)
        if kind == "select":
            cond = self.cond(d)
            a, b = self.expr(ty, d, no_mul), self.expr(ty, d, no_mul)
            k = "mul" if "mul" in (a.kind, b.kind) or "neg" in (a.kind, b.kind) else "other"
            return Expr(f"({a.src} if {cond.src} else {b.src})", ty,
                        lambda env: np.where(cond.eval(env), a.eval(env), b.eval(env)), k,
                        a.weak and b.weak)
        if kind == "convi":
            src = self.choice([t for t in INTS if t != ty] or INTS)
            a = self.expr(src, d)
            return Expr(f"wl.{ty}({a.src})", ty, lambda env: convert(a.eval(env), src, ty))
        if kind == "convf":
            src = self.choice([t for t in FLOATS if t != ty] or FLOATS)
            a = self.expr(src, d)
            return Expr(f"wl.{ty}({a.src})", ty, lambda env: convert(a.eval(env), src, ty))
        if kind == "sqrt":
            a = self.expr(ty, d)
            return Expr(f"wl.sqrt({a.src})", ty, lambda env: np.sqrt(a.eval(env)),
                        weak=a.weak)
        raise AssertionError(kind)

    def cond(self, depth) -> Expr:
        ty = self.choice(TYPES)
        a, b = self.expr(ty, depth + 1), self.expr(ty, depth + 1)
        op = self.choice(["<", "<=", ">", ">=", "==", "!="])
        f = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
             "==": np.equal, "!=": np.not_equal}[op]
        return Expr(f"{a.src} {op} {b.src}", "bool", lambda env: f(a.eval(env), b.eval(env)))


_LO, _HI = -(1 << 63), 1 << 64  # every folded value fits int64 or uint64, or it is an error


def const_expr(rng, depth=0):
    """``(source, value)``: an integer expression of literals alone, which warp_lab folds
    exactly as Python does (docs/language.md, "Literals and conversions"); ``value`` is
    Python's own, every intermediate value within int64/uint64 (else None: a compile error
    by the docs, not generated)."""
    if depth >= 3 or rng.random() < 0.3:
        v = int(rng.choice([0, 1, 2, 3, 5, 7, 31, 33, 63, 100, 255, 2 ** 31 - 1, 2 ** 32, 10 ** 9]))
        return str(v), v
    kind = int(rng.integers(5))
    a_src, a = const_expr(rng, depth + 1)
    b_src, b = const_expr(rng, depth + 1)
    if a is None or b is None:
        return a_src, None
    if kind == 0:
        op = ["+", "-", "*", "&", "|", "^", "//", "%"][int(rng.integers(8))]
        if op in ("//", "%") and b == 0:
            return a_src, None
        v = eval(f"a {op} b")  # noqa: S307 (Python's exact value of two ints)
        src = f"({a_src} {op} {b_src})"
    elif kind == 1:
        n = int(rng.integers(0, 64))
        left = rng.random() < 0.5
        v = (a << n) if left else (a >> n)
        src = f"({a_src} {'<<' if left else '>>'} {n})"
    elif kind == 2:
        v = -a if rng.random() < 0.5 else ~a
        src = f"(-{a_src})" if v == -a else f"(~{a_src})"
    elif kind == 3:
        c_src, c = const_expr(rng, depth + 1)
        if c is None:
            return a_src, None
        v = a if c < b else b
        src = f"({a_src} if {c_src} < {b_src} else {b_src})"
    else:
        fn = ["min", "max"][int(rng.integers(2))]
        v = min(a, b) if fn == "min" else max(a, b)
        src = f"{fn}({a_src}, {b_src})"
    return src, (v if _LO <= v < _HI else None)


@dataclasses.dataclass
class Case:
    """A generated kernel: its source, inputs and the reference outputs."""
    seed: int
    source: str
    inputs: dict
    expected: dict
    features: list


def _inputs(rng):
    ins = {}
    for ty in TYPES:
        if ty in FLOATS:
            vals = []
            for _ in range(2 * N):
                r = rng.random()
                if r < 0.3:
                    vals.append(SPECIAL_FLOATS[int(rng.integers(len(SPECIAL_FLOATS)))])
                elif r < 0.6:
                    vals.append(float(rng.integers(-40, 40)) / 4)
                else:
                    vals.append(float(rng.normal() * 10.0 ** rng.integers(-5, 12)))
            ins[ty] = np.asarray(vals, dtype=np.float64).astype(ty).reshape(2, N)
        else:
            info = np.iinfo(ty)
            vals = []
            for _ in range(2 * N):
                r = rng.random()
                if r < 0.3:
                    vals.append(SPECIAL_INTS[int(rng.integers(len(SPECIAL_INTS)))])
                elif r < 0.6:
                    vals.append(int(rng.integers(-70, 70)))
                else:
                    vals.append(int(rng.integers(info.min, info.max, endpoint=True)))
            ins[ty] = wrap(vals, ty).reshape(2, N)
    return ins


def make_case(seed: int, n_stmts: int = EXPRS_PER_KERNEL) -> Case:
    """Generate kernel ``seed``: its source text, inputs and reference outputs."""
    rng = np.random.default_rng(seed)
    flat = flat_arrays(seed)
    ins = _inputs(rng)
    leaves = {ty: [f"a_{SHORT[ty]}", f"b_{SHORT[ty]}"] for ty in TYPES}
    env = {}
    for ty in TYPES:
        env[f"a_{SHORT[ty]}"] = ins[ty][0]
        env[f"b_{SHORT[ty]}"] = ins[ty][1]
    lane = np.arange(N, dtype=np.int64)
    gen = Generator(rng, leaves)
    stmt_types = [TYPES[int(rng.integers(len(TYPES)))] for _ in range(n_stmts)]
    rows = {ty: 0 for ty in TYPES}
    body, funcs, features = [], [], []
    expected_rows = {ty: [] for ty in TYPES}
    atomics = []  # (type, op, reference value)

    def store(ty, var, values):
        at = f"{rows[ty] * N} + i" if flat else f"{rows[ty]}, i"
        body.append(f"o_{SHORT[ty]}[{at}] = {var}")
        expected_rows[ty].append(np.asarray(values, dtype=ty))
        rows[ty] += 1

    for k, ty in enumerate(stmt_types):
        kind = gen.choice(["plain", "plain", "if", "for", "while", "func", "shared",
                           "shuffle", "vote", "atomic", "const"])
        r = f"r{k}"
        features.append(kind)
        if kind == "plain":
            e = gen.expr(ty)
            body.append(f"{r} = wl.{ty}({e.src})")
            store(ty, r, e.eval(env))
        elif kind == "if":
            c, e1, e2 = gen.cond(0), gen.expr(ty), gen.expr(ty)
            body += [f"if {c.src}:", f"    {r} = wl.{ty}({e1.src})", "else:", f"    {r} = wl.{ty}({e2.src})"]
            store(ty, r, np.where(c.eval(env), e1.eval(env), e2.eval(env)))
        elif kind in ("for", "while"):
            j = f"j{k}"
            lgen = Generator(rng, {**leaves, "int32": leaves["int32"] + [j]})
            e = lgen.expr(ty, 1, no_mul=True)
            init = gen.leaf(ty)
            op = "^" if ty in INTS and rng.random() < 0.5 else "+"
            if e.kind in ("mul", "neg") and ty in FLOATS:  # acc + a*b could become an fma
                e = Expr(f"wl.sqrt(abs({e.src}))", ty,
                         lambda env, e=e: np.sqrt(np.abs(e.eval(env))), "other")
            bound_lit = rng.random() < 0.5
            bound_src = str(int(rng.integers(0, 6))) if bound_lit else "(a_i32 & 7)"
            bound = (np.full(N, int(bound_src), dtype=np.int32) if bound_lit
                     else np.bitwise_and(env["a_i32"], 7))
            acc = init.eval(env).copy()
            f = np.bitwise_xor if op == "^" else np.add
            with np.errstate(all="ignore"):
                for jv in range(int(bound.max()) + 1 if bound.size else 0):
                    env2 = {**env, j: np.full(N, jv, dtype=np.int32)}
                    acc = np.where(jv < bound, f(acc, e.eval(env2)), acc).astype(ty)
            if kind == "for":
                body += [f"{r} = wl.{ty}({init.src})", f"for {j} in range({bound_src}):",
                         f"    {r} = {r} {op} wl.{ty}({e.src})"]
            else:
                body += [f"{r} = wl.{ty}({init.src})", f"{j} = 0", f"while {j} < {bound_src}:",
                         f"    {r} = {r} {op} wl.{ty}({e.src})", f"    {j} += 1"]
            store(ty, r, acc)
        elif kind == "func":
            pty = gen.choice(TYPES)
            fgen = Generator(rng, {pty: ["p", "q"]})
            e = fgen.expr(ty, 1)
            name = f"g{k}"
            funcs += ["@wl.func", f"def {name}(p: wl.{pty}, q: wl.{pty}):",
                      f"    return wl.{ty}({e.src})", ""]
            x, y = gen.expr(pty, 2), gen.expr(pty, 2)
            body.append(f"{r} = {name}({x.src}, {y.src})")
            store(ty, r, e.eval({"p": x.eval(env), "q": y.eval(env)}))
        elif kind == "shared":
            e = gen.expr(ty, 1)
            s = int(rng.integers(1, BLOCK))
            body += [f"sh{k} = wl.shared_array({BLOCK}, wl.{ty})",
                     f"sh{k}[wl.thread_idx.x] = wl.{ty}({e.src})", "wl.syncthreads()",
                     f"{r} = sh{k}[(wl.thread_idx.x + {s}) % {BLOCK}]", "wl.syncthreads()"]
            v = e.eval(env).reshape(BLOCKS, BLOCK)
            store(ty, r, np.roll(v, -s, axis=1).reshape(N))
        elif kind == "shuffle":
            e = gen.expr(ty, 1)
            how = gen.choice(["xor", "up", "down", "idx"])
            m = int(rng.integers(1, 32))
            lane_in = lane % 32
            if how == "xor":
                src = (lane - lane_in) + (lane_in ^ m)
                call = f"wl.shfl_xor_sync(wl.FULL_MASK, wl.{ty}({e.src}), {m})"
            elif how == "up":
                src = np.where(lane_in >= m, lane - m, lane)
                call = f"wl.shfl_up_sync(wl.FULL_MASK, wl.{ty}({e.src}), {m})"
            elif how == "down":
                src = np.where(lane_in + m < 32, lane + m, lane)
                call = f"wl.shfl_down_sync(wl.FULL_MASK, wl.{ty}({e.src}), {m})"
            else:
                src = (lane - lane_in) + m
                call = f"wl.shfl_sync(wl.FULL_MASK, wl.{ty}({e.src}), {m})"
            body.append(f"{r} = {call}")
            store(ty, r, e.eval(env)[src])
        elif kind == "vote":
            c = gen.cond(1)
            how = gen.choice(["ballot", "any", "all"])
            cv = c.eval(env).reshape(-1, 32)
            if how == "ballot":
                bits = (cv.astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=1)
                ref = np.repeat(bits.astype(np.uint32), 32)
                body.append(f"{r} = wl.ballot_sync(wl.FULL_MASK, {c.src})")
                store("uint32", r, ref)
            else:
                red = cv.any(axis=1) if how == "any" else cv.all(axis=1)
                body.append(f"{r} = 5 if wl.{how}_sync(wl.FULL_MASK, {c.src}) else -3")
                store("int32", r, np.where(np.repeat(red, 32), 5, -3).astype(np.int32))
        elif kind == "const":
            src, v = const_expr(rng)
            while v is None or not (_LO <= v < 1 << 63):
                src, v = const_expr(rng)
            body.append(f"{r} = wl.int64({src})")
            store("int64", r, np.full(N, v, dtype=np.int64))
        elif kind == "atomic":
            aty = gen.choice(INTS)
            e = gen.expr(aty, 1)
            op = gen.choice(["add", "max", "min", "xor", "or", "and"])
            v = e.eval(env)
            ident = {"add": 0, "xor": 0, "or": 0, "max": int(np.iinfo(aty).min),
                     "min": int(np.iinfo(aty).max), "and": -1}[op]
            init = wrap([ident], aty)[0]
            with np.errstate(all="ignore"):
                ufunc = {"add": np.add, "max": np.maximum, "min": np.minimum,
                         "xor": np.bitwise_xor, "or": np.bitwise_or, "and": np.bitwise_and}[op]
                ref = ufunc.reduce(np.concatenate([[init], v]).astype(aty), dtype=aty)
            body.append(f"wl.atomic_{op}(c_{SHORT[aty]}, {len(atomics)}, wl.{aty}({e.src}))")
            atomics.append((aty, init, ref))
    for ty in TYPES:  # every output array has a row, so the signature is fixed
        if rows[ty] == 0:
            store(ty, "0" if ty in INTS else "0.0", np.zeros(N, dtype=ty))
    n_atom = max(1, len(atomics))
    arr = "wl.array" if flat else "wl.array2d"
    params = ", ".join([f"x_{SHORT[t]}: {arr}(dtype=wl.{t})" for t in TYPES]
                       + [f"o_{SHORT[t]}: {arr}(dtype=wl.{t})" for t in TYPES]
                       + [f"c_{SHORT[t]}: wl.array(dtype=wl.{t})" for t in INTS])
    head = ["i = wl.tid()"] + [
        f"{p}_{SHORT[t]} = x_{SHORT[t]}[{f'{r * N} + i' if flat else f'{r}, i'}]"
        for t in TYPES for r, p in ((0, "a"), (1, "b"))]
    lines = ["import math", "import warp_lab as wl", ""] + funcs + [
        "@wl.kernel", f"def fuzz_kernel({params}):"] + [f"    {x}" for x in head + body]
    source = (f"# fuzz kernel {seed}: wl.launch(fuzz_kernel, dim={N}, block_dim={BLOCK}, "
              f"device='sim', opt={opt_level(seed)})\n" + "\n".join(lines) + "\n")
    inputs = {f"x_{SHORT[t]}": ins[t] for t in TYPES}
    expected = {f"o_{SHORT[t]}": np.stack(expected_rows[t]) for t in TYPES}
    counters = {}
    for t in INTS:
        c0 = np.zeros(n_atom, dtype=t)
        ce = np.zeros(n_atom, dtype=t)
        for idx, (aty, init, ref) in enumerate(atomics):
            if aty == t:
                c0[idx], ce[idx] = init, ref
        inputs[f"c_{SHORT[t]}"] = c0
        expected[f"c_{SHORT[t]}"] = ce
    return Case(seed, source, inputs, expected, features)


def build_kernel(case: Case):
    """Exec ``case.source`` as a module whose text ``inspect`` can find; the kernel."""
    filename = f"<fuzz kernel {case.seed}>"
    linecache.cache[filename] = (len(case.source), None, case.source.splitlines(True), filename)
    ns = {"__name__": f"fuzz_{case.seed}"}
    exec(compile(case.source, filename, "exec"), ns)  # noqa: S102 (our own generated text)
    return ns["fuzz_kernel"]


def same(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Elementwise: bit-equal, or both NaN for floats."""
    if got.dtype.kind == "f":
        bits = got.view(f"uint{got.itemsize * 8}") == want.view(f"uint{want.itemsize * 8}")
        return bits | (np.isnan(got) & np.isnan(want))
    return got == want


@dataclasses.dataclass
class Outcome:
    """What one kernel gave: ``status`` is ``ok``, ``internal`` (an exception out of
    warp_lab), ``wrong`` (an output differs from the reference) or ``finding`` (a check
    reported something in a kernel with no bug) or ``rejected`` (a located
    ``KernelCompileError``: the generator wrote something the language refuses, a fuzzer
    bug, counted apart); ``detail`` says what."""
    seed: int
    status: str
    detail: str
    source: str
    seconds: float


def opt_level(seed: int) -> int:
    """The optimisation level kernel ``seed`` is compiled at: 0 for every fourth seed, else
    warp_lab's default 3 (LLVM's folds are where the documented results were lost)."""
    return 0 if seed % 4 == 0 else 3


def flat_arrays(seed: int) -> bool:
    """Whether kernel ``seed`` reads and writes 1-D arrays (``o[row * N + i]``, two in
    three seeds) or 2-D ones (``o[row, i]``): a 2-D access makes the launch's memcheck
    compile and run the kernel's ``index_checks`` variant too (``runtime.launch
    .index_checked``), a second compile that 1-D kernels skip."""
    return seed % 3 != 0


def run_case(seed: int, n_stmts: int = EXPRS_PER_KERNEL) -> Outcome:
    """Generate, compile and launch kernel ``seed`` on the simulator (default checks)."""
    import warp_lab as wl

    t0 = time.perf_counter()
    case = make_case(seed, n_stmts)
    arrays = {k: v.copy() for k, v in case.inputs.items()}
    for name, want in case.expected.items():
        if name.startswith("o_"):
            arrays[name] = np.zeros_like(want)
    order = ([f"x_{SHORT[t]}" for t in TYPES] + [f"o_{SHORT[t]}" for t in TYPES]
             + [f"c_{SHORT[t]}" for t in INTS])
    try:
        kernel = build_kernel(case)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = wl.launch(kernel, dim=N, block_dim=BLOCK, device="sim", opt=opt_level(seed),
                            inputs=[arrays[k].reshape(-1) if flat_arrays(seed) else arrays[k]
                                    for k in order])
    except wl.KernelCompileError:  # the generator wrote what the language refuses
        return Outcome(seed, "rejected", traceback.format_exc(limit=1), case.source,
                       time.perf_counter() - t0)
    except Exception:  # noqa: BLE001 (any other exception out of warp_lab is the finding)
        return Outcome(seed, "internal", traceback.format_exc(limit=6), case.source,
                       time.perf_counter() - t0)
    if res.findings:
        return Outcome(seed, "finding", "\n".join(str(f) for f in res.findings[:3]),
                       case.source, time.perf_counter() - t0)
    bad = []
    for name, want in case.expected.items():
        ok = same(arrays[name], want)
        if not ok.all():
            row, col = (np.argwhere(~ok)[0].tolist() + [0])[:2] if ok.ndim == 2 else \
                (int(np.argwhere(~ok)[0][0]), 0)
            got = arrays[name][row, col] if ok.ndim == 2 else arrays[name][row]
            exp = want[row, col] if ok.ndim == 2 else want[row]
            bad.append(f"{name}[{row}{', ' + str(col) if ok.ndim == 2 else ''}]: "
                       f"got {got!r}, expected {exp!r} ({int((~ok).sum())} differ)")
    status = "wrong" if bad else "ok"
    return Outcome(seed, status, "\n".join(bad), case.source, time.perf_counter() - t0)


def inputs_note(case: Case) -> str:
    """The inputs as Python text, so a failing kernel can be rerun by hand."""
    return "\n".join(f"{k} = np.array({v.tolist()!r}, dtype=np.{v.dtype})"
                     for k, v in case.inputs.items())


__all__ = ["make_case", "run_case", "build_kernel", "Outcome", "Case", "same", "convert", "shift",
           "fmin", "fmax", "const_expr", "opt_level"]
