"""The host side of :mod:`warp_lab.warp`: Warp's devices, arrays, ``launch`` and helpers.

Signatures are warp-lang 1.19's (``warp/_src/context.py``, ``warp/_src/types.py``);
underneath, arrays are :class:`warp_lab.runtime.arrays.Array` and launches are
:func:`warp_lab.launch`. Device ``"cpu"`` is warp_lab's SIMT simulator (it runs the PTX
a GPU would), ``"cuda"``/``"cuda:N"`` a GPU.
"""

from __future__ import annotations

import sys
import threading
import time
import typing

import numpy as np

from warp_lab.errors import LaunchError, UnsupportedFeatureError
from warp_lab.lang import types as T
from warp_lab.lang.kernel import Kernel as _LabKernel
from warp_lab.runtime import arrays as _arrays
from warp_lab.runtime.arrays import Array

__all__ = ["Device", "get_device", "set_device", "ScopedDevice", "get_devices",
           "get_cuda_device_count", "is_cuda_available", "is_cpu_available",
           "get_preferred_device", "array", "array1d", "array2d", "array3d", "array4d",
           "zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like",
           "empty_like", "clone", "copy", "from_numpy", "launch", "last_launch", "synchronize",
           "synchronize_device", "init", "clear_kernel_cache", "set_module_options", "get_module_options",
           "ScopedTimer", "capture_begin", "capture_end", "capture_launch", "ScopedCapture",
           "Graph", "dtype_from_numpy", "dtype_to_numpy"]


# -- devices ---------------------------------------------------------------------------

class Device:
    """A Warp device: ``"cpu"`` (warp_lab's simulator) or ``"cuda:N"`` (a GPU).

    Compares equal to its alias string, as Warp's ``Device`` does (``wp.get_device() ==
    "cpu"``). Attributes as Warp's: ``alias``, ``ordinal`` (-1 for the CPU), ``is_cpu``,
    ``is_cuda``, ``name``, ``arch`` (compute capability as an int, 90; 0 for the CPU).
    """

    def __init__(self, alias: str):
        self.alias = alias
        self.ordinal = -1 if alias == "cpu" else int(alias.split(":")[1])

    @property
    def is_cpu(self) -> bool:
        return self.alias == "cpu"

    @property
    def is_cuda(self) -> bool:
        return not self.is_cpu

    @property
    def lab_name(self) -> str:
        """The device name :func:`warp_lab.launch` takes (``"sim"``, ``"cuda:0"``)."""
        return "sim" if self.is_cpu else self.alias

    @property
    def name(self) -> str:
        return _info(self).name

    @property
    def arch(self) -> int:
        return 0 if self.is_cpu else int(_info(self).arch[3:])

    def __str__(self) -> str:
        return self.alias

    def __repr__(self) -> str:
        return f'"{self.alias}"'

    def __eq__(self, other) -> bool:
        if isinstance(other, Device):
            return other.alias == self.alias
        if isinstance(other, str):
            try:
                return _parse_device(other).alias == self.alias
            except ValueError:
                return False
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.alias)


def _info(device: Device):
    from warp_lab.runtime.device import get_device as lab_device

    return lab_device(device.lab_name)


def _cuda_count() -> int:
    from warp_lab.runtime.device import cuda_devices

    return len(cuda_devices()[0])


_state = threading.local()


def _parse_device(ident) -> Device:
    if isinstance(ident, Device):
        return ident
    if ident is None:
        return get_device()
    if not isinstance(ident, str):
        raise ValueError(f"a device is 'cpu', 'cuda' or 'cuda:N', not {ident!r}")
    if ident == "cpu":
        return Device("cpu")
    if ident == "cuda":
        return Device("cuda:0")
    if ident.startswith("cuda:") and ident[5:].isascii() and ident[5:].isdigit():
        return Device(f"cuda:{int(ident[5:])}")
    raise ValueError(f"a device is 'cpu', 'cuda' or 'cuda:N', not {ident!r}")


