"""Typing rules of the kernel language, as tables and small pure functions.

* literals: an integer literal is int32 (int64 if it does not fit), a float
  literal float32; both are *weak*: next to a typed value they take its type
  (``x * 2`` with ``x: float64`` is float64), as in NumPy 2 (NEP 50).
* mixed arithmetic promotes: int -> float, 32 -> 64 bits; signed and
  unsigned integers of one width give the unsigned type (C's usual
  arithmetic conversions, ISO C 6.3.1.8).
* an implicit conversion that can lose information (float -> int, 64 -> 32
  bits, signed <-> unsigned) is a compile error that names the cast to write.

Constant folding evaluates with the same semantics as the generated code
(wrapping integers, float32 rounding), so a folded and an unfolded
expression agree.
"""

from __future__ import annotations

import ast
import math
import operator
from dataclasses import dataclass

import numpy as np

from warp_lab.lang.types import (ArrayType, Matrix, Scalar, TupleType, Type, Vector, bool_,
                                 float32, float64, int16, int32, int64)

__all__ = ["Meta", "NoneType", "NONE", "promote", "implicit_ok", "literal_type", "fold_binop",
           "fold_unary", "fold_compare", "wrap_int", "cast_value", "float_for", "FoldError",
           "BINOPS", "CMPOPS", "BINOP_SYMBOLS", "type_name", "lossy_hint", "fits",
           "int_needed_hint", "ConstRangeError", "float_overflow"]


@dataclass(frozen=True)
class Meta(Type):
    """A compile-time-only value: a module, a builtin, a type, a device function,
    a string. It never becomes an LLVM value."""

    value: object
    size: int = 0
    align: int = 1

    def __repr__(self) -> str:
        return f"compile-time {self.value!r}"


@dataclass(frozen=True)
class NoneType(Type):
    """The type of a call that returns nothing."""

    size: int = 0
    align: int = 1

    def __repr__(self) -> str:
        return "None"


NONE = NoneType()


def no_value(node: ast.AST) -> str:
    """The message for ``node``, typed :data:`NONE`, used where a value is needed: a call
    of a function that returns nothing (``wl.syncthreads()``), else the ``None`` literal
    or a name bound to None, which the language has no value for."""
    if isinstance(node, ast.Call):
        return "this call returns no value"
    if isinstance(node, ast.Constant):
        return "None is not a value in a kernel (its values are numbers, vectors and matrices)"
    return f"{ast.unparse(node)} is None, not a value (a kernel's values are numbers, " \
           "vectors and matrices)"

#: Python operator node -> short name used by the typer and the code generator
BINOPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv",
    ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow", ast.LShift: "shl",
    ast.RShift: "shr", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor",
    ast.MatMult: "matmul",
}
#: the Warp dialect's own operators (``typing_exprs.ExprTyper._warp_op``): C's truncating
#: integer ``/``, C's remainder (``fmod`` for floats), ``floor(a / b)`` for a float ``//``
WARP_OPS = ("cdiv", "cmod", "ffloordiv")
CMPOPS = {
    ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge",
}
BINOP_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
                 "mod": "%", "pow": "**", "shl": "<<", "shr": ">>", "and": "&", "or": "|",
                 "xor": "^", "matmul": "@", "cdiv": "/", "cmod": "%", "ffloordiv": "//"}


def c_div(a: int, b: int) -> int:
    """C's integer quotient, truncated toward zero (C11 6.5.5), of Python ints ``b != 0``."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def type_name(t: Type) -> str:
    """How a type is spelled in diagnostics (``float32``, ``vec3``, ``array of float32``)."""
    if isinstance(t, (Scalar, Vector, Matrix)):
        return t.name
    if isinstance(t, ArrayType):
        if t.space == "local" and t.shape is not None:   # (a fixed-size array: its shape)
            return f"local array of {type_name(t.dtype)} of shape {t.shape}"
        return f"{t.space} {t.ndim}-D array of {type_name(t.dtype)}"
    if isinstance(t, TupleType):
        return "tuple of " + ", ".join(type_name(e) for e in t.elems)
    if isinstance(t, Meta):
        v = t.value
        if isinstance(v, str):
            return "string"
        name = getattr(v, "name", None)
        return name if isinstance(name, str) else getattr(v, "__name__", type(v).__name__)
    return repr(t)


def fits(value, t: Scalar) -> bool:
    """Whether the Python number ``value`` is exactly representable in ``t``."""
    if t.is_bool:
        return value in (0, 1)
    if t.is_int:
        if isinstance(value, float) and not value.is_integer():
            return False
        lo = -(1 << (t.bits - 1)) if t.is_signed else 0
        hi = (1 << (t.bits - 1)) - 1 if t.is_signed else (1 << t.bits) - 1
        return lo <= value <= hi
    return True


def literal_type(value) -> Scalar:
    """The type of a Python literal: bool, int32 (int64 if too big), float32."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int32 if fits(value, int32) else int64
    return float32


