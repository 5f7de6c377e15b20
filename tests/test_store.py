"""MemoryStore behaviour (DESIGN §2.2–2.4): commits, the derived index, reconcile, log, rollback."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memory.errors import StoreError, UnmanagedError
from memory.store.adopt import adopt
from memory.store.history import log_entries, render_log, rollback
from memory.store.manifest import Manifest
from memory.store.records import Record, make_record, sha256_hex
from memory.store.transaction import (
    ARCHIVE_SUFFIX,
    HISTORY,
    INDEX,
    MANIFEST,
    OUR_FILE_RE,
    Change,
    MemoryStore,
)
from tests.helpers.clock import FakeClock


class Crash(Exception):
    """Raised by a fault hook to stop a commit at a step, in-process."""


def rec(name: str, body: str = "", type_: str = "user", desc: str = "") -> Record:
    return make_record(name, type_, desc or f"about {name}", body or f"{name} body")


def bodies(store: MemoryStore) -> dict[str, str]:
    return {e.name: r.body for e, r in store.records()}


def top_files(d: Path) -> set[str]:
    return {p.name for p in d.iterdir() if p.is_file()}


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore.init(tmp_path / "mem", clock=FakeClock(datetime(2026, 11, 29, 10, 0, tzinfo=UTC), step=1))


# ---------------------------------------------------------------- basics


def test_init_creates_an_empty_managed_directory_and_is_idempotent(tmp_path: Path) -> None:
    d = tmp_path / "a" / "mem"
    with pytest.raises(UnmanagedError, match="no such directory"):
        MemoryStore(d).read()
    store = MemoryStore.init(d)
    m = store.read()
    assert (m.generation, m.records, m.consolidated_at) == (0, [], None)
    raw = json.loads((d / MANIFEST).read_bytes())
    assert raw["format"] == 1 and raw["generation"] == 0
    assert sha256_hex((d / INDEX).read_bytes()) == m.index_sha256
    MemoryStore.init(d)
    assert MemoryStore(d).read().generation == 0


def test_commit_to_a_missing_directory_creates_nothing(tmp_path: Path) -> None:
    d = tmp_path / "typo" / "mem"
    with pytest.raises(UnmanagedError):
        MemoryStore(d).commit(Change(add=[rec("a")]))
    with pytest.raises(UnmanagedError):
        MemoryStore(d).reconcile()
    assert not (tmp_path / "typo").exists()


def test_commit_adds_with_fresh_file_names_and_suffixes_name_collisions(store: MemoryStore) -> None:
    r1 = store.commit(Change(add=[rec("tabs")]))
    r2 = store.commit(Change(add=[rec("tabs", "other"), rec("tabs", "third")]))
    assert (r1.generation, r1.added) == (1, ["tabs"])
    assert (r2.generation, r2.added) == (2, ["tabs-2", "tabs-3"])
    m = store.read()
    for e in m.records:
        assert OUR_FILE_RE.match(e.file) and e.file.startswith(e.name + "-")
        assert sha256_hex((store.path / e.file).read_bytes()) == e.sha256
    assert bodies(store) == {"tabs": "tabs body\n", "tabs-2": "other\n", "tabs-3": "third\n"}


def test_replace_keeps_created_at_and_moves_the_old_file_to_history(store: MemoryStore) -> None:
    store.commit(Change(add=[rec("a", "v1")]))
    first = store.read().by_name()["a"]
    store.commit(Change(replace={"a": rec("a", "v2")}, actor="job", job_id="j1", session_id="s1"))
    second = store.read().by_name()["a"]
    assert second.created_at == first.created_at and second.updated_at > first.updated_at
    assert second.sources == ["manual", "session:s1", "job:j1"]
    assert not (store.path / first.file).exists()
    assert (store.path / HISTORY / f"{first.file}{ARCHIVE_SUFFIX}").read_bytes().endswith(b"v1\n")
    assert bodies(store) == {"a": "v2\n"}
    # Replacing a name that is gone (no base given) keeps the content as an add.
    store.commit(Change(remove=["a"]))
    assert store.commit(Change(replace={"a": rec("a", "v3")})).added == ["a"]


def test_a_job_is_applied_once(store: MemoryStore) -> None:
    change = Change(add=[rec("x")], actor="job", job_id="job-1", session_id="s1", cursor=("s1", 12))
    assert store.commit(change).generation == 1
    again = store.commit(change)
    assert again.duplicate and again.generation == 1
    m = store.read()
    assert (m.applied_jobs, m.cursors, m.sessions_since_consolidation) == (["job-1"], {"s1": 12}, ["s1"])
    store.commit(Change(add=[rec("y")], actor="job", job_id="job-2", session_id="s1", cursor=("s1", 5)))
    assert store.read().cursors == {"s1": 12}  # never backwards
    store.commit(Change(consolidated=True, actor="dream"))
    m = store.read()
    assert m.sessions_since_consolidation == [] and m.consolidated_at == m.committed_at


def test_unknown_actor_and_unsafe_manifest_file_names_are_refused(store: MemoryStore) -> None:
    with pytest.raises(StoreError, match="unknown actor 'robot'"):
        store.commit(Change(actor="robot"))
    raw = json.loads((store.path / MANIFEST).read_bytes())
    raw["records"] = [
        {"name": "x", "type": "user", "description": "d", "file": "../etc/passwd.md", "sha256": "0" * 64}
    ]
    (store.path / MANIFEST).write_text(json.dumps(raw))
    with pytest.raises(StoreError, match=r"is not a bare \.md file name"):
        MemoryStore(store.path).read()


def test_writer_keeps_unknown_manifest_keys(store: MemoryStore) -> None:
    raw = json.loads((store.path / MANIFEST).read_bytes())
    raw["x-future"] = {"kept": True}
    (store.path / MANIFEST).write_text(json.dumps(raw))
    store.commit(Change(add=[rec("a")]))
    assert json.loads((store.path / MANIFEST).read_bytes())["x-future"] == {"kept": True}


def test_index_is_bounded_and_says_what_it_left_out(tmp_path: Path) -> None:
    store = MemoryStore.init(tmp_path, index_max_lines=50, index_max_bytes=25_000)
    store.commit(Change(add=[rec(f"fact-{i:03d}", type_="project") for i in range(120)]))
    text = (tmp_path / INDEX).read_text()
    lines = text.splitlines()
    assert len(lines) <= 50
    shown = sum(1 for ln in lines if ln.startswith("- ["))
    assert shown > 20
    assert lines[-1] == f"_{120 - shown} more entries not shown here; `dreamd recall` and manifest.json have them all._"
    store = MemoryStore(tmp_path, index_max_bytes=2_000)
    store.commit(Change(add=[rec("one-more")]))
    assert len((tmp_path / INDEX).read_bytes()) <= 2_000


# ---------------------------------------------------------------- reconcile


def test_reconcile_commits_hand_edits_drops_hand_deletes_and_adopts_new_files(store: MemoryStore) -> None:
    store.commit(Change(add=[rec("edited"), rec("deleted"), rec("kept")]))
    by = store.read().by_name()
    edited = store.path / by["edited"].file
    edited.write_text("---\nname: edited\ndescription: changed by hand\ntype: feedback\n---\nnew words\n")
    (store.path / by["deleted"].file).unlink()
    (store.path / "user_role.md").write_text("---\nname: Role — senior\ndescription: The user is senior\n---\nSenior.\n")
    report = store.reconcile()
    assert (report.updated, report.dropped, report.adopted) == (["edited"], ["deleted"], ["user_role"])
    assert report.generation == 2 and report.index_rebuilt
    m = store.read()
    e = m.by_name()["edited"]
    assert (e.file, e.type, e.description) == (by["edited"].file, "feedback", "changed by hand")
    assert e.sha256 == sha256_hex(edited.read_bytes())
    assert e.sources[-1] == "reconcile"
    assert m.by_name()["user_role"].type == "user"
    assert bodies(store) == {"edited": "new words\n", "kept": "kept body\n", "user_role": "Senior.\n"}
    assert m.change == {"actor": "reconcile", "added": ["user_role"], "updated": ["edited"], "removed": ["deleted"]}
    # Nothing else to do: a second reconcile commits nothing.
    again = store.reconcile()
    assert again.generation is None and not again.changed and store.read().generation == 2


def test_reconcile_leaves_malformed_files_in_place_and_reports_them(store: MemoryStore) -> None:
    store.commit(Change(add=[rec("good")]))
    bad = b"---\nname: bad\ndescription: *alias\n---\nbody\n"
    (store.path / "bad.md").write_bytes(bad)
    good = store.path / store.read().by_name()["good"].file
    good_bytes = good.read_bytes()
    good.write_bytes(b"\xff\xfe not utf-8")  # a hand edit that broke the file
    report = store.reconcile()
    assert [f for f, _ in report.malformed] == [good.name, "bad.md"]
    assert "not valid UTF-8" in report.malformed[0][1] and good.name in report.malformed[0][1]
    assert report.generation is None and store.read().generation == 1
    assert (store.path / "bad.md").read_bytes() == bad
    assert store.read().by_name()["good"].sha256 == sha256_hex(good_bytes)  # entry kept as it was
    assert [f for f, _ in store.scan_malformed()] == ["bad.md", good.name]


def test_foreign_index_edit_is_archived_then_rebuilt(store: MemoryStore) -> None:
    store.commit(Change(add=[rec("a")]))
    foreign = b"# My own notes\n- remember the milk\n"
    (store.path / INDEX).write_bytes(foreign)
    report = store.reconcile()
    assert report.index_rebuilt and report.index_archived is not None
    assert (store.path / report.index_archived).read_bytes() == foreign
    assert sha256_hex((store.path / INDEX).read_bytes()) == store.read().index_sha256
    assert store.reconcile().index_archived is None
    (store.path / INDEX).unlink()
    assert store.reconcile().index_rebuilt
    assert sha256_hex((store.path / INDEX).read_bytes()) == store.read().index_sha256


def test_files_the_store_did_not_write_are_never_deleted(tmp_path: Path) -> None:
    d = tmp_path / "mem"
    d.mkdir()
    original = b"---\nname: user_name\ndescription: User's name\ntype: user\n---\n\nxiangx\n"
    (d / "user_name.md").write_bytes(original)
    (d / "notes.txt").write_text("not a record")
    (d / "sub").mkdir()
    (d / "sub" / "x.md").write_text("nested")
    (d / "feedback_style.md").write_text("---\nname: Style\ndescription: d\ntype: feedback\n---\nv1\n")
    adopt(d)
    store = MemoryStore(d, history_generations=2)
    store.commit(Change(replace={"user_name": rec("user_name", "renamed")}))
    store.commit(Change(remove=["feedback_style"]))
    assert (d / HISTORY / f"user_name.md{ARCHIVE_SUFFIX}").read_bytes() == original
    assert (d / HISTORY / f"feedback_style.md{ARCHIVE_SUFFIX}").exists()
    for i in range(30):  # enough generations for history pruning to run several times
        store.commit(Change(add=[rec(f"n{i}")]))
    store.reconcile()
    assert (d / HISTORY / f"user_name.md{ARCHIVE_SUFFIX}").read_bytes() == original
    assert (d / HISTORY / f"feedback_style.md{ARCHIVE_SUFFIX}").exists()
    assert (d / "notes.txt").read_text() == "not a record"
    assert (d / "sub" / "x.md").read_text() == "nested"
    assert len(store.history_manifests()) <= 2 + 10
    # Pruning removed old versions of our own files that no kept manifest names.
    kept_names = {e.file for g in store.history_manifests() for e in store.read_generation(g).records}
    for p in (d / HISTORY).iterdir():
        if OUR_FILE_RE.match(p.name.removesuffix(ARCHIVE_SUFFIX)):
            assert p.name.removesuffix(ARCHIVE_SUFFIX) in kept_names


def test_forgotten_foreign_file_left_by_a_crash_is_not_re_adopted(tmp_path: Path) -> None:
    d = tmp_path / "mem"
    d.mkdir()
    (d / "user_name.md").write_text("---\nname: user_name\ndescription: User's name\ntype: user\n---\nx\n")
    adopt(d)

    def crash_after_commit_point(step: str) -> None:
        if step == "manifest_replaced":
            raise Crash(step)

    with pytest.raises(Crash):
        MemoryStore(d, fault=crash_after_commit_point).commit(Change(remove=["user_name"]))
    store = MemoryStore(d)
    assert store.read().records == [] and (d / "user_name.md").exists()
    report = store.reconcile()
    assert report.adopted == [], "a forgotten record came back"
    assert store.read().records == []
    assert not (d / "user_name.md").exists() and (d / HISTORY / f"user_name.md{ARCHIVE_SUFFIX}").exists()


# ---------------------------------------------------------------- log and rollback


def test_log_lists_what_each_generation_did_and_by_whom(store: MemoryStore) -> None:
    store.commit(Change(add=[rec("a"), rec("b"), rec("c"), rec("x")]))
    store.commit(Change(replace={"a": rec("a", "a2")}, actor="job", job_id="j-7", session_id="s-1"))
    store.commit(
        Change(merges=[(["b", "c"], rec("bc")), (["x"], None)], actor="dream", consolidated=True, note="nightly")
    )
    store.commit(Change(remove=["a"]))
    entries = log_entries(store)
    assert [e.generation for e in entries] == [4, 3, 2, 1, 0]
    assert [e.actor for e in entries] == ["manual", "dream", "job", "manual", "init"]
    assert entries[0].removed == ["a"]
    assert entries[1].merged == [{"from": ["b", "c"], "into": "bc"}, {"from": ["x"], "into": None}]
    assert (entries[1].added, sorted(entries[1].removed)) == (["bc"], ["b", "c", "x"])
    assert (entries[2].updated, entries[2].job_id, entries[2].session_id) == (["a"], "j-7", "s-1")
    assert entries[3].added == ["a", "b", "c", "x"]
    text = render_log(entries)
    assert "generation 3" in text and "1 added, 1 merged, 1 dropped by a dream" in text
    assert "  merged   b, c -> bc\n" in text
    assert "  dropped  x\n" in text
    assert "  removed  a\n" in text
    assert "1 updated by session s-1 (job j-7)" in text
    assert len(log_entries(store, limit=2)) == 2


def test_rollback_restores_replaced_and_removed_files_from_history(store: MemoryStore) -> None:
    store.commit(Change(add=[rec("a", "v1"), rec("b", "b1")]))
    gen1 = store.read()
    store.commit(Change(replace={"a": rec("a", "v2")}))
    store.commit(Change(remove=["b"], add=[rec("c")]))
    assert not (store.path / gen1.by_name()["a"].file).exists()  # moved to .history
    result = rollback(store, to=1)
    assert result.generation == 4
    assert (sorted(result.added), result.updated, result.removed) == (["b"], ["a"], ["c"])
    assert bodies(store) == {"a": "v1\n", "b": "b1\n"}
    m = store.read()
    assert {e.name: e.sha256 for e in m.records} == {e.name: e.sha256 for e in gen1.records}
    assert m.change["actor"] == "rollback" and m.change["note"] == "rollback to generation 1"
    for e in m.records:
        assert sha256_hex((store.path / e.file).read_bytes()) == e.sha256
    # Rolling forward again works the same way.
    rollback(store, to=3)
    assert bodies(store) == {"a": "v2\n", "c": "c body\n"}


def test_rollback_restores_a_foreign_file_under_a_new_name_when_its_name_is_taken(tmp_path: Path) -> None:
    d = tmp_path / "mem"
    d.mkdir()
    v1 = b"---\nname: user_name\ndescription: User's name\ntype: user\n---\nxiangx\n"
    (d / "user_name.md").write_bytes(v1)
    adopt(d)
    store = MemoryStore(d)
    store.commit(Change(replace={"user_name": rec("user_name", "renamed")}))  # user_name.md -> .history
    v3 = b"---\nname: user_name\ndescription: Written again by hand\ntype: user\n---\nnew\n"
    (d / "user_name.md").write_bytes(v3)
    assert store.reconcile().adopted == ["user_name-2"]
    rollback(store, to=0)
    m = store.read()
    [entry] = m.records
    assert entry.name == "user_name" and OUR_FILE_RE.match(entry.file)
    assert (d / entry.file).read_bytes() == v1
    # The hand-written file left the set: kept in .history next to the first version, not lost.
    assert not (d / "user_name.md").exists()
    kept = sorted(p.read_bytes() for p in (d / HISTORY).glob("user_name.md*"))
    assert kept == sorted([v1, v3])


def test_rollback_after_an_in_place_hand_edit_refuses_clearly(store: MemoryStore) -> None:
    store.commit(Change(add=[rec("a", "v1")]))
    entry = store.read().by_name()["a"]
    (store.path / entry.file).write_text("---\nname: a\ndescription: d\ntype: user\n---\nhand\n")
    store.reconcile()
    # dreamd never had a copy of v1 other than the file the person overwrote.
    with pytest.raises(StoreError, match="no longer kept"):
        rollback(store, to=1)
    assert bodies(store) == {"a": "hand\n"}


def test_rollback_to_unknown_or_current_generation_errors_and_writes_nothing(store: MemoryStore) -> None:
    store.commit(Change(add=[rec("a")]))
    before = top_files(store.path)
    with pytest.raises(StoreError, match="generation 99 is not kept"):
        rollback(store, to=99)
    with pytest.raises(StoreError, match="generation 1 is already current"):
        rollback(store, to=1)
    assert top_files(store.path) == before and store.read().generation == 1


def test_rollback_refuses_when_a_file_is_no_longer_kept(store: MemoryStore) -> None:
    store.commit(Change(add=[rec("a", "v1")]))
    old = store.read().by_name()["a"]
    store.commit(Change(replace={"a": rec("a", "v2")}))
    (store.path / HISTORY / f"{old.file}{ARCHIVE_SUFFIX}").unlink()
    with pytest.raises(StoreError, match=f"{old.file} \\(a\\) is no longer kept"):
        rollback(store, to=1)
    assert store.read().generation == 2


def test_history_keeps_every_manifest_until_pruned(store: MemoryStore) -> None:
    for i in range(5):
        store.commit(Change(add=[rec(f"n{i}")]))
    assert store.history_manifests() == [0, 1, 2, 3, 4]
    m2 = Manifest.loads((store.path / HISTORY / "manifest-2.json").read_bytes(), where="t")
    assert [e.name for e in m2.records] == ["n0", "n1"]
    assert store.read_generation(2).generation == 2


def test_manifest_bytes_are_canonical_after_incremental_encoding(store: MemoryStore) -> None:
    """Commits reuse encoded entries (Manifest.dumps fragments); the bytes must equal a fresh encode."""
    store.commit(Change(add=[rec(f"n{i}") for i in range(20)]))
    for i in range(5):
        store.commit(Change(add=[rec(f"m{i}")], replace={f"n{i}": rec(f"n{i}", f"v{i}")}, remove=[f"n{10 + i}"]))
    (store.path / store.read().by_name()["n19"].file).write_text("---\nname: n19\ndescription: hand\ntype: user\n---\nh\n")
    store.reconcile()
    store.commit(Change(add=[rec("last")]))
    data = (store.path / MANIFEST).read_bytes()
    assert Manifest.loads(data, where="t").dumps() == data
    assert store.read().by_name()["n19"].description == "hand"


@pytest.mark.parametrize("fresh_instances", [False, True], ids=["one-store", "store-per-commit"])
def test_pruning_keeps_exactly_the_files_kept_generations_need(tmp_path: Path, fresh_instances: bool) -> None:
    d = tmp_path / "mem"
    MemoryStore.init(d)
    store = MemoryStore(d, history_generations=5)
    for i in range(45):
        if fresh_instances:
            store = MemoryStore(d, history_generations=5)
        store.commit(Change(replace={"a": rec("a", f"v{i}")}, add=[rec(f"n{i}")], remove=[f"n{i - 2}"]))
    kept = store.history_manifests()
    assert kept[0] >= 45 - 5 - 10 and kept[-1] == 44
    needed: set[str] = set()
    for g in kept:
        for e in store.read_generation(g).records:
            needed.add(e.file)
            top, hist = d / e.file, d / HISTORY / f"{e.file}{ARCHIVE_SUFFIX}"
            data = top.read_bytes() if top.exists() else hist.read_bytes()
            assert sha256_hex(data) == e.sha256, (g, e.file)
    ours_in_history = {
        p.name.removesuffix(ARCHIVE_SUFFIX)
        for p in (d / HISTORY).iterdir()
        if OUR_FILE_RE.match(p.name.removesuffix(ARCHIVE_SUFFIX))
    }
    assert ours_in_history <= needed
    assert len(ours_in_history) >= 10  # old versions of "a" that kept generations still name
    rollback(store, to=kept[0])
    assert bodies(store)["a"] == f"v{kept[0] - 1}\n"


def test_orphans_are_archived_apart_and_never_pruned(tmp_path: Path) -> None:
    """A file merely *named* like ours may be a person's: it is kept in history forever."""
    store = MemoryStore.init(tmp_path / "m", orphan_grace=0, history_generations=1)
    lookalike = store.path / "notes-0123456789.md"
    lookalike.write_text("---\nname: notes\ntype: user\ndescription: mine\n---\nmy words\n")
    for i in range(15):
        store.commit(Change(add=[make_record(f"r{i}", "user", f"d{i}", "b")]))
    kept = store.path / HISTORY / f"orphan.notes-0123456789.md{ARCHIVE_SUFFIX}"
    assert kept.read_text().endswith("my words\n")


