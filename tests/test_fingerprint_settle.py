"""The daemon's directory fingerprint never absorbs a write that lands after our commit point
(dreamd.daemon.watch.settled_fingerprint, DirectoryKeeper._settle; issue 13).

The integration tests run the real job, dream and reconcile code through a DirectoryKeeper and
inject someone else's write at the store's ``manifest_replaced`` step (right after the rename
that is the commit point); the next scan must reconcile it, without waiting for the timer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dreamd.config import default_config
from dreamd.daemon.directories import DirectoryKeeper
from dreamd.daemon.pool import Task
from dreamd.daemon.watch import Fingerprint, fingerprint, settled_fingerprint
from dreamd.jobs import work
from dreamd.jobs.gates import DirState
from memory.model.llm import Completion
from memory.spool.jobs import Job
from memory.store.layout import INDEX
from memory.store.records import make_record, render_record
from memory.store.transaction import Change, MemoryStore


def record_bytes(name: str, body: str = "Body.") -> bytes:
    return render_record(make_record(name, "user", f"About {name}", body + "\n"))


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    d = tmp_path / "mem"
    d.mkdir()
    s = MemoryStore.init(d)
    s.commit(Change(add=[make_record(n, "user", f"About {n}", f"Body of {n}.\n") for n in ("tabs-a", "tabs-b", "keep")]))
    return s


def entry_file(store: MemoryStore, name: str) -> Path:
    return store.path / store.read().by_name()[name].file


# ---------------------------------------------------------------- settled_fingerprint


def settle(store: MemoryStore, trusted: Fingerprint | None, **kw: Any) -> Fingerprint | None:
    return settled_fingerprint(store.path, trusted or frozenset(), store.snapshot, **kw)


def test_our_own_commit_settles_to_the_plain_fingerprint(store: MemoryStore) -> None:
    before = fingerprint(store.path)
    store.commit(Change(add=[make_record("new", "user", "About new", "New.\n")], remove=["keep"]))
    assert settle(store, before) == fingerprint(store.path)
    # With nothing trusted every file is checked against the manifest, and still agrees.
    assert settle(store, None) == fingerprint(store.path)


@pytest.mark.parametrize("what", ["new file", "hand edit", "hand deletion", "index edit"])
def test_a_write_after_the_commit_is_never_absorbed(store: MemoryStore, what: str) -> None:
    before = fingerprint(store.path)
    store.commit(Change(add=[make_record("new", "user", "About new", "New.\n")]))
    if what == "new file":
        (store.path / "someone_else.md").write_bytes(record_bytes("someone-else"))
    elif what == "hand edit":
        entry_file(store, "new").write_bytes(record_bytes("new", "Edited by hand."))
    elif what == "hand deletion":
        entry_file(store, "tabs-a").unlink()
    else:
        (store.path / INDEX).write_text("# my own notes\n")
    settled = settle(store, before)
    assert settled != fingerprint(store.path)  # so the next scan reconciles
    assert settled != fingerprint(store.path)  # and keeps doing so until someone does


def test_a_reconcile_may_rewrite_the_index_without_being_rescanned(store: MemoryStore) -> None:
    seen = fingerprint(store.path)
    (store.path / INDEX).write_text("# rendered otherwise\n")
    assert settle(store, seen, trust_index=True) == fingerprint(store.path)
    assert settle(store, seen) != fingerprint(store.path)


def test_an_unreadable_manifest_settles_to_the_plain_fingerprint(store: MemoryStore) -> None:
    (store.path / "manifest.json").write_text("{ broken")
    fresh = MemoryStore(store.path)
    assert settled_fingerprint(store.path, frozenset(), fresh.snapshot) == fingerprint(store.path)
    assert settled_fingerprint(store.path / "gone", frozenset(), fresh.snapshot) is None


# ---------------------------------------------------------------- through the daemon's keeper


class FakePool:
    """Collects the keeper's tasks; the test runs them, one at a time, like a worker would."""

    def __init__(self) -> None:
        self.tasks: list[Task] = []

    def submit(self, task: Task) -> bool:
        self.tasks.append(task)
        return True

    def has_key(self, key: object) -> bool:
        return False

    def run(self) -> list[str]:
        """Run the queued reconciles; the gate scans a changed set asks for are dropped (not
        what these tests look at)."""
        labels = []
        while self.tasks:
            task = self.tasks.pop(0)
            if task.label.startswith("scan:"):
                continue
            labels.append(task.label.split(":", 1)[0])
            task.run()
        return labels


class Ok:
    name = "scripted"

    def __init__(self, answers: list[Any]) -> None:
        self.answers = answers

    def complete(self, system: str, prompt: str, max_tokens: int) -> Completion:
        return Completion(text=json.dumps(self.answers.pop(0)), stop_reason="end_turn")


