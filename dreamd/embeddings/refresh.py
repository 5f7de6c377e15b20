"""Keeping a directory's vector cache current: embed what changed, drop what left.

:func:`update_directory` compares the manifest's record hashes with the cache's and embeds
only the records whose content is new (a commit's change: added or edited records; a rename
keeps its hash). A large set (10,000 records on first use) is embedded in batches and the
cache written every :data:`CHECKPOINT` records, so ``dreamd status`` shows progress and a
restart resumes where it stopped. A record that cannot be read is skipped and logged; the
cache is never authoritative, so any failure leaves the set itself untouched.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from memory.errors import RecordError
from memory.retrieval.embed import (
    QueryEmbedder,
    VectorCache,
    current_vectors,
    record_text,
    remember_vectors,
    write_cache,
)
from memory.store.transaction import MemoryStore

log = logging.getLogger("dreamd.embeddings")  # stdlib: benchmarks and tests run it without the daemon's logs

BATCH = 32
CHECKPOINT = 512


def update_directory(
    directory: Path,
    embedder: QueryEmbedder,
    *,
    store: MemoryStore | None = None,
    checkpoint: int = CHECKPOINT,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> tuple[int, int]:
    """Bring ``directory``'s cache up to its manifest; returns (records embedded now, records in the set)."""
    import numpy as np

    store = store if store is not None else MemoryStore(directory)
    manifest = store.snapshot()
    wanted = list(dict.fromkeys(e.sha256 for e in manifest.records))
    have = current_vectors(directory, embedder.name, embedder.dim)
    rows: dict[str, np.ndarray] = {}
    if have is not None:
        rows = {sha: have.matrix[i] for sha, i in have.rows.items() if sha in set(wanted)}
    todo = [e for e in manifest.records if e.sha256 not in rows]
    todo = list({e.sha256: e for e in todo}.values())
    total = len(wanted)
    stale = have is not None and len(have) != len(rows)
    if not todo and not stale:
        return 0, total

    def save() -> None:
        shas = [s for s in wanted if s in rows]
        matrix = np.stack([rows[s] for s in shas]) if shas else np.zeros((0, embedder.dim), dtype=np.float32)
        cache = VectorCache(embedder.name, embedder.dim, shas, matrix.astype(np.float32))
        write_cache(directory, cache)
        remember_vectors(directory, cache)
        if progress is not None:
            progress(len(shas), total)

    done = since = 0
    for start in range(0, len(todo), BATCH):
        if should_stop():
            break
        texts, shas = [], []
        for entry in todo[start : start + BATCH]:
            try:
                record = store.read_record(entry)
            except RecordError as exc:
                log.warning("embeddings: skipping unreadable record %s in %s: %s", entry.name, directory, exc)
                continue
            texts.append(record_text(entry.name, entry.description, record.body))
            shas.append(entry.sha256)
        if texts:
            for sha, vec in zip(shas, embedder.embed(texts, batch=BATCH), strict=True):
                rows[sha] = vec
            done += len(texts)
            since += len(texts)
        if since >= checkpoint:
            save()
            since = 0
    save()
    return done, total
