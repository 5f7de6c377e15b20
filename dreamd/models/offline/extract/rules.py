"""The extractor's rules about the person and how they want the work done.

Each rule looks at the *core* of one sentence (lead-ins already peeled, see
:mod:`dreamd.models.offline.extract.structure`) with its context in a
:class:`~dreamd.models.offline.extract.types.Ctx` and returns a
:class:`~dreamd.models.offline.extract.types.Found` or None:

- :func:`rule_feedback` — a directive about the work or the assistant's behaviour that is
  *standing* (a standing marker or a stated reason); encouragement and wellbeing advice never
  are, whatever their form;

Who the user is lives in :mod:`dreamd.models.offline.extract.identity`; facts about the work itself
(decisions, dates, pointers) in :mod:`dreamd.models.offline.extract.facts`.
"""

from __future__ import annotations

import re

from dreamd.models.offline import markers as lex
from dreamd.models.offline.extract.audience import (
    about_the_work,
    is_everyday,
    is_life_advice,
    is_wellbeing,
    names_the_work,
)
from dreamd.models.offline.extract.structure import (
    NEGATION_EN,
    NOW_OR_THIS_ZH,
    ONE_OFF_EDIT,
    PAST_STATEMENT,
    SPATIAL,
    clause_reason,
    imperative,
    is_hypothetical,
    is_standing,
    opens_with_verb,
)
from dreamd.models.offline.extract.types import Ctx, Found
from dreamd.models.offline.text import (
    PRONOUN_OBJECT,
    REASON_NEXT_START,
    RECURRING,
    content_ok,
    future_dates,
    has_cjk,
    has_relative_date,
    sentence_case,
    split_reason,
    third_person,
    tidy,
)

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
REMEMBER_HOW = "keep this in mind in future work on this project."
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
HOW_KEY = {**{v: k for k, v in HOW.items()}, REMEMBER_HOW: "remember"}

# ----------------------------------------------------------------------------- feedback

