"""Lowering: typed AST -> LLVM IR text for the NVPTX back end (``llvmlite.ir`` only).

``make_llvm_ir(typed, options)`` builds one module: the kernel entry
(``ptx_kernel`` calling convention, parameters from
:func:`warp_lab.compiler.abi.llvm_param_types`), one internal function per
device-function specialisation, ``addrspace(3)`` globals for shared arrays,
and declarations of the libdevice ``__nv_*`` functions and NVVM intrinsics it
uses (libdevice is linked later, by :mod:`warp_lab.compiler.nvptx`).

Code shape, chosen to match what nvcc emits:

* locals are ``alloca`` s in the entry block (mem2reg promotes them);
* array index math is int32 (``mul nsw``/``add nsw``), sign-extended to i64
  at the ``getelementptr``, so PTX uses ``mul.wide.s32`` like nvcc;
* ``wl.tid()`` is computed once at entry, where threads at or past the
  hidden ``launch_dim`` return (the entry guard: by default only when the
  kernel uses ``wl.tid()``, see ``CompileOptions.entry_guard``);
* float operations carry ``contract`` (nvcc's default ``-fmad=true``), or
  ``fast`` under ``fast_math``; no bounds checks unless ``debug``.

Debug information: a DICompileUnit (emission kind ``DebugDirectivesOnly``:
PTX ``.loc``/``.file`` without DWARF sections, what ``nvcc -lineinfo`` and
clang's ``-gline-directives-only`` produce; ``LineTablesOnly`` makes the NVPTX
back end mark the module ``.target sm_XX, debug``, which turns ptxas's
optimiser off), a DISubprogram per function and a DILocation on every
instruction carrying the user's file/cell line and column.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from llvmlite import ir

from warp_lab.compiler import abi
from warp_lab.compiler.budget import MAX_INLINED_OPS, inline_ops
from warp_lab.compiler.frontend_flow import walk
from warp_lab.compiler.lower_expr import (ArraySlot, ArrayVal, ExprLowerer, flatten, llty,
                                         unflatten)
from warp_lab.compiler.typed_ast import (DYNAMIC_SHARED, NO_CONST, TypedFunction, TypedKernel,
                                         const_of)
from warp_lab.compiler.frontend_parse import compile_error
from warp_lab.compiler.ice import internal_error
from warp_lab.compiler.typing_rules import NONE, ConstRangeError
from warp_lab.errors import InternalCompilerError, KernelCompileError
from warp_lab.lang.types import (ArrayType, Matrix, Scalar, StructType, TupleType, Vector,
                                 is_fixed_array)

__all__ = ["LoweredKernel", "make_llvm_ir", "TRIPLE"]

TRIPLE = "nvptx64-nvidia-cuda"
I1, I32, I64 = ir.IntType(1), ir.IntType(32), ir.IntType(64)


@dataclass(frozen=True)
class LoweredKernel:
    """The lowering stage's product.

    Attributes:
        llvm_ir: the whole module as LLVM IR text.
        entry: the PTX entry name.
        params: ``(name, Type)`` of the user parameters (the hidden launch
            extent is not included; see :func:`warp_lab.compiler.abi.param_layout`).
        launch_ndim: what ``wl.tid()`` returns (1, 2 or 3; 4 in a Warp-dialect kernel,
            ``i, j, k, l = wp.tid()``).
        shared_bytes: static shared memory per block, bytes.
        uses_tid: whether the kernel (or a function it calls) uses ``wl.tid()``.
        entry_guard: whether the entry returns for threads at or past the
            launch extent (``CompileOptions.entry_guard`` resolved).
    """

    llvm_ir: str
    entry: str
    params: tuple
    launch_ndim: int
    shared_bytes: int
    uses_tid: bool = False
    entry_guard: bool = True


class SharedVariable(ir.GlobalVariable):
    """A static ``.shared`` variable: ``internal addrspace(3) externally_initialized global``.

    A block's shared memory starts with whatever is there (CUDA Programming Guide,
    ``__shared__`` variables: no initialization), not with LLVM's ``undef``, which
    would let the optimiser fold every read of a never-written array, and whatever
    depends on it, into constants: at O3 a kernel that forgot to fill its tile
    stored NaN without reading shared memory at all, so the simulator's initcheck
    had nothing to report. ``externally_initialized`` (LLVM Language Reference,
    "Global Variables") keeps those reads; the PTX of a kernel that writes its
    arrays before reading them is unchanged. llvmlite has no flag for it, so
    :meth:`descr` adds the keyword where the grammar puts it, before ``global``.

    Args:
        module: the ``ir.Module``.
        typ: the array type (``ir.ArrayType`` of element type × count).
        name: the PTX symbol (``<kernel>_<array>_<n>``).
    """

    def __init__(self, module: ir.Module, typ: ir.Type, name: str):
        super().__init__(module, typ, name, addrspace=3)

    def descr(self, buf):
        text: list[str] = []
        super().descr(text)
        buf.append("".join(text).replace(" global ", " externally_initialized global ", 1))


class ModuleContext:
    """One LLVM module under construction: declarations, debug info, globals."""

    def __init__(self, typed: TypedKernel, options, cells: dict | None = None):
        self.typed = typed
        self.options = options
        self.cells = dict(cells or {})  # notebook cell name -> the name the artifacts carry
        self.fast_math = bool(getattr(options, "fast_math", False))
        self.debug = bool(getattr(options, "debug", False))
        # array bounds checks: debug's, or index_checks' (reported as simulator findings)
        self.index_checks = self.debug or bool(getattr(options, "index_checks", False))
        self.unit_inner_stride = bool(getattr(options, "unit_inner_stride", False))
        self.read_only_cache = bool(getattr(options, "read_only_cache", False))
        self.aligned_vectors = bool(getattr(options, "aligned_vectors", False))
        self.lineinfo = bool(getattr(options, "lineinfo", True)) or self.debug
        guard = getattr(options, "entry_guard", None)
        self.entry_guard = typed.uses_tid if guard is None else bool(guard)
        # the module's name is written unescaped into the IR's first line (llvmlite:
        # '; ModuleID = "<name>"'): the kernel's PTX name, an identifier, never its
        # __name__, whose newline ended the comment and began IR of the user's making
        self.module = ir.Module(name=typed.entry)
        self.module.triple = TRIPLE
        self.decls: dict = {}
        self._unroll_full = None   # the shared "llvm.loop.unroll.full" node (unroll_full_md)
        self._empty_md = None      # "!{}" (empty_md)
        self.strings: dict = {}
        self.functions: dict = {}   # (TypedFunction.symbol, read-only params) -> ir.Function
        self.pending: list = []     # (TypedFunction, ir.Function, read-only params) to lower
        self.inline_sizes: dict = {}  # id(TypedFunction) -> budget.inline_ops
        self.shared: dict = {}      # symbol -> GlobalVariable
        self.files: dict = {}
        self.cu = None
        if self.lineinfo:
            self._init_debug()
        for decl in typed.shared:
            from warp_lab.compiler.lower_expr import memty
            count = 1
            for s in decl.shape:
                count *= s
            g = SharedVariable(self.module, ir.ArrayType(memty(decl.dtype), count),
                               decl.symbol)
            g.linkage = "internal"
            g.initializer = ir.Constant(g.value_type, ir.Undefined)
            g.align = max(16, decl.dtype.align)
            g.type = ir.PointerType(addrspace=3)  # opaque, like every other pointer here
            self.shared[decl.symbol] = g

    def keep_shared_whole(self, text: str) -> str:
        """The ``@llvm.compiler.used`` line that keeps each static shared array the code
        uses one ``.shared`` variable, as declared and as nvcc keeps a ``__shared__`` array.

        Otherwise GlobalOpt splits an array that is only accessed at constant indices
        into scalars named ``<symbol>.0``, ``.1``, ... numbered in the order of the
        offsets used (``s[1]`` and ``s[3]`` of ``shared_array(4, ...)`` became
        ``k_s_1_$_0`` and ``k_s_1_$_1`` in PTX), so findings said "byte 0 of shared
        array s of 4 bytes" for ``s[3]``. ``llvm.compiler.used`` (LLVM Language
        Reference, "The llvm.compiler.used Global Variable") makes the optimiser treat
        the variable as used by something it cannot see, which ends its analysis of
        the variable's uses (no split); the loads and stores are optimised as before.

        Args:
            text: the module's LLVM IR (``str(self.module)``), read, not printed again.

        Returns:
            The line to append to ``text`` (between newlines), or ``""`` when the code
            uses no shared array. An array only declared (its definition is its one
            mention in ``text``) is left out, so LLVM still drops it.
        """
        refs = [g.get_reference() for g in self.shared.values()]
        used = [f"ptr addrspace(3) {r}" for r in refs if text.count(r) > 1]
        if not used:
            return ""
        return (f"\n@llvm.compiler.used = appending global [{len(used)} x ptr addrspace(3)] "
                f"[{', '.join(used)}], section \"llvm.metadata\"\n")

    def _init_debug(self):
        m = self.module
        src = self.typed.source
        self.cu = m.add_debug_info("DICompileUnit", {
            "language": ir.DIToken("DW_LANG_Python"), "file": self.difile(src.filename),
            "producer": "warp_lab", "runtimeVersion": 0,
            "isOptimized": bool(getattr(self.options, "opt", 3)),
            "emissionKind": ir.DIToken("DebugDirectivesOnly"),
        }, is_distinct=True)
        m.add_named_metadata("llvm.dbg.cu", self.cu)
        m.add_named_metadata("llvm.module.flags",
                             [ir.Constant(I32, 2), "Debug Info Version", ir.Constant(I32, 3)])
        m.add_named_metadata("llvm.module.flags",
                             [ir.Constant(I32, 2), "Dwarf Version", ir.Constant(I32, 4)])

    def artifact_name(self, filename: str) -> str:
        """The name a file or cell has in the module (debug info, trap messages): a cell's
        content-derived name (:func:`warp_lab.compiler.cache.artifact_files`), a path as it
        is."""
        return self.cells.get(filename, filename)

    def difile(self, filename: str):
        """The DIFile of a source file or cell (one per name)."""
        filename = self.artifact_name(filename)
        if filename not in self.files:
            import os
            self.files[filename] = self.module.add_debug_info("DIFile", {
                "filename": os.path.basename(filename) if os.path.isabs(filename) else filename,
                "directory": os.path.dirname(filename) if os.path.isabs(filename) else "",
            })
        return self.files[filename]

    def function(self, tf: TypedFunction, read_only: frozenset = frozenset()) -> ir.Function:
        """The ``ir.Function`` of device function ``tf`` whose array parameters named in
        ``read_only`` are read through the read-only data cache (``ld.global.nc``).

        Declared on first use and queued in :attr:`pending` for lowering: one LLVM
        function per set of read-only parameters a call passes (a call's array argument
        counts when it is a kernel parameter the kernel never writes, see
        :meth:`FunctionLowerer.bind_kernel_params`). Device functions are inlined at
        ``opt`` ≥ 1, so the variants cost no code; nvcc reaches the same ``LDG.E.CONSTANT``
        after inlining a ``const __restrict__`` pointer into its callee.
        """
        key = (tf.symbol, read_only)
        fn = self.functions.get(key)
        if fn is None:
            name = tf.symbol if not read_only else f"{tf.symbol}_nc{len(self.functions)}"
            fn = self.functions[key] = _declare_function(self, tf, name)
            if read_only and getattr(self.options, "opt", 3) and \
                    inline_ops(tf, self.inline_sizes) <= MAX_INLINED_OPS:
                # inlined before LLVM's argument promotion (O3) can move a load of a
                # read-only parameter into the caller, which drops its !invariant.load
                # (rd(x, 0) read x with ld.global, not ld.global.nc); a bigger one (a
                # chain of functions each calling the next twice doubles per level) is
                # left to LLVM's inliner and its cost model (compiler/budget.py)
                fn.attributes.add("alwaysinline")
            self.pending.append((tf, fn, read_only))
        return fn

    def subprogram(self, tf: TypedFunction, fn: ir.Function):
        """Attach a DISubprogram to ``fn`` (None without line info)."""
        if self.cu is None:
            return None
        line = tf.source.first_line + tf.tree.lineno - 1
        sp = self.module.add_debug_info("DISubprogram", {
            "name": tf.name, "linkageName": fn.name, "file": self.difile(tf.source.filename),
            "line": line, "type": self.module.add_debug_info(
                "DISubroutineType", {"types": self.module.add_metadata([])}),
            "scopeLine": line, "unit": self.cu,
            "spFlags": ir.DIToken("DISPFlagDefinition | DISPFlagOptimized"
                                  if getattr(self.options, "opt", 3) else "DISPFlagDefinition"),
        }, is_distinct=True)
        fn.set_metadata("dbg", sp)
        return sp

    def location(self, line: int, column: int, scope):
        """A new ``!DILocation(column: C, line: L, scope: S)`` node.

        The same text as ``module.add_debug_info("DILocation", ...)`` (operands
        in its sorted order), without its module-wide de-duplication: that
        hashes the key, and a key holding ``scope`` hashes the whole
        DISubprogram → DICompileUnit tree again (~20 µs a location, ~2 ms for
        a 100-location kernel). Callers keep one node per (line, column) and
        scope (:meth:`FunctionLowerer.loc`); LLVM uniques equal nodes anyway.
        """
        return _Location(self.module, False, "DILocation",
                         (("column", column), ("line", line), ("scope", scope)),
                         name=str(len(self.module.metadata)))

    def unroll_full_md(self):
        """The ``llvm.loop`` node asking for a full unroll (``#pragma unroll`` in CUDA C++):
        ``!N = !{!N, !{!"llvm.loop.unroll.full"}}``, one per loop as LLVM requires."""
        if self._unroll_full is None:
            self._unroll_full = self.module.add_metadata(
                [ir.MetaDataString(self.module, "llvm.loop.unroll.full")])
        node = ir.MDValue(self.module, [], name=str(len(self.module.metadata)))
        node.operands = (node, self._unroll_full)  # a loop ID refers to itself
        return node

    def empty_md(self):
        """The module's empty metadata node (``!{}``, what ``!invariant.load`` takes)."""
        if self._empty_md is None:
            self._empty_md = self.module.add_metadata([])
        return self._empty_md

    def dynamic_shared(self):
        """The ``extern .shared .align 16 .b8`` buffer every ``wl.dynamic_shared_array``
        views (PTX ISA, "Shared State Space": an external shared array without size is
        the kernel's dynamic shared memory; CUDA's ``extern __shared__``)."""
        g = self.shared.get(DYNAMIC_SHARED)
        if g is None:
            g = ir.GlobalVariable(self.module, ir.ArrayType(ir.IntType(8), 0), DYNAMIC_SHARED,
                                  addrspace=3)
            g.linkage = "external"
            g.align = 16
            g.type = ir.PointerType(addrspace=3)
            self.shared[DYNAMIC_SHARED] = g
        return g

    def declare(self, name: str, ret, args, attrs=()):
        """An external function (NVVM intrinsic, libdevice ``__nv_*``, ``vprintf``)."""
        fn = self.decls.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, list(args)), name)
            for a in attrs:
                fn.attributes.add(a)
            self.decls[name] = fn
        return fn

    def cstring(self, text: str):
        """A NUL-terminated constant string in the global address space."""
        if text not in self.strings:
            data = bytearray(text.encode("utf-8")) + b"\0"
            ty = ir.ArrayType(ir.IntType(8), len(data))
            g = ir.GlobalVariable(self.module, ty, f".str.{len(self.strings)}", addrspace=1)
            g.linkage = "private"
            g.global_constant = True
            g.unnamed_addr = True
            g.initializer = ir.Constant(ty, data)
            g.align = 1
            g.type = ir.PointerType(addrspace=1)
            self.strings[text] = g
        return self.strings[text]


