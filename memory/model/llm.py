"""The one small model interface every backend implements (DESIGN §6).

``complete(system, prompt, max_tokens) -> Completion``. Operations (extraction, consolidation
plans, selection) build their prompt as product instructions followed by one machine-readable
payload ``<input>{json}</input>``; the offline backend answers from that payload alone, a real
model reads both. Whatever comes back passes the same strict gate (``memory.model.answer_gate``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

INPUT_OPEN = "<input>"
INPUT_CLOSE = "</input>"


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    @property
    def total(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_input_tokens
            + self.cache_creation_input_tokens
        )


@dataclass(frozen=True)
class ToolCall:
    name: str
    input: Any


@dataclass(frozen=True)
class Completion:
    text: str
    stop_reason: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    duration_ms: float = 0.0


class Model(Protocol):
    """A backend. ``name`` is what logs call it (``offline`` or the Anthropic model id)."""

    name: str

    def complete(self, system: str, prompt: str, max_tokens: int) -> Completion: ...


def render_payload(payload: dict[str, Any]) -> str:
    """The machine-readable tail of every prompt.

    A turn may hold the wrapper's own tags as text (someone pasting a prompt, HTML, this very
    docstring); inside the JSON their ``<`` is written ``\\u003c``, so the only literal tags in a
    prompt are the wrapper's and :func:`parse_payload` finds them, while the text decodes back
    unchanged.
    """
    body = json.dumps(payload, ensure_ascii=False, sort_keys=True)
    body = body.replace(INPUT_OPEN, "\\u003c" + INPUT_OPEN[1:]).replace(INPUT_CLOSE, "\\u003c" + INPUT_CLOSE[1:])
    return INPUT_OPEN + body + INPUT_CLOSE


def parse_payload(prompt: str) -> dict[str, Any]:
    """Inverse of :func:`render_payload` over a whole prompt (the last payload wins)."""
    start = prompt.rfind(INPUT_OPEN)
    end = prompt.rfind(INPUT_CLOSE)
    if start == -1 or end < start:
        raise ValueError("prompt carries no <input> payload")
    data = json.loads(prompt[start + len(INPUT_OPEN) : end])
    if not isinstance(data, dict):
        raise ValueError("prompt payload is not an object")
    return data
