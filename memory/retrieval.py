"""Recall: the agent's read path (DESIGN §7).

``recall(memory_dir, query)`` reads the current set through the store (manifest first, then
the selected record files), picks at most ``limit`` records (a model through the strict gate,
else the deterministic keyword index), caps each one and returns them both as values and as a
``<relevant_memories>`` block meant for the current request only.

Invariants:

- The set is read only through :class:`memory.store.MemoryStore`; a record file that cannot
  be read or parsed is skipped and logged, never fatal.
- Each record's text is at most ``record_lines`` lines and ``record_bytes`` UTF-8 bytes, the
  truncation note included; a cut record says where its full file is.
- A :class:`RecallSession` never returns the same content twice and never lets the blocks it
  returned exceed its byte budget (60 KiB by default).
- A model's answer is used only if it passes :func:`memory.select.check_selection`; otherwise
  the keyword selection is used and the reason is returned and logged (logger
  ``memory.recall``). Recall never raises because of a model.

Client path: stdlib + ``memory`` only (no anthropic, watchdog, apscheduler, structlog).
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.errors import RecordError
from memory.index import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES
from memory.llm import Model
from memory.manifest import Manifest, ManifestEntry
from memory.recall_block import (
    bounded_index,
    cap_text,
    render_block,
    render_element,
    truncation_note,
)
from memory.select import (
    MODEL_CANDIDATES,
    Candidate,
    IndexedDoc,
    KeywordIndex,
    index_doc,
    model_select,
)
from memory.settings import recall_settings
from memory.store import INDEX, MemoryStore

__all__ = [
    "DEFAULT_RECORD_BYTES",
    "DEFAULT_RECORD_LINES",
    "DEFAULT_SESSION_BYTES",
    "RecallResult",
    "RecallSession",
    "RecalledRecord",
    "cap_text",
    "clear_cache",
    "index_text",
    "recall",
    "render_block",
    "render_element",
    "truncation_note",
]

log = logging.getLogger("memory.retrieval")

DEFAULT_LIMIT = 5
DEFAULT_RECORD_BYTES = 4096
DEFAULT_RECORD_LINES = 200
DEFAULT_SESSION_BYTES = 61440
INDEX_CACHE_SIZE = 8
BODY_INDEX_LIMIT = 2000
"""Sets larger than this are indexed from the manifest alone (name + description), so the
first recall in a fresh process never has to open thousands of files."""
"""Memory directories whose keyword index one process keeps (an agent rarely uses more)."""


# ----------------------------------------------------------------------------- values


@dataclass(frozen=True)
class RecalledRecord:
    """One selected record as shown to the agent; ``text`` is the capped body."""

    name: str
    type: str
    description: str
    file: str
    """Absolute path of the record file (where the full text is)."""
    text: str
    truncated: bool
    sha256: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "description": self.description,
            "file": self.file,
            "text": self.text,
            "truncated": self.truncated,
        }


@dataclass(frozen=True)
class RecallResult:
    """What one recall returns. ``selector`` is ``"model"`` only when the model's answer was
    used; ``fallback_reason`` says why it was not (None when no model was asked)."""

    records: list[RecalledRecord]
    selector: str
    fallback_reason: str | None
    block: str

    def to_json(self) -> dict[str, Any]:
        """The stable ``dreamd recall --json`` shape."""
        return {
            "selector": self.selector,
            "fallback_reason": self.fallback_reason,
            "records": [r.to_json() for r in self.records],
            "block": self.block,
        }


@dataclass
class RecallSession:
    """What one agent session has already been shown, and how much.

    Keyed by directory, record name and content hash: a record that was edited since it was
    surfaced is new content and may be shown again; the same content never is. ``used_bytes``
    counts the UTF-8 bytes of the ``<memory>`` elements returned; a recall stops adding records
    once the next one would pass ``budget_bytes`` (default: ``[recall] session_bytes`` of the
    config the environment names, else 60 KiB).
    """

    budget_bytes: int = field(default_factory=lambda: recall_settings().session_bytes)
    used_bytes: int = 0
    surfaced: set[tuple[str, str, str]] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    @property
    def remaining_bytes(self) -> int:
        return max(0, self.budget_bytes - self.used_bytes)

    def surfaced_names(self, memory_dir: str | os.PathLike[str], manifest: Manifest) -> set[str]:
        """Names in ``manifest`` whose current content this session has already returned."""
        key = _dir_key(memory_dir)
        return {e.name for e in manifest.records if (key, e.name, e.sha256) in self.surfaced}

    def recall(self, memory_dir: str | os.PathLike[str], query: str, **kwargs: Any) -> RecallResult:
        """``recall(memory_dir, query, session=self, **kwargs)``."""
        return recall(memory_dir, query, session=self, **kwargs)


# Capping and rendering live in memory.recall_block (the hook renders without the store).


# ----------------------------------------------------------------------------- the index cache


@dataclass
class _SetIndex:
    """One directory's recall state: a long-lived store (its manifest cache survives between
    recalls) and the keyword index of the set it last saw, updated from each commit's change.
    ``lock`` guards the index, ``entries`` and ``order`` together, so one recall always sees
    one generation."""

    store: MemoryStore
    manifest: Manifest | None = None
    """The snapshot the index reflects (the store hands out a new object only when the file changed)."""
    with_bodies: bool = True
    entries: dict[str, ManifestEntry] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    """Names in manifest order: what a model is shown, the same in every process."""
    keyword: KeywordIndex = field(default_factory=KeywordIndex)
    docs: dict[tuple[str, str], IndexedDoc] = field(default_factory=dict)
    """Term vectors by (file, sha256): a record whose bytes did not change is not re-read."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def generation(self) -> int:
        return -1 if self.manifest is None else self.manifest.generation


