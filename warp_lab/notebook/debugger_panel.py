"""The debugger's ipywidgets panel: buttons, breakpoints, the lane table, shared memory.

Every button calls one :class:`~warp_lab.notebook.debugger.DebugSession`
method and redraws its HTML widgets (where execution stands; the warp's 32
lanes with changed values marked; the block's shared arrays), so the panel
and a notebook cell calling the same methods always agree.
"""

from __future__ import annotations

import html

import ipywidgets as W

from warp_lab.errors import WarpLabError

__all__ = ["DebugPanel"]


def _first_lines(ck) -> tuple[int, int]:
    """The kernel's first Python line with code (the source map's first line of the
    kernel's own file or cell with PTX rows) and the first PTX line of that line's code;
    the kernel's first source line and 1 when the map has no PTX rows."""
    sm = ck.source_map
    own = [ln for ln in sm.own_lines("ptx") if sm.rows_for("ptx", ln)]
    if not own:
        return ck.source.first_line, 1
    return own[0], min(sm.rows_for("ptx", own[0]))


class DebugPanel(W.VBox):
    """Controls for one :class:`~warp_lab.notebook.debugger.DebugSession`.

    Attributes:
        session: the session driven.
        line, ptx_line: IntText inputs for a new breakpoint, starting at the kernel's first
            line with code and that line's first PTX line (they started at 0, a line no
            kernel has).
        break_at: ToggleButtons, ``"Python line"`` or ``"PTX line"``: which of the two
            inputs "add breakpoint" uses; editing an input selects it.
        block_x, block_y, block_z, warp: which warp the lane table shows (the
            block's index on each grid axis, the warp's index in the block).
        status, lanes, shared, message: HTML widgets the buttons redraw (``shared``:
            the shown block's shared arrays, :meth:`DebugSession.shared_html`).
        buttons: name -> Button (``continue``, ``step``, ``step back``,
            ``restart``, ``run to end``, ``add breakpoint``).
    """

    def __init__(self, session):
        self.session = session
        first, first_ptx = _first_lines(session.compiled)
        # descriptions at their own width (the default 80 px label cut "Python line")
        label = {"description_width": "initial"}
        self.line = W.IntText(value=first, description="Python line", style=label,
                              layout=W.Layout(width="170px"))
        self.ptx_line = W.IntText(value=first_ptx, description="PTX line", style=label,
                                  layout=W.Layout(width="160px"))
        self.break_at = W.ToggleButtons(options=["Python line", "PTX line"],
                                        value="Python line", style={"button_width": "auto"},
                                        tooltips=["break before this Python line's code",
                                                  "break before this PTX line"])
        self.line.observe(lambda _c: setattr(self.break_at, "value", "Python line"), "value")
        self.ptx_line.observe(lambda _c: setattr(self.break_at, "value", "PTX line"), "value")
        self.block_x = W.IntText(value=0, description="block x", style=label,
                                 layout=W.Layout(width="150px"))
        self.block_y = W.IntText(value=0, description="y", style=label,
                                 layout=W.Layout(width="110px"))
        self.block_z = W.IntText(value=0, description="z", style=label,
                                 layout=W.Layout(width="110px"))
        self.warp = W.IntText(value=0, description="warp", style=label,
                              layout=W.Layout(width="130px"))
        self.status = W.HTML()
        # the 32 lane columns and the register notes are wider than most outputs: the
        # table scrolls inside its box (an HTML widget clipped it at 11 lanes)
        self.lanes = W.HTML(layout=W.Layout(overflow="auto", max_width="100%"))
        self.shared = W.HTML(layout=W.Layout(overflow="auto", max_width="100%"))
        self.message = W.HTML()
        self.breakpoints = W.HTML()
        actions = {"continue": session.cont, "step": session.step,
                   "step back": session.step_back, "restart": session.restart,
                   "run to end": session.run_to_end, "add breakpoint": self._add_breakpoint}
        self.buttons = {}
        for name, fn in actions.items():
            # at its label's width: 110 px cut "add breakpoint"
            b = W.Button(description=name, layout=W.Layout(width="auto", min_width="80px"))
            b.on_click(lambda _b, fn=fn: self._do(fn))
            self.buttons[name] = b
        for box in (*self._block_boxes(), self.warp):
            box.observe(self._choose_warp, names="value")
        super().__init__([
            W.HBox([self.buttons[n] for n in ("continue", "step", "step back", "restart",
                                              "run to end")]),
            W.HBox([self.break_at, self.line, self.ptx_line, self.buttons["add breakpoint"],
                    self.breakpoints], layout=W.Layout(flex_flow="row wrap")),
            W.HBox([*self._block_boxes(), self.warp], layout=W.Layout(flex_flow="row wrap")),
            self.status, self.message, self.lanes, self.shared])
        self.add_class("wl-debug-panel")  # what tests and tools/view_screenshots.py look for
        self.refresh()

    def _add_breakpoint(self):
        if self.break_at.value == "PTX line":
            return self.session.add_breakpoint(ptx_line=self.ptx_line.value)
        return self.session.add_breakpoint(line=self.line.value)

    def _do(self, fn):
        try:
            fn()
            self.message.value = ""
        except WarpLabError as exc:  # a bad breakpoint, a block not running: say so, keep going
            self.message.value = f"<span style='color:#b00'>{html.escape(str(exc))}</span>"
        self.refresh()

    def _block_boxes(self):
        """The block index inputs the launch needs: y and z only for a 2-D/3-D grid."""
        grid = self.session.grid or (1, 1, 1)
        boxes = [self.block_x]
        if grid[1] > 1 or grid[2] > 1:
            boxes.append(self.block_y)
        if grid[2] > 1:
            boxes.append(self.block_z)
        return boxes

    def _choose_warp(self, change=None):
        s = self.session
        s.block = (self.block_x.value, self.block_y.value, self.block_z.value)
        s.warp = self.warp.value
        self.lanes.value = s.lanes_html()
        self.shared.value = s.shared_html()

    def refresh(self):
        """Redraw status, breakpoint list, lanes and shared arrays from the session."""
        s = self.session
        for box, value in zip((self.block_x, self.block_y, self.block_z), s.block):
            box.unobserve(self._choose_warp, names="value")
            box.value = value
            box.observe(self._choose_warp, names="value")
        self.warp.unobserve(self._choose_warp, names="value")
        self.warp.value = s.warp  # a breakpoint stop may move the focus to another warp
        self.warp.observe(self._choose_warp, names="value")
        self.status.value = s.status_html()
        self.breakpoints.value = ", ".join(
            f"#{bp.id}: " + (f"line {bp.source_line}" if bp.source_line else f"PTX {bp.ptx_line}")
            for bp in s.debugger.breakpoints)
        self.lanes.value = s.lanes_html()
        self.shared.value = s.shared_html()
