"""Memory instructions: ``ld``, ``ldu``, ``st``, ``atom``, ``red``, ``cvta``, ``isspacep``
(PTX ISA 9.7.9), with bounds/alignment checks and coalescing / bank-conflict metrics.

Every access is resolved to ``(buffer, byte offsets)`` for the lanes that
execute, checked (inside an allocation / the block's shared memory / the
thread's local memory, aligned to the access size; with memcheck, inside the
``.shared``/``.local`` variable the address derives from when
:mod:`~warp_lab.sim.provenance` knows it) *before* any byte is touched, and
then done as one numpy gather or scatter. A failed check records
an ``out_of_bounds`` or ``misaligned`` finding naming block, thread, PTX line,
source line and address, and stops the launch (the GPU would abort it with
an illegal-address error). Shared accesses also feed racecheck
(:mod:`~warp_lab.sim.racecheck`) and initcheck (:mod:`~warp_lab.sim.initcheck`).

Address widths (PTX ISA "Addresses as Operands", "Generic Addressing", ``cvta``):
``.shared``/``.local``/``.const`` addresses are offsets within their state
space and may live in 32-bit registers (LLVM's ``--nvptx-short-ptr``, nvcc's
default); an address ``[%r+imm]`` with a 32-bit register is computed modulo
2**32, as the hardware's 32-bit address arithmetic does. ``cvta`` adds the
space's window base (``cvta.to``: subtracts it); its ``.u32`` form keeps the
low 32 bits. Shared and local windows are 4 GiB-aligned, so the low 32 bits of a
generic shared/local address are its state-space offset. ``.const`` variables
live in global memory: their const-space address is the offset from the
launch's first ``.const`` allocation (``Machine.const_base``).
"""

from __future__ import annotations

import numpy as np

from warp_lab.errors import SimulatorError
from warp_lab.sim import fp
from warp_lab.sim.racecheck import cas_seeds, strong_access
from warp_lab.sim.memory import LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE
from warp_lab.sim.operands import RAW, reader, writer
from warp_lab.sim.provenance import address_variable
from warp_lab.sim.ptx import type_dtype
from warp_lab.sim.result import code_place
from warp_lab.sim.store_conflicts import check_store

__all__ = ["MEMORY", "access", "state_space", "vector_width"]

_SPACES = ("global", "shared", "local", "const", "param")
U64 = np.dtype(np.uint64)
_MASK32 = np.uint64(0xFFFF_FFFF)
_MASK64 = np.uint64(0xFFFF_FFFF_FFFF_FFFF)


def state_space(ins) -> str:
    """The state space a memory instruction names (PTX ISA 5.1: ``global``, ``shared``
    (``shared::cta`` too), ``local``, ``const``, ``param``), else ``"generic"``."""
    for s in ins.mods:
        if s in _SPACES:
            return s
        if s == "shared::cta":
            return "shared"
    return "generic"


def vector_width(ins) -> int:
    """The element count of a vector memory access (``.v2``/``.v4``/``.v8``: 2, 4, 8), else 1
    (PTX ISA 9.7.9.8 ``ld``)."""
    for s in ins.mods:
        if s in ("v2", "v4", "v8"):
            return int(s[1:])
    return 1


def _addr_reader(op, mod, line):
    if op[0] != "a":
        raise SimulatorError(f"PTX line {line}: expected an address operand [..]", ptx_line=line)
    base, off = op[1], op[2]
    o = np.uint64(off & 0xFFFFFFFFFFFFFFFF)
    if base is None:
        return lambda m: o
    if isinstance(base, tuple):
        r = reader(base, U64, mod, line)
        if base[0] == "r" and mod.reg_raw[base[1]].itemsize < 8:
            # a 32-bit address register: 32-bit address arithmetic, [%r+imm] wraps
            # modulo 2**32 (PTX ISA "Addresses as Operands": addresses are
            # zero-extended or truncated to the address width)
            if off == 0:
                return r
            o32 = np.uint64(off & 0xFFFF_FFFF)
            return lambda m: (r(m) + o32) & _MASK32
        if off == 0:
            return r
        return lambda m: r(m) + o
    return lambda m: np.uint64(m.symbol(base, line)) + o


def address_of(m, ins):
    """The address operand of memory instruction ``ins`` as its lanes hold it now in
    machine ``m`` (uint64, one per batch thread, or a scalar when uniform)."""
    return _addr_reader(ins.srcs[0], m.mod, ins.line)(m)


# ------------------------------------------------------------------ resolution

def _address_var(ins, mod, space):
    """The shared/local variable ``ins``'s address derives from (``None``: unknown, or a
    global/const/param access)."""
    if space not in ("shared", "local", "generic"):
        return None
    return address_variable(mod, ins)