_SUBJECT_START = re.compile(
    r"^(?:i|i'm|i've|i'd|i'll|we|we're|we've|we'll|you're|it|it's|its|they|he|she|this|that|these|those|"
    r"there|here|the|a|an|my|our|your|his|her|their|some|all|any|what|which|who|why|how|when|where|"
    r"if|because|since|so|but|and|or|maybe|perhaps|probably|yes|no|not|ok|okay|thanks|thank|sorry|"
    r"hi|hey|hello|lol|haha|wow|oh|well|also|just|really|still|one|two|each|every|everything|"
    r"nothing|something|someone|today|tomorrow|yesterday|great|good|nice|cool|awesome)\b",
    re.I,
)
_DIRECTIVE_EN = re.compile(
    r"^(?:please\s+)?(?:(?:don't|do not|dont)(?:\s+ever)?|never|always|avoid|stop|quit|make sure(?: to| that| you)?|"
    r"be sure to|only|just|please|no more than|not more than|never more than|at most|at least|no longer than|"
    r"no(?=\s+`?(?!problem|problems|worries|worry|idea|thanks|way|need|rush|pressure|clue|luck|doubt|offense|big deal|"
    r"matter|one|longer|more)\w)|"
    r"keep (?:it|them|things|answers|replies|responses) (?:under|below|within|to)|"
    r"keep (?:any|all|every|my|your|the)?\s*[\w-]+(?: [\w-]+)? (?:under|below|within)(?=\s+\S*\d))\b\s*",
    re.I,
)
_CONDITION_EN = re.compile(
    r"^(?P<cond>(?:in|for|on|with|when|whenever|every time|each time|before|after|if|once|while|during)"
    r"\b[^,]{2,80}?),\s+(?P<rest>.+)$",
    re.I,
)
_NORM_EN = re.compile(
    r"^(?:(?:we|the team|our team|everyone)\s+(?:always\s+|never\s+|all\s+)?(?:prefer|must|should|shouldn't|mustn't|"
    r"need to|have to|may not|cannot|can't|don't|do not|avoid|require|insist on|always|never)\b|"
    r"(?:(?:every|each|all|any) \w+(?: [\w-]+){0,5}?|(?:our|the) [\w-]+(?: [\w-]+){0,3}|"
    r"(?!(?:i|you|it|they|he|she|this|that|there|we|my)\b)[a-z][\w-]*(?: [\w-]+){0,2})"
    r"\s+(?:always\s+|never\s+)?(?:must|should|shouldn't|mustn't|needs? to|needs|has to|have to|is required to|"
    r"are required to|may not|cannot|can't|requires?)\b)",
    re.I,
)
_NORM_VERB = re.compile(
    r"\b(?:prefer|must|should|shouldn't|mustn't|need to|needs to|needs|have to|has to|is required to|are required to|"
    r"may not|cannot|can't|don't|do not|avoid|require|requires|insist on|always|never)\s+(?:always\s+|never\s+|be\s+)?"
    r"(?P<verb>[\w'-]+)",
    re.I,
)
_CONVENTION_EN = re.compile(
    r"^(?:our|the|my|a)\s+(?:team(?:'s)?\s+|house\s+|general\s+)?(?:convention|rule|policy|standard|practice|"
    r"guideline|style|norm|habit here)\s+(?:here\s+)?is\s+(?:to\s+|that\s+(?:we\s+)?)?(?P<x>.+)$",
    re.I,
)
_QUANTIFIED = re.compile(r"^(?:every|each|all|any|everyone)\b", re.I)
TODAY = re.compile(r"\b(?:today|tonight|this morning|this afternoon|this evening)\b|今天|今晚", re.I)
_PRINCIPLE_EN = re.compile(
    r"^(?:.{0,60}?,\s*so\s+)?(?:in this (?:codebase|repo|project|team),\s*)?[\w -]{3,40}?\s+(?:always\s+)?(?:beats|trumps|"
    r"matters more than|is more important than|comes before|takes priority over|wins over)\s+[\w -]{3,40}",
    re.I,
)
_PRINCIPLE_ZH = re.compile(
    r"^.{0,30}?[\u4e00-\u9fffA-Za-z]{2,10}(?:永远|永遠|始终|始終|一直|总是|總是)?(?:比|优先于|優先於|重于|重於)"
    r"[\u4e00-\u9fffA-Za-z]{2,10}(?:更)?(?:重要|优先|優先|关键|關鍵)"
)
_WHY_FIRST = re.compile(r"^(?P<why>.{6,}?),\s*so\s+(?P<rule>.+)$", re.I)
_ZH_WHY_FIRST = re.compile(
    r"^(?P<why>(?:我|我们|我們)[^，,]{2,15})[，,](?:所以|因此)?(?P<rule>(?:请|請)?(?:别|別|不要|千万别|千萬別|一定要|务必|務必).+)$"
)
_PLURAL_SCOPE = re.compile(
    r"\b(?:in|for|on|to|with|across)\s+(?:(?:all|any|every|new|public|future)\s+(?:[\w-]+\s+){0,2}[\w-]+|"
    r"(?!(?:the|this|that|these|those|my|your|his|her|its|a|an|one|two|three|four|five|six|few|several|"
    r"some|\d+)\b)[\w-]+\s+[\w-]+s)\s*[.!]?$",
    re.I,
)
_ADVERB_NORM = re.compile(r"^(?:we|the team|our team|everyone)\s+(?:always|never)\b", re.I)  # "we always order pizza"
_AUXILIARY_PAST = re.compile(r"^(?:had|was|were|did|been|got|could|would|might)$", re.I)
_NOT_A_DIRECTIVE_HEAD = re.compile(
    r"^(?:been|seen|done|gone|known|taken|given|written|heard|gotten|forgotten|eaten|spoken|broken|chosen|driven|"
    r"shown|grown|thrown|drawn|worn|something|nothing|anything|everything|someone|anyone|everyone|nobody|the|a|an|"
    r"this|that|these|those|so|too|very|such|here|there|again|enough|more|less|it|its|it's|mind)$",
    re.I,
)
_GENERAL_CONDITION = re.compile(
    r"^(?:when|whenever|every time|each time|any time|anytime|if you ever)\b|"
    r"^(?:in|for|on|with)\s+(?!(?:this|that|the|these|those|here|now|today|my|your)\b)\w+s\b",
    re.I,
)
_ZH_WHEN_CLAUSE = re.compile(r"^[^，,。]{2,20}?(?:的时候|的時候|时候|時候|[时時](?=[，,]))[，,]?")
_YOU_MODAL = re.compile(r"^you\s+(?:should|must|need to|have to|always|never|can't|cannot|shouldn't|mustn't)\b", re.I)
_YOU_PREF = re.compile(
    r"^i(?:'d| would)?\s+(?:really\s+)?(?P<v>prefer|like|want|need|expect)\s+(?:it\s+)?(?:when|if|that)?\s*"
    r"you\s+(?P<rest>.+)$|^i(?:'d| would)\s+(?P<v2>rather)\s+you\s+(?P<rest3>.+)$|"
    r"^i(?:'d| would)\s+(?:really\s+)?(?P<v3>appreciate)\s+(?:it\s+)?if\s+you\s+(?P<rest4>.+)$",
    re.I,
)
_NAMING = re.compile(
    r"\b(?:are named|are called|should be named|must be named|be named|named like|named after|prefixed with|"
    r"prefix(?:ed)?|suffixed with|format(?:ted)? as)\b|\b(?:named|called)\s+(?=\S*[<{/])|命名|前缀|前綴|后缀|後綴|格式为|格式為",
    re.I,
)
_TEMPLATE = re.compile(r"<[\w -]+>|\{[\w -]+\}|(?<![\w-])[\w-]+/(?:<|\{|[\u4e00-\u9fff])|(?-i:\b[A-Z]+-\d+\b)|(?<!\w)[\w]+_\b|"
                       r"\b[a-z]+/\S*(?:号|號|id|ticket)", re.I)