def get_device(ident=None) -> Device:
    """The device ``ident`` names, or the default one: the device of the innermost
    :class:`ScopedDevice`, else the one :func:`set_device` chose, else ``"cuda:0"`` when a
    GPU is usable and ``"cpu"`` (the simulator) otherwise, as Warp chooses.

    Raises:
        ValueError: ``ident`` is not ``"cpu"``, ``"cuda"`` or ``"cuda:N"``.
    """
    if ident is not None:
        return _parse_device(ident)
    scoped = getattr(_state, "devices", None)
    if scoped:
        return scoped[-1]
    chosen = getattr(_state, "default", None)
    if chosen is not None:
        return chosen
    return Device("cuda:0") if _cuda_count() else Device("cpu")


def set_device(ident) -> None:
    """Make ``ident`` the default device (Warp's ``wp.set_device``)."""
    _state.default = _parse_device(ident)


class ScopedDevice:
    """``with wp.ScopedDevice("cpu"):`` makes ``device`` the default inside the block."""

    def __init__(self, device):
        self.device = _parse_device(device)

    def __enter__(self):
        _state.devices = getattr(_state, "devices", []) + [self.device]
        return self.device

    def __exit__(self, *exc):
        _state.devices = _state.devices[:-1]


def get_devices() -> list[Device]:
    """Every device: ``"cpu"`` and one per usable GPU."""
    return [Device("cpu")] + [Device(f"cuda:{k}") for k in range(_cuda_count())]


def get_cuda_device_count() -> int:
    """How many GPUs warp_lab can launch on."""
    return _cuda_count()


def is_cuda_available() -> bool:
    """Whether a GPU is usable."""
    return _cuda_count() > 0


def is_cpu_available() -> bool:
    """Always True: ``"cpu"`` is warp_lab's simulator."""
    return True


def get_preferred_device() -> Device:
    """``"cuda:0"`` when a GPU is usable, else ``"cpu"``."""
    return Device("cuda:0") if _cuda_count() else Device("cpu")


# -- arrays ----------------------------------------------------------------------------

def _dtype_of(dtype, data=None):
    """A Warp ``dtype`` argument as a warp_lab type (``typing.Any``: from ``data``)."""
    if dtype is None:
        if data is None:
            return T.float32
        if isinstance(data, Array):
            return data.dtype if isinstance(data, array) else T.scalar_from_numpy(data.dtype)
        return dtype_from_numpy(np.asarray(data).dtype)
    return T.as_type(dtype)


def _annotation_dtype(dtype):
    """An annotation's element type: ``typing.Any`` is :data:`~warp_lab.lang.types.ANY`
    (a generic array)."""
    return T.ANY if dtype is typing.Any else _dtype_of(dtype)


def _element_dims(dtype) -> int:
    return 1 if isinstance(dtype, T.Vector) else 2 if isinstance(dtype, T.Matrix) else 0


