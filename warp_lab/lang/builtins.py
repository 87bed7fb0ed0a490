"""The builtins a kernel may call: ``wl.tid()``, ``wl.syncthreads()``, math, atomics, ...

Each builtin is one :class:`Builtin` record, declared here once (name, signature, doc,
group, implementation), in the way of NVIDIA Warp's ``add_builtin``
(``warp/_src/builtins.py``). :mod:`warp_lab` exports :data:`PUBLIC`, the docs' builtin table
is generated from the records (:mod:`warp_lab.lang.builtin_docs`), and the compiler
recognises a record by identity and types and lowers it with the implementation its
``impl`` names (:mod:`warp_lab.compiler.builtin_rules`; this layer sits below the compiler,
so it names the pair rather than holding it). On the host a builtin only documents itself
(calling it raises a ``TypeError`` that says to use it inside a kernel).

Field terms follow the CUDA Programming Guide ("Built-in Variables",
"Synchronization Functions", "Atomic Functions", "Warp Shuffle Functions",
"Warp Vote Functions") and libdevice's user guide for the math functions.
"""

from __future__ import annotations

import builtins as _py
import math as _math
from dataclasses import dataclass, field

import numpy as _np

__all__ = [
    "Builtin", "Dim3", "BUILTINS", "GROUPS", "PUBLIC", "MATH_UNARY", "MATH_BINARY",
    "PYTHON_BUILTINS", "MATH_MODULE", "warp_size", "FULL_MASK",
]


@dataclass(frozen=True, eq=False)
class Builtin:
    """A kernel-language builtin function.

    Attributes:
        name: the name under :mod:`warp_lab` (``"atomic_add"``).
        signature: how it is called, for messages and docs.
        doc: one line saying what it does (the docs' builtin table shows it).
        group: its group in :data:`GROUPS` (a section of the docs' builtin table).
        impl: the name of its implementation, the typing rule and lowering pair of
            :data:`warp_lab.compiler.builtin_rules.IMPLS` (as Warp's ``add_builtin`` names
            its ``native_func``); builtins sharing a rule share it (``"int_unary"``); by
            default the builtin's own name.
        host: what a call does outside kernels, for the builtins that share a name
            with a Python builtin (``abs``, ``min``, ``max``, ``pow``, ``round``), so
            that ``from warp_lab import *`` leaves host code working; None for the
            others, which raise.
    """

    name: str
    signature: str
    doc: str
    group: str
    host: object = field(default=None, repr=False)
    impl: str = ""

    def __call__(self, *args, **kwargs):
        if self.host is not None:
            return self.host(*args, **kwargs)
        raise TypeError(f"wl.{self.name}{self.signature} can only be called inside a "
                        f"@wl.kernel or @wl.func")

    def __repr__(self) -> str:
        return f"<wl builtin {self.name}{self.signature}>"


@dataclass(frozen=True, eq=False)
class Dim3:
    """A CUDA built-in vector variable: ``wl.thread_idx.x`` is ``%tid.x``.

    Attributes:
        name: ``thread_idx``, ``block_idx``, ``block_dim`` or ``grid_dim``.
        sreg: the PTX special register stem (``tid``, ``ctaid``, ``ntid``, ``nctaid``).
        doc: one line for the docs' builtin table.
    """

    name: str
    sreg: str
    doc: str = ""

    def __repr__(self) -> str:
        return f"<wl.{self.name} (%{self.sreg}.x/.y/.z)>"


BUILTINS: dict[str, Builtin] = {}
#: builtins named like Python's own: on the host they behave as Python's
_SHADOWING = ("abs", "min", "max", "pow", "round")

#: the groups of the docs' builtin table, in its order: title -> (title, the note printed
#: under the group's table)
GROUPS: dict[str, tuple[str, str]] = {}


def _group(title: str, note: str = "") -> str:
    GROUPS[title] = (title, note)
    return title