_PAST_TO_BASE = {"kept": "keep", "used": "use", "wrote": "write", "gave": "give", "made": "make", "added": "add",
                 "asked": "ask", "stopped": "stop", "put": "put", "sent": "send", "left": "leave", "showed": "show",
                 "included": "include"}
_WANT_EN = re.compile(
    r"^i\s+(?:really\s+)?(?:want|need|expect|prefer|'d like|would like)\s+(?P<obj>(?:all|every|each|any|our|the)\b[\w\s-]{2,40}?)\s+"
    r"to\s+(?P<rest>.+)$",
    re.I,
)
_WANT_ZH = re.compile(r"^我(?:希望|想要|要求|需要)(?P<rest>(?:所有|全部|每个|每個|每次|以后|以後|一律|统一|統一).+)$")
_IT_WHEN = re.compile(
    r"^i\s+(?:really\s+|absolutely\s+|just\s+)?(?P<v>hate|dislike|don't like|do not like|can't stand|cannot stand|love|"
    r"like|prefer|appreciate)\s+it\s+when\s+(?P<rest>.+)$",
    re.I,
)
_ABOUT_ASSISTANT = re.compile(
    r"\b(?:you|your|answers?|responses?|replies|reply|summaries|summary|explanations?|suggestions?|code reviews?|"
    r"commits? messages?|the assistant)\b|回答|回复|回覆|答案|你|您|总结|建议|解释",
    re.I,
)
_YOU_PREF_ZH = re.compile(
    r"^(?:我)?(?:更|比较|比較|很)?(?P<v>希望|想让|想讓|要求|需要|喜欢|喜歡)(?:你|您)(?:以后|以後)?(?P<rest>.+)$|"
    r"^(?:请|請)(?:你|您)(?:以后|以後|每次|总是|總是|一直|始终|始終)(?P<rest2>.+)$"
)
_FIRST_PERSON_ZH = re.compile(
    r"^(?:我们|我們|咱们|咱們|他们|他們|我|他|她|它|(?:这|這|那)(?![类類种種])|有人|大家)(?![^，,。]{0,3}的)"
)
_ZH_THIRD_PARTY_REQUIRES = re.compile(
    r"^(?!我|你|您|用户|用戶)[^，,。：:]{1,8}?(?:那边|那邊|方面|这边|這邊)?(?:要求|规定|規定)(?!是|：|:)"
)
# "提醒类的东西都…", "这类报表都…": every thing of a kind, so the directive holds each time ("所有" is standing
# already); "这类问题都会…" says what happens, not what to do
_ZH_KIND_SCOPE = re.compile(
    r"^(?:(?:这|這|那|此)(?:类|類|种|種)|[^，,。]{1,8}(?:类|類)的?)[^，,。]{0,12}?(?:都|一律|统一|統一)"
    r"(?!会|會|是|很|挺|还|還|在|有|没|沒)"
)
_ZH_MODAL = re.compile(
    r"要|(?:必须|必須|就|还|還|都|也|你)得|必须|必須|应该|應該|应当|應當|(?:^|[，,\s]|千万|千萬|也|就|可|都|还|還|你|请|請|前|后|後|再)[别別]|不要|不能|不准|不许|不許|禁止|请|請|务必|務必|一律|统一|統一|"
    r"只用|只能|改用|优先|優先|尽量|儘量|少用|多用|记得|記得|不用|无需|無需|默认|默認|假设|假設|(?<!秒)(?<!分钟)(?<!分鐘)(?<!小时)(?<!小時)(?:最多|最少|至少|不超过|不超過|控制在)[^，,。]{0,3}?(?:\d|[一二两兩三四五六七八九十百千])|(?:都|全部|全都)(?:用|走|放|写|寫|加|改|按|以|带|帶|附|标|標)|"
    r"^(?:用|写|寫|加|改|附|带|帶|标|標|先|再|给|給|把|按|以)|(?:的时候|的時候|时候|時候)[，,]?\s*(?:多|少|先|再|都|只|[^，,。]{1,4}一点|[^，,。]{1,4}一點)"
)
_ZH_NEG_DIRECTIVE = re.compile(r"^(?:请|請)?(?:永远不要|永遠不要|千万不要|千萬不要|不要|别|別|不准|禁止|请勿|請勿|不能|不许|不許)")
_OFF_LIMITS = re.compile(r"^(?P<what>[^,;]{3,60}?)(?<![^,;]{3}\s)\s+(?:is|are)\s+(?:strictly\s+)?(?P<how>off[- ]limits|banned|forbidden|"
                         r"not allowed|prohibited)\b", re.I)
