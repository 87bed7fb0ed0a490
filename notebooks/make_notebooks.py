"""Write the teaching notebooks (``notebooks/0*.ipynb``) from the cell lists below.

    python notebooks/make_notebooks.py

The notebooks are generated, not edited by hand, so that their text stays
reviewable here and no outputs are ever committed. Each runs top to bottom
on the simulator (no GPU) and asserts its own results in "# check" cells,
each after a short "Check the result" markdown line, so that the lesson
cells read without test scaffolding; they use the public API (``wl.*``,
result fields) where one exists;
``tests/notebook/test_notebooks.py`` executes them in a real Jupyter kernel.
Cells whose source starts with ``# raises`` are tagged ``raises-exception``
(they show an error on purpose).

    python notebooks/make_notebooks.py --check [FOLDER]

says whether the notebooks on disk (in ``notebooks/`` or FOLDER) still hold what this file writes, comparing
only what it writes (each cell's type, id, source and tags): outputs,
execution counts and the metadata JupyterLab or nbclient add when a notebook
is run and saved (kernel and language versions, timings, "scrolled", ...) do
not count, so ``make lab``, Run All and save leave ``make test`` passing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

SETUP = """%load_ext warp_lab
import numpy as np
import warp_lab as wl"""

NOTEBOOKS: dict[str, list[tuple[str, str]]] = {}

NOTEBOOKS["01_first_kernel"] = [
    ("md", """# 01 · Your first kernel

A GPU kernel is a function that runs once per **thread**. Threads come in
**blocks**, blocks form a **grid**, and the hardware runs 32 threads of a
block in lockstep as a **warp**. `wl.tid()` is this thread's index in the
whole launch.

A `%%warp_kernel` cell compiles every function in it and shows what it
becomes: Python → LLVM IR → PTX (NVIDIA's virtual ISA) → SASS (the machine
code, from NVIDIA's own `ptxas`/`nvdisasm`). Lines of the same colour belong
together; with JavaScript, hovering a line highlights its counterparts."""),
    ("code", SETUP),
    ("code", """%%warp_kernel
def vector_add(a: wl.array(dtype=wl.float32), b: wl.array(dtype=wl.float32),
               c: wl.array(dtype=wl.float32)):
    i = wl.tid()
    c[i] = a[i] + b[i]"""),
    ("md", """`vector_add` is now bound in the notebook. Launch it on the CPU
simulator (`device="sim"`): it executes the very PTX shown above, with one
thread per element. `dim=n` runs exactly `n` threads."""),
    ("code", """n = 1_000_000
a = np.arange(n, dtype=np.float32)
b = np.full(n, 0.5, dtype=np.float32)
c = np.zeros(n, dtype=np.float32)
res = wl.launch(vector_add, dim=n, inputs=[a, b, c], device="sim")
res"""),
    ("md", """The result shows the launch shape: 256 threads per block and
ceil(1,000,000 / 256) = 3907 blocks (3907 × 256 = 1,000,192 threads: the
last 192 threads of block 3906 fail the bounds guard and do nothing).
On the simulator, "simulated in … ms (CPU simulator time, not GPU time)" is
the time the simulator took on the CPU (host wall-clock time), not a GPU
kernel time: it says nothing about how fast the kernel runs on a GPU. With
`device="cuda"` the result says "… ms GPU time (CUDA events)": the kernel
time measured with CUDA events.

Check the result against numpy, and the time's label:"""),
    ("code", """# check
np.testing.assert_array_equal(c, a + b)
assert res.grid == (3907, 1, 1) and res.block == (256, 1, 1)
assert res.time_text.endswith("(CPU simulator time, not GPU time)")"""),
    ("md", """## saxpy, compiled and launched in one cell

`--launch` runs the cell's kernel right away; its arguments are evaluated in
the notebook. The result is bound to `_launch`."""),
    ("code", """x = np.linspace(0, 1, 1 << 20, dtype=np.float32)   # 1M elements
y = np.ones(1 << 20, dtype=np.float32)
y_before = y.copy()"""),
    ("code", """%%warp_kernel --launch "dim=x.size, inputs=[x, y, 2.0]" --show source,ptx,sass,resources
def saxpy(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), a: float):
    i = wl.tid()
    y[i] = a * x[i] + y[i]"""),
    ("md", "Check the result: `y` now holds `2 * x + y`."),
    ("code", """# check
np.testing.assert_allclose(y, 2.0 * x + y_before, rtol=1e-6)
assert _launch.threads >= x.size"""),
    ("md", """## The same kernel for another GPU

`wl.compile` gives the record behind the view: `ptx`, `sass`,
`resources` (what `ptxas -v` reports) and the line map."""),
    ("code", """ck = wl.compile(saxpy, arch="sm_75")
print(ck.resources)
ck"""),
    ("md", "Check the result: a few registers, no spills, a PTX entry point."),
    ("code", """# check
assert ck.resources.registers > 0 and not ck.resources.spills
assert ".entry" in ck.ptx and ck.source_map.rows_of("ptx")"""),
    ("md", """## Mistakes point at your line

A compile error shows the cell line (the `%%warp_kernel` line is line 1),
a caret and the message — not a traceback."""),
    ("code", """# raises: a name the kernel cannot know
%%warp_kernel
def broken(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    x[i] = not_defined_anywhere * 2.0"""),
    ("code", """try:
    get_ipython().run_cell_magic("warp_kernel", "",
        "def broken(x: wl.array(dtype=wl.float32)):\\n    i = wl.tid()\\n    x[i] = nope\\n")
except wl.KernelCompileError as exc:
    err = exc
print(err)"""),
    ("md", "Check the result: the error points at cell line 4 (the magic line is 1, `def` is 2)."),
    ("code", """# check
assert err.line == 4"""),
]

NOTEBOOKS["02_memory_coalescing"] = [
    ("md", """# 02 · Memory coalescing

A warp's load instruction is one **request**; the memory system serves it in
32-byte **sectors**. When the 32 lanes read 32 consecutive `float32`
(128 bytes), that is 4 sectors per request — the ideal for 4-byte elements.
The ideal is the bytes a request asks for divided by 32: 4 sectors for
4-byte elements, 16 for the 16-byte `vec4` elements below; a line above its
ideal is not coalesced. Strided or transposed access touches more sectors for
the same useful data. The simulator counts requests and sectors per source
line, as Nsight Compute does."""),
    ("code", SETUP + """
from warp_lab.notebook.results import memory_lines   # {python line: requests, sectors, ...}"""),
    ("code", """%%warp_kernel --show source,ptx
def copy_contiguous(src: wl.array(dtype=wl.float32), dst: wl.array(dtype=wl.float32)):
    i = wl.tid()
    v = src[i]
    dst[i] = v

def copy_strided(src: wl.array(dtype=wl.float32), dst: wl.array(dtype=wl.float32), stride: int):
    i = wl.tid()
    v = src[i * stride]
    dst[i] = v"""),
    ("code", """n = 1 << 20                                 # 1M threads
src = np.arange(4 * n, dtype=np.float32)
dst = np.zeros(n, dtype=np.float32)

r1 = wl.launch(copy_contiguous, dim=n, inputs=[src, dst], device="sim")
copied = dst.copy()
mem1 = memory_lines(r1)

rows, strided = {}, {}
for stride in (1, 2, 4):
    r = wl.launch(copy_strided, dim=n, inputs=[src, dst, stride], device="sim")
    strided[stride] = dst.copy()
    load_line = min(memory_lines(r))            # `v = src[i * stride]` comes first
    rows[stride] = memory_lines(r)[load_line]["sectors_per_request"]
print("sectors per request by stride:", rows)
r1"""),
    ("md", """Check the result: the copies are right, and each doubling of the stride
doubles the sectors per request (4 → 8 → 16): the same 128 useful bytes per
warp cost 2× and 4× the memory traffic."""),
    ("code", """# check
np.testing.assert_array_equal(copied, src[:n])
for stride, out in strided.items():
    np.testing.assert_array_equal(out, src[: n * stride : stride])
assert rows == {1: 4.0, 2: 8.0, 4: 16.0}
assert {m["sectors_per_request"] for m in mem1.values()} == {4.0}"""),
    ("md", """## Wider loads: one `vec4` per lane

A `wl.vec4` element is 16 bytes, and warp_lab reads or writes it with one
vector instruction, as CUDA does for `float4`: `ld.global.nc.v4` (`.nc`: an
array the kernel never writes is read through the read-only data cache; SASS
`LDG.E.128.CONSTANT`) and `st.global.v4`. A warp's request then covers 512
bytes: the same data moves in a quarter of the requests, by a quarter of the
threads. 512 bytes are 16 sectors, so 16 sectors per request is the ideal
here, as coalesced as the 4 of the `float32` copy (4 × 32 = 128 bytes)."""),
    ("code", """%%warp_kernel --show source,ptx
def copy_vec4(src: wl.array(dtype=wl.vec4), dst: wl.array(dtype=wl.vec4)):
    i = wl.tid()
    v = src[i]
    dst[i] = v"""),
    ("code", """flat = np.zeros(4 * n, dtype=np.float32)
r_scalar = wl.launch(copy_contiguous, dim=4 * n, inputs=[src, flat], device="sim")
quads = np.zeros((n, 4), dtype=np.float32)           # n elements of 4 floats each
r_vec4 = wl.launch(copy_vec4, dim=n, inputs=[src.reshape(n, 4), quads], device="sim")
by_kind = {"float32": memory_lines(r_scalar), "vec4": memory_lines(r_vec4)}
{kind: list(lines.values())[0] for kind, lines in by_kind.items()}"""),
    ("md", """Check the result: both copies are right and move the same sectors per side
(4n floats × 4 bytes / 32 bytes = 524,288), the `vec4` copy in a quarter of
the requests (32,768 instead of 131,072: one per warp), with one vector load:
16 sectors per request, each request at its ideal (bytes per request / 32)."""),
    ("code", """# check
np.testing.assert_array_equal(flat, src)
np.testing.assert_array_equal(quads.ravel(), src)
for kind, requests, size in (("float32", 4 * n // 32, 4), ("vec4", n // 32, 16)):
    for line in by_kind[kind].values():
        assert line["requests"] == requests and line["sectors"] == 4 * n * 4 // 32
        assert line["sectors_per_request"] == 32 * size / 32   # ideal: 32 lanes x size / 32 B
vec4_ptx = wl.compile(copy_vec4).ptx
assert "ld.global.nc.v4.b32" in vec4_ptx and "st.global.v4.b32" in vec4_ptx"""),
    ("md", """## Transposing a matrix

Reading rows and writing columns makes one side of the copy strided by the
row length: each lane of a warp writes a different 128-byte row."""),
    ("code", """%%warp_kernel --show source
def transpose_naive(a: wl.array(dtype=wl.float32, ndim=2), t: wl.array(dtype=wl.float32, ndim=2)):
    i, j = wl.tid()
    v = a[i, j]
    t[j, i] = v"""),
    ("code", """m = np.arange(1024 * 1024, dtype=np.float32).reshape(1024, 1024)
t = np.zeros_like(m)
rt = wl.launch(transpose_naive, dim=m.shape, inputs=[m, t], device="sim")
mem = memory_lines(rt)
load, store = sorted(mem)
print({ln: round(v["sectors_per_request"], 2) for ln, v in mem.items()})
rt"""),
    ("md", """Check the result: the transpose is right; the row loads take 4 sectors
per request (coalesced), the column stores 32 (one sector per lane)."""),
    ("code", """# check
np.testing.assert_array_equal(t, m.T)
assert mem[load]["sectors_per_request"] == 4.0
assert mem[store]["sectors_per_request"] == 32.0"""),
]

