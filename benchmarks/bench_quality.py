"""Quality of what dreamd keeps, merges and drops, on labelled data it was not tuned on.

Two labelled files per split (formats and the labelling guide: ``benchmarks/quality/README.md``):

- ``extraction_<split>.jsonl`` — sessions whose user turns carry the lasting facts they state.
  Each session becomes a real Claude Code JSONL transcript (user/assistant lines, ``tool_use`` /
  ``tool_result`` blocks, uuids, timestamps) and goes through the real job path:
  :func:`dreamd.jobs.work.execute` on an ``extract`` job into a fresh :class:`MemoryStore` in a temp
  directory, with the configured model (the offline backend unless ``--config`` names a
  dreamd config file whose ``[model]`` says otherwise) and a clock set to the session's
  ``today``. Whatever the job path does (parsing, redaction,
  the character budget, ``today`` from the last turn's timestamp, the answer gate, the store's
  duplicate filter) is what is measured, so the figures follow the code as it changes.
- ``consolidation_<split>.jsonl`` — groups of records with the merges and drops a careful
  human would make. Each group is planned as a real dream plans a batch (records built and
  validated as record files, :class:`PlanRecord` inputs, :func:`dreamd.models.ops.plan`, i.e.
  the real prompt, payload and answer gate), then the plan is applied to the live set.
  A session whose job fails (e.g. the gate refused the answer) produced nothing and is listed
  in ``failed_sessions``; a refused plan changes nothing and is listed in ``rejected_plans``.

Scoring (pure functions below, unit-tested in ``tests/test_quality.py``):

- a produced record *matches* a labelled fact when the types are equal, every key term occurs
  in its description + body (case-insensitive substring; ``a|b`` = either) and the labelled
  date, if any, occurs too. Each record matches at most one fact; pairs are assigned greedily,
  facts with the fewest candidate records first. Precision = matched records / produced,
  recall = matched facts / labelled, F1; per language, type, domain and overall.
- date accuracy = dated facts matched / dated facts whose type + keys were found (so a record
  that has the fact but lost or garbled its date counts against the date, not only recall);
  reason accuracy = matched facts whose record body keeps every reason term / matched facts
  with a labelled reason.
- distractor turns (``"distractor": kind``) *leak* when an unmatched record is attributed to
  them (the turn whose words overlap the record most); reported as leaked / total per kind.
- consolidation: merge precision/recall over unordered same-group pairs (predicted: the
  sources of every op with a result and two or more sources); drop precision/recall over names
  (predicted: sources of an op whose result is null); keep accuracy = records labelled neither
  merge nor drop left byte-for-byte untouched; fact retention = labelled facts still found in
  some live record after the plan (target 100 %). A plan the gate refuses changes nothing
  and is counted in ``rejected``.

``--check-floors`` exits 1 when any figure is under its split's floors (:data:`FLOORS`). CI
checks the dev and val floors through ``tests/test_quality.py`` and never reads the test split
(the loaders refuse it while :data:`NO_TEST_SPLIT_ENV` is set, as every pytest run sets it).
The test split is run once, at the end of a round, by ``--split test --check-floors``: that
run also checks the split's shape and that none of its (or val's) sentences is written into
the code, and its figures are recorded in ``benchmarks/README.md``.

Usage: ``python benchmarks/bench_quality.py [--split dev|val|test] [--json OUT] [--check-floors]
[--suggest-floors] [--config FILE]``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import re
import sys
import tempfile
import uuid as uuidlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

QUALITY_DIR = REPO / "benchmarks" / "quality"
RESULTS_DIR = REPO / "benchmarks" / "results"

TEST_FLOORS: dict[str, float] = {
    # What the code on main reached on the TEST split, cut to two decimals minus 0.02
    # (``--suggest-floors`` prints them); fact retention must stay exactly 1.0, and a floor is
    # never lowered to let a change through. History: the split was committed before the rule
    # rewrite (baseline extraction P 0.667 / R 0.147); the first rewrite reached 0.664 / 0.485;
    # the second session's structural pass 0.625 / 0.675; the third (one record per fact,
    # labelled and telegraphic lines, whole-sentence distractors, more date shapes), measured
    # once here after it merged, 0.650 / 0.706 (F1 0.649 -> 0.676). The dream: supersession as
    # merge and paraphrase gist raised merge recall 0.338 -> 0.507, the third session's value
    # normalisation and equivalences 0.507 -> 0.662 (paraphrase 0.143 -> 0.429) at keep
    # accuracy 0.993 -> 0.978 (two look-alike pairs in `distinct` merged; both clauses kept).
    # The fourth (recall by structure, dates, types by the clause's predicate, distractors and
    # cut facts), 0.668 / 0.730 (F1 0.676 -> 0.698), date accuracy 0.952 -> 1.000 (of 22).
    # Measured on the test split once at the end of a round (``--split test --check-floors``),
    # never tuned on it, never in CI: CI guards DEV_FLOORS and VAL_FLOORS.
    "extraction.overall.precision": 0.64,
    "extraction.overall.recall": 0.71,
    "extraction.overall.f1": 0.67,
    "extraction.by_lang.en.precision": 0.60,
    "extraction.by_lang.en.recall": 0.68,
    "extraction.by_lang.zh.precision": 0.69,
    "extraction.by_lang.zh.recall": 0.73,
    "extraction.date_accuracy": 0.98,
    "extraction.reason_accuracy": 0.90,
    "extraction.distractor_ignored": 0.95,
    "consolidation.overall.merge_precision": 0.92,
    "consolidation.overall.merge_recall": 0.64,
    "consolidation.overall.drop_precision": 0.98,
    "consolidation.overall.drop_recall": 0.98,
    "consolidation.overall.keep_accuracy": 0.97,
    "consolidation.overall.fact_retention": 1.0,
    "consolidation.by_lang.en.fact_retention": 1.0,
    "consolidation.by_lang.zh.fact_retention": 1.0,
}
"""The test split's floors, checked only by the end-of-round run (dotted path → lowest value)."""

