"""Register pressure on real cubins: ptxas and nvdisasm from NVIDIA's wheels.

The kernels are LLVM IR with line info (tests/analysis/an_kernels.py), taken
through warp_lab's own nvptx and toolchain stages. Expected values come from
nvdisasm's plain ``--life-range-mode count`` listing, read with a one-line
regex here, independently of warp_lab.analysis.liveness.
"""

from __future__ import annotations

import re

import pytest

from an_kernels import (FILENAME, LINE_LOAD_A, LINE_LOAD_B, LINE_STORE, LINE_TID, dot_kernel_ir)
from warp_lab.analysis import AnalysisError, occupancy
from warp_lab.analysis.liveness import live_registers, max_live_per_line, parse_life_ranges
from warp_lab.analysis.registers import (live_registers_per_line, register_cap_whatif,
                                         register_pressure)
from warp_lab.compiler import linemap, nvptx, toolchain
from warp_lab.compiler.artifact import CompiledKernel, Resources, SourceMap
from warp_lab.options import CompileOptions
from warp_lab.errors import ToolchainError
from warp_lab.lang.kernel import Source

ARCH = "sm_90"


def _tools_or_skip():
    try:
        toolchain.find_tool("ptxas", 90)
        toolchain.find_tool("nvdisasm", 90)
    except ToolchainError as exc:
        pytest.skip(f"NVIDIA tools missing: {exc}")


def _compile(n: int, **options) -> CompiledKernel:
    """What wl.compile produces, built from the stages directly."""
    _tools_or_skip()
    opts = CompileOptions(arch=ARCH, **options)
    ir = dot_kernel_ir(n)
    ir_opt, ptx = nvptx.make_ptx(ir, opts, "dot")
    cubin, res, _ = toolchain.make_cubin(ptx, opts, "dot")
    sass = toolchain.make_sass(cubin, ARCH)
    lm = linemap.build_line_map(ir_opt, ptx, sass, FILENAME)
    return CompiledKernel(name="dot", entry="dot", source=Source("", FILENAME), options=opts,
                          params=(), param_layout=(), launch_ndim=1, llvm_ir=ir,
                          llvm_ir_optimized=ir_opt, ptx=ptx, cubin=cubin, sass=sass,
                          resources=res, source_map=SourceMap(lm, FILENAME))


def _nvdisasm(cubin: bytes, *args: str) -> str:
    return toolchain.make_sass(cubin, ARCH, args)


@pytest.fixture(scope="module")
def wide():
    return _compile(40)


@pytest.fixture(scope="module")
def spilling():
    return _compile(40, maxrregcount=32)


def _count_column(cubin: bytes, arch: str = ARCH) -> dict[int, int]:
    """Offset -> the first number of the table: the GPR ``#`` column."""
    text = toolchain.make_sass(cubin, arch, ("--life-range-mode", "count"))
    return {int(m.group(1), 16): int(m.group(2))
            for m in re.finditer(r"/\*([0-9a-f]{4})\*/[^\n]*?//\s*\|\s*(\d+)", text)}


def test_per_line_maximum_is_the_maximum_over_its_instructions(wide):
    pressure = register_pressure(wide)
    counts = _count_column(wide.cubin)
    assert pressure.per_instruction == counts
    lines = wide.source_map.rows_of("sass_offsets")
    assert {LINE_TID, LINE_LOAD_A, LINE_LOAD_B, LINE_STORE} <= set(lines)
    for line, offsets in lines.items():
        assert pressure.per_line[line] == max(counts[o] for o in offsets if o in counts)
    assert set(pressure.per_line) == set(lines)
    assert live_registers_per_line(wide) == dict(pressure.per_line)
    # nvdisasm gives every instruction a count except the NOP padding after the end
    texts = dict(re.findall(r"/\*([0-9a-f]{4})\*/\s*([^;]*);", wide.sass))
    uncounted = {o for offs in lines.values() for o in offs} - set(counts)
    assert all(texts[f"{o:04x}"].strip() == "NOP" for o in uncounted)


