"""Offline extraction: memories from transcript turns by pattern, in English and Chinese.

The answer for ``{"task": "extract", "today", "index", "turns"}`` is a list of records with
exactly ``name``, ``type``, ``description``, ``body``. The rules, in the order a sentence is
tried (the first that matches wins, one record per sentence at most):

1. **remember** — "remember that …", "remember: …", "remember to …", "please remember …",
   "keep in mind that …", "don't forget to …", "for future reference …", "记住/記住/记得/别忘了 …"
   (a rhetorical "Remember, …" is not a request). The rest is classified by rules 2–7; if none fits,
   "remember to X" becomes feedback "X", first-person text a ``user`` record, text with a URL
   or path a ``reference``, anything else a ``project`` note. Highest priority under the cap.
2. **identity** → ``user`` — "I'm a/an <role>", "I work as/at/on …", "my name/role is …",
   "I've been writing X for …", "I'm new to …", "我是<role>", "我叫…", "我在…工作".
3. **feedback** → ``feedback`` — a sentence that *starts* (after "no,", "please", "from now
   on", "以后", …) with don't / do not / never / always / stop / avoid / make sure / only use /
   "use X instead of Y", or 不要 / 别 / 永远不要 / 总是 / 一律 / 务必 / 改用 / 请用 …; also "I
   prefer/like it when you …". The directive needs two content words (or three Chinese
   characters) so "don't do that" or "stop" alone is not a rule; a directive followed by a
   past tense or an adjective ("never had a chance", "always happy to help") or plain
   encouragement ("don't give up", "don't be afraid", "don't let it get you down") is not one.
4. **preference** → ``user`` — "I (really) prefer/like/love/enjoy/hate …", "I always/usually
   …" habits (not "I always wanted …"), "I'm keen on / passionate about / interested in / a fan
   of / learning …", "my favorite X is Y", "我(比较)喜欢/偏好/习惯/讨厌 …", "…偏好是 …". An object
   that is only a pronoun ("I like it", "I like your idea") is a reaction, not a preference.
5. **decision** → ``project`` — "we decided/agreed/chose to …", "let's go with / stick with /
   switch to …", "decision: …", "我们决定/确定 …", "就用 …".
6. **deadline or goal** → ``project`` — a deadline word (deadline, due, ship, release, launch,
   freeze, demo, 截止, 上线, 发布, 交付 …) together with a date, or "our goal is …", "目标是 …".
7. **reference** → ``reference`` — "X is tracked/documented/hosted/kept in Y", "X lives in Y",
   "we track X in Y", and — only when Y is a URL, a path or a known tool (Linear, Jira,
   GitHub, Notion, Grafana, 飞书 …) — "X lives in Y", "X can be found at Y", "X is at Y",
   "X: <URL>"; a URL next to a word such as docs, dashboard, runbook, wiki, tracker, board,
   repo, spec; "文档/看板/仓库…在 <URL/路径/工具>".

Bodies: the first line states the rule or fact (first person rewritten as "User …" /
"用户…"); feedback and project bodies follow it with ``**Why:**`` (the text after
because/since/so that/due to/因为/由于, or a "because …" sentence right after, else a note
that no reason was given) and ``**How to apply:**``. Relative dates are rewritten as ISO
dates from the turn's timestamp, else the payload's ``today``.

Skipped: assistant turns (except "we decided/agreed …" / "我们决定 …" decisions), injected
text (system reminders, slash-command output, skill documents, compaction summaries, task
notifications, interrupted-request markers), fenced code, quoted lines, tables, ``[tool…``
summary lines, questions, requests ("can you…", "帮我…"), ephemeral chatter ("for now",
"right now", "this time", "这次", "暂时"), sentences holding a secret (``[REDACTED:``,
key-like strings, "password is …"), and anything the index already has (same name, or a
description of the same type whose tokens mostly overlap). Names are slugs from content
words (``prefers-tabs-over-spaces``, ``never-commit-directly-main``, ``decision-use-postgres``,
``ref-api-docs``); text without ASCII words gets ``<kind>-<hash>``. Names are unique in the
answer and never reuse an index name. At most :data:`MAX_RECORDS` records, remember-requests
first, then in transcript order (once the cap is full only a remember-request can still get
in, so a long transcript costs little after that). Chinese records get Chinese generic
Why/How wording; the ``**Why:**``/``**How to apply:**`` markers stay as they are.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dreamd.models.offline_text import (
    absolutize_dates,
    containment,
    has_cjk,
    has_relative_date,
    jaccard,
    make_name,
    parse_date,
    raw_words,
    tokens,
)

MAX_RECORDS = 20
MAX_TURN_CHARS = 4000
MAX_DESCRIPTION = 150

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
)
_STRIP_BLOCKS = re.compile(
    r"<(ide_opened_file|ide_selection|system-reminder|command-[a-z]+|local-command-[a-z]+)>.*?</\1>",
    re.S,
)
_FENCE = re.compile(r"```.*?(```|\Z)|~~~.*?(~~~|\Z)", re.S)
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
    lines = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith((">", "|", "#", "[tool", "[Tool", "[Request interrupted")):
            continue
        if s.startswith("<") and s.endswith(">"):
            continue
        lines.append(_LIST_MARK.sub("", s))
    return "\n".join(lines) or None


_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[^\s])|(?<=[。！？；])")


def sentences(text: str) -> list[str]:
    out: list[str] = []
    for line in text.splitlines():
        for part in _SENTENCE_SPLIT.split(line):
            part = part.strip()
            if part:
                out.append(part)
    return out


# ----------------------------------------------------------------------------- filters

_QUESTION_START = re.compile(
    r"^(?:can|could|would|will) (?:you|we|i)\b|^(?:what|why|how|where|when|who|which)\b|"
    r"^(?:is|are) (?:there|it|this|that)\b|^(?:do|does|did) (?:you|it|we|i)\b|"
    r"^(?:should|shall) (?:i|we)\b",
    re.I,
)
_ZH_QUESTION = re.compile(r"[吗嗎呢吧][。.!！~～]*$|是不是|能不能|可不可以|要不要|为什么|為什麼|怎么|怎麼|如何|哪里|哪裡")
_REQUEST = re.compile(
    r"^(?:please\s+)?(?:help me|let me|can you|could you|帮我|幫我|请帮|請幫|麻烦|麻煩|帮忙|幫忙)", re.I
)
_EPHEMERAL = re.compile(
    r"\b(?:right now|for now|this time|at the moment|for this task|for the moment|yet)\b|"
    r"这次|這次|暂时|暫時|先不|现在先|現在先|这一次|這一次",
    re.I,
)
_SECRET = re.compile(
    r"\[REDACTED:|(?<![A-Za-z0-9])(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|"
    r"xox[abprs]-[A-Za-z0-9-]{8,})|"
    r"-----BEGIN|\b(?:password|passwd|passphrase|secret|token|api[ _-]?key)\s*(?:is|=|:)\s*\S+|"
    r"(?:密码|密碼|口令|密钥|密鑰)\s*(?:是|为|為|:|：|=)",
    re.I,
)


def is_question(s: str) -> bool:
    return s.rstrip().endswith(("?", "？")) or bool(_QUESTION_START.match(s)) or bool(
        _ZH_QUESTION.search(s)
    )


def has_secret(s: str) -> bool:
    return bool(_SECRET.search(s))


# ----------------------------------------------------------------------------- text shaping

_FIRST_PERSON = [
    (re.compile(r"\bI'm\b"), "they're"),
    (re.compile(r"\bI've\b"), "they've"),
    (re.compile(r"\bI'd\b"), "they'd"),
    (re.compile(r"\bI'll\b"), "they'll"),
    (re.compile(r"\bI\b"), "they"),
    (re.compile(r"\bmy\b", re.I), "their"),
    (re.compile(r"\bme\b", re.I), "them"),
    (re.compile(r"\bmine\b", re.I), "theirs"),
    (re.compile(r"\bmyself\b", re.I), "themselves"),
]
_ZH_ME = re.compile(r"我(?![们們])")


def third_person(text: str) -> str:
    for pattern, repl in _FIRST_PERSON:
        text = pattern.sub(repl, text)
    return _ZH_ME.sub("用户", text)


_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "am": "is", "are": "is", "can": "can",
              "will": "will", "would": "would", "should": "should", "must": "must"}


def verb_3rd(verb: str) -> str:
    """``use`` → ``uses`` for "User always uses …"."""
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if not low.isalpha() or (low.endswith("s") and not low.endswith(("ss", "sh", "ch"))):
        return verb
    if low.endswith(("sh", "ch", "x", "z", "o", "ss")):
        return verb + "es"
    if len(low) > 1 and low.endswith("y") and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _tidy(text: str) -> str:
    text = " ".join(text.replace("\u2019", "'").replace("\u2018", "'").split())
    text = text.strip(" ,;:，、：；-—")
    return re.sub(r"[.。!！]+$", "", text).strip()


def sentence_case(text: str) -> str:
    text = _tidy(text)
    return text[:1].upper() + text[1:] if text else text


def as_line(text: str) -> str:
    """One body line: capitalised and ending with a full stop of the right script."""
    text = sentence_case(text)
    if not text:
        return text
    return text + ("。" if has_cjk(text) else ".")


def one_line(text: str, limit: int = MAX_DESCRIPTION) -> str:
    text = sentence_case(text)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:，") + "…"


_REASON_SPLIT = re.compile(
    r"\s*[,;]?\s*(?:\b(?:because(?: of)?|since|due to|given that|so that|cuz|coz)\b|'cause\b)\s*|"
    r"\s*[，,；;]?\s*(?:因为|因為|由于|由於|原因是|为了|為了)\s*",
    re.I,
)
_REASON_NEXT = re.compile(
    r"^(?:because|that's because|that is because|the reason is(?: that)?|reason:|since|"
    r"因为|因為|原因是|理由是)[\s:：,，]*(?P<r>.+)$",
    re.I,
)


def split_reason(text: str) -> tuple[str, str | None]:
    m = _REASON_SPLIT.search(text)
    if not m or m.start() == 0:
        return text, None
    fact, reason = text[: m.start()], text[m.end() :]
    reason = _tidy(reason)
    if len(tokens(reason)) < 1:
        return text, None
    return _tidy(fact), reason


def content_ok(text: str, *, min_tokens: int = 2) -> bool:
    """Enough substance to be a memory: ``min_tokens`` content words or 3 Chinese chars."""
    zh = sum(1 for ch in text if has_cjk(ch))
    return zh >= 3 or len(tokens(text)) >= min_tokens


_PRONOUN_OBJECT = re.compile(
    r"^(?:it|this|that|these|those|them|him|her|you|your|yours|how|what|the way|when you)\b"
    r"(?!\s+(?:when|if) you)",
    re.I,
)


# ----------------------------------------------------------------------------- rules

@dataclass
class Found:
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
    role: str
    day: dt.date
    next_sentence: str | None


Rule = Callable[[str, Ctx], Found | None]

_WHY_NONE = {
    "feedback": "the user gave this as explicit feedback on {day}; no reason was stated.",
    "project": "stated in conversation on {day}; no reason was given.",
}
_HOW = {
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
_WHY_NONE_ZH = {
    "feedback": "用户在 {day} 明确提出，未说明原因。",
    "project": "{day} 在对话中提出，未说明原因。",
}
_HOW_ZH = {
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
_HOW_KEY = {**{v: k for k, v in _HOW.items()}, _REMEMBER_HOW: "remember"}

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
        r"^(?:(?:ok(?:ay)?|so|also|and|but|btw|fyi|actually|oh|well|hey|hi|just so you know|"
        r"for the record|note)[,.!:]?\s+)*" + pattern
    )


_IDENTITY_EN = [
    re.compile(_lead(r"(?:i am|i'm|im)\s+(?P<x>(?:a|an)\s+[^,;]+?)\s*$"), re.I),
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
        x = _tidy(m.group("x"))
        if i == 0 and not _ROLE_WORDS.search(x):
            return None
        verb = {0: "is", 1: "works", 2: "", 3: "is called", 4: "has been", 5: "is"}[i]
        fact = f"User {verb} {third_person(x)}" if verb else f"User's {third_person(x)}"
        return Found("identity", "user", "user", x, fact, fact, how=_HOW["identity"])
    for i, pat in enumerate(_IDENTITY_ZH):
        m = pat.match(s)
        if not m:
            continue
        x = _tidy(m.group("x"))
        if i == 0 and not _ZH_ROLE.search(x):
            return None
        fact = "用户" + third_person(x)
        return Found("identity", "user", "user", x, fact, fact, how=_HOW["identity"])
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
_STANDING_LEAD = re.compile(
    r"^(?:(?:from now on|going forward|in (?:the )?future|next time|as a rule|by default)[,:]?\s+|"
    r"(?:以后|以後|今后|今後|从现在开始|從現在開始|从今以后|從今以後|往后|往後)[，,：: ]*)(?P<rest>.+)$",
    re.I,
)
_YOU_PREF_ZH = re.compile(
    r"^(?:我)?(?:希望|想让|想讓|要求|需要)(?:你|您)(?:以后|以後)?(?P<rest>.+)$|"
    r"^(?:请|請)(?:你|您)(?:以后|以後|每次|总是|總是|一直|始终|始終)(?P<rest2>.+)$"
)
_NEG_DIRECTIVES = {"don't", "do not", "dont", "never", "stop", "avoid", "quit"}
_ZH_NEG = ("永远不要", "永遠不要", "千万不要", "千萬不要", "不要", "别", "別", "不准", "禁止", "请勿", "請勿")


def _feedback(fact: str, slug_src: str, prefix: str, negative: bool, reason: str | None) -> Found:
    return Found(
        "feedback", "feedback", prefix, slug_src, fact, fact, reason=reason,
        how=_HOW["feedback-neg" if negative else "feedback-pos"],
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
        if not content_ok(rest) or (_PRONOUN_OBJECT.match(rest) and len(tokens(rest)) < 2):
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
        fact = _tidy(re.sub(r"^(?:请|請)", "", s[m.start("lead") :]))
        fact = split_reason(fact)[0]
        return _feedback(fact, rest, "avoid" if negative else "always", negative, reason)
    m = _STANDING_LEAD.match(s)
    if m and not re.match(r"(?:i|we might|maybe)\b", m.group("rest"), re.I):
        rest, reason = split_reason(m.group("rest"))
        if not content_ok(rest, min_tokens=2) or _PRONOUN_OBJECT.match(rest):
            return None
        fact = sentence_case(rest) if not has_cjk(rest) else _tidy(split_reason(s)[0])
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
_NEG_PREF = {"hate", "dislike", "can't stand", "cannot stand", "don't like", "do not like"}


def rule_preference(s: str, ctx: Ctx) -> Found | None:
    if ctx.role != "user":
        return None
    m = _PREF_EN.match(s)
    if m:
        v = m.group("v").lower()
        obj, reason = split_reason(m.group("obj"))
        if _PRONOUN_OBJECT.match(obj) or not content_ok(obj, min_tokens=1):
            return None
        neg = v in _NEG_PREF
        verb = "dislikes" if neg else {"favor": "prefers", "favour": "prefers"}.get(v, verb_3rd(v))
        fact = f"User {verb} {third_person(obj)}"
        return Found("preference", "user", "dislikes" if neg else "prefers", obj, fact, fact,
                     reason=reason, how=_HOW["preference"])
    m = _INTEREST_EN.match(s)
    if m:
        obj = re.split(r"\s+[-—–]\s+|;", m.group("obj"))[0]
        obj, reason = split_reason(obj)
        if _PRONOUN_OBJECT.match(obj) or not content_ok(obj, min_tokens=1):
            return None
        v = m.group("v").lower()
        verb = "is learning" if v == "learning" else f"is {v}"
        fact = f"User {verb} {third_person(obj)}"
        return Found("preference", "user", "likes", obj, fact, fact, reason=reason, how=_HOW["preference"])
    m = _FAV_EN.match(s)
    if m:
        what, val = _tidy(m.group("what")), _tidy(m.group("val"))
        fact = f"User's favorite {third_person(what)} is {third_person(val)}"
        return Found("preference", "user", "prefers", f"{val} {what}", fact, fact, how=_HOW["preference"])
    m = _HABIT_EN.match(s)
    if m:
        rest, reason = split_reason(f"{m.group('verb')} {m.group('rest')}".strip())
        if not content_ok(rest):
            return None
        verb, _, tail = rest.partition(" ")
        if _PAST.match(verb) or _NOT_A_VERB.match(verb):
            return None  # "I always wanted to …" is a story, not a habit
        adv = m.group("adv").lower()
        adv_3rd = "tends to" if adv == "tend to" else adv
        verb_out = verb if adv == "tend to" else verb_3rd(verb)
        fact = f"User {adv_3rd} {verb_out} {third_person(tail)}".strip()
        return Found("preference", "user", "habit", rest, fact, fact, reason=reason, how=_HOW["preference"])
    m = _PREF_ZH.match(s)
    if m:
        obj, reason = split_reason(m.group("obj"))
        if not content_ok(obj, min_tokens=1) or obj in ("这个", "這個", "这样", "這樣", "它"):
            return None
        v = m.group("v")
        fact = "用户" + (m.group("adv") or "") + v + third_person(obj)
        neg = v.startswith(("不", "讨", "討"))
        return Found("preference", "user", "dislikes" if neg else "pref", obj, fact, fact,
                     reason=reason, how=_HOW["preference"])
    m = _PREF_ZH2.match(s)
    if m and has_cjk(s):
        obj, reason = split_reason(m.group("obj"))
        if not content_ok(obj, min_tokens=1):
            return None
        fact = third_person(_tidy(s))
        return Found("preference", "user", "pref", obj, fact, fact, reason=reason, how=_HOW["preference"])
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
        what = _tidy(re.sub(r"^(?:to|on|that)\s+", "", what, flags=re.I))
        if not content_ok(what) or _PRONOUN_OBJECT.match(what):
            return None
        fact = f"Decided on {ctx.day.isoformat()}: {third_person(what)}"
        desc = f"Decision: {third_person(what)}"
        return Found("decision", "project", "decision", what, fact, desc, reason=reason,
                     how=_HOW["decision"])
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
                     reason=reason, how=_HOW["decision"])
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
        return Found("goal", "project", "goal", what, fact, fact, reason=reason, how=_HOW["goal"])
    if _DEADLINE_WORDS.search(s) and (has_relative_date(s) or _ABS_DATE.search(s)):
        fact, reason = split_reason(s)
        if not content_ok(fact):
            return None
        return Found("deadline", "project", "deadline", fact, third_person(fact), third_person(fact),
                     reason=reason, how=_HOW["deadline"])
    return None


_URL = re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s)>\]\"'，。]+", re.I)
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
        subj, where = _tidy(m.group("subj")), _tidy(m.group("where"))
        subj = re.sub(r"^(?:the|our|all|all the)\s+", "", subj, flags=re.I)
        if _PRONOUN_SUBJECT.match(subj) or not content_ok(subj, min_tokens=1):
            continue
        pointer = bool(_URL.search(where) or _PATHLIKE.search(" " + where) or _TOOLS.search(where))
        if i in (1, 3, 4, 5, 6) and not pointer:
            continue
        if i == 0 and not (pointer or _REF_WORDS.search(subj + " " + where)):
            continue
        if i in (5, 6) and not (_REF_WORDS.search(subj) or _TOOLS.search(subj)):
            continue
        fact = s if i in (5, 6) else sentence_case(s)
        desc = f"{sentence_case(subj)}: {where}" if i != 0 else sentence_case(s)
        if i == 6:
            desc = f"{sentence_case(subj)}: {where}"
        tool = _TOOLS.search(_URL.sub(" ", where))
        slug_src = subj + (" " + tool.group(0) if tool else "")
        return Found("reference", "reference", "ref", slug_src, third_person(fact), third_person(desc),
                     how=_HOW["reference"])
    m = _REF_ZH.match(s)
    if m and has_cjk(s):
        subj, where = _tidy(m.group("subj")), _tidy(m.group("where"))
        pointer = bool(_URL.search(where) or _PATHLIKE.search(" " + where) or _TOOLS.search(where))
        if not _PRONOUN_SUBJECT.match(subj) and (pointer and (_REF_WORDS.search(subj) or len(subj) <= 12)):
            fact = third_person(s)
            tool = _TOOLS.search(_URL.sub(" ", where))
            url = _URL.search(where)
            desc = f"{third_person(subj)}：{url.group(0)}" if url else fact
            return Found("reference", "reference", "ref", subj + (" " + tool.group(0) if tool else ""),
                         fact, desc, how=_HOW["reference"])
    url = _URL.search(s)
    if url and _REF_WORDS.search(s.replace(url.group(0), " ")):
        before = _tidy(s[: url.start()])
        subj = re.sub(r"^(?:the|our|here's|here is|see)\s+", "", before, flags=re.I) or url.group(0)
        if not content_ok(subj, min_tokens=1):
            return None
        fact = sentence_case(third_person(s))
        return Found("reference", "reference", "ref", subj, fact, fact, how=_HOW["reference"])
    return None


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
    rest = _tidy(m.group("rest"))
    if not content_ok(rest):
        return None
    for rule in RULES:
        found = rule(rest, ctx)
        if found:
            found.priority = 0
            return found
    to = re.match(r"^to\s+(?P<x>.+)$", rest, re.I)
    if to:
        x, reason = split_reason(to.group("x"))
        found = _feedback(sentence_case(x), x, "", False, reason)
    elif re.search(r"\b(?:i|my|me|i'm)\b", rest, re.I) or rest.startswith("我"):
        fact = sentence_case(third_person(rest)) if not has_cjk(rest[:2]) else third_person(rest)
        if not has_cjk(rest[:2]) and not fact.lower().startswith("user"):
            fact = f"About the user: {fact[0].lower()}{fact[1:]}"
        found = Found("remember", "user", "user", rest, fact, fact, how=_HOW["preference"])
    elif _URL.search(rest) or _PATHLIKE.search(" " + rest):
        found = Found("remember", "reference", "ref", _URL.sub(" ", rest), sentence_case(rest),
                      sentence_case(rest), how=_HOW["reference"])
    else:
        fact, reason = split_reason(rest)
        found = Found("remember", "project", "", fact, sentence_case(fact), sentence_case(fact),
                      reason=reason, how=_REMEMBER_HOW)
    found.priority = 0
    return found


ALL_RULES: tuple[Rule, ...] = (rule_remember, *RULES)


# ----------------------------------------------------------------------------- assembly

def _body(found: Found, day: dt.date) -> str:
    """Fact line, then Why/How; the generic wording follows the language of the fact."""
    zh = has_cjk(found.fact)
    lines = [as_line(found.fact)]
    lines.extend(found.extra_lines)
    if found.type in ("feedback", "project"):
        generic = (_WHY_NONE_ZH if zh else _WHY_NONE)[found.type].format(day=day)
        lines.append(f"**Why:** {as_line(found.reason) if found.reason else generic}")
    elif found.reason:
        lines.append(f"**Why:** {as_line(found.reason)}")
    if found.how:
        how = _HOW_ZH.get(_HOW_KEY.get(found.how, ""), found.how) if zh else found.how
        lines.append(f"**How to apply:** {how}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class _Indexed:
    name: str
    type: str
    tokens: frozenset[str]


def _near_duplicate(a: set[str] | frozenset[str], b: set[str] | frozenset[str]) -> bool:
    if min(len(a), len(b)) < 2:
        return bool(a) and a == b
    return jaccard(set(a), set(b)) >= 0.6 or containment(set(a), set(b)) >= 0.85


def _turn_day(turn: Mapping[str, Any], today: dt.date) -> dt.date:
    return parse_date(turn.get("timestamp")) or today


def _record_from(found: Found, day: dt.date) -> dict[str, str]:
    fact = absolutize_dates(found.fact, day)
    desc = one_line(absolutize_dates(found.description, day))
    reason = absolutize_dates(found.reason, day) if found.reason else None
    shaped = Found(found.kind, found.type, found.name_prefix, found.slug_source, fact, desc,
                   reason=reason, how=found.how, priority=found.priority, extra_lines=found.extra_lines)
    slug_src = re.sub(
        r"(?<![A-Za-z0-9])\d+(?![A-Za-z0-9])", " ", _URL.sub(" ", absolutize_dates(found.slug_source, day))
    )
    name = make_name(found.name_prefix, slug_src, fallback=found.type)
    return {"name": name, "type": found.type, "description": desc, "body": _body(shaped, day)}


def extract(payload: Mapping[str, Any]) -> list[dict[str, str]]:
    """The offline answer to an extraction payload (see the module docstring for the rules)."""
    today = parse_date(payload.get("today")) or dt.date(1970, 1, 1)
    index: list[_Indexed] = []
    for item in payload.get("index") or []:
        if isinstance(item, Mapping):
            index.append(_Indexed(str(item.get("name", "")), str(item.get("type", "")),
                                  frozenset(tokens(str(item.get("description", ""))))))
    taken = {e.name for e in index}
    picked: list[tuple[int, int, dict[str, str]]] = []
    seen: list[_Indexed] = []
    position = 0
    for turn in payload.get("turns") or []:
        if not isinstance(turn, Mapping):
            continue
        role = turn.get("role")
        text = turn.get("text")
        if role not in ("user", "assistant") or not isinstance(text, str):
            continue
        cleaned = clean_turn(text)
        if cleaned is None:
            continue
        day = _turn_day(turn, today)
        sents = sentences(cleaned)
        for k, s in enumerate(sents):
            position += 1
            if has_secret(s) or is_question(s) or _REQUEST.match(s) or _EPHEMERAL.search(s):
                continue
            nxt = sents[k + 1] if k + 1 < len(sents) else None
            ctx = Ctx(role=str(role), day=day, next_sentence=nxt)
            # Once the cap is reached by earlier records, only a remember-request can still
            # displace one, so the other rules (and their dedup work) are skipped.
            rules = ALL_RULES if len(picked) < MAX_RECORDS else (rule_remember,)
            if sum(1 for p in picked if p[0] == 0) >= MAX_RECORDS:
                break
            found = next((f for f in (rule(s, ctx) for rule in rules) if f), None)
            if found is None:
                continue
            if found.reason is None and found.type in ("feedback", "project") and nxt:
                m = _REASON_NEXT.match(nxt)
                if m and not has_secret(nxt):
                    found.reason = _tidy(m.group("r"))
            record = _record_from(found, day)
            if any(has_secret(v) for v in record.values()):
                continue
            toks = frozenset(tokens(record["description"]))
            if record["name"] in taken and any(e.name == record["name"] for e in index):
                continue
            if any(e.type == record["type"] and _near_duplicate(toks, e.tokens) for e in (*index, *seen)):
                continue
            base, n = record["name"], 2
            while record["name"] in taken:
                suffix = f"-{n}"
                record["name"] = base[: 64 - len(suffix)] + suffix
                n += 1
            taken.add(record["name"])
            seen.append(_Indexed(record["name"], record["type"], toks))
            picked.append((found.priority, position, record))
    best = sorted(picked, key=lambda p: (p[0], p[1]))[:MAX_RECORDS]
    return [r for _, _, r in sorted(best, key=lambda p: p[1])]


def extract_from_turns(
    turns: Sequence[Mapping[str, Any]], *, today: str, index: Sequence[Mapping[str, str]] = ()
) -> list[dict[str, str]]:
    """Convenience wrapper for tests and the demo: build the payload and extract."""
    return extract({"task": "extract", "today": today, "index": list(index), "turns": list(turns)})


__all__ = ["MAX_RECORDS", "clean_turn", "extract", "extract_from_turns", "raw_words", "sentences"]