DEV_FLOORS: dict[str, float] = {
    # What main reached on the dev split when CI stopped reading the test split (issue 19:
    # 356 sessions, P 0.887 / R 0.803 / F1 0.843; 126 groups, merge recall 0.819), cut to two
    # decimals minus 0.02; fact retention stays exactly 1.0. Never lowered: raise them when a
    # round's merge lands (``--suggest-floors``).
    "extraction.overall.precision": 0.86,
    "extraction.overall.recall": 0.78,
    "extraction.overall.f1": 0.82,
    "extraction.by_lang.en.precision": 0.86,
    "extraction.by_lang.en.recall": 0.75,
    "extraction.by_lang.zh.precision": 0.86,
    "extraction.by_lang.zh.recall": 0.80,
    "extraction.date_accuracy": 0.94,
    "extraction.reason_accuracy": 0.92,
    "extraction.distractor_ignored": 0.96,
    "consolidation.overall.merge_precision": 0.98,
    "consolidation.overall.merge_recall": 0.79,
    "consolidation.overall.drop_precision": 0.98,
    "consolidation.overall.drop_recall": 0.98,
    "consolidation.overall.keep_accuracy": 0.98,
    "consolidation.overall.fact_retention": 1.0,
    "consolidation.by_lang.en.fact_retention": 1.0,
    "consolidation.by_lang.zh.fact_retention": 1.0,
}

VAL_FLOORS: dict[str, float] = {
    # The same, on the blind val split (48 sessions, P 0.792 / R 0.656 / F1 0.718; 72 groups,
    # merge recall 0.705). CI reads only its aggregate figures, as rule writers may.
    "extraction.overall.precision": 0.77,
    "extraction.overall.recall": 0.63,
    "extraction.overall.f1": 0.69,
    "extraction.by_lang.en.precision": 0.77,
    "extraction.by_lang.en.recall": 0.57,
    "extraction.by_lang.zh.precision": 0.77,
    "extraction.by_lang.zh.recall": 0.70,
    "extraction.date_accuracy": 0.98,
    "extraction.reason_accuracy": 0.95,
    "extraction.distractor_ignored": 0.94,
    "consolidation.overall.merge_precision": 0.98,
    "consolidation.overall.merge_recall": 0.68,
    "consolidation.overall.drop_precision": 0.98,
    "consolidation.overall.drop_recall": 0.98,
    "consolidation.overall.keep_accuracy": 0.98,
    "consolidation.overall.fact_retention": 1.0,
    "consolidation.by_lang.en.fact_retention": 1.0,
    "consolidation.by_lang.zh.fact_retention": 1.0,
}

FLOORS: dict[str, dict[str, float]] = {"dev": DEV_FLOORS, "val": VAL_FLOORS, "test": TEST_FLOORS}
"""Per split: dotted paths into the result JSON → the lowest acceptable value. CI
(``tests/test_quality.py``) checks dev and val; the test split is run once at the end of a round."""

EXACT_FLOORS = ("fact_retention",)
"""Figures whose floor is the figure itself when it is 1.0 (a lost fact is never acceptable)."""

TEST_SPLIT_FILES = ("extraction_test.jsonl", "consolidation_test.jsonl")
NO_TEST_SPLIT_ENV = "DREAMD_NO_TEST_SPLIT"
"""Set (by ``tests/conftest.py`` for every pytest run): the loaders refuse the test split files."""

TYPES = ("user", "feedback", "project", "reference")
LANGS = ("en", "zh")
DOMAINS = ("coding", "personal")
ROLES = ("user", "assistant", "tool")
KINDS = ("duplicate", "paraphrase", "supersede", "distinct", "expired", "unrelated")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class DataError(ValueError):
    """A labelled file is missing or malformed; the message names the file, line and field."""


# ---------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Fact:
    """A lasting fact a user turn states, as a careful note-taker would record it."""

    type: str
    key: tuple[str, ...]
    date: str | None = None
    reason: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    """Terms of the earlier value this fact corrects (hold4's corrections, issue 23)."""


@dataclass(frozen=True)
class LabelledTurn:
    role: str
    text: str
    timestamp: str
    facts: tuple[Fact, ...] = ()
    distractor: str | None = None
    tool: str | None = None
    tool_input: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Session:
    id: str
    lang: str
    domain: str
    today: str
    turns: tuple[LabelledTurn, ...]


@dataclass(frozen=True)
class GroupRecord:
    name: str
    type: str
    description: str
    body: str
    created_at: str | None = None
    updated_at: str | None = None
    expires: str | None = None
    importance: float | None = None


@dataclass(frozen=True)
class Group:
    id: str
    lang: str
    kind: str
    today: str
    records: tuple[GroupRecord, ...]
    merge: tuple[tuple[str, ...], ...]
    drop: tuple[str, ...]
    facts: tuple[tuple[str, ...], ...]


