"""``dreamd explain``: what the offline extractor keeps from a transcript, and why, turn by turn.

The transcript goes the way an ``extract`` job takes it (:func:`dreamd.jobs.work.execute`): the
same parser (:func:`memory.transcripts.parse_transcript`), the same redaction and windows
(:func:`dreamd.jobs.batches.windows`), the same payload (:func:`dreamd.models.prompts.extract_payload`),
then the offline engine with a :class:`~dreamd.models.offline.extract.trace.Trace` that collects
refusals too. Nothing is written: no spool, no store. The index is empty (a job would also skip
what its directory already holds), and the engine is always the offline one, whatever ``[model]``
says, since only it can say which rule decided.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from dreamd.cli.common import TRANSCRIPT_FORMATS
from memory.errors import UsageError

EXIT_OK = 0


def _read(path: str, max_bytes: int) -> bytes:
    if path == "-":
        content = sys.stdin.buffer.read(max_bytes + 1)
    else:
        with Path(path).open("rb") as fh:
            content = fh.read(max_bytes + 1)
    if len(content) > max_bytes:
        raise UsageError(f"{path}: transcript over {max_bytes} bytes")
    return content


def explain(content: bytes, format: str, *, today: date | None = None) -> list[dict[str, Any]]:
    """Every decision the offline extractor makes on ``content``, turn numbers counted in the
    whole transcript (the job's windows are numbered apart)."""
    from dreamd.jobs.batches import windows
    from dreamd.jobs.work import EXTRACT_MAX_CHARS
    from dreamd.models.offline.extract.pipeline import extract
    from dreamd.models.offline.extract.trace import Trace
    from dreamd.models.prompts import extract_payload
    from memory.redact import redact
    from memory.store.manifest import parse_iso
    from memory.transcripts import parse_transcript

    transcript = parse_transcript(content, format)
    redacted = [dataclasses.replace(t, text=redact(t.text)[0]) for t in transcript.turns]
    out: list[dict[str, Any]] = []
    for number, window in enumerate(windows(redacted, 0, EXTRACT_MAX_CHARS), start=1):
        stamps = [parse_iso(t.timestamp) for t in reversed(window.turns)]
        day = next((s.date() for s in stamps if s is not None), today or datetime.now(UTC).date())
        trace = Trace(refused=True)
        extract(extract_payload(window.turns, [], today=day), trace)
        for d in trace.decisions:
            out.append({"window": number, **d.as_json(), "turn": window.start + d.turn})
    return out


def render(decisions: list[dict[str, Any]]) -> str:
    from dreamd.models.offline.extract.trace import STAGES

    lines: list[str] = []
    turn: int | None = None
    for d in decisions:
        if d["turn"] != turn:
            turn = d["turn"]
            lines.append(f"turn {turn} ({d['role']})")
        verdict = "kept   " if d["kept"] else "refused"
        why = d["stage"] + (f"/{d['rule']}" if d.get("rule") else "")
        what = f" -> {d['record']}" if d.get("record") else (f" ({d['detail']})" if d.get("detail") else "")
        lines.append(f"  {verdict} {why:<22} {json.dumps(d['sentence'], ensure_ascii=False)}{what}")
    kept = sum(1 for d in decisions if d["kept"])
    lines.append(f"{kept} record(s) from {len({d['turn'] for d in decisions})} turn(s) with decisions")
    used = sorted({d["stage"] for d in decisions})
    lines.extend(f"  {s}: {STAGES.get(s, '')}" for s in used)
    return "\n".join(lines)


def cmd_explain(args: argparse.Namespace) -> int:
    from memory.spool.jobformat import MAX_JOB_BYTES

    decisions = explain(_read(args.file, MAX_JOB_BYTES), args.format)
    if args.json:
        print(json.dumps(decisions, ensure_ascii=False, indent=2))
    else:
        print(render(decisions))
    return EXIT_OK


def _explain(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_explain)
    sp.add_argument("file", metavar="FILE|-")
    sp.add_argument("--format", default="auto", choices=TRANSCRIPT_FORMATS)
    sp.add_argument("--json", action="store_true")


ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {"explain": _explain}

__all__ = ["ARGUMENTS", "cmd_explain", "explain", "render"]
