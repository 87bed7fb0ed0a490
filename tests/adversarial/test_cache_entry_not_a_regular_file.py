"""The disk compile cache with something other than its own files in an entry's place:
a FIFO, a symbolic link to ``/dev/zero`` or to another entry, a
folder. Each is a miss and is replaced by a regular file on the next write; none may hang
the compile (a FIFO's ``open`` waited for a writer forever, ``/dev/zero`` was read until
memory ran out), follow a link, or write through one."""

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
def adv11_disk(x: wl.array(dtype=wl.float32)):
    x[wl.tid()] = 3.0
"""


@pytest.fixture()
def disk(tmp_path, monkeypatch):
    """A kernel from a real file compiled once into a fresh cache folder; returns (kernel,
    folder, key)."""
    folder = tmp_path / "cache"
    monkeypatch.setattr(C, "_default", C.KernelCache(str(folder)))
    path = tmp_path / "adv11_disk.py"
    path.write_text(SRC)
    ns = {}
    exec(compile(SRC, str(path), "exec"), ns)  # noqa: S102 - the test's own source
    key = wl.compile(ns["adv11_disk"], arch="sm_80").cache_key
    assert (folder / f"{key}.json").is_file() and (folder / f"{key}.cubin").is_file()
    return ns["adv11_disk"], folder, key


def _get_in_a_process(folder, key) -> str:
    """``KernelCache(folder).get(key)`` in another process, 60 s at most: 'miss' or 'hit'."""
    script = textwrap.dedent(f"""
        from warp_lab.compiler import cache as C
        print("miss" if C.KernelCache({str(folder)!r}).get({key!r}) is None else "hit")
        """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    try:
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                             text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("reading the cache entry did not finish in 60 s")
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.mark.parametrize("what", ["fifo", "dev_zero"])
@pytest.mark.parametrize("suffix", [".json", ".cubin"])
def test_an_entry_that_never_ends_is_a_miss(disk, what, suffix):
    kernel, folder, key = disk
    entry = folder / f"{key}{suffix}"
    entry.unlink()
    if what == "fifo":
        os.mkfifo(entry)
    else:
        entry.symlink_to("/dev/zero")
    assert _get_in_a_process(folder, key) == "miss"


def test_a_link_to_an_intact_entry_is_a_miss_and_not_written_through(disk, monkeypatch):
    kernel, folder, key = disk
    entry = folder / f"{key}.json"
    elsewhere = folder.parent / "elsewhere.json"
    entry.rename(elsewhere)
    entry.symlink_to(elsewhere)
    before = elsewhere.read_bytes()
    assert C.KernelCache(str(folder)).get(key) is None   # the cache's files are never links
    monkeypatch.setattr(C, "_default", C.KernelCache(str(folder)))   # a new process
    x = np.zeros(4, np.float32)
    wl.launch(kernel, dim=4, inputs=[x], device="sim", arch="sm_80")
    assert (x == 3.0).all()
    assert entry.is_file() and not entry.is_symlink()   # the link replaced, not followed
    assert elsewhere.read_bytes() == before
    assert C.KernelCache(str(folder)).get(key) is not None


def test_a_folder_in_an_entrys_place_compiles_without_it(disk, monkeypatch):
    kernel, folder, key = disk
    entry = folder / f"{key}.json"
    entry.unlink()
    entry.mkdir()
    monkeypatch.setattr(C, "_default", C.KernelCache(str(folder)))
    x = np.zeros(4, np.float32)
    wl.launch(kernel, dim=4, inputs=[x], device="sim", arch="sm_80")
    assert (x == 3.0).all() and entry.is_dir()


def _forged(folder, key, kernel):
    """Rewrite the entry ``key`` to store 5.0 instead of 3.0, with a digest that matches:
    what anyone who can write into the folder can do (the digest is no secret)."""
    import json

    entry = folder / f"{key}.json"
    d = json.loads(entry.read_bytes())
    assert "1077936128" in d["ptx"]   # 3.0f
    d["ptx"] = d["ptx"].replace("1077936128", "1084227584")   # 5.0f
    d["digest"] = "0" * 64
    raw = json.dumps(d).encode()
    cubin = (folder / f"{key}.cubin").read_bytes() if d["has_cubin"] else None
    raw = raw.replace(b"0" * 64, C._digest(raw, cubin).encode(), 1)
    entry.write_bytes(raw)
    assert C.KernelCache(str(folder)).get(key).ptx == d["ptx"]   # a hit while it is private


@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o775])
def test_a_folder_others_may_write_into_is_not_used(disk, monkeypatch, mode):
    # was: the forged entry loaded and launched, x == 5.0 with no word
    kernel, folder, key = disk
    _forged(folder, key, kernel)
    folder.chmod(mode)
    cache = C.KernelCache(str(folder))
    monkeypatch.setattr(C, "_default", cache)
    x = np.zeros(4, np.float32)
    with pytest.warns(UserWarning, match=r"not using the compile cache folder .*other users "
                                         r"may write into it \(mode \d+; chmod go-w"):
        wl.launch(kernel, dim=4, inputs=[x], device="sim", arch="sm_80")
    assert (x == 3.0).all()
    assert cache.get(key).ptx.count("1077936128")   # compiled anew, kept in memory only
    folder.chmod(0o700)
    assert "1084227584" in C.KernelCache(str(folder)).get(key).ptx   # the folder untouched


def test_a_folder_of_another_user_is_not_used(tmp_path):
    if os.getuid() != 0:
        pytest.skip("only root can give a folder to another user")
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o755)
    os.chown(folder, 12345, 12345)
    assert "belongs to another user (uid 12345" in C.foreign_folder(str(folder))
    assert C.foreign_folder(str(tmp_path / "not yet")) is None   # put() makes it, 0700


@pytest.mark.parametrize("env, want", [
    ({"XDG_CACHE_HOME": "relative/cache"}, "{home}/.cache/warp_lab"),   # XDG: ignored
    ({"XDG_CACHE_HOME": ""}, "{home}/.cache/warp_lab"),
    ({"XDG_CACHE_HOME": "/x/cache"}, "/x/cache/warp_lab"),
    ({"WARP_LAB_CACHE_DIR": "~/wl cache"}, "{home}/wl cache"),   # was a folder named ~
    ({"WARP_LAB_CACHE_DIR": "rel"}, "{cwd}/rel"),
])
def test_cache_dir_is_absolute(monkeypatch, tmp_path, env, want):
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("WARP_LAB_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert C.cache_dir() == want.format(home=home, cwd=tmp_path)