INDEXING = _group("indexing", "CUDA Programming Guide, \"Built-in Variables\". `wl.tid()` is "
                  "int32 for a 1-D launch and a `(y, x)` or `(z, y, x)` tuple for 2-D/3-D.")
SYNC = _group("synchronisation", "CUDA Programming Guide, \"Synchronization Functions\". "
              "`wl.clock64()` counts 4 per issue step on the simulator, moved ahead while every "
              "running thread only waits on it.")
ATOMIC = _group(
    "atomics",
    "They return the old value and take global or shared arrays: 32- and 64-bit integers and "
    "floats, `and`/`or`/`xor` integers only; float16 arrays take `atomic_add`/`atomic_sub` "
    "only, sm_70+, CUDA's `atomicAdd(__half*)`; the index is one integer per dimension or a "
    "tuple. `wl.atomic_load`/`wl.atomic_store` are relaxed, device scope (`ld`/"
    "`st.relaxed.gpu`, `.volatile` before sm_70), for flags other threads set: a plain "
    "`flag[0]` read in a loop may be moved out of it by the optimiser (as in CUDA C++ without "
    "`volatile`), and the simulator then reports an `infinite_loop`; a block that waits for a "
    "flag only a block not yet started sets gets a `co_residency` finding (CUDA does not "
    "guarantee that a grid's blocks are resident together: wait only for blocks that have "
    "started).")
WARP = _group(
    "warp",
    "CUDA Programming Guide, \"Warp Shuffle Functions\", \"Warp Vote Functions\", \"Warp "
    "Match Functions\", \"Warp Reduce Functions\". Shuffles take 32- and 64-bit values; "
    "match values are compared by their bits; an `arch` older than a builtin needs is a "
    "compile error at the call.")
MATH = _group(
    "math",
    "float32/float64 through libdevice or LLVM; Python's `math.*` equivalents and `abs`, "
    "`min`, `max`, `round`, `pow` work too. `wl.round` is CUDA's `roundf`/`round` (halfway "
    "cases away from zero: in a kernel `wl.round(2.5)` is 3.0); Python's `round(x)` (also "
    "where `from warp_lab import *` binds the name to `wl.round`, whose host call is "
    "Python's) and `wl.rint` round halfway cases to even (2.0), and `round(x)` gives a float "
    "of `x`'s type, not Python's int (write `int(round(x))`). Float `min`/`max`/`clamp` are "
    "CUDA's `fminf`/`fmaxf` (IEEE 754 minNum: a NaN operand is ignored, `min(nan, 0.0)` is "
    "0.0, where Python's result depends on the order of the arguments; of two zeros +0.0 is "
    "the larger, PTX ISA \"max\").")
INTS = _group("integer intrinsics", "CUDA Math API, \"Integer Intrinsics\"; 32-bit results "
              "unless said otherwise.")
BITS = _group(
    "bit casts",
    "The same bits as another type (LLVM `bitcast`, numpy's `x.view(dtype)`; CUDA Math API, "
    "\"Type Casting Intrinsics\"). No value conversion happens, so the argument must already "
    "have the width and kind: a float64 passed to `wl.float_as_int` is an error, not a "
    "rounding; an integer literal takes the signed type when it fits, else the unsigned one "
    "(`wl.int_as_float(0xFF800000)` is `-inf`). A constant argument folds at compile time "
    "(NaN results excepted, which keep their payload at run time).")
VECTORS = _group("vectors and matrices", "Constructors: `wl.vec3(x, y, z)`, `wl.vec3(s)`, "
                 "`wl.mat22(a, b, c, d)`, `wl.mat22(s)` (filled).")
MISC = _group("misc", "`len(a)`, `int()`, `float()`, `bool()` and type calls (casts) work "
              "too.")

