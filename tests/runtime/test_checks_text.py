"""A launch says which simulator checks ran; by default a kernel with shared memory runs
racecheck and initcheck (a new user's racy scan came out exactly right with no finding under
the old default, memcheck and barrier, and they concluded it was correct), and one run
without them says what could have gone unreported."""

import inspect

import numpy as np

import warp_lab as wl
from warp_lab.notebook.results import launch_html

BS = 64


@wl.kernel
def racy_scan(x: wl.array(dtype=wl.int32), y: wl.array(dtype=wl.int32)):
    buf = wl.shared_array(BS, wl.int32)
    t = wl.thread_idx.x
    buf[t] = x[t]
    wl.syncthreads()
    d = 1
    while d < BS:
        if t >= d:
            buf[t] += buf[t - d]        # no barrier between the steps: a race
        d *= 2
    y[t] = buf[t]


@wl.kernel
def plain_copy(x: wl.array(dtype=wl.int32), y: wl.array(dtype=wl.int32)):
    t = wl.thread_idx.x
    y[t] = x[t]


def _run(kernel, **kw):
    x = np.arange(BS, dtype=np.int32)
    y = np.zeros(BS, np.int32)
    return wl.launch(kernel, inputs=[x, y], device="sim", grid=(1, 1, 1), block=(BS, 1, 1), **kw)


def test_the_default_checks_find_the_race_of_a_shared_memory_kernel():
    # the default, checks="auto": racecheck and initcheck for a kernel with shared memory
    res = _run(racy_scan)
    assert res.checks == ("memcheck", "racecheck", "initcheck", "barrier")
    assert {f.kind for f in res.findings} >= {"race_raw"}, [str(f) for f in res.findings]
    assert res.checks_text == "simulator checks: memcheck, racecheck, initcheck, barrier"
    # a kernel without shared memory does not pay for them
    assert _run(plain_copy).checks == ("memcheck", "barrier")


def test_checks_left_out_say_what_they_would_have_looked_for():
    res = _run(racy_scan, checks=("memcheck", "barrier"))
    assert res.checks == ("memcheck", "barrier") and not res.findings
    text = res.checks_text
    assert text.startswith("simulator checks: memcheck, barrier (no findings); racecheck and "
                           "initcheck did not run, so a shared-memory race or a read of shared "
                           "memory no thread wrote would go unreported"), text
    assert "checks=('memcheck', 'racecheck', 'initcheck', 'barrier')" in text
    assert "--check memcheck,racecheck,initcheck" in text
    assert text in repr(res)
    assert 'class="wl-checks"' in launch_html(res) and "racecheck and initcheck" in \
        launch_html(res)


def test_one_check_left_out_and_no_shared_memory():
    text = _run(racy_scan, checks=("memcheck", "racecheck")).checks_text
    assert "; initcheck and barrier did not run, so a read of shared memory no thread wrote " \
        "or a barrier that only some threads of a block reach" in text, text
    assert "shared-memory race" not in text and "(no findings)" not in text   # it found one
    assert _run(plain_copy).checks_text == "simulator checks: memcheck, barrier (no findings)"
    assert _run(plain_copy, checks=None).checks_text == "simulator checks: none (no findings)"
    # one order however asked (the magic puts "barrier" first), no repeats
    assert _run(plain_copy, checks=["barrier", "initcheck", "memcheck", "memcheck"]).checks == \
        ("memcheck", "initcheck", "barrier")


def test_the_runtimes_check_names_are_the_simulators():
    # wl.launch keeps its own copy so that importing warp_lab does not import the simulator
    from warp_lab.runtime.launch import CHECKS
    from warp_lab.sim.state import CHECKS as SIM_CHECKS

    assert CHECKS == SIM_CHECKS


@wl.kernel
def divergent_barrier(x: wl.array(dtype=wl.int32), y: wl.array(dtype=wl.int32)):
    buf = wl.shared_array(BS, wl.int32)
    t = wl.thread_idx.x
    buf[t] = x[t]
    if t < 16:
        wl.syncthreads()        # only warp 0's first half reaches it
    y[t] = buf[BS - 1 - t]


def test_a_divergent_barrier_names_the_python_line_of_the_branch_around_it():
    # the threads that skipped the barrier are said where they left it in the user's code
    # (the `if`), not only at the PTX ret they exited at (which names no Python line: its
    # .loc is the def line); the PTX line of the branch stays in details
    [f] = [f for f in _run(divergent_barrier).findings if f.kind == "divergent_barrier"]
    lines, first = inspect.getsourcelines(divergent_barrier.fn)
    if_line = first + next(i for i, t in enumerate(lines) if t.strip() == "if t < 16:")
    assert f.source_line == if_line + 1                       # the barrier's line
    assert (f"while 48 others never reached it: they took another path at line {if_line} "
            "(if t < 16:) and exited (at PTX line ") in f.message, f.message
    assert f.details["branch_source_line"] == if_line
    assert f.details["branch_source_text"] == "if t < 16:"
    assert f.details["branch_ptx_line"] > 0


def test_a_check_string_without_barrier_says_the_barrier_check_did_not_run():
    # --check memcheck,racecheck in the magic keeps the barrier check; the same string as
    # wl.launch's checks= drops it, and the divergent barrier went unreported in silence
    assert "divergent_barrier" in {f.kind for f in _run(divergent_barrier).findings}
    res = _run(divergent_barrier, checks="memcheck,racecheck,initcheck")
    assert res.checks == ("memcheck", "racecheck", "initcheck")
    assert "divergent_barrier" not in {f.kind for f in res.findings}
    assert "; barrier did not run, so a barrier that only some threads of a block reach " \
        "would go unreported: checks=('memcheck', 'racecheck', 'initcheck', 'barrier')" \
        in res.checks_text, res.checks_text
    text = _run(divergent_barrier, checks="memcheck").checks_text
    assert "; racecheck, initcheck and barrier did not run, so a shared-memory race, a read " \
        "of shared memory no thread wrote or a barrier that only some threads" in text, text
    # no barrier in the kernel: nothing said about the barrier check
    assert _run(plain_copy, checks="memcheck").checks_text == \
        "simulator checks: memcheck (no findings)"
