"""A kernel bundle made by hand from real toolchain output, for the browser tests.

The LLVM IR below is written by hand with ``!dbg`` locations pointing at
:data:`PYTHON_SOURCE`; llvmlite optimises it and emits PTX (NVPTX back end,
``.loc`` line info), ptxas assembles it with ``-lineinfo`` and nvdisasm
prints SASS with ``//## File ..., line N`` markers.  The line maps are read
back from those three texts here, independently of ``warp_lab.compiler``,
so the renderer is tested on what the tools really print.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile

import llvmlite.binding as llvm

#: The Python kernel the bundle shows (cell lines 1..6); line 4 carries
#: markup that must render as text.
PYTHON_SOURCE = '''@wl.kernel
def saxpy(a: float, x: wl.array(float), y: wl.array(float), n: int):
    i = wl.tid()
    if i < n:  # <img src=x onerror="window.__wl_xss = 1"> stays text
        y[i] = a * x[i] + y[i]
    return
'''

_IR = r'''
target triple = "nvptx64-nvidia-cuda"
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"

define ptx_kernel void @saxpy(float %a, ptr addrspace(1) %x, ptr addrspace(1) %y, i32 %n) !dbg !5 {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x(), !dbg !10
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x(), !dbg !10
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x(), !dbg !10
  %base = mul i32 %ctaid, %ntid, !dbg !10
  %i = add i32 %base, %tid, !dbg !10
  %inb = icmp slt i32 %i, %n, !dbg !11
  br i1 %inb, label %body, label %exit, !dbg !11

body:
  %idx = sext i32 %i to i64, !dbg !12
  %px = getelementptr float, ptr addrspace(1) %x, i64 %idx, !dbg !12
  %py = getelementptr float, ptr addrspace(1) %y, i64 %idx, !dbg !12
  %vx = load float, ptr addrspace(1) %px, align 4, !dbg !12
  %vy = load float, ptr addrspace(1) %py, align 4, !dbg !12
  %ax = fmul float %a, %vx, !dbg !12
  %r = fadd float %ax, %vy, !dbg !12
  store float %r, ptr addrspace(1) %py, align 4, !dbg !12
  br label %exit, !dbg !12

exit:
  ret void, !dbg !13
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3, !4}

!0 = distinct !DICompileUnit(language: DW_LANG_Python, file: !1, producer: "warp_lab browser test", isOptimized: true, runtimeVersion: 0, emissionKind: DebugDirectivesOnly)
!1 = !DIFile(filename: "saxpy.py", directory: "/tmp")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 2, !"Dwarf Version", i32 4}
!5 = distinct !DISubprogram(name: "saxpy", scope: !1, file: !1, line: 2, type: !6, scopeLine: 2, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!6 = !DISubroutineType(types: !7)
!7 = !{}
!10 = !DILocation(line: 3, column: 5, scope: !5)
!11 = !DILocation(line: 4, column: 5, scope: !5)
!12 = !DILocation(line: 5, column: 9, scope: !5)
!13 = !DILocation(line: 6, column: 5, scope: !5)
'''

ARCH = "sm_90"


def _optimise_and_emit(ir: str) -> tuple[str, str]:
    """(optimised LLVM IR, PTX) from llvmlite's NVPTX back end at -O3."""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    mod = llvm.parse_assembly(ir)
    mod.verify()
    tm = llvm.Target.from_triple("nvptx64-nvidia-cuda").create_target_machine(
        cpu=ARCH, features="+ptx80", opt=3)
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=3))
    pb.getModulePassManager().run(mod, pb)
    return str(mod), tm.emit_assembly(mod)


