"""The package's shape, pinned: ``memory/`` never imports ``dreamd/``, its modules import each
other without cycles, and no module reaches into the store's private state.

These are the properties that let a newcomer change one module without reading the others:
an import cycle is usually dodged with a lazy import that hides it, and a private reach into
``MemoryStore`` is a seam nobody documented (issue 13).
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _modules(package: str) -> dict[str, ast.Module]:
    out: dict[str, ast.Module] = {}
    for path in sorted((REPO / package).rglob("*.py")):
        name = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        out[name] = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return out


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    return []


def test_memory_never_imports_dreamd_anywhere() -> None:
    offenders = [
        f"{mod} imports {name}"
        for mod, tree in _modules("memory").items()
        for node in ast.walk(tree)
        for name in _imported(node)
        if name == "dreamd" or name.startswith("dreamd.")
    ]
    assert offenders == []


def test_memory_modules_import_each_other_without_cycles() -> None:
    """Module-level imports only: an import inside a function or under TYPE_CHECKING runs later
    (or never), so it cannot make a cycle at import time — but it must not be needed to hide one."""
    trees = _modules("memory")
    graph: dict[str, set[str]] = {}
    for mod, tree in trees.items():
        deps: set[str] = set()
        for node in tree.body:
            deps.update(name for name in _imported(node) if name in trees and name != mod)
        graph[mod] = deps

    def cycle_from(start: str) -> list[str] | None:
        stack: list[tuple[str, list[str]]] = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for dep in graph[node]:
                if dep == start:
                    return [*path, dep]
                if dep not in path:
                    stack.append((dep, [*path, dep]))
        return None

    cycles = [c for c in (cycle_from(m) for m in sorted(graph)) if c is not None]
    assert cycles == []


def _store_private_names() -> set[str]:
    tree = _modules("memory")["memory.store.transaction"]
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "MemoryStore")
    names = {n.name for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            names.add(node.attr)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def test_no_module_reaches_into_the_stores_private_state() -> None:
    """Reconcile, adoption, rollback and sync use the store's documented methods; a private
    name of ``MemoryStore`` used on anything but ``self`` outside ``memory/store/transaction.py`` fails."""
    private = _store_private_names()
    assert {"_load", "_write", "_named"} <= private  # the scan below looks for the right names
    offenders = []
    for package in ("memory", "dreamd"):
        for mod, tree in _modules(package).items():
            if mod == "memory.store.transaction":
                continue
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Attribute)
                    and node.attr in private
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                ):
                    offenders.append(f"{mod}:{node.lineno} .{node.attr}")
    assert offenders == []
