"""A sentence's clauses: one record per fact when a sentence states several.

"I'm a data engineer, and the dbt models live in models/marts" states two facts; "we use tabs,
and never commit generated code" two rules; "I have asthma, so please avoid high altitude"
a fact and a rule whose reason is that fact; "never push to main; open a PR instead" one rule
with its alternative; "don't add dependencies; our security review takes weeks" one rule with
its reason. :func:`found_in` decides which, after the accepted-offer and remember-request
paths; :func:`clauses` splits a sentence at the joints where a new clause starts.

Where a clause starts is read from its structure: a new subject and its verb after "and", "but"
or a comma ("…, my wife is vegan", "logs go to Loki, metrics go to Prometheus"), "and
always/never" before a second rule, a semicolon or a Chinese comma — never inside brackets or
quotes. What carries on the clause before stays with it: a pronoun ("…, and they're both
indoor cats"), a reason after a directive, a rule said both ways without "and", the date of a
plan ("…, and the deadline is January 15"), a label and a place ("…, admin at https://…"), a
Chinese clause with no subject of its own ("…，主要写 Rust"), and, after a Chinese rule, whom it
is for ("…，我都是在平板上看的"). In English every clause that states a fact is a record; Chinese
clauses after a comma usually go on about one fact, so there the kinds must differ (or each
clause name a place of its own). :func:`with_subject` gives a pronoun subject the thing the
sentence before names.
"""

from __future__ import annotations

import re
from dataclasses import replace

from dreamd.models.offline import markers as lex
from dreamd.models.offline.extract.distractors import TESTS_EN, TESTS_ZH, distractor, other_side
from dreamd.models.offline.extract.facts import RULES, rule_remember
from dreamd.models.offline.extract.rules import HOW, accepted_feedback
from dreamd.models.offline.extract.statement import rule_statement, statement_distractor
from dreamd.models.offline.extract.structure import (
    NOW_OR_THIS_ZH,
    ONE_OFF_EDIT,
    clause_reason,
    is_hypothetical,
    is_standing,
    is_temporary,
    opens_with_verb,
    peel,
)
from dreamd.models.offline.extract.types import Ctx, Found
from dreamd.models.offline.text import (
    absolutize_dates,
    has_cjk,
    has_relative_date,
    sentence_case,
    split_reason,
    tidy,
)

_FINITE = (
    r"(?:is|are|was|has|have|goes|go|runs|run|lives|live|sits|owns|handles|covers|manages|maintains|approves|"
    r"uses|use|starts|start|ends|can|will|must|should|needs|need|happens?|ships?|deploys?)"
)
# words that open a relative or a pronoun clause, never a new subject of its own
_FUNCTION = r"(?:which|that|who|whom|whose|what|where|when|it|this|there|here|he|she|they|one|everything|nothing|so|then)"
_CLAUSES = re.compile(
    r",\s+(?=(?-i:I|I'm|I've|My)\b)|;\s+|,\s+(?=(?:the|our|my|its|their)\s+[\w-]+(?:\s+[\w-]+)?\s+(?:is|are|lives?|"
    r"goes|sits?|runs?)\s+(?:in|on|at|under|inside)\b)|,\s+(?:and|but)\s+|,\s+(?=so\s)|(?<!\s)\s++(?=so\s+(?:please\s+)?(?:keep|never|always|don't|dont|do not|avoid|make sure|no)\b)|,\s+(?=(?:never|always|don't|dont|do not|please)\b)|(?<!\s)\s++and\s+(?=(?:the|our|all|every|each|its|their|my|i|we)\b)|[，；]|"
    # "… but I'm new to Kubernetes", "… and we've never used it": a new clause with its own subject
    r"(?<!\s)\s++(?:and|but)\s+(?=(?:i'm|i've|i'd|we're|we've|we'd)\b)|(?<!\s)\s++but\s+(?=(?:i|we|my|our|the)\s)|"
    # "keep answers short and always include the command": a second rule
    r"(?<!\s)\s++and\s+(?=(?:always|never|don't|dont|do not)\s)|"
    # "I'm pescatarian, my husband is vegan": a comma before a new subject and its verb
    r",\s+(?=(?:my|our|the|his|her|their)\s+(?:[\w'-]+\s+){0,2}(?:is|are|was|has|have|'s)\s)|"
    # "logs go to Loki, metrics go to Prometheus", "Jonas handles infra and Mei owns the app"
    rf"(?:,\s+|(?<!\s)\s++and\s+)(?=(?:(?-i:[A-Z][a-z]+)|(?!{_FUNCTION}\b)[a-z]+)\s+{_FINITE}\s)",
    re.I,
)


