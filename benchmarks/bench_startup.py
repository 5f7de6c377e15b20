"""Start-up of the everyday commands and of ``dreamd mcp``, against floors measured in the same run.

1. **Commands**: wall time of ``dreamd status``, ``dreamd recall DIR QUERY``, ``dreamd log DIR``
   and ``dreamd doctor`` (spawn to exit) next to ``python -c pass``, runs alternating, bytecode
   caching on in a private ``PYTHONPYCACHEPREFIX`` (as an installed package has). One managed
   directory of 50 records under the roots, a spool with a few done jobs, offline model, the
   console script's own interpreter. Target: each p50 ≤ 3 × ``python -c pass`` p50.
2. **MCP**: spawn to the ``initialize`` answer of ``dreamd mcp`` (started in the project, no
   ``--memory-dir``: the resolution rule runs too) next to a bare MCP SDK server that only
   answers ``initialize``. Target: p50 ≤ 1 s (and the ratio is printed).

Run: ``python benchmarks/bench_startup.py [--quick]``. Prints a table and writes
``benchmarks/results/startup.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.bench_mcp import BARE_SERVER, _stats, time_to_initialize  # noqa: E402
from memory.store.records import make_record  # noqa: E402
from memory.store.transaction import Change, MemoryStore  # noqa: E402

RATIO_MAX = 3.0
MCP_P50_MAX_MS = 1000.0


def setup(root: Path) -> tuple[Path, dict[str, str]]:
    project = root / "code" / "app"
    memory_dir = project / ".memory"
    store = MemoryStore.init(memory_dir)
    store.commit(Change(add=[
        make_record(f"note-{i:03d}", ("user", "project", "feedback", "reference")[i % 4],
                    f"Note {i} about the deploy script and tabs", f"Body {i}: run deploy with care.")
        for i in range(50)
    ]))  # fmt: skip
    config = root / "config.toml"
    config.write_text(f'[daemon]\nroots = ["{root}/code/*/.memory"]\nspool = "{root}/spool"\n', encoding="utf-8")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root / "home"),
        "XDG_STATE_HOME": str(root / "state"),
        "DREAMD_CONFIG": str(config),
        "PYTHONPATH": str(REPO),
        "PYTHONPYCACHEPREFIX": str(root / "pycache"),
    }
    (root / "home").mkdir()
    return memory_dir, env


def time_run(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - t0
    if done.returncode not in (0, 1):  # doctor exits 1 when a check fails (no daemon here): fine
        raise RuntimeError(f"{cmd[2:5]} exited {done.returncode}: {done.stderr.decode()[-300:]}")
    return elapsed


def bench_commands(memory_dir: Path, env: dict[str, str], runs: int) -> dict[str, Any]:
    py = sys.executable
    cmds = {
        "python -c pass": [py, "-c", "pass"],
        "dreamd status": [py, "-m", "dreamd", "status"],
        "dreamd recall": [py, "-m", "dreamd", "recall", str(memory_dir), "how do we deploy?"],
        "dreamd log": [py, "-m", "dreamd", "log", str(memory_dir)],
        "dreamd doctor": [py, "-m", "dreamd", "doctor"],
    }
    cwd = memory_dir.parent
    for cmd in cmds.values():  # fill the bytecode cache
        time_run(cmd, env, cwd)
    times: dict[str, list[float]] = {label: [] for label in cmds}
    for _ in range(runs):
        for label, cmd in cmds.items():
            times[label].append(time_run(cmd, env, cwd))
    out: dict[str, Any] = {label: _stats(values) for label, values in times.items()}
    floor = out["python -c pass"]["p50_ms"]
    out["ratios_p50"] = {label: round(out[label]["p50_ms"] / floor, 2) for label in cmds if label != "python -c pass"}
    return out


def bench_mcp(memory_dir: Path, env: dict[str, str], runs: int) -> dict[str, Any]:
    cmds = {
        "dreamd mcp": [sys.executable, "-m", "dreamd", "mcp"],
        "bare SDK server": [sys.executable, "-c", BARE_SERVER],
    }
    cwd = memory_dir.parent
    for cmd in cmds.values():
        time_to_initialize(cmd, env, cwd)
    times: dict[str, list[float]] = {label: [] for label in cmds}
    for _ in range(runs):
        for label, cmd in cmds.items():
            times[label].append(time_to_initialize(cmd, env, cwd))
    out: dict[str, Any] = {label: _stats(values) for label, values in times.items()}
    out["ratio_p50"] = round(out["dreamd mcp"]["p50_ms"] / out["bare SDK server"]["p50_ms"], 2)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (5 each)")
    args = parser.parse_args()
    runs = 5 if args.quick else 15
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        memory_dir, env = setup(Path(tmp))
        commands = bench_commands(memory_dir, env, runs)
        mcp = bench_mcp(memory_dir, env, runs)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    met = {label: ratio <= RATIO_MAX for label, ratio in commands["ratios_p50"].items()}
    result = {
        "commands": commands,
        "mcp": mcp,
        "targets": {
            "ratio_max": RATIO_MAX,
            "commands_met": met,
            "mcp_p50_ms_max": MCP_P50_MAX_MS,
            "mcp_met": mcp["dreamd mcp"]["p50_ms"] <= MCP_P50_MAX_MS,
        },
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "load_1m": load},
    }
    print(f"command start-up, spawn to exit ({runs} alternating runs each)")
    print(f"{'':18} {'min':>10} {'p50':>10} {'p99':>10} {'p50 / pass':>11}")
    for label in ("python -c pass", "dreamd status", "dreamd recall", "dreamd log", "dreamd doctor"):
        s = commands[label]
        ratio = commands["ratios_p50"].get(label)
        shown = f"{ratio:.2f}x {'met' if met[label] else 'MISSED'}" if ratio is not None else ""
        print(f"{label:18} {s['min_ms']:>8.1f}ms {s['p50_ms']:>8.1f}ms {s['p99_ms']:>8.1f}ms {shown:>11}")
    print()
    print(f"mcp: spawn to initialize answered ({runs} alternating runs each)")
    for label in ("dreamd mcp", "bare SDK server"):
        s = mcp[label]
        print(f"{label:18} {s['min_ms']:>8.1f}ms {s['p50_ms']:>8.1f}ms {s['p99_ms']:>8.1f}ms")
    print(
        f"dreamd mcp p50 {mcp['dreamd mcp']['p50_ms']:.0f} ms ({mcp['ratio_p50']:.2f}x bare); target <= 1 s: "
        f"{'met' if result['targets']['mcp_met'] else 'MISSED'}"
    )
    print(f"load average (1 min) at the end: {load}")
    out = REPO / "benchmarks" / "results" / "startup.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
