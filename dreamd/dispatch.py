"""Dispatch: what the daemon does with spool jobs and memory directories.

:class:`Dispatch` is the half of :class:`dreamd.daemon.Daemon` that turns hints into work for
the :class:`~dreamd.worker_pool.WorkerPool`; the other half (``dreamd/daemon.py``) owns the
lifecycle, the tick, supervision and signals.

* Spool jobs: claim (``new/`` → ``cur/``, the claim recorded *before* the rename so ``cur/``
  never holds a claim this process does not know), validate, queue under the job's memory
  directory, run through ``dreamd.work.execute`` and move to ``done/``, ``deferred/`` or
  ``failed/`` by the error class: TransientError/LockTimeout → defer, PermanentError → fail,
  anything else → logged with its traceback and deferred (the spool fails it after
  ``max_attempts``).
* Memory directories: a (debounced) change whose stat fingerprint differs from the one we
  recorded after our own last write is reconciled; after every write the gates get a look,
  subject to the scan throttle; a directory whose gates are all open dreams.
"""

from __future__ import annotations

import errno
import os
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dreamd.config import Config
from dreamd.gates import GateTracker, ScanThrottle, evaluate, read_last_scan, record_scan
from dreamd.logs import get_logger
from dreamd.watch import Debouncer, Watcher, fingerprint
from dreamd.work import Context
from dreamd.worker_pool import Task, WorkerPool
from memory.errors import PermanentError, TransientError
from memory.jobs import Job
from memory.spool import Spool

__all__ = ["MAX_CLAIMED", "Dispatch"]

log = get_logger("dreamd.daemon")

MAX_CLAIMED = 256
"""A backstop on claimed-but-not-finished jobs (normally at most one per worker)."""
PEEK_SLACK = 1024
"""Cached job directories of jobs no longer in new/ are dropped past this many."""


class DreamBackoff:
    """After a dream whose plan was refused (bad or truncated answer, model outage, a
    misconfigured model, lost lease), wait before planning that directory again: 1 min,
    doubling, capped at an hour.
    A conflict is not penalised (re-planning at the next tick is the protocol); an applied or
    empty dream clears the penalty."""

    PENALISED = frozenset({"rejected", "transient", "misconfigured", "lease-lost"})

    def __init__(self, first: float = 60.0, cap: float = 3600.0) -> None:
        self.first, self.cap = first, cap
        self._state: dict[Path, tuple[int, float]] = {}

    def remaining(self, directory: Path, now: float) -> float:
        not_before = self._state.get(directory, (0, 0.0))[1]
        return max(0.0, not_before - now)

    def record(self, directory: Path, status: str, now: float) -> float:
        if status in ("applied", "nothing"):
            self._state.pop(directory, None)
            return 0.0
        if status not in self.PENALISED:
            return 0.0
        failures = self._state.get(directory, (0, 0.0))[0] + 1
        delay = float(min(self.first * 2.0 ** (failures - 1), self.cap))
        self._state[directory] = (failures, now + delay)
        return delay


