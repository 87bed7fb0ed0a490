"""PTX text → :class:`PtxModule`: functions, variables and pre-decoded instructions.

The parser reads PTX as LLVM's NVPTX back end emits it (and hand-written PTX
of the same dialect): module directives (``.version``, ``.target``,
``.address_size``, ``.file``), module- and function-scope variables in the
global, shared, const and local state spaces with their initialisers,
``.entry`` and ``.func`` definitions and declarations with their ``.param``
lists, ``.reg`` declarations (``%r<11>`` ranges, scoped ``{ }`` blocks as
libdevice's inline assembly uses them), labels, predicated instructions and
``.loc`` debug locations. ``.section`` blocks (DWARF) are skipped.

Every instruction is decoded once into an :class:`Instr` whose operands are
small tuples (see ``_operand``), so the simulator's hot loop does no string
work. Registers are numbered module-wide: a register declared inside a nested
``{ }`` scope gets its own number, so libdevice's scoped ``.reg`` blocks do
not clash with the function's registers of the same name.

Reference: PTX ISA 8.x, chapters "Syntax", "State Spaces, Types, and
Variables", "Directives".
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

import numpy as np

from warp_lab.errors import SimulatorError

__all__ = ["PtxModule", "Function", "Variable", "Instr", "parse_module", "TYPE_NAMES",
           "type_dtype", "reg_dtype"]

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


@dataclass
class Variable:
    """A variable in the global, shared, const or local state space.

    Attributes:
        name: PTX identifier.
        space: ``"global"``, ``"shared"``, ``"const"`` or ``"local"``.
        size: bytes (0 for ``extern .shared`` dynamic shared memory).
        align: bytes.
        init: initial bytes (``None``: zero-filled).
        extern: declared ``.extern`` (dynamic shared memory when shared).
        function: owning function name for function-scope variables, else ``""``.
    """

    name: str
    space: str
    size: int
    align: int
    init: bytes | None = None
    extern: bool = False
    function: str = ""


@dataclass(slots=True)
class Instr:
    """One decoded PTX instruction.

    Attributes:
        pc: index in :attr:`PtxModule.code` (the program counter).
        line: 1-based line in the PTX text.
        text: the instruction as written (for messages and the debugger).
        op: base opcode (``"ld"``, ``"add"``, ``"bra"``).
        mods: the dot-suffixes after the opcode, in order (``("global", "b32")``).
        types: the type suffixes among ``mods``, in order.
        dsts, srcs: decoded operands; see ``_operand`` for their shapes.
        guard: ``(register, negated)`` for ``@%p``/``@!%p``, else ``None``.
        loc: ``(file_index, line)`` from the last ``.loc`` directive, else ``None``.
        function: name of the function containing the instruction.
        target: branch target pc (``bra``) or callee name (``call``), else ``None``.
        exec: the semantics closure, installed by the simulator on first use.
    """

    pc: int
    line: int
    text: str
    op: str
    mods: tuple
    types: tuple
    dsts: list
    srcs: list
    guard: tuple | None
    loc: tuple | None
    function: str
    target: object = None
    exec: object = None
    klass: str = ""


@dataclass
class Function:
    """An ``.entry`` (kernel) or ``.func`` (device function).

    Attributes:
        name: PTX name.
        kind: ``"entry"`` or ``"func"``.
        params: ``(name, offset, size, align)`` per ``.param``; offsets are
            where the CUDA driver places each parameter in the buffer (the next
            multiple of its alignment).
        rets: the same for ``.func`` return parameters.
        start, end: the function's instructions are ``code[start:end]``
            (``start == end == -1`` for a declaration without body).
        labels: label name → pc.
        local_size: bytes of ``.local`` variables (stack depot).
        line: PTX line of the header.
    """

    name: str
    kind: str
    params: list
    rets: list
    start: int = -1
    end: int = -1
    labels: dict = field(default_factory=dict)
    local_size: int = 0
    line: int = 0

    @property
    def param_size(self) -> int:
        """Bytes of the parameter buffer this function expects."""
        return max((o + s for _, o, s, _ in self.params), default=0)


@dataclass
class PtxModule:
    """A parsed PTX module (immutable once built; safe to cache and share).

    Attributes:
        text: the PTX source.
        version, target, address_size: the module directives.
        files: ``.file`` index → file name.
        functions: name → :class:`Function`.
        variables: name → :class:`Variable` (module and function scope).
        code: every instruction of every function, in text order.
        nregs: number of distinct registers (module-wide numbering).
        reg_names: register number → ``(function, PTX name)``.
        reg_types: register number → declared PTX type (``"b32"``, ``"pred"``).
        reg_raw: register number → raw storage dtype (see :func:`reg_dtype`).
        local_offsets: function name → offset of its ``.local`` depot in a
            thread's local memory (functions get disjoint depots; recursion is
            not supported).
        local_size: bytes of local memory per thread.
    """

    text: str
    version: str = ""
    target: str = ""
    address_size: int = 64
    files: dict = field(default_factory=dict)
    functions: dict = field(default_factory=dict)
    variables: dict = field(default_factory=dict)
    code: list = field(default_factory=list)
    nregs: int = 0
    reg_names: list = field(default_factory=list)
    reg_types: list = field(default_factory=list)
    reg_raw: list = field(default_factory=list)
    local_offsets: dict = field(default_factory=dict)
    local_vars: dict = field(default_factory=dict)
    local_size: int = 0

    def entry(self, name: str) -> Function:
        """The kernel ``name``; :class:`SimulatorError` listing the kernels if absent."""
        fn = self.functions.get(name)
        if fn is None or fn.kind != "entry" or fn.start < 0:
            kernels = sorted(f.name for f in self.functions.values() if f.kind == "entry")
            raise SimulatorError(f"no kernel entry {name!r} in the PTX module "
                                 f"(kernels: {', '.join(kernels) or 'none'})")
        return fn

    def source_of(self, instr: Instr) -> tuple[str, int]:
        """``(file name, line)`` of an instruction from ``.loc``, or ``("", 0)``."""
        if instr.loc is None:
            return "", 0
        return self.files.get(instr.loc[0], ""), instr.loc[1]


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

    def __init__(self, module: PtxModule, fname: str):
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
    return ("sym", tok)


# --------------------------------------------------------------------------- parser


def parse_module(text: str) -> PtxModule:
    """Parse PTX text into a :class:`PtxModule` (parse once, run many times).

    Args:
        text: PTX assembly (``.version`` … as emitted by LLVM's NVPTX back end).

    Returns:
        the decoded module.

    Raises:
        SimulatorError: malformed PTX; the message and ``ptx_line`` name the line.
    """
    if not isinstance(text, str):
        raise SimulatorError(f"parse_module expects PTX text (str), got {type(text).__name__}")
    mod = PtxModule(text=text)
    try:
        _Parser(mod).run()
    except SimulatorError:
        raise
    except Exception as exc:  # an internal parser bug must not leak a traceback
        raise SimulatorError(f"cannot parse PTX: {type(exc).__name__}: {exc}") from None
    return mod


class _Parser:
    def __init__(self, mod: PtxModule):
        self.mod = mod
        self.fn: Function | None = None
        self.scope: _Scope | None = None
        self.depth = 0
        self.loc = None
        self.header: tuple | None = None  # (line, text) waiting for "{" or ";"
        self.pending_labels: list = []
        self.local_vars: list = []

    def run(self):
        mod = self.mod
        for line, st in _statements(mod.text):
            if self.fn is None:
                self.module_statement(line, st)
            else:
                self.body_statement(line, st)
        if self.fn is not None:
            raise SimulatorError(f"PTX ends inside function {self.fn.name} (missing '}}')",
                                 ptx_line=self.fn.line)
        # lay out local depots: each function its own slice of the thread's local memory
        off = 0
        for fname, vars_ in mod.local_vars.items():
            mod.local_offsets[fname] = off
            for v in vars_:
                a = max(v.align, 1)
                off = (off + a - 1) // a * a
                v.init = None
                mod.variables.setdefault(v.name, v)
                v.offset = off  # type: ignore[attr-defined]
                off += v.size
        mod.local_size = (off + 15) // 16 * 16
        mod.reg_raw = [reg_dtype(t) for t in mod.reg_types]

    # ---- module scope
    def module_statement(self, line: int, st: str):
        mod = self.mod
        if self.header is not None:
            if st == "{":
                self.begin_function(*self.header)
                self.header = None
                return
            hl, ht = self.header
            self.header = None
            self.declare_function(hl, ht, body=False)
            if st in ("}",):
                return
        if st.startswith(".version"):
            mod.version = st.split()[1]
        elif st.startswith(".target"):
            mod.target = st.split(None, 1)[1]
        elif st.startswith(".address_size"):
            mod.address_size = int(st.split()[1])
        elif st.startswith(".file"):
            m = re.match(r'\.file\s+(\d+)\s+"([^"]*)"', st)
            if m:
                mod.files[int(m.group(1))] = m.group(2)
        elif st.split(None, 1)[0] in (".loc", ".pragma"):
            pass
        elif re.match(r"^(?:\.(?:visible|extern|weak)\s+)*\.(?:entry|func)\b", st):
            self.header = (line, st)
        elif _DECL.match(st):
            self.variable(line, st, "")
        elif st in ("{", "}"):
            raise SimulatorError(f"PTX line {line}: unexpected '{st}' at module scope", ptx_line=line)
        else:
            raise SimulatorError(f"PTX line {line}: cannot parse module statement {st[:60]!r}",
                                 ptx_line=line)

    def variable(self, line: int, st: str, fname: str):
        m = _DECL.match(" ".join(st.split()) if "=" not in st else st)
        space, rest = m.group("space"), m.group("rest").strip()
        vm = _VAR.match(rest)
        if not vm:
            raise SimulatorError(f"PTX line {line}: cannot parse variable {st[:60]!r}", ptx_line=line)
        typ, align = _decl_info(vm.group("mods"))
        if typ is None:
            raise SimulatorError(f"PTX line {line}: variable without type: {st[:60]!r}", ptx_line=line)
        esize = type_dtype(typ).itemsize if typ != "pred" else 1
        n = vm.group("n")
        count = int(n) if n else (0 if n == "" else 1)
        size = esize * count
        init = vm.group("init")
        data = _initializer(init, typ, size, line) if init else None
        v = Variable(vm.group("name"), space, size, align or esize, data,
                     extern="extern" in m.group("attrs"), function=fname)
        if space == "local":
            self.mod.local_vars.setdefault(fname, []).append(v)
        else:
            self.mod.variables[v.name] = v

    def declare_function(self, line: int, st: str, body: bool) -> Function:
        m = _FUNC.match(" ".join(st.split()))
        if not m:
            raise SimulatorError(f"PTX line {line}: cannot parse function header {st[:60]!r}",
                                 ptx_line=line)
        fn = Function(m.group("name"), m.group("kind"), _param_list(m.group("params"), line),
                      _param_list(m.group("rets"), line), line=line)
        old = self.mod.functions.get(fn.name)
        if old is None or old.start < 0:
            self.mod.functions[fn.name] = fn
        return fn

    def begin_function(self, line: int, st: str):
        self.fn = self.declare_function(line, st, body=True)
        self.fn.start = len(self.mod.code)
        self.scope = _Scope(self.mod, self.fn.name)
        self.depth = 1
        # parameters are addressed by name in ld.param; nothing to declare

    # ---- function scope
    def body_statement(self, line: int, st: str):
        if st == "{":
            self.depth += 1
            self.scope.stack.append({})
            return
        if st == "}":
            self.depth -= 1
            if self.depth == 0:
                self.end_function()
            else:
                self.scope.stack.pop()
            return
        if st.endswith(":") and _LABEL.match(st):
            name = st[:-1]
            self.fn.labels[name] = len(self.mod.code)
            return
        if st.split(None, 1)[0] == ".loc":
            parts = st.replace(",", " ").split()
            try:
                self.loc = (int(parts[1]), int(parts[2]))
            except (IndexError, ValueError):
                raise SimulatorError(f"PTX line {line}: malformed .loc", ptx_line=line) from None
            return
        if st.startswith((".pragma", ".file", ".maxnreg", ".maxntid", ".reqntid",
                          ".minnctapersm", ".noreturn")):
            return
        if st.startswith(".reg"):
            self.registers(line, st)
            return
        if st.startswith(".param"):
            return  # call-site parameter declaration; storage is created on st.param
        if _DECL.match(st):
            self.variable(line, st, self.fn.name)
            return
        self.instruction(line, st)

    def registers(self, line: int, st: str):
        toks = st[4:].strip()
        parts = toks.split(None, 1)
        mods = []
        while parts and parts[0].startswith("."):
            mods.append(parts[0][1:])
            parts = parts[1].split(None, 1) if len(parts) > 1 else []
        typ = next((t for t in mods if t in _TYPES), None)
        if typ is None or not parts:
            raise SimulatorError(f"PTX line {line}: cannot parse register declaration {st!r}",
                                 ptx_line=line)
        if any(t.startswith("v") and t[1:].isdigit() for t in mods):
            raise SimulatorError(f"PTX line {line}: vector registers are not supported: {st!r}",
                                 ptx_line=line)
        for name in _split_top(parts[0]):
            rm = _REG_RANGE.match(name)
            if rm:
                for k in range(int(rm.group(2))):
                    self.scope.declare(f"{rm.group(1)}{k}", typ)
            else:
                self.scope.declare(name, typ)

    def instruction(self, line: int, st: str):
        guard = None
        if st.startswith("@"):
            g, st = st[1:].split(None, 1)
            neg = g.startswith("!")
            r = self.scope.lookup(g.lstrip("!"))
            if r is None:
                raise SimulatorError(f"PTX line {line}: undeclared predicate {g}", ptx_line=line)
            guard = (r, neg)
        parts = st.split(None, 1)
        opcode = parts[0]
        rest = parts[1] if len(parts) > 1 else ""
        pieces = opcode.split(".")
        op, mods = pieces[0], tuple(pieces[1:])
        types = tuple(m for m in mods if m in _TYPES)
        target = None
        if op == "call":
            dsts, srcs, target = self.call_operands(rest, line)
        else:
            ops = [_operand(t, self.scope, line) for t in _split_top(rest)] if rest else []
            if op in ("bra", "brx"):
                target = ops[0][1] if ops and ops[0][0] == "sym" else None
                dsts, srcs = [], ops
            elif op in ("st", "red", "prefetch", "bar", "barrier", "membar", "fence", "trap",
                        "ret", "exit", "bar.warp", "nanosleep", "prefetchu", "stmatrix",
                        "cp", "discard", "pmevent", "brkpt"):
                dsts, srcs = [], ops
            else:
                dsts, srcs = ops[:1], ops[1:]
        self.mod.code.append(Instr(len(self.mod.code), line, st, op, mods, types, dsts, srcs,
                                   guard, self.loc, self.fn.name, target))

    def call_operands(self, rest: str, line: int):
        parts = _split_top(rest)
        rets, args, callee = [], [], None
        for p in parts:
            if p.startswith("("):
                names = [x.strip() for x in p[1:-1].split(",") if x.strip()]
                if callee is None:
                    rets = names
                else:
                    args = names
            elif callee is None:
                callee = p
        if callee is None:
            raise SimulatorError(f"PTX line {line}: cannot parse call {rest!r}", ptx_line=line)
        if callee.startswith("%"):
            raise SimulatorError(f"PTX line {line}: indirect calls are not supported", ptx_line=line)
        return rets, args, callee

    def end_function(self):
        fn = self.fn
        fn.end = len(self.mod.code)
        for ins in self.mod.code[fn.start:fn.end]:
            if ins.op in ("bra", "brx") and isinstance(ins.target, str):
                if ins.target not in fn.labels:
                    raise SimulatorError(f"PTX line {ins.line}: unknown label {ins.target}",
                                         ptx_line=ins.line)
                ins.target = fn.labels[ins.target]
        fn.local_size = sum(v.size for v in self.mod.local_vars.get(fn.name, []))
        self.fn, self.scope, self.loc = None, None, None
