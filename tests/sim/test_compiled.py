"""The compiled tier against the interpreter (issue 24): the same PTX, the same bits.

* every corpus kernel through ``wl.launch(tier="auto")`` and ``tier="interpreter"``: the
  outputs byte for byte, the findings (kind, lines, block, thread, message), and which
  kernels the compiled tier takes;
* hand-written PTX applying ~150 instructions (float rounding modes, ftz/sat, NaN and
  signed-zero rules, approximate math, cvt's saturation and NaN results, integer
  division by zero and INT_MIN / -1, shifts past the width, carries, bit fields) to
  ~570 pairs of special values: every result bit for bit;
* memcheck's planted bugs: the interpreter's findings, the compiled run having bailed;
* the fallback reasons, and ``tier="compiled"`` refusing what it does not cover.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import warp_lab as wl
from warp_lab import sim
from warp_lab.examples import CORPUS, PLANTED_BUGS

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

#: the corpus kernels the first slice must take (no shared memory, barriers, warp-level
#: instructions, atomics, fences, clocks, half conversions or device-function calls)
COVERED = {"saxpy", "vector_add", "index_2d", "index_3d", "strided_rows", "reversed_view",
           "grid_stride", "block_coords", "early_return", "collatz", "range_forms",
           "classify", "short_circuit", "device_funcs", "constants_assert", "local_sort",
           "casts", "floordiv_mod", "int_intrinsics", "funnel_shifts", "bit_casts",
           "bit_ops", "stencil_2d", "mandelbrot", "nbody_step", "spmv_csr", "math_f32",
           "vec_mat", "affine", "vec_builders"}


def _launch(kernel, args, kw, tier):
    a = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    r = wl.launch(kernel, inputs=a, device="sim", tier=tier, metrics=False, **kw)
    return r, [x.tobytes() for x in a if isinstance(x, np.ndarray)]


def _findings(r):
    # addresses depend on where the host arrays were allocated: masked
    return [(f.kind, f.ptx_line, f.source_line, f.block, f.thread,
             re.sub(r"0x[0-9a-f]+", "ADDR", f.message)) for f in r.findings]


def test_corpus_outputs_and_findings_equal_the_interpreters():
    took = set()
    for ex in CORPUS:
        args = ex.make_inputs("small")
        kw = ex.launch(args).kwargs()
        ra, outa = _launch(ex.kernel, args, kw, "auto")
        if ra.tier == "interpreter" and "compiled run stopped" not in ra.tier_reason:
            assert ra.tier_reason, ex.name    # not covered: the interpreter alone ran
            continue
        ri, outi = _launch(ex.kernel, args, kw, "interpreter")
        assert outa == outi, f"{ex.name}: the compiled tier's outputs differ"
        assert _findings(ra) == _findings(ri), ex.name
        assert ri.tier == "interpreter"
        if ra.tier == "compiled":
            took.add(ex.name)
            assert ra.sim.instructions == ri.sim.instructions, ex.name
    assert took == COVERED


def test_planted_memcheck_bugs_are_reported_by_the_interpreter_after_a_bail():
    for bug in (b for b in PLANTED_BUGS if b.check in ("memcheck", "budget")):
        args = bug.make_inputs()
        kw = bug.launch(args).kwargs()
        ri, outi = _launch(bug.kernel, args, kw, "interpreter")
        ra, outa = _launch(bug.kernel, args, kw, "auto")
        assert _findings(ra) == _findings(ri) and ra.findings, bug.name
        assert outa == outi, bug.name
        assert ra.tier == "interpreter" and "compiled run stopped" in ra.tier_reason, bug.name


# ---------------------------------------------------------------- hand-written PTX

_F32 = [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000,
        0x7FC12345, 0xFFC00001, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0x4F000000,
        0xCF000000, 0x5F000000, 0xDF800000, 0x3EAAAAAB, 0x40490FDB, 0xC1200000, 0x33800001,
        0x7FFFFFFF, 0x0000001F, 0x00000020, 0x00000041, 0xFFFFFFFF]
_F64 = [0x0000000000000000, 0x8000000000000000, 0x3FF0000000000000, 0xBFF8000000000000,
        0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0x7FF8DEAD00000001,
        0x0000000000000001, 0x8000000000000003, 0x7FEFFFFFFFFFFFFF, 0x43E0000000000000,
        0xC3E0000000000000, 0x43F0000000000000, 0x41E0000000000000, 0xC1E0000000200000,
        0x3FD5555555555555, 0x000FFFFFFFFFFFFF, 0x3CB0000000000001, 0x8000000000000000,
        0x7FFFFFFFFFFFFFFF, 0xFFFFFFFF80000000, 0x0000000000000040, 0x0000000000000021]

#: (instruction(s), destination: "r" 32-bit, "x" 64-bit, "p" predicate)
_OPS = [(f"{op} %d, %a, %b;", "r") for op in (
    "add.rn.f32", "sub.rn.f32", "mul.rn.f32", "add.rz.f32", "add.rm.f32", "add.rp.f32",
    "sub.rm.f32", "sub.rp.f32", "mul.rz.f32", "mul.rm.f32", "mul.rp.f32", "add.rn.ftz.f32",
    "add.rn.sat.f32", "mul.rn.ftz.sat.f32", "div.rn.f32", "div.rz.f32", "div.rm.f32",
    "div.approx.f32", "div.approx.ftz.f32", "div.full.f32", "div.rn.ftz.f32", "min.f32",
    "max.f32", "min.NaN.f32", "max.NaN.f32", "max.ftz.f32", "min.ftz.NaN.f32",
    "copysign.f32", "add.s32", "sub.s32", "add.sat.s32", "sub.sat.s32", "mul.lo.s32",
    "mul.hi.s32", "mul.hi.u32", "div.s32", "div.u32", "rem.s32", "rem.u32", "min.s32",
    "max.s32", "min.u32", "max.u32", "shl.b32", "shr.u32", "shr.s32", "and.b32", "or.b32",
    "xor.b32", "mul.lo.u16", "add.u16")] + [(f"{op} %d, %a, %b, %c;", "r") for op in (
        "fma.rn.f32", "fma.rz.f32", "fma.rm.f32", "fma.rp.f32", "fma.rn.ftz.f32",
        "fma.rn.sat.f32", "mad.rn.f32", "mad.lo.s32", "mad.hi.u32", "mad.hi.s32",
        "shf.l.wrap.b32", "shf.r.wrap.b32", "shf.l.clamp.b32", "shf.r.clamp.b32", "prmt.b32",
        "bfe.u32", "bfe.s32", "max.s32", "min.f32", "max.NaN.f32")] + [
    (f"{op} %d, %a;", "r") for op in (
        "abs.f32", "neg.f32", "abs.ftz.f32", "neg.ftz.f32", "sqrt.rn.f32", "sqrt.approx.f32",
        "sqrt.rz.f32", "sqrt.rp.f32", "sqrt.approx.ftz.f32", "rsqrt.approx.f32",
        "rsqrt.approx.ftz.f32", "rcp.rn.f32", "rcp.approx.f32", "rcp.approx.ftz.f32",
        "rcp.rz.f32", "rcp.rm.f32", "ex2.approx.f32", "ex2.approx.ftz.f32", "lg2.approx.f32",
        "lg2.approx.ftz.f32", "sin.approx.f32", "cos.approx.ftz.f32", "tanh.approx.f32",
        "abs.s32", "neg.s32", "not.b32", "cnot.b32", "popc.b32", "clz.b32", "brev.b32",
        "cvt.rni.s32.f32", "cvt.rzi.s32.f32", "cvt.rmi.u32.f32", "cvt.rpi.u32.f32",
        "cvt.rni.ftz.s32.f32", "cvt.rn.f32.s32", "cvt.rn.f32.u32", "cvt.rni.f32.f32",
        "cvt.rzi.f32.f32", "cvt.rmi.f32.f32", "cvt.rpi.ftz.f32.f32", "cvt.sat.f32.f32",
        "cvt.ftz.f32.f32", "cvt.rn.sat.f32.s32", "cvt.s8.s32", "cvt.u8.u32", "cvt.s16.s32",
        "cvt.sat.s8.s32", "cvt.sat.u8.s32", "cvt.sat.u16.u32", "cvt.sat.s32.u32",
        "cvt.rzi.s16.f32", "cvt.rzi.u8.f32", "mov.b32")] + [
    (f"{op} %d, %xa;", "r") for op in (
        "cvt.rn.f32.f64", "cvt.rz.f32.f64", "cvt.rm.f32.f64", "cvt.rp.f32.f64",
        "cvt.rn.ftz.f32.f64", "cvt.rzi.s32.f64", "cvt.rzi.u32.f64", "cvt.rni.s32.f64",
        "cvt.rn.f32.s64", "cvt.rn.f32.u64", "cvt.u32.u64", "cvt.sat.s32.s64",
        "cvt.sat.u32.s64", "popc.b64", "clz.b64")] + [
    (f"{op} %xd, %xa, %xb;", "x") for op in (
        "add.rn.f64", "sub.rn.f64", "mul.rn.f64", "div.rn.f64", "min.f64", "max.f64",
        "copysign.f64", "add.s64", "mul.lo.s64", "mul.hi.s64", "mul.hi.u64", "div.s64",
        "div.u64", "rem.s64", "rem.u64", "min.s64", "max.u64", "and.b64", "xor.b64")] + [
    (f"{op} %xd, %xa;", "x") for op in (
        "abs.f64", "neg.f64", "sqrt.rn.f64", "rcp.rn.f64", "rcp.approx.ftz.f64",
        "rsqrt.approx.ftz.f64", "rsqrt.approx.f64", "cvt.rzi.s64.f64", "cvt.rzi.u64.f64",
        "cvt.rni.s64.f64", "cvt.rmi.f64.f64", "cvt.rn.f64.s64", "cvt.rn.f64.u64",
        "brev.b64", "not.b64", "neg.s64")] + [
    ("fma.rn.f64 %xd, %xa, %xb, %xc;", "x"), ("mad.wide.s32 %xd, %a, %b, %xc;", "x"),
    ("mad.wide.u32 %xd, %a, %b, %xc;", "x"), ("mul.wide.s32 %xd, %a, %b;", "x"),
    ("mul.wide.u32 %xd, %a, %b;", "x"), ("shl.b64 %xd, %xa, %b;", "x"),
    ("shr.s64 %xd, %xa, %b;", "x"), ("shr.u64 %xd, %xa, %b;", "x"),
    ("bfe.s64 %xd, %xa, %b, %c;", "x"), ("bfe.u64 %xd, %xa, %b, %c;", "x"),
    ("cvt.f64.f32 %xd, %a;", "x"), ("cvt.ftz.f64.f32 %xd, %a;", "x"),
    ("cvt.rpi.s64.f32 %xd, %a;", "x"), ("cvt.rzi.u64.f32 %xd, %a;", "x"),
    ("cvt.s64.s32 %xd, %a;", "x"), ("cvt.u64.s32 %xd, %a;", "x"),
    ("cvt.rn.f64.s32 %xd, %a;", "x"),
    ("add.cc.u32 %d, %a, %b; addc.cc.u32 %t, %c, %a; addc.u32 %t2, %b, %b; "
     "xor.b32 %d, %d, %t; xor.b32 %d, %d, %t2;", "r"),
    ("sub.cc.u32 %d, %a, %b; subc.u32 %t, %c, %a; xor.b32 %d, %d, %t;", "r"),
    ("mad.lo.cc.u32 %d, %a, %b, %c; madc.hi.u32 %t, %a, %b, %c; xor.b32 %d, %d, %t;", "r"),
    ("selp.b32 %d, %a, %b, %q;", "r"), ("selp.f32 %d, %c, %a, %q;", "r"),
    ("slct.s32.f32 %d, %a, %b, %c;", "r"), ("slct.b32.s32 %d, %a, %b, %c;", "r"),
] + [(f"setp.{cmp}.f32 %p, %a, %b;", "p") for cmp in (
    "eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num",
    "nan")] + [(f"setp.{cmp} %p, %a, %b;", "p") for cmp in (
        "lt.s32", "lo.u32", "hs.u32", "ge.u32", "lt.ftz.f32", "eq.ftz.f32", "lt.and.s32",
        "ne.or.b32", "gtu.xor.f32")] + [
    ("setp.lt.f64 %p, %xa, %xb;", "p"), ("setp.neu.f64 %p, %xa, %xb;", "p"),
    ("setp.lt.s64 %p, %xa, %xb;", "p"), ("setp.hi.u64 %p, %xa, %xb;", "p"),
    ("setp.lt.s32 %p|%p2, %a, %b; and.pred %p, %p, %q; or.pred %p, %p, %p2;", "p"),
] + [(f"testp.{k}.f32 %p, %a;", "p") for k in (
    "finite", "infinite", "number", "notanumber", "normal", "subnormal")] + [
    ("testp.subnormal.f64 %p, %xa;", "p")]


def _ptx(ops) -> str:
    body = []
    for k, (text, dst) in enumerate(ops):
        setp = text.split()[0].split(".")[0] == "setp"
        t = text
        # setp's combining forms read %q (a predicate from the inputs)
        if setp and (".and." in text or ".or." in text or ".xor." in text):
            t = t.replace(";", ", %q;", 1)
        body.append(t)
        if dst == "r":
            body.append("cvt.u64.u32 %xd, %d;")
        elif dst == "p":
            body.append("selp.b64 %xd, 1, 0, %p;")
        body.append(f"st.global.b64 [%out+{8 * k}], %xd;")
    return """
