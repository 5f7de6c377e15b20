"""The extractor's pattern rules: one function per kind of memory, tried in order.

Each rule looks at one sentence (with its role and date in :class:`Ctx`) and returns a
:class:`Found` or None. What each rule matches, with examples, is listed in
:mod:`dreamd.models.offline_extract`; this module holds the patterns and the wording of the
generic Why/How lines.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from dreamd.models.offline_text import (
    PRONOUN_OBJECT,
    content_ok,
    has_cjk,
    has_relative_date,
    sentence_case,
    split_reason,
    third_person,
    tidy,
    tokens,
    verb_3rd,
)


@dataclass
class Found:
    """A sentence a rule recognised: the record's parts before names and dates are settled.

    ``fact`` becomes the body's first line, ``slug_source`` the words the name is made of
    (after ``name_prefix``); ``priority`` 0 marks explicit remember-requests.
    """

    kind: str
    type: str
    name_prefix: str
    slug_source: str
    fact: str
    description: str
    reason: str | None = None
    how: str | None = None
    priority: int = 1
    extra_lines: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Ctx:
    """Where a sentence was said: who said it, on which day, and what came next."""

    role: str
    day: dt.date
    next_sentence: str | None


Rule = Callable[[str, Ctx], Found | None]

WHY_NONE = {
    "feedback": "the user gave this as explicit feedback on {day}; no reason was stated.",
    "project": "stated in conversation on {day}; no reason was given.",
}
HOW = {
    "feedback-neg": "treat this as a standing rule: check for it before acting and do not do it "
    "unless the user explicitly asks.",
    "feedback-pos": "treat this as a standing rule for all future work here, not just the task "
    "at hand.",
    "decision": "build on this decision; do not reopen it without checking with the user.",
    "deadline": "plan and prioritise work against this date; flag anything that puts it at risk.",
    "goal": "weigh suggestions and trade-offs against this goal.",
    "preference": "follow this preference by default unless the user asks otherwise.",
    "identity": "pitch explanations and suggestions to this background.",
    "reference": "look here first for this instead of searching or asking again.",
}

_REMEMBER_HOW = "keep this in mind in future work on this project."
WHY_NONE_ZH = {
    "feedback": "用户在 {day} 明确提出，未说明原因。",
    "project": "{day} 在对话中提出，未说明原因。",
}
HOW_ZH = {
    "feedback-neg": "作为长期规则：行动前先检查，除非用户明确要求，否则不要这样做。",
    "feedback-pos": "作为长期规则，适用于此后的所有工作，而不只是当前任务。",
    "decision": "在这个决定的基础上工作；要推翻它先和用户确认。",
    "deadline": "按这个日期安排和排序工作；有延期风险及时提出。",
    "goal": "用这个目标来权衡建议和取舍。",
    "preference": "默认遵循这个偏好，除非用户另有要求。",
    "identity": "按这个背景来调整解释和建议。",
    "reference": "需要时先到这里找，不要重新搜索或再问一遍。",
    "remember": "在这个项目后续的工作中记住这一点。",
}
HOW_KEY = {**{v: k for k, v in HOW.items()}, _REMEMBER_HOW: "remember"}

_ROLE_WORDS = re.compile(
    r"\b(?:engineer|developer|dev|scientist|designer|manager|student|researcher|analyst|"
    r"architect|admin|administrator|devops|sre|lead|founder|cto|ceo|pm|teacher|writer|"
    r"consultant|programmer|beginner|maintainer|contractor|intern|freelancer|professor|"
    r"doctor|physician|lawyer|hobbyist|owner|specialist|tester|qa|marketer|editor|journalist|"
    r"statistician|mathematician|physicist|chemist|biologist|economist|accountant|novice|"
    r"newbie|expert|veteran)s?\b",
    re.I,
)
_ZH_ROLE = re.compile(
    r"工程师|工程師|开发|開發|程序员|程序員|科学家|科學家|设计师|設計師|经理|經理|学生|學生|研究员|研究員|"
    r"分析师|分析師|架构师|架構師|产品|產品|运维|運維|老师|老師|教授|医生|醫生|律师|律師|新手|初学者|初學者|"
    r"负责人|負責人|创始人|創始人|作者|维护者|維護者|博士|硕士|碩士|本科"
)


def _lead(pattern: str) -> str:
    return (
        r"^(?:(?:ok(?:ay)?|so|also|and|but|btw|by the way|fyi|actually|oh|well|hey|hi|"
        r"just so you know|for the record|note|one more thing|oh and|and also)[,.!:]?\s+)*" + pattern
    )


_IDENTITY_EN = [
    re.compile(_lead(r"(?:i am|i'm|im)\s+(?P<x>(?:a|an)\s+[^;]+?)\s*$"), re.I),
    re.compile(_lead(r"i\s+work\s+(?P<x>(?:as|at|on|for)\s+.+?)\s*$"), re.I),
    re.compile(_lead(r"my\s+(?P<x>(?:role|job|title|name|position)\s+is\s+.+?)\s*$"), re.I),
    re.compile(_lead(r"(?:call me|my name's)\s+(?P<x>\S+)"), re.I),
    re.compile(
        _lead(r"i(?:'ve| have)\s+been\s+(?P<x>(?:writing|using|working with|programming in|coding in|"
              r"doing)\s+.+?\s+for\s+.+?)\s*$"),
        re.I,
    ),
    re.compile(_lead(r"(?:i am|i'm|im)\s+(?P<x>new to\s+.+?)\s*$"), re.I),
]
_IDENTITY_ZH = [
    re.compile(r"^(?:对了|對了|顺便说一下|順便說一下)?[，,]?我(?P<x>是(?:一名|一个|一個|一位|个|個|名)?.+)$"),
    re.compile(r"^我(?P<x>(?:叫|的名字是|的名字叫).+)$"),
    re.compile(r"^(?P<x>名字(?:叫|是).+)$"),
    re.compile(r"^我(?P<x>在.+?(?:工作|上班|任职|任職).*)$"),
]


def rule_identity(s: str, ctx: Ctx) -> Found | None:
    if ctx.role != "user":
        return None
    for i, pat in enumerate(_IDENTITY_EN):
        m = pat.match(s)
        if not m:
            continue
        x = tidy(m.group("x"))
        if i == 0 and not _ROLE_WORDS.search(x):
            return None
        verb = {0: "is", 1: "works", 2: "", 3: "is called", 4: "has been", 5: "is"}[i]
        fact = f"User {verb} {third_person(x)}" if verb else f"User's {third_person(x)}"
        return Found("identity", "user", "user", x, fact, fact, how=HOW["identity"])
    for i, pat in enumerate(_IDENTITY_ZH):
        m = pat.match(s)
        if not m:
            continue
        x = tidy(m.group("x"))
        if i == 0 and not _ZH_ROLE.search(x):
            return None
        fact = "用户" + third_person(x)
        return Found("identity", "user", "user", x, fact, fact, how=HOW["identity"])
    return None


_FB_LEAD = (
    r"^(?P<lead>(?:(?:no|nope|actually|also|and|but|ok(?:ay)?|so|please|pls|in general|"
    r"from now on|going forward|in (?:the )?future|next time|as a rule|remember)[,.!:]?\s+)*)"
)
_FB_EN = re.compile(
    _FB_LEAD
    + r"(?P<d>don't|do not|dont|never|always|stop|avoid|quit|make sure(?: to| that| you)?|"
    r"be sure to|only use|use)\b\s*(?P<rest>.+)$",
    re.I,
)
_STANDING_EN = re.compile(r"from now on|going forward|in (?:the )?future|next time|as a rule", re.I)
_YOU_PREF = re.compile(
    _lead(r"i(?:'d| would)?\s+(?:really\s+)?(?:prefer|like|want)\s+(?:it\s+)?(?:when|if|that)?\s*"
          r"you\s+(?P<rest>.+)$"),
    re.I,
)
_FB_ZH = re.compile(
    r"^(?P<lead>(?:(?:不对|不對|不是这样|另外|还有|還有|以后|以後|今后|今後|从现在开始|從現在開始|从今以后|"
    r"從今以後|以后都|以後都|请|請|记住|記住)[，,：: ]*)*)"
    r"(?P<d>永远不要|永遠不要|千万不要|千萬不要|不要|别(?![的人])|別(?![的人])|不准|禁止|请勿|請勿|"
    r"总是|總是|一律|务必|務必|始终|始終|每次都|一定要|记得要|記得要|改用|请用|請用|统一用|統一用|都用)"
    r"(?P<rest>.+)$"
)
_NOT_A_VERB = re.compile(
    r"^(?:happy|glad|good|great|nice|fun|welcome|ready|sure|late|early|busy|here|there|so|too|"
    r"more|been|a|an|the|my|your|in|on|at|by|with|fine|mind|again|worry|again|ever|better|"
    r"grateful|thankful|lucky|excited|proud|around)\b",
    re.I,
)
_ENCOURAGEMENT = re.compile(
    r"^(?:give up|quit|worry|stress|panic|feel|be (?:afraid|scared|sad|shy|nervous|hard on|too hard|"
    r"discouraged|down)|lose (?:hope|heart|faith)|let (?:\w+ ){0,6}?(?:stop|bring|get|hold|keep) you|"
    r"miss a beat|doubt yourself|forget to (?:smile|enjoy|have fun|take care))\b",
    re.I,
)
_PAST = re.compile(
    r"^(?:\w+ed|thought|went|had|did|was|were|saw|knew|got|made|said|took|came|felt|found|told|"
    r"became|left|met|wrote|ran|began|brought|bought|heard|kept|lost|sat|spent|stood|won)$",
    re.I,
)
_SO_DIRECTIVE = re.compile(
    r"^(?P<why>.{8,}?),?\s+so\s+(?P<rule>(?:never|always|don't|do not|avoid|make sure|please)\b.+)$", re.I
)
_STANDING_LEAD = re.compile(
    r"^(?:(?:from now on|going forward|in (?:the )?future|next time|as a rule|by default)[,:]?\s+|"
    r"(?:以后|以後|今后|今後|从现在开始|從現在開始|从今以后|從今以後|往后|往後)[，,：: ]*)(?P<rest>.+)$",
    re.I,
)
_YOU_PREF_ZH = re.compile(
    r"^(?:我)?(?:更|比较|比較|很)?(?:希望|想让|想讓|要求|需要|喜欢|喜歡)(?:你|您)(?:以后|以後)?(?P<rest>.+)$|"
    r"^(?:请|請)(?:你|您)(?:以后|以後|每次|总是|總是|一直|始终|始終)(?P<rest2>.+)$"
)
_NEG_DIRECTIVES = {"don't", "do not", "dont", "never", "stop", "avoid", "quit"}
_ZH_NEG = ("永远不要", "永遠不要", "千万不要", "千萬不要", "不要", "别", "別", "不准", "禁止", "请勿", "請勿")


def _feedback(fact: str, slug_src: str, prefix: str, negative: bool, reason: str | None) -> Found:
    return Found(
        "feedback", "feedback", prefix, slug_src, fact, fact, reason=reason,
        how=HOW["feedback-neg" if negative else "feedback-pos"],
    )


def rule_feedback(s: str, ctx: Ctx) -> Found | None:
    if ctx.role != "user":
        return None
    m = _YOU_PREF.match(s) or _YOU_PREF_ZH.match(s)
    if m:
        said = m.groupdict().get("rest") or m.groupdict().get("rest2") or ""
        rest = re.sub(r"^to\s+", "", said, flags=re.I)
        inner = None if rest == said else rule_feedback(rest, ctx)
        if inner is not None:
            return inner  # "I'd like you to always run black" is the directive itself
        rule, reason = split_reason(rest)
        if not content_ok(rule) or rule.startswith(("帮", "幫")):
            return None
        fact = sentence_case(third_person(rule))
        return _feedback(fact, rule, "", False, reason)
    m = _FB_EN.match(s)
    if m:
        d = m.group("d").lower()
        rest, reason = split_reason(m.group("rest"))
        first = rest.split(" ", 1)[0]
        if _NOT_A_VERB.match(rest) or _PAST.match(first) or _ENCOURAGEMENT.match(rest):
            return None  # "always happy to help", "never had a chance", "don't give up"
        if d == "use" and not (
            re.search(r"\b(?:instead|rather than|not)\b", rest, re.I) or _STANDING_EN.search(m.group("lead"))
        ):
            return None  # a plain "use X" is usually about the task at hand
        if not content_ok(rest) or (PRONOUN_OBJECT.match(rest) and len(tokens(rest)) < 2):
            return None
        body = s[m.start("d") : m.start("d") + len(m.group("d"))] + " " + rest
        prefix = {"don't": "dont", "do not": "dont", "dont": "dont", "quit": "stop"}.get(d, d.split()[0])
        if prefix in ("make", "be", "only"):
            prefix = "always" if prefix != "only" else "only"
        return _feedback(sentence_case(body), rest, prefix, d in _NEG_DIRECTIVES, reason)
    m = _FB_ZH.match(s)
    if m:
        d = m.group("d")
        rest, reason = split_reason(m.group("rest"))
        if not content_ok(rest):
            return None
        negative = d in _ZH_NEG
        fact = tidy(re.sub(r"^(?:请|請)", "", s[m.start("lead") :]))
        fact = split_reason(fact)[0]
        return _feedback(fact, rest, "avoid" if negative else "always", negative, reason)
    m = _SO_DIRECTIVE.match(s)
    if m:
        found = rule_feedback(m.group("rule"), ctx)
        if found is not None:
            found.reason = found.reason or tidy(m.group("why"))
            return found
    m = _STANDING_LEAD.match(s)
    if m and not re.match(r"(?:i|we might|maybe)\b", m.group("rest"), re.I):
        rest, reason = split_reason(m.group("rest"))
        if not content_ok(rest, min_tokens=2) or PRONOUN_OBJECT.match(rest):
            return None
        fact = sentence_case(rest) if not has_cjk(rest) else tidy(split_reason(s)[0])
        return _feedback(fact, rest, "", False, reason)
    return None


_PREF_EN = re.compile(
    _lead(r"i\s+(?:really\s+|strongly\s+|generally\s+|much\s+|definitely\s+|do\s+|personally\s+)?"
          r"(?P<v>prefer|like|love|enjoy|favou?r|hate|dislike|can't stand|cannot stand|don't like|"
          r"do not like)\s+(?P<obj>.+)$"),
    re.I,
)
_HABIT_EN = re.compile(
    _lead(r"i\s+(?P<adv>always|usually|normally|typically|generally|tend to|never|rarely)\s+"
          r"(?P<verb>[a-z']+)\s*(?P<rest>.*)$"),
    re.I,
)
_INTEREST_EN = re.compile(
    _lead(r"(?:i am|i'm|im)\s+(?:(?:really|very|so|super|quite|deeply|just|also|still|currently)\s+)*"
          r"(?P<v>keen on|passionate about|interested in|into|a (?:big |huge )?fan of|fond of|learning)\s+"
          r"(?P<obj>.+)$"),
    re.I,
)
_FAV_EN = re.compile(
    _lead(r"my\s+(?:favou?rite|preferred|go-to|usual)\s+(?P<what>.+?)\s+(?:is|are)\s+(?P<val>.+)$"), re.I
)
_PREF_ZH = re.compile(
    r"^(?:另外|还有|還有|其实|其實)?[，,]?(?:我|本人)(?:个人|個人)?(?P<adv>比较|比較|更|很|非常|特别|特別|一直|通常|平时|平時|总是|總是|最)?"
    r"(?P<v>不喜欢|不喜歡|喜欢|喜歡|偏好|偏爱|偏愛|习惯|習慣|讨厌|討厭|爱用|愛用|倾向于|傾向於)(?P<obj>.+)$"
)
_PREF_ZH2 = re.compile(r"^(?P<subj>.{0,20}?)(?:偏好|习惯|習慣)(?:是|为|為|：|:)\s*(?P<obj>.+)$")
_DO_SAME = re.compile(
    r",?\s*(?:so\s+|and\s+)?(?:please\s+)?(?:do the same|do that too|you should too|you should as well)"
    r"(?:,?\s*please)?[\s.!]*$",
    re.I,
)
_NEG_PREF = {"hate", "dislike", "can't stand", "cannot stand", "don't like", "do not like"}


def rule_preference(s: str, ctx: Ctx) -> Found | None:
    if ctx.role != "user":
        return None
    m = _PREF_EN.match(s)
    if m:
        v = m.group("v").lower()
        obj, reason = split_reason(m.group("obj"))
        if PRONOUN_OBJECT.match(obj) or not content_ok(obj, min_tokens=1):
            return None
        neg = v in _NEG_PREF
        verb = "dislikes" if neg else {"favor": "prefers", "favour": "prefers"}.get(v, verb_3rd(v))
        fact = f"User {verb} {third_person(obj)}"
        return Found("preference", "user", "dislikes" if neg else "prefers", obj, fact, fact,
                     reason=reason, how=HOW["preference"])
    m = _INTEREST_EN.match(s)
    if m:
        obj = re.split(r"\s+[-—–]\s+|;", m.group("obj"))[0]
        obj, reason = split_reason(obj)
        if PRONOUN_OBJECT.match(obj) or not content_ok(obj, min_tokens=1):
            return None
        v = m.group("v").lower()
        verb = "is learning" if v == "learning" else f"is {v}"
        fact = f"User {verb} {third_person(obj)}"
        return Found("preference", "user", "likes", obj, fact, fact, reason=reason, how=HOW["preference"])
    m = _FAV_EN.match(s)
    if m:
        what, val = tidy(m.group("what")), tidy(m.group("val"))
        fact = f"User's favorite {third_person(what)} is {third_person(val)}"
        return Found("preference", "user", "prefers", f"{val} {what}", fact, fact, how=HOW["preference"])
    m = _HABIT_EN.match(s)
    if m:
        said = f"{m.group('verb')} {m.group('rest')}".strip()
        same = _DO_SAME.search(said)
        if same and m.group("adv").lower() in ("always", "usually", "never"):
            rule, reason = split_reason(said[: same.start()])
            if content_ok(rule):  # "I always run X, please do the same" is a rule for the assistant
                adv = m.group("adv").lower()
                return _feedback(sentence_case(f"{'always' if adv == 'usually' else adv} {rule}"), rule,
                                 "never" if adv == "never" else "always", adv == "never", reason)
        rest, reason = split_reason(said)
        if not content_ok(rest):
            return None
        verb, _, tail = rest.partition(" ")
        if _PAST.match(verb) or _NOT_A_VERB.match(verb):
            return None  # "I always wanted to …" is a story, not a habit
        adv = m.group("adv").lower()
        adv_3rd = "tends to" if adv == "tend to" else adv
        verb_out = verb if adv == "tend to" else verb_3rd(verb)
        fact = f"User {adv_3rd} {verb_out} {third_person(tail)}".strip()
        return Found("preference", "user", "habit", rest, fact, fact, reason=reason, how=HOW["preference"])
    m = _PREF_ZH.match(s)
    if m:
        obj, reason = split_reason(m.group("obj"))
        if not content_ok(obj, min_tokens=1) or obj in ("这个", "這個", "这样", "這樣", "它"):
            return None
        v = m.group("v")
        fact = "用户" + (m.group("adv") or "") + v + third_person(obj)
        neg = v.startswith(("不", "讨", "討"))
        return Found("preference", "user", "dislikes" if neg else "pref", obj, fact, fact,
                     reason=reason, how=HOW["preference"])
    m = _PREF_ZH2.match(s)
    if m and has_cjk(s):
        obj, reason = split_reason(m.group("obj"))
        if not content_ok(obj, min_tokens=1):
            return None
        fact = third_person(tidy(s))
        return Found("preference", "user", "pref", obj, fact, fact, reason=reason, how=HOW["preference"])
    return None


_DECISION_EN = [
    re.compile(
        r"\b(?P<who>we|i|the team|team)\s+(?:have\s+|'ve\s+|finally\s+|just\s+)?"
        r"(?:decided|agreed|chose|opted|settled)\s+(?:to\s+|on\s+|that\s+|for\s+)?(?P<what>.+)$",
        re.I,
    ),
    re.compile(
        _lead(r"let'?s\s+(?P<verb>go\s+with|stick\s+with|switch\s+to|settle\s+on|standardi[sz]e\s+on|"
              r"use)\s+(?P<what>.+)$"),
        re.I,
    ),
    re.compile(_lead(r"(?:the\s+)?(?:final\s+)?decision(?:\s+is)?\s*[:：-]\s*(?P<what>.+)$"), re.I),
    re.compile(
        _lead(r"we(?:'ll| will| are going to|'re going to)\s+(?P<verb>go\s+with|stick\s+with|switch\s+to|"
              r"standardi[sz]e\s+on|move\s+to|migrate\s+to)\s+(?P<what>.+)$"),
        re.I,
    ),
]
_DECISION_ZH = [
    re.compile(
        r"(?P<who>我们|我們|团队|團隊|大家)?(?:已经|已經|最终|最終|最后|最後)?(?:决定|決定|确定|確定|商定|定下来|定下來)"
        r"(?:了)?[，,：: ]*(?P<what>.+)$"
    ),
    re.compile(r"^(?:好的?|行|那)?[，, ]*(?:就用|就选|就選|就定)(?P<what>.+?)吧?$"),
]


def rule_decision(s: str, ctx: Ctx) -> Found | None:
    for i, pat in enumerate(_DECISION_EN):
        m = pat.search(s)
        if not m:
            continue
        if ctx.role != "user" and not (i == 0 and m.group("who").lower() in ("we", "the team", "team")):
            return None
        what, reason = split_reason(m.group("what"))
        if i == 1 and m.group("verb").lower() == "use" and reason is None:
            return None  # "let's use a loop here" is task chatter; a reason makes it a decision
        if i in (1, 3):
            what = f"{m.group('verb')} {what}"
        what = tidy(re.sub(r"^(?:to|on|that)\s+", "", what, flags=re.I))
        if not content_ok(what) or PRONOUN_OBJECT.match(what):
            return None
        fact = f"Decided on {ctx.day.isoformat()}: {third_person(what)}"
        desc = f"Decision: {third_person(what)}"
        return Found("decision", "project", "decision", what, fact, desc, reason=reason,
                     how=HOW["decision"])
    for i, pat in enumerate(_DECISION_ZH):
        m = pat.search(s) if i == 0 else pat.match(s)
        if not m:
            continue
        if ctx.role != "user" and not (i == 0 and m.group("who")):
            return None
        what, reason = split_reason(m.group("what"))
        if not content_ok(what):
            return None
        fact = f"{ctx.day.isoformat()} 决定：{third_person(what)}"
        return Found("decision", "project", "decision", what, fact, f"决定：{third_person(what)}",
                     reason=reason, how=HOW["decision"])
    return None


_DEADLINE_WORDS = re.compile(
    r"\b(?:deadline|due|ship|ships|shipping|release|released|launch|launches|freeze|demo|cutoff|"
    r"cut-off|go-live|goes live|milestone|submission|handoff|hand-off|deliver|delivery)\b|"
    r"截止|上线|上線|发布|發布|交付|演示|提交|冻结|凍結|里程碑|发版|發版|deadline",
    re.I,
)
_ABS_DATE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b|"
    r"\d{1,2}月\d{1,2}[日号號]",
    re.I,
)
_GOAL_EN = re.compile(_lead(r"(?:our|the|my)\s+(?:main\s+|primary\s+|overall\s+)?goal\s+(?:\w+\s+){0,3}?is\s+(?:to\s+)?(?P<what>.+)$"), re.I)
_GOAL_ZH = re.compile(r"(?:我们的|我們的|项目的|項目的|主要)?目标(?:是|就是)(?P<what>.+)$|(?:我們的|主要)?目標(?:是|就是)(?P<what2>.+)$")


def rule_deadline(s: str, ctx: Ctx) -> Found | None:
    if ctx.role != "user":
        return None
    m = _GOAL_EN.match(s) or _GOAL_ZH.search(s)
    if m:
        what = m.groupdict().get("what") or m.groupdict().get("what2") or ""
        what, reason = split_reason(what)
        if not content_ok(what):
            return None
        zh = has_cjk(what)
        fact = ("目标：" if zh else "Goal: ") + third_person(what)
        return Found("goal", "project", "goal", what, fact, fact, reason=reason, how=HOW["goal"])
    if _DEADLINE_WORDS.search(s) and (has_relative_date(s) or _ABS_DATE.search(s)):
        fact, reason = split_reason(s)
        if not content_ok(fact):
            return None
        return Found("deadline", "project", "deadline", fact, third_person(fact), third_person(fact),
                     reason=reason, how=HOW["deadline"])
    return None


URL = re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s)>\]\"'，。]+", re.I)
_PATHLIKE = re.compile(r"(?:^|\s)(?:~?/[\w.-]+(?:/[\w.-]*)+|[\w.-]+/[\w.-]+/[\w./-]*|#[a-z][\w-]+)")
_REF_WORDS = re.compile(
    r"\b(?:docs?|documentation|dashboards?|runbooks?|wiki|tracker|board|repo|repository|spec|specs|"
    r"design doc|grafana|kibana|sentry|datadog|notion|confluence|figma|jira|linear|status page|"
    r"playbook|handbook|channel|postman|swagger|openapi|logs?|metrics|monitoring|calendar|drive|"
    r"sheet|spreadsheet|staging|backlog|roadmap)\b|文档|文檔|看板|仪表盘|儀表板|监控|監控|仓库|倉庫|"
    r"设计稿|設計稿|手册|手冊|日志|日誌|频道|頻道",
    re.I,
)
_TOOLS = re.compile(
    r"\b(?:linear|jira|github(?: issues| projects)?|gitlab|notion|confluence|trello|asana|"
    r"slack|grafana|datadog|sentry|pagerduty|figma|google docs?|google drive|airtable|"
    r"飞书|飛書|钉钉|釘釘|语雀|語雀)\b|飞书|飛書|钉钉|釘釘|语雀|語雀",
    re.I,
)
_REF_EN = [
    re.compile(
        _lead(r"(?P<subj>.+?)\s+(?:is|are)\s+(?:all\s+)?(?P<verb>tracked|filed|kept|documented|hosted|stored|"
              r"managed|logged|deployed|published|described|listed)\s+(?:in|on|at|under|to)\s+(?P<where>.+)$"),
        re.I,
    ),
    re.compile(_lead(r"(?P<subj>.+?)\s+(?:lives?|sits?)\s+(?:in|at|on|under)\s+(?P<where>.+)$"), re.I),
    re.compile(_lead(r"we\s+(?:track|keep|document|log|store)\s+(?P<subj>.+?)\s+(?:in|on|at)\s+(?P<where>.+)$"), re.I),
    re.compile(_lead(r"(?P<subj>.+?)\s+can\s+be\s+found\s+(?:in|at|on|under)\s+(?P<where>.+)$"), re.I),
    re.compile(_lead(r"(?P<subj>.+?)\s+(?:is|are)\s+(?:at|in|on|under)\s+(?P<where>.+)$"), re.I),
    re.compile(_lead(r"(?P<subj>.+?)\s*[:：]\s*(?P<where>https?://\S+.*)$"), re.I),
    re.compile(_lead(r"(?P<where>https?://\S+)\s+(?:is|has)\s+(?:the\s+|our\s+)?(?P<subj>.+)$"), re.I),
]
_REF_ZH = re.compile(
    r"^(?P<subj>.+?)(?:都|统一|統一)?(?:在|放在|位于|位於|见|見|记录在|記錄在|跟踪在|跟蹤在|托管在|託管在|维护在|維護在)"
    r"[：: ]*(?P<where>.+)$"
)
_PRONOUN_SUBJECT = re.compile(
    r"^(?:it|this|that|he|she|they|i|we|you|there|the (?:bug|error|issue|problem|fix|change)|"
    r"我|你|他|她|它|我们|我們|这|這|那)$",
    re.I,
)


def rule_reference(s: str, ctx: Ctx) -> Found | None:
    if ctx.role != "user":
        return None
    for i, pat in enumerate(_REF_EN):
        m = pat.match(s)
        if not m:
            continue
        subj, where = tidy(m.group("subj")), tidy(m.group("where"))
        subj = re.sub(r"^(?:the|our|all|all the)\s+", "", subj, flags=re.I)
        if _PRONOUN_SUBJECT.match(subj) or not content_ok(subj, min_tokens=1):
            continue
        pointer = bool(URL.search(where) or _PATHLIKE.search(" " + where) or _TOOLS.search(where))
        if i in (1, 3, 4, 5, 6) and not pointer:
            continue
        if i == 0 and not (pointer or _REF_WORDS.search(subj + " " + where)):
            continue
        if i in (5, 6) and not (_REF_WORDS.search(subj) or _TOOLS.search(subj)):
            continue
        sentence = s.split(";")[0]
        fact = sentence if i in (5, 6) else sentence_case(sentence)
        where = tidy(where.split(";")[0])
        desc = f"{sentence_case(subj)}: {where}" if i != 0 else sentence_case(sentence)
        if i == 6:
            desc = f"{sentence_case(subj)}: {where}"
        tool = _TOOLS.search(URL.sub(" ", where))
        slug_src = subj + (" " + tool.group(0) if tool else "")
        return Found("reference", "reference", "ref", slug_src, third_person(fact), third_person(desc),
                     how=HOW["reference"])
    m = _REF_ZH.match(s)
    if m and has_cjk(s):
        subj, where = tidy(m.group("subj")), tidy(m.group("where"))
        pointer = bool(URL.search(where) or _PATHLIKE.search(" " + where) or _TOOLS.search(where))
        if not _PRONOUN_SUBJECT.match(subj) and (pointer and (_REF_WORDS.search(subj) or len(subj) <= 12)):
            fact = third_person(s)
            tool = _TOOLS.search(URL.sub(" ", where))
            url = URL.search(where)
            desc = f"{third_person(subj)}：{url.group(0)}" if url else fact
            return Found("reference", "reference", "ref", subj + (" " + tool.group(0) if tool else ""),
                         fact, desc, how=HOW["reference"])
    url = URL.search(s)
    if url and _REF_WORDS.search(s.replace(url.group(0), " ")):
        before = tidy(s[: url.start()])
        subj = re.sub(r"^(?:the|our|here's|here is|see)\s+", "", before, flags=re.I) or url.group(0)
        if not content_ok(subj, min_tokens=1):
            return None
        fact = sentence_case(third_person(s))
        return Found("reference", "reference", "ref", subj, fact, fact, how=HOW["reference"])
    return None


_ZH_DIRECTIVE_ANYWHERE = re.compile(
    r"一定要|务必|務必|必须|必須|总是|總是|每次|永远不要|永遠不要|不要|别(?![的人])|別(?![的人])|禁止"
)
_REMEMBER_EN = re.compile(
    _lead(r"(?:(?:please\s+)?(?:remember|keep in mind|don't forget|do not forget|never forget|memori[sz]e|"
          r"make a note)(?:\s+(?:this|that)\b|\s*:|\s+(?=to\b))|please\s+(?:remember|memori[sz]e)\b|"
          r"for future reference\b|for the record\b)[\s:,-]*(?P<rest>.+)$"),
    re.I,
)
_REMEMBER_ZH = re.compile(
    r"^(?:请|請|你)?(?:帮我)?(?:记住|記住|记一下|記一下|记下来|記下來|记得|記得|别忘了|別忘了|不要忘记|不要忘記|注意)"
    r"[：:，,、\s]*(?P<rest>.+)$"
)
RULES: tuple[Rule, ...] = (rule_identity, rule_feedback, rule_preference, rule_decision, rule_deadline,
                           rule_reference)


def rule_remember(s: str, ctx: Ctx) -> Found | None:
    if ctx.role != "user":
        return None
    m = _REMEMBER_EN.match(s) or _REMEMBER_ZH.match(s)
    if not m:
        return None
    rest = tidy(m.group("rest"))
    if not content_ok(rest):
        return None
    for rule in RULES:
        found = rule(rest, ctx)
        if found:
            found.priority = 0
            return found
    to = re.match(r"^to\s+(?P<x>.+)$", rest, re.I)
    zh_directive = _ZH_DIRECTIVE_ANYWHERE.search(rest)
    if zh_directive and has_cjk(rest):
        fact, reason = split_reason(rest)
        negative = any(n in fact for n in _ZH_NEG)
        found = _feedback(tidy(fact), fact, "avoid" if negative else "always", negative, reason)
    elif to:
        x, reason = split_reason(to.group("x"))
        found = _feedback(sentence_case(x), x, "", False, reason)
    elif re.search(r"\b(?:i|my|me|i'm)\b", rest, re.I) or rest.startswith("我"):
        fact = sentence_case(third_person(rest)) if not has_cjk(rest[:2]) else third_person(rest)
        if not has_cjk(rest[:2]) and not fact.lower().startswith("user"):
            fact = f"About the user: {fact[0].lower()}{fact[1:]}"
        found = Found("remember", "user", "user", rest, fact, fact, how=HOW["preference"])
    elif URL.search(rest) or _PATHLIKE.search(" " + rest):
        found = Found("remember", "reference", "ref", URL.sub(" ", rest), sentence_case(rest),
                      sentence_case(rest), how=HOW["reference"])
    else:
        fact, reason = split_reason(rest)
        found = Found("remember", "project", "", fact, sentence_case(fact), sentence_case(fact),
                      reason=reason, how=_REMEMBER_HOW)
    found.priority = 0
    return found


ALL_RULES: tuple[Rule, ...] = (rule_remember, *RULES)
