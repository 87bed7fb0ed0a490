"""Code quality of one PTX module: ptxas resources, SASS instruction counts, PTX features.

Every tool's PTX goes through the same ptxas and nvdisasm
(:func:`warp_lab.compiler.toolchain.make_cubin` / ``make_sass``, same flags:
``-v --gpu-name sm_XX -O3``, no line info), so differences come from the PTX
alone.

SASS instruction count: instructions in every ``.text.*`` section of the
cubin (the entry and any device function it calls), leaving out ``NOP``
padding and the ``BRA`` self-loop ptxas puts after the last ``EXIT``
(neither is ever executed); from nvdisasm's listing (:func:`count_sass`) or,
much faster, straight from the cubin (:func:`count_cubin`).

PTX features count the instructions behind the usual causes of worse code
(a static count over the whole module, PTX ISA 8.x spelling):

* ``ld_global_nc``: ``ld.global.nc`` (read-only data cache, needs
  ``noalias``/``readonly`` or ``__restrict__``);
* ``ld_global``/``st_global``/``ld_shared``/``st_shared``: explicit state spaces;
* ``ld_generic``/``st_generic``: ``ld``/``st`` with no state space (generic
  addressing: an address-space check in hardware, no ``.nc``);
* ``vector_mem``: ``.v2``/``.v4`` loads and stores (not of parameters);
* ``int64_arith``: ``add/sub/mul/mad/shl/shr`` on ``.s64``/``.u64``/``.b64``
  plus ``mul.wide`` (64-bit index arithmetic);
* ``cvta``: generic↔global/shared conversions; ``call``: calls left in the PTX;
* ``cvt``: conversions; ``setp``: comparisons; ``bra``: branches.
"""

from __future__ import annotations

import re
import struct
from collections import Counter
from dataclasses import asdict, dataclass

from warp_lab.compiler import toolchain
from warp_lab.options import CompileOptions

__all__ = ["Quality", "count_sass", "count_cubin", "ptx_features", "assess"]

_SECTION_RE = re.compile(r"^\s*\.section\s+\.text\.")
_OTHER_SECTION_RE = re.compile(r"^\s*\.section\s+")
_LABEL_RE = re.compile(r"^\s*(\.L_x_\d+|[\w$.]+):\s*$")
_INSN_RE = re.compile(r"/\*[0-9a-fA-F]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")
_SELF_BRA_RE = re.compile(r"`\((\.L_x_\d+)\)")


def count_sass(sass: str) -> Counter:
    """Count SASS instructions by opcode (with modifiers, ``IMAD.WIDE``) in all ``.text`` sections.

    Args:
        sass: ``nvdisasm -c`` output.

    Returns:
        a Counter opcode -> count; ``sum(counter.values())`` is the
        instruction count. NOPs and the trailing ``BRA`` self-loop are left out.
    """
    counts: Counter = Counter()
    in_text = False
    label = None
    for line in sass.splitlines():
        if _SECTION_RE.match(line):
            in_text, label = True, None
            continue
        if _OTHER_SECTION_RE.match(line):
            in_text = False
            continue
        if not in_text:
            continue
        m = _LABEL_RE.match(line)
        if m:
            label = m.group(1)
            continue
        m = _INSN_RE.search(line)
        if not m:
            continue
        op, rest = m.group(1), m.group(2)
        prev_label, label = label, None
        if op == "NOP":
            continue
        if op == "BRA":
            target = _SELF_BRA_RE.search(rest)
            if target and target.group(1) == prev_label:
                continue
        counts[op] += 1
    return counts


#: low 12 bits of the first instruction word (Volta and newer, 16-byte instructions)
_OP_NOP, _OP_BRA = 0x918, 0x947


def _text_sections(cubin: bytes):
    """The bytes of each ``.text.*`` section of an ELF64 cubin (section headers via struct)."""
    (shoff,) = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)

    def header(i):
        return struct.unpack_from("<IIQQQQ", cubin, shoff + i * shentsize)

    names = header(shstrndx)[4]
    for i in range(shnum):
        name_idx, _, _, _, offset, size = header(i)
        end = cubin.index(b"\0", names + name_idx)
        if cubin[names + name_idx:end].startswith(b".text."):
            yield cubin[offset:offset + size]


