"""The occupancy widget: arch, block size and dynamic shared memory, answered live.

The widget's traits are its contract (ipywidgets' synced ``value`` traits
of the child controls): setting ``block_size.value`` in the model, from the
front end or from Python, recomputes :attr:`OccupancyWidget.occupancy` with
:func:`warp_lab.analysis.occupancy` (the model that equals the CUDA
toolkit's ``cuda_occupancy.h``) and redraws the summary and the chart. No
number is computed here: the widget only asks the occupancy model.

For static renderers (nbconvert, a notebook reopened without a kernel) the
widget's ``_repr_mimebundle_`` adds a ``text/html`` fallback with the
summary and the chart as a PNG. JupyterLab itself prefers the widget view for a
trusted output and shows "model not found" once the kernel that made it is gone;
the extension's ``widgetfallback.ts`` shows this card there instead.
"""

from __future__ import annotations

import html
import numbers

import ipywidgets as W

from warp_lab.analysis import ARCHS, arch_properties, launch_dynamic_shared_optin, \
    occupancy, occupancy_curve
from warp_lab.notebook.charts import figure_img_html, figure_png, occupancy_chart
from warp_lab.analysis.occupancy import FACTOR_NAMES, factor_list
# the register heat columns lived here; their module imports no ipywidgets (first cells)
from warp_lab.notebook.heat import register_heat  # noqa: F401  (re-exported)

__all__ = ["OccupancyWidget", "occupancy_widget", "occupancy_summary_html",
           "register_heat"]