def test_live_registers_bounded_by_ptxas_count(wide):
    pressure = register_pressure(wide)
    assert pressure.registers == wide.resources.registers
    assert 0 < pressure.max_live <= wide.resources.registers
    # 80 loads issued before the first multiply: the second batch of loads
    # sees far more live values than the index computation
    assert pressure.per_line[LINE_LOAD_B] > pressure.per_line[LINE_TID] + 20
    assert pressure.max_live == max(pressure.per_line.values())


def test_parse_modes_agree_and_keep_register_files(wide):
    rows = {m: parse_life_ranges(_nvdisasm(wide.cubin, "--life-range-mode", m))
            for m in ("wide", "narrow", "count")}
    assert rows["wide"] == rows["narrow"] == rows["count"]
    first = rows["wide"][0]
    assert first.offset == 0 and first.section == "dot" and first.function == "dot"
    assert "GPR" in first.live and "UGPR" in first.live
    assert live_registers(rows["wide"]) == {r.offset: r.gpr for r in rows["wide"]}


def test_spills_are_located(spilling):
    assert spilling.resources.spill_stores > 0
    pressure = register_pressure(spilling)
    assert pressure.max_live <= spilling.resources.registers <= 32
    assert pressure.spill_offsets
    texts = {r.offset: r.text for r in pressure.instructions}
    assert all(re.match(r"(STL|LDL)", texts[o]) for o in pressure.spill_offsets)
    assert pressure.spill_lines and set(pressure.spill_lines) <= set(spilling.source_map.rows_of("sass_offsets"))
    assert pressure.to_dict()["spill_lines"] == list(pressure.spill_lines)
    assert not register_pressure(_compile(4)).spill_offsets


def test_several_entries_need_a_name(wide):
    _tools_or_skip()
    opts = CompileOptions(arch=ARCH, lineinfo=False)
    ptx_a = nvptx.make_ptx(dot_kernel_ir(4, "first"), opts, "first")[1]
    ptx_b = nvptx.make_ptx(dot_kernel_ir(6, "second"), opts, "second")[1]
    # one module with both entries; the second's .file line would clash
    body_b = ptx_b[ptx_b.index(".visible"):].splitlines()
    both = ptx_a + "\n" + "\n".join(x for x in body_b if not x.lstrip().startswith(".file"))
    cubin, _, _ = toolchain.make_cubin(both, opts, "first")
    sass = _nvdisasm(cubin, "--print-life-ranges")
    with pytest.raises(AnalysisError, match="several entries"):
        live_registers(sass)
    first, second = live_registers(sass, "first"), live_registers(sass, "second")
    assert min(first) == min(second) == 0  # offsets restart in each entry's section
    with pytest.raises(AnalysisError, match="no entry 'third'"):
        live_registers(sass, "third")
    assert register_pressure(cubin=cubin, arch=ARCH, entry="second").entry == "second"


def test_sass_without_life_ranges_is_refused(wide):
    with pytest.raises(AnalysisError, match="--print-life-ranges"):
        parse_life_ranges(wide.sass)


def test_max_live_per_line_skips_lines_without_counts():
    assert max_live_per_line({0: 3, 16: 9, 32: 4}, {5: (0, 16), 6: (32,), 7: (48,)}) == \
        {5: 9, 6: 4}


def test_register_cap_whatif(wide):
    caps = register_cap_whatif(wide, caps=(None, 64, 32), block_size=256)
    assert [c.maxrregcount for c in caps] == [None, 64, 32]
    uncapped, cap64, cap32 = caps
    assert cap64.registers <= 64 and cap32.registers <= 32
    assert cap32.spill_stores > 0 and uncapped.spill_stores == 0
    for c in caps:  # each row's occupancy is the model's for its register count
        assert c.occupancy == occupancy(registers=c.registers, arch=ARCH, block_size=256)
    assert cap32.occupancy.occupancy >= uncapped.occupancy.occupancy
    assert cap32.to_dict()["registers"] == cap32.registers
    with pytest.raises(AnalysisError, match="1..255"):
        register_cap_whatif(wide, caps=(300,))
    with pytest.raises(AnalysisError, match="1..255, not True"):  # was --maxrregcount 1
        register_cap_whatif(wide, caps=(None, True))
    with pytest.raises(AnalysisError, match="ptx="):
        register_cap_whatif(ptx="", arch=ARCH)


