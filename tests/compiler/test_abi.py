"""The parameter ABI against the PTX the compiler emits, for every corpus kernel.

Three descriptions of the same parameter buffer must agree:

1. the ``.param`` declarations of the PTX entry, parsed here (sizes from
   ``.b8 name[N]``/``.u32``/..., alignment from ``.align N`` or the natural
   size, each parameter at the next multiple of its alignment: PTX ISA
   "Kernel Function Parameters" and the CUDA driver's parameter buffer);
2. the rules of docs/decisions/0009-types-abi-and-dialect.md applied to the kernel's annotations
   (hidden ``launch_dim`` of 12 bytes, arrays ``{ptr, shape[n], strides[n]}``);
3. ``ck.param_layout`` and the bytes :func:`warp_lab.compiler.abi.pack_params`
   builds, decoded with the PTX types;
4. where ptxas placed each parameter in the cubin (``.nv.info`` records the CUDA
   driver lays the arguments out by), for the corpus and for a kernel with every
   scalar, vector and matrix type as a parameter.
"""

from __future__ import annotations

import inspect
import re
import struct

import numpy as np
import pytest
from corpus_artifacts import assembled, compiled

import warp_lab as wl
from warp_lab.compiler.abi import ArrayArg, buffer_size, pack_params
from warp_lab.examples import CORPUS
from warp_lab.lang.types import ArrayType, Matrix, Scalar, Vector, as_type

_PARAM_RE = re.compile(
    r"^\.param\s+(?:\.align\s+(?P<align>\d+)\s+)?\.(?P<kind>[bsuf])(?P<bits>\d+)\s+"
    r"(?P<name>[\w$]+)(?:\[(?P<count>\d+)\])?$")


def ptx_entry_params(ptx: str, entry: str) -> list[dict]:
    """The entry's parameters in declaration order: name, kind, bits, size, align, offset."""
    m = re.search(rf"\.entry\s+{re.escape(entry)}\s*\((.*?)\)", ptx, re.S)
    assert m, f"no .entry {entry} in the PTX"
    out, offset = [], 0
    for decl in filter(None, (d.strip() for d in m.group(1).split(","))):
        p = _PARAM_RE.match(decl)
        assert p, f"unparsed parameter declaration {decl!r}"
        bits = int(p["bits"])
        count = int(p["count"] or 1)
        size = bits // 8 * count
        align = int(p["align"]) if p["align"] else bits // 8
        offset = (offset + align - 1) // align * align
        out.append({"name": p["name"], "kind": p["kind"], "bits": bits, "count": count,
                    "size": size, "align": align, "offset": offset})
        offset += size
    return out


def _annotation_layout(kernel) -> list[tuple[int, int]]:
    """(size, align) per parameter from the annotations and docs/decisions/0009-types-abi-and-dialect.md."""
    out = [(12, 4)]                                     # hidden launch_dim {int32 x, y, z}
    for ann in inspect.get_annotations(kernel.fn, eval_str=True).values():
        t = as_type(ann)
        if isinstance(t, ArrayType):
            out.append((8 + 8 * t.ndim, 8))
        elif isinstance(t, Scalar):
            size = np.dtype(t.numpy).itemsize
            out.append((size, size))
        elif isinstance(t, Vector):
            out.append((t.n * t.elem.numpy.itemsize, t.elem.numpy.itemsize))
        elif isinstance(t, Matrix):
            out.append((t.rows * t.cols * t.elem.numpy.itemsize, t.elem.numpy.itemsize))
        else:
            raise AssertionError(f"unexpected parameter type {t!r}")
    return out


@pytest.mark.parametrize("ex", CORPUS, ids=[e.name for e in CORPUS])
def test_param_layout_matches_ptx(ex):
    ck = compiled(ex, "sm_90")
    decls = ptx_entry_params(ck.ptx, ck.entry)
    layout = ck.param_layout
    assert len(decls) == len(layout) == len(ex.param_names) + 1
    assert [(d["offset"], d["size"], d["align"]) for d in decls] == \
        [(s.offset, s.size, s.align) for s in layout]
    assert [(d["size"], d["align"]) for d in decls] == _annotation_layout(ex.kernel)
    assert [s.name for s in layout[1:]] == ex.param_names
    assert buffer_size(layout) == decls[-1]["offset"] + decls[-1]["size"]


