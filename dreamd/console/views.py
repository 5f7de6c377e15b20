"""What each console page shows, as plain values: read through the store and history code the
CLI uses (no second parser of any format), never written.

Pages identify a directory by :func:`dir_id` (a digest of its real path) and only directories
the console was started with (the roots' managed directories, or those named on the command
line) can be named at all: a request can never make the console read another path.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.errors import DreamdError, StoreError
from memory.store.history import LogEntry, find_bytes, summary_entries
from memory.store.manifest import Manifest, ManifestEntry
from memory.store.records import Record
from memory.store.transaction import MemoryStore

PAGE_SIZE = 100
"""Records per page of a directory's table."""
TEXT_CACHE_BYTES = 64 * 1024 * 1024
"""Record texts the plain-text search keeps in memory, keyed by content hash (derived, never
authoritative: a hash that changes is simply read again)."""
DIFF_CONTEXT = 3


def dir_id(path: Path) -> str:
    return hashlib.sha256(os.fsencode(os.path.realpath(path))).hexdigest()[:16]


@dataclass
class Directories:
    """The directories this console serves, by id; fixed when the console starts, plus every
    managed directory the roots hold when the overview is drawn."""

    roots: Sequence[str] = ()
    explicit: list[Path] = field(default_factory=list)

    def all(self) -> list[Path]:
        from dreamd.status.collect import discover_dirs

        found = list(self.explicit)
        if self.roots:
            managed, _ = discover_dirs(self.roots)
            found.extend(managed)
        out: dict[str, Path] = {}
        for p in found:
            real = Path(os.path.realpath(p))
            out.setdefault(dir_id(real), real)
        return sorted(out.values())

    def get(self, ident: str) -> Path | None:
        for p in self.all():
            if dir_id(p) == ident:
                return p
        return None


# ------------------------------------------------------------------------------- a directory


@dataclass(frozen=True)
class Row:
    name: str
    type: str
    description: str
    updated_at: str
    file: str
    importance: float | None = None
    expires: str | None = None


@dataclass(frozen=True)
class Table:
    generation: int
    total: int
    matched: int
    by_type: dict[str, int]
    rows: list[Row]
    page: int
    pages: int


class TextCache:
    """What plain-text search looks through, per directory: each record's name, type,
    description and body, lowercased, for one manifest (the store hands out the same parsed
    manifest until the file changes, so a search after a commit rebuilds only then). Bodies
    are read once per content hash and kept while the total stays under ``limit``; derived,
    never authoritative."""

    def __init__(self, limit: int = TEXT_CACHE_BYTES) -> None:
        self._limit = limit
        self._bodies: OrderedDict[str, str] = OrderedDict()
        self._size = 0
        self._sets: dict[str, tuple[Manifest, list[tuple[ManifestEntry, str]]]] = {}
        self._meta: dict[str, tuple[float | None, str | None]] = {}
        self._warming: set[str] = set()
        self._lock = threading.RLock()

    def _read(self, store: MemoryStore, entry: ManifestEntry) -> Record | None:
        try:
            rec = store.read_record(entry)
        except (DreamdError, OSError):
            self._meta[entry.sha256] = (None, None)
            return None
        self._meta[entry.sha256] = (rec.importance, rec.expires)
        return rec

    def meta(self, store: MemoryStore, entry: ManifestEntry) -> tuple[float | None, str | None]:
        """A record's importance and expiry (from its file, read once per content hash)."""
        hit = self._meta.get(entry.sha256)
        if hit is None:
            self._read(store, entry)
            hit = self._meta.get(entry.sha256, (None, None))
        return hit

    def _body(self, store: MemoryStore, entry: ManifestEntry) -> str:
        with self._lock:
            hit = self._bodies.get(entry.sha256)
            if hit is not None:
                self._bodies.move_to_end(entry.sha256)
                return hit
        rec = self._read(store, entry)
        text = rec.body.lower() if rec is not None else ""
        with self._lock:
            if entry.sha256 not in self._bodies:
                self._bodies[entry.sha256] = text
                self._size += len(text)
            while self._size > self._limit and self._bodies:
                _, old = self._bodies.popitem(last=False)
                self._size -= len(old)
        return text

    def warm(self, store: MemoryStore) -> None:
        """Build the directory's haystacks in the background (once per manifest), so the first
        search after a page opens answers from memory. Only pages being looked at warm it."""
        key = str(store.path)
        with self._lock:
            if key in self._warming:
                return
            self._warming.add(key)

        def run() -> None:
            try:
                self.haystacks(store, store.snapshot())
            except (DreamdError, OSError):
                pass
            finally:
                with self._lock:
                    self._warming.discard(key)

        threading.Thread(target=run, name="console-warm", daemon=True).start()

    def haystacks(self, store: MemoryStore, manifest: Manifest) -> list[tuple[ManifestEntry, str]]:
        key = str(store.path)
        with self._lock:
            hit = self._sets.get(key)
            if hit is not None and hit[0] is manifest:
                return hit[1]
        hay = [(e, f"{e.name}\n{e.type}\n{e.description.lower()}\n{self._body(store, e)}") for e in manifest.records]
        with self._lock:
            self._sets[key] = (manifest, hay)
        return hay


