"""warp_lab's import graph keeps its layers (docs/architecture.md, "Rules").

The graph is read from the source with ``ast`` (nothing is imported): every ``import`` and
``from ... import`` of a module, at its top or inside a function (a deferred import still
ties the two modules together: the 22-module circle through ``lang/kernel.py`` was made of
deferred imports). Two rules:

- no import cycle wider than one package's own modules (a package: ``compiler/``,
  ``sim/``, ...; ``errors.py``, ``options.py`` and the public ``warp_lab/__init__.py``
  are one each);
- no import upward across packages: each package imports only those :data:`MAY_IMPORT`
  names for it, save the edges of :data:`UPWARD_ALLOWED`, each with its reason, which
  must stay true (an entry whose edge is gone, or no longer upward, fails too).

Run as a script, it prints the widest cycles and every cross-package edge::

    python tests/test_import_graph.py [ROOT]        # ROOT: a checkout (default: this one)
"""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_GROUND = {"errors", "options", "version"}
_BELOW_RUNTIME = _GROUND | {"lang", "compiler", "analysis", "sim"}

#: The layers, bottom up: each package and the packages it may import. From DESIGN.md and
#: docs/architecture.md: errors, the options record and the version are the ground floor
#: (they import no warp_lab package); the kernel language knows
#: no compiler; the compiler no runtime; ``sim/`` knows PTX, not Python (no ``lang`` nor
#: ``compiler``); nothing below ``notebook/`` imports it (nor IPython); the public
#: namespace (``warp_lab/__init__.py``) re-exports from everything; the Warp namespace
#: (``warp/``, ``import warp_lab.warp as wp``) is a second facade over it, and
#: ``examples/`` is kernels written against both.
MAY_IMPORT: dict[str, set[str]] = {
    "errors": set(),
    "options": set(),
    "version": set(),
    "lang": _GROUND,
    "compiler": _GROUND | {"lang"},
    "analysis": _GROUND | {"lang", "compiler"},
    "sim": _GROUND,
    "runtime": _BELOW_RUNTIME,
    "notebook": _BELOW_RUNTIME | {"runtime"},
    "warp_lab": _BELOW_RUNTIME | {"runtime", "notebook"},
    "warp": _BELOW_RUNTIME | {"runtime", "notebook", "warp_lab"},
    "examples": _BELOW_RUNTIME | {"runtime", "notebook", "warp_lab", "warp"},
}

#: Upward edges that stay for now, ``(importer, imported)`` as module names, each with why.
#: Each closes a cycle by construction; the cycle rule sets these edges aside (and only
#: these), so a new cycle still fails.
UPWARD_ALLOWED: dict[tuple[str, str], str] = {
    ("warp_lab.lang.cuda", "warp_lab.compiler.cuda_source"):
        "wl.cuda_kernel finds a translation unit's __global__ functions with the compiler's "
        "C++ scanner (no NVRTC call); the scanner belongs in lang/ (or CudaKernel in "
        "compiler/)",
    ("warp_lab.notebook.magic", "warp_lab"):
        "load_ipython_extension (deferred) binds the public module object as `wl` in the "
        "user namespace; the facade's own load_ipython_extension calls it",
}


def package_of(module: str) -> str:
    """The layer of a module name: ``warp_lab.compiler.lower`` -> ``compiler``,
    ``warp_lab.errors`` -> ``errors``, ``warp_lab`` -> ``warp_lab``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def find_modules(root: Path) -> dict[str, Path]:
    """Every module of the ``warp_lab`` package under ``root``, by dotted name."""
    out = {}
    for path in sorted((root / "warp_lab").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def import_graph(root: Path) -> dict[str, set[str]]:
    """``{module: {warp_lab modules it imports}}``, from the source of every module.

    ``from P import n`` is an edge to ``P.n`` when that is a module, else to ``P``;
    relative imports are resolved; imports of other distributions are left out.
    """
    modules = find_modules(root)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        here = name.split(".") if is_package else name.split(".")[:-1]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = ".".join(here[:len(here) - node.level + 1] if node.level else [])
                base = ".".join(p for p in (base, node.module or "") if p)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.add(sub if sub in modules else base)
        edges = set()
        for target in targets:
            while target and target not in modules:  # import a.b.c of a module a.b
                target = target.rpartition(".")[0]
            if target and target != name:
                edges.add(target)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative),
    widest first, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return sorted(out, key=len, reverse=True)


def cross_package_cycles(graph, set_aside=()) -> list[list[str]]:
    """The cycles whose modules are in more than one package, once the edges
    ``set_aside`` (``(importer, imported)`` pairs) are removed."""
    graph = {a: {b for b in targets if (a, b) not in set_aside} for a, targets in graph.items()}
    return [c for c in cycles(graph) if len({package_of(m) for m in c}) > 1]


def upward_edges(graph, may_import=None) -> list[tuple[str, str]]:
    """Every edge into a package its importer's package may not import (or unknown)."""
    may_import = MAY_IMPORT if may_import is None else may_import
    return sorted((a, b) for a, targets in graph.items() for b in targets
                  if package_of(a) != package_of(b)
                  and package_of(b) not in may_import.get(package_of(a), ()))


@functools.lru_cache(maxsize=None)
def _graph() -> dict[str, set[str]]:
    """This checkout's graph, read once for the tests below."""
    return import_graph(ROOT)


