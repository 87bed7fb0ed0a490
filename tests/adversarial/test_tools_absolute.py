"""ptxas and nvdisasm are found only at absolute paths (issue 25): a relative ``PATH``
entry, a relative ``CUDA_HOME``/``CUDA_PATH`` or ``CONDA_PREFIX`` named the folder a
notebook happens to run in, and ``find_tool`` ran that folder's ``nvdisasm --version``.

The folder holds the attacker's programs: shell scripts named like the tools that leave
a mark when run.
"""

from __future__ import annotations

import os
import stat

import pytest

from warp_lab.compiler import toolchain


@pytest.fixture()
def planted(tmp_path, monkeypatch):
    """The current folder holds ``nvdisasm``/``ptxas`` (top level and under ``bin/``) that
    write ``ran`` when run; returns the mark's path."""
    mark = tmp_path / "ran"
    for where in (tmp_path, tmp_path / "bin"):
        where.mkdir(exist_ok=True)
        for name in ("nvdisasm", "ptxas"):
            tool = where / name
            tool.write_text(f"#!/bin/sh\necho {name} >> {mark}\n"
                            "echo 'Cuda compilation tools, release 11.8, V11.8.89'\n")
            tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.chdir(tmp_path)
    toolchain.find_tool.cache_clear()
    yield mark
    toolchain.find_tool.cache_clear()


@pytest.mark.parametrize("env", [
    {"PATH": "." + os.pathsep + os.environ.get("PATH", "")},
    {"PATH": os.pathsep + os.environ.get("PATH", "")},      # the empty entry: "."
    {"PATH": "bin" + os.pathsep + os.environ.get("PATH", "")},
    {"CUDA_HOME": "."}, {"CUDA_PATH": "."}, {"CONDA_PREFIX": "."}])
@pytest.mark.parametrize("name,sm", [("nvdisasm", 70), ("ptxas", 70), ("nvdisasm", 90),
                                     ("ptxas", 90)])
def test_no_tool_of_the_current_folder_is_run(planted, monkeypatch, env, name, sm):
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    try:
        tool = toolchain.find_tool(name, sm)
    except toolchain.ToolchainError:
        tool = None     # (sm_70 may find no tool old enough on this machine)
    assert not planted.exists(), planted.read_text()
    if tool is not None:
        assert os.path.isabs(tool.path)
        assert not os.path.realpath(tool.path).startswith(os.path.realpath(os.getcwd()))


def test_absolute_path_entries_keep_only_absolute_folders(monkeypatch):
    monkeypatch.setenv("PATH", os.pathsep.join(["", ".", "bin", "/usr/bin", "../x", "/opt/b"]))
    assert toolchain._absolute_path_entries() == os.pathsep.join(["/usr/bin", "/opt/b"])
