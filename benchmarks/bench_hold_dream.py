"""The dream's side of issue 23's corrections: what a dream supersedes among the records
extraction made, scored on the hold sets' ``supersedes`` labels.

Each session is extracted as the hook submits it, one job per user turn (the session so far,
one cursor, every commit a minute after the last, so records said earlier are older), then
one forced dream runs over the directory. The corrections are scored as ``bench_hold4.py``
scores them (:func:`benchmarks.bench_hold4.score_session`) on the records before the dream and
after it: **applied by the dream** (not applied before, applied after), **undone** (the
reverse), stale values before/after, and **wrong rewrites** (a history line holding no old
value a label of the session names) before/after, with the records the dream superseded
(``dreamd log``'s "superseded", from the store's change) and how many of them are wrong.

hold12 is held out this round: it is not among the sets this script takes.

Usage: ``python benchmarks/bench_hold_dream.py [--set hold4 …] [--json OUT]``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
import tempfile
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.bench_hold4 import SETS, _history, new_outcome, score_session  # noqa: E402
from benchmarks.bench_quality import (  # noqa: E402
    Produced,
    _noon,
    claude_code_transcript,
    load_extraction,
    term_found,
)

DEVELOPMENT = ("hold4", "hold5", "hold6", "hold7", "hold8", "hold9", "hold10", "hold11")


def _ticking(start: datetime) -> Callable[[], datetime]:
    """A clock a minute later at every call: each commit's records are stamped after the last's."""
    at = [start]

    def now() -> datetime:
        at[0] += timedelta(minutes=1)
        return at[0]

    return now


def run_session(session: Any, model: Any, config: Any, workdir: Path) -> tuple[list[Produced], list[Produced], int]:
    """The records one session leaves, extracted turn by turn, before and after one forced dream,
    and how many records the dream superseded."""
    from dreamd.jobs.work import Context, dream, execute
    from dreamd.models.supersession import is_supersession
    from memory.errors import DreamdError
    from memory.spool.jobs import Job, Transcript
    from memory.store.transaction import MemoryStore

    mdir = workdir / session.id
    MemoryStore.init(mdir)
    store = MemoryStore(mdir, clock=_ticking(_noon(session.today) - timedelta(days=1)))
    ctx = Context(config=config, model=model, ledger=None, clock=lambda: _noon(session.today),
                  _stores={os.path.realpath(mdir): store})
    ends = [*[i + 1 for i, t in enumerate(session.turns) if t.role == "user"][1:], len(session.turns)]
    for n, end in enumerate(ends):
        so_far = dataclasses.replace(session, turns=session.turns[:end])
        job = Job(id=f"dream-{session.id}-{n}", kind="extract", memory_dir=mdir, session_id=f"s-{session.id}",
                  submitted_at=_noon(session.today).isoformat().replace("+00:00", "Z"),
                  transcript=Transcript(format="auto", content=claude_code_transcript(so_far)))
        with contextlib.suppress(DreamdError):  # a refused window: the bench goes on, as bench_hold4 does
            execute(job, ctx)
    live = {r.name: r for _, r in store.records()}
    result = dream(mdir, ctx, force=True)
    after = [Produced(r.type, r.description, r.body) for _, r in store.records()]
    superseding = [op for op in result.plan if op.result is not None
                   and is_supersession(op.result, [live[n] for n in op.source_names if n in live])]
    return [Produced(r.type, r.description, r.body) for r in live.values()], after, len(superseding)


def main(argv: list[str] | None = None) -> int:
    from dreamd.config import default_config
    from dreamd.models.factory import make_model

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=DEVELOPMENT, action="append", help="default: hold4 to hold11")
    parser.add_argument("--json", type=Path, default=REPO / "benchmarks" / "results" / "hold_dream.json")
    args = parser.parse_args(argv)
    config = default_config(env={})
    model = make_model(config.model)
    report: dict[str, Any] = {}
    for name in args.set or DEVELOPMENT:
        before, after = new_outcome(), new_outcome()
        row = {"by_dream": 0, "undone": 0, "superseded": 0, "wrong_by_dream": 0}
        with tempfile.TemporaryDirectory(prefix="dreamd-hold-dream-") as tmp:
            for s in load_extraction(SETS[name]):
                was, now, superseded = run_session(s, model, config, Path(tmp))
                pre, post = score_session(s, was, before), score_session(s, now, after)
                row["by_dream"] += sum(b and not a for a, b in zip(pre, post, strict=True))
                row["undone"] += sum(a and not b for a, b in zip(pre, post, strict=True))
                row["superseded"] += superseded
                olds = [o for t in s.turns for f in t.facts for o in f.supersedes]
                had = {_history(r) for r in was}
                row["wrong_by_dream"] += sum(bool(h := _history(r)) and h not in had
                                             and not any(term_found(o, h) for o in olds) for r in now)
        report[name] = {"before_dream": before, "after_dream": after, **row}
        print(f"{name}: applied {before['applied']} -> {after['applied']} of {before['corrections']} "
              f"(by the dream {row['by_dream']}, undone {row['undone']}), stale {before['stale']} "
              f"({before['stale_elsewhere']}) -> {after['stale']} ({after['stale_elsewhere']}), "
              f"wrong rewrites {before['wrong_rewrites']} -> {after['wrong_rewrites']}, "
              f"superseded by the dream {row['superseded']} (wrong {row['wrong_by_dream']})", flush=True)
    total = {k: sum(r[k] for r in report.values()) for k in ("by_dream", "undone", "superseded", "wrong_by_dream")}
    print("all:", json.dumps(total))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
