"""Nothing Claude Code (or a person) writes is lost by a commit, whatever the timing (issue 9).

Claude Code saves a memory by writing ``<memdir>/<name>.md`` and appending a pointer line to
``MEMORY.md``, without dreamd's lock. These tests put exactly that write at every step of a
commit (through the store's fault hook), and then race a real writer process against a loop of
commits, and check that every file ends up in the set and every foreign MEMORY.md version is
kept in ``.history/`` byte for byte.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import memory.store.archive as archive_module
from memory.errors import ConflictError
from memory.store.history import log_entries, render_log, rollback
from memory.store.records import make_record, sha256_hex
from memory.store.transaction import ARCHIVE_SUFFIX, HISTORY, INDEX, Change, MemoryStore
from tests.helpers import cc_writer
from tests.helpers.commit_child import STEPS

CC_FILE = "feedback_db_tests.md"
CC_RECORD = (
    b"---\nname: feedback-db-tests\n"
    b"description: Integration tests must hit a real database, not mocks\n"
    b"type: feedback\n---\n"
    b"Integration tests hit a real database.\n**Why:** mocked tests passed a broken migration.\n"
)
CC_POINTER = "- [DB tests](feedback_db_tests.md) — integration tests hit a real database\n"


@pytest.fixture(params=["exchange", "link"])
def replace_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways MEMORY.md is replaced: an atomic swap (Linux) and link-then-rename (elsewhere)."""
    if request.param == "link":
        monkeypatch.setattr(archive_module, "_exchange", lambda a, b: False)
    elif not archive_module.exchange_supported():
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available here")
    return str(request.param)


def rec(name: str, body: str = "b") -> object:
    return make_record(name, "user", f"about {name}", body)


def history_bytes(d: Path) -> list[bytes]:
    return [p.read_bytes() for p in (d / HISTORY).iterdir() if p.is_file()]


def nested_md(d: Path) -> list[str]:
    """What Claude Code's recursive scan would read below the top level."""
    return [str(p.relative_to(d)) for p in d.rglob("*.md") if p.parent != d]


@pytest.mark.parametrize("step", [s for s in STEPS if s != "cleaned"])
def test_a_memory_written_at_any_step_of_a_commit_is_adopted_and_the_index_edit_kept(
    tmp_path: Path, step: str, replace_mode: str
) -> None:
    d = tmp_path / "mem"
    MemoryStore.init(d)
    MemoryStore(d).commit(Change(add=[rec("existing")]))
    snapshot = MemoryStore(d).read()  # what a job read before calling its model
    written: list[bytes] = []

    def claude_code_saves(at: str) -> None:
        if at != step or written:
            return
        (d / CC_FILE).write_bytes(CC_RECORD)
        with open(d / INDEX, "a", encoding="utf-8") as f:  # in place, as Claude Code appends
            f.write(CC_POINTER)
        written.append((d / INDEX).read_bytes())

    result = MemoryStore(d, fault=claude_code_saves).commit(Change(add=[rec("from-job")], actor="job", job_id="j1"))
    assert written and snapshot.generation + 1 == result.generation
    if step == "locked":  # before the commit looked: taken in by this very commit
        assert result.adopted == ["feedback_db_tests"]
        assert result.index_archived is not None
        assert (d / result.index_archived).read_bytes() == written[0]
    # At the latest the next commit takes in what this one could not see.
    MemoryStore(d).commit(Change(add=[rec("later")]))
    m = MemoryStore(d).read()
    entry = {e.file: e for e in m.records}[CC_FILE]
    assert entry.sha256 == sha256_hex(CC_RECORD) and (d / CC_FILE).read_bytes() == CC_RECORD
    assert {e.name for e in m.records} >= {"existing", "from-job", "later", entry.name}
    assert written[0] in history_bytes(d), f"the MEMORY.md Claude Code wrote at {step!r} was lost"
    assert sha256_hex((d / INDEX).read_bytes()) == m.index_sha256
    assert f"]({CC_FILE})" in (d / INDEX).read_text()
    assert nested_md(d) == []