#: threads per warp on every NVIDIA GPU so far (CUDA Programming Guide, "warpSize")
warp_size = 32
#: the all-lanes member mask of the ``*_sync`` warp functions; a uint32 (as in CUDA),
#: so ``0xFF if c else wl.FULL_MASK`` is a uint32 mask too
FULL_MASK = _np.uint32(0xFFFFFFFF)
#: the kernel language's constants for the docs' table: name -> (group, what it is)
CONSTANTS = {"warp_size": (INDEXING, "32, threads per warp (warpSize)"),
             "FULL_MASK": (WARP, "the all-lanes member mask, a uint32 (so `0xFF if c else "
                                 "wl.FULL_MASK` is a uint32 mask too)")}


def _b(name: str, signature: str, doc: str, group: str, impl: str | None = None) -> Builtin:
    """Record builtin ``name`` in :data:`BUILTINS` (the one place a builtin is declared)."""
    if group not in GROUPS:
        raise ValueError(f"builtin {name}: unknown group {group!r}")
    b = Builtin(name, signature, doc, group,
                getattr(_py, name, None) if name in _SHADOWING else None, impl or name)
    BUILTINS[name] = b
    return b


# -- indexing (CUDA Programming Guide, "Built-in Variables") -----------------
tid = _b("tid", "()",
         "global thread index: int32 for a 1-D launch, (y, x) or (z, y, x) otherwise", INDEXING)
lane_id = _b("lane_id", "()", "lane of this thread in its warp, 0..31 (%laneid)", INDEXING)
warp_id = _b("warp_id", "()",
             "warp of this thread in its block: linear thread index // 32", INDEXING)
thread_idx = Dim3("thread_idx", "tid", "this thread's index in its block (%tid)")
block_idx = Dim3("block_idx", "ctaid", "this block's index in the grid (%ctaid)")
block_dim = Dim3("block_dim", "ntid", "threads per block (%ntid)")
grid_dim = Dim3("grid_dim", "nctaid", "blocks per grid (%nctaid)")
DIM3S = {d.name: d for d in (thread_idx, block_idx, block_dim, grid_dim)}

# -- synchronisation ----------------------------------------------------------
syncthreads = _b("syncthreads", "()", "block-wide barrier (__syncthreads, bar.sync 0)", SYNC)
syncwarp = _b("syncwarp", "(mask=FULL_MASK)", "warp barrier (__syncwarp, bar.warp.sync)", SYNC)
threadfence = _b("threadfence", "()",
                 "device-scope memory fence (__threadfence, fence.sc.gpu)", SYNC)
threadfence_block = _b("threadfence_block", "()", "block-scope memory fence (membar.cta)", SYNC)
syncthreads_count = _b("syncthreads_count", "(predicate)",
                       "block-wide barrier returning the number of threads of the block whose "
                       "predicate is true (__syncthreads_count, bar.red.popc)", SYNC, "block_vote")
syncthreads_and = _b("syncthreads_and", "(predicate)",
                     "block-wide barrier: True if every thread's predicate is true "
                     "(__syncthreads_and, bar.red.and)", SYNC, "block_vote")
syncthreads_or = _b("syncthreads_or", "(predicate)",
                    "block-wide barrier: True if any thread's predicate is true "
                    "(__syncthreads_or, bar.red.or)", SYNC, "block_vote")
clock64 = _b("clock64", "()", "int64 per-SM cycle counter (clock64(), %clock64); on the "
             "simulator it counts issue steps", SYNC)

