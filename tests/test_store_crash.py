"""Crash safety of the commit protocol with real processes and SIGKILL (DESIGN §2.3).

Two kinds of kill:

* random: a child commits in a loop and is SIGKILLed 0–30 ms after it started, 4 directories in
  parallel × 55 kills each (forked from this process so a kill costs milliseconds, not an
  interpreter start-up), plus a few kills of the spawned script itself;
* deterministic: the store's ``fault`` hook SIGKILLs the child at each step of the protocol, for
  an ordinary add and for a consolidation (lease + base + merges).

After every kill the directory must satisfy the invariants in :func:`check_after_kill`.
"""

from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memory.store.locks import LEASE_NAME, DreamLease
from memory.store.manifest import Manifest
from memory.store.records import make_record, sha256_hex
from memory.store.transaction import (
    ARCHIVE_SUFFIX,
    HISTORY,
    INDEX,
    MANIFEST,
    ORPHAN_PREFIX,
    OUR_FILE_RE,
    Change,
    CommitResult,
    MemoryStore,
)
from tests.helpers import commit_child
from tests.helpers.commit_child import DREAM_SOURCES, GROUP_JOBS, STEPS, group_changes
from tests.torture.checker import load_history

CHILD = Path(commit_child.__file__)
REPO = Path(__file__).resolve().parents[1]


@dataclass
class Seen:
    """What the children of one directory reported, across all kills."""

    last_generation: int = 0
    added: set[str] = field(default_factory=set)
    tally: tuple[int, str] | None = None  # (generation, value) of the last returned tally commit
    kills: int = 0
    index_rebuilds: int = 0
    orphans_collected: int = 0


def parse_lines(text: str, seen: Seen) -> None:
    """Fold a child's output into ``seen``; generations it reports must strictly increase."""
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        gen = int(parts[0])
        assert gen > seen.last_generation, f"generation went backwards: {gen} after {seen.last_generation}"
        seen.last_generation = gen
        if parts[1] == "tally":
            seen.tally = (gen, parts[2])
        elif parts[1] != "dream":
            seen.added.add(parts[1])


def unreferenced_ours(directory: Path, manifest: Manifest) -> set[str]:
    referenced = {e.file for e in manifest.records}
    return {p.name for p in directory.iterdir() if OUR_FILE_RE.match(p.name) and p.name not in referenced}


def check_after_kill(directory: Path, seen: Seen) -> Manifest:
    """The invariants a SIGKILL at any moment must leave intact; returns the checked manifest."""
    manifest = Manifest.loads((directory / MANIFEST).read_bytes(), where="test")
    assert manifest.generation >= seen.last_generation, "a returned commit was lost"
    seen.last_generation = manifest.generation
    names = [e.name for e in manifest.records]
    assert len(names) == len(set(names)), "duplicate names in the manifest"
    for entry in manifest.records:
        data = (directory / entry.file).read_bytes()  # every named file exists...
        assert sha256_hex(data) == entry.sha256, f"{entry.file}: sha256 differs from the manifest"
    missing = seen.added - set(names)
    assert not missing, f"returned adds lost: {sorted(missing)[:5]}"
    if seen.tally is not None:
        store = MemoryStore(directory)
        tally = store.read_record(manifest.by_name()["tally"])
        got_prefix, got_i = tally.body.split()
        want_prefix, want_i = seen.tally[1].split(":")
        # A later tally may have committed without being reported, never an earlier one.
        # Prefixes are a letter and the round number ("r11"), compared as numbers.
        got, want = (int(got_prefix[1:]), int(got_i)), (int(want_prefix[1:]), int(want_i))
        assert got >= want, (tally.body, seen.tally)

    # MEMORY.md: if the kill left it out of step with the manifest, reconcile rebuilds it.
    index_sha = sha256_hex((directory / INDEX).read_bytes()) if (directory / INDEX).exists() else ""
    if index_sha != manifest.index_sha256:
        report = MemoryStore(directory).reconcile()
        assert report.index_rebuilt
        after = Manifest.loads((directory / MANIFEST).read_bytes(), where="test")
        assert sha256_hex((directory / INDEX).read_bytes()) == after.index_sha256
        seen.index_rebuilds += 1

    # The next commit (no grace) moves orphans of the interrupted commit into .history/ (no
    # pruning in this commit, or never-committed orphans could be pruned at once).
    orphans = unreferenced_ours(directory, manifest)
    # Files the last commit replaced but, killed after its commit point, did not move away: the
    # next commit finishes that cleanup under their normal archive name (issue 21 §5).
    previous = _dropped_by_last_commit(directory, manifest)
    replaced = {n: (directory / n).read_bytes() for n in orphans if n in previous
                and sha256_hex((directory / n).read_bytes()) == previous[n]}
    store = MemoryStore(directory, orphan_grace=0, history_generations=10**6)
    result = store.commit(Change(add=[make_record(f"check-{seen.kills}", "project", "post-kill check", "ok")]))
    assert result.generation == manifest.generation + 1
    after = store.read()
    assert not unreferenced_ours(directory, after)
    assert not [p.name for p in directory.iterdir() if p.name.startswith(".tmp-")]
    for name in orphans:
        if name in replaced:
            kept = directory / HISTORY / f"{name}{ARCHIVE_SUFFIX}"
            assert kept.read_bytes() == replaced[name], f"replaced {name} was not archived as {kept.name}"
            assert not (directory / HISTORY / f"{ORPHAN_PREFIX}{name}{ARCHIVE_SUFFIX}").exists()
        else:
            assert (directory / HISTORY / f"{ORPHAN_PREFIX}{name}{ARCHIVE_SUFFIX}").exists(), f"orphan {name} was not kept in {HISTORY}/"
    seen.orphans_collected += len(orphans)
    seen.added.add(result.added[0])
    seen.last_generation = result.generation
    return after


