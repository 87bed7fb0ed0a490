"""What each PTX register of a compiled kernel holds, as far as the PTX says.

    notes = register_notes(ck, "saxpy")
    notes["%rd4"].name    # "x.ptr" (loaded from the parameter x), "" when unknown
    notes["%r6"].type     # "f32": the type the instructions that write or read it use
    notes["%r6"].lines    # (33,): line map keys of the Python lines whose code writes it

PTX registers of LLVM's output are typeless bits (``.b32``, ``.b64``); an
instruction's type suffix says how it treats them (PTX ISA 5.2, "Fundamental
Types"). The debugger's lane table reads these notes to show a float as a
float and to say which parameter (kernel parameter slots,
:func:`warp_lab.compiler.abi.param_layout`) or special register (``%tid.x``,
PTX ISA 10) a register was loaded from. The PTX knows no Python local
variable names (``DebugDirectivesOnly`` keeps line tables only), so a
register computed by user code is named by the Python line that writes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from warp_lab.compiler.line_zero import REGISTER, is_instruction, operands
from warp_lab.lang.builtins import DIM3S

__all__ = ["RegisterNote", "register_notes"]

#: special registers (PTX ISA 10) by the warp_lab name of the same value
_SPECIAL = {**{d.sreg: f"wl.{d.name}" for d in DIM3S.values()},
            "laneid": "wl.lane_id()", "warpid": "%warpid"}
#: the same for a CUDA C++ kernel: CUDA's built-in variables (CUDA Programming Guide,
#: "Built-in Variables")
_SPECIAL_CUDA = {"tid": "threadIdx", "ctaid": "blockIdx", "ntid": "blockDim",
                 "nctaid": "gridDim", "laneid": "%laneid", "warpid": "%warpid"}
_TYPES = re.compile(r"\.(pred|[bsuf](?:8|16|32|64))\b")
_ADDRESS = re.compile(r"\[([^\]]*)\]")
_PARAM = re.compile(r"\[(\w+)_param_(\d+)(?:\+(\d+))?\]")
_SPECIAL_RE = re.compile(r"%(tid|ctaid|ntid|nctaid|laneid|warpid)(?:\.([xyz]))?\b")


@dataclass(frozen=True)
class RegisterNote:
    """What one register holds.

    Attributes:
        type: the PTX type its writer (else a reader) uses: ``"f32"``, ``"s32"``,
            ``"pred"``, ... or ``""`` when only untyped ``.b`` moves touch it.
        name: the kernel parameter (``"x.ptr"``, ``"x.shape[0]"``, ``"a"``,
            ``"dim.x"`` for the launch extent) or special register
            (``"wl.thread_idx.x"``) it was loaded from; ``""`` otherwise.
        lines: line map keys of the Python lines whose code writes it, in order.
        test: for a predicate a ``setp`` writes, its comparison as compiled, operands
            named where the PTX says what they hold (``"wl.thread_idx.x > 15"``). LLVM
            often branches on the opposite of the Python condition (``if t < 16:``
            compiles to "skip the body when t > 15"), so a predicate is not the
            condition's value; ``""`` otherwise.
    """

    type: str = ""
    name: str = ""
    lines: tuple = ()
    test: str = ""


#: ``setp`` comparison operators (PTX ISA 9.7.3.1 / 9.7.4.x "setp"), as Python writes them;
#: the unordered float ones (``equ``, ``ltu``, ...) are true for NaN too
_SETP_OPS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
             "lo": "<", "ls": "<=", "hi": ">", "hs": ">=", "equ": "== (or NaN)",
             "neu": "!= (or NaN)", "ltu": "< (or NaN)", "leu": "<= (or NaN)",
             "gtu": "> (or NaN)", "geu": ">= (or NaN)"}
_SETP = re.compile(r"^setp\.(\w+)\.\w+\s+(%\w+)(?:\|%\w+)?\s*,\s*([^,]+?)\s*,\s*([^,;]+?)\s*;")


def _param_name(ck, index: int, offset: int) -> str:
    """The parameter field at byte ``offset`` of slot ``index`` (``abi.param_layout``)."""
    layout = ck.param_layout
    if not 0 <= index < len(layout):
        return ""
    slot = layout[index]
    if index == 0 and slot.hidden:  # the hidden launch extent {x, y, z}
        return f"dim.{'xyz'[offset // 4]}" if offset < 12 else ""
    ndim = getattr(slot.type, "ndim", None)
    if ndim is not None and getattr(slot.type, "space", "global") == "global":
        if offset == 0:
            return f"{slot.name}.ptr"
        k = (offset - 8) // 4
        return f"{slot.name}.shape[{k}]" if k < ndim else f"{slot.name}.strides[{k - ndim}]"
    return slot.name if offset == 0 else f"{slot.name}+{offset}"


def _function_body(ptx: str, function: str) -> list[tuple[int, str]]:
    """``(1-based PTX line, stripped text)`` of each line of ``function``'s body
    (``.entry``/``.func``)."""
    lines = ptx.splitlines()
    head = re.compile(rf"\.(?:entry|func)\s+(?:\([^)]*\)\s*)?{re.escape(function)}\b")
    out, inside, depth = [], False, 0
    for n, line in enumerate(lines, 1):
        if not inside:
            inside = bool(head.search(line))
            continue
        s = line.strip()
        depth += s.count("{") - s.count("}")
        out.append((n, s))
        if depth == 0 and "}" in s:
            break
    return out


def register_notes(ck, function: str | None = None) -> dict[str, RegisterNote]:
    """Notes on every register that an instruction of ``function`` writes.

    Args:
        ck: a :class:`~warp_lab.compiler.artifact.CompiledKernel`.
        function: the PTX function (default: the kernel's entry).

    Returns:
        register name (``"%r5"``) → :class:`RegisterNote`; empty when the function
        is not in the PTX.
    """
    body = _function_body(ck.ptx, function or ck.entry)
    py_of = ck.source_map.ptx_keys
    typ: dict[str, str] = {}
    read_type: dict[str, str] = {}
    address_type: dict[str, str] = {}  # registers read only inside [...]: addresses
    names: dict[str, str] = {}
    lines: dict[str, list] = {}
    tests: dict[str, tuple] = {}  # predicate -> (operator, a, b) of the setp writing it
    for n, s in body:
        if not is_instruction(s):
            continue
        written, read = operands(s)
        text = s.split("//", 1)[0]
        opcode = text.split()[1] if text.startswith("@") else text.split()[0]
        types = _TYPES.findall(opcode)
        # a register in [...] is an address, not a value of the instruction's type
        # (PTX ISA 6.4.1 "Addresses as Operands": ld.global.f32 r, [%rd1] reads a .u64)
        addresses = {r for a in _ADDRESS.findall(text) for r in REGISTER.findall(a)}
        for reg in read:
            if reg in addresses:
                address_type.setdefault(reg, "u64" if reg.startswith("%rd") else "u32")
            elif types and not types[-1].startswith("b"):
                read_type.setdefault(reg, types[-1])
        if not written:
            continue
        param = _PARAM.search(text) if opcode.startswith("ld.param") else None
        # (slot, byte offset) of a field of the kernel's own parameters
        field = ((int(param.group(2)), int(param.group(3) or 0))
                 if param and param.group(1) == ck.entry else None)
        special = _SPECIAL_RE.search(text) if opcode.startswith("mov") else None
        setp = _SETP.match(text.strip()) if opcode.startswith("setp") else None
        if setp and setp.group(1) in _SETP_OPS:
            tests.setdefault(setp.group(2), (_SETP_OPS[setp.group(1)], setp.group(3),
                                             setp.group(4)))
        for k, reg in enumerate(written):
            if types:
                t = types[0]
                if t != "pred" and opcode.startswith("setp"):
                    t = "pred"
                elif ".wide" in opcode:  # mul.wide.u32: a 64-bit product of 32-bit sources
                    t = t[0] + str(2 * int(t[1:]))
                typ.setdefault(reg, t)
            if field:
                name = _param_name(ck, *field)
                if name and len(written) > 1:  # ld.param.v2 {%r1, %r2}: consecutive fields
                    width = int(re.findall(r"\d+", types[0])[0]) // 8 if types else 4
                    name = _param_name(ck, field[0], field[1] + k * width)
                names.setdefault(reg, name)
            elif special:
                axis = special.group(2)
                said = (_SPECIAL_CUDA if getattr(ck, "language", "python") == "cuda"
                        else _SPECIAL)[special.group(1)]
                names.setdefault(reg, said + (f".{axis}" if axis else ""))
            py = py_of.get(n)
            if py is not None and py not in lines.setdefault(reg, []):
                lines[reg].append(py)
    out = {}
    for reg in set(typ) | set(names) | set(lines):
        t = typ.get(reg, "")
        if t in ("", "b8", "b16", "b32", "b64"):
            t = read_type.get(reg, address_type.get(reg, t))
        test = ""
        if reg in tests:
            op, a, b = tests[reg]
            test = f"{names.get(a, a)} {op} {names.get(b, b)}"
        out[reg] = RegisterNote(t if not t.startswith("b") else "", names.get(reg, ""),
                                tuple(lines.get(reg, ())), test)
    return out
