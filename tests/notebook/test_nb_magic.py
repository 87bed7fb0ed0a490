"""%%warp_kernel in a real IPython shell: options, binding, cell line numbers, error boxes."""

import ast
import inspect

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import warp_lab as wl
from warp_lab.notebook.magic import WarpKernelMagics, classify_functions


def test_classify_undecorated_functions():
    tree = ast.parse(
        "def helper(a):\n    return a * 2\n"
        "def k(x: int):\n    y = helper(x)\n"
        "@wl.func\ndef g(a):\n    return a\n"
        "def lone(x: int):\n    pass\n")
    assert classify_functions(tree) == {"helper": "func", "k": "kernel", "lone": "kernel"}


def test_recursive_self_call_does_not_make_a_func():
    tree = ast.parse("def k(x: int):\n    k(x)\n")
    assert classify_functions(tree) == {"k": "kernel"}


def test_a_function_that_returns_a_value_is_a_func():
    # a kernel cannot return a value: a helper alone in its cell is a device function
    tree = ast.parse(
        "def sq(v):\n    return v * v\n"
        "def half(v: float) -> float:\n    pass\n"
        "def k(x: int) -> None:\n    if x:\n        return\n"
        "def k2(x: int):\n    return None\n")
    assert classify_functions(tree) == {"sq": "func", "half": "func", "k": "kernel",
                                        "k2": "kernel"}


def test_helper_cell_then_kernel_cell(ip):
    # a teacher's order: the device function in one cell, the kernel that calls it in the next
    import numpy as np

    ip.user_ns["wl"] = wl
    with capture_output() as cap:
        result = ip.run_cell("%%warp_kernel\ndef sq3(v: float) -> float:\n    return v * v\n")
    assert result.error_in_exec is None, result.error_in_exec
    assert isinstance(ip.user_ns["sq3"], wl.Func)
    note = cap.outputs[0].data["text/plain"]
    assert "no kernel in this cell: sq3 is a device function" in note
    # a student who meant a kernel learns why it is not one
    assert "sq3 returns a value, which a kernel cannot" in note and "out[i] = ..." in note
    ip.run_cell_magic("warp_kernel", "--show source",
                      "def use_sq3(x: wl.array(dtype=wl.float32)):\n"
                      "    i = wl.tid()\n    x[i] = sq3(x[i])\n")
    x = np.arange(8, dtype=np.float32)
    wl.launch(ip.user_ns["use_sq3"], dim=8, inputs=[x], device="sim")
    np.testing.assert_array_equal(x, np.arange(8, dtype=np.float32) ** 2)


def _magics(ip) -> WarpKernelMagics:
    return ip.magics_manager.registry["WarpKernelMagics"]


def test_decorated_funcs_are_bound_with_cell_line_numbers(ip):
    cell = "N = 3\n\n@wl.func\ndef twice(a):\n    return a * N\n"
    ip.user_ns["wl"] = wl
    out = ip.run_cell_magic("warp_kernel", "--arch sm_80", cell)
    assert out is None  # no kernel in the cell, nothing to show
    twice = ip.user_ns["twice"]
    assert isinstance(twice, wl.Func) and ip.user_ns["N"] == 3
    # the %%warp_kernel line is line 1: the decorator sits on cell line 4
    assert twice.source.first_line == 4
    assert twice.source.filename.startswith("<cell ")
    assert inspect.getsource(twice.fn).startswith("@wl.func\ndef twice(a):")
    assert twice(2) == 6  # a device function still runs as Python on the host


def test_undecorated_helper_becomes_func_without_compiling(ip):
    # only device functions: no kernel, so nothing is compiled
    ip.run_cell_magic("warp_kernel", "", "def helper(a):\n    return a + 1\n"
                      "@wl.func\ndef user(a):\n    return helper(a)\n")
    assert isinstance(ip.user_ns["helper"], wl.Func)
    assert ip.user_ns["helper"].source.first_line == 2


