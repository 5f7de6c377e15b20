"""Where a forgotten name went: the cheap history reader (memory.store.history.read_change,
change_summaries, follow_merges) and dreamd.jobs.work.merged_into over it (issue 13)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

import memory.store.history
from dreamd.jobs.work import merged_into
from memory.errors import StoreError
from memory.store.history import (
    TAIL_BYTES,
    Unreadable,
    change_summaries,
    follow_merges,
    log_entries,
    read_change,
)
from memory.store.layout import (
    HISTORY,
    MAX_MANIFEST_BYTES,
    PREVIOUS_INDEX_PREFIX,
    history_manifest_name,
)
from memory.store.manifest import Manifest
from memory.store.records import Record, make_record
from memory.store.transaction import Change, MemoryStore


def rec(name: str, body: str = "Body.") -> Record:
    return make_record(name, "user", f"About {name}", body + "\n")


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    d = tmp_path / "mem"
    d.mkdir()
    return MemoryStore.init(d, history_generations=100)


def archived(store: MemoryStore, generation: int) -> Path:
    return store.path / HISTORY / history_manifest_name(generation)


def merge(store: MemoryStore, sources: list[str], into: str | None) -> int:
    result = None if into is None else rec(into, "merged " + "+".join(sources))
    return store.commit(Change(merges=[(sources, result)], actor="dream", consolidated=True)).generation


# ---------------------------------------------------------------- read_change


def test_read_change_agrees_with_the_full_parse_for_every_kept_manifest(store: MemoryStore) -> None:
    store.commit(Change(add=[rec(f"r{i}") for i in range(30)]))
    merge(store, ["r1", "r2"], "r12")
    merge(store, ["r3"], None)
    store.commit(Change(remove=["r4"], job_id="j-1", actor="job", note="tidy"))
    store.commit(Change(add=[rec("later")]))
    gens = store.history_manifests()
    assert len(gens) >= 5
    for gen in gens:
        path = archived(store, gen)
        full = Manifest.loads(path.read_bytes(), where=str(path))
        assert read_change(path) == (full.generation, full.change)


def test_read_change_finds_a_change_beyond_the_first_tail_window(store: MemoryStore) -> None:
    """A change summary larger than the first read (a dream over thousands of records)."""
    many = [f"fact-{i:05d}" for i in range(3000)]
    store.commit(Change(add=[rec(n) for n in many]))
    merge(store, many, "all-facts")
    store.commit(Change(add=[rec("after")]))
    path = archived(store, store.read().generation - 1)
    assert len(json.dumps(Manifest.loads(path.read_bytes(), where="x").change)) > TAIL_BYTES
    gen, change = read_change(path)
    assert change["merged"] == [{"from": many, "into": "all-facts"}]
    assert gen == store.read().generation - 1


def test_read_change_is_not_fooled_by_change_keys_in_records_strings_or_nested_values(tmp_path: Path) -> None:
    decoy = {"merged": [{"from": ["x"], "into": "decoy"}]}
    entry = {
        "name": "x", "type": "user", "description": 'says "change":{"merged":[]} here', "file": "x.md",
        "sha256": "0" * 64, "created_at": "", "updated_at": "", "sources": [], "change": decoy,
    }  # fmt: skip
    real = {"actor": "dream", "merged": [{"from": ["a"], "into": "b"}]}
    doc = {
        "format": 1, "generation": 7, "committed_at": "", "consolidated_at": None, "records": [entry],
        "applied_jobs": [], "sessions_since_consolidation": [], "cursors": {}, "index_sha256": "",
        "change": real, "later": {"change": decoy}, "text": '\\",\\"change\\":{}}',
    }  # fmt: skip
    path = tmp_path / "manifest-7.json"
    path.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    assert read_change(path) == (7, real)


@pytest.mark.parametrize("indent", [None, 2])
def test_read_change_parses_a_manifest_written_otherwise_whole(tmp_path: Path, indent: int | None) -> None:
    """Keys in another order (or pretty-printed by hand): the full parse, same answer."""
    change = {"actor": "manual", "removed": ["a"]}
    doc = {"change": change, "generation": 3, "format": 1, "records": []}
    path = tmp_path / "manifest-3.json"
    path.write_text(json.dumps(doc, indent=indent))
    assert read_change(path) == (3, change)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"\x00garbage", "not valid JSON"),
        (b'{"format":1,"generation":4,"records":[],"change":{"merged":[', "not valid JSON"),
        (b'{"format":2,"generation":4,"records":[],"change":{}}', "unsupported manifest format 2"),
        (b'{"format":1,"generation":-1,"change":{}}', "generation -1"),
        (b"[1, 2]", "not a JSON object"),
    ],
)
def test_read_change_refuses_what_the_full_parse_refuses(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "manifest-4.json"
    path.write_bytes(content)
    with pytest.raises(StoreError, match=reason):
        Manifest.loads(content, where=str(path))
    with pytest.raises(StoreError, match=reason):
        read_change(path)


def test_read_change_refuses_an_archived_manifest_another_user_owns(store: MemoryStore) -> None:
    """The owner check every other read applies (fsutil): a manifest-N.json someone else
    planted in ``.history/`` never feeds ``dreamd log`` or a forget's "merged into"."""
    store.commit(Change(add=[rec("a")]))
    store.commit(Change(add=[rec("b")]))
    path = archived(store, 1)
    os.chown(path, 12345, 12345)
    with pytest.raises(StoreError, match="owned by uid 12345"):
        read_change(path)
    unreadable: list[Unreadable] = []
    assert [g for g, _ in change_summaries(store, unreadable=unreadable)] == [2, 0]
    assert [u.generation for u in unreadable] == [1]


