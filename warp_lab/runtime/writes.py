"""Which array parameters a kernel may write, read from its PTX.

A launch refuses a read-only numpy array (``arr.flags.writeable`` False, as
for ``np.broadcast_to`` views) only where the kernel may store through it;
read-only inputs that are only read are fine. The compiler records no
per-parameter "written" fact, so this module finds it in the entry's PTX:

1. The pointer of array parameter ``k`` enters the kernel through an
   ``ld.param`` of bytes 0..7 of ``<entry>_param_k`` (the struct
   ``{ptr, shape[], strides[]}`` of ``docs/architecture.md``, ABI).
2. Every register computed from a tainted register is tainted with the same
   parameters (``add``, ``mad``, ``cvta``, ``selp``, ``mov``...), to a fixed
   point so loop-carried pointers count. Values *loaded* through a pointer
   are not pointers and stay untainted (``y[i] = x[idx[i]]`` writes ``y``,
   not ``idx``).
3. A parameter is written when a tainted register is the address of a
   ``st``, ``atom`` or ``red`` (PTX ISA 9.7.9 "Data Movement" and 9.7.13
   "Parallel Synchronization and Communication").

The analysis is conservative: a pointer that escapes (stored as a value,
passed to a call through ``st.param``, or the parameter's address taken
with ``mov``) marks that parameter as written, so an unusual kernel may
refuse a read-only array it only reads (at ``opt=0`` LLVM spills pointers
to the stack), never accept one it writes.
"""

from __future__ import annotations

import functools
import hashlib
import re

__all__ = ["written_params"]

_REG = re.compile(r"%[a-z]+\d+")
_PARAM_REF = re.compile(r"\[(\w+_param_(\d+))(?:\+(\d+))?\]")


def _entry_body(ptx: str, entry: str) -> list[str]:
    """The instruction lines of ``.entry entry`` (its parameter list excluded)."""
    start = re.search(rf"\.entry\s+{re.escape(entry)}\s*\(", ptx)
    if start is None:
        return []
    lines = ptx[start.end():].splitlines()
    body, depth = [], 0
    for line in lines:
        text = line.split("//", 1)[0].strip()
        if text == "{":  # the body, or a nested call sequence block
            depth += 1
        elif text == "}":
            depth -= 1
            if depth == 0:
                break
        elif depth:
            body.append(text)
    return body


def _operands(text: str) -> list[str]:
    """Top-level comma-separated operands (``{%r1, %r2}`` stays one operand)."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _analyse(ptx: str, entry: str, array_params: tuple[int, ...]) -> frozenset[int]:
    body = _entry_body(ptx, entry)
    prefix = f"{entry}_param_"
    taint: dict[str, frozenset[int]] = {}
    written: set[int] = set()
    instrs = []
    for text in body:
        if not text or text.startswith((".", "$")) or text.endswith(":"):
            continue  # directives (.loc, .reg) and labels
        text = text.rstrip(";")
        guard = ""
        if text.startswith("@"):
            guard, _, text = text.partition(" ")
        op, _, rest = text.strip().partition(" ")
        instrs.append((op, _operands(rest), guard))
    changed = True
    while changed:
        changed = False
        for op, ops, guard in instrs:
            base = op.split(".")[0]
            if base == "ld" and ".param" in op:
                m = _PARAM_REF.search(ops[1]) if len(ops) > 1 else None
                if m and m.group(1).startswith(prefix):
                    k = int(m.group(2)) - 1  # param 0 is the hidden launch_dim
                    if k in array_params and int(m.group(3) or 0) < 8:
                        for reg in _REG.findall(ops[0]):
                            if k not in taint.get(reg, ()):
                                taint[reg] = taint.get(reg, frozenset()) | {k}
                                changed = True
                continue
            if any(prefix in o for o in ops):  # the parameter's address itself: escapes
                for o in ops:
                    m = re.search(rf"{re.escape(prefix)}(\d+)", o)
                    if m and int(m.group(1)) - 1 in array_params:
                        written.add(int(m.group(1)) - 1)
                continue
            if base in ("st", "red", "atom"):
                addr = ops[1] if base == "atom" else ops[0]
                values = ops[2:] if base == "atom" else ops[1:]
                for reg in _REG.findall(addr):
                    written |= taint.get(reg, frozenset())
                for reg in (r for o in values for r in _REG.findall(o)):
                    written |= taint.get(reg, frozenset())  # a pointer stored: escapes
                continue  # an atom's old value is data, not a pointer
            if base in ("ld", "ldu", "bra", "ret", "bar", "call", "exit", "trap") or not ops:
                continue  # loaded values are data; call arguments went through st.param
            src = frozenset().union(*(taint.get(r, frozenset())
                                      for o in ops[1:] for r in _REG.findall(o)))
            if not src:
                continue
            for reg in _REG.findall(ops[0]):
                if not src <= taint.get(reg, frozenset()):
                    taint[reg] = taint.get(reg, frozenset()) | src
                    changed = True
    return frozenset(written)


@functools.lru_cache(maxsize=128)
def _cached(ptx_hash: str, ptx: str, entry: str, array_params: tuple[int, ...]):
    return _analyse(ptx, entry, array_params)


def written_params(ck) -> frozenset[str]:
    """Names of ``ck``'s array parameters its PTX may store through.

    Args:
        ck: a :class:`~warp_lab.compiler.artifact.CompiledKernel` (its
            ``ptx``, ``entry`` and ``params``).

    Returns:
        the parameter names; conservative (see the module docstring): a name
        missing from it is certainly never written by the kernel.
    """
    from warp_lab.lang import types as T

    arrays = tuple(i for i, (_, t) in enumerate(ck.params) if isinstance(t, T.ArrayType))
    if not arrays:
        return frozenset()
    found = _cached(hashlib.sha256(ck.ptx.encode()).hexdigest(), ck.ptx, ck.entry, arrays)
    return frozenset(ck.params[i][0] for i in found)