def occupancy_summary_html(occ) -> str:
    """A short escaped HTML table of one :class:`~warp_lab.analysis.Occupancy`.

    The block size row is the threads per block and the whole warps they take:
    ``cuda_occupancy.h`` counts ``ceil(block / warpSize)`` warps per block for the
    warp-slot and register limits, so 48 threads take what 64 do.

    The shared memory row is what a block takes from the SM, with where it comes
    from (:meth:`~warp_lab.analysis.SharedAllocation.describe`: static + dynamic + the
    1 KB CUDA reserves per block from sm_80 on, ``cudaDevAttrReservedSharedMemoryPerBlock``,
    rounded up to the allocation unit, as ``cuda_occupancy.h`` counts it), so a kernel
    with 0 bytes of static shared memory reads "1024 bytes = 0 static + 0 dynamic +
    1024 reserved by CUDA per block (sm_80+)", as the resource card does.

    The "blocks per SM each limit allows" row names only the factors that set a limit
    (:attr:`~warp_lab.analysis.Occupancy.limits` not None, the header's ``blockLimit*``
    not INT_MAX), in :data:`~warp_lab.analysis.occupancy.FACTOR_NAMES`' words; when some
    set none, a collapsed ``<details class='wl-occ-limits'>`` below the table lists all
    six, those as "no limit here".
    """
    block, warps = occ.block_size, -(-occ.block_size // 32)
    threads = f"{block} thread{'' if block == 1 else 's'} = {warps} warp{'' if warps == 1 else 's'}"
    if block % 32:  # cuda_occupancy.h: warps per block = ceil(block / warpSize)
        threads += (f" (the last one {block % 32} of 32 lanes: warp slots and registers are "
                    f"taken per whole warp, as for {32 * warps})")
    # only the factors that limit this kernel at all: one that sets no limit (INT_MAX in
    # cuda_occupancy.h: barriers before sm_90 or unused, virtual resources unused, ...) is
    # noise in the row; the collapsed list of every factor below the table says them
    limits = ", ".join(f"{FACTOR_NAMES.get(f, f)}: {v}" for f, v in occ.limits.items()
                       if v is not None) or "none"
    rows = [("block size", threads),
            ("occupancy", f"{occ.occupancy:.0%} ({occ.active_warps_per_sm} of "
                          f"{occ.max_warps_per_sm} warps per SM)"),
            ("active blocks / SM", str(occ.active_blocks_per_sm)),
            ("limited by", factor_list(occ.limiters) or "—"),
            ("blocks per SM each limit allows", limits),
            ("registers / block (allocated)", str(occ.allocated_registers_per_block)),
            ("shared memory / block (allocated)", occ.shared_allocation.describe())]
    body = "".join(f"<tr><th style='text-align:left;padding-right:8px'>{html.escape(k)}</th>"
                   f"<td style='text-align:left'>{html.escape(v)}</td></tr>" for k, v in rows)
    warn = ""
    if occ.active_blocks_per_sm == 0:
        warn = "<div style='color:#b00'>⚠ this configuration cannot launch</div>"
    elif "registers" in occ.limiters and occ.occupancy < 1:
        warn = ("<div style='color:#b35900'>⚠ limited by registers: fewer registers per "
                "thread (or --maxrregcount) would fit more blocks</div>")
    every = ""
    if any(v is None for v in occ.limits.values()):
        items = "".join(f"<li>{html.escape(FACTOR_NAMES.get(f, f))}: "
                        f"{v if v is not None else 'no limit here'}</li>"
                        for f, v in occ.limits.items())
        every = (f"<details class='wl-occ-limits'><summary>blocks per SM each of the "
                 f"{len(occ.limits)} factors allows</summary><ul>{items}</ul></details>")
    return f"<table>{body}</table>{every}{warn}"


def _whole_warps(threads: int) -> int:
    """``threads`` rounded up to whole warps of 32 (at least one): the slider's step."""
    return max(32, -(-threads // 32) * 32)


def _attached_gpu():
    """The first usable CUDA GPU's DeviceInfo, or None (no driver, no GPU)."""
    from warp_lab.runtime.device import cuda_devices

    devices, _ = cuda_devices()
    return devices[0] if devices else None


class OccupancyWidget(W.VBox):
    """Interactive occupancy calculator for one compiled kernel.

    Args:
        kernel: a :class:`~warp_lab.compiler.artifact.CompiledKernel` or
            :class:`~warp_lab.compiler.artifact.Resources` (registers per
            thread, static shared bytes, barriers).
        name: the kernel's name for the title; default the CompiledKernel's ``name``.
            A Resources record carries none: without ``name`` the title names no kernel
            (it once said "kernel", as if that were the name).
        arch: initial architecture (default: the attached GPU's, else the one
            compiled for); the dropdown marks the attached GPU's arch.
        block_size: initial threads per block, 1..1024 (a launch's own: any count, not
            only whole warps).
        dynamic_shared_mem: initial dynamic shared memory, bytes per block.

    Raises:
        ValueError: ``kernel`` has no resources (ptxas failed: the reason is
            in the message) or is neither a CompiledKernel nor Resources; or
            ``dynamic_shared_mem`` is negative or above the arch's opt-in limit
            per block (``sharedMemPerBlockOptin``); or ``block_size`` is not 1..1024.

    Attributes:
        heading: HTML widget: "Occupancy of <name>" (escaped), the registers and static
            shared memory; :meth:`static_html` starts with the same text.
        arch, block_size, dynamic_shared_mem: the controls (Dropdown,
            BoundedIntText 1..1024 threads, BoundedIntText bytes); their ``value`` traits
            drive the rest.
        block_slider: IntSlider in warp steps (32..1024 by 32): sliding it sets
            ``block_size``; a ``block_size`` between two steps (a launch's 48 threads)
            puts it on the whole warps that size takes (64) and is shown as it is.
        occupancy: the current :class:`~warp_lab.analysis.Occupancy`.
        summary: HTML widget with the numbers and the limiting factor.
        chart: Image widget with occupancy vs block size (PNG).
    """

    def __init__(self, kernel, arch: str | None = None, block_size: int = 256,
                 dynamic_shared_mem: int = 0, name: str | None = None):
        self._kernel = kernel
        resources = getattr(kernel, "resources", kernel)
        if resources is None or not hasattr(resources, "registers"):
            why = (getattr(kernel, "missing", None) or {}).get("resources", "")
            raise ValueError(f"occupancy needs a CompiledKernel with resources (ptxas -v) or a "
                             f"Resources record, got {type(kernel).__name__}"
                             + (f"; ptxas gave none: {why.splitlines()[0]}" if why else ""))
        default_arch = arch or getattr(getattr(kernel, "options", None), "arch", None) \
            or resources.arch
        gpu = _attached_gpu()
        options = [(f"{p.name} (attached: {gpu.name})" if gpu and gpu.arch == p.name else p.name,
                    p.name) for p in ARCHS.values()]
        if gpu is not None and arch is None:
            default_arch = gpu.arch  # the attached GPU is the one the user will launch on
        self._compiled_arch = arch_properties(default_arch).name
        most = arch_properties(default_arch).shared_mem_per_block_optin
        if not 0 <= dynamic_shared_mem <= most:  # the box below would clamp it silently
            raise ValueError(f"dynamic_shared_mem={dynamic_shared_mem} bytes: "
                             f"{self._compiled_arch} allows 0..{most} bytes per block")
        self.arch = W.Dropdown(options=options, value=self._compiled_arch, description="arch")
        if not (isinstance(block_size, numbers.Integral) and not isinstance(block_size, bool)
                and 1 <= block_size <= 1024):  # CUDA Programming Guide, compute capabilities
            raise ValueError(f"block_size={block_size!r}: a block has 1..1024 threads")
        block_size = int(block_size)
        # the launch's own block size, shown and computed as it is; the slider beside it
        # steps in whole warps (it moved a launch's 48 threads to 64, and 1 to 32)
        self.block_size = W.BoundedIntText(value=block_size, min=1, max=1024, step=1,
                                           description="block size",
                                           layout=W.Layout(width="170px"))
        self.block_slider = W.IntSlider(value=_whole_warps(block_size), min=32, max=1024,
                                        step=32, readout=False, continuous_update=False,
                                        description="", layout=W.Layout(width="220px"))
        self.dynamic_shared_mem = W.BoundedIntText(
            value=dynamic_shared_mem, min=0, max=arch_properties(default_arch).shared_mem_per_block_optin,
            step=1024, description="dyn. shared")
        self.summary = W.HTML()
        # at its own aspect ratio: in the HBox (align-items: stretch) the image took the
        # summary's height (a 576x288 chart shown 576x394); flex-start and height auto keep
        # its PNG's shape, max-width lets it shrink (proportionally) in a narrow output
        self.chart = W.Image(format="png", layout=W.Layout(
            align_self="flex-start", height="auto", max_width="100%", object_fit="contain"))
        self.occupancy = None
        self._curve = None
        name = name if name is not None else getattr(kernel, "name", None)
        self._title_html = (
            (f"<b>Occupancy of {html.escape(name)}</b>" if name else "<b>Occupancy</b>")
            + f" ({resources.registers} registers/thread, {resources.shared} bytes "
              f"static shared)")
        self.heading = W.HTML(self._title_html)
        super().__init__([self.heading,
                          W.HBox([self.arch, self.block_size, self.block_slider,
                                  self.dynamic_shared_mem]),
                          # the chart goes under the summary where both do not fit
                          W.HBox([self.summary, self.chart],
                                 layout=W.Layout(flex_flow="row wrap"))])
        self.add_class("wl-occupancy")  # what tests and tools/view_screenshots.py look for
        for control in (self.arch, self.block_size, self.dynamic_shared_mem):
            control.observe(self._update, names="value")
        self.block_slider.observe(self._slid, names="value")
        self._update()

    def _slid(self, change):
        """The slider moved: its whole-warp size becomes the block size, unless it only
        followed a block size that takes the same warps (48 puts it on 64)."""
        if _whole_warps(self.block_size.value) != change["new"]:
            self.block_size.value = change["new"]

    def _usage(self):
        r = getattr(self._kernel, "resources", self._kernel)
        return dict(registers=r.registers, shared=r.shared, barriers=r.barriers)

    def _update(self, change=None):
        props = arch_properties(self.arch.value)
        self.dynamic_shared_mem.max = props.shared_mem_per_block_optin
        dyn = self.dynamic_shared_mem.value
        usage = self._usage()
        usage["max_dynamic_shared_mem"] = launch_dynamic_shared_optin(props, dyn,
                                                                      usage["shared"])
        self.block_slider.value = _whole_warps(self.block_size.value)
        self.occupancy = occupancy(None, props, self.block_size.value, dyn, **usage)
        if change is None or change["owner"] is not self.block_size:
            # the curve depends on arch and shared memory, not on the marked block size
            self._curve = occupancy_curve(None, props, dynamic_shared_mem=dyn, **usage)
        self.summary.value = occupancy_summary_html(self.occupancy)
        self.chart.value = figure_png(occupancy_chart(self._curve, self.block_size.value,
                                                      title=props.name, current=self.occupancy))

    def static_html(self) -> str:
        """The summary and the chart as static HTML (no widget manager needed). Its
        ``data-wl-static`` mark lets the JupyterLab extension show it where the widget's
        model is gone (a notebook reopened after a kernel restart)."""
        fig = occupancy_chart(self._curve, self.block_size.value, title=self.arch.value,
                              current=self.occupancy)
        return (f"<div data-wl-static='occupancy'><div>{self._title_html}</div>"
                f"{occupancy_summary_html(self.occupancy)}"
                f"{figure_img_html(fig, 'occupancy vs block size')}</div>")

    def _repr_mimebundle_(self, **kwargs):
        data = super()._repr_mimebundle_(**kwargs) or {}
        data = dict(data)
        data["text/html"] = self.static_html()
        data["text/plain"] = repr(self.occupancy)
        return data


def occupancy_widget(kernel, arch: str | None = None, block_size: int = 256,
                     dynamic_shared_mem: int = 0, name: str | None = None) -> OccupancyWidget:
    """Build an :class:`OccupancyWidget` (what ``--show occupancy`` displays)."""
    return OccupancyWidget(kernel, arch, block_size, dynamic_shared_mem, name)
