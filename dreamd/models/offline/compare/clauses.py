"""Clauses of a record, when one is still said by another, and explicit supersessions.

A dream may merge and drop records, but it must never lose a fact (issue 10). "Fact" is made
checkable here, as a pure function of the text, so the offline planner, the property test and
the torture checker all hold a dream to the same rule:

- A record's **clauses** are its body (its description when the body states nothing: a
  description only summarises the body) cut at line breaks and sentence ends
  (``. ! ? ;`` followed by a space, and ``。！？；``), with list markers and the
  ``**Why:**``/``**How to apply:**`` labels peeled off. The offline extractor's placeholder
  reason ("no reason was stated") says nothing about the world and is not a clause.
- A clause's **units** are its lowercase words (stopwords and negations kept: "not" matters)
  and the characters of its Chinese runs, without the words that only join list items
  ("and", "和", "与", "及").
- A clause is **still said** by a set of texts when its units appear, in the same order,
  within the units of one clause of one of them. Growing a clause ("in the editor" → "in
  the editor and in terminals") keeps it; dropping a word ("never", a version number, a
  date) or swapping two ("tabs over spaces") does not.
- A newer statement **supersedes** an older one only when it says so explicitly: "no longer
  X", "not X anymore", "switched/moved from X to Y", "Y instead of X", "replaced X with Y",
  "<subject> moved to Y", "不再 X", "从 X 改成/换成 Y", "<subject> 改成/换成/已迁到 Y". With an
  old value X the older clause must state X (and, for a one-word X, share some other word of
  context); with only a subject, the older clause must name the whole subject and state a
  value of the same kind as Y (a number, a proper name, a path or address; in Chinese, a
  place for 迁到 or a value or destination for 改成/改到).
- Beyond those wordings, the **general test** compares gists
  (:mod:`dreamd.models.offline.compare.paraphrase`): a clause with a change word ("now", "from now
  on", "pushed to", "renamed", "现在", "以后", "改用", "调整为" …) and no additive one ("also",
  "也") replaces an older clause whose wording it keeps, adding no word, while it replaces
  one value with another of the same kind (a date, a time, a number, a weekday, an address,
  a name) or, values equal, one word with another in the same place; a stop ("stopped",
  "dropped", "no longer", "不再", "不…了") replaces the clause it restates, or one naming the
  same value when the stop says little else.
- Two true statements about one subject ("read-only on weekends", "Postgres 15") are never a
  supersession, nor is the same statement said again (:func:`restates`).
- A merge may keep what an explicitly superseded record said on a **history** line
  (``**Previously:**``, ``**此前：**``): still said, so nothing is lost, but not a current fact
  (:func:`fact_clauses` leaves it out). :func:`unexplained_history` is the check that
  nothing else is ever moved there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass
from functools import lru_cache

from dreamd.models.offline import markers as lex
from dreamd.models.offline.compare.paraphrase import Gist, gist, swapped_in_place, value_kind
from dreamd.models.offline.text import CJK_RE, normalize, raw_words, token_set, tokens

__all__ = [
    "HISTORY", "HOW_LABEL", "HOW_LEAD", "PART", "PLACEHOLDER_REASON", "WHY_LABEL", "WHY_LEAD",
    "Supersession", "Units", "clause_units", "clauses", "fact_clauses", "has_digit", "holder_words",
    "line_clauses", "named_as_replaced", "names_a_value", "replaced_by", "replaced_clauses",
    "replaces_all", "restated_with_new_value", "restates", "said_by", "statements", "strip_label",
    "supersedes", "supersessions", "unexplained_history"
]

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|[。！？；]+")
_LABEL = re.compile(r"^\s*(?:[-*+>]\s+|\d+[.)]\s+|#+\s+)*(?:\*\*[^*\n]{1,40}?:?\*\*:?\s*)?")
WHY_LABEL = re.compile(r"^\s*\*\*why:?\*\*", re.I)
HOW_LABEL = re.compile(r"^\s*\*\*how to apply:?\*\*", re.I)
WHY_LEAD = re.compile(WHY_LABEL.pattern + r":?\s*", re.I)
"""The Why label with what separates it from its text, removed to read the reason."""
HOW_LEAD = re.compile(HOW_LABEL.pattern + r":?\s*", re.I)
HISTORY = re.compile(r"^\s*\*\*(?:previously|此前)\s*[:：]?\*\*\s*[:：]?\s*", re.I)
"""A merge result's history line (``**Previously:**``, ``**此前：**``): what an explicit newer
statement replaced, kept word for word but no longer stated as current."""
PLACEHOLDER_REASON = re.compile(r"no reason was (?:stated|given|recorded)|未说明原因")
"""The offline extractor's placeholder reason: provenance, not a fact."""


