"""The multi-machine torture run in its CI form, and its checker shown catching planted faults."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dreamd.sync.flow import sync
from memory.store.transaction import MemoryStore
from tests.sync_helpers import bare_remote, forget, isolate_git, remember
from tests.torture.multi import Machine, check

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_three_machines_with_daemons_kills_and_dreams_converge(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    proc = subprocess.run(
        [sys.executable, "-m", "tests.torture.multi", "--duration", "15", "--machines", "3",
         "--workdir", str(tmp_path / "run"), "--json", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["ok"] and result["violations"] == []
    stats = result["stats"]
    assert stats["remembered"] > 10 and stats["kill"] >= 0 and stats["merge_generations"] >= 1


def _world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, list[Machine], Path]:
    isolate_git(tmp_path, monkeypatch)
    remote = bare_remote(tmp_path / "remote.git")
    machines = []
    for k in range(2):
        root = tmp_path / f"m{k}"
        mem = root / ".memory"
        machines.append(Machine(index=k, root=root, config=root / "c.toml", spool=root / "spool", memory=mem, log_dir=root))
    MemoryStore.init(machines[0].memory)
    remember(machines[0].memory, "m0-deploy-1")
    sync(machines[0].memory, remote=remote)
    sync(machines[1].memory, remote=remote)
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text(json.dumps({"op": "remember", "machine": 0, "name": "m0-deploy-1"}) + "\n")
    return remote, machines, ledger


def test_checker_passes_a_converged_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote, machines, ledger = _world(tmp_path, monkeypatch)
    result = check(remote, machines, ledger, {})
    assert result.ok, result.violations


def test_checker_catches_machines_that_did_not_converge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote, machines, ledger = _world(tmp_path, monkeypatch)
    remember(machines[1].memory, "only-here")
    result = check(remote, machines, ledger, {})
    assert any("record sets differ" in v for v in result.violations)


def test_checker_catches_a_record_lost_without_explanation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote, machines, ledger = _world(tmp_path, monkeypatch)
    for m in machines:
        forget(m.memory, "m0-deploy-1")  # the ledger has no forget: nothing explains it
    result = check(remote, machines, ledger, {})
    assert any("m0-deploy-1" in v and "no forget" in v for v in result.violations)


def test_checker_catches_a_manifest_naming_a_missing_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote, machines, ledger = _world(tmp_path, monkeypatch)
    entry = MemoryStore(machines[1].memory).read().records[0]
    (machines[1].memory / entry.file).unlink()
    result = check(remote, machines, ledger, {})
    assert any("missing or not as committed" in v for v in result.violations)
