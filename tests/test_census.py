"""The README's bad-input census is generated, never hand-written: it must match a fresh run."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from tests.conftest import REPO


def _census() -> object:
    spec = importlib.util.spec_from_file_location("census", REPO / "scripts" / "census.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["census"] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def test_readme_census_matches_a_fresh_run(shared_data: Path) -> None:
    census = _census()
    rows = census.generate()  # type: ignore[attr-defined]
    table = census.render(rows)  # type: ignore[attr-defined]
    readme = (REPO / "README.md").read_text()
    assert census.readme_section(readme) == table, "run: python scripts/census.py --write-readme"  # type: ignore[attr-defined]


def test_no_hostile_job_is_applied_or_left_unfinished(shared_data: Path) -> None:
    census = _census()
    for row in census.generate():  # type: ignore[attr-defined]
        if row.kind == "job file" and row.where == "`done/`":
            assert row.case == "remember carrying an API key", row
            assert "[REDACTED:" in row.outcome and "LEAK" not in row.outcome
        assert row.outcome not in ("not finished", "accepted"), row
