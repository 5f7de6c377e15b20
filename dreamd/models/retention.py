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

"Still said" means said plainly (:func:`_said_plainly`): a clause whose words reappear only
after a negation the clause does not have ("It is not true that deploys happen on Tuesdays",
"部署不在周二") is contradicted, not kept; and text that does not render (an HTML comment, a
``<script>``/``<style>``/``<template>`` element, a link reference definition as CommonMark
reads one) says nothing
(:func:`_rendered`). The negation cues are the offline engine's (``text.NEGATIONS``,
``text.ZH_NEGATIONS``, and English ``n't``), not a list of this module's.

Polarity is compared with what the set says (:func:`_contradicted`): a clause its own record
negates in another clause, or that a strictly newer record of the set explicitly replaces, may
be said under that negation — the offline dream merges "X pages on-call. X no longer pages
on-call." with a restatement of the second into the second alone, and that loses nothing the
record did not already take back.

Pure: plan and records in, the :class:`Loss` list out (empty = the plan keeps every fact).
What to do with a loss is the caller's: ``dreamd.jobs.work`` refuses the batch, splits and
re-plans it, and logs ``dream.plan_lost_facts`` with what it would have lost.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from dreamd.models.offline.compare.clauses import (
    Units,
    clause_units,
    clauses,
    replaced_by,
    said_by,
    supersedes,
    unexplained_history,
)
from dreamd.models.offline.text import CJK_RE, NEGATIONS, ZH_NEGATIONS, normalize
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


_HIDDEN = re.compile(
    r"<!--.*?(?:-->|\Z)"  # an HTML comment, or one left open to the end
    r"|<(script|style|template)\b[^>]*+(?:>|\Z).*?(?:</\1\s*+>|\Z)",  # (a tag left open hides the rest too)
    re.S | re.I,
)
"""HTML a reader of the record never sees: what it holds is not said."""

_SHOWN = frozenset({"paragraph_open", "heading_open", "fence", "code_block", "html_block", "hr"})
"""The CommonMark blocks whose lines a reader sees; a line in none of them (and not blank) is
part of a link reference definition, which renders as nothing."""


def _rendered(text: str) -> str:
    """``text`` without what does not render: :data:`_HIDDEN`, and every link reference
    definition as a CommonMark parser reads one (``[//]: # (note)``, one in a list item or a
    quote, a title on the next line), its lines left blank."""
    if "<" in text:
        text = _HIDDEN.sub(" ", text)
    if "]:" not in text:
        return text
    from markdown_it import MarkdownIt  # the dream's gate only, and only text that may hold one

    text = text.replace("\r\n", "\n").replace("\r", "\n")  # the parser's line breaks, counted as its map
    shown: set[int] = set()
    for token in MarkdownIt("commonmark").parse(text):
        if token.type in _SHOWN and token.map:
            shown.update(range(*token.map))
    return "\n".join(ln if i in shown else "" for i, ln in enumerate(text.split("\n")))


def _clauses(description: str, body: str) -> list[str]:
    return clauses(_rendered(description), _rendered(body))


_ZH_NEGATION = re.compile("|".join(re.escape(n) for n in sorted(ZH_NEGATIONS, key=len, reverse=True)))
_SEGMENT = re.compile(r"[.!?;:,]+(?:\s+|$|(?=[\u3400-\u9fff]))|[。！？；：，、\n（）()]+")
"""Where a negation's reach ends: a comma, colon, semicolon or sentence end (punctuation only,
as the engine's gist segments are cut; no words)."""


def _negation_marks(clause: str, units: Units) -> frozenset[int]:
    """The positions of ``units`` (the clause's) that are a negation cue, as the offline
    engine reads one: a word of its ``NEGATIONS`` or one ending in ``n't``, or the characters
    of one of its ``ZH_NEGATIONS``."""
    text = normalize(clause)
    words = {
        key for word in re.findall(r"[\w']+", text)
        if (key := word.lower().replace("'", "")) in NEGATIONS or word.lower().endswith("n't")
    }  # fmt: skip
    marks = {i for i, u in enumerate(units) if u in words}
    if any(len(u) == 1 and CJK_RE.match(u) for u in units):
        joined = "".join(u if len(u) == 1 else "\0" for u in units)
        marks.update(i for m in _ZH_NEGATION.finditer(joined) for i in range(m.start(), m.end()))
    return frozenset(marks)


@dataclass(frozen=True)
class Said:
    """One clause of a text that may still say a fact: its units, which of them are negation
    cues, and where each unit's segment starts (a negation reaches to the next comma, colon
    or sentence end, not past it: :data:`_SEGMENT`)."""

    units: Units
    marks: frozenset[int]
    segment_start: tuple[int, ...]
    unit_set: frozenset[str]
    """``units`` as a set: the cheap first test of every clause against every pool clause."""


