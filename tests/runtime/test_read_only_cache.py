"""Arrays a kernel never writes are read through the read-only data cache (``ld.global.nc``).

What CUDA's ``__ldg`` and ``const __restrict__`` give. The compiler decides which
parameters are read-only (``CompiledKernel.written_params``); ``wl.launch``
compiles the variant without ``.nc`` loads when a read-only argument shares
memory with a written one, since the read-only cache need not see those writes.
"""

import re

import numpy as np

import warp_lab as wl
from warp_lab.examples import get
from warp_lab.runtime.args import check_arguments, read_only_aliases


@wl.kernel
def shift_add(src: wl.array(dtype=wl.float32), dst: wl.array(dtype=wl.float32)):
    i = wl.tid()
    dst[i] = dst[i] + src[i] * 2.0


@wl.kernel
def through_alias(a: wl.array(dtype=wl.float32), b: wl.array(dtype=wl.float32)):
    i = wl.tid()
    view = a
    view[i] = b[i] + a[i]


def _loads(ptx: str) -> list[str]:
    return re.findall(r"\bld\.global(?:\.nc)?\.b32", ptx)


def test_only_the_arrays_the_kernel_never_writes_get_nc_loads():
    ptx = wl.compile(shift_add, cache=False, sass=False).ptx
    assert sorted(_loads(ptx)) == ["ld.global.b32", "ld.global.nc.b32"]   # dst, src
    # a store through a local alias writes the parameter: its loads stay coherent
    ptx = wl.compile(through_alias, cache=False, sass=False).ptx
    assert sorted(_loads(ptx)) == ["ld.global.b32", "ld.global.nc.b32"]   # a, b
    # every array of spmv_csr but y is read-only
    ck = wl.compile(get("spmv_csr").kernel, cache=False)
    assert set(_loads(ck.ptx)) == {"ld.global.nc.b32"} and ck.written_params == ("y",)
    assert {ln.split()[1] for ln in ck.sass.splitlines() if "LDG" in ln} == {"LDG.E.CONSTANT"}
    off = wl.compile(get("spmv_csr").kernel, cache=False, sass=False, read_only_cache=False)
    assert set(_loads(off.ptx)) == {"ld.global.b32"}


def test_separate_arrays_run_with_nc_loads_and_match_numpy():
    src = np.arange(300, dtype=np.float32)
    dst = np.ones(300, np.float32)
    r = wl.launch(shift_add, dim=300, inputs=[src, dst], device="sim")
    assert r.compiled.options.read_only_cache and not r.findings
    np.testing.assert_array_equal(dst, 1 + 2 * np.arange(300, dtype=np.float32))


def test_a_read_only_argument_sharing_memory_with_a_written_one_gets_the_coherent_variant():
    # overlapping views (thread i writes what thread i + 1 reads: values race on a GPU,
    # so only the variant is checked here)
    x = np.arange(257, dtype=np.float32)
    ck = wl.compile(shift_add, sass=False)
    _, views = check_arguments(ck.params, [x[:-1], x[1:]])
    assert read_only_aliases(views, ck.written_params) == ["src"]
    r = wl.launch(ck, dim=256, inputs=[x[:-1], x[1:]], device="sim")
    assert not r.compiled.options.read_only_cache
    assert "ld.global.nc" not in r.compiled.ptx
    # the same array as both arguments: each thread reads and writes its own element
    y = np.arange(64, dtype=np.float32)
    r = wl.launch(shift_add, dim=64, inputs=[y, y], device="sim")
    assert not r.compiled.options.read_only_cache
    np.testing.assert_array_equal(y, 3 * np.arange(64, dtype=np.float32))
    # disjoint arrays: no variant needed
    _, views = check_arguments(ck.params, [np.zeros(4, np.float32), np.zeros(4, np.float32)])
    assert read_only_aliases(views, ck.written_params) == []


@wl.kernel
def set_then_add(src: wl.array(dtype=wl.float32), dst: wl.array(dtype=wl.float32)):
    i = wl.tid()
    dst[i] = 5.0
    wl.syncthreads()
    dst[i] = dst[i] + src[i]


