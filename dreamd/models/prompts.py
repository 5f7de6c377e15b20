"""The prompts dreamd sends to a model for extraction and consolidation (DESIGN §6).

Every prompt is ``(system, prompt)``. The system prompt is a constant: byte-stable, no dates,
no per-directory text, so a provider's prompt cache can reuse it across every call. The user
prompt is a few lines of instructions followed by exactly one machine-readable payload,
``memory.model.llm.render_payload(payload)``, whose shape is a contract shared with the offline
backend (which answers from the payload alone):

- extraction: ``{"task": "extract", "today": "YYYY-MM-DD",
  "index": [{"name", "type", "description"}...],
  "turns": [{"role": "user"|"assistant", "text", "timestamp": str|null}...]}``
  → a JSON array of ``{name, type, description, body}``, each optionally with ``supersedes``:
  the name of the index record whose value it replaces (the gate refuses a name the index
  does not hold);
- consolidation: ``{"task": "consolidate", "today": "YYYY-MM-DD",
  "records": [{"name", "type", "description", "body", "created_at", "updated_at",
  "importance", "expires"}...], "recent": [names]}``
  → a JSON array of ``{"source_names": [...], "result": {...} | null}``.

The payload is rendered with sorted keys, so the extraction payload reads ``index``, ``task``,
``today``, ``turns``: the index (stable while the set is unchanged) comes first and the turns
last. :func:`split_for_cache` cuts a prompt just before ``"today"`` so a backend can mark the
stable prefix as cacheable; the cut is a pure function of the prompt text, so builders and
backends cannot disagree about it.

Selection's prompt lives in ``memory/retrieval/select.py`` (the recall path must not import dreamd).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol

from memory.model.llm import INPUT_OPEN, render_payload
from memory.store.records import Record

CACHE_SPLIT = '"today": '
"""The payload key that starts the volatile part of a prompt.

It can only appear literally (with unescaped quotes) as an object key, and no payload has
user-controlled keys, so the first occurrence after ``<input>`` is the real key.
"""


class TurnLike(Protocol):
    """One transcript turn (``memory.transcripts.Turn`` fits)."""

    @property
    def role(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def timestamp(self) -> object: ...


class IndexEntry(Protocol):
    """One entry of the existing set (``memory.store.transaction.ManifestEntry`` fits)."""

    @property
    def name(self) -> str: ...

    @property
    def type(self) -> str: ...

    @property
    def description(self) -> str: ...


class PlanInput(IndexEntry, Protocol):
    """One record a consolidation may touch (:class:`PlanRecord` fits)."""

    @property
    def body(self) -> str: ...

    @property
    def created_at(self) -> str | None: ...

    @property
    def updated_at(self) -> str | None: ...

    @property
    def importance(self) -> float: ...

    @property
    def expires(self) -> str | None: ...


def plan_stamp(rec: PlanInput) -> str:
    """When a planned record last changed (its creation when never updated; "" when unknown):
    what "strictly newer" compares."""
    return rec.updated_at or rec.created_at or ""


class _Timestamps(Protocol):
    @property
    def created_at(self) -> str: ...

    @property
    def updated_at(self) -> str: ...


@dataclass(frozen=True)
class PlanRecord:
    """A record as the consolidation planner sees it: its content plus its age and weight."""

    name: str
    type: str
    description: str
    body: str
    created_at: str | None = None
    updated_at: str | None = None
    importance: float = 0.5
    expires: str | None = None

    @classmethod
    def of(cls, record: Record, entry: _Timestamps | None = None) -> PlanRecord:
        """From a parsed record and (optionally) its manifest entry for the timestamps."""
        return cls(
            name=record.name,
            type=record.type,
            description=record.description,
            body=record.body,
            created_at=entry.created_at if entry is not None else None,
            updated_at=entry.updated_at if entry is not None else None,
            importance=record.importance,
            expires=record.expires,
        )


_TYPES_GUIDE = """\
Each memory has one of four types:
- user: who the user is: their role, expertise, responsibilities, tools they use, and their
  stable preferences (style, language, tone, workflow).
- feedback: how to work with this user: things they corrected or asked you to stop doing, and
  approaches they confirmed and want kept. Record the rule, not the incident.
- project: what is going on and why: goals, deadlines, milestones, decisions and the reasons
  behind them, constraints, who owns what. Facts a newcomer to the work could not get from the
  code or its history.
- reference: where things are: issue trackers, dashboards, runbooks, documents, channels,
  environments, and what each one is for."""

_BODY_GUIDE = """\
Each memory is a JSON object with exactly these four string fields and no others:
- "name": a new slug of lowercase letters, digits, "-" and "_", starting with a letter or
  digit, at most 64 characters, e.g. "prefers-tabs" or "release-freeze-2026-12".
