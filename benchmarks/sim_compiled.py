"""The simulator's compiled tier beside its interpreter and Warp's CPU back end (issue 24).

    python -m benchmarks.sim_compiled               # 3 interleaved rounds, medians
    python -m benchmarks.sim_compiled --repeats 1   # one round
    python -m benchmarks.sim_compiled --small       # tiny sizes, a smoke run

Kernels and sizes (the issue's): saxpy on 2^24 elements, mandelbrot on 1024 x 1024
(256 iterations at most), a 3x3 box blur of a 1920 x 1080 float32 image (edges clamped).
The warp_lab kernels are the corpus' ``saxpy`` and ``mandelbrot`` and :func:`blur3` here;
Warp's are their twins (``benchmarks/kernels/warp_twins.py``, :func:`_warp_blur3`), run on
``wp.launch(..., device="cpu")`` after a warm-up launch (Warp's own compile), timed to
``wp.synchronize_device``.

Columns, each the median of ``--repeats`` rounds in which every column runs once, in turn
(so a load spike on the shared machine hits all of them alike):

* compiled, memcheck: ``sim.run(..., tier="compiled", checks=("memcheck",),
  metrics=False)`` on the PTX ``wl.launch`` runs under memcheck (the ``index_checks``
  variant for 2-D arrays), the JIT compile done before (one warm-up run);
* compiled, checks off: the same with ``checks=()``;
* interpreter, default checks: ``sim.run`` with ``wl.launch``'s default for these kernels
  (memcheck and the barrier check, metrics on);
* interpreter, checks off: ``checks=()``, ``metrics=False``.

Each simulator column runs on a prepared :class:`~warp_lab.sim.GlobalMemory` (no host
copies, as Warp's arrays are already on its device); the compiled columns' outputs are
compared bit for bit with the interpreter's, and Warp's with both (max abs difference).
Ratios are column ÷ Warp CPU.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

import warp_lab as wl
from warp_lab import sim
from warp_lab.compiler import abi
from warp_lab.examples import get
from warp_lab.runtime.launch import launch_geometry

__all__ = ["blur3", "main", "cases"]


@wl.kernel
def blur3(img: wl.array2d(dtype=wl.float32), out: wl.array2d(dtype=wl.float32)):
    """3x3 box blur, the image's edge pixels repeated past its border."""
    i, j = wl.tid()
    h = img.shape[0]
    w = img.shape[1]
    s = 0.0
    for di in range(-1, 2):
        y = wl.clamp(i + di, 0, h - 1)
        for dj in range(-1, 2):
            x = wl.clamp(j + dj, 0, w - 1)
            s += img[y, x]
    out[i, j] = s / 9.0


def _warp_blur3():
    import warp as wp

    @wp.kernel(module="unique", enable_backward=False)
    def blur3_wp(img: wp.array2d(dtype=wp.float32), out: wp.array2d(dtype=wp.float32)):
        i, j = wp.tid()
        h = img.shape[0]
        w = img.shape[1]
        s = float(0.0)
        for di in range(-1, 2):
            y = wp.clamp(i + di, 0, h - 1)
            for dj in range(-1, 2):
                x = wp.clamp(j + dj, 0, w - 1)
                s += img[y, x]
        out[i, j] = s / 9.0
    return blur3_wp


def twins(name: str):
    """The Warp twin ``name`` (imports ``warp``)."""
    from benchmarks.kernels import warp_twins

    return getattr(warp_twins, name)


def cases(small: bool):
    """``(name, size text, warp_lab kernel, args, dim, block_dim, output index, warp
    kernel factory)`` per benchmark kernel."""
    n = 1 << (12 if small else 24)
    h, w = (32, 48) if small else (1024, 1024)
    dx = 3.0 / w
    ih, iw = (30, 50) if small else (1080, 1920)
    img = np.random.default_rng(24).random((ih, iw), dtype=np.float32)
    return [
        ("saxpy", f"2^{int(np.log2(n))}", get("saxpy").kernel,
         [np.ones(n, np.float32), np.full(n, 0.5, np.float32), 2.5], n, 256, 1,
         lambda: twins("saxpy")),
        ("mandelbrot", f"{w}x{h}, 256 iterations", get("mandelbrot").kernel,
         [np.zeros((h, w), np.int32), -2.25, -dx * h / 2, dx, 256], (h, w), 256, 0,
         lambda: twins("mandelbrot")),
        ("blur3", f"{iw}x{ih}", blur3, [img, np.zeros_like(img)], (ih, iw), 256, 1,
         _warp_blur3),
    ]


