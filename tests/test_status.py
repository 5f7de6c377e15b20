"""dreamd status: per-directory facts, gates with reasons, lease, malformed files, unmanaged
directories and spool depths — read-only, with a fixed clock."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dreamd.config import Config, load_config
from dreamd.jobs.gates import pause
from dreamd.status.collect import collect_status, discover_dirs, render_status, spool_status
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore

NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)


def config_for(tmp_path: Path, extra: str = "") -> Config:
    path = tmp_path / "config.toml"
    path.write_text(
        "[daemon]\n"
        f'spool = "{tmp_path / "spool"}"\n'
        f'roots = ["{tmp_path / "code"}/*/.memory"]\n' + extra
    )
    return load_config(path, env={"HOME": str(tmp_path)})


def managed(tmp_path: Path, project: str, n: int) -> Path:
    d = tmp_path / "code" / project / ".memory"
    store = MemoryStore.init(d)
    if n:
        recs = [
            make_record(f"fact-{i}", "project", f"Fact number {i}", f"Body {i}.") for i in range(n)
        ]
        store.commit(Change(add=recs, actor="manual"))
    return d


def unmanaged(tmp_path: Path, project: str) -> Path:
    d = tmp_path / "code" / project / ".memory"
    d.mkdir(parents=True)
    (d / "user_role.md").write_text("---\nname: Role\ndescription: d\n---\nbody\n")
    (d / "MEMORY.md").write_text("- [Role](user_role.md)\n")
    return d


def write_lease(d: Path, *, pid: int, heartbeat: datetime) -> None:
    stamp = heartbeat.strftime("%Y-%m-%dT%H:%M:%SZ")
    (d / ".dream.lock").write_text(
        json.dumps(
            {
                "pid": pid,
                "host": socket.gethostname(),
                "start_token": "",
                "started_at": stamp,
                "heartbeat_at": stamp,
                "token": "t",
            }
        )
    )


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_managed_directory_reports_records_generation_and_gates(tmp_path: Path) -> None:
    d = managed(tmp_path, "app", 3)
    status = collect_status(config_for(tmp_path), now=NOW)
    [entry] = status["directories"]
    manifest = json.loads((d / "manifest.json").read_text())
    assert entry["path"] == str(d)
    assert entry["managed"] is True
    assert entry["records"] == 3
    assert entry["generation"] == 1
    assert entry["committed_at"] == manifest["committed_at"]
    assert entry["consolidated_at"] is None
    assert entry["paused"] is False
    assert entry["lease"] is None
    assert entry["malformed"] == []
    gates = {g["name"]: (g["open"], g["reason"]) for g in entry["gates"]["gates"]}
    assert list(gates) == ["enabled", "interval", "scan", "count", "sessions", "budget", "lock"]
    assert gates["count"] == (False, "3 of 10 records")
    assert gates["interval"] == (True, "never dreamed")
    assert gates["lock"] == (True, "free")
    assert entry["gates"]["open"] is False
    assert entry["gates"]["first_closed"] == "count"


def test_gates_open_when_threshold_met(tmp_path: Path) -> None:
    managed(tmp_path, "app", 2)
    status = collect_status(config_for(tmp_path, "[gates]\nthreshold = 2\n"), now=NOW)
    assert status["directories"][0]["gates"]["open"] is True
    assert status["directories"][0]["gates"]["first_closed"] is None


def test_paused_directory_closes_the_enabled_gate(tmp_path: Path) -> None:
    d = managed(tmp_path, "app", 1)
    pause(d, reason="testing", now=NOW)
    [entry] = collect_status(config_for(tmp_path), now=NOW)["directories"]
    assert entry["paused"] is True
    assert entry["gates"]["gates"][0] == {
        "name": "enabled",
        "open": False,
        "reason": "paused (dreamd resume DIR reopens it)",
    }


def test_lease_held_by_a_live_process_closes_the_lock_gate(tmp_path: Path) -> None:
    d = managed(tmp_path, "app", 1)
    write_lease(d, pid=os.getpid(), heartbeat=NOW - timedelta(seconds=20))
    [entry] = collect_status(config_for(tmp_path), now=NOW)["directories"]
    lease = entry["lease"]
    assert lease["pid"] == os.getpid()
    assert lease["host"] == socket.gethostname()
    assert lease["state"] == "held"
    assert lease["stale_reason"] is None
    assert lease["heartbeat_at"] == "2026-11-29T11:59:40Z"
    lock = entry["gates"]["gates"][-1]
    assert lock["name"] == "lock" and lock["open"] is False


def test_lease_of_a_dead_process_is_stale(tmp_path: Path) -> None:
    d = managed(tmp_path, "app", 1)
    pid = dead_pid()
    write_lease(d, pid=pid, heartbeat=NOW)
    [entry] = collect_status(config_for(tmp_path), now=NOW)["directories"]
    assert entry["lease"]["state"] == "stale"
    assert entry["lease"]["stale_reason"] == f"holder pid {pid} is gone"


def test_malformed_file_is_listed_and_does_not_hide_the_rest(tmp_path: Path) -> None:
    d = managed(tmp_path, "app", 2)
    (d / "broken.md").write_bytes(b"\xff\xfenot utf-8")
    [entry] = collect_status(config_for(tmp_path), now=NOW)["directories"]
    assert entry["records"] == 2
    assert [m["file"] for m in entry["malformed"]] == ["broken.md"]
    assert "not valid UTF-8" in entry["malformed"][0]["error"]


def test_unmanaged_directory_says_to_adopt_it(tmp_path: Path) -> None:
    m = managed(tmp_path, "app", 1)
    u = unmanaged(tmp_path, "legacy")
    (tmp_path / "code" / "empty" / ".memory").mkdir(parents=True)
    assert discover_dirs([f"{tmp_path / 'code'}/*/.memory"]) == ([m], [u])
    status = collect_status(config_for(tmp_path), now=NOW)
    by_path = {e["path"]: e for e in status["directories"]}
    assert set(by_path) == {str(m), str(u)}
    assert by_path[str(u)] == {
        "path": str(u),
        "managed": False,
        "records": 1,
        "hint": f"unmanaged — run dreamd adopt {u}",
        "error": None,
        "jobs": {"new": 0, "cur": 0, "deferred": 0, "failed": 0},
        "inside_roots": True,
    }


def test_explicit_dirs_include_missing_and_broken_ones(tmp_path: Path) -> None:
    good = managed(tmp_path, "app", 1)
    broken = managed(tmp_path, "bad", 0)
    (broken / "manifest.json").write_text("{not json")
    missing = tmp_path / "nowhere"
    status = collect_status(config_for(tmp_path), [good, broken, missing], now=NOW)
    entries = status["directories"]
    assert [e["path"] for e in entries] == [str(good), str(broken), str(missing)]
    assert entries[0]["error"] is None and entries[0]["records"] == 1
    assert entries[1]["managed"] is True and entries[1]["records"] is None
    assert "manifest.json" in entries[1]["error"]
    assert entries[2]["error"] == "no such directory"


def test_spool_depths_and_newest_failures_first(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    for q in ("tmp", "new", "cur", "deferred", "done", "failed"):
        (spool / q).mkdir(parents=True)
    for i in range(3):
        (spool / "new" / f"2026112{i}T000000.000000Z-aa.json").write_text("{}")
    (spool / "deferred" / "20261120T000000.000000Z-bb.json").write_text("{}")
    for job, when, reason in [
        (
            "20261101T000000.000000Z-01",
            "2026-11-01T00:00:00Z",
            "memory_dir outside the allowed roots",
        ),
        ("20261102T000000.000000Z-02", "2026-11-02T00:00:00Z", "malformed JSON at line 1"),
    ]:
        (spool / "failed" / f"{job}.json").write_text("{}")
        (spool / "failed" / f"{job}.error.json").write_text(
            json.dumps({"reason": reason, "failed_at": when, "attempts": 1})
        )
    (spool / "failed" / "20261103T000000.000000Z-03.json").write_text("{}")  # no error file
    sp = spool_status(spool)
    assert (sp["new"], sp["cur"], sp["deferred"], sp["failed"], sp["done"]) == (3, 0, 1, 3, 0)
    reasons = [(f["job"], f["reason"]) for f in sp["failures"]]
    assert reasons[1:] == [
        ("20261102T000000.000000Z-02", "malformed JSON at line 1"),
        ("20261101T000000.000000Z-01", "memory_dir outside the allowed roots"),
    ]
    assert reasons[0] == ("20261103T000000.000000Z-03", "no readable error file")


def test_unreadable_spool_is_reported_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spool owned by another user (simulated: the tests may run as root, who reads all)."""
    from memory.spool.queue import Spool

    def denied(self: Spool) -> None:
        raise PermissionError(13, "Permission denied", str(self.root / "new"))

    monkeypatch.setattr(Spool, "counts", denied)
    spool = tmp_path / "spool"
    (spool / "new").mkdir(parents=True)
    sp = spool_status(spool)
    assert sp["error"] == f"{spool}: Permission denied"
    assert sp["new"] == 0 and sp["failures"] == []
    text = render_status(collect_status(config_for(tmp_path), now=NOW))
    assert f"spool {spool}: cannot read it: {spool}: Permission denied" in text


