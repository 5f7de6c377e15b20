"""The daemon claims only what a worker is about to run (issue 13, item 8).

A job for a directory that already has work stays in ``new/``, so ``cur/`` never holds more
jobs than workers, a SIGKILL returns only those, and jobs of one directory still run oldest
first. Driven in-process with a work module whose jobs block until the test lets them go.
"""

from __future__ import annotations

import io
import os
import threading
import time
import types
from pathlib import Path
from typing import Any

import tests.test_daemon_stub as stub
from dreamd.config import load_config
from dreamd.daemon.supervisor import Daemon
from dreamd.logs import configure
from memory.client import submit
from memory.spool.queue import Spool
from memory.store.transaction import MemoryStore


def _config(tmp_path: Path, workers: int = 2) -> Any:
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[daemon]\nspool = "{tmp_path / "spool"}"\nroots = ["{tmp_path}/mem/*"]\n'
        f"workers = {workers}\n[gates]\nthreshold = 1000\n"
    )
    return load_config(cfg, env={"HOME": str(tmp_path)})


class Gate:
    """A work module whose jobs wait until released; it records the order they ran in."""

    def __init__(self) -> None:
        self.release = threading.Semaphore(0)
        self.started: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.module = types.SimpleNamespace(
            Context=stub.Context, dir_state=stub.dir_state, dream=stub.dream, execute=self.execute
        )

    def execute(self, job: Any, ctx: Any) -> str:
        with self.lock:
            self.started.append((str(job.memory_dir), job.id))
        assert self.release.acquire(timeout=30), "the test never released the job"
        return str(stub.execute(job, ctx))


def _cur(spool: Path) -> int:
    return len([n for n in os.listdir(spool / "cur") if n.endswith(".json")])


def test_busy_directories_leave_their_jobs_in_new_and_order_is_kept(tmp_path: Path) -> None:
    config = _config(tmp_path, workers=2)
    dirs = [tmp_path / "mem" / name for name in ("a", "b", "c")]
    for d in dirs:
        MemoryStore.init(d)
    spool = tmp_path / "spool"
    submitted: dict[str, list[str]] = {str(d.resolve()): [] for d in dirs}
    for i in range(24):
        d = dirs[i % 3]
        submitted[str(d.resolve())].append(
            submit(f"user: fact {i}\n", memory_dir=d, session_id=f"s{i}", spool=spool)
        )
    gate = Gate()
    configure("json", io.StringIO())
    daemon = Daemon(config, work=gate.module, watch=False, env={"HOME": str(tmp_path)})
    daemon.pool.start()
    try:
        for d in dirs:
            daemon.dirs.managed.add(d.resolve())
        assert daemon.jobs.scan_spool() == 2
        assert _cur(spool) == 2, "one claim per free worker"
        assert daemon.jobs.scan_spool() == 0, "no worker is free: nothing more is claimed"
        done = 0
        while done < 24:
            gate.release.release()
            done += 1
            deadline = threading.Event()
            while Spool(spool).counts().done < done and not deadline.wait(0.01):
                pass
            daemon.jobs.scan_spool()
            assert _cur(spool) <= 2
        daemon.pool.wait_idle(10)
    finally:
        daemon.pool.close()
    ran: dict[str, list[str]] = {k: [] for k in submitted}
    for memory_dir, job_id in gate.started:
        ran[memory_dir].append(job_id)
    assert ran == submitted, "every job ran once, oldest first within its directory"
    assert Spool(spool).counts().done == 24 and _cur(spool) == 0


def test_a_job_that_cannot_be_peeked_is_claimed_and_failed_with_its_reason(tmp_path: Path) -> None:
    config = _config(tmp_path)
    spool = Spool(tmp_path / "spool")
    spool.ensure()
    (spool.root / "new" / "20261130T000000Z-0000000000000000.json").write_text("{not json")
    configure("json", io.StringIO())
    daemon = Daemon(config, work=stub, watch=False, env={"HOME": str(tmp_path)})
    daemon.pool.start()
    try:
        daemon.jobs.scan_spool()
    finally:
        daemon.pool.close()
    assert spool.counts().failed == 1 and spool.counts().new == 0


