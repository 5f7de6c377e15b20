"""The daemon's side of sync: when a directory is due, `dreamd once` syncing, status lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dreamd.sync.daemon import SyncPlanner
from dreamd.sync.flow import backoff_seconds, sync
from memory.store.transaction import MemoryStore
from tests.sync_helpers import bare_remote, isolate_git, record_set, remember

KW = {"interval": 300.0, "push_after_commit": True, "debounce": 30.0, "max_backoff": 3600.0}


def test_planner_syncs_at_start_then_every_interval() -> None:
    p, d = SyncPlanner(), Path("/m")
    assert p.due(d, generation=1, now=0.0, **KW) == "start"
    p.record(d, ok=True, generation=1, now=0.0)
    assert p.due(d, generation=1, now=299.0, **KW) is None
    assert p.due(d, generation=1, now=300.0, **KW) == "interval"


def test_planner_pushes_a_local_commit_after_the_debounce_only_when_asked() -> None:
    p, d = SyncPlanner(), Path("/m")
    p.record(d, ok=True, generation=1, now=0.0)
    assert p.due(d, generation=2, now=10.0, **KW) is None
    assert p.due(d, generation=2, now=39.0, **KW) is None
    assert p.due(d, generation=2, now=40.0, **KW) == "commit"
    q = SyncPlanner()
    q.record(d, ok=True, generation=1, now=0.0)
    assert q.due(d, generation=2, now=10.0, **{**KW, "push_after_commit": False}) is None
    assert q.due(d, generation=2, now=100.0, **{**KW, "push_after_commit": False}) is None


def test_planner_backs_off_after_failures_doubling_up_to_the_cap() -> None:
    p, d = SyncPlanner(), Path("/m")
    p.record(d, ok=False, generation=None, now=0.0)
    assert p.due(d, generation=5, now=29.0, **KW) is None
    assert p.due(d, generation=5, now=30.0, **KW) == "retry"
    p.record(d, ok=False, generation=None, now=30.0)
    assert p.due(d, generation=5, now=89.0, **KW) is None
    assert p.due(d, generation=5, now=90.0, **KW) == "retry"
    assert [backoff_seconds(n, cap=100.0) for n in (1, 2, 3, 4)] == [30.0, 60.0, 100.0, 100.0]


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dreamd", *args], capture_output=True, text=True, env=env, timeout=120)


def _machine(tmp_path: Path, name: str, remote: str) -> tuple[Path, Path]:
    root = tmp_path / name
    mem = root / "code" / "app" / ".memory"
    root.mkdir(parents=True, exist_ok=True)
    cfg = root / "config.toml"
    cfg.write_text(
        f'[daemon]\nspool = "{root / "spool"}"\nroots = ["{root}/code/*/.memory"]\n'
        f'[sync]\ndirs = ["{root}/code/*/.memory"]\n'
    )
    return mem, cfg


def test_dreamd_once_syncs_the_configured_directories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    genv = isolate_git(tmp_path, monkeypatch)
    env = {**os.environ, **genv, "DREAMD_NO_WATCH": "1"}
    remote = bare_remote(tmp_path / "remote.git")
    a, cfg_a = _machine(tmp_path, "a", remote)
    b, cfg_b = _machine(tmp_path, "b", remote)
    MemoryStore.init(a)
    sync(a, remote=remote)
    sync(b, remote=remote)
    remember(a, "team-fact")
    proc = _cli("once", "--config", str(cfg_a), "--log-format", "json", env=env)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    done = [e for e in events if e["event"] == "sync.done"]
    assert done and done[0]["pushed"] is True
    assert _cli("once", "--config", str(cfg_b), env=env).returncode == 0
    assert "team-fact" in record_set(b)


def test_status_shows_ahead_by_n_and_the_last_sync_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    genv = isolate_git(tmp_path, monkeypatch)
    env = {**os.environ, **genv}
    remote = bare_remote(tmp_path / "remote.git")
    a, cfg = _machine(tmp_path, "a", remote)
    MemoryStore.init(a)
    sync(a, remote=remote)
    Path(remote).rename(tmp_path / "gone.git")
    remember(a, "one")
    remember(a, "two")
    proc = _cli("sync", str(a), env=env)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "git fetch from origin failed" in proc.stderr
    out = _cli("status", "--config", str(cfg), str(a), env=env).stdout
    assert "ahead by 2" in out and "last sync error" in out and "git fetch from origin failed" in out
    js = json.loads(_cli("status", "--config", str(cfg), "--json", str(a), env=env).stdout)
    assert js["directories"][0]["sync"]["ahead"] == 2


def test_sync_remotes_by_root_pattern_attach_each_project_on_first_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    genv = isolate_git(tmp_path, monkeypatch)
    env = {**os.environ, **genv, "DREAMD_NO_WATCH": "1"}
    remotes = tmp_path / "remotes"
    remotes.mkdir()
    for project in ("app", "web"):
        bare_remote(remotes / f"{project}.git")
    root = tmp_path / "m"
    root.mkdir()
    for project in ("app", "web"):
        MemoryStore.init(root / "code" / project / ".memory")
        remember(root / "code" / project / ".memory", f"{project}-fact")
    cfg = root / "config.toml"
    cfg.write_text(
        f'[daemon]\nspool = "{root / "spool"}"\nroots = ["{root}/code/*/.memory"]\n'
        f'[sync]\nremotes = {{ "{root}/code/*/.memory" = "{remotes}/{{project}}.git" }}\n'
    )
    proc = _cli("once", "--config", str(cfg), env=env)
    assert proc.returncode == 0, proc.stderr
    for project in ("app", "web"):
        shown = subprocess.run(["git", "-C", str(remotes / f"{project}.git"), "show", "main:manifest.json"],
                               capture_output=True, text=True, check=True).stdout
        assert f'"name":"{project}-fact"' in shown


def test_sync_remotes_config_is_validated(tmp_path: Path) -> None:
    from dreamd.config import load_config
    from memory.errors import ConfigError

    cfg = tmp_path / "c.toml"
    cfg.write_text('[sync]\nremotes = { "relative/*" = "x" }\n')
    with pytest.raises(ConfigError, match=r"\[sync\] remotes: expected absolute directory patterns"):
        load_config(cfg, env={"HOME": str(tmp_path)})
    cfg.write_text('[sync]\nremotes = { "/a/*/.memory" = "" }\n')
    with pytest.raises(ConfigError, match="expected a git URL"):
        load_config(cfg, env={"HOME": str(tmp_path)})