class FunctionLowerer(ExprLowerer):
    """Lowers one typed function (statements here; expressions in ExprLowerer)."""

    def __init__(self, mctx: ModuleContext, tf: TypedFunction, fn: ir.Function,
                 read_only: frozenset = frozenset()):
        self.m = mctx
        self.tf = tf
        self.fn = fn
        self.read_only = read_only           # array parameters read with ld.global.nc
        self.source = tf.source
        self.filename = mctx.artifact_name(tf.source.filename)  # in runtime messages
        self.sp = mctx.subprogram(tf, fn)
        self.locs: dict = {}
        entry = fn.append_basic_block("entry")
        body = fn.append_basic_block("body")
        self.ab = ir.IRBuilder(entry)        # allocas
        self.b = ir.IRBuilder(body)
        self.body_block = body
        self.vars: dict = {}
        self.loops: list = []                # (continue_block, break_block)
        self.tid_value = None
        self.float_consts: dict = {}         # this statement's float constants: see expr
        self.cur_line = self.source.first_line + tf.tree.lineno - 1  # for runtime messages
        self.cur_col = 1 + self.source.col_offset   # 1-based, for index_checks' messages
        loc = self.loc(tf.tree)
        self.ab.debug_metadata = loc
        self.b.debug_metadata = loc

    # -- locations -----------------------------------------------------------
    def loc(self, node):
        """The DILocation of ``node``: file/cell line and 1-based column."""
        if self.sp is None:
            return None
        line = self.source.first_line + getattr(node, "lineno", self.tf.tree.lineno) - 1
        col = getattr(node, "col_offset", 0) + 1 + self.source.col_offset
        di = self.locs.get((line, col))
        if di is None:
            di = self.locs[line, col] = self.m.location(line, col, self.sp)
        return di

    def visit(self, node):
        """Lower ``node`` with its debug location; foreign errors become internal errors."""
        prev, prev_line, prev_col = self.b.debug_metadata, self.cur_line, self.cur_col
        if hasattr(node, "lineno"):
            self.b.debug_metadata = self.loc(node)
            self.cur_line = self.source.first_line + node.lineno - 1
            self.cur_col = getattr(node, "col_offset", 0) + 1 + self.source.col_offset
        try:
            result = getattr(self, "visit_" + type(node).__name__)(node)
            if self.float_consts and isinstance(node, ast.stmt):
                self.check_float_consts()
            return result
        except (KernelCompileError, InternalCompilerError):
            raise
        except ConstRangeError as exc:  # a constant its float type cannot hold
            raise compile_error(self.source, node, str(exc), exc.hint) from None
        except RecursionError:  # the user's nesting, not our bug
            raise compile_error(self.source, node, "expression nested too deeply") from None
        except MemoryError:  # the machine's limit, not a bug
            raise
        except Exception as exc:  # noqa: BLE001 - re-raised as our bug, located at node
            raise internal_error(exc, "lower", self.m.typed.name,
                                 f"options {self.m.options!r}", self.source, node) from exc
        finally:
            self.b.debug_metadata = prev
            self.cur_line, self.cur_col = prev_line, prev_col

    # -- storage -------------------------------------------------------------
    def alloca(self, ty, name=""):
        """Entry-block storage for a local of type ``ty`` (a tuple of allocas for aggregates),
        named after the Python variable so the IR reads like the source."""
        name = ir_name(name)
        if isinstance(ty, Scalar):
            return self.ab.alloca(llty(ty), name=name)
        if isinstance(ty, Vector):
            # x, y, z, w; a transformation's p.x..q.w; a longer vector's 0, 1, ...
            parts = ("p.x", "p.y", "p.z", "q.x", "q.y", "q.z", "q.w") if ty.n == 7 else \
                "xyzw" if ty.n <= 4 else [str(k) for k in range(ty.n)]
            return tuple(self.ab.alloca(llty(ty.elem), name=f"{name}.{parts[k]}")
                         for k in range(ty.n))
        if isinstance(ty, Matrix):
            return tuple(self.ab.alloca(llty(ty.elem), name=f"{name}.{k // ty.cols}{k % ty.cols}")
                         for k in range(ty.rows * ty.cols))
        if isinstance(ty, TupleType):
            return tuple(self.alloca(e, f"{name}.{k}") for k, e in enumerate(ty.elems))
        if isinstance(ty, StructType):
            return tuple(self.alloca(ft, f"{name}.{fname}") for fname, ft in ty.fields)
        if isinstance(ty, ArrayType):   # an array field of a struct variable
            return ArraySlot(self.ab.alloca(ir.PointerType(addrspace=1), name=f"{name}.ptr"),
                             [self.ab.alloca(I32, name=f"{name}.shape{k}")
                              for k in range(ty.ndim)],
                             [self.ab.alloca(I32, name=f"{name}.stride{k}")
                              for k in range(ty.ndim)], ty)
        raise TypeError(f"no storage for {ty!r}")

    def store_var(self, slot, value):
        """Store a (possibly aggregate) value into its alloca(s)."""
        if isinstance(slot, ArraySlot):
            for s, v in zip([slot.ptr, *slot.shape, *slot.strides],
                            [value.ptr, *value.shape, *value.strides]):
                self.b.store(v, s)
            return
        if isinstance(slot, tuple):
            for s, v in zip(slot, value):
                self.store_var(s, v)
        else:
            self.b.store(value, slot)

    def load_var(self, slot):
        """Load a (possibly aggregate) value from its alloca(s)."""
        if isinstance(slot, ArraySlot):
            return ArrayVal(self.b.load(slot.ptr), [self.b.load(s) for s in slot.shape],
                            [self.b.load(s) for s in slot.strides], slot.ty)
        if isinstance(slot, tuple):
            return tuple(self.load_var(s) for s in slot)
        return self.b.load(slot, name=slot.name.removesuffix(".addr"))

    def var_slot(self, name):
        """The alloca(s) of local ``name``, created in the entry block on first use."""
        if name not in self.vars:
            self.vars[name] = self.alloca(self.tf.locals[name], name)
        return self.vars[name]

    # -- function body ---------------------------------------------------------
    def lower(self):
        """Emit the whole function body."""
        tf = self.tf
        if tf.is_kernel:
            self.bind_kernel_params()
        else:
            self.bind_func_params()
        self.block(tf.tree.body)
        if not self.b.block.is_terminated:
            if tf.ret == NONE:
                self.b.ret_void()
            else:
                zero = [ir.Constant(t, None) for t in _ret_types(tf.ret)]
                self.ret_values(zero)
        self.ab.branch(self.body_block)

    def bind_kernel_params(self):
        """Unpack the entry parameters (ABI structs) into locals and array values."""
        layout = abi.param_layout(self.tf.params)
        args = self.fn.args
        for slot, arg in zip(layout[1:], args[1:]):
            ty = slot.type
            arg.name = short = ir_name(slot.name)
            if isinstance(ty, ArrayType):
                nd = ty.ndim
                strides = [self.b.extract_value(arg, [2, k], name=f"{short}.stride{k}")
                           for k in range(nd)]
                if self.m.unit_inner_stride:  # the runtime guarantees it (CompileOptions)
                    strides[-1] = ir.Constant(ir.IntType(32), 1)
                # an array the kernel never writes (its own analysis, device calls and
                # aliases included) is read through the read-only data cache; the runtime
                # guarantees no written argument shares its memory (CompileOptions)
                ro = self.m.read_only_cache and slot.name not in self.tf.written_params
                self.vars[slot.name] = ArrayVal(
                    self.b.extract_value(arg, 0, name=f"{short}.ptr"),
                    [self.b.extract_value(arg, [1, k], name=f"{short}.shape{k}")
                     for k in range(nd)], strides, ty, invariant=ro)
                continue
            if isinstance(ty, Scalar) and ty.is_bf16:   # 16 bits in the buffer
                from warp_lab.compiler.bf16 import from_bits
                v = from_bits(self.b, arg)
            elif isinstance(ty, Scalar):
                v = self.b.icmp_unsigned("!=", arg, ir.Constant(arg.type, 0)) \
                    if ty.is_bool else arg
            elif isinstance(ty, StructType):
                v = self.from_aggregate(arg, ty)
            else:
                n = ty.n if isinstance(ty, Vector) else ty.rows * ty.cols
                v = tuple(self.b.extract_value(arg, k) for k in range(n))
            self.vars[slot.name] = self.alloca(ty, f"{slot.name}.addr")  # as clang names it
            self.store_var(self.vars[slot.name], v)
        self.entry_tid(args[0], self.m.entry_guard)

    def from_aggregate(self, agg, ty):
        """The Python-side value of ``agg``, an LLVM aggregate of
        :func:`~warp_lab.compiler.abi.llvm_memory_type` ``ty`` (a struct parameter)."""
        if isinstance(ty, Scalar):
            return self.b.icmp_unsigned("!=", agg, ir.Constant(agg.type, 0)) \
                if ty.is_bool else agg
        if isinstance(ty, (Vector, Matrix)):
            n = ty.n if isinstance(ty, Vector) else ty.rows * ty.cols
            return tuple(self.b.extract_value(agg, k) for k in range(n))
        if isinstance(ty, ArrayType):
            nd = ty.ndim
            return ArrayVal(self.b.extract_value(agg, 0),
                            [self.b.extract_value(agg, [1, k]) for k in range(nd)],
                            [self.b.extract_value(agg, [2, k]) for k in range(nd)], ty)
        return tuple(self.from_aggregate(self.b.extract_value(agg, k), ft)
                     for k, (_, ft) in enumerate(ty.fields))

    def bind_func_params(self):
        """Rebuild a device function's flattened parameters into values."""
        args = list(self.fn.args)
        for name, ty in self.tf.params:
            n = len(_flat_types(ty))
            part, args = args[:n], args[n:]
            for a in part:
                a.name = ir_name(name)
            val = unflatten(part, ty)
            if isinstance(ty, ArrayType):
                val.invariant = name in self.read_only
                self.vars[name] = val
            else:
                self.vars[name] = self.alloca(ty, f"{name}.addr")
                self.store_var(self.vars[name], val)

    def entry_tid(self, launch_dim, guard: bool):
        """Compute ``wl.tid()`` once at entry; with ``guard``, threads past the extent return.

        The guard covers the ``launch_ndim`` axes (x only when ``wl.tid()`` is
        unused): ``ctaid.x * ntid.x + tid.x < launch_dim.x`` and so on, so
        ``dim=N`` runs exactly N threads of the last block. Without it and
        without ``wl.tid()`` nothing is emitted.
        """
        if not guard and not self.m.typed.uses_tid:
            return
        n = self.m.typed.launch_ndim
        axes = "xyz"[:n]
        guard_loc = self.b.debug_metadata
        call = self.first_tid_call()
        if call is not None:  # the index math belongs to the line that asks for it
            self.b.debug_metadata = self.loc(call)
        if n == 4:
            idx, vals = self.tid4(launch_dim)
            axes = "xy"
        else:
            idx = {a: self.global_index(a) for a in axes}
            vals = [idx[a] for a in reversed(axes)]  # (z, y, x) order: slowest first
        self.b.debug_metadata = guard_loc  # the bounds check is the kernel's own (def line)
        self.tid_value = vals[0] if n == 1 else tuple(vals)
        if not guard:
            return
        out = None
        for k, a in enumerate(axes):
            dim = self.b.extract_value(launch_dim, k)
            c = self.b.icmp_unsigned(">=", idx[a], dim)
            out = c if out is None else self.b.or_(out, c)
        exit_bb = self.fn.append_basic_block("tid_out_of_range")
        run_bb = self.fn.append_basic_block("tid_in_range")
        self.b.cbranch(out, exit_bb, run_bb)
        self.b.position_at_end(exit_bb)
        self.b.ret_void()
        self.b.position_at_end(run_bb)

    def tid4(self, launch_dim):
        """``i, j, k, l = wp.tid()`` of a Warp-dialect 4-D launch (warp_lab's geometry,
        ``runtime.launch._warp_geometry``): grid ``(cb * J, ceil(K / ntid.y), I)`` with
        ``cb = ceil(L / ntid.x)`` blocks per ``l`` row, so ``j = ctaid.x / cb``, ``l =
        (ctaid.x - j * cb) * ntid.x + tid.x``, ``k`` is the y index and ``i = ctaid.z``;
        the hidden ``launch_dim`` holds ``(L, K, I)``.

        Returns:
            ``({"x": l, "y": k}, [i, j, k, l])``: the guarded indices and the tid.
        """
        b = self.b
        ntx, cx = self.sreg("ntid.x"), self.sreg("ctaid.x")
        one = ir.Constant(ir.IntType(32), 1)
        width = b.extract_value(launch_dim, 0)
        cb = b.udiv(b.add(width, b.sub(ntx, one)), ntx, name="blocks_per_row")
        j = b.udiv(cx, cb, name="tid.j")
        col = b.sub(cx, b.mul(j, cb))
        l_ = b.add(b.mul(col, ntx), self.sreg("tid.x"), name="tid.l")
        k = self.global_index("y")
        i = self.sreg("ctaid.z")
        return {"x": l_, "y": k}, [i, j, k, l_]

    def first_tid_call(self):
        """The first ``wl.tid()`` call in the kernel body (source order), or None."""
        calls = [n for n in walk(self.tf.tree) if isinstance(n, ast.Call)
                 and isinstance(n.func, (ast.Attribute, ast.Name))
                 and getattr(n.func, "attr", getattr(n.func, "id", None)) == "tid"]
        return min(calls, key=lambda n: (n.lineno, n.col_offset), default=None)

    def block(self, stmts):
        """Lower a statement list, stopping after a terminator (return, break, continue)."""
        for s in stmts:
            if self.b.block.is_terminated:
                break
            self.visit(s)

    def ret_values(self, flat):
        """Return flattened values: void, one scalar, or a literal struct."""
        if not flat:
            self.b.ret_void()
        elif len(flat) == 1:
            self.b.ret(flat[0])
        else:
            agg = ir.Constant(self.fn.function_type.return_type, ir.Undefined)
            for k, v in enumerate(flat):
                agg = self.b.insert_value(agg, v, k)
            self.b.ret(agg)

    # -- statements -------------------------------------------------------------
    def visit_Pass(self, node):
        pass

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return
        self.expr(node.value)

    def visit_Assign(self, node):
        value = self.expr(node.value)
        for target in node.targets:
            self.store(target, value, node.value.wl_ty)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self.store(node.target, self.expr(node.value), node.value.wl_ty)

    def store(self, target, value, vty):
        """Store ``value`` of type ``vty`` into an assignment target."""
        if isinstance(target, (ast.Tuple, ast.List)):
            parts = vty.elems if isinstance(vty, TupleType) else (vty.elem,) * vty.n
            for elt, v, t in zip(target.elts, value, parts):
                self.store(elt, v, t)
            return
        dst = target.wl_var_ty
        if isinstance(target, ast.Name):
            if isinstance(dst, ArrayType):
                self.vars[target.id] = value
                return
            self.store_var(self.var_slot(target.id), self.convert(value, vty, dst))
            return
        self.store_into(target.wl_load, self.convert(value, vty, dst))

    def visit_AugAssign(self, node):
        target = node.target
        binop = node.wl_binop
        if isinstance(target, ast.Name):
            slot = self.var_slot(target.id)
            cur = self.load_var(slot)
            new = self.fused_multiply_add(binop, cur)
            if new is None:
                new = self.binop_values(binop, cur, self.expr(binop.right))
            self.store_var(slot, self.convert(new, binop.wl_ty, target.wl_var_ty))
            return
        load = target.wl_load
        ref = self.element_ref(load)
        cur = self.load_ref(ref)
        new = self.fused_multiply_add(binop, cur)
        if new is None:
            new = self.binop_values(binop, cur, self.expr(binop.right))
        self.store_ref(ref, self.convert(new, binop.wl_ty, target.wl_var_ty))

    def visit_If(self, node):
        c = const_of(node.test)
        if c is not NO_CONST:
            self.block(node.body if c else node.orelse)
            return
        cond = self.truth(node.test)
        then_bb = self.fn.append_basic_block("if.then")
        merge_bb = self.fn.append_basic_block("if.end")
        else_bb = self.fn.append_basic_block("if.else") if node.orelse else merge_bb
        self.b.cbranch(cond, then_bb, else_bb)
        self.b.position_at_end(then_bb)
        self.block(node.body)
        if not self.b.block.is_terminated:
            self.b.branch(merge_bb)
        if node.orelse:
            self.b.position_at_end(else_bb)
            self.block(node.orelse)
            if not self.b.block.is_terminated:
                self.b.branch(merge_bb)
        self.b.position_at_end(merge_bb)

    def visit_While(self, node):
        cond_bb = self.fn.append_basic_block("while.cond")
        body_bb = self.fn.append_basic_block("while.body")
        end_bb = self.fn.append_basic_block("while.end")
        self.b.branch(cond_bb)
        self.b.position_at_end(cond_bb)
        c = const_of(node.test)
        if c is NO_CONST:
            self.b.cbranch(self.truth(node.test), body_bb, end_bb)
        else:
            self.b.branch(body_bb if c else end_bb)
        self.b.position_at_end(body_bb)
        self.loop_body(node.body, cond_bb, end_bb)
        self.b.position_at_end(end_bb)

    def visit_For(self, node):
        if getattr(node, "wl_unroll", None) is not None:  # for x in <tuple>
            from warp_lab.compiler.lower_unroll import lower_unrolled_for
            return lower_unrolled_for(self, node)
        ty = node.wl_range_ty
        rng = range_call(node)
        args = [self.convert(self.expr(a), a.wl_ty, ty) for a in rng.args]
        one = ir.Constant(llty(ty), 1)
        start, stop, step = (ir.Constant(llty(ty), 0), args[0], one) if len(args) == 1 else \
            (args[0], args[1], one) if len(args) == 2 else tuple(args)
        if node.wl_step is None and self.m.debug:
            # Python raises ValueError for a zero step; a GPU has no exception, so
            # like `assert` it is a trap under debug=True and zero iterations otherwise
            from warp_lab.compiler.lower_builtins import emit_trap
            line = self.source.first_line + rng.args[2].lineno - 1
            emit_trap(self, self.b.icmp_signed("!=", step, ir.Constant(step.type, 0)),
                      f"{self.filename}:{line}: range() arg 3 must not be zero")
        if getattr(node, "wl_reversed", False):
            return self.reversed_for(node, ty, start, stop, step)
        counter = self.ab.alloca(llty(ty), name=f"{ir_name(node.target.id)}.counter")
        self.b.store(start, counter)
        cond_bb = self.fn.append_basic_block("for.cond")
        body_bb = self.fn.append_basic_block("for.body")
        inc_bb = self.fn.append_basic_block("for.inc")
        end_bb = self.fn.append_basic_block("for.end")
        self.b.branch(cond_bb)
        self.b.position_at_end(cond_bb)
        i = self.b.load(counter)
        cmp = self.b.icmp_signed if ty.is_signed else self.b.icmp_unsigned
        if node.wl_step is not None:
            cond = cmp("<" if node.wl_step > 0 else ">", i, stop)
        else:
            zero = ir.Constant(llty(ty), 0)
            up = self.b.and_(cmp(">", step, zero), cmp("<", i, stop))
            down = self.b.and_(cmp("<", step, zero), cmp(">", i, stop))
            cond = self.b.or_(up, down)
        self.b.cbranch(cond, body_bb, end_bb)
        self.b.position_at_end(body_bb)
        # a unit step cannot overflow (the counter stops at ``stop``), so it may carry nsw,
        # which lets LLVM widen and unroll the loop as it does nvcc's ``for (int i...)``
        unit = node.wl_step in (1, -1) and ty.is_signed
        if not unit:  # the latch below jumps straight back here: reload the counter
            i = self.b.load(counter)
        self.store_var(self.var_slot(node.target.id),
                       self.convert(i, ty, node.target.wl_var_ty))
        self.loop_body(node.body, inc_bb, end_bb)
        self.b.position_at_end(inc_bb)
        if unit:
            self.b.store(self.b.add(self.b.load(counter), step, flags=["nsw"]), counter)
            latch = self.b.branch(cond_bb)
        else:
            latch = self.step_latch(counter, stop, step, ty, node.wl_step, body_bb, end_bb)
        if _indexes_local_array(node):
            latch.set_metadata("llvm.loop", self.m.unroll_full_md())
        self.b.position_at_end(end_bb)

    def reversed_for(self, node, ty, start, stop, step):
        """``for i in reversed(range(start, stop, step))``: Python's values, last first.

        The loop counts the trip count ``n = len(range(start, stop, step))`` down to 0
        and gives ``i = start + k * step`` for ``k = n - 1, ..., 0``. ``n`` is computed
        from the distance ``stop - start`` (or ``start - stop`` going down) as an unsigned
        number, exact in the counter's width, and ``start + k * step`` wraps to the exact
        value (it lies in the range), so no bound overflows the counter's type: warp-lang's
        ``range.h`` ``iter_reverse`` gives the same values (its ``start - step`` end may
        overflow an ``int``, which this avoids). A zero step is an empty loop, as in Warp
        (Python raises; under ``debug=True`` the caller has trapped already).
        """
        b = self.b
        t = llty(ty)
        zero, one = ir.Constant(t, 0), ir.Constant(t, 1)
        cmp = b.icmp_signed if ty.is_signed else b.icmp_unsigned
        if node.wl_step is not None:
            up = ir.Constant(I1, 1 if node.wl_step > 0 else 0)
        else:
            up = cmp(">", step, zero)
        down = b.icmp_signed("<", step, zero) if ty.is_signed and node.wl_step is None else \
            ir.Constant(I1, 1 if node.wl_step is not None and node.wl_step < 0 else 0)
        nonempty = b.or_(b.and_(up, cmp("<", start, stop)), b.and_(down, cmp(">", start, stop)))
        span = b.select(up, b.sub(stop, start), b.sub(start, stop))
        mag = b.select(up, step, b.neg(step))
        mag = b.select(b.icmp_unsigned("==", mag, zero), one, mag)  # (a zero step: no trips)
        trips = b.select(nonempty, b.add(b.udiv(b.sub(span, one), mag), one), zero)
        counter = self.ab.alloca(t, name=f"{ir_name(node.target.id)}.rcounter")
        b.store(trips, counter)
        cond_bb = self.fn.append_basic_block("rfor.cond")
        body_bb = self.fn.append_basic_block("rfor.body")
        end_bb = self.fn.append_basic_block("rfor.end")
        b.branch(cond_bb)
        b.position_at_end(cond_bb)
        b.cbranch(b.icmp_unsigned("!=", b.load(counter), zero), body_bb, end_bb)
        b.position_at_end(body_bb)
        k = b.sub(b.load(counter), one)
        b.store(k, counter)
        i = b.add(start, b.mul(k, step))
        self.store_var(self.var_slot(node.target.id), self.convert(i, ty, node.target.wl_var_ty))
        self.loop_body(node.body, cond_bb, end_bb)
        b.position_at_end(end_bb)

    def loop_body(self, body, continue_to, break_to):
        """Lower a loop's ``body`` statements where ``continue`` branches to ``continue_to``
        and ``break`` to ``break_to``, then fall through to ``continue_to`` (unless the
        body ended in a branch or return)."""
        self.loops.append((continue_to, break_to))
        self.block(body)
        self.loops.pop()
        if not self.b.block.is_terminated:
            self.b.branch(continue_to)

    def step_latch(self, counter, stop, step, ty, const_step, body_bb, end_bb):
        """Latch of a ``range`` loop whose step is not 1: step only if another element is left.

        ``i + step`` may overflow the counter's type (``range(n - 7, n, 3)``
        with ``n = 2**31 - 1``), which would make the loop run forever, so the
        latch never compares a wrapped sum with ``stop``. A counter of 32 bits
        or fewer steps in 64 bits (``sext(i) + sext(step) < sext(stop)``, no
        overflow possible; the cheapest form for ptxas: matmul_tiled keeps 30
        registers). A 64-bit counter compares the distance still to go
        (``stop - i``, or ``i - stop`` going down: positive inside the body,
        exact as an unsigned number) with ``|step|``: another iteration runs
        iff the distance exceeds it. Either way the loop runs Python's
        ``len(range(start, stop, step))`` times. Returns the back-edge branch.
        """
        b = self.b
        i = b.load(counter)
        if const_step is not None:
            up = ir.Constant(I1, 1 if const_step > 0 or not ty.is_signed else 0)
        else:
            up = b.icmp_signed(">", step, ir.Constant(step.type, 0)) if ty.is_signed \
                else ir.Constant(I1, 1)
        if ty.bits <= 32:
            ext = (lambda v: b.sext(v, I64)) if ty.is_signed else (lambda v: b.zext(v, I64))
            nx = b.add(ext(i), ext(step))
            cmp = b.icmp_signed if ty.is_signed else b.icmp_unsigned
            if isinstance(up, ir.Constant):
                more = cmp("<" if up.constant else ">", nx, ext(stop))
            else:
                more = b.select(up, cmp("<", nx, ext(stop)), cmp(">", nx, ext(stop)))
            stepped = b.trunc(nx, llty(ty))
        else:
            dist = b.select(up, b.sub(stop, i), b.sub(i, stop))
            more = b.icmp_unsigned(">", dist, b.select(up, step, b.neg(step)))
            stepped = None
        nxt = self.fn.append_basic_block("for.step")
        b.cbranch(more, nxt, end_bb)
        b.position_at_end(nxt)
        b.store(stepped if stepped is not None else b.add(i, step), counter)
        return b.branch(body_bb)

    def visit_Break(self, node):
        self.b.branch(self.loops[-1][1])

    def visit_Continue(self, node):
        self.b.branch(self.loops[-1][0])

    def visit_Return(self, node):
        if self.tf.ret == NONE:
            self.b.ret_void()
            return
        if is_fixed_array(self.tf.ret):   # a fixed-size array: its elements, by value
            from warp_lab.compiler.lower_builtins import fixed_array_load
            self.ret_values([fixed_array_load(self, self.expr(node.value))])
            return
        v = self.convert(self.expr(node.value), node.value.wl_ty, self.tf.ret)
        self.ret_values(flatten(v, self.tf.ret))

    def visit_Assert(self, node):
        if not self.m.debug:
            return
        from warp_lab.compiler.lower_builtins import emit_trap
        cond = self.truth(node.test)
        msg = const_of(node.msg) if node.msg is not None else ""
        line = self.source.first_line + node.lineno - 1
        text = (f"{self.filename}:{line}: assertion failed: "
                f"{ast.unparse(node.test)}" + (f": {msg}" if msg else ""))
        emit_trap(self, cond, text)


