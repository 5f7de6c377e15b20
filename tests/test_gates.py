"""Gates: a pure function of (state, config, now); each gate flips exactly at its boundary."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from dreamd.config import GatesConfig
from dreamd.jobs.gates import (
    GATE_NAMES,
    DirState,
    GateTracker,
    ScanThrottle,
    evaluate,
    is_paused,
    pause,
    pause_info,
    resume,
)
from memory.errors import StoreError
from tests.helpers.clock import FakeClock

NOW = datetime(2026, 11, 29, 10, 0, 0, tzinfo=UTC)
CFG = GatesConfig(threshold=10, min_interval=86400.0, scan_throttle=600.0, min_sessions=0,
                  lock_stale_after=3600.0, daily_token_budget=0)
OPEN = DirState(enabled=True, consolidated_at=None, last_scan_at=None, record_count=10,
                sessions_since=0, spent_today=0, lease="free")


def _gate(state: DirState, name: str, now: datetime = NOW, cfg: GatesConfig = CFG) -> tuple[bool, str]:
    d = evaluate(state, cfg, now)
    (g,) = [g for g in d.gates if g.name == name]
    return g.open, g.reason


def test_all_open_state_opens_and_lists_every_gate_in_cost_order() -> None:
    d = evaluate(OPEN, CFG, NOW)
    assert d.open is True and d.first_closed is None
    assert tuple(g.name for g in d.gates) == GATE_NAMES
    assert GATE_NAMES == ("enabled", "interval", "scan", "count", "sessions", "budget", "lock")


def test_all_gates_are_evaluated_even_after_the_first_closes() -> None:
    state = OPEN.replace(enabled=False, record_count=3, lease="held", lease_holder="pid 123 on host x")
    d = evaluate(state, CFG, NOW)
    assert d.open is False and d.first_closed == "enabled"
    closed = [str(g) for g in d.gates if not g.open]
    assert closed == ["enabled: paused (dreamd resume DIR reopens it)", "count: 3 of 10 records",
                      "lock: held by pid 123 on host x"]
    assert d.reason == "enabled: paused (dreamd resume DIR reopens it)"


def test_interval_opens_exactly_at_min_interval() -> None:
    last = NOW - timedelta(hours=24)
    state = OPEN.replace(consolidated_at=last)
    assert _gate(state, "interval") == (True, "last dream 1d ago")
    assert _gate(state, "interval", NOW - timedelta(microseconds=1)) == (False, "next in 0s")
    assert _gate(state, "interval", NOW - timedelta(hours=3, minutes=12, seconds=30)) == (False, "next in 3h12m")
    assert _gate(OPEN.replace(consolidated_at=None), "interval") == (True, "never dreamed")


def test_naive_timestamps_are_taken_as_utc() -> None:
    state = OPEN.replace(consolidated_at=datetime(2026, 11, 28, 10, 0, 0))
    assert _gate(state, "interval", datetime(2026, 11, 29, 10, 0, 0))[0] is True


def test_scan_throttle_opens_exactly_at_window_end() -> None:
    state = OPEN.replace(last_scan_at=NOW - timedelta(minutes=10))
    assert _gate(state, "scan")[0] is True
    assert _gate(state, "scan", NOW - timedelta(seconds=1)) == (False, "scanned recently, next scan in 1s")


def test_count_opens_at_threshold() -> None:
    assert _gate(OPEN.replace(record_count=9), "count") == (False, "9 of 10 records")
    assert _gate(OPEN.replace(record_count=10), "count") == (True, "10 of 10 records")


def test_sessions_gate_off_by_default_and_opens_at_min_sessions() -> None:
    assert _gate(OPEN.replace(sessions_since=0), "sessions") == (True, "off")
    cfg = CFG.replace(min_sessions=5)
    assert _gate(OPEN.replace(sessions_since=4), "sessions", cfg=cfg) == (
        False, "4 of 5 sessions since the last dream")
    assert _gate(OPEN.replace(sessions_since=5), "sessions", cfg=cfg)[0] is True


def test_budget_closes_when_spent_and_says_when_it_reopens() -> None:
    assert _gate(OPEN.replace(spent_today=10**9), "budget") == (True, "unlimited")
    cfg = CFG.replace(daily_token_budget=1000)
    assert _gate(OPEN.replace(spent_today=999), "budget", cfg=cfg) == (True, "999 of 1000 tokens spent today")
    assert _gate(OPEN.replace(spent_today=1000), "budget", cfg=cfg) == (
        False, "1000 of 1000 tokens spent today, reopens in 14h")


def test_lock_gate_free_stale_held() -> None:
    assert _gate(OPEN, "lock") == (True, "free")
    assert _gate(OPEN.replace(lease="stale", lease_holder="pid 9 on host y"), "lock") == (
        True, "stale lease by pid 9 on host y will be recovered")
    assert _gate(OPEN.replace(lease="held"), "lock") == (False, "held")


def test_decision_names_first_closed_gate_in_order() -> None:
    state = OPEN.replace(record_count=1, consolidated_at=NOW)
    d = evaluate(state, CFG, NOW)
    assert d.first_closed == "interval"
    assert d.reason == "interval: next in 1d"


# ------------------------------------------------------------------ pause


def test_pause_survives_as_a_file_and_resume_reopens(tmp_path: Path) -> None:
    assert not is_paused(tmp_path)
    pause(tmp_path, reason="holiday", now=NOW)
    assert is_paused(tmp_path)
    assert json.loads((tmp_path / ".paused").read_text()) == {"paused_at": "2026-11-29T10:00:00Z",
                                                              "reason": "holiday"}
    assert pause_info(tmp_path) == {"paused_at": "2026-11-29T10:00:00Z", "reason": "holiday"}
    resume(tmp_path)
    assert not is_paused(tmp_path) and pause_info(tmp_path) is None
    resume(tmp_path)  # idempotent


def test_pause_missing_directory_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="not a directory"):
        pause(tmp_path / "nope")


# ------------------------------------------------------------------ throttle / tracker


def test_scan_throttle_holds_under_an_event_storm() -> None:
    clock = FakeClock(1000.0)
    throttle = ScanThrottle(600.0, clock)
    scans = 0
    # 5,000 hint events over 30 minutes (every 0.36 s): one scan per 10-minute window.
    for i in range(5000):
        clock.now = 1000.0 + i * 0.36
        scans += throttle.hint("/m")
        scans += len(throttle.due())
    assert scans == 3  # at t=1000, ~1600.1, ~2200.2 (the last event is at 2799.64)
    last = throttle.last_scan("/m")
    assert last is not None and 2200.0 < last < 2201.0
    clock.now = last + 599.999
    assert throttle.due() == []
    clock.now = last + 600.0  # the window after the last scan ends: the pending hint comes back once
    assert throttle.due() == ["/m"]
    assert throttle.due() == []


def test_scan_throttle_hint_inside_window_is_delayed_not_lost() -> None:
    clock = FakeClock(1000.0)
    throttle = ScanThrottle(10.0, clock)
    assert throttle.hint("a") is True
    clock.now += 9.999
    assert throttle.hint("a") is False
    assert throttle.due() == []
    clock.now += 0.001
    assert throttle.due() == ["a"]
    assert throttle.last_scan("a") == clock.now
    assert throttle.hint("b") is True  # keys are independent


class ListLog:
    def __init__(self) -> None:
        self.lines: list[tuple[str, dict[str, Any]]] = []

    def info(self, event: str, **kw: Any) -> None:
        self.lines.append((event, kw))


def test_gate_tracker_logs_only_changes() -> None:
    log = ListLog()
    tracker = GateTracker(log)
    closed = evaluate(OPEN.replace(record_count=3), CFG, NOW)
    closed_later = evaluate(OPEN.replace(record_count=4), CFG, NOW)
    opened = evaluate(OPEN, CFG, NOW)
    assert tracker.observe("/m", closed) is True
    assert tracker.observe("/m", closed_later) is False  # same gate closed: not a change
    assert tracker.observe("/m", opened) is True
    assert tracker.observe("/other", opened) is True
    assert log.lines == [
        ("gate.changed", {"memory_dir": "/m", "open": False, "gate": "count", "reason": "count: 3 of 10 records"}),
        ("gate.changed", {"memory_dir": "/m", "open": True, "gate": "all", "reason": "all gates open"}),
        ("gate.changed", {"memory_dir": "/other", "open": True, "gate": "all", "reason": "all gates open"}),
    ]
