"""Read the views' HTML back with the standard library's parser (no regexes on markup)."""

from __future__ import annotations

from html.parser import HTMLParser


class ViewParser(HTMLParser):
    """Collects every ``.wl-line`` per pane: number, data-py, style, code text, ``hidden``;
    script tags; each ``<summary>``'s title and the count beside it (``counts`` by pane)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.panes: dict[str, list[dict]] = {}
        self.scripts: list[str] = []
        self.summaries: list[str] = []
        self._pane = None
        self._stack: list[tuple[str, str]] = []  # (tag, role)
        self._line = None
        self._in_script = False
        self._in_summary = False
        self.counts: dict[str, str] = {}
        self._in_count = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class", "") or ""
        role = ""
        if tag == "script":
            self._in_script = True
            self.scripts.append("")
        if tag == "summary":
            self._in_summary = True
            self.summaries.append("")
        if tag == "span" and cls == "wl-count" and self._in_summary:
            self._in_count = True
            self.counts[self._pane] = ""
        if "wl-pane" in cls.split():
            self._pane = a["data-pane"]
            self.panes.setdefault(self._pane, [])
        if tag == "div" and "wl-line" in cls.split() and "wl-head" not in cls.split():
            self._line = {"py": a.get("data-py"), "style": a.get("style"), "ln": "", "src": "",
                          "heat": [], "hidden": "hidden" in a}
            self.panes[self._pane].append(self._line)
        if tag in ("span", "pre") and self._line is not None:
            if cls in ("wl-ln", "wl-src", "wl-heat"):
                role = cls
                if cls == "wl-heat":
                    self._line["heat"].append("")
            elif self._stack and self._stack[-1][1]:
                role = self._stack[-1][1]
        self._stack.append((tag, role))

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False
        if tag == "summary":
            self._in_summary = False
            self.summaries[-1] = self.summaries[-1].rstrip()
        if tag == "span":
            self._in_count = False
        while self._stack:
            t, _ = self._stack.pop()
            if t == tag:
                break
        if tag == "div" and self._line is not None and not any(
                t == "div" for t, _ in self._stack[-1:]):
            pass

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data
            return
        if self._in_count:
            self.counts[self._pane] += data
        elif self._in_summary:
            self.summaries[-1] += data
        if self._line is None or not self._stack:
            return
        role = self._stack[-1][1]
        if role == "wl-ln":
            self._line["ln"] += data
        elif role == "wl-src":
            self._line["src"] += data
        elif role == "wl-heat":
            self._line["heat"][-1] += data


def parse_view(markup: str) -> ViewParser:
    p = ViewParser()
    p.feed(markup)
    p.close()
    return p