def test_syntax_error_carries_cell_line(ip):
    with pytest.raises(wl.KernelCompileError) as info:
        ip.run_cell_magic("warp_kernel", "", "def k(x: int):\n    y = (x +\n")
    err = info.value
    assert err.filename.startswith("<cell ")
    assert err.line >= 3  # the unclosed parenthesis: cell line 3 or later, never 2
    assert "syntax error" in err.message


def test_compile_error_renders_as_box_not_traceback(ip):
    with capture_output() as cap:
        result = ip.run_cell("%%warp_kernel\ndef k(x: int):\n    y = (x +\n")
    assert isinstance(result.error_in_exec, wl.KernelCompileError)
    html = [o.data["text/html"] for o in cap.outputs if "text/html" in o.data]
    assert len(html) == 1 and 'class="wl-error"' in html[0]
    assert "error: syntax error" in html[0]
    assert "Traceback" not in cap.stdout + cap.stderr


def test_line_magic_sets_and_prints_defaults(ip):
    magics = _magics(ip)
    saved = dict(magics.defaults)
    try:
        ip.run_line_magic("warp_kernel", "--arch sm_75 --opt 1 --show ptx")
        assert magics.defaults == {**saved, "arch": "sm_75", "opt": 1, "show": "ptx"}
        with capture_output() as cap:
            ip.run_line_magic("warp_kernel", "")
        assert "--arch sm_75" in cap.stdout and "--opt 1" in cap.stdout
        # every line is an option one could type: no "--fast-math False", "--launch None"
        lines = cap.stdout.splitlines()
        assert not any(ln.endswith((" False", " None", " True")) or ln.endswith("--hide ")
                       for ln in lines), cap.stdout
        assert any("not set" in ln and "--launch" in ln for ln in lines), cap.stdout
    finally:
        magics.defaults.clear()
        magics.defaults.update(saved)


def test_bad_options_are_usage_errors(ip):
    with pytest.raises(UsageError, match="--show: unknown 'pxt'"):
        ip.run_cell_magic("warp_kernel", "--show pxt", "def k(x: int):\n    pass\n")
    with pytest.raises(UsageError):
        ip.run_cell_magic("warp_kernel", "--opt 7", "def k(x: int):\n    pass\n")


def test_help_text_documents_every_option(ip):
    doc = _magics(ip).warp_kernel.__doc__
    for opt in ("--arch", "--opt", "--fast-math", "--debug", "--block-dim", "--device", "--show",
                "--hide", "--launch", "--repeat", "--check", "--no-cache", "--diff",
                "--shared-mem"):
        assert opt in doc, opt


def test_help_usage_names_the_cell_magic_and_the_line_magic(ip):
    """``%%warp_kernel?`` (IPython's inspector) starts with the cell magic's usage, ``%%``,
    then the line magic's form; the line magic takes the same options."""
    with capture_output() as cap:
        ip.run_cell("%%warp_kernel?")
    usage = cap.stdout.split("::", 1)[1].split("\n\n")[1].splitlines()
    assert usage[0].lstrip().startswith("%%warp_kernel [--arch ARCH]"), cap.stdout
    line_form = [ln.strip() for ln in usage if ln.lstrip().startswith("%warp_kernel")]
    assert line_form and line_form[0].startswith("%warp_kernel [the same options]")
    assert ip.object_inspect("%%warp_kernel")["docstring"].split("\n")[2] == usage[0]
    magics = _magics(ip)
    saved = dict(magics.defaults)
    try:  # "the same options": the line magic accepts a cell-magic option
        ip.run_line_magic("warp_kernel", "--check memcheck,racecheck")
        assert magics.defaults["check"] == "memcheck,racecheck"
    finally:
        magics.defaults.clear()
        magics.defaults.update(saved)


# -- with the real compiler ---------------------------------------------------------------

SAXPY_CELL = """\
def saxpy(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32), a: float):
    # a <script>alert(1)</script> in a comment stays text
    i = wl.tid()
    y[i] = a * x[i] + y[i]
"""