class array(Array):
    """``wp.array``: a kernel-parameter annotation, or an array of host data.

    As an annotation (no ``data``, ``shape`` or ``ptr``): ``wp.array(dtype=wp.float32,
    ndim=2)`` and ``wp.array[wp.float32]`` are warp_lab's ``ArrayType``. Otherwise it
    makes an array as Warp's ``wp.array(data, dtype, shape, device=...)``: ``data`` a
    list, tuple or numpy array (copied); ``dtype`` Warp's (``typing.Any``: numpy's
    dtype of the data); ``shape`` without ``data`` gives zeros. ``.shape`` leaves out a
    vector or matrix element's own extents, as Warp's does (``wp.zeros(4,
    dtype=wp.vec3).shape == (4,)``); ``.numpy()`` has them (``(4, 3)``).

    Raises:
        UnsupportedFeatureError: ``requires_grad=True`` or ``grad=`` (autodiff).
        TypeError, ValueError: as :func:`warp_lab.array` for data it cannot hold.
    """

    #: what a call in a kernel is (``compiler.typing_exprs``: a located "not yet" error):
    #: Warp's in-kernel ``wp.array(ptr=..., shape=..., dtype=...)``
    wl_kernel_not_yet = "wp.array(ptr=..., shape=..., dtype=...) in a kernel (a view of " \
                        "memory at an address)"

    _fixed_ndim: int | None = None

    def __new__(cls, data=None, dtype=typing.Any, shape=None, strides=None, ptr=None,
                capacity=None, device=None, pinned=False, copy=True, owner=False,
                deleter=None, ndim=None, grad=None, requires_grad=False):
        if data is None and shape is None and ptr is None:
            return T.array(_annotation_dtype(dtype), ndim or cls._fixed_ndim or 1)
        return super().__new__(cls)

    def __class_getitem__(cls, dtype):
        return T.array(_annotation_dtype(dtype), cls._fixed_ndim or 1)

    def __init__(self, data=None, dtype=typing.Any, shape=None, strides=None, ptr=None,
                 capacity=None, device=None, pinned=False, copy=True, owner=False,
                 deleter=None, ndim=None, grad=None, requires_grad=False):
        if requires_grad or grad is not None:
            raise UnsupportedFeatureError(
                "wp.array(requires_grad=True) is a Warp feature (autodiff: gradients, "
                "wp.Tape) that warp_lab does not have yet")
        if ptr is not None:
            raise UnsupportedFeatureError("wp.array(ptr=...) (an array over foreign "
                                          "memory) is a Warp feature warp_lab does not "
                                          "have yet")
        dt = _dtype_of(None if dtype is typing.Any else dtype, data)
        if isinstance(data, Array):
            data = data.numpy()
        if isinstance(data, (list, tuple)) and data and isinstance(data[0], Array):
            data = [d.numpy() for d in data]
        dev = _parse_device(device)
        if data is None:
            shp = (shape,) if np.isscalar(shape) else tuple(shape)
            host = np.zeros(shp + _elem_shape(dt), dtype=_np_dtype(dt))
        elif isinstance(dt, T.StructType):
            host = _struct_host(data, dt, shape)
        else:
            host = _arrays.array(data, dtype=dt, shape=shape)._host_array()
        super().__init__(host, dev.lab_name)
        self._wp_dtype = dt
        self._wp_device = dev

    # Warp's view of the array: outer extents, its own dtype and device
    @property
    def dtype(self):
        return self._wp_dtype

    @property
    def device(self) -> Device:
        return self._wp_device

    @device.setter
    def device(self, value):  # (Array.__init__ stores warp_lab's device name)
        self._lab_device = value

    @property
    def ndim(self) -> int:
        return self._host.ndim - _element_dims(self._wp_dtype)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._host.shape[:self.ndim])

    @property
    def strides(self) -> tuple[int, ...]:
        return tuple(self._host.strides[:self.ndim])

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def capacity(self) -> int:
        return self._host.nbytes

    @property
    def is_contiguous(self) -> bool:
        return bool(self._host.flags.c_contiguous)

    def __len__(self) -> int:
        return self.shape[0]

    def zero_(self) -> None:
        """Set every element to zero."""
        self.numpy()[...] = 0

    def fill_(self, value) -> None:
        """Set every element to ``value`` (a scalar, or a vector/matrix for such arrays)."""
        self.numpy()[...] = np.asarray(value, dtype=self._host.dtype)

    def assign(self, src) -> None:
        """Copy ``src`` (an array, numpy array or list of this shape) into this array."""
        self.numpy()[...] = np.asarray(src.numpy() if isinstance(src, Array) else src)

    def list(self) -> list:
        """The elements as a Python list (vectors as lists)."""
        return self.numpy().tolist()

    def to(self, device) -> "array":
        """A copy on ``device`` (this array when it is there already)."""
        dev = _parse_device(device)
        return self if dev == self._wp_device else clone(self, device=dev)

    def flatten(self) -> "array":
        """A 1-D copy of the elements."""
        n = self.size
        return array(self.numpy().reshape((n,) + _elem_shape(self._wp_dtype)),
                     dtype=self._wp_dtype, device=self._wp_device)

    def reshape(self, shape) -> "array":
        """A copy with the outer extents ``shape``."""
        shape = (shape,) if np.isscalar(shape) else tuple(shape)
        return array(self.numpy().reshape(shape + _elem_shape(self._wp_dtype)),
                     dtype=self._wp_dtype, device=self._wp_device)

    def __str__(self) -> str:
        return str(self.numpy())

    def __repr__(self) -> str:
        return (f"wp.array({np.array2string(self.numpy(), threshold=20)}, "
                f"dtype={self._wp_dtype.name}, device={self._wp_device.alias!r})")


