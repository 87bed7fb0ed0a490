"""The on-disk compile cache under bad entries: JSON that is not an object, entries cut
short or edited by hand, a cubin replaced, a cache path that is a file, and two processes
filling one entry at once. Each must be a miss (rebuilt, right results), never an internal
error nor a loaded artifact that differs from what the compile makes."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import warp_lab as wl
from warp_lab.compiler import cache as C

SRC = """import warp_lab as wl

@wl.kernel
def adv_disk(x: wl.array(dtype=wl.float32)):
    x[wl.tid()] = 3.0
"""


@pytest.fixture()
def disk(tmp_path, monkeypatch):
    """A fresh cache on ``tmp_path / 'cache'`` and a kernel from a real file, compiled once;
    returns (kernel, cache folder, key)."""
    folder = tmp_path / "cache"
    monkeypatch.setattr(C, "_default", C.KernelCache(str(folder)))
    path = tmp_path / "adv_disk.py"
    path.write_text(SRC)
    ns = {}
    exec(compile(SRC, str(path), "exec"), ns)  # noqa: S102 - the test's own source
    kernel = ns["adv_disk"]
    key = wl.compile(kernel, arch="sm_80").cache_key
    assert (folder / f"{key}.json").exists() and (folder / f"{key}.cubin").exists()
    return kernel, folder, key


def _edit(entry: dict, field: str):
    if field == "registers":
        entry["resources"]["registers"] = "many"
    elif field == "ptx":
        entry["ptx"] = entry["ptx"].replace("1077936128", "1084227584")  # 3.0f -> 5.0f
    elif field == "launch_ndim":
        entry["launch_ndim"] = "one"
    return entry


@pytest.mark.parametrize("json_text", ["[]", "null", '"x"', "7"])
def test_json_that_is_not_an_object_is_a_miss(disk, json_text):
    kernel, folder, key = disk
    (folder / f"{key}.json").write_text(json_text)
    assert C.KernelCache(str(folder)).get(key) is None   # was AttributeError: no .get


@pytest.mark.parametrize("field", ["registers", "ptx", "launch_ndim"])
def test_hand_edited_entry_is_a_miss(disk, field):
    kernel, folder, key = disk
    entry = folder / f"{key}.json"
    assert "1077936128" in json.loads(entry.read_text())["ptx"]   # the edit below bites
    entry.write_text(json.dumps(_edit(json.loads(entry.read_text()), field)))
    assert C.KernelCache(str(folder)).get(key) is None


@pytest.mark.parametrize("cut", [20, 0.5, -1])
def test_truncated_entry_is_a_miss(disk, cut):
    """Cut in the digest itself, in the middle, and by its closing brace only."""
    kernel, folder, key = disk
    entry = folder / f"{key}.json"
    whole = entry.read_bytes()
    assert whole.startswith(b'{"digest": "')   # found without parsing (cache._DIGEST_SPAN)
    entry.write_bytes(whole[:int(len(whole) * cut) if isinstance(cut, float) else cut])
    assert C.KernelCache(str(folder)).get(key) is None


def test_truncated_cubin_is_a_miss_and_rebuilt(disk, monkeypatch):
    kernel, folder, key = disk
    cubin = folder / f"{key}.cubin"
    whole = cubin.read_bytes()
    cubin.write_bytes(whole[:100])
    assert C.KernelCache(str(folder)).get(key) is None
    monkeypatch.setattr(C, "_default", C.KernelCache(str(folder)))   # a new process
    ck = wl.compile(kernel, arch="sm_80")
    assert ck.cubin == whole and cubin.read_bytes() == whole   # rewritten whole


def test_intact_entry_is_still_a_hit(disk):
    kernel, folder, key = disk
    ck = C.KernelCache(str(folder)).get(key)
    assert ck is not None and ck.cache_key == key and ck.resources.registers > 0


def test_cache_path_that_is_a_file_compiles_without_a_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("")
    monkeypatch.setattr(C, "_default", C.KernelCache(str(blocker / "cache")))
    path = tmp_path / "adv_disk.py"
    path.write_text(SRC)
    ns = {}
    exec(compile(SRC, str(path), "exec"), ns)  # noqa: S102 - the test's own source
    x = np.zeros(4, np.float32)
    wl.launch(ns["adv_disk"], dim=4, inputs=[x], device="sim")
    assert (x == 3.0).all() and blocker.read_text() == ""


def test_two_processes_fill_one_entry_at_once(tmp_path):
    """Both compile and both get it right; the entry left is whole (a hit), no temporaries."""
    path = tmp_path / "adv_disk.py"
    path.write_text(SRC)
    script = textwrap.dedent(f"""
        import sys, numpy as np
        sys.path.insert(0, {str(tmp_path)!r})
        import warp_lab as wl, adv_disk
        x = np.zeros(4, np.float32)
        wl.launch(adv_disk.adv_disk, dim=4, inputs=[x], device="sim")
        print(wl.compile(adv_disk.adv_disk).cache_key, x.tolist())
        """)
    env = {**os.environ, "WARP_LAB_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
    keys = {out.split()[0] for out, _ in outs}
    assert len(keys) == 1 and all("[3.0, 3.0, 3.0, 3.0]" in out for out, _ in outs)
    left = sorted(os.listdir(tmp_path / "cache"))
    assert not [n for n in left if n.startswith(".tmp-")], left
    assert C.KernelCache(str(tmp_path / "cache")).get(keys.pop()) is not None
