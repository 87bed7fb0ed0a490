"""Which ``.shared``/``.local`` variable each memory instruction's address derives from.

memcheck can only check a shared or local access against the whole window of
the block (or thread) unless it knows which PTX variable the address points
into. In PTX an address into a ``.shared``/``.local`` variable is the
variable's symbol plus an offset (PTX ISA "State Spaces", "Variables",
"Addresses as Operands"): ``mov r, var`` or ``[var+imm]``, then integer
arithmetic, ``cvta`` and ``cvt`` on the way to the ``ld``/``st``/``atom``.
This module follows those steps statically, once per module, so the hot loop
pays nothing but one bounds comparison.

The analysis is flow-insensitive over a module's registers: each register
gets the set of variables any of its definitions may point into, plus the
marker ``UNKNOWN`` when a definition may hold a pointer of unknown origin (a
value loaded from memory, a ``.func`` parameter, a call result, a shuffle).
Sets only grow until a fixed point, so a register that may point into two
variables, or into an unknown place, has more than one element and its
accesses are checked against the window only, as before. Rules:

* ``mov``/``cvta``/``cvt`` copy; ``selp``/``slct``/``min``/``max`` unite;
* ``add``/``or``/``xor``/``and`` (pointer plus integer; LLVM writes
  ``base + 4`` as ``or`` when the base is aligned) keep the pointer
  operand's set, ``sub`` keeps the minuend's and a difference of two
  pointers is an integer; ``mad`` keeps its addend's;
* multiplications, shifts, comparisons and float arithmetic give integers;
* every other definition may be a pointer of unknown origin.

Adding a value of unknown origin to a pointer keeps the pointer's variable:
a pointer plus a pointer is no address, so the unknown value is an index.
"""

from __future__ import annotations

__all__ = ["UNKNOWN", "address_variables", "address_variable", "thread_private"]

#: marker for "may be a pointer of unknown origin"
UNKNOWN = "?"

_COPY = {"mov", "cvta", "cvt"}
_UNION = {"selp", "slct", "min", "max"}
_ADDITIVE = {"add", "addc", "or", "xor", "and"}
_SUB = {"sub", "subc"}
_MAD = {"mad", "mad24", "madc"}
#: opcodes whose result is never an address (scaled, shifted, compared, float)
_INTEGER = {"mul", "mul24", "shl", "shr", "div", "rem", "neg", "not", "abs", "setp", "set",
            "popc", "clz", "bfind", "brev", "bfe", "cnot", "testp", "copysign", "fma", "sqrt",
            "rsqrt", "rcp", "ex2", "lg2", "sin", "cos", "tanh", "sad", "dp4a", "dp2a", "vote",
            "match", "redux", "activemask", "fns", "szext", "bmsk", "lop3", "shf"}
_ACCESS = {"ld", "ldu", "st", "atom", "red"}
_EMPTY: frozenset = frozenset()
_UNK = frozenset((UNKNOWN,))


def address_variables(mod) -> dict:
    """``pc → variable name`` for every ``ld``/``ldu``/``st``/``atom``/``red`` whose
    address is known to point into exactly one ``.shared`` or ``.local`` variable.

    Args:
        mod: a :class:`~warp_lab.sim.ptx.PtxModule`.

    Returns:
        dict from instruction index (pc) to the variable's PTX name. Computed once
        per module and kept on it (``mod.address_vars``).
    """
    cached = mod.address_vars
    if cached is not None:
        return cached
    spaces = _spaces(mod)
    state: dict = {}
    defs = [(ins, _dst_regs(ins)) for ins in mod.code if ins.op not in ("call", "st", "red")]
    defs = [(ins, regs) for ins, regs in defs if regs]
    for _ in range(64):  # sets only grow: a fixed point comes within a few passes
        changed = False
        for ins, regs in defs:
            val = _transfer(ins, state, spaces)
            if not val:
                continue
            for r in regs:
                old = state.get(r, _EMPTY)
                if not val <= old:
                    state[r] = old | val
                    changed = True
        if not changed:
            break
    else:  # no fixed point (cannot happen with growing finite sets): check nothing extra
        mod.address_vars = {}
        return mod.address_vars
    out = {}
    for ins in mod.code:
        if ins.op not in _ACCESS or not ins.srcs or ins.srcs[0][0] != "a":
            continue
        base = ins.srcs[0][1]
        if isinstance(base, str):
            s = frozenset((base,)) if base in spaces else _EMPTY
        elif isinstance(base, tuple) and base[0] == "r":
            s = state.get(base[1], _EMPTY)
        else:
            continue
        if len(s) == 1 and UNKNOWN not in s:
            out[ins.pc] = next(iter(s))
    mod.address_vars = out
    return out


