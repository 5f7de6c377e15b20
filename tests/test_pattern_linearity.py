"""Every pattern the offline engine runs over user text takes time linear in the text (issue 21 §3).

One pasted line used to stall extraction: ``_REASON_SPLIT`` was cubic in a run of spaces
("Always run the linter" + 400 spaces + "before pushing." took 4 s), and the planner's
``_ZH_NUMERAL`` quadratic in a body's length. This test finds every compiled pattern in the
engine's modules (module globals, plus every literal pattern passed to ``re.match`` /
``re.search`` / … inside a function, found in the source) and feeds each, through ``.search()`` (or
``.match()`` / ``.fullmatch()`` for a literal only ever run that way), repeated units of each character
class at 10,000 characters, bare and between words.

No wall-clock limit: a pattern is superlinear when its time grows more than
:data:`MAX_GROWTH` times while the text grows :data:`GROWTH` times (each step of 40 → 160 → … →
10,240 characters: linear is 4, quadratic 16, cubic 64), in CPU time of this thread, min of a
few runs, and confirmed by measuring twice more, so load on the machine does not fail it; the
small first steps stop a cubic pattern before it runs for minutes.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import pkgutil
import re
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import dreamd.models.offline as offline

SIZES = (40, 160, 640, 2560, 10240)
GROWTH = 4
MAX_GROWTH = 8  # between linear (4) and quadratic (16)
UNITS = (" ", "\t", "\n", "a", "ab ", "A", "7", "1.", "a-", "中", "，", ", ", "a, ", ".!?", "不对，", "sorry  ")
# a run between words, as pasted: "Always run the linter" + 400 spaces + "before pushing."
BETWEEN_WORDS = ("Always run the linter", "before pushing.")
WRAPPED = (" ", "\t", "\n", ", ", "sorry  ")
# Every pattern is linear now (issue 21 §3). A pattern that cannot be made linear without changing what
# it matches goes here with the reason; the list only shrinks.
KNOWN_SUPERLINEAR: frozenset[str] = frozenset()


def _modules() -> Iterator[ModuleType]:
    yield offline
    for info in pkgutil.walk_packages(offline.__path__, offline.__name__ + "."):
        yield importlib.import_module(info.name)


ANCHORED = ("match", "fullmatch")


def _inline(path: Path) -> Iterator[tuple[str, re.Pattern[str], str]]:
    """Literal patterns compiled where they are used (``re.search(r"…", text, re.I)``), with the call.

    A pattern passed to ``re.match`` / ``re.fullmatch`` is only ever tried at the start of its text, so it is
    measured that way; every other call (and ``re.compile``, whose use is not known) is measured by ``search``.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                and node.func.attr in ("match", "search", "fullmatch", "sub", "subn", "split", "findall",
                                       "finditer", "compile")
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            continue
        flags = 0
        for arg in [*node.args[1:], *(k.value for k in node.keywords if k.arg == "flags")]:
            for name in ast.walk(arg):
                if (isinstance(name, ast.Attribute) and isinstance(name.value, ast.Name) and name.value.id == "re"
                        and isinstance(flag := getattr(re, name.attr, None), re.RegexFlag)):
                    flags |= flag
        # named by file and pattern, not line, so an edit elsewhere in the file does not rename it
        digest = hashlib.sha1(f"{node.args[0].value}\0{flags}".encode()).hexdigest()[:8]
        name = f"{path.relative_to(Path(offline.__path__[0])).as_posix()}#{digest}"
        yield name, re.compile(node.args[0].value, flags), node.func.attr


def _assigned(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}


def engine_patterns() -> dict[str, re.Pattern[str]]:
    return {name: pattern for name, (pattern, _) in engine_calls().items()}


def engine_calls() -> dict[str, tuple[re.Pattern[str], str]]:
    """Every engine pattern by name, with how it is run: ``search``, or ``match`` / ``fullmatch`` when every
    place that runs it anchors it at the start."""
    found: dict[str, re.Pattern[str]] = {}
    method: dict[tuple[str, int], str] = {}
    seen: set[tuple[str, int]] = set()

    def add(name: str, pattern: re.Pattern[str]) -> None:
        if (pattern.pattern, pattern.flags) not in seen:
            seen.add((pattern.pattern, pattern.flags))
            found[name] = pattern

    modules = list(_modules())
    for defining in (True, False):  # named after the module that defines it, not one importing it
        for module in modules:
            assigned = _assigned(Path(str(getattr(module, "__file__", ""))))
            for name, value in sorted(vars(module).items()):
                if isinstance(value, re.Pattern) and isinstance(value.pattern, str) and (name in assigned) == defining:
                    add(f"{module.__name__.removeprefix(offline.__name__ + '.')}.{name}", value)
    for path in sorted(Path(offline.__path__[0]).rglob("*.py")):
        for name, pattern, call in _inline(path):
            add(name, pattern)
            key = (pattern.pattern, pattern.flags)
            method[key] = call if call in ANCHORED and method.get(key, call) == call else "search"
    # a module's compiled pattern may be run any way: only a literal at its call is known to be anchored
    return {name: (pattern, method.get((pattern.pattern, pattern.flags), "search") if "#" in name else "search")
            for name, pattern in found.items()}


