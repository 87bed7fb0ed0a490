"""Reading a CUDA C++ translation unit without a C++ front end of our own.

NVRTC compiles the source; what warp_lab needs besides the PTX is read here:

* :func:`find_kernels`: each ``__global__`` function's name, line, whether it is a
  template, and its parameters' names (names are not in the PTX or in the mangled
  name). The scan works on the text with comments and literals blanked
  (:func:`blank_comments`), so it never matches inside them.
* :func:`demangle_function_type`: the parameter types of a kernel, read from the
  Itanium-mangled name NVRTC gives a probe ``__wl_sig<decltype(kernel)>`` (the types
  after the preprocessor, typedefs and template arguments: exactly what the
  compiler saw). Itanium C++ ABI, "Mangling" (builtin types, qualifiers, source
  names, substitutions).
* :func:`shared_declarations` and :func:`local_name`: the ``__shared__`` arrays a kernel
  declares, and the C++ name of a PTX shared symbol (``_ZZ9block_sumE3buf`` -> ``buf``).
"""

from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass

__all__ = ["KernelDecl", "SharedDecl", "CType", "blank_comments", "find_kernels",
           "demangle_function_type", "local_name", "shared_declarations", "object_macros",
           "line_of"]


def blank_comments(text: str) -> str:
    """``text`` with every comment and the inside of every string and character literal
    replaced by spaces (newlines kept), so offsets and line numbers are unchanged."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


def line_of(text: str, offset: int) -> int:
    """The 1-based line of character ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1


@dataclass(frozen=True)
class KernelDecl:
    """One ``__global__`` function as the source writes it.

    Attributes:
        name: its C++ name, qualified by the namespaces around it (``"ops::scale"``).
        line: the line of its name.
        template: whether it is a function template (needs an instantiation list).
        param_names: the parameters' names in order (``""`` for an unnamed one).
        body: ``(start, end)`` character offsets of its body ``{...}``, or None for a
            declaration without one.
    """

    name: str
    line: int
    template: bool
    param_names: tuple
    body: tuple | None


_IDENT = re.compile(r"[A-Za-z_]\w*")
#: attributes written between ``__global__`` and the name, with their own parentheses
_ATTRIBUTES = {"__launch_bounds__", "__cluster_dims__", "__maxnreg__", "__attribute__",
               "alignas", "__declspec", "__align__"}


