"""Recall's parsed-record cache (``<dir>/.recall/parsed.json``, issue 20): a cold recall skips
the YAML parse of every record whose bytes it has seen, and never shows anything but what the
file's current bytes parse to."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memory.retrieval import index as recall_index
from memory.retrieval.parsed import CACHE_DIR, CACHE_FILE
from memory.retrieval.recall import clear_cache, recall
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore


def _set(tmp_path: Path) -> Path:
    mdir = tmp_path / ".memory"
    store = MemoryStore.init(mdir)
    store.commit(Change(add=[
        make_record(f"note-{i}", "project", f"Note {i} about the deploy script", f"Run deploy {i} with care.")
        for i in range(6)
    ]))  # fmt: skip
    return mdir


def _parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    original = MemoryStore.parse_entry

    def counting(self: MemoryStore, entry: object, data: bytes) -> object:
        seen.append(entry.name)  # type: ignore[attr-defined]
        return original(self, entry, data)  # type: ignore[arg-type]

    monkeypatch.setattr(MemoryStore, "parse_entry", counting)
    return seen


def test_a_cold_recall_parses_no_record_it_has_parsed_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mdir = _set(tmp_path)
    clear_cache()
    first = recall(mdir, "how do we deploy?")
    assert (mdir / CACHE_DIR / CACHE_FILE).is_file()
    assert os.stat(mdir / CACHE_DIR).st_mode & 0o777 == 0o700
    assert os.stat(mdir / CACHE_DIR / CACHE_FILE).st_mode & 0o777 == 0o600
    clear_cache()  # a fresh process: no index in memory
    parses = _parses(monkeypatch)
    again = recall(mdir, "how do we deploy?")
    assert parses == []
    assert again.block == first.block and again.records == first.records


def test_a_file_edited_by_hand_is_parsed_again_and_shown_as_it_now_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mdir = _set(tmp_path)
    clear_cache()
    recall(mdir, "deploy")
    entry = next(e for e in MemoryStore(mdir).read().records if e.name == "note-3")
    path = mdir / entry.file
    path.write_text(path.read_text(encoding="utf-8").replace("Run deploy 3 with care.", "Run deploy 3 zebra."), encoding="utf-8")
    clear_cache()
    parses = _parses(monkeypatch)
    result = recall(mdir, "zebra")
    assert parses == ["note-3"]  # the manifest still names the old hash: the bytes decide
    assert "Run deploy 3 zebra." in result.block


def test_a_bad_cache_is_ignored_and_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mdir = _set(tmp_path)
    clear_cache()
    expected = recall(mdir, "deploy").block
    cache = mdir / CACHE_DIR / CACHE_FILE
    for bad in (b"{not json", json.dumps({"format": 1, "records": {"x": [1, 2, 3]}}).encode(), b"[]"):
        cache.write_bytes(bad)
        clear_cache()
        assert recall(mdir, "deploy").block == expected
        assert json.loads(cache.read_bytes())["format"] == 1  # rewritten whole


def test_the_cache_is_never_read_or_written_through_a_symlink(tmp_path: Path) -> None:
    mdir = _set(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (mdir / CACHE_DIR).symlink_to(elsewhere)
    clear_cache()
    first = recall(mdir, "deploy")
    assert first.records and list(elsewhere.iterdir()) == []
    os.unlink(mdir / CACHE_DIR)
    (mdir / CACHE_DIR).mkdir(mode=0o700)
    (mdir / CACHE_DIR / CACHE_FILE).symlink_to(elsewhere / "planted.json")
    (elsewhere / "planted.json").write_text(json.dumps({"format": 1, "records": {
        e.sha256: ["planted body", 0.5] for e in MemoryStore(mdir).read().records}}))  # fmt: skip
    clear_cache()
    assert "planted body" not in recall(mdir, "deploy").block


def test_the_cache_keeps_only_the_current_set(tmp_path: Path) -> None:
    mdir = _set(tmp_path)
    store = MemoryStore(mdir)
    clear_cache()
    recall(mdir, "deploy")
    store.commit(Change(remove=["note-0", "note-1"], add=[make_record("fresh", "project", "zebra rules", "zebra")]))
    recall(mdir, "zebra")
    kept = set(json.loads((mdir / CACHE_DIR / CACHE_FILE).read_bytes())["records"])
    assert kept == {e.sha256 for e in store.read().records}
    state = recall_index.cached(mdir)
    assert state is not None and state.parsed is not None


def test_a_warm_recall_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache is written when the index is (re)built, never by a warm recall: for a set too
    large to index bodies, rewriting it after every query cost more than the parses it saved."""
    monkeypatch.setattr(recall_index, "BODY_INDEX_LIMIT", 3)
    mdir = _set(tmp_path)
    clear_cache()
    for query in ("deploy", "script", "note"):
        assert recall(mdir, query).records
    assert not (mdir / CACHE_DIR).exists()