def _cpu(pattern: re.Pattern[str], text: str, runs: int, method: str) -> float:
    run = getattr(pattern, method)
    best = float("inf")
    for _ in range(runs):
        start = time.thread_time()
        run(text)
        best = min(best, time.thread_time() - start)
    # Below ~20 µs a search's time is the call and the cache more than the pattern: a ratio of
    # two such times means nothing (a linear pattern read 9.6 -> 84 µs from 40 to 160 characters,
    # x8.7, then x4.5, x4.2, x4.0; CI failed on it once). A superlinear pattern still shows, at
    # the larger steps where its times are far above this floor.
    return max(best, 2e-5)


def growth(pattern: re.Pattern[str], unit: str, wrap: tuple[str, str], runs: int = 1,
           method: str = "search") -> tuple[int, float] | None:
    """The first size at which the time grew more than :data:`MAX_GROWTH` times, with the factor."""
    before = None
    for n in SIZES:
        t = _cpu(pattern, wrap[0] + unit * (n // len(unit)) + wrap[1], runs, method)
        if before is not None and t > MAX_GROWTH * before:
            return n, t / before
        before = t
    return None


def superlinear(pattern: re.Pattern[str], method: str = "search") -> list[str]:
    slow = []
    for unit in UNITS:
        for wrap in (("", ""), BETWEEN_WORDS) if unit in WRAPPED else (("", ""),):
            first = growth(pattern, unit, wrap, method=method)
            if first and all(growth(pattern, unit, wrap, runs=3, method=method) for _ in range(2)):
                slow.append(f"{unit!r}{' between words' if wrap[0] else ''} (x{first[1]:.0f} at {first[0]})")
    return slow


def test_the_census_finds_the_engines_patterns() -> None:
    patterns = engine_patterns()
    assert len(patterns) > 400
    assert "text.REASON_NEXT" in patterns
    assert set(patterns) >= KNOWN_SUPERLINEAR, sorted(KNOWN_SUPERLINEAR - set(patterns))
    assert any(name.startswith("contradiction.py#") for name in patterns)


def test_the_check_catches_a_quadratic_and_a_cubic_pattern() -> None:
    assert superlinear(re.compile(r"\s*[,;]?\s*because"))  # the shape _REASON_SPLIT had: cubic
    assert superlinear(re.compile(r"[a-z ]+!"))  # quadratic
    assert not superlinear(re.compile(r"(?<!\s)\s*+[,;]?\s*+because"))


def test_the_two_stalls_of_issue_21_are_linear() -> None:
    from dreamd.models.offline import text
    from dreamd.models.offline.compare import paraphrase

    assert not superlinear(text._REASON_SPLIT)
    assert not superlinear(paraphrase._ZH_NUMERAL)


def test_every_engine_pattern_is_linear_in_its_text() -> None:
    failures = {
        name: slow
        for name, (pattern, method) in engine_calls().items()
        if name not in KNOWN_SUPERLINEAR and (slow := superlinear(pattern, method))
    }
    assert not failures, "superlinear patterns:\n" + "\n".join(
        f"  {name}: {', '.join(slow)}" for name, slow in sorted(failures.items())
    )


MARKUP_UNITS = ("<script ", "<script", "<style a=\"", "<template '", "<!--", "<!-- -->", "]:", "[x]: ", "不再")


def test_the_retention_gates_patterns_are_linear_in_a_plans_text() -> None:
    """The retention gate (``dreamd/models/retention.py``) runs its patterns over a model's plan,
    which is untrusted text too: each is linear in every unit above and in repeated markup
    (``'<script '`` over and over took time quadratic in its length before the open tag could
    end the text)."""
    from dreamd.models import retention

    patterns = {name: value for name, value in vars(retention).items() if isinstance(value, re.Pattern)}
    assert {"_HIDDEN", "_SEGMENT", "_ZH_NEGATION"} <= set(patterns)
    units = UNITS + MARKUP_UNITS
    failures = {}
    for name, pattern in sorted(patterns.items()):
        slow = []
        for unit in units:
            first = growth(pattern, unit, ("", ""))
            if first and all(growth(pattern, unit, ("", ""), runs=3) for _ in range(2)):
                slow.append(f"{unit!r} (x{first[1]:.0f} at {first[0]})")
        if slow:
            failures[name] = slow
    assert not failures, failures
