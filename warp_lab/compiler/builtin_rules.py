"""Every builtin's implementation: its typing rule and its lowering, one :class:`Impl`.

A builtin is one record in :mod:`warp_lab.lang.builtins` (name, signature, doc, group and
``impl``, the name of its implementation here), in the way NVIDIA Warp's ``add_builtin``
names its native function (``native_func``, ``warp/_src/builtins.py``); ``lang/`` sits
below the compiler (``tests/test_import_graph.py``), so the record names the pair and this
table holds it. Each group module (``builtin_ints.py``, ...) keeps the typing rule and the
code generator of its builtins side by side and lists them in its ``IMPLS``.

- a typing rule is ``type(typer, node, name) -> type``: it checks the ``ast.Call``'s
  arguments, stamps ``node.wl_call`` (a ``CallTarget`` whose name is the builtin's) and
  returns the call's type (:mod:`warp_lab.compiler.typing_builtins`);
- a lowering is ``lower(lowerer, node, call) -> value``: the call's LLVM value, or None
  (:mod:`warp_lab.compiler.lower_builtins`).

Adding a builtin (docs/architecture.md, "Where to add things"): its record in
``lang/builtins.py`` naming an ``impl``; a new implementation in the group module; then
``python -m warp_lab.lang.builtin_docs --update`` for the docs' table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from warp_lab.compiler import builtin_ints
from warp_lab.compiler import lower_builtins as L
from warp_lab.compiler import typing_builtins as T
from warp_lab.compiler.typing_rules import NONE
from warp_lab.lang import builtins as B
from warp_lab.lang.types import int32, int64, uint32

__all__ = ["Impl", "IMPLS", "impl_of"]


@dataclass(frozen=True)
class Impl:
    """How the compiler handles the builtins whose record names it.

    Attributes:
        name: the name records give in ``impl`` (``"int_unary"``).
        type: the typing rule, ``(typer, node, builtin name) -> type``.
        lower: the code generator, ``(lowerer, node, CallTarget) -> LLVM value or None``.
    """

    name: str
    type: Callable
    lower: Callable


#: the implementations whose halves stay in typing_builtins.py and lower_builtins.py, where
#: the helpers they share live (one line per pair, so the two cannot drift apart)
CORE = {
    # indexing and synchronisation: special registers, barriers, fences
    "tid": (T._no_args(None), L._tid), "lane_id": (T._no_args(int32), L._lane_id),
    "warp_id": (T._no_args(int32), L._warp_id),
    "syncthreads": (T._no_args(NONE), L._void_intrinsic("llvm.nvvm.barrier0")),
    "syncwarp": (T._syncwarp, L._syncwarp),
    "threadfence": (T._no_args(NONE), L._fence("device")),
    "threadfence_block": (T._no_args(NONE), L._fence("block")),
    "block_vote": (T._block_vote, L._block_vote), "clock64": (T._no_args(int64), L._clock64),
    # warp: shuffles, votes, match, reduce
    "shfl": (T._shfl, L._shfl), "vote": (T._vote, L._vote),
    "activemask": (T._no_args(uint32), L._activemask), "match": (T._match, L._match),
    "reduce": (T._reduce, L._reduce),
    # math: libdevice or LLVM intrinsics
    "math1": (T._math1, L._math), "math2": (T._math2, L._math), "pow": (T._pow, L._pow),
    "abs": (T._abs_sign, L._abs), "sign": (T._abs_sign, L._sign),
    "minmax": (T._minmax, L._minmax), "clamp": (T._clamp, L._clamp), "fma": (T._fma, L._fma),
    "fp_class": (T._fp_class, L._fp_class),
    # bit casts
    "bitcast": (T._bitcast, L._bitcast), "bitcast_fixed": (T._bitcast_fixed, L._bitcast),
    # atomics, vectors and matrices
    "atomic": (T._atomic, L._atomic), "vecop": (T._vecop, L._vecop),
    "matrix_from_vecs": (T._matrix_from_vecs, L._matrix_from_vecs),
    "argminmax": (T._argminmax, L._argminmax), "div_approx": (T._div_approx, L._div_approx),
    # misc: select, printf, arrays of shared or local memory
    "select": (T._select, L._select), "printf": (T.type_printf, L._printf),
    "shared_array": (T.type_alloc_array, L._shared_array),
    "local_array": (T.type_alloc_array, L._local_array),
    "dynamic_shared_array": (T.type_dynamic_shared_array, L._dynamic_shared_array),
}

IMPLS: dict[str, Impl] = {}
for _table in (CORE, builtin_ints.IMPLS):
    for _name, (_type, _lower) in _table.items():
        if _name in IMPLS:
            raise ValueError(f"builtin implementation {_name!r} is defined twice")
        IMPLS[_name] = Impl(_name, _type, _lower)


def impl_of(name: str) -> Impl:
    """The implementation of builtin ``name`` (a key of ``lang.builtins.BUILTINS``).

    Raises:
        KeyError: ``name`` is no builtin, or its record names no implementation (a test,
            ``test_every_builtin_has_a_typing_rule_and_a_code_generator``, keeps every
            record's ``impl`` in :data:`IMPLS`).
    """
    return IMPLS[B.BUILTINS[name].impl]
