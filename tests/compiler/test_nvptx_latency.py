"""What the compile-latency work in lower/nvptx must keep: the same debug locations,
linkage and PTX, and stage timings that cover the whole NVPTX stage."""

import ast
import re
import time

import pytest

from warp_lab.compiler import frontend, lower, nvptx
from warp_lab.options import CompileOptions
from warp_lab.examples import get

_LOC = re.compile(r"^(!\d+) = !DILocation\(column: (\d+), line: (\d+), scope: (!\d+)\)$", re.M)


@pytest.mark.parametrize("name", ["device_funcs", "spmv_csr"])
def test_one_dilocation_per_line_column_scope_at_an_ast_node(name):
    kernel = get(name).kernel
    opts = CompileOptions(arch="sm_90")
    ir_text = lower.make_llvm_ir(frontend.make_typed_ast(kernel, opts), opts).llvm_ir
    nodes = _LOC.findall(ir_text)
    assert nodes and len(nodes) == ir_text.count("!DILocation(")  # all in llvmlite's form
    keys = [(line, col, scope) for _, col, line, scope in nodes]
    assert len(keys) == len(set(keys))
    # every location is the start of a node of the kernel's (or a callee's) Python source
    src = kernel.source
    starts = {(src.first_line + n.lineno - 1, n.col_offset + 1 + src.col_offset)
              for n in ast.walk(ast.parse(src.text)) if hasattr(n, "lineno")}
    own = {(int(line), int(col)) for _, col, line, _ in nodes} & starts
    assert own, "no location in the kernel's own source"
    used = set(re.findall(r"!dbg (!\d+)", ir_text))
    assert used <= {n for n, *_ in nodes} | set(re.findall(r"^(!\d+) = distinct !DISubprogram",
                                                           ir_text, re.M))


IR_DEAD_AND_HELPER = r'''
target triple = "nvptx64-nvidia-cuda"
define ptx_kernel void @k(ptr addrspace(1) %x) {
  %v = load float, ptr addrspace(1) %x
  %h = call float @helper(float %v)
  %e = call float @__nv_expf(float %h)
  store float %e, ptr addrspace(1) %x
  ret void
}
define float @helper(float %a) noinline {
  %b = fmul float %a, %a
  ret float %b
}
declare float @__nv_expf(float)
define void @dead(ptr %p) {
''' + "".join(f"  %d{i} = load volatile i32, ptr %p\n" for i in range(4000)) + '''  ret void
}
'''


def test_non_entry_functions_and_libdevice_become_internal():
    ir_opt, ptx = nvptx.make_ptx(IR_DEAD_AND_HELPER, CompileOptions(arch="sm_90"), "k")
    assert ".visible .entry k(" in ptx
    assert re.search(r"^\.func .*helper", ptx, re.M)          # kept (noinline), not .visible
    assert ".visible .func" not in ptx and "dead" not in ptx and "__nv_expf" not in ptx
    assert re.search(r"^define internal .*@helper", ir_opt, re.M)
    assert re.findall(r"^define [^@]*@(\w+)", ir_opt, re.M) == ["k", "helper"]


def test_stage_timings_cover_parse_link_optimise_and_emit():
    # 4000 dead loads: parsing is a large share of the call; it must be in "optimize"
    opts = CompileOptions(arch="sm_90")
    nvptx.make_ptx(IR_DEAD_AND_HELPER, opts, "k")                 # libdevice subset cut
    timings: dict = {}
    t0 = time.perf_counter()
    nvptx.make_ptx(IR_DEAD_AND_HELPER, opts, "k", timings)
    wall = time.perf_counter() - t0
    assert set(timings) == {"optimize", "ptx"} and min(timings.values()) > 0
    assert 0.8 * wall <= timings["optimize"] + timings["ptx"] <= wall