_DIRECTIVE_CLAUSE = re.compile(
    r"^(?:please\s+)?(?:don't|do not|never|always|avoid|keep|make sure|stop|use|skip|include|leave|no)\b|"
    r"^[^，,]{0,6}?(?:别|別|不要|千万别|千萬別|一定要|务必|務必|尽量|儘量)",
    re.I,
)
_ABOUT_USER = re.compile(
    r"^(?:(?:this year|lately|these days|right now|today|今年|最近|现在|現在|这阵子|這陣子)[,，]?\s*)?(?:i\b|i'm\b|我(?![们們]))",
    re.I,
)
_ERRAND = re.compile(
    r"^(?:please\s+)?(?:remind|let me know|tell me|help|ping|ask|show|send|find|book|order|buy|call|text)\b|"
    r"^(?:请|請)?(?:提醒我|告诉我|告訴我|帮我|幫我|给我找|給我找|帮忙|幫忙)",
    re.I,
)
_ZH_I = re.compile(r"^(?:[^，,。]{0,4}?[，,])?我(?![们們])")
_ZH_NO_SUBJECT_START = re.compile(
    rf"^(?!(?:我|你|您|他|她|它|这|這|那|但|不过|不過|而且|可是|如果|要是|虽然|雖然|{lex.REASON_ZH}|所以|然后|然後|还有|還有|哈|嗯|啊|哦))"
    r"[\u4e00-\u9fff]"
)
# "…，但整个团队都在伦敦", "…，并且一定要附上命令": the conjunction joins, the clause is what follows
_ZH_AND = re.compile(r"^(?:但是|但|不过|不過|可是|而且|并且|並且|同时|同時|以及)\s*(?=[\u4e00-\u9fffA-Za-z0-9])")
_ZH_CARRY_ON = re.compile(r"^(?:主要|一般|平时|平時|平常|通常|部署在|放在|存在|跑在|托管在|用的是|也|还|還)")
_ZH_MOOD = re.compile(r"(?:挺|很|比较|比較|特别|特別|非常|有点|有點|太|好)[\u4e00-\u9fff]{1,2}(?:的|了|啊|呀)?$")
_INSTEAD = re.compile(r"\binstead\b|\brather\b|改用|而是|换成|換成", re.I)
_MAY_GIVE_REASON = re.compile(
    rf"^\s*(?:it's|it is|they're|they|this|that's|that|our|{lex.REASON_EN}|{lex.OTHERWISE_EN_OPENING})\b", re.I
)
_CONSEQUENCE = re.compile(r"^(?:(?:so|therefore|hence|which means)\b|所以|因此|于是|於是)", re.I)


def clauses(core: str, *, min_words: int = 3) -> list[str]:
    """The clauses of a sentence no rule took as a whole ("we deploy with ArgoCD and every
    service keeps its manifests in the deploy-configs repo"), each tried on its own; under a
    rules header a clause may be two words ("Two rules: no emojis; keep PRs small")."""
    raw: list[tuple[str, str]] = []
    start, joint = 0, ""
    # never inside brackets or quotes: "two dogs (Bo is 4 and Tig is 2)" is one aside
    joints = [m for m in _CLAUSES.finditer(core) if not _enclosed(core, m.start())]
    for m in [*joints, None]:
        text = core[start : m.start() if m else len(core)]
        raw.extend((joint if k == 0 else ",", piece) for k, piece in enumerate(_splice(text)))
        if m:
            start, joint = m.end(), m.group(0)
    merged: list[str] = []
    for n, (joint, part) in enumerate(raw):
        if n and re.fullmatch(r"\s+and\s+", joint, re.I) and len(raw[n - 1][1].split()) < 3 and merged:
            merged[-1] = f"{merged[-1]} and {part}"  # "Sam and Ruby go to the same school": one subject
            continue
        # "always wrap errors with %w, never return them bare" is one rule said both ways;
        # "…, and always rebase first" after "never force-push" is a second one
        both_ways = not re.search(r"\band\b", joint, re.I) and _other_side(merged[-1], part) if merged else False
        instead = bool(merged and _INSTEAD.search(part) and _directive(merged[-1]))  # "never X; use Y instead"
        if merged and (_reason_of(merged[-1], part) or instead or both_ways or _WHEN_OF.match(part)):
            merged[-1] = f"{merged[-1]}; {part}"  # "…; our security review takes weeks" is the reason
        else:
            merged.append(part)
    parts = [(p if _CONSEQUENCE.match(p.strip()) else peel(_ZH_AND.sub("", p.strip())).core).strip(" ,，.。")
             for p in merged]
    # a short self-description is a clause too: "i'm colourblind, so don't rely on red vs green"
    # (the rule's reason), "I'm pescatarian, my husband is vegan" (a fact of its own)
    return [p for p in parts
            if p and p != core and (len(p.split()) >= min_words or _zh_size(p) >= 4 or _SHORT_SELF.match(p))]


def _directive(clause: str) -> bool:
    tail = re.split(r"[:：]\s*", clause)[-1].strip()
    return bool(_DIRECTIVE_CLAUSE.match(tail) or opens_with_verb(tail) or _ZH_DIRECTIVE.search(tail))


def _enclosed(text: str, at: int) -> bool:
    before = text[:at]
    return (before.count("(") > before.count(")") or before.count("（") > before.count("）")
            or before.count("“") > before.count("”") or before.count('"') % 2 == 1)


