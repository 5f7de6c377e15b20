"""Plain text and Markdown transcripts.

A line that opens with a speaker label starts a new turn: ``User:``, ``Human:``,
``Assistant:``, ``AI:``, ``Claude:``, ``用户：``, ``助手：`` (optionally bold, quoted or as a
``## User`` heading), or the ``[user 2026-11-29T10:22:05Z]`` lines :func:`render_turns`
writes, so rendered turns parse back. ``System:`` sections are dropped. Text before the first
label is a user turn; text with no label at all is one user turn.
"""

from __future__ import annotations

import re

from memory.transcripts._core import Parsed, TurnBuilder, iso_timestamp

_USER = {"user", "human", "用户", "用戶", "使用者", "人类", "人類"}
_ASSISTANT = {"assistant", "ai", "claude", "chatgpt", "gpt", "gemini", "bot", "助手", "助理"}
_SYSTEM = {"system", "系统", "系統"}
_WHO = "|".join(sorted(_USER | _ASSISTANT | _SYSTEM, key=len, reverse=True))
_LABEL = re.compile(
    rf"^[ \t>*_]*(?P<who>{_WHO})[ \t*_]*[:：][ \t*_]*(?P<rest>.*)$"
    rf"|^#{{1,6}}[ \t]*(?P<heading>{_WHO})[ \t]*[:：]?[ \t]*$"
    r"|^\[(?P<rendered>user|assistant)(?: (?P<ts>[^\]\s]+))?\](?: (?P<said>.*))?$",
    re.IGNORECASE,
)


def parse_text(content: str) -> Parsed:
    segments: list[tuple[str, str | None, list[str]]] = [("user", None, [])]
    for line in content.splitlines():
        match = _LABEL.match(line)
        if match is None:
            segments[-1][2].append(line)
            continue
        who = (match.group("who") or match.group("heading") or match.group("rendered")).lower()
        rest = match.group("rest") or match.group("said") or ""
        role = "assistant" if who in _ASSISTANT else "system" if who in _SYSTEM else "user"
        segments.append((role, iso_timestamp(match.group("ts")), [rest]))

    builder = TurnBuilder()
    for role, timestamp, lines in segments:
        if role != "system":
            builder.add(role, "\n".join(lines), timestamp)
    return Parsed(builder.turns, 0, int(bool(content.strip())), None)
