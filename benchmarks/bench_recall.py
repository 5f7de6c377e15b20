"""Recall speed: warm recall and write + recall, against the selection alone (issue 13, item 11).

Rows, per set size (1,000 and 10,000 records, generated), in one run:

* ``selection``: :meth:`memory.retrieval.select.KeywordIndex.select` on an index built beforehand — the
  part of recall no cache can remove (the baseline).
* ``warm recall``: :func:`memory.recall` with nothing changed since the last call (the manifest
  is only ``fstat``-ed, the index reused): select, read the chosen record files, cap, render.
* ``write + recall``: one record committed through :class:`memory.store.transaction.MemoryStore` (durable:
  fsync on), then a recall whose query only the new record matches — what an agent sees right
  after it remembered something.

Targets: warm recall at 10,000 records p50 ≤ 20 ms; write + recall at 1,000 records p50 ≤ 60 ms.

    python benchmarks/bench_recall.py            # 200 iterations per row
    python benchmarks/bench_recall.py --quick    # 30
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.bench_store import fsync_off  # noqa: E402
from benchmarks.stats import pct  # noqa: E402
from memory.retrieval.index import set_index  # noqa: E402
from memory.retrieval.recall import clear_cache, recall  # noqa: E402
from memory.store.records import Record, make_record  # noqa: E402
from memory.store.transaction import Change, MemoryStore  # noqa: E402

TOPICS = ["deploy", "postgres", "staging", "billing", "latency", "schema", "pager", "review",
          "mirror", "invoice", "cache", "monorepo", "rollback", "budget", "tabs", "lint"]


def _vocabulary(n: int, rng: random.Random) -> list[str]:
    return ["".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(3)) for _ in range(n)]


def _record(i: int, vocab: list[str], rng: random.Random) -> Record:
    """A record with a varied vocabulary, as real sets have (most words rare, a few common)."""
    words = [rng.choice(vocab) for _ in range(8)] + [rng.choice(TOPICS)]
    return make_record(
        f"r-{i:06d}", ("user", "feedback", "project", "reference")[i % 4],
        f"The {words[0]} {words[1]} uses {words[2]} for {words[8]}",
        f"{' '.join(words[3:8])}.\n**Why:** {words[2]} matters.\n**How to apply:** check {words[5]}.\n",
    )


def build(directory: Path, size: int, rng: random.Random) -> tuple[MemoryStore, list[str]]:
    vocab = _vocabulary(max(2000, size), rng)
    store = MemoryStore.init(directory)
    with fsync_off():
        store.commit(Change(add=[_record(i, vocab, rng) for i in range(size)]))
    return store, vocab


def _ms(values: list[float]) -> dict[str, float]:
    return {"p50_ms": pct(values, 0.5) * 1000, "p99_ms": pct(values, 0.99) * 1000,
            "mean_ms": statistics.fmean(values) * 1000}


def bench_size(root: Path, size: int, iterations: int) -> list[dict[str, Any]]:
    directory = root / f"set-{size}"
    rng = random.Random(size)
    store, vocab = build(directory, size, rng)
    clear_cache()
    recall(directory, "warm up")  # the cold build is not what these rows measure
    index = set_index(directory).keyword
    sel, warm = [], []
    for _ in range(iterations):
        query = f"how do we handle {rng.choice(vocab)} with {rng.choice(vocab)} in {rng.choice(TOPICS)}?"
        t0 = time.perf_counter()
        index.select(query, 5)
        sel.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        recall(directory, query)
        warm.append(time.perf_counter() - t0)
    writes = []
    for i in range(iterations):
        word = f"zq{size}x{i}"
        rec = make_record(f"new-{i:05d}", "project", f"The {word} service pages the night shift", f"{word} details.")
        t0 = time.perf_counter()
        store.commit(Change(add=[rec]))
        result = recall(directory, word)
        writes.append(time.perf_counter() - t0)
        assert [r.name for r in result.records] == [rec.name], "the new record must be found"
    return [
        {"row": "selection (baseline)", "records": size, **_ms(sel), "target": "-"},
        {"row": "warm recall", "records": size, **_ms(warm),
         "target": "p50 <= 20 ms" if size >= 10_000 else "-"},
        {"row": "write + recall", "records": size, **_ms(writes),
         "target": "p50 <= 60 ms" if size == 1_000 else "-"},
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "recall.json")
    args = ap.parse_args(argv)
    iterations = 30 if args.quick else 200
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="dreamd-bench-recall-") as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            rows += bench_size(Path(tmp), size, iterations)
    print(f"{'row':<22} {'records':>8} {'p50':>10} {'p99':>10} {'mean':>10}  target")
    for r in rows:
        print(f"{r['row']:<22} {r['records']:>8} {r['p50_ms']:>8.2f}ms {r['p99_ms']:>8.2f}ms "
              f"{r['mean_ms']:>8.2f}ms  {r['target']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"iterations": iterations, "cpus": os.cpu_count(), "python": sys.version.split()[0]}
    args.out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
