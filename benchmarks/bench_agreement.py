"""How much two careful human labellers agree on the same sessions: the ceiling for extraction.

    python benchmarks/bench_agreement.py FIRST.jsonl SECOND.jsonl [--json OUT]

Both files hold the same sessions (same ids, same turns) in the extraction format of
``benchmarks/quality/README.md``, labelled independently. The first is taken as the reference
and the second scored against it the way ``bench_quality.py`` scores extraction, with one
change forced by comparing labels with labels rather than records with labels: a fact of the
second labeller *matches* a fact of the first when it is on the same turn and their keys share
a term (one term, or one alternative of it, contains the other, case-insensitively); with
``typed`` matching their types must be equal too. Pairs are assigned greedily (fewest
candidates first), each fact used once.

Reported per language and overall: precision (matched second-labeller facts / all of theirs),
recall (matched first-labeller facts / all of theirs) and F1, untyped and typed, and the type
agreement on the facts both labellers found. Typed precision and recall are what an extractor
scored by ``bench_quality.py`` could reach if it labelled like the second person.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_quality import Fact, Session, load_extraction


def _alternatives(key: Sequence[str]) -> list[str]:
    return [alt.strip().lower() for term in key for alt in term.split("|") if alt.strip()]


def keys_meet(a: Fact, b: Fact) -> bool:
    """Whether the two facts' keys share a term (one contains the other)."""
    return any(x in y or y in x for x in _alternatives(a.key) for y in _alternatives(b.key))


def pair(first: Sequence[Fact], second: Sequence[Fact], typed: bool) -> list[tuple[int, int]]:
    """Greedy one-to-one matching of ``second``'s facts to ``first``'s on one turn."""
    cands = {
        i: [j for j, b in enumerate(second) if keys_meet(a, b) and (not typed or a.type == b.type)]
        for i, a in enumerate(first)
    }
    used: set[int] = set()
    out = []
    for i in sorted(cands, key=lambda i: (len(cands[i]), i)):
        j = next((j for j in cands[i] if j not in used), None)
        if j is not None:
            used.add(j)
            out.append((i, j))
    return out


def _prf(matched: int, first: int, second: int) -> dict[str, float | None]:
    p = matched / second if second else None
    r = matched / first if first else None
    f = 2 * p * r / (p + r) if p and r else None
    return {"precision": p, "recall": r, "f1": f}


def compare(first: Sequence[Session], second: Sequence[Session]) -> dict[str, Any]:
    """The agreement figures (see the module docstring), per language and overall."""
    by_id = {s.id: s for s in second}
    missing = [s.id for s in first if s.id not in by_id]
    if missing:
        raise ValueError(f"second file lacks sessions {missing}")
    tallies: dict[str, dict[str, int]] = {}
    for s in first:
        other = by_id[s.id]
        if len(other.turns) != len(s.turns):
            raise ValueError(f"{s.id}: {len(s.turns)} turns in the first file, {len(other.turns)} in the second")
        for lang in (s.lang, "overall"):
            t = tallies.setdefault(lang, dict.fromkeys(("first", "second", "untyped", "typed", "same_type"), 0))
            for a_turn, b_turn in zip(s.turns, other.turns, strict=True):
                a, b = list(a_turn.facts), list(b_turn.facts)
                t["first"] += len(a)
                t["second"] += len(b)
                loose = pair(a, b, typed=False)
                t["untyped"] += len(loose)
                t["same_type"] += sum(1 for i, j in loose if a[i].type == b[j].type)
                t["typed"] += len(pair(a, b, typed=True))
    out: dict[str, Any] = {}
    for lang, t in tallies.items():
        out[lang] = {
            "facts_first": t["first"],
            "facts_second": t["second"],
            "untyped": _prf(t["untyped"], t["first"], t["second"]),
            "typed": _prf(t["typed"], t["first"], t["second"]),
            "type_agreement": t["same_type"] / t["untyped"] if t["untyped"] else None,
        }
    return out


def _fmt(x: float | None) -> str:
    return "    -" if x is None else f"{x:.3f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    result = compare(load_extraction(args.first), load_extraction(args.second))
    print(f"{'slice':10} {'facts A':>7} {'facts B':>7}   {'untyped P/R/F1':>20}   {'typed P/R/F1':>20}   type agr.")
    for lang in sorted(result, key=lambda k: (k == "overall", k)):
        r = result[lang]
        u, t = r["untyped"], r["typed"]
        print(f"{lang:10} {r['facts_first']:7} {r['facts_second']:7}   "
              f"{_fmt(u['precision'])} {_fmt(u['recall'])} {_fmt(u['f1'])}   "
              f"{_fmt(t['precision'])} {_fmt(t['recall'])} {_fmt(t['f1'])}   {_fmt(r['type_agreement'])}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
