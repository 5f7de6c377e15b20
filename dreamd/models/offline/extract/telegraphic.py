"""Telegraphic and labelled statements: facts said without a full sentence.

People state lasting facts in notes as often as in sentences, and the named rules
(:data:`~dreamd.models.offline.extract.facts.RULES`) and the recall-by-default statement rule
(:mod:`dreamd.models.offline.extract.statement`) need a subject and a finite verb. This module reads the
other shapes:

- **a label, a colon and content** ("house style: X over Y, one X per Y", "context: <who I am>",
  "our SLA: …", "kids: A (9) has …, B (6) is …", "规矩：…", "背景：…"). The label's head noun says
  what kind every item is — rules/style/policy/conventions/规矩/规范 → ``feedback``; context/about
  me/background/family/背景 → ``user``; a deadline/SLA/plan/schedule/stack label → ``project``;
  links/docs/where things live → ``reference`` — and each item of the list is a fact of its own,
  so one record per item. A label nobody can type ("lol: …", "Q: …") gives nothing here. A
  label standing alone at the end of a line ("Rules for anything you write:") heads the lines
  after it until the assistant speaks (:class:`Labels`);
- **verbless self-introductions** ("<role> here, at <company>", "… (<role>) so keep it short",
  "<role>, <n> years in", "training for …", "做<领域>的", "在<地方>做<职位>"): the subject the user
  left out is put back ("I'm a …", "我…") and the identity rules decide, so what counts as a role
  or a stable state stays defined in one place (:mod:`dreamd.models.offline.extract.identity`);
- **bare constraints** ("<value> only, <reason>", "<X> over <Y>", "no <thing> anywhere",
  "<X> or nothing", "<X> minimum on everything we ship", "<x> floor is <v>", "let's stick to X",
  "只用 X"): a rule for the work with no verb. A bare "no <thing>" is a rule only with a standing
  scope (anywhere, ever, in <place>, from you) or a reason, so "no worries" and "no idea" never
  are; "X over Y" only when it names things of the work ("tabs over spaces", not "mind over
  matter"). "plan is to …" is a plan of the work (``project``).

Telegraphic talk leans on what is around it, so that is kept with it: a rules announcement
without a colon ("a few rules for the emails.", "先说明几条要求。") heads the lines after it like a
label; a list answering the assistant's question about conventions is one rule per item, the
question kept in the body; a bare noun phrase before a sentence ("invoices. I send them on the
1st") is that sentence's topic and stays in its words; a bare constraint keeps the sentences
beside it ("they come from @acme/tokens. no raw hex anywhere") and, as a reply, the question.

Items keep the user's own words (the label is the subject of every item, the value is theirs);
a reason given after the list ("…, <reason>" as a last item, "… otherwise." as the next
sentence) is the reason of every rule in it. Each item still passes the structural distractor
tests (:func:`dreamd.models.offline.extract.distractors.distractor`): reported speech, a feeling, a
wish, a hedge, a hypothetical, something broken right now or a secret is never a record, and
questions, temporary instructions ("for now", "这次") and one-off requests are filtered before
this module is asked (:mod:`dreamd.models.offline.extract.pipeline`), which asks it of the user's
sentences only: what the assistant says is never read here.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, replace

from dreamd.models.offline import markers as lex
from dreamd.models.offline.extract.audience import is_life_advice, is_wellbeing
from dreamd.models.offline.extract.clauses import found_in
from dreamd.models.offline.extract.distractors import distractor, mostly_chinese
from dreamd.models.offline.extract.kinds import future_dates
from dreamd.models.offline.extract.rules import HOW, REMEMBER_HOW
from dreamd.models.offline.extract.statement import TYPE_HOW, TYPE_PREFIX, rule_statement
from dreamd.models.offline.extract.structure import (
    clause_reason,
    is_temporary,
    opens_with_verb,
    peel,
)
from dreamd.models.offline.extract.types import Ctx, Found
from dreamd.models.offline.text import (
    absolutize_dates,
    has_cjk,
    sentence_case,
    third_person,
    tidy,
    tokens,
)

# ----------------------------------------------------------------------------- labels

_FEEDBACK_HEAD = re.compile(
    r"\b(?:rules?|ground rules|house rules|style|style guide|house style|code style|policy|policies|conventions?|"
    r"guidelines?|requirements?|standards?|constraints?|norms?|dos and don'ts|do's and don'ts|"
    r"etiquette|non-negotiables?|must-haves?|red lines?|hard rules?)\b|"
    r"规矩|規矩|规则|規則|规范|規範|要求|约定|約定|原则|原則|风格|風格|偏好|注意事项|注意事項|禁忌|底线|底線",
    re.I,
)
# the people and animals of a household, and the person's own health: a label over what they are like
_KIN = (
    r"family|kids|children|household|pets?|health|allergies|diet|partner|wife|husband|spouse|sons?|daughters?|"
    r"mum|mom|dad|parents|grandma|grandpa|baby|toddler|dogs?|cats?"
)
_KIN_ZH = (
    r"家里|家裡|家庭|孩子|饮食|飲食|过敏|過敏|老婆|老公|爱人|愛人|儿子|兒子|女儿|女兒|爸妈|爸媽|父母|宝宝|寶寶|"
    r"猫|貓|狗"
)
_SELF_HEAD = re.compile(
    r"\b(?:context|about me|background|bio|intro|introduction|who i am|my situation|me|myself|personal)\b|"
    r"背景|关于我|關於我|我的情况|我的情況|个人情况|個人情況|自我介绍|自我介紹",
    re.I,
)
_USER_HEAD = re.compile(
    rf"{_SELF_HEAD.pattern}|\b(?:{_KIN})\b|\b(?:languages?)\b|{_KIN_ZH}",
    re.I,
)
_PROJECT_HEAD = re.compile(
    r"\b(?:deadlines?|sla|slas|plan|plans|timeline|schedule|roadmap|milestones?|dates?|targets?|goals?|budget|"
    r"stack|tech stack|setup|scope|status|updates?|progress|key dates)\b|"
    r"计划|計劃|截止|排期|进度|進度|时间线|時間線|时间表|時間表|目标|目標|预算|預算|技术栈|技術棧|里程碑|裡程碑",
    re.I,
)
_REFERENCE_HEAD = re.compile(
    r"\b(?:links?|docs|documentation|urls?|where things live|where stuff lives|resources|contacts?|repos|"
    r"dashboards|bookmarks)\b|链接|鏈接|文档|文檔|地址|联系人|聯繫人|入口",
    re.I,
)
_WHOLE_HEAD = re.compile(
    r"\b(?:stack|tech stack|setup|status|update|scope|budget)\b|进度|進度|技术栈|技術棧|现状|現狀|预算|預算", re.I
)
_HEADS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("feedback", _FEEDBACK_HEAD),
    ("reference", _REFERENCE_HEAD),
    ("project", _PROJECT_HEAD),
    ("user", _USER_HEAD),
)
_USER_HEAD_FAMILY = re.compile(rf"\b(?:{_KIN})\b|{_KIN_ZH}", re.I)
_SUBJECT = re.compile(
    r"^(?:i|i'm|im|i've|we|we're|our|my|you|it|it's|they|he|she|this|that|there)\b|^(?:我|我们|我們|咱们|他|她|它)", re.I
)
# The head of "Rules for anything you write" is before its preposition; "about me" is whole.
_LABEL_TAIL = re.compile(r"(?<!\s)\s++(?:for|about|on|while|in|of|to|regarding|when|if|with)\b.*$", re.I)
_LABEL_EN = re.compile(
    r"^(?P<label>[A-Za-z][\w'&/ -]{0,48}?)(?:\s*(?::|：)|\s+[-–—]\s+(?=\S)|\s*—\s*(?=\S))(?:\s*(?P<rest>\S.*))?\s*$"
)
_LABEL_ZH = re.compile(r"^(?P<label>[^，,：:。！？!?\s][^，,：:。！？!?]{0,11})[：:]\s*(?P<rest>\S.*)?$")
_NOT_A_LABEL = re.compile(
    r"\b(?:is|are|was|were|am|i'm|it's|that's|there's|have|has|do|does|did)\b|'s\b|"
    r"^(?:i|you|we|he|she|they|it|this|that)\b|https?|[=<>()\[\]{}]",
    re.I,
)
# Lines heading labelled content but naming no kind ("lol:", "Q:", "edit:") say nothing here.
_ZH_NOT_A_LABEL = re.compile(r"[我你他她它]|说|說|是|在|吗|嗎|呢")


@dataclass(frozen=True)
class Label:
    """A line's label: its words, the type every item under it gets, and what follows it."""

    text: str
    type: str
    rest: str


