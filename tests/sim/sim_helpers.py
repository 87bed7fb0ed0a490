"""Helpers for the simulator tests: compile LLVM IR with llvmlite's NVPTX back end, pack
parameters from the entry's ``.param`` list, launch on the simulator."""

from __future__ import annotations

import functools

import numpy as np
from warp_lab import sim

DECLS = """
target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
declare void @llvm.nvvm.barrier0()
declare i32 @vprintf(ptr, ptr)
"""


@functools.lru_cache(maxsize=None)
def _ptx(ir: str, opt: int, arch: str) -> str:
    import llvmlite.binding as llvm
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    mod = llvm.parse_assembly(ir)
    mod.verify()
    tm = llvm.Target.from_triple("nvptx64-nvidia-cuda").create_target_machine(
        cpu=arch, features="+ptx80", opt=opt)
    return tm.emit_assembly(mod)


def compile_ir(body: str, opt: int = 3, arch: str = "sm_90") -> str:
    """PTX for an LLVM IR module body (the common declarations are prepended)."""
    return _ptx(DECLS + body, opt, arch)


def pack(module, kernel, values) -> bytes:
    """Parameter buffer: each value at its ``.param`` offset (ints, floats as numpy scalars,
    bytes for structs)."""
    fn = module.entry(kernel)
    buf = bytearray(fn.param_size)
    for (name, off, size, _), v in zip(fn.params, values, strict=True):
        if isinstance(v, (bytes, bytearray)):
            data = bytes(v)
        elif isinstance(v, np.generic):
            data = v.tobytes()
        else:
            data = int(v).to_bytes(size, "little", signed=int(v) < 0)
        assert len(data) == size, (name, len(data), size)
        buf[off:off + size] = data
    return bytes(buf)


class Launcher:
    """Holds a GlobalMemory; ``put`` arrays, ``launch`` kernels, ``get`` results."""

    def __init__(self):
        self.mem = sim.GlobalMemory()
        self.arrays = {}

    def put(self, arr: np.ndarray, name: str = "") -> int:
        addr = self.mem.alloc(arr.nbytes, name=name)
        self.mem.write(addr, arr)
        self.arrays[addr] = (arr.dtype, arr.shape)
        return addr

    def get(self, addr: int) -> np.ndarray:
        dt, shape = self.arrays[addr]
        n = int(np.prod(shape)) * dt.itemsize
        return np.frombuffer(self.mem.read(addr, n), dt).reshape(shape).copy()

    def launch(self, ptx, kernel, grid, block, args, **kw):
        mod = sim.parse_module(ptx) if isinstance(ptx, str) else ptx
        return sim.run(mod, kernel, grid, block, pack(mod, kernel, args), self.mem, **kw)




def with_lines(ir: str, filename: str = "kern.py") -> str:
    """Attach debug locations: an instruction ending in ``;@N`` gets source line N of
    ``filename`` (so the PTX carries ``.loc`` and findings can name the line).
    Each ``define`` gets its own DISubprogram."""
    import re
    out, locs, subs = [], {}, []
    cur = None
    for line in ir.split("\n"):
        m = re.match(r"\s*define .*@(\w+)\(.*\{\s*$", line)
        if m:
            cur = len(subs)
            subs.append(m.group(1))
            line = line.replace(") {", f") !dbg !sp{cur} {{").replace(
                f") !dbg !sp{cur} {{", f") !dbg !{100 + cur} {{")
        mm = re.search(r";@(\d+)\s*$", line)
        if mm:
            n = int(mm.group(1))
            key = (cur, n)
            locs.setdefault(key, 200 + len(locs))
            line = line[:mm.start()].rstrip() + f", !dbg !{locs[key]}"
        out.append(line)
    meta = [
        "!llvm.dbg.cu = !{!0}",
        "!llvm.module.flags = !{!2, !3}",
        '!0 = distinct !DICompileUnit(language: DW_LANG_C, file: !1, producer: "t", '
        "isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly)",
        f'!1 = !DIFile(filename: "{filename}", directory: "/tmp")',
        '!2 = !{i32 2, !"Debug Info Version", i32 3}',
        '!3 = !{i32 2, !"Dwarf Version", i32 4}',
        "!5 = !DISubroutineType(types: !6)",
        "!6 = !{}",
    ]
    for k, name in enumerate(subs):
        meta.append(f'!{100 + k} = distinct !DISubprogram(name: "{name}", scope: !1, file: !1, '
                    "line: 1, type: !5, scopeLine: 1, spFlags: DISPFlagDefinition | "
                    "DISPFlagOptimized, unit: !0)")
    for (sub, n), node in locs.items():
        meta.append(f"!{node} = !DILocation(line: {n}, column: 5, scope: !{100 + sub})")
    return "\n".join(out) + "\n" + "\n".join(meta) + "\n"
