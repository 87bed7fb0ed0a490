"""Lowering of expressions: constants, loads, operators with Python semantics, conversions.

A mixin of :class:`~warp_lab.compiler.lower.FunctionLowerer`. Values are
Python-side: a scalar is an ``ir.Value``; a vector, matrix or tuple is a
Python tuple of its components (flattened row-major for matrices); an array
is an :class:`ArrayVal`; a struct is a Python tuple of its fields' values (each as
above). Aggregates therefore never appear in the IR except as kernel parameters,
array elements in memory and multi-value returns.

Operator semantics (Python's, so results match NumPy references):

* ``//`` and ``%`` floor: the quotient rounds toward -inf and the remainder
  takes the divisor's sign, for integers and floats;
* ``<<``/``>>`` by the type width or more give 0 (or -1 for negative
  ``>>``), never LLVM poison;
* ``!=`` on floats is unordered (``NaN != NaN``), the other comparisons ordered;
* integer overflow wraps (no ``nsw`` on user arithmetic; index math is ``nsw``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from llvmlite import ir

from warp_lab.compiler.artifact import INDEX_CHECK_MARK
from warp_lab.compiler.abi import llvm_memory_type, vector_access_bytes
from warp_lab.compiler.typed_ast import NO_CONST, const_of
from warp_lab.compiler.frontend_parse import compile_error
from warp_lab.compiler.typing_rules import (ConstRangeError, Meta, cast_value, float_overflow,
                                            wrap_int)
from warp_lab.lang.types import (ArrayType, Matrix, Scalar, StructType, TupleType, Vector,
                                 float32, int32, int64)

__all__ = ["ArrayVal", "ArraySlot", "ExprLowerer", "llty", "memty", "flatten", "unflatten",
           "zero_value"]

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)

def _checked_as_written(aty, n_indices: int) -> bool:
    """Whether ``index_checks`` checks an access of ``n_indices`` indices into an array of
    type ``aty`` (:class:`~warp_lab.lang.types.ArrayType`): every 2-D and wider access
    (``a[i, j]`` with ``j >= a.shape[1]`` lands inside ``a``, where memcheck's address check
    sees nothing), and every access of a ``wl.local_array``: LLVM puts all of a thread's
    local arrays (and, at ``opt=0``, its scalar variables) in one frame, the PTX
    ``__local_depot``, so past one array's end is inside another's slot, and even a
    finding against the whole depot could not say which array nor which element."""
    return n_indices > 1 or getattr(aty, "space", None) == "local"


#: The longest access text (``x[j, i]``) an ``index_checks`` message quotes, characters.
_ACCESS_TEXT_MAX = 60


def llty(t: Scalar):
    """LLVM register type of a scalar (bool: i1)."""
    if t.kind == "b":
        return I1
    if t.is_bf16:   # a float32 holding a bfloat16 value (compiler/bf16)
        return ir.FloatType()
    if t.kind == "f":
        return {16: ir.HalfType(), 32: ir.FloatType(), 64: ir.DoubleType()}[t.bits]
    return ir.IntType(t.bits)


def memty(t):
    """LLVM in-memory type of an array element (bool: i8; bfloat16: i16, its bits;
    vectors: [n x T])."""
    if isinstance(t, Scalar):
        return I8 if t.is_bool else ir.IntType(16) if t.is_bf16 else llty(t)
    if isinstance(t, Vector):
        return ir.ArrayType(memty(t.elem), t.n)
    if isinstance(t, Matrix):
        return ir.ArrayType(memty(t.elem), t.rows * t.cols)
    if isinstance(t, StructType):
        return llvm_memory_type(t)
    raise TypeError(f"no memory type for {t!r}")


@dataclass
class ArrayVal:
    """An array value: base pointer, int32 extents and element strides; ``invariant``:
    a kernel parameter the kernel never writes, read through the read-only data cache
    (``CompileOptions.read_only_cache``)."""

    ptr: ir.Value
    shape: list
    strides: list
    ty: ArrayType
    invariant: bool = False


@dataclass
class ArraySlot:
    """The storage of an array held in a struct variable: allocas of its pointer, extents
    and strides (an array variable of its own is an :class:`ArrayVal`, never stored)."""

    ptr: ir.Value
    shape: list
    strides: list
    ty: ArrayType


def zero_value(ty):
    """The zero of ``ty`` as a Python-side value: 0, a tuple of zeros, an empty array
    (null pointer, extents 0) for an array field, a tuple of field zeros for a struct."""
    if isinstance(ty, Scalar):
        return ir.Constant(llty(ty), 0.0 if ty.is_float else 0)
    if isinstance(ty, (Vector, Matrix)):
        n = ty.n if isinstance(ty, Vector) else ty.rows * ty.cols
        return (zero_value(ty.elem),) * n
    if isinstance(ty, ArrayType):
        zeros = [ir.Constant(I32, 0)] * ty.ndim
        return ArrayVal(ir.Constant(ir.PointerType(addrspace=1), None), zeros, zeros, ty)
    if isinstance(ty, StructType):
        return tuple(zero_value(ft) for _, ft in ty.fields)
    raise TypeError(f"no zero of {ty!r}")  # pragma: no cover


def flatten(value, ty) -> list:
    """Scalars of ``value`` in order (arrays: pointer, shape..., strides...)."""
    if isinstance(ty, ArrayType):
        return [value.ptr, *value.shape, *value.strides]
    if isinstance(ty, TupleType):
        return [x for v, t in zip(value, ty.elems) for x in flatten(v, t)]
    if isinstance(ty, StructType):
        return [x for v, (_, t) in zip(value, ty.fields) for x in flatten(v, t)]
    if isinstance(ty, (Vector, Matrix)):
        return list(value)
    return [value]


def unflatten(parts: list, ty):
    """Inverse of :func:`flatten`."""
    if isinstance(ty, ArrayType):
        n = ty.ndim
        return ArrayVal(parts[0], list(parts[1:1 + n]), list(parts[1 + n:1 + 2 * n]), ty)
    if isinstance(ty, (TupleType, StructType)):
        out, k = [], 0
        for e in (ty.elems if isinstance(ty, TupleType) else [t for _, t in ty.fields]):
            m = len(flatten_types_count(e))
            out.append(unflatten(parts[k:k + m], e))
            k += m
        return tuple(out)
    if isinstance(ty, (Vector, Matrix)):
        return tuple(parts)
    return parts[0]


def flatten_types_count(ty) -> list:
    """One placeholder per scalar that a value of ``ty`` flattens to."""
    if isinstance(ty, ArrayType):
        return [0] * (1 + 2 * ty.ndim)
    if isinstance(ty, TupleType):
        return [x for e in ty.elems for x in flatten_types_count(e)]
    if isinstance(ty, StructType):
        return [x for _, e in ty.fields for x in flatten_types_count(e)]
    if isinstance(ty, Vector):
        return [0] * ty.n
    if isinstance(ty, Matrix):
        return [0] * (ty.rows * ty.cols)
    return [0]


@dataclass
class Ref:
    """Where a store goes: array memory (``ptr``) or a local's alloca(s)."""

    kind: str          # "mem", "slot", "dyn"
    target: object     # pointer, alloca, or tuple of allocas
    ty: object
    index: object = None
    align: int | None = None  # "mem" of a vector element: bytes of one aligned vector access
    invariant: bool = False   # "mem" of a read-only kernel parameter: ld.global.nc