def _said(clause: str) -> Said:
    units: list[str] = []
    marks: set[int] = set()
    starts: list[int] = []
    for segment in _SEGMENT.split(clause):
        if not segment or not segment.strip():
            continue
        seg_units = clause_units(segment)
        at = len(units)
        marks.update(at + i for i in _negation_marks(segment, seg_units))
        units.extend(seg_units)
        starts.extend([at] * len(seg_units))
    return Said(tuple(units), frozenset(marks), tuple(starts), frozenset(units))


def _units(texts: Iterable[tuple[str, str]]) -> list[Said]:
    return [_said(c) for d, b in texts for c in _clauses(d, b)]


def _said_plainly(clause: str, pool: Iterable[Said]) -> bool:
    """Whether one clause of ``pool`` says everything ``clause`` says, in order, and not under
    a negation ``clause`` lacks: a negation cue of the saying clause from the start of the
    segment of its first matched word up to its last matched word must be one of the
    clause's own words ("never deploy on Fridays" keeps "never deploy on Fridays"; "deploys
    are on Tuesdays, not Mondays" and "don't use tabs, use spaces" keep "deploys are on
    Tuesdays" and "use spaces"; "it is not true that deploys are on Tuesdays" does not)."""
    units = clause_units(clause)
    if not units:
        return True
    wanted = set(units)
    for other in pool:
        if not wanted <= other.unit_set:
            continue
        for first in (i for i, u in enumerate(other.units) if u == units[0]):
            matched = _match(units, other.units, first)
            if matched is None:
                break  # no later start matches either
            begin, end = other.segment_start[first], matched[-1]
            if all(m in matched for m in other.marks if begin <= m < end):
                return True
    return False


def _match(units: Units, other: Units, first: int) -> list[int] | None:
    """Where ``units`` appear in order in ``other``, the first at ``first``, the rest at their
    earliest positions after it; None when they do not."""
    at = [first]
    i = first + 1
    for u in units[1:]:
        while i < len(other) and other[i] != u:
            i += 1
        if i == len(other):
            return None
        at.append(i)
        i += 1
    return at


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
    pool: list[Said] | None = None
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
            said = _clauses(rec.description, rec.body)
            lost = [c for c in said if not _said_plainly(c, own)]
            if lost:
                if pool is None:
                    kept = [(r.description, r.body) for r in records if r.name not in consumed]
                    pool = _units([*kept, *live(), *((r.description, r.body) for r in results)])
                lost = [c for c in lost if not _said_plainly(c, pool)]
            if lost:
                lost = _contradicted(rec, said, lost, [*own, *(pool or ())], records)
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


def _contradicted(
    rec: PlannedRecord, said: Sequence[str], lost: Sequence[str], pool: Sequence[Said],
    records: Sequence[PlannedRecord],
) -> list[str]:
    """The clauses of ``lost`` (of ``rec``, not said plainly by ``pool``) that are lost for
    good: all but those whose words ``pool`` still says, under a negation, where the set itself
    says that negation of the clause — ``rec`` in another of its own clauses ("X pages the SRE
    channel. X no longer pages the SRE channel."), or a strictly newer record of the set
    explicitly replacing the clause (:func:`replaced_by`: "X no longer pages the SRE channel"
    written later). Such a clause is held to its negation, which is a clause of a record of
    the set and checked as one: the plan may keep the set's own contradiction in the form the
    set resolves it, not invent one."""
    units = [s.units for s in pool]
    worded = [c for c in lost if said_by(c, units)]
    if not worded:
        return list(lost)
    own = [(c, _said(c)) for c in said]
    replaced: list[str] | None = None
    out: list[str] = []
    for c in lost:
        if c in worded and any(
            other != c and said_by(c, [s.units]) and not _said_plainly(c, [s]) for other, s in own
        ):
            continue
        if c in worded:
            if replaced is None:
                replaced = _replaced_by_newer(rec, records)
            if c in replaced:
                continue
        out.append(c)
    return out


def _replaced_by_newer(rec: PlannedRecord, records: Sequence[PlannedRecord]) -> list[str]:
    """The clauses of ``rec`` that a strictly newer record of the set explicitly replaces."""
    stamp = plan_stamp(rec)
    older = (rec.description, rec.body)
    return [c for other in records if other.name != rec.name and plan_stamp(other) > stamp
            for c in replaced_by((other.description, other.body), older)]


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
