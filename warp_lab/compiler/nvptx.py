"""The NVPTX stage: LLVM IR text → optimised LLVM IR → PTX.

Every NVPTX fact lives here: the triple, the data layout (taken from the
target machine), how libdevice is linked and how the optimiser is run; the
supported ``sm_XX`` and the PTX ISA version each gets are
:data:`warp_lab.options.SUPPORTED_ARCHS`, beside the options they check. This
is the one place of the compiler that calls into LLVM (``llvmlite.binding``);
``compiler/lower`` only builds text.

libdevice (NVIDIA's ``libdevice.10.bc``) is linked only when the module
declares a ``__nv_*`` function, as CUDA.jl's ``link_libraries!`` does. It is
large (575 functions; parsing it costs ~50 ms), so the subset a kernel needs
— the requested functions and everything they call — is cut out once per set
of names, kept in memory as bitcode, and linked from there.
"""

from __future__ import annotations

import contextlib
import functools
import re
import signal
import threading
import time

import llvmlite.binding as llvm

from warp_lab.compiler.line_zero import attribute_line_zero
from warp_lab.errors import InternalCompilerError, ToolchainError
from warp_lab.options import SUPPORTED_ARCHS, CompileOptions, check_arch

__all__ = ["TRIPLE", "make_ptx", "target_machine", "libdevice_path"]

TRIPLE = "nvptx64-nvidia-cuda"

_init_lock = threading.Lock()
_initialised = False


def _ensure_llvm():
    global _initialised
    with _init_lock:
        if not _initialised:
            llvm.initialize_all_targets()
            llvm.initialize_all_asmprinters()
            # 32-bit pointers for the shared, const and local state spaces, as nvcc
            # emits them: state-space addresses are offsets below 4 GiB (PTX ISA
            # "Generic Addressing"), so 64-bit registers and address arithmetic there
            # only cost registers and instructions. Must be set before the first
            # target machine is created (its data layout gets p3/p4/p5:32:32).
            llvm.set_option("", "--nvptx-short-ptr")
            _initialised = True


#: Serialises :func:`_emit` (it flips a process-wide LLVM option around the call).
_emit_lock = threading.Lock()


def _emit(tm, mod) -> str:
    """PTX for ``mod``, with codegen's loop strength reduction off.

    On NVPTX, LSR rewrites index math into extra 64-bit induction pointers that
    ptxas then keeps live (spmv_csr 121 -> 95 SASS instructions and matmul_tiled
    104 -> 100 on sm_90; no corpus kernel gets bigger: docs/benchmarks.md F11),
    and it was 18% of spmv_csr's compile time; ptxas strength-reduces itself.
    ``-disable-lsr`` is an LLVM command-line option for every target, read when
    the codegen pipeline is built, so it is set only for this call and restored,
    leaving other llvmlite users in the process (Numba's CPU JIT) unaffected.
    """
    with _emit_lock:
        llvm.set_option("", "--disable-lsr=true")
        try:
            return tm.emit_assembly(mod)
        finally:
            llvm.set_option("", "--disable-lsr=false")


#: ``{ // callseq 3, 0`` ... ``} // callseq 3``: NVPTX's comment around each call sequence
_CALLSEQ = re.compile(r"(?<=// callseq )\d+")


def _renumber_callseq(ptx: str) -> str:
    """``ptx`` with its call sequences numbered from 0 in order of appearance.

    NVPTX numbers them with a counter of the target machine, which :func:`target_machine`
    keeps for the process, so the same kernel compiled twice gave two PTX texts (a
    ``--diff`` of a printf kernel showed every call changed). They are comments.
    """
    if "callseq" not in ptx:
        return ptx
    numbers: dict = {}
    return _CALLSEQ.sub(lambda m: str(numbers.setdefault(m.group(0), len(numbers))), ptx)


#: The highest code-generation level warp_lab asks of LLVM (``CodeGenOptLevel::Default``).
#: At ``Aggressive`` (3) the NVPTX back end's IR passes before instruction selection run GVN
#: where ``Default`` runs EarlyCSE (``NVPTXPassConfig::addEarlyCSEOrGVNPass``); GVN was about
#: 10% of spmv_csr's →PTX instructions and, after the IR pipeline's own GVN, finds nothing
#: more: the PTX of the corpus and planted bugs is byte-identical on 754 of 760 (kernel, arch,
#: opt, fast math) compiles, and only math_f64's libdevice double trig slow path moves, by one
#: SASS instruction (docs/benchmarks.md, F7).
MAX_CODEGEN_LEVEL = 2


