"""What the daemon requires of the job-execution module: the :class:`Work` protocol.

The daemon runs jobs, gate scans and dreams through a *work module* — ``dreamd.jobs.work`` in
production, a stand-in in tests that exercise the daemon's mechanics on their own
(``tests/test_daemon_stub.py``). Both satisfy :class:`Work` as modules (PEP 544: a module can
implement a protocol). The protocol is generic in the module's context type ``C``: the daemon
builds one context per config (``work.Context.create``) and hands it back to the same module's
functions unchanged, so it needs nothing from the context but a store per directory (for
reconciles) — and the real module keeps its richer :class:`dreamd.jobs.work.Context`.

Types only: importing this module costs nothing beyond ``typing``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from datetime import datetime
    from pathlib import Path

    from dreamd.config import Config
    from dreamd.jobs.gates import DirState
    from memory.spool.jobs import Job
    from memory.store.transaction import MemoryStore

__all__ = ["C", "ContextFactory", "DreamOutcome", "Work", "WorkContext"]


class WorkContext(Protocol):
    """What the daemon itself asks of a work context: the store of a memory directory."""

    def store(self, memory_dir: str | Path) -> MemoryStore: ...


C = TypeVar("C", bound=WorkContext)
C_co = TypeVar("C_co", bound=WorkContext, covariant=True)


class ContextFactory(Protocol[C_co]):
    """``work.Context``: builds the context every call of one config shares."""

    def create(self, config: Config) -> C_co: ...


class DreamOutcome(Protocol):
    """What the daemon logs and backs off on after a dream (:class:`dreamd.jobs.work.DreamResult`)."""

    @property
    def status(self) -> str: ...

    @property
    def reason(self) -> str | None: ...

    @property
    def generation(self) -> int | None: ...


class Work(Protocol[C]):
    """The job-execution module: ``execute`` a validated job, judge a directory's gate inputs,
    ``dream`` once. Errors follow :mod:`memory.errors` (TransientError → defer, PermanentError →
    fail); a dream reports its outcome in :attr:`DreamOutcome.status` instead of raising."""

    @property
    def Context(self) -> ContextFactory[C]: ...  # the module attribute is a class

    def execute(self, job: Job, ctx: C) -> str: ...

    def dir_state(self, memory_dir: Path, ctx: C, *, last_scan_at: datetime | None) -> DirState: ...

    def dream(self, memory_dir: Path, ctx: C) -> DreamOutcome:
        """Takes the local lease and, for a directory synced with a team, the team's
        (:func:`dreamd.sync.lease.team_dream_lease`), and commits only while both are held."""
        ...
