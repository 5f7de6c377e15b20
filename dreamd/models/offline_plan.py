"""Offline consolidation planning: expire, merge near-duplicates, resolve contradictions.

The answer for ``{"task": "consolidate", "today", "records", "recent"}`` is a list of
operations ``{"source_names": [...], "result": {name, type, description, body} | null}``.
The rules, applied in this order:

1. **Expire** — a record whose ``expires`` date is before ``today`` and whose ``importance``
   is under 0.8 becomes ``{"source_names": [name], "result": null}``. Expired records take no
   part in merging. A missing or unparseable date never expires anything.
2. **Group** — the other records are visited newest first (``updated_at``, then
   ``created_at``, then name). Each joins the first group whose newest record (the *base*)
   has the same type and is either a near-duplicate or a contradiction of it; otherwise it
   starts a group. Comparing only with the base keeps groups from chaining A~B~C. (Only
   groups whose base shares a token or an alternatives set with the record are compared:
   every rule below needs one, and it keeps a 1,000-record plan well under a second.)
   - *near-duplicate*: over the statement text (description + body without the
     ``**Why:**``/``**How to apply:**`` lines), token Jaccard ≥ 0.5, or containment ≥ 0.8
     of the body facts or of the whole statement (sets of at least 3 tokens);
   - *contradiction* (same subject, different value), on the description or first fact line:
     (a) polarity — one is negated ("don't", "never", "avoid", "不要", "别", …) and the other
     not, and the rest is nearly the same (Jaccard ≥ 0.75); (b) alternatives — the first
     word each mentions from a known set of mutually exclusive choices (tabs/spaces,
     npm/yarn/pnpm, vim/emacs/vscode, postgres/mysql/sqlite, light/dark, …) differs and the
     rest is similar (Jaccard ≥ 0.5); (c) same subject, different value — "<subject> is/are/:
     <value>" with the same subject (Jaccard ≥ 0.8, not a bare "Decision"/"Goal"/"Note")
     and different short values (Jaccard < 0.5).
3. **Merge** — each group of two or more becomes one op: its sources are every member, its
   result reuses the base's name, type and description and keeps the base's body verbatim,
   adding each older member's fact lines that the result does not already cover (at most
   10 % of the line's tokens new) and that do not contradict a line already there. An older
   record that contradicts the base as a whole adds nothing: the newer statement wins.
   Extra reasons go into the base's ``**Why:**`` line.

Records no op names stay as they are. ``recent`` is accepted and ignored: the offline
planner looks at the whole set every time, which is cheap at these sizes. Ops come out
sorted (expiries by name, then merges by result name) so the plan is deterministic.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from dreamd.models.offline_text import (
    NEGATIONS,
    ZH_NEGATIONS,
    containment,
    has_cjk,
    jaccard,
    parse_date,
    raw_words,
    tokens,
)
from memory.records import MAX_BODY_BYTES, MAX_DESCRIPTION_CHARS, NAME_RE, TYPES

EXPIRE_PROTECT_IMPORTANCE = 0.8
COVERED_MISSING = 0.1
"""An older fact line is already covered when at most this share of its tokens is new."""
_WHY = re.compile(r"^\s*\*\*why:?\*\*:?\s*", re.I)
_HOW = re.compile(r"^\s*\*\*how to apply:?\*\*:?\s*", re.I)

ALTERNATIVES: tuple[frozenset[str], ...] = tuple(
    frozenset(group.split())
    for group in (
        "tab space",
        "vim neovim nvim emacs vscode intellij pycharm sublime nano helix zed",
        "npm yarn pnpm bun",
        "pip poetry uv pipenv conda pdm",
        "pytest unittest nose",
        "jest vitest mocha jasmine",
        "postgres postgresql mysql mariadb sqlite mongodb mongo dynamodb",
        "light dark",
        "react vue angular svelte solid",
        "webpack vite esbuild rollup parcel",
        "single double",
        "camelcase snake_case kebab-case pascalcase",
        "rebase merge",
        "aws gcp azure",
        "bash zsh fish",
        "english chinese 英文 中文",
        "制表 空格",
        "true false",
        "on off",
        "enabled disabled",
    )
)
_GENERIC_WHY = re.compile(r"no reason was (?:stated|given|recorded)|未说明原因")
"""The offline extractor's placeholder reason: never worth carrying into a merged record."""
_GENERIC_SUBJECTS = frozenset({"decision", "goal", "note", "决定", "目标", "目標", "deadline", "remember"})


