"""Shared fixtures. Real-world golden inputs are read in place from ``../shared/data``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("DREAMD_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Root of the real-data corpus (Claude Code transcripts, hooks, memory dirs, LoCoMo).

    A developer's run without it skips these tests with the reason; under CI (``CI`` set) a
    missing corpus fails them, so a green CI always means the golden tests ran.
    """
    if not SHARED_DATA.is_dir():
        reason = f"real-data corpus not found at {SHARED_DATA} (set DREAMD_SHARED_DATA)"
        if os.environ.get("CI", "").lower() not in ("", "0", "false", "no"):
            pytest.fail(f"CI: {reason}", pytrace=False)
        pytest.skip(reason)
    return SHARED_DATA


@pytest.fixture
def roots_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config (``$DREAMD_CONFIG``) whose ``[daemon] roots`` is the test's ``tmp_path``, so
    ``dreamd init`` of a directory there is inside the roots; returns the config file."""
    config = tmp_path / "dreamd-roots.toml"
    config.write_text(f'[daemon]\nroots = ["{tmp_path}"]\nspool = "{tmp_path}/spool"\n', encoding="utf-8")
    monkeypatch.setenv("DREAMD_CONFIG", str(config))
    return config
