"""A dream runs with fewer cyclic collections (generation 0's threshold raised) and puts the
process's threshold back when the last concurrent dream ends, whatever way it ends."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import pytest

import dreamd.jobs.work as work
from dreamd.config import default_config
from dreamd.jobs.work import DREAM_GC_THRESHOLD, Context, dream
from dreamd.models.offline.model import OfflineModel
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore


def _store(path: Path) -> Path:
    MemoryStore.init(path)
    MemoryStore(path).commit(Change(add=[make_record(f"fact-{i}", "project", f"Fact {i}", f"Body {i}.") for i in range(4)]))
    return path


def test_the_threshold_is_raised_while_planning_and_restored_after(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []
    original = work.dream_batches

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(gc.get_threshold())
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(work, "dream_batches", spy)
    ctx = Context(config=default_config(env={"HOME": str(tmp_path)}), model=OfflineModel(), ledger=None)
    for dry_run in (True, False):
        dream(_store(tmp_path / f"m{dry_run}"), ctx, force=True, dry_run=dry_run)
    assert [t[0] for t in seen] == [max(before[0], DREAM_GC_THRESHOLD)] * 2
    assert gc.get_threshold() == before


def test_a_failing_dream_and_overlapping_dreams_put_the_threshold_back() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), work._fewer_collections():
        raise RuntimeError("planning failed")
    assert gc.get_threshold() == before
    inside = threading.Event()
    release = threading.Event()

    def other() -> None:
        with work._fewer_collections():
            inside.set()
            release.wait(10)

    t = threading.Thread(target=other)
    t.start()
    assert inside.wait(10)
    with work._fewer_collections():
        assert gc.get_threshold()[0] == max(before[0], DREAM_GC_THRESHOLD)
    assert gc.get_threshold()[0] == max(before[0], DREAM_GC_THRESHOLD)  # the other dream still runs
    release.set()
    t.join(10)
    assert gc.get_threshold() == before
