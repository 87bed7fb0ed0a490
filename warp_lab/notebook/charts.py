"""Matplotlib charts of occupancy and launch metrics.

Each function draws into a fresh :class:`matplotlib.figure.Figure` (the
object-oriented API, never ``pyplot``'s global state, so nothing leaks into
the user's own plots) and returns it; :func:`figure_png` turns a figure into
PNG bytes for widgets and static HTML.

The charts are drawn for both of JupyterLab's themes: a transparent background
(the PNG's alpha channel is 0 outside the marks) and text, ticks, spines and
the main curve in :data:`NEUTRAL`, a mid grey readable on white and on
JupyterLab's dark-theme backgrounds (#111, #212121); a white-on-white or
black-on-black chart was what a plain matplotlib PNG gave in the dark theme.
"""

from __future__ import annotations

import base64
import io
from typing import Mapping, Sequence

from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import EngFormatter, MaxNLocator

__all__ = ["occupancy_chart", "simt_histogram", "instruction_mix_chart", "time_distribution",
           "figure_png", "figure_img_html", "LIMIT_STYLES", "NEUTRAL"]

#: text, axes and main-curve colour: mid grey, WCAG 2 contrast >= 3:1 (large text, graphics)
#: on JupyterLab's light and dark backgrounds: 3.9:1 on #fff, 4.8:1 on #111, 4.1:1 on #212121
NEUTRAL = "#808080"

#: occupancy factor -> (label, colour) for the limit lines
LIMIT_STYLES = {
    "warps": ("warp slots", "#4363d8"),
    "registers": ("registers", "#e6194b"),
    "shared_memory": ("shared memory", "#3cb44b"),
    "blocks": ("blocks per SM", "#f58231"),
    "barriers": ("barriers", "#911eb4"),
}


