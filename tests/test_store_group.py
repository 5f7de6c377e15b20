"""Group commit (DESIGN §3 "Group commit"): ``MemoryStore.commit_all`` applies several changes
under one lock and one manifest rename, each change its own generation, so ``dreamd log``,
rollback and the torture checker see every job's change; a duplicate is a no-op for its job, a
failing change fails alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory.errors import ConflictError, NotApplied
from memory.store.history import log_entries, rollback
from memory.store.manifest import Manifest
from memory.store.records import make_record
from memory.store.transaction import HISTORY, MANIFEST, Change, CommitResult, MemoryStore
from tests.torture.checker import load_history


def _job(i: int, *, session: str = "s") -> Change:
    rec = make_record(f"fact-{i}", "project", f"Fact number {i} of the group", f"Body of fact {i}.")
    return Change(add=[rec], actor="job", job_id=f"job-{i}", session_id=session, cursor=(session, i + 1))


def _results(outcomes: list[CommitResult | Exception]) -> list[CommitResult]:
    assert all(isinstance(o, CommitResult) for o in outcomes), outcomes
    return [o for o in outcomes if isinstance(o, CommitResult)]


def test_a_group_makes_one_generation_per_job_and_log_and_checker_see_each(tmp_path: Path) -> None:
    store = MemoryStore.init(tmp_path / "m")
    results = _results(store.commit_all([_job(i) for i in range(4)]))
    assert [r.generation for r in results] == [1, 2, 3, 4]
    assert [r.added for r in results] == [[f"fact-{i}"] for i in range(4)]
    current = store.read()
    assert current.generation == 4
    assert current.applied_jobs == [f"job-{i}" for i in range(4)]
    assert current.cursors == {"s": 4}
    # every generation the group made is kept, each with its own job's change
    assert store.history_manifests() == [0, 1, 2, 3]
    for g in (1, 2, 3):
        kept = Manifest.loads((tmp_path / "m" / HISTORY / f"manifest-{g}.json").read_bytes(), where="test")
        assert kept.change["job_id"] == f"job-{g - 1}" and kept.change["added"] == [f"fact-{g - 1}"]
        assert [e.name for e in kept.records] == [f"fact-{i}" for i in range(g)]
    entries = {e.generation: e for e in log_entries(store)}
    assert [entries[g].job_id for g in (1, 2, 3, 4)] == ["job-0", "job-1", "job-2", "job-3"]
    history = load_history(tmp_path / "m")
    assert not history.broken
    assert history.commits_by_job() == {f"job-{i}": [i + 1] for i in range(4)}


def test_a_group_fsyncs_far_less_than_the_same_commits_one_by_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counts = {"n": 0}
    real = os.fsync

    def counting(fd: int) -> None:
        counts["n"] += 1
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    one = MemoryStore.init(tmp_path / "one")
    counts["n"] = 0
    for i in range(8):
        one.commit(_job(i))
    alone = counts["n"]
    group = MemoryStore.init(tmp_path / "group")
    counts["n"] = 0
    group.commit_all([_job(i) for i in range(8)])
    together = counts["n"]
    assert one.read().records == [] or len(group.read().records) == len(one.read().records) == 8
    # alone: per commit the record, its directory, MEMORY.md, the history link, the manifest and
    # its directory; together: the records and the kept generations, and the rest once
    assert together <= alone // 2, (together, alone)


def test_a_duplicate_job_in_a_group_is_a_no_op_for_it_and_the_others_commit(tmp_path: Path) -> None:
    store = MemoryStore.init(tmp_path / "m")
    store.commit(_job(1))
    outcomes = _results(store.commit_all([_job(0), _job(1), _job(2), _job(2)]))
    assert [o.duplicate for o in outcomes] == [False, True, False, True]
    current = store.read()
    assert sorted(e.name for e in current.records) == ["fact-0", "fact-1", "fact-2"]
    assert sorted(current.applied_jobs) == ["job-0", "job-1", "job-2"]
    assert len(current.applied_jobs) == len(set(current.applied_jobs))


def test_a_conflicting_change_fails_alone_and_the_others_commit(tmp_path: Path) -> None:
    store = MemoryStore.init(tmp_path / "m")
    store.commit(_job(0))
    stale = Change(remove=["fact-0"], base={"fact-0": "0" * 64}, actor="job", job_id="stale")
    outcomes = store.commit_all([_job(1), stale, _job(2)])
    assert isinstance(outcomes[1], ConflictError)
    assert isinstance(outcomes[0], CommitResult) and isinstance(outcomes[2], CommitResult)
    current = store.read()
    assert sorted(e.name for e in current.records) == ["fact-0", "fact-1", "fact-2"]
    assert "stale" not in current.applied_jobs
    assert [outcomes[0].generation, outcomes[2].generation] == [2, 3]


def test_stop_at_failure_leaves_the_changes_after_a_failed_one_unapplied(tmp_path: Path) -> None:
    store = MemoryStore.init(tmp_path / "m")
    store.commit(_job(0))
    stale = Change(remove=["fact-0"], base={"fact-0": "0" * 64}, actor="job", job_id="stale")
    outcomes = store.commit_all([_job(1), stale, _job(2), _job(3)], stop_at_failure=True)
    assert isinstance(outcomes[0], CommitResult)
    assert isinstance(outcomes[1], ConflictError) and not isinstance(outcomes[1], NotApplied)
    assert isinstance(outcomes[2], NotApplied) and isinstance(outcomes[3], NotApplied)
    current = store.read()
    assert sorted(e.name for e in current.records) == ["fact-0", "fact-1"]
    assert current.applied_jobs == ["job-0", "job-1"]


def test_bookkeeping_changes_in_a_group_fold_into_the_generation_current_then(tmp_path: Path) -> None:
    store = MemoryStore.init(tmp_path / "m")
    cursor_only = Change(actor="job", job_id="nothing-new", session_id="t", cursor=("t", 9), note="no new turns")
    outcomes = _results(store.commit_all([cursor_only, _job(0), cursor_only, _job(1)]))
    assert [o.generation for o in outcomes if not o.duplicate] == [0, 1, 2]
    assert outcomes[2].duplicate  # the same job id twice in one group: applied once
    current = store.read()
    assert current.generation == 2 and current.cursors["t"] == 9
    gen0 = Manifest.loads((tmp_path / "m" / HISTORY / "manifest-0.json").read_bytes(), where="test")
    assert gen0.applied_jobs == ["nothing-new"] and gen0.records == []  # generation 0 as it was left


def test_rollback_to_a_generation_made_inside_a_group_restores_that_set(tmp_path: Path) -> None:
    store = MemoryStore.init(tmp_path / "m")
    store.commit_all([_job(i) for i in range(3)])
    rollback(store, to=2)
    assert sorted(e.name for e in store.read().records) == ["fact-0", "fact-1"]


def test_a_group_superseding_a_record_added_earlier_in_it_archives_that_record(tmp_path: Path) -> None:
    store = MemoryStore.init(tmp_path / "m")
    newer = make_record("fact-0b", "project", "Fact number 0, corrected", "Body of fact 0, corrected.")
    merge = Change(merges=[(["fact-0"], newer)], actor="job", job_id="job-merge")
    _results(store.commit_all([_job(0), merge]))
    current = store.read()
    assert [e.name for e in current.records] == ["fact-0b"]
    gen1 = Manifest.loads((tmp_path / "m" / HISTORY / "manifest-1.json").read_bytes(), where="test")
    first = gen1.by_name()["fact-0"].file
    assert not (tmp_path / "m" / first).exists()
    assert (tmp_path / "m" / HISTORY / f"{first}.hist").exists()  # where rollback and the checker look


def test_a_kept_manifest_a_killed_group_left_above_the_current_generation_is_passed_over_and_replaced(
    tmp_path: Path,
) -> None:
    store = MemoryStore.init(tmp_path / "m")
    store.commit(_job(0))
    ghost = store.read().replace(generation=2, change={"actor": "job", "job_id": "never"})
    (tmp_path / "m" / HISTORY / "manifest-2.json").write_bytes(ghost.dumps())
    assert store.history_manifests() == [0]
    assert 2 not in {e.generation for e in log_entries(store)}
    store.commit_all([_job(1), _job(2)])  # makes generation 2 (kept) and 3 (current)
    kept = Manifest.loads((tmp_path / "m" / HISTORY / "manifest-2.json").read_bytes(), where="test")
    assert kept.change.get("job_id") == "job-1"
    store.commit(_job(3))  # keeps generation 3 by a link over nothing; 4 is current
    assert store.history_manifests() == [0, 1, 2, 3]
    assert Manifest.loads((tmp_path / "m" / MANIFEST).read_bytes(), where="test").generation == 4


def test_pruning_does_not_list_history_while_nothing_can_be_due(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = MemoryStore.init(tmp_path / "m", history_generations=5)
    for i in range(30):
        store.commit(_job(i))
    assert store.history_manifests()[0] >= 30 - 5 - 10  # pruned as before
    listed = {"n": 0}
    real = store.archive.generations

    def counting() -> list[int]:
        listed["n"] += 1
        return real()

    monkeypatch.setattr(store.archive, "generations", counting)
    for i in range(30, 34):
        store.commit(_job(i))
    assert listed["n"] == 0
    for i in range(34, 45):
        store.commit(_job(i))
    assert listed["n"] >= 1  # due again: listed and pruned
    assert store.history_manifests()[0] >= 45 - 5 - 10
