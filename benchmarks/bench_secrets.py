"""Secret redaction on a labelled set, through every way text enters dreamd (issue 22).

Each item of a set (``benchmarks/secrets/<split>.jsonl``, one JSON object a line: ``id``,
``lang``, ``context``, ``form``, ``text``, ``secrets``, ``survive``) is run through each entry
point, and what comes out is checked:

* **redactor**: ``memory.redact.redact(text)``.
* **hook**: a Claude Code session file whose user turn is the text goes through the hook's
  job-writing path (``dreamd.hook.transcript.read_conversation`` with its prefix cache, then
  ``memory.client.submit_parts``, as ``dreamd.hook.main.enqueue`` calls them); the job file
  and the cache file are read back.
* **remember**: ``memory.client.remember`` (the library) writes a job; the job file is read back.
* **store**: ``MemoryStore.commit`` of a record whose description and body are the text and
  whose name is slugged from it (as ``remember`` over MCP and extraction derive names); the
  record file, its file name and MEMORY.md are read back.
* **mcp**: the MCP ``remember`` tool (``dreamd.mcp.tools.MemoryTools``) without a name; the
  answer, the record file, its name and MEMORY.md.
* **extraction**: a record an extractor or a dream returned (``dreamd.jobs.work`` redacts it
  before the commit), committed; read back as for the store.
* **sync**: the text committed by hand to a memory directory's git repository (a file written
  outside dreamd), then ``dreamd.sync.flow.Repo.outgoing_secrets``: a secret item counts as
  caught when the push would be refused, a look-alike is a false positive when it would be.

Scoring: a secret is caught when, after redaction (markers taken out), the secret is absent
and none of its 6-character windows remains; recall = caught / secrets. A look-alike item (no
secrets) is a false positive when any of its ``survive`` substrings was altered; FP rate =
FP items / look-alike items. Targets: recall 1.0 on dev, ≥ 0.98 on blind, FP ≤ 2 %.

Sets: ``dev`` (written with the detector), ``blind`` to ``blind10`` (written blind, each scored
held-out for one round and since read by the detector's writer: development sets now). Each
round's new blind set is held out: never read by whoever works on the detector, scored by the
lead before and after the round.

Run: ``.venv/bin/python benchmarks/bench_secrets.py [--split dev|blind|blind2|blind3|blind4|blind5|blind6|blind7|blind8|blind9|blind10] [--points a,b]``.
Prints a table (and the misses) and writes ``benchmarks/results/secrets-<split>.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from memory.redact import redact  # noqa: E402

SETS = REPO / "benchmarks" / "secrets"
RESULTS = REPO / "benchmarks" / "results"
SPLITS = ("dev", "blind", "blind2", "blind3", "blind4", "blind5", "blind6", "blind7", "blind8", "blind9", "blind10")
"""Development sets: every one of them has been scored held-out once and read since."""
_MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")


def caught(secret: str, out: str) -> bool:
    clean = _MARKER.sub("\x00", out)
    if secret in clean:
        return False
    return not any(secret[i : i + 6] in clean for i in range(len(secret) - 5))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _json_strings(raw: str) -> str:
    """Every string inside a JSON document, and inside JSONL lines embedded in those."""
    out: list[str] = []
    for s in _strings(json.loads(raw)):
        out.append(s)
        for line in s.splitlines():
            if line.startswith("{"):
                with contextlib.suppress(ValueError):
                    out.extend(_strings(json.loads(line)))
    return "\n".join(out)


# ----------------------------------------------------------------------------- entry points


def point_redactor(text: str, work: Path) -> str:
    return redact(text)[0]


def _session_line(text: str) -> str:
    return json.dumps(
        {
            "type": "user",
            "uuid": str(uuid.uuid4()),
            "sessionId": "bench",
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": text},
        },
        ensure_ascii=False,
    )


def point_hook(text: str, work: Path) -> str:
    from dreamd.hook.transcript import read_conversation
    from memory.client import submit_parts

    session = work / "session.jsonl"
    session.write_text(_session_line(text) + "\n", encoding="utf-8")
    cache = work / "hook-cache"
    spool = work / "spool"
    lines, _cost = read_conversation(session, cache)
    jobs = submit_parts(
        [(b"\n".join(line for _, line in lines).decode("utf-8") + "\n", "bench", _now())],
        memory_dir=work / "mem",
        format="claude-code",
        spool=spool,
        redacted=True,
    )
    seen = [
        _json_strings((spool / "new" / f"{job}.json").read_text(encoding="utf-8")) for job in jobs
    ]
    for cached in cache.glob("*.cache"):
        for raw in cached.read_text(encoding="utf-8").splitlines()[1:]:
            seen.append("\n".join(_strings(json.loads(raw[2:]))))
    return "\n".join(seen)


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)


def point_remember(text: str, work: Path) -> str:
    from memory.client import remember

    spool = work / "spool"
    job = remember(
        work / "mem",
        name=_slug(text),
        type="project",
        description=_first_line(text),
        body=text,
        spool=spool,
    )
    return _json_strings((spool / "new" / f"{job}.json").read_text(encoding="utf-8"))


def _first_line(text: str) -> str:
    line = next((ln for ln in text.splitlines() if ln.strip()), text).strip()
    return line[:200]


def _slug(text: str) -> str:
    from memory.store.records import slugify

    return slugify(_first_line(text))


def _managed(work: Path) -> Any:
    from memory.store.transaction import MemoryStore

    mem = work / "mem"
    mem.mkdir(exist_ok=True)
    store = MemoryStore(mem)
    return store if store.is_managed() else MemoryStore.init(mem)


def _read_back(store: Any) -> str:
    """Record files (with their names), MEMORY.md and the manifest of a store."""
    parts = []
    for path in sorted(store.path.iterdir()):
        if path.is_file() and path.suffix in (".md", ".json"):
            parts.append(path.name)
            raw = path.read_text(encoding="utf-8")
            # the manifest's values (names, actors, hashes), not its keys: "change" is a key
            # of every manifest and six characters of a password such as "changeme42"
            parts.append(_json_strings(raw) if path.suffix == ".json" else raw)
    return "\n".join(parts)


def point_store(text: str, work: Path) -> str:
    from memory.store.records import make_record
    from memory.store.transaction import Change

    store = _managed(work)
    rec = make_record(_slug(text), "project", _first_line(text), text, where="bench")
    store.commit(Change(add=[rec]))
    return _read_back(store)


def point_mcp(text: str, work: Path) -> str:
    from dreamd.config import load_config
    from dreamd.mcp.tools import MemoryTools

    store = _managed(work)
    config = work / "config.toml"
    config.write_text(
        f'[daemon]\nroots = ["{store.path}"]\nspool = "{work / "spool"}"\n', encoding="utf-8"
    )
    tools = MemoryTools.for_config(load_config(config), store.path, "--memory-dir")
    answer = tools.call(
        "remember", {"type": "project", "description": _first_line(text), "body": text}
    )
    # The kinds the answer reports ("redacted before writing: github-token") are the redactor's
    # vocabulary, like a marker's: "github" is not six characters of the value github_pat_….
    said = answer.text.split("; redacted before writing:")[0]
    data = {k: v for k, v in answer.data.items() if k != "redacted"}
    return said + "\n" + json.dumps(data, ensure_ascii=False) + "\n" + _read_back(store)


def point_extraction(text: str, work: Path) -> str:
    from dreamd.jobs.work import _redact_record
    from memory.store.records import make_record
    from memory.store.transaction import Change

    store = _managed(work)
    rec = _redact_record(
        make_record(_slug(text), "project", _first_line(text), text, where="bench")
    )
    store.commit(Change(add=[rec], actor="job"))
    return _read_back(store)


def point_sync(text: str, work: Path) -> bool:
    """True when ``dreamd sync`` would refuse to push a file holding ``text``."""
    from dreamd.sync.flow import Repo
    from memory.store.transaction import MemoryStore

    repo_dir = work / "repo"
    repo_dir.mkdir()
    (repo_dir / "note.md").write_text(text + "\n", encoding="utf-8")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}  # fmt: skip
    for args in (["init", "-q", "-b", "main"], ["add", "note.md"], ["commit", "-q", "-m", "x"]):
        subprocess.run(
            ["git", "-C", str(repo_dir), *args], check=True, env=env, capture_output=True
        )
    return bool(Repo(MemoryStore(repo_dir)).outgoing_secrets())


POINTS: dict[str, Callable[[str, Path], Any]] = {
    "redactor": point_redactor,
    "hook": point_hook,
    "remember": point_remember,
    "store": point_store,
    "mcp": point_mcp,
    "extraction": point_extraction,
    "sync": point_sync,
}


# ----------------------------------------------------------------------------- scoring


def load(split: str, path: Path | None = None) -> list[dict[str, Any]]:
    path = path or SETS / f"{split}.jsonl"
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def score(items: list[dict[str, Any]], point: str) -> dict[str, Any]:
    run = POINTS[point]
    total = hit = fp = lookalikes = 0
    misses: list[str] = []
    altered: list[str] = []
    seconds = 0.0
    for item in items:
        with tempfile.TemporaryDirectory(prefix="bench-secrets-") as tmp:
            start = time.perf_counter()
            out = run(item["text"], Path(tmp))
            seconds += time.perf_counter() - start
        if isinstance(out, str):  # a job names its memory directory: "/tmp/bench-secrets-…"
            out = out.replace(tmp, "\x00")  # is not six characters of "secret_…" left behind
        for secret in item["secrets"]:
            total += 1
            ok = out if isinstance(out, bool) else caught(secret, out)
            hit += ok
            if not ok:
                misses.append(f"{item['id']} ({item['form']})")
        if not item["secrets"]:
            lookalikes += 1
            bad = out if isinstance(out, bool) else any(s not in out for s in item["survive"])
            if bad:
                fp += 1
                altered.append(f"{item['id']} ({item['form']})")
    return {
        "point": point,
        "secrets": total,
        "caught": hit,
        "recall": round(hit / total, 4) if total else None,
        "lookalikes": lookalikes,
        "false_positives": fp,
        "fp_rate": round(fp / lookalikes, 4) if lookalikes else None,
        "ms_per_item": round(seconds / len(items) * 1000, 2) if items else 0,
        "missed": misses,
        "altered": altered,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--split",
        default="dev",
        help="dev, blind to blind10: development sets (default dev; with --path, the set is named by its"
        " file, as the lead scores a held-out one)",
    )
    parser.add_argument("--points", default=",".join(POINTS))
    parser.add_argument("--path", type=Path, help="the set's file (default benchmarks/secrets/<split>.jsonl)")
    args = parser.parse_args()
    items = load(args.split, args.path)
    if args.path is not None:  # the set is named by its file: --path blind3.jsonl scores "blind3", not "dev"
        args.split = args.path.stem
    forms = {it["form"] for it in items if it["secrets"]}
    rows = [score(items, p) for p in args.points.split(",")]
    print(
        f"set {args.split}: {len(items)} items, {sum(len(i['secrets']) for i in items)} secrets in "
        f"{len(forms)} forms, {sum(1 for i in items if not i['secrets'])} look-alikes"
    )
    print(
        f"{'entry point':<12} {'secrets':>8} {'caught':>7} {'recall':>7} {'look-alikes':>12} {'FP':>4} {'FP rate':>8} {'ms/item':>8}"
    )
    for r in rows:
        print(
            f"{r['point']:<12} {r['secrets']:>8} {r['caught']:>7} {r['recall']:>7.3f} {r['lookalikes']:>12} "
            f"{r['false_positives']:>4} {r['fp_rate']:>8.3f} {r['ms_per_item']:>8.2f}"
        )
    for r in rows:
        if r["missed"] or r["altered"]:
            print(
                f"  {r['point']}: missed {', '.join(r['missed']) or '-'}; altered {', '.join(r['altered']) or '-'}"
            )
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"secrets-{args.split}.json"
    out.write_text(
        json.dumps(
            {
                "split": args.split,
                "python": platform.python_version(),
                "items": len(items),
                "forms": len(forms),
                "rows": rows,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"wrote {out.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
