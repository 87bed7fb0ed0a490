"""Ctrl-C during LLVM's optimisation and PTX emission is honoured within a second.

A real SIGINT is sent from a timer thread while ``nvptx.make_ptx`` optimises a module
that keeps LLVM busy for seconds (a range loop over a 2,000-element constant tuple:
within the compile budgets, ~2.5 s of O3). The call into LLVM is one foreign call, so
before the fix Python ran the handler only when it returned (9.5 s late for a
16,000-copy unrolled loop).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import warp_lab as wl
from warp_lab.compiler import nvptx
from warp_lab.compiler.artifact import CompileOptions
from warp_lab.compiler.frontend import make_typed_ast
from warp_lab.compiler.lower import make_llvm_ir

from test_diagnostics import cell_kernel


@pytest.fixture()
def python_sigint():
    """Python's own SIGINT handler, whatever the runner left (a background job's SIG_IGN)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _slow_ir():
    kernel = cell_kernel("""
        T = tuple(range(2500))

        @wl.kernel
        def k(a: wl.array(dtype=wl.float32)):
            i = wl.tid()
            s = 0.0
            for j in range(len(T)):
                s += a[i] * float(T[j])
            a[i] = s
    """)
    options = CompileOptions(arch="sm_90", opt=3)
    lowered = make_llvm_ir(make_typed_ast(kernel, options), options)
    return lowered, options


def test_ctrl_c_during_llvm_is_raised_before_llvm_ends_and_the_next_compile_works(
        python_sigint):
    lowered, options = _slow_ir()
    timings: dict = {}
    nvptx.make_ptx(lowered.llvm_ir, options, lowered.entry, timings)  # libdevice, machine
    assert timings["optimize"] > 0.6, "the module no longer keeps LLVM busy past the SIGINT at 0.3 s"
    sent = []

    def send():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(0.3, send)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            nvptx.make_ptx(lowered.llvm_ir, options, lowered.entry)
        late = time.monotonic() - sent[0]
        # raised while LLVM still works on the module, not when it ends (the 1 s promise
        # is measured in one quiet process by python -m benchmarks' stress section; here
        # the suite's workers share the cores)
        still_in_llvm = any(t.name == "warp_lab-llvm" and t.is_alive()
                            for t in threading.enumerate())
    finally:
        timer.cancel()
    assert still_in_llvm and late < 10.0
    # the abandoned module finishes in the background; a compile meanwhile waits for it
    # (one module at a time in LLVM's context) and is right
    @wl.kernel
    def small(x: wl.array(dtype=wl.float32)):
        i = wl.tid()
        x[i] = x[i] * 3.0

    ck = wl.compile(small, arch="sm_90", cache=False, sass=False)
    assert ".entry small" in ck.ptx and "mul.rn.f32" in ck.ptx


def test_llvm_outside_the_main_thread_runs_in_that_thread():
    out = []

    @wl.kernel
    def small2(x: wl.array(dtype=wl.float32)):
        i = wl.tid()
        x[i] = x[i] + 1.0

    worker = threading.Thread(target=lambda: out.append(
        wl.compile(small2, arch="sm_90", cache=False, sass=False)))
    worker.start()
    worker.join(120)
    assert out and "add.rn.f32" in out[0].ptx


EXIT_AFTER_CTRL_C = r'''
import os, signal, sys, threading, time
import warp_lab as wl
from warp_lab.compiler import nvptx
from warp_lab.compiler.artifact import CompileOptions
from warp_lab.compiler.frontend import make_typed_ast
from warp_lab.compiler.lower import make_llvm_ir
from warp_lab.lang.kernel import cell_source

SRC = """T = tuple(range(1200))

@wl.kernel
def k(a: wl.array(dtype=wl.float32)):
    i = wl.tid()
    s = 0.0
    for j in range(len(T)):
        s += a[i] * float(T[j])
    a[i] = s
"""
cell_source(SRC, "<exit cell>")
ns = {"wl": wl}
exec(compile(SRC, "<exit cell>", "exec"), ns)
options = CompileOptions(arch="sm_90", opt=3)
lowered = make_llvm_ir(make_typed_ast(ns["k"], options), options)
threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    nvptx.make_ptx(lowered.llvm_ir, options, lowered.entry)
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted; LLVM still working:",
          any(t.name == "warp_lab-llvm" for t in threading.enumerate()))
'''


def test_the_process_exits_cleanly_right_after_a_ctrl_c_in_llvm():
    # the abandoned module was still in LLVM when Python exited, and LLVM's static
    # destructors freed the context under it: a segmentation fault (or an LLVM assertion)
    # in 4 exits of 6, a Jupyter kernel's restart or shutdown after an interrupted compile.
    # The worker had been marked stopped by the KeyboardInterrupt inside Thread.join, so
    # even a non-daemon worker was not waited for.
    done = subprocess.run([sys.executable, "-c", EXIT_AFTER_CTRL_C], capture_output=True,
                          text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert "interrupted; LLVM still working: True" in done.stdout, (done.stdout, done.stderr)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_ctrl_c_lost_in_a_gc_callback_is_raised_by_the_waiting_loop(python_sigint):
    # (the suite's stress run once lost one so: its KeyboardInterrupt was raised inside
    # hypothesis's gc callback, "Exception ignored in", and the O3 compile ran to its end)
    import gc

    def callback(phase, info):
        if phase == "start" and not fired:
            fired.append(True)
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(10_000):     # Python runs the handler here; its exception is lost
                pass

    fired: list = []
    gc.callbacks.append(callback)
    try:
        with nvptx._sigint_noted() as sigint:
            try:
                gc.collect()            # the callback runs in this thread: nothing raised
            except KeyboardInterrupt:   # (not a lost one: the handler ran after the callback)
                pytest.fail("the SIGINT's handler ran outside the gc callback")
            assert fired and sigint.came
            with pytest.raises(KeyboardInterrupt):
                sigint.check()
    finally:
        gc.callbacks.remove(callback)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_sigint_noted_never_raises_where_sigint_is_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with nvptx._sigint_noted() as sigint:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            sigint.check()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