def test_cell_compiles_binds_and_shows_views_with_cell_lines(ip):
    from nb_htmlparse import parse_view
    from warp_lab.notebook.bundle import MIME_TYPE

    ip.user_ns["wl"] = wl
    view = ip.run_cell_magic("warp_kernel", "--arch sm_80 --opt 2", SAXPY_CELL)
    assert isinstance(ip.user_ns["saxpy"], wl.Kernel)
    ck = view.compiled
    assert ck.options.arch == "sm_80" and ck.options.opt == 2
    assert ck.source.first_line == 2  # the %%warp_kernel line is cell line 1
    data = view._repr_mimebundle_()
    bundle = data[MIME_TYPE]
    assert bundle["panes"]["python"]["first_line"] == 2
    # `y[i] = ...` is cell line 5 and produced PTX
    assert "5" in bundle["line_map"]["ptx"]
    parsed = parse_view(data["text/html"])
    lines = {int(x["ln"]): x for x in parsed.panes["python"]}
    assert lines[5]["src"].strip() == "y[i] = a * x[i] + y[i]"
    assert "<script>alert(1)</script>" in lines[3]["src"]      # shown as text ...
    assert len(parsed.scripts) == 1 and "alert" not in parsed.scripts[0]  # ... never run


def test_displayed_compile_result_has_the_live_register_column(ip):
    """``ck = wl.compile(...)`` then ``ck`` (notebook 01) shows the same ``live regs`` columns
    beside the Python and SASS panes as the ``%%warp_kernel`` view (notebook 04 reads them)."""
    from nb_htmlparse import parse_view

    ip.user_ns["wl"] = wl
    view = ip.run_cell_magic("warp_kernel", "--arch sm_80", SAXPY_CELL)
    magic = parse_view(view._repr_mimebundle_()["text/html"])
    ck = wl.compile(ip.user_ns["saxpy"], arch="sm_80", cache=False)
    assert ck.life_ranges is None  # wl.compile keeps none: the display runs nvdisasm for them
    data, _ = ip.display_formatter.format(ck)
    shown = parse_view(data["text/html"])
    assert data["text/html"].count('<span class="wl-heat">live regs</span>') == 2
    for pane in ("python", "sass"):
        heat = {x["ln"]: x["heat"] for x in shown.panes[pane]}
        assert heat == {x["ln"]: x["heat"] for x in magic.panes[pane]}, pane
        assert any(h and h[0].isdigit() for h in sum(heat.values(), [])), pane
    from warp_lab.notebook.widgets import register_heat

    line5 = next(x for x in shown.panes["python"] if x["ln"] == "5")  # y[i] = a * x[i] + y[i]
    assert line5["heat"] == [str(register_heat(ck)[0][5])]


def test_undecorated_helper_called_by_kernel_is_a_func(ip):

    ip.user_ns["wl"] = wl
    ip.run_cell_magic("warp_kernel", "--show resources", """\
def square(v):
    return v * v

def apply(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    x[i] = square(x[i])
""")
    assert isinstance(ip.user_ns["square"], wl.Func)
    assert isinstance(ip.user_ns["apply"], wl.Kernel)


def test_type_error_reports_cell_line(ip):

    ip.user_ns["wl"] = wl
    with pytest.raises(wl.KernelCompileError) as info:
        ip.run_cell_magic("warp_kernel", "", """\
def bad(x: wl.array(dtype=wl.float32)):
    i = wl.tid()
    x[i] = undefined_thing + 1.0
""")
    assert info.value.line == 4
    assert info.value.filename.startswith("<cell ")


def test_launch_option_runs_on_the_simulator(ip):
    import numpy as np

    ip.user_ns.update(wl=wl, xs=np.arange(64, dtype=np.float32),
                      ys=np.ones(64, dtype=np.float32))
    out = ip.run_cell_magic("warp_kernel", '--device sim --launch "dim=64, inputs=[xs, ys, 3.0]"',
                            SAXPY_CELL)
    np.testing.assert_allclose(ip.user_ns["ys"], 3.0 * np.arange(64) + 1.0)
    assert out.result is ip.user_ns["_launch"]
    assert "text/html" in out._repr_mimebundle_()


