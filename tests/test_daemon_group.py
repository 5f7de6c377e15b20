"""Group commit in the real daemon (DESIGN §3 "Group commit", §5), killed at every step.

Six committing jobs of one directory wait in ``new/`` when the daemon starts, so its first
task is a group of six. The daemon (the real work module and offline model,
``tests/helpers/group_kill_work.py``) is SIGKILLed at each step of that group's commit — the
store lock taken, verified, record files written, index written, history kept, manifest
replaced, cleaned — and once more after the commit with one job moved to ``done/`` and the
others not. After the kill every job is applied or still pending, never in ``done/`` unapplied;
every manifest is valid; and a restarted daemon finishes them all, each applied exactly once
with its two records.
"""

from __future__ import annotations

import io
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import types
from pathlib import Path
from typing import Any

from memory.client import submit
from memory.store.transaction import MemoryStore
from tests.helpers.commit_child import STEPS
from tests.torture.checker import load_history

REPO = Path(__file__).resolve().parents[1]
LAUNCH = (
    "import sys; from pathlib import Path; from dreamd.config import load_config; "
    "from dreamd.daemon.supervisor import run; import tests.helpers.group_kill_work as work; "
    "p = Path(sys.argv[1]); sys.exit(run(load_config(p), config_path=p, work=work))"
)
JOBS = 6


def _word(i: int, salt: int) -> str:
    """A made-up word of its own per (i, salt): no job's facts share a word with another's, so
    none supersedes another (as in benchmarks/bench_daemon.py)."""
    rng = random.Random(i * 7919 + salt)
    return "".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(4))


def _session(i: int) -> str:
    svc, branch, book, folder = (_word(i, k) for k in range(4))
    return (f"user: Remember that the {svc} service is deployed from the {branch} branch.\n"
            "assistant: Noted.\n"
            f"user: Please remember that the {book} runbook lives in docs/{folder}/{book}.md.\n"
            "assistant: Got it.\n")


def _ids(spool: Path, sub: str) -> set[str]:
    d = spool / sub
    return {n[:-5] for n in os.listdir(d) if n.endswith(".json") and not n.startswith(".")
            and not n.endswith(".error.json")} if d.is_dir() else set()


def _setup(root: Path) -> tuple[Path, Path, Path, list[str]]:
    spool, mem = root / "spool", root / "mem" / "app"
    mem.parent.mkdir(parents=True)
    MemoryStore.init(mem)
    config = root / "dreamd.toml"
    config.write_text(f'[daemon]\nspool = "{spool}"\nroots = ["{root}/mem/*"]\nworkers = 2\ntick = "0.5s"\n'
                      'log_format = "json"\n[gates]\nthreshold = 100000\n', encoding="utf-8")
    jobs = [submit(_session(i), memory_dir=mem, session_id=f"s{i}", spool=spool) for i in range(JOBS)]
    return spool, mem, config, jobs


def _start(root: Path, config: Path, step: str, name: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "XDG_STATE_HOME": str(root / "state"), "PYTHONPATH": str(REPO), "GROUP_KILL_STEP": step}
    for var in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "DREAMD_CONFIG"):
        env.pop(var, None)
    with open(root / f"{name}.log", "wb") as out:
        return subprocess.Popen([sys.executable, "-c", LAUNCH, str(config)], cwd=REPO, env=env,
                                stdout=out, stderr=subprocess.STDOUT)