# A label that can only head a self-description: "about me", "some facts about myself", "bio", "关于我".
_ABOUT_ME = re.compile(r"(?:^|\s)about (?:me|myself)\s*$|^(?:about me|bio|who i am|关于我|關於我|自我介绍|自我介紹)\b", re.I)


def label_type(label: str) -> str | None:
    """The record type a label announces ("house style" → feedback, "kids" → user), or None."""
    text = peel(label.strip()).core or label.strip()
    if _ABOUT_ME.search(text):
        return "user"  # "about me", "facts about me", "a bit about myself"
    head = _LABEL_TAIL.sub("", text) or text
    best: tuple[int, str] | None = None
    for kind, pattern in _HEADS:
        for m in pattern.finditer(head):
            # the last head noun wins: "release plan" is a plan, "plan rules" are rules
            if best is None or m.start() > best[0]:
                best = (m.start(), kind)
    return best[1] if best else None


def labelled(sentence: str) -> Label | None:
    """The label of a ``label: content`` line, when the label names a kind of fact."""
    s = sentence.strip()
    m = _LABEL_EN.match(s) if not has_cjk(s.split(":")[0].split("：")[0]) else _LABEL_ZH.match(s)
    if not m:
        return None
    label = m.group("label").strip()
    if has_cjk(label):
        if _ZH_NOT_A_LABEL.search(re.sub(r"^(?:关于我|關於我|我的情况|我的情況)", "", label)):
            return None
    elif len(label.split()) > 8 or _NOT_A_LABEL.search(label):
        return None
    kind = label_type(label)
    if kind is None or (kind == "feedback" and re.search(r"\bof\s+(?:the|a|this|that|his|her|their)\b", label, re.I)):
        return None  # "rules of the game:" belong to the game, not to the work
    return Label(label, kind, (m.group("rest") or "").strip())


_ANNOUNCE = re.compile(
    r"^(?:(?:ok(?:ay)?|so|alright|right|first|also|and)[ ,]+)*(?:a few|some|a couple of|couple of|the following|my|our|"
    r"two|three|four|five)\b|几条|幾條|几点|幾點|几个|幾個|以下|如下|下面|一些",
    re.I,
)


# "…, note them down:", "…你先记下：": the request to keep what follows is no part of the label
_NOTE_THEM = re.compile(
    r"(?:[,，]?(?:(?<!\s)\s++)?(?:please\s++)?(?:note|write|jot|take)\s+(?:these|them|this)\s+down|[,，]?(?:(?<!\s)\s++)?(?:please\s++)?(?:remember|keep in mind|"
    r"memori[sz]e)\s+(?:these|them|this)|[，,]?(?:(?<!\s)\s++)?(?:你|您)?(?:先|都|要)?(?:记下|記下|记住|記住|记一下|記一下|记好|記好)(?:来|來|了)?)"
    r"\s*+(?P<end>[:：.。!！]?)\s*+$",
    re.I,
)


