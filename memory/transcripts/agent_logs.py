"""Session logs of other coding agents: Codex CLI, Gemini CLI, GitHub Copilot CLI (best effort).

- **Codex** rollout JSONL: ``response_item`` records are the conversation (``message``,
  ``function_call``/``custom_tool_call`` and their ``_output``); ``reasoning`` is dropped and
  ``event_msg`` user/agent messages are ignored because they duplicate the response items.
  Older rollouts write the response items bare, without the ``response_item`` wrapper.
  Injected user messages (``<environment_context>``, ``<user_instructions>``) are dropped; an
  IDE preamble keeps only the part after ``## My request for Codex:``.
- **Gemini CLI**: the older single JSON (``{"sessionId", "messages": [...]}``) and the newer
  JSONL (a metadata header, message lines, ``{"$set": …}`` updates). A message id written
  twice is one message: the later version (with its ``toolCalls``) replaces the earlier in
  place. ``info``/``error`` lines and thoughts are dropped.
- **Copilot CLI** event log: ``user.message``, ``assistant.message`` (with ``toolRequests``) and
  ``tool.execution_complete``; everything else is bookkeeping. A user message with empty
  ``content`` is a harness nudge (only ``transformedContent`` is set) and is dropped.
"""

from __future__ import annotations

from typing import Any

from memory.transcripts._core import (
    INVALID,
    Parsed,
    TurnBuilder,
    iso_timestamp,
    load_json,
    text_of,
    tool_call_line,
    tool_result_line,
)

# --- Codex ---------------------------------------------------------------------------------

CODEX_WRAPPERS = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)
_CODEX_ITEMS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "local_shell_call_output",
        "web_search_call",
    }
)
_CODEX_INJECTED = ("<environment_context>", "<user_instructions>", "<permissions instructions>")
_CODEX_REQUEST = "## My request for Codex:"