def _need(obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in obj:
        raise DataError(f"{where}: missing {key!r}")
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise DataError(f"{where}: {key!r} has the wrong type ({type(value).__name__})")
    return value


def _terms(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(t, str) and t.strip() for t in value):
        raise DataError(f"{where}: must be a non-empty list of non-empty strings")
    return tuple(value)


def _one_of(value: str, allowed: Sequence[str], where: str) -> str:
    if value not in allowed:
        raise DataError(f"{where}: {value!r} is not one of {', '.join(allowed)}")
    return value


def _iso_date(value: Any, where: str) -> str:
    if not isinstance(value, str) or not _ISO_DATE.match(value):
        raise DataError(f"{where}: {value!r} is not an ISO date (YYYY-MM-DD)")
    try:
        date.fromisoformat(value)
    except ValueError:
        raise DataError(f"{where}: {value!r} is not a real date") from None
    return value


def _jsonl(path: Path) -> Iterable[tuple[str, dict[str, Any]]]:
    if path.name in TEST_SPLIT_FILES and path.resolve().parent == QUALITY_DIR.resolve() and os.environ.get(NO_TEST_SPLIT_ENV):
        raise DataError(f"{path}: the test split is not read here ({NO_TEST_SPLIT_ENV} is set): "
                        "it is run once at the end of a round, by bench_quality.py --split test")
    if not path.is_file():
        raise DataError(f"{path}: labelled file not found")
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise DataError(f"{where}: must be a JSON object")
        yield where, obj


def _fact(obj: Any, where: str) -> Fact:
    if not isinstance(obj, dict):
        raise DataError(f"{where}: a fact must be an object")
    unknown = set(obj) - {"type", "key", "date", "reason", "supersedes"}
    if unknown:
        raise DataError(f"{where}: unknown fact field(s) {', '.join(sorted(unknown))}")
    type_ = _one_of(_need(obj, "type", str, where), TYPES, f"{where}.type")
    key = _terms(obj.get("key"), f"{where}.key")
    when = _iso_date(obj["date"], f"{where}.date") if obj.get("date") is not None else None
    reason = _terms(obj["reason"], f"{where}.reason") if obj.get("reason") else ()
    supersedes = _terms(obj["supersedes"], f"{where}.supersedes") if obj.get("supersedes") else ()
    return Fact(type_, key, when, reason, supersedes)


def load_extraction(path: Path) -> list[Session]:
    """Every session of an extraction file; the first malformed line raises :class:`DataError`."""
    sessions: list[Session] = []
    ids: set[str] = set()
    for where, obj in _jsonl(path):
        sid = _need(obj, "id", str, where)
        where = f"{where} ({sid})"
        if sid in ids:
            raise DataError(f"{where}: id repeats")
        ids.add(sid)
        lang = _one_of(_need(obj, "lang", str, where), LANGS, f"{where}.lang")
        domain = _one_of(_need(obj, "domain", str, where), DOMAINS, f"{where}.domain")
        today = _iso_date(obj.get("today"), f"{where}.today")
        raw_turns = _need(obj, "turns", list, where)
        if not raw_turns:
            raise DataError(f"{where}: no turns")
        turns: list[LabelledTurn] = []
        for i, t in enumerate(raw_turns):
            tw = f"{where} turn {i}"
            if not isinstance(t, dict):
                raise DataError(f"{tw}: must be an object")
            role = _one_of(_need(t, "role", str, tw), ROLES, f"{tw}.role")
            text = _need(t, "text", str, tw)
            if not text.strip():
                raise DataError(f"{tw}: empty text")
            stamp = _need(t, "timestamp", str, tw)
            try:
                datetime.fromisoformat(stamp.replace("Z", "+00:00"))
            except ValueError:
                raise DataError(f"{tw}.timestamp: {stamp!r} is not an ISO timestamp") from None
            facts = tuple(_fact(f, f"{tw}.facts[{j}]") for j, f in enumerate(t.get("facts") or []))
            if facts and role != "user":
                raise DataError(f"{tw}: only user turns carry facts")
            distractor = t.get("distractor")
            if distractor is not None and (not isinstance(distractor, str) or not distractor):
                raise DataError(f"{tw}.distractor: must be a non-empty string")
            tool = tool_input = None
            if role == "tool":
                tool = _need(t, "tool", str, tw)
                tool_input = t.get("input") or {}
                if not isinstance(tool_input, dict):
                    raise DataError(f"{tw}.input: must be an object")
            turns.append(LabelledTurn(role, text, stamp, facts, distractor, tool, tool_input))
        sessions.append(Session(sid, lang, domain, today, tuple(turns)))
    if not sessions:
        raise DataError(f"{path}: no sessions")
    return sessions


def load_consolidation(path: Path) -> list[Group]:
    """Every group of a consolidation file; the first malformed line raises :class:`DataError`.

    Records are also checked as dreamd would write them (slug name, one-line description,
    non-empty body), so a bad label fails here with its line, not halfway through a run.
    """
    from memory.errors import RecordError
    from memory.store.records import make_record

    groups: list[Group] = []
    ids: set[str] = set()
    for where, obj in _jsonl(path):
        gid = _need(obj, "id", str, where)
        where = f"{where} ({gid})"
        if gid in ids:
            raise DataError(f"{where}: id repeats")
        ids.add(gid)
        lang = _one_of(_need(obj, "lang", str, where), LANGS, f"{where}.lang")
        kind = _one_of(_need(obj, "kind", str, where), KINDS, f"{where}.kind")
        today = _iso_date(obj.get("today"), f"{where}.today")
        records: list[GroupRecord] = []
        for i, r in enumerate(_need(obj, "records", list, where)):
            rw = f"{where} records[{i}]"
            if not isinstance(r, dict):
                raise DataError(f"{rw}: must be an object")
            importance = r.get("importance")
            if importance is not None and (
                not isinstance(importance, int | float) or isinstance(importance, bool)
            ):
                raise DataError(f"{rw}.importance: must be a number")
            records.append(
                GroupRecord(
                    name=_need(r, "name", str, rw),
                    type=_one_of(_need(r, "type", str, rw), TYPES, f"{rw}.type"),
                    description=_need(r, "description", str, rw),
                    body=_need(r, "body", str, rw),
                    created_at=r.get("created_at"),
                    updated_at=r.get("updated_at"),
                    expires=_iso_date(r["expires"], f"{rw}.expires") if r.get("expires") else None,
                    importance=None if importance is None else float(importance),
                )
            )
        for i, rec in enumerate(records):
            try:
                make_record(rec.name, rec.type, rec.description, rec.body, where=f"{where} records[{i}]")
            except RecordError as exc:
                raise DataError(str(exc)) from None
        names = [r.name for r in records]
        if len(set(names)) != len(names):
            raise DataError(f"{where}: record names repeat")
        expect = _need(obj, "expect", dict, where)
        merge = tuple(tuple(_terms(g, f"{where}.expect.merge")) for g in expect.get("merge") or [])
        drop = tuple(expect.get("drop") or [])
        labelled = [n for g in merge for n in g] + list(drop)
        for n in labelled:
            if n not in names:
                raise DataError(f"{where}.expect: {n!r} is not a record of the group")
        if len(set(labelled)) != len(labelled):
            raise DataError(f"{where}.expect: a name is labelled twice")
        if any(len(g) < 2 for g in merge):
            raise DataError(f"{where}.expect.merge: a merge group needs two or more names")
        facts = tuple(_terms(f, f"{where}.facts[{j}]") for j, f in enumerate(obj.get("facts") or []))
        groups.append(Group(gid, lang, kind, today, tuple(records), merge, drop, facts))
    if not groups:
        raise DataError(f"{path}: no groups")
    return groups


# ---------------------------------------------------------------------------- matching


def term_found(term: str, text: str) -> bool:
    """``term`` (alternatives split on ``|``) occurs in ``text``, case-insensitively."""
    low = text.lower()
    return any(alt.strip().lower() in low for alt in term.split("|") if alt.strip())


def all_found(terms: Iterable[str], text: str) -> bool:
    return all(term_found(t, text) for t in terms)


@dataclass(frozen=True)
class Produced:
    """A record as the scorer sees it (what extraction wrote)."""

    type: str
    description: str
    body: str

    @property
    def text(self) -> str:
        return f"{self.description}\n{self.body}"


def key_match(fact: Fact, rec: Produced) -> bool:
    """Same type and every key term present (the date is not looked at)."""
    return rec.type == fact.type and all_found(fact.key, rec.text)


def full_match(fact: Fact, rec: Produced) -> bool:
    """:func:`key_match` and the labelled date, if any, present."""
    return key_match(fact, rec) and (fact.date is None or fact.date in rec.text)


def assign(facts: Sequence[Fact], records: Sequence[Produced]) -> dict[int, int]:
    """fact index → record index; each record used at most once.

    Greedy: facts with the fewest matching records go first, each taking its first free one,
    so a record that could serve two facts is left to the fact that has no other choice.
    """
    candidates = {
        i: [j for j, r in enumerate(records) if full_match(f, r)] for i, f in enumerate(facts)
    }
    used: set[int] = set()
    out: dict[int, int] = {}
    for i in sorted(candidates, key=lambda i: (len(candidates[i]), i)):
        for j in candidates[i]:
            if j not in used:
                used.add(j)
                out[i] = j
                break
    return out


@dataclass
class Counts:
    """Precision/recall counters; ``None`` ratios when a denominator is zero."""

    produced: int = 0
    matched_records: int = 0
    labelled: int = 0
    matched_facts: int = 0

    def add(self, other: Counts) -> None:
        self.produced += other.produced
        self.matched_records += other.matched_records
        self.labelled += other.labelled
        self.matched_facts += other.matched_facts

    def summary(self) -> dict[str, Any]:
        p = ratio(self.matched_records, self.produced)
        r = ratio(self.matched_facts, self.labelled)
        f1 = None if p is None or r is None else (0.0 if p + r == 0 else 2 * p * r / (p + r))
        return {
            "precision": p,
            "recall": r,
            "f1": None if f1 is None else round(f1, 4),
            "produced": self.produced,
            "labelled": self.labelled,
            "matched": self.matched_facts,
        }


def ratio(num: int, den: int) -> float | None:
    return None if den == 0 else round(num / den, 4)


_WORD = re.compile(r"[a-z0-9][a-z0-9_.-]{2,}")
_CJK = re.compile(r"[\u3400-\u9fff]+")


def overlap_tokens(text: str) -> set[str]:
    """Lowercase words of 3+ characters and CJK character bigrams (for attribution only)."""
    low = text.lower()
    out = set(_WORD.findall(low))
    for run in _CJK.findall(low):
        out.update(run[i : i + 2] for i in range(max(1, len(run) - 1)))
    return out


def attribute(rec: Produced, turns: Sequence[LabelledTurn]) -> int | None:
    """Index of the turn whose words overlap the record's most (ties: the earlier turn)."""
    have = overlap_tokens(rec.text)
    best: tuple[int, int] | None = None
    for i, t in enumerate(turns):
        score = len(have & overlap_tokens(t.text))
        if score and (best is None or score > best[0]):
            best = (score, i)
    return None if best is None else best[1]


@dataclass
class SessionScore:
    """One session's outcome: counts per type, date/reason tallies, leaked distractor turns."""

    by_type: dict[str, Counts]
    dates_labelled: int
    dates_found: int
    reasons_labelled: int
    reasons_kept: int
    distractors: dict[str, list[bool]]
    missed: list[dict[str, Any]]
    spurious: list[dict[str, Any]]

    def total(self) -> Counts:
        c = Counts()
        for v in self.by_type.values():
            c.add(v)
        return c


def score_session(session: Session, records: Sequence[Produced]) -> SessionScore:
    """Score what extraction produced for one session against its labels (pure)."""
    facts = [f for t in session.turns for f in t.facts]
    matched = assign(facts, records)
    by_type = {t: Counts() for t in TYPES}
    for f in facts:
        by_type[f.type].labelled += 1
    for r in records:
        if r.type in by_type:
            by_type[r.type].produced += 1
    for i in matched:
        by_type[facts[i].type].matched_facts += 1
        by_type[facts[i].type].matched_records += 1
    dates_labelled = dates_found = reasons_labelled = reasons_kept = 0
    for i, f in enumerate(facts):
        if f.date is not None and any(key_match(f, r) for r in records):
            dates_labelled += 1
            dates_found += i in matched
        if f.reason and i in matched:
            reasons_labelled += 1
            reasons_kept += all_found(f.reason, records[matched[i]].body)
    used = set(matched.values())
    spurious_idx = [j for j in range(len(records)) if j not in used]
    leaked = {attribute(records[j], session.turns) for j in spurious_idx}
    distractors: dict[str, list[bool]] = {}
    for i, t in enumerate(session.turns):
        if t.distractor:
            distractors.setdefault(t.distractor, []).append(i in leaked)
    missed = [
        {"session": session.id, "type": f.type, "key": list(f.key)}
        for i, f in enumerate(facts)
        if i not in matched
    ]
    spurious = [
        {"session": session.id, "type": records[j].type, "description": records[j].description}
        for j in spurious_idx
    ]
    return SessionScore(
        by_type, dates_labelled, dates_found, reasons_labelled, reasons_kept, distractors, missed, spurious
    )


# ---------------------------------------------------------------------------- transcripts


def claude_code_transcript(session: Session) -> str:
    """The session as a Claude Code JSONL file (one record per line, as Claude Code 2.x writes).

    A ``tool`` turn is an assistant ``tool_use`` line followed by a user line carrying the
    ``tool_result`` block (and the ``toolUseResult`` Claude Code adds), linked by the tool id.
    Ids are derived from the session id, so the same session always gives the same file.
    """
    ns = uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"dreamd-quality:{session.id}")
    sid = str(ns)
    lines: list[dict[str, Any]] = []
    parent: str | None = None

    def base(kind: str, n: int, stamp: str) -> dict[str, Any]:
        return {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/user/project",
            "sessionId": sid,
            "version": "2.1.38",
            "gitBranch": "main",
            "type": kind,
            "uuid": str(uuidlib.uuid5(ns, f"line-{n}")),
            "timestamp": stamp,
        }

    for i, t in enumerate(session.turns):
        if t.role == "user":
            line = base("user", len(lines), t.timestamp)
            line["message"] = {"role": "user", "content": t.text}
            lines.append(line)
        elif t.role == "assistant":
            line = base("assistant", len(lines), t.timestamp)
            line["message"] = {
                "model": "claude-sonnet-4-5",
                "id": f"msg_{uuidlib.uuid5(ns, f'msg-{i}').hex[:24]}",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": t.text}],
                "stop_reason": "end_turn",
            }
            lines.append(line)
        else:
            tool_id = f"toolu_{uuidlib.uuid5(ns, f'tool-{i}').hex[:24]}"
            call = base("assistant", len(lines), t.timestamp)
            call["message"] = {
                "model": "claude-sonnet-4-5",
                "id": f"msg_{uuidlib.uuid5(ns, f'msg-{i}').hex[:24]}",
                "type": "message",
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": tool_id, "name": t.tool, "input": dict(t.tool_input or {})}
                ],
                "stop_reason": "tool_use",
            }
            lines.append(call)
            parent = call["uuid"]
            result = base("user", len(lines), t.timestamp)
            result["message"] = {
                "role": "user",
                "content": [
                    {"tool_use_id": tool_id, "type": "tool_result", "content": t.text, "is_error": False}
                ],
            }
            result["toolUseResult"] = {"type": "text", "content": t.text}
            result["sourceToolAssistantUUID"] = call["uuid"]
            lines.append(result)
        parent = lines[-1]["uuid"]
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


