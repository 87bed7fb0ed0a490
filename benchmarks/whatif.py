"""What-if experiments: how much of each gap to NVRTC a candidate compiler change would close.

Each experiment rewrites warp_lab's *unoptimised* LLVM IR (``ck.llvm_ir``,
the output of ``compiler/lower``) the way the candidate change would make
``lower`` emit it, then runs the real pipeline stages (``nvptx.make_ptx``,
ptxas; instructions counted from the cubin) and measures the result like every other column
(:func:`benchmarks.quality.assess`). Nothing here changes the compiler; the
numbers say which change is worth making and what it buys.

Experiments:

* ``unit_stride``: the innermost stride of every array parameter is the
  constant 1 (a kernel specialised for arrays contiguous in their last
  dimension, as Numba does with its ``C`` layout type). Lets LLVM fold
  ``a[i, j + 1]`` into ``[base + 4]`` addressing and drop one ``mul`` per
  access.
* ``nsw_all``: every integer ``add``/``sub``/``mul``/``shl`` carries ``nsw``,
  i.e. C's rule that signed overflow never happens. warp_lab's int32
  arithmetic wraps (issue 2), so ``i - 1`` or ``j + 1`` in an index has no
  ``nsw`` and ``sext(i*s + j + 1)`` cannot be split into
  ``sext(i*s + j) + 1``: every access then computes its own 64-bit address.
  This measures what that rule costs (alone it changes ≤ 1 SASS
  instruction on any benchmark kernel, so the run shows it only combined).
* ``unit_stride+nsw_all``: both.
* ``short_ptr``: no IR change, but the NVPTX back end runs with
  ``-nvptx-short-ptr`` (32-bit pointers for shared, const and local memory,
  as NVVM/NVRTC emit them: ``mov.u32 %r1, buf`` instead of
  ``mov.b64 %rd1, buf``). It is an LLVM command-line option, global to the
  process, so it runs in a worker of its own (:func:`enable_short_ptr`).
"""

from __future__ import annotations

import re

__all__ = ["EXPERIMENTS", "unit_stride", "nsw_all", "enable_short_ptr", "run_experiment"]

# %".8" = extractvalue {ptr addrspace(1), [2 x i32], [2 x i32]} %"a", 2, 1 , !dbg !7
_STRIDE_RE = re.compile(
    r'^(\s*%"?[\w.]+"?) = extractvalue \{ptr addrspace\(1\), \[(\d+) x i32\], \[\d+ x i32\]\}'
    r' %"?[\w.]+"?, 2, (\d+)\s*(,.*)?$', re.M)


def unit_stride(llvm_ir: str) -> str:
    """Replace each array's innermost-stride ``extractvalue`` with the constant 1."""
    def repl(m):
        ndim, k = int(m.group(2)), int(m.group(3))
        if k != ndim - 1:
            return m.group(0)
        return f"{m.group(1)} = add i32 0, 1 {m.group(4) or ''}".rstrip()

    return _STRIDE_RE.sub(repl, llvm_ir)


_INT_OP_RE = re.compile(r"= (add|sub|mul|shl) (i32|i64) ")


def nsw_all(llvm_ir: str) -> str:
    """Mark every integer ``add``/``sub``/``mul``/``shl`` ``nsw`` (C's signed-overflow rule)."""
    return _INT_OP_RE.sub(lambda m: f"= {m.group(1)} nsw {m.group(2)} ", llvm_ir)


EXPERIMENTS = {
    "unit_stride": unit_stride,
    "unit_stride+nsw_all": lambda ir: nsw_all(unit_stride(ir)),
}


def enable_short_ptr() -> None:
    """Switch this process's NVPTX back end to 32-bit shared/const/local pointers.

    Must run before the first target machine is created (before any
    compile); it cannot be undone in the process.
    """
    import llvmlite.binding as llvm

    llvm.set_option("", "--nvptx-short-ptr")


def run_experiment(name: str, kernel_name: str, arch: str) -> dict:
    """Compile ``kernel_name`` with warp_lab, rewrite its IR with experiment ``name``, measure.

    ``name`` may also be ``"short_ptr"`` (no rewrite; meaningful only after
    :func:`enable_short_ptr`).

    Returns:
        ``{"registers", "sass_instructions", "changed"}``; ``changed`` is
        False when the PTX came out identical to warp_lab's (the numbers are
        then the baseline's), None for ``short_ptr``.

    Raises:
        KeyError: unknown experiment.
        WarpLabError: the rewritten IR fails in the pipeline.
    """
    import warp_lab as wl
    from benchmarks import quality
    from benchmarks.kernels import warp_lab_kernel
    from warp_lab.compiler import nvptx

    ck = wl.compile(warp_lab_kernel(kernel_name), arch=arch, cache=False)
    if name == "short_ptr":
        ptx, changed = ck.ptx, None
    else:
        _, ptx = nvptx.make_ptx(EXPERIMENTS[name](ck.llvm_ir), ck.options, ck.entry)
        changed = ptx != ck.ptx
    q, _ = quality.assess(ptx, ck.entry, arch, sass=False)
    return {"registers": q.registers, "sass_instructions": q.sass_instructions,
            "changed": changed}
