"""The panes of a kernel view: one record per pane, read by every renderer.

A pane is a stage product (STYLE.md §9, Triton's ``CompiledKernel.asm[ext]``): the
kernel's source, the LLVM IR, the PTX, the SASS. :data:`PANES` holds one
:class:`PaneSpec` per pane in the order the view shows them, and everything that
names a pane reads it: the magics' ``--show``/``--hide`` choices (:data:`SHOW_NAMES`),
the static HTML view (:mod:`warp_lab.notebook.views`), the bundle's ``view``
description (:mod:`warp_lab.notebook.bundle`), which the JupyterLab extension renders
(``extension/src/view.ts`` spells no pane list of its own), and the terminal.

A pane a front end does not have is still listed for it, with the reason
(:meth:`PaneSpec.absent_reason`): a CUDA C++ kernel's strip says that NVRTC does not
expose its NVVM IR instead of leaving the LLVM IR pane out without a word.
"""

from __future__ import annotations

import dataclasses

__all__ = ["PaneSpec", "PANES", "FRONT_ENDS", "SHOW_NAMES", "pane_spec", "panes_for"]

#: the front ends a kernel comes from (``CompiledKernel.language``): warp_lab's Python
#: (``@wl.kernel``, ``%%warp_kernel``, the Warp namespace: through llvmlite's NVPTX back
#: end) and CUDA C++ (``wl.cuda_kernel``, ``%%cuda_kernel``: through NVRTC)
FRONT_ENDS = ("python", "cuda")


@dataclasses.dataclass(frozen=True)
class PaneSpec:
    """One pane of the kernel view.

    Attributes:
        key: the pane's name (``"python"``, ``"cuda"``, ``"llvm"``, ...), what the
            bundle's ``view.panes`` entries and the HTML's ``data-pane`` say.
        slot: the bundle's ``panes`` entry holding its text, which the line map's
            columns are named after: a CUDA C++ source pane fills the ``"python"``
            slot (its lines are the rows every other pane maps to).
        title: the pane's header.
        language: the highlighter's name (:func:`~warp_lab.notebook.lexers.get_lexer`,
            the extension's ``PANE_TOKENIZERS``).
        show: the ``--show``/``--hide`` name that selects it (``"source"`` for both
            source panes).
        attr: the :class:`~warp_lab.compiler.artifact.CompiledKernel` field holding its
            text; None for a source pane (``ck.source``).
        line_map: the :class:`~warp_lab.compiler.artifact.LineMap` field mapping Python
            lines to its lines (``"llvm"``, ``"ptx"``, ``"sass_lines"``); None for a
            source pane and for the unoptimised IR (the map describes the optimised one).
        front_ends: the front ends (:data:`FRONT_ENDS`) whose kernels have it.
        absent: front end -> why a kernel of it has no such pane (the pane's strip says
            so); a front end in neither ``front_ends`` nor ``absent`` never lists it (a
            Python kernel shows no CUDA C++ pane).
        opened: whether the static view opens it (the unoptimised IR starts closed).
        variant_of: the pane it is another text of (the unoptimised IR: the LLVM IR
            pane's ``-O0`` toggle in the extension, a closed pane beside it in the static
            view); its lines are not in the line map.
    """

    key: str
    slot: str
    title: str
    language: str
    show: str
    attr: str | None
    line_map: str | None
    front_ends: tuple[str, ...]
    absent: tuple[tuple[str, str], ...] = ()
    opened: bool = True
    variant_of: str | None = None

    def absent_reason(self, front_end: str) -> str | None:
        """Why a kernel of ``front_end`` has no such pane, or None where it has it or
        never lists it."""
        return dict(self.absent).get(front_end)

    def listed_for(self, front_end: str) -> bool:
        """Whether a kernel of ``front_end`` lists the pane (shown, or absent with a reason)."""
        return front_end in self.front_ends or self.absent_reason(front_end) is not None


#: NVRTC compiles CUDA C++ to PTX inside libnvvm and hands back only the PTX
#: (``nvrtcGetPTX``); its NVVM IR is not part of the API, so there is no IR to show
_NO_NVVM_IR = ("NVRTC does not expose its NVVM IR: a CUDA C++ kernel has CUDA C++, "
               "PTX and SASS")

#: the panes, in the order the view shows them (left to right, then row by row)
PANES: tuple[PaneSpec, ...] = (
    PaneSpec("python", "python", "Python", "python", "source", None, None, ("python",)),
    PaneSpec("cuda", "python", "CUDA C++", "cuda", "source", None, None, ("cuda",)),
    PaneSpec("llvm", "llvm", "LLVM IR (optimised)", "llvm", "llvm", "llvm_ir_optimized", "llvm",
             ("python",), (("cuda", _NO_NVVM_IR),)),
    PaneSpec("llvm_unoptimized", "llvm_unoptimized", "LLVM IR (unoptimised)", "llvm", "llvm",
             "llvm_ir", None, ("python",), opened=False, variant_of="llvm"),
    PaneSpec("ptx", "ptx", "PTX", "ptx", "ptx", "ptx", "ptx", FRONT_ENDS),
    PaneSpec("sass", "sass", "SASS", "sass", "sass", "sass", "sass_lines", FRONT_ENDS),
)

#: the ``--show``/``--hide`` names of panes, in view order
SHOW_NAMES: tuple[str, ...] = tuple(dict.fromkeys(p.show for p in PANES))

_BY_KEY = {p.key: p for p in PANES}


def pane_spec(key: str) -> PaneSpec:
    """The record of pane ``key``.

    Raises:
        KeyError: no pane is called ``key`` (the message lists the panes).
    """
    try:
        return _BY_KEY[key]
    except KeyError:
        raise KeyError(f"no pane {key!r}; the panes are {', '.join(_BY_KEY)}") from None


def panes_for(front_end: str, show=SHOW_NAMES) -> list[PaneSpec]:
    """The panes a kernel of ``front_end`` lists for the ``--show`` names ``show``, in the
    order of ``show`` (``--show ptx,source`` puts the PTX first; the table's order within
    one name), absent ones included (their :meth:`~PaneSpec.absent_reason` says why).

    Args:
        front_end: ``"python"`` or ``"cuda"`` (``CompiledKernel.language``).
        show: ``--show`` names (others, such as ``resources``, select no pane).

    Raises:
        ValueError: ``front_end`` is not one of :data:`FRONT_ENDS`.
    """
    if front_end not in FRONT_ENDS:
        raise ValueError(f"unknown front end {front_end!r}; choose from {', '.join(FRONT_ENDS)}")
    return [p for name in dict.fromkeys(show) for p in PANES
            if p.show == name and p.listed_for(front_end)]