def announced(sentence: str) -> Label | None:
    """A sentence that only announces rules, without a colon ("a few rules for the emails.",
    "先说明几条要求。"): a short phrase whose head is a rules noun, with a quantity or "the following"."""
    text = sentence.strip().rstrip(" .。!！:：")
    short = sum(map(has_cjk, text)) <= 12 if has_cjk(text) else len(text.split()) <= 7
    if not short or not _ANNOUNCE.search(text) or is_temporary(text) or text.endswith(("?", "？")):
        return None
    if label_type(text) != "feedback" or re.search(r"\b(?:you|your|i|we)\b|你|您|吗|嗎", text, re.I):
        return None
    head = _FEEDBACK_HEAD.findall(text)
    return Label(head[-1] if head else text, "feedback", "")


_ASKED_RULES = re.compile(
    r"\b(?:rules?|conventions?|style guide|house style|code style|guidelines?|standards?)\b|规矩|規矩|规范|規範|约定|約定",
    re.I,
)


def question_kind(question: str) -> str | None:
    """The kind of fact an assistant's question asks for: only a question about the rules or
    conventions of the work ("Any conventions I should follow?") heads the answer; its list
    items are rules. (A question about preferences, plans or the person is answered with a
    choice for the task at hand too often; :func:`dreamd.models.offline.extract.statement.answer_to`
    handles those.)"""
    return "feedback" if _ASKED_RULES.search(question) else None


# ----------------------------------------------------------------------------- items

_PARENS = re.compile(r"\([^()]*\)|（[^（）]*）|`[^`]*`|\"[^\"]*\"|“[^”]*”|「[^」]*」")
_ITEM_SPLIT = re.compile(
    r"(?:(?<!\s)\s++)?[;；]\s*|(?<![一二三四五六七八九十])(?:(?<!\s)\s++|(?<=[一二三四五六七八九十]\s)\s*+)?、\s*|(?:(?<!\s)\s++)?,\s+|(?:(?<!\s)\s++)?，\s*|(?<!\s)\s++(?=\d{1,2}[.)）]\s)|(?:(?<!\s)\s++)?(?=[①②③④⑤⑥⑦⑧⑨])"
)
_NUMBERING = re.compile(r"^(?:\d{1,2}[.)）]|[①②③④⑤⑥⑦⑧⑨]|[一二三四五六七八九十]{1,2}、|[（(](?:\d{1,2}|[一二三四五六七八九十]{1,2})[)）])\s*")
_JOINS_BEFORE = re.compile(rf"^(?:so|which|but|{lex.REASON_EN}|{lex.OTHERWISE_EN_OPENING}|as|and so|hence|i\.e\.|e\.g\.)\b|"
                           rf"^(?:所以|{lex.REASON_ZH}|{lex.OTHERWISE_ZH}|但是|不过|不過|比如|例如)", re.I)
# "日志用 structlog，不要用 print", "tabs, not spaces": one rule said both ways
_OTHER_WAY = re.compile(rf"^(?:not|{lex.INSTEAD_EN})\b|^(?:而不是|不要|不用|别|別|不是)", re.I)
_PRONOUN_ONLY = re.compile(r"^(?:\w+\s+)?(?:it|them|that|this|those)\b", re.I)
_REASON_TAIL = re.compile(
    r"^(?:[\w-]+\s+){0,2}(?:residency|sovereignty|compliance|reasons?|legal|security|privacy|gdpr|hipaa|soc ?2|audit|"
    r"regulations?|regulatory|policy|budget|cost|costs|latency|performance|licen[cs]ing)$|"
    r"(?:合规|合規|安全|隐私|隱私|法务|法務|审计|審計|成本|预算|預算)(?:原因|要求|问题|問題)?$",
    re.I,
)
_BLOCKING = frozenset({
    "secret", "reported", "encouragement", "feeling", "interjection", "wish", "hedge", "hypothetical",
    "quoted", "malfunction", "momentary", "exclamation", "question", "evaluation", "unresolved pronoun",
})
_ZH_PRONOUN_ITEM = re.compile(r"^(?:这个|這個|那个|那個|它|这些|這些)")


def _masked_split(text: str) -> list[str]:
    """Split at commas and semicolons that are not inside parentheses, backticks or quotes."""
    spans = [(m.start(), m.end()) for m in _PARENS.finditer(text)]
    out: list[str] = []
    start = 0
    for m in _ITEM_SPLIT.finditer(text):
        if any(a < m.start() < b for a, b in spans):
            continue
        out.append(text[start : m.start()])
        start = m.end()
    out.append(text[start:])
    parts = [_NUMBERING.sub("", p.strip()).strip(" .。") for p in out]
    return [p for p in parts if p]


def _size(text: str) -> int:
    return sum(map(has_cjk, text)) + len(re.findall(r"[A-Za-z0-9]+", text)) if has_cjk(text) else len(text.split())


def items(rest: str) -> list[str]:
    """The items of a list ("CTEs over subqueries, one CTE per step, lowercase keywords"): a part
    too short to be a fact of its own ("ES<>EN"), a consequence ("so …") or a pronoun directive
    ("flag it") belongs to the item before it."""
    out: list[str] = []
    for part in _masked_split(rest):
        small = _size(part) < (3 if has_cjk(part) else 2)
        tied = _JOINS_BEFORE.match(part) or (_PRONOUN_ONLY.match(part) and opens_with_verb(part)) or (
            out and _OTHER_WAY.match(part) and not _OTHER_WAY.match(out[-1]))
        if out and (small or tied):
            joiner = "，" if has_cjk(part) else ", "
            out[-1] = f"{out[-1]}{joiner}{part}"
        else:
            out.append(part)
    return out


def _found(kind: str, item: str, label: str | None, ctx: Ctx, reason: str | None) -> Found:
    zh = has_cjk(item)
    shown = third_person(item)
    if label:  # "" for an answer to a question: the question is kept in the body instead
        head = label if zh else sentence_case(label)
        shown = f"{head}：{shown}" if zh else f"{head}: {shown}"
    elif not zh:
        shown = sentence_case(shown)
    if kind == "feedback" and re.match(r"^(?:(?:no|never|don't)\b|不要|别|別|禁止)", item, re.I):
        how = HOW["feedback-neg"]
    elif kind == "project" and future_dates(item, ctx.day):
        how = HOW["deadline"]
    else:
        how = TYPE_HOW.get(kind, REMEMBER_HOW)
    return Found("labelled" if label else "telegraphic", kind, TYPE_PREFIX[kind], item, shown, shown,
                 reason=reason, how=how)


