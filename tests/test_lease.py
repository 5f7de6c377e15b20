"""The consolidation lease ``.dream.lock`` (DESIGN §3): staleness, race-free breaking, fencing."""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memory.errors import LeaseLost, LockError
from memory.store import locks
from memory.store.locks import (
    LEASE_NAME,
    DreamLease,
    LeaseInfo,
    break_stale_lease,
    process_start_token,
)
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore
from tests.helpers.clock import FakeClock

T0 = datetime(2026, 11, 29, 10, 0, 0, tzinfo=UTC)
HOST = socket.gethostname()


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def write_lease(d: Path, **fields: Any) -> bytes:
    body = {
        "pid": 1,
        "host": HOST,
        "start_token": "",
        "started_at": iso(T0),
        "heartbeat_at": iso(T0),
        "token": "old-token",
    }
    body.update(fields)
    data = json.dumps(body).encode()
    (d / LEASE_NAME).write_bytes(data)
    return data


def dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True)
    pid = int(proc.stdout)
    assert not Path(f"/proc/{pid}").exists()
    return pid


def broken_leases(d: Path) -> list[Path]:
    return sorted((d / ".history").glob("dream.lock-broken-*.json"))


def test_lease_of_a_dead_pid_is_stale_and_recovered_with_the_old_lease_kept(tmp_path: Path) -> None:
    pid = dead_pid()
    old = write_lease(tmp_path, pid=pid, token="dead-holder")
    clock = FakeClock(T0)  # heartbeat is fresh: only the dead pid makes it stale
    info = LeaseInfo.read(tmp_path / LEASE_NAME)
    assert info is not None
    assert info.stale_reason(now=clock(), stale_after=3600, host=HOST) == f"holder pid {pid} is gone"
    lease = DreamLease.acquire(tmp_path, clock=clock)
    now = json.loads((tmp_path / LEASE_NAME).read_bytes())
    assert now["pid"] == os.getpid() and now["token"] == lease.token != "dead-holder"
    assert now["start_token"] == process_start_token(os.getpid()) != ""
    [archived] = broken_leases(tmp_path)
    assert archived.read_bytes() == old
    assert [p.name for p in tmp_path.iterdir() if ".break-" in p.name] == []


def test_lease_with_our_pid_but_another_start_token_is_a_reused_pid(tmp_path: Path) -> None:
    write_lease(tmp_path, pid=os.getpid(), start_token="12345", token="previous-life")
    info = LeaseInfo.read(tmp_path / LEASE_NAME)
    assert info is not None
    reason = info.stale_reason(now=T0, stale_after=3600, host=HOST)
    assert reason == f"pid {os.getpid()} now belongs to another process"
    lease = DreamLease.acquire(tmp_path, clock=FakeClock(T0))
    lease.verify()
    assert len(broken_leases(tmp_path)) == 1


def test_lease_on_another_host_is_stale_only_by_heartbeat_age(tmp_path: Path) -> None:
    write_lease(tmp_path, pid=424242, host="elsewhere", token="remote")
    clock = FakeClock(T0 + timedelta(minutes=59))
    with pytest.raises(LockError, match="dream lease held by pid 424242 on elsewhere"):
        DreamLease.acquire(tmp_path, clock=clock)
    assert json.loads((tmp_path / LEASE_NAME).read_bytes())["token"] == "remote"
    clock.advance(2 * 60)  # 61 minutes since the last heartbeat
    with pytest.raises(LockError):
        DreamLease.acquire(tmp_path, clock=clock, stale_after=7200)
    lease = DreamLease.acquire(tmp_path, clock=clock)
    assert json.loads((tmp_path / LEASE_NAME).read_bytes())["token"] == lease.token
    assert len(broken_leases(tmp_path)) == 1


def test_unreadable_lease_counts_as_stale(tmp_path: Path) -> None:
    (tmp_path / LEASE_NAME).write_bytes(b"{not json")
    DreamLease.acquire(tmp_path, clock=FakeClock(T0)).verify()


def test_live_lease_refuses_with_the_holder_named(tmp_path: Path) -> None:
    clock = FakeClock(T0)
    held = DreamLease.acquire(tmp_path, clock=clock)
    clock.advance(30 * 60)
    with pytest.raises(LockError, match=rf"held by pid {os.getpid()} on {HOST} since 2026-11-29T10:00:00Z"):
        DreamLease.acquire(tmp_path, clock=clock)
    held.verify()
    assert broken_leases(tmp_path) == []


def test_heartbeat_refreshes_in_place_and_keeps_a_holder_from_going_stale(tmp_path: Path) -> None:
    clock = FakeClock(T0)
    held = DreamLease.acquire(tmp_path, clock=clock)
    inode = (tmp_path / LEASE_NAME).stat().st_ino
    for _ in range(5):
        clock.advance(50 * 60)  # 50 minutes between beats, limit is 60
        held.heartbeat()
        with pytest.raises(LockError):
            DreamLease.acquire(tmp_path, clock=clock)
    data = json.loads((tmp_path / LEASE_NAME).read_bytes())
    assert data["heartbeat_at"] == iso(T0 + timedelta(minutes=250))
    assert data["started_at"] == iso(T0)
    assert (tmp_path / LEASE_NAME).stat().st_ino == inode


