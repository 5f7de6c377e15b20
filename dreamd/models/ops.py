"""Model operations the daemon runs: extraction and consolidation planning (DESIGN §6).

Each operation builds its prompt (:mod:`dreamd.models.prompts`), calls the model once, passes
the answer through the strict gate (:mod:`memory.model.answer_gate`) and returns an *outcome value*. It never
raises into the caller: the job that called it decides what to do from the outcome alone.

Outcomes, and what the caller does about them:

- ``error is None`` — the answer was valid; use ``records`` / ``ops`` (possibly empty).
- ``error`` set, ``transient=True`` — the backend failed in a way worth retrying (timeout,
  connection error, 408/409/429, 529, other 5xx) after the SDK's own retries: defer the job;
  nothing was learned about the answer.
- ``error`` set, ``transient=False`` — the model answered but the gate refused the answer, or
  the backend failed permanently (bad key, bad request, a bug): record ``last_error``, change
  nothing. ``rejected=True`` tells a gate refusal apart from a permanent backend failure, and
  ``misconfigured=True`` marks the backend refusing the setup itself
  (:class:`~memory.errors.ModelMisconfigured`: key or login refused, no such model, no CLI):
  the job fails at once instead of being retried as if the answer were bad.

``usage`` is what the call cost even when the answer was refused (tokens were spent); it is
zero when no answer came back. Every call logs one ``model.call`` line (``model``,
``input_tokens``, ``output_tokens``, ``cache_read_tokens``, ``cache_write_tokens``,
``duration_ms``, ``stop_reason``, ``outcome`` = ok | rejected | transient | error, ``task``); a
refusal also logs ``model.answer_rejected`` with ``reason`` and a backend failure
``model.error`` with ``error`` (and ``misconfigured``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TypeVar

from dreamd.logs import get_logger
from dreamd.models.prompts import (
    IndexEntry,
    PlanInput,
    PlanRecord,
    TurnLike,
    consolidate_prompt,
    extract_prompt,
)
from memory.errors import ModelMisconfigured, TransientError
from memory.model.answer_gate import AnswerRejected, Extracted, PlanOp, check_extracted, check_plan
from memory.model.llm import Completion, Model, Usage
from memory.store.records import Record
from memory.textutil import one_line

__all__ = [
    "ExtractOutcome",
    "IndexEntry",
    "PlanInput",
    "PlanOutcome",
    "PlanRecord",
    "TurnLike",
    "extract",
    "plan",
]

log = get_logger("dreamd.models")

Clock = Callable[[], float]
T = TypeVar("T")


@dataclass(frozen=True)
class ExtractOutcome:
    """What an extraction produced; see the module docstring for how to read it."""

    records: list[Record]
    error: str | None
    usage: Usage
    duration_ms: float
    transient: bool = False
    rejected: bool = False
    misconfigured: bool = False
    supersedes: dict[str, str] = field(default_factory=dict)
    """New record name → the name of the existing record the model said it supersedes (checked
    by the gate to be in the index it was shown)."""


@dataclass(frozen=True)
class PlanOutcome:
    """What a consolidation plan produced; see the module docstring for how to read it."""

    ops: list[PlanOp]
    error: str | None
    usage: Usage
    duration_ms: float
    transient: bool = False
    rejected: bool = False
    misconfigured: bool = False


@dataclass(frozen=True)
class _Call:
    completion: Completion | None
    error: str | None = None
    transient: bool = False
    duration_ms: float = 0.0
    misconfigured: bool = False


def _call(model: Model, system: str, prompt: str, max_tokens: int, *, clock: Clock) -> _Call:
    """One backend call; every failure becomes a value (transient or not)."""
    started = clock()
    try:
        completion = model.complete(system, prompt, max_tokens)
    except TransientError as exc:
        return _Call(None, one_line(str(exc)), True, (clock() - started) * 1000.0)
    except ModelMisconfigured as exc:
        reason = one_line(f"model misconfigured: {exc}")
        return _Call(None, reason, False, (clock() - started) * 1000.0, misconfigured=True)
    except Exception as exc:  # a backend bug or a permanent error must not kill the job thread
        return _Call(
            None, one_line(f"{type(exc).__name__}: {exc}"), False, (clock() - started) * 1000.0
        )
    return _Call(completion, None, False, (clock() - started) * 1000.0)


def _log_call(model: Model, call: _Call, *, task: str, outcome: str, reason: str | None) -> None:
    c = call.completion
    usage = c.usage if c is not None else Usage()
    log.info(
        "model.call",
        task=task,
        model=(c.model if c is not None and c.model else model.name),
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_input_tokens,
        cache_write_tokens=usage.cache_creation_input_tokens,
        duration_ms=round(call.duration_ms, 1),
        stop_reason=c.stop_reason if c is not None else None,
        outcome=outcome,
    )
    if outcome == "rejected":
        log.warning("model.answer_rejected", task=task, model=model.name, reason=reason)
    elif outcome in ("transient", "error"):
        log.warning(
            "model.error",
            task=task,
            model=model.name,
            error=reason,
            transient=outcome == "transient",
            misconfigured=call.misconfigured,
        )


def _run(
    model: Model,
    system: str,
    prompt: str,
    max_tokens: int,
    *,
    task: str,
    check: Callable[[Completion], list[T]],
    clock: Clock,
) -> tuple[list[T], str | None, Usage, float, bool, bool, bool]:
    """One gated call: (result, error, usage, duration_ms, transient, rejected, misconfigured),
    logged once."""
    call = _call(model, system, prompt, max_tokens, clock=clock)
    if call.completion is None:
        outcome = "transient" if call.transient else "error"
        _log_call(model, call, task=task, outcome=outcome, reason=call.error)
        return [], call.error, Usage(), call.duration_ms, call.transient, False, call.misconfigured
    try:
        result = check(call.completion)
    except AnswerRejected as exc:
        reason = str(exc)
        _log_call(model, call, task=task, outcome="rejected", reason=reason)
        return [], reason, call.completion.usage, call.duration_ms, False, True, False
    _log_call(model, call, task=task, outcome="ok", reason=None)
    return result, None, call.completion.usage, call.duration_ms, False, False, False


def extract(
    model: Model,
    turns: Sequence[TurnLike],
    index: Sequence[IndexEntry],
    *,
    today: date,
    max_tokens: int,
    limit: int = 50,
    clock: Clock = time.monotonic,
) -> ExtractOutcome:
    """New records from ``turns``, checked against ``index`` (names there may not be reused).

    No turns means no call: an empty, successful outcome.
    """
    if not turns:
        return ExtractOutcome(records=[], error=None, usage=Usage(), duration_ms=0.0)
    system, prompt = extract_prompt(turns, index, today=today)
    existing = {e.name for e in index}
    items, error, usage, ms, transient, rejected, misconfigured = _run(
        model, system, prompt, max_tokens, task="extract", clock=clock,
        check=lambda c: check_extracted(c, existing_names=existing, limit=limit),
    )
    return ExtractOutcome(
        [item.record for item in items], error, usage, ms,
        transient=transient, rejected=rejected, misconfigured=misconfigured,
        supersedes=_named_supersessions(items),
    )


def _named_supersessions(items: Sequence[Extracted]) -> dict[str, str]:
    return {item.record.name: item.supersedes for item in items if item.supersedes is not None}


def plan(
    model: Model,
    records: Sequence[PlanInput],
    recent: Sequence[str],
    *,
    today: date,
    max_tokens: int,
    clock: Clock = time.monotonic,
) -> PlanOutcome:
    """A consolidation plan over ``records`` (the candidates); names outside them are refused.

    No records means no call: an empty, successful plan.
    """
    if not records:
        return PlanOutcome(ops=[], error=None, usage=Usage(), duration_ms=0.0)
    system, prompt = consolidate_prompt(records, recent, today=today)
    candidates = {r.name for r in records}
    ops, error, usage, ms, transient, rejected, misconfigured = _run(
        model, system, prompt, max_tokens, task="consolidate", clock=clock,
        check=lambda c: check_plan(c, candidates=candidates),
    )
    return PlanOutcome(
        ops, error, usage, ms,
        transient=transient, rejected=rejected, misconfigured=misconfigured,
    )
