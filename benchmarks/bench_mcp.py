"""``dreamd mcp`` start-up and recall round trip, next to floors measured in the same run.

1. **Start-up**: wall time from spawning the process to the ``initialize`` answer on stdout,
   for ``python -m dreamd mcp --memory-dir D`` and for a *bare* server: a process that only
   imports the MCP SDK's low-level ``Server`` and stdio transport and answers ``initialize``
   (the SDK's import is the floor; the target says nothing else heavy may load before the
   first request). Runs alternate, with bytecode caching on in a private
   ``PYTHONPYCACHEPREFIX`` as an installed package would have. Target: median ≤ 1.5 × bare.
2. **Recall round trip** at 1,000 records: one server, started once and warmed with one call
   (the first recall builds the keyword index), then ``tools/call recall`` with varied queries
   over the SDK's own stdio client. Floors in the same run: a ``ping`` round trip on the same
   session (transport only) and ``memory.recall()`` in process with a long-lived store, as the
   server keeps one (selection and record reads only). Target:
   recall p50 ≤ 20 ms.

3. **Pipelined calls** (issue 21 §2): one client writes 5,000 ``tools/call recall`` requests
   without waiting for answers (a thread reads them as they come). The row is the server's
   peak RSS (``VmHWM``) once every answer is in, against its peak after the same 5,000 calls
   sent one at a time just before, in the same process (the baseline: what its caches cost).
   Target: the pipelined peak stays within 1.2 × the baseline (the server holds at most
   ``MAX_IN_FLIGHT`` requests at once).

The 1,000 records are synthetic (word lists below), built in one commit.

Run: ``python benchmarks/bench_mcp.py [--quick]``. Prints a table and writes
``benchmarks/results/mcp.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.stats import pct  # noqa: E402
from memory.retrieval.recall import recall  # noqa: E402
from memory.store.records import make_record  # noqa: E402
from memory.store.transaction import Change, MemoryStore  # noqa: E402

TOPICS = ["deploy", "database", "editor", "review", "testing", "billing", "search", "cache", "login", "queue",
          "backup", "metrics", "release", "docs", "schema", "invoice", "mobile", "theme", "export", "alerts"]
VERBS = ["prefers", "avoids", "decided", "tracks", "documents", "migrates", "pins", "reviews", "splits", "merges"]
NOUNS = ["tabs", "postgres", "staging", "nightly builds", "feature flags", "dark mode", "rate limits", "retries",
         "snapshots", "dashboards", "tickets", "timeouts", "fixtures", "changelogs", "migrations", "webhooks"]
TYPES = ("user", "feedback", "project", "reference")

BARE_SERVER = """
import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
server = Server("bare")
async def main():
    async with stdio_server() as (r, w):
        await server.run(r, w, server.create_initialization_options())