_SO_DIRECTIVE = re.compile(
    r"^(?P<why>.{8,}?)(?:,|(?<!.{8}\s))\s+so\s+(?P<rule>(?:never|always|don't|do not|avoid|make sure|please)\b.+)$", re.I
)
_SELF_THEN_DIRECTIVE = re.compile(
    r"^(?:so\s+)?(?P<why>(?:i|i'm|im|i've|ive|my)\b[^,;]{3,80}?),\s*(?:so\s+)?(?:please\s+|pls\s+)?(?P<rule>[a-z].{5,})$",
    re.I,
)
_ZH_SO = re.compile(
    r"^(?P<why>.{4,}?)[，,]\s*(?:所以|因此)(?P<rule>(?:以后|以後|永远|永遠|千万|千萬|一律|每次|不要|别|別|务必|務必|一定要|请|請).+)$"
)


def make_feedback(fact: str, slug_src: str, prefix: str, negative: bool, reason: str | None) -> Found:
    return Found(
        "feedback", "feedback", prefix, slug_src, fact, fact, reason=reason,
        how=HOW["feedback-neg" if negative else "feedback-pos"],
    )


def _prefix_of(rest: str) -> str:
    low = rest.lower()
    for word, prefix in (("don't", "dont"), ("do not", "dont"), ("dont", "dont"), ("never", "never"),
                         ("always", "always"), ("avoid", "avoid"), ("stop", "stop"), ("quit", "stop"),
                         ("make sure", "always"), ("be sure", "always"), ("only", "only")):
        if low.startswith(word):
            return prefix
    return ""


_ALTERNATIVE = re.compile(rf"^{lex.ALTERNATIVE_NEXT_EN}|^(?:改用|要用|用)", re.I)


def _reason_follows(ctx: Ctx) -> bool:
    """Whether the next sentence gives this directive's reason (directly or with an alternative)."""
    nxt = ctx.next_sentence or ""
    return bool(REASON_NEXT_START.match(nxt) or (_ALTERNATIVE.match(nxt) and split_reason(nxt)[1]))


def _split_all_reasons(text: str) -> tuple[str, str | None]:
    rule, reason = split_reason(text)
    if reason is None:
        rule, reason = clause_reason(rule)
    return rule, reason