- "type": "user", "feedback", "project" or "reference".
- "description": one line (no line breaks) saying what the memory is about, specific enough
  that someone scanning an index knows whether to open it.
- "body": the memory itself in Markdown, self-contained: it must make sense months later to
  someone who never saw this conversation. For feedback and project memories, state the fact
  or rule first, then a line starting with "**Why:**" giving the reason, then a line starting
  with "**How to apply:**" saying when and how it changes what to do."""

_DATES_GUIDE = """\
Dates: write absolute dates (YYYY-MM-DD), never "today", "tomorrow", "next Thursday" or "last
week". Resolve relative dates against the timestamp of the turn they appear in, or against the
"today" field of the input when a turn has no timestamp."""

_OUTPUT_RULES = """\
Answer with only the JSON array: no prose before or after it, no code fences, no comments, no
trailing commas. Use only JSON that a strict parser accepts. If there is nothing to do, answer
[]. Do not call tools."""

EXTRACT_SYSTEM = f"""\
You maintain the long-term memory of an AI coding assistant. The memory is a set of small
Markdown notes that future sessions with the same user will read, so that the user never has
to repeat themselves. You are given the index of the notes that already exist and the most
recent turns of a conversation. Your job is to pick out what is worth remembering from these
turns and write it as new notes.

{_TYPES_GUIDE}

What to save: things that will still be true and useful in a future session: explicit
requests to remember something, preferences, corrections and confirmed approaches, decisions
and their reasons, deadlines, people and their roles, and pointers to where information lives.
Prefer what the user said over what the assistant said; save an assistant statement only when
the user clearly accepted it.

What NOT to save:
- anything the code, the repository, its configuration or its git history already records
  (file layouts, function names, what a commit changed, how a module works);
- recipes for fixing a particular bug or error, and debugging steps;
- the state of the task at hand: what was just done, what is in progress, TODO lists, plans
  for the next hour;
- secrets of any kind: passwords, API keys, tokens, private keys, connection strings with
  credentials. Never copy one into a note, not even partly;
- small talk, guesses, and anything the user did not mean to keep.