class _Location(ir.DIValue):
    """A ``DILocation`` node that prints itself with one format string.

    The same text as :class:`llvmlite.ir.DIValue` gives these operands
    (``!N = !DILocation(column: C, line: L, scope: !S)``); its generic printer
    tests each operand's type and assembles the line in pieces, which made the
    locations, most of a kernel's metadata, a fifth of ``str(module)``.
    """

    def _to_string(self):
        (_, column), (_, line), (_, scope) = self.operands
        return (f"!{self.name} = !DILocation(column: {column}, line: {line}, "
                f"scope: {scope.get_reference()})")


def _flat_types(ty):
    """The LLVM types a value of ``ty`` flattens to (function parameters and returns)."""
    if ty == NONE:
        return []
    if isinstance(ty, Scalar):
        return [llty(ty)]
    if isinstance(ty, Vector):
        return [llty(ty.elem)] * ty.n
    if isinstance(ty, Matrix):
        return [llty(ty.elem)] * (ty.rows * ty.cols)
    if isinstance(ty, TupleType):
        return [t for e in ty.elems for t in _flat_types(e)]
    if isinstance(ty, StructType):
        return [t for _, e in ty.fields for t in _flat_types(e)]
    if isinstance(ty, ArrayType):
        space = {"global": 1, "shared": 3, "local": 0}[ty.space]
        return [ir.PointerType(addrspace=space)] + [I32] * (2 * ty.ndim)
    raise TypeError(f"no LLVM type for {ty!r}")


