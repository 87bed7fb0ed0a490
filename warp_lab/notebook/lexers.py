"""Pygments lexers for NVIDIA PTX and SASS (Pygments ships LLVM IR's, not these).

:class:`PtxLexer` follows the PTX ISA's lexical rules (PTX ISA 8.x,
section 4 "Syntax"): ``//`` and ``/* */`` comments, directives starting with
``.`` (``.reg``, ``.param``, ``.loc``), instructions made of an opcode and
dot-separated modifiers (``ld.global.nc.f32``), ``%`` registers and special
registers (``%tid.x``), ``@p`` / ``@!p`` guard predicates, labels
(``$L__BB0_2:``), and integer (``0x1f``, ``42U``) and float (``0f3F800000``,
``0d...``) constants.

:class:`SassLexer` covers what ``nvdisasm`` prints: ``/*0040*/`` offsets,
upper-case opcodes with modifiers (``LDG.E.64``), ``R``/``UR``/``P``/``UP``
registers, ``SR_`` special registers, constant-bank operands
(``c[0x0][0x210]``), ``desc[UR4]``, ``//##`` line-info comments and
``.L_x_0`` labels.

Both lexers are also importable by name through :func:`get_lexer`, the one
place the views pick a lexer for a pane.
"""

from __future__ import annotations

import re

from pygments.lexer import RegexLexer, bygroups, words
from pygments.lexers.python import PythonLexer
from pygments.lexers.asm import LlvmLexer
from pygments.token import (Comment, Error, Keyword, Name, Number, Operator, Punctuation,
                            String, Text, Whitespace, _TokenType)

__all__ = ["PtxLexer", "SassLexer", "get_lexer"]

# PTX ISA 8.x, section 5.1 "State Spaces" and 5.2 "Types": the words that
# follow a dot inside a declaration and are types or spaces, not directives.
_PTX_TYPES = ("b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16",
              "s32", "s64", "f16", "f16x2", "bf16", "bf16x2", "f32", "f64", "pred", "tf32",
              "e4m3", "e5m2")
_PTX_SPACES = ("reg", "sreg", "const", "global", "local", "param", "shared", "tex")


class _OneRegexPerState:
    """A :class:`~pygments.lexer.RegexLexer` mixin that finds the matching rule of a state
    with one regular expression instead of trying the rules one by one.

    Pygments tries a state's rules in order at each position (ten ``match`` calls per token
    on LLVM IR, PTX and SASS); here the rules are joined into ``(rule0)|(rule1)|...``, whose
    ``lastindex`` is the first rule that matches at the position (Python's alternation tries
    its branches in order, and an enclosing group closes last) and whose span is that rule's
    match; a rule with a callback (``bygroups``) is run once more for the groups it reads.
    The tokens are Pygments' own: a state whose rules cannot be joined (flags differ, a
    back-reference, an inline global flag, a group name used twice) keeps the rule-by-rule
    loop, and the loop below is Pygments 2.x's ``RegexLexer.get_tokens_unprocessed`` with
    that one lookup changed (tests/notebook/test_nb_highlight_speed.py compares the two).
    About twice as fast on a big kernel's LLVM IR, PTX and SASS.
    """

    @classmethod
    def _joined(cls, state: str):
        table = cls.__dict__.get("_wl_joined")
        if table is None:
            table = {}
            setattr(cls, "_wl_joined", table)
        if state not in table:
            table[state] = _join_rules(cls._tokens[state])
        return table[state]

    def get_tokens_unprocessed(self, text, stack=("root",)):
        """(position, token type, value) triples, as Pygments' RegexLexer yields them."""
        pos = 0
        tokendefs = self._tokens
        statestack = list(stack)
        state = statestack[-1]
        statetokens = tokendefs[state]
        joined = self._joined(state)
        while 1:
            m = None
            if joined is not None:
                m = joined[0](text, pos)
                rule = statetokens[joined[1][m.lastindex]] if m else None
            else:
                rule = next((r for r in statetokens if r[0](text, pos)), None)
            if rule is not None:
                rexmatch, action, new_state = rule
                if m is None or (action is not None and type(action) is not _TokenType):
                    m = rexmatch(text, pos)  # a callback reads the rule's own groups
                if action is not None:
                    if type(action) is _TokenType:
                        yield pos, action, m.group()  # the rule's match: same span
                    else:
                        yield from action(self, m)
                pos = m.end()
                if new_state is not None:
                    if isinstance(new_state, tuple):
                        for name in new_state:
                            if name == "#pop":
                                if len(statestack) > 1:
                                    statestack.pop()
                            elif name == "#push":
                                statestack.append(statestack[-1])
                            else:
                                statestack.append(name)
                    elif isinstance(new_state, int):
                        if abs(new_state) >= len(statestack):
                            del statestack[1:]
                        else:
                            del statestack[new_state:]
                    elif new_state == "#push":
                        statestack.append(statestack[-1])
                    else:
                        raise AssertionError(f"wrong state def: {new_state!r}")
                    state = statestack[-1]
                    statetokens = tokendefs[state]
                    joined = self._joined(state)
                continue
            try:
                if text[pos] == "\n":  # at EOL, reset state to "root"
                    statestack = ["root"]
                    state = "root"
                    statetokens = tokendefs[state]
                    joined = self._joined(state)
                    yield pos, Whitespace, "\n"
                    pos += 1
                    continue
                yield pos, Error, text[pos]
                pos += 1
            except IndexError:
                break


