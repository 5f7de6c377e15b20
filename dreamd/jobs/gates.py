"""When may a memory directory dream? The gates of DESIGN §8, as a pure function.

:func:`evaluate` takes a snapshot of one directory (:class:`DirState`), the gate settings and
the current time, and returns a :class:`GateDecision`: every gate's answer with a humane
reason (for ``dreamd status`` and the logs) and whether all are open. It reads no files and no
clock, so each boundary is tested exactly with a fake clock. Order is cheapest first:
enabled, interval, scan throttle, count, sessions, budget, lock. All gates are evaluated even
after one closes, so status can show the whole picture.

Stateful helpers kept tiny and clock-injected: :class:`ScanThrottle` (one scan per window
however many hint events arrive) and :class:`GateTracker` (log ``gate.changed`` only when a
directory's decision changes). ``pause``/``resume`` keep the per-directory ``enabled`` switch in
a small ``.paused`` file inside the memory directory, so it survives restarts and moves with
the directory.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Hashable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dreamd.config import GatesConfig, format_duration
from memory.errors import StoreError
from memory.fsutil import open_regular, replace_atomic
from memory.values import FrozenValue

TYPE_CHECKING = False  # not typing's: importing typing is a start-up cost (issue 20)
if TYPE_CHECKING:
    from typing import Any

    from dreamd.logs import EventLogger

__all__ = [
    "GATE_NAMES",
    "PAUSE_FILE",
    "SCAN_FILE",
    "DirState",
    "GateDecision",
    "GateResult",
    "GateTracker",
    "ScanThrottle",
    "evaluate",
    "is_paused",
    "pause",
    "pause_info",
    "read_last_scan",
    "record_scan",
    "resume",
]

GATE_NAMES: tuple[str, ...] = ("enabled", "interval", "scan", "count", "sessions", "budget", "lock")
PAUSE_FILE = ".paused"
SCAN_FILE = ".last-scan"
MAX_STAMP_BYTES = 64 * 1024
"""The most of ``.last-scan`` or ``.paused`` ever read (each holds one short line)."""
"""When the daemon last scanned a directory's gates (UTC ISO): the one state behind both the
scan throttle and the ``scan`` gate that ``dreamd status`` shows. Hidden, so never reconciled."""


class DirState(FrozenValue):
    """What the gates need to know about one directory, gathered by the caller."""

    __slots__ = (  # noqa: RUF023 (field order)
        "enabled", "consolidated_at", "last_scan_at", "record_count", "sessions_since", "spent_today", "lease",
        "lease_holder",
    )  # fmt: skip
    enabled: bool
    consolidated_at: datetime | None
    last_scan_at: datetime | None
    record_count: int
    sessions_since: int
    spent_today: int
    lease: str
    """``"free"`` | ``"held"`` | ``"stale"`` (the ``.dream.lock`` lease)."""
    lease_holder: str | None
    """For the reason text: ``"pid 123 on host x"`` when the lease is held or stale."""

    def __init__(
        self, enabled: bool, consolidated_at: datetime | None, last_scan_at: datetime | None, record_count: int,
        sessions_since: int, spent_today: int, lease: str, lease_holder: str | None = None,
    ) -> None:  # fmt: skip
        self.set_fields(
            enabled=enabled, consolidated_at=consolidated_at, last_scan_at=last_scan_at, record_count=record_count,
            sessions_since=sessions_since, spent_today=spent_today, lease=lease, lease_holder=lease_holder,
        )  # fmt: skip


class GateResult(FrozenValue):
    """One gate's verdict and why."""

    __slots__ = ("name", "open", "reason")
    name: str
    open: bool
    reason: str

    def __init__(self, name: str, open: bool, reason: str) -> None:
        self.set_fields(name=name, open=open, reason=reason)

    def __str__(self) -> str:
        return f"{self.name}: {self.reason}"


class GateDecision(FrozenValue):
    """Every gate's verdict, in order, and the first that closed."""

    __slots__ = ("open", "gates", "first_closed")  # noqa: RUF023 (field order)
    open: bool
    gates: tuple[GateResult, ...]
    first_closed: str | None

    def __init__(self, open: bool, gates: tuple[GateResult, ...], first_closed: str | None) -> None:
        self.set_fields(open=open, gates=gates, first_closed=first_closed)

    @property
    def reason(self) -> str:
        """The first closed gate's ``name: reason``, or a summary when all are open."""
        for g in self.gates:
            if not g.open:
                return str(g)
        return "all gates open"