def test_arch_spelled_as_elsewhere_in_analysis(wide):
    # 90, "9.0" and (9, 0) name sm_90 for occupancy; the tool-running calls take them too
    # (they were an AttributeError/IndexError from sm_number deep in the toolchain)
    want = register_pressure(cubin=wide.cubin, arch=ARCH, entry="dot").per_instruction
    for arch in (90, "9.0", (9, 0)):
        got = register_pressure(cubin=wide.cubin, arch=arch, entry="dot")
        assert got.arch == ARCH and got.per_instruction == want
    capped = register_cap_whatif(ptx=wide.ptx, arch=90, entry="dot", caps=(64,))
    assert capped[0].registers <= 64 and capped[0].occupancy.arch == ARCH


def test_kernel_without_cubin():
    ck = CompiledKernel(name="k", entry="k", source=Source("", "x.py"), options=CompileOptions(),
                        params=(), param_layout=(), launch_ndim=1, llvm_ir="", llvm_ir_optimized="",
                        ptx="", missing={"cubin": "ptxas not found"})
    with pytest.raises(AnalysisError, match="ptxas not found"):
        register_pressure(ck)
    with pytest.raises(AnalysisError, match="not Resources"):
        register_pressure(Resources("sm_90", registers=8))


def test_register_pressure_of_a_wl_compiled_kernel():
    """The whole pipeline: a @wl.kernel through wl.compile, then the analysis."""
    _tools_or_skip()
    import warp_lab as wl
    from warp_lab.compiler.pipeline import compile as wl_compile

    @wl.kernel
    def horner(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
        i = wl.tid()
        v = x[i]
        y[i] = ((((v * 0.5 + 1.0) * v - 2.0) * v + 3.0) * v - 4.0) * v + 5.0

    ck = wl_compile(horner, arch=ARCH, cache=False)
    pressure = register_pressure(ck)
    counts = _count_column(ck.cubin)
    assert pressure.per_instruction == counts
    assert ck.source_map.rows_of("sass_offsets") and set(pressure.per_line) == set(ck.source_map.rows_of("sass_offsets"))
    for line, offsets in ck.source_map.rows_of("sass_offsets").items():
        assert pressure.per_line[line] == max(counts[o] for o in offsets if o in counts)
    assert 0 < pressure.max_live <= ck.resources.registers
    assert occupancy(ck, block_size=128) == occupancy(
        registers=ck.resources.registers, shared=ck.resources.shared,
        barriers=ck.resources.barriers, arch=ARCH, block_size=128)
    (uncapped,) = register_cap_whatif(ck, caps=(None,))
    assert uncapped.registers <= 255 and uncapped.spill_stores == 0


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_86", "sm_89", "sm_100", "sm_120"])
def test_live_registers_bounded_on_every_cuda13_arch(arch):
    """nvdisasm's life ranges stay within ptxas's count on each arch CUDA 13 handles."""
    _tools_or_skip()
    opts = CompileOptions(arch=arch, lineinfo=False)
    ptx = nvptx.make_ptx(dot_kernel_ir(24), opts, "dot")[1]
    cubin, res, _ = toolchain.make_cubin(ptx, opts, "dot")
    pressure = register_pressure(cubin=cubin, arch=arch, resources=res)
    assert 24 < pressure.max_live <= res.registers  # 48 values are loaded before use
    assert pressure.per_instruction == _count_column(cubin, arch)