@functools.lru_cache(maxsize=None)
def target_machine(arch: str, opt: int):
    """The llvmlite target machine for ``arch`` at optimisation level ``opt`` (0..3).

    The machine's code-generation level is ``min(opt, MAX_CODEGEN_LEVEL)``; the IR pass
    pipeline's level is set apart from it, by :func:`make_ptx`.
    """
    _ensure_llvm()
    target = llvm.Target.from_triple(TRIPLE)
    ptx = SUPPORTED_ARCHS[check_arch(arch)].replace(".", "")
    return target.create_target_machine(cpu=arch, features=f"+ptx{ptx}",
                                        opt=min(opt, MAX_CODEGEN_LEVEL))


@functools.lru_cache(maxsize=None)
def _data_layout(arch: str, opt: int) -> str:
    """The target machine's data layout string (asked of LLVM once per machine)."""
    return str(target_machine(arch, opt).target_data)


@functools.lru_cache(maxsize=1)
def libdevice_path() -> str:
    """Path of ``libdevice.10.bc`` (NVIDIA's nvvm wheel or a CUDA toolkit).

    Raises:
        ToolchainError: libdevice is not installed.
    """
    from cuda import pathfinder

    try:
        return pathfinder.find_bitcode_lib("device")
    except Exception as exc:  # pathfinder raises its own not-found errors
        raise ToolchainError(
            "libdevice (libdevice.10.bc) was not found; it is needed for math functions. "
            "Install it with `pip install nvidia-nvvm` or set CUDA_HOME to a CUDA toolkit.",
            tool="libdevice", log=str(exc)) from None


@functools.lru_cache(maxsize=1)
def _libdevice_bitcode() -> bytes:
    with open(libdevice_path(), "rb") as f:
        return f.read()


@functools.lru_cache(maxsize=64)
def _libdevice_subset(names: frozenset, data_layout: str, ftz: bool = False) -> bytes:
    """Bitcode of the part of libdevice that defines ``names`` (and their callees); with
    ``ftz`` its functions carry :data:`_FTZ_ATTRIBUTE`, as the kernel's do under fast math
    (the inliner does not inline a callee whose denormal mode differs from its caller's)."""
    lib = llvm.parse_bitcode(_libdevice_bitcode())
    lib.triple = TRIPLE
    lib.data_layout = data_layout
    for fn in lib.functions:
        if not fn.is_declaration and fn.name not in names:
            fn.linkage = "internal"
    for gv in lib.global_variables:
        if not gv.is_declaration:
            gv.linkage = "internal"
    pm = llvm.create_new_module_pass_manager()
    pm.add_global_dead_code_eliminate_pass()
    pm.add_strip_dead_prototype_pass()
    pb = llvm.create_pass_builder(target_machine("sm_90", 0),
                                  llvm.create_pipeline_tuning_options(speed_level=0))
    pm.run(lib, pb)
    if ftz:
        lib = llvm.parse_assembly(_flush_subnormals(str(lib)))
    return lib.as_bitcode()


#: LLVM's function attribute for float32 arithmetic that flushes subnormal inputs and
#: results to zero of the same sign: NVPTX then writes ``.ftz`` on every f32 instruction
#: that has it (``NVPTXTargetLowering::useF32FTZ``), what nvcc's ``--use_fast_math``
#: implies (``-ftz=true``; CUDA C++ Programming Guide, "Intrinsic Functions")
_FTZ_ATTRIBUTE = '"denormal-fp-math-f32"="preserve-sign,preserve-sign"'
#: a function definition's first line, up to the ``)`` that ends its parameters (the
#: last one on the line: only attributes and metadata follow it)
_DEFINE = re.compile(r"^(define .*\))", re.M)


def _flush_subnormals(llvm_ir: str) -> str:
    """``llvm_ir`` with :data:`_FTZ_ATTRIBUTE` on every function it defines."""
    return _DEFINE.sub(lambda m: f"{m.group(1)} {_FTZ_ATTRIBUTE}", llvm_ir)


_REFLECT_FTZ = '!{i32 4, !"nvvm-reflect-ftz", i32 1}'


