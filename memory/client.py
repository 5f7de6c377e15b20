"""The thin client agents call: enqueue work for the daemon through the spool (DESIGN §4).

Each call validates what it can locally (absolute ``memory_dir``, session id shape, transcript
format, record fields), redacts secrets from everything it is about to write (the daemon
redacts again), writes one self-contained job durably and returns its id. Nothing here talks
to the daemon or waits for it: the spool is the hand-off, and a job written is a job that will
be processed (or land in ``failed/`` with a reason).

Import cost matters: hooks call this at every turn. This module imports no anthropic,
watchdog, apscheduler or filelock, and YAML (via ``memory.store.records``) only for ``remember``.
The spool is ``spool=`` (a path or a :class:`~memory.spool.queue.Spool`), else ``$DREAMD_SPOOL``,
else ``$XDG_STATE_HOME/dreamd/spool``; the client does not read the daemon's config file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from memory.errors import JobRejected
from memory.redact import redact
from memory.spool.jobformat import (
    MAX_JOB_BYTES,
    NAME_RE,
    SESSION_ID_RE,
    TRANSCRIPT_FORMATS,
    build_job,
    new_job_id,
    safe_session_id,
)
from memory.spool.queue import Spool

SpoolArg = Spool | str | os.PathLike[str] | None

_spools: dict[str, Spool] = {}


def _spool(spool: SpoolArg) -> Spool:
    if isinstance(spool, Spool):
        return spool
    s = Spool(spool)
    key = os.fspath(s.root)
    cached = _spools.get(key)
    if cached is None:
        cached = _spools[key] = s
    return cached


def _memory_dir(memory_dir: str | os.PathLike[str]) -> str:
    path = os.fspath(memory_dir)
    if not isinstance(path, str) or not path or "\x00" in path:
        raise JobRejected(f"memory_dir {memory_dir!r} is not a usable path")
    if not os.path.isabs(path):
        raise JobRejected(f"memory_dir {path!r} must be an absolute path")
    return path


def _session(session_id: str | None) -> str | None:
    if session_id is not None and not SESSION_ID_RE.match(session_id):
        raise JobRejected(f"session_id {redact(session_id[:40])[0]!r} must match {SESSION_ID_RE.pattern}")
    return None if session_id is None else safe_session_id(session_id)


def read_transcript(path: Path, max_bytes: int) -> bytes:
    """A transcript file's bytes, refused (JobRejected, one line) when over ``max_bytes``: a
    regular file by its size before a byte is read, a pipe (``<(…)``, stdin) after
    ``max_bytes`` + 1. Whatever a job carries must fit in one job, so nothing larger could
    be submitted anyway; this only says so before paying for it."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if st.st_size > max_bytes:
                raise JobRejected(f"transcript {path}: {st.st_size} bytes, over the {max_bytes}-byte job limit; not read")
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise JobRejected(f"transcript {path}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise JobRejected(f"transcript {path}: over the {max_bytes}-byte job limit; not read")
    return data


def _content(transcript: str | bytes | Path, max_bytes: int = MAX_JOB_BYTES) -> str:
    if isinstance(transcript, Path):
        transcript = read_transcript(transcript, max_bytes)
    if isinstance(transcript, bytes):
        return transcript.decode("utf-8", errors="replace")
    if isinstance(transcript, str):
        return transcript
    raise JobRejected(f"transcript must be str, bytes or Path, got {type(transcript).__name__}")


def _write(spool: SpoolArg, job: dict[str, object], max_job_bytes: int = MAX_JOB_BYTES) -> str:
    return _spool(spool).submit(job, max_bytes=max_job_bytes)


def submit(
    transcript: str | bytes | Path,
    *,
    memory_dir: str | os.PathLike[str],
    session_id: str | None = None,
    format: str = "auto",
    spool: SpoolArg = None,
    max_job_bytes: int = MAX_JOB_BYTES,
) -> str:
    """Enqueue a transcript for extraction into ``memory_dir``; return the job id.

    ``transcript`` is the content itself (``str``/``bytes``) or a :class:`~pathlib.Path` to
    read now: the job carries the content, the daemon never opens the path.
    """
    mdir = _memory_dir(memory_dir)
    if format not in TRANSCRIPT_FORMATS:
        raise JobRejected(
            f"transcript format {format!r} is not one of {', '.join(TRANSCRIPT_FORMATS)}"
        )
    content, _kinds = redact(_content(transcript, max_job_bytes))
    job = build_job(
        "extract",
        job_id=new_job_id(),
        memory_dir=mdir,
        session_id=_session(session_id),
        transcript=(format, content),
    )
    return _write(spool, job, max_job_bytes)


def submit_parts(
    parts: Sequence[tuple[str, str | None, datetime]],
    *,
    memory_dir: str | os.PathLike[str],
    format: str = "auto",
    spool: SpoolArg = None,
    max_job_bytes: int = MAX_JOB_BYTES,
    adopt: bool = False,
    redacted: bool = False,
) -> list[str]:
    """Enqueue consecutive parts of one transcript, in order; return their job ids.

    Each part is ``(content, session_id, time)``: job ids sort by ``time``, so give later
    parts later times and the daemon takes them in order. ``adopt`` marks the directory as
    Claude Code's auto-memory directory, which the daemon adopts on first use. A part that
    cannot be written raises; the parts before it stay queued (each is a whole turn range).
    ``redacted`` says the caller already passed the content through :func:`memory.redact.redact`
    (the hook redacts each transcript line once and caches it), so it is not scanned again.
    """
    mdir = _memory_dir(memory_dir)
    if format not in TRANSCRIPT_FORMATS:
        raise JobRejected(
            f"transcript format {format!r} is not one of {', '.join(TRANSCRIPT_FORMATS)}"
        )
    ids = []
    for content, session_id, at in parts:
        clean = content if redacted else redact(content)[0]
        job = build_job(
            "extract",
            job_id=new_job_id(at),
            memory_dir=mdir,
            session_id=_session(session_id),
            transcript=(format, clean),
            adopt=adopt,
        )
        ids.append(_write(spool, job, max_job_bytes))
    return ids


def remember(
    memory_dir: str | os.PathLike[str],
    *,
    name: str,
    type: str,
    description: str,
    body: str,
    importance: float | None = None,
    expires: str | None = None,
    spool: SpoolArg = None,
) -> str:
    """Enqueue one record to add to ``memory_dir`` (fields checked now; RecordError if bad).

    ``importance`` (0–1) raises the record in recall ties and protects it from being dropped;
    ``expires`` (``YYYY-MM-DD``) lets a dream drop it after that day.
    """
    from memory.spool.jobs import redact_records
    from memory.store.records import OPTIONAL_FIELDS, validate_fields

    mdir = _memory_dir(memory_dir)
    fields: dict[str, object] = {"name": name, "type": type, "description": description, "body": body}
    fields.update({k: v for k, v in (("importance", importance), ("expires", expires)) if v is not None})
    record = validate_fields(fields, where="remember", optional=OPTIONAL_FIELDS)
    (clean,), _kinds = redact_records([record])
    job = build_job("remember", job_id=new_job_id(), memory_dir=mdir, records=[clean.job_fields()])
    return _write(spool, job)


def forget(
    memory_dir: str | os.PathLike[str], names: Sequence[str], *, spool: SpoolArg = None
) -> str:
    """Enqueue removal of the named records from ``memory_dir``."""
    mdir = _memory_dir(memory_dir)
    wanted = [names] if isinstance(names, str) else list(names)
    if not wanted:
        raise JobRejected("forget: no record names given")
    for n in wanted:
        if not isinstance(n, str) or not NAME_RE.match(n):
            raise JobRejected(f"forget: {n!r} is not a record name like 'prefers-tabs'")
    job = build_job(
        "forget", job_id=new_job_id(), memory_dir=mdir, names=list(dict.fromkeys(wanted))
    )
    return _write(spool, job)


def request_consolidation(
    memory_dir: str | os.PathLike[str], *, force: bool = False, spool: SpoolArg = None
) -> str:
    """Ask the daemon to dream over ``memory_dir`` (``force`` bypasses the gates, not the lease)."""
    mdir = _memory_dir(memory_dir)
    job = build_job("consolidate", job_id=new_job_id(), memory_dir=mdir, force=bool(force))
    return _write(spool, job)