def _prepared(ck, args, dim, block_dim):
    grid, block, ldim = launch_geometry(ck.launch_ndim, dim, None, None, block_dim)
    mem = sim.GlobalMemory()
    values, addrs = [], []
    for a in args:
        if isinstance(a, np.ndarray):
            addr = mem.alloc(a.nbytes)
            mem.write(addr, a)
            addrs.append(addr)
            values.append(abi.ArrayArg(addr, a.shape, tuple(s // a.itemsize for s in a.strides)))
        else:
            values.append(a)
    return sim.parse_module(ck.ptx), ck.entry, grid, block, abi.pack_params(
        ck.param_layout, ldim, values), mem, addrs


def _sim_column(ck, args, dim, block_dim, out_index, **run_kw):
    """A closure that runs one simulator launch from the first inputs and returns
    ``(seconds, output bytes, SimResult)``."""
    mod, entry, grid, block, params, mem, addrs = _prepared(ck, args, dim, block_dim)
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    first = [a.tobytes() for a in arrays]
    k = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)].index(out_index)

    def restore():
        for addr, data in zip(addrs, first):
            mem.write(addr, data)

    def go():
        restore()
        t0 = time.perf_counter()
        r = sim.run(mod, entry, grid, block, params, mem, restore=restore, **run_kw)
        t = time.perf_counter() - t0
        return t, mem.read(addrs[k], arrays[k].nbytes), r
    return go


def _warp_column(factory, args, dim, out_index):
    import contextlib
    import io

    import warp as wp

    wp.config.quiet = True
    with contextlib.redirect_stdout(io.StringIO()):   # Warp's banner and module lines
        wp.init()
    kernel = factory()
    wargs = [wp.array(a, device="cpu") if isinstance(a, np.ndarray) else
             (np.float32(a) if isinstance(a, float) else a) for a in args]
    first = [a.copy() if isinstance(a, np.ndarray) else None for a in args]
    with contextlib.redirect_stdout(io.StringIO()):
        wp.launch(kernel, dim=dim, inputs=wargs, device="cpu")   # Warp's compile
        wp.synchronize_device("cpu")

    def go():
        for wa, f in zip(wargs, first):
            if f is not None:
                wa.assign(f)
        wp.synchronize_device("cpu")
        t0 = time.perf_counter()
        wp.launch(kernel, dim=dim, inputs=wargs, device="cpu")
        wp.synchronize_device("cpu")
        return time.perf_counter() - t0, wargs[out_index].numpy().tobytes(), None
    return go


COLUMNS = ("Warp CPU", "compiled, memcheck", "compiled, checks off",
           "interpreter, default checks", "interpreter, checks off")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3, help="interleaved rounds (median)")
    ap.add_argument("--small", action="store_true", help="tiny sizes (a smoke run)")
    opts = ap.parse_args(argv)
    print(f"Simulator tiers vs Warp CPU: median of {opts.repeats} interleaved rounds "
          f"(`python -m benchmarks.sim_compiled{' --small' if opts.small else ''}"
          f" --repeats {opts.repeats}`)\n")
    head = ["kernel", "size", *(f"{c} s" for c in COLUMNS),
            *(f"{c} ÷ Warp" for c in COLUMNS[1:]), "compiled == interpreter", "max |sim - Warp|"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, size, kernel, args, dim, bd, out_index, factory in cases(opts.small):
        plain = wl.compile(kernel)
        checked = wl.compile(kernel, index_checks=True)
        cols = [None,
                _sim_column(checked, args, dim, bd, out_index, checks=("memcheck",),
                            metrics=False, tier="compiled"),
                _sim_column(plain, args, dim, bd, out_index, checks=(), metrics=False,
                            tier="compiled"),
                _sim_column(checked, args, dim, bd, out_index, checks=("memcheck", "barrier"),
                            metrics=True),
                _sim_column(plain, args, dim, bd, out_index, checks=(), metrics=False)]
        try:
            cols[0] = _warp_column(factory, args, dim, out_index)
        except Exception as exc:  # noqa: BLE001 - a missing peer is a cell, not a crash
            print(f"<!-- Warp CPU unavailable: {type(exc).__name__}: {exc} -->")
        for c in cols[1:3]:
            c()   # the JIT compile, once per kernel, outside the timed rounds
        times = [[] for _ in cols]
        outs = [None] * len(cols)
        for _ in range(opts.repeats):
            for k, c in enumerate(cols):
                if c is not None:
                    t, out, r = c()
                    times[k].append(t)
                    outs[k] = out
                    if r is not None and k in (1, 2) and r.tier != "compiled":
                        raise SystemExit(f"{name}: the compiled tier did not run "
                                         f"({r.tier_reason})")
        med = [statistics.median(t) if t else None for t in times]
        ratios = [f"{m / med[0]:.1f}" if m and med[0] else "n/a" for m in med[1:]]
        exact = outs[1] == outs[3] and outs[2] == outs[4]
        dt = np.int32 if name == "mandelbrot" else np.float32
        diff = "n/a"
        if outs[0] is not None:
            diff = f"{np.abs(np.frombuffer(outs[0], dt).astype(np.float64) - np.frombuffer(outs[4], dt)).max():.3g}"
        cells = [name, size, *(f"{m:.4f}" if m is not None else "n/a" for m in med), *ratios,
                 "yes" if exact else "NO", diff]
        print("| " + " | ".join(cells) + " |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
