"""Offline consolidation planning: expire, merge what an explicit newer statement replaces,
merge duplicates and paraphrases, lose nothing.

The answer for ``{"task": "consolidate", "today", "records", "recent"}`` is a list of
operations ``{"source_names": [...], "result": {name, type, description, body} | null}``.
The rules, applied in this order (clauses, "still said" and supersession are defined in
:mod:`dreamd.models.offline.compare.clauses`, the paraphrase gist in :mod:`dreamd.models.offline.compare.paraphrase`):

1. **Expire** — a record whose ``expires`` date is before ``today`` and whose ``importance``
   is under 0.8 becomes ``{"source_names": [name], "result": null}``. A missing or
   unparseable date never expires anything. Nothing else is ever dropped.
2. **Supersede** — a record that a strictly newer live record (``updated_at``, then
   ``created_at``) explicitly replaces ("no longer", "moved to", "switched from X to Y",
   "instead of", "改成", "不再", "换成", "已迁到", or a change word — "now", "from now on",
   "现在", "改用" … — with the older wording kept and one value replaced by another of the
   same kind) is set aside for the newest record that replaces it, with the clauses it
   replaces (all of them, or — by the general test only — some of a longer record whose
   other facts still hold). Nothing else counts as a contradiction: "the staging database
   is read-only on weekends" and "the staging database is Postgres 15" are two true facts
   and both stay; the same statement said twice replaces nothing (it is a duplicate).
3. **Group** — the other records are visited newest first. Each joins the first group whose
   newest record (the *base*) has the same type and is a duplicate or paraphrase of it;
   otherwise it starts a group. Comparing only with the base keeps groups from chaining
   A~B~C; only groups sharing enough words or gist units are compared.
   *Paraphrase*: every fact clause of one record is still said by the other, or one
   record's statement tokens lie within the other's but for at most 10 % of them and none
   with a digit, and both or neither are negated; or the two gists state the same fact
   (values that agree, however written; no negation one states plainly; not one frame with
   different fillers; enough units shared, fewer when a name, an address or two values pin
   the statement down), compared as wholes and description with description, body with
   body: see :func:`~dreamd.models.offline.compare.paraphrase.same_fact`.
   A differing value or subject ("the alpha service" and "the bravo service"; "Postgres 14"
   and "Postgres 15"; "use mocks" and "don't use mocks") keeps records apart: without an
   explicit newer statement such records both stay, untouched. Then each superseded record
   joins the group of the record that replaced it (following a chain A→B→C to C) when the
   types agree; a supersession across types is left alone.
4. **Merge** — each group of two or more becomes one op whose result keeps the base's name,
   type, description and body verbatim and adds every clause of every older member's body
   (its description, when the body states nothing) that the result does not already say:
   fact clauses as new lines before the ``**Why:**`` line, reasons onto the ``**Why:**``
   line, how-to clauses onto the ``**How to apply:**`` line; what a superseded member's
   replaced clauses said (and its reasons, when all its facts were replaced) goes, word for
   word, onto a ``**Previously:**`` (``**此前：**``) history line at the end, kept but no
   longer stated as current; its other clauses join the result like any member's. So every
   source clause survives in the result. A member whose clauses would push the body past
   the size cap is left out of the group (untouched) rather than cut.

Records no op names stay as they are. ``recent`` is accepted and ignored: the offline
planner looks at the whole set every time, which is cheap at these sizes. Ops come out
sorted (drops by name, then merges by result name) so the plan is deterministic.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from dreamd.models.offline.compare.clauses import (
    HISTORY,
    HOW_LEAD,
    PLACEHOLDER_REASON,
    WHY_LEAD,
    Supersession,
    clause_units,
    clauses,
    fact_clauses,
    has_digit,
    line_clauses,
    replaced_clauses,
    restates,
    said_by,
    statements,
    strip_label,
)
from dreamd.models.offline.compare.paraphrase import (
    ANCHORED_SHARED,
    MIN_SHARED,
    Gist,
    gist,
    same_fact,
)
from dreamd.models.offline.contradiction import negated
from dreamd.models.offline.text import (
    has_cjk,
    parse_date,
    tokens,
)
from memory.store.records import MAX_BODY_BYTES, MAX_DESCRIPTION_CHARS, NAME_RE, TYPES

EXPIRE_PROTECT_IMPORTANCE = 0.8
PARAPHRASE_MISSING = 0.1
"""Share of the smaller record's tokens the larger may lack and still say the same thing."""


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
        facts = [ln for ln in lines if ln and _line_kind(ln) == "fact"]
        return facts or [self.description]

    @cached_property
    def statement_tokens(self) -> frozenset[str]:
        return frozenset(tokens(self.description + "\n" + "\n".join(self.fact_lines)))

    @cached_property
    def gist(self) -> Gist:
        return gist(self.description + "\n" + "\n".join(self.fact_lines))

    @cached_property
    def views(self) -> tuple[Gist, Gist]:
        """The gists of the description and of the fact lines apart (see :func:`same_fact`)."""
        return gist(self.description), gist("\n".join(self.fact_lines))

    @cached_property
    def fact_tokens(self) -> frozenset[str]:
        return frozenset(tokens(" ".join(self.fact_lines)))

    @cached_property
    def cjk(self) -> bool:
        return has_cjk(self.description) or has_cjk(self.body)

    @cached_property
    def negated(self) -> bool:
        return negated(" ".join(self.fact_lines))

    @cached_property
    def supersessions(self) -> list[Supersession]:
        return statements(self.description, self.body)

    @cached_property
    def statement_clauses(self) -> list[str]:
        return fact_clauses(self.description, self.body)


