"""Where a ``%%warp_kernel`` view's time goes, for a small, a medium and a big kernel.

    python benchmarks/view_build.py [--sizes 1,6,30] [--repeats 3]

Each kernel is generated (:func:`big_kernel_source`: ``blocks`` blocks of about ten
statements each: shared memory and barriers, a ``range`` loop with a math builtin, a
shuffle, a branch) and run through the magic's own path in this process
(``%%warp_kernel --no-cache`` in an IPython shell, which compiles with the life-range
table and builds the register heat), then its display bundle is built. Stages in ms: the
compile's are the median wall times of ``CompiledKernel.timings`` over ``--repeats``
(ptxas and nvdisasm run as subprocesses); the view's, which run in this process, are the
least CPU time (``time.process_time``) of ``--repeats`` runs, which other load on a
shared machine inflates far less than wall time (on a 2-core machine shared by several
jobs the wall times were 2-4x the CPU times):

* compile: ``CompiledKernel.timings`` (total; ptxas; nvdisasm, listing and life ranges
  in parallel);
* register heat: :func:`warp_lab.notebook.widgets.register_heat` (parse the life-range
  table, fold it onto Python and SASS lines);
* highlight: the panes' texts as the static view shows them (the first
  ``PANE_MAX_LINES`` lines) through :func:`~warp_lab.notebook.highlight.highlight_lines`
  with its cache cleared, beside :func:`reference_highlight_lines`, the loop it
  replaced (same output, asserted here): the before/after ratio of one run;
* static HTML: :func:`~warp_lab.notebook.views.kernel_html` first (highlight cache
  cleared) and again (a re-rendered view: cache hits);
* bundle: :func:`~warp_lab.notebook.bundle.kernel_bundle`; json: ``json.dumps`` of the
  whole display bundle (what ipykernel sends);

and the sizes of the static HTML and of the bundle's JSON. A benchmark, not a test:
the numbers depend on the machine and on what else runs on it.
"""

from __future__ import annotations

import argparse
import html
import json
import random
import statistics
import time

__all__ = ["big_kernel_source", "reference_highlight_lines", "measure", "main"]

_MATH = ("wl.sin", "wl.exp", "wl.sqrt", "wl.log", "wl.cos")


def big_kernel_source(blocks: int = 30, name: str = "big_kernel") -> str:
    """The source of a generated kernel (deterministic: a fixed seed).

    Args:
        blocks: how many blocks of 12 lines (about ten statements: a shared store,
            ``wl.syncthreads``, a shared load, a ``range`` loop over a math builtin,
            ``wl.shfl_down_sync``, an ``if``/``else``); 30 gives ~370 lines, whose
            LLVM IR, PTX and SASS are ~3,500-5,200 lines each on sm_90.
        name: the kernel's name.

    Returns:
        ``def name(x, y, n): ...`` text using ``wl`` (``import warp_lab as wl``).
    """
    rnd = random.Random(1234)
    out = [f"def {name}(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), "
           "n: int):",
           "    buf = wl.shared_array(256, wl.float32)",
           "    i = wl.block_idx.x * wl.block_dim.x + wl.thread_idx.x",
           "    t = wl.thread_idx.x",
           "    a = x[i] if i < n else 0.0",
           "    b = a * 0.5 + 1.0",
           "    c = a - 2.0"]
    for k in range(blocks):
        f = rnd.choice(_MATH)
        out += [f"    buf[t] = a * {k + 1}.0 + b",
                "    wl.syncthreads()",
                f"    s{k} = buf[(t + {k + 1}) % 256] + c",
                f"    for j in range({k % 4 + 2}):",
                f"        s{k} = s{k} * 0.9 + {f}(abs(b) + 1.0)",
                f"    s{k} += wl.shfl_down_sync(0xFFFFFFFF, s{k}, {1 << (k % 5)})",
                f"    if s{k} > {k}.0:",
                f"        a = a + s{k} * 0.25",
                "    else:",
                f"        b = b - s{k} * 0.125",
                f"    c = c + a * b - s{k}",
                "    wl.syncthreads()"]
    out += ["    if i < n:", "        y[i] = a + b + c"]
    return "\n".join(out) + "\n"


def reference_highlight_lines(text: str, pane: str) -> list[str]:
    """The per-line highlighter as it was before the view-build work (the before of the
    before/after; the tests compare the current one with it): one ``in`` test per token
    against Pygments' token tree,
    ``str.split`` of every token, ``html.escape`` per run."""
    from pygments.token import Error, Text, Whitespace

    from warp_lab.lang.kernel import python_lines
    from warp_lab.notebook.highlight import _css_class
    from warp_lab.notebook.lexers import get_lexer

    if not text:
        return []
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    n_lines = len(python_lines(text))
    lexer = get_lexer(pane)
    lines: list[list[list[str]]] = [[]]
    for ttype, value in lexer.get_tokens(text):
        cls = "" if ttype in Whitespace or ttype is Text or ttype in Error else _css_class(ttype)
        for k, part in enumerate(value.split("\n")):
            if k:
                lines.append([])
            if not part:
                continue
            runs = lines[-1]
            if runs and (runs[-1][0] == cls or (not part.strip() and not runs[-1][0])):
                runs[-1][1] += part
            else:
                runs.append([cls, part])
    return ["".join(f'<span class="{c}">{html.escape(t, quote=False)}</span>' if c
                    else html.escape(t, quote=False) for c, t in runs)
            for runs in lines[:n_lines]]


