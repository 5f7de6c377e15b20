"""``.history/``: where everything a memory directory stops naming goes, and when it may leave.

The store's promise "nothing is lost" lives here (DESIGN §2, §3 steps 6–8):

* a file the set no longer names is *moved* into ``.history/`` after the commit point, never
  deleted; a name already taken there by other bytes gets a random suffix;
* our own files that no manifest names (an interrupted commit's) are collected after a grace
  period as ``orphan.<file>``, a prefix pruning never touches;
* the manifest each commit replaces is hard-linked in as ``manifest-<generation>.json``, and
  pruning keeps the last N of them and the files they name — only files dreamd wrote ever
  leave, foreign ones stay forever;
* a MEMORY.md dreamd did not render is kept before the index replaces it;
* nothing under ``.history/`` ends in ``.md`` (:data:`~memory.store.layout.ARCHIVE_SUFFIX`).

One :class:`Archive` belongs to one :class:`~memory.store.transaction.MemoryStore` and caches what it
learns (which files old manifests name, whether old ``*.md`` archives were renamed); callers
hold the store lock for everything that writes. The store passes its settings (generations
kept, orphan grace, clock) on each call, so changing them on the store takes effect at once.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime
from pathlib import Path

from memory.errors import RecordError, StoreError, UnsafeFileError
from memory.fsutil import (
    TMP_PREFIX,
    check_dir,
    ensure_dir,
    file_kind,
    fsync_dir,
    open_regular,
    replace_atomic,
    write_new,
    write_temp,
)
from memory.lazylog import get_logger
from memory.store.layout import (
    ARCHIVE_SUFFIX,
    HISTORY,
    HISTORY_MANIFEST_RE,
    INDEX,
    MAX_INDEX_BYTES,
    MAX_MANIFEST_BYTES,
    MAX_RECORD_FILE_BYTES,
    ORPHAN_PREFIX,
    OUR_FILE_RE,
    PREVIOUS_INDEX_PREFIX,
    history_manifest_name,
    read_regular,
)
from memory.store.records import sha256_hex

TYPE_CHECKING = False  # not typing's: importing typing is a start-up cost (issue 20)
if TYPE_CHECKING:
    from typing import Any

log = get_logger("memory.store")


def _restore_name(root: Path, file: str) -> str:
    """A free foreign file name for an edited record file put back: its record name, ``.md``."""
    m = OUR_FILE_RE.match(file)
    stem = m.group("name") if m else file.removesuffix(".md")
    name = f"{stem}.md"
    while os.path.lexists(root / name) or OUR_FILE_RE.match(name):
        name = f"{stem}.edited-{os.urandom(3).hex()}.md"
    return name


class Archive:
    """The ``.history/`` directory of the memory directory ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / HISTORY
        self._files: dict[int, frozenset[str]] = {}
        self._migrated = False
        self._oldest: int | None = None
        """The oldest kept generation the last listing saw (:meth:`prune`)."""
        self._previous_indexes: set[str] = set()
        self.not_archived: list[tuple[str, str]] = []
        """``(file, reason)`` of each file a move into ``.history/`` left in place because it
        is not a regular file (or, dropped from the set, could not be verified): the store
        clears it before a commit's cleanup and reports what it holds after."""
        self.changes: dict[int, tuple[int, dict[str, Any]]] = {}
        """``(generation, change)`` of kept manifests already read, by generation, for
        :func:`memory.store.history.change_summaries`: kept manifests never change once linked
        (as :meth:`files_of` relies on), and a forget of a name that is not there walks every
        one of them (406 ms a job in a 20-minute torture run, which keeps all history). Shared
        with callers, which only read it."""

    def ensure(self) -> Path:
        """``.history/``, created (and made durable in its parent) when missing; UnsafeFileError
        when it is a symbolic link, not a directory, or someone else's: every rename into it
        would land wherever it points (DESIGN §2, "A directory is not trusted")."""
        return ensure_dir(self.path)

    def check(self) -> bool:
        """Whether ``.history/`` exists; UnsafeFileError as :meth:`ensure` says. Every reader
        and writer of the archive asks this first, so nothing is read or renamed through a
        link someone planted there."""
        return check_dir(self.path)

    # ------------------------------------------------------------------ manifests

    def link_manifest(self, manifest_path: Path, generation: int) -> None:
        """Keep the manifest about to be replaced as ``manifest-<generation>.json`` (a link)."""
        hist = self.ensure()
        target = hist / history_manifest_name(generation)
        try:
            os.link(manifest_path, target)
        except FileExistsError:
            # A crashed attempt at this same commit linked it already: same generation, keep it;
            # unless it is another file, which a group commit killed before its commit point
            # wrote there for a generation that never was (DESIGN §3, "Group commit").
            with contextlib.suppress(OSError):
                if os.path.samefile(manifest_path, target):
                    return
            tmp = hist / f"{TMP_PREFIX}{history_manifest_name(generation)}.{os.getpid()}"
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            try:
                os.link(manifest_path, tmp)
            except FileNotFoundError:
                return
            os.replace(tmp, target)
        except FileNotFoundError:
            return
        fsync_dir(hist)

    def write_manifest(self, generation: int, data: bytes) -> None:
        """Keep ``data`` as ``manifest-<generation>.json``, a generation a group commit made and
        replaced before its commit point (replacing what a killed group left there); the file is
        fsynced, its directory is the caller's to fsync."""
        replace_atomic(self.ensure() / history_manifest_name(generation), data, sync_dir=False)

    def generations(self) -> list[int]:
        """Generations whose manifests are kept, oldest first."""
        out = []
        if not self.check():
            return []
        try:
            names = os.listdir(self.path)
        except FileNotFoundError:
            return []
        for n in names:
            m = HISTORY_MANIFEST_RE.fullmatch(n)
            if m:
                out.append(int(m.group(1)))
        return sorted(out)

    def manifest_path(self, generation: int) -> Path:
        return self.path / history_manifest_name(generation)

    def remember(self, generation: int, files: frozenset[str]) -> None:
        """Seed the cache of :meth:`files_of` with a manifest the store just wrote."""
        self._files[generation] = files

    def files_of(self, generation: int) -> frozenset[str]:
        """The files a kept manifest names. History manifests never change once linked, so this
        is cached (and seeded by :meth:`remember` for the manifests this store wrote): pruning
        then does not parse dozens of large manifests every time it runs."""
        files = self._files.get(generation)
        if files is None:
            path = self.manifest_path(generation)
            try:
                raw = json.loads(open_regular(path, max_bytes=MAX_MANIFEST_BYTES))
                files = frozenset(str(r["file"]) for r in raw["records"])
            except (OSError, ValueError, KeyError, TypeError, RecursionError, RecordError):
                return frozenset()
            self._files[generation] = files
        return files

    def prune(self, current_generation: int, *, keep: int) -> None:
        """Keep the last ``keep`` manifests and the files they name (batched to stay cheap).
        Nothing is deleted silently: a prune is logged as ``store.history_pruned`` with every
        generation and file it removed."""
        keep_from = current_generation - keep
        # Listing a large .history/ on every commit was 8 % of a torture drain. Kept manifests
        # are only ever added above the ones there (a commit keeps the generation it replaces),
        # so while the oldest one seen leaves fewer than 10 below the window none can be due.
        if self._oldest is not None and keep_from - self._oldest < 10:
            return
        gens = self.generations()
        self._oldest = gens[0] if gens else current_generation
        if len([g for g in gens if g < keep_from]) < 10:
            return
        pruned: list[int] = []
        for g in gens:
            if g < keep_from:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.manifest_path(g))
                    pruned.append(g)
        for g in [g for g in self._files if g < keep_from]:
            del self._files[g]
        # Membership per candidate, not one big union: a kept set of 10,000 records times 50
        # generations would be half a million insertions on every prune.
        left = self.generations()
        self._oldest = left[0] if left else current_generation
        kept = [self.files_of(g) for g in left]
        removed: list[str] = []
        with os.scandir(self.path) as it:
            for de in it:
                base = de.name.split(".md.", 1)[0] + ".md" if ".md." in de.name else de.name
                # Only files dreamd wrote are ever pruned; foreign files stay forever.
                if OUR_FILE_RE.match(base) and not any(base in files for files in kept):
                    with contextlib.suppress(OSError):
                        os.unlink(de.path)
                        removed.append(de.name)
        fsync_dir(self.path)
        if pruned or removed:
            log.info(
                "pruned %s/ of %s: %d generation(s) before %d and %d file(s) no kept generation names",
                HISTORY, self.root, len(pruned), keep_from, len(removed),
                extra={"event": "store.history_pruned", "memory_dir": str(self.root), "kept_from": keep_from,
                       "generations": pruned, "files": sorted(removed)},
            )

    # ------------------------------------------------------------------ files

    def archive(self, files: Iterable[str], *, prefix: str = "") -> list[str]:
        """Move ``files`` from the directory into ``.history/``; returns those moved.

        A name already kept gets a random suffix, so no version is ever lost.
        """
        moved = [file for file in files if self._move(file, prefix) is not None]
        if moved:
            fsync_dir(self.path)
            fsync_dir(self.root)
        return moved

    def _move(self, file: str, prefix: str = "") -> Path | None:
        """Move one file into ``.history/``; where its bytes are now kept, None when it is gone
        or is not a regular file. The caller syncs the two directories.

        Always a rename, never an unlink of a copy believed identical: a write landing between
        a comparison and an unlink would be lost; a name already taken gets a random suffix.
        ``.history/`` keeps only regular files (DESIGN §2, "A directory is not trusted"): a
        symbolic link, a FIFO, a socket or a device under a record's name holds no record bytes
        to keep, and a link kept there would point out of the directory from the archive. It is
        left where it is, never opened, and named in :attr:`not_archived`.
        """
        src = self.root / file
        try:
            st = os.lstat(src)
        except FileNotFoundError:
            return None
        if not stat.S_ISREG(st.st_mode):
            self._not_archived(file, f"{src}: is {file_kind(st.st_mode)}, not a regular file")
            return None
        hist = self.ensure()
        target = hist / f"{prefix}{file}{ARCHIVE_SUFFIX}"
        if os.path.lexists(target):
            target = hist / f"{prefix}{file}.{os.urandom(6).hex()}{ARCHIVE_SUFFIX}"
        os.rename(src, target)
        return target

    def _not_archived(self, file: str, reason: str) -> None:
        self.not_archived.append(
            (file, f"{reason}: left in place, not kept in .history/ (which keeps only regular files of ours); remove it by hand")
        )

    def restore(self, file: str, data: bytes) -> str:
        """Put the bytes of an edited record file back into the directory under a foreign name of
        its own (``<record name>.md``, with a suffix when taken), for the next scan to adopt
        (DESIGN §2.4); returns that name. Idempotent: when a ``*.md`` file of the directory
        already holds exactly these bytes (an earlier attempt that crashed afterwards), that one
        is returned and nothing is written, so a recovery never adopts the same edit twice.
        Logged as ``store.edit_kept``."""
        name = self._restored_name(file, data)
        log.warning(
            "%s was edited while a commit replaced it; the edited version is kept as %s", file, name,
            extra={"event": "store.edit_kept", "file": file, "restored_as": name},
        )
        return name

    def _restored_name(self, file: str, data: bytes) -> str:
        sha = sha256_hex(data)
        for name in sorted(os.listdir(self.root)):
            if not name.endswith(".md") or name in (INDEX, file) or OUR_FILE_RE.match(name):
                continue  # ``file`` itself is on its way to .history/
            with contextlib.suppress(OSError, RecordError):
                path = self.root / name
                if os.lstat(path).st_size == len(data) and sha256_hex(read_regular(path)) == sha:
                    return name
        name = _restore_name(self.root, file)
        write_new(self.root / name, data, sync_dir=True)
        return name

    def archive_unchanged(self, expected: Mapping[str, str]) -> list[tuple[str, str]]:
        """Move the files of ``expected`` (file → the sha256 the commit verified for it) into
        ``.history/`` like :meth:`archive`; returns ``(file, restored_as)`` for each file whose
        bytes were no longer those.

        Such a file was edited after the commit verified it (a person's editor, another tool:
        they take no lock), so the set that replaced it never saw the edit; its bytes are put
        back with :meth:`restore`. The file is read before the move and the edit restored
        first, so a crash after that leaves the edit in the directory; the moved bytes are
        compared again after the move (a rename is atomic: a write that finished before it is in
        the moved file). What can still slip through: a write landing between that first read
        and the move, when the process then dies before the second comparison, or a write into
        a descriptor opened before the move that lands after the second comparison — both end in
        the ``.history/`` copy only. A file this commit left behind unmoved (a crash before this
        step) is checked by the next scan (:func:`memory.store.reconcile.scan_foreign`).
        """
        restored: list[tuple[str, str]] = []
        moved = False
        for file, sha in expected.items():
            try:
                before = read_regular(self.root / file)
            except FileNotFoundError:
                continue
            except (OSError, RecordError) as exc:
                # A link, a FIFO, a file grown over the cap or another uid's: its bytes cannot be
                # held to the sha256, so it is never read, never moved, and said so.
                with contextlib.suppress(OSError):
                    mode = os.lstat(self.root / file).st_mode
                    reason = str(exc).removesuffix("; not read")
                    if not stat.S_ISREG(mode):
                        reason = f"{self.root / file}: is {file_kind(mode)}, not a regular file"
                    self._not_archived(file, reason)
                continue
            if sha256_hex(before) != sha:
                restored.append((file, self.restore(file, before)))
            kept = self._move(file)
            if kept is None:
                continue
            moved = True
            try:
                after = open_regular(kept, max_bytes=MAX_RECORD_FILE_BYTES)
            except OSError:
                continue
            if after != before and sha256_hex(after) != sha:
                restored.append((file, self.restore(file, after)))
        if moved:
            fsync_dir(self.path)
            fsync_dir(self.root)
        return restored

    def collect_orphans(self, referenced: AbstractSet[str], *, grace: float, listing: Sequence[str] | None = None) -> list[str]:
        """Move our own unreferenced record files (interrupted commits) into history, and delete
        our stale temp files; both only when older than ``grace`` seconds."""
        cutoff = time.time() - grace
        orphans: list[str] = []
        # listdir, not scandir: this runs on every commit and a set of 10,000 records would pay
        # for 10,000 DirEntry objects; a set difference leaves only the rare candidates.
        names = os.listdir(self.root) if listing is None else listing
        for name in sorted(set(names).difference(referenced)):
            if name.startswith(TMP_PREFIX):
                with contextlib.suppress(OSError):
                    if os.stat(self.root / name).st_mtime < cutoff:
                        os.unlink(self.root / name)
                continue
            if not OUR_FILE_RE.match(name):
                continue
            with contextlib.suppress(OSError):  # lstat: a link's target's age is not the link's
                if os.lstat(self.root / name).st_mtime < cutoff:
                    orphans.append(name)
        if orphans:
            # ORPHAN_PREFIX keeps them out of pruning: a file only *named* like ours may be a
            # person's, and nothing dreamd did not write is ever deleted.
            self.archive(orphans, prefix=ORPHAN_PREFIX)
            log.info("collected %d orphan file(s) in %s", len(orphans), self.root)
        return orphans

    def migrate(self) -> None:
        """Rename ``.history/*.md`` (written before archives got :data:`ARCHIVE_SUFFIX`) so
        Claude Code's recursive scan never reads them; once per archive object."""
        if self._migrated:
            return
        try:
            names = os.listdir(self.path)
        except (FileNotFoundError, NotADirectoryError):
            names = []
        if names:
            self.check()
        moved = 0
        for name in names:
            if name.startswith(PREVIOUS_INDEX_PREFIX):
                self._previous_indexes.add(name)
            if not name.endswith(".md"):
                continue
            target = self.path / f"{name}{ARCHIVE_SUFFIX}"
            if os.path.lexists(target):
                target = self.path / f"{name}.{os.urandom(6).hex()}{ARCHIVE_SUFFIX}"
            with contextlib.suppress(FileNotFoundError):
                os.rename(self.path / name, target)
                moved += 1
        if moved:
            fsync_dir(self.path)
            log.info("renamed %d archived .md file(s) in %s/ to *.md%s", moved, HISTORY, ARCHIVE_SUFFIX)
        self._migrated = True

    # ------------------------------------------------------------------ the index

    def replace_index(self, index: bytes, *, expected: str, clock: Callable[[], datetime]) -> str | None:
        """Write MEMORY.md; a version dreamd did not render (``expected``) is kept in history.

        Returns where that version was kept (``.history/<name>``), else None.

        Claude Code edits MEMORY.md without our lock, so no version it wrote may vanish under
        the replace. Where the kernel can (Linux ``renameat2(RENAME_EXCHANGE)``) the new index
        and the file there are swapped in one step and the old one is moved into ``.history/``:
        whatever was at the name at that instant is kept, however it was written. Elsewhere the
        file is hard-linked into ``.history/`` just before the rename (a few syscalls apart).
        Either way an edit that lands on the old inode afterwards (a writer that opened it just
        before) is in the kept file. When its bytes are the index we rendered, it is kept one
        more commit as ``MEMORY.previous-<sha256>.hist`` and checked again then, so even a
        write that comes after this check shows up as a foreign version.
        """
        self.migrate()
        self._settle_previous_indexes(clock)
        path = self.root / INDEX
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            st = None
        held_name = f"MEMORY-{clock().strftime('%Y%m%dT%H%M%S')}-{os.urandom(3).hex()}.md{ARCHIVE_SUFFIX}"
        held: Path | None = None
        if st is not None and stat.S_ISDIR(st.st_mode):
            # Nothing may replace a directory, and nothing in it is dreamd's to move: the set
            # commits without its index, and says why once per commit (store.index_blocked).
            log.warning(
                "%s is a directory, not a file: the index is not written until it is moved away", path,
                extra={"event": "store.index_blocked", "path": str(path)},
            )
            return None
        if st is not None and stat.S_ISREG(st.st_mode) and st.st_size == len(index) and self._holds(path, index):
            # Already these bytes (a commit that changed no record, or one whose records do
            # not show in the index): nothing to write and nothing anyone wrote to keep. A
            # write landing after this check is on the live file, which the next commit finds
            # foreign and keeps. Rewriting cost a fsync, three renames and two reads a commit.
            return None
        if st is not None and not stat.S_ISREG(st.st_mode):
            # A link, a FIFO, a device: replaced by the index (a rename), never followed or read.
            hist = self.ensure()
            tmp = write_temp(hist, index, final=path)
            try:
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            return None
        # Staged inside .history/: if we die right after the swap, the old index is left there
        # (never collected as a stale temp file of the directory itself).
        hist = self.ensure()
        tmp = write_temp(hist, index, final=path)
        try:
            swapped = st is not None and _exchange(tmp, path)
            if swapped:
                held = hist / held_name
                os.rename(tmp, held)  # the old index, whoever wrote it
            else:
                if st is not None:
                    held = hist / held_name if _link_or_copy(path, hist / held_name, expected) else None
                os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        if held is None:
            return None
        try:
            data = open_regular(held, max_bytes=MAX_INDEX_BYTES, oversize="truncate")
        except FileNotFoundError:
            return None
        except UnsafeFileError:
            data = b""  # another user's file is never one we rendered: kept as a foreign version
        sha = sha256_hex(data)
        if expected and sha == expected:
            previous = held.with_name(f"{PREVIOUS_INDEX_PREFIX}{sha}{ARCHIVE_SUFFIX}")
            os.replace(held, previous)
            self._previous_indexes.add(previous.name)
            return None
        fsync_dir(held.parent)
        log.info("archived foreign MEMORY.md edit as %s/%s", HISTORY, held.name, extra={"event": "store.index_archived"})
        return f"{HISTORY}/{held.name}"

    @staticmethod
    def _holds(path: Path, data: bytes) -> bool:
        """Whether the regular file at ``path`` holds exactly ``data`` (read without following
        a link, at most ``len(data) + 1`` bytes)."""
        try:
            return open_regular(path, max_bytes=len(data) + 1, oversize="truncate") == data
        except (OSError, StoreError):  # gone, a link or a FIFO swapped in: write it as usual
            return False

    def _settle_previous_indexes(self, clock: Callable[[], datetime]) -> None:
        """Drop the copies of our own replaced indexes, or keep one as a foreign version if
        someone wrote to it after it was replaced (see :meth:`replace_index`)."""
        for name in sorted(self._previous_indexes):
            self._previous_indexes.discard(name)
            path = self.path / name
            try:
                data = open_regular(path, max_bytes=MAX_INDEX_BYTES, oversize="truncate")
            except FileNotFoundError:
                continue
            except OSError:
                data = b""  # not ours to judge: kept below as a foreign version
            if sha256_hex(data) == name[len(PREVIOUS_INDEX_PREFIX) : -len(ARCHIVE_SUFFIX)]:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
                continue
            kept = path.with_name(f"MEMORY-{clock().strftime('%Y%m%dT%H%M%S')}-{os.urandom(3).hex()}.md{ARCHIVE_SUFFIX}")
            os.rename(path, kept)
            fsync_dir(self.path)
            log.info("archived a late MEMORY.md edit as %s/%s", HISTORY, kept.name, extra={"event": "store.index_archived"})


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_renameat2: Any = None
"""libc's renameat2 once looked up; False where there is none (not Linux, old libc)."""


