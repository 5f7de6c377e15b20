"""The team dream lease: a ref on the shared remote taken by compare-and-swap push."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dreamd.sync.flow import sync
from dreamd.sync.lease import TeamLease
from memory.errors import LeaseLost
from memory.store.transaction import MemoryStore
from tests.sync_helpers import bare_remote, git, isolate_git, record_set


@pytest.fixture
def two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, str]:
    isolate_git(tmp_path, monkeypatch)
    remote = bare_remote(tmp_path / "remote.git")
    a, b = tmp_path / "a" / ".memory", tmp_path / "b" / ".memory"
    MemoryStore.init(a)
    sync(a, remote=remote)
    sync(b, remote=remote)
    return a, b, remote


def test_one_machine_holds_the_lease_until_it_releases_it(two: tuple[Path, Path, str]) -> None:
    a, b, remote = two
    la, lb = TeamLease(a), TeamLease(b)
    assert la.acquire() is None
    busy = lb.acquire()
    assert busy is not None and busy.holder == la.holder and not busy.released
    assert la.release() is True
    assert lb.acquire() is None
    assert lb.release() is True
    chain = git(Path(remote), "log", "--format=%s", "refs/dreamd/lease").splitlines()
    assert len(chain) == 4  # every take and release is kept as the audit trail


def test_an_expired_lease_is_taken_over_and_its_old_holder_cannot_release_it(two: tuple[Path, Path, str]) -> None:
    a, b, _ = two
    la = TeamLease(a, ttl=10.0, clock=lambda: 1000.0)
    lb = TeamLease(b, ttl=10.0, clock=lambda: 1011.0)
    assert la.acquire() is None
    assert lb.acquire() is None  # la expired at 1010
    assert la.release() is False  # compare-and-swap: the lease moved on
    busy = TeamLease(a, clock=lambda: 1012.0).acquire()
    assert busy is not None and busy.holder == lb.holder


def test_of_two_machines_racing_from_the_same_read_exactly_one_wins(two: tuple[Path, Path, str]) -> None:
    a, b, _ = two
    la, lb = TeamLease(a), TeamLease(b)
    for lease in (la, lb):
        lease.git.run("hash-object", "-t", "tree", "-w", "--stdin", input=b"")
        assert lease.read() is None
    payload = {"holder": "x", "token": "t", "acquired_at": 0, "expires_at": 9e9, "released": False}
    results = [la._push({**payload, "holder": "a"}, expect=None), lb._push({**payload, "holder": "b"}, expect=None)]
    assert sum(r is not None for r in results) == 1


def test_the_daemon_does_not_dream_a_synced_directory_another_machine_is_dreaming(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    daemon, a, other, remote = _synced_daemon(tmp_path, monkeypatch)
    elsewhere = TeamLease(other)
    assert elsewhere.acquire() is None
    daemon.dirs.scan(a)
    assert len(record_set(a)) == 2  # not dreamed: the team lease is taken
    assert elsewhere.release()
    daemon.dirs.scan(a)
    assert len(record_set(a)) == 1  # dreamed: the duplicates merged
    assert sync(a).pushed
    assert '"name":"db-two"' in git(remote, "show", "main:manifest.json")
    assert '"name":"db-one"' not in git(remote, "show", "main:manifest.json")


def test_a_lease_whose_holder_died_on_this_host_is_taken_over_before_it_expires(two: tuple[Path, Path, str]) -> None:
    import subprocess
    import sys

    a, b, _ = two
    code = (
        "import sys; from pathlib import Path; from dreamd.sync.lease import TeamLease; "
        "assert TeamLease(Path(sys.argv[1])).acquire() is None"
    )
    subprocess.run([sys.executable, "-c", code, str(a)], check=True, cwd=Path(__file__).resolve().parents[1])
    lb = TeamLease(b)
    held = lb.read()
    assert held is not None and not held.released and held.dead_here()
    assert lb.acquire() is None  # the holder process exited without releasing: taken over at once
    other = TeamLease(a).acquire()
    assert other is not None and other.holder == lb.holder and not other.dead_here()


def test_a_renewed_lease_outlives_its_first_ttl_and_a_taken_over_one_is_not_renewed(two: tuple[Path, Path, str]) -> None:
    a, b, _ = two
    now = [1000.0]
    la = TeamLease(a, ttl=10.0, clock=lambda: now[0])
    assert la.acquire() is None
    now[0] = 1008.0
    assert la.renew() is True  # expires at 1018 now, not 1010
    busy = TeamLease(b, ttl=10.0, clock=lambda: 1015.0).acquire()
    assert busy is not None and busy.holder == la.holder and busy.expires_at == 1018.0
    assert busy.acquired_at == 1000.0  # a renewal keeps when the lease was first taken
    lb = TeamLease(b, ttl=10.0, clock=lambda: 1019.0)
    assert lb.acquire() is None  # expired at 1018: taken over
    now[0] = 1020.0
    assert la.renew() is False  # compare-and-swap: never renewed back from under b
    assert la.release() is False
    holder = TeamLease(a, clock=lambda: 1021.0).read()
    assert holder is not None and holder.holder == lb.holder and not holder.released


def test_the_heartbeat_renews_while_the_dream_runs_and_reports_a_lost_lease(two: tuple[Path, Path, str]) -> None:
    import time

    from dreamd.sync.lease import Heartbeat

    a, b, _ = two
    la = TeamLease(a, ttl=3.0)
    assert la.acquire() is None
    first = la.read()
    assert first is not None
    with Heartbeat(la, every=0.2) as beat:
        deadline = time.monotonic() + 20
        while beat.renewals < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert beat.renewals >= 2 and not beat.lost and beat.errors == []
    renewed = la.read()
    assert renewed is not None and renewed.expires_at > first.expires_at and renewed.commit == la.commit
    # Another machine takes it over (as after a long suspend): the next beat notices and stops.
    lb = TeamLease(b, ttl=3.0, clock=lambda: time.time() + 60)
    assert lb.acquire() is None
    with Heartbeat(la, every=0.2) as beat:
        deadline = time.monotonic() + 20
        while not beat.lost and time.monotonic() < deadline:
            time.sleep(0.05)
    assert beat.lost
    assert la.release() is False


def test_a_renewal_that_landed_although_git_reported_a_failure_is_kept(
    two: tuple[Path, Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from dreamd.sync.git import SyncTransient

    a, _, _ = two
    now = [1000.0]
    la = TeamLease(a, ttl=10.0, clock=lambda: now[0])
    assert la.acquire() is None
    real_push = TeamLease._push

    def push_then_drop(self: TeamLease, payload: dict[str, object], *, expect: str | None) -> str | None:
        real_push(self, payload, expect=expect)  # the remote has it...
        raise SyncTransient("connection reset after the upload")  # ...but git says it failed

    monkeypatch.setattr(TeamLease, "_push", push_then_drop)
    now[0] = 1005.0
    with pytest.raises(SyncTransient):
        la.renew()
    monkeypatch.setattr(TeamLease, "_push", real_push)
    now[0] = 1008.0
    assert la.renew() is True  # rejected against the stale commit, but the lease is ours
    holder = la.read()
    assert holder is not None and holder.token == la.token and holder.expires_at == 1018.0
    assert la.release() is True


def _synced_daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Path, Path, Path]:
    """A daemon (the real job path, offline model) managing one synced directory ``a`` holding
    two duplicate records (a dream merges them into one), and a second machine's clone
    ``other`` of its remote."""
    from dreamd.config import load_config
    from dreamd.daemon.supervisor import Daemon
    from memory.store.records import make_record
    from memory.store.transaction import Change

    isolate_git(tmp_path, monkeypatch)
    remote = Path(bare_remote(tmp_path / "remote.git"))
    a = tmp_path / "code" / "app" / ".memory"
    other = tmp_path / "other" / ".memory"
    store = MemoryStore.init(a)
    for n in ("db-one", "db-two"):
        rec = make_record(n, "project", "The staging database is Postgres 15", "The staging database runs Postgres 15.")
        store.commit(Change(add=[rec]))
    sync(a, remote=str(remote))
    sync(other, remote=str(remote))
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[daemon]\nspool = "{tmp_path / "spool"}"\nroots = ["{tmp_path}/code/*/.memory"]\n'
        f'[gates]\nthreshold = 1\nmin_interval = "0s"\nscan_throttle = "0s"\n'
        f'[sync]\ndirs = ["{tmp_path}/code/*/.memory"]\n'
    )
    config = load_config(cfg, env={"HOME": str(tmp_path)})
    from dreamd.jobs import work

    return Daemon(config, work=work, watch=False, env={"HOME": str(tmp_path)}), a, other, remote


def test_a_synced_directory_is_not_dreamed_while_the_remote_cannot_confirm_the_lease(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No dream without a confirmed lease: another machine may be dreaming behind the outage."""
    daemon, a, _, remote = _synced_daemon(tmp_path, monkeypatch)
    remote.rename(tmp_path / "remote-away.git")  # the remote is unreachable
    daemon.dirs.scan(a)
    assert len(record_set(a)) == 2  # not dreamed alone
    (tmp_path / "remote-away.git").rename(remote)
    daemon.dirs.scan(a)
    assert len(record_set(a)) == 1  # back online: the lease is confirmed, the dream runs


