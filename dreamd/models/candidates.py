"""Which records a dream should look at together: candidate groups over the whole set.

A plan call sees one batch (``PLAN_BATCH`` records); a duplicate whose twin sits in another
batch is never merged. So before any batch is cut, one index over every live record of the
directory links the pairs a plan could merge, and batches are made of whole groups
(:func:`dreamd.jobs.batches.plan_batches`, called by :mod:`dreamd.jobs.work`). Three signals
link two records:

- **Shared rare terms** (duplicates, rewordings, one record saying more than the other): the
  records' statement terms (:func:`memory.retrieval.select.tokenize` of the description and
  the fact lines, plus every word holding a digit; the ``**Why:**``, ``**How to apply:**``
  and history lines are reasons, not the statement) weighted by rarity (``log(1 + N / df)``);
  a pair whose weighted Jaccard reaches :data:`TERM_SIMILARITY`, or whose smaller statement
  lies within the other for :data:`TERM_CONTAINMENT` of its weight, is linked. Pairs are found
  by prefix filtering from each pair's smaller statement (see :func:`_term_links`), so a
  duplicate anywhere is found without comparing all pairs. Copies of one statement are
  chained, each to the one before, and indexed once (10,000 copies of one line cost 9,999
  links, not 50 million pairs).
- **Explicit supersession**: a record with an explicit "this replaces that" statement
  (:func:`dreamd.models.offline.compare.clauses.statements`, the definition the retention gate
  holds every backend's plan to) is checked against the few older records sharing the most
  of the statement's subject and old value, and linked to those it replaces
  (:func:`~dreamd.models.offline.compare.clauses.replaced_by`, its parts of the newer record
  made once): the two share few words ("the
  API no longer uses port 8000" / "the API listens on port 8000, behind the proxy"), so the
  term signal alone misses them.
- **Embeddings** (optional, issue 25): when the directory has a vector cache
  (``.embeddings/<model>.vec``, written by the daemon), each record is linked to its nearest
  neighbours of cosine at least :data:`EMBEDDING_SIMILARITY`: paraphrases that share no rare
  word. The cache is only read; no model is ever loaded here, and without a cache (or
  without numpy) the signal is simply absent.

Links are joined strongest first into groups (union-find, Kruskal's order) and a join that
would make a group larger than ``limit`` is refused, so a large component splits along its
weakest links and every tight pair stays whole. A link only says "plan these together"; what
is merged is still the model's plan, held to the answer gate and the retention gate.

Pure over values: records and an optional vector map in (the dream reads the cache,
:func:`dreamd.jobs.work.dream_batches`), index groups out.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dreamd.models.offline.compare.clauses import (
    HISTORY,
    HOW_LEAD,
    WHY_LEAD,
    clause_units,
    clauses,
    fact_clauses,
    replaced_clauses,
    restates,
    statements,
)
from dreamd.models.prompts import PlanInput, plan_stamp
from memory.retrieval.select import tokenize
from memory.retrieval.tokens import words

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "EMBEDDING_NEIGHBOURS",
    "EMBEDDING_SIMILARITY",
    "TERM_CONTAINMENT",
    "TERM_SIMILARITY",
    "Grouping",
    "candidate_groups",
]

TERM_SIMILARITY = 0.7
"""Weighted Jaccard of two records' statement terms at which they are planned together. On the
generated 10,000-record set of ``benchmarks/bench_dream.py`` (records of a few templates about
made-up subjects), 1,581 pairs reach 0.6, 590 reach 0.7 and 91 reach 0.8, nearly all two facts
of one template that differ in a value; planted duplicates are the same statement. Explicit
supersessions share few words with what they replace (0.13–0.38) and are found by their
statement instead, paraphrases with other words by the embedding signal."""
TERM_CONTAINMENT = 0.9
"""Share of the smaller statement's term weight the larger must hold to be linked by
containment: the planner's own bar for "one record says all the other says" (90 %)."""
MIN_CONTAINED = 3
"""Terms a statement needs before containment links it: "use tabs" lies within every record
about tabs."""
EMBEDDING_SIMILARITY = 0.7
"""Cosine of two record embeddings (all-MiniLM-L6-v2, of ``record_text``: name, description,
body) at which they are planned together. A paraphrase sharing almost no rare word ("pull
requests need two approvals before merging" / "merging a pull request requires approval from
two reviewers") scores 0.75; a link only puts two records in one batch, the plan decides."""
EMBEDDING_NEIGHBOURS = 3
"""Nearest neighbours per record the embedding signal may link."""
MAX_PROBE = 500
"""Candidates one record is compared with, at most (rarest terms first): a set where every
record shares its rarest word with thousands of others is bounded, not quadratic."""
SUPERSESSION_CHECKS = 8
"""Older records one explicit statement is checked against, at most: those sharing the most
of its subject and old value."""


