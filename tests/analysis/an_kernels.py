"""LLVM IR kernels with line info for the register-pressure tests.

Written as IR text (what ``compiler/lower`` produces) so these tests do not
depend on the front end: each instruction carries ``!dbg`` with a "Python"
line of ``kern.py``, and the PTX/cubin/SASS come from warp_lab's own
``nvptx`` and ``toolchain`` stages.
"""

from __future__ import annotations

FILENAME = "kern.py"
# "Python" lines of the generated kernel
LINE_TID, LINE_LOAD_A, LINE_LOAD_B, LINE_MUL, LINE_SUM, LINE_STORE = 2, 3, 4, 5, 6, 7


def dot_kernel_ir(n: int, name: str = "dot") -> str:
    """``y[tid] = sum_i x[8*tid+i] * x[8*tid+n+i]`` over ``i < n``, with every
    load issued before the first multiply, so that ``2n`` values are live at
    once: a kernel whose register pressure grows with ``n``.

    Lines: 2 index, 3 first loads, 4 second loads, 5 products, 6 sum, 7 store.
    """
    body = [
        f"  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x(), !dbg !{LINE_TID}0",
        f"  %base = mul i32 %tid, {2 * n}, !dbg !{LINE_TID}0",
        f"  %i0 = zext i32 %base to i64, !dbg !{LINE_TID}0",
        f"  %p0 = getelementptr float, ptr addrspace(1) %x, i64 %i0, !dbg !{LINE_TID}0",
    ]
    for k in range(2 * n):
        line = LINE_LOAD_A if k < n else LINE_LOAD_B
        body.append(f"  %p{k + 1} = getelementptr float, ptr addrspace(1) %p0, i64 {k}, "
                    f"!dbg !{line}0")
        body.append(f"  %v{k} = load volatile float, ptr addrspace(1) %p{k + 1}, !dbg !{line}0")
    for k in range(n):
        body.append(f"  %m{k} = fmul float %v{k}, %v{k + n}, !dbg !{LINE_MUL}0")
    acc = "%m0"
    for k in range(1, n):
        body.append(f"  %s{k} = fadd float {acc}, %m{k}, !dbg !{LINE_SUM}0")
        acc = f"%s{k}"
    body += [
        f"  %q = getelementptr float, ptr addrspace(1) %y, i32 %tid, !dbg !{LINE_STORE}0",
        f"  store float {acc}, ptr addrspace(1) %q, !dbg !{LINE_STORE}0",
        f"  ret void, !dbg !{LINE_STORE}0",
    ]
    locations = "\n".join(f"!{line}0 = !DILocation(line: {line}, column: 5, scope: !4)"
                          for line in range(LINE_TID, LINE_STORE + 1))
    return f"""target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

define void @{name}(ptr addrspace(1) %x, ptr addrspace(1) %y) !dbg !4 {{
entry:
{chr(10).join(body)}
}}

!llvm.dbg.cu = !{{!0}}
!llvm.module.flags = !{{!2, !3}}
!nvvm.annotations = !{{!9}}

!0 = distinct !DICompileUnit(language: DW_LANG_Python, file: !1, producer: "warp_lab tests", isOptimized: true, runtimeVersion: 0, emissionKind: DebugDirectivesOnly)
!1 = !DIFile(filename: "{FILENAME}", directory: "")
!2 = !{{i32 2, !"Debug Info Version", i32 3}}
!3 = !{{i32 2, !"Dwarf Version", i32 4}}
!4 = distinct !DISubprogram(name: "{name}", scope: !1, file: !1, line: 1, type: !5, scopeLine: 1, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!5 = !DISubroutineType(types: !6)
!6 = !{{}}
!9 = !{{ptr @{name}, !"kernel", i32 1}}
{locations}
"""
