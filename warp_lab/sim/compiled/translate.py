"""PTX → LLVM IR for the compiled tier: one scalar thread per iteration, the grid a loop.

:func:`translate` turns one ``.entry`` of a parsed :class:`~warp_lab.sim.ptx.PtxModule`
(the same decoded instructions the interpreter runs) into an LLVM module holding::

    i32 wl_grid(i8* params, i64* atab, i64 nalloc, i64 block_lo, i64 block_hi,
                i32* dims, i8* local, i64* syms, i64* out)

which runs blocks ``[block_lo, block_hi)`` of the grid, every thread of a block in turn
(x fastest, as the interpreter numbers them), each thread the kernel's PTX as scalar
code: PTX registers are ``alloca`` slots (promoted to SSA by LLVM), basic blocks are LLVM
blocks, a guard is a branch, divergence is the thread's own control flow. This is sound
for what :func:`coverage` admits: no shared memory, barriers, warp-level or atomic
instructions, fences, clocks, so no thread can see another's work within the launch.

Memory (arguments): ``atab`` holds one row of five ``i64`` per global allocation (the
simulator address where it starts and ends, the host address of its bytes, the host
address of its store shadow or 0, and a flag word); ``dims`` the grid and block extents
(``gx gy gz bx by bz``) and the shared-memory sizes; ``local`` the thread's local frame;
``syms`` the addresses of the module's ``.global`` variables, then the
fill word of local memory and the shadow's epoch base. Every global access is
checked against the allocation it lies in and its alignment; every local access against
the ``.local`` variable its address derives from (:mod:`~warp_lab.sim.provenance`, with
memcheck) or the frame.

Anything the interpreter would report, or decide by its scheduling, ends the call with a
*bail*: ``out[0]`` the reason (:data:`BAIL_REASONS`), ``out[1]`` the pc. The engine
then runs the whole launch on the interpreter from the launch's first memory contents,
so findings (kind, line, array, block, thread, message) are the interpreter's own. A
bail is taken for an out-of-bounds or misaligned access, an integer division by zero
under memcheck, two threads storing to one 4-byte word of global memory under memcheck
(a superset of memcheck's ``global_conflict``; :mod:`~warp_lab.sim.store_conflicts`), a
``trap`` or ``printf``/``assert`` call (the index checks' report), an address in the
shared window, and a loop that has gone round 2**24 times in one thread (the
interpreter's hang detection decides whether it ends).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import llvmlite.ir as ir
import numpy as np

from warp_lab.sim.compiled.alu import EMITTERS
from warp_lab.sim.compiled.values import (BOOL, I1, I8, I32, I64, RAW, Unsupported, V, astype,
                                          const, lty, view)
from warp_lab.sim.memops import state_space, vector_width
from warp_lab.sim.memory import LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE
from warp_lab.sim.provenance import address_variable
from warp_lab.sim.ptx import type_dtype

__all__ = ["translate", "coverage", "Translation", "BAIL_REASONS", "ATAB_ROW", "LOOP_LIMIT"]

#: ``out[0]`` after a bail → why the interpreter must run the launch
BAIL_REASONS = {
    1: "an out-of-bounds or misaligned access (the interpreter reports it)",
    2: "an integer division by zero under memcheck (the interpreter reports it)",
    3: "two threads stored to one word of global memory under memcheck (the interpreter "
       "decides whether it is a conflicting store)",
    4: "a trap, printf or assert call (the interpreter runs and reports it)",
    5: "a loop ran 2**24 times in one thread (the interpreter's hang detection decides)",
    6: "an access to the shared-memory window",
}
ATAB_ROW = 5            # i64 fields per allocation row: start, end, host, shadow, flags
LOOP_LIMIT = 1 << 24    # back-edges one thread may take before the interpreter decides
_NC_READ, _WRITTEN = 1, 2

#: opcodes the slice translates besides the arithmetic table
_MEMORY = {"ld", "ldu", "st", "cvta"}
_CONTROL = {"bra", "ret", "exit", "trap", "call"}
#: opcodes that need other threads (or the interpreter's schedule), with the reason
_NEEDS_INTERPRETER = {
    "bar": "a barrier (bar.sync)", "barrier": "a barrier", "bar.warp": "bar.warp.sync",
    "shfl": "a warp shuffle", "vote": "a warp vote", "redux": "a warp reduction (redux)",
    "match": "match.sync", "activemask": "activemask", "atom": "an atomic",
    "red": "an atomic reduction (red)", "membar": "a memory fence", "fence": "a memory fence",
    "nanosleep": "nanosleep", "brx": "an indirect branch (brx.idx)",
}
_CLOCKS = {"clock", "clock64", "globaltimer", "globaltimer_lo", "globaltimer_hi"}
_BAIL_CALLS = {"vprintf", "__assertfail"}


@dataclass
class Translation:
    """What :func:`translate` made: the LLVM IR text and the launch facts the engine needs.

    Attributes:
        ir: LLVM IR of the module (``wl_grid`` and its helper).
        globals: names of the module's ``.global`` variables, in ``syms`` order.
        local_size: bytes of each thread's local frame.
        shadow: whether stores keep a shadow of writers (memcheck's conflict superset).
        granule: bytes of global memory per shadow entry (``uint32`` each).
        nc: whether ``ld.global.nc`` loads and global stores set the flag words (memcheck's
            ``nc_write``).
    """

    ir: str
    globals: list = field(default_factory=list)
    local_size: int = 0
    shadow: bool = False
    nc: bool = False
    granule: int = 4


def coverage(mod, entry: str, checks) -> str | None:
    """Why the compiled tier cannot run ``entry`` of ``mod`` with ``checks``, or None.

    Args:
        mod: the parsed :class:`~warp_lab.sim.ptx.PtxModule`.
        entry: the kernel's name.
        checks: the launch's checks (racecheck, initcheck and the barrier check only have
            something to look at in kernels with shared memory or barriers, which the
            slice does not cover).
    """
    fn = mod.entry(entry)
    for v in mod.variables.values():
        if v.space == "shared":
            return f"shared memory (.shared {v.name}); the compiled tier runs one thread at a time"
        if v.space == "const":
            return f"a .const variable ({v.name})"
    for ins in mod.code[fn.start:fn.end]:
        why = _needs(ins, mod)
        if why:
            return f"{why} at PTX line {ins.line}"
    return None


def _needs(ins, mod) -> str | None:
    op = ins.op
    if op in _NEEDS_INTERPRETER:
        return _NEEDS_INTERPRETER[op]
    if {"f16x2", "bf16", "bf16x2"} & set(ins.types):
        return f"packed half arithmetic ({ins.text})"
    if "shared" in ins.mods or "shared::cta" in ins.mods:
        return "shared memory"
    if "const" in ins.mods:
        return "the .const state space"
    for op_ in [*ins.srcs, *ins.dsts]:
        if isinstance(op_, tuple) and op_ and op_[0] == "s" and op_[1] in _CLOCKS:
            return f"%{op_[1]} (the interpreter's clock counts its steps)"
    if op == "call" and ins.target not in _BAIL_CALLS:
        return f"a call of {ins.target} (device functions are not translated yet)"
    if op not in EMITTERS and op not in _MEMORY and op not in _CONTROL:
        return f"the instruction {op}"
    return None


class Translator:
    """Builds ``wl_grid`` for one entry; see the module docstring. Use :func:`translate`."""

    def __init__(self, mod, entry: str, checks, local_bounds: dict):
        self.mod = mod
        self.fn = mod.entry(entry)
        self.checks = frozenset(checks)
        self.memcheck = "memcheck" in self.checks
        self.local_bounds = local_bounds
        self.local_size = mod.local_size
        self.globals = [v.name for v in mod.variables.values() if v.space == "global"]
        code = mod.code[self.fn.start:self.fn.end]
        self.nc = self.memcheck and any(i.op == "ld" and "nc" in i.mods for i in code)
        self.shadow = False
        #: bytes per shadow entry: the narrowest plain global or generic store, at most 4
        self.granule = min([4] + [type_dtype(i.types[0]).itemsize for i in code
                                  if i.op == "st" and state_space(i) in ("global", "generic")])
        self.ir = ir.Module(name="wl_compiled")
        ptr8, p64, p32 = I8.as_pointer(), I64.as_pointer(), I32.as_pointer()
        fty = ir.FunctionType(I32, [ptr8, p64, I64, I64, I64, p32, ptr8, p64, p64])
        self.f = ir.Function(self.ir, fty, name="wl_grid")
        for a, name in zip(self.f.args, ("params", "atab", "nalloc", "blo", "bhi", "dims",
                                         "local", "syms", "out")):
            a.name = name
        for k in (0, 1, 5, 6, 7, 8):
            self.f.args[k].add_attribute("noalias")
        (self.params, self.atab, self.nalloc, self.blo, self.bhi, self.dims, self.local,
         self.syms, self.out) = self.f.args
        self.entry = self.f.append_basic_block("entry")
        self.ab = ir.IRBuilder(self.entry)     # allocas
        self.b = ir.IRBuilder()
        self.regs: dict = {}
        self.param_cache: dict = {}
        self.locate_fn = self._locate_function()

    # ------------------------------------------------------------------ registers
    def slot(self, idx: int):
        s = self.regs.get(idx)
        if s is None:
            self.ab.position_at_start(self.entry)
            s = self.regs[idx] = self.ab.alloca(lty(self.mod.reg_raw[idx]), name=f"r{idx}")
        return s

    def read(self, op, dt) -> V:
        """``operands.reader``: operand ``op`` read as numpy dtype ``dt``."""
        dt = np.dtype(dt)
        b = self.b
        kind = op[0]
        if kind == "r":
            raw = self.mod.reg_raw[op[1]]
            x = V(b.load(self.slot(op[1])), raw)
            if dt == raw:
                return x
            if raw == BOOL:
                if dt.kind in "iu":
                    return astype(b, x, dt)
                raise Unsupported("a predicate read as a float")
            if dt == BOOL:
                return astype(b, x, BOOL)
            if dt.itemsize == raw.itemsize:
                return view(b, x, dt)
            return view(b, astype(b, x, RAW[dt.itemsize]), dt)
        if kind == "i":
            if dt == BOOL:
                return const(BOOL, op[1] != 0)
            if dt.kind == "f":
                return const(dt, dt.type(op[1]))
            bits = op[1] & ((1 << (8 * dt.itemsize)) - 1)
            return V(ir.Constant(lty(dt), bits), dt)
        if kind == "f":
            bits, nbytes = op[1], op[2]
            val = np.array(bits, RAW[nbytes]).view(np.float32 if nbytes == 4 else np.float64)
            if dt.kind == "f":
                return const(dt, val[()] if dt.itemsize == nbytes else dt.type(val[()]))
            if dt.itemsize == nbytes:
                return V(ir.Constant(lty(dt), bits), dt)
            raise Unsupported("a float immediate read as another width")
        if kind == "s":
            x = V(self.sreg(op[1], op[2]), np.dtype(np.uint32))
            if dt.itemsize == 4 and dt.kind == "u":
                return x
            return view(b, astype(b, x, RAW[dt.itemsize]), dt)
        if kind == "sym":
            a = V(self.symbol(op[1]), np.dtype(np.uint64))
            return view(b, astype(b, a, RAW[dt.itemsize]), dt)
        if kind == "neg":
            x = self.read(op[1], BOOL)
            return V(b.not_(x.v), BOOL)
        raise Unsupported(f"operand {op[0]!r} read as a value")

    def write(self, op, x: V) -> None:
        """``operands.writer``: ``x`` stored in register ``op`` as its raw bits."""
        if op[0] == "_":
            return
        if op[0] != "r":
            raise Unsupported("a destination that is not a register")
        raw = self.mod.reg_raw[op[1]]
        from warp_lab.sim.compiled.values import as_raw
        self.b.store(as_raw(self.b, x, raw).v, self.slot(op[1]))

    def libm(self, name: str, x):
        """A call of the C library's ``double name(double)`` (resolved in the process)."""
        fn = self.ir.globals.get(name)
        if fn is None:
            fn = ir.Function(self.ir, ir.FunctionType(ir.DoubleType(), [ir.DoubleType()]),
                             name=name)
        return self.b.call(fn, [x])

    def symbol(self, name: str):
        """The address of variable ``name`` in its own space (``mov d, var``)."""
        v = self.mod.variables.get(name)
        if v is not None and v.space == "local":
            return ir.Constant(I64, v.offset)
        if name in self.globals:
            p = self.b.gep(self.syms, [ir.Constant(I64, self.globals.index(name))])
            return self.b.load(p)
        if any(p[0] == name for p in self.fn.params):
            raise Unsupported(f"the address of kernel parameter {name}")
        raise Unsupported(f"the symbol {name}")

    def sreg(self, name: str, comp: str):
        """``Machine.sreg`` for this thread (uint32)."""
        c = "xyz".find(comp) if comp in ("x", "y", "z") else 0
        if name == "tid":
            return self.tid[c]
        if name == "ntid":
            return self.dimv[3 + c]
        if name == "ctaid":
            return self.ctaid[c]
        if name == "nctaid":
            return self.dimv[c]
        b = self.b
        k = lambda v: ir.Constant(I32, v)  # noqa: E731
        if name == "laneid":
            return b.and_(self.lin, k(31))
        if name == "warpid":
            return b.lshr(self.lin, k(5))
        if name == "nwarpid":
            return k(64)
        if name == "smid":
            return self.smid
        if name == "nsmid":
            return k(132)
        if name.startswith("lanemask"):
            lane = b.zext(b.and_(self.lin, k(31)), I64)
            one = b.shl(ir.Constant(I64, 1), lane)
            le = b.sub(b.shl(one, ir.Constant(I64, 1)), ir.Constant(I64, 1))
            lt = b.sub(one, ir.Constant(I64, 1))
            full = ir.Constant(I64, 0xFFFFFFFF)
            v = {"eq": one, "lt": lt, "le": le, "gt": b.and_(full, b.not_(le)),
                 "ge": b.and_(full, b.not_(lt))}[name.split("_")[1]]
            return b.trunc(v, I32)
        if name == "dynamic_smem_size":
            return self.dimv[6]
        if name == "total_smem_size":
            return self.dimv[7]
        if name == "warpsz":
            return k(32)
        if name == "gridid":
            return k(1)
        return k(0)

    # ------------------------------------------------------------------ bails
    def bail(self, code: int, ins) -> None:
        """End the call with bail ``code`` at ``ins`` (the builder is left nowhere)."""
        b = self.b
        b.store(ir.Constant(I64, code), self.out)
        b.store(ir.Constant(I64, ins.pc if ins is not None else -1),
                b.gep(self.out, [ir.Constant(I64, 1)]))
        b.ret(ir.Constant(I32, code))

    def bail_if(self, cond, kind, ins) -> None:
        """Bail when ``cond`` (``i1``); ``kind`` a :data:`BAIL_REASONS` code or name."""
        code = {"division_by_zero": 2}.get(kind, kind)
        b = self.b
        bad = self.f.append_basic_block(f"bail{code}_{ins.pc}")
        ok = self.f.append_basic_block(f"ok_{ins.pc}")
        b.cbranch(cond, bad, ok)
        b.position_at_end(bad)
        self.bail(code, ins)
        b.position_at_end(ok)

    # ------------------------------------------------------------------ memory
    def _locate_function(self):
        """``i64 wl_locate(i64* atab, i64 n, i64 addr, i64 size)``: the row of the
        allocation holding ``[addr, addr + size)``, or -1 (``GlobalMemory.locate``)."""
        fty = ir.FunctionType(I64, [I64.as_pointer(), I64, I64, I64])
        f = ir.Function(self.ir, fty, name="wl_locate")
        f.linkage = "internal"
        atab, n, addr, size = f.args
        e, loop, body, nxt, hit, miss = (f.append_basic_block(x) for x in
                                         ("e", "loop", "body", "next", "hit", "miss"))
        b = ir.IRBuilder(e)
        b.branch(loop)
        b.position_at_end(loop)
        k = b.phi(I64)
        k.add_incoming(ir.Constant(I64, 0), e)
        b.cbranch(b.icmp_signed("<", k, n), body, miss)
        b.position_at_end(body)
        row = b.mul(k, ir.Constant(I64, ATAB_ROW))
        lo = b.load(b.gep(atab, [row]))
        hi = b.load(b.gep(atab, [b.add(row, ir.Constant(I64, 1))]))
        end = b.add(addr, size)
        inside = b.and_(b.and_(b.icmp_unsigned(">=", addr, lo), b.icmp_unsigned("<=", end, hi)),
                        b.icmp_unsigned(">=", end, addr))
        b.cbranch(inside, hit, nxt)
        b.position_at_end(nxt)
        k1 = b.add(k, ir.Constant(I64, 1))
        k.add_incoming(k1, nxt)
        b.branch(loop)
        b.position_at_end(hit)
        b.ret(k)
        b.position_at_end(miss)
        b.ret(ir.Constant(I64, -1))
        return f

    def address(self, op):
        """``memops._addr_reader``: the address operand as ``i64`` (a 32-bit base register
        is 32-bit arithmetic: ``[%r+imm]`` wraps modulo 2**32)."""
        if op[0] != "a":
            raise Unsupported("a memory operand that is not an address")
        base, off = op[1], op[2]
        o = ir.Constant(I64, off & 0xFFFFFFFFFFFFFFFF)
        b = self.b
        if base is None:
            return o
        if isinstance(base, tuple):
            r = self.read(base, np.dtype(np.uint64)).v
            if base[0] == "r" and self.mod.reg_raw[base[1]].itemsize < 8:
                if off == 0:
                    return r
                return b.and_(b.add(r, ir.Constant(I64, off & 0xFFFFFFFF)),
                              ir.Constant(I64, 0xFFFFFFFF))
            return r if off == 0 else b.add(r, o)
        return b.add(self.symbol(base), o)

    def aligned(self, addr, size, ins):
        if size > 1:
            mis = b_ne0(self.b, self.b.and_(addr, ir.Constant(I64, size - 1))) if \
                size & (size - 1) == 0 else \
                b_ne0(self.b, self.b.urem(addr, ir.Constant(I64, size)))
            self.bail_if(mis, 1, ins)

    def global_ptr(self, ins, addr, size, store: bool, nc_load: bool):
        """The host pointer of a checked global access of ``size`` bytes at ``addr``; a
        store keeps the shadow of writers (memcheck) and the flag words (``nc``).

        Each access remembers the allocation it hit last (its start ``lo``, the last
        address an access of this size may start at ``lim``, host minus simulator address
        ``delta``; the shadow and row only where used): one range test in the common
        case, :func:`wl_locate`'s scan of the table otherwise."""
        b = self.b
        self.aligned(addr, size, ins)
        shadow = store and self.shadow_on(ins)
        flags = self.nc and (store or nc_load)
        names = [("lo", -1), ("lim", 0), ("delta", 0)] + [("sh", 0)] * shadow + \
            [("row", 0)] * flags
        cache = {k: self._entry_slot(I64, f"c{ins.pc}_{k}", init) for k, init in names}
        fast = b.and_(b.icmp_unsigned(">=", addr, b.load(cache["lo"])),
                      b.icmp_unsigned("<=", addr, b.load(cache["lim"])))
        slow = self.f.append_basic_block(f"locate{ins.pc}")
        done = self.f.append_basic_block(f"located{ins.pc}")
        b.cbranch(fast, done, slow)
        b.position_at_end(slow)
        row = b.call(self.locate_fn, [self.atab, self.nalloc, addr, ir.Constant(I64, size)])
        self.bail_if(b.icmp_signed("<", row, ir.Constant(I64, 0)), 1, ins)
        base = b.mul(row, ir.Constant(I64, ATAB_ROW))
        lo, hi, host, sh = (b.load(b.gep(self.atab, [b.add(base, ir.Constant(I64, k))]))
                            for k in range(4))
        b.store(lo, cache["lo"])
        b.store(b.sub(hi, ir.Constant(I64, size)), cache["lim"])
        b.store(b.sub(host, lo), cache["delta"])
        if shadow:
            b.store(sh, cache["sh"])
        if flags:
            b.store(row, cache["row"])
        b.branch(done)
        b.position_at_end(done)
        ptr = b.add(addr, b.load(cache["delta"]))
        if shadow:
            self._shadow(ins, b.load(cache["sh"]), b.sub(addr, b.load(cache["lo"])), size)
        if flags:
            row = b.load(cache["row"])
            fp = b.gep(self.atab, [b.add(b.mul(row, ir.Constant(I64, ATAB_ROW)),
                                         ir.Constant(I64, 4))])
            b.store(b.or_(b.load(fp), ir.Constant(I64, _WRITTEN if store else _NC_READ)), fp)
        return ptr

    def shadow_on(self, ins) -> bool:
        from warp_lab.sim.racecheck import strong_access
        on = self.memcheck and not strong_access(ins)
        self.shadow |= on
        return on

    def _shadow(self, ins, shadow, off, size):
        """memcheck's conflicting-store superset: each granule (:attr:`granule` bytes, the
        kernel's narrowest plain global store, at most 4) remembers the thread (1 + its
        linear index in the grid) that stored there last; another thread's store to it
        bails (the interpreter then decides whether it is a ``global_conflict``)."""
        b = self.b
        g = self.granule
        shift = {1: 0, 2: 1, 4: 2}[g]
        w0 = b.lshr(off, ir.Constant(I64, shift)) if shift else off
        for k in range(max(1, size // g)):
            w = b.add(w0, ir.Constant(I64, k)) if k else w0
            p = b.inttoptr(b.add(shadow, b.shl(w, ir.Constant(I64, 2))), I32.as_pointer())
            old = b.load(p)
            # written in this launch (above the launch's epoch base) by another thread
            other = b.and_(b.icmp_unsigned(">", old, self.epoch),
                           b.icmp_unsigned("!=", old, self.gid))
            self.bail_if(other, 3, ins)
            b.store(self.gid, p)

    def local_ptr(self, ins, addr, size):
        """The host pointer of a checked local access (``memops.access``, local space)."""
        b = self.b
        self.aligned(addr, size, ins)
        var = address_variable(self.mod, ins)
        bounds = self.local_bounds.get(var) if var is not None and self.memcheck else None
        lo, hi = (bounds if bounds is not None else (0, self.local_size))
        span = hi - lo - size
        rel = b.sub(addr, ir.Constant(I64, lo)) if lo else addr
        over = b.icmp_unsigned(">", rel, ir.Constant(I64, span)) if span >= 0 else \
            ir.Constant(I1, 1)
        self.bail_if(over, 1, ins)
        return b.add(b.ptrtoint(self.local, I64), addr)

    def _entry_slot(self, ty, name, init):
        self.ab.position_at_start(self.entry)
        s = self.ab.alloca(ty, name=name)
        self.init_slots.append((s, ir.Constant(ty, init)))
        return s

    def pointer(self, ins, space, size, store=False):
        """``(host pointer, address)`` for ``ins``'s access; ``generic`` split by window."""
        addr = self.address(ins.srcs[0])
        b = self.b
        nc = "nc" in ins.mods
        if space == "global":
            return self.global_ptr(ins, addr, size, store, nc)
        if space == "local":
            return self.local_ptr(ins, addr, size)
        if space != "generic":
            raise Unsupported(f"{space} accesses")
        rel_l = b.sub(addr, ir.Constant(I64, LOCAL_WINDOW))
        rel_s = b.sub(addr, ir.Constant(I64, SHARED_WINDOW))
        in_s = b.icmp_unsigned("<", rel_s, ir.Constant(I64, WINDOW_SIZE))
        self.bail_if(in_s, 6, ins)
        in_l = b.icmp_unsigned("<", rel_l, ir.Constant(I64, WINDOW_SIZE))
        res = self._entry_slot(I64, f"gp{ins.pc}", 0)
        lb, gb, jb = (self.f.append_basic_block(f"{k}{ins.pc}") for k in ("gl", "gg", "gj"))
        b.cbranch(in_l, lb, gb)
        b.position_at_end(lb)
        b.store(self.local_ptr(ins, rel_l, size), res)
        b.branch(jb)
        b.position_at_end(gb)
        b.store(self.global_ptr(ins, addr, size, store, nc), res)
        b.branch(jb)
        b.position_at_end(jb)
        return b.load(res)

    # ------------------------------------------------------------------ instructions
    def emit_ld(self, ins):
        space = state_space(ins)
        n = vector_width(ins)
        dt = type_dtype(ins.types[0])
        es = dt.itemsize
        d = ins.dsts[0]
        dsts = d[1] if d[0] == "v" else [d]
        b = self.b
        it = ir.IntType(8 * es)
        if space == "param":
            name, off = ins.srcs[0][1], ins.srcs[0][2]
            par = next((p for p in self.fn.params if p[0] == name), None)
            if par is None:
                # a call's .param (only on the printf path, which bails at the call)
                for x in dsts:
                    self.write(x, V(ir.Constant(it, 0), RAW[es]))
                return
            _, poff, psize, _ = par
            if off < 0 or off + es * n > psize:
                raise Unsupported(f"ld.param outside parameter {name}", ins.line)
            for j, x in enumerate(dsts):
                self.write(x, view(b, V(self.param_word(poff + off + es * j, it), RAW[es]), dt))
            return
        ptr = self.pointer(ins, space, es * n)
        for j, x in enumerate(dsts):
            a = b.add(ptr, ir.Constant(I64, es * j)) if j else ptr
            v = b.load(b.inttoptr(a, it.as_pointer()), align=es)
            self.write(x, view(b, V(v, RAW[es]), dt))

    def param_word(self, offset: int, it):
        """The ``it``-wide integer at byte ``offset`` of the parameter buffer, loaded once
        at the function's entry (the buffer does not change during a launch)."""
        key = (offset, it.width)
        v = self.param_cache.get(key)
        if v is None:
            self.ab.position_at_start(self.entry)
            p = self.ab.bitcast(self.ab.gep(self.params, [ir.Constant(I64, offset)]),
                                it.as_pointer())
            v = self.param_cache[key] = self.ab.load(p, align=1)
        return v

    def emit_st(self, ins):
        space = state_space(ins)
        n = vector_width(ins)
        es = type_dtype(ins.types[0]).itemsize
        sop = ins.srcs[1]
        srcs = sop[1] if sop[0] == "v" else [sop]
        if space == "param":
            return   # a call's argument: only before printf/assert, which bail
        b = self.b
        vals = [self.read(x, RAW[es]).v for x in srcs]
        ptr = self.pointer(ins, space, es * n, store=True)
        it = ir.IntType(8 * es)
        for j, v in enumerate(vals):
            a = b.add(ptr, ir.Constant(I64, es * j)) if j else ptr
            b.store(v, b.inttoptr(a, it.as_pointer()), align=es)

    def emit_cvta(self, ins):
        to = "to" in ins.mods
        space = next((s for s in ins.mods if s in ("global", "local")), None)
        if space is None:
            raise Unsupported(f"cvta of {ins.text}", ins.line)
        dt = type_dtype(ins.types[0] if ins.types else "u64")
        if dt.kind != "u" or dt.itemsize not in (4, 8):
            raise Unsupported(f"cvta size .{ins.types}", ins.line)
        b = self.b
        x = self.read(ins.srcs[0], np.dtype(np.uint64)).v
        base = ir.Constant(I64, LOCAL_WINDOW if space == "local" else 0)
        v = b.sub(x, base) if to else b.add(x, base)
        if dt.itemsize == 4:
            v = b.and_(v, ir.Constant(I64, 0xFFFFFFFF))
        self.write(ins.dsts[0], astype(b, V(v, np.dtype(np.uint64)), dt))

    def emit(self, ins):
        op = ins.op
        if op in ("ld", "ldu"):
            return self.emit_ld(ins)
        if op == "st":
            return self.emit_st(ins)
        if op == "cvta":
            return self.emit_cvta(ins)
        fn = EMITTERS.get(op)
        if fn is None:
            raise Unsupported(f"the instruction {op}", ins.line)
        try:
            fn(self, ins)
        except Unsupported as exc:
            if not exc.line:
                exc.line = ins.line
            raise
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            raise Unsupported(f"{ins.text} ({type(exc).__name__}: {exc})", ins.line) from None

    # ------------------------------------------------------------------ the grid
    def build(self) -> str:
        mod, fn, b = self.mod, self.fn, self.b
        code = mod.code
        self.init_slots: list = []
        self.cc = self._entry_slot(I64, "cc", 0)
        self.count = self.ab.alloca(I64, name="count")
        self.ab.store(ir.Constant(I64, 0), self.count)
        self.iters = self._entry_slot(I64, "iters", 0)
        # leaders: the entry, labels, branch targets, the instruction after a branch
        leaders = {fn.start} | set(fn.labels.values())
        for ins in code[fn.start:fn.end]:
            if ins.op in _CONTROL:
                leaders.add(ins.pc + 1)
                if ins.op == "bra":
                    leaders.add(ins.target)
        leaders = sorted(p for p in leaders if fn.start <= p <= fn.end)
        blocks = {p: self.f.append_basic_block(f"pc{p}") for p in leaders}
        loop_b, body_b, loop_t, start_t, end_t, done = (self.f.append_basic_block(x) for x in (
            "loop_b", "body_b", "loop_t", "start_t", "end_t", "done"))
        bvar = self.ab.alloca(I64, name="b")
        tvar = self.ab.alloca(I32, name="t")
        dims = [self.ab.load(self.ab.gep(self.dims, [ir.Constant(I64, k)])) for k in range(8)]
        self.dimv = dims
        gx, gy, _, bx, by, bz = dims[:6]
        self.epoch = self.ab.trunc(self.ab.load(self.ab.gep(
            self.syms, [ir.Constant(I64, len(self.globals) + 1)])), I32)
        self.ab.store(self.blo, bvar)
        b.position_at_end(self.entry)
        bs = b.mul(b.mul(bx, by), bz)
        b.branch(loop_b)
        # blocks in linear order (x fastest)
        b.position_at_end(loop_b)
        bi = b.load(bvar)
        b.cbranch(b.icmp_signed("<", bi, self.bhi), body_b, done)
        b.position_at_end(body_b)
        b32 = b.trunc(bi, I32)
        self.ctaid = (b.urem(b32, gx), b.urem(b.udiv(b32, gx), gy), b.udiv(b32, b.mul(gx, gy)))
        self.smid = b.urem(b32, ir.Constant(I32, 132))
        block_base = b.mul(b32, bs)
        b.store(ir.Constant(I32, 0), tvar)
        self._tid_reset = b.block
        b.branch(loop_t)
        b.position_at_end(loop_t)
        t = b.load(tvar)
        nb = self.f.append_basic_block("next_b")
        b.cbranch(b.icmp_unsigned("<", t, bs), start_t, nb)
        b.position_at_end(nb)
        b.store(b.add(bi, ir.Constant(I64, 1)), bvar)
        b.branch(loop_b)
        # one thread: its coordinates, fresh registers and local frame
        b.position_at_end(start_t)
        self.lin = t
        # the thread's (x, y, z) carried along with t (no division per thread)
        tslots = [self.ab.alloca(I32, name=f"tid{c}") for c in "xyz"]
        self.tid = tuple(b.load(s) for s in tslots)
        # the shadow's writer id: the launch's epoch base + 1 + the thread's linear index
        self.gid = b.add(b.add(block_base, t), b.add(self.epoch, ir.Constant(I32, 1)))
        self.start_t = start_t
        reset_at = b.block
        b.position_at_end(end_t)
        b.store(b.add(t, ir.Constant(I32, 1)), tvar)
        one, zero = ir.Constant(I32, 1), ir.Constant(I32, 0)
        tx1 = b.add(self.tid[0], one)
        wrap_x = b.icmp_unsigned("==", tx1, bx)
        ty1 = b.select(wrap_x, b.add(self.tid[1], one), self.tid[1])
        wrap_y = b.icmp_unsigned("==", ty1, by)
        b.store(b.select(wrap_x, zero, tx1), tslots[0])
        b.store(b.select(wrap_y, zero, ty1), tslots[1])
        b.store(b.select(wrap_y, b.add(self.tid[2], one), self.tid[2]), tslots[2])
        b.branch(loop_t)
        b.position_at_end(done)
        cp = b.gep(self.out, [ir.Constant(I64, 2)])
        b.store(b.add(b.load(cp), b.load(self.count)), cp)
        b.ret(ir.Constant(I32, 0))
        # the kernel's blocks
        for k, p in enumerate(leaders):
            if p == fn.end:
                b.position_at_end(blocks[p])
                b.branch(end_t)
                continue
            nxt = leaders[k + 1]
            b.position_at_end(blocks[p])
            b.store(b.add(b.load(self.count), ir.Constant(I64, nxt - p)), self.count)
            terminated = False
            for ins in code[p:nxt]:
                terminated = self.emit_control(ins, blocks, end_t, nxt) if \
                    ins.op in _CONTROL else self.emit_guarded(ins)
            if not terminated:
                b.branch(blocks[nxt])
        term = self._tid_reset.instructions[-1]
        b.position_before(term)
        for sl in tslots:
            b.store(ir.Constant(I32, 0), sl)
        # the thread's start: registers zero (as a batch's are), local frame filled
        b.position_at_end(reset_at)
        for idx, s in self.regs.items():
            b.store(ir.Constant(lty(self.mod.reg_raw[idx]), 0), s)
        for s, v in self.init_slots:
            if s.name in ("cc", "iters"):
                b.store(v, s)
        if self.local_size:
            self._fill_local()
        b.branch(blocks[fn.start])
        # the per-instruction caches start empty, once per call
        b.position_at_end(self.entry)
        term = self.entry.instructions[-1]
        b.position_before(term)
        for s, v in self.init_slots:
            b.store(v, s)
        return str(self.ir)

    def _fill_local(self):
        """Each thread's frame starts as ``fill`` repeated (``Machine`` ``fresh_memory``);
        the word is ``dims[8]``... carried in ``syms`` after the globals."""
        b = self.b
        fillp = b.gep(self.syms, [ir.Constant(I64, len(self.globals))])
        word = b.trunc(b.load(fillp), I32)
        base = b.bitcast(self.local, I32.as_pointer())
        for k in range(self.local_size // 4):
            b.store(word, b.gep(base, [ir.Constant(I64, k)]))

    def emit_guarded(self, ins) -> bool:
        b = self.b
        if ins.guard is None:
            self.emit(ins)
            return False
        reg, neg = ins.guard
        p = self.read(("r", reg), BOOL).v
        if neg:
            p = b.not_(p)
        then = self.f.append_basic_block(f"g{ins.pc}")
        cont = self.f.append_basic_block(f"c{ins.pc}")
        b.cbranch(p, then, cont)
        b.position_at_end(then)
        self.emit(ins)
        b.branch(cont)
        b.position_at_end(cont)
        return False

    def emit_control(self, ins, blocks, end_t, nxt) -> bool:
        """A branch, ``ret``/``exit``, ``trap`` or call; True: the block is terminated."""
        b = self.b
        cond = None
        if ins.guard is not None:
            reg, neg = ins.guard
            cond = self.read(("r", reg), BOOL).v
            if neg:
                cond = b.not_(cond)
        if ins.op == "bra":
            target = blocks[ins.target]
            if ins.target <= ins.pc:   # a back edge: count the thread's turns
                back = self.f.append_basic_block(f"back{ins.pc}")
                if cond is not None:
                    b.cbranch(cond, back, blocks[nxt])
                else:
                    b.branch(back)
                b.position_at_end(back)
                n = b.add(b.load(self.iters), ir.Constant(I64, 1))
                b.store(n, self.iters)
                self.bail_if(b.icmp_unsigned(">=", n, ir.Constant(I64, LOOP_LIMIT)), 5, ins)
                b.branch(target)
            elif cond is not None:
                b.cbranch(cond, target, blocks[nxt])
            else:
                b.branch(target)
            return True
        if ins.op in ("ret", "exit"):
            if cond is not None:
                b.cbranch(cond, end_t, blocks[nxt])
            else:
                b.branch(end_t)
            return True
        # trap, printf, assert: the interpreter runs them
        if cond is not None:
            bad = self.f.append_basic_block(f"trap{ins.pc}")
            b.cbranch(cond, bad, blocks[nxt])
            b.position_at_end(bad)
        self.bail(4, ins)
        return True


def b_ne0(b, v):
    return b.icmp_unsigned("!=", v, ir.Constant(v.type, 0))


def local_bounds(mod) -> dict:
    """``.local`` variable name → ``(start, end)`` in the thread's frame (the
    interpreter's ``Machine.var_bounds`` for the local space)."""
    out = {}
    for vars_ in mod.local_vars.values():
        for v in vars_:
            out[v.name] = (v.offset, v.offset + v.size)
    return out


def translate(mod, entry: str, checks) -> Translation:
    """LLVM IR for ``entry`` of ``mod`` (see the module docstring).

    Raises:
        Unsupported: the kernel uses something the compiled tier does not translate
            (:func:`coverage` says what without translating).
    """
    why = coverage(mod, entry, checks)
    if why:
        raise Unsupported(why)
    t = Translator(mod, entry, checks, local_bounds(mod))
    text = t.build()
    return Translation(text, t.globals, mod.local_size, t.shadow, t.nc, t.granule)
