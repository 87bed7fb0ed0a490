"""PTX syntax: statements, declarations and operands (used by :mod:`warp_lab.sim.ptx`).

Statements are split at ``;``, ``{`` and ``}`` outside vector operands and
initialisers; labels and line directives (``.loc``, ``.file``) are their own
statements; ``.section`` (DWARF) blocks are skipped. Operands decode into the
small tuples documented in :func:`_operand`. PTX ISA 8.x, chapter "Syntax".
"""

from __future__ import annotations

import re
import struct

import numpy as np

from warp_lab.errors import SimulatorError

__all__ = ["TYPE_NAMES", "type_dtype", "reg_dtype"]

#: PTX fundamental type suffix → numpy dtype used to interpret register bits.
_TYPES = {
    "pred": np.bool_,
    "b8": np.uint8, "u8": np.uint8, "s8": np.int8,
    "b16": np.uint16, "u16": np.uint16, "s16": np.int16, "f16": np.float16, "bf16": np.uint16,
    "b32": np.uint32, "u32": np.uint32, "s32": np.int32, "f32": np.float32,
    "f16x2": np.uint32, "bf16x2": np.uint32,
    "b64": np.uint64, "u64": np.uint64, "s64": np.int64, "f64": np.float64,
    "b128": np.uint64,
}
TYPE_NAMES = frozenset(_TYPES)
_RAW = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def type_dtype(name: str) -> np.dtype:
    """numpy dtype of a PTX type suffix (``"f32"`` → float32)."""
    return np.dtype(_TYPES[name])


def reg_dtype(name: str) -> np.dtype:
    """Raw storage dtype of a register declared with type ``name``.

    Registers hold raw bits (``.f32`` values live in ``.b32`` registers in
    LLVM's output), so storage is the unsigned integer of the same width;
    predicates are ``bool``.
    """
    if name == "pred":
        return np.dtype(np.bool_)
    return np.dtype(_RAW[np.dtype(_TYPES[name]).itemsize])


# --------------------------------------------------------------------------- lexing

_LINE_DIRECTIVES = (".loc", ".file", ".version", ".target", ".address_size", ".pragma")
_LABEL = re.compile(r"^([$%\w.]+)\s*:(?!:)")


def _strip_comments(text: str) -> list[str]:
    """Lines with ``//`` and ``/* */`` comments blanked (strings kept)."""
    out, in_block = [], False
    for line in text.split("\n"):
        res, i, n, in_str = [], 0, len(line), False
        while i < n:
            if in_block:
                j = line.find("*/", i)
                if j < 0:
                    i = n
                else:
                    in_block, i = False, j + 2
                continue
            c = line[i]
            if c == '"':
                in_str = not in_str
            elif not in_str and line.startswith("//", i):
                break
            elif not in_str and line.startswith("/*", i):
                in_block, i = True, i + 2
                continue
            res.append(c)
            i += 1
        out.append("".join(res))
    return out


def _statements(text: str):
    """Yield ``(line, statement)`` with statement one of: a text ending at ``;``,
    ``"{"``, ``"}"``, a label ``"name:"``, or a line directive (``.loc ...``)."""
    buf, start = [], 0
    skip_depth, section_open, inner = 0, False, 0
    for lineno, line in enumerate(_strip_comments(text), 1):
        stripped = line.strip()
        if section_open:
            if not stripped:
                continue
            section_open = False
            if stripped.startswith("{"):
                skip_depth = line.count("{") - line.count("}")
                continue
        if skip_depth:
            skip_depth += line.count("{") - line.count("}")
            continue
        if not buf and stripped.startswith(".section"):
            # DWARF sections: ".section .debug_x" then a "{ ... }" block, skipped whole
            skip_depth = line.count("{") - line.count("}")
            section_open = "{" not in line
            continue
        if not buf and stripped.split(None, 1)[:1] and stripped.split(None, 1)[0] in _LINE_DIRECTIVES \
                and not stripped.startswith(".pragma"):
            yield lineno, stripped.rstrip(";")
            continue
        for c in line:
            if inner and c in "{}":
                inner += 1 if c == "{" else -1
                buf.append(c)
                continue
            if c == "{" and buf and (buf[0] != "." or "=" in buf):
                inner = 1  # a vector operand or an initializer, not a scope
                buf.append(c)
                continue
            if c in ";{}":
                s = "".join(buf).strip()
                if s:
                    yield from _split_label(start, s)
                buf = []
                if c != ";":
                    yield lineno, c
                continue
            if not buf and c.isspace():
                continue
            if not buf:
                start = lineno
            buf.append(c)
        if buf:
            s = "".join(buf).strip()
            m = _LABEL.match(s)
            if m and m.end() == len(s):
                yield start, m.group(1) + ":"
                buf = []
            else:
                buf.append(" ")
    if buf and "".join(buf).strip():
        yield start, "".join(buf).strip()