def accepted_feedback(proposal: str, said: str, ctx: Ctx) -> Found | None:
    """The assistant's offer, accepted by the user as a standing rule, as feedback.

    "Should I run the formatter before every commit?" / "Yes, from now on." The offer must be
    standing, or the acceptance must make it so; the user's words around it may add a reason.
    """
    if not (ctx.standing or is_standing(said) or is_standing(proposal)):
        return None
    rule = re.sub(r"^(?:also|just|还|還|以后|以後)\s*", "", proposal, flags=re.I)
    rule = re.sub(r"\byour\b", "the user's", re.sub(r"\byou\b", "the user", rule, flags=re.I), flags=re.I)
    rule = re.sub(r"(?:你|您)(?!们|們)", "用户", rule)
    if not content_ok(rule) or is_wellbeing(rule):
        return None
    _, reason = _split_all_reasons(said)
    negative = bool(NEGATION_EN.match(rule) or _ZH_NEG_DIRECTIVE.match(rule))
    return make_feedback(sentence_case(rule), rule, _prefix_of(rule), negative, reason)


# "下周五要发版，这个接口必须在那之前改完", "the release is on the 9th, this fix has to be in before then": a dated
# event followed by a must about this one thing is a deadline (``project``, left to the dated rule),
# not a standing rule.
_THIS_ONE = re.compile(
    r"这个|這個|这一?版|這一?版|那之前|这个月|這個月|这周|這週|本周|本週|"
    r"\b(?:this|that)\s+(?:bug|fix|patch|pr|ticket|change|feature|one)\b|\bbefore (?:then|that)\b",
    re.I,
)


def _deadline_for_one_thing(s: str, ctx: Ctx) -> bool:
    parts = re.split(r"[，,;；]", s, maxsplit=1)
    if len(parts) < 2:
        return False
    return bool(_THIS_ONE.search(parts[1])) and bool(future_dates(parts[0], ctx.day))


# "… 这个月 30 号之前必须切完", "the migration has to be finished by December 18": a must tied to one named
# date is a deadline of the work (``project``, left to the dated rule); "every Friday", "每周五" name no one date.
_ONE_DATE = re.compile(r"\b(?:by|before|until|no later than|on)\b|之前|以前|前(?=[必要得把])|截止|为止|為止|当天|當天", re.I)


_MUST = re.compile(
    r"(?:都)?(?:必须|必須|一定要|务必|務必|要|得)|全部|\b(?:must|has to|have to|needs to|need to|all)\b", re.I
)


def _deadline(s: str, ctx: Ctx) -> bool:
    """A must tied to one named date: "must" and "all of it" are what make a deadline, not what makes it
    standing."""
    if ctx.standing or is_standing(_MUST.sub(" ", s)) or RECURRING.search(s) or not _ONE_DATE.search(s):
        return False
    return bool(future_dates(s, ctx.day, weekdays=True))