def _files_of(directory: Path, generation: int) -> dict[str, str]:
    """file -> sha256 of an archived generation ({} when it is not kept)."""
    path = directory / HISTORY / f"manifest-{generation}.json"
    if generation < 0 or not path.exists():
        return {}
    return {e.file: e.sha256 for e in Manifest.loads(path.read_bytes(), where=str(path)).records}


def _dropped_by_last_commit(directory: Path, manifest: Manifest) -> dict[str, str]:
    """file -> sha256 of what the commit that made ``manifest`` may have dropped: the generation
    before it and, for a group commit, every generation of the group (they share
    ``committed_at``) and the one the group started from."""
    out: dict[str, str] = {}
    generation = manifest.generation - 1
    while generation >= 0:
        path = directory / HISTORY / f"manifest-{generation}.json"
        if not path.exists():
            break
        kept = Manifest.loads(path.read_bytes(), where=str(path))
        for e in kept.records:
            out.setdefault(e.file, e.sha256)
        if kept.committed_at != manifest.committed_at:
            break
        generation -= 1
    return out


def fork_loop(directory: Path, prefix: str) -> tuple[int, int]:
    """Fork a child running the commit loop; returns (pid, read end of its stdout pipe)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            os.close(r)
            commit_child.run_loop(directory, prefix=prefix, emit=commit_child.fd_emit(w), tally_every=4)
        finally:
            os._exit(0)
    os.close(w)
    return pid, r


def drain(fd: int) -> str:
    chunks = []
    while True:
        data = os.read(fd, 65536)
        if not data:
            break
        chunks.append(data)
    os.close(fd)
    return b"".join(chunks).decode()


def test_random_sigkill_of_committing_children_keeps_every_invariant(tmp_path: Path) -> None:
    dirs = [tmp_path / f"d{i}" for i in range(4)]
    for d in dirs:
        MemoryStore.init(d)
    seen = {d: Seen() for d in dirs}
    rng = random.Random(20261129)
    rounds = 55
    child_adds = 0
    for round_ in range(rounds):
        children = {d: fork_loop(d, f"r{round_}") for d in dirs}
        # Each child is killed 0–30 ms after its first commit returned (so every kill lands in
        # the middle of real work), the four in parallel.
        kill_at: dict[Path, float] = {}
        deadline = time.monotonic() + 30.0
        while len(kill_at) < len(dirs):
            waiting = {fd: d for d, (_pid, fd) in children.items() if d not in kill_at}
            ready, _, _ = select.select(list(waiting), [], [], max(deadline - time.monotonic(), 0.0))
            assert ready, "a child made no commit in 30 s"
            for fd in ready:
                kill_at[waiting[fd]] = time.monotonic() + rng.uniform(0.0, 0.030)
        for d, at in sorted(kill_at.items(), key=lambda kv: kv[1]):
            time.sleep(max(at - time.monotonic(), 0.0))
            os.kill(children[d][0], signal.SIGKILL)
        for d, (pid, fd) in children.items():
            _, status = os.waitpid(pid, 0)
            assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
            before = len(seen[d].added)
            parse_lines(drain(fd), seen[d])
            child_adds += len(seen[d].added) - before
            seen[d].kills += 1
            check_after_kill(d, seen[d])
    total_kills = sum(s.kills for s in seen.values())
    assert total_kills == 4 * rounds >= 200
    assert child_adds >= total_kills // 2  # tally commits are the other returned commits
    print(
        f"\nkills={total_kills} child-adds={child_adds} "
        f"orphans={sum(s.orphans_collected for s in seen.values())} "
        f"index-rebuilds={sum(s.index_rebuilds for s in seen.values())}"
    )


def test_random_sigkill_of_the_spawned_script(tmp_path: Path) -> None:
    """The same, a few times, with the real script (its own interpreter, stdout pipe)."""
    d = tmp_path / "mem"
    MemoryStore.init(d)
    seen = Seen()
    rng = random.Random(7)
    for round_ in range(6):
        proc = subprocess.Popen(
            [sys.executable, str(CHILD), str(d), "--prefix", f"s{round_}", "--tally-every", "3"],
            stdout=subprocess.PIPE,
            cwd=REPO,
        )
        assert proc.stdout is not None
        # Wait for the first returned commit, then kill 0–30 ms later.
        ready, _, _ = select.select([proc.stdout], [], [], 20.0)
        assert ready, "child made no commit in 20 s"
        time.sleep(rng.uniform(0.0, 0.030))
        proc.send_signal(signal.SIGKILL)
        out = proc.stdout.read().decode()
        assert proc.wait() == -signal.SIGKILL
        parse_lines(out, seen)
        seen.kills += 1
        check_after_kill(d, seen)
    assert len(seen.added) >= 6


def spawn(args: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, str(CHILD), *args], stdout=subprocess.PIPE, cwd=REPO)


NOT_COMMITTED = STEPS[: STEPS.index("manifest_replaced")]


def test_sigkill_at_every_protocol_step_leaves_old_or_new_set(tmp_path: Path) -> None:
    procs = {}
    for step in STEPS:
        d = tmp_path / step
        MemoryStore.init(d)
        # Three commits get through, the fourth is killed at ``step``.
        procs[step] = (d, spawn([str(d), "--prefix", "x", "--fault", step, "--after", "3"]))
    for step, (d, proc) in procs.items():
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL, (step, proc.returncode)
        seen = Seen()
        parse_lines(out.decode(), seen)
        assert sorted(seen.added) == ["x-0", "x-1", "x-2"]
        assert seen.last_generation == 3
        manifest = MemoryStore(d).read()
        names = {e.name for e in manifest.records}
        if step in NOT_COMMITTED:
            assert manifest.generation == 3, step
            assert names == {"x-0", "x-1", "x-2"}, step
        else:
            assert manifest.generation == 4, step
            assert names == {"x-0", "x-1", "x-2", "x-3"}, step
        written = step not in ("locked", "verified")
        orphan_left = written and step in NOT_COMMITTED
        assert bool(unreferenced_ours(d, manifest)) == orphan_left, step
        index_stale = sha256_hex((d / INDEX).read_bytes()) != manifest.index_sha256
        assert index_stale == (step in ("index_written", "history_linked")), step
        after = check_after_kill(d, seen)
        # The history link of an interrupted commit is reused, never duplicated or lost.
        assert MemoryStore(d).history_manifests() == list(range(after.generation))


def test_bookkeeping_commit_killed_at_every_step_keeps_the_generation_and_its_history(tmp_path: Path) -> None:
    """A commit that changes no record rewrites the current generation in place (DESIGN §3):
    killed at any step, the set, the generation and the history are as they were, and the
    cursor and the job id moved together or not at all."""
    procs = {}
    for step in STEPS:
        d = tmp_path / step
        store = MemoryStore.init(d)
        store.commit(Change(add=[make_record("a", "user", "Fact a", "Body a.")], actor="job"))
        store.commit(Change(add=[make_record("b", "user", "Fact b", "Body b.")], actor="job"))
        procs[step] = (d, store.read(), spawn([str(d), "--bookkeeping", "--fault", step]))
    for step, (d, before, proc) in procs.items():
        proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL, (step, proc.returncode)
        after = MemoryStore(d).read()
        assert after.generation == before.generation == 2, step
        assert after.records == before.records and after.change == before.change, step
        moved = step not in NOT_COMMITTED
        assert (after.cursors.get("s"), "cursor-job" in after.applied_jobs) == ((7, True) if moved else (None, False)), step
        assert MemoryStore(d).history_manifests() == [0, 1], step
        assert not unreferenced_ours(d, after), step
        assert sha256_hex((d / INDEX).read_bytes()) == after.index_sha256, step
        again = MemoryStore(d).commit(Change(actor="job", job_id="cursor-job", session_id="s", cursor=("s", 7)))
        assert again.generation == 2 and MemoryStore(d).read().cursors["s"] == 7, step


def test_consolidation_killed_at_every_step_leaves_whole_old_or_whole_new_set(tmp_path: Path) -> None:
    procs = {}
    for step in STEPS:
        d = tmp_path / step
        commit_child.seed_dream_set(d)
        procs[step] = (d, spawn([str(d), "--consolidate", "--fault", step]))
    for step, (d, proc) in procs.items():
        proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL, (step, proc.returncode)
        store = MemoryStore(d)
        manifest = store.read()
        got = {name: store.read_record(e).body for name, e in manifest.by_name().items()}
        if step in NOT_COMMITTED:
            assert manifest.generation == 1 and manifest.consolidated_at is None, step
            assert set(got) == set(DREAM_SOURCES), step
        else:
            assert manifest.generation == 2 and manifest.consolidated_at is not None, step
            assert got == {"tabs": "Use tabs, never spaces.\n", "keeper": "Something the dream does not touch.\n"}, step
            assert manifest.change["merged"] == [
                {"from": ["tabs-a", "tabs-b"], "into": "tabs"},
                {"from": ["stale-note"], "into": None},
            ]
        # The dead holder's lease is stale (pid gone) and the next dream recovers it.
        assert (d / LEASE_NAME).exists(), step
        lease = DreamLease.acquire(d)
        lease.release()
        assert list((d / HISTORY).glob("dream.lock-broken-*.json")), step
        check_after_kill(d, Seen(last_generation=manifest.generation))


@pytest.mark.parametrize("step", ["files_written", "index_written"])
def test_orphans_inside_grace_period_are_left_alone(tmp_path: Path, step: str) -> None:
    """A concurrent commit's fresh files must not be collected: only old orphans are."""
    d = tmp_path / "mem"
    MemoryStore.init(d)
    proc = spawn([str(d), "--prefix", "g", "--fault", step, "--after", "0"])
    proc.communicate(timeout=60)
    store = MemoryStore(d)  # default grace: 600 s
    store.commit(Change(add=[make_record("other", "user", "d", "b")]))
    assert unreferenced_ours(d, store.read()) != set()