def _struct_host(data, dt: "T.StructType", shape) -> np.ndarray:
    """Host memory of an array of structs: numpy structured elements of
    ``dt.numpy_dtype()``, as Warp's ``wp.array([s0, s1], dtype=S)`` (each instance's
    ``numpy_value()``) or from a structured numpy array of that dtype.

    Raises:
        TypeError: an element that is no instance of ``dt``, a structured array of
            another dtype, or a struct with array fields (host data cannot hold them).
    """
    from warp_lab.lang.structs import StructInstance

    npdt = dt.numpy   # (TypeError for a struct with an array field)
    if isinstance(data, np.ndarray):
        if data.dtype != npdt:
            raise TypeError(f"an array of struct {dt.name} takes numpy data of dtype "
                            f"{npdt}, got {data.dtype}")
        host = data.copy()
    else:
        items = list(data)
        for k, s in enumerate(items):
            if not isinstance(s, StructInstance) or s._type != dt:
                raise TypeError(f"element {k} of the data is {type(s).__name__}, not a "
                                f"struct {dt.name} instance")
        host = np.array([s.numpy_value() for s in items], dtype=npdt)
    if shape is not None:
        host = host.reshape((shape,) if np.isscalar(shape) else tuple(shape))
    return host


def _elem_shape(dt) -> tuple[int, ...]:
    if isinstance(dt, T.Vector):
        return (dt.n,)
    if isinstance(dt, T.Matrix):
        return (dt.rows, dt.cols)
    return ()


def _np_dtype(dt) -> np.dtype:
    return dt.elem.numpy if isinstance(dt, (T.Vector, T.Matrix)) else dt.numpy


class array1d(array):
    """``wp.array1d[T]`` / ``wp.array1d(dtype=T)``: a 1-D array annotation."""
    _fixed_ndim = 1


class array2d(array):
    """``wp.array2d[T]`` / ``wp.array2d(dtype=T)``: a 2-D array annotation."""
    _fixed_ndim = 2


class array3d(array):
    """``wp.array3d[T]``: a 3-D array annotation."""
    _fixed_ndim = 3


class array4d(array):
    """``wp.array4d[T]``: a 4-D array annotation."""
    _fixed_ndim = 4


def _shape(shape) -> tuple[int, ...]:
    return (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)


def _filled(shape, value, dtype, device) -> array:
    dt = _dtype_of(dtype if dtype is not typing.Any else None)
    host = np.empty(_shape(shape) + _elem_shape(dt), dtype=_np_dtype(dt))
    host[...] = value
    return array(host, dtype=dt, device=device)


def zeros(shape=0, dtype=float, device=None, requires_grad=False, pinned=False) -> array:
    """A zero-filled array (Warp's ``wp.zeros``; ``dtype`` default float32).

    Called in a kernel or ``@wp.func`` it is Warp's in-kernel ``zeros(shape, dtype)``
    (``warp/_src/builtins.py``, native ``fixedarray_t``): a zero-filled per-thread array
    of a compile-time ``shape`` (``compiler.typing_special.type_fixedarray_zeros``, which
    :attr:`wl_device_form` names).
    """
    _no_grad(requires_grad)
    return _filled(shape, 0, dtype, device)


#: the compiler types ``wp.zeros(...)`` in a kernel as this form (a zero-filled
#: ``wl.local_array``; ``compiler.typing_builtins.type_call``)
zeros.wl_device_form = "fixedarray_zeros"


