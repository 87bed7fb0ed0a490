"""The compiled tier's engine: LLVM's MCJIT on the host, the grid run in chunks of blocks.

:func:`run` takes what :func:`warp_lab.sim.run` takes, translates the kernel once
(:mod:`~warp_lab.sim.compiled.translate`; cached per PTX text, entry and memcheck),
compiles it for the host CPU at O3 and calls it over the grid, a chunk of blocks per
call so that a Ctrl-C or a ``progress`` callback is seen between chunks (a chunk aims
at ~50 ms). What the tier does not cover, or a bail at run time (a fault, a division by
zero or a store collision under memcheck, a trap or printf, a loop of 2**24 turns),
raises :class:`NeedsInterpreter`; the caller then runs the launch on the interpreter
from its first memory contents (``touched`` says whether memory changed).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import threading
import time

import numpy as np

from warp_lab.errors import LaunchInterrupted, SimulatorError
from warp_lab.sim.compiled.translate import (ATAB_ROW, BAIL_REASONS, Translation, coverage,
                                             translate)
from warp_lab.sim.compiled.values import Unsupported
from warp_lab.sim.result import Finding, SimResult

__all__ = ["run", "why_not", "NeedsInterpreter", "compiled_kernel"]

_lock = threading.Lock()
_cache: dict = {}
_CACHE_SIZE = 64
_target = None
_CHUNK_SECONDS = 0.05
_SIG = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                        ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                        ctypes.c_void_p, ctypes.c_void_p)


class NeedsInterpreter(Exception):
    """The launch must run on the interpreter: ``reason`` (a sentence for the result's
    ``tier_reason``), ``touched`` (memory was changed by a partial compiled run) and
    ``static`` (known before running: the kernel or the launch's options)."""

    def __init__(self, reason: str, touched: bool = False, static: bool = True):
        super().__init__(reason)
        self.reason, self.touched, self.static = reason, touched, static


def why_not(module, kernel: str, checks, metrics: bool, max_instructions) -> str | None:
    """Why the compiled tier cannot run this launch (a sentence), or None.

    Args:
        module: the parsed PTX module; kernel: the entry's name.
        checks: the launch's checks; metrics: whether per-line metrics are asked for;
        max_instructions: the interpreter's instruction budget (None: none).
    """
    if metrics:
        return ("per-line metrics (warp-instructions, sectors per request, bank conflicts) "
                "are counted by the interpreter; launch with metrics off for the compiled tier")
    if max_instructions is not None:
        return "an instruction budget (max_instructions) is counted by the interpreter"
    return coverage(module, kernel, checks)


def _ensure_llvm():
    """llvmlite's binding with the host target set up, and a fresh host target machine
    (an MCJIT engine takes ownership of the one it is given)."""
    global _target
    import llvmlite.binding as llvm

    if _target is None:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        libm = ctypes.CDLL(ctypes.util.find_library("m"))
        for name in ("tanh", "exp2", "log2", "sin", "cos"):
            llvm.add_symbol(name, ctypes.cast(getattr(libm, name), ctypes.c_void_p).value)
        _target = (llvm.Target.from_default_triple(), llvm.get_host_cpu_name(),
                   llvm.get_host_cpu_features().flatten())
    target, cpu, features = _target
    return llvm, target.create_target_machine(cpu=cpu, features=features, opt=3,
                                              codemodel="jitdefault")


class _Compiled:
    """One translated and JIT-compiled kernel: its :class:`Translation`, the execution
    engine (kept alive with it) and the callable."""

    def __init__(self, tr: Translation):
        llvm, tm = _ensure_llvm()
        mod = llvm.parse_assembly(tr.ir)
        mod.triple = tm.triple
        mod.data_layout = str(tm.target_data)
        mod.verify()
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pb = llvm.create_pass_builder(tm, pto)
        pb.getModulePassManager().run(mod, pb)
        self.engine = llvm.create_mcjit_compiler(mod, tm)
        self.engine.finalize_object()
        self.fn = _SIG(self.engine.get_function_address("wl_grid"))
        self.tr = tr


#: store shadows kept between launches (length → arrays), so a launch neither allocates
#: nor zeroes them: each launch's writer ids lie above its epoch base, which rises by the
#: launch's thread count; an id at or below the base is from an earlier launch
_shadow_pool: dict = {}
_shadow_state = {"epoch": 0, "bytes": 0}
_SHADOW_POOL_BYTES = 512 << 20


def _shadow_epoch(threads: int) -> int:
    """The epoch base of a launch of ``threads`` threads (the pool is cleared when the
    32-bit ids would wrap)."""
    with _lock:
        base = _shadow_state["epoch"]
        if base + threads + 1 >= 2**32:
            _shadow_pool.clear()
            _shadow_state.update(epoch=0, bytes=0)
            base = 0
        _shadow_state["epoch"] = base + threads
        return base


def _take_shadow(n: int) -> np.ndarray:
    with _lock:
        free = _shadow_pool.get(n)
        if free:
            sh = free.pop()
            _shadow_state["bytes"] -= sh.nbytes
            return sh
    return np.zeros(n, np.uint32)


def _give_shadow(sh: np.ndarray) -> None:
    with _lock:
        if _shadow_state["bytes"] + sh.nbytes > _SHADOW_POOL_BYTES:
            return
        _shadow_pool.setdefault(sh.size, []).append(sh)
        _shadow_state["bytes"] += sh.nbytes


def compiled_kernel(module, kernel: str, checks) -> _Compiled:
    """The compiled form of ``kernel`` (cached per PTX text, entry and memcheck).

    Raises:
        NeedsInterpreter: the translation met something it does not cover.
    """
    memcheck = "memcheck" in checks
    key = (hashlib.sha256(module.text.encode()).hexdigest(), kernel, memcheck)
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            return hit
        try:
            tr = translate(module, kernel, ("memcheck",) if memcheck else ())
        except Unsupported as exc:
            where = f" (PTX line {exc.line})" if exc.line else ""
            raise NeedsInterpreter(f"{exc.reason}{where}") from None
        except Exception as exc:  # noqa: BLE001 - a translator bug: the interpreter runs
            raise NeedsInterpreter(f"the compiled tier's translator failed ({type(exc).__name__}"
                                   f": {exc}); this is a bug in warp_lab, the interpreter "
                                   "ran the launch") from None
        try:
            c = _Compiled(tr)
        except RuntimeError as exc:   # LLVM rejected our IR: our bug, the interpreter runs
            raise NeedsInterpreter(f"LLVM could not compile the translation ({exc})") from None
        if len(_cache) >= _CACHE_SIZE:
            _cache.pop(next(iter(_cache)))
        _cache[key] = c
        return c


def run(module, kernel, grid, block, params, memory, dynamic_shared=0, checks=(),
        fill=None, progress=None) -> SimResult:
    """Run one launch on the compiled tier (the arguments are :func:`warp_lab.sim.run`'s;
    metrics off, no instruction budget).

    Returns:
        a :class:`SimResult` without findings (any finding is the interpreter's to make),
        ``metrics=None``, ``warp_instructions=0`` (warps are not formed), ``tier
        ="compiled"``.

    Raises:
        NeedsInterpreter: not covered, or a bail while running (memory ``touched``).
        SimulatorError: a bad launch configuration (as the interpreter says it).
        LaunchInterrupted: Ctrl-C between chunks (the partial result, an ``interrupted``
            finding).
    """
    from warp_lab.sim.machine import _dim3

    fn = module.entry(kernel)
    grid, block = _dim3(grid, "grid"), _dim3(block, "block")
    bs = block[0] * block[1] * block[2]
    if bs > 1024:
        raise SimulatorError(f"block of {bs} threads exceeds the 1024-thread limit "
                             "(CUDA Programming Guide, Table 'Technical Specifications')")
    params = bytes(params)
    if len(params) < fn.param_size:
        raise SimulatorError(f"kernel {kernel} expects a {fn.param_size}-byte parameter "
                             f"buffer, got {len(params)} bytes")
    if dynamic_shared > 228 * 1024:
        raise SimulatorError(f"{dynamic_shared} bytes of shared memory per block exceed the "
                             "227 KiB limit of sm_90")
    nblocks = grid[0] * grid[1] * grid[2]
    if nblocks * bs >= 2**32 - 1:
        raise NeedsInterpreter("a grid of 2**32 threads or more")
    why = coverage(module, kernel, checks)
    if why:
        raise NeedsInterpreter(why)
    c = compiled_kernel(module, kernel, checks)
    tr = c.tr
    t0 = time.perf_counter()
    temps = []
    try:
        syms = []
        for v in module.variables.values():   # as Machine._layout_symbols, in its order
            if v.space == "global":
                addr = memory.alloc(max(v.size, 1), name=f"global {v.name}")
                temps.append(addr)
                if v.init:
                    memory.write(addr, v.init)
                syms.append(addr)
        return _run(c, tr, memory, grid, block, bs, nblocks, params, dynamic_shared, syms,
                    fill, progress, t0)
    finally:
        for a in temps:
            memory.free(a)


def _run(c, tr, memory, grid, block, bs, nblocks, params, dynamic_shared, syms, fill,
         progress, t0) -> SimResult:
    bufs = memory.host_buffers()
    atab = np.zeros((max(len(bufs), 1), ATAB_ROW), np.int64)
    shadows = []
    epoch = 0
    if tr.shadow:
        epoch = _shadow_epoch(nblocks * bs)
    for k, (base, n, _name, buf) in enumerate(bufs):
        atab[k, :3] = (base, base + n, buf.ctypes.data)
        if tr.shadow:
            sh = _take_shadow(n // tr.granule + 4)
            shadows.append(sh)
            atab[k, 3] = sh.ctypes.data
    pbuf = np.frombuffer(params + b"\0" * 16, np.uint8).copy()
    dims = np.array([*grid, *block, dynamic_shared, dynamic_shared], np.int32)
    local = np.zeros(max(tr.local_size, 16), np.uint8)
    symv = np.array([*syms, (fill or 0) & 0xFFFFFFFF, epoch], np.int64)
    out = np.zeros(4, np.int64)
    try:
        return _chunks(c, tr, pbuf, atab, bufs, dims, local, symv, out, nblocks, progress, t0)
    finally:
        for sh in shadows:
            _give_shadow(sh)


def _chunks(c, tr, pbuf, atab, bufs, dims, local, symv, out, nblocks, progress, t0):
    ptr = lambda a: a.ctypes.data  # noqa: E731
    done, chunk = 0, 1
    partial, findings = False, []
    try:
        while done < nblocks:
            hi = min(nblocks, done + chunk)
            s = time.perf_counter()
            status = c.fn(ptr(pbuf), ptr(atab), len(bufs), done, hi, ptr(dims), ptr(local),
                          ptr(symv), ptr(out))
            if status:
                ins_pc = int(out[1])
                raise NeedsInterpreter(f"the compiled run stopped at pc {ins_pc}: "
                                       f"{BAIL_REASONS.get(status, 'a bail')}", touched=True,
                                       static=False)
            took = time.perf_counter() - s
            done = hi
            if took < _CHUNK_SECONDS / 4:
                chunk *= 2
            if progress is not None:
                try:
                    progress(done, nblocks)
                except Exception as exc:  # noqa: BLE001 - a raising callback stops the launch
                    partial = True
                    findings.append(Finding(
                        "interrupted", f"the progress callback stopped the launch after "
                        f"{done} of {nblocks} blocks ({type(exc).__name__}: {exc}); memory "
                        "holds a partial result"))
                    break
    except KeyboardInterrupt as exc:
        res = SimResult(instructions=int(out[2]), seconds=time.perf_counter() - t0,
                        findings=[Finding("interrupted", "the launch was interrupted "
                                          "(KeyboardInterrupt); memory holds a partial result")],
                        partial=True)
        res.tier = "compiled"
        raise LaunchInterrupted(res) from exc
    if tr.nc and ((atab[:, 4] & 3) == 3).any():
        raise NeedsInterpreter("an allocation read through ld.global.nc was written in the "
                               "launch (memcheck's nc_write: the interpreter reports it)",
                               touched=True, static=False)
    res = SimResult(instructions=int(out[2]), seconds=time.perf_counter() - t0,
                    findings=findings, partial=partial)
    res.tier = "compiled"
    return res
