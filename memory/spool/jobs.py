"""Spool jobs (DESIGN §4): validating one before anything runs.

The job format itself (format 1, built by :func:`build_job`, ids from :func:`new_job_id`) is
defined in :mod:`memory.spool.jobformat`, which agents import to submit, and re-exported here.

:func:`validate_job` is the daemon's gate: whatever bytes sit in ``new/`` either become a
frozen :class:`Job` or raise :class:`JobRejected` with a one-line reason (the job then goes to
``failed/``). It never raises anything else, whatever the input: non-UTF-8, deep nesting,
huge numbers, lone surrogates and wrong types all become reasons. Keys a kind does not use are
ignored, so a newer writer's extra keys do not break an older daemon.

``memory_dir`` must resolve (``os.path.realpath``: ``..`` and symlinks followed) inside one of
the configured roots (:mod:`memory.roots`).

This is the daemon's side (it imports dataclasses); ``memory.store.records`` and its YAML are loaded
only when a ``remember`` job is validated.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.errors import JobRejected
from memory.redact import redact
from memory.roots import dir_allowed
from memory.spool.jobformat import (
    FORMAT,
    JOB_ID_RE,
    KINDS,
    MAX_JOB_BYTES,
    NAME_RE,
    SESSION_ID_RE,
    TRANSCRIPT_FORMATS,
    build_job,
    encode_job,
    new_job_id,
    safe_session_id,
    utc_iso,
)

if TYPE_CHECKING:
    from memory.store.records import Record

__all__ = [
    "FORMAT",
    "JOB_ID_RE",
    "KINDS",
    "MAX_JOB_BYTES",
    "SESSION_ID_RE",
    "TRANSCRIPT_FORMATS",
    "Job",
    "Transcript",
    "build_job",
    "encode_job",
    "new_job_id",
    "redact_records",
    "utc_iso",
    "validate_job",
]

MAX_RECORDS = 1000
MAX_NAMES = 10_000


@dataclass(frozen=True)
class Transcript:
    format: str
    content: str


@dataclass(frozen=True)
class Job:
    """A validated job. ``memory_dir`` is the resolved real path that passed the roots check."""

    id: str
    kind: str
    memory_dir: Path
    session_id: str | None
    submitted_at: str
    transcript: Transcript | None = None
    records: tuple[Record, ...] = ()
    names: tuple[str, ...] = ()
    force: bool = False
    adopt: bool = False
    """An extract for Claude Code's auto-memory directory: adopt it if it is not managed yet."""
    redacted: tuple[str, ...] = ()
    """Secret kinds :func:`memory.redact.redact` replaced during validation (for the log)."""


# --- validation -------------------------------------------------------------------------------


