"""A directory's gate inputs (:class:`dreamd.jobs.gates.DirState`), read from disk.

Kept apart from :mod:`dreamd.jobs.work` so ``dreamd status`` builds them with the daemon's own
function (same ledger, same lease judgement, same counts) without importing the job and dream
logic, the model layer and the logging stack it never uses.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from dreamd.jobs.gates import DirState, is_paused
from memory.store.locks import LEASE_NAME, LeaseInfo
from memory.store.manifest import parse_iso

TYPE_CHECKING = False  # not typing's: importing typing is a start-up cost (issue 20)
if TYPE_CHECKING:
    from typing import Protocol

    from dreamd.config import Config
    from memory.store.transaction import MemoryStore

__all__ = ["StateSource", "dir_state", "lease_state"]


if TYPE_CHECKING:  # a protocol for the type checker only: typing is not imported at run time

    class StateSource(Protocol):
        """What :func:`dir_state` reads through: the job context, or status's read-only stand-in."""

        @property
        def config(self) -> Config: ...
        @property
        def clock(self) -> Callable[[], datetime]: ...

        def store(self, memory_dir: str | Path) -> MemoryStore: ...
        def spent_today(self, memory_dir: str | Path) -> int: ...


def lease_state(memory_dir: Path, *, stale_after: float, now: datetime) -> tuple[str, str | None]:
    info = LeaseInfo.read(memory_dir / LEASE_NAME)
    if info is None:
        return "free", None
    import socket  # only a held lease needs the host name

    reason = info.stale_reason(now=now, stale_after=stale_after, host=socket.gethostname())
    return ("stale" if reason else "held"), info.describe()


def dir_state(memory_dir: Path, ctx: StateSource, *, last_scan_at: datetime | None) -> DirState:
    store = ctx.store(memory_dir)
    manifest = store.read()
    lease, holder = lease_state(memory_dir, stale_after=ctx.config.gates.lock_stale_after, now=ctx.clock())
    return DirState(
        enabled=not is_paused(memory_dir),
        consolidated_at=parse_iso(manifest.consolidated_at),
        last_scan_at=last_scan_at,
        record_count=len(manifest.records),
        sessions_since=len(manifest.sessions_since_consolidation),
        spent_today=ctx.spent_today(memory_dir),
        lease=lease,
        lease_holder=holder,
    )
