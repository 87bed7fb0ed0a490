"""CUDA C++ kernels through NVRTC: ``wl.cuda_kernel`` → ``wl.compile`` / ``wl.launch``.

References are independent of warp_lab: numpy for results (the corpus examples'
references), NVRTC's own lowered names and ``c++filt`` for mangled names, the PTX
``.param`` declarations for the parameter layout.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import warp_lab as wl
from benchmarks.kernels import cuda_src
from warp_lab.compiler import cuda_source, nvrtc
from warp_lab.compiler.cuda_pipeline import CudaCompileError, ptx_params
from warp_lab.errors import LaunchError
from warp_lab.examples import get
from warp_lab.lang import types as T

pytest.importorskip("cuda.bindings.nvrtc")


def _nvrtc_ok():
    try:
        nvrtc.load()
    except wl.WarpLabError:
        return False
    return True


pytestmark = pytest.mark.skipif(not _nvrtc_ok(), reason="libnvrtc not installed")


@pytest.mark.parametrize("name", sorted(cuda_src.SOURCES))
def test_twin_runs_on_simulator_and_matches_numpy(name):
    ex = get(name)
    args = ex.make_inputs()
    before = [a.copy() if hasattr(a, "copy") else a for a in args]
    inputs, grid, block = cuda_src.twin_launch(name, args, ex.launch(args))
    k = wl.cuda_kernel(cuda_src.source_of(name), name)
    r = wl.launch(k, grid=grid, block=block, inputs=inputs, device="sim")
    ex.check(before, args)          # numpy's reference
    assert r.sim.findings == []     # correct kernels: nothing found (as compute-sanitizer)
    assert r.compiled.language == "cuda" and r.compiled.entry == name


SIGNATURES = r"""
#include <cuda_fp16.h>
struct Pair { float a, b; };
template <typename T>
__global__ void scale(T* __restrict__ x, T s, size_t n) { if (threadIdx.x < n) x[threadIdx.x] *= s; }
__global__ void __launch_bounds__(128) mixed(const float4* v, int2* w, unsigned u, long long q,
                                             double d, bool b, __half h, unsigned char c,
                                             const float4* again)
{ w[0].x = (int)(v[0].x + again[0].y) + (int)u + (int)q + (int)d + b + (int)__half2float(h) + c; }
extern "C" __global__ void byvalue(Pair p, float* out) { out[0] = p.a + p.b; }
"""


def test_parameters_from_the_signature_and_lowered_names():
    ks = wl.cuda_kernels(SIGNATURES, instantiate=["scale<float>", "scale<double>"])
    assert list(ks) == ["mixed", "byvalue", "scale<float>", "scale<double>"]
    ck = wl.compile(ks["mixed"], sass=False, cache=False)
    assert [(n, repr(t)) for n, t in ck.params] == [
        ("v", "const float4*"), ("w", "int2*"), ("u", "wl.uint32"), ("q", "wl.int64"),
        ("d", "wl.float64"), ("b", "wl.bool"), ("h", "wl.float16"), ("c", "wl.uint8"),
        ("again", "const float4*")]
    # NVRTC's lowered name: the C++ mangled entry, demangled by c++filt to the signature
    assert ck.entry.startswith("_Z5mixed")
    assert ck.written_params == ("w",)
    # the layout is the PTX's .param declarations (size, alignment), offsets in order
    assert [(s.size, s.align) for s in ck.param_layout] == ptx_params(ck.ptx, ck.entry)
    assert not any(s.hidden for s in ck.param_layout)
    sf = wl.compile(ks["scale<float>"], sass=False, cache=False)
    sd = wl.compile(ks["scale<double>"], sass=False, cache=False)
    assert sf.entry != sd.entry and [repr(t) for _, t in sd.params] == [
        "double*", "wl.float64", "wl.uint64"]
    if shutil.which("c++filt"):
        said = subprocess.run(["c++filt", sf.entry], capture_output=True, text=True).stdout
        assert said.strip() == "void scale<float>(float*, float, unsigned long)"


def test_struct_by_value_is_refused_at_its_line():
    k = wl.cuda_kernel(SIGNATURES, "byvalue")
    with pytest.raises(CudaCompileError) as e:
        wl.compile(k, sass=False, cache=False)
    assert "parameter 'p'" in str(e.value) and "Pair" in str(e.value)
    assert e.value.line == 10 and "byvalue(Pair p" in e.value.source_line
    assert e.value.col == e.value.source_line.index("p,") + 1   # the caret under p


@pytest.mark.parametrize("mangled", [
    "_Z8__wl_sigIFvPKfPffiEE", "_Z8__wl_sigIFvPK6float3S2_PfPS0_S4_ifEE",
    "_Z8__wl_sigIFvPffmP6float46__halfbxEE", "_Z8__wl_sigIFvN4cuda3std7complexIfEEPS3_EE"])
def test_demangler_agrees_with_cxxfilt(mangled):
    if not shutil.which("c++filt"):
        pytest.skip("no c++filt")
    said = subprocess.run(["c++filt", mangled], capture_output=True, text=True).stdout.strip()
    # c++filt: "__wl_sig<void (const float*, float*, float, int)>"
    inside = said[said.index("(") + 1: said.rindex(")")]
    ours = ", ".join(t.spelling() for t in cuda_source.demangle_function_type(mangled))
    theirs = re.sub(r"([\w:<>]+) const\*", r"const \1*", inside)   # "float3 const*"
    assert ours.replace(" ", "") == theirs.replace(" ", "")


def test_argument_errors_name_the_parameter():
    k = wl.cuda_kernel(cuda_src.source_of("saxpy"), "saxpy")
    x = np.zeros(64, np.float32)
    with pytest.raises(LaunchError, match=r"parameter 'x' \(const float\*\) expects dtype "
                                          r"float32, got an array of dtype float64"):
        wl.launch(k, grid=1, block=64, inputs=[x.astype(np.float64), x, 1.0, 64], device="sim")
    with pytest.raises(LaunchError, match=r"parameter 'n'.*out of range for int32"):
        wl.launch(k, grid=1, block=64, inputs=[x, x, 1.0, 2**31], device="sim")
    with pytest.raises(LaunchError, match=r"parameter 'y' .*strided"):
        wl.launch(k, grid=1, block=64, inputs=[x, np.zeros(128, np.float32)[::2], 1.0, 64],
                  device="sim")
    with pytest.raises(LaunchError, match=r"not a whole number of blocks.*grid=\(4,\)"):
        wl.launch(k, dim=1000, block_dim=256, inputs=[x, x, 1.0, 64], device="sim")
    nb = wl.cuda_kernel(cuda_src.source_of("nbody_step"), "nbody_step")
    p = np.zeros((8, 3), np.float32)
    with pytest.raises(LaunchError, match=r"parameter 'mass' \(const float\*\) expects an "
                                          r"array"):
        wl.launch(nb, grid=1, block=8, inputs=[p, p, 1.0, p, p, 8, 0.1, 0.1], device="sim")
    with pytest.raises(LaunchError, match=r"'pos' \(const float3\*\) expects an array of "
                                          r"float3 elements"):
        wl.launch(nb, grid=1, block=8, inputs=[p[:, :2].copy(), p, p[:, 0].copy(), p, p, 8,
                                               0.1, 0.1], device="sim")


def test_out_of_bounds_names_parameter_element_and_cpp_line():
    k = wl.cuda_kernel(cuda_src.source_of("saxpy"), "saxpy")
    x = np.arange(1000, dtype=np.float32)
    y = np.ones(1000, np.float32)
    r = wl.launch(k, grid=4, block=256, inputs=[x, y, 2.0, 1024], device="sim")
    (f,) = r.sim.findings
    assert f.kind == "out_of_bounds"
    assert "x[1000] is past the end of x (1000 elements)" in f.message
    src = cuda_src.source_of("saxpy").splitlines()
    assert src[f.source_line - 1].strip() == "y[i] = a * x[i] + y[i];"
    assert np.all(y == 1)    # a faulting launch leaves the arrays as they were


def test_compile_error_is_located_in_the_source():
    src = "extern \"C\" __global__ void k(float* x)\n{\n    x[0] = undefined_name;\n}\n"
    with pytest.raises(CudaCompileError) as e:
        wl.compile(wl.cuda_kernel(src), cache=False)
    err = e.value
    assert (err.line, err.col) == (3, 12)
    assert "undefined_name" in err.message and "undefined_name" in err.source_line
    assert err.log and err.diagnostics[0].line == 3


def test_cache_key_covers_source_defines_and_options():
    src = ("#ifndef SCALE\n#define SCALE 5.0f\n#endif\n"
           "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= SCALE; }\n")
    a = wl.compile(wl.cuda_kernel(src), sass=False)
    again = wl.compile(wl.cuda_kernel(src), sass=False)
    assert "cache" in again.timings and again.ptx == a.ptx
    b = wl.compile(wl.cuda_kernel(src, defines={"SCALE": "3.0f"}), sass=False)
    assert b.cache_key != a.cache_key and "0f40400000" in b.ptx and "0f40A00000" in a.ptx
    c = wl.compile(wl.cuda_kernel(src), sass=False, fast_math=True)
    assert c.cache_key != a.cache_key
    x = np.ones(32, np.float32)
    wl.launch(wl.cuda_kernel(src, defines=["SCALE=3.0f"]), grid=1, block=32, inputs=[x],
              device="sim")
    assert np.all(x == 3)
    assert a.toolchain["nvrtc"] == nvrtc.version()


def test_kernel_names_and_instantiations_are_checked():
    with pytest.raises(wl.KernelCompileError, match="has 3 kernels"):
        wl.cuda_kernel(SIGNATURES.replace("template <typename T>", ""). replace("T", "float"))
    with pytest.raises(wl.KernelCompileError, match="no __global__ function 'nope'"):
        wl.cuda_kernel(SIGNATURES, "nope")
    with pytest.raises(wl.KernelCompileError, match="no __global__ template 'mixed'"):
        wl.cuda_kernels(SIGNATURES, instantiate=["mixed<int>"])
    k = wl.cuda_kernel(SIGNATURES, "scale<int>")
    assert k.name == "scale_int" and T.PointerType is not None
    ck = wl.compile(k, sass=False, cache=False)
    x = np.arange(8, dtype=np.int32)
    wl.launch(ck, grid=1, block=8, inputs=[x, 3, 8], device="sim")
    assert list(x) == [3 * i for i in range(8)]


PLANTED = r"""
#define N 64
extern "C" __global__ void race(const float* x, float* out)
{
    __shared__ float buf[N];
    int t = threadIdx.x;
    buf[t] = x[t];
    out[t] = buf[(t + 1) % N];
}
extern "C" __global__ void uninit(float* out)
{
    __shared__ float tile[N];
    int t = threadIdx.x;
    if (t < N / 2) tile[t] = 1.0f;
    __syncthreads();
    out[t] = tile[N - 1 - t];
}
extern "C" __global__ void divergent(float* out)
{
    __shared__ float s[N];
    int t = threadIdx.x;
    s[t] = t;
    if (t < 40) {
        __syncthreads();
    }
    out[t] = s[t];
}
extern "C" __global__ void oob_write(float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i + 1] = 2.0f * i;
}
"""


def _line(text):
    return next(k for k, line in enumerate(PLANTED.splitlines(), 1) if text in line)


@pytest.mark.parametrize("name, kind, at, said", [
    ("race", "race_raw", "out[t] = buf[(t + 1) % N];", "buf[1], the shared array of line 5"),
    ("uninit", "uninitialized", "out[t] = tile[N - 1 - t];",
     "tile[63], the shared array of line 12"),
    ("divergent", "divergent_barrier", "        __syncthreads();", "(if (t < 40) {)"),
    ("oob_write", "out_of_bounds", "out[i + 1] = 2.0f * i;",
     "out[64] is past the end of out (64 elements)"),
])
def test_planted_bugs_are_found_at_the_cpp_line(name, kind, at, said):
    k = wl.cuda_kernel(PLANTED, name)
    out = np.zeros(64, np.float32)
    inputs = {"race": [np.arange(64, dtype=np.float32), out], "oob_write": [out, 64]}.get(
        name, [out])
    r = wl.launch(k, grid=1, block=64, inputs=inputs, device="sim")
    found = [f for f in r.sim.findings if f.kind == kind]
    assert found, r.sim.findings
    f = found[0]
    assert f.source_line == _line(at) and said in f.message


def test_debugger_steps_a_cuda_kernel_in_its_terms():
    k = wl.cuda_kernel(cuda_src.source_of("block_sum"), "block_sum")
    x = np.arange(512, dtype=np.float32)
    s = wl.debug(k, grid=2, block=256, inputs=[x, np.zeros(2, np.float32), 512])
    src = cuda_src.source_of("block_sum").splitlines()
    line = next(k for k, t in enumerate(src, 1) if "buf[t] += buf[t + s]" in t)
    s.add_breakpoint(line=line)
    stop = s.cont()
    assert stop.source_line == line
    notes = str(s.lanes())
    assert "threadIdx.x > 127" in notes and "wl.thread_idx" not in notes
    np.testing.assert_array_equal(s.shared("buf"), x[:256])   # the __shared__ array by name
    s.run_to_end()
    np.testing.assert_array_equal(s.array("partial"), [x[:256].sum(), x[256:].sum()])


def _code(ptx: str) -> list[str]:
    """PTX instructions and declarations: no comments, .loc/.file lines or the line info's
    .debug_str section (what -lineinfo adds), so NVRTC with and without it compare."""
    ptx = ptx.split("\t.section\t.debug_str")[0]
    return [ln for ln in ptx.splitlines()
            if ln.strip() and not ln.strip().startswith(("//", ".loc", ".file"))]


@pytest.mark.parametrize("name", sorted(cuda_src.SOURCES))
def test_views_ptx_and_resources_are_what_the_benchmarks_measure(name):
    from benchmarks import peers
    from warp_lab.compiler import toolchain
    from warp_lab.compiler.artifact import CompileOptions

    ck = wl.compile(wl.cuda_kernel(cuda_src.source_of(name), name, arch="sm_80"), sass=False)
    ptx, entry = peers.nvrtc_ptx(name, "sm_80")     # NVRTC's defaults, as benchmarks/ runs it
    assert _code(ck.ptx) == _code(ptx)
    _, res, _ = toolchain.make_cubin(ptx, CompileOptions(arch="sm_80", lineinfo=False), entry)
    assert ck.resources == res


def test_a_kernel_is_judged_by_its_own_entry_not_its_neighbours():
    ks = wl.cuda_kernels(PLANTED)
    plain = wl.compile(ks["oob_write"], sass=False)
    shared = wl.compile(ks["race"], sass=False)
    assert plain.ptx == shared.ptx                 # one translation unit, one module
    assert not plain.uses_shared_memory and not plain.has_block_barrier
    assert shared.uses_shared_memory and not shared.has_block_barrier
    assert wl.compile(ks["uninit"], sass=False).has_block_barrier
    r = wl.launch(plain, grid=1, block=64, inputs=[np.zeros(65, np.float32), 64], device="sim")
    assert r.checks == ("memcheck", "barrier")     # "auto": no racecheck for no shared memory


def test_disk_cache_round_trip_keeps_the_c_abi(tmp_path):
    from warp_lab.compiler.cache import KernelCache

    ck = wl.compile(wl.cuda_kernel(cuda_src.source_of("nbody_step"), "nbody_step"), sass=False,
                    cache=False)
    key = "0" * 63 + "1"
    ck = dataclasses.replace(ck, cache_key=key)
    KernelCache(str(tmp_path)).put(key, ck)
    back = KernelCache(str(tmp_path)).get(key)   # a fresh cache: read from disk
    assert back is not None and back.language == "cuda" and back.ptx == ck.ptx
    assert back.params == ck.params and back.param_layout == ck.param_layout
    assert back.source_map.arrays == ck.source_map.arrays and back.written_params == ck.written_params
    ex = get("nbody_step")
    args = ex.make_inputs()
    before = [x.copy() if hasattr(x, "copy") else x for x in args]
    inputs, grid, block = cuda_src.twin_launch("nbody_step", args, ex.launch(args))
    wl.launch(back, grid=grid, block=block, inputs=inputs, device="sim")
    ex.check(before, args)      # numpy's reference


def test_nvrtc_is_not_loaded_at_import_or_definition():
    code = ("import sys, warp_lab as wl\n"
            "k = wl.cuda_kernel('extern \"C\" __global__ void k(float* x) { x[0] = 1.0f; }')\n"
            "print('cuda.bindings.nvrtc' in sys.modules)\n"
            "wl.compile(k, sass=False, cache=False)\n"
            "print('cuda.bindings.nvrtc' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.split() == ["False", "True"], out.stderr


NAMESPACED = r"""
namespace ops {
namespace detail { __device__ float twice(float v) { return 2.0f * v; } }
__global__ void dbl(float* x) { x[threadIdx.x] = detail::twice(x[threadIdx.x]); }
template <typename T> __global__ void add(T* x, T v) { x[threadIdx.x] += v; }
}
__global__ void over(int* x) { x[0] = 1; }
"""


def test_namespaced_kernels_and_overloads():
    ks = wl.cuda_kernels(NAMESPACED, instantiate=["ops::add<float>"])
    assert list(ks) == ["ops::dbl", "over", "ops::add<float>"]
    assert [k.name for k in ks.values()] == ["ops_dbl", "over", "ops_add_float"]
    x = np.ones(4, np.float32)
    wl.launch(ks["ops::dbl"], grid=1, block=4, inputs=[x], device="sim")
    wl.launch(ks["ops::add<float>"], grid=1, block=4, inputs=[x, 0.5], device="sim")
    assert np.all(x == 2.5)
    overloaded = NAMESPACED + "__global__ void over(float* x) { x[0] = 1; }\n"
    with pytest.raises(CudaCompileError, match="overloaded function \"over\""):
        wl.compile(wl.cuda_kernel(overloaded, "over"), cache=False)


def test_cuda_vector_types_by_value_have_cudas_alignment():
    src = ("extern \"C\" __global__ void vb(float* out, float2 c, int n, float4 d, int3 e)\n"
           "{\n    int i = threadIdx.x;\n"
           "    if (i < n) out[i] = c.x * i + c.y + d.w + e.z;\n}\n")
    k = wl.cuda_kernel(src)
    ck = wl.compile(k, sass=False, cache=False)
    assert [repr(t) for _, t in ck.params] == ["float*", "float2", "wl.int32", "float4", "int3"]
    # float2 8-aligned, float4 16-aligned, int3 4-aligned: as the PTX .param declares
    assert [(s.offset, s.align) for s in ck.param_layout] == [(0, 8), (8, 8), (16, 4),
                                                              (32, 16), (48, 4)]
    assert [(s.size, s.align) for s in ck.param_layout] == ptx_params(ck.ptx, ck.entry)
    out = np.zeros(8, np.float32)
    wl.launch(k, grid=1, block=8, inputs=[out, (2.0, 0.5), 8, (0, 0, 0, 1.0), (0, 0, 3)],
              device="sim")
    np.testing.assert_array_equal(out, 2 * np.arange(8) + 4.5)
    with pytest.raises(LaunchError, match="parameter 'c' expects float2"):
        wl.launch(k, grid=1, block=8, inputs=[out, 2.0, 8, (0, 0, 0, 1.0), (0, 0, 3)],
                  device="sim")
