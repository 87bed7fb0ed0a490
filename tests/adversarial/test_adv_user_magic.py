"""A new user's mistakes in ``%%warp_kernel`` cells, in a real IPython shell.

Found by using warp_lab as the README says and then feeding it bad cells:
each must end in a one-line UsageError or a warp_lab error box that names
the cell the notebook shows (``In [N]``), never a traceback through
warp_lab's own frames or a silently ignored function.
"""

import numpy as np
import pytest
from IPython.core.error import UsageError

import warp_lab as wl

KERNEL = ("def {name}(x: wl.array(dtype=wl.int32)):\n"
          "    x[wl.tid()] = 1\n")


@pytest.fixture()
def shell(ip):
    ip.run_cell("import warp_lab as wl\nimport numpy as np\nau_x = np.zeros(4, np.int32)")
    return ip


def test_cell_name_is_the_number_the_notebook_shows(shell):
    """IPython 9 counts the cell before running it: <cell N> must still be In [N]."""
    # the session's shell runs most test cells unnumbered (all at one count): start at counts
    # no earlier cell used, as a notebook's cells are numbered one by one
    shell.execution_count += 10_000
    res = shell.run_cell("%%warp_kernel --show source\n" + KERNEL.format(name="au_named"),
                         store_history=True)  # numbered cells, as in a notebook
    assert res.error_in_exec is None
    assert shell.user_ns["au_named"].source.filename == f"<cell {res.execution_count}>"
    bad = shell.run_cell("%%warp_kernel\ndef au_bad(x: wl.array(dtype=wl.int32)):\n"
                         "    x[0] = nope\n", store_history=True)
    assert isinstance(bad.error_in_exec, wl.KernelCompileError)
    assert bad.error_in_exec.filename == f"<cell {bad.execution_count}>"
    assert bad.error_in_exec.line == 3


def test_kernel_in_an_ordinary_cell_is_labelled_like_ipython(shell, published):
    """A @wl.kernel cell's error box says In[N] (IPython's name), not a temporary file."""
    res = shell.run_cell("@wl.kernel\ndef au_plain(x: wl.array(dtype=wl.float32)):\n"
                         "    x[0] = undefined_here\n"
                         "wl.compile(au_plain)\n", store_history=True)
    assert isinstance(res.error_in_exec, wl.KernelCompileError)
    text = "\n".join(str(d.get("text/plain", "")) for d in published)
    assert f"In[{res.execution_count}]:3:12: error: name 'undefined_here'" in text, text


def test_unclosed_quote_in_the_options_is_a_usage_error(shell):
    res = shell.run_cell('%%warp_kernel --launch "dim=4\n' + KERNEL.format(name="au_quote"))
    assert isinstance(res.error_in_exec, UsageError)
    assert "No closing quotation" in str(res.error_in_exec)


@pytest.mark.parametrize("launch, message", [
    ('"dim=4, inputs=[au_x"', "'[' at column 15 was never closed"),
    ('"dim=4 inputs=[au_x]"', "Perhaps you forgot a comma? at column 5"),
])
def test_launch_syntax_error_is_located_in_the_users_text(shell, launch, message):
    res = shell.run_cell(f"%%warp_kernel --show source --launch {launch}\n"
                         + KERNEL.format(name="au_launch"))
    assert isinstance(res.error_in_exec, wl.LaunchError)
    assert message in str(res.error_in_exec)
    assert "')' does not match" not in str(res.error_in_exec)


def test_top_level_async_def_is_refused_not_ignored(shell):
    res = shell.run_cell("%%warp_kernel\nasync def au_async(x: wl.array(dtype=wl.int32)):\n"
                         "    x[0] = 1\n")
    err = res.error_in_exec
    assert isinstance(err, wl.KernelCompileError), err
    assert (err.line, err.col) == (2, 1) and "async" in err.message


def test_cell_level_exception_shows_the_cell_not_the_magic(shell, capsys):
    res = shell.run_cell("%%warp_kernel\n" + KERNEL.format(name="au_raise")
                         + "raise ValueError('from the cell')\n")
    assert isinstance(res.error_in_exec, ValueError)
    out = capsys.readouterr()
    tb = out.out + out.err
    assert "<cell " in tb and "----> 4 raise ValueError('from the cell')" in tb
    assert "magic.py" not in tb, tb