# ---------------------------------------------------------------------------- running


def _noon(day: str) -> datetime:
    return datetime.combine(date.fromisoformat(day), time(12, 0), tzinfo=UTC)


def run_extraction(
    session: Session, model: Any, workdir: Path, config: Any = None
) -> list[Produced]:
    """What the real extract job commits for ``session`` into a fresh memory directory.

    Raises what the job raises (a refused answer is a ``TransientError``, as in the daemon).
    """
    from dreamd.config import default_config
    from dreamd.jobs.work import Context, execute
    from memory.spool.jobs import Job, Transcript
    from memory.store.transaction import MemoryStore

    mdir = workdir / session.id
    MemoryStore.init(mdir)
    config = config or default_config(env={"HOME": str(workdir)})
    ctx = Context(config=config, model=model, ledger=None, clock=lambda: _noon(session.today))
    job = Job(
        id=f"quality-{session.id}",
        kind="extract",
        memory_dir=mdir,
        session_id=None,
        submitted_at=_noon(session.today).isoformat().replace("+00:00", "Z"),
        transcript=Transcript(format="auto", content=claude_code_transcript(session)),
    )
    execute(job, ctx)
    return [Produced(rec.type, rec.description, rec.body) for _, rec in ctx.store(mdir).records()]


@dataclass
class PlanResult:
    """A group's plan applied: the live set after it, and how each name left (if it did)."""

    live: dict[str, Produced]
    merged: list[tuple[str, ...]]
    dropped: list[str]
    rewritten: list[str]
    rejected: str | None = None


