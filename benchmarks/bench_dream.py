"""What one dream costs with the offline model and what it finds: planning the set and
committing the plan, against reading the same set (``store.records()``, every record file
parsed), and the batching a dream used before issue 23 (the set in type and name order, cut
every ``PLAN_BATCH`` records), all measured in the same run on the same directory.

Each set has N records written the way extraction writes them: four types, a description and a
body with **Why:**/**How to apply:** lines, made-up subjects and values (so no record repeats
another by accident). Planted in it, drawn with fixed odds from a seeded generator, each right
after its base and named by its position (so in name order a twin is next to its base, and
the cut between two batches still parts some): exact duplicates (5 %), "reworded" duplicates
(5 %; only the rule records' wording changes, the other three kinds repeat their base exactly),
explicit supersessions ("<subject> no longer uses <its base's value>; it moved to <another>",
4 % of the bases holding a port or a version, of their base's type, committed a day later: a
supersession needs a strictly newer record) and expired records (3 %); the rest are distinct
facts, several about one subject. Two batchings, each measured alternating with the other so
both see the same load, each on a fresh store (what a daemon pays after a restart), after one
untimed dry run of the set (the page cache is warm):

- **baseline**: the dream with the old batching (``plan_batches`` over every record, no
  candidate index): a batch sees only its own records.
- **candidates**: the dream as it is (``dreamd.jobs.work.dream_batches``): candidate groups from
  one index over every record, batches made of whole groups.

Per batching:

- **read**: ``MemoryStore(d).records()``: the floor, since every dream reads every record.
- **plan**: ``dreamd.jobs.work.dream(..., dry_run=True)`` (gates off): lease, snapshot, the
  index, every batch planned by the offline model through the strict answer gate; nothing is
  written. Cold: every memo cache of ``dreamd`` and ``memory`` (gists, clauses, stems by text,
  bounded LRU) is emptied first, as after a restart.
- **warm**: the same dry run again at once (memo caches full).
- **dream**: the same dream applied (cold), on a fresh copy of the set: plan plus one commit.
- **found**: of the planted duplicates and rewordings, the share merged with their base by the
  applied dream; of the planted supersessions, the share merged with their base (the old
  value kept on its ``**Previously:**`` line); drops against planted expired records.
- **retention**: the share of clauses of every record before the dream (expired ones aside)
  still said by a record after it (``dreamd.models.offline.compare.clauses.said_by``): 1.0 means
  no fact was lost.

Targets (issue 23): at 10,000 records >= 95 % of planted duplicates merged, a cold plan <= 5 s,
retention 1.0.

Usage: ``python benchmarks/bench_dream.py [--quick] [--sizes 1000,10000] [--iterations N]
[--no-baseline] [--dir PARENT] [--out PATH]``. Prints a table; writes JSON (default
``benchmarks/results/dream.json``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import structlog

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import dreamd.jobs.work  # noqa: E402
from benchmarks.bench_store import fsync_off  # noqa: E402
from benchmarks.stats import pct  # noqa: E402
from dreamd.config import default_config  # noqa: E402
from dreamd.jobs.batches import plan_batches  # noqa: E402
from dreamd.jobs.work import Context, dream  # noqa: E402
from dreamd.models.offline.compare.clauses import clause_units, clauses, said_by  # noqa: E402
from dreamd.models.offline.model import OfflineModel  # noqa: E402
from memory.store.records import Record, make_record  # noqa: E402
from memory.store.transaction import Change, MemoryStore  # noqa: E402

TARGET_FOUND = 0.95
TARGET_PLAN_MS = 5000.0
TARGET_SIZE = 10_000
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

_SYLLABLES = ("ka", "lo", "mi", "ru", "te", "sa", "vo", "ne", "pi", "dax", "quor", "bel", "fen", "zir", "hol")
_TOOLS = ("linter", "formatter", "test runner", "build script", "deploy job", "cache", "queue", "dashboard")
_VALUES = ("tabs", "spaces", "port 8{0}", "version {0}.{1}", "the {2} branch", "{2} mode", "weekly", "nightly")
_PEOPLE = ("Avery", "Bao", "Chidi", "Dana", "Emeka", "Farah", "Goran", "Hana")


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))


def _value(rng: random.Random) -> str:
    return rng.choice(_VALUES).format(rng.randint(0, 9), rng.randint(0, 20), _word(rng))


@dataclass
class Planted:
    duplicates: int = 0
    rewordings: int = 0
    supersessions: int = 0
    expired: int = 0
    pairs: list[tuple[str, str, str]] = field(default_factory=list)
    """(kind, planted record, its base) for every duplicate, rewording and supersession."""

    def counts(self) -> dict[str, int]:
        return {"duplicates": self.duplicates, "rewordings": self.rewordings,
                "supersessions": self.supersessions, "expired": self.expired}


def records(size: int, seed: int = 7) -> tuple[list[Record], Planted]:
    """``size`` records with duplicates, rewordings, supersessions and expired ones planted."""
    rng = random.Random(seed)
    out: list[Record] = []
    planted = Planted()
    subjects = [f"the {_word(rng)} {rng.choice(_TOOLS)}" for _ in range(max(size // 3, 1))]

    def fact(i: int, subject: str) -> tuple[Record, str | None]:
        kind = i % 4
        value = _value(rng)
        if kind == 0:
            desc, typ = f"{rng.choice(_PEOPLE)} owns {subject}", "reference"
        elif kind == 1:
            desc, typ = f"Always run {subject} with {value} before pushing", "feedback"
        elif kind == 2:
            desc, typ = f"{subject.capitalize()} moves to {value} by {NOW.date() + timedelta(days=i % 90)}", "project"
        else:
            desc, typ = f"The user maintains {subject} in {value}", "user"
        body = f"{desc}.\n**Why:** stated in session {i}.\n**How to apply:** keep {value} for {subject}.\n"
        return make_record(f"r-{i:06d}", typ, desc, body), (value if kind else None)

    i = 0
    while len(out) < size:
        roll = rng.random()
        subject = rng.choice(subjects)
        base, held = fact(i, subject)
        out.append(base)
        i += 1
        if len(out) >= size:
            break
        name = f"r-{i:06d}"
        if roll < 0.05:
            out.append(make_record(name, base.type, base.description, base.body))
            planted.duplicates += 1
            planted.pairs.append(("duplicate", name, base.name))
        elif roll < 0.10:
            reworded = base.description.replace("Always run", "Run").replace(" before pushing", " before every push")
            out.append(make_record(name, base.type, reworded, base.body))
            planted.rewordings += 1
            planted.pairs.append(("rewording", name, base.name))
        elif roll < 0.14 and held is not None and any(ch.isdigit() for ch in held):
            new_value = _value(rng)
            while new_value == held or not any(ch.isdigit() for ch in new_value):
                new_value = _value(rng)
            desc = f"{subject.capitalize()} no longer uses {held}; it moved to {new_value}"
            out.append(make_record(name, base.type, desc, f"{desc}.\n"))
            planted.supersessions += 1
            planted.pairs.append(("supersession", name, base.name))
        elif roll < 0.17:
            desc = f"Freeze on {subject} until {(NOW - timedelta(days=10)).date()}"
            out.append(make_record(name, "project", desc, f"{desc}.\n",
                                   expires=(NOW - timedelta(days=10)).date().isoformat()))
            planted.expired += 1
        else:
            continue
        i += 1
    recs = out[:size]
    # Names by a seeded shuffle: a twin extracted weeks after its base gets a name of its own,
    # not the one next to its base, so no batching by name can see the two together by luck.
    order = list(range(len(recs)))
    rng.shuffle(order)
    rename = {r.name: f"r-{order[k]:06d}" for k, r in enumerate(recs)}
    recs = [r.replace(name=rename[r.name]) for r in recs]
    planted.pairs = [(kind, rename[a], rename[b]) for kind, a, b in planted.pairs if a in rename]
    return recs, planted


def build(directory: Path, size: int) -> tuple[list[Record], Planted]:
    """The set committed as extraction would leave it: the supersessions a day after the rest
    (a supersession needs a strictly newer record)."""
    recs, planted = records(size)
    newer = {a for kind, a, _ in planted.pairs if kind == "supersession"}
    MemoryStore.init(directory)
    with fsync_off():
        MemoryStore(directory, clock=lambda: NOW - timedelta(days=1)).commit(
            Change(add=[r for r in recs if r.name not in newer]))
        MemoryStore(directory, clock=lambda: NOW).commit(Change(add=[r for r in recs if r.name in newer]))
    return recs, planted


def context() -> Context:
    return Context(config=default_config(env={"HOME": "/nonexistent"}), model=OfflineModel(), ledger=None,
                   clock=lambda: NOW)


def clear_caches() -> int:
    """Empty every ``functools.lru_cache`` in ``dreamd`` and ``memory`` (the planner memoises
    gists and clauses by text, the tokenizer stems by word), so a row measures a cold dream;
    returns how many caches were cleared."""
    cleared = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith(("dreamd.", "memory.")):
            continue
        for value in vars(module).values():
            clear = getattr(value, "cache_clear", None)
            if callable(clear):
                clear()
                cleared += 1
    return cleared


def _old_batches(inputs: Sequence[Any], entries: Sequence[Any], ctx: Context, memory_dir: Path,
                 **_: Any) -> dreamd.jobs.work.DreamBatches:
    """The batching before issue 23: every record, in type and name order, cut every PLAN_BATCH."""
    return dreamd.jobs.work.DreamBatches(plan_batches(inputs, dreamd.jobs.work.PLAN_BATCH))


@contextmanager
def batching(kind: str) -> Iterator[None]:
    """Run the dream with the ``baseline`` or the ``candidates`` batching."""
    current = dreamd.jobs.work.dream_batches
    if kind == "baseline":
        dreamd.jobs.work.dream_batches = _old_batches  # type: ignore[assignment]
    try:
        yield
    finally:
        dreamd.jobs.work.dream_batches = current  # type: ignore[assignment]


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    value = fn()
    return (time.perf_counter() - t0) * 1000.0, value


def found(plan: Sequence[Any], planted: Planted) -> dict[str, Any]:
    """How many planted pairs the plan merged (both names among one op's sources)."""
    together: dict[str, int] = {}
    for k, op in enumerate(plan):
        if op.result is not None:
            for n in op.source_names:
                together[n] = k
    def merged(kind: str) -> tuple[int, int]:
        pairs = [p for p in planted.pairs if p[0] in kind.split("+")]
        hit = sum(1 for _, a, b in pairs if a in together and together.get(b) == together[a])
        return hit, len(pairs)
    dup_hit, dup_all = merged("duplicate+rewording")
    sup_hit, sup_all = merged("supersession")
    return {"duplicates_merged": dup_hit, "duplicates_planted": dup_all,
            "duplicates_found": dup_hit / max(dup_all, 1),
            "supersessions_merged": sup_hit, "supersessions_planted": sup_all,
            "supersessions_found": sup_hit / max(sup_all, 1)}


def retention(before: Sequence[Record], after: MemoryStore) -> float:
    """Share of the clauses of ``before`` (expired records aside) a record after still says."""
    today = NOW.date().isoformat()
    pool = [clause_units(c) for _, r in after.records() for c in clauses(r.description, r.body)]
    by_word: dict[str, list[int]] = {}
    for k, units in enumerate(pool):
        for u in set(units):
            by_word.setdefault(u, []).append(k)
    total = kept = 0
    for rec in before:
        if rec.expires is not None and str(rec.expires) < today:
            continue
        for c in clauses(rec.description, rec.body):
            total += 1
            units = clause_units(c)
            near = min((by_word.get(u, []) for u in units), key=len, default=range(len(pool)))
            kept += said_by(c, [pool[k] for k in near])
    return kept / max(total, 1)


def measure(parent: Path, size: int, iterations: int, kinds: Sequence[str]) -> list[dict[str, Any]]:
    src = parent / f"set-{size}"
    recs, planted = build(src, size)
    with batching("candidates"):
        dream(src, context(), force=True, dry_run=True)  # the first look at a just-written set is not a row
    got: dict[str, dict[str, list[float]]] = {k: {"read": [], "plan": [], "warm": [], "dream": []} for k in kinds}
    last: dict[str, Any] = {}
    for it in range(iterations):
        for kind in kinds:
            m = got[kind]
            with batching(kind):
                ms, _ = timed(lambda: MemoryStore(src).records())
                m["read"].append(ms)
                clear_caches()
                ms, result = timed(lambda: dream(src, context(), force=True, dry_run=True))
                assert result.status == "dry-run", result
                m["plan"].append(ms)
                ms, _ = timed(lambda: dream(src, context(), force=True, dry_run=True))
                m["warm"].append(ms)
                copy = parent / f"copy-{size}-{kind}-{it}"
                shutil.copytree(src, copy, symlinks=True)
                clear_caches()
                with fsync_off():
                    ms, applied = timed(partial(dream, copy, context(), force=True))
                assert applied.status in ("applied", "nothing"), applied
                m["dream"].append(ms)
            if it == iterations - 1:
                last[kind] = {"plan": applied.plan, "retention": retention(recs, MemoryStore(copy))}
            shutil.rmtree(copy)
    shutil.rmtree(src)
    rows = []
    for kind in kinds:
        m = got[kind]
        plan = last[kind]["plan"]
        rows.append({
            "size": size,
            "batching": kind,
            "iterations": iterations,
            "read_ms_p50": statistics.median(m["read"]),
            "plan_ms_p50": statistics.median(m["plan"]),
            "plan_ms_max": max(m["plan"]),
            "plan_warm_ms_p50": statistics.median(m["warm"]),
            "dream_ms_p50": statistics.median(m["dream"]),
            "dream_ms_p95": pct(m["dream"], 0.95),
            "plan_per_record_ms": statistics.median(m["plan"]) / size,
            "planted": planted.counts(),
            "operations": len(plan),
            "merges": sum(1 for op in plan if op.result is not None),
            "drops": sum(1 for op in plan if op.result is None),
            **found(plan, planted),
            "retention": last[kind]["retention"],
        })
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="sizes 1000,2000, 2 iterations")
    ap.add_argument("--sizes", default=None, help="comma-separated record counts (default 1000,10000)")
    ap.add_argument("--iterations", type=int, default=None, help="default 3")
    ap.add_argument("--no-baseline", action="store_true", help="skip the old batching (it is slow at 10,000)")
    ap.add_argument("--dir", type=Path, default=None, help="parent directory for the sets (default: a temp dir)")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "dream.json")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in (args.sizes or ("1000,2000" if args.quick else "1000,10000")).split(",")]
    iterations = args.iterations or (2 if args.quick else 3)
    kinds = ["candidates"] if args.no_baseline else ["baseline", "candidates"]
    logging_before = structlog.get_config()  # put back at the end: a caller's (or a test's) logging is theirs
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    parent = Path(tempfile.mkdtemp(prefix="dreamd-bench-dream-", dir=args.dir))
    rows: list[dict[str, Any]] = []
    print(f"{'records':>7} {'batching':<10} {'read':>9} {'plan':>10} {'warm':>10} {'dream':>10} "
          f"{'dups merged':>16} {'supersessions':>14} {'drops':>9} {'retention':>9}")
    try:
        warm = parent / "warm-up"  # imports and compiled patterns: not part of any row
        build(warm, 200)
        dream(warm, context(), force=True, dry_run=True)
        shutil.rmtree(warm)
        for size in sizes:
            for row in measure(parent, size, iterations, kinds):
                rows.append(row)
                p = row["planted"]
                print(
                    f"{size:>7} {row['batching']:<10} {row['read_ms_p50']:7.0f}ms {row['plan_ms_p50']:8.0f}ms "
                    f"{row['plan_warm_ms_p50']:8.0f}ms {row['dream_ms_p50']:8.0f}ms "
                    f"{row['duplicates_merged']:>5}/{row['duplicates_planted']:<4} {row['duplicates_found']:5.1%} "
                    f"{row['supersessions_merged']:>4}/{row['supersessions_planted']:<4} "
                    f"{row['drops']:>4}/{p['expired']:<4} {row['retention']:9.4f}",
                    flush=True,
                )
    finally:
        shutil.rmtree(parent, ignore_errors=True)
        structlog.configure(**logging_before)
    verdicts = []
    for row in rows:
        if row["batching"] != "candidates" or row["size"] != max(sizes):
            continue
        checks = {
            f"duplicates merged >= {TARGET_FOUND:.0%}": row["duplicates_found"] >= TARGET_FOUND,
            f"cold plan <= {TARGET_PLAN_MS / 1000:.0f} s": row["plan_ms_p50"] <= TARGET_PLAN_MS,
            "retention 1.0": row["retention"] == 1.0,
        }
        for what, ok in checks.items():
            verdicts.append({"size": row["size"], "target": what, "met": ok})
            note = "" if row["size"] >= TARGET_SIZE else f" (target is at {TARGET_SIZE:,} records)"
            print(f"{row['size']:>7} records: {what}: {'met' if ok else 'MISSED'}{note}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load": os.getloadavg(),
        "rows": rows,
        "targets": verdicts,
    }, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
