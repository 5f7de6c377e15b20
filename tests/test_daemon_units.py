"""Daemon parts without a process: debouncer (fake clock), worker pool ordering and
parallelism, fingerprints, supervision of dead components, ``once``."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tests.test_daemon_stub as stub
from dreamd.config import load_config
from dreamd.daemon.pool import Task, WorkerPool
from dreamd.daemon.supervisor import Daemon, once
from dreamd.daemon.watch import Debouncer, fingerprint, is_noise
from dreamd.logs import configure
from memory.client import submit
from memory.store.transaction import MemoryStore
from tests.helpers.clock import FakeClock

# ----------------------------------------------------------------------------- debouncer


def test_leading_debouncer_fires_at_once_then_coalesces_a_flood() -> None:
    clock = FakeClock(100.0)
    d = Debouncer(0.1, clock, leading=True)
    d.hint("spool")
    assert d.due() == ["spool"]  # first hint after quiet: immediately
    fired = 0
    for i in range(1000):  # 1,000 events over 0.5 s
        clock.now = 100.0 + i * 0.0005
        d.hint("spool")
        fired += len(d.due())
    assert fired == 4  # at ~100.1, 100.2, 100.3, 100.4 (events end at 100.4995)
    assert d.next_deadline() == pytest.approx(100.5, abs=0.01)
    clock.now = 100.6
    assert d.due() == ["spool"] and d.due() == []


def test_trailing_debouncer_waits_for_quiet_but_not_forever() -> None:
    clock = FakeClock(100.0)
    d = Debouncer(1.0, clock, leading=False, max_wait=5.0)
    d.hint("/m")
    clock.now += 0.9
    d.hint("/m")
    clock.now += 0.9
    assert d.due() == []  # 0.9 s since the last hint
    clock.now += 0.1
    assert d.due() == ["/m"]
    for _ in range(20):  # a hint every 0.5 s forever: max_wait caps the delay at 5 s
        d.hint("/m")
        clock.now += 0.5
        if d.due():
            break
    assert clock.now - 101.9 == pytest.approx(5.0)  # first hint at 101.9 + max_wait


def test_noise_names_are_ignored() -> None:
    assert all(is_noise(n) for n in (".lock", ".dream.lock", ".history", ".tmp-abc", ".paused", "x.md~"))
    assert not any(is_noise(n) for n in ("manifest.json", "MEMORY.md", "prefers-tabs-0a1b2c3d4e.md"))


def test_fingerprint_sees_edits_but_not_hidden_files(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("x")
    before = fingerprint(tmp_path)
    (tmp_path / ".lock").write_text("")
    (tmp_path / ".history").mkdir()
    assert fingerprint(tmp_path) == before
    (tmp_path / "a.md").write_text("xy")
    assert fingerprint(tmp_path) != before
    assert fingerprint(tmp_path / "gone") is None


# ----------------------------------------------------------------------------- worker pool


def test_pool_runs_one_task_per_key_in_order_and_keys_in_parallel() -> None:
    errors: list[BaseException] = []
    pool = WorkerPool(3, on_error=lambda t, e: errors.append(e))
    pool.start()
    gate = threading.Event()
    both_running = threading.Barrier(2, timeout=5)
    order: list[str] = []
    lock = threading.Lock()

    def task(key: str, i: int) -> None:
        if i == 0:
            both_running.wait()  # a0 and b0 must run at the same time
            gate.wait(5)
        with lock:
            order.append(f"{key}{i}")

    def bind(key: str, i: int) -> Callable[[], None]:
        return lambda: task(key, i)

    for i in range(3):
        for key in ("a", "b"):
            pool.submit(Task(key=key, run=bind(key, i)))
    gate.set()
    assert pool.wait_idle(5)
    assert [x for x in order if x[0] == "a"] == ["a0", "a1", "a2"]
    assert [x for x in order if x[0] == "b"] == ["b0", "b1", "b2"]
    assert errors == []
    pool.close()


def test_pool_survives_a_raising_task_and_close_returns_unstarted() -> None:
    seen: list[str] = []
    pool = WorkerPool(1, on_error=lambda t, e: seen.append(f"{t.label}:{e}"))
    pool.start()
    release = threading.Event()
    pool.submit(Task(key="k", run=lambda: (_ for _ in ()).throw(ValueError("boom")), label="bad"))
    pool.submit(Task(key="k", run=lambda: release.wait(5), label="slow"))
    pool.submit(Task(key="k", run=lambda: None, label="later"))
    threading.Event().wait(0.2)
    assert pool.alive()  # the raising task did not kill the only worker
    left = pool.close()
    assert [t.label for t in left] == ["later"]
    assert [t.label for t in pool.running()] == ["slow"]
    release.set()
    assert pool.wait_idle(5)
    assert seen == ["bad:boom"]
    assert pool.submit(Task(key="k", run=lambda: None)) is False


# ----------------------------------------------------------------------------- daemon in-process


def _config(tmp_path: Path, gates: str = "") -> Path:
    cfg = tmp_path / "dreamd.toml"
    cfg.write_text(
        f'[daemon]\nspool = "{tmp_path / "spool"}"\nroots = ["{tmp_path / "mem"}/*"]\ntick = "1s"\n'
        f'log_format = "json"\n[gates]\n{gates}\n'
    )
    return cfg


class DeadWatcher:
    def alive(self) -> bool:
        return False

    def stop(self) -> None:
        pass

    def set_dirs(self, dirs: Any) -> tuple[list[Path], list[Path]]:
        return [], []


def test_a_dead_watcher_is_logged_and_the_daemon_exits_nonzero(tmp_path: Path) -> None:
    out = io.StringIO()
    config = load_config(_config(tmp_path), env={"HOME": str(tmp_path)})
    configure("json", out)
    try:
        daemon = Daemon(config, work=stub, watch=False, env={"HOME": str(tmp_path)})
        daemon.start()
        daemon.watcher = DeadWatcher()  # type: ignore[assignment]
        code = daemon.loop()
    finally:
        configure("json", io.StringIO())
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    died = [x for x in lines if x["event"] == "daemon.component_died"]
    assert code == 1 and died[0]["component"] == "watcher" and died[0]["level"] == "critical"
    assert lines[-1]["event"] == "daemon.stopped" and lines[-1]["exit_code"] == 1
    assert not daemon.spool.holds_lock


def test_a_hung_tick_is_detected_by_the_supervisor(tmp_path: Path) -> None:
    config = load_config(_config(tmp_path), env={"HOME": str(tmp_path)})
    clock = FakeClock(100.0)
    daemon = Daemon(config, work=stub, watch=False, env={"HOME": str(tmp_path)}, clock=clock)
    daemon.pool.start()
    assert daemon.supervise() is None
    daemon._tick_started = clock.now
    clock.now += 299
    assert daemon.supervise() is None
    clock.now += 2
    assert daemon.supervise() == "scheduler (tick hung for 5m1s)"
    daemon.pool.close()


def test_once_drains_the_spool_reconciles_and_dreams(tmp_path: Path, shared_data: Path) -> None:
    config = load_config(_config(tmp_path, 'threshold = 2\nscan_throttle = "0s"\n'), env={"HOME": str(tmp_path)})
    mem = tmp_path / "mem" / "app"
    mem.parent.mkdir()
    MemoryStore.init(mem)
    (mem / "hand.md").write_text("---\nname: hand\ndescription: Hand-written\ntype: user\n---\nx\n")
    jobs = [submit(shared_data / "claude_code" / "marot__spotter__short.jsonl", memory_dir=mem,
                   session_id=f"s{i}", spool=tmp_path / "spool") for i in range(3)]
    assert once(config, work=stub, log_format="json", env={"HOME": str(tmp_path)}) == 0
    configure("json", io.StringIO())
    m = json.loads((mem / "manifest.json").read_text())
    assert sorted(m["applied_jobs"]) == sorted(jobs)
    assert m["consolidated_at"] is not None
    assert [r["name"] for r in m["records"]] == ["merged"]
    assert "hand" in (mem / next(r["file"] for r in m["records"])).read_text()  # adopted, then merged
    assert sorted(p.name[:-5] for p in (tmp_path / "spool" / "done").iterdir()) == sorted(jobs)


def test_dream_backoff_doubles_after_refusals_and_clears_on_success() -> None:
    from dreamd.daemon.directories import DreamBackoff

    d = Path("/m")
    b = DreamBackoff(first=60, cap=200)
    assert b.remaining(d, 0) == 0
    assert b.record(d, "rejected", 0) == 60 and b.remaining(d, 59) == 1 and b.remaining(d, 60) == 0
    assert b.record(d, "transient", 60) == 120
    assert b.record(d, "rejected", 180) == 200  # capped
    assert b.record(d, "conflict", 400) == 0 and b.remaining(d, 379) == 1  # not penalised, not cleared
    assert b.record(d, "applied", 400) == 0 and b.remaining(d, 400) == 0


def test_once_exits_1_naming_each_failed_job_but_0_for_a_deferred_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`dreamd once` exited 0 after filing a job in failed/: a cron run could not tell."""
    config = load_config(_config(tmp_path), env={"HOME": str(tmp_path)})
    inside, outside = tmp_path / "mem" / "app", tmp_path / "elsewhere" / "app"
    for d in (inside, outside):
        d.parent.mkdir(parents=True)
        MemoryStore.init(d)
    transcript = tmp_path / "talk.txt"
    transcript.write_text("User: the staging box is called heron.\nAssistant: Noted.\n")
    later = submit(transcript, memory_dir=inside, session_id="later", spool=tmp_path / "spool")
    monkeypatch.setenv("STUB_TRANSIENT", later)
    assert once(config, work=stub, log_format="json", env={"HOME": str(tmp_path)}) == 0  # deferred: not failed
    assert capsys.readouterr().err == ""

    refused = submit(transcript, memory_dir=outside, session_id="lost", spool=tmp_path / "spool")
    assert once(config, work=stub, log_format="json", env={"HOME": str(tmp_path)}) == 1
    configure("json", io.StringIO())
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"dreamd once: job {refused} failed: memory_dir {outside} is outside the configured roots")
    assert str(tmp_path / "spool" / "failed") in line and "dreamd retry" in line
