"""The golden PTX cases (``tests/golden/cases/``, written as ``filecheck.py`` says): each
case's kernel compiled with each RUN line's options, its directives checked against the
PTX; and the FileCheck semantics themselves on a small known text."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import filecheck as fc  # noqa: E402


@pytest.mark.parametrize("path", fc.cases(), ids=lambda p: p.stem)
def test_golden_case(path):
    case = fc.parse_case(path)
    assert [d for d in case.directives if d.kind != "-NOT"] or \
        [d for d in case.directives], f"{path.name} checks nothing"
    _, failures = fc.run_case(case)
    assert not failures, "\n".join(failures)


_PTX = """\
\tld.param.b64 \t%rd1, [k_param_1];
\t.loc\t1 7 3
\tmul.rn.f32 \t%r3, %r1, %r2;
\tadd.rn.f32 \t%r4, %r3, %r0;
\tst.global.b32 \t[%rd1], %r4;
"""


def _failures(directives: str, ptx: str = _PTX) -> list[str]:
    text = "# RUN: CHECK\n" + directives
    return fc.check(fc.parse_case(Path("case.py"), text), "CHECK", ptx)


@pytest.mark.parametrize("directives", [
    "# CHECK: mul.rn.f32\n# CHECK: st.global\n",
    "# CHECK: mul.rn.f32\n# CHECK-NEXT: add.rn.f32 {{%r[0-9]+}}\n",
    "# CHECK: mul.rn.f32 [[T:%r[0-9]+]],\n# CHECK-NEXT: add.rn.f32 {{%r[0-9]+}}, [[T]],\n",
    "# CHECK: mul.rn.f32\n# CHECK-SAME: %r2;\n",
    "# CHECK: ld.param\n# CHECK-NOT: fma\n# CHECK: st.global\n# CHECK-NOT: add\n",
    "# CHECK: .loc 1 [[@LINE+5]] 3\n",          # line 2 of the case + 5 = 7
    "# CHECK-NOT: fma.rn\n",
    "# CHECK: add.rn.f32\n# CHECK-NOT: mul\n",  # only after the last match
    "# CHECK: mul.rn.f32   %r3,\t%r1\n",     # whitespace runs are equal
])
def test_filecheck_accepts_what_holds(directives):
    assert _failures(directives) == []


@pytest.mark.parametrize("directives, says", [
    ("# CHECK: st.global\n# CHECK: mul.rn\n", "'mul.rn' not found after PTX line 5"),
    ("# CHECK: ld.param\n# CHECK-NEXT: mul.rn\n", "not found on the next line"),
    ("# CHECK: mul.rn.f32 [[T:%r[0-9]+]],\n# CHECK: st.global.b32 [%rd1], [[T]];\n",
     "not found"),
    ("# CHECK: mul.rn.f32 %r3\n# CHECK-SAME: %r3\n", "not found"),  # only after the match
    ("# CHECK: ld.param\n# CHECK-NOT: add.rn\n# CHECK: st.global\n",
     "excluded 'add.rn' found at PTX line 4"),
    ("# CHECK: .loc 1 [[@LINE+4]] 3\n", "not found"),
    ("# CHECK-NOT: {{(mul|fma)}}.rn\n", "excluded"),
])
def test_filecheck_rejects_what_does_not_hold(directives, says):
    failures = _failures(directives)
    assert len(failures) == 1 and says in failures[0], failures
    assert failures[0].startswith("case.py:"), failures


def test_filecheck_refuses_a_malformed_case():
    with pytest.raises(fc.GoldenError, match="used before it is bound"):
        _failures("# CHECK: add [[T]]\n")
    with pytest.raises(fc.GoldenError, match="cannot be CHECK-NEXT"):
        _failures("# CHECK-NEXT: add\n")
    with pytest.raises(fc.GoldenError, match="RUN needs a PREFIX"):
        fc.parse_case(Path("c.py"), "# RUN: arch=sm_80\n")


def test_update_regenerates_filtered_directives_and_keeps_hand_written_ones(tmp_path):
    case = tmp_path / "neg.py"
    case.write_text(
        "import warp_lab as wl\n\n"
        "# RUN: HAND arch=sm_80\n# HAND: neg.f32\n\n"
        "# RUN: AUTO arch=sm_80 filter='^(ld|st|neg)\\.'\n# AUTO-NOT: fma\n"
        "# AUTO: stale.line\n\n\n"
        "@wl.kernel\ndef neg(y: wl.array(dtype=wl.float32)):\n"
        "    i = wl.tid()\n    y[i] = -y[i]\n", encoding="utf-8")
    assert fc.main([str(case), "--update", "--dry-run"]) == 0
    assert "stale.line" in case.read_text()        # a dry run writes nothing
    assert fc.main([str(case), "--update"]) == 0
    text = case.read_text()
    assert "stale.line" not in text and "# HAND: neg.f32\n" in text and "# AUTO-NOT: fma" in text
    auto = [s for s in text.splitlines() if s.startswith("# AUTO")]
    assert auto[0] == "# AUTO-NOT: fma"
    assert "# AUTO: ld.global.b32 {{%r[0-9]+}}, [{{%rd[0-9]+}}];" in auto
    assert "# AUTO: neg.f32 {{%r[0-9]+}}, {{%r[0-9]+}};" in auto
    assert fc.main([str(case), "--update"]) == 0 and case.read_text() == text  # a fixed point
    assert fc.run_case(fc.parse_case(case))[1] == []
