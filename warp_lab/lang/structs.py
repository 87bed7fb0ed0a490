"""Structs on the host: the type a decorated class declares, and its instances.

``struct_from_class`` turns a class's annotations into a
:class:`~warp_lab.lang.types.StructType` (NVIDIA Warp's ``@wp.struct``; the Warp namespace
decorates with it). Calling the type gives a :class:`StructInstance`, whose fields are set
by attribute assignment and checked as Warp's field setters check them
(``warp/_src/codegen.py``, ``_make_struct_field_setter``): a scalar takes a number, a
vector or matrix its components, an array field an array of the field's dtype and
dimensions (or None), a nested struct an instance of that struct (copied).
"""

from __future__ import annotations

import numpy as np

from warp_lab.lang import types as T

__all__ = ["StructInstance", "struct_from_class"]


def struct_from_class(cls, resolve=None, localns=None) -> T.StructType:
    """The :class:`~warp_lab.lang.types.StructType` a class's annotations declare.

    Args:
        cls: the class (its ``__annotations__``, in order, are the fields; a string
            annotation, ``from __future__ import annotations``, is evaluated in the
            class's module).
        resolve: ``annotation -> Type`` (default :func:`~warp_lab.lang.types.as_type`).
        localns: the names of the scope the class is defined in (a function's locals,
            for a struct defined there): string annotations see them too.

    Raises:
        TypeError: a field annotation that is no field type (names the field).
    """
    import sys

    resolve = resolve or T.as_type
    anns = dict(cls.__dict__.get("__annotations__", {}))
    module = sys.modules.get(cls.__module__)
    fields = []
    for name, ann in anns.items():
        if isinstance(ann, str):
            try:
                ann = eval(ann, dict(vars(module)) if module else {},  # noqa: S307
                           {**(localns or {}), **vars(cls)})
            except Exception as exc:  # noqa: BLE001 - the user's annotation
                raise TypeError(f"struct field {cls.__name__}.{name}: its annotation "
                                f"{ann!r} does not evaluate ({type(exc).__name__}: {exc})") \
                    from None
        try:
            ft = resolve(ann)
        except TypeError:
            raise TypeError(f"struct field {cls.__name__}.{name}: {ann!r} is not a field "
                            "type (a scalar, vector, matrix, array or struct)") from None
        fields.append((name, ft))
    return T.StructType(cls.__name__, tuple(fields), f"{cls.__module__}.{cls.__qualname__}")


def _zero(ft):
    if isinstance(ft, T.StructType):
        return StructInstance(ft)
    if isinstance(ft, T.ArrayType):
        return None
    if isinstance(ft, T.Vector):
        return np.zeros(ft.n, dtype=ft.elem.numpy)
    if isinstance(ft, T.Matrix):
        return np.zeros((ft.rows, ft.cols), dtype=ft.elem.numpy)
    return False if ft.is_bool else 0.0 if ft.is_float else 0


class StructInstance:
    """A host value of a struct type: ``s = Particle(); s.x = 1.0; s.v = wp.vec3(...)``.

    Fields start zero (arrays None). Setting a field checks the value as Warp's setters
    do; an unknown field name raises ``AttributeError`` naming the fields (Warp raises
    RuntimeError "Trying to set Warp struct attribute that does not exist"). A vector or
    matrix field reads as a numpy array of its components that aliases the field, as
    Warp's ctypes array does (``s.v[0] = 2.0`` changes ``s``).

    Attributes:
        _type: its :class:`~warp_lab.lang.types.StructType`.
    """

    def __init__(self, stype: T.StructType):
        object.__setattr__(self, "_type", stype)
        object.__setattr__(self, "_values", {f: _zero(ft) for f, ft in stype.fields})

    @property
    def _cls(self) -> T.StructType:   # (Warp's name for the struct type of an instance)
        return self._type

    def __getattr__(self, name):
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(f"struct {self._type.name} has no field {name!r} (its fields: "
                             f"{', '.join(values) or 'none'})")

    def __setattr__(self, name, value):
        found = self._type.field(name)
        if found is None:
            raise AttributeError(f"struct {self._type.name} has no field {name!r} (its "
                                 f"fields: {', '.join(f for f, _ in self._type.fields) or 'none'})")
        ft = found[1]
        self._values[name] = _checked(self._type.name, name, ft, value, self._values[name])

    def assign(self, other) -> None:
        """Copy every field of ``other``, an instance of the same struct type.

        Raises:
            TypeError: ``other`` is not an instance of this struct type.
        """
        if not isinstance(other, StructInstance) or other._type != self._type:
            raise TypeError(f"cannot assign {type(other).__name__} to a struct "
                            f"{self._type.name}")
        for f, ft in self._type.fields:
            setattr(self, f, getattr(other, f))

    def numpy_dtype(self) -> dict:
        """The type's :meth:`~warp_lab.lang.types.StructType.numpy_dtype`."""
        return self._type.numpy_dtype()

    def numpy_value(self) -> tuple:
        """The value as an element of a numpy array of :meth:`numpy_dtype` (a tuple)."""
        out = []
        for f, ft in self._type.fields:
            v = self._values[f]
            if isinstance(ft, T.ArrayType):
                raise TypeError(f"struct {self._type.name} has the array field {f!r}, which "
                                "host data cannot hold")
            out.append(v.numpy_value() if isinstance(ft, T.StructType) else
                       v.tolist() if isinstance(v, np.ndarray) else v)
        return tuple(out)

    def __repr__(self) -> str:
        return _repr(self, 0)

    __str__ = __repr__


