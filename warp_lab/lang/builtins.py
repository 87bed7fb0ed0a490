"""The builtins a kernel may call: ``wl.tid()``, ``wl.syncthreads()``, math, atomics, ...

Each builtin is a :class:`Builtin` object exported from :mod:`warp_lab`. On the
host it only documents itself (calling it raises a ``TypeError`` that says to
use it inside a kernel); the compiler recognises it by identity and looks up
its typing rule (:mod:`warp_lab.compiler.typing_builtins`) and its code
generator (:mod:`warp_lab.compiler.lower_builtins`) by :attr:`Builtin.name`,
so this table is the one list of what the language offers.

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
    "Builtin", "Dim3", "BUILTINS", "MATH_UNARY", "MATH_BINARY", "PYTHON_BUILTINS",
    "MATH_MODULE", "warp_size", "FULL_MASK",
]


@dataclass(frozen=True, eq=False)
class Builtin:
    """A kernel-language builtin function.

    Attributes:
        name: the name under :mod:`warp_lab` (``"atomic_add"``).
        signature: how it is called, for messages and docs.
        doc: one line saying what it does.
        host: what a call does outside kernels, for the builtins that share a name
            with a Python builtin (``abs``, ``min``, ``max``, ``pow``, ``round``), so
            that ``from warp_lab import *`` leaves host code working; None for the
            others, which raise.
    """

    name: str
    signature: str
    doc: str
    host: object = field(default=None, repr=False)

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
    """

    name: str
    sreg: str

    def __repr__(self) -> str:
        return f"<wl.{self.name} (%{self.sreg}.x/.y/.z)>"


#: threads per warp on every NVIDIA GPU so far (CUDA Programming Guide, "warpSize")
warp_size = 32
#: the all-lanes member mask of the ``*_sync`` warp functions; a uint32 (as in CUDA),
#: so ``0xFF if c else wl.FULL_MASK`` is a uint32 mask too
FULL_MASK = _np.uint32(0xFFFFFFFF)

BUILTINS: dict[str, Builtin] = {}
#: builtins named like Python's own: on the host they behave as Python's
_SHADOWING = ("abs", "min", "max", "pow", "round")


def _b(name: str, signature: str, doc: str) -> Builtin:
    b = Builtin(name, signature, doc, getattr(_py, name, None) if name in _SHADOWING else None)
    BUILTINS[name] = b
    return b


# -- indexing (CUDA Programming Guide, "Built-in Variables") -----------------
tid = _b("tid", "()", "global thread index: int32 for a 1-D launch, (y, x) or (z, y, x) otherwise")
lane_id = _b("lane_id", "()", "lane of this thread in its warp, 0..31 (%laneid)")
warp_id = _b("warp_id", "()", "warp of this thread in its block: linear thread index // 32")
thread_idx = Dim3("thread_idx", "tid")
block_idx = Dim3("block_idx", "ctaid")
block_dim = Dim3("block_dim", "ntid")
grid_dim = Dim3("grid_dim", "nctaid")
DIM3S = {d.name: d for d in (thread_idx, block_idx, block_dim, grid_dim)}

# -- synchronisation ----------------------------------------------------------
syncthreads = _b("syncthreads", "()", "block-wide barrier (__syncthreads, bar.sync 0)")
syncwarp = _b("syncwarp", "(mask=FULL_MASK)", "warp barrier (__syncwarp, bar.warp.sync)")
threadfence = _b("threadfence", "()", "device-scope memory fence (__threadfence, fence.sc.gpu)")
threadfence_block = _b("threadfence_block", "()", "block-scope memory fence (membar.cta)")
syncthreads_count = _b("syncthreads_count", "(predicate)",
                       "block-wide barrier returning the number of threads of the block whose "
                       "predicate is true (__syncthreads_count, bar.red.popc)")
syncthreads_and = _b("syncthreads_and", "(predicate)",
                     "block-wide barrier: True if every thread's predicate is true "
                     "(__syncthreads_and, bar.red.and)")
syncthreads_or = _b("syncthreads_or", "(predicate)",
                    "block-wide barrier: True if any thread's predicate is true "
                    "(__syncthreads_or, bar.red.or)")
clock64 = _b("clock64", "()", "int64 per-SM cycle counter (clock64(), %clock64); on the "
             "simulator it counts issue steps")