def _join(a: Scalar, b: Scalar) -> Scalar:
    """Common type of two strong scalar types (NumPy's promotion below 32 bits, C's from 32).

    Mixed signed/unsigned integers where the unsigned one is at least as wide and
    narrower than 32 bits give the next wider signed type, as NumPy does
    (``int8 * uint8`` is int16, ``int8 + uint16`` int32): the value is what C
    computes after promoting both to ``int`` (C11 6.3.1.8), so an ``int8 × uint8``
    quantised product does not wrap. From 32 bits the wider type wins and one
    width gives the unsigned type (C's usual arithmetic conversions; NumPy would
    widen ``int32 + uint32`` to int64).
    """
    if a == b:
        return a
    if a.is_bool:
        a = int32 if not b.is_bool else a
    if b.is_bool:
        b = int32
    if a == b:
        return a
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            if a.bits == b.bits == 16:   # float16 with bfloat16: neither holds the other
                return float32
            return a if a.bits >= b.bits else b
        f, i = (a, b) if a.is_float else (b, a)
        if f.bits == 16 and i.bits > 8:
            return float32
        return f
    if a.is_signed != b.is_signed:
        u, i = (b, a) if a.is_signed else (a, b)
        if i.bits <= u.bits < 32:
            return int16 if u.bits == 8 else int32  # NumPy: the next signed width holds both
    if a.bits != b.bits:
        return a if a.bits > b.bits else b
    return a if not a.is_signed else b  # same width, 32 or 64 bits: unsigned wins (C)


def promote(a: Scalar, b: Scalar, a_weak: bool = False, b_weak: bool = False) -> Scalar:
    """Result type of arithmetic on ``a`` and ``b`` (weak = an untyped literal)."""
    if a_weak != b_weak:
        strong, weak = (b, a) if a_weak else (a, b)
        if strong.is_float:
            return strong
        if weak.is_float:
            return float64 if strong.bits == 64 else float32
        if strong.is_bool and not weak.is_bool:
            return weak
        return strong
    return _join(a, b)


def implicit_ok(src: Type, dst: Type, weak_value=None) -> bool:
    """Whether ``src`` converts to ``dst`` without a cast.

    Args:
        src: the value's type.
        dst: the variable's, parameter's or element's type.
        weak_value: the value when it is a constant literal (then any type that
            represents it exactly is fine), else None.
    """
    if src == dst:
        return True
    if not (isinstance(src, Scalar) and isinstance(dst, Scalar)):
        if isinstance(src, TupleType) and isinstance(dst, TupleType):
            return len(src.elems) == len(dst.elems) and all(
                implicit_ok(s, d) for s, d in zip(src.elems, dst.elems))
        return False
    if weak_value is not None:
        if dst.is_bool:
            return isinstance(weak_value, bool)
        if dst.is_float:
            return True
        return not isinstance(weak_value, float) and fits(int(weak_value), dst)
    if src.is_bool:
        return True
    if dst.is_bool:
        return False
    if src.is_float:
        return dst.is_float and dst.bits >= src.bits
    if dst.is_float:  # int -> float: the promotion mixed arithmetic does anyway, but not
        # into fewer bits (int64 -> float32 rounds 2**24 + 1 to 2**24: docs/language.md's
        # "64 -> 32 bits is never implicit"; uint32 -> float16 overflows past 65504)
        return src.bits <= dst.bits
    if src.is_signed == dst.is_signed:
        return dst.bits >= src.bits
    return (not src.is_signed) and dst.is_signed and dst.bits > src.bits


def lossy_hint(src: Type, dst: Type) -> str:
    """The cast to suggest for a rejected implicit conversion."""
    if isinstance(src, Meta) and isinstance(src.value, str):  # x[0] = 'a': no cast helps
        return "a string is only a print() or assert message in a kernel; store a number"
    if isinstance(dst, Scalar):
        return f"write wl.{dst.name}(...) to convert explicitly"
    return f"convert the value to {type_name(dst)} explicitly"


