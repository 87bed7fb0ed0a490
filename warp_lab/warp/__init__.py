"""``import warp_lab.warp as wp``: NVIDIA Warp's names over warp_lab's compiler and simulator.

Code written for NVIDIA Warp (warp-lang 1.19) runs with its import line changed::

    import warp_lab.warp as wp

    @wp.kernel
    def add(a: wp.array(dtype=wp.float32), b: wp.array(dtype=float), c: wp.array[float]):
        i = wp.tid()
        c[i] = a[i] + b[i]

    c = wp.zeros(3, dtype=wp.float32)
    wp.launch(add, dim=3, inputs=[a, b, c], device="cpu")   # "cpu": warp_lab's simulator

Kernels and functions decorated here are of the Warp *dialect*
(:attr:`warp_lab.lang.kernel.Kernel.dialect` is ``"warp"``): an integer ``/`` truncates and
``%`` takes the dividend's sign as in C, a float ``%`` is ``fmod``, ``print`` writes a
float with ``%g`` (warp-lang's ``builtin.h``); ``@wl.kernel`` keeps Python's. They are
warp_lab kernels in every other way: ``wl.compile`` shows their LLVM IR, PTX and SASS,
``%%warp_kernel`` cells take them, and ``wp.launch`` returns None as Warp does while
:func:`last_launch` gives its :class:`warp_lab.runtime.result.LaunchResult` (findings, metrics).

A Warp name warp_lab does not have yet (meshes, volumes, BVHs, ``wp.Tape``...) is an
:class:`~warp_lab.lang.kernel.Unsupported` value: in a kernel a located
``KernelCompileError`` naming the feature, on the host an ``UnsupportedFeatureError``.
``docs/language.md`` ("The Warp namespace") lists every difference from Warp.
"""

from __future__ import annotations

import builtins as _builtins
import difflib as _difflib
import math as _math
import typing as _typing

from warp_lab.lang import builtins as _B
from warp_lab.lang import types as _T
from warp_lab.lang.kernel import Func as _Func
from warp_lab.lang.kernel import FuncOverloads as _FuncOverloads
from warp_lab.lang.kernel import Kernel as _LabKernel
from warp_lab.lang.kernel import STATIC as _STATIC
from warp_lab.lang.kernel import Unsupported as _Unsupported
from warp_lab.warp import config, types  # noqa: F401  (wp.config, wp.types)
from warp_lab.warp._catalog import WARP_NAMES as _WARP_NAMES
from warp_lab.warp._catalog import feature_of as _feature_of
from warp_lab.warp._funcs import (add, block_dim, cw_div, cw_mul, degrees, determinant,  # noqa: F401
                                  div, expect_eq, inverse, inverse_approx,
                                  expect_near, expect_neq, floordiv, frac, lerp, mod, mul,
                                  neg, nonzero, norm_huber, norm_l1, norm_l2,
                                  norm_pseudo_huber, pos, smooth_normalize, radians, rand_init, randf, randi, randn,
                                  randu, select, sign, smoothstep, step, unot, where)
from warp_lab.warp._random import (curlnoise, noise, pnoise, poisson, sample_cdf,  # noqa: F401
                                   sample_triangle, sample_unit_cube, sample_unit_disk,
                                   sample_unit_hemisphere, sample_unit_hemisphere_surface,
                                   sample_unit_hypercube, sample_unit_ring, sample_unit_sphere,
                                   sample_unit_sphere_surface, sample_unit_square)
from warp_lab.warp._host import (Device, Graph, Launch, ScopedCapture, ScopedDevice,  # noqa
                                 ScopedTimer, array, array1d, array2d, array3d, array4d,
                                 capture_begin, capture_end, capture_launch,
                                 clear_kernel_cache, clone, copy,
                                 dtype_from_numpy, dtype_to_numpy, empty, empty_like,
                                 from_numpy, full, full_like, get_cuda_device_count,
                                 get_device, get_devices, get_module_options,
                                 get_preferred_device, init, is_cpu_available,
                                 is_cuda_available, last_launch, launch, ones, ones_like,
                                 set_device, set_module_options, synchronize,
                                 synchronize_device, zeros, zeros_like)

__version__ = "1.19.0"  # the warp-lang version whose names and semantics this follows