# "…, and the deadline is January 15", "…，截止日期是 3 月 1 号": the date of the plan before it
_WHEN_OF = re.compile(
    r"^\s*(?:and\s+)?(?:the\s+)?(?:deadline|due date|target date|target|go-live|cutover|launch date|start date|"
    r"end date|date)\s+(?:is|was|will be|'s)\b|^\s*(?:截止日期|截止时间|截止時間|上线时间|上線時間|时间|時間|日期)"
    r"(?:是|定在|在|为|為)",
    re.I,
)
_CAUSAL = re.compile(rf"^\s*(?:{lex.REASON_EN}|{lex.OTHERWISE_EN_OPENING})\b", re.I)
_ANAPHORIC = re.compile(r"^\s*(?:it's|it is|they're|they|this|that's|that)\b", re.I)


def _reason_of(before: str, part: str) -> bool:
    """Whether ``part`` carries on the clause before it: a causal opener anywhere ("…;
    otherwise the cache goes stale"), a pronoun going on about the same thing ("…, and
    they're both rescues"), and after a directive a clause of its own ("…; our security
    review takes weeks"). After a statement, "…, and our repo is on GitLab" is a second fact."""
    if _CAUSAL.match(part) or _ANAPHORIC.match(part):
        return True
    tail = re.split(r"[:：]\s*", before)[-1]
    if (_ZH_REASON_AFTER.match(part) and _ZH_DIRECTIVE.search(tail) and not _ZH_DIRECTIVE.search(part)
            and not _ZH_HEALTH_CONDITION.search(part)):
        # "回复请尽量简短，我都是在平板上看的": who the rule is for says why (a condition of the body,
        # "…，我腰不好", is still a fact of its own)
        return True
    return _MAY_GIVE_REASON.match(part) is not None and (
        _DIRECTIVE_CLAUSE.match(tail) is not None or opens_with_verb(tail)
    )


_ZH_REASON_AFTER = re.compile(rf"^(?:我|我们|我們|他|她|他们|他們|孩子|这是|這是|{lex.OTHERWISE_ZH}|{lex.LEST_ZH})")
_ZH_HEALTH_CONDITION = re.compile(r"过敏|過敏|不好|哮喘|糖尿病|高血压|高血壓|怀孕|懷孕|备孕|備孕|色盲|近视|近視|听力|聽力|视力|視力|左撇子|吃素")
_ZH_DIRECTIVE = re.compile(r"请|請|别|別|不要|一律|尽量|儘量|都要|一定要|务必|務必|千万|千萬|以后|以後|每次|统一|統一")


_PRONOUN_AND_VERB = re.compile(
    r"^(?P<p>he|she|they|it)(?P<v>'s|'re|\s+(?:is|are|was|has|have|had|does|do|doesn't|don't|can|can't|will|won't|"
    r"\w+s))\b", re.I
)
_NP_SUBJECT = re.compile(
    r"^(?P<np>(?:my|our|the)\s+(?:[\w'-]+\s+){0,2}?[\w'-]+|(?-i:[A-Z][a-z]+))\s+(?:is|are|was|has|have|'s|\w+s)\b",
    re.I,
)
_USED_THING = re.compile(
    r"^(?:we|i)\s+(?:use|run|chose|picked|went with|switched to|moved to|self-host|host)\s+(?P<np>(?-i:[A-Z])[\w.+#-]*(?:\s+[\d.]+)?)",
    re.I,
)


def with_subject(core: str, previous: str | None) -> str:
    """A sentence whose subject is a pronoun, with the pronoun replaced by what the sentence before
    names ("My wife is Ana." / "She's a teacher." → "My wife is a teacher."; "We use Terraform." /
    "It lives in infra/." → "Terraform lives in infra/."), so the rules see who or what it is about."""
    m = _PRONOUN_AND_VERB.match(core)
    if not previous or not m:
        return core
    before = previous.strip()
    np = _NP_SUBJECT.match(before)
    used = _USED_THING.match(before) if m.group("p").lower() == "it" else None
    name = (used.group("np") if used else np.group("np") if np else "").rstrip(".,;:!?")
    if not name or name.lower() in ("he", "she", "it", "they", "this", "that", "there", "here"):
        return core
    verb = m.group("v")
    verb = {"'s": " is", "'re": " are"}.get(verb.lower(), verb)
    if m.group("p").lower() == "they" and verb.strip() in ("are",) and not name.lower().endswith("s"):
        verb = " is"
    return f"{name}{verb}{core[m.end():]}"


_BUT = re.compile(
    r",?(?<!\s)\s++but\s+|[，,]\s*(?:但是|但|不过|不過|可是)|"
    # "I freelance, mostly Django, and right now I've got two clients": the moment starts a side of its own
    r",\s+and\s+(?=(?:right now|for now|at the moment|for the moment|today|this week)\b)|;\s+",
    re.I,
)