_NOW = re.compile(
    r"\b(?:finally|at last|right now|just now|again|today|today's|tonight|this morning|yesterday|"
    # a rule with an end is not standing: "staging only until Friday", "no deploys this week"
    r"until|till|til|this week|this sprint|for the next|for a while|for a bit)\b|"
    r"终于|終於|刚刚|剛剛|今天|今晚|这周|這週|本周|本週|之前先",
    re.I,
)
_DELEGATION = re.compile(r"^(?:you|u)\s+\w+$|^(?:up to you|your call|whatever)\b|^(?:你|您)(?:定|决定|決定|看着办|看著辦)", re.I)


def _reply(text: str) -> bool:
    """A reply word and at most one more ("none really", "whatever works"), not a rule that
    opens with "no" ("no weekend deploys")."""
    m = _GREETING.match(text)
    if m is None:
        return False
    if re.match(r"^no\s", text, re.I):
        return _IDIOM.match(text[3:].strip()) is not None
    return len(text[m.end():].split()) <= 1


_DID = re.compile(r"^(?:just\s+)?(?:[a-z]{3,}ed|got|did|made|broke|ran|wrote|took|found|sent|built|went|came)\b", re.I)


def _item_ok(item: str, kind: str, day: dt.date) -> bool:
    found = distractor(item)
    if found == "reported" and kind == "project" and future_dates(item, day):
        found = None  # "reno update: the builder says the benchtop goes in on the 16th": a dated plan, relayed
    if found in _BLOCKING or is_temporary(item) or item.rstrip().endswith(("?", "？")):
        return False
    if kind == "project" and not has_cjk(item) and (found in ("past event", "one event") or _DID.match(item)):
        return False  # "update: fixed the flaky test": what happened, not where things stand
    if _reply(item) or _DELEGATION.match(item) or _NOW.search(item):
        return False  # "whatever works, you decide", "kids: both asleep finally": not lasting facts
    if _ZH_PRONOUN_ITEM.match(item):
        return False
    if kind == "user" and (opens_with_verb(item) or re.match(r"^(?:please|pls|don't|do not|请|請|别|別|不要)", item, re.I)):
        return False  # "keep it short" under "context:" is an instruction, not who the user is
    return len(tokens(item)) >= 1 and (not has_cjk(item) or _size(item) >= 3)  # "要求：尽快" is an ask


_OTHERWISE = re.compile(rf"^(?:{lex.OTHERWISE_EN_OPENING})\b|\b(?:{lex.OTHERWISE_EN})[.!]?$|^(?:{lex.OTHERWISE_ZH})", re.I)
_ZH_STATEMENT = re.compile(
    rf"^(?:{lex.REASON_ZH}|组里|組裡|团队|團隊|公司|同事|客户|客戶|老板|老闆|我们|我們|他们|他們|大家|我|他|她)"
)
_ZH_RULE_WORD = re.compile(r"请|請|要|别|別|必须|必須|一律|统一|統一|禁止|不准|只用|优先|優先|务必|務必")


def label_items(label: Label, rest: str, ctx: Ctx) -> list[Found]:
    """One record per item of a labelled list, typed by the label (module docstring)."""
    if not rest or is_temporary(label.text) or _NOW.search(label.text):
        return []  # "house style for now: …", "today's rules: …" are for the task at hand
    # the parts of a stack or a status line describe one thing: one record ("stack: Django, Celery, Postgres")
    parts = items(rest)
    if label.type == "project" and _WHOLE_HEAD.search(label.text) and parts:
        if not _item_ok(parts[0], label.type, ctx.day):
            return []
        return [_found(label.type, tidy(rest), label.text, ctx, None)]
    if (label.type == "user" and _SELF_HEAD.search(label.text) and not _USER_HEAD_FAMILY.search(label.text)
            and (not parts or _SUBJECT.match(parts[0]) or not (_ABOUT_ME.search(label.text) or verbless_intro(parts[0], ctx)))):
        # "context:" heads anything — who the user is, or the work ("context: monorepo, pnpm"): the
        # list is a self-description only when its first item is one ("sworn translator here");
        # a list that has its own subjects ("context: I'm …, we run …") is the other rules' business
        return []
    reason: str | None = None
    if len(parts) >= 2 and label.type == "feedback" and _REASON_TAIL.search(parts[-1]):
        reason = parts.pop()  # "eu-only, no US regions, data residency": the last item is why
    if any(_NOW.search(p) for p in parts):
        return []  # "kids: both asleep finally, house is quiet": the list tells a moment, not how things are
    nxt = ctx.next_sentence or ""
    if reason is None and label.type == "feedback" and _OTHERWISE.search(nxt):
        reason = tidy(nxt)  # "Rules: A, B, no C. The linter fails the build otherwise."
    out: list[Found] = []
    for part in parts:
        if out and label.type == "feedback" and _ZH_STATEMENT.match(part) and not _ZH_RULE_WORD.search(part):
            out[-1].reason = out[-1].reason if out[-1].reason and out[-1].reason != reason else part
            continue  # "注释用中文写，组里有几位同事英文不太好": the statement is the rule's reason
        item, why = clause_reason(part) if label.type == "feedback" else (part, None)
        if not _item_ok(item, label.type, ctx.day):
            continue
        if label.type == "project" and not re.search(r"\d", absolutize_dates(item, ctx.day)):
            continue  # "dinner plan: tacos": a plan worth keeping has a date or a figure
        out.append(_found(label.type, item, label.text, ctx, why or reason))
    return out


