"""Crash safety of the spool with real processes and SIGKILL.

* submitters killed at random instants never leave a partial job visible in ``new/``;
* a consumer killed while holding claims gets every claimed job back on ``recover()``, once;
* many processes submitting at once produce unique, complete jobs.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

from memory.spool.jobs import validate_job
from memory.spool.queue import Spool

REPO = Path(__file__).resolve().parents[1]
ROOTS = ["/crash/*/.memory"]


def _start(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


SUBMIT_FOREVER = """
    import sys
    from memory.client import submit
    spool, size = sys.argv[1], int(sys.argv[2])
    content = ("0123456789abcdef" * (size // 16))
    print("ready", flush=True)
    i = 0
    while True:
        submit(content + str(i), memory_dir="/crash/app/.memory", session_id=f"s{i}", format="text", spool=spool)
        i += 1
"""


def _wait_ready(proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "ready", proc.stderr.read() if proc.stderr else ""


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def test_submitters_killed_mid_write_never_leave_partial_jobs(tmp_path: Path) -> None:
    spool_dir = tmp_path / "spool"
    rng = random.Random(1234)
    seen_tmp_leftovers = 0
    rounds = 20
    for _ in range(rounds):
        # ~1 MiB jobs so a kill often lands inside write()/fsync()
        proc = _start(SUBMIT_FOREVER, str(spool_dir), str(1 << 20))
        _wait_ready(proc)
        time.sleep(rng.uniform(0.0, 0.15))
        _kill(proc)
        for path in (spool_dir / "new").iterdir():
            job = validate_job(path.read_bytes(), roots=ROOTS)  # raises if partial
            assert f"{job.id}.json" == path.name
            assert job.transcript is not None and len(job.transcript.content) >= 1 << 20
        seen_tmp_leftovers += len(os.listdir(spool_dir / "tmp"))
    jobs = os.listdir(spool_dir / "new")
    assert len(jobs) > 0
    # Leftovers are only ever in tmp/ and are pruned once stale.
    spool = Spool(spool_dir, clock=lambda: time.time() + 37 * 3600)
    spool.prune()
    assert os.listdir(spool_dir / "tmp") == []
    print(f"{rounds} kills: {len(jobs)} complete jobs, {seen_tmp_leftovers} tmp leftovers observed")


CONSUMER = """
    import sys, time
    from memory.spool.queue import Spool
    spool = Spool(sys.argv[1])
    spool.acquire_lock()
    print("ready", flush=True)
    mode = sys.argv[2]
    claimed = []
    for job_id in spool.pending():
        if spool.claim(job_id) is None:
            continue
        claimed.append(job_id)
        if mode == "churn" and len(claimed) % 2 == 0:
            spool.complete(job_id)
        if mode == "hold" and len(claimed) == int(sys.argv[3]):
            break
    print("claimed " + " ".join(claimed), flush=True)
    time.sleep(60)
"""


def _submit_many(spool: Spool, n: int) -> list[str]:
    from memory.client import submit

    return [
        submit(f"job {i}", memory_dir="/crash/app/.memory", format="text", spool=spool)
        for i in range(n)
    ]


def _everywhere(spool_dir: Path) -> Counter[str]:
    seen: Counter[str] = Counter()
    for sub in ("new", "cur", "deferred", "done", "failed"):
        for name in os.listdir(spool_dir / sub):
            if name.endswith(".json") and not name.endswith(".error.json") and not name.startswith("."):
                seen[name[: -len(".json")]] += 1
    return seen


def test_consumer_killed_after_claiming_gets_each_job_back_exactly_once(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    ids = _submit_many(spool, 30)
    proc = _start(CONSUMER, str(spool.root), "hold", "12")
    _wait_ready(proc)
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    assert line[0] == "claimed"
    claimed = line[1:]
    assert claimed == ids[:12]
    assert sorted(os.listdir(spool.root / "cur")) == sorted(f"{j}.json" for j in claimed)
    _kill(proc)

    daemon = Spool(spool.root)
    daemon.acquire_lock()  # the dead consumer's flock went with it
    try:
        assert daemon.recover() == sorted(claimed)
        assert daemon.recover() == []
    finally:
        daemon.release_lock()
    assert daemon.pending() == ids
    assert _everywhere(spool.root) == Counter({j: 1 for j in ids})


def test_consumer_killed_at_random_points_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    ids = _submit_many(spool, 400)
    rng = random.Random(99)
    for _ in range(6):
        proc = _start(CONSUMER, str(spool.root), "churn")
        _wait_ready(proc)
        time.sleep(rng.uniform(0.0, 0.05))
        _kill(proc)
        assert _everywhere(spool.root) == Counter({j: 1 for j in ids})
        with spool.locked():
            spool.recover()
        assert os.listdir(spool.root / "cur") == []
    assert _everywhere(spool.root) == Counter({j: 1 for j in ids})
    assert 0 < len(os.listdir(spool.root / "done")) < len(ids)  # the kills landed mid-run


PRODUCER = """
    import sys
    from memory.client import submit
    spool, worker, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ids = [submit(f"worker {worker} job {i}", memory_dir="/crash/app/.memory",
                  session_id=f"w{worker}", format="text", spool=spool) for i in range(n)]
    print("\\n".join(ids))
"""


def test_eight_processes_submitting_200_jobs_each_get_unique_ids(tmp_path: Path) -> None:
    spool_dir = tmp_path / "spool"
    procs = [_start(PRODUCER, str(spool_dir), str(w), "200") for w in range(8)]
    printed: list[str] = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        printed.extend(out.split())
    assert len(printed) == 1600
    assert len(set(printed)) == 1600
    files = os.listdir(spool_dir / "new")
    assert sorted(f"{j}.json" for j in printed) == sorted(files)
    contents: Counter[str] = Counter()
    for name in files:
        job = json.loads((spool_dir / "new" / name).read_bytes())
        assert f"{job['id']}.json" == name
        contents[job["transcript"]["content"]] += 1
    assert len(contents) == 1600 and set(contents.values()) == {1}
    assert os.listdir(spool_dir / "tmp") == []
