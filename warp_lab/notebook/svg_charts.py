"""The launch view's charts as inline SVG, drawn from the launch's own numbers.

A ``wl.launch`` cell shows the SIMT efficiency of its warps (a histogram) and its
instruction mix (bars) on the simulator, and the kernel times of its repeats on a GPU.
Drawing them with matplotlib cost 0.45-0.5 s per launch cell (the import, the layout
engine, the PNG encoder) while a small simulated launch takes a few milliseconds; this
module writes each chart as a few dozen SVG elements in well under a millisecond, with
no import beyond the standard library and numpy, and the chart is text in the cell's
``text/html``: it reads the same in JupyterLab, in a notebook reopened without a kernel
and in an nbconvert export, scales without blurring, and each bar carries its numbers as
a tooltip (``<title>``: "50-55 %: 12 warps").

Colours are those of :mod:`warp_lab.notebook.charts` (text, ticks and axes in its
mid-grey ``NEUTRAL``, readable on JupyterLab's light and dark themes; transparent
background). Every piece of text is escaped (:func:`html.escape`), as everywhere in the
views.
"""

from __future__ import annotations

import html
import math
import statistics
from typing import Mapping, Sequence

import numpy as np

__all__ = ["simt_histogram_svg", "instruction_mix_svg", "time_distribution_svg",
           "histogram_svg", "nice_ticks", "eng"]

#: text, ticks and axes (as ``charts.NEUTRAL``: WCAG contrast >= 3:1 on light and dark)
NEUTRAL = "#808080"
#: the bar colours of the PNG charts these replace
SIMT_COLOR, MIX_COLOR, TIME_COLOR = "#4363d8", "#3cb44b", "#f58231"

_FONT = 'font-family="sans-serif" font-size="10"'


def _esc(text) -> str:
    return html.escape(str(text), quote=True)


def _num(x: float) -> str:
    """A coordinate with at most 2 decimals (``12``, ``12.5``, ``12.25``)."""
    return f"{x:.2f}".rstrip("0").rstrip(".")


