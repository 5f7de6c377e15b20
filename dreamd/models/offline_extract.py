"""Offline extraction: memories from transcript turns by pattern, in English and Chinese.

The answer for ``{"task": "extract", "today", "index", "turns"}`` is a list of records with
exactly ``name``, ``type``, ``description``, ``body``. The rules, in the order a sentence is
tried (the first that matches wins, one record per sentence at most):

1. **remember** — "remember that …", "remember: …", "remember to …", "please remember …",
   "keep in mind that …", "don't forget to …", "for future reference …", "记住/記住/记得/别忘了 …"
   (a rhetorical "Remember, …" is not a request). The rest is classified by rules 2–7; if none
   fits, "remember to X" becomes feedback "X", Chinese with 一定要/务必/不要/每次 … anywhere
   feedback, first-person text a ``user`` record, text with a URL or path a ``reference``,
   anything else a ``project`` note. Highest priority under the cap.
2. **identity** → ``user`` — "I'm a/an <role> …", "I work as/at/on …", "my name/role is …",
   "I've been writing X for …", "I'm new to …", "我是<role>", "我叫…", "名字叫…", "我在…工作".
3. **feedback** → ``feedback`` — a sentence that *starts* (after "no,", "please", "from now
   on", "以后", …) with don't / do not / never / always / stop / avoid / make sure / only use /
   "use X instead of Y", or 不要 / 别 / 永远不要 / 总是 / 一律 / 务必 / 改用 / 请用 …; also "I
   prefer/like it when you …", "I'd like you to …", "我希望你/我喜欢你/请你以后 …", anything after
   a standing lead ("from now on, …", "going forward, …", "以后…", "从现在开始…"), "<reason>, so
   never/always …" (the reason becomes the Why), and "I always X, please do the same". A
   following "Use Y …" sentence joins a feedback record as its second line (with its
   reason). The directive needs two content words (or three Chinese
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

Layout: this module cleans turns, filters sentences and assembles records; the patterns live
in :mod:`dreamd.models.offline_rules`, the text helpers in :mod:`dreamd.models.offline_text`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dreamd.models.offline_rules import (
    ALL_RULES,
    HOW_KEY,
    HOW_ZH,
    URL,
    WHY_NONE,
    WHY_NONE_ZH,
    Ctx,
    Found,
    rule_remember,
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
    fact = absolutize_dates(found.fact, day)
    desc = one_line(absolutize_dates(found.description, day))
    reason = absolutize_dates(found.reason, day) if found.reason else None
    shaped = Found(found.kind, found.type, found.name_prefix, found.slug_source, fact, desc,
                   reason=reason, how=found.how, priority=found.priority,
                   extra_lines=[absolutize_dates(x, day) for x in found.extra_lines])
    slug_src = re.sub(
        r"(?<![A-Za-z0-9])\d+(?![A-Za-z0-9])", " ", URL.sub(" ", absolutize_dates(found.slug_source, day))
    )
    name = make_name(found.name_prefix, slug_src, fallback=found.type)
    return {"name": name, "type": found.type, "description": desc, "body": _body(shaped, day)}


def extract(payload: Mapping[str, Any]) -> list[dict[str, str]]:
    """The offline answer to an extraction payload (see the module docstring for the rules)."""
    today = parse_date(payload.get("today")) or dt.date(1970, 1, 1)
    index: list[_Indexed] = []
    for item in payload.get("index") or []:
        if isinstance(item, Mapping):
            desc = str(item.get("description", ""))
            index.append(_Indexed(str(item.get("name", "")), str(item.get("type", "")),
                                  frozenset(tokens(desc)), desc))
    taken = {e.name for e in index}
    picked: list[tuple[int, int, dict[str, str]]] = []
    seen: list[_Indexed] = []
    position = 0
    consumed: set[int] = set()
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
            if position in consumed:
                continue
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
            if found.kind == "feedback" and nxt and _ALTERNATIVE_NEXT.match(nxt) and not has_secret(nxt):
                # "Don't mock the database. Use the real Postgres, because …": one rule
                alternative, alt_reason = split_reason(nxt)
                found.extra_lines.append(as_line(alternative))
                found.reason = found.reason or alt_reason
                consumed.add(position + 1)
            if found.reason is None and found.type in ("feedback", "project") and nxt:
                m = REASON_NEXT.match(nxt)
                if m and not has_secret(nxt):
                    found.reason = tidy(m.group("r"))
            record = _record_from(found, day)
            if any(has_secret(v) for v in record.values()):
                continue
            toks = frozenset(tokens(record["description"]))
            # A correction looks like what it corrects ("Don't mock the DB" vs "Mock the DB"):
            # it is kept under a fresh name so the next dream resolves it toward the newer one.
            known = [e for e in (*index, *seen) if not _corrects(record["description"], e.description)]
            if record["name"] in taken and any(e.name == record["name"] for e in known if e in index):
                continue
            if any(e.type == record["type"] and _near_duplicate(toks, e.tokens) for e in known):
                continue
            base, n = record["name"], 2
            while record["name"] in taken:
                suffix = f"-{n}"
                record["name"] = base[: 64 - len(suffix)] + suffix
                n += 1
            taken.add(record["name"])
            seen.append(_Indexed(record["name"], record["type"], toks, record["description"]))
            picked.append((found.priority, position, record))
    best = sorted(picked, key=lambda p: (p[0], p[1]))[:MAX_RECORDS]
    return [r for _, _, r in sorted(best, key=lambda p: p[1])]


def extract_from_turns(
    turns: Sequence[Mapping[str, Any]], *, today: str, index: Sequence[Mapping[str, str]] = ()
) -> list[dict[str, str]]:
    """Convenience wrapper for tests and the demo: build the payload and extract."""
    return extract({"task": "extract", "today": today, "index": list(index), "turns": list(turns)})


__all__ = ["MAX_RECORDS", "clean_turn", "extract", "extract_from_turns", "raw_words", "sentences"]