@pytest.mark.parametrize("ex", CORPUS, ids=[e.name for e in CORPUS])
def test_packed_bytes_decode_with_ptx_types(ex):
    ck = compiled(ex, "sm_90")
    decls = ptx_entry_params(ck.ptx, ck.entry)
    args = ex.make_inputs()
    values, expected = [], []
    for k, (a, slot) in enumerate(zip(args, ck.param_layout[1:])):
        if isinstance(slot.type, ArrayType):
            arg = ArrayArg(0x7F0000001000 + 0x100000 * k, tuple(np.shape(a)[:slot.type.ndim]),
                           tuple(s // a.itemsize for s in a.strides[:slot.type.ndim]))
            values.append(arg)
            expected.append(("array", arg))
        else:
            values.append(a)
            expected.append(("value", np.asarray(a, dtype=slot.type.numpy)))
    buf = pack_params(ck.param_layout, (5, 6, 7), values)
    assert len(buf) == buffer_size(ck.param_layout)
    assert struct.unpack_from("<3i", buf, decls[0]["offset"]) == (5, 6, 7)
    for d, (what, v) in zip(decls[1:], expected):
        if what == "array":
            ndim = (d["size"] - 8) // 8
            assert d["kind"] == "b" and d["bits"] == 8 and d["align"] == 8
            got = struct.unpack_from(f"<Q{ndim}i{ndim}i", buf, d["offset"])
            assert got == (v.address, *v.shape, *v.strides)
        elif d["count"] == 1:                           # a scalar in a typed .param
            # LLVM has no signed integer types, so NVPTX declares ints .u/.b: compare bits
            assert buf[d["offset"]: d["offset"] + d["size"]] == v.tobytes(), (d["name"], v)
            is_float = v.dtype.kind == "f" and v.dtype.itemsize > 2
            assert (d["kind"] == "f") == is_float, \
                f"{d['name']}: .{d['kind']}{d['bits']} for {v.dtype}"
        else:                                           # a vector or matrix: its components
            comps = np.asarray(v).reshape(-1)
            got = np.frombuffer(buf, comps.dtype, len(comps), d["offset"])
            np.testing.assert_array_equal(got, comps)


def test_non_contiguous_strides_are_in_elements():
    ex = next(e for e in CORPUS if e.name == "strided_rows")
    src = ex.make_inputs()[0]
    assert tuple(s // 4 for s in src.strides) == (2, 40)   # base[:, ::2].T of a (24, 40) array


@pytest.mark.parametrize("arch", ["sm_70", "sm_80"])
def test_layout_does_not_depend_on_arch(arch):
    for name in ("saxpy", "scalar_params", "affine", "index_3d"):
        ex = next(e for e in CORPUS if e.name == name)
        a = assembled(ex, arch)
        assert [(d["offset"], d["size"], d["align"]) for d in ptx_entry_params(a.ptx, a.entry)] \
            == [(s.offset, s.size, s.align) for s in compiled(ex, "sm_90").param_layout]


# -- the layout ptxas wrote into the cubin ------------------------------------------------

_EIATTR_KPARAM_INFO, _EIATTR_CBANK_PARAM_SIZE = 0x17, 0x19
_EIFMT_SVAL = 0x04  # a record with a u16 size and that many bytes; the others carry 2 bytes


def _elf_sections(elf: bytes) -> dict[str, bytes]:
    """Section name -> contents of a little-endian ELF64 file (a cubin)."""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + k * shentsize)
               for k in range(shnum)]
    names = headers[shstrndx]

    def name(offset):
        start = names[4] + offset
        return elf[start:elf.index(b"\0", start)].decode()

    return {name(h[0]): elf[h[4]:h[4] + h[5]] for h in headers}


def cubin_params(cubin: bytes, entry: str) -> tuple[list[tuple[int, int]], int]:
    """``(offset, size)`` of each parameter in ordinal order and the parameter bytes, as
    ptxas recorded them for the CUDA driver in the entry's ``.nv.info.<entry>`` section
    (the ``EIATTR_KPARAM_INFO`` records, Ordinal/Offset/Size, and
    ``EIATTR_CBANK_PARAM_SIZE`` that ``cuobjdump -elf`` prints)."""
    info = _elf_sections(cubin)[f".nv.info.{entry}"]
    params, total, k = {}, None, 0
    while k < len(info):
        fmt, attr = info[k], info[k + 1]
        if fmt == _EIFMT_SVAL:
            size, = struct.unpack_from("<H", info, k + 2)
            payload, k = info[k + 4:k + 4 + size], k + 4 + size
        else:
            payload, k = info[k + 2:k + 4], k + 4
        if attr == _EIATTR_KPARAM_INFO:
            _, ordinal, offset, word = struct.unpack("<IHHI", payload)
            params[ordinal] = (offset, word >> 18)
        elif attr == _EIATTR_CBANK_PARAM_SIZE:
            total, = struct.unpack("<H", payload)
    assert sorted(params) == list(range(len(params))), params
    return [params[n] for n in sorted(params)], total


@wl.kernel
def every_param_type(a: wl.bool_, e: wl.uint8, c: wl.int16, j: wl.int8, g: wl.float16,
                     b: wl.float64, r: wl.uint16, d: wl.vec3d, f: wl.mat22, h: wl.vec4i,
                     i: wl.int64, out: wl.array(dtype=wl.float64), k: wl.vec2,
                     grid3: wl.array(dtype=wl.int32, ndim=3), m: wl.uint32, n: wl.mat44,
                     o: wl.uint64, p: wl.vec3i, q: wl.vec2d, s: wl.vec4, t: wl.int32,
                     u: wl.mat33, v: wl.vec2i, w: wl.vec3, x: wl.float32, y: wl.vec4d,
                     points: wl.array(dtype=wl.vec3, ndim=2)):
    """Every scalar, vector and matrix type as a parameter, 1- and 2-byte ones packed
    together and most others after padding (a float16 then a float64, ...), and arrays of
    1..3 dimensions: the corpus has few of these as parameters."""
    out[0] = b + d[2] + f[1, 1] + float(g) + float(i) + float(o) + q[1] + y[3]


@pytest.mark.parametrize("arch", ["sm_75", "sm_90", "sm_120"])
def test_every_parameter_type_is_where_ptxas_put_it(arch):
    ck = wl.compile(every_param_type, arch=arch, cache=False, sass=False)
    assert ck.cubin is not None, ck.missing
    placed, total = cubin_params(ck.cubin, ck.entry)
    decls = ptx_entry_params(ck.ptx, ck.entry)
    assert placed == [(s.offset, s.size) for s in ck.param_layout] \
        == [(d["offset"], d["size"]) for d in decls]
    assert total == buffer_size(ck.param_layout) == 408
    assert [(d["size"], d["align"]) for d in decls] == _annotation_layout(every_param_type)
    # bool, uint8, int16, int8, float16 each at the next multiple of its size from byte
    # 12, then 4 bytes of padding before the float64
    assert [s.offset for s in ck.param_layout[1:7]] == [12, 13, 14, 16, 18, 24]


@pytest.mark.parametrize("ex", CORPUS, ids=[e.name for e in CORPUS])
def test_corpus_parameters_are_where_ptxas_put_them(ex):
    ck = compiled(ex, "sm_90")
    placed, total = cubin_params(ck.cubin, ck.entry)
    assert placed == [(s.offset, s.size) for s in ck.param_layout]
    assert total == buffer_size(ck.param_layout)
