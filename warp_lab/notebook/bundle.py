"""The ``application/vnd.warp-lab.kernel+json`` bundle and the display wrapper.

The bundle is the data of the views (schema in ``docs/decisions/0007-notebook-bundle.md``,
"Notebook bundle"): pane texts, the Python pane's rows (the kernel and its
device functions), the line map with Python lines as string keys, one colour
per Python line, resources, occupancy and heat columns. The JupyterLab
extension renders it; :class:`KernelView` puts it in a display
bundle next to ``text/html`` (the static view, for every other front end)
and ``text/plain``.
"""

from __future__ import annotations

import dataclasses

from warp_lab.compiler.artifact import DIALECT_LABEL
from warp_lab.notebook.highlight import line_colors
from warp_lab.notebook.view_spec import DEFAULT_SHOW, view_description
from warp_lab.notebook.views import cell_label, kernel_html, pane_text, python_pane_lines, \
    python_row_numbers

__all__ = ["MIME_TYPE", "BUNDLE_VERSION", "kernel_bundle", "KernelView", "repr_mimebundle",
           "kernel_text", "live_register_heat", "compiled_kernel_mimebundle"]

MIME_TYPE = "application/vnd.warp-lab.kernel+json"
#: the bundle's schema version; it changes only when an older renderer would misread a
#: bundle: fields added since (``python_rows``) are optional and ignored by older renderers
BUNDLE_VERSION = 1


def _keyed(mapping) -> dict[str, list[int]]:
    return {str(py): [int(x) for x in xs] for py, xs in sorted(mapping.items())}


def _record(obj) -> dict | None:
    if obj is None:
        return None
    if hasattr(obj, "to_dict"):  # analysis.Occupancy knows its JSON form
        return obj.to_dict()
    if dataclasses.is_dataclass(obj):
        out = {}
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            if isinstance(v, (int, float, str, bool)) or v is None:
                out[f.name] = v
            elif isinstance(v, (tuple, list)) and all(isinstance(x, (int, float, str)) for x in v):
                out[f.name] = list(v)
            elif isinstance(v, dict):
                out[f.name] = {str(k): x for k, x in v.items()
                               if isinstance(x, (int, float, str, bool))}
        return out
    if isinstance(obj, dict):
        return dict(obj)
    raise TypeError(f"cannot put a {type(obj).__name__} in the kernel bundle")


def kernel_bundle(ck, *, occupancy=None, heat=None, pane_heat=None, show=DEFAULT_SHOW,
                  diff=None) -> dict:
    """The JSON-able bundle for one compiled kernel.

    Args:
        ck: a :class:`~warp_lab.compiler.artifact.CompiledKernel`.
        occupancy: an occupancy record (dataclass) or dict, or None.
        heat: ``{"instructions": {python line: count}, "live_registers": {...}}``
            or None.
        pane_heat: ``{pane: {column: {pane line: value}}}`` (the SASS pane's
            ``live_registers`` at each instruction's line) or None: a column a
            pane has here is shown per pane line instead of per Python line.

    ``panes.python`` is the kernel's own text from ``first_line`` (all a
    renderer older than ``python_rows`` shows); ``python_rows`` lists the
    ``[file line, text]`` rows of the Python pane as the static view shows
    them (:func:`~warp_lab.notebook.views.python_pane_lines`: the kernel and
    the device functions of its file or cell that produced code in it), with
    ``[None, ""]`` for a gap between parts (shown as ``⋮``). A device function
    of another cell follows under a ``[None, "# In[3]"]`` row; its rows' keys
    are the source map's line keys (:meth:`~warp_lab.compiler.source_map.SourceMap.key`:
    the kernel's own lines are their numbers, another cell's are past them; the
    extension only compares them), and then ``python_row_numbers`` gives the number to
    show for each row (its own cell's line; None for gap and label rows).

    Returns:
        a dict following the schema (``version`` :data:`BUNDLE_VERSION`).
    """
    def pane(attr, missing_key):
        text = pane_text(ck, attr)
        if text is None:
            return {"text": None, "missing": ck.missing.get(missing_key, "not available")}
        return {"text": text}

    sm = ck.source_map
    cuda = getattr(ck, "language", "python") == "cuda"
    pane_rows = python_pane_lines(ck)
    rows = [[n, text] for n, text in pane_rows]  # what the static view shows
    bundle = {
        "version": BUNDLE_VERSION,
        "name": ck.name,
        "arch": ck.options.arch,
        "opt": ck.options.opt,
        # (the extension shows flags after -O: a Warp-namespace kernel says its dialect there)
        "flags": list(ck.options.flags) + ([DIALECT_LABEL] if ck.dialect == "warp" else []),
        "panes": {
            "python": {"text": ck.source.text, "first_line": ck.source.first_line,
                       "filename": cell_label(ck.source.filename)},
            "llvm": pane("llvm_ir_optimized", "llvm_ir_optimized") if not cuda else
            {"text": None, "missing": ck.missing.get("llvm_ir", "")},
            "llvm_unoptimized": pane("llvm_ir", "llvm_ir") if not cuda else
            {"text": None, "missing": ck.missing.get("llvm_ir", "")},
            "ptx": pane("ptx", "ptx"),
            "sass": pane("sass", "sass"),
        },
        "python_rows": rows,
        "line_map": {pane: _keyed(sm.rows_of(pane)) for pane in ("llvm", "ptx", "sass")},
        "colors": {str(py): c for py, c in line_colors(sm.keys).items()},
        "resources": _record(ck.resources),
        "occupancy": _record(occupancy),
        "heat": {name: {str(k): v for k, v in col.items()} for name, col in (heat or {}).items()},
        # added without a version change: older renderers ignore it and show every pane
        "view": view_description(ck, show=show, occupancy=occupancy, diff=diff),
    }
    if cuda:   # the source pane holds CUDA C++ (a renderer picks its highlighting by it)
        bundle["panes"]["python"]["language"] = "cuda"
        bundle["language"] = "cuda"
    if pane_heat:  # added without a version change: older renderers ignore it
        bundle["pane_heat"] = {pane: {name: {str(k): v for k, v in col.items()}
                                      for name, col in cols.items()}
                               for pane, cols in pane_heat.items()}
    shown = python_row_numbers(ck, pane_rows)
    if shown != [n for n, _ in pane_rows]:  # a device function of another cell: its numbers
        bundle["python_row_numbers"] = shown
    return bundle