def test_a_dream_killed_after_its_commit_point_leaves_its_sources_where_rollback_log_and_checker_look(
    tmp_path: Path,
) -> None:
    """Issue 21 §5: the dream's commit landed, the kill came before its sources were moved to
    ``.history/``. The next commit finishes that cleanup under the normal archive names, so
    the torture checker's remember-present (which looks for ``<file>.hist``), rollback and
    ``dreamd log`` agree on where the merged records are — the old code collected them as
    ``orphan.<file>.hist`` and the checker reported the remembered records lost."""
    from memory.store.history import log_entries, render_log, rollback
    from tests.torture.checker import _in_history

    d = tmp_path / "mem"
    commit_child.seed_dream_set(d)
    before = MemoryStore(d).read()
    sources = {e.name: e for e in before.records if e.name in ("tabs-a", "tabs-b", "stale-note")}
    proc = spawn([str(d), "--consolidate", "--fault", "manifest_replaced"])
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert MemoryStore(d).read().generation == before.generation + 1  # committed...
    assert all((d / e.file).exists() for e in sources.values())  # ...but not cleaned up
    store = MemoryStore(d, orphan_grace=0)
    store.commit(Change(add=[make_record("after-kill", "project", "The next commit", "ok")]))
    for e in sources.values():
        assert not (d / e.file).exists()
        kept = d / HISTORY / f"{e.file}{ARCHIVE_SUFFIX}"
        assert sha256_hex(kept.read_bytes()) == e.sha256, e.name
        assert not (d / HISTORY / f"{ORPHAN_PREFIX}{e.file}{ARCHIVE_SUFFIX}").exists()
        assert _in_history(d, e.file)
    assert "  merged   tabs-a, tabs-b -> tabs" in render_log(log_entries(store))
    rollback(store, to=before.generation)
    back = {e.name: store.read_record(e).body for e in store.read().records}
    assert {n: back.get(n) for n in sources} == {n: f"{DREAM_SOURCES[n]}.\n" for n in sources}


