"""Shared helpers for the sync tests: an isolated git environment, bare remotes, quick commits."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore


def isolate_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """HOME and the global git config in ``tmp_path``; an identity so commits work anywhere."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    cfg = home / ".gitconfig"
    cfg.write_text("[user]\n\tname = Test\n\temail = test@example.invalid\n[init]\n\tdefaultBranch = main\n")
    env = {"HOME": str(home), "GIT_CONFIG_GLOBAL": str(cfg), "GIT_CONFIG_NOSYSTEM": "1"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return env


def bare_remote(path: Path) -> str:
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
    return str(path)


def git(cwd: Path, *args: str, input: bytes | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True, check=True, env=os.environ.copy())
    return proc.stdout.decode().strip()


def remember(directory: Path, name: str, body: str = "", *, job: str | None = None) -> None:
    store = MemoryStore(directory)
    rec = make_record(name, "project", f"about {name}", body or f"body of {name}")
    store.commit(Change(add=[rec], actor="job" if job else "manual", job_id=job))


def replace(directory: Path, name: str, body: str) -> None:
    store = MemoryStore(directory)
    rec = make_record(name, "project", f"about {name}", body)
    store.commit(Change(replace={name: rec}))


def forget(directory: Path, *names: str) -> None:
    MemoryStore(directory).commit(Change(remove=list(names)))


def record_set(directory: Path) -> dict[str, str]:
    return {e.name: e.sha256 for e in MemoryStore(directory).read().records}
