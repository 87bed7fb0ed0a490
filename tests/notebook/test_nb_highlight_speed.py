"""The view-build speed-ups give the same output as the code they replaced.

* The pane lexers look a state's rule up with one joined regex
  (``lexers._OneRegexPerState``): their tokens must equal Pygments' own
  ``RegexLexer.get_tokens_unprocessed`` loop on real LLVM IR, PTX and SASS (corpus
  kernels and a generated ~370-line kernel) and on text no rule matches; a lexer with
  several states, ``#pop``/``#push``, a callback and a back-reference (the rule-by-rule
  fallback) is checked the same way.
* ``highlight_lines`` (one class lookup per token type, a cache of recent results) must
  equal the highlighter it replaced (``benchmarks.view_build.reference_highlight_lines``).
"""

from __future__ import annotations

import re

import pytest
from pygments.lexer import RegexLexer, bygroups
from pygments.token import Keyword, Name, Punctuation, String, Text

import warp_lab as wl
from benchmarks.view_build import big_kernel_source, reference_highlight_lines
from warp_lab.examples import get
from warp_lab.notebook import lexers
from warp_lab.notebook.highlight import _highlight, highlight_lines
from warp_lab.notebook.views import PANES, pane_text

ASM_PANES = ("llvm", "llvm_unoptimized", "ptx", "sass")


def _pygments_tokens(lexer, text):
    return list(RegexLexer.get_tokens_unprocessed(lexer, text))


@pytest.fixture(scope="module")
def pane_texts(ip):
    """(pane, text) of every asm pane of a few corpus kernels and of a generated one."""
    out = []
    for name in ("saxpy", "warp_sum", "block_sum", "positive_stats"):
        ck = wl.compile(get(name).kernel, arch="sm_90")
        out += [(p, pane_text(ck, PANES[p][1])) for p in ASM_PANES]
    view = ip.run_cell_magic("warp_kernel", "--no-cache --arch sm_90",
                             "import warp_lab as wl\n" + big_kernel_source(6, "hl_kernel"))
    out += [(p, pane_text(view.compiled, PANES[p][1])) for p in ASM_PANES]
    out = [(p, t) for p, t in out if t]
    assert len(out) >= 8 and sum(len(t) for _, t in out) > 100_000
    return out


def test_joined_lexers_give_pygments_tokens_on_real_text(pane_texts):
    for pane, text in pane_texts:
        lexer = lexers.get_lexer(pane)
        assert isinstance(lexer, lexers._OneRegexPerState)
        assert list(lexer.get_tokens_unprocessed(text)) == _pygments_tokens(lexer, text), pane
        assert lexer._joined("root") is not None  # the fast path ran, not the fallback


@pytest.mark.parametrize("pane", ASM_PANES)
def test_joined_lexers_on_text_no_rule_matches(pane):
    text = "\x00\x01 ¿ünïcode? \u2028 `~ \r\n\t\\ ##\n\n/* open comment\n; x = \"unterminated\n"
    lexer = lexers.get_lexer(pane)
    tokens = list(lexer.get_tokens_unprocessed(text))
    assert tokens == _pygments_tokens(lexer, text)
    assert "".join(v for _, _, v in tokens) == text


class _Plain(RegexLexer):
    """A lexer with states, a callback and a back-reference, as Pygments runs it."""

    tokens = {
        "root": [
            (r"(\w+)(:)", bygroups(Name.Label, Punctuation)),
            (r"\{", Punctuation, "block"),
            (r"'", String, "string"),
            (r"\s+", Text),
            (r"\w+", Name),
        ],
        "block": [
            (r"\{", Punctuation, "#push"),
            (r"\}", Punctuation, "#pop"),
            (r"(['\"])(.*?)\1", String),   # a back-reference: this state is not joined
            (r"\w+", Keyword),
            (r"\s+", Text),
        ],
        "string": [
            (r"[^'\n]+", String),
            (r"'", String, "#pop"),
        ],
    }


class _Joined(lexers._OneRegexPerState, _Plain):
    """The same rules through the joined lookup."""


def test_states_callbacks_and_fallback_match_pygments():
    text = ("a: b {c {d 'e' \"f\" g} h} 'str' i\n{ 'unterminated\nj: } } $ %\n"
            "{ { { x } \"q' } }\n'tail")
    assert list(_Joined().get_tokens_unprocessed(text)) == \
        _pygments_tokens(_Plain(), text)
    assert _Joined._joined("root") is not None and _Joined._joined("string") is not None
    assert _Joined._joined("block") is None  # the back-reference keeps the rule-by-rule loop


def test_join_rules_refuses_what_could_change_a_match():
    def rules(*patterns, flags=re.M):
        return [(re.compile(p, flags).match, Text, None) for p in patterns]

    assert lexers._join_rules(rules(r"a", r"(?P<x>b)")) is not None
    assert lexers._join_rules(rules(r"(a)\1", r"b")) is None               # back-reference
    assert lexers._join_rules(rules(r"(?P<x>a)", r"(?P<x>b)")) is None     # one name twice
    assert lexers._join_rules(rules(r"(?i)a", r"b")) is None               # global flag
    assert lexers._join_rules(rules(r"a") + rules(r"b", flags=re.S)) is None  # flags differ
    match, group_of = lexers._join_rules(rules(r"(x)(y)", r"z", r"(w)"))
    assert group_of == {1: 0, 4: 1, 5: 2}
    assert group_of[match("z").lastindex] == 1 and group_of[match("w").lastindex] == 2
    assert group_of[match("xy").lastindex] == 0


def test_highlight_lines_equals_the_replaced_loop(pane_texts):
    python = "def k(x):\n    # a <comment> & more\n    return x  \r\n\n'''doc\nstring'''\n"
    for pane, text in [("python", python), *pane_texts]:
        _highlight.cache_clear()
        assert highlight_lines(text, pane) == reference_highlight_lines(text, pane), pane


def test_highlight_cache_returns_fresh_lists():
    _highlight.cache_clear()
    first = highlight_lines("mov.u32 %r1, %tid.x;\nret;", "ptx")
    first.append("changed")
    again = highlight_lines("mov.u32 %r1, %tid.x;\nret;", "ptx")
    assert _highlight.cache_info().hits == 1
    assert len(again) == 2 and again == reference_highlight_lines("mov.u32 %r1, %tid.x;\nret;",
                                                                   "ptx")
    assert highlight_lines("", "ptx") == []
    with pytest.raises(KeyError):
        highlight_lines("x", "no such pane")


def test_view_build_benchmark_measures_one_small_kernel(ip):
    from benchmarks.view_build import measure

    row = measure(ip, 1, 1)  # raises if the new highlighter differs from the old
    assert row["size: static HTML"] > 10_000 and row["size: bundle JSON"] > 1_000
    assert row["heat lines"] > 5 and row["lines (LLVM+PTX+SASS)"] > 100
    assert all(row[k] >= 0 for k in row)