def lasting_part(core: str) -> str | None:
    """Of a sentence that is temporary or hypothetical as a whole, the side of its "but" that is
    not: "we're on 3.11 for now, but we're upgrading to 3.13 in January" → the upgrade; "we always
    use pnpm, but for now just use npm" → the rule. None when no side is lasting."""
    sides = [p.strip(" ,，.。") for p in _BUT.split(core)]
    if len(sides) < 2:
        return _lasting_clauses(core)
    kept = [p for p in sides if p and not is_temporary(p) and not is_hypothetical(p)]
    return kept[0] if len(kept) == 1 else None


_ZH_ABOUT_TO = re.compile(r"^(?:我|我们|我們)(?:去|要|得|先|再|马上|馬上|待会|待會|回头|回頭)")


def _lasting_clauses(core: str) -> str | None:
    """Of a sentence with no "but" whose clauses each have a subject of their own ("the twins start
    school on the 3rd and I haven't labelled anything yet, and my partner is away until the 30th"),
    the clauses that are neither temporary nor hypothetical, when the temporary one is a clause of
    its own and not a marker heading the rest ("for now, use npm" keeps nothing)."""
    parts = clauses(core)
    if len(parts) < 2 or is_hypothetical(core):
        return None
    passing = [p for p in parts if is_temporary(p) or is_hypothetical(p)]
    kept = [p for p in parts if p not in passing]
    if any(statement_distractor(p) or _ZH_ABOUT_TO.match(p) for p in kept):
        return None  # "我去开个会", "回头我再改": a clause of the moment beside it
    if not passing or not kept or any(_zh_size(p) < 4 if has_cjk(p) else len(p.split()) < 3 for p in passing):
        return None
    if any(_DIRECTIVE_CLAUSE.match(b) or opens_with_verb(b) for b in (_CONSEQUENCE.sub("", p).strip() for p in parts)):
        return None  # "use npm this time, keep the lockfile": the moment heads the directive beside it
    return ("，" if has_cjk(core) else ", and ").join(kept)


def _zh_size(text: str) -> int:
    """Chinese characters plus Latin words and numbers ("我今年 29" is four)."""
    return sum(map(has_cjk, text)) + len(re.findall(r"[A-Za-z0-9]+", text))


_SPLICE = re.compile(r",\s+(?=(?-i:[A-Z][a-z]+)\s+(?:covers|handles|takes over|is covering|will cover)\b)|"
                     r",\s+(?=(?:we|anything|everything|nothing)\s+(?:\S+\s+){0,3}?(?:is|are|regenerate|generate|deploy|"
                     r"use|run|build|keep|ship|host|store|have)\b)", re.I)
_SUBORDINATE = re.compile(rf"^\s*(?:if|when|whenever|once|before|after|{lex.REASON_EN}|although|though|while|unless|until)\b",
                          re.I)


def _splice(part: str) -> list[str]:
    """"half of it is generated, anything under gen/ is off limits, we regenerate it with buf": a comma
    before a new subject starts a clause, unless the part opens with a condition ("when X, we …")."""
    return [part] if _SUBORDINATE.match(part) else _SPLICE.split(part)


_SHORT_SELF = re.compile(r"^(?:i'm|i am)\s+[\w-]{4,}$", re.I)
_ALWAYS = re.compile(r"^\s*always\b", re.I)
_NEVER = re.compile(r"^\s*(?:never|don't|dont|do not)\b", re.I)


def _other_side(before: str, after: str) -> bool:
    """"always wrap errors with %w, never return them bare": one rule said both ways."""
    tail = re.split(r"[:：]\s*", before)[-1]
    return bool((_ALWAYS.match(tail) and _NEVER.match(after)) or (_NEVER.match(tail) and _ALWAYS.match(after)))


def _for_now(clause: str) -> bool:
    """A request to the assistant that opens bound to now or this thing ("先…", "这次…"): a task."""
    return distractor(clause) == "addressed" and NOW_OR_THIS_ZH.match(clause.strip()) is not None


def _said_both_ways(before: str, after: str) -> bool:
    """A don't after a statement of how things are done, the same rule from the other side: a
    "never" with no verb of its own ("…, never plain strings" borrows the verb before it), or a
    Chinese don't after a do (:func:`~dreamd.models.offline.extract.distractors.other_side`)."""
    if _NEVER.match(after):
        return not opens_with_verb(_NEVER.sub("", after, count=1)) and not _NEVER.match(before)
    return other_side(before, after)


_NOT_ASPECT = re.compile(r"[超通經经]过|[超通經经]過")
_CHAT = frozenset({"feeling", "interjection", "exclamation", "encouragement", "evaluation"})
_NOT_A_RULE = frozenset({"reported", "past event", "feeling", "interjection", "secret"})