def test_peek_reads_the_directory_from_the_first_bytes_only(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    job = submit("x" * 200_000, memory_dir=tmp_path / "m", session_id="s", spool=spool.root)
    assert spool.peek_memory_dir(job) == str((tmp_path / "m").resolve())
    assert spool.peek_memory_dir("20261130T000000Z-ffffffffffffffff") is None


def test_a_hostile_memory_dir_is_claimed_and_failed_not_a_crash(tmp_path: Path) -> None:
    config = _config(tmp_path)
    spool = Spool(tmp_path / "spool")
    spool.ensure()
    body = '{"format": 1, "id": "x", "kind": "forget", "memory_dir": "/tmp/a\\u0000b", "names": ["a"]}'
    (spool.root / "new" / "20261130T000000Z-0000000000000001.json").write_text(body)
    configure("json", io.StringIO())
    daemon = Daemon(config, work=stub, watch=False, env={"HOME": str(tmp_path)})
    daemon.pool.start()
    try:
        daemon.jobs.scan_spool()
    finally:
        daemon.pool.close()
    assert spool.counts().failed == 1 and spool.counts().new == 0


def test_a_task_queued_behind_a_busy_directory_does_not_hold_a_free_worker() -> None:
    from dreamd.daemon.pool import Task, WorkerPool

    release = threading.Event()
    pool = WorkerPool(2, on_error=lambda task, exc: None)
    pool.start()
    try:
        pool.submit(Task(key="a", run=lambda: release.wait(10)))
        pool.submit(Task(key="a", run=lambda: None))  # e.g. a reconcile behind a long dream
        deadline = threading.Event()
        while not pool.running() and not deadline.wait(0.01):
            pass
        assert pool.free_slots() == 1, "the second worker is idle and may take another directory"
    finally:
        release.set()
        pool.close()


def test_a_job_naming_its_directory_late_waits_for_its_turn(tmp_path: Path) -> None:
    import json

    from memory.spool.jobformat import build_job, new_job_id

    spool = Spool(tmp_path / "spool")
    spool.ensure()
    mdir = str((tmp_path / "mem" / "a").resolve())
    first = submit("user: one\n", memory_dir=mdir, session_id="s1", spool=spool.root)
    job = build_job("extract", job_id=new_job_id(), memory_dir=mdir, session_id="s2",
                    transcript=("text", "x" * 10_000))
    late = {"transcript": job.pop("transcript"), **job}  # memory_dir after 10 KB of transcript
    (spool.root / "new" / f"{job['id']}.json").write_text(json.dumps(late))
    assert spool.peek_memory_dir(job["id"]) == mdir
    assert spool.peek_memory_dir(first) == mdir


def test_a_backlog_is_listed_once_per_interval_not_once_per_job(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A worker that finishes a job claims the next one itself, at once (no main loop runs
    here: a claim that waited for the debounced hint left the workers idle half the time),
    from the cached listing: a backlog is listed once per interval, not once per job."""
    import dreamd.daemon.dispatch as dispatch

    config = _config(tmp_path, workers=2)
    dirs = [tmp_path / "mem" / name for name in ("a", "b")]
    for d in dirs:
        MemoryStore.init(d)
    spool = tmp_path / "spool"
    for i in range(40):
        submit(f"user: fact {i}\n", memory_dir=dirs[i % 2], session_id=f"s{i}", spool=spool)
    gate = Gate()
    configure("json", io.StringIO())
    daemon = Daemon(config, work=gate.module, watch=False, env={"HOME": str(tmp_path)})
    now = [1000.0]
    daemon.jobs._clock = lambda: now[0]
    listings = [0]
    real_pending = Spool.pending

    def counting(self: Spool) -> list[str]:
        listings[0] += 1
        return real_pending(self)

    def started(n: int) -> None:
        wait_until = time.monotonic() + 30
        while len(gate.started) < n and time.monotonic() < wait_until:
            time.sleep(0.01)
        assert len(gate.started) == n, f"{len(gate.started)} jobs started, want {n}: a freed worker claimed nothing"

    monkeypatch.setattr(Spool, "pending", counting)
    daemon.pool.start()
    try:
        for d in dirs:
            daemon.dirs.managed.add(d.resolve())
        assert daemon.jobs.scan_spool() == 2 and listings[0] == 1
        started(2)
        for k in range(6):  # each finished job frees a worker, which claims the next itself
            gate.release.release()
            started(3 + k)
        assert listings[0] == 1, "a claimable job was left in the listing: no new listing"
        daemon.jobs.invalidate_listing()  # jobs came back into new/ (released, unclaimed)
        gate.release.release()
        started(9)
        assert listings[0] == 2
        # A job submitted now is older than nothing in the listing; after the interval it is seen.
        now[0] += dispatch.LISTING_TTL + 0.01
        gate.release.release()
        started(10)
        assert listings[0] == 3
    finally:
        daemon.jobs.stop()
        for _ in range(50):
            gate.release.release()
        daemon.pool.close()


def test_an_idle_daemon_relists_at_once_and_a_relist_too_soon_is_retried(
    tmp_path: Path, monkeypatch: Any
) -> None:
    import dreamd.daemon.dispatch as dispatch

    config = _config(tmp_path, workers=2)
    d = tmp_path / "mem" / "a"
    MemoryStore.init(d)
    spool = tmp_path / "spool"
    gate = Gate()
    configure("json", io.StringIO())
    daemon = Daemon(config, work=gate.module, watch=False, env={"HOME": str(tmp_path)})
    now = [1000.0]
    daemon.jobs._clock = lambda: now[0]
    hints = threading.Event()
    daemon.jobs._hint_spool = hints.set
    daemon.pool.start()
    try:
        daemon.dirs.managed.add(d.resolve())
        assert daemon.jobs.scan_spool() == 0  # empty spool, listed now
        submit("user: a fact\n", memory_dir=d, session_id="s1", spool=spool)
        now[0] += dispatch.RELIST_AFTER + 0.01  # the watcher's scan: the old listing is empty
        assert daemon.jobs.scan_spool() == 1, "a new job is claimed at once, not after the TTL"
        submit("user: another\n", memory_dir=tmp_path / "mem" / "a", session_id="s2", spool=spool)
        monkeypatch.setattr(dispatch, "RELIST_AFTER", 0.2)
        # Same directory busy: nothing to claim; too soon to relist, so a rescan is asked for.
        assert daemon.jobs.scan_spool() == 0
        assert hints.wait(5), "the skipped relist was not retried"
    finally:
        daemon.jobs.stop()
        for _ in range(5):
            gate.release.release()
        daemon.pool.close()


def test_a_full_disk_holds_its_directory_jobs_in_new_instead_of_failing_them_all(tmp_path: Path) -> None:
    import errno

    import dreamd.daemon.dispatch as dispatch

    config = _config(tmp_path, workers=2)
    full, ok = tmp_path / "mem" / "full", tmp_path / "mem" / "ok"
    for d in (full, ok):
        MemoryStore.init(d)
    spool = tmp_path / "spool"
    for i in range(6):
        submit(f"user: fact {i}\n", memory_dir=full, session_id=f"f{i}", spool=spool)
        submit(f"user: fact {i}\n", memory_dir=ok, session_id=f"o{i}", spool=spool)
    disk_full = [True]
    ran: list[str] = []

    def execute(job: Any, ctx: Any) -> str:
        ran.append(Path(job.memory_dir).name)
        if Path(job.memory_dir).name == "full" and disk_full[0]:
            raise OSError(errno.ENOSPC, "No space left on device")
        return str(stub.execute(job, ctx))

    module = types.SimpleNamespace(Context=stub.Context, dir_state=stub.dir_state, dream=stub.dream, execute=execute)
    out = io.StringIO()
    configure("json", out)
    daemon = Daemon(config, work=module, watch=False, env={"HOME": str(tmp_path)})
    now = [1000.0]
    daemon.jobs._clock = lambda: now[0]
    daemon.pool.start()

    def drain() -> None:
        for _ in range(200):
            daemon.jobs._listed_at = float("-inf")
            daemon.jobs.scan_spool()
            daemon.pool.wait_idle(10)
            if daemon.jobs.scan_spool() == 0:
                daemon.pool.wait_idle(10)
                return

    try:
        for d in (full, ok):
            daemon.dirs.managed.add(d.resolve())
        drain()
        assert ran.count("ok") == 6, "the other directory is not held up"
        assert ran.count("full") == 1, "one probe, then the full directory's jobs wait in new/"
        assert '"spool.dir_held"' in out.getvalue()
        assert Spool(spool).counts().failed == 0
        now[0] += dispatch.DISK_FULL_HOLD[0] + 1  # the hold is over: one more probe, held twice as long
        drain()
        assert ran.count("full") == 2
        now[0] += dispatch.DISK_FULL_HOLD[0] + 1
        drain()
        assert ran.count("full") == 2, "the second hold is twice as long"
        disk_full[0] = False
        now[0] += dispatch.DISK_FULL_HOLD[0] + 1
        drain()
        # the 4 waiting jobs ran once the disk had room (the 2 deferred probes wait in deferred/)
        assert ran.count("full") == 2 + 4
        assert Spool(spool).counts().failed == 0
    finally:
        daemon.pool.close()


def test_a_disk_that_stays_full_across_restarts_never_fails_its_jobs(tmp_path: Path) -> None:
    """The hold is in memory, so every new incarnation probes the full directory again; the
    probes defer without using up attempts, so no number of restarts files a job in failed/."""
    import errno

    config = _config(tmp_path, workers=1)
    full = tmp_path / "mem" / "full"
    MemoryStore.init(full)
    spool_dir = tmp_path / "spool"
    for i in range(3):
        submit(f"user: fact {i}\n", memory_dir=full, session_id=f"f{i}", spool=spool_dir)
    disk_full = [True]
    probes: list[str] = []

    def execute(job: Any, ctx: Any) -> str:
        probes.append(job.session_id)
        if disk_full[0]:
            raise OSError(errno.ENOSPC, "No space left on device")
        return str(stub.execute(job, ctx))

    module = types.SimpleNamespace(Context=stub.Context, dir_state=stub.dir_state, dream=stub.dream, execute=execute)
    spool = Spool(spool_dir)

    def incarnation() -> None:
        for name in os.listdir(spool_dir / "deferred"):  # the backoff is over
            if name.endswith(".json"):
                os.utime(spool_dir / "deferred" / name, (0, 0))
        daemon = Daemon(config, work=module, watch=False, env={"HOME": str(tmp_path)})
        daemon.dirs.managed.add(full.resolve())
        daemon.pool.start()
        try:
            for _ in range(20):
                daemon.spool.release_due()
                daemon.jobs._listed_at = float("-inf")
                if daemon.jobs.scan_spool() == 0:
                    break
                daemon.pool.wait_idle(10)
        finally:
            daemon.pool.close()

    configure("json", io.StringIO())
    for _ in range(8):  # more restarts than max_attempts (5)
        incarnation()
    assert probes.count("f0") > config.retention.max_attempts
    counts = spool.counts()
    assert counts.failed == 0
    assert counts.deferred + counts.new == 3
    disk_full[0] = False
    incarnation()
    incarnation()
    assert spool.counts().failed == 0
    assert spool.counts().done == 3