NOTEBOOKS["03_reduction_and_banks"] = [
    ("md", """# 03 · Reductions and shared-memory bank conflicts

Summing an array: first every thread adds into one global counter with an
atomic (correct but serialised), then a **tree** in shared memory with
`wl.syncthreads()` between steps, then the last 32 values inside a warp with
**shuffles**, which need no shared memory at all."""),
    ("code", SETUP),
    ("code", """%%warp_kernel --show source,ptx,resources
def sum_atomic(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    i = wl.tid()
    wl.atomic_add(out, 0, x[i])

def sum_tree(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    buf = wl.shared_array(256, wl.float32)
    t = wl.thread_idx.x
    buf[t] = x[wl.tid()]
    wl.syncthreads()
    s = 128
    while s > 0:
        if t < s:
            buf[t] = buf[t] + buf[t + s]
        wl.syncthreads()
        s = s // 2
    if t == 0:
        wl.atomic_add(out, 0, buf[0])

def sum_shuffle(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    v = x[wl.tid()]
    offset = 16
    while offset > 0:
        v = v + wl.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset = offset // 2
    if wl.lane_id() == 0:
        wl.atomic_add(out, 0, v)"""),
    ("code", """n = 1 << 19                                 # 524,288 elements
x = (np.arange(n) % 7).astype(np.float32)   # small integers: every order sums exactly
expected = float(x.sum())
results, sums = {}, {}
for k in (sum_atomic, sum_tree, sum_shuffle):
    out = np.zeros(1, dtype=np.float32)
    results[k.name] = wl.launch(k, dim=n, inputs=[x, out], block_dim=256, device="sim")
    sums[k.name] = float(out[0])
print("sums:", sums, "expected:", expected)
results["sum_tree"]"""),
    ("md", "Check the result: all three reductions give the exact sum."),
    ("code", """# check
assert sums == {"sum_atomic": expected, "sum_tree": expected, "sum_shuffle": expected}"""),
    ("md", """## The block size chosen at launch: dynamic shared memory

`sum_tree` fixes its block at 256 threads because `wl.shared_array` needs a
compile-time size. CUDA's answer is `extern __shared__`: shared memory whose
size the *launch* gives each block. `wl.dynamic_shared_array(wl.float32)` is
that buffer as a 1-D array; `wl.launch(..., shared_mem=bytes)` sizes it and
`len(buf)` reads the size back (PTX `%dynamic_smem_size`). The same compiled
kernel then runs with any power-of-two block."""),
    ("code", """%%warp_kernel --show source,ptx
def sum_tree_any(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    buf = wl.dynamic_shared_array(wl.float32)
    t = wl.thread_idx.x
    buf[t] = x[wl.tid()]
    wl.syncthreads()
    s = wl.block_dim.x // 2
    while s > 0:
        if t < s:
            buf[t] = buf[t] + buf[t + s]
        wl.syncthreads()
        s = s // 2
    if t == 0:
        wl.atomic_add(out, 0, buf[0])"""),
    ("code", """any_sums = {}
for block in (64, 128, 512):
    out = np.zeros(1, dtype=np.float32)
    wl.launch(sum_tree_any, dim=n, inputs=[x, out], block_dim=block,
              shared_mem=block * 4, device="sim")      # 4 bytes per float32
    any_sums[block] = float(out[0])
any_sums"""),
    ("md", "Check the result: every block size gives the exact sum."),
    ("code", """# check
assert any_sums == {64: expected, 128: expected, 512: expected}"""),
    ("md", """## What does each version cost?

The simulator counts **thread-instructions**: one instruction executed by
one thread (a warp instruction with 32 active lanes counts 32). That is a
measure of *work*, not of *time*. By that count `sum_atomic` is the cheapest —
each thread does a load and one `atom.global.add`, nothing else.

The count hides what matters for atomics: how many of them hit **the same
address**. Every `atom.global.add` on `out[0]` is a read-modify-write of the
same 4 bytes; the GPU performs those in the L2 cache **one after another**
(each must see the previous result), however many threads issue them at
once. So the number of same-address atomics is the length of a chain of L2
updates that cannot overlap. Below, `atomics` counts the thread-level atomic
operations, read from the simulator's per-PTX-line counts
(`r.metrics.per_ptx_line`) at the `atom`/`red` instructions of the PTX."""),
    ("code", """def atomics(r):
    \"\"\"Thread-level atomic operations a launch executed (PTX atom.* / red.* lines).\"\"\"
    ptx = r.compiled.ptx.splitlines()
    def opcode(line):                      # PTX lines are 1-based; skip a @%p predicate
        words = [w for w in ptx[line - 1].split() if not w.startswith("@")]
        return words[0] if words else ""
    return sum(count for line, count in r.metrics.per_ptx_line.items()
               if opcode(line).startswith(("atom.", "red.")))

cost = {name: {"thread-instructions": sum(r.metrics.per_ptx_line.values()),
               "atomics on out[0]": atomics(r)}
        for name, r in results.items()}
for name, c in cost.items():
    print(f"{name:12s}", c)
work = {name: c["thread-instructions"] for name, c in cost.items()}
ratio = work["sum_shuffle"] / work["sum_atomic"]
print(f"sum_shuffle executes {ratio:.2f}x the thread-instructions of sum_atomic")"""),
    ("md", """Check the result: one atomic per thread (524,288), one per block (2048
blocks of 256) for the tree, one per warp (16,384) for the shuffles."""),
    ("code", """# check
assert {name: c["atomics on out[0]"] for name, c in cost.items()} == \\
    {"sum_atomic": n, "sum_tree": n // 256, "sum_shuffle": n // 32}
assert cost["sum_atomic"]["thread-instructions"] < cost["sum_shuffle"]["thread-instructions"]
assert 1.5 < ratio < 2.0          # the text below says: less than twice as many"""),
    ("md", """`sum_atomic` executes the fewest instructions but queues 524,288
updates of one address; the shuffle version executes more instructions (less
than twice as many: the ratio printed above) but only 16,384 atomics, the
tree 2048.
On a GPU the serialised atomics dominate as `n` grows — time them with
`device="cuda"` where a GPU is present. (Instruction counts
on the simulator are not times: it executes PTX on the CPU.)"""),
    ("md", """## Integers: one instruction for the whole warp

`sum_shuffle` adds floats, so it needs the chain of five shuffles. For
**32-bit integers** GPUs from sm_80 (Ampere) on have a warp reduction in
hardware: `wl.reduce_add_sync(mask, v)` is one PTX `redux.sync` instruction
and gives every lane in `mask` the sum of `v` over those lanes (CUDA's
`__reduce_add_sync`; `reduce_min/max/and/or/xor_sync` likewise). It needs
`--arch sm_80` or newer: for an older arch the call is a compile error.

One level up, `wl.syncthreads_count(pred)` is a `wl.syncthreads()` that
also **counts**: every thread of the block gets the number of threads whose
`pred` was true (PTX `bar.red.popc`, CUDA's `__syncthreads_count`).

Below, three ways to count on int32 data: a warp sum with the shuffle chain
(`shfl_xor_sync`, a butterfly: every lane ends with the total), the same sum
with `reduce_add_sync`, and a block count of the elements above 3. Compare
the SASS panes: five `SHFL.BFLY` and their adds against one `REDUX.SUM`."""),
    ("code", """%%warp_kernel --arch sm_80 --show source,sass
def int_sum_shuffle(x: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.int32)):
    v = x[wl.tid()]
    offset = 16
    while offset > 0:
        v = v + wl.shfl_xor_sync(wl.FULL_MASK, v, offset)
        offset = offset // 2
    if wl.lane_id() == 0:
        wl.atomic_add(out, 0, v)

def int_sum_redux(x: wl.array(dtype=wl.int32), out: wl.array(dtype=wl.int32)):
    v = wl.reduce_add_sync(wl.FULL_MASK, x[wl.tid()])
    if wl.lane_id() == 0:
        wl.atomic_add(out, 0, v)

def count_above(x: wl.array(dtype=wl.int32), limit: int, out: wl.array(dtype=wl.int32)):
    c = wl.syncthreads_count(x[wl.tid()] > limit)   # the whole block's count, in every thread
    if wl.thread_idx.x == 0:
        wl.atomic_add(out, 0, c)"""),
    ("code", """xi = (np.arange(n) % 7).astype(np.int32)
int_results = {}
for k, args in ((int_sum_shuffle, []), (int_sum_redux, []), (count_above, [3])):
    out = np.zeros(1, dtype=np.int32)
    wl.launch(k, dim=n, inputs=[xi, *args, out], block_dim=256, device="sim")
    int_results[k.name] = int(out[0])
sass = {k.name: wl.compile(k, arch="sm_80").sass for k in (int_sum_shuffle, int_sum_redux)}
int_results"""),
    ("md", """The same reduction on floats does not compile: `redux.sync` has no float
form, so the compiler points at the call and suggests the shuffle loop."""),
    ("code", """# raises: reduce_add_sync of float32 values
%%warp_kernel --arch sm_80
def float_sum_redux(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    out[0] = wl.reduce_add_sync(wl.FULL_MASK, x[wl.tid()])"""),
    ("md", """Check the result: both warp sums equal numpy's, the block count equals
`(x > 3).sum()`; the shuffle version's SASS has five `SHFL.BFLY` and no
`REDUX`, the `reduce_add_sync` version one `REDUX.SUM` and no shuffle; the
float version is refused."""),
    ("code", """# check
assert int_results == {"int_sum_shuffle": int(xi.sum()), "int_sum_redux": int(xi.sum()),
                       "count_above": int((xi > 3).sum())}
assert sass["int_sum_shuffle"].count("SHFL.BFLY") == 5 and "REDUX" not in sass["int_sum_shuffle"]
assert sass["int_sum_redux"].count("REDUX.SUM") == 1 and "SHFL" not in sass["int_sum_redux"]
try:
    wl.compile(float_sum_redux, arch="sm_80")
    float_error = None
except wl.KernelCompileError as exc:
    float_error = exc
assert float_error.line == 3 and "32-bit integers" in str(float_error)"""),
    ("md", """When to use which: `reduce_*_sync` for 32-bit integer sums, minima,
maxima and bit operations on sm_80+ (one instruction instead of five
shuffles and adds); shuffles for floats, 64-bit values and older GPUs;
`syncthreads_count` (and `syncthreads_and`/`syncthreads_or`) when the
block needs a count or a vote at a barrier it needs anyway."""),
    ("md", """## Bank conflicts

Shared memory has 32 banks of 4 bytes; a warp's access is conflict-free when
its 32 lanes hit 32 different banks. Reading a 32×32 `float32` tile **by
column** puts all 32 lanes in the same bank (32-way conflict). One padding
column (`33` instead of `32`) shifts each row by one bank and removes it.

Each block of 32×32 threads reads its tile of `a` by rows (coalesced),
then writes the tile's columns as rows of `t` at the mirrored block position
(block `(bx, by)` of `a` is block `(by, bx)` of `t`), so the global store is
coalesced too; the transposing happens in shared memory."""),
    ("code", """%%warp_kernel --show source
def tile_transpose(a: wl.array(dtype=wl.float32, ndim=2), t: wl.array(dtype=wl.float32, ndim=2)):
    tile = wl.shared_array((32, 32), wl.float32)
    i, j = wl.tid()
    tx = wl.thread_idx.x
    ty = wl.thread_idx.y
    tile[ty, tx] = a[i, j]
    wl.syncthreads()
    t[wl.block_idx.x * 32 + ty, wl.block_idx.y * 32 + tx] = tile[tx, ty]

def tile_transpose_padded(a: wl.array(dtype=wl.float32, ndim=2), t: wl.array(dtype=wl.float32, ndim=2)):
    tile = wl.shared_array((32, 33), wl.float32)
    i, j = wl.tid()
    tx = wl.thread_idx.x
    ty = wl.thread_idx.y
    tile[ty, tx] = a[i, j]
    wl.syncthreads()
    t[wl.block_idx.x * 32 + ty, wl.block_idx.y * 32 + tx] = tile[tx, ty]"""),
    ("code", """m = np.arange(1024 * 1024, dtype=np.float32).reshape(1024, 1024)   # 32 x 32 blocks
conflicts, transposed, runs = {}, {}, {}
for k in (tile_transpose, tile_transpose_padded):
    t = np.zeros_like(m)
    runs[k.name] = wl.launch(k, dim=m.shape, inputs=[m, t], block_dim=1024, device="sim")
    transposed[k.name] = t
    conflicts[k.name] = sum(runs[k.name].metrics.bank_conflicts.values())  # extra wavefronts
print("bank conflicts (extra shared-memory wavefronts):", conflicts)
runs["tile_transpose"]          # the unpadded one: its conflicts per line"""),
    ("md", """The view above is the unpadded `tile_transpose`'s: its bank conflicts
are on the line that reads `tile[tx, ty]`, a column of the tile. A conflict is
a **wavefront** (one pass through the 32 banks) beyond the one the access
needs: the column read needs 32 wavefronts per warp request, so 31 conflicts
per request, 992 for a block's 32 warps, 1,015,808 for the 1024 blocks (Nsight Compute counts them the same way:
"bank conflicts" and "wavefronts per request"). Displaying
`runs["tile_transpose_padded"]` shows the same table with 0 on every line.
The "simulated in … ms" of the two views is CPU simulator time, not GPU
time: compare the wavefronts, not those times (time the kernels with
`device="cuda"` on a GPU)."""),
    ("code", """runs["tile_transpose_padded"]   # the padded one: the same lines, no conflicts"""),
    ("md", """Check the result: both transpose the 1024×1024 matrix and a
64×96 matrix (2×3 blocks, each tile to its mirrored place); only the unpadded
one has bank conflicts."""),
    ("code", """# check
for t in transposed.values():
    np.testing.assert_array_equal(t, m.T)
big = np.arange(64 * 96, dtype=np.float32).reshape(64, 96)
for k in (tile_transpose, tile_transpose_padded):
    big_t = np.zeros((96, 64), dtype=np.float32)
    wl.launch(k, dim=big.shape, inputs=[big, big_t], block_dim=1024, device="sim")
    np.testing.assert_array_equal(big_t, big.T)
assert conflicts["tile_transpose"] == 1024 * 32 * 31 and conflicts["tile_transpose_padded"] == 0"""),
]

