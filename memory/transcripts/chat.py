"""Anthropic Messages and OpenAI chat messages.

Accepted shapes: ``{"messages": [...]}`` (optionally with ``system``), a bare list of messages,
``{"request": {...}, "response": {...}}`` records (alone or in a list: the request's messages
followed by the response as an assistant turn), and JSONL with one message per line.
Roles ``system``/``developer`` are dropped; OpenAI ``tool``/``function`` messages become user
turns ``[tool result] …`` (tool output is fed back on the user side, as in Anthropic's API);
``tool_calls``/``function_call`` become ``[tool: name] …`` lines of the assistant turn.
Both APIs go through one parser because a plain ``{"role", "content"}`` list is valid in both.
"""

from __future__ import annotations

from typing import Any

from memory.transcripts._blocks import content_text
from memory.transcripts._core import (
    INVALID,
    Parsed,
    TurnBuilder,
    iso_timestamp,
    tool_call_line,
    tool_result_line,
)

_DROPPED_ROLES = {"system", "developer"}
_OPENAI_ROLES = {"system", "developer", "tool", "function"}
_OPENAI_KEYS = {"tool_calls", "function_call", "tool_call_id", "refusal"}
_OPENAI_PARTS = {"image_url", "input_audio", "input_text", "refusal"}
_ANTHROPIC_PARTS = {"tool_use", "tool_result", "thinking", "redacted_thinking", "document"}


def chat_messages(doc: Any) -> list[Any] | None:
    """The message list a chat document holds, or ``None`` when it is not a chat document."""
    if isinstance(doc, dict):
        if isinstance(doc.get("messages"), list):
            return list(doc["messages"])
        if isinstance(doc.get("request"), dict):
            return _exchange(doc)
        return None
    if isinstance(doc, list) and doc:
        if all(isinstance(item, dict) and isinstance(item.get("request"), dict) for item in doc):
            return [message for item in doc for message in _exchange(item)]
        if any(isinstance(item, dict) and "role" in item for item in doc):
            return doc
    return None


def _exchange(record: dict[str, Any]) -> list[Any]:
    request = record["request"]
    messages = list(request.get("messages") or []) if isinstance(request, dict) else []
    response = record.get("response")
    if isinstance(response, dict):
        if isinstance(response.get("choices"), list):  # OpenAI chat completion
            for choice in response["choices"]:
                if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
                    messages.append(choice["message"])
        elif "content" in response:
            messages.append({"role": response.get("role") or "assistant", **response})
    return messages


def chat_flavor(messages: list[Any]) -> str:
    """``openai`` when anything only OpenAI uses is present, else ``anthropic``."""
    for message in messages:
        if not isinstance(message, dict):
            continue
        if message.get("role") in _OPENAI_ROLES or _OPENAI_KEYS & message.keys():
            return "openai"
        content = message.get("content")
        if isinstance(content, list):
            kinds = {part.get("type") for part in content if isinstance(part, dict)}
            if kinds & _OPENAI_PARTS:
                return "openai"
            if kinds & _ANTHROPIC_PARTS:
                return "anthropic"
    return "anthropic"


def parse_chat(messages: list[Any]) -> Parsed:
    builder = TurnBuilder()
    skipped = recognized = 0
    for message in messages:
        if message is INVALID or not isinstance(message, dict):
            skipped += 1
            continue
        role = message.get("role")
        if not isinstance(role, str) or not (
            {"content", "parts", "tool_calls", "function_call"} & message.keys()
        ):
            skipped += 1
            continue
        recognized += 1
        source_id = message.get("id") if isinstance(message.get("id"), str) else None
        timestamp = iso_timestamp(message.get("timestamp") or message.get("created_at"))
        content = message.get("content", message.get("parts"))  # Gemini API uses "parts"
        if role in _DROPPED_ROLES:
            continue
        if role in ("tool", "function"):
            builder.add("user", tool_result_line(content), timestamp, source_id)
            continue
        canonical = "assistant" if role in ("assistant", "model") else "user"
        lines = [content_text(content, canonical)]
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                lines.append(tool_call_line(function.get("name"), function.get("arguments")))
        legacy = message.get("function_call")
        if isinstance(legacy, dict):
            lines.append(tool_call_line(legacy.get("name"), legacy.get("arguments")))
        builder.add(canonical, "\n".join(line for line in lines if line), timestamp, source_id)
    return Parsed(builder.turns, skipped, recognized, None)