def access(m, ins, space, addr, idx, size, var=None):
    """Resolve lane addresses to buffer element groups.

    Args:
        m: the machine.
        ins: the instruction (for findings).
        space: state space (``"generic"`` is split by window).
        addr: uint64 addresses of the executing lanes (array, one per lane in ``idx``).
        idx: batch thread index of each lane (int array).
        size: bytes per lane access.
        var: the ``.shared``/``.local`` variable the address derives from
            (:mod:`~warp_lab.sim.provenance`), or ``None``. Given, a shared or local
            access must lie inside that variable, not just inside the window (PTX
            ISA "State Spaces": a variable's address plus an offset within it).

    Returns:
        list of ``(buffer uint8 array, lane positions or None, byte offsets)``.
        A bad access records a finding and stops the launch (never returns).
    """
    if space == "generic":
        rel_s = addr - np.uint64(SHARED_WINDOW)
        rel_l = addr - np.uint64(LOCAL_WINDOW)
        in_s = rel_s < np.uint64(WINDOW_SIZE)
        in_l = rel_l < np.uint64(WINDOW_SIZE)
        if not in_s.any() and not in_l.any():
            return access(m, ins, "global", addr, idx, size)
        out = []
        for sel, sp, a in ((in_s, "shared", rel_s), (in_l, "local", rel_l),
                           (~(in_s | in_l), "global", addr)):
            if sel.any():
                pos = np.flatnonzero(sel)
                for buf, lanes, off in access(m, ins, sp, a[pos], idx[pos], size, var):
                    out.append((buf, pos if lanes is None else pos[lanes], off))
        return out
    if (addr % np.uint64(size)).any():
        bad = int(np.argmax(addr % np.uint64(size) != 0))
        _fault(m, ins, "misaligned", space, int(addr[bad]), size, int(idx[bad]))
    if space in ("global", "const"):
        # const-space addresses are offsets from the launch's const allocations
        where = _wrap_add(addr, np.uint64(m.const_base)) if space == "const" else addr
        groups, bad = m.memory.locate(where, size)
        if bad >= 0:
            _fault(m, ins, "out_of_bounds", space, int(addr[bad]), size, int(idx[bad]),
                   int(where[bad]))
        return groups
    if space == "shared":
        limit = m.shared_size
        buf, stride, owner = m.shared, m.shared_stride, m.blk[idx]
    elif space == "local":
        limit = m.local_size
        buf, stride, owner = m.local, m.local_size, idx
    else:
        raise SimulatorError(f"PTX line {ins.line}: {space} accesses are not supported here",
                             ptx_line=ins.line)
    bounds = m.var_bounds.get(var) if var is not None else None
    if bounds is not None and bounds[0] == space and "memcheck" in m.checks:
        lo, hi = bounds[1], bounds[2]
    else:
        lo, hi, bounds = 0, limit, None
    # one comparison: below lo wraps around to a huge offset
    span = hi - lo - size
    rel = addr - np.uint64(lo) if lo else addr
    over = rel > np.uint64(span) if span >= 0 else np.ones(addr.shape, bool)
    if over.any():
        bad = int(np.argmax(over))
        _fault(m, ins, "out_of_bounds", space, int(addr[bad]), size, int(idx[bad]),
               var=var if bounds is not None else None)
    return [(buf, None, owner * stride + addr.astype(np.int64))]


def _fault(m, ins, kind, space, addr, size, t, gaddr=None, var=None):
    if "memcheck" not in m.checks and kind == "out_of_bounds":
        sf, sl = m.mod.source_of(ins)
        where = code_place(ins.line, sf, sl)
        raise SimulatorError(f"illegal {space} memory access of {size} bytes at {addr:#x} at "
                             f"{where} (enable memcheck for block/thread details)",
                             ptx_line=ins.line, source_line=sl)
    what = {"out_of_bounds": "out-of-bounds", "misaligned": "misaligned"}[kind]
    extra = place = ""   # place: where the access lies, as the message says it
    if space in ("global", "const"):
        place = _nearest(m.memory, addr if gaddr is None else gaddr)
        if place:
            extra = f" ({place})"
    elif var is not None and kind == "out_of_bounds":
        place, window = _var_place(m, space, var, addr, size)
        extra = f" ({place}; {window})"
    elif space == "shared":
        extra = f" (the block has {m.shared_size} bytes of shared memory)"
    elif space == "local":
        extra = f" (each thread has {m.local_size} bytes of local memory)"
    verb = "write" if ins.op in ("st", "red") else ("atomic" if ins.op == "atom" else "read")
    m.finding(kind, f"{what} {space} {verb} of {size} bytes at address {addr:#x}{extra}",
              ins, t, stop=True, address=addr, size=size, space=space,
              **({"place": place} if place else {}),
              **({"variable": var, "variable_offset": m.var_bounds[var][1]}
                 if var is not None and kind == "out_of_bounds" else {}))


def _var_place(m, space, var, addr, size):
    """``(where, window)``: where an access lies relative to the variable its address
    derives from, and what else lies around it (the block's or thread's memory)."""
    _, lo, hi = m.var_bounds[var]
    what = f"{space} variable {var} of {hi - lo} bytes at offset {lo:#x}"
    if var in m.dynamic_vars:
        what = (f"the dynamic shared memory ({var}, the launch's shared_mem={hi - lo} bytes, "
                f"at offset {lo:#x})")
    below = (lo - addr) % (1 << 32)  # 32-bit offsets wrap: 0xfffffffc is 4 bytes below 0
    if addr < lo or (addr >= hi and 0 < below <= 1 << 31):
        where = f"{below} bytes before {what}"
    elif addr >= hi:
        where = f"{addr - hi} bytes past the end of {what}"
    else:
        where = f"{addr - lo} bytes into {what}, access runs past its end"
    if space == "shared":
        limit, window = m.shared_size, f"the block has {m.shared_size} bytes of shared memory"
    else:
        limit, window = m.local_size, f"each thread has {m.local_size} bytes of local memory"
    if addr + size <= limit:
        window += ", so the access lands in another variable or padding"
    if var in m.dynamic_vars and hi == lo:
        window += ("; a wl.dynamic_shared_array needs the launch to give it memory: "
                   "wl.launch(..., shared_mem=bytes)")
    return where, window