def _ret_types(ty):
    """The LLVM types a device function returns a ``ty`` as: :func:`_flat_types`, save a
    fixed-size array, returned by value as one ``[n x T]`` (``fixed_array_type``)."""
    if is_fixed_array(ty):
        from warp_lab.compiler.lower_builtins import fixed_array_type
        return [fixed_array_type(ty)]
    return _flat_types(ty)


def _declare_function(mctx: ModuleContext, tf: TypedFunction, name: str) -> ir.Function:
    params = [t for _, ty in tf.params for t in _flat_types(ty)]
    rets = _ret_types(tf.ret)
    ret = ir.VoidType() if not rets else rets[0] if len(rets) == 1 else \
        ir.LiteralStructType(rets)
    fn = ir.Function(mctx.module, ir.FunctionType(ret, params), name)
    fn.linkage = "internal"
    return fn


def make_llvm_ir(typed: TypedKernel, options=None, cells: dict | None = None) -> LoweredKernel:
    """Lower a typed kernel to an LLVM IR module (text).

    Args:
        typed: the front end's :class:`~warp_lab.compiler.typed_ast.TypedKernel`.
        options: :class:`~warp_lab.options.CompileOptions` (``fast_math``,
            ``debug``, ``lineinfo``, ``opt`` are read); None for defaults.
        cells: notebook cell name -> the name the module gives it instead (its
            ``DIFile``, debug-mode trap messages; see
            :func:`warp_lab.compiler.cache.artifact_files`); others keep their names.

    Returns:
        a :class:`LoweredKernel`.

    Raises:
        KernelCompileError: an expression nested too deeply, a constant its float
            type cannot hold (located at the user's line).
        InternalCompilerError: lowering failed on a kernel the front end accepted
            (a warp_lab bug), naming the kernel and the line being lowered when known.
    """
    try:
        return _make_llvm_ir(typed, options, cells)
    except (KernelCompileError, InternalCompilerError, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - our bug outside FunctionLowerer.visit: re-raised
        raise internal_error(exc, "lower", typed.name, f"options {options!r}") from exc


def _make_llvm_ir(typed: TypedKernel, options, cells: dict | None) -> LoweredKernel:
    mctx = ModuleContext(typed, options, cells)
    layout = abi.param_layout(typed.params)
    entry = ir.Function(mctx.module, ir.FunctionType(ir.VoidType(),
                                                     abi.llvm_param_types(layout)), typed.entry)
    entry.calling_convention = "ptx_kernel"
    entry.args[0].name = "launch_dim"
    FunctionLowerer(mctx, typed.kernel, entry).lower()
    while mctx.pending:  # device functions, as calls declare them (ModuleContext.function)
        FunctionLowerer(mctx, *mctx.pending.pop(0)).lower()
    text = str(mctx.module)
    text += mctx.keep_shared_whole(text)
    return LoweredKernel(text, typed.entry, typed.params, typed.launch_ndim,
                         typed.shared_bytes, typed.uses_tid, mctx.entry_guard)


#: Longest Python identifier used as it is for an LLVM value name. LLVM cuts local
#: names at 1024 characters (``NonGlobalValueMaxNameSize``), after llvmlite has
#: made them unique with a ``.N`` suffix, so two long names could collide.
_MAX_IR_NAME = 64


def ir_name(name: str) -> str:
    """``name`` shortened for an LLVM value (llvmlite adds ``.N`` to keep names unique)."""
    return name[:_MAX_IR_NAME]


#: Longest constant trip count :func:`_indexes_local_array` asks LLVM to unroll fully.
_UNROLL_LOCAL_MAX_TRIPS = 256


def range_call(node: ast.For) -> ast.Call:
    """The ``range(...)`` call a typed ``range`` loop iterates (inside ``reversed(...)``
    when ``node.wl_reversed``)."""
    return node.iter.args[0] if getattr(node, "wl_reversed", False) else node.iter


def _indexes_local_array(node: ast.For) -> bool:
    """Whether a ``range`` loop should be unrolled fully so a local array can live in registers.

    True for constant bounds with at most :data:`_UNROLL_LOCAL_MAX_TRIPS` trips whose
    body indexes a ``wl.local_array`` with the loop variable: once every index is a
    constant, SROA turns the array into registers (nvcc unrolls such loops for the
    same reason; otherwise the array is ``.local`` memory, ``ld.local``/``st.local``).
    """
    bounds = [const_of(a) for a in range_call(node).args]
    if any(c is NO_CONST or isinstance(c, bool) or not isinstance(c, int) for c in bounds):
        return False
    if not 0 < len(range(*bounds)) <= _UNROLL_LOCAL_MAX_TRIPS:
        return False
    var = node.target.id
    for sub in walk(ast.Module(body=node.body, type_ignores=[])):
        sub = getattr(sub, "wl_load", sub)  # a store target's typed twin
        if isinstance(sub, ast.Subscript) and getattr(getattr(sub.value, "wl_ty", None),
                                                      "space", None) == "local":
            idx = getattr(sub, "wl_indices", None) or [sub.slice]
            if any(isinstance(n, ast.Name) and n.id == var for i in idx for n in walk(i)):
                return True
    return False

