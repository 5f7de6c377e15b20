"""Job dispatch: from the spool's ``new/`` through a worker to ``done/``, ``deferred/`` or ``failed/``.

:class:`JobDispatcher` is the daemon's collaborator for spool jobs (the daemon in
``dreamd/daemon/supervisor.py`` owns the lifecycle, the tick, supervision and signals;
:class:`dreamd.daemon.directories.DirectoryKeeper` owns what is keyed by a memory directory):

* Claim only what a worker is about to run (``new/`` → ``cur/``, the claim recorded *before*
  the rename so ``cur/`` never holds a claim this process does not know); a job whose
  directory already has work stays in ``new/``. The jobs of that directory already waiting
  behind the one claimed join it as a group commit (DESIGN §3, §5; never waiting for more):
  they run one after another and commit in one store transaction, each filed by its outcome.
* Validate, queue under the job's memory directory, run through ``work.execute`` and move to
  ``done/``, ``deferred/`` or ``failed/`` by the error class: TransientError/LockTimeout →
  defer, PermanentError → fail, anything else → logged with its traceback and deferred (the
  spool fails it after ``max_attempts``).
* Every job runs against a work budget scaled to its size (``[daemon] job_budget`` +
  ``job_budget_per_kib``): one still running when it runs out goes to ``failed/`` with the
  reason and its directory's next job starts on a fresh worker (:mod:`dreamd.jobs.budget`).
* After every job, however it ended, the directory's keeper is told (``after_job``): its
  fingerprint is taken again and the gates get a look.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Generic

from dreamd.config import Config
from dreamd.daemon.pool import Task, WorkerPool
from dreamd.jobs.budget import Budget, Deadlines, attach, budget_seconds
from dreamd.jobs.group import GROUP_MAX_BYTES, GROUP_MAX_JOBS, GROUPED_KINDS
from dreamd.jobs.protocol import C, Work
from dreamd.logs import get_logger
from memory.errors import ConflictError, PermanentError, TransientError
from memory.spool.jobs import Job
from memory.spool.queue import Spool

if TYPE_CHECKING:
    from dreamd.logs import EventLogger

__all__ = ["MAX_CLAIMED", "JobDispatcher", "log_task_crash"]

log = get_logger("dreamd.daemon")

MAX_CLAIMED = 256
"""A backstop on claimed-but-not-finished jobs (normally at most one group per worker)."""
PEEK_SLACK = 1024
"""Cached job directories of jobs no longer in new/ are dropped past this many."""
LISTING_TTL = 1.0
"""Seconds a listing of ``new/`` is reused while it still offers a job to claim. A scan runs
after every finished job, and listing a backlog of 20,000 jobs takes 35–70 ms: relisting each
time made the daemon slower the longer its backlog grew (a 30-minute torture run fell from 19 to
under 5 jobs/s). A listing that offers nothing to claim is renewed at once, so an idle daemon
still sees a new job as soon as the watcher reports it."""
DISK_FULL_HOLD = (15.0, 300.0)
"""After a job of a directory fails with a full disk, that directory's other jobs stay in
``new/`` this long (seconds; doubling from the first figure to the second while the disk stays
full): one probe per interval instead of every waiting job burning its attempts into
``failed/``. A job that completes there ends the hold. The hold lives in memory; what survives
a restart is that the probe's deferral does not count as an attempt (``Spool.defer(counted=
False)``), so a new daemon incarnation probing a still-full disk never fails a job."""
COMMIT_RECHECK = 1.0
"""Seconds after which an over-budget job that was in the middle of a commit is looked at again."""
RELIST_AFTER = 0.25
"""...but no more often than this (seconds): with a free worker and a backlog that is all for
busy directories, each scan would otherwise list the whole backlog again. A scan that skips a
relist for this reason asks for another scan when the interval is over."""


@dataclass
class JobCounts:
    """Jobs this process finished, by how (the ``daemon.stopped`` and ``daemon.once_done`` lines),
    and each job it filed in ``failed/`` with the reason (``dreamd once`` exits 1 naming them)."""

    done: int = 0
    deferred: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)

    @property
    def failed(self) -> int:
        return len(self.failures)

    def fail(self, job_id: str, reason: str) -> None:
        self.failures.append((job_id, reason))  # one append: safe from any worker thread


def log_task_crash(task: Task, exc: BaseException) -> None:
    """The worker pool's ``on_error``: a task raised past its own handling (a bug); say so."""
    log.error("job.error", job_id=task.label, error=f"{type(exc).__name__}: {exc}",
              traceback="".join(traceback.format_exception_only(type(exc), exc)).strip())


