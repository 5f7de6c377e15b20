"""Taking in what others did to a managed directory (DESIGN §2.4), in reconcile *and* in every commit.

Claude Code saves a memory by writing ``<memdir>/<name>.md`` and appending a pointer line to
``MEMORY.md``, without any lock; a person edits or deletes record files by hand. Whatever a
commit writes must not pass over that: :func:`scan_foreign` runs under the store lock inside
every commit, just before the new set is computed, and

* adopts every well-formed ``*.md`` file that no manifest names and that is not dreamd's own
  (malformed ones stay in place and are reported),
* drops named files that were deleted by hand (a manifest never names a missing file),
* re-reads named files the commit touches (removes, replaces, merges, plans against) whose
  bytes changed, so a dream planned on the old text conflicts instead of archiving the edit
  silently,

and the commit keeps a MEMORY.md it did not render in ``.history/`` before replacing it
(:meth:`memory.store.transaction.MemoryStore.replace_index`).

A commit checks only the files it touches for hand edits: hashing every record on every commit
would make a commit into 10,000 records pay for 10,000 reads. A hand edit of a file the commit
does not touch cannot be lost by it (the file stays; the manifest keeps its old hash) and
:func:`reconcile` — run by the daemon's watcher after a debounce, and by ``dreamd once`` —
hashes every file and commits the edit.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from memory.errors import RecordError, StoreError
from memory.fsutil import open_regular
from memory.store.archive import Archive
from memory.store.index import render_index
from memory.store.layout import (
    INDEX,
    MAX_INDEX_BYTES,
    MAX_MANIFEST_BYTES,
    OUR_FILE_RE,
    bad_file_name,
    is_record_name,
    read_regular,
    shown_name,
)
from memory.store.locks import store_lock
from memory.store.manifest import MAX_SOURCES, Manifest, ManifestEntry, utcnow_iso
from memory.store.records import Record, parse_record, sha256_hex, unique_name

if TYPE_CHECKING:
    from memory.store.change import Change, CommitResult


class ReconcilingStore(Protocol):
    """What reconcile needs of the store: :class:`memory.store.transaction.MemoryStore` has it.

    A protocol, not an import, so the dependency runs one way (the store imports reconcile to
    scan inside every commit; reconcile knows the store only by these members).
    """

    path: Path
    clock: Callable[[], datetime]
    lock_timeout: float
    index_max_lines: int
    index_max_bytes: int
    archive: Archive

    def read(self) -> Manifest: ...
    def require_managed(self) -> None: ...
    def migrate_history(self) -> None: ...
    def named_files(self, manifest: Manifest) -> frozenset[str]: ...
    def report_malformed(self, malformed: Iterable[tuple[str, str]]) -> None: ...
    def write_set(self, old: Manifest | None, entries: list[ManifestEntry], *, files: Sequence[tuple[str, bytes]] = (),
                  summary: dict[str, Any], leftovers: Sequence[str] = (),
                  listing: Sequence[str] | None = None) -> Manifest: ...
    def archive_files(self, files: Iterable[str]) -> list[str]: ...
    def collect_orphans(self, referenced: AbstractSet[str], *, listing: Sequence[str] | None = None) -> list[str]: ...
    def replace_index(self, index: bytes, *, expected: str) -> str | None: ...
    def commit(self, change: Change) -> CommitResult: ...


@dataclass(frozen=True)
class ReconcileReport:
    """What :func:`reconcile` took in (``generation`` None when nothing needed a commit)."""

    generation: int | None
    adopted: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    malformed: list[tuple[str, str]] = field(default_factory=list)
    orphans_collected: list[str] = field(default_factory=list)
    index_rebuilt: bool = False
    index_archived: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.adopted or self.updated or self.dropped)


@dataclass
class ForeignScan:
    """What others changed since ``manifest`` was committed."""

    entries: list[ManifestEntry]
    """The set with their changes applied (adopted files last)."""
    adopted: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    malformed: list[tuple[str, str]] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)
    """Files the previous commit removed from the set but died before moving away."""
    listing: list[str] = field(default_factory=list)
    secrets: dict[str, Record] = field(default_factory=dict)
    """Files written outside dreamd that hold a secret, by key (found by a full scan): reconcile
    commits them redacted as the next generation; the originals go to the archive (issue 22)."""
    renamed: list[str] = field(default_factory=list)
    """Adopted files whose name held part of a secret, by the name they were given instead
    (:func:`memory.store.redaction.clean_name`; the old one is never written anywhere)."""

    @property
    def changed(self) -> bool:
        return bool(self.adopted or self.updated or self.dropped)

    def manifest(self, old: Manifest) -> Manifest:
        """``old`` with these changes applied (``old`` itself when there are none)."""
        return old.replace(records=self.entries) if self.changed else old

    def annotate(self, summary: dict[str, Any]) -> None:
        """Record in a commit's ``change`` what it took in besides its own change."""
        foreign = {k: v for k, v in (("adopted", self.adopted), ("updated", self.updated), ("dropped", self.dropped)) if v}
        if foreign:
            summary["foreign"] = foreign


