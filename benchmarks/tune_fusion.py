"""Choose the fusion weight of :func:`memory.retrieval.embed.fuse` on the dev split.

The dev split (``benchmarks/recall_dev/``) is written for this and nothing else: 50 invented
records of an agent's memory (a project's stack, a user's life) with 106 queries — 55
paraphrases that share few words with their record, 21 bare rare words, and 30 plainly worded
questions that share some of their record's words (added in issue 23, before the weight was
chosen again) — plus 450 templated distractor records so a rank matters. No benchmark question or sentence is used; the constants picked here are what
``fuse`` defaults to, and the benchmarks only measure them.

Grid: the cosine's weight in :func:`memory.retrieval.embed.fuse`; reported per cell: recall@1,
recall@5 and MRR, next to keyword-only, embedding-only and, as references, the reciprocal-rank
fusion used before (k = 5, weight 6) and the records embedded with their names, in the same
run. The pick maximises MRR (recall@5 is near its ceiling on a set this small), then recall@5,
ties to the smaller weight.

Usage: ``python benchmarks/tune_fusion.py [--out PATH]``; needs ``dreamd[embeddings]``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from dreamd.embeddings.model import load  # noqa: E402
from memory.retrieval.embed import fuse, record_text  # noqa: E402
from memory.retrieval.select import Candidate, KeywordIndex  # noqa: E402

DEV = REPO / "benchmarks" / "recall_dev"
DEFAULT_OUT = REPO / "benchmarks" / "results" / "tune_fusion.json"
WEIGHTS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0)


def rrf(keyword: dict[str, float], embedding: dict[str, float], limit: int, k: float = 5.0, weight: float = 6.0,
        depth: int = 50) -> list[str]:
    """The weighted reciprocal-rank fusion recall used before issue 23, for reference."""
    kw = sorted((n for n in keyword if keyword[n] > 0), key=lambda n: (-keyword[n], n))[:depth]
    em = sorted(embedding, key=lambda n: (-embedding[n], n))[:depth]
    fused: dict[str, float] = {}
    for rank, name in enumerate(kw, 1):
        fused[name] = fused.get(name, 0.0) + 1.0 / (k + rank)
    for rank, name in enumerate(em, 1):
        fused[name] = fused.get(name, 0.0) + weight / (k + rank)
    return sorted(fused, key=lambda n: (-round(fused[n], 12), n))[:limit]

_PEOPLE = ("Jonas", "Aiko", "Lena", "Ravi", "Chen", "Sofia", "Omar", "Greta", "Paulo")
_THINGS = ("the staging cluster", "the invoice export", "the nightly report", "the design review",
           "the office printer", "the quarterly budget", "the hiring plan", "the team offsite",
           "the beta program", "the wiki migration")
_VERBS = ("is responsible for", "asked about", "wants to postpone", "will present", "reviewed",
          "complained about", "is blocked on", "finished")


def distractors() -> list[dict[str, str]]:
    out = []
    for i, (p, t, v) in enumerate(itertools.product(_PEOPLE, _THINGS, _VERBS)):
        if i >= 450:
            break
        out.append({"name": f"filler-{i}", "description": f"{p} {v} {t}",
                    "body": f"In a meeting {p} said they {v.split()[0]} {t} this sprint."})
    return out


def _read(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DEV / name).read_text().splitlines() if line.strip()]


def metrics(ranked: list[list[str]], gold: list[set[str]]) -> dict[str, float]:
    r1 = sum(bool(set(r[:1]) & g) for r, g in zip(ranked, gold, strict=True)) / len(gold)
    r5 = sum(bool(set(r[:5]) & g) for r, g in zip(ranked, gold, strict=True)) / len(gold)
    mrr = sum(next((1 / (i + 1) for i, n in enumerate(r[:10]) if n in g), 0.0)
              for r, g in zip(ranked, gold, strict=True)) / len(gold)
    return {"recall@1": round(r1, 3), "recall@5": round(r5, 3), "mrr": round(mrr, 3)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    records = _read("records.jsonl") + distractors()
    queries = _read("queries.jsonl")
    gold = [set(q["relevant"]) for q in queries]
    index = KeywordIndex([Candidate(r["name"], "project", r["description"], r["body"]) for r in records])
    model = load("all-MiniLM-L6-v2")
    vecs = model.embed([record_text(r["name"], r["description"], r["body"]) for r in records])
    named = model.embed([f"{r['name'].replace('-', ' ')}: {r['description']}\n{r['body']}" for r in records])
    qvecs = model.embed([q["query"] for q in queries])
    names = [r["name"] for r in records]
    kw_scores = [index.scores(q["query"]) for q in queries]
    em_scores = [dict(zip(names, (vecs @ qv).tolist(), strict=True)) for qv in qvecs]
    named_scores = [dict(zip(names, (named @ qv).tolist(), strict=True)) for qv in qvecs]
    pairs = list(zip(kw_scores, em_scores, strict=True))
    rows: dict[str, Any] = {
        "keyword": metrics([index.select(q["query"], 10) for q in queries], gold),
        "embedding": metrics([fuse({}, e, 10) for e in em_scores], gold),
        "rrf k=5 w=6 (before)": metrics([rrf(kw, em, 10) for kw, em in pairs], gold),
        "rrf k=5 w=6, names embedded": metrics([rrf(kw, em, 10) for kw, em in zip(kw_scores, named_scores, strict=True)], gold),
    }
    grid = []
    for w in WEIGHTS:
        m = metrics([fuse(kw, em, 10, weight=w) for kw, em in pairs], gold)
        named_m = metrics([fuse(kw, em, 10, weight=w) for kw, em in zip(kw_scores, named_scores, strict=True)], gold)
        grid.append({"weight": w, **m, "with_names": named_m})
    best = max(grid, key=lambda g: (g["mrr"], g["recall@5"], -g["weight"]))
    print(f"dev split: {len(records)} records, {len(queries)} queries")
    print(f"{'selector':<30} {'r@1':>6} {'r@5':>6} {'mrr':>6}   (names embedded: r@1 r@5 mrr)")
    for name, m in rows.items():
        print(f"{name:<30} {m['recall@1']:>6} {m['recall@5']:>6} {m['mrr']:>6}")
    for g in grid:
        mark = "  <- picked" if g is best else ""
        n = g["with_names"]
        label = f"fused w={g['weight']:g}"
        print(f"{label:<30} {g['recall@1']:>6} {g['recall@5']:>6} {g['mrr']:>6}   ({n['recall@1']} {n['recall@5']} {n['mrr']}){mark}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"baselines": rows, "grid": grid, "picked": best}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