class Labels:
    """A label standing alone ("Rules for anything you write:") heads the user's lines after it,
    in its turn and, when it closes the turn, the next user turn, until the assistant speaks."""

    def __init__(self) -> None:
        self.current: Label | None = None
        self.carry = False
        self.topic: str | None = None
        self.before: str | None = None
        self.last: str | None = None
        self.asked = False
        self.pending_answer = False
        self.previous: str | None = None
        self.sentence: str | None = None

    def assistant_spoke(self, question: str | None = None) -> None:
        """The assistant's turn ends what a label headed; a question about the rules of the work
        ("Any conventions I should follow?", "有什么规范要遵守吗？") heads the user's answer instead."""
        self.current, self.carry = None, False  # the sentences around are reset by user_turn
        kind = question_kind(question) if question else None
        if kind is not None and question is not None:
            self.current = Label(tidy(question), kind, "")
            self.asked = self.pending_answer = True
        else:
            self.asked = self.pending_answer = False

    def user_turn(self) -> None:
        if self.pending_answer:
            self.pending_answer = False  # the first user turn after the question answers it
        elif not self.carry:
            # a label inside a turn heads that turn; one closing it, the turns after
            self.current, self.asked = None, False
        self.topic = self.before = self.last = self.previous = self.sentence = None

    def said(self, said: str, core: str) -> str:
        """The user's words for a record of this sentence, after the topic the sentence before
        named ("invoices. I send them on the 1st" — the second sentence is about invoices)."""
        out = f"{self.topic}. {said}" if self.topic and not has_cjk(said) else said
        self.topic = tidy(core) if is_topic(core) else None
        self.before, self.last = self.last, tidy(core)
        return out

    def telegraphic(self, core: str, ctx: Ctx, asked: str | None) -> list[Found]:
        """:func:`telegraphic`, with the sentences around a bare constraint kept as its words: a
        rule said in a few words leans on them ("they come from @acme/tokens. no raw hex anywhere")."""
        found = telegraphic(core, ctx, asked)
        if any(f.type == "feedback" for f in found) and self._scoped(ctx):
            return []  # "just for this run. py3.9 only.": the sentence beside it scopes the rule to now
        for f in found:
            if f.kind == "telegraphic" and f.type == "feedback" and len(core.split()) <= 8:
                around = [x for x in (self.before, tidy(core), tidy(ctx.next_sentence or "")) if x]
                f.said = ". ".join(around) if len(around) > 1 else None
        return found

    def _scoped(self, ctx: Ctx) -> bool:
        return any(x and (is_temporary(x) or _NOW.search(x)) for x in (self.previous, ctx.next_sentence))

    def header(self, sentence: str, last: bool) -> bool:
        """Whether ``sentence`` is a bare label ("Rules for anything you write:", "先说明几条要求。");
        it then heads what follows."""
        self.previous, self.sentence = self.sentence, sentence  # every user sentence passes here, in order
        bare = _NOTE_THEM.sub(r"\g<end>", sentence.strip())  # "几条规矩你先记下：" heads a list like "几条规矩："
        found = labelled(bare) or announced(bare)
        if found is None or found.rest:
            return False
        self.current, self.carry = found, last
        return True

    def records(self, sentence: str, core: str, ctx: Ctx, *, single: bool = False) -> list[Found]:
        """The records of a labelled line, or of a line under a bare label; [] otherwise.

        A list, or anything under a rules label, is read here first (``single=False``); one item
        under another label ("API docs: <url>") is the other rules' first, and read here only
        when they found nothing (``single=True``)."""
        label = labelled(sentence)
        rest = core
        if label is not None:
            # the words after the colon as typed: peeling them again could eat a name ("Next.js")
            rest = label.rest if core.strip() in sentence else re.sub(r"^[^:：]*[:：]\s*", "", core)
        if label is None and self.asked and self.current is not None:
            # an answer to "Any conventions I should follow?": its items, each a fact of that kind,
            # with the question kept; not a reply word ("nope, that's it")
            if single or _reply(tidy(core)) or len(items(core)) < 2:
                return []
            found = label_items(Label("", self.current.type, ""), core, ctx)
            for f in found:
                f.extra_lines.append(("问：" if has_cjk(self.current.text) else "Asked: ") + self.current.text)
            return found
        label = label or self.current
        if label is None or (not single and label.type != "feedback" and len(items(rest)) < 2):
            return []
        if label.type == "feedback" and self._scoped(ctx):
            return []  # "today's session only. rules: …": scoped to now by the sentence beside it
        return label_items(label, rest, ctx)


_TOPIC_WORDS = re.compile(r"^[A-Za-z][\w'&/.+#-]*(?:\s+[\w'&/.+#-]+){0,3}$")
_GREETING = re.compile(
    r"^(?:good\s+)?(?:morning|evening|afternoon|night|hi|hey|hello|hiya|yo|ok|okay|thanks|thank you|cheers|cool|great|"
    r"nice|perfect|awesome|sure|right|yes|yeah|yep|no|nope|sorry|hmm+|lol|haha+|done|got it|fair|true|same|"
    r"wow|oops|ugh|welp|anyway|exactly|agreed|sounds good|makes sense|all good|never mind|nvm|not really|not yet|"
    r"not sure|none|nothing|nah|maybe|idk|dunno|n/a|that's it|that's all|whatever|either|both|neither)\b|"
    r"^(?:不用|没有|沒有|暂时没有|暫時沒有|没了|沒了|就这些|就這些|都行|随便|隨便|不知道|还没|還沒|好的|嗯)",
    re.I,
)


def is_topic(core: str) -> bool:
    """A sentence that only names what the next one is about ("invoices.", "wedding admin time.",
    "tf question."): a short noun phrase with no verb, not a greeting or a reply word."""
    text = tidy(core)
    if not _TOPIC_WORDS.match(text) or _GREETING.match(text) or opens_with_verb(text):
        return False
    return distractor(text) == "fragment" and len(tokens(text)) >= 1


# ----------------------------------------------------------------------------- verbless intros