# -- atomics (return the old value; global or shared arrays) ---------------
atomic_add = _b("atomic_add", "(arr, index, value)", "arr[index] += value atomically")
atomic_sub = _b("atomic_sub", "(arr, index, value)", "arr[index] -= value atomically")
atomic_min = _b("atomic_min", "(arr, index, value)", "arr[index] = min(arr[index], value)")
atomic_max = _b("atomic_max", "(arr, index, value)", "arr[index] = max(arr[index], value)")
atomic_and = _b("atomic_and", "(arr, index, value)", "arr[index] &= value atomically")
atomic_or = _b("atomic_or", "(arr, index, value)", "arr[index] |= value atomically")
atomic_xor = _b("atomic_xor", "(arr, index, value)", "arr[index] ^= value atomically")
atomic_exch = _b("atomic_exch", "(arr, index, value)", "swap arr[index] and value")
atomic_cas = _b("atomic_cas", "(arr, index, compare, value)",
                "if arr[index] == compare: arr[index] = value (compare-and-swap)")
atomic_load = _b("atomic_load", "(arr, index)",
                 "arr[index] read as a relaxed device-scope atomic (ld.relaxed.gpu): a read the "
                 "compiler keeps in a loop, for flags that other threads set")
atomic_store = _b("atomic_store", "(arr, index, value)",
                  "arr[index] = value as a relaxed device-scope atomic (st.relaxed.gpu)")
ATOMICS = ("add", "sub", "min", "max", "and", "or", "xor", "exch", "cas", "load", "store")

# -- warp shuffles and votes (CUDA Programming Guide, "Warp Shuffle Functions") --
shfl_sync = _b("shfl_sync", "(mask, value, src_lane, width=32)", "value from lane src_lane")
shfl_up_sync = _b("shfl_up_sync", "(mask, value, delta, width=32)", "value from lane - delta")
shfl_down_sync = _b("shfl_down_sync", "(mask, value, delta, width=32)", "value from lane + delta")
shfl_xor_sync = _b("shfl_xor_sync", "(mask, value, lane_mask, width=32)", "value from lane ^ lane_mask")
ballot_sync = _b("ballot_sync", "(mask, predicate)", "bit i set when lane i's predicate is true")
any_sync = _b("any_sync", "(mask, predicate)", "True if any lane's predicate is true")
all_sync = _b("all_sync", "(mask, predicate)", "True if every lane's predicate is true")
activemask = _b("activemask", "()", "uint32: bit i set when lane i of this warp executes the "
                "call with this thread (__activemask, activemask.b32)")
match_any_sync = _b("match_any_sync", "(mask, value)",
                    "uint32: the lanes of mask whose value equals this lane's (__match_any_sync, "
                    "match.any.sync; 32/64-bit integers or floats by bits; sm_70+)")
match_all_sync = _b("match_all_sync", "(mask, value)",
                    "uint32: mask if every lane of mask has the same value, else 0 "
                    "(__match_all_sync, match.all.sync; sm_70+)")
reduce_add_sync = _b("reduce_add_sync", "(mask, value)",
                     "sum of value over the lanes of mask, wrapping (__reduce_add_sync, "
                     "redux.sync; 32-bit integers; sm_80+)")
reduce_min_sync = _b("reduce_min_sync", "(mask, value)",
                     "minimum over the lanes of mask, signed or unsigned by type (sm_80+)")
reduce_max_sync = _b("reduce_max_sync", "(mask, value)",
                     "maximum over the lanes of mask, signed or unsigned by type (sm_80+)")
reduce_and_sync = _b("reduce_and_sync", "(mask, value)", "bitwise and over the lanes (sm_80+)")
reduce_or_sync = _b("reduce_or_sync", "(mask, value)", "bitwise or over the lanes (sm_80+)")
reduce_xor_sync = _b("reduce_xor_sync", "(mask, value)", "bitwise xor over the lanes (sm_80+)")
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
    globals()[_n] = _b(_n, "(x)", f"{_n}(x) for float32/float64 (libdevice)")
round = _b("round", "(x)", "x rounded to an integral float, halfway cases away "  # noqa: A001
           "from zero (CUDA's roundf/round; Python's round and wl.rint: to even)")
