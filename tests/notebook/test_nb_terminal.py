"""%%warp_kernel in a terminal IPython: the panes a cell asks for, as text (issue 21).

Checked in a real InteractiveShell (no Jupyter kernel, as a terminal's) and in a real
``ipython`` process reading the cell from its stdin: the text/plain the display hook
prints holds the ``--show`` panes in order, each line after the Python line it came
from, which is checked against the PTX's own ``.loc`` directives (the line every
instruction after one belongs to), not against the source map the margin is made of.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest

from warp_lab.notebook.terminal import TerminalKernelView, kernel_terminal_text, terminal_colour
from warp_lab.notebook.views import pane_text

CELL = """%%warp_kernel {options}
import warp_lab as wl
def scale(x: wl.array(wl.float32), a: float):
    i = wl.tid()
    if i < x.shape[0]:
        x[i] = a * x[i]
"""
ANSI = re.compile(r"\x1b\[[0-9;]*m")
_last: dict = {}     # the view the last _text made


def _text(ip, options: str) -> str:
    result = ip.run_cell(CELL.format(options=options))
    assert result.error_in_exec is None, result.error_in_exec
    view = result.result
    assert isinstance(view, TerminalKernelView)
    _last["view"] = view      # (the shell's ``_`` is the user's own once a test assigned it)
    return view._repr_mimebundle_()["text/plain"]


def _pane_titles(text: str) -> list[str]:
    return re.findall(r"^── (Python|LLVM IR \(optimised\)|PTX|SASS) ──", text, re.M)


def test_show_ptx_prints_the_ptx_with_its_python_lines_in_the_margin(ip):
    ip.colors = "nocolor"
    text = _text(ip, "--show ptx")
    assert "\x1b[" not in text
    assert _pane_titles(text) == ["PTX"] and "_.compiled.ptx" in text  # where it is
    ck = _last["view"].compiled
    rows = [line for line in text.split("\n") if " │ " in line]
    # every PTX line, as the pane shows it (the cell named In[N])
    assert [r.split(" │ ", 1)[1] for r in rows] == pane_text(ck, "ptx").removesuffix("\n").split("\n")
    # the margin against the PTX's own .loc lines: an instruction after `.loc 1 L C`
    # is from cell line L; directives, labels and blank lines carry no number
    loc = None
    checked = 0
    for row in rows:
        margin, code = row.split(" │ ", 1)
        m = re.match(r"\s*\.loc\s+1\s+(\d+)\s", code)
        if m:
            loc = int(m.group(1)) or None
            continue
        if margin.strip():
            assert loc is not None and int(margin) == loc, row
            checked += 1
        if re.match(r"\s+(@%p\d+\s+)?(ld|st|mul|mad|setp)\.", code):
            assert margin.strip(), f"an instruction without its Python line: {row}"
    assert checked >= 5
    assert {int(r.split(" │ ")[0]) for r in rows if r.split(" │ ")[0].strip()} <= {3, 4, 5, 6}


def test_every_pane_in_the_order_asked_the_resources_and_the_diff(ip):
    ip.colors = "nocolor"
    text = _text(ip, "--show sass,source,llvm,resources")
    assert _pane_titles(text) == ["SASS", "Python", "LLVM IR (optimised)"]
    python = text.split("── Python ──")[1].split("\n── ")[0]
    assert "\n4 │     i = wl.tid()" in python and "\n6 │         x[i] = a * x[i]" in python
    sass = text.split("── SASS ──")[1].split("\n── ")[0]
    assert "//## File" not in sass and re.search(r"^\s*\d+ │ /\*[0-9a-f]{4}\*/", sass, re.M)
    assert "── Resources (sm_" in text and re.search(r"^  registers / thread\s+\d+$", text, re.M)
    assert "ptxas" in text and "/" + "bin/ptxas" not in text  # a version, no local path
    diffed = _text(ip, "--opt 0 --show ptx --diff previous")
    assert "── diff: scale" in diffed and re.search(r"^  opt\s+3 → 0$", diffed, re.M)
    assert "── PTX: +" in diffed and "\n+\t" in diffed


def test_colour_follows_ipython_and_the_terminal(ip, monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    ip.colors = "nocolor"
    assert not terminal_colour(ip, Tty())
    ip.colors = "neutral"
    assert terminal_colour(ip, Tty()) and not terminal_colour(ip, io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not terminal_colour(ip, Tty())
    ip.colors = "nocolor"
    ck = _last["view"].compiled
    coloured = kernel_terminal_text(ck, show=("ptx",), colour=True)
    plain = kernel_terminal_text(ck, show=("ptx",))
    assert "\x1b[" in coloured and ANSI.sub("", coloured) == plain


def test_a_terminal_ipython_process_prints_the_pane(tmp_path):
    """``ipython`` itself, the cell typed on its stdin: the PTX pane, not a one-line repr."""
    source = "%load_ext warp_lab\n" + CELL.format(options="--show ptx") + "\n\nexit\n"
    env = {**os.environ, "IPYTHONDIR": str(tmp_path), "NO_COLOR": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [os.path.dirname(os.path.dirname(
               os.path.dirname(os.path.abspath(__file__)))), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "IPython", "--simple-prompt", "--colors=nocolor",
                           "--no-banner", "--HistoryManager.enabled=False"],
                          input=source, capture_output=True, text=True, timeout=120, env=env,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "── PTX ──" in out and "_.compiled.ptx" in out, out[-2000:]
    assert re.search(r"^\s*6 │ \s*st\.global\.", out, re.M), out[-3000:]  # x[i] = a * x[i]
    assert "── Python ──" not in out and "── SASS ──" not in out
