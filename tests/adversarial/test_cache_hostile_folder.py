"""The disk cache against a folder swapped under it and crafted entries in the user's own
folder (issue 25).

- Swap race: the cache checked that its folder was the user's own, then opened the
  entries by path; another user who may write the folder's parent (a team folder on
  JupyterHub or HPC with no sticky bit) could swap the folder in between: 1% of reads
  returned the attacker's PTX. Now a get opens the folder once, checks what it opened
  and reads both files relative to that descriptor.
- Crafted entries: 200,000 nested JSON lists (a valid digest: the digest is no secret)
  raised RecursionError out of wl.compile, an 8 GiB sparse file MemoryError; both are
  misses, the size looked at before a byte is read and the digest before the parse.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
import tracemalloc
import warnings

import pytest

import warp_lab as wl
from warp_lab.compiler import cache as C

SRC = """import warp_lab as wl

@wl.kernel
def hostile_folder(x: wl.array(dtype=wl.float32)):
    x[wl.tid()] = 5.0
"""

EVIL = "// the attacker's PTX\n"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """The kernel compiled once into a cache folder: (kernel, folder, key)."""
    root = tmp_path_factory.mktemp("hostile")
    folder = root / "cache"
    path = root / "hostile_folder.py"
    path.write_text(SRC)
    ns: dict = {}
    exec(compile(SRC, str(path), "exec"), ns)  # noqa: S102 - the test's own source
    saved = C._default
    C._default = C.KernelCache(str(folder))
    try:
        ck = wl.compile(ns["hostile_folder"], arch="sm_80")
    finally:
        C._default = saved
    return ns["hostile_folder"], folder, ck.cache_key


@pytest.fixture()
def entry(compiled, tmp_path, monkeypatch):
    """A copy of the compiled entry in a fresh cache folder of the user's own, the
    process's cache (memory part empty): (kernel, folder, key, the entry's JSON)."""
    kernel, original, key = compiled
    folder = tmp_path / "cache"
    shutil.copytree(original, folder)
    os.chmod(folder, 0o700)
    monkeypatch.setattr(C, "_default", C.KernelCache(str(folder)))
    d = json.loads((folder / f"{key}.json").read_bytes())
    return kernel, folder, key, d


def _write_entry(folder, key, d: dict, cubin: bytes | None) -> None:
    """An entry as an attacker writes it: any JSON, with the right digest."""
    folder.mkdir(exist_ok=True)
    raw = json.dumps({**d, "digest": C._NO_DIGEST.decode()}).encode() if isinstance(d, dict) \
        else d
    raw = raw[:C._DIGEST_SPAN.start] + C._digest(raw, cubin).encode() + raw[C._DIGEST_SPAN.stop:]
    (folder / f"{key}.json").write_bytes(raw)
    if cubin is not None:
        (folder / f"{key}.cubin").write_bytes(cubin)


def test_a_folder_swapped_in_while_the_cache_reads_is_never_read(entry, tmp_path):
    kernel, folder, key, d = entry
    cubin = (folder / f"{key}.cubin").read_bytes()
    evil = tmp_path / "evil"
    _write_entry(evil, key, {**d, "ptx": EVIL}, cubin)
    os.chmod(evil, 0o777)             # another user's: writable by others (foreign_folder)
    assert C.foreign_folder(str(evil)) is not None
    aside = tmp_path / "aside"
    stop = threading.Event()

    def swap():
        # the attacker moves the user's folder aside and theirs into its place, and back
        while not stop.is_set():
            try:
                os.rename(folder, aside)
                os.rename(evil, folder)
                os.rename(folder, evil)
                os.rename(aside, folder)
            except OSError:
                pass

    cache = C.KernelCache(str(folder))
    got = {"hit": 0, "miss": 0, "evil": 0}
    attacker = threading.Thread(target=swap, daemon=True)
    attacker.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # (the swapped-in folder's: refused)
            end = time.monotonic() + 3.0
            while time.monotonic() < end:
                cache.clear()
                ck = cache.get(key)
                got["miss" if ck is None else "evil" if ck.ptx == EVIL else "hit"] += 1
    finally:
        stop.set()
        attacker.join(10)
    assert got["evil"] == 0, got
    assert got["hit"] > 0 and sum(got.values()) > 200, got


def test_a_link_in_the_folders_place_is_checked_where_it_leads(entry, tmp_path):
    kernel, folder, key, d = entry
    cubin = (folder / f"{key}.cubin").read_bytes()
    evil = tmp_path / "evil"
    _write_entry(evil, key, {**d, "ptx": EVIL}, cubin)
    os.chmod(evil, 0o777)
    link = tmp_path / "link"
    link.symlink_to(evil)
    with pytest.warns(UserWarning, match="other users may write into it"):
        assert C.KernelCache(str(link)).get(key) is None
    mine = tmp_path / "mine"
    mine.symlink_to(folder)            # a link to the user's own folder is that folder
    assert C.KernelCache(str(mine)).get(key).ptx == d["ptx"]


def test_deeply_nested_json_with_a_valid_digest_is_a_miss(entry):
    kernel, folder, key, d = entry
    nested = b'{"digest": "' + C._NO_DIGEST + b'", "format": 9, "x": ' + b"[" * 200_000 \
        + b"]" * 200_000 + b"}"
    (folder / f"{key}.cubin").unlink()
    _write_entry(folder, key, nested, None)
    ck = wl.compile(kernel, arch="sm_80")    # was: RecursionError
    assert ck.ptx == d["ptx"]


@pytest.mark.parametrize("suffix", [".json", ".cubin"])
def test_an_8_gib_sparse_file_is_a_miss_without_being_read(entry, suffix):
    kernel, folder, key, d = entry
    with open(folder / f"{key}{suffix}", "r+b") as f:
        f.truncate(8 << 30)                  # sparse: no disk used
    tracemalloc.start()
    try:
        assert C.KernelCache(str(folder)).get(key) is None   # was: MemoryError
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, peak      # refused by its size: nothing of it read
    ck = wl.compile(kernel, arch="sm_80")
    assert ck.ptx == d["ptx"]
    assert (folder / f"{key}{suffix}").stat().st_size < C.MAX_FILE_BYTES   # rewritten


@pytest.mark.parametrize("field,value", [
    ("source_map", {"llvm": [1, 2], "ptx": {}, "sass": {}, "sass_lines": {}, "files": [],
                    "arrays": [], "ptx_shared": []}),
    ("source", [1, 2]), ("resources", "many"), ("params", [[1]]), ("options", None),
    ("source_map", {"llvm": {}, "ptx": {}, "sass": {}, "sass_lines": {}, "files": [],
                    "arrays": 7, "ptx_shared": []})])
def test_an_entry_with_wrong_fields_and_a_valid_digest_is_a_miss(entry, field, value):
    kernel, folder, key, d = entry
    cubin = (folder / f"{key}.cubin").read_bytes()
    _write_entry(folder, key, {**d, field: value}, cubin)
    assert C.KernelCache(str(folder)).get(key) is None   # a line map: was AttributeError