def standing_rule(found: Found, text: str, ctx: Ctx) -> bool:
    """Whether a directive the rules found can be the user's rule at all: not someone else's
    words, not an event that happened, not a mood or an interjection, not a secret (the
    distractor tests of :mod:`dreamd.models.offline.extract.distractors`), judged on the rule itself: its
    reason may well tell of an event ("never commit to main — we had an incident last year")."""
    rule = re.split(r"(?<!\s)\s++[—–-]\s+|;", text, maxsplit=1)[0]
    rule = clause_reason(split_reason(rule)[0])[0].strip()
    kind = distractor(rule)
    if kind == "past event" and has_cjk(rule):
        kind = distractor(_NOT_ASPECT.sub("越", rule))  # "不超过 50 行": 超过 is "exceed", not a past 过
    if kind == "past event" and (_DIRECTIVE_CLAUSE.match(rule) or opens_with_verb(rule)):
        return True  # "always use the structured logger": an imperative has no tense
    return kind not in _NOT_A_RULE


def _first_rule(text: str, ctx: Ctx) -> Found | None:
    found = next((f for f in (rule(text, ctx) for rule in RULES.values()) if f), None)
    if found is not None and found.type == "feedback" and not standing_rule(found, text, ctx):
        return None
    if found is not None and found.type == "user" and found.kind != "deadline" and has_relative_date(text):
        # "I'm training for the half marathon, it's on April 18": the date makes it an event
        return RULES["dated"](text, ctx) or found
    return found


def found_in(core: str, ctx: Ctx, *, accepted: str | None, remember: bool, all_rules: bool) -> list[Found]:
    """What one sentence states: an accepted offer, a remember-request, or what the rules find.

    A sentence whose clauses state facts of different kinds ("I'm a data engineer, and the
    DAGs live in the etl repo") gives one record per clause; otherwise the whole sentence is
    tried first and its clauses only when no rule takes it as a whole.
    """
    if accepted:
        found = accepted_feedback(accepted, core, ctx)  # "Should I …?" / "Yes, from now on."
        if found is not None:
            return [found]
    parts = clauses(core, min_words=2 if ctx.standing else 3)
    if remember:
        several = _by_clause(parts, ctx)
        for found in several:
            found.priority = 0
        found = rule_remember(core, ctx) if len(several) < 2 else None
        if found is not None or several:
            return several if found is None else [found]
    if not all_rules:
        return []
    if parts and _for_now(parts[0]) and not is_standing(core):
        return []  # "先在 dev 上跑一下，只跑这三天，别跑全量": what follows a request for now is about that task
    # small talk in any part of the sentence ("一切都会好的，别担心") makes none of its clauses a statement
    chat = distractor(core) in _CHAT
    each = _by_clause(parts, ctx, statements=not chat)
    if len(each) >= 2:
        return each
    whole = _first_rule(core, ctx)
    if whole is not None:
        return [whole]
    one = _by_clause(parts, ctx, kinds=1, statements=not chat)[:1]
    if one:
        return one
    stated = rule_statement(core, ctx)  # recall by default: a lasting statement no named rule took
    return [stated] if stated is not None else []


# What makes a directive hold for good without "always" or "from now on": a scope over every case ("on any
# machine", "for every billing task", "everything", "一概", "任何"), a limit by number ("under 250 words"), or
# the sentence after it naming it a rule ("That's policy.", "这是规矩").
_SCOPE = re.compile(
    r"\b(?:any|every|each|all)\s+(?!of\b|the\b|this\b|that\b|my\b|our\b)[\w-]+|\b(?:anything|everything|at all)\b|"
    # a limit on every thing of a kind ("keep cover letters under 250 words"), not on the one at hand
    r"(?<!\bthe\s)(?<!\bthis\s)(?<!\bthat\s)(?<!\bmy\s)(?<!\byour\s)(?<!(?<!\s)\b[a-z][\w-])\b[a-z][\w-]*[a-rt-z]s\s+(?:under|below|within|at most|no more than|"
    r"less than|fewer than)\s+\S*\d|"
    r"一概|任何|凡是|全都|一个都不|一個都不|(?:什么|什麼)都(?:不|别|別)",
    re.I,
)
_RULE_LABEL = re.compile(
    r"^(?:and\s+)?(?:that|this|it)(?:'s|\s+is)\s+(?:(?:a|the|our|company|team|house|standing|hard|firm|strict)\s+)*"
    r"(?:policy|rule|procedure|protocol|convention|requirement|standard|non-negotiable)\b|"
    r"^(?:这|這|那)是(?:我们的|我們的|公司的|团队的|團隊的)?(?:规矩|規矩|规定|規定|硬性规定|硬性規定|铁律|鐵律|流程|制度)",
    re.I,
)


