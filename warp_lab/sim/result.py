"""What a simulated launch returns: :class:`SimResult`, :class:`Finding`, :class:`Metrics`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from warp_lab.errors import source_label

__all__ = ["Finding", "SimResult", "Metrics", "MemoryLineStats", "LineStats",
           "instruction_class", "code_place"]


def code_place(ptx_line: int, source_file: str, source_line: int) -> str:
    """Where an instruction is, as messages say it: ``"PTX line 42, In[3] line 5"``
    (:func:`~warp_lab.errors.source_label`; ``"source line 5"`` without a file); a part
    whose line is 0 (unknown) is left out, ``""`` when both are.

    Args:
        ptx_line: 1-based PTX line, or 0.
        source_file, source_line: from the ``.loc`` before the instruction ("" / 0 if none).
    """
    where = [f"PTX line {ptx_line}"] if ptx_line else []
    if source_line:
        where.append(f"{source_label(source_file) if source_file else 'source'} line "
                     f"{source_line}")
    return ", ".join(where)


@dataclass
class Finding:
    """One problem the checks found (or the reason a launch stopped).

    Attributes:
        kind: ``"out_of_bounds"``, ``"misaligned"``, ``"race_raw"``, ``"race_war"``,
            ``"race_waw"``, ``"divergent_barrier"``, ``"deadlock"``, ``"trap"``,
            ``"budget"``, ``"interrupted"``, ``"warp_sync"``, ``"uninitialized"``
            (initcheck: a read of shared memory no thread of the block wrote),
            ``"nc_write"`` (memcheck: an allocation read through ``ld.global.nc``
            and written in one launch), ``"global_conflict"`` (memcheck: threads of
            one plain global store writing different values to the same address, or
            each the value it computed from a load of that address: one is kept;
            :mod:`~warp_lab.sim.store_conflicts`), ``"division_by_zero"`` (memcheck: an integer
            ``div``/``rem`` with a zero divisor in an active lane), ``"infinite_loop"``
            (lanes back at the head of a loop that only registers decide, with those
            registers unchanged: it never ends; or a spin-wait no thread is left to end),
            ``"co_residency"`` (a spin-wait that no thread of the running blocks can end
            while blocks have not started: it waits for a block that runs only after it,
            which CUDA does not guarantee to be resident with it either;
            :meth:`~warp_lab.sim.progress.ForwardProgress.spin_turn`).
        message: one readable sentence with the numbers.
        block: ``(x, y, z)`` block index (``None`` when not about one block).
        thread: ``(x, y, z)`` thread index within the block (``None`` likewise).
        ptx_line: 1-based PTX line (0 when unknown).
        source_file, source_line: from the ``.loc`` before the instruction ("" / 0 if none);
            ``str()`` names an IPython cell's file ``In[N]``
            (:func:`~warp_lab.errors.source_label`).
        details: extra data (addresses, sizes, the other thread of a race, ...; a race
            between an atomic or strong access and a plain one has ``"atomic"``:
            ``"this"`` when this access is the atomic one, ``"other"`` when the other is; a
            lost update of shared memory, ``s[k] |= bit`` by several threads, is one
            ``race_waw`` with ``"read_ptx_line"`` and ``"update_op"``). The simulator
            reports once per PTX instruction; ``wl.launch`` merges one problem's findings
            at one Python line (an unrolled loop's copies) into the first, whose details
            add ``"ptx_lines"``, ``"merged"`` and ``"examples"``
            (:func:`~warp_lab.runtime.finding_text.merge_by_line`).
    """

    kind: str
    message: str
    block: tuple | None = None
    thread: tuple | None = None
    ptx_line: int = 0
    source_file: str = ""
    source_line: int = 0
    details: dict = field(default_factory=dict)

    def __str__(self) -> str:
        where = []
        if self.block is not None:
            where.append(f"block {self.block}")
        if self.thread is not None:
            where.append(f"thread {self.thread}")
        code = code_place(self.ptx_line, self.source_file, self.source_line)
        if code:
            where.append(code)
        return f"[{self.kind}] {self.message}" + (f" ({', '.join(where)})" if where else "")


@dataclass
class MemoryLineStats:
    """Global-memory traffic of one PTX load/store line (Nsight Compute's definitions).

    Attributes:
        requests: warp-level instructions issued (one request per warp).
        sectors: distinct 32-byte sectors touched, summed over requests.
        sectors_per_request: ``sectors / requests``.
    """

    requests: int = 0
    sectors: int = 0

    @property
    def sectors_per_request(self) -> float:
        return self.sectors / self.requests if self.requests else 0.0


@dataclass
class LineStats:
    """What the instructions of one line (a PTX line, or all the PTX lines of one source
    line) did in a launch: :meth:`Metrics.by_line` builds them.

    Attributes:
        thread_instructions: instructions executed, each active lane counting one.
        warp_instructions: warp-level instructions issued (a warp with any active lane
            counts one).
        divergent_branches: warp-level branches whose active lanes went both ways.
        global_requests, global_sectors: global loads/stores, as
            :class:`MemoryLineStats` counts them (a request is one warp-level
            instruction, a sector 32 bytes; Nsight Compute's ``l1tex__t_requests`` /
            ``l1tex__t_sectors``).
        shared_requests: warp-level shared-memory instructions.
        shared_wavefronts: the passes through the 32 banks those requests needed.
        bank_conflicts: wavefronts beyond the fewest each request needed (one per 128
            bytes the active lanes access: 1 for up to 32 4-byte lanes), summed: the
            *extra* wavefronts, Nsight Compute's "bank conflicts"
            (``l1tex__data_bank_conflicts_pipe_lsu_mem_shared``) for conflict-only
            replays; a 32-way conflict is 31 per request.
    """

    thread_instructions: int = 0
    warp_instructions: int = 0
    divergent_branches: int = 0
    global_requests: int = 0
    global_sectors: int = 0
    shared_requests: int = 0
    shared_wavefronts: int = 0
    bank_conflicts: int = 0

    @property
    def active_lanes(self) -> float:
        """Mean active lanes per warp-instruction (0..32; 0.0 when none issued)."""
        return self.thread_instructions / self.warp_instructions if self.warp_instructions \
            else 0.0

    @property
    def simt_efficiency(self) -> float:
        """:attr:`active_lanes` / 32, 0..1."""
        return self.active_lanes / 32.0

    @property
    def sectors_per_request(self) -> float:
        """Global sectors per request (4 for 32 consecutive 4-byte lanes; 0.0 without)."""
        return self.global_sectors / self.global_requests if self.global_requests else 0.0

    @property
    def wavefronts_per_request(self) -> float:
        """Shared wavefronts per request (1 without conflicts for 4-byte lanes, 32 for a
        32-way conflict; Nsight Compute's "wavefronts per request"); 0.0 without requests."""
        return self.shared_wavefronts / self.shared_requests if self.shared_requests else 0.0

    @property
    def conflicts_per_request(self) -> float:
        """:attr:`bank_conflicts` per shared request (31 for a 32-way conflict)."""
        return self.bank_conflicts / self.shared_requests if self.shared_requests else 0.0

    def add(self, other: "LineStats") -> None:
        """Add ``other``'s counts to this record's."""
        for f in _LINE_FIELDS:
            setattr(self, f, getattr(self, f) + getattr(other, f))


_LINE_FIELDS = ("thread_instructions", "warp_instructions", "divergent_branches",
                "global_requests", "global_sectors", "shared_requests", "shared_wavefronts",
                "bank_conflicts")


@dataclass
class Metrics:
    """Per-launch counters.

    The per-line counters are keyed by **PTX line** (1-based, of the PTX the simulator
    ran), except :attr:`per_source_line`; :meth:`by_line` turns them all into one
    :class:`LineStats` per source line (``.loc``, or any PTX line → line mapping, such as
    the compiler's line map: ``LaunchResult.line_metrics`` is per Python line).

    Attributes:
        per_ptx_line: PTX line → thread-instructions executed there.
        warp_per_ptx_line: PTX line → warp-instructions issued there.
        per_source_line: ``(file, line)`` from ``.loc`` → thread-instructions.
        ptx_source: PTX line → its ``(file, line)`` from ``.loc``, for the lines that ran.
        mix: instruction class (``arithmetic``, ``memory``, ``control``, ``sync``,
            ``special``) → thread-instructions.
        warp_issued: per warp (grid-linear: block-linear * warps_per_block + warp),
            warp-instructions issued; the warps of the blocks that started (all of them
            unless the launch stopped early).
        warp_active_lanes: per warp, sum of active lanes over its issued instructions.
        divergent_branches: warp-level branches whose active lanes split.
        divergent_branches_per_line: PTX line → those branches (the PTX ``bra`` line).
        global_memory: PTX line → :class:`MemoryLineStats` for global loads/stores.
        shared_requests / shared_wavefronts / bank_conflicts: PTX line → counts for
            shared-memory accesses (32 banks of 4 bytes). ``bank_conflicts`` counts
            *extra wavefronts*: those beyond the fewest the access width needs
            (:class:`LineStats`); per request, see :meth:`by_line`.
        barriers: barrier instructions completed, counted per warp.
    """

    per_ptx_line: dict = field(default_factory=dict)
    warp_per_ptx_line: dict = field(default_factory=dict)
    per_source_line: dict = field(default_factory=dict)
    ptx_source: dict = field(default_factory=dict)
    mix: dict = field(default_factory=dict)
    warp_issued: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    warp_active_lanes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    divergent_branches: int = 0
    divergent_branches_per_line: dict = field(default_factory=dict)
    global_memory: dict = field(default_factory=dict)
    shared_requests: dict = field(default_factory=dict)
    shared_wavefronts: dict = field(default_factory=dict)
    bank_conflicts: dict = field(default_factory=dict)
    barriers: int = 0

    def per_ptx_line_stats(self) -> dict[int, LineStats]:
        """PTX line → :class:`LineStats`, for every line that ran or accessed memory."""
        out: dict[int, LineStats] = {}

        def at(line) -> LineStats:
            st = out.get(line)
            if st is None:
                st = out[line] = LineStats()
            return st

        for line, n in self.per_ptx_line.items():
            at(line).thread_instructions += int(n)
        for line, n in self.warp_per_ptx_line.items():
            at(line).warp_instructions += int(n)
        for line, n in self.divergent_branches_per_line.items():
            at(line).divergent_branches += int(n)
        for line, g in self.global_memory.items():
            st = at(line)
            st.global_requests += g.requests
            st.global_sectors += g.sectors
        for name in ("shared_requests", "shared_wavefronts", "bank_conflicts"):
            for line, n in getattr(self, name).items():
                st = at(line)
                setattr(st, name, getattr(st, name) + int(n))
        return out

    def by_line(self, line_of=None) -> dict:
        """Every per-PTX-line counter summed per source line: ``{line: LineStats}``.

        Args:
            line_of: a mapping PTX line → the line to count it under (e.g. a
                ``CompiledKernel``'s ``source_map.ptx_keys``); None: the ``.loc``
                ``(file, line)`` of :attr:`ptx_source`, the keys of
                :attr:`per_source_line`. PTX lines it does not map (or ``.loc`` line 0)
                are left out; :meth:`totals` has them.

        Returns:
            a dict sorted by key.
        """
        if line_of is None:
            line_of = {p: fl for p, fl in self.ptx_source.items() if fl[1]}
        out: dict = {}
        for ptx_line, st in self.per_ptx_line_stats().items():
            key = line_of.get(int(ptx_line))
            if key is None:
                continue
            if key not in out:
                out[key] = LineStats()
            out[key].add(st)
        return dict(sorted(out.items()))

    def totals(self) -> LineStats:
        """All lines together, one :class:`LineStats`."""
        total = LineStats()
        for st in self.per_ptx_line_stats().values():
            total.add(st)
        return total

    def source_line_counts(self, source_file: str | None = None) -> dict:
        """Thread-instructions per source line number (``{line: count}``), for one file
        (matched by suffix) or all files together; line 0 (no location) is dropped."""
        out: dict = {}
        for (f, line), c in self.per_source_line.items():
            if line and (source_file is None or f.endswith(source_file)):
                out[line] = out.get(line, 0) + c
        return out

    @property
    def simt_efficiency(self) -> np.ndarray:
        """Per warp: mean active lanes per issued instruction / 32 (NaN if it issued none)."""
        with np.errstate(all="ignore"):
            return self.warp_active_lanes / (32.0 * self.warp_issued)

    @property
    def mean_simt_efficiency(self) -> float:
        """Over all warps: total active lanes / (32 × warp-instructions)."""
        n = int(self.warp_issued.sum())
        return float(self.warp_active_lanes.sum()) / (32.0 * n) if n else 0.0

    def summary(self) -> list[tuple[str, str]]:
        """The key numbers as ``(what, value)`` text pairs: thread-instructions, SIMT
        efficiency (:attr:`mean_simt_efficiency`), global requests, sectors and sectors per
        request (:class:`MemoryLineStats` summed), shared requests, wavefronts per request
        and bank conflicts (extra wavefronts, in all and per request; :class:`LineStats`),
        divergent branches, barriers, and the busiest source lines
        (:meth:`source_line_counts`). Per-line numbers: the notebook's accessors
        (``warp_lab.notebook.results``) and the attributes."""
        total = MemoryLineStats(sum(v.requests for v in self.global_memory.values()),
                                sum(v.sectors for v in self.global_memory.values()))
        eff = self.mean_simt_efficiency
        rows = [("thread-instructions", f"{sum(self.per_ptx_line.values()):,} "
                 f"({int(self.warp_issued.sum()):,} warp-instructions)"),
                ("SIMT efficiency", f"{eff:.1%} (mean active lanes {32 * eff:.1f} of 32)"),
                ("global memory", f"{total.requests:,} requests, {total.sectors:,} sectors, "
                 f"{total.sectors_per_request:.2f} sectors/request")]
        if self.shared_requests:
            t = self.totals()
            rows.append(("shared memory", f"{t.shared_requests:,} requests, "
                         f"{t.wavefronts_per_request:.2f} wavefronts/request, "
                         f"{t.bank_conflicts:,} bank conflicts (extra wavefronts, "
                         f"{t.conflicts_per_request:.2f}/request)"))
        rows.append(("branches, barriers", f"{self.divergent_branches:,} divergent branches, "
                     f"{self.barriers:,} barriers"))
        lines = self.source_line_counts()
        if lines:
            top = sorted(lines.items(), key=lambda kv: -kv[1])[:5]
            rows.append(("busiest source lines",
                         ", ".join(f"line {ln}: {n:,}" for ln, n in top)))
        return rows

    def __repr__(self) -> str:
        rows = self.summary()
        width = max(len(k) for k, _ in rows)
        return "\n".join(["Metrics (per PTX line in .per_ptx_line, .global_memory, "
                          ".bank_conflicts, ...; per source line in .by_line(); per warp in "
                          ".warp_issued, .warp_active_lanes)"]
                         + [f"  {k:<{width}}  {v}" for k, v in rows])

    def _repr_html_(self) -> str:
        import html

        body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
                       for k, v in self.summary())
        return f"<table>{body}</table>"


@dataclass
class SimResult:
    """The outcome of :func:`warp_lab.sim.run`.

    Attributes:
        printed: text written by ``printf`` (``vprintf``), in thread order, all of it.
        printf_calls: how many ``printf`` calls ran.
        printf_bytes: bytes their records take in a GPU's printf FIFO (at least:
            :func:`~warp_lab.sim.printf.fifo_overwritten`).
        printf_overwritten: how many of the first calls a GPU's 1 MiB printf FIFO would
            have overwritten before the host read it (CUDA Programming Guide, "Formatted
            Output": the FIFO is circular, older output is overwritten); 0 when all fit.
        printf_overwritten_chars: the length of their text, the part of ``printed`` a GPU
            would not show (``printed[printf_overwritten_chars:]`` is what it shows).
        instructions: thread-instructions executed (each active lane counts one).
        warp_instructions: warp-instructions issued.
        seconds: wall-clock seconds of the simulation.
        metrics: :class:`Metrics` (``None`` when run with ``metrics=False``).
        findings: list of :class:`Finding`.
        partial: ``True`` if the launch stopped early (fault, budget, interrupt,
            deadlock); memory then holds whatever had been written so far.
        tier: which simulator ran the launch: ``"interpreter"`` (:mod:`warp_lab.sim.machine`)
            or ``"compiled"`` (:mod:`warp_lab.sim.compiled`, host code made from the PTX).
        tier_reason: why that tier ran (``run``'s ``tier`` argument, or what kept the
            compiled tier from running it: a sentence).
    """

    printed: str = ""
    printf_calls: int = 0
    printf_bytes: int = 0
    printf_overwritten: int = 0
    printf_overwritten_chars: int = 0
    instructions: int = 0
    warp_instructions: int = 0
    seconds: float = 0.0
    metrics: Metrics | None = None
    findings: list = field(default_factory=list)
    partial: bool = False
    tier: str = "interpreter"
    tier_reason: str = ""

    @property
    def instructions_per_second(self) -> float:
        return self.instructions / self.seconds if self.seconds else 0.0


_CLASSES = {
    "memory": {"ld", "st", "atom", "red", "ldu", "prefetch", "prefetchu", "cvta", "isspacep",
               "cp", "ldmatrix", "stmatrix"},
    "control": {"bra", "brx", "call", "ret", "exit", "trap", "brkpt"},
    "sync": {"bar", "barrier", "membar", "fence", "shfl", "vote", "match", "redux",
             "activemask", "nanosleep"},
}


def instruction_class(ins) -> str:
    """Class of an instruction for the mix: memory, control, sync, special, arithmetic."""
    for k, ops in _CLASSES.items():
        if ins.op in ops:
            return k
    if ins.op == "mov" and any(s[0] == "s" for s in ins.srcs):
        return "special"
    return "arithmetic"
