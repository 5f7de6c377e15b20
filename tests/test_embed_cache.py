"""The per-directory vector cache: keyed by content, incremental, hostile-file safe."""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import numpy as np
import pytest

from dreamd.config import RecallConfig
from dreamd.embeddings.progress import embeddings_status, render_embeddings_status
from dreamd.embeddings.refresh import update_directory
from memory.retrieval.embed import (
    MAX_CACHE_BYTES,
    VectorCache,
    cache_path,
    cached_shas,
    current_vectors,
    read_cache,
    write_cache,
)
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore

MODEL = "all-MiniLM-L6-v2"


class CountingEmbedder:
    """Deterministic unit vectors from a text's hash; counts the texts it was asked for."""

    name = MODEL
    dim = 384

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: list[str], *, batch: int = 32) -> np.ndarray:
        self.texts.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            out[i] = v / np.linalg.norm(v)
        return out


def _store(tmp_path: Path, n: int) -> tuple[Path, MemoryStore]:
    memdir = tmp_path / "mem"
    store = MemoryStore.init(memdir)
    store.commit(Change(add=[make_record(f"note-{i}", "project", f"Note number {i}", f"Body of note {i}.")
                             for i in range(n)]))
    return memdir, store


def test_first_update_embeds_every_record_and_a_commit_only_its_change(tmp_path: Path) -> None:
    memdir, store = _store(tmp_path, 10)
    emb = CountingEmbedder()
    assert update_directory(memdir, emb) == (10, 10)
    manifest = store.snapshot()
    assert cached_shas(memdir, MODEL) == {e.sha256 for e in manifest.records}
    emb.texts.clear()
    edited = next(e for e in manifest.records if e.name == "note-3")
    store.commit(Change(add=[make_record("note-new", "project", "A fresh note", "Fresh body.")],
                        remove=[edited.name]))
    assert update_directory(memdir, emb) == (1, 10)
    assert len(emb.texts) == 1 and "fresh note" in emb.texts[0].lower()
    assert edited.sha256 not in (cached_shas(memdir, MODEL) or set())
    emb.texts.clear()
    assert update_directory(memdir, emb) == (0, 10)
    assert emb.texts == []


def test_cache_survives_a_fresh_process_read(tmp_path: Path) -> None:
    memdir, _ = _store(tmp_path, 4)
    update_directory(memdir, CountingEmbedder())
    cache = read_cache(memdir, MODEL, 384)
    assert cache is not None and len(cache) == 4
    assert np.allclose(np.linalg.norm(cache.matrix, axis=1), 1.0, atol=1e-5)


def test_progress_is_written_in_checkpoints_and_shown_by_status(tmp_path: Path) -> None:
    memdir, store = _store(tmp_path, 70)
    seen: list[tuple[int, int]] = []
    update_directory(memdir, CountingEmbedder(), checkpoint=32, progress=lambda d, t: seen.append((d, t)))
    assert seen[0][0] < 70 and seen[-1] == (70, 70)
    status = embeddings_status(memdir, RecallConfig(5, 4096, 200, 61440, MODEL), store.snapshot())
    assert status == {"embeddings": {"model": MODEL, "embedded": 70, "records": 70}}
    assert render_embeddings_status(status) == [f"  embeddings {MODEL}: all 70 records embedded"]
    assert embeddings_status(memdir, RecallConfig(5, 4096, 200, 61440), store.snapshot()) == {}


def test_a_stopped_update_resumes_where_it_left_off(tmp_path: Path) -> None:
    memdir, store = _store(tmp_path, 70)
    calls = iter(range(1000))
    update_directory(memdir, CountingEmbedder(), checkpoint=32, should_stop=lambda: next(calls) >= 2)
    partial = cached_shas(memdir, MODEL) or set()
    assert 0 < len(partial) < 70
    line = render_embeddings_status(embeddings_status(memdir, RecallConfig(5, 4096, 200, 61440, MODEL), store.snapshot()))
    assert f"{len(partial)} of 70 records embedded" in line[0]
    emb = CountingEmbedder()
    assert update_directory(memdir, emb) == (70 - len(partial), 70)


def test_symlinked_cache_file_or_folder_is_not_followed(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    memdir, _ = _store(tmp_path, 3)
    update_directory(memdir, CountingEmbedder())
    real = cache_path(memdir, MODEL)
    elsewhere = tmp_path / "elsewhere.vec"
    os.replace(real, elsewhere)
    real.symlink_to(elsewhere)
    with caplog.at_level(logging.WARNING, logger="memory.recall"):
        assert read_cache(memdir, MODEL, 384) is None
    assert "cannot open" in caplog.text
    folder = memdir / ".embeddings"
    os.unlink(real)
    os.rename(folder, tmp_path / "outside")
    folder.symlink_to(tmp_path / "outside")
    assert read_cache(memdir, MODEL, 384) is None
    with pytest.raises(OSError, match="not a folder"):
        write_cache(memdir, VectorCache(MODEL, 384, [], np.zeros((0, 384), dtype=np.float32)))


def test_truncated_or_foreign_cache_is_one_warning_and_rebuilt(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    memdir, _ = _store(tmp_path, 3)
    update_directory(memdir, CountingEmbedder())
    path = cache_path(memdir, MODEL)
    path.write_bytes(path.read_bytes()[:-10])
    with caplog.at_level(logging.WARNING, logger="memory.recall"):
        assert read_cache(memdir, MODEL, 384) is None
    assert "does not match its header" in caplog.text
    path.write_bytes(b"something else entirely\n")
    assert read_cache(memdir, MODEL, 384) is None
    emb = CountingEmbedder()
    assert update_directory(memdir, emb) == (3, 3)
    assert current_vectors(memdir, MODEL, 384) is not None


def test_fifo_or_oversized_cache_is_refused_without_blocking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memdir, _ = _store(tmp_path, 2)
    (memdir / ".embeddings").mkdir()
    os.mkfifo(cache_path(memdir, MODEL))
    assert read_cache(memdir, MODEL, 384) is None
    os.unlink(cache_path(memdir, MODEL))
    update_directory(memdir, CountingEmbedder())
    import memory.retrieval.embed as embed_mod

    monkeypatch.setattr(embed_mod, "MAX_CACHE_BYTES", 100)
    assert read_cache(memdir, MODEL, 384) is None
    assert MAX_CACHE_BYTES > 15_000_000 * 4


def test_sync_never_shares_the_cache(tmp_path: Path) -> None:
    from dreamd.sync.flow import GITIGNORE

    assert "/.*" in GITIGNORE.splitlines()


def test_a_cache_of_the_previous_format_is_rebuilt_without_names(tmp_path: Path) -> None:
    """Version 1 caches hold vectors of name + description + body; version 2 embeds no name.
    An old cache is never mixed with new vectors: every record is embedded again."""
    memdir, _ = _store(tmp_path, 3)
    emb = CountingEmbedder()
    update_directory(memdir, emb)
    path = cache_path(memdir, MODEL)
    path.write_bytes(path.read_bytes().replace(b"dreamd-embeddings 2 ", b"dreamd-embeddings 1 ", 1))
    assert read_cache(memdir, MODEL, 384) is None
    emb.texts.clear()
    assert update_directory(memdir, emb) == (3, 3)
    assert sorted(emb.texts) == [f"Note number {i}\nBody of note {i}.\n" for i in range(3)]
