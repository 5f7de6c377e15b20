"""The spool trusts no one but its user (issue 21 §2, DESIGN §4): a spool, a queue directory or a
job file another uid owns, or one anyone else may write, is refused with one line; a link in
place of ``new/`` is never followed; transcripts are sized before they are read.

Tests run as root, so "another user" is a chown to uid 12345."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from memory.client import remember, submit
from memory.errors import ConfigError, JobRejected
from memory.spool.queue import Spool
from memory.store.transaction import MemoryStore

REPO = Path(__file__).resolve().parents[1]
OTHER = 12345


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1536 * 1024**2, 1536 * 1024**2))


def _setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    memory_dir = tmp_path / "code" / "app" / ".memory"
    MemoryStore.init(memory_dir)
    spool = tmp_path / "spool"
    config = tmp_path / "config.toml"
    config.write_text(f'[daemon]\nspool = "{spool}"\nroots = ["{tmp_path / "code"}/*/.memory"]\n')
    return memory_dir, spool, config


def dreamd(tmp_path: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DREAMD_", "XDG_"))}
    env.update(PYTHONPATH=str(REPO), HOME=str(tmp_path / "home"), XDG_STATE_HOME=str(tmp_path / "state"))
    proc = subprocess.run([sys.executable, "-m", "dreamd", *args], input=stdin, capture_output=True, env=env,
                          cwd=tmp_path, timeout=120, preexec_fn=_limit)  # fmt: skip
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def test_a_job_planted_by_another_uid_is_never_applied(tmp_path: Path) -> None:
    memory_dir, spool, config = _setup(tmp_path)
    job = remember(memory_dir, name="planted", type="user", description="Planted", body="By someone else.", spool=spool)
    os.chown(spool / "new" / f"{job}.json", OTHER, OTHER)
    ran = dreamd(tmp_path, "once", "--config", str(config))
    assert ran.returncode == 1, ran.stderr  # the run could not process it: a failed run
    [line] = ran.stderr.splitlines()
    assert line.startswith(f"dreamd once: job {job} failed: job file is owned by uid {OTHER}")
    assert [e.name for e in MemoryStore(memory_dir).read().records] == []
    assert (spool / "failed" / f"{job}.json").exists()
    error = json.loads((spool / "failed" / f"{job}.error.json").read_text())
    assert f"owned by uid {OTHER}" in error["reason"]


def test_a_group_writable_job_file_is_never_applied(tmp_path: Path) -> None:
    memory_dir, spool, _ = _setup(tmp_path)
    job = remember(memory_dir, name="loose", type="user", description="Loose", body="Anyone could edit it.", spool=spool)
    os.chmod(spool / "new" / f"{job}.json", 0o666)
    queue = Spool(spool)
    assert queue.claim(job) is not None
    with pytest.raises(JobRejected, match="writable by group or others"):
        queue.read(job, 1 << 20)


@pytest.mark.parametrize("where", ["root", "new"])
def test_a_spool_owned_by_another_uid_is_refused_with_one_line(tmp_path: Path, where: str) -> None:
    _, spool, config = _setup(tmp_path)
    Spool(spool).ensure()
    target = spool if where == "root" else spool / "new"
    os.chmod(target, 0o755)
    os.chown(target, OTHER, OTHER)
    with pytest.raises(ConfigError, match=f"owned by uid {OTHER}"):
        Spool(spool).ensure()
    ran = dreamd(tmp_path, "once", "--config", str(config))
    assert ran.returncode == 1
    [line] = [ln for ln in (ran.stdout + ran.stderr).splitlines() if "uid" in ln]
    assert f"owned by uid {OTHER}" in line and str(target) in line
    doctor = dreamd(tmp_path, "doctor", "--config", str(config))
    assert "FAIL" in doctor.stdout and str(target) in doctor.stdout


def test_new_as_a_symlink_to_another_owners_directory_is_refused(tmp_path: Path) -> None:
    _, spool, config = _setup(tmp_path)
    Spool(spool).ensure()
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, OTHER, OTHER)
    os.rmdir(spool / "new")
    (spool / "new").symlink_to(theirs)
    with pytest.raises(ConfigError, match="symbolic link"):
        Spool(spool).ensure()
    ran = dreamd(tmp_path, "once", "--config", str(config))
    assert ran.returncode == 1 and "symbolic link" in ran.stdout + ran.stderr


def test_submit_of_a_huge_transcript_is_refused_before_it_is_read(tmp_path: Path) -> None:
    memory_dir, spool, config = _setup(tmp_path)
    big = tmp_path / "big.jsonl"
    with open(big, "wb") as f:
        f.truncate(64 * 1024**2)
    with pytest.raises(JobRejected, match=f"transcript {big}: 67108864 bytes, over the 1048576-byte job limit"):
        submit(big, memory_dir=memory_dir, spool=spool, max_job_bytes=1 << 20)
    huge = tmp_path / "huge.jsonl"
    with open(huge, "wb") as f:
        f.truncate(3 * 1024**3)
    ran = dreamd(tmp_path, "submit", str(huge), "--memory-dir", str(memory_dir), "--config", str(config))
    assert ran.returncode == 1
    [line] = ran.stderr.strip().splitlines()
    assert str(huge) in line and "over the" in line
    assert not (spool / "new").exists() or not list((spool / "new").iterdir())


def test_the_stop_hook_refuses_a_huge_session_by_its_size(tmp_path: Path) -> None:
    memory_dir = tmp_path / "p" / ".memory"
    MemoryStore.init(memory_dir)
    session = tmp_path / "session.jsonl"
    with open(session, "wb") as f:
        f.write(b'{"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","sessionId":"s"}\n')
        f.truncate(3 * 1024**3)
    payload = {"hook_event_name": "Stop", "session_id": "s", "cwd": str(tmp_path / "p"), "transcript_path": str(session)}
    ran = dreamd(tmp_path, "hook", stdin=json.dumps(payload).encode())
    assert ran.returncode == 1
    [line] = ran.stderr.strip().splitlines()
    assert str(session) in line and "over the" in line


# ----------------------------------------------------------------- the spool's own small files


def _returns_without_blocking(call: Callable[[], object], fifos: list[Path]) -> object:
    """``call()``'s result; fails (instead of hanging the run) when it blocks on a FIFO, which is
    then opened for writing so the stuck thread can finish."""
    box: list[object] = []
    worker = threading.Thread(target=lambda: box.append(call()), daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():
        for fifo in fifos:
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(10)
        pytest.fail(f"blocked on {', '.join(map(str, fifos))}")
    return box[0]


def _plant(path: Path, kind: str, outside: Path) -> None:
    """What each read would take in if it read it: ``attempts`` 99, ``host`` "planted"."""
    doc = {"attempts": 99, "reason": "planted", "pid": 1, "host": "planted"}
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link":
        outside.write_text(json.dumps(doc))
        os.symlink(outside, path)
    else:  # valid JSON far over any cap (a 3 GiB one is refused the same way, on fstat)
        path.write_text(json.dumps({**doc, "pad": "x" * (1 << 20)}))


@pytest.mark.parametrize("kind", ["fifo", "link", "oversize"])
def test_a_jobs_state_and_error_files_are_read_like_every_hostile_file(tmp_path: Path, kind: str) -> None:
    """``deferred/.X.state.json`` (the attempts count) and ``failed/X.error.json`` (why it
    failed) were read with ``read_bytes``: a FIFO there stopped the daemon's defer and status,
    a link was followed, a file of any size read. Now they are fsutil reads: not a regular file
    of ours under the cap, no state."""
    sp = Spool(tmp_path / "spool")
    sp.ensure()
    job = "20261202T000000.000000Z-0000000001"
    state = sp.root / "deferred" / f".{job}.state.json"
    error = sp.root / "failed" / f"{job}.error.json"
    _plant(state, kind, tmp_path / "outside-state.json")
    _plant(error, kind, tmp_path / "outside-error.json")
    assert _returns_without_blocking(lambda: sp.attempts(job), [state]) == 0
    assert _returns_without_blocking(lambda: sp.failure(job), [error]) == {}


@pytest.mark.parametrize("kind", ["fifo", "link", "oversize"])
def test_a_hostile_spool_owner_file_never_holds_or_feeds_status(tmp_path: Path, kind: str) -> None:
    """``spool/.owner`` (who the running daemon is) read like every other file: the lock table
    says a daemon (this process) holds the spool, and status shows its pid, never the planted
    one's, and never waits on a FIFO there."""
    from dreamd.status.collect import daemon_status

    sp = Spool(tmp_path / "spool")
    sp.ensure()
    (sp.root / ".lock").touch()
    proc = tmp_path / "proc"
    proc.mkdir()
    ino = os.stat(sp.root / ".lock").st_ino
    (proc / "locks").write_text(f"1: FLOCK  ADVISORY  WRITE {os.getpid()} 00:2a:{ino} 0 EOF\n")
    owner = sp.root / ".owner"
    _plant(owner, kind, tmp_path / "outside-owner.json")
    state = _returns_without_blocking(lambda: daemon_status(sp.root, proc=proc), [owner])
    assert state == {"running": True, "pid": os.getpid(), "host": None, "since": None}


