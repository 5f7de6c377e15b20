"""What one dream costs with the offline model: planning every batch and committing the plan,
against reading the same set (``store.records()``, every record file parsed), measured in the
same run on the same directory.

Each set has N records written the way extraction writes them: four types, a description and a
body with **Why:**/**How to apply:** lines, made-up subjects and values (so no record repeats
another by accident). Planted in it, drawn with fixed odds from a seeded generator: exact
duplicates (5 %), "reworded" duplicates (5 %; only the rule records' wording changes, the other
three kinds repeat their base exactly), explicit supersessions ("no longer …, moved to …", 4 %;
typed ``project``, so one joins its base only when the base is a project record) and expired
records (3 %); the rest are distinct facts, several about one subject. Measured, alternating so all see
the same load, each on a fresh store (what a daemon pays after a restart), after one untimed
dry run of the set (the page cache is warm):

- **read**: ``MemoryStore(d).records()``: the floor, since every dream reads every record.
- **plan**: ``dreamd.jobs.work.dream(..., dry_run=True)`` (gates off): lease, snapshot, every batch
  planned by the offline model through the strict answer gate; nothing is written. Cold: the
  planner's memo caches (gists and clauses by text, bounded LRU) are emptied first, as after a
  restart or when every record is new to the process.
- **warm**: the same dry run again at once (every record's gist already memoised, while the
  set fits the caches): what a long-running daemon pays to re-plan a set it planned before.
- **dream**: the same dream applied (cold), on a fresh copy of the set: plan plus one commit.

The dream is planned in batches of ``PLAN_BATCH`` records, so its cost should grow with N and
no faster. Target: plan per record at the largest size <= 1.5x plan per record at the smallest
(no superlinear step), and the merges found equal the planted duplicates and supersessions the
plan can see (a batch only sees its own records; the row reports both).

Usage: ``python benchmarks/bench_dream.py [--quick] [--sizes 500,2000,10000] [--iterations N]
[--dir PARENT] [--out PATH]``. Prints a table; writes JSON (default
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
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import structlog

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.bench_store import fsync_off  # noqa: E402
from benchmarks.stats import pct  # noqa: E402
from dreamd.config import default_config  # noqa: E402
from dreamd.jobs.work import Context, dream  # noqa: E402
from dreamd.models.offline.model import OfflineModel  # noqa: E402
from memory.store.records import Record, make_record  # noqa: E402
from memory.store.transaction import Change, MemoryStore  # noqa: E402

TARGET_SCALING = 1.5
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


def records(size: int, seed: int = 7) -> tuple[list[Record], Planted]:
    """``size`` records with duplicates, rewordings, supersessions and expired ones planted."""
    rng = random.Random(seed)
    out: list[Record] = []
    planted = Planted()
    subjects = [f"the {_word(rng)} {rng.choice(_TOOLS)}" for _ in range(max(size // 3, 1))]

    def fact(i: int, subject: str) -> Record:
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
        return make_record(f"r-{i:06d}", typ, desc, body)

    i = 0
    while len(out) < size:
        roll = rng.random()
        subject = rng.choice(subjects)
        base = fact(i, subject)
        out.append(base)
        i += 1
        if len(out) >= size:
            break
        if roll < 0.05:
            out.append(make_record(f"r-{i:06d}", base.type, base.description, base.body))
            planted.duplicates += 1
        elif roll < 0.10:
            reworded = base.description.replace("Always run", "Run").replace(" before pushing", " before every push")
            out.append(make_record(f"r-{i:06d}", base.type, reworded, base.body))
            planted.rewordings += 1
        elif roll < 0.14:
            new_value = _value(rng)
            desc = f"{subject.capitalize()} no longer uses its old setting; it moved to {new_value}"
            out.append(make_record(f"r-{i:06d}", "project", desc, f"{desc}.\n"))
            planted.supersessions += 1
        elif roll < 0.17:
            desc = f"Freeze on {subject} until {(NOW - timedelta(days=10)).date()}"
            out.append(make_record(f"r-{i:06d}", "project", desc, f"{desc}.\n",
                                   expires=(NOW - timedelta(days=10)).date().isoformat()))
            planted.expired += 1
        else:
            continue
        i += 1
    return out[:size], planted


def build(directory: Path, size: int) -> Planted:
    recs, planted = records(size)
    store = MemoryStore.init(directory)
    with fsync_off():
        store.commit(Change(add=recs))
    return planted


def context() -> Context:
    return Context(config=default_config(env={"HOME": "/nonexistent"}), model=OfflineModel(), ledger=None,
                   clock=lambda: NOW)


def clear_caches() -> int:
    """Empty every ``functools.lru_cache`` in ``dreamd.models`` (the planner memoises gists and
    clauses by text), so a row measures a cold dream; returns how many caches were cleared."""
    cleared = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("dreamd.models"):
            continue
        for value in vars(module).values():
            clear = getattr(value, "cache_clear", None)
            if callable(clear):
                clear()
                cleared += 1
    return cleared


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    value = fn()
    return (time.perf_counter() - t0) * 1000.0, value


def measure(parent: Path, size: int, iterations: int) -> dict[str, Any]:
    src = parent / f"set-{size}"
    planted = build(src, size)
    dream(src, context(), force=True, dry_run=True)  # the first look at a just-written set is not a row
    reads: list[float] = []
    plans: list[float] = []
    warm: list[float] = []
    dreams: list[float] = []
    ops = merges = drops = 0
    for k in range(iterations):
        ms, _ = timed(lambda: MemoryStore(src).records())
        reads.append(ms)
        clear_caches()
        ms, result = timed(lambda: dream(src, context(), force=True, dry_run=True))
        assert result.status == "dry-run", result
        plans.append(ms)
        ms, _ = timed(lambda: dream(src, context(), force=True, dry_run=True))
        warm.append(ms)
        copy = parent / f"copy-{size}-{k}"
        shutil.copytree(src, copy, symlinks=True)
        clear_caches()
        with fsync_off():
            ms, applied = timed(partial(dream, copy, context(), force=True))
        assert applied.status in ("applied", "nothing"), applied
        dreams.append(ms)
        ops = len(applied.plan)
        merges = sum(1 for op in applied.plan if op.result is not None)
        drops = sum(1 for op in applied.plan if op.result is None)
        shutil.rmtree(copy)
    shutil.rmtree(src)
    return {
        "size": size,
        "iterations": iterations,
        "read_ms_p50": statistics.median(reads),
        "plan_ms_p50": statistics.median(plans),
        "plan_ms_max": max(plans),
        "plan_warm_ms_p50": statistics.median(warm),
        "dream_ms_p50": statistics.median(dreams),
        "dream_ms_p95": pct(dreams, 0.95),
        "plan_per_record_ms": statistics.median(plans) / size,
        "plan_vs_read": statistics.median(plans) / max(statistics.median(reads), 1e-9),
        "planted": planted.__dict__,
        "operations": ops,
        "merges": merges,
        "drops": drops,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="sizes 500,2000, 3 iterations")
    ap.add_argument("--sizes", default=None, help="comma-separated record counts (default 500,2000,10000)")
    ap.add_argument("--iterations", type=int, default=None)
    ap.add_argument("--dir", type=Path, default=None, help="parent directory for the sets (default: a temp dir)")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "dream.json")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in (args.sizes or ("500,2000" if args.quick else "500,2000,10000")).split(",")]
    iterations = args.iterations or (3 if args.quick else 5)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    parent = Path(tempfile.mkdtemp(prefix="dreamd-bench-dream-", dir=args.dir))
    rows: list[dict[str, Any]] = []
    try:
        warm = parent / "warm-up"  # imports and compiled patterns: not part of any row
        build(warm, 200)
        dream(warm, context(), force=True, dry_run=True)
        shutil.rmtree(warm)
        for size in sizes:
            row = measure(parent, size, iterations)
            rows.append(row)
            p = row["planted"]
            print(
                f"{size:>6} records  read {row['read_ms_p50']:8.1f} ms  plan {row['plan_ms_p50']:8.1f} ms "
                f"({row['plan_per_record_ms']:.3f} ms/record, {row['plan_vs_read']:.1f}x read)  "
                f"warm {row['plan_warm_ms_p50']:8.1f} ms  "
                f"dream {row['dream_ms_p50']:8.1f} ms  ops {row['operations']} "
                f"(merges {row['merges']}, drops {row['drops']}; planted dup {p['duplicates']}, "
                f"reworded {p['rewordings']}, superseded {p['supersessions']}, expired {p['expired']})",
                flush=True,
            )
    finally:
        shutil.rmtree(parent, ignore_errors=True)
    first, last = rows[0], rows[-1]
    scaling = last["plan_per_record_ms"] / max(first["plan_per_record_ms"], 1e-9)
    met = scaling <= TARGET_SCALING
    print(
        f"scaling: plan per record at {last['size']} = {scaling:.2f}x that at {first['size']} "
        f"(target <= {TARGET_SCALING}x): {'met' if met else 'MISSED'}"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load": os.getloadavg(),
        "rows": rows,
        "scaling": scaling,
        "target_scaling": TARGET_SCALING,
        "met": met,
    }, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