def test_a_dream_whose_lease_expired_under_it_commits_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine was suspended mid-dream past the expiry it pushed, and another machine took
    the lease over: the dream must not commit (the other one may be dreaming the same set)."""
    import time
    from types import SimpleNamespace

    import dreamd.sync.lease as lease_module

    daemon, a, other, _ = _synced_daemon(tmp_path, monkeypatch)
    wall = [time.time()]
    monkeypatch.setattr(lease_module, "time", SimpleNamespace(time=lambda: wall[0], monotonic=time.monotonic))
    taken: list[TeamLease] = []

    def suspended_then_taken_over(step: str) -> None:
        if step != "planned":
            return
        wall[0] += 3601  # our lease (lock_stale_after, 1 h) expired while this machine slept
        elsewhere = TeamLease(other, clock=lambda: wall[0])
        assert elsewhere.acquire() is None  # the other machine takes the expired lease
        taken.append(elsewhere)

    daemon.dirs.ctx.fault = suspended_then_taken_over
    daemon.dirs.scan(a)
    assert taken and len(record_set(a)) == 2  # planned, but nothing committed
    current = TeamLease(a).read()
    assert current is not None and current.holder == taken[0].holder and not current.released


def test_every_way_of_asking_for_a_dream_needs_the_team_lease(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``dreamd consolidate`` and a consolidate job go through the same lease as the daemon."""
    from dreamd.jobs.work import dream
    from memory.errors import TransientError
    from memory.spool.jobs import Job

    daemon, a, other, _ = _synced_daemon(tmp_path, monkeypatch)
    ctx = daemon.dirs.ctx
    elsewhere = TeamLease(other)
    assert elsewhere.acquire() is None
    result = dream(a, ctx, force=True)
    assert (result.status, result.reason) == ("lease-busy", f"team lease held by {elsewhere.holder}")
    job = Job(id="0" * 26, kind="consolidate", memory_dir=a, session_id=None, submitted_at="2026-11-29T10:00:00Z",
              force=True)
    with pytest.raises(TransientError, match="lease-busy"):
        from dreamd.jobs.work import execute

        execute(job, ctx)
    assert dream(a, ctx, force=True, dry_run=True).status == "dry-run"  # a dry run commits nothing: no lease
    assert len(record_set(a)) == 2
    assert elsewhere.release()
    assert dream(a, ctx, force=True).status == "applied"
    assert len(record_set(a)) == 1


def test_the_fence_passes_while_the_lease_is_ours_and_fails_once_a_renewal_is_refused(
    two: tuple[Path, Path, str]
) -> None:
    from dreamd.sync.lease import Heartbeat, TeamDream

    a, b, _ = two
    wall = [1000.0]
    la = TeamLease(a, ttl=100.0, clock=lambda: wall[0])
    assert la.acquire() is None
    beat = Heartbeat(la, every=3600)
    team = TeamDream(lease=la, beat=beat, clock=lambda: wall[0])
    team.fence()
    wall[0] = 1074.0  # expiry 1100, margin 25: still ours
    team.fence()
    wall[0] = 1075.0
    with pytest.raises(LeaseLost, match="no longer confirmed"):
        team.fence()
    wall[0] = 1000.0
    assert TeamLease(b, clock=lambda: 1101.0).acquire() is None  # taken over (b's clock is past our expiry)
    assert la.renew() is False  # our renewal is refused by compare-and-swap
    with pytest.raises(LeaseLost):
        team.fence()