def test_a_spool_the_daemon_refuses_is_said_to_be_refused(tmp_path: Path) -> None:
    """A probe found `dreamd status` printing "backlog 1, not draining" for a spool another uid
    owns, while once, submit, run and every hook refused it with one line: status now makes
    the daemon's own check and says the spool is refused."""
    spool = tmp_path / "spool"
    for q in ("tmp", "new", "cur", "deferred", "done", "failed"):
        (spool / q).mkdir(parents=True, mode=0o700)
    spool.chmod(0o755)
    (spool / "new" / "20261120T000000.000000Z-aa.json").write_text("{}")
    for path in (spool, *spool.iterdir()):
        os.chown(path, 12345, 12345)
    sp = spool_status(spool)
    assert sp["new"] == 1
    assert sp["refused"].startswith(f"spool {spool} is owned by uid 12345, not by this user")
    text = render_status(collect_status(config_for(tmp_path), now=NOW))
    assert f"  REFUSED: spool {spool} is owned by uid 12345" in text
    assert "not draining" not in text and "backlog" not in text


def test_spool_not_created_yet(tmp_path: Path) -> None:
    sp = spool_status(tmp_path / "spool")
    assert sp["exists"] is False
    assert sp["new"] == sp["failed"] == 0 and sp["failures"] == []