def address_variable(mod, ins):
    """The ``.shared``/``.local`` variable ``ins``'s address points into, else ``None``."""
    return address_variables(mod).get(ins.pc)


def thread_private(mod, ins) -> bool:
    """Whether memory instruction ``ins`` reaches only the executing thread's own memory:
    a ``.local`` access, or a generic one whose address derives from exactly one
    ``.local`` variable (LLVM's stack at ``opt=0``: ``cvta.local`` of
    ``__local_depot``). PTX ISA "State Spaces": local memory is private to a thread,
    so no other thread can change what such a load reads."""
    if "local" in ins.mods:
        return True
    if any(s in ins.mods for s in ("global", "shared", "shared::cta", "shared::cluster",
                                   "param", "const")):
        return False
    var = address_variable(mod, ins)
    return var is not None and _spaces(mod).get(var) == "local"


def _spaces(mod) -> dict:
    """Names of the module's shared and local variables → state space."""
    out = {name: v.space for name, v in mod.variables.items() if v.space in ("shared", "local")}
    for vars_ in mod.local_vars.values():
        for v in vars_:
            out[v.name] = "local"
    return out


def _dst_regs(ins) -> list:
    regs = []
    for d in ins.dsts:
        if not isinstance(d, tuple):
            continue
        if d[0] == "r":
            regs.append(d[1])
        elif d[0] == "v":
            regs.extend(x[1] for x in d[1] if x[0] == "r")
        elif d[0] == "pair":
            regs.extend(x[1] for x in d[1:] if x[0] == "r")
    return regs


def _value(op, state, spaces) -> frozenset:
    kind = op[0]
    if kind == "r":
        return state.get(op[1], _EMPTY)
    if kind == "sym":
        return frozenset((op[1],)) if op[1] in spaces else _UNK
    if kind == "v":
        out = _EMPTY
        for x in op[1]:
            out = out | _value(x, state, spaces)
        return out
    return _EMPTY  # immediates, special registers, predicates


def _pointers(s) -> bool:
    return bool(s) and (len(s) > 1 or UNKNOWN not in s)


def _transfer(ins, state, spaces) -> frozenset:
    op = ins.op
    if op in _INTEGER:
        return _EMPTY
    srcs = ins.srcs
    if op in _COPY:
        return _value(srcs[0], state, spaces) if srcs else _EMPTY
    if op in _UNION:
        n = 2 if op in ("selp", "slct") else len(srcs)
        out = _EMPTY
        for s in srcs[:n]:
            out = out | _value(s, state, spaces)
        return out
    if op in _ADDITIVE or op in _SUB:
        if len(srcs) < 2:
            return _UNK
        a, b = _value(srcs[0], state, spaces), _value(srcs[1], state, spaces)
        pa, pb = _pointers(a), _pointers(b)
        if op in _SUB:
            if pa and pb:
                return _EMPTY          # a difference of two pointers is an integer
            if pa:
                return a
            return _UNK if (pb or a or b) else _EMPTY
        if pa and pb:
            return a | b
        if pa:
            return a
        if pb:
            return b
        return _UNK if (a or b) else _EMPTY
    if op in _MAD:
        if len(srcs) < 3:
            return _UNK
        a, b, c = (_value(s, state, spaces) for s in srcs[:3])
        if _pointers(a) or _pointers(b):
            return _UNK
        return c
    if ins.types and all(t[0] == "f" for t in ins.types):
        return _EMPTY                  # float arithmetic
    return _UNK
