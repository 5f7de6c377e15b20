"""Extraction into a large memory directory: the offline pipeline's cost as the index grows.

Builds a directory index of N records with the offline model itself (made-up short sessions,
each stating a few facts, extracted into an empty directory; the records' names, types and
descriptions are the index), then extracts one long made-up session (400 turns: 200 user turns
stating facts, a third of them repeating an index record in other words, a few correcting one)
against it. Reports, per N, the CPU seconds of the whole ``extract`` call and of
``_Answer.admit`` inside it (``time.process_time``, the minimum of ``--repeat`` runs) and the
number of comparisons ``admit`` made (calls of ``_corrects`` and ``_near_duplicate``).

    python benchmarks/bench_extract_scale.py                          # this checkout
    python benchmarks/bench_extract_scale.py --against /tmp/main      # and another checkout, same run

``--against`` runs the same measurement in a child process importing ``dreamd`` from that
checkout (a ``git archive`` of main, say) and checks that both produced the same records for
every N. Writes ``benchmarks/results/extract_scale.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

SIZES = (100, 1000, 5000)
TODAY = "2026-11-02"


def _vocabulary(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(2, 4))))
    return sorted(words)


# Made-up statements of the kinds a team directory holds; the same frame words recur across
# records (service, branch, team, …) as they do in a real directory, the names do not.
_FRAMES = (
    "The {a} service is deployed from the {b} branch.",
    "Please remember that the {a} runbook lives in docs/{b}/{a}.md.",
    "I prefer {a} over {b} for {c} work.",
    "We decided to use {a} for the {b} pipeline because it is faster.",
    "Never push to the {a} branch directly, always open a pull request.",
    "Our {a} database runs Postgres {n}.",
    "I'm the {a} lead on the {b} team.",
    "The {a} release is due on December {d}.",
    "The {a} dashboard is at https://{b}.example.com/{c}.",
    "Always run the {a} tests before touching the {b} module.",
    "The {a} cluster uses {b} for caching and {c} for queues.",
    "My manager {A} owns the {b} roadmap.",
)


def _statement(rng: random.Random, words: list[str]) -> str:
    a, b, c = rng.sample(words, 3)
    return rng.choice(_FRAMES).format(a=a, b=b, c=c, A=a.capitalize(), n=rng.randint(11, 17), d=rng.randint(3, 28))


def _session(statements: list[str], start: int = 0) -> list[dict[str, str]]:
    turns: list[dict[str, str]] = []
    for i, s in enumerate(statements):
        stamp = f"2026-11-02T{(start + i) // 60 % 24:02d}:{(start + i) % 60:02d}:00Z"
        turns.append({"role": "user", "text": s, "timestamp": stamp})
        turns.append({"role": "assistant", "text": "Noted.", "timestamp": stamp})
    return turns


def build_index(n: int, seed: int = 7) -> tuple[list[dict[str, str]], list[str]]:
    """N index records made by the offline model from made-up sessions, and the statements."""
    from dreamd.models.offline.extract.pipeline import extract

    rng = random.Random(seed)
    words = _vocabulary(max(300, n), seed)
    index: list[dict[str, str]] = []
    said: list[str] = []
    names: set[str] = set()
    while len(index) < n:
        batch = [_statement(rng, words) for _ in range(8)]
        for rec in extract({"task": "extract", "today": TODAY, "index": [], "turns": _session(batch)}):
            if rec["name"] in names or len(index) >= n:
                continue
            names.add(rec["name"])
            index.append({"name": rec["name"], "type": rec["type"], "description": rec["description"]})
        said.extend(batch)
    return index, said


def long_session(said: list[str], turns: int = 400, seed: int = 11) -> list[dict[str, str]]:
    """``turns`` turns: new statements, repeats of what the directory was told, a few corrections."""
    rng = random.Random(seed)
    words = _vocabulary(400, seed + 1)
    statements: list[str] = []
    for i in range(turns // 2):
        if i % 3 == 0 and said:
            statements.append(rng.choice(said))
        elif i % 17 == 5:
            statements.append(f"Sorry, I meant Postgres {rng.randint(11, 17)}.")
        else:
            statements.append(_statement(rng, words))
    return _session(statements)


def measure(sizes: tuple[int, ...], repeat: int) -> dict[str, Any]:
    from dreamd.models.offline.extract import pipeline

    counts = {"corrects": 0, "near_duplicate": 0}
    corrects, near = pipeline._corrects, pipeline._near_duplicate

    def counted_corrects(new: str, old: str) -> bool:
        counts["corrects"] += 1
        return corrects(new, old)

    def counted_near(a: Any, b: Any) -> bool:
        counts["near_duplicate"] += 1
        return near(a, b)

    admit = pipeline._Answer.admit
    spent = [0.0]

    def timed_admit(self: Any, *args: Any) -> Any:
        t = time.process_time()
        try:
            return admit(self, *args)
        finally:
            spent[0] += time.process_time() - t

    setattr(pipeline, "_corrects", counted_corrects)  # noqa: B010 (the module's own names, counted)
    setattr(pipeline, "_near_duplicate", counted_near)  # noqa: B010
    setattr(pipeline._Answer, "admit", timed_admit)  # noqa: B010
    rows: dict[str, Any] = {}
    for n in sizes:
        index, said = build_index(n)
        payload = {"task": "extract", "today": TODAY, "index": index, "turns": long_session(said)}
        best_total = best_admit = float("inf")
        records: list[dict[str, str]] = []
        for _ in range(repeat):
            counts.update(corrects=0, near_duplicate=0)
            spent[0] = 0.0
            t = time.process_time()
            records = pipeline.extract(payload)
            best_total = min(best_total, time.process_time() - t)
            best_admit = min(best_admit, spent[0])
        rows[str(n)] = {"records": n, "turns": len(payload["turns"]), "extract_cpu_s": round(best_total, 3),
                        "admit_cpu_s": round(best_admit, 3), "corrects_calls": counts["corrects"],
                        "near_duplicate_calls": counts["near_duplicate"], "kept": len(records),
                        "answer": records}
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=lambda s: tuple(int(x) for x in s.split(",")), default=SIZES)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--against", type=Path, help="another checkout to measure in the same run")
    p.add_argument("--root", type=Path, default=REPO, help=argparse.SUPPRESS)
    p.add_argument("--emit", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--json", type=Path, default=REPO / "benchmarks" / "results" / "extract_scale.json")
    args = p.parse_args(argv)
    sys.path.insert(0, str(args.root))
    if args.emit:
        print(json.dumps(measure(args.sizes, args.repeat)))
        return 0

    def child(root: Path) -> dict[str, Any]:
        cmd = [sys.executable, __file__, "--emit", "--root", str(root), "--repeat", str(args.repeat),
               "--sizes", ",".join(map(str, args.sizes))]
        out: dict[str, Any] = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        return out

    runs = {"this": child(REPO)}
    if args.against:
        runs["against"] = child(args.against)
    differ = 0
    print(f"{'N':>6} {'checkout':>8} {'extract s':>10} {'admit s':>8} {'_corrects':>10} {'_near_dup':>10} {'kept':>5}")
    for n in map(str, args.sizes):
        for label, rows in runs.items():
            r = rows[n]
            print(f"{n:>6} {label:>8} {r['extract_cpu_s']:>10.3f} {r['admit_cpu_s']:>8.3f} "
                  f"{r['corrects_calls']:>10} {r['near_duplicate_calls']:>10} {r['kept']:>5}")
        if args.against:
            differ += runs["this"][n]["answer"] != runs["against"][n]["answer"]
    if args.against:
        print(f"sizes whose records differ: {differ}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    summary = {label: {n: {k: v for k, v in r.items() if k != "answer"} for n, r in rows.items()} for label, rows in runs.items()}
    args.json.write_text(json.dumps({"runs": summary, "records_differ": differ}, indent=2) + "\n")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
