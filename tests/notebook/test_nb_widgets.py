"""The occupancy widget answers what the occupancy model answers, as its traits change."""

from warp_lab.analysis import occupancy, occupancy_curve
from warp_lab.compiler.artifact import Resources
from warp_lab.notebook.charts import occupancy_chart
from warp_lab.notebook.widgets import OccupancyWidget

from nb_records import saxpy_record


def test_block_size_change_updates_occupancy_to_the_model():
    ck = saxpy_record()
    w = OccupancyWidget(ck, arch="sm_90", block_size=256)
    assert w.occupancy == occupancy(ck, "sm_90", 256)
    png_before = w.chart.value
    for bs in (32, 96, 512, 1024):
        w.block_size.value = bs
        expected = occupancy(ck, "sm_90", bs)
        assert w.occupancy == expected
        assert f"{expected.occupancy:.0%}" in w.summary.value
    assert w.chart.value != png_before and w.chart.value[:8] == b"\x89PNG\r\n\x1a\n"


def test_register_limited_kernel_on_sm80_textbook_case():
    # sm_80, 256 threads, 64 registers -> 4 blocks, 50% occupancy, limited by registers
    # (the textbook case the occupancy issue names)
    w = OccupancyWidget(Resources("sm_80", registers=64), arch="sm_80", block_size=256)
    assert w.occupancy.active_blocks_per_sm == 4
    assert w.occupancy.occupancy == 0.5
    assert w.occupancy.limiters == ("registers",)
    assert "limited by registers" in w.summary.value


def test_arch_and_dynamic_shared_memory_drive_the_model():
    r = Resources("sm_90", registers=32, shared=4096)
    w = OccupancyWidget(r, arch="sm_90", block_size=128)
    w.arch.value = "sm_75"
    assert w.occupancy == occupancy(r, "sm_75", 128)
    w.dynamic_shared_mem.value = 30 * 1024
    assert w.occupancy == occupancy(r, "sm_75", 128, 30 * 1024)
    assert "shared_memory" in w.occupancy.limiters
    # above 48 KB a kernel must opt in: the widget asks the model with the opt-in
    w.arch.value = "sm_90"
    w.dynamic_shared_mem.value = 100 * 1024
    assert w.occupancy == occupancy(r, "sm_90", 128, 100 * 1024,
                                    max_dynamic_shared_mem=100 * 1024)
    assert w.occupancy.active_blocks_per_sm > 0


def test_static_fallback_for_nbconvert():
    w = OccupancyWidget(Resources("sm_80", registers=64), arch="sm_80", block_size=256)
    data = w._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "data:image/png;base64," in data["text/html"] and "50%" in data["text/html"]
    # the mark the extension's widget fallback looks for (widgetfallback.ts STATIC_MARK)
    assert data["text/html"].startswith("<div data-wl-static='occupancy'>")


def test_chart_draws_each_biting_limit_and_marks_the_choice():
    curve = occupancy_curve(Resources("sm_80", registers=64), "sm_80")
    fig = occupancy_chart(curve, 256)
    [legend] = fig.legends
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels[0] == "occupancy"
    assert "registers limit" in labels
    assert "block 256: 50%" in labels


def test_chart_legend_is_outside_the_curves():
    """The legend sat inside the axes ("lower right") over the curves of large blocks:
    drawn, its box and the axes' box do not overlap."""
    curve = occupancy_curve(Resources("sm_80", registers=64), "sm_80")
    fig = occupancy_chart(curve, 256, title="sm_80")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # constrained layout places the legend at draw time
    renderer = canvas.get_renderer()
    axes = fig.axes[0].get_window_extent(renderer)
    [legend] = fig.legends
    box = legend.get_window_extent(renderer)
    assert box.x0 >= axes.x1, (box, axes)
    assert fig.axes[0].get_legend() is None


