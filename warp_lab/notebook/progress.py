"""A progress bar for long simulator launches (``%%warp_kernel --launch``).

:class:`LaunchProgress` is the ``progress`` callback of
:func:`warp_lab.launch` (simulator only): it is called with
``(blocks_done, blocks_total)`` after each batch of simulated blocks. Short
launches show nothing; the first call at least ``delay`` seconds (0.5 s) after
the launch began creates an ``ipywidgets.IntProgress`` bar with a
"done / total blocks" label and displays it, and later calls move it. Each call
costs a clock read (and, once the bar exists, two trait updates), which is
nothing next to simulating a batch of blocks.
"""

from __future__ import annotations

import time

from IPython.display import display

__all__ = ["LaunchProgress", "DEFAULT_DELAY"]

#: seconds a launch runs before its bar appears
DEFAULT_DELAY = 0.5


class LaunchProgress:
    """``progress(blocks_done, blocks_total)`` callback showing a lazily created bar.

    Args:
        delay: seconds (wall clock, from construction) before a bar may appear.

    Attributes:
        bar: the ``ipywidgets.IntProgress`` once shown, else None.
        calls: how many times the launch reported progress.

    Example::

        p = LaunchProgress()
        res = wl.launch(k, dim=n, inputs=[...], device="sim", progress=p)
        p.finish(res.partial)
    """

    def __init__(self, delay: float = DEFAULT_DELAY):
        self.delay = float(delay)
        self.t0 = time.perf_counter()
        self.bar = None
        self.label = None
        self.box = None
        self.calls = 0

    def __call__(self, done: int, total: int) -> None:
        self.calls += 1
        if self.bar is None:
            if time.perf_counter() - self.t0 < self.delay:
                return
            try:
                import ipywidgets
            except ImportError:  # no widgets installed: no bar, the launch goes on
                self.delay = float("inf")
                return
            self.bar = ipywidgets.IntProgress(value=0, min=0, max=max(total, 1),
                                              description="simulating", bar_style="info")
            self.label = ipywidgets.Label()
            self.box = ipywidgets.HBox([self.bar, self.label])
            display(self.box)
        self.bar.max = max(total, 1)
        self.bar.value = done
        self.label.value = f"{done:,} / {total:,} blocks"

    def finish(self, partial: bool) -> None:
        """Colour the bar (if one was shown): green when complete, red when stopped early.

        Args:
            partial: the launch stopped before every block ran (fault, budget,
                interrupt, an exception).
        """
        if self.bar is None:
            return
        self.bar.bar_style = "danger" if partial else "success"
        self.bar.description = "stopped" if partial else "done"
