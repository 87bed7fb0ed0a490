"""Give PTX instructions that LLVM left on "line 0" the line that first uses their result.

Where line 0 comes from (LLVM 22, vector_add at O3): lowering gives every
instruction a ``!dbg`` location (the parameter ``extractvalue``s the ``def``
line, each index computation its own line). InstCombine sinks the parameter
reads and address arithmetic past the entry guard into the block that uses
them; ``SpeculativeExecutionPass`` (in the O1–O3 pipeline of a target with
branch divergence, such as NVPTX) then hoists these cheap instructions back
above the branch and *drops* their locations, as LLVM does for any code moved
to another block (a location must not leak into a block it did not come from).
Instruction selection adds more: the ``ld.param`` loads of kernel arguments
are made without a location, and SelectionDAG's CSE clears the location of a
node merged from two different lines (``UpdateSDLocOnMergeSDNode``). Machine
sinking then moves such instructions next to their users, and the
AsmPrinter marks an instruction without a location at the top of a block as
``.loc F 0 C`` (``DwarfDebug::beginInstruction``: "line 0", not the
previous line). On the corpus that is 520 PTX instructions on sm_80, in 43
of 45 kernels; for vector_add 7 of the 22 instructions a thread runs.

No pass can be asked to keep those locations, so the fix is made once, on the
PTX text, before ptxas, the simulator and the line map read it: an
instruction under a line-0 ``.loc`` goes to the line of the first located
instruction after it that reads its result (directly, or through other line-0
instructions; before it for a value carried round a loop) — the statement
that first needs that code. Each instruction goes on its own, so the panes
credit the address of ``y[i]``, computed ahead of ``t = a * x[i]``, to the
store to ``y``; as with any optimised code, stepping a line in the debugger
may then come back to a line it has left. (Moving a hoisted run as a whole,
to its first user, credited a matmul's ``c`` pointer to the loop header.)
The new directive says so with a comment (:data:`MARK`).

A store merged from two branches is the other source of line 0: for
``if c: y[i] = f(v)`` / ``else: y[i] = g(v)`` SimplifyCFG's sinking
(``sinkCommonCodeFromPredecessors``, in the O2/O3 pipeline) makes one store in
the join block, and ``DILocation::getMergedLocation`` of two different lines of
one scope is line 0 — the store, and the address arithmetic only it reads, are
on no Python line. nvcc (NVRTC 13, ``-lineinfo``) keeps such stores in their
branches, each on its own line. The PTX does not say which stores were merged,
but it says where the stored value comes from: the located instructions that
write it (through line-0 ones other than loads, a ``selp`` say; not the
predicate that picks a branch nor an address), usually each branch's
computation. The store goes to the first of their lines in source order — the
``if`` branch's in the example, the first of the merged stores' lines whenever
each branch computes what it stores — with a directive that says so
(:data:`MERGED`), and the address arithmetic follows it as its first user. So
the per-line views count the store, executed by the lanes of both branches, on
that line, and none of it on no line. (A value computed further up, ``v = x[i]``
stored in both branches, puts the store on ``v``'s line, and ``out[i] = 1.0`` /
``out[i] = 2.0`` on the ``if`` line, whose ``selp`` picks the value: the only
lines the PTX names.) A store whose value no located instruction writes (both
branches' identical ``out[i] = out[i + 64]``, merged into one line-0 load and
store) and a ``ret`` keep line 0. Only ``.loc`` lines change: ptxas's code and register allocation are the
same (the PTX of the benchmark kernels differs only in ``.loc`` lines).
"""

from __future__ import annotations

import re
from itertools import chain

__all__ = ["attribute_line_zero", "attributed_lines", "operands", "is_instruction",
           "MARK", "MERGED", "REGISTER", "LOC_RE"]

#: the comment closing a ``.loc`` this pass wrote (PTX ISA "Syntax": ``//`` comments)
MARK = "// line 0 in LLVM's output: the first line using this code"

#: the start of the comment closing a ``.loc`` this pass gave a line-0 (merged) store:
#: followed by the lines that compute the stored value, ``"7, 9"``
MERGED = "// line 0 in LLVM's output: a merged store, on the first line computing its value: "

#: a ``.loc file line column`` directive (PTX ISA, "Debugging Directives")
LOC_RE = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
#: a PTX register operand (``%r5``, ``%rd12``, ``%p1``)
REGISTER = re.compile(r"%[A-Za-z_]+\d+\b")
# instructions whose first operand is read, not written (PTX ISA chapter 9)
_NO_DEST = ("st", "red", "bra", "brx", "ret", "exit", "trap", "bar", "barrier", "fence",
            "membar", "call", "prefetch", "prefetchu", "cp", "stmatrix", "pmevent", "brkpt")


def is_instruction(stripped: str) -> bool:
    """Whether a stripped PTX line is an instruction (not a comment, directive, label or
    brace)."""
    return bool(stripped) and not stripped.startswith(_NOT_INSTRUCTION) \
        and not stripped.endswith(":")


#: how the lines that are not instructions start (comments, directives, labels, braces)
_NOT_INSTRUCTION = ("//", ".", "$", "{", "}", ")", "(")


