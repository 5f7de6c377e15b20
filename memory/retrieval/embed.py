"""Record embeddings: the per-directory vector cache and its fusion with keyword selection.

The cache is derived and rebuildable, never authoritative: ``<dir>/.embeddings/<model>.vec``
holds one unit vector per record *content*, keyed by the record's sha256 (the manifest's
``sha256``), so a rename costs nothing and an edit costs one embedding. Nothing reads it as a
memory: it is hidden (sync's ``.gitignore`` keeps every dot-entry out of git, and record scans
skip dot-names), and deleting it only means the daemon embeds the set again.

File format (little-endian)::

    b"dreamd-embeddings 2 <model> <dim> <count>\\n"
    count × 32 bytes   raw sha256 of each record's bytes
    count × dim × 4    float32 vectors, row i for sha i

Reading never follows a symlink (neither ``.embeddings`` nor the file), never blocks on a FIFO
and refuses a file over :data:`MAX_CACHE_BYTES` or whose size disagrees with its header: a bad
cache is one warning line and is treated as absent (rebuilt), never fatal. Version 2 holds
vectors of :func:`record_text` without the record's name; a version 1 cache (vectors with it)
is rebuilt.

Fusion (:func:`fuse`) is a weighted sum of the keyword score (as a share of the best one) and
the cosine; its weight was chosen on ``benchmarks/recall_dev/`` (invented records, paraphrased
and plainly worded queries), never on a benchmark's questions. A query with Chinese characters is
left to the keyword index: MiniLM-L6 knows few of them, and fused it lowered Chinese recall.

numpy is imported only by the functions that need vectors, and only when ``[recall]
embeddings`` is set: the hook and a plain ``memory.recall`` never load this module's heavy half.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from memory.fsutil import replace_atomic
from memory.lazylog import get_logger
from memory.retrieval.tokens import CJK_RE

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "CACHE_DIR",
    "EMBED_WEIGHT",
    "FUSION_DEPTH",
    "MAX_CACHE_BYTES",
    "QueryEmbedder",
    "VectorCache",
    "cache_path",
    "cached_shas",
    "fuse",
    "read_cache",
    "record_text",
    "uses_embeddings",
    "write_cache",
]

log = get_logger("memory.recall")

CACHE_DIR = ".embeddings"
MAGIC = b"dreamd-embeddings 2 "
MAX_CACHE_BYTES = 512 * 1024 * 1024
"""Far above any real set (10,000 records of 384 floats are 15.7 MB)."""
MAX_HEADER = 256
RECORD_TEXT_CHARS = 2000
"""Head of a record embedded: the model reads at most 256 tokens anyway."""

EMBED_WEIGHT = 0.9
"""Share of the cosine in a fused score; the keyword score (divided by the query's best keyword
score) has the rest. On the dev split (``benchmarks/tune_fusion.py``: 500 records, 106
queries) 0.9 gave the best MRR, 0.939 with recall@5 0.972, against keyword-only 0.798 / 0.840,
embedding-only 0.926 / 0.972 and the reciprocal-rank fusion used before (k = 5, weight 6)
0.924 / 0.962: the cosine leads, and the keyword score, a tenth of the sum, moves a record
that names the query's rare words past one that only sounds alike."""
FUSION_DEPTH = 50
"""How deep each ranking is read before fusing."""


class QueryEmbedder(Protocol):
    """What recall needs of a model: unit vectors for texts (``dreamd.embeddings.model.Embedder``)."""

    name: str
    dim: int

    def embed(self, texts: list[str], *, batch: int = 32) -> npt.NDArray[np.float32]: ...


def record_text(name: str, description: str, body: str) -> str:
    """What is embedded for a record: its description and the head of its body. The name is
    left out: a slug made of the description's own words adds nothing, and an id-like name
    (``obs-s1-3``, ``note-4f2a``) puts the same noise in front of every text; on the dev split
    the name did not help either (MRR 0.939 without, 0.936 with)."""
    del name
    return f"{description}\n{body[:RECORD_TEXT_CHARS]}"


def uses_embeddings(query: str) -> bool:
    """Whether the embedding ranking takes part for ``query`` (not for Chinese text)."""
    return bool(query.strip()) and CJK_RE.search(query) is None


# ----------------------------------------------------------------------------- the cache


def cache_path(directory: str | os.PathLike[str], model: str) -> Path:
    return Path(directory) / CACHE_DIR / f"{model}.vec"


