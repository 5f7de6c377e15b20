"""No dead code: ``vulture`` over ``memory/`` and ``dreamd/`` reports exactly the allow-list.

A name nothing uses is a name someone will read, trust and maintain for nothing (issue 19 found
six). Names that only look unused — framework callbacks, protocol hooks, names dispatched by a
string — are listed in ``tests/dead_code_allowlist.txt``, each with its reason; anything else
vulture reports fails here, and so does an allow-list line that no longer applies.
"""

from __future__ import annotations

import re
from pathlib import Path

import vulture

REPO = Path(__file__).resolve().parents[1]
ALLOWLIST = REPO / "tests" / "dead_code_allowlist.txt"


def allowlist() -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    for n, line in enumerate(ALLOWLIST.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        m = re.fullmatch(r"(\S+) (\S+) +# (.+)", line)
        assert m is not None, f"{ALLOWLIST.name}:{n}: expected '<path> <name>  # <reason>'"
        out[(m.group(1), m.group(2))] = m.group(3)
    return out


def unused(paths: list[Path]) -> set[tuple[str, str]]:
    v = vulture.Vulture(verbose=False)
    v.scavenge([str(p) for p in paths])
    return {(Path(item.filename).resolve().relative_to(REPO).as_posix(), item.name)
            for item in v.get_unused_code(min_confidence=0)}


def test_vulture_reports_only_the_allowed_names() -> None:
    found = unused([REPO / "memory", REPO / "dreamd"])
    allowed = allowlist()
    assert sorted(found - set(allowed)) == [], "unused: remove them, or allow them with a reason"
    assert sorted(set(allowed) - found) == [], "allowed but no longer reported: delete the line"


def test_vulture_finds_a_planted_unused_function(tmp_path: Path) -> None:
    mod = tmp_path / "probe.py"
    mod.write_text("def used() -> int:\n    return 1\n\n\ndef never_called() -> int:\n    return used()\n",
                   encoding="utf-8")
    v = vulture.Vulture(verbose=False)
    v.scavenge([str(mod)])
    assert [item.name for item in v.get_unused_code(min_confidence=0)] == ["never_called"]
