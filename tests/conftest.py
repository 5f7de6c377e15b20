"""Shared fixtures. Real-world golden inputs are read in place from ``../shared/data``."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("DREAMD_SHARED_DATA", REPO.parent / "shared" / "data"))

# The quality test split is read once at the end of a round (benchmarks/README.md), never by a
# pytest run: the harness's loaders refuse it while this is set (subprocesses inherit it), and
# an audit hook records any open of its files by anything, which fails the session.
TEST_SPLIT = tuple(REPO / "benchmarks" / "quality" / n for n in ("extraction_test.jsonl", "consolidation_test.jsonl"))
os.environ["DREAMD_NO_TEST_SPLIT"] = "1"

# dreamd's derived user caches ($XDG_CACHE_HOME/dreamd: the parsed config, doctor's secret-scan
# verdicts) go to a folder of this run's own, which subprocesses inherit: a run neither reads
# what this machine cached before nor leaves a file per test config in the developer's home.
_USER_CACHE = tempfile.mkdtemp(prefix="dreamd-test-xdg-cache-")
os.environ["XDG_CACHE_HOME"] = _USER_CACHE
atexit.register(shutil.rmtree, _USER_CACHE, ignore_errors=True)
test_split_opens: list[str] = []


def _watch_test_split(event: str, args: tuple[object, ...]) -> None:
    if event != "open" or not args or not isinstance(args[0], str | bytes | os.PathLike):
        return
    path = os.fsdecode(args[0])
    if os.path.basename(path) not in ("extraction_test.jsonl", "consolidation_test.jsonl"):
        return
    if any(os.path.abspath(path) == str(p) or os.path.realpath(path) == os.path.realpath(p) for p in TEST_SPLIT):
        test_split_opens.append(path)


sys.addaudithook(_watch_test_split)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if test_split_opens:
        print(f"\nFAIL: this run opened the quality test split: {sorted(set(test_split_opens))}", file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


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