def rule_feedback(s: str, ctx: Ctx) -> Found | None:
    """A standing directive about the work, the code or the assistant's behaviour."""
    if ctx.role != "user" or _deadline_for_one_thing(s, ctx) or _deadline(s, ctx):
        return None
    if _NAMING.search(s) and _TEMPLATE.search(s):
        rule, reason = _split_all_reasons(s)
        fact = sentence_case(rule) if not has_cjk(rule) else tidy(rule)
        return make_feedback(fact, rule, "", False, reason)  # "branches are named feat/<ticket>": a convention
    m = _WANT_EN.match(s) or _WANT_ZH.match(s)
    if m:
        said = f"{m.group('obj')} {m.group('rest')}" if m.groupdict().get("obj") else m.group("rest")
        rule, reason = _split_all_reasons(said)
        if content_ok(rule) and not is_wellbeing(rule):
            fact = sentence_case(third_person(rule)) if not has_cjk(rule) else tidy(rule)
            return make_feedback(fact, rule, "", False, reason)
    m = _IT_WHEN.match(s)
    if m and _ABOUT_ASSISTANT.search(m.group("rest")):
        rule, reason = _split_all_reasons(m.group("rest"))
        rule = re.split(r",\s*(?:just|so|please)\b", rule)[0]
        negative = m.group("v").lower() not in ("love", "like", "prefer", "appreciate")
        verb = "dislikes" if negative else "likes"
        fact = f"User {verb} it when {third_person(rule)}"
        return make_feedback(fact, rule, "avoid" if negative else "", negative, reason)
    m = _YOU_PREF.match(s) or _YOU_PREF_ZH.match(s)
    if m:
        got = m.groupdict()
        said = got.get("rest") or got.get("rest2") or got.get("rest3") or got.get("rest4") or ""
        if got.get("rest4"):
            said = re.sub(rf"^({'|'.join(_PAST_TO_BASE)})\b",
                          lambda w: _PAST_TO_BASE.get(w.group(1).lower(), w.group(1)), said, flags=re.I)
        rest = re.sub(r"^to\s+", "", said, flags=re.I)
        rule, reason = _split_all_reasons(rest)
        wish_is_standing = (got.get("v") or "").lower() in (
            "prefer", "like", "喜欢", "喜歡", "希望") or bool(got.get("v2") or got.get("v3"))
        if not (wish_is_standing or ctx.standing or reason or is_standing(said)
                or got.get("rest2")):
            return None  # "I want you to fix this" is a request for now
        if not content_ok(rule) or rule.startswith(("帮", "幫")) or is_wellbeing(rule):
            return None
        negated = re.match(r"^(?:didn't|did not|not|don't|do not|never)\s+", rule, re.I)
        if got.get("v2") and negated:
            rule = "Don't " + rule[negated.end() :]
        fact = sentence_case(third_person(rule))
        return make_feedback(fact, rule, _prefix_of(rule), bool(NEGATION_EN.match(rule) or _ZH_NEG_DIRECTIVE.match(rule)), reason)
    m = _OFF_LIMITS.match(s)
    if m and content_ok(split_reason(s)[0]) and not is_hypothetical(s):
        what = m.group("what")  # "anything under gen/ is off limits", "unsafe is banned outside ffi": standing
        rule, reason = split_reason(s)
        fact = f"Don't modify {what}" if m.group("how").lower().startswith("off") else sentence_case(rule)
        return make_feedback(fact, what, "avoid", True, reason)
    m = _SELF_THEN_DIRECTIVE.match(s)
    if m and opens_with_verb(m.group("rule")) and not re.search(r"\b(?:me|my)\b", m.group("rule"), re.I):
        # "I'm often wiped out after shifts, keep dinner ideas quick": the user's circumstance, then what to do
        # about it — a directive with its reason, so a standing one
        inner = _with_its_reason(m, ctx)
        if inner is not None:
            return inner
    m = _SO_DIRECTIVE.match(s) or _ZH_SO.match(s)
    if m and re.match(r"^i\b", m.group("why"), re.I) and re.search(r"\b(?:me|my)\b", m.group("rule"), re.I):
        return None  # "I work late, so don't expect replies from me early": a fact about the user
    return (m and _with_its_reason(m, ctx)) or _principle(s, ctx) or (_feedback_zh if has_cjk(s) else _feedback_en)(s, ctx)


def _with_its_reason(m: re.Match[str], ctx: Ctx) -> Found | None:
    """The directive of a "why, then rule" sentence, standing, its reason the part before it."""
    inner = rule_feedback(m.group("rule"), Ctx(ctx.role, ctx.day, None, True, ctx.remember))
    if inner is not None:
        inner.reason = inner.reason or tidy(m.group("why"))
    return inner


def _principle(s: str, ctx: Ctx) -> Found | None:
    """A priority the user works by: "correctness beats performance every time", "正确性永远比性能重要"."""
    m = _PRINCIPLE_EN.match(s) or _PRINCIPLE_ZH.match(s)
    if not m or not (ctx.standing or is_standing(s) or _WHY_FIRST.match(s)):
        return None
    rule, reason = _split_all_reasons(s)
    why = _WHY_FIRST.match(rule)
    if why:
        rule, reason = why.group("rule"), reason or why.group("why")
    if not content_ok(rule):
        return None
    return make_feedback(sentence_case(rule), rule, "", False, reason)


_OTHER_WAY = re.compile(rf"(?:,\s*+|(?<!\s)\s++)(?:{lex.OTHER_WAY_EN})\s++\S")