class Dispatch:
    """Mixin: the daemon's job and directory handling (state lives on the Daemon)."""

    config: Config
    work: Any
    ctx: Context
    spool: Spool
    pool: WorkerPool
    watcher: Watcher | None
    spool_debounce: Debouncer
    dir_debounce: Debouncer
    throttle: ScanThrottle
    tracker: GateTracker
    managed: set[Path]
    unmanaged_seen: set[Path]
    fingerprints: dict[Path, Any]
    scans_queued: set[Path]
    reconciles_queued: set[Path]
    claimed: set[str]
    stats: Any
    wall: Callable[[], Any]
    _state_lock: threading.Lock
    _roots_lock: threading.Lock
    _stopping: bool
    _once: bool
    dream_backoff: DreamBackoff
    peeked: dict[str, Path | None]
    scan_previous: dict[Path, Any]
    _scan_lock: threading.Lock

    def hint_spool(self) -> None:
        raise NotImplementedError

    def hint_dir(self, directory: Path) -> None:
        raise NotImplementedError

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
        try:
            pending = self.spool.pending()
        except OSError as exc:
            log.error("spool.error", step="list", error=str(exc))
            return 0
        self._forget_peeks(pending)
        queued = 0
        taken: set[Path] = set()
        free = self.pool.free_slots()
        busy = self.pool.keys()
        with self._state_lock:
            claimed = set(self.claimed)
        for job_id in pending:
            if self._stopping or queued >= free:
                break
            if job_id in claimed:
                continue
            target = self._peek(job_id)
            if target is not None and (target in taken or target in busy):
                continue
            with self._state_lock:
                if len(self.claimed) >= MAX_CLAIMED:
                    break
                self.claimed.add(job_id)  # before the rename, so cur/ never holds an unknown claim
            if self._stopping or self.spool.claim(job_id) is None:
                with self._state_lock:
                    self.claimed.discard(job_id)
                continue
            self.peeked.pop(job_id, None)
            key = self._dispatch(job_id)
            if key is not None:
                queued += 1
                taken.add(key)
        return queued

    def _peek(self, job_id: str) -> Path | None:
        if job_id not in self.peeked:
            raw = self.spool.peek_memory_dir(job_id, max_bytes=self.config.retention.max_job_bytes)
            try:
                self.peeked[job_id] = Path(os.path.realpath(raw)) if raw else None
            except (OSError, ValueError):  # e.g. a NUL in a hostile path: validation says so
                self.peeked[job_id] = None
        return self.peeked[job_id]

    def _forget_peeks(self, pending: list[str]) -> None:
        if len(self.peeked) > len(pending) + PEEK_SLACK:
            waiting = set(pending)
            for job_id in [j for j in self.peeked if j not in waiting]:
                del self.peeked[job_id]

    def _stale_claims(self) -> None:
        """Jobs in cur/ this process does not know about go back to new/ (cannot normally
        happen under the single-instance lock; a safety net, never a silent loss)."""
        with self._state_lock:
            known = set(self.claimed)
        cur = self.spool.dir("cur")
        stale = [n[:-5] for n in os.listdir(cur) if n.endswith(".json") and not n.startswith(".")]
        stale = [j for j in stale if j not in known]
        moved = []
        for job_id in stale:
            with self._state_lock:
                if job_id in self.claimed:
                    continue
            # A job claimed after the snapshot may already be done: count real moves only.
            if self.spool.unclaim(job_id):
                moved.append(job_id)
        if moved:
            log.warning("spool.recovered", count=len(moved), reason="stale claims in cur/")
            self.hint_spool()

    def _dispatch(self, job_id: str) -> Path | None:
        """Validate a claimed job and queue it; its directory, or None if it was not queued."""
        from memory.jobs import validate_job

        cfg = self.config
        try:
            raw = self.spool.read(job_id, cfg.retention.max_job_bytes)
            job = validate_job(raw, roots=cfg.daemon.roots, max_bytes=cfg.retention.max_job_bytes)
        except PermanentError as exc:
            reason = str(exc)
            log.warning("job.rejected", job_id=job_id, reason=reason)
            self._finish(job_id, lambda: self.spool.fail(job_id, reason))
            return None
        except OSError as exc:
            log.error("job.error", job_id=job_id, error=f"cannot read job: {exc}")
            self._finish(job_id, lambda: self._unclaim(job_id))
            return None
        key = Path(job.memory_dir)
        log.info("job.claimed", job_id=job_id, memory_dir=str(key), kind=job.kind, session_id=job.session_id)
        task = Task(key=key, run=lambda: self._run_job(job_id, job), label=job_id, payload=job)
        if not self.pool.submit(task):
            self._finish(job_id, lambda: self._unclaim(job_id))
            return None
        return key

    def _finish(self, job_id: str, move: Callable[[], object]) -> None:
        try:
            move()
        except OSError as exc:
            log.error("spool.error", step="move", job_id=job_id, error=str(exc))
        finally:
            with self._state_lock:
                self.claimed.discard(job_id)

    def _unclaim(self, job_id: str) -> None:
        self.spool.unclaim(job_id)

    def _requeue(self, job_id: str) -> None:
        self._finish(job_id, lambda: self._unclaim(job_id))

    def _run_job(self, job_id: str, job: Job) -> None:
        memory_dir = str(job.memory_dir)
        bound = log.bind(job_id=job_id, memory_dir=memory_dir, session_id=job.session_id)
        started = time.monotonic()
        if self._stopping and not self._once:
            self._finish(job_id, lambda: self._unclaim(job_id))
            return
        try:
            outcome = self.work.execute(job, self.ctx)
        except TransientError as exc:  # LockTimeout is one
            self._defer(bound, job_id, str(exc))
        except PermanentError as exc:
            reason = str(exc)
            bound.warning("job.failed", reason=reason)
            self._finish(job_id, lambda: self.spool.fail(job_id, reason))
            self.stats.jobs_failed += 1
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                bound.error("job.error", error=f"{type(exc).__name__}: {exc}", exc_info=True)
                self._defer(bound, job_id, f"{type(exc).__name__}: {exc}")
            else:  # the job is not at fault: a clear reason, no traceback
                self._defer(bound, job_id, f"disk full in {memory_dir}: {exc.strerror}")
        except Exception as exc:
            bound.error("job.error", error=f"{type(exc).__name__}: {exc}", exc_info=True)
            self._defer(bound, job_id, f"{type(exc).__name__}: {exc}")
        else:
            self._finish(job_id, lambda: self.spool.complete(job_id))
            self.stats.jobs_done += 1
            bound.info("job.done", outcome=outcome, duration_ms=round((time.monotonic() - started) * 1000, 1))
        finally:
            self._after_write(Path(job.memory_dir))

    def _defer(self, bound: Any, job_id: str, error: str) -> None:
        result: list[str] = []

        def move() -> None:
            result.append(self.spool.defer(job_id, error))

        self._finish(job_id, move)
        if result and result[0] == "failed":
            self.stats.jobs_failed += 1
            bound.warning("job.failed", reason=f"gave up after max attempts: {error}")
        else:
            self.stats.jobs_deferred += 1
            bound.info("job.deferred", error=error, attempt=self.spool.attempts(job_id))

    def _task_crashed(self, task: Task, exc: BaseException) -> None:
        log.error("job.error", job_id=task.label, error=f"{type(exc).__name__}: {exc}",
                  traceback="".join(traceback.format_exception_only(type(exc), exc)).strip())

    # ------------------------------------------------------------------ memory directories

    def _after_write(self, directory: Path) -> None:
        """Remember the directory as we left it (our own events are then recognised) and
        let the gates look at it (subject to the scan throttle). A directory a job just took
        under management (Claude Code's auto-memory on first use) is watched from now on, not
        from the next tick."""
        if not self._once and directory not in self.managed and (directory / "manifest.json").is_file():
            self.rescan_roots()
        if directory in self.managed or (self._once and (directory / "manifest.json").is_file()):
            self.fingerprints[directory] = fingerprint(directory)
            if self.throttle.hint(directory):
                self._queue_scan(directory)

    def _queue_reconcile(self, directory: Path) -> None:
        with self._state_lock:
            if directory in self.reconciles_queued:
                return
            self.reconciles_queued.add(directory)
        self.pool.submit(Task(key=directory, run=lambda: self._reconcile(directory), label=f"reconcile:{directory}"))

    def maybe_reconcile(self, directory: Path) -> None:
        if directory not in self.managed:
            return
        if fingerprint(directory) == self.fingerprints.get(directory, ()):
            return  # our own writes, or a change already reconciled
        self._queue_reconcile(directory)

    def _reconcile(self, directory: Path) -> None:
        with self._state_lock:
            self.reconciles_queued.discard(directory)
        try:
            report = self.ctx.store(directory).reconcile()
        except Exception as exc:
            log.warning("reconcile.error", memory_dir=str(directory), error=f"{type(exc).__name__}: {exc}")
            return
        finally:
            self.fingerprints[directory] = fingerprint(directory)
        if report.changed or report.index_rebuilt:
            log.info(
                "reconcile.done",
                memory_dir=str(directory),
                generation=report.generation,
                adopted=report.adopted,
                updated=report.updated,
                dropped=report.dropped,
                malformed=len(report.malformed),
            )
        if report.changed and self.throttle.hint(directory):
            self._queue_scan(directory)

    def _queue_scan(self, directory: Path, *, final: bool = False) -> None:
        """Queue a gate scan. ``dreamd once`` dreams only after the spool is drained (its
        final pass), so a dream never plans over a half-applied batch."""
        if self._once and not final:
            return
        with self._state_lock:
            if directory in self.scans_queued or self._stopping:
                return
            self.scans_queued.add(directory)
        # The throttle approved this scan now: that is the time the scan gate and dreamd status
        # count from. The gate of this scan itself is judged on the scan before it.
        self.scan_previous[directory] = None if self._once else read_last_scan(directory)
        try:
            record_scan(directory, self.wall())
        except OSError as exc:
            log.warning("gate.error", memory_dir=str(directory), error=f"cannot record the scan: {exc}")
        self.pool.submit(Task(key=directory, run=lambda: self._scan(directory), label=f"scan:{directory}"))

    def _scan(self, directory: Path) -> None:
        """Evaluate the gates for one directory and dream when they are all open."""
        with self._state_lock:
            self.scans_queued.discard(directory)
        if self._stopping and not self._once:
            return
        # ``dreamd once`` is an explicit request: its final pass is a scan whatever the window.
        previous = self.scan_previous.pop(directory, None)
        now = self.wall()
        try:
            state = self.work.dir_state(directory, self.ctx, last_scan_at=previous)
        except Exception as exc:
            log.warning("gate.error", memory_dir=str(directory), error=f"{type(exc).__name__}: {exc}")
            return
        decision = evaluate(state, self.config.gates, now)
        self.tracker.observe(str(directory), decision)
        if not decision.open:
            return
        wait = self.dream_backoff.remaining(directory, time.monotonic())
        if wait > 0:
            return  # the last dream's answer was refused: do not burn the model on every scan
        started = time.monotonic()
        from dreamd.team_lease import team_dream_lease

        try:
            with team_dream_lease(directory, self.config) as busy:
                if busy is not None:  # another machine of the team is dreaming this directory
                    log.info("dream.lease_busy", memory_dir=str(directory), reason=f"team lease held by {busy.holder}")
                    return
                result = self.work.dream(directory, self.ctx)
        except Exception as exc:
            log.error("dream.error", memory_dir=str(directory), error=f"{type(exc).__name__}: {exc}", exc_info=True)
            return
        finally:
            self.fingerprints[directory] = fingerprint(directory)
        self.stats.dreams += 1
        delay = self.dream_backoff.record(directory, result.status, time.monotonic())
        if delay:
            log.warning("dream.backoff", memory_dir=str(directory), status=result.status, retry_in_s=round(delay))
        self.stats.last_dream = f"{directory.name or directory} {result.status} at {self.wall():%H:%M}Z"
        log.info(
            "dream.finished",
            memory_dir=str(directory),
            status=result.status,
            reason=getattr(result, "reason", None),
            generation=getattr(result, "generation", None),
            duration_ms=round((time.monotonic() - started) * 1000, 1),
        )

    def rescan_roots(self) -> None:
        """Glob the roots again: start watching new managed directories, drop vanished ones."""
        from memory.jobs import expand_roots

        with self._roots_lock:
            found = expand_roots(self.config.daemon.roots)
            managed = {d for d in found if (d / "manifest.json").is_file()}
            for d in found:
                if d not in managed and d not in self.unmanaged_seen and any(d.glob("*.md")):
                    self.unmanaged_seen.add(d)
                    log.info("watch.unmanaged", memory_dir=str(d))
            added = sorted(managed - self.managed)
            removed = sorted(self.managed - managed)
            self.managed = managed
            if self.watcher is not None:
                self.watcher.set_dirs(managed)
        for d in removed:
            self.fingerprints.pop(d, None)
            self.throttle.forget(d)
            self.tracker.forget(str(d))
            log.info("watch.removed", memory_dir=str(d))
        for d in added:
            log.info("watch.added", memory_dir=str(d))
            self._queue_reconcile(d)  # start-up / adoption: take in what changed while away

    def _check_fingerprints(self) -> None:
        """The timer side of "events are hints": a change whose event was lost is reconciled
        at the next tick. Queued directly (a tick is already longer than the debounce);
        hinting the debouncer every tick would keep postponing its trailing edge."""
        for d in list(self.managed):
            if not self.pool.has_key(d):
                self.maybe_reconcile(d)

    def _gate_scans(self) -> None:
        for d in sorted(self.managed):
            if self.throttle.hint(d):
                self._queue_scan(d)
        for key in self.throttle.due():
            if isinstance(key, Path) and key in self.managed:
                self._queue_scan(key)
