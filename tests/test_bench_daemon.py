"""``bench_daemon.py --only``: rows not re-run keep the time they were measured, never the new one."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_daemon", REPO / "benchmarks" / "bench_daemon.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_daemon"] = module
    spec.loader.exec_module(module)
    return module


bd = _load()
ORDER = ["pickup", "e2e", "throughput", "throughput_commit", "idle"]


def test_a_kept_row_keeps_the_time_and_mode_of_the_run_that_measured_it() -> None:
    previous = {"meta": {"quick": False, "measured_at": "2026-11-20T10:00:00+00:00"},
                "rows": [{"key": "pickup", "row": "pickup", "p50_ms": 9.0},
                         {"key": "idle", "row": "idle", "cpu_s": 1.0,
                          "measured_at": "2026-11-25T10:00:00+00:00", "quick": True}]}
    rows = bd.merge_rows(ORDER, {"e2e": {"row": "e2e", "p50_ms": 30.0}}, previous, "2026-12-01T20:00:00+00:00", False)
    by_key = {r["key"]: r for r in rows}
    assert [r["key"] for r in rows] == ["pickup", "e2e", "idle"]
    assert by_key["e2e"]["measured_at"] == "2026-12-01T20:00:00+00:00" and by_key["e2e"]["quick"] is False
    # a row from a file written before rows were stamped takes that file's own time
    assert by_key["pickup"]["measured_at"] == "2026-11-20T10:00:00+00:00" and by_key["pickup"]["p50_ms"] == 9.0
    assert by_key["idle"]["measured_at"] == "2026-11-25T10:00:00+00:00" and by_key["idle"]["quick"] is True


def test_a_rerun_row_replaces_the_old_one_and_nothing_is_kept_without_a_previous_file() -> None:
    previous = {"meta": {"measured_at": "old"}, "rows": [{"key": "e2e", "row": "e2e", "p50_ms": 99.0}]}
    rows = bd.merge_rows(ORDER, {"e2e": {"row": "e2e", "p50_ms": 30.0}}, previous, "new", True)
    assert rows == [{"row": "e2e", "p50_ms": 30.0, "key": "e2e", "measured_at": "new", "quick": True}]
    assert bd.merge_rows(ORDER, {}, None, "new", True) == []