def _events(root: Path, name: str) -> list[dict[str, object]]:
    out = []
    for line in (root / f"{name}.log").read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def _wait(pred: object, timeout: float, why: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s: {why}")


def test_a_daemon_killed_at_every_step_of_a_group_commit_applies_every_job_exactly_once(tmp_path: Path) -> None:
    steps = [*STEPS, "spool"]
    runs = {}
    for step in steps:
        root = tmp_path / step
        root.mkdir()
        spool, mem, config, jobs = _setup(root)
        runs[step] = (root, spool, mem, config, jobs, _start(root, config, step, "killed"))
    for step, (root, spool, mem, _config, jobs, proc) in runs.items():
        try:
            proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == -signal.SIGKILL, (step, proc.returncode, (root / "killed.log").read_text()[-2000:])
        claimed = [e for e in _events(root, "killed") if e.get("event") == "job.claimed"]
        assert len(claimed) == JOBS, step  # one group of all six was claimed
        manifest = MemoryStore(mem).read()
        applied = set(manifest.applied_jobs)
        committed = step in ("manifest_replaced", "cleaned", "spool")
        assert applied == (set(jobs) if committed else set()), step  # all of the group or none
        done, pending = _ids(spool, "done"), _ids(spool, "new") | _ids(spool, "cur")
        assert done <= applied, step  # nothing reached done/ unapplied
        assert done | pending == set(jobs), step  # every job is done or still pending
        assert len(done) == (1 if step == "spool" else 0), step
        history = load_history(mem)
        assert not history.broken, (step, history.broken)
        assert MemoryStore(mem).history_manifests() == list(range(manifest.generation)), step

    for step, (root, spool, mem, config, jobs, _) in runs.items():
        runs[step] = (root, spool, mem, config, jobs, _start(root, config, "", "restarted"))
    for step, (root, spool, mem, _, jobs, proc) in runs.items():
        try:
            _wait(lambda s=spool, j=jobs: _ids(s, "done") == set(j), 120,
                  f"{step}: {(root / 'restarted.log').read_text()[-2000:]}")
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0, step
        finally:
            if proc.poll() is None:
                proc.kill()
        assert _ids(spool, "failed") == set() and _ids(spool, "cur") == set(), step
        manifest = MemoryStore(mem).read()
        assert sorted(manifest.applied_jobs) == sorted(jobs), step  # each exactly once
        names = [e.name for e in manifest.records]
        assert len(names) == len(set(names)) == 2 * JOBS, (step, names)
        history = load_history(mem)
        assert not history.broken, step
        by_job = history.commits_by_job()
        assert all(len(by_job.get(j, [])) == 1 for j in jobs), (step, by_job)


class Recorder:
    """A work module (the test stand-in's jobs) that records which jobs ran as one group and
    which alone."""

    def __init__(self) -> None:
        import tests.test_daemon_stub as stub

        self.stub = stub
        self.runs: list[list[str]] = []
        self.lock = threading.Lock()
        self.module = types.SimpleNamespace(Context=stub.Context, dir_state=stub.dir_state, dream=stub.dream,
                                            execute=self.execute, execute_group=self.execute_group)

    def execute(self, job: Any, ctx: Any) -> str:
        with self.lock:
            self.runs.append([job.id])
        return str(self.stub.execute(job, ctx))

    def execute_group(self, jobs: Any, ctx: Any, *, running: Any = None) -> list[Any]:
        with self.lock:
            self.runs.append([j.id for j in jobs])
        return [str(self.stub.execute(j, ctx)) for j in jobs]


def test_a_group_takes_only_jobs_already_waiting_and_stops_before_a_forget_and_a_retried_job(tmp_path: Path) -> None:
    from dreamd.config import load_config
    from dreamd.daemon.supervisor import Daemon
    from dreamd.logs import configure
    from memory.client import forget

    cfg = tmp_path / "config.toml"
    spool = tmp_path / "spool"
    cfg.write_text(f'[daemon]\nspool = "{spool}"\nroots = ["{tmp_path}/mem/*"]\nworkers = 2\n'
                   "[gates]\nthreshold = 1000\n")
    config = load_config(cfg, env={"HOME": str(tmp_path)})
    mem = tmp_path / "mem" / "a"
    MemoryStore.init(mem)
    e = [submit(f"user: fact {i}\n", memory_dir=mem, session_id=f"s{i}", spool=spool) for i in range(3)]
    f = forget(mem, ["nothing"], spool=spool)
    e += [submit(f"user: fact {i}\n", memory_dir=mem, session_id=f"s{i}", spool=spool) for i in range(3, 6)]
    (spool / "deferred" / f".{e[4]}.state.json").write_text('{"attempts": 1}')  # it ran before
    recorder = Recorder()
    configure("json", io.StringIO())
    daemon = Daemon(config, work=recorder.module, watch=False, env={"HOME": str(tmp_path)})
    daemon.pool.start()
    try:
        daemon.dirs.managed.add(mem.resolve())
        deadline = time.monotonic() + 30
        while len(_ids(spool, "done")) < 7 and time.monotonic() < deadline:
            daemon.jobs.scan_spool()
            daemon.pool.wait_idle(5)
        late = submit("user: fact late\n", memory_dir=mem, session_id="late", spool=spool)
        daemon.jobs.invalidate_listing()
        daemon.jobs.scan_spool()
        daemon.pool.wait_idle(5)
    finally:
        daemon.pool.close()
    assert recorder.runs == [[e[0], e[1], e[2]], [f], [e[3]], [e[4]], [e[5]], [late]], recorder.runs
    assert _ids(spool, "done") == {*e, f, late}
