"""Simulator throughput: thread-instructions per second on corpus kernels at bench sizes.

    python benchmarks/sim_throughput.py            # the table (best of 2 runs per column)
    python benchmarks/sim_throughput.py --quick    # one run per column (same sizes)
    python benchmarks/sim_throughput.py --small    # corpus test sizes, a smoke run

For each kernel: the launch (threads), thread-instructions executed, the
simulator's seconds with metrics off and on, M thread-instructions/s, the
numpy reference's seconds, and the Numba CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``, numba-cuda from PyPI) on the same kernel
written for Numba. The Numba simulator runs Python once per thread, so it is
timed on a smaller launch in a subprocess and scaled linearly to the bench
size (the column says so); "n/a" when numba-cuda is not installed.

Targets (issue 3): ≥ 50 M thread-instructions/s on convergent kernels such
as saxpy at n = 2^22 on one core; ≥ 100× the Numba CUDA simulator.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np

import warp_lab as wl
from warp_lab import sim
from warp_lab.compiler import abi
from warp_lab.examples import get

KERNELS = ["saxpy", "block_sum"]

NUMBA_SOURCES = {
    "saxpy": """
        @cuda.jit
        def k(x, y, a):
            i = cuda.grid(1)
            if i < x.size:
                y[i] = a * x[i] + y[i]
        x = np.ones(N, np.float32); y = np.ones(N, np.float32)
        launch = lambda: k[(N + 255) // 256, 256](x, y, np.float32(2.5))
    """,
    "block_sum": """
        @cuda.jit
        def k(x, partial, n):
            buf = cuda.shared.array(256, numba.float32)
            t = cuda.threadIdx.x
            i = cuda.blockIdx.x * 256 + t
            buf[t] = x[i] if i < n else 0.0
            cuda.syncthreads()
            s = 128
            while s > 0:
                if t < s:
                    buf[t] += buf[t + s]
                cuda.syncthreads()
                s //= 2
            if t == 0:
                partial[cuda.blockIdx.x] = buf[0]
        x = np.ones(N, np.float32); p = np.zeros((N + 255) // 256, np.float32)
        launch = lambda: k[(N + 255) // 256, 256](x, p, N)
    """,
}


def _numba_seconds(name: str, threads: int, bench_threads: int) -> str:
    """Numba CUDA simulator seconds for ``threads`` threads, scaled to ``bench_threads``."""
    body = textwrap.dedent(NUMBA_SOURCES[name])
    script = "\n".join([
        "import os, time", "os.environ['NUMBA_ENABLE_CUDASIM'] = '1'",
        "import numpy as np, numba", "from numba import cuda", f"N = {threads}", body,
        "t = time.perf_counter(); launch(); print(time.perf_counter() - t)"])
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(script)
        path = f.name
    try:
        out = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return "timeout"
    finally:
        os.unlink(path)
    if out.returncode != 0:
        return "n/a"
    secs = float(out.stdout.strip().splitlines()[-1])
    return f"{secs * bench_threads / threads:.1f} (scaled from {threads})"



def place_args(args):
    """``(memory, values)``: each numpy array of ``args`` copied into a fresh simulator
    global memory and replaced by its ``abi.ArrayArg`` (address, shape, element strides);
    scalars as they are."""
    mem = sim.GlobalMemory()
    values = []
    for a in args:
        if isinstance(a, np.ndarray):
            addr = mem.alloc(a.nbytes)
            mem.write(addr, a)
            values.append(abi.ArrayArg(addr, a.shape, tuple(s // a.itemsize for s in a.strides)))
        else:
            values.append(a)
    return mem, values

def _launch_args(ex, args):
    """Compile and pack one example for a direct ``sim.run`` (no copy-in/out overhead)."""
    ck = wl.compile(ex.kernel, opt=3)
    launch = ex.launch(args)
    from warp_lab.runtime.launch import launch_geometry
    kw = launch.kwargs()
    grid, block, ldim = launch_geometry(ck.launch_ndim, kw.get("dim"), kw.get("grid"),
                                        kw.get("block"), kw.get("block_dim", 256))
    mem, values = place_args(args)
    params = abi.pack_params(ck.param_layout, ldim, values)
    return sim.parse_module(ck.ptx), ck.entry, grid, block, params, mem


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="one timed run per column instead of the best of two")
    ap.add_argument("--small", action="store_true", help="the corpus' small sizes (smoke run)")
    ap.add_argument("--numba-threads", type=int, default=2048,
                    help="threads of the (scaled) Numba simulator run")
    opts = ap.parse_args(argv)
    rows = []
    for name in KERNELS:
        ex = get(name)
        args = ex.make_inputs("small" if opts.small else "bench")
        mod, entry, grid, block, params, mem = _launch_args(ex, args)
        threads = int(np.prod(grid)) * int(np.prod(block))
        res = {}
        for metrics in (False, True):
            best = None
            for _ in range(1 if opts.quick else 2):
                r = sim.run(mod, entry, grid, block, params, mem, checks=(), metrics=metrics)
                best = r if best is None or r.seconds < best.seconds else best
            res[metrics] = best
        t0 = time.perf_counter()
        ex.reference(*args)
        t_np = time.perf_counter() - t0
        nb = _numba_seconds(name, min(opts.numba_threads, threads), threads)
        rows.append((name, threads, res[False].instructions, res[False].seconds,
                     res[False].instructions_per_second / 1e6, res[True].seconds,
                     res[True].instructions_per_second / 1e6, t_np, nb))
    head = ("kernel", "threads", "thread-instr", "sim s", "M instr/s", "sim+metrics s",
            "M instr/s", "numpy s", "numba cudasim s")
    print(" | ".join(head))
    print(" | ".join("---" for _ in head))
    for r in rows:
        print(f"{r[0]} | {r[1]} | {r[2]} | {r[3]:.3f} | {r[4]:.1f} | {r[5]:.3f} | {r[6]:.1f} | "
              f"{r[7]:.4f} | {r[8]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