@dataclass(frozen=True)
class Rec:
    name: str
    type: str
    description: str
    body: str
    stamp: str
    importance: float
    expires: dt.date | None

    @cached_property
    def fact_lines(self) -> list[str]:
        lines = [ln.strip() for ln in self.body.splitlines()]
        facts = [ln for ln in lines if ln and not _WHY.match(ln) and not _HOW.match(ln)]
        return facts or [self.description]

    @cached_property
    def statement_tokens(self) -> frozenset[str]:
        return frozenset(tokens(self.description + "\n" + "\n".join(self.fact_lines)))

    @cached_property
    def fact_tokens(self) -> frozenset[str]:
        return frozenset(tokens(" ".join(self.fact_lines)))

    @cached_property
    def heads(self) -> tuple[Statement, Statement]:
        """The description and the first fact line, the two places a record states its point."""
        return analyse(self.description), analyse(self.fact_lines[0])

    @cached_property
    def keys(self) -> frozenset[str]:
        """Index keys: any record this one can match shares at least one of them."""
        alts = {f"#alt{h.alternative[0]}" for h in self.heads if h.alternative}
        return self.statement_tokens | self.heads[0].tokens | self.heads[1].tokens | alts


def _stamp(item: Mapping[str, Any]) -> str:
    for key in ("updated_at", "created_at"):
        value = item.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _importance(value: Any) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
        return float(value)
    return 0.5


def _records(payload: Mapping[str, Any]) -> list[Rec]:
    out: list[Rec] = []
    seen: set[str] = set()
    for item in payload.get("records") or []:
        if not isinstance(item, Mapping):
            continue
        name, type_ = item.get("name"), item.get("type")
        if not isinstance(name, str) or not isinstance(type_, str) or name in seen:
            continue
        seen.add(name)
        out.append(
            Rec(
                name=name,
                type=type_,
                description=" ".join(str(item.get("description") or "").split()),
                body=str(item.get("body") or ""),
                stamp=_stamp(item),
                importance=_importance(item.get("importance")),
                expires=parse_date(item.get("expires")),
            )
        )
    return out


# ----------------------------------------------------------------------------- relations

def near_duplicate(a: Rec, b: Rec) -> bool:
    ta, tb = set(a.statement_tokens), set(b.statement_tokens)
    if jaccard(ta, tb) >= 0.5:
        return True
    fa, fb = set(a.fact_tokens), set(b.fact_tokens)
    if min(len(fa), len(fb)) >= 3 and containment(fa, fb) >= 0.8:
        return True
    return min(len(ta), len(tb)) >= 4 and containment(ta, tb) >= 0.8


_DIRECTIVE_WORDS = frozenset({"always", "never", "dont", "avoid", "stop", "instead", "prefer",
                              "please", "use", "using"})


def _negated(text: str) -> bool:
    words = set(raw_words(text))
    if words & NEGATIONS:
        return True
    return any(neg in text for neg in ZH_NEGATIONS)


def _strip_negation(text: str) -> set[str]:
    for neg in ZH_NEGATIONS:
        text = text.replace(neg, " ")
    return tokens(text) - NEGATIONS - _DIRECTIVE_WORDS


def _first_alternative(text: str) -> tuple[int, str] | None:
    for word in raw_words(text):
        for i, group in enumerate(ALTERNATIVES):
            w = word if word in group or not word.endswith("s") else word[:-1]
            if w in group:
                return i, ("postgres" if w == "postgresql" else "neovim" if w == "nvim" else w)
    for i, group in enumerate(ALTERNATIVES):
        for member in group:
            if has_cjk(member) and member in text:
                return i, member
    return None


def _subject_value(text: str) -> tuple[set[str], set[str]] | None:
    m = re.match(r"^(?P<s>.+?)(?:\s+(?:is|are|was|were|will be)\s+|\s*[:：]\s*)(?P<v>.+)$", text, re.I)
    if not m:
        return None
    subj, value = tokens(m.group("s")), tokens(m.group("v"))
    if not subj or not value or subj <= _GENERIC_SUBJECTS or len(value) > 4:
        return None
    return subj, value


@dataclass(frozen=True)
class Statement:
    """What the contradiction rules need to know about one line, computed once."""

    tokens: frozenset[str]
    negated: bool
    without_negation: frozenset[str]
    alternative: tuple[int, str] | None
    without_alternative: frozenset[str]
    subject_value: tuple[set[str], set[str]] | None


@lru_cache(maxsize=8192)
def analyse(text: str) -> Statement:
    toks = frozenset(tokens(text))
    alt = _first_alternative(text)
    if alt:
        group = ALTERNATIVES[alt[0]]
        without_alt = frozenset(t for t in toks if t not in group) - _DIRECTIVE_WORDS
    else:
        without_alt = frozenset()
    return Statement(
        tokens=toks,
        negated=_negated(text),
        without_negation=frozenset(_strip_negation(text)),
        alternative=alt,
        without_alternative=without_alt,
        subject_value=_subject_value(text),
    )


