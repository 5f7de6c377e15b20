"""The daemon as a real process: jobs committed, dreams, signals, crash + restart, reload,
lost events. Job execution is the stand-in in ``tests/test_daemon_stub.py`` (its own tests
cover ``dreamd.jobs.work``); one test runs the real pipeline when the offline model is present.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memory.client import submit
from memory.store.transaction import MemoryStore

REPO = Path(__file__).resolve().parents[1]
LAUNCH = (
    "import sys; from pathlib import Path; from dreamd.config import load_config; "
    "from dreamd.daemon.supervisor import run; import tests.test_daemon_stub as stub; "
    "p = Path(sys.argv[1]); sys.exit(run(load_config(p), config_path=p, work=stub))"
)
TRANSCRIPTS = (
    "marot__spotter__short.jsonl",
    "yaleh__meta-cc__sample-session.jsonl",
    "simonw__claude-code-transcripts__sample_session.jsonl",
    "marot__spotter__tool_heavy.jsonl",
    "daaain__claude-code-log__representative_messages.jsonl",
)


class Env:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.spool = tmp / "spool"
        self.config = tmp / "dreamd.toml"
        self.procs: list[subprocess.Popen[bytes]] = []
        self.logs: list[Path] = []

    def write_config(self, *, roots: list[str] | None = None, gates: str = "", tick: str = "0.5s",
                     daemon: str = "", retention: str = "") -> None:
        roots = roots or [str(self.tmp / "mem" / "*")]
        self.config.write_text(
            f'[daemon]\nspool = "{self.spool}"\nroots = {json.dumps(roots)}\ntick = "{tick}"\n'
            f'log_format = "json"\nworkers = 2\n{daemon}\n[gates]\n{gates}\n[retention]\n{retention}\n',
            encoding="utf-8",
        )

    def memory_dir(self, name: str, parent: str = "mem") -> Path:
        d = self.tmp / parent / name
        d.parent.mkdir(parents=True, exist_ok=True)
        MemoryStore.init(d)
        return d

    def start(self, **extra_env: str) -> subprocess.Popen[bytes]:
        env = {**os.environ, "XDG_STATE_HOME": str(self.tmp / "state"), "PYTHONPATH": str(REPO)}
        for name in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "DREAMD_CONFIG"):
            env.pop(name, None)
        env.update(extra_env)
        log = self.tmp / f"daemon-{len(self.procs)}.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen([sys.executable, "-c", LAUNCH, str(self.config)], cwd=REPO, env=env,
                                    stdout=out, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        self.logs.append(log)
        return proc

    def events(self, index: int = -1) -> list[dict[str, Any]]:
        out = []
        for line in self.logs[index].read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                out.append({"event": "<unparsed>", "line": line})
        return out

    def has_event(self, name: str, index: int = -1, **fields: Any) -> bool:
        return any(e.get("event") == name and all(e.get(k) == v for k, v in fields.items())
                   for e in self.events(index))

    def wait_event(self, name: str, timeout: float = 15.0, index: int = -1, **fields: Any) -> None:
        wait_for(lambda: self.has_event(name, index, **fields), timeout,
                 lambda: f"no {name} {fields} in log:\n" + self.logs[index].read_text()[-3000:])

    def submit(self, memory_dir: Path, transcript: Path, session: str | None = None) -> str:
        return submit(transcript, memory_dir=memory_dir, session_id=session, spool=self.spool)

    def spool_ids(self, sub: str) -> list[str]:
        d = self.spool / sub
        if not d.is_dir():
            return []
        return sorted(n[:-5] for n in os.listdir(d)
                      if n.endswith(".json") and not n.endswith(".error.json") and not n.startswith("."))

    def stop(self, proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM, timeout: float = 10.0) -> tuple[int, float]:
        t0 = time.monotonic()
        proc.send_signal(sig)
        code = proc.wait(timeout=timeout)
        return code, time.monotonic() - t0


def wait_for(pred: Callable[[], bool], timeout: float, why: Callable[[], str] = lambda: "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s: {why()}")


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    e = Env(tmp_path)
    e.write_config()
    yield e
    for p in e.procs:
        if p.poll() is None:
            p.kill()
            p.wait()


def _manifest(d: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((d / "manifest.json").read_text())
    return data


# ----------------------------------------------------------------------------- tests


def test_submitted_jobs_are_committed_and_sigterm_exits_zero(env: Env, shared_data: Path) -> None:
    mem = env.memory_dir("app")
    before = [env.submit(mem, shared_data / "claude_code" / t, session=f"s{i}") for i, t in enumerate(TRANSCRIPTS[:2])]
    proc = env.start()
    env.wait_event("daemon.ready")
    after = env.submit(mem, shared_data / "claude_code" / TRANSCRIPTS[2], session="s2")  # picked up by the watcher
    jobs = [*before, after]
    wait_for(lambda: env.spool_ids("done") == sorted(jobs), 15, lambda: str(env.spool_ids("new")))
    m = _manifest(mem)
    assert sorted(m["applied_jobs"]) == sorted(jobs)
    assert len(m["records"]) == 3
    code, took = env.stop(proc)
    assert code == 0 and took < 10
    assert env.has_event("daemon.stopped", exit_code=0)
    done = [e for e in env.events() if e["event"] == "job.done"]
    assert {e["job_id"] for e in done} == set(jobs)
    assert all(e["memory_dir"] == str(mem) and "timestamp" in e for e in done)


def test_directory_crossing_the_threshold_gets_dreamed(env: Env, shared_data: Path) -> None:
    env.write_config(gates='threshold = 3\nscan_throttle = "0s"\n')
    mem = env.memory_dir("app")
    proc = env.start()
    env.wait_event("daemon.ready")
    for i, t in enumerate(TRANSCRIPTS[:2]):
        env.submit(mem, shared_data / "claude_code" / t, session=f"s{i}")
    wait_for(lambda: len(_manifest(mem)["applied_jobs"]) == 2, 15)
    time.sleep(0.5)
    assert _manifest(mem)["consolidated_at"] is None  # 2 of 3 records: count gate closed
    env.submit(mem, shared_data / "claude_code" / TRANSCRIPTS[2], session="s2")
    wait_for(lambda: _manifest(mem)["consolidated_at"] is not None, 15, lambda: env.logs[-1].read_text()[-2000:])
    m = _manifest(mem)
    assert [r["name"] for r in m["records"]] == ["merged"]
    env.wait_event("dream.finished", memory_dir=str(mem), status="applied")  # logged after the commit
    assert env.has_event("gate.changed", memory_dir=str(mem), gate="count")
    assert env.stop(proc)[0] == 0


def test_sigterm_puts_a_long_running_job_back_and_exits_zero_in_time(env: Env, shared_data: Path) -> None:
    mem = env.memory_dir("app")
    job = env.submit(mem, shared_data / "claude_code" / TRANSCRIPTS[0])
    proc = env.start(STUB_JOB_DELAY="60")
    env.wait_event("job.claimed", job_id=job)
    code, took = env.stop(proc)
    assert code == 0 and took < 10
    assert env.spool_ids("new") == [job] and env.spool_ids("cur") == []
    assert env.has_event("job.requeued", job_id=job)
    assert _manifest(mem)["applied_jobs"] == []


def test_sigterm_lets_a_short_running_job_finish(env: Env, shared_data: Path) -> None:
    mem = env.memory_dir("app")
    job = env.submit(mem, shared_data / "claude_code" / TRANSCRIPTS[0])
    proc = env.start(STUB_JOB_DELAY="1.5")
    env.wait_event("job.claimed", job_id=job)
    code, took = env.stop(proc)
    assert code == 0 and took < 10
    assert env.spool_ids("done") == [job]
    assert _manifest(mem)["applied_jobs"] == [job]


def test_sigkill_mid_job_then_restart_completes_every_job_exactly_once(env: Env, shared_data: Path) -> None:
    dirs = [env.memory_dir("a"), env.memory_dir("b")]
    jobs = [env.submit(dirs[i % 2], shared_data / "claude_code" / TRANSCRIPTS[i % 5], session=f"s{i}")
            for i in range(12)]
    log = env.tmp / "exec.log"
    proc = env.start(STUB_JOB_DELAY="0.3", STUB_EXEC_LOG=str(log))
    wait_for(lambda: len(env.spool_ids("done")) >= 2, 20)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert len(env.spool_ids("done")) < len(jobs)  # killed mid-run
    assert env.spool_ids("cur")  # claims left behind by the crash
    proc2 = env.start(STUB_EXEC_LOG=str(log))
    wait_for(lambda: env.spool_ids("done") == sorted(jobs), 20, lambda: env.logs[-1].read_text()[-2000:])
    assert env.has_event("spool.recovered")
    applied = [j for d in dirs for j in _manifest(d)["applied_jobs"]]
    assert sorted(applied) == sorted(jobs)  # each committed exactly once
    names = [r["name"] for d in dirs for r in _manifest(d)["records"]]
    assert len(names) == len(set(names)) == len(jobs)
    assert env.spool_ids("failed") == [] and env.spool_ids("cur") == []
    assert env.stop(proc2)[0] == 0


def test_sighup_picks_up_a_new_root(env: Env, shared_data: Path) -> None:
    env.memory_dir("app")
    proc = env.start()
    env.wait_event("daemon.ready")
    env.config.write_text(env.config.read_text() + "\n[gate]\nthreshold = 1\n")
    proc.send_signal(signal.SIGHUP)  # a broken config is refused; the daemon keeps running
    env.wait_event("daemon.reload_failed")
    assert "[gate]: unknown section" in next(e for e in env.events() if e["event"] == "daemon.reload_failed")["error"]
    assert proc.poll() is None
    other = env.memory_dir("x", parent="other")
    env.write_config(roots=[str(env.tmp / "mem" / "*"), str(env.tmp / "other" / "*")])
    proc.send_signal(signal.SIGHUP)
    env.wait_event("daemon.reloaded")
    assert env.has_event("watch.added", memory_dir=str(other))
    job = env.submit(other, shared_data / "claude_code" / TRANSCRIPTS[1])
    wait_for(lambda: _manifest(other)["applied_jobs"] == [job], 15)
    assert env.stop(proc)[0] == 0


def test_new_directory_under_a_root_glob_is_picked_up_without_restart(env: Env) -> None:
    proc = env.start()
    env.wait_event("daemon.ready")
    late = env.memory_dir("late")
    env.wait_event("watch.added", memory_dir=str(late), timeout=10)
    assert env.stop(proc)[0] == 0


def test_lost_events_the_timer_rescan_still_processes_the_job(env: Env, shared_data: Path) -> None:
    mem = env.memory_dir("app")
    proc = env.start(DREAMD_NO_WATCH="1")
    env.wait_event("daemon.ready")
    assert env.has_event("daemon.started", watch=False)
    job = env.submit(mem, shared_data / "claude_code" / TRANSCRIPTS[0])
    wait_for(lambda: env.spool_ids("done") == [job], 10)
    (mem / "note.md").write_text("---\nname: note\ndescription: A hand-written note\ntype: user\n---\nhi\n")
    wait_for(lambda: any(r["name"] == "note" for r in _manifest(mem)["records"]), 10)
    assert env.stop(proc)[0] == 0


def test_hand_written_file_is_adopted_and_own_writes_cause_no_reconcile(env: Env, shared_data: Path) -> None:
    mem = env.memory_dir("app")
    proc = env.start()
    env.wait_event("daemon.ready")
    job = env.submit(mem, shared_data / "claude_code" / TRANSCRIPTS[0])
    wait_for(lambda: env.spool_ids("done") == [job], 10)
    time.sleep(2.0)  # past the 1 s reconcile debounce
    assert not env.has_event("reconcile.done")  # the job's own commit is recognised as ours
    (mem / "prefers-tabs.md").write_text(
        "---\nname: prefers-tabs\ndescription: User prefers tabs\ntype: user\n---\nTabs.\n")
    env.wait_event("reconcile.done", memory_dir=str(mem), timeout=10)
    assert any(r["file"] == "prefers-tabs.md" for r in _manifest(mem)["records"])
    assert env.stop(proc)[0] == 0


def test_rejected_and_transient_jobs_land_in_failed_and_deferred(env: Env, shared_data: Path) -> None:
    mem = env.memory_dir("app")
    outside = env.tmp / "elsewhere"
    MemoryStore.init(outside)
    bad = env.submit(outside, shared_data / "claude_code" / TRANSCRIPTS[0])
    flaky = env.submit(mem, shared_data / "claude_code" / TRANSCRIPTS[1])
    proc = env.start(STUB_TRANSIENT=flaky)
    wait_for(lambda: env.spool_ids("failed") == [bad] and env.spool_ids("deferred") == [flaky], 15)
    reason = json.loads((env.spool / "failed" / f"{bad}.error.json").read_text())["reason"]
    assert "root" in reason
    assert env.has_event("job.rejected", job_id=bad)
    env.wait_event("job.deferred", job_id=flaky, attempt=1)  # logged just after the move
    assert env.stop(proc)[0] == 0


def test_second_daemon_on_the_same_spool_is_refused(env: Env) -> None:
    proc = env.start()
    env.wait_event("daemon.ready")
    second = env.start()
    assert second.wait(timeout=15) == 1
    assert env.has_event("daemon.already_running")
    assert env.stop(proc)[0] == 0


def test_real_pipeline_with_the_offline_model(env: Env, shared_data: Path) -> None:
    pytest.importorskip("dreamd.models.offline.model")
    mem = env.memory_dir("app")
    job = env.submit(mem, shared_data / "claude_code" / "marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
                     session="4d5611e5")
    envv = {**os.environ, "XDG_STATE_HOME": str(env.tmp / "state"), "PYTHONPATH": str(REPO)}
    log = env.tmp / "real.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "dreamd", "run", "--config", str(env.config)], cwd=REPO,
                                env=envv, stdout=out, stderr=subprocess.STDOUT)
    env.procs.append(proc)
    env.logs.append(log)
    wait_for(lambda: env.spool_ids("done") == [job] or env.spool_ids("failed") == [job], 30, lambda: log.read_text()[-2000:])
    assert env.spool_ids("done") == [job]
    assert _manifest(mem)["applied_jobs"] == [job]
    assert env.stop(proc)[0] == 0


def test_sd_notify_ready_status_watchdog_reloading_stopping(env: Env, tmp_path: Path) -> None:
    import socket
    import tempfile

    sock_dir = Path(tempfile.mkdtemp(prefix="dn-", dir="/tmp"))
    address = str(sock_dir / "notify")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(address)
    server.settimeout(0.2)
    messages: list[str] = []

    def drain() -> str:
        with contextlib.suppress(TimeoutError):
            while True:
                messages.append(server.recv(4096).decode())
        return "\n".join(messages)

    try:
        env.memory_dir("app")
        proc = env.start(NOTIFY_SOCKET=address, WATCHDOG_USEC="1000000")  # ping every 0.5 s
        wait_for(lambda: "READY=1" in drain(), 15)
        wait_for(lambda: drain().count("WATCHDOG=1") >= 2, 10)
        wait_for(lambda: "STATUS=" in drain() and "queued" in drain(), 10)
        proc.send_signal(signal.SIGHUP)
        wait_for(lambda: "RELOADING=1" in drain(), 10)
        wait_for(lambda: drain().count("READY=1") >= 2, 10)
        assert env.stop(proc)[0] == 0
        assert "STOPPING=1" in drain()
    finally:
        server.close()
        with contextlib.suppress(OSError):
            os.unlink(address)
            os.rmdir(sock_dir)


# ----------------------------------------------------------------------------- work budgets (issue 21 §3)


def _failure(env: Env, job_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((env.spool / "failed" / f"{job_id}.error.json").read_text())
    return data


def test_a_job_over_its_budget_goes_to_failed_and_its_directory_moves_on(env: Env, shared_data: Path) -> None:
    """The poison job hangs 4 s against a 1 s budget: it is filed in failed/ with the reason
    while it still runs, the next job of the same directory is done meanwhile, and when the
    abandoned worker finally wakes its commit is refused (nothing of it reaches the store)."""
    env.write_config(daemon='job_budget = "1s"\njob_budget_per_kib = "0s"')
    mem = env.memory_dir("app")
    transcript = shared_data / "claude_code" / TRANSCRIPTS[0]
    poison = env.submit(mem, transcript, session="poison")
    good = env.submit(mem, transcript, session="good")
    proc = env.start(STUB_HANG_SESSION="poison", STUB_HANG_SECONDS="4")
    wait_for(lambda: env.spool_ids("done") == [good], 15, lambda: env.logs[-1].read_text()[-3000:])
    assert env.spool_ids("failed") == [poison]
    assert "over its work budget" in _failure(env, poison)["reason"]
    assert env.has_event("job.over_budget", job_id=poison, memory_dir=str(mem))
    env.wait_event("job.overran_returned", job_id=poison)
    assert _manifest(mem)["applied_jobs"] == [good]
    assert proc.poll() is None  # the daemon kept running: no restart was needed
    assert env.stop(proc)[0] == 0


def test_a_job_that_hangs_its_daemon_every_time_fails_after_max_attempts(env: Env, shared_data: Path) -> None:
    """Each incarnation claims the poison job and is SIGKILLed while it hangs; each start-up
    recovers the claim as an attempt, so after max_attempts it is in failed/ with its reason
    and the directory's other job, which waited behind it, is done."""
    env.write_config(retention="max_attempts = 3")
    mem = env.memory_dir("app")
    transcript = shared_data / "claude_code" / TRANSCRIPTS[0]
    poison = env.submit(mem, transcript, session="poison")
    good = env.submit(mem, transcript, session="good")
    for kill in range(3):
        proc = env.start(STUB_HANG_SESSION="poison")
        env.wait_event("job.claimed", job_id=poison)
        time.sleep(0.2)
        assert env.spool_ids("cur") == [poison] and env.spool_ids("done") == [], f"kill {kill}"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    proc = env.start(STUB_HANG_SESSION="poison")
    wait_for(lambda: env.spool_ids("done") == [good], 15, lambda: env.logs[-1].read_text()[-3000:])
    assert env.spool_ids("failed") == [poison] and env.spool_ids("new") == [] and env.spool_ids("cur") == []
    failure = _failure(env, poison)
    assert failure["attempts"] == 3
    assert failure["reason"].startswith("gave up after 3 attempts: the daemon died while running this job")
    assert env.has_event("job.failed", job_id=poison)
    assert _manifest(mem)["applied_jobs"] == [good]
    assert env.stop(proc)[0] == 0
