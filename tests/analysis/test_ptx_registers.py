"""register_notes on real compiled kernels, checked against the PTX read by hand.

Each expectation below comes from reading the kernel's PTX (sm_80, ``lineinfo``): the
test finds the instruction it was read from by its text (an ``ld.param`` of a given
slot and offset, a ``mov`` from a special register, a ``setp`` of a given comparison)
and checks what the note says about that instruction's destination. The parameter
slots follow the kernel ABI (``compiler/abi.py``: slot 0 the launch extent
``{x, y, z}`` u32, then per array ``{ptr u64, shape[ndim] s32, strides[ndim] s32}``,
then each scalar); the types follow PTX ISA 5.2 (the instruction's type suffix, a
``.wide`` product being twice as wide, a register read only inside ``[...]`` an
address); the special registers PTX ISA 10.
"""

from __future__ import annotations

import inspect
import re

import pytest

import warp_lab as wl
from warp_lab.analysis.ptx_registers import RegisterNote, register_notes


@wl.kernel
def rows(img: wl.array(dtype=wl.float32, ndim=2), out: wl.array(dtype=wl.float64),
         a: wl.float32, n: wl.int64, h: wl.float16):
    i, j = wl.tid()
    if j < img.shape[1] and i < 4:
        v = img[i, j] * a
        out[j] = wl.float64(v) + wl.float64(n) + wl.float64(h)


@wl.kernel
def clip(x: wl.array(dtype=wl.float32), lanes: wl.array(dtype=wl.int32)):
    i = wl.tid()
    lanes[i] = wl.lane_id()
    v = x[i]
    if v > 0.5:
        x[i] = v - 0.5


def _line(kernel, text: str) -> int:
    """The file line of the kernel's source line containing ``text``."""
    src, first = inspect.getsourcelines(kernel.fn)
    return first + next(k for k, ln in enumerate(src) if text in ln)


def _body(ck) -> list[str]:
    ptx = ck.ptx
    body = ptx[ptx.index(".entry"):ptx.index("$L__func_end0")]
    return [ln.strip() for ln in body.splitlines()]


def _dests(ck, pattern: str) -> list[str]:
    """The destination register(s) of the one instruction matching ``pattern``."""
    found = [ln for ln in _body(ck) if re.search(pattern, ln)]
    assert len(found) == 1, (pattern, found)
    ops = found[0].split(None, 1)[1]
    if ops.startswith("{"):
        return [r.strip() for r in ops[1:ops.index("}")].split(",")]
    return [ops.split(",")[0].strip()]


@pytest.fixture(scope="module")
def rows_ck():
    return wl.compile(rows, arch="sm_80", lineinfo=True)


@pytest.fixture(scope="module")
def clip_ck():
    return wl.compile(clip, arch="sm_80", lineinfo=True)


