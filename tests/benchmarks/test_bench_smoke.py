"""Smoke tests of the benchmark suite: modules import, every peer twin is well-formed.

Real tools throughout: NVRTC compiles each CUDA C++ twin and ptxas (the same
one warp_lab uses) accepts the PTX; Numba and Warp twins compile to PTX in a
fresh process (Numba's simulator switch and Warp's banner stay out of this
one) and ptxas accepts that too; the Numba twins also run on Numba's CUDA
simulator against the corpus's numpy references. The SASS counter is checked against the
cubin's own ELF section sizes.
"""

from __future__ import annotations

import importlib
import json
import os
import struct
import subprocess
import sys

import pytest

from benchmarks import peers, quality, report
from benchmarks.kernels import BENCH_KERNELS, cuda_src, warp_lab_kernel
from warp_lab.compiler import toolchain
from warp_lab.options import CompileOptions

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _have(module: str) -> bool:
    try:  # find_spec imports the parent package, which may itself be missing
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


def test_modules_import_and_kernel_list_is_the_issue_list():
    for mod in ("benchmarks.run_all", "benchmarks.worker", "benchmarks.report",
                "benchmarks.quality", "benchmarks.peers", "benchmarks.kernels.cuda_src"):
        importlib.import_module(mod)
    assert len(BENCH_KERNELS) == 12 and set(cuda_src.SOURCES) == set(BENCH_KERNELS)
    for name in BENCH_KERNELS:                       # the warp_lab form is the corpus kernel
        assert warp_lab_kernel(name).name == name


@pytest.mark.skipif(not _have("cuda.bindings"), reason="cuda-python not installed")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_cuda_twins_compile_with_nvrtc_and_ptxas(arch):
    for name in BENCH_KERNELS:
        try:
            ptx, entry = peers.nvrtc_ptx(name, arch)
        except peers.PeerUnavailable as exc:
            pytest.skip(f"NVRTC unavailable: {exc}")
        assert entry == name and peers.entry_names(ptx) == [name]
        assert f".target {arch}" in ptx
        _, res, _ = toolchain.make_cubin(ptx, CompileOptions(arch=arch, lineinfo=False), entry)
        assert 0 < res.registers <= 255 and not res.spills, (name, res)


@pytest.mark.skipif(not _have("cuda.bindings"), reason="cuda-python not installed")
def test_restrict_variant_reaches_the_read_only_path():
    try:
        plain, _ = peers.nvrtc_ptx("saxpy", "sm_90")
        restrict, _ = peers.nvrtc_ptx("saxpy", "sm_90", restrict=True)
    except peers.PeerUnavailable as exc:
        pytest.skip(f"NVRTC unavailable: {exc}")
    assert quality.ptx_features(plain)["ld_global_nc"] == 0
    assert quality.ptx_features(restrict)["ld_global_nc"] == 1


_PEER_SCRIPT = """
import json, sys
from benchmarks import peers
fn = {"numba": peers.numba_ptx, "warp": peers.warp_ptx}[sys.argv[1]]
out = {}
for name in sys.argv[2].split(","):
    try:
        out[name] = list(fn(name, "sm_90"))
    except peers.PeerUnavailable as exc:
        out[name] = str(exc)
with open(sys.argv[3], "w") as f:
    json.dump(out, f)
"""


