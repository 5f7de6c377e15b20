"""Submit and hook latency next to floors measured in the same run.

1. ``memory.client.submit()`` of a ~20 KB real transcript, 1,000 times, interleaved with a
   *floor* that writes the very same job bytes with no logic: O_EXCL temp + write + fsync +
   link into new/ + unlink (``floor``), and the same plus the fsync of new/ that submit does
   for durability of the name (``floor+dirsync``). Target: submit p50 ≤ 1.5 × floor p50.
2. Whole-process time of the hook (``python -c 'from dreamd.hook.main import main; main()'`` with a
   real Claude Code payload and transcript) next to ``python -c pass``, interleaved.
   Target: median ≤ 4 × ``python -c pass``. Both run with bytecode caching on (a private
   ``PYTHONPYCACHEPREFIX``), as an installed package would; the environment's
   ``PYTHONDONTWRITEBYTECODE`` would otherwise recompile every module on every run.

Run: ``cd /work/main && /work/venv/bin/python benchmarks/bench_submit.py [--quick]``.
Prints a table and writes ``benchmarks/results/submit.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
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
from memory.client import submit  # noqa: E402
from memory.spool.jobformat import build_job, encode_job, new_job_id  # noqa: E402
from memory.spool.queue import Spool  # noqa: E402

DATA = Path(os.environ.get("DREAMD_SHARED_DATA", REPO.parent / "shared" / "data"))
SOURCE = DATA / "claude_code" / "marot__spotter__tool_heavy.jsonl"
HOOK_TRANSCRIPTS = {
    "hook (10 KB transcript)": DATA / "claude_code" / "marot__spotter__short.jsonl",
    "hook (237 KB transcript)": DATA / "claude_code" / "marot__spotter__subagent.jsonl",
    "hook (3.2 MB transcript)": DATA
    / "claude_code"
    / "marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
}


def _stats(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50_ms": round(pct(values, 0.5) * 1000, 3),
        "p99_ms": round(pct(values, 0.99) * 1000, 3),
        "mean_ms": round(statistics.fmean(values) * 1000, 3),
    }


def _transcript_20k() -> str:
    lines = SOURCE.read_text(encoding="utf-8").splitlines(keepends=True)
    out: list[str] = []
    size = 0
    for line in lines:
        if size + len(line.encode()) > 20_000 and out:
            break
        out.append(line)
        size += len(line.encode())
    return "".join(out)


def _floor_once(spool_root: Path, data: bytes, *, dirsync: bool) -> None:
    name = new_job_id()
    tmp = spool_root / "tmp" / f"{name}.floor"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.link(tmp, spool_root / "new" / f"{name}.json")
    os.unlink(tmp)
    if dirsync:
        dfd = os.open(spool_root / "new", os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def bench_submit(n: int) -> dict[str, Any]:
    content = _transcript_20k()
    with tempfile.TemporaryDirectory(prefix="bench-submit-") as d:
        spool = Spool(Path(d) / "spool")
        spool.ensure()
        data = encode_job(
            build_job("extract", job_id=new_job_id(), memory_dir="/bench/app/.memory", session_id="bench",
                      transcript=("claude-code", content))
        )  # fmt: skip
        times: dict[str, list[float]] = {"submit": [], "floor": [], "floor+dirsync": []}
        for i in range(n + 20):
            t0 = time.perf_counter()
            submit(
                content,
                memory_dir="/bench/app/.memory",
                session_id="bench",
                format="claude-code",
                spool=spool,
            )
            t1 = time.perf_counter()
            _floor_once(spool.root, data, dirsync=False)
            t2 = time.perf_counter()
            _floor_once(spool.root, data, dirsync=True)
            t3 = time.perf_counter()
            if i >= 20:  # warm-up
                times["submit"].append(t1 - t0)
                times["floor"].append(t2 - t1)
                times["floor+dirsync"].append(t3 - t2)
            if i % 200 == 199:
                for f in os.listdir(spool.root / "new"):
                    os.unlink(spool.root / "new" / f)
        return {
            "transcript_bytes": len(content.encode()),
            "job_bytes": len(data),
            **{k: _stats(v) for k, v in times.items()},
        }


def _env(cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",)}
    env["PYTHONPYCACHEPREFIX"] = cache
    return env


def bench_hook(runs: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-hook-") as d:
        root = Path(d)
        project = root / "project"
        (project / ".memory").mkdir(parents=True)
        (project / ".memory" / "manifest.json").write_text('{"format": 1}')
        env = _env(str(root / "pycache"))
        env.update(
            HOME=str(root),
            XDG_CONFIG_HOME=str(root / "cfg"),
            DREAMD_SPOOL=str(root / "spool"),
            XDG_STATE_HOME=str(root),
        )
        cmds: dict[str, tuple[list[str], bytes]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], b""),
            "python -c 'import memory.client'": (
                [sys.executable, "-c", "import memory.client"],
                b"",
            ),
        }
        for label, transcript in HOOK_TRANSCRIPTS.items():
            payload = {
                "session_id": "4d5611e5-241a-462a-8d15-5122611a9569",
                "transcript_path": str(transcript),
                "cwd": str(project),
                "hook_event_name": "SessionEnd",
                "reason": "prompt_input_exit",
            }
            code = "from dreamd.hook.main import main; raise SystemExit(main())"
            cmds[label] = ([sys.executable, "-c", code], json.dumps(payload).encode())
        for label, (argv, stdin) in cmds.items():  # warm the bytecode and page caches
            warm = subprocess.run(argv, input=stdin, env=env, cwd=REPO, capture_output=True)
            if warm.returncode != 0:
                raise SystemExit(f"{label}: exit {warm.returncode}: {warm.stderr.decode()}")
        times: dict[str, list[float]] = {k: [] for k in cmds}
        for _ in range(runs):
            for label, (argv, stdin) in cmds.items():
                t0 = time.perf_counter()
                proc = subprocess.run(argv, input=stdin, env=env, cwd=REPO, capture_output=True)
                times[label].append(time.perf_counter() - t0)
                if proc.returncode != 0:
                    raise SystemExit(f"{label}: exit {proc.returncode}: {proc.stderr.decode()}")
            with contextlib.suppress(FileNotFoundError):
                for f in os.listdir(root / "spool" / "new"):
                    os.unlink(root / "spool" / "new" / f)
        base = statistics.median(times["python -c pass"])
        for label, values in times.items():
            med = statistics.median(values)
            results[label] = {
                "n": len(values),
                "median_ms": round(med * 1000, 2),
                "min_ms": round(min(values) * 1000, 2),
                "x_python_pass": round(med / base, 2),
            }
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 submits, 8 process runs")
    args = parser.parse_args()
    n, runs = (200, 8) if args.quick else (1000, 25)
    sub = bench_submit(n)
    hook = bench_hook(runs)
    ratio = round(sub["submit"]["p50_ms"] / sub["floor"]["p50_ms"], 2)
    ratio_dir = round(sub["submit"]["p50_ms"] / sub["floor+dirsync"]["p50_ms"], 2)

    print(
        f"submit(): {n} submits of a {sub['transcript_bytes']} B transcript ({sub['job_bytes']} B job)"
    )
    print(f"{'row':<36}{'p50 ms':>10}{'p99 ms':>10}{'mean ms':>10}")
    for key in ("submit", "floor", "floor+dirsync"):
        s = sub[key]
        print(f"{key:<36}{s['p50_ms']:>10.3f}{s['p99_ms']:>10.3f}{s['mean_ms']:>10.3f}")
    print(f"submit p50 / floor p50 = {ratio} (target <= 1.5); / floor+dirsync p50 = {ratio_dir}")
    print()
    print(f"whole process, {runs} interleaved runs each")
    print(f"{'row':<36}{'median ms':>10}{'min ms':>10}{'x pass':>10}")
    for label, s in hook.items():
        print(f"{label:<36}{s['median_ms']:>10.2f}{s['min_ms']:>10.2f}{s['x_python_pass']:>10.2f}")
    print("target: hook median <= 4 x python -c pass")

    out = {
        "benchmark": "submit",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "submit": sub,
        "submit_p50_over_floor": ratio,
        "submit_p50_over_floor_dirsync": ratio_dir,
        "process": hook,
    }
    results = REPO / "benchmarks" / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / "submit.json").write_text(json.dumps(out, indent=2) + "\n")
    print(f"\nwrote {results / 'submit.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
