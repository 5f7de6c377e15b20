"""The spool's consumer protocol: claim, complete, defer/backoff, fail, retry, recover, prune."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.errors import ConfigError, DreamdError, JobRejected, LockError
from memory.spool.jobformat import build_job, new_job_id
from memory.spool.jobs import validate_job
from memory.spool.queue import (
    SUBDIRS,
    Spool,
    SpoolCounts,
    backoff_delay,
    default_spool_path,
)
from tests.helpers.clock import FakeClock

REPO = Path(__file__).resolve().parents[1]
T0 = 1_800_000_000.0  # a fixed "now" for the fake clock


def _job(memory_dir: str = "/roots/app/.memory", content: str = "hello") -> dict[str, Any]:
    return build_job(
        "extract",
        job_id=new_job_id(),
        memory_dir=memory_dir,
        transcript=("text", content),
    )


@pytest.fixture()
def clock() -> FakeClock[float]:
    return FakeClock(T0)


@pytest.fixture()
def spool(tmp_path: Path, clock: FakeClock[float]) -> Spool:
    return Spool(tmp_path / "spool", clock=clock, backoff_base=30, backoff_max=3600, max_attempts=5)


def _names(d: Path) -> list[str]:
    return sorted(os.listdir(d))


def test_layout_is_created_0700_on_first_use(tmp_path: Path) -> None:
    s = Spool(tmp_path / "state" / "dreamd" / "spool")
    job_id = s.submit(_job())
    for name in ("", *SUBDIRS):
        mode = stat.S_IMODE(os.stat(s.root / name).st_mode)
        assert mode == 0o700, (name, oct(mode))
    assert _names(s.root / "new") == [f"{job_id}.json"]
    assert stat.S_IMODE(os.stat(s.root / "new" / f"{job_id}.json").st_mode) == 0o600
    assert _names(s.root / "tmp") == []


def test_default_location_follows_env(tmp_path: Path) -> None:
    assert default_spool_path({"DREAMD_SPOOL": "/x/spool", "XDG_STATE_HOME": "/s"}) == Path(
        "/x/spool"
    )
    assert default_spool_path({"XDG_STATE_HOME": "/s", "HOME": "/h"}) == Path("/s/dreamd/spool")
    assert default_spool_path({"XDG_STATE_HOME": "rel", "HOME": "/h"}) == Path(
        "/h/.local/state/dreamd/spool"
    )
    assert default_spool_path({"HOME": "/h"}) == Path("/h/.local/state/dreamd/spool")


@pytest.mark.parametrize("bad", [0o777, 0o770, 0o702])
def test_group_or_world_writable_spool_is_refused(tmp_path: Path, bad: int) -> None:
    root = tmp_path / "spool"
    Spool(root).ensure()
    os.chmod(root / "new", bad)
    with pytest.raises(ConfigError) as info:
        Spool(root).submit(_job())
    assert str(info.value) == (
        f"spool {root}/new is group- or world-writable (mode {bad:o}); "
        "run chmod go-w on it: anyone who can write there could forge jobs"
    )
    assert _names(root / "new") == []
    Spool(root, allow_insecure=True).submit(_job())
    assert len(_names(root / "new")) == 1


def test_submit_refuses_an_oversize_job_before_writing(spool: Spool) -> None:
    with pytest.raises(JobRejected, match=r"over the 1000-byte limit"):
        spool.submit(_job(content="x" * 2000), max_bytes=1000)
    assert spool.counts() == SpoolCounts(new=0, cur=0, deferred=0, failed=0, done=0)
    assert _names(spool.root / "tmp") == []


def test_claim_moves_to_cur_and_losing_the_race_returns_none(spool: Spool) -> None:
    job_id = spool.submit(_job())
    assert spool.pending() == [job_id]
    path = spool.claim(job_id)
    assert path == spool.root / "cur" / f"{job_id}.json"
    assert spool.claim(job_id) is None
    assert json.loads(spool.read(job_id, 1 << 20))["id"] == job_id
    spool.complete(job_id)
    assert spool.counts() == SpoolCounts(new=0, cur=0, deferred=0, failed=0, done=1)


def test_pending_is_oldest_first(spool: Spool) -> None:
    ids = [spool.submit(_job()) for _ in range(20)]
    assert spool.pending() == sorted(ids) == ids


def test_defer_backs_off_exponentially_then_fails_after_max_attempts(
    spool: Spool, clock: FakeClock[float]
) -> None:
    job_id = spool.submit(_job())
    delays = []
    for attempt in range(1, 5):
        assert spool.claim(job_id)
        assert spool.defer(job_id, f"model timeout #{attempt}") == "deferred"
        due = os.stat(spool.root / "deferred" / f"{job_id}.json").st_mtime - clock.now
        delays.append(round(due))
        clock.now += due - 1
        assert spool.release_due() == []
        clock.now += 1
        assert spool.release_due() == [job_id]
        assert spool.attempts(job_id) == attempt
    assert delays == [30, 60, 120, 240]
    assert spool.claim(job_id)
    assert spool.defer(job_id, "model timeout #5") == "failed"
    assert spool.counts() == SpoolCounts(new=0, cur=0, deferred=0, failed=1, done=0)
    error = spool.failure(job_id)
    assert error["reason"] == "gave up after 5 attempts: model timeout #5"
    assert error["attempts"] == 5
    assert error["first_error"] == "model timeout #1"
    assert error["last_error"] == "model timeout #5"
    assert {"first_error_at", "last_error_at", "failed_at"} <= set(error)
    assert _names(spool.root / "deferred") == []  # sidecar removed


def test_a_wait_the_job_is_not_at_fault_for_backs_off_but_never_uses_an_attempt(
    spool: Spool, clock: FakeClock[float]
) -> None:
    job_id = spool.submit(_job())
    assert spool.claim(job_id)
    assert spool.defer(job_id, "model timeout") == "deferred"  # one real attempt first
    delays = []
    for wait in range(1, 9):  # well past max_attempts (5)
        clock.now += 10_000
        assert spool.release_due() == [job_id]
        assert spool.claim(job_id)
        assert spool.defer(job_id, f"disk full #{wait}", counted=False) == "deferred"
        delays.append(round(os.stat(spool.root / "deferred" / f"{job_id}.json").st_mtime - clock.now))
        assert spool.attempts(job_id) == 1
    assert delays == [30, 60, 120, 240, 480, 960, 1920, 3600]
    assert spool.counts().failed == 0
    # Counted failures still end in failed/ after max_attempts, waits aside.
    for attempt in range(2, 6):
        clock.now += 10_000
        spool.release_due()
        assert spool.claim(job_id)
        outcome = spool.defer(job_id, f"model timeout #{attempt}")
        assert outcome == ("failed" if attempt == 5 else "deferred")
    error = spool.failure(job_id)
    assert error["attempts"] == 5
    assert error["first_error"] == "model timeout"


def test_backoff_delay_is_capped() -> None:
    assert [backoff_delay(n, base=30, cap=3600) for n in (1, 2, 3, 7, 8, 50)] == [
        30,
        60,
        120,
        1920,
        3600,
        3600,
    ]


def test_complete_clears_attempts(spool: Spool, clock: FakeClock[float]) -> None:
    job_id = spool.submit(_job())
    spool.claim(job_id)
    spool.defer(job_id, "429")
    clock.now += 30
    spool.release_due()
    spool.claim(job_id)
    spool.complete(job_id)
    assert spool.attempts(job_id) == 0
    assert _names(spool.root / "deferred") == []
    assert os.stat(spool.root / "done" / f"{job_id}.json").st_mtime == pytest.approx(clock.now)


def test_fail_writes_error_file_and_retry_keeps_history(spool: Spool) -> None:
    job_id = spool.submit(_job())
    spool.claim(job_id)
    spool.fail(job_id, "memory_dir /etc is outside the configured roots")
    assert _names(spool.root / "failed") == [f"{job_id}.error.json", f"{job_id}.json"]
    assert spool.failure(job_id)["reason"] == "memory_dir /etc is outside the configured roots"
    assert spool.retry([job_id]) == [job_id]
    assert spool.pending() == [job_id]
    assert _names(spool.root / "failed") == [f"{job_id}.error-1.json"]
    spool.claim(job_id)
    spool.fail(job_id, "second reason")
    assert spool.retry() == [job_id]
    assert _names(spool.root / "failed") == [f"{job_id}.error-1.json", f"{job_id}.error-2.json"]
    history = json.loads((spool.root / "failed" / f"{job_id}.error-2.json").read_text())
    assert history["reason"] == "second reason"


def test_retry_of_unknown_job_moves_nothing(spool: Spool) -> None:
    job_id = spool.submit(_job())
    spool.claim(job_id)
    spool.fail(job_id, "bad")
    with pytest.raises(DreamdError, match=r"no failed job 'nope'"):
        spool.retry([job_id, "nope"])
    assert spool.failed_ids() == [job_id]


def test_recover_needs_the_lock_and_returns_claims_to_new(spool: Spool) -> None:
    ids = [spool.submit(_job()) for _ in range(3)]
    for job_id in ids:
        spool.claim(job_id)
    with pytest.raises(LockError, match="needs the spool lock"):
        spool.recover()
    with spool.locked():
        assert spool.recover() == ids
    assert spool.pending() == ids
    assert spool.counts().cur == 0


def test_second_daemon_gets_a_clear_lock_error(spool: Spool, tmp_path: Path) -> None:
    spool.acquire_lock()
    try:
        other = Spool(spool.root)
        with pytest.raises(LockError) as info:
            other.acquire_lock()
        assert str(info.value) == (
            f"spool {spool.root} is in use by another dreamd (pid {os.getpid()} on {os.uname().nodename}) "
            f"(lock {spool.root}/.lock is held)"
        )
        code = textwrap.dedent(
            f"""
            import sys
            from memory.spool.queue import Spool
            from memory.errors import LockError
            try:
                Spool({str(spool.root)!r}).acquire_lock()
            except LockError as e:
                print(e); sys.exit(3)
            """
        )
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=30
        )
        assert proc.returncode == 3, proc.stderr
        assert "is in use by another dreamd" in proc.stdout
    finally:
        spool.release_lock()
    assert (spool.root / ".lock").exists()  # lock files are never deleted
    other = Spool(spool.root)
    other.acquire_lock()
    other.release_lock()


def test_release_due_only_moves_due_jobs(spool: Spool, clock: FakeClock[float]) -> None:
    a, b = spool.submit(_job()), spool.submit(_job())
    spool.claim(a)
    spool.defer(a, "5xx")
    clock.now += 10
    spool.claim(b)
    spool.defer(b, "5xx")
    assert spool.next_due() == pytest.approx(T0 + 30)
    clock.now = T0 + 30
    assert spool.release_due() == [a]
    assert spool.counts() == SpoolCounts(new=1, cur=0, deferred=1, failed=0, done=0)


def test_prune_removes_old_done_and_stale_tmp_but_never_failed(
    spool: Spool, clock: FakeClock[float]
) -> None:
    done_id, failed_id = spool.submit(_job()), spool.submit(_job())
    spool.claim(done_id)
    spool.complete(done_id)
    spool.claim(failed_id)
    spool.fail(failed_id, "bad")
    stale = spool.root / "tmp" / "crashed-writer"
    stale.write_bytes(b"partial")
    os.utime(stale, (T0 - 37 * 3600, T0 - 37 * 3600))
    fresh = spool.root / "tmp" / "writing-now"
    fresh.write_bytes(b"partial")
    os.utime(fresh, (T0 - 3600, T0 - 3600))
    os.utime(spool.root / "failed" / f"{failed_id}.json", (0, 0))
    result = spool.prune()
    assert (result.done, result.tmp) == (0, 1)
    assert _names(spool.root / "tmp") == ["writing-now"]
    clock.now += 7 * 86400 + 1
    assert spool.prune().done == 1
    assert _names(spool.root / "done") == []
    assert spool.failed_ids() == [failed_id]


def test_files_with_non_job_names_in_new_are_quarantined_not_lost(spool: Spool) -> None:
    spool.ensure()
    (spool.root / "new" / "notes.txt").write_bytes(b"hello")
    (spool.root / "new" / ".hidden").write_bytes(b"ignored by convention")
    (spool.root / "new" / "x.error.json").write_bytes(b"{}")
    job_id = spool.submit(_job())
    assert spool.pending() == [job_id]
    failed = spool.failed_ids()
    assert len(failed) == 2
    reasons = sorted(spool.failure(f)["original_name"] for f in failed)
    assert reasons == ["notes.txt", "x.error.json"]
    contents = sorted((spool.root / "failed" / f"{f}.json").read_bytes() for f in failed)
    assert contents == [b"hello", b"{}"]
    assert _names(spool.root / "new") == [".hidden", f"{job_id}.json"]


def _consume(spool: Spool, roots: list[str]) -> dict[str, str]:
    """A minimal consumer loop: what the daemon does, minus the actual work."""
    outcome = {}
    for job_id in spool.pending():
        if spool.claim(job_id) is None:
            continue
        try:
            raw = spool.read(job_id, 4096)
            validate_job(raw, roots=roots, max_bytes=4096)
        except JobRejected as exc:
            spool.fail(job_id, str(exc))
            outcome[job_id] = "failed"
        else:
            spool.complete(job_id)
            outcome[job_id] = "done"
    return outcome


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    blobs=st.lists(
        st.one_of(
            st.binary(max_size=300),
            st.builds(
                lambda kind, extra: json.dumps({**_job(), "kind": kind, **extra}).encode(),
                st.sampled_from(["extract", "remember", "forget", "consolidate", "bogus"]),
                st.dictionaries(
                    st.sampled_from(["records", "names", "force", "memory_dir", "format"]),
                    st.integers() | st.text(max_size=5),
                ),
            ),
            st.just(json.dumps(_job()).encode()),
            st.just(json.dumps(_job(content="y" * 5000)).encode()),
        ),
        max_size=12,
    )
)
def test_fuzz_any_bytes_in_new_end_valid_or_failed_with_reason(
    tmp_path_factory: Any, blobs: list[bytes]
) -> None:
    spool = Spool(tmp_path_factory.mktemp("spool"))
    spool.ensure()
    dropped = {}
    for blob in blobs:
        job_id = new_job_id()
        (spool.root / "new" / f"{job_id}.json").write_bytes(blob)
        dropped[job_id] = blob
    outcome = _consume(spool, ["/roots/*/.memory"])
    assert set(outcome) == set(dropped)  # nothing lost, nothing invented
    assert spool.counts() == SpoolCounts(
        new=0,
        cur=0,
        deferred=0,
        failed=list(outcome.values()).count("failed"),
        done=list(outcome.values()).count("done"),
    )
    for job_id, result in outcome.items():
        where = spool.root / ("done" if result == "done" else "failed") / f"{job_id}.json"
        assert where.read_bytes() == dropped[job_id]
        if result == "failed":
            assert spool.failure(job_id)["reason"]


def test_consumer_loop_sends_valid_jobs_to_done_and_others_to_failed(spool: Spool) -> None:
    good = spool.submit(_job())
    outside = spool.submit(_job(memory_dir="/etc/.memory"))
    big = spool.submit(_job(content="z" * 8000))
    assert _consume(spool, ["/roots/*/.memory"]) == {good: "done", outside: "failed", big: "failed"}
    assert (
        spool.failure(outside)["reason"]
        == "memory_dir /etc/.memory is outside the configured roots"
    )
    assert spool.failure(big)["reason"] == "job is over the 4096-byte limit (max_job_bytes)"


def test_unclaim_puts_a_claimed_job_back_without_counting_an_attempt(spool: Spool) -> None:
    job_id = spool.submit(_job())
    spool.claim(job_id)
    assert spool.unclaim(job_id) is True
    assert spool.unclaim(job_id) is False
    assert spool.pending() == [job_id]
    assert spool.attempts(job_id) == 0


def test_symlinks_directories_and_fifos_under_job_names_are_failed_not_followed(
    spool: Spool, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(_job()))
    spool.ensure()
    link, folder, fifo = new_job_id(), new_job_id(), new_job_id()
    (spool.root / "new" / f"{link}.json").symlink_to(secret)
    (spool.root / "new" / f"{folder}.json").mkdir()
    os.mkfifo(spool.root / "new" / f"{fifo}.json")
    assert _consume(spool, ["/roots/*/.memory"]) == {
        link: "failed",
        folder: "failed",
        fifo: "failed",
    }
    assert spool.failure(link)["reason"] == "job file is a symlink, not a regular file"
    assert spool.failure(folder)["reason"] == "job file is not a regular file"
    assert spool.failure(fifo)["reason"] == "job file is not a regular file"
    assert secret.exists()