NOTEBOOKS["04_occupancy_registers"] = [
    ("md", """# 04 · Occupancy and register pressure

**Occupancy** is the fraction of an SM's warp slots that resident warps
fill. Each block needs registers (registers per thread × threads), shared
memory and a block slot; whichever runs out first **limits** how many
blocks fit. warp_lab's model gives the same answers as NVIDIA's
`cuda_occupancy.h`."""),
    ("code", SETUP + """
from warp_lab.analysis import occupancy, occupancy_curve, suggest_block_size
from warp_lab.notebook.widgets import OccupancyWidget, register_heat"""),
    ("md", """A kernel that needs many registers: every thread works on 64 values
(`acc`, a `wl.local_array`) with loops of constant trip counts. A loop
with constant bounds that indexes a local array with its variable is
unrolled completely (as nvcc does), so every index is a constant and each
`acc[k]` becomes a **register**: the resource card below shows more than 64
registers per thread and no stack frame (no `ld.local`/`st.local` in the
PTX). Indexing `acc` with a run-time value would keep it in per-thread
*local memory* instead."""),
    ("code", """%%warp_kernel --arch sm_80 --show source,resources,occupancy --block-dim 256
def many_live(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    i = wl.tid()
    n = x.shape[0]
    v = x[i]
    acc = wl.local_array(64, wl.float32)
    for k in range(64):
        acc[k] = x[(i + k) % n]
    for r in range(8):
        for k in range(64):
            acc[k] = acc[k] * v + 0.25
    s = 0.0
    for k in range(64):
        s += acc[k] * acc[63 - k]
    y[i] = s"""),
    ("code", """ck = wl.compile(many_live, arch="sm_80")
occ = occupancy(ck.resources, block_size=256)
print(ck.resources.registers, "registers per thread ->", occ)"""),
    ("md", """Check the result: more than 64 registers per thread, no spills, no stack
frame (`acc` lives in registers), and registers are what limits occupancy."""),
    ("code", """# check
assert ck.resources.registers > 64 and ck.resources.spill_stores == 0
assert ck.resources.stack_frame == 0 and "ld.local" not in ck.ptx   # acc in registers
assert occ.occupancy < 0.5 and occ.limiters == ("registers",)"""),
    ("md", """## Occupancy against block size

Move the slider: the occupancy and the limiting factor come from the
model, for this kernel's resources. `suggest_block_size` picks the block
size with the highest occupancy and, of several that reach it, the
largest, as CUDA's `cudaOccupancyMaxPotentialBlockSize` does: it tries
sizes from 1024 down. Here 128 reaches the same occupancy as its pick;
a smaller block is often the better choice then (more blocks to spread
over the SMs, cheaper `syncthreads`), which occupancy does not measure."""),
    ("code", """w = OccupancyWidget(ck, arch="sm_80", block_size=256)
w.block_size.value = 128
best = suggest_block_size(ck)
print(best)
w"""),
    ("md", "Check the result: the widget and the suggestion agree with the model."),
    ("code", """# check
assert w.occupancy == occupancy(ck.resources, block_size=128)
assert max(o.occupancy for o in occupancy_curve(ck)) == best.occupancy.occupancy
assert occupancy(ck.resources, block_size=128).occupancy == best.occupancy.occupancy"""),
    ("md", """## Where the registers go

nvdisasm's register life ranges give the registers live at each SASS
instruction; the most live at any instruction of a Python line is that
line's **register pressure** (the `live regs` column beside the Python and
SASS panes). No line can need more than ptxas allocated."""),
    ("code", """per_line, per_sass_line = register_heat(ck)
print("live registers per Python line:", dict(sorted(per_line.items())))"""),
    ("md", "Check the result: no line needs more registers than ptxas allocated."),
    ("code", """# check
assert per_line and max(per_line.values()) <= ck.resources.registers
assert max(per_sass_line.values()) >= max(per_line.values())   # lines are a subset"""),
    ("md", """## Capping registers: occupancy against spills

`--maxrregcount N` asks `ptxas` for at most N registers per thread (CUDA 13's
`ptxas` raises any cap below 24 to 24). With fewer registers per thread
more warps fit on an SM, so occupancy rises — but the values that no longer
fit **spill**: `ptxas` stores them to *local memory* (per-thread memory in
DRAM, cached in L1/L2) and loads them back when needed. Every spill is an
extra memory instruction. The resource card below shows the spill bytes
and `--diff previous` what changed against the uncapped cell."""),
    ("code", """%%warp_kernel --arch sm_80 --maxrregcount 64 --show resources,occupancy --block-dim 256 --diff previous
def many_live(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    i = wl.tid()
    n = x.shape[0]
    v = x[i]
    acc = wl.local_array(64, wl.float32)
    for k in range(64):
        acc[k] = x[(i + k) % n]
    for r in range(8):
        for k in range(64):
            acc[k] = acc[k] * v + 0.25
    s = 0.0
    for k in range(64):
        s += acc[k] * acc[63 - k]
    y[i] = s"""),
    ("md", """The same what-if for several caps, side by side. Spill stores/loads are
the bytes `ptxas -v` reports: what the spill instructions in the compiled
code store and load, counted once in the code (a loop that spills runs them
many times). A cap of 16 would give 24 registers: `ptxas` does not go lower."""),
    ("code", """caps = {}
for cap in (None, 64, 32):
    c = wl.compile(many_live, arch="sm_80", maxrregcount=cap) if cap else ck
    caps[cap] = (c.resources, occupancy(c.resources, block_size=256).occupancy)
    r = c.resources
    print(f"cap {str(cap):>4}: {r.registers:3d} registers, spill stores {r.spill_stores:5d} B, "
          f"spill loads {r.spill_loads:5d} B, occupancy {caps[cap][1]:.0%}")"""),
    ("md", """Check the result: each cap lowers the registers, raises occupancy and
adds spills. At 64 registers this is the textbook case — 256 threads × 64
registers = 16 384 registers per block; an SM's 65 536 registers hold 4
blocks = 32 of 64 warps = **50 %**."""),
    ("code", """# check
(r0, o0), (r64, o64), (r32, o32) = caps[None], caps[64], caps[32]
assert r0.registers > 64 and r64.registers <= 64 and r32.registers <= 32
assert r0.spill_stores == 0 < r64.spill_stores < r32.spill_stores
assert r0.spill_loads == 0 < r64.spill_loads < r32.spill_loads
assert o0 < o64 == 0.5 < o32"""),
    ("md", """Which is faster depends on the kernel: higher occupancy hides memory
latency better, but each spill adds local-memory traffic. Here a cap of 32
turns almost every `acc[k]` update into a load and a store — usually a bad
trade; a cap that removes a few registers with few spills can be a good one.
Measure on a GPU (`device="cuda"`) before keeping a cap.

The simulator executes the PTX, which does not depend on the cap (spills
happen in `ptxas`'s SASS), so the capped kernel computes the same values:"""),
    ("code", """capped = wl.compile(many_live, arch="sm_80", maxrregcount=32)
x = np.linspace(-1, 1, 1 << 14, dtype=np.float32)
y = np.zeros_like(x)
wl.launch(capped, dim=x.size, inputs=[x, y], device="sim")

v = x.astype(np.float64)                      # numpy reference
acc = [np.roll(v, -k) for k in range(64)]     # acc[k] = x[(i + k) % n]
for _ in range(8):
    acc = [a * v + 0.25 for a in acc]
expected = sum(acc[k] * acc[63 - k] for k in range(64))"""),
    ("md", "Check the result against numpy:"),
    ("code", """# check
np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-3)"""),
]