def test_charts_read_on_light_and_dark_themes():
    """Transparent background, neutral grey marks: composited on white and on JupyterLab's
    dark #111, the occupancy curve and the axis text stay visible (a plain matplotlib PNG was
    an opaque white box in the dark theme; its black curve would vanish on #111)."""
    import io

    import numpy as np
    from matplotlib.image import imread
    from matplotlib.text import Text

    from warp_lab.notebook.charts import NEUTRAL, figure_png, time_distribution

    curve = occupancy_curve(Resources("sm_80", registers=64), "sm_80")
    for fig in (occupancy_chart(curve, 256, title="sm_80"), time_distribution([1e-5, 2e-5])):
        rgba = imread(io.BytesIO(figure_png(fig)), format="png")
        assert rgba.shape[2] == 4
        alpha = rgba[..., 3]
        assert alpha[0, 0] == 0 and alpha[-1, -1] == 0      # corners: no background
        legend = fig.axes[0].get_legend() or (fig.legends or [None])[0]
        if legend is not None and len(fig.axes[0].lines) > 2:
            assert (alpha > 0.5).mean() < 0.5                # lines, not a filled box
        if legend is not None:  # a faint box: grey text on an 80% opaque grey box was unreadable
            assert legend.get_frame().get_facecolor()[3] < 0.25
        texts = [t for t in fig.findobj(Text) if t.get_text()]
        assert texts and {t.get_color() for t in texts} == {NEUTRAL}
        for background in (1.0, 17 / 255):                   # white, dark theme's #111
            shown = rgba[..., :3] * alpha[..., None] + background * (1 - alpha[..., None])
            # some opaque pixels differ clearly from the background on either theme
            assert (np.abs(shown - background).max(axis=2) > 0.25).sum() > 500


def test_register_heat_columns_follow_nvdisasm_life_ranges():
    import re

    from warp_lab.analysis.registers import register_pressure
    from warp_lab.notebook.views import kernel_html
    from warp_lab.notebook.widgets import register_heat

    from nb_htmlparse import parse_view

    ck = saxpy_record()
    py_heat, sass_heat = register_heat(ck)
    pressure = register_pressure(ck)
    assert py_heat == dict(pressure.per_line) and py_heat
    assert max(py_heat.values()) <= ck.resources.registers
    lines = ck.sass.splitlines()
    for k, regs in sass_heat.items():
        offset = int(re.search(r"/\*([0-9a-f]{4})\*/", lines[k - 1]).group(1), 16)
        assert pressure.per_instruction[offset] == regs
    assert len(sass_heat) == len(pressure.per_instruction)
    view = parse_view(kernel_html(ck, heat={"live_registers": py_heat},
                                  pane_heat={"sass": {"live_registers": sass_heat}}))
    sass_rows = {int(x["ln"]): x["heat"] for x in view.panes["sass"]}
    k, regs = next(iter(sass_heat.items()))
    assert sass_rows[k] == [str(regs)]


def test_dynamic_shared_memory_past_the_arch_limit_is_refused_not_clamped():
    # sm_90 allows 227 KB (232448 bytes) per block; the box would silently show 227 KB
    import pytest

    with pytest.raises(ValueError, match="300000 bytes.*232448"):
        OccupancyWidget(Resources("sm_90", registers=8), arch="sm_90", dynamic_shared_mem=300000)


def test_widget_and_card_explain_the_allocated_shared_memory_alike():
    """Static 0 bytes but 1 KB allocated on sm_80: both views say it is CUDA's reserved
    kilobyte per block, and a 1296-byte tile's 2432 bytes are that plus rounding."""
    import dataclasses
    import html

    from warp_lab.notebook.views import resource_card_html

    ck = saxpy_record()
    for shared, want in ((0, "1024 bytes = 0 static + 0 dynamic + 1024 reserved by CUDA per "
                             "block (sm_80+)"),
                         (1296, "2432 bytes = 1296 static + 0 dynamic + 1024 reserved by CUDA "
                                "per block (sm_80+) = 2320, rounded up to the 128-byte "
                                "allocation unit")):
        r = Resources("sm_80", registers=32, shared=shared)
        w = OccupancyWidget(r, arch="sm_80", block_size=256)
        assert html.escape(want) in w.summary.value
        card = resource_card_html(dataclasses.replace(ck, resources=r),
                                  occupancy(r, "sm_80", 256))
        assert f"<th>shared memory / block (allocated)</th><td>{html.escape(want)}</td>" in card
        assert f"<th>shared memory (static)</th><td>{shared} bytes / block</td>" in card



def test_card_shows_spills_and_stack_frame_as_local_memory():
    """--maxrregcount 64 on notebook 04's kernel: ptxas reports a 176-byte stack frame holding
    528 bytes of spill stores; the card's local memory line is that frame, not 0."""
    import dataclasses

    from warp_lab.notebook.views import resource_card_html

    r = Resources("sm_80", registers=64, spill_stores=528, spill_loads=540, stack_frame=176,
                  local=176)
    card = resource_card_html(dataclasses.replace(saxpy_record(), resources=r))
    assert ("<th>local memory</th><td>176 bytes / thread (stack frame: spilled registers, "
            "local arrays)</td>") in card
    assert "<th>spill stores / loads</th><td>528 / 540 bytes (to and from local memory)" in card
    clean = resource_card_html(dataclasses.replace(saxpy_record(), resources=Resources(
        "sm_80", registers=8)))
    assert "<th>local memory</th><td>0 bytes / thread</td>" in clean


