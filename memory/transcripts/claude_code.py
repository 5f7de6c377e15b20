"""Claude Code session JSONL (every version seen in the wild, 0.2.x to 2.1.x).

Each line is one record. Kept: ``user`` and ``assistant`` records. Dropped without counting, by
name (known bookkeeping, :data:`KNOWN_TYPES`): ``summary``, ``progress``,
``file-history-snapshot``/``-delta``, ``queue-operation``, ``attachment``, every ``system``
record (compact boundaries, hook summaries, local command echoes — a local command also appears
as a user record), and the session metadata 2.1.x writes (``mode``, ``permission-mode``,
``last-prompt``, ``custom-title``, ``ai-title``, ``agent-name``, ``tag``, ``pr-link``,
``worktree-state``, ``bridge-session``). Records of unknown future types are dropped too; one
that carries Claude Code's envelope (``sessionId`` or ``uuid``) still counts as recognised, so
a file that holds only such lines (a fork's file at Stop time often holds one ``mode`` line) is
a Claude Code transcript with nothing to extract, not an unparseable one.
Skipped *and counted*: lines that are not JSON, not objects, objects without a ``type``, and
user/assistant records whose ``message`` is not an object or whose ``content`` is missing (typo
keys) or neither a string nor a list.

- ``isMeta`` records (caveats, injected reminders) are dropped; thinking blocks are dropped.
- An ``isCompactSummary`` record is kept as one user turn ``[compact summary] …``.
- Sidechains: a file whose first conversational record is a sidechain is a subagent transcript
  and keeps them; otherwise sidechain records (old Task subagents inlined in the main file) are
  dropped. Deciding on the first record keeps the choice stable as the file grows.
- Duplicate ``uuid`` (a resumed session replays lines): the first occurrence wins.
- Assistant messages come as one line per content block sharing ``message.id``; consecutive
  parts merge into one turn whose id is the first part's ``uuid``.
- Rewinds (a DAG with several children of one node) are kept in file order, not walked as a
  tree: file order is what makes a PreCompact parse a prefix of the SessionEnd parse.
- ``session_id`` is the first ``sessionId`` in the file. A resumed session's file starts with
  the lines of the session it resumed, so keyed by that id its cursor continues where the
  original session's extraction stopped instead of extracting the replayed turns again.
"""

from __future__ import annotations

from typing import Any

from memory.transcripts._blocks import content_text
from memory.transcripts._core import Parsed, TurnBuilder, iso_timestamp, text_of

KNOWN_TYPES = frozenset(
    {
        "user",
        "assistant",
        "summary",
        "progress",
        "system",
        "file-history-snapshot",
        "file-history-delta",
        "queue-operation",
        "attachment",
        "custom-title",
        "tag",
        "mode",
        "permission-mode",
        "last-prompt",
        "ai-title",
        "agent-name",
        "pr-link",
        "worktree-state",
        "bridge-session",
    }
)
METADATA_TYPES = frozenset(
    {"last-prompt", "permission-mode", "custom-title", "ai-title", "agent-name", "pr-link", "worktree-state", "bridge-session"}
)
"""Session metadata records only Claude Code writes (auto-detection trusts their names)."""


def parse_claude_code(records: list[Any]) -> Parsed:
    builder = TurnBuilder()
    skipped = recognized = 0
    session_id: str | None = None
    seen: set[str] = set()
    keep_sidechains: bool | None = None

    for record in records:
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            skipped += 1
            continue
        kind = record["type"]
        if kind in KNOWN_TYPES or "sessionId" in record or "uuid" in record:
            recognized += 1
        if session_id is None and isinstance(record.get("sessionId"), str):
            session_id = record["sessionId"] or None
        if kind not in ("user", "assistant"):
            continue
        message = record.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("content"), str | list):
            skipped += 1
            continue
        uuid = record.get("uuid") if isinstance(record.get("uuid"), str) else None
        if uuid is not None:
            if uuid in seen:
                continue
            seen.add(uuid)
        sidechain = record.get("isSidechain") is True
        if keep_sidechains is None:
            keep_sidechains = sidechain
        if (sidechain and not keep_sidechains) or record.get("isMeta") is True:
            continue

        timestamp = iso_timestamp(record.get("timestamp"))
        content = message["content"]
        if kind == "user":
            if record.get("isCompactSummary") is True:
                summary = text_of(content).strip()
                text = f"[compact summary] {summary}" if summary else ""
            else:
                text = content_text(content, "user")
            builder.cut()
            builder.add("user", text, timestamp, uuid)
        else:
            api_id = message.get("id") if isinstance(message.get("id"), str) else None
            text = content_text(content, "assistant")
            builder.add("assistant", text, timestamp, uuid or api_id, merge_key=api_id)

    return Parsed(builder.turns, skipped, recognized, session_id)


def looks_like_claude_code(record: Any) -> bool:
    """One JSONL record that only Claude Code writes."""
    if not isinstance(record, dict):
        return False
    kind = record.get("type")
    if kind in ("user", "assistant"):
        return "message" in record
    if kind == "system":
        return "uuid" in record or "subtype" in record
    if kind == "mode":
        return isinstance(record.get("mode"), str)
    if kind in ("attachment", "tag"):
        return "sessionId" in record or "uuid" in record
    return kind in ("summary", "progress", "file-history-snapshot", "file-history-delta", "queue-operation") or kind in METADATA_TYPES
