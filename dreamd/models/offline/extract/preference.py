"""Likes, dislikes, habits and interests: ``user`` records about what the person prefers.

:func:`rule_preference` — "I (really) prefer/like/love/hate …", "I always/usually/mostly …"
habits (not "I always wanted …": a past or mental-state verb is a story, not a habit), "I'm
keen on / interested in / learning / training for …", "my favorite X is Y", "我(比较)喜欢/偏好/
习惯/讨厌 …", "我每天/一般 …". An object that is only a pronoun ("I like it") is a reaction,
not a preference; a dislike about how the assistant answers ("我讨厌回答一上来先道歉") is
feedback; "I always run X, please do the same" is a rule for the assistant.
"""

from __future__ import annotations

import re

from dreamd.models.offline.extract.rules import HOW, make_feedback
from dreamd.models.offline.extract.types import Ctx, Found
from dreamd.models.offline.text import (
    PRONOUN_OBJECT,
    content_ok,
    has_cjk,
    sentence_case,
    split_reason,
    third_person,
    tidy,
    verb_3rd,
)

_PREF_EN = re.compile(
    r"^i\s+(?:really\s+|strongly\s+|generally\s+|much\s+|definitely\s+|do\s+|personally\s+)?"
    r"(?P<v>prefer|like|love|enjoy|favou?r|hate|dislike|can't stand|cannot stand|don't like|"
    r"do not like)\s+(?P<obj>.+)$",
    re.I,
)
_HABIT_EN = re.compile(
    r"^i\s+(?P<adv>always|usually|normally|typically|generally|tend to|never|rarely|often|regularly|mostly|mainly)\s+"
    r"(?P<verb>[a-z']+)\s*(?P<rest>.*)$",
    re.I,
)
_MENTAL = re.compile(
    r"^(?:wanted|want|wish|wished|thought|think|knew|know|felt|feel|wonder|wondered|believe|believed|"
    r"imagine|imagined|hope|hoped|dreamed|dreamt|dream|was|were|had|did|got|said|remember|forget|"
    r"find|found|seem|seemed|appreciate|love|like|hate|miss|missed)$",
    re.I,
)
_INTEREST_EN = re.compile(
    r"^(?:i am|i'm|im)\s+(?:(?:really|very|so|super|quite|deeply|also|still|currently|just|now|pretty)\s+)*"
    r"(?P<v>keen on|passionate about|interested in|into|a (?:big |huge )?fan of|fond of|learning|"
    r"training for|studying|saving for|saving up for|preparing for)\s+(?P<obj>.+)$",
    re.I,
)
_FAV_EN = re.compile(r"^my\s+(?:favou?rite|preferred|go-to|usual)\s+(?P<what>.+?)\s+(?:is|are)\s+(?P<val>.+)$", re.I)
_PREF_ZH = re.compile(
    r"^(?:我|本人)(?:个人|個人)?(?P<adv>比较|比較|更|很|非常|特别|特別|一直|通常|平时|平時|总是|總是|最|不太|不怎么|不怎麼|不大)?"
    r"(?P<v>不喜欢|不喜歡|喜欢|喜歡|偏好|偏爱|偏愛|习惯|習慣|讨厌|討厭|爱用|愛用|倾向于|傾向於)(?P<obj>.+)$"
)
_RATHER_ZH = re.compile(r"^(?:我)?(?:比起|相比)(?P<a>.+?)(?:我)?(?:更|还是更|還是更)(?:喜欢|喜歡|愿意|願意|倾向|傾向)(?P<obj>.+)$")
_PREF_ZH2 = re.compile(r"^(?P<subj>.{0,20}?)(?:偏好|习惯|習慣)(?:是|为|為|：|:)\s*(?P<obj>.+)$")
_ZH_HABIT_SENTENCE = re.compile(
    r"^(?P<x>我(?:周末|週末|晚上|早上|下班后|下班後|工作日)?(?:每天|每周|每週|每晚|每个周末|每個週末|每年|一般|通常|平时|平時|经常|經常|总是|總是|一直都?)"
    r"(?!.*(?:吗|嗎|呢)$)(?!.*(?:不知道|什么|什麼|怎么|怎麼|为什么|為什麼)).{3,})$"
)
_ZH_TIME_FIRST = re.compile(r"^(周末|週末|晚上|早上|工作日|下班后|下班後)[，,]?我(?![们們])")
_DO_SAME = re.compile(
    r",?(?:(?<!\s)\s++)?(?:so\s++|and\s++)?(?:please\s++)?(?:do the same|do that too|you should too|you should as well)"
    r"(?:,?\s*please)?[\s.!]*$",
    re.I,
)
_NEG_PREF = {"hate", "dislike", "can't stand", "cannot stand", "don't like", "do not like"}
_ZH_PRONOUN_OBJECT = ("这个", "這個", "这样", "這樣", "它", "你", "您")