Do not duplicate the index: if an existing note already says it, leave it out. If a turn
changes the value an existing note holds (a new deadline, a reversed decision, a changed
preference, a corrected value), write a new note with a new name that states the current
value, and give it a fifth key, "supersedes", whose value is the name of that existing note
from the index: the old note's words are kept on the new note's history line, so do not
repeat them as current. Name only a note of the index, only the one whose value changed, and
each at most once; a note about something else stays as it is. A correction ("I meant X, not
Y") supersedes the note that says Y, never simply the note written last; when no note says Y,
supersede nothing. Never reuse a name from the index, and never use the same name twice in your answer.
One fact or rule per note; merge closely related details into that one note rather than
writing several near-identical ones. Most conversations hold nothing worth saving: [] is a
common and correct answer.

{_DATES_GUIDE}

{_BODY_GUIDE}
The one exception: a new note that supersedes an existing one also has "supersedes" (above).

{_OUTPUT_RULES}

Example of a valid answer:
[{{"name": "prefers-tabs", "type": "user", "description": "User prefers tabs for indentation", "body": "Use tabs, not spaces, for indentation.\\n"}}, {{"name": "no-mocked-db-in-tests", "type": "feedback", "description": "Integration tests must hit a real database, not mocks", "body": "Integration tests use the real database.\\n**Why:** a mocked test passed while the production migration failed (2026-03-02).\\n**How to apply:** when writing or fixing integration tests, never mock the database layer.\\n"}}, {{"name": "release-freeze-2026-12-11", "type": "project", "description": "Release freeze moved to 2026-12-11", "body": "The release freeze starts 2026-12-11.\\n**Why:** the payment provider's cut-over moved.\\n**How to apply:** plan merges to main around the new date.\\n", "supersedes": "release-freeze-2026-12"}}]
"""

CONSOLIDATE_SYSTEM = f"""\
You maintain the long-term memory of an AI coding assistant: a set of small Markdown notes
that future sessions read. Notes pile up over many sessions, so now and then the set is
consolidated, like a night's sleep tidying the day's memories. You are given every note that
may be touched (with when it was created and last updated, its importance from 0 to 1 and an
optional expiry date) and the names of the notes added or changed since the last
consolidation. Your job is to return a plan of changes that leaves a smaller, truer, clearer
set without losing anything that is still useful.

{_TYPES_GUIDE}

What a plan may do, one operation per group of notes:
- merge duplicates and paraphrases: notes saying the same thing become one note that keeps
  every distinct statement, reason and detail of each source; a merge never loses a fact;
- supersede: when a newer note explicitly replaces an older one ("no longer", "not X
  anymore", "moved to", "switched from X to Y", "instead of", "改成", "不再", "换成",
  "已迁到"), drop the older note or merge the two into one note stating the current fact
  (keep the history if it still matters: "moved from 2026-03-01 to 2026-03-15");
- drop notes whose expiry date is before today (unless their importance is 0.8 or more).
Two notes about one subject that say different things are usually both true ("the staging
database is read-only on weekends", "the staging database is Postgres 15"): without an
explicit newer statement, keep both. Notes the plan does not mention stay exactly as they
are; leave good notes alone. Pay most attention to the recent notes: compare each one with
the older notes it may duplicate or replace. When unsure, keep the note.

The plan is a JSON array of operations. Each operation is an object with exactly two keys:
- "source_names": a non-empty array of names of notes from the input that this operation
  replaces. Each name may appear in at most one operation of the whole plan.
- "result": the one note that replaces them, an object with exactly "name", "type",
  "description" and "body" (all strings), or null to delete the source notes without a
  replacement.
A result name must be new or one of its own source names; it must never be the name of a note
the plan keeps, and no two results may share a name. Describe notes in the same style as the
input: a one-line description, a self-contained body.

{_DATES_GUIDE}

{_BODY_GUIDE}

{_OUTPUT_RULES}

Example of a valid answer:
[{{"source_names": ["prefers-tabs", "indent-with-tabs"], "result": {{"name": "prefers-tabs", "type": "user", "description": "User prefers tabs for indentation", "body": "Use tabs, not spaces, for indentation in every language.\\n"}}}}, {{"source_names": ["demo-deadline-2026-03-01"], "result": null}}]
"""

_EXTRACT_INSTRUCTIONS = (
    "Extract new memories from the conversation below. The input gives the index of memories "
    "that already exist, today's date and the conversation turns (oldest first). Answer with "
    "only the JSON array described in your instructions.\n\n"
)

_CONSOLIDATE_INSTRUCTIONS = (
    "Plan the consolidation of the notes below. The input gives the notes, the names of the "
    "recent ones and today's date. Answer with only the JSON array of operations described in "
    "your instructions.\n\n"
)


def _timestamp(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    return str(value)


def extract_payload(
    turns: Sequence[TurnLike], index: Sequence[IndexEntry], *, today: date
) -> dict[str, Any]:
    """The extraction payload (shape shared with the offline backend)."""
    return {
        "task": "extract",
        "today": today.isoformat(),
        "index": [{"name": e.name, "type": e.type, "description": e.description} for e in index],
        "turns": [
            {"role": t.role, "text": t.text, "timestamp": _timestamp(t.timestamp)} for t in turns
        ],
    }


def consolidate_payload(
    records: Sequence[PlanInput], recent: Sequence[str], *, today: date
) -> dict[str, Any]:
    """The consolidation payload (shape shared with the offline backend)."""
    return {
        "task": "consolidate",
        "today": today.isoformat(),
        "records": [
            {
                "name": r.name,
                "type": r.type,
                "description": r.description,
                "body": r.body,
                "created_at": r.created_at,
                "updated_at": r.updated_at,
                "importance": r.importance,
                "expires": r.expires,
            }
            for r in records
        ],
        "recent": list(recent),
    }


def extract_prompt(
    turns: Sequence[TurnLike], index: Sequence[IndexEntry], *, today: date
) -> tuple[str, str]:
    """``(system, prompt)`` for an extraction call."""
    payload = extract_payload(turns, index, today=today)
    return EXTRACT_SYSTEM, _EXTRACT_INSTRUCTIONS + render_payload(payload)


def consolidate_prompt(
    records: Sequence[PlanInput], recent: Sequence[str], *, today: date
) -> tuple[str, str]:
    """``(system, prompt)`` for a consolidation-plan call."""
    payload = consolidate_payload(records, recent, today=today)
    return CONSOLIDATE_SYSTEM, _CONSOLIDATE_INSTRUCTIONS + render_payload(payload)


def split_for_cache(prompt: str) -> tuple[str, str]:
    """``(stable, volatile)`` with ``stable + volatile == prompt``.

    ``stable`` is the instructions plus the payload up to ``"today"`` (for extraction: the
    existing index), the part that repeats across calls for one memory directory. A prompt
    without a payload or without the key has no stable part: ``("", prompt)``.
    """
    start = prompt.find(INPUT_OPEN)
    if start == -1:
        return "", prompt
    cut = prompt.find(CACHE_SPLIT, start)
    if cut == -1:
        return "", prompt
    return prompt[:cut], prompt[cut:]
