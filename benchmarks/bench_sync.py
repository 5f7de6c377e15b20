"""What ``dreamd sync`` costs against a local bare remote, next to the bare git operations it
consists of, measured in the same run (issue 12).

Rows:

* **push one record**: machine A (a set of ``--records`` records, synced) commits one new
  record (untimed), then ``sync(A)`` is timed: reconcile, one git commit for the generation,
  fetch, redaction check of what is outgoing, push. Baseline, in a plain git clone of the same
  files: write one file, ``git add``, ``git commit``, ``git fetch``, ``git push``.
* **receive one record**: machine B then runs ``sync(B)`` (fetch, validate, install the new set
  through the commit protocol, move HEAD). Baseline: ``git pull --ff-only`` in a second plain
  clone.
* **first sync**: attach a directory of ``--records`` records to an empty bare remote
  (``sync(DIR, remote=…)``): one commit per kept generation and the push. Baseline: ``git init``,
  ``git add -A``, ``git commit``, ``git remote add``, ``git push`` of the same files.
* **first clone**: ``sync`` into a missing directory from that remote (fetch, validate every
  record, install). Baseline: ``git clone``.

Iterations of dreamd and of its baseline alternate, so both see the same disk and machine load.

Usage: ``python benchmarks/bench_sync.py [--quick] [--records 1000] [--iterations 30]
[--out PATH]``. Prints a table; writes JSON (default ``benchmarks/results/sync.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from dreamd.sync.flow import sync  # noqa: E402
from memory.store.records import make_record  # noqa: E402
from memory.store.transaction import Change, MemoryStore  # noqa: E402


def record(i: int, tag: str = "r") -> Any:
    return make_record(
        f"{tag}-{i:06d}",
        ("user", "feedback", "project", "reference")[i % 4],
        f"Fact number {i}: the team prefers option {i % 7} when working on module {i % 31}",
        f"Fact {i} in detail.\n**Why:** benchmark record.\n**How to apply:** always, case {i}.\n",
    )


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def bare(path: Path) -> str:
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True, capture_output=True)
    return str(path)


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def build(directory: Path, size: int) -> MemoryStore:
    store = MemoryStore.init(directory)
    store.commit(Change(add=[record(i) for i in range(size)]))
    return store


def plain_repo(src: Path, dst: Path, remote: str) -> None:
    """A plain git working copy holding the same files as ``src`` (records, manifest, index)."""
    dst.mkdir(parents=True)
    for p in src.iterdir():
        if p.is_file() and (p.suffix == ".md" or p.name == "manifest.json"):
            shutil.copy2(p, dst / p.name)
    git(dst, "init", "-q", "-b", "main")
    git(dst, "add", "-A")
    git(dst, "commit", "-q", "-m", "initial")
    git(dst, "remote", "add", "origin", remote)


def stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50": statistics.median(ordered),
        "p90": ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))],
        "min": ordered[0],
        "n": len(ordered),
    }


def run(work: Path, *, records: int, iterations: int, firsts: int) -> dict[str, Any]:
    rows: dict[str, dict[str, Any]] = {}

    # ---- incremental: one new record pushed by A, received by B
    remote = bare(work / "inc.git")
    a, b = work / "a" / ".memory", work / "b" / ".memory"
    build(a, records)
    sync(a, remote=remote)
    sync(b, remote=remote)
    plain_remote = bare(work / "plain-inc.git")
    pa, pb = work / "pa", work / "pb"
    plain_repo(a, pa, plain_remote)
    git(pa, "push", "-q", "origin", "HEAD:main")
    subprocess.run(["git", "clone", "-q", plain_remote, str(pb)], check=True, capture_output=True)
    push: list[float] = []
    push_base: list[float] = []
    recv: list[float] = []
    recv_base: list[float] = []
    for i in range(iterations):
        MemoryStore(a).commit(Change(add=[record(records + i, "new")]))
        push.append(timed(lambda: sync(a)))
        recv.append(timed(lambda: sync(b)))
        data = (a / MemoryStore(a).read().records[-1].file).read_bytes()
        name = f"new-{i:06d}-plain.md"

        def plain_push(name: str = name, data: bytes = data) -> None:
            (pa / name).write_bytes(data)
            git(pa, "add", name)
            git(pa, "commit", "-q", "-m", f"add {name}")
            git(pa, "fetch", "-q", "origin")
            git(pa, "push", "-q", "origin", "HEAD:main")

        push_base.append(timed(plain_push))
        recv_base.append(timed(lambda: git(pb, "pull", "-q", "--ff-only", "origin", "main")))
    assert MemoryStore(a).read().generation == MemoryStore(b).read().generation
    rows["push one record"] = {"dreamd": stats(push), "git": stats(push_base),
                               "git_ops": "add + commit + fetch + push"}
    rows["receive one record"] = {"dreamd": stats(recv), "git": stats(recv_base),
                                  "git_ops": "pull --ff-only"}

    # ---- first sync and first clone of a whole set
    src = work / "src" / ".memory"
    build(src, records)
    first: list[float] = []
    first_base: list[float] = []
    clone: list[float] = []
    clone_base: list[float] = []
    for i in range(firsts):
        d = work / f"first-{i}" / ".memory"
        shutil.copytree(src, d, ignore=shutil.ignore_patterns(".lock", ".git"))
        r = bare(work / f"first-{i}.git")
        first.append(timed(lambda d=d, r=r: sync(d, remote=r)))
        c = work / f"clone-{i}" / ".memory"
        clone.append(timed(lambda c=c, r=r: sync(c, remote=r)))
        assert len(MemoryStore(c).read().records) == records

        p = work / f"plain-first-{i}"
        p.mkdir()
        for f in d.iterdir():
            if f.is_file() and (f.suffix == ".md" or f.name == "manifest.json"):
                shutil.copy2(f, p / f.name)
        pr = bare(work / f"plain-first-{i}.git")

        def plain_first(p: Path = p, pr: str = pr) -> None:
            git(p, "init", "-q", "-b", "main")
            git(p, "add", "-A")
            git(p, "commit", "-q", "-m", "initial")
            git(p, "remote", "add", "origin", pr)
            git(p, "push", "-q", "origin", "HEAD:main")

        first_base.append(timed(plain_first))
        clone_base.append(timed(lambda pr=pr, i=i: subprocess.run(
            ["git", "clone", "-q", pr, str(work / f"plain-clone-{i}")], check=True, capture_output=True)))
    rows[f"first sync of {records} records"] = {"dreamd": stats(first), "git": stats(first_base),
                                                "git_ops": "init + add -A + commit + remote add + push"}
    rows[f"first clone of {records} records"] = {"dreamd": stats(clone), "git": stats(clone_base),
                                                 "git_ops": "clone"}
    return rows


def render(rows: dict[str, dict[str, Any]]) -> str:
    lines = [f"{'operation':<30} {'n':>3} {'dreamd p50':>11} {'dreamd p90':>11} {'git p50':>9} {'git p90':>9} {'ratio':>6}  git operations"]
    for name, row in rows.items():
        d, g = row["dreamd"], row["git"]
        lines.append(
            f"{name:<30} {d['n']:>3} {d['p50']:>9.1f}ms {d['p90']:>9.1f}ms {g['p50']:>7.1f}ms {g['p90']:>7.1f}ms"
            f" {d['p50'] / g['p50']:>5.2f}x  {row['git_ops']}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="5 incremental iterations, 2 first syncs")
    ap.add_argument("--records", type=int, default=1000)
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--firsts", type=int, default=5)
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "sync.json")
    args = ap.parse_args(argv)
    iterations, firsts = (5, 2) if args.quick else (args.iterations, args.firsts)
    with tempfile.TemporaryDirectory(prefix="bench-sync-") as tmp:
        work = Path(tmp)
        home = work / "home"
        home.mkdir()
        (home / ".gitconfig").write_text("[user]\n\tname = Bench\n\temail = bench@example.invalid\n")
        os.environ.update({"HOME": str(home), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "GIT_CONFIG_NOSYSTEM": "1"})
        rows = run(work, records=args.records, iterations=iterations, firsts=firsts)
    table = render(rows)
    print(table)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "benchmark": "sync", "records": args.records, "rows": rows,
        "git": subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip(),
        "python": platform.python_version(), "cpus": os.cpu_count(), "load_average": load,
    }, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