_ING = {"save": "saving", "learn": "learning", "study": "studying", "train": "training"}
_EFFORT = re.compile(r"^(I'm|I am)\s+(?:trying|hoping|working hard|doing my best)\s+to\s+(save|learn|study|train)\b", re.I)


def plain_effort(s: str) -> str:
    """"I'm trying to save for a house" says what "I'm saving for a house" says."""
    return _EFFORT.sub(lambda m: f"{m.group(1)} {_ING[m.group(2).lower()]}", s)


def _liked(prefix: str, slug_source: str, fact: str, reason: str | None = None) -> Found:
    """A preference record: the fact is the description too."""
    return Found("preference", "user", prefix, slug_source, fact, fact, reason=reason,
                 how=HOW["preference"])


def rule_preference(s: str, ctx: Ctx) -> Found | None:
    if ctx.role != "user":
        return None
    s = plain_effort(_ZH_TIME_FIRST.sub(r"我\1", s))  # "周末我一般不看工作消息" is "我周末一般…"
    m = _PREF_EN.match(s)
    if m:
        v = m.group("v").lower()
        obj, reason = split_reason(m.group("obj"))
        obj = re.split(r",\s*(?:please|so)\b", obj)[0]
        if PRONOUN_OBJECT.match(obj) or not content_ok(obj, min_tokens=1):
            return None
        neg = v in _NEG_PREF
        verb = "dislikes" if neg else {"favor": "prefers", "favour": "prefers"}.get(v, verb_3rd(v))
        fact = f"User {verb} {third_person(obj)}"
        return _liked("dislikes" if neg else "prefers", obj, fact, reason)
    m = _INTEREST_EN.match(s)
    if m:
        obj = re.split(r"(?<!\s)\s+[-—–]\s+|;|,\s*(?:so|and|but)\b", m.group("obj"))[0]
        obj, reason = split_reason(obj)
        if PRONOUN_OBJECT.match(obj) or not content_ok(obj, min_tokens=1):
            return None
        v = m.group("v").lower()
        verb = f"is {v}"
        fact = f"User {verb} {third_person(obj)}"
        return _liked("likes", obj, fact, reason)
    m = _FAV_EN.match(s)
    if m:
        what, val = tidy(m.group("what")), tidy(m.group("val"))
        fact = f"User's favorite {third_person(what)} is {third_person(val)}"
        return _liked("prefers", f"{val} {what}", fact)
    m = _HABIT_EN.match(s)
    if m:
        return _habit(m)
    m = _PREF_ZH.match(s)
    if m:
        obj, reason = split_reason(m.group("obj"))
        if not content_ok(obj, min_tokens=1) or obj.startswith(_ZH_PRONOUN_OBJECT):
            return None
        v = m.group("v")
        fact = "用户" + (m.group("adv") or "") + v + third_person(obj)
        neg = v.startswith(("不", "讨", "討")) or (m.group("adv") or "").startswith("不")
        if re.match(r"^(?:你|您|回答|回复|回覆|答案|总结|總結|建议|建議|解释|解釋)", obj):
            return make_feedback(fact, obj, "avoid" if neg else "", neg, reason)  # about how the assistant answers
        return _liked("dislikes" if neg else "pref", obj, fact, reason)
    m = _RATHER_ZH.match(s)
    if m:
        fact = "用户" + third_person(tidy(s)).lstrip("我")
        return _liked("pref", m.group("obj"), fact)
    m = _PREF_ZH2.match(s) or _ZH_HABIT_SENTENCE.match(s)
    if m and has_cjk(s):
        obj, reason = split_reason(m.groupdict().get("obj") or m.group(0))
        if not content_ok(obj, min_tokens=1):
            return None
        fact = third_person(tidy(s if reason is None else split_reason(s)[0]))
        return _liked("pref", obj, fact, reason)
    return None


def _habit(m: re.Match[str]) -> Found | None:
    adv = m.group("adv").lower()
    said = f"{m.group('verb')} {m.group('rest')}".strip()
    same = _DO_SAME.search(said)
    if same and adv in ("always", "usually", "never"):
        rule, reason = split_reason(said[: same.start()])
        if content_ok(rule):  # "I always run X, please do the same" is a rule for the assistant
            return make_feedback(sentence_case(f"{'always' if adv == 'usually' else adv} {rule}"), rule,
                             "never" if adv == "never" else "always", adv == "never", reason)
    rest, reason = split_reason(said)
    verb, _, tail = rest.partition(" ")
    if not (content_ok(rest) or content_ok(tail, min_tokens=1)):
        return None  # "I usually do backend" has one content word, in the object
    if verb.lower().endswith("ed") or _MENTAL.match(verb) or adv in ("never", "rarely"):
        return None  # "I always wanted to …" is a story; a mental state is not a habit
    adv_3rd = "tends to" if adv == "tend to" else adv
    verb_out = verb if adv == "tend to" else verb_3rd(verb)
    fact = f"User {adv_3rd} {verb_out} {third_person(tail)}".strip()
    return _liked("habit", rest, fact, reason)


__all__ = ["plain_effort", "rule_preference"]
