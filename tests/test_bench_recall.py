"""The recall benchmark runs end to end on a tiny set (its figures live in benchmarks/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_bench_recall_runs_and_finds_each_new_record(tmp_path: Path) -> None:
    out = tmp_path / "recall.json"
    proc = subprocess.run(
        [sys.executable, "benchmarks/bench_recall.py", "--quick", "--sizes", "60", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = json.loads(out.read_text())["rows"]
    assert [r["row"] for r in rows] == ["selection (baseline)", "warm recall", "write + recall"]
    assert all(r["p50_ms"] > 0 for r in rows)
