"""``LaunchResult``: what one ``wl.launch`` did."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from functools import cached_property

from warp_lab.compiler.artifact import CompiledKernel
from warp_lab.runtime.device import DeviceInfo

__all__ = ["LaunchResult", "PARTIAL_NOTE"]

#: findings written out in a ``LaunchResult``'s repr; the rest are counted
REPR_FINDINGS = 5

#: what a launch the simulator stopped early leaves in the caller's arrays (the simulator
#: copies its memory back only after a complete launch: ``runtime/sim_backend.py``)
PARTIAL_NOTE = ("PARTIAL: the simulator stopped early (see the findings), so nothing was "
                "copied back: your arrays hold what they held before the launch")


@dataclass(frozen=True)
class LaunchResult:
    """The record of a launch.

    Attributes:
        compiled: the :class:`CompiledKernel` that ran.
        device: where it ran; ``device.reason`` says why for ``device="auto"``.
        grid, block: ``(x, y, z)`` blocks per grid and threads per block.
        launch_dim: the ``dim`` extents ``(x, y, z)`` given to the kernel.
        times: seconds per timed launch (``repeat`` of them; on the GPU
            measured with CUDA events, on the simulator with a wall clock).
        argument_bytes: bytes of all array arguments (what a kernel that
            reads each input once and writes each output once moves).
        printed: what the kernel printed (``print``/``wl.printf``) as a GPU would show
            it; the notebook view shows the first 10,000 lines / 1 MiB. A simulator
            launch whose calls pass a GPU's printf FIFO (1 MiB) keeps, as a GPU does, only
            the newest ones (CUDA Programming Guide, "Formatted Output": the FIFO is
            circular, older output is overwritten), says so in ``notes``, and keeps all
            of it in ``sim.printed``.
        sim: the simulator's ``SimResult`` (metrics, findings, instruction
            counts), None on a GPU.
        host_seconds: host-side time of the whole ``wl.launch`` call.
        notes: the back end's remarks (a stopped launch, ...).
        checks: the simulator checks that ran (``"memcheck"``, ``"racecheck"``,
            ``"initcheck"``, ``"barrier"``); ``()`` on a GPU.
        tier: which simulator ran it: ``"interpreter"`` or ``"compiled"``
            (:mod:`warp_lab.sim.compiled`, ``wl.launch(..., tier=...)``); ``""`` on a GPU.
        tier_reason: why that tier ran: the ``tier`` asked for, or what kept the compiled
            tier from running the launch (metrics asked for, shared memory, a barrier, a
            fault the interpreter then reported, ...); ``""`` on a GPU.
    """

    compiled: CompiledKernel
    device: DeviceInfo
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    launch_dim: tuple[int, int, int]
    times: tuple[float, ...]
    argument_bytes: int
    printed: str = ""
    sim: object | None = None
    host_seconds: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)
    checks: tuple[str, ...] = ()
    tier: str = ""
    tier_reason: str = ""

    @property
    def checks_text(self) -> str:
        """Which simulator checks ran and what that leaves unchecked (``""`` on a GPU).

        Findings are only as complete as the checks asked for: a kernel with
        shared memory run without racecheck or initcheck (``checks=`` that leaves
        them out; the default, ``"auto"``, runs them for such a kernel) says what
        they would have looked for, and how to ask; and a kernel with a barrier
        that ran without the barrier check (``checks="memcheck,racecheck"`` names
        no ``barrier``) says that too.
        """
        if self.device.kind != "sim":
            return ""
        ran = ", ".join(self.checks) if self.checks else "none"
        text = f"simulator checks: {ran}" + ("" if self.findings else " (no findings)")
        missed = {"racecheck": "a shared-memory race",
                  "initcheck": "a read of shared memory no thread wrote",
                  "barrier": "a barrier that only some threads of a block reach"}
        # racecheck/initcheck matter for a kernel with shared memory, the barrier check for
        # one with a barrier; checks="memcheck,racecheck" leaves the barrier check out,
        # where the magic's --check of the same names keeps it
        ck = self.compiled
        needed = {"racecheck": ck.uses_shared_memory, "initcheck": ck.uses_shared_memory,
                  "barrier": ck.has_block_barrier}
        off = [c for c in missed if c not in self.checks and needed[c]]
        if off:
            from warp_lab.runtime.launch import CHECKS   # (launch imports this module)

            wanted = tuple(c for c in CHECKS if c in self.checks or c in off)
            def listed(words, last):  # "a, b and c"
                return ", ".join(words[:-1]) + f" {last} " + words[-1] if len(words) > 1 \
                    else words[0]

            text += (f"; {listed(off, 'and')} did not run, so "
                     f"{listed([missed[c] for c in off], 'or')} would go unreported: "
                     f"checks={wanted!r} (%%warp_kernel --check "
                     f"{','.join(c for c in wanted if c != 'barrier')})")
        return text

    @property
    def time(self) -> float:
        """Median seconds per launch."""
        return statistics.median(self.times) if self.times else float("nan")

    @property
    def time_text(self) -> str:
        """The launch count and :attr:`time` in words, saying what kind of time it is: on
        the simulator the CPU wall-clock time the simulator took, which says nothing about
        how fast the kernel runs on a GPU (``"1 launch, simulated in 13.600 ms (CPU
        simulator time, not GPU time)"``, with ``compiled tier;`` before ``CPU`` when
        :mod:`warp_lab.sim.compiled` ran it); on a GPU the kernel time measured with CUDA
        events (``"3 launches, median 0.012 ms GPU time (CUDA events)"``)."""
        n = len(self.times)
        count = f"{n} launch{'es' * (n != 1)}"
        ms = f"{self.time * 1e3:.3f} ms"
        if self.device.kind == "sim":
            each = " each (median; " if n > 1 else " ("
            if self.tier == "compiled":   # (the interpreter's text stays as it was)
                each += "compiled tier; "
            return f"{count}, simulated in {ms}{each}CPU simulator time, not GPU time)"
        return f"{count}, {'median ' * (n > 1)}{ms} GPU time (CUDA events)"

    @property
    def threads(self) -> int:
        g, b = self.grid, self.block
        return g[0] * g[1] * g[2] * b[0] * b[1] * b[2]

    @property
    def threads_text(self) -> str:
        """The launch's thread count in words: ``"1,024 threads"``, and for a ``dim=`` launch
        that is not a whole number of blocks how many of them run the kernel, ``"1,024
        threads: 1,000 inside dim=, 24 past it return at entry"`` (the entry guard,
        ``docs/language.md``), so that ``dim=n`` reads as the ``n`` threads it runs."""
        total = self.threads
        inside = self.launch_dim[0] * self.launch_dim[1] * self.launch_dim[2]
        if getattr(self.compiled, "launch_ndim", 1) == 4:
            # a 4-index wp.tid(): the grid's x holds J rows of ceil(L / block x) blocks and
            # launch_dim is (L, K, I) (runtime.launch._warp_geometry)
            inside *= self.grid[0] // max(1, -(-self.launch_dim[0] // self.block[0]))
        if inside >= total:
            return f"{total:,} threads"
        return (f"{total:,} threads: {inside:,} inside dim=, {total - inside:,} past it "
                "return at entry")

    @property
    def bandwidth(self) -> float | None:
        """Achieved bytes/s counting :attr:`argument_bytes` once per launch (GPU only)."""
        if self.device.kind != "cuda" or not self.times:
            return None
        return self.argument_bytes / self.time

    @property
    def findings(self) -> list:
        """Simulator check findings (memcheck, racecheck, barriers); empty on a GPU."""
        return list(getattr(self.sim, "findings", []) or [])

    @property
    def metrics(self):
        """Simulator metrics, or None on a GPU."""
        return getattr(self.sim, "metrics", None)

    @cached_property
    def line_metrics(self) -> dict:
        """Simulator counters per Python line, ``{line: LineStats}`` (``{}`` on a GPU):
        thread- and warp-instructions, active lanes, divergent branches, global requests
        and sectors, shared requests, wavefronts and bank conflicts
        (:class:`~warp_lab.sim.result.LineStats`). Lines are the line keys of the
        compiler's source map (``compiled.source_map.ptx_keys``): the kernel's cell or
        file lines, and a device function's of another cell
        (``compiled.source_map.line(key)`` says which file and line). The
        simulator's own ``metrics`` attributes are per PTX line. Worked out once per result
        (the launch view's HTML, its text and the accessors all read it); read-only."""
        m = self.metrics
        return {} if m is None else m.by_line(self.compiled.source_map.ptx_keys)

    @property
    def partial(self) -> bool:
        """True when the simulator stopped early (instruction budget, interrupt)."""
        return bool(getattr(self.sim, "partial", False))

    def __repr__(self) -> str:
        lines = [f"<LaunchResult {self.compiled.name} on {self.device}",
                 f"  grid={self.grid} block={self.block} ({self.threads_text}), "
                 f"{self.time_text}"]
        if self.device.reason:
            lines.append(f"  device: {self.device.reason}")
        if self.bandwidth:
            lines.append(f"  {self.bandwidth / 1e9:.1f} GB/s over the arguments")
        if self.sim is not None:
            n = getattr(self.sim, "instructions", None)
            if n is not None:
                lines.append(f"  {n} thread-instructions")
            findings = self.findings
            for f in findings[:REPR_FINDINGS]:
                lines.append(f"  finding: {f}")
            if len(findings) > REPR_FINDINGS:   # never drop some silently
                more = len(findings) - REPR_FINDINGS
                lines.append(f"  ... and {more} more finding{'s' if more > 1 else ''} "
                             f"(.findings lists all {len(findings)})")
            lines.append(f"  {self.checks_text}")
            from warp_lab.runtime.line_table import line_table_text

            table = line_table_text(self)
            if table:
                lines.append("  per Python line (the busiest by warp-instructions):")
                lines += [f"    {t}" for t in table]
        for note in self.notes:
            lines.append(f"  {note}" if note == PARTIAL_NOTE else f"  note: {note}")
        if self.partial and PARTIAL_NOTE not in self.notes:
            lines.append(f"  {PARTIAL_NOTE}")
        if self.printed:
            text = self.printed if len(self.printed) < 400 else self.printed[:400] + "..."
            lines.append("  printed:\n    " + text.rstrip("\n").replace("\n", "\n    "))
        return "\n".join(lines) + ">"