def strip_label(line: str) -> str:
    """A line without its list marker and ``**Label:**`` prefix."""
    return _LABEL.sub("", line, count=1).strip()


def _split_line(line: str) -> list[str]:
    text = strip_label(line)
    return [c.strip() for c in _SENTENCE_END.split(text) if c and c.strip()]


Units = tuple[str, ...]
_LIST_JOINERS = frozenset({"and", "和", "与", "與", "及"})
"""Words that only join list items: "A and B" is still said by "A, B and C"."""


@lru_cache(maxsize=65536)
def clause_units(clause: str) -> Units:
    """Lowercase words and Chinese characters of one clause, in order.

    Characters, not bigrams: without word segmentation a bigram spans word boundaries
    ("球和"). Order is kept because it carries meaning ("tabs over spaces")."""
    out: list[str] = []
    for run in raw_words(clause):
        if CJK_RE.match(run):
            out.extend(ch for ch in run if ch not in _LIST_JOINERS)
        elif run not in _LIST_JOINERS:
            out.append(run)
    return tuple(out)


def _within(units: Units, other: Units) -> bool:
    rest = iter(other)
    return all(u in rest for u in units)


def _keep(line: str) -> bool:
    return not (WHY_LABEL.match(line) and PLACEHOLDER_REASON.search(line))


def line_clauses(line: str) -> list[str]:
    """The clauses of one line (placeholder reasons have none)."""
    if not _keep(line):
        return []
    return [c for c in _split_line(line) if clause_units(c)]