def ones(shape=0, dtype=float, device=None, requires_grad=False, pinned=False) -> array:
    """An array of ones."""
    _no_grad(requires_grad)
    return _filled(shape, 1, dtype, device)


def empty(shape=0, dtype=float, device=None, requires_grad=False, pinned=False) -> array:
    """An array Warp leaves uninitialised; warp_lab zero-fills it, so runs repeat."""
    _no_grad(requires_grad)
    return _filled(shape, 0, dtype, device)


def full(shape=0, value=0, dtype=typing.Any, device=None, requires_grad=False,
         pinned=False) -> array:
    """An array filled with ``value``; ``dtype`` Any: int32 for an int, float32 for a
    float, bool for a bool, the vector type of a vector (Warp's rule)."""
    _no_grad(requires_grad)
    if dtype is typing.Any:
        if isinstance(value, (bool, np.bool_)):
            dtype = T.bool_
        elif isinstance(value, (int, np.integer)):
            dtype = T.int32 if isinstance(value, int) else T.scalar_from_numpy(value.dtype)
        elif isinstance(value, (float, np.floating)):
            dtype = T.float32 if isinstance(value, float) else T.scalar_from_numpy(value.dtype)
        else:
            v = np.asarray(value)
            elem = T.float32 if v.dtype.kind == "f" else T.int32
            if v.ndim == 1:
                from warp_lab.compiler.typing_exprs import vector_of
                dtype = vector_of(elem, v.shape[0])
            else:
                from warp_lab.compiler.typing_exprs import matrix_of
                dtype = matrix_of(elem, *v.shape)
    return _filled(shape, value, dtype, device)


def _no_grad(requires_grad) -> None:
    if requires_grad:
        raise UnsupportedFeatureError("requires_grad=True is a Warp feature (autodiff: "
                                      "gradients, wp.Tape) that warp_lab does not have yet")


def zeros_like(src, device=None, requires_grad=None, pinned=None) -> array:
    """Zeros of ``src``'s shape and dtype."""
    return zeros(src.shape, dtype=src.dtype, device=device or src.device)


def ones_like(src, device=None, requires_grad=None, pinned=None) -> array:
    """Ones of ``src``'s shape and dtype."""
    return ones(src.shape, dtype=src.dtype, device=device or src.device)


def full_like(src, value, device=None, requires_grad=None, pinned=None) -> array:
    """``value`` in ``src``'s shape and dtype."""
    return full(src.shape, value, dtype=src.dtype, device=device or src.device)


def empty_like(src, device=None, requires_grad=None, pinned=None) -> array:
    """An array of ``src``'s shape and dtype (zero-filled here)."""
    return zeros_like(src, device=device)


def clone(src, device=None, requires_grad=None, pinned=None) -> array:
    """A copy of ``src`` (on ``device``, else ``src``'s)."""
    return array(src.numpy().copy(), dtype=src.dtype, device=device or src.device)


def copy(dest, src, dest_offset: int = 0, src_offset: int = 0, count: int = 0,
         stream=None) -> None:
    """Copy ``count`` elements (0: all of ``src``) of ``src`` from ``src_offset`` into
    ``dest`` from ``dest_offset``, both counted in elements of the flattened arrays.

    Raises:
        ValueError: the arrays' dtypes differ, or the range runs past either array.
    """
    d, s = dest.numpy(), src.numpy()
    edims = _element_dims(dest.dtype)
    dflat = d.reshape((-1,) + d.shape[d.ndim - edims:])
    sflat = s.reshape((-1,) + s.shape[s.ndim - edims:])
    n = count or len(sflat) - src_offset
    if dest.dtype != src.dtype:
        raise ValueError(f"wp.copy: dtypes differ ({src.dtype!r} to {dest.dtype!r})")
    if src_offset + n > len(sflat) or dest_offset + n > len(dflat):
        raise ValueError(f"wp.copy: {n} elements from {src_offset} / to {dest_offset} run "
                         f"past the arrays ({len(sflat)} and {len(dflat)} elements)")
    dflat[dest_offset:dest_offset + n] = sflat[src_offset:src_offset + n]