class JobDispatcher(Generic[C]):
    """Claims spool jobs for free workers, runs them and files them by their outcome.

    ``after_job`` is called with a job's memory directory once it ran (whatever the outcome),
    ``hint_spool`` when jobs were put back in ``new/`` and the spool should be scanned again.
    ``once`` is ``dreamd once``: a job already claimed still runs after :meth:`stop`.
    """

    def __init__(
        self,
        *,
        spool: Spool,
        pool: WorkerPool,
        config: Config,
        ctx: C,
        work: Work[C],
        after_job: Callable[[Path], None],
        hint_spool: Callable[[], None],
        once: bool = False,
    ) -> None:
        self.spool = spool
        self.config = config
        self.ctx = ctx
        self._pool = pool
        self._work = work
        self._after_job = after_job
        self._hint_spool = hint_spool
        self._once = once
        self._stopping = False
        self.counts = JobCounts()
        self.claimed: set[str] = set()
        """Job ids in ``cur/`` that this process claimed and has not filed yet."""
        self._peeked: dict[str, Path | None] = {}
        self._listing: list[str] = []
        self._listed_at = float("-inf")
        self._clock: Callable[[], float] = time.monotonic
        self._rescan: threading.Timer | None = None
        self._held: dict[Path, tuple[float, float]] = {}
        """Directories whose disk was full: ``(until, last hold in seconds)`` on ``_clock``."""
        self._lock = threading.Lock()
        self._scan_lock = threading.Lock()
        self._deadlines = Deadlines()
        self._groups = hasattr(work, "execute_group")
        """Whether the work module runs group commits (a test's stand-in may not)."""

    def reconfigure(self, config: Config, ctx: C) -> None:
        """Take a reloaded config (and the context built from it) from the next job on."""
        self.config = config
        self.ctx = ctx

    def stop(self) -> None:
        """Claim nothing more; a claimed job that has not started goes back to ``new/``."""
        self._stopping = True
        rescan = self._rescan
        if rescan is not None:
            rescan.cancel()

    def in_progress(self) -> int:
        """How many claimed jobs are not filed yet (the service manager's status line)."""
        with self._lock:
            return len(self.claimed)

    # ------------------------------------------------------------------ spool

    def scan_spool(self) -> int:
        """Claim the oldest waiting job of each idle directory while a worker is free.

        Only what a worker is about to run is claimed: a job whose directory already has work
        stays in ``new/`` (jobs of one directory run one at a time anyway), so ``cur/`` holds at
        most one job per worker, a kill returns only those, and a restart starts at once. A
        job's directory is peeked from its first bytes and cached per job id (job files never
        change); a job that cannot be peeked is claimed so validation can fail it with its
        reason. Returns the number of jobs queued. Scans are serialised (``dreamd once`` scans
        from the worker that just finished), so one directory's jobs are queued oldest first.
        """
        with self._scan_lock:
            return self._scan_spool()

    def _scan_spool(self) -> int:
        if self._stopping:
            return 0
        age = self._clock() - self._listed_at
        fresh = age > LISTING_TTL
        if fresh and not self._relist():
            return 0
        queued = self._claim_from_listing()
        if fresh or self._stopping or self._pool.free_slots() == 0:
            return queued
        if age >= RELIST_AFTER or self._once:  # the listing ran out with a worker free: look again
            if self._relist():
                queued += self._claim_from_listing()
        elif self._rescan is None:
            self._rescan = threading.Timer(RELIST_AFTER - age, self._rescan_due)
            self._rescan.daemon = True
            self._rescan.start()
        return queued

    def _rescan_due(self) -> None:
        self._rescan = None
        if not self._stopping:
            self._hint_spool()

    def invalidate_listing(self) -> None:
        """Jobs came back into ``new/`` (released from ``deferred/``, unclaimed, recovered):
        they may be older than what the cached listing offers, so the next scan lists again."""
        self._listed_at = float("-inf")

    def _relist(self) -> bool:
        try:
            self._listing = self.spool.pending()
        except OSError as exc:
            log.error("spool.error", step="list", error=str(exc))
            return False
        self._listed_at = self._clock()
        self._forget_peeks(self._listing)
        return True

    def _claim_from_listing(self) -> int:
        """Claim from the current listing, oldest first; what left ``new/`` leaves the listing."""
        queued = 0
        taken: set[Path] = set()
        gone: set[str] = set()
        free = self._pool.free_slots()
        busy = self._pool.keys()
        with self._lock:
            claimed = set(self.claimed)
        for job_id in self._listing:
            if self._stopping or queued >= free:
                break
            if job_id in claimed or job_id in gone:  # gone: a group of this pass took it
                continue
            target = self._peek(job_id)
            if target is not None and (target in taken or target in busy or self._holding(target)):
                continue
            with self._lock:
                if len(self.claimed) >= MAX_CLAIMED:
                    break
                self.claimed.add(job_id)  # before the rename, so cur/ never holds an unknown claim
            gone.add(job_id)
            if self._stopping or self.spool.claim(job_id) is None:
                with self._lock:
                    self.claimed.discard(job_id)
                continue
            self._peeked.pop(job_id, None)
            key = self._dispatch(job_id, followers=functools.partial(self._followers, job_id, claimed=claimed, gone=gone),
                                 gone=gone)
            if key is not None:
                queued += 1
                taken.add(key)
        if gone:
            self._listing = [j for j in self._listing if j not in gone]
        return queued

    def _followers(self, lead: str, target: Path, *, claimed: set[str], gone: set[str]) -> Iterator[str]:
        """Jobs after ``lead`` in the listing that a peek places in ``target``, oldest first (the
        candidates of its group; each is claimed only when the group takes it)."""
        after = False
        for job_id in self._listing:
            if job_id == lead:
                after = True
                continue
            if not after or job_id in claimed or job_id in gone:
                continue
            if self._peek(job_id) == target:
                yield job_id

    def _holding(self, directory: Path) -> bool:
        held = self._held.get(directory)
        return held is not None and self._clock() < held[0]

    def _hold(self, directory: Path, bound: EventLogger) -> None:
        with self._lock:
            last = self._held.get(directory, (0.0, 0.0))[1]
            seconds = min(DISK_FULL_HOLD[1], last * 2) if last else DISK_FULL_HOLD[0]
            self._held[directory] = (self._clock() + seconds, seconds)
        bound.warning("spool.dir_held", seconds=seconds,
                      reason="disk full: this directory's other jobs wait in new/ until it is retried")

    def _peek(self, job_id: str) -> Path | None:
        if job_id not in self._peeked:
            raw = self.spool.peek_memory_dir(job_id, max_bytes=self.config.retention.max_job_bytes)
            try:
                self._peeked[job_id] = Path(os.path.realpath(raw)) if raw else None
            except (OSError, ValueError):  # e.g. a NUL in a hostile path: validation says so
                self._peeked[job_id] = None
        return self._peeked[job_id]

    def _forget_peeks(self, pending: list[str]) -> None:
        if len(self._peeked) > len(pending) + PEEK_SLACK:
            waiting = set(pending)
            for job_id in [j for j in self._peeked if j not in waiting]:
                del self._peeked[job_id]

    def stale_claims(self) -> None:
        """Jobs in cur/ this process does not know about go back to new/ (cannot normally
        happen under the single-instance lock; a safety net, never a silent loss)."""
        with self._lock:
            known = set(self.claimed)
        cur = self.spool.dir("cur")
        stale = [n[:-5] for n in os.listdir(cur) if n.endswith(".json") and not n.startswith(".")]
        stale = [j for j in stale if j not in known]
        moved = []
        for job_id in stale:
            with self._lock:
                if job_id in self.claimed:
                    continue
            # A job claimed after the snapshot may already be done: count real moves only.
            if self.spool.unclaim(job_id):
                moved.append(job_id)
        if moved:
            log.warning("spool.recovered", count=len(moved), reason="stale claims in cur/")
            self.invalidate_listing()
            self._hint_spool()

    def _validate(self, job_id: str) -> tuple[Job, int] | None:
        """A claimed job, validated, and its size; None when it was filed instead (refused:
        ``failed/``; unreadable: back to ``new/``)."""
        from memory.spool.jobs import validate_job

        cfg = self.config
        try:
            raw = self.spool.read(job_id, cfg.retention.max_job_bytes)
            job = validate_job(raw, roots=cfg.daemon.roots, max_bytes=cfg.retention.max_job_bytes)
        except PermanentError as exc:
            reason = str(exc)
            log.warning("job.rejected", job_id=job_id, reason=reason)
            self._finish(job_id, lambda: self.spool.fail(job_id, reason))
            self.counts.fail(job_id, reason)  # a refused job is a failed one: `once` and the summary count it
            return None
        except OSError as exc:
            log.error("job.error", job_id=job_id, error=f"cannot read job: {exc}")
            self._finish(job_id, lambda: self._unclaim(job_id))
            return None
        log.info("job.claimed", job_id=job_id, memory_dir=str(job.memory_dir), kind=job.kind, session_id=job.session_id)
        return job, len(raw)

    def _dispatch(self, job_id: str, *, followers: Callable[[Path], Iterator[str]] | None = None,
                  gone: set[str] | None = None) -> Path | None:
        """Validate a claimed job and queue it, with the group it leads when jobs of its
        directory are already waiting behind it (:meth:`_group`); its directory, or None if it
        was not queued."""
        found = self._validate(job_id)
        if found is None:
            return None
        job, size = found
        key = Path(job.memory_dir)
        members = [(job_id, job, size)]
        after: tuple[str, Job, int] | None = None
        if followers is not None and self._groups and job.kind in GROUPED_KINDS and not self.spool.attempted(job_id):
            after = self._group(members, followers(Path(os.path.realpath(key))), set() if gone is None else gone)
        if job.kind == "consolidate":  # a dream's work grows with its directory, not its job
            with contextlib.suppress(OSError):
                size += os.lstat(key / "manifest.json").st_size
                members[0] = (job_id, job, size)
        for unit in ([members] if after is None else [members, [after]]):
            if not self._submit(Path(unit[0][1].memory_dir), unit):
                return None
        return key

    def _group(
        self, members: list[tuple[str, Job, int]], candidates: Iterator[str], gone: set[str]
    ) -> tuple[str, Job, int] | None:
        """Claim the jobs already waiting in ``new/`` for the lead's directory into its group,
        oldest first, never waiting for more: up to :data:`GROUP_MAX_JOBS` jobs and
        :data:`GROUP_MAX_BYTES`, stopping at a job that ran before (it runs alone, after the
        group) and at a kind a group does not take (returned: it runs right after the group)."""
        total = members[0][2]
        for job_id in candidates:
            if len(members) >= GROUP_MAX_JOBS or self._stopping or self.spool.attempted(job_id):
                break
            with self._lock:
                if len(self.claimed) >= MAX_CLAIMED:
                    break
                self.claimed.add(job_id)
            gone.add(job_id)  # it leaves new/ (or was gone already): the listing drops it
            if self.spool.claim(job_id) is None:
                with self._lock:
                    self.claimed.discard(job_id)
                continue
            self._peeked.pop(job_id, None)
            found = self._validate(job_id)
            if found is None:
                continue
            job, size = found
            if job.memory_dir != members[0][1].memory_dir or job.kind not in GROUPED_KINDS or total + size > GROUP_MAX_BYTES:
                return job_id, job, size
            members.append((job_id, job, size))
            total += size
        return None

    def _submit(self, key: Path, members: list[tuple[str, Job, int]]) -> bool:
        daemon = self.config.daemon
        size = sum(m[2] for m in members)
        seconds = sum(budget_seconds(daemon.job_budget, daemon.job_budget_per_kib, m[2]) for m in members)
        job_id, job, _ = members[0]
        task = Task(key=key, run=lambda: None, label=job_id if len(members) == 1 else f"{job_id}+{len(members) - 1}",
                    payload=job, budget=seconds, job_ids=[m[0] for m in members])
        if len(members) == 1:
            task.run = lambda: self._run_job(job_id, job, task, size)
        else:
            task.run = lambda: self._run_group(members, task, size)
        if not self._pool.submit(task):
            for m in members:
                self._finish(m[0], functools.partial(self._unclaim, m[0]))
            return False
        return True

    def _finish(self, job_id: str, move: Callable[[], object]) -> None:
        try:
            move()
        except OSError as exc:
            log.error("spool.error", step="move", job_id=job_id, error=str(exc))
        finally:
            with self._lock:
                self.claimed.discard(job_id)

    def _unclaim(self, job_id: str) -> None:
        self.spool.unclaim(job_id)
        self.invalidate_listing()

    def requeue(self, job_id: str) -> None:
        """Put a claimed job back in ``new/`` (shutdown: the job never ran or did not finish)."""
        self._finish(job_id, lambda: self._unclaim(job_id))

    def _run_job(self, job_id: str, job: Job, task: Task, size: int) -> None:
        memory_dir = str(job.memory_dir)
        bound = log.bind(job_id=job_id, memory_dir=memory_dir, session_id=job.session_id)
        started = time.monotonic()
        if self._stopping and not self._once:
            self._finish(job_id, lambda: self._unclaim(job_id))
            return
        budget = Budget(task.budget, size)
        token = self._arm(budget.seconds, job_id, job, task, budget)
        outcome = ""
        error: Exception | None = None
        attach(budget)
        try:
            outcome = self._work.execute(job, self.ctx)
        except Exception as exc:
            error = exc
        finally:
            attach(None)
            self._deadlines.cancel(token)
        if not budget.finish():  # over budget: already in failed/, its directory moved on
            bound.info("job.overran_returned", elapsed_s=round(budget.elapsed(), 1),
                       error=f"{type(error).__name__}: {error}" if error else None)
            return
        try:
            if self._file(bound, job_id, job, error):
                self._finish(job_id, lambda: self.spool.complete(job_id))
                self._done(bound, job, outcome, started)
        finally:
            self._after_job(Path(job.memory_dir))

    def _run_group(self, members: list[tuple[str, Job, int]], task: Task, size: int) -> None:
        """A group commit (DESIGN §5): the jobs run one after another over what the ones before
        them staged and commit together (:func:`dreamd.jobs.work.execute_group`); each is then
        filed by its own outcome, and the finished ones reach ``done/`` with one fsync. The
        group has one budget, the sum of its jobs'; when it runs out, the job running then goes
        to ``failed/`` and the others back to ``new/`` (nothing of the group was committed)."""
        jobs = [m[1] for m in members]
        memory_dir = str(jobs[0].memory_dir)
        started = time.monotonic()
        if self._stopping and not self._once:
            for job_id, _, _ in members:
                self._finish(job_id, functools.partial(self._unclaim, job_id))
            return
        budget = Budget(task.budget, size)
        now = [0]
        token = self._deadlines.add(budget.seconds, lambda: self._group_over_budget(members, task, budget, now))
        outcomes: list[str | Exception] = []
        attach(budget)
        try:
            execute_group = self._work.execute_group  # type: ignore[attr-defined]
            outcomes = execute_group(jobs, self.ctx, running=lambda i: now.__setitem__(0, i))
        except Exception as exc:
            outcomes = [exc] * len(jobs)
        finally:
            attach(None)
            self._deadlines.cancel(token)
        if not budget.finish():
            log.info("job.overran_returned", job_id=members[now[0]][0], memory_dir=memory_dir,
                     elapsed_s=round(budget.elapsed(), 1), group=len(members))
            return
        done: list[tuple[str, Job, str]] = []
        try:
            for (job_id, job, _), outcome in zip(members, outcomes, strict=True):
                bound = log.bind(job_id=job_id, memory_dir=memory_dir, session_id=job.session_id)
                if self._file(bound, job_id, job, outcome if isinstance(outcome, Exception) else None):
                    done.append((job_id, job, str(outcome)))
            if done:
                ids = [d[0] for d in done]
                try:
                    self.spool.complete_all(ids)
                except OSError as exc:
                    log.error("spool.error", step="move", job_id=ids[0], error=str(exc), group=len(ids))
                finally:
                    with self._lock:
                        self.claimed.difference_update(ids)
                for job_id, job, outcome in done:
                    self._done(log.bind(job_id=job_id, memory_dir=memory_dir, session_id=job.session_id),
                               job, outcome, started, group=len(members))
        finally:
            self._after_job(Path(memory_dir))

    def _done(self, bound: EventLogger, job: Job, outcome: str, started: float, *, group: int = 0) -> None:
        self.counts.done += 1
        if self._held:
            with self._lock:
                self._held.pop(Path(job.memory_dir), None)
        extra = {"group": group} if group else {}
        bound.info("job.done", outcome=outcome, duration_ms=round((time.monotonic() - started) * 1000, 1), **extra)

    def _file(self, bound: EventLogger, job_id: str, job: Job, error: Exception | None) -> bool:
        """File a job that failed by its error class (DESIGN §5); True when it succeeded and
        is the caller's to move to ``done/``."""
        memory_dir = str(job.memory_dir)
        try:
            if error is not None:
                raise error
        except TransientError as exc:  # LockTimeout is one
            self._defer(bound, job_id, str(exc))
        except PermanentError as exc:
            reason = str(exc)
            bound.warning("job.failed", reason=reason)
            self._finish(job_id, lambda: self.spool.fail(job_id, reason))
            self.counts.fail(job_id, reason)
        except ConflictError as exc:  # a group's change that no longer applied, if its retry raised it
            self._defer(bound, job_id, f"conflict: {exc}")
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                bound.error("job.error", error=f"{type(exc).__name__}: {exc}", exc_info=True)
                self._defer(bound, job_id, f"{type(exc).__name__}: {exc}")
            else:  # the job is not at fault: a clear reason, no traceback
                self._defer(bound, job_id, f"disk full in {memory_dir}: {exc.strerror}", counted=False)
                self._hold(Path(job.memory_dir), bound)
        except Exception as exc:
            bound.error("job.error", error=f"{type(exc).__name__}: {exc}", exc_info=True)
            self._defer(bound, job_id, f"{type(exc).__name__}: {exc}")
        else:
            return True
        return False

    def _group_over_budget(self, members: list[tuple[str, Job, int]], task: Task, budget: Budget, now: list[int]) -> None:
        """A group's budget ran out: the job running then is filed in ``failed/``, the others go
        back to ``new/`` (the commit guard keeps the abandoned thread from committing any of
        them), and the directory goes to a fresh worker."""
        if not budget.abandon():
            if budget.in_commit:
                self._deadlines.add(COMMIT_RECHECK, lambda: self._group_over_budget(members, task, budget, now))
            return
        self._pool.abandon(task)
        reason = budget.reason()
        culprit = members[min(now[0], len(members) - 1)]
        log.warning("job.over_budget", job_id=culprit[0], memory_dir=str(culprit[1].memory_dir),
                    session_id=culprit[1].session_id, budget_s=round(budget.seconds, 1),
                    size_bytes=budget.size_bytes, reason=reason, group=len(members))
        self._finish(culprit[0], lambda: self.spool.fail(culprit[0], reason))
        self.counts.fail(culprit[0], reason)
        for job_id, _, _ in members:
            if job_id != culprit[0]:
                self._finish(job_id, functools.partial(self._unclaim, job_id))
        try:
            self._after_job(Path(culprit[1].memory_dir))
        finally:
            self._hint_spool()

    def _arm(self, seconds: float, job_id: str, job: Job, task: Task, budget: Budget) -> int:
        return self._deadlines.add(seconds, lambda: self._over_budget(job_id, job, task, budget))

    def _over_budget(self, job_id: str, job: Job, task: Task, budget: Budget) -> None:
        """A job's budget ran out: file it in ``failed/`` and give its directory to a fresh
        worker (:mod:`dreamd.jobs.budget`). A job in the middle of a commit is looked at again
        a moment later; one that finished meanwhile is left alone."""
        if not budget.abandon():
            if budget.in_commit:
                self._arm(COMMIT_RECHECK, job_id, job, task, budget)
            return
        self._pool.abandon(task)
        reason = budget.reason()
        log.warning("job.over_budget", job_id=job_id, memory_dir=str(job.memory_dir), session_id=job.session_id,
                    budget_s=round(budget.seconds, 1), size_bytes=budget.size_bytes, reason=reason)
        self._finish(job_id, lambda: self.spool.fail(job_id, reason))
        self.counts.fail(job_id, reason)
        try:
            self._after_job(Path(job.memory_dir))
        finally:
            self._hint_spool()

    def _defer(self, bound: EventLogger, job_id: str, error: str, *, counted: bool = True) -> None:
        result: list[str] = []

        def move() -> None:
            result.append(self.spool.defer(job_id, error, counted=counted))

        self._finish(job_id, move)
        if result and result[0] == "failed":
            reason = f"gave up after max attempts: {error}"
            self.counts.fail(job_id, reason)
            bound.warning("job.failed", reason=reason)
        else:
            self.counts.deferred += 1
            bound.info("job.deferred", error=error, attempt=self.spool.attempts(job_id))
