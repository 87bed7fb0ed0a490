"""Lowering: typed AST -> LLVM IR, checked with real llvmlite (parse, verify, NVPTX emission).

PTX is emitted here straight through llvmlite's NVPTX back end for sm_90
(no libdevice linking needed: math kernels keep ``__nv_*`` as declarations,
which the back end emits as ``.extern .func``), so these tests pin down the
lowering stage alone. The IR the lowering produces must:

* parse and verify; declare the entry ``ptx_kernel`` with the parameter
  types :func:`warp_lab.compiler.abi.llvm_param_types` gives;
* carry ``!dbg`` on every instruction, so the PTX has ``.loc`` lines that
  point at the right Python lines;
* use int32 index math (``mul.wide.s32`` in PTX, as nvcc emits);
* guard ``tid()`` against ``launch_dim`` once, at entry.
"""

from __future__ import annotations

import re

import llvmlite.binding as llvm
import numpy as np
import pytest

import warp_lab as wl
from warp_lab.compiler import abi
from warp_lab.options import CompileOptions
from warp_lab.compiler.frontend import make_typed_ast
from warp_lab.compiler.lower import TRIPLE, make_llvm_ir

llvm.initialize_all_targets()
llvm.initialize_all_asmprinters()


def lower(kernel, **opts):
    options = CompileOptions(**opts)
    return make_llvm_ir(make_typed_ast(kernel, options), options)


def emit_ptx(llvm_ir: str, arch: str = "sm_90", opt: int = 3) -> str:
    """Parse, verify, optimise (new pass manager) and emit PTX with llvmlite only."""
    mod = llvm.parse_assembly(llvm_ir)
    mod.verify()
    tm = llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=arch, opt=opt)
    mod.data_layout = str(tm.target_data)
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=opt))
    pb.getModulePassManager().run(mod, pb)
    return tm.emit_assembly(mod)


def line_of(kernel, needle: str) -> int:
    """File line of the first source line of ``kernel`` containing ``needle``."""
    for k, text in enumerate(kernel.source.text.splitlines()):
        if needle in text:
            return kernel.source.first_line + k
    raise AssertionError(f"{needle!r} not in {kernel.name}")


def loc_lines(ptx: str) -> dict[int, list[str]]:
    """Python line -> the PTX instructions under its ``.loc`` directives."""
    out: dict[int, list[str]] = {}
    cur = None
    for raw in ptx.splitlines():
        s = raw.strip()
        m = re.match(r"\.loc\s+\d+\s+(\d+)\s+\d+", s)
        if m:
            cur = int(m.group(1))
            continue
        if cur is not None and s and not s.startswith((".", "//", "$", "{", "}", ")")):
            out.setdefault(cur, []).append(s)
    return out


# -- kernels -----------------------------------------------------------------------------
@wl.kernel
def saxpy(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), a: float):
    i = wl.tid()
    y[i] = a * x[i] + y[i]


@wl.kernel
def grid2d(a: wl.array2d(wl.float32), b: wl.array2d(wl.float32)):
    i, j = wl.tid()
    b[i, j] = a[i, j] * 2.0


@wl.kernel
def no_tid(out: wl.array(dtype=wl.int32)):
    out[wl.thread_idx.x] = wl.block_idx.x


@wl.kernel
def reduce256(x: wl.array(dtype=wl.float32), out: wl.array(dtype=wl.float32)):
    s = wl.shared_array(256, wl.float32)
    t = wl.thread_idx.x
    s[t] = x[wl.block_idx.x * 256 + t]
    wl.syncthreads()
    stride = 128
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        wl.syncthreads()
        stride //= 2
    if t == 0:
        wl.atomic_add(out, 0, s[0])


@wl.kernel
def warp_ops(x: wl.array(dtype=wl.float32), h: wl.array(dtype=wl.int32)):
    i = wl.tid()
    v = x[i]
    v += wl.shfl_down_sync(wl.FULL_MASK, v, 16)
    mask = wl.ballot_sync(wl.FULL_MASK, v > 0.0)
    wl.atomic_cas(h, 0, 0, wl.int32(mask))
    wl.syncwarp()
    x[i] = v


