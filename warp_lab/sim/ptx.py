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
from dataclasses import dataclass, field

from warp_lab.errors import SimulatorError
from warp_lab.sim.ptx_syntax import (_DECL, _FUNC, _LABEL, _REG_RANGE, _TYPES, _VAR, TYPE_NAMES,
                                     _decl_info, _initializer, _operand, _param_list, _Scope,
                                     _split_top, _statements, reg_dtype, type_dtype)

__all__ = ["PtxModule", "Function", "Variable", "Instr", "parse_module", "TYPE_NAMES",
           "type_dtype", "reg_dtype", "cached_on"]

_MISSING = object()


def cached_on(obj, attr: str, compute):
    """``obj``'s attribute ``attr``, set to ``compute()`` the first time: what the
    simulator derives once from a parsed module or function (a :class:`PtxModule`, a
    :class:`Function`). An object that takes no new attribute gets ``compute()`` on
    every call."""
    v = getattr(obj, attr, _MISSING)
    if v is _MISSING:
        v = compute()
        try:
            setattr(obj, attr, v)
        except AttributeError:
            pass
    return v


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
        address_vars: pc → the ``.shared``/``.local`` variable the instruction's
            address points into, filled on first use by
            :func:`warp_lab.sim.provenance.address_variables` (derived, deterministic).
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
    address_vars: dict | None = None

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
        self.last_label = None
        self.branchtargets: dict = {}

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
        self.branchtargets = {}  # .branchtargets lists (brx.idx jump tables) by label
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
            self.last_label = name
            return
        if st.split(None, 1)[0] == ".loc":
            parts = st.replace(",", " ").split()
            try:
                self.loc = (int(parts[1]), int(parts[2]))
            except (IndexError, ValueError):
                raise SimulatorError(f"PTX line {line}: malformed .loc", ptx_line=line) from None
            return
        if st.startswith(".branchtargets"):
            # "$L_brx_0: .branchtargets $L__BB0_2, ...": the label just defined names the list
            label = next((k for k, v in self.fn.labels.items() if v == len(self.mod.code)
                          and k == self.last_label), None)
            if label is None:
                raise SimulatorError(f"PTX line {line}: .branchtargets without a label",
                                     ptx_line=line)
            self.branchtargets[label] = [t.strip() for t in st.split(None, 1)[1].split(",")]
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
        toks = st[4:].split()
        mods = []
        while toks and toks[0].startswith("."):
            mods.append(toks.pop(0)[1:])
        parts = [" ".join(toks)] if toks else []
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
            if ins.op == "brx":
                table = ins.srcs[-1][1] if ins.srcs and ins.srcs[-1][0] == "sym" else None
                if table not in self.branchtargets:
                    raise SimulatorError(f"PTX line {ins.line}: brx.idx needs a .branchtargets "
                                         "label", ptx_line=ins.line)
                try:
                    ins.target = [fn.labels[t] for t in self.branchtargets[table]]
                except KeyError as exc:
                    raise SimulatorError(f"PTX line {ins.line}: unknown label {exc.args[0]} in "
                                         f"{table}", ptx_line=ins.line) from None
                continue
            if ins.op == "bra" and isinstance(ins.target, str):
                if ins.target not in fn.labels:
                    raise SimulatorError(f"PTX line {ins.line}: unknown label {ins.target}",
                                         ptx_line=ins.line)
                ins.target = fn.labels[ins.target]
        fn.local_size = sum(v.size for v in self.mod.local_vars.get(fn.name, []))
        self.fn, self.scope, self.loc = None, None, None
