"""`dreamd sync` on the command line: one clear line and exit 1 for every misuse."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory.store.transaction import MemoryStore
from tests.sync_helpers import bare_remote, isolate_git


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dreamd", "sync", *args], capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    return {**os.environ, **isolate_git(tmp_path, monkeypatch)}


def test_an_unmanaged_directory_with_records_is_refused_with_the_adopt_hint(tmp_path: Path, env: dict[str, str]) -> None:
    d = tmp_path / "notes"
    d.mkdir()
    (d / "old.md").write_text("---\nname: old\n---\nbody\n")
    proc = run(str(d), "--remote", bare_remote(tmp_path / "r.git"), env=env)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert "dreamd adopt" in proc.stderr
    assert not (d / ".git").exists()


def test_a_directory_never_attached_needs_a_remote(tmp_path: Path, env: dict[str, str]) -> None:
    d = tmp_path / ".memory"
    MemoryStore.init(d)
    proc = run(str(d), env=env)
    assert proc.returncode == 1 and "not attached to a git remote" in proc.stderr and "--remote URL" in proc.stderr


def test_attaching_to_another_remote_is_refused(tmp_path: Path, env: dict[str, str]) -> None:
    d = tmp_path / ".memory"
    MemoryStore.init(d)
    first = run(str(d), "--remote", bare_remote(tmp_path / "one.git"), env=env)
    assert first.returncode == 0, first.stderr
    assert "pushed" in first.stdout
    proc = run(str(d), "--remote", bare_remote(tmp_path / "two.git"), env=env)
    assert proc.returncode == 1 and "already attached to" in proc.stderr and "remote set-url" in proc.stderr


def test_a_remote_that_does_not_exist_is_one_line(tmp_path: Path, env: dict[str, str]) -> None:
    d = tmp_path / ".memory"
    MemoryStore.init(d)
    proc = run(str(d), "--remote", str(tmp_path / "nowhere.git"), env=env)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert "git fetch from origin failed" in proc.stderr


def test_relative_directory_and_remote_paths_work_from_the_current_directory(tmp_path: Path, env: dict[str, str]) -> None:
    bare_remote(tmp_path / "r.git")
    MemoryStore.init(tmp_path / "a" / ".memory")
    remember_cli = [sys.executable, "-m", "dreamd", "remember", "a/.memory", "--name", "deploy", "--type", "project",
                    "--description", "How we deploy", "--body", "make release"]
    subprocess.run(remember_cli, cwd=tmp_path, env=env, check=True, capture_output=True)
    for d in ("a/.memory", "b/.memory"):
        proc = subprocess.run([sys.executable, "-m", "dreamd", "sync", d, "--remote", "r.git"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "a" / ".memory" / "manifest.json").read_bytes() == (tmp_path / "b" / ".memory" / "manifest.json").read_bytes()
    url = subprocess.run(["git", "-C", str(tmp_path / "b" / ".memory"), "config", "remote.origin.url"],
                         capture_output=True, text=True, env=env).stdout.strip()
    assert url == str(tmp_path / "r.git")
