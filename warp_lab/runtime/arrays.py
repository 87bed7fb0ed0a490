"""``wl.array``: host data in numpy, device copies made lazily.

``wl.array`` has two roles, as in Warp: with only ``dtype``/``ndim`` it is a
kernel-parameter annotation (an :class:`~warp_lab.lang.types.ArrayType`);
with data or a shape it makes an :class:`Array`.

An :class:`Array` owns a numpy array (the host copy). A back end that needs
device memory (the CUDA back end) attaches a device copy on first launch and
marks which side is newer; reading ``.numpy()`` copies back only when the
device side is newer. Plain numpy arrays, including non-contiguous views,
are accepted as kernel arguments directly.
"""

from __future__ import annotations

import math

import numpy as np

from warp_lab.lang import types as T
from warp_lab.lang.types import array2d, array3d, array4d  # noqa: F401  (re-exported)

__all__ = ["Array", "array", "zeros", "empty", "full", "from_numpy", "array2d", "array3d",
           "array4d"]


def _is_device_name(device) -> bool:
    """Whether ``device`` is spelled as :func:`warp_lab.runtime.device.get_device` reads it."""
    if not isinstance(device, str):
        return False
    number = device[5:] if device.startswith("cuda:") else "0"
    return (device in ("auto", "sim", "cuda") or device.startswith("cuda:")) \
        and number.isascii() and number.isdigit()


class Array:
    """An n-dimensional array a kernel can read and write.

    Attributes:
        shape: extents, tuple of int.
        dtype: numpy dtype of the elements.
        strides: byte strides, as numpy reports them.
        device: the device this array prefers (``"auto"``, ``"sim"``, ``"cuda:0"``).

    Do not construct directly; use :func:`array`, :func:`zeros`,
    :func:`empty`, :func:`full` or :func:`from_numpy`.
    """

    __array_priority__ = 10

    def __init__(self, host: np.ndarray, device: str = "auto"):
        if not _is_device_name(device):  # checked by name only: no driver is asked here
            raise ValueError(f"device must be 'auto', 'sim', 'cuda' or 'cuda:N', not {device!r}")
        self._host = host
        self.device = device
        self._device_copy = None  # set by a back end: object with .copy_to_host(ndarray)
        self._device_newer = False

    # -- the host side -------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._host.shape

    @property
    def dtype(self) -> np.dtype:
        return self._host.dtype

    @property
    def strides(self) -> tuple[int, ...]:
        return self._host.strides

    @property
    def ndim(self) -> int:
        return self._host.ndim

    @property
    def size(self) -> int:
        return self._host.size

    @property
    def nbytes(self) -> int:
        return self._host.nbytes

    def numpy(self) -> np.ndarray:
        """The host array, brought up to date from the device if a kernel wrote it there.

        The caller may modify the returned array, so the device copy (if any)
        is uploaded again before the next GPU launch.
        """
        self._sync_to_host()
        self._mark_host_newer()
        return self._host

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype)

    def __len__(self) -> int:
        return len(self._host)

    def __getitem__(self, index):
        return self.numpy()[index]

    def __setitem__(self, index, value):
        self.numpy()[index] = value
        self._mark_host_newer()

    def __repr__(self) -> str:
        return f"wl.array({np.array2string(self.numpy(), threshold=20)}, dtype={self.dtype})"

    # -- used by the back ends -----------------------------------------------------------
    def _host_array(self) -> np.ndarray:
        """The host array without a device sync (for back ends that copy it themselves)."""
        return self._host

    def _attach_device_copy(self, copy) -> None:
        self._device_copy = copy

    def _mark_device_newer(self) -> None:
        self._device_newer = True

    def _mark_host_newer(self) -> None:
        if self._device_copy is not None:
            self._device_copy.stale = True
        self._device_newer = False

    def _sync_to_host(self) -> None:
        if self._device_newer and self._device_copy is not None:
            self._device_copy.copy_to_host(self._host)
            self._device_newer = False


def _as_numpy_dtype(dtype) -> np.dtype | None:
    if dtype is None:
        return None
    if isinstance(dtype, T.Scalar):
        return dtype.numpy
    if isinstance(dtype, (T.Vector, T.Matrix)):
        return dtype.elem.numpy
    return np.dtype(T.as_type(dtype).numpy)


def _element_shape(dtype) -> tuple[int, ...]:
    if isinstance(dtype, T.Vector):
        return (dtype.n,)
    if isinstance(dtype, T.Matrix):
        return (dtype.rows, dtype.cols)
    return ()


def masked_reason(value: np.ma.MaskedArray, what: str = "it") -> str:
    """Why a numpy masked array is refused and what to pass instead (a kernel, and a
    device copy, hold only the data: every element is read and written, the mask is lost)."""
    masked = int(np.ma.count_masked(value))
    return (f"a kernel reads and writes every element of its data, so the mask "
            f"({masked} of {value.size} elements masked) would be ignored; pass "
            f"{what}.filled(value) to choose what the masked elements hold, or {what}.data "
            f"and the mask (np.ma.getmaskarray({what})) as two arrays")