LONG_CELL = """\
def spin_long(x: wl.array(dtype=wl.int32), n: int):
    i = wl.tid()
    s = 0
    for k in range(n):
        s += x[k & 63]
    x[i] = s
"""


def test_ctrl_c_during_a_launch_cell_stops_it_and_binds_the_partial_result(ip):
    """A real SIGINT during ``--launch``: the cell raises KeyboardInterrupt (it used to
    show a partial result and return, so the notebook ran on), ``_launch`` holds it."""
    import os
    import signal
    import threading

    import numpy as np

    ip.user_ns.update(wl=wl, xs=np.zeros(64, dtype=np.int32))
    ip.run_cell_magic("warp_kernel", '--device sim --launch "dim=64, inputs=[xs, 1]"',
                      LONG_CELL)   # compiled: the second run finds it in the cache
    xs = ip.user_ns["xs"] = np.zeros(64, dtype=np.int32)
    ip.user_ns.pop("_launch", None)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            ip.run_cell_magic("warp_kernel", '--device sim --launch "dim=64, inputs=[xs, '
                              '2_000_000_000], max_instructions=4_000_000_000"', LONG_CELL)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    r = ip.user_ns["_launch"]
    assert r is wl.last_launch() and r.partial
    assert [f.kind for f in r.findings] == ["interrupted"]
    assert not xs.any()


def test_repeat_help_says_arrays_are_restored_and_a_repeated_launch_adds_once(ip):
    """``--repeat``'s help promises what ``wl.launch(repeat=)`` does (docs/decisions/0004-runtime-launch-and-findings.md:
    the back ends restore written arrays between repeats): ``x[i] += 1`` three times is +1."""
    import numpy as np

    with capture_output() as cap:
        ip.run_cell("%%warp_kernel?")
    help_text = " ".join(cap.stdout.split())
    assert "restored between them" in help_text and "ends with x + 1" in help_text, cap.stdout
    ip.user_ns.update(wl=wl, xr=np.arange(40, dtype=np.float32))
    out = ip.run_cell_magic("warp_kernel", '--device sim --repeat 3 --launch "dim=40, '
                            'inputs=[xr]"',
                            "def bump(x: wl.array(dtype=wl.float32)):\n"
                            "    i = wl.tid()\n    x[i] += 1.0\n")
    assert len(out.result.times) == 3
    np.testing.assert_array_equal(ip.user_ns["xr"], np.arange(40, dtype=np.float32) + 1)


def test_diff_previous_compares_with_last_compile(ip):

    ip.user_ns["wl"] = wl
    ip.run_cell_magic("warp_kernel", "--opt 3", SAXPY_CELL)
    view = ip.run_cell_magic("warp_kernel", "--opt 0 --diff previous", SAXPY_CELL)
    html = view._repr_mimebundle_()["text/html"]
    assert "diff: saxpy" in html and "<th>opt</th><td>3</td><td>0</td>" in html


def test_show_occupancy_displays_the_widget_at_block_dim(ip):
    from warp_lab.analysis import occupancy
    from warp_lab.notebook.widgets import OccupancyWidget

    ip.user_ns["wl"] = wl
    with capture_output() as cap:
        view = ip.run_cell_magic("warp_kernel", "--arch sm_86 --show source,occupancy --block-dim 128",
                                 SAXPY_CELL)
    widgets = [o for o in cap.outputs if "application/vnd.jupyter.widget-view+json" in o.data]
    assert len(widgets) == 1
    # its rendered HTML names the cell's kernel, not "kernel"
    assert "<b>Occupancy of saxpy</b>" in widgets[0].data["text/html"]
    ck = view.compiled
    expected = occupancy(ck, "sm_86", 128)
    assert view.view_options["occupancy"] == expected
    w = OccupancyWidget(ck, arch="sm_86", block_size=128)
    assert w.occupancy == expected
    # source only: no IR panes, but the occupancy went into the bundle
    from warp_lab.notebook.bundle import MIME_TYPE
    data = view._repr_mimebundle_()
    assert data[MIME_TYPE]["occupancy"]["block_size"] == 128
    assert 'data-pane="ptx"' not in data["text/html"]