def from_numpy(arr, dtype=None, shape=None, device=None, requires_grad=False) -> array:
    """An array holding a copy of the numpy array ``arr``."""
    _no_grad(requires_grad)
    return array(np.asarray(arr), dtype=dtype if dtype is not None else typing.Any,
                 shape=shape, device=device)


def dtype_from_numpy(numpy_dtype):
    """The Warp scalar type of a numpy dtype (``np.float32`` -> ``wp.float32``)."""
    return T.scalar_from_numpy(numpy_dtype)


def dtype_to_numpy(warp_dtype):
    """The numpy dtype of a Warp scalar type."""
    return T.as_type(warp_dtype).numpy.type


# -- module options, launches ----------------------------------------------------------

_MODULE_OPTIONS: dict[str, dict] = {}


def set_module_options(options: dict, module=None) -> None:
    """Warp's ``wp.set_module_options``: options for the kernels of the calling module
    (or ``module``, a name or module object). Read at launch: ``"mode": "debug"``
    compiles with ``debug=True``, ``"fast_math"``; ``"enable_sim": True`` (the article's
    option, not Warp's) sends every launch of those kernels to the simulator. Others are
    kept and ignored (``enable_backward``, ``max_unroll``, ``lineinfo``...)."""
    name = _module_name(module, sys._getframe(1))
    _MODULE_OPTIONS.setdefault(name, {}).update(options)


def get_module_options(module=None) -> dict:
    """The options :func:`set_module_options` gave the calling module (or ``module``)."""
    return dict(_MODULE_OPTIONS.get(_module_name(module, sys._getframe(1)), {}))


def _module_name(module, frame) -> str:
    if module is None:
        return frame.f_globals.get("__name__", "__main__")
    return module if isinstance(module, str) else module.__name__


_last = threading.local()


def last_launch():
    """The :class:`warp_lab.runtime.result.LaunchResult` of this thread's latest :func:`launch` (None
    before the first): its device, metrics, findings and printed output, which Warp's
    ``wp.launch`` does not return (it returns None)."""
    return getattr(_last, "result", None)


def launch(kernel, dim, inputs=(), outputs=(), adj_inputs=(), adj_outputs=(), device=None,
           stream=None, adjoint=False, record_tape=True, record_cmd=False, max_blocks=0,
           block_dim=256):
    """Warp's ``wp.launch``: run ``kernel`` over ``dim`` threads with ``inputs`` then
    ``outputs`` as its arguments, on ``device`` (None: :func:`get_device`; ``"cpu"`` is
    the simulator, with its checks), and return None as Warp does. The launch's
    :class:`warp_lab.runtime.result.LaunchResult` is :func:`last_launch`; what the kernel printed is
    written to ``sys.stdout``, as Warp's CPU device and a GPU's printf buffer write it.

    Args:
        kernel: a ``@wp.kernel`` (or ``@wl.kernel``).
        dim: threads, an int or a tuple of up to 3 ints (``wp.tid()``'s extents).
        block_dim: threads per block (Warp's default 256).
        record_cmd: when True, nothing runs: a :class:`Launch` is returned whose
            ``launch()`` runs it.

    Raises:
        UnsupportedFeatureError: ``adjoint=True`` or adjoint arguments (autodiff).
        LaunchError, KernelCompileError: as :func:`warp_lab.launch`.
    """
    if adjoint or adj_inputs or adj_outputs:
        raise UnsupportedFeatureError("wp.launch(adjoint=True) is a Warp feature (autodiff: "
                                      "gradients, wp.Tape) that warp_lab does not have yet")
    if not isinstance(kernel, _LabKernel):
        raise LaunchError(f"wp.launch needs a @wp.kernel, got {type(kernel).__name__}")
    args = list(inputs) + list(outputs)
    dev = _parse_device(device)
    cmd = Launch(kernel, dim, args, dev, block_dim)
    if record_cmd:
        return cmd
    capture = getattr(_state, "capture", None)
    if capture is not None:
        capture.launches.append(cmd)
        return None
    cmd.launch()
    return None