def _peer_ptx(tool: str, tmp_path) -> dict:
    out = tmp_path / f"{tool}.json"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    proc = subprocess.run([sys.executable, "-c", _PEER_SCRIPT, tool, ",".join(BENCH_KERNELS),
                           str(out)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(out.read_text())


@pytest.mark.skipif(not _have("numba.cuda"), reason="numba-cuda not installed")
def test_numba_twins_compile_and_assemble(tmp_path):
    got = _peer_ptx("numba", tmp_path)
    assert set(got) == set(BENCH_KERNELS)
    for name, val in got.items():
        assert isinstance(val, list), f"{name}: {val}"     # every kernel has a Numba twin
        ptx, entry = val
        assert name in entry                               # Numba mangles the Python name
        _, res, _ = toolchain.make_cubin(ptx, CompileOptions(arch="sm_90", lineinfo=False),
                                         entry)
        assert res.registers > 0 and not res.spills, (name, res)


@pytest.mark.skipif(not _have("warp"), reason="warp-lang not installed")
def test_warp_twins_compile_and_assemble_or_say_why(tmp_path):
    from benchmarks.kernels.warp_twins import MISSING, TWINS   # imports warp: no GPU needed

    got = _peer_ptx("warp", tmp_path)
    assert set(TWINS) | set(MISSING) == set(BENCH_KERNELS)
    for name in MISSING:
        assert got[name] == MISSING[name]
    for name in TWINS:
        ptx, entry = got[name]
        assert entry.startswith(name) and entry.endswith("_cuda_kernel_forward")
        _, res, _ = toolchain.make_cubin(ptx, CompileOptions(arch="sm_90", lineinfo=False),
                                         entry)
        assert res.registers > 0, (name, res)


_SIM_SCRIPT = """
import json, os, sys
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
from numba import cuda
from benchmarks.kernels import numba_twins
from warp_lab.examples import get
out = {}
for name in sys.argv[1].split(","):
    ex = get(name)
    args = ex.make_inputs()
    before = [a.copy() if hasattr(a, "copy") else a for a in args]
    grid, block = ex.launch(args).grid_block()
    try:
        cuda.jit(numba_twins.signature_of(name)[0])[grid, block](*args)
        ex.check(before, args)
        out[name] = "ok"
    except Exception as exc:
        out[name] = f"{type(exc).__name__}: {exc}"
with open(sys.argv[2], "w") as f:
    json.dump(out, f)
"""

#: twins the Numba simulator cannot run (its limits, not the twins')
_SIM_CANNOT = {"warp_sum": "the simulator has no cuda.shfl_down_sync",
               "nbody_step": "the simulator has no libdevice.rsqrtf"}


@pytest.mark.skipif(not _have("numba.cuda"), reason="numba-cuda not installed")
def test_numba_twins_compute_what_the_corpus_references_say(tmp_path):
    """Each Numba twin, run on Numba's CUDA simulator with the corpus kernel's own inputs and
    launch, matches that kernel's numpy reference: the twins do the same work."""
    names = [n for n in BENCH_KERNELS if n not in _SIM_CANNOT]
    out = tmp_path / "sim.json"
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    proc = subprocess.run([sys.executable, "-c", _SIM_SCRIPT, ",".join(names), str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(out.read_text()) == {n: "ok" for n in names}


def _elf_text_bytes(cubin: bytes) -> int:
    """Total size of the ``.text.*`` sections of an ELF64 cubin (read with struct)."""
    (shoff,) = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)

    def section(i):
        return struct.unpack_from("<IIQQQQ", cubin, shoff + i * shentsize)

    names_off = section(shstrndx)[4]
    total = 0
    for i in range(shnum):
        name_idx, _, _, _, _, size = section(i)
        end = cubin.index(b"\0", names_off + name_idx)
        if cubin[names_off + name_idx:end].startswith(b".text."):
            total += size
    return total


@pytest.mark.skipif(not _have("cuda.bindings"), reason="cuda-python not installed")
def test_sass_count_matches_the_cubin_text_size():
    try:
        ptx, entry = peers.nvrtc_ptx("block_sum", "sm_90")
    except peers.PeerUnavailable as exc:
        pytest.skip(f"NVRTC unavailable: {exc}")
    cubin, _, _ = toolchain.make_cubin(ptx, CompileOptions(arch="sm_90", lineinfo=False), entry)
    sass = toolchain.make_sass(cubin, "sm_90")
    counted = quality.count_sass(sass)
    nops = sass.count(" NOP;")
    # every sm_90 instruction is 16 bytes; the counter leaves out NOPs and one self-branch
    assert sum(counted.values()) + nops + 1 == _elf_text_bytes(cubin) // 16
    assert quality.count_cubin(cubin) == sum(counted.values())   # the nvdisasm-free count
    assert counted["BAR.SYNC.DEFER_BLOCKING"] >= 1 and counted["EXIT"] >= 1


def test_ptx_features_on_hand_written_ptx():
    ptx = """
    ld.param.u64 %rd1, [p0];
    ld.param.v2.u32 {%r1, %r2}, [p1];
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.s32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.nc.f32 %f1, [%rd4];
    ld.global.v4.f32 {%f2, %f3, %f4, %f5}, [%rd4];
    ld.f32 %f6, [%rd4];
    @%p1 bra $L__BB0_2;
    st.shared.f32 [%r3], %f1;
    st.f32 [%rd4], %f6;
    add.s32 %r4, %r1, %r2;
    """
    f = quality.ptx_features(ptx)
    assert f == {"ld_global": 2, "ld_global_nc": 1, "st_global": 0, "ld_shared": 0,
                 "st_shared": 1, "ld_generic": 1, "st_generic": 1, "vector_mem": 1,
                 "int64_arith": 2, "cvta": 1, "call": 0, "cvt": 0, "setp": 0, "bra": 1}


def _q(regs, sass, spill=0):
    return {"registers": regs, "sass_instructions": sass, "spill_stores": spill,
            "spill_loads": 0, "shared": 0, "stack_frame": 0, "sass_ops": {}, "ptx": {}}


def test_quality_targets_thresholds():
    names = [f"k{i}" for i in range(10)]
    rows = {n: {"warp_lab": _q(10, 110), "nvrtc": _q(10, 100)} for n in names}
    rows["k0"]["warp_lab"] = _q(11, 100)                   # 9/10 registers ≤ NVRTC: 90 %
    lines = report.quality_targets([{"arch": "sm_90", "kernels": rows}], names)
    assert lines[0].startswith("- PASS") and "9/10" in lines[0]
    assert lines[1].startswith("- PASS")                   # 110/100 is within 10 %
    rows["k1"]["warp_lab"] = _q(12, 111, spill=8)          # 8/10 registers; 11 % more SASS
    lines = report.quality_targets([{"arch": "sm_90", "kernels": rows}], names)
    assert lines[0].startswith("- FAIL") and "k1/sm_90 (12 vs 10)" in lines[0]
    assert lines[1].startswith("- FAIL") and "k1/sm_90" in lines[1]
    assert lines[2].startswith("- FAIL") and "k1/sm_90 (8 B)" in lines[2]


def test_whatif_rewrites_touch_only_what_they_claim():
    from benchmarks import whatif
    from warp_lab.compiler.pipeline import compile as wl_compile

    ck = wl_compile(warp_lab_kernel("stencil_2d"), arch="sm_90", cache=False, lineinfo=False)
    before, after = ck.llvm_ir.splitlines(), whatif.unit_stride(ck.llvm_ir).splitlines()
    changed = [(a, b) for a, b in zip(before, after) if a != b]
    assert len(before) == len(after) and len(changed) == 2        # u and out: innermost stride
    for old, new in changed:
        assert ", 2, 1" in old and "= add i32 0, 1" in new
    assert ", 2, 0" in ck.llvm_ir and ", 2, 0" in "\n".join(after)  # row strides kept
    nsw = whatif.nsw_all("%a = add i32 %b, 1\n%c = mul i64 %d, %e\n%f = fadd float %g, %h")
    assert nsw == "%a = add nsw i32 %b, 1\n%c = mul nsw i64 %d, %e\n%f = fadd float %g, %h"


def test_latency_targets_thresholds():
    lat = {"warp_lab": {"kernels": {"a": {"warm": {"ptx": 0.010}}, "b": {"warm": {"ptx": 0.020}}}},
           "numba": {"kernels": {"a": {"first": {"ptx": 0.050}}, "b": {"first": {"ptx": 0.090}}}},
           "nvrtc": {"kernels": {"a": {"warm": {"ptx": 0.010}}, "b": {"warm": {"ptx": 0.019}}}}}
    lines = report.latency_targets(lat, ["a", "b"])
    assert lines[0].startswith("- FAIL") and "b (4.5×)" in lines[0]   # a is exactly 5×
    assert lines[1].startswith("- FAIL") and "b (20.0 vs 19.0 ms)" in lines[1]


def test_first_compiles_are_the_median_over_fresh_processes():
    from benchmarks.run_all import merge_first_compiles

    def rnd(a, b, warp=None):
        out = {"numba": {"kernels": {"a": {"first": {"ptx": a}}, "b": {"first": {"ptx": b}}}}}
        if warp is not None:
            out["warp"] = {"kernels": {"a": {"first": {"ptx": warp}}}}
        return out

    lat = rnd(0.072, 0.050, warp=0.30)
    lat["numba"]["kernels"]["a"]["warm"] = {"ptx": 0.104}
    rounds = [lat, rnd(0.110, 0.040), {"error": "worker timed out"}, rnd(0.120, 0.060, 0.10),
              rnd(0.100, 0.055, 0.20)]
    merge_first_compiles(lat, rounds)
    a, b = lat["numba"]["kernels"]["a"], lat["numba"]["kernels"]["b"]
    assert a["first"]["ptx"] == pytest.approx(0.105) and a["first_samples"] == 4  # of 4 rounds
    assert a["warm"] == {"ptx": 0.104}                                  # warm repeats untouched
    assert b["first"]["ptx"] == pytest.approx(0.0525) and b["first_samples"] == 4
    # warp: the rounds without it add nothing
    assert lat["warp"]["kernels"]["a"] == {"first": {"ptx": 0.20}, "first_samples": 3}


def test_fuzz_throughput_runs_with_its_default_seed_and_counts_every_kernel(tmp_path):
    # (its warm-up kernel once took seed -1, which numpy refuses: the section said n/a)
    out = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "fuzz_throughput.py"),
                          "--kernels", "2"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, env=dict(os.environ, WARP_LAB_CACHE_DIR=str(tmp_path)))
    assert out.returncode == 0, out.stderr[-2000:]
    header, _, row = out.stdout.strip().splitlines()
    cells = dict(zip([c.strip() for c in header.split("|")], [c.strip() for c in row.split("|")]))
    assert cells["kernels"] == "2" and float(cells["kernels/s"]) > 0
    assert sum(int(cells[k]) for k in ("ok", "internal", "wrong", "findings", "rejected")) == 2
    assert cells["internal"] == cells["wrong"] == "0"
