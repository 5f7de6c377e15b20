"""The daemon's managed memory directories: which exist, what changed, when to dream.

:class:`DirectoryKeeper` is the daemon's collaborator for everything keyed by a memory
directory rather than by a spool job (:mod:`dreamd.daemon.dispatch` runs the jobs):

* Roots: the configured globs are expanded again on every tick (and after a job takes a new
  directory under management); new managed directories are watched and reconciled once
  (start-up, adoption), vanished ones forgotten.
* Reconcile: a (debounced) change whose stat fingerprint differs from the one recorded after
  our own last write there is reconciled through the store, so the events our own commits
  cause are recognised however late they arrive. The recorded fingerprint holds only what was
  there before the work or what the manifest explains (:func:`dreamd.daemon.watch.settled_fingerprint`),
  so a write landing between a commit and the fingerprint is reconciled at the next scan.
* Gates and dreams: after every write the gates get a look, subject to the scan throttle
  (whose time is recorded in the directory, so ``dreamd status`` and a restarted daemon see
  the same window); a directory whose gates are all open dreams under the team lease; a
  dream whose plan was refused backs off (:class:`DreamBackoff`).

Every piece of work goes through the :class:`~dreamd.daemon.pool.WorkerPool` keyed by the
directory, so a directory's jobs, reconciles, scans and dreams never overlap.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Generic

from dreamd.config import Config
from dreamd.daemon.pool import Task, WorkerPool
from dreamd.daemon.watch import Fingerprint, fingerprint, settled_fingerprint
from dreamd.jobs.gates import GateTracker, ScanThrottle, evaluate, read_last_scan, record_scan
from dreamd.jobs.protocol import C, Work
from dreamd.logs import get_logger

__all__ = ["DirectoryKeeper", "DreamBackoff"]

log = get_logger("dreamd.daemon")


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


class DirectoryKeeper(Generic[C]):
    """Roots, reconciles, gate scans and dreams of the daemon's managed directories.

    ``watch_dirs`` is called with the managed set whenever it is recomputed (the daemon points
    its watcher at it); ``once`` is ``dreamd once``: no roots rescans after a job, and a gate
    scan only on the final pass (:meth:`queue_scan` with ``final=True``), so a dream never
    plans over a half-applied batch of jobs.
    """

    def __init__(
        self,
        *,
        config: Config,
        ctx: C,
        work: Work[C],
        pool: WorkerPool,
        clock: Callable[[], float],
        wall: Callable[[], datetime],
        watch_dirs: Callable[[set[Path]], None],
        once: bool = False,
    ) -> None:
        self.config = config
        self.ctx = ctx
        self._work = work
        self._pool = pool
        self._wall = wall
        self._watch_dirs = watch_dirs
        self._once = once
        self._stopping = False
        self.throttle = ScanThrottle(config.gates.scan_throttle, clock, seed=self._scanned_ago)
        self.tracker = GateTracker(log)
        self.dream_backoff = DreamBackoff()
        self.managed: set[Path] = set()
        """Directories under the roots that hold a manifest (replaced whole on every rescan)."""
        self.dreams = 0
        self.last_dream: str | None = None
        """``<dir> <status> at HH:MMZ`` of the last dream, for the service manager's status line."""
        self._unmanaged_seen: set[Path] = set()
        self._fingerprints: dict[Path, Fingerprint | None] = {}
        self._scans_queued: set[Path] = set()
        self._reconciles_queued: set[Path] = set()
        self._scan_previous: dict[Path, datetime | None] = {}
        self._lock = threading.Lock()
        self._roots_lock = threading.Lock()

    def reconfigure(self, config: Config, ctx: C) -> None:
        """Take a reloaded config (and the context built from it) from the next task on."""
        self.config = config
        self.ctx = ctx
        self.throttle.window = config.gates.scan_throttle

    def stop(self) -> None:
        """Queue no more scans; queued ones return without dreaming (not in ``dreamd once``)."""
        self._stopping = True

    def _scanned_ago(self, key: object) -> float | None:
        """Seconds since an earlier process recorded a gate scan of ``key`` (the throttle's seed)."""
        last = read_last_scan(key) if isinstance(key, Path) else None
        return None if last is None else (self._wall() - last).total_seconds()

    # ------------------------------------------------------------------ after a write

    def after_write(self, directory: Path) -> None:
        """Remember the directory as we left it (our own events are then recognised) and
        let the gates look at it (subject to the scan throttle). A directory a job just took
        under management (Claude Code's auto-memory on first use) is watched from now on, not
        from the next tick."""
        if not self._once and directory not in self.managed and (directory / "manifest.json").is_file():
            self.rescan_roots()
        if directory in self.managed or (self._once and (directory / "manifest.json").is_file()):
            self._settle(directory)
            if self.throttle.hint(directory):
                self.queue_scan(directory)

    def _settle(self, directory: Path, trusted: Fingerprint | None = None, *, trust_index: bool = False) -> None:
        """Remember the directory as our work left it, so the events it caused are recognised
        as ours, but never absorb a write someone else made after our commit point: what is
        neither ``trusted`` (by default the fingerprint remembered before the work) nor what
        the manifest says is left out (:func:`dreamd.daemon.watch.settled_fingerprint`), and the next
        scan reconciles it."""
        if trusted is None:
            trusted = self._fingerprints.get(directory) or frozenset()
        store = self.ctx.store(directory)
        self._fingerprints[directory] = settled_fingerprint(directory, trusted, store.snapshot, trust_index=trust_index)

    # ------------------------------------------------------------------ reconcile

    def _queue_reconcile(self, directory: Path) -> None:
        with self._lock:
            if directory in self._reconciles_queued:
                return
            self._reconciles_queued.add(directory)
        self._pool.submit(Task(key=directory, run=lambda: self._reconcile(directory), label=f"reconcile:{directory}"))

    def maybe_reconcile(self, directory: Path) -> None:
        """Reconcile ``directory`` unless it is as we (or the last reconcile) left it."""
        if directory not in self.managed:
            return
        if fingerprint(directory) == self._fingerprints.get(directory, ()):
            return  # our own writes, or a change already reconciled
        self._queue_reconcile(directory)

    def _reconcile(self, directory: Path) -> None:
        with self._lock:
            self._reconciles_queued.discard(directory)
        seen = fingerprint(directory) or frozenset()  # what this reconcile judges
        try:
            report = self.ctx.store(directory).reconcile()
        except Exception as exc:
            log.warning("reconcile.error", memory_dir=str(directory), error=f"{type(exc).__name__}: {exc}")
            return
        finally:
            self._settle(directory, seen, trust_index=True)
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
            self.queue_scan(directory)

    # ------------------------------------------------------------------ gates and dreams

    def queue_scan(self, directory: Path, *, final: bool = False) -> None:
        """Queue a gate scan. ``dreamd once`` dreams only after the spool is drained (its
        final pass), so a dream never plans over a half-applied batch."""
        if self._once and not final:
            return
        with self._lock:
            if directory in self._scans_queued or self._stopping:
                return
            self._scans_queued.add(directory)
        # The throttle approved this scan now: that is the time the scan gate and dreamd status
        # count from. The gate of this scan itself is judged on the scan before it.
        self._scan_previous[directory] = None if self._once else read_last_scan(directory)
        try:
            record_scan(directory, self._wall())
        except OSError as exc:
            log.warning("gate.error", memory_dir=str(directory), error=f"cannot record the scan: {exc}")
        self._pool.submit(Task(key=directory, run=lambda: self.scan(directory), label=f"scan:{directory}"))

    def scan(self, directory: Path) -> None:
        """Evaluate the gates for one directory and dream when they are all open (a worker
        task: run it through :meth:`queue_scan`, or directly where no worker holds the
        directory)."""
        with self._lock:
            self._scans_queued.discard(directory)
        if self._stopping and not self._once:
            return
        # ``dreamd once`` is an explicit request: its final pass is a scan whatever the window.
        previous = self._scan_previous.pop(directory, None)
        now = self._wall()
        try:
            state = self._work.dir_state(directory, self.ctx, last_scan_at=previous)
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
        try:
            result = self._work.dream(directory, self.ctx)  # the team lease of a synced one included
        except Exception as exc:
            log.error("dream.error", memory_dir=str(directory), error=f"{type(exc).__name__}: {exc}", exc_info=True)
            return
        finally:
            self._settle(directory)
        self.dreams += 1
        delay = self.dream_backoff.record(directory, result.status, time.monotonic())
        if delay:
            log.warning("dream.backoff", memory_dir=str(directory), status=result.status, retry_in_s=round(delay))
        self.last_dream = f"{directory.name or directory} {result.status} at {self._wall():%H:%M}Z"
        log.info(
            "dream.finished",
            memory_dir=str(directory),
            status=result.status,
            reason=result.reason,
            generation=result.generation,
            duration_ms=round((time.monotonic() - started) * 1000, 1),
        )

    # ------------------------------------------------------------------ the tick's steps

    def rescan_roots(self) -> None:
        """Glob the roots again: start watching new managed directories, drop vanished ones."""
        from memory.roots import expand_roots

        with self._roots_lock:
            found = expand_roots(self.config.daemon.roots)
            managed = {d for d in found if (d / "manifest.json").is_file()}
            for d in found:
                if d not in managed and d not in self._unmanaged_seen and any(d.glob("*.md")):
                    self._unmanaged_seen.add(d)
                    log.info("watch.unmanaged", memory_dir=str(d))
            added = sorted(managed - self.managed)
            removed = sorted(self.managed - managed)
            self.managed = managed
            self._watch_dirs(managed)
        for d in removed:
            self._fingerprints.pop(d, None)
            self.throttle.forget(d)
            self.tracker.forget(str(d))
            log.info("watch.removed", memory_dir=str(d))
        for d in added:
            log.info("watch.added", memory_dir=str(d))
            self._queue_reconcile(d)  # start-up / adoption: take in what changed while away

    def check_fingerprints(self) -> None:
        """The timer side of "events are hints": a change whose event was lost is reconciled
        at the next tick. Queued directly (a tick is already longer than the debounce);
        hinting the debouncer every tick would keep postponing its trailing edge."""
        for d in list(self.managed):
            if not self._pool.has_key(d):
                self.maybe_reconcile(d)

    def gate_scans(self) -> None:
        """A scan for every directory whose throttle window allows one, and for every hint the
        throttle held back whose window has now passed."""
        for d in sorted(self.managed):
            if self.throttle.hint(d):
                self.queue_scan(d)
        for key in self.throttle.due():
            if isinstance(key, Path) and key in self.managed:
                self.queue_scan(key)