_cache: OrderedDict[str, _SetIndex] = OrderedDict()
_cache_lock = threading.Lock()


def _dir_key(memory_dir: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(memory_dir))


def _set_index(memory_dir: str | os.PathLike[str], store: MemoryStore | None = None) -> _SetIndex:
    """The recall state of ``memory_dir``; call :func:`_refresh` under its lock before use.

    A caller that keeps its own store for the directory (``dreamd mcp``) may pass it, so its
    writes and this cache share one parsed manifest.
    """
    key = _dir_key(memory_dir)
    with _cache_lock:
        state = _cache.get(key)
        if state is None:
            state = _cache[key] = _SetIndex(store if store is not None else MemoryStore(key))
        elif store is not None and state.store is not store and _dir_key(store.path) == key:
            state.store = store
        _cache.move_to_end(key)
        while len(_cache) > INDEX_CACHE_SIZE:
            _cache.popitem(last=False)
    return state


def _refresh(state: _SetIndex) -> Manifest:
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


def _update(state: _SetIndex, manifest: Manifest) -> None:
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
                    record = state.store.read_record(entry)
                except RecordError as exc:
                    log.warning("recall: skipping unreadable record %s: %s", entry.name, exc)
                    state.keyword.remove(entry.name)
                    continue
                body, importance = record.body, record.importance
            doc = index_doc(Candidate(entry.name, entry.type, entry.description, body, importance))
        if state.keyword.doc(entry.name) is not doc:
            state.keyword.add(doc)
        docs[doc_key] = doc
        entries[entry.name] = entry
    state.docs, state.entries = docs, entries
    state.order = [name for name in dict.fromkeys(e.name for e in manifest.records) if name in entries]
    state.manifest = manifest


def clear_cache() -> None:
    """Forget every cached index (tests; a long-lived process after bulk edits)."""
    with _cache_lock:
        _cache.clear()


# ----------------------------------------------------------------------------- recall


def recall(
    memory_dir: str | os.PathLike[str],
    query: str,
    *,
    model: Model | None = None,
    limit: int | None = None,
    session: RecallSession | None = None,
    record_bytes: int | None = None,
    record_lines: int | None = None,
    store: MemoryStore | None = None,
) -> RecallResult:
    """The records relevant to ``query`` in ``memory_dir``, capped, with their block.

    ``limit``, ``record_bytes`` and ``record_lines`` not given come from ``[recall]`` of the
    config the environment names (the keys ``dreamd recall`` and the hook use), else 5, 4,096
    and 200.

    A long-lived caller (``dreamd mcp``) passes its ``store`` for ``memory_dir``: its manifest
    cache then spares re-parsing ``manifest.json`` on every call.

    Raises :class:`memory.errors.UnmanagedError` for a directory without a manifest; never
    raises because of a model or a malformed record file.
    """
    if limit is None or record_bytes is None or record_lines is None:
        settings = recall_settings()
        limit = settings.limit if limit is None else limit
        record_bytes = settings.record_bytes if record_bytes is None else record_bytes
        record_lines = settings.record_lines if record_lines is None else record_lines
    indexed = _set_index(memory_dir, store)
    store = indexed.store
    selector = "keyword"
    reason: str | None = None
    with indexed.lock:  # one generation for the whole selection
        manifest = _refresh(indexed)
        entries = indexed.entries
        exclude = session.surfaced_names(memory_dir, manifest) if session is not None else set()
        names = indexed.keyword.select(query, limit, exclude=exclude)
        shown: list[Candidate] = []
        if model is not None and entries:
            pool = [n for n in indexed.order if n not in exclude]
            if len(pool) > MODEL_CANDIDATES:
                keep = set(indexed.keyword.select(query, MODEL_CANDIDATES, exclude=exclude))
                pool = [n for n in pool if n in keep]
            shown = [d.candidate for n in pool if (d := indexed.keyword.doc(n)) is not None]
    if model is not None and shown:
        # The model is asked outside the lock; its fallback is the selection made above.
        picked, reason = model_select(model, query, shown, limit, fallback=names)
        if reason is None:
            selector, names = "model", picked
        else:
            log.warning("recall: model selection fell back to keyword selection: %s", reason)

    dir_key = _dir_key(memory_dir)
    records: list[RecalledRecord] = []
    used = 0
    budget = session.remaining_bytes if session is not None else None
    for name in names:
        entry = entries.get(name)
        if entry is None:
            continue
        try:
            record = store.read_record(entry)
        except RecordError as exc:
            log.warning("recall: skipping unreadable record %s: %s", name, exc)
            continue
        path = str(Path(dir_key) / entry.file)
        text, truncated = cap_text(record.body, path=path, max_lines=record_lines, max_bytes=record_bytes)
        rec = RecalledRecord(entry.name, entry.type, entry.description, path, text, truncated, entry.sha256)
        size = len(render_element(rec).encode("utf-8"))
        if budget is not None and used + size > budget:
            break
        used += size
        records.append(rec)

    if session is not None:
        with session._lock:
            session.used_bytes += used
            session.surfaced.update((dir_key, r.name, r.sha256) for r in records)
    return RecallResult(records, selector, reason, render_block(records))


def index_text(
    memory_dir: str | os.PathLike[str],
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> str:
    """MEMORY.md for an agent's system prompt ("" when there is none), bounded even when
    someone edited it by hand: at most ``max_lines`` lines and ``max_bytes`` bytes."""
    return bounded_index(Path(memory_dir) / INDEX, max_lines=max_lines, max_bytes=max_bytes)

