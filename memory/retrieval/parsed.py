"""Recall's cache of parsed records: body and importance by the sha256 of a record file's bytes.

A cold recall (``dreamd recall``, a fresh process's first ``memory.recall``) reads every record
of the set to index it, and parsing each file's YAML frontmatter, PyYAML's import included, was
most of its time (issue 20). What a file's bytes parse to never changes, so
``<dir>/.recall/parsed.json`` keeps ``sha256 -> [body, importance]`` for the records of the set.

Invariants:

- Derived and rebuildable, never authoritative: every file is still read and hashed, and only
  a hash found in the cache skips the parse; what is kept for a hash is exactly what
  :meth:`memory.store.transaction.MemoryStore.parse_entry` returned for bytes with that hash.
  Deleting the cache costs the next recall its parses, nothing else.
- Only parses that succeeded are kept: an unreadable or malformed file raises as before, every
  time it is read.
- Hidden like ``.embeddings`` (dot-entries are never records, and sync's ``.gitignore`` keeps
  them out of git); never read or written through a symlink, never read over
  :data:`MAX_CACHE_BYTES` or when another user owns it. A cache that cannot be read is ignored
  (and rewritten), one that cannot be written is simply not kept: recall never fails because of it.
- It holds the records of the set it was written for (0600 in a 0700 folder: the bodies are
  the records' own text) and is rewritten only when a parse was added.

Client path: stdlib + ``memory`` only.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

from memory.errors import UnsafeFileError
from memory.fsutil import open_regular, replace_atomic
from memory.lazylog import get_logger
from memory.store.manifest import Manifest, ManifestEntry
from memory.store.records import sha256_hex
from memory.store.transaction import MemoryStore

__all__ = ["CACHE_DIR", "CACHE_FILE", "MAX_CACHE_BYTES", "ParsedRecords"]

log = get_logger("memory.recall")

CACHE_DIR = ".recall"
CACHE_FILE = "parsed.json"
FORMAT = 1
MAX_CACHE_BYTES = 32 * 1024 * 1024
"""A larger cache is neither read nor written (the set is then parsed, as without one)."""


class ParsedRecords:
    """One directory's parsed-record cache, loaded on first use and saved after new parses."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self._known: dict[str, tuple[str, float]] | None = None
        self._added = False
        self._seen: dict[str, str] = {}
        """Record name -> hash of the bytes last read for it (a file edited by hand has one its
        manifest entry does not name)."""
        self._lock = threading.Lock()

    @property
    def folder(self) -> Path:
        return self.store.path / CACHE_DIR

    def read(self, entry: ManifestEntry) -> tuple[str, float]:
        """``(body, importance)`` of the record ``entry`` names, as
        ``store.read_record(entry)`` has them; RecordError (file named) as it raises."""
        data = self.store.read_entry_bytes(entry)
        sha = sha256_hex(data)
        with self._lock:
            hit = self._load().get(sha)
            self._seen[entry.name] = sha
        if hit is not None:
            return hit
        record = self.store.parse_entry(entry, data)
        parsed = (record.body, record.importance)
        with self._lock:
            self._load()[sha] = parsed
            self._added = True
        return parsed

    def save(self, manifest: Manifest) -> None:
        """Write the cache when a parse was added, keeping only the hashes ``manifest`` names
        (and the hash last read for each of its records: an edit by hand gives another one)."""
        with self._lock:
            if not self._added:
                return
            current = {e.sha256 for e in manifest.records}
            current.update(self._seen[e.name] for e in manifest.records if e.name in self._seen)
            known = self._load()
            kept = {sha: [body, importance] for sha, (body, importance) in known.items() if sha in current}
            self._known = {sha: known[sha] for sha in kept}
            self._added = False
        data = json.dumps({"format": FORMAT, "records": kept}, ensure_ascii=False).encode("utf-8")
        if len(data) > MAX_CACHE_BYTES:
            return
        try:
            self._write(data)
        except OSError as exc:  # a directory this user cannot write: no cache, nothing else
            log.debug("recall: %s: parsed-record cache not written: %s", self.folder, exc)

    def _write(self, data: bytes) -> None:
        try:
            st = os.lstat(self.folder)
        except FileNotFoundError:
            os.mkdir(self.folder, 0o700)
        else:
            if not stat.S_ISDIR(st.st_mode):
                raise OSError(f"{self.folder}: not a folder (a symlink or file is never written through)")
        replace_atomic(self.folder / CACHE_FILE, data, mode=0o600, sync_dir=False)

    def _load(self) -> dict[str, tuple[str, float]]:
        if self._known is None:
            self._known = self._read()
        return self._known

    def _read(self) -> dict[str, tuple[str, float]]:
        try:
            dfd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            return {}
        try:
            raw = open_regular(CACHE_FILE, max_bytes=MAX_CACHE_BYTES, dir_fd=dfd)
            doc = json.loads(raw)
        except (OSError, ValueError, UnsafeFileError) as exc:
            if not isinstance(exc, FileNotFoundError):
                log.debug("recall: %s: parsed-record cache ignored: %s", self.folder / CACHE_FILE, exc)
            return {}
        finally:
            os.close(dfd)
        records = doc.get("records") if isinstance(doc, dict) and doc.get("format") == FORMAT else None
        if not isinstance(records, dict):
            return {}
        out: dict[str, tuple[str, float]] = {}
        for sha, value in records.items():
            if (
                isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)
                and isinstance(value[1], int | float) and not isinstance(value[1], bool)
            ):  # fmt: skip
                out[sha] = (value[0], float(value[1]))
        return out