# -- atomics (return the old value; global or shared arrays) ---------------
atomic_add = _b("atomic_add", "(arr, index, value)", "arr[index] += value atomically", ATOMIC, "atomic")
atomic_sub = _b("atomic_sub", "(arr, index, value)", "arr[index] -= value atomically", ATOMIC, "atomic")
atomic_min = _b("atomic_min", "(arr, index, value)", "arr[index] = min(arr[index], value)", ATOMIC, "atomic")
atomic_max = _b("atomic_max", "(arr, index, value)", "arr[index] = max(arr[index], value)", ATOMIC, "atomic")
atomic_and = _b("atomic_and", "(arr, index, value)", "arr[index] &= value atomically", ATOMIC, "atomic")
atomic_or = _b("atomic_or", "(arr, index, value)", "arr[index] |= value atomically", ATOMIC, "atomic")
atomic_xor = _b("atomic_xor", "(arr, index, value)", "arr[index] ^= value atomically", ATOMIC, "atomic")
atomic_exch = _b("atomic_exch", "(arr, index, value)", "swap arr[index] and value", ATOMIC, "atomic")
atomic_cas = _b("atomic_cas", "(arr, index, compare, value)",
                "if arr[index] == compare: arr[index] = value (compare-and-swap)", ATOMIC, "atomic")
atomic_load = _b("atomic_load", "(arr, index)",
                 "arr[index] read as a relaxed device-scope atomic (ld.relaxed.gpu): a read the "
                 "compiler keeps in a loop, for flags that other threads set", ATOMIC, "atomic")
atomic_store = _b("atomic_store", "(arr, index, value)",
                  "arr[index] = value as a relaxed device-scope atomic (st.relaxed.gpu)", ATOMIC, "atomic")
ATOMICS = ("add", "sub", "min", "max", "and", "or", "xor", "exch", "cas", "load", "store")

# -- warp shuffles and votes (CUDA Programming Guide, "Warp Shuffle Functions") --
shfl_sync = _b("shfl_sync", "(mask, value, src_lane, width=32)", "value from lane src_lane",
               WARP, "shfl")
shfl_up_sync = _b("shfl_up_sync", "(mask, value, delta, width=32)", "value from lane - delta",
                  WARP, "shfl")
shfl_down_sync = _b("shfl_down_sync", "(mask, value, delta, width=32)",
                    "value from lane + delta", WARP, "shfl")
shfl_xor_sync = _b("shfl_xor_sync", "(mask, value, lane_mask, width=32)",
                   "value from lane ^ lane_mask", WARP, "shfl")
ballot_sync = _b("ballot_sync", "(mask, predicate)",
                 "bit i set when lane i's predicate is true", WARP, "vote")
any_sync = _b("any_sync", "(mask, predicate)", "True if any lane's predicate is true", WARP, "vote")
all_sync = _b("all_sync", "(mask, predicate)", "True if every lane's predicate is true",
              WARP, "vote")
activemask = _b("activemask", "()", "uint32: bit i set when lane i of this warp executes the "
                "call with this thread (__activemask, activemask.b32)", WARP)
match_any_sync = _b("match_any_sync", "(mask, value)",
                    "uint32: the lanes of mask whose value equals this lane's (__match_any_sync, "
                    "match.any.sync; 32/64-bit integers or floats by bits; sm_70+)", WARP, "match")
match_all_sync = _b("match_all_sync", "(mask, value)",
                    "uint32: mask if every lane of mask has the same value, else 0 "
                    "(__match_all_sync, match.all.sync; sm_70+)", WARP, "match")
reduce_add_sync = _b("reduce_add_sync", "(mask, value)",
                     "sum of value over the lanes of mask, wrapping (__reduce_add_sync, "
                     "redux.sync; 32-bit integers; sm_80+)", WARP, "reduce")
reduce_min_sync = _b("reduce_min_sync", "(mask, value)",
                     "minimum over the lanes of mask, signed or unsigned by type (sm_80+)",
                     WARP, "reduce")
reduce_max_sync = _b("reduce_max_sync", "(mask, value)",
                     "maximum over the lanes of mask, signed or unsigned by type (sm_80+)",
                     WARP, "reduce")
reduce_and_sync = _b("reduce_and_sync", "(mask, value)",
                     "bitwise and over the lanes (sm_80+)", WARP, "reduce")
reduce_or_sync = _b("reduce_or_sync", "(mask, value)", "bitwise or over the lanes (sm_80+)",
                    WARP, "reduce")
