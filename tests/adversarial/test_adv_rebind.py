"""A ``%%warp_kernel`` cell that rebinds or deletes the name of its own kernel, or defines
one name twice: the view shows the kernel each surviving ``def`` made (before: "no kernel
in this cell", another cell's kernel shown as this one's, or one kernel shown twice)."""

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.lang.kernel import Kernel
from warp_lab.notebook.bundle import KernelView


@pytest.fixture(scope="module")
def shell(ip):
    return ip


def _texts(published):
    return [d.get("text/plain", "") for d in published]


def _shown(res, published):
    """The kernels a cell showed: the views it displayed and the one it returned."""
    views = [d for d in published if "text/html" in d and "wl-kernel" in d["text/html"]]
    names = [d["text/plain"].split()[1] for d in views]
    if isinstance(res.result, KernelView):
        names.append(res.result.compiled.name)
    return names, [res.result.compiled.source.text if isinstance(res.result, KernelView)
                   else None]


KERNEL = "def k(x: wl.array(dtype=wl.float32)):\n    x[wl.tid()] = 1.0\n"


@pytest.mark.parametrize("after, says", [
    ("k = 5\n", "k is rebound at line 4 after its def at line 2 (it is now an int)"),
    ("k = adv_other\n", "k is rebound at line 4 after its def at line 2 (it is now the kernel "
                        "adv_other)"),
    ("del k\n", "k is deleted at line 4 after its def at line 2"),
])
def test_rebound_kernel_is_the_one_its_def_made(shell, published, after, says):
    shell.run_cell("%%warp_kernel --show source\n"
                   "def adv_other(x: wl.array(dtype=wl.float32)):\n    x[wl.tid()] = 7.0\n")
    published.clear()
    res = shell.run_cell(f"%%warp_kernel --show source\n{KERNEL}{after}")
    assert res.error_in_exec is None
    names, texts = _shown(res, published)
    assert names == ["k"] and "= 1.0" in texts[0]
    assert any(says in t for t in _texts(published)), _texts(published)
    assert not any("no kernel" in t for t in _texts(published))


def test_rebound_kernel_launches_from_the_cell(shell):
    shell.user_ns["adv_y"] = y = np.zeros(4, np.float32)
    res = shell.run_cell(f'%%warp_kernel --device sim --launch "dim=4, inputs=[adv_y]"\n'
                         f"{KERNEL}k = None\n")
    assert res.error_in_exec is None and (y == 1.0).all()
    assert shell.user_ns["k"] is None


def test_a_name_defined_twice_shows_the_last_def_once(shell, published):
    res = shell.run_cell("%%warp_kernel --show source\n" + KERNEL + KERNEL.replace("1.0", "2.0"))
    names, texts = _shown(res, published)
    assert names == ["k"] and "= 2.0" in texts[0]


def test_wrapping_the_def_in_wl_kernel_keeps_the_users_kernel(shell, published):
    res = shell.run_cell(f"%%warp_kernel --show source\n{KERNEL}k = wl.kernel(debug=True)(k)\n")
    assert res.error_in_exec is None and res.result.compiled.options.debug
    assert isinstance(shell.user_ns["k"], Kernel) and shell.user_ns["k"].options == {"debug": True}
    assert not any("rebound" in t for t in _texts(published))
