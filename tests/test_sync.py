"""dreamd sync with the real git executable against bare remotes in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from dreamd.sync.flow import SYNCED_REF, read_state, sync, sync_status
from memory.store.history import log_entries
from memory.store.transaction import MemoryStore
from tests.sync_helpers import bare_remote, forget, git, isolate_git, record_set, remember, replace


@pytest.fixture
def remote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    isolate_git(tmp_path, monkeypatch)
    return bare_remote(tmp_path / "remote.git")


def machine(tmp_path: Path, name: str) -> Path:
    return tmp_path / name / ".memory"


def test_first_sync_pushes_one_commit_per_generation_with_the_log_summary(tmp_path: Path, remote: str) -> None:
    a = machine(tmp_path, "a")
    MemoryStore.init(a)
    remember(a, "alpha")
    remember(a, "beta")
    report = sync(a, remote=remote)
    assert report.pushed and report.commits_created == 3
    subjects = git(Path(remote), "log", "--format=%s", "main").splitlines()
    assert subjects[0].startswith("dreamd generation 2: manual (+1 ~0 -0, 2 records)")
    assert subjects[-1].startswith("dreamd generation 0: init")
    body = git(Path(remote), "log", "-1", "--format=%b", "main")
    assert "added    beta" in body
    tree = set(git(Path(remote), "ls-tree", "--name-only", "main").split())
    files = {e.file for e in MemoryStore(a).read().records}
    assert tree == files | {"manifest.json", "MEMORY.md"}
    assert git(Path(remote), "show", "main:manifest.json").encode() + b"\n" == (a / "manifest.json").read_bytes()


def test_a_missing_directory_is_cloned_and_becomes_managed_with_the_same_bytes(tmp_path: Path, remote: str) -> None:
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    MemoryStore.init(a)
    remember(a, "alpha")
    sync(a, remote=remote)
    report = sync(b, remote=remote)
    assert report.fast_forwarded and not report.pushed
    assert (b / "manifest.json").read_bytes() == (a / "manifest.json").read_bytes()
    assert (b / "MEMORY.md").read_bytes() == (a / "MEMORY.md").read_bytes()
    assert git(a, "rev-parse", "HEAD") == git(b, "rev-parse", "HEAD")
    assert git(b, "status", "--porcelain") == ""
    assert MemoryStore(b).records()[0][1].body == "body of alpha\n"


def test_concurrent_additions_on_two_machines_converge_with_a_merge_generation(tmp_path: Path, remote: str) -> None:
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    MemoryStore.init(a)
    remember(a, "shared")
    sync(a, remote=remote)
    sync(b, remote=remote)
    remember(a, "from-a", job="job-a")
    remember(b, "from-b", job="job-b")
    sync(a)
    report = sync(b)
    assert report.merged and report.pushed and report.added == ["from-a"]
    sync(a)
    assert record_set(a) == record_set(b) and set(record_set(a)) == {"shared", "from-a", "from-b"}
    assert (a / "manifest.json").read_bytes() == (b / "manifest.json").read_bytes()
    top = log_entries(MemoryStore(b))[0]
    assert top.actor == "merge" and top.added == ["from-a"]
    m = MemoryStore(a).read()
    assert {"job-a", "job-b"} <= set(m.applied_jobs)
    parents = git(b, "log", "-1", "--format=%p").split()
    assert len(parents) == 2


def test_deletion_wins_over_an_untouched_record_and_loses_to_a_change(tmp_path: Path, remote: str) -> None:
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    MemoryStore.init(a)
    for n in ("gone", "edited", "keep"):
        remember(a, n)
    sync(a, remote=remote)
    sync(b, remote=remote)
    forget(a, "gone", "edited")
    replace(b, "edited", "a newer body from b")
    remember(b, "unrelated")
    sync(a)
    sync(b)
    sync(a)
    got = MemoryStore(a)
    assert set(record_set(a)) == {"edited", "keep", "unrelated"}
    assert record_set(a) == record_set(b)
    edited = next(r for e, r in got.records() if e.name == "edited")
    assert edited.body == "a newer body from b\n"


def test_the_same_record_changed_on_both_machines_keeps_both(tmp_path: Path, remote: str) -> None:
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    MemoryStore.init(a)
    remember(a, "deploy")
    sync(a, remote=remote)
    sync(b, remote=remote)
    replace(a, "deploy", "deploy with make release")
    replace(b, "deploy", "deploy with the CI button")
    sync(a)
    report = sync(b)
    sync(a)
    bodies = sorted(r.body for _, r in MemoryStore(a).records())
    assert bodies == ["deploy with make release\n", "deploy with the CI button\n"]
    assert set(record_set(a)) == {"deploy", "deploy-2"} and record_set(a) == record_set(b)
    assert report.renamed and "deploy -> deploy-2" in report.renamed[0]


def test_history_locks_and_staging_files_are_never_pushed(tmp_path: Path, remote: str) -> None:
    a = machine(tmp_path, "a")
    MemoryStore.init(a)
    remember(a, "one")
    forget(a, "one")
    remember(a, "two")
    (a / "notes.txt").write_text("local only")
    sync(a, remote=remote)
    every = set(git(Path(remote), "log", "--all", "--name-only", "--format=").split())
    assert every and all(p == "manifest.json" or p == "MEMORY.md" or p.endswith(".md") for p in every)
    assert not any(p.startswith(".") for p in every)
    assert (a / ".gitignore").is_file()
    assert git(a, "status", "--porcelain", "--ignored=no") == ""


def test_unreachable_remote_keeps_work_local_and_status_says_ahead_and_why(tmp_path: Path, remote: str) -> None:
    from dreamd.sync.flow import SyncTransient

    a = machine(tmp_path, "a")
    MemoryStore.init(a)
    sync(a, remote=remote)
    Path(remote).rename(tmp_path / "away.git")
    remember(a, "offline-work")
    with pytest.raises(SyncTransient, match="git fetch from origin failed"):
        sync(a)
    status = sync_status(a)
    assert status is not None
    assert status["ahead"] == 1 and status["failures"] == 1
    assert "git fetch from origin failed" in status["last_error"]
    assert "offline-work" in record_set(a)
    (tmp_path / "away.git").rename(remote)
    assert sync(a).pushed
    status = sync_status(a)
    assert status is not None and status["ahead"] == 0 and status["last_error"] is None
    assert read_state(a)["failures"] == 0


def test_push_rejected_because_the_remote_moved_is_fetched_merged_and_retried(tmp_path: Path, remote: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from dreamd.sync import flow as sync_mod

    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    MemoryStore.init(a)
    sync(a, remote=remote)
    sync(b, remote=remote)
    remember(a, "from-a")
    remember(b, "from-b")
    original = sync_mod.Repo.fetch
    calls = {"n": 0}

    def racing_fetch(self: sync_mod.Repo) -> str | None:
        calls["n"] += 1
        if calls["n"] == 1 and self.dir == a:
            sync(b)  # b pushes between a's fetch and a's push
        return original(self)

    monkeypatch.setattr(sync_mod.Repo, "fetch", racing_fetch)
    report = sync(a)
    assert report.pushed and report.merged
    monkeypatch.setattr(sync_mod.Repo, "fetch", original)
    sync(b)
    assert set(record_set(a)) == set(record_set(b)) == {"from-a", "from-b"}


def test_a_rewritten_remote_history_is_refused_unless_allowed(tmp_path: Path, remote: str) -> None:
    from dreamd.sync.flow import SyncError

    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    MemoryStore.init(a)
    remember(a, "first")
    sync(a, remote=remote)
    sync(b, remote=remote)
    remember(a, "second")
    sync(a)
    sync(b)
    git(Path(remote), "update-ref", "refs/heads/main", git(Path(remote), "rev-parse", "main~1"))
    before = (b / "manifest.json").read_bytes()
    remember(b, "third")
    with pytest.raises(SyncError, match="history was rewritten"):
        sync(b)
    assert set(record_set(b)) == {"first", "second", "third"}
    report = sync(b, allow_rewrite=True)
    assert report.pushed
    assert set(record_set(b)) == {"first", "second", "third"}
    assert git(b, "rev-parse", SYNCED_REF) == git(Path(remote), "rev-parse", "main")
    assert before != (b / "manifest.json").read_bytes()


def test_secrets_are_never_pushed(tmp_path: Path, remote: str) -> None:
    from dreamd.sync.flow import SyncError

    a = machine(tmp_path, "a")
    MemoryStore.init(a)
    sync(a, remote=remote)
    (a / "creds.md").write_text("---\nname: creds\ntype: reference\ndescription: where keys are\n---\nkey sk-ant-api03-" + "A" * 90 + "\n")
    with pytest.raises(SyncError, match=r"refusing to push: creds.md \(anthropic-key\)"):
        sync(a)
    assert "creds" in record_set(a)  # adopted locally, kept, just not pushed
    assert "creds.md" not in git(Path(remote), "ls-tree", "--name-only", "main")


def test_lock_files_a_killed_sync_left_behind_do_not_block_the_next_one(tmp_path: Path, remote: str) -> None:
    import os

    a = machine(tmp_path, "a")
    MemoryStore.init(a)
    sync(a, remote=remote)
    stale = [a / ".git" / "dreamd-index.lock", a / ".git" / "refs" / "heads" / "main.lock"]
    for path in stale:
        path.write_text("")
    os.utime(stale[1], (0, 0))
    remember(a, "after-crash")
    assert sync(a).pushed
    assert not any(p.exists() for p in stale)
    assert "after-crash" in git(Path(remote), "show", "main:manifest.json")


def test_cloning_many_records_writes_them_all_durably_and_leaves_no_staging_files(tmp_path: Path, remote: str) -> None:
    from memory.store.records import make_record
    from memory.store.transaction import Change

    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    MemoryStore.init(a).commit(Change(add=[make_record(f"r-{i}", "user", f"fact {i}", f"body {i}") for i in range(40)]))
    sync(a, remote=remote)
    sync(b, remote=remote)
    assert record_set(a) == record_set(b) and len(record_set(b)) == 40
    assert not [p.name for p in b.iterdir() if p.name.startswith(".tmp-")]
    for entry in MemoryStore(b).read().records:
        assert (b / entry.file).read_bytes() == (a / entry.file).read_bytes()


def test_a_dream_planned_before_a_merge_changed_its_records_commits_nothing(tmp_path: Path, remote: str) -> None:
    from memory.errors import ConflictError
    from memory.store.records import make_record
    from memory.store.transaction import Change

    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    MemoryStore.init(a)
    remember(a, "x")
    remember(a, "y")
    sync(a, remote=remote)
    sync(b, remote=remote)
    plan_base = {e.name: e.sha256 for e in MemoryStore(a).read().records}
    replace(b, "x", "x as b knows it now")
    sync(b)
    sync(a)  # the merge takes b's change of x in
    merged = make_record("xy", "project", "x and y", "both")
    before = (a / "manifest.json").read_bytes()
    with pytest.raises(ConflictError, match="'x' changed since the plan was made"):
        MemoryStore(a).commit(Change(merges=[(["x", "y"], merged)], base=plan_base, actor="dream"))
    assert (a / "manifest.json").read_bytes() == before


def test_syncing_with_nothing_new_creates_no_commit_and_no_generation_anywhere(tmp_path: Path, remote: str) -> None:
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    MemoryStore.init(a)
    remember(a, "x")
    sync(a, remote=remote)
    sync(b, remote=remote)
    remember(b, "from-b")
    sync(b)
    sync(a)
    heads = (git(a, "rev-parse", "HEAD"), git(b, "rev-parse", "HEAD"), git(Path(remote), "rev-parse", "main"))
    gens = (MemoryStore(a).read().generation, MemoryStore(b).read().generation)
    for _ in range(2):
        for d in (a, b):
            report = sync(d)
            assert report.commits_created == 0 and not report.pushed and not report.merged and not report.fast_forwarded
    assert (git(a, "rev-parse", "HEAD"), git(b, "rev-parse", "HEAD"), git(Path(remote), "rev-parse", "main")) == heads
    assert (MemoryStore(a).read().generation, MemoryStore(b).read().generation) == gens
    assert len(set(heads)) == 1


def test_a_hand_edit_of_memory_md_is_archived_not_lost_when_the_remote_set_arrives(tmp_path: Path, remote: str) -> None:
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    MemoryStore.init(a)
    sync(a, remote=remote)
    sync(b, remote=remote)
    remember(a, "news")
    sync(a)
    (b / "MEMORY.md").write_text("my own notes in the index\n")
    from dreamd.sync import flow as sync_mod

    original = MemoryStore.reconcile
    try:
        MemoryStore.reconcile = lambda self: None  # type: ignore[method-assign,assignment,return-value]
        sync_mod.sync(b)
    finally:
        MemoryStore.reconcile = original  # type: ignore[method-assign]
    kept = [p for p in (b / ".history").iterdir() if p.name.startswith("MEMORY-")]
    assert kept and kept[0].read_text() == "my own notes in the index\n"
    assert "news" in (b / "MEMORY.md").read_text()


def test_a_sync_that_dies_before_the_manifest_rename_leaves_the_old_set_and_the_next_one_converges(
    tmp_path: Path, remote: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dreamd.sync import install as sync_install
    from memory.store.records import sha256_hex

    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    MemoryStore.init(a)
    remember(a, "old")
    sync(a, remote=remote)
    sync(b, remote=remote)
    remember(a, "arriving")
    forget(a, "old")
    sync(a)
    remember(b, "local")
    before = (b / "manifest.json").read_bytes()
    real = sync_install.replace_atomic

    def power_cut(path: Path, data: bytes, **kw: object) -> None:
        if path.name == "manifest.json":
            raise OSError(5, "simulated crash before the commit point")
        real(path, data, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(sync_install, "replace_atomic", power_cut)
    with pytest.raises(OSError):
        sync(b)
    assert "simulated crash" in read_state(b)["last_error"]
    assert (b / "manifest.json").read_bytes() == before
    for e in MemoryStore(b).read().records:
        assert sha256_hex((b / e.file).read_bytes()) == e.sha256
    monkeypatch.setattr(sync_install, "replace_atomic", real)
    sync(b)
    sync(a)
    assert set(record_set(a)) == set(record_set(b)) == {"arriving", "local"}


def test_squash_unpushed_leaves_out_the_secret_generations_and_still_merges_what_the_team_pushed(
    tmp_path: Path, remote: str
) -> None:
    """The way out of a refused push when the remote moved on meanwhile: the current set is
    committed alone on top of the last remote commit this machine had, then merged with the
    team's newer one as usual; no pushed object holds the secret."""
    from dreamd.sync.flow import SyncError

    secret = "sk-ant-api03-" + "Z9" * 45
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    MemoryStore.init(a)
    remember(a, "shared")
    sync(a, remote=remote)
    sync(b, remote=remote)
    # A hand-written file: the commit that adopts it holds the secret, the next one (issue 22)
    # writes it redacted, so only unpushed generations still hold it.
    (a / "leaky.md").write_text(f"---\nname: leaky\ntype: project\ndescription: about leaky\n---\nthe key is {secret}\n")
    remember(a, "mine")
    with pytest.raises(SyncError, match=r"--squash-unpushed"):
        sync(a)
    remember(b, "theirs")
    assert sync(b).pushed
    report = sync(a, squash_unpushed=True)
    assert report.pushed and report.squashed >= 2 and report.merged  # the adoption, the redaction
    assert set(record_set(a)) == {"shared", "mine", "leaky", "theirs"}
    objects = [line.split()[0] for line in git(Path(remote), "rev-list", "--objects", "--all").splitlines()]
    assert not any(secret[-24:] in git(Path(remote), "cat-file", "-p", o) for o in objects)
    assert sync(b).fast_forwarded and set(record_set(b)) == {"shared", "mine", "leaky", "theirs"}