def _show(value: Any) -> str:
    """A value as it looked in the JSON, shortened for a one-line reason."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _text(value: Any, what: str, *, max_chars: int | None = None) -> str:
    if not isinstance(value, str):
        raise JobRejected(f"{what} must be a string, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise JobRejected(f"{what} is not valid Unicode (lone surrogate)") from None
    if max_chars is not None and len(value) > max_chars:
        raise JobRejected(f"{what} is over {max_chars} characters")
    return value


def _session_id(value: Any) -> str | None:
    if value is None:
        return None
    sid = _text(value, "session_id", max_chars=128)
    if not SESSION_ID_RE.match(sid):
        raise JobRejected(f"session_id {redact(sid[:40])[0]!r} must match {SESSION_ID_RE.pattern}")
    return safe_session_id(sid)


def _memory_dir(value: Any, roots: Sequence[str]) -> Path:
    raw = _text(value, "memory_dir", max_chars=4096)
    if "\x00" in raw:
        raise JobRejected("memory_dir contains a NUL byte")
    if not os.path.isabs(raw):
        raise JobRejected(f"memory_dir {raw!r} is not an absolute path")
    real = os.path.realpath(raw)
    if not dir_allowed(real, roots):
        shown = raw if real == raw else f"{raw} (resolves to {real})"
        raise JobRejected(f"memory_dir {shown} is outside the configured roots")
    return Path(real)


def _records(value: Any) -> tuple[Record, ...]:
    from memory.errors import RecordError
    from memory.store.records import OPTIONAL_FIELDS, validate_fields

    if not isinstance(value, list) or not value:
        raise JobRejected("records must be a non-empty list")
    if len(value) > MAX_RECORDS:
        raise JobRejected(f"records: more than {MAX_RECORDS}")
    out: list[Record] = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        if isinstance(item, dict):
            for key, field_value in item.items():
                if isinstance(field_value, str):
                    _text(field_value, f"records[{i}].{key}")
        try:
            record = validate_fields(item, where=f"records[{i}]", optional=OPTIONAL_FIELDS)
        except RecordError as exc:
            raise JobRejected(str(exc)) from None
        if record.name in seen:
            raise JobRejected(f"records[{i}]: name {record.name!r} appears twice")
        seen.add(record.name)
        out.append(record)
    return tuple(out)


def redact_records(records: Sequence[Record]) -> tuple[tuple[Record, ...], list[str]]:
    """Records with secrets replaced in every field and no part of one in a name, and the kinds
    found (:func:`memory.store.redaction.redact_record`)."""
    from memory.store.redaction import redact_record

    out: list[Record] = []
    found: list[str] = []
    for record in records:
        clean, kinds = redact_record(record)
        found.extend(k for k in kinds if k not in found)
        out.append(clean)
    return tuple(out), found


def _names(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise JobRejected("names must be a non-empty list")
    if len(value) > MAX_NAMES:
        raise JobRejected(f"names: more than {MAX_NAMES}")
    out: list[str] = []
    for i, item in enumerate(value):
        name = _text(item, f"names[{i}]", max_chars=64)
        if not NAME_RE.match(name):
            raise JobRejected(f"names[{i}] {name!r} is not a record name")
        if name not in out:
            out.append(name)
    return tuple(out)


def _transcript(value: Any) -> Transcript:
    if not isinstance(value, dict):
        raise JobRejected("transcript must be an object with format and content")
    fmt = value.get("format", "auto")
    if fmt not in TRANSCRIPT_FORMATS:
        raise JobRejected(
            f"transcript.format {_show(fmt)} is not one of {', '.join(TRANSCRIPT_FORMATS)}"
        )
    content = _text(value.get("content"), "transcript.content")
    return Transcript(format=str(fmt), content=content)


def parse_job_object(raw: bytes, *, max_bytes: int = MAX_JOB_BYTES) -> dict[str, Any]:
    """Decode job bytes into a JSON object, or raise JobRejected saying why not."""
    if len(raw) > max_bytes:
        raise JobRejected(f"job is over the {max_bytes}-byte limit (max_job_bytes)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JobRejected(f"job is not valid UTF-8 (byte {exc.start})") from None
    try:
        obj = json.loads(text)
    except RecursionError:
        raise JobRejected("job JSON is nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, and int-digit limits
        first = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise JobRejected(f"job is not valid JSON: {first}") from None
    if not isinstance(obj, dict):
        raise JobRejected(f"job must be a JSON object, got {type(obj).__name__}")
    return obj


def validate_job(raw: bytes, *, roots: Sequence[str], max_bytes: int = MAX_JOB_BYTES) -> Job:
    """Validate job bytes completely; return a :class:`Job` or raise :class:`JobRejected`.

    Checks, in order: size, UTF-8, JSON, object shape, ``format == 1``, ``id``, ``kind``,
    ``memory_dir`` (absolute, real path inside ``roots``), ``session_id`` shape, then the
    fields the kind needs. Never raises anything but JobRejected.
    """
    try:
        return _validate(raw, roots=roots, max_bytes=max_bytes)
    except JobRejected:
        raise
    except RecursionError:
        raise JobRejected("job JSON is nested too deeply") from None
    except Exception as exc:  # a validator bug must not crash the consumer
        raise JobRejected(
            f"job could not be validated: {type(exc).__name__}: {exc}"[:300]
        ) from None


def _validate(raw: bytes, *, roots: Sequence[str], max_bytes: int) -> Job:
    obj = parse_job_object(raw, max_bytes=max_bytes)
    fmt = obj.get("format")
    if fmt != FORMAT or isinstance(fmt, bool):
        raise JobRejected(f"job format {_show(fmt)} is not supported (expected {FORMAT})")
    job_id = _text(obj.get("id"), "id", max_chars=128)
    if not JOB_ID_RE.match(job_id):
        raise JobRejected(f"id {job_id[:40]!r} must match {JOB_ID_RE.pattern}")
    kind = obj.get("kind")
    if kind not in KINDS:
        raise JobRejected(f"kind {_show(kind)} is not one of {', '.join(KINDS)}")
    memory_dir = _memory_dir(obj.get("memory_dir"), roots)
    session_id = _session_id(obj.get("session_id"))
    submitted_at = obj.get("submitted_at")
    submitted = "" if submitted_at is None else _text(submitted_at, "submitted_at", max_chars=64)
    common: dict[str, Any] = {
        "id": job_id,
        "kind": kind,
        "memory_dir": memory_dir,
        "session_id": session_id,
        "submitted_at": submitted,
    }
    if kind == "extract":
        transcript = _transcript(obj.get("transcript"))
        content, kinds = redact(transcript.content)
        adopt = obj.get("adopt", False)
        if not isinstance(adopt, bool):
            raise JobRejected(f"adopt must be true or false, got {type(adopt).__name__}")
        return Job(
            **common,
            transcript=Transcript(transcript.format, content),
            redacted=tuple(kinds),
            adopt=adopt,
        )
    if kind == "remember":
        records, kinds = redact_records(_records(obj.get("records")))
        return Job(**common, records=records, redacted=tuple(kinds))
    if kind == "forget":
        return Job(**common, names=_names(obj.get("names")))
    force = obj.get("force", False)
    if not isinstance(force, bool):
        raise JobRejected(f"force must be true or false, got {type(force).__name__}")
    return Job(**common, force=force)
