"""What a forget of a name a dream merged away costs: finding where the fact went
(``dreamd.jobs.work.merged_into``, which the forget job and the MCP ``forget``/``get_memory`` tools
call for every name the set does not hold), against a plain ``store.read()`` in the same run.

Each set has N records and ``history_generations`` = G kept manifests: one big commit, then a
dream merges ``r-000000`` into ``r-000001``, then G - 1 commits of one record each, so the merge
is the oldest generation history keeps (the longest way back). Measured, each on a fresh
store (what ``dreamd`` and a first MCP call pay), alternating so all see the same load:

- **read**: ``MemoryStore(d).read()``, parsing the current manifest: the floor, since every
  forget reads the current set anyway.
- **before**: the lookup as it was before (every kept manifest parsed and validated whole by
  ``memory.store.history.log_entries``, walked oldest first), reproduced below as the baseline; run
  fewer times at large sizes (a budget of ~20 s per set).
- **merged**: ``merged_into`` for the merged-away name.
- **unknown**: ``merged_into`` for a name no generation mentions: every kept manifest is read
  (its head and tail).
- **warm**: ``merged_into`` for the merged-away name on a store that already holds the current
  manifest (the daemon's and the MCP server's long-lived stores).

The sets are built with fsync switched off (setup, not measured); the page cache is warm.
Target: merged and unknown p50 <= 2x the read floor at every size.

Usage: ``python benchmarks/bench_forget.py [--quick] [--sizes 1000,10000] [--generations
200,500] [--iterations N] [--dir PARENT] [--out PATH]``. Prints a table; writes JSON (default
``benchmarks/results/forget.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.bench_store import fsync_off, make  # noqa: E402
from benchmarks.stats import pct  # noqa: E402
from dreamd.jobs.work import merged_into  # noqa: E402
from memory.store.history import log_entries  # noqa: E402
from memory.store.transaction import Change, MemoryStore  # noqa: E402

TARGET_RATIO = 2.0
BEFORE_BUDGET_S = 20.0
MERGED, INTO, UNKNOWN = "r-000000", "r-000001", "no-such-name"


def merged_into_before(store: MemoryStore, name: str) -> str | None:
    """The lookup before issue 13's follow-up, verbatim: the baseline."""
    entries = list(reversed(log_entries(store)))  # oldest first
    current: str | None = None
    target = name
    for entry in entries:
        for merge in entry.merged:
            if target in merge.get("from", []) and merge.get("into") != target:
                current = merge.get("into")
                if current is None:
                    return None
                target = current
    live = {e.name for e in store.read().records}
    return current if current in live else None


def build(directory: Path, size: int, generations: int) -> None:
    store = MemoryStore.init(directory, history_generations=generations)
    with fsync_off():
        store.commit(Change(add=[make(i) for i in range(size)]))
        merged = make(1)
        store.commit(Change(merges=[([MERGED, INTO], merged)], actor="dream", consolidated=True))
        for i in range(generations - 1):
            store.commit(Change(add=[make(i, tag="later")]))
    kept = store.history_manifests()
    assert len(kept) >= generations and min(kept) <= 2, (len(kept), min(kept))


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    out = fn()
    return (time.perf_counter() - started) * 1000, out


def measure(parent: Path, size: int, generations: int, iterations: int) -> dict[str, Any]:
    d = parent / f"set-{size}-{generations}"
    d.mkdir()
    t0 = time.perf_counter()
    build(d, size, generations)
    build_s = time.perf_counter() - t0

    def fresh() -> MemoryStore:
        return MemoryStore(d, history_generations=generations)

    warm = fresh()
    warm.read()
    samples: dict[str, list[float]] = {k: [] for k in ("read", "merged", "unknown", "warm", "before")}
    before_spent = 0.0
    for i in range(iterations):
        ms, _ = timed(lambda: fresh().read())
        samples["read"].append(ms)
        ms, out = timed(lambda: merged_into(fresh(), MERGED))
        assert out == INTO, out
        samples["merged"].append(ms)
        ms, out = timed(lambda: merged_into(fresh(), UNKNOWN))
        assert out is None, out
        samples["unknown"].append(ms)
        ms, out = timed(lambda: merged_into(warm, MERGED))
        assert out == INTO, out
        samples["warm"].append(ms)
        if i == 0 or before_spent < BEFORE_BUDGET_S * 1000:
            ms, out = timed(lambda: merged_into_before(fresh(), MERGED))
            assert out == INTO, out
            samples["before"].append(ms)
            before_spent += ms
    row: dict[str, Any] = {
        "records": size,
        "generations": generations,
        "iterations": iterations,
        "before_iterations": len(samples["before"]),
        "build_s": round(build_s, 1),
        "manifest_bytes": (d / "manifest.json").stat().st_size,
    }
    for key, values in samples.items():
        row[f"{key}_p50_ms"] = round(statistics.median(values), 2)
        row[f"{key}_p99_ms"] = round(pct(values, 0.99), 2)
    for key in ("merged", "unknown", "before"):
        row[f"{key}_ratio_p50"] = round(row[f"{key}_p50_ms"] / row["read_p50_ms"], 2)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer iterations (5 instead of 20)")
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--generations", default="200,500")
    parser.add_argument("--iterations", type=int, default=0)
    parser.add_argument("--dir", type=Path, default=None, help="parent directory for the sets (default: a temp dir)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "forget.json")
    args = parser.parse_args(argv)
    iterations = args.iterations or (5 if args.quick else 20)
    rows = []
    with tempfile.TemporaryDirectory(prefix="dreamd-bench-forget-", dir=args.dir) as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            for generations in (int(g) for g in args.generations.split(",")):
                rows.append(measure(Path(tmp), size, generations, iterations))
                print(f"measured {size} records x {generations} generations", file=sys.stderr)
    print(
        f"{'records':>8} {'gens':>5} {'read p50':>10} {'before p50':>11} {'merged p50':>11} {'merged p99':>11} "
        f"{'unknown p50':>12} {'warm p50':>10} {'merged/read':>11} {'unknown/read':>12} {'before/read':>11}"
    )
    for r in rows:
        print(
            f"{r['records']:>8} {r['generations']:>5} {r['read_p50_ms']:>8.2f}ms {r['before_p50_ms']:>9.1f}ms "
            f"{r['merged_p50_ms']:>9.2f}ms {r['merged_p99_ms']:>9.2f}ms {r['unknown_p50_ms']:>10.2f}ms "
            f"{r['warm_p50_ms']:>8.2f}ms {r['merged_ratio_p50']:>10.2f}x {r['unknown_ratio_p50']:>11.2f}x "
            f"{r['before_ratio_p50']:>10.1f}x"
        )
    print("before: n = " + ", ".join(f"{r['before_iterations']}" for r in rows) + f" (budget ~{BEFORE_BUDGET_S:g} s per set)")
    met = all(max(r["merged_ratio_p50"], r["unknown_ratio_p50"]) <= TARGET_RATIO for r in rows)
    print(f"target: merged and unknown p50 <= {TARGET_RATIO:g}x read at every size: {'met' if met else 'MISSED'}")
    result = {
        "benchmark": "forget_merged_away_lookup",
        "quick": args.quick,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "target": f"merged_into p50 <= {TARGET_RATIO:g}x a fresh store.read() p50 at every size",
        "target_met": met,
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
