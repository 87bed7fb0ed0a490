"""Check launch arguments against a kernel's signature before anything runs.

Every error names the parameter, what was expected and what was given. Array
arguments become :class:`HostView` records: where the view's bytes live in
host memory, its extents and element strides. Views that share host memory
(``x[::2]`` and ``x[1::2]``, or the same array twice) are grouped into one
:class:`Region`, so a back end copies each byte once and writes back a
consistent result, as the GPU would see aliasing arrays.
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass

import numpy as np

from warp_lab.errors import LaunchError
from warp_lab.lang import types as T
from warp_lab.runtime.arrays import Array, masked_reason

__all__ = ["HostView", "Region", "check_arguments", "group_regions", "written_regions",
           "INT32_MAX", "misaligned_vectors", "misaligned_pointers", "read_only_aliases",
           "StructArg", "place_views"]

INT32_MAX = 2**31 - 1


@dataclass
class HostView:
    """One array argument as it lies in host memory.

    Attributes:
        name: parameter name.
        array: the numpy array (a view of the user's memory, not a copy).
        owner: the :class:`Array` it came from, or None for plain numpy.
        lo, hi: absolute host addresses spanned by the view's elements, bytes
            (``hi`` exclusive).
        element0: host address of element ``[0, ..., 0]``.
        shape: kernel-visible extents (vector/matrix element dims dropped).
        strides: kernel-visible strides in elements of the parameter's dtype.
    """

    name: str
    array: np.ndarray
    owner: Array | None
    lo: int
    hi: int
    element0: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]


@dataclass
class Region:
    """Host memory [lo, hi) covering one or more overlapping :class:`HostView`."""

    lo: int
    hi: int
    views: list[HostView]
    base: np.ndarray  # a view that keeps the memory alive

    @property
    def nbytes(self) -> int:
        return self.hi - self.lo

    @property
    def writeable(self) -> bool:
        """False when every view is read-only (results are then not written back)."""
        return any(v.array.flags.writeable for v in self.views)

    def host_bytes(self) -> np.ndarray:
        """The region's host memory as a uint8 array (a view, not a copy)."""
        buf = (ctypes.c_uint8 * self.nbytes).from_address(self.lo)
        return np.frombuffer(buf, dtype=np.uint8)

    def device_address(self, view: HostView, base: int) -> int:
        """Device address of ``view``'s element 0 when the region starts at ``base``."""
        return base + (view.element0 - self.lo)


def _span(arr: np.ndarray) -> tuple[int, int]:
    start = arr.__array_interface__["data"][0]
    if arr.size == 0:
        return start, start
    lo = hi = start
    for extent, stride in zip(arr.shape, arr.strides):
        reach = (extent - 1) * stride
        if reach < 0:
            lo += reach
        else:
            hi += reach
    return lo, hi + arr.itemsize


def _describe(value) -> str:
    if isinstance(value, (np.ndarray, Array)):
        return f"an array of dtype {value.dtype} and shape {tuple(value.shape)}"
    return f"{type(value).__name__} {value!r}"[:80]


def _check_array(name: str, ptype: T.ArrayType, value) -> HostView:
    owner = value if isinstance(value, Array) else None
    if owner is not None:
        arr = owner._host_array()
    elif isinstance(value, np.ma.MaskedArray):
        raise LaunchError(f"parameter {name!r} got a numpy masked array; "
                          f"{masked_reason(value, name)}")
    elif isinstance(value, np.ndarray):
        arr = value
    elif isinstance(value, T.ArrayType):  # wl.array(dtype=...) without data: an annotation
        raise LaunchError(f"parameter {name!r} got the annotation {value!r}, a type without "
                          "data; pass a numpy array or wl.zeros(shape, dtype=...)")
    else:
        raise LaunchError(f"parameter {name!r} expects {ptype!r}, got {_describe(value)}; "
                          "pass a numpy array or a wl.array")
    elem = ptype.dtype
    elem_dims = 0
    if isinstance(elem, T.Vector):
        elem_dims = 1
        scalar = elem.elem
        trailing = (elem.n,)
    elif isinstance(elem, T.Matrix):
        elem_dims = 2
        scalar = elem.elem
        trailing = (elem.rows, elem.cols)
    else:
        scalar = elem
        trailing = ()
    if arr.dtype != scalar.numpy:
        raise LaunchError(f"parameter {name!r} expects dtype {scalar.name}, got an array of "
                          f"dtype {arr.dtype}; convert it with .astype(np.{scalar.numpy})")
    if arr.ndim != ptype.ndim + elem_dims or arr.shape[arr.ndim - elem_dims:] != trailing:
        want = f"{ptype.ndim}-D" + (f" with trailing shape {trailing}" if trailing else "")
        raise LaunchError(f"parameter {name!r} expects a {want} array, got shape "
                          f"{tuple(arr.shape)}")
    if elem_dims and arr.size:  # (NumPy gives an empty array's strides as 0)
        inner = arr.strides[ptype.ndim:]
        want_inner = tuple(int(np.prod(trailing[i + 1:])) * arr.itemsize for i in range(elem_dims))
        if tuple(inner) != want_inner:
            raise LaunchError(f"parameter {name!r}: the {elem!r} components must be contiguous "
                              f"(byte strides {tuple(inner)}, need {want_inner}); pass a "
                              "contiguous copy (np.ascontiguousarray(...))")
    size = elem.size
    shape = tuple(int(s) for s in arr.shape[:ptype.ndim])
    strides = []
    for s in arr.strides[:ptype.ndim]:
        if s % size and arr.size:
            raise LaunchError(f"parameter {name!r}: byte stride {s} is not a multiple of the "
                              f"element size {size} (strides count whole elements); pass a "
                              "contiguous copy (np.ascontiguousarray(...))" + _padded_hint(elem, s))
        strides.append(s // size)
    if any(x > INT32_MAX for x in shape) or math.prod(shape) > INT32_MAX:
        raise LaunchError(f"parameter {name!r}: shape {shape} is too large for int32 indexing "
                          f"(at most {INT32_MAX} elements per array)")
    if any(abs(s) > INT32_MAX for s in strides):
        raise LaunchError(f"parameter {name!r}: strides {tuple(strides)} (in elements) are too "
                          f"large for int32 indexing (at most {INT32_MAX}); pass a contiguous "
                          "copy (np.ascontiguousarray(...))")
    lo, hi = _span(arr)
    return HostView(name, arr, owner, lo, hi, arr.__array_interface__["data"][0], shape,
                    tuple(strides))


def _check_pointer(name: str, ptype: T.PointerType, value) -> HostView:
    """A CUDA C++ kernel's ``T*`` parameter: an array (numpy or ``wl.Array``, any shape) of
    T's dtype, contiguous (the kernel indexes it as flat memory), a CUDA vector type's
    array with that many components last (``float4*``: shape ``(..., 4)`` of float32). Its
    view is 1-D, one element per T, so findings name ``x[i]`` with the element count."""
    owner = value if isinstance(value, Array) else None
    if owner is not None:
        arr = owner._host_array()
    elif isinstance(value, np.ma.MaskedArray):
        raise LaunchError(f"parameter {name!r} got a numpy masked array; "
                          f"{masked_reason(value, name)}")
    elif isinstance(value, np.ndarray):
        arr = value
    else:
        raise LaunchError(f"parameter {name!r} ({ptype!r}) expects an array, got "
                          f"{_describe(value)}; pass a numpy array or a wl.array")
    elem = ptype.dtype
    scalar = elem.elem if isinstance(elem, T.Vector) else elem
    n = elem.n if isinstance(elem, T.Vector) else 1
    if arr.dtype != scalar.numpy:
        raise LaunchError(f"parameter {name!r} ({ptype!r}) expects dtype {scalar.numpy}, got "
                          f"an array of dtype {arr.dtype}; convert it with "
                          f".astype(np.{scalar.numpy})")
    if n > 1 and (arr.ndim == 0 or arr.shape[-1] != n):
        raise LaunchError(f"parameter {name!r} ({ptype!r}) expects an array of {elem.name} "
                          f"elements, shape (..., {n}), got shape {tuple(arr.shape)}")
    if arr.size and not arr.flags.c_contiguous:
        raise LaunchError(f"parameter {name!r} ({ptype!r}) points at contiguous memory, but "
                          f"the array is strided (strides {arr.strides}); pass "
                          "np.ascontiguousarray(...)")
    count = arr.size // n
    start = arr.__array_interface__["data"][0]
    lo, hi = _span(arr)
    return HostView(name, arr, owner, lo, hi, start, (count,), (1,))


def _padded_hint(elem, stride: int) -> str:
    """For vectors in padded rows (``(n, 4)[:, :3]`` as vec3): suggest the wider vector."""
    if isinstance(elem, T.Vector) and elem.n < 4 and stride == elem.size // elem.n * (elem.n + 1):
        return (f", or pass the whole padded array as {elem.n + 1}-component vectors "
                f"(dtype=wl.vec{elem.n + 1}{elem.name[-1] if elem.name[-1] in 'id' else ''})")
    return ""


def _check_scalar(name: str, ptype: T.Scalar, value):
    if isinstance(value, (np.ndarray, Array)) and np.ndim(value) != 0:
        raise LaunchError(f"parameter {name!r} expects a {ptype.name} scalar, got {_describe(value)}")
    if isinstance(value, np.generic):
        value = value.item()
    if ptype.is_bool:
        if not isinstance(value, (bool, int)) or value not in (0, 1):
            raise LaunchError(f"parameter {name!r} expects a bool, got {_describe(value)}")
        return int(bool(value))
    if ptype.is_int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise LaunchError(f"parameter {name!r} expects an integer ({ptype.name}), got "
                              f"{_describe(value)}" + ("; convert explicitly with int(...)"
                                                       if isinstance(value, float) else ""))
        info = np.iinfo(ptype.numpy)
        if not info.min <= value <= info.max:
            raise LaunchError(f"parameter {name!r}: {value} is out of range for {ptype.name} "
                              f"[{info.min}, {info.max}]")
        return value
    # np.longdouble stays itself through .item() (no Python type holds it)
    if not isinstance(value, (int, float, np.floating)) or isinstance(value, bool):
        raise LaunchError(f"parameter {name!r} expects a number ({ptype.name}), got "
                          f"{_describe(value)}")
    return _float_in_range(name, ptype, value)


def _float_in_range(name: str, ptype: T.Scalar, value) -> float:
    """``value`` as a Python float, refused when ``ptype`` cannot hold it.

    A finite value whose nearest ``ptype`` (float16/32/64) is infinite is a
    :class:`LaunchError`, not numpy's silent ``inf`` with a RuntimeWarning:
    the kernel would compute with a number the user never wrote. Values that
    round to the largest finite number are fine (IEEE 754 round-to-nearest),
    and explicit ``inf``/``nan`` pass through unchanged.
    """
    limit = float(np.finfo(ptype.numpy).max)
    try:
        with np.errstate(over="ignore"):
            f = float(value)
    except OverflowError:  # an int beyond float64 (10**400)
        f = math.inf
    else:
        if not math.isfinite(f) and not (isinstance(value, np.floating)
                                         and np.isfinite(value)):  # np.longdouble('1e4000')
            return f
        with np.errstate(over="ignore"):
            if math.isfinite(float(ptype.numpy.type(f))):
                return f
    raise LaunchError(f"parameter {name!r}: {_describe(value)} overflows {ptype.name} "
                      f"(largest finite value {limit:.8g}); pass float('inf') if infinity "
                      "is meant")


def _check_components(name: str, ptype, value):
    n = ptype.n if isinstance(ptype, T.Vector) else ptype.rows * ptype.cols
    try:
        flat = np.asarray(value.numpy() if isinstance(value, Array) else value).reshape(-1)
    except (TypeError, ValueError, OverflowError):  # ragged or non-numeric nesting
        flat = np.zeros(0)
    if flat.size != n or flat.dtype.kind not in "biuf":
        raise LaunchError(f"parameter {name!r} expects {ptype!r} ({n} numbers), got "
                          f"{_describe(value)}")
    elem = ptype.elem
    # the components follow the scalar rules (_check_scalar): no bools for numbers, and no
    # floats for integers, which would be truncated (3.7 -> 3) without a word
    if flat.dtype.kind == "b" or (flat.dtype.kind == "f" and elem.is_int):
        with np.errstate(invalid="ignore"):   # nan and inf are not integers either
            odd = np.flatnonzero(flat % 1 != 0) if flat.dtype.kind == "f" else ()
        k = int(odd[0]) if len(odd) else 0
        what = "bools" if flat.dtype.kind == "b" else "floats"
        raise LaunchError(f"parameter {name!r} expects {ptype!r} ({n} {elem.name} numbers), "
                          f"got {what} ({name}[{k}] = {flat[k].item()!r}); convert explicitly "
                          f"with np.asarray(...).astype(np.{elem.numpy})")
    items = [x.item() for x in flat]
    for i, x in enumerate(items):
        where = f"{name}[{i}]"
        if elem.is_int and not elem.is_bool:
            info = np.iinfo(elem.numpy)
            if not info.min <= x <= info.max:
                raise LaunchError(f"parameter {name!r}: component {i} = {x} is out of range "
                                  f"for {elem.name} [{info.min}, {info.max}]")
        elif not elem.is_int and not elem.is_bool:
            items[i] = _float_in_range(where, elem, x)
    return items


class StructArg(tuple):
    """A struct argument's checked field values, in field order (each as
    :func:`check_arguments` gives a parameter's: a :class:`HostView` for an array field,
    an :class:`~warp_lab.compiler.abi.ArrayArg` of address 0 for an array field left
    None, a nested :class:`StructArg` for a struct field)."""


def place_views(values, address_of):
    """``values`` with each :class:`HostView`, also inside a :class:`StructArg`, replaced
    by ``address_of(view)`` (an :class:`~warp_lab.compiler.abi.ArrayArg`; a back end's
    device address of the view), the rest unchanged: what ``abi.pack_params`` packs."""
    def place(v):
        if isinstance(v, HostView):
            return address_of(v)
        if isinstance(v, StructArg):
            return StructArg(place(x) for x in v)
        return v
    return [place(v) for v in values]


def _check_struct(name: str, ptype: T.StructType, value, views: list) -> StructArg:
    """A struct argument: an instance of the parameter's struct type (``MyStruct()`` with
    its fields set), each field checked as a parameter of its type named ``name.field``
    (an array field's view is named so in findings); its array views go to ``views``."""
    from warp_lab.compiler.abi import ArrayArg
    from warp_lab.lang.structs import StructInstance

    if not isinstance(value, StructInstance) or value._type != ptype:
        got = f"a struct {value._type.name}" if isinstance(value, StructInstance) else \
            _describe(value)
        raise LaunchError(f"parameter {name!r} expects a struct {ptype.name} (s = "
                          f"{ptype.name}(); s.field = ...), got {got}")
    out = []
    for fname, ft in ptype.fields:
        path, v = f"{name}.{fname}", getattr(value, fname)
        if isinstance(ft, T.ArrayType):
            if v is None:   # Warp passes a null array_t
                out.append(ArrayArg(0, (0,) * ft.ndim, (0,) * ft.ndim))
                continue
            view = _check_array(path, ft, v)
            views.append(view)
            out.append(view)
        elif isinstance(ft, T.StructType):
            out.append(_check_struct(path, ft, v, views))
        elif isinstance(ft, T.Scalar):
            out.append(_check_scalar(path, ft, v))
        else:
            out.append(_check_components(path, ft, v))
    return StructArg(out)


def check_arguments(params, inputs) -> tuple[list, list[HostView]]:
    """Check ``inputs`` against ``params`` and convert them.

    Args:
        params: ``(name, Type)`` of the kernel's parameters.
        inputs: the user's values, one per parameter.

    Returns:
        ``(values, views)``: one value per parameter (a :class:`HostView` in
        place of each array, Python numbers for scalars, lists of numbers for
        vectors/matrices, a :class:`StructArg` for a struct) and the list of array views
        (a struct's array fields among them, named ``param.field``).

    Raises:
        LaunchError: wrong count, dtype, dimensionality, scalar kind or range,
            or an array too large for int32 indexing.
    """
    if not isinstance(inputs, (list, tuple)):
        raise LaunchError(f"inputs must be a list of arguments, got {type(inputs).__name__}")
    if len(inputs) != len(params):
        names = ", ".join(n for n, _ in params)
        raise LaunchError(f"the kernel takes {len(params)} argument(s) ({names}), "
                          f"got {len(inputs)}")
    values, views = [], []
    for (name, ptype), value in zip(params, inputs):
        if isinstance(ptype, (T.ArrayType, T.PointerType)):
            check = _check_array if isinstance(ptype, T.ArrayType) else _check_pointer
            view = check(name, ptype, value)
            values.append(view)
            views.append(view)
        elif isinstance(ptype, T.Scalar):
            values.append(_check_scalar(name, ptype, value))
        elif isinstance(ptype, T.StructType):
            values.append(_check_struct(name, ptype, value, views))
        else:
            values.append(_check_components(name, ptype, value))
    return values, views


def group_regions(views: list[HostView]) -> list[Region]:
    """Merge views whose host memory overlaps into :class:`Region` records."""
    regions: list[Region] = []
    for view in sorted(views, key=lambda v: v.lo):
        if regions and view.lo < regions[-1].hi:
            r = regions[-1]
            r.hi = max(r.hi, view.hi)
            r.views.append(view)
        else:
            regions.append(Region(view.lo, view.hi, [view], view.array))
    return regions


def written_regions(regions: list[Region], written_params) -> list[Region]:
    """The regions a kernel may store into: those with a view of a parameter named in
    ``written_params`` (``CompiledKernel.written_params``). Only these are restored
    between ``repeat`` runs and copied back to the host."""
    return [r for r in regions if any(v.name in written_params for v in r.views)]


def misaligned_vectors(params, views: list[HostView]) -> list[str]:
    """Names of ``vec2``/``vec4`` array arguments whose elements will not be aligned to
    their size on the device, so a kernel compiled with ``aligned_vectors`` (one
    ``ld``/``st.v2``/``.v4`` per element) cannot take them.

    A device copy starts at an allocation (aligned to 256 bytes on both back ends)
    holding its whole :class:`Region`, so an element's device address is aligned as
    its host offset from the region's start is; strides are whole elements.

    Args:
        params: ``(name, Type)`` of the kernel's parameters.
        views: the array arguments, from :func:`check_arguments`.
    """
    from warp_lab.compiler.abi import vector_access_bytes

    dtypes = {n: t.dtype for n, t in params if isinstance(t, T.ArrayType)}
    region_of = {id(v): r for r in group_regions(views) for v in r.views}
    out = []
    for v in views:
        size = vector_access_bytes(dtypes.get(v.name))
        if size and (v.element0 - region_of[id(v)].lo) % size:
            out.append(v.name)
    return out


def misaligned_pointers(params, views: list[HostView]) -> list[str]:
    """Names of a CUDA C++ kernel's pointer arguments whose element 0 will not be aligned
    as the element type needs on the device (``float4*`` 16 bytes, ``float2*`` 8, a
    scalar its size: :attr:`~warp_lab.lang.types.PointerType.element_align`): a GPU faults
    on such an access (misaligned address), so the launch is refused. A device copy of a
    :class:`Region` starts 256-byte aligned, so the offset within the region decides."""
    types = {n: t for n, t in params if isinstance(t, T.PointerType)}
    region_of = {id(v): r for r in group_regions(views) for v in r.views}
    return [v.name for v in views if v.name in types
            and (v.element0 - region_of[id(v)].lo) % types[v.name].element_align]


def read_only_aliases(views: list[HostView], written_params) -> list[str]:
    """Names of array arguments the kernel only reads whose memory an argument it may
    write shares (the same array passed twice, overlapping views): a kernel compiled
    with ``read_only_cache`` (``ld.global.nc`` for the arrays it never writes) cannot
    take them, since the read-only data cache need not see the writes (PTX ISA
    ``ld``: ``.nc`` loads are for memory that is read-only for the kernel's lifetime).

    Args:
        views: the array arguments, from :func:`check_arguments`.
        written_params: names of the parameters the kernel may write
            (``CompiledKernel.written_params``).
    """
    written = set(written_params)
    out = []
    for region in group_regions(views):
        if any(v.name in written for v in region.views):
            out += [v.name for v in region.views if v.name not in written]
    return out