def test_a_heartbeat_on_a_full_disk_names_the_lease_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk names the path it could not write (issue 21): the heartbeat's write and
    fsync raise with no file name of their own."""
    import errno

    held = DreamLease.acquire(tmp_path, clock=FakeClock(T0))

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError) as exc:
        held.heartbeat()
    assert exc.value.filename == str(tmp_path / LEASE_NAME) and exc.value.errno == errno.ENOSPC


def test_broken_holder_cannot_commit_heartbeat_or_release_the_new_lease(tmp_path: Path) -> None:
    store = MemoryStore.init(tmp_path)
    clock = FakeClock(T0)
    first = DreamLease.acquire(tmp_path, clock=clock)
    clock.advance(2 * 3600)  # the first holder stopped beating (a hung process)
    second = DreamLease.acquire(tmp_path, clock=clock)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(LeaseLost):
        store.commit(Change(add=[make_record("late", "user", "d", "b")], lease=first, actor="dream"))
    assert store.read().generation == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    with pytest.raises(LeaseLost):
        first.heartbeat()
    first.release()  # not ours any more: must leave the new holder's lease alone
    second.verify()
    assert json.loads((tmp_path / LEASE_NAME).read_bytes())["token"] == second.token
    assert store.commit(Change(add=[make_record("ok", "user", "d", "b")], lease=second, actor="dream")).generation == 1
    second.release()
    assert not (tmp_path / LEASE_NAME).exists()
    with pytest.raises(LeaseLost, match="vanished"):
        second.heartbeat()


def test_break_puts_back_a_lease_whose_holder_beat_after_it_was_judged(tmp_path: Path) -> None:
    clock = FakeClock(T0)
    held = DreamLease.acquire(tmp_path, clock=clock)
    judged = LeaseInfo.read(tmp_path / LEASE_NAME)
    assert judged is not None
    clock.advance(60)
    held.heartbeat()  # the holder is alive after all
    assert break_stale_lease(tmp_path, judged, "test") is False
    held.verify()
    assert broken_leases(tmp_path) == []
    assert [p.name for p in tmp_path.iterdir()] == [LEASE_NAME]


def test_context_manager_releases(tmp_path: Path) -> None:
    with DreamLease.acquire(tmp_path, clock=FakeClock(T0)):
        assert (tmp_path / LEASE_NAME).exists()
    assert not (tmp_path / LEASE_NAME).exists()


# ---------------------------------------------------------------- two breakers at once

def _racer(d: str, rounds: int, start: Any, done: Any, results: Any, breaks: Any) -> None:
    real_break = locks.break_stale_lease

    def counting_break(directory: Path, judged: LeaseInfo, reason: str) -> bool:
        won = real_break(directory, judged, reason)
        breaks.put(won)
        return won

    locks.break_stale_lease = counting_break  # this forked process only
    for _ in range(rounds):
        start.wait()
        try:
            lease = DreamLease.acquire(Path(d))
            results.put(("won", os.getpid(), lease.token))
        except LockError as exc:
            results.put(("lost", os.getpid(), str(exc)))
        except BaseException as exc:  # pragma: no cover - reported to the parent
            results.put(("error", os.getpid(), repr(exc)))
        done.wait()


def test_two_processes_breaking_the_same_stale_lease_exactly_one_wins(tmp_path: Path) -> None:
    rounds = 100
    ctx = multiprocessing.get_context("fork")
    start = ctx.Barrier(3)
    done = ctx.Barrier(3)
    results = ctx.Queue()
    breaks = ctx.Queue()
    args = (str(tmp_path), rounds, start, done, results, breaks)
    racers = [ctx.Process(target=_racer, args=args) for _ in range(2)]
    for p in racers:
        p.start()
    pid = dead_pid()
    stale_kinds: list[Callable[[], bytes]] = [
        lambda: write_lease(tmp_path, pid=pid, token="dead"),
        lambda: write_lease(tmp_path, pid=pid, host="elsewhere", heartbeat_at="2020-01-01T00:00:00Z", token="old"),
    ]
    try:
        for round_ in range(rounds):
            stale_kinds[round_ % 2]()
            start.wait(timeout=30)
            got = sorted([results.get(timeout=30), results.get(timeout=30)])
            outcomes = [g[0] for g in got]
            assert outcomes == ["lost", "won"], (round_, got)
            winner = got[1]
            data = json.loads((tmp_path / LEASE_NAME).read_bytes())
            assert (data["pid"], data["token"]) == (winner[1], winner[2]), round_
            assert f"pid {winner[1]}" in got[0][2]  # the loser names the new holder
            assert len(broken_leases(tmp_path)) == round_ + 1, round_  # archived exactly once
            (tmp_path / LEASE_NAME).unlink()
            done.wait(timeout=30)
    finally:
        for p in racers:
            p.join(timeout=30)
            if p.is_alive():  # pragma: no cover
                p.kill()
    assert [p.exitcode for p in racers] == [0, 0]
    attempts = []
    while not breaks.empty():
        attempts.append(breaks.get())
    # Exactly one break won per round; rounds where both judged the lease stale and both
    # tried to break it (the race this test is about) show up as extra, losing attempts.
    assert attempts.count(True) == rounds
    print(f"\nbreak attempts={len(attempts)} (both raced in {len(attempts) - rounds} of {rounds} rounds)")
