"""The daemon's side of sync, as policy: which directories ``[sync]`` covers, and when each is
due, with backoff while a remote keeps failing. The tick step that queues the due syncs
through the worker pool is the daemon's (:mod:`dreamd.daemon.syncing`): sync never imports the
daemon.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dreamd.sync.flow import backoff_seconds, is_attached


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


__all__ = ["SyncPlanner", "remote_for", "wants_sync"]
