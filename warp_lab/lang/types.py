"""The types a warp_lab kernel may use.

Every type is a small frozen value object. Two views of each type live
here, so that nobody re-derives them elsewhere:

* the numpy dtype (how host data is stored),
* the size and alignment in bytes (how ``compiler/abi`` lays parameters out).

The LLVM type of each is the compiler's (``compiler/lower_expr.llty`` in registers,
``memty`` in memory).

Scalars are callable: inside a kernel ``wl.float32(x)`` is a cast; on the
host it returns the numpy scalar, so the same expression means the same
thing in both places.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import numpy as np

__all__ = [
    "Type", "Scalar", "Vector", "Matrix", "ArrayType",
    "bool_", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64",
    "vec2", "vec3", "vec4", "vec2i", "vec3i", "vec4i", "vec2d", "vec3d", "vec4d",
    "mat22", "mat33", "mat44",
    "SCALARS", "scalar_from_numpy", "as_type",
    "TupleType", "array", "array1d", "array2d", "array3d", "array4d", "PointerType",
    "CudaVector", "StructType", "Quaternion", "Transformation", "TypeFamily",
    "QUATERNIONS", "TRANSFORMATIONS",
]
# (quat, transform, spatial_vector, bfloat16... are Warp's names: ``warp_lab.warp`` exports them,
# ``wl`` not)


class Type:
    """Base class of every kernel-language type."""

    #: size in bytes of one value in memory
    size: int
    #: alignment in bytes of one value in memory (and in the parameter buffer)
    align: int


@dataclass(frozen=True)
class Scalar(Type):
    """A scalar type.

    Args:
        name: the warp_lab spelling (``"float32"``).
        kind: ``"b"`` bool, ``"i"`` signed integer, ``"u"`` unsigned
            integer, ``"f"`` IEEE floating point.
        bits: width in bits (bool is stored in 8 bits, computed as ``i1``).
    """

    name: str
    kind: str
    bits: int

    @property
    def size(self) -> int:
        """Bytes per value in memory (bool: 1)."""
        return max(1, self.bits // 8)

    @property
    def align(self) -> int:
        return self.size

    @property
    def numpy(self) -> np.dtype:
        """The numpy dtype holding this type on the host (bfloat16: Warp's,
        ``ml_dtypes.bfloat16`` or else uint16 bit patterns, :mod:`warp_lab.lang.bf16`)."""
        if self.name == "bfloat16":
            from warp_lab.lang.bf16 import NUMPY
            return NUMPY
        return np.dtype(_NUMPY_NAMES[self.name])

    @property
    def is_bf16(self) -> bool:
        """bfloat16: 2 bytes in memory, a float32 holding a bfloat16 value in registers
        (``compiler/lower_expr.llty``), rounded after every operation."""
        return self.name == "bfloat16"

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind in "iu"

    @property
    def is_signed(self) -> bool:
        return self.kind in "if"

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    def __call__(self, value):
        """Host-side conversion with numpy semantics (in kernels: a cast); bfloat16 rounds
        through float32 as Warp's ``wp_bfloat16(float)`` does (:mod:`warp_lab.lang.bf16`)."""
        if self.name == "bfloat16":
            from warp_lab.lang.bf16 import round_value
            return self.numpy.type(round_value(value))
        return self.numpy.type(value)

    def __repr__(self) -> str:
        return f"wl.{self.name}"


def _no_bf16_aggregate(elem, what: str) -> None:
    """Refuse a vector or matrix of bfloat16 (Warp 1.19 has them: ``wp.types.vector(3,
    wp.bfloat16)``; warp_lab's bfloat16 is scalars and arrays so far).

    Raises:
        TypeError: ``elem`` is bfloat16.
    """
    if getattr(elem, "name", None) == "bfloat16":
        raise TypeError(f"{what} of bfloat16 are a Warp feature that warp_lab does not have "
                        "yet (bfloat16 scalars and arrays work); use float32 or float16 "
                        "components")