@wl.kernel
def math_k(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float64)):
    i = wl.tid()
    x[i] = wl.sin(x[i]) + wl.sqrt(x[i])
    y[i] = wl.exp(y[i])


@wl.func
def twice(v):
    return v + v


@wl.kernel
def calls(x: wl.array(dtype=wl.float32), n: wl.array(dtype=wl.int32)):
    i = wl.tid()
    x[i] = twice(x[i])
    n[i] = twice(n[i])


@wl.kernel
def checked(x: wl.array(dtype=wl.float32), n: int):
    i = wl.tid()
    assert i < n, "i in range"
    x[i] = 1.0


@wl.kernel
def greet(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    if i == 0:
        print("x0 =", x[0], "i =", i)
        print(wl.vec2(1.0, 2.0), wl.mat22(1.0, 2.0, 3.0, 4.0), sep=";")


@wl.kernel
def components(p: wl.array(dtype=wl.vec3), m: wl.array(dtype=wl.mat22)):
    i = wl.tid()
    p[i][2] += 2.0
    m[i][1, 0] = p[i].y


# -- tests -----------------------------------------------------------------------------------
def test_entry_signature_follows_the_abi():
    lk = lower(saxpy)
    assert lk.entry == "saxpy" and lk.launch_ndim == 1 and lk.params == (
        ("x", wl.array(dtype=wl.float32)), ("y", wl.array(dtype=wl.float32)), ("a", wl.float32))
    types = abi.llvm_param_types(abi.param_layout(lk.params))
    head = re.search(r'define ptx_kernel void @"saxpy"\((.*)\)', lk.llvm_ir).group(1)
    assert head.startswith(str(types[0]))
    for t in types:
        assert str(t) in head
    assert f'target triple = "{TRIPLE}"' in lk.llvm_ir
    llvm.parse_assembly(lk.llvm_ir).verify()


def test_every_instruction_has_a_debug_location():
    for k in (saxpy, reduce256, warp_ops, calls, greet):
        ir_text = lower(k).llvm_ir
        body = [ln for ln in ir_text.splitlines() if ln.startswith("  ")]
        assert body
        missing = [ln for ln in body if "!dbg" not in ln]
        assert missing == [], (k.name, missing[:3])
        assert "DebugDirectivesOnly" in ir_text and '!"Debug Info Version", i32 3' in ir_text


def test_ptx_loc_points_at_the_python_lines():
    ptx = emit_ptx(lower(saxpy).llvm_ir)
    body = line_of(saxpy, "y[i] = a * x[i]")
    by_line = loc_lines(ptx)
    insns = " ".join(by_line[body])
    assert "ld.global" in insns and "st.global" in insns and "fma.rn.f32" in insns
    guard = line_of(saxpy, "def saxpy")
    assert any(s.startswith("setp") for s in by_line[guard])
    assert re.search(r'\.file\s+1\s+".*test_lower\.py"', ptx)


def test_loc_lines_in_a_device_function_name_its_own_lines():
    ptx = emit_ptx(lower(calls).llvm_ir, opt=0)
    ret_line = line_of(twice, "return v + v")
    assert any(s.startswith(("add.f32", "add.rn.f32", "add.s32")) for s in loc_lines(ptx)[ret_line])


def test_index_math_is_int32_widened_at_the_address():
    general = emit_ptx(lower(saxpy, unit_inner_stride=False).llvm_ir)
    assert "mul.wide.s32" in general and "mul.lo.s32" in general  # i * stride, then widened
    unit = emit_ptx(lower(saxpy, unit_inner_stride=True).llvm_ir)
    assert "mul.lo.s32" not in unit and re.search(r"mul\.wide\.[su]32", unit)
    for ptx in (general, unit):
        assert not re.search(r"mul\.lo\.s64|cvt\.s64\.s32", ptx)


@wl.kernel
def wide_index(x: wl.array2d(wl.float32), i: wl.int64, j: wl.uint32, k: int):
    x[i, k] = 1.0
    x[k, j] = 2.0
    x[k, k] = 3.0


def test_wide_indices_are_computed_in_64_bits():
    llvm_ir = lower(wide_index, unit_inner_stride=False).llvm_ir
    # int64 index: the row stride is sign-extended and multiplied in i64;
    # uint32 index: zero-extended (2**32 - 1 stays positive), summed in i64
    assert re.search(r'mul nsw i64 %"i\.\d+"', llvm_ir)
    assert re.search(r'zext i32 %"j\.\d+" to i64', llvm_ir)
    ptx = emit_ptx(llvm_ir)
    assert "mul.lo.s64" in ptx or "mad.lo.s64" in ptx
    # the int32-only store keeps the int32 path (one mul.lo.s32 + widening)
    assert "mul.wide.s32" in ptx
    # debug bounds checks compare the full 64-bit index and print it with %lld
    dbg = lower(wide_index, debug=True).llvm_ir
    assert re.search(r'icmp ult i64 %"i\.\d+"', dbg)
    assert "index %lld out of bounds for axis 0 with size %lld" in dbg
    assert "index %d out of bounds for axis 0 with size %d" in dbg  # x[k, k]: int32


def test_entry_guard_uses_launch_dim_per_axis():
    ir1 = lower(saxpy).llvm_ir
    assert ir1.count('extractvalue {i32, i32, i32} %"launch_dim"') == 1
    ir2 = lower(grid2d).llvm_ir
    assert ir2.count('extractvalue {i32, i32, i32} %"launch_dim"') == 2
    assert "sreg.ctaid.y" in ir2 and "icmp uge" in ir2
    assert lower(grid2d).launch_ndim == 2


def test_entry_guard_only_for_tid_kernels_unless_asked():
    # written in block_idx/thread_idx terms, like CUDA C++: no guard by default
    lk = lower(no_tid)
    assert not lk.entry_guard
    assert 'extractvalue {i32, i32, i32} %"launch_dim"' not in lk.llvm_ir
    assert "icmp uge" not in lk.llvm_ir
    # asked for (what wl.launch compiles for a dim= that is not whole blocks): x only
    guarded = lower(no_tid, entry_guard=True)
    assert guarded.entry_guard
    assert guarded.llvm_ir.count('extractvalue {i32, i32, i32} %"launch_dim"') == 1
    assert "sreg.ctaid.y" not in guarded.llvm_ir
    ptx = emit_ptx(guarded.llvm_ir)
    assert re.search(r"setp\.(lt|ge)\.u32", ptx) and ptx.count("ret;") >= 1
    # a wl.tid() kernel may drop it (exact launches only): tid is still computed
    bare = lower(saxpy, entry_guard=False)
    assert not bare.entry_guard
    assert 'extractvalue {i32, i32, i32} %"launch_dim"' not in bare.llvm_ir
    assert "sreg.ctaid.x" in bare.llvm_ir and "icmp uge" not in bare.llvm_ir
    assert lower(saxpy).entry_guard


def test_shared_memory_barrier_and_atomics():
    lk = lower(reduce256)
    assert lk.shared_bytes == 1024
    # externally_initialized: a block's shared memory is not LLVM's undef (lower.SharedVariable)
    assert re.search(r"addrspace\(3\) externally_initialized global \[256 x float\] undef",
                     lk.llvm_ir)
    ptx = emit_ptx(lk.llvm_ir)
    assert re.search(r"\.shared \.align 16 \.b8 \S+\[1024\]", ptx)
    assert re.search(r"bar\.sync\s+0;", ptx)
    assert re.search(r"ld\.shared\.(f32|b32)", ptx)
    assert re.search(r"(atom|red)\.global\.add\.f32", ptx)


@wl.func
def _stage(v: wl.float32) -> wl.float32:
    tile = wl.shared_array(32, wl.float32)          # same name as the kernel's: kept apart
    tile[wl.lane_id()] = v
    wl.syncwarp()
    return tile[31 - wl.lane_id()]


@wl.kernel
def two_tiles(x: wl.array(dtype=wl.float32)):
    tile = wl.shared_array(64, wl.float32)
    größe = wl.shared_array(64, wl.int32)
    t = wl.thread_idx.x
    tile[t] = x[t]
    größe[t] = t
    wl.syncthreads()
    x[t] = _stage(tile[63 - t]) + wl.float32(größe[t])


def test_shared_variables_are_named_after_the_python_arrays():
    """``tile = wl.shared_array(...)`` in kernel ``k`` is the .shared variable ``k_tile_N``
    (the PTX view and memcheck name it so), non-ASCII letters become ``_`` (PTX
    identifiers are ASCII), and same-named arrays of a kernel and its device function
    stay two variables; ptxas accepts the names."""
    ptx = wl.compile(two_tiles, arch="sm_80", cache=False).ptx
    names = re.findall(r"^\s*\.shared \.align \d+ \.b8 (\S+)\[(\d+)\]", ptx, re.M)
    by_stem = {re.sub(r"_\d+$", "", n): int(size) for n, size in names}
    assert by_stem == {"two_tiles_tile": 256, "two_tiles_gr__e": 256, "_stage_tile": 128}, names
    assert len({n for n, _ in names}) == 3
    # the compile records each symbol's Python name and line, for the views and findings
    ck = wl.compile(two_tiles, arch="sm_80", cache=False, sass=False)
    first = two_tiles.source.first_line
    recorded = {re.sub(r"_\d+$", "", sym): (name, line) for sym, name, line in
                ((a.symbol, a.name, a.line) for a in ck.source_map.arrays)}
    assert recorded == {"two_tiles_tile": ("tile", first + 2),
                        "two_tiles_gr__e": ("größe", first + 3),
                        "_stage_tile": ("tile", _stage.source.first_line + 2)}, ck.source_map.arrays

def test_warp_functions_map_to_ptx_instructions():
    ptx = emit_ptx(lower(warp_ops).llvm_ir)
    assert re.search(r"shfl\.sync\.down\.b32\s+%r\d+(\|%p\d+)?, %r\d+, 16, 31, -1", ptx)
    assert "vote.sync.ballot.b32" in ptx
    # device scope, as CUDA's atomicCAS: never the slower .sys scope
    assert re.search(r"atom(\.relaxed\.gpu)?\.global\.cas\.b32", ptx) and ".sys" not in ptx
    assert "bar.warp.sync" in ptx


def test_libdevice_functions_are_only_declared():
    text = lower(math_k).llvm_ir
    assert re.search(r'declare float @"__nv_sinf"\(float', text)
    assert re.search(r'declare double @"__nv_exp"\(double', text)
    assert "llvm.sqrt.f32" in text
    assert not re.search(r"define .*@\"__nv_", text)


def test_fast_math_flags_only_when_asked():
    strict = lower(saxpy).llvm_ir
    fast = lower(saxpy, fast_math=True).llvm_ir
    # strict: a*x + y contracts within the expression (llvm.fmuladd → fma.rn), no flags
    assert "llvm.fmuladd.f32" in strict and " fast " not in strict and "contract" not in strict
    assert "fmul fast float" in fast
    assert "__nv_fast_sinf" in lower(math_k, fast_math=True).llvm_ir
    assert "__nv_fast_sinf" not in lower(math_k).llvm_ir


@wl.kernel
def rounding(x: wl.array(dtype=wl.float32), a: float, b: float):
    i = wl.tid()
    t = x[i] * a
    acc = x[i]
    acc += t * b
    x[i] = t + b - acc * 0.5


def test_unfused_float_ops_keep_their_rounding_in_ptx():
    """Every mul/add/sub the front end did not contract is .rn: ptxas may not fuse it,
    so the simulator (which runs the PTX) and the GPU round the same way."""
    ptx = emit_ptx(lower(rounding).llvm_ir, opt=3)
    ops = re.findall(r"^\s*((?:mul|add|sub|fma)[.\w]*\.f32)", ptx, re.M)
    assert ops and all(".rn" in op for op in ops), ops
    assert sum(op.startswith("fma.rn") for op in ops) == 2  # acc += t*b; ... - acc*0.5
    assert "mul.rn.f32" in ops  # t = x[i] * a stays a separate, rounded multiply


def test_device_functions_are_specialised_per_argument_type():
    lk = lower(calls)
    defs = re.findall(r'define internal (\w+) @"(calls__twice_\d+)"', lk.llvm_ir)
    assert sorted(t for t, _ in defs) == ["float", "i32"]
    ptx = emit_ptx(lk.llvm_ir, opt=0)
    assert ptx.count(".func ") >= 2  # kept as calls at -O0
    ptx3 = emit_ptx(lk.llvm_ir, opt=3)
    assert ".func " not in ptx3  # inlined when optimising


def test_assert_and_bounds_checks_only_in_debug():
    plain = lower(checked).llvm_ir
    assert "llvm.trap" not in plain and "vprintf" not in plain
    dbg = lower(checked, debug=True)
    assert "llvm.trap" in dbg.llvm_ir and "assertion failed: i < n: i in range" in dbg.llvm_ir
    line = line_of(checked, "x[i] = 1.0")
    assert re.search(rf'test_lower\.py:{line}: index %d out of bounds for axis 0 with size %d',
                     dbg.llvm_ir)
    ptx = emit_ptx(dbg.llvm_ir)
    assert "trap;" in ptx and "vprintf" in ptx


def test_print_goes_through_vprintf():
    lk = lower(greet)
    assert re.search(r'c"x0 = %g i = %d\\0a\\00"', lk.llvm_ir, re.I)
    assert re.search(r'c"\[%g %g\];\[\[%g %g\] \[%g %g\]\]\\0a\\00"', lk.llvm_ir, re.I)
    ptx = emit_ptx(lk.llvm_ir)
    assert "call.uni" in ptx and "vprintf" in ptx and ".extern .func" in ptx


def test_lineinfo_off_emits_no_debug_info():
    lk = lower(saxpy, lineinfo=False)
    assert "!dbg" not in lk.llvm_ir and "DICompileUnit" not in lk.llvm_ir
    assert ".loc" not in emit_ptx(lk.llvm_ir)


@pytest.mark.parametrize("opt", [0, 1, 2, 3])
@pytest.mark.parametrize("arch", ["sm_70", "sm_90"])
def test_every_level_and_arch_emits(opt, arch):
    for k in (saxpy, reduce256, warp_ops, calls):
        ptx = emit_ptx(lower(k, opt=opt).llvm_ir, arch=arch, opt=opt)
        assert f".target {arch}" in ptx and f".entry {k.name}" in ptx


def test_components_of_array_elements_are_stored_in_place():
    ptx = emit_ptx(lower(components).llvm_ir)
    # vec3 is 12 bytes: p[i][2] is at +8, p[i].y at +4; mat22 row-major: [1, 0] at +8
    assert re.search(r"mul\.wide\.[su]32\s+%rd\d+, %r\d+, 12;", ptx)
    assert re.search(r"ld\.global\.(f32|b32)\s+%r\d+, \[%rd\d+\+8\]", ptx)
    assert re.search(r"ld\.global\.(f32|b32)\s+%r\d+, \[%rd\d+\+4\]", ptx)
    assert len(re.findall(r"st\.global\.(f32|b32)\s+\[%rd\d+\+8\]", ptx)) == 2


@wl.func
def ajouté(v):
    return v + 1.0


@wl.kernel
def résumé(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    x[i] = ajouté(x[i])


def test_non_ascii_python_names_become_valid_ptx_identifiers():
    lk = lower(résumé, opt=0)
    assert lk.entry == "r$00e9sum$00e9"
    ptx = emit_ptx(lk.llvm_ir, opt=0)
    assert re.search(r"\.entry r\$00e9sum\$00e9\(", ptx)
    assert re.search(r"\.func\s+\(.*\) r\$00e9sum\$00e9__ajout\$00e9_\d+\(", ptx)


def test_tid_index_math_maps_to_the_tid_line():
    """`i = wl.tid()` owns the ctaid/ntid/tid arithmetic; the def line owns the bounds check."""
    ptx = emit_ptx(lower(saxpy).llvm_ir)
    by_line = loc_lines(ptx)
    tid_line, def_line = line_of(saxpy, "i = wl.tid()"), line_of(saxpy, "def saxpy")
    assert any("%ctaid.x" in ins for ins in by_line[tid_line])
    assert any(ins.startswith("setp") for ins in by_line[def_line])
    assert not any("%ctaid.x" in ins for ins in by_line[def_line])


@wl.kernel
def neighbours(u: wl.array2d(dtype=wl.float32), out: wl.array2d(dtype=wl.float32)):
    i, j = wl.tid()
    # no bounds test: LLVM cannot prove j ± 1 does not wrap, only the fold shares the address
    out[i, j] = u[i, j - 1] + u[i, j + 1] + u[i - 1, j] + u[i + 1, j]


def test_constant_index_offsets_become_address_offsets():
    # u[i, j ± 1] are [p ± 4] off one base address, as nvcc's u[i*w + j ± 1]
    ck = wl.compile(neighbours, sass=False, cache=False)
    loads = re.findall(r"ld\.global(?:\.nc)?\.(?:f32|b32)\s+%r\d+, \[(%rd\d+)(\+-?\d+)?\]", ck.ptx)
    offsets = {base: set() for base, _ in loads}
    for base, off in loads:
        offsets[base].add(off)
    assert {"+-4", "+4"} in offsets.values(), loads
    # under debug the bounds check sees the index as written: j - 1 is compared, not j
    dbg = lower(neighbours, debug=True).llvm_ir
    assert re.search(r'sub i32 %"?j', dbg) or re.search(r"add i32 %\"?[\w.]+\"?, -1", dbg)
    assert "out of bounds for axis 1" in dbg


@wl.kernel
def border_or_stencil(u: wl.array2d(dtype=wl.float32), out: wl.array2d(dtype=wl.float32)):
    i, j = wl.tid()
    if i == 0 or j == 0 or i == u.shape[0] - 1 or j == u.shape[1] - 1:
        out[i, j] = u[i, j]
        return
    out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1]


def test_neighbours_share_the_address_computed_before_the_branch():
    # nvcc's shape: p = &u[i, j] once, above the branch; the border reads [p], the
    # stencil [p - 4], [p + 4] and p ± 4 * stride. With the constants folded into the
    # int32 offset LLVM rebuilt the centre from &u[i - 1, j] inside the stencil block,
    # a second address computation (stencil_2d: 22 registers instead of 20).
    ck = wl.compile(border_or_stencil, sass=False, cache=False)
    body = ck.ptx[ck.ptx.index(".entry"):]
    loads = re.findall(r"ld\.global(?:\.nc)?\.(?:f32|b32)\s+%r\d+, \[(%rd\d+)(\+-?\d+)?\]", body)
    centre = [base for base, off in loads if not off]
    near = {base for base, off in loads if off in ("+-4", "+4")}
    assert len(near) == 1 and near <= set(centre), loads
    (p,) = near
    # p is defined once, before the first conditional branch that is not the tid guard
    defs = [m.start() for m in re.finditer(rf"^\s*\S+\s+{re.escape(p)},", body, re.M)]
    branches = [m.start() for m in re.finditer(r"^\s*@%p\d+ bra", body, re.M)]
    assert len(defs) == 1 and defs[0] < branches[-1] < body.index("[" + p + "]"), body
    x = np.random.default_rng(3).standard_normal((9, 12)).astype(np.float32)
    got = np.zeros_like(x)
    wl.launch(border_or_stencil, dim=x.shape, inputs=[x, got], device="sim")
    want = x.copy()
    want[1:-1, 1:-1] = ((x[:-2, 1:-1] + x[2:, 1:-1]) + x[1:-1, :-2]) + x[1:-1, 2:]
    np.testing.assert_array_equal(got, want)


@wl.kernel
def and_of_compares(x: wl.array(dtype=wl.float32), n: int, m: int):
    i = wl.tid()
    if i < n and i + 1 < m:
        x[i] = 1.0


@wl.kernel
def and_guarding_a_load(x: wl.array(dtype=wl.float32), n: int):
    i = wl.tid()
    if i < n and x[i] > 0.0:
        x[i] = 2.0


def test_and_of_side_effect_free_compares_does_not_branch():
    # nothing to skip: both compares are evaluated and combined (nvcc's and/or.pred)
    text = lower(and_of_compares).llvm_ir
    assert "sc.next" not in text and re.search(r"= and i1 ", text)
    # a load on the right may fault: it stays behind the short circuit
    assert "sc.next" in lower(and_guarding_a_load).llvm_ir


@wl.kernel
def chained(x: wl.array(dtype=wl.float32), lo: int, hi: int):
    i = wl.tid()
    if lo <= i < hi:
        x[i] = 1.0
    if 0.0 <= x[i] < 0.5:  # float compares of a load: still short-circuit
        x[i] = 2.0


def test_chained_integer_comparison_does_not_branch():
    text = lower(chained).llvm_ir
    # only the float chain has a short-circuit block
    assert len(re.findall(r'^"?sc\.next[.\d]*"?:', text, re.M)) == 1, text
    x = np.full(8, 0.25, np.float32)
    wl.launch(chained, dim=8, inputs=[x, 2, 5], device="sim")
    np.testing.assert_array_equal(x, np.where((np.arange(8) >= 2) & (np.arange(8) < 5), 1.0, 2.0))


@wl.kernel
def local_in_registers(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    i = wl.tid()
    n = x.shape[0]
    acc = wl.local_array(16, wl.float32)
    for k in range(16):
        acc[k] = x[(i + k) % n]
    for r in range(3):
        for k in range(16):
            acc[k] = acc[k] * 0.5 + 1.0
    s = 0.0
    for k in range(16):
        s += acc[k] * acc[15 - k]
    y[i] = s


@wl.kernel
def local_runtime_index(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    i = wl.tid()
    acc = wl.local_array(16, wl.float32)
    for k in range(16):
        acc[k] = x[k]
    y[i] = acc[i % 16]  # a run-time index: the array must stay addressable


def test_constant_loops_over_a_local_array_unroll_so_it_lives_in_registers():
    ck = wl.compile(local_in_registers, arch="sm_80", cache=False, sass=False)
    assert "llvm.loop.unroll.full" in ck.llvm_ir
    assert ck.resources.stack_frame == 0 and "ld.local" not in ck.ptx
    rt = wl.compile(local_runtime_index, arch="sm_80", cache=False, sass=False)
    assert rt.resources.stack_frame == 64 and "ld.local" in rt.ptx
    # same numbers as numpy
    x = np.arange(1, 41, dtype=np.float32) / 8
    y = np.zeros(40, np.float32)
    wl.launch(local_in_registers, dim=40, inputs=[x, y], device="sim")
    acc = x[(np.arange(40)[:, None] + np.arange(16)) % 40]
    for _ in range(3):
        acc = acc * np.float32(0.5) + np.float32(1.0)
    ref = np.zeros(40, np.float32)
    for k in range(16):
        ref = ref + acc[:, k] * acc[:, 15 - k]
    np.testing.assert_allclose(y, ref, rtol=1e-6)
