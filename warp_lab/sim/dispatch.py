"""Opcode → semantics dispatch: builds and caches each instruction's closure.

The tables live next to their semantics (:mod:`~warp_lab.sim.alu`,
:mod:`~warp_lab.sim.memops`, :mod:`~warp_lab.sim.control`,
:mod:`~warp_lab.sim.sync`); this module only looks the opcode up, classifies
the instruction for the metrics, and turns an unknown opcode into a
:class:`~warp_lab.errors.SimulatorError` naming it and its PTX line.
"""

from __future__ import annotations

from warp_lab.errors import SimulatorError
from warp_lab.sim import packed_half
from warp_lab.sim.alu import BUILDERS as ALU
from warp_lab.sim.dot_int import BUILDERS as DOT
from warp_lab.sim.control import CONTROL
from warp_lab.sim.memops import MEMORY
from warp_lab.sim.result import instruction_class
from warp_lab.sim.sync import SYNC, WARP

__all__ = ["build", "implemented_opcodes"]

#: instructions that only move bits, so packed half types pass through them unchanged
_BIT_MOVES = {"mov", "ld", "ldu", "st", "shfl", "selp", "prmt", "and", "or", "xor", "not"}

_TABLES = ((CONTROL, "control"), (SYNC, "control"), (MEMORY, None), (WARP, None), (ALU, None),
           (DOT, None))


def implemented_opcodes() -> list[str]:
    """Sorted base opcodes the simulator executes."""
    return sorted({op for table, _ in _TABLES for op in table})


def build(ins, mod):
    """Build (once) and return the semantics closure of ``ins``.

    Raises:
        SimulatorError: the opcode (or a modifier combination) is not implemented;
            the message names the opcode and the PTX line.
    """
    packed = set(ins.types) & {"f16x2", "bf16", "bf16x2"}
    if packed and ins.op not in _BIT_MOVES and packed_half.handles(ins):
        return _finish(ins, packed_half.BUILDERS[ins.op], mod, None)
    if packed and ins.op not in _BIT_MOVES:
        raise SimulatorError(f"PTX line {ins.line}: {ins.op} on .{sorted(packed)[0]} values is "
                             f"not implemented by the simulator ({ins.text})", ptx_line=ins.line)
    for table, klass in _TABLES:
        builder = table.get(ins.op)
        if builder is not None:
            break
    else:
        raise SimulatorError(f"PTX line {ins.line}: opcode {ins.op!r} is not implemented by the "
                             f"simulator ({ins.text})", ptx_line=ins.line)
    return _finish(ins, builder, mod, klass)


def _finish(ins, builder, mod, klass):
    """``builder(ins, mod)`` as ``ins``'s closure, its failures a :class:`SimulatorError`."""
    try:
        fn = builder(ins, mod)
    except SimulatorError:
        raise
    except (KeyError, IndexError, ValueError, TypeError, StopIteration) as exc:
        raise SimulatorError(f"PTX line {ins.line}: cannot execute {ins.text!r} "
                             f"({type(exc).__name__}: {exc})", ptx_line=ins.line) from None
    ins.klass = klass or instruction_class(ins)
    ins.exec = fn
    return fn
