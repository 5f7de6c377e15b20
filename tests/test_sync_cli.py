"""`dreamd sync` on the command line: one clear line and exit 1 for every misuse."""

from __future__ import annotations

import json
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


def _dreamd(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dreamd", *args], capture_output=True, text=True, env=env, timeout=120)


def _remote_blobs(remote: Path) -> list[bytes]:
    listing = subprocess.run(["git", "rev-list", "--objects", "--all"], cwd=remote, capture_output=True, check=True,
                             text=True).stdout.split()
    kinds = subprocess.run(["git", "cat-file", "--batch-check=%(objectname) %(objecttype)"], cwd=remote,
                           input="\n".join(listing) + "\n", capture_output=True, check=True, text=True).stdout
    blobs = [line.split()[0] for line in kinds.splitlines() if line.endswith(" blob")]
    return [subprocess.run(["git", "cat-file", "blob", b], cwd=remote, capture_output=True, check=True).stdout
            for b in blobs]


def test_a_push_refused_for_a_secret_is_recovered_by_the_one_command_its_error_names(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Issue 21 §4: a secret in a hand-written record stops the push. The commit that adopts
    the file rewrites it redacted as the next generation (issue 22), so the current set is clean
    but an unpushed generation still holds the secret: the error names ``--squash-unpushed``,
    which gets to a clean push without touching git by hand."""
    import re
    import shlex

    from tests.sync_helpers import remember

    secret = "sk-ant-api03-" + "Q7" * 45
    remote = tmp_path / "r.git"
    d = tmp_path / "mem"
    MemoryStore.init(d)
    remember(d, "first")
    assert run(str(d), "--remote", bare_remote(remote), env=env).returncode == 0
    (d / "creds.md").write_text(f"---\nname: creds\ntype: reference\ndescription: where keys are\n---\nkey {secret}\n")
    remember(d, "second")  # the commit adopts creds.md too, then writes it redacted

    refused = run(str(d), env=env)
    assert refused.returncode == 1 and "refusing to push: creds.md (anthropic-key)" in refused.stderr, refused.stderr
    assert f"dreamd forget {d} creds" not in refused.stderr  # the current set holds no secret any more
    command = re.search(r"Run '(dreamd sync [^']+)'", refused.stderr)
    assert command is not None and "--squash-unpushed" in command.group(1), refused.stderr
    recovered = _dreamd(*shlex.split(command.group(1))[1:], env=env)
    assert recovered.returncode == 0, recovered.stderr
    assert "left out" in recovered.stdout and "  pushed" in recovered.stdout

    assert not any(secret.encode()[-24:] in blob for blob in _remote_blobs(remote))
    shared = subprocess.run(["git", "show", "main:manifest.json"], cwd=remote, capture_output=True, text=True,
                            check=True).stdout
    assert sorted(r["name"] for r in json.loads(shared)["records"]) == ["creds", "first", "second"]
    remember(d, "third")  # and syncing goes on as before, one commit per generation
    after = run(str(d), env=env)
    assert after.returncode == 0 and "  pushed" in after.stdout, after.stderr
    assert '"third"' in subprocess.run(["git", "show", "main:manifest.json"], cwd=remote, capture_output=True,
                                       text=True, check=True).stdout
    assert any(secret in p.read_text() for p in (d / ".history").glob("creds*.hist"))  # nothing lost locally
