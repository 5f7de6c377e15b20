"""Writing a set that arrived from a remote into a memory directory through the store's commit
protocol (DESIGN §2.3 steps 4–7): new files created without overwriting and durable before their
names appear, MEMORY.md rendered (a hand edit archived first), the old manifest kept in
``.history/``, the manifest rename as the commit point, replaced files moved to ``.history/``.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from dreamd.sync.git import SyncError
from memory.errors import StoreError
from memory.fsutil import fsync_dir, open_regular, replace_atomic, write_new, write_temp
from memory.store.index import render_index
from memory.store.layout import MAX_RECORD_FILE_BYTES
from memory.store.manifest import Manifest, ManifestEntry
from memory.store.records import sha256_hex
from memory.store.transaction import HISTORY, MemoryStore


def locate(store: MemoryStore, entry: ManifestEntry) -> Path | None:
    """Where the exact bytes an entry committed are on disk: the directory or ``.history/``.

    Only a regular file of this user's counts (:func:`memory.fsutil.open_regular`): a link, a FIFO,
    another uid's file or one over the record cap is never read, so never published."""

    def matches(path: Path) -> bool:
        try:
            return sha256_hex(open_regular(path, max_bytes=MAX_RECORD_FILE_BYTES)) == entry.sha256
        except (OSError, StoreError):
            return False

    hist = store.path / HISTORY
    for path in (store.path / entry.file, hist / entry.file, hist / f"orphan.{entry.file}"):
        if matches(path):
            return path
    if hist.is_dir():
        for path in sorted(hist.glob(f"{entry.file}.*")):
            if matches(path):
                return path
    return None


BULK_FILES = 16


def _syncfs(directory: Path, files: list[Path]) -> None:
    """Make ``files`` (all in ``directory``) durable: one Linux ``syncfs`` of the file system
    holding them, else an ``fsync`` of each.

    A ``syncfs`` that fails raises its error: ``sync(2)`` reports none, so falling back to it
    would let a write error (EIO, a full thin volume) pass as durable and the files' names
    appear over bytes that never reached the disk."""
    import ctypes
    import errno

    syncfs = getattr(ctypes.CDLL(None, use_errno=True), "syncfs", None)
    if syncfs is None:  # not Linux: one fsync per file, each one's error raised
        for path in files:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        return
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if syncfs(fd) != 0:
            err = ctypes.get_errno() or errno.EIO
            raise OSError(err, f"syncfs: {os.strerror(err)}", str(directory))
    finally:
        os.close(fd)


def write_files(directory: Path, files: dict[str, bytes]) -> list[str]:
    """Create every file (never overwriting), its bytes durable before its name appears.

    Few files: :func:`write_new` each (temp, fsync, link). Many (a first clone): every temp file
    is written, then one ``syncfs`` makes them all durable, then they are linked to their names;
    the same guarantee for one flush instead of a thousand. Returns the names created (a name
    already present with the same bytes is skipped; with other bytes it is an error).
    """
    todo: dict[str, bytes] = {}
    for file, data in files.items():
        path = directory / file
        try:
            have = open_regular(path, max_bytes=MAX_RECORD_FILE_BYTES)
        except FileNotFoundError:
            todo[file] = data
            continue
        except StoreError as exc:  # a link, a FIFO, another uid's file: never followed, read or replaced
            raise SyncError(f"{exc}; the remote set names it, so nothing is installed") from None
        if sha256_hex(have) != sha256_hex(data):
            raise SyncError(f"{path}: exists with other content; refusing to overwrite it")
    if len(todo) < BULK_FILES:
        for file, data in todo.items():
            write_new(directory / file, data, sync_dir=False)
    else:
        temps: dict[str, Path] = {}
        try:
            for file, data in todo.items():
                # write_temp names the record it could not write (a full disk) and leaves no
                # temp file behind; durability comes from the one syncfs below.
                temps[file] = write_temp(directory, data, final=directory / file, durable=False)
            _syncfs(directory, list(temps.values()))
            for file, tmp in temps.items():
                os.link(tmp, directory / file)
        finally:
            for tmp in temps.values():
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
    if todo:
        fsync_dir(directory)
    return list(todo)


def install(store: MemoryStore, old: Manifest, new: Manifest, files: dict[str, bytes], *, raw: bytes | None = None) -> Manifest:
    """Commit ``new`` through the store's protocol (DESIGN §2.3 steps 4–7). Caller holds the lock.

    ``files`` are the incoming records (already validated); a name already on disk with the
    same bytes is reused. ``raw``, when given, are the manifest's exact bytes (a remote set taken
    as it is, so this machine's tree equals the remote commit's); its ``index_sha256`` must match
    the index rendered here.
    """
    write_files(store.path, files)
    index = render_index(new.records, max_lines=store.index_max_lines, max_bytes=store.index_max_bytes)
    if raw is None:
        new.index_sha256 = sha256_hex(index)
        raw = new.dumps()
    elif sha256_hex(index) != new.index_sha256:
        raise SyncError(f"{store.path}: the remote index does not match the one rendered here")
    # A version of MEMORY.md this store did not render (a hand or Claude Code edit) is kept.
    store.replace_index(index, expected=old.index_sha256)
    store.link_history_manifest(old.generation)
    replace_atomic(store.manifest_path, raw)
    store.forget_cached_manifest()
    keep = {e.file for e in new.records}
    # The network fetch ran outside the store lock: a file edited by hand meanwhile is put back.
    store.archive_replaced({e.file: e.sha256 for e in old.records if e.file not in keep})
    store.prune_history(new.generation)
    return new


__all__ = ["BULK_FILES", "install", "locate", "write_files"]
