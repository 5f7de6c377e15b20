"""Latency of one commit (one new record) into sets of 100, 1,000 and 10,000 records, against a
floor measured in the same run.

The floor is the same durable I/O with no logic: write the record file (temp + fsync + link +
dir fsync), write MEMORY.md of the store's size (temp + fsync + rename), hard-link the old
manifest into a history directory (+ fsync of it), write manifest bytes of the store's size
(temp + fsync + rename + dir fsync). Store commits and floor iterations alternate in the same
directory so both see the same disk, cache and load; floor files are removed (untimed) after
each iteration. Target: store p50 at 10,000 records <= 2x the floor's p50.

The sets are built once per size with one big commit, with fsync switched off for the build only
(the build is setup, not what is measured), then ``os.sync()``.

Usage: ``python benchmarks/bench_store.py [--quick] [--sizes 100,1000,10000] [--out PATH]
[--dir PARENT] [--profile]``. Prints a table; writes JSON (default
``benchmarks/results/store.json``).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import platform
import pstats
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.stats import pct  # noqa: E402
from memory.fsutil import fsync_dir  # noqa: E402
from memory.store.records import make_record, render_record  # noqa: E402
from memory.store.transaction import HISTORY, INDEX, MANIFEST, Change, MemoryStore  # noqa: E402

TARGET_RATIO = 2.0


@contextlib.contextmanager
def fsync_off() -> Iterator[None]:
    real = os.fsync
    os.fsync = lambda fd: None
    try:
        yield
    finally:
        os.fsync = real
        os.sync()


def make(i: int, tag: str = "r") -> Any:
    return make_record(
        f"{tag}-{i:06d}",
        ("user", "feedback", "project", "reference")[i % 4],
        f"Fact number {i}: the user prefers option {i % 7} when working on module {i % 31}",
        f"Fact {i} in detail.\n**Why:** benchmark record.\n**How to apply:** always, case {i}.\n",
    )


def build(directory: Path, size: int) -> MemoryStore:
    store = MemoryStore.init(directory)
    with fsync_off():
        store.commit(Change(add=[make(i) for i in range(size)]))
    return store


def _write_temp(directory: Path, data: bytes) -> Path:
    tmp = directory / f".floor-{secrets.token_hex(8)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    return tmp


def floor_once(directory: Path, record: bytes, index_size: int, manifest_size: int) -> tuple[float, list[Path]]:
    """The commit's durable I/O with no logic; returns (seconds, files to clean up)."""
    hist = directory / HISTORY
    index_bytes = b"i" * index_size
    manifest_bytes = b"m" * manifest_size
    final = directory / f"floor-{secrets.token_hex(5)}.bin"
    hist_link = hist / f"floor-manifest-{secrets.token_hex(5)}.json"
    index_target = directory / "floor-index.bin"
    manifest_target = directory / "floor-manifest.bin"
    if not manifest_target.exists():
        manifest_target.write_bytes(manifest_bytes)
    t0 = time.perf_counter()
    tmp = _write_temp(directory, record)
    os.link(tmp, final)
    os.unlink(tmp)
    fsync_dir(directory)
    tmp = _write_temp(directory, index_bytes)
    os.replace(tmp, index_target)
    os.link(manifest_target, hist_link)
    fsync_dir(hist)
    tmp = _write_temp(directory, manifest_bytes)
    os.replace(tmp, manifest_target)
    fsync_dir(directory)
    elapsed = time.perf_counter() - t0
    return elapsed, [final, hist_link]


PHASES = ("locked", "verified", "files_written", "index_written", "history_linked", "manifest_replaced", "cleaned")


class StepClock:
    """The store's ``fault`` hook used as a stopwatch: time spent reaching each protocol step."""

    def __init__(self) -> None:
        self.last = 0.0
        self.spent: dict[str, list[float]] = {p: [] for p in PHASES}

    def start(self) -> None:
        self.last = time.perf_counter()

    def __call__(self, step: str) -> None:
        now = time.perf_counter()
        self.spent[step].append(now - self.last)
        self.last = now