_ROLE_HERE = re.compile(r"^(?:(?:a|an)\s+)?(?P<role>[\w+#/.'-]+(?:\s+[\w+#/.'-]+){0,3}?)\s+here\b(?P<rest>.*)$", re.I)
_ROLE_PAREN = re.compile(r"(?<![\w)])(?<![^\w)]\s)\s*\((?:i'm\s+|i am\s+)?(?:(?:a|an)\s+)?(?P<role>[A-Za-z][\w+#/.'-]*(?:,?\s+[\w+#/.'-]+){0,3})\)")
_ROLE_YEARS = re.compile(
    r"^(?:(?:a|an)\s+)?(?P<role>[\w+#/.'-]+(?:\s+[\w+#/.'-]+){0,3}?),?\s+(?P<n>\d+|one|two|three|four|five|six|seven|"
    r"eight|nine|ten|a few|several|many)\s+(?:years?|yrs?|months?)\s+(?:in|now|deep|of experience|experience)\b(?P<rest>.*)$",
    re.I,
)
_EN_GERUND = re.compile(
    r"^(?:currently\s+|still\s+|also\s+|mostly\s+)?(?:training for|working (?:at|for|in|as)|studying|doing (?:a|an|my)|"
    r"learning|teaching|building|running (?:a|an|my)|living in|based in|located in|originally from|from [A-Z]|"
    r"retired|semi-retired|self-employed|freelancing|new to)\b",
)
_SOMEONE_ELSE = re.compile(r"\b(?:my|our|his|her|their)\s+[\w-]+\s*$|\b(?-i:[A-Z][a-z]+)\s*$", re.I)
_ZH_SELF_INTRO = re.compile(
    r"^(?:(?:目前|平时|平時|白天|业余|業餘|主要|一直|本职|本職)(?:在|做|是|从事|從事|负责|負責|维护|維護|玩|学|學)?|"
    r"在[^，,。]{1,14}(?:做|当|當|上班|工作|读|讀|念)|做[^，,。]{1,8}的|从事|從事|负责|負責|业余|業餘)"
)
_MOOD = frozenset({"feeling", "exclamation", "encouragement", "interjection"})
_ZH_REQUEST_WORD = re.compile(r"帮|幫|请|請|麻烦|麻煩|一下|吗|嗎|呢|吧$|能不能|可以|你|您")


def _as_self(sentence: str, ctx: Ctx, said: str, kinds: frozenset[str] = frozenset({"user"})) -> list[Found]:
    """What the rules make of the sentence with its subject put back, when it is about the user."""
    found = [f for f in found_in(sentence, ctx, accepted=None, remember=False, all_rules=True) if f.type in kinds]
    return [replace(f, said=said) for f in found]


def verbless_intro(core: str, ctx: Ctx) -> list[Found]:
    """Who the user is, said without "I am" ("data engineer here, at a bank", "(ICU nurse)",
    "backend dev, 6 years in", "training for a marathon", "做后端的", "在杭州做会计"): the subject is
    put back and the rules decide, so what counts as a role or a stable state stays defined in
    :mod:`dreamd.models.offline.extract.identity`."""
    text = tidy(core)
    if mostly_chinese(text):
        first = re.split(r"[，,；;。]", text, maxsplit=1)[0]  # "业余在玩攀岩，想这几天练练": the intro is the first clause
        if not _ZH_SELF_INTRO.match(text) or _ZH_REQUEST_WORD.search(first) or distractor(first) in _BLOCKING:
            return []
        if any(distractor(p) in _MOOD for p in re.split(r"[，,；;。]", text)):
            return []  # "一直在加班，好累": a mood, not who they are
        return _as_self("我" + text, ctx, text)
    for pattern in (_ROLE_HERE, _ROLE_YEARS):
        m = pattern.match(text)
        # "Use a bigger timeout here" is an instruction; a role is a noun phrase without articles inside
        if (m and not opens_with_verb(text) and not re.search(r"\s(?:a|an|the|this|that|my|your)\s", f" {m.group('role')} ", re.I)
                and not re.match(r"^(?:i|we|you|it|this|that|they|he|she|the|my|our)\b", m.group("role"), re.I)):
            rest = m.group("rest").strip().lstrip(", ")
            # "… here, at a bank in Leeds" says where; "… here, sorry if dumb question" says nothing more
            rest = rest if re.match(r"(?:at|in|for|with|from|on|working|based|doing|mostly)\b", rest, re.I) else ""
            found = _as_self(f"I'm a {m.group('role')}" + (f", {rest}" if rest else ""), ctx, text)
            if found:
                return found[:1]
    m = _ROLE_PAREN.search(text)
    if m and not _SOMEONE_ELSE.search(text[: m.start()]) and not re.match(r"^\d", m.group("role")):
        role = re.split(r"(?:(?<!\s)\s+)?,\s*", m.group("role"))[0]
        found = _as_self(f"I'm a {role}", ctx, text)
        if found:
            return found[:1]
    if _EN_GERUND.match(text) and distractor(text) not in _BLOCKING:
        return _as_self("I'm " + text, ctx, text, frozenset({"user", "project"}))[:2]
    return []


# ----------------------------------------------------------------------------- bare constraints

