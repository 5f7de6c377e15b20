"""MemoryStore: one memory directory and the one commit protocol every writer uses (DESIGN §2.3).

Invariants this module keeps, whatever crashes when:

* ``manifest.json`` is the only authority; it changes only by ``os.replace`` of a fully written,
  fsynced temp file (the commit point), so a reader never sees a manifest naming a missing file.
* Record files are immutable: new ones are created with link() (never clobbering), replaced ones
  are moved to ``.history/`` only *after* the commit point.
* A commit re-reads the manifest under the store lock and applies its delta to whatever is there
  now, so concurrent additions are merged, never lost; a consolidation verifies its base (and its
  fencing token) first and aborts with :class:`ConflictError` having written nothing.
* Nothing dreamd did not write is ever deleted: foreign files it replaces go to ``.history/``.
* Nothing others wrote is passed over: every commit first takes in new record files and hand
  deletions (:mod:`memory.store.reconcile`), and keeps a MEMORY.md it did not render in ``.history/``
  before replacing it — an agent writing without our lock (Claude Code) loses nothing.
* Nothing under ``.history/`` ends in ``.md`` (:data:`ARCHIVE_SUFFIX`): Claude Code reads every
  ``*.md`` below its memory directory as a live memory.

:meth:`MemoryStore.commit_all` is the batch form (a group commit, DESIGN §3): several changes
under one lock, one scan, one index write and one manifest rename, each change still its own
generation (those made and replaced inside the group are written into ``.history/`` before the
one rename); :meth:`MemoryStore.commit` is a group of one.

The steps of a commit are announced to an optional ``fault`` hook (``"locked"``, ``"verified"``,
``"files_written"``, ``"index_written"``, ``"history_linked"``, ``"manifest_replaced"``,
``"cleaned"``) so crash tests can stop a real process exactly there.

This module is the protocol; its parts live beside it, each behind a public path:

* :mod:`memory.store.change` — what a commit changes (:class:`Change`, applied to a set, pure);
* :mod:`memory.store.layout` — file names and patterns, :func:`~memory.store.layout.read_regular`;
* :mod:`memory.store.archive` — ``.history/``: archiving, orphan collection, pruning, the index swap;
* :mod:`memory.store.reconcile` — what others did (scanned inside every commit, and ``reconcile``);
* :mod:`memory.store.adopt` and :mod:`memory.store.history` (rollback) — callers that build a whole set
  themselves: under the store lock they use :meth:`MemoryStore.migrate_history`,
  :meth:`MemoryStore.write_set` and, for reconcile, :meth:`MemoryStore.archive_files`,
  :meth:`MemoryStore.collect_orphans` and :meth:`MemoryStore.replace_index`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from datetime import UTC, datetime
from pathlib import Path

from memory.errors import (
    ConflictError,
    DreamdError,
    LockError,
    NotApplied,
    RecordError,
    StoreError,
    UnmanagedError,
    UnsafeFileError,
)
from memory.fsutil import fsync_dir, open_regular, read_regular_stat, replace_atomic, write_new
from memory.lazylog import get_logger
from memory.store.archive import Archive
from memory.store.index import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, render_index
from memory.store.layout import (
    ARCHIVE_SUFFIX,
    HISTORY,
    INDEX,
    MANIFEST,
    MAX_MANIFEST_BYTES,
    MAX_RECORD_FILE_BYTES,
    ORPHAN_PREFIX,
    OUR_FILE_RE,
    PREVIOUS_INDEX_PREFIX,
    bad_file_name,
    manifest_merge_attribute,
    read_regular,
    record_file_name,
    record_files,
    shown_name,
)
from memory.store.locks import store_lock
from memory.store.manifest import (
    MAX_SOURCES,
    FragmentCache,
    Manifest,
    ManifestEntry,
    utcnow_iso,
)
from memory.store.records import Record, parse_record, sha256_hex, slugify

TYPE_CHECKING = False  # not typing's: importing typing is a start-up cost (issue 20)
if TYPE_CHECKING:  # imported where used: a reader (status, recall, doctor) never commits or reconciles
    from typing import Any

    from memory.store.change import ACTORS, Change, CommitResult, Pending
    from memory.store.reconcile import ReconcileReport, foreign_entry

log = get_logger("memory.store")

DEFAULT_ORPHAN_GRACE = 600.0
DEFAULT_HISTORY_GENERATIONS = 50
PARSED_BYTES_KEPT = 8 << 20
"""Bytes of record files a store keeps parsed before it starts again (a record is at most
80 KiB): the daemon keeps one store per directory, so each directory holds at most this much
beyond its manifest, and a directory of small records (the common case) all of them. A set
larger than this is parsed whole on every read of it (the cache is emptied part way through
each pass), so it is sized for issue 23's 10,000 records: their 2.4 MB of files (bench_dream)
parse to about 11 MB of objects, and at 1 MiB each dream re-parsed all 10,000 (640 ms CPU)."""

FaultHook = Callable[[str], None]


def _now() -> datetime:
    return datetime.now(UTC)


class MemoryStore:
    """One memory directory. Cheap to construct; all state lives on disk."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        lock_timeout: float = 10.0,
        history_generations: int = DEFAULT_HISTORY_GENERATIONS,
        index_max_lines: int = DEFAULT_MAX_LINES,
        index_max_bytes: int = DEFAULT_MAX_BYTES,
        orphan_grace: float = DEFAULT_ORPHAN_GRACE,
        clock: Callable[[], datetime] = _now,
        fault: FaultHook | None = None,
    ) -> None:
        self.path = Path(path)
        self.lock_timeout = lock_timeout
        self.history_generations = history_generations
        self.index_max_lines = index_max_lines
        self.index_max_bytes = index_max_bytes
        self.orphan_grace = orphan_grace
        self.clock = clock
        self._fault = fault
        self._cache: tuple[tuple[int, int, int, int], Manifest] | None = None
        self._fragments: FragmentCache = {}
        self.archive = Archive(self.path)
        """``.history/`` of this directory (:mod:`memory.store.archive`); it caches what it learns."""
        self._named: tuple[Manifest, frozenset[str]] | None = None
        """The files the manifest this store last committed names (the next commit's scan)."""
        self._reported_malformed: set[tuple[str, int, int]] = set()
        self._titles: dict[tuple[str, str], str | None] = {}
        self._parsed: dict[str, tuple[tuple[int, int, int, int], Record]] = {}
        """Parsed record files by file name, with the ``fstat`` key they were parsed at."""
        self._parsed_bytes = 0

    # ------------------------------------------------------------------ reading

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    @property
    def history_path(self) -> Path:
        return self.path / HISTORY

    def is_managed(self) -> bool:
        """Whether ``manifest.json`` exists (as anything: a link or a FIFO there is refused by
        :meth:`read` with its name, never taken for "not managed" and adopted over)."""
        return os.path.lexists(self.manifest_path)

    def read(self) -> Manifest:
        """The current set, from ``manifest.json`` only (cached by inode/mtime/size)."""
        return self._copy(self._load())

    def snapshot(self) -> Manifest:
        """The current set *shared with the cache*, without :meth:`read`'s defensive copy.

        For hot read paths (recall): one ``fstat`` when nothing changed. Callers must treat it
        as read-only; anything they mutate would corrupt the cache.
        """
        return self._load()

    def _load(self) -> Manifest:
        """The current manifest *shared with the cache*: the commit path reads it, never mutates it."""
        cache = self._cache

        def cached(st: os.stat_result) -> bool:
            return cache is not None and cache[0] == (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)

        try:
            st, data = read_regular_stat(self.manifest_path, max_bytes=MAX_MANIFEST_BYTES, unchanged=cached)
        except UnsafeFileError as exc:
            raise StoreError(f"{exc}; {MANIFEST} must be a regular file of this directory") from None
        except FileNotFoundError:
            if self.path.is_dir():
                raise UnmanagedError(
                    f"{self.path}: not a managed memory directory (no {MANIFEST}; run 'dreamd adopt {self.path}' or 'dreamd init')"
                ) from None
            raise UnmanagedError(f"{self.path}: no such directory") from None
        except OSError as exc:
            raise StoreError(f"{self.manifest_path}: cannot read ({exc.strerror or exc})") from None
        if data is None:
            assert cache is not None
            return cache[1]
        try:
            manifest = Manifest.loads(data, where=str(self.manifest_path))
        except StoreError as exc:
            attribute = manifest_merge_attribute(self.path)
            if attribute is None:
                raise
            raise StoreError(
                f"{exc}; {self.path}/.gitattributes says '{attribute}', so git merged it as text: restore it "
                f"(git checkout HEAD~1 -- {MANIFEST}, or the newest {HISTORY}/manifest-N.json), set "
                f"run 'dreamd sync {self.path} --install-merge-driver' (it puts dreamd's merge last) and commit .gitattributes"
            ) from None
        self._cache = ((st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size), manifest)
        return manifest

    @staticmethod
    def _copy(m: Manifest) -> Manifest:
        return m.replace(
            records=[e.replace(sources=list(e.sources), extra=dict(e.extra)) for e in m.records],
            applied_jobs=list(m.applied_jobs),
            sessions_since_consolidation=list(m.sessions_since_consolidation),
            cursors=dict(m.cursors),
            change=dict(m.change),
            extra=dict(m.extra),
        )

    def read_record(self, entry: ManifestEntry) -> Record:
        """The record a manifest entry names; RecordError (file named) if unreadable.

        The parse is kept per file, keyed on inode, mtime, ctime and size as the manifest's is
        (an extraction's supersession check reads the same few live records for every job; the
        YAML parse was a fifth of a committing job's time), so an edited file is parsed again
        and a file that became a link or a FIFO is still refused: the ``fstat`` runs each time.
        """
        path = self.path / entry.file
        cached = self._parsed.get(entry.file)

        def unchanged(st: os.stat_result) -> bool:
            return cached is not None and cached[0] == (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)

        try:
            st, data = read_regular_stat(path, max_bytes=MAX_RECORD_FILE_BYTES, unchanged=unchanged)
        except UnsafeFileError as exc:
            raise RecordError(str(exc)) from None
        except OSError as exc:
            raise RecordError(f"{path}: cannot read ({exc.strerror})") from None
        if data is None:
            assert cached is not None
            rec = cached[1]
        else:
            rec = self.parse_entry(entry, data)
            self._parsed_bytes += len(data)
            if self._parsed_bytes > PARSED_BYTES_KEPT:
                self._parsed.clear()  # atomic: readers of other threads may share the store
                self._parsed_bytes = len(data)
            self._parsed[entry.file] = ((st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size), rec)
        return rec if rec.name == entry.name else rec.replace(name=entry.name)

    def read_entry_bytes(self, entry: ManifestEntry) -> bytes:
        """The bytes of the file a manifest entry names; RecordError (file named) if unreadable."""
        path = self.path / entry.file
        try:
            return read_regular(path)
        except OSError as exc:
            raise RecordError(f"{path}: cannot read ({exc.strerror})") from None

    def parse_entry(self, entry: ManifestEntry, data: bytes) -> Record:
        """``data`` (the bytes of ``entry``'s file) as the record ``entry`` names; RecordError
        (file named) if they do not parse. Split from :meth:`read_record` so a caller that keeps
        parsed records by the hash of their bytes (recall's cache) parses exactly what it hashed."""
        path = self.path / entry.file
        stem = None if OUR_FILE_RE.match(entry.file) else path.stem
        rec = parse_record(data, where=str(path), stem=stem)
        return rec if rec.name == entry.name else rec.replace(name=entry.name)

    def resolve(self, names: Iterable[str], manifest: Manifest | None = None) -> tuple[dict[str, str], list[str]]:
        """Map names to manifest keys: a key itself, or a record's own frontmatter ``name``.

        A file someone else wrote keeps its file stem as its key (``feedback_db_tests``) while
        its frontmatter may say ``name: feedback-db-tests``; a person or an agent may use either.
        Returns (name -> key for the names found, names found nowhere). A name that is no key
        but the frontmatter name of several records raises StoreError naming them.
        """
        names = list(names)
        m = manifest if manifest is not None else self.read()
        keys = {e.name for e in m.records}
        found: dict[str, str] = {}
        missing = [n for n in names if n not in keys]
        for n in names:
            if n in keys:
                found[n] = n
        if not missing:
            return found, []
        aliases: dict[str, set[str]] = {}
        for entry in m.records:
            title = entry.title
            if title is None and not OUR_FILE_RE.match(entry.file) and "title" not in entry.extra:
                title = self._file_title(entry)  # adopted before titles were kept in the manifest
            if title:
                for alias in {title, title.strip().lower(), slugify(title)}:
                    aliases.setdefault(alias, set()).add(entry.name)
        unknown: list[str] = []
        for n in missing:
            matches = aliases.get(n) or aliases.get(n.strip().lower()) or set()
            if len(matches) > 1:
                raise StoreError(f"{self.path}: {n!r} names several records ({', '.join(sorted(matches))}); use one of those names")
            if matches:
                found[n] = next(iter(matches))
            else:
                unknown.append(n)
        return found, unknown

    def _file_title(self, entry: ManifestEntry) -> str | None:
        """A foreign file's own frontmatter name, read once per file version and process."""
        key = (entry.file, entry.sha256)
        if key not in self._titles:
            try:
                self._titles[key] = self.read_record(entry).title
            except RecordError:
                self._titles[key] = None
        return self._titles[key]

    def records(self, manifest: Manifest | None = None) -> list[tuple[ManifestEntry, Record]]:
        """Every readable record of the current set, or of ``manifest`` (one :meth:`read`
        already gave: the records of that generation, without copying it again); malformed
        files are skipped."""
        out = []
        for entry in (manifest if manifest is not None else self.read()).records:
            try:
                out.append((entry, self.read_record(entry)))
            except RecordError as exc:
                # reconcile reports malformed files once (store.malformed); readers stay quiet
                log.debug("record unreadable: %s", exc, extra={"event": "store.malformed"})
        return out

    # ------------------------------------------------------------------ creating

    @classmethod
    def init(cls, path: str | os.PathLike[str], **kwargs: Any) -> MemoryStore:
        """Create an empty managed directory (generation 0). Idempotent on an empty set."""
        store = cls(path, **kwargs)
        store.path.mkdir(parents=True, exist_ok=True)
        if store.is_managed():
            return store
        store._refuse_foreign_files()  # before the lock: refusing must leave no .lock behind
        with store_lock(store.path, store.lock_timeout):
            if store.is_managed():
                return store
            store._refuse_foreign_files()
            from memory.store.change import Pending

            store._write(None, [(Pending(entries=[], change={"actor": "init"}), None)])
        return store

    def _refuse_foreign_files(self) -> None:
        foreign = [p.name for p in record_files(self.path) if not OUR_FILE_RE.match(p.name)]
        if foreign:
            raise StoreError(
                f"{self.path}: already holds record files ({', '.join(sorted(foreign)[:3])}…); use 'dreamd adopt {self.path}'"
            )

    # ------------------------------------------------------------------ committing

    def commit(self, change: Change) -> CommitResult:
        """Apply ``change`` through the protocol of DESIGN §2.3; returns the new generation.

        A change whose ``job_id`` was already applied is a no-op (``duplicate=True``).
        Raises ConflictError (nothing written) when ``base`` no longer matches, LeaseLost when
        ``lease`` is no longer ours, LockTimeout when the store lock stays busy.
        """
        outcome = self.commit_all([change])[0]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def commit_all(self, changes: Sequence[Change], *, stop_at_failure: bool = False) -> list[CommitResult | DreamdError]:
        """A group commit: ``changes`` applied in order under one lock, one scan of what others
        did, one MEMORY.md write, one manifest rename and one set of directory fsyncs (DESIGN §3,
        "Group commit"); one outcome per change, in order.

        Each change is the generation it would have been committed alone (a bookkeeping one
        folds into the current generation in place), so ``dreamd log``, rollback, sync and the
        torture checker see every job's change under its own job id. A change whose job was
        already applied (before, or earlier in the group) is a duplicate no-op. A change that
        fails — ConflictError, LeaseLost, StoreError, RecordError — is that change's outcome
        and writes nothing; the others commit (``stop_at_failure``: the changes after it are
        not applied either and come back as :class:`~memory.errors.NotApplied`, for a caller
        whose later changes were prepared over the failed one's result). An error of the whole
        commit (the lock, the disk, an unsafe manifest) raises and leaves every change unapplied.
        """
        from memory.store.change import ACTORS, CommitResult, apply_change, touched_files

        for change in changes:
            if change.actor not in ACTORS:
                raise StoreError(f"{self.path}: unknown actor {change.actor!r}")
        if not changes:
            return []
        self.require_managed()
        with store_lock(self.path, self.lock_timeout):
            self._step("locked")
            old = self._load()
            outcomes: list[CommitResult | DreamdError | None] = [None] * len(changes)
            live: list[int] = []
            seen_jobs: set[str] = set()
            for i, change in enumerate(changes):
                if change.job_id and (change.job_id in old.applied_jobs or change.job_id in seen_jobs):
                    outcomes[i] = CommitResult(generation=old.generation, duplicate=True)
                else:
                    live.append(i)
                    if change.job_id:
                        seen_jobs.add(change.job_id)
            if not live:
                return [o for o in outcomes if o is not None]
            self.migrate_history()
            # What others did since the last commit joins this one (DESIGN §2.4): a file Claude
            # Code wrote a moment ago is adopted, a hand-deleted file leaves the set, and a file
            # a change touches is re-read if it was edited (a dream then conflicts).
            from memory.store.reconcile import scan_foreign

            touched: set[str] = set()
            for i in live:
                touched |= touched_files(old, changes[i])
            foreign = scan_foreign(self, old, verify=touched)
            base = foreign.manifest(old)
            now = utcnow_iso(self.clock())
            steps: list[tuple[Pending, Change]] = []
            applied: list[int] = []
            current = base
            stopped = False
            for i in live:
                change = changes[i]
                if stopped:
                    outcomes[i] = NotApplied(f"{self.path}: not applied: an earlier change of its group commit failed")
                    continue
                try:
                    self._verify(current, change)
                    pending = apply_change(current, change, now=now)
                except (StoreError, RecordError, LockError) as exc:  # LeaseLost is a LockError
                    outcomes[i] = exc
                    stopped = stop_at_failure
                    continue
                if not steps:
                    foreign.annotate(pending.change)
                steps.append((pending, change))
                applied.append(i)
                current = current.replace(records=pending.entries)
            self._step("verified")
            if not steps:
                return [o for o in outcomes if o is not None]
            written = self._write(old, steps, leftovers=foreign.leftovers, listing=foreign.listing, verified=base)
            not_archived = list(self.archive.not_archived)
            for n, (i, (pending, _)) in enumerate(zip(applied, steps, strict=True)):
                c = pending.change
                outcomes[i] = CommitResult(
                    generation=written[n].generation,
                    added=list(c.get("added", [])),
                    updated=list(c.get("updated", [])),
                    removed=list(c.get("removed", [])),
                    adopted=list(foreign.adopted) if n == 0 else [],
                    index_archived=c.get("index_archived"),
                    malformed=list(foreign.malformed) if n == 0 else [],
                    not_archived=not_archived,
                )
            return [o for o in outcomes if o is not None]

    def require_managed(self) -> None:
        """UnmanagedError *before* taking the lock: taking it would create ``.lock`` (and, with
        filelock, even the missing directory) in a directory dreamd must not write to yet."""
        if not os.path.isfile(self.manifest_path) or os.path.islink(self.manifest_path):
            self._load()

    def _verify(self, old: Manifest, change: Change) -> None:
        if change.base is not None:
            current = old.by_name()
            for name, sha in change.base.items():
                entry = current.get(name)
                if entry is None:
                    raise ConflictError(f"{self.path}: record {name!r} was removed since the plan was made")
                if entry.sha256 != sha:
                    raise ConflictError(f"{self.path}: record {name!r} changed since the plan was made")
        if change.lease is not None:
            change.lease.verify()

    def _write(
        self,
        old: Manifest | None,
        steps: Sequence[tuple[Pending, Change | None]],
        *,
        leftovers: Sequence[str] = (),
        listing: Sequence[str] | None = None,
        verified: Manifest | None = None,
    ) -> list[Manifest]:
        """Steps 4–7 of the protocol for one commit or a group of them; the manifest each of
        ``steps`` made, in order (the last is the one now current). Caller holds the store lock.

        Every step's record files are written before the one directory fsync, MEMORY.md is
        rendered once for the last set, and the generations before the last are kept in
        ``.history/`` (written there, fsynced) before the one ``manifest.json`` rename that
        commits them all. A kept manifest whose generation is not below the current one's is
        the leftover of a group killed before its commit point: readers pass over it
        (:meth:`history_manifests`) and the next commit of that generation replaces it.

        ``verified`` is the set the caller checked the files against, when it is not ``old`` (a
        commit's scan re-reads an edited file it touches, so a forget of a record edited a moment
        ago removes the edited version); the files the new set drops are held to its sha256s.

        ``leftovers`` are files an interrupted earlier commit removed from the set but did not
        move away yet; ``listing`` is the directory listing the caller already took (reused to
        look for orphans instead of listing a large directory twice).
        """
        from memory.store.change import advance

        files = [f for pending, _ in steps for f in pending.files]
        for file, data in files:
            write_new(self.path / file, data, sync_dir=False)
        if files:
            fsync_dir(self.path)
        self._step("files_written")

        last = steps[-1][0]
        index = render_index(last.entries, max_lines=self.index_max_lines, max_bytes=self.index_max_bytes)
        archived = self.replace_index(index, expected=old.index_sha256 if old is not None else "")
        if archived is not None:
            steps[0][0].change["index_archived"] = archived
        self._step("index_written")

        now = utcnow_iso(self.clock())
        made: list[Manifest] = []
        prev = old
        for n, (pending, change) in enumerate(steps):
            if n == len(steps) - 1:
                index_sha = sha256_hex(index)
            else:  # the index this generation would have had: what a rollback to it renders
                index_sha = sha256_hex(render_index(pending.entries, max_lines=self.index_max_lines,
                                                    max_bytes=self.index_max_bytes))
            prev = advance(prev, pending, change, now=now, index_sha256=index_sha,
                           archived=archived if n == 0 else None)
            made.append(prev)
        new = made[-1]

        # Keep every generation the group leaves behind, as it stood when the next one replaced
        # it: the old manifest by a link (as a single commit does), a generation made and
        # replaced inside the group by writing it.
        if old is not None:
            kept: dict[int, Manifest] = {}
            for m in [old, *made[:-1]]:
                if m.generation != new.generation:
                    kept[m.generation] = m
            wrote = False
            for generation, m in kept.items():
                if m is old:
                    self.link_history_manifest(old.generation)
                else:
                    self.archive.write_manifest(generation, m.dumps(fragments=self._fragments))
                    wrote = True
            if wrote:
                fsync_dir(self.history_path)
        self._step("history_linked")

        replace_atomic(self.manifest_path, new.dumps(fragments=self._fragments))
        # Still under the store lock, so the file at the path is the one just written: the next
        # commit of this process need not parse it back.
        st = os.stat(self.manifest_path)
        self._cache = ((st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size), new)
        for m in made:
            self.archive.remember(m.generation, frozenset(e.file for e in m.records))
        named = frozenset(e.file for e in new.records)
        self._named = (new, named)
        self._step("manifest_replaced")

        self.archive.not_archived = []
        if old is not None:
            # every file a generation of the group named and the last one does not, held to the
            # sha256 it had when it left (a record added and superseded inside the group too)
            gone: dict[str, str] = {}
            for m in [old, *made[:-1]]:
                gone.update((e.file, e.sha256) for e in m.records if e.file not in named)
            if gone and verified is not None and verified is not old:
                gone.update((e.file, e.sha256) for e in verified.records if e.file in gone)
            self.archive_replaced(gone)
        if leftovers:
            self.archive_files(leftovers)
        self.collect_orphans(named, listing=listing)
        self.report_malformed(self.archive.not_archived)
        self.prune_history(new.generation)
        self._step("cleaned")
        return made

    def write_set(
        self,
        old: Manifest | None,
        entries: list[ManifestEntry],
        *,
        files: Sequence[tuple[str, bytes]] = (),
        summary: dict[str, Any],
        leftovers: Sequence[str] = (),
        listing: Sequence[str] | None = None,
    ) -> Manifest:
        """Commit ``entries`` as the whole new set (steps 4–7 of DESIGN §2.3) for callers that
        build a set themselves (adoption, rollback, reconcile). The caller holds the store lock
        and has re-read ``old`` under it; ``files`` are the new files' names and bytes, written
        with O_EXCL before the commit point; ``summary`` becomes the manifest's ``change``."""
        from memory.store.change import Pending

        return self._write(
            old, [(Pending(entries=entries, files=list(files), change=summary), None)], leftovers=leftovers,
            listing=listing,
        )[-1]

    def link_history_manifest(self, generation: int) -> None:
        """Keep the current manifest (of ``generation``) in ``.history/`` before it is replaced
        (step 7); for sync, which replaces the manifest with a remote's bytes itself."""
        self.archive.link_manifest(self.manifest_path, generation)

    def forget_cached_manifest(self) -> None:
        """Parse ``manifest.json`` again on the next read (it was replaced by other means than
        :meth:`commit`, e.g. sync installing a remote set)."""
        self._cache = None

    def replace_index(self, index: bytes, *, expected: str) -> str | None:
        """Write MEMORY.md; a version this store did not render (its sha256 is not ``expected``)
        is kept in ``.history/`` first and its place returned (:meth:`Archive.replace_index`).
        Caller holds the store lock."""
        return self.archive.replace_index(index, expected=expected, clock=self.clock)

    def migrate_history(self) -> None:
        """Rename ``*.md`` archives of older versions in ``.history/`` to ``*.md.hist`` (once per
        store object); callers building a set themselves do this under the lock first, as
        :meth:`commit` does, so what they read from ``.history/`` is in its current form."""
        self.archive.migrate()

    def named_files(self, manifest: Manifest) -> frozenset[str]:
        """The files ``manifest`` names; free when it is the manifest this store last committed."""
        if self._named is not None and self._named[0] is manifest:
            return self._named[1]
        return frozenset(e.file for e in manifest.records)

    def report_malformed(self, malformed: Iterable[tuple[str, str]]) -> None:
        """Log each malformed file (name, reason) once per version and store object: a commit
        loop over a directory holding a broken file must not repeat the warning forever."""
        for file, reason in malformed:
            try:
                st = os.lstat(self.path / file)
                key = (file, st.st_size, st.st_mtime_ns)
            except OSError:
                key = (file, -1, -1)
            if key in self._reported_malformed:
                continue
            self._reported_malformed.add(key)
            log.warning("malformed record file left in place: %s", reason, extra={"event": "store.malformed", "file": file})

    def _step(self, name: str) -> None:
        if self._fault is not None:
            self._fault(name)

    # ------------------------------------------------------------------ history & cleanup

    def archive_replaced(self, expected: Mapping[str, str]) -> None:
        """Move the files a new set no longer names into ``.history/``, each held to the sha256
        it was verified at; an edited one is put back for adoption
        (:meth:`Archive.archive_unchanged`). Caller holds the store lock."""
        self.archive.archive_unchanged(expected)

    def archive_files(self, files: Iterable[str]) -> list[str]:
        """Move ``files`` into ``.history/`` (never losing a version); returns those moved.
        Caller holds the store lock."""
        return self.archive.archive(files)

    def collect_orphans(self, referenced: AbstractSet[str], *, listing: Sequence[str] | None = None) -> list[str]:
        """Move our own files no manifest names, older than ``orphan_grace``, into history (an
        interrupted commit's); ``listing`` reuses a listing the caller took under the lock."""
        return self.archive.collect_orphans(referenced, grace=self.orphan_grace, listing=listing)

    def prune_history(self, current_generation: int) -> None:
        """Keep the last ``history_generations`` manifests and the files they name."""
        self.archive.prune(current_generation, keep=self.history_generations)

    def history_manifests(self) -> list[int]:
        """Generations whose manifests are kept in ``.history/``, oldest first: those below the
        current one (one at or above it is what a group commit killed before its commit point
        left there, a generation that never was)."""
        current = self.read().generation
        return [g for g in self.archive.generations() if g < current]

    def read_generation(self, generation: int) -> Manifest:
        current = self.read()
        if generation == current.generation:
            return current
        path = self.archive.manifest_path(generation)
        try:
            self.archive.check()
            data = open_regular(path, max_bytes=MAX_MANIFEST_BYTES)
        except FileNotFoundError:
            raise StoreError(f"{self.path}: generation {generation} is not kept in {HISTORY}/") from None
        except OSError as exc:
            raise StoreError(f"{path}: cannot read ({exc.strerror or exc})") from None
        return Manifest.loads(data, where=str(path))

    # ------------------------------------------------------------------ reconcile

    def reconcile(self) -> ReconcileReport:
        """Take in what others did (DESIGN §2.4) in at most one commit."""
        from memory.store.reconcile import reconcile as reconcile_directory

        return reconcile_directory(self)

    def scan_malformed(self, *, read: dict[str, bytes] | None = None) -> list[tuple[str, str]]:
        """Files in the directory that cannot be read as records (read-only check).

        With ``read``, the bytes of every record file this scan read are kept there by file
        name, for a caller that reads the same files next (doctor's secret scan reads each
        file once, issue 20)."""
        try:
            manifest = self.read()
            by_file = {e.file: e for e in manifest.records}
        except UnmanagedError:
            by_file = {}
        out: list[tuple[str, str]] = []
        try:
            self.archive.check()
        except UnsafeFileError as exc:
            out.append((HISTORY, str(exc)))
        try:
            if os.path.isdir(self.path / INDEX) and not os.path.islink(self.path / INDEX):
                out.append((INDEX, f"{self.path / INDEX}: is a directory; the index is not written until it is moved away"))
        except OSError:
            pass
        for path in record_files(self.path):
            entry = by_file.get(path.name)
            if OUR_FILE_RE.match(path.name) and entry is None:
                continue
            bad_name = bad_file_name(self.path, path.name)
            if bad_name is not None:
                out.append((shown_name(path.name), bad_name))
                continue
            try:
                data = read_regular(path, single_link=entry is None)
                if read is not None:
                    read[path.name] = data
                if entry is not None and sha256_hex(data) == entry.sha256:
                    continue
                parse_record(data, where=str(path), stem=path.stem)
            except (RecordError, OSError) as exc:
                out.append((path.name, str(exc)))
        return out