def _limit_occupancy(occ, factor: str) -> float | None:
    """The occupancy ``factor`` alone would allow (its block limit times warps per block)."""
    blocks = occ.limits.get(factor)
    if blocks is None:
        return None
    warps_per_block = -(-occ.block_size // 32)
    return min(blocks * warps_per_block, occ.max_warps_per_sm) / occ.max_warps_per_sm


def occupancy_chart(curve: Sequence, current_block_size: int | None = None,
                    title: str = "", current=None) -> Figure:
    """Occupancy against block size, each resource's limit drawn, the current choice marked.

    Args:
        curve: :class:`~warp_lab.analysis.Occupancy` records in block-size
            order (from :func:`~warp_lab.analysis.occupancy_curve`).
        current_block_size: block size to mark (threads), or None.
        title: figure title.
        current: the :class:`~warp_lab.analysis.Occupancy` at ``current_block_size``,
            for a size the curve does not hold (a launch's 48 threads); by default
            the curve's own record at that size, when it has one.

    Returns:
        a Figure (7.2 x 3.2 inches; 648 x 288 pixels at :func:`figure_png`'s 90 dpi) with
        occupancy in percent on the y axis and the legend outside the axes, on the right
        (inside, at "lower right", it covered the curves of small block sizes).
    """
    fig = Figure(figsize=(7.2, 3.2), layout="constrained")
    ax = fig.add_subplot()
    sizes = [o.block_size for o in curve]
    ax.plot(sizes, [100 * o.occupancy for o in curve], color=NEUTRAL, lw=2.5,
            label="occupancy", drawstyle="steps-mid")
    for factor, (label, color) in LIMIT_STYLES.items():
        ys = [_limit_occupancy(o, factor) for o in curve]
        if all(y is None or y >= 1.0 for y in ys):
            continue  # never below 100%: a limit that never bites only clutters the chart
        ax.plot(sizes, [100 * y if y is not None else float("nan") for y in ys], ls="--",
                color=color, lw=1, label=f"{label} limit", drawstyle="steps-mid")
    if current_block_size is not None:
        current = [current] if current is not None else \
            [o for o in curve if o.block_size == current_block_size]
        ax.axvline(current_block_size, color="#888", lw=1)
        if current:
            ax.plot([current_block_size], [100 * current[0].occupancy], "o", color="#d33",
                    ms=8, label=f"block {current_block_size}: {current[0].occupancy:.0%}")
    ax.set_xlabel("threads per block")
    ax.set_ylabel("occupancy (%)")
    ax.set_ylim(0, 105)
    ax.set_xlim(0, max(sizes, default=1024) + 32)
    if title:
        ax.set_title(title)
    # "outside": constrained layout gives the legend its own column beside the axes
    fig.legend(fontsize=7, loc="outside right upper")
    ax.grid(alpha=0.3)
    return fig


def simt_histogram(efficiencies: Sequence[float], title: str = "SIMT efficiency per warp") -> Figure:
    """Histogram of per-warp SIMT efficiency (active lanes / 32 per issued instruction, 0..1)."""
    fig = Figure(figsize=(4.8, 2.6), layout="constrained")
    ax = fig.add_subplot()
    ax.hist([100 * float(e) for e in efficiencies], bins=20, range=(0, 100), color="#4363d8")
    ax.set_xlabel("SIMT efficiency (%)")
    ax.set_ylabel("warps")
    ax.set_title(title, fontsize=9)
    return fig


def instruction_mix_chart(mix: Mapping[str, int], title: str = "instruction mix") -> Figure:
    """Horizontal bars: warp instructions executed per class (arithmetic, memory, ...)."""
    # 1.2 in for the title, tick labels and x label: less collapses the axes with one bar
    fig = Figure(figsize=(4.8, 1.2 + 0.3 * max(len(mix), 1)), layout="constrained")
    ax = fig.add_subplot()
    names = list(mix)
    ax.barh(names, [mix[n] for n in names], color="#3cb44b")
    ax.invert_yaxis()
    ax.xaxis.set_major_locator(MaxNLocator(4))
    ax.xaxis.set_major_formatter(EngFormatter(sep=""))
    ax.set_xlabel("thread-instructions")
    ax.set_title(title, fontsize=9)
    return fig


def time_distribution(times_s: Sequence[float], title: str = "kernel time over repeats") -> Figure:
    """Kernel times (seconds) of repeated launches, shown in microseconds, median marked."""
    import statistics

    fig = Figure(figsize=(4.8, 2.6), layout="constrained")
    ax = fig.add_subplot()
    us = [1e6 * float(t) for t in times_s]
    ax.hist(us, bins=min(30, max(len(us), 1)), color="#f58231")
    if us:
        med = statistics.median(us)
        ax.axvline(med, color=NEUTRAL, lw=1, label=f"median {med:.1f} µs")
        ax.legend(fontsize=7)
    ax.set_xlabel("time (µs)")
    ax.set_ylabel("launches")
    ax.set_title(title, fontsize=9)
    return fig


def _neutral(fig: Figure) -> None:
    """Recolour ``fig``'s text, ticks, spines and legend frames :data:`NEUTRAL` (and its
    backgrounds transparent), so the chart reads on light and dark backgrounds."""
    fig.patch.set_alpha(0.0)
    for text in fig.findobj(Text):
        text.set_color(NEUTRAL)
    for ax in fig.axes:
        ax.patch.set_alpha(0.0)
        ax.tick_params(colors=NEUTRAL, which="both")
        for spine in ax.spines.values():
            spine.set_edgecolor(NEUTRAL)
    for legend in [ax.get_legend() for ax in fig.axes] + list(fig.legends):
        if legend is not None:
            # a faint grey box: lines under the legend do not cross its text on either theme
            frame = legend.get_frame()
            frame.set_alpha(None)  # else the legend's framealpha (0.8) overrides the colours'
            frame.set_facecolor((0.5, 0.5, 0.5, 0.12))
            frame.set_edgecolor(NEUTRAL)


def figure_png(fig: Figure, dpi: int = 90) -> bytes:
    """PNG bytes (RGBA, transparent background) of a figure, recoloured to read on
    JupyterLab's light and dark themes (see the module docstring)."""
    _neutral(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, transparent=True)
    return buf.getvalue()


def figure_img_html(fig: Figure, alt: str, dpi: int = 90) -> str:
    """An ``<img>`` element with the figure inlined as base64 PNG (static HTML, no kernel)."""
    import html

    data = base64.b64encode(figure_png(fig, dpi)).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}"/>'
