"""The NVPTX stage, ptxas/nvdisasm and the line map, started from hand-written LLVM IR.

These tests need no front end: they check the back half of the pipeline on
IR whose every line we know (Triton's "any stage can be the starting point").
"""

import re

import pytest

from warp_lab.compiler import linemap, nvptx, toolchain
from warp_lab.options import SUPPORTED_ARCHS, CompileOptions, check_arch
from warp_lab.errors import InternalCompilerError, ToolchainError

# line 3 of "<cell 7>" loads, line 4 calls expf, line 5 stores
IR = r'''
target triple = "nvptx64-nvidia-cuda"
define ptx_kernel void @k(ptr addrspace(1) %x, float %a) !dbg !5 {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x(), !dbg !10
  %p = getelementptr float, ptr addrspace(1) %x, i32 %t, !dbg !10
  %v = load float, ptr addrspace(1) %p, !dbg !10
  %e = call float @__nv_expf(float %v), !dbg !11
  %m = fmul float %e, %a, !dbg !12
  store float %m, ptr addrspace(1) %p, !dbg !12
  ret void, !dbg !12
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare float @__nv_expf(float)
!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3, !4}
!0 = distinct !DICompileUnit(language: DW_LANG_Python, file: !1, producer: "warp_lab", isOptimized: true, runtimeVersion: 0, emissionKind: DebugDirectivesOnly)
!1 = !DIFile(filename: "<cell 7>", directory: "")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 2, !"Dwarf Version", i32 4}
!5 = distinct !DISubprogram(name: "k", scope: !1, file: !1, line: 1, type: !6, scopeLine: 1, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!6 = !DISubroutineType(types: !7)
!7 = !{}
!10 = !DILocation(line: 3, column: 5, scope: !5)
!11 = !DILocation(line: 4, column: 9, scope: !5)
!12 = !DILocation(line: 5, column: 5, scope: !5)
'''


@pytest.fixture(scope="module")
def sm90():
    opts = CompileOptions(arch="sm_90", opt=3)
    ir_opt, ptx = nvptx.make_ptx(IR, opts, "k")
    cubin, res, log = toolchain.make_cubin(ptx, opts, "k")
    return opts, ir_opt, ptx, cubin, res, log


def test_ptx_is_an_optimised_entry_with_libdevice_inlined(sm90):
    _, ir_opt, ptx, *_ = sm90
    assert ".visible .entry k(" in ptx
    assert ".target sm_90\n" in ptx  # no ", debug": ptxas must optimise
    assert "__nv_expf" not in ptx and "__nvvm_reflect" not in ptx
    assert "ex2.approx" in ptx  # libdevice's expf is built on ex2
    # only what is used of libdevice survives
    assert len(re.findall(r"^define ", ir_opt, re.M)) == 1


def test_ptxas_resources_parsed(sm90):
    *_, cubin, res, log = sm90
    assert cubin[:4] == b"\x7fELF"
    used = int(re.search(r"Used (\d+) registers", log).group(1))
    assert res.registers == used > 0
    assert res.arch == "sm_90" and res.spill_stores == 0 and not res.spills


def test_line_map_from_ptx_and_sass(sm90):
    opts, ir_opt, ptx, cubin, _, _ = sm90
    sass = toolchain.make_sass(cubin, "sm_90")
    lm = linemap.build_line_map(ir_opt, ptx, sass, "<cell 7>")
    lines = ptx.splitlines()
    assert any("ld.global" in lines[n - 1] for n in lm.ptx[3])
    assert any("st.global" in lines[n - 1] for n in lm.ptx[5])
    assert any("ex2.approx" in lines[n - 1] for n in lm.ptx[4])
    sass_lines = sass.splitlines()
    assert any("LDG" in sass_lines[n - 1] for n in lm.sass_lines[3])
    assert any("STG" in sass_lines[n - 1] for n in lm.sass_lines[5])
    for py, offsets in lm.sass.items():
        for off in offsets:
            assert lm.python_line_of_sass(off) == py
    assert any("store float" in ir_opt.splitlines()[n - 1] for n in lm.llvm[5])
    assert linemap.build_line_map(ir_opt, ptx, sass, "<other>").ptx == {}