def _first_lost(src: np.ndarray, dst: np.dtype) -> tuple[int, str] | None:
    """The first element of ``src`` whose value a cast to ``dst`` would change beyond a
    float's rounding, with why: ``(flat index, reason)``, or None when every one survives.

    numpy's casts (``np.array(data, dtype=...)``, ``ndarray.fill``) wrap integers out of
    range (``int64`` 2**40 -> ``int32`` 0) and truncate floats to integers (2.7 -> 2)
    without a word, make a finite float that overflows infinite and NaN an arbitrary
    integer with only a RuntimeWarning, and drop imaginary parts with a ComplexWarning.
    ``wl.launch`` refuses those values for scalar parameters (``args._check_scalar``), and
    an array made with an explicit ``dtype`` refuses them likewise. Rounding a float to a
    narrower float (0.1 to float32) is what such a cast is for and passes.
    """
    kind = src.dtype.kind
    if kind not in "biufc" or src.size == 0 or src.dtype == dst:
        return None
    flat = src.reshape(-1)
    if kind == "c":
        bad = np.flatnonzero(flat.imag != 0)
        if bad.size:
            return int(bad[0]), "has an imaginary part"
        flat = flat.real
        kind = flat.dtype.kind
    if dst.kind in "iu":
        if kind == "f":
            with np.errstate(invalid="ignore"):
                bad = np.flatnonzero(~np.isfinite(flat) | (flat % 1 != 0))
            if bad.size:
                return int(bad[0]), "is not an integer"
        if kind in "iuf":
            info = np.iinfo(dst)
            with np.errstate(invalid="ignore"):
                bad = np.flatnonzero((flat < info.min) | (flat > info.max))
            if bad.size:
                return int(bad[0]), f"is out of range [{info.min}, {info.max}]"
    elif dst.kind == "f" and kind in "iuf":
        with np.errstate(over="ignore", invalid="ignore"):
            bad = np.flatnonzero(np.isfinite(flat) & ~np.isfinite(flat.astype(dst)))
        if bad.size:
            return int(bad[0]), f"overflows to inf (largest finite {np.finfo(dst).max:.8g})"
    elif dst.kind == "b" and kind in "iuf":
        bad = np.flatnonzero((flat != 0) & (flat != 1))
        if bad.size:
            return int(bad[0]), "is not 0 or 1 (True or False)"
    return None


def _convert(data, dtype, what: str) -> np.ndarray:
    """``data`` as a new numpy array of the element type ``dtype`` (None: data's own).

    Raises:
        ValueError: an element the cast would change beyond rounding (:func:`_first_lost`),
            named by its index.
    """
    if dtype is T.bfloat16 or (isinstance(dtype, (T.Vector, T.Matrix))
                               and dtype.elem is T.bfloat16):
        from warp_lab.lang import bf16   # Warp's array constructor: bits, or rounded numbers
        return bf16.host_array(data)
    target = _as_numpy_dtype(dtype)
    if target is not None:
        src = data if isinstance(data, np.ndarray) else None
        if src is None:
            try:
                src = np.asarray(data)
            except (ValueError, TypeError):
                src = None
        if src is not None and src.dtype.kind in "biufc":
            lost = _first_lost(src, np.dtype(target))
            if lost is not None:
                k, why = lost
                value = src.reshape(-1)[k].item()
                where = f"element {list(map(int, np.unravel_index(k, src.shape)))} = " \
                    if src.ndim else ""
                raise ValueError(f"{what}: {where}{value!r} {why} for dtype "
                                 f"{np.dtype(target)}; convert it first if that is meant "
                                 "(np.clip, np.round, .astype)")
            if src.dtype.kind == "c":   # every imaginary part is 0: no ComplexWarning
                data = src.real
    with np.errstate(over="ignore", invalid="ignore"):
        return np.array(data, dtype=target, copy=True)


