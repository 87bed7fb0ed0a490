"""The stress suite's engine (issue 25): what a hostile or careless user does to warp_lab,
done many times with random choices, and counted.

Four parts, each ``part(rng, rounds, tally)``, one round a few seconds of one core:

- :func:`interrupts`: a real SIGINT (what the Jupyter kernel's interrupt sends) at a random
  moment of a compile (front end, LLVM, ptxas, nvdisasm), of a launch (its compile, the
  simulator, the copy back) or of ``wl.debug(...).run_to_end()``. It must be honoured within
  a second (a ``KeyboardInterrupt`` out of the call, ``wl.LaunchInterrupted`` with the
  partial result from a launch) and leave every array with its old values or the launch's
  whole result, compared with copies; the next compile and launch must work.
- :func:`hang_shapes`: every spin and deadlock shape, between two threads chosen at random
  as lanes of one warp, warps of one block or blocks of a grid (a pair waiting for each
  other, two threads polling flags nobody writes, every thread polling one, a vote on an
  unset flag, a barrier waiting for a thread that spins): each must end with a hang finding
  within a second of simulation; a ping-pong and a lock that do make progress must end with
  numpy's answer and no finding.
- :func:`bad_inputs`: bad and huge inputs at every public entry (``wl.compile``,
  ``wl.launch``, ``wl.debug``, ``wl.cuda_kernel``, the Warp namespace's ``wp.launch`` and the
  ``%%warp_kernel`` and ``%%cuda_kernel`` magics in IPython's InteractiveShell): a warp_lab
  error (located at the cell's line where the input is source text) or IPython's
  UsageError, never another exception; arrays of a refused launch unchanged.
- :func:`cache_attacks`: crafted entries in the user's own cache folder (truncated, flipped
  bytes, 200,000 nested lists or wrong fields under a valid digest, an 8 GiB sparse file, a
  FIFO, a link to ``/dev/zero``, a folder, another compile's cubin), hostile folders (others
  may write it, a link to such a folder, swapped under the reader) and concurrent writers:
  each is a miss or the right entry within a second, never an exception or another's PTX.

A watchdog sends SIGINT to a part that runs past :data:`WATCHDOG_S` and counts a hang.
``tests/stress/test_stress.py`` runs one round of each (pytest ``-m stress``; more with
``WARP_LAB_STRESS_ROUNDS``), ``python -m tools.stress --minutes N`` runs rounds for N
minutes and prints the :class:`Tally`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import shutil
import signal
import tempfile
import threading
import time
import traceback
import warnings

import numpy as np

import warp_lab as wl
from warp_lab.compiler import cache as C
from warp_lab.lang.kernel import Kernel, cell_source

#: a part that runs this long is stopped (SIGINT) and counted as a hang
WATCHDOG_S = 60.0
#: a SIGINT must end the call within this many seconds
HONOUR_S = 1.0
#: a hang must be found within this many seconds of simulation
FIND_S = 1.0
#: kinds of finding that say "this launch would never end"
HANG_KINDS = {"infinite_loop", "deadlock", "divergent_barrier", "co_residency"}

I32 = wl.array(dtype=wl.int32)
F32 = wl.array(dtype=wl.float32)


@dataclasses.dataclass
class Tally:
    """What the suite tried and what went wrong (every list holds one line per event)."""

    interrupts_tried: int = 0
    interrupts_honoured: int = 0            # within honour_s
    interrupt_worst_s: float = 0.0
    interrupt_phases: dict = dataclasses.field(default_factory=dict)   # phase -> count
    interrupt_slowest: dict = dataclasses.field(default_factory=dict)  # phase -> seconds
    hang_shapes: dict = dataclasses.field(default_factory=dict)   # shape -> [sim seconds]
    hangs_missed: list = dataclasses.field(default_factory=list)  # not found or too late
    progress_shapes: int = 0
    progress_reported: list = dataclasses.field(default_factory=list)  # false hangs
    bad_inputs: int = 0
    bad_inputs_by_entry: dict = dataclasses.field(default_factory=dict)
    cache_attacks: int = 0
    lost_arrays: list = dataclasses.field(default_factory=list)
    internal_errors: list = dataclasses.field(default_factory=list)
    hangs: list = dataclasses.field(default_factory=list)      # the watchdog had to stop it
    wrong: list = dataclasses.field(default_factory=list)      # wrong answers, unlocated errors
    #: the bounds this tally holds calls to: the promises (HONOUR_S, FIND_S) by default;
    #: the test suite, whose parallel workers share the cores, passes wider ones
    honour_s: float = HONOUR_S
    find_s: float = FIND_S

    def failures(self) -> list[str]:
        """Every line that breaks a promise (empty when all held)."""
        late = self.interrupts_tried - self.interrupts_honoured
        return ([f"{late} interrupt(s) not honoured within {self.honour_s:g} s"] if late else []) \
            + self.hangs_missed + self.progress_reported + self.lost_arrays \
            + self.internal_errors + self.hangs + self.wrong

    def summary(self) -> str:
        """The counts, one per line, as ``docs/benchmarks.md`` quotes them."""
        found = {k: (len(v), max(v)) for k, v in sorted(self.hang_shapes.items())}
        lines = [
            f"interrupts tried: {self.interrupts_tried}, honoured within {self.honour_s:g} s: "
            f"{self.interrupts_honoured}; tried, and the slowest to end, per moment:",
            *[f"  {k}: {v}, slowest {self.interrupt_slowest[k] * 1000:.0f} ms"
              for k, v in sorted(self.interrupt_phases.items())],
            f"hang shapes found: {sum(n for n, _ in found.values())} of "
            f"{sum(n for n, _ in found.values()) + len(self.hangs_missed)}, in "
            f"{len(found)} shapes; slowest to find (s of simulation) per shape:",
            *[f"  {k}: {n} found, slowest {t * 1000:.0f} ms" for k, (n, t) in found.items()],
            f"progress shapes run: {self.progress_shapes}, wrongly reported: "
            f"{len(self.progress_reported)}",
            f"bad inputs tried: {self.bad_inputs} ("
            + ", ".join(f"{k} {v}" for k, v in sorted(self.bad_inputs_by_entry.items())) + ")",
            f"cache attacks tried: {self.cache_attacks}",
            f"lost arrays: {len(self.lost_arrays)}",
            f"internal errors: {len(self.internal_errors)}",
            f"hangs: {len(self.hangs)}",
            f"wrong results or unlocated errors: {len(self.wrong)}",
        ]
        return "\n".join(lines)


def _count(d: dict, key: str, n: int = 1) -> None:
    d[key] = d.get(key, 0) + n


# --------------------------------------------------------------------------- signals

@contextlib.contextmanager
def python_sigint():
    """Python's own SIGINT handler for the block (a runner may have left SIG_IGN)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class _Watchdog:
    """Sends SIGINT if the block runs past ``seconds``; ``fired`` says whether it did."""

    def __init__(self, seconds: float):
        self.seconds, self.fired = seconds, False
        self._done = threading.Event()

    def _run(self):
        if not self._done.wait(self.seconds):
            self.fired = True
            os.kill(os.getpid(), signal.SIGINT)

    def __enter__(self):
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join()
        return False


def guarded(tally: Tally, what: str, fn, *args, seconds: float = WATCHDOG_S):
    """``fn(*args)`` under a watchdog: a run past ``seconds`` is a hang in ``tally``."""
    dog = _Watchdog(seconds)
    try:
        with dog:
            return fn(*args)
    except KeyboardInterrupt:
        if not dog.fired:
            raise
        tally.hangs.append(f"{what}: still running after {seconds:g} s")
    return None


