"""The daemon's side of sync: which directories ``[sync]`` covers, when each is due, and the tick
step that queues their syncs through the worker pool (one task at a time per directory, like
its jobs and dreams), with backoff while a remote keeps failing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dreamd.sync.flow import backoff_seconds, is_attached, sync
from memory.errors import DreamdError
from memory.store.transaction import MemoryStore

if TYPE_CHECKING:
    from dreamd.config import SyncConfig
    from dreamd.daemon.pool import WorkerPool


@dataclass
class _DirSync:
    last_attempt: float | None = None
    failures: int = 0
    synced_generation: int | None = None
    changed_at: float | None = None
    """When a local generation newer than the last synced one was first seen."""


class SyncPlanner:
    """Which synced directories are due, over a monotonic clock (pure; no I/O but what it is given).

    Due when ``interval`` passed since the last attempt, or (``push_after_commit``) a local
    generation newer than the last synced one has been quiet for ``debounce``. After failures the
    next attempt waits ``backoff_seconds`` (30 s doubling, capped at ``max_backoff``) whatever
    else happens, so an unreachable remote is retried with backoff and never hammered.
    """

    def __init__(self) -> None:
        self.dirs: dict[Path, _DirSync] = {}

    def due(self, directory: Path, *, generation: int, now: float, interval: float, push_after_commit: bool,
            debounce: float, max_backoff: float) -> str | None:
        st = self.dirs.setdefault(directory, _DirSync())
        if st.synced_generation is not None and generation > st.synced_generation and st.changed_at is None:
            st.changed_at = now
        if st.last_attempt is None:
            return "start"
        since = now - st.last_attempt
        if st.failures:
            return "retry" if since >= backoff_seconds(st.failures, cap=max_backoff) else None
        if since >= interval:
            return "interval"
        if push_after_commit and st.changed_at is not None and now - st.changed_at >= debounce:
            return "commit"
        return None

    def record(self, directory: Path, *, ok: bool, generation: int | None, now: float) -> None:
        st = self.dirs.setdefault(directory, _DirSync())
        st.last_attempt = now
        if ok:
            st.failures = 0
            st.synced_generation = generation
            st.changed_at = None
        else:
            st.failures += 1


def _matches(directory: Path, pattern: str) -> bool:
    return directory.match(pattern) or Path(os.path.realpath(directory)).match(pattern)


def remote_for(directory: Path, remotes: dict[str, str]) -> str | None:
    """The URL ``[sync] remotes`` gives ``directory`` (first matching pattern), ``{project}``
    replaced by the name of the directory that holds it (``~/code/app/.memory`` → ``app``)."""
    for pattern, url in remotes.items():
        if _matches(directory, pattern):
            return url.replace("{project}", directory.parent.name if directory.name.startswith(".") else directory.name)
    return None


def wants_sync(directory: Path, patterns: Sequence[str], remotes: dict[str, str] | None = None) -> bool:
    """``directory`` is attached and matches a ``[sync] dirs`` pattern, or matches a
    ``[sync] remotes`` pattern (its first sync attaches it to that remote)."""
    if remotes and remote_for(directory, remotes) is not None:
        return True
    return any(_matches(directory, p) for p in patterns) and is_attached(directory)


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
    from dreamd.daemon.pool import Task
    from dreamd.logs import get_logger

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


__all__ = ["SyncPlanner", "queue_due_syncs", "remote_for", "wants_sync"]