class ExprLowerer:
    """Expression lowering (mixed into FunctionLowerer)."""

    @property
    def fflags(self):
        """Fast-math flags of float arithmetic: ``fast`` under fast_math, else none.

        Without flags NVPTX prints ``add.rn``/``mul.rn``/``sub.rn``, which ptxas
        may not fuse (PTX ISA, "add": ``.rn`` operations are not contracted), so
        every rounding step is visible in the PTX and the simulator, which runs
        the PTX, gets the GPU's bits. Contraction into FMA happens in
        :meth:`visit_BinOp`, within one expression (C's ``FP_CONTRACT ON``).
        """
        return ("fast",) if self.m.fast_math else ()

    # -- constants and conversions ----------------------------------------------
    def const_value(self, c, ty):
        """An LLVM constant (or tuple of them) for a folded value of type ``ty``."""
        if isinstance(ty, Scalar):
            if ty.is_float:
                return ir.Constant(llty(ty), float(c))
            return ir.Constant(llty(ty), wrap_int(int(c), ty) if not ty.is_bool else int(bool(c)))
        if isinstance(ty, TupleType):
            return tuple(self.const_value(v, t) for v, t in zip(c, ty.elems))
        return None

    def expr(self, node):
        """The value of expression ``node`` (constants materialised directly).

        A weak float literal keeps its Python value in the ``ir.Constant`` until
        :meth:`convert` rounds it to the type it meets (``d[i] = 1e39`` with ``d`` float64 is
        1e39, not float32's inf). Float constants are noted in ``self.float_consts`` for the
        statement: one that is finite but too big for the type it is converted to, or for its
        own type when it is still unconverted at the end of the statement, is a located error
        (:meth:`check_float_consts`), since it would silently become inf.
        """
        ty = getattr(node, "wl_ty", None)
        c = const_of(node)
        if c is not NO_CONST and isinstance(ty, (Scalar, TupleType)):
            value = self.const_value(c, ty)
            parts = zip(value, c, ty.elems) if isinstance(ty, TupleType) else [(value, c, ty)]
            for v, py, t in parts:
                if isinstance(t, Scalar) and t.is_float:
                    self.float_consts[id(v)] = (v, node, py, float_overflow(py, t) is not None)
            return value
        cap = getattr(node, "wl_captured", None)
        if cap is not None:   # a captured vector/matrix constant (typing_exprs.classify)
            return tuple(self.const_value(v, ty.elem) for v in cap)
        if isinstance(ty, Meta):
            return None
        return self.visit(node)

    def check_float_consts(self, constant=None, dst=None):
        """Check the statement's float constants (``constant=None``, at its end) or raise the
        located error for ``constant`` converted to ``dst``; forget them either way.

        Args:
            constant: an ``ir.Constant`` noted by :meth:`expr` whose conversion to ``dst``
                overflowed, or None: the statement ended, and a noted constant still at
                its own type that overflows it is the error.
            dst: the type ``constant`` was being converted to.

        Raises:
            KernelCompileError: at the constant's node, with the type's largest finite value
                (:func:`~warp_lab.compiler.typing_rules.float_overflow`).
        """
        noted, self.float_consts = self.float_consts, {}
        if constant is None:
            bad = [e for e in noted.values() if e[3]]
            if not bad:
                return
            _, node, py, _ = bad[0]
            dst = node.wl_ty
            if isinstance(dst, TupleType):
                dst = next(t for c, t in zip(const_of(node), dst.elems) if c == py)
        else:
            _, node, py, _ = noted[id(constant)]
        err = float_overflow(py, dst)
        raise compile_error(self.source, node, str(err), err.hint)

    def convert(self, v, src, dst):
        """Convert value ``v`` of type ``src`` to ``dst`` (C-like, casts truncate toward 0)."""
        if src == dst or isinstance(dst, ArrayType):
            return v
        if isinstance(src, Scalar) and isinstance(dst, Scalar) and (src.is_bf16 or dst.is_bf16):
            from warp_lab.compiler.bf16 import convert_bf16
            return convert_bf16(self, v, src, dst)
        if isinstance(src, (Vector, Matrix)) and isinstance(dst, (Vector, Matrix)):
            return tuple(self.convert(x, src.elem, dst.elem) for x in v)
        if isinstance(dst, TupleType):
            return tuple(self.convert(x, s, d) for x, s, d in zip(v, src.elems, dst.elems))
        if isinstance(dst, (Vector, Matrix)) and isinstance(src, Scalar):
            n = dst.n if isinstance(dst, Vector) else dst.rows * dst.cols
            return (self.convert(v, src, dst.elem),) * n
        b = self.b
        if isinstance(v, ir.Constant) and isinstance(v.constant, (int, float)):
            py = wrap_int(v.constant, src) if not src.is_float else v.constant
            try:
                out = self.const_value(cast_value(py, dst), dst)
            except ConstRangeError:
                if id(v) in self.float_consts:
                    self.check_float_consts(v, dst)
                raise
            except (ValueError, OverflowError):
                pass
            else:
                self.float_consts.pop(id(v), None)  # rounded from its Python value: it fits
                return out
        if dst.is_bool:
            return self.truth_value(v, src)
        if src.is_bool:
            return b.zext(v, llty(dst)) if dst.is_int else b.uitofp(v, llty(dst))
        if src.is_int and dst.is_int:
            if dst.bits < src.bits:
                return b.trunc(v, llty(dst))
            if dst.bits > src.bits:
                return b.sext(v, llty(dst)) if src.is_signed else b.zext(v, llty(dst))
            return v
        if src.is_int:
            return b.sitofp(v, llty(dst)) if src.is_signed else b.uitofp(v, llty(dst))
        if dst.is_int:
            from warp_lab.compiler.lower_ops import float_to_int
            return float_to_int(self, v, src, dst)
        return b.fpext(v, llty(dst)) if dst.bits > src.bits else b.fptrunc(v, llty(dst))

    def truth_value(self, v, ty):
        """An i1: ``v != 0`` (unordered for floats, so NaN is true as in Python)."""
        if ty.is_bool:
            return v
        if ty.is_float:
            return self.b.fcmp_unordered("!=", v, ir.Constant(llty(ty), 0.0))
        return self.b.icmp_unsigned("!=", v, ir.Constant(llty(ty), 0))

    def truth(self, node):
        """An i1 for a condition expression (an array's: its base pointer is not null)."""
        if isinstance(node.wl_ty, ArrayType):
            ptr = self.expr(node).ptr
            return self.b.icmp_unsigned("!=", ptr, ir.Constant(ptr.type, None))
        return self.truth_value(self.expr(node), node.wl_ty)

    # -- names, attributes, subscripts ---------------------------------------------
    def visit_Name(self, node):
        v = self.vars.get(node.id)
        if isinstance(v, ArrayVal):
            return v
        return self.load_var(self.var_slot(node.id))

    def visit_Tuple(self, node):
        return tuple(self.expr(e) for e in node.elts)

    def sreg(self, name: str):
        """Read a PTX special register (``tid.x``, ``laneid``, ...)."""
        fn = self.m.declare(f"llvm.nvvm.read.ptx.sreg.{name}", I32, [])
        return self.b.call(fn, [], name=name.replace(".", "_"))

    def global_index(self, axis: str):
        """``ctaid.axis * ntid.axis + tid.axis`` (CUDA's blockIdx*blockDim+threadIdx)."""
        base = self.b.mul(self.sreg(f"ctaid.{axis}"), self.sreg(f"ntid.{axis}"),
                          flags=["nuw", "nsw"])
        return self.b.add(base, self.sreg(f"tid.{axis}"), flags=["nuw", "nsw"],
                          name=f"tid.{axis}")

    def visit_Attribute(self, node):
        if hasattr(node, "wl_sreg"):
            stem, axis = node.wl_sreg
            return self.sreg(f"{stem}.{axis}")
        bty = node.value.wl_ty
        if isinstance(bty, StructType):
            if _storage_rooted(node.value):   # only the field is read, not the whole struct
                return self.load_ref(self.lvalue_ref(node))
            return self.expr(node.value)[node.wl_field]
        base = self.expr(node.value)
        if isinstance(bty, Vector):
            return base[node.wl_component]
        if isinstance(bty, Matrix):  # .T
            r, c = bty.rows, bty.cols
            return tuple(base[i * c + j] for j in range(c) for i in range(r))
        if isinstance(bty, ArrayType) and node.attr == "shape":
            return tuple(base.shape)
        raise TypeError(f"attribute {node.attr} of {bty!r}")

    def small_index(self, node, size: int, axis: int = 0):
        """A run-time index into a tuple, vector or matrix of ``size`` elements along
        ``axis``, as int32. With ``debug`` it is bounds-checked as an array index is (a trap
        that prints the file, line, index and extent; Python raises IndexError), on its
        full value: a uint64 2**32 is out of bounds, not 0. Without, an index past the end
        picks some element (as C's undefined behaviour would)."""
        v = self.expr(node)
        if self.m.debug:
            from warp_lab.compiler.lower_builtins import emit_trap
            wv = self.array_index_value(v, node.wl_ty)
            n = ir.Constant(wv.type, size)
            where = f"{self.filename}:{self.cur_line}".replace("%", "%%")
            ity, d = (int64, "%lld") if wv.type == I64 else (int32, "%d")
            emit_trap(self, self.b.icmp_unsigned("<", wv, n), f"{where}: index {d} out of "
                      f"bounds for axis {axis} with size {d}", [wv, n], [ity, ity])
        return self.convert(v, node.wl_ty, int32)

    def array_index(self, node):
        """An array index: int32 for int32 and narrower types, int64 for wider ones.

        ``int64``, ``uint32`` and ``uint64`` indices keep their full value
        (sign- or zero-extended to i64) so :meth:`elem_ptr` computes the
        address in 64 bits instead of truncating the index.
        """
        return self.array_index_value(self.expr(node), node.wl_ty)

    def array_index_value(self, v, ty):
        """:meth:`array_index` of an already lowered value ``v`` of type ``ty``."""
        if isinstance(ty, Scalar) and ty.is_int and (ty.bits > 32 or
                                                      (ty.bits == 32 and not ty.is_signed)):
            return self.convert(v, ty, int64) if ty.bits < 64 else v
        return self.convert(v, ty, int32)

    def index_parts(self, node):
        """An array index split as ``(value, c)``: ``e ± c`` with a small int constant ``c``
        gives ``(array_index(e), ±c)``, anything else ``(array_index(node), 0)``.

        :meth:`elem_ptr` adds ``c * stride`` to the address of ``u[i, j]``, so
        ``u[i, j + 1]`` and ``u[i, j - 1]`` become ``[p + 4]`` and ``[p - 4]`` off
        that address ``p``, as nvcc's code for ``u[i * w + j + 1]`` does. The element is
        then ``e ± c`` without int32 wrap-around, which differs from wrapping only
        if ``e ± c`` overflows: never for an index in bounds of an axis shorter than
        ``2**31 - 2**16`` elements (docs/language.md). Not under ``debug`` (nor
        ``index_checks`` for 2-D and wider accesses, :meth:`element_ref`), whose bounds
        checks test the index as written.
        """
        if not self.m.debug and isinstance(node, ast.BinOp) and const_of(node) is NO_CONST \
                and getattr(node, "wl_op", None) in ("add", "sub") and node.wl_ty == int32 \
                and getattr(node, "wl_opty", None) == int32 and node.left.wl_ty == int32:
            c = const_of(node.right)
            if isinstance(c, int) and not isinstance(c, bool) and abs(c) < _FOLD_LIMIT:
                return self.array_index(node.left), (c if node.wl_op == "add" else -c)
        return self.array_index(node), 0

    def _times_stride(self, v, stride, wide: bool):
        """``v * stride`` (``nsw``), the stride sign-extended when ``wide``; just ``v``
        for the constant unit stride (``CompileOptions.unit_inner_stride``)."""
        if isinstance(stride, ir.Constant) and stride.constant == 1:
            return v
        return self.b.mul(v, self.b.sext(stride, I64) if wide else stride, flags=["nsw"])

    def elem_ptr(self, arr: ArrayVal, idx: list, consts=(), what: str = ""):
        """Address of ``arr[idx]``: ``sum(i_k * stride_k)`` then a GEP.

        The sum is int32 (sign-extended at the GEP, the architecture's index
        math width) when every index is an i32; when any index is an i64
        (an ``int64``/``uint32``/``uint64`` index, see :meth:`array_index`)
        all terms are extended to i64 and the sum is done in 64 bits, so an
        index of 2**32 + 1 addresses element 2**32 + 1, not 1. ``consts``
        (one int per index, from :meth:`index_parts`), each times its stride,
        are a second GEP off the address of the element without them, so
        neighbouring elements share one base address: ``u[i, j]``,
        ``u[i, j ± 1]`` and ``u[i ± 1, j]`` are ``p``, ``[p ± 4]`` and
        ``p ± 4 * stride``, one ``p`` that LLVM computes once and hoists
        above a branch whose sides both use it, as nvcc does for
        ``u[i*w + j ± 1]`` (benchmarks/findings.md F13). The base GEP is not
        ``inbounds``: ``p`` itself may lie outside the array (``u[k + 1]``
        with ``k == -1``). Under ``debug``, and under ``index_checks`` for two indices or
        more, each index is checked (unsigned, so a negative one fails) against its axis's
        extent; ``what``, the access as written (``x[j, i]``), ends an ``index_checks``
        message.
        """
        wide = any(v.type == I64 for v in idx)
        if wide:
            idx = [v if v.type == I64 else self.b.sext(v, I64) for v in idx]
        if self.m.debug:
            self._debug_index_checks(arr, idx, wide)
        elif self.m.index_checks and _checked_as_written(arr.ty, len(idx)):
            # 2-D and wider accesses, and every local array's: past a 1-D array's end is
            # memcheck's address check's (its finding names the element and the array)
            self._index_check(arr, idx, wide, what)
        off = None
        for k, v in enumerate(idx):
            term = self._times_stride(v, arr.strides[k], wide)
            off = term if off is None else self.b.add(off, term, flags=["nsw"])
        if not wide:
            off = self.b.sext(off, I64)
        etype = memty(arr.ty.dtype)
        if not any(consts):
            return self.b.gep(arr.ptr, [off], inbounds=True, source_etype=etype)
        # the base first: the same instructions as a plain ``arr[idx]``, so that
        # SimplifyCFG can hoist them when both sides of a branch start with them
        base = self.b.gep(arr.ptr, [off], source_etype=etype)
        ity = I64 if wide else I32
        rest = None
        for k, c in enumerate(consts):  # constant parts of the indices (index_parts)
            if c:
                term = self._times_stride(ir.Constant(ity, c), arr.strides[k], wide)
                rest = term if rest is None else self.b.add(rest, term, flags=["nsw"])
        if not wide:
            rest = self.b.sext(rest, I64)
        return self.b.gep(base, [rest], source_etype=etype)

    def _debug_index_checks(self, arr: ArrayVal, idx: list, wide: bool):
        """``debug``'s bounds checks: per axis, a trap that prints file, line, index, extent."""
        from warp_lab.compiler.lower_builtins import emit_trap
        for k, v in enumerate(idx):
            n = self.b.zext(arr.shape[k], I64) if wide else arr.shape[k]
            ok = self.b.icmp_unsigned("<", v, n)
            where = f"{self.filename}:{self.cur_line}".replace("%", "%%")
            ity_w, d = (int64, "%lld") if wide else (int32, "%d")
            emit_trap(self, ok, f"{where}: index {d} out of bounds for axis {k} "
                      f"with size {d}", [v, n], [ity_w, ity_w])

    def _index_check(self, arr: ArrayVal, idx: list, wide: bool, what: str):
        """``index_checks``' one check of an access (every index unsigned below its extent,
        so a negative one fails): when it fails, print :data:`INDEX_CHECK_MARK`, the file,
        line and column, the indices, the shape and ``what`` (the access as written), then
        trap (``finding_text.index_finding`` reads it back as a finding)."""
        from warp_lab.compiler.lower_builtins import emit_trap
        ns = [self.b.zext(n, I64) if wide else n for n in arr.shape[:len(idx)]]
        ok = None
        for v, n in zip(idx, ns):
            c = self.b.icmp_unsigned("<", v, n)
            ok = c if ok is None else self.b.and_(ok, c)
        ity_w, d = (int64, "%lld") if wide else (int32, "%d")
        ds = ", ".join([d] * len(idx))
        what = what if len(what) <= _ACCESS_TEXT_MAX else ""  # a long one: the column says it
        where = f"{INDEX_CHECK_MARK}{self.filename}:{self.cur_line}:{self.cur_col}"
        emit_trap(self, ok, f"{where.replace('%', '%%')}: index ({ds}) out of bounds for "
                  f"shape ({ds}) in {what.replace('%', '%%')}", [*idx, *ns],
                  [ity_w] * (2 * len(idx)))

    def _access_text(self, node) -> str:
        """The access ``node`` as written (``x[j, i]``) for an ``index_checks`` message
        ("" without them)."""
        if not self.m.index_checks or self.m.debug:
            return ""
        return ast.unparse(node)

    def array_view(self, node) -> ArrayVal:
        """``a[i]`` (or ``a[i, j]`` of a 3-D array): the sub-array at those leading indices,
        sharing ``a``'s memory: its address (:meth:`elem_ptr` over the leading axes) with
        the remaining extents and strides."""
        arr = self.expr(node.value)
        k = len(node.wl_indices)
        lead = ArrayVal(arr.ptr, arr.shape[:k], arr.strides[:k], arr.ty, arr.invariant)
        ptr = self.elem_ptr(lead, [self.array_index(i) for i in node.wl_indices],
                            what=self._access_text(node))
        return ArrayVal(ptr, arr.shape[k:], arr.strides[k:], node.wl_ty, arr.invariant)

    def array_slice(self, node) -> ArrayVal:
        """``a[:2, 1:]`` of an array of static shape (``typing_exprs._static_slice``): the
        address of its first element (an integer index is checked as ``a[i]`` is), the
        sliced extents and each axis's stride times its step."""
        arr = self.expr(node.value)
        idx, lead_shape, lead_strides = [], [], []
        shape, strides = [], []
        for k, part in enumerate(node.wl_slice):
            lead_shape.append(arr.shape[k])
            lead_strides.append(arr.strides[k])
            if part[0] == "index":
                idx.append(self.array_index(part[1]))
                continue
            _, start, step = part
            idx.append(ir.Constant(I32, start))
            strides.append(self.b.mul(arr.strides[k], ir.Constant(I32, step)))
        k = len(node.wl_slice)
        lead = ArrayVal(arr.ptr, lead_shape, lead_strides, arr.ty, arr.invariant)
        ptr = self.elem_ptr(lead, idx, what=self._access_text(node))
        shape = [ir.Constant(I32, n) for n in node.wl_ty.shape]
        return ArrayVal(ptr, shape, strides + list(arr.strides[k:]), node.wl_ty, arr.invariant)

    def _vector_align(self, aty: ArrayType) -> int | None:
        """Bytes of one vector access per element of ``aty`` when its elements are known
        aligned to that size: global arrays under ``options.aligned_vectors`` (checked at
        launch), static shared arrays (16-byte aligned, elements packed); else None."""
        size = vector_access_bytes(aty.dtype)
        if size is None:
            return None
        if aty.space == "global":
            return size if self.m.aligned_vectors else None
        return size if aty.space == "shared" and aty.shape is not None else None

    def lvalue_ref(self, node) -> Ref:
        """Where the storage a typed load-form expression names lives: a local's
        alloca(s) (``s``, ``s.f``, ``s.inner.f``), or array memory (``a[i]``, ``a[i].f``).

        A struct field of a local is the field's own alloca(s); of an array element, a
        GEP to the field in the element's LLVM struct."""
        if isinstance(node, ast.Name):
            return Ref("slot", self.var_slot(node.id), node.wl_ty)
        if isinstance(node, ast.Attribute) and isinstance(node.value.wl_ty, StructType):
            st = node.value.wl_ty
            base = self.lvalue_ref(node.value)
            k = node.wl_field
            if base.kind == "slot":
                return Ref("slot", base.target[k], node.wl_ty)
            ptr = self.b.gep(base.target, [ir.Constant(I32, 0), ir.Constant(I32, k)],
                             inbounds=True, source_etype=memty(st))
            return Ref("mem", ptr, node.wl_ty, invariant=base.invariant)
        return self.element_ref(node)

    def element_ref(self, node) -> Ref:
        """A store/load reference for a subscript or component node (typed, load form)."""
        bty = node.value.wl_ty
        if isinstance(node, ast.Attribute) and isinstance(bty, StructType):
            return self.lvalue_ref(node)
        if isinstance(bty, (Vector, Matrix)) and _memory_rooted(node.value):
            return self.component_ref(node, bty)
        if isinstance(node, ast.Attribute):  # v.x of a local vector (or of a struct's field)
            slot = self.lvalue_ref(node.value).target
            return Ref("slot", slot[node.wl_component], node.wl_ty)   # (t.p: a slice)
        if isinstance(bty, ArrayType):
            arr = self.expr(node.value)
            idx = node.wl_indices
            parts = ([(self.array_index(i), 0) for i in idx]   # checked as written
                     if self.m.index_checks and _checked_as_written(bty, len(idx)) else
                     [self.index_parts(i) for i in idx])
            return Ref("mem", self.elem_ptr(arr, [p[0] for p in parts], [p[1] for p in parts],
                                            self._access_text(node)),
                       bty.dtype, align=self._vector_align(bty), invariant=arr.invariant)
        slot = self.lvalue_ref(node.value).target
        if isinstance(bty, Vector):
            i = node.wl_indices[0]
            c = const_of(i)
            if c is not NO_CONST:
                return Ref("slot", slot[int(c)], bty.elem)
            return Ref("dyn", slot, bty.elem, self.small_index(i, bty.n))
        # matrix: m[i, j] or m[i] (a row)
        cols = bty.cols
        idx = node.wl_indices
        if len(idx) == 2:
            ci, cj = const_of(idx[0]), const_of(idx[1])
            if ci is not NO_CONST and cj is not NO_CONST:
                return Ref("slot", slot[int(ci) * cols + int(cj)], bty.elem)
            lin = self.b.add(self.b.mul(self.small_index(idx[0], bty.rows),
                                        ir.Constant(I32, cols)),
                             self.small_index(idx[1], cols, 1))
            return Ref("dyn", slot, bty.elem, lin)
        ci = const_of(idx[0])
        from warp_lab.compiler.typing_exprs import vector_of
        if ci is not NO_CONST:
            return Ref("slot", slot[int(ci) * cols:(int(ci) + 1) * cols], vector_of(bty.elem, cols))
        raise TypeError("a matrix row store needs a constant row index")

    def component_ref(self, node, bty) -> Ref:
        """``p[i].x`` / ``p[i][k]`` / ``m[i][r, c]`` / ``p[i].v.x``: one component of an
        array element (or of its field) in memory."""
        base = self.lvalue_ref(node.value)
        if isinstance(node, ast.Attribute) and isinstance(node.wl_component, slice):
            # xforms[i].p / .q: the first component of the part, as that vector
            ptr = self.b.gep(base.target, [ir.Constant(I32, 0),
                                           ir.Constant(I32, node.wl_component.start)],
                             inbounds=True, source_etype=memty(bty))
            return Ref("mem", ptr, node.wl_ty, invariant=base.invariant)
        if isinstance(node, ast.Attribute):
            k = ir.Constant(I32, node.wl_component)
        elif isinstance(bty, Vector):
            k = self.small_index(node.wl_indices[0], bty.n)
        elif len(node.wl_indices) == 1:   # a row m[r]: its first element, as a vector
            from warp_lab.compiler.typing_exprs import vector_of
            k = self.b.mul(self.small_index(node.wl_indices[0], bty.rows),
                           ir.Constant(I32, bty.cols))
            ptr = self.b.gep(base.target, [ir.Constant(I32, 0), k], inbounds=True,
                             source_etype=memty(bty))
            return Ref("mem", ptr, vector_of(bty.elem, bty.cols), invariant=base.invariant)
        else:
            r, c = (self.small_index(i, n, axis) for i, n, axis in
                    zip(node.wl_indices, (bty.rows, bty.cols), (0, 1)))
            k = self.b.add(self.b.mul(r, ir.Constant(I32, bty.cols)), c)
        ptr = self.b.gep(base.target, [ir.Constant(I32, 0), k], inbounds=True,
                         source_etype=memty(bty))
        return Ref("mem", ptr, bty.elem, invariant=base.invariant)

    def load_ref(self, ref: Ref):
        """Load the value a :class:`Ref` points at."""
        if ref.kind == "slot":
            return self.load_var(ref.target)
        if ref.kind == "dyn":
            vals = [self.b.load(s) for s in ref.target]
            return self.pick(vals, ref.index)
        return self.load_mem(ref.target, ref.ty, ref.align, ref.invariant)

    def store_ref(self, ref: Ref, value):
        """Store into what a :class:`Ref` points at."""
        if ref.kind == "slot":
            self.store_var(ref.target, value)
        elif ref.kind == "dyn":
            for k, s in enumerate(ref.target):
                hit = self.b.icmp_signed("==", ref.index, ir.Constant(I32, k))
                self.b.store(self.b.select(hit, value, self.b.load(s)), s)
        else:
            self.store_mem(ref.target, ref.ty, value, ref.align)

    def store_into(self, load_node, value):
        """Store into the element or component a subscript/attribute node names."""
        self.store_ref(self.element_ref(load_node), value)

    def load_mem(self, ptr, ty, align=None, invariant=False):
        """Load a scalar, vector or matrix element from memory (bool stored as i8); a
        vector with ``align`` (bytes, :meth:`_vector_align`) as component loads the first
        of which carries that alignment, which codegen fuses into one ``ld.v2``/``.v4``;
        ``invariant`` marks the loads ``!invariant.load`` (memory no thread writes during
        the launch), which NVPTX emits as ``ld.global.nc``."""
        if isinstance(ty, Scalar):
            v = self._mark(self.b.load(ptr, typ=memty(ty), align=ty.align), invariant)
            if ty.is_bf16:
                from warp_lab.compiler.bf16 import from_bits
                return from_bits(self.b, v)
            return self.b.icmp_unsigned("!=", v, ir.Constant(I8, 0)) if ty.is_bool else v
        if isinstance(ty, StructType):   # field by field (an array element has no arrays)
            st = memty(ty)
            return tuple(self.load_mem(self.b.gep(ptr, [ir.Constant(I32, 0),
                                                        ir.Constant(I32, k)],
                                                  inbounds=True, source_etype=st),
                                       ft, invariant=invariant)
                         for k, (_, ft) in enumerate(ty.fields))
        n = ty.n if isinstance(ty, Vector) else ty.rows * ty.cols
        at = memty(ty)
        out = []
        for k in range(n):
            p = self.b.gep(ptr, [ir.Constant(I32, 0), ir.Constant(I32, k)], inbounds=True,
                           source_etype=at)
            if align:
                # component loads, the first aligned to the whole element: NVPTX's
                # load/store vectorizer makes them one ld.v2/.v4 and keeps
                # !invariant.load (a <n x T> load loses it in the O3 pipeline)
                a = align if k == 0 else ty.elem.align
                out.append(self._mark(self.b.load(p, typ=memty(ty.elem), align=a), invariant))
            else:
                out.append(self.load_mem(p, ty.elem, invariant=invariant))
        return tuple(out)

    def _mark(self, load, invariant: bool):
        if invariant:
            load.set_metadata("invariant.load", self.m.empty_md())
        return load

    def store_mem(self, ptr, ty, value, align=None):
        """Store a scalar, vector or matrix element to memory (bool stored as i8); a
        vector with ``align`` (bytes, :meth:`_vector_align`) as one vector store."""
        if isinstance(ty, Scalar):
            if ty.is_bf16:
                from warp_lab.compiler.bf16 import to_bits
                value = to_bits(self.b, value)
            v = self.b.zext(value, I8) if ty.is_bool else value
            self.b.store(v, ptr, align=ty.align)
            return
        if isinstance(ty, StructType):
            st = memty(ty)
            for k, ((_, ft), x) in enumerate(zip(ty.fields, value)):
                p = self.b.gep(ptr, [ir.Constant(I32, 0), ir.Constant(I32, k)], inbounds=True,
                               source_etype=st)
                self.store_mem(p, ft, x)
            return
        if align:
            vec = ir.Constant(ir.VectorType(llty(ty.elem), ty.n), ir.Undefined)
            for k, x in enumerate(value):
                vec = self.b.insert_element(vec, x, ir.Constant(I32, k))
            self.b.store(vec, ptr, align=align)
            return
        at = memty(ty)
        for k, x in enumerate(value):
            p = self.b.gep(ptr, [ir.Constant(I32, 0), ir.Constant(I32, k)], inbounds=True,
                           source_etype=at)
            self.store_mem(p, ty.elem, x)

    def pick(self, vals, index):
        """``vals[index]`` for a runtime int32 index (a select chain)."""
        out = vals[0]
        for k in range(1, len(vals)):
            out = self.b.select(self.b.icmp_signed("==", index, ir.Constant(I32, k)), vals[k], out)
        return out

    def visit_Subscript(self, node):
        bty = node.value.wl_ty
        if isinstance(bty, ArrayType):
            if hasattr(node, "wl_slice"):
                return self.array_slice(node)
            if isinstance(node.wl_ty, ArrayType):
                return self.array_view(node)
            return self.load_ref(self.element_ref(node))
        base = self.expr(node.value)
        if hasattr(node, "wl_slice"):       # v[a:b:c] with constant bounds: a vector
            return tuple(base[k] for k in node.wl_slice)
        if isinstance(bty, TupleType):
            if hasattr(node, "wl_tuple_index"):
                return base[node.wl_tuple_index]
            return self.pick(list(base), self.small_index(node.wl_indices[0], len(base)))
        if isinstance(bty, Vector):
            i = node.wl_indices[0]
            c = const_of(i)
            return base[int(c)] if c is not NO_CONST else \
                self.pick(list(base), self.small_index(i, bty.n))
        cols = bty.cols
        idx = node.wl_indices
        if len(idx) == 2:
            ci, cj = const_of(idx[0]), const_of(idx[1])
            if ci is not NO_CONST and cj is not NO_CONST:
                return base[int(ci) * cols + int(cj)]
            lin = self.b.add(self.b.mul(self.small_index(idx[0], bty.rows),
                                        ir.Constant(I32, cols)),
                             self.small_index(idx[1], cols, 1))
            return self.pick(list(base), lin)
        ci = const_of(idx[0])
        if ci is not NO_CONST:
            return tuple(base[int(ci) * cols:(int(ci) + 1) * cols])
        row = self.small_index(idx[0], bty.rows)
        return tuple(self.pick([base[r * cols + j] for r in range(bty.rows)], row)
                     for j in range(cols))

    # -- operators ----------------------------------------------------------------
    def visit_BinOp(self, node):
        fused = self.fused_multiply_add(node)
        if fused is not None:
            return fused
        return self.binop_values(node, self.expr(node.left), self.expr(node.right))

    def fused_multiply_add(self, node, left_value=None):
        """``a*b + c``, ``c + a*b``, ``a*b - c``, ``c - a*b`` as one ``llvm.fmuladd``.

        Contraction within an expression (and ``acc += a*b``), as nvcc's
        default ``-fmad=true`` and C's ``FP_CONTRACT ON`` allow: NVPTX emits
        ``fma.rn`` (one rounding). Operands are evaluated in source order.

        Args:
            node: a typed ``ast.BinOp``.
            left_value: the already-loaded value of ``node.left`` (augmented
                assignment), or None to evaluate it here.

        Returns:
            the fused value, or None when ``node`` is not such a float expression.
        """
        from warp_lab.compiler.lower_ops import intrinsic
        t = getattr(node, "wl_opty", None)
        if self.m.fast_math or getattr(node, "wl_op", None) not in ("add", "sub") \
                or not isinstance(t, Scalar) or not t.is_float or t.bits == 16:
            return None

        def product(n):
            return isinstance(n, ast.BinOp) and getattr(n, "wl_op", None) == "mul" \
                and getattr(n, "wl_opty", None) == t and n.wl_ty == t \
                and const_of(n) is NO_CONST

        def value(n):
            return self.convert(self.expr(n), n.wl_ty, t)

        if left_value is None and product(node.left):
            mul = node.left
            a, b = value(mul.left), value(mul.right)
            c = value(node.right)
            if node.wl_op == "sub":
                c = self.b.fneg(c)
        elif product(node.right):
            mul = node.right
            c = value(node.left) if left_value is None else \
                self.convert(left_value, node.left.wl_ty, t)
            a, b = value(mul.left), value(mul.right)
            if node.wl_op == "sub":
                a = self.b.fneg(a)
        else:
            return None
        return intrinsic(self, "fmuladd", t, [a, b, c], fast=False)

    def binop_values(self, node, a, b):
        """Apply the typed BinOp ``node`` to already-evaluated operands."""
        from warp_lab.compiler.lower_ops import aggregate_binop, scalar_binop
        lt, rt = node.left.wl_ty, node.right.wl_ty
        if hasattr(node, "wl_opty"):
            t = node.wl_opty
            if node.wl_op in ("shl", "shr") and self.m.debug and rt.is_signed:
                self.check_shift_count(node, b, rt)
            if t.is_bf16 and node.wl_op == "mul" and (getattr(node.left, "wl_weak", False) or
                                                     getattr(node.right, "wl_weak", False)):
                # Warp's operator*(bfloat16, float|double): the float32 product of the value
                # and the literal (as float32), rounded once (degrees(x) is x * RAD_TO_DEG)
                from warp_lab.compiler.bf16 import round_f32
                fa, fb = (self.convert(v, vt, float32 if vt.is_float and not vt.is_bf16 else t)
                          for v, vt in ((a, lt), (b, rt)))
                return round_f32(self.b, scalar_binop(self, "mul", fa, fb, float32))
            return scalar_binop(self, node.wl_op, self.convert(a, lt, t), self.convert(b, rt, t), t)
        if getattr(node, "wl_kind", None) == "func":   # q * q, t * t (lang/spatial.OPERATORS)
            from warp_lab.compiler.lower_builtins import call_function
            tf = node.wl_func
            return call_function(self, tf, [a, b], [lt, rt], [p[1] for p in tf.params])
        return aggregate_binop(self, node, a, b, lt, rt)

    def check_shift_count(self, node, count, ty):
        """Under ``debug``: trap with Python's ``ValueError`` message when the run-time
        shift ``count`` (of signed type ``ty``) is negative. Without ``debug`` a negative
        count is a shift by the type width or more (``lower_ops._shift``: 0, or -1 for
        ``>>`` of a negative value); a constant one is a compile error (typing_exprs)."""
        from warp_lab.compiler.lower_builtins import emit_trap
        if isinstance(count, ir.Constant):
            return
        wide = ty.bits == 64
        shown = count if ty.bits in (32, 64) else self.b.sext(count, ir.IntType(32))
        where = f"{self.filename}:{self.cur_line}".replace("%", "%%")
        emit_trap(self, self.b.icmp_signed(">=", count, ir.Constant(count.type, 0)),
                  f"{where}: negative shift count ({'%lld' if wide else '%d'})", [shown],
                  [int64 if wide else int32])

    def visit_UnaryOp(self, node):
        from warp_lab.compiler.lower_ops import scalar_binop
        op = node.wl_op
        if op == "not":
            return self.b.not_(self.truth(node.operand))
        v = self.expr(node.operand)
        t = node.operand.wl_ty
        if isinstance(t, (Vector, Matrix)):
            if op == "pos":
                return v
            if op == "invert":   # ~v of an integer vector/matrix: per component
                return tuple(self.b.xor(x, ir.Constant(x.type, -1)) for x in v)
            return tuple(self.b.fneg(x, flags=self.fflags) if t.elem.is_float else
                         self.b.neg(x) for x in v)
        rt = node.wl_opty
        v = self.convert(v, t, rt)
        if op == "pos":
            return v
        if op == "neg" and rt.is_bf16:   # Warp's neg(x) is T(0.0) - x: -(0.0) is +0.0
            return scalar_binop(self, "sub", ir.Constant(llty(rt), 0.0), v, rt)
        if op == "neg":
            return self.b.fneg(v, flags=self.fflags) if rt.is_float else \
                scalar_binop(self, "sub", ir.Constant(llty(rt), 0), v, rt)
        return self.b.xor(v, ir.Constant(llty(rt), -1))

    def short_circuit(self, thunks, is_and: bool):
        """Evaluate i1 thunks left to right, stopping at the first decisive one."""
        merge = self.fn.append_basic_block("sc.end")
        incoming = []
        for k, th in enumerate(thunks):
            c = th()
            if k == len(thunks) - 1:
                incoming.append((c, self.b.block))
                self.b.branch(merge)
                break
            nxt = self.fn.append_basic_block("sc.next")
            if is_and:
                self.b.cbranch(c, nxt, merge)
                incoming.append((ir.Constant(I1, 0), self.b.block))
            else:
                self.b.cbranch(c, merge, nxt)
                incoming.append((ir.Constant(I1, 1), self.b.block))
            self.b.position_at_end(nxt)
        self.b.position_at_end(merge)
        phi = self.b.phi(I1)
        for v, bb in incoming:
            phi.add_incoming(v, bb)
        return phi

    def visit_BoolOp(self, node):
        is_and = isinstance(node.op, ast.And)
        if node.wl_ty.is_bool:
            if all(speculatable(v) for v in node.values[1:]):
                # nothing to skip: evaluating every operand is unobservable, so combine
                # the truths with and/or (nvcc's or.pred) instead of branching, which
                # also keeps jump threading from nesting the conditions of unrolled loops
                out = self.truth(node.values[0])
                for v in node.values[1:]:
                    c = self.truth(v)
                    out = self.b.and_(out, c) if is_and else self.b.or_(out, c)
                return out
            thunks = [lambda v=v: self.truth(v) for v in node.values]
            return self.short_circuit(thunks, is_and)
        # Python's value: the first operand that decides (falsy for and, truthy for or),
        # else the last one, each converted to the common type
        t = node.wl_ty
        merge = self.fn.append_basic_block("sc.end")
        incoming = []
        for k, v in enumerate(node.values):
            val = self.expr(v)
            out = self.convert(val, v.wl_ty, t)
            if k == len(node.values) - 1:
                incoming.append((out, self.b.block))
                self.b.branch(merge)
                break
            c = self.truth_value(val, v.wl_ty)
            nxt = self.fn.append_basic_block("sc.next")
            incoming.append((out, self.b.block))
            if is_and:
                self.b.cbranch(c, nxt, merge)
            else:
                self.b.cbranch(c, merge, nxt)
            self.b.position_at_end(nxt)
        self.b.position_at_end(merge)
        phi = self.b.phi(llty(t))
        for v, bb in incoming:
            phi.add_incoming(v, bb)
        return phi

    def visit_Compare(self, node):
        from warp_lab.compiler.lower_ops import compare
        from warp_lab.compiler.typing_rules import CMPOPS
        operands = [node.left] + list(node.comparators)
        cache = {0: self.expr(node.left)}

        def value(k):
            if k not in cache:
                cache[k] = self.expr(operands[k])
            return cache[k]

        def step(k):
            t = node.wl_cmp_tys[k]
            if isinstance(t, (Vector, Matrix)):   # (typed: one == or != of one type)
                eq = CMPOPS[ast.Eq]
                out = None
                for x, y in zip(flatten(value(0), t), flatten(value(1), t)):
                    c = compare(self, eq, x, y, t.elem)
                    out = c if out is None else self.b.and_(out, c)
                return self.b.not_(out) if isinstance(node.ops[0], ast.NotEq) else out
            a = self.convert(value(k), operands[k].wl_ty, t)
            b = self.convert(value(k + 1), operands[k + 1].wl_ty, t)
            return compare(self, CMPOPS[type(node.ops[k])], a, b, t)

        if len(node.ops) == 1:
            return step(0)
        if speculatable(node):  # 0 <= j < w: both compares, and.pred (see visit_BoolOp)
            out = step(0)
            for k in range(1, len(node.ops)):
                out = self.b.and_(out, step(k))
            return out
        return self.short_circuit([lambda k=k: step(k) for k in range(len(node.ops))], True)

    def visit_IfExp(self, node):
        ty = node.wl_ty
        cond = self.truth(node.test)
        then_bb = self.fn.append_basic_block("sel.a")
        else_bb = self.fn.append_basic_block("sel.b")
        merge = self.fn.append_basic_block("sel.end")
        self.b.cbranch(cond, then_bb, else_bb)
        out = []
        for bb, sub in ((then_bb, node.body), (else_bb, node.orelse)):
            self.b.position_at_end(bb)
            v = flatten(self.convert(self.expr(sub), sub.wl_ty, ty), ty)
            out.append((v, self.b.block))
            self.b.branch(merge)
        self.b.position_at_end(merge)
        phis = []
        for k in range(len(out[0][0])):
            phi = self.b.phi(out[0][0][k].type)
            for v, bb in out:
                phi.add_incoming(v[k], bb)
            phis.append(phi)
        return unflatten(phis, ty)

    def visit_Call(self, node):
        from warp_lab.compiler.lower_builtins import lower_call
        return lower_call(self, node)