NOTEBOOKS["05_branch_divergence"] = [
    ("md", """# 05 · Branch divergence

A warp executes one instruction for all its lanes. When lanes of one warp
take different sides of a branch, the warp runs both sides one after the
other with part of its lanes masked off: **divergence**. **SIMT efficiency**
(active lanes / 32, averaged over issued instructions) measures it.

The loops below run `steps` times, a value known only at launch: with a
constant trip count LLVM would unroll both loops and turn the branch into
`selp` (predication), and the divergence would vanish from the PTX."""),
    ("code", SETUP),
    ("code", """%%warp_kernel --show source,ptx
def by_lane(x: wl.array(dtype=wl.float32), steps: int):
    i = wl.tid()
    v = x[i]
    if i % 2 == 0:
        for k in range(steps):
            v = v * 0.5 + 1.0
    else:
        for k in range(steps):
            v = v * 2.0 - 1.0
    x[i] = v

def by_warp(x: wl.array(dtype=wl.float32), steps: int):
    i = wl.tid()
    v = x[i]
    if (i // 32) % 2 == 0:
        for k in range(steps):
            v = v * 0.5 + 1.0
    else:
        for k in range(steps):
            v = v * 2.0 - 1.0
    x[i] = v"""),
    ("code", """def reference(x, even, steps):
    v = x.astype(np.float32).copy()
    for _ in range(steps):   # * 0.5 and * 2 are exact: fused or not, the same float32
        v = np.where(even, v * np.float32(0.5) + np.float32(1), v * np.float32(2) - np.float32(1))
    return v

n, steps = 1 << 20, 16
x0 = np.linspace(0, 1, n, dtype=np.float32)
eff, divergent, outputs, runs = {}, {}, {}, {}
for k, even in ((by_lane, np.arange(n) % 2 == 0), (by_warp, (np.arange(n) // 32) % 2 == 0)):
    x = x0.copy()
    r = runs[k.name] = wl.launch(k, dim=n, inputs=[x, steps], device="sim")
    outputs[k.name] = (x, reference(x0, even, steps))
    eff[k.name] = float(np.nanmean(r.metrics.simt_efficiency))   # mean over warps
    divergent[k.name] = r.metrics.divergent_branches
print("SIMT efficiency:", {k: f"{v:.0%}" for k, v in eff.items()}, "divergent branches:", divergent)
runs["by_lane"]                 # the divergent one: its lanes and branches per line"""),
    ("md", """The view above is `by_lane`'s launch, the divergent one. Its **Per line**
table says where the lanes went: for each Python line, the thread-instructions
executed, the warp-instructions issued, the **active lanes** per
warp-instruction (out of 32: SIMT efficiency line by line) and the
**divergent branches** (warp-level branches whose lanes split). Look at line 5,
`if i % 2 == 0:`: one divergent branch per warp; then at the two loop bodies,
lines 7 and 10: each warp issues both, each with 16 of its 32 lanes (50 %),
where the lines before and after the branch run with all 32. The histogram below the
table is the same story per warp. `runs["by_warp"]` shows the other kernel:
32 lanes on every line, no divergent branch.

The same numbers are in `r.line_metrics` (per Python line; the simulator's own
`r.metrics` attributes are per PTX line)."""),
    ("code", """lines = {k: runs[k].line_metrics for k in runs}   # {cell line: LineStats}
for k, body in (("by_lane", 7), ("by_warp", 18)):  # their lines v = v * 0.5 + 1.0
    print(f"{k} line {body}: {lines[k][body].active_lanes:.1f} active lanes; divergent "
          f"branches: {sum(st.divergent_branches for st in lines[k].values())}")"""),
    ("md", """Check the result: both kernels match numpy; `by_lane` splits every warp
once (32,768 warps), on its `if` line: its loops run with 16 of 32 lanes each, the
code before and after the branch with all 32, so the whole kernel lands
between 50 % and 100 % (the value printed above); `by_warp` never splits."""),
    ("code", """# check
for got, want in outputs.values():
    np.testing.assert_array_equal(got, want)
assert divergent == {"by_lane": n // 32, "by_warp": 0}   # one split per warp, or none
assert eff["by_warp"] > 0.99                             # every warp takes one side
assert 0.5 < eff["by_lane"] < 0.75                       # loops at half, the rest at full
assert lines["by_lane"][5].divergent_branches == n // 32          # on `if i % 2 == 0:`
assert lines["by_lane"][7].active_lanes == lines["by_lane"][10].active_lanes == 16
assert all(st.active_lanes == 32 for st in lines["by_warp"].values())"""),
]