_WE_NEVER = re.compile(r"^(?:we|i)\s+(?:never|don't|dont|do not)\s+(?!know|think|care|mind|remember|have|get)\w", re.I)
_LEAD_CONDITION = re.compile(r"^(?:when|whenever|if|for|on|in|with)\b[^,，]{2,60}[,，]\s*", re.I)
_WHEN_YOU = re.compile(r"^(?:when|whenever|if|any time)\s+you\s+\S+", re.I)
# a bare verb opening the sentence before its object: "Report anything like that to …", "Send all invoices to …"
_VERB_OBJECT = re.compile(
    r"^(?!(?:i|we|you|they|he|she|it|there|here|this|that|what|who|when|where|why|how|which|every|each|all|any|no|"
    r"some|the|a|an|my|our|your|their)\b)[a-z]{3,}(?<!s)(?<!ed)(?<!ing)\s+(?:anything|everything|all|every|any|each)\b",
    re.I,
)
_PLEASE_INSIDE = re.compile(r"\s(?:pls|plz|please)\b", re.I)
# "anything like that" names a kind, and "make sure that every …" opens a clause: neither points at one thing
_NOT_DEICTIC = re.compile(
    r"\blike (?:this|that)\b|\bthat(?=\s+(?:every|each|all|any|no|the|a|an|we|you|i|they|it|our|my|your)\b)", re.I
)


def _directive_head(core: str) -> str | None:
    """The directive a clause gives, after a condition ("when you draft anything for the school keep
    it short" → "keep it short"), or None when it gives none."""
    for head in (_LEAD_CONDITION.sub("", core.strip()), core.strip()):
        if _DIRECTIVE_CLAUSE.match(head) or opens_with_verb(head) or _WE_NEVER.match(head) or _VERB_OBJECT.match(head):
            return head
    when = _WHEN_YOU.match(head)
    if when:
        words = head[when.end():].split()
        for k in range(1, min(len(words), 10)):
            rest = " ".join(words[k:])
            if opens_with_verb(rest):
                return rest
    if _PLEASE_INSIDE.search(head) and not re.match(r"^(?:i|we|my|our|you)\b", head, re.I):
        return head  # "units in km pls, everything": the request is in the middle
    return None


def standing_directive(core: str, ctx: Ctx) -> Found | None:
    """A directive no rule took as standing, when its structure says it holds for good: a scope
    over every case ("on any machine", "for every billing task", "anything you write for me",
    "一概"), a limit by number ("under 250 words"), or a sentence naming it a rule ("That's
    policy.", "…; that is standing procedure", "这是规矩"). It must read as a directive — an
    imperative, "we never/don't …", "别/不要 …", after a condition — so "every time I run the build
    it crashes" stays a complaint, and a one-off edit made wide ("rename X everywhere") is still
    one task."""
    if has_cjk(core):
        return _standing_directive_zh(core, ctx)
    said, _, tail = core.partition("; ")
    labelled = bool(_RULE_LABEL.match(tail.strip()) or (ctx.next_sentence and _RULE_LABEL.match(ctx.next_sentence.strip())))
    core = said if _RULE_LABEL.match(tail.strip()) else core
    head = _directive_head(core)
    if head is None or not (_SCOPE.search(core) or labelled) or is_temporary(core) or is_hypothetical(core):
        return None
    if ONE_OFF_EDIT.match(head) or distractor(head) in _NOT_A_RULE or TESTS_EN["deictic"](_NOT_DEICTIC.sub("", head)):
        return None  # "check that file for anything odd": the scope is inside the one thing at hand
    at = core.rfind(head)
    if at > 0 and not core[:at].rstrip().endswith((",", "，")):
        core = f"{core[:at].rstrip()}, {head}"  # "when you X keep it short": the condition ends where the verb starts
    return _with_next_reason(_first_rule(core, replace(ctx, standing=True)), ctx)


# A Chinese rule: don't / must / only / one way for all ("别", "不要", "禁止", "须", "只用", "统一", "一概")
_ZH_RULE_MARK = re.compile(r"(?<![错錯区區特告类類分性级級个個识識辨差送派临臨])(?:别|別)|不要|禁止|不许|不許|不准|(?<![必无無])须|(?<![必无無])須|只用|只能用|统一|統一|一概|一律")
# a reason inside the sentence: "…，锁文件会乱", "…，看了会掉粉", "…，因为…", "…，不然…"
_ZH_REASON_INSIDE = re.compile(rf"[，,；;]\s*(?:[^，,；;]{{0,12}}(?:会|會|容易)|{lex.REASON_ZH}|{lex.OTHERWISE_ZH}|{lex.LEST_ZH})")


def _with_next_reason(found: Found | None, ctx: Ctx) -> Found | None:
    """A standing rule found by its structure, with the sentence after it as its reason when that
    sentence is a plain statement ("Keep cover letters under 250 words. Recruiters skim.").
    A rule that names the address it sends the work to is kept as a reference (see
    :func:`dreamd.models.offline.extract.facts.rule_feedback_or_address`); any other type is no rule."""
    if found is None or found.type not in ("feedback", "reference"):
        return None
    after = tidy(ctx.next_sentence or "").rstrip(".。!！")
    if (found.reason is None and after and not _directive(after) and not after.endswith(("?", "？"))
            and not _ERRAND.match(after) and statement_distractor(after) in (None, "fragment")
            and (_zh_size(after) >= 4 if has_cjk(after) else len(after.split()) >= 2)):
        found.reason = after
    return found