def test_read_change_never_reads_an_archived_manifest_over_the_cap(tmp_path: Path) -> None:
    """A sparse 3 GiB manifest-N.json with dreamd's head and no ``change`` in its tail: the tail
    window used to grow to the whole file. Refused on ``fstat`` now, before a byte is read."""
    path = tmp_path / "manifest-4.json"
    with open(path, "wb") as f:
        f.write(b'{"format":1,"generation":4,"committed_at":"2026-12-01T00:00:00Z","records":[')
        f.truncate(3 * 1024**3)
    probe = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1536 * 1024 * 1024,) * 2)\n"
        "from memory.errors import StoreError\n"
        "from memory.store.history import read_change\n"
        "try:\n    read_change(sys.argv[1])\nexcept StoreError as exc:\n    print(exc)\n"
    )
    root = str(Path(__file__).resolve().parents[1])
    proc = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": root}, cwd=root)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-500:]
    assert proc.stdout.strip() == f"{path}: is {3 * 1024**3} bytes, over the {MAX_MANIFEST_BYTES}-byte limit; not read"


# ---------------------------------------------------------------- follow_merges (pure)


def summaries(*changes: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """Changes given oldest first, returned newest first as change_summaries yields them."""
    return [(g, c) for g, c in reversed(list(enumerate(changes)))]


def merged(*pairs: tuple[list[str], str | None]) -> dict[str, Any]:
    return {"merged": [{"from": f, "into": i} for f, i in pairs], "removed": [n for f, i in pairs for n in f if n != i]}


def test_follow_merges_follows_a_chain_to_its_end() -> None:
    changes = summaries({"added": ["a", "b", "c"]}, merged((["a", "b"], "b")), {"added": ["x"]}, merged((["b", "c"], "c")))
    assert follow_merges(changes, "a") == "c"
    assert follow_merges(changes, "b") == "c"
    assert follow_merges(changes, "x") is None


def test_follow_merges_gives_none_when_the_result_was_dropped_later() -> None:
    changes = summaries(merged((["a", "b"], "b")), merged((["b"], None)))
    assert follow_merges(changes, "a") is None
    assert follow_merges(summaries(merged((["a"], None))), "a") is None


def test_follow_merges_follows_a_chain_inside_one_generation() -> None:
    assert follow_merges(summaries(merged((["a"], "b"), (["b"], "c"))), "a") == "c"


def test_follow_merges_a_name_forgotten_after_it_came_back_is_not_pointed_at_the_old_merge() -> None:
    changes = summaries(merged((["a"], "b")), {"added": ["a"]}, {"removed": ["a"]})
    assert follow_merges(changes, "a") is None
    dropped_by_hand = summaries(merged((["a"], "b")), {"added": ["a"]}, {"foreign": {"dropped": ["a"]}})
    assert follow_merges(dropped_by_hand, "a") is None


def test_follow_merges_a_merge_that_kept_the_name_is_not_a_departure() -> None:
    assert follow_merges(summaries(merged((["a", "z"], "a")), merged((["a"], "q"))), "z") == "q"


def test_follow_merges_tolerates_damaged_summaries() -> None:
    changes = summaries({"merged": "nonsense"}, {"merged": [7, {"from": "a"}, {"from": ["a"], "into": 3}]})
    assert follow_merges(changes, "a") is None
    odd = summaries(merged((["a"], "b")), {"foreign": ["dropped"], "removed": "a"}, {"foreign": {"dropped": "a"}})
    assert follow_merges(odd, "a") == "b"


def test_follow_merges_stops_reading_at_the_merge() -> None:
    read: list[int] = []

    def newest_first() -> Any:
        for gen, change in summaries({"removed": ["a"]}, merged((["a"], "b")), {"added": ["n"]}, {"added": ["m"]}):
            read.append(gen)
            yield gen, change

    assert follow_merges(newest_first(), "a") == "b"
    assert read == [3, 2, 1]


# ---------------------------------------------------------------- merged_into on a store


def test_merged_into_follows_merges_across_generations_to_a_live_record(store: MemoryStore) -> None:
    store.commit(Change(add=[rec("a"), rec("b"), rec("c"), rec("d")]))
    merge(store, ["a", "b"], "ab")
    store.commit(Change(add=[rec("e")]))
    merge(store, ["ab", "c"], "abc")
    assert merged_into(store, "a") == "abc"
    assert merged_into(store, "ab") == "abc"
    assert merged_into(store, "d") is None  # never merged (and live)
    assert merged_into(store, "ghost") is None
    merge(store, ["abc"], None)
    assert merged_into(store, "a") is None  # the result was dropped


def test_merged_into_says_nothing_once_the_result_is_forgotten(store: MemoryStore) -> None:
    store.commit(Change(add=[rec("a"), rec("b")]))
    merge(store, ["a", "b"], "ab")
    store.commit(Change(remove=["ab"]))
    assert merged_into(store, "a") is None


def test_merged_into_gives_none_once_history_no_longer_keeps_the_merge(tmp_path: Path) -> None:
    d = tmp_path / "mem"
    d.mkdir()
    store = MemoryStore.init(d, history_generations=3)
    store.commit(Change(add=[rec("a"), rec("b")]))
    merge(store, ["a", "b"], "ab")
    store.commit(Change(add=[rec("x1")]))
    assert merged_into(store, "a") == "ab"
    i = 0
    while min(store.history_manifests()) <= 2:  # pruning runs in batches of ten
        store.commit(Change(add=[rec(f"y{i}")]))
        i += 1
        assert i < 30
    assert merged_into(store, "a") is None


def test_merged_into_passes_over_unreadable_archives_and_says_so(store: MemoryStore) -> None:
    store.commit(Change(add=[rec("a"), rec("b")]))
    merge_gen = merge(store, ["a", "b"], "ab")
    for i in range(3):
        store.commit(Change(add=[rec(f"x{i}")]))
    broken = [merge_gen + 1, merge_gen + 2]
    archived(store, broken[0]).write_bytes(b'{"format":9,"generation":5,"change":{}}')
    archived(store, broken[1]).write_bytes(b"\x00not json")
    with capture_logs() as logs:
        assert merged_into(store, "a") == "ab"
    [event] = [e for e in logs if e["event"] == "history.unreadable"]
    assert event["generations"] == sorted(broken, reverse=True)
    assert "not valid JSON" in event["error"]
    # dreamd log passes over the same generations, as it always did.
    assert not {e.generation for e in log_entries(store)} & set(broken)
    unreadable: list[Unreadable] = []
    assert [g for g, _ in change_summaries(store, unreadable=unreadable)] == [
        g for g in range(store.read().generation, -1, -1) if g not in broken
    ]
    assert [u.generation for u in unreadable] == sorted(broken, reverse=True)


def test_merged_into_reads_no_older_manifest_than_the_merge(store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    store.commit(Change(add=[rec(f"r{i}") for i in range(5)]))
    for i in range(4):
        store.commit(Change(add=[rec(f"old{i}")]))
    merge_gen = merge(store, ["r1", "r2"], "r12")
    store.commit(Change(add=[rec("new")]))
    read: list[Path] = []
    real = memory.store.history.read_change

    def counting(path: Path) -> tuple[int, dict[str, Any]]:
        read.append(path)
        return real(path)

    monkeypatch.setattr(memory.store.history, "read_change", counting)
    assert merged_into(store, "r1") == "r12"
    assert read == [archived(store, merge_gen)]  # the current manifest answers the rest


def test_every_history_prune_is_logged_naming_each_generation_and_file_it_deleted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """README: nothing is deleted silently. A prune removes old manifests and the archived
    files no kept generation names; the store.history_pruned line names every one of them."""
    import logging

    d = tmp_path / "mem"
    d.mkdir()
    store = MemoryStore.init(d, history_generations=3)
    history = d / HISTORY
    before: set[str] = set()
    pruned: list[logging.LogRecord] = []
    with caplog.at_level(logging.INFO, logger="memory.store"):
        for i in range(16):
            store.commit(Change(add=[rec(f"r{i}")]))
            if i:
                store.commit(Change(remove=[f"r{i - 1}"]))  # its file goes to .history/, then is pruned
            # MEMORY.previous-<sha>.hist is a staging copy of the index dreamd itself rendered
            # (derived from the manifest, hash-checked), dropped once the swap is settled
            now = {p.name for p in history.iterdir() if not p.name.startswith(PREVIOUS_INDEX_PREFIX)}
            gone = before - now
            events = [r for r in caplog.records if getattr(r, "event", None) == "store.history_pruned"]
            if gone:
                assert events, f"deleted without a log line: {sorted(gone)}"
                last: Any = events[-1]
                named = {history_manifest_name(g) for g in last.generations} | set(last.files)
                assert named == gone
                assert last.memory_dir == str(d) and last.files  # archived record files were pruned too
                pruned += events
            caplog.clear()
            before = now
    assert pruned  # pruning ran (in batches of ten generations)


def test_a_forget_of_an_unknown_name_reads_each_kept_manifest_once_per_store(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name that was never there makes merged_into walk all of history; kept manifests never
    change, so the daemon's long-lived store reads each one once, not once per forget (the
    20-minute torture run, which keeps all history, spent 406 ms a job on such forgets). A
    generation committed since is read; one pruned leaves the cache."""
    for i in range(6):
        store.commit(Change(add=[rec(f"r{i}")]))
    read: list[Path] = []
    real = memory.store.history.read_change

    def counting(path: Path) -> tuple[int, dict[str, Any]]:
        read.append(path)
        return real(path)

    monkeypatch.setattr(memory.store.history, "read_change", counting)
    assert merged_into(store, "never-there") is None
    first = len(read)
    assert first == len(store.history_manifests())
    assert merged_into(store, "never-there") is None
    assert len(read) == first
    store.commit(Change(add=[rec("later")]))
    assert merged_into(store, "never-there") is None
    assert len(read) == first + 1
    merge(store, ["r1", "r2"], "r12")
    assert merged_into(store, "r1") == "r12"
