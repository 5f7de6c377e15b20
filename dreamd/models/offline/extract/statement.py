"""Recall by default: a declarative clause that states a lasting state is a fact unless a filter says otherwise.

The named rules (:data:`~dreamd.models.offline.extract.facts.RULES`) recognise the common shapes of a
fact and word their records; a person says the same things in a thousand other ways. So a
clause the rules did not take is still kept when its *structure* is that of a lasting
statement:

- it has a subject that is the speaker, their group or household, or a thing (not "you", not a
  pointer at the moment such as "this/it/that");
- it is declarative: not a question, not a request or an instruction (those are rules only when
  standing, which :mod:`dreamd.models.offline.extract.rules` decides), not a wish ("I'd like …", "我想…");
- it states a state, not an episode: present tense (identity, possession, habit, setup,
  location, policy) or a plan with a date; a past one-off event is kept only when its verb
  changes a lasting state ("moved to", "started a new job", "switched to", "换了工作").

and none of the distractor tests of :mod:`dreamd.models.offline.extract.distractors` holds. An
undated statement about the work is kept when it names a value or a stage ("pinned to Helm
3.14", "half done", "卡在法务审核上"). The record keeps the clause's own words (lead-ins and
filler were peeled before), so the subject and the value a reader would look for are in it; its
type comes from :func:`dreamd.models.offline.extract.kinds.statement_type`.

:func:`answer_to` handles the other verbless case: a short reply to the assistant's question
("What do you do for work?" → "Staff nurse, nights mostly"), typed by the question.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re

from dreamd.models.offline.compare.clauses import (
    holder_words,
    named_as_replaced,
    names_a_value,
    supersessions,
)
from dreamd.models.offline.compare.paraphrase import gist, value_kind
from dreamd.models.offline.extract.distractors import TESTS_EN, TESTS_ZH, distractor, mostly_chinese
from dreamd.models.offline.extract.kinds import future_dates, is_pointer, statement_type, subject_of
from dreamd.models.offline.extract.rules import HOW, REMEMBER_HOW
from dreamd.models.offline.extract.structure import NOW_OR_THIS_ZH, clause_reason, opens_with_verb
from dreamd.models.offline.extract.types import Ctx, Found
from dreamd.models.offline.text import (
    has_cjk,
    sentence_case,
    split_reason,
    third_person,
    tidy,
    tokens,
)

# ----------------------------------------------------------------------------- the rule

_DIRECTIVE = re.compile(r"^(?:please|pls|let's|let us|don't|dont|do not|never|always|make sure|be sure|remember|no\s|stop|try|avoid)\b|"
    r"^(?:请|請|别|別|不要|千万|千萬|帮|幫|麻烦|麻煩|记得|記得|一定|务必|務必|注意|把|给我|給我)", re.I)
TYPE_HOW = {"user": HOW["identity"], "reference": HOW["reference"], "feedback": HOW["feedback-pos"]}
"""The how-to line of a record a statement-shaped rule made, by type (project: none of its own)."""
TYPE_PREFIX = {"user": "user", "reference": "ref", "project": "project", "feedback": "rule"}
"""The name prefix of such a record, by type."""


# A concrete value: a number or version, a name (a capitalised word after the first), an
# identifier or path ("feature_flags", "infra/terraform"), code in backticks.
_CONCRETE = re.compile(
    r"\d|(?<=\s)(?-i:[A-Z][\w.+#-]*)|(?<![A-Za-z])[A-Za-z]+[-_./][\w]|`|"
    # or where the work stands: "half done", "blocked on", "卡在", "上线了"
    r"\b(?:done|finished|complete|completed|blocked|waiting|stuck|live|paused|on hold|frozen|deprecated|"
    r"in progress|in review|shipped|launched|cancelled|canceled|postponed|delayed|read-only|owned|pinned)\b|"
    r"卡在|完成|做完|上线|上線|暂停|暫停|冻结|凍結|废弃|廢棄|搁置|擱置|推迟|推遲|取消|在等|负责|負責|只读|只讀|"
    # or how many or how long, in words ("two weeks long", "a team of five")
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|hundred|thousand|"
    r"dozen|half)\b|"
    # or when it happens: a schedule ("every Saturday morning", "nightly", "每周六早上")
    r"\bevery\s+(?:\w+day|day|night|week|morning|evening|hour|month|quarter|sprint)\b|\b(?:nightly|hourly|daily|weekly|monthly)\b|"
    r"每(?:周|週|星期|天|日|晚|月|季度|小时|小時)"
)


# "I have a peanut allergy", "We use Django 5": the speaker and a verb of possession or use carry the fact in two
# content words, and so does a pointer ("Camila is the PM"); any other two-word clause ("I love it", "we got
# there") is too thin to keep.
_SELF_HAS = re.compile(r"^(?:i|we)\s+(?:have|use|run|own|keep|speak|rent|drive|am|'m)\s+(?!(?:to|no|got|been|it|that|this)\b)", re.I)


# "先说好，我吃素": agreeing up front is a lead-in, never part of the fact's words.
_UP_FRONT = re.compile(r"^(?:有个事|有件事)?先(?:说好|說好|声明|聲明|讲好|講好)(?:了|一下)?[，,：:\s]*")


# A verb in -s after the subject's last word and before its object or place: "anything that restarts the
# workers goes through the runbook", "Ines on the platform team hands out access". The word before it must
# end a noun phrase (not "of", "that", "the" …: "lots of bugs in it", "that touches invoices" are no verb).
_VERB_S = re.compile(r"(?<![a-z])[a-z]{2,}(?:es|s)")
_NOT_A_VERB_S = frozenset({
    "is", "was", "has", "does", "this", "its", "his", "hers", "ours", "yours", "theirs", "as", "us", "yes", "plus", "less", "unless", "always",
    "perhaps", "news", "thanks", "series", "species", "address", "process", "class", "access", "business", "status", "bus", "canvas", "glass",
    "pass", "boss", "miss", "kiss", "gas", "lens", "bonus", "corpus", "campus", "virus", "bias", "alias", "atlas", "chaos", "analysis", "basis",
    "thesis", "crisis", "ones", "sometimes", "besides", "towards", "afterwards", "nowadays",
})
_NP_END_NOT = frozenset({
    "that", "which", "who", "whom", "whose", "of", "the", "a", "an", "in", "on", "at", "to", "for", "with", "from", "by", "some", "many", "more",
    "most", "few", "lots", "lot", "and", "or", "but", "nor", "no", "not", "very", "too", "all", "any", "each", "every", "my", "our", "your", "their",
    "his", "her", "its", "this", "these", "those", "there", "here", "so", "such", "than", "then", "also", "just", "only",
})
_AFTER_VERB = frozenset({
    "in", "on", "at", "to", "into", "onto", "through", "thru", "via", "under", "over", "with", "out", "up", "down", "off", "across", "behind",
})


def late_verb(clause: str) -> bool:
    """Whether a clause has a finite verb in -s after a subject longer than the distractor tests
    read ("anything that touches invoices needs a review", "flashing goes thru the wrapper in
    tools/flash.sh"): a statement, not a fragment."""
    words = re.findall(r"[\w'./&+#<>-]+", clause.lower())
    for i in range(1, min(len(words) - 1, 12)):
        w = words[i]
        if (_VERB_S.fullmatch(w) and w not in _NOT_A_VERB_S and words[i - 1] not in _NP_END_NOT
                and re.fullmatch(r"[a-z][\w'-]*", words[i - 1]) and words[i + 1] in _AFTER_VERB):
            return True
    return False


_NAMED_THAT = re.compile(r"(?<=[」』”\"'])\s*(?:那个|那個|这个|這個|那|这|這)(?=[\u4e00-\u9fff])")


def statement_distractor(clause: str) -> str | None:
    """:func:`distractor` of a clause read as a statement: a subject longer than the distractor
    tests read is no fragment (:func:`late_verb`); every other test still holds."""
    read = clause
    read = _NAMED_THAT.sub("", read)  # "网盘「日本签证」那个文件夹": "that" is the folder just named
    kind = distractor(read)
    if kind == "fragment" and not mostly_chinese(read) and late_verb(read):
        return next((name for name, test in TESTS_EN.items() if name != "fragment" and test(read)), None)
    return kind


def _action_for_now(clause: str) -> bool:
    """"这一轮实验先把 seed 固定成 42": after a word that binds it to now or this thing, the clause goes on
    as an instruction (an imperative opening), so it sets something for the moment, not the state of the work.
    A clause that names the speaker or their group says what they do ("我们现在用 Postgres 16", "慢查询我
    都先去 … 看")."""
    return subject_of(clause) not in ("self", "group") and third_person(clause) == clause and any(TESTS_ZH["request"](clause[m.end() :].lstrip()) for m in NOW_OR_THIS_ZH.finditer(clause))


def rule_statement(s: str, ctx: Ctx) -> Found | None:
    """A lasting statement no named rule took, typed by its structure (module docstring)."""
    if ctx.role != "user":
        return None
    clause = _UP_FRONT.sub("", tidy(s))
    zh = mostly_chinese(clause)
    size = sum(map(has_cjk, clause)) + len(re.findall(r"[A-Za-z0-9]+", clause)) if zh else len(tokens(clause))
    if (size < (5 if zh else 2 if _SELF_HAS.match(clause) or is_pointer(clause) else 3) or _DIRECTIVE.match(clause)
            or (not zh and opens_with_verb(clause)) or statement_distractor(clause) or (zh and _action_for_now(clause))
            or (kind := statement_type(clause, ctx.day)) is None):
        return None
    if kind == "project" and not future_dates(clause, ctx.day) and not _CONCRETE.search(clause[1:]):
        return None  # "the build system is a bit much": the state of the work is kept when it names a value
    return _stated("statement", kind, clause, ctx.day)


def _stated(rule: str, kind: str, clause: str, day: dt.date) -> Found:
    """A statement rule's record: the clause's fact, its reason, the third person, the how-to of its type."""
    fact, reason = split_reason(clause)
    if reason is None and kind == "project":
        fact, reason = clause_reason(fact)
    shown = third_person(fact) if mostly_chinese(clause) else sentence_case(third_person(fact))
    return retyped(Found(rule, kind, "", fact, shown, shown, reason=reason), kind, day)


def restated_value(clause: str, ctx: Ctx, earlier: list[str], turn: list[str], marked: bool,
                   loose: bool = False) -> tuple[Found, int | None, bool] | None:
    """A change of something said before (issue 23): an ``earlier`` statement (the user's, or a directory
    record) holds the subject of a change marker of ``clause`` that names a value; or it shares a word with
    ``clause`` besides their values, holds a value of a kind ``clause`` newly names, and the turn says it is
    a change (``marked``: a correction lead; a change marker in any sentence) or negates that value (``loose``, once
    every gate let it through and no rule took it: or they share two words). With it, the index of the statement holding
    the value replaced (named as replaced, or of a kind newly named) whose words outside the values of its kind meet the
    change's, the most then the latest (never a value of the kind about another subject), and whether it was named."""
    if (kind := statement_distractor(clause)) in ("code", "evaluation") or (loose and kind in ("fragment", "feeling")):
        return None  # pasted output, a judgement: no change is told that way; unmarked, a fragment or a feeling states none
    new, words = gist(clause), tokens(clause)
    stated = supersessions(clause)
    changes = [st for st in stated if st.kind != "stopped"]  # a stop states no new value
    subject = set().union(*(st.subject for st in changes)) if (new.values or any(map(names_a_value, changes))) and kind in (
        None, "deictic", "vague subject", "interjection", "fragment") else set()  # the tests how a change is said trips
    matched, best = False, (0, -1)
    for at, (said, old) in enumerate(zip(earlier, map(gist, earlier), strict=True)):
        kinds = {value_kind(v) for v in new.values - old.values - new.negated_values} & {value_kind(v) for v in old.values}
        shared = (words & tokens(said)) - tokens(" ".join(old.values ^ new.values))
        matched = matched or bool(subject & tokens(said) or (kinds and shared and (marked or old.values & new.negated_values or any(
            map(supersessions, turn)) or (loose and len(shared) > 1))))
        best = max(best, (holder_words(new, words, said, old, stated), at))
    held = best[1] if best[0] else None
    named = bool(named_as_replaced(new, stated)) and held is not None
    if not matched:
        return None
    typed = statement_type(clause, ctx.day) or "project"
    return _stated("change", typed, clause, ctx.day), held, named


def retyped(found: Found, kind: str, day: dt.date) -> Found:
    """``found`` as a record of type ``kind``, with its name prefix and how-to line."""
    how = HOW["deadline"] if kind == "project" and future_dates(found.fact, day) else TYPE_HOW.get(kind, REMEMBER_HOW)
    return dataclasses.replace(found, type=kind, name_prefix=TYPE_PREFIX[kind], how=how)


# ----------------------------------------------------------------------------- answers

_QUESTION_END = re.compile(r"[?？]\s*$")
_NOT_AN_ANSWER = re.compile(r"^(?:yes|yeah|yep|no|nope|nah|ok|okay|sure|thanks|thank you|not sure|no idea|dunno|idk|maybe|both|either|"
    r"neither|none|all of them|that one|the first|the second|好的?|是的?|对的?|不是|没有|都行|随便|不知道|谢谢)\b", re.I)
_ABOUT_YOU = re.compile(r"\b(?:you|your|yours)\b|你|您", re.I)
# "Do you prefer …?", "Should I always …?", "How would you like me to …?", "你希望我…": a question about how
# the assistant should work, whose answer is a rule.
_HOW_I_WORK = re.compile(r"\b(?:do you prefer|would you prefer|which do you prefer|should i (?:always|usually|by default)|"
    r"how (?:do|would) you like (?:me to|it)|do you want me to (?:always|keep)|what (?:format|style|tone|language)\b)|"
    r"你(?:更)?(?:喜欢|喜歡|希望|想要)我|以后(?:要不要|需不需要)|用什么(?:格式|语言|語言|风格|風格)", re.I)
# "your repo", "your stack", "你们的项目": the question is about the work, not the person.
_YOUR_WORK = re.compile(r"\byour\s+(?:[\w-]+\s+)?(?:repo|repository|stack|app|project|service|codebase|api|database|db|site|product|"
    r"code|pipeline|cluster|server|deploy\w*|ci|tests?|schema|team's|company's)\b|你们|你們|项目|項目|代码|代碼|仓库|倉庫", re.I)


# A question about where something is kept ("Where do the design specs live?", "Where are the invoices
# stored?", "文档放在哪"): its answer is a pointer, however short. "Where should we eat?" is not one.
_WHERE_IT_LIVES = re.compile(r"\bwhere\b(?![^?]*\b(?:should|shall|would|could|want|wanna|like|tonight|today|now|going|headed|heading)\b)"
    r"[^?]*\b(?:live|lives|kept|keep|stored|store|tracked|track|documented|hosted|host|go|goes|land|find|look up|saved|save)\b|"
    r"(?:放|存|记|記|写|寫|在)(?:在)?(?:哪|哪里|哪裡|哪儿|哪兒)", re.I)


def last_question(assistant_text: str) -> str | None:
    """The question the assistant ended its turn with, if any."""
    lines = [x.strip() for x in assistant_text.splitlines() if x.strip()]
    if not lines or not _QUESTION_END.search(lines[-1]):
        return None
    # "WCAG 2.1 AA?" is one sentence
    tail = [t for t in re.split(r"(?<=[.!?])\s+|(?<=[。！？])\s*", lines[-1].rstrip()) if t]
    return tail[-1] if tail else None


def answer_to(question: str, answer: str, ctx: Ctx) -> Found | None:
    """A short reply to the assistant's question, kept as the fact it states: "Where do you keep
    the scans?" → "a Dropbox folder called Scans" (a pointer), "What's your role there?" → "staff
    nurse, nights mostly" (about the user), "When is the audit?" → "the 14th" (dated). The reply
    has no verb of its own, so its type comes from the question, which the body keeps ("Asked:
    …"). An undated answer about the work ("Which library?" → "httpx") is a choice for the task at
    hand and is not kept."""
    said = tidy(answer)
    zh = mostly_chinese(said)
    if ctx.role != "user" or _NOT_AN_ANSWER.match(said) or _QUESTION_END.search(answer):
        return None
    if (sum(map(has_cjk, said)) < 2) if zh else (len(tokens(said)) < 1 or len(said.split()) > 12):
        return None
    kind_of = distractor(said)
    if kind_of not in (None, "fragment"):
        return None
    if is_pointer(said) or (_WHERE_IT_LIVES.search(question) and not future_dates(said, ctx.day)):
        kind = "reference"  # "Where do the specs live?" → "Figma, the Checkout project": a pointer by the question
    elif _HOW_I_WORK.search(question):
        kind = "feedback"  # "Do you prefer tabs or spaces?" → "Tabs, always.": how the assistant should work
    elif future_dates(said, ctx.day):
        kind = "project"
    elif _ABOUT_YOU.search(question) and not _YOUR_WORK.search(question):
        kind = "user"
    else:
        return None  # an undated answer about the work is too often a choice for the task at hand
    shown = said if zh else sentence_case(third_person(said))
    found = Found("answer", kind, TYPE_PREFIX[kind], said, shown, shown, how=TYPE_HOW.get(kind, REMEMBER_HOW))
    found.extra_lines.append(("问：" if has_cjk(question) else "Asked: ") + tidy(question))
    return found


__all__ = ["TYPE_HOW", "TYPE_PREFIX", "answer_to", "distractor", "last_question", "restated_value", "retyped", "rule_statement", "statement_distractor"]