def _standing_directive_zh(core: str, ctx: Ctx) -> Found | None:
    """A Chinese directive no rule took as standing that holds for good by its structure: it is said
    of a kind of thing, named before it as its topic ("回复别加客套话", "代码别写太花", "文案里别用…",
    "commit message 统一用英文"), or with its reason in the same sentence ("…，锁文件会乱"), or it
    says "without exception" (一概). A directive about this moment or this thing ("先别提交", "这个函数
    别改") is not one, nor one that opens the sentence with no topic ("别管")."""
    mark = _ZH_RULE_MARK.search(core)
    if mark is None or is_temporary(core) or is_hypothetical(core) or NOW_OR_THIS_ZH.search(core):
        return None
    if any(TESTS_ZH[name](core) for name in ("encouragement", "feeling", "exclamation", "reported")):
        return None  # "这事别灰心": comfort, not a rule
    clause_start = max(core.rfind(c, 0, mark.start()) for c in "，,；;。 ") + 1
    topic = core[clause_start : mark.start()].strip()
    topical = _zh_size(topic) >= 2 and not re.match(r"^(?:我|你|您|他|她|它|咱|大家)", topic)
    if not (topical or _ZH_REASON_INSIDE.search(core[mark.end() :]) or "一概" in core):
        return None
    return _with_next_reason(_first_rule(core, replace(ctx, standing=True)), ctx)


def _by_clause(parts: list[str], ctx: Ctx, *, kinds: int = 2, statements: bool = True) -> list[Found]:
    """One record per clause when the clauses state facts of ``kinds`` or more kinds, else none."""
    if len(parts) < kinds:
        return []
    each: list[Found] = []
    previous: Found | None = None  # the clause before's record, if any: then each[-1]
    first_person_zh = _ZH_I.match(parts[0]) is not None
    carried = 0
    for i, part in enumerate(parts):
        consequence = _CONSEQUENCE.match(part)
        bare = part[consequence.end() :].strip(" ,，") if consequence else part
        bare = with_subject(bare, parts[i - 1]) if i else bare  # "our PM is Dana; she owns the roadmap"
        found = _first_rule(bare, ctx)
        shares_i = bool(i and first_person_zh and not consequence and _ZH_NO_SUBJECT_START.match(bare))
        if found is None and shares_i:
            # "我今年 29，在杭州做财务，周末一般会去爬山": the clauses after the first share its 我
            found = _first_rule("我" + bare, ctx)
            found = found if found is not None and found.type == "user" and not _ZH_MOOD.search(bare) else None
            carried += found is not None
        carries_on = bool(i and found is None and _ZH_CARRY_ON.match(bare))
        if found is None and statements and not carries_on:
            # a clause no rule took can still be a statement of its own, unless it carries on the one
            # before without a subject of its own ("我们的日志库是 ClickHouse，部署在自建机房")
            found = rule_statement(bare, ctx)
        if (previous is not None and previous.type == "reference"
                and (found is None or found.type == "project") and _DETAIL.match(bare.strip(" .。"))):
            # "crash reports go to Bugsnag, and the project key is mobile-ios": the part's name stays with the pointer
            previous.fact = f"{previous.fact.rstrip('。.')}{'，' if has_cjk(bare) else ', '}{bare}"
            continue
        if found is None and previous is not None and _labelled_place(bare):
            # "the job runner is Nomad, console at nomad.internal": where it lives finishes the clause before
            place = rule_statement(f"{parts[i - 1]}{'，' if has_cjk(bare) else ', '}{bare}", ctx)
            if place is not None and place.type == "reference" and previous.type in ("project", "reference"):
                each[-1] = previous = place
                continue
        if consequence and found is not None:
            if found.type != "feedback":
                # "…, so this has to merge first", "I'm a baker, so I get up early": a consequence is not a
                # fact of its own (it stays in the record of the clause before, in the user's words)
                found = None
            else:
                found.reason = found.reason or tidy(parts[i - 1]) if i else found.reason
        lasting = previous is not None and previous.kind != "deadline"  # a dated push is not a standing reason
        grounded = bool(_ABOUT_USER.match(parts[i - 1]) or lasting) if i else False
        errand = _ERRAND.match(bare) is not None  # "…, so remind me to renew it": a task, not a rule
        if found is None and grounded and not errand and (_DIRECTIVE_CLAUSE.match(bare) or opens_with_verb(bare)):
            # "I have asthma, so please avoid …" / "我有哮喘，别给我推荐…": the clause before is the reason
            joiner = "，因为" if has_cjk(bare) else " because "
            found = _first_rule(f"{bare}{joiner}{parts[i - 1]}", ctx)
            found = found if found is not None and found.type == "feedback" else None
        if (found is not None and found.type == "feedback" and found.reason is None and lasting
                and previous is not None and previous.type in ("user", "project")):
            # where a thing lives, or another rule, is no reason for this one
            found.reason = tidy(parts[i - 1])  # "the old service is deprecated, don't add features to it"
        if (consequence and found is not None and previous is not None  # found is feedback (above)
                and (previous.kind == "deadline" or absolutize_dates(parts[i - 1], ctx.day) != parts[i - 1])
                and not is_standing(bare)):
            found = None  # "we move on March 6, so keep that weekend clear": for that date, not a standing rule
        if (found is not None and found.type == "feedback" and previous is not None
                and previous.kind == "statement" and previous.type == "project" and _said_both_ways(parts[i - 1], bare)):
            # "errors go out as problem+json, never plain strings", "单测用 AssertJ，别用 Hamcrest": the way
            # the work is done, said from the other side too, is one rule
            joined = f"{previous.fact}{'，' if has_cjk(bare) else ', '}{bare}"
            previous.kind, previous.type, previous.name_prefix, previous.how = "both-ways", "feedback", "rule", HOW["feedback-pos"]
            previous.fact = previous.description = joined if has_cjk(joined) else sentence_case(joined)
            continue
        if found is not None:
            each.append(found)
        previous = found
    # Clauses that each state a fact: "I have five years of Go and I'm rusty on CSS", "we use tabs,
    # and never commit generated code" (a clause that states none, "…, so anything helps", adds nothing).
    # (Chinese clauses after a comma usually carry on one fact, so there the kinds must differ.)
    english = not any(has_cjk(p) for p in parts)
    each = _fold_into_pointers(each)
    if carried and len(each) >= 2 and all(f.type == "user" for f in each):
        # Chinese clauses sharing one 我 are one self-description: one record that keeps them all
        first = each[0]
        rest = "，".join(re.sub(r"^用户", "", f.fact) for f in each[1:])
        joined = f"{first.fact}，{rest}"
        return [Found(first.kind, "user", first.name_prefix, first.slug_source, joined, joined, how=first.how)]
    # two places, each said with its own subject ("监控在 metrics…，告警发到 #pay-alert 群"), are two pointers
    places = len(each) >= 2 and all(f.type == "reference" and _OWN_PLACE.search(f.fact) for f in each)
    distinct = len({f.type for f in each}) >= kinds or english or places
    return each if len(each) >= kinds and distinct else []