def table(
    store: MemoryStore,
    *,
    type_: str | None = None,
    text: str | None = None,
    page: int = 1,
    cache: TextCache | None = None,
) -> Table:
    """One page of a directory's records, newest first, filtered by type and plain text (name,
    description and body, case-insensitive). Built from the manifest; only the page's own
    files are opened (for importance and expiry)."""
    manifest = store.snapshot()
    by_type = dict(Counter(e.type for e in manifest.records))
    entries = [e for e in manifest.records if not type_ or e.type == type_]
    needle = (text or "").strip().lower()
    if needle:
        wanted = {id(e) for e in entries}
        cache = cache or TextCache()
        entries = [e for e, hay in cache.haystacks(store, manifest) if needle in hay and id(e) in wanted]
    entries.sort(key=lambda e: (e.updated_at, e.name), reverse=True)
    pages = max(1, -(-len(entries) // PAGE_SIZE))
    page = min(max(1, page), pages)
    cache = cache or TextCache()
    rows = []
    for e in entries[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]:
        importance, expires = cache.meta(store, e)
        rows.append(Row(e.name, e.type, e.description, e.updated_at, e.file, importance, expires))
    return Table(manifest.generation, len(manifest.records), len(entries), by_type, rows, page, pages)


# ------------------------------------------------------------------------------- a record


@dataclass(frozen=True)
class Version:
    generation: int
    committed_at: str
    actor: str
    what: str  # added | updated | merged | superseded | removed | adopted | hand edit | rolled back
    sha256: str | None
    text: str | None  # the file as that generation committed it (None: no longer kept)
    note: str | None = None
    sources: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RecordView:
    entry: ManifestEntry
    record: Record | None
    error: str | None
    origin: str
    versions: list[Version]


def _origin(entry: ManifestEntry, first: LogEntry | None) -> str:
    """Where a record came from, in words: the change that added it (a job's session, a dream,
    an adoption, a hand edit, a rollback, a command)."""
    if first is None:
        return "added before the history kept here"
    if entry.name in first.foreign.get("adopted", []):
        return f"adopted from a file someone else wrote (generation {first.generation})"
    merge = next((m for m in first.merged if entry.name == m.get("into")), None)
    if merge is not None and merge.get("superseded") and first.actor != "dream":
        return f"superseded {', '.join(map(str, merge.get('from') or []))}, by {first.who()} (generation {first.generation})"
    if merge is not None:
        return f"a dream's merge (generation {first.generation})"
    actor = first.actor
    if actor == "rollback":
        return f"restored by {first.note or 'a rollback'} (generation {first.generation})"
    if first.session_id:
        return f"extracted from session {first.session_id} by job {first.job_id} (generation {first.generation})"
    if first.job_id:
        return f"{actor} job {first.job_id} (generation {first.generation})"
    return f"{actor} (generation {first.generation})"


def _what(entry: LogEntry, name: str) -> str | None:
    if name in entry.foreign.get("adopted", []):
        return "adopted"
    if name in entry.foreign.get("updated", []):
        return "hand edit"
    if name in entry.foreign.get("dropped", []):
        return "deleted by hand"
    for m in entry.merged:
        if name == m.get("into"):
            return "merged" if len(m.get("from") or []) > 1 else "superseded" if m.get("superseded") else "rewritten"
        if name in (m.get("from") or []):
            return "merged away"
    if name in entry.added:
        return "rolled back" if entry.actor == "rollback" else "added"
    if name in entry.updated:
        return "rolled back" if entry.actor == "rollback" else "updated"
    if name in entry.removed:
        return "removed"
    return None


def record_view(store: MemoryStore, name: str) -> RecordView | None:
    """A live record with every version ``.history/`` still holds, oldest first."""
    manifest = store.snapshot()
    entry = next((e for e in manifest.records if e.name == name), None)
    if entry is None:
        return None
    record: Record | None = None
    error = None
    try:
        record = store.read_record(entry)
    except (DreamdError, OSError) as exc:
        error = str(exc)
    versions: list[Version] = []
    first: LogEntry | None = None
    for log in reversed(summary_entries(store)):
        what = _what(log, name)
        if what is None:
            continue
        text = sha = None
        sources: list[str] = []
        for m in log.merged:
            if name == m.get("into"):
                sources = [str(s) for s in m.get("from") or []]
        if what not in ("removed", "merged away", "deleted by hand"):
            try:
                gen = manifest if log.generation == manifest.generation else store.read_generation(log.generation)
                at = next((e for e in gen.records if e.name == name), None)
                if at is not None:
                    sha = at.sha256
                    data = find_bytes(store, at)
                    text = None if data is None else data.decode("utf-8", "replace")
            except StoreError:
                pass
        if what in ("added", "adopted", "merged", "rewritten", "superseded", "rolled back") and (first is None or what != "rolled back"):
            first = log if first is None or what in ("added", "adopted", "merged", "rewritten", "superseded") else first
        versions.append(Version(log.generation, log.committed_at, log.actor, what, sha, text, log.note, sources))
    return RecordView(entry, record, error, _origin(entry, first), versions)


# ------------------------------------------------------------------------------- the timeline


def describe(entry: LogEntry) -> list[str]:
    """A generation's change in words, one phrase per kind of change."""
    out: list[str] = []
    merged_into = {str(m.get("into")) for m in entry.merged if m.get("into")}
    for m in entry.merged:
        sources = [str(s) for s in m.get("from") or []]
        into = m.get("into")
        if into is None:
            out.append(f"dropped {', '.join(sources)}")
        elif len(sources) > 1:
            out.append(f"merged {', '.join(sources)} into {into}")
        elif m.get("superseded"):
            out.append(f"superseded {', '.join(sources)} with {into}")
        else:
            out.append(f"rewrote {', '.join(sources)} as {into}")
    verb = "restored" if entry.actor == "rollback" else "added"
    added = [n for n in entry.added if n not in merged_into]
    if added:
        out.append(f"{verb} {', '.join(added)}")
    updated = [n for n in entry.updated if n not in merged_into]
    if updated:
        out.append(f"{'reverted' if entry.actor == 'rollback' else 'updated'} {', '.join(updated)}")
    merged_sources = {str(s) for m in entry.merged for s in m.get("from") or []}
    removed = [n for n in entry.removed if n not in merged_sources]
    if removed:
        out.append(f"removed {', '.join(removed)}")
    for key, words in (("adopted", "adopted"), ("updated", "took in hand edits of"), ("dropped", "saw deleted by hand")):
        if entry.foreign.get(key):
            out.append(f"{words} {', '.join(entry.foreign[key])}")
    if entry.actor == "rollback" and entry.note:
        out.append(entry.note)
    return out or ["no record changed"]


def timeline(store: MemoryStore, *, limit: int | None = None) -> list[tuple[LogEntry, list[str]]]:
    return [(e, describe(e)) for e in summary_entries(store, limit=limit)]


@dataclass(frozen=True)
class DiffLine:
    kind: str  # same | changed | added | removed
    left_no: int | None
    left: str
    right_no: int | None
    right: str


@dataclass(frozen=True)
class FileDiff:
    name: str
    what: str
    before: str | None
    after: str | None
    lines: list[DiffLine]


def side_by_side(before: str, after: str, *, context: int = DIFF_CONTEXT) -> list[DiffLine]:
    """Rows of a side-by-side diff (text, never markup: the template escapes every cell)."""
    a, b = before.splitlines(), after.splitlines()
    out: list[DiffLine] = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context):
        if out:
            out.append(DiffLine("gap", None, "…", None, "…"))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(DiffLine("same", i + 1, a[i], j + 1, b[j]) for i, j in zip(range(i1, i2), range(j1, j2), strict=True))
                continue
            left, right = a[i1:i2], b[j1:j2]
            for k in range(max(len(left), len(right))):
                ln = left[k] if k < len(left) else None
                rn = right[k] if k < len(right) else None
                kind = "changed" if ln is not None and rn is not None else ("removed" if rn is None else "added")
                out.append(DiffLine(kind, i1 + k + 1 if ln is not None else None, ln or "", j1 + k + 1 if rn is not None else None, rn or ""))
    return out


@dataclass(frozen=True)
class MergeView:
    """One operation of a dream: every source as it stood, and what it became (None: dropped)."""

    sources: list[tuple[str, str | None]]
    into: str | None
    result: str | None


def generation_diff(store: MemoryStore, generation: int) -> tuple[LogEntry, list[FileDiff], list[MergeView]] | None:
    """What one generation changed, file by file, against the generation before it, and each
    merge of a dream with all its sources."""
    entries = {e.generation: e for e in summary_entries(store)}
    entry = entries.get(generation)
    if entry is None:
        return None
    current = store.snapshot()
    try:
        after_m = current if generation == current.generation else store.read_generation(generation)
        before_m = store.read_generation(generation - 1) if generation > 1 else Manifest()
    except StoreError:
        before_m = None  # the generation before is no longer kept: show what this one holds
        after_m = current if generation == current.generation else store.read_generation(generation)
    touched = set(entry.added) | set(entry.updated) | set(entry.removed)
    for m in entry.merged:
        touched.update(str(s) for s in m.get("from") or [])
        if m.get("into"):
            touched.add(str(m["into"]))
    for names in entry.foreign.values():
        touched.update(names)
    after = {e.name: e for e in after_m.records if e.name in touched}
    before = {} if before_m is None else {e.name: e for e in before_m.records if e.name in touched}
    diffs: list[FileDiff] = []
    for name in sorted(touched):
        old, new = before.get(name), after.get(name)
        if old is not None and new is not None and old.sha256 == new.sha256:
            continue
        old_t = _read(store, old)
        new_t = _read(store, new)
        what = "added" if old is None else "removed" if new is None else "changed"
        lines = side_by_side(old_t or "", new_t or "") if (old_t is not None or new_t is not None) else []
        diffs.append(FileDiff(name, what, old_t, new_t, lines))
    merges = []
    for m in entry.merged:
        into = m.get("into") if isinstance(m.get("into"), str) else None
        sources = [(str(s), _read(store, before.get(str(s)))) for s in m.get("from") or []]
        merges.append(MergeView(sources, into, _read(store, after.get(into)) if into else None))
    return entry, diffs, merges


def _read(store: MemoryStore, entry: ManifestEntry | None) -> str | None:
    if entry is None:
        return None
    data = find_bytes(store, entry)
    return None if data is None else data.decode("utf-8", "replace")


def generation_of(store: MemoryStore) -> int:
    try:
        return store.snapshot().generation
    except (DreamdError, OSError):
        return -1


def spool_jobs(spool: Path) -> dict[str, Any]:
    """Pending and failed jobs with their reasons and attempts (what ``dreamd status`` reads)."""
    from dreamd.status.collect import spool_status
    from memory.spool.queue import Spool

    status = spool_status(spool, last=200)
    sp = Spool(spool)
    pending: list[dict[str, Any]] = []
    for folder in ("new", "cur", "deferred"):
        try:
            names = sorted(n for n in os.listdir(spool / folder) if n.endswith(".json") and ".error" not in n)
        except OSError:
            continue
        for n in names[:200]:
            pending.append({"job": n.removesuffix(".json"), "state": folder})
    for f in status.get("failures", []):
        try:
            doc = sp.failure(f["job"])
        except (OSError, DreamdError):
            doc = {}
        f["attempts"] = doc.get("attempts")
        f["memory_dir"] = doc.get("memory_dir")
    status["pending"] = pending
    return status


def counts_by_type(stores: Iterable[MemoryStore]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for store in stores:
        try:
            out[str(store.path)] = dict(Counter(e.type for e in store.snapshot().records))
        except (DreamdError, OSError):
            out[str(store.path)] = {}
    return out