def scan_foreign(store: ReconcilingStore, manifest: Manifest, *, verify: Iterable[str] = (), full: bool = False) -> ForeignScan:
    """Compare the directory with ``manifest``; caller holds the store lock.

    ``full`` hashes every named file (reconcile); otherwise only the files in ``verify``.
    """
    listing = os.listdir(store.path)
    present = set(listing)
    check = set(verify)
    now = utcnow_iso(store.clock())
    scan = ForeignScan(entries=[], listing=listing)
    named = store.named_files(manifest)
    # Set operations, not a Python pass per record, in the common case: every commit into a
    # set of 10,000 records pays for this scan.
    if full or check or not named <= present:
        _scan_named(store, manifest, scan, present, check, full=full, now=now)
    else:
        scan.entries = list(manifest.records)
    previous: dict[str, str] | None = None
    ours = sorted(n for n in present - named if OUR_FILE_RE.match(n))
    if ours:
        previous = _previous_files(store, manifest)
        _edited_leftovers(store, ours, previous, scan, present)
    candidates = sorted(n for n in present - named if is_record_name(n) and not OUR_FILE_RE.match(n))
    taken = {e.name for e in scan.entries} if candidates else set()
    for name in candidates:
        path = store.path / name
        if path.is_dir() and not path.is_symlink():
            continue
        bad_name = bad_file_name(store.path, name)
        if bad_name is not None:
            scan.malformed.append((shown_name(name), bad_name))
            continue
        try:
            # One link only: a hard link to a file outside (``ln ~/.ssh/config x.md``) shares
            # its inode, and taking it in would copy that file's bytes into every set and sync.
            data = read_regular(path, single_link=True)
            rec = parse_record(data, where=str(path), stem=path.stem)
        except FileNotFoundError:
            continue
        except (RecordError, OSError) as exc:
            scan.malformed.append((name, str(exc)))
            continue
        if previous is None:  # parsed only now: a large set's old manifest costs a parse
            previous = _previous_files(store, manifest)
        if previous.get(name) == sha256_hex(data):
            # The last commit removed it but died before moving it away: finish that
            # commit's cleanup instead of bringing a forgotten record back.
            scan.leftovers.append(name)
            continue
        renamed = clean_adopted_name(rec)
        name = rename_secret_file(store.path, name, rec)
        if renamed is not None:
            rec = rec.replace(name=renamed)
        entry = foreign_entry(name, data, rec, taken, now=now, source="reconcile")
        scan.entries.append(entry)
        scan.adopted.append(entry.name)
        if renamed is not None:
            scan.renamed.append(entry.name)
        note_secret(scan.secrets, entry.name, data, rec, file=name)
    store.report_malformed(scan.malformed)
    return scan


def _scan_named(
    store: ReconcilingStore, manifest: Manifest, scan: ForeignScan, present: set[str], check: set[str], *, full: bool, now: str
) -> None:
    """Named files: a deleted one leaves the set; a checked one is re-read if its bytes changed."""
    for entry in manifest.records:
        if entry.file not in present:
            scan.dropped.append(entry.name)
            continue
        if not full and entry.file not in check:
            scan.entries.append(entry)
            continue
        path = store.path / entry.file
        try:
            data = read_regular(path, single_link=True)
        except FileNotFoundError:
            scan.dropped.append(entry.name)
            continue
        except RecordError as exc:  # replaced by a link or a FIFO: report, keep the entry
            scan.malformed.append((entry.file, str(exc)))
            scan.entries.append(entry)
            continue
        except OSError as exc:  # now a directory, unreadable: report, keep the entry
            scan.malformed.append((entry.file, f"{path}: cannot read ({exc.strerror or exc})"))
            scan.entries.append(entry)
            continue
        sha = sha256_hex(data)
        if sha == entry.sha256:
            scan.entries.append(entry)
            if full and not OUR_FILE_RE.match(entry.file):  # adopted before it was checked
                note_secret(scan.secrets, entry.name, data, None, where=str(path), stem=path.stem, file=entry.file)
            continue
        try:
            rec = parse_record(data, where=str(path), stem=path.stem)
        except RecordError as exc:
            scan.malformed.append((entry.file, str(exc)))
            scan.entries.append(entry)
            continue
        scan.entries.append(
            entry.replace(
                type=rec.type,
                description=rec.description,
                sha256=sha,
                updated_at=now,
                sources=_sources(entry.sources),
                extra=_with_title(entry.extra, rec.title),
            )
        )
        scan.updated.append(entry.name)
        note_secret(scan.secrets, entry.name, data, rec, file=entry.file)