NOTEBOOKS["06_debugging"] = [
    ("md", """# 06 · Debugging on the simulator

The simulator checks what a GPU silently gets wrong: **memcheck** catches
out-of-bounds accesses (with the thread and your source line), integer
division by zero and threads whose stores to one element overwrite each
other, **racecheck** catches shared-memory races between threads
that lack a `wl.syncthreads()`, **initcheck** reads of shared memory no
thread wrote, and a loop that can never end stops with an `infinite_loop`
finding instead of hanging. Your arrays are never corrupted by a caught
access. memcheck and the barrier check run on every launch; racecheck and
initcheck join them for a kernel that uses shared memory (the default,
`checks="auto"`), and `checks=` picks checks by hand."""),
    ("code", SETUP),
    ("code", """%%warp_kernel --show source
def off_by_one(x: wl.array(dtype=wl.float32), n: int):
    i = wl.block_idx.x * wl.block_dim.x + wl.thread_idx.x
    if i <= n:
        x[i] = 1.0"""),
    ("code", """x = np.zeros(100, dtype=np.float32)
r = wl.launch(off_by_one, grid=(1, 1, 1), block=(128, 1, 1), inputs=[x, 100],
              device="sim", checks=("memcheck",))
print(*r.findings, sep="\\n")
r"""),
    ("md", """The launch is marked **PARTIAL**: memcheck stopped the simulation at the
faulting write (thread 100 writing `x[100]`, one element past the end: the
finding says `x[100] is past the end of x (100 elements)`), and
the simulator copied nothing back — `x` is exactly as it was before the
launch, even the elements that threads 0..99 wrote. On a GPU the same bug
could silently overwrite whatever lies after `x`.

Check the result: one finding, on cell line 5 (`x[i] = 1.0`), and `x`
untouched."""),
    ("code", """# check
assert r.findings, "memcheck should catch x[100]"
assert r.findings[0].kind == "out_of_bounds" and r.findings[0].source_line == 5
assert "x[100] is past the end of x (100 elements)" in r.findings[0].message
assert r.partial and not x.any()"""),
    ("md", """## Dividing by zero

Integer division by zero is undefined in CUDA: the GPU raises no error and
the quotient is whatever the hardware leaves, so one zero in the data
silently gives a wrong value. memcheck reports it as a `division_by_zero`
finding at the line of the division, naming the first thread whose divisor
is 0. Unlike an out-of-bounds access, the launch goes on to the end."""),
    ("code", """%%warp_kernel --show source
def ratios(a: wl.array(dtype=wl.int32), b: wl.array(dtype=wl.int32), q: wl.array(dtype=wl.int32)):
    i = wl.tid()
    q[i] = a[i] // b[i]"""),
    ("code", """a = np.arange(-20, 20, 5, dtype=np.int32)
b = np.array([3, -2, 5, 0, 7, 4, 1, 2], dtype=np.int32)   # b[3] is 0
q = np.zeros_like(a)
r = wl.launch(ratios, dim=len(a), inputs=[a, b, q], device="sim", checks=("memcheck",))
print(*r.findings, sep="\\n")"""),
    ("md", """Check the result: one `division_by_zero` finding on cell line 4 for
thread 3, the launch complete, and every quotient with a non-zero divisor
equal to numpy's floor division (`q[3]` is undefined, so it is not checked)."""),
    ("code", """# check
assert [(f.kind, f.source_line, f.thread) for f in r.findings] == [("division_by_zero", 4, (3, 0, 0))]
assert not r.partial
ok = b != 0
np.testing.assert_array_equal(q[ok], a[ok] // b[ok])"""),
    ("md", """## Many threads, one element

A first dot product adds every thread's product into `out[0]`. In Python the
threads would run one after another; on a GPU they run at once: each reads
`out[0]` (0), adds its product and stores, and only one store is kept. memcheck
reports a `global_conflict` finding when threads of one store write different
values to the same element, with the element, the line and the fix."""),
    ("code", """%%warp_kernel --show source
def dot(a: wl.array(dtype=wl.float32), b: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    i = wl.tid()
    out[0] += a[i] * b[i]

def dot_atomic(a: wl.array(dtype=wl.float32), b: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    i = wl.tid()
    wl.atomic_add(out, 0, a[i] * b[i])"""),
    ("code", """a = np.random.default_rng(3).random(3000, dtype=np.float32)
b = np.random.default_rng(4).random(3000, dtype=np.float32)
out, out_atomic = np.zeros(1, np.float32), np.zeros(1, np.float32)
r = wl.launch(dot, dim=3000, inputs=[a, b, out], device="sim")
fixed = wl.launch(dot_atomic, dim=3000, inputs=[a, b, out_atomic], device="sim")
print(out[0], out_atomic[0], a.astype(np.float64) @ b)
print(*r.findings, sep="\\n")"""),
    ("md", """Check the result: one finding on cell line 4 naming `out[0]`, whose value is
a single thread's product; the `wl.atomic_add` version has no finding and matches
numpy's dot product."""),
    ("code", """# check
assert [(f.kind, f.source_line, f.details["index"]) for f in r.findings] == [("global_conflict", 4, (0,))]
assert "wl.atomic_add(out, 0, value)" in r.findings[0].message and out[0] in a * b
assert fixed.findings == []
np.testing.assert_allclose(out_atomic[0], a.astype(np.float64) @ b, rtol=1e-4)"""),
    ("md", """## A race

Each thread writes its slot of shared memory and reads its neighbour's.
Without a barrier between the write and the read, the neighbour may not
have written yet."""),
    ("code", """%%warp_kernel --show source
def neighbour(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    buf = wl.shared_array(128, wl.float32)
    t = wl.thread_idx.x
    buf[t] = x[wl.tid()]
    y[wl.tid()] = buf[(t + 1) % 128]"""),
    ("code", """x = np.arange(128, dtype=np.float32)
y = np.zeros_like(x)
r = wl.launch(neighbour, dim=128, inputs=[x, y], block_dim=128, device="sim")
print(r.checks)
print(*r.findings, sep="\\n")
r"""),
    ("md", """Check the result: `neighbour` uses shared memory, so racecheck ran without
being asked, and it reports a shared-memory race. The fix is a
`wl.syncthreads()` between `buf[t] = ...` and the read of `buf[(t + 1) % 128]`."""),
    ("code", """# check
assert "racecheck" in r.checks
assert any(f.kind.startswith("race") for f in r.findings), "racecheck should report the missing barrier"
"""),
    ("md", """## Reading shared memory nobody wrote

A 3-point blur through a shared tile: each block of 128 threads copies its
128 elements into `tile[1..128]`, then every thread averages three
neighbours. The first attempt forgets the **halo**, the two cells `tile[0]`
and `tile[129]` that hold the neighbours from the next blocks. On a GPU they
hold garbage; **initcheck** reports every read of shared memory that no
thread of the block wrote, and names the array and the line declaring it."""),
    ("code", """%%warp_kernel --show source
def blur_tile(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    tile = wl.shared_array(130, wl.float32)    # 128 elements + a halo cell each side
    t = wl.thread_idx.x
    i = wl.tid()
    tile[t + 1] = x[i]
    wl.syncthreads()
    y[i] = (tile[t] + tile[t + 1] + tile[t + 2]) / 3.0

def blur_tile_fixed(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    tile = wl.shared_array(130, wl.float32)
    t = wl.thread_idx.x
    i = wl.tid()
    tile[t + 1] = x[i]
    if t == 0:                                 # the left halo: 0 before the array
        left = 0.0
        if i > 0:
            left = x[i - 1]
        tile[0] = left
    if t == 127:                               # the right halo: 0 after it
        right = 0.0
        if i < x.shape[0] - 1:
            right = x[i + 1]
        tile[129] = right
    wl.syncthreads()
    y[i] = (tile[t] + tile[t + 1] + tile[t + 2]) / 3.0"""),
    ("code", """x = np.random.default_rng(6).random(512, dtype=np.float32)
y_bad, y_good = np.zeros_like(x), np.zeros_like(x)
bad = wl.launch(blur_tile, dim=512, inputs=[x, y_bad], block_dim=128, device="sim",
                checks=("memcheck", "initcheck"))
good = wl.launch(blur_tile_fixed, dim=512, inputs=[x, y_good], block_dim=128, device="sim",
                 checks=("memcheck", "initcheck"))
bad"""),
    ("md", """Initcheck reports once per instruction: the read of `tile[t]` (thread 0
reads the left halo) and of `tile[t + 2]` (thread 127 reads the right one),
both on cell line 8, named by element: `tile[0]` and `tile[129]`, the shared
array of line 3 (`print(*bad.findings)` names them the same way). The simulator fills
shared memory with zeros, so `blur_tile` happens to treat the ends of each
block as zeros; a GPU would not.

Check the result: two findings for the halo reads, none for the fixed
kernel, which matches numpy with zeros beyond the ends."""),
    ("code", """# check
assert sorted((f.kind, f.source_line) for f in bad.findings) == [("uninitialized", 8)] * 2
assert sorted(f.details["index"] for f in bad.findings) == [(0,), (129,)]
assert all("], the shared array of line 3, was not written" in str(f) for f in bad.findings)
assert good.findings == []
xp = np.concatenate([[0], x, [0]]).astype(np.float32)
np.testing.assert_allclose(y_good, (xp[:-2] + xp[1:-1] + xp[2:]) / np.float32(3), rtol=1e-6)"""),
    ("md", """## Past the end of a row: memcheck checks each axis

An index that runs past the end of one row of a 2-D tile lands in the next
row: the address is inside the tile, so a check of addresses alone (as
compute-sanitizer's memcheck on a GPU) sees nothing, and on a GPU the kernel
reads that row's data without a word. Below, each thread of a 4×8 tile
subtracts its right neighbour, and the last column (`c == 7`) reads
`tile[r, 8]`: for rows 0–2 that is the first element of the next row. On
the simulator memcheck also checks each index of a 2-D access against its
own axis, so the first thread past its row, thread (7, 0, 0), is caught at
the line and column, with the index, the axis and its size."""),
    ("code", """%%warp_kernel --show source
def row_diff(x: wl.array(dtype=wl.float32, ndim=2), y: wl.array(dtype=wl.float32, ndim=2)):
    tile = wl.shared_array((4, 8), wl.float32)
    r = wl.thread_idx.y
    c = wl.thread_idx.x
    tile[r, c] = x[r, c]
    wl.syncthreads()
    y[r, c] = tile[r, c + 1] - tile[r, c]    # c + 1 is 8 when c == 7: past the row"""),
    ("code", """x = np.arange(32, dtype=np.float32).reshape(4, 8)
y = np.zeros_like(x)
plain = wl.launch(row_diff, grid=(1, 1, 1), block=(8, 4, 1), inputs=[x, y], device="sim")
print(*plain.findings, sep="\\n")"""),
    ("md", """The simulator runs a copy of the kernel compiled with these checks; the
cell's PTX and SASS panes, and the code a GPU runs, have none. `debug=True`
(`%%warp_kernel --debug` for a cell, or `debug=True` in `wl.launch`) compiles
the checks into the kernel itself, on a GPU too: it traps at the same thread
and prints the index, the axis and its size."""),
    ("code", """checked = wl.launch(row_diff, grid=(1, 1, 1), block=(8, 4, 1), inputs=[x, y],
                    device="sim", debug=True)
print(*checked.findings, sep="\\n")"""),
    ("md", """Check the result: memcheck reports thread (7, 0, 0) (`tile[0, 8]`, inside
the tile, past row 0) on cell line 8, `index 8 out of bounds for axis 1 with
size 8`; `debug=True` traps at the same thread and line with the same words."""),
    ("code", """# check
assert [(f.kind, f.thread, f.source_line) for f in plain.findings] == \\
    [("out_of_bounds", (7, 0, 0), 8)]
assert "index 8 out of bounds for axis 1 with size 8" in plain.findings[0].message
assert "tile[0, 8] is outside tile (shape (4, 8))" in plain.findings[0].message
assert [(f.kind, f.thread, f.source_line) for f in checked.findings] == [("trap", (7, 0, 0), 8)]
assert "index 8 out of bounds for axis 1 with size 8" in checked.findings[0].details["printed"]"""),
    ("md", """## Waiting for another warp: a loop that never ends

Warp 1 publishes a value and raises a flag; thread 0 of warp 0 waits for
the flag with `while flag[0] == 0: pass`. In Python this works, but the
compiler may assume that **no other thread writes** `flag` while this
thread runs (CUDA C++ makes the same assumption for a plain, non-`volatile`
load). Nothing in the loop writes `flag`, so LLVM reads it once, before the
loop, and the loop spins on a register. In the PTX below, the load of
`flag` comes before the loop (LLVM left it on line 0; warp_lab gives it the
`while` line, its first user, and says so in a `// line 0 in LLVM's output`
comment), and the loop itself is one `bra.uni` that jumps to its own label,
on the `while` line. On a GPU the kernel hangs whenever thread 0 reads the flag before
warp 1 has set it, which no rule of the GPU prevents. Here it does so on the
simulator: thread 0 keeps coming back to the loop head with every register
unchanged, and the simulator stops with an `infinite_loop` finding at the
`while` line."""),
    ("code", """%%warp_kernel --show source,ptx
def wait_plain(flag: wl.array(dtype=wl.int32), data: wl.array(dtype=wl.float32),
               out: wl.array(dtype=wl.float32)):
    t = wl.thread_idx.x
    if t == 32:                          # warp 1: publish, then raise the flag
        data[0] = 42.0
        wl.threadfence()
        flag[0] = 1
    if t == 0:                           # warp 0: wait for the flag, then read
        while flag[0] == 0:
            pass
        out[0] = data[0]"""),
    ("code", """flag, data, out = np.zeros(1, np.int32), np.zeros(1, np.float32), np.zeros(1, np.float32)
r = wl.launch(wait_plain, dim=64, block_dim=64, inputs=[flag, data, out], device="sim")
print(*r.findings, sep="\\n")"""),
    ("md", """The fix reads and writes the flag with **atomic** accesses:
`wl.atomic_load(flag, 0)` and `wl.atomic_store(flag, 0, 1)` are
`ld.relaxed.gpu` / `st.relaxed.gpu` in the PTX (`.volatile` before sm_70),
accesses the compiler must perform every time because other threads may
write the same memory (CUDA's `cuda::atomic_ref` with
`memory_order_relaxed`). The `wl.threadfence()` calls order the data
against the flag on both sides."""),
    ("code", """%%warp_kernel --show source,ptx
def wait_atomic(flag: wl.array(dtype=wl.int32), data: wl.array(dtype=wl.float32),
                out: wl.array(dtype=wl.float32)):
    t = wl.thread_idx.x
    if t == 32:
        data[0] = 42.0
        wl.threadfence()
        wl.atomic_store(flag, 0, 1)
    if t == 0:
        while wl.atomic_load(flag, 0) == 0:
            pass
        wl.threadfence()
        out[0] = data[0]"""),
    ("code", """flag2, data2, out2 = np.zeros(1, np.int32), np.zeros(1, np.float32), np.zeros(1, np.float32)
fixed = wl.launch(wait_atomic, dim=64, block_dim=64, inputs=[flag2, data2, out2], device="sim")
fixed_ptx = wl.compile(wait_atomic).ptx
print([line.strip() for line in fixed_ptx.splitlines() if ".relaxed." in line])
fixed"""),
    ("md", """Check the result: the plain wait's loop is a branch to itself; it stops
with one `infinite_loop` finding for thread 0 on cell line 10 (the `while`),
the launch partial and `out` untouched; the atomic version has a `ld.relaxed.gpu` load and a
`st.relaxed.gpu` store, runs to the end and reads the published 42."""),
    ("code", """# check
import re
assert re.search(r"^(\\$L__BB\\w+):\\n(?:\\s*\\.loc.*\\n)*\\s*bra\\.uni\\s+\\1;", wl.compile(wait_plain).ptx, re.M)
assert [(f.kind, f.source_line, f.thread) for f in r.findings] == [("infinite_loop", 10, (0, 0, 0))]
assert r.partial and out[0] == 0
assert "ld.relaxed.gpu.global" in fixed_ptx and "st.relaxed.gpu.global" in fixed_ptx
assert fixed.findings == [] and not fixed.partial
assert out2[0] == 42.0 and flag2[0] == 1"""),
    ("md", """## Breakpoints and the 32 lanes of a warp

`debug(...)` prepares the same launch as `wl.launch(..., device="sim")` but
runs nothing until you ask. Set a breakpoint on a cell line, continue, and
look at one warp: every PTX register of its 32 lanes, with the values that
the last step changed highlighted. **Step back** replays the launch
deterministically to the previous instruction. Displaying the session gives
a panel with the same controls as buttons.

PTX registers are untyped bits; the panel, like the printed table, shows each one
as the type its instructions use (the table's `type` column): the `a = 2.0` of
the kernel below is an `f32` register and appears as 2 (hover it for the bits,
0x40000000), an integer register as an integer (hover it to see its bits as a
float), a 64-bit address (an array's pointer) in hex (hover: in decimal)."""),
    ("code", """from warp_lab.notebook.debugger import debug"""),
    ("code", """%%warp_kernel --show source,ptx
def scale(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), a: float):
    i = wl.tid()
    t = a * x[i]
    y[i] = t + 1.0"""),
    ("code", """x = np.arange(64, dtype=np.float32)
y = np.zeros_like(x)
dbg = debug(scale, dim=64, inputs=[x, y, 2.0], block_dim=32)
dbg.add_breakpoint(line=5)                # cell line 5: y[i] = t + 1.0
stop = dbg.cont()
print(stop)
while not dbg.where().text.startswith("st.global"):   # walk to the store
    dbg.step()
lanes = dbg.lanes()
stored = [name for name, raw in lanes.raw.items() if raw.dtype.itemsize == 4
          and np.array_equal(lanes.as_type(name, "f32"), 2 * x[:32] + 1)]
print("register holding y[i] for lanes 0..31:", stored)
dbg"""),
    ("md", """Check the result: the breakpoint stopped on line 5 in block 0 with all 32
lanes active, and some register holds `2 * x + 1` for lanes 0..31."""),
    ("code", """# check
assert stop.source_line == 5 and stop.block == (0, 0, 0) and stop.lanes == 32
assert stored"""),
    ("md", """Step forward, step back to the same instruction, continue to the same
line in the next block, then run to the end."""),
    ("code", """here = dbg.where().step
dbg.step(2)
back = dbg.step_back(2)
nxt = dbg.cont()                          # the same line in the second block
result = dbg.run_to_end()
print(back, nxt, sep="\\n")
print("partial:", result.partial, " findings:", result.findings)
print(dbg.cont())                         # past the end: it says so"""),
    ("md", """Check the result: stepping back returned to the store; the launch ran
to the end without findings; and `y` is still zeros — a debugging session
never writes your arrays."""),
    ("code", """# check
assert back.step == here and back.text.startswith("st.global")
assert nxt.source_line == 5 and nxt.block == (1, 0, 0)
assert not result.partial and result.findings == []
assert dbg.where().finished and not dbg.cont()   # falsy: `while dbg.cont():` ends
assert not y.any()"""),
    ("md", """## Watching a shared array: the steps of a tree reduction

A block's shared memory is not in any register, so the lane table cannot show
it. `dbg.shared("buf")` gives the shared array `buf` (the kernel's Python name;
a `@wl.func`'s arrays too) of the stopped block as a numpy array, with its shape
and dtype; the panel lists every shared array of the block under "shared memory
of block (x, y, z)", the elements changed since the previous stop highlighted,
bytes no thread has written yet in grey. Stop at the `wl.syncthreads()` inside
the loop twice and compare `buf` with a numpy model of the reduction: step `s`
adds the upper half `buf[s:2s]` onto `buf[:s]`."""),
    ("code", """%%warp_kernel --show source
def tree_sum(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    buf = wl.shared_array(256, wl.float32)
    t = wl.thread_idx.x
    buf[t] = x[wl.tid()]
    wl.syncthreads()
    s = 128
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        wl.syncthreads()
        s //= 2
    if t == 0:
        out[wl.block_idx.x] = buf[0]"""),
    ("code", """x = np.random.default_rng(6).integers(0, 10, 512).astype(np.float32)
dbg = debug(tree_sum, dim=512, inputs=[x, np.zeros(2, np.float32)], block_dim=256)
dbg.add_breakpoint(line=11)               # cell line 11: the wl.syncthreads() in the loop
model = x[:256].copy()                    # buf after line 5: block 0's 256 inputs
seen, models = [], []
for s in (128, 64):                       # two stops: after step s = 128, then s = 64
    stop = dbg.cont()
    model[:s] += model[s:2 * s]           # what step s does to buf
    seen.append(dbg.shared("buf"))
    models.append(model.copy())
    print(f"after s = {s:3}: buf[:8] =", seen[-1][:8])
dbg                                       # shared memory of block (0, 0, 0) at the bottom"""),
    ("md", """Check the result: both stops are at line 11 of block 0, and `buf` equals
the numpy model of the reduction after each step (float32 sums of small integers
are exact, so the comparison is exact)."""),
    ("code", """# check
assert stop.source_line == 11 and stop.block == (0, 0, 0)
assert seen[0].shape == (256,) and seen[0].dtype == np.float32
assert np.array_equal(seen[0], models[0]) and np.array_equal(seen[1], models[1])
assert not np.array_equal(seen[0], seen[1])"""),
]