class Launch:
    """A recorded launch (``wp.launch(..., record_cmd=True)``, or one captured between
    :func:`capture_begin` and :func:`capture_end`); :meth:`launch` runs it."""

    def __init__(self, kernel, dim, args, device: Device, block_dim):
        self.kernel, self.dim, self.args = kernel, dim, args
        self.device, self.block_dim = device, block_dim

    def launch(self, stream=None) -> None:
        import warp_lab as wl
        from warp_lab.warp import config

        opts = _MODULE_OPTIONS.get(getattr(self.kernel.fn, "__module__", ""), {})
        name = "sim" if opts.get("enable_sim") else self.device.lab_name
        debug = True if (config.mode == "debug" or opts.get("mode") == "debug") else None
        fast = True if opts.get("fast_math") else None
        dim = self.dim if not isinstance(self.dim, list) else tuple(self.dim)
        args = [_argument(a) for a in self.args]
        kernel = specialised(self.kernel, args)
        result = wl.launch(kernel, dim=dim, inputs=args,
                           block_dim=self.block_dim, device=name, debug=debug,
                           fast_math=fast)
        _last.result = result
        if result.printed:
            sys.stdout.write(result.printed)
            sys.stdout.flush()


def _generic(ann) -> bool:
    return ann is typing.Any or (isinstance(ann, T.ArrayType) and ann.dtype == T.ANY)


def _concrete(ann, value):
    """The annotation a generic parameter ``ann`` takes for the argument ``value``
    (Warp's rule: an array's dtype and ndim; a Python int int32, a float float32)."""
    if isinstance(value, array):
        return T.array(value.dtype, value.ndim)
    if isinstance(value, Array):
        return T.array(T.scalar_from_numpy(value.dtype), value.ndim)
    if isinstance(value, np.ndarray) and isinstance(ann, T.ArrayType):
        return T.array(T.scalar_from_numpy(value.dtype), value.ndim)
    if isinstance(value, (bool, np.bool_)):
        return T.bool_
    if isinstance(value, int):
        return T.int32
    if isinstance(value, float):
        return T.float32
    if isinstance(value, np.generic):
        return T.scalar_from_numpy(value.dtype)
    raise LaunchError(f"cannot infer a type for a generic kernel parameter from "
                      f"{type(value).__name__}; annotate the parameter")


def specialised(kernel, args):
    """``kernel`` itself, or, when some of its parameters are generic (``typing.Any``,
    ``wp.array(dtype=typing.Any)``), the kernel specialised for the types of ``args``:
    one per set of argument types (Warp's generic kernels), each a kernel of its own
    (its own cache key: the annotations are in it), kept on ``kernel``."""
    import types as _pytypes

    anns = dict(getattr(kernel.fn, "__annotations__", {}))
    names = kernel.fn.__code__.co_varnames[:kernel.fn.__code__.co_argcount]
    if not any(_generic(anns.get(n)) for n in names):
        return kernel
    concrete = dict(anns)
    for n, value in zip(names, args):
        if _generic(anns.get(n)):
            concrete[n] = _concrete(anns[n], value)
    key = tuple(repr(concrete.get(n)) for n in names)
    cache = kernel.__dict__.setdefault("_specialisations", {})
    if key not in cache:
        fn = kernel.fn
        clone = _pytypes.FunctionType(fn.__code__, fn.__globals__, fn.__name__,
                                      fn.__defaults__, fn.__closure__)
        clone.__annotations__ = concrete
        clone.__module__ = fn.__module__
        cache[key] = type(kernel).__new__(type(kernel))
        _LabKernel.__init__(cache[key], clone, kernel.source, dict(kernel.options),
                            dialect=kernel.dialect)
        if hasattr(kernel, "key"):
            cache[key].key = kernel.key
    return cache[key]