_BACKREF = re.compile(r"\\[1-9]|\(\?P=|\(\?\(")
_GLOBAL_FLAGS = re.compile(r"\(\?[aiLmsux]+\)")


def _join_rules(rules):
    """``(match of (rule0)|(rule1)|..., {group index: rule index})`` for a state's processed
    rules (``(bound Pattern.match, action, new state)``), or None when joining could change
    which rule matches or what it matches."""
    patterns = [getattr(r[0], "__self__", None) for r in rules]
    if not patterns or any(not isinstance(p, re.Pattern) for p in patterns):
        return None
    flags = {p.flags for p in patterns}
    if len(flags) != 1 or any(not isinstance(p.pattern, str) or _BACKREF.search(p.pattern)
                              or _GLOBAL_FLAGS.search(p.pattern) for p in patterns):
        return None
    group_of, group = {}, 1
    for k, p in enumerate(patterns):
        group_of[group] = k
        group += 1 + p.groups
    try:
        joined = re.compile("|".join(f"({p.pattern})" for p in patterns), flags.pop())
    except re.error:  # e.g. one group name used by two rules
        return None
    return joined.match, group_of


class PtxLexer(_OneRegexPerState, RegexLexer):
    """Lexer for NVIDIA PTX assembly (``.ptx``).

    Token classes: ``Comment`` (``//``, ``/* */``), ``Keyword`` (directives
    such as ``.entry``, ``.loc``), ``Keyword.Type`` (``.u32``, ``.f32``,
    state spaces), ``Name.Function`` (opcodes with their modifiers),
    ``Name.Variable`` (``%r1``), ``Name.Builtin`` (special registers such as
    ``%tid.x``), ``Name.Label``, ``Number.*`` and ``String``.
    """

    name = "PTX"
    aliases = ["ptx"]
    filenames = ["*.ptx"]
    mimetypes = ["text/x-ptx"]

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r"/\*", Comment.Multiline, "comment"),
            (r'"(\\\\|\\"|[^"])*"', String),
            # a label definition at the start of a statement: $L__BB0_2:
            (r"([$%]?[A-Za-z_$][\w$]*)(:)", bygroups(Name.Label, Punctuation)),
            # guard predicate: @%p1 / @!%p1
            (r"(@!?)(%?[A-Za-z_$][\w$]*)", bygroups(Operator, Name.Variable)),
            (words(tuple("." + t for t in _PTX_TYPES + _PTX_SPACES), suffix=r"\b"),
             Keyword.Type),
            (r"\.[A-Za-z_][\w]*", Keyword),
            # special registers: %tid.x, %ntid.y, %ctaid.z, %laneid, %clock64 ...
            (r"%(tid|ntid|ctaid|nctaid|laneid|warpid|nwarpid|smid|nsmid|gridid|clock|clock64"
             r"|lanemask_\w+|envreg\d+|globaltimer\w*|dynamic_smem_size|total_smem_size)"
             r"(\.[xyz])?\b", Name.Builtin),
            (r"%[A-Za-z_$][\w$]*", Name.Variable),
            (r"\$[\w$]+", Name.Label),  # a label used as a branch target
            # opcode and its modifiers: ld.global.nc.f32, mad.lo.s32, bra.uni
            (r"[A-Za-z_][\w]*(\.[A-Za-z0-9_]+)+", Name.Function),
            (r"0[fF][0-9A-Fa-f]{8}|0[dD][0-9A-Fa-f]{16}", Number.Float),
            (r"[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?", Number.Float),
            (r"0[xX][0-9A-Fa-f]+U?", Number.Hex),
            (r"0[bB][01]+U?", Number.Bin),
            (r"[0-9]+U?", Number.Integer),
            (r"[A-Za-z_$][\w$]*", Name),
            (r"[{}()\[\],;<>]", Punctuation),
            (r"[-+*/!|&^~=?:]", Operator),
            (r".", Text),
        ],
        "comment": [
            (r"[^*]+", Comment.Multiline),
            (r"\*/", Comment.Multiline, "#pop"),
            (r"\*", Comment.Multiline),
        ],
    }

    def analyse_text(text):  # noqa: N805 - Pygments calls it as a static method
        return 0.8 if ".entry" in text and ".target" in text else 0.0