def test_launched_kernel_writes_through(shell):
    """The fixes above keep --launch working: au_x is written by the cell's kernel."""
    shell.run_cell("au_x = np.zeros(4, np.int32)")
    res = shell.run_cell('%%warp_kernel --show source --device sim '
                         '--launch "dim=4, inputs=[au_x]"\n' + KERNEL.format(name="au_ok"))
    assert res.error_in_exec is None
    np.testing.assert_array_equal(shell.user_ns["au_x"], np.ones(4, np.int32))


@pytest.mark.parametrize("line", ["--block-dim 2000", "--block-dim 1025 --show occupancy"])
def test_block_dim_over_1024_is_a_usage_error(shell, line):
    """It used to compile and show 'occupancy 0%' in the card beside a widget clamped to 1024."""
    res = shell.run_cell(f"%%warp_kernel {line}\n" + KERNEL.format(name="au_block"))
    assert isinstance(res.error_in_exec, UsageError)
    assert "at most 1024 threads per block" in str(res.error_in_exec)


def test_line_magic_refuses_a_block_dim_default_over_1024(shell):
    """A default of 5000 made every later --launch cell fail; refuse it where it is set."""
    magics = shell.magics_manager.registry["WarpKernelMagics"]
    before = dict(magics.defaults)
    with pytest.raises(UsageError, match="at most 1024"):
        shell.run_line_magic("warp_kernel", "--block-dim 5000")
    assert magics.defaults == before


def test_quoted_show_list_is_accepted_like_the_launch_expression(shell):
    """--launch needs quotes, so learners quote --show too: "source, ptx" means source,ptx."""
    res = shell.run_cell('%%warp_kernel --show "source, ptx"\n' + KERNEL.format(name="au_show"))
    assert res.error_in_exec is None
    assert res.result.view_options["show"] == ("source", "ptx")


def test_occupancy_widget_of_a_kernel_ptxas_refused_says_why():
    """A kernel whose PTX ptxas refuses has no resources, and the widget says why
    instead of raising an AttributeError. (The compiler now refuses what used to make
    ptxas fail here, 300 array parameters, itself; so the PTX is broken by hand and the
    refusal is ptxas's own, recorded the way ``wl.compile`` records it.)"""
    import dataclasses

    from adv_cells import cell_kernel
    from warp_lab.compiler import toolchain
    from warp_lab.errors import ToolchainError
    from warp_lab.notebook.widgets import OccupancyWidget

    ck = wl.compile(cell_kernel("@wl.kernel\ndef one(p: wl.array(dtype=wl.float32)):\n"
                                "    p[0] = 1.0\n"), arch="sm_90", sass=False)
    broken = ck.ptx.replace("ret;", "no_such_instruction;")
    with pytest.raises(ToolchainError, match="ptxas failed") as exc:
        toolchain.make_cubin(broken, ck.options, ck.entry)
    ck = dataclasses.replace(ck, ptx=broken, cubin=None, resources=None,
                             missing={"cubin": str(exc.value), "resources": str(exc.value)})
    with pytest.raises(ValueError, match="ptxas gave none: ptxas failed"):
        OccupancyWidget(ck)


def test_a_view_named_twice_is_shown_once(shell):
    """--show ptx,ptx,source,ptx drew the PTX pane twice (and source twice)."""
    res = shell.run_cell("%%warp_kernel --show ptx,ptx,source,ptx\n"
                         + KERNEL.format(name="au_twice"))
    assert res.error_in_exec is None
    assert res.result.view_options["show"] == ("ptx", "source")
    bundle = res.result._repr_mimebundle_()
    page = (bundle[0] if isinstance(bundle, tuple) else bundle)["text/html"]
    once = shell.run_cell("%%warp_kernel --show ptx,source\n" + KERNEL.format(name="au_twice"))
    bundle = once.result._repr_mimebundle_()
    single = (bundle[0] if isinstance(bundle, tuple) else bundle)["text/html"]
    assert page.count(".entry") == single.count(".entry") > 0
