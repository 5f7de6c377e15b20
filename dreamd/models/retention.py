"""The plan retention gate (issue 21 §6): a model's consolidation plan may not lose a fact.

The answer gate (:func:`memory.model.answer_gate.check_plan`) checks a plan's *shape*: sources
declared, names known, results valid records. A well-formed plan can still delete facts (a
small model merged eight records into one sentence and fact retention fell to 0.31). So
before any plan is committed it is held to the rule the offline dream is held to by the
property test (``tests/test_dream_retention.py``) and the torture checker, with the same
clause functions (:mod:`dreamd.models.offline.compare.clauses`, imported, not copied):

* every clause of every record the plan removes is still said by its merge result, or by
  another record live once the plan is applied (a kept record or any result);
* except a record the plan *drops* (``result: null``) that expired (``expires`` before today,
  importance under 0.8), or that a strictly newer record of the set explicitly supersedes;
* and a result's history line (``**Previously:**``) holds only what a strictly newer source
  explicitly replaced, or what was history already (:func:`unexplained_history`).

Pure: plan and records in, the :class:`Loss` list out (empty = the plan keeps every fact).
What to do with a loss is the caller's: ``dreamd.jobs.work`` refuses the batch, splits and
re-plans it, and logs ``dream.plan_lost_facts`` with what it would have lost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from dreamd.models.offline.compare.clauses import (
    Units,
    clause_units,
    clauses,
    said_by,
    supersedes,
    unexplained_history,
)
from dreamd.models.prompts import PlanInput, plan_stamp
from memory.model.answer_gate import PlanOp

__all__ = ["Loss", "PlannedRecord", "describe", "plan_losses"]

EXPIRED_IMPORTANCE = 0.8
"""A record at or above this importance is never dropped for having expired."""


PlannedRecord = PlanInput
"""What the gate reads of a record the plan was made over (``PlanRecord`` has it)."""


@dataclass(frozen=True)
class Loss:
    """One record a plan would lose facts of: what it is, where the plan put it, what is lost."""

    name: str
    into: str | None
    """The merge result's name; None when the plan dropped the record."""
    clauses: tuple[str, ...]
    demoted: bool = False
    """The clauses are current facts the result moved to its history line, not lost outright."""

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "into": self.into, "clauses": list(self.clauses[:5]),
                "demoted": self.demoted}


def _units(texts: Iterable[tuple[str, str]]) -> list[Units]:
    return [clause_units(c) for d, b in texts for c in clauses(d, b)]


def plan_losses(
    ops: Sequence[PlanOp],
    records: Sequence[PlannedRecord],
    *,
    today: date,
    live: Callable[[], Iterable[tuple[str, str]]] = tuple,
) -> list[Loss]:
    """What applying ``ops`` to ``records`` (the set the plan was made over) would lose.

    ``live`` gives (description, body) of records outside ``records`` that stay live whatever
    the plan does (the rest of a directory when the plan covers one batch of it); it is called
    only when a clause is not said by its own merge result, so a batch whose merges keep every
    clause never walks the rest of the directory. A source name the set does not hold is
    skipped (the answer gate already refused unknown names).
    """
    by_name = {r.name: r for r in records}
    consumed = {n for op in ops for n in op.source_names}
    results = [op.result for op in ops if op.result is not None]
    day = today.isoformat()
    pool: list[Units] | None = None
    losses: list[Loss] = []
    for op in ops:
        result = op.result
        own = _units([(result.description, result.body)]) if result is not None else []
        sources = [by_name[n] for n in op.source_names if n in by_name]
        for rec in sources:
            if result is None and rec.expires is not None and rec.expires < day \
                    and rec.importance < EXPIRED_IMPORTANCE:
                continue
            if result is None and _superseded(rec, records):
                continue
            lost = [c for c in clauses(rec.description, rec.body) if not said_by(c, own)]
            if lost:
                if pool is None:
                    kept = [(r.description, r.body) for r in records if r.name not in consumed]
                    pool = _units([*kept, *live(), *((r.description, r.body) for r in results)])
                lost = [c for c in lost if not said_by(c, pool)]
            if lost:
                losses.append(Loss(rec.name, result.name if result is not None else None, tuple(lost)))
        if result is not None and sources:
            demoted = unexplained_history(
                (result.description, result.body), [(plan_stamp(r), r.description, r.body) for r in sources]
            )
            if demoted:
                losses.append(Loss(sources[0].name if len(sources) == 1 else ",".join(op.source_names),
                                   result.name, tuple(demoted), demoted=True))
    return losses


def _superseded(rec: PlannedRecord, records: Sequence[PlannedRecord]) -> bool:
    """Whether a strictly newer record of the set explicitly supersedes ``rec``."""
    stamp = plan_stamp(rec)
    older = (rec.description, rec.body)
    return any(
        other.name != rec.name and plan_stamp(other) > stamp and supersedes((other.description, other.body), older)
        for other in records
    )


def describe(losses: Sequence[Loss], limit: int = 3) -> str:
    """One line for a refusal reason: the first few records and the clauses they would lose."""
    parts = []
    for loss in losses[:limit]:
        where = f"merged into {loss.into!r}" if loss.into else "dropped"
        what = "moves to history" if loss.demoted else "loses"
        said = "; ".join(repr(c) for c in loss.clauses[:2])
        parts.append(f"{loss.name!r} ({where}) {what} {said}")
    more = f" and {len(losses) - limit} more" if len(losses) > limit else ""
    return "plan would lose facts: " + ", ".join(parts) + more