def _nearest(mem, addr):
    best = None
    for base, n, name in mem.allocations():
        d = addr - (base + n) if addr >= base + n else (base - addr if addr < base else 0)
        if best is None or d < best[0]:
            best = (d, base, n, name)
    if best is None:
        return ""
    d, base, n, name = best
    if base <= addr < base + n:
        return f"{addr - base} bytes into {name!r} of {n} bytes, access runs past its end"
    if addr >= base + n:
        return f"{addr - base - n} bytes past the end of {name!r} ({n} bytes at {base:#x})"
    return f"{base - addr} bytes before {name!r} ({n} bytes at {base:#x})"


def _gather(groups, k, es, n):
    raw = RAW[es]
    out = np.empty((k, n), raw)
    ar = np.arange(n)
    for buf, lanes, off in groups:
        view = buf.view(raw)
        e = off // es
        vals = view[e[:, None] + ar] if n > 1 else view[e][:, None]
        if lanes is None:
            out[:] = vals
        else:
            out[lanes] = vals
    return out


def _scatter(groups, vals, es, n):
    raw = RAW[es]
    ar = np.arange(n)
    for buf, lanes, off in groups:
        view = buf.view(raw)
        e = off // es
        v = vals if lanes is None else vals[lanes]
        if n > 1:
            view[e[:, None] + ar] = v
        else:
            view[e] = v[:, 0]


# ------------------------------------------------------------------ metrics

def _distinct_per_warp(warp, key):
    """Sum over warps of the number of distinct ``key`` values (warp ascending)."""
    if key.size == 0:
        return 0
    d = np.diff(key)
    same_w = np.diff(warp) == 0
    if (d[same_w] >= 0).all():
        return int(np.count_nonzero((d != 0) | ~same_w)) + 1
    order = np.lexsort((key, warp))
    k, w = key[order], warp[order]
    return int(np.count_nonzero((np.diff(k) != 0) | (np.diff(w) != 0))) + 1


def _global_metrics(m, ins, addr, idx):
    st = m.mem_stats(ins)
    warp = idx // 32
    nreq = int(np.count_nonzero(np.diff(warp))) + 1 if warp.size else 0
    st.requests += nreq
    st.sectors += _distinct_per_warp(warp, (addr >> np.uint64(5)).astype(np.int64))