def keeper_for(store: MemoryStore, model: Any, fault: Callable[[str], None]) -> tuple[DirectoryKeeper[Any], FakePool]:
    cfg = default_config(env={"HOME": "/nonexistent"})
    ctx = work.Context(config=cfg, model=model, ledger=None, fault=fault)
    open_gates = DirState(
        enabled=True, consolidated_at=None, last_scan_at=None, record_count=99, sessions_since=99,
        spent_today=0, lease="free",
    )  # fmt: skip
    stand_in = SimpleNamespace(
        Context=work.Context,
        execute=work.execute,
        dir_state=lambda d, c, last_scan_at: open_gates,
        dream=lambda d, c: work.dream(d, c, force=True),
    )
    pool = FakePool()
    keeper: DirectoryKeeper[Any] = DirectoryKeeper(
        config=cfg, ctx=ctx, work=stand_in, pool=pool,  # type: ignore[arg-type]
        clock=lambda: 0.0, wall=lambda: datetime(2026, 11, 30, tzinfo=UTC), watch_dirs=lambda dirs: None,
    )  # fmt: skip
    keeper.managed = {store.path}
    return keeper, pool


class Injector:
    """The store's fault hook: once armed, writes someone else's file at the commit point."""

    def __init__(self, write: Callable[[], None]) -> None:
        self.write = write
        self.armed = False

    def __call__(self, step: str) -> None:
        if self.armed and step == "manifest_replaced":
            self.armed = False
            self.write()


def foreign_file(store: MemoryStore) -> Callable[[], None]:
    return lambda: (store.path / "written_meanwhile.md").write_bytes(record_bytes("written-meanwhile"))


def settle_start(keeper: DirectoryKeeper[Any], pool: FakePool, store: MemoryStore) -> None:
    """Start-up: the keeper reconciles the directory once and remembers it."""
    keeper._queue_reconcile(store.path)
    assert pool.run() == ["reconcile"]
    pool.run()
    keeper.maybe_reconcile(store.path)
    assert pool.tasks == []  # as we left it


def names(store: MemoryStore) -> set[str]:
    return {e.name for e in MemoryStore(store.path).read().records}


def test_a_write_right_after_a_dreams_commit_is_reconciled_at_the_next_scan(store: MemoryStore) -> None:
    inject = Injector(foreign_file(store))
    plan = [{"source_names": ["tabs-a", "tabs-b"], "result": {"name": "tabs", "type": "user",
             "description": "User prefers tabs", "body": "Body of tabs-a. Body of tabs-b."}}]  # fmt: skip
    keeper, pool = keeper_for(store, Ok([plan]), inject)
    settle_start(keeper, pool, store)
    inject.armed = True
    keeper.scan(store.path)
    assert not inject.armed and keeper.last_dream is not None and "applied" in keeper.last_dream
    assert "written_meanwhile" not in names(store)  # the dream committed before it landed
    keeper.maybe_reconcile(store.path)  # the next scan (an event hint or the tick)
    assert pool.run() == ["reconcile"]
    assert "written_meanwhile" in names(store)
    pool.run()
    keeper.maybe_reconcile(store.path)
    assert pool.tasks == []  # and then it is quiet again


def test_a_dreams_own_commit_causes_no_reconcile(store: MemoryStore) -> None:
    plan = [{"source_names": ["tabs-a", "tabs-b"], "result": {"name": "tabs", "type": "user",
             "description": "User prefers tabs", "body": "Body of tabs-a. Body of tabs-b."}}]  # fmt: skip
    keeper, pool = keeper_for(store, Ok([plan]), lambda step: None)
    settle_start(keeper, pool, store)
    keeper.scan(store.path)
    assert names(store) == {"keep", "tabs"}
    pool.run()
    keeper.maybe_reconcile(store.path)
    assert pool.tasks == []


def test_a_hand_edit_right_after_a_jobs_commit_is_reconciled_at_the_next_scan(store: MemoryStore) -> None:
    def edit() -> None:
        entry_file(store, "keep").write_bytes(record_bytes("keep", "Edited by hand meanwhile."))

    inject = Injector(edit)
    keeper, pool = keeper_for(store, Ok([]), inject)
    settle_start(keeper, pool, store)
    inject.armed = True
    job = Job(id="r1", kind="remember", memory_dir=store.path, session_id=None, submitted_at="",
              records=({"name": "new", "type": "user", "description": "About new", "body": "New."},))
    assert work.execute(job, keeper.ctx) == "remembered 1"
    keeper.after_write(store.path)  # what the dispatcher does after every job
    assert not inject.armed
    assert pool.run() == []  # the gate look after the job, dropped
    keeper.maybe_reconcile(store.path)
    assert pool.run() == ["reconcile"]
    body = MemoryStore(store.path).read_record(MemoryStore(store.path).read().by_name()["keep"]).body
    assert "Edited by hand meanwhile." in body


def test_a_write_right_after_a_reconciles_commit_is_reconciled_at_the_next_scan(store: MemoryStore) -> None:
    inject = Injector(foreign_file(store))
    keeper, pool = keeper_for(store, Ok([]), inject)
    settle_start(keeper, pool, store)
    (store.path / "first.md").write_bytes(record_bytes("first"))
    inject.armed = True
    keeper.maybe_reconcile(store.path)
    assert pool.run() == ["reconcile"]  # adopts first.md, and written_meanwhile.md lands after
    assert not inject.armed
    assert names(store) >= {"first"} and "written_meanwhile" not in names(store)
    keeper.maybe_reconcile(store.path)
    assert pool.run() == ["reconcile"]
    assert "written_meanwhile" in names(store)
    pool.run()
    keeper.maybe_reconcile(store.path)
    assert pool.tasks == []

