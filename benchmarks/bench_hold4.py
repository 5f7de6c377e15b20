"""Score extraction on the hold4 blind set (issue 23): 24 Claude Code style sessions, half
Chinese, written blind before any change, with corrections labelled ``supersedes``.

The extraction figures are ``bench_quality``'s (the same runner and scorer). Corrections are
scored on the records one session leaves: a correction is **applied** when its fact (the new
value) is matched by a record and no record still states an old value outside a
``**Previously:**`` line (``**此前：**`` in Chinese; where issue 23 keeps the old value as history); **stale** when a
record still states the old value as current (``stale_elsewhere``: a record that does not also
hold the new value, so not the correcting record naming what it replaces, "X instead of Y").
A **wrong rewrite** is a record whose history line holds no old value any label of its session
names: a record superseded (or rewritten) by a correction of something else. A correction of a value said in an earlier
session (not in this transcript) can only show whether the new value was kept.

hold4 has been scored twice and is spent as a blind set: it is now a development set, and
``--detail`` prints each correction that was not applied with the records involved.

hold5, written blind for the second round of issue 23, was scored at its start and end and is
spent too, and so are hold6 to hold13 (the third to ninth rounds'). Each round's new blind set
of the same kind is scored once at the start and once at the end of its
round, its aggregate tables only (never ``--detail``).

Usage: ``python benchmarks/bench_hold4.py [--set hold4|hold5|hold6|hold7|hold8|hold9|hold10|hold11|hold12|hold13] [--json OUT] [--detail] [--types]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.bench_quality import (  # noqa: E402
    QUALITY_DIR,
    Produced,
    evaluate_extraction,
    key_match,
    load_extraction,
    run_extraction,
    term_found,
)

HOLD4 = QUALITY_DIR / "extraction_hold4.jsonl"
HOLD5 = QUALITY_DIR / "extraction_hold5.jsonl"
HOLD6 = QUALITY_DIR / "extraction_hold6.jsonl"
HOLD7 = QUALITY_DIR / "extraction_hold7.jsonl"
HOLD8 = QUALITY_DIR / "extraction_hold8.jsonl"
HOLD9 = QUALITY_DIR / "extraction_hold9.jsonl"
HOLD10 = QUALITY_DIR / "extraction_hold10.jsonl"
HOLD11 = QUALITY_DIR / "extraction_hold11.jsonl"
HOLD12 = QUALITY_DIR / "extraction_hold12.jsonl"
HOLD13 = QUALITY_DIR / "extraction_hold13.jsonl"
SETS = {"hold4": HOLD4, "hold5": HOLD5, "hold6": HOLD6, "hold7": HOLD7, "hold8": HOLD8, "hold9": HOLD9, "hold10": HOLD10, "hold11": HOLD11, "hold12": HOLD12, "hold13": HOLD13}
SPENT = {"hold4", "hold5", "hold6", "hold7", "hold8", "hold9", "hold10", "hold11", "hold12", "hold13"}  # scored blind before and after their round: development sets now


def _states(term: str, rec: Produced) -> bool:
    """The record states ``term`` as current: outside any history line (``**Previously:**``,
    in Chinese ``**此前：**``: the store's one pattern for it)."""
    from dreamd.models.offline.compare.clauses import HISTORY

    current = "\n".join(line for line in rec.text.splitlines() if not HISTORY.match(line))
    return term_found(term, current)


def _history(rec: Produced) -> str:
    """The record's history lines (``**Previously:**`` / ``**此前：**``): what a supersession moved there."""
    from dreamd.models.offline.compare.clauses import HISTORY

    return "\n".join(line for line in rec.text.splitlines() if HISTORY.match(line))


def corrections(sessions: Any, model: Any, config: Any, detail: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The corrections' outcome; with ``detail`` (development only: it names each session's
    sentences), one row per correction that was not applied is appended to it."""
    from memory.errors import DreamdError

    out = new_outcome()
    with tempfile.TemporaryDirectory(prefix="dreamd-hold4-") as tmp:
        for s in sessions:
            try:
                records = run_extraction(s, model, Path(tmp), config)
            except DreamdError:
                records = []
            score_session(s, records, out, detail)
    return out


def new_outcome() -> dict[str, Any]:
    """The counts :func:`score_session` adds to, all zero."""
    return {"corrections": 0, "applied": 0, "stale": 0, "stale_elsewhere": 0, "new_value_missed": 0,
            "wrong_rewrites": 0, "by_lang": {}}


def score_session(s: Any, records: list[Produced], out: dict[str, Any],
                  detail: list[dict[str, Any]] | None = None) -> list[bool]:
    """Add the corrections' outcome on the ``records`` one session left to ``out``; whether each
    labelled correction of the session (in order) is applied."""
    lang = out["by_lang"].setdefault(s.lang, {"corrections": 0, "applied": 0, "stale": 0})
    olds = [old for turn in s.turns for fact in turn.facts for old in fact.supersedes]
    for r in records:  # a history line holding no old value a label names: a correction of something else
        wrong = (history := _history(r)) and not any(term_found(old, history) for old in olds)
        out["wrong_rewrites"] += bool(wrong)
        if wrong and detail is not None:
            detail.append({"session": s.id, "wrong_rewrite": r.text})
    applied: list[bool] = []
    for turn in s.turns:
        for fact in turn.facts:
            if not fact.supersedes:
                continue
            out["corrections"] += 1
            lang["corrections"] += 1
            kept = any(key_match(fact, r) for r in records)
            stale = any(_states(old, r) for old in fact.supersedes for r in records)
            out["stale"] += stale
            lang["stale"] += stale
            # the old value stated by a record that does not also hold the new one: the
            # correcting record naming what it replaces ("X instead of Y") is not counted
            out["stale_elsewhere"] += any(_states(old, r) and not key_match(fact, r) for old in fact.supersedes for r in records)
            out["new_value_missed"] += not kept
            applied.append(kept and not stale)
            if kept and not stale:
                out["applied"] += 1
                lang["applied"] += 1
            elif detail is not None:
                detail.append({"session": s.id, "turn": turn.text, "key": fact.key, "supersedes": fact.supersedes,
                               "kept": kept,
                               "earlier": [t.text for t in s.turns if t is not turn and t.role == "user"
                                           and any(term_found(o, t.text) for o in fact.supersedes)],
                               "records": [r.text for r in records
                                           if key_match(fact, r) or any(_states(o, r) for o in fact.supersedes)]})
    return applied


def print_type_confusions(missed: list[dict[str, Any]], spurious: list[dict[str, Any]]) -> None:
    """Each missed fact that an unmatched record of its session would match but for its type
    (every key term in the record's description), then the count per (labelled, produced) pair:
    where precision and recall are lost to typing alone."""
    pairs: Counter[tuple[str, str]] = Counter()
    for fact in missed:
        for rec in spurious:
            if (rec["session"] == fact["session"] and rec["type"] != fact["type"]
                    and all(term_found(term, rec["description"]) for term in fact["key"])):
                pairs[(fact["type"], rec["type"])] += 1
                print(f"type {fact['type']} <- {rec['type']}: {rec['session']}: {rec['description'][:120]}")
                break
    print("type confusions (labelled <- produced):", ", ".join(f"{a} <- {b} {n}" for (a, b), n in pairs.most_common()),
          f"(total {sum(pairs.values())})")


def main(argv: list[str] | None = None) -> int:
    from dreamd.config import default_config
    from dreamd.models.factory import make_model

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=sorted(SETS), default="hold4",
                        help="hold4 to hold13 (issue 23's first nine rounds, spent)")
    parser.add_argument("--json", type=Path, default=None, help="default benchmarks/results/<set>.json")
    parser.add_argument("--detail", action="store_true",
                        help="print each correction not applied, with the records involved (development only: hold4 to hold13 are spent)")
    parser.add_argument("--types", action="store_true",
                        help="print each fact missed for its type alone: a record of the session holding every key term "
                             "with another type, counted by (labelled, produced) type (development only: a spent set)")
    args = parser.parse_args(argv)
    if args.json is None:
        args.json = REPO / "benchmarks" / "results" / f"{args.set}.json"
    sessions = load_extraction(SETS[args.set])
    config = default_config(env={})
    model = make_model(config.model)
    ext = evaluate_extraction(sessions, model, config)
    if (args.detail or args.types) and args.set not in SPENT:
        parser.error("--detail and --types are for a spent set; a blind set is read by its aggregate tables only")
    detail: list[dict[str, Any]] | None = [] if args.detail else None
    cor = corrections(sessions, model, config, detail)
    print(f"{args.set}: {ext['sessions']} sessions, {ext['user_turns']} user turns")
    print(f"{'':<8} {'P':>6} {'R':>6} {'F1':>6}")
    for name, c in [("overall", ext["overall"]), *ext["by_lang"].items()]:
        print(f"{name:<8} {c['precision']:>6.3f} {c['recall']:>6.3f} {c['f1']:>6.3f}")
    print(f"date accuracy {ext['date_accuracy']}, reason accuracy {ext['reason_accuracy']}, distractors ignored {ext['distractor_ignored']}")
    print(f"corrections: {cor['applied']} of {cor['corrections']} applied, {cor['stale']} with the old value still stated "
          f"({cor['stale_elsewhere']} by a record not holding the new value), "
          f"{cor['new_value_missed']} new values missed, {cor['wrong_rewrites']} records rewritten with no labelled old value "
          f"on their history line; by language {json.dumps(cor['by_lang'])}")  # fmt: skip
    for row in detail or ():
        print(json.dumps(row, ensure_ascii=False, indent=1))
    if args.types:
        print_type_confusions(ext["missed"], ext["spurious"])
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"extraction": {k: v for k, v in ext.items() if k not in ("missed", "spurious")}, "corrections": cor}, indent=2) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