reduce_xor_sync = _b("reduce_xor_sync", "(mask, value)",
                     "bitwise xor over the lanes (sm_80+)", WARP, "reduce")
REDUCTIONS = ("add", "min", "max", "and", "or", "xor")

# -- math (libdevice __nv_* for float32 and float64) --------------------------
#: one-argument float functions
MATH_UNARY = ("sqrt", "rsqrt", "cbrt", "exp", "exp2", "exp10", "expm1", "log", "log2", "log10",
              "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
              "asinh", "acosh", "atanh", "erf", "erfc", "floor", "ceil", "trunc", "round",
              "rint")
#: two-argument float functions
MATH_BINARY = ("pow", "atan2", "copysign", "fmod", "hypot")
for _n in MATH_UNARY:
    globals()[_n] = _b(_n, "(x)", f"{_n}(x) for float32/float64 (libdevice)", MATH,
                       "math1")
round = _b("round", "(x)", "x rounded to an integral float, halfway cases away "  # noqa: A001
           "from zero (CUDA's roundf/round; Python's round and wl.rint: to even)", MATH,
           "math1")
for _n in MATH_BINARY:
    globals()[_n] = _b(_n, "(x, y)", f"{_n}(x, y) for float32/float64 (libdevice)", MATH,
                       "pow" if _n == "pow" else "math2")
abs = _b("abs", "(x)", "absolute value (ints, floats, vectors)", MATH, "abs")  # noqa: A001
min = _b("min", "(a, b, ...)", "smallest argument", MATH, "minmax")  # noqa: A001
max = _b("max", "(a, b, ...)", "largest argument", MATH, "minmax")  # noqa: A001
clamp = _b("clamp", "(x, lo, hi)", "min(max(x, lo), hi)", MATH, "clamp")
fma = _b("fma", "(a, b, c)", "a*b + c rounded once", MATH, "fma")
isnan = _b("isnan", "(x)", "x is NaN", MATH, "fp_class")
isinf = _b("isinf", "(x)", "x is +inf or -inf", MATH, "fp_class")
isfinite = _b("isfinite", "(x)", "x is neither NaN nor infinite", MATH, "fp_class")
sign = _b("sign", "(x)", "-1, 0 or 1 with x's type", MATH, "sign")

# -- integer intrinsics -------------------------------------------------------
popc = _b("popc", "(x)", "number of set bits (__popc)", INTS, "int_unary")
clz = _b("clz", "(x)", "leading zero bits (__clz)", INTS, "int_unary")
ffs = _b("ffs", "(x)", "1-based position of the lowest set bit, 0 if none (__ffs)", INTS,
         "int_unary")
brev = _b("brev", "(x)", "bits reversed (__brev)", INTS, "int_unary")
mulhi = _b("mulhi", "(a, b)", "high half of the full product (__mulhi / __umulhi)", INTS,
           "mulhi")
hadd = _b("hadd", "(a, b)", "(a + b) >> 1 without overflow, int32 or uint32 (__hadd / __uhadd)",
          INTS, "hadd")
rhadd = _b("rhadd", "(a, b)",
           "(a + b + 1) >> 1 without overflow, int32 or uint32 (__rhadd / __urhadd)", INTS,
           "hadd")
funnelshift_l = _b("funnelshift_l", "(lo, hi, shift)",
                   "uint32: the high word of hi:lo shifted left by shift & 31 "
                   "(__funnelshift_l, shf.l.wrap.b32)", INTS, "funnelshift")
funnelshift_lc = _b("funnelshift_lc", "(lo, hi, shift)",
                    "uint32: the high word of hi:lo shifted left by min(shift, 32) "
                    "(__funnelshift_lc, shf.l.clamp.b32)", INTS, "funnelshift")
funnelshift_r = _b("funnelshift_r", "(lo, hi, shift)",
                   "uint32: the low word of hi:lo shifted right by shift & 31 "
                   "(__funnelshift_r, shf.r.wrap.b32)", INTS, "funnelshift")