def _stamp(item: Mapping[str, Any]) -> str:
    return next((v for k in ("updated_at", "created_at")
                 if isinstance(v := item.get(k), str) and v), "")


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
        out.append(Rec(name, type_, " ".join(str(item.get("description") or "").split()),
                       str(item.get("body") or ""), _stamp(item),
                       _importance(item.get("importance")), parse_date(item.get("expires"))))
    return out


# ----------------------------------------------------------------------------- merging

def paraphrase(a: Rec, b: Rec) -> bool:
    """Same statement, one possibly saying more (see the module docstring); never two
    distinct values or subjects."""
    # "use mocks" and "don't use mocks" are not one statement
    if a.negated == b.negated and (
        _said_within(a, b) or _said_within(b, a)
        or _inside(set(a.statement_tokens), set(b.statement_tokens))
        or _inside(set(a.fact_tokens), set(b.fact_tokens))
    ):
        return True
    return same_fact(a.gist, b.gist, views=_views(a, b))


def _views(a: Rec, b: Rec) -> Iterator[tuple[Gist, Gist]]:
    """The two records' views side by side, made only when :func:`same_fact` reads them (when
    the whole gists differ in a value, it never does)."""
    yield from zip(a.views, b.views, strict=True)


def _said_within(a: Rec, b: Rec) -> bool:
    """Every fact clause of ``a`` is still said by a fact clause of ``b`` (in order): ``b``
    says all ``a`` says, and perhaps more ("dark theme" / "dark theme in editor and terminal")."""
    pool = [clause_units(c) for c in b.statement_clauses]
    return bool(a.statement_clauses) and all(said_by(c, pool) for c in a.statement_clauses)


def _inside(ta: set[str], tb: set[str]) -> bool:
    """The smaller token set is within the larger, but for at most ``PARAPHRASE_MISSING`` of
    its tokens, none with a digit (a different version, date or count is a different fact)."""
    if not ta or not tb:
        return False
    small, large = (ta, tb) if len(ta) <= len(tb) else (tb, ta)
    if len(small) < 2:
        return small == large
    missing = small - large
    if has_digit(missing):
        return False
    return len(missing) <= PARAPHRASE_MISSING * len(small)


def _least_shared(a: Rec, b: Rec) -> float:
    """Statement tokens two records must share for :func:`paraphrase` to hold, so that
    grouping compares only such pairs. Every rule needs 90 % of the smaller fact-token set
    (fact tokens are statement tokens, and a clause still said shares all its words); Chinese
    is compared by bigrams, which a paraphrase can break, so half of the smaller statement."""
    if a.cjk or b.cjk:
        return 0.5 * min(len(a.statement_tokens), len(b.statement_tokens))
    return 0.9 * min(len(a.fact_tokens), len(b.fact_tokens)) - 1e-9


def _least_in_gist(a: Rec, b: Rec) -> float:
    """Gist units two records must share for :func:`same_fact` to hold."""
    size = min(len(g.content | g.values) for g in (a.gist, b.gist, a.views[0], b.views[0]))
    return max(2.0, min(MIN_SHARED, ANCHORED_SHARED) * size - 1e-9)


def _shares_gist(a: Rec, b: Rec, shared: int) -> bool:
    """``shared >= _least_in_gist(a, b)``, the descriptions' gists made only when the whole
    ones leave it open: a view can only lower the bar, so a pair past the bar of the whole
    gists is past the real one too (most pairs of one batch are, and the views of a record
    are two more gists to make)."""
    if shared < 2:
        return False
    whole = min(len(g.content | g.values) for g in (a.gist, b.gist))
    return shared >= max(2.0, min(MIN_SHARED, ANCHORED_SHARED) * whole - 1e-9) or shared >= _least_in_gist(a, b)