class SassLexer(_OneRegexPerState, RegexLexer):
    """Lexer for NVIDIA SASS as printed by ``nvdisasm`` (``.sass``).

    Token classes: ``Comment`` (``/*0040*/`` offsets, ``//##`` line info),
    ``Name.Function`` (opcodes with modifiers, ``IMAD.WIDE``),
    ``Name.Variable`` (``R0``, ``UR4``, ``P0``, ``RZ``, ``PT``),
    ``Name.Builtin`` (``SR_TID.X``, constant banks ``c[0x0]``),
    ``Name.Label`` (``.L_x_0``), ``Keyword`` (section directives),
    ``Number.*``.
    """

    name = "SASS"
    aliases = ["sass"]
    filenames = ["*.sass"]
    mimetypes = ["text/x-sass"]

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"/\*[0-9a-fA-F]+\*/", Comment.Special),
            (r"//.*?$", Comment.Single),
            (r"/\*", Comment.Multiline, "comment"),
            (r'"(\\\\|\\"|[^"])*"', String),
            (r"`\(", Punctuation),
            (r"(\.L_x_\d+|[A-Za-z_$.][\w$.]*)(:)", bygroups(Name.Label, Punctuation)),
            (r"\.L_x_\d+", Name.Label),
            (r"(@!?)(U?P[0-7T])\b", bygroups(Operator, Name.Variable)),
            (r"\.[A-Za-z_][\w]*", Keyword),
            (r"SR_[A-Z_]+(\.[XYZ])?", Name.Builtin),
            (r"\b(c|desc)(?=\[)", Name.Builtin),
            (r"\b(U?R[0-9]+|U?RZ|U?P[0-7]|U?PT|B[0-9]+)(\.(64|reuse|H0|H1|B[0-3]|X4))*\b",
             Name.Variable),
            # opcode: upper-case mnemonic with upper-case/number modifiers
            (r"\b[A-Z][A-Z0-9_]*(\.[A-Z0-9_]+)*\b", Name.Function),
            (r"-?0[xX][0-9A-Fa-f]+", Number.Hex),
            (r"-?[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?", Number.Float),
            (r"-?(INF|QNAN)\b", Number.Float),
            (r"-?[0-9]+", Number.Integer),
            (r"[A-Za-z_$][\w$]*", Name),
            (r"[{}()\[\],;`]", Punctuation),
            (r"[-+*/!|&^~=?:|]", Operator),
            (r".", Text),
        ],
        "comment": [
            (r"[^*]+", Comment.Multiline),
            (r"\*/", Comment.Multiline, "#pop"),
            (r"\*", Comment.Multiline),
        ],
    }

    def analyse_text(text):  # noqa: N805
        return 0.7 if "/*0000*/" in text else 0.0


class _LlvmLexer(_OneRegexPerState, LlvmLexer):
    """Pygments' LLVM IR lexer, its rules looked up by :class:`_OneRegexPerState`."""


_LEXERS = {"python": PythonLexer, "llvm": _LlvmLexer, "llvm_unoptimized": _LlvmLexer,
           "ptx": PtxLexer, "sass": SassLexer}


def get_lexer(pane: str):
    """The Pygments lexer instance for a view pane.

    Args:
        pane: ``"python"``, ``"llvm"``, ``"llvm_unoptimized"``, ``"ptx"`` or ``"sass"``.

    Raises:
        KeyError: an unknown pane name.
    """
    # stripnl=False keeps blank first/last lines so pane line numbers match the text
    return _LEXERS[pane](stripnl=False, stripall=False, ensurenl=True)
