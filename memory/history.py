"""History: what changed, when and by what (``dreamd log``), and undoing it (``dreamd rollback``).

Every manifest carries a ``change`` summary; ``.history/`` keeps the last N manifests and the
files they referenced, so the log is read straight from them and a rollback is an ordinary new
commit whose set equals an old one (it never rewinds the generation counter, and jobs already
applied stay applied).
"""

from __future__ import annotations

import dataclasses
import glob
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.errors import StoreError
from memory.layout import HISTORY, ORPHAN_PREFIX, record_file_name
from memory.locks import store_lock
from memory.manifest import Manifest, ManifestEntry
from memory.reconcile import scan_foreign
from memory.records import sha256_hex, unique_name
from memory.store import CommitResult, MemoryStore


@dataclass(frozen=True)
class LogEntry:
    generation: int
    committed_at: str
    actor: str
    records: int
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    merged: list[dict[str, Any]] = field(default_factory=list)
    job_id: str | None = None
    session_id: str | None = None
    note: str | None = None
    foreign: dict[str, list[str]] = field(default_factory=dict)
    """What the commit took in that others did: ``adopted``, ``updated`` (hand edits) and
    ``dropped`` (hand deletions) record names."""
    index_archived: str | None = None
    titles: dict[str, str] = field(default_factory=dict)
    """Frontmatter names of the records named above whose files call them otherwise
    (``feedback_db_tests`` → ``feedback-db-tests``), so the log reads with either name."""

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _entry(m: Manifest) -> LogEntry:
    c = m.change
    foreign = {str(k): [str(n) for n in v] for k, v in (c.get("foreign") or {}).items() if isinstance(v, list)}
    named = {str(n) for key in ("added", "updated") for n in c.get(key, [])} | {n for v in foreign.values() for n in v}
    return LogEntry(
        generation=m.generation,
        committed_at=m.committed_at,
        actor=str(c.get("actor", "unknown")),
        records=len(m.records),
        added=list(c.get("added", [])),
        updated=list(c.get("updated", [])),
        removed=list(c.get("removed", [])),
        merged=list(c.get("merged", [])),
        job_id=c.get("job_id"),
        session_id=c.get("session_id"),
        note=c.get("note"),
        foreign=foreign,
        index_archived=c.get("index_archived"),
        titles={e.name: e.title for e in m.records if e.title and e.name in named},
    )


def log_entries(store: MemoryStore, *, limit: int | None = None) -> list[LogEntry]:
    """Generations, newest first, as far back as ``.history/`` keeps them."""
    current = store.read()
    out = [_entry(current)]
    for gen in reversed(store.history_manifests()):
        if gen >= current.generation:
            continue
        if limit is not None and len(out) >= limit:
            break
        try:
            out.append(_entry(store.read_generation(gen)))
        except StoreError:
            continue
    return out[:limit] if limit is not None else out


def render_log(entries: list[LogEntry]) -> str:
    lines = []
    for e in entries:

        def label(name: str, e: LogEntry = e) -> str:
            title = e.titles.get(name)
            return f"{name} (name: {title})" if title else name

        who = e.actor
        if e.job_id:
            who += f" job {e.job_id}"
        if e.session_id:
            who += f" session {e.session_id}"
        lines.append(f"generation {e.generation}  {e.committed_at}  by {who}  ({e.records} records)")
        for m in e.merged:
            into = m.get("into")
            sources = ", ".join(m.get("from", []))
            lines.append(f"  merged   {sources} -> {into}" if into else f"  dropped  {sources}")
        for n in e.added:
            lines.append(f"  added    {label(n)}")
        for n in e.updated:
            lines.append(f"  updated  {label(n)}")
        merged_sources = {s for m in e.merged for s in m.get("from", [])}
        for n in e.removed:
            if n not in merged_sources:
                lines.append(f"  removed  {n}")
        for what, key in (("adopted ", "adopted"), ("edited  ", "updated"), ("deleted ", "dropped")):
            for n in e.foreign.get(key, []):
                lines.append(f"  {what} {label(n)}  (by someone else)")
        if e.index_archived:
            lines.append(f"  kept     a MEMORY.md dreamd did not write as {e.index_archived}")
        if e.note:
            lines.append(f"  note     {e.note}")
    return "\n".join(lines) + ("\n" if lines else "")