REVERSE_CELL = """\
def reverse(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    buf = wl.dynamic_shared_array(wl.float32)
    t = wl.thread_idx.x
    i = wl.block_idx.x * wl.block_dim.x + t
    buf[t] = x[i]
    wl.syncthreads()
    y[i] = buf[wl.block_dim.x - 1 - t]
"""


def test_shared_mem_option_sizes_the_occupancy_view_and_the_launch(ip):
    import numpy as np

    from warp_lab.analysis import occupancy

    ip.user_ns["wl"] = wl
    big = 40 * 1024  # bytes per block: the dynamic shared memory limits blocks per SM
    with capture_output():
        view = ip.run_cell_magic("warp_kernel", f"--arch sm_86 --show source,occupancy "
                                 f"--block-dim 128 --shared-mem {big}", REVERSE_CELL)
    expected = occupancy(view.compiled, "sm_86", 128, dynamic_shared_mem=big)
    assert view.view_options["occupancy"] == expected
    assert expected.limiter == "shared_memory"
    assert expected.active_blocks_per_sm < occupancy(view.compiled, "sm_86", 128).active_blocks_per_sm
    # --launch gets the same dynamic shared memory
    x = np.arange(512, dtype=np.float32)
    y = np.zeros_like(x)
    ip.user_ns.update(xs=x, ys=y)
    with capture_output():
        ip.run_cell_magic("warp_kernel", '--shared-mem 512 --device sim --show source '
                          '--launch "grid=4, block=128, inputs=[xs, ys]"', REVERSE_CELL)
    assert not ip.user_ns["_launch"].findings
    np.testing.assert_array_equal(y, x.reshape(4, 128)[:, ::-1].ravel())
    with pytest.raises(UsageError, match="--shared-mem -4"):
        ip.run_cell_magic("warp_kernel", "--shared-mem -4", REVERSE_CELL)


@pytest.mark.gpu
def test_launch_on_gpu_shows_time_distribution_and_bandwidth(ip):
    import numpy as np
    from warp_lab.runtime.device import cuda_devices

    devices, why = cuda_devices()
    if not devices:
        pytest.skip(f"no usable CUDA GPU: {why}")
    n = 1 << 20
    ip.user_ns.update(wl=wl, xs=np.ones(n, dtype=np.float32), ys=np.ones(n, dtype=np.float32))
    out = ip.run_cell_magic("warp_kernel", f'--device cuda --repeat 20 --launch "dim={n}, '
                            'inputs=[xs, ys, 2.0]"', SAXPY_CELL)
    r = out.result
    assert r.device.kind == "cuda" and len(r.times) == 20
    np.testing.assert_array_equal(ip.user_ns["ys"], np.full(n, 3.0, np.float32))
    html = out._repr_mimebundle_()["text/html"]
    assert html.count('<svg class="wl-chart"') == 1 and "kernel time over repeats" in html
    assert f"achieved {r.bandwidth / 1e9:.1f} GB/s" in html


def test_hide_drops_panes_and_printf_output_is_shown(ip):
    import numpy as np
    from nb_htmlparse import parse_view

    ip.user_ns.update(wl=wl, vals=np.arange(4, dtype=np.int32))
    with capture_output() as cap:
        out = ip.run_cell_magic(
            "warp_kernel", '--device sim --hide llvm,sass --launch "dim=4, inputs=[vals]"',
            'def shout(v: wl.array(dtype=wl.int32)):\n'
            '    i = wl.tid()\n'
            '    wl.printf("<lane %d> has %d\\n", i, v[i] * 10)\n')
    kernel_view = parse_view(cap.outputs[-1].data["text/html"])
    assert set(kernel_view.panes) == {"python", "ptx"}
    lines = out.result.printed.splitlines()
    assert sorted(lines) == [f"<lane {k}> has {10 * k}" for k in range(4)]
    html = out._repr_mimebundle_()["text/html"]
    assert "&lt;lane 3&gt; has 30" in html
    assert ip.magics_manager.registry["WarpKernelMagics"].previous["shout"] is \
        ip.user_ns["_launch"].compiled


