"""Model usage accounting per memory directory, and the daily token budget (DESIGN §6, §8).

One small JSON file (default ``$XDG_STATE_HOME/dreamd/usage.json``), shared by every process
of one daemon installation, read-modified-written under a filelock and replaced atomically
(:func:`memory.fsutil.replace_atomic`), so concurrent workers never lose an update and a crash
never leaves half a file. Shape (format 1)::

    {"format": 1, "dirs": {"/abs/memory/dir": {
        "totals": {"calls": 3, "input_tokens": …, "output_tokens": …,
                   "cache_read_tokens": …, "cache_write_tokens": …},
        "days": {"2026-11-29": 1234}}}}

``days`` holds the tokens spent per UTC day (:attr:`memory.model.llm.Usage.total`: input, output,
cache reads and cache writes all count against the budget) and is pruned to the last
:data:`KEEP_DAYS` days on every write, so the file stays bounded. Accounting must never stop
the daemon: an unreadable or corrupt ledger is set aside (``usage.json.corrupt``) and started
afresh, with a warning.

The daemon's ledger (``flush_after``) adds its calls up in memory and writes them at most once a
second, not once per call: that rewrite, with its two fsyncs, was part of every extraction job.
``spent_today`` and ``totals`` of the same object include what is not written yet; other
processes see it within the second; a SIGKILL loses at most that second's accounting.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dreamd.logs import get_logger
from memory.errors import LockTimeout
from memory.fsutil import replace_atomic

TYPE_CHECKING = False  # not typing's: importing typing is a start-up cost (issue 20)
if TYPE_CHECKING:
    from typing import Any

    from memory.model.llm import Usage

KEEP_DAYS = 7
FORMAT = 1
TOTAL_KEYS = ("calls", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")

log = get_logger("dreamd.models.usage")


def default_ledger_path(env: dict[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/dreamd/usage.json`` (``~/.local/state`` when the variable is unset)."""
    environ = os.environ if env is None else env
    state = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "dreamd" / "usage.json"


def _utc_day(now: datetime) -> str:
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return now.astimezone(UTC).date().isoformat()


def _empty_totals() -> dict[str, int]:
    return dict.fromkeys(TOTAL_KEYS, 0)


def _add(entry: dict[str, Any], delta: dict[str, Any]) -> None:
    for key in TOTAL_KEYS:
        entry["totals"][key] = int(entry["totals"].get(key, 0)) + delta["totals"][key]
    for day, tokens in delta["days"].items():
        entry["days"][day] = int(entry["days"].get(day, 0)) + tokens