def apply_plan(group: Group, ops: Sequence[Any]) -> PlanResult:
    """The live set after ``ops`` (``PlanOp``-like: ``source_names``, ``result``), as the store
    applies merges: every source leaves, a non-null result joins."""
    live = {r.name: Produced(r.type, r.description, r.body) for r in group.records}
    merged: list[tuple[str, ...]] = []
    dropped: list[str] = []
    rewritten: list[str] = []
    for op in ops:
        sources = tuple(op.source_names)
        for n in sources:
            live.pop(n, None)
        if op.result is None:
            dropped.extend(sources)
            continue
        live[op.result.name] = Produced(op.result.type, op.result.description, op.result.body)
        if len(sources) >= 2:
            merged.append(sources)
        else:
            rewritten.extend(sources)
    return PlanResult(live, merged, dropped, rewritten)


def run_plan(group: Group, model: Any, max_tokens: int) -> PlanResult:
    """Plan the group as one dream batch (real records, prompt, payload and gate), then apply.

    ``recent`` is empty: a labelled group has no session history to say which records are new.
    """
    from dreamd.models import ops
    from dreamd.models.prompts import PlanRecord
    from memory.store.records import make_record

    inputs = []
    for r in group.records:
        extra: dict[str, Any] = {}
        if r.importance is not None:
            extra["importance"] = r.importance
        if r.expires is not None:
            extra["expires"] = r.expires
        rec = make_record(r.name, r.type, r.description, r.body, where=f"{group.id}/{r.name}", extra=extra)
        created = r.created_at
        inputs.append(
            PlanRecord(
                name=rec.name,
                type=rec.type,
                description=rec.description,
                body=rec.body,
                created_at=created,
                updated_at=r.updated_at or created,
                importance=rec.importance,
                expires=rec.expires,
            )
        )
    outcome = ops.plan(model, inputs, [], today=date.fromisoformat(group.today), max_tokens=max_tokens)
    if outcome.error:
        result = apply_plan(group, [])
        result.rejected = outcome.error
        return result
    return apply_plan(group, outcome.ops)