def kernel_text(ck, occupancy=None) -> str:
    """The ``text/plain`` form: one line of identity and resources."""
    text = repr(ck)
    r = ck.resources
    if r is not None and r.spills:
        text += f" (spills: {r.spill_stores} B stored, {r.spill_loads} B loaded)"
    occ = getattr(occupancy, "occupancy", None)
    if occ is not None:
        text += f", occupancy {100 * occ:.0f}%"
    return text


def repr_mimebundle(ck, include=None, exclude=None, **view_options) -> dict:
    """What ``CompiledKernel._repr_mimebundle_`` would return.

    Args:
        ck: the compiled kernel.
        include, exclude: MIME types to keep or drop (IPython's protocol).
        **view_options: passed to :func:`~warp_lab.notebook.views.kernel_html`
            (``show``, ``heat``, ``pane_heat``, ``occupancy``, ``diff``, ``extra``) and
            :func:`kernel_bundle` (the same but ``extra``).
    """
    occ = view_options.get("occupancy")
    data = {
        "text/plain": kernel_text(ck, occ),
        "text/html": kernel_html(ck, **view_options),
        MIME_TYPE: kernel_bundle(ck, occupancy=occ, heat=view_options.get("heat"),
                                 pane_heat=view_options.get("pane_heat"),
                                 show=view_options.get("show", DEFAULT_SHOW), diff=view_options.get("diff")),
    }
    if include:
        data = {k: v for k, v in data.items() if k in include}
    if exclude:
        data = {k: v for k, v in data.items() if k not in exclude}
    return data


def live_register_heat(ck) -> dict:
    """The view options of the live-register columns, as the ``%%warp_kernel`` view shows
    them: ``{"heat": {"live_registers": {python line: n}}, "pane_heat": {"sass":
    {"live_registers": {SASS pane line: n}}}}`` from
    :func:`~warp_lab.notebook.heat.register_heat` (nvdisasm's register life ranges: the
    compile's own when it kept them, else one nvdisasm run of 0.4-0.7 s); ``{}`` when the
    kernel has no SASS (an arch whose nvdisasm is missing) or the analysis cannot run."""
    from warp_lab.notebook.heat import register_heat

    regs = register_heat(ck)
    if regs is None:
        return {}
    return {"heat": {"live_registers": regs[0]}, "pane_heat": {"sass": {"live_registers": regs[1]}}}


def compiled_kernel_mimebundle(ck, include=None, exclude=None) -> dict:
    """What a notebook shows for a :class:`~warp_lab.compiler.artifact.CompiledKernel`
    that is a cell's value (``ck = wl.compile(...)`` then ``ck``; registered by
    ``%load_ext warp_lab``): the panes and resource card of the ``%%warp_kernel`` view
    with its ``live regs`` columns beside the Python and SASS panes
    (:func:`live_register_heat`)."""
    return repr_mimebundle(ck, include, exclude, **live_register_heat(ck))


class KernelView:
    """A compiled kernel as a notebook displays it (rich output of ``%%warp_kernel``).

    Args:
        ck: the :class:`~warp_lab.compiler.artifact.CompiledKernel`.
        **view_options: see :func:`repr_mimebundle`.

    Attributes:
        compiled: the kernel record.
    """

    def __init__(self, ck, **view_options):
        self.compiled = ck
        self.view_options = view_options

    def _repr_mimebundle_(self, include=None, exclude=None):
        return repr_mimebundle(self.compiled, include, exclude, **self.view_options)

    def __repr__(self) -> str:
        return kernel_text(self.compiled, self.view_options.get("occupancy"))