def open_store(path: str | os.PathLike[str], **kwargs: Any) -> MemoryStore:
    """A store for an existing managed directory (UnmanagedError otherwise)."""
    store = MemoryStore(path, **kwargs)
    store.read()
    return store


__all__ = [
    "ACTORS",
    "ARCHIVE_SUFFIX",
    "HISTORY",
    "INDEX",
    "MANIFEST",
    "MAX_SOURCES",
    "ORPHAN_PREFIX",
    "OUR_FILE_RE",
    "PREVIOUS_INDEX_PREFIX",
    "Change",
    "CommitResult",
    "FaultHook",
    "MemoryStore",
    "ReconcileReport",
    "foreign_entry",
    "open_store",
    "read_regular",
    "record_file_name",
]
"""Besides the store itself, :class:`Change` and :class:`CommitResult` (:mod:`memory.store.change`),
the names of :mod:`memory.store.layout` and the reconcile types are re-exported: callers that import
them from here keep working."""


def __getattr__(name: str) -> Any:
    """The change and reconcile names re-exported above, loaded on first use (PEP 562): a
    reader (``dreamd status``, ``recall``, ``doctor``) never pays for the commit's types."""
    if name in ("ACTORS", "Change", "CommitResult"):
        from memory.store import change

        return getattr(change, name)
    if name in ("ReconcileReport", "foreign_entry"):
        from memory.store import reconcile

        return getattr(reconcile, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
