"""The offline model backend: deterministic heuristics, no key, no network (DESIGN §6).

:class:`OfflineModel` implements :class:`memory.model.llm.Model`. It never reads the prose part of
a prompt: it answers from the machine-readable payload alone
(:func:`memory.model.llm.parse_payload`), returning the JSON text a good model would return, with
``stop_reason="end_turn"`` and rough token counts (characters / 4). The same payload always
gives the same text; the only clock it knows is the payload's ``today``.

Tasks (payload shapes are the contract shared with the Anthropic backend and the operations):

- ``extract`` — ``{"task", "today", "index": [{name,type,description}], "turns": [{role, text,
  timestamp}]}`` → a JSON array of ``{name, type, description, body[, supersedes]}``. Rules (English and
  Chinese): explicit remember-requests, identity, how-to-work feedback and corrections,
  preferences and habits, decisions with reasons, deadlines and goals, references; relative
  dates made absolute; questions, requests, injected text, code, tool lines, secrets,
  ephemeral chatter and what the index already has are skipped; at most 20 records. The full
  rule list is in :mod:`dreamd.models.offline.extract.pipeline`.
- ``consolidate`` — ``{"task", "today", "records": [{name, type, description, body,
  created_at, updated_at, importance, expires}], "recent": [names]}`` → a JSON array of
  ``{source_names, result}`` ops: expired records (importance < 0.8) dropped; a record a newer
  one explicitly supersedes ("no longer", "moved to", "改成" …) merged into it, its words kept
  on a "Previously:" history line; duplicates and paraphrases merged into the newest wording
  plus every clause of the older records; nothing else is touched. Full rules in
  :mod:`dreamd.models.offline.plan.plan`.
- ``select`` — ``{"task", "query", "limit", "candidates": [{name, type, description}]}`` → a
  JSON array of at most ``min(limit, 5)`` names, ranked by
  :func:`memory.retrieval.select.keyword_select` (the same ranking recall falls back to).
- anything else (no payload, unknown task, a payload that is not an object) → empty text,
  which the gate rejects like any unusable answer.

An answer longer than ``max_tokens`` (estimated as characters / 4) is cut and reported with
``stop_reason="max_tokens"``, exactly as a real model's truncated answer would be, so the
gate's handling of truncation is exercised offline too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from dreamd.models.offline.extract.pipeline import extract
from dreamd.models.offline.plan.plan import plan
from memory.model.llm import Completion, Usage, parse_payload

MAX_SELECT = 5


def estimate_tokens(text: str) -> int:
    """Rough token count (characters / 4, at least 1 for non-empty text)."""
    return (len(text) + 3) // 4


def select(payload: Mapping[str, Any]) -> list[str]:
    """Names for a selection payload; never more than :data:`MAX_SELECT`, never unknown."""
    query = str(payload.get("query") or "")
    raw_limit = payload.get("limit", MAX_SELECT)
    limit = raw_limit if isinstance(raw_limit, int) and not isinstance(raw_limit, bool) else MAX_SELECT
    limit = max(0, min(limit, MAX_SELECT))
    items = [c for c in payload.get("candidates") or [] if isinstance(c, Mapping) and c.get("name")]
    unique: dict[str, Mapping[str, Any]] = {}
    for c in items:
        unique.setdefault(str(c["name"]), c)
    from memory.retrieval.select import Candidate, keyword_select

    candidates = [
        Candidate(
            name=name,
            type=str(c.get("type", "")),
            description=str(c.get("description", "")),
            body=str(c.get("body", "")),
        )
        for name, c in unique.items()
    ]
    return [n for n in keyword_select(query, candidates, limit) if n in unique][:limit]


def answer(payload: Mapping[str, Any]) -> str:
    """The JSON text for a payload, or "" for a task the offline backend does not know."""
    task = payload.get("task")
    result: list[Any]
    if task == "extract":
        result = list(extract(payload))
    elif task == "consolidate":
        result = plan(payload)
    elif task == "select":
        result = select(payload)
    else:
        return ""
    return json.dumps(result, ensure_ascii=False)


class OfflineModel:
    """The default backend: deterministic answers computed from the prompt's payload."""

    name = "offline"

    def complete(self, system: str, prompt: str, max_tokens: int) -> Completion:
        started = time.perf_counter()
        try:
            payload = parse_payload(prompt)
        except ValueError:
            text = ""
        else:
            text = answer(payload)
        stop_reason = "end_turn"
        if estimate_tokens(text) > max_tokens:
            text = text[: max(0, max_tokens) * 4]
            stop_reason = "max_tokens"
        usage = Usage(
            input_tokens=estimate_tokens(system) + estimate_tokens(prompt),
            output_tokens=estimate_tokens(text),
        )
        return Completion(
            text=text,
            stop_reason=stop_reason,
            usage=usage,
            model=self.name,
            duration_ms=(time.perf_counter() - started) * 1000.0,
        )


__all__ = ["MAX_SELECT", "OfflineModel", "answer", "estimate_tokens", "select"]
