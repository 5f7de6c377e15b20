"""Canonical turns and the small helpers every format parser shares.

Invariants the parsers rely on (and the cursor semantics of DESIGN §2.2 depend on):

- Turns are emitted in file order, never re-sorted by timestamp or by a conversation DAG, so
  the turns of an append-only file's prefix are a prefix of the turns of the whole file.
- ``message_id`` is the source's own id when it has one, otherwise ``"h:"`` + sha1 of
  (role, text, occurrence number). Both depend only on what came before, so they are stable
  across a PreCompact and a later SessionEnd submission of the same session. Ids are unique
  within one transcript (a repeated source id gets a ``#2``, ``#3`` … suffix).
- A turn never has empty text; tool activity is summarised as one short line
  (``[tool: Bash] ls -la``, ``[tool result] …``, ``[tool error] …``), never dropped silently.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

LINE_LIMIT = 200

#: Line prefixes of summarised activity (tool calls, command and shell output) rather than
#: prose. ``[command] /name args`` is not among them: a slash command is what the user typed.
NOISE_PREFIXES = (
    "[tool: ",
    "[tool result]",
    "[tool error]",
    "[command output]",
    "[command error]",
    "[bash]",
    "[bash output]",
    "[bash error]",
    "[task notification]",
)

#: Every bracketed marker the parsers write at the start of a line in place of raw content.
MARKERS = (
    *NOISE_PREFIXES,
    "[command]",
    "[compact summary]",
    "[Request interrupted by user]",
    "[image]",
    "[document]",
    "[file]",
    "[audio]",
)

INVALID: Any = object()  # marks a JSONL line that is not JSON at all

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


@dataclass(frozen=True)
class Turn:
    """One canonical conversation turn. ``role`` is ``"user"`` or ``"assistant"``."""

    role: str
    text: str
    timestamp: str | None
    message_id: str


@dataclass(frozen=True)
class Transcript:
    """A parsed transcript: ``skipped`` counts malformed records (and one for bad encoding)."""

    format: str
    turns: list[Turn]
    skipped: int
    session_id: str | None


@dataclass
class Parsed:
    """What a format parser hands back; ``recognized`` counts records it understood at all."""

    turns: list[Turn]
    skipped: int = 0
    recognized: int = 0
    session_id: str | None = None


@dataclass
class TurnBuilder:
    """Accumulates turns in file order, assigns stable ids and merges split messages.

    ``merge_key`` joins consecutive parts of one model message (Claude Code writes each content
    block of an assistant message as its own line sharing ``message.id``). Only *consecutive*
    parts are merged: a part that comes back after a tool result starts a new turn.
    """

    turns: list[Turn] = field(default_factory=list)
    _occurrences: dict[tuple[str, str], int] = field(default_factory=dict)
    _ids: set[str] = field(default_factory=set)
    _next_suffix: dict[str, int] = field(default_factory=dict)
    _last_key: str | None = None

    def add(
        self,
        role: str,
        text: str,
        timestamp: str | None = None,
        source_id: str | None = None,
        merge_key: str | None = None,
    ) -> None:
        text = text.strip()
        if not text:
            return
        if merge_key is not None and merge_key == self._last_key and self.turns:
            last = self.turns[-1]
            if last.role == role:
                self.turns[-1] = Turn(
                    role, last.text + "\n" + text, last.timestamp, last.message_id
                )
                return
        occurrence = self._occurrences.get((role, text), 0)
        self._occurrences[(role, text)] = occurrence + 1
        if source_id:
            message_id = source_id
        else:
            key = f"{role}\x00{text}\x00{occurrence}".encode("utf-8", "replace")
            message_id = "h:" + hashlib.sha1(key, usedforsecurity=False).hexdigest()[:16]
        if message_id in self._ids:
            n = self._next_suffix.get(message_id, 2)
            while f"{message_id}#{n}" in self._ids:
                n += 1
            self._next_suffix[message_id] = n + 1
            message_id = f"{message_id}#{n}"
        self._ids.add(message_id)
        self.turns.append(Turn(role, text, timestamp, message_id))
        self._last_key = merge_key

    def cut(self) -> None:
        """Break a merge run (a record of another kind came between two parts)."""
        self._last_key = None


def load_json(text: str) -> Any:
    """``json.loads`` that returns :data:`INVALID` instead of raising (deep nesting included)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return INVALID


def jsonl_records(text: str) -> list[Any]:
    """One parsed value per non-blank line; :data:`INVALID` for a line that is not JSON."""
    return [load_json(line) for line in text.splitlines() if line.strip()]


def iso_timestamp(value: Any) -> str | None:
    """ISO-8601 UTC ``2026-11-29T10:22:05Z`` from an ISO string or epoch seconds/millis."""
    try:
        if isinstance(value, str) and value.strip():
            moment = datetime.fromisoformat(value.strip())
        elif isinstance(value, int | float) and not isinstance(value, bool):
            seconds = value / 1000 if abs(value) > 1e11 else value
            moment = datetime.fromtimestamp(seconds, UTC)
        else:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (ValueError, OverflowError, OSError):
        return None


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def first_line(text: str, limit: int = LINE_LIMIT) -> str:
    """The first non-blank line, stripped and cut to ``limit`` characters."""
    for line in strip_ansi(text).splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def text_of(value: Any) -> str:
    """Plain text of a string, a list of strings/blocks, or a block with ``text``."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(part for part in (text_of(item) for item in value) if part)
    if isinstance(value, dict):
        for key in ("text", "content", "output", "value"):
            if key in value:
                return text_of(value[key])
    return ""


_TOOL_KEYS = (
    "command",
    "cmd",
    "file_path",
    "path",
    "notebook_path",
    "pattern",
    "url",
    "query",
    "skill",
    "description",
    "prompt",
    "subject",
    "intent",
    "title",
)


def tool_call_line(name: Any, tool_input: Any) -> str:
    """``[tool: Bash] first line of the most telling input field``."""
    label = name if isinstance(name, str) and name else "?"
    if isinstance(tool_input, str):
        decoded = load_json(tool_input)
        tool_input = decoded if isinstance(decoded, dict) else tool_input
    detail = ""
    if isinstance(tool_input, dict):
        for key in _TOOL_KEYS:
            value = tool_input.get(key)
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                shell = len(value) >= 3 and value[1] in ("-c", "-lc")
                value = value[-1] if shell else " ".join(value)
            if isinstance(value, str) and value.strip():
                detail = value
                break
        else:
            detail = _dump(tool_input)
    elif isinstance(tool_input, str):
        detail = tool_input
    elif tool_input is not None:
        detail = _dump(tool_input)
    return f"[tool: {label}] {first_line(detail)}".rstrip()


def tool_result_line(content: Any, is_error: bool = False) -> str:
    """``[tool result] first line`` or ``[tool error] first line``."""
    if isinstance(content, str | list | dict):
        text = text_of(content)
    else:
        text = "" if content is None else _dump(content)
    text = re.sub(r"</?tool_use_error>", "", text)
    label = "[tool error]" if is_error else "[tool result]"
    return f"{label} {first_line(text)}".rstrip()


def _dump(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return ""
