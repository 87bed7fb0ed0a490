"""docs/language.md's edge-case table, each row run on the simulator.

The table (between ``<!-- edge-cases:begin -->`` and ``<!-- edge-cases:end -->``) says, for
an expression on run-time operands, what warp_lab gives, what Python gives, and the PTX ISA
rule behind warp_lab's value. Each row becomes a kernel that loads its operands from arrays
(so nothing folds at compile time), stores the expression into an array of the row's
result type, and runs on the simulator with the row's options; the value must be the
table's, bit for bit in its sign and NaN-ness. Where the Python column gives a value or an
exception and the expression is plain Python, that is checked too.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re

import numpy as np
import pytest

import warp_lab as wl

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "language.md")
_NAMES = {"nan": math.nan, "inf": math.inf}


def _rows():
    text = open(DOC, encoding="utf-8").read()
    body = text.split("<!-- edge-cases:begin -->", 1)[1].split("<!-- edge-cases:end -->", 1)[0]
    rows = []
    for line in body.strip().splitlines()[2:]:          # past the header and its rule
        cells = [c.strip().strip("`").strip() for c in line.strip().strip("|").split("|")]
        rows.append(dict(zip(("expr", "operands", "options", "result", "python", "rule"),
                             cells)))
    return rows


ROWS = _rows()


def _operands(text: str):
    out = []
    for part in (p.strip().strip("`") for p in text.split(";") if p.strip()):
        m = re.fullmatch(r"(\w+): (\w+) = (.+)", part)
        assert m, f"operand {part!r} is not 'name: type = value'"
        out.append((m[1], m[2], eval(m[3], dict(_NAMES))))
    return out


def _result(text: str):
    """``"-2147483648: int32"`` -> (value, "int32"); ``"finding division_by_zero"``."""
    if text.startswith("finding "):
        return text.split()[1], None
    value, ty = (s.strip().strip("`") for s in text.rsplit(":", 1))
    return eval(value, dict(_NAMES)), ty


def _kernel(tmp_path, k: int, expr: str, ops, out_ty: str):
    params = ", ".join(f"{n}_in: wl.array(dtype=wl.{t})" for n, t, _ in ops)
    loads = "".join(f"    {n} = {n}_in[0]\n" for n, _, _ in ops)
    src = (f"import math\nimport warp_lab as wl\n\n\n@wl.kernel\n"
           f"def edge_{k}({params}, out: wl.array(dtype=wl.{out_ty or 'int32'})):\n"
           f"{loads}    out[0] = {expr}\n")
    path = tmp_path / f"edge_{k}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(f"edge_{k}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, f"edge_{k}")


def _same(got, want) -> bool:
    if isinstance(want, float):
        got = float(got)
        if math.isnan(want):
            return math.isnan(got)
        return got == want and math.copysign(1, got) == math.copysign(1, want)
    return int(got) == want


def test_the_table_is_there():
    assert len(ROWS) >= 15
    assert all(r["rule"].startswith("PTX ISA") for r in ROWS), [r["rule"] for r in ROWS]


@pytest.mark.parametrize("k", range(len(ROWS)), ids=[r["expr"] + " " + r["operands"]
                                                     for r in ROWS])
def test_row_on_the_simulator(k, tmp_path):
    row = ROWS[k]
    ops = _operands(row["operands"])
    want, ty = _result(row["result"])
    kernel = _kernel(tmp_path, k, row["expr"], ops, ty)
    arrays = [np.array([v], dtype=getattr(np, t)) for _, t, v in ops]
    out = np.zeros(1, dtype=getattr(np, ty or "int32"))
    options = {"fast_math": True} if row["options"] == "fast_math" else {}
    r = wl.launch(kernel, dim=1, block_dim=1, inputs=[*arrays, out], device="sim", **options)
    if ty is None:
        assert [f.kind for f in r.findings] == [want], [str(f) for f in r.findings]
        return
    assert r.findings == [], [str(f) for f in r.findings]
    assert _same(out[0], want), f"{row['expr']} gave {out[0]!r}, the table says {want!r}"


@pytest.mark.parametrize("k", [k for k, r in enumerate(ROWS)
                               if "wl." not in r["expr"] and r["python"] != "—"])
def test_python_column(k):
    row = ROWS[k]
    env = {"math": math, **{n: v for n, _, v in _operands(row["operands"])}}
    said = row["python"]
    if said.endswith("Error"):
        with pytest.raises(getattr(__builtins__, said, None) or eval(said)):
            eval(row["expr"], env)
        return
    assert _same(eval(row["expr"], env), eval(said, dict(_NAMES)))