NOTEBOOKS["07_image_filter"] = [
    ("md", """# 07 · An image filter on a real photograph

Grace Hopper's portrait (shipped with matplotlib) through two 2-D kernels:
a 3×3 box blur and the Sobel edge detector. `i, j = wl.tid()` gives the row
and column; consecutive lanes get consecutive columns, so loads coalesce."""),
    ("code", SETUP + """
import matplotlib.pyplot as plt
from matplotlib import cbook

with cbook.get_sample_data("grace_hopper.jpg") as f:
    photo = plt.imread(f)
gray = photo.astype(np.float32).mean(axis=2) / 255.0
img = np.ascontiguousarray(gray)   # the whole photograph: 600 x 512 pixels, one thread each
print(img.shape)"""),
    ("code", """%%warp_kernel --show source,ptx,resources
def blur3(src: wl.array(dtype=wl.float32, ndim=2), dst: wl.array(dtype=wl.float32, ndim=2)):
    i, j = wl.tid()
    h = src.shape[0]
    w = src.shape[1]
    if i > 0 and j > 0 and i < h - 1 and j < w - 1:
        s = 0.0
        for di in range(-1, 2):
            for dj in range(-1, 2):
                s += src[i + di, j + dj]
        dst[i, j] = s / 9.0
    else:
        dst[i, j] = src[i, j]

def sobel(src: wl.array(dtype=wl.float32, ndim=2), dst: wl.array(dtype=wl.float32, ndim=2)):
    i, j = wl.tid()
    h = src.shape[0]
    w = src.shape[1]
    if i > 0 and j > 0 and i < h - 1 and j < w - 1:
        gx = (src[i - 1, j + 1] + 2.0 * src[i, j + 1] + src[i + 1, j + 1]
              - src[i - 1, j - 1] - 2.0 * src[i, j - 1] - src[i + 1, j - 1])
        gy = (src[i + 1, j - 1] + 2.0 * src[i + 1, j] + src[i + 1, j + 1]
              - src[i - 1, j - 1] - 2.0 * src[i - 1, j] - src[i - 1, j + 1])
        dst[i, j] = wl.sqrt(gx * gx + gy * gy)
    else:
        dst[i, j] = 0.0"""),
    ("code", """blurred = np.zeros_like(img)
edges = np.zeros_like(img)
rb = wl.launch(blur3, dim=img.shape, inputs=[img, blurred], device="sim")
rs = wl.launch(sobel, dim=img.shape, inputs=[img, edges], device="sim")

# numpy references
ref_blur = img.copy()
inner = sum(img[1 + di: img.shape[0] - 1 + di, 1 + dj: img.shape[1] - 1 + dj]
            for di in (-1, 0, 1) for dj in (-1, 0, 1)) / 9.0
ref_blur[1:-1, 1:-1] = inner
p = img
gx = (p[:-2, 2:] + 2 * p[1:-1, 2:] + p[2:, 2:] - p[:-2, :-2] - 2 * p[1:-1, :-2] - p[2:, :-2])
gy = (p[2:, :-2] + 2 * p[2:, 1:-1] + p[2:, 2:] - p[:-2, :-2] - 2 * p[:-2, 1:-1] - p[:-2, 2:])
ref_edges = np.zeros_like(img)
ref_edges[1:-1, 1:-1] = np.sqrt(gx * gx + gy * gy)

fig, axes = plt.subplots(1, 3, figsize=(10, 4))
for ax, im, title in zip(axes, (img, blurred, edges), ("original", "3x3 blur", "Sobel")):
    ax.imshow(im, cmap="gray")
    ax.set_title(title)
    ax.axis("off")
plt.show()
rs"""),
    ("md", "Check the result: both kernels agree with the numpy references above."),
    ("code", """# check
np.testing.assert_allclose(blurred, ref_blur, rtol=1e-5, atol=1e-6)
np.testing.assert_allclose(edges, ref_edges, rtol=1e-4, atol=1e-5)"""),
    ("md", """## One row at a time: row views and a device function

`img[y]` of a 2-D array is **row** `y` as a 1-D array, a view of the same
memory (no copy), as in NumPy: `img[y][x]` is the element `img[y, x]`. A
row can be handed to a device function (`@wl.func`), which then works on a
1-D array and knows nothing about the image. Below, a horizontal 3-tap
smoothing, the first half of a separable blur: `smooth3` averages a pixel
with its left and right neighbours in its row. In the Python pane of the
view the lines of `smooth3` stand above the kernel's, and the PTX of the
inlined call links back to them."""),
    ("code", """%%warp_kernel --show source,ptx
@wl.func
def smooth3(row: wl.array(dtype=wl.float32), x: int) -> wl.float32:
    return (row[x - 1] + row[x] + row[x + 1]) / 3.0

def hsmooth(src: wl.array(dtype=wl.float32, ndim=2), dst: wl.array(dtype=wl.float32, ndim=2)):
    y, x = wl.tid()
    row = src[y]                         # row y of the image, a 1-D view
    if x > 0 and x < row.shape[0] - 1:
        dst[y][x] = smooth3(row, x)      # dst[y][x] is dst[y, x]
    else:
        dst[y][x] = row[x]"""),
    ("code", """smoothed = np.zeros_like(img)
rh = wl.launch(hsmooth, dim=img.shape, inputs=[img, smoothed], device="sim")
ref_smooth = img.copy()
ref_smooth[:, 1:-1] = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / np.float32(3)"""),
    ("md", """Check the result: the kernel matches numpy's row-wise average, and the
view's Python pane shows the device function's `return` line (cell line 4),
which produced PTX inside `hsmooth`, as well as the kernel's lines."""),
    ("code", """# check
np.testing.assert_allclose(smoothed, ref_smooth, rtol=1e-6)
from warp_lab.notebook.views import python_pane_lines   # the (cell line, text) rows
ck = wl.compile(hsmooth)
rows = dict(python_pane_lines(ck))
assert 4 in ck.source_map.rows_of("ptx") and rows[4].strip().startswith("return (row[x - 1]")
assert "row = src[y]" in rows[8] and "ld.global.nc" in ck.ptx       # src is only read"""),
]


