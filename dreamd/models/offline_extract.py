"""Offline extraction: memories from transcript turns by sentence structure, in English and Chinese.

The answer for ``{"task": "extract", "today", "index", "turns"}`` is a list of records with
exactly ``name``, ``type``, ``description``, ``body``. Only what the *user* typed becomes
memory (assistant turns give only "we decided/agreed …" decisions): tool calls, tool results,
fetched pages and files the agent read — roles other than user/assistant, ``[tool …]`` lines,
harness blocks, fenced code, quotes, pasted documents — never do, so an instruction planted
in a page ("remember: always run …") can never become a rule.

Each sentence goes through three steps:

1. **Filters** — a sentence holding a secret (``[REDACTED:``, key-like strings, "password is
   …"), a temporary instruction ("for now", "just this once", "for this PR", "这次", "暂时"),
   a question or a request ("can you …", "帮我 …") is skipped.
2. **Peeling** (:mod:`dreamd.models.offline_structure`) — lead-ins ("Hi!", "Before we start:",
   "Heads up,", "btw", "One more thing to keep in mind:", "先说一下规矩：", "还有，", "对了，")
   and trailing filler ("…, by the way", "…，哈哈") are removed and never reach a description;
   what they signalled is kept: a remember-request, a standing lead ("from now on", "以后"),
   or reported speech ("my friend keeps telling me: …" is someone else's words: skipped).
3. **Rules**, tried by name in the order of :data:`~dreamd.models.offline_facts.RULES`; the
   first that matches wins:
   ``identity`` (who the user is, with or without an article: "I'm the on-call SRE …",
   "我是做后端的"), ``reference`` (where things live), ``feedback`` (a directive about the
   work that is *standing* — always/never/every time/from now on/以后/一律/每次/永远, a general
   condition "when you …"/"…的时候", a limit, a convention, or a stated reason; encouragement
   and wellbeing advice never are, nor a description that happens to say "always"),
   ``preference`` (likes, habits, interests), ``decision`` (with its reason, "we're rewriting
   X because …" included), ``dated`` (deadlines, events and goals dated after the turn),
   ``context`` (what the work is and how it is set up). A sentence whose clauses state facts
   of different kinds gives one record per clause ("I'm a data engineer and the models live
   in models/marts"); a directive after the user's own circumstance takes it as its reason
   ("I have asthma, so please avoid …"). A remember-request no rule takes becomes a note
   (priority under the cap). An offer the assistant made ("Should I … before every commit?")
   that the user accepts as standing ("Yes, from now on") becomes feedback. A rules header
   ("ok so some ground rules.", "说几个规矩：") makes the sentences after it standing.

Bodies: the first line states the rule or fact (first person rewritten as "User …" /
"用户…"); feedback and project bodies follow it with ``**Why:**`` (the stated reason: after
because/since/因为, a clause of its own after a semicolon or comma — "…; it's a compliance
requirement", "…，这是公司规定", "…，方便我备课" — or the next sentence; only when none was
given, a note saying so) and ``**How to apply:**``. Dates are resolved against the turn's
timestamp (else the payload's ``today``): "next Friday", "in two weeks", "December 18",
"end of the month", "下个月 15 号", "月底", "下周三", "两周后" become ISO dates; a weekday in a
standing rule ("never deploy on Friday") names every such day and is left alone.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dreamd.models.offline_facts import RULES, URL, rule_remember
from dreamd.models.offline_rules import (
    HOW_KEY,
    HOW_ZH,
    WHY_NONE,
    WHY_NONE_ZH,
    Ctx,
    Found,
    accepted_feedback,
)
from dreamd.models.offline_structure import (
    accepts,
    announces_rules,
    correction_of,
    is_hypothetical,
    is_temporary,
    opens_with_verb,
    peel,
    proposal_of,
    standing_request,
)
from dreamd.models.offline_text import (
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
    r"^\s*Traceback \(most recent call last\):.*?(?:^[\w.]*(?:Error|Exception|Interrupt|Exit)\b[^\n]*$|\Z)",
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
    r"(?<=[.!?])(?<!\b\d\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bSt\.)(?<!\bvs\.)(?<!\bMrs\.)(?<!\be\.g\.)"
    r"(?<!\bi\.e\.)(?<!\betc\.)(?<!\bInc\.)(?<!\bLtd\.)\s+(?=[^\s])|(?<=[。！？；])"
)


_CLAUSE_SPLIT = re.compile(
    r"(?:,|;)\s+(?:and\s+|but\s+|also\s+)?(?=(?:never|always|don't|do not)\b)", re.I
)


_LEADING_CONDITION = re.compile(
    r"^(?:in|for|on|with|when|whenever|every time|each time|before|after|if|once|while|during|going forward|"
    r"from now on|in the future|by default|as a rule)\b",
    re.I,
)


_CLAUSES = re.compile(
    r";\s+|,\s+(?:and|but)\s+|,\s+(?=so\s)|,\s+(?=(?:never|always|don't|do not|please)\b)|\s+and\s+(?=(?:the|our|all|every|each|its|their|my|i|we)\b)|[，；]", re.I
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
_INSTEAD = re.compile(r"\binstead\b|\brather\b|改用|而是|换成|換成", re.I)
_REASON_CLAUSE = re.compile(
    r"^\s*(?:it's|it is|they're|they|this|that's|that|our|because|since|otherwise|else)\b", re.I
)
_CONSEQUENCE = re.compile(r"^(?:(?:so|therefore|hence|which means)\b|所以|因此|于是|於是)", re.I)


def clauses(core: str) -> list[str]:
    """The clauses of a sentence no rule took as a whole ("we deploy with ArgoCD and every
    service keeps its manifests in the deploy-configs repo"), each tried on its own."""
    raw = _CLAUSES.split(core)
    merged: list[str] = []
    for part in raw:
        if merged and (_REASON_CLAUSE.match(part) or _INSTEAD.search(part)):
            merged[-1] = f"{merged[-1]}; {part}"  # "…; our security review takes weeks" is the reason
        else:
            merged.append(part)
    parts = [(p if _CONSEQUENCE.match(p.strip()) else peel(p).core).strip(" ,，.。") for p in merged]
    return [p for p in parts if p and p != core and (len(p.split()) >= 3 or sum(map(has_cjk, p)) >= 4)]


def sentences(text: str) -> list[str]:
    """Sentences, and within one the clauses that start a directive of their own ("we use
    tabs, and never commit generated code …" is two)."""
    out: list[str] = []
    for line in text.splitlines():
        for part in _SENTENCE_SPLIT.split(line):
            clauses = [part.strip()] if part.strip() else []
            for i, clause in enumerate(clauses):
                fragment = len(re.split(r",|\bbecause\b|\bsince\b", clause)[0].split()) < 3  # "never npm, …"
                if i and (fragment or len(clauses[i - 1].split()) < 5 or _LEADING_CONDITION.match(clauses[i - 1])):
                    clauses[i] = f"{clauses[i - 1]}, {clause}"  # "In release notes, always …" is one rule
                    out.pop()
                out.append(clauses[i])
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
_ALTERNATIVE_NEXT = re.compile(r"^(?:instead[,:]?\s+)?(?:use|prefer|run|write|call|go with)\b", re.I)
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
    return "\n".join(lines) + "\n"


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
    from dreamd.models.offline_plan import statements_contradict

    return bool(old) and statements_contradict(new, old)


def _turn_day(turn: Mapping[str, Any], today: dt.date) -> dt.date:
    return parse_date(turn.get("timestamp")) or today


def _record_from(found: Found, day: dt.date) -> dict[str, str]:
    # A weekday in a standing rule ("never deploy on Friday") is every such day, not a date.
    weekdays = found.type == "project"

    def dated(text: str) -> str:
        return absolutize_dates(text, day, weekdays=weekdays)

    fact = dated(found.fact)
    desc = one_line(dated(found.description))
    reason = dated(found.reason) if found.reason else None
    shaped = Found(found.kind, found.type, found.name_prefix, found.slug_source, fact, desc,
                   reason=reason, how=found.how, priority=found.priority,
                   extra_lines=[dated(x) for x in found.extra_lines])
    slug_src = re.sub(r"(?<![A-Za-z0-9])\d+(?![A-Za-z0-9])", " ", URL.sub(" ", dated(found.slug_source)))
    name = make_name(found.name_prefix, slug_src, fallback=found.type)
    return {"name": name, "type": found.type, "description": desc, "body": _body(shaped, day)}


class _Answer:
    """The records picked so far, with the index they must not repeat and the names taken."""

    def __init__(self, index: list[_Indexed]) -> None:
        self.index = index
        self.taken = {e.name for e in index}
        self.picked: list[tuple[int, int, dict[str, str]]] = []
        self.seen: list[_Indexed] = []
        self.consumed: set[int] = set()

    def full(self) -> bool:
        return len(self.picked) >= MAX_RECORDS

    def remembered_full(self) -> bool:
        return sum(1 for p in self.picked if p[0] == 0) >= MAX_RECORDS

    def admit(self, found: Found, position: int, day: dt.date, nxt: str | None) -> None:
        """Shape ``found`` into a record and keep it unless it repeats the index or the answer."""
        if found.kind == "feedback" and nxt and _ALTERNATIVE_NEXT.match(nxt) and not has_secret(nxt):
            # "Don't mock the database. Use the real Postgres, because …": one rule
            alternative, alt_reason = split_reason(nxt)
            found.extra_lines.append(as_line(alternative))
            found.reason = found.reason or alt_reason
            self.consumed.add(position + 1)
        if found.reason is None and found.type in ("feedback", "project") and nxt:
            m = REASON_NEXT.match(nxt)
            if m and not has_secret(nxt):
                found.reason = tidy(m.group("r"))
        record = _record_from(found, day)
        if any(has_secret(v) for v in record.values()):
            return
        toks = frozenset(tokens(record["description"]))
        # A correction looks like what it corrects ("Don't mock the DB" vs "Mock the DB"):
        # it is kept under a fresh name so the next dream resolves it toward the newer one.
        known = [e for e in (*self.index, *self.seen) if not _corrects(record["description"], e.description)]
        if record["name"] in self.taken and any(e.name == record["name"] for e in known if e in self.index):
            return
        if any(e.type == record["type"] and _near_duplicate(toks, e.tokens) for e in known):
            return
        base, n = record["name"], 2
        while record["name"] in self.taken:
            suffix = f"-{n}"
            record["name"] = base[: 64 - len(suffix)] + suffix
            n += 1
        self.taken.add(record["name"])
        self.seen.append(_Indexed(record["name"], record["type"], toks, record["description"]))
        self.picked.append((found.priority, position, record))

    def correct(self, new: str, old: str | None, day: dt.date) -> bool:
        """Put the latest record right when the user corrects a value it holds.

        With the old value named ("it's 15, not 14") that text is replaced; otherwise the
        value of the same shape: a date for a date, a number for a number, a name for a name.
        """
        if not self.picked:
            return False
        record = self.picked[-1][2]
        text = record["description"] + "\n" + record["body"]
        new_abs = absolutize_dates(new, day)
        target: str | None = None
        if old and old in text:
            target = old
        else:
            shapes = (r"\d{4}-\d{2}-\d{2}", r"\d+(?:\.\d+)*", r"\b[A-Z][\w.+#-]*[A-Za-z0-9]\b")
            for shape in shapes:
                wanted = re.search(shape, new_abs)
                found = re.findall(shape, record["description"])
                if wanted and found:
                    target = found[-1]
                    new_abs = wanted.group(0) if shape != shapes[2] else new_abs
                    break
        if not target or target == new_abs:
            return False
        record["description"] = one_line(record["description"].replace(target, new_abs))
        record["body"] = record["body"].replace(target, new_abs)
        return True

    def records(self) -> list[dict[str, str]]:
        best = sorted(self.picked, key=lambda p: (p[0], p[1]))[:MAX_RECORDS]
        return [r for _, _, r in sorted(best, key=lambda p: p[1])]


def extract(payload: Mapping[str, Any]) -> list[dict[str, str]]:
    """The offline answer to an extraction payload (see the module docstring for the rules)."""
    today = parse_date(payload.get("today")) or dt.date(1970, 1, 1)
    index: list[_Indexed] = []
    for item in payload.get("index") or []:
        if isinstance(item, Mapping):
            desc = str(item.get("description", ""))
            index.append(_Indexed(str(item.get("name", "")), str(item.get("type", "")),
                                  frozenset(tokens(desc)), desc))
    answer = _Answer(index)
    position = 0
    offered: str | None = None
    rules_follow = False  # a rules header heads the user's sentences until the assistant speaks
    carry = False
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
        if role == "assistant":
            offered = proposal_of(cleaned)
            carry = False
        proposal, offered = (offered, None) if role == "user" else (None, offered)
        day = _turn_day(turn, today)
        sents = sentences(cleaned)
        rules_follow = carry
        for k, s in enumerate(sents):
            position += 1
            if position in answer.consumed:
                continue
            if has_secret(s):
                continue
            peeled = peel(s)
            core = peeled.core
            if is_temporary(core) or is_hypothetical(core):
                continue
            if announces_rules(s):
                rules_follow = True  # "ok so some ground rules." / "说几个规矩：" heads what follows
                if not re.search(r"[：:]\s*\S", s):
                    carry = carry or k == len(sents) - 1  # a header closing its turn heads the next user turns
                    continue
            asked = standing_request(core)
            if asked:
                core = asked  # "Can you always reply in English from now on?" is a rule
            elif peeled.reported or not core or is_question(core) or _REQUEST.match(core):
                continue
            if peeled.reported:
                continue
            nxt = sents[k + 1] if k + 1 < len(sents) else None
            ctx = Ctx(role=str(role), day=day, next_sentence=nxt, standing=peeled.standing or rules_follow,
                      remember=peeled.remember)
            if answer.remembered_full():
                break
            # Once the cap is reached by earlier records, only a remember-request can still
            # displace one, so the other rules (and their dedup work) are skipped.
            fix = correction_of(s) if role == "user" else None
            if fix and answer.correct(fix[0], fix[1], day):
                continue  # "sorry, I meant Postgres 15": the earlier record now says so
            accepted = proposal if k == 0 and accepts(s) else None
            for found in _found_in(core, ctx, accepted=accepted, remember=peeled.remember,
                                   all_rules=not answer.full()):
                answer.admit(found, position, day, nxt)
    return answer.records()


def _first_rule(text: str, ctx: Ctx) -> Found | None:
    return next((f for f in (rule(text, ctx) for rule in RULES.values()) if f), None)


def _found_in(core: str, ctx: Ctx, *, accepted: str | None, remember: bool, all_rules: bool) -> list[Found]:
    """What one sentence states: an accepted offer, a remember-request, or what the rules find.

    A sentence whose clauses state facts of different kinds ("I'm a data engineer, and the
    DAGs live in the etl repo") gives one record per clause; otherwise the whole sentence is
    tried first and its clauses only when no rule takes it as a whole.
    """
    if accepted:
        found = accepted_feedback(accepted, core, ctx)  # "Should I …?" / "Yes, from now on."
        if found is not None:
            return [found]
    parts = clauses(core)
    if remember:
        several = _by_clause(parts, ctx)
        for found in several:
            found.priority = 0
        found = rule_remember(core, ctx) if len(several) < 2 else None
        if found is not None or several:
            return several if found is None else [found]
    if not all_rules:
        return []
    each = _by_clause(parts, ctx)
    if len(each) >= 2:
        return each
    whole = _first_rule(core, ctx)
    if whole is not None:
        return [whole]
    return _by_clause(parts, ctx, kinds=1)[:1]


def _by_clause(parts: list[str], ctx: Ctx, *, kinds: int = 2) -> list[Found]:
    """One record per clause when the clauses state facts of ``kinds`` or more kinds, else none."""
    if len(parts) < kinds:
        return []
    each: list[Found] = []
    previous: Found | None = None
    for i, part in enumerate(parts):
        consequence = _CONSEQUENCE.match(part)
        bare = part[consequence.end() :].strip(" ,，") if consequence else part
        found = _first_rule(bare, ctx)
        if consequence and found is not None:
            if found.type != "feedback" and not (found.type == "user" and _ABOUT_USER.match(bare)):
                found = None  # "…, so this has to merge first": the consequence is not a fact of its own
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
        if found is not None and found.type == "feedback" and found.reason is None and lasting:
            found.reason = tidy(parts[i - 1])  # "the old service is deprecated, don't add features to it"
        if found is not None:
            each.append(found)
        previous = found
    # Every clause a fact of its own: "I have five years of Go and I'm rusty on CSS", "we use tabs,
    # and never commit generated code".
    # (Chinese clauses after a comma usually carry on one fact, so there the kinds must differ.)
    english = not any(has_cjk(p) for p in parts)
    distinct = len({f.type for f in each}) >= kinds or (english and len(each) == len(parts))
    return each if len(each) >= kinds and distinct else []


def extract_from_turns(
    turns: Sequence[Mapping[str, Any]], *, today: str, index: Sequence[Mapping[str, str]] = ()
) -> list[dict[str, str]]:
    """Convenience wrapper for tests and the demo: build the payload and extract."""
    return extract({"task": "extract", "today": today, "index": list(index), "turns": list(turns)})


__all__ = ["MAX_RECORDS", "clean_turn", "extract", "extract_from_turns", "raw_words", "sentences"]
