"""The simulator back end: run a :class:`CompiledKernel`'s PTX on the CPU.

Host memory regions are copied into a :class:`warp_lab.sim.GlobalMemory`
(one allocation per region, so aliasing views alias there too), the
parameter buffer is packed with :func:`warp_lab.compiler.abi.pack_params`,
and after a complete run the regions are copied back, all of them or none: a
Ctrl-C after the simulator's last block is held until they are copied and the
result is built (:func:`~warp_lab.runtime.interrupt.deferred_sigint`). A run that
faults, or stops early (instruction budget, Ctrl-C), leaves the user's arrays
unchanged. A Ctrl-C is raised again as :class:`~warp_lab.errors.LaunchInterrupted`
(a ``KeyboardInterrupt``) carrying the :class:`LaunchResult`.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import time

import numpy as np

from warp_lab.compiler import abi
from warp_lab.errors import LaunchInterrupted, SimulatorError
from warp_lab.runtime.args import group_regions, place_views, written_regions
from warp_lab.runtime.finding_text import (cell_text, located_simulator_error, user_findings,
                                           without_index_marks)
from warp_lab.runtime.interrupt import deferred_sigint
from warp_lab.runtime.result import PARTIAL_NOTE, LaunchResult

__all__ = ["run", "prepare", "parsed_module", "kernel_module"]


@functools.lru_cache(maxsize=64)
def _parse(ptx_hash: str, ptx: str):
    from warp_lab import sim

    return sim.parse_module(ptx)


def parsed_module(ptx: str):
    """The simulator's parsed form of ``ptx`` (parsed once per distinct text)."""
    return _parse(hashlib.sha256(ptx.encode()).hexdigest(), ptx)


@functools.lru_cache(maxsize=64)
def _renamed(ptx_hash: str, ptx: str, files: tuple):
    return dataclasses.replace(_parse(ptx_hash, ptx), files=dict(files))


def kernel_module(ck):
    """``ck``'s parsed PTX with each ``.file`` named as in this run: a notebook cell's
    content-derived name in the artifacts (``<cell of k>``) becomes the cell it stands for
    now (:meth:`SourceMap.cell <warp_lab.compiler.source_map.SourceMap.cell>`), so
    findings, faults, the debugger's stops and per-line metrics name the current cell;
    parsed once per text and names."""
    ptx_hash = hashlib.sha256(ck.ptx.encode()).hexdigest()
    module = _parse(ptx_hash, ck.ptx)
    files = {k: ck.source_map.cell(name) for k, name in module.files.items()}
    if files == module.files:
        return module
    return _renamed(ptx_hash, ck.ptx, tuple(sorted(files.items())))


def prepare(ck, launch_dim, values, views):
    """Simulator memory and parameter bytes for one launch.

    Each host :class:`~warp_lab.runtime.args.Region` becomes one allocation
    (so aliasing views alias in the simulator too) holding a copy of the
    host bytes; the parameter buffer points into those allocations.

    Args:
        ck: the compiled kernel (its ``param_layout``).
        launch_dim: ``(x, y, z)`` extents of the hidden parameter.
        values, views: from :func:`warp_lab.runtime.args.check_arguments`.

    Returns:
        ``(memory, regions, bases, params)``: the :class:`warp_lab.sim.GlobalMemory`,
        the regions, each region's simulator address keyed by ``id(region)``,
        and the packed parameter buffer.
    """
    from warp_lab import sim

    for v in views:
        if v.owner is not None:
            v.owner._sync_to_host()  # a GPU launch may have left newer data on the device
    regions = group_regions(views)
    memory = sim.GlobalMemory()
    bases = {}
    for region in regions:
        # an empty array gets an empty allocation: memcheck reports its x[0] (a byte of a
        # 1-byte stand-in would hold an int8 element)
        base = memory.alloc(region.nbytes, name=",".join(v.name for v in region.views))
        memory.write(base, region.host_bytes())
        bases[id(region)] = base
    region_of = {id(v): r for r in regions for v in r.views}

    def address_of(view):
        r = region_of[id(view)]
        return abi.ArrayArg(r.device_address(view, bases[id(r)]), view.shape, view.strides)

    packed = place_views(values, address_of)
    return memory, regions, bases, abi.pack_params(ck.param_layout, launch_dim, packed)


