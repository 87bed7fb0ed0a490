"""Syntax highlighting into per-line HTML, and the colour of each Python line.

The views need highlighted text *line by line* (every line is its own
element carrying its Python line and colour), so instead of Pygments'
``HtmlFormatter`` (which emits one ``<pre>`` per text) the token stream is
split at newlines here: a token spanning lines (a block comment) becomes one
``<span>`` per line. Every token value is HTML-escaped.

Colours follow Compiler Explorer: a fixed palette of distinguishable hues,
one per Python line that produced code, with alpha so text stays readable
on light and dark themes.
"""

from __future__ import annotations

import functools
import re
from typing import Sequence

from pygments.formatters import HtmlFormatter
from pygments.token import Error, STANDARD_TYPES, Text, Whitespace

from warp_lab.lang.kernel import python_lines
from warp_lab.notebook.lexers import get_lexer

__all__ = ["highlight_lines", "line_colors", "token_css", "PALETTE"]

# Sasha Trubetskoy's 20 distinct colours (the ones Compiler Explorer's
# palette is close to), at 20% alpha: readable under dark or light text.
PALETTE = ("#e6194b33", "#3cb44b33", "#ffe11933", "#4363d833", "#f5823133", "#911eb433",
           "#46f0f033", "#f032e633", "#bcf60c33", "#fabebe33", "#00808033", "#e6beff33",
           "#9a632433", "#fffac833", "#80000033", "#aaffc333", "#80800033", "#ffd8b133",
           "#00007533", "#80808033")


def _css_class(ttype) -> str:
    # walk up to the nearest token type Pygments has a short class for
    while ttype not in STANDARD_TYPES:
        ttype = ttype.parent
    return STANDARD_TYPES[ttype]


def highlight_lines(text: str, pane: str, renames: Sequence[tuple[str, str]] = ()) -> list[str]:
    """Highlight ``text`` with the pane's lexer, one escaped HTML string per line.

    Args:
        text: source text (any newline style); ``""`` gives ``[]``.
        pane: a pane name accepted by :func:`warp_lab.notebook.lexers.get_lexer`.
        renames: ``(old, new)`` string replacements: the result is that of the text
            with them made, but lexed with the text as given (the cache's key), the
            replacements put into the lines after. A view's texts name a cell by a
            content-derived name that its label (``In [3]``, which changes each run)
            replaces (:func:`~warp_lab.notebook.views.pane_renames`), so a re-run cell
            lexes nothing again. A line where a replacement would not come out as that
            text (a name split between tokens) gets the renamed text lexed instead.

    Returns:
        ``len(python_lines(text))`` strings of ``<span class="..">`` tokens;
        joined with newlines and stripped of tags they equal the escaped text.
        The last :data:`_CACHE_SIZE` results are kept (a re-run cell, a
        re-rendered view), keyed by the text and the pane.

    Raises:
        KeyError: an unknown pane name.
    """
    if not text:
        return []
    lines = _highlight(text, pane)
    renames = [(old, new) for old, new in renames if old != new]
    if not renames:
        return list(lines)
    src = python_lines(text.replace("\r\n", "\n").replace("\r", "\n"))
    out = list(lines)
    for k, line in enumerate(out):
        raw = src[k] if k < len(src) else ""
        if not any(old in raw for old, _ in renames):
            continue
        for old, new in renames:
            raw = raw.replace(old, new)
            line = line.replace(_escape(old), _escape(new))
        if _TAG.sub("", line) != _escape(raw):   # the name was split between tokens
            renamed = text
            for old, new in renames:
                renamed = renamed.replace(old, new)
            return list(_highlight(renamed, pane))
        out[k] = line
    return out


_TAG = re.compile(r"<[^>]*>")


def _escape(t: str) -> str:
    """``html.escape(t, quote=False)``, as :func:`_highlight` escapes its tokens."""
    return t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


#: highlighted texts kept: the panes of the last few views (a big kernel's four panes lex in
#: about 2 s, the rest of its view in 0.1 s); the text is the key, so the memory is bounded
#: by the texts themselves (a few MB)
_CACHE_SIZE = 16


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _highlight(text: str, pane: str) -> tuple[str, ...]:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    n_lines = len(python_lines(text))   # (Pygments, too, ends lines at \n only)
    # (class, text) runs per line; whitespace gets no span, equal neighbours merge,
    # which keeps the HTML about a third of a span-per-token rendering
    classes: dict = {}                  # token type -> its span class ("": no span)
    lines: list[list[list[str]]] = [[]]
    runs = lines[0]
    for ttype, value in get_lexer(pane).get_tokens(text):
        cls = classes.get(ttype)
        if cls is None:
            # Error: a keyword newer than Pygments' lexer (LLVM's ``nneg``, ``samesign``),
            # not a mistake in the text: show it plain instead of in a red box
            cls = classes[ttype] = ("" if ttype in Whitespace or ttype is Text
                                    or ttype in Error else _css_class(ttype))
        if "\n" not in value:          # most tokens: one part, on the current line
            if value:
                if runs and (runs[-1][0] == cls or (not runs[-1][0] and not value.strip())):
                    runs[-1][1] += value
                else:
                    runs.append([cls, value])
            continue
        for k, part in enumerate(value.split("\n")):
            if k:
                runs = []
                lines.append(runs)
            if not part:
                continue
            if runs and (runs[-1][0] == cls or (not runs[-1][0] and not part.strip())):
                runs[-1][1] += part
            else:
                runs.append([cls, part])
    out = []
    for runs in lines[:n_lines]:
        html_runs = []
        for c, t in runs:  # html.escape(t, quote=False), inline: ~70k runs on a big kernel
            t = t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            html_runs.append(f'<span class="{c}">{t}</span>' if c else t)
        out.append("".join(html_runs))
    return tuple(out)


def line_colors(python_lines) -> dict[int, str]:
    """A colour per Python line, in line order, cycling through :data:`PALETTE`.

    Args:
        python_lines: iterable of Python (file or cell) line numbers that
            produced code.

    Returns:
        ``{line: "#rrggbbaa"}``.
    """
    return {py: PALETTE[k % len(PALETTE)] for k, py in enumerate(sorted(set(python_lines)))}


def _is_light(hex_color: str) -> bool:
    """Whether ``#rgb``/``#rrggbb`` is light (relative luminance above 0.5, WCAG 2.x)."""
    h = hex_color.lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    r, g, b = (int(h[k:k + 2], 16) / 255 for k in (0, 2, 4))
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2] > 0.5


def token_css(scope: str, style: str = "default") -> str:
    """CSS rules for the token classes, scoped under the CSS selector ``scope``.

    The scope gets the style's background *and* its text colour: untokenised text
    (names, whitespace-joined runs) would otherwise take the page's colour, white
    in a dark theme (JupyterLab Dark, VS Code), and vanish on the style's light
    background. A style without a text colour (Pygments' ``default``) gets black
    or white, whichever reads on its background.
    """
    formatter = HtmlFormatter(style=style)
    rules = formatter.get_style_defs(scope).splitlines()
    # Pygments adds a few unscoped rules (``pre {...}``); they would leak into the page
    rules = [r for r in rules if r.startswith(scope)]
    background = formatter.style.background_color or "#ffffff"
    text = formatter.style.style_for_token(Text)["color"]
    text = f"#{text}" if text else ("#000000" if _is_light(background) else "#ffffff")
    rules.append(f"{scope} {{ color: {text}; }}")
    return "\n".join(rules)