def measure(parent: Path, size: int, iterations: int, profile: bool) -> dict[str, Any]:
    directory = parent / f"set-{size}"
    t0 = time.perf_counter()
    store = build(directory, size)
    build_s = time.perf_counter() - t0
    steps = StepClock()
    store = MemoryStore(directory, fault=steps)
    store.read()
    store_times: list[float] = []
    floor_times: list[float] = []
    profiler = cProfile.Profile() if profile else None
    for k in range(iterations):
        rec = make(size + k, tag="new")
        t = time.perf_counter()
        steps.start()
        if profiler is not None:
            profiler.enable()
        store.commit(Change(add=[rec], actor="job"))
        if profiler is not None:
            profiler.disable()
        store_times.append(time.perf_counter() - t)
        index_size = (directory / INDEX).stat().st_size
        manifest_size = (directory / MANIFEST).stat().st_size
        elapsed, cleanup = floor_once(directory, render_record(rec), index_size, manifest_size)
        floor_times.append(elapsed)
        for p in cleanup:
            p.unlink()
    for leftover in ("floor-index.bin", "floor-manifest.bin"):
        with contextlib.suppress(FileNotFoundError):
            (directory / leftover).unlink()
    row: dict[str, Any] = {
        "records": size,
        "iterations": iterations,
        "build_s": round(build_s, 3),
        "manifest_bytes": (directory / MANIFEST).stat().st_size,
        "index_bytes": (directory / INDEX).stat().st_size,
        "store_p50_ms": round(statistics.median(store_times) * 1000, 3),
        "store_p99_ms": round(pct(store_times, 0.99) * 1000, 3),
        "floor_p50_ms": round(statistics.median(floor_times) * 1000, 3),
        "floor_p99_ms": round(pct(floor_times, 0.99) * 1000, 3),
    }
    row["ratio_p50"] = round(row["store_p50_ms"] / row["floor_p50_ms"], 2)
    # Median time to reach each step from the previous one (step names: DESIGN §2.3).
    row["phases_p50_ms"] = {p: round(statistics.median(v) * 1000, 3) for p, v in steps.spent.items() if v}
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
        row["profile_top"] = out.getvalue()
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer iterations (30 instead of 200)")
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--iterations", type=int, default=0)
    parser.add_argument("--dir", type=Path, default=None, help="parent directory for the sets (default: a temp dir)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "store.json")
    parser.add_argument("--profile", action="store_true", help="cProfile the store commits and print the top")
    args = parser.parse_args(argv)
    iterations = args.iterations or (30 if args.quick else 200)
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="dreamd-bench-", dir=args.dir) as tmp:
        for size in sizes:
            rows.append(measure(Path(tmp), size, iterations, args.profile))
    header = f"{'records':>8} {'iters':>5} {'store p50':>10} {'store p99':>10} {'floor p50':>10} {'floor p99':>10} {'p50 ratio':>9} {'manifest':>10}"
    print(header)
    for r in rows:
        print(
            f"{r['records']:>8} {r['iterations']:>5} {r['store_p50_ms']:>8.2f}ms {r['store_p99_ms']:>8.2f}ms "
            f"{r['floor_p50_ms']:>8.2f}ms {r['floor_p99_ms']:>8.2f}ms {r['ratio_p50']:>8.2f}x {r['manifest_bytes']:>9}B"
        )
    print("\nmedian ms spent reaching each commit step: " + " / ".join(PHASES))
    for r in rows:
        print(f"{r['records']:>8} " + " ".join(f"{r['phases_p50_ms'].get(p, 0):>7.2f}" for p in PHASES))
    largest = max(rows, key=lambda r: r["records"])
    met = largest["ratio_p50"] <= TARGET_RATIO
    print(f"target: p50 at {largest['records']} records <= {TARGET_RATIO:g}x floor: {'met' if met else 'MISSED'} ({largest['ratio_p50']}x)")
    for r in rows:
        if "profile_top" in r:
            print(f"\n--- profile, {r['records']} records ---\n{r.pop('profile_top')}")
    result = {
        "benchmark": "store_commit_one_record",
        "quick": args.quick,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "target": f"p50 at the largest set <= {TARGET_RATIO:g}x floor p50",
        "target_met": met,
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