@dataclass(frozen=True)
class Vector(Type):
    """A small fixed-length vector (``vec3`` = three float32 components)."""

    elem: Scalar
    n: int
    name: str

    def __post_init__(self):
        _no_bf16_aggregate(self.elem, "vectors")

    @property
    def size(self) -> int:
        return self.elem.size * self.n

    @property
    def align(self) -> int:
        return self.elem.align

    @property
    def numpy(self) -> np.dtype:
        """Structured-free numpy view: a vector array is ``(..., n)`` of ``elem``."""
        return self.elem.numpy

    def __call__(self, *values):
        if len(values) == 1:
            values = tuple(values[0]) if np.ndim(values[0]) else (values[0],) * self.n
        if len(values) != self.n:
            raise TypeError(f"{self.name} takes {self.n} components, got {len(values)}")
        return np.array(values, dtype=self.elem.numpy)

    def __repr__(self) -> str:
        return f"wl.{self.name}"


@dataclass(frozen=True)
class Matrix(Type):
    """A small row-major matrix (``mat33`` = 3×3 float32)."""

    elem: Scalar
    rows: int
    cols: int
    name: str

    def __post_init__(self):
        _no_bf16_aggregate(self.elem, "matrices")

    @property
    def size(self) -> int:
        return self.elem.size * self.rows * self.cols

    @property
    def align(self) -> int:
        return self.elem.align

    @property
    def numpy(self) -> np.dtype:
        return self.elem.numpy

    def __call__(self, *values):
        if len(values) == 1 and not np.ndim(values[0]):   # one number fills it (Warp's)
            return np.full((self.rows, self.cols), values[0], dtype=self.elem.numpy)
        arr = np.array(values, dtype=self.elem.numpy).reshape(self.rows, self.cols)
        return arr

    def __repr__(self) -> str:
        return f"wl.{self.name}"


Element = Union[Scalar, Vector, Matrix]


@dataclass(frozen=True)
class ArrayType(Type):
    """An n-dimensional array view: ``{ptr, shape[ndim], strides[ndim]}``.

    Args:
        dtype: element type.
        ndim: number of dimensions, 1..4.
        space: ``"global"`` for kernel parameters, ``"shared"`` for
            ``wl.shared_array``, ``"local"`` for ``wl.local_array``.
        shape: the static shape of shared and local arrays (None for global
            arrays, whose shape is a runtime value).

    The parameter layout of a global array is defined once, in
    :mod:`warp_lab.compiler.abi`.
    """

    dtype: Element
    ndim: int = 1
    space: str = "global"
    shape: tuple[int, ...] | None = None

    def __post_init__(self):
        if not 1 <= self.ndim <= 4:
            raise ValueError(f"arrays have 1 to 4 dimensions, not {self.ndim}")

    @property
    def size(self) -> int:
        return 8 + 8 * self.ndim  # pointer + int32 shape[ndim] + int32 strides[ndim]

    @property
    def align(self) -> int:
        return 8

    def __repr__(self) -> str:
        extra = "" if self.space == "global" else f", space={self.space!r}, shape={self.shape}"
        return f"wl.array(dtype={self.dtype!r}, ndim={self.ndim}{extra})"


def is_fixed_array(t) -> bool:
    """Whether ``t`` is a per-thread array of static shape (``wl.local_array``, Warp's
    ``fixedarray`` from ``wp.zeros`` in a kernel, or a row of one): the arrays a device
    function returns by value (warp-lang 1.19 ``warp/_src/types.py`` ``fixedarray``)."""
    return isinstance(t, ArrayType) and t.space == "local" and t.shape is not None


bool_ = Scalar("bool", "b", 1)
int8 = Scalar("int8", "i", 8)
int16 = Scalar("int16", "i", 16)
int32 = Scalar("int32", "i", 32)
int64 = Scalar("int64", "i", 64)
uint8 = Scalar("uint8", "u", 8)
uint16 = Scalar("uint16", "u", 16)
uint32 = Scalar("uint32", "u", 32)
uint64 = Scalar("uint64", "u", 64)
float16 = Scalar("float16", "f", 16)
#: Warp's bfloat16 (``warp/native/builtin.h`` ``wp_bfloat16``): see :mod:`warp_lab.lang.bf16`
bfloat16 = Scalar("bfloat16", "f", 16)
float32 = Scalar("float32", "f", 32)
float64 = Scalar("float64", "f", 64)