def operands(stripped: str) -> tuple[list[str], list[str]]:
    """``(written, read)`` registers of one PTX instruction line."""
    text = stripped.split("//", 1)[0].rstrip().rstrip(";")
    guard = []
    if text.startswith("@"):
        g, _, text = text.partition(" ")
        guard = REGISTER.findall(g)
    opcode, _, rest = text.strip().partition(" ")
    if opcode.split(".", 1)[0] in _NO_DEST:
        return [], guard + REGISTER.findall(rest)
    # the first operand ends at the first comma outside its braces: a destination is a
    # register, a vector {%r1, %r2} or a pair %r1|%p1 (PTX ISA "Instruction Operands")
    rest = rest.lstrip()
    cut = rest.find(",", rest.find("}") if rest.startswith("{") else 0)
    if cut < 0:
        cut = len(rest)
    return REGISTER.findall(rest[:cut]), guard + REGISTER.findall(rest[cut:])


def _line_of(directive: str | None) -> tuple[str, str] | None:
    """``(file, line)`` of a ``.loc`` directive line (the column does not matter here)."""
    m = LOC_RE.match(directive) if directive is not None else None
    return (m.group(1), m.group(2)) if m else None


def _function_spans(lines: list[str]):
    """``(start, end)`` line indices of each function body ``{ ... }`` at top level."""
    depth, start = 0, None
    for k, line in enumerate(lines):
        if "{" not in line and "}" not in line:
            continue  # neither opens, closes nor changes the depth
        s = line.strip()
        if s.startswith("{") and depth == 0:
            start = k
        depth += s.count("{") - s.count("}") if not s.startswith("//") else 0
        if depth == 0 and start is not None and "}" in s:
            yield start, k
            start = None


def attribute_line_zero(ptx: str) -> str:
    """``ptx`` with line-0 instructions moved onto the first line that uses them.

    Args:
        ptx: NVPTX output text (``.loc F L C`` directives, PTX ISA "Debugging
            Directives"); without ``.loc`` lines it is returned unchanged.

    Returns:
        the same text where only ``.loc`` lines differ: each instruction under
        ``.loc F 0 C`` gets the directive of the first located instruction that
        reads its result (ending in :data:`MARK`); an instruction whose result no
        located instruction reads keeps ``.loc F 0 C``.
    """
    if ".loc" not in ptx:
        return ptx
    lines = ptx.split("\n")
    replace: dict[int, list[str]] = {}  # line index -> directive lines put before it
    drop: set[int] = set()
    for start, end in _function_spans(lines):
        _attribute(lines, start, end, replace, drop)
    if not replace and not drop:
        return ptx
    out, done = [], 0  # lines[:done] are in out
    for k in sorted(replace.keys() | drop):
        out.extend(lines[done:k])
        out.extend(replace.get(k, ()))
        if k not in drop:
            out.append(lines[k])
        done = k + 1
    out.extend(lines[done:])
    return "\n".join(out)


def _attribute(lines, start, end, replace, drop) -> None:
    """Plan the ``.loc`` changes of one function body ``lines[start..end]``.

    Operands are parsed only where the search needs them (the line-0 instructions'
    results, the reads of the instructions after them up to their first user): on
    the compile path, this pass costs a small part of parse→PTX.
    """
    loc, zero = None, False  # the directive line in force (or None); whether it is line 0
    at, locs, texts = [], [], []  # per instruction: line index, directive, stripped text
    is_zero = []  # per instruction: under a line-0 directive
    zero_directives = []
    for k in range(start, end + 1):
        s = lines[k].strip()
        if not s:
            continue
        if s[0] == ".":  # a directive, never an instruction
            if s.startswith(".loc"):
                m = LOC_RE.match(s)
                if m:
                    loc = lines[k]
                    zero = m.group(2) == "0"
                    if zero:
                        zero_directives.append(k)
            continue
        if not s.startswith(_NOT_INSTRUCTION) and s[-1] != ":":  # is_instruction(s), inline
            at.append(k)
            locs.append(loc)
            texts.append(s)
            is_zero.append(zero)
    if not zero_directives:
        return
    count = len(texts)
    parsed: dict[int, tuple[list[str], list[str]]] = {}

    def ops(n: int):
        got = parsed.get(n)
        if got is None:
            got = parsed[n] = operands(texts[n])
        return got

    merged = _merged_stores(texts, locs, is_zero, ops)  # n -> its new directive
    resolved: dict[int, int | None] = {}

    def first_user(n: int, seen: set) -> int | None:
        """The located instruction that first reads ``n``'s result (through line-0 ones):
        the instructions after ``n`` in order, then those before it (round a loop)."""
        if not is_zero[n] or n in merged:
            return n
        if n in resolved:
            return resolved[n]
        if n in seen:
            return None
        seen.add(n)
        written = set(ops(n)[0])
        found = None
        if written:
            names = tuple(written)
            for u in chain(range(n + 1, count), range(n)):
                text = texts[u]
                for reg in names:  # a register ``u`` reads is in its text: parse only those
                    if reg in text:
                        break
                else:
                    continue
                if not written.intersection(ops(u)[1]):
                    continue
                found = first_user(u, seen)
                if found is not None:
                    break
        resolved[n] = found
        return found

    # each line-0 instruction goes to the line of its own first located user, so the panes
    # credit c's pointer load to the statement that stores to c, not to the loop header
    # that happens to read another pointer of the same hoisted run
    in_force = None  # the directive ptxas sees at the current instruction
    for n in range(count):
        if not is_zero[n]:
            in_force = locs[n]
            continue
        user = first_user(n, set())
        if n in merged:
            want = merged[n]
        elif user is None:
            want = locs[n]
        else:
            want = (merged[user].split("\t//", 1)[0] if user in merged
                    else locs[user].rstrip()) + "\t" + MARK
        if _line_of(want) != _line_of(in_force) or (
                n in merged and MERGED not in in_force):  # the store says it was merged
            replace.setdefault(at[n], []).append(want)
            in_force = want
    for k in zero_directives:
        drop.add(k)