def _aware(ts: datetime) -> datetime:
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)


def _next_utc_midnight(now: datetime) -> datetime:
    day = _aware(now).astimezone(UTC).date() + timedelta(days=1)
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def evaluate(state: DirState, cfg: GatesConfig, now: datetime) -> GateDecision:
    """Every gate's answer for ``state`` at ``now``; the decision is open when all are open."""
    now = _aware(now)
    results: list[GateResult] = []

    results.append(
        GateResult("enabled", True, "enabled")
        if state.enabled
        else GateResult("enabled", False, "paused (dreamd resume DIR reopens it)")
    )

    if state.consolidated_at is None:
        results.append(GateResult("interval", True, "never dreamed"))
    else:
        due = _aware(state.consolidated_at) + timedelta(seconds=cfg.min_interval)
        if now >= due:
            ago = (now - _aware(state.consolidated_at)).total_seconds()
            results.append(GateResult("interval", True, f"last dream {format_duration(ago)} ago"))
        else:
            wait = (due - now).total_seconds()
            results.append(GateResult("interval", False, f"next in {format_duration(wait)}"))

    if state.last_scan_at is None:
        results.append(GateResult("scan", True, "first scan"))
    else:
        due = _aware(state.last_scan_at) + timedelta(seconds=cfg.scan_throttle)
        if now >= due:
            results.append(GateResult("scan", True, "throttle window passed"))
        else:
            wait = (due - now).total_seconds()
            results.append(GateResult("scan", False, f"scanned recently, next scan in {format_duration(wait)}"))

    results.append(
        GateResult(
            "count",
            state.record_count >= cfg.threshold,
            f"{state.record_count} of {cfg.threshold} records",
        )
    )

    if cfg.min_sessions <= 0:
        results.append(GateResult("sessions", True, "off"))
    else:
        results.append(
            GateResult(
                "sessions",
                state.sessions_since >= cfg.min_sessions,
                f"{state.sessions_since} of {cfg.min_sessions} sessions since the last dream",
            )
        )

    if cfg.daily_token_budget <= 0:
        results.append(GateResult("budget", True, "unlimited"))
    elif state.spent_today < cfg.daily_token_budget:
        results.append(
            GateResult("budget", True, f"{state.spent_today} of {cfg.daily_token_budget} tokens spent today")
        )
    else:
        wait = (_next_utc_midnight(now) - now).total_seconds()
        results.append(
            GateResult(
                "budget",
                False,
                f"{state.spent_today} of {cfg.daily_token_budget} tokens spent today, "
                f"reopens in {format_duration(wait)}",
            )
        )

    holder = f" by {state.lease_holder}" if state.lease_holder else ""
    if state.lease == "free":
        results.append(GateResult("lock", True, "free"))
    elif state.lease == "stale":
        results.append(GateResult("lock", True, f"stale lease{holder} will be recovered"))
    else:
        results.append(GateResult("lock", False, f"held{holder}"))

    first_closed = next((g.name for g in results if not g.open), None)
    return GateDecision(open=first_closed is None, gates=tuple(results), first_closed=first_closed)


# --------------------------------------------------------------------------- last scan


def read_last_scan(memory_dir: str | os.PathLike[str]) -> datetime | None:
    """The last gate scan the daemon recorded for ``memory_dir`` (None: never, or unreadable)."""
    try:
        data = open_regular(Path(memory_dir) / SCAN_FILE, max_bytes=MAX_STAMP_BYTES)
        when = datetime.fromisoformat(data.decode("utf-8").strip().replace("Z", "+00:00"))
    except (OSError, ValueError, StoreError):  # missing, a FIFO, a link, a stray big file
        return None
    return _aware(when)


def record_scan(memory_dir: str | os.PathLike[str], now: datetime) -> None:
    """Record a gate scan of ``memory_dir`` at ``now``: atomic (rename) but not fsynced — the
    time is advisory, and an idle daemon must not cost a disk flush per directory per window."""
    directory = Path(memory_dir)
    stamp = _aware(now).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    # A fresh name with O_EXCL: a link planted at a predictable temp name is never written through.
    tmp = directory / f"{SCAN_FILE}.{os.getpid()}.{threading.get_ident()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, (stamp + "\n").encode())
    except OSError as exc:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OSError(exc.errno, exc.strerror, str(directory / SCAN_FILE)) from None
    os.close(fd)
    os.replace(tmp, directory / SCAN_FILE)  # replaces a FIFO or a link there, never opens it


# --------------------------------------------------------------------------- pause / resume


