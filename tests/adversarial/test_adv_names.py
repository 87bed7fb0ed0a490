"""Names PTX cannot carry as written: non-ASCII kernel names (valid Python identifiers)
and file paths with a quote, a backslash, a non-ASCII letter or a control character.

LLVM writes such a ``DIFile`` name into PTX ``.file`` with C escapes; ptxas refuses a
``\\"`` and keeps the others escaped, so findings and panes named ``<cell of \\320\\272...>``
instead of the cell, and a quote in a path left the kernel without a cubin."""

import importlib.util

import numpy as np
import pytest

import warp_lab as wl
from adv_cells import cell_kernel
from warp_lab.notebook.views import pane_text


def test_non_ascii_kernel_name_findings_and_panes_name_the_cell():
    kernel = cell_kernel("""
        @wl.kernel
        def ключ(x: wl.array(dtype=wl.float32)):
            x[wl.tid() + 1] = 1.0
        """)
    cell = kernel.source.filename
    ck = wl.compile(kernel, arch="sm_80")
    assert ck.cubin is not None, ck.missing
    file_lines = [ln for ln in pane_text(ck, "ptx").splitlines() if ".file" in ln]
    assert file_lines and all(f'"{cell}"' in ln for ln in file_lines), file_lines
    assert "\\" not in "".join(ln for ln in pane_text(ck, "sass").splitlines() if "File" in ln)
    res = wl.launch(kernel, dim=2, inputs=[np.zeros(2, np.float32)], device="sim")
    assert [(f.kind, f.source_file, f.source_line) for f in res.findings] == \
        [("out_of_bounds", cell, 3)]


@pytest.mark.parametrize("folder", ['dq"quote', "back\\slash", "ключ", "tab\there"])
def test_kernel_in_a_file_whose_path_ptx_cannot_carry(tmp_path, folder):
    path = tmp_path / folder / "k.py"
    path.parent.mkdir()
    path.write_text("import warp_lab as wl\n\n@wl.kernel\ndef k(x: wl.array(dtype=wl.float32)):\n"
                    "    x[wl.tid() + 1] = 1.0\n")
    spec = importlib.util.spec_from_file_location(f"adv_path_{abs(hash(folder))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ck = wl.compile(module.k, arch="sm_80")
    assert ck.cubin is not None and ck.sass, ck.missing   # a quote made ptxas fail
    assert f'"{path}"' in pane_text(ck, "ptx")
    res = wl.launch(module.k, dim=2, inputs=[np.zeros(2, np.float32)], device="sim")
    assert [(f.source_file, f.source_line) for f in res.findings] == [(str(path), 5)]