# -- scalar, vector and matrix types (warp/_src/types.py) --------------------------------
float16, float32, float64 = _T.float16, _T.float32, _T.float64
bfloat16 = _T.bfloat16   # scalars, arrays, casts, + - * / % and comparisons (compiler/bf16)
int8, int16, int32, int64 = _T.int8, _T.int16, _T.int32, _T.int64
uint8, uint16, uint32, uint64 = _T.uint8, _T.uint16, _T.uint32, _T.uint64
bool = _T.bool_  # noqa: A001  (wp.bool)
#: ``wp.float(x)`` in a kernel: Warp's ``float`` builtin, a float32 conversion (Warp's
#: codegen looks ``wp.<name>`` up among its builtins; its host module has no ``float``)
float = _T.float32  # noqa: A001

vec2 = vec2f = _T.vec2
vec3 = vec3f = _T.vec3
vec4 = vec4f = _T.vec4
vec2d, vec3d, vec4d = _T.vec2d, _T.vec3d, _T.vec4d
vec2i, vec3i, vec4i = _T.vec2i, _T.vec3i, _T.vec4i
vec2ui, vec3ui, vec4ui = _T.vec2ui, _T.vec3ui, _T.vec4ui
vec2h, vec3h, vec4h = _T.vec2h, _T.vec3h, _T.vec4h
mat22 = mat22f = _T.mat22
mat33 = mat33f = _T.mat33
mat44 = mat44f = _T.mat44
mat22d, mat33d, mat44d = _T.mat22d, _T.mat33d, _T.mat44d

# -- quaternions, transformations, spatial vectors (types.py, native/quat.h, spatial.h) -----
quat = quatf = _T.quat
quatd, quath = _T.quatd, _T.quath
transform = transformf = _T.transform
transformd, transformh = _T.transformd, _T.transformh
spatial_vector = spatial_vectorf = _T.spatial_vector
spatial_vectord, spatial_vectorh = _T.spatial_vectord, _T.spatial_vectorh
spatial_matrix = spatial_matrixf = _T.spatial_matrix
spatial_matrixd, spatial_matrixh = _T.spatial_matrixd, _T.spatial_matrixh
quaternion, transformation = _T.quaternion, _T.transformation
quat_identity, transform_identity = _T.quat_identity, _T.transform_identity
from warp_lab.lang.spatial import (quat_between_vectors, quat_from_axis_angle,  # noqa: E402
                                   quat_from_matrix, quat_inverse, quat_rotate,
                                   quat_rotate_inv, quat_rpy, quat_slerp, quat_to_axis_angle,
                                   quat_to_matrix, spatial_bottom, spatial_cross,
                                   spatial_cross_dual, spatial_dot, spatial_top,
                                   transform_get_rotation, transform_get_translation,
                                   transform_inverse, transform_multiply, transform_point,
                                   transform_set_rotation, transform_set_translation,
                                   transform_vector, quat_to_rpy, quat_from_euler,
                                   transform_twist, transform_wrench, transform_from_matrix,
                                   transform_to_matrix, quat_twist, quat_twist_angle,
                                   quat_twist_angle_signed, velocity_at_point,
                                   quat_to_euler)

# -- constants (warp/_src/builtins.py: wp.pi, wp.e, ...) -----------------------------------
pi = PI = _math.pi
half_pi = HALF_PI = _math.pi / 2
tau = TAU = _math.tau
e = E = _math.e
inf = INF = _math.inf
nan = NAN = _math.nan
ln2 = LN2 = _math.log(2.0)
ln10 = LN10 = _math.log(10.0)
log2e = LOG2E = 1.0 / _math.log(2.0)
log10e = LOG10E = 1.0 / _math.log(10.0)
phi = PHI = (1.0 + _math.sqrt(5.0)) / 2.0

# -- builtins warp_lab has under the same name and signature ---------------------------------
tid = _B.tid
printf = _B.printf
abs = _B.abs  # noqa: A001
min = _B.min  # noqa: A001
max = _B.max  # noqa: A001
pow = _B.pow  # noqa: A001
round = _B.round  # noqa: A001
clamp, isnan, isinf, isfinite = _B.clamp, _B.isnan, _B.isinf, _B.isfinite
sqrt, cbrt, exp, log, log2, log10 = _B.sqrt, _B.cbrt, _B.exp, _B.log, _B.log2, _B.log10
sin, cos, tan, asin, acos, atan, atan2 = _B.sin, _B.cos, _B.tan, _B.asin, _B.acos, _B.atan, \
    _B.atan2