def is_paused(memory_dir: str | os.PathLike[str]) -> bool:
    return os.path.exists(os.path.join(os.fspath(memory_dir), PAUSE_FILE))


def pause_info(memory_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The ``.paused`` file's content (``paused_at``, ``reason``), or None when not paused."""
    path = Path(memory_dir) / PAUSE_FILE
    try:
        data = json.loads(open_regular(path, max_bytes=MAX_STAMP_BYTES).decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError, StoreError):
        return {"paused_at": None, "reason": "unreadable .paused file"}
    return data if isinstance(data, dict) else {"paused_at": None, "reason": None}


def pause(memory_dir: str | os.PathLike[str], *, reason: str | None = None, now: datetime | None = None) -> None:
    """Close the ``enabled`` gate of one directory until :func:`resume` (survives restarts)."""
    directory = Path(memory_dir)
    if not directory.is_dir():
        raise StoreError(f"{directory}: not a directory, cannot pause it")
    when = _aware(now or datetime.now(UTC)).astimezone(UTC)
    body = {"paused_at": when.strftime("%Y-%m-%dT%H:%M:%SZ"), "reason": reason}
    replace_atomic(directory / PAUSE_FILE, (json.dumps(body) + "\n").encode("utf-8"))


def resume(memory_dir: str | os.PathLike[str]) -> None:
    """Reopen the ``enabled`` gate; resuming a directory that is not paused is a no-op."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(Path(memory_dir) / PAUSE_FILE)


# --------------------------------------------------------------------------- stateful helpers


class ScanThrottle:
    """At most one scan per key per ``window`` seconds, however many hints arrive.

    ``hint(key)`` answers whether to scan now; a hint inside the window is remembered, and
    :meth:`due` hands the key back once its window has passed, so the last change is never
    lost, only delayed. Thread-safe; the clock is injected (seconds, monotonic).
    """

    def __init__(
        self,
        window: float,
        clock: Callable[[], float],
        *,
        seed: Callable[[Hashable], float | None] | None = None,
    ) -> None:
        """``seed(key)`` says how many seconds ago ``key`` was last scanned by an earlier
        process (None: never), so a restart does not reopen every window at once."""
        self.window = window
        self._clock = clock
        self._seed = seed
        self._last: dict[Hashable, float] = {}
        self._pending: set[Hashable] = set()
        self._lock = threading.Lock()

    def _seeded(self, key: Hashable, now: float) -> float | None:
        last = self._last.get(key)
        if last is None and self._seed is not None:
            ago = self._seed(key)
            if ago is not None:
                last = self._last[key] = now - max(0.0, ago)
        return last

    def hint(self, key: Hashable) -> bool:
        now = self._clock()
        with self._lock:
            last = self._seeded(key, now)
            if last is None or now - last >= self.window:
                self._last[key] = now
                self._pending.discard(key)
                return True
            self._pending.add(key)
            return False

    def due(self) -> list[Hashable]:
        """Keys with a remembered hint whose window has passed (marked as scanned now)."""
        now = self._clock()
        out: list[Hashable] = []
        with self._lock:
            for key in list(self._pending):
                if now - self._last.get(key, -float("inf")) >= self.window:
                    self._pending.discard(key)
                    self._last[key] = now
                    out.append(key)
        return out

    def last_scan(self, key: Hashable) -> float | None:
        with self._lock:
            return self._last.get(key)

    def forget(self, key: Hashable) -> None:
        with self._lock:
            self._last.pop(key, None)
            self._pending.discard(key)


class GateTracker:
    """Remembers each directory's last decision and logs ``gate.changed`` only on a change.

    A change is a different (open, first closed gate) pair; the countdown in a reason ticking
    down is not a change, so a quiet daemon writes no gate lines.
    """

    def __init__(self, log: EventLogger) -> None:
        self._log = log
        self._last: dict[str, tuple[bool, str | None]] = {}
        self._lock = threading.Lock()

    def observe(self, memory_dir: str, decision: GateDecision) -> bool:
        key = (decision.open, decision.first_closed)
        with self._lock:
            if self._last.get(memory_dir) == key:
                return False
            self._last[memory_dir] = key
        gate = decision.first_closed or "all"
        self._log.info(
            "gate.changed",
            memory_dir=memory_dir,
            open=decision.open,
            gate=gate,
            reason=decision.reason,
        )
        return True

    def forget(self, memory_dir: str) -> None:
        with self._lock:
            self._last.pop(memory_dir, None)
