"""A stand-in for ``dreamd.jobs.work`` so the daemon's mechanics are tested on their own.

Same API as ``dreamd.jobs.work`` (``Context.create``, ``execute``, ``dir_state``, ``dream``) over the
real :class:`~memory.store.transaction.MemoryStore`: every extract job commits one record named after the
job (idempotent through ``applied_jobs``), a dream merges every record into one. Environment
knobs for crash tests: ``STUB_JOB_DELAY`` (seconds each job sleeps before committing),
``STUB_EXEC_LOG`` (a file each execution appends its job id to), ``STUB_TRANSIENT`` (a job id
prefix that fails transiently), ``STUB_HANG_SESSION`` (jobs of that session hang: for
``STUB_HANG_SECONDS`` seconds, then try to commit, or for ever without it: a poison job).
Commits go through the daemon's commit guard, as ``dreamd.jobs.work``'s do. No tests live here.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dreamd.config import Config
from dreamd.jobs.budget import commit_guard
from dreamd.jobs.gates import DirState, is_paused
from memory.errors import TransientError
from memory.store.manifest import parse_iso
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore


@dataclass
class Context:
    config: Config

    @classmethod
    def create(cls, config: Config) -> Context:
        return cls(config)

    def store(self, memory_dir: str | Path) -> MemoryStore:
        return MemoryStore(memory_dir)


@dataclass(frozen=True)
class DreamResult:
    status: str
    reason: str | None = None
    generation: int | None = None


def _slug(job_id: str) -> str:
    return "job-" + "".join(c for c in job_id.lower() if c.isalnum())[-40:]


def execute(job: Any, ctx: Context) -> str:
    log = os.environ.get("STUB_EXEC_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(job.id + "\n")
    delay = float(os.environ.get("STUB_JOB_DELAY", "0") or 0)
    if delay:
        time.sleep(delay)
    if job.session_id and job.session_id == os.environ.get("STUB_HANG_SESSION"):
        hang = os.environ.get("STUB_HANG_SECONDS")
        if hang:
            time.sleep(float(hang))
        else:
            while True:
                time.sleep(60)
    transient = os.environ.get("STUB_TRANSIENT")
    if transient and job.id.startswith(transient):
        raise TransientError(f"stub: model timeout for {job.id}")
    turns = len(job.transcript.content.splitlines()) if job.transcript else 0
    rec = make_record(_slug(job.id), "project", f"Session {job.session_id} had {turns} lines", f"job {job.id}")
    with commit_guard():
        result = ctx.store(job.memory_dir).commit(
            Change(add=[rec], actor="job", job_id=job.id, session_id=job.session_id)
        )
    return "duplicate" if result.duplicate else f"added {len(result.added)}"


def dir_state(memory_dir: Path, ctx: Context, *, last_scan_at: datetime | None) -> DirState:
    m = ctx.store(memory_dir).read()
    return DirState(
        enabled=not is_paused(memory_dir),
        consolidated_at=parse_iso(m.consolidated_at),
        last_scan_at=last_scan_at,
        record_count=len(m.records),
        sessions_since=len(m.sessions_since_consolidation),
        spent_today=0,
        lease="free",
    )


def dream(memory_dir: Path, ctx: Context, *, force: bool = False, dry_run: bool = False) -> DreamResult:
    store = ctx.store(memory_dir)
    m = store.read()
    if len(m.records) < 2:
        return DreamResult("nothing")
    names = [e.name for e in m.records]
    merged = make_record("merged", "project", f"{len(names)} sessions merged", "\n".join(sorted(names)))
    result = store.commit(
        Change(
            merges=[(names, merged)],
            base={e.name: e.sha256 for e in m.records},
            consolidated=True,
            actor="dream",
        )
    )
    return DreamResult("applied", generation=result.generation)


def now() -> datetime:
    return datetime.now(UTC)