_NUMPY_NAMES = {
    "bool": "bool", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "float16": "float16", "float32": "float32", "float64": "float64",
}

SCALARS: dict[str, Scalar] = {
    t.name: t for t in (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                        float16, bfloat16, float32, float64)
}

vec2 = Vector(float32, 2, "vec2")
vec3 = Vector(float32, 3, "vec3")
vec4 = Vector(float32, 4, "vec4")
vec2i = Vector(int32, 2, "vec2i")
vec3i = Vector(int32, 3, "vec3i")
vec4i = Vector(int32, 4, "vec4i")
vec2d = Vector(float64, 2, "vec2d")
vec3d = Vector(float64, 3, "vec3d")
vec4d = Vector(float64, 4, "vec4d")
mat22 = Matrix(float32, 2, 2, "mat22")
mat33 = Matrix(float32, 3, 3, "mat33")
mat44 = Matrix(float32, 4, 4, "mat44")

# the other vectors and matrices NVIDIA Warp names (``wp.vec3ui``, ``wp.vec2h``, ``wp.mat33d``)
vec2ui = Vector(uint32, 2, "vec2ui")
vec3ui = Vector(uint32, 3, "vec3ui")
vec4ui = Vector(uint32, 4, "vec4ui")
vec2h = Vector(float16, 2, "vec2h")
vec3h = Vector(float16, 3, "vec3h")
vec4h = Vector(float16, 4, "vec4h")
mat22d = Matrix(float64, 2, 2, "mat22d")
mat33d = Matrix(float64, 3, 3, "mat33d")
mat44d = Matrix(float64, 4, 4, "mat44d")

@dataclass(frozen=True, repr=False)
class Quaternion(Vector):
    """A quaternion of NVIDIA Warp (``wp.quat``, ``wp.quatd``, ``wp.quath``): four float
    components ``x, y, z, w`` (``w`` the real part), laid out and indexed as a 4-vector,
    but a type of its own (warp-lang 1.19 ``types.quaternion``: a ``vector(length=4)``
    subclass): ``q * q`` is the quaternion product, ``normalize`` of a zero quaternion is
    the identity, and a ``vec4`` does not mix with it.

    On the host ``quat()`` is ``(0, 0, 0, 0)``, ``quat(x, y, z, w)`` and ``quat(seq)``
    give those components (a numpy array of 4, as warp_lab's vectors are).

    Raises:
        TypeError: (host call) a number of components other than 0, 1 sequence or 4.
    """

    def __call__(self, *values):
        if not values:
            return np.zeros(4, dtype=self.elem.numpy)
        if len(values) == 1 and np.ndim(values[0]):
            values = tuple(values[0])
        if len(values) != 4:
            raise TypeError(f"{self.name} takes 4 components (x, y, z, w), got {len(values)}")
        return np.array(values, dtype=self.elem.numpy)


class HostTransform(np.ndarray):
    """A host transformation value: a numpy array of 7 with Warp's ``t.p`` (a view of
    components 0..2) and ``t.q`` (3..6), read and assigned, as Warp's Python class has."""

    @property
    def p(self) -> np.ndarray:
        return np.asarray(self)[0:3]

    @p.setter
    def p(self, value):
        np.asarray(self)[0:3] = value

    @property
    def q(self) -> np.ndarray:
        return np.asarray(self)[3:7]

    @q.setter
    def q(self, value):
        np.asarray(self)[3:7] = value