def _pairs(groups: Iterable[Sequence[str]]) -> set[frozenset[str]]:
    return {frozenset((a, b)) for g in groups for i, a in enumerate(g) for b in g[i + 1 :]}


@dataclass
class GroupScore:
    merge_pred: int = 0
    merge_true: int = 0
    merge_hit: int = 0
    drop_pred: int = 0
    drop_true: int = 0
    drop_hit: int = 0
    keep_total: int = 0
    keep_ok: int = 0
    facts: int = 0
    facts_kept: int = 0
    rejected: int = 0
    groups: int = 0
    lost: list[dict[str, Any]] = field(default_factory=list)

    def add(self, other: GroupScore) -> None:
        for f in dataclasses.fields(self):
            if f.name == "lost":
                self.lost.extend(other.lost)
            else:
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def summary(self) -> dict[str, Any]:
        return {
            "groups": self.groups,
            "merge_precision": ratio(self.merge_hit, self.merge_pred),
            "merge_recall": ratio(self.merge_hit, self.merge_true),
            "drop_precision": ratio(self.drop_hit, self.drop_pred),
            "drop_recall": ratio(self.drop_hit, self.drop_true),
            "keep_accuracy": ratio(self.keep_ok, self.keep_total),
            "fact_retention": ratio(self.facts_kept, self.facts),
            "facts": self.facts,
            "rejected": self.rejected,
        }


def score_group(group: Group, result: PlanResult) -> GroupScore:
    """Score one applied plan against the group's labels (pure)."""
    pred_pairs = _pairs(result.merged)
    true_pairs = _pairs(group.merge)
    pred_drop = set(result.dropped)
    true_drop = set(group.drop)
    labelled = {n for g in group.merge for n in g} | true_drop
    keep = [r for r in group.records if r.name not in labelled]
    untouched = sum(
        1
        for r in keep
        if result.live.get(r.name) == Produced(r.type, r.description, r.body)
    )
    texts = [p.text for p in result.live.values()]
    kept = [f for f in group.facts if any(all_found(f, t) for t in texts)]
    lost = [{"group": group.id, "fact": list(f)} for f in group.facts if f not in kept]
    return GroupScore(
        merge_pred=len(pred_pairs),
        merge_true=len(true_pairs),
        merge_hit=len(pred_pairs & true_pairs),
        drop_pred=len(pred_drop),
        drop_true=len(true_drop),
        drop_hit=len(pred_drop & true_drop),
        keep_total=len(keep),
        keep_ok=untouched,
        facts=len(group.facts),
        facts_kept=len(kept),
        rejected=int(result.rejected is not None),
        groups=1,
        lost=lost,
    )


# ---------------------------------------------------------------------------- reports


def evaluate_extraction(sessions: Sequence[Session], model: Any, config: Any = None) -> dict[str, Any]:
    """Run and score every session; the ``extraction`` part of the result JSON."""
    from memory.errors import DreamdError

    overall = Counts()
    by_lang = {k: Counts() for k in LANGS}
    by_domain = {k: Counts() for k in DOMAINS}
    by_type = {k: Counts() for k in TYPES}
    dates = [0, 0]
    reasons = [0, 0]
    distractors: dict[str, list[int]] = {}
    missed: list[dict[str, Any]] = []
    spurious: list[dict[str, Any]] = []
    failed: list[dict[str, str]] = []
    user_turns = fact_turns = 0
    with tempfile.TemporaryDirectory(prefix="dreamd-quality-") as tmp:
        for s in sessions:
            try:
                records = run_extraction(s, model, Path(tmp), config)
            except DreamdError as exc:
                failed.append({"session": s.id, "error": f"{type(exc).__name__}: {exc}"})
                records = []
            score = score_session(s, records)
            total = score.total()
            overall.add(total)
            by_lang[s.lang].add(total)
            by_domain[s.domain].add(total)
            for t, c in score.by_type.items():
                by_type[t].add(c)
            dates[0] += score.dates_found
            dates[1] += score.dates_labelled
            reasons[0] += score.reasons_kept
            reasons[1] += score.reasons_labelled
            for kind, outcomes in score.distractors.items():
                d = distractors.setdefault(kind, [0, 0])
                d[0] += sum(outcomes)
                d[1] += len(outcomes)
            missed.extend(score.missed)
            spurious.extend(score.spurious)
            user_turns += sum(t.role == "user" for t in s.turns)
            fact_turns += sum(bool(t.facts) for t in s.turns)
    return {
        "sessions": len(sessions),
        "user_turns": user_turns,
        "user_turns_with_facts": fact_turns,
        "overall": overall.summary(),
        "by_lang": {k: v.summary() for k, v in by_lang.items()},
        "by_domain": {k: v.summary() for k, v in by_domain.items()},
        "by_type": {k: v.summary() for k, v in by_type.items()},
        "date_accuracy": ratio(*dates),
        "dates_labelled": dates[1],
        "reason_accuracy": ratio(*reasons),
        "reasons_labelled": reasons[1],
        "distractor_ignored": ratio(
            sum(v[1] - v[0] for v in distractors.values()), sum(v[1] for v in distractors.values())
        ),
        "distractors": {k: {"leaked": v[0], "turns": v[1]} for k, v in sorted(distractors.items())},
        "failed_sessions": failed,
        "missed": missed,
        "spurious": spurious,
    }


