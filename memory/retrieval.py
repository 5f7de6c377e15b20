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
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.errors import RecordError
from memory.index import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES
from memory.llm import Model
from memory.manifest import Manifest, ManifestEntry
from memory.select import Candidate, KeywordIndex, model_select
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
    once the next one would pass ``budget_bytes``.
    """

    budget_bytes: int = DEFAULT_SESSION_BYTES
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


# ----------------------------------------------------------------------------- capping and rendering

_TAG_RE = re.compile(r"<(?=/?\s*(?:memory|relevant_memories)\b)", re.IGNORECASE)


def _neutralise(text: str) -> str:
    """Stop record text from opening or closing our elements (``<memory``, ``</memory``,
    ``<relevant_memories``…); all other text, code with ``<`` included, stays readable."""
    return _TAG_RE.sub("&lt;", text)


def _attr(value: str) -> str:
    return (
        value.replace("&", "&amp;")
        .replace('"', "&quot;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\n", " ")
    )


def truncation_note(path: str) -> str:
    return f"[… truncated; full record: {path}]"


def cap_text(body: str, *, path: str, max_lines: int, max_bytes: int) -> tuple[str, bool]:
    """``body`` cut to ``max_lines`` lines and ``max_bytes`` UTF-8 bytes, note included.

    Cuts at a line boundary when one lies in the second half of the allowance, else at a
    character boundary (never inside a UTF-8 sequence). Returns (text, truncated).
    """
    text = body.rstrip("\n")
    lines = text.split("\n") if text else []
    if len(lines) <= max_lines and len(text.encode("utf-8")) <= max_bytes:
        return text, False
    note = truncation_note(path)
    keep_lines = max(0, max_lines - 1)
    head = "\n".join(lines[:keep_lines])
    allowance = max(0, max_bytes - len(note.encode("utf-8")) - 1)
    data = head.encode("utf-8")
    if len(data) > allowance:
        cut = data[:allowance]
        newline = cut.rfind(b"\n")
        if newline >= allowance // 2:
            cut = cut[:newline]
        head = cut.decode("utf-8", errors="ignore")
    head = head.rstrip()
    return (head + "\n" + note) if head else note, True


def render_element(rec: RecalledRecord) -> str:
    """One ``<memory>`` element: description line, blank line, capped body."""
    inner = _neutralise(rec.description)
    if rec.text:
        inner += "\n\n" + _neutralise(rec.text)
    return (
        f'<memory name="{_attr(rec.name)}" type="{_attr(rec.type)}" file="{_attr(rec.file)}">\n'
        f"{inner}\n</memory>\n"
    )


def render_block(records: list[RecalledRecord]) -> str:
    """The ``<relevant_memories>`` block for ``records``; "" when there are none."""
    if not records:
        return ""
    return "<relevant_memories>\n" + "".join(render_element(r) for r in records) + "</relevant_memories>\n"


# ----------------------------------------------------------------------------- the index cache


@dataclass(frozen=True)
class _SetIndex:
    generation: int
    committed_at: str
    entries: dict[str, ManifestEntry]
    candidates: tuple[Candidate, ...]
    keyword: KeywordIndex


_cache: OrderedDict[str, _SetIndex] = OrderedDict()
_cache_lock = threading.Lock()


def _dir_key(memory_dir: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(memory_dir))


def _set_index(store: MemoryStore, manifest: Manifest) -> _SetIndex:
    """The keyword index of the current set, rebuilt only when the generation changes."""
    key = _dir_key(store.path)
    with _cache_lock:
        hit = _cache.get(key)
        if hit and (hit.generation, hit.committed_at) == (manifest.generation, manifest.committed_at):
            _cache.move_to_end(key)
            return hit
    candidates = []
    entries: dict[str, ManifestEntry] = {}
    read_bodies = len(manifest.records) <= BODY_INDEX_LIMIT
    for entry in manifest.records:
        body, importance = "", 0.5
        if read_bodies:
            try:
                record = store.read_record(entry)
            except RecordError as exc:
                log.warning("recall: skipping unreadable record %s: %s", entry.name, exc)
                continue
            body, importance = record.body, record.importance
        entries[entry.name] = entry
        candidates.append(Candidate(entry.name, entry.type, entry.description, body, importance))
    built = _SetIndex(
        manifest.generation, manifest.committed_at, entries, tuple(candidates), KeywordIndex(candidates)
    )
    with _cache_lock:
        _cache[key] = built
        _cache.move_to_end(key)
        while len(_cache) > INDEX_CACHE_SIZE:
            _cache.popitem(last=False)
    return built


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
    limit: int = DEFAULT_LIMIT,
    session: RecallSession | None = None,
    record_bytes: int = DEFAULT_RECORD_BYTES,
    record_lines: int = DEFAULT_RECORD_LINES,
    store: MemoryStore | None = None,
) -> RecallResult:
    """The records relevant to ``query`` in ``memory_dir``, capped, with their block.

    A long-lived caller (``dreamd mcp``) passes its ``store`` for ``memory_dir``: its manifest
    cache then spares re-parsing ``manifest.json`` on every call.

    Raises :class:`memory.errors.UnmanagedError` for a directory without a manifest; never
    raises because of a model or a malformed record file.
    """
    store = store if store is not None else MemoryStore(memory_dir)
    manifest = store.snapshot()
    indexed = _set_index(store, manifest)
    exclude = session.surfaced_names(memory_dir, manifest) if session is not None else set()

    selector = "keyword"
    reason: str | None = None
    if model is not None and indexed.candidates:
        names, reason = model_select(
            model, query, indexed.candidates, limit, index=indexed.keyword, exclude=exclude
        )
        if reason is None:
            selector = "model"
        else:
            log.warning("recall: model selection fell back to keyword selection: %s", reason)
    else:
        names = indexed.keyword.select(query, limit, exclude=exclude)

    dir_key = _dir_key(memory_dir)
    records: list[RecalledRecord] = []
    used = 0
    budget = session.remaining_bytes if session is not None else None
    for name in names:
        entry = indexed.entries.get(name)
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
    try:
        data = (Path(memory_dir) / INDEX).read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return ""
    text = data.decode("utf-8", errors="replace")
    lines = text.splitlines(keepends=True)[:max_lines]
    out = "".join(lines)
    encoded = out.encode("utf-8")
    if len(encoded) > max_bytes:
        cut = encoded[:max_bytes]
        newline = cut.rfind(b"\n")
        out = (cut[: newline + 1] if newline >= 0 else cut).decode("utf-8", errors="ignore")
    return out

