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

A GPU passes printf's arguments (and internal metadata) to the host through a FIFO of
``cudaLimitPrintfFifoSize`` bytes, 1 MiB by default; the CUDA Programming Guide
("Formatted Output", "Limitations"): "It is circular and if more output is produced
during kernel execution than can fit in the buffer, older output is overwritten."
:func:`fifo_overwritten` applies that rule to a launch's calls, each counted as its
argument buffer plus the format string's address (:data:`RECORD_HEAD_BYTES`); the
metadata's size is not documented, so a GPU starts overwriting at least as early.
"""

from __future__ import annotations

import math
import re
import struct

import numpy as np

from warp_lab.sim.memops import access

__all__ = ["vprintf", "assertfail", "format_c", "fifo_overwritten", "PRINTF_FIFO_BYTES",
           "RECORD_HEAD_BYTES"]

#: the device printf FIFO's default size, bytes (``cudaLimitPrintfFifoSize``; CUDA
#: Programming Guide "Formatted Output", "Associated Host-Side API": 1 megabyte)
PRINTF_FIFO_BYTES = 1 << 20
#: bytes of one call's FIFO record besides its arguments: the format string's address
#: (the metadata a GPU adds is undocumented and not counted)
RECORD_HEAD_BYTES = 8
#: bytes of a call's argument buffer read at a time
_ARG_CHUNK = 128

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
        if conv in "aA":
            out.append(_pad(flags, width, *_hex_float(fetch(8, "f"), flags, prec, conv)))
        elif conv in "fFeEgG":
            v = fetch(8, "f")
            if not math.isfinite(v):   # C pads inf and nan with spaces, never zeros
                spec = "%" + flags.replace("0", "") + spec[1 + len(flags):]
            out.append((spec + conv) % v)
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
            out.append(_pad(flags, width, *_c_integer(v, flags, prec, conv)))
    out.append(fmt[pos:])
    return "".join(out)


def _c_integer(v: int, flags: str, prec, conv: str) -> tuple[str, str, bool]:
    """C's ``%d %i %u %o %x %X`` of ``v`` (C11 7.21.6.1) as ``(sign and prefix, digits,
    zero_pad)``: the precision is the least number of digits (none for a 0 of precision
    0), ``#`` gives octal a leading 0 and nonzero hex a 0x, ``+``/space sign only signed
    conversions, and ``0`` pads only without a precision."""
    neg = v < 0
    mag = -v if neg else v
    digits = "" if prec in ("", "0") and mag == 0 else format(mag, {"o": "o", "x": "x",
                                                                    "X": "X"}.get(conv, "d"))
    if prec not in (None, "", "*"):
        digits = digits.rjust(int(prec), "0")
    head = _sign(neg, flags if conv in "di" else "")
    if "#" in flags:
        if conv == "o" and not digits.startswith("0"):
            digits = "0" + digits
        elif conv in "xX" and mag:
            head += "0" + conv
    return head, digits, prec is None


def _hex_float(v: float, flags: str, prec, conv: str) -> tuple[str, str, bool]:
    """C's ``%a``/``%A`` of ``v`` (C11 7.21.6.1, glibc's form): ``0x1.8p+1`` for 3.0, the
    hex digits of the 52-bit fraction without trailing zeros, or rounded (to nearest,
    ties to even) to the precision; subnormals as ``0x0.<fraction>p-1022``."""
    head = _sign(math.copysign(1.0, v) < 0, flags)
    if not math.isfinite(v):
        text = "nan" if math.isnan(v) else "inf"
        return head, text.upper() if conv == "A" else text, False
    mag = abs(v)
    if mag == 0:
        lead, frac, exp = 0, 0, 0
    elif mag < 2.0 ** -1022:
        lead, frac, exp = 0, int(math.ldexp(mag, 1074)), -1022
    else:
        m, e = math.frexp(mag)                 # mag = m * 2**e, 0.5 <= m < 1
        lead, frac, exp = 1, int(math.ldexp(m * 2 - 1, 52)), e - 1
    if prec in (None, "*"):
        hexdigits = f"{frac:013x}".rstrip("0")
    else:
        p = int(prec or 0)
        if p < 13:
            shift = 4 * (13 - p)
            q, r = divmod(frac, 1 << shift)
            half = 1 << (shift - 1)
            if r > half or (r == half and (q if p else lead) & 1):   # ties to even
                q += 1
            if q >> (4 * p):                   # the fraction rounded up into the lead digit
                lead, q = lead + 1, 0
            hexdigits = f"{q:0{p}x}" if p else ""
        else:
            hexdigits = f"{frac:013x}" + "0" * (p - 13)
    point = "." if hexdigits or "#" in flags else ""
    text = f"{lead}{point}{hexdigits}p{exp:+d}"
    x = "0x"
    if conv == "A":
        text, x = text.upper(), "0X"
    return head + x, text, True


def _sign(negative: bool, flags: str) -> str:
    """C's sign of a signed conversion: ``-`` for a negative value, else ``+`` for the
    ``+`` flag, a space for the space flag (``+`` wins), else none."""
    return "-" if negative else "+" if "+" in flags else " " if " " in flags else ""


def _pad(flags: str, width, head: str, body: str, zero_ok: bool) -> str:
    """``head + body`` padded to ``width`` as C does: left-justified for ``-``, with zeros
    between ``head`` (sign, 0x) and ``body`` for ``0`` where ``zero_ok``, else spaces."""
    w = int(width) if width not in (None, "*") else 0
    n = w - len(head) - len(body)
    if n <= 0:
        return head + body
    if "-" in flags:
        return head + body + " " * n
    if "0" in flags and zero_ok:
        return head + "0" * n + body
    return " " * n + head + body


def _param_u64(m, name, t):
    arr = m.cparams.get(name)
    if arr is None:
        return 0
    return int.from_bytes(arr[t, :8].tobytes(), "little")


def vprintf(m, ins, idx):
    """Execute ``vprintf`` for batch threads ``idx`` (in order), appending to ``m.printed``."""
    fname, aname = ins.srcs[0], ins.srcs[1]
    formats: dict = {}   # format string address -> its text (a constant: read once a batch)
    for t in idx.tolist():
        faddr = _param_u64(m, fname, t)
        fmt = formats.get(faddr)
        if fmt is None:
            fmt = formats[faddr] = _read_str(m, ins, faddr, t)
        base = _param_u64(m, aname, t)
        state = {"off": 0, "buf": b""}

        def fetch(size, kind, t=t, base=base, state=state):
            off = (state["off"] + size - 1) // size * size
            state["off"] = off + size
            buf = state["buf"]
            if off + size > len(buf):   # the argument buffer read in chunks, not per argument
                more = _read(m, ins, base + len(buf), max(_ARG_CHUNK, off + size - len(buf)), t)
                buf = state["buf"] = buf + more
            raw = buf[off:off + size]
            if kind == "f":
                return struct.unpack("<d", raw)[0]
            return int.from_bytes(raw, "little", signed=(kind == "s"))

        text = format_c(fmt, fetch, lambda p, t=t: _read_str(m, ins, p, t))
        m.printed.append(text)
        m.printf_bytes.append(RECORD_HEAD_BYTES + (state["off"] + 7) // 8 * 8)
        if text.strip():
            m.last_printed[t] = text
    for ret in ins.dsts:
        m.cparams[ret] = np.zeros((m.T, 4), np.uint8)


def fifo_overwritten(record_bytes, fifo_bytes: int = PRINTF_FIFO_BYTES) -> int:
    """How many of a launch's first printf calls a GPU's FIFO no longer holds when the
    host reads it: the FIFO is circular and older output is overwritten (CUDA
    Programming Guide, "Formatted Output"), so the newest calls whose records fit in
    ``fifo_bytes`` together are kept and every older one is lost.

    Args:
        record_bytes: bytes of each call's FIFO record, in the order the calls ran.
        fifo_bytes: the FIFO's size (:data:`PRINTF_FIFO_BYTES` unless set otherwise).

    Returns:
        the number of leading calls overwritten (0 when everything fits).
    """
    total = 0
    for k in range(len(record_bytes) - 1, -1, -1):
        total += record_bytes[k]
        if total > fifo_bytes:
            return k + 1
    return 0


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