anyio.run(main)
"""
INITIALIZE = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}).encode() + b"\n"


def _stats(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "min_ms": round(min(values) * 1000, 3),
        "p50_ms": round(pct(values, 0.5) * 1000, 3),
        "p99_ms": round(pct(values, 0.99) * 1000, 3),
        "mean_ms": round(statistics.fmean(values) * 1000, 3),
    }


def build_set(memory_dir: Path, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    store = MemoryStore.init(memory_dir)
    records = []
    for i in range(n):
        topic, verb, noun = rng.choice(TOPICS), rng.choice(VERBS), rng.choice(NOUNS)
        body = "\n".join(
            f"The team {rng.choice(VERBS)} {rng.choice(NOUNS)} for {rng.choice(TOPICS)} work." for _ in range(rng.randint(2, 8))
        )
        records.append(make_record(f"{topic}-{i:04d}", TYPES[i % 4], f"{topic.title()}: {verb} {noun}", body))
    store.commit(Change(add=records))


def write_config(root: Path) -> Path:
    config = root / "config.toml"
    config.write_text(f'[daemon]\nroots = ["{root}/roots/*/.memory"]\nspool = "{root}/spool"\n', encoding="utf-8")
    return config


def _env(root: Path, config: Path) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root / "home"),
        "DREAMD_CONFIG": str(config),
        "PYTHONPATH": str(REPO),
        "PYTHONPYCACHEPREFIX": str(root / "pycache"),
    }
    return env


def time_to_initialize(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from spawn to the ``initialize`` answer; the process is then closed."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(INITIALIZE)
    proc.stdin.flush()
    buffer = b""
    while b"\n" not in buffer:
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        if not ready:
            proc.kill()
            raise RuntimeError(f"{cmd[:3]}: no initialize answer in 60 s")
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            raise RuntimeError(f"{cmd[:3]}: exited before answering (code {proc.wait()})")
        buffer += chunk
    elapsed = time.perf_counter() - t0
    answer = json.loads(buffer.split(b"\n", 1)[0])
    if "result" not in answer:
        raise RuntimeError(f"initialize failed: {answer}")
    proc.stdin.close()
    proc.wait(timeout=30)
    proc.stdout.close()
    return elapsed


def bench_startup(root: Path, memory_dir: Path, env: dict[str, str], runs: int) -> dict[str, Any]:
    cmds = {
        "dreamd mcp": [sys.executable, "-m", "dreamd", "mcp", "--memory-dir", str(memory_dir)],
        "bare SDK server": [sys.executable, "-c", BARE_SERVER],
    }
    for cmd in cmds.values():  # fill the bytecode cache once
        time_to_initialize(cmd, env, root)
    times: dict[str, list[float]] = {label: [] for label in cmds}
    for _ in range(runs):
        for label, cmd in cmds.items():
            times[label].append(time_to_initialize(cmd, env, root))
    out = {label: _stats(values) for label, values in times.items()}
    out["ratio_p50"] = round(out["dreamd mcp"]["p50_ms"] / out["bare SDK server"]["p50_ms"], 3)
    out["ratio_min"] = round(out["dreamd mcp"]["min_ms"] / out["bare SDK server"]["min_ms"], 3)
    return out


def bench_recall(root: Path, memory_dir: Path, env: dict[str, str], calls: int) -> dict[str, Any]:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    rng = random.Random(11)
    queries = [f"what does the team do about {rng.choice(NOUNS)} in {rng.choice(TOPICS)}?" for _ in range(calls)]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "dreamd", "mcp", "--memory-dir", str(memory_dir)], env=env, cwd=str(root)
    )
    tool: list[float] = []
    ping: list[float] = []
    returned: list[int] = []

    async def run() -> None:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
                await s.initialize()
                await s.call_tool("recall", {"query": "warm up the index"})
                for q in queries:
                    t0 = time.perf_counter()
                    result = await s.call_tool("recall", {"query": q})
                    tool.append(time.perf_counter() - t0)
                    if result.is_error:
                        raise RuntimeError(result.content[0].text)
                    returned.append(len(result.structured_content["records"]))
                    t0 = time.perf_counter()
                    await s.send_ping()
                    ping.append(time.perf_counter() - t0)

    anyio.run(run)
    in_process: list[float] = []
    store = MemoryStore(memory_dir)  # long-lived, as the server keeps it
    recall(memory_dir, "warm up the index", store=store)
    for q in queries:
        t0 = time.perf_counter()
        recall(memory_dir, q, store=store)
        in_process.append(time.perf_counter() - t0)
    return {
        "recall tool round trip": _stats(tool),
        "ping round trip (transport floor)": _stats(ping),
        "memory.recall() in process": _stats(in_process),
        "mean_records_returned": round(statistics.fmean(returned), 2),
    }


def _hwm_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/<pid>/status")


def bench_pipelined(root: Path, memory_dir: Path, env: dict[str, str], calls: int) -> dict[str, Any]:
    """Peak RSS of one server answering ``calls`` pipelined recalls, and before them."""
    import threading

    proc = subprocess.Popen([sys.executable, "-m", "dreamd", "mcp", "--memory-dir", str(memory_dir)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=root)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    out = proc.stdout

    def request(i: int, query: str) -> bytes:
        body = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": query}}}
        return json.dumps(body).encode() + b"\n"

    buffer = b""

    def answers(n: int) -> None:
        nonlocal buffer
        got = 0
        while got < n:
            ready, _, _ = select.select([out], [], [], 300)
            if not ready:
                raise RuntimeError(f"pipelined: {got} of {n} answers after 300 s")
            chunk = os.read(out.fileno(), 1 << 20)
            if not chunk:
                raise RuntimeError(f"pipelined: server exited after {got} answers")
            buffer += chunk
            got += chunk.count(b"\n")

    proc.stdin.write(INITIALIZE)
    proc.stdin.flush()
    answers(1)
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n' + request(0, "warm up the index"))
    proc.stdin.flush()
    answers(1)
    idle = _hwm_kib(proc.pid)
    rng = random.Random(5)
    queries = [f"what about {rng.choice(NOUNS)} in {rng.choice(TOPICS)}?" for _ in range(calls)]
    t0 = time.perf_counter()
    for i, q in enumerate(queries, start=1):  # the same calls one at a time: what caches cost
        proc.stdin.write(request(-i, q))
        proc.stdin.flush()
        answers(1)
    sequential_s = time.perf_counter() - t0
    baseline = _hwm_kib(proc.pid)
    batch = b"".join(request(i, q) for i, q in enumerate(queries, start=1))

    def write() -> None:
        assert proc.stdin is not None
        proc.stdin.write(batch)
        proc.stdin.flush()

    writer = threading.Thread(target=write)
    t0 = time.perf_counter()
    writer.start()
    answers(calls)
    elapsed = time.perf_counter() - t0
    writer.join()
    peak = _hwm_kib(proc.pid)
    proc.stdin.close()
    proc.wait(timeout=60)
    out.close()
    return {"calls": calls, "idle_peak_mib": round(idle / 1024, 1), "baseline_peak_mib": round(baseline / 1024, 1),
            "pipelined_peak_mib": round(peak / 1024, 1), "ratio": round(peak / baseline, 3),
            "sequential_seconds": round(sequential_s, 2), "seconds": round(elapsed, 2)}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (5 start-ups, 100 recalls)")
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--pipelined-only", action="store_true", help="only the pipelined-calls row")
    parser.add_argument("--pipelined", type=int, default=5000, metavar="N", help="pipelined calls (5,000)")
    args = parser.parse_args()
    if args.pipelined_only:
        with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
            root = Path(tmp)
            memory_dir = root / "roots" / "app" / ".memory"
            build_set(memory_dir, args.records)
            row = bench_pipelined(root, memory_dir, _env(root, write_config(root)), args.pipelined)
        _print_pipelined(row)
        return 0
    runs, calls = (5, 100) if args.quick else (15, 400)
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        root = Path(tmp)
        memory_dir = root / "roots" / "app" / ".memory"
        build_set(memory_dir, args.records)
        config = write_config(root)
        env = _env(root, config)
        startup = bench_startup(root, memory_dir, env, runs)
        round_trip = bench_recall(root, memory_dir, env, calls)
        pipelined = bench_pipelined(root, memory_dir, env, args.pipelined)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    result = {
        "records": args.records,
        "startup": startup,
        "recall": round_trip,
        "pipelined": pipelined,
        "targets": {
            "pipelined_ratio_max": 1.2,
            "pipelined_met": pipelined["ratio"] <= 1.2,
            "startup_ratio_max": 1.5,
            "startup_met": startup["ratio_p50"] <= 1.5,
            "recall_p50_ms_max": 20.0,
            "recall_met": round_trip["recall tool round trip"]["p50_ms"] <= 20.0,
        },
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "load_1m": load},
    }
    print(f"start-up to initialize answered ({runs} alternating runs each)")
    print(f"{'':32} {'min':>10} {'p50':>10} {'p99':>10} {'mean':>10}")
    for label in ("dreamd mcp", "bare SDK server"):
        s = startup[label]
        print(f"{label:32} {s['min_ms']:>8.1f}ms {s['p50_ms']:>8.1f}ms {s['p99_ms']:>8.1f}ms {s['mean_ms']:>8.1f}ms")
    print(
        f"ratio p50: {startup['ratio_p50']:.2f}x (min: {startup['ratio_min']:.2f}x)  "
        f"target p50 <= 1.5x: {'met' if result['targets']['startup_met'] else 'MISSED'}"
    )
    print()
    print(f"round trips at {args.records} records ({calls} calls each)")
    print(f"{'':36} {'p50':>10} {'p99':>10} {'mean':>10}")
    for label in ("recall tool round trip", "ping round trip (transport floor)", "memory.recall() in process"):
        s = round_trip[label]
        print(f"{label:36} {s['p50_ms']:>8.2f}ms {s['p99_ms']:>8.2f}ms {s['mean_ms']:>8.2f}ms")
    print(
        f"recall p50 target <= 20 ms: {'met' if result['targets']['recall_met'] else 'MISSED'}"
        f"  (records returned per call: {round_trip['mean_records_returned']})"
    )
    print()
    _print_pipelined(pipelined)
    print(f"load average (1 min) at the end: {load}")
    out = REPO / "benchmarks" / "results" / "mcp.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out.relative_to(REPO)}")
    return 0


def _print_pipelined(row: dict[str, Any]) -> None:
    print(f"{row['calls']} pipelined recall calls: server peak RSS {row['pipelined_peak_mib']} MiB against "
          f"{row['baseline_peak_mib']} MiB after the same calls one at a time ({row['ratio']:.2f}x, target <= 1.2x: "
          f"{'met' if row['ratio'] <= 1.2 else 'MISSED'}; idle {row['idle_peak_mib']} MiB; "
          f"{row['seconds']} s pipelined, {row['sequential_seconds']} s one at a time)")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