@pytest.mark.parametrize("arch", sorted(SUPPORTED_ARCHS, key=lambda a: int(a[3:])))
def test_every_supported_arch_assembles(arch):
    opts = CompileOptions(arch=arch, opt=3)
    _, ptx = nvptx.make_ptx(IR, opts, "k")
    version = re.search(r"^\.version (\S+)", ptx, re.M).group(1)
    assert version == SUPPORTED_ARCHS[arch]
    cubin, res, _ = toolchain.make_cubin(ptx, opts, "k")
    assert res.registers > 0 and cubin


def test_sass_for_old_arch_is_missing_with_reason():
    opts = CompileOptions(arch="sm_70", opt=3)
    _, ptx = nvptx.make_ptx(IR, opts, "k")
    cubin, _, _ = toolchain.make_cubin(ptx, opts, "k")
    try:
        sass = toolchain.make_sass(cubin, "sm_70")
    except ToolchainError as exc:
        assert "13.0 or older" in str(exc)
    else:  # a CUDA <= 13.0 toolkit under CUDA_HOME can do it
        assert "/*0000*/" in sass


@pytest.mark.parametrize("name, version, old_enough", [
    ("nvdisasm", "13.0", True), ("nvdisasm", "12.4", True), ("nvdisasm", "13.1", False),
    ("nvdisasm", "13.5", False), ("ptxas", "12.9", True), ("ptxas", "13.0", False),
    ("nvdisasm", "unknown", False)])
def test_which_releases_handle_sm_50_to_72(name, version, old_enough):
    # nvdisasm 13.5 itself: 'CUDA architecture "SM70" is deprecated. Please use CUDA
    # toolkit 13.0 or earlier'; ptxas 13.x rejects --gpu-name sm_70 (TOOLCHAIN.md)
    assert toolchain.Tool(name, "/x", version).handles_pre_turing is old_enough


def test_old_arch_nvdisasm_is_looked_for_under_cuda_home(tmp_path, monkeypatch):
    """CUDA_HOME's nvdisasm is tried for sm_70 (it used to be passed over whenever the
    wheel's was installed); a 13.5 one there is named as too new in the error."""
    real = toolchain.find_tool("nvdisasm", 90)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "nvdisasm").symlink_to(real.path)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    toolchain.find_tool.cache_clear()
    try:
        with pytest.raises(ToolchainError) as info:
            toolchain.find_tool("nvdisasm", 70)
    finally:
        toolchain.find_tool.cache_clear()
    message = str(info.value)
    assert f"{tmp_path / 'bin' / 'nvdisasm'} ({real.version})" in message
    assert "13.0 or older" in message and "CUDA_HOME" in message


def test_o0_resolves_reflect_and_fast_math_sets_ftz():
    _, ptx0 = nvptx.make_ptx(IR, CompileOptions(opt=0), "k")
    assert "__nvvm_reflect" not in ptx0
    # libdevice's expf takes the flush-to-zero path only under nvvm-reflect-ftz
    _, ptx_fast = nvptx.make_ptx(IR, CompileOptions(fast_math=True), "k")
    _, ptx_strict = nvptx.make_ptx(IR, CompileOptions(), "k")
    assert ptx_fast.count(".ftz") > ptx_strict.count(".ftz")


def test_invalid_ir_is_an_internal_error():
    with pytest.raises(InternalCompilerError, match="nvptx"):
        nvptx.make_ptx("define void @f() { ret i32 0 }", CompileOptions(), "f")


def test_unknown_arch_lists_supported():
    with pytest.raises(ValueError, match="sm_90"):
        check_arch("sm_91")