def int_needed_hint(node: ast.AST) -> str:
    """The hint for a float where an integer is needed (an index, a ``range()`` bound).

    Args:
        node: the typed expression (its operands carry ``wl_ty``).

    Returns:
        For ``a / b`` of two integers, a pointer to ``//``: ``/`` is Python's true
        division, a float even for integers (docs/language.md, "Operators"), and
        ``int(a / b)`` would truncate a rounded float quotient; for a tuple
        (``range(x.shape)``), its first element; else the cast to write.
    """
    if isinstance(getattr(node, "wl_ty", None), TupleType):  # range(a.shape): int() won't do
        return f"a tuple is not a number: take one element, {ast.unparse(node)}[0]"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        sides = (getattr(node.left, "wl_ty", None), getattr(node.right, "wl_ty", None))
        if all(isinstance(t, Scalar) and (t.is_int or t.is_bool) for t in sides):
            return (f"/ is true division, a float even for integers (as in Python): write "
                    f"{ast.unparse(node.left)} // {ast.unparse(node.right)} for the integer "
                    "quotient")
    return "convert with int(...)"


def wrap_int(value: int, t: Scalar) -> int:
    """``value`` wrapped to ``t``'s width (two's complement), as the hardware does."""
    if t.is_bool:
        return int(bool(value))
    mask = (1 << t.bits) - 1
    v = int(value) & mask
    if t.is_signed and v >> (t.bits - 1):
        v -= 1 << t.bits
    return v


def _np(t: Scalar):
    """A callable rounding a number to ``t`` as a numpy scalar; bfloat16's gives the
    float32 holding the nearest bfloat16 (Warp computes bfloat16 in float32 and rounds
    each result: ``warp/native/builtin.h``, :mod:`warp_lab.lang.bf16`)."""
    if t.is_bf16:
        from warp_lab.lang.bf16 import round_value
        return lambda v: np.float32(round_value(v))
    return t.numpy.type


class ConstRangeError(ValueError):
    """A finite constant that its float type cannot hold: converted, it would become ±inf.

    ``hint`` says what to write instead. The typer and the lowerer turn it into a
    KernelCompileError at the constant's node.
    """

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.hint = hint


def _number_text(value) -> str:
    text = repr(float(value)) if isinstance(value, np.floating) else repr(value)
    return text if len(text) <= 24 else f"an integer of {len(str(abs(int(value))))} digits"


def float_overflow(value, t: Scalar) -> ConstRangeError | None:
    """Why the Python number ``value`` cannot be a constant of float type ``t``, or None.

    Args:
        value: a Python int or float (bool and non-float ``t`` give None).
        t: the constant's final type (float16, float32 or float64).

    Returns:
        A :class:`ConstRangeError` when ``value`` is finite and its nearest ``t`` is ±inf:
        IEEE 754 round-to-nearest (what ``cvt.rn`` does, PTX ISA 9.7.9.21, and numpy's
        conversion) rounds a magnitude of at least max + ulp/2 to infinity, so
        ``3.40282356e38`` is FLT_MAX but ``3.40282357e38`` and ``1e39`` are inf as float32,
        and float16 holds up to 65504 (65520 rounds to inf). ``inf`` and ``nan`` themselves
        are fine (``math.inf``, ``float('inf')``); an int beyond float64 (``10**400``)
        overflows every float type. The runtime's parameter check says the same of a
        launch argument (``runtime.args``).
    """
    if isinstance(value, (bool, np.bool_)) or not t.is_float:
        return None
    try:
        f = float(value)
    except OverflowError:  # an int beyond float64 (10**400)
        f = None
    if f is not None:
        if not math.isfinite(f):
            return None
        with np.errstate(over="ignore"):
            if math.isfinite(float(_np(t)(f))):
                return None
    if t.is_bf16:
        from warp_lab.lang.bf16 import MAX as limit
    else:
        limit = float(np.finfo(t.numpy).max)
    return ConstRangeError(
        f"{_number_text(value)} overflows {t.name} (largest finite value {limit:.8g}): "
        "the constant would become inf",
        "write math.inf if infinity is meant" + (
            "" if t.bits == 64 else ", or make the value float64: wl.float64(...)"))