def test_an_in_place_write_to_the_index_being_replaced_is_kept(tmp_path: Path, replace_mode: str) -> None:
    """A writer that opened MEMORY.md just before the commit replaced it writes just after:
    its bytes land on the replaced inode, which the next commit still checks."""
    d = tmp_path / "mem"
    MemoryStore.init(d)
    MemoryStore(d).commit(Change(add=[rec("a")]))
    late = b"# written late to the old file\n- [x](x.md) - late line\n"
    fd: list[int] = []

    def hook(at: str) -> None:
        if at == "files_written":
            fd.append(os.open(d / INDEX, os.O_WRONLY))
        elif at == "index_written":
            os.ftruncate(fd[0], 0)
            os.write(fd[0], late)
            os.close(fd[0])

    MemoryStore(d, fault=hook).commit(Change(add=[rec("b")]))
    [previous] = [p for p in (d / HISTORY).iterdir() if p.name.startswith("MEMORY.previous-")]
    assert previous.read_bytes() == late  # the replaced inode, kept one more commit
    result = MemoryStore(d).commit(Change(add=[rec("c")]))
    assert not previous.exists()
    [kept] = [p for p in (d / HISTORY).iterdir() if p.read_bytes() == late]
    assert kept.name.startswith("MEMORY-") and kept.name.endswith(f".md{ARCHIVE_SUFFIX}")
    assert result.index_archived is None  # the current index was ours; the late copy was kept apart
    assert nested_md(d) == []


def test_our_own_replaced_index_leaves_nothing_behind(tmp_path: Path, replace_mode: str) -> None:
    store = MemoryStore.init(tmp_path / "mem")
    for i in range(5):
        assert store.commit(Change(add=[rec(f"r{i}")])).index_archived is None
    kept = [p.name for p in (store.path / HISTORY).iterdir() if p.name.startswith("MEMORY")]
    assert len(kept) == 1 and kept[0].startswith("MEMORY.previous-")


def test_a_hand_deleted_record_leaves_the_set_in_the_next_commit(tmp_path: Path) -> None:
    store = MemoryStore.init(tmp_path / "mem")
    store.commit(Change(add=[rec("a"), rec("b")]))
    (store.path / store.read().by_name()["a"].file).unlink()
    store.commit(Change(add=[rec("c")]))
    m = store.read()
    assert sorted(e.name for e in m.records) == ["b", "c"]
    assert m.change["foreign"] == {"dropped": ["a"]}
    assert all((store.path / e.file).is_file() for e in m.records)
    assert "deleted  a" in render_log(log_entries(store, limit=1))


def test_a_dream_planned_on_a_record_edited_by_hand_conflicts_and_writes_nothing(tmp_path: Path) -> None:
    store = MemoryStore.init(tmp_path / "mem")
    store.commit(Change(add=[rec("a", "one"), rec("b", "two")]))
    plan = store.read().by_name()
    edited = b"---\nname: a\ndescription: about a\ntype: user\n---\nedited by hand\n"
    (store.path / plan["a"].file).write_bytes(edited)
    before = store.read().generation
    with pytest.raises(ConflictError, match="'a' changed"):
        store.commit(
            Change(
                merges=[(["a", "b"], make_record("ab", "user", "merged", "one two"))],
                base={"a": plan["a"].sha256, "b": plan["b"].sha256},
                actor="dream",
            )
        )
    assert store.read().generation == before
    assert (store.path / plan["a"].file).read_bytes() == edited
    # Forgetting it instead takes the edit in first, then archives the edited bytes.
    store.commit(Change(remove=["a"]))
    assert edited in history_bytes(store.path)
    assert store.read().change["foreign"] == {"updated": ["a"]}


def test_a_malformed_foreign_file_is_left_in_place_and_reported(tmp_path: Path) -> None:
    store = MemoryStore.init(tmp_path / "mem")
    (store.path / "half_written.md").write_bytes(b"---\nname: half\ndescription: cut off")
    result = store.commit(Change(add=[rec("a")]))
    assert [f for f, _ in result.malformed] == ["half_written.md"]
    assert "frontmatter is not closed" in result.malformed[0][1]
    assert (store.path / "half_written.md").read_bytes() == b"---\nname: half\ndescription: cut off"
    # Once complete it is adopted by the next commit.
    (store.path / "half_written.md").write_bytes(b"---\nname: half\ndescription: done\ntype: user\n---\nb\n")
    assert store.commit(Change(add=[rec("b")])).adopted == ["half_written"]


