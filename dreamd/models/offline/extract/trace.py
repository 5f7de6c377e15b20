"""Why the offline extractor kept or refused each sentence: a record of its decisions.

:func:`~dreamd.models.offline.extract.pipeline.extract` takes an optional :class:`Trace` and
appends one :class:`Decision` per sentence it decided on: the turn (its index in the payload's
``turns``), the sentence, whether a record came of it, the stage or rule that decided (the
names are in :data:`STAGES` and the rule kinds of :class:`~dreamd.models.offline.extract.types.Found`)
and the record's name. Refusals are collected only when the trace asks for them
(``Trace(refused=True)``, what ``dreamd explain`` uses). A trace is never written to a record or
to disk: the answer, and so the on-disk format, is the same with or without one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

STAGES: dict[str, str] = {
    "injected": "the turn was injected by the harness, or a pasted document",
    "consumed": "taken into the record of the sentence before it",
    "secret": "holds a secret",
    "label-header": "a label heading the lines after it",
    "rules-header": "a rules header: it makes the sentences after it standing",
    "temporary": "an instruction bounded in time, with no lasting part",
    "question": "a question or a request, with no statement before the ask",
    "reported": "someone else's words",
    "empty": "nothing left once lead-ins were peeled",
    "not-memory": "a distractor: advice, a past episode, a hypothetical, an account number …",
    "cap": "the answer already holds the maximum number of records",
    "correction": "put an earlier record right",
    "no-rule": "no rule or fallback took it",
    "folded": "goes on about the record before it, folded into that record",
    "known": "the index or the answer already has it",
    "labels": "a labelled line or list (telegraphic)",
    "rules": "a named rule or a lasting statement",
    "telegraphic": "a fact said without a full sentence",
    "answer": "a short answer to the assistant's question",
    "directive": "a standing directive said in passing",
    "change": "a change of something said before, no other rule taking it",
}
"""Every stage name a decision can carry, with what it means (a kept record's ``stage`` is the
stage that produced it and its ``rule`` the rule inside it)."""


@dataclass(frozen=True)
class Decision:
    turn: int
    role: str
    sentence: str
    kept: bool
    stage: str
    rule: str | None = None
    record: str | None = None
    detail: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class Trace:
    """The decisions of one extraction, in transcript order."""

    refused: bool = False
    decisions: list[Decision] = field(default_factory=list)

    def keep(self, turn: int, role: str, sentence: str, stage: str, rule: str, record: str) -> None:
        self.decisions.append(Decision(turn, role, sentence, True, stage, rule, record))

    def refuse(self, turn: int, role: str, sentence: str, stage: str, *, rule: str | None = None,
               detail: str | None = None) -> None:
        if self.refused:
            self.decisions.append(Decision(turn, role, sentence, False, stage, rule, None, detail))

    def kept(self) -> list[Decision]:
        return [d for d in self.decisions if d.kept]


__all__ = ["STAGES", "Decision", "Trace"]
