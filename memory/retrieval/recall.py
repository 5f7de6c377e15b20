"""Recall: the agent's read path (DESIGN §7) — :func:`recall`, exported as ``memory.recall``.

(The module is not called ``memory/recall.py``: the package attribute ``memory.recall`` is
this function, and a submodule of the same name would shadow it once imported.)

``recall(memory_dir, query)`` reads the current set through the store (manifest first, then
the selected record files), picks at most ``limit`` records (a model through the strict gate,
else the deterministic keyword index kept per directory by :mod:`memory.retrieval.index`), caps
each one and returns them both as values and as a ``<relevant_memories>`` block meant for the
current request only. Capping and rendering live in :mod:`memory.retrieval.block` (the hook
renders without the store).

Invariants:

- The set is read only through :class:`memory.store.transaction.MemoryStore`; a record file that cannot
  be read or parsed is skipped and logged, never fatal.
- Each record's text is at most ``record_lines`` lines and ``record_bytes`` UTF-8 bytes, the
  truncation note included; a cut record says where its full file is.
- A :class:`RecallSession` never returns the same content twice and never lets the blocks it
  returned exceed its byte budget (60 KiB by default).
- A model's answer is used only if it passes :func:`memory.retrieval.select.check_selection`; otherwise
  the keyword selection is used and the reason is returned and logged (logger
  ``memory.recall``). Recall never raises because of a model.

Client path: stdlib + ``memory`` only (no anthropic, watchdog, apscheduler, structlog).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Collection
from pathlib import Path

from memory.errors import RecordError
from memory.lazylog import get_logger
from memory.retrieval.block import (
    body_problem,
    bounded_index,
    cap_text,
    render_block,
    render_element,
    truncation_note,
)
from memory.retrieval.index import SetIndex, clear_cache, dir_key, refresh, set_index
from memory.retrieval.select import MODEL_CANDIDATES, Candidate, model_select
from memory.settings import recall_settings
from memory.store.index import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES
from memory.store.manifest import Manifest
from memory.store.transaction import INDEX, MemoryStore
from memory.values import FrozenValue

TYPE_CHECKING = False  # not typing's: importing typing is a start-up cost (issue 20)
if TYPE_CHECKING:
    from typing import Any

    from memory.model.llm import Model
    from memory.retrieval.embed import QueryEmbedder

__all__ = [
    "DEFAULT_RECORD_BYTES",
    "DEFAULT_RECORD_LINES",
    "DEFAULT_SESSION_BYTES",
    "RecallResult",
    "RecallSession",
    "RecalledRecord",
    "cap_text",
    "clear_cache",
    "fused_names",
    "index_text",
    "recall",
    "render_block",
    "render_element",
    "truncation_note",
]

log = get_logger("memory.recall")

DEFAULT_RECORD_BYTES = 4096
DEFAULT_RECORD_LINES = 200
DEFAULT_SESSION_BYTES = 61440


# ----------------------------------------------------------------------------- values


class RecalledRecord(FrozenValue):
    """One selected record as shown to the agent; ``text`` is the capped body."""

    __slots__ = ("name", "type", "description", "file", "text", "truncated", "sha256")  # noqa: RUF023 (field order)
    name: str
    type: str
    description: str
    file: str
    """Absolute path of the record file (where the full text is)."""
    text: str
    truncated: bool
    sha256: str

    def __init__(
        self, name: str, type: str, description: str, file: str, text: str, truncated: bool, sha256: str = ""
    ) -> None:
        self.set_fields(name=name, type=type, description=description, file=file, text=text, truncated=truncated, sha256=sha256)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "description": self.description,
            "file": self.file,
            "text": self.text,
            "truncated": self.truncated,
        }


class RecallResult(FrozenValue):
    """What one recall returns. ``selector`` is ``"model"`` only when the model's answer was
    used; ``fallback_reason`` says why it was not (None when no model was asked)."""

    __slots__ = ("records", "selector", "fallback_reason", "block")  # noqa: RUF023 (field order)
    records: list[RecalledRecord]
    selector: str
    fallback_reason: str | None
    block: str

    def __init__(self, records: list[RecalledRecord], selector: str, fallback_reason: str | None, block: str) -> None:
        self.set_fields(records=records, selector=selector, fallback_reason=fallback_reason, block=block)

    def to_json(self) -> dict[str, Any]:
        """The stable ``dreamd recall --json`` shape."""
        return {
            "selector": self.selector,
            "fallback_reason": self.fallback_reason,
            "records": [r.to_json() for r in self.records],
            "block": self.block,
        }


class RecallSession:
    """What one agent session has already been shown, and how much.

    Keyed by directory, record name and content hash: a record that was edited since it was
    surfaced is new content and may be shown again; the same content never is. ``used_bytes``
    counts the UTF-8 bytes of the ``<memory>`` elements returned; a recall stops adding records
    once the next one would pass ``budget_bytes`` (default: ``[recall] session_bytes`` of the
    config the environment names, else 60 KiB).
    """

    budget_bytes: int
    used_bytes: int
    surfaced: set[tuple[str, str, str]]

    def __init__(
        self, budget_bytes: int | None = None, used_bytes: int = 0, surfaced: set[tuple[str, str, str]] | None = None
    ) -> None:
        self.budget_bytes = recall_settings().session_bytes if budget_bytes is None else budget_bytes
        self.used_bytes = used_bytes
        self.surfaced = set() if surfaced is None else surfaced
        self._lock = threading.Lock()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RecallSession):
            return NotImplemented
        return (self.budget_bytes, self.used_bytes, self.surfaced) == (other.budget_bytes, other.used_bytes, other.surfaced)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it was

    def __repr__(self) -> str:
        return f"RecallSession(budget_bytes={self.budget_bytes}, used_bytes={self.used_bytes}, surfaced={self.surfaced!r})"

    @property
    def remaining_bytes(self) -> int:
        return max(0, self.budget_bytes - self.used_bytes)

    def surfaced_names(self, memory_dir: str | os.PathLike[str], manifest: Manifest) -> set[str]:
        """Names in ``manifest`` whose current content this session has already returned."""
        key = dir_key(memory_dir)
        return {e.name for e in manifest.records if (key, e.name, e.sha256) in self.surfaced}

    def recall(self, memory_dir: str | os.PathLike[str], query: str, **kwargs: Any) -> RecallResult:
        """``recall(memory_dir, query, session=self, **kwargs)``."""
        return recall(memory_dir, query, session=self, **kwargs)


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
    embedder: QueryEmbedder | None = None,
) -> RecallResult:
    """The records relevant to ``query`` in ``memory_dir``, capped, with their block.

    ``limit``, ``record_bytes`` and ``record_lines`` not given come from ``[recall]`` of the
    config the environment names (the keys ``dreamd recall`` and the hook use), else 5, 4,096
    and 200.

    A long-lived caller (``dreamd mcp``) passes its ``store`` for ``memory_dir``: its manifest
    cache then spares re-parsing ``manifest.json`` on every call.

    With an ``embedder`` (``[recall] embeddings``; the daemon keeps one warm for the hook, ``dreamd mcp`` for its calls)
    the keyword ranking is fused with the embedding ranking over the directory's vector cache
    (:mod:`memory.retrieval.embed`; records not embedded yet take part by keyword only), and a
    model is shown the fused shortlist. A Chinese query stays keyword-only.

    Raises :class:`memory.errors.UnmanagedError` for a directory without a manifest; never
    raises because of a model or a malformed record file.
    """
    if limit is None or record_bytes is None or record_lines is None:
        settings = recall_settings()
        limit = settings.limit if limit is None else limit
        record_bytes = settings.record_bytes if record_bytes is None else record_bytes
        record_lines = settings.record_lines if record_lines is None else record_lines
    indexed = set_index(memory_dir, store)
    selector = "keyword"
    reason: str | None = None
    query_vector = _query_vector(embedder, query)
    with indexed.lock:  # one generation for the whole selection
        manifest = refresh(indexed)
        entries = indexed.entries
        exclude = session.surfaced_names(memory_dir, manifest) if session is not None else set()
        fused: list[str] | None = None
        if embedder is not None and query_vector is not None:
            fused = _fused(memory_dir, indexed, embedder, query, query_vector, exclude,
                           max(limit, MODEL_CANDIDATES if model is not None else limit))
        names = fused[:limit] if fused is not None else indexed.keyword.select(query, limit, exclude=exclude)
        shown: list[Candidate] = []
        if model is not None and entries:
            pool = [n for n in indexed.order if n not in exclude]
            if len(pool) > MODEL_CANDIDATES:
                keep = set(fused if fused is not None else indexed.keyword.select(query, MODEL_CANDIDATES, exclude=exclude))
                pool = [n for n in pool if n in keep]
            shown = [d.candidate for n in pool if (d := indexed.keyword.doc(n)) is not None]
    if model is not None and shown:
        # The model is asked outside the lock; its fallback is the selection made above.
        picked, reason = model_select(model, query, shown, limit, fallback=names)
        if reason is None:
            selector, names = "model", picked
        else:
            log.warning("recall: model selection fell back to keyword selection: %s", reason)

    key = dir_key(memory_dir)
    records: list[RecalledRecord] = []
    used = 0
    budget = session.remaining_bytes if session is not None else None
    for name in names:
        entry = entries.get(name)
        if entry is None:
            continue
        try:
            body, _ = indexed.read_record(entry)
        except RecordError as exc:
            log.warning("recall: skipping unreadable record %s: %s", name, exc)
            continue
        path = str(Path(key) / entry.file)
        problem = body_problem(body, path)
        if problem is not None:
            log.warning("recall: skipping record %s: %s", name, problem)
            continue
        text, truncated = cap_text(body, path=path, max_lines=record_lines, max_bytes=record_bytes)
        rec = RecalledRecord(entry.name, entry.type, entry.description, path, text, truncated, entry.sha256)
        size = len(render_element(rec).encode("utf-8"))
        if budget is not None and used + size > budget:
            break
        used += size
        records.append(rec)

    if session is not None:
        with session._lock:
            session.used_bytes += used
            session.surfaced.update((key, r.name, r.sha256) for r in records)
    return RecallResult(records, selector, reason, render_block(records))


def _query_vector(embedder: QueryEmbedder | None, query: str) -> Any:
    """The query's unit vector, or None (no embedder, a Chinese query, or the model failed)."""
    if embedder is None:
        return None
    from memory.retrieval.embed import uses_embeddings

    if not uses_embeddings(query):
        return None
    try:
        return embedder.embed([query])[0]
    except Exception as exc:  # recall never raises because of a model
        log.warning("recall: embedding the query failed, keyword selection only: %s", exc)
        return None


