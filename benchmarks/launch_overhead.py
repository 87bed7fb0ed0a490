"""Host-side cost of one launch of a cached 3-argument kernel (saxpy).

Prints a Markdown table: per-launch wall time of ``wl.launch`` on the
simulator (and on the GPU when one is present), split into the parts that
are not kernel execution — compile-cache lookup, argument checks and
geometry, parameter packing — beside the same measurement for Warp
(``wp.launch`` on its CPU device) and Numba CUDA (GPU, or its simulator) when
they can run. Target (issue 4): at most 5 µs of host time per GPU launch.

    python benchmarks/launch_overhead.py
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np

import warp_lab as wl
from warp_lab.compiler import abi
from warp_lab.compiler.pipeline import compile as wl_compile
from warp_lab.examples import get
from warp_lab.runtime.args import check_arguments
from warp_lab.runtime.device import cuda_devices
from warp_lab.runtime.launch import launch_geometry

N = 32
REPEAT = 200


def _median_us(fn, repeat=REPEAT) -> float:
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e6


def warp_lab_rows(device: str):
    kernel = get("saxpy").kernel
    x = np.ones(N, np.float32)
    y = np.ones(N, np.float32)
    ck = wl_compile(kernel, arch="sm_90" if device == "sim" else wl.get_device(device).arch)
    rows = [(f"warp_lab wl.launch ({device})",
             _median_us(lambda: wl.launch(kernel, dim=N, inputs=[x, y, 1.0], device=device)))]
    if device == "sim":
        run = wl.launch(ck, dim=N, inputs=[x, y, 1.0], device="sim")
        rows.append(("  of which: simulator execution", statistics.median(run.times) * 1e6))
    rows.append(("  of which: compile-cache hit", _median_us(lambda: wl_compile(kernel, arch=ck.arch))))
    rows.append(("  of which: geometry + argument checks",
                 _median_us(lambda: (launch_geometry(1, dim=N),
                                     check_arguments(ck.params, [x, y, 1.0])))))
    args = [abi.ArrayArg(0x1000, (N,), (1,)), abi.ArrayArg(0x2000, (N,), (1,)), 1.0]
    rows.append(("  of which: parameter packing",
                 _median_us(lambda: abi.pack_params(ck.param_layout, (N, 1, 1), args))))
    return rows


def warp_rows():
    try:
        import warp as wp
    except ImportError:
        return [("Warp wp.launch (cpu)", "n/a: warp-lang not installed (pip install warp-lang)")]
    wp.config.quiet = True
    wp.init()

    @wp.kernel
    def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
        i = wp.tid()
        y[i] = a * x[i] + y[i]

    x = wp.array(np.ones(N, np.float32), device="cpu")
    y = wp.array(np.ones(N, np.float32), device="cpu")
    rows = [("Warp wp.launch (cpu)",
             _median_us(lambda: wp.launch(saxpy, dim=N, inputs=[x, y, 1.0], device="cpu")))]
    if wp.is_cuda_available():
        xg, yg = x.to("cuda:0"), y.to("cuda:0")
        rows.append(("Warp wp.launch (cuda)",
                     _median_us(lambda: wp.launch(saxpy, dim=N, inputs=[xg, yg, 1.0]))))
    return rows


_NUMBA_SAXPY = """
@cuda.jit
def saxpy(x, y, a):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]
"""


def numba_rows(gpu: bool):
    if not gpu:
        os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    try:
        from numba import cuda
    except ImportError:
        return [("Numba CUDA", "n/a: numba-cuda not installed (pip install numba-cuda)")]

    # the simulator swaps ``cuda`` in the kernel's globals, so it must be a global there
    namespace = {"cuda": cuda}
    exec(_NUMBA_SAXPY, namespace)
    saxpy = namespace["saxpy"]

    x = np.ones(N, np.float32)
    y = np.ones(N, np.float32)
    if gpu:
        dx, dy = cuda.to_device(x), cuda.to_device(y)

        def go():
            saxpy[1, N](dx, dy, np.float32(1.0))
            cuda.synchronize()
        return [("Numba CUDA launch (cuda)", _median_us(go))]
    return [("Numba CUDA simulator launch", _median_us(lambda: saxpy[1, N](x, y, np.float32(1.0)),
                                                        repeat=20))]


def main():
    gpu = bool(cuda_devices()[0])
    rows = warp_lab_rows("sim")
    if gpu:
        rows += warp_lab_rows("cuda")
    rows += warp_rows()
    rows += numba_rows(gpu)
    print(f"## Launch overhead: saxpy, n = {N}, median of {REPEAT} launches\n")
    print("| what | µs per launch |")
    print("|---|---|")
    for name, value in rows:
        print(f"| {name} | {value if isinstance(value, str) else f'{value:.1f}'} |")
    if not gpu:
        print("\nNo GPU here: the GPU rows (target ≤ 5 µs host time per launch) are n/a.")


if __name__ == "__main__":
    main()