@dataclass(frozen=True, repr=False)
class Transformation(Vector):
    """A rigid transformation of NVIDIA Warp (``wp.transform``, ``wp.transformd``,
    ``wp.transformh``): a translation ``p`` (3 components) and a rotation quaternion ``q``
    (4), seven floats ``(px, py, pz, qx, qy, qz, qw)`` in memory and in ``t[0..6]``
    (warp-lang 1.19 ``types.transformation``, a ``vector(length=7)`` subclass). In a kernel
    ``t.p`` is a 3-vector and ``t.q`` a :class:`Quaternion` (read and assigned);
    ``t * t`` is ``transform_multiply``.

    On the host, as Warp's class: ``transform()`` is the identity ``(0, 0, 0, 0, 0, 0, 1)``,
    ``transform(p, q)`` (``q`` defaults to the identity, keywords ``p=``/``q=`` too),
    ``transform(s)`` fills all seven, ``transform(seq of 7)`` or seven numbers.

    Raises:
        TypeError: (host call) arguments of none of those forms.
    """

    @property
    def p_type(self) -> Vector:
        """The type of ``t.p``: the 3-vector of this transformation's component type."""
        return vector3_of(self.elem)

    @property
    def q_type(self) -> Quaternion:
        """The type of ``t.q``: the quaternion of this transformation's component type."""
        return QUATERNIONS[self.elem.name]

    def __call__(self, *values, p=None, q=None):
        """The host value (a :class:`HostTransform`); the forms are the class docstring's."""
        return self._value(values, p, q).view(HostTransform)

    def _value(self, values, p, q):
        dt = self.elem.numpy
        if p is not None or q is not None:
            if len(values) > 2 - (p is not None) - (q is not None):
                raise TypeError(f"{self.name}(p, q) got too many arguments")
            pos = list(values)
            p = p if p is not None else (pos.pop(0) if pos else (0.0, 0.0, 0.0))
            q = q if q is not None else (pos.pop(0) if pos else (0.0, 0.0, 0.0, 1.0))
            values = (p, q)
        if not values:
            return np.array((0, 0, 0, 0, 0, 0, 1), dtype=dt)
        if len(values) == 1:
            v = values[0]
            if np.ndim(v) == 0:
                return np.full(7, v, dtype=dt)
            if len(v) == 7:
                return np.array(v, dtype=dt)
            values = (v, (0.0, 0.0, 0.0, 1.0))   # a lone sequence is p (Warp's rule)
        if len(values) == 2:
            p, q = values
            if np.ndim(p) != 1 or np.ndim(q) != 1 or len(p) != 3 or len(q) != 4:
                raise TypeError(f"{self.name}(p, q) takes a 3-vector p and a quaternion q")
            return np.concatenate([np.asarray(p, dtype=dt), np.asarray(q, dtype=dt)])
        if len(values) != 7:
            raise TypeError(f"{self.name} takes (p, q), one value or 7 components, got "
                            f"{len(values)} arguments")
        return np.array(values, dtype=dt)


quat = Quaternion(float32, 4, "quat")
quatd = Quaternion(float64, 4, "quatd")
quath = Quaternion(float16, 4, "quath")
transform = Transformation(float32, 7, "transform")
transformd = Transformation(float64, 7, "transformd")
transformh = Transformation(float16, 7, "transformh")
#: the quaternion and transformation types by component type name (``"float32"``)
QUATERNIONS = {q.elem.name: q for q in (quat, quatd, quath)}
TRANSFORMATIONS = {t.elem.name: t for t in (transform, transformd, transformh)}
#: Warp's spatial vectors and matrices (``warp/native/spatial.h``: ``vec_t<6>``, ``mat_t<6, 6>``)
spatial_vector = Vector(float32, 6, "spatial_vector")
spatial_vectord = Vector(float64, 6, "spatial_vectord")
spatial_vectorh = Vector(float16, 6, "spatial_vectorh")
spatial_matrix = Matrix(float32, 6, 6, "spatial_matrix")
spatial_matrixd = Matrix(float64, 6, 6, "spatial_matrixd")
spatial_matrixh = Matrix(float16, 6, 6, "spatial_matrixh")


def vector3_of(elem: Scalar) -> Vector:
    """The named 3-vector of ``elem`` (``vec3``, ``vec3d``, ``vec3h``)."""
    return {"float32": vec3, "float64": vec3d, "float16": vec3h}[elem.name]


