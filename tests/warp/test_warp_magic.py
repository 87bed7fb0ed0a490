"""A ``%%warp_kernel`` cell takes Warp-namespace kernels: the same views, the Warp dialect
said in them, and its ``--launch`` runs the kernel with Warp's integer division."""

from __future__ import annotations

import html

import pytest


@pytest.fixture(scope="module")
def ip():
    from IPython.testing import globalipapp
    shell = globalipapp.get_ipython()
    shell.run_line_magic("load_ext", "warp_lab")
    return shell


def test_warp_kernel_cell_of_a_warp_namespace_kernel(ip):
    from warp_lab.compiler.artifact import DIALECT_LABEL
    ip.run_cell("import warp_lab.warp as wp\nimport numpy as np\n"
                "a = np.array([-7, 7, -7, 7], np.int32)\nq = np.zeros(4, np.int32)")
    view = ip.run_cell_magic("warp_kernel", "--launch dim=4,inputs=[a,q]", (
        "@wp.kernel\n"
        "def wk(a: wp.array(dtype=wp.int32), q: wp.array(dtype=wp.int32)):\n"
        "    i = wp.tid()\n"
        "    q[i] = a[i] / 2\n"))
    assert ip.user_ns["q"].tolist() == [-3, 3, -3, 3]            # C's truncation
    assert ip.user_ns["wk"].dialect == "warp"
    launch = ip.user_ns["_launch"]
    assert launch.compiled.dialect == "warp"
    assert "Warp dialect" in repr(launch.compiled)
    from warp_lab.notebook.views import kernel_html
    assert html.escape(DIALECT_LABEL) in kernel_html(launch.compiled)
    assert view is not None
