"""``wp.types``: Warp's type constructors and helpers over warp_lab's types.

``vector(length, dtype)`` and ``matrix(shape, dtype)`` give the warp_lab
:class:`~warp_lab.lang.types.Vector` / :class:`~warp_lab.lang.types.Matrix` of that shape
(the named one when warp_lab has it: ``vector(3, float32)`` is ``wp.vec3``); called in a
kernel they are Warp's ``vector(*args, length=, dtype=)`` / ``matrix(*args, shape=,
dtype=)`` constructors (:class:`~warp_lab.lang.kernel.TypeFactory`).
"""

from __future__ import annotations

import numpy as np

from dataclasses import dataclass

from warp_lab.lang.types import (ArrayType, Matrix, Scalar, TypeFamily, Vector, as_type, bool_,
                                 bfloat16, float16, float32, float64, int8, int16, int32, int64, uint8, uint16,
                                 uint32, uint64)
from warp_lab.lang.kernel import TypeFactory
from warp_lab.warp._host import array, dtype_from_numpy, dtype_to_numpy

__all__ = ["vector", "matrix", "quaternion", "transformation", "dtype_from_numpy", "dtype_to_numpy", "type_size_in_bytes",
           "type_length", "type_scalar_type", "types_equal", "is_array", "array",
           "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
           "uint16", "uint32", "uint64", "bool", "scalar_types", "float_types", "int_types"]

bool = bool_  # noqa: A001  (Warp's wp.types.bool)
int_types = (int8, uint8, int16, uint16, int32, uint32, int64, uint64)
float_types = (float16, bfloat16, float32, float64)  # Warp's order (warp/_src/types.py)
scalar_types = int_types + float_types


def _vector(length: int, dtype=float32) -> Vector:
    """The vector type of ``length`` components of ``dtype`` (Warp's ``types.vector``).

    Raises:
        TypeError: ``dtype`` is not a scalar type; ValueError: ``length`` below 1.
    """
    from warp_lab.compiler.typing_exprs import vector_of

    elem = as_type(dtype)
    if not isinstance(elem, Scalar):
        raise TypeError(f"wp.types.vector needs a scalar dtype, not {dtype!r}")
    if int(length) < 1:
        raise ValueError(f"wp.types.vector needs length >= 1, not {length}")
    return vector_of(elem, int(length))


def _matrix(shape, dtype=float32) -> Matrix:
    """The ``shape = (rows, cols)`` matrix type of ``dtype`` (Warp's ``types.matrix``).

    Raises:
        TypeError: ``dtype`` is not a scalar type; ValueError: a bad shape.
    """
    from warp_lab.compiler.typing_exprs import matrix_of

    elem = as_type(dtype)
    if not isinstance(elem, Scalar):
        raise TypeError(f"wp.types.matrix needs a scalar dtype, not {dtype!r}")
    rows, cols = (int(s) for s in shape)
    if rows < 1 or cols < 1:
        raise ValueError(f"wp.types.matrix needs a shape of positive extents, not {shape}")
    return matrix_of(elem, rows, cols)


vector = TypeFactory("vector", _vector)
matrix = TypeFactory("matrix", _matrix)


@dataclass(frozen=True)
class TypeOrConstructor(TypeFamily):
    """Warp's ``wp.types.quaternion`` / ``wp.types.transformation``: on the host, called
    with only ``dtype=``, the type of that component type (``quaternion(dtype=float64)`` is
    ``wp.quatd``); called with values, or in a kernel, Warp's inferring constructor
    ``quaternion(*args, dtype=)`` / ``transformation(*args, dtype=)`` (warp-lang 1.19
    ``builtins.py``: ``quaternion_value_func``, ``transformation_value_func``; the component
    type is ``dtype=`` else the first argument's), as :class:`TypeFamily` is.

    Raises:
        TypeError: ``dtype`` is not float16/32/64.
    """

    def __call__(self, *values, dtype=None):
        if values:
            return TypeFamily.__call__(self, *values, dtype=dtype)
        try:
            return self.of(as_type(float32 if dtype is None else dtype))
        except TypeError:
            raise TypeError(f"wp.types.{self.name} needs a float dtype, not {dtype!r}") from None

    def __repr__(self) -> str:
        return f"wp.types.{self.name}"


quaternion = TypeOrConstructor("quaternion", "quat")
transformation = TypeOrConstructor("transformation", "transform")


def type_size_in_bytes(dtype) -> int:
    """Bytes of one value of ``dtype``."""
    return as_type(dtype).size


def type_length(dtype) -> int:
    """Components of ``dtype`` (1 for a scalar)."""
    t = as_type(dtype)
    return t.n if isinstance(t, Vector) else t.rows * t.cols if isinstance(t, Matrix) else 1


def type_scalar_type(dtype) -> Scalar:
    """The scalar type of ``dtype``'s components."""
    t = as_type(dtype)
    return t.elem if isinstance(t, (Vector, Matrix)) else t


def types_equal(a, b, match_generic: bool = False) -> bool:
    """Whether ``a`` and ``b`` are the same type (Python's ``float`` is float32)."""
    return as_type(a) == as_type(b)


def is_array(value) -> bool:
    """Whether ``value`` is a Warp-namespace array (or an array annotation)."""
    return isinstance(value, (array, ArrayType))
