"""The kernel corpus every part of warp_lab is tested against.

    from warp_lab.examples import CORPUS, PLANTED_BUGS, get

    ex = get("saxpy")
    args = ex.make_inputs()              # numpy arrays and scalars, fixed seed, small
    before = [a.copy() if hasattr(a, "copy") else a for a in args]
    wl.launch(ex.kernel, inputs=args, **ex.launch(args).kwargs())
    ex.check(before, args)               # AssertionError naming output and element

:data:`CORPUS` holds :class:`Example` records (kernel, inputs, launch,
numpy reference, outputs, tolerance) that together use every feature of the
kernel language; :data:`PLANTED_BUGS` holds :class:`PlantedBug` kernels that
the simulator's memcheck, racecheck, barrier check and instruction budget
must flag. Modules by theme: ``basic`` (indexing, views, grids), ``control``
(loops, branches, device functions, constants, printf), ``ints`` (casts,
integer ops and intrinsics), ``memory`` (shared memory, barriers, atomics),
``warp`` (shuffles and votes), ``science`` (applications), ``mathfuncs``
(math builtins, vectors and matrices), ``planted`` (bugs).
"""

from __future__ import annotations

from warp_lab.examples import basic, control, ints, mathfuncs, memory, science, warp
from warp_lab.examples.example import (EXACT, Example, Launch, PlantedBug, Tolerance,
                                       source_line)
from warp_lab.examples.planted import PLANTED_BUGS

__all__ = ["CORPUS", "PLANTED_BUGS", "Example", "Launch", "PlantedBug", "Tolerance", "EXACT",
           "get", "source_line"]

#: every correct corpus kernel, in a stable order
CORPUS: list[Example] = [*basic.EXAMPLES, *control.EXAMPLES, *ints.EXAMPLES, *memory.EXAMPLES,
                         *warp.EXAMPLES, *science.EXAMPLES, *mathfuncs.EXAMPLES]

_BY_NAME = {e.name: e for e in CORPUS}
_BUGS_BY_NAME = {b.name: b for b in PLANTED_BUGS}
if len(_BY_NAME) != len(CORPUS) or len(_BUGS_BY_NAME) != len(PLANTED_BUGS):
    raise RuntimeError("duplicate example names in warp_lab.examples")


def get(name: str) -> Example | PlantedBug:
    """The corpus example (or planted bug) called ``name``.

    Raises:
        KeyError: no such example; the message lists the names.
    """
    if name in _BY_NAME:
        return _BY_NAME[name]
    if name in _BUGS_BY_NAME:
        return _BUGS_BY_NAME[name]
    raise KeyError(f"no example {name!r}; corpus: {sorted(_BY_NAME)}; "
                   f"planted bugs: {sorted(_BUGS_BY_NAME)}")
