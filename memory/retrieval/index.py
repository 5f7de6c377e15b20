"""Recall's per-directory index: the keyword index of each memory directory, kept current.

:func:`memory.recall` asks :func:`set_index` for a directory's :class:`SetIndex` and
:func:`refresh` brings it up to the store's current manifest before selecting. A process keeps
the indexes of its :data:`INDEX_CACHE_SIZE` most recently recalled directories.

Invariants:

- A warm recall costs a stat of the manifest: the store hands out the same parsed manifest
  object until the file changes, and an index whose manifest is that object is current.
- After a commit only the records whose file or content hash changed are read and tokenized
  again; the rest of the index is kept (term vectors are keyed by (file, sha256)).
- ``SetIndex.lock`` guards the index, ``entries`` and ``order`` together, so one selection
  always sees one generation; an older manifest never replaces a newer one.
- Sets larger than :data:`BODY_INDEX_LIMIT` are indexed from the manifest alone (name,
  type, description), so the first recall in a fresh process never opens thousands of files.
- A record file that cannot be read or parsed is left out of the index and logged (logger
  ``memory.recall``), never fatal.

Client path: stdlib + ``memory`` only.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

from memory.errors import RecordError
from memory.lazylog import get_logger
from memory.retrieval.parsed import ParsedRecords
from memory.retrieval.select import Candidate, IndexedDoc, KeywordIndex, index_doc
from memory.store.manifest import Manifest, ManifestEntry
from memory.store.transaction import MemoryStore

__all__ = [
    "BODY_INDEX_LIMIT",
    "INDEX_CACHE_SIZE",
    "SetIndex",
    "cached",
    "clear_cache",
    "dir_key",
    "refresh",
    "set_index",
]

log = get_logger("memory.recall")

INDEX_CACHE_SIZE = 8
"""Memory directories whose keyword index one process keeps (an agent rarely uses more)."""
BODY_INDEX_LIMIT = 2000
"""Sets larger than this are indexed from the manifest alone (name + description), so the
first recall in a fresh process never has to open thousands of files."""


class SetIndex:
    """One directory's recall state: a long-lived store (its manifest cache survives between
    recalls) and the keyword index of the set it last saw, updated from each commit's change.
    ``lock`` guards the index, ``entries`` and ``order`` together, so one recall always sees
    one generation. A plain class, not a dataclass: recall's start-up (issue 20)."""

    store: MemoryStore
    manifest: Manifest | None
    """The snapshot the index reflects (the store hands out a new object only when the file changed)."""
    with_bodies: bool
    entries: dict[str, ManifestEntry]
    order: list[str]
    """Names in manifest order: what a model is shown, the same in every process."""
    keyword: KeywordIndex
    docs: dict[tuple[str, str], IndexedDoc]
    """Term vectors by (file, sha256): a record whose bytes did not change is not re-read."""
    lock: threading.Lock
    parsed: ParsedRecords | None
    """The directory's parsed-record cache (:mod:`memory.retrieval.parsed`), made on first use."""

    def __init__(self, store: MemoryStore, manifest: Manifest | None = None, with_bodies: bool = True) -> None:
        self.store = store
        self.manifest = manifest
        self.with_bodies = with_bodies
        self.entries = {}
        self.order = []
        self.keyword = KeywordIndex()
        self.docs = {}
        self.lock = threading.Lock()
        self.parsed = None

    def __repr__(self) -> str:
        return f"SetIndex({self.store.path}, generation {self.generation})"

    def read_record(self, entry: ManifestEntry) -> tuple[str, float]:
        """``(body, importance)`` of ``entry``'s record through the parsed-record cache
        (RecordError as ``store.read_record``)."""
        if self.parsed is None or self.parsed.store is not self.store:
            self.parsed = ParsedRecords(self.store)
        return self.parsed.read(entry)

    @property
    def generation(self) -> int:
        return -1 if self.manifest is None else self.manifest.generation


_cache: OrderedDict[str, SetIndex] = OrderedDict()
_cache_lock = threading.Lock()


def dir_key(memory_dir: str | os.PathLike[str]) -> str:
    """The key a directory's index (and a session's record of what it showed) is kept under."""
    return os.path.realpath(os.fspath(memory_dir))


def set_index(memory_dir: str | os.PathLike[str], store: MemoryStore | None = None) -> SetIndex:
    """The recall state of ``memory_dir``; call :func:`refresh` under its lock before use.

    A caller that keeps its own store for the directory (``dreamd mcp``) may pass it, so its
    writes and this cache share one parsed manifest.
    """
    key = dir_key(memory_dir)
    with _cache_lock:
        state = _cache.get(key)
        if state is None:
            state = _cache[key] = SetIndex(store if store is not None else MemoryStore(key))
        elif store is not None and state.store is not store and dir_key(store.path) == key:
            state.store = store
        _cache.move_to_end(key)
        while len(_cache) > INDEX_CACHE_SIZE:
            _cache.popitem(last=False)
    return state


def cached(memory_dir: str | os.PathLike[str]) -> SetIndex | None:
    """The index this process keeps for ``memory_dir``, if any (tests, benchmarks)."""
    with _cache_lock:
        return _cache.get(dir_key(memory_dir))


def refresh(state: SetIndex) -> Manifest:
    """Bring ``state`` (locked by the caller) up to the current manifest; returns it.

    A warm recall costs a stat of the manifest; after a commit only the records whose file or
    hash changed are read and tokenized again (the rest of the index is kept).
    """
    manifest = state.store.snapshot()
    current = state.manifest
    if current is manifest or (current is not None and manifest.generation < current.generation):
        return current if current is not None else manifest
    _update(state, manifest)
    return manifest


def _update(state: SetIndex, manifest: Manifest) -> None:
    with_bodies = len(manifest.records) <= BODY_INDEX_LIMIT
    if with_bodies != state.with_bodies:
        state.keyword, state.docs, state.entries = KeywordIndex(), {}, {}
        state.with_bodies = with_bodies
    current = {e.name: e for e in manifest.records}
    for name in [n for n in state.entries if n not in current]:
        state.keyword.remove(name)
    docs: dict[tuple[str, str], IndexedDoc] = {}
    entries: dict[str, ManifestEntry] = {}
    for entry in manifest.records:
        doc_key = (entry.file, entry.sha256 if with_bodies else entry.description + entry.type)
        doc = state.docs.get(doc_key)
        if doc is None or doc.candidate.name != entry.name:
            body, importance = "", 0.5
            if with_bodies:
                try:
                    body, importance = state.read_record(entry)
                except RecordError as exc:
                    log.warning("recall: skipping unreadable record %s: %s", entry.name, exc)
                    state.keyword.remove(entry.name)
                    continue
            doc = index_doc(Candidate(entry.name, entry.type, entry.description, body, importance))
        if state.keyword.doc(entry.name) is not doc:
            state.keyword.add(doc)
        docs[doc_key] = doc
        entries[entry.name] = entry
    state.docs, state.entries = docs, entries
    state.order = [name for name in dict.fromkeys(e.name for e in manifest.records) if name in entries]
    state.manifest = manifest
    if state.parsed is not None:
        state.parsed.save(manifest)


def clear_cache() -> None:
    """Forget every cached index (tests; a long-lived process after bulk edits)."""
    with _cache_lock:
        _cache.clear()
