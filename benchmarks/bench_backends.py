"""What one model call costs the daemon through each real backend, apart from the model.

Both backends answer the same extraction prompt from the same loopback fake Messages API
(``tests/fake_anthropic.py``, an instant answer), so the time measured is the backend's own
overhead, interleaved call by call so both see the same machine load:

- ``anthropic``: the official SDK in process (one client, reused: what the daemon does);
- ``claude-code``: one headless ``claude -p`` process per call, with every flag the backend
  passes (the pinned CLI from ``tests/claude_cli.py``, or ``--claude PATH``).

The baseline is the SDK call; the figure of interest is the claude-code overhead per call,
which bounds how many extraction jobs per minute one worker can run through a subscription
login. Target (ours, not a promise of the CLI): claude-code p50 under 5 s per call.

Run: ``python benchmarks/bench_backends.py [--calls N] [--claude PATH]``.
Prints a table and writes ``benchmarks/results/backends.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

import structlog

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.stats import pct  # noqa: E402
from dreamd.models import ops  # noqa: E402
from dreamd.models.factory import make_model  # noqa: E402
from tests.fake_anthropic import FakeAnthropic, message  # noqa: E402

DEFAULT_OUT = REPO / "benchmarks" / "results" / "backends.json"
ANSWER = [{"name": "ci-runs-make", "type": "project", "description": "CI runs make check",
           "body": "Every push runs `make check`."}]  # fmt: skip
TARGET_P50_S = 5.0


class Turn:
    role, text, timestamp, message_id = "user", "Our CI runs make check on every push.", None, "m"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--claude", type=Path, default=None, help="claude executable (default: pinned)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    if args.claude is None:
        from tests.claude_cli import install

        args.claude = install()
    fake = FakeAnthropic(responder=lambda req: message(json.dumps(ANSWER)))
    home = Path(tempfile.mkdtemp(prefix="dreamd-bench-home-"))
    env = {
        "HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": "sk-ant-bench-0000",
        "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
    }  # fmt: skip
    common = {"model": "claude-bench", "base_url": fake.url, "max_retries": 0, "timeout": "60s"}
    backends = {
        "anthropic": make_model({"backend": "anthropic", **common}, env=env),
        "claude-code": make_model(
            {"backend": "claude-code", "claude_path": str(args.claude), **common}, env=env
        ),
    }
    samples: dict[str, list[float]] = {name: [] for name in backends}
    try:
        for name, model in backends.items():  # warm-up: page cache, first-run files
            out = ops.extract(model, [Turn()], [], today=date(2026, 11, 30), max_tokens=500)
            if out.error is not None:
                print(f"bench_backends: {name} failed: {out.error}", file=sys.stderr)
                return 1
        for _ in range(args.calls):
            for name, model in backends.items():
                started = time.perf_counter()
                out = ops.extract(model, [Turn()], [], today=date(2026, 11, 30), max_tokens=500)
                samples[name].append(time.perf_counter() - started)
                assert out.error is None and [r.name for r in out.records] == ["ci-runs-make"]
    finally:
        fake.close()

    rows: dict[str, dict[str, Any]] = {}
    print(f"one extraction call, {args.calls} calls per backend, interleaved (loopback fake API)")
    print(f"{'backend':<12}{'p50 s':>10}{'p95 s':>10}{'max s':>10}{'x sdk p50':>12}")
    base = statistics.median(samples["anthropic"])
    for name, values in samples.items():
        p50 = statistics.median(values)
        rows[name] = {
            "calls": len(values),
            "p50_s": round(p50, 4),
            "p95_s": round(pct(values, 0.95), 4),
            "max_s": round(max(values), 4),
            "vs_sdk_p50": round(p50 / base, 1),
        }
        r = rows[name]
        print(f"{name:<12}{r['p50_s']:>10.3f}{r['p95_s']:>10.3f}{r['max_s']:>10.3f}{r['vs_sdk_p50']:>11.1f}x")
    met = rows["claude-code"]["p50_s"] <= TARGET_P50_S
    print(f"target: claude-code p50 <= {TARGET_P50_S:g} s per call: {'met' if met else 'MISSED'}")
    result = {
        "benchmark": "backends",
        "calls": args.calls,
        "claude": str(args.claude),
        "backends": rows,
        "target_p50_s": TARGET_P50_S,
        "target_met": met,
        "python": platform.python_version(),
        "load_avg": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
