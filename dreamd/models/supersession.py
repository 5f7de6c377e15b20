"""Supersession at extraction: which live record a newly extracted one replaces (issue 23).

When a new statement changes the value a record of the directory holds (same subject, new
value), the new record supersedes the old one in the same commit that adds it: the old
record leaves the set as a merge into the new one (``"superseded": true`` in the change,
"superseded" in ``dreamd log``), and what it said that the new one replaces stays, word for
word, on the result's ``**Previously:**`` line, so nothing is lost and recall finds only the
current value. Whatever model extracted the record, the test is the same, by structure
(:mod:`dreamd.models.offline.compare.clauses`), like the retention gate's:

- an explicit newer statement ("no longer", "instead of", "switched from X to Y", a change
  word with the older wording kept and one value replaced: :func:`~dreamd.models.offline.compare.clauses.replaced_by`);
- or the older wording said again with one value replaced by another of the same kind, no
  change word needed (:func:`~dreamd.models.offline.compare.clauses.restated_with_new_value`):
  read at extraction the newer statement is the user's current word;
- or the model named the record it supersedes (the gate checked the name is in the set the
  model was shown): then every fact of the old record not still said by the new one is
  history.

The new record's own statement then states the current value: its words naming the replaced
value move to the history line too, and its quote elides them (:func:`current_value`). A new
record superseding nothing whose statement names the value it replaces, that value being the
user's earlier one (said in an earlier turn of the session, or held by a live record), is
written the same way with only those words on its history line (:func:`carried_history`); said
once, "use X, not Y" stays as said.

The same statement said again replaces nothing (it is a duplicate). The old record's other
facts, the ones no replaced value is named in, stay current in the result.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from dreamd.models.offline.compare.clauses import (
    HISTORY,
    PART,
    Supersession,
    clause_units,
    clauses,
    fact_clauses,
    replaced_by,
    restated_with_new_value,
    restates,
    said_by,
    supersessions,
)
from dreamd.models.offline.compare.paraphrase import VALUE_SLOT, gist, value_kind
from dreamd.models.offline.plan.plan import Rec, merge_group
from dreamd.models.offline.text import CJK_RE, normalize, tokens
from memory.store.records import Record

MAX_CANDIDATES = 40
"""Live records read (bodies) per new record: the ones sharing the most description words."""


@dataclass(frozen=True)
class Superseding:
    """A new record replacing ``old`` (a live record's name): ``result`` is what the commit
    writes in their place, the new record with the replaced words on its history line."""

    old: str
    result: Record


def replaced_facts(new: Record, old: Record) -> list[str]:
    """The fact clauses of ``old`` that ``new`` replaces (none: ``new`` does not supersede it).

    The record's own statement (its first fact clause) must be among them: a record whose
    side clause merely shares a word with the new one is about something else. A clause no
    replaced value is named in stays current; one naming a value a replaced clause lost goes
    with it (the user's own words of the old value, "In their words: …"), as does one saying a
    replaced clause again."""
    newer, older = (new.description, new.body), (old.description, old.body)
    old_facts = _facts(*older)
    if not old_facts or not _words(new) & _statement_words(*older):
        return []  # no word of the old statement said again: another subject
    gone = replaced_by(newer, older)
    if not gone:
        new_facts = list(_facts(*newer))
        if restates(new_facts, list(old_facts)):
            return []
        gone = [c for c in old_facts if any(restated_with_new_value(n, c) or changes_value_of(n, c) for n in new_facts)
                or (new_facts and moves_value_of(new_facts[0], c))]
    if not gone or gone[0] != old_facts[0]:
        return []  # the record's own statement (its first fact) must be what changed, not a side clause
    kept_values = gist("\n".join(_facts(*newer))).values
    lost = {v for c in gone for v in gist(c).values} - kept_values
    return [c for c in old_facts if c in gone or (lost and gist(c).values & lost) or _restates_any(c, gone)]


def changes_value_of(new_clause: str, old_clause: str) -> bool:
    """A newer clause that says it is a change (a change word: :func:`~dreamd.models.offline.compare.clauses.supersessions`)
    and says every word of the older clause again, one of the older clause's values replaced by
    one of its kind ("the handover is 2027-01-03" / "the landlord says the handover moved to
    2027-01-08"): the news around the restated subject ("the landlord says") is not a subject
    of its own; or that denies what the older clause states, beside a word of its subject and a
    new word or value ("formatting is black" / "it's ruff format now, not black"; without a change
    word, a value of the kind it gives: "the deadline is the 16th, not the 15th"). The older
    clause must hold the value replaced: a clause that does not is never rewritten."""
    old, new = gist(old_clause), gist(new_clause)
    if not old.content:
        return False
    current = new.values - new.negated_values
    came = {value_kind(v) for v in current - old.values}
    changed = bool(supersessions(new_clause))
    if (changed and not any(old.negated) and old.content <= new.content
            and {value_kind(v) for v in old.values - current} & came):
        return True
    # "it's X now, not Y" after "… is Y …": what the older clause states, the newer denies, beside
    # a word of the older's subject and something new of its own; without a change word naming a
    # new value (a stop names none) the denied value must be of the kind the newer gives ("the
    # 16th, not the 15th")
    stated = (old.values - old.negated_values) | (old.content - set().union(*old.negated))
    denied = (new.negated_values | set().union(*new.negated)) & stated
    said = new.content - set().union(*new.negated) - denied
    if not denied or not said & old.content:
        return False
    named = any(st.kind not in ("stopped", "no-longer", "zh-no-longer", "anymore") for st in supersessions(new_clause))
    return (named and bool(came or said - old.content)) or bool({value_kind(v) for v in denied & old.values} & came)


def moves_value_of(new_clause: str, old_clause: str) -> bool:
    """A newer statement (a record's own first clause, not the user's words quoted under it)
    with a change word that replaces a value of the older clause by one of its kind and names
    the older clause's subject, the words before its last value ("代码冻结是 <date>，…" / "冻结提前
    了，改成 <date>"; "the launch deadline is <date>" / "the beta deadline moved to <date>" names
    another): every word in English, in Chinese (characters, no word segmentation) half of them
    and two in a row."""
    old, new = gist(old_clause), gist(new_clause)
    units = old.frames[0] if old.frames else ()
    if any(old.negated) or VALUE_SLOT not in units or not supersessions(new_clause):
        return False
    current = new.values - new.negated_values
    if not {value_kind(v) for v in old.values - current} & {value_kind(v) for v in current - old.values}:
        return False
    last = len(units) - 1 - units[::-1].index(VALUE_SLOT)
    subject = [u for u in units[:last] if u != VALUE_SLOT]
    if not any(CJK_RE.match(u) for u in subject):
        return bool(subject) and set(subject) <= new.content
    said = {pair for clause in new.clauses for pair in itertools.pairwise(clause)}
    return 2 * len(set(subject) & new.content) >= len(set(subject)) and not said.isdisjoint(itertools.pairwise(subject))


def _restates_any(clause: str, gone: Sequence[str]) -> bool:
    """Whether ``clause`` says a replaced clause again, with more around it (the user's words
    of the old value, "In their words: …"): the new record may name the old value elsewhere, so
    the value alone does not single it out."""
    return any(said_by(g, [clause_units(clause)]) for g in gone)


def supersede(new: Record, old: Record, gone: Sequence[str] | None = None) -> Superseding | None:
    """``new`` superseding ``old``: the clauses ``gone`` (default :func:`replaced_facts`; a
    model's named supersession passes every fact of ``old``) on the result's history line, the
    rest of ``old`` joining it; None when nothing is replaced or the result would not fit."""
    gone = replaced_facts(new, old) if gone is None else list(gone)
    if not gone:
        return None
    group = [_rec(new, "2"), _rec(old, "1")]
    result, held = merge_group(group, {old.name: gone})
    if len(held) < 2:
        return None  # the old record's words would push the body past the size cap: leave both
    description, body = current_value(result["description"], result["body"], gone)
    return Superseding(old.name, new.replace(description=description, body=body))


# ----------------------------------------------------------------------------- the current value

_NEW_THEN_OLD = frozenset({"instead", "zh-instead", "from-to"})
"""The supersession kinds (:func:`~dreamd.models.offline.compare.clauses.supersessions`) whose
pattern may hold the old value after the new one ("X instead of Y", "用 X 代替 Y", "to X from
Y"): the words from the new value's end to the old value's are the ones naming it."""
_OLD_THEN_NEW = frozenset({"from-to", "zh-from-to"})
"""The kinds that may hold it between a joining word and the new value ("from Y to X", "从 Y 改成
X"): the joining word and the old value name it."""
_STOPS = frozenset({"no-longer", "zh-no-longer", "anymore", "stopped"})
"""The kinds that say a value is gone and give none in its place."""
_CLOSE = ".!?;。！？；"
MOVED = " — "
"""On a history line, between the replaced clause and the words moved out of the current
statement that named what it replaced."""


def current_value(description: str, body: str, gone: Sequence[str], *, quote: bool = True) -> tuple[str, str]:
    """A superseding record with its own statement stating the current value (issue 23): the
    words of its first fact clause that name the replaced value — the old value the supersession
    reading matched as replaced ("… instead of <old>", "from <old> to …", "从 <old> 改成 …"),
    or a part of the statement between clause boundaries that says only that the old value is
    gone ("不叫 <old>，叫 <new>") — move, word for word, onto the history line beside the first
    clause replaced (the old record's statement), and out of the description when it holds
    them; with ``quote``, out of every other current line that holds them word for word too (the
    "In their words" quote), an ellipsis in their place (:func:`_elided`); the name stays.
    ``gone`` are the old record's clauses the history line holds: the replaced value is a word
    of theirs. Unchanged when no such words are found, or when the statement would keep nothing
    new."""
    facts = fact_clauses(description, body)
    if not facts or not gone:
        return description, body
    replaced = frozenset(tokens(" ".join(gone)))
    found = _replaced_span(facts[0], gone, replaced)
    if found is None:
        return description, body
    moved = _moved(description, body, facts[0], found, replaced)
    if moved is None:
        return description, body
    lines, at, rest, words = moved
    at_history = next((i for i, ln in enumerate(lines) if HISTORY.match(ln)), None)
    if at_history is None or gone[0] not in lines[at_history]:
        # the new statement said the old one again word for word ("use X instead of <old> for …"
        # says "use <old> for …"): with its words moved, the old statement goes to history
        lines.append(f"{_history_label(gone[0])} {_closed(gone[0])}")
        at_history = len(lines) - 1
    first = gone[0].rstrip(_CLOSE)
    lines[at_history] = lines[at_history].replace(first, f"{first}{MOVED}{words}", 1)
    return _finish(description, body, lines, facts[0], found, rest, words, quote=quote, keep={at, at_history})


def _moved(description: str, body: str, statement: str, found: tuple[int, int, frozenset[str]],
           replaced: frozenset[str]) -> tuple[list[str], int, str, str] | None:
    """The body's lines with the statement's line rewritten to the statement without the words
    at ``found`` (the line's index, the rest of the statement, the words moved); None when the
    statement is not on a line of its own making or would say nothing new without them."""
    lines = body.splitlines()
    at = next((i for i, ln in enumerate(lines) if statement in ln and not HISTORY.match(ln)), None)
    if at is None:
        return None
    a, b, _ = found
    words = statement[a:b].strip(" ,，:：" + _CLOSE)
    rest = _cut_out(statement, a, b)
    if statement[-1] in _CLOSE and rest[-1:] not in tuple(_CLOSE):
        rest += statement[-1]  # a last part moved takes none of the sentence's end mark with it
    if not tokens(rest) - replaced or not clause_units(rest):
        return None  # the statement would say nothing new: leave it as said
    lines[at] = lines[at].replace(statement, rest, 1)
    return lines, at, rest, words


def _finish(description: str, body: str, lines: list[str], statement: str, found: tuple[int, int, frozenset[str]],
            rest: str, words: str, *, quote: bool, keep: set[int]) -> tuple[str, str]:
    """The description without the moved words, and (``quote``) every current line but ``keep``
    (the statement's, the history line) with them elided (:func:`_elided`)."""
    if quote:
        lines = [ln if i in keep or HISTORY.match(ln) else _elided(ln, words) for i, ln in enumerate(lines)]
    cut = statement[found[0]:found[1]].rstrip(_CLOSE)
    if (where := description.find(statement.rstrip(_CLOSE))) >= 0:
        description = description[:where] + rest.rstrip(_CLOSE) + description[where + len(statement.rstrip(_CLOSE)):]
    elif (where := description.find(cut)) >= 0 or (where := description.find(words)) >= 0:
        length = len(cut) if description.startswith(cut, where) else len(words)
        description = _cut_out(description, where, where + length)
    return description, "\n".join(lines) + ("\n" if body.endswith("\n") else "")


ELIDED = "…"
"""In a superseding record's current lines other than its statement (the "In their words"
quote), in place of the words moved to the history line: the quote keeps the user's sentence,
the words naming the replaced value said once, where they are past."""


def _elided(line: str, words: str) -> str:
    """``line`` with ``words`` (the words the statement moved to the history line), where it holds
    them word for word between word boundaries, replaced by :data:`ELIDED`."""
    at = line.find(words)
    while at >= 0 and not _bounded(line, at, at + len(words)):
        at = line.find(words, at + 1)
    if at < 0 or not words:
        return line
    before, after = line[:at].rstrip(), line[at + len(words):].lstrip()
    if CJK_RE.search(words):
        return before + ELIDED + after
    gap = "" if not after or not after[0].isalnum() else " "
    return f"{before} {ELIDED}{gap}{after}" if before else f"{ELIDED}{gap}{after}"


def _bounded(text: str, a: int, b: int) -> bool:
    return (a == 0 or not text[a - 1].isalnum() or CJK_RE.match(text[a - 1]) is not None) and (
        b == len(text) or not text[b].isalnum() or CJK_RE.match(text[b]) is not None)


# ----------------------------------------------------------------------------- a correction carrying its own history


class Heard:
    """What the user said before a correction, and what the directory's records hold: where
    :func:`carried_history` looks for the value a new record's statement says it replaces.
    ``turns`` are the session's user turns in order (the whole transcript, not only the job's new
    turns); ``records`` the live records' descriptions (the commit's :class:`LiveIndex`)."""

    def __init__(self, turns: Sequence[str], records: LiveIndex | None = None, *, words: Heard | None = None) -> None:
        self.texts = list(turns)
        self.index = records
        self._words = words  # the Heard whose turns' words these are (read once per job)

    @functools.cached_property
    def turns(self) -> list[frozenset[str]]:
        """Each user turn's words: read the first time a new record names a replaced value."""
        if self._words is not None:
            return self._words.turns
        return [frozenset(tokens(t)) for t in self.texts]

    def with_records(self, records: LiveIndex | None) -> Heard:
        """The same turns (their words read once per job, when first needed) with a commit's
        live records."""
        return Heard(self.texts, records, words=self._words or self)

    def records(self, words: frozenset[str]) -> list[tuple[frozenset[str], str]]:
        """The live descriptions sharing a word with ``words`` (at most :data:`MAX_CANDIDATES`), with their words."""
        if self.index is None:
            return []
        texts = [self.index.descriptions[n] for n in self.index.sharing(words)[:MAX_CANDIDATES]]
        return [(frozenset(tokens(t)), t) for t in texts]

    def turns_until(self, at: int, words: frozenset[str]) -> list[tuple[frozenset[str], str]]:
        """The user turns before ``at`` sharing a word with ``words``, with their words."""
        return [(t, text) for t, text in zip(self.turns[:at], self.texts[:at], strict=True) if t & words]

    def correction(self, statement: frozenset[str], said: frozenset[str], rest: frozenset[str],
                   value: frozenset[str]) -> int | None:
        """The user turn that says the correction: the first holding every word of the statement
        (the sentence an offline record is made of), else the first holding the words moved
        (``said``) and a word of the ``rest``, else (a model's own wording) the first holding a
        word of the rest that no turn holding the replaced ``value`` holds."""
        at = next((i for i, t in enumerate(self.turns) if statement <= t), None)
        if at is None:
            at = next((i for i, t in enumerate(self.turns) if said <= t and t & rest), None)
        if at is None:
            value_turns = [t for t in self.turns if value <= t]
            new = rest.difference(*value_turns)
            at = next((i for i, t in enumerate(self.turns) if t & new), None)
        return at


def carried_history(new: Record, heard: Heard) -> Record | None:
    """A new record superseding no record whose own statement names a value and the value it
    replaces (the span :func:`current_value` moves, found the same way), the replaced value being
    the user's earlier one — every word of it in one user turn before the turn saying the
    correction (:meth:`Heard.correction`), or in one live record's description — written as a
    superseding record: its statement states the current value, its history line holds the
    replaced words, word for word (``**Previously:** instead of <old>.``), and its quote elides
    them. None — the record stays as said — when the statement names no replaced value, or the
    value was not the user's earlier one ("use X, not Y" said once is a rule with its rejected
    alternative, not a change). The span is read twice: against everything the session and the
    directory said but the correction's own turn, to find that turn, then against what came
    before it."""
    facts = fact_clauses(new.description, new.body)
    if not facts:
        return None
    statement = facts[0]
    if not supersessions(statement) and len(_parts(statement)) < 2:
        return None  # no structure naming a replaced value: the common case, decided cheaply
    words = frozenset(tokens(statement))
    records = heard.records(words)
    whole = [(t, text) for t, text in heard.turns_until(len(heard.turns), words) if not words <= t]
    found = _carried_span(statement, whole + records, words)
    if found is None:
        return None
    a, b, value = found
    at = heard.correction(words, frozenset(tokens(statement[a:b])), words - frozenset(tokens(statement[a:b])), value)
    found = _carried_span(statement, (heard.turns_until(at, words) if at is not None else []) + records, words)
    if found is None:
        return None
    moved = _moved(new.description, new.body, statement, found, found[2])
    if moved is None:
        return None
    lines, at_line, rest, cut = moved
    lines.append(f"{_history_label(cut)} {_closed(cut)}")
    description, body = _finish(new.description, new.body, lines, statement, found, rest, cut, quote=True,
                                keep={at_line, len(lines) - 1})
    return new.replace(description=description or new.description, body=body)


CARRIED_CONTEXT = 20
"""What a correction's gone part is compared with (its values, :func:`_replaced_span`): the turns
and records sharing the most words with the statement. Every one of them still counts for the
words of the replaced value."""


def _carried_span(statement: str, said: Sequence[tuple[frozenset[str], str]],
                  words: frozenset[str]) -> tuple[int, int, frozenset[str]] | None:
    """:func:`_replaced_span` against what was ``said`` (words and text), the replaced value's
    words all in one of them; ``words`` are the statement's."""
    if not said:
        return None
    closest = sorted(range(len(said)), key=lambda i: -len(said[i][0] & words))[:CARRIED_CONTEXT]
    found = _replaced_span(statement, [said[i][1] for i in sorted(closest)], frozenset().union(*(w for w, _ in said)),
                           whole=True)
    return found if found is not None and any(found[2] <= w for w, _ in said) else None


def _replaced_span(statement: str, replaced_clauses: Sequence[str], replaced: frozenset[str], *,
                   whole: bool = False) -> tuple[int, int, frozenset[str]] | None:
    """Where the statement names the replaced value (``replaced``: the words of
    ``replaced_clauses``): a patterned supersession's old value (in the whole statement or one
    part of it), else a part that says a value is gone beside one that does not; with the words
    of the replaced value itself (the span's other words join it: "instead of", "not"). With
    ``whole`` a gone part's value is every word of it in Latin letters but a stop's cue ("not
    hand-written DDL" is the value "hand-written DDL", not "DDL" alone): no older clause says
    which of its words it replaces."""
    if len(normalize(statement)) != len(statement) or len(statement.lower()) != len(statement):
        return None  # the patterns' offsets are those of the normalised (NFKC: "，" is ","), lowered clause
    parts = _parts(statement)
    older = gist(" ".join(replaced_clauses))
    for start, part in [(0, statement), *(parts if len(parts) > 1 else [])]:
        for st in supersessions(part):
            span = _old_value_span(part, st, replaced)
            if span is not None:
                return start + span[0], start + span[1], span[2]
    for i, (start, part) in enumerate(parts if len(parts) > 1 else []):
        # a part saying a value of the replaced clauses is gone: a stop, or a denial of one
        g = gist(part)
        stop = any(st.kind in _STOPS for st in supersessions(part))
        denied = g.negated_values | set().union(*g.negated)
        # a denied value of the replaced clauses, or a denied word of theirs in Latin letters
        # ("…, not black" after "formatting is black"; a Chinese run may hold the subject)
        gone_values = older.values if stop else denied & older.values | {
            w for w in denied & older.content if not CJK_RE.search(w)}
        named = g.values | (set() if stop else denied)
        others = {t for j, (_, p) in enumerate(parts) if j != i for t in tokens(p)}
        # every word of the replaced clauses only this part says is such a value (a part holding
        # the subject too, "<subject> 不叫 <old>", would take the subject away), and the other
        # parts say something the replaced clauses do not (the new value)
        only_here = [m.group().lower() for m in _WORD.finditer(part) if (tokens(m.group()) & replaced) - others]
        if (not only_here or any(not any(v in w for v in named & gone_values) for w in only_here)
                or not others - replaced - tokens(part)):
            continue
        value = frozenset(tokens(" ".join(only_here)))
        if whole:
            stops = [st for st in supersessions(part) if st.kind in _STOPS]
            latin = stops[0].old if stops else tokens(" ".join(w for w in _WORD.findall(part) if not CJK_RE.search(w)))
            value |= latin
        if i + 1 < len(parts):
            return start, parts[i + 1][0], value  # the part and the boundary after it
        return parts[i - 1][0] + len(parts[i - 1][1]), len(statement), value  # the boundary before it and the part
    return None


def _old_value_span(part: str, st: Supersession, replaced: frozenset[str]) -> tuple[int, int, frozenset[str]] | None:
    spans = {g: (a, b) for g, a, b in st.spans}
    if "old" not in spans or "new" not in spans:
        return None
    (oa, ob), (na, nb) = spans["old"], spans["new"]
    # the old value: the first run of the old group's words that are words of the replaced
    # clauses (the rest of the group is the context that stays: "… instead of <old> for the app")
    ends: list[int] = []
    value: set[str] = set()
    for m in _WORD.finditer(part, oa, ob):
        words = tokens(m.group())
        if words and words <= replaced:
            ends.append(m.end())
            value |= words
        elif ends:
            break
    if not ends:
        return None
    if st.kind in _NEW_THEN_OLD and nb <= oa:
        return nb, ends[-1], frozenset(value)
    if st.kind in _OLD_THEN_NEW and ob <= na:
        gap = list(_WORD.finditer(part, spans["subj"][1] if "subj" in spans else 0, oa))
        return (gap[-1].start(), ends[-1], frozenset(value)) if gap else None
    return None


_WORD = re.compile(r"[^\s,，:：.!?;。！？；]+")


def _closed(clause: str) -> str:
    return clause if clause[-1] in _CLOSE else clause + ("。" if CJK_RE.search(clause) else ".")


def _parts(text: str) -> list[tuple[int, str]]:
    """The parts of a clause between clause boundaries (:data:`~dreamd.models.offline.compare.clauses.PART`), with their offsets."""
    out: list[tuple[int, str]] = []
    start = 0
    for m in PART.finditer(text):
        if m.start() > start:
            out.append((start, text[start:m.start()]))
        start = m.end()
    if start < len(text):
        out.append((start, text[start:]))
    return out


def _cut_out(text: str, a: int, b: int) -> str:
    """``text`` without ``text[a:b]``, the words either side joined as they would be written."""
    before, after = text[:a].rstrip(), text[b:].lstrip()
    if not before:
        after = after.lstrip(" ,，:：")
        return after[:1].upper() + after[1:] if after[:1].isascii() and text[:1].isupper() else after
    if not after or after[0] in _CLOSE + ",，:：" or CJK_RE.match(before[-1]) or CJK_RE.match(after[0]):
        return before + after
    return f"{before} {after}"


def _rec(record: Record, stamp: str) -> Rec:
    return Rec(record.name, record.type, record.description, record.body, stamp, record.importance, None)


class LiveIndex:
    """The live records' description words, read once per commit (at 10,000 records tokenising
    every description again for each new record would cost seconds): :meth:`candidates`."""

    def __init__(self, live: Iterable[tuple[str, str]]) -> None:
        """``live`` is ``(name, description)``, newest first."""
        self.order: dict[str, int] = {}
        self.postings: dict[str, list[str]] = {}
        self.descriptions: dict[str, str] = {}
        for i, (name, description) in enumerate(live):
            self.order[name] = i
            self.descriptions[name] = description
            for t in tokens(description):
                self.postings.setdefault(t, []).append(name)

    def candidates(self, new: Record) -> list[str]:
        """Names of the live records worth reading for ``new``: those whose description shares
        a word with it, most shared first (then newest), at most :data:`MAX_CANDIDATES`."""
        return self.sharing(_words(new))[:MAX_CANDIDATES]

    def sharing(self, words: Iterable[str]) -> list[str]:
        """Names of the live records whose description shares a word of ``words``, most shared
        first, then newest."""
        shared: Counter[str] = Counter()
        for t in words:
            shared.update(self.postings.get(t, ()))
        return [name for name, _ in sorted(shared.items(), key=lambda kv: (-kv[1], self.order[kv[0]]))]


def _words(record: Record) -> frozenset[str]:
    return _text_words(record.description, record.body)


# One new record is held against up to MAX_CANDIDATES live ones, and a live record against every
# new record of every job that names its words: the clauses and words of a (description, body)
# are computed once, not per pair (they were most of an extraction's supersession check). Bounded
# by entries: a body is at most 64 KiB, and most are a few hundred bytes.
@functools.lru_cache(maxsize=1024)
def _facts(description: str, body: str) -> tuple[str, ...]:
    return tuple(fact_clauses(description, body))


@functools.lru_cache(maxsize=1024)
def _text_words(description: str, body: str) -> frozenset[str]:
    return frozenset(tokens(description + "\n" + "\n".join(_facts(description, body))))


@functools.lru_cache(maxsize=1024)
def _statement_words(description: str, body: str) -> frozenset[str]:
    facts = _facts(description, body)
    return frozenset(tokens(facts[0])) if facts else frozenset()


def named(new: Record, old: Record) -> Superseding | None:
    """``new`` superseding the record a model named: every fact of ``old`` it does not still
    say goes to history (the model said the whole record is out of date)."""
    return supersede(new, old, fact_clauses(old.description, old.body))


def linked(new: Record, old: Record) -> Superseding | None:
    """``new`` superseding the earlier record of its own batch it names (one session stated a value,
    then changed it, and the extractor matched the statement changed by identity): the facts of
    ``old`` holding a value of a kind ``new`` names that ``new`` does not hold go to history, the
    rest stay current; None when no fact of ``old`` holds one (nothing is rewritten)."""
    said = gist(new.description + "\n" + "\n".join(fact_clauses(new.description, new.body)))
    kinds = {value_kind(v) for v in said.values}
    gone = [c for c in fact_clauses(old.description, old.body)
            if any(value_kind(v) in kinds and v not in said.values for v in gist(c).values)]
    return supersede(new, old, gone) if gone else None


def current_merge(result: Record, sources: Sequence[Record], *, quote: bool = True) -> Record | None:
    """A dream's merge result that supersedes its sources (:func:`is_supersession`) with its
    statement stating the current value (:func:`current_value`, the clauses the merge moved to
    the history line being what it replaced; ``quote``: its quote eliding them too); None when it
    supersedes nothing or nothing moves."""
    had = {c for s in sources for c in _history(s.body)}
    gone = [c for c in _history(result.body) if c not in had]
    if not gone:
        return None
    description, body = current_value(result.description, result.body, gone, quote=quote)
    return None if body == result.body else result.replace(description=description or result.description, body=body)


def superseding_merge(result: Record, sources: Sequence[tuple[str, Record]]) -> Record | None:
    """A dream's merge that the plan made plain (its history line holds nothing new) over a
    source whose statement a strictly newer source replaces, read as extraction reads it
    (:func:`replaced_facts`: "CI runs on Buildkite now, not Jenkins" over "CI runs on Jenkins"):
    the result with the replaced clauses on its history line and out of its current lines, so
    the dream and extraction read one change one way. ``sources`` are (stamp, record); None
    when the merge supersedes already, or no source is replaced. Whether the history line may
    hold them is the retention gate's (an explicit newer statement naming them)."""
    records = [r for _, r in sources]
    if len(sources) < 2 or is_supersession(result, records):
        return None
    gone: list[str] = []
    for stamp, old in sources:
        newer = (new for at, new in sources if at > stamp)
        replaced = next((g for new in newer if (g := replaced_facts(new, old))), [])
        gone += [c for c in replaced if c not in gone]
    if not gone:
        return None
    lines = [ln for ln in result.body.splitlines() if HISTORY.match(ln) or ln.strip() not in {*gone, *map(_closed, gone)}]
    said = " ".join(_closed(c) for c in gone)
    at = next((i for i, ln in enumerate(lines) if HISTORY.match(ln)), None)
    if at is None:
        lines.append(f"{_history_label(gone[0])} {said}")
    else:
        lines[at] = f"{lines[at].rstrip()} {said}"
    return result.replace(body="\n".join(lines) + "\n")


def _history_label(said: str) -> str:
    """The history line's label for what it will hold: Chinese for a Chinese clause."""
    return "**此前：**" if CJK_RE.search(said) else "**Previously:**"


def _history(body: str) -> list[str]:
    return [c for line in body.splitlines() if HISTORY.match(line) for c in clauses("", line)]


def is_supersession(result: Record, sources: Sequence[Record]) -> bool:
    """Whether a merge into ``result`` supersedes its sources: its history line holds a clause
    no source's history line held (a dream's plan moved a replaced value there), so the log
    can say "superseded" whichever model planned it."""
    had = {c for s in sources for c in _history(s.body)}
    return bool(set(_history(result.body)) - had)


__all__ = ["ELIDED", "MAX_CANDIDATES", "MOVED", "Heard", "LiveIndex", "Superseding", "carried_history", "current_merge",
           "current_value", "is_supersession", "linked", "moves_value_of", "named", "replaced_facts", "supersede", "superseding_merge"]
