"""Group commit of a directory's queued jobs (DESIGN §3 "Group commit", §5): what a job sees
while it runs inside a group.

A group's jobs run one after another, each over the set the jobs before it left — so a fact two
sessions state is stored once, a later job of the same session starts at the cursor the earlier
one moved, and a supersession finds the record an earlier job of the group added — but none of
them commits: :class:`StagedStore` answers the reads a job makes (:meth:`snapshot`,
:meth:`read_record`, :meth:`resolve`) from the store plus what the group staged, and
:meth:`commit` applies a change to that view only (the same pure functions the store commits
with). The worker then commits every staged change in one
:meth:`memory.store.transaction.MemoryStore.commit_all` (one lock, one scan, one index write, one
manifest rename, one set of directory fsyncs), which applies them again over whatever is current
under the lock: a change another writer made meanwhile is merged as with any commit, and a
change that no longer applies fails alone (its job and the ones after it run again alone).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    from memory.store.change import Change, CommitResult
    from memory.store.manifest import Manifest, ManifestEntry
    from memory.store.records import Record
    from memory.store.transaction import MemoryStore

__all__ = ["GROUPED_KINDS", "GROUP_MAX_BYTES", "GROUP_MAX_JOBS", "StagedStore", "StoreView"]

GROUP_MAX_JOBS = 32
"""At most this many jobs in one group commit."""
GROUP_MAX_BYTES = 4 << 20
"""...and at most this many bytes of job files (a group's work budget is the sum of its jobs')."""
GROUPED_KINDS = frozenset({"extract", "remember"})
"""Job kinds a group takes. A dream (``consolidate``) plans over the whole set under its lease
and commits with a base, and a ``forget`` answers with what it found: both run alone, in their
place in the directory's order (a group stops before them)."""


class StoreView(Protocol):
    """What a job reads and commits through: a :class:`MemoryStore`, or a group's view."""

    @property
    def path(self) -> Path: ...

    def snapshot(self) -> Manifest: ...

    def read(self) -> Manifest: ...

    def read_record(self, entry: ManifestEntry) -> Record: ...

    def resolve(self, names: Iterable[str], manifest: Manifest | None = None) -> tuple[dict[str, str], list[str]]: ...

    def commit(self, change: Change) -> CommitResult: ...


class StagedStore:
    """A store seen through the changes a group staged; nothing here writes to disk."""

    def __init__(self, store: MemoryStore, *, clock: Callable[[], datetime]) -> None:
        self.store = store
        self._clock = clock
        self._manifest = store.snapshot()
        self._files: dict[str, bytes] = {}
        self._parsed: dict[str, Record] = {}
        self.changes: list[Change] = []
        """Every staged change, in order."""
        self.owners: list[int] = []
        """For each staged change, the :attr:`job` that staged it."""
        self.job = 0
        """The index, within the group, of the job now running."""

    @property
    def path(self) -> Path:
        return self.store.path

    def snapshot(self) -> Manifest:
        return self._manifest

    def read(self) -> Manifest:
        return self._manifest

    def read_record(self, entry: ManifestEntry) -> Record:
        rec = self._parsed.get(entry.file)
        if rec is not None:
            return rec if rec.name == entry.name else rec.replace(name=entry.name)
        data = self._files.get(entry.file)
        if data is None:
            return self.store.read_record(entry)
        rec = self._parsed[entry.file] = self.store.parse_entry(entry, data)
        return rec

    def resolve(self, names: Iterable[str], manifest: Manifest | None = None) -> tuple[dict[str, str], list[str]]:
        return self.store.resolve(names, manifest if manifest is not None else self._manifest)

    def commit(self, change: Change) -> CommitResult:
        """Stage ``change``: the view moves on as the store would after committing it."""
        from memory.store.change import CommitResult, advance, apply_change
        from memory.store.manifest import utcnow_iso

        if change.job_id and change.job_id in self._manifest.applied_jobs:
            return CommitResult(generation=self._manifest.generation, duplicate=True)
        now = utcnow_iso(self._clock())
        pending = apply_change(self._manifest, change, now=now)
        self._manifest = advance(self._manifest, pending, change, now=now, index_sha256=self._manifest.index_sha256)
        self._files.update(pending.files)
        self.changes.append(change)
        self.owners.append(self.job)
        c = pending.change
        return CommitResult(generation=self._manifest.generation, added=list(c.get("added", [])),
                            updated=list(c.get("updated", [])), removed=list(c.get("removed", [])))