def test_history_written_before_the_suffix_is_renamed_and_rollback_still_works(tmp_path: Path) -> None:
    store = MemoryStore.init(tmp_path / "mem")
    store.commit(Change(add=[rec("a", "v1")]))
    v1 = store.read().by_name()["a"]
    store.commit(Change(replace={"a": rec("a", "v2")}))
    store.commit(Change(remove=["a"]))
    hist = store.path / HISTORY
    # Make the directory look like one an older dreamd wrote: archives named *.md.
    for p in list(hist.iterdir()):
        if p.name.endswith(ARCHIVE_SUFFIX) and not p.name.startswith("MEMORY.previous-"):
            p.rename(p.with_name(p.name.removesuffix(ARCHIVE_SUFFIX)))
    (hist / "MEMORY-20260101T000000-abcdef.md").write_text("# an old foreign index\n")
    assert nested_md(store.path)
    fresh = MemoryStore(store.path)
    result = rollback(fresh, to=1)  # the first commit of the new code migrates, then restores
    assert nested_md(store.path) == []
    assert (hist / f"MEMORY-20260101T000000-abcdef.md{ARCHIVE_SUFFIX}").read_text() == "# an old foreign index\n"
    [entry] = fresh.read().records
    assert result.added == ["a"] and entry.sha256 == v1.sha256
    assert (store.path / entry.file).read_bytes().endswith(b"v1\n")


def test_rollback_takes_in_a_file_written_since_the_last_commit(tmp_path: Path) -> None:
    store = MemoryStore.init(tmp_path / "mem")
    store.commit(Change(add=[rec("a")]))
    store.commit(Change(add=[rec("b")]))
    (store.path / CC_FILE).write_bytes(CC_RECORD)
    result = rollback(store, to=1)
    assert result.adopted == ["feedback_db_tests"]
    assert sorted(e.name for e in store.read().records) == ["a", "feedback_db_tests"]


def test_no_md_file_below_the_directory_after_every_kind_of_change(tmp_path: Path) -> None:
    from memory.store.reconcile import reconcile

    store = MemoryStore.init(tmp_path / "mem", orphan_grace=0)
    store.commit(Change(add=[rec("a", "v1"), rec("b"), rec("c")]))
    store.commit(Change(replace={"a": rec("a", "v2")}))  # remember over an existing name
    store.commit(Change(remove=["b"]))  # forget
    store.commit(  # a dream's merge
        Change(merges=[(["a", "c"], make_record("ac", "user", "merged", "v2 c"))], actor="dream", consolidated=True)
    )
    rollback(store, to=1)
    (store.path / CC_FILE).write_bytes(CC_RECORD)  # foreign edits: a new file, an index edit
    with open(store.path / INDEX, "a", encoding="utf-8") as f:
        f.write(CC_POINTER)
    reconcile(store)
    (store.path / "notes-0123456789.md").write_text("---\nname: n\ntype: user\ndescription: d\n---\nx\n")  # an orphan
    store.commit(Change(remove=["feedback_db_tests"]))
    assert (store.path / HISTORY).is_dir() and len(list((store.path / HISTORY).iterdir())) > 5
    assert nested_md(store.path) == []


def test_a_process_writing_like_claude_code_during_a_commit_loop_loses_nothing(tmp_path: Path, replace_mode: str) -> None:
    d = tmp_path / "mem"
    MemoryStore.init(d)
    log = tmp_path / "writer.jsonl"
    count = 30
    writer = subprocess.Popen(
        [sys.executable, cc_writer.__file__, str(d), "--count", str(count), "--log", str(log)],
        cwd=Path(__file__).resolve().parents[1],
    )
    store = MemoryStore(d)
    commits = 0
    try:
        while writer.poll() is None or commits < 5:
            store.commit(Change(add=[rec(f"job-{commits}")], actor="job", job_id=f"job-{commits}"))
            commits += 1
    finally:
        writer.wait(timeout=60)
    assert writer.returncode == 0
    store.commit(Change(add=[rec("final")]))
    written = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(written) == count
    m = store.read()
    by_file = {e.file: e for e in m.records}
    for w in written:
        path = d / w["file"]
        assert w["file"] in by_file, f"{w['file']} was never adopted"
        assert by_file[w["file"]].sha256 == sha256_hex(path.read_bytes())
    kept = set(history_bytes(d))
    # A version the writer itself read back and extended was superseded by its own next write;
    # every other version was replaced by a commit and must be in .history/ byte for byte.
    replaced = [
        w
        for w, nxt in zip(written, [*written[1:], None], strict=True)
        if nxt is None or not nxt["index"].startswith(w["index"])
    ]
    assert len(replaced) >= 4, "the commit loop hardly ever overlapped the writer"
    lost = [w["file"] for w in replaced if w["index"].encode() not in kept]
    assert not lost, f"MEMORY.md versions written with {lost} were overwritten without a copy"
    kept_text = "".join(b.decode("utf-8", "replace") for b in kept)
    assert all(f"]({w['file']})" in kept_text for w in written), "a pointer line Claude Code wrote was lost"
    assert {e.name for e in m.records} >= {f"job-{i}" for i in range(commits)}
    assert nested_md(d) == []