@dataclass
class Grouping:
    """The index's answer: groups of record positions (each of two or more, at most the
    limit), and how many links each signal found (for the log)."""

    groups: list[list[int]] = field(default_factory=list)
    links: Counter[str] = field(default_factory=Counter)

    @property
    def grouped(self) -> int:
        return sum(len(g) for g in self.groups)


def _statement_text(rec: PlanInput) -> str:
    """The description and the body's fact lines: what the record states."""
    lines = [ln for ln in rec.body.splitlines() if not (WHY_LEAD.match(ln) or HOW_LEAD.match(ln) or HISTORY.match(ln))]
    return rec.description + "\n" + "\n".join(lines)


class _Groups:
    """Union-find with sizes; a union past ``limit`` is refused."""

    def __init__(self, n: int, limit: int) -> None:
        self.parent = list(range(n))
        self.size = [1] * n
        self.limit = limit

    def find(self, i: int) -> int:
        root = i
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[i] != root:
            self.parent[i], i = root, self.parent[i]
        return root

    def union(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return True
        if self.size[ra] + self.size[rb] > self.limit:
            return False
        if self.size[ra] < self.size[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]
        return True


def candidate_groups(
    records: Sequence[PlanInput],
    *,
    limit: int,
    vectors: Mapping[str, npt.NDArray[np.float32]] | None = None,
) -> Grouping:
    """Groups of positions in ``records`` a plan should see together (module docstring).

    Deterministic: the same records give the same groups, ordered by their first position;
    a record in no group is one nothing links to.
    """
    limit = max(limit, 2)
    n = len(records)
    out = Grouping()
    terms = [_terms(r) for r in records]
    links: list[tuple[float, int, int, str]] = []
    # Same statement: a chain of links, each copy to the one before (so a run of copies
    # longer than the limit is cut into full groups), and one representative in the index.
    last_of: dict[frozenset[str], int] = {}
    reps: list[int] = []
    for i, t in enumerate(terms):
        j = last_of.get(t)
        last_of[t] = i
        if j is None:
            reps.append(i)
        elif t:
            links.append((3.0, j, i, "same"))
    links += _term_links(reps, terms)
    links += _supersession_links(records, terms)
    if vectors:
        links += _embedding_links(records, vectors)
    links.sort(key=lambda link: (-link[0], link[1], link[2]))
    uf = _Groups(n, limit)
    for _strength, a, b, why in links:
        if uf.union(a, b):
            out.links[why] += 1
    members: dict[int, list[int]] = {}
    for i in range(n):
        members.setdefault(uf.find(i), []).append(i)
    out.groups = sorted((g for g in members.values() if len(g) > 1), key=lambda g: g[0])
    return out


def _terms(rec: PlanInput) -> frozenset[str]:
    """Statement terms: recall's search terms, plus every word holding a digit ("8080",
    "v1.2", "2026-12-05"; recall drops the short ones), since a value tells facts apart."""
    text = _statement_text(rec)
    return frozenset(tokenize(text)) | _digit_words(text)


def _digit_words(text: str) -> set[str]:
    """The words of ``text`` holding a digit (a word of letters only holds none: the test
    that skips most words without looking at their characters)."""
    return {w for w in words(text) if not w.isalpha() and any(ch.isdigit() for ch in w)}


def _term_links(reps: Sequence[int], terms: Sequence[frozenset[str]]) -> list[tuple[float, int, int, str]]:
    """Pairs of distinct statements whose weighted Jaccard reaches ``TERM_SIMILARITY``, or
    whose smaller one (of at least ``MIN_CONTAINED`` terms) lies within the other for
    ``TERM_CONTAINMENT`` of its weight (one record saying what another says, and more).

    Each pair is found from its smaller statement (by weight), as in all-pairs similarity
    search: either test needs the two to share at least ``need`` of the smaller one's weight
    (Jaccard ``t`` over a larger partner: ``2t / (1 + t)``), so the smaller one probes the
    index with only its rarest terms, until the terms left out weigh less than that, and a
    partner found there is compared in full only when what it shared so far plus all the
    terms left out could still reach it."""
    df: Counter[str] = Counter(t for i in reps for t in terms[i])
    weight = {t: math.log(1.0 + len(reps) / c) for t, c in df.items()}
    total = {i: sum(weight[t] for t in terms[i]) for i in reps}
    need = min(2 * TERM_SIMILARITY / (1 + TERM_SIMILARITY), TERM_CONTAINMENT)
    postings: dict[str, list[int]] = {}
    for i in reps:
        for t in terms[i]:
            postings.setdefault(t, []).append(i)
    out: list[tuple[float, int, int, str]] = []
    for i in reps:
        mine = terms[i]
        if not mine:
            continue
        size = (total[i], i)
        rest = total[i]
        floor = need * total[i] - 1e-9
        acc: dict[int, float] = {}
        for t in sorted(mine, key=lambda t: (df[t], t)):  # rarest (heaviest) first
            if rest < floor or len(acc) >= MAX_PROBE:
                break
            rest -= weight[t]
            w = weight[t]
            for j in postings[t]:
                if (total[j], j) > size:
                    acc[j] = acc.get(j, 0.0) + w
        for j in sorted(j for j, got in acc.items() if got + rest >= floor):
            shared = sum(weight[t] for t in mine & terms[j])
            jaccard = shared / (total[i] + total[j] - shared)
            contained = shared / total[i] if len(mine) >= MIN_CONTAINED else 0.0
            score = max(jaccard, contained if contained >= TERM_CONTAINMENT else 0.0)
            if score >= TERM_SIMILARITY:
                out.append((score, min(i, j), max(i, j), "terms"))
    return out


def _supersession_links(
    records: Sequence[PlanInput], terms: Sequence[frozenset[str]]
) -> list[tuple[float, int, int, str]]:
    """Each explicit statement linked to the older records it replaces a clause of
    (:func:`~dreamd.models.offline.compare.clauses.replaced_by`). Only the older records that
    share most of the statement's subject and old value (by term weight) are checked, at
    most ``SUPERSESSION_CHECKS`` of them: what a statement replaces names both."""
    df: Counter[str] = Counter(t for ts in terms for t in ts)
    n = len(records)
    weight = {t: math.log(1.0 + n / c) for t, c in df.items()}
    postings: dict[str, list[int]] = {}
    for i, ts in enumerate(terms):
        for t in ts:
            postings.setdefault(t, []).append(i)
    stamps = [plan_stamp(r) for r in records]  # once per record, not once per record a statement scores
    out: list[tuple[float, int, int, str]] = []
    for i, rec in enumerate(records):
        stamp = stamps[i]
        if not stamp:
            continue
        stated = statements(rec.description, rec.body)
        if not stated:
            continue
        said = " ".join(w for s in stated for w in sorted(s.subject | s.old))
        keys = (frozenset(tokenize(said)) | _digit_words(said)) & terms[i]
        score: dict[int, float] = {}
        for t in sorted(keys, key=lambda t: (df[t], t)):
            if len(score) >= MAX_PROBE:
                break
            for j in postings[t]:
                if j != i:
                    score[j] = score.get(j, 0.0) + weight[t]
        # replaced_by's parts of the newer record, made once for all the older ones it is checked against
        new_facts = fact_clauses(rec.description, rec.body)
        pool = [clause_units(c) for c in clauses(rec.description, rec.body)]
        ranked = sorted((j for j in score if (stamps[j] or stamp) < stamp), key=lambda j: (-score[j], j))
        for j in ranked[:SUPERSESSION_CHECKS]:
            old_facts = fact_clauses(records[j].description, records[j].body)
            if not restates(new_facts, old_facts) and replaced_clauses(stated, pool, old_facts):
                out.append((2.0, min(i, j), max(i, j), "supersedes"))
    return out


def _embedding_links(
    records: Sequence[PlanInput], vectors: Mapping[str, npt.NDArray[np.float32]]
) -> list[tuple[float, int, int, str]]:
    """Nearest neighbours by cosine (unit vectors), at least ``EMBEDDING_SIMILARITY``."""
    import numpy as np

    have = [i for i, r in enumerate(records) if r.name in vectors]
    if len(have) < 2:
        return []
    matrix = np.stack([vectors[records[i].name] for i in have]).astype(np.float32, copy=False)
    k = min(EMBEDDING_NEIGHBOURS + 1, len(have))
    out: list[tuple[float, int, int, str]] = []
    found: set[tuple[int, int]] = set()
    for start in range(0, len(have), 512):
        block = matrix[start : start + 512]
        sims = np.einsum("ij,kj->ik", block, matrix)  # see memory.retrieval.embed on BLAS threads
        best = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        for row, cols in enumerate(best.tolist()):
            a = have[start + row]
            for col in cols:
                b = have[col]
                score = float(sims[row, col])
                if a == b or score < EMBEDDING_SIMILARITY:
                    continue
                pair = (min(a, b), max(a, b))
                if pair not in found:
                    found.add(pair)
                    out.append((score, pair[0], pair[1], "embedding"))
    return out
