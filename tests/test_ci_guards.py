"""Under CI a missing real-data corpus fails the golden tests; a developer's run skips them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROBE = "tests/test_transcripts.py::test_edge_cases_skip_and_count_garbage_keep_duplicate_uuid_once"


def _run_probe(tmp_path: Path, *, ci: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["DREAMD_SHARED_DATA"] = str(tmp_path / "no-such-corpus")
    if ci:
        env["CI"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "pytest", PROBE, "-q", "-p", "no:cacheprovider", "-rs"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("ci", [True, False])
def test_missing_corpus_fails_under_ci_and_skips_otherwise(tmp_path: Path, ci: bool) -> None:
    proc = _run_probe(tmp_path, ci=ci)
    out = proc.stdout + proc.stderr
    assert "real-data corpus not found" in out
    if ci:
        assert proc.returncode == 1 and ("1 error" in out or "1 failed" in out), out
    else:
        assert proc.returncode == 0 and "1 skipped" in out, out


@pytest.mark.parametrize("ci", [True, False])
def test_missing_chromium_fails_the_console_browser_tests_under_ci_and_skips_otherwise(tmp_path: Path, ci: bool) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "DREAMD_CHROMIUM")}
    env["PATH"] = str(tmp_path)  # no chromium on it
    if ci:
        env["CI"] = "true"
    probe = "tests/test_console.py::test_the_spool_page_shows_a_failed_job_and_retries_it"
    proc = subprocess.run([sys.executable, "-m", "pytest", probe, "-q", "-p", "no:cacheprovider", "-rs"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    out = proc.stdout + proc.stderr
    assert "Chromium not found" in out, out
    if ci:
        assert proc.returncode == 1 and ("1 error" in out or "1 failed" in out), out
    else:
        assert proc.returncode == 0 and "1 skipped" in out, out