def test_ptxas_failure_carries_command_and_log():
    bad = ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k() { frob.u32 %r1; }\n"
    with pytest.raises(ToolchainError) as info:
        toolchain.make_cubin(bad, CompileOptions(), "k")
    err = info.value
    assert err.returncode not in (None, 0) and "ptxas" in err.argv[0]
    assert "frob" in err.log or "syntax" in err.log.lower()


def test_a_tool_that_cannot_say_its_version_is_unknown_not_a_crash(tmp_path):
    # a tool that cannot run (no such file, not executable) or prints no "release X.Y":
    # "unknown", major 0, and running it for real is the ToolchainError that says why
    plain = tmp_path / "ptxas"
    plain.write_text("not a program\n")
    for path in (str(tmp_path / "missing"), str(plain)):
        assert toolchain._version_of(path) == "unknown"
    tool = toolchain.Tool("ptxas", str(plain), "unknown")
    assert tool.major == 0 and toolchain.Tool("ptxas", "/x", "13.5").major == 13
    with pytest.raises(ToolchainError, match="could not be run"):
        toolchain._run(tool, ["--version"], str(tmp_path))


def test_parse_ptxas_log_multi_function():
    log = """ptxas info    : 16 bytes gmem
ptxas info    : Function properties for helper
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Compiling entry function 'k' for 'sm_80'
ptxas info    : Function properties for k
    24 bytes stack frame, 16 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 4096 bytes smem, 368 bytes cmem[0], 8 bytes cmem[2]
"""
    res = toolchain.parse_ptxas_log(log, "k", "sm_80")
    assert (res.registers, res.barriers, res.shared, res.const) == (40, 1, 4096, 376)
    assert (res.stack_frame, res.spill_stores, res.spill_loads) == (24, 16, 12)
    assert res.global_bytes == 16 and res.spills


def test_local_memory_is_what_ptxas_reports_of_it():
    """Resources.local: 'lmem' (older ptxas), else the cumulative stack size, else the frame."""
    head = ("ptxas info    : Compiling entry function 'k' for 'sm_80'\n"
            "ptxas info    : Function properties for k\n"
            "    176 bytes stack frame, 528 bytes spill stores, 540 bytes spill loads\n")
    cumulative = head + ("ptxas info    : Used 64 registers, used 0 barriers, 200 bytes "
                         "cumulative stack size, 400 bytes cmem[0]\n")
    res = toolchain.parse_ptxas_log(cumulative, "k", "sm_80")
    assert (res.stack_frame, res.local, res.spill_stores) == (176, 200, 528)
    plain = head + "ptxas info    : Used 64 registers, 400 bytes cmem[0]\n"
    assert toolchain.parse_ptxas_log(plain, "k", "sm_80").local == 176
    old = head + "ptxas info    : Used 64 registers, 96 bytes lmem, 400 bytes cmem[0]\n"
    assert toolchain.parse_ptxas_log(old, "k", "sm_80").local == 96


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_spills_are_local_memory_in_the_resources(tmp_path, arch):
    """With --maxrregcount the spills sit in the stack frame, which is the thread's local
    memory: Resources.local is ptxas's own 'cumulative stack size', not 0."""
    import re as re_

    import warp_lab as wl

    path = tmp_path / "spiller.py"
    path.write_text("import warp_lab as wl\n" + SPILLER)
    ns: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    ck = wl.compile(ns["many_live"], arch=arch, maxrregcount=16, cache=False, sass=False)
    _, res, log = toolchain.make_cubin(ck.ptx, ck.options, ck.entry)
    stack = int(re_.search(r"(\d+) bytes cumulative stack size", log).group(1))
    assert res == ck.resources and res.spills
    assert res.local == stack == res.stack_frame > 0


