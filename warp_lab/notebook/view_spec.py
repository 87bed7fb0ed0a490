"""The description of one kernel view, built once here and rendered by every front end.

:func:`view_description` says what a ``%%warp_kernel``/``%%cuda_kernel`` cell asked to
see: which panes, in which order, with which titles and highlighters (from the pane
table, :mod:`warp_lab.notebook.panes`), the resource card's facts, and the ``--diff
previous`` table. The bundle (:func:`~warp_lab.notebook.bundle.kernel_bundle`) carries
it as ``view``; the JupyterLab extension (``extension/src/view.ts``) renders it, and the
static HTML view (:func:`~warp_lab.notebook.views.kernel_html`) reads the same table and
rows, so ``--show``, ``--hide`` and ``--diff`` mean the same thing live and exported.
"""

from __future__ import annotations

from warp_lab.notebook.panes import SHOW_NAMES, panes_for
from warp_lab.notebook.views import resource_rows, resource_warnings

__all__ = ["DEFAULT_SHOW", "view_description"]

#: what a view shows when no ``--show`` says otherwise (the magics' default)
DEFAULT_SHOW = (*SHOW_NAMES, "resources")


def view_description(ck, *, show=DEFAULT_SHOW, occupancy=None, diff=None) -> dict:
    """The ``view`` record of the kernel bundle.

    Args:
        ck: a :class:`~warp_lab.compiler.artifact.CompiledKernel`.
        show: the ``--show`` names left after ``--hide`` (``source``, ``llvm``, ``ptx``,
            ``sass``, ``resources``, ``occupancy``), in the order asked.
        occupancy: the occupancy record the resource card shows, or None.
        diff: ``--diff previous``: a :class:`~warp_lab.notebook.diff.KernelDiff`, a
            string saying why there is none (no earlier compile of the kernel), or None
            (no diff asked for).

    Returns:
        ``{"panes": [{"key", "slot", "title", "language", "variant_of", "open",
        "absent"}, ...], "resources": {"arch", "rows": [[label, value]], "warnings"}
        or {"missing": why} or None (not shown), "diff": record, {"missing": why} or
        None}``: ``slot`` names the bundle's ``panes`` entry holding the pane's text,
        ``absent`` why a pane this front end lacks is empty (else None).
    """
    front_end = getattr(ck, "language", "python")
    panes = [{"key": p.key, "slot": p.slot, "title": p.title, "language": p.language,
              "variant_of": p.variant_of, "open": p.opened,
              "absent": p.absent_reason(front_end)} for p in panes_for(front_end, show)]
    resources = None
    if "resources" in show:
        rows = resource_rows(ck, occupancy)
        resources = {"missing": ck.missing.get("resources", "ptxas did not run")} \
            if rows is None else {"arch": ck.resources.arch, "rows": [list(r) for r in rows],
                                  "warnings": resource_warnings(ck.resources, occupancy)}
    record = None
    if isinstance(diff, str):
        record = {"missing": diff}
    elif diff is not None:
        from warp_lab.notebook.diff import diff_record
        record = diff_record(diff)
    return {"panes": panes, "resources": resources, "diff": record}