def _match(text: str, i: int, open_: str, close: str) -> int:
    """Offset just past the bracket closing the one at ``text[i]``."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == open_:
            depth += 1
        elif text[j] == close:
            depth -= 1
            if depth == 0:
                return j + 1
    return len(text)


def _split_params(inside: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for c in inside:
        if c in "(<[{":
            depth += 1
        elif c in ")>]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


_NOT_NAMES = {"const", "volatile", "__restrict__", "__restrict", "restrict", "unsigned",
              "signed", "int", "float", "double", "char", "short", "long", "bool", "void"}


def _param_name(param: str) -> str:
    param = param.split("=", 1)[0]
    param = re.sub(r"\[[^\]]*\]", "", param).strip()
    ids = _IDENT.findall(param)
    if len(ids) < 2 or ids[-1] in _NOT_NAMES or param.rstrip().endswith(("*", "&")):
        return ""
    return ids[-1]


def find_kernels(text: str) -> list[KernelDecl]:
    """Every ``__global__`` function of a CUDA C++ source, in source order.

    Args:
        text: the source as the user wrote it (before the preprocessor: a kernel whose
            name a macro builds is not found).

    Returns:
        one :class:`KernelDecl` per ``__global__`` declaration or definition (a
        declaration followed by its definition gives one, the definition).
    """
    clean = blank_comments(text)
    # preprocessor lines: a #define may mention __global__ (a macro writing kernels)
    clean = re.sub(r"^[ \t]*#.*?(?<!\\)$", lambda m: " " * len(m.group(0)), clean, flags=re.M)
    spaces = []   # (body start, body end, name) of each named namespace block
    for m in re.finditer(r"\bnamespace\s+([A-Za-z_][\w:]*)\s*\{", clean):
        spaces.append((m.end() - 1, _match(clean, m.end() - 1, "{", "}"), m.group(1)))
    found: dict[str, KernelDecl] = {}
    for m in re.finditer(r"\b__global__\b", clean):
        i = m.end()
        name = None
        while i < len(clean):
            w = _IDENT.match(clean, i)
            if w is None:
                if clean[i] == "(" or clean[i] in ";{}":
                    break
                i += 1
                continue
            j = w.end()
            while j < len(clean) and clean[j] in " \t\r\n":
                j += 1
            if j < len(clean) and clean[j] == "(":
                if w.group(0) in _ATTRIBUTES:
                    i = _match(clean, j, "(", ")")
                    continue
                name, i = (w.group(0), w.start()), j
                break
            i = j
        if name is None:
            continue
        close = _match(clean, i, "(", ")")
        params = _split_params(clean[i + 1: close - 1])
        if params == ["void"]:
            params = []
        k = close
        while k < len(clean) and clean[k] not in "{;":
            k += 1
        body = (k, _match(clean, k, "{", "}")) if k < len(clean) and clean[k] == "{" else None
        start = max(clean.rfind(";", 0, m.start()), clean.rfind("}", 0, m.start()),
                    clean.rfind("{", 0, m.start()))
        template = re.search(r"\btemplate\s*<", clean[start + 1: m.start()]) is not None
        qualified = "::".join([n for lo, hi, n in spaces if lo < name[1] < hi] + [name[0]])
        decl = KernelDecl(qualified, line_of(clean, name[1]), template,
                          tuple(_param_name(p) for p in params), body)
        if decl.name not in found or body is not None:
            found[decl.name] = decl
    return sorted(found.values(), key=lambda d: d.line)


# -- the Itanium C++ ABI's mangling, the part kernel signatures use ---------------------

_BUILTIN = {
    "v": "void", "w": "wchar_t", "b": "bool", "c": "char", "a": "signed char",
    "h": "unsigned char", "s": "short", "t": "unsigned short", "i": "int", "j": "unsigned int",
    "l": "long", "m": "unsigned long", "x": "long long", "y": "unsigned long long",
    "n": "__int128", "o": "unsigned __int128", "f": "float", "d": "double",
    "e": "long double", "g": "__float128", "z": "...",
}
_BUILTIN_D = {"DF16_": "_Float16", "Dh": "half", "Dn": "decltype(nullptr)",
              "DF16b": "__bf16", "Ds": "char16_t", "Di": "char32_t"}


@dataclass(frozen=True)
class CType:
    """A C++ type as read from a mangled name.

    Attributes:
        kind: ``"builtin"`` (``name`` as C++ spells it), ``"class"`` (a class, struct,
            union or enum: ``name``), ``"pointer"`` (to ``target``), ``"reference"``,
            ``"other"`` (what this reader does not take apart: member pointers, arrays,
            function types; ``name`` is the mangled text).
        const: the type is ``const`` (for a pointer's target: a pointer to const).
        target: a pointer's or reference's pointee.
    """

    kind: str
    name: str = ""
    const: bool = False
    volatile: bool = False
    target: "CType | None" = None

    def spelling(self) -> str:
        """The type as C++ writes it: ``const float*``, ``float4*``, ``unsigned int``."""
        cv = ("const " if self.const else "") + ("volatile " if self.volatile else "")
        if self.kind in ("pointer", "reference"):
            inner = self.target.spelling() if self.target else "?"
            return inner + ("*" if self.kind == "pointer" else "&") + \
                (" const" if self.const else "")
        return cv + self.name


class _Demangler:
    def __init__(self, text: str):
        self.s, self.i, self.subs = text, 0, []

    def peek(self, k: int = 1) -> str:
        return self.s[self.i: self.i + k]

    def eat(self, token: str) -> bool:
        if self.s.startswith(token, self.i):
            self.i += len(token)
            return True
        return False

    def fail(self, what: str):
        raise ValueError(f"cannot read mangled name {self.s!r} at {self.i} ({what})")

    def number(self) -> int:
        m = re.compile(r"\d+").match(self.s, self.i)
        if m is None:
            self.fail("a length")
        self.i = m.end()
        return int(m.group(0))

    def source_name(self) -> str:
        n = self.number()
        name = self.s[self.i: self.i + n]
        self.i += n
        return name

    def substitution(self) -> CType:
        if self.eat("S_"):
            k = 0
        else:
            self.eat("S")
            m = re.compile(r"[0-9A-Z]*").match(self.s, self.i)
            digits = m.group(0)
            self.i = m.end()
            if not self.eat("_"):
                self.fail("a substitution")
            k = int(digits, 36) + 1
        if k >= len(self.subs):
            self.fail(f"substitution {k} of {len(self.subs)}")
        return self.subs[k]

    def template_args(self) -> str:
        """``I <args> E`` as C++ writes it: ``<float, 4>``."""
        self.eat("I")
        args = []
        while not self.eat("E"):
            if self.eat("L"):   # a literal: L <type> <value> E
                t = self.type()
                end = self.s.index("E", self.i)
                value = self.s[self.i: end].replace("n", "-", 1)
                self.i = end + 1
                args.append(value if t.name in ("int", "unsigned int", "long") else
                            f"({t.spelling()}){value}")
            else:
                args.append(self.type().spelling())
        return "<" + ", ".join(args) + ">"

    def type(self) -> CType:
        c = self.peek()
        if c in ("K", "V", "r"):
            const = volatile = False
            while self.peek() in ("K", "V", "r"):
                q = self.peek()
                self.i += 1
                const |= q == "K"
                volatile |= q == "V"
            inner = self.type()
            t = CType(inner.kind, inner.name, inner.const or const, inner.volatile or volatile,
                      inner.target)
            self.subs.append(t)
            return t
        if c in ("P", "R", "O"):
            self.i += 1
            target = self.type()
            t = CType("pointer" if c == "P" else "reference", target=target)
            self.subs.append(t)
            return t
        if c == "D":
            for code, name in _BUILTIN_D.items():
                if self.eat(code):
                    return CType("builtin", name)
            self.fail("a D type")
        if c in _BUILTIN:
            self.i += 1
            return CType("builtin", _BUILTIN[c])
        if c == "S" and self.peek(2) != "St":
            t = self.substitution()
            if self.peek() == "I":   # a substituted template name with its arguments
                t = CType("class", t.name + self.template_args())
                self.subs.append(t)
            return t
        if c == "N":
            return CType("class", self.nested_name())
        if c.isdigit() or self.peek(2) == "St":
            name = ("std::" if self.eat("St") else "") + self.source_name()
            t = CType("class", name)
            self.subs.append(t)
            if self.peek() == "I":
                t = CType("class", name + self.template_args())
                self.subs.append(t)
            return t
        if c == "F":   # a function type: kept as "other"
            start = self.i
            self.i += 1
            while not self.eat("E"):
                self.type()
            t = CType("other", self.s[start: self.i])
            self.subs.append(t)
            return t
        self.fail(f"type code {c!r}")

    def nested_name(self) -> str:
        """``N <prefix>... E``, each prefix a substitution candidate (the whole name too)."""
        self.eat("N")
        name = ""
        while not self.eat("E"):
            if self.peek() == "S" and not name:
                name = self.substitution().name
                continue
            if self.peek() == "I":
                name += self.template_args()
            else:
                name += ("::" if name else "") + self.source_name()
            self.subs.append(CType("class", name))
        return name


def demangle_function_type(mangled: str) -> list[CType]:
    """The parameter types of the function type in a probe variable's mangled name.

    Args:
        mangled: ``_Z<len>NAMEIF<return><params>EE``, the name NVRTC lowers
            ``&NAME<decltype(kernel)>`` to for a variable template ``NAME``
            (``_Z8__wl_sigIFvPKfPffiEE`` -> ``const float*, float*, float, int``).

    Returns:
        the parameter types in order (none for ``(void)``).

    Raises:
        ValueError: the name is not of that form, or uses mangling this reader does not
            know.
    """
    d = _Demangler(mangled)
    if not d.eat("_Z"):
        d.fail("no _Z prefix")
    d.subs.append(CType("class", d.source_name()))   # the template's name: S_
    if not d.eat("IF"):
        d.fail("not a variable template of a function type")
    d.type()   # the return type (void)
    params = []
    while not d.eat("E"):
        params.append(d.type())
    if params == [CType("builtin", "void")]:
        params = []
    return params


def local_name(symbol: str) -> str | None:
    """The C++ name of a function's local static (a ``__shared__`` array) from its
    mangled PTX symbol: ``_ZZ9block_sumE3buf`` -> ``buf``, ``_ZZ5scaleIfEvPT_E4tile_0``
    -> ``tile`` (``_N`` discriminators dropped); None for a symbol of another form."""
    if not symbol.startswith("_ZZ"):
        return None
    for k in range(len(symbol) - 1, 2, -1):
        if symbol[k] != "E":
            continue
        m = re.fullmatch(r"(\d+)([A-Za-z_]\w*?)(?:_\d+|__\d+_)?", symbol[k + 1:])
        if m and len(m.group(2)) == int(m.group(1)):
            return m.group(2)
    return None


# -- __shared__ declarations ------------------------------------------------------------

@dataclass(frozen=True)
class SharedDecl:
    """One ``__shared__`` array as the source declares it.

    Attributes:
        name: the variable's name.
        ctype: its element type as written (``"float"``).
        dims: the extents, evaluated with the source's object-like macros and the
            ``-D`` defines (None when an extent is not a constant this reader can
            evaluate, or for ``extern __shared__ T a[]``).
        line: the declaration's line.
        extern: an ``extern __shared__`` (dynamic) array.
    """

    name: str
    ctype: str
    dims: tuple | None
    line: int
    extern: bool


_SHARED = re.compile(
    r"(\bextern\s+)?\b__shared__\s+((?:(?:const|volatile|unsigned|signed|__align__\s*\(\s*\d+\s*\)"
    r"|alignas\s*\(\s*\d+\s*\))\s+)*[A-Za-z_][\w:]*(?:\s+(?:int|long|char|short))*)\s+"
    r"([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)*)")


def object_macros(text: str, defines: dict | None = None) -> dict[str, str]:
    """The object-like macros of ``text`` (``#define NAME value``), then ``defines``
    (``-D NAME=VALUE``) over them; the last definition of a name wins."""
    out: dict[str, str] = {}
    for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?![\w(])[ \t]*(.*)$",
                         blank_comments(text), re.M):
        out[m.group(1)] = m.group(2).strip()
    out.update({k: str(v) for k, v in (defines or {}).items()})
    return out


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.FloorDiv: operator.floordiv, ast.Div: operator.floordiv, ast.Mod: operator.mod,
        ast.LShift: operator.lshift, ast.RShift: operator.rshift}


def _evaluate(expr: str, macros: dict) -> int | None:
    """An integer constant expression of literals, macros and + - * / % << >>, or None."""
    for _ in range(20):   # macros naming macros, to a depth of 20
        nxt = re.sub(r"\b([A-Za-z_]\w*)\b",
                     lambda m: f"({macros[m.group(1)]})" if m.group(1) in macros
                     else m.group(1), expr)
        if nxt == expr:
            break
        expr = nxt
    expr = re.sub(r"\b(\d+)[uUlL]+\b", r"\1", expr)
    if re.search(r"[A-Za-z_]", expr):
        return None

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return -ev(node.operand) if isinstance(node.op, ast.USub) else ev(node.operand)
        raise ValueError
    try:
        return int(ev(ast.parse(expr, mode="eval")))
    except (SyntaxError, ValueError, ZeroDivisionError, TypeError, RecursionError):
        return None


def shared_declarations(text: str, span: tuple | None = None,
                        defines: dict | None = None) -> list[SharedDecl]:
    """The ``__shared__`` arrays declared in ``text[span[0]:span[1]]`` (the whole text for
    None), their extents evaluated with :func:`object_macros`."""
    clean = blank_comments(text)
    macros = object_macros(text, defines)
    lo, hi = span or (0, len(clean))
    out = []
    for m in _SHARED.finditer(clean, lo, hi):
        dims_text = re.findall(r"\[([^\]]*)\]", m.group(4))
        extern = bool(m.group(1))
        dims = None
        if dims_text and not extern:
            vals = [_evaluate(d, macros) for d in dims_text]
            dims = tuple(vals) if all(v is not None and v > 0 for v in vals) else None
        elif not dims_text:
            dims = ()
        ctype = re.sub(r"(?:__align__|alignas)\s*\(\s*\d+\s*\)\s*", "", m.group(2)).strip()
        out.append(SharedDecl(m.group(3), " ".join(ctype.split()), dims,
                              line_of(clean, m.start(3)), extern))
    return out