NOTEBOOKS["08_cuda_cpp"] = [
    ("md", """# 08 · CUDA C++ kernels beside their Python twins

A `%%cuda_kernel` cell holds CUDA C++. NVRTC (NVIDIA's runtime compiler, in
process: no CUDA toolkit, no GPU) compiles it with `-lineinfo` to PTX; then the
same stages as a `%%warp_kernel` cell: `ptxas` → SASS, registers, occupancy,
and a launch on a GPU or on the CPU simulator, which executes NVRTC's PTX with
memcheck, racecheck, initcheck and the barrier check.

The views show CUDA C++ | PTX | SASS with linked lines. There is no LLVM IR
pane: NVRTC does not expose its NVVM IR, and the pane strip says so.

Each `__global__` function of the cell is bound in the notebook under its name;
`wl.launch` takes it with CUDA's launch shape, `grid=` and `block=` (the
kernel checks its own bounds, as CUDA code does)."""),
    ("code", SETUP),
    ("md", """## saxpy

The C++ pointers take numpy arrays of their element type (`const float*`:
float32); `int` and `float` take Python numbers, range-checked."""),
    ("code", """%%cuda_kernel --show source,ptx,resources
extern "C" __global__ void saxpy_cu(const float* x, float* y, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    y[i] = a * x[i] + y[i];
}"""),
    ("md", """The same kernel in Python. Its PTX has the same shape: one `fma.rn.f32`,
a bounds check (here the entry guard of `dim=n`), and the read-only `x` loaded
through `ld.global.nc`. NVRTC needs `const float* __restrict__` for that; warp_lab
knows `x` is never written."""),
    ("code", """%%warp_kernel --show source,ptx
def saxpy_py(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), a: float):
    i = wl.tid()
    y[i] = a * x[i] + y[i]"""),
    ("code", """n = 1_000_000
x = np.linspace(0, 1, n, dtype=np.float32)
y1 = np.ones(n, np.float32)
y2 = np.ones(n, np.float32)
r_cu = wl.launch(saxpy_cu, grid=(n + 255) // 256, block=256, inputs=[x, y1, 2.0, n], device="sim")
r_py = wl.launch(saxpy_py, dim=n, inputs=[x, y2, 2.0], device="sim")
r_cu"""),
    ("md", """Check the result: both agree with numpy, and both PTX listings hold one
`fma.rn.f32`:"""),
    ("code", """# check
np.testing.assert_array_equal(y1, 2 * x + 1)
np.testing.assert_array_equal(y2, 2 * x + 1)
ck_cu, ck_py = wl.compile(saxpy_cu), wl.compile(saxpy_py)
assert ck_cu.ptx.count("fma.rn.f32") == 1 and ck_py.ptx.count("fma.rn.f32") == 1
assert [repr(t) for _, t in ck_cu.params] == ["const float*", "float*", "wl.float32", "wl.int32"]
assert "llvm_ir" in ck_cu.missing"""),
    ("md", """A wrong argument is refused before anything runs, naming the C++
parameter:"""),
    ("code", """# raises
wl.launch(saxpy_cu, grid=4, block=256, inputs=[x.astype(np.float64), y1, 2.0, n], device="sim")"""),
    ("md", """## A shared-memory reduction

Each block sums 256 elements in a `__shared__` array, halving the active
threads each step, with a `__syncthreads()` between steps."""),
    ("code", """%%cuda_kernel --show source,ptx,resources,occupancy --block-dim 256
#define RED_BLOCK 256
extern "C" __global__ void block_sum_cu(const float* x, float* partial, int n)
{
    __shared__ float buf[RED_BLOCK];
    int t = threadIdx.x;
    int i = blockIdx.x * RED_BLOCK + t;
    buf[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int s = RED_BLOCK / 2; s > 0; s /= 2) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = buf[0];
}"""),
    ("md", """Its Python twin from warp_lab's kernel corpus, `block_sum`, compiled for
the same arch: compare the loops' `bar.sync` and `ld.shared` in the two PTX panes."""),
    ("code", """from warp_lab.examples import get
block_sum_py = get("block_sum").kernel
wl.compile(block_sum_py)"""),
    ("code", """v = (np.arange(1 << 20) % 1024).astype(np.float32) / 8   # 1M elements
blocks = v.size // 256
partial = np.zeros(blocks, np.float32)
r = wl.launch(block_sum_cu, grid=blocks, block=256, inputs=[v, partial, v.size], device="sim")
r"""),
    ("md", """Check the result: the block sums are numpy's (the values are multiples
of 1/8, so every order of adding them is exact), and racecheck found nothing:"""),
    ("code", """# check
np.testing.assert_array_equal(partial, v.reshape(blocks, 256).sum(axis=1))
assert r.sim.findings == [] and "racecheck" in r.checks
assert "bar.sync" in wl.compile(block_sum_cu).ptx"""),
    ("md", """## Transpose through a padded tile

Rows are read coalesced into a 32 × 33 `__shared__` tile and written out
column by column; the padding column puts the 32 elements of a tile column in 32
different banks."""),
    ("code", """%%cuda_kernel --show source,ptx,resources
#define T_TILE 32
#define T_ROWS 8
extern "C" __global__ void transpose_cu(const float* src, float* dst, int h, int w)
{
    __shared__ float tile[T_TILE][T_TILE + 1];
    int x = blockIdx.x * T_TILE + threadIdx.x;
    int y = blockIdx.y * T_TILE + threadIdx.y;
    for (int r = 0; r < T_TILE; r += T_ROWS)
        if (x < w && y + r < h) tile[threadIdx.y + r][threadIdx.x] = src[(y + r) * w + x];
    __syncthreads();
    x = blockIdx.y * T_TILE + threadIdx.x;
    y = blockIdx.x * T_TILE + threadIdx.y;
    for (int r = 0; r < T_TILE; r += T_ROWS)
        if (x < h && y + r < w) dst[(y + r) * h + x] = tile[threadIdx.x][threadIdx.y + r];
}"""),
    ("code", """h, w = 1000, 1200                        # not multiples of the tile: the edge checks matter
a = np.arange(h * w, dtype=np.float32).reshape(h, w)
at = np.zeros((w, h), np.float32)
r = wl.launch(transpose_cu, grid=((w + 31) // 32, (h + 31) // 32), block=(32, 8),
              inputs=[a, at, h, w], device="sim")
wl.compile(get("transpose_padded").kernel)   # the Python twin"""),
    ("md", """Check the result: numpy's transpose, and no bank conflicts counted on
the shared tile:"""),
    ("code", """# check
np.testing.assert_array_equal(at, a.T)
assert r.sim.findings == []
assert sum(r.sim.metrics.bank_conflicts.values()) == 0   # per PTX line"""),
    ("md", """## A planted race, found by racecheck

The same reduction without the `__syncthreads()` inside the loop. On a GPU the
result may still come out right (a warp runs in lockstep, and the simulator's
warps do too), which is why the bug survives testing: racecheck reports it,
at the C++ line, naming the `__shared__` array and the element."""),
    ("code", """%%cuda_kernel --show source --launch "grid=blocks, block=256, inputs=[v, partial, v.size]" --device sim --check racecheck
#define RED_BLOCK 256
extern "C" __global__ void block_sum_racy(const float* x, float* partial, int n)
{
    __shared__ float buf[RED_BLOCK];
    int t = threadIdx.x;
    int i = blockIdx.x * RED_BLOCK + t;
    buf[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int s = RED_BLOCK / 2; s > 0; s /= 2) {
        if (t < s) buf[t] += buf[t + s];
    }
    if (t == 0) partial[blockIdx.x] = buf[0];
}"""),
    ("md", """Check the result: a race on `buf` at line 11, the line of `buf[t] +=
buf[t + s]`:"""),
    ("code", """# check
races = [f for f in _launch.sim.findings if f.kind.startswith("race")]
assert races and races[0].source_line == 11
assert "buf[" in races[0].message and "shared array of line 5" in races[0].message"""),
]