def test_memcheck_reports_a_read_only_cache_load_of_memory_the_launch_writes():
    # forcing the .nc variant onto aliased arguments (wl.launch would not): on a GPU the
    # read of src may be stale; the simulator cannot show that, so memcheck says it
    from warp_lab.runtime import sim_backend
    from warp_lab.runtime.device import get_device
    from warp_lab.runtime.launch import launch_geometry

    ck = wl.compile(set_then_add, sass=False)
    assert "ld.global.nc" in ck.ptx
    x = np.zeros(64, np.float32)
    values, views = check_arguments(ck.params, [x, x])
    grid, block, dim = launch_geometry(1, dim=64, block_dim=64)
    r = sim_backend.run(ck, get_device("sim"), grid, block, dim, values, views,
                        checks=("memcheck",))
    found = [f for f in r.findings if f.kind == "nc_write"]
    assert [f.kind for f in r.findings] == ["nc_write", "nc_write"]  # the load, the store
    assert all("ld.global.nc" in f.message and "'src,dst'" in f.message for f in found)
    assert "dst[i] = dst[i] + src[i]" in set_then_add.source.line(found[0].source_line)
    # what wl.launch does: the coherent variant, no finding
    y = np.zeros(64, np.float32)
    r = wl.launch(set_then_add, dim=64, inputs=[y, y], block_dim=64, device="sim")
    assert not r.findings and not r.compiled.options.read_only_cache
    np.testing.assert_array_equal(y, np.full(64, 10, np.float32))
    # separate arrays: .nc loads and writes to other memory, no finding
    s, d = np.ones(64, np.float32), np.zeros(64, np.float32)
    r = wl.launch(set_then_add, dim=64, inputs=[s, d], block_dim=64, device="sim")
    assert not r.findings and r.compiled.options.read_only_cache
    np.testing.assert_array_equal(d, np.full(64, 6, np.float32))


@wl.func
def _dot3(a: wl.array(dtype=wl.float32), b: wl.array(dtype=wl.float32), i: int) -> wl.float32:
    return a[3 * i] * b[3 * i] + a[3 * i + 1] * b[3 * i + 1] + a[3 * i + 2] * b[3 * i + 2]


@wl.func
def _twice_dot3(a: wl.array(dtype=wl.float32), b: wl.array(dtype=wl.float32),
                i: int) -> wl.float32:
    return _dot3(a, b, i) * 2.0


@wl.kernel
def dots(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32),
         out: wl.array(dtype=wl.float32)):
    i = wl.tid()
    out[i] = _twice_dot3(x, y, i) + _dot3(out, x, i)   # out is written: its reads stay coherent


def test_device_functions_read_the_callers_read_only_arrays_through_the_nc_cache():
    # x and y reach _dot3 through _twice_dot3; the _dot3(out, x, i) call reads out
    # coherently and x through the cache. After inlining: 3 coherent loads of out and 6
    # .nc loads (x[3i..3i+2], read by both calls and loaded once, and y's three)
    ck = wl.compile(dots, cache=False, sass=False)
    assert ck.written_params == ("out",)
    loads = _loads(ck.ptx)
    assert loads.count("ld.global.b32") == 3 and loads.count("ld.global.nc.b32") == 6, loads
    # at opt=0 nothing is inlined: one function per set of read-only parameters
    o0 = wl.compile(dots, cache=False, sass=False, opt=0)
    funcs = set(re.findall(r"^\.func\s+(?:\(.*?\)\s*)?(\w+)", o0.ptx, re.M))
    assert len(funcs) == 3, funcs     # _twice_dot3(x, y), _dot3(x, y), _dot3(out, x)
    x = np.arange(30, dtype=np.float32)
    y = np.linspace(-1, 1, 30).astype(np.float32)
    for opt in (3, 0):
        out = np.ones(30, np.float32)
        r = wl.launch(dots, dim=10, inputs=[x, y, out], device="sim", opt=opt,
                      checks=("memcheck",))
        assert not r.findings and r.compiled.options.read_only_cache
        x3, y3 = x.reshape(10, 3).astype(np.float64), y.reshape(10, 3).astype(np.float64)
        np.testing.assert_allclose(out[:10], 2 * (x3 * y3).sum(1) + x3.sum(1), rtol=1e-5,
                                   atol=1e-4)
    # the same array as x and out: the coherent variant, no .nc load anywhere
    z = np.arange(30, dtype=np.float32)
    r = wl.launch(dots, dim=10, inputs=[z, y, z], device="sim")
    assert not r.compiled.options.read_only_cache and "ld.global.nc" not in r.compiled.ptx


@wl.func
def _first(r: wl.array(dtype=wl.float32)) -> wl.float32:
    return r[0]


@wl.kernel
def firsts(m: wl.array2d(dtype=wl.float32), v: wl.array(dtype=wl.float32),
           out: wl.array(dtype=wl.float32)):
    i = wl.tid()
    out[i] = _first(m[i]) + _first(v)


def test_a_function_that_reads_only_its_arrays_first_element_keeps_the_nc_load():
    # LLVM's O3 argument promotion moved such a load into the caller without its
    # !invariant.load: m's row and v were read with plain ld.global
    ck = wl.compile(firsts, cache=False, sass=False)
    assert ck.written_params == ("out",)
    assert _loads(ck.ptx).count("ld.global.nc.b32") == 2, _loads(ck.ptx)
    m, v = np.arange(12, dtype=np.float32).reshape(4, 3), np.float32([0.5, 9])
    out = np.zeros(4, np.float32)
    r = wl.launch(firsts, dim=4, inputs=[m, v, out], device="sim", checks=("memcheck",))
    assert not r.findings
    np.testing.assert_array_equal(out, m[:, 0] + 0.5)