#: ``|c|`` below this is folded out of an index ``e ± c`` (:meth:`ExprLowerer.index_parts`).
_FOLD_LIMIT = 1 << 16

#: Scalar operators whose evaluation cannot trap or have an effect (no division:
#: an integer division by zero is a trap under ``debug``; no ``**``: a libdevice call).
_PURE_OPS = frozenset({"add", "sub", "mul", "and", "or", "xor", "shl", "shr",
                       "neg", "pos", "invert", "not"})


def _memory_rooted(node) -> bool:
    """Whether the typed expression ``node`` is an array element or a part of one
    (``a[i]``, ``a[i].v``, ``a[i].inner.v``, a matrix row ``a[i][2]``): its storage is
    memory, not a local (``typing_structs.in_memory``)."""
    from warp_lab.compiler.typing_structs import in_memory
    return in_memory(node)


def _storage_rooted(node) -> bool:
    """Whether the typed struct expression ``node`` is a local variable, an array element
    or a field of one (``lvalue_ref`` reaches its storage), not a computed value."""
    while isinstance(node, ast.Attribute) and isinstance(node.value.wl_ty, StructType):
        node = node.value
    return (isinstance(node, ast.Name) and getattr(node, "wl_local", True)) or \
        isinstance(node, ast.Subscript) and isinstance(node.value.wl_ty, ArrayType)


