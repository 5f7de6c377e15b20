"""A child process that commits into a memory directory until it is killed (crash tests).

Every commit that *returned* is announced on stdout, one flushed line each, so the parent knows
exactly which commits a SIGKILL can no longer take back::

    <generation> <name added>            an add
    <generation> tally <value>           the "tally" record replaced with body <value>
    <generation> dream                   the consolidation commit returned
    <generation> cursor <value>          a bookkeeping commit (cursor + job id, no record) returned

``--fault STEP --after K`` lets K commits through and then SIGKILLs the process at protocol step
STEP of the next commit (through the store's ``fault`` hook), so a test can stop a real process
at every step deterministically. ``--consolidate`` runs one consolidation-style commit (lease,
base, merges) instead of the add loop; ``--bookkeeping`` one commit that changes no record (a
cursor and a job id, made in place); ``--group`` one group commit of five jobs
(:func:`run_group`). :func:`run_loop` is the same loop for callers that fork.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

if __name__ == "__main__":  # run as a script: make the repo importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from memory.store.locks import DreamLease
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore

STEPS = (
    "locked",
    "verified",
    "files_written",
    "index_written",
    "history_linked",
    "manifest_replaced",
    "cleaned",
)

Emit = Callable[[str], None]

# The set a consolidation test starts from and what the dream turns it into.
DREAM_SOURCES = {
    "tabs-a": "User prefers tabs for indentation",
    "tabs-b": "Indent with tabs, never spaces",
    "stale-note": "A note about a deadline that has passed",
    "keeper": "Something the dream does not touch",
}
DREAM_RESULT = "tabs"


def stdout_emit(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def fd_emit(fd: int) -> Emit:
    """Unbuffered emit to a raw fd: one write(2) per line, atomic on a pipe."""

    def emit(line: str) -> None:
        os.write(fd, (line + "\n").encode())

    return emit


def kill_at(step: str, *, after: int = 0) -> Callable[[str], None]:
    """A fault hook that SIGKILLs this process at ``step`` of commit number ``after`` (0-based)."""
    seen = {"commits": 0}

    def hook(name: str) -> None:
        if name == "cleaned":
            seen["commits"] += 1
            if seen["commits"] - 1 == after and step == "cleaned":
                os.kill(os.getpid(), signal.SIGKILL)
            return
        if name == step and seen["commits"] == after:
            os.kill(os.getpid(), signal.SIGKILL)

    return hook


def run_loop(
    directory: Path,
    *,
    prefix: str,
    count: int = 0,
    emit: Emit = stdout_emit,
    tally_every: int = 0,
    fault: Callable[[str], None] | None = None,
    lock_timeout: float = 30.0,
) -> None:
    """Commit adds (and every ``tally_every``-th commit a tally replace) ``count`` times (0: forever)."""
    store = MemoryStore(directory, lock_timeout=lock_timeout, fault=fault)
    i = 0
    while count == 0 or i < count:
        if tally_every and i % tally_every == tally_every - 1:
            rec = make_record("tally", "project", "How far this child got", f"{prefix} {i}")
            if "tally" in store.read().by_name():
                result = store.commit(Change(replace={"tally": rec}, actor="job"))
            else:
                result = store.commit(Change(add=[rec], actor="job"))
            emit(f"{result.generation} tally {prefix}:{i}")
        else:
            rec = make_record(f"{prefix}-{i}", "user", f"Fact {i} from {prefix}", f"Body of {prefix} {i}.")
            result = store.commit(Change(add=[rec], actor="job", job_id=f"{prefix}-job-{i}"))
            emit(f"{result.generation} {result.added[0]}")
        i += 1


def seed_dream_set(directory: Path) -> dict[str, str]:
    """Create the set a consolidation test starts from; returns name -> sha256."""
    store = MemoryStore.init(directory)
    recs = [make_record(n, "user", d, f"{d}.") for n, d in DREAM_SOURCES.items()]
    store.commit(Change(add=recs))
    return {e.name: e.sha256 for e in store.read().records}


def run_dream(directory: Path, *, emit: Emit = stdout_emit, fault: Callable[[str], None] | None = None) -> None:
    """One consolidation: tabs-a + tabs-b -> tabs, stale-note dropped, keeper untouched."""
    store = MemoryStore(directory, fault=fault)
    lease = DreamLease.acquire(directory)
    base = {e.name: e.sha256 for e in store.read().records if e.name != "keeper"}
    merged = make_record(DREAM_RESULT, "user", "User prefers tabs for indentation", "Use tabs, never spaces.")
    result = store.commit(
        Change(
            merges=[(["tabs-a", "tabs-b"], merged), (["stale-note"], None)],
            base=base,
            lease=lease,
            consolidated=True,
            actor="dream",
        )
    )
    emit(f"{result.generation} dream")
    lease.release()


def run_bookkeeping(directory: Path, *, emit: Emit = stdout_emit, fault: Callable[[str], None] | None = None) -> None:
    """One commit that only moves session ``s``'s cursor to 7 and applies job ``cursor-job``."""
    store = MemoryStore(directory, fault=fault)
    result = store.commit(Change(actor="job", job_id="cursor-job", session_id="s", cursor=("s", 7)))
    emit(f"{result.generation} cursor 7")