def looks_like_codex(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    if record.get("type") in CODEX_WRAPPERS and "payload" in record:
        return True
    if "record_type" in record:
        return True
    if record.get("type") in _CODEX_ITEMS and record.get("type") != "message":
        return "call_id" in record or "summary" in record
    content = record.get("content")
    return (
        record.get("type") == "message"
        and isinstance(content, list)
        and any(
            isinstance(b, dict) and b.get("type") in ("input_text", "output_text") for b in content
        )
    )


def parse_codex(records: list[Any]) -> Parsed:
    builder = TurnBuilder()
    skipped = recognized = 0
    session_id: str | None = None
    for record in records:
        if not isinstance(record, dict):
            skipped += 1
            continue
        kind = record.get("type")
        if kind in CODEX_WRAPPERS:
            payload = record.get("payload")
        elif "instructions" in record and kind is None:  # legacy header line
            payload, kind = record, "session_meta"
        elif kind in _CODEX_ITEMS or "record_type" in record:
            payload, kind = record, "response_item"
        else:
            skipped += not isinstance(kind, str)  # an unknown record type is news, not damage
            continue
        recognized += 1
        if not isinstance(payload, dict):
            continue
        if kind == "session_meta" and session_id is None:
            session_id = payload.get("id") if isinstance(payload.get("id"), str) else None
        if kind != "response_item":
            continue
        timestamp = iso_timestamp(record.get("timestamp"))
        item = payload.get("type")
        if item == "message":
            role = payload.get("role")
            if role not in ("user", "assistant"):
                continue
            text = text_of(payload.get("content")).strip()
            if role == "user":
                if text.startswith(_CODEX_INJECTED):
                    continue
                if _CODEX_REQUEST in text:
                    text = text.split(_CODEX_REQUEST, 1)[1]
            builder.add(role, text, timestamp)
        elif item in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
            arguments = payload.get("arguments", payload.get("input", payload.get("action")))
            builder.add(
                "assistant", tool_call_line(payload.get("name") or item, arguments), timestamp
            )
        elif isinstance(item, str) and item.endswith("_output"):
            builder.add("user", _codex_output(payload.get("output")), timestamp)
    return Parsed(builder.turns, skipped, recognized, session_id)


def _codex_output(output: Any) -> str:
    """Outputs are a string, content parts, or a JSON string ``{"output", "metadata"}``."""
    failed = False
    if isinstance(output, str):
        decoded = load_json(output)
        if isinstance(decoded, dict) and "output" in decoded:
            metadata = decoded.get("metadata")
            code = metadata.get("exit_code") if isinstance(metadata, dict) else None
            failed = isinstance(code, int) and code != 0
            output = decoded["output"]
    return tool_result_line(output, failed)


# --- Gemini CLI ----------------------------------------------------------------------------

_GEMINI_ASSISTANT = {"gemini", "model", "assistant"}
_GEMINI_TYPES = frozenset({"user", "gemini", "model", "info", "error", "warning"})


def looks_like_gemini(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    if "projectHash" in record or "$set" in record:
        return True
    return record.get("type") in _GEMINI_TYPES and "content" in record and "message" not in record


def gemini_messages(doc: Any) -> list[Any] | None:
    """The ``messages`` of a legacy single-JSON Gemini session, else ``None``."""
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        messages = doc["messages"]
        if "projectHash" in doc or any(
            isinstance(m, dict) and m.get("type") in _GEMINI_TYPES and "role" not in m
            for m in messages
        ):
            return list(messages)
    return None


def parse_gemini(records: list[Any], session_id: str | None = None) -> Parsed:
    skipped = recognized = 0
    by_id: dict[str, dict[str, Any]] = {}
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            skipped += 1
            continue
        if "$set" in record or "projectHash" in record or "startTime" in record:
            recognized += 1
            if session_id is None and isinstance(record.get("sessionId"), str):
                session_id = record["sessionId"]
            continue
        if record.get("type") not in _GEMINI_TYPES:
            skipped += 1
            continue
        recognized += 1
        record_id = record.get("id")
        key = record_id if isinstance(record_id, str) and record_id else f"#{index}"
        by_id[key] = record  # a rewrite of the same id replaces it, in its first position

    builder = TurnBuilder()
    for key, record in by_id.items():
        source_id = None if key.startswith("#") else key
        timestamp = iso_timestamp(record.get("timestamp"))
        if record["type"] == "user":
            builder.add("user", text_of(record.get("content")), timestamp, source_id)
        elif record["type"] in _GEMINI_ASSISTANT:
            lines = [text_of(record.get("content"))]
            for call in record.get("toolCalls") or []:
                if isinstance(call, dict):
                    lines.append(tool_call_line(call.get("name"), call.get("args")))
                    if call.get("status") == "error":
                        lines.append(tool_result_line(call.get("result"), True))
            builder.add("assistant", "\n".join(x for x in lines if x.strip()), timestamp, source_id)
    return Parsed(builder.turns, skipped, recognized, session_id)


# --- Copilot CLI ---------------------------------------------------------------------------

_COPILOT_PREFIXES = ("session.", "user.", "assistant.", "tool.", "system.", "subagent.", "hook.")


def looks_like_copilot(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("type"), str)
        and record["type"].startswith(_COPILOT_PREFIXES)
        and "data" in record
    )


def parse_copilot(records: list[Any]) -> Parsed:
    builder = TurnBuilder()
    skipped = recognized = 0
    session_id: str | None = None
    for record in records:
        if record is INVALID or not looks_like_copilot(record):
            skipped += 1
            continue
        recognized += 1
        kind, data = record["type"], record["data"]
        if not isinstance(data, dict):
            continue
        event_id = record.get("id") if isinstance(record.get("id"), str) else None
        timestamp = iso_timestamp(record.get("timestamp"))
        if kind == "session.start" and session_id is None:
            session_id = data.get("sessionId") if isinstance(data.get("sessionId"), str) else None
        elif kind == "user.message":
            builder.add("user", text_of(data.get("content")), timestamp, event_id)
        elif kind == "assistant.message":
            lines = [text_of(data.get("content"))]
            for request in data.get("toolRequests") or []:
                if isinstance(request, dict):
                    lines.append(tool_call_line(request.get("name"), request.get("arguments")))
            message_id = data.get("messageId") if isinstance(data.get("messageId"), str) else None
            builder.add(
                "assistant",
                "\n".join(x for x in lines if x.strip()),
                timestamp,
                message_id or event_id,
            )
        elif kind == "tool.execution_complete":
            result = data.get("result")
            content = result.get("content") if isinstance(result, dict) else result
            if isinstance(content, str) and content.startswith('{"type"'):
                decoded = load_json(content)  # web tools return a JSON-encoded output part
                content = decoded if isinstance(decoded, dict) else content
            if data.get("success") is False and not content:
                content = data.get("error")
            builder.add(
                "user", tool_result_line(content, data.get("success") is False), timestamp, event_id
            )
    return Parsed(builder.turns, skipped, recognized, session_id)