def _add_ftz_flag(llvm_ir: str) -> str:
    """Add the ``nvvm-reflect-ftz`` module flag (libdevice's ``__nvvm_reflect("__CUDA_FTZ")``
    then picks its flush-to-zero code) and :data:`_FTZ_ATTRIBUTE` to every function."""
    node = "!9999999"
    m = re.search(r"^!llvm\.module\.flags = !\{(.*)\}$", llvm_ir, re.M)
    if m:
        flags = m.group(1) + ", " + node if m.group(1).strip() else node
        llvm_ir = llvm_ir[: m.start()] + f"!llvm.module.flags = !{{{flags}}}" + llvm_ir[m.end():]
    else:
        llvm_ir += f"\n!llvm.module.flags = !{{{node}}}\n"
    return _flush_subnormals(llvm_ir) + f"\n{node} = {_REFLECT_FTZ}\n"


def make_ptx(llvm_ir: str, options: CompileOptions, entry: str | None = None,
             timings: dict | None = None, line_zero: bool = True) -> tuple[str, str]:
    """Optimise a module, link what it needs of libdevice, and emit PTX.

    Args:
        llvm_ir: a whole module as text (from :mod:`warp_lab.compiler.lower`).
        options: target ``arch``, ``opt`` level 0..3 and ``fast_math`` (fast math
            also flushes float32 subnormals to zero: ``.ftz`` on f32 instructions and
            libdevice's flush-to-zero code, as nvcc's ``--use_fast_math``).
        entry: the kernel's name; every other defined function is made
            internal so that unused code is removed.
        timings: if given, receives wall seconds: ``"optimize"`` (parse,
            verify, link libdevice, the pass pipeline) and ``"ptx"`` (NVPTX
            emission, its line-0 ``.loc`` lines attributed by
            :func:`~warp_lab.compiler.line_zero.attribute_line_zero`, and the
            text of the optimised module); together they
            are all of this function.
        line_zero: False leaves the ``.loc`` lines as NVPTX wrote them (line 0 where
            LLVM dropped a location), for comparing with the attributed PTX.

    Returns:
        ``(llvm_ir_optimized, ptx)``, both text.

    Raises:
        InternalCompilerError: the IR does not parse or verify (a bug in
            ``lower``), or LLVM fails to emit PTX.
        ToolchainError: the module needs libdevice and it is not installed.
        KeyboardInterrupt: Ctrl-C while LLVM works, raised within
            :data:`_POLL_SECONDS` of the signal (:func:`_interruptible`).
    """
    t0 = time.perf_counter()
    out = _interruptible(_make_ptx, llvm_ir, options, entry, timings, line_zero)
    if timings is not None:   # the hand-over to the worker thread and back: LLVM's call
        timings["optimize"] += time.perf_counter() - t0 - timings["optimize"] - timings["ptx"]
    return out


#: how often the main thread, waiting for LLVM, lets Python run a signal handler
_POLL_SECONDS = 0.05
#: held by the thread that runs LLVM: one module at a time in LLVM's global context, and a
#: compile after a Ctrl-C waits for the abandoned one to finish
_llvm_lock = threading.Lock()


class _SigintNoted:
    """:func:`_sigint_noted`'s record: ``came`` is True once a SIGINT arrived."""

    def __init__(self, raises: bool):
        self.came = False
        self._raises = raises

    def check(self) -> None:
        """Raise ``KeyboardInterrupt`` when a SIGINT came and the handler it went to is
        Python's (which raises): its own exception may have been lost (below)."""
        if self.came and self._raises:
            raise KeyboardInterrupt


@contextlib.contextmanager
def _sigint_noted():
    """Note every SIGINT of the ``with`` block, and pass it on to the installed handler.

    Python raises a signal's ``KeyboardInterrupt`` in whatever the main thread runs at
    that moment, and one raised inside a finalizer or a ``gc.callbacks`` callback is
    lost ("Exception ignored in ...": in the test suite a Ctrl-C during an O3 compile
    vanished in hypothesis's gc callback, and the compile ran to its end). The waiting
    loop calls :meth:`_SigintNoted.check` between its waits, which raises the one that
    was lost. Outside the main thread, and when SIGINT is ignored or left to the
    operating system, nothing is installed and ``check`` never raises.
    """
    if threading.current_thread() is not threading.main_thread():
        yield _SigintNoted(False)
        return
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):
        yield _SigintNoted(False)
        return
    noted = _SigintNoted(previous is signal.default_int_handler)

    def note(signum, frame):
        noted.came = True
        previous(signum, frame)

    signal.signal(signal.SIGINT, note)
    try:
        yield noted
    finally:
        signal.signal(signal.SIGINT, previous)