def _repr(inst: StructInstance, depth: int) -> str:
    """Warp's ``struct_instance_repr_recursive`` layout: ``Name(\\n\\tfield=value,\\n)``."""
    if not inst._type.fields:
        return f"{inst._type.name}()"
    lines = [f"{inst._type.name}("]
    for f, _ in inst._type.fields:
        v = inst._values[f]
        text = _repr(v, depth + 1) if isinstance(v, StructInstance) else \
            repr(v.tolist()) if isinstance(v, np.ndarray) else repr(v)
        lines.append("\t" * (depth + 1) + f"{f}={text},")
    lines.append("\t" * depth + ")")
    return "\n".join(lines)


def _checked(sname: str, fname: str, ft, value, current):
    """``value`` as field ``fname`` (type ``ft``) stores it, or TypeError as Warp's setter."""
    where = f"struct field {sname}.{fname}"
    if isinstance(ft, T.StructType):
        if value is None:
            return StructInstance(ft)
        if not isinstance(value, StructInstance) or value._type != ft:
            raise TypeError(f"{where} expects a {ft.name} instance, got "
                            f"{type(value).__name__}")
        current.assign(value)
        return current
    if isinstance(ft, T.ArrayType):
        if value is None:
            return None
        if not (hasattr(value, "_host_array") or isinstance(value, np.ndarray)):
            raise TypeError(f"{where} expects an array, got {type(value).__name__}")
        wp_dtype = getattr(value, "_wp_dtype", None)
        if wp_dtype is not None and wp_dtype != ft.dtype:
            raise TypeError(f"{where} expects dtype {getattr(ft.dtype, 'name', ft.dtype)}, "
                            f"got {getattr(wp_dtype, 'name', wp_dtype)}")
        if wp_dtype is not None and value.ndim != ft.ndim:
            raise TypeError(f"{where} expects an array with {ft.ndim} dimension(s), got "
                            f"{value.ndim} dimension(s)")
        return value
    if isinstance(ft, (T.Vector, T.Matrix)):
        shape = (ft.n,) if isinstance(ft, T.Vector) else (ft.rows, ft.cols)
        if value is None:
            return np.zeros(shape, dtype=ft.elem.numpy)
        try:
            arr = np.asarray(value, dtype=ft.elem.numpy)
            if arr.ndim == 0:   # (Warp broadcasts a number, with a DeprecationWarning)
                arr = np.full(shape, arr)
            arr = arr.reshape(shape)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{where} expects {ft.name} ({int(np.prod(shape))} numbers), got "
                            f"{type(value).__name__}: {exc}") from None
        if isinstance(current, np.ndarray) and current.shape == shape:
            current[...] = arr    # the attribute keeps aliasing the field
            return current
        return arr.copy()
    # a scalar
    if value is None:
        return _zero(ft)
    if isinstance(value, np.generic):
        value = value.item()
    if ft.is_bool:
        if not isinstance(value, (bool, int)):
            raise TypeError(f"{where} expects a bool, got {type(value).__name__}")
        return bool(value)
    if ft.is_int:
        if isinstance(value, float) or not isinstance(value, int):
            raise TypeError(f"{where} expects an integer ({ft.name}), got "
                            f"{type(value).__name__} {value!r}")
        return value
    if not isinstance(value, (int, float)):
        raise TypeError(f"{where} expects a number ({ft.name}), got {type(value).__name__}")
    return value