def test_reconcile_reports_a_record_path_that_became_unreadable(tmp_path: Path) -> None:
    store = MemoryStore.init(tmp_path / "m")
    store.commit(Change(add=[make_record("a", "user", "d", "b")]))
    entry = store.read().records[0]
    (store.path / entry.file).unlink()
    (store.path / entry.file).mkdir()
    report = store.reconcile()
    assert [f for f, _ in report.malformed] == [entry.file]
    assert [e.name for e in store.read().records] == ["a"]


def test_a_symlinked_md_file_is_reported_never_adopted_or_followed(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("---\nname: elsewhere\ntype: user\ndescription: outside\n---\nsecret plans\n")
    store = MemoryStore.init(tmp_path / "m")
    (store.path / "notes.md").symlink_to(outside)
    report = store.reconcile()
    assert report.adopted == []
    assert [f for f, _ in report.malformed] == ["notes.md"]
    assert "symbolic link" in report.malformed[0][1]
    assert [f for f, _ in store.scan_malformed()] == ["notes.md"]
    assert (store.path / "notes.md").is_symlink()  # left in place


def test_a_commit_that_changes_no_record_makes_no_generation(store: MemoryStore) -> None:
    """Item 6 of issue 20: a cursor-only commit used to be a generation of its own, so half of
    `dreamd log`, of the rollback window and of the git commits of a sync were cursors."""
    store.commit(Change(add=[rec("a")], actor="job", job_id="j-1", session_id="s-1", cursor=("s-1", 2)))
    before = store.read()
    result = store.commit(Change(actor="job", job_id="j-2", session_id="s-1", cursor=("s-1", 4), note="no new turns"))
    after = store.read()
    assert result.generation == before.generation == after.generation
    assert after.cursors["s-1"] == 4 and "j-2" in after.applied_jobs  # the bookkeeping is kept
    assert after.change == before.change and after.committed_at == before.committed_at
    assert after.extra["bookkept"]["note"] == "no new turns" and after.extra["bookkept"]["job_id"] == "j-2"
    assert store.commit(Change(actor="job", job_id="j-2", cursor=("s-1", 9))).duplicate
    assert store.history_manifests() == list(range(before.generation))
    entries = log_entries(store)
    assert [e.generation for e in entries] == [before.generation, 0]
    assert entries[0].added == ["a"]
    # the next change is the next generation, and its history keeps the bookkeeping
    assert store.commit(Change(add=[rec("b")])).generation == before.generation + 1
    assert store.read_generation(before.generation).cursors["s-1"] == 4
    assert "bookkept" not in store.read().extra


def test_log_passes_over_old_generations_that_changed_nothing(store: MemoryStore) -> None:
    """Stores written before bookkeeping commits were made in place keep their cursor-only
    generations in .history/; the log shows only those that changed something."""
    store.commit(Change(add=[rec("a")], actor="job", session_id="s-1"))
    store.commit(Change(add=[rec("b")], actor="job", session_id="s-2"))
    hist = store.path / HISTORY
    old = store.read_generation(1)
    noise = old.replace(change={"actor": "job", "job_id": "j-x", "session_id": "s-1", "note": "no new turns"})
    (hist / "manifest-1.json").unlink()
    (hist / "manifest-1.json").write_bytes(noise.dumps())
    assert [e.generation for e in log_entries(store)] == [2, 0]
    assert [e.generation for e in log_entries(store, every=True)] == [2, 1, 0]
    assert "1 added by session s-2" in render_log(log_entries(store))


def test_a_commit_that_leaves_the_index_as_it_is_does_not_rewrite_memory_md(tmp_path: Path) -> None:
    """A cursor-only commit renders the same MEMORY.md: the file is left alone (same inode, no
    fsync, no renames), while one that differs, ours or a hand edit, is still replaced and the
    hand edit kept in .history/."""
    store = MemoryStore.init(tmp_path / "m")
    store.commit(Change(add=[rec("a", "alpha")], actor="job", job_id="j-1", session_id="s", cursor=("s", 1)))
    index = store.path / "MEMORY.md"
    before = index.stat().st_ino
    store.commit(Change(actor="job", job_id="j-2", session_id="s", cursor=("s", 2), note="no new turns"))
    assert index.stat().st_ino == before
    assert store.read().cursors["s"] == 2
    assert sha256_hex(index.read_bytes()) == store.read().index_sha256
    index.write_text("# my own notes\n")
    store.commit(Change(actor="job", job_id="j-3", session_id="s", cursor=("s", 3), note="no new turns"))
    assert sha256_hex(index.read_bytes()) == store.read().index_sha256
    kept = [p for p in store.history_path.iterdir() if p.name.startswith("MEMORY-")]
    assert [p.read_text() for p in kept] == ["# my own notes\n"]


def test_records_of_a_manifest_read_before_are_that_generations_set(store: MemoryStore) -> None:
    """A dream plans over the records of the snapshot its commit is based on: a record a later
    commit added is not among them, while ``records()`` reads the current set."""
    store.commit(Change(add=[rec("first")]))
    snapshot = store.read()
    store.commit(Change(add=[rec("second")]))
    assert [e.name for e, _ in store.records(snapshot)] == ["first"]
    assert sorted(e.name for e, _ in store.records()) == ["first", "second"]


def test_a_set_of_several_megabytes_is_parsed_once_per_store(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon keeps one store per directory and dreams over every record: a set larger than
    the parse cache would be parsed whole on every read (the cache emptied part way through)."""
    body = "A line that says something about the deploy script and its flags. " * 40  # ~2.7 KB
    store.commit(Change(add=[rec(f"note-{i}", body=f"{i}: {body}") for i in range(1100)]))  # ~3 MB of files
    first = store.records()
    parsed: list[str] = []
    original = MemoryStore.parse_entry

    def counting(self: MemoryStore, entry: Any, data: bytes) -> Record:
        parsed.append(entry.name)
        return original(self, entry, data)

    monkeypatch.setattr(MemoryStore, "parse_entry", counting)
    again = store.records()
    assert parsed == []
    assert [(e.name, r.body) for e, r in again] == [(e.name, r.body) for e, r in first]