.version 7.8
.target sm_90
.address_size 64
.visible .entry ops(.param .u64 arg_a, .param .u64 arg_b, .param .u64 arg_c,
                    .param .u64 arg_out, .param .u32 arg_n)
{
    .reg .pred %p, %p2, %q, %done;
    .reg .b32 %a, %b, %c, %d, %t, %t2, %i, %n, %bi, %bd, %ti;
    .reg .b64 %xa, %xb, %xc, %xd, %pa, %pb, %pc, %out, %off, %row;
    ld.param.u64 %pa, [arg_a];
    ld.param.u64 %pb, [arg_b];
    ld.param.u64 %pc, [arg_c];
    ld.param.u64 %out, [arg_out];
    ld.param.u32 %n, [arg_n];
    mov.u32 %bi, %ctaid.x;
    mov.u32 %bd, %ntid.x;
    mov.u32 %ti, %tid.x;
    mad.lo.s32 %i, %bi, %bd, %ti;
    setp.ge.u32 %done, %i, %n;
    @%done ret;
    mul.wide.u32 %off, %i, 8;
    add.s64 %pa, %pa, %off;
    add.s64 %pb, %pb, %off;
    add.s64 %pc, %pc, %off;
    ld.global.b64 %xa, [%pa];
    ld.global.b64 %xb, [%pb];
    ld.global.b64 %xc, [%pc];
    cvt.u32.u64 %a, %xa;
    cvt.u32.u64 %b, %xb;
    cvt.u32.u64 %c, %xc;
    setp.lt.s32 %q, %c, 0;
    mul.wide.u32 %row, %i, %NBYTES;
    add.s64 %out, %out, %row;
""".replace("%NBYTES", str(8 * len(ops))) + "\n".join("    " + x for x in body) + \
        "\n    ret;\n}\n"


def _inputs():
    pool = _F64 + [(hi << 32) | lo for lo, hi in zip(_F32, _F32[7:] + _F32[:7])] + _F32
    a, b = np.meshgrid(np.array(pool, np.uint64), np.array(pool, np.uint64))
    a, b = a.reshape(-1), b.reshape(-1)
    c = np.roll(b, 7) ^ np.roll(a, 3)
    return a, b, c


def _run(mod, a, b, c, tier, nops, checks=()):
    mem = sim.GlobalMemory()
    n = a.size
    addrs = [mem.alloc(x.nbytes) for x in (a, b, c)]
    for addr, x in zip(addrs, (a, b, c)):
        mem.write(addr, x)
    out = mem.alloc(n * 8 * nops)
    params = np.array([*addrs, out], np.uint64).tobytes() + np.uint32(n).tobytes()
    r = sim.run(mod, "ops", grid=((n + 127) // 128,), block=(128,), params=params, memory=mem,
                checks=checks, metrics=False, tier=tier)
    return r, np.frombuffer(mem.read(out, n * 8 * nops), np.uint64).reshape(n, nops)


def _semantics(ops):
    mod = sim.parse_module(_ptx(ops))
    a, b, c = _inputs()
    ri, want = _run(mod, a, b, c, "interpreter", len(ops))
    rc, got = _run(mod, a, b, c, "compiled", len(ops))
    assert rc.tier == "compiled" and ri.tier == "interpreter"
    bad = [(ops[k][0], hex(int(a[i])), hex(int(b[i])), hex(int(c[i])), hex(int(want[i, k])),
            hex(int(got[i, k]))) for k in range(len(ops))
           for i in np.flatnonzero(want[:, k] != got[:, k])[:1]]
    assert not bad, f"{len(bad)} instructions differ, e.g. {bad[:6]}"
    assert rc.instructions == ri.instructions


def test_instruction_semantics_bit_for_bit_on_special_values():
    """A third of the instructions (every third; the JIT compile of all of them takes
    ~5 s here, the slow test below runs them all)."""
    _semantics(_OPS[::3])


@pytest.mark.slow
def test_every_instruction_bit_for_bit_on_special_values():
    _semantics(_OPS)


def test_division_by_zero_under_memcheck_is_the_interpreters_finding():
    mod = sim.parse_module(_ptx([("div.s32 %d, %a, %b;", "r")]))
    a = np.array([7, 8, 9, 10], np.uint64)
    b = np.array([1, 0, 2, 0], np.uint64)
    c = np.zeros(4, np.uint64)
    ri, want = _run(mod, a, b, c, "interpreter", 1, ("memcheck",))
    ra, got = _run(mod, a, b, c, "auto", 1, ("memcheck",))
    assert [f.kind for f in ra.findings] == [f.kind for f in ri.findings] == ["division_by_zero"]
    assert ra.findings[0].thread == ri.findings[0].thread == (1, 0, 0)
    assert ra.tier == "interpreter" and "division by zero" in ra.tier_reason
    assert (want == got).all()


# ---------------------------------------------------------------- fallbacks

def test_fallback_reasons_and_tier_compiled_refusing():
    from warp_lab.examples import get

    ex = get("block_sum")
    args = ex.make_inputs("small")
    kw = ex.launch(args).kwargs()
    r, _ = _launch(ex.kernel, args, kw, "auto")
    assert r.tier == "interpreter" and "shared memory" in r.tier_reason
    with pytest.raises(wl.SimulatorError, match="compiled tier cannot run.*shared memory"):
        _launch(ex.kernel, args, kw, "compiled")
    sax = get("saxpy")
    args = sax.make_inputs("small")
    kw = sax.launch(args).kwargs()
    a = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    r = wl.launch(sax.kernel, inputs=a, device="sim", tier="auto", **kw)   # metrics on
    assert r.tier == "interpreter" and "metrics" in r.tier_reason
    r = wl.launch(sax.kernel, inputs=a, device="sim", tier="auto", metrics=False,
                  max_instructions=10**9, **kw)
    assert r.tier == "interpreter" and "max_instructions" in r.tier_reason
    r, _ = _launch(sax.kernel, args, kw, "compiled")
    assert r.tier == "compiled" and r.sim.metrics is None
    with pytest.raises(wl.LaunchError, match="tier must be"):
        wl.launch(sax.kernel, inputs=a, device="sim", tier="fast", **kw)


def test_progress_and_a_raising_callback_on_the_compiled_tier():
    from warp_lab.examples import get

    ex = get("saxpy")
    args = ex.make_inputs("small")
    kw = ex.launch(args).kwargs()
    calls = []
    a = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    r = wl.launch(ex.kernel, inputs=a, device="sim", tier="compiled", metrics=False,
                  progress=lambda done, total: calls.append((done, total)), **kw)
    assert r.tier == "compiled" and "compiled tier" in r.time_text
    done = [d for d, _ in calls]
    assert done == sorted(done) and calls[-1][0] == calls[-1][1] == r.grid[0]

    def stop(done, total):
        raise RuntimeError("cancel")
    b = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    r = wl.launch(ex.kernel, inputs=b, device="sim", tier="compiled", metrics=False,
                  progress=stop, **kw)
    assert r.partial and [f.kind for f in r.findings] == ["interrupted"]
    assert all(np.array_equal(x, y) for x, y in zip(b, args) if isinstance(x, np.ndarray))


@wl.kernel
def _all_store_one(out: wl.array(dtype=wl.int32), x: wl.array(dtype=wl.int32)):
    i = wl.tid()
    x[i] = i            # distinct words: no collision
    out[0] = i          # every thread the same word: memcheck's global_conflict


def test_stores_of_two_threads_to_one_word_bail_every_launch():
    for _ in range(2):   # the second launch reuses the shadow (a new epoch base)
        out, x = np.zeros(1, np.int32), np.zeros(300, np.int32)
        ri = wl.launch(_all_store_one, dim=300, inputs=[out.copy(), x.copy()], device="sim",
                       tier="interpreter", metrics=False)
        ra = wl.launch(_all_store_one, dim=300, inputs=[out, x], device="sim", tier="auto",
                       metrics=False)
        assert [f.kind for f in ra.findings] == [f.kind for f in ri.findings] == \
            ["global_conflict"]
        assert ra.tier == "interpreter" and "two threads stored" in ra.tier_reason
        assert (x == np.arange(300)).all()
    r = wl.launch(_all_store_one, dim=300, inputs=[out, x], device="sim", tier="auto",
                  metrics=False, checks=())      # no memcheck: no shadow, the compiled tier
    assert r.tier == "compiled" and (x == np.arange(300)).all()