def _interruptible(fn, *args):
    """``fn(*args)`` run in a worker thread while the calling (main) thread waits, so that
    Ctrl-C interrupts a long LLVM pass pipeline or emission within :data:`_POLL_SECONDS`.

    Python runs signal handlers in the main thread between bytecodes, and a call into
    LLVM is one call: a ``KeyboardInterrupt`` waited for the whole optimisation (9.5 s to
    64 s late for a 16,000- and 20,000-copy unrolled loop). llvmlite's calls release the
    GIL, so the waiting main thread handles the signal at once and raises; LLVM itself
    cannot be stopped, so the worker finishes the abandoned module in the background,
    holding :data:`_llvm_lock` (the compile budgets, compiler/budget.py, keep that short),
    and its result is dropped. The worker is no daemon thread, and the main thread waits
    on an event, not ``Thread.join``: Python waits for a non-daemon thread before it
    exits, where a worker still inside LLVM met LLVM's own static destructors (a
    segmentation fault or an LLVM assertion at exit, 4 exits in 6 right after a Ctrl-C in
    an O3 compile). ``join`` would not do: a ``KeyboardInterrupt`` inside it marks the
    thread stopped while it runs (CPython 3.11/3.12 ``_wait_for_tstate_lock`` releases the
    running thread's state lock), so the exit did not wait for it. Outside the main
    thread, where no signal handler runs, ``fn`` runs in the caller's thread, under the
    same lock.
    """
    if threading.current_thread() is not threading.main_thread():
        with _llvm_lock:
            return fn(*args)
    box: dict = {}
    done = threading.Event()

    def work():
        with _llvm_lock:
            try:
                box["value"] = fn(*args)
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                box["error"] = exc
            finally:
                done.set()

    worker = threading.Thread(target=work, name="warp_lab-llvm", daemon=False)
    with _sigint_noted() as sigint:
        worker.start()
        while not done.wait(_POLL_SECONDS):
            sigint.check()  # a signal handler runs here; its KeyboardInterrupt leaves
        sigint.check()      # (or came in a finalizer and was lost there: raised now)
    if "error" in box:
        raise box["error"]
    return box["value"]


def _make_ptx(llvm_ir: str, options: CompileOptions, entry: str | None,
              timings: dict | None, line_zero: bool) -> tuple[str, str]:
    """:func:`make_ptx`'s work, in the thread :func:`_interruptible` runs it in."""
    t0 = time.perf_counter()
    tm = target_machine(options.arch, options.opt)
    if options.fast_math:
        llvm_ir = _add_ftz_flag(llvm_ir)
    try:
        mod = llvm.parse_assembly(llvm_ir)
        mod.verify()
    except RuntimeError as exc:
        raise InternalCompilerError(f"generated LLVM IR is invalid: {exc}", stage="nvptx") from None
    layout = _data_layout(options.arch, options.opt)
    mod.triple = TRIPLE
    mod.data_layout = layout

    # one walk over the functions (each attribute read is a call into LLVM)
    wanted = set()
    for fn in mod.functions:
        name = fn.name
        if fn.is_declaration:
            if name.startswith("__nv_"):
                wanted.add(name)
        elif entry is not None and name != entry:
            fn.linkage = "internal"
    if wanted:
        mod.link_in(llvm.parse_bitcode(_libdevice_subset(frozenset(wanted), layout,
                                                             options.fast_math)))
        if entry is not None:  # the subset's own helpers are internal already
            for name in wanted:
                mod.get_function(name).linkage = "internal"

    pto = llvm.create_pipeline_tuning_options(speed_level=options.opt)
    # A new PassBuilder per module: llvmlite's run registers a stack-local
    # StandardInstrumentations into the builder's callbacks, so reusing one
    # builder for a second module would call into a destroyed object.
    pb = llvm.create_pass_builder(tm, pto)
    try:
        pb.getModulePassManager().run(mod, pb)
        t1 = time.perf_counter()
        # the PTX everything after reads: ptxas, the simulator, the line map
        ptx = _renumber_callseq(_emit(tm, mod))
        if line_zero:
            ptx = attribute_line_zero(ptx)
    except RuntimeError as exc:  # pragma: no cover - LLVM reports through here
        raise InternalCompilerError(f"LLVM could not emit PTX: {exc}", stage="nvptx") from None
    llvm_ir_optimized = str(mod)
    if timings is not None:
        timings["optimize"] = t1 - t0
        timings["ptx"] = time.perf_counter() - t1
    return llvm_ir_optimized, ptx
