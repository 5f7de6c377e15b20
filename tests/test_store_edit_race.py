"""A hand edit that lands while a commit is in flight is never left only in ``.history/``.

A person's editor or another tool edits a record file without dreamd's lock. A commit verifies
the files it touches, then writes, then replaces the manifest, then moves the files the new set
no longer names into ``.history/``. An edit landing after the verification used to be archived
unseen (the torture run caught one behind a dream merge). Each test edits the file in place
(open, write, truncate: the chaos editor's way) from the store's step hook at every step of
the commit, for a merge, a removal and a replacement, and checks that the edited text is in a
live record once the directory is reconciled — and also kept in ``.history/``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from memory.errors import ConflictError
from memory.store.records import make_record
from memory.store.transaction import ARCHIVE_SUFFIX, HISTORY, Change, MemoryStore

STEPS = ("verified", "files_written", "index_written", "history_linked", "manifest_replaced")
EDIT = "Edited by hand while the commit ran."


def _setup(tmp_path: Path) -> tuple[MemoryStore, dict[str, str], dict[str, str]]:
    MemoryStore.init(tmp_path)
    store = MemoryStore(tmp_path)
    store.commit(Change(add=[make_record("alpha", "user", "Alpha fact", "Alpha body.\n"),
                             make_record("beta", "user", "Beta fact", "Beta body.\n")]))
    m = store.read()
    return store, {e.name: e.file for e in m.records}, {e.name: e.sha256 for e in m.records}


def _editor(path: Path, step: str, done: list[str]) -> Callable[[str], None]:
    def fault(name: str) -> None:
        if name == step and not done:
            with open(path, "r+", encoding="utf-8") as f:
                text = f.read()
                f.seek(0)
                f.write(text + f"\n{EDIT}\n")
                f.truncate()
            done.append(name)

    return fault


def _changes(shas: dict[str, str]) -> dict[str, Change]:
    return {
        "merge": Change(merges=[(["alpha", "beta"], make_record("beta", "user", "Beta fact", "Beta body.\nAlpha body.\n"))],
                        base=shas, actor="dream"),
        "remove": Change(remove=["alpha"], base={"alpha": shas["alpha"]}, actor="manual"),
        "replace": Change(replace={"alpha": make_record("alpha", "user", "Alpha fact", "Alpha body, reworded.\n")},
                          base={"alpha": shas["alpha"]}, actor="job"),
    }


def _live_text(d: Path) -> str:
    store = MemoryStore(d)
    return "".join((d / e.file).read_text(encoding="utf-8") for e in store.read().records)


@pytest.mark.parametrize("kind", ["merge", "remove", "replace"])
@pytest.mark.parametrize("step", STEPS)
def test_an_edit_during_the_commit_stays_live(
    tmp_path: Path, step: str, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    _, files, shas = _setup(tmp_path)
    done: list[str] = []
    store = MemoryStore(tmp_path, fault=_editor(tmp_path / files["alpha"], step, done))
    with caplog.at_level(logging.WARNING, logger="memory.store"):
        store.commit(_changes(shas)[kind])
    assert done == [step]
    assert [r.__dict__.get("event") for r in caplog.records] == ["store.edit_kept"]
    MemoryStore(tmp_path).reconcile()
    assert EDIT in _live_text(tmp_path)
    kept = [p for p in (tmp_path / HISTORY).iterdir() if p.name.startswith(files["alpha"]) and p.name.endswith(ARCHIVE_SUFFIX)]
    assert any(EDIT in p.read_text(encoding="utf-8") for p in kept)


def test_an_edit_before_the_verification_is_a_conflict_not_a_restore(tmp_path: Path) -> None:
    _, files, shas = _setup(tmp_path)
    done: list[str] = []
    store = MemoryStore(tmp_path, fault=_editor(tmp_path / files["alpha"], "locked", done))
    with pytest.raises(ConflictError):
        store.commit(_changes(shas)["merge"])
    assert EDIT in _live_text(tmp_path)


def test_no_edit_restores_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store, _, shas = _setup(tmp_path)
    with caplog.at_level(logging.WARNING, logger="memory.store"):
        store.commit(_changes(shas)["merge"])
    assert not [r for r in caplog.records if r.__dict__.get("event") == "store.edit_kept"]
    assert sorted(p.name for p in tmp_path.glob("*.md")) == sorted(["MEMORY.md", *(e.file for e in store.read().records)])


def test_a_restored_file_never_takes_a_name_in_use(tmp_path: Path) -> None:
    _, files, shas = _setup(tmp_path)
    (tmp_path / "alpha.md").write_text("---\nname: alpha\ndescription: someone else's\ntype: user\n---\nOther.\n",
                                       encoding="utf-8")
    MemoryStore(tmp_path).reconcile()  # adopted under its own name
    done: list[str] = []
    store = MemoryStore(tmp_path, fault=_editor(tmp_path / files["alpha"], "manifest_replaced", done))
    store.commit(_changes(shas)["remove"])
    MemoryStore(tmp_path).reconcile()
    text = _live_text(tmp_path)
    assert EDIT in text and "Other." in text


@pytest.mark.parametrize("fixed", [True, False], ids=["store-puts-it-back", "edit-left-in-history"])
def test_the_torture_checker_holds_a_dream_to_the_edit(tmp_path: Path, fixed: bool,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The checker's dream-retention judges this race: a source edited after the dream verified
    it must be said by a live record of a later generation — true when the store puts the
    edited version back, a violation when it is left in ``.history/`` only."""
    from memory.store.archive import Archive
    from tests.torture.checker import Report, check_dream_retention, load_history

    if not fixed:
        def archive_only(self: Archive, expected: dict[str, str]) -> list[tuple[str, str]]:
            self.archive(list(expected))  # the old behaviour: moved, never compared
            return []

        monkeypatch.setattr(Archive, "archive_unchanged", archive_only)
    _, files, shas = _setup(tmp_path)
    done: list[str] = []
    store = MemoryStore(tmp_path, fault=_editor(tmp_path / files["alpha"], "manifest_replaced", done))
    store.commit(_changes(shas)["merge"])
    MemoryStore(tmp_path).reconcile()
    report = Report()
    check_dream_retention({"d": load_history(tmp_path)}, report)
    assert report.checks["dream-retention"] >= 1
    if fixed:
        assert report.violations == []
        assert report.observations["dream_retention"].get("edited during the dream") == 1
    else:
        assert len(report.violations) == 1 and EDIT.rstrip(".") in report.violations[0]


