"""Recall keeps one store and one keyword index per directory and applies each commit's change
(issue 13, item 11): the result always equals a fresh build over the current set, and after a
write only the records that changed are read again."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memory.retrieval import index as recall_index
from memory.retrieval.recall import clear_cache, recall
from memory.retrieval.select import Candidate, KeywordIndex
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore

WORDS = ["deploy", "postgres", "tabs", "review", "staging", "billing", "cache", "mirror",
         "flaky", "pager", "budget", "invoice", "latency", "schema", "rollback", "monorepo"]


def _fresh_selection(mdir: Path, query: str, limit: int = 5) -> list[str]:
    store = MemoryStore(mdir)
    cands = []
    for e in store.read().records:
        rec = store.read_record(e)
        cands.append(Candidate(e.name, e.type, e.description, rec.body, rec.importance))
    return KeywordIndex(cands).select(query, limit)


def test_incremental_index_matches_a_fresh_build_after_every_commit(tmp_path: Path) -> None:
    clear_cache()
    rng = random.Random(7)
    mdir = tmp_path / ".memory"
    store = MemoryStore.init(mdir)
    names: list[str] = []
    for step in range(40):
        op = rng.random()
        if op < 0.5 or not names:
            name = f"r{step}"
            words = rng.sample(WORDS, 3)
            store.commit(Change(add=[make_record(name, "project", " ".join(words), " ".join(rng.sample(WORDS, 4)))]))
            names.append(name)
        elif op < 0.8:
            name = rng.choice(names)
            rec = make_record(name, "user", " ".join(rng.sample(WORDS, 2)), "edited " + rng.choice(WORDS))
            store.commit(Change(replace={name: rec}))
        elif op < 0.95:
            name = names.pop(rng.randrange(len(names)))
            store.commit(Change(remove=[name]))
        else:
            from memory.store.history import rollback

            rollback(store, to=max(1, store.read().generation - 3))
            names = [e.name for e in store.read().records]
        for query in rng.sample(WORDS, 2):
            got = [r.name for r in recall(mdir, query).records]
            assert got == _fresh_selection(mdir, query), (step, query)


def test_after_a_write_only_the_changed_record_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_cache()
    mdir = tmp_path / ".memory"
    store = MemoryStore.init(mdir)
    store.commit(Change(add=[make_record(f"n{i}", "project", f"note {i} about {WORDS[i % 16]}", "b") for i in range(200)]))
    assert recall(mdir, "postgres").records
    reads: list[str] = []
    original = MemoryStore.read_entry_bytes  # every record file recall reads goes through it

    def counting(self: MemoryStore, entry: object) -> object:
        reads.append(entry.name)  # type: ignore[attr-defined]
        return original(self, entry)  # type: ignore[arg-type]

    monkeypatch.setattr(MemoryStore, "read_entry_bytes", counting)
    recall(mdir, "postgres")
    assert len(reads) <= 5, "a warm recall reads only the selected records"
    reads.clear()
    store.commit(Change(add=[make_record("fresh", "project", "zebra crossing rules", "zebra")]))
    result = recall(mdir, "zebra")
    assert [r.name for r in result.records] == ["fresh"]
    assert reads.count("fresh") == 2 and len(reads) == 2, "indexed once, then shown once"
    cached = recall_index.cached(mdir)
    assert cached is not None and cached.generation == store.read().generation


def test_a_relative_first_call_never_serves_another_directory_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_cache()
    for project, word in (("pa", "alpha"), ("pb", "bravo")):
        store = MemoryStore.init(tmp_path / project / ".memory")
        store.commit(Change(add=[make_record(f"deploy-{word}", "project", f"deploy {word}", word)]))
    monkeypatch.chdir(tmp_path / "pa")
    assert [r.name for r in recall(".memory", "deploy").records] == ["deploy-alpha"]
    monkeypatch.chdir(tmp_path / "pb")
    got = recall(tmp_path / "pa" / ".memory", "deploy").records
    assert [r.name for r in got] == ["deploy-alpha"]
    assert got[0].file.startswith(str((tmp_path / "pa").resolve()))


def test_duplicate_names_fixed_by_hand_leave_no_stale_index(tmp_path: Path) -> None:
    import json

    clear_cache()
    mdir = tmp_path / ".memory"
    store = MemoryStore.init(mdir)
    store.commit(Change(add=[make_record("x", "project", "alpha notes", "alpha"),
                             make_record("y", "project", "zebra notes", "zebra")]))
    manifest_path = mdir / "manifest.json"
    good = json.loads(manifest_path.read_text())
    dup = json.loads(manifest_path.read_text())
    dup["records"][1]["name"] = "x"  # a hand edit: two entries named x
    dup["generation"] += 1
    manifest_path.write_text(json.dumps(dup))
    recall(mdir, "alpha")
    good["generation"] += 2
    good["records"] = good["records"][:1]
    manifest_path.write_text(json.dumps(good))
    assert [r.name for r in recall(mdir, "alpha").records] == ["x"]
    assert recall(mdir, "zebra").records == []
