"""The builtin records are the one list of the kernel language: the public namespace and the
docs' builtin table (docs/language.md, "Builtins") are derived from them."""

from __future__ import annotations

import subprocess
import sys

import pytest

import warp_lab as wl
from warp_lab.lang import builtin_docs
from warp_lab.lang import builtins as B


def test_committed_builtin_table_is_the_records_table():
    text = builtin_docs.DOC.read_text(encoding="utf-8")
    assert builtin_docs.replace_table(text) == text, (
        "docs/language.md's builtin table differs from the records of "
        f"warp_lab/lang/builtins.py: run `{builtin_docs.COMMAND}` and review the diff")


def test_table_lists_every_record_once_under_its_group():
    table = builtin_docs.builtin_table()
    for b in B.BUILTINS.values():
        row = f"| `wl.{b.name}{b.signature}` |"
        assert table.count(row) == 1, b.name
        section = table.split(f"### {b.group}\n", 1)[1].split("\n### ", 1)[0]
        assert row in section, (b.name, b.group)
    assert [line[4:] for line in table.splitlines() if line.startswith("### ")] == list(B.GROUPS)


def test_update_rewrites_a_stale_table(tmp_path):
    doc = tmp_path / "language.md"
    doc.write_text(f"# x\n\n{builtin_docs.BEGIN}\n| stale |\n{builtin_docs.END}\n\ntail\n")
    r = subprocess.run([sys.executable, "-m", "warp_lab.lang.builtin_docs", "--update",
                        "--doc", str(doc)], capture_output=True, text=True, check=True)
    assert "updated" in r.stdout
    text = doc.read_text()
    assert "| stale |" not in text and text.endswith(f"{builtin_docs.END}\n\ntail\n")
    assert "| `wl.popc(x)` |" in text


def test_a_file_without_the_markers_is_refused():
    with pytest.raises(ValueError, match="no generated builtin table"):
        builtin_docs.replace_table("# no table here\n")


def test_every_record_is_public_and_only_the_records_are():
    kinds = (B.Builtin, B.Dim3)
    public = {n for n in dir(wl) if isinstance(getattr(wl, n), kinds)}
    assert public == set(B.BUILTINS) | set(B.DIM3S)
    for name, value in B.PUBLIC.items():
        assert getattr(wl, name) is value, name
    assert all(b.group in B.GROUPS for b in B.BUILTINS.values())
