"""The command line: exit codes, one-line errors, and the directory commands end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import memory
from dreamd.cli.main import main

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.usefixtures("roots_here")  # dreamd init refuses a directory outside the roots


def run(*args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "dreamd", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=60,
    )


def test_public_client_api_is_pinned() -> None:
    assert sorted(memory.__all__) == [
        "DreamdError", "MemoryStore", "RecallSession", "Record", "forget", "index_text",
        "recall", "remember", "request_consolidation", "submit",
    ]
    for name in memory.__all__:
        assert getattr(memory, name) is not None


def test_directory_commands_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = str(tmp_path / "mem")
    assert main(["init", d]) == 0
    assert main(["remember", d, "--name", "prefers-tabs", "--type", "user", "--description", "User prefers tabs", "--body", "Use tabs."]) == 0
    assert main(["remember", d, "--name", "prefers-tabs", "--type", "user", "--description", "User prefers tabs (v2)", "--body", "Use tabs!"]) == 0
    assert main(["remember", d, "--name", "ci-dashboard", "--type", "reference", "--description", "CI dashboard", "--body", "https://ci.example.com/app"]) == 0
    assert main(["forget", d, "ci-dashboard"]) == 0
    capsys.readouterr()
    assert main(["log", d, "--json"]) == 0
    log = json.loads(capsys.readouterr().out)
    gens = [(g["generation"], g["actor"], g["added"], g["updated"], g["removed"]) for g in log["generations"]]
    assert gens == [
        (4, "manual", [], [], ["ci-dashboard"]),
        (3, "manual", ["ci-dashboard"], [], []),
        (2, "manual", [], ["prefers-tabs"], []),
        (1, "manual", ["prefers-tabs"], [], []),
        (0, "init", [], [], []),
    ]
    assert main(["rollback", d, "--to", "3"]) == 0
    index = (tmp_path / "mem" / "MEMORY.md").read_text()
    assert "ci-dashboard" in index and "User prefers tabs (v2)" in index
    assert main(["log", d]) == 0
    text = capsys.readouterr().out
    assert "rollback" in text and "added    ci-dashboard" in text


def test_errors_are_one_line_with_exit_1(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    proc = run("log", str(missing))
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and str(missing) in proc.stderr
    d = tmp_path / "mem"
    assert run("init", str(d)).returncode == 0
    proc = run("forget", str(d), "ghost")
    assert proc.returncode == 1 and "ghost" in proc.stderr and proc.stderr.count("\n") == 1
    proc = run("remember", str(d), "--name", "Bad Name", "--type", "user", "--description", "x", "--body", "y")
    assert proc.returncode == 1 and "name" in proc.stderr
    proc = run("rollback", str(d), "--to", "99")
    assert proc.returncode == 1 and "99" in proc.stderr


def test_usage_errors_exit_2() -> None:
    assert run("bogus").returncode == 2
    assert run("remember").returncode == 2
    assert run("rollback", "/tmp", "--to", "x").returncode == 2


def test_adopt_reports_and_refuses_twice(tmp_path: Path) -> None:
    d = tmp_path / "cc"
    d.mkdir()
    (d / "feedback_testing.md").write_text("---\nname: Testing — real DB\ndescription: Use the real database\nmetadata:\n  type: feedback\n---\nNo mocks.\n")
    (d / "broken.md").write_bytes(b"---\nname: x\n\xff\n---\n")
    (d / "MEMORY.md").write_text("- [Testing](feedback_testing.md) — real DB\nDeploys happen on Tuesdays.\n")
    proc = run("adopt", str(d))
    assert proc.returncode == 0, proc.stderr
    assert "broken.md" in proc.stderr
    manifest = json.loads((d / "manifest.json").read_text())
    names = {r["name"]: r["type"] for r in manifest["records"]}
    assert names["feedback_testing"] == "feedback"
    assert "memory-index-notes" in names
    assert (d / "broken.md").read_bytes() == b"---\nname: x\n\xff\n---\n"
    again = run("adopt", str(d))
    assert again.returncode == 1 and "already managed" in again.stderr
