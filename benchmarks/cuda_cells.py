"""CUDA C++ cells: warm cell-to-first-output time against %%warp_kernel, and simulator
throughput on NVRTC's PTX against warp_lab's PTX of the same kernel.

    python benchmarks/cuda_cells.py            # both tables
    python benchmarks/cuda_cells.py --quick    # one timed run per cell, small sizes
    python benchmarks/cuda_cells.py --small    # corpus test sizes for the simulator

Table 1, for each kernel of :mod:`benchmarks.kernels.cuda_src` listed: a real IPython
shell runs the ``%%cuda_kernel`` cell of its CUDA C++ twin and the ``%%warp_kernel`` cell
of its Python source (the corpus kernel), each once to warm the compile cache and the
imports, then ``--runs`` times: the seconds from the cell's start to its first output
(the magic's return value and its MIME bundle, what Jupyter sends), median.

Table 2: the simulator (``sim.run``, no checks, no metrics, inputs already in simulator
memory) on NVRTC's PTX of the twin (default options, ``-lineinfo``) and on warp_lab's PTX
of the corpus kernel, same inputs and launch; thread-instructions and M
thread-instructions per second, best of two runs.
"""

from __future__ import annotations

import argparse
import inspect
import statistics
import sys
import textwrap
import time

import numpy as np

import warp_lab as wl
from benchmarks.kernels import cuda_src
from warp_lab import sim
from warp_lab.compiler import abi
from warp_lab.examples import get

CELL_KERNELS = ["saxpy", "block_sum", "matmul_tiled", "transpose_padded"]
#: kernel -> input size of the simulator table (matmul at bench size is 2.7 G instructions)
SIM_KERNELS = {"saxpy": "bench", "block_sum": "bench", "stencil_2d": "bench",
               "transpose_padded": "bench", "matmul_tiled": "small", "histogram": "small",
               "softmax_rows": "small"}


def _python_cell(name: str) -> str:
    """The corpus kernel's source as a %%warp_kernel cell (its decorator dropped)."""
    text = textwrap.dedent(inspect.getsource(get(name).kernel.fn))
    return "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("@"))


def _first_output(ip, magic: str, line: str, cell: str) -> float:
    t0 = time.perf_counter()
    view = ip.run_cell_magic(magic, line, cell)
    view._repr_mimebundle_()
    return time.perf_counter() - t0


def cell_latency(runs: int) -> list[tuple]:
    """Rows ``(kernel, %%cuda_kernel s, %%warp_kernel s)``: median warm seconds."""
    from IPython.testing import globalipapp

    ip = globalipapp.get_ipython()
    ip.run_line_magic("load_ext", "warp_lab")
    rows = []
    for name in CELL_KERNELS:
        cpp, py = cuda_src.source_of(name), _python_cell(name)
        # the corpus module's names (RED_BLOCK, TILE, ...) as the notebook's
        ip.user_ns.update({k: v for k, v in get(name).kernel.fn.__globals__.items()
                           if not k.startswith("__")})
        times = {}
        for magic, cell in (("cuda_kernel", cpp), ("warp_kernel", py)):
            _first_output(ip, magic, "--show source,ptx,sass,resources", cell)   # warm
            times[magic] = statistics.median(
                _first_output(ip, magic, "--show source,ptx,sass,resources", cell)
                for _ in range(runs))
        rows.append((name, times["cuda_kernel"], times["warp_kernel"]))
    return rows


def _pack(ck, args, launch_dim, grid, block):
    from benchmarks.sim_throughput import place_args
    mem, values = place_args(args)
    return sim.parse_module(ck.ptx), abi.pack_params(ck.param_layout, launch_dim, values), mem


def _best(mod, entry, grid, block, params, mem, runs):
    best = None
    for _ in range(runs):
        r = sim.run(mod, entry, grid, block, params, mem, checks=(), metrics=False)
        best = r if best is None or r.seconds < best.seconds else best
    return best


def sim_throughput(small: bool, runs: int) -> list[tuple]:
    """Rows ``(kernel, size, threads, NVRTC instr, NVRTC M/s, warp_lab instr, warp_lab M/s)``."""
    from warp_lab.runtime.launch import launch_geometry

    rows = []
    for name, size in SIM_KERNELS.items():
        size = "small" if small else size
        ex = get(name)
        args = ex.make_inputs(size)
        launch = ex.launch(args)
        ck = wl.compile(ex.kernel, sass=False)
        kw = launch.kwargs()
        grid, block, ldim = launch_geometry(ck.launch_ndim, kw.get("dim"), kw.get("grid"),
                                            kw.get("block"), kw.get("block_dim", 256))
        mod, params, mem = _pack(ck, args, ldim, grid, block)
        ours = _best(mod, ck.entry, grid, block, params, mem, runs)
        inputs, cgrid, cblock = cuda_src.twin_launch(name, ex.make_inputs(size), launch)
        cck = wl.compile(wl.cuda_kernel(cuda_src.source_of(name), name), sass=False)
        cmod, cparams, cmem = _pack(cck, [np.ascontiguousarray(a) if isinstance(a, np.ndarray)
                                          else a for a in inputs], (0, 0, 0), cgrid, cblock)
        theirs = _best(cmod, cck.entry, cgrid, cblock, cparams, cmem, runs)
        threads = int(np.prod(cgrid)) * int(np.prod(cblock))
        rows.append((name, size, threads, theirs.instructions,
                     theirs.instructions_per_second / 1e6, ours.instructions,
                     ours.instructions_per_second / 1e6))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="one timed run per cell and simulator column, small sizes")
    ap.add_argument("--small", action="store_true", help="corpus test sizes for the simulator")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per cell (median)")
    opts = ap.parse_args(argv)
    runs = 1 if opts.quick else opts.runs
    print("cell | %%cuda_kernel warm s | %%warp_kernel warm s | ratio")
    print("--- | --- | --- | ---")
    for name, c, p in cell_latency(runs):
        print(f"{name} | {c:.3f} | {p:.3f} | {c / p:.2f}")
    print()
    print("kernel | size | threads | NVRTC PTX thread-instr | M instr/s | "
          "warp_lab PTX thread-instr | M instr/s | NVRTC ÷ warp_lab instr/s")
    print(" | ".join("---" for _ in range(8)))
    for r in sim_throughput(opts.small or opts.quick, 1 if opts.quick else 2):
        print(f"{r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]:.1f} | {r[5]} | {r[6]:.1f} | "
              f"{r[4] / r[6]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