def clean_adopted_name(rec: Record) -> str | None:
    """The name an adopted record takes instead of its own when that held part of a secret
    (checked against the file's unredacted text, issue 22), else None."""
    from memory.store.redaction import clean_name

    name = clean_name(rec.name, rec.description, rec.body, rec.title or "")
    return None if name == rec.name else name


def file_name_holds_secret(file: str, rec: Record) -> bool:
    """``file`` (a record file someone else wrote, parsed as ``rec``) has a name that holds a
    secret by itself (``deploy-ghp_….md``: :func:`memory.redact.name_kinds`) or shares a part
    with one in the file's UNREDACTED text (``admin-pw-<pw>.md``)."""
    from memory.redact import name_kinds
    from memory.store.redaction import clean_name

    stem = Path(file).stem
    if name_kinds(stem):
        return True
    return clean_name(stem, rec.description, rec.body, rec.title or "") != stem


def rename_secret_file(root: Path, file: str, rec: Record) -> str:
    """``file``, or the name it now has: a file whose name holds a secret
    (:func:`file_name_holds_secret`) is renamed in place to ``<its clean record name>.md``
    BEFORE any manifest names it, so no manifest (kept in ``.history/`` for rollback), no
    archived file, no index line and no ``dreamd log`` ever carries the old name (issue 22).
    Its bytes are not touched (a secret in them is redacted in the next generation). The
    caller holds the store lock; a name taken gets ``-2``, ``-3`` …"""
    if not file_name_holds_secret(file, rec):
        return file
    from memory.fsutil import fsync_dir
    from memory.store.redaction import clean_name

    base = clean_name(rec.name, rec.description, rec.body, rec.title or "", Path(file).stem)
    n = 1
    while True:
        new = f"{base}.md" if n == 1 else f"{base}-{n}.md"
        n += 1
        if new == INDEX or OUR_FILE_RE.match(new) or os.path.lexists(root / new):
            continue
        # One rename: a crash leaves the file under one name or the other, never both (a hard
        # link first would leave two links, which the next scan refuses to read).
        os.rename(root / file, root / new)
        fsync_dir(root)
        return new


def note_secret(
    secrets: dict[str, Record],
    name: str,
    data: bytes,
    rec: Record | None,
    *,
    where: str = "",
    stem: str | None = None,
    file: str | None = None,
) -> None:
    """Add ``name`` to ``secrets`` when its file (``data``, parsed as ``rec``) holds a secret,
    in its bytes or in its ``file`` name: the next generation writes it redacted under a
    name of dreamd's, and the file named for the secret goes to the archive."""
    from memory.redact import name_kinds, redact

    in_name = file is not None and not OUR_FILE_RE.match(file) and bool(name_kinds(Path(file).stem))
    if not in_name and not redact(data.decode("utf-8", "replace"))[1]:
        return
    if rec is None:
        try:
            rec = parse_record(data, where=where, stem=stem)
        except RecordError:
            return
    secrets[name] = rec.replace(name=name)


def _sources(sources: list[str]) -> list[str]:
    return list(dict.fromkeys([*sources, "reconcile"]))[-MAX_SOURCES:]


def _with_title(extra: dict[str, Any], title: str | None) -> dict[str, Any]:
    out = {k: v for k, v in extra.items() if k != "title"}
    if title:
        out["title"] = title
    return out


def _edited_leftovers(store: ReconcilingStore, ours: list[str], previous: dict[str, str], scan: ForeignScan,
                      present: set[str]) -> None:
    """Files of ours the last commit removed from the set but did not move away (it died after
    its commit point and before its cleanup, or an editor re-created one after the move).

    One with the bytes the previous set recorded is that commit's cleanup, finished now: it goes
    to ``.history/`` under its normal archive name (``<file>.hist``), exactly where the commit
    would have put it, so rollback, ``dreamd log``, ``dreamd forget``'s "merged into" and the
    torture checker find a dream's merged sources where they look (issue 21 §5: they were
    collected as ``orphan.<file>.hist`` and the checker called the records lost). One with
    other bytes was edited after that commit verified it: its bytes are put back under a
    foreign name (adopted by this same scan) and the file itself goes to ``.history/`` now, so
    a later edit or deletion of the restored record never brings it back. A file the previous
    set did not name (a new file of a commit that never reached its commit point) is collected
    as an orphan after its grace."""
    for name in ours:
        want = previous.get(name)
        if want is None:
            continue
        try:
            data = read_regular(store.path / name)
        except FileNotFoundError:
            continue
        except (OSError, RecordError) as exc:
            # Replaced by a FIFO or a link since (or it grew over the cap): reported, never read
            # or moved, and never a reason to refuse this commit (it used to raise, and every
            # later commit of the directory failed naming it).
            scan.malformed.append((name, str(exc)))
            continue
        if sha256_hex(data) != want:
            present.add(store.archive.restore(name, data))
        scan.leftovers.append(name)