def _exchange(a: Path, b: Path) -> bool:
    """Swap the names ``a`` and ``b`` atomically; False where the kernel or the file system
    cannot (the caller falls back). FileNotFoundError when either is missing."""
    global _renameat2
    if _renameat2 is None:
        _renameat2 = False
        if sys.platform.startswith("linux"):
            import ctypes
            import ctypes.util

            with contextlib.suppress(OSError, AttributeError):
                libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
                fn = libc.renameat2
                fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
                fn.restype = ctypes.c_int
                _renameat2 = fn
    if _renameat2 is False:
        return False
    import ctypes

    if _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err == errno.ENOENT:
        return False
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False  # this file system cannot swap: fall back, try again next time
    raise OSError(err, os.strerror(err), str(b))


def exchange_supported() -> bool:
    """Whether this process can swap names atomically (tests run both paths)."""
    _exchange(Path("/nonexistent-dreamd-a"), Path("/nonexistent-dreamd-b"))
    return _renameat2 is not False


def _link_or_copy(path: Path, held: Path, expected: str) -> bool:
    """Keep the file at ``path`` as ``held`` (a hard link, else a copy unless it is ours)."""
    try:
        os.link(path, held)
        return True
    except FileNotFoundError:
        return False
    except OSError:  # no hard links here (some network file systems): keep a copy
        try:
            data = open_regular(path, max_bytes=MAX_INDEX_BYTES)
        except FileNotFoundError:
            return False
        if expected and sha256_hex(data) == expected:
            return False
        write_new(held, data)
        return True


__all__ = ["Archive", "exchange_supported"]