def array(data=None, dtype=None, ndim: int | None = None, shape=None, device: str = "auto"):
    """Make an array, or (with neither ``data`` nor ``shape``) a parameter annotation.

    Args:
        data: a numpy array, nested sequence or scalar; copied.
        dtype: element type: a warp_lab type (``wl.float32``, ``wl.vec3``), a
            numpy dtype or ``int``/``float``. Vector and matrix element types
            add trailing dimensions of their size to the numpy array.
        ndim: as an annotation: number of dimensions (1..4, default 1); with
            ``data``, the dimensions ``data`` must have (vector/matrix ones apart).
        shape: without ``data``, make a zero-filled array of this shape; with
            ``data``, reshape it to this shape (the element counts must agree).
        device: preferred device for launches (``"auto"``, ``"sim"``, ``"cuda:0"``).

    Returns:
        :class:`Array`, or :class:`~warp_lab.lang.types.ArrayType` when used
        as an annotation (``x: wl.array(dtype=wl.float32, ndim=2)``; the
        element type may also come first, ``wl.array(wl.float32)``, as in
        ``wl.array2d(wl.float32)``).

    Raises:
        TypeError: ``dtype`` is not a warp_lab type, or ``data`` is a numpy
            masked array (the copy would drop its mask).
        ValueError: ``ndim`` is outside 1..4, or ``device`` is not a device
            name (every array function checks it); ``data`` does not have
            ``shape``'s element count (or ``shape`` with data has an extent
            that is not an int >= 0), ``ndim`` dimensions, or the trailing
            extents of a vector/matrix ``dtype``; or an element of ``data`` that
            ``dtype`` cannot hold (an integer out of its range, a float that is not a
            whole number or not finite for an integer ``dtype``, a finite float that would
            overflow to infinity, a complex with an imaginary part), which numpy's cast
            would change without a word (:func:`_first_lost`).
    """
    if dtype is None and shape is None and (isinstance(data, T.Type) or data is int
                                            or data is float or data is bool):
        data, dtype = None, data  # wl.array(wl.float32): the element type given first
    if data is None and shape is None:
        return T.array(dtype, ndim if ndim is not None else 1)
    if shape is not None:
        shape = (shape,) if np.isscalar(shape) else tuple(shape)
        if data is None:
            return zeros(shape, dtype=dtype if dtype is not None else T.float32, device=device)
    if isinstance(data, Array):
        data = data.numpy()
    if isinstance(data, np.ma.MaskedArray):
        raise TypeError(f"wl.array got a numpy masked array; {masked_reason(data, 'data')}")
    host = _convert(data, dtype, "wl.array")
    trailing = _element_shape(dtype)
    if ndim is not None and (isinstance(ndim, bool) or not (
            isinstance(ndim, (int, np.integer)) and 1 <= ndim <= 4)):
        raise ValueError(f"wl.array: arrays have 1 to 4 dimensions, not ndim={ndim!r}")
    if shape is not None:   # the data, reshaped: never dropped for zeros
        if not all(isinstance(n, (int, np.integer)) and n >= 0 for n in shape):
            raise ValueError(f"wl.array: shape={shape!r} with data needs extents that are "
                             "integers >= 0 (no -1: give the whole shape)")
        want = shape + trailing
        if host.size != math.prod(want):
            raise ValueError(f"wl.array got {host.size} elements of data (shape "
                             f"{host.shape}) and shape={shape}, which holds "
                             f"{math.prod(want)}; give one or the other, or data of that size")
        host = host.reshape(want)
    if trailing and host.shape[max(host.ndim - len(trailing), 0):] != trailing:
        raise ValueError(f"wl.array: dtype {dtype!r} takes data whose trailing extents are "
                         f"{trailing} (one element each), got shape {host.shape}")
    if ndim is not None and host.ndim - len(trailing) != ndim:
        raise ValueError(f"wl.array got ndim={ndim} and {host.ndim - len(trailing)}-D data "
                         f"(shape {host.shape})")
    return Array(host, device)


def _new(shape, dtype, device, fill):
    shape = (shape,) if np.isscalar(shape) else tuple(shape)
    dtype = dtype if dtype is not None else T.float32
    full_shape = shape + _element_shape(dtype)
    host = np.empty(full_shape, dtype=_as_numpy_dtype(dtype))
    if fill is not None:
        host.fill(_convert(fill, dtype, "wl.full"))
    return Array(host, device)


def zeros(shape, dtype=None, device: str = "auto") -> Array:
    """A zero-filled :class:`Array` (``dtype`` default float32)."""
    return _new(shape, dtype, device, 0)


def empty(shape, dtype=None, device: str = "auto") -> Array:
    """An uninitialised :class:`Array` (contents are whatever memory held)."""
    return _new(shape, dtype, device, None)


def full(shape, value, dtype=None, device: str = "auto") -> Array:
    """An :class:`Array` filled with ``value``.

    Raises:
        ValueError: ``value`` is one ``dtype`` cannot hold (as :func:`array`'s data).
    """
    return _new(shape, dtype, device, value)


def from_numpy(data: np.ndarray, dtype=None, device: str = "auto") -> Array:
    """An :class:`Array` holding a copy of ``data``.

    Raises:
        TypeError: ``data`` is a numpy masked array (as :func:`array`).
    """
    if isinstance(data, np.ma.MaskedArray):
        raise TypeError(f"wl.from_numpy got a numpy masked array; "
                        f"{masked_reason(data, 'data')}")
    return array(np.asarray(data), dtype=dtype, device=device)
