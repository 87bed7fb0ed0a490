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

from pygments.lexer import RegexLexer, bygroups, words
from pygments.lexers.c_like import CudaLexer   # Pygments' C++ lexer with CUDA's names
from pygments.lexers.python import PythonLexer
from pygments.lexers.asm import LlvmLexer
from pygments.token import (Comment, Keyword, Name, Number, Operator, Punctuation, String,
                            Text, Whitespace)

__all__ = ["PtxLexer", "SassLexer", "get_lexer"]

# PTX ISA 8.x, section 5.1 "State Spaces" and 5.2 "Types": the words that
# follow a dot inside a declaration and are types or spaces, not directives.
_PTX_TYPES = ("b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16",
              "s32", "s64", "f16", "f16x2", "bf16", "bf16x2", "f32", "f64", "pred", "tf32",
              "e4m3", "e5m2")
_PTX_SPACES = ("reg", "sreg", "const", "global", "local", "param", "shared", "tex")


class PtxLexer(RegexLexer):
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


class SassLexer(RegexLexer):
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
            (r"SR_[A-Za-z0-9_]+(\.[XYZ])?", Name.Builtin),  # SR_TID.X, SR_CgaCtaId
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


_LEXERS = {"python": PythonLexer, "llvm": LlvmLexer, "llvm_unoptimized": LlvmLexer,
           "ptx": PtxLexer, "sass": SassLexer, "cuda": CudaLexer}


def get_lexer(pane: str):
    """The Pygments lexer instance for a view pane.

    Args:
        pane: ``"python"``, ``"llvm"``, ``"llvm_unoptimized"``, ``"ptx"``, ``"sass"``, or
            ``"cuda"`` (a CUDA C++ kernel's source pane: Pygments' ``CudaLexer``, its C++
            lexer with CUDA's qualifiers, built-in variables and vector types).

    Raises:
        KeyError: an unknown pane name.
    """
    # stripnl=False keeps blank first/last lines so pane line numbers match the text
    return _LEXERS[pane](stripnl=False, stripall=False, ensurenl=True)
