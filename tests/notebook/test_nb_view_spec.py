"""The view description (``view`` in the kernel bundle): the panes a cell's ``--show`` and
``--hide`` leave, in their order, with the pane table's titles; the resource card's rows
(the static card's own, no local paths); the ``--diff previous`` table; and the static
HTML view showing the same panes. Real compiles (llvmlite, ptxas, nvdisasm, NVRTC) in a
real IPython shell."""

import json

import pytest
from IPython.utils.capture import capture_output

import warp_lab as wl
from nb_htmlparse import parse_view
from warp_lab.notebook.bundle import MIME_TYPE
from warp_lab.notebook.magic import SHOW_CHOICES
from warp_lab.notebook.panes import PANES, SHOW_NAMES, pane_spec, panes_for

CELL = """\
def k_view(x: wl.array(dtype=wl.float32), y: wl.array(dtype=wl.float32)):
    i = wl.tid()
    y[i] = x[i] * 2.0
"""

CUDA = '''extern "C" __global__ void k_cuda(float* y) { y[threadIdx.x] *= 2.0f; }
'''


def _bundle(view) -> dict:
    return json.loads(json.dumps(view._repr_mimebundle_()[MIME_TYPE]))  # as the front end gets it


def _run(ip, line: str, cell: str = CELL, magic: str = "warp_kernel"):
    ip.user_ns["wl"] = wl
    with capture_output():
        return ip.run_cell_magic(magic, line, cell)


def test_the_pane_table_gives_the_show_choices_and_each_front_ends_panes():
    assert SHOW_CHOICES[:len(SHOW_NAMES)] == SHOW_NAMES == ("source", "llvm", "ptx", "sass")
    assert [p.key for p in panes_for("python")] == ["python", "llvm", "llvm_unoptimized",
                                                     "ptx", "sass"]
    cuda = panes_for("cuda")
    assert [p.key for p in cuda] == ["cuda", "llvm", "ptx", "sass"]
    assert [p.absent_reason("cuda") is not None for p in cuda] == [False, True, False, False]
    assert "NVVM IR" in pane_spec("llvm").absent_reason("cuda")
    assert [p.key for p in panes_for("python", ["sass", "source"])] == ["sass", "python"]
    assert all(p.slot in ("python", "llvm", "llvm_unoptimized", "ptx", "sass") for p in PANES)
    with pytest.raises(KeyError, match="the panes are python, cuda"):
        pane_spec("nvvm")
    with pytest.raises(ValueError, match="unknown front end 'fortran'"):
        panes_for("fortran")


@pytest.mark.parametrize("line, keys", [
    ("--arch sm_80", ["python", "llvm", "llvm_unoptimized", "ptx", "sass"]),
    ("--arch sm_80 --show ptx,sass", ["ptx", "sass"]),
    ("--arch sm_80 --show sass,source", ["sass", "python"]),
    ("--arch sm_80 --hide llvm,sass", ["python", "ptx"]),
    ("--arch sm_80 --show source,ptx --hide source", ["ptx"]),
])
def test_the_bundle_lists_the_shown_panes_in_order_as_the_html_does(ip, line, keys):
    view = _run(ip, line)
    bundle = _bundle(view)
    panes = bundle["view"]["panes"]
    assert [p["key"] for p in panes] == keys
    assert [p["title"] for p in panes] == [pane_spec(k).title for k in keys]
    for p in panes:  # each names a text the bundle holds
        assert bundle["panes"][p["slot"]]["text"], p
    html_panes = list(parse_view(view._repr_mimebundle_()["text/html"]).panes)
    assert html_panes == keys


def test_the_resource_rows_are_the_static_cards_without_paths(ip):
    view = _run(ip, "--arch sm_80")
    data = view._repr_mimebundle_()
    res = _bundle(view)["view"]["resources"]
    assert res["arch"] == "sm_80"
    labels = [label for label, _ in res["rows"]]
    assert labels[:2] == ["registers / thread", "spill stores / loads"]
    assert dict(res["rows"])["registers / thread"] == str(view.compiled.resources.registers)
    html = data["text/html"]
    for label, value in res["rows"]:
        assert f"<th>{label}</th><td>{value}</td>" in html.replace("&#x27;", "'"), label
    ptxas = dict(res["rows"])["ptxas"]
    assert "/" not in ptxas and ptxas[0].isdigit()   # a version, no path
    assert "/ptxas" not in html and "/bin/" not in html
    assert _bundle(_run(ip, "--arch sm_80 --hide resources"))["view"]["resources"] is None


def test_diff_previous_goes_into_the_bundle(ip):
    first = _bundle(_run(ip, "--arch sm_80 --diff previous", CELL.replace("k_view", "k_diff")))
    assert first["view"]["diff"] == {"missing": "no earlier compile of this kernel"}
    changed = CELL.replace("k_view", "k_diff").replace("* 2.0", "* 2.0 + x[i]")
    second = _bundle(_run(ip, "--arch sm_80 --diff previous", changed))
    d = second["view"]["diff"]
    assert [b["title"] for b in d["blocks"]] == ["PTX", "SASS"]
    ptx = d["blocks"][0]
    assert ptx["summary"].startswith("+") and ptx["open"] and any(
        line.startswith("+") and not line.startswith("+++") for line in ptx["lines"])
    assert d["a_label"].endswith("(previous)")
    assert _bundle(_run(ip, "--arch sm_80", changed))["view"]["diff"] is None


def test_a_cuda_kernels_source_pane_is_cuda_cpp_and_its_llvm_pane_says_why_not(ip):
    pytest.importorskip("cuda.bindings.nvrtc")
    view = _run(ip, "--arch sm_80", CUDA, magic="cuda_kernel")
    panes = _bundle(view)["view"]["panes"]
    assert [(p["key"], p["title"], p["language"], p["slot"]) for p in panes[:2]] == [
        ("cuda", "CUDA C++", "cuda", "python"), ("llvm", "LLVM IR (optimised)", "llvm", "llvm")]
    assert "NVRTC does not expose its NVVM IR" in panes[1]["absent"]
    assert [p["absent"] for p in panes if p["key"] != "llvm"] == [None, None, None]
    html = view._repr_mimebundle_()["text/html"]
    assert "<summary>CUDA C++" in html and "<summary>Python" not in html