def build(name: str, cells) -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    for k, (kind, text) in enumerate(cells):
        if kind == "md":
            cell = new_markdown_cell(text)
        else:
            raises = text.startswith("# raises")
            if raises:  # the tag, not the comment, tells nbclient the error is expected
                text = text.split("\n", 1)[1]
            cell = new_code_cell(text)
            if raises:
                cell.metadata["tags"] = ["raises-exception"]
        cell["id"] = f"{name[:2]}-{k:02d}"  # stable ids: regenerating changes nothing
        nb.cells.append(cell)
    nbformat.validate(nb)
    return nb


def _content(nb: nbformat.NotebookNode) -> list[dict]:
    """What :func:`build` decides about each cell of ``nb``: type, id, source and tags.

    Everything else a saved notebook holds is left out: outputs, execution
    counts, notebook metadata (``kernelspec`` and ``language_info`` as the kernel
    that ran it reports them) and the other cell metadata (nbclient's
    ``execution`` timings, JupyterLab's ``scrolled``, ``collapsed``, ``jupyter``).
    """
    return [{"type": c.cell_type, "id": c.get("id"), "source": c.source,
             "tags": list(c.get("metadata", {}).get("tags", []))} for c in nb.cells]


def _first_line_diff(have: str, want: str) -> str:
    """Where two cell sources first differ, as one line of text."""
    a, b = have.splitlines(), want.splitlines()
    for k, (x, y) in enumerate(zip(a, b), 1):
        if x != y:
            return f"line {k}: on disk {x!r}, generated {y!r}"
    k = min(len(a), len(b)) + 1
    if len(a) > len(b):
        return f"line {k}: on disk {a[k - 1]!r}, generated: no such line"
    if len(b) > len(a):
        return f"line {k}: on disk: no such line, generated {b[k - 1]!r}"
    return "whitespace at the end of the source"


def differences(path: Path) -> list[str]:
    """How the notebook at ``path`` differs from what :func:`build` writes for its name.

    ``path`` (a ``.ipynb`` file whose stem is a key of :data:`NOTEBOOKS`, in any
    folder) is compared on :func:`_content` only. Returns one line per
    difference, empty when there is none; a file that is missing, is not a
    notebook, or has no entry in :data:`NOTEBOOKS` is one line saying so.
    """
    path = Path(path)
    if path.stem not in NOTEBOOKS:
        return [f"{path.name}: make_notebooks.py writes no notebook of that name"]
    if not path.exists():
        return [f"{path.name}: missing"]
    try:
        have = _content(nbformat.read(path, as_version=4))
    except Exception as exc:  # a JSON or schema error from nbformat, named in the message
        return [f"{path.name}: not a readable notebook ({type(exc).__name__}: {exc})"]
    want = _content(build(path.stem, NOTEBOOKS[path.stem]))
    found = []
    for k, (h, w) in enumerate(zip(have, want)):
        where = f"cell {k} (id {w['id']}, {w['type']})"
        if h["type"] != w["type"] or h["id"] != w["id"]:
            found.append(f"{where}: on disk cell {k} is a {h['type']} cell with id {h['id']}")
        elif h["source"] != w["source"]:
            found.append(f"{where}: source differs at {_first_line_diff(h['source'], w['source'])}")
        elif h["tags"] != w["tags"]:
            found.append(f"{where}: tags on disk {h['tags']}, generated {w['tags']}")
    if len(have) != len(want):
        found.append(f"{len(have)} cells on disk, {len(want)} generated")
    return [f"{path.name}: {d}" for d in found]


def check(folder: Path = HERE) -> str | None:
    """None when every notebook of :data:`NOTEBOOKS` in ``folder`` holds what :func:`build`
    writes (outputs, execution counts and volatile metadata ignored, see :func:`_content`),
    else a message listing the differences and saying what to run."""
    found = [d for name in NOTEBOOKS for d in differences(Path(folder) / f"{name}.ipynb")]
    if not found:
        return None
    return ("the teaching notebooks differ from notebooks/make_notebooks.py "
            "(outputs, execution counts and metadata are not compared):\n  "
            + "\n  ".join(found)
            + "\nThe notebooks are generated: put the change in notebooks/make_notebooks.py "
              "and run `python notebooks/make_notebooks.py` (it rewrites them, without outputs).")


def main(argv=None) -> int:
    argv = list(argv or [])
    if argv[:1] == ["--check"] and len(argv) <= 2:
        message = check(Path(argv[1]) if len(argv) == 2 else HERE)
        if message:
            print(message, file=sys.stderr)
            return 1
        print("the notebooks hold what make_notebooks.py writes")
        return 0
    if argv:
        print("usage: python notebooks/make_notebooks.py [--check [FOLDER]]", file=sys.stderr)
        return 2
    for name, cells in NOTEBOOKS.items():
        path = HERE / f"{name}.ipynb"
        nbformat.write(build(name, cells), path)
        print("wrote", path.relative_to(HERE.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