def test_compact_sass_keeps_code_line_info_and_labels_only(sm90):
    *_, cubin, _, _ = sm90
    raw = toolchain.make_sass(cubin, "sm_90")
    compact = toolchain.compact_sass(raw)
    insn = re.compile(r"/\*[0-9a-f]{4}\*/")
    kept = [l for l in raw.splitlines() if insn.search(l) and "NOP" not in l]
    assert [l for l in compact.splitlines() if insn.search(l)] == kept
    assert compact.count('//## File "<cell 7>"') == raw.count('//## File "<cell 7>"')
    assert compact.splitlines()[0] == "k:"
    for noise in (".section", ".elftype", ".size", ".other", "//----", "SYMBOLS"):
        assert noise in raw and noise not in compact


SPILLER = '''
@wl.kernel
def many_live(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    i = wl.tid()
    a = wl.local_array(24, wl.float32)
    for k in range(24):
        a[k] = x[i * 24 + k]
    s = 0.0
    for k in range(24):
        s += a[k] * a[23 - k] + a[(k * 7) % 24]
    y[i] = s
'''


@pytest.mark.parametrize("name", ["saxpy", "matmul_tiled", "spmv_csr", "warp_scan_vote"])
def test_listing_without_dataflow_is_the_full_listing_when_nothing_spills(name):
    # disassemble() drops nvdisasm's dataflow pass when ptxas reports no spills;
    # the reference is nvdisasm's own listing with the pass
    import warp_lab as wl
    from warp_lab.examples import get

    ck = wl.compile(get(name).kernel, arch="sm_90", cache=False, sass=False)
    assert not ck.resources.spills
    listing, ranges = toolchain.disassemble(ck.cubin, "sm_90", spills=False)
    assert ranges is None
    assert listing == toolchain.make_sass(ck.cubin, "sm_90", compact=True)


def test_spilling_kernel_keeps_nvdisasms_spill_notes(tmp_path):
    import warp_lab as wl

    path = tmp_path / "spiller.py"
    path.write_text("import warp_lab as wl\n" + SPILLER)
    ns: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    ck = wl.compile(ns["many_live"], arch="sm_90", maxrregcount=16, cache=False)
    assert ck.resources.spill_stores > 0 and ck.resources.spill_loads > 0
    # nvdisasm's dataflow analysis marks spill code; the listing keeps it then
    assert ck.sass.count('(*"SpillRefill"*)') >= 2
    without = toolchain.disassemble(ck.cubin, "sm_90", spills=False)[0]
    assert "SpillRefill" not in without


def test_listing_and_life_ranges_come_from_one_call(sm90):
    from warp_lab.analysis.liveness import parse_life_ranges

    *_, cubin, _, _ = sm90
    listing, ranges = toolchain.disassemble(cubin, "sm_90", life_ranges=True)
    assert listing == toolchain.make_sass(cubin, "sm_90", compact=True)
    # counts only, the same counts as nvdisasm's wide table
    wide = parse_life_ranges(toolchain.make_sass(cubin, "sm_90", ("--print-life-ranges",)))
    counted = parse_life_ranges(ranges)
    assert [(r.offset, dict(r.live)) for r in counted] == [(r.offset, dict(r.live)) for r in wide]
    assert len(counted) == listing.count("*/") and len(ranges) < len(
        toolchain.make_sass(cubin, "sm_90", ("--print-life-ranges",)))
    assert toolchain.disassemble(cubin, "sm_90", listing=False) == (None, None)
    assert toolchain.disassemble(cubin, "sm_90", listing=False, life_ranges=True)[1] == ranges


def test_the_same_kernel_twice_gives_the_same_ptx():
    """NVPTX numbers call sequences (printf's vprintf calls) with a counter of the target
    machine, which the process keeps: the second compile's comments said callseq 2, 3 where
    the first said 0, 1, so a --diff of an edited printf kernel showed every call changed."""
    import warp_lab as wl
    from warp_lab.examples import get

    kernel = get("hello_printf").kernel
    first = wl.compile(kernel, arch="sm_90", cache=False, sass=False).ptx
    second = wl.compile(kernel, arch="sm_90", cache=False, sass=False).ptx
    assert "// callseq 0" in first
    assert second == first
