"""The --launch progress bar of %%warp_kernel in a real IPython shell: a simulator launch
running past 0.5 s displays an ipywidgets.IntProgress that ends at the block total; a
short launch displays none."""

import time

import ipywidgets
import numpy as np
from IPython.utils.capture import capture_output

import warp_lab as wl
from warp_lab.notebook.progress import LaunchProgress

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

# each thread loops n times on its own value: ~1 s for 4 batches of 65536 threads on
# the simulator, so the bar's first callback after 0.5 s comes before the end
SPIN_CELL = """
def spin(x: wl.array(dtype=wl.float32), n: int):
    i = wl.tid()
    acc = float(i) * 0.001
    for k in range(n):
        acc = acc * 0.5 + 1.0
    x[i] = acc
"""


def _widget_ids(cap):
    return [o.data[WIDGET_MIME]["model_id"] for o in cap.outputs if WIDGET_MIME in o.data]


def test_long_simulator_launch_shows_a_progress_bar(ip):

    n = 4 * 65536
    ip.user_ns.update(wl=wl, xs=np.zeros(n, np.float32))
    t0 = time.perf_counter()
    with capture_output() as cap:
        view = ip.run_cell_magic("warp_kernel", '--device sim --show source '
                                 '--launch "dim=xs.size, inputs=[xs, 800]"', SPIN_CELL)
    took = time.perf_counter() - t0
    assert not view.result.partial
    # the recurrence acc = acc / 2 + 1 converges to 2.0 in float32 within 800 steps
    np.testing.assert_array_equal(ip.user_ns["xs"], 2.0)
    assert took > 0.5, f"the launch took only {took:.2f} s; make the loop longer"
    progress = view.progress
    assert progress.calls == 4
    # displayed once, in the cell's output: the HBox of the bar and its label
    assert _widget_ids(cap) == [progress.box.model_id]
    bar, label = progress.box.children
    assert bar is progress.bar and isinstance(bar, ipywidgets.IntProgress)
    assert bar.max == 1024 and bar.value == 1024          # 4 batches of 256 blocks
    assert bar.bar_style == "success" and bar.description == "done"
    assert label.value == "1,024 / 1,024 blocks"


def test_short_launch_shows_no_bar(ip):

    ip.user_ns.update(wl=wl, xs=np.zeros(64, np.float32))
    with capture_output() as cap:
        view = ip.run_cell_magic("warp_kernel", '--device sim --show source '
                                 '--launch "dim=64, inputs=[xs, 3]"', SPIN_CELL)
    assert view.progress.calls == 1 and view.progress.bar is None
    assert _widget_ids(cap) == []
    np.testing.assert_allclose(ip.user_ns["xs"], 0.001 * np.arange(64) / 8 + 1.75, rtol=1e-6)


def test_bar_turns_red_when_the_launch_stops_early():
    p = LaunchProgress(delay=0.0)
    with capture_output():
        p(3, 10)
    assert p.bar.value == 3 and p.bar.max == 10 and p.label.value == "3 / 10 blocks"
    p.finish(partial=True)
    assert p.bar.bar_style == "danger" and p.bar.description == "stopped"
    # below the delay nothing is created
    q = LaunchProgress(delay=60.0)
    q(1, 2)
    assert q.bar is None and q.calls == 1
