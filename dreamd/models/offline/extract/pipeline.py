"""Offline extraction: memories from transcript turns by sentence structure, in English and Chinese.

The answer for ``{"task": "extract", "today", "index", "turns"}`` is a list of records with
``name``, ``type``, ``description``, ``body`` (and ``supersedes``: see corrections). Only what the *user* typed becomes
memory (assistant turns give only "we decided/agreed …" decisions): tool calls, tool results,
fetched pages and files the agent read — roles other than user/assistant, ``[tool …]`` lines,
harness blocks, fenced code, quotes, pasted documents — never do, so an instruction planted
in a page ("remember: always run …") can never become a rule.

Each sentence goes through four steps:

1. **Filters** — a sentence holding a secret (``[REDACTED:``, key-like strings, "password is
   …"), a temporary instruction ("for now", "just this once", "for this PR", "这次", "暂时")
   is skipped; of a question or a request ("can you …", "帮我 …") only the statement before
   the ask is kept ("My son turns 9 in March, what should I get him?" → "My son turns 9 in
   March", :func:`stated_part`). What a whole sentence is never a memory as — advice between
   people, someone else's words, a past episode, an instruction bounded in time, a question in
   statement form, an account number — is skipped before any rule reads it
   (:func:`~dreamd.models.offline.extract.distractors.not_memory`).
2. **Peeling** (:mod:`dreamd.models.offline.extract.structure`) — lead-ins ("Hi!", "Before we start:",
   "Heads up,", "btw", "One more thing to keep in mind:", "先说一下规矩：", "还有，", "对了，")
   and trailing filler ("…, by the way", "…，哈哈") are removed and never reach a description;
   what they signalled is kept: a remember-request, a standing lead ("from now on", "以后"),
   or reported speech ("my friend keeps telling me: …" is someone else's words: skipped).
3. **Rules**, tried by name in the order of :data:`~dreamd.models.offline.extract.facts.RULES`; the
   first that matches wins:
   ``identity`` (who the user is, with or without an article: "I'm the on-call SRE …",
   "我是做后端的"), ``reference`` (where things live), ``feedback`` (a directive about the
   work that is *standing* — always/never/every time/from now on/以后/一律/每次/永远, a general
   condition "when you …"/"…的时候", a limit, a convention, or a stated reason; encouragement
   and wellbeing advice never are, nor a description that happens to say "always"),
   ``preference`` (likes, habits, interests), ``decision`` (with its reason, "we're rewriting
   X because …" included), ``dated`` (deadlines, events and goals dated after the turn),
   ``context`` (what the work is and how it is set up).
4. **Recall by default** (:mod:`dreamd.models.offline.extract.statement`) — a clause no named rule took
   is still a fact when its structure is that of a lasting statement (a subject and a finite
   verb, present state or a dated plan) and no structural distractor test holds (addressed to
   the assistant, reported speech, a feeling or interjection, a hedge or wish, a condition,
   something broken right now, a fragment, "this/that" thing on screen, an undated intention,
   a past one-off event). Its type is decided by :mod:`dreamd.models.offline.extract.kinds` from
   the clause's structure, following the labelling guide: a pointer (URL, path, host, "lives
   in …", "ask …") is ``reference``; a dated plan or event ``project`` (a birthday ``user``); the
   speaker ``user``; a group or a thing of the work ``project``.

   A sentence whose clauses state several facts gives one record per clause ("I'm a data
   engineer and the models live in models/marts", "I'm pescatarian, my husband is vegan"; where a
   clause starts: :mod:`~dreamd.models.offline.extract.clauses`), every record keeping the user's words
   (a topic label, "Mobile app: …", included); a directive after the user's own circumstance takes it as its reason
   ("I have asthma, so please avoid …"). A remember-request no rule takes becomes a note
   (priority under the cap). An offer the assistant made ("Should I … before every commit?")
   that the user accepts as standing ("Yes, from now on") becomes feedback. A rules header
   ("ok so some ground rules.", "说几个规矩：") makes the sentences after it standing.

Bodies: the first line states the rule or fact (first person rewritten as "User …" /
"用户…"); when that line rewords what the user said, their own words follow at the end of
the body ("In their words: …" / "原话：…", with the sentence before when it opens with a
pronoun), so the subject and the value they used are always in the record. Feedback and
project bodies follow the first line with ``**Why:**`` (the stated reason: after
because/since/因为, a clause of its own after a semicolon or comma — "…; it's a compliance
requirement", "…，这是公司规定", "…，方便我备课" — or the next sentence; only when none was
given, a note saying so) and ``**How to apply:**``. Dates are resolved against the turn's
timestamp (else the payload's ``today``): "next Friday", "in two weeks", "December 18",
"end of the month", "下个月 15 号", "月底", "下周三", "两周后" become ISO dates; a weekday in a
standing rule ("never deploy on Friday") names every such day and is left alone.

A clause no named rule took that goes on about the record made from the clause before it in the
same sentence ("I'm a nurse on night shifts, so I sleep during the day") is folded into that record
(:func:`~dreamd.models.offline.extract.distractors.continues`), not made a second one.

A correction ("sorry, I meant Postgres 15", "不对，应该是 8.0", "Apologies, that is wrong: it is
19c", :func:`~dreamd.models.offline.extract.distractors.restated`) puts right the record holding
the old value (unnamed: the sentence just before, a value of its kind; only an index record: a copy
that ``supersedes`` it; none: nothing), also inside one sentence ("… MySQL 5.7，哦不对，是 8.0"); a hypothetical ("if we ever move to
AWS, we'd …", "要是…就…") is not a fact; advice about living ("always carry an umbrella") is not a
rule for the assistant, nor advice someone gave ("she says I should always …", even without
quotes). What makes a rule is when it holds, not how wide it is: "rename X to Y everywhere" is one
task, "…, so keep that weekend clear" after a dated plan is for that date, and a past-tense clause
under a standing lead is the rule's reason. Chinese clauses that share one 我 make one
self-description.

Layout, a module per concept: lead-ins, standing/temporary markers, imperatives and reasons in
:mod:`~dreamd.models.offline.extract.structure`; who a directive is for in
:mod:`~dreamd.models.offline.extract.audience`; accepted offers, rules asked as questions and
corrections in :mod:`~dreamd.models.offline.extract.dialogue`; clause splitting in
:mod:`~dreamd.models.offline.extract.clauses`; the rules in :mod:`~dreamd.models.offline.extract.rules`
(feedback), :mod:`~dreamd.models.offline.extract.identity`, :mod:`~dreamd.models.offline.extract.preference`,
:mod:`~dreamd.models.offline.extract.pointers` and :mod:`~dreamd.models.offline.extract.facts` (decisions,
context, dates, the registry); lasting statements no rule names and
short answers to the assistant's questions in :mod:`~dreamd.models.offline.extract.statement`; facts
said without a full sentence — labelled lines and lists ("house style: A, B, no C", "背景：…"),
verbless intros ("<role> here", "做…的") and bare constraints ("<x> only, <reason>") — in
:mod:`~dreamd.models.offline.extract.telegraphic` (a list or a rules label before the rules, the rest
when they found nothing); what is not a fact in :mod:`~dreamd.models.offline.extract.distractors`,
types by structure in :mod:`~dreamd.models.offline.extract.kinds`; text and date helpers in
:mod:`~dreamd.models.offline.text`. This module cleans turns, filters sentences and assembles
records.

Anything the index already has (same name, or a description of the same type whose tokens
mostly overlap) is skipped, unless it corrects it. Names are slugs from content words
(``never-commit-directly-main``, ``decision-use-postgres``, ``ref-api-docs``); text without
ASCII words gets ``<kind>-<hash>``. Names are unique in the answer and never reuse an index
name. At most :data:`MAX_RECORDS` records, remember-requests first, then in transcript order.
Chinese records get Chinese generic Why/How wording; the markers stay as they are.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from dreamd.models.offline import markers as lex
from dreamd.models.offline.compare.clauses import replaced_by, restated_with_new_value
from dreamd.models.offline.compare.paraphrase import gist, value_kind
from dreamd.models.offline.contradiction import statements_contradict
from dreamd.models.offline.extract.clauses import (
    found_in,
    lasting_part,
    standing_directive,
    with_subject,
)
from dreamd.models.offline.extract.dialogue import (
    accepts,
    correction_of,
    proposal_of,
    standing_request,
)
from dreamd.models.offline.extract.distractors import (
    continues,
    gives_reason,
    not_memory,
    other_side,
    restated,
    told_past,
)
from dreamd.models.offline.extract.facts import URL
from dreamd.models.offline.extract.rules import HOW, HOW_KEY, HOW_ZH, WHY_NONE, WHY_NONE_ZH
from dreamd.models.offline.extract.statement import (
    answer_to,
    last_question,
    restated_value,
    retyped,
)
from dreamd.models.offline.extract.structure import (
    Peeled,
    announces_rules,
    is_hypothetical,
    is_temporary,
    peel,
)
from dreamd.models.offline.extract.telegraphic import Labels
from dreamd.models.offline.extract.trace import Trace
from dreamd.models.offline.extract.types import Ctx, Found
from dreamd.models.offline.text import (
    REASON_NEXT,
    absolutize_dates,
    as_line,
    containment,
    has_cjk,
    jaccard,
    make_name,
    one_line,
    parse_date,
    raw_words,
    split_reason,
    tidy,
    token_set,
    tokens,
)

MAX_RECORDS = 20
MAX_TURN_CHARS = 4000

# ----------------------------------------------------------------------------- turn cleaning

_INJECTED_STARTS = (
    "<system-reminder>",
    "<command-",
    "<local-command",
    "<task-notification>",
    "<user-prompt-submit-hook>",
    "caveat: the messages below",
    "base directory for this skill",
    "this session is being continued",
    "your task is to create a detailed summary",
    "[request interrupted",
    "[tool",
    "[command]",
    "[compact summary]",
    "[task notification]",
    "[command output]",
    "[command error]",
    "[bash",
)
_STRIP_BLOCKS = re.compile(
    r"<(ide_opened_file|ide_selection|system-reminder|command-[a-z]+|local-command-[a-z]+)>.*?</\1>",
    re.S,
)
_FENCE = re.compile(r"```.*?(```|\Z)|~~~.*?(~~~|\Z)", re.S)
_TRACEBACK = re.compile(
    r"^(?<!\n\n)\s*Traceback \(most recent call last\):.*?(?:^[\w.]*(?:Error|Exception|Interrupt|Exit)\b[^\n]*$|\Z)",
    re.M | re.S,
)
_LOG_LINE = re.compile(
    r"^(?:[\w.]*(?:Error|Exception|Warning)\b:|File \"[^\"]+\", line \d+|at [\w.$]+\(|panic:|goroutine \d+|"
    r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}|(?:ERROR|WARN|WARNING|INFO|DEBUG|FATAL|TRACE)\b)"
)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s", re.M)
_LIST_MARK = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")


def clean_turn(text: str) -> str | None:
    """The part of a turn a person typed, or None when the whole turn was injected."""
    stripped = text.strip()
    if not stripped or stripped.lower().startswith(_INJECTED_STARTS):
        return None
    if len(stripped) > MAX_TURN_CHARS or len(_HEADING.findall(stripped)) >= 2:
        return None  # a pasted document, skill or spec: its imperatives are not the user's
    text = _STRIP_BLOCKS.sub(" ", stripped)
    text = _FENCE.sub("\n", text)
    text = _TRACEBACK.sub("\n", text)
    lines = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith((">", "|", "#", "[tool", "[Tool", "[Request interrupted")):
            continue
        if (s.startswith("<") and s.endswith(">")) or _LOG_LINE.match(s):
            continue
        lines.append(_LIST_MARK.sub("", s))
    return "\n".join(lines) or None


_SENTENCE_SPLIT = re.compile(
    r"(?<=[.!?])(?<!^\d\.)(?<![:;：；]\s\d\.)(?<![:;：；]\d\.)(?<![.!?]\s\d\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bSt\.)(?<!\bvs\.)(?<!\bMrs\.)(?<!\be\.g\.)"
    r"(?<!\bi\.e\.)(?<!\betc\.)(?<!\bInc\.)(?<!\bLtd\.)\s+(?=[^\s])|(?<=[。！？；])"
)


_MID_CORRECTION = re.compile(
    r"[,，]\s*(?=(?:哦|噢|啊)?(?:不对|不對|说错了|說錯了|口误|口誤|我记错了|我記錯了)[，,：:]?)|"
    r",\s*(?=(?:wait|sorry|oops|actually|no wait)[,!]?\s+(?:no\b|i meant\b|i mean\b|it's\b|it got\b|make that\b))",
    re.I,
)


_CJK_SPACE = re.compile(r"(?<=[\u4e00-\u9fff]{3})[ \u3000]+(?=[\u4e00-\u9fff]{3})")


def sentences(text: str) -> list[str]:
    """The sentences of a turn, line by line (a clause-level split happens in
    :mod:`dreamd.models.offline.extract.clauses`, once lead-ins are peeled). A correction inside a
    sentence ("… MySQL 5.7，哦不对，是 8.0") starts a sentence of its own, so it can put the
    value before it right."""
    out: list[str] = []
    for line in text.splitlines():
        if len(_CJK_SPACE.findall(line)) >= 2:
            line = _CJK_SPACE.sub("，", line)  # "兄弟我跑长途的 开半挂 河南人": spaces between Chinese clauses are commas
        for part in _SENTENCE_SPLIT.split(line):
            out.extend(p.strip(" ,，") for p in _MID_CORRECTION.split(part) if p.strip(" ,，"))
    return out


# ----------------------------------------------------------------------------- filters

_QUESTION_START = re.compile(
    r"^(?:can|could|would|will) (?:you|we|i)\b|^(?:what|why|how|where|who|which)\b|^when\b(?![^,，]*[,，])|"
    r"^(?:is|are) (?:there|it|this|that)\b|^(?:do|does|did) (?:you|it|we|i)\b|"
    r"^(?:should|shall) (?:i|we)\b",
    re.I,
)
_ZH_QUESTION = re.compile(r"[吗嗎呢吧][。.!！~～]*$|是不是|能不能|可不可以|要不要|为什么|為什麼|怎么|怎麼|如何|哪里|哪裡")
_REQUEST = re.compile(
    r"^(?:please\s+)?(?:help me|let me|can you|could you|帮我|幫我|请帮|請幫|麻烦|麻煩|帮忙|幫忙)", re.I
)
# "No wait, …", "Apologies, that is wrong: …", "scratch that, …", "不对，…", "打错了，是…": a value put right
_CORRECTION_LEAD = re.compile(
    r"^(?:(?:no wait|wait no|wait|sorry|apologies|oops|my bad|correction|scratch that|actually|no|nope)\b[,:;!.—–-]*\s*)+"
    r"(?:(?:that(?:'s| is| was) (?:wrong|not right|outdated|old)|i was wrong|i misspoke|i got that wrong)[,:;!.—–-]*\s*)*|"
    r"^(?:(?:哦|噢|啊|呃|哎|不好意思|抱歉)[，,]?\s*)*(?:不对|不對|更正|纠正|糾正|说错了|說錯了|我?记错了|我?記錯了|口误|口誤|打错了|打錯了|"
    r"搞错了|搞錯了)[了啊]?[，,：:！!。\s]*",
    re.I,
)
# a Chinese lead-in typed without its comma ("哦对了我 Python 还行", "另外 clippy 须开启 pedantic"): its 了 is no
# past tense of the sentence after it
_ZH_LEAD_BARE = re.compile(
    r"^(?:(?:哦|噢|啊|嗯|呃)?(?:对了|對了)|还有就是|還有就是|另外|顺便说一下|順便說一下|补充一下|補充一下)(?=\s*[\u4e00-\u9fffA-Za-z0-9])"
)
_HELP_ME = re.compile(r"^(?:please\s+)?help (?:me|us)\s+(?:to\s+)?|^(?:请|請)?(?:帮|幫)(?:我们|我們|我)(?:都)?", re.I)
_ALTERNATIVE_NEXT = re.compile(rf"^{lex.ALTERNATIVE_NEXT_EN}", re.I)
_SECRET = re.compile(
    r"\[REDACTED:|(?<![A-Za-z0-9])(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|"
    r"xox[abprs]-[A-Za-z0-9-]{8,})|"
    r"-----BEGIN|\b(?:password|passwd|passphrase|secret|token|api[ _-]?key)\s*(?:is|=|:)\s*\S+|"
    r"://[^/\s:@]+:[^/\s@]+@|\bBearer\s+[A-Za-z0-9._~+/-]{12,}|"
    r"\b(?:token|key|secret|password)\s*(?:是|为|為|：)\s*\S|"
    r"(?:密码|密碼|口令|密钥|密鑰)\s*(?:是|为|為|:|：|=)",
    re.I,
)


_ASK_JOINT = re.compile(r"(?:(?<!\s)\s++)?[,;:，；：]\s*|(?<!\s)\s++[—–-]\s\s*|(?<!\s)\s++(?:but|so|and)\s(?=(?:can|could|would|will|what|how|any|do|does|is|are|should)\b)", re.I)
_ADDRESSED = re.compile(r"\b(?:you|your|u)\b|你|您", re.I)


def stated_part(sentence: str) -> str | None:
    """The statement inside a question or a request, if any: the clauses before the ask that
    are neither asks nor addressed to the assistant ("My son turns 7 next week, what should I
    get him?" → "My son turns 7 next week")."""
    parts = [p.strip() for p in _ASK_JOINT.split(sentence) if p and p.strip()]
    if len(parts) < 2:
        return None
    kept = []
    for part in parts:
        if is_question(part) or _REQUEST.match(part) or _ADDRESSED.search(part) or part.endswith(("?", "？")):
            break
        kept.append(part)
    if not kept:
        return None
    joiner = "，" if has_cjk(sentence) else ", "
    return joiner.join(kept)


def is_question(s: str) -> bool:
    return s.rstrip().endswith(("?", "？")) or bool(_QUESTION_START.match(s)) or bool(
        _ZH_QUESTION.search(s)
    )


def has_secret(s: str) -> bool:
    return bool(_SECRET.search(s))


# ----------------------------------------------------------------------------- assembly

def _body(found: Found, day: dt.date) -> str:
    """Fact line, then Why/How; the generic wording follows the language of the fact."""
    zh = has_cjk(found.fact)
    lines = [as_line(found.fact)]
    lines.extend(found.extra_lines)
    if found.type in ("feedback", "project"):
        generic = (WHY_NONE_ZH if zh else WHY_NONE)[found.type].format(day=day)
        lines.append(f"**Why:** {as_line(found.reason) if found.reason else generic}")
    elif found.reason:
        lines.append(f"**Why:** {as_line(found.reason)}")
    if found.how:
        how = HOW_ZH.get(HOW_KEY.get(found.how, ""), found.how) if zh else found.how
        lines.append(f"**How to apply:** {how}")
    said = tidy(found.said or "")
    if said and not _covered(said, "\n".join(lines)):
        # The user's own words, so the subject and value they used survive any rewording above.
        lines.append(f"原话：“{said}”" if has_cjk(said) else f'In their words: "{said}"')
    return "\n".join(lines) + "\n"


_CONNECTIVE = re.compile(rf"^(?:{lex.REASON_ZH}|所以|而且|但是|不过|不過|并且|並且|然后|然後)|(?:的话|的話)$")
_CONNECTIVE_EN = token_set([*lex.REASON_EN.split("|"), "so", "cause", "but", "and", "also", "as", "then"])


def _covered(said: str, text: str) -> bool:
    """Whether every content word the user said is already in the record's text."""
    low = text.lower() + "\n" + " ".join(tokens(text))
    for token in tokens(said):
        token = _CONNECTIVE.sub("", token)
        if token and token not in _CONNECTIVE_EN and token not in low:
            return False
    return True


@dataclass(frozen=True)
class _Indexed:
    name: str
    type: str
    tokens: frozenset[str]
    description: str = ""


def _near_duplicate(a: set[str] | frozenset[str], b: set[str] | frozenset[str]) -> bool:
    if min(len(a), len(b)) < 2:
        return bool(a) and a == b
    return jaccard(set(a), set(b)) >= 0.6 or containment(set(a), set(b)) >= 0.85


def _corrects(new: str, old: str) -> bool:
    """A new statement that changes what an older one says (a contradiction, an explicit
    supersession, the same wording with a new value) is not a repeat of it."""
    return bool(old) and (statements_contradict(new, old) or bool(replaced_by((new, ""), (old, ""))) or restated_with_new_value(new, old))


def _record_from(found: Found, day: dt.date) -> dict[str, str]:
    # A weekday in a standing rule ("never deploy on Friday") is every such day, not a date;
    # in a clause told as past ("it crashed on Friday") it is the last one, not the next.
    weekdays = found.type == "project"

    def dated(text: str) -> str:
        return absolutize_dates(text, day, weekdays=weekdays, past=told_past)

    desc = one_line(dated(found.description))
    shaped = replace(found, fact=dated(found.fact), description=desc, reason=found.reason and dated(found.reason),
                     extra_lines=[dated(x) for x in found.extra_lines], said=found.said and dated(found.said))
    slug_src = re.sub(r"(?<![A-Za-z0-9])\d+(?![A-Za-z0-9])", " ", URL.sub(" ", dated(found.slug_source)))
    name = make_name(found.name_prefix, slug_src, fallback=found.type)
    return {"name": name, "type": found.type, "description": desc, "body": _body(shaped, day)}


def _with_shared_tail(old: str, new: str, text: str) -> str:
    """``old`` with the words after it in ``text`` that ``new`` ends with too, so "I meant Friday
    night, not Tuesday" turns "every Tuesday night" into "every Friday night", not "… night night"."""
    m = re.search(re.escape(old) + r"((?:\s+[\w-]+){1,3})", text)
    if not m:
        return old
    words = m.group(1).split()
    for n in range(len(words), 0, -1):
        tail = " ".join(words[:n])
        if new.lower().endswith(" " + tail.lower()):
            return f"{old} {tail}" if re.search(re.escape(f"{old} {tail}"), text) else old
    return old


def _same_kind(new: str, old: str) -> bool:
    """Whether two values read as the same kind (a name, a time, a number …), or either as none."""
    kinds = [{value_kind(v) for v in gist(f"it is {text}").values} for text in (new, old)]
    return not kinds[0] or not kinds[1] or bool(kinds[0] & kinds[1])


class _Answer:
    """The records picked so far, with the index they must not repeat and the names taken."""

    def __init__(self, index: list[_Indexed]) -> None:
        self.index = index
        self.taken = {e.name for e in index}
        self.picked: list[tuple[int, int, dict[str, str]]] = []
        self.seen: list[_Indexed] = []
        # (type, token) → the index's and kept records holding it: a near duplicate shares half the smaller token set at least
        self.holding: dict[tuple[str, str], list[_Indexed]] = {}
        for e in index:
            self._hold(e)
        self.consumed: set[int] = set()
        self.last: tuple[int, str, dict[str, str]] | None = None  # position, kind, record last admitted

    def full(self) -> bool:
        return len(self.picked) >= MAX_RECORDS

    def remembered_full(self) -> bool:
        return sum(1 for p in self.picked if p[0] == 0) >= MAX_RECORDS

    def admit(self, found: Found, position: int, day: dt.date, nxt: str | None) -> tuple[str, str | None]:
        """Shape ``found`` into a record and keep it unless it repeats the index or the answer.

        Returns the outcome for a trace: ``("kept", name)``, ``("folded", the record it went
        into)``, ``("known", name)`` or ``("secret", None)``."""
        if found.kind == "feedback" and found.how == HOW["feedback-neg"] and nxt and _ALTERNATIVE_NEXT.match(nxt) and not has_secret(nxt):
            # "Don't mock the database. Use the real Postgres, because …": one rule
            alternative, alt_reason = split_reason(nxt)
            found.extra_lines.append(as_line(alternative))
            found.reason = found.reason or alt_reason
            self.consumed.add(position + 1)
        if found.reason is None and found.type in ("feedback", "project") and nxt and (m := REASON_NEXT.match(nxt)) and not has_secret(nxt):
            found.reason = tidy(m.group("r"))
        record = _record_from(found, day)
        if any(has_secret(v) for v in record.values()):
            return "secret", None
        if self._continues(found, position, record):
            return "folded", self.last[2]["name"] if self.last else None
        toks, desc = frozenset(tokens(record["description"])), record["description"]
        # A correction looks like what it corrects ("Don't mock the DB" vs "Mock the DB"):
        # it is kept under a fresh name so the next dream resolves it toward the newer one.
        if record["name"] in self.taken and any(e.name == record["name"] and not _corrects(desc, e.description) for e in self.index):
            return "known", record["name"]
        shared = Counter(e for token in toks for e in self.holding.get((record["type"], token), ()))
        if any(2 * n >= min(len(toks), len(e.tokens)) and _near_duplicate(toks, e.tokens) and not _corrects(desc, e.description) for e, n in shared.items()):
            return "known", record["name"]
        record["name"] = self._fresh(record["name"])
        self.seen.append(_Indexed(record["name"], record["type"], toks, record["description"]))
        self._hold(self.seen[-1])
        self.picked.append((found.priority, position, record))
        self.last = (position, found.kind, record)
        return "kept", record["name"]

    def _fresh(self, base: str) -> str:
        """``base``, or ``base-2``, ``base-3`` … when it is taken (by the index or this answer); now
        taken. A name is at most 56 characters, so the suffix never cuts it."""
        name, n = base, 2
        while name in self.taken:
            name, n = f"{base}-{n}", n + 1
        self.taken.add(name)
        return name

    def _hold(self, e: _Indexed) -> None:
        for token in e.tokens:
            self.holding.setdefault((e.type, token), []).append(e)

    def _continues(self, found: Found, position: int, record: dict[str, str]) -> bool:
        """Fold a clause no named rule took into the record a named rule made from the clause before
        it in the same sentence ("I'm a nurse on night shifts, so I sleep during the day", "日志都在
        Kibana 上看，索引是 app-logs-*"): it goes on about that fact, so it is one memory, not two; so
        is a Chinese rule said both ways ("新代码一律用协程，别再引 RxJava")."""
        if self.last is None or self.last[0] != position:
            return False
        previous = self.last[2]
        said_both_ways = found.type == previous["type"] == "feedback" and other_side(
            previous["description"], record["description"]
        )
        its_reason = previous["type"] == "feedback" and found.type == "user" and gives_reason(found.slug_source)
        goes_on = (
            found.kind == "statement"
            and self.last[1] not in ("statement", "deadline")  # a dated plan is an event of its own
            and continues(found.slug_source, found.said or "")
        )
        if not (said_both_ways or its_reason or goes_on):
            return False
        if not _covered(record["description"], previous["description"] + "\n" + previous["body"]):
            previous["body"] += as_line(record["description"]) + "\n"
        return True

    def correct(self, new: str, old: str | None, day: dt.date, before: int) -> str | None:
        """Put right the record that holds the value the user corrects; returns its name, or
        None when no record holds it (then nothing is rewritten).

        With the old value named ("it's 15, not 14") the holder is the latest record stating it
        (else quoting it), wherever it was said; otherwise the correction continues the
        sentence the user said just before (``before``, its position) and puts right a value
        of the same shape a record made of it holds: a date for a date, a number for a number,
        a name for a name. Never "the previous record" by position alone.
        """
        new_abs = absolutize_dates(new, day)
        latest = list(reversed(self.picked))
        holder = None
        if old:
            holder = next((p for p in latest if old in p[2]["description"]), None) or next(
                (p for p in latest if old in p[2]["body"]), None)
            if holder is None and re.search(r"\d{4}-\d{2}-\d{2}", absolutize_dates(old, day)):
                old = None  # a date is kept resolved, not as said: put right by shape, below
        if not old:
            holder = next((p for p in latest if p[1] == before), None)
        if holder is None:
            return None
        position, record = holder[1:]
        text = record["description"] + "\n" + record["body"]
        target: str | None = None
        if old:
            target = _with_shared_tail(old, new_abs, text)
        else:
            shapes = (r"\d{4}-\d{2}-\d{2}", r"\d+(?:\.\d+)*", r"\b[A-Z][\w.+#-]*[A-Za-z0-9]\b")
            for shape in shapes:
                wanted = re.search(shape, new_abs)
                found = re.findall(shape, record["description"])
                if shape == shapes[2]:  # a name for a name: not a sentence's first word, nor a weekday for a tool
                    found = [f for f in re.findall(r"(?<=\s)" + shape, record["description"]) if _same_kind(new_abs, f)]
                if wanted and found:
                    target = found[-1]
                    new_abs = wanted.group(0) if shape != shapes[2] else new_abs
                    break
        if not target or target == new_abs:
            return None
        record["description"] = one_line(record["description"].replace(target, new_abs))
        record["body"] = record["body"].replace(target, new_abs)
        for _, pos, other in self.picked:
            if pos == position and other is not record:
                other["body"] = other["body"].replace(target, new_abs)  # the same words, quoted
        return record["name"]

    def correct_known(self, new: str, old: str | None, day: dt.date, position: int) -> str | None:
        """A correction naming a value no record of this answer holds, but a record of the
        directory does (its index description): a record stating the corrected value that
        supersedes that one (the job keeps the old words on its history line). Returns its
        name, or None when no record of the index holds the value either."""
        named = {r.get("supersedes") for _, _, r in self.picked}
        held = [e for e in self.index if old and e.name not in named and re.search(rf"(?<!\w){re.escape(old)}(?!\w)", e.description)]
        if not held or not old:
            return None
        description = one_line(held[-1].description.replace(old, absolutize_dates(new, day)))
        name = self._fresh(make_name("", description, fallback=held[-1].type))
        record = {"name": name, "type": held[-1].type, "description": description, "body": as_line(description) + "\n",
                  "supersedes": held[-1].name}
        self.picked.append((1, position, record))
        return name

    def records(self) -> list[dict[str, str]]:
        best = [r for _, _, r in sorted(sorted(self.picked, key=lambda p: (p[0], p[1]))[:MAX_RECORDS], key=lambda p: p[1])]
        names = {r["name"] for r in best} | {e.name for e in self.index}  # a record named as superseded must be given
        return [{k: v for k, v in r.items() if k != "supersedes" or v in names} for r in best]


_ANAPHOR = re.compile(
    r"^(?:he|she|they|it|its|his|her|their|this|that|these|those|there)\b|^(?:他|她|它|这|這|那)(?![个個]?(?:周|週|月|年))",
    re.I,
)


# a pronoun further in ("We deploy it on Fly.io.", "Never run migrations there.") points back too
_ANAPHOR_INSIDE = re.compile(
    r"\b(?:it|its|them|there)\b(?!\s+(?:is|are|was|were|'s)\s+(?:a|an|no|some|any|not)\b)|"
    r"\b(?:he|she|they|him|her|his|their)\b", re.I
)
# a Chinese sentence whose subject is left out: "（我女儿叫小雨。）今年 6 岁，在上幼儿园。"
_ZH_NO_SUBJECT = re.compile(
    r"^(?:今年|去年|明年|平时|平常|周末|每天|每周|一般|经常|还|也|都|主要|最近|现在|目前|已经|刚|正在|"
    r"喜欢|不喜欢|特别|比较|很|挺|最爱|会|能|得了|有点|读|上|在读|在上)"
)


def _points_back(core: str) -> bool:
    if _ANAPHOR.match(core):
        return True
    if has_cjk(core[:2]):
        return _ZH_NO_SUBJECT.match(core) is not None
    return _ANAPHOR_INSIDE.search(core) is not None


def _with_antecedent(core: str, previous: str | None) -> str:
    """The sentence, with the one before it when it points back with a pronoun ("She's 7." after
    "My daughter is Mia.", "We host it on Render." after "The API is in Go.") or, in Chinese, leaves
    its subject out ("今年 6 岁。" after "我女儿叫小雨。"), so the record says who or what it is about."""
    if previous and _points_back(core) and len(previous) <= 200:
        joiner = "" if has_cjk(previous[-1:]) else " "
        return f"{previous.rstrip()}{'' if previous.rstrip()[-1:] in '.!?。！？' else ('。' if joiner == '' else '.')}{joiner}{core}"
    return core


def extract(payload: Mapping[str, Any], trace: Trace | None = None) -> list[dict[str, str]]:
    """The offline answer to an extraction payload (see the module docstring for the rules).

    ``trace`` collects the decision on every sentence (see :mod:`~dreamd.models.offline.extract.trace`);
    the answer is the same with or without it."""
    trace = trace if trace is not None else Trace()
    today = parse_date(payload.get("today")) or dt.date(1970, 1, 1)
    index = [_Indexed(str(i.get("name", "")), str(i.get("type", "")), frozenset(tokens(d := str(i.get("description", "")))), d)
             for i in payload.get("index") or [] if isinstance(i, Mapping)]
    answer = _Answer(index)
    earlier = [i.description for i in index]  # the directory's records, then what the user says and what is kept of it
    kept_from = dict(enumerate(i.name for i in index))  # an ``earlier`` statement → the record it is, or was kept from it
    position = last_user = before = 0
    offered: str | None = None
    question: str | None = None
    rules_follow = False  # a rules header heads the user's sentences until the assistant speaks
    carry = False
    labels = Labels()  # "house style: …" / a bare "Rules:" line heading the lines after it
    for turn_no, turn in enumerate(payload.get("turns") or []):
        if not isinstance(turn, Mapping):
            continue
        role = turn.get("role")
        text = turn.get("text")
        if role not in ("user", "assistant") or not isinstance(text, str):
            continue
        cleaned = clean_turn(text)
        if cleaned is None:
            trace.refuse(turn_no, str(role), one_line(text, 120), "injected")
            continue
        if role == "assistant":
            offered = proposal_of(cleaned)
            question = last_question(cleaned)
            carry = False
            labels.assistant_spoke(question)
        else:
            labels.user_turn()
        asked_q, question = (question, None) if role == "user" else (None, question)
        proposal, offered = (offered, None) if role == "user" else (None, offered)
        day = parse_date(turn.get("timestamp")) or today
        sents = sentences(cleaned)
        marked = role == "user" and any(_CORRECTION_LEAD.match(x) or correction_of(x) or restated(x) for x in sents)
        previous: str | None = None
        rules_follow = carry
        for k, s in enumerate(sents):
            position += 1
            if role == "user":
                before, last_user = last_user, position  # the user's sentence before this one

            def refuse(stage: str, detail: str | None = None, s: str = s, at: int = turn_no, who: str = str(role)) -> None:
                trace.refuse(at, who, s, stage, detail=detail)

            if position in answer.consumed:
                refuse("consumed")
                continue
            if has_secret(s):
                refuse("secret")
                continue
            if role == "user" and labels.header(s, k == len(sents) - 1) and not announces_rules(s):
                refuse("label-header")
                continue
            peeled = peel(_ZH_LEAD_BARE.sub(r"\g<0>，", s, count=1))  # "对了我是…" reads as "对了，我是…"
            core = peeled.core
            whole: str | None = None
            if is_temporary(core) or is_hypothetical(core):
                whole = core
                core = lasting_part(core) or ""  # "… for now, but we're upgrading to 3.13 in January"
                if not core:
                    refuse("temporary")
                    continue
                again = peel(core)  # "…，但是以后…": the lasting side has lead-ins of its own
                core = again.core
                peeled = Peeled(core, peeled.remember or again.remember, peeled.standing or again.standing,
                                peeled.reported or again.reported, peeled.topic)
            if announces_rules(s):
                rules_follow = True  # "ok so some ground rules." / "说几个规矩：" heads what follows
                if not re.search(r"[：:]\s*\S", s):
                    carry = carry or k == len(sents) - 1  # a header closing its turn heads the next user turns
                    refuse("rules-header")
                    continue
            asked = standing_request(core)
            if not asked and peeled.standing and not is_question(core):
                # "以后帮我订票优先高铁", "from now on help me keep the changelog current": the help asked
                # for good is the rule
                helped = _HELP_ME.sub("", core, count=1)
                asked = helped if helped != core and helped.strip() else None
            if asked:
                core = asked  # "Can you always reply in English from now on?" is a rule
            elif not peeled.reported and core and (is_question(core) or _REQUEST.match(core)):
                # "I'm pescatarian and my partner is vegan, any restaurant ideas?": the ask is for now,
                # the clauses before it state facts
                core = stated_part(core) or ""
                if not core:
                    refuse("question")
                    continue
            elif peeled.reported or not core:
                refuse("reported" if peeled.reported else "empty")
                continue
            fix = (correction_of(s) or restated(s)) if role == "user" else None
            restates = restated_value((_CORRECTION_LEAD.sub("", core, count=1) if fix else "") or core, Ctx(str(role), day, None),
                                      earlier, sents, marked) if role == "user" and whole is None and not is_question(s) else None  # not "if we ever …", nor asked
            if (peeled.reported or not_memory(s, core, " ".join(sents[:k]))) and restates is None:
                refuse("reported" if peeled.reported else "not-memory")
                continue  # someone else's words, advice between people, a past episode … (see not_memory)
            nxt = sents[k + 1] if k + 1 < len(sents) else None
            ctx = Ctx(role=str(role), day=day, next_sentence=nxt, standing=peeled.standing or rules_follow,
                      remember=peeled.remember)
            if answer.remembered_full():
                refuse("cap")
                break
            # Once the cap is reached by earlier records, only a remember-request can still
            # displace one, so the other rules (and their dedup work) are skipped.
            corrected = answer.correct(fix[0], fix[1], day, before) if fix else None
            corrected = corrected or (answer.correct_known(fix[0], fix[1], day, position) if fix else None)
            if corrected:
                refuse("correction", corrected)
                continue  # "sorry, I meant Postgres 15": the earlier record now says so
            if fix:
                # nothing kept says the value put right ("Our minSdk is 24." was not kept): what the user says
                # after "no wait," / "不对，" is a statement of its own, without the marker
                rest = _CORRECTION_LEAD.sub("", core, count=1).strip()
                if rest and rest != core.strip():
                    core = peel(rest).core
            accepted = proposal if k == 0 and accepts(s) else None
            told = whole or core  # the user's words, with the other side of a "for now …, but …"
            said = _with_antecedent(f"{peeled.topic}: {told}" if peeled.topic else told, previous)
            if role == "user":
                said = labels.said(said, core)  # "invoices. I send them on the 1st": the topic before
            core, previous = with_subject(core, previous), core
            stage = "labels"
            founds = labels.records(s, core, ctx) if role == "user" and not accepted else []
            if not founds:
                stage = "rules"
                founds = found_in(core, ctx, accepted=accepted, remember=peeled.remember, all_rules=not answer.full())
            if not founds and role == "user":
                stage = "telegraphic"
                founds = labels.records(s, core, ctx, single=True) or labels.telegraphic(core, ctx, asked_q if k == 0 else None)  # "做后端的"
            if not founds and asked_q and k == 0 and not accepted:
                stage = "answer"
                replied = answer_to(asked_q, core, ctx)  # "What stack is it on?" / "Django, on Render."
                founds = [replied] if replied is not None else []
            if not founds and role == "user" and not accepted:
                stage = "directive"
                ruled = standing_directive(core, ctx)  # "we never pipe curl into sh, on any machine"
                founds = [ruled] if ruled is not None else []
            # "oops, my mistake: the cache runs Redis 7": a few words leading in, with no fact of their own
            lead, _, after = core.partition(": ") if ": " in core else core.partition("：")
            if (not founds and role == "user" and after and len(tokens(lead)) <= 3 and re.fullmatch(r"[^\W\d_][\w ,']*", lead)
                    and not found_in(lead, ctx, accepted=None, remember=False, all_rules=True)):
                stage, founds = "rules", found_in(after, ctx, accepted=None, remember=peeled.remember, all_rules=not answer.full())
            if not founds and restates is None and role == "user" and whole is None and not is_question(s):
                restates = restated_value(core, Ctx(str(role), day, None), earlier, sents, marked, loose=True)  # every gate passed
            if not founds and restates is not None:
                stage, founds = "change", [restates[0]]
            replaced = kept_from.get(restates[1]) if restates is not None and restates[1] is not None else None
            if restates is not None and restates[2] and (held := next((e.type for e in (*answer.index, *answer.seen) if e.name == replaced), None)):
                founds = [retyped(f, held, day) if f.kind in ("statement", "change") else f for f in founds]  # typed by no rule
            if role == "user":
                earlier.append(core)
            if not founds:
                refuse("no-rule")
            for found in founds:
                found.said = found.said or (said if role == "user" else None)
                outcome, name = answer.admit(found, position, day, nxt)
                if outcome == "kept" and name is not None and answer.last is not None:
                    # the statement the change matched, by identity, names the record superseded (issue 23): one of its type
                    if replaced in {e.name for e in (*answer.index, *answer.seen) if e.type == found.type} - {r.get("supersedes") for _, _, r in answer.picked}:
                        answer.last[2]["supersedes"] = str(replaced)
                    kept_from.setdefault(len(earlier) - (role == "user"), name)  # the user's sentence, then the record
                    kept_from[len(earlier)] = name
                    earlier.append(found.description)
                    trace.keep(turn_no, str(role), s, stage, found.kind, name)
                else:
                    trace.refuse(turn_no, str(role), s, outcome, rule=found.kind, detail=name)
    return answer.records()


def extract_from_turns(
    turns: Sequence[Mapping[str, Any]], *, today: str, index: Sequence[Mapping[str, str]] = ()
) -> list[dict[str, str]]:
    """Convenience wrapper for tests and the demo: build the payload and extract."""
    return extract({"task": "extract", "today": today, "index": list(index), "turns": list(turns)})


__all__ = ["MAX_RECORDS", "clean_turn", "extract", "extract_from_turns", "raw_words", "sentences"]