def test_a_job_that_changes_no_record_makes_no_git_commit(tmp_path: Path, remote: str) -> None:
    """Item 6 of issue 20: each session's cursor-only commit used to become a git commit."""
    from memory.store.transaction import Change

    a = machine(tmp_path, "a")
    MemoryStore.init(a)
    remember(a, "alpha", job="j-1")
    assert sync(a, remote=remote).commits_created == 2
    head = git(Path(remote), "rev-parse", "main")
    MemoryStore(a).commit(Change(actor="job", job_id="j-2", session_id="s-1", cursor=("s-1", 6), note="no new turns"))
    report = sync(a)
    assert report.commits_created == 0 and not report.pushed
    assert git(Path(remote), "rev-parse", "main") == head
    assert MemoryStore(a).read().cursors["s-1"] == 6
    remember(a, "beta")
    assert sync(a).commits_created == 1
    subjects = git(Path(remote), "log", "--format=%s", "main").splitlines()
    assert len(subjects) == 3


def test_the_squashed_commit_says_what_it_changes_on_the_remote_not_what_the_last_local_generation_did(
    tmp_path: Path, remote: str
) -> None:
    """Probe finding 9 (2026-12-02): after ``--squash-unpushed`` the published commit read
    ``manual (+0 ~0 -1, 2 records)`` — the local forget of a record the remote never had —
    though against its parent it only adds ``mine``."""
    from dreamd.sync.flow import SyncError

    secret = "sk-ant-api03-" + "Q7" * 45
    a = machine(tmp_path, "a")
    MemoryStore.init(a)
    remember(a, "shared")
    sync(a, remote=remote)
    (a / "leaky.md").write_text(f"---\nname: leaky\ntype: project\ndescription: about leaky\n---\nthe key is {secret}\n")
    remember(a, "mine")
    with pytest.raises(SyncError, match=r"--squash-unpushed"):
        sync(a)
    forget(a, "leaky")
    assert sync(a, squash_unpushed=True).pushed
    message = git(Path(remote), "log", "-1", "--format=%B", "main")
    subject = message.splitlines()[0]
    generation = MemoryStore(a).read().generation
    assert subject == f"dreamd generation {generation}: manual (+1 ~0 -0, 2 records)", message
    assert "added    mine" in message and "leaky" not in message.split("Publishes")[0], message
    changed = git(Path(remote), "diff", "--name-status", "main~1", "main").split()
    assert any(n.startswith("mine") for n in changed) and not any(n.startswith("leaky") for n in changed), changed