def _fused(
    memory_dir: str | os.PathLike[str],
    indexed: SetIndex,
    embedder: QueryEmbedder,
    query: str,
    query_vector: Any,
    exclude: set[str],
    depth: int,
) -> list[str] | None:
    """Keyword and embedding rankings fused (None when the directory has no vectors yet)."""
    from memory.retrieval.embed import FUSION_DEPTH, current_vectors, fuse

    vectors = current_vectors(memory_dir, embedder.name, embedder.dim)
    if vectors is None:
        return None
    reach = max(FUSION_DEPTH, depth)
    sims = vectors.top(query_vector, indexed.entries, reach, exclude)
    return fuse(indexed.keyword.scores(query), sims, depth, exclude=exclude, depth=reach)


def fused_names(
    memory_dir: str | os.PathLike[str],
    query: str,
    limit: int,
    *,
    embedder: QueryEmbedder,
    exclude: Collection[str] = (),
) -> list[str]:
    """The names :func:`recall` would pick without a model, excluding ``exclude`` (the daemon's
    answer to the hook, which renders the records itself)."""
    indexed = set_index(memory_dir)
    query_vector = _query_vector(embedder, query)
    with indexed.lock:
        refresh(indexed)
        skip = set(exclude)
        fused = None
        if query_vector is not None:
            fused = _fused(memory_dir, indexed, embedder, query, query_vector, skip, limit)
        return fused[:limit] if fused is not None else indexed.keyword.select(query, limit, exclude=skip)


def index_text(
    memory_dir: str | os.PathLike[str],
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> str:
    """MEMORY.md for an agent's system prompt ("" when there is none), bounded even when
    someone edited it by hand: at most ``max_lines`` lines and ``max_bytes`` bytes."""
    return bounded_index(Path(memory_dir) / INDEX, max_lines=max_lines, max_bytes=max_bytes)