def test_render_status_shows_every_fact(tmp_path: Path) -> None:
    d = managed(tmp_path, "app", 1)
    u = unmanaged(tmp_path, "legacy")
    write_lease(d, pid=os.getpid(), heartbeat=NOW)
    text = render_status(collect_status(config_for(tmp_path), now=NOW))
    assert f"config: {tmp_path / 'config.toml'}" in text
    assert f"spool {tmp_path / 'spool'}: not created yet" in text
    assert "  records 1 · generation 1 · committed " in text
    assert "last dream never" in text
    assert "  gates: closed at count\n" in text
    assert "    closed count: 1 of 10 records\n" in text
    assert f"  lease: held by pid {os.getpid()} on {socket.gethostname()}" in text
    assert f"  unmanaged — run dreamd adopt {u} (1 record files)" in text


def test_status_json_is_serialisable_and_has_the_documented_keys(tmp_path: Path) -> None:
    managed(tmp_path, "app", 1)
    status = collect_status(config_for(tmp_path), now=NOW)
    again = json.loads(json.dumps(status))
    assert set(again) == {
        "format",
        "generated_at",
        "config",
        "daemon",
        "model",
        "spool",
        "other_spools",
        "console",
        "directories",
        "unplaced",
    }
    assert again["model"] == {"backend": "offline", "model": None, "misconfigured": None}
    assert again["daemon"] == {"running": False, "pid": None, "host": None, "since": None}
    assert again["format"] == 1 and again["generated_at"] == "2026-11-29T12:00:00Z"
    assert set(again["spool"]) == {
        "path",
        "exists",
        "new",
        "cur",
        "deferred",
        "failed",
        "done",
        "failures",
        "error",
        "drained_5m",
        "drained_1h",
        "drain_per_min",
        "backlog_eta_s",
    }
    assert set(again["directories"][0]) == {
        "path",
        "managed",
        "records",
        "generation",
        "committed_at",
        "consolidated_at",
        "paused",
        "gates",
        "lease",
        "malformed",
        "error",
        "jobs",
        "inside_roots",
    }


