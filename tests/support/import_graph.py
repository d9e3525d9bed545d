"""The import graph of a package, read from its source with `ast` (nothing is imported).

An edge A -> B means module A imports B: at module level, in a function, or under TYPE_CHECKING (a
dependency all the same). A package's `__init__` gathering its own modules (a facade) is not an edge
back from them: only a module naming its package in an import depends on the `__init__`.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(package: str) -> dict[str, Path]:
    """Every module of `package` by dotted name (a package by its own name, for its `__init__`)."""
    return {module_name(path): path for path in sorted((ROOT / package).rglob("*.py"))}


def imported(path: Path, name: str, known: set[str]) -> set[str]:
    """The modules of `known` that `path` (the module `name`) imports, relative imports made absolute:
    for `from a import b`, `a.b` when it is a module, else `a` (whose `__init__` defines `b`)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names)
    return (found & known) - {name}


@functools.cache
def graph(package: str) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports."""
    known = modules(package)
    return {name: imported(path, name, set(known)) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm): each is a loop."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def longest_chain(edges: dict[str, set[str]]) -> list[str]:
    """The longest chain of imports (A imports B imports C ...), as the modules on it: its length is the
    graph's depth in levels (a module importing nothing is one level). The graph must have no loop."""

    @functools.cache
    def from_(node: str) -> tuple[str, ...]:
        below = [from_(target) for target in sorted(edges.get(node, ()))]
        return (node, *max(below, key=len, default=()))

    return list(max((from_(node) for node in sorted(edges)), key=len, default=()))
