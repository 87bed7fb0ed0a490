"""Golden PTX tests in the manner of LLVM's lit and FileCheck.

A case is a kernel file in ``tests/golden/cases/`` whose comments say how to compile it
and which PTX lines it must give:

    # RUN: CHECK kernel=saxpy arch=sm_80
    # RUN: FAST kernel=saxpy arch=sm_80 fast_math=True filter='^(fma|mul|add)\\.'
    ...
    # CHECK: fma.rn.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}};
    # CHECK-NOT: mul.rn.f32
    # FAST: fma.rn.ftz.f32

``RUN: PREFIX option=value ...`` compiles the file's kernel (``kernel=NAME`` when it has
several) with those :class:`warp_lab.options.CompileOptions` fields (values read as Python
literals, else as strings: ``arch=sm_80``) and checks the directives of ``PREFIX`` against
the PTX (:func:`warp_lab.compiler.pipeline.make_ptx_text`: front end, lowering, NVPTX and
line-zero repair; no ptxas). Several RUN lines may share options; each compiles once.

Directives (``# PREFIX[-NEXT|-SAME|-NOT]: pattern`` on a comment line of their own), with
FileCheck's meaning (https://llvm.org/docs/CommandGuide/FileCheck.html):

- ``PREFIX:`` the pattern occurs after the previous match;
- ``PREFIX-NEXT:`` on the line right after the previous match's line;
- ``PREFIX-SAME:`` on the previous match's line, after it;
- ``PREFIX-NOT:`` it does not occur between the previous match and the next positive
  match (from the start / to the end where there is none: a prefix with only ``-NOT``
  directives checks the whole PTX).

A pattern is literal text with FileCheck's forms: ``{{regex}}``; ``[[NAME:regex]]`` binds
what ``regex`` matched and ``[[NAME]]`` must match the same text again (later in the
pattern or in a later directive of the prefix); ``[[@LINE]]``, ``[[@LINE+n]]``,
``[[@LINE-n]]`` are the directive's own line number in the case file plus ``n`` (the
kernel's ``.loc`` lines are the case file's lines). Runs of spaces and tabs match any run
of horizontal whitespace (FileCheck's default); a pattern matches inside a line.

``--update`` (``python -m tests.golden --update``) regenerates the positive directives of
each prefix whose RUN line has ``filter=REGEX``: one directive per PTX line that the
regex finds (``re.search`` on the line without its indentation), registers generalised to
``{{%r[0-9]+}}``, ``PREFIX-NEXT:`` where the line follows the previous one in the PTX. The
block replaces that prefix's positive directives (its ``-NOT`` directives stay where they
are; one between two positives is refused); a prefix with none gets it at the end of
the file, below the code, so that the kernel's lines (what ``.loc`` and ``[[@LINE]]``
name) do not move. A block above a kernel that changes length moves them: the update
compiles again until the file no longer changes. Prefixes without ``filter=`` are written by
hand from the PTX ISA; ``--update`` checks them and reports a failure, never rewrites them.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import importlib.util
import re
import shlex
import sys
from pathlib import Path

CASES = Path(__file__).parent / "cases"

_RUN_RE = re.compile(r"^\s*#\s*RUN:\s*(.*)$")
_DIRECTIVE_RE = re.compile(r"^\s*#\s*([A-Z][A-Z0-9_]*)(-NEXT|-SAME|-NOT)?:(.*)$")
_REGISTER_RE = re.compile(r"%([a-zA-Z]+)[0-9]+\b")
_HSPACE_RE = re.compile(r"[ \t]+")


class GoldenError(Exception):
    """A case file that cannot be read: a bad RUN line or pattern, with its file and line."""


@dataclasses.dataclass(frozen=True)
class Run:
    """One ``RUN:`` line: the prefix it checks, compile options, optional update filter."""

    prefix: str
    kernel: str | None
    options: tuple[tuple[str, object], ...]
    filter: str | None
    line: int


@dataclasses.dataclass(frozen=True)
class Directive:
    """One directive: ``kind`` is ``""``, ``"-NEXT"``, ``"-SAME"`` or ``"-NOT"``; ``line``
    1-based in the case file."""

    prefix: str
    kind: str
    pattern: str
    line: int


@dataclasses.dataclass(frozen=True)
class Case:
    """A parsed case file."""

    path: Path
    text: str
    runs: tuple[Run, ...]
    directives: tuple[Directive, ...]


def _literal(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_case(path: Path, text: str | None = None) -> Case:
    """Read a case file's RUN lines and directives (from ``text`` instead of the file
    when given: a case as ``--update`` would write it).

    Raises:
        GoldenError: a RUN line without a prefix or with a malformed ``key=value``, a
            duplicated prefix, or no RUN line at all.
    """
    if text is None:
        text = path.read_text(encoding="utf-8")
    runs: list[Run] = []
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        m = _RUN_RE.match(line)
        if not m:
            continue
        words = shlex.split(m.group(1))
        if not words or "=" in words[0] or not re.fullmatch(r"[A-Z][A-Z0-9_]*", words[0]):
            raise GoldenError(f"{path}:{number}: RUN needs a PREFIX first, then key=value")
        options, kernel, filt = [], None, None
        for word in words[1:]:
            key, eq, value = word.partition("=")
            if not eq or not key:
                raise GoldenError(f"{path}:{number}: {word!r} is not key=value")
            if key == "kernel":
                kernel = value
            elif key == "filter":
                re.compile(value)
                filt = value
            else:
                options.append((key, _literal(value)))
        if any(r.prefix == words[0] for r in runs):
            raise GoldenError(f"{path}:{number}: prefix {words[0]} has two RUN lines")
        runs.append(Run(words[0], kernel, tuple(options), filt, number))
    if not runs:
        raise GoldenError(f"{path}: no '# RUN: PREFIX ...' line")
    prefixes = {r.prefix for r in runs}
    directives = []
    for number, line in enumerate(lines, 1):
        m = _DIRECTIVE_RE.match(line)
        if m and m.group(1) in prefixes:
            directives.append(Directive(m.group(1), m.group(2) or "", m.group(3).strip(),
                                        number))
    return Case(path, text, tuple(runs), tuple(directives))


def compile_run(case: Case, run: Run, _loaded: dict = {}) -> str:  # noqa: B006 - a cache
    """The PTX of ``run``'s kernel of ``case`` with ``run``'s options over the kernel's own."""
    import warp_lab as wl
    from warp_lab.compiler.pipeline import make_ptx_text
    from warp_lab.options import resolve_options

    module = _loaded.get(case.path)
    if module is None:
        name = "golden_case_" + re.sub(r"\W", "_", case.path.stem)
        spec = importlib.util.spec_from_file_location(name, case.path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _loaded[case.path] = module
    kernels = {k: v for k, v in vars(module).items() if isinstance(v, wl.Kernel)}
    if run.kernel is None and len(kernels) != 1:
        raise GoldenError(f"{case.path}:{run.line}: the file has kernels "
                          f"{sorted(kernels)}: say kernel=NAME")
    kernel = kernels[run.kernel] if run.kernel else next(iter(kernels.values()))
    options = resolve_options(None, kernel.options, dict(run.options))
    return make_ptx_text(kernel, options)


def _canonical(line: str) -> str:
    return _HSPACE_RE.sub(" ", line).strip()


_TOKEN_RE = re.compile(r"\{\{(.*?)\}\}|\[\[(@LINE(?:[+-]\d+)?|[A-Za-z_]\w*)(?::(.*?))?\]\]")


def pattern_regex(d: Directive, bound: dict[str, str], where: str) -> tuple[re.Pattern, list]:
    """``d``'s pattern as a regex and the variable names it binds, in group order.

    Raises:
        GoldenError: a bad ``{{regex}}`` or a use of a variable never bound.
    """
    out, names, pos, text = [], [], 0, _canonical(d.pattern)
    for m in _TOKEN_RE.finditer(text):
        out.append(re.escape(text[pos:m.start()]).replace(r"\ ", "[ \t]+"))
        regex, var, definition = m.groups()
        if regex is not None:
            out.append(f"(?:{regex})")
        elif var.startswith("@LINE"):
            out.append(str(d.line + int(var[5:] or 0)))
        elif definition is not None:
            group = f"v{len(names)}_{var}"
            names.append((group, var))
            out.append(f"(?P<{group}>{definition})")
        elif any(v == var for _, v in names):
            group = next(g for g, v in reversed(names) if v == var)
            out.append(f"(?P={group})")
        elif var in bound:
            out.append(re.escape(bound[var]))
        else:
            raise GoldenError(f"{where}: [[{var}]] is used before it is bound")
        pos = m.end()
    out.append(re.escape(text[pos:]).replace(r"\ ", "[ \t]+"))
    try:
        return re.compile("".join(out)), names
    except re.error as exc:
        raise GoldenError(f"{where}: bad regex in {d.pattern!r}: {exc}") from None


def check(case: Case, prefix: str, ptx: str) -> list[str]:
    """FileCheck ``prefix``'s directives of ``case`` against ``ptx``: the failures, each
    naming the directive's file line and the PTX line where the search started or the
    excluded text was found (empty when all hold)."""
    lines = [_canonical(s) for s in ptx.splitlines()]
    directives = [d for d in case.directives if d.prefix == prefix]
    bound: dict[str, str] = {}
    failures: list[str] = []
    # position: (line index, column) just after the previous positive match
    row, col, matched = 0, 0, False
    pending_not: list[Directive] = []

    def where(d: Directive) -> str:
        return f"{case.path.name}:{d.line}: {d.prefix}{d.kind}"

    def search(rx: re.Pattern, start_row: int, start_col: int, end_row: int):
        for r in range(start_row, min(end_row, len(lines))):
            m = rx.search(lines[r], start_col if r == start_row else 0)
            if m:
                return r, m
        return None

    def excluded(start: tuple[int, int], end: tuple[int, int]) -> None:
        for d in pending_not:
            rx, _ = pattern_regex(d, bound, where(d))
            for r in range(start[0], min(end[0] + 1, len(lines))):
                lo = start[1] if r == start[0] else 0
                hi = end[1] if r == end[0] else len(lines[r])
                if rx.search(lines[r][lo:hi]):
                    failures.append(f"{where(d)}: excluded {d.pattern!r} found at PTX "
                                    f"line {r + 1}: {lines[r]!r}")
                    break
        pending_not.clear()

    for d in directives:
        if d.kind == "-NOT":
            pending_not.append(d)
            continue
        rx, names = pattern_regex(d, bound, where(d))
        if d.kind and not matched:
            raise GoldenError(f"{where(d)}: the prefix's first positive directive "
                              f"cannot be {d.prefix}{d.kind}")
        if d.kind == "-NEXT":
            found = search(rx, row + 1, 0, row + 2)
        elif d.kind == "-SAME":
            found = search(rx, row, col, row + 1)
        else:
            found = search(rx, row, col, len(lines))
        if found is None:
            near = lines[row] if row < len(lines) else "<end>"
            failures.append(f"{where(d)}: {d.pattern!r} not found "
                            f"{'on the next line' if d.kind == '-NEXT' else 'after'} PTX "
                            f"line {row + 1} ({near!r})")
            return failures  # as FileCheck: later directives would only echo this one
        r, m = found
        excluded((row, col), (r, m.start()))
        for group, var in names:
            bound[var] = m.group(group)
        row, col, matched = r, m.end(), True
    excluded((row, col), (len(lines) - 1, len(lines[-1]) if lines else 0))
    return failures


def generalise(line: str) -> str:
    """A PTX line as a pattern: whitespace canonical, each numbered register
    ``%rd12`` as ``{{%rd[0-9]+}}`` (their numbers change with any edit above them)."""
    return _REGISTER_RE.sub(lambda m: "{{%" + m.group(1) + "[0-9]+}}", _canonical(line))


def generated(run: Run, ptx: str) -> list[str]:
    """The directive lines ``--update`` writes for ``run`` (which has a filter)."""
    rx = re.compile(run.filter)
    out, last = [], None
    for number, line in enumerate(ptx.splitlines()):
        if rx.search(line.strip()):
            kind = "-NEXT" if last is not None and number == last + 1 else ""
            out.append(f"# {run.prefix}{kind}: {generalise(line)}")
            last = number
    return out


def updated_text(case: Case, ptxs: dict[str, str]) -> str:
    """``case``'s text with each filtered prefix's positive directives regenerated from
    ``ptxs`` (PTX by prefix).

    Raises:
        GoldenError: a ``-NOT`` directive between two positive ones of a filtered prefix
            (its place in a regenerated block would be a guess).
    """
    text = case.text
    for run in case.runs:
        if run.filter is None:
            continue
        mine = [d for d in parse_case(case.path, text).directives if d.prefix == run.prefix]
        positive = [d.line for d in mine if d.kind != "-NOT"]
        if positive and any(d.kind == "-NOT" and positive[0] < d.line < positive[-1]
                            for d in mine):
            raise GoldenError(f"{case.path}: {run.prefix}-NOT between {run.prefix} "
                              f"directives: the regenerated block cannot keep its place")
        lines = text.splitlines()
        at = positive[0] - 1 if positive else len(lines)  # else at the end, below the code
        kept = [s for n, s in enumerate(lines, 1) if n not in set(positive)]
        gap = [""] if not positive and kept and kept[-1].strip() else []
        kept[at:at] = gap + generated(run, ptxs[run.prefix])
        text = "\n".join(kept) + "\n"
    return text


def cases() -> list[Path]:
    """Every case file, sorted."""
    return sorted(CASES.glob("*.py"))


def run_case(case: Case) -> tuple[dict[str, str], list[str]]:
    """Compile every RUN of ``case`` (once per distinct kernel and options) and check each
    prefix: ``(PTX by prefix, failures)``."""
    ptx_of: dict[tuple, str] = {}
    ptxs, failures = {}, []
    for run in case.runs:
        key = (run.kernel, run.options)
        if key not in ptx_of:
            ptx_of[key] = compile_run(case, run)
        ptxs[run.prefix] = ptx_of[key]
        failures += check(case, run.prefix, ptxs[run.prefix])
    return ptxs, failures


def main(argv: list[str]) -> int:
    """``python -m tests.golden [--update] [--dry-run] [CASE ...]``: check every case (or
    the named ones); with ``--update`` regenerate the filtered prefixes' directives,
    print the unified diff for review and write the files (not with ``--dry-run``).
    Exit status 1 when a check fails after the update."""
    update, dry = "--update" in argv, "--dry-run" in argv
    names = [a for a in argv if not a.startswith("--")]
    paths = [Path(n) if Path(n).exists() else CASES / n for n in names] or cases()
    bad = 0
    for path in paths:
        case = parse_case(path)
        ptxs, failures = run_case(case)
        if update:
            before, text = case.text, updated_text(case, ptxs)
            for _ in range(3):  # a block that moved the kernel's lines changes its .loc
                if dry or text == case.text:
                    break
                path.write_text(text, encoding="utf-8")
                case = parse_case(path)
                ptxs, _ = run_case(case)
                text = updated_text(case, ptxs)
            if text != before:
                sys.stdout.writelines(difflib.unified_diff(
                    before.splitlines(True), text.splitlines(True),
                    f"a/{path.name}", f"b/{path.name}"))
            case = parse_case(path, text)
            failures = [f for run in case.runs for f in check(case, run.prefix,
                                                              ptxs[run.prefix])]
        for failure in failures:
            print(f"FAIL {failure}")
        bad += bool(failures)
        print(f"{'ok  ' if not failures else 'FAIL'} {path.name}")
    return 1 if bad else 0
