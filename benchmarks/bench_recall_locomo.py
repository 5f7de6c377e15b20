"""Recall@5 of the keyword selector on LoCoMo, against three baselines, plus selection speed.

LoCoMo (snap-research/LoCoMo, ``locomo10.json``, CC BY-NC 4.0) is read in place, never copied.
For each of its 10 conversations every ``observation`` entry becomes one candidate record
(name ``obs-s<session>-<k>``, description = the observation text, provenance = the dialogue
ids it cites). For each question of categories 1–4 (single-hop, temporal, open-domain,
multi-hop) a selector gets a hit when any of its top-5 names cites one of the question's
``evidence`` dialogue ids.

Selectors compared in the same run:

- ``dreamd``  — :class:`memory.retrieval.select.KeywordIndex` (what ``recall`` falls back to);
- ``overlap`` — DESIGN §7's plain rule: count of distinct shared tokens (lowercase English
  words of 3+ characters, Chinese bigrams) over name + description, ties by name;
- ``bm25``    — ``rank_bm25.BM25Okapi`` over the same plain tokens, ties by name;
- ``bm25-tok`` — ``BM25Okapi`` over the project's own search terms (:func:`memory.retrieval.select.tokenize`:
  stopwords dropped, light stemming, Chinese bigrams) of name + description, ties by name. This
  is the honest baseline: what ``KeywordIndex`` adds beyond it (field weights, phrase pairs,
  importance ties) is what the selector's ranking is worth, apart from its tokenizer.

Speed: p50/p95 of one selection at 10,000 records (the observations of all conversations,
replicated under fresh names), with the index build time reported separately.

Usage: ``python benchmarks/bench_recall_locomo.py [--data PATH] [--out PATH] [--records N]``.
Prints a table and writes JSON (default ``benchmarks/results/recall_locomo.json``).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from memory.retrieval.select import Candidate, KeywordIndex, plain_tokens, tokenize  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "eval" / "locomo10.json"
DEFAULT_OUT = REPO / "benchmarks" / "results" / "recall_locomo.json"
CATEGORIES = {1: "single-hop", 2: "temporal", 3: "open-domain", 4: "multi-hop"}
TOP_K = 5
_DIA_RE = re.compile(r"D:?(\d+):(\d+)")


def dialogue_ids(value: Any) -> set[str]:
    """Normalised dialogue ids from LoCoMo's loose forms (``"D1:3"``, ``"D8:6; D9:17"``,
    ``["D4:17, D4:19"]``, ``"D:11:26"``)."""
    items = value if isinstance(value, list) else [value]
    out: set[str] = set()
    for item in items:
        for sess, turn in _DIA_RE.findall(str(item)):
            out.add(f"D{int(sess)}:{int(turn)}")
    return out


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    evidence: frozenset[str]


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    candidates: tuple[Candidate, ...]
    provenance: dict[str, frozenset[str]]
    questions: tuple[Question, ...]


def load(path: Path) -> list[Conversation]:
    data = json.loads(path.read_text(encoding="utf-8"))
    convs = []
    for sample in data:
        candidates: list[Candidate] = []
        provenance: dict[str, frozenset[str]] = {}
        obs = sample["observation"]
        for key in sorted(obs, key=lambda k: int(re.findall(r"\d+", k)[0])):
            session = int(re.findall(r"\d+", key)[0])
            k = 0
            for speaker in sorted(obs[key]):
                for text, ids in obs[key][speaker]:
                    k += 1
                    name = f"obs-s{session}-{k}"
                    candidates.append(Candidate(name=name, type="project", description=text))
                    provenance[name] = frozenset(dialogue_ids(ids))
        questions = tuple(
            Question(str(q["question"]), int(q["category"]), frozenset(dialogue_ids(q["evidence"])))
            for q in sample["qa"]
            if int(q["category"]) in CATEGORIES and dialogue_ids(q["evidence"])
        )
        convs.append(Conversation(sample["sample_id"], tuple(candidates), provenance, questions))
    return convs


Selector = Callable[[str], list[str]]


def dreamd_selector(candidates: Sequence[Candidate]) -> Selector:
    index = KeywordIndex(candidates)
    return lambda q: index.select(q, TOP_K)


def overlap_selector(candidates: Sequence[Candidate]) -> Selector:
    docs = [(c.name, set(plain_tokens(c.name + " " + c.description))) for c in candidates]

    def select(q: str) -> list[str]:
        qt = set(plain_tokens(q))
        scored = [(-len(qt & toks), name) for name, toks in docs if qt & toks]
        return [name for _, name in sorted(scored)[:TOP_K]]

    return select


def _bm25(candidates: Sequence[Candidate], terms: Callable[[str], list[str]]) -> Selector:
    """``BM25Okapi`` (k1 1.5, b 0.75) over ``terms`` of name + description; only documents
    sharing a term with the query are ranked (a zero score is no match), ties by name."""
    from rank_bm25 import BM25Okapi

    names = [c.name for c in candidates]
    docs = [terms(c.name.replace("-", " ") + " " + c.description) for c in candidates]
    bm25 = BM25Okapi([d or [""] for d in docs])
    vocab = [set(d) for d in docs]

    def select(q: str) -> list[str]:
        qt = terms(q)
        scores = bm25.get_scores(qt)
        hit = set(qt)
        order = sorted(
            (i for i in range(len(names)) if vocab[i] & hit),
            key=lambda i: (-float(scores[i]), names[i]),
        )
        return [names[i] for i in order[:TOP_K]]

    return select


def bm25_selector(candidates: Sequence[Candidate]) -> Selector:
    return _bm25(candidates, plain_tokens)


def bm25_tok_selector(candidates: Sequence[Candidate]) -> Selector:
    return _bm25(candidates, tokenize)


SELECTORS: dict[str, Callable[[Sequence[Candidate]], Selector]] = {
    "dreamd": dreamd_selector,
    "overlap": overlap_selector,
    "bm25": bm25_selector,
    "bm25-tok": bm25_tok_selector,
}


def evaluate(
    convs: Sequence[Conversation],
    selectors: dict[str, Callable[[Sequence[Candidate]], Selector]] | None = None,
) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    for label, make in (selectors or SELECTORS).items():
        hits = {c: 0 for c in CATEGORIES}
        totals = {c: 0 for c in CATEGORIES}
        hit_list: list[bool] = []
        for conv in convs:
            select = make(conv.candidates)
            for q in conv.questions:
                chosen = select(q.text)
                totals[q.category] += 1
                hit = any(conv.provenance[n] & q.evidence for n in chosen)
                hit_list.append(hit)
                if hit:
                    hits[q.category] += 1
        per = {CATEGORIES[c]: round(hits[c] / totals[c], 4) for c in CATEGORIES}
        overall = sum(hits.values()) / sum(totals.values())
        results[label] = {
            "recall_at_5": per | {"overall": round(overall, 4)},
            "hits": sum(hits.values()),
            "questions": sum(totals.values()),
            "per_question": hit_list,
        }
    return results


def paired(results: dict[str, dict[str, Any]], a: str, b: str) -> dict[str, int]:
    """Questions only ``a`` answered and only ``b`` answered: a difference of a few hits
    with many wins on both sides is noise, a one-sided count is not."""
    pa, pb = results[a]["per_question"], results[b]["per_question"]
    return {
        f"{a}_only": sum(1 for x, y in zip(pa, pb, strict=True) if x and not y),
        f"{b}_only": sum(1 for x, y in zip(pa, pb, strict=True) if y and not x),
    }


def timing(convs: Sequence[Conversation], n_records: int, n_queries: int = 300) -> dict[str, Any]:
    pool = [c for conv in convs for c in conv.candidates]
    candidates = [
        Candidate(f"{pool[i % len(pool)].name}-r{i // len(pool)}", "project",
                  pool[i % len(pool)].description)
        for i in range(n_records)
    ]
    queries = [q.text for conv in convs for q in conv.questions][:n_queries]
    t0 = time.perf_counter()
    index = KeywordIndex(candidates)
    build_ms = (time.perf_counter() - t0) * 1000
    samples = []
    for q in queries:
        t = time.perf_counter()
        index.select(q, TOP_K)
        samples.append((time.perf_counter() - t) * 1000)
    samples.sort()
    return {
        "records": n_records,
        "queries": len(samples),
        "index_build_ms": round(build_ms, 1),
        "select_p50_ms": round(statistics.median(samples), 3),
        "select_p95_ms": round(samples[int(0.95 * (len(samples) - 1))], 3),
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--records", type=int, default=10_000)
    args = ap.parse_args(argv)
    if not args.data.is_file():
        print(f"bench_recall_locomo: LoCoMo data not found at {args.data}", file=sys.stderr)
        return 1
    convs = load(args.data)
    results = evaluate(convs)
    speed = timing(convs, args.records)

    cols = [*CATEGORIES.values(), "overall"]
    print(f"LoCoMo recall@{TOP_K} ({results['dreamd']['questions']} questions, categories 1-4, "
          f"{sum(len(c.candidates) for c in convs)} observation records in {len(convs)} sets)")
    print(f"{'selector':<10}" + "".join(f"{c:>13}" for c in cols))
    for label, res in results.items():
        print(f"{label:<10}" + "".join(f"{res['recall_at_5'][c]:>13.3f}" for c in cols))
    versus = paired(results, "dreamd", "bm25-tok")
    print(f"\ndreamd vs bm25-tok, question by question: {versus['dreamd_only']} answered only by "
          f"dreamd, {versus['bm25-tok_only']} only by bm25-tok")
    print(f"\nselection at {speed['records']} records: index build {speed['index_build_ms']} ms, "
          f"select p50 {speed['select_p50_ms']} ms, p95 {speed['select_p95_ms']} ms "
          f"({speed['queries']} queries)")

    out = {
        "benchmark": "recall_locomo",
        "data": str(args.data),
        "top_k": TOP_K,
        "selectors": {k: {f: v for f, v in r.items() if f != "per_question"}
                      for k, r in results.items()},
        "paired_vs_bm25_tok": versus,
        "speed": speed,
        "python": sys.version.split()[0],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