# ----------------------------------------------------------------- the daemon over hostile directories


def test_the_daemon_applies_jobs_beside_a_fifo_last_scan_a_bad_foreign_record_and_a_fifo_manifest(tmp_path: Path) -> None:
    """Issue 21 §1 through the daemon (``dreamd once``, a child with a timeout): five jobs for
    a healthy directory whose neighbour has a FIFO ``.last-scan`` (the running daemon processed
    none of them in 98 s); a job for a directory holding a foreign record YAML cannot hold
    (``expires: 2026-02-30``: it went to ``failed/`` and the new fact was lost); a job for a
    directory whose ``manifest.json`` is a FIFO (it sat in ``cur/``). The first two are applied;
    the third backs off in ``deferred/`` with one line naming the FIFO; nothing waits."""
    code = tmp_path / "code"
    healthy, fifo_scan, bad_record, fifo_manifest = (code / n / ".memory" for n in ("ok", "scan", "yaml", "manifest"))
    for d in (healthy, fifo_scan, bad_record, fifo_manifest):
        MemoryStore.init(d)
    os.mkfifo(fifo_scan / ".last-scan")
    (bad_record / "bad-date.md").write_text("---\nname: d\ntype: user\ndescription: d\nexpires: 2026-02-30\n---\nbody\n")
    spool = tmp_path / "spool"
    config = tmp_path / "config.toml"
    config.write_text(f'[daemon]\nspool = "{spool}"\nroots = ["{code}/*/.memory"]\n')
    for i in range(5):
        remember(healthy, name=f"fact-{i}", type="user", description=f"Fact {i}", body=f"Body {i}.", spool=spool)
    remember(fifo_scan, name="beside", type="user", description="Beside", body="Beside the FIFO.", spool=spool)
    remember(bad_record, name="kept", type="user", description="Kept", body="Stored beside a broken file.", spool=spool)
    stuck = remember(fifo_manifest, name="lost", type="user", description="L", body="Cannot be stored.", spool=spool)
    (fifo_manifest / "manifest.json").unlink()
    os.mkfifo(fifo_manifest / "manifest.json")
    ran = dreamd(tmp_path, "once", "--config", str(config))
    assert ran.returncode == 0, ran.stderr
    assert sorted(e.name for e in MemoryStore(healthy).read().records) == [f"fact-{i}" for i in range(5)]
    assert [e.name for e in MemoryStore(fifo_scan).read().records] == ["beside"]
    assert [e.name for e in MemoryStore(bad_record).read().records] == ["kept"]
    assert (bad_record / "bad-date.md").exists()
    assert os.listdir(spool / "cur") == [] and os.listdir(spool / "new") == []
    # A directory someone can repair: the job backs off in deferred/ (then failed/ after
    # max_attempts), its reason the one line that names the FIFO.
    assert sorted(os.listdir(spool / "deferred")) == sorted([f"{stuck}.json", f".{stuck}.state.json"])
    state = Spool(spool).attempts(stuck), json.loads((spool / "deferred" / f".{stuck}.state.json").read_text())
    assert state[0] == 1 and f"{fifo_manifest / 'manifest.json'}: is a FIFO" in state[1]["last_error"]