def render_log_json(entries: list[LogEntry]) -> str:
    return json.dumps({"generations": [e.to_json() for e in entries]}, ensure_ascii=False, indent=2)


def _find_bytes(store: MemoryStore, entry: ManifestEntry) -> bytes | None:
    """The exact bytes an old entry committed, from the directory or ``.history/``."""
    candidates = [store.path / entry.file]
    hist = store.path / HISTORY
    if hist.is_dir():
        # Archives end in ARCHIVE_SUFFIX (``x.md.hist``, ``x.md.<random>.hist``); directories
        # not yet migrated still hold ``x.md``, ``x.md.<random>`` and ``orphan.x.md``.
        for prefix in ("", ORPHAN_PREFIX):
            candidates.append(hist / f"{prefix}{entry.file}")
            candidates.extend(sorted(hist.glob(f"{glob.escape(prefix + entry.file)}.*")))
    for path in candidates:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if sha256_hex(data) == entry.sha256:
            return data
    return None


def rollback(store: MemoryStore, *, to: int) -> CommitResult:
    """Commit a new generation whose set equals generation ``to``; all or nothing."""
    with store_lock(store.path, store.lock_timeout):
        current = store.read()
        if to == current.generation:
            raise StoreError(f"{store.path}: generation {to} is already current")
        target = store.read_generation(to)
        store.migrate_history()
        entries: list[ManifestEntry] = []
        files: list[tuple[str, bytes]] = []
        for entry in target.records:
            data = _find_bytes(store, entry)
            if data is None:
                raise StoreError(
                    f"{store.path}: cannot roll back to generation {to}: {entry.file} ({entry.name}) is no longer kept"
                )
            path = store.path / entry.file
            on_disk = path.read_bytes() if path.exists() else None
            if on_disk is not None and sha256_hex(on_disk) == entry.sha256:
                entries.append(dataclasses.replace(entry))
                continue
            file = entry.file if on_disk is None else record_file_name(entry.name)
            files.append((file, data))
            entries.append(dataclasses.replace(entry, file=file))
        # A file someone wrote since the last commit belongs to no generation: it joins the
        # rolled-back set instead of being passed over (or archived as if we had removed it).
        foreign = scan_foreign(store, current)
        taken = {e.name for e in entries}
        restored = {e.file for e in entries}
        adopted_names = set(foreign.adopted)
        for e in foreign.entries:
            if e.name in adopted_names and e.file not in restored:
                entries.append(dataclasses.replace(e, name=unique_name(e.name, taken)))
                taken.add(entries[-1].name)
        before = {e.name: e.sha256 for e in current.records}
        after = {e.name: e.sha256 for e in entries}
        added = sorted(n for n in after if n not in before)
        updated = sorted(n for n in after if n in before and before[n] != after[n])
        removed = sorted(n for n in before if n not in after)
        change: dict[str, Any] = {
            "actor": "rollback",
            "added": added,
            "updated": updated,
            "removed": removed,
            "note": f"rollback to generation {to}",
        }
        foreign.annotate(change)
        change.get("foreign", {}).pop("updated", None)
        change.get("foreign", {}).pop("dropped", None)
        if not change.get("foreign"):
            change.pop("foreign", None)
        new = store.write_set(current, entries, files=files, summary=change, leftovers=foreign.leftovers, listing=foreign.listing)
        return CommitResult(
            generation=new.generation,
            added=added,
            updated=updated,
            removed=removed,
            adopted=list(foreign.adopted),
            index_archived=new.change.get("index_archived"),
        )


def history_dir(store: MemoryStore) -> Path:
    return store.path / HISTORY