OOB_CELL = "def oob(x: wl.array(dtype=wl.float32)):\n    i = wl.tid()\n    x[i + 1] = 1.0\n"


def test_the_bound_kernel_keeps_the_cells_compile_options(ip):
    """A student's `%%warp_kernel --debug` cell, then wl.launch of the kernel it bound: the
    launch runs the debug build (bounds checks), as Numba's @cuda.jit(debug=True) would."""
    import numpy as np

    ip.user_ns["wl"] = wl
    with capture_output():
        view = ip.run_cell_magic("warp_kernel", "--debug --opt 1 --arch sm_75 --show resources",
                                 OOB_CELL)
    # the view says it is a debug build, as the repr and the bundle do
    assert "oob — sm_75 -O1 debug</div>" in view._repr_mimebundle_()["text/html"]
    assert repr(view.compiled).startswith("<CompiledKernel oob for sm_75 -O1 debug")
    oob = ip.user_ns["oob"]
    assert oob.options == {"debug": True, "opt": 1, "arch": "sm_75"}
    x = np.zeros(32, np.float32)
    res = wl.launch(oob, dim=32, inputs=[x], device="sim")
    assert [f.kind for f in res.findings] == ["trap"], [str(f) for f in res.findings]
    assert "index 32 out of bounds for axis 0 with size 32" in res.printed
    assert (x == 0).all()                          # aborted before any store
    assert res.device.arch == "sm_75" and "sm_75" in str(res.device)   # what the sim ran
    ck = wl.compile(oob, sass=False)
    assert (ck.options.arch, ck.options.opt, ck.options.debug) == ("sm_75", 1, True)
    assert ".target sm_75" in ck.ptx
    # the caller's own choice wins over the kernel's
    res = wl.launch(oob, dim=32, inputs=[x], device="sim", debug=False)
    assert [f.kind for f in res.findings] == ["out_of_bounds"], [str(f) for f in res.findings]

    # a cell without options binds a kernel that carries none: the defaults
    with capture_output():
        ip.run_cell_magic("warp_kernel", "--show resources", OOB_CELL)
    assert ip.user_ns["oob"].options == {}
    assert wl.compile(ip.user_ns["oob"], sass=False).options.debug is False


def test_decorator_options_are_kept_unless_the_cell_chooses(ip):
    ip.user_ns["wl"] = wl
    cell = "@wl.kernel(debug=True, opt=0)\n" + OOB_CELL
    with capture_output():
        view = ip.run_cell_magic("warp_kernel", "--show ptx", cell)
    assert ip.user_ns["oob"].options == {"debug": True, "opt": 0}
    assert view.compiled.options.debug and view.compiled.options.opt == 0   # the view too
    with capture_output():
        view = ip.run_cell_magic("warp_kernel", "--show ptx --opt 2", cell)
    assert ip.user_ns["oob"].options == {"debug": True, "opt": 2}
    assert view.compiled.options.opt == 2


def test_kernel_decorator_options_are_checked():
    with pytest.raises(TypeError, match="unknown option.*bogus"):
        wl.kernel(bogus=1)
    with pytest.raises(ValueError, match="opt must be 0, 1, 2 or 3"):
        wl.kernel(opt=7)
    with pytest.raises(ValueError, match="unsupported|sm_"):
        wl.kernel(arch="sm_10")


def test_line_expansion_skips_only_the_launch_text(ip):
    """IPython's $name/{expression} expansion, done by the magic itself: every option but
    --launch's value (also as --launch=TEXT or argparse's --lau abbreviation) is expanded;
    $$ and {{ }} stand for the characters; a dict in --launch no longer stops the others'
    expansion (IPython expanded all or nothing)."""
    magics = _magics(ip)
    saved = dict(magics.defaults)
    ip.user_ns.update(arch_v="sm_86", bd_v=48)
    try:
        expand = magics._expand_line
        assert expand("--arch $arch_v --block-dim {bd_v * 2}") == [
            "--arch", "sm_86", "--block-dim", "96"]
        assert expand("--arch {arch_v} --launch \"inputs={bd_v}, d={'k': 1}\"") == [
            "--arch", "sm_86", "--launch", "\"inputs={bd_v}, d={'k': 1}\""]
        assert expand("--launch='dim=$bd_v' --show {arch_v}") == [
            "--launch='dim=$bd_v'", "--show", "sm_86"]
        assert expand("--lau {bd_v} --check $$x{{y}}") == ["--lau", "{bd_v}", "--check", "$x{y}"]
        ip.run_line_magic("warp_kernel", "--arch $arch_v --block-dim {bd_v}")
        assert (magics.defaults["arch"], magics.defaults["block_dim"]) == ("sm_86", 48)
    finally:
        magics.defaults.clear()
        magics.defaults.update(saved)