sinh, cosh, tanh = _B.sinh, _B.cosh, _B.tanh
erf, erfc = _B.erf, _B.erfc
floor, ceil, trunc, rint, copysign = _B.floor, _B.ceil, _B.trunc, _B.rint, _B.copysign
dot, cross, length, length_sq, normalize = _B.dot, _B.cross, _B.length, _B.length_sq, \
    _B.normalize
transpose, outer = _B.transpose, _B.outer
matrix_from_rows, matrix_from_cols = _B.matrix_from_rows, _B.matrix_from_cols
argmin, argmax, div_approx = _B.argmin, _B.argmax, _B.div_approx
atomic_add, atomic_sub, atomic_min, atomic_max = _B.atomic_add, _B.atomic_sub, \
    _B.atomic_min, _B.atomic_max
atomic_and, atomic_or, atomic_xor = _B.atomic_and, _B.atomic_or, _B.atomic_xor
atomic_cas, atomic_exch = _B.atomic_cas, _B.atomic_exch
bit_count = _B.popc
print = _builtins.print  # noqa: A001  (wp.print: in a kernel, Python's print, Warp's formats)


def fixedarray(dtype=float, shape=None) -> _T.ArrayType:
    """Warp's ``wp.fixedarray(dtype, shape)`` annotation (``warp/_src/types.py``
    ``fixedarray``): the type of ``wp.zeros(shape, dtype)`` made in a kernel, a per-thread
    array of static ``shape`` (an int or a tuple of 1 to 3 ints), as a device function's
    ``-> wp.fixedarray(shape=(2, 3), dtype=int)``.

    Raises:
        TypeError: no ``shape`` (Warp's shapeless ``fixedarray`` is a template warp_lab
            does not have), or a ``dtype`` that is no kernel-language type.
        ValueError: a shape that is not 1 to 3 positive ints.
    """
    if shape is None:
        raise TypeError("wp.fixedarray needs its shape: wp.fixedarray(shape=(2, 3), dtype=int)")
    shp = (shape,) if isinstance(shape, int) else tuple(shape)
    if not 1 <= len(shp) <= 3 or not all(isinstance(n, int) and n > 0 for n in shp):
        raise ValueError(f"wp.fixedarray's shape must be 1 to 3 positive ints, not {shape!r}")
    return _T.ArrayType(_T.array(dtype).dtype, len(shp), "local", shp)


# -- decorators ------------------------------------------------------------------------------

def _warp_builtin(name: str):
    """The Warp builtin function ``name`` names (``wp.NAME``, a builtin or a Warp-dialect
    function), or None: warp-lang's codegen resolves a bare call ``dot(a, b)`` or
    ``expect_eq(x, y)`` that the module does not define among its builtins (``codegen.py``,
    "lookup function name in builtins"), so kernels of ``@wp.kernel``/``@wp.func`` do too
    (``compiler.typing_exprs._lookup``)."""
    value = globals().get(name)
    return value if isinstance(value, (_B.Builtin, _Func)) else None


class Kernel(_LabKernel):
    """A kernel of the Warp dialect: ``@wp.kernel`` or ``wp.Kernel(func=f, key="name")``.

    A :class:`warp_lab.Kernel` (``wl.compile``, ``wl.launch``, ``%%warp_kernel`` take it)
    whose ``dialect`` is ``"warp"``; ``key`` is Warp's name for it (the function's name by
    default). Warp's ``module``, ``options``, ``code_transformers`` and ``source`` are
    accepted and not used.
    """

    kind_name = "wp.kernel"

    def __init__(self, func, key=None, module=None, options=None, code_transformers=None,
                 source=None):
        super().__init__(func, None, {}, dialect="warp")
        self.key = key or func.__name__

    def __repr__(self) -> str:
        return f"<wp.kernel {self.name}>"

    warp_builtin = staticmethod(_warp_builtin)