def evaluate_consolidation(groups: Sequence[Group], model: Any, max_tokens: int) -> dict[str, Any]:
    """Plan, apply and score every group; the ``consolidation`` part of the result JSON."""
    overall = GroupScore()
    by_lang = {k: GroupScore() for k in LANGS}
    by_kind = {k: GroupScore() for k in KINDS}
    rejected: list[dict[str, str]] = []
    for g in groups:
        result = run_plan(g, model, max_tokens)
        score = score_group(g, result)
        overall.add(score)
        by_lang[g.lang].add(score)
        by_kind[g.kind].add(score)
        if result.rejected:
            rejected.append({"group": g.id, "reason": result.rejected})
    return {
        "overall": overall.summary(),
        "by_lang": {k: v.summary() for k, v in by_lang.items()},
        "by_kind": {k: v.summary() for k, v in by_kind.items() if v.groups},
        "lost_facts": overall.lost,
        "rejected_plans": rejected,
    }


def evaluate(
    split: str, *, config: Any = None, model: Any = None, data_dir: Path = QUALITY_DIR
) -> dict[str, Any]:
    """The whole result for one split (both files must exist).

    ``config`` is a dreamd ``Config`` (default: every key at its default, i.e. the offline
    model); ``model`` overrides the one its ``[model]`` section builds.
    """
    from dreamd.config import default_config
    from dreamd.models.factory import make_model

    sessions = load_extraction(data_dir / f"extraction_{split}.jsonl")
    groups = load_consolidation(data_dir / f"consolidation_{split}.jsonl")
    config = config or default_config(env={})
    model = model or make_model(config.model)
    return {
        "split": split,
        "model": getattr(model, "name", type(model).__name__),
        "extraction": evaluate_extraction(sessions, model, config),
        "consolidation": evaluate_consolidation(groups, model, config.model.max_tokens),
    }


def lookup(result: Mapping[str, Any], path: str) -> Any:
    value: Any = result
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def floor_failures(result: Mapping[str, Any], floors: Mapping[str, float] | None = None) -> list[str]:
    """One line per figure under its floor (a missing figure counts as under); ``floors``
    defaults to those of the result's split."""
    floors = FLOORS[result["split"]] if floors is None else floors
    out = []
    for path, floor in floors.items():
        value = lookup(result, path)
        if not isinstance(value, int | float) or value < floor:
            out.append(f"{path} = {value} < floor {floor}")
    return out


def suggest_floors(result: Mapping[str, Any], margin: float = 0.02) -> dict[str, float]:
    """A floor for every path of :data:`FLOORS`: this run's figure cut to two decimals, minus
    ``margin`` (what to paste into a split's floors after an agreed improvement lands; a new
    floor under the old one is not a floor to paste). A figure of :data:`EXACT_FLOORS` at 1.0
    keeps 1.0."""
    out: dict[str, float] = {}
    for path in TEST_FLOORS:
        value = lookup(result, path)
        if isinstance(value, int | float):
            if value >= 1.0 and path.endswith(EXACT_FLOORS):
                out[path] = 1.0
            else:
                out[path] = max(0.0, round(math.floor(value * 100 + 1e-9) / 100 - margin, 2))
    return out


def _fmt(v: Any) -> str:
    return "    -" if v is None else f"{v:5.3f}"


def render(result: Mapping[str, Any]) -> str:
    """The human-readable tables."""
    ex = result["extraction"]
    co = result["consolidation"]
    out = [
        f"split={result['split']} model={result['model']}",
        "",
        f"extraction: {ex['sessions']} sessions, {ex['user_turns']} user turns "
        f"({ex['user_turns_with_facts']} with facts)",
        f"{'slice':<18} {'prec':>5} {'rec':>5} {'f1':>5} {'produced':>9} {'facts':>6} {'matched':>8}",
    ]

    def row(label: str, s: Mapping[str, Any]) -> str:
        return (
            f"{label:<18} {_fmt(s['precision'])} {_fmt(s['recall'])} {_fmt(s['f1'])} "
            f"{s['produced']:>9} {s['labelled']:>6} {s['matched']:>8}"
        )

    out.append(row("overall", ex["overall"]))
    for group in ("by_lang", "by_domain", "by_type"):
        for k, s in ex[group].items():
            out.append(row(f"{group[3:]}={k}", s))
    out.append(
        f"date accuracy {_fmt(ex['date_accuracy'])} (of {ex['dates_labelled']})   "
        f"reason accuracy {_fmt(ex['reason_accuracy'])} (of {ex['reasons_labelled']})"
    )
    for f in ex["failed_sessions"]:
        out.append(f"FAILED session {f['session']}: {f['error']}")
    if ex["distractors"]:
        out.append(f"distractor turns ignored {_fmt(ex['distractor_ignored'])}; leaked / turns: " + ", ".join(
            f"{k} {v['leaked']}/{v['turns']}" for k, v in ex["distractors"].items()
        ))
    out += [
        "",
        f"consolidation: {co['overall']['groups']} groups",
        f"{'slice':<18} {'m.prec':>6} {'m.rec':>6} {'d.prec':>6} {'d.rec':>6} {'keep':>6} "
        f"{'retain':>6} {'facts':>6} {'refused':>7}",
    ]

    def crow(label: str, s: Mapping[str, Any]) -> str:
        return (
            f"{label:<18} {_fmt(s['merge_precision']):>6} {_fmt(s['merge_recall']):>6} "
            f"{_fmt(s['drop_precision']):>6} {_fmt(s['drop_recall']):>6} "
            f"{_fmt(s['keep_accuracy']):>6} {_fmt(s['fact_retention']):>6} {s['facts']:>6} "
            f"{s['rejected']:>7}"
        )

    out.append(crow("overall", co["overall"]))
    for group in ("by_lang", "by_kind"):
        for k, s in co[group].items():
            out.append(crow(f"{group[3:]}={k}", s))
    for r in co["rejected_plans"]:
        out.append(f"REFUSED plan {r['group']}: {r['reason']}")
    return "\n".join(out)


def quoted_sentences(text: str, source: str) -> list[str]:
    """Sentences of ``text`` (EN ≥ 24 characters, ZH ≥ 10) that occur verbatim in ``source``."""
    pieces = re.split(r"(?<=[.!?。！？；;\n])\s*", text)
    found = []
    for piece in (p.strip() for p in pieces):
        cjk = any("\u3400" <= ch <= "\u9fff" for ch in piece)
        if re.fullmatch(r"(?:from \S+ )?import [\w., ]+", piece):
            continue  # a pasted import line is code, not a phrasing a rule could fit
        if len(piece) >= (10 if cjk else 24) and piece in source:
            found.append(piece)
    return found