for _n in MATH_BINARY:
    globals()[_n] = _b(_n, "(x, y)", f"{_n}(x, y) for float32/float64 (libdevice)")
abs = _b("abs", "(x)", "absolute value (ints, floats, vectors)")  # noqa: A001
min = _b("min", "(a, b, ...)", "smallest argument")  # noqa: A001
max = _b("max", "(a, b, ...)", "largest argument")  # noqa: A001
clamp = _b("clamp", "(x, lo, hi)", "min(max(x, lo), hi)")
fma = _b("fma", "(a, b, c)", "a*b + c rounded once")
isnan = _b("isnan", "(x)", "x is NaN")
isinf = _b("isinf", "(x)", "x is +inf or -inf")
isfinite = _b("isfinite", "(x)", "x is neither NaN nor infinite")
sign = _b("sign", "(x)", "-1, 0 or 1 with x's type")

# -- integer intrinsics -------------------------------------------------------
popc = _b("popc", "(x)", "number of set bits (__popc)")
clz = _b("clz", "(x)", "leading zero bits (__clz)")
ffs = _b("ffs", "(x)", "1-based position of the lowest set bit, 0 if none (__ffs)")
brev = _b("brev", "(x)", "bits reversed (__brev)")
mulhi = _b("mulhi", "(a, b)", "high half of the full product (__mulhi / __umulhi)")

# -- bit casts (CUDA Math API, "Type Casting Intrinsics"): the same bits, another type ------
float_as_int = _b("float_as_int", "(x)", "int32 with the bits of float32 x (__float_as_int)")
float_as_uint = _b("float_as_uint", "(x)", "uint32 with the bits of float32 x (__float_as_uint)")
int_as_float = _b("int_as_float", "(i)", "float32 with the bits of a 32-bit integer "
                  "(__int_as_float)")
uint_as_float = _b("uint_as_float", "(i)", "float32 with the bits of a 32-bit integer "
                   "(__uint_as_float)")
double_as_longlong = _b("double_as_longlong", "(x)", "int64 with the bits of float64 x "
                        "(__double_as_longlong)")
longlong_as_double = _b("longlong_as_double", "(i)", "float64 with the bits of a 64-bit "
                        "integer (__longlong_as_double)")
bitcast = _b("bitcast", "(x, dtype)", "x's bits as dtype, a scalar type of the same width "
             "(LLVM bitcast; numpy's x.view(dtype))")
#: the fixed-type bit casts: name -> (argument kind "f"/"i", its bits, result type name)
BITCASTS = {"float_as_int": ("f", 32, "int32"), "float_as_uint": ("f", 32, "uint32"),
            "int_as_float": ("i", 32, "float32"), "uint_as_float": ("i", 32, "float32"),
            "double_as_longlong": ("f", 64, "int64"), "longlong_as_double": ("i", 64, "float64")}

# -- vectors and matrices -----------------------------------------------------
dot = _b("dot", "(a, b)", "dot product of two vectors")
cross = _b("cross", "(a, b)", "cross product of two 3-vectors")
length = _b("length", "(v)", "Euclidean length of a vector")
length_sq = _b("length_sq", "(v)", "squared length of a vector")
normalize = _b("normalize", "(v)", "v / length(v)")
transpose = _b("transpose", "(m)", "matrix transpose")
mul = _b("mul", "(a, b)", "matrix @ vector, matrix @ matrix, or elementwise scalar product")
outer = _b("outer", "(a, b)", "outer product of two vectors (a matrix)")

# -- misc ---------------------------------------------------------------------
select = _b("select", "(cond, a, b)", "a if cond else b, both evaluated (selp)")
printf = _b("printf", "(fmt, *args)", "C printf through CUDA's vprintf")
shared_array = _b("shared_array", "(shape, dtype)",
                  "static shared memory array of the block; shape is a compile-time constant")
dynamic_shared_array = _b(
    "dynamic_shared_array", "(dtype=float32, offset=0)",
    "the block's dynamic shared memory (wl.launch(..., shared_mem=bytes)) as a 1-D array from "
    "byte offset; every call views the same memory, as CUDA's extern __shared__")
local_array = _b("local_array", "(shape, dtype)", "per-thread array (registers or local memory)")

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