_ONLY = re.compile(r"^(?P<x>[^,;，；]{1,40}?)\s+only(?:\s*(?:[,;—–]|\s-)\s*(?P<why>.+?))?[.!]?$", re.I)
_OVER = re.compile(
    r"^(?P<x>(?!(?:the|a|an|this|that|it|i|we|you|game|all)\b)[\w`'./+#-]+(?:\s+[\w`'./+#-]+){0,3}?)\s+over\s+"
    r"(?P<y>(?!(?:the|a|an|this|that|there|here|it|my|our|his|her|time|night|again)\b)[\w`'./+#-]+(?:\s+[\w`'./+#-]+){0,3}?)"
    r"(?:\s*[,;]\s*(?P<why>.+?))?[.!]?$",
    re.I,
)
_CONCRETE_TOKEN = re.compile(r"[A-Z`\d./_-]|[a-z]s$")
_OR_NOTHING = re.compile(r"^(?P<x>[^,;]{1,40}?)\s+or nothing(?:\s*[,;]\s*(?P<why>.+?))?[.!]?$", re.I)
_NO_THING = re.compile(
    r"^no\s+(?P<x>`?[\w`'./+#-]+(?:\s+[\w`'./+#-]+){0,5}?)(?P<scope>\s+(?:anywhere|ever|at all|whatsoever|"
    r"in (?:any|the|our|this|prod|production|[\w-]+ (?:code|files?|repo|tests?))\b[^,;]*|on (?:any|main|prod)\b[^,;]*|"
    r"from you\b[^,;]*|without [^,;]+|unless [^,;]+|"
    # a time that comes round again: "the morning after a night shift", "on weekends", "after 9pm"
    r"(?:the\s+\w+\s+)?(?:after|before|during|on)\s+(?:a|an|any|every|each)\s+[^,;]+|on\s+\w+(?:days|ends)\b[^,;]*|"
    r"(?:after|before)\s+\d[^,;]*))?(?:\s*[,;.]\s*(?P<why>.+?))?[.!]?$",
    re.I,
)


_IDIOM = re.compile(
    r"^(?:problem|problems|prob|probs|worries|worry|idea|thanks|thank you|way|need|rush|pressure|clue|luck|doubt|"
    r"offense|offence|big deal|matter|one|longer|more|biggie|kidding|joke|sweat|harm|chance|comment|comments)\b",
    re.I,
)


def _why_ok(why: str) -> bool:
    """A reason, not a second instruction ("…, just do it", "…, no CSS modules"), a pleasantry or an
    adverb ("…, still")."""
    if opens_with_verb(why) or re.match(r"^(?:just|please|pls|ok|okay|thanks|sorry|lol|haha|no|not|never|always|only)\b",
                                        why, re.I) or re.search(r"\b(?:instead|rather)\b", why, re.I):
        return False  # "no classes, functions instead": the alternative, part of the rule
    if has_cjk(why):
        return _size(why) >= 3
    return len(why.split()) >= 2 or _REASON_TAIL.search(why) is not None


def _bare(x: str, why: str | None, core: str, ctx: Ctx) -> Found | None:
    if not x.strip() or is_temporary(core) or _NOW.search(core) or distractor(x) in _BLOCKING:
        return None
    if is_wellbeing(core) or is_life_advice(core):
        return None  # "no screens after ten, sleep matters": advice about living, not a rule for the work
    reason = tidy(why) if why and len(tokens(why)) >= 1 and _why_ok(why) else None
    fact = core if reason is None else core[: core.find(why)].rstrip(" ,;—–-，；") if why and why in core else core
    return _found("feedback", tidy(fact), None, ctx, reason)


_FLOOR = re.compile(
    r"^(?:the\s+|our\s+)?(?P<x>[\w./+#-]+(?:\s+[\w./+#-]+){0,3}?)\s+(?:floor|ceiling|minimum|maximum|cap|limit|"
    r"baseline)\s+(?:is|=|stays at)\s+(?P<v>[^\s,;]*\d[^\s,;]*)(?P<tail>.*)$",
    re.I,
)
_STICK = re.compile(r"(?:^|[,;]\s*|\bso\s+)(?:let's|lets|let us|we'll|we will|we)\s+(?:stick|keep)\s+(?:to|with)\s+(?P<x>[^,;.]+)",
                    re.I)


_ZH_NOT_WITH_REASON = re.compile(
    r"^(?:不要|别|別|不准|不許|不许|禁止)(?:再)?(?P<x>[^，,。；;]{2,20})[，,；;]\s*(?P<why>[^，,。；;]{3,})$"
)
_NOT_Y = re.compile(
    r"^(?P<x>(?!(?:i|we|you|it|this|that|they|he|she|there|just|not|no|yes|yeah|ok)\b)[\w`'./+#-]+(?:\s+[\w`'./+#-]+){0,3}?)"
    r"\s*,\s*(?:not|never)\s+(?P<y>[\w`'./+#-]+(?:\s+[\w`'./+#-]+){0,3})$",
    re.I,
)
# "Friday, not Thursday", "me, not him", "15, not 14": a correction of a value, not a rule
_WHEN_OR_WHO = re.compile(
    r"\b(?:me|him|her|them|us|you|today|tomorrow|yesterday|tonight|morning|afternoon|evening|monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday|jan\w*|feb\w*|march|april|may|june|july|aug\w*|sep\w*|oct\w*|nov\w*|dec\w*)\b|"
    r"^\S*\d|,\s*(?:not|never)\s+\S*\d",
    re.I,
)
_NP_ALWAYS = re.compile(
    r"^(?P<x>(?!(?:i|we|you|it|this|that|they|he|she|there|just|not)\b)[\w`'./+#-]+(?:\s+[\w`'./+#-]+){0,3}?)"
    r"(?:\s*,\s*|\s+)(?:always|everywhere|throughout|across the board|by default|at all times|no exceptions|"
    r"where(?:ver)? possible|whenever possible|"
    # "UTC for all timestamps", "pytest in every package"
    r"(?:for|in|on|across)\s+(?:all|every|everything|any|each)\b[^,;]{0,40})[.!]?$",
    re.I,
)


_DASH_REASON = re.compile(r"^(?P<rule>[^—–;]{3,80}?)(?<![^—–;]{3}\s)\s*(?:\s[—–-]+\s|;\s)\s*(?P<why>[^—–;]{6,})$")


