"""Ctrl-C held off while a launch copies its results back into the caller's arrays.

A launch's results reach the host in one copy per written :class:`~warp_lab.runtime.args.
Region`. Python runs a signal handler between any two bytecodes, so a Ctrl-C (SIGINT; the
Jupyter kernel's "interrupt" sends it too) arriving between two of those copies raised
``KeyboardInterrupt`` with some output arrays written and others not: a half-written
result that neither the old values nor the launch's describe. :func:`deferred_sigint`
holds such a Ctrl-C until the copies are done and then delivers it through the handler it
held it from (Python's raises ``KeyboardInterrupt``): every output array then holds the
launch's result. A Ctrl-C while the simulator runs is not held: the simulator stops with an
``interrupted`` finding and copies nothing back (``partial=True``).
"""

from __future__ import annotations

import contextlib
import signal
import threading

__all__ = ["deferred_sigint"]


@contextlib.contextmanager
def deferred_sigint():
    """Hold SIGINT for the duration of the ``with`` block, then deliver it.

    The handler installed before the block (normally Python's ``default_int_handler``,
    which raises ``KeyboardInterrupt``) is put back when the block ends and called once
    if a SIGINT came meanwhile, so the ``KeyboardInterrupt`` is raised after the block,
    never inside it. Outside the main thread (Python runs signal handlers only there, and
    ``signal.signal`` refuses other threads) and when SIGINT is ignored or left to the
    operating system (``SIG_IGN``, ``SIG_DFL``, a handler not set from Python), nothing
    is held. An exception from the block propagates, and a SIGINT held meanwhile is then
    dropped (the exception ends the launch already).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):
        yield
        return
    held = []

    def hold(signum, frame):
        held.append((signum, frame))

    signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if held:
        previous(*held[0])
