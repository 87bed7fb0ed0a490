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


class DebugPanel(W.VBox):
    """Controls for one :class:`~warp_lab.notebook.debugger.DebugSession`.

    Attributes:
        session: the session driven.
        line, ptx_line: IntText inputs for a new breakpoint (0: unused).
        block_x, block_y, block_z, warp: which warp the lane table shows (the
            block's index on each grid axis, the warp's index in the block).
        status, lanes, shared, message: HTML widgets the buttons redraw (``shared``:
            the shown block's shared arrays, :meth:`DebugSession.shared_html`).
        buttons: name -> Button (``continue``, ``step``, ``step back``,
            ``restart``, ``run to end``, ``add breakpoint``).
    """

    def __init__(self, session):
        self.session = session
        self.line = W.IntText(value=0, description="Python line", layout=W.Layout(width="180px"))
        self.ptx_line = W.IntText(value=0, description="PTX line", layout=W.Layout(width="180px"))
        self.block_x = W.IntText(value=0, description="block x", layout=W.Layout(width="150px"))
        self.block_y = W.IntText(value=0, description="y", layout=W.Layout(width="110px"))
        self.block_z = W.IntText(value=0, description="z", layout=W.Layout(width="110px"))
        self.warp = W.IntText(value=0, description="warp", layout=W.Layout(width="150px"))
        self.status = W.HTML()
        self.lanes = W.HTML()
        self.shared = W.HTML()
        self.message = W.HTML()
        self.breakpoints = W.HTML()
        actions = {"continue": session.cont, "step": session.step,
                   "step back": session.step_back, "restart": session.restart,
                   "run to end": session.run_to_end, "add breakpoint": self._add_breakpoint}
        self.buttons = {}
        for name, fn in actions.items():
            b = W.Button(description=name, layout=W.Layout(width="110px"))
            b.on_click(lambda _b, fn=fn: self._do(fn))
            self.buttons[name] = b
        for box in (*self._block_boxes(), self.warp):
            box.observe(self._choose_warp, names="value")
        super().__init__([
            W.HBox([self.buttons[n] for n in ("continue", "step", "step back", "restart",
                                              "run to end")]),
            W.HBox([self.line, self.ptx_line, self.buttons["add breakpoint"], self.breakpoints]),
            W.HBox([*self._block_boxes(), self.warp]),
            self.status, self.message, self.lanes, self.shared])
        self.refresh()

    def _add_breakpoint(self):
        line = self.line.value or None
        ptx = self.ptx_line.value or None
        return self.session.add_breakpoint(line=line, ptx_line=ptx)

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