_LABEL_PLACE = re.compile(
    r"^(?:[\w-]++\s*+){0,3}[:：]?\s*+(?:at|in|on|under|is|=)?\s*+(?:https?://\S+|[\w.-]+\.[a-z]{2,}\S*|[\w.-]*/[\w./-]+|#[\w-]+)$|"
    r"^(?:[\u4e00-\u9fff]{1,6})\s*+(?:是|在|[:：])?\s*+(?:https?://\S+|[\w.-]+\.[a-z]{2,}\S*|[\w.-]*/[\w./-]+|#[\w-]+)$",
    re.I,
)


# a part of a place and its name: "the project slug is web-frontend", "its index is app-logs-*" (in
# Chinese, "…，索引是 web-logs-*" is as often labelled a fact of its own: left as its own clause)
_DETAIL = re.compile(
    r"^(?:the|its|their)\s+(?:[\w-]+\s+){0,2}(?:name|slug|key|index|namespace|id|title|"
    r"project|bucket|prefix|tag|label|channel|space|folder|board|queue|topic)\s*(?:is|=|:)\s*"
    r"(?:[“\"'「][^”\"'」]{1,40}[”\"'」]|[\w.*/#@+-]*[-_./*#@0-9][\w.*/#@+-]*|(?-i:[A-Z])\w+)$",
    re.I,
)


def _labelled_place(clause: str) -> bool:
    """A clause that is only a label and a place: "admin at https://…", "地址 cfg.internal", "docs: wiki/x"."""
    return _LABEL_PLACE.match(clause.strip(" .。")) is not None


_OWN_PLACE = re.compile(r"[\u4e00-\u9fff\w]\s*(?:在|放在|存在|发到|發到|打到|存到|放到)\s*\S")
_USES_TOOL = re.compile(
    r"用的是|采用的是|採用的是|\b(?:uses?|is|are|is called|called|named)\s+(?-i:[A-Z])|(?:叫|名叫|叫做)\s*[A-Za-z]", re.I
)


def _fold_into_pointers(each: list[Found]) -> list[Found]:
    """"网关用的是 Kong，配置在 gateway/kong.yml": which tool it is and where its config lives is one
    pointer, not a project fact and a pointer ("we deploy with ArgoCD, the manifests are in …" stays two)."""
    out: list[Found] = []
    for f in each:
        prev = out[-1] if out else None
        if (prev is not None and prev.kind in ("context", "statement") and prev.type == "project" and f.type == "reference"
                and _USES_TOOL.search(prev.fact) and not re.search(r"\d", prev.fact)):
            f.fact = f"{prev.fact.rstrip('。.')}{'，' if has_cjk(prev.fact) else '; '}{f.fact}"
            f.description = f.fact  # "Its admin UI: …" alone would lose what "it" is
            out[-1] = f
            continue
        out.append(f)
    return out


__all__ = ["clauses", "found_in", "lasting_part", "standing_directive", "with_subject"]