def test_title_names_the_kernel_in_widget_and_rendered_html():
    # the compiled kernel's own name (saxpy), in the widget's heading and in the static
    # HTML a notebook renders without a widget manager (nbconvert, GitHub)
    ck = saxpy_record()
    assert ck.name == "saxpy"
    w = OccupancyWidget(ck, arch="sm_90", block_size=256)
    html = w._repr_mimebundle_()["text/html"]
    assert "<b>Occupancy of saxpy</b>" in w.heading.value
    assert "<b>Occupancy of saxpy</b>" in html
    assert f"({ck.resources.registers} registers/thread" in html
    # a Resources record has no name: the title names none (it said "of kernel"), or
    # the one passed in, escaped
    r = Resources("sm_80", registers=64)
    anon = OccupancyWidget(r, arch="sm_80")._repr_mimebundle_()["text/html"]
    assert "<b>Occupancy</b> (64 registers/thread" in anon and "of kernel" not in anon
    named = OccupancyWidget(r, arch="sm_80", name="k<i>")._repr_mimebundle_()["text/html"]
    assert "<b>Occupancy of k&lt;i&gt;</b>" in named


def test_a_launchs_block_size_between_warp_steps_is_shown_as_it_is():
    """A launch of 48 threads per block (or 1): the widget shows 48 and the occupancy of
    48, the slider beside it stands on the whole warps (64) and still slides by warps."""
    r = Resources("sm_90", registers=40)
    w = OccupancyWidget(r, arch="sm_90", block_size=48)
    assert (w.block_size.value, w.block_slider.value) == (48, 64)
    assert w.occupancy == occupancy(r, "sm_90", 48) and w.occupancy.block_size == 48
    assert ("48 threads = 2 warps (the last one 16 of 32 lanes: warp slots and registers "
            "are taken per whole warp, as for 64)") in w.summary.value
    assert "48 threads = 2 warps" in w._repr_mimebundle_()["text/html"]
    w.block_slider.value = 96          # the user slides: a warp step becomes the block size
    assert w.block_size.value == 96 and w.occupancy == occupancy(r, "sm_90", 96)
    w.block_size.value = 1             # typed: shown as it is, the slider on one warp
    assert (w.block_slider.value, w.occupancy.block_size) == (32, 1)
    assert "1 thread = 1 warp (the last one 1 of 32 lanes" in w.summary.value
    w.block_slider.value = 64          # slid on: whole warps again
    assert w.block_size.value == 64 and w.occupancy == occupancy(r, "sm_90", 64)


def test_chart_marks_a_block_size_between_the_curves_points():
    r = Resources("sm_80", registers=64)
    curve = occupancy_curve(r, "sm_80")
    at48 = occupancy(r, "sm_80", 48)
    fig = occupancy_chart(curve, 48, current=at48)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert f"block 48: {at48.occupancy:.0%}" in labels


def _limits_row(summary: str) -> str:
    import re

    row = re.search(r"<th[^>]*>blocks per SM each limit allows</th><td[^>]*>([^<]*)</td>",
                    summary)
    return row.group(1)


def test_the_limits_row_names_only_the_factors_that_set_a_limit():
    # a new user read "barriers: ∞, virtual resources: ∞" as something to act on: the row
    # names the factors that limit this kernel, each with the model's blocks per SM (the
    # model is checked against cuda_occupancy.h); the others are in the collapsed list
    w = OccupancyWidget(Resources("sm_80", registers=64), arch="sm_80", block_size=256)
    lim = w.occupancy.limits
    assert lim["barriers"] is None and lim["virtual_resources"] is None
    row = _limits_row(w.summary.value)
    assert row == (f"warp slots: {lim['warps']}, registers: {lim['registers']}, "
                   f"shared memory: {lim['shared_memory']}, blocks per SM: {lim['blocks']}")
    assert "∞" not in w.summary.value
    every = w.summary.value.split("<details class='wl-occ-limits'>")[1]
    assert "<li>barriers: no limit here</li><li>virtual resources: no limit here</li>" in every
    assert f"<li>registers: {lim['registers']}</li>" in every
    # from sm_90 a kernel's barriers do limit: the row says so, and with every factor
    # finite except virtual resources the list is still there
    r = Resources("sm_90", registers=32, shared=4096, barriers=1)
    w = OccupancyWidget(r, arch="sm_90", block_size=128)
    assert w.occupancy.limits["barriers"] is not None
    assert _limits_row(w.summary.value).endswith(
        f", barriers: {w.occupancy.limits['barriers']}")