funnelshift_rc = _b("funnelshift_rc", "(lo, hi, shift)",
                    "uint32: the low word of hi:lo shifted right by min(shift, 32) "
                    "(__funnelshift_rc, shf.r.clamp.b32)", INTS, "funnelshift")
byte_perm = _b("byte_perm", "(x, y, s)",
               "uint32 whose byte n is byte s[4n+2:4n] of the 8 bytes y:x (x the low word; "
               "the selector's upper 16 bits and bit 3 of each nibble are ignored: "
               "__byte_perm, prmt.b32)", INTS, "byte_perm")

# -- bit casts (CUDA Math API, "Type Casting Intrinsics"): the same bits, another type ------
float_as_int = _b("float_as_int", "(x)", "int32 with the bits of float32 x (__float_as_int)",
                  BITS, "bitcast_fixed")
float_as_uint = _b("float_as_uint", "(x)",
                   "uint32 with the bits of float32 x (__float_as_uint)", BITS, "bitcast_fixed")
int_as_float = _b("int_as_float", "(i)", "float32 with the bits of a 32-bit integer "
                  "(__int_as_float)", BITS, "bitcast_fixed")
uint_as_float = _b("uint_as_float", "(i)", "float32 with the bits of a 32-bit integer "
                   "(__uint_as_float)", BITS, "bitcast_fixed")
double_as_longlong = _b("double_as_longlong", "(x)", "int64 with the bits of float64 x "
                        "(__double_as_longlong)", BITS, "bitcast_fixed")
longlong_as_double = _b("longlong_as_double", "(i)", "float64 with the bits of a 64-bit "
                        "integer (__longlong_as_double)", BITS, "bitcast_fixed")
bitcast = _b("bitcast", "(x, dtype)", "x's bits as dtype, a scalar type of the same width "
             "(LLVM bitcast; numpy's x.view(dtype))", BITS, "bitcast")
#: the fixed-type bit casts: name -> (argument kind "f"/"i", its bits, result type name)
BITCASTS = {"float_as_int": ("f", 32, "int32"), "float_as_uint": ("f", 32, "uint32"),
            "int_as_float": ("i", 32, "float32"), "uint_as_float": ("i", 32, "float32"),
            "double_as_longlong": ("f", 64, "int64"), "longlong_as_double": ("i", 64, "float64")}

# -- vectors and matrices -----------------------------------------------------
dot = _b("dot", "(a, b)", "dot product of two vectors", VECTORS, "vecop")
cross = _b("cross", "(a, b)", "cross product of two 3-vectors", VECTORS, "vecop")
length = _b("length", "(v)", "Euclidean length of a vector", VECTORS, "vecop")
length_sq = _b("length_sq", "(v)", "squared length of a vector", VECTORS, "vecop")
normalize = _b("normalize", "(v)", "v / length(v)", VECTORS, "vecop")
transpose = _b("transpose", "(m)", "matrix transpose", VECTORS, "vecop")
mul = _b("mul", "(a, b)",
         "matrix @ vector, matrix @ matrix, or elementwise scalar product", VECTORS, "vecop")
outer = _b("outer", "(a, b)", "outer product of two vectors (a matrix)", VECTORS, "vecop")
matrix_from_rows = _b("matrix_from_rows", "(*rows)",
                      "the matrix whose rows are the vectors (of one type): len(rows) x n "
                      "(Warp's mat.h matrix_from_rows)", VECTORS, "matrix_from_vecs")
matrix_from_cols = _b("matrix_from_cols", "(*cols)",
                      "the matrix whose columns are the vectors (of one type): n x len(cols) "
                      "(Warp's mat.h matrix_from_cols)", VECTORS, "matrix_from_vecs")
argmin = _b("argmin", "(v)", "uint32 index of the smallest component of a vector, the first "
            "of equal ones; NaNs skipped, 0 if all are NaN (Warp's vec.h argmin)", VECTORS,
            "argminmax")
