"""The kernel ABI: how kernel parameters are laid out, defined once.

The code generator (:mod:`warp_lab.compiler.lower`) declares the entry
function's parameters from :func:`llvm_param_types`, and the runtime packs
argument bytes with :func:`pack_params`; both read the same
:class:`ParamSlot` records, and tests check them against the ``.param``
declarations in the emitted PTX and the offsets ptxas records in the cubin
(``tests/compiler/test_abi.py``).

Layout rules (PTX ISA, "Kernel Function Parameters"; the CUDA driver's
parameter buffer places each parameter at the next multiple of its
alignment):

* parameter 0 is hidden: ``launch_dim``, three int32 extents
  ``{x, y, z}`` (12 bytes, align 4). ``wl.tid()`` threads at or past these
  extents return at kernel entry, so a ``dim=`` launch never runs past
  ``dim``. For ``dim=(n0, n1)`` the x extent is ``n1`` (the fastest-varying
  index maps to ``%tid.x`` so consecutive lanes touch consecutive elements)
  and y is ``n0``; for 3-D, x = ``n2``, y = ``n1``, z = ``n0``.
* a scalar: its own size and alignment (bool as one byte, ``.u8``).
* a vector or matrix: its components in order, aligned as one component.
* a global array of ``ndim`` dimensions: ``{T addrspace(1)* ptr;
  int32 shape[ndim]; int32 strides[ndim]}``, 8 + 8*ndim bytes, align 8.
* a struct (``@wp.struct``): its fields at the offsets a C compiler gives them (each at
  the next multiple of its alignment; :class:`~warp_lab.lang.types.StructType`), an array
  field as the array record above, the whole aligned as its most aligned field and
  passed by value: NVPTX declares ``.param .align A .b8 name[size]`` (the CUDA ABI of a
  struct kernel argument, PTX ISA "Kernel Function Parameters").
* a CUDA C++ kernel (``wl.cuda_kernel``) has the C ABI instead: no hidden
  parameter (``param_layout(params, hidden=False)``), a pointer parameter
  (:class:`~warp_lab.lang.types.PointerType`) is its 8-byte address, a scalar
  its natural size and alignment (``bool`` one byte, ``__half`` two).
  Strides are in elements, not bytes, so index arithmetic stays 32-bit
  (an array whose extents or strides do not fit int32 is rejected by the
  runtime).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from warp_lab.lang.types import ArrayType, Matrix, PointerType, Scalar, StructType, Type, Vector

__all__ = ["LAUNCH_DIM", "ParamSlot", "param_layout", "pack_params", "llvm_param_types",
           "ArrayArg", "buffer_size", "vector_access_bytes", "llvm_memory_type"]


@dataclass(frozen=True)
class _LaunchDim(Type):
    """Type of the hidden launch-extent parameter: three int32 values."""

    size: int = 12
    align: int = 4

    def __repr__(self) -> str:
        return "launch_dim"


LAUNCH_DIM = _LaunchDim()


@dataclass(frozen=True)
class ParamSlot:
    """Where one kernel parameter lives in the parameter buffer.

    Attributes:
        name: the Python parameter name (``"__launch_dim"`` for the hidden one).
        type: its warp_lab type.
        offset: byte offset in the parameter buffer.
        size: bytes.
        align: alignment in bytes.
    """

    name: str
    type: Type
    offset: int
    size: int
    align: int

    @property
    def hidden(self) -> bool:
        """Whether this is the hidden ``launch_dim`` slot (not a user parameter)."""
        return self.type is LAUNCH_DIM


@dataclass(frozen=True)
class ArrayArg:
    """A global array as the packer needs it.

    Attributes:
        address: device (or simulator) address of element 0, bytes.
        shape: extents, one per dimension.
        strides: element strides (not bytes), one per dimension.
    """

    address: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]


def param_layout(params, hidden: bool = True) -> tuple[ParamSlot, ...]:
    """Lay out a kernel's parameters, the hidden launch extent first.

    Args:
        params: sequence of ``(name, Type)`` for the user's parameters, in order.
        hidden: whether the hidden ``launch_dim`` comes first (warp_lab's kernels); False
            for a CUDA C++ kernel's C ABI.

    Returns:
        one :class:`ParamSlot` per parameter, ``launch_dim`` at index 0 when ``hidden``.
    """
    slots = []
    offset = 0
    for name, typ in [("__launch_dim", LAUNCH_DIM)] * bool(hidden) + list(params):
        align = typ.align
        offset = (offset + align - 1) // align * align
        slots.append(ParamSlot(name, typ, offset, typ.size, align))
        offset += typ.size
    return tuple(slots)


def buffer_size(layout) -> int:
    """Bytes of the whole parameter buffer (end of the last slot)."""
    return max((s.offset + s.size for s in layout), default=0)


_STRUCT_CODES = {
    ("b", 1): "B", ("i", 8): "b", ("i", 16): "h", ("i", 32): "i", ("i", 64): "q",
    ("u", 8): "B", ("u", 16): "H", ("u", 32): "I", ("u", 64): "Q",
    ("f", 16): "e", ("f", 32): "f", ("f", 64): "d",
}


def _scalar_bytes(t: Scalar, value) -> bytes:
    if t.is_bf16:   # its 16 bits, rounded as Warp's wp_bfloat16(float) (lang/bf16)
        from warp_lab.lang.bf16 import host_array
        return host_array(np.asarray(value)).tobytes()
    return np.asarray(value).astype(t.numpy).tobytes() if t.bits == 16 else \
        struct.pack("<" + _STRUCT_CODES[(t.kind, t.bits)], value)


def _value_bytes(t, value) -> bytes:
    """The bytes of one value of type ``t`` as it lies in the parameter buffer."""
    if isinstance(t, Scalar):
        return _scalar_bytes(t, value)
    if isinstance(t, (Vector, Matrix)):
        return np.asarray(value, dtype=t.elem.numpy).reshape(-1).tobytes()
    if isinstance(t, ArrayType):
        return struct.pack(f"<Q{t.ndim}i{t.ndim}i", value.address, *value.shape,
                           *value.strides)
    if isinstance(t, PointerType):
        return struct.pack("<Q", value.address)
    if isinstance(t, StructType):
        buf = bytearray(t.size)
        for (_, ft), off, v in zip(t.fields, t.offsets, value):
            data = _value_bytes(ft, v)
            buf[off: off + len(data)] = data
        return bytes(buf)
    raise TypeError(f"cannot pack a parameter of type {t!r}")  # pragma: no cover


def pack_params(layout, launch_dim: tuple[int, int, int], values) -> bytes:
    """Pack argument values into the parameter buffer the kernel expects.

    Args:
        layout: the kernel's :func:`param_layout`.
        launch_dim: ``(x, y, z)`` extents for the hidden parameter.
        values: one value per user parameter, already checked and converted
            by the runtime: Python ``int``/``float``/``bool`` for scalars, a
            sequence of components for vectors and matrices (matrices row-major),
            an :class:`ArrayArg` for arrays and pointers (a pointer packs its address),
            a sequence of field values (each as above) for a struct.

    Returns:
        the parameter buffer, :func:`buffer_size` bytes, little-endian.

    Raises:
        ValueError: the number of values does not match the layout.
    """
    user = [s for s in layout if not s.hidden]
    if len(values) != len(user):
        raise ValueError(f"expected {len(user)} values, got {len(values)}")
    buf = bytearray(buffer_size(layout))
    if layout and layout[0].hidden:   # (a CUDA C++ kernel has none)
        buf[0:12] = struct.pack("<3i", *launch_dim)
    for slot, value in zip(user, values):
        data = _value_bytes(slot.type, value)
        buf[slot.offset: slot.offset + len(data)] = data
    return bytes(buf)


def llvm_param_types(layout):
    """The llvmlite types of the entry function's parameters, in order.

    Arrays are first-class structs passed by value (``{ptr addrspace(1),
    [n x i32], [n x i32]}``); NVPTX declares them as ``.param .align 8 .b8
    name[8+8n]``, which is the layout above.
    """
    from llvmlite import ir  # llvmlite.ir only; no LLVM call

    i32 = ir.IntType(32)

    def scalar(t: Scalar):
        if t.kind == "b":
            return ir.IntType(8)
        if t.is_bf16:   # its bits (compiler/bf16 makes them a float32)
            return ir.IntType(16)
        if t.kind == "f":
            return {16: ir.HalfType(), 32: ir.FloatType(), 64: ir.DoubleType()}[t.bits]
        return ir.IntType(t.bits)

    out = []
    for slot in layout:
        t = slot.type
        if slot.hidden:
            out.append(ir.LiteralStructType([i32, i32, i32]))
        elif isinstance(t, Scalar):
            out.append(scalar(t))
        elif isinstance(t, Vector):
            out.append(ir.LiteralStructType([scalar(t.elem)] * t.n))
        elif isinstance(t, Matrix):
            out.append(ir.LiteralStructType([scalar(t.elem)] * (t.rows * t.cols)))
        elif isinstance(t, ArrayType):
            arr = ir.ArrayType(i32, t.ndim)
            out.append(ir.LiteralStructType([ir.PointerType(addrspace=1), arr, arr]))
        elif isinstance(t, StructType):
            out.append(llvm_memory_type(t))
        else:  # pragma: no cover
            raise TypeError(f"no LLVM parameter type for {t!r}")
    return out


def llvm_memory_type(t):
    """The llvmlite type of a value of ``t`` in memory and in the parameter buffer: bool
    ``i8``, a vector ``[n x T]``, a matrix ``[rows*cols x T]``, an array
    ``{ptr addrspace(1), [n x i32], [n x i32]}``, a struct the literal struct of its fields'
    (LLVM lays a non-packed struct out as a C compiler does, with NVPTX's data layout's
    alignments: the offsets of :class:`~warp_lab.lang.types.StructType`)."""
    from llvmlite import ir  # llvmlite.ir only; no LLVM call

    if isinstance(t, Scalar):
        if t.kind == "b":
            return ir.IntType(8)
        if t.is_bf16:
            return ir.IntType(16)
        if t.kind == "f":
            return {16: ir.HalfType(), 32: ir.FloatType(), 64: ir.DoubleType()}[t.bits]
        return ir.IntType(t.bits)
    if isinstance(t, Vector):
        return ir.ArrayType(llvm_memory_type(t.elem), t.n)
    if isinstance(t, Matrix):
        return ir.ArrayType(llvm_memory_type(t.elem), t.rows * t.cols)
    if isinstance(t, ArrayType):
        arr = ir.ArrayType(ir.IntType(32), t.ndim)
        return ir.LiteralStructType([ir.PointerType(addrspace=1), arr, arr])
    if isinstance(t, StructType):
        if not t.fields:
            return ir.LiteralStructType([ir.IntType(8)])
        return ir.LiteralStructType([llvm_memory_type(ft) for _, ft in t.fields])
    raise TypeError(f"no memory type for {t!r}")  # pragma: no cover


def vector_access_bytes(dtype) -> int | None:
    """Bytes one vector load/store moves for an array element of ``dtype``, when the
    element fits one: 8 or 16 for a 2- or 4-component vector of 4- or 8-byte scalars
    of that total size (``vec2``, ``vec4``, ``vec2i``, ``vec4i``, ``vec2d``); else None.

    PTX ISA, ``ld``/``st``: ``.v2``/``.v4`` accesses of at most 128 bits, whose address
    must be aligned to the access size (CUDA's ``float2``/``float4`` are aligned to
    their size for this reason). The compiler emits such accesses for arrays it may
    assume aligned (``CompileOptions.aligned_vectors``); the runtime checks the
    assumption at launch.
    """
    if not isinstance(dtype, Vector) or dtype.n not in (2, 4):
        return None
    size = dtype.n * dtype.elem.size
    return size if size in (8, 16) and dtype.elem.size in (4, 8) else None