_LABELS = {"why": ("**Why:**", WHY_LEAD), "how": ("**How to apply:**", HOW_LEAD),
           "history": ("**Previously:**", HISTORY)}


def _line_kind(line: str) -> str:
    return next((kind for kind, (_, lead) in _LABELS.items() if lead.match(line)), "fact")


def _append_to(lines: list[str], kind: str, text: str) -> None:
    label, pattern = _LABELS[kind]
    if kind == "history" and has_cjk(text):
        label = "**此前：**"
    at = next((i for i, ln in enumerate(lines) if pattern.match(ln)), None)
    if at is None:
        lines.append(f"{label} {text}")
    elif PLACEHOLDER_REASON.search(lines[at]):
        lines[at] = f"{label} {text}"  # a real reason replaces "no reason was stated"
    else:
        lines[at] = lines[at].rstrip() + " " + text


def _closed(clause: str) -> str:
    """A clause cut out of its sentence, with an end mark again so it reads as one."""
    if clause[-1] in ".!?;。！？；":
        return clause
    return clause + ("。" if has_cjk(clause) else ".")


def _insert_fact(lines: list[str], text: str) -> None:
    at = next((i for i, ln in enumerate(lines) if _line_kind(ln) != "fact"), len(lines))
    lines.insert(at, text)


def _body_fits(lines: list[str]) -> bool:
    return len(("\n".join(lines).strip("\n") + "\n").encode("utf-8")) <= MAX_BODY_BYTES


def merge_group(
    group: list[Rec], replaced: Mapping[str, Collection[str]] | None = None
) -> tuple[dict[str, str], list[Rec]]:
    """The result of merging ``group`` (newest first) into its base ``group[0]``, and the
    members it holds (a member that would overflow the body cap is left out).

    ``replaced`` maps a member an explicit newer statement superseded to its fact clauses that
    statement replaced: those (and, when it replaced them all, the member's reasons and
    how-tos too) go onto the history line (``**Previously:**``), word for word, kept but not
    stated as current; the member's other clauses join the result as current facts.

    Invariant: every clause of every held member is still said by the result.
    """
    base = group[0]
    description = base.description or base.fact_lines[0]
    lines = base.body.strip("\n").splitlines() if base.body.strip() else [description]
    pool = [clause_units(c) for c in clauses(description, "\n".join(lines))]
    held = [base]
    replaced = replaced or {}
    for old in group[1:]:
        trial = list(lines)
        trial_pool = list(pool)
        gone = set(replaced.get(old.name, ()))
        whole = bool(gone) and set(old.statement_clauses) <= gone
        old_lines = old.body.splitlines() if clauses("", old.body) else [old.description]
        for line in old_lines:
            kind = _line_kind(line)
            found = line_clauses(line)
            new = [c for c in found if not said_by(c, trial_pool)]
            if not new:
                continue
            past = [c for c in new if whole or (kind == "fact" and c in gone)]
            now = [c for c in new if c not in past]
            if past:
                text = " ".join(_closed(c) for c in past)
                if kind in ("why", "how"):
                    text = ("Why: " if kind == "why" else "How to apply: ") + text
                _append_to(trial, "history", text)
            if now:
                text = strip_label(line) if len(now) == len(found) else " ".join(_closed(c) for c in now)
                if kind == "fact":
                    _insert_fact(trial, text)
                else:
                    _append_to(trial, kind, text)
            trial_pool.extend(clause_units(c) for c in new)
        if _body_fits(trial):
            lines, pool = trial, trial_pool
            held.append(old)
    body = "\n".join(lines).strip("\n")
    result = {"name": base.name, "type": base.type, "description": description, "body": (body or description) + "\n"}
    return result, held


