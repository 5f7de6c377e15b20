"""Do two checkouts extract the same records? For a change meant to leave every answer as it is.

For every session of the dev split and of hold4 … hold12 it compares, between this checkout and
``--against`` (a ``git archive`` of main, say):

* ``job``: the records the real extract job commits into a fresh directory
  (``bench_quality.run_extraction``);
* ``indexed``: the offline ``extract`` answer for the session's turns when the directory's index
  already holds the records the job made from the next 40 sessions of its set (a couple of
  hundred records, so a sentence meets many records of its own kind, as in a team directory).

Prints, per set, how many sessions differ in either; only counts for a set held out (hold12).
Exit status 1 when anything differs.

    python benchmarks/compare_extract.py --against /tmp/main
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SETS = ("dev", "hold4", "hold5", "hold6", "hold7", "hold8", "hold9", "hold10", "hold11", "hold12")
HELD_OUT = ("hold12",)
WINDOW = 40  # the sessions after it (wrapping round) whose records make a session's index


def produce(sets: tuple[str, ...]) -> dict[str, Any]:
    from benchmarks.bench_quality import QUALITY_DIR, load_extraction, run_extraction
    from dreamd.models.offline.extract.pipeline import extract
    from dreamd.models.offline.model import OfflineModel

    model = OfflineModel()
    out: dict[str, Any] = {}
    for name in sets:
        sessions = load_extraction(QUALITY_DIR / f"extraction_{name}.jsonl")
        job: dict[str, list[list[str]]] = {}
        with tempfile.TemporaryDirectory(prefix="dreamd-compare-") as tmp:
            for s in sessions:
                job[s.id] = [[r.type, r.description, r.body] for r in run_extraction(s, model, Path(tmp))]
        indexed: dict[str, list[dict[str, str]]] = {}
        ids = list(job)
        for at, s in enumerate(sessions):
            others = [ids[(at + j) % len(ids)] for j in range(1, min(WINDOW, len(ids) - 1) + 1)]
            index = [{"name": f"{other}-{k}", "type": t, "description": d} for other in others for k, (t, d, _) in enumerate(job[other])]
            turns = [{"role": t.role, "text": t.text, "timestamp": t.timestamp} for t in s.turns if t.role in ("user", "assistant")]
            indexed[s.id] = extract({"task": "extract", "today": s.today, "index": index, "turns": turns})
        out[name] = {"job": job, "indexed": indexed}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--against", type=Path, required=False)
    p.add_argument("--sets", type=lambda s: tuple(s.split(",")), default=SETS)
    p.add_argument("--root", type=Path, default=REPO, help=argparse.SUPPRESS)
    p.add_argument("--emit", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.emit:
        sys.path.insert(0, str(args.root))
        args.emit.write_text(json.dumps(produce(args.sets)))
        return 0
    results = []
    with tempfile.TemporaryDirectory(prefix="dreamd-compare-") as tmp:
        for i, root in enumerate((REPO, args.against)):
            target = Path(tmp) / f"{i}.json"
            subprocess.run([sys.executable, __file__, "--root", str(root), "--emit", str(target),
                            "--sets", ",".join(args.sets)], check=True, stderr=subprocess.DEVNULL)
            results.append(json.loads(target.read_text()))
    this, other = results
    differ_total = 0
    for name in args.sets:
        row = []
        for part in ("job", "indexed"):
            a, b = this[name][part], other[name][part]
            differ = sorted(sid for sid in a.keys() | b.keys() if a.get(sid) != b.get(sid))
            records = sum(map(len, a.values()))
            differ_total += len(differ)
            shown = "" if name in HELD_OUT or not differ else f" {differ[:5]}"
            row.append(f"{part}: {len(a)} sessions, {records} records, {len(differ)} sessions differ{shown}")
        print(f"{name:>7}  " + "; ".join(row))
    print(f"sessions that differ: {differ_total}")
    return 1 if differ_total else 0


if __name__ == "__main__":
    raise SystemExit(main())
