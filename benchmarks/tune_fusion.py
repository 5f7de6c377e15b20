"""Choose the fusion constants of :func:`memory.retrieval.embed.fuse` on the dev split.

The dev split (``benchmarks/recall_dev/``) is written for this and nothing else: 50 invented
records of an agent's memory (a project's stack, a user's life) with 55 queries, most of them
paraphrases that share few words with their record, plus 450 templated distractor records so
a rank matters. No benchmark question or sentence is used; the constants picked here are what
``fuse`` defaults to, and the benchmarks only measure them.

Grid: reciprocal-rank constant ``k`` × embedding weight; reported per cell: recall@1, recall@5
and MRR, next to keyword-only and embedding-only in the same run. The pick maximises MRR
(recall@5 is near its ceiling on a set this small), ties to the smaller weight.

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
KS = (2.0, 5.0, 10.0, 20.0, 60.0)
WEIGHTS = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0)

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
    qvecs = model.embed([q["query"] for q in queries])
    names = [r["name"] for r in records]
    kw_scores = [index.scores(q["query"]) for q in queries]
    em_scores = [dict(zip(names, (vecs @ qv).tolist(), strict=True)) for qv in qvecs]
    rows: dict[str, Any] = {
        "keyword": metrics([index.select(q["query"], 10) for q in queries], gold),
        "embedding": metrics([fuse({}, e, 10) for e in em_scores], gold),
    }
    grid = []
    for k, w in itertools.product(KS, WEIGHTS):
        m = metrics([fuse(kw, em, 10, k=k, weight=w) for kw, em in zip(kw_scores, em_scores, strict=True)], gold)
        grid.append({"k": k, "weight": w, **m})
    best = max(grid, key=lambda g: (g["mrr"], g["recall@5"], -g["weight"]))
    print(f"dev split: {len(records)} records, {len(queries)} queries")
    print(f"{'selector':<22} {'r@1':>6} {'r@5':>6} {'mrr':>6}")
    for name, m in rows.items():
        print(f"{name:<22} {m['recall@1']:>6} {m['recall@5']:>6} {m['mrr']:>6}")
    for g in grid:
        mark = "  <- picked" if g is best else ""
        label = f"fused k={g['k']:g} w={g['weight']:g}"
        print(f"{label:<22} {g['recall@1']:>6} {g['recall@5']:>6} {g['mrr']:>6}{mark}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"baselines": rows, "grid": grid, "picked": best}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