@dataclass(frozen=True)
class TypeFamily:
    """A constructor whose component type comes from its arguments, as Warp's kernel
    builtins ``wp.quaternion(x, y, z, w)`` and ``wp.transformation(p, q)`` infer theirs
    (warp-lang 1.19 ``builtins.py``: ``quaternion_value_func``, ``transformation_value_func``),
    and the identity constructors ``wp.quat_identity(dtype=float32)`` and
    ``wp.transform_identity(dtype=float32)``.

    Attributes:
        name: the Warp name (``"quaternion"``), for messages.
        kind: ``"quat"``, ``"transform"``, ``"vecN"``, ``"matNN"`` (square, ``"mat3"``) or
            ``"float"``: what it makes, and what it accepts as an annotation; ``"vec"``
            (annotations only): a float vector of any length.
        identity: True for the identity constructors: no components, the type from
            ``dtype`` (float32 by default); the value ``(0, 0, 0, 1)`` or
            ``(0, 0, 0, 0, 0, 0, 1)``.

    In a kernel the component type is ``dtype=`` when given, else that of the first
    argument (a float literal alone: float32); then the call is the member type's
    constructor (:meth:`of`). On the host the same rule gives a numpy array.
    """

    name: str
    kind: str
    identity: bool = False

    def of(self, elem: Scalar) -> Type:
        """The member type of component type ``elem``.

        Raises:
            TypeError: ``elem`` is not float16/32/64 (Warp's quaternions and
                transformations have float components).
        """
        if not isinstance(elem, Scalar) or not elem.is_float:
            raise TypeError(f"{self.name}() needs float components, not {elem!r}")
        if self.kind == "quat":
            return QUATERNIONS[elem.name]
        if self.kind == "transform":
            return TRANSFORMATIONS[elem.name]
        if self.kind == "float":
            return elem
        n = int(self.kind[3:])
        if self.kind.startswith("vec"):
            for v in VECTORS.values():
                if v.elem == elem and v.n == n:
                    return v
            return Vector(elem, n, f"vec{n}_{elem.name}")
        for m in MATRICES.values():
            if m.elem == elem and m.rows == n and m.cols == n:
                return m
        return Matrix(elem, n, n, f"mat{n}{n}_{elem.name}")

    def accepts(self, ty) -> bool:
        """Whether ``ty`` is a member (as an annotation, Warp's generic type hints
        ``quaternion(dtype=Float)``, ``vector(length=3, dtype=Float)``: any float type)."""
        if self.kind == "quat":
            return isinstance(ty, Quaternion)
        if self.kind == "transform":
            return isinstance(ty, Transformation)
        if self.kind == "float":
            return isinstance(ty, Scalar) and ty.is_float
        if self.kind == "vec":   # any length (math.py's v: Any of a float vector)
            return type(ty) is Vector and ty.elem.is_float
        n = int(self.kind[3:])
        if self.kind.startswith("vec"):
            return type(ty) is Vector and ty.n == n and ty.elem.is_float
        return type(ty) is Matrix and ty.rows == n == ty.cols and ty.elem.is_float

    def __call__(self, *values, dtype=None):
        """Host call: the member type of ``dtype`` (or of the first value's dtype, else
        float32) called with ``values``."""
        if dtype is None:
            first = np.asarray(values[0]) if values else None
            dtype = float32 if first is None or first.dtype.kind != "f" else \
                scalar_from_numpy(first.dtype)
        ty = self.of(as_type(dtype))
        if self.identity:
            return ty(0, 0, 0, 1) if self.kind == "quat" else ty()
        return ty(*values)

    def __repr__(self) -> str:
        return f"wp.{self.name}"


quaternion = TypeFamily("quaternion", "quat")
transformation = TypeFamily("transformation", "transform")
quat_identity = TypeFamily("quat_identity", "quat", identity=True)
transform_identity = TypeFamily("transform_identity", "transform", identity=True)


