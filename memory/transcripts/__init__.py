"""Transcripts → canonical turns (DESIGN §5).

Whatever an agent hands us (Claude Code JSONL, Anthropic or OpenAI messages, Codex, Gemini or
Copilot CLI logs, plain text) becomes one list of :class:`Turn` in file order. The extractor
keeps a per-session cursor — how many turns it already extracted — and asks
:func:`new_turns` for the rest, so a PreCompact and a later SessionEnd submission of the same
append-only file extract each turn once. :func:`budget_turns` keeps the most recent turns that
fit the extractor's input budget and :func:`render_turns` writes them for a prompt.

Contracts:

- ``parse_transcript(content)`` in ``auto`` mode never raises, whatever the input: a document
  no structured parser understands is read as plain text. With a forced format it raises
  :class:`memory.errors.JobRejected` only when nothing at all in the content is parseable.
- Malformed records are skipped and counted in ``Transcript.skipped``; input that is not valid
  UTF-8 is decoded with replacement characters and counts one more.
- Stdlib only, so agents' hooks can import it cheaply.
- Turns of a prefix of an append-only file are a prefix of the whole file's turns, except that
  the prefix's last turn may be a shorter version of the same message (same ``message_id``)
  when the cut fell between two parts of one assistant message.
"""

from __future__ import annotations

import json
from typing import Any

from memory.errors import JobRejected
from memory.transcripts._core import (
    INVALID,
    MARKERS,
    NOISE_PREFIXES,
    Parsed,
    Transcript,
    Turn,
    jsonl_records,
    load_json,
    text_of,
)
from memory.transcripts.agent_logs import (
    gemini_messages,
    looks_like_codex,
    looks_like_copilot,
    looks_like_gemini,
    parse_codex,
    parse_copilot,
    parse_gemini,
)
from memory.transcripts.chat import chat_flavor, chat_messages, parse_chat
from memory.transcripts.claude_code import looks_like_claude_code, parse_claude_code
from memory.transcripts.text import parse_text

__all__ = [
    "FORMATS",
    "MARKERS",
    "Transcript",
    "Turn",
    "budget_turns",
    "detect_format",
    "is_noise",
    "new_turns",
    "parse_transcript",
    "render_turn",
    "render_turns",
    "source_ids",
    "text_of",
]

FORMATS = ("claude-code", "anthropic", "openai", "codex", "gemini", "copilot", "text")
_SNIFF_RECORDS = 200


def detect_format(content: str) -> str:
    """The format name of ``content`` (one of :data:`FORMATS`); ``text`` when nothing fits."""
    text = content.lstrip("\ufeff").strip()
    if not text:
        return "text"
    doc = load_json(text) if text[0] in "{[" else INVALID
    if doc is not INVALID:
        found = _document_format(doc)
        if found:
            return found
    return _records_format(_first_records(text, _SNIFF_RECORDS)) or "text"


def _first_records(text: str, limit: int) -> list[Any]:
    """The first ``limit`` JSONL records, without parsing the rest of a large file."""
    records: list[Any] = []
    start = 0
    while len(records) < limit and start < len(text):
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        line = text[start:end]
        if line.strip():
            records.append(load_json(line))
        start = end + 1
    return records


def _document_format(doc: Any) -> str | None:
    if isinstance(doc, dict) and isinstance(doc.get("loglines"), list):
        return "claude-code"
    if gemini_messages(doc) is not None:
        return "gemini"
    if isinstance(doc, list) and doc:
        found = _records_format(doc[:_SNIFF_RECORDS])
        if found in ("claude-code", "codex", "copilot", "gemini"):
            return found
    messages = chat_messages(doc)
    if messages is not None:
        return chat_flavor(messages)
    return None


def _records_format(records: list[Any]) -> str | None:
    votes = {"claude-code": 0, "codex": 0, "copilot": 0, "gemini": 0, "chat": 0}
    for record in records:
        if looks_like_claude_code(record):
            votes["claude-code"] += 1
        elif looks_like_codex(record):
            votes["codex"] += 1
        elif looks_like_copilot(record):
            votes["copilot"] += 1
        elif looks_like_gemini(record):
            votes["gemini"] += 1
        elif (
            isinstance(record, dict)
            and "role" in record
            and ("content" in record or "parts" in record)
        ):
            votes["chat"] += 1
    best = max(votes, key=lambda name: votes[name])
    if votes[best] == 0:
        return None
    if best == "chat":
        return chat_flavor([r for r in records if isinstance(r, dict)])
    return best


def parse_transcript(content: str | bytes, format: str = "auto") -> Transcript:
    """Parse ``content`` into canonical turns; see the module docstring for the contract."""
    text, bad_encoding = _decode(content)
    if format == "auto":
        try:
            found = detect_format(text)
            parsed = _parse_as(found, text)
            if found != "text" and not parsed.recognized:
                found, parsed = "text", parse_text(text)
        except Exception:  # never raise in auto mode: a parser bug degrades to plain text
            found, parsed = "text", _safe_text(text)
    elif format in FORMATS:
        found = format
        try:
            parsed = _parse_as(format, text)
        except Exception as exc:
            raise JobRejected(
                f"transcript: {format} parser failed ({type(exc).__name__})"
            ) from None
        if text.strip() and not parsed.recognized:
            raise JobRejected(f"transcript: nothing parseable as {format}")
    else:
        raise JobRejected(
            f"transcript: unknown format {format!r} (expected auto or one of {', '.join(FORMATS)})"
        )
    return Transcript(found, parsed.turns, parsed.skipped + bad_encoding, parsed.session_id)