GROUP_JOBS = ("g-job-0", "g-cursor", "g-job-1", "g-merge", "g-job-2")
"""The jobs of :func:`run_group`'s one group commit, in order."""


def group_changes() -> list[Change]:
    """One group: an add, a bookkeeping change (cursor only), an add, a merge of the first add
    (a record added and superseded inside the group) and an add; five jobs, four generations."""
    def add(i: int, job: str) -> Change:
        rec = make_record(f"g-{i}", "project", f"Group fact {i}", f"Body of group fact {i}.")
        return Change(add=[rec], actor="job", job_id=job, session_id="g", cursor=("g", i + 1))

    newer = make_record("g-0b", "project", "Group fact 0, corrected", "Body of group fact 0, corrected.")
    return [
        add(0, "g-job-0"),
        Change(actor="job", job_id="g-cursor", session_id="h", cursor=("h", 5), note="no new turns"),
        add(1, "g-job-1"),
        Change(merges=[(["g-0"], newer)], superseded={"g-0"}, actor="job", job_id="g-merge", session_id="g"),
        add(2, "g-job-2"),
    ]


def run_group(directory: Path, *, emit: Emit = stdout_emit, fault: Callable[[str], None] | None = None) -> None:
    """One group commit (``MemoryStore.commit_all``) of :func:`group_changes`."""
    store = MemoryStore(directory, fault=fault)
    for outcome in store.commit_all(group_changes()):
        assert not isinstance(outcome, BaseException), outcome
        emit(f"{outcome.generation} group {'duplicate' if outcome.duplicate else ','.join(outcome.added) or '-'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("directory", type=Path)
    parser.add_argument("--prefix", default=f"p{os.getpid()}")
    parser.add_argument("--count", type=int, default=0, help="commits to make (0: until killed)")
    parser.add_argument("--tally-every", type=int, default=0)
    parser.add_argument("--fault", choices=STEPS)
    parser.add_argument("--after", type=int, default=0, help="commits let through before the fault")
    parser.add_argument("--consolidate", action="store_true")
    parser.add_argument("--bookkeeping", action="store_true")
    parser.add_argument("--group", action="store_true", help="one group commit (run_group)")
    parser.add_argument("--start-at", type=float, default=0.0, help="time.time() to start at (a barrier)")
    args = parser.parse_args(argv)
    fault = kill_at(args.fault, after=args.after) if args.fault else None
    if args.start_at:
        time.sleep(max(args.start_at - time.time(), 0.0))
    if args.consolidate:
        run_dream(args.directory, fault=fault)
    elif args.bookkeeping:
        run_bookkeeping(args.directory, fault=fault)
    elif args.group:
        run_group(args.directory, fault=fault)
    else:
        run_loop(args.directory, prefix=args.prefix, count=args.count, tally_every=args.tally_every, fault=fault)
    return 0


if __name__ == "__main__":
    sys.exit(main())