VECTORS = {v.name: v for v in (vec2, vec3, vec4, vec2i, vec3i, vec4i, vec2d, vec3d, vec4d,
                               vec2ui, vec3ui, vec4ui, vec2h, vec3h, vec4h,
                               spatial_vector, spatial_vectord, spatial_vectorh)}
MATRICES = {m.name: m for m in (mat22, mat33, mat44, mat22d, mat33d, mat44d,
                                spatial_matrix, spatial_matrixd, spatial_matrixh)}
#: Every array-element type by name (scalars, vectors, matrices): the names an artifact on
#: disk or a shared-array record carries (``"float32"``, ``"vec3"``, ``"mat44"``).
ELEMENT_TYPES: dict[str, Type] = {**SCALARS, **VECTORS, **MATRICES,
                                  **{t.name: t for t in (*QUATERNIONS.values(),
                                                         *TRANSFORMATIONS.values())}}


def element_type(name: str) -> Type:
    """The element type an artifact on disk names: one of :data:`ELEMENT_TYPES`, or a
    vector or matrix without a name of its own as ``typing_exprs.vector_of`` /
    ``matrix_of`` spell it (``"vec3_uint8"``, ``"mat32_float32"``).

    Raises:
        KeyError: no such type.
    """
    if name in ELEMENT_TYPES:
        return ELEMENT_TYPES[name]
    head, _, elem = name.partition("_")
    if elem in SCALARS and head[:3] == "vec" and head[3:].isdigit():
        return Vector(SCALARS[elem], int(head[3:]), name)
    if elem in SCALARS and head[:3] == "mat" and len(head) == 5 and head[3:].isdigit():
        return Matrix(SCALARS[elem], int(head[3]), int(head[4]), name)
    raise KeyError(name)


@dataclass(frozen=True)
class AnyType(Type):
    """``typing.Any`` as an array's element type, ``wp.array(dtype=typing.Any)``: a generic
    parameter of a ``@wp.func`` (it takes an array of any element type, one specialisation
    per type) or of a ``@wp.kernel`` (specialised at ``wp.launch`` from the arguments)."""

    size = 0
    align = 1
    name = "Any"

    def __repr__(self) -> str:
        return "typing.Any"


#: the one :class:`AnyType`
ANY = AnyType()


@dataclass(frozen=True)
class TupleType(Type):
    """A fixed tuple of values inside a kernel (``wl.tid()`` of a 2-D launch,
    ``a.shape``, a device function returning several values).

    Tuples live in registers only: they cannot be kernel parameters or array
    elements.
    """

    elems: tuple

    @property
    def size(self) -> int:
        return sum(e.size for e in self.elems)

    @property
    def align(self) -> int:
        return max((e.align for e in self.elems), default=1)

    def __repr__(self) -> str:
        return "tuple[" + ", ".join(repr(e) for e in self.elems) + "]"


@dataclass(frozen=True, repr=False)
class CudaVector(Vector):
    """A CUDA built-in vector type (``float2``, ``int4``, ``__half2``) as a CUDA C++
    kernel's parameter or pointer element: :class:`Vector` with CUDA's alignment, its size
    for 2 and 4 components up to 16 bytes (``float2`` 8, ``float4`` 16), its component's
    for 1 and 3 (CUDA Programming Guide, "Built-in Vector Types"); passed by value as
    ``.param .align A .b8 p[size]``."""

    @property
    def align(self) -> int:
        size = self.elem.size * self.n
        return min(size, 16) if self.n in (2, 4) else self.elem.size

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True)
class PointerType(Type):
    """A CUDA C++ kernel's pointer parameter (``const float* __restrict__ x``): 8 bytes,
    the address of element 0, no shape (a ``wl.cuda_kernel``'s C ABI, not warp_lab's
    array struct; :mod:`warp_lab.compiler.abi` packs it as one ``.u64``).

    Args:
        dtype: the element type: a scalar, or a CUDA vector type (``float4``) as a
            :class:`Vector` named as CUDA names it.
        const: the pointee is ``const`` (the kernel does not write through it).
        spelling: the C++ type as the source writes it after the preprocessor, for
            messages (``"const float*"``).
    """

    dtype: Element
    const: bool = False
    spelling: str = ""

    @property
    def size(self) -> int:
        return 8

    @property
    def align(self) -> int:
        return 8

    @property
    def element_align(self) -> int:
        """Bytes an element's address must be a multiple of on the device: a CUDA vector
        of 2 or 4 components is aligned to its size up to 16 bytes (``float2`` 8,
        ``float4`` 16; CUDA Programming Guide, "Built-in Vector Types"), others to
        their component."""
        d = self.dtype
        return d.align if isinstance(d, CudaVector) else getattr(d, "elem", d).size

    def __repr__(self) -> str:
        return self.spelling or f"{'const ' * self.const}{self.dtype!r}*"