def _plain_rule(body: str) -> bool:
    """A plain imperative about how the work is done is a rule with no standing marker when it rules
    a way out — a prohibition ("don't use testify") or one way over the other ("use polars, not
    pandas") — unless its object is the thing at hand, pointed at or definite ("don't touch that file",
    "don't rename it", "use the staging bucket instead of prod")."""
    said = imperative(body)
    if said is None or not (NEGATION_EN.match(body) or _OTHER_WAY.search(said)):
        return False
    thing = said.split(" ", 1)[1] if " " in said else ""
    return (bool(thing) and not PRONOUN_OBJECT.match(thing) and not re.match(r"the\b", thing, re.I)
            and not is_everyday(said) and not is_life_advice(said) and not is_wellbeing(said))


def _feedback_en(s: str, ctx: Ctx) -> Found | None:
    rule, reason = _split_all_reasons(s)
    main = rule
    cond = _CONDITION_EN.match(rule)
    general_condition = False
    if cond:
        main = cond.group("rest")
        general_condition = bool(_GENERAL_CONDITION.match(cond.group("cond")))
    main = re.sub(r"^(?:(?:no|nope)[,.!]\s+|(?:please|pls)[,.!]?\s+)", "", main, flags=re.I)
    directive = _DIRECTIVE_EN.match(main)
    convention = _CONVENTION_EN.match(main)
    if convention:
        main = convention.group("x")
        general_condition = True
    norm = _NORM_EN.match(main)
    declared = False
    if _YOU_MODAL.match(main):
        body = re.sub(r"^you\s+", "", main, flags=re.I)
    elif norm:
        body = main
        general_condition = general_condition or bool(_QUANTIFIED.match(main))
    elif directive or (not _SUBJECT_START.match(main) and opens_with_verb(main)):
        body = main
    elif ctx.standing and not re.match(r"^(?:i|i'm|i'll|i've|we'll|we're|you)\b", main, re.I) and content_ok(main):
        body = main  # "From here on, tests go in a tests/ folder": a rule stated as how things are
        declared = True
        if not about_the_work(main) or PAST_STATEMENT.match(main):
            return None  # "going forward, the weather should improve"; "… the schema drifted apart"
    else:
        return None
    first = body.split(" ", 1)[0].lower().strip(",.") if not (norm or declared) else "norm"
    if not first.isalpha() and first not in ("don't", "can't", "shouldn't", "mustn't"):
        return None
    if first.endswith("ed") or (first.endswith("ing") and first not in ("bring",)):
        return None  # a past-tense or participle opening is a story, not an instruction
    standing = ctx.standing or is_standing(s) or general_condition or bool(_PLURAL_SCOPE.search(rule))
    if ONE_OFF_EDIT.match(body) and not (ctx.standing or is_standing(SPATIAL.sub("", s))):
        return None  # "rename getUser to fetchUser everywhere": one edit, however wide
    if (TODAY.search(s) or has_relative_date(rule)) and not (is_standing(s) or ctx.standing):
        return None  # "Smile today", "ship it tonight": for the day only
    if not (standing or reason or _reason_follows(ctx) or _plain_rule(body)):
        return None  # one-off: "Use a smaller batch size here", "Don't worry about the typo"
    rest = _DIRECTIVE_EN.sub("", body, count=1) if directive else body
    if declared:
        verb = ""
    elif norm:
        said = _NORM_VERB.search(body)
        takes_object = said is not None and re.match(r"(?:needs|requires?|prefer|avoid|insist)\b", said.group(0), re.I)
        verb = said.group("verb").lower() if said and not takes_object else ""
        adverb_only = said is not None and re.match(r"(?:always|never)\b", said.group(0), re.I)
        if adverb_only and not opens_with_verb(verb.split("-")[0]):
            return None  # "we always end up ordering pizza": what happens, not what to do
    else:
        verb = re.sub(r"^(?:ever|really|just|also)\s+", "", rest, flags=re.I).split(" ", 1)[0].lower().strip(",.")
    if verb.endswith("ed") or _AUXILIARY_PAST.match(verb) or _NOT_A_DIRECTIVE_HEAD.match(verb):
        return None  # "never had a chance", "never seen this", "always something": not an instruction
    head = re.split(r"[,;]|\s[-—–]\s", rest)[0]
    if not content_ok(head) and not (norm or declared):
        return None  # "don't ever change, you're hilarious": nothing to do or avoid
    team = re.match(r"^(?:we|the team|our team|everyone)\b", body, re.I)
    if norm and not team and not about_the_work(body):
        return None  # "the weather should improve": a norm must be about the work
    if norm and _ADVERB_NORM.match(body) and not about_the_work(re.sub(r"\b(?:we|our|us|i|me|my)\b", " ", s, flags=re.I)):
        return None  # "we always order pizza on Fridays": a habit of the team, not a rule for the work
    if is_wellbeing(rest) or is_wellbeing(body) or not content_ok(rest) or is_life_advice(rest):
        return None
    if PRONOUN_OBJECT.match(rest) and not content_ok(rest, min_tokens=3):
        return None
    fact = sentence_case(re.sub(r"^(?:please|pls)\s+", "", rule, flags=re.I))
    negative = bool(NEGATION_EN.match(body))
    return make_feedback(fact, rest, _prefix_of(body), negative, reason)


