"""Every corpus kernel through the whole pipeline: PTX, ptxas, resources, SASS.

Real llvmlite, ptxas and nvdisasm. To stay fast on a shared 2-core machine
every kernel is compiled for sm_70, sm_80 and sm_90 (issue 2's minimum), and
a feature-heavy subset for every other architecture warp_lab supports and
this machine's ptxas assembles. Each (kernel, arch) is compiled once, without
the artifact cache, and shared by the tests below.
"""

from __future__ import annotations

import ast
import re

import pytest

import warp_lab as wl
from warp_lab.compiler import nvptx, toolchain
from warp_lab.errors import ToolchainError
from warp_lab.examples import CORPUS
from warp_lab.lang.kernel import Func

BASE_ARCHS = ("sm_70", "sm_80", "sm_90")
#: kernels that exercise the most builtins: compiled for every other architecture too
SUBSET = ("saxpy", "math_f32", "math_f64", "warp_scan_vote", "atomics_all", "matmul_tiled",
          "casts", "hello_printf", "vec_mat", "int_intrinsics", "softmax_rows")


def _assemblable(arch: str) -> bool:
    try:
        toolchain.find_tool("ptxas", int(arch.split("_")[1]))
    except ToolchainError:
        return False
    return True


EXTRA_ARCHS = tuple(a for a in ("sm_75", "sm_86", "sm_89", "sm_100", "sm_120")
                    if a in nvptx.SUPPORTED_ARCHS and _assemblable(a))
CASES = [(ex, arch) for arch in BASE_ARCHS for ex in CORPUS] + \
        [(ex, arch) for arch in EXTRA_ARCHS for ex in CORPUS if ex.name in SUBSET]

_COMPILED: dict = {}


def compiled(ex, arch: str, opt: int = 3):
    """Compile once per session (the artifact cache is bypassed on purpose)."""
    key = (ex.name, arch, opt)
    if key not in _COMPILED:
        _COMPILED[key] = wl.compile(ex.kernel, arch=arch, opt=opt, cache=False)
    return _COMPILED[key]


def _funcs_of(kernel):
    return [v for v in kernel.globals.values() if isinstance(v, Func)]


def _static_shared_bytes(kernel) -> int:
    """Bytes of the kernel's ``wl.shared_array`` declarations, from its source (not the compiler)."""
    total = 0
    tree = ast.parse(kernel.source.text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "shared_array":
            shape = eval(compile(ast.Expression(node.args[0]), "<shape>", "eval"),  # noqa: S307
                         dict(kernel.globals))
            dtype = eval(compile(ast.Expression(node.args[1]), "<dtype>", "eval"),  # noqa: S307
                         dict(kernel.globals))
            count = 1
            for d in (shape if isinstance(shape, tuple) else (shape,)):
                count *= d
            total += count * dtype.size
    return total


def _calls(kernel, name: str) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == name
               for n in ast.walk(ast.parse(kernel.source.text)))


@pytest.mark.parametrize("ex,arch", CASES, ids=[f"{e.name}-{a}" for e, a in CASES])
def test_compiles_and_assembles(ex, arch):
    ck = compiled(ex, arch)
    assert ck.arch == arch and ck.name == ex.kernel.name
    assert re.search(rf"^\.target {arch}\b", ck.ptx, re.M), "PTX targets the requested SM"
    assert re.search(rf"\.entry {re.escape(ck.entry)}\s*\(", ck.ptx)
    assert dict(ck.missing) == {}, ck.missing
    assert ck.cubin is not None and ck.cubin[:4] == b"\x7fELF"
    res = ck.resources
    assert res is not None and res.arch == arch
    assert 0 < res.registers <= 255
    assert res.shared == _static_shared_bytes(ex.kernel), "static shared memory per block"
    uses_barrier = _calls(ex.kernel, "syncthreads")
    assert (res.barriers > 0) == uses_barrier, f"barriers={res.barriers}"
    assert ck.sass and ck.entry in ck.sass
    assert re.search(r"/\*[0-9a-f]{4,}\*/\s+\S", ck.sass), "SASS has instructions"


@pytest.mark.parametrize("ex", CORPUS, ids=[e.name for e in CORPUS])
def test_line_info_reaches_ptx_and_sass(ex):
    ck = compiled(ex, "sm_90")
    src = ex.kernel.source
    first, last = src.first_line, src.first_line + len(src.text.splitlines()) - 1
    allowed = set(range(first, last + 1))
    for fn in _funcs_of(ex.kernel):          # inlined device functions keep their own lines
        if fn.source.filename == src.filename:
            allowed |= set(range(fn.source.first_line,
                                 fn.source.first_line + len(fn.source.text.splitlines())))
    body = set(range(first + 1, last + 1))
    for stage in ("llvm", "ptx", "sass"):
        lines = set(getattr(ck.line_map, stage))
        assert lines, f"no {stage} line info"
        assert lines <= allowed, f"{stage} lines outside the kernel: {sorted(lines - allowed)}"
        assert lines & body, f"{stage} has no line of the kernel body"
    assert f'//## File "{src.filename}"' in ck.sass, "nvdisasm printed line info"


@pytest.mark.parametrize("ex", CORPUS, ids=[e.name for e in CORPUS])
def test_compiles_at_O0_without_spills_at_O3(ex):
    ck0 = compiled(ex, "sm_90", opt=0)
    assert ck0.cubin is not None and ck0.resources.registers > 0
    assert ".loc" in ck0.ptx
    ck3 = compiled(ex, "sm_90")
    assert not ck3.resources.spills, (ck3.resources.spill_stores, ck3.resources.spill_loads)
    assert ck3.options.opt == 3 and ck0.options.opt == 0


def test_libdevice_is_inlined_and_printf_uses_vprintf():
    by_name = {ex.name: ex for ex in CORPUS}
    for name in ("math_f32", "math_f64"):
        ptx = compiled(by_name[name], "sm_90").ptx
        assert "__nv_" not in ptx and "__nvvm_reflect" not in ptx
    ptx = compiled(by_name["hello_printf"], "sm_90").ptx
    # one call per wl.printf/print: "call.uni (retval0), vprintf, (param0, param1);"
    assert len(re.findall(r"\bvprintf\s*,", ptx)) == 2