def _sigint_during(op, delay: float):
    """Run ``op()`` with a real SIGINT sent ``delay`` seconds after it started (unless it
    returned first). Returns ``(outcome, value, late)``: ``"done"`` (returned, no signal
    sent), ``"swallowed"`` (returned though the signal came during it), ``"raised"``
    (a KeyboardInterrupt, ``value`` the exception) or ``"error"`` (another exception);
    ``late`` is the seconds from the signal to the end of the call."""
    lock = threading.Lock()
    state = {"armed": True, "sent": None}

    def send():
        with lock:
            if state["armed"]:
                state["sent"] = time.monotonic()
                os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(delay, send)
    try:
        try:
            timer.start()
            value = op()
            with lock:      # (a signal sent meanwhile is raised here, at the latest)
                state["armed"] = False
            outcome = "swallowed" if state["sent"] is not None else "done"
        except KeyboardInterrupt as exc:
            outcome, value = "raised", exc
        except Exception as exc:  # noqa: BLE001 - the caller classifies it
            outcome, value = "error", exc
        end = time.monotonic()
        timer.cancel()
        timer.join()
    except KeyboardInterrupt as exc:   # the signal landed in this function's own lines
        outcome, value, end = "raised", exc, time.monotonic()
    late = 0.0 if state["sent"] is None else end - state["sent"]
    return outcome, value, late


# --------------------------------------------------------------------------- kernels

def _source_kernel(text: str, name: str) -> Kernel:
    """The kernel ``name`` defined by ``text``, run as a notebook cell of its own."""
    _source_kernel.n += 1
    filename = f"<stress cell {_source_kernel.n}>"
    cell_source(text, filename)
    ns = {"wl": wl, "__name__": "stress_cell"}
    exec(compile(text, filename, "exec"), ns)  # noqa: S102 - the suite's own source
    return ns[name]


_source_kernel.n = 0


def _long_kernel(c: int) -> Kernel:
    """A kernel of its own cache key (``c``): a loop of ``n`` turns adding ``x[k & 63]``."""
    return _source_kernel(f"""
@wl.kernel
def long_{c}(x: wl.array(dtype=wl.int32), y: wl.array(dtype=wl.int32), n: int):
    i = wl.tid()
    s = {c}
    for k in range(n):
        s += x[k & 63]
    y[i] = s
    x[i] = x[i] + 1
""", f"long_{c}")


@wl.kernel
def two_outputs(x: F32, a: F32, b: F32, n: int):
    i = wl.tid()
    s = x[i]
    for k in range(n):
        s = s * 0.5 + 1.0
    a[i] = s
    b[i] = x[i] * 2.0


@wl.kernel
def pair_deadlock(x: I32, a: int, b: int):
    # thread a waits for x[1], which b sets after its own wait for x[0], which a sets
    t = wl.tid()
    if t == a:
        while wl.atomic_load(x, 1) == 0:
            pass
        wl.atomic_store(x, 0, 1)
    elif t == b:
        while wl.atomic_load(x, 0) == 0:
            pass
        wl.atomic_store(x, 1, 1)


@wl.kernel
def pair_unset(x: I32, a: int, b: int):
    # thread a polls x[0], thread b polls x[1]; nobody writes either
    t = wl.tid()
    if t == a:
        while wl.atomic_load(x, 0) == 0:
            pass
    elif t == b:
        while wl.atomic_load(x, 1) == 0:
            pass


@wl.kernel
def all_spin(x: I32, a: int, b: int):
    # every thread polls a flag nobody writes
    while wl.atomic_load(x, a & 1) == 0:
        pass


@wl.kernel
def vote_spin(x: I32, a: int, b: int):
    # every warp votes on a flag nobody writes
    while not wl.any_sync(wl.FULL_MASK, wl.atomic_load(x, 0) == 1):
        pass


@wl.kernel
def barrier_vs_spin(x: I32, a: int, b: int):
    # thread a spins on x[0], which b sets only after the block's barrier a never reaches
    t = wl.tid()
    if t == a:
        while wl.atomic_load(x, 0) == 0:
            pass
    wl.syncthreads()
    if t == b:
        wl.atomic_store(x, 0, 1)


@wl.kernel
def barrier_forever(x: I32, a: int, b: int):
    # a loop with a barrier that no thread ever leaves: the flag is never set
    while wl.atomic_load(x, a & 1) == 0:
        wl.syncthreads()


@wl.kernel
def shuffle_forever(x: I32, a: int, b: int):
    # a loop of shuffles over a flag nobody sets
    v = wl.tid()
    while wl.atomic_load(x, 0) == 0:
        v += wl.shfl_xor_sync(wl.FULL_MASK, v, 1)
    x[2] = v


@wl.kernel
def wait_for_a_later_block(x: I32, a: int, b: int):
    # thread a (block 0) waits for thread b of the last block, which cannot be resident
    # while block 0 runs: more blocks than the GPU holds at once
    t = wl.tid()
    if t == a:
        while wl.atomic_load(x, 0) == 0:
            pass
    if t == b:
        wl.atomic_store(x, 0, 1)


@wl.kernel
def flag_before_barrier(x: I32, a: int, b: int):
    # thread a waits for the flag b sets before the block's barrier: it ends
    t = wl.tid()
    if t == a:
        while wl.atomic_load(x, 0) == 0:
            pass
    if t == b:
        wl.atomic_store(x, 0, 1)
    wl.syncthreads()
    if t == a:
        x[1] = 5


@wl.kernel
def pair_handoff(x: I32, a: int, b: int, n: int):
    # a ping-pong of n rounds through x[0]: a goes first, b answers; x[2] counts a's turns
    t = wl.tid()
    k = 0
    while k < n:
        if t == a:
            while wl.atomic_load(x, 0) != 0:
                pass
            wl.atomic_add(x, 2, 1)
            wl.atomic_store(x, 0, 1)
        elif t == b:
            while wl.atomic_load(x, 0) != 1:
                pass
            wl.atomic_add(x, 3, 1)
            wl.atomic_store(x, 0, 0)
        k += 1


@wl.kernel
def lock_counter(x: I32):
    # every thread takes the lock x[0], then counts itself in x[1] with a plain load+store
    i = wl.tid()
    while wl.atomic_cas(x, 0, 0, 1) != 0:
        pass
    wl.threadfence()
    x[1] = x[1] + 1
    x[2] = x[2] + i
    wl.threadfence()
    wl.atomic_exch(x, 0, 0)


# --------------------------------------------------------------------------- interrupts

def _honoured(tally: Tally, phase: str, outcome: str, value, late: float) -> bool:
    """Count one interrupt that was sent; False (and a line in ``tally``) unless it ended
    the call with a KeyboardInterrupt within ``tally.honour_s``."""
    tally.interrupts_tried += 1
    _count(tally.interrupt_phases, phase)
    tally.interrupt_worst_s = max(tally.interrupt_worst_s, late)
    tally.interrupt_slowest[phase] = max(tally.interrupt_slowest.get(phase, 0.0), late)
    if outcome == "error":
        tally.internal_errors.append(f"interrupt during {phase}: {_describe(value)}")
        return False
    if outcome == "swallowed":
        tally.wrong.append(f"interrupt during {phase}: swallowed, the call returned")
        return False
    if late >= tally.honour_s:
        tally.wrong.append(f"interrupt during {phase}: honoured {late:.2f} s late")
        return False
    tally.interrupts_honoured += 1
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        tally.internal_errors.append(f"interrupt during {phase}: SIGINT handler not restored")
    return True


