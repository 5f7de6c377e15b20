"""The strict answer gate: every model answer passes here before anything is used (DESIGN §6).

The gate is identical for every backend (offline heuristics, Anthropic, a local server behind
``base_url``) and is pure: a :class:`~memory.model.llm.Completion` in, values or
:class:`AnswerRejected` out. It never repairs an answer. No code-fence stripping, no searching
for the JSON inside prose, no dropping of the one bad item: a model that did not follow the
contract gets its whole answer refused, so nothing half-understood ever reaches a memory set.

Rules shared by every check (:func:`check_completion`, :func:`parse_json_strict`):

- no tool calls; ``stop_reason == "end_turn"`` (``max_tokens`` is truncation, refused even if
  the text happens to parse); non-empty text;
- the *whole* text (surrounding whitespace allowed) is one JSON value; ``NaN``/``Infinity``,
  duplicate object keys, nesting deeper than :data:`MAX_DEPTH` and texts over
  :data:`MAX_TEXT_CHARS` are refused.

Stdlib only (plus ``memory.store.records``): the recall path imports it on every agent turn.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from memory.errors import DreamdError, RecordError
from memory.model.llm import Completion
from memory.store.records import Record, validate_fields

MAX_DEPTH = 16
"""Deepest array/object nesting accepted; every valid answer needs at most 4."""
MAX_TEXT_CHARS = 2_000_000
"""Largest answer text parsed at all (far above any ``max_tokens`` we send)."""

_PLAN_KEYS = frozenset({"source_names", "result"})
SUPERSEDES = "supersedes"
"""The optional key of an extraction item naming the existing record it supersedes."""


class AnswerRejected(DreamdError):
    """A model answer broke the contract; ``str(e)`` is the one-line reason.

    Callers treat it as "the model answered, but unusably": record it as ``last_error`` and
    change nothing (extraction, consolidation) or fall back (selection). It is not transient.
    """


def _clip(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def check_completion(c: Completion) -> str:
    """The envelope rules: no tool calls, a complete (``end_turn``) answer, non-empty text."""
    if c.tool_calls:
        names = ", ".join(sorted({t.name for t in c.tool_calls}))
        raise AnswerRejected(f"answer contains {len(c.tool_calls)} tool call(s) ({names})")
    if c.stop_reason == "max_tokens":
        raise AnswerRejected("answer was truncated (stop_reason max_tokens)")
    if c.stop_reason != "end_turn":
        raise AnswerRejected(f"stop_reason is {c.stop_reason!r}, expected 'end_turn'")
    if not c.text.strip():
        raise AnswerRejected("answer text is empty")
    return c.text


def _check_depth(text: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH before json.loads can recurse into it."""
    depth = 0
    in_string = False
    escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise AnswerRejected(f"JSON nested deeper than {MAX_DEPTH} levels")
        elif ch in "]}":
            depth -= 1


def _refuse_constant(name: str) -> Any:
    raise AnswerRejected(f"JSON contains {name}, which is not valid JSON")


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise AnswerRejected(f"JSON object repeats key {key!r}")
        seen[key] = value
    return seen


def parse_json_strict(text: str) -> Any:
    """Parse the whole text as exactly one JSON value, or raise AnswerRejected.

    Whitespace around the value is allowed; a code fence, a word of prose or a second value
    is not (the reason quotes the start of the text so logs show what the model did).
    """
    if len(text) > MAX_TEXT_CHARS:
        raise AnswerRejected(f"answer text over {MAX_TEXT_CHARS} characters")
    stripped = text.strip()
    if not stripped:
        raise AnswerRejected("answer text is empty")
    _check_depth(stripped)
    try:
        return json.loads(
            stripped, parse_constant=_refuse_constant, object_pairs_hook=_unique_pairs
        )
    except json.JSONDecodeError as exc:
        raise AnswerRejected(
            f"answer is not JSON ({exc.msg} at char {exc.pos}): {_clip(stripped)!r}"
        ) from None
    except RecursionError:
        raise AnswerRejected(f"JSON nested deeper than {MAX_DEPTH} levels") from None