def _collect(lines: Iterable[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        out.extend(c for c in line_clauses(line) if c not in out)
    return out


def clauses(description: str, body: str) -> list[str]:
    """Every clause of a record (of its body; of its description when the body has none)."""
    return _collect(body.splitlines()) or _collect([description])


def fact_clauses(description: str, body: str) -> list[str]:
    """The clauses that state something now: body lines other than Why/How and history (else
    the description)."""
    lines = [ln for ln in body.splitlines() if not WHY_LABEL.match(ln) and not HOW_LABEL.match(ln) and not HISTORY.match(ln)]
    return _collect(lines) or _collect([description])


def said_by(clause: str, pool: Iterable[Units]) -> bool:
    """Whether one clause of ``pool`` (as units) says everything ``clause`` says, in order."""
    units = clause_units(clause)
    wanted = set(units)
    return any(wanted.issubset(other) and _within(units, other) for other in pool)


# ----------------------------------------------------------------------------- supersession

_CHANGE_EN = r"(?:switch(?:ed|ing)?|mov(?:ed|ing)|migrat(?:ed|ing)|chang(?:ed|ing)|went|gone|upgrad(?:ed|ing)|relocat(?:ed|ing))"
_CUT = re.compile(rf"(?:(?<!\s)\s++)?(?:,|—|–|\b(?:but|{lex.REASON_EN})\b|，|{lex.REASON_ZH}|但是|但)\s*")
_ZH_TO = r"(?:改成了?|换成了?|改为|换为|迁到了?|迁移到了?|搬到了?|切到了?|切换到了?|改到了?)"
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("from-to", re.compile(rf"^(?P<subj>.*?)\b{_CHANGE_EN}\s+(?:[\w-]+\s+){{0,4}}?from\s+(?P<old>.+?)\s+(?:to|onto)\s+(?P<new>.+)$")),
    ("instead", re.compile(r"^(?P<new>.*?)\binstead of\s+(?P<old>.+)$")),
    ("replaced", re.compile(r"^(?P<subj>.*?)\breplac(?:ed|ing)\s+(?P<old>.+?)\s+(?:with|by)\s+(?P<new>.+)$")),
    ("replaced", re.compile(r"^(?P<old>.+?)(?<!.\s)\s+(?:has been|have been|was|were|is|are|got)\s+(?:replaced|superseded)\s+(?:by|with)\s+(?P<new>.+)$")),
    ("from-to", re.compile(rf"^(?P<subj>.*?)\b{_CHANGE_EN}\s+(?:[\w-]+\s+){{0,4}}?(?:to|onto)\s+(?P<new>.+?)\s+from\s+(?P<old>.+)$")),
    ("zh-replaced", re.compile(r"^(?P<old>.+?)(?:已经|已)?(?:被|让)(?P<new>.+?)(?:取代|替代|替换|代替)了?$")),
    ("zh-instead", re.compile(r"^(?P<subj>.*?)用(?P<new>.+?)(?:代替|替换|取代|替代)(?:了|掉)?(?P<old>.+)$")),
    ("no-longer", re.compile(r"^(?P<subj>.*?)\bno longer\s+(?P<old>.+)$")),
    ("anymore", re.compile(r"^(?P<subj>.*?)\b(?:not|n't|never)\s+(?P<old>.+?)\s+any\s?more\b")),
    ("moved-to", re.compile(rf"^(?P<subj>.+?)\s+(?:(?:has|have|had|was|were|is|are|got|just|now|been|all)\s+)*(?P<verb>{_CHANGE_EN})\s+(?:over\s+)?(?:to|onto)\s+(?P<new>.+)$")),
    ("zh-from-to", re.compile(rf"^(?P<subj>.*?)(?:从|由)(?P<old>.+?){_ZH_TO}(?P<new>.+)$")),
    ("zh-no-longer", re.compile(r"^(?P<subj>.*?)不再(?P<old>.+)$")),
    ("zh-to", re.compile(rf"^(?P<subj>.+?)(?:已经|已|都)?(?P<verb>{_ZH_TO})(?P<new>.+)$")),
)
_PATTERN_CUE = re.compile(rf"{_CHANGE_EN}|instead of|replac|superseded|取代|替代|替换|代替|no longer|any\s?more|不再|{_ZH_TO}")
"""What every one of :data:`_PATTERNS` needs somewhere in the lowered clause (a change verb,
"instead of", "replac…"/"superseded", 取代/替代/替换/代替, "no longer", "any more", 不再, or a
Chinese "to" verb): one search that tells most clauses, which state no change, from the
thirteen; not a wording of its own (``tests/test_compare_clauses.py`` holds it to the patterns)."""
_MARKER_WORDS = token_set(
    ["switch", "switched", "switching", "moved", "moving", "migrated", "migrating", "changed", "changing", "went", "gone", "upgraded", "upgrading", "relocated", "relocating", "instead", "longer", "anymore", "now"]
)
_ZH_AT_PLACE = re.compile(r"(?:在|位于)(?!周|每|晚|早|上午|下午|中午|凌晨|节假日|工作日)")
_EN_PLACE = re.compile(r"\b(?:in|at|on|under|inside|hosted|lives?|located|sits?|stored|kept)\b")
_WHEN = re.compile(
    r"\d{4}-\d{2}-\d{2}|\b\d{1,2}:\d{2}\b|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|周[一二三四五六日天]|星期|(?<![0-9一二三四五六七八九十])[0-9一二三四五六七八九十]+[月号日点]",
    re.I,
)
"""A date or time: a move to one ("the freeze moved to 2026-12-11") changes a value, not a place."""
_PLACE_VERB = re.compile(r"^(?:mov|migrat|relocat)|迁|搬")
_ZH_VALUE = re.compile(r"是|用|为|定在|设为|采用|使用|[发送推放传交]到")


@dataclass(frozen=True)
class Supersession:
    """One explicit "this replaces that" clause: its kind, subject, old and new values."""

    kind: str
    subject: frozenset[str]
    old: frozenset[str]
    new: frozenset[str]
    new_text: str
    context: frozenset[str]
    place: bool = False
    """The change is a move to a place ("moved to eu-west-1", "已迁到新机房"), not to a date
    or time: what it replaces is a location."""
    clause: str = ""
    """For the general kinds (``change``, ``stopped``): the newer clause, its change words out."""
    spans: tuple[tuple[str, int, int], ...] = ()
    """For the patterned kinds: where each group (``subj``, ``old``, ``new``) the pattern matched lies in the clause."""


def _cut(text: str) -> str:
    return _CUT.split(text, maxsplit=1)[0]


_ZH_NOT_ANY_MORE = r"不[^，。；,;]{1,12}?了"
"""Chinese "不…了" ("不用 Jenkins 了" counts its Latin word apart): no longer."""
_CHANGE_CUE = re.compile(
    r"\b(?:now|nowadays|these days|from now on|going forward|as of|starting (?:today|tomorrow|next)|"
    r"no longer|no more|any ?more|instead|replac(?:e|ed|ing)|switch(?:ed|ing)?|swapp(?:ed|ing)|"
    r"mov(?:ed|ing)|chang(?:ed|ing)|renam(?:ed|ing)|push(?:ed)? (?:back|out|to)|postpon(?:ed|ing)|"
    r"delay(?:ed)|reschedul(?:ed|ing)|bump(?:ed)?|upgrad(?:ed|ing)|downgrad(?:ed|ing)|"
    r"migrat(?:ed|ing)|took over|handed over|dropp(?:ed|ing)|stopp(?:ed|ing)|quit|gone|moved off|"
    r"moved away from|got rid of|ditch(?:ed)?|abandon(?:ed)?|"
    r"retir(?:ed|ing)|deprecat(?:ed|ing)|sunset(?:ted)?)\b"
    r"|现在|目前|如今|(?:改|换|变)(?:成|为|到|用|去|掉)了?|(?:改|换|变)了"
    r"|(?:迁移?|搬|调整|推迟|提前|延期)(?:成|为|到|去)?了?|不再|以后|今后|从此"
    r"|停用|弃用|接替|接手|已经不|取代|替代|替换|代替|" + _ZH_NOT_ANY_MORE,
    re.I,
)
"""Words that say a statement is new: without one, two different values are two facts."""
_KEEP_CUE = re.compile(r"no longer|no more|any ?more|instead|不再|已经不|" + _ZH_NOT_ANY_MORE, re.I)
"""Change words that are also negations: kept in the clause, so its gist negates what follows."""
_STOP_CUE = re.compile(
    r"\b(?:no longer|no more|stopp(?:ed|ing)|quit|gave up|dropp(?:ed|ing)|any ?more|gone|moved off|"
    r"moved away from|got rid of|ditch(?:ed)?|abandon(?:ed)?|"
    r"retir(?:ed|ing)|deprecat(?:ed|ing)|sunset(?:ted)?)\b|不再|停用|弃用|已经不|换掉|" + _ZH_NOT_ANY_MORE,
    re.I,
)
_ADDITIVE = re.compile(r"\b(?:also|too|as well|additionally|in addition)\b|也|还|另外|同时", re.I)


_PAST_PART = re.compile(
    r"[(（][^()（）]*\b(?:used to|previously|formerly|was|were)\b[^()（）]*[)）]"
    r"|[,;，；]?(?<!\s)\s*+(?:it|they|which|this)?\s*+(?:used to be|was previously|was formerly)\b[^,;.，；。]*"
    r"|[(（][^()（）]*(?:原来|原先|以前|之前)[^()（）]*[)）]|[,，]?(?:原来|原先|以前|之前)是[^,，。；]*",
    re.I,
)
"""A part of a clause that recalls the old value ("(it used to be Tuesdays)", "（原来是周二）"):
what the clause says now is the rest. Linear in a run of spaces: the second branch starts only
where a run starts (no match ends inside one) and never gives a run back."""


PART = re.compile(r"(?<!\s)\s*+(?:[,—–，：]|:(?!\S))\s*+")
"""A clause boundary inside a clause. Linear in a run of spaces: a match starts only where a run
starts and never gives a run back."""


def _general(text: str) -> tuple[Supersession, ...]:
    """The general kinds: a clause with a change word and no additive one ("also", "也")."""
    if not _CHANGE_CUE.search(text) or _ADDITIVE.search(text):
        return ()
    rest = _PAST_PART.sub(" ", text)
    rest = _CHANGE_CUE.sub(lambda m: m.group() if _KEEP_CUE.fullmatch(m.group()) else " ", rest)
    kind = "stopped" if _STOP_CUE.search(text) else "change"  # a stop states no new value
    subject = frozenset(tokens(rest))
    # "the boss called, the board moved it: the launch is on <date> now": one part between
    # clause boundaries may be the older wording said again, the rest the news of the change
    segments = [p for p in PART.split(rest) if clause_units(p)]
    parts = [rest, *segments] if len(segments) > 1 else [rest]
    return tuple(Supersession(kind, subject, frozenset(), frozenset(), "", frozenset(), clause=p) for p in parts)


@lru_cache(maxsize=65536)
def supersessions(clause: str) -> tuple[Supersession, ...]:
    """The explicit supersession statements in one clause (usually none)."""
    text = normalize(clause)
    return _patterned(text) + _general(text)


def _patterned(text: str) -> tuple[Supersession, ...]:
    low = text.lower()
    if not _PATTERN_CUE.search(low):
        return ()
    for kind, pattern in _PATTERNS:
        m = pattern.search(low)
        if not m:
            continue
        groups = m.groupdict()
        old = tokens(_cut(groups.get("old") or ""))
        new_low = _cut(groups.get("new") or "")
        if kind == "replaced":  # "replaced Jira with Linear for tickets": the value, then context
            new_low = re.split(r"(?<!\s)\s+(?:for|in|on|at|as|across|to)\s+", new_low, maxsplit=1)[0]
        start = m.start("new") if groups.get("new") is not None else len(text)
        # the original case of the new value ("Loki", "GitHub Actions"), when lowering kept offsets
        new_text = text[start : start + len(new_low)] if len(text) == len(low) else new_low
        subject: set[str] = tokens(groups.get("subj") or "") - _MARKER_WORDS
        if kind == "instead":
            subject, new = set(), frozenset(tokens(new_low) - _MARKER_WORDS)
        else:
            new = frozenset(tokens(new_low))
        if kind in ("moved-to", "zh-to") and not subject and _USER.match(groups.get("subj") or ""):
            subject = {_USER_SUBJECT}  # "the user moved to Munich": the user is the subject
        if kind in ("moved-to", "zh-to") and not subject:
            continue
        if kind not in ("moved-to", "zh-to") and not old:
            continue
        context = frozenset(tokens(low) - old - new - _MARKER_WORDS)
        place = bool(_PLACE_VERB.search(groups.get("verb") or "")) and not _WHEN.search(new_text)
        spans = tuple((g, *m.span(g)) for g in ("subj", "old", "new") if groups.get(g) is not None)
        return (Supersession(kind, frozenset(subject), frozenset(old), new, new_text, context, place, spans=spans),)
    return ()


def has_digit(toks: Iterable[str]) -> bool:
    return any(ch.isdigit() for t in toks for ch in t)


def _proper(text: str) -> bool:
    """A capitalised word after the first, or a Latin word inside Chinese text (a name)."""
    words = re.findall(r"[A-Za-z][A-Za-z0-9+#.-]*", text)
    if CJK_RE.search(text):
        return bool(words)
    return any(w[0].isupper() for w in words[1:])


def _address(text: str) -> bool:
    return bool(re.search(r"://|(?<![\w-])[\w-]+/[\w-]|(?<!\b[\w-])\b[\w-]+\.(?:com|org|net|io|dev|internal|local)\b|#[\w-]+", text))


def _names_something(value: str) -> bool:
    """A new value that is a name: it has a capital letter ("Loki", "GitHub Actions")."""
    return bool(re.search(r"[A-Z]", value))


def names_a_value(s: Supersession) -> bool:
    """A worded change to a new value that is a number, an address or a name ("moved to app.example.dev")."""
    return bool(s.new) and (has_digit(s.new) or _address(s.new_text)
                            or _names_something(s.new_text))


def _same_kind(old_clause: str, rest: frozenset[str], s: Supersession) -> bool:
    """Whether the older clause states a value of the kind the move or change replaces.

    A move replaces a location: the older clause must say where (English "in/at/on/hosted/
    lives…" with a value of the new one's kind; Chinese "在/位于", not "在周末"). A change
    replaces a value of the same kind: a number, an address, a name (Chinese: or "是/用/为/
    定在…", or where something is sent: "推送到/发到/放到…"). "Read-only on weekends" is
    neither a place nor such a value, so a move of the same database leaves it alone."""
    if not rest:
        return False
    cjk = bool(CJK_RE.search(old_clause))
    if s.place and cjk:
        return bool(_ZH_AT_PLACE.search(old_clause))
    if s.place and not _EN_PLACE.search(old_clause.lower()):
        return False
    return ((has_digit(rest) and has_digit(s.new))
            or (_address(old_clause) and _address(s.new_text))
            or (_proper(old_clause) and _names_something(s.new_text)) or (cjk and bool(_ZH_VALUE.search(old_clause))))


@lru_cache(maxsize=65536)
def _clause_tokens(clause: str) -> frozenset[str]:
    return frozenset(tokens(clause))


def _changed(s: Supersession, old_clause: str) -> bool:
    """The general test (see :func:`_stopped` for a stop). The newer clause keeps the older
    one's wording (its subject), adds no other word, and replaces either a value with one of
    the same kind ("standup is at 9:30" / "standup is now at 10:00"; "metrics go to Datadog"
    / "metrics go to Prometheus now") or, values equal, one word with another in the same
    place ("use yarn in the frontend repo" / "use pnpm in the frontend repo from now on")."""
    old, new = gist(old_clause), gist(s.clause)
    if (not old.content and not old.values) or any(old.negated):
        return False
    if s.kind == "stopped":
        return _stopped(old, new)
    shared = old.content & new.content
    current = new.values - new.negated_values
    gone, came = old.values - current, current - old.values
    if not gone and not came:
        only_old, only_new = old.content - new.content, new.content - old.content
        return len(only_old) == len(only_new) == 1 and bool(shared) and swapped_in_place(old, new)
    if not gone or not came or not {value_kind(v) for v in gone} & {value_kind(v) for v in came}:
        return False
    return (len(shared) >= max(1.0, 0.5 * len(old.content)) and not new.content - old.content
            and len(old.content - new.content) <= 1)


def restated_with_new_value(new_clause: str, old_clause: str) -> bool:
    """Same subject, new value, no change word (read at extraction, the newer wins): :func:`_changed`
    with a value replaced by one of its kind; a swapped word ("alpha"/"bravo service") needs one."""
    old, new = gist(old_clause), gist(new_clause)
    if not old.values - new.values or not new.values - old.values or len(old.content & new.content) < 2:
        return False  # one shared word ("Fact w1" / "Fact w2") does not pin a subject down
    return _changed(Supersession("change", frozenset(), frozenset(), frozenset(), "", frozenset(), clause=new_clause), old_clause)


def holder_words(new: Gist, words: Set[str], said: str, old: Gist,
                 stated: Sequence[Supersession]) -> int:
    """How far an earlier statement ``said`` (gist ``old``) holds what a change (gist ``new``,
    its ``words``, its supersessions ``stated``) replaces, issue 23's holder test (the
    extractor's; the dream does not use it yet): 0 when it holds neither a value named as replaced (negated, or a
    worded change's old value) nor, naming none, a value of a kind the change newly names that
    it does not say again (nothing is rewritten); else the words of the change it says outside
    the values of the held kinds, its subject (a value both say, not named as replaced, is of
    it). A name in place of another needs two of them (when it has two) unless one is the
    subject a worded change names ("the broker switched to <X>"): one word shared beside two
    names ("their last build …" / "they're building <X>") is another subject."""
    gone = named_as_replaced(new, stated)
    kinds = {value_kind(v) for v in new.values - old.values - new.negated_values}
    held = {value_kind(v) for v in old.values
            if (gone & tokens(v) if gone else v not in new.values and value_kind(v) in kinds)}
    replaced = (v for v in old.values | new.values if value_kind(v) in held
                and (gone & tokens(v) or v not in old.values & new.values))
    subject = tokens(said) - tokens(" ".join(replaced))
    named = {w for st in stated if st.kind not in ("change", "stopped") for w in st.subject}
    least = min(2, len(subject)) if held == {"name"} and not words & subject & named else 1
    return len(words & subject) if held and len(words & subject) >= least else 0


def named_as_replaced(new: Gist, stated: Sequence[Supersession]) -> set[str]:
    """The words of the values a change names as replaced: negated, or a worded change's old
    value."""
    return tokens(" ".join(new.negated_values)).union(*(st.old for st in stated))


def _stopped(old: Gist, new: Gist) -> bool:
    """A stop ("no longer", "stopped", "不再") replaces the older clause it restates ("每天早上
    跑步" / "现在不跑步了"), or one that names what stopped when the stop names little else
    or keeps half the older wording ("the app is hosted on Heroku" / "we're not using Heroku
    anymore"): a name or an address, not a weekday ("no more meetings on Fridays" leaves
    "we deploy on Fridays" alone)."""
    shared = old.content & new.content
    if len(shared) >= 0.8 * len(old.content) and (old.values <= new.values or new.values <= old.values):
        return bool(old.content)
    named = {v for v in old.values & new.values if value_kind(v) in ("name", "address")}
    return bool(named) and (len(shared) >= 0.5 * len(old.content) or len(new.content) <= 1)


_USER = re.compile(r"(?:(?<!\s)\s++)?(?:(?:the\s++)?users?|用户|用戶|我(?![们們]))\s*$", re.I)
_USER_START = re.compile(r"(?:(?<!\s)\s++)?(?:(?:the\s++)?users?\b|用户|用戶|我(?![们們]))", re.I)
_USER_SUBJECT = "<user>"
"""The subject "the user" / "用户" / "我", which tokens drop as a stopword."""


def _replaces(s: Supersession, old_clause: str, said: frozenset[str] = frozenset()) -> bool:
    """``said``: the words of the newer record. A worded old value of a named subject ("the
    lodax queue no longer uses port 81") replaces only an older clause sharing some other word
    with the newer record, never one that holds the value for a subject of its own."""
    if s.kind in ("change", "stopped"):
        return _changed(s, old_clause)
    have = set(_clause_tokens(old_clause))
    if _USER_SUBJECT in s.subject and _USER_START.match(old_clause):
        have.add(_USER_SUBJECT)
    if not have:
        return False
    if s.new and s.new <= have:
        return False  # the older clause already says the new value: nothing was replaced
    if not s.new and any(not o.new and o.old & s.old for o in _patterned(normalize(old_clause))):
        return False  # the older clause says the same stop ("不再用 X"): said again, not replaced
    if s.old:
        hit = len(s.old & have) / len(s.old)
        if hit < 0.6 or (s.subject and said and not have & (said - s.old) and not CJK_RE.search(old_clause)):
            return False
        # one word replaced: the older clause shares a word of the context or of the newer side
        return len(s.old) > 1 or bool((s.context | s.new) & have) or len(have) <= 2
    if _subject_share(s.subject, have, old_clause) < 0.8:
        return False
    return _same_kind(old_clause, frozenset(have - s.subject), s)


def _subject_share(subject: frozenset[str], have: set[str], old_clause: str) -> float:
    """How much of a supersession's subject the older clause names. Chinese subjects are
    compared by character, counted as named at half of them: without word segmentation the
    subject run often carries a word the older clause leaves implicit ("回复语言" / "回复")."""
    latin = {t for t in subject if not CJK_RE.match(t)}
    chars = {ch for t in subject if CJK_RE.match(t) for ch in t}
    if not chars:
        return len(latin & have) / len(latin) if latin else 0.0
    named = sum(1 for ch in chars if ch in old_clause) / len(chars)
    latin_share = len(latin & have) / len(latin) if latin else 1.0
    return min(1.0, named * 2) * latin_share


def supersedes(newer: tuple[str, str], older: tuple[str, str]) -> bool:
    """Whether ``newer`` (description, body) explicitly replaces every fact of ``older``.

    Every fact clause of the older record's body (its description when the body states
    nothing; a description only summarises the body) must be either still said by the newer
    one or replaced by one of its supersession clauses; a record holding one more, unrelated
    fact is left alone.
    """
    new_facts, old_facts = fact_clauses(*newer), fact_clauses(*older)
    stated = statements(*newer)
    if not stated or restates(new_facts, old_facts):
        return False
    pool = [clause_units(c) for c in clauses(*newer)]
    return replaces_all(stated, pool, old_facts)


def statements(description: str, body: str) -> list[Supersession]:
    """The explicit supersession statements of a record: in its fact clauses, and in its
    description (a one-line summary often carries the "moved to" its body leaves out: "Standup
    moved to 10:00" over "The team standup is at 10:00 on weekdays")."""
    return list(_statements(description, body))


@lru_cache(maxsize=65536)
def _statements(description: str, body: str) -> tuple[Supersession, ...]:
    """:func:`statements`, memoised by text: a dream's candidate index reads every record's,
    and the planner the same records' again, batch by batch."""
    if not _may_state_a_change(description, body):
        return ()
    facts = fact_clauses(description, body)
    extra = [c for c in line_clauses(description) if c not in facts]
    return tuple(s for c in facts + extra for s in supersessions(c))


_ANY_CUE = re.compile(f"(?:{_PATTERN_CUE.pattern})|(?:{_CHANGE_CUE.pattern})")
"""Either cue in one search, for lowercased text (the two patterns' words are lowercase, so
no ``re.I``, which costs this search half its time)."""


def _may_state_a_change(description: str, body: str) -> bool:
    """False only when no clause of the record can hold a statement: an ASCII text (where
    :func:`normalize` only collapses spaces) with neither cue anywhere. Every clause is a piece of
    the text cut at a line break, a sentence end or a label, so a cue in a clause is a cue in
    the whole text, the cut a word boundary as the clause's own end is; the Chinese and the
    non-ASCII text go the whole way, clause by clause."""
    text = description + "\n" + body
    if not text.isascii():
        return True
    return _ANY_CUE.search(" ".join(text.split()).lower()) is not None


def replaced_by(newer: tuple[str, str], older: tuple[str, str]) -> list[str]:
    """The fact clauses of ``older`` that explicit statements of ``newer`` replace (none when
    ``newer`` only restates ``older``). :func:`supersedes` is the case where every other fact
    clause of ``older`` is still said by ``newer``; a merge may move just these clauses to
    history and keep the rest of ``older`` as current facts."""
    new_facts, old_facts = fact_clauses(*newer), fact_clauses(*older)
    stated = statements(*newer)
    if not stated or restates(new_facts, old_facts):
        return []
    return replaced_clauses(stated, [clause_units(c) for c in clauses(*newer)], old_facts)


def replaced_clauses(stated: Sequence[Supersession], pool: Sequence[Units], old_clauses: Sequence[str]) -> list[str]:
    """The clauses among ``old_clauses`` that ``stated`` (with the newer record's clause
    ``pool``) replaces. When the older record holds other facts the newer does not say, only
    the general test counts (the older wording kept, one value replaced: see
    :func:`_changed`): a worded pattern ("instead of X") is too loose to single out one
    clause of a longer record."""
    if replaces_all(stated, pool, old_clauses):
        said = _pool_words(pool)
        return [c for c in old_clauses if any(_replaces(s, c, said) for s in stated)]
    general = [s for s in stated if s.kind in ("change", "stopped")]
    return [c for c in old_clauses if any(_replaces(s, c) for s in general)]


def restates(new_facts: Sequence[str], old_facts: Sequence[str]) -> bool:
    """Whether the newer fact clauses say every older one now (not in a part recalling the
    past: "(it used to be Tuesdays)"), with the same negation and no new value they replace
    it with: the same statement again ("not in Redis anymore" twice, or with more added),
    which replaces nothing."""
    pool = [clause_units(_PAST_PART.sub(" ", c)) for c in new_facts]
    if not all(said_by(c, pool) for c in old_facts):
        return False
    have = set().union(*(_clause_tokens(c) for c in old_facts))
    if any(st.new and not st.new <= have for c in new_facts for st in supersessions(c)):
        return False  # "用 pnpm 代替 npm" names a new value the older never said
    return _negates(new_facts) == _negates(old_facts)


def _negates(facts: Sequence[str]) -> bool:
    return any(any(gist(c).negated) or gist(c).negated_values for c in facts)


def replaces_all(stated: Sequence[Supersession], pool: Sequence[Units], old_clauses: Sequence[str]) -> bool:
    """:func:`supersedes` over precomputed parts: the newer record's supersession statements
    and clause units, and the older record's fact clauses (a planner over thousands of
    records computes each once)."""
    if not stated or not old_clauses:
        return False
    replaced = False
    said = _pool_words(pool)
    for clause in old_clauses:
        if any(_replaces(s, clause, said) for s in stated):
            replaced = True
        elif not said_by(clause, pool):
            return False
    return replaced


def _pool_words(pool: Sequence[Units]) -> frozenset[str]:
    return _clause_tokens(" ".join(u for units in pool for u in units if not CJK_RE.match(u)))


def unexplained_history(result: tuple[str, str], sources: Sequence[tuple[str, str, str]]) -> list[str]:
    """The clauses on a merge result's history lines (``**Previously:**``) that no source
    explains: each must say a clause that a strictly newer source explicitly replaces
    (:func:`replaced_by`), any clause of a source it wholly supersedes (its reasons with its
    facts), or a clause already on a source's history line. So a merge can move a clause out
    of the present only on an explicit newer statement naming it.

    ``result`` is (description, body); ``sources`` are (stamp, description, body), a stamp
    being an ISO time (``updated_at``, else ``created_at``)."""
    def history(body: str) -> list[str]:
        return [c for ln in body.splitlines() if HISTORY.match(ln) for c in clauses("", ln)]

    explained = [c for _, _, body in sources for c in history(body)]
    for i, (stamp, description, body) in enumerate(sources):
        newer = [(d, b) for j, (other, d, b) in enumerate(sources) if j != i and other > stamp]
        if any(supersedes(n, (description, body)) for n in newer):
            explained.extend(clauses(description, body))
        else:
            explained.extend(c for n in newer for c in replaced_by(n, (description, body)))
    return [c for c in history(result[1]) if not any(said_by(old, [clause_units(c)]) for old in explained)]