class UsageLedger:
    """Per-directory usage totals and per-UTC-day spend, persisted in one JSON file."""

    def __init__(self, path: Path | None = None, *, lock_timeout: float = 10.0, flush_after: float = 0.0) -> None:
        """``flush_after`` > 0 (the daemon): calls are added up in memory and written at most
        that often (seconds), by the next call or a timer, and at exit."""
        self.path = default_ledger_path() if path is None else Path(path)
        self._lock: Any = None  # a filelock.FileLock, made at the first write (readers never lock)
        self._lock_timeout = lock_timeout
        self.flush_after = flush_after
        self._pending: dict[str, dict[str, Any]] = {}
        """Calls not written yet, per directory: ``{"totals": …, "days": …}`` as in the file."""
        self._mutex = threading.Lock()
        self._flushed_at = float("-inf")
        self._timer: threading.Timer | None = None
        self._atexit = False

    def record(self, memory_dir: str, usage: Usage, *, now: datetime) -> None:
        """Add one model call's usage to ``memory_dir``'s totals and to today's (UTC) spend."""
        with self._mutex:
            entry = self._pending.setdefault(memory_dir, {"totals": _empty_totals(), "days": {}})
            totals = entry["totals"]
            totals["calls"] += 1
            totals["input_tokens"] += usage.input_tokens
            totals["output_tokens"] += usage.output_tokens
            totals["cache_read_tokens"] += usage.cache_read_input_tokens
            totals["cache_write_tokens"] += usage.cache_creation_input_tokens
            day = _utc_day(now)
            entry["days"][day] = int(entry["days"].get(day, 0)) + usage.total
            due = time.monotonic() - self._flushed_at >= self.flush_after
            if not due and self._timer is None:
                self._timer = threading.Timer(self.flush_after, self._flush_quietly)
                self._timer.daemon = True
                self._timer.start()
            if not due and not self._atexit:
                atexit.register(self._flush_quietly)
                self._atexit = True
        if due:
            self.flush()

    def flush(self) -> None:
        """Write the calls added up in memory (one read-modify-write for all of them)."""
        with self._mutex:
            pending, self._pending = self._pending, {}
            self._flushed_at = time.monotonic()
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        if not pending:
            return
        try:
            self._write(pending)
        except BaseException:
            with self._mutex:  # not written: kept for the next flush
                for memory_dir, entry in pending.items():
                    _add(self._pending.setdefault(memory_dir, {"totals": _empty_totals(), "days": {}}), entry)
            raise

    def _flush_quietly(self) -> None:
        try:
            self.flush()
        except Exception as exc:  # accounting must never stop the daemon
            log.warning("usage.ledger_failed", memory_dir=None, error=f"{self.path}: {exc}")

    def _write(self, pending: dict[str, dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with self._locked():
            data = self._load(set_aside=True)
            dirs: dict[str, Any] = data["dirs"]
            for memory_dir, delta in pending.items():
                _add(dirs.setdefault(memory_dir, {"totals": _empty_totals(), "days": {}}), delta)
            newest = max((d for delta in pending.values() for d in delta["days"]), default=None)
            if newest is not None:
                oldest = (datetime.fromisoformat(newest) - timedelta(days=KEEP_DAYS - 1)).date().isoformat()
                for other in dirs.values():
                    other["days"] = {d: n for d, n in other["days"].items() if d >= oldest}
            payload = json.dumps(data, indent=1, sort_keys=True).encode() + b"\n"
            replace_atomic(self.path, payload, mode=0o600)

    def _unwritten(self, memory_dir: str) -> dict[str, Any] | None:
        with self._mutex:
            entry = self._pending.get(memory_dir)
            return None if entry is None else {"totals": dict(entry["totals"]), "days": dict(entry["days"])}

    def spent_today(self, memory_dir: str, *, now: datetime) -> int:
        """Tokens spent for ``memory_dir`` on ``now``'s UTC day (0 when nothing is recorded),
        with this process's calls not written yet."""
        entry = self._load()["dirs"].get(memory_dir)
        day = _utc_day(now)
        spent = 0 if entry is None else int(entry["days"].get(day, 0))
        unwritten = self._unwritten(memory_dir)
        return spent + (int(unwritten["days"].get(day, 0)) if unwritten else 0)

    def totals(self, memory_dir: str) -> dict[str, int]:
        """Lifetime totals: calls, input/output tokens, cache read/write tokens."""
        entry = self._load()["dirs"].get(memory_dir)
        out = _empty_totals() if entry is None else dict(entry["totals"])
        unwritten = self._unwritten(memory_dir)
        if unwritten:
            for key in TOTAL_KEYS:
                out[key] += unwritten["totals"][key]
        return out

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        if self._lock is None:
            from filelock import FileLock

            self._lock = FileLock(str(self.path) + ".lock", timeout=self._lock_timeout)
        try:
            self._lock.acquire()
        except TimeoutError:
            raise LockTimeout(
                f"{self.path}: usage ledger lock busy for {self._lock_timeout}s"
            ) from None
        try:
            yield
        finally:
            self._lock.release()

    def _load(self, *, set_aside: bool = False) -> dict[str, Any]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {"format": FORMAT, "dirs": {}}
        try:
            data = json.loads(raw)
            if not isinstance(data, dict) or not isinstance(data.get("dirs"), dict):
                raise ValueError("not a usage ledger")
            for entry in data["dirs"].values():
                totals = entry["totals"]
                for key in TOTAL_KEYS:
                    totals[key] = int(totals.get(key, 0))
                entry["days"] = {str(d): int(n) for d, n in entry["days"].items()}
            return data
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            aside = self.path.with_name(self.path.name + ".corrupt")
            log.warning(
                "usage.ledger_corrupt",
                path=str(self.path),
                moved_to=str(aside) if set_aside else None,
                reason=f"{type(exc).__name__}: {exc}",
            )
            if set_aside:
                with contextlib.suppress(OSError):
                    os.replace(self.path, aside)
            return {"format": FORMAT, "dirs": {}}