def run(ck, device, grid, block, launch_dim, values, views, repeat=1, shared_mem=0,
        checks=("memcheck", "barrier"), max_instructions=None, progress=None,
        fill=0x7FF8DEAD, tier="interpreter", metrics=True) -> LaunchResult:
    """Run ``ck`` on the simulator; the back-end half of :func:`warp_lab.launch`.

    Args:
        ck: the compiled kernel (its ``ptx`` and ``entry`` are executed).
        device: the simulator's :class:`DeviceInfo`.
        grid, block, launch_dim: ``(x, y, z)`` triples from ``launch_geometry``.
        values: checked arguments (``HostView`` for arrays).
        views: the array arguments' ``HostView`` records.
        repeat: runs; each starts from the same memory contents.
        shared_mem: dynamic shared memory per block, bytes.
        checks: simulator checks to enable.
        max_instructions: thread-instruction budget, None for none.
        progress: None or ``progress(blocks_done, blocks_total)``, called after each
            batch of simulated blocks (:func:`warp_lab.sim.run`); with ``repeat`` > 1
            the counts run over all repeats (``blocks_total`` = repeat × blocks), so
            they only increase. An exception from it stops the launch with
            ``partial=True`` and the arrays unchanged.
        fill: the word fresh shared and local memory hold, None for zeros
            (:func:`warp_lab.sim.run`'s ``fill``).
        tier: ``"interpreter"``, ``"compiled"`` or ``"auto"`` (:func:`warp_lab.sim.run`'s
            ``tier``); the compiled tier's rerun on the interpreter starts from the host
            arrays copied in again.
        metrics: collect per-line metrics (the compiled tier does not: it needs False).

    Raises:
        SimulatorError: the simulator cannot run the PTX, or the kernel faulted.
        LaunchInterrupted: Ctrl-C (a ``KeyboardInterrupt``) while the simulator ran (its
            ``result`` the partial LaunchResult, the arrays unchanged) or after (the
            complete LaunchResult, every output array written).
    """
    from warp_lab import sim

    module = kernel_module(ck)
    memory, regions, bases, params = prepare(ck, launch_dim, values, views)
    written = written_regions(regions, ck.written_params)
    snapshot = [bytes(r.host_bytes()) for r in written] if repeat > 1 else None
    times = []
    result = interrupt = None

    def restore():   # the launch's first contents: the host arrays are not written yet
        for region in regions:
            memory.write(bases[id(region)], region.host_bytes())

    for i in range(repeat):
        if i:
            for r, data in zip(written, snapshot):
                memory.write(bases[id(r)], data)
        t0 = time.perf_counter()
        try:
            result = sim.run(module, ck.entry, grid=grid, block=block, params=params,
                             memory=memory, dynamic_shared=shared_mem, checks=checks,
                             max_instructions=max_instructions,
                             progress=_over_repeats(progress, i, repeat), fill=fill,
                             tier=tier, metrics=metrics, restore=restore)
        except LaunchInterrupted as exc:   # Ctrl-C: the partial result, then raised again
            result, interrupt = exc.result, exc
        except SimulatorError as exc:   # said at the user's line too
            raise located_simulator_error(exc, ck) from None
        times.append(time.perf_counter() - t0)
        if result.partial:
            break

    launch_result = None
    try:
        # a Ctrl-C from here on is delivered once the result is built: every output array
        # written back (a complete run) or none, and a LaunchResult to carry
        with deferred_sigint():
            launch_result = _finish(ck, device, grid, block, launch_dim, views, times, checks,
                                    result, memory, regions, bases, written)
    except KeyboardInterrupt as exc:
        if launch_result is None:
            raise
        interrupt = exc
    if interrupt is not None:
        raise LaunchInterrupted(launch_result) from interrupt
    return launch_result


def _finish(ck, device, grid, block, launch_dim, views, times, checks, result,
            memory, regions, bases, written) -> LaunchResult:
    """The :class:`LaunchResult` of a run, with the written regions copied back into the
    caller's arrays when the run was complete (none of them when it was partial)."""
    notes = []
    printed = result.printed
    if result.printf_overwritten:   # what a GPU's circular printf FIFO still holds
        printed = printed[result.printf_overwritten_chars:]
        notes.append(printf_fifo_note(result))
    if result.partial:
        notes.append(PARTIAL_NOTE)
    else:
        for r in written:
            if r.writeable:
                data = memory.read(bases[id(r)], r.nbytes)
                r.host_bytes()[:] = np.frombuffer(data, dtype=np.uint8)[: r.nbytes]
        for v in views:
            if v.owner is not None and v.name in ck.written_params:
                v.owner._mark_host_newer()
    return LaunchResult(compiled=ck, device=device, grid=grid, block=block,
                        launch_dim=launch_dim, times=tuple(times),
                        argument_bytes=sum(v.array.nbytes for v in views),
                        printed=cell_text(without_index_marks(printed), ck),
                        sim=dataclasses.replace(result, findings=user_findings(
                            result.findings, ck, regions, bases, grid, block, launch_dim)),
                        notes=tuple(notes), checks=tuple(checks), tier=result.tier,
                        tier_reason=result.tier_reason)


def printf_fifo_note(result) -> str:
    """The note of a simulator launch (``result``: its ``SimResult``) whose printf calls
    passed a GPU's printf FIFO: how many calls and bytes, how many a GPU overwrites, and
    where the whole text is. CUDA Programming Guide, "Formatted Output": the FIFO
    (``cudaLimitPrintfFifoSize``, 1 MiB by default) "is circular and if more output is
    produced during kernel execution than can fit in the buffer, older output is
    overwritten"."""
    from warp_lab.sim.printf import PRINTF_FIFO_BYTES

    lost, calls = result.printf_overwritten, result.printf_calls
    return (f"printf: the kernel's {calls:,} printf calls need at least "
            f"{result.printf_bytes:,} bytes of a GPU's printf FIFO, which holds "
            f"{PRINTF_FIFO_BYTES:,} (1 MiB, cudaLimitPrintfFifoSize) and is circular: a GPU "
            f"overwrites the oldest {lost:,} calls' output, so .printed shows the newest "
            f"{calls - lost:,} as a GPU would; .sim.printed has all of it (raise the limit "
            f"with cudaDeviceSetLimit on a GPU, or print from fewer threads)")


def _over_repeats(progress, i: int, repeat: int):
    """``progress`` for run ``i`` of ``repeat``: block counts continued across the runs."""
    if progress is None or repeat == 1:
        return progress
    return lambda done, total: progress(i * total + done, repeat * total)
