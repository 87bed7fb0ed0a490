"""PTX instructions LLVM leaves on line 0 get the line that first uses their result.

The reference for "which line uses it" is the kernel's own source: the statement
``c[i] = a[i] + b[i]`` of vector_add is found by its text, never a hard-coded number.
The compiler's PTX is compared with NVPTX's own output (``nvptx.make_ptx(line_zero=False)``), so the
test also shows that only ``.loc`` lines change and that ptxas makes the same SASS.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.compiler import nvptx, toolchain
from warp_lab.compiler.line_zero import MARK, attribute_line_zero
from warp_lab.examples import get

_LOC_RE = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")


def _lines_of(ptx: str) -> list[tuple[int, str]]:
    """``(.loc line in force, instruction)`` for every PTX instruction (an independent parse)."""
    out, current = [], None
    for text in ptx.splitlines():
        m = _LOC_RE.match(text)
        if m:
            current = int(m.group(2))
            continue
        s = text.strip()
        if s and not s.startswith(("//", ".", "$", "{", "}", ")", "(")) and not s.endswith(":"):
            out.append((current, s))
    return out


def _kernel_line(kernel, text: str) -> int:
    src = kernel.source
    lines = src.text.splitlines()
    return src.first_line + next(k for k, ln in enumerate(lines) if ln.strip() == text)


def test_vector_add_parameter_loads_and_addresses_are_on_the_line_that_uses_them():
    kernel = get("vector_add").kernel
    ck = wl.compile(kernel, arch="sm_80", cache=False)
    _, raw = nvptx.make_ptx(ck.llvm_ir, ck.options, ck.entry, line_zero=False)
    body = _kernel_line(kernel, "c[i] = a[i] + b[i]")
    # LLVM's own output has the array parameters' loads on line 0 ...
    raw_lines = _lines_of(raw)
    assert [s for ln, s in raw_lines if ln == 0 and s.startswith("ld.param")], raw
    # ... the compiled kernel has none: they are on the statement that reads the arrays
    lines = _lines_of(ck.ptx)
    assert not [s for ln, s in lines if ln == 0], ck.ptx
    param = r"ld\.param\.b64\s+%rd\d+, \[vector_add_param_[123]\]"
    loads = [ln for ln, s in lines if re.match(param, s)]
    assert loads == [body] * 3, ck.ptx
    assert MARK in ck.ptx
    # only .loc lines differ, in the same order of instructions
    assert [s for _, s in lines] == [s for _, s in raw_lines]
    # every pane agrees: the line map's PTX lines of `body` include the loads, and its
    # SASS has no instruction left without a line but the kernel's exit
    ptx_text = ck.ptx.splitlines()
    assert sum(ptx_text[n - 1].strip().startswith("ld.param.b64")
               for n in ck.source_map.rows_of("ptx")[body]) == 3
    sass_insns = len(re.findall(r"/\*[0-9a-f]{4}\*/", ck.sass))
    on_lines = sum(len(v) for v in ck.source_map.rows_of("sass_offsets").values())
    assert sass_insns - on_lines <= 2, ck.sass  # EXIT and the BRA after it: no .loc


def test_simulated_vector_add_runs_nothing_on_no_python_line():
    from warp_lab.notebook.results import instructions_per_line

    ex = get("vector_add")
    args = ex.make_inputs()
    before = [a.copy() for a in args]
    res = wl.launch(ex.kernel, inputs=args, device="sim", **ex.launch(args).kwargs())
    ex.check(before, args)
    per_line = instructions_per_line(res)
    assert sum(per_line.values()) == res.sim.instructions
    body = _kernel_line(ex.kernel, "c[i] = a[i] + b[i]")
    n = args[0].size
    # the 3 parameter loads, the index scaling, 3 address adds, 2 loads, 1 add, 1 store
    assert per_line[body] == 11 * n


def test_same_ptxas_code_with_and_without_the_rewrite():
    for name in ("stencil_2d", "matmul_tiled"):
        ck = wl.compile(get(name).kernel, arch="sm_90", cache=False, sass=False)
        _, raw = nvptx.make_ptx(ck.llvm_ir, ck.options, ck.entry, line_zero=False)
        fixed = attribute_line_zero(raw)
        assert fixed != raw
        strip = [ln for ln in fixed.splitlines() if not _LOC_RE.match(ln)]
        assert strip == [ln for ln in raw.splitlines() if not _LOC_RE.match(ln)]
        sass = []
        for ptx in (raw, fixed):
            cubin, res, _ = toolchain.make_cubin(ptx, ck.options, ck.entry)
            text = toolchain.disassemble(cubin, "sm_90", True, False, False)[0]
            sass.append((res.registers, [re.sub(r"/\*[0-9a-f]+\*/", "", ln).strip()
                                         for ln in text.splitlines()
                                         if re.search(r"/\*[0-9a-f]{4}\*/", ln)]))
        assert sass[0] == sass[1], name


_PTX = """\
.visible .entry k(
\t.param .b64 k_param_0
)
{
\t.loc\t1 5 1
\tmov.u32 \t%r1, %tid.x;
$L__BB0_1:
\t.loc\t1 0 1
\tld.param.b64 \t%rd1, [k_param_0];
\tadd.s32 \t%r2, %r1, 1;
\tmul.wide.u32 \t%rd2, %r9, 4;
\tst.global.b32 \t[%rd2], %r1;
\t.loc\t1 7 3
\tld.global.b32 \t%r3, [%rd1];
\t.loc\t1 8 3
\tsetp.lt.u32 \t%p1, %r3, %r2;
\t@%p1 bra \t$L__BB0_1;
\tret;
}
\t.file\t1 "k.py"
"""


def test_each_line_zero_instruction_takes_its_first_users_line():
    out = attribute_line_zero(_PTX)
    lines = dict((s, ln) for ln, s in _lines_of(out))
    assert lines["ld.param.b64 \t%rd1, [k_param_0];"] == 7   # read by line 7's load
    # read by line 8's compare: its own first user's line, not that of its neighbour
    assert lines["add.s32 \t%r2, %r1, 1;"] == 8
    # a line-0 store: on the line computing its value (line 5's tid, line_zero.MERGED),
    # and the address only it reads follows it
    assert lines["st.global.b32 \t[%rd2], %r1;"] == 5
    assert lines["mul.wide.u32 \t%rd2, %r9, 4;"] == 5
    assert lines["ret;"] == 8 and lines["mov.u32 \t%r1, %tid.x;"] == 5
    assert [s for _, s in _lines_of(out)] == [s for _, s in _lines_of(_PTX)]
    assert attribute_line_zero(out) == out  # nothing left to attribute a second time
    no_loc = "\n".join(ln for ln in _PTX.splitlines() if ".loc" not in ln)
    assert attribute_line_zero(no_loc) == no_loc
    assert any(ln.startswith("\t.loc\t1 7 3") and ln.endswith(MARK) for ln in out.splitlines())


def test_attributed_lines_are_the_instructions_under_a_marked_loc():
    from warp_lab.compiler.line_zero import attributed_lines

    out = attribute_line_zero(_PTX)
    text = out.split("\n")
    marked = attributed_lines(out)
    assert {text[k - 1].strip() for k in marked} == {
        "ld.param.b64 \t%rd1, [k_param_0];", "add.s32 \t%r2, %r1, 1;",
        "mul.wide.u32 \t%rd2, %r9, 4;", "st.global.b32 \t[%rd2], %r1;"}
    assert attributed_lines(_PTX) == frozenset()   # NVPTX's own output: nothing marked


@wl.kernel
def branch_store(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    i = wl.tid()
    v = x[i]
    if v > 0.0:
        y[i] = wl.sqrt(v) * 2.0
    else:
        y[i] = wl.exp(v) + 1.0


def test_a_store_llvm_merged_from_both_branches_goes_to_the_first_branch_s_line():
    from warp_lab.compiler.line_zero import MERGED

    ck = wl.compile(branch_store, arch="sm_80", cache=False)
    then_line = _kernel_line(branch_store, "y[i] = wl.sqrt(v) * 2.0")
    else_line = _kernel_line(branch_store, "y[i] = wl.exp(v) + 1.0")
    # lowering makes one store per branch; LLVM's SimplifyCFG sinks them into one store
    # after the join, with getMergedLocation's line 0 (two lines of one scope)
    stores = [ln for ln in ck.llvm_ir.splitlines() if re.match(r"\s+store .*addrspace\(1\)", ln)]
    assert len(stores) == 2
    _, raw = nvptx.make_ptx(ck.llvm_ir, ck.options, ck.entry, line_zero=False)
    raw_stores = [(ln, s) for ln, s in _lines_of(raw) if s.startswith("st.global")]
    assert [ln for ln, _ in raw_stores] == [0], raw
    # warp_lab's PTX: the store (and the address arithmetic and y's ld.param only it reads)
    # on the first of the two lines, saying which lines it merges
    lines = _lines_of(ck.ptx)
    assert [ln for ln, s in lines if s.startswith("st.global")] == [then_line]
    assert f"{MERGED}{then_line}, {else_line}\n" in ck.ptx
    assert not [s for ln, s in lines if ln == 0], ck.ptx      # nothing left on no line
    y_param = next(ln for ln, s in lines if re.match(r"ld\.param\.b64\s.*_param_2\]", s))
    assert y_param == then_line
    assert [s for _, s in lines] == [s for _, s in _lines_of(raw)]   # only .loc lines differ
    # the line map agrees, and the debugger does not stop at the merged store for the
    # line: the line has instructions of its own (the sqrt)
    from warp_lab.compiler.line_zero import attributed_lines

    ptx_text = ck.ptx.splitlines()
    store_ptx = next(n for n in ck.source_map.rows_of("ptx")[then_line]
                     if ptx_text[n - 1].strip().startswith("st.global"))
    assert store_ptx in attributed_lines(ck.ptx)


def test_the_merged_store_counts_on_its_line_for_the_lanes_of_both_branches():
    from warp_lab.notebook.results import instructions_per_line

    x = np.array([1.0, -1.0] * 32, np.float32)   # every warp takes both branches
    y = np.zeros_like(x)
    res = wl.launch(branch_store, dim=x.size, inputs=[x, y], device="sim")
    np.testing.assert_allclose(y, np.where(x > 0, np.sqrt(np.abs(x)) * 2, np.exp(x) + 1),
                               rtol=2e-7)
    per_line = instructions_per_line(res)
    assert sum(per_line.values()) == res.sim.instructions   # none on no Python line
    ck = res.compiled
    then_line = _kernel_line(branch_store, "y[i] = wl.sqrt(v) * 2.0")
    ptx_text = ck.ptx.splitlines()
    counts = res.sim.metrics.per_ptx_line
    store = next(n for n, t in enumerate(ptx_text, 1) if t.strip().startswith("st.global"))
    assert int(counts[store]) == x.size          # all 64 threads, both branches' lanes
    assert store in ck.source_map.rows_of("ptx")[then_line]


_MERGED_PTX = """\
.visible .entry k(
\t.param .b64 k_param_0
)
{
\t.loc\t1 5 1
\tmov.u32 \t%r1, %tid.x;
\t.loc\t1 7 9
\tadd.s32 \t%r2, %r1, 1;
\t.loc\t1 9 9
\tmul.lo.s32 \t%r3, %r1, 3;
\t.loc\t1 6 5
\tsetp.lt.u32 \t%p1, %r1, 16;
\t.loc\t1 0 0
\tselp.b32 \t%r4, %r3, %r2, %p1;
\tld.param.b64 \t%rd1, [k_param_0];
\tst.global.b32 \t[%rd1], %r4;
\tst.global.b32 \t[%rd1+4], %r1;
\tld.global.b32 \t%r5, [%rd1+16];
\tst.global.b32 \t[%rd1+8], %r5;
\tst.global.b32 \t[%rd1+12], 7;
\t.loc\t1 5 1
\tret;
}
\t.file\t1 "k.py"
"""


def test_a_line_zero_store_goes_to_the_first_line_computing_its_value():
    from warp_lab.compiler.line_zero import MERGED, attributed_lines

    out = attribute_line_zero(_MERGED_PTX)
    lines = dict((s, ln) for ln, s in _lines_of(out))
    # the stored value is a line-0 selp of line 9's product and line 7's sum: line 7,
    # the first in the source though line 9's is the selp's first operand; not line 6,
    # whose compare only chooses between them
    assert lines["st.global.b32 \t[%rd1], %r4;"] == 7
    assert lines["ld.param.b64 \t%rd1, [k_param_0];"] == 7    # its address: first user
    assert lines["selp.b32 \t%r4, %r3, %r2, %p1;"] == 7
    assert f"{MERGED}7, 9\n" in out
    # a store of a value from one line (line 5's tid): that line; a store of a loaded
    # value (the load merged too, line 0) or a constant names no line: it keeps line 0
    assert lines["st.global.b32 \t[%rd1+4], %r1;"] == 5
    assert lines["st.global.b32 \t[%rd1+8], %r5;"] == 0
    assert lines["st.global.b32 \t[%rd1+12], 7;"] == 0
    text = out.split("\n")
    assert {text[k - 1].strip() for k in attributed_lines(out)} == {
        "selp.b32 \t%r4, %r3, %r2, %p1;", "ld.param.b64 \t%rd1, [k_param_0];",
        "st.global.b32 \t[%rd1], %r4;", "st.global.b32 \t[%rd1+4], %r1;"}
    assert attribute_line_zero(out) == out


BRANCH_STORE_CU = """extern "C" __global__ void branch_store(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    if (v > 0.0f) {
        y[i] = sqrtf(v) * 2.0f;
    } else {
        y[i] = expf(v) + 1.0f;
    }
}
"""


def test_nvcc_keeps_the_two_stores_apart_each_on_its_line():
    """What line_zero's docstring says of nvcc: its twin of branch_store (NVRTC,
    ``-lineinfo``) has a store in each branch, on lines 6 and 8 of the .cu, where LLVM
    merges them into one on line 0."""
    from benchmarks import peers

    try:
        peers.load_nvrtc()
    except peers.PeerUnavailable as exc:
        pytest.skip(f"NVRTC is not installed: {exc}")
    ptx = peers.nvrtc_compile(BRANCH_STORE_CU, "twin", "sm_80", options=["-lineinfo"])
    assert [ln for ln, s in _lines_of(ptx) if s.startswith("st.global")] == [6, 8]