def _contradict(x: Statement, y: Statement) -> bool:
    if x.negated != y.negated:
        rx, ry = set(x.without_negation), set(y.without_negation)
        if rx and ry and jaccard(rx, ry) >= 0.75:
            return True
    ax, ay = x.alternative, y.alternative
    if ax and ay and ax[0] == ay[0] and ax[1] != ay[1]:
        rx, ry = set(x.without_alternative), set(y.without_alternative)
        if (not rx and not ry) or jaccard(rx, ry) >= 0.5:
            return True
    sx, sy = x.subject_value, y.subject_value
    return bool(sx and sy and jaccard(sx[0], sy[0]) >= 0.8 and jaccard(sx[1], sy[1]) < 0.5)


def statements_contradict(x: str, y: str) -> bool:
    """Whether two one-line statements say different things about the same subject."""
    return _contradict(analyse(x), analyse(y))


def contradicts(a: Rec, b: Rec) -> bool:
    return _contradict(a.heads[0], b.heads[0]) or _contradict(a.heads[1], b.heads[1])


# ----------------------------------------------------------------------------- merging

def _covered(line: str, pool: set[str]) -> bool:
    toks = tokens(line)
    if not toks:
        return True
    return len(toks - pool) / len(toks) <= COVERED_MISSING


def merge_group(group: list[Rec]) -> dict[str, str]:
    """The result of merging ``group`` (newest first) into its base ``group[0]``."""
    base = group[0]
    base_lines = base.body.strip("\n").splitlines() if base.body.strip() else [base.description]
    extra_facts: list[str] = []
    extra_whys: list[str] = []
    facts = list(base.fact_lines)
    pool = tokens(base.description) | tokens(" ".join(facts))
    why_pool = tokens(" ".join(ln for ln in base_lines if _WHY.match(ln)))
    for old in group[1:]:
        if contradicts(old, base):
            continue
        for line in old.fact_lines:
            if _covered(line, pool) or any(statements_contradict(line, f) for f in facts):
                continue
            facts.append(line)
            extra_facts.append(line)
            pool |= tokens(line)
        for line in old.body.splitlines():
            if _WHY.match(line):
                reason = _WHY.sub("", line).strip()
                if reason and not _GENERIC_WHY.search(reason) and not _covered(reason, why_pool):
                    extra_whys.append(reason)
                    why_pool |= tokens(reason)
    lines = list(base_lines)
    if extra_facts:
        at = next((i for i, ln in enumerate(lines) if _WHY.match(ln) or _HOW.match(ln)), len(lines))
        lines[at:at] = extra_facts
    if extra_whys:
        why_at = next((i for i, ln in enumerate(lines) if _WHY.match(ln)), None)
        if why_at is None:
            lines.append("**Why:** " + " ".join(extra_whys))
        else:
            lines[why_at] = lines[why_at].rstrip() + " " + " ".join(extra_whys)
    description = " ".join((base.description or base.fact_lines[0]).split())
    if len(description) > MAX_DESCRIPTION_CHARS:
        description = description[: MAX_DESCRIPTION_CHARS - 1].rstrip() + "…"
    body = "\n".join(lines).strip("\n")
    if len((body + "\n").encode("utf-8")) > MAX_BODY_BYTES:
        body = base.body.strip("\n")  # the union would not fit: keep the newest wording alone
    return {
        "name": base.name,
        "type": base.type,
        "description": description,
        "body": (body or description) + "\n",
    }


def plan(payload: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The offline answer to a consolidation payload (see the module docstring for the rules)."""
    today = parse_date(payload.get("today"))
    records = _records(payload)
    expired = sorted(
        r.name
        for r in records
        if today is not None
        and r.expires is not None
        and r.expires < today
        and r.importance < EXPIRE_PROTECT_IMPORTANCE
    )
    ops: list[dict[str, Any]] = [{"source_names": [name], "result": None} for name in expired]
    gone = set(expired)
    # Only records a valid result could be made of take part in merges (a result reuses the
    # base's name and type, and one invalid result would get the whole plan rejected).
    live = sorted(
        (r for r in records if r.name not in gone and NAME_RE.match(r.name) and r.type in TYPES
         and (r.description.strip() or r.body.strip())),
        key=lambda r: (r.stamp, r.name),
        reverse=True,
    )
    groups: list[list[Rec]] = []
    by_key: dict[tuple[str, str], list[int]] = {}
    for rec in live:
        candidates = sorted({g for k in rec.keys for g in by_key.get((rec.type, k), ())})
        for g in candidates:
            base = groups[g][0]
            if near_duplicate(base, rec) or contradicts(base, rec):
                groups[g].append(rec)
                break
        else:
            groups.append([rec])
            for k in rec.keys:
                by_key.setdefault((rec.type, k), []).append(len(groups) - 1)
    merged = sorted(
        ((group, merge_group(group)) for group in groups if len(group) > 1),
        key=lambda pair: pair[1]["name"],
    )
    ops.extend({"source_names": [r.name for r in group], "result": result} for group, result in merged)
    return ops


__all__ = ["ALTERNATIVES", "contradicts", "merge_group", "near_duplicate", "plan", "statements_contradict"]