def test_group_commit_killed_at_every_step_applies_every_job_once_or_none(tmp_path: Path) -> None:
    """A group commit (``commit_all``: five jobs, four generations, a record added and merged
    away inside the group) SIGKILLed at every step: all of its jobs are applied or none, every
    manifest is valid, readers see no generation the group did not commit, the next commit
    finishes its cleanup under the normal archive names, and running the group again (as the
    daemon does with jobs whose commit it never saw) applies each job exactly once."""
    group = set(GROUP_JOBS)
    procs = {}
    for step in STEPS:
        d = tmp_path / step
        store = MemoryStore.init(d)
        store.commit(Change(add=[make_record("a", "user", "Fact a", "Body a.")], actor="job", job_id="seed-a"))
        store.commit(Change(add=[make_record("b", "user", "Fact b", "Body b.")], actor="job", job_id="seed-b"))
        procs[step] = (d, spawn([str(d), "--group", "--fault", step]))
    for step, (d, proc) in procs.items():
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL, (step, proc.returncode)
        assert out == b"", step  # killed inside the one commit: no outcome returned
        manifest = MemoryStore(d).read()
        committed = step not in NOT_COMMITTED
        assert group & set(manifest.applied_jobs) == (group if committed else set()), step
        names = {e.name for e in manifest.records}
        assert names == ({"a", "b", "g-0b", "g-1", "g-2"} if committed else {"a", "b"}), step
        assert manifest.generation == (6 if committed else 2), step
        assert manifest.cursors.get("h") == (5 if committed else None), step
        history = load_history(d)
        assert not history.broken, (step, history.broken)
        assert MemoryStore(d).history_manifests() == list(range(manifest.generation)), step
        by_job = {j: g for j, g in history.commits_by_job().items() if j in group}
        want = {"g-job-0": [3], "g-job-1": [4], "g-merge": [5], "g-job-2": [6]}
        assert by_job == (want if committed else {}), step

        seen = Seen(last_generation=manifest.generation, added=set(names))
        after = check_after_kill(d, seen)  # orphans and leftovers, the index, one more commit

        again = MemoryStore(d).commit_all(group_changes())
        assert all(isinstance(o, CommitResult) and o.duplicate == committed for o in again), (step, again)
        final = MemoryStore(d).read()
        assert sorted(j for j in final.applied_jobs if j in group) == sorted(group), step
        assert len(final.applied_jobs) == len(set(final.applied_jobs)), step
        assert {"a", "b", "g-0b", "g-1", "g-2"} <= {e.name for e in final.records}, step
        assert "g-0" not in {e.name for e in final.records}, step
        history = load_history(d)
        assert not history.broken, step
        made = [g for j, gens in history.commits_by_job().items() if j == "g-job-0" for g in gens]
        assert len(made) == 1, (step, made)
        g0 = history.gens[made[0]].files["g-0"]
        assert (d / HISTORY / f"{g0}{ARCHIVE_SUFFIX}").exists(), step  # where rollback and the checker look
        assert not (d / HISTORY / f"{ORPHAN_PREFIX}{g0}{ARCHIVE_SUFFIX}").exists(), step
        assert not (d / g0).exists(), step
        assert after.generation < final.generation or committed, step
