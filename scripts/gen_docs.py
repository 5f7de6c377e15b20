"""Refresh the generated sections of README.md from their single sources.

    python scripts/gen_docs.py            # rewrite the sections in README.md
    python scripts/gen_docs.py --check    # exit 1 when README.md is stale

Sections are delimited by ``<!-- BEGIN name ... -->`` / ``<!-- END name -->`` markers:
``config-reference`` (from ``dreamd.config.SCHEMA``) and ``events`` (from
``dreamd.logs.EVENTS``). The census section has its own script (``scripts/census.py``) because
it runs the system; it reuses :func:`replace_section`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
README = REPO / "README.md"


def _span(text: str, name: str) -> tuple[int, int]:
    begin = re.search(rf"<!-- BEGIN {re.escape(name)}\b[^>]*-->\n?", text)
    end = re.search(rf"<!-- END {re.escape(name)} -->", text)
    if begin is None or end is None or end.start() < begin.end():
        raise SystemExit(f"README.md: markers for section {name!r} are missing")
    return begin.end(), end.start()


def section(text: str, name: str) -> str:
    start, end = _span(text, name)
    return text[start:end]


def replace_section(text: str, name: str, body: str) -> str:
    start, end = _span(text, name)
    return text[:start] + body.rstrip("\n") + "\n" + text[end:]


def _config_reference() -> str:
    from dreamd.config import render_reference

    return render_reference()


def _events() -> str:
    from dreamd.logs import render_event_table

    return render_event_table()


GENERATED: dict[str, Callable[[], str]] = {"config-reference": _config_reference, "events": _events}


def render(text: str) -> str:
    for name, make in GENERATED.items():
        text = replace_section(text, name, make())
    return text


def main(argv: list[str]) -> int:
    current = README.read_text(encoding="utf-8")
    fresh = render(current)
    if "--check" in argv:
        if fresh != current:
            print("README.md is stale: run python scripts/gen_docs.py", file=sys.stderr)
            return 1
        return 0
    README.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
