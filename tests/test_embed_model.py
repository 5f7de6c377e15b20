"""The packaged embedding model: found without a download, checked, and meaningful."""

from __future__ import annotations

import dataclasses
import importlib.metadata

import pytest

from dreamd.embeddings import model as model_mod
from dreamd.embeddings.model import MODELS, EmbeddingsUnavailable, locate
from tests.embed_model import MODEL, embedder


def test_vectors_are_unit_length_and_384_wide() -> None:
    vecs = embedder().embed(["a short note", "another, somewhat longer note about the build server"])
    assert vecs.shape == (2, 384)
    assert abs(float((vecs[0] ** 2).sum()) - 1.0) < 1e-5
    assert abs(float((vecs[1] ** 2).sum()) - 1.0) < 1e-5


def test_paraphrase_is_nearer_than_unrelated_text() -> None:
    records = [
        "The billing service is written with the Django web framework",
        "Priya's dog is a three-year-old beagle named Pepper",
        "Backups of the wiki run every Sunday at 03:00",
    ]
    queries = [
        ("which framework powers billing", 0),
        ("what kind of pet does Priya have", 1),
        ("when is the wiki backed up", 2),
    ]
    e = embedder()
    r = e.embed(records)
    q = e.embed([text for text, _ in queries])
    sims = q @ r.T
    for row, (_, want) in enumerate(queries):
        assert int(sims[row].argmax()) == want, sims[row]


def test_batching_and_order_do_not_change_vectors() -> None:
    texts = [f"note {i}: " + "word " * (i * 7 % 40) for i in range(40)]
    e = embedder()
    together = e.embed(texts, batch=16)
    alone = e.embed(texts[5:6], batch=1)
    assert abs(together[5] - alone[0]).max() < 1e-4


def test_unknown_model_name_is_one_line() -> None:
    with pytest.raises(EmbeddingsUnavailable) as info:
        locate("no-such-model")
    assert "\n" not in str(info.value) and "no-such-model" in str(info.value)


def test_missing_package_is_one_line_naming_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = dataclasses.replace(MODELS[MODEL], weights_dist="dreamd-no-such-weights-package")
    monkeypatch.setitem(MODELS, MODEL, spec)
    with pytest.raises(EmbeddingsUnavailable) as info:
        locate(MODEL)
    msg = str(info.value)
    assert "\n" not in msg and "dreamd-no-such-weights-package" in msg and "dreamd[embeddings]" in msg


def test_weights_with_other_bytes_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    embedder()  # installed, or skip/fail as the helper decides
    spec = dataclasses.replace(MODELS[MODEL], weights_sha256="0" * 64)
    monkeypatch.setitem(MODELS, MODEL, spec)
    with pytest.raises(EmbeddingsUnavailable, match="does not match its sha256"):
        locate(MODEL)


def test_symlinked_weights_are_not_followed(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    embedder()
    from pathlib import Path

    real = Path(str(importlib.metadata.distribution(MODELS[MODEL].weights_dist).locate_file(MODELS[MODEL].weights_path)))
    link = Path(str(tmp_path)) / "model.onnx"
    link.symlink_to(real)

    class Dist:
        def locate_file(self, rel: str) -> Path:
            return link

    monkeypatch.setattr(model_mod.importlib.metadata, "distribution", lambda name: Dist())
    with pytest.raises(EmbeddingsUnavailable, match="cannot open"):
        locate(MODEL)