def _split_label(line: int, s: str):
    m = _LABEL.match(s)
    if m and not s.startswith("."):
        yield line, m.group(1) + ":"
        s = s[m.end():].strip()
        if not s:
            return
    yield line, s


def _split_top(s: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside brackets, braces and parentheses."""
    parts, depth, cur = [], 0, []
    for c in s:
        if c in "[{(":
            depth += 1
        elif c in "]})":
            depth -= 1
        if c == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


# --------------------------------------------------------------------------- declarations

_DECL = re.compile(
    r"^(?P<attrs>(?:\.(?:visible|extern|weak|common)\s+)*)"
    r"\.(?P<space>global|shared|const|local)\s+(?P<rest>.*)$", re.S)
_VAR = re.compile(r"^(?P<mods>(?:\.[\w]+\s+(?:\d+\s+)?)*)(?P<name>[$%\w]+)\s*(?:\[(?P<n>\d*)\])?"
                  r"\s*(?:=\s*(?P<init>.*))?$", re.S)
_FUNC = re.compile(r"^(?P<attrs>(?:\.(?:visible|extern|weak)\s+)*)\.(?P<kind>entry|func)\s*"
                   r"(?:\((?P<rets>[^)]*)\)\s*)?(?P<name>[$\w]+)\s*(?:\((?P<params>[^)]*)\))?"
                   r"(?P<tail>.*)$", re.S)
_PARAM = re.compile(r"^\.param\s+(?P<mods>(?:\.[\w]+\s+(?:\d+\s+)?)*)(?P<name>[$%\w]+)"
                    r"\s*(?:\[(?P<n>\d+)\])?$")


def _decl_info(mods: str):
    """(type, align, is_ptr) from a declaration's modifier list."""
    toks = mods.split()
    typ, align = None, None
    i = 0
    while i < len(toks):
        t = toks[i]
        if t == ".align":
            align = int(toks[i + 1])
            i += 2
            continue
        if t.startswith(".v") and t[2:].isdigit():
            pass
        elif t[1:] in _TYPES:
            typ = t[1:]
        i += 1
    return typ, align


def _param_list(text: str, line: int) -> list:
    out, offset = [], 0
    for p in _split_top(text or ""):
        m = _PARAM.match(" ".join(p.split()))
        if not m:
            raise SimulatorError(f"PTX line {line}: cannot parse parameter {p!r}", ptx_line=line)
        typ, align = _decl_info(m.group("mods"))
        if typ is None:
            raise SimulatorError(f"PTX line {line}: parameter {p!r} has no type", ptx_line=line)
        esize = type_dtype(typ).itemsize if typ != "pred" else 1
        size = esize * (int(m.group("n")) if m.group("n") else 1)
        align = align or esize
        offset = (offset + align - 1) // align * align
        out.append((m.group("name"), offset, size, align))
        offset += size
    return out


def _initializer(init: str, typ: str, size: int, line: int) -> bytes:
    init = init.strip()
    dt = type_dtype(typ)
    if init.startswith("{"):
        items = [x.strip() for x in init.strip("{} ").split(",") if x.strip()]
    else:
        items = [init]
    vals = []
    for it in items:
        if it.startswith(("0f", "0F")):
            vals.append(int(it[2:], 16).to_bytes(4, "little"))
        elif it.startswith(("0d", "0D")):
            vals.append(int(it[2:], 16).to_bytes(8, "little"))
        else:
            try:
                v = int(it.rstrip("Uu"), 0)
            except ValueError:
                raise SimulatorError(f"PTX line {line}: unsupported initializer item {it!r} "
                                     "(symbol addresses in initializers are not simulated)",
                                     ptx_line=line) from None
            vals.append((v & ((1 << (8 * dt.itemsize)) - 1)).to_bytes(dt.itemsize, "little"))
    data = b"".join(vals)
    return data[:size].ljust(size, b"\0")


# --------------------------------------------------------------------------- operands

_SREGS = {"tid", "ntid", "ctaid", "nctaid", "laneid", "warpid", "nwarpid", "smid", "nsmid",
          "clock", "clock64", "globaltimer", "lanemask_eq", "lanemask_le", "lanemask_lt",
          "lanemask_ge", "lanemask_gt", "gridid", "dynamic_smem_size", "total_smem_size",
          "warpsz", "globaltimer_lo", "globaltimer_hi"}
_REG_RANGE = re.compile(r"^([%$\w]+)<(\d+)>$")


class _Scope:
    """Register name resolution for one function, with nested ``{ }`` scopes."""

    def __init__(self, module, fname: str):
        self.module, self.fname, self.stack = module, fname, [{}]

    def declare(self, name: str, typ: str):
        self.stack[-1][name] = len(self.module.reg_names)
        self.module.reg_names.append((self.fname, name))
        self.module.reg_types.append(typ)

    def lookup(self, name: str):
        for d in reversed(self.stack):
            if name in d:
                return d[name]
        return None


def _operand(tok: str, scope: _Scope, line: int):
    """Decode one operand into a tuple:

    ``("r", reg)`` register · ``("i", int)`` integer · ``("f", bits, nbytes)``
    float bits · ``("s", name, comp)`` special register · ``("a", base, offset)``
    address (base a register tuple, a symbol name or ``None``) · ``("sym", name)``
    · ``("v", [operands])`` vector · ``("_",)`` sink · ``("neg", reg)`` negated
    predicate · ``("pair", reg1, reg2)`` ``%p|%q``.
    """
    tok = tok.strip()
    if tok == "_":
        return ("_",)
    if tok.startswith("["):
        inner = tok[1:-1].replace(" ", "")
        m = re.match(r"^([^+\-]*?)(?:([+-])(-?(?:0x[0-9a-fA-F]+|\d+)))?$", inner)
        if not m:
            raise SimulatorError(f"PTX line {line}: cannot parse address {tok!r}", ptx_line=line)
        base, sign, off = m.group(1), m.group(2), m.group(3)
        offset = int(off, 0) * (-1 if sign == "-" else 1) if off else 0
        if base == "":
            return ("a", None, offset)
        if base[0].isdigit():
            return ("a", None, int(base, 0) + offset)
        if base.startswith("%") or scope.lookup(base) is not None:
            r = scope.lookup(base)
            if r is None:
                raise SimulatorError(f"PTX line {line}: undeclared register {base}", ptx_line=line)
            return ("a", ("r", r), offset)
        return ("a", base, offset)
    if tok.startswith("{"):
        return ("v", [_operand(t, scope, line) for t in _split_top(tok[1:-1])])
    if "|" in tok:
        a, b = tok.split("|")
        return ("pair", _operand(a, scope, line), _operand(b, scope, line))
    if tok.startswith("!"):
        return ("neg", _operand(tok[1:], scope, line))
    if tok.startswith("%"):
        r = scope.lookup(tok)
        if r is not None:
            return ("r", r)
        name, _, comp = tok[1:].partition(".")
        if name in _SREGS:
            return ("s", name, comp or "x")
        if name.startswith("envreg") or name.startswith("pm"):
            return ("s", name, "")
        raise SimulatorError(f"PTX line {line}: undeclared register {tok}", ptx_line=line)
    low = tok.lower()
    if low.startswith("0f") and len(tok) == 10:
        return ("f", int(tok[2:], 16), 4)
    if low.startswith("0d") and len(tok) == 18:
        return ("f", int(tok[2:], 16), 8)
    try:
        return ("i", int(tok.rstrip("Uu"), 0))
    except ValueError:
        pass
    r = scope.lookup(tok)  # registers may be named without '%' (inline asm "tmp")
    if r is not None:
        return ("r", r)
    if re.match(r"^-?\d+\.\d*(e[+-]?\d+)?$", low):
        return ("f", struct.unpack("<Q", struct.pack("<d", float(tok)))[0], 8)
    if tok == "WARP_SZ":   # PTX ISA "Predefined Identifiers": the warp size, a constant
        return ("i", 32)   # (CUDA C++'s warpSize is mov.u32 %r, WARP_SZ)
    return ("sym", tok)
