"""Daemon benchmark: pickup latency, end-to-end latency under load, throughput, idle cost.

Runs the real daemon (``python -m dreamd run``, offline model) as a child process against a
throw-away spool and memory directories, submits real Claude Code transcripts from
``../shared/data/claude_code`` through ``memory.client.submit`` and reads the daemon's JSON log
for when each job was claimed and finished. Prints a table and writes
``benchmarks/results/daemon.json``.

    python benchmarks/bench_daemon.py            # full: targets as in the brief
    python benchmarks/bench_daemon.py --quick    # a few seconds per row

Rows:
* pickup: submit → ``job.claimed`` (one job at a time, daemon idle). Target p50 ≤ 50 ms.
* e2e: submit → ``job.done`` (committed) at a steady 20 jobs/s into 8 directories.
* throughput: N extraction jobs into 8 directories, all queued, daemon started after.
  Target ≥ 50 jobs/s. The real transcripts hold nothing the offline model keeps, so each of
  these jobs only advances a cursor: the easy case.
* throughput_commit: the same, but every job is a short generated session stating two
  lasting facts of its own, so every job commits records (the row says how many landed).
* idle: 1,000 managed directories, nothing to do: CPU seconds and RSS. Target ≤ 1 % of a
  core, ≤ 100 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.stats import pct  # noqa: E402

DATA = Path(os.environ.get("DREAMD_SHARED_DATA", REPO.parent / "shared" / "data")) / "claude_code"
TRANSCRIPTS = (
    "marot__spotter__short.jsonl",
    "yaleh__meta-cc__sample-session.jsonl",
    "simonw__claude-code-transcripts__sample_session.jsonl",
    "marot__spotter__tool_heavy.jsonl",
    "daaain__claude-code-log__representative_messages.jsonl",
    "yaleh__meta-cc__session-with-errors.jsonl",
)
CLK_TCK = os.sysconf("SC_CLK_TCK")


def _ts(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class Bench:
    def __init__(self, root: Path, *, dirs: int, workers: int = 2, tick: str = "30s",
                 texts: list[str] | None = None) -> None:
        from memory.store.transaction import MemoryStore

        self.root = root
        self.spool = root / "spool"
        self.mem = root / "mem"
        self.mem.mkdir(parents=True)
        self.dirs = []
        for i in range(dirs):
            d = self.mem / f"p{i:04d}"
            MemoryStore.init(d)
            self.dirs.append(d)
        self.config = root / "dreamd.toml"
        self.config.write_text(
            f'[daemon]\nspool = "{self.spool}"\nroots = ["{self.mem}/*"]\nworkers = {workers}\n'
            f'tick = "{tick}"\nlog_format = "json"\n[gates]\nthreshold = 100000\n',
            encoding="utf-8",
        )
        self.log = root / "daemon.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.texts = texts or [(DATA / t).read_text(encoding="utf-8") for t in TRANSCRIPTS]

    def start(self) -> None:
        env = {**os.environ, "XDG_STATE_HOME": str(self.root / "state"), "PYTHONPATH": str(REPO)}
        env.pop("NOTIFY_SOCKET", None)
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "dreamd", "run", "--config", str(self.config)],
                cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
            )
        self.wait(lambda: any(e["event"] == "daemon.ready" for e in self.events()), 120)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def events(self) -> list[dict[str, Any]]:
        out = []
        for line in self.log.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
        return out

    def by_job(self, event: str) -> dict[str, float]:
        return {e["job_id"]: _ts(e["timestamp"]) for e in self.events() if e.get("event") == event}

    @staticmethod
    def wait(pred: Any, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if pred():
                return
            time.sleep(0.05)
        raise TimeoutError(f"benchmark wait timed out after {timeout}s")

    def submit(self, i: int) -> tuple[str, float]:
        from memory.client import submit

        t = time.time()
        job = submit(self.texts[i % len(self.texts)], memory_dir=self.dirs[i % len(self.dirs)],
                     session_id=f"bench-{i}", spool=self.spool)
        return job, t

    def cpu_seconds(self) -> float:
        assert self.proc is not None
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def rss_mb(self) -> float:
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")


def bench_pickup(root: Path, n: int) -> dict[str, Any]:
    b = Bench(root, dirs=1)
    try:
        b.start()
        submitted: dict[str, float] = {}
        for i in range(n):
            job, t = b.submit(i)
            submitted[job] = t
            b.wait(lambda j=job: j in b.by_job("job.done"), 30)
            time.sleep(0.05)
        claimed = b.by_job("job.claimed")
        lat = [(claimed[j] - t) * 1000 for j, t in submitted.items()]
    finally:
        b.stop()
    return {"row": "pickup latency (submit → claimed)", "n": n, "p50_ms": pct(lat, 0.5),
            "p99_ms": pct(lat, 0.99), "target": "p50 ≤ 50 ms"}


def bench_e2e(root: Path, rate: float, seconds: float) -> dict[str, Any]:
    b = Bench(root, dirs=8)
    try:
        b.start()
        submitted: dict[str, float] = {}
        start = time.monotonic()
        n = int(rate * seconds)
        for i in range(n):
            delay = start + i / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            job, t = b.submit(i)
            submitted[job] = t
        b.wait(lambda: len(b.by_job("job.done")) >= n, 120)
        done = b.by_job("job.done")
        lat = [(done[j] - t) * 1000 for j, t in submitted.items()]
    finally:
        b.stop()
    return {"row": f"end-to-end (submit → committed) at {rate:g} jobs/s for {seconds:g} s", "n": n,
            "p50_ms": pct(lat, 0.5), "p99_ms": pct(lat, 0.99), "target": "-"}


def bench_throughput(root: Path, n: int, workers: int) -> dict[str, Any]:
    b = Bench(root, dirs=8, workers=workers)
    try:
        for i in range(n):
            b.submit(i)
        b.start()
        b.wait(lambda: len(b.by_job("job.done")) >= n, 600)
        claimed, done = b.by_job("job.claimed"), b.by_job("job.done")
        span = max(done.values()) - min(claimed.values())
        failed = sum(1 for e in b.events() if e.get("event") in ("job.failed", "job.deferred", "job.rejected"))
    finally:
        b.stop()
    return {"row": f"throughput: {n} extraction jobs into 8 dirs, offline model, {workers} workers", "n": n,
            "jobs_per_s": n / span, "seconds": span, "not_done": failed, "target": "≥ 50 jobs/s"}


def _word(i: int, salt: int) -> str:
    """A made-up word unique to (i, salt): facts of different jobs share no content word."""
    rng = random.Random(i * 7919 + salt)
    return "".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(4))


def committing_session(i: int) -> str:
    """A short plain-text session stating two facts new to its directory (unique per i)."""
    svc, branch, book, folder = (_word(i, k) for k in range(4))
    return (
        f"user: Remember that the {svc} service is deployed from the {branch} branch.\n"
        "assistant: Noted.\n"
        f"user: Please remember that the {book} runbook lives in docs/{folder}/{book}.md.\n"
        "assistant: Got it.\n"
    )


def bench_throughput_commit(root: Path, n: int, workers: int) -> dict[str, Any]:
    from memory.store.transaction import MemoryStore

    b = Bench(root, dirs=8, workers=workers, texts=[committing_session(i) for i in range(n)])
    try:
        for i in range(n):
            b.submit(i)
        b.start()
        b.wait(lambda: len(b.by_job("job.done")) >= n, 900)
        claimed, done = b.by_job("job.claimed"), b.by_job("job.done")
        span = max(done.values()) - min(claimed.values())
        failed = sum(1 for e in b.events() if e.get("event") in ("job.failed", "job.deferred", "job.rejected"))
    finally:
        b.stop()
    records = sum(len(MemoryStore(d).read().records) for d in b.dirs)
    return {"row": f"throughput_commit: {n} jobs that each commit records, 8 dirs, {workers} workers",
            "n": n, "jobs_per_s": n / span, "seconds": span, "not_done": failed,
            "records": records, "target": "every job commits"}


def bench_idle(root: Path, dirs: int, seconds: float) -> dict[str, Any]:
    b = Bench(root, dirs=dirs)
    try:
        b.start()
        # let the start-up reconcile of every directory finish before measuring
        b.wait(lambda: b.proc is not None and _settled(b), 300)
        cpu0, t0 = b.cpu_seconds(), time.monotonic()
        time.sleep(seconds)
        cpu, span = b.cpu_seconds() - cpu0, time.monotonic() - t0
        rss = b.rss_mb()
    finally:
        b.stop()
    return {"row": f"idle: {dirs} managed dirs for {seconds:g} s", "n": dirs, "cpu_s": cpu,
            "cpu_pct_of_core": 100 * cpu / span, "rss_mb": rss, "target": "≤ 1 % of a core, ≤ 100 MB"}


def _settled(b: Bench) -> bool:
    c1 = b.cpu_seconds()
    time.sleep(1.0)
    return b.cpu_seconds() - c1 < 0.05


def merge_rows(order: list[str], fresh: dict[str, dict[str, Any]], previous: dict[str, Any] | None,
               now: str, quick: bool) -> list[dict[str, Any]]:
    """The rows to write: each fresh row stamped with this run's time and ``--quick``; a row not
    re-run (``--only``) kept from ``previous`` with the time and mode *it* was measured in (a
    row from a file written before rows carried their own stamp takes that file's
    ``meta.measured_at``), so an old figure never appears under a new timestamp."""
    old_meta = (previous or {}).get("meta", {})
    kept = {r["key"]: r for r in (previous or {}).get("rows", []) if "key" in r}
    rows = []
    for key in order:
        if key in fresh:
            rows.append({**fresh[key], "key": key, "measured_at": now, "quick": quick})
        elif key in kept:
            rows.append({"measured_at": old_meta.get("measured_at"), "quick": old_meta.get("quick"), **kept[key]})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, a few seconds per row")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--only", default="pickup,e2e,throughput,throughput_commit,idle",
                    help="comma-separated rows to run; other rows already in --out are kept")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "daemon.json")
    args = ap.parse_args(argv)
    q = args.quick
    only = set(args.only.split(","))
    runs: dict[str, Callable[[Path], dict[str, Any]]] = {
        "pickup": lambda b: bench_pickup(b, 20 if q else 100),
        "e2e": lambda b: bench_e2e(b, 20.0, 5.0 if q else 60.0),
        "throughput": lambda b: bench_throughput(b, 300 if q else 2000, args.workers),
        "throughput_commit": lambda b: bench_throughput_commit(b, 300 if q else 2000, args.workers),
        "idle": lambda b: bench_idle(b, 200 if q else 1000, 10.0 if q else 60.0),
    }
    previous: dict[str, Any] | None = None
    if args.out.exists() and only != set(runs):
        previous = json.loads(args.out.read_text())
    fresh: dict[str, dict[str, Any]] = {}
    base = Path(tempfile.mkdtemp(prefix="dreamd-bench-"))
    try:
        for key, fn in runs.items():
            if key in only:
                fresh[key] = fn(base / key)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    now = datetime.now().astimezone().isoformat(timespec="seconds")
    rows = merge_rows(list(runs), fresh, previous, now, q)
    print(f"{'row':<75} {'result':<45} target")
    for r in rows:
        if "p50_ms" in r:
            res = f"p50 {r['p50_ms']:.1f} ms  p99 {r['p99_ms']:.1f} ms  (n={r['n']})"
        elif "jobs_per_s" in r:
            res = f"{r['jobs_per_s']:.1f} jobs/s ({r['seconds']:.1f} s)"
            if "records" in r:
                res += f", {r['records']} records"
        else:
            res = f"{r['cpu_s']:.2f} CPU s ({r['cpu_pct_of_core']:.2f} %), RSS {r['rss_mb']:.0f} MB"
        kept = "" if r["key"] in fresh else f"  (kept: measured {r['measured_at']})"
        print(f"{r['row']:<75} {res:<45} {r['target']}{kept}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"quick": q, "cpus": os.cpu_count(), "python": sys.version.split()[0],
            "measured_at": now, "rows_measured": sorted(fresh)}
    args.out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