_STORES = ("st.", "red.")


def _value_registers(stripped: str) -> list[str]:
    """The registers an instruction reads as values: not a guard, a predicate operand or
    a register inside ``[...]`` (an address; a load reads no value register at all)."""
    text = stripped.split("//", 1)[0].rstrip().rstrip(";")
    if text.startswith("@"):
        text = text.partition(" ")[2]
    opcode, _, rest = text.strip().partition(" ")
    if opcode.startswith(("ld.", "ldu.")):
        return []
    if opcode.split(".", 1)[0] not in _NO_DEST:  # drop the destination
        rest = rest.lstrip()
        cut = rest.find(",", rest.find("}") if rest.startswith("{") else 0)
        rest = rest[cut + 1:] if cut >= 0 else ""
    return [r for r in REGISTER.findall(re.sub(r"\[[^\]]*\]", "", rest))
            if not r.startswith("%p")]


def _merged_stores(texts, locs, is_zero, ops) -> dict[int, str]:
    """The line-0 (merged) stores of one function whose value names a line, each with its
    new directive.

    Args:
        texts, locs, is_zero: per instruction of one function, its stripped text, the
            ``.loc`` line in force and whether that is line 0.
        ops: instruction index -> ``(written, read)`` registers (:func:`operands`).

    Returns:
        instruction index -> the directive of the first (lowest) line among the located
        instructions that write the stored value (through line-0 ones other than loads),
        closed by :data:`MERGED` and those lines; for each line-0 store (``st``, ``red``)
        whose value has a located writer.
    """
    stores = [n for n, t in enumerate(texts) if is_zero[n] and (
        t.partition(" ")[2].lstrip() if t.startswith("@") else t).startswith(_STORES)]
    if not stores:
        return {}
    writers: dict[str, list[int]] = {}
    for n in range(len(texts)):
        for reg in ops(n)[0]:
            writers.setdefault(reg, []).append(n)

    def lines_of(regs, seen) -> dict[tuple[str, str], int]:
        """(file, line) -> first instruction index, of the located writers of ``regs``."""
        found: dict[tuple[str, str], int] = {}
        for reg in regs:
            for w in writers.get(reg, ()):
                if w in seen:
                    continue
                seen.add(w)
                if is_zero[w]:  # a line-0 writer (a selp of the two values): its value
                    # sources, not a predicate choosing between them (the if's line) nor
                    # an address (a load merged from both branches says nothing here)
                    for key, k in lines_of(_value_registers(texts[w]), seen).items():
                        found.setdefault(key, k)
                else:
                    key = _line_of(locs[w])
                    if key is not None and key[1] != "0":
                        found.setdefault(key, w)
        return found

    out = {}
    for n in stores:
        found = lines_of(_value_registers(texts[n]), set())
        if not found:
            continue
        file = _line_of(locs[min(found.values())])[0]  # the first writer's file
        first = min((key for key in found if key[0] == file), key=lambda k: int(k[1]))
        names = ", ".join(str(ln) for ln in sorted({int(k[1]) for k in found}))
        out[n] = f"{locs[found[first]].rstrip()}\t{MERGED}{names}"
    return out


def attributed_lines(ptx: str) -> frozenset[int]:
    """1-based PTX line numbers of the instructions :func:`attribute_line_zero` put on a
    line (the ``.loc`` in force ends with :data:`MARK`, or is a merged store's, :data:`MERGED`).

    Like the rows of a DWARF line table whose ``is_stmt`` flag is false (DWARF 5,
    section 6.2.2), they count on their line in every pane and per-line metric, but are
    no place to stop for that line: the debugger's line breakpoints pass them by while
    the line has instructions of its own (hoisted ``y[i]`` address arithmetic would
    otherwise stop a breakpoint on ``y[i] = ...`` twice per block).
    """
    out, marked = set(), False
    for k, line in enumerate(ptx.split("\n"), 1):
        s = line.strip()
        if s.startswith(".loc"):
            marked = s.endswith(MARK) or MERGED in s
        elif marked and is_instruction(s):
            out.add(k)
    return frozenset(out)