def test_every_package_has_a_layer():
    packages = {package_of(m) for m in _graph()}
    unknown = sorted(packages - set(MAY_IMPORT))
    assert not unknown, (f"package(s) {unknown} have no layer: add each to MAY_IMPORT in "
                         f"{Path(__file__).name} with the packages it may import")
    assert {"errors", "options", "lang", "compiler", "sim", "runtime", "notebook"} <= packages


def test_the_walk_sees_top_level_deferred_and_relative_imports(tmp_path):
    """The reader itself: a top-level import, one inside a function, a ``from P import
    submodule``, a relative one and a name imported from a package are all edges."""
    pkg = tmp_path / "warp_lab"
    (pkg / "sim").mkdir(parents=True)
    (pkg / "__init__.py").write_text("__version__ = '1'\n")
    (pkg / "errors.py").write_text("")
    (pkg / "sim" / "__init__.py").write_text("from warp_lab.sim.machine import run\n")
    (pkg / "sim" / "machine.py").write_text(
        "from . import alu\nfrom ..errors import X\ndef run():\n    from warp_lab import sim\n")
    (pkg / "sim" / "alu.py").write_text("def f():\n    from warp_lab import __version__\n")
    assert import_graph(tmp_path) == {
        "warp_lab": set(), "warp_lab.errors": set(),
        "warp_lab.sim": {"warp_lab.sim.machine"},
        "warp_lab.sim.machine": {"warp_lab.sim.alu", "warp_lab.errors", "warp_lab.sim"},
        "warp_lab.sim.alu": {"warp_lab"},
    }
    graph = import_graph(tmp_path)
    assert cycles(graph) == [["warp_lab.sim", "warp_lab.sim.machine"]]
    assert cross_package_cycles(graph) == []
    assert upward_edges(graph) == [("warp_lab.sim.alu", "warp_lab")]


def test_the_rules_catch_a_planted_cycle_and_upward_edge():
    graph = {"warp_lab.lang.kernel": {"warp_lab.compiler.pipeline", "warp_lab.options"},
             "warp_lab.compiler.pipeline": {"warp_lab.compiler.lower"},
             "warp_lab.compiler.lower": {"warp_lab.lang.kernel"},
             "warp_lab.options": set(),
             "warp_lab.sim.machine": {"warp_lab.compiler.lower"}}
    assert cross_package_cycles(graph) == [["warp_lab.compiler.lower",
                                            "warp_lab.compiler.pipeline",
                                            "warp_lab.lang.kernel"]]
    assert upward_edges(graph) == [("warp_lab.lang.kernel", "warp_lab.compiler.pipeline"),
                                   ("warp_lab.sim.machine", "warp_lab.compiler.lower")]


def test_no_import_cycle_is_wider_than_one_package():
    graph = _graph()
    assert "warp_lab.compiler.frontend" in graph["warp_lab.compiler.pipeline"]  # not vacuous
    wide = cross_package_cycles(graph, set_aside=UPWARD_ALLOWED)
    assert not wide, "import cycles across packages:\n" + "\n".join(
        f"  {len(c)} modules: {', '.join(c)}" for c in wide)


def test_no_package_imports_upward():
    graph = _graph()
    new = [e for e in upward_edges(graph) if e not in UPWARD_ALLOWED]
    assert not new, "imports upward across the layers (MAY_IMPORT):\n" + "\n".join(
        f"  {a} -> {b}" for a, b in new)


def test_the_allowed_upward_edges_are_still_there_and_still_upward():
    upward = set(upward_edges(_graph()))
    stale = [e for e in UPWARD_ALLOWED if e not in upward]
    assert not stale, ("UPWARD_ALLOWED entries that are no longer upward edges (remove them): "
                       + ", ".join(f"{a} -> {b}" for a, b in stale))


def test_the_compilers_view_of_the_kernel_language_is_the_public_namespaces():
    """The undefined-name hint (``typing_exprs``) reads the kernel's names from ``lang/``
    instead of importing ``warp_lab``: it must see exactly what ``wl`` exports of them."""
    import numpy as np

    import warp_lab
    from warp_lab.compiler.typing_exprs import kernel_language_name
    from warp_lab.lang import builtins as B
    from warp_lab.lang.types import Type

    kinds = (B.Builtin, B.Dim3, Type, int, float, np.generic)
    public = {n for n in dir(warp_lab) if not n.startswith("_")
              and isinstance(getattr(warp_lab, n), kinds)}
    assert {"syncthreads", "thread_idx", "float32", "FULL_MASK", "vec3"} <= public
    for name in public:
        assert kernel_language_name(name) is getattr(warp_lab, name), name
    from warp_lab.lang import types as T
    others = (set(dir(B)) | set(dir(T))) - public
    assert not [n for n in others if isinstance(kernel_language_name(n), kinds)]


def _report(root: Path) -> None:
    graph = import_graph(root)
    print(f"{len(graph)} modules, {sum(map(len, graph.values()))} imports")
    for c in cycles(graph):
        packages = sorted({package_of(m) for m in c})
        print(f"cycle of {len(c)} modules ({', '.join(packages)}): {', '.join(c)}")
    for c in cross_package_cycles(graph, set_aside=UPWARD_ALLOWED):
        print(f"across packages without the allowed upward edges: {len(c)} modules: "
              + ", ".join(c))
    for a, b in upward_edges(graph):
        print(f"upward: {a} -> {b}" + ("  (allowed)" if (a, b) in UPWARD_ALLOWED else ""))


if __name__ == "__main__":
    _report(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT)