def _interrupt_launch(rng, tally: Tally, fresh: bool, debug: bool) -> None:
    """A launch that would run for minutes, interrupted at a random moment of its compile
    (``fresh``: a kernel of its own cache key) or of its simulation."""
    c = int(rng.integers(1 << 30)) if fresh else 7
    kernel = _long_kernel(c)
    x = rng.integers(-100, 100, 64).astype(np.int32)
    y = np.zeros(64, np.int32)
    x0, y0 = x.copy(), y.copy()
    delay = float(rng.uniform(0.0, 0.9 if fresh else 0.4))
    if debug:
        def op():
            return wl.debug(kernel, dim=64, inputs=[x, y, 2_000_000_000]).run_to_end()
    else:
        def op():
            return wl.launch(kernel, dim=64, inputs=[x, y, 2_000_000_000], device="sim",
                             max_instructions=1 << 62)
    outcome, value, late = _sigint_during(op, delay)
    phase = "wl.debug run_to_end" if debug else "launch (compile)" if fresh else "launch"
    if outcome == "done":
        tally.wrong.append(f"{phase}: a launch of 2e9 turns ended before its interrupt")
        return
    _honoured(tally, phase, outcome, value, late)
    if not (np.array_equal(x, x0) and np.array_equal(y, y0)):
        tally.lost_arrays.append(f"{phase}: arrays changed by an interrupted launch")
    if isinstance(value, wl.LaunchInterrupted):
        r = value.result
        if not r.partial or [f.kind for f in r.findings] != ["interrupted"]:
            tally.wrong.append(f"{phase}: partial result {r.partial} {r.findings}")
        if not debug and wl.last_launch() is not r:
            tally.wrong.append(f"{phase}: wl.last_launch() is not the interrupted launch")


_short_seconds = [0.05]


def _interrupt_short_launch(rng, tally: Tally) -> None:
    """A launch of ~0.1 s with two outputs, interrupted at any moment, its copy-back
    included: the outputs hold their old values or the whole result, never a mix."""
    n = int(rng.integers(32, 600))
    x = rng.standard_normal(n).astype(np.float32)
    a, b = np.full(n, -1, np.float32), np.full(n, -2, np.float32)
    a0, b0 = a.copy(), b.copy()
    turns = int(rng.integers(1, 40))
    # a moment of the launch as long as the last one took (a tenth past it: some end first)
    delay = float(rng.uniform(0.0, 1.1 * _short_seconds[0]))
    t0 = time.monotonic()
    outcome, value, late = _sigint_during(
        lambda: wl.launch(two_outputs, dim=n, inputs=[x, a, b, turns], device="sim"), delay)
    if outcome == "done":
        _short_seconds[0] = time.monotonic() - t0
    want_a = x.copy()
    for _ in range(turns):
        want_a = want_a * np.float32(0.5) + np.float32(1.0)
    old = np.array_equal(a, a0) and np.array_equal(b, b0)
    new = np.allclose(a, want_a, rtol=1e-6) and np.array_equal(b, x * np.float32(2))
    if outcome == "done":
        if not new:
            tally.wrong.append("short launch: wrong result")
        return
    _honoured(tally, "launch (short, copy-back)", outcome, value, late)
    if not (old or new):
        tally.lost_arrays.append(f"short launch interrupted after {delay:.3f} s: outputs "
                                 "hold neither their old values nor the result")


def _interrupt_compile(rng, tally: Tally) -> None:
    """``wl.compile`` of a kernel of its own cache key (front end, LLVM, ptxas, nvdisasm),
    interrupted at a random moment; the same kernel then compiles and runs right."""
    c = int(rng.integers(1 << 30))
    kernel = _long_kernel(c)
    delay = float(rng.uniform(0.0, 0.5))
    outcome, value, late = _sigint_during(lambda: wl.compile(kernel, arch="sm_90"), delay)
    if outcome != "done":
        _honoured(tally, "wl.compile", outcome, value, late)
    try:
        ck = wl.compile(kernel, arch="sm_90")
        x = np.arange(64, dtype=np.int32)
        y = np.zeros(64, np.int32)
        wl.launch(ck, dim=64, inputs=[x, y, 3], device="sim")
        if not (np.array_equal(y, np.full(64, c + 0 + 1 + 2, np.int32))
                and np.array_equal(x, np.arange(64) + 1)):
            tally.wrong.append(f"compile after an interrupt: wrong result {y[:4]}")
    except Exception as exc:  # noqa: BLE001
        tally.internal_errors.append(f"compile after an interrupt: {_describe(exc)}")


def _interrupt_llvm(rng, tally: Tally) -> None:
    """A compile that keeps LLVM busy for seconds (2,000 copies of a loop body, within the
    budgets), interrupted in its optimisation."""
    c = int(rng.integers(1 << 30))
    kernel = _source_kernel(f"""
T = tuple(range(2000))

@wl.kernel
def slow_{c}(a: wl.array(dtype=wl.float32)):
    i = wl.tid()
    s = {c % 1000}.0
    for j in range(len(T)):
        s += a[i] * float(T[j])
    a[i] = s
""", f"slow_{c}")
    delay = float(rng.uniform(0.2, 0.6))
    outcome, value, late = _sigint_during(
        lambda: wl.compile(kernel, arch="sm_90", opt=3, sass=False), delay)
    if outcome == "done":
        tally.wrong.append("slow compile ended before its interrupt")
        return
    _honoured(tally, "wl.compile (LLVM O3)", outcome, value, late)


MAGIC_LAUNCH = """%%warp_kernel --show ptx --launch "dim=64, inputs=[si_x, si_y, 2_000_000_000]"
def magic_long_{c}(x: wl.array(dtype=wl.int32), y: wl.array(dtype=wl.int32), n: int):
    i = wl.tid()
    s = {c}
    for k in range(n):
        s += x[k & 63]
    y[i] = s
    x[i] = x[i] + 1
"""


def _interrupt_magic(rng, tally: Tally, shell) -> None:
    """A ``%%warp_kernel --launch`` cell (compile, view, launch of 2e9 turns) interrupted at
    a random moment, as the notebook's interrupt button does: the cell ends with a
    KeyboardInterrupt (IPython shows it: ``run_cell`` returns it in ``error_in_exec``)."""
    x = rng.integers(-100, 100, 64).astype(np.int32)
    y = np.zeros(64, np.int32)
    x0, y0 = x.copy(), y.copy()
    shell.user_ns.update(si_x=x, si_y=y)
    c = int(rng.integers(4)) if rng.random() < 0.7 else int(rng.integers(1 << 30))
    cell = MAGIC_LAUNCH.format(c=c)

    def op():
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            saved = shell.display_pub.publish
            shell.display_pub.publish = lambda *a, **k: None
            try:
                return shell.run_cell(cell)
            finally:
                shell.display_pub.publish = saved

    outcome, value, late = _sigint_during(op, float(rng.uniform(0.0, 0.8)))
    if outcome == "done":
        tally.wrong.append("%%warp_kernel --launch: 2e9 turns ended before the interrupt")
        return
    if outcome == "swallowed":      # what run_cell does with it: the cell's error
        err = value.error_in_exec
        outcome = "raised" if isinstance(err, KeyboardInterrupt) else \
            "error" if err is not None else "swallowed"
        value = err
    _honoured(tally, "%%warp_kernel --launch", outcome, value, late)
    if not (np.array_equal(x, x0) and np.array_equal(y, y0)):
        tally.lost_arrays.append("%%warp_kernel --launch: arrays changed by an interrupted "
                                 "launch")