def count_cubin(cubin: bytes) -> int:
    """The :func:`count_sass` total read straight from the cubin, without nvdisasm.

    Every instruction of sm_70 and newer is 16 bytes with its opcode in the
    low 12 bits; ``NOP`` (0x918) padding and the final ``BRA`` (0x947, the
    self-loop after the last ``EXIT``) of each section are left out, as
    :func:`count_sass` does. Agrees with it on every benchmark cubin
    (tests/benchmarks). nvdisasm costs 0.6 s per call on the test machine.
    """
    total = 0
    for text in _text_sections(cubin):
        ops = [int.from_bytes(text[k:k + 8], "little") & 0xFFF for k in range(0, len(text), 16)]
        ops = [op for op in ops if op != _OP_NOP]
        if ops and ops[-1] == _OP_BRA:
            ops.pop()
        total += len(ops)
    return total


_PTX_INSN_RE = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.]*)\s", re.M)
_SPACES = ("global", "shared", "local", "const", "param")


def ptx_features(ptx: str) -> dict[str, int]:
    """Static counts of the PTX instructions that explain code-quality gaps (see module doc)."""
    f = Counter()
    for m in _PTX_INSN_RE.finditer(ptx):
        op = m.group(1)
        parts = op.split(".")
        head = parts[0]
        if head in ("ld", "st", "ldu"):
            space = next((p for p in parts[1:] if p in _SPACES), None)
            kind = "ld" if head in ("ld", "ldu") else "st"
            if space is None:
                f[f"{kind}_generic"] += 1
            elif space in ("global", "shared"):
                f[f"{kind}_{space}"] += 1
            if kind == "ld" and space == "global" and "nc" in parts:
                f["ld_global_nc"] += 1
            if ("v2" in parts or "v4" in parts) and space != "param":
                f["vector_mem"] += 1
        elif head in ("add", "sub", "mul", "mad", "shl", "shr") and (
                {"s64", "u64", "b64"} & set(parts) or "wide" in parts):
            f["int64_arith"] += 1
        elif head in ("cvta", "call", "cvt", "setp", "bra"):
            f[head] += 1
    keys = ("ld_global", "ld_global_nc", "st_global", "ld_shared", "st_shared", "ld_generic",
            "st_generic", "vector_mem", "int64_arith", "cvta", "call", "cvt", "setp", "bra")
    return {k: int(f[k]) for k in keys}


@dataclass(frozen=True)
class Quality:
    """What one tool's PTX became for one arch.

    Attributes:
        registers: registers per thread (ptxas ``-v``).
        spill_stores / spill_loads: spill bytes per thread.
        stack_frame: local-memory stack frame bytes per thread.
        shared: static shared memory bytes per block.
        local: ``lmem`` bytes per thread ptxas reports (0 when absent).
        sass_instructions: static SASS instruction count (see :func:`count_sass`).
        sass_ops: opcode -> count.
        ptx: :func:`ptx_features` of the PTX.
        ptx_lines: non-empty, non-comment PTX lines.
    """

    registers: int
    spill_stores: int
    spill_loads: int
    stack_frame: int
    shared: int
    local: int
    sass_instructions: int
    sass_ops: dict
    ptx: dict
    ptx_lines: int

    def to_json(self) -> dict:
        return asdict(self)


def assess(ptx: str, entry: str, arch: str, sass: bool = True) -> tuple[Quality, str | None]:
    """Assemble ``ptx`` for ``arch`` and measure it.

    Args:
        ptx: PTX text from any tool.
        entry: the ``.entry`` whose ptxas resources to report.
        arch: ``"sm_80"``-style target (sm_70 or newer).
        sass: disassemble with nvdisasm (opcode counts and SASS text); when
            False the instruction count comes from :func:`count_cubin`,
            ``sass_ops`` is empty and no SASS text is returned.

    Returns:
        ``(quality, sass_text or None)``.

    Raises:
        ToolchainError: ptxas or nvdisasm is missing or rejects the input.
    """
    options = CompileOptions(arch=arch, lineinfo=False)
    cubin, res, _log = toolchain.make_cubin(ptx, options, entry)
    text = toolchain.make_sass(cubin, arch) if sass else None
    ops = count_sass(text) if sass else Counter()
    lines = sum(1 for ln in ptx.splitlines() if ln.strip() and not ln.strip().startswith("//"))
    q = Quality(registers=res.registers, spill_stores=res.spill_stores,
                spill_loads=res.spill_loads, stack_frame=res.stack_frame, shared=res.shared,
                local=res.local,
                sass_instructions=sum(ops.values()) if sass else count_cubin(cubin),
                sass_ops=dict(ops), ptx=ptx_features(ptx), ptx_lines=lines)
    return q, text