def _array(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise AnswerRejected(f"{what} must be a JSON array, got {_json_type(value)}")
    return value


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    return "number"


def _record(item: Any, where: str) -> Record:
    try:
        return validate_fields(item, where=where)
    except RecordError as exc:
        raise AnswerRejected(str(exc)) from None


@dataclass(frozen=True)
class Extracted:
    """One new record of an extraction answer, and the existing record it supersedes (its
    ``"supersedes"`` key: a name from the index the model was shown), if it says so."""

    record: Record
    supersedes: str | None = None


def check_extracted(
    c: Completion, *, existing_names: Iterable[str] = frozenset(), limit: int = 50
) -> list[Extracted]:
    """An extraction answer: a JSON array of up to ``limit`` new records.

    Every item has exactly name/type/description/body, each valid
    (:func:`memory.store.records.validate_fields`), and optionally ``supersedes``: the name of
    the record of ``existing_names`` whose value this one replaces (a changed preference, a
    corrected value), or of an earlier item of the same answer (one session stated the value, then
    changed it). That name must be in ``existing_names`` or the batch before it (a supersession of
    a record neither holds is refused: it would be a rewrite of nothing, or of a record the
    model was never shown) and may be named by one item only. Names are unique within the
    batch and do not reuse a name from ``existing_names`` (the index the model was shown: it
    was asked to skip what is already known and to pick fresh names, so a reused name means a
    duplicate or a silent overwrite attempt). One bad item rejects the whole batch. ``[]`` is
    a valid answer.
    """
    items = _array(parse_json_strict(check_completion(c)), "extraction answer")
    if len(items) > limit:
        raise AnswerRejected(f"extraction answer has {len(items)} records, limit is {limit}")
    existing = set(existing_names)
    out: list[Extracted] = []
    seen: set[str] = set()
    superseded: set[str] = set()
    for i, item in enumerate(items):
        where = f"extraction item {i}"
        target = item.get(SUPERSEDES) if isinstance(item, dict) else None
        if isinstance(item, dict) and SUPERSEDES in item:
            if not isinstance(target, str):
                raise AnswerRejected(f"{where}: supersedes must be a string, got {_json_type(target)}")
            if target not in existing and target not in seen:
                raise AnswerRejected(f"{where}: supersedes {_clip(target)!r}, which is not in the memory set (nor an earlier item)")
            if target in superseded:
                raise AnswerRejected(f"{where}: supersedes {target!r}, which another item already supersedes")
            superseded.add(target)
            item = {k: v for k, v in item.items() if k != SUPERSEDES}
        record = _record(item, where)
        if record.name in seen:
            raise AnswerRejected(f"{where}: name {record.name!r} repeats in the batch")
        if record.name in existing:
            raise AnswerRejected(f"{where}: name {record.name!r} already exists in the memory set")
        seen.add(record.name)
        out.append(Extracted(record, target))
    return out


@dataclass(frozen=True)
class PlanOp:
    """One consolidation step: replace ``source_names`` by ``result`` (``None`` deletes them)."""

    source_names: tuple[str, ...]
    result: Record | None


def check_plan(c: Completion, *, candidates: Iterable[str]) -> list[PlanOp]:
    """A consolidation plan: a JSON array of ``{"source_names": [...], "result": {...}|null}``.

    Invariants, so applying the plan can only merge, rewrite or drop what the model was shown:
    each op has exactly those two keys; ``source_names`` is a non-empty array of strings, all
    in ``candidates``, and no name appears twice in the whole plan; ``result`` is null or a
    valid record; result names are unique across the plan and never equal a *kept* name (a
    candidate no op consumes), though a result may reuse one of its own source names.
    Candidates no op names are kept unchanged. ``[]`` (nothing to do) is valid.
    """
    known = set(candidates)
    items = _array(parse_json_strict(check_completion(c)), "consolidation plan")
    used: set[str] = set()
    staged: list[tuple[tuple[str, ...], Record | None]] = []
    for i, item in enumerate(items):
        where = f"plan op {i}"
        if not isinstance(item, dict):
            raise AnswerRejected(f"{where}: must be an object, got {_json_type(item)}")
        if set(item) != _PLAN_KEYS:
            missing = sorted(_PLAN_KEYS - set(item))
            extra = sorted(set(item) - _PLAN_KEYS)
            detail = "; ".join(
                p
                for p in (
                    "missing " + ", ".join(missing) if missing else "",
                    "unexpected " + ", ".join(extra) if extra else "",
                )
                if p
            )
            raise AnswerRejected(f"{where}: keys must be exactly source_names, result ({detail})")
        sources = item["source_names"]
        if not isinstance(sources, list) or not sources:
            raise AnswerRejected(f"{where}: source_names must be a non-empty array")
        for name in sources:
            if not isinstance(name, str):
                raise AnswerRejected(
                    f"{where}: source_names must hold strings, got {_json_type(name)}"
                )
            if name not in known:
                raise AnswerRejected(f"{where}: source {_clip(name)!r} is not a candidate record")
            if name in used:
                raise AnswerRejected(f"{where}: source {name!r} appears more than once in the plan")
            used.add(name)
        raw_result = item["result"]
        result = None if raw_result is None else _record(raw_result, f"{where} result")
        staged.append((tuple(sources), result))

    kept = known - used
    result_names: set[str] = set()
    ops: list[PlanOp] = []
    for i, (sources, result) in enumerate(staged):
        if result is not None:
            if result.name in result_names:
                raise AnswerRejected(
                    f"plan op {i}: result name {result.name!r} repeats in the plan"
                )
            if result.name in kept:
                raise AnswerRejected(
                    f"plan op {i}: result name {result.name!r} collides with a kept record"
                )
            result_names.add(result.name)
        ops.append(PlanOp(source_names=sources, result=result))
    return ops


def check_selection(c: Completion, *, known: Iterable[str], limit: int = 5) -> list[str]:
    """A recall selection: a JSON array of at most ``limit`` distinct names from ``known``.

    Order is kept (the model ranks). Any violation raises, and recall falls back to keyword
    selection instead of guessing which part of the answer was meant.
    """
    names = set(known)
    items = _array(parse_json_strict(check_completion(c)), "selection")
    if len(items) > limit:
        raise AnswerRejected(f"selection has {len(items)} names, limit is {limit}")
    chosen: list[str] = []
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise AnswerRejected(f"selection item {i} must be a string, got {_json_type(item)}")
        if item not in names:
            raise AnswerRejected(f"selection item {i}: {_clip(item)!r} is not a known record")
        if item in chosen:
            raise AnswerRejected(f"selection item {i}: {item!r} is selected twice")
        chosen.append(item)
    return chosen