def speculatable(node) -> bool:
    """Whether evaluating ``node`` can neither trap nor have an effect, so skipping it
    (short-circuit ``and``/``or``) is unobservable: constants, variables, special
    registers (``wl.thread_idx.x``), ``a.shape`` and tuple components, integer
    comparisons, ``and``/``or``/``not`` and integer arithmetic other than division
    and ``**`` of such operands. No array element loads (may fault), no calls, and
    no float arithmetic (not free: evaluating ``zr*zr + zi*zi`` on every iteration
    of a ``while k < n and ...`` loop costs registers).
    """
    if const_of(node) is not NO_CONST or isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Attribute):
        if hasattr(node, "wl_sreg"):
            return True
        return node.attr == "shape" and isinstance(getattr(node.value, "wl_ty", None), ArrayType) \
            and speculatable(node.value)
    if isinstance(node, ast.Subscript):
        return isinstance(getattr(node.value, "wl_ty", None), TupleType) \
            and speculatable(node.value) and speculatable(node.slice)
    if isinstance(node, ast.Compare):
        return all(speculatable(n) and _int_like(n) for n in [node.left, *node.comparators])
    if isinstance(node, ast.BoolOp):
        return all(speculatable(n) for n in node.values)
    if isinstance(node, ast.UnaryOp):
        return getattr(node, "wl_op", None) in _PURE_OPS and speculatable(node.operand)
    if isinstance(node, ast.BinOp):
        return getattr(node, "wl_op", None) in _PURE_OPS and _int_like(node) \
            and speculatable(node.left) and speculatable(node.right)
    return False


def _int_like(node) -> bool:
    t = getattr(node, "wl_ty", None)
    return isinstance(t, Scalar) and not t.is_float