def _argument(value):
    """A Warp launch argument as :func:`warp_lab.launch` takes it."""
    if isinstance(value, (list, tuple)) and not isinstance(value, Array):
        return np.asarray(value)
    return value


def synchronize() -> None:
    """Warp's ``wp.synchronize``: warp_lab's launches return when they are done (a GPU
    launch synchronises its stream), so there is nothing left to wait for."""


def synchronize_device(device=None) -> None:
    """As :func:`synchronize`, for one device."""


_initialised = False


def init() -> None:
    """Warp's ``wp.init``: nothing to set up (warp_lab finds devices when first asked)."""
    global _initialised
    _initialised = True


def clear_kernel_cache() -> None:
    """Warp's ``wp.clear_kernel_cache()`` (warp/_src/context.py: the kernel cache folder
    emptied, so every kernel compiles again): warp_lab's compile cache forgets every entry,
    in memory and in its per-user folder (:meth:`~warp_lab.compiler.cache.KernelCache.
    remove_all`, which removes only the files the cache wrote)."""
    from warp_lab.compiler.cache import default_cache

    default_cache().remove_all()


class ScopedTimer:
    """``with wp.ScopedTimer("name"):`` prints ``name took 1.23 ms`` at the end (Warp's
    format, ``warp/_src/utils.py``); ``elapsed`` is the time in milliseconds."""

    indent = -1

    def __init__(self, name, active=True, print=True, detailed=False, dict=None,
                 use_nvtx=False, color="rapids", synchronize=False, cuda_filter=None,
                 report_func=None, skip_tape=False):
        self.name, self.active, self.print = name, active, print
        self.dict = dict
        self.elapsed = 0.0

    def __enter__(self):
        ScopedTimer.indent += 1
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.elapsed = (time.perf_counter() - self._start) * 1000.0
        if self.dict is not None:
            self.dict.setdefault(self.name, []).append(self.elapsed)
        if self.active and self.print:
            sys.stdout.write(f"{'  ' * ScopedTimer.indent}{self.name} took "
                             f"{self.elapsed:.2f} ms\n")
        ScopedTimer.indent -= 1


# -- graph capture -----------------------------------------------------------------------

class Graph:
    """What :func:`capture_end` returns: the launches recorded since
    :func:`capture_begin`, which :func:`capture_launch` runs again in order (a recorded
    replay; on a GPU each launch runs through :func:`warp_lab.launch`, not a CUDA graph)."""

    def __init__(self, device: Device):
        self.device = device
        self.launches: list[Launch] = []

    def __repr__(self) -> str:
        return f"<wp.Graph of {len(self.launches)} launch(es) on {self.device}>"


def capture_begin(device=None, stream=None, force_module_load=None, external=False) -> None:
    """Start recording launches instead of running them (Warp's CUDA graph capture).

    Raises:
        RuntimeError: a capture is already under way.
    """
    if getattr(_state, "capture", None) is not None:
        raise RuntimeError("wp.capture_begin: a graph capture is already under way "
                           "(call wp.capture_end first)")
    _state.capture = Graph(_parse_device(device))


def capture_end(device=None, stream=None) -> Graph:
    """Stop recording and return the :class:`Graph` of the launches recorded.

    Raises:
        RuntimeError: no capture was begun.
    """
    graph = getattr(_state, "capture", None)
    if graph is None:
        raise RuntimeError("wp.capture_end: no graph capture was begun "
                           "(call wp.capture_begin first)")
    _state.capture = None
    return graph


def capture_launch(graph: Graph, stream=None) -> None:
    """Run the launches of ``graph`` in the order they were recorded."""
    for cmd in graph.launches:
        cmd.launch()


class ScopedCapture:
    """``with wp.ScopedCapture() as capture:`` records the launches of the block;
    ``capture.graph`` is the :class:`Graph` for :func:`capture_launch`."""

    def __init__(self, device=None, stream=None, force_module_load=None, external=False):
        self.device = device
        self.graph = None

    def __enter__(self):
        capture_begin(self.device)
        return self

    def __exit__(self, *exc):
        self.graph = capture_end(self.device)