def _decode(content: Any) -> tuple[str, int]:
    """Text and 1 if the bytes were not valid UTF-8 (decoded with replacement characters)."""
    if isinstance(content, str):
        return content.lstrip("\ufeff"), 0
    if isinstance(content, bytes | bytearray | memoryview):
        raw = bytes(content)
        if raw.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 with BOM (Windows redirects)
            text = raw.decode("utf-16", errors="replace")
            return text.lstrip("\ufeff"), int("\ufffd" in text)
        try:
            return raw.decode("utf-8").lstrip("\ufeff"), 0
        except UnicodeDecodeError:
            return raw.decode("utf-8", errors="replace").lstrip("\ufeff"), 1
    try:  # a job may embed the transcript as JSON rather than as a string
        return json.dumps(content, ensure_ascii=False), 0
    except (TypeError, ValueError, RecursionError):
        return "", 1


def _parse_as(format: str, text: str) -> Parsed:
    stripped = text.strip()
    doc = load_json(stripped) if stripped[:1] in ("{", "[") else INVALID
    if format == "claude-code":
        if isinstance(doc, dict) and isinstance(doc.get("loglines"), list):
            return parse_claude_code(doc["loglines"])
        if isinstance(doc, list) and doc and all(isinstance(r, dict) for r in doc):
            return parse_claude_code(doc)
        return parse_claude_code(jsonl_records(text))
    if format in ("anthropic", "openai"):
        messages = chat_messages(doc) if doc is not INVALID else None
        return parse_chat(messages if messages is not None else jsonl_records(text))
    if format == "gemini":
        legacy = gemini_messages(doc)
        if legacy is not None and isinstance(doc, dict):
            session = doc.get("sessionId") if isinstance(doc.get("sessionId"), str) else None
            return parse_gemini(legacy, session)
        return parse_gemini(jsonl_records(text))
    if format == "codex":
        return parse_codex(jsonl_records(text))
    if format == "copilot":
        return parse_copilot(jsonl_records(text))
    return parse_text(text)


def _safe_text(text: str) -> Parsed:
    try:
        return parse_text(text)
    except Exception:
        return Parsed([], 1, 0, None)


def new_turns(turns: list[Turn], cursor: int) -> list[Turn]:
    """The turns after a session's cursor (the number of turns already extracted).

    A cursor past the end means the transcript is not the one the cursor was taken on (or it
    was already fully extracted); nothing is returned rather than extracting it twice.
    """
    return list(turns[max(cursor, 0) :])


def source_ids(turns: list[Turn]) -> list[str]:
    """The message ids of ``turns`` that are the source's own (Claude Code ``uuid``s, API
    message ids), not content hashes: only those identify one message across sessions, so
    only those may mark a turn as extracted when a fork replays it under another session."""
    return [t.message_id for t in turns if t.message_id and not t.message_id.startswith("h:")]


def render_turn(turn: Turn) -> str:
    """``[user 2026-11-29T10:22:05Z] text`` (``[user] text`` without a timestamp)."""
    stamp = f" {turn.timestamp}" if turn.timestamp else ""
    return f"[{turn.role}{stamp}] {turn.text}"


def render_turns(turns: list[Turn]) -> str:
    """Readable turns for a prompt, one after another; parses back with format ``text``."""
    return "\n".join(render_turn(turn) for turn in turns)


def budget_turns(turns: list[Turn], max_chars: int) -> list[Turn]:
    """The most recent turns whose rendering fits ``max_chars``.

    Invariant: ``len(render_turns(budget_turns(turns, n))) <= n``. Turns are taken newest first;
    the first one that does not fit whole is kept truncated (its newest part, after ``…``) if
    its header and at least one character fit, and it becomes the oldest kept turn.
    """
    kept: list[Turn] = []
    used = 0
    for turn in reversed(turns):
        separator = 1 if kept else 0
        cost = len(render_turn(turn)) + separator
        if used + cost <= max_chars:
            kept.append(turn)
            used += cost
            continue
        header = len(render_turn(Turn(turn.role, "", turn.timestamp, "")))
        room = max_chars - used - separator - header  # for "…" + the newest part of the text
        if room >= 2:
            kept.append(
                Turn(turn.role, "…" + turn.text[-(room - 1) :], turn.timestamp, turn.message_id)
            )
        break
    kept.reverse()
    return kept


def is_noise(turn: Turn) -> bool:
    """True when a turn holds only summarised tool or command activity, no prose.

    Extraction uses it to avoid reading a file the agent opened as something the user said.
    """
    lines = [line for line in turn.text.splitlines() if line.strip()]
    return bool(lines) and all(line.startswith(NOISE_PREFIXES) for line in lines)