# ----------------------------------------------------------------------------- found in review


@pytest.mark.parametrize("kind", ["remove", "replace"])
def test_a_change_without_a_base_takes_an_earlier_edit_as_it_is(
    tmp_path: Path, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """An edit made before a forget or a remember (no base: the commit's own scan re-reads it)
    is what the change removes or replaces: no record comes back, none is doubled."""
    _, files, _ = _setup(tmp_path)
    path = tmp_path / files["alpha"]
    path.write_text(path.read_text(encoding="utf-8") + f"\n{EDIT}\n", encoding="utf-8")
    change = (Change(remove=["alpha"]) if kind == "remove" else
              Change(replace={"alpha": make_record("alpha", "user", "Alpha fact", "Alpha, restated.\n")}))
    with caplog.at_level(logging.WARNING, logger="memory.store"):
        MemoryStore(tmp_path).commit(change)
    MemoryStore(tmp_path).reconcile()
    names = sorted(e.name for e in MemoryStore(tmp_path).read().records)
    assert names == (["beta"] if kind == "remove" else ["alpha", "beta"])
    assert not [r for r in caplog.records if r.__dict__.get("event") == "store.edit_kept"]


def test_archiving_never_unlinks_a_copy_it_believes_identical(tmp_path: Path) -> None:
    from memory.store.archive import Archive

    archive = Archive(tmp_path)
    for text in ("same bytes\n", "same bytes\n"):
        (tmp_path / "notes.md").write_text(text, encoding="utf-8")
        assert archive.archive(["notes.md"]) == ["notes.md"]
    kept = sorted(p.name for p in (tmp_path / HISTORY).iterdir())
    assert len(kept) == 2 and all(n.startswith("notes.md") for n in kept)


class _Died(Exception):
    pass


def test_a_commit_that_dies_before_its_cleanup_leaves_the_edit_to_the_next_scan(tmp_path: Path) -> None:
    """Edited after the verification, then the process dies after the commit point: the file
    the set no longer names is ours, so it is no foreign file to adopt; the next scan sees its
    bytes differ from what the previous set recorded and puts them back, once."""
    _, files, shas = _setup(tmp_path)
    done: list[str] = []
    edit = _editor(tmp_path / files["alpha"], "verified", done)

    def fault(step: str) -> None:
        edit(step)
        if step == "manifest_replaced":
            raise _Died

    with pytest.raises(_Died):
        MemoryStore(tmp_path, fault=fault).commit(_changes(shas)["merge"])
    for _ in range(2):
        MemoryStore(tmp_path, orphan_grace=0).reconcile()
    live = MemoryStore(tmp_path).read().records
    assert _live_text(tmp_path).count(EDIT) == 1 and len(live) == 2
    assert not (tmp_path / files["alpha"]).exists()


def test_a_restore_is_not_repeated_after_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The edited bytes were put back, then the process died before moving the old file: the
    next scan finds the same bytes already in the directory and writes no second copy."""
    from memory.store.archive import Archive

    _, files, shas = _setup(tmp_path)
    done: list[str] = []
    store = MemoryStore(tmp_path, fault=_editor(tmp_path / files["alpha"], "manifest_replaced", done))

    def die(self: Archive, file: str, prefix: str = "") -> Path | None:
        raise _Died

    monkeypatch.setattr(Archive, "_move", die)
    with pytest.raises(_Died):
        store.commit(_changes(shas)["merge"])
    monkeypatch.undo()
    MemoryStore(tmp_path).reconcile()
    assert _live_text(tmp_path).count(EDIT) == 1
    assert len(MemoryStore(tmp_path).read().records) == 2


def test_sync_install_puts_back_an_edit_made_during_the_fetch(tmp_path: Path) -> None:
    """Sync installs a remote set after a network fetch made outside the store lock; a file the
    remote set drops but a person edited meanwhile is put back, not archived unseen."""

    from dreamd.sync.install import install
    from memory.store.locks import store_lock

    store, files, _ = _setup(tmp_path)
    old = store.read()
    new = old.replace(generation=old.generation + 1,
                              records=[e for e in old.records if e.name != "alpha"])
    path = tmp_path / files["alpha"]
    path.write_text(path.read_text(encoding="utf-8") + f"\n{EDIT}\n", encoding="utf-8")
    with store_lock(tmp_path, store.lock_timeout):
        install(store, old, new, {})
    MemoryStore(tmp_path).reconcile()
    assert EDIT in _live_text(tmp_path)