def _sass(ptx: str) -> tuple[str | None, str | None]:
    """(SASS, None) from ptxas -lineinfo + nvdisasm -c -g, or (None, why)."""
    try:
        from cuda import pathfinder
        ptxas = pathfinder.find_nvidia_binary_utility("ptxas")
        nvdisasm = pathfinder.find_nvidia_binary_utility("nvdisasm")
    except Exception as exc:  # the NVIDIA wheels are optional for this fixture
        return None, f"ptxas/nvdisasm not found ({exc})"
    if not ptxas or not nvdisasm:
        return None, "ptxas/nvdisasm not found"
    with tempfile.TemporaryDirectory(prefix="warp_lab-test-") as tmp:
        with open(os.path.join(tmp, "k.ptx"), "w") as f:
            f.write(ptx)
        subprocess.run([ptxas, "-lineinfo", "--gpu-name", ARCH, "k.ptx", "-o", "k.cubin"],
                       cwd=tmp, check=True, capture_output=True, timeout=60)
        out = subprocess.run([nvdisasm, "-c", "-g", "k.cubin"], cwd=tmp, check=True,
                             capture_output=True, text=True, timeout=60)
    return out.stdout, None


def _llvm_map(llvm_ir: str) -> dict[int, list[int]]:
    locs = {m.group(1): int(m.group(2)) for m in
            re.finditer(r"^!(\d+) = !DILocation\(line: (\d+)", llvm_ir, re.M)}
    out: dict[int, list[int]] = {}
    for n, line in enumerate(llvm_ir.split("\n"), start=1):
        m = re.search(r"!dbg !(\d+)", line)
        if m and m.group(1) in locs and not line.startswith("define"):
            out.setdefault(locs[m.group(1)], []).append(n)
    return out


def _marker_map(text: str, marker: re.Pattern, is_code) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    current = None
    for n, line in enumerate(text.split("\n"), start=1):
        m = marker.search(line)
        if m:
            current = int(m.group(1)) or None  # line 0: no source line
        elif current is not None and is_code(line):
            out.setdefault(current, []).append(n)
    return out


def ptx_line_map(ptx: str) -> dict[int, list[int]]:
    """Python line → PTX lines, from the ``.loc 1 <line> <col>`` directives."""
    def is_instruction(line: str) -> bool:
        s = line.strip()
        return bool(s) and not s.startswith((".", "//", "$", "{", "}", ")"))
    return _marker_map(ptx, re.compile(r"^\s*\.loc\s+\d+\s+(\d+)"), is_instruction)


def sass_line_map(sass: str) -> dict[int, list[int]]:
    """Python line → SASS lines, from nvdisasm's ``//## File "...", line N`` markers."""
    return _marker_map(sass, re.compile(r'//## File ".*", line (\d+)'),
                       lambda line: re.search(r"/\*[0-9a-f]{4,}\*/", line) is not None)


def make_bundle() -> dict:
    """The ``application/vnd.warp-lab.kernel+json`` bundle for the saxpy kernel.

    Returns:
        a dict following docs/decisions/0007-notebook-bundle.md (version 1),
        with heat columns made up for the test (instructions per line =
        64 threads x PTX instructions of that line; live registers 2..5).
    """
    llvm_ir, ptx = _optimise_and_emit(_IR)
    sass, missing = _sass(ptx)
    ptx_map = ptx_line_map(ptx)
    line_map = {"llvm": _llvm_map(llvm_ir), "ptx": ptx_map,
                "sass": sass_line_map(sass) if sass else {}}
    keyed = {pane: {str(k): v for k, v in m.items()} for pane, m in line_map.items()}
    return {
        "version": 1,
        "name": "saxpy",
        "arch": ARCH,
        "opt": 3,
        "panes": {
            "python": {"text": PYTHON_SOURCE.rstrip("\n"), "first_line": 1},
            "llvm": {"text": llvm_ir},
            "llvm_unoptimized": {"text": _IR.strip("\n")},
            "ptx": {"text": ptx},
            "sass": {"text": sass} if sass else {"text": None, "missing": missing},
        },
        "line_map": keyed,
        "colors": {"3": "#e6194b33", "4": "#3cb44b33", "5": "#4363d833"},
        "resources": {"registers": 8, "spill_stores": 0, "spill_loads": 0},
        "occupancy": {"block_size": 256, "occupancy": 1.0, "limiter": "warps"},
        "heat": {"instructions": {str(k): 64 * len(v) for k, v in ptx_map.items()},
                 "live_registers": {"3": 3, "4": 4, "5": 5, "6": 2}},
    }


if __name__ == "__main__":  # print the bundle, for trying the renderer by hand
    import json
    print(json.dumps(make_bundle(), indent=1))