def _shown_texts(ck) -> dict[str, str]:
    """Each pane's text as the static view highlights it (its first PANE_MAX_LINES)."""
    from warp_lab.lang.kernel import python_lines
    from warp_lab.notebook.views import PANE_MAX_LINES, PANES, pane_text, python_pane_lines

    out = {"python": "\n".join(t for _, t in python_pane_lines(ck))}
    for pane in ("llvm", "llvm_unoptimized", "ptx", "sass"):
        text = pane_text(ck, PANES[pane][1])
        if text:
            out[pane] = "\n".join(python_lines(text)[:PANE_MAX_LINES])
    return out


def _timed(fn, repeats: int, before=None) -> tuple[float, object]:
    """(least CPU seconds of ``repeats`` calls of ``fn``, its last value); ``before`` runs
    untimed ahead of each call."""
    times, value = [], None
    for _ in range(repeats):
        if before is not None:
            before()
        t0 = time.process_time()
        value = fn()
        times.append(time.process_time() - t0)
    return min(times), value


def measure(shell, blocks: int, repeats: int) -> dict[str, float]:
    """Stage times (seconds) and sizes (bytes) for one generated kernel.

    Args:
        shell: an IPython shell with ``%load_ext warp_lab`` done.
        blocks: :func:`big_kernel_source`'s size.
        repeats: runs per stage; the median is kept.
    """
    from warp_lab.notebook.bundle import MIME_TYPE, kernel_bundle
    from warp_lab.notebook.highlight import _highlight, highlight_lines
    from warp_lab.notebook.views import kernel_html
    from warp_lab.notebook.widgets import register_heat

    cell = "import warp_lab as wl\n" + big_kernel_source(blocks, f"kernel_{blocks}")
    compiles = []
    for _ in range(repeats):
        view = shell.run_cell_magic("warp_kernel", "--no-cache", cell)
        compiles.append(view.compiled.timings)
    ck = view.compiled
    out = {f"compile: {s}": statistics.median(t.get(s, 0.0) for t in compiles)
           for s in ("total", "ptxas", "nvdisasm")}
    out["lines (LLVM+PTX+SASS)"] = sum(len((t or "").splitlines()) for t in
                                      (ck.llvm_ir_optimized, ck.ptx, ck.sass))
    out["register heat"], regs = _timed(lambda: register_heat(ck), repeats)
    texts = _shown_texts(ck)
    out["highlight: before"], old = _timed(
        lambda: [reference_highlight_lines(t, p) for p, t in texts.items()], repeats)
    out["highlight: after"], new = _timed(
        lambda: [highlight_lines(t, p) for p, t in texts.items()], repeats, _highlight.cache_clear)
    if old != new:
        raise AssertionError(f"highlight_lines differs from the reference ({blocks} blocks)")
    opts = view.view_options
    out["static HTML: first"], page = _timed(lambda: kernel_html(ck, **opts), repeats,
                                             _highlight.cache_clear)
    out["static HTML: again"], _ = _timed(lambda: kernel_html(ck, **opts), repeats)
    out["bundle"], _ = _timed(lambda: kernel_bundle(
        ck, occupancy=opts.get("occupancy"), heat=opts.get("heat"),
        pane_heat=opts.get("pane_heat")), repeats)
    data = view._repr_mimebundle_()
    out["json"], _ = _timed(lambda: json.dumps(data), repeats)
    out["size: static HTML"] = len(page.encode())
    out["size: bundle JSON"] = len(json.dumps(data[MIME_TYPE]).encode())
    out["heat lines"] = len(regs[0]) if regs else 0
    return out


def _cell(key: str, v: float) -> str:
    if key.startswith(("size", "lines", "heat lines")):
        return f"{int(v):,}"
    return f"{1000 * v:,.1f}"


def main(argv=None) -> int:
    """Print the Markdown tables; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1,6,30", help="blocks per kernel (small,medium,big)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "warp_lab")
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = {b: measure(shell, b, args.repeats) for b in sizes}
    keys = list(rows[sizes[0]])
    head = " | ".join(f"{b} blocks" for b in sizes)
    print(f"| stage (ms; sizes in bytes) | {head} | {sizes[-1]}/{sizes[0]} |")
    print("|---" * (len(sizes) + 2) + "|")
    for k in keys:
        first = rows[sizes[0]][k]
        ratio = f"{rows[sizes[-1]][k] / first:.1f}x" if first else "—"
        print(f"| {k} | " + " | ".join(_cell(k, rows[b][k]) for b in sizes) + f" | {ratio} |")
    print()
    print("| kernel | highlight before (ms) | after (ms) | before/after "
          "| static HTML first/again |")
    print("|---|---|---|---|---|")
    for b in sizes:
        r = rows[b]
        print(f"| {b} blocks | {1000 * r['highlight: before']:.1f} | "
              f"{1000 * r['highlight: after']:.1f} | "
              f"{r['highlight: before'] / r['highlight: after']:.2f}x | "
              f"{r['static HTML: first'] / r['static HTML: again']:.1f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