@dataclass(frozen=True, eq=True)
class StructType(Type):
    """A struct: named fields laid out as a C compiler lays them out (Warp's ``@wp.struct``,
    whose fields are a ``ctypes.Structure``'s: each field at the next multiple of its
    alignment, the struct aligned as its most aligned field, its size a multiple of that).

    Args:
        name: the class's name (``"Particle"``), for messages and the PTX pane.
        fields: ``((field name, Type), ...)`` in declaration order: scalars, vectors,
            matrices, global arrays (warp_lab's array record, :mod:`warp_lab.compiler.abi`)
            and other structs.
        key: ``module.qualname`` of the class: two classes of one name in different
            places are different types.

    On the host, calling it gives a zeroed :class:`~warp_lab.lang.structs.StructInstance`
    (``s = Particle(); s.x = 1.0``), as Warp's struct class does; in a kernel
    ``Particle()`` is a zeroed value and ``Particle(x, v, ...)`` one with every field
    given. A kernel parameter of this type is one ``.param .align A .b8 name[size]``
    (PTX ISA, "Kernel Function Parameters": an aggregate passed by value).

    Raises:
        TypeError: (when made) a field whose type cannot be a struct field (a tuple, a
            shared or local array, a pointer).
    """

    name: str
    fields: tuple
    key: str = ""

    def __post_init__(self):
        for fname, ft in self.fields:
            if not isinstance(ft, (Scalar, Vector, Matrix, StructType, ArrayType)) or \
                    isinstance(ft, ArrayType) and (ft.space != "global" or ft.dtype == ANY):
                raise TypeError(f"struct field {self.name}.{fname} cannot be {ft!r}: a field "
                                "is a scalar, vector, matrix, array or struct")
            if isinstance(ft, Scalar) and ft.is_bf16:
                raise TypeError(f"struct field {self.name}.{fname}: bfloat16 struct fields are "
                                "a Warp feature that warp_lab does not have yet (bfloat16 "
                                "scalars, parameters and arrays work); use float32 or float16")

    @property
    def offsets(self) -> tuple[int, ...]:
        """Byte offset of each field, in field order."""
        out, off = [], 0
        for _, ft in self.fields:
            off = (off + ft.align - 1) // ft.align * ft.align
            out.append(off)
            off += ft.size
        return tuple(out)

    @property
    def align(self) -> int:
        return max((ft.align for _, ft in self.fields), default=1)

    @property
    def size(self) -> int:
        if not self.fields:
            return 1   # (Warp gives an empty struct a one-byte dummy field)
        end = self.offsets[-1] + self.fields[-1][1].size
        a = self.align
        return (end + a - 1) // a * a

    def field(self, name: str):
        """``(index, Type)`` of field ``name``, or None."""
        for k, (fname, ft) in enumerate(self.fields):
            if fname == name:
                return k, ft
        return None

    @property
    def vars(self) -> dict:
        """``{field name: Type}`` (the names Warp's ``Struct.vars`` has)."""
        return dict(self.fields)

    @property
    def has_arrays(self) -> bool:
        """Whether an array is among the fields (of this struct or one nested)."""
        return any(isinstance(ft, ArrayType) or isinstance(ft, StructType) and ft.has_arrays
                   for _, ft in self.fields)

    def numpy_dtype(self) -> dict:
        """The numpy structured-dtype description Warp's ``Struct.numpy_dtype()`` gives:
        ``{"names", "formats", "offsets", "itemsize"}`` (a vector field ``"3<f4"``, a
        matrix ``"(2, 2)<f4"``, a nested struct its own dict).

        Raises:
            TypeError: a field is an array (its record holds device addresses, which host
                data cannot carry).
        """
        formats = []
        for fname, ft in self.fields:
            if isinstance(ft, ArrayType):
                raise TypeError(f"struct {self.name} has the array field {fname!r}: an array "
                                "of such structs (host data) cannot hold it")
            if isinstance(ft, StructType):
                formats.append(ft.numpy_dtype())
            elif isinstance(ft, Vector):
                formats.append(f"{ft.n}{ft.elem.numpy.str}")
            elif isinstance(ft, Matrix):
                formats.append(f"{(ft.rows, ft.cols)}{ft.elem.numpy.str}")
            else:
                formats.append(ft.numpy.str)
        return {"names": [f for f, _ in self.fields], "formats": formats,
                "offsets": list(self.offsets), "itemsize": self.size}

    @property
    def numpy(self) -> np.dtype:
        """The numpy structured dtype of one element (:meth:`numpy_dtype`)."""
        return np.dtype(self.numpy_dtype()) if self.fields else np.dtype("V1")

    def __call__(self):
        """A zeroed host instance (array fields None), as Warp's ``MyStruct()``."""
        from warp_lab.lang.structs import StructInstance
        return StructInstance(self)

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}: {t!r}" for f, t in self.fields)
        return f"struct {self.key or self.name}({inner})"


