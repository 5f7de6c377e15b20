"""The daemon's sync tick: queue a sync task through the worker pool for every managed
directory :class:`dreamd.sync.daemon.SyncPlanner` says is due, one at a time per directory like
its jobs and dreams, and log how each ended (``sync.done`` / ``sync.failed``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path

from dreamd.config import SyncConfig
from dreamd.daemon.pool import Task, WorkerPool
from dreamd.logs import get_logger
from dreamd.sync.daemon import SyncPlanner, remote_for, wants_sync
from dreamd.sync.flow import backoff_seconds, is_attached, sync
from memory.errors import DreamdError
from memory.store.transaction import MemoryStore

__all__ = ["queue_due_syncs"]


def queue_due_syncs(
    cfg: SyncConfig,
    managed: Iterable[Path],
    pool: WorkerPool,
    planner: SyncPlanner,
    clock: Callable[[], float],
) -> list[Path]:
    """The daemon's tick step: queue a sync task for every due directory of ``managed`` (one
    at a time per directory, like its jobs and dreams, through the worker pool). ``planner``
    lives as long as the daemon: it is what remembers each directory's last attempt."""
    if not cfg.dirs and not cfg.remotes:
        return []
    log = get_logger("dreamd.sync")
    queued: list[Path] = []
    for directory in sorted(managed):
        if not wants_sync(directory, cfg.dirs, cfg.remotes) or f"sync:{directory}" in pool.labels():
            continue
        try:
            generation = MemoryStore(directory).read().generation
        except DreamdError:
            continue
        now = clock()
        reason = planner.due(directory, generation=generation, now=now, interval=cfg.interval,
                             push_after_commit=cfg.push_after_commit, debounce=cfg.debounce,
                             max_backoff=cfg.max_backoff)
        if reason is None:
            continue

        def run(directory: Path = directory, reason: str = reason) -> None:
            t0 = time.monotonic()
            try:
                url = None if is_attached(directory) else remote_for(directory, cfg.remotes)
                report = sync(directory, remote=url)
            except Exception as exc:  # recorded, so the next attempt waits for its backoff
                planner.record(directory, ok=False, generation=None, now=clock())
                st = planner.dirs[directory]
                error = str(exc) if isinstance(exc, DreamdError) else f"{type(exc).__name__}: {exc}"
                log.warning("sync.failed", memory_dir=str(directory), reason=reason, error=error,
                            failures=st.failures, retry_in_s=backoff_seconds(st.failures, cap=cfg.max_backoff))
                return
            planner.record(directory, ok=True, generation=report.generation, now=clock())
            log.info("sync.done", memory_dir=str(directory), reason=reason, generation=report.generation,
                     merged=report.merged, pushed=report.pushed, commits=report.commits_created,
                     duration_ms=round((time.monotonic() - t0) * 1000, 1))

        if pool.submit(Task(key=directory, run=run, label=f"sync:{directory}")):
            queued.append(directory)
    return queued
