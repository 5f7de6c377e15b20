"""Claude Code hook latency, next to a bare interpreter start measured in the same run.

1. ``Stop`` on a ~30 MB Claude Code session (the largest real transcript in the shared data,
   repeated with fresh uuids until it passes 30 MB): the hook reads the file, keeps the
   conversation records, writes the job(s). Target: p50 ≤ 500 ms. Measured *cold* (the
   hook's prefix cache removed before every call: the first hook of a session, or the first
   after installing dreamd) and *warm* (one turn appended since the previous call: what every
   Stop of a long session costs).
2. ``UserPromptSubmit`` on a managed ``.memory`` of 1,000 records: the hook ranks the records
   against the prompt and prints a ``<relevant_memories>`` block. Target: p50 ≤ 3 × the p50
   of ``python -c pass``. Measured with the hook's keyword-index cache current, after a commit
   of one record (the cache reuses every unchanged record's terms), and with no cache at all
   (the first prompt ever: every name and description is tokenized).

Each case runs as Claude Code runs it, a fresh process with the payload on stdin, both as the
installed ``dreamd hook`` command and as ``python -m dreamd hook``, interleaved with
``python -c pass`` so machine load hits all of them alike. Bytecode caching is on (a private
``PYTHONPYCACHEPREFIX``), as for an installed package.

Run: ``.venv/bin/python benchmarks/bench_hook.py [--quick]``. Prints a table and writes
``benchmarks/results/hook.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.stats import pct  # noqa: E402
from memory.store.records import make_record  # noqa: E402
from memory.store.transaction import Change, MemoryStore  # noqa: E402

DATA = Path(os.environ.get("DREAMD_SHARED_DATA", REPO.parent / "shared" / "data"))
SOURCE = DATA / "claude_code" / "marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
TARGET_BYTES = 30 * 1024 * 1024
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TOPICS = ["deploy", "database", "release", "indentation", "logging", "review", "oncall", "cache",
          "migration", "billing", "search", "auth", "metrics", "docs", "testing", "queue"]  # fmt: skip


def _stats(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50_ms": round(pct(values, 0.5) * 1000, 1),
        "p90_ms": round(pct(values, 0.9) * 1000, 1),
        "mean_ms": round(statistics.fmean(values) * 1000, 1),
    }


def big_transcript(path: Path) -> int:
    """Copies of the real session, each with fresh uuids, until the file passes 30 MB."""
    data = SOURCE.read_bytes()
    size = 0
    with open(path, "wb") as out:
        while size < TARGET_BYTES:
            fresh = {old: str(uuid.uuid4()).encode() for old in set(_UUID.findall(data))}
            copy = _UUID.sub(lambda m, fresh=fresh: fresh[m.group(0)], data)
            out.write(copy)
            size += len(copy)
    return size


def memory_of(path: Path, n: int) -> None:
    store = MemoryStore.init(path)
    records = []
    for i in range(n):
        topic, other = TOPICS[i % len(TOPICS)], TOPICS[(i * 7 + 3) % len(TOPICS)]
        records.append(
            make_record(
                f"note-{i:04d}-{topic}",
                "project",
                f"How the team handles {topic} together with {other} (note {i})",
                f"Note {i}: {topic} work is coordinated with {other}; ask in the channel first.",
            )
        )
    store.commit(Change(add=records, actor="manual"))


def _commands() -> dict[str, list[str]]:
    commands = {"python -m dreamd hook": [sys.executable, "-m", "dreamd", "hook"]}
    installed = shutil.which("dreamd", path=str(Path(sys.executable).parent))
    if installed:
        commands["dreamd hook"] = [installed, "hook"]
    return commands


def run_case(
    payload: Any, env: dict[str, str], n: int, check: Any, before: Any = None
) -> dict[str, dict[str, float]]:
    """``payload`` is a dict, or a function giving one per call (fresh session ids);
    ``before`` runs (untimed) before every timed hook call."""
    commands = _commands()
    times: dict[str, list[float]] = {"python -c pass": [], **{k: [] for k in commands}}
    for i in range(n + 2):
        for name, argv in [("python -c pass", [sys.executable, "-c", "pass"]), *commands.items()]:
            data = json.dumps(payload() if callable(payload) else payload).encode()
            if before is not None and name != "python -c pass":
                before()
            t0 = time.perf_counter()
            proc = subprocess.run(argv, input=data if name != "python -c pass" else b"", env=env,
                                  capture_output=True, check=False)  # fmt: skip
            elapsed = time.perf_counter() - t0
            if name != "python -c pass":
                check(proc)
            if i >= 2:  # warm-up: bytecode written, page cache filled
                times[name].append(elapsed)
    return {k: _stats(v) for k, v in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (a smoke check)")
    parser.add_argument("--runs", type=int, default=0)
    args = parser.parse_args()
    n = args.runs or (5 if args.quick else 25)
    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
        },
        "runs": n,
        "cases": {},
    }
    with tempfile.TemporaryDirectory(prefix="bench-hook-") as d:
        root = Path(d)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(root / "home"),
            "XDG_CONFIG_HOME": str(root / "cfg"),
            "XDG_STATE_HOME": str(root / "state"),
            "DREAMD_SPOOL": str(root / "spool"),
            "PYTHONPYCACHEPREFIX": str(root / "pycache"),
        }
        project = root / "project"
        memory_of(project / ".memory", 1000)
        transcript = root / "session.jsonl"
        size = big_transcript(transcript)

        def enqueued(proc: subprocess.CompletedProcess[bytes]) -> None:
            if proc.returncode != 0 or proc.stdout:
                raise SystemExit(f"hook failed: {proc.returncode} {proc.stderr!r}")

        def answered(proc: subprocess.CompletedProcess[bytes]) -> None:
            out = json.loads(proc.stdout or b"{}").get("hookSpecificOutput", {})
            if proc.returncode != 0 or "<relevant_memories>" not in out.get(
                "additionalContext", ""
            ):
                raise SystemExit(f"hook gave no memories: {proc.returncode} {proc.stderr!r}")

        stop = {"hook_event_name": "Stop", "session_id": "bench", "cwd": str(project),
                "transcript_path": str(transcript)}  # fmt: skip
        cache = root / "state" / "dreamd" / "hook-transcripts"
        spool_new = root / "spool" / "new"
        hook_log = root / "state" / "dreamd" / "hook.log"

        def cold() -> None:
            shutil.rmtree(cache, ignore_errors=True)

        turn = iter(range(10**9))

        def one_more_turn() -> None:
            i = next(turn)
            with open(transcript, "a") as f:
                for kind, text in (("user", f"and what about step {i}?"), ("assistant", "Done.")):
                    content: Any = text if kind == "user" else [{"type": "text", "text": text}]
                    f.write(json.dumps({"type": kind, "uuid": str(uuid.uuid4()), "sessionId": "bench",
                                        "message": {"role": kind, "content": content}}) + "\n")  # fmt: skip

        for label, before in (("cold", cold), ("warm: one turn appended", one_more_turn)):
            hook_log.unlink(missing_ok=True)
            stats = run_case(stop, env, n, enqueued, before)
            calls = [json.loads(line) for line in hook_log.read_text().splitlines()]
            results["cases"][f"Stop, 30 MB transcript, {label}"] = {
                "transcript_bytes": size,
                "job_bytes_each_call": statistics.median(c["job_bytes"] for c in calls),
                "jobs_each_call": statistics.median(len(c["jobs"]) for c in calls),
                "queued_after_all_calls": len(list(spool_new.iterdir())),
                "target": "p50 <= 500 ms",
                **stats,
            }
        counter = iter(range(10**9))

        def prompt_payload() -> dict[str, Any]:
            return {"hook_event_name": "UserPromptSubmit", "session_id": f"s{next(counter)}",
                    "cwd": str(project), "prompt": "how do we coordinate the database migration?"}  # fmt: skip

        index_cache = root / "state" / "dreamd" / "hook-index"

        def no_index_cache() -> None:
            shutil.rmtree(index_cache, ignore_errors=True)

        store = MemoryStore(project / ".memory")
        added = iter(range(10**9))

        def one_commit() -> None:
            i = next(added)
            record = make_record(f"bench-added-{i}", "project", f"Added by the benchmark, note {i}",
                                 "One more record.")  # fmt: skip
            store.commit(Change(add=[record], actor="manual"))

        for label, before in (
            ("", None),
            (", first prompt after a commit", one_commit),
            (", no index cache at all", no_index_cache),
        ):
            prompt_stats = run_case(prompt_payload, env, n, answered, before)
            results["cases"][f"UserPromptSubmit, 1,000 records{label}"] = {
                "target": "p50 <= 3 x python -c pass",
                **prompt_stats,
            }

    print(
        "| case | command | p50 ms | p90 ms | vs python -c pass | target |\n|---|---|---|---|---|---|"
    )
    for case, row in results["cases"].items():
        base = row["python -c pass"]["p50_ms"]
        for name in ["python -c pass", *_commands()]:
            st = row[name]
            ratio = st["p50_ms"] / base if base else 0.0
            print(
                f"| {case} | `{name}` | {st['p50_ms']} | {st['p90_ms']} | {ratio:.2f}x | {row['target']} |"
            )
        extra = {k: v for k, v in row.items() if k.endswith(("bytes", "call"))}
        if extra:
            print(f"|  | {extra} | | | | |")
    out = REPO / "benchmarks" / "results" / "hook.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
