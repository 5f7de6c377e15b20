"""The spool job format (DESIGN §4, format 1): ids, building and encoding a job.

A job is one self-contained JSON object; the transcript travels inside it, so the daemon never
opens a path a job names::

    {"format": 1, "id": "20261129T102205.123456Z-3f9c8a1b2c", "kind": "extract",
     "memory_dir": "/home/u/code/app/.memory", "session_id": "4d5611e5-…" | null,
     "submitted_at": "2026-11-29T10:22:05.123456Z",
     "transcript": {"format": "auto", "content": "…"}}        # extract
     "records": [{"name", "type", "description", "body"}, …]   # remember
     "names": ["prefers-tabs", …]                              # forget
     "force": false                                            # consolidate (optional)
     "adopt": true        # extract (optional): the hook's zero-config target, Claude Code's
                          # auto-memory directory: the daemon adopts it on first use

A writer puts only the keys its kind uses; a reader ignores keys it does not know. Validation
lives in :mod:`memory.spool.jobs` (the daemon's side). This module is on every agent's submit path,
so it imports only the standard library's light modules (no typing, no dataclasses).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs agents ~15 ms
if TYPE_CHECKING:
    from typing import Any

FORMAT = 1
KINDS: tuple[str, ...] = ("extract", "remember", "forget", "consolidate")
TRANSCRIPT_FORMATS: tuple[str, ...] = ("auto", "claude-code", "anthropic", "openai", "text")
MAX_JOB_BYTES = 32 * 1024 * 1024
SESSION_ID_RE = re.compile(r"^[A-Za-z0-9._:-]{1,128}\Z")


def safe_session_id(sid: str) -> str:
    """``sid``, or when the redactor finds a secret in it, ``redacted-<16 hex>`` (a hash of it).

    A session id is written to the job, the manifest's sources and cursors, every log and
    ``dreamd log`` ("added by session …"), so one that is a token would be published by all of
    them (issue 22). Replaced, not refused: the transcript is still kept, and the same id
    always maps to the same replacement, so a session's cursor still follows it."""
    from memory.redact import redact

    if not redact(sid.replace("-", " "))[1] and not redact(sid)[1]:
        return sid
    import hashlib

    return "redacted-" + hashlib.sha256(sid.encode("utf-8", "replace")).hexdigest()[:16]


JOB_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}\Z")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}\Z")  # == memory.store.records.NAME_RE, without YAML


def new_job_id(now: datetime | None = None) -> str:
    """A job id that sorts by submission time and is unique across processes and hosts.

    UTC time to the microsecond plus 40 random bits: ``20261129T102205.123456Z-3f9c8a1b2c``.
    """
    t = (now or datetime.now(UTC)).astimezone(UTC)
    return t.strftime("%Y%m%dT%H%M%S.%fZ") + "-" + os.urandom(5).hex()


def utc_iso(now: datetime | None = None) -> str:
    t = (now or datetime.now(UTC)).astimezone(UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def build_job(
    kind: str,
    *,
    job_id: str,
    memory_dir: str,
    session_id: str | None = None,
    submitted_at: str | None = None,
    transcript: tuple[str, str] | None = None,
    records: Sequence[Mapping[str, str]] = (),
    names: Sequence[str] = (),
    force: bool = False,
    adopt: bool = False,
) -> dict[str, Any]:
    """The job object for ``kind``, carrying only the keys that kind uses.

    ``transcript`` is ``(format, content)`` for an ``extract`` job.
    """
    job: dict[str, Any] = {
        "format": FORMAT,
        "id": job_id,
        "kind": kind,
        "memory_dir": memory_dir,
        "session_id": session_id,
        "submitted_at": submitted_at or utc_iso(),
    }
    if kind == "extract":
        if transcript is None:
            raise ValueError("an extract job needs a transcript")
        fmt, content = transcript
        job["transcript"] = {"format": fmt, "content": content}
        if adopt:
            job["adopt"] = True
    elif kind == "remember":
        job["records"] = [dict(r) for r in records]
    elif kind == "forget":
        job["names"] = list(names)
    elif kind == "consolidate":
        job["force"] = force
    else:
        raise ValueError(f"unknown job kind {kind!r}")
    return job


def encode_job(job: Mapping[str, Any]) -> bytes:
    """Job bytes as written to the spool: compact UTF-8 JSON plus a newline.

    A lone surrogate in a caller's string becomes ``?`` rather than an exception: the bytes
    are always valid UTF-8.
    """
    text = json.dumps(job, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", errors="replace") + b"\n"
