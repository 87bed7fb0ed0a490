"""What ``print(*r.findings)`` says after ``wl.launch(..., device="sim")``: findings in the
user's terms (the Python array and its line, not the PTX symbol), as the notebook's HTML
view shows them. Real kernels, compiled by LLVM and run on the simulator."""

import numpy as np

import warp_lab as wl
from warp_lab.examples import source_line

ALL = ("memcheck", "racecheck", "initcheck", "barrier")


@wl.kernel
def neighbour(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    buf = wl.shared_array(64, wl.float32)  # marker: buf
    t = wl.thread_idx.x
    buf[t] = x[wl.tid()]
    y[wl.tid()] = buf[(t + 1) % 64]


@wl.kernel
def shifted(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    tile = wl.shared_array(32, wl.float32)  # marker: tile
    t = wl.thread_idx.x
    tile[t] = x[wl.tid()]
    wl.syncthreads()
    y[wl.tid()] = tile[t + 1]


@wl.kernel
def forgot_shared_mem(x: wl.array(dtype=wl.float32)):
    dyn = wl.dynamic_shared_array(wl.float32)  # marker: dyn
    dyn[wl.thread_idx.x] = 1.0
    x[wl.tid()] = dyn[0]


def _one(kernel, n, block, checks=ALL, inputs=None):
    inputs = inputs or [np.arange(n, dtype=np.float32), np.zeros(n, np.float32)]
    r = wl.launch(kernel, dim=n, inputs=inputs, block_dim=block, device="sim", checks=checks)
    assert r.findings, kernel.name
    return r.findings


def test_shared_memory_findings_name_the_python_array_and_its_line():
    # a race (no barrier), an out-of-bounds read (tile[32]) and a dynamic array the launch
    # gave no memory: each names the array as the kernel does, the symbol stays in details
    for kernel, name, checks, inputs in (
            (neighbour, "buf", ALL, None),
            (shifted, "tile", ("memcheck",), None),
            (forgot_shared_mem, "dyn", ("memcheck",), [np.zeros(32, np.float32)])):
        line = source_line(kernel, f"# marker: {name}")
        for f in _one(kernel, 64 if kernel is neighbour else 32, 64 if kernel is neighbour
                      else 32, checks, inputs):
            text = str(f)
            assert kernel.name not in f.message and "__wl_dynamic" not in text, text
            if kernel is forgot_shared_mem:
                assert f"(wl.dynamic_shared_array dyn, line {line}, the launch's shared_mem=0 " \
                       "bytes" in text, text
            else:
                assert f"shared array {name} (line {line})" in text, text
                sym = f.details.get("variable", "")
                assert sym.startswith(f"{kernel.name}_{name}_"), f.details
