"""Device ``printf`` (``vprintf``) and ``__assertfail``, as simulator built-ins.

CUDA's device printf ABI (CUDA Programming Guide, "Formatted Output";
NVPTX lowering of ``printf``): ``vprintf(const char *format, char *args)``
where ``args`` points to a buffer holding the arguments one after another,
each aligned to its own size; ``float`` arguments are promoted to ``double``
(C default argument promotions), ``char``/``short`` to ``int``. The format
follows C ``printf``: the length modifier (``l``, ``ll``, ``z``, ...)
decides whether an integer argument takes 4 or 8 bytes.

Output is collected per launch in thread order (block-major, then thread),
as one line per call when the format ends in a newline.
"""

from __future__ import annotations

import re
import struct

import numpy as np

from warp_lab.sim.memops import access

__all__ = ["vprintf", "assertfail", "format_c"]

_SPEC = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d*))?(hh|h|ll|l|z|j|t|L)?([diouxXcsfFeEgGaAp%])")


def _read(m, ins, addr: int, n: int, t: int) -> bytes:
    groups = access(m, ins, "generic", np.array([addr], np.uint64), np.array([t]), 1)
    buf, _, off = groups[0]
    o = int(off[0])
    end = min(buf.size, o + n)
    return buf[o:end].tobytes()


def _read_str(m, ins, addr: int, t: int, limit: int = 4096) -> str:
    out = bytearray()
    while len(out) < limit:
        chunk = _read(m, ins, addr + len(out), 64, t)
        if not chunk:
            break
        z = chunk.find(b"\0")
        if z >= 0:
            out += chunk[:z]
            break
        out += chunk
    return out.decode("utf-8", "replace")


def format_c(fmt: str, fetch, fetch_str) -> str:
    """Format ``fmt`` like C printf; ``fetch(size, kind)`` returns the next argument's
    raw int (``kind`` ``"i"``) or float (``"f"``); ``fetch_str(ptr)`` reads a C string."""
    out, pos = [], 0
    for mt in _SPEC.finditer(fmt):
        out.append(fmt[pos:mt.start()])
        pos = mt.end()
        flags, width, prec, length, conv = mt.groups()
        if conv == "%":
            out.append("%")
            continue
        if width == "*":
            width = str(fetch(4, "s"))
        if prec == "*":
            prec = str(fetch(4, "s"))
        spec = "%" + flags + (width or "") + (("." + prec) if prec is not None else "")
        if conv in "fFeEgGaA":
            v = fetch(8, "f")
            out.append((spec + (conv if conv not in "aA" else "e")) % v)
        elif conv == "s":
            out.append((spec + "s") % fetch_str(fetch(8, "u")))
        elif conv == "p":
            out.append(f"0x{fetch(8, 'u'):x}")
        elif conv == "c":
            out.append((spec + "c") % (fetch(4, "u") & 0xFF))
        else:
            size = 8 if length in ("l", "ll", "z", "j", "t") else 4
            signed = conv in "di"
            v = fetch(size, "s" if signed else "u")
            if length == "h":
                v = (v & 0xFFFF) - (0x10000 if signed and v & 0x8000 else 0) if signed else v & 0xFFFF
            elif length == "hh":
                v = (v & 0xFF) - (0x100 if signed and v & 0x80 else 0) if signed else v & 0xFF
            out.append((spec + ("d" if conv in "diu" else conv)) % v)
    out.append(fmt[pos:])
    return "".join(out)


def _param_u64(m, name, t):
    arr = m.cparams.get(name)
    if arr is None:
        return 0
    return int.from_bytes(arr[t, :8].tobytes(), "little")


def vprintf(m, ins, idx):
    """Execute ``vprintf`` for batch threads ``idx`` (in order), appending to ``m.printed``."""
    fname, aname = ins.srcs[0], ins.srcs[1]
    for t in idx.tolist():
        fmt = _read_str(m, ins, _param_u64(m, fname, t), t)
        base = _param_u64(m, aname, t)
        state = {"off": 0}

        def fetch(size, kind, t=t, base=base, state=state):
            off = (state["off"] + size - 1) // size * size
            state["off"] = off + size
            raw = _read(m, ins, base + off, size, t)
            if kind == "f":
                return struct.unpack("<d", raw)[0]
            return int.from_bytes(raw, "little", signed=(kind == "s"))

        text = format_c(fmt, fetch, lambda p, t=t: _read_str(m, ins, p, t))
        m.printed.append(text)
        if text.strip():
            m.last_printed[t] = text
    for ret in ins.dsts:
        m.cparams[ret] = np.zeros((m.T, 4), np.uint8)


def assertfail(m, ins, idx):
    """``__assertfail(message, file, line, function, charSize)``: stop with a ``trap`` finding."""
    if idx.size == 0:
        return
    t = int(idx[0])
    args = [_param_u64(m, a, t) for a in ins.srcs]
    msg = _read_str(m, ins, args[0], t) if args and args[0] else "assertion failed"
    where = _read_str(m, ins, args[1], t) if len(args) > 1 and args[1] else ""
    line = args[2] & 0xFFFFFFFF if len(args) > 2 else 0
    m.finding("trap", f"device assertion failed: {msg}" + (f" ({where}:{line})" if where else ""),
              ins, t, stop=True)