def bare_constraint(core: str, ctx: Ctx) -> Found | None:
    """A rule with no verb ("eu-west-1 only, data residency", "composition over inheritance",
    "no inline styles anywhere", "Rust or nothing", "别用 lodash，包太大")."""
    text = tidy(core).rstrip(" .。!！")
    if not text or text.endswith(("?", "？")):
        return None
    said = _DASH_REASON.match(text)
    if said and not mostly_chinese(text):
        # "yarn classic here, not npm — lockfile mixups broke CI twice": the rule, then why
        found = bare_constraint(said.group("rule"), ctx)
        if found is not None and found.reason is None and distractor(said.group("why")) not in _BLOCKING:
            found.reason = tidy(said.group("why"))
        return found
    m = _ZH_NOT_WITH_REASON.match(text)
    if (m and not _ZH_PRONOUN_ITEM.match(m.group("x")) and not re.search(r"你|您", m.group("why"))
            and distractor(m.group("why")) not in _BLOCKING and distractor(text) not in _BLOCKING
            and not is_wellbeing(text) and not is_life_advice(text)):
        # "别用 lodash，包太大": a prohibition given with its reason is standing
        return _bare(m.group("x"), m.group("why"), text, ctx)
    if mostly_chinese(text):
        return None
    m = _NOT_Y.match(text)
    if (m and not opens_with_verb(text) and not _reply(m.group("x")) and not _WHEN_OR_WHO.search(text)
            and distractor(m.group("x")) in (None, "fragment")):
        return _bare(m.group("x"), None, text, ctx)  # "pnpm, not npm": one thing of the work over another
    m = _NP_ALWAYS.match(text)
    if m and not opens_with_verb(text) and not _reply(m.group("x")) and distractor(m.group("x")) in (None, "fragment"):
        return _bare(m.group("x"), None, text, ctx)  # "UTC everywhere", "metric units, always"
    m = _FLOOR.match(text)
    if m:  # "go version floor is 1.21 so nothing newer": a limit the work must keep to
        tail = m.group("tail").strip(" ,;")
        why = tail if re.match(rf"^(?:{lex.REASON_EN}|as)\b", tail, re.I) else None
        return _bare(m.group("x"), why, text, ctx)
    m = _STICK.search(text)
    if m and not re.search(r"\b(?:for now|this time|today|here)\b", m.group("x"), re.I):
        before = text[: m.start()].strip(" ,;")  # "my mentor said X not Y, so let's stick to X": the reason
        fact = sentence_case(f"stick to {m.group('x').strip()}")
        return _found("feedback", fact, None, ctx, tidy(before) if before else None)
    if re.match(r"^(?:i|we|you|it|this|that|they|he|she|there|here|just|not|the only|only)\b", text, re.I):
        return None  # a clause with a subject is the other rules' business; "just one only" is not a rule
    for pattern in (_ONLY, _OR_NOTHING):
        m = pattern.match(text)
        # "one question only" is about this exchange; "2 spaces only" is a rule
        if m and len(m.group("x").split()) <= 4 and not re.match(r"(?:one|a|an|the|just|single)\b", m.group("x"), re.I):
            return _bare(m.group("x"), m.group("why"), text, ctx)
    m = _OVER.match(text)
    if m and (ctx.standing or m.group("why") or any(_CONCRETE_TOKEN.search(m.group(g)) for g in ("x", "y"))):
        # "tabs over spaces", "CTEs over subqueries"; a saying ("mind over matter") names no thing of the work
        return _bare(m.group("x"), m.group("why"), text, ctx)
    m = _NO_THING.match(text)
    if m and _IDIOM.match(m.group("x")):
        return None  # "no worries", "no idea, sorry": an idiom, not a constraint
    if m and (m.group("scope") or (m.group("why") and _why_ok(m.group("why"))) or ctx.standing):
        return _bare(m.group("x"), m.group("why"), text, ctx)
    return None


_PLAN = re.compile(r"^(?:the\s+|our\s+|my\s+)?plan(?:\s+is|'s)\s+(?:to\s+)?(?P<x>.{6,})$", re.I)


def plan(core: str, ctx: Ctx) -> Found | None:
    """"plan is to tag v3 once this lands, by the 20th": what the work is heading for."""
    m = _PLAN.match(tidy(core))
    if not m or distractor(m.group("x")) in _BLOCKING or is_temporary(core):
        return None
    fact = f"Plan: {m.group('x')}"
    return _found("project", fact, None, ctx, None)


_NAMED_MINE = re.compile(
    r"^(?P<name>(?-i:[A-Z])[\w'&.-]*(?:\s+(?:&\s+)?(?-i:[A-Z])[\w'&.-]*){0,3}),\s+"
    r"(?P<what>(?:my|our)\s+[a-z][\w-]*(?:\s+[a-z][\w-]*)?)(?P<rest>\s+(?:on|in|at|near|by)\s+[^,;]{2,40})?$"
)


def telegraphic(core: str, ctx: Ctx, asked: str | None = None) -> list[Found]:
    """A verbless intro, a bare constraint or a plan the other rules left alone (module
    docstring). A reply to the assistant's question (``asked``) keeps the question in the body,
    since a telegraphic answer leaves its subject there ("Do you need WCAG?" → "yes, AA minimum
    on everything")."""
    intro = verbless_intro(core, ctx)
    if intro:
        return intro
    named = _NAMED_MINE.match(tidy(core).rstrip(" .。!！"))
    if named:
        # "Thistle & Stem, my flower shop on Leith Walk": a name and what it is to the speaker
        stated = rule_statement(f"{named['what']} is {named['name']}{named['rest'] or ''}", ctx)
        if stated is not None:
            return [stated]
    found = bare_constraint(core, ctx) or plan(core, ctx)
    if found is None or (asked and _NOT_Y.match(tidy(core).rstrip(" .。!！"))):
        return []  # "Which one?" / "pnpm, not npm": a choice for the task at hand
    if asked:
        found.extra_lines.append(("问：" if has_cjk(asked) else "Asked: ") + tidy(asked))
    return [found]


__all__ = [
    "Label", "Labels", "announced", "bare_constraint", "is_topic", "items", "label_items",
    "label_type", "labelled", "plan", "telegraphic", "verbless_intro"
]