def cast_value(value, t: Scalar):
    """Convert a folded Python value to type ``t`` as the generated code would: to bool by
    truth, an integer wrapped to ``t``'s bits, a float truncated toward zero.

    Raises:
        ValueError: a float that is inf, NaN or (truncated) outside ``t``'s range converted
            to an integer type: at run time PTX's ``cvt.rzi`` saturates (PTX ISA 9.7.9.21)
            where folding would wrap, so the front end makes it a located error.
        ConstRangeError: a finite number that would round to ±inf in float type ``t``
            (:func:`float_overflow`).
    """
    if t.is_bool:
        return bool(value)
    if t.is_int:
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError(f"cannot convert {value} to {t.name}")
            # truncates toward zero, like fptosi; out of range, the GPU clamps (PTX cvt)
            # where wrapping would give yet another number: refused, as inf is
            info = np.iinfo(t.numpy)
            if not info.min <= int(value) <= info.max:
                raise ValueError(f"cannot convert {value!r} to {t.name}: out of range "
                                 f"[{info.min}, {info.max}]")
            value = int(value)
        return wrap_int(int(value), t)
    err = float_overflow(value, t)
    if err is not None:
        raise err
    with np.errstate(all="ignore"):
        return float(_np(t)(value))


class FoldError(ValueError):
    """A constant expression has no value (division by zero, ...)."""


def fold_binop(op: str, a, b, t: Scalar):
    """Evaluate ``a <op> b`` at compile time, both already of type ``t``.

    Returns the folded value, or None when the result is better left to run
    time (an oversized power). Raises :class:`FoldError` for a division by zero.
    """
    if t.is_float:
        with np.errstate(all="ignore"):
            x, y = _np(t)(a), _np(t)(b)
            if op in ("truediv", "floordiv", "mod", "cmod", "ffloordiv") and y == 0:
                raise FoldError("division by zero in a constant expression")
            if op == "add":
                r = x + y
            elif op == "sub":
                r = x - y
            elif op == "mul":
                r = x * y
            elif op == "truediv":
                r = x / y
            elif op in ("ffloordiv", "floordiv") and t.is_bf16:
                r = np.floor(_np(t)(x / y))   # Warp: floorf(float(a / b)), a / b rounded
            elif op == "floordiv":
                r = np.floor_divide(x, y)
            elif op == "mod":
                r = np.mod(x, y)
            elif op == "cmod":
                r = np.fmod(x, y)
            elif op == "ffloordiv":
                r = np.floor(x / y)
            elif op == "pow":
                r = np.power(x, y)
            else:
                return None
            return float(_np(t)(r))
    a, b = int(a), int(b)
    bits = max(t.bits, 1)
    if op in ("floordiv", "mod", "truediv", "cdiv", "cmod") and b == 0:
        raise FoldError("division by zero in a constant expression")
    if op == "add":
        r = a + b
    elif op == "sub":
        r = a - b
    elif op == "mul":
        r = a * b
    elif op == "floordiv":
        r = a // b
    elif op == "mod":
        r = a % b
    elif op == "cdiv":
        r = c_div(a, b)
    elif op == "cmod":
        r = a - b * c_div(a, b)
    elif op == "pow":
        if b < 0:
            raise FoldError("an integer raised to a negative power is not an integer")
        r = pow(a, b, 1 << bits)
    elif op == "shl":
        r = 0 if b >= bits or b < 0 else a << b
    elif op == "shr":
        if t.is_signed:
            r = a >> min(b, bits - 1) if b >= 0 else (-1 if a < 0 else 0)
        else:
            r = (a & ((1 << bits) - 1)) >> b if 0 <= b < bits else 0
    elif op == "and":
        r = a & b
    elif op == "or":
        r = a | b
    elif op == "xor":
        r = a ^ b
    else:
        return None
    return wrap_int(r, t)


def fold_unary(op: str, a, t: Scalar):
    """Evaluate a unary operator (``neg``, ``pos``, ``invert``, ``not``) at compile time."""
    if op == "not":
        return not a
    if op == "pos":
        return a
    if op == "neg":
        return cast_value(-a, t) if t.is_float else wrap_int(-int(a), t)
    if op == "invert":
        return wrap_int(~int(a), t)
    return None


_CMP = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
        "gt": operator.gt, "ge": operator.ge}


def fold_compare(op: str, a, b) -> bool:
    """Evaluate a comparison at compile time."""
    return bool(_CMP[op](a, b))


def float_for(t: Scalar) -> Scalar:
    """The float type math on ``t`` uses (ints -> float32, int64 -> float64)."""
    if t.is_float:
        return t
    return float64 if t.bits == 64 else float32