def _shared_metrics(m, ins, addr, idx, size):
    """Shared-memory requests, wavefronts and bank conflicts of one instruction.

    A warp's request needs as many wavefronts as the largest number of distinct
    4-byte words it touches in any one of the 32 banks (same word: broadcast, no
    conflict); the minimum is ``ceil(active lanes * size / 128)``.
    """
    met = m.metrics
    warp = idx // 32
    words = (addr >> np.uint64(2)).astype(np.int64)
    nw = max(1, size // 4)
    first = np.ones(warp.size, bool)
    first[1:] = warp[1:] != warp[:-1]
    starts = np.flatnonzero(first)
    nreq = starts.size
    lanes_w = np.diff(np.r_[starts, warp.size])
    ideal = np.maximum(1, -(-lanes_w * size // 128))
    same = ~first[1:]
    d = np.diff(words)
    ends = np.r_[starts[1:], warp.size] - 1
    span = words[ends] - words[starts]
    if nw == 1 and ((d[same] > 0).all() and (span < 32).all() or (d[same] == 0).all()):
        wave = nreq          # distinct consecutive words, or one broadcast word: 1 wavefront
        conflicts = 0
    else:
        if nw > 1:
            words = (words[:, None] + np.arange(nw)).reshape(-1)
            warp = np.repeat(warp, nw)
        row = np.cumsum(np.r_[True, warp[1:] != warp[:-1]]) - 1
        lane = np.arange(warp.size) - np.repeat(np.flatnonzero(np.r_[True, warp[1:] != warp[:-1]]),
                                                np.bincount(row))
        grid = np.full((nreq, 32 * nw), -1, np.int64)
        grid[row, lane] = words
        grid.sort(axis=1)
        distinct = np.ones(grid.shape, bool)
        distinct[:, 1:] = grid[:, 1:] != grid[:, :-1]
        distinct &= grid >= 0
        r, c = np.nonzero(distinct)
        per_bank = np.bincount(r * 32 + (grid[r, c] & 31), minlength=nreq * 32).reshape(nreq, 32)
        wf = per_bank.max(1)
        wave = int(wf.sum())
        conflicts = int(np.maximum(wf - ideal, 0).sum())
    line = ins.line
    met.shared_requests[line] = met.shared_requests.get(line, 0) + nreq
    met.shared_wavefronts[line] = met.shared_wavefronts.get(line, 0) + wave
    met.bank_conflicts[line] = met.bank_conflicts.get(line, 0) + conflicts


# ------------------------------------------------------------------ builders

def _strong(ins, mod=None) -> bool:
    """Whether ``ins`` is a *strong* access (:func:`~warp_lab.sim.racecheck.strong_access`),
    or the load that seeds a compare-and-swap loop (:func:`~warp_lab.sim.racecheck.cas_seeds`,
    part of the atomic it builds): racecheck checks it, as it does atomics, against plain
    accesses only (two strong accesses of one location are morally strong and no data
    race, PTX ISA 8.8 "Memory Consistency Model: Data-race")."""
    return strong_access(ins) or (mod is not None and ins.op == "ld"
                                  and ins.pc in cas_seeds(mod))


def _ld(ins, mod):
    space = state_space(ins)
    strong = _strong(ins, mod)
    n = vector_width(ins)
    t = ins.types[0] if ins.types else None
    if t is None:
        raise SimulatorError(f"PTX line {ins.line}: ld without a type", ptx_line=ins.line)
    dt = type_dtype(t)
    es = dt.itemsize
    d = ins.dsts[0]
    dsts = d[1] if d[0] == "v" else [d]
    if len(dsts) != n:
        raise SimulatorError(f"PTX line {ins.line}: vector width mismatch", ptx_line=ins.line)
    ws = [writer(x, mod, ins.line) for x in dsts]
    aop = ins.srcs[0]
    if space == "param":
        return _ld_param(ins, mod, aop, dt, es, n, ws)
    ra = _addr_reader(aop, mod, ins.line)
    var = _address_var(ins, mod, space)
    nc = "nc" in ins.mods

    def ex(m, mask):
        a = ra(m)
        if np.ndim(a) == 0 and space in ("global", "const") and not m.collect:
            # one address for every lane (a uniform load): read once, broadcast
            groups = access(m, ins, space, np.array([a], np.uint64), np.zeros(1, np.int64),
                            es * n)
            if nc and m.nc_reads is not None:
                _note_nc(m, ins, groups, np.zeros(1, np.int64), np.array([a], np.uint64), True)
            vals = _gather(groups, 1, es, n)
            for j, w in enumerate(ws):
                w(m, vals[0, j].view(dt), mask)
            if strong and m.race is not None and m.race.fs:
                idx = np.arange(m.T) if mask is None else np.flatnonzero(mask)
                m.race.sync_access(ins, space, np.full(idx.size, a, np.uint64), idx, True,
                                   False)
            return
        idx = np.arange(m.T) if mask is None else np.flatnonzero(mask)
        av = np.broadcast_to(a, (m.T,))[idx] if np.ndim(a) == 0 or mask is not None else a
        av = np.asarray(av, np.uint64)
        groups = access(m, ins, space, av, idx, es * n, var)
        if m.collect:
            _metrics(m, ins, space, av, idx, es * n)
        if m.race is not None and space != "global":
            m.race.access(ins, space, av, idx, es * n, False, strong)
        if strong and m.race is not None and m.race.fs:
            # (release/acquire: the flag may be in any space)
            m.race.sync_access(ins, space, av, idx, True, False)
        if m.init is not None and space != "global":
            m.init.read(ins, groups, idx, es * n, var)
        if nc and m.nc_reads is not None:
            _note_nc(m, ins, groups, idx, av, True)
        vals = _gather(groups, idx.size, es, n)
        _write_lanes(m, ws, vals, dt, idx, mask)
    return ex


def _write_lanes(m, ws, vals, dt, idx, mask):
    """Write column ``j`` of ``vals`` (one row per lane of ``idx``, raw bits) to destination
    ``ws[j]`` as ``dt``; with a ``mask``, the other lanes' values are zeros the writer
    leaves alone."""
    for j, w in enumerate(ws):
        v = vals[:, j].view(dt)
        if mask is None:
            w(m, v, None)
        else:
            full = np.zeros(m.T, dt)
            full[idx] = v
            w(m, full, mask)


def _metrics(m, ins, space, av, idx, size):
    if space == "global":
        _global_metrics(m, ins, av, idx)
    elif space == "shared":
        _shared_metrics(m, ins, av, idx, size)
    elif space == "generic":
        rel = av - np.uint64(SHARED_WINDOW)
        ins_s = rel < np.uint64(WINDOW_SIZE)
        glob = ~ins_s & ~(av - np.uint64(LOCAL_WINDOW) < np.uint64(WINDOW_SIZE))
        if glob.any():
            _global_metrics(m, ins, av[glob], idx[glob])
        if ins_s.any():
            _shared_metrics(m, ins, rel[ins_s], idx[ins_s], size)


def _ld_param(ins, mod, aop, dt, es, n, ws):
    fn = mod.functions[ins.function]
    if aop[0] == "a" and isinstance(aop[1], tuple) and fn.kind == "entry":
        return _ld_param_at(ins, mod, aop, dt, es, n, ws)
    if aop[0] != "a" or not isinstance(aop[1], str):
        raise SimulatorError(f"PTX line {ins.line}: ld.param needs [name+offset] (or, in a "
                             "kernel, a register holding a kernel parameter's address)",
                             ptx_line=ins.line)
    name, off = aop[1], aop[2]
    if fn.kind == "entry" and any(p[0] == name for p in fn.params):
        def ex_k(m, mask):
            o, size = m.kparams[name]
            start = o + off
            if off < 0 or off + es * n > size:
                raise SimulatorError(f"PTX line {ins.line}: ld.param outside parameter {name}",
                                     ptx_line=ins.line)
            raw = np.frombuffer(m.params, RAW[es], count=n, offset=start)
            for j, w in enumerate(ws):
                w(m, raw[j:j + 1].view(dt)[0], mask)
        return ex_k

    def ex_c(m, mask):
        arr = _param_bytes(m, name, off + es * n)
        block = np.ascontiguousarray(arr[:, off:off + es * n]).view(RAW[es])
        for j, w in enumerate(ws):
            w(m, block[:, j].view(dt), mask)
    return ex_c


def _ld_param_at(ins, mod, aop, dt, es, n, ws):
    """``ld.param`` through a register: an address a ``mov`` of a kernel parameter gave
    (:meth:`~warp_lab.sim.machine.Machine.symbol`: its offset in the parameter buffer),
    read per thread; an address outside the buffer is an error at the instruction."""
    ra = _addr_reader(aop, mod, ins.line)
    width = es * n

    def ex(m, mask):
        a = np.broadcast_to(np.asarray(ra(m), np.uint64), (m.T,))
        idx = np.arange(m.T) if mask is None else np.flatnonzero(mask)
        at = a[idx]
        if at.size and int(at.max()) + width > len(m.params):
            raise SimulatorError(f"PTX line {ins.line}: ld.param at {int(at.max())} reads past "
                                 f"the {len(m.params)}-byte kernel parameter buffer",
                                 ptx_line=ins.line)
        buf = np.frombuffer(m.params, np.uint8)
        rows = buf[at.astype(np.int64)[:, None] + np.arange(width)]
        vals = np.ascontiguousarray(rows).view(RAW[es])
        _write_lanes(m, ws, vals, dt, idx, mask)
    return ex


def _param_bytes(m, name: str, need: int):
    """The bytes of ``.param`` variable ``name`` of a call (a ``(T, size)`` uint8 array, one
    row per batch thread, in ``m.cparams``), grown with zeros to at least ``need`` bytes:
    ``st.param`` writes a device function's arguments there and ``ld.param`` reads them
    (PTX ISA "Parameter State Space")."""
    arr = m.cparams.get(name)
    if arr is None or arr.shape[1] < need:
        grown = np.zeros((m.T, need), np.uint8)
        if arr is not None:
            grown[:, :arr.shape[1]] = arr
        arr = m.cparams[name] = grown
    return arr


def _st(ins, mod):
    space = state_space(ins)
    strong = _strong(ins)
    n = vector_width(ins)
    t = ins.types[0]
    dt = type_dtype(t)
    es = dt.itemsize
    aop, sop = ins.srcs[0], ins.srcs[1]
    srcs = sop[1] if sop[0] == "v" else [sop]
    rs = [reader(x, RAW[es], mod, ins.line) for x in srcs]
    if space == "param":
        name, off = aop[1], aop[2]

        def ex_p(m, mask):
            need = off + es * n
            arr = _param_bytes(m, name, need)
            vals = np.stack([np.broadcast_to(np.asarray(r(m), RAW[es]), (m.T,)) for r in rs], 1)
            b = np.ascontiguousarray(vals).view(np.uint8).reshape(m.T, es * n)
            if mask is None:
                arr[:, off:need] = b
            else:
                arr[mask, off:need] = b[mask]
        return ex_p
    ra = _addr_reader(aop, mod, ins.line)
    var = _address_var(ins, mod, space)
    # memcheck's conflicting-store check (store_conflicts): plain global/generic stores
    conflicts = space in ("global", "generic") and not strong

    def ex(m, mask):
        a = ra(m)
        idx = np.arange(m.T) if mask is None else np.flatnonzero(mask)
        m.writes += 1     # (a poll that saw no write since its last turn: poll_turn)
        m.last_write = (idx, m.writes + m.events, ins.pc)
        if m.stored is not None:   # (the barrier check: sync._check_divergence)
            m.stored[idx] = True
        av = np.asarray(np.broadcast_to(a, (m.T,))[idx] if (np.ndim(a) == 0 or mask is not None)
                        else a, np.uint64)
        groups = access(m, ins, space, av, idx, es * n, var)
        if m.collect:
            _metrics(m, ins, space, av, idx, es * n)
        if m.race is not None and space != "global":
            m.race.access(ins, space, av, idx, es * n, True, strong)
        if strong and m.race is not None and m.race.fs:
            m.race.sync_access(ins, space, av, idx, False, True)
        if m.init is not None and space != "global":
            m.init.write(groups, idx, es * n)
        if m.nc_writes is not None and space in ("global", "generic"):
            _note_nc(m, ins, groups, idx, av, False)
        vals = np.empty((idx.size, n), RAW[es])
        for j, r in enumerate(rs):
            v = r(m)
            vals[:, j] = v if np.ndim(v) == 0 else (v if mask is None else v[idx])
        if conflicts and m.conflict_pcs is not None and ins.pc not in m.conflict_pcs:
            check_store(m, ins, space, av, idx, vals, np.ndim(a) == 0, groups)
        _scatter(groups, vals, es, n)
    return ex


def _note_nc(m, ins, groups, idx, addr, reading: bool):
    """memcheck's read-only-cache hazard: an allocation read through ``ld.global.nc`` and
    written (``st``, ``atom``, ``red``) in one launch.

    PTX ISA, ``ld``: ``.nc`` loads go through the non-coherent (read-only) data cache,
    for memory that stays read-only for the kernel's lifetime; a write to it need not
    be seen, so the GPU may return stale data where the simulator returns the new value.
    wl.launch keeps every allocation (the memory its arguments share) either read
    through ``.nc`` or written, never both, so the check works per allocation (a
    hand-written kernel reading one part of a buffer with ``.nc`` while writing another
    part is reported too). One finding per instruction, at its first lane; the launch
    goes on.

    Args:
        groups: what :func:`access` returned for the lanes ``idx`` at ``addr``.
        reading: an ``.nc`` load (else a store or atomic).
    """
    seen, mine = (m.nc_writes, m.nc_reads) if reading else (m.nc_reads, m.nc_writes)
    for buf, lanes, _ in groups:
        key = id(buf)
        mine.add(key)
        if key in seen:
            k = 0 if lanes is None else int(lanes[0])
            hit = m.memory.find(int(addr[k]))
            name = hit[2] if hit else "?"
            what = ("reads through the read-only data cache (ld.global.nc) memory this launch "
                    "also writes" if reading else
                    "writes memory this launch also reads through the read-only data cache "
                    "(ld.global.nc)")
            m.finding("nc_write", f"{ins.op} {what} ({name!r}); a GPU's read-only cache need "
                      "not see the write, so loads may return stale data", ins, int(idx[k]),
                      address=int(addr[k]))


# ------------------------------------------------------------------ atomics

_ATOM_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas")


def _atomic_apply(op, dt, old, b, c):
    """The value an atomic ``op`` leaves in memory that held ``old`` (PTX ISA "atom"):
    integers wrap; ``inc`` is ``old >= b ? 0 : old + 1`` and ``dec`` is ``old == 0 || old >
    b ? b : old - 1`` (unsigned); ``min``/``max`` compare as ``dt`` (signed or unsigned;
    floats as the ``min``/``max`` instructions); ``cas`` stores ``c`` where ``old == b``;
    ``add_ftz`` is a float32 add on global memory, subnormal inputs and result flushed."""
    if op == "add":
        return old + b
    if op == "add_ftz":     # atom.add.f32 on global memory (b flushed already)
        return fp.ftz(np.asarray(fp.ftz(np.asarray(old, dt)) + b, dt))
    if op == "min":     # floats: as the min instruction (PTX ISA "atom"), -0.0 < +0.0
        return fp.signed_zeros(np.fmin, False)(old, b) if dt.kind == "f" else np.minimum(old, b)
    if op == "max":
        return fp.signed_zeros(np.fmax, True)(old, b) if dt.kind == "f" else np.maximum(old, b)
    if op == "inc":
        return np.where(old >= b, dt.type(0), old + dt.type(1))
    if op == "dec":
        return np.where((old == 0) | (old > b), b, old - dt.type(1))
    if op == "and":
        return old & b
    if op == "or":
        return old | b
    if op == "xor":
        return old ^ b
    if op == "exch":
        return b
    return np.where(old == b, c, old)  # cas


def _atomic_rmw(view, e, b, c, op, dt):
    """Apply the lanes' atomics in lane order; returns ``(old, changed)``: each lane's old
    value, and whether some lane's operation changed the bytes it found (a spin-wait's
    ``atom.or x, 0`` or failing CAS does not: :meth:`~warp_lab.sim.progress.ForwardProgress.
    spin_turn` counts the others)."""
    k = e.size
    order = np.argsort(e, kind="stable")
    es = e[order]
    start = np.ones(k, bool)
    start[1:] = es[1:] != es[:-1]
    if start.all():
        old = view[e].view(dt)
        new = _atomic_apply(op, dt, old, b, c).astype(dt).view(view.dtype)
        changed = bool((new != old.view(view.dtype)).any())
        view[e] = new
        return old, changed
    if op == "add" and dt.kind in "iu":
        bs = b[order]
        csum = np.cumsum(bs, dtype=dt)
        grp = np.cumsum(start) - 1
        first = np.flatnonzero(start)
        before = csum - bs                     # inclusive-exclusive within the whole array
        excl = before - before[first][grp]     # exclusive prefix within each address group
        base = view[es[first]].view(dt)
        old_sorted = base[grp] + excl
        total = csum[np.r_[first[1:] - 1, k - 1]] - before[first]
        view[es[first]] = (base + total).astype(dt).view(view.dtype)
        old = np.empty(k, dt)
        old[order] = old_sorted
        return old, bool(bs.any())
    # general case: rounds of lanes with distinct addresses, in lane order
    grp_first = np.maximum.accumulate(np.where(start, np.arange(k), 0))
    rank_sorted = np.arange(k) - grp_first
    rounds = int(rank_sorted.max()) + 1
    if rounds * _ROUND_COST > k:
        return _atomic_serial(view, e, order, b, c, op, dt)
    rank = np.empty(k, np.int64)
    rank[order] = rank_sorted
    old = np.empty(k, dt)
    changed = False
    for r in range(rounds):
        sel = np.flatnonzero(rank == r)
        ee = e[sel]
        o = view[ee].view(dt)
        old[sel] = o
        cc = c[sel] if c is not None else None
        new = _atomic_apply(op, dt, o, b[sel], cc).astype(dt).view(view.dtype)
        changed = changed or bool((new != o.view(view.dtype)).any())
        view[ee] = new
    return old, changed


#: what one round of :func:`_atomic_rmw`'s general case costs, in lanes of
#: :func:`_atomic_serial`'s scalar loop (about 15 µs against 1 µs): with more rounds
#: than lanes / this, one address at a time is faster
_ROUND_COST = 12


def _atomic_serial(view, e, order, b, c, op, dt):
    """:func:`_atomic_rmw` one address at a time (``order``: by address, then lane), for
    many lanes on few addresses. A CAS loop of 1,000 threads on one address is 500,500
    lane-operations: 8 s in rounds of one lane. Here a CAS takes one vector step per lane
    that succeeds (after one success the lanes that read the same old value fail), a
    float add one ``np.add.accumulate`` (sequential, so rounded in lane order as the
    rounds were), any other operation a scalar loop."""
    vd = view.view(dt)
    old = np.empty(e.size, dt)
    changed = False  # some lane's operation changed the bytes it found
    es = e[order]
    bounds = np.flatnonzero(np.r_[True, es[1:] != es[:-1], True])
    with np.errstate(over="ignore", invalid="ignore"):   # integer add wraps, as on the GPU
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            lanes, at = order[lo:hi], es[lo]
            cur = vd[at]
            if op == "cas":
                bs, cs, got = b[lanes], c[lanes], np.empty(hi - lo, dt)
                i = 0
                while i < hi - lo:    # lanes i.. see cur until the first whose compare holds
                    hit = np.flatnonzero(bs[i:] == cur)
                    j = hi - lo if hit.size == 0 else i + int(hit[0])
                    got[i:j + 1] = cur
                    if j < hi - lo:
                        cur = cs[j]
                    i = j + 1
                old[lanes] = got
            elif op in ("add", "add_ftz") and dt.kind == "f" and not (
                    op == "add_ftz" and _subnormal(np.add.accumulate(
                        np.r_[cur, b[lanes]].astype(dt), dtype=dt))):
                # (flushing changes nothing when no running sum is subnormal)
                run = np.add.accumulate(np.r_[cur, b[lanes]].astype(dt), dtype=dt)
                old[lanes], cur = run[:-1], run[-1]
            else:
                for i in lanes.tolist():
                    old[i] = cur
                    cur = _atomic_apply(op, dt, cur, b[i], None)
            vd[at] = cur
            seq = np.r_[old[lanes], cur].astype(dt).view(view.dtype)   # before/after each lane
            changed = changed or bool((seq[1:] != seq[:-1]).any())
    return old, changed


def _subnormal(x) -> bool:
    """Whether float array ``x`` holds a subnormal number."""
    return bool(((x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny)).any())


def _atom(ins, mod):
    """``atom``/``red`` (PTX ISA "atom", "red"): every ``_ATOM_OPS`` operation on scalar
    types, the lanes applied in lane order (:func:`_atomic_rmw`), ``atom`` writing each
    lane's old value. Vector and packed (``f16x2``) forms raise SimulatorError."""
    space = state_space(ins)
    op = next((x for x in ins.mods if x in _ATOM_OPS), None)
    if op is None or not ins.types:
        raise SimulatorError(f"PTX line {ins.line}: cannot decode atomic {ins.text!r}",
                             ptx_line=ins.line)
    t = ins.types[-1]
    dt = type_dtype(t)
    if "v2" in ins.mods or "v4" in ins.mods or "f16x2" in ins.types or "bf16x2" in ins.types:
        raise SimulatorError(f"PTX line {ins.line}: vector atomics are not implemented",
                             ptx_line=ins.line)
    es = dt.itemsize
    is_red = ins.op == "red"
    srcs = ins.srcs
    ra = _addr_reader(srcs[0], mod, ins.line)
    rb = reader(srcs[1], dt, mod, ins.line)
    rc = reader(srcs[2], dt, mod, ins.line) if op == "cas" else None
    w = None if is_red else writer(ins.dsts[0], mod, ins.line)
    var = _address_var(ins, mod, space)
    # PTX ISA "atom": "atom.add.f32 ... without .noftz, flushes subnormal inputs and results
    # to sign-preserving zero on global memory but ... doesn't flush them to zero on shared
    # memory" (fast math or not)
    ftz_global = op == "add" and t == "f32" and "noftz" not in ins.mods

    def ex(m, mask):
        a = ra(m)
        idx = np.arange(m.T) if mask is None else np.flatnonzero(mask)
        av = np.asarray(np.broadcast_to(a, (m.T,))[idx], np.uint64)
        groups = access(m, ins, space, av, idx, es, var)
        if m.stored is not None:   # (the barrier check: sync._check_divergence)
            m.stored[idx] = True
        if m.collect:
            _metrics(m, ins, space, av, idx, es)
        if m.race is not None and space != "global":
            # (reads and writes; no hazard with another atomic, PTX ISA "Data-race")
            m.race.access(ins, space, av, idx, es, True, True)
        if m.race is not None and m.race.fs:
            m.race.sync_access(ins, space, av, idx, not is_red, True)
        if m.init is not None and space != "global":
            # the old value is read (but for exch, whose new value ignores it), then written
            if op != "exch":
                m.init.read(ins, groups, idx, es, var)
            m.init.write(groups, idx, es)
        if m.nc_writes is not None and space in ("global", "generic"):
            _note_nc(m, ins, groups, idx, av, False)
        b = np.broadcast_to(np.asarray(rb(m), dt), (m.T,))[idx]
        c = np.broadcast_to(np.asarray(rc(m), dt), (m.T,))[idx] if rc is not None else None
        old = np.empty(idx.size, dt)
        for buf, lanes, off in groups:
            view = buf.view(RAW[es])
            sel = slice(None) if lanes is None else lanes
            flush = ftz_global and buf is not m.shared and buf is not m.local
            old[sel], changed = _atomic_rmw(view, off // es, fp.ftz(b[sel]) if flush else b[sel],
                                            None if c is None else c[sel],
                                            "add_ftz" if flush else op, dt)
            m.events += changed
            m.changes += changed
            m.writes += changed
            if changed:
                m.last_write = (idx, m.writes + m.events, ins.pc)
        if w is not None:
            full = np.zeros(m.T, dt)
            full[idx] = old
            w(m, full, mask)
    return ex


# ------------------------------------------------------------------ address conversion

def _cvta(ins, mod):
    """``cvta[.to].space.size d, a`` (PTX ISA "cvta"; "Generic Addressing").

    ``cvta.space`` adds the space's window base to a state-space address (giving
    a generic one), ``cvta.to.space`` subtracts it; arithmetic is modulo 2**64
    and ``.u32`` keeps the low 32 bits of the result. A 32-bit source register
    is zero-extended first (the ISA asks for equal sizes and ``cvt.u64.u32``,
    which is the same thing). ``.global`` has base 0 (generic and global
    addresses coincide); ``.const`` has the launch's const base.

    Raises:
        SimulatorError: ``cvta.param``, no state space, or a size other than
            ``.u32``/``.u64``.
    """
    to = "to" in ins.mods
    space = "shared" if "shared::cta" in ins.mods else next(
        (s for s in ins.mods if s in ("global", "shared", "local", "const", "param")), None)
    if space is None:
        raise SimulatorError(f"PTX line {ins.line}: cvta needs a state space "
                             "(.global/.shared/.local/.const)", ptx_line=ins.line)
    if space == "param":
        raise SimulatorError(f"PTX line {ins.line}: cvta.param is not supported", ptx_line=ins.line)
    t = ins.types[0] if ins.types else "u64"
    dt = type_dtype(t)
    if dt.kind != "u" or dt.itemsize not in (4, 8):
        raise SimulatorError(f"PTX line {ins.line}: cvta size must be .u32 or .u64, got .{t}",
                             ptx_line=ins.line)
    width = _MASK32 if dt.itemsize == 4 else _MASK64
    r = reader(ins.srcs[0], U64, mod, ins.line)
    w = writer(ins.dsts[0], mod, ins.line)
    fixed = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW, "global": 0}.get(space)
    op = _wrap_sub if to else _wrap_add

    def ex(m, lanes):
        base = np.uint64(m.const_base if fixed is None else fixed)
        v = op(np.asarray(r(m), np.uint64), base) & width
        w(m, np.asarray(v).astype(dt), lanes)
    return ex


def _wrap_add(a, b):
    """``a + b`` modulo 2**64 for uint64 arrays or scalars (no overflow warning)."""
    with np.errstate(over="ignore"):
        return np.add(a, b, dtype=np.uint64)


def _wrap_sub(a, b):
    """``a - b`` modulo 2**64 for uint64 arrays or scalars (no overflow warning)."""
    with np.errstate(over="ignore"):
        return np.subtract(a, b, dtype=np.uint64)


def _isspacep(ins, mod):
    space = ins.mods[0]
    r = reader(ins.srcs[0], U64, mod, ins.line)
    w = writer(ins.dsts[0], mod, ins.line)

    def f(a):
        a = np.asarray(a, np.uint64)
        in_s = (a - np.uint64(SHARED_WINDOW)) < np.uint64(WINDOW_SIZE)
        in_l = (a - np.uint64(LOCAL_WINDOW)) < np.uint64(WINDOW_SIZE)
        return {"shared": in_s, "local": in_l}.get(space, ~(in_s | in_l))
    return lambda m, mask: w(m, np.asarray(f(r(m))), mask)


MEMORY = {"ld": _ld, "ldu": _ld, "st": _st, "atom": _atom, "red": _atom, "cvta": _cvta,
          "isspacep": _isspacep}
