"""The line magic's defaults: a value every later cell would refuse is refused where it is
typed, and ``--launch ""`` turns a default launch off (it was a LaunchError, "give either
dim=... or grid=..."; no other spelling turned it off)."""

import numpy as np
import pytest
from IPython.core.error import UsageError

KERNEL = "def k(x: wl.array(dtype=wl.float32)):\n    x[wl.tid()] = 1.0\n"


@pytest.fixture()
def shell(ip):
    """The shared shell, its line-magic defaults restored afterwards."""
    magics = ip.magics_manager.registry["WarpKernelMagics"]
    saved = dict(magics.defaults)
    yield ip
    magics.defaults.clear()
    magics.defaults.update(saved)


@pytest.mark.parametrize("line, message", [
    ("--show bogus", "--show: unknown 'bogus'"),
    ("--hide nope", "--hide: unknown 'nope'"),
    ("--check memchek", "--check: unknown 'memchek'"),
    ("--shared-mem 999999999", "no architecture allows more than 232448 bytes"),
])
def test_line_magic_refuses_a_default_no_cell_could_use(shell, line, message):
    with pytest.raises(UsageError, match=message):
        shell.run_line_magic("warp_kernel", line)
    res = shell.run_cell(f"%%warp_kernel --show source\n{KERNEL}")   # nothing was stored
    assert res.error_in_exec is None


@pytest.mark.parametrize("off", ['""', "''", '" "'])
def test_empty_launch_turns_a_default_launch_off(shell, off):
    shell.user_ns["adv_lm"] = y = np.zeros(4, np.float32)
    shell.run_line_magic("warp_kernel", '--device sim --launch "dim=4, inputs=[adv_lm]"')
    res = shell.run_cell(f"%%warp_kernel --show source --launch {off}\n{KERNEL}")
    assert res.error_in_exec is None and not y.any()
    # the view of a compile (in a terminal IPython, its text form), not a launch's
    assert type(res.result).__name__ in ("KernelView", "TerminalKernelView")
    res = shell.run_cell(f"%%warp_kernel --show source\n{KERNEL}")   # the default still runs
    assert res.error_in_exec is None and (y == 1.0).all()


def test_defaults_listing_counts_an_empty_launch_as_not_set(shell, capsys):
    shell.run_line_magic("warp_kernel", '--launch ""')
    shell.run_line_magic("warp_kernel", "")
    listing = capsys.readouterr().out
    assert "--launch" not in listing.split("(off or not set")[0], listing