argmax = _b("argmax", "(v)", "uint32 index of the largest component of a vector, the first "
            "of equal ones; NaNs skipped, 0 if all are NaN (Warp's vec.h argmax)", VECTORS,
            "argminmax")
div_approx = _b("div_approx", "(a, b)", "a / b of floats (or a float vector, matrix or "
                "quaternion and a float): exact division, as Warp's CPU device; Warp's GPU "
                "uses div.approx (builtin.h approx_div)", VECTORS, "div_approx")

# -- misc ---------------------------------------------------------------------
select = _b("select", "(cond, a, b)", "a if cond else b, both evaluated (selp)", MISC)
printf = _b("printf", "(fmt, *args)", "C printf through CUDA's vprintf", MISC)
shared_array = _b("shared_array", "(shape, dtype)",
                  "static shared memory array of the block; shape is a compile-time constant", MISC)
dynamic_shared_array = _b(
    "dynamic_shared_array", "(dtype=float32, offset=0)",
    "the block's dynamic shared memory (wl.launch(..., shared_mem=bytes)) as a 1-D array from "
    "byte offset; every call views the same memory, as CUDA's extern __shared__", MISC)
local_array = _b("local_array", "(shape, dtype)",
                 "per-thread array (registers or local memory)", MISC)

#: everything the kernel language puts in :mod:`warp_lab`'s namespace, by name: the builtins,
#: ``thread_idx`` & co and the constants (``warp_lab/__init__.py`` exports this, so a new
#: builtin record is public without touching it)
PUBLIC: dict[str, object] = {**BUILTINS, **DIM3S, "warp_size": warp_size,
                             "FULL_MASK": FULL_MASK}

#: Python builtins a kernel may use, and the warp_lab builtin (or special form) they mean
PYTHON_BUILTINS = {
    "range": "range", "len": "len", "print": "print", "int": "int", "float": "float",
    "bool": "bool", "abs": "abs", "min": "min", "max": "max", "round": "round",
    "pow": "pow",
}

#: functions of Python's math module that kernels may call, mapped to builtin names
MATH_MODULE = {
    getattr(_math, n): n for n in
    ("sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
     "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc",
     "floor", "ceil", "trunc", "pow", "atan2", "copysign", "fmod", "hypot", "isnan", "isinf",
     "isfinite", "fabs")
    if hasattr(_math, n)
}
MATH_MODULE[_math.fabs] = "abs"


def _host_math():
    """NumPy twins of the math builtins, so a ``@wl.func`` also runs as host Python
    (scalars and arrays alike); the kernel versions are libdevice's."""
    import numpy as np
    erf, erfc = np.vectorize(_math.erf), np.vectorize(_math.erfc)
    twins = {
        "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x), "cbrt": np.cbrt, "exp": np.exp,
        "exp2": np.exp2, "exp10": lambda x: np.power(10.0, x), "expm1": np.expm1,
        "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sin": np.sin,
        "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
        "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
        "acosh": np.arccosh, "atanh": np.arctanh, "erf": erf, "erfc": erfc,
        "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "rint": np.rint,
        "atan2": np.arctan2, "copysign": np.copysign, "fmod": np.fmod, "hypot": np.hypot,
        "clamp": np.clip, "fma": lambda a, b, c: a * b + c, "isnan": np.isnan,
        "isinf": np.isinf, "isfinite": np.isfinite, "sign": np.sign, "dot": np.dot,
        "cross": np.cross, "length": np.linalg.norm,
        "length_sq": lambda v: np.dot(v, v), "normalize": lambda v: v / np.linalg.norm(v),
        "transpose": np.transpose, "outer": np.outer, "mul": np.matmul,
        "select": lambda c, a, b: a if c else b,
    }
    for name, fn in twins.items():
        object.__setattr__(BUILTINS[name], "host", fn)


_host_math()
