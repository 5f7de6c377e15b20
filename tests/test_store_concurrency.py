"""Concurrent writers (DESIGN §2.3 steps 1–3): processes and threads committing into one directory.

Every commit re-reads the manifest under the store lock and applies its delta to what is there,
so no returned add is ever lost, names stay unique and each commit gets its own generation.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memory.errors import ConflictError, LockTimeout
from memory.store.locks import store_lock
from memory.store.records import make_record
from memory.store.transaction import OUR_FILE_RE, Change, CommitResult, MemoryStore
from tests.helpers import commit_child

CHILD = Path(commit_child.__file__)
REPO = Path(__file__).resolve().parents[1]


def assert_consistent(store: MemoryStore, returned: dict[int, str]) -> None:
    """``returned`` maps each returned generation to the name that commit added."""
    manifest = store.read()
    names = [e.name for e in manifest.records]
    assert len(names) == len(set(names)), "duplicate names"
    missing = set(returned.values()) - set(names)
    assert not missing, f"lost updates: {sorted(missing)[:5]}"
    # Each commit made exactly one generation, no gaps: 1..N.
    assert sorted(returned) == list(range(1, len(returned) + 1))
    assert manifest.generation == len(returned)
    files = {e.file for e in manifest.records}
    strays = [p.name for p in store.path.iterdir() if OUR_FILE_RE.match(p.name) and p.name not in files]
    assert strays == []


def test_eight_processes_committing_at_once_lose_nothing(tmp_path: Path) -> None:
    d = tmp_path / "mem"
    MemoryStore.init(d)
    start = time.time() + 1.5  # every interpreter is up before the first commit
    procs = [
        subprocess.Popen(
            [sys.executable, str(CHILD), str(d), "--prefix", f"p{k}", "--count", "40", "--start-at", str(start)],
            stdout=subprocess.PIPE,
            cwd=REPO,
        )
        for k in range(8)
    ]
    returned: dict[int, str] = {}
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        last = 0
        lines = out.decode().splitlines()
        assert len(lines) == 40
        for line in lines:
            gen_text, name = line.split()
            gen = int(gen_text)
            assert gen > last, "a process saw its generations go backwards"
            last = gen
            assert gen not in returned, f"generation {gen} returned twice"
            returned[gen] = name
    assert len(returned) == 320
    assert_consistent(MemoryStore(d), returned)
    # The commits really interleaved: some process's generations are not one contiguous run.
    by_prefix: dict[str, list[int]] = {}
    for gen, name in returned.items():
        by_prefix.setdefault(name.split("-")[0], []).append(gen)
    assert any(max(g) - min(g) + 1 > len(g) for g in by_prefix.values())


@pytest.mark.parametrize("shared", [True, False], ids=["one-store", "store-per-thread"])
def test_threads_committing_at_once_lose_nothing(tmp_path: Path, shared: bool) -> None:
    d = tmp_path / "mem"
    MemoryStore.init(d)
    one = MemoryStore(d)
    barrier = threading.Barrier(8)
    results: list[CommitResult] = []
    errors: list[BaseException] = []
    guard = threading.Lock()

    def worker(k: int) -> None:
        store = one if shared else MemoryStore(d)
        try:
            barrier.wait()
            for i in range(25):
                # Same names from every thread: collisions must get suffixes, never overwrite.
                r = store.commit(Change(add=[make_record(f"fact-{i}", "user", f"t{k} fact {i}", f"t{k} {i}")]))
                with guard:
                    results.append(r)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    returned = {r.generation: r.added[0] for r in results}
    assert len(returned) == len(results) == 200
    assert_consistent(MemoryStore(d), returned)
    store = MemoryStore(d)
    bodies = sorted(rec.body for _, rec in store.records())
    assert bodies == sorted(f"t{k} {i}\n" for k in range(8) for i in range(25))
    assert {e.name for e in store.read().records} >= {"fact-0", "fact-0-2", "fact-0-8"}


def test_commit_times_out_while_another_process_holds_the_lock(tmp_path: Path) -> None:
    d = tmp_path / "mem"
    MemoryStore.init(d)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys,time; from pathlib import Path; from memory.store.locks import store_lock\n"
            "with store_lock(Path(sys.argv[1]), 5):\n print('held', flush=True); time.sleep(30)",
            str(d),
        ],
        stdout=subprocess.PIPE,
        cwd=REPO,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == b"held\n"
        store = MemoryStore(d, lock_timeout=0.2)
        with pytest.raises(LockTimeout, match=r"\.lock"):
            store.commit(Change(add=[make_record("x", "user", "d", "b")]))
        assert store.read().generation == 0
    finally:
        holder.kill()
        holder.wait()
    # The kernel released the dead holder's flock: the next commit goes through, lock file kept.
    assert MemoryStore(d, lock_timeout=2).commit(Change(add=[make_record("x", "user", "d", "b")])).generation == 1
    assert (d / ".lock").exists()


def test_thread_lock_times_out_too(tmp_path: Path) -> None:
    d = tmp_path / "mem"
    MemoryStore.init(d)
    held = threading.Event()
    done = threading.Event()

    def hold() -> None:
        with store_lock(d, 5):
            held.set()
            done.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    try:
        held.wait(5)
        with pytest.raises(LockTimeout):
            MemoryStore(d, lock_timeout=0.1).commit(Change(add=[make_record("x", "user", "d", "b")]))
    finally:
        done.set()
        t.join()


def test_consolidation_merges_with_concurrent_adds_and_conflicts_on_changed_base(tmp_path: Path) -> None:
    d = tmp_path / "mem"
    store = MemoryStore.init(d)
    store.commit(Change(add=[make_record(n, "user", f"about {n}", f"{n} body") for n in ("a", "b", "c")]))
    base = {e.name: e.sha256 for e in store.read().records}
    # Someone adds while the dream is planning: the dream's commit keeps it.
    MemoryStore(d).commit(Change(add=[make_record("late", "user", "added meanwhile", "late body")]))
    merged = make_record("ab", "user", "a and b", "a and b body")
    store.commit(Change(merges=[(["a", "b"], merged)], base={k: base[k] for k in ("a", "b")}, actor="dream"))
    assert sorted(e.name for e in store.read().records) == ["ab", "c", "late"]

    # Someone edits "c" after the plan: the dream conflicts and writes nothing at all.
    plan_base = {e.name: e.sha256 for e in store.read().records}
    MemoryStore(d).commit(Change(replace={"c": make_record("c", "user", "about c", "c edited")}))
    before = sorted(p.name for p in d.iterdir())
    gen = store.read().generation
    with pytest.raises(ConflictError, match="'c' changed"):
        store.commit(Change(merges=[(["c", "late"], None)], base={k: plan_base[k] for k in ("c", "late")}))
    assert store.read().generation == gen
    assert sorted(p.name for p in d.iterdir()) == before
    # A removed source is a conflict too.
    MemoryStore(d).commit(Change(remove=["late"]))
    with pytest.raises(ConflictError, match="'late' was removed"):
        store.commit(Change(merges=[(["late"], None)], base={"late": plan_base["late"]}))