def array(dtype=None, ndim: int = 1, *, shape=None) -> ArrayType:
    """The annotation of a global array parameter: ``x: wl.array(dtype=wl.float32)``.

    Args:
        dtype: element type (a warp_lab scalar, vector or matrix type, a
            numpy dtype, or ``int``/``float``/``bool``); float32 when omitted.
        ndim: number of dimensions, 1..4.

    Raises:
        TypeError: ``dtype`` is not a kernel-language type.
        ValueError: ``ndim`` is outside 1..4.
    """
    dt = float32 if dtype is None else as_type(dtype)
    if isinstance(dt, (ArrayType, TupleType)):
        raise TypeError(f"array elements cannot be {dt!r}")
    return ArrayType(dt, int(ndim))


def array1d(dtype=None) -> ArrayType:
    """``wl.array(dtype, ndim=1)``."""
    return array(dtype, 1)


def array2d(dtype=None) -> ArrayType:
    """``wl.array(dtype, ndim=2)``."""
    return array(dtype, 2)


def array3d(dtype=None) -> ArrayType:
    """``wl.array(dtype, ndim=3)``."""
    return array(dtype, 3)


def array4d(dtype=None) -> ArrayType:
    """``wl.array(dtype, ndim=4)``."""
    return array(dtype, 4)


def scalar_from_numpy(dtype) -> Scalar:
    """The warp_lab scalar for a numpy dtype.

    Raises:
        TypeError: the dtype has no kernel-language equivalent (complex,
            object, structured, datetime, ...).
    """
    dt = np.dtype(dtype)
    for t in SCALARS.values():
        if t.numpy == dt:
            return t
    raise TypeError(f"numpy dtype {dt} has no warp_lab equivalent")


def as_type(obj) -> Type:
    """Turn what a user may write in an annotation into a :class:`Type`.

    Accepts warp_lab types, Python ``int``/``float``/``bool`` (int32,
    float32, bool) and numpy dtypes or scalar classes.

    Raises:
        TypeError: ``obj`` is not a type a kernel can use.
    """
    if isinstance(obj, Type):
        return obj
    if obj is int:
        return int32
    if obj is float:
        return float32
    if obj is bool:
        return bool_
    if obj is None:  # not a type (np.dtype(None) would make it float64: x: None, -> None)
        raise TypeError("None is not a warp_lab type")
    try:
        return scalar_from_numpy(obj)
    except TypeError:
        pass
    raise TypeError(f"{obj!r} is not a warp_lab type")