def test_parameter_fields_are_named_by_slot_and_offset(rows_ck):
    notes = register_notes(rows_ck)
    # slot 0 is the launch extent: +0 x, +4 y (the threads past it return at entry)
    (dim_x,) = _dests(rows_ck, r"^ld\.param\.b32\s.*\[rows_param_0\];")
    (dim_y,) = _dests(rows_ck, r"^ld\.param\.b32\s.*\[rows_param_0\+4\];")
    assert notes[dim_x].name == "dim.x" and notes[dim_y].name == "dim.y"
    # img (slot 1, 2-D): ptr at +0; one ld.param.v2 reads shape[0], shape[1] (+8, +12),
    # another strides[0], strides[1] (+16, +20)
    (ptr,) = _dests(rows_ck, r"^ld\.param\.b64\s.*\[rows_param_1\];")
    shape0, shape1 = _dests(rows_ck, r"^ld\.param\.v2\.b32\s.*\[rows_param_1\+8\];")
    stride0, stride1 = _dests(rows_ck, r"^ld\.param\.v2\.b32\s.*\[rows_param_1\+16\];")
    assert [notes[r].name for r in (ptr, shape0, shape1, stride0, stride1)] == [
        "img.ptr", "img.shape[0]", "img.shape[1]", "img.strides[0]", "img.strides[1]"]
    # out (slot 2, 1-D) ptr; the scalars a, n, h in slots 3, 4, 5
    (out_ptr,) = _dests(rows_ck, r"^ld\.param\.b64\s.*\[rows_param_2\];")
    (a,) = _dests(rows_ck, r"^ld\.param\.b32\s.*\[rows_param_3\];")
    (n,) = _dests(rows_ck, r"^ld\.param\.b64\s.*\[rows_param_4\];")
    (h,) = _dests(rows_ck, r"^ld\.param\.b16\s.*\[rows_param_5\];")
    assert [notes[r].name for r in (out_ptr, a, n, h)] == ["out.ptr", "a", "n", "h"]
    # the loads are untyped (.b); the type is the one the readers use: a in mul.rn.f32,
    # n in cvt.rn.f64.s64 (the source type, the last suffix), h in cvt.f64.f16, the
    # extent in setp.lt.u32; shape[0] nothing reads, so no type
    assert (notes[a].type, notes[n].type, notes[h].type) == ("f32", "s64", "f16")
    assert notes[dim_x].type == "u32" and notes[shape0].type == ""
    assert notes[shape1].type == "s32"   # setp.ge.s32 against the x index


def test_special_registers_and_the_lines_that_write_them(rows_ck):
    notes = register_notes(rows_ck)
    tid_line = _line(rows, "i, j = wl.tid()")
    for sreg, name in [("tid.x", "wl.thread_idx.x"), ("ntid.x", "wl.block_dim.x"),
                       ("ctaid.x", "wl.block_idx.x"), ("tid.y", "wl.thread_idx.y"),
                       ("ntid.y", "wl.block_dim.y"), ("ctaid.y", "wl.block_idx.y")]:
        (reg,) = _dests(rows_ck, rf"^mov\.u32\s.*%{re.escape(sreg)};")
        assert notes[reg] == RegisterNote("u32", name, (tid_line,), "")
    # the global index ctaid.x * ntid.x + tid.x: a mad.lo.s32 of the three, line of tid()
    for axis in "xy":
        assert notes[_mad_of_specials(rows_ck, axis)] == RegisterNote("s32", "", (tid_line,), "")


def _mad_of_specials(ck, axis: str) -> str:
    """The register ``mad.lo.s32 d, ctaid.<axis>, ntid.<axis>, tid.<axis>`` writes."""
    (c,) = _dests(ck, rf"^mov\.u32\s.*%ctaid\.{axis};")
    (n,) = _dests(ck, rf"^mov\.u32\s.*%ntid\.{axis};")
    (t,) = _dests(ck, rf"^mov\.u32\s.*%tid\.{axis};")
    return _dests(ck, rf"^mad\.lo\.s32\s+%r\d+, {c}, {n}, {t};")[0]


def test_computed_registers_have_their_instruction_type_and_python_line(rows_ck):
    notes = register_notes(rows_ck)
    mul_line = _line(rows, "v = img[i, j] * a")
    out_line = _line(rows, "out[j] = wl.float64(v)")
    (a,) = _dests(rows_ck, r"^ld\.param\.b32\s.*\[rows_param_3\];")
    (prod,) = _dests(rows_ck, rf"^mul\.rn\.f32\s+%r\d+, {a}, ")
    assert notes[prod] == RegisterNote("f32", "", (mul_line,), "")
    # the element offset (i * strides[0] + j) * 4 as a .wide product: s32 sources, s64
    (offset,) = _dests(rows_ck, r"^mul\.wide\.s32\s")
    assert notes[offset].type == "s64" and notes[offset].lines == (mul_line,)
    # out's offset j * 8 with j unsigned here: u32 sources, a u64 product
    (offset8,) = _dests(rows_ck, r"^mul\.wide\.u32\s.*, 8;")
    assert notes[offset8].type == "u64" and notes[offset8].lines == (out_line,)
    # the float64 conversions write f64 (the first type suffix is the destination's)
    for pattern in (r"^cvt\.f64\.f32\s", r"^cvt\.rn\.f64\.s64\s", r"^cvt\.f64\.f16\s"):
        (r,) = _dests(rows_ck, pattern)
        assert notes[r] == RegisterNote("f64", "", (out_line,), ""), pattern
    # the stored sum: the last add.rn.f64, read by st.global.b64
    sums = [ln.split()[1].rstrip(",") for ln in _body(rows_ck) if ln.startswith("add.rn.f64")]
    assert len(sums) == 2 and notes[sums[-1]].type == "f64"