def _previous_files(store: ReconcilingStore, current: Manifest) -> dict[str, str]:
    """file -> sha256 of every file the commit that made ``current`` dropped could have named:
    the generation before ``current`` (empty when not kept) and, after a group commit, every
    generation of the group and the one it started from. A group's generations share their
    ``committed_at`` (DESIGN §3, "Group commit"): a record an early change of the group added
    and a later one merged away is named only by the group's own generations, and must be
    archived under its normal name too, not collected as an orphan."""
    files: dict[str, str] = {}
    generation = current.generation - 1
    while generation >= 0:
        path = store.archive.manifest_path(generation)
        try:
            store.archive.check()
            previous = Manifest.loads(open_regular(path, max_bytes=MAX_MANIFEST_BYTES), where=str(path))
        except (OSError, StoreError):
            break
        for e in previous.records:
            files.setdefault(e.file, e.sha256)
        if previous.committed_at != current.committed_at:
            break
        generation -= 1
    return files


def reconcile(store: ReconcilingStore) -> ReconcileReport:
    """Take in what others did (DESIGN §2.4) in at most one commit, hashing every named file."""
    store.require_managed()
    with store_lock(store.path, store.lock_timeout):
        old = store.read()
        store.migrate_history()
        scan = scan_foreign(store, old, full=True)
        generation: int | None = None
        index_rebuilt = False
        index_archived: str | None = None
        orphans: list[str] = []
        if scan.changed:
            change = {"actor": "reconcile", "added": scan.adopted, "updated": scan.updated, "removed": scan.dropped}
            new = store.write_set(old, scan.entries, summary=change, leftovers=scan.leftovers, listing=scan.listing)
            generation = new.generation
            index_rebuilt = True
            index_archived = new.change.get("index_archived")
        else:
            orphans = store.archive_files(scan.leftovers)
            orphans += store.collect_orphans({e.file for e in old.records}, listing=scan.listing)
            path = store.path / INDEX
            try:
                current = sha256_hex(open_regular(path, max_bytes=MAX_INDEX_BYTES, oversize="truncate"))
            except FileNotFoundError:
                current = None
            except OSError:  # a directory, a link, a FIFO (UnsafeFileError is a StoreError)
                current = ""
            except StoreError:
                current = ""
            if current != old.index_sha256 or not old.index_sha256:
                index = render_index(scan.entries, max_lines=store.index_max_lines, max_bytes=store.index_max_bytes)
                if current is None or sha256_hex(index) != current:
                    index_archived = store.replace_index(index, expected=old.index_sha256)
                    index_rebuilt = True
    if scan.secrets:  # the next generation holds them redacted
        from memory.store.change import Change

        note = "redacted secrets"
        if scan.renamed:  # one line in dreamd log; the old names held part of a secret, so never shown
            note += f"; renamed {len(scan.renamed)} adopted file(s) whose name held part of one: now {', '.join(scan.renamed)}"
        generation = store.commit(Change(replace=dict(scan.secrets), actor="reconcile", note=note)).generation
    return ReconcileReport(
        generation=generation,
        adopted=scan.adopted,
        updated=scan.updated,
        dropped=scan.dropped,
        malformed=scan.malformed,
        orphans_collected=orphans,
        index_rebuilt=index_rebuilt,
        index_archived=index_archived,
    )


def foreign_entry(
    file: str, data: bytes, rec: Record, taken: set[str], *, now: str, source: str
) -> ManifestEntry:
    """The manifest entry for a file someone else wrote, kept under its own name.

    Its key is made unique against ``taken`` (which it joins); its bytes are never rewritten.
    """
    from memory.redact import redact

    name = unique_name(rec.name, taken)
    taken.add(name)
    return ManifestEntry(
        name=name,
        type=rec.type,
        description=redact(rec.description)[0],  # MEMORY.md never shows a secret (issue 22)
        file=file,
        sha256=sha256_hex(data),
        created_at=now,
        updated_at=now,
        sources=[source],
        extra={"title": rec.title} if rec.title and not _holds_secret(rec.title) else {},
    )


def _holds_secret(text: str) -> bool:
    """``text`` (a frontmatter name kept as the entry's ``title``) holds a secret: the title
    would carry it into the manifest and every kept copy of it."""
    from memory.redact import name_kinds

    return bool(name_kinds(text))


__all__ = [
    "ForeignScan", "ReconcileReport", "ReconcilingStore", "file_name_holds_secret", "foreign_entry", "reconcile",
    "rename_secret_file", "scan_foreign",
]  # fmt: skip