def _read_capped(directory: Path, model: str, limit: int | None) -> bytes | None:
    """The cache's bytes (the first ``limit`` only, if given), or None when absent or unsafe."""
    try:
        dfd = os.open(directory / CACHE_DIR, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("embeddings: %s: cannot open the cache folder (%s); ignoring it", directory / CACHE_DIR, exc.strerror)
        return None
    try:
        fd = os.open(f"{model}.vec", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dfd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("embeddings: %s: cannot open (%s); ignoring it", cache_path(directory, model), exc.strerror)
        return None
    finally:
        os.close(dfd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_CACHE_BYTES:
            log.warning("embeddings: %s: not a regular file under %d bytes; ignoring it",
                        cache_path(directory, model), MAX_CACHE_BYTES)
            return None
        want = st.st_size if limit is None else min(limit, st.st_size)
        chunks, got = [], 0
        while got < want:
            chunk = os.read(fd, min(want - got, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _header(data: bytes, path: Path, model: str) -> tuple[int, int, int] | None:
    """(dim, count, offset of the shas) from a cache's first line, or None (logged)."""
    end = data.find(b"\n", 0, MAX_HEADER)
    fields = data[len(MAGIC) : end].split(b" ") if data.startswith(MAGIC) and end > 0 else []
    if len(fields) != 3 or fields[0].decode("utf-8", "replace") != model or not (fields[1] + fields[2]).isdigit():
        log.warning("embeddings: %s: not a dreamd embedding cache for %s; it will be rebuilt", path, model)
        return None
    return int(fields[1]), int(fields[2]), end + 1


def cached_shas(directory: str | os.PathLike[str], model: str) -> set[str] | None:
    """The record hashes the cache holds vectors for (reads the header and hashes only)."""
    head = _read_header(directory, model, MAX_HEADER)
    if head is None:
        return None
    _head, _dim, count, offset = head
    data = _read_capped(Path(directory), model, offset + 32 * count)
    if data is None or len(data) != offset + 32 * count:
        return None
    return set(_shas(data, offset, count))


def _read_header(directory: str | os.PathLike[str], model: str, limit: int | None) -> tuple[bytes, int, int, int] | None:
    """The cache's first ``limit`` bytes (all when None) and its header's (dim, count, offset),
    or None when the cache is absent or unusable (logged once)."""
    data = _read_capped(Path(directory), model, limit)
    if data is None:
        return None
    parsed = _header(data, cache_path(directory, model), model)
    return None if parsed is None else (data, *parsed)


def _shas(data: bytes, offset: int, count: int) -> list[str]:
    """The ``count`` record hashes stored from ``offset`` on, in row order."""
    return [data[offset + 32 * i : offset + 32 * (i + 1)].hex() for i in range(count)]


class VectorCache:
    """One directory's vectors: ``rows`` maps a record's sha256 to its row of ``matrix``."""

    def __init__(self, model: str, dim: int, shas: list[str], matrix: npt.NDArray[np.float32]) -> None:
        self.model, self.dim = model, dim
        self.shas = shas
        self.rows = {sha: i for i, sha in enumerate(shas)}
        self.matrix = matrix
        self._alignment: tuple[Mapping[str, Any], list[str], npt.NDArray[np.int64]] | None = None

    def __len__(self) -> int:
        return len(self.shas)

    def top(
        self,
        query: npt.NDArray[np.float32],
        entries: Mapping[str, Any],
        depth: int,
        exclude: Collection[str] = (),
    ) -> dict[str, float]:
        """Cosine of ``query`` with the ``depth`` nearest records of ``entries`` (name →
        manifest entry; those the cache lacks take no part), none of ``exclude``.

        One matrix-vector product over the cache; the name ↔ row alignment is computed once
        per ``entries`` object (recall's index replaces it only when the manifest changed)."""
        import numpy as np

        names, idx = self._align(entries)
        if not names:
            return {}
        # einsum, not @: a BLAS matrix-vector product spreads over threads that, on a busy
        # two-core machine, made it 5x slower (13.6 against 1.9 ms at 10,000 records).
        sims = np.einsum("ij,j->i", self.matrix, query)[idx]
        want = min(len(names), depth + len(exclude))
        best = np.argpartition(-sims, want - 1)[:want] if want < len(names) else np.arange(len(names))
        out = {names[i]: float(sims[i]) for i in best.tolist() if names[i] not in exclude}
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))[:depth])

    def _align(self, entries: Mapping[str, Any]) -> tuple[list[str], npt.NDArray[np.int64]]:
        import numpy as np

        hit = self._alignment
        if hit is not None and hit[0] is entries:
            return hit[1], hit[2]
        names = [n for n, e in entries.items() if e.sha256 in self.rows]
        idx = np.fromiter((self.rows[entries[n].sha256] for n in names), dtype=np.int64, count=len(names))
        self._alignment = (entries, names, idx)
        return names, idx


def read_cache(directory: str | os.PathLike[str], model: str, dim: int) -> VectorCache | None:
    """The directory's cache for ``model``, or None when absent or unusable (logged once)."""
    import numpy as np

    got = _read_header(directory, model, None)
    if got is None:
        return None
    data, got_dim, count, offset = got
    if got_dim != dim or len(data) != offset + count * (32 + 4 * dim):
        log.warning("embeddings: %s: size or width does not match its header; it will be rebuilt",
                    cache_path(directory, model))
        return None
    shas = _shas(data, offset, count)
    start = offset + 32 * count
    matrix = np.frombuffer(data, dtype="<f4", count=count * dim, offset=start).reshape(count, dim)
    return VectorCache(model, dim, shas, matrix.astype(np.float32, copy=False))


def write_cache(directory: str | os.PathLike[str], cache: VectorCache) -> None:
    """Replace the directory's cache atomically. Refuses a ``.embeddings`` that is not a real folder."""
    import numpy as np

    folder = Path(directory) / CACHE_DIR
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        os.mkdir(folder, 0o755)
    else:
        if not stat.S_ISDIR(st.st_mode):
            raise OSError(f"{folder}: not a folder (a symlink or file is never written through)")
    header = MAGIC + f"{cache.model} {cache.dim} {len(cache)}\n".encode()
    body = b"".join(bytes.fromhex(s) for s in cache.shas)
    vectors = np.ascontiguousarray(cache.matrix, dtype="<f4").tobytes()
    replace_atomic(folder / f"{cache.model}.vec", header + body + vectors)


# ----------------------------------------------------------------------------- fusion


def _ranked(scores: Mapping[str, float], exclude: Collection[str], depth: int) -> list[str]:
    import heapq

    return heapq.nsmallest(depth, (n for n in scores if n not in exclude), key=lambda n: (-round(scores[n], 9), n))


def fuse(
    keyword: Mapping[str, float],
    embedding: Mapping[str, float],
    limit: int,
    *,
    exclude: Collection[str] = (),
    weight: float = EMBED_WEIGHT,
    depth: int = FUSION_DEPTH,
) -> list[str]:
    """At most ``limit`` names by a weighted sum of two score maps.

    ``keyword`` holds only candidates sharing a term with the query (scores > 0); ``embedding``
    the cosine of each embedded record. Each ranking's top ``depth`` take part; a record scores
    ``(1 - weight) * keyword / best keyword + weight * cosine`` (a ranking it is not in adds 0).
    Dividing by the best keyword score puts BM25's open scale on the cosine's; ties go to the
    keyword rank, then the name, so the answer is reproducible.
    """
    if limit <= 0:
        return []
    kw = _ranked({n: s for n, s in keyword.items() if s > 0}, exclude, depth)
    em = _ranked(embedding, exclude, depth)
    best = keyword[kw[0]] if kw else 1.0
    fused: dict[str, float] = {}
    for name in kw:
        fused[name] = (1.0 - weight) * keyword[name] / best
    for name in em:
        fused[name] = fused.get(name, 0.0) + weight * embedding[name]
    kw_rank = {n: i for i, n in enumerate(kw)}
    return sorted(fused, key=lambda n: (-round(fused[n], 12), kw_rank.get(n, len(kw)), n))[:limit]


# ----------------------------------------------------------------------------- loaded caches

_loaded: dict[tuple[str, str], tuple[tuple[int, int, int], VectorCache]] = {}


def current_vectors(directory: str | os.PathLike[str], model: str, dim: int) -> VectorCache | None:
    """The directory's cache, re-read only when its file changed (a long-lived process)."""
    path = cache_path(directory, model)
    key = (os.path.realpath(os.fspath(directory)), model)
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        _loaded.pop(key, None)
        return None
    stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
    hit = _loaded.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    cache = read_cache(directory, model, dim)
    if cache is None:
        _loaded.pop(key, None)
        return None
    _loaded[key] = (stamp, cache)
    return cache


def remember_vectors(directory: str | os.PathLike[str], cache: VectorCache) -> None:
    """After writing ``cache`` (the daemon), keep it as loaded so it is not read back."""
    path = cache_path(directory, cache.model)
    st = os.stat(path, follow_symlinks=False)
    _loaded[(os.path.realpath(os.fspath(directory)), cache.model)] = ((st.st_ino, st.st_size, st.st_mtime_ns), cache)