def test_status_writes_nothing(tmp_path: Path) -> None:
    d = managed(tmp_path, "app", 2)
    config = config_for(tmp_path)
    before = sorted((p.relative_to(tmp_path), p.stat().st_mtime_ns) for p in tmp_path.rglob("*"))
    collect_status(config, now=NOW)
    after = sorted((p.relative_to(tmp_path), p.stat().st_mtime_ns) for p in tmp_path.rglob("*"))
    assert before == after
    assert d.exists()


def test_empty_managed_directory(tmp_path: Path) -> None:
    managed(tmp_path, "app", 0)
    [entry] = collect_status(config_for(tmp_path), now=NOW)["directories"]
    assert entry["records"] == 0 and entry["generation"] == 0


def test_budget_gate_reads_todays_spend_from_the_usage_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dreamd.models.usage import UsageLedger
    from memory.model.llm import Usage

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    d = managed(tmp_path, "app", 1)
    UsageLedger().record(str(d), Usage(input_tokens=900, output_tokens=300), now=NOW)
    config = config_for(tmp_path, "[gates]\ndaily_token_budget = 1000\n")
    [entry] = collect_status(config, now=NOW)["directories"]
    budget = next(g for g in entry["gates"]["gates"] if g["name"] == "budget")
    assert budget["open"] is False
    assert "1200" in budget["reason"]


def test_daemon_holding_the_spool_lock_shows_as_running(tmp_path: Path) -> None:
    """A real process takes the spool lock; status sees it in the kernel's lock table."""
    from dreamd.status.collect import daemon_status

    config = config_for(tmp_path)
    spool = config.daemon.spool
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from memory.spool.queue import Spool\n"
            f"s = Spool({str(spool)!r}); s.acquire_lock()\n"
            "print('locked', flush=True); time.sleep(30)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        state = daemon_status(spool)
        assert state["running"] is True
        assert state["pid"] == holder.pid
        assert state["host"] == socket.gethostname()
        text = render_status(collect_status(config, now=NOW))
        assert f"daemon: running, pid {holder.pid} since " in text
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    assert daemon_status(spool)["running"] is False  # the kernel released it with the process
    assert "daemon: not running" in render_status(collect_status(config, now=NOW))


def test_daemon_status_asks_the_owner_pid_before_the_lock_table(tmp_path: Path) -> None:
    """The pid the daemon wrote to ``spool/.owner`` is checked through its own ``fdinfo``: a
    running daemon is seen without reading ``/proc/locks`` (whose first read costs a busy
    machine milliseconds per command, issue 20), and a stale ``.owner`` still falls back to it."""
    from dreamd.status.collect import daemon_status

    spool = config_for(tmp_path).daemon.spool
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import time\nfrom memory.spool.queue import Spool\n"
         f"s = Spool({str(spool)!r}); s.acquire_lock()\nprint('locked', flush=True); time.sleep(30)\n"],
        stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[1],
    )  # fmt: skip
    no_table = tmp_path / "proc"  # the holder's /proc entry, and no lock table at all
    no_table.mkdir()
    (no_table / str(holder.pid)).symlink_to(f"/proc/{holder.pid}")
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        state = daemon_status(spool, proc=no_table)
        assert state["running"] is True and state["pid"] == holder.pid
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    assert daemon_status(spool, proc=no_table)["running"] is None  # stale .owner: the table decides
    assert daemon_status(spool)["running"] is False


