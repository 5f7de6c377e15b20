"""Fusing the embedding ranking with the keyword index, in recall()."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dreamd.embeddings.refresh import update_directory
from memory.retrieval.embed import fuse, record_text, uses_embeddings
from memory.retrieval.recall import clear_cache, fused_names, recall
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore
from tests.embed_model import embedder


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    clear_cache()
    yield
    clear_cache()


def test_fuse_is_deterministic_and_honours_exclude() -> None:
    kw = {"a": 3.0, "b": 2.0, "c": 1.0}
    em = {"c": 0.9, "d": 0.8, "a": 0.1}
    assert fuse(kw, em, 3) == fuse(dict(reversed(kw.items())), dict(reversed(em.items())), 3)
    assert "c" not in fuse(kw, em, 4, exclude={"c"})
    assert fuse(kw, {}, 2) == ["a", "b"]
    assert fuse({}, em, 2) == ["c", "d"]
    assert fuse(kw, em, 0) == []


def test_keyword_rank_breaks_an_embedding_tie() -> None:
    assert fuse({"y": 1.0}, {"x": 0.5, "y": 0.5}, 1, weight=1) == ["y"]


def test_fused_score_weighs_the_cosine_against_the_share_of_the_best_keyword_score() -> None:
    kw = {"rare-words": 8.0, "other": 2.0}
    em = {"sounds-alike": 0.62, "rare-words": 0.55, "other": 0.1}
    # 0.1 * 1.0 + 0.9 * 0.55 = 0.595 beats 0.9 * 0.62 = 0.558: the keyword share decides
    assert fuse(kw, em, 2) == ["rare-words", "sounds-alike"]
    assert fuse(kw, em, 1, weight=1.0) == ["sounds-alike"]
    assert fuse(kw, em, 1, weight=0.0) == ["rare-words"]
    # the scale of BM25 does not matter, only each score's share of the best
    assert fuse({n: 100 * s for n, s in kw.items()}, em, 3) == fuse(kw, em, 3)


def test_the_record_name_is_not_embedded() -> None:
    assert record_text("obs-s1-3", "Noor owns a tortoise", "Forty years old.") == "Noor owns a tortoise\nForty years old."


def test_chinese_queries_are_left_to_the_keyword_index() -> None:
    assert not uses_embeddings("我的猫叫什么名字")
    assert uses_embeddings("what is my cat called")
    assert not uses_embeddings("   ")


def _set(tmp_path: Path) -> Path:
    memdir = tmp_path / "mem"
    store = MemoryStore.init(memdir)
    store.commit(Change(add=[
        make_record("api-stack", "project", "The api service uses FastAPI", "Routes live in app/routes."),
        make_record("pet", "user", "Noor owns a tortoise named Sheldon", "Sheldon is forty years old."),
        make_record("deploys", "project", "Production deploys happen on Wednesdays", "Never on Friday."),
        make_record("editor", "user", "Noor writes code in Emacs", "Org mode for notes."),
    ]))
    return memdir


def test_recall_with_an_embedder_finds_a_paraphrase_keywords_miss(tmp_path: Path) -> None:
    memdir = _set(tmp_path)
    query = "which web framework powers the backend"
    assert "api-stack" not in [r.name for r in recall(memdir, query).records]
    update_directory(memdir, embedder())
    got = recall(memdir, query, embedder=embedder(), limit=1)
    assert [r.name for r in got.records] == ["api-stack"]
    assert fused_names(memdir, "what animal does Noor keep", 1, embedder=embedder()) == ["pet"]
    assert fused_names(memdir, "what animal does Noor keep", 1, embedder=embedder(), exclude={"pet"}) != ["pet"]


def test_recall_without_vectors_yet_is_keyword_selection(tmp_path: Path) -> None:
    memdir = _set(tmp_path)
    plain = recall(memdir, "Emacs org mode")
    assert recall(memdir, "Emacs org mode", embedder=embedder()).records == plain.records


def test_a_failing_embedder_falls_back_to_keywords(tmp_path: Path) -> None:
    memdir = _set(tmp_path)
    update_directory(memdir, embedder())

    class Broken:
        name, dim = "all-MiniLM-L6-v2", 384

        def embed(self, texts: list[str], *, batch: int = 32) -> object:
            raise RuntimeError("onnx session died")

    got = recall(memdir, "Emacs org mode", embedder=Broken())  # type: ignore[arg-type]
    assert [r.name for r in got.records][:1] == ["editor"]


def test_dreamd_recall_with_the_key_fuses_and_without_the_model_says_why(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.conftest import REPO

    memdir = _set(tmp_path)
    update_directory(memdir, embedder())
    cfg = tmp_path / "config.toml"
    cfg.write_text('[recall]\nembeddings = "all-MiniLM-L6-v2"\nlimit = 1\n')
    argv = [sys.executable, "-m", "dreamd", "recall", "--config", str(cfg), str(memdir),
            "which web framework powers the backend"]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert 'name="api-stack"' in proc.stdout


def test_a_model_is_shown_the_fused_shortlist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import memory.retrieval.recall as recall_mod
    from memory.model.llm import Completion

    class Picker:
        name = "picker"

        def __init__(self) -> None:
            self.prompts: list[str] = []

        def complete(self, system: str, prompt: str, max_tokens: int) -> Completion:
            self.prompts.append(prompt)
            return Completion('["api-stack"]', "end_turn")

    memdir = _set(tmp_path)
    update_directory(memdir, embedder())
    monkeypatch.setattr(recall_mod, "MODEL_CANDIDATES", 2)
    query = "which web framework powers the backend"
    plain = Picker()
    recall(memdir, query, model=plain)  # type: ignore[arg-type]
    assert all("api-stack" not in p for p in plain.prompts)  # the keyword shortlist lacks it
    fused = Picker()
    got = recall(memdir, query, model=fused, embedder=embedder())  # type: ignore[arg-type]
    assert "api-stack" in fused.prompts[0]
    assert (got.selector, [r.name for r in got.records]) == ("model", ["api-stack"])