def test_predicates_show_the_compiled_comparison(rows_ck, clip_ck):
    notes = register_notes(rows_ck)
    j = _mad_of_specials(rows_ck, "x")
    (dim_x,) = _dests(rows_ck, r"^ld\.param\.b32\s.*\[rows_param_0\];")
    (shape1,) = _dests(rows_ck, r"^ld\.param\.v2\.b32\s.*\[rows_param_1\+8\];")[1:]
    # the launch guard: index < dim.x, named by the parameter it reads
    (guard,) = _dests(rows_ck, rf"^setp\.lt\.u32\s+%p\d+, {j}, {dim_x};")
    assert notes[guard].test == f"{j} < dim.x" and notes[guard].type == "pred"
    # `if j < img.shape[1] and i < 4` compiles to "leave when j >= shape[1] or i > 3":
    # the predicate is the opposite of the Python condition, and says so
    (skip,) = _dests(rows_ck, rf"^setp\.ge\.s32\s+%p\d+, {j}, {shape1};")
    assert notes[skip].test == f"{j} >= img.shape[1]"
    # and.pred / or.pred: predicates, but no comparison of their own
    (both,) = _dests(rows_ck, r"^or\.pred\s")
    assert notes[both].type == "pred" and notes[both].test == ""
    # a float test: `if v > 0.5` skips the body when v <= 0.5 or v is NaN (setp.leu)
    cnotes = register_notes(clip_ck)
    (v,) = _dests(clip_ck, r"^ld\.global\.b32\s")
    (p,) = _dests(clip_ck, rf"^setp\.leu\.f32\s+%p\d+, {v}, 0f3F000000;")
    assert cnotes[p].test == f"{v} <= (or NaN) 0f3F000000"
    assert cnotes[p].lines == (_line(clip, "if v > 0.5"),)
    # the value read from x[i]: typed by its reader (setp.leu.f32, sub.rn.f32)
    assert cnotes[v].type == "f32" and cnotes[v].lines == (_line(clip, "v = x[i]"),)


def test_lane_id_addresses_and_unknown_functions(clip_ck):
    notes = register_notes(clip_ck)
    (lane,) = _dests(clip_ck, r"^mov\.u32\s.*%laneid;")
    assert notes[lane].name == "wl.lane_id()"
    assert notes[lane].lines == (_line(clip, "lanes[i] = wl.lane_id()"),)
    # an address computed by add.s64 and only read inside [...] of the store
    store = next(ln for ln in _body(clip_ck) if ln.startswith("st.global.b32"))
    addr = re.search(r"\[(%rd\d+)\]", store).group(1)
    assert notes[addr].type == "s64"   # its writer's type, add.s64
    # only registers some instruction writes have notes; another function has none
    declared = {f"%{k}{n}" for k, count in re.findall(r"\.reg \.\w+\s+%(\w+)<(\d+)>",
                                                      clip_ck.ptx)
                for n in range(int(count))}
    assert set(notes) < declared
    assert register_notes(clip_ck, "no_such_function") == {}