def plan(payload: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The offline answer to a consolidation payload (see the module docstring for the rules)."""
    today = parse_date(payload.get("today"))
    records = _records(payload)
    expired = {
        r.name
        for r in records
        if today and r.expires and r.expires < today
        and r.importance < EXPIRE_PROTECT_IMPORTANCE
    }
    alive = [r for r in records if r.name not in expired]
    replaced_by = _superseded(alive)
    ops: list[dict[str, Any]] = [{"source_names": [name], "result": None} for name in sorted(expired)]
    # Only records a valid result could be made of take part in merges (a result reuses the
    # base's name and type, and one invalid result would get the whole plan rejected).
    usable = sorted(
        (r for r in alive if NAME_RE.match(r.name) and r.type in TYPES
         and r.description.strip() and len(r.description) <= MAX_DESCRIPTION_CHARS),
        key=lambda r: (r.stamp, r.name),
        reverse=True,
    )
    live = [r for r in usable if r.name not in replaced_by]
    groups: list[list[Rec]] = []
    by_key: dict[tuple[str, str], list[int]] = {}
    by_unit: dict[tuple[str, str], list[int]] = {}
    for rec in live:
        shared: Counter[int] = Counter()
        for k in rec.statement_tokens:
            shared.update(by_key.get((rec.type, k), ()))
        in_gist: Counter[int] = Counter()
        for k in rec.gist.content | rec.gist.values:
            in_gist.update(by_unit.get((rec.type, k), ()))
        candidates = sorted(
            {g for g, n in shared.items() if n >= _least_shared(rec, groups[g][0])}
            | {g for g, n in in_gist.items() if _shares_gist(rec, groups[g][0], n)}
        )
        for g in candidates:
            if paraphrase(groups[g][0], rec):
                groups[g].append(rec)
                break
        else:
            groups.append([rec])
            for k in rec.statement_tokens:
                by_key.setdefault((rec.type, k), []).append(len(groups) - 1)
            for k in rec.gist.content | rec.gist.values:
                by_unit.setdefault((rec.type, k), []).append(len(groups) - 1)
    _attach_superseded(groups, [r for r in usable if r.name in replaced_by], replaced_by)
    gone = {name: clauses for name, (_, clauses) in replaced_by.items()}
    merged: list[tuple[list[str], dict[str, str]]] = []
    for group in groups:
        if len(group) < 2:
            continue
        result, held = merge_group(group, gone)
        if len(held) > 1:
            merged.append(([r.name for r in held], result))
    merged.sort(key=lambda pair: pair[1]["name"])
    ops.extend({"source_names": names, "result": result} for names, result in merged)
    return ops


def _probe_keys(s: Supersession, postings: Mapping[str, list[int]]) -> list[str]:
    """Enough of a statement's words that every record it may replace has one of them: a
    replaced record names at least 60 % of the old value (80 % of the subject), so it holds
    one of any ``len - needed + 1`` of them, and the rarest are the cheapest to look up.
    Chinese subjects are matched by character, so all their tokens are probed."""
    keys, share = (s.old, 0.6) if s.old else (s.subject, 0.8)
    ordered = sorted(keys, key=lambda k: (len(postings.get(k, ())), k))
    if not s.old and (s.clause or any(has_cjk(k) for k in keys)):
        return ordered
    needed = math.ceil(share * len(ordered) - 1e-9)
    return ordered[: len(ordered) - needed + 1]


def _attach_superseded(
    groups: list[list[Rec]], superseded: list[Rec], replaced_by: Mapping[str, tuple[str, tuple[str, ...]]]
) -> None:
    """Each superseded record (newest first) joins the group of the record that replaced it,
    following a chain of replacements to the current one, when the types agree (a result
    keeps one type); otherwise it is left alone."""
    where = {r.name: i for i, g in enumerate(groups) for r in g}
    for old in superseded:
        name = replaced_by[old.name][0]
        while name in replaced_by:
            name = replaced_by[name][0]
        at = where.get(name)
        if at is not None and groups[at][0].type == old.type:
            groups[at].append(old)


def _superseded(records: list[Rec]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Names of records a strictly newer record explicitly replaces a fact clause of (see the
    module docstring), each mapped to the newest record that does and the clauses it replaces.

    Only records sharing a word with a statement's old value (or its subject, when it names
    none) are compared, which keeps this near-linear in the set size."""
    postings: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        for t in r.fact_tokens:
            postings.setdefault(t, []).append(i)
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for newer in sorted(records, key=lambda r: (r.stamp, r.name), reverse=True):
        stated = newer.supersessions
        if not stated or not newer.stamp:
            continue
        candidates = {i for s in stated for key in _probe_keys(s, postings)
                      for i in postings.get(key, ())}
        pool = [clause_units(c) for c in clauses(newer.description, newer.body)]
        for i in sorted(candidates):
            older = records[i]
            if older is newer or not older.stamp or older.stamp >= newer.stamp or older.name in out:
                continue
            if restates(newer.statement_clauses, older.statement_clauses):
                continue  # the same statement again ("not X anymore" twice) replaces nothing
            gone = replaced_clauses(stated, pool, older.statement_clauses)
            if gone:
                out[older.name] = (newer.name, tuple(gone))
    return out


__all__ = ["Rec", "merge_group", "paraphrase", "plan"]
