"""The typed AST: what :mod:`~warp_lab.compiler.frontend` hands to :mod:`~warp_lab.compiler.lower`.

The front end does not build a second tree. It parses each function's source
with :mod:`ast` and stamps every expression node it accepts with:

* ``node.wl_ty`` — its :class:`~warp_lab.lang.types.Type`
  (:class:`~warp_lab.compiler.typing_rules.Meta` for compile-time-only values);
* ``node.wl_const`` — its value when it is a compile-time constant (absent otherwise);
* ``node.wl_weak`` — True for untyped literals (and constant expressions of them);
* ``node.wl_call`` — for calls, what is called: a :class:`CallTarget`.

Statements get what their lowering needs (``wl_var_ty`` for stores,
``wl_range`` for ``for`` loops, ...). Lowering reads these attributes and
nothing else about types.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from warp_lab.lang.kernel import Source
from warp_lab.lang.types import Type

__all__ = ["TypedFunction", "TypedKernel", "CallTarget", "SharedDecl", "NO_CONST", "const_of",
           "has_const", "DYNAMIC_SHARED"]

NO_CONST = object()
#: the symbol of the kernel's dynamic (``extern``) shared memory, which every
#: ``wl.dynamic_shared_array`` views
DYNAMIC_SHARED = "__wl_dynamic_shared"


def const_of(node: ast.AST):
    """The folded constant of an expression node, or :data:`NO_CONST`."""
    return getattr(node, "wl_const", NO_CONST)


def has_const(node: ast.AST) -> bool:
    """Whether an expression node was folded to a constant."""
    return getattr(node, "wl_const", NO_CONST) is not NO_CONST


@dataclass
class CallTarget:
    """What a call node calls.

    Attributes:
        kind: ``"builtin"`` (a warp_lab builtin, ``name`` says which),
            ``"func"`` (a device function, ``func`` is its
            :class:`TypedFunction`), ``"cast"`` (a scalar type called on a
            value, ``type`` is the target), ``"construct"`` (a vector or
            matrix type called on components).
        name: builtin name.
        func: the specialisation called.
        type: result type of casts and constructors.
        info: builtin-specific facts the code generator needs (argument types
            to convert to, the printf format, ...).
    """

    kind: str
    name: str = ""
    func: "TypedFunction | None" = None
    type: Type | None = None
    info: dict = field(default_factory=dict)


@dataclass
class SharedDecl:
    """One ``wl.shared_array(...)`` call site: a static ``.shared`` variable.

    Attributes:
        symbol: the LLVM global's name.
        dtype: element type.
        shape: static extents.
        nbytes: size in bytes.
    """

    symbol: str
    dtype: Type
    shape: tuple
    nbytes: int


@dataclass
class TypedFunction:
    """One function (the kernel, or one specialisation of a ``@wl.func``), typed.

    Attributes:
        symbol: the LLVM/PTX name of the function.
        name: the Python name.
        source: where its text came from (file or cell, first line).
        tree: its ``ast.FunctionDef``, stamped (see the module docstring).
        params: ``(name, Type)`` of its parameters in order.
        ret: the return type (``NONE`` when it returns nothing).
        locals: every local variable's type, parameters included.
        is_kernel: True for the entry point.
        uses_tid: whether it calls ``wl.tid()``.
        written_params: names of its array parameters it may store into
            (element or component assignment, an atomic, or passing the array
            to a device function that may), directly or through an alias.
    """

    symbol: str
    name: str
    source: Source
    tree: ast.FunctionDef
    params: tuple
    ret: Type
    locals: dict
    is_kernel: bool
    uses_tid: bool = False
    written_params: frozenset = frozenset()


@dataclass
class TypedKernel:
    """The front end's product for one kernel.

    Attributes:
        name: the kernel's Python name; ``entry`` the PTX entry name.
        source: the kernel's source record.
        kernel: the typed entry function.
        funcs: the device-function specialisations it calls, callees first.
        params: ``(name, Type)`` of the user parameters.
        launch_ndim: what ``wl.tid()`` returns (1, 2 or 3; 4 in a Warp-dialect kernel,
            ``i, j, k, l = wp.tid()``).
        uses_tid: whether the kernel or a function it calls uses ``wl.tid()``
            (only then does the entry guard threads past the launch extent).
        shared: the static shared arrays, in declaration order.
        captured: ``("fn: name", repr(value))`` of every compile-time value the
            kernel and its device functions captured (module constants,
            ``wl.constant`` values, closure variables; device functions by
            source text), sorted. A cache key must include it: changing
            ``N = 256`` in another cell changes the compiled code.
        written_params: the kernel's array parameters it may write
            (:attr:`TypedFunction.written_params` of the entry).
        shared_arrays: one :class:`~warp_lab.compiler.source_map.SharedArray` per shared
            array the kernel and its device functions declare, in declaration order: a
            ``wl.shared_array``'s ``.shared`` variable, and for each
            ``wl.dynamic_shared_array`` the one ``.extern`` variable they all view
            (:data:`DYNAMIC_SHARED`). The name is ``""`` for an array not assigned to a
            plain name.
    """

    name: str
    entry: str
    source: Source
    kernel: TypedFunction
    funcs: tuple
    params: tuple
    launch_ndim: int
    uses_tid: bool
    shared: tuple
    captured: tuple = ()
    written_params: frozenset = frozenset()
    shared_arrays: tuple = ()

    @property
    def shared_bytes(self) -> int:
        """Static shared memory per block, bytes."""
        return sum(s.nbytes for s in self.shared)