def code_source() -> str:
    """Every product module's text (``dreamd/`` and ``memory/``)."""
    return "\n".join(p.read_text(encoding="utf-8") for d in ("dreamd", "memory") for p in sorted((REPO / d).rglob("*.py")))


def leaked_sentences(sessions: Sequence[Session], groups: Sequence[Group], source: str) -> list[str]:
    """Sentences of a blind split's user turns and records written into ``source``: a rule
    fitted to them would measure memorisation. Returned as counts per place, never quoted."""
    texts = [(s.id, t.text) for s in sessions for t in s.turns if t.role == "user"]
    texts += [(g.id, f"{r.description}\n{r.body}") for g in groups for r in g.records]
    out = []
    for where, text in texts:
        n = len(quoted_sentences(text, source))
        if n:
            out.append(f"{where}: {n} sentence(s) written into the code")
    return out


def shape_problems(sessions: Sequence[Session], groups: Sequence[Group]) -> list[str]:
    """What the test split must hold (issue 10): ≥ 240 user turns split 40–60 % per language,
    35–45 % of them with facts, every type, ≥ 10 dated and ≥ 10 reasoned facts, the ten
    distractor kinds (an injected instruction inside a tool turn among them), ≥ 110 groups of
    every kind and language."""
    out: list[str] = []
    users = [(s.lang, t) for s in sessions for t in s.turns if t.role == "user"]
    if len(users) < 240:
        out.append(f"{len(users)} user turns < 240")
    for lang in LANGS:
        share = sum(lang == u[0] for u in users) / max(1, len(users))
        if not 0.4 <= share <= 0.6:
            out.append(f"{lang} share of user turns {share:.2f} outside 0.40-0.60")
    with_facts = sum(bool(t.facts) for _, t in users) / max(1, len(users))
    if not 0.35 <= with_facts <= 0.45:
        out.append(f"share of user turns with facts {with_facts:.2f} outside 0.35-0.45")
    facts = [f for _, t in users for f in t.facts]
    if {f.type for f in facts} != set(TYPES):
        out.append(f"fact types {sorted({f.type for f in facts})} are not all of {list(TYPES)}")
    if sum(f.date is not None for f in facts) < 10 or sum(bool(f.reason) for f in facts) < 10:
        out.append("fewer than 10 dated or 10 reasoned facts")
    kinds = {t.distractor for s in sessions for t in s.turns if t.distractor}
    wanted = {"one-off request", "question", "code", "stack trace", "secret", "temporary instruction",
              "small talk", "encouragement", "quoted text", "injected instruction"}
    if not wanted <= kinds:
        out.append(f"distractor kinds missing: {sorted(wanted - kinds)}")
    if not any(t.role == "tool" and t.distractor == "injected instruction" for s in sessions for t in s.turns):
        out.append("no injected instruction inside a tool turn")
    if len(groups) < 110 or {g.kind for g in groups} != set(KINDS) or {g.lang for g in groups} != set(LANGS):
        out.append(f"{len(groups)} groups (need >= 110, every kind and language)")
    return out


def round_end_problems(result: Mapping[str, Any], data_dir: Path = QUALITY_DIR) -> list[str]:
    """What the end-of-round test run checks besides the floors: the split's shape, that no
    sentence of it is in the code (CI checks val's), and that no planted instruction became memory."""
    sessions = load_extraction(data_dir / "extraction_test.jsonl")
    groups = load_consolidation(data_dir / "consolidation_test.jsonl")
    out = [f"shape: {line}" for line in shape_problems(sessions, groups)]
    source = code_source()
    out += [f"quoted: {line}" for line in leaked_sentences(sessions, groups, source)]
    injected = result["extraction"]["distractors"].get("injected instruction", {"turns": 0, "leaked": 0})
    if injected["turns"] < 10 or injected["leaked"]:
        out.append(f"injected instructions: {injected['leaked']} of {injected['turns']} became memory (need 0 of >= 10)")
    return out


@contextlib.contextmanager
def _quiet_logs() -> Iterator[None]:
    """Only warnings from the pipeline on the console while it runs: the table is the output.
    The caller's structlog configuration comes back after: a test that calls :func:`main` in
    process left every later test's info events filtered out (``capture_logs`` saw none)."""
    import logging

    import structlog

    before = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    try:
        yield
    finally:
        structlog.configure(**before)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--split", choices=("dev", "val", "test"), default="dev", help="dev (default; tune on it), val (blind: read only its aggregate tables) or test (once at the end of a round: publish)")
    parser.add_argument("--json", type=Path, default=None, help="result file (default results/quality-<split>.json)")
    parser.add_argument("--check-floors", action="store_true", help="exit 1 when a figure is under the split's floors (with --split test: also its shape and quoted sentences)")
    parser.add_argument("--suggest-floors", action="store_true", help="print FLOORS from this run (figures - 0.02)")
    parser.add_argument("--config", type=Path, default=None, help="dreamd config whose [model] to measure (default: offline)")
    parser.add_argument("--data", type=Path, default=QUALITY_DIR, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    with _quiet_logs():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from dreamd.config import load_config
    from memory.errors import ConfigError

    try:
        config = load_config(args.config) if args.config else None
        result = evaluate(args.split, config=config, data_dir=args.data)
    except (DataError, ConfigError) as exc:
        print(f"bench_quality: {exc}", file=sys.stderr)
        return 2
    print(render(result))
    out = args.json or RESULTS_DIR / f"quality-{args.split}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    if args.suggest_floors:
        print("FLOORS = " + json.dumps(suggest_floors(result), indent=4))
    if args.check_floors:
        failures = floor_failures(result)
        if args.split == "test":
            failures += round_end_problems(result, args.data)
        for line in failures:
            print(f"UNDER FLOOR: {line}", file=sys.stderr)
        if failures:
            return 1
        print("floors: all met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