def test_no_spool_lock_file_means_no_daemon(tmp_path: Path) -> None:
    from dreamd.status.collect import daemon_status

    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "locks").write_text("1: FLOCK  ADVISORY  WRITE 4242 fe:00:1 0 EOF\n")
    assert daemon_status(tmp_path / "spool", proc=proc)["running"] is False
    assert daemon_status(tmp_path / "spool", proc=tmp_path / "no-proc")["running"] is None


def test_daemon_state_unknown_without_a_lock_table(tmp_path: Path) -> None:
    from dreamd.status.collect import daemon_status

    spool = tmp_path / "spool"
    spool.mkdir()
    (spool / ".lock").touch()
    assert daemon_status(spool, proc=tmp_path / "no-proc")["running"] is None


def test_cli_status_json_and_text(tmp_path: Path) -> None:
    """`dreamd status --json` prints the documented shape; DIR arguments narrow it."""
    d = managed(tmp_path, "app", 2)
    unmanaged(tmp_path, "legacy")
    config_for(tmp_path)
    repo = Path(__file__).resolve().parents[1]
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": str(repo)}
    base = [sys.executable, "-m", "dreamd", "status", "--config", str(tmp_path / "config.toml")]
    proc = subprocess.run([*base, "--json"], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    status = json.loads(proc.stdout)
    assert status["format"] == 1
    assert [e["managed"] for e in status["directories"]] == [True, False]
    assert status["directories"][0]["records"] == 2
    proc = subprocess.run([*base, str(d)], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert f"\n{d}\n  records 2 · generation 1 · " in proc.stdout
    assert "legacy" not in proc.stdout


def test_unreadable_directory_is_reported_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = managed(tmp_path, "app", 1)
    other = managed(tmp_path, "other", 2)

    def denied(self: MemoryStore) -> list[tuple[str, str]]:
        if self.path == d:
            raise PermissionError(13, "Permission denied", str(d / "manifest.json"))
        return real(self)

    real = MemoryStore.scan_malformed
    monkeypatch.setattr(MemoryStore, "scan_malformed", denied)
    entries = collect_status(config_for(tmp_path), now=NOW)["directories"]
    by_path = {e["path"]: e for e in entries}
    assert by_path[str(d)]["error"] == f"{d / 'manifest.json'}: Permission denied"
    assert by_path[str(other)]["error"] is None and by_path[str(other)]["records"] == 2


def test_status_shows_the_backlog_and_how_fast_it_drains(tmp_path: Path) -> None:
    from memory.client import submit
    from memory.spool.queue import Spool

    mdir = managed(tmp_path, "app", 1)
    jobs = [submit(f"user: {i}\n", memory_dir=mdir, spool=tmp_path / "spool") for i in range(7)]
    sp = Spool(tmp_path / "spool")
    for job in jobs[:5]:
        sp.claim(job)
        sp.complete(job)
    status = collect_status(config_for(tmp_path), now=NOW)
    spool = status["spool"]
    assert (spool["new"], spool["drained_5m"], spool["drained_1h"]) == (2, 5, 5)
    assert spool["drain_per_min"] == 1.0 and spool["backlog_eta_s"] == 120.0
    assert "backlog 2, draining 1/min, about 2 min to empty (5 done in 5 min, 5 in the hour)" in (
        render_status(status)
    )
