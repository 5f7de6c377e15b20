"""What a commit changes, apart from how it becomes durable (DESIGN §3, steps 2 and 4).

A :class:`Change` is a delta against whatever set is current when the commit runs;
:func:`apply_change` turns it, over that set, into the new entries, the new files' bytes and
the ``change`` summary the manifest keeps (:class:`Pending`) — a pure function of the set, the
change and the time, so the rules for merges, name collisions and provenance are readable and
testable without a directory. :class:`~memory.store.transaction.MemoryStore` runs it under the store lock
and writes the result through the commit protocol.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memory.store.layout import record_file_name
from memory.store.manifest import (
    BOOKKEPT_KEY,
    EXTRACTED_KEY,
    MAX_APPLIED_JOBS,
    MAX_SESSIONS,
    MAX_SOURCES,
    Manifest,
    ManifestEntry,
    bounded_append,
    merge_extracted,
    set_cursor,
)
from memory.store.records import Record, render_record, sha256_hex, unique_name

if TYPE_CHECKING:
    from memory.store.locks import DreamLease

ACTORS = ("job", "session", "dream", "manual", "adopted", "reconcile", "rollback", "init")
"""Who may commit; ``change.actor`` in every manifest says which one did."""


@dataclass
class Change:
    """A delta against whatever set is current when the commit runs.

    ``merges`` are consolidation operations: every source leaves the set and the result (if
    any) joins it, inheriting the earliest ``created_at`` and the sources' provenance.
    ``base`` maps names to the sha256 the caller planned against (verified under the lock).
    ``superseded`` names sources whose merge is a supersession (a newer record replaced the
    value they held, kept on the result's ``**Previously:**`` line): the summary marks such a
    merge ``"superseded": true`` and ``dreamd log`` says "superseded".
    """

    add: list[Record] = field(default_factory=list)
    replace: dict[str, Record] = field(default_factory=dict)
    remove: list[str] = field(default_factory=list)
    merges: list[tuple[list[str], Record | None]] = field(default_factory=list)
    superseded: set[str] = field(default_factory=set)
    actor: str = "manual"
    job_id: str | None = None
    session_id: str | None = None
    cursor: tuple[str, int] | None = None
    extracted: list[str] = field(default_factory=list)
    """Message ids of the transcript turns this change extracted (fork dedup, see
    :func:`memory.store.manifest.merge_extracted`)."""
    base: dict[str, str] | None = None
    consolidated: bool = False
    lease: DreamLease | None = None
    sources: list[str] = field(default_factory=list)
    note: str = ""


@dataclass(frozen=True)
class CommitResult:
    """What a commit did: the generation it made (or found, for a ``duplicate`` job) and the
    record names it added, updated and removed, besides what it took in from others."""

    generation: int
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    duplicate: bool = False
    adopted: list[str] = field(default_factory=list)
    """Files someone else wrote that this commit took in (DESIGN §2.4, checked in every commit)."""
    index_archived: str | None = None
    """Where a MEMORY.md this commit replaced but did not write itself was kept."""
    malformed: list[tuple[str, str]] = field(default_factory=list)
    not_archived: list[tuple[str, str]] = field(default_factory=list)
    """``(file, one line)`` for each file this commit left in place instead of keeping it in
    ``.history/`` (a link, a FIFO, a device where a record's file was): never opened or moved."""

    def archive_note(self) -> str:
        """Where the files this commit removed went, for a forget's answer: "kept in .history/",
        or what it left in place instead, one clause per file."""
        if not self.not_archived:
            return "kept in .history/"
        return "; ".join(line for _, line in self.not_archived)


@dataclass
class Pending:
    """What a commit will write: the new entries and the new files' bytes."""

    entries: list[ManifestEntry]
    files: list[tuple[str, bytes]] = field(default_factory=list)
    change: dict[str, Any] = field(default_factory=dict)


def touched_files(old: Manifest, change: Change) -> set[str]:
    """Files of the records a change removes, replaces, merges or planned against: the ones
    whose hand edits would otherwise leave the set unnoticed (moved to ``.history/``)."""
    names = set(change.remove) | set(change.replace) | set(change.base or ())
    for sources, _ in change.merges:
        names.update(sources)
    if not names:
        return set()
    return {e.file for e in old.records if e.name in names}


def provenance(change: Change) -> list[str]:
    """What a change's new records name as their source: its ``sources``, session and job, else
    its actor."""
    out = list(change.sources)
    if change.session_id:
        out.append(f"session:{change.session_id}")
    if change.job_id:
        out.append(f"job:{change.job_id}")
    if not out:
        out.append(change.actor)
    return out


def apply_change(old: Manifest, change: Change, *, now: str) -> Pending:
    """Step 4 of the protocol, pure: ``change`` applied to the set ``old`` (the manifest re-read
    under the lock, with what others did taken in) at time ``now``. New and replaced records get
    fresh file names and their rendered bytes; nothing is written here. Removes go first, then
    merges, replaces and adds; a name collision gets a numeric suffix, never an overwrite."""

    change = redact_change(change)  # every record write, whoever made it (issue 22)
    entries = {e.name: e for e in old.records}
    order = [e.name for e in old.records]
    files: list[tuple[str, bytes]] = []
    added: list[str] = []
    updated: list[str] = []
    removed: list[str] = []
    merged: list[dict[str, Any]] = []
    sources_of_change = provenance(change)

    def new_entry(
        rec: Record, *, created_at: str, sources: list[str], title: str | None = None
    ) -> ManifestEntry:
        data = render_record(rec)
        file = record_file_name(rec.name)
        files.append((file, data))
        return ManifestEntry(
            name=rec.name,
            type=rec.type,
            description=rec.description,
            file=file,
            sha256=sha256_hex(data),
            created_at=created_at,
            updated_at=now,
            sources=_dedup(sources)[-MAX_SOURCES:],
            extra={"title": title} if title else {},
        )

    for name in change.remove:
        if name in entries:
            del entries[name]
            removed.append(name)

    for sources, result in change.merges:
        gone = [entries.pop(n) for n in sources if n in entries]
        if result is None:
            removed.extend(e.name for e in gone)
            merged.append({"from": list(sources), "into": None})
            continue
        created = min((e.created_at for e in gone if e.created_at), default=now)
        prov = [s for e in gone for s in e.sources] + sources_of_change
        name = unique_name(result.name, set(entries))
        rec = result.replace(name=name)
        entries[name] = new_entry(rec, created_at=created, sources=prov)
        order.append(name)
        removed.extend(e.name for e in gone if e.name != name)
        if any(e.name == name for e in gone):
            updated.append(name)
        else:
            added.append(name)
        merged.append({"from": list(sources), "into": name}
                      | ({"superseded": True} if sources and set(sources) <= change.superseded else {}))

    to_add = list(change.add)
    for name, rec in change.replace.items():
        prev = entries.get(name)
        rec = rec.replace(name=name)
        if prev is None:
            # Replaced under us (no base given): keep the new content rather than drop it.
            to_add.append(rec)
            continue
        # The name the record's old file gave it (if any) keeps finding the new version.
        entries[name] = new_entry(
            rec, created_at=prev.created_at, sources=prev.sources + sources_of_change, title=prev.title
        )
        updated.append(name)

    for rec in to_add:
        name = unique_name(rec.name, set(entries))
        rec = rec.replace(name=name)
        entries[name] = new_entry(rec, created_at=now, sources=sources_of_change)
        order.append(name)
        added.append(name)

    seen: set[str] = set()
    ordered: list[ManifestEntry] = []
    for name in order:
        if name in entries and name not in seen:
            ordered.append(entries[name])
            seen.add(name)
    summary: dict[str, Any] = {
        "actor": change.actor,
        "added": added,
        "updated": updated,
        "removed": [n for n in removed if n not in added and n not in updated],
    }
    if merged:
        summary["merged"] = merged
    if change.job_id:
        summary["job_id"] = change.job_id
    if change.session_id:
        summary["session_id"] = change.session_id
    if change.note:
        summary["note"] = change.note
    return Pending(entries=ordered, files=files, change=summary)


def same_set(old: Manifest, pending: Pending, archived: str | None = None) -> bool:
    """True when a commit leaves the record set as it was: no file written, no foreign
    MEMORY.md archived, every entry equal (a bookkeeping commit, made in place)."""
    return not pending.files and archived is None and pending.entries == old.records


def advance(
    old: Manifest | None, pending: Pending, change: Change | None, *, now: str, index_sha256: str,
    archived: str | None = None,
) -> Manifest:
    """The manifest a commit of ``pending`` (``change`` applied over ``old``) makes, pure.

    A commit that changes no record rewrites the current generation in place (same number,
    same ``committed_at`` and ``change``; ``bookkept`` names the job), any other makes the next
    generation (DESIGN §3). The bookkeeping a change carries (its job id, cursor, extracted
    message ids, session) joins either way. A group commit folds its changes through this one
    after another, so each of them is the generation it would have been committed alone.
    """
    bookkeeping = old is not None and same_set(old, pending, archived)
    new = Manifest(
        generation=(old.generation + (0 if bookkeeping else 1)) if old is not None else 0,
        committed_at=old.committed_at if bookkeeping and old is not None else now,
        consolidated_at=old.consolidated_at if old else None,
        records=pending.entries,
        applied_jobs=list(old.applied_jobs) if old else [],
        sessions_since_consolidation=list(old.sessions_since_consolidation) if old else [],
        cursors=dict(old.cursors) if old else {},
        index_sha256=index_sha256,
        change=dict(old.change) if bookkeeping and old is not None else pending.change,
        extra=dict(old.extra) if old else {},
    )
    if bookkeeping:
        last = {k: pending.change[k] for k in ("actor", "job_id", "session_id", "note") if pending.change.get(k)}
        new.extra[BOOKKEPT_KEY] = {"at": now, **last}
    else:
        new.extra.pop(BOOKKEPT_KEY, None)
    if change is not None:
        if change.job_id:
            new.applied_jobs = bounded_append(new.applied_jobs, change.job_id, MAX_APPLIED_JOBS)
        if change.cursor is not None:
            new.cursors = set_cursor(new.cursors, change.cursor[0], change.cursor[1])
        if change.extracted:
            new.extra[EXTRACTED_KEY] = merge_extracted(new.extra.get(EXTRACTED_KEY), change.extracted)
        if change.session_id and change.actor == "job" and not change.consolidated:
            new.sessions_since_consolidation = bounded_append(
                new.sessions_since_consolidation, change.session_id, MAX_SESSIONS
            )
        if change.consolidated:
            new.consolidated_at = new.committed_at
            new.sessions_since_consolidation = []
    return new


def _dedup(items: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


__all__ = [
    "ACTORS", "Change", "CommitResult", "Pending", "advance", "apply_change", "provenance", "redact_change", "same_set",
    "touched_files",
]


def redact_change(change: Change) -> Change:
    """``change`` with every record it writes redacted (the same object when nothing is)."""
    from memory.store.redaction import redact_record  # here: readers never load the detectors

    add = [redact_record(r)[0] for r in change.add]
    replace = {k: redact_record(r, keep_name=True)[0] for k, r in change.replace.items()}
    merges = [(src, redact_record(r)[0] if r is not None else None) for src, r in change.merges]
    if (
        all(a is b for a, b in zip(add, change.add, strict=True))
        and all(replace[k] is change.replace[k] for k in replace)
        and all(m[1] is o[1] for m, o in zip(merges, change.merges, strict=True))
    ):
        return change
    return dataclasses.replace(change, add=add, replace=replace, merges=merges)