def _feedback_zh(s: str, ctx: Ctx) -> Found | None:
    rule, reason = _split_all_reasons(s)
    why = _ZH_WHY_FIRST.match(rule)
    if why and reason is None:
        rule, reason = why.group("rule"), why.group("why")  # "我有哮喘，别给我推荐高海拔的地方"
    body = re.sub(r"^(?:请|請|麻烦|麻煩)", "", rule)
    whole = body
    asked = _ZH_WHEN_CLAUSE.match(body)
    if asked and body.startswith(("我", "你", "您")) and len(body) - asked.end() >= 3:
        # "我问菜谱的时候，默认我只有微波炉", "你回答的时候字少一点": the rule is after the condition, which
        # makes it hold every time (a condition on the assistant's work stays in the rule's words)
        body = body[asked.end() :]
        rule = body if body.startswith("我") or whole.startswith("我") else whole[1:]
        general = True
    else:
        general = False
    if _ZH_THIRD_PARTY_REQUIRES.match(body):
        # "审计要求…", "客户要求…前上线": a requirement someone else set is a fact about the work, not the user's
        # rule for the assistant: left to the dated and statement rules (project)
        return None
    if re.match(r"^(?:你|您)(?:以后|以後)?(?:要|得|必须|必須|一定要|不要|别|別|应该|應該|每次|总是|總是)", body):
        body = body[1:]
    elif _FIRST_PERSON_ZH.match(body) or body.startswith(("你", "您")):
        return None
    condition = _ZH_WHEN_CLAUSE.match(body)
    if not (ctx.standing or _ZH_MODAL.search(body) or (general and _ZH_MODAL.search(whole))):
        return None  # "测试总是挂": a description of what happens, not an instruction
    standing = (ctx.standing or is_standing(s) or general or bool(_ZH_KIND_SCOPE.match(body))
                or bool(condition and len(body) - condition.end() >= 3))
    # a plain prohibition about the work ("别用 var 声明变量") holds unless bound to now or this thing,
    # or it is about the speaker ("别让我忘了": a request)
    plain = (bool(_ZH_NEG_DIRECTIVE.match(body)) and names_the_work(body) and not NOW_OR_THIS_ZH.search(s)
             and third_person(body) == body)
    if not (standing or reason or _reason_follows(ctx) or (plain and not is_everyday(body))):
        return None
    if is_wellbeing(body) or not content_ok(body) or body.startswith(("帮", "幫")):
        return None
    if re.search(r"(?:这么|這麼|这样|這樣|那样|那樣|那么|那麼)(?:做|办|辦|写|寫|弄|来|來)?[吧哦呀啊哈]?$", tidy(body)):
        return None  # "就这么做", "永远保持这样": the object is a pronoun, the rule is elsewhere
    negative = bool(_ZH_NEG_DIRECTIVE.match(body))
    fact = tidy(rule if general else body)
    return make_feedback(fact, body, "avoid" if negative else "always" if standing else "", negative, reason)


__all__ = [
    "HOW", "HOW_KEY", "HOW_ZH", "REMEMBER_HOW", "TODAY", "WHY_NONE", "WHY_NONE_ZH",
    "accepted_feedback", "make_feedback", "rule_feedback"
]