def kernel(f=None, *, enable_backward=None, module=None, launch_bounds=None,
           **warp_options):
    """Warp's ``@wp.kernel`` (also ``@wp.kernel(enable_backward=False)``): a
    :class:`Kernel` of the Warp dialect. ``enable_backward``, ``module`` and Warp's other
    decorator options (``module_options``, ``grid_stride``...) are accepted and not used
    (no autodiff is generated; warp_lab launches one thread per index)."""
    if f is None:
        return lambda fn: Kernel(fn)
    return Kernel(f)


class Function(_Func):
    """A device function of the Warp dialect (``@wp.func``)."""

    kind_name = "wp.func"
    warp_builtin = staticmethod(_warp_builtin)


def func(f=None, *, name=None, module=None):
    """Warp's ``@wp.func``: a device function of the Warp dialect, callable from kernels
    (specialised per argument types) and, on the host, as plain Python. A second
    ``@wp.func`` of the same name in the same module with other parameters is an
    overload (:class:`warp_lab.lang.kernel.FuncOverloads`): calls pick the one whose
    parameters fit, as Warp does."""
    if f is None:
        return lambda fn: func(fn)
    new = Function(f, dialect="warp")
    previous = f.__globals__.get(f.__name__)
    if isinstance(previous, _Func) and previous.dialect == "warp" and \
            getattr(previous.fn, "__qualname__", None) == f.__qualname__:
        sets = previous if isinstance(previous, _FuncOverloads) else _FuncOverloads([previous])
        return sets.add(new)
    return new


def struct(c=None, *, module=None):
    """Warp's ``@wp.struct``: the class's annotated fields (scalars, vectors, matrices,
    ``wp.array(...)`` and other structs, in order) as a
    :class:`~warp_lab.lang.types.StructType`, laid out as Warp's ``ctypes.Structure``.
    Calling it on the host gives a zeroed instance whose fields are set by attribute
    (``s = S(); s.x = 1.0; s.a = wp.zeros(n)``); ``wp.array(dtype=S)`` holds numpy
    structured elements of ``S.numpy_dtype()``; in kernels ``S()`` is a zeroed value,
    ``S(x, a, ...)`` gives every field, ``s.x = ...`` changes one (a field of a struct
    parameter too: the parameter is a copy).

    Raises:
        TypeError: a field annotation that is no field type (naming the field).
    """
    import sys

    from warp_lab.lang.structs import struct_from_class

    scope = sys._getframe(1).f_locals   # (a struct defined in a function sees its names)
    if c is None:
        return lambda cls: struct_from_class(cls, localns=scope)
    return struct_from_class(c, localns=scope)


def constant(x):
    """Warp's ``wp.constant``: ``x`` itself (a module-level number a kernel reads is a
    compile-time constant in warp_lab, and in the cache key); a vector or matrix value
    (``wp.constant(wp.vec3(1.0, 2.0, 3.0))``, a numpy array on the host) is marked
    (:class:`~warp_lab.lang.kernel.ConstantArray`, still that array on the host) so that a
    kernel captures it as a vector or matrix of its dtype."""
    import numpy as np

    from warp_lab.lang.kernel import ConstantArray
    if isinstance(x, np.ndarray) and x.ndim in (1, 2):
        return x.view(ConstantArray)
    return x


# -- what warp_lab does not have yet -----------------------------------------------------------
Tape = _Unsupported("wp.Tape", "autodiff (wp.Tape, gradients)")
static = _STATIC


def __getattr__(name: str):
    """A Warp name warp_lab does not have yet: an :class:`Unsupported` naming its
    feature (a located compile error in a kernel, ``UnsupportedFeatureError`` on the
    host); any other name: ``AttributeError`` with the closest names."""
    if name in _WARP_NAMES:
        return _Unsupported(f"wp.{name}", _feature_of(name))
    if name.startswith("__"):
        raise AttributeError(name)
    close = _difflib.get_close_matches(name, [n for n in globals() if not n.startswith("_")],
                                       n=3)
    raise AttributeError(f"module 'warp_lab.warp' has no attribute {name!r} (and Warp 1.19 "
                         "has no such name either)" +
                         (f"; did you mean {', '.join('wp.' + c for c in close)}?"
                          if close else ""))