def test_show_occupancy_at_a_block_dim_between_warp_steps(ip):
    """--block-dim 48 (a launch's own block): the widget and its static card say 48 threads
    and the occupancy of 48 (the warp-step slider showed 64)."""
    from warp_lab.analysis import occupancy

    ip.user_ns["wl"] = wl
    with capture_output() as cap:
        view = ip.run_cell_magic("warp_kernel", "--arch sm_86 --show occupancy --block-dim 48",
                                 SAXPY_CELL)
    card = next(o.data["text/html"] for o in cap.outputs
                if "application/vnd.jupyter.widget-view+json" in o.data)
    expected = occupancy(view.compiled, "sm_86", 48)
    assert view.view_options["occupancy"] == expected and expected.block_size == 48
    assert "48 threads = 2 warps" in card and f"{expected.occupancy:.0%} (" in card


def test_a_kernel_that_does_not_compile_is_bound_and_launching_it_says_why(ip):
    # the README's magic section: the failed cell binds the kernel as it now reads (as
    # @wl.kernel in a plain cell would), so a later launch repeats the located error and
    # never runs the kernel an earlier cell compiled under that name
    import numpy as np

    good = "def twice_k(x: wl.array(dtype=wl.float32)):\n    i = wl.tid()\n    x[i] *= 2.0\n"
    ip.user_ns["wl"] = wl
    with capture_output():
        assert ip.run_cell("%%warp_kernel\n" + good).success
    old = ip.user_ns["twice_k"]
    with capture_output():
        result = ip.run_cell("%%warp_kernel\n" + good.replace("2.0", "undefined_thing"))
    err = result.error_in_exec
    assert isinstance(err, wl.KernelCompileError) and (err.line, err.col) == (4, 13), err
    now = ip.user_ns["twice_k"]
    assert isinstance(now, wl.Kernel) and now is not old
    x = np.ones(4, np.float32)
    with pytest.raises(wl.KernelCompileError) as again:
        wl.launch(now, dim=4, inputs=[x], device="sim")
    assert (again.value.filename, again.value.line, again.value.col) == \
        (err.filename, err.line, err.col)
    assert "undefined_thing" in again.value.message
    assert x.tolist() == [1.0] * 4          # the old kernel did not run in its place


def test_quoted_whole_number_options_are_taken_as_quoted_words_are(ip):
    # magic_arguments splits the line non-POSIX, so "128" kept its quotes: --arch "sm_80"
    # was taken and --block-dim "128" was "invalid int value: '\"128\"'"
    magics = _magics(ip)
    saved = dict(magics.defaults)
    try:
        ip.run_line_magic("warp_kernel", "--arch \"sm_75\" --opt '1' --block-dim \"128\" "
                                         "--maxrregcount \"32\" --repeat '2' --shared-mem \"0\"")
        assert magics.defaults == {**saved, "arch": "sm_75", "opt": 1, "block_dim": 128,
                                   "maxrregcount": 32, "repeat": 2, "shared_mem": 0}
        with pytest.raises(UsageError, match="invalid int value"):
            ip.run_line_magic("warp_kernel", "--block-dim \"12x\"")
        with pytest.raises(UsageError, match="invalid choice"):
            ip.run_line_magic("warp_kernel", "--opt \"7\"")
    finally:
        magics.defaults.clear()
        magics.defaults.update(saved)
