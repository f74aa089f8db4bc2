"""The house stays tidy: no import cycles between ragmeter's modules, and no lower layer imports a higher one.

The imports are read from the source with ``ast``, not by importing it. Every import that runs
counts, also one inside a function (a lazy import still runs, and would close a cycle the
moment it does); only imports under ``if TYPE_CHECKING:`` are left out, and the lazy attribute
hook of the ``ragmeter`` package itself (``ragmeter.evaluate`` and friends), which is the
public facade over everything.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

FORBIDDEN = {
    "executors": ("harness", "judges", "mining", "report", "cli", "api"),
    "metrics": ("cli", "report", "judges", "io", "harness"),
    "schema": ("cli",),
}
"""Layer (a package under ``ragmeter``) → what it must never import."""


def _modules() -> dict[str, Path]:
    """Dotted module name → its file, for every module of ``src/ragmeter``."""
    found = {}
    for path in sorted((SRC / "ragmeter").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.Module, *, module_level_only: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements that run (not under ``if TYPE_CHECKING:``)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        if module_level_only and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _owner(name: str) -> str | None:
    """The module of ours that importing ``name`` runs (``a.b.func`` → ``a.b``), or None."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports_of(module: str) -> set[str]:
    """Our modules that ``module`` imports (and the packages above them, which run first)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in _runtime_imports(tree, module_level_only=module == "ragmeter"):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            base = ".".join([*anchor, *([base] if base else [])])
        names.extend(f"{base}.{alias.name}" for alias in node.names)
    found = set()
    for name in names:
        owner = _owner(name)
        while owner is not None:
            if owner != module and not module.startswith(owner + "."):
                found.add(owner)
            owner = owner.rpartition(".")[0] or None
    return found


GRAPH = {module: _imports_of(module) for module in MODULES}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_the_import_graph_is_read() -> None:
    assert "ragmeter.executors.base" in GRAPH["ragmeter.executors.local"]
    assert "ragmeter.executors" in GRAPH["ragmeter.harness.remote"], "a package runs before its modules"
    assert "ragmeter.api" in GRAPH["ragmeter.partitioned_trec"]


def test_no_import_cycles() -> None:
    assert _cycles(GRAPH) == []


def test_a_cycle_would_be_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_lower_layers_never_import_higher_ones(layer: str) -> None:
    higher = {f"ragmeter.{name}" for name in FORBIDDEN[layer]}
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        if _layer(module) == layer
        for target in targets
        if target in higher or any(target.startswith(h + ".") for h in higher)
    )
    assert wrong == []