def nice_ticks(top: float, most: int = 5, integer: bool = False) -> list[float]:
    """Ticks ``0, s, 2s, ...`` covering ``[0, top]``, ``s`` 1, 2 or 5 times a power of
    ten (at least 1 when ``integer``: counts), at most ``most + 1`` of them (``top`` 0
    gives ``[0, 1]``)."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / most
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    if integer:
        step = max(step, 1.0)
    n = math.ceil(top / step - 1e-9)
    return [round(k * step, 12) for k in range(n + 1)]


def eng(x: float) -> str:
    """A count with an SI prefix, three significant digits at most: ``950``, ``1.2k``,
    ``34M`` (matplotlib's ``EngFormatter(sep="")`` as the PNG chart had it)."""
    if x == 0:
        return "0"
    prefixes = ((1, ""), (1e3, "k"), (1e6, "M"), (1e9, "G"), (1e12, "T"))
    k = max((i for i, (div, _) in enumerate(prefixes) if abs(x) >= div), default=0)
    text = f"{x / prefixes[k][0]:.3g}"
    if abs(float(text)) >= 1000 and k + 1 < len(prefixes):  # 999,999 rounds to 1000k: 1M
        k += 1
        text = f"{x / prefixes[k][0]:.3g}"
    return text + prefixes[k][1]


def _svg(width: int, height: int, label: str, body: list[str]) -> str:
    return (f'<svg class="wl-chart" xmlns="http://www.w3.org/2000/svg" role="img" '
            f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'aria-label="{_esc(label)}" {_FONT}><title>{_esc(label)}</title>'
            + "".join(body) + "</svg>")


def _text(x: float, y: float, text, anchor: str = "middle", extra: str = "") -> str:
    return (f'<text x="{_num(x)}" y="{_num(y)}" text-anchor="{anchor}" fill="{NEUTRAL}"'
            f'{extra}>{_esc(text)}</text>')


def _line(x1, y1, x2, y2, extra: str = "") -> str:
    return (f'<line x1="{_num(x1)}" y1="{_num(y1)}" x2="{_num(x2)}" y2="{_num(y2)}" '
            f'stroke="{NEUTRAL}"{extra}/>')


def histogram_svg(values: Sequence[float], bins: int, value_range: tuple[float, float],
                  *, title: str, x_label: str, y_label: str, color: str,
                  bin_text, count_word: tuple[str, str], marker: float | None = None,
                  marker_text: str = "", width: int = 432, height: int = 234) -> str:
    """A histogram of ``values`` as an SVG element.

    Args:
        values: the samples.
        bins: number of equal bins over ``value_range``.
        value_range: ``(low, high)``; as :func:`numpy.histogram`, each bin holds
            ``low <= v < high`` but the last, which holds its right edge too; values
            outside are not counted.
        title, x_label, y_label: the chart's words (escaped).
        color: the bars' fill.
        bin_text: ``(low, high) -> str``, a bin's range in the tooltip ("50-55 %").
        count_word: the counted thing, singular and plural (``("warp", "warps")``).
        marker: an x value to mark with a vertical line (the median), or None.
        marker_text: the marker's legend (escaped).
        width, height: pixels.

    Returns:
        the ``<svg>`` markup; each bar a ``<rect>`` whose ``<title>`` gives its range
        and count.
    """
    counts, edges = np.histogram(np.asarray(values, dtype=np.float64), bins=bins,
                                 range=value_range)
    # a marker's legend gets a row of its own above the bars
    left, right, top, bottom = 46, 12, 22 if marker is None else 34, 38
    pw, ph = width - left - right, height - top - bottom
    y_ticks = nice_ticks(float(counts.max()) if counts.size else 0.0, integer=True)
    y_top = y_ticks[-1]
    lo, hi = value_range
    span = (hi - lo) or 1.0

    def xs(v):
        return left + pw * (v - lo) / span

    def ys(c):
        return top + ph * (1 - c / y_top)

    body = [_text(width / 2, 14, title, extra=' font-size="11"')]
    for c in y_ticks:
        y = ys(c)
        body.append(_line(left, y, left + pw, y, ' stroke-opacity="0.3"'))
        body.append(_text(left - 4, y + 3.5, eng(c), anchor="end"))
    for k, c in enumerate(counts):
        x0, x1 = xs(edges[k]), xs(edges[k + 1])
        word = count_word[0] if c == 1 else count_word[1]
        tip = f"{bin_text(edges[k], edges[k + 1])}: {int(c)} {word}"
        h = ph * c / y_top
        body.append(f'<rect x="{_num(x0)}" y="{_num(top + ph - h)}" '
                    f'width="{_num(max(x1 - x0 - 0.5, 0.5))}" height="{_num(h)}" '
                    f'fill="{color}"><title>{_esc(tip)}</title></rect>')
    # from 0 (percent): round ticks; a range of times: its ends and four steps between
    x_ticks = nice_ticks(hi, 5) if lo == 0 else [float(v) for v in np.linspace(lo, hi, 6)]
    for v in x_ticks:
        x = xs(v)
        if x > left + pw + 0.5:
            continue
        body.append(_line(x, top + ph, x, top + ph + 3))
        body.append(_text(x, top + ph + 13, _tick_text(v)))
    if marker is not None:
        x = xs(marker)
        body.append(_line(x, top, x, top + ph, ' stroke-width="1.5"'))
        body.append(_text(left + pw, top - 5, marker_text, anchor="end"))
    body.append(_line(left, top + ph, left + pw, top + ph))
    body.append(_line(left, top, left, top + ph))
    body.append(_text(left + pw / 2, height - 6, x_label))
    body.append(_text(12, top + ph / 2, y_label,
                      extra=f' transform="rotate(-90 12 {_num(top + ph / 2)})"'))
    return _svg(width, height, title, body)


def _tick_text(v: float) -> str:
    return f"{v:.0f}" if abs(v - round(v)) < 1e-9 else f"{v:.3g}"


def simt_histogram_svg(efficiencies: Sequence[float],
                       title: str = "SIMT efficiency per warp") -> str:
    """Histogram of per-warp SIMT efficiency (active lanes / 32 per issued instruction,
    0..1), in percent, 20 bins of 5 %: the launch view's first simulator chart."""
    return histogram_svg([100 * float(e) for e in efficiencies], 20, (0.0, 100.0),
                         title=title, x_label="SIMT efficiency (%)", y_label="warps",
                         color=SIMT_COLOR, count_word=("warp", "warps"),
                         bin_text=lambda a, b: f"{a:.0f}-{b:.0f} %")


def time_distribution_svg(times_s: Sequence[float],
                          title: str = "kernel time over repeats") -> str:
    """Kernel times (seconds) of repeated launches as a histogram in microseconds, at most
    30 bins over their range, the median marked: a GPU launch's chart."""
    us = [1e6 * float(t) for t in times_s]
    if not us:
        us_range = (0.0, 1.0)
    else:
        lo, hi = min(us), max(us)
        us_range = (lo, hi) if hi > lo else (lo - 0.5, hi + 0.5)  # numpy's one-value range
    med = statistics.median(us) if us else None
    return histogram_svg(us, min(30, max(len(us), 1)), us_range, title=title,
                         x_label="time (µs)", y_label="launches", color=TIME_COLOR,
                         count_word=("launch", "launches"),
                         bin_text=lambda a, b: f"{a:.1f}-{b:.1f} µs", marker=med,
                         marker_text=f"median {med:.1f} µs" if med is not None else "")


def instruction_mix_svg(mix: Mapping[str, int], title: str = "instruction mix",
                        width: int = 432) -> str:
    """Horizontal bars: thread-instructions executed per class (arithmetic, memory,
    control, sync, special), in the mapping's order, each bar labelled with its count."""
    names = list(mix)
    row, top, bottom = 22, 22, 34
    label_w = 8 + 6.2 * max((len(str(n)) for n in names), default=4)
    left, right = min(label_w, width / 3), 44
    pw = width - left - right
    height = int(top + bottom + row * max(len(names), 1))
    ticks = nice_ticks(max((float(v) for v in mix.values()), default=0.0), 4, integer=True)
    x_top = ticks[-1]

    def xs(v):
        return left + pw * v / x_top

    body = [_text(width / 2, 14, title, extra=' font-size="11"')]
    for v in ticks:
        x = xs(v)
        body.append(_line(x, top, x, top + row * len(names), ' stroke-opacity="0.3"'))
        body.append(_text(x, top + row * len(names) + 13, eng(v)))
    for k, name in enumerate(names):
        value = int(mix[name])
        y = top + row * k
        w = pw * value / x_top
        body.append(_text(left - 5, y + row / 2 + 3.5, name, anchor="end"))
        body.append(f'<rect x="{_num(left)}" y="{_num(y + 3)}" width="{_num(w)}" '
                    f'height="{row - 6}" fill="{MIX_COLOR}"><title>{_esc(name)}: '
                    f'{value:,} thread-instructions</title></rect>')
        body.append(_text(left + w + 3, y + row / 2 + 3.5, eng(value), anchor="start"))
    body.append(_line(left, top, left, top + row * len(names)))
    body.append(_text(left + pw / 2, height - 5, "thread-instructions"))
    return _svg(width, height, title, body)