def interrupts(rng, rounds: int, tally: Tally, shell=None) -> None:
    """``rounds`` of random SIGINTs over compiles, launches and a magic cell (~4 s each)."""
    shell = shell if shell is not None else _shell()
    with python_sigint():
        wl.launch(two_outputs, dim=32, inputs=[np.zeros(32, np.float32)] * 3 + [1],
                  device="sim")
        for r in range(rounds):
            for _ in range(2):
                _interrupt_short_launch(rng, tally)
            _interrupt_launch(rng, tally, fresh=False, debug=False)
            _interrupt_launch(rng, tally, fresh=True, debug=False)
            _interrupt_launch(rng, tally, fresh=False, debug=True)
            _interrupt_compile(rng, tally)
            _interrupt_magic(rng, tally, shell)
            if r % 2 == 0:
                _interrupt_llvm(rng, tally)


# --------------------------------------------------------------------------- hangs

def _pair(rng, shape: str):
    """``(dim, block_dim, a, b)``: two threads of a launch, as lanes of one warp, warps of
    one block or blocks of a grid."""
    bs = int(rng.choice([32, 64, 128, 256]))
    if shape == "lanes of one warp":
        w = int(rng.integers(bs // 32))
        a, b = (int(v) + 32 * w for v in rng.choice(32, 2, replace=False))
        return bs, bs, a, b
    if shape == "warps of one block":
        bs = max(bs, 64)
        wa, wb = (int(v) for v in rng.choice(bs // 32, 2, replace=False))
        return bs, bs, wa * 32 + int(rng.integers(32)), wb * 32 + int(rng.integers(32))
    nb = int(rng.integers(2, 5))
    ba, bb = (int(v) for v in rng.choice(nb, 2, replace=False))
    return nb * bs, bs, ba * bs + int(rng.integers(bs)), bb * bs + int(rng.integers(bs))


SHAPES = ("lanes of one warp", "warps of one block", "blocks of a grid")
#: (name, kernel, the shapes it hangs in)
HANGS = (("pair waiting for each other", pair_deadlock, SHAPES),
         ("two polls of flags nobody writes", pair_unset, SHAPES),
         ("every thread polls a flag nobody writes", all_spin, SHAPES),
         ("vote on a flag nobody writes", vote_spin, SHAPES),
         # (b in another block sets the flag after its own barrier: that one ends)
         ("barrier waiting for a spinning thread", barrier_vs_spin, SHAPES[:2]),
         ("barrier in a loop nobody ends", barrier_forever, SHAPES),
         ("shuffles in a loop nobody ends", shuffle_forever, SHAPES),
         ("a wait for a block that cannot be resident", wait_for_a_later_block,
          ("blocks of a grid",)))


def _hang_once(rng, tally: Tally, name: str, kernel, shape: str) -> None:
    if kernel is wait_for_a_later_block:
        bs, nb = 64, int(rng.integers(4096, 6000))
        dim, a, b = nb * bs, int(rng.integers(bs)), (nb - 1) * bs + int(rng.integers(bs))
    else:
        dim, bs, a, b = _pair(rng, shape)
    x = np.zeros(8, np.int32)
    r = guarded(tally, f"{name} ({shape})", lambda: wl.launch(
        kernel, dim=dim, block_dim=bs, inputs=[x, a, b], device="sim",
        max_instructions=1 << 40))
    if r is None:
        return
    found = [f for f in r.findings if f.kind in HANG_KINDS]
    sim_s = sum(r.times)
    what = f"{name}, {shape} (dim={dim}, block_dim={bs}, threads {a} and {b})"
    if not found or not r.partial:
        tally.hangs_missed.append(f"{what}: not found ({[f.kind for f in r.findings]})")
    elif sim_s >= tally.find_s:
        tally.hangs_missed.append(f"{what}: found after {sim_s:.2f} s")
    else:
        tally.hang_shapes.setdefault(f"{name}, {shape}", []).append(sim_s)


def _progress_once(rng, tally: Tally, shape: str) -> None:
    dim, bs, a, b = _pair(rng, shape)
    n = int(rng.integers(1, 60))
    x = np.zeros(8, np.int32)
    r = guarded(tally, f"ping-pong ({shape})", lambda: wl.launch(
        pair_handoff, dim=dim, block_dim=bs, inputs=[x, a, b, n], device="sim",
        max_instructions=1 << 40))
    tally.progress_shapes += 1
    if r is not None and (r.findings or r.partial or x[2] != n or x[3] != n):
        tally.progress_reported.append(
            f"ping-pong of {n} rounds, {shape} (threads {a}, {b} of {dim}/{bs}): "
            f"{[f.kind for f in r.findings]}, counts {x[2:4].tolist()}")


def _flag_before_barrier_once(rng, tally: Tally, shape: str) -> None:
    dim, bs, a, b = _pair(rng, shape)
    x = np.zeros(8, np.int32)
    r = guarded(tally, f"flag before a barrier ({shape})", lambda: wl.launch(
        flag_before_barrier, dim=dim, block_dim=bs, inputs=[x, a, b], device="sim",
        max_instructions=1 << 40))
    tally.progress_shapes += 1
    if r is not None and (r.findings or r.partial or x[1] != 5):
        tally.progress_reported.append(
            f"flag set before a barrier, {shape} (threads {a}, {b} of {dim}/{bs}): "
            f"{[f.kind for f in r.findings]}, {x[:2].tolist()}")


def _lock_once(rng, tally: Tally) -> None:
    bs = int(rng.choice([32, 64, 128]))
    dim = bs * int(rng.integers(1, 3))
    x = np.zeros(4, np.int32)
    r = guarded(tally, "spin lock", lambda: wl.launch(
        lock_counter, dim=dim, block_dim=bs, inputs=[x], device="sim",
        max_instructions=1 << 40))
    tally.progress_shapes += 1
    if r is not None and (r.findings or r.partial or x[1] != dim
                          or x[2] != dim * (dim - 1) // 2):
        tally.progress_reported.append(f"spin lock of {dim} threads ({bs} a block): "
                                       f"{[f.kind for f in r.findings]}, {x.tolist()}")


def hang_shapes(rng, rounds: int, tally: Tally) -> None:
    """``rounds`` of every hang shape (each once, random threads) and the progress ones."""
    for _ in range(rounds):
        for name, kernel, shapes in HANGS:
            for shape in shapes:
                _hang_once(rng, tally, name, kernel, shape)
        for shape in SHAPES:
            _progress_once(rng, tally, shape)
        for shape in SHAPES[:2]:
            _flag_before_barrier_once(rng, tally, shape)
        _lock_once(rng, tally)


# --------------------------------------------------------------------------- bad inputs

def _describe(exc: BaseException) -> str:
    """An exception and where it came from (its last frame)."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""
    return f"{type(exc).__name__}: {str(exc)[:200]}{where}"


_PACKAGE = os.path.dirname(wl.__file__)


def _refused_at_the_boundary(exc: BaseException) -> bool:
    """Whether a TypeError or ValueError is a refusal of the caller's argument, as Python's
    own functions refuse one: raised by Python at the call (a keyword the function does not
    take: no warp_lab frame) or by a ``raise`` statement of warp_lab (its argument checks,
    whose tracebacks end at the public function), not by an operation inside warp_lab that
    met a value it did not expect. A cell's misspelt name (``@wl.kernal``) is refused the
    same way: an ``AttributeError`` raised by a module's ``__getattr__`` (PEP 562)."""
    if isinstance(exc, AttributeError):
        last = traceback.extract_tb(exc.__traceback__)[-1]
        return last.filename.startswith(_PACKAGE) and last.name == "__getattr__" \
            and (last.line or "").startswith("raise ")
    if not isinstance(exc, (TypeError, ValueError)):
        return False
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if f.filename.startswith(_PACKAGE)]
    if not frames:
        return True
    last = traceback.extract_tb(exc.__traceback__)[-1]
    return last.filename.startswith(_PACKAGE) and (last.line or "").startswith("raise ")


def _located(exc: BaseException) -> bool:
    """A compile error that says where: a line, or the name of the source it is about."""
    filename = getattr(exc, "filename", None)
    return bool(getattr(exc, "line", None)) or bool(filename and filename in str(exc))


def _judge(tally: Tally, entry: str, what: str, exc: BaseException | None, *,
           located: bool = False) -> None:
    """One bad input's outcome: none, a warp_lab error (located when ``located``), IPython's
    UsageError, or an argument refused at the boundary; anything else is internal."""
    from IPython.core.error import UsageError

    tally.bad_inputs += 1
    _count(tally.bad_inputs_by_entry, entry)
    if exc is None:
        return
    if isinstance(exc, wl.InternalCompilerError) or not (
            isinstance(exc, (wl.WarpLabError, UsageError)) or _refused_at_the_boundary(exc)):
        tally.internal_errors.append(f"{entry}({what}): {_describe(exc)}")
        return
    if located and isinstance(exc, wl.KernelCompileError) and not _located(exc):
        tally.wrong.append(f"{entry}({what}): not located: {_describe(exc)}")


def _call(tally: Tally, entry: str, what: str, fn, *, located: bool = False):
    """Call ``fn()`` under the watchdog and judge what it raised; returns that (None when
    it returned)."""
    exc = None
    dog = _Watchdog(WATCHDOG_S)
    try:
        with dog, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except KeyboardInterrupt:
        if not dog.fired:
            raise
        tally.hangs.append(f"{entry}({what}): still running after {WATCHDOG_S:g} s")
        return None
    except BaseException as exc_:  # noqa: BLE001 - judged
        exc = exc_
    _judge(tally, entry, what, exc, located=located)
    return exc


GOOD = '''@wl.kernel
def fuzzed(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.int32), n: int):
    i = wl.tid()
    s = 0.0
    for k in range(n):
        if k % 3 == 0:
            s += x[i] * float(k)
        else:
            s -= wl.sqrt(wl.abs(x[i]))
    y[i] = wl.int32(s) + wl.atomic_add(y, 0, 1)
    x[i] = s
'''

JUNK = ["(", ")", ":", "[", "]", "\x00", "\u00e9", '"""', "lambda", "yield", "await", "**",
        "\\", "\t", "\n", "    ", "x[", "1e999", "9" * 40, "wl.", "None", "=", "if", "@",
        "wl.tid()", "return", "global x", "del x", "import os", "...", "'", "#", "\r"]


def _mutate(rng, text: str) -> str:
    """``text`` with a few random edits: spans cut, junk put in, lines doubled or moved."""
    for _ in range(int(rng.integers(1, 4))):
        kind = int(rng.integers(4))
        p = int(rng.integers(len(text)))
        if kind == 0:
            text = text[:p] + text[p + int(rng.integers(1, 12)):]
        elif kind == 1:
            text = text[:p] + str(rng.choice(JUNK)) + text[p:]
        else:
            lines = text.split("\n")
            k = int(rng.integers(2, len(lines)))
            if kind == 2:
                lines.insert(k, lines[int(rng.integers(2, len(lines)))])
            else:
                lines[k] = "  " + lines[k]
            text = "\n".join(lines)
    return text


def _fuzz_compile(rng, tally: Tally) -> None:
    text = _mutate(rng, GOOD)
    try:
        kernel = _source_kernel(text, "fuzzed")
    except Exception:  # noqa: BLE001 - Python itself refused the cell: not warp_lab's
        return
    if not isinstance(kernel, Kernel):
        return
    _call(tally, "wl.compile", "mutated source", lambda: wl.compile(kernel, cache=False,
                                                                    sass=False), located=True)


def _huge_sources(rng) -> list[tuple[str, str]]:
    """(what, cell) kernels too big in one way or another."""
    n = int(rng.integers(5_000, 30_000))
    terms = " + ".join(["x[i]"] * int(rng.integers(500, 3000)))
    nested = "(" * 150 + "x[i]" + ")" * 150
    body = "\n".join(f"    x[i] = x[i] + {k}.0" for k in range(int(rng.integers(600, 1500))))
    return [
        (f"a for-in over a {n}-element tuple",
         f"T = tuple(range({n}))\n@wl.kernel\ndef huge(x: wl.array(dtype=wl.float32)):\n"
         "    i = wl.tid()\n    for t in T:\n        x[i] += float(t)\n"),
        ("a sum of thousands of terms",
         f"@wl.kernel\ndef huge(x: wl.array(dtype=wl.float32)):\n    i = wl.tid()\n"
         f"    x[i] = {terms}\n"),
        ("150 nested parentheses",
         f"@wl.kernel\ndef huge(x: wl.array(dtype=wl.float32)):\n    i = wl.tid()\n"
         f"    x[i] = {nested}\n"),
        ("thousands of lines",
         f"@wl.kernel\ndef huge(x: wl.array(dtype=wl.float32)):\n    i = wl.tid()\n{body}\n"),
        ("a 100,000-character name",
         "@wl.kernel\ndef " + "n" * 100_000 + "(x: wl.array(dtype=wl.float32)):\n"
         "    x[wl.tid()] = 1.0\nhuge = " + "n" * 100_000 + "\n"),
    ]


def _bad_compile(rng, tally: Tally) -> None:
    for what, obj in [("None", None), ("an int", 3), ("a str", "def k(): pass"),
                      ("a lambda", lambda x: x), ("a class", Tally), ("an array", np.zeros(3))]:
        _call(tally, "wl.compile", what, lambda obj=obj: wl.compile(obj))
    for what, kw in [("arch", {"arch": "sm_1"}), ("arch", {"arch": 90}), ("opt", {"opt": 7}),
                     ("opt", {"opt": "fast"}), ("maxrregcount", {"maxrregcount": -4}),
                     ("unknown option", {"colour": "red"})]:
        _call(tally, "wl.compile", what, lambda kw=kw: wl.compile(two_outputs, **kw))
    for what, text in _huge_sources(rng):
        try:
            kernel = _source_kernel(text, "huge")
        except (SyntaxError, RecursionError, MemoryError, ValueError):
            continue      # Python's own compiler refused it
        _call(tally, "wl.compile", what, lambda k=kernel: wl.compile(k, cache=False,
                                                                     sass=False), located=True)
    for _ in range(6):
        _fuzz_compile(rng, tally)


def _bad_launch_args(rng):
    """(what, keywords of wl.launch(two_outputs, ...)) that are wrong."""
    n = 64
    x, a, b = (np.zeros(n, np.float32) for _ in range(3))
    good = [x, a, b, 3]
    return [
        ("dim -1", dict(dim=-1, inputs=good)), ("dim 0", dict(dim=0, inputs=good)),
        ("dim 2**40", dict(dim=1 << 40, inputs=good)), ("dim 1.5", dict(dim=1.5, inputs=good)),
        ("dim str", dict(dim="64", inputs=good)), ("dim None", dict(dim=None, inputs=good)),
        ("dim 4-d", dict(dim=(1, 2, 3, 4), inputs=good)), ("dim ()", dict(dim=(), inputs=good)),
        ("block_dim 0", dict(dim=n, block_dim=0, inputs=good)),
        ("block_dim 4096", dict(dim=n, block_dim=4096, inputs=good)),
        ("block_dim -32", dict(dim=n, block_dim=-32, inputs=good)),
        ("grid and dim", dict(dim=n, grid=1, block=64, inputs=good)),
        ("grid 2**40", dict(grid=1 << 40, block=32, inputs=good)),
        ("one input short", dict(dim=n, inputs=good[:3])),
        ("one input more", dict(dim=n, inputs=good + [1])),
        ("a str for an array", dict(dim=n, inputs=["x", a, b, 3])),
        ("None for an array", dict(dim=n, inputs=[None, a, b, 3])),
        ("int64 array", dict(dim=n, inputs=[x.astype(np.int64), a, b, 3])),
        ("2-d array", dict(dim=n, inputs=[x.reshape(8, 8), a, b, 3])),
        ("a list", dict(dim=n, inputs=[list(x), a, b, 3])),
        ("2**70 for an int", dict(dim=n, inputs=[x, a, b, 1 << 70])),
        ("nan for an int", dict(dim=n, inputs=[x, a, b, float("nan")])),
        ("complex for an int", dict(dim=n, inputs=[x, a, b, 1j])),
        ("an array for an int", dict(dim=n, inputs=[x, a, b, x])),
        ("short array", dict(dim=n, inputs=[x[:10], a, b, 3], checks="memcheck")),
        ("device", dict(dim=n, inputs=good, device="gpu9")),
        ("device int", dict(dim=n, inputs=good, device=5)),
        ("max_instructions -1", dict(dim=n, inputs=good, max_instructions=-1)),
        ("max_instructions str", dict(dim=n, inputs=good, max_instructions="many")),
        ("checks", dict(dim=n, inputs=good, checks="everything")),
        ("shared_mem -1", dict(dim=n, inputs=good, shared_mem=-1)),
        ("shared_mem 2**40", dict(dim=n, inputs=good, shared_mem=1 << 40)),
        ("repeat 0", dict(dim=n, inputs=good, repeat=0)),
        ("repeat -1", dict(dim=n, inputs=good, repeat=-1)),
        ("fill", dict(dim=n, inputs=good, fill="confetti")),
        ("arch", dict(dim=n, inputs=good, arch="sm_1")),
        ("opt", dict(dim=n, inputs=good, opt=12)),
        ("inputs not a list", dict(dim=n, inputs=3)),
    ]


def _arrays_of(kw) -> list:
    inputs = kw.get("inputs")
    return [v for v in inputs if isinstance(v, np.ndarray)] if isinstance(inputs, list) else []


def _bad_launch(rng, tally: Tally) -> None:
    cases = _bad_launch_args(rng)
    for k in rng.choice(len(cases), size=min(len(cases), 14), replace=False):
        what, kw = cases[int(k)]
        arrays = _arrays_of(kw)
        before = [v.copy() for v in arrays]
        exc = _call(tally, "wl.launch", what, lambda kw=kw: wl.launch(two_outputs, **kw))
        if exc is not None and not all(np.array_equal(v, v0, equal_nan=True)
                                       for v, v0 in zip(arrays, before)):
            tally.lost_arrays.append(f"wl.launch({what}): refused, yet arrays changed")
    for what, obj in [("None", None), ("a function", np.sum), ("a str", "kernel")]:
        _call(tally, "wl.launch", f"kernel {what}", lambda obj=obj: wl.launch(obj, dim=4))
    for k in rng.choice(len(cases), size=6, replace=False):
        what, kw = cases[int(k)]
        kw = {key: v for key, v in kw.items() if key not in ("device", "repeat", "arch",
                                                             "opt", "fill",
                                                             "max_instructions")}
        _call(tally, "wl.debug", what,
              lambda kw=kw: wl.debug(two_outputs, **kw).run_to_end())


def _bad_warp(rng, tally: Tally) -> None:
    import warp_lab.warp as wp

    @wp.kernel
    def wp_scale(x: wp.array(dtype=wp.float32), s: float):
        i = wp.tid()
        x[i] = x[i] * s

    x = wp.zeros(16, dtype=wp.float32)
    for what, call in [
            ("dim -1", lambda: wp.launch(wp_scale, dim=-1, inputs=[x, 2.0])),
            ("dim str", lambda: wp.launch(wp_scale, dim="16", inputs=[x, 2.0])),
            ("dim 2**40", lambda: wp.launch(wp_scale, dim=1 << 40, inputs=[x, 2.0])),
            ("inputs short", lambda: wp.launch(wp_scale, dim=16, inputs=[x])),
            ("inputs wrong", lambda: wp.launch(wp_scale, dim=16, inputs=[2.0, x])),
            ("numpy int array", lambda: wp.launch(wp_scale, dim=16,
                                                  inputs=[np.zeros(16, np.int32), 2.0])),
            ("device", lambda: wp.launch(wp_scale, dim=16, inputs=[x, 2.0], device="cuda:9")),
            ("block_dim 0", lambda: wp.launch(wp_scale, dim=16, inputs=[x, 2.0], block_dim=0)),
            ("not a kernel", lambda: wp.launch(print, dim=16, inputs=[x, 2.0])),
            ("adjoint", lambda: wp.launch(wp_scale, dim=16, inputs=[x, 2.0], adjoint=True))]:
        _call(tally, "wp.launch", what, call)


CUDA_GOOD = """extern "C" __global__ void scale(float *x, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] * s;
}
"""


def _bad_cuda(rng, tally: Tally) -> None:
    mutated = _mutate(rng, CUDA_GOOD)
    for what, call in [
            ("mutated source", lambda: wl.compile(wl.cuda_kernel(mutated), sass=False)),
            ("syntax error", lambda: wl.compile(wl.cuda_kernel(
                CUDA_GOOD.replace(";", "", 1)), sass=False)),
            ("no kernel", lambda: wl.cuda_kernel("int f(int x) { return x; }")),
            ("no such kernel", lambda: wl.cuda_kernel(CUDA_GOOD, "nope")),
            ("None", lambda: wl.cuda_kernel(None)),
            ("bytes", lambda: wl.cuda_kernel(CUDA_GOOD.encode())),
            ("NUL", lambda: wl.compile(wl.cuda_kernel(CUDA_GOOD + "\x00"), sass=False)),
            ("define", lambda: wl.cuda_kernel(CUDA_GOOD, defines={"A B": 1})),
            ("define list", lambda: wl.cuda_kernel(CUDA_GOOD, defines=["=3"])),
            ("std", lambda: wl.cuda_kernel(CUDA_GOOD, std="c++99")),
            ("option", lambda: wl.cuda_kernel(CUDA_GOOD, opt=9)),
            ("huge", lambda: wl.compile(wl.cuda_kernel(
                "// " + "x" * 1000 + "\n" * 20000 + CUDA_GOOD), sass=False)),
            ("launch args", lambda: wl.launch(wl.cuda_kernel(CUDA_GOOD), grid=1, block=32,
                                              inputs=[np.zeros(4, np.float32)]))]:
        _call(tally, "wl.cuda_kernel", what, call, located=True)


def _shell():
    """IPython's InteractiveShell with warp_lab loaded, its display output dropped."""
    from IPython.testing import globalipapp

    shell = globalipapp.get_ipython()
    shell.run_line_magic("load_ext", "warp_lab")
    shell.run_cell("import warp_lab as wl\nimport numpy as np\n"
                   "sx = np.zeros(64, np.float32)\nsy = np.zeros(64, np.int32)")
    return shell


def _run_magic(tally: Tally, shell, entry: str, what: str, cell: str) -> None:
    def run():
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            saved = shell.display_pub.publish
            shell.display_pub.publish = lambda *a, **k: None
            try:
                res = shell.run_cell(cell)
            finally:
                shell.display_pub.publish = saved
        err = res.error_before_exec or res.error_in_exec
        if err is not None:
            raise err

    _call(tally, entry, what, run, located=True)


MAGIC_OPTIONS = ["", "--opt 9", "--arch sm_1", "--launch \"dim=-1, inputs=[sx, sy, 3]\"",
                 "--launch \"dim=64, inputs=[sx]\"", "--launch \"dim=64 inputs\"",
                 "--show nonsense", "--hide", "--bogus", "--launch \"__import__('os')\"",
                 "-O 3", "--arch", "--launch \"dim=64, inputs=[sx, sy, 3], device='sim'\""]


def _bad_magics(rng, tally: Tally, shell) -> None:
    for _ in range(4):
        opts = str(rng.choice(MAGIC_OPTIONS))
        body = _mutate(rng, GOOD).replace("@wl.kernel\n", "")
        _run_magic(tally, shell, "%%warp_kernel", f"{opts!r} + mutated cell",
                   f"%%warp_kernel {opts}\n{body}")
    for what, body in [("empty", ""), ("comment", "# nothing\n"), ("NUL", "def k():\x00\n"),
                       ("no kernel", "x = 1\n"), ("binary", "\udcff\n")]:
        _run_magic(tally, shell, "%%warp_kernel", what, f"%%warp_kernel\n{body}")
    for _ in range(2):
        opts = str(rng.choice(["", "-O 9", "-D A B", "--std c++99", "--instantiate nope<",
                               "--launch \"grid=1, block=32, inputs=[sx]\"", "--bogus"]))
        _run_magic(tally, shell, "%%cuda_kernel", f"{opts!r} + mutated cell",
                   f"%%cuda_kernel {opts}\n{_mutate(rng, CUDA_GOOD)}")
    _run_magic(tally, shell, "%%cuda_kernel", "empty", "%%cuda_kernel\n")


def bad_inputs(rng, rounds: int, tally: Tally, shell=None) -> None:
    """``rounds`` of bad and huge inputs at every public entry (each round ~10 s)."""
    shell = shell if shell is not None else _shell()
    with python_sigint():
        for _ in range(rounds):
            _bad_compile(rng, tally)
            _bad_launch(rng, tally)
            _bad_warp(rng, tally)
            _bad_cuda(rng, tally)
            _bad_magics(rng, tally, shell)


# --------------------------------------------------------------------------- cache

CACHE_SRC = """import warp_lab as wl

@wl.kernel
def cached_{n}(x: wl.array(dtype=wl.float32)):
    x[wl.tid()] = {n}.0
"""


class _CacheLab:
    """A cache folder of the user's own with two compiled entries (two kernels), the
    process's cache pointed at it while ``with``."""

    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="wl-stress-cache-")
        self.folder = os.path.join(self.root, "cache")
        self.kernels, self.keys, self.ptx = [], [], []
        saved = C._default
        C._default = C.KernelCache(self.folder)
        try:
            for n in (1, 2):
                path = os.path.join(self.root, f"cached_{n}.py")
                with open(path, "w") as f:
                    f.write(CACHE_SRC.format(n=n))
                ns: dict = {}
                exec(compile(CACHE_SRC.format(n=n), path, "exec"), ns)  # noqa: S102
                ck = wl.compile(ns[f"cached_{n}"], arch="sm_80")
                self.kernels.append(ns[f"cached_{n}"])
                self.keys.append(ck.cache_key)
                self.ptx.append(ck.ptx)
        finally:
            C._default = saved
        self.pristine = os.path.join(self.root, "pristine")
        shutil.copytree(self.folder, self.pristine)

    def reset(self) -> None:
        """The folder as the compiles left it, mode 0700."""
        shutil.rmtree(self.folder, ignore_errors=True)
        if os.path.islink(self.folder):
            os.unlink(self.folder)
        shutil.copytree(self.pristine, self.folder)
        os.chmod(self.folder, 0o700)

    def file(self, k: int, suffix: str) -> str:
        return os.path.join(self.folder, self.keys[k] + suffix)

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _valid_digest(raw: bytes, cubin: bytes | None) -> bytes:
    """``raw`` (a JSON object whose first key is ``"digest"``) with its digest made right."""
    return raw[:C._DIGEST_SPAN.start] + C._digest(raw, cubin).encode() \
        + raw[C._DIGEST_SPAN.stop:]


def _entry_attacks(rng, lab: _CacheLab):
    """(name, function doing it to entry 0) for one round."""
    def truncate():
        p = lab.file(0, ".json")
        raw = open(p, "rb").read()
        open(p, "wb").write(raw[:int(rng.integers(len(raw)))])

    def flip(suffix):
        def do():
            p = lab.file(0, suffix)
            raw = bytearray(open(p, "rb").read())
            for _ in range(int(rng.integers(1, 8))):
                raw[int(rng.integers(len(raw)))] ^= 1 << int(rng.integers(8))
            open(p, "wb").write(bytes(raw))
        return do

    def nested():
        depth = int(rng.integers(1_000, 200_000))
        raw = b'{"digest": "' + C._NO_DIGEST + b'", "format": 9, "x": ' + b"[" * depth \
            + b"]" * depth + b"}"
        os.unlink(lab.file(0, ".cubin"))
        open(lab.file(0, ".json"), "wb").write(_valid_digest(raw, None))

    def wrong_field():
        p = lab.file(0, ".json")
        d = json.loads(open(p, "rb").read())
        field = str(rng.choice(sorted(k for k in d if k not in ("digest", "format",
                                                                 "cache_key", "has_cubin"))))
        # a value of another JSON type than the field's (a string in the "ptx" field is a
        # well-formed entry of the user's own: what it says is what the cache returns)
        wrong = [v for v in (None, 7, "x", {"a": 1}, [[1]], -1.5, True)
                 if type(v) is not type(d[field])]
        d[field] = wrong[int(rng.integers(len(wrong)))]
        cubin = open(lab.file(0, ".cubin"), "rb").read()
        raw = json.dumps({"digest": C._NO_DIGEST.decode(), **{k: v for k, v in d.items()
                                                             if k != "digest"}}).encode()
        open(p, "wb").write(_valid_digest(raw, cubin))

    def sparse(suffix):
        def do():
            with open(lab.file(0, suffix), "r+b") as f:
                f.truncate(C.MAX_FILE_BYTES + 1 + int(rng.integers(8 << 30)))
        return do

    def replace_with(kind, suffix):
        def do():
            p = lab.file(0, suffix)
            os.unlink(p)
            if kind == "fifo":
                os.mkfifo(p)
            elif kind == "dir":
                os.mkdir(p)
            else:
                os.symlink(kind, p)
        return do

    def other_cubin():
        shutil.copy(lab.file(1, ".cubin"), lab.file(0, ".cubin"))

    def other_entry():      # entry 1's files under entry 0's name
        shutil.copy(lab.file(1, ".json"), lab.file(0, ".json"))
        shutil.copy(lab.file(1, ".cubin"), lab.file(0, ".cubin"))

    def bad_digest_bytes():
        p = lab.file(0, ".json")
        raw = open(p, "rb").read()
        open(p, "wb").write(raw[:C._DIGEST_SPAN.start] + b"\xff" * 64
                            + raw[C._DIGEST_SPAN.stop:])

    return [("truncated entry", truncate), ("flipped bits in the entry", flip(".json")),
            ("flipped bits in the cubin", flip(".cubin")),
            ("nested lists under a valid digest", nested),
            ("a wrong field under a valid digest", wrong_field),
            ("sparse huge entry", sparse(".json")), ("sparse huge cubin", sparse(".cubin")),
            ("FIFO entry", replace_with("fifo", ".json")),
            ("FIFO cubin", replace_with("fifo", ".cubin")),
            ("link to /dev/zero", replace_with("/dev/zero", ".json")),
            ("link to /dev/urandom cubin", replace_with("/dev/urandom", ".cubin")),
            ("folder as entry", replace_with("dir", ".json")),
            ("another compile's cubin", other_cubin),
            ("another kernel's entry", other_entry),
            ("non-ASCII digest", bad_digest_bytes)]


def _attack(tally: Tally, lab: _CacheLab, name: str, do, compile_after: bool) -> None:
    """Do ``name`` to entry 0, then: a get is a miss (or the entry's own artifact) within a
    second, and (``compile_after``) wl.compile through that folder gives the kernel's own
    PTX."""
    lab.reset()
    tally.cache_attacks += 1
    try:
        do()
        t0 = time.monotonic()
        got = guarded(tally, f"cache: {name}", lambda: C.KernelCache(lab.folder).get(
            lab.keys[0]), seconds=10)
        if time.monotonic() - t0 > 1.0:
            tally.wrong.append(f"cache: {name}: a get took {time.monotonic() - t0:.1f} s")
        if got is not None and got.ptx != lab.ptx[0]:
            tally.wrong.append(f"cache: {name}: another's PTX returned")
        if not compile_after:
            return
        saved = C._default
        C._default = C.KernelCache(lab.folder)
        try:
            ck = guarded(tally, f"cache: {name}: compile",
                         lambda: wl.compile(lab.kernels[0], arch="sm_80"), seconds=30)
        finally:
            C._default = saved
        if ck is not None and ck.ptx != lab.ptx[0]:
            tally.wrong.append(f"cache: {name}: wl.compile gave another's PTX")
    except Exception as exc:  # noqa: BLE001
        tally.internal_errors.append(f"cache: {name}: {_describe(exc)}")


def _folder_attacks(rng, tally: Tally, lab: _CacheLab) -> None:
    # another user's folder: others may write it, the cache refuses it (a warning)
    evil = os.path.join(lab.root, "evil")
    for name, make in [("folder others may write", lambda: os.chmod(lab.folder, 0o777)),
                       ("link to a folder others may write", lambda: (
                           shutil.rmtree(evil, ignore_errors=True),
                           shutil.copytree(lab.folder, evil), os.chmod(evil, 0o777),
                           shutil.rmtree(lab.folder), os.symlink(evil, lab.folder)))]:
        lab.reset()
        tally.cache_attacks += 1
        try:
            make()
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                got = C.KernelCache(lab.folder).get(lab.keys[0])
            if got is not None or not any("other users may write" in str(w.message)
                                          for w in seen):
                tally.wrong.append(f"cache: {name}: used ({got is not None}), warned "
                                   f"{[str(w.message)[:80] for w in seen]}")
        except Exception as exc:  # noqa: BLE001
            tally.internal_errors.append(f"cache: {name}: {_describe(exc)}")
        finally:
            if os.path.islink(lab.folder):
                os.unlink(lab.folder)
    # the folder swapped under a reader for the other user's (theirs holds entry 1's PTX
    # under entry 0's key): never a hit on it
    lab.reset()
    tally.cache_attacks += 1
    shutil.rmtree(evil, ignore_errors=True)
    shutil.copytree(lab.folder, evil)
    shutil.copy(os.path.join(lab.folder, lab.keys[1] + ".json"),
                os.path.join(evil, lab.keys[0] + ".json"))
    shutil.copy(os.path.join(lab.folder, lab.keys[1] + ".cubin"),
                os.path.join(evil, lab.keys[0] + ".cubin"))
    os.chmod(evil, 0o777)
    aside, stop = os.path.join(lab.root, "aside"), threading.Event()

    def swap():
        while not stop.is_set():
            with contextlib.suppress(OSError):
                os.rename(lab.folder, aside)
                os.rename(evil, lab.folder)
                os.rename(lab.folder, evil)
                os.rename(aside, lab.folder)

    got = {"hit": 0, "miss": 0, "theirs": 0}
    attacker = threading.Thread(target=swap, daemon=True)
    attacker.start()
    cache = C.KernelCache(lab.folder)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            end = time.monotonic() + float(rng.uniform(0.3, 0.8))
            while time.monotonic() < end:
                cache.clear()
                ck = cache.get(lab.keys[0])
                got["miss" if ck is None else "hit" if ck.ptx == lab.ptx[0] else "theirs"] += 1
    except Exception as exc:  # noqa: BLE001
        tally.internal_errors.append(f"cache: folder swap: {_describe(exc)}")
    finally:
        stop.set()
        attacker.join(10)
    with contextlib.suppress(OSError):
        if not os.path.isdir(lab.folder) and os.path.isdir(aside):
            os.rename(aside, lab.folder)
    if got["theirs"]:
        tally.wrong.append(f"cache: folder swap: {got['theirs']} of {sum(got.values())} "
                           "reads returned the other user's PTX")


def _concurrent_writers(rng, tally: Tally, lab: _CacheLab) -> None:
    """Writer threads put entry 0's key with either artifact; readers see either whole
    artifact or a miss, never a mix."""
    lab.reset()
    tally.cache_attacks += 1
    arts = [C.KernelCache(lab.folder).get(k) for k in lab.keys]
    key, stop = lab.keys[0], threading.Event()
    errors: list = []

    def write(k):
        cache = C.KernelCache(lab.folder)
        while not stop.is_set():
            try:
                cache.put(key, arts[k])
            except Exception as exc:  # noqa: BLE001
                errors.append(exc)

    writers = [threading.Thread(target=write, args=(k % 2,), daemon=True) for k in range(3)]
    for w in writers:
        w.start()
    reads = torn = 0
    try:
        end = time.monotonic() + float(rng.uniform(0.3, 0.8))
        while time.monotonic() < end:
            ck = C.KernelCache(lab.folder).get(key)
            reads += 1
            if ck is not None and (ck.ptx, ck.cubin) not in ((a.ptx, a.cubin) for a in arts):
                torn += 1
    finally:
        stop.set()
        for w in writers:
            w.join(10)
    if torn:
        tally.wrong.append(f"cache: concurrent writers: {torn} torn reads of {reads}")
    for exc in errors[:3]:
        tally.internal_errors.append(f"cache: concurrent writer: {_describe(exc)}")
    leftovers = [f for f in os.listdir(lab.folder) if f.startswith(".tmp-")]
    if leftovers:
        tally.wrong.append(f"cache: concurrent writers left {len(leftovers)} temporary files")


def cache_attacks(rng, rounds: int, tally: Tally) -> None:
    """``rounds`` of crafted entries, hostile folders and concurrent writers (~3 s each)."""
    lab = _CacheLab()
    try:
        for _ in range(rounds):
            attacks = _entry_attacks(rng, lab)
            compiled = set(rng.choice(len(attacks), 2, replace=False).tolist())
            for k in rng.permutation(len(attacks)):
                _attack(tally, lab, *attacks[int(k)], compile_after=int(k) in compiled)
            _folder_attacks(rng, tally, lab)
            _concurrent_writers(rng, tally, lab)
    finally:
        lab.close()


PARTS = {"interrupts": interrupts, "hang_shapes": hang_shapes, "bad_inputs": bad_inputs,
         "cache_attacks": cache_attacks}
