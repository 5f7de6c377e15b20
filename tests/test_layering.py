"""The package's shape, pinned: which subsystem may import which, no cycles, no private reaches.

Every import counts: at module level, inside a function, under ``TYPE_CHECKING`` and through
``importlib.import_module("literal")``. A lazy import changes *when* a module is loaded, never
*whether* one subsystem depends on another, so it must not hide a cycle or an arrow the drawing
lacks. :data:`LAYERS` is the table; ``docs/design.md`` §1 draws the same table, and
:func:`test_the_design_drawing_is_the_table` holds the two together.

These are the properties that let a newcomer change one module without reading the others: an
import cycle is usually dodged with a lazy import that hides it, and a private name used from
another module is a seam nobody documented (issues 13 and 19).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

MEMORY_SHARED = ("memory.errors", "memory.settings", "memory.roots", "memory.fsutil", "memory.redact", "memory.textutil", "memory.lazylog", "memory.values")
DREAMD_SHARED = ("dreamd.config", "dreamd.logs", "dreamd.notify")
"""The shared modules at the foot of each package: any unit of the package may import them;
they import only each other (and, for dreamd's, anything of ``memory/``)."""

LAYERS: dict[str, tuple[str, ...]] = {
    # memory/: what an agent imports. Never imports dreamd/.
    "memory": ("memory.client", "memory.retrieval", "memory.store"),  # the API, re-exported lazily
    "memory.client": ("memory.spool", "memory.store"),
    "memory.retrieval": ("memory.model", "memory.store"),
    "memory.spool": ("memory.store",),
    "memory.model": ("memory.store",),
    "memory.store": (),
    "memory.transcripts": (),
    # dreamd/: the daemon and the command. May import any unit of memory/.
    "dreamd": (),
    "dreamd.__main__": ("dreamd.command",),
    "dreamd.command": ("dreamd.cli", "dreamd.hook"),
    "dreamd.cli": (
        "dreamd.console", "dreamd.daemon", "dreamd.hook", "dreamd.jobs", "dreamd.mcp", "dreamd.models",
        "dreamd.setup", "dreamd.status", "dreamd.sync", "dreamd.embeddings",
        "dreamd.models.offline.extract",  # dreamd explain traces the extractor
    ),
    "dreamd.daemon": ("dreamd.console", "dreamd.embeddings", "dreamd.jobs", "dreamd.sync"),  # [ui] enabled: the console's thread
    "dreamd.mcp": ("dreamd.embeddings", "dreamd.hook", "dreamd.jobs", "dreamd.models"),  # the one placement rule; the warm model
    "dreamd.jobs": ("dreamd.embeddings", "dreamd.models", "dreamd.sync"),  # the team lease; a dream reads the vector cache
    "dreamd.models": (  # retention, candidates, supersession: the clause comparisons
        "dreamd.models.offline", "dreamd.models.offline.compare", "dreamd.models.offline.plan", "dreamd.models.offline.text",
    ),
    "dreamd.models.offline": ("dreamd.models.offline.extract", "dreamd.models.offline.plan", "dreamd.models.offline.text"),
    "dreamd.models.offline.extract": (  # corrections and supersession read the clause comparisons
        "dreamd.models.offline.compare", "dreamd.models.offline.contradiction", "dreamd.models.offline.markers",
        "dreamd.models.offline.text",
    ),
    "dreamd.models.offline.plan": (
        "dreamd.models.offline.compare", "dreamd.models.offline.contradiction", "dreamd.models.offline.markers",
        "dreamd.models.offline.text",
    ),
    "dreamd.models.offline.compare": ("dreamd.models.offline.markers", "dreamd.models.offline.text"),  # what both halves compare
    "dreamd.models.offline.contradiction": ("dreamd.models.offline.text",),
    "dreamd.models.offline.text": ("dreamd.models.offline.markers",),
    "dreamd.models.offline.markers": (),  # the lexicons of reasons and alternatives, one definition each
    "dreamd.hook": ("dreamd.embeddings",),  # the prompt hook asks the daemon's model (stdlib client)
    "dreamd.embeddings": (),
    "dreamd.setup": ("dreamd.hook", "dreamd.status"),  # the service step asks whether a daemon runs
    "dreamd.status": ("dreamd.embeddings", "dreamd.hook", "dreamd.jobs", "dreamd.models", "dreamd.sync"),  # unplaced sessions
    "dreamd.console": ("dreamd.jobs", "dreamd.status"),
    "dreamd.sync": (),
}
"""Unit → the other units it may import (besides the shared modules). A module belongs to the
longest unit its dotted name starts with; a shared module is a unit of its own."""

KNOWN_ARROWS: dict[tuple[str, str], str] = {}
"""Imports outside :data:`LAYERS` that exist today, each with who removes it."""

KNOWN_PRIVATE: dict[tuple[str, str], str] = {
    ("memory.redact.engine", "_code"): "the standard library's re._compiler._code: the hook keeps its regexes' SRE code"
    " between processes (issue 22's budget) and falls back to re.compile when the interpreter's internals differ;"
    " goes when CPython can rebuild a pattern from saved code publicly",
}
"""Private names used across modules today, each with who removes it (stale entries fail)."""


# ---------------------------------------------------------------------------- reading the tree


@cache
def modules() -> dict[str, tuple[Path, ast.Module]]:
    out: dict[str, tuple[Path, ast.Module]] = {}
    for package in ("memory", "dreamd"):
        for path in sorted((REPO / package).rglob("*.py")):
            name = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
            out[name] = (path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return out


@dataclass(frozen=True)
class Import:
    importer: str
    target: str
    """The module the import loads (``from pkg import sub`` → ``pkg.sub`` when that is a module)."""
    names: tuple[str, ...]
    line: int


def _absolute(importer: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    path, _ = modules()[importer]
    base = importer.split(".") if path.name == "__init__.py" else importer.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _own(name: str) -> bool:
    return name.split(".")[0] in ("memory", "dreamd")


def imports_of(importer: str) -> Iterator[Import]:
    """Every import of ``importer``'s own packages, wherever it is written in the module."""
    _, tree = modules()[importer]
    known = modules()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _own(alias.name):
                    yield Import(importer, alias.name, (), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(importer, node)
            if not _own(base):
                continue
            plain = [a.name for a in node.names if f"{base}.{a.name}" not in known]
            if plain:
                yield Import(importer, base, tuple(plain), node.lineno)
            for a in node.names:
                if f"{base}.{a.name}" in known:
                    yield Import(importer, f"{base}.{a.name}", (), node.lineno)
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) in ("importlib.import_module", "import_module")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and _own(node.args[0].value)
        ):
            yield Import(importer, node.args[0].value, (), node.lineno)


def all_imports() -> list[Import]:
    return [imp for mod in modules() for imp in imports_of(mod)]


def unit_of(module: str) -> str:
    for shared in (*MEMORY_SHARED, *DREAMD_SHARED):
        if module == shared or module.startswith(shared + "."):
            return shared  # a shared module may be a package (memory.redact)
    best = max((u for u in LAYERS if module == u or module.startswith(u + ".")), key=len, default=None)
    assert best is not None, f"{module} is in no unit of LAYERS"
    return best


def allowed(src: str, dst: str) -> bool:
    if src == dst:
        return True
    src_pkg, dst_pkg = src.split(".")[0], dst.split(".")[0]
    if src_pkg == "memory" and dst_pkg == "dreamd":
        return False
    if src_pkg == "dreamd" and dst_pkg == "memory":
        return True  # dreamd/ stands on memory/; memory/'s own table orders memory/
    shared = MEMORY_SHARED if src_pkg == "memory" else DREAMD_SHARED
    if dst in shared:
        return True
    if src in shared:
        return False
    return dst in LAYERS[src]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


# ---------------------------------------------------------------------------- the reader itself


def test_the_reader_sees_lazy_type_checking_and_by_name_imports() -> None:
    """The scan below is only as good as what it sees: pin the three kinds that hide."""
    seen = {(i.importer, i.target) for i in all_imports()}
    assert ("memory.retrieval.select", "memory.model.answer_gate") in seen  # TYPE_CHECKING and lazy
    assert ("dreamd.models.factory", "dreamd.models.offline.model") in seen  # importlib, by name
    assert ("dreamd.cli.daemon", "dreamd.daemon.supervisor") in seen  # inside a function
    assert ("memory.spool.queue", "memory.spool.jobformat") in seen  # module level


def test_the_checks_fail_on_what_they_forbid() -> None:
    assert not allowed("memory.store", "dreamd.config")
    assert not allowed("memory.store", "memory.spool")
    assert not allowed("dreamd.jobs", "dreamd.daemon")
    assert not allowed("memory.settings", "memory.spool")
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


# ---------------------------------------------------------------------------- layering and cycles


def test_every_module_belongs_to_a_unit_of_the_table() -> None:
    """A new subsystem gets its folder *and* its row here (and in the drawing)."""
    stray = [m for m in modules() if unit_of(m) in ("memory", "dreamd") and m not in ("memory", "dreamd")]
    assert stray == []


def test_memory_never_imports_dreamd_anywhere() -> None:
    offenders = [f"{i.importer}:{i.line} imports {i.target}" for i in all_imports()
                 if i.importer.split(".")[0] == "memory" and i.target.split(".")[0] == "dreamd"]
    assert offenders == []


def test_every_import_follows_the_layering() -> None:
    """Every import, lazy ones included, goes down the table: a unit imports only the units
    :data:`LAYERS` gives it and the shared modules."""
    offenders = []
    used_known = set()
    for i in all_imports():
        key = (i.importer, i.target)
        if allowed(unit_of(i.importer), unit_of(i.target)):
            continue
        if key in KNOWN_ARROWS:
            used_known.add(key)
            continue
        offenders.append(f"{i.importer}:{i.line} imports {i.target} ({unit_of(i.importer)} -> {unit_of(i.target)})")
    assert offenders == []
    assert set(KNOWN_ARROWS) - used_known == set(), "no longer imported: delete from KNOWN_ARROWS"


def test_no_import_cycle_between_modules_counting_lazy_imports() -> None:
    graph: dict[str, set[str]] = {m: set() for m in modules()}
    for i in all_imports():
        if i.target in graph and i.target != i.importer:
            graph[i.importer].add(i.target)
    assert _cycles(graph) == []


def test_no_import_cycle_between_units_counting_lazy_imports() -> None:
    graph: dict[str, set[str]] = {}
    for i in all_imports():
        src, dst = unit_of(i.importer), unit_of(i.target)
        if src != dst:
            graph.setdefault(src, set()).add(dst)
    assert _cycles(graph) == []


# ---------------------------------------------------------------------------- the drawing


def drawing() -> dict[str, tuple[str, ...]]:
    """The arrows of docs/design.md §1's code block: under a ``memory/`` or ``dreamd/`` heading,
    a line indented two spaces starts a unit (relative to its package: ``models/offline/plan/``;
    ``(package)`` for the package's ``__init__``); its ``-> a, b`` (``-> -`` for none) may follow
    on that line or a deeper-indented one. ``shared:`` lines draw no arrow."""
    text = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    section = text.split("## 1. ", 1)[1].split("\n## ", 1)[0]
    block = section.split("```\n", 2)[1]
    out: dict[str, tuple[str, ...]] = {}
    package = unit = ""

    def full(name: str) -> str:
        name = name.strip().rstrip("/")
        return package if name == "(package)" else f"{package}.{name.replace('/', '.')}"

    for line in block.splitlines():
        head = re.match(r"^(memory|dreamd)/\s", line)
        if head:
            package, unit = head.group(1), ""
            continue
        start = re.match(r"^  (\S+)", line)
        if start:
            unit = "" if start.group(1) == "shared:" else full(start.group(1))
        if "->" in line and unit:
            deps = line.split("->", 1)[1].strip()
            assert unit not in out, f"two arrows for {unit}"
            out[unit] = () if deps == "-" else tuple(sorted(full(d) for d in deps.split(",")))
    return out


def test_the_design_drawing_is_the_table() -> None:
    table = {u: tuple(sorted(v)) for u, v in LAYERS.items() if u not in ("dreamd", "dreamd.__main__")}
    assert drawing() == table


# ---------------------------------------------------------------------------- private names


def _defined(tree: ast.Module) -> set[str]:
    """Names a module defines: functions, classes, assigned names and its own attributes."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
              and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses() -> list[tuple[str, str, int, str]]:
    """(module, private name, line, how) for every private name a module uses but does not own."""
    out = []
    for mod, (_, tree) in modules().items():
        own = _defined(tree)
        for i in imports_of(mod):
            for name in i.names:
                if _private(name):
                    out.append((mod, name, i.line, f"from {i.target} import {name}"))
            if any(_private(part) for part in i.target.split(".")):
                parent = ".".join(p for p in i.target.split(".") if not _private(p))
                if not (mod == parent or mod.startswith(parent + ".")):
                    out.append((mod, i.target, i.line, f"imports the private module {i.target}"))
        in_class = {id(n) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for n in ast.walk(c)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or not _private(node.attr):
                continue
            on_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            if isinstance(node.ctx, ast.Store) and not on_self and id(node) not in in_class:
                # a class may build an instance of itself (a classmethod constructor); no one else
                out.append((mod, node.attr, node.lineno, f"sets {ast.unparse(node)} from outside its class"))
            elif node.attr not in own:
                out.append((mod, node.attr, node.lineno, f"uses {ast.unparse(node)}"))
    return out


def test_no_module_uses_a_private_name_of_another() -> None:
    """A name another module needs is public (no underscore) and said so in its ``__all__``;
    a private attribute is set only by its own class."""
    offenders = []
    used_known = set()
    for mod, name, line, how in private_uses():
        if (mod, name) in KNOWN_PRIVATE:
            used_known.add((mod, name))
            continue
        offenders.append(f"{mod}:{line} {how}")
    assert offenders == []
    assert set(KNOWN_PRIVATE) - used_known == set(), "no longer used: delete from KNOWN_PRIVATE"


def test_the_private_name_scan_sees_a_reach() -> None:
    planted = ast.parse("from memory.store.history import _entry\n"
                        "class S:\n    _records: dict[str, int]\n"
                        "def make() -> S:\n    store = S()\n    store._records = {}\n    return store\n"
                        "x = obj._hidden\n")
    modules()["memory.planted"] = (REPO / "planted.py", planted)
    try:
        found = {(n, how.split()[0]) for m, n, _, how in private_uses() if m == "memory.planted"}
    finally:
        del modules()["memory.planted"]
    assert found == {("_entry", "from"), ("_records", "sets"), ("_hidden", "uses")}


def _store_private_names() -> set[str]:
    _, tree = modules()["memory.store.transaction"]
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "MemoryStore")
    names = {n.name for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            names.add(node.attr)
    return {n for n in names if _private(n)}


def test_no_module_reaches_into_the_stores_private_state() -> None:
    """Reconcile, adoption, rollback and sync use the store's documented methods; a private
    name of ``MemoryStore`` used on anything but ``self`` outside ``memory/store/transaction.py``
    fails, even where the other module happens to define a name like it."""
    private = _store_private_names()
    assert {"_load", "_write", "_named"} <= private  # the scan below looks for the right names
    offenders = []
    for mod, (_, tree) in modules().items():
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
