"""Real compile records for the view tests, built without warp_lab's compiler.

The LLVM IR is written by hand (with ``!dbg`` locations pointing at the
Python lines of ``PY_SOURCE``); the PTX comes from llvmlite's NVPTX back end,
the cubin from ptxas and the SASS from ``nvdisasm -c -gi``: the same tools the
pipeline uses. The line map is read straight from ``.loc`` directives and
nvdisasm's ``//## File ..., line N`` comments.
"""

from __future__ import annotations

import functools
import re
import subprocess
import tempfile
from pathlib import Path

import llvmlite.binding as llvm

from warp_lab.compiler.artifact import CompiledKernel, Resources
from warp_lab.compiler.source_map import LineMap, SourceMap
from warp_lab.options import CompileOptions
from warp_lab.lang.kernel import Source

PY_SOURCE = '''def saxpy(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), a: float, n: int):
    i = wl.tid()  # <script>alert("x")</script> & friends
    if i < n:
        y[i] = a * x[i] + y[i]
'''
FIRST_LINE = 2  # the def sits on cell line 2 (a decorator would be line 1)

LLVM_IR = r'''
target triple = "nvptx64-nvidia-cuda"
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
define void @saxpy(ptr addrspace(1) %x, ptr addrspace(1) %y, float %a, i32 %n) !dbg !5 {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x(), !dbg !10
  %c = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x(), !dbg !10
  %nt = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x(), !dbg !10
  %m = mul i32 %c, %nt, !dbg !10
  %i = add i32 %m, %t, !dbg !10
  %ok = icmp slt i32 %i, %n, !dbg !11
  br i1 %ok, label %body, label %exit, !dbg !11
body:
  %px = getelementptr float, ptr addrspace(1) %x, i32 %i, !dbg !12
  %vx = load float, ptr addrspace(1) %px, !dbg !12
  %py = getelementptr float, ptr addrspace(1) %y, i32 %i, !dbg !12
  %vy = load float, ptr addrspace(1) %py, !dbg !12
  %p = fmul float %a, %vx, !dbg !12
  %s = fadd float %p, %vy, !dbg !12
  store float %s, ptr addrspace(1) %py, !dbg !12
  br label %exit, !dbg !12
exit:
  ret void, !dbg !12
}
!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3, !4}
!nvvm.annotations = !{!20}
!20 = !{ptr @saxpy, !"kernel", i32 1}
!0 = distinct !DICompileUnit(language: DW_LANG_Python, file: !1, producer: "warp_lab", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly)
!1 = !DIFile(filename: "<cell 1>", directory: ".")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 7, !"Dwarf Version", i32 4}
!5 = distinct !DISubprogram(name: "saxpy", scope: !1, file: !1, line: 2, type: !6, scopeLine: 2, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!6 = !DISubroutineType(types: !7)
!7 = !{}
!10 = !DILocation(line: 3, column: 5, scope: !5)
!11 = !DILocation(line: 4, column: 5, scope: !5)
!12 = !DILocation(line: 5, column: 9, scope: !5)
'''


def _tool(name: str) -> str:
    from cuda.pathfinder import find_nvidia_binary_utility
    path = find_nvidia_binary_utility(name)
    if not path:
        import pytest
        pytest.skip(f"{name} not found (install the nvidia-cuda-nvcc / nvdisasm wheels)")
    return path


def loc_map(text: str, pattern: str) -> dict[int, tuple[int, ...]]:
    """Python line -> 1-based lines of ``text`` under each location marker."""
    out: dict[int, list[int]] = {}
    current = None
    for k, line in enumerate(text.splitlines(), 1):
        if line.strip() == "}":  # end of the function body: debug sections follow
            current = None
            continue
        m = re.search(pattern, line)
        if m:
            current = int(m.group(1)) or None
            continue
        if current and line.strip() and not line.strip().startswith((".", "//", "$L", "}")):
            out.setdefault(current, []).append(k)
    return {py: tuple(v) for py, v in out.items()}


@functools.lru_cache(maxsize=None)
def saxpy_record(source: str = PY_SOURCE) -> CompiledKernel:
    """A CompiledKernel for ``source`` built with llvmlite, ptxas and nvdisasm."""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    mod = llvm.parse_assembly(LLVM_IR)
    mod.verify()
    tm = llvm.Target.from_triple("nvptx64-nvidia-cuda").create_target_machine(
        cpu="sm_90", features="+ptx80", opt=3)
    ptx = tm.emit_assembly(mod)
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp)
        (p / "k.ptx").write_text(ptx)
        r = subprocess.run([_tool("ptxas"), "-v", "--gpu-name", "sm_90", str(p / "k.ptx"),
                            "-o", str(p / "k.cubin")], capture_output=True, text=True, check=True)
        regs = int(re.search(r"Used (\d+) registers", r.stdout + r.stderr).group(1))
        cubin = (p / "k.cubin").read_bytes()
        sass = subprocess.run([_tool("nvdisasm"), "-c", "-gi", str(p / "k.cubin")],
                              capture_output=True, text=True, check=True).stdout
    ir_text = str(mod)
    line_map = LineMap(
        llvm=_llvm_map(ir_text),
        ptx=loc_map(ptx, r"^\s*\.loc\s+\d+\s+(\d+)\s"),
        sass=_sass_offsets(sass),
        sass_lines=loc_map(sass, r"//## File .*, line (\d+)"),
    )
    return CompiledKernel(
        name="saxpy", entry="saxpy", source=Source(source, "<cell 1>", FIRST_LINE),
        options=CompileOptions(arch="sm_90", opt=3), params=(), param_layout=(),
        launch_ndim=1, llvm_ir=LLVM_IR.strip() + "\n", llvm_ir_optimized=ir_text, ptx=ptx,
        cubin=cubin, sass=sass, resources=Resources("sm_90", registers=regs),
        source_map=SourceMap(line_map, "<cell 1>"), timings={"ptx": 0.002, "ptxas": 0.01})


def _llvm_map(ir_text: str) -> dict[int, tuple[int, ...]]:
    locs = {m.group(1): int(m.group(2)) for m in
            re.finditer(r"^(!\d+) = !DILocation\(line: (\d+)", ir_text, re.M)}
    out: dict[int, list[int]] = {}
    for k, line in enumerate(ir_text.splitlines(), 1):
        m = re.search(r"!dbg (!\d+)", line)
        if m and m.group(1) in locs and not line.startswith("define"):
            out.setdefault(locs[m.group(1)], []).append(k)
    return {py: tuple(v) for py, v in out.items()}


def _sass_offsets(sass: str) -> dict[int, tuple[int, ...]]:
    """Python line -> SASS instruction byte offsets, from nvdisasm's ``//## File`` comments."""
    out: dict[int, list[int]] = {}
    current = None
    for line in sass.splitlines():
        m = re.search(r"//## File .*, line (\d+)", line)
        if m:
            current = int(m.group(1))
            continue
        m = re.search(r"/\*([0-9a-f]{4})\*/", line)
        if m and current:
            out.setdefault(current, []).append(int(m.group(1), 16))
        if line.startswith(".L_x") or not line.strip():
            pass
    return {py: tuple(v) for py, v in out.items()}
