"""``dreamd demo``: the newcomer's tour, offline, in a few seconds.

It builds a throw-away world in a temporary directory (or ``--dir``): a managed memory
directory, a config whose roots allow exactly it and whose spool lives beside it, then walks
the real pipeline — submit the sample Claude Code session shipped in ``dreamd/data/``
(English and Chinese, with a fake API key that must never reach a record), one daemon pass
(``dreamd once``) that extracts memories and commits them, a forced dream, the derived
``MEMORY.md`` index, ``dreamd log`` and a recall — and says where every file lives.

Nothing outside that directory is touched: the usage ledger (``XDG_STATE_HOME``) and the
derived caches (``XDG_CACHE_HOME``) are pointed inside it for the duration, the daemon's structured logs go to ``daemon.log`` there instead of
interleaving with the tour, and the model is the offline backend whatever the user's own config
says, so no key or network is needed. It changes process-wide state while it runs (the
environment, ``sys.stdout``, the log configuration), so it is a command, not a library call.

Exit 0 when the sample's memories were extracted and committed, else 1 with the reason.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from datetime import UTC, date, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import TextIO

from dreamd.config import Config, load_config
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore

__all__ = ["ARGUMENTS", "SAMPLE", "cmd_demo", "run_demo", "sample_transcript"]

SAMPLE = "sample_transcript.jsonl"
PROJECT = "ledger-api"
PASSES = 5
REDACTED_RE = re.compile(r"\[REDACTED:[a-z0-9-]+\]")
RECALL_QUERY = "how should I write tests for the database code?"


def sample_transcript() -> bytes:
    """The shipped sample session (package data, so it works from a wheel too)."""
    return resources.files("dreamd").joinpath("data", SAMPLE).read_bytes()


def _toml_str(text: str | Path) -> str:
    """A TOML basic string (JSON's escaping is a subset TOML accepts)."""
    return json.dumps(str(text), ensure_ascii=False)


def _write_config(base: Path, memory_dir: Path) -> Path:
    path = base / "config.toml"
    path.write_text(
        "# Written by `dreamd demo`: everything lives inside this directory.\n"
        "[daemon]\n"
        f"spool = {_toml_str(base / 'spool')}\n"
        f"roots = [{_toml_str(glob.escape(str(memory_dir)))}]\n"
        "workers = 1\n"
        "\n[gates]\n"
        "threshold = 1000   # the tour dreams explicitly (forced) below\n"
        "\n[model]\n"
        'backend = "offline"\n',
        encoding="utf-8",
    )
    return path


@contextmanager
def _state_home(base: Path) -> Iterator[None]:
    """Point ``XDG_STATE_HOME`` (the usage ledger) and ``XDG_CACHE_HOME`` (the derived caches:
    the parsed config) inside the demo for its duration."""
    saved = {key: os.environ.get(key) for key in ("XDG_STATE_HOME", "XDG_CACHE_HOME")}
    os.environ["XDG_STATE_HOME"] = str(base / "state")
    os.environ["XDG_CACHE_HOME"] = str(base / "cache")
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _seed(store: MemoryStore, today: date) -> None:
    """What two earlier sessions left behind: the same rule in two wordings (concurrent
    agents paraphrase each other) and a date that has passed — the work a dream exists for."""
    demo_day = today - timedelta(days=31)
    store.commit(
        Change(
            add=[
                make_record(
                    "ruff-format-before-commit",
                    "feedback",
                    "Run ruff format before committing",
                    "Run ruff format before committing.\n**Why:** CI rejects unformatted code.",
                ),
                make_record(
                    "sprint-41-demo",
                    "project",
                    f"Sprint 41 demo to the payments team on {demo_day.isoformat()}",
                    f"The sprint 41 demo to the payments team is on {demo_day.isoformat()}.",
                    extra={"expires": (demo_day + timedelta(days=1)).isoformat()},
                ),
            ],
            actor="manual",
            session_id="a41c0b7e",
        )
    )
    store.commit(
        Change(
            add=[
                make_record(
                    "format-changed-files",
                    "feedback",
                    "Always run ruff format on changed files before committing",
                    "Always run ruff format on changed files before committing.\n"
                    "**How to apply:** run it right before git commit.",
                )
            ],
            actor="manual",
            session_id="b9d2e413",
        )
    )


def _drain(config: Config, job_id: str, memory_dir: Path) -> str | None:
    """Run the daemon's one-pass mode until ``job_id`` is applied; None or why it was not."""
    from dreamd.daemon.supervisor import once
    from memory.spool.queue import Spool

    store = MemoryStore(memory_dir)
    spool = Spool(config.daemon.spool)
    for _ in range(PASSES):
        once(config)
        if job_id in store.read().applied_jobs:
            return None
        if job_id in spool.failed_ids():
            doc = spool.failure(job_id)
            return f"job {job_id} failed: {doc.get('reason', 'no reason recorded')}"
        spool.release_due()
    return f"job {job_id} was not committed after {PASSES} passes of dreamd once"


def _indent(text: str, prefix: str = "      ") -> str:
    return "\n".join(prefix + line if line else line for line in text.rstrip("\n").splitlines())


def run_demo(dir: Path | None = None, *, out: TextIO | None = None) -> int:
    """The tour; ``dir`` (created if needed) keeps the result, else a fresh temp directory."""
    out = sys.stdout if out is None else out
    started = time.monotonic()
    # Resolved: roots and job checks compare real paths (macOS's /var is /private/var).
    base = Path(dir).expanduser() if dir else Path(tempfile.mkdtemp(prefix="dreamd-demo-"))
    base = base.resolve()
    base.mkdir(parents=True, exist_ok=True)
    log_path = base / "daemon.log"
    with (
        _state_home(base),
        log_path.open("a", encoding="utf-8") as log_file,
        redirect_stdout(log_file),
    ):
        try:
            return _tour(base, out, started)
        finally:
            _logs_to_stderr()


def _logs_to_stderr() -> None:
    """``once`` pointed the structured logs at the demo's log file, which is closing now."""
    from dreamd.logs import configure

    configure("json", stream=sys.stderr)


def _tour(base: Path, out: TextIO, started: float) -> int:
    from dreamd.jobs import work
    from memory.client import submit
    from memory.retrieval.recall import recall
    from memory.store.history import log_entries, render_log

    def say(text: str = "") -> None:
        out.write(text + "\n")

    memory_dir = base / PROJECT / ".memory"
    config_path = _write_config(base, memory_dir)
    config = load_config(config_path)
    store = MemoryStore.init(memory_dir)
    fresh = not store.read().records
    if fresh:
        _seed(store, datetime.now(UTC).date())
    say(f"==> A managed memory directory: {memory_dir}")
    say(f"    config {config_path} (offline model, spool {config.daemon.spool})")
    if fresh:
        say("    two earlier sessions left 3 memories: one rule in two wordings, one past date")

    sample = sample_transcript()
    job_id = submit(sample, memory_dir=str(memory_dir), spool=config.daemon.spool)
    say("")
    say(
        f"==> Submitted the sample Claude Code session ({len(sample.splitlines())} lines, English and 中文)"
    )
    say(f"    job {job_id} is in {config.daemon.spool / 'new'}")
    job_text = (config.daemon.spool / "new" / f"{job_id}.json").read_text(encoding="utf-8")
    markers = sorted(set(REDACTED_RE.findall(job_text)))
    if "sk-ant-" in job_text or not markers:
        out.write("dreamd demo: the sample's API key was not redacted from the job\n")
        return 1
    say(
        f"    the API key pasted in the session was redacted before the job was written: {', '.join(markers)}"
    )

    say("")
    say("==> One daemon pass (dreamd once): claim the job, extract memories, commit")
    before = store.read().generation
    problem = _drain(config, job_id, memory_dir)
    if problem is not None:
        out.write(f"dreamd demo: {problem}\n")
        return 1
    pairs = store.records()
    manifest = store.read()
    new = [(e, r) for e, r in pairs if f"job:{job_id}" in e.sources]
    say(
        f"    generation {before} -> {manifest.generation}: {len(new)} new memories "
        f"({len(pairs)} in the set; what the set already knew was not extracted twice)"
    )
    if not new and fresh:
        out.write("dreamd demo: the sample yielded no memories\n")
        return 1
    if not new:
        say("    (this directory has seen the session before: its cursor says every turn is done)")
    for entry, rec in new:
        say(f"    [{rec.type}] {entry.name}: {rec.description}")
        say(_indent(rec.body))
        say(f"      ({entry.file})")

    say("")
    say("==> A forced dream (dreamd consolidate --force): merge, resolve, prune — one commit")
    ctx = work.Context.create(config)
    result = work.dream(memory_dir, ctx, force=True)
    say(f"    dream {result.status}: {len(result.plan)} operation(s)")
    for op in result.plan:
        target = f"-> {op.result.name}" if op.result is not None else "-> dropped"
        say(f"    {', '.join(op.source_names)} {target}")
    if result.status not in ("applied", "nothing"):
        say(f"    ({result.reason})")
    by_name = dict((e.name, (e, r)) for e, r in store.records())
    for op in result.plan:
        if op.result is not None and op.result.name in by_name:
            entry, rec = by_name[op.result.name]
            say(f"    merged record {entry.file}:")
            say(_indent(rec.body))

    say("")
    say(f"==> The index agents load at start-up ({memory_dir / 'MEMORY.md'})")
    say(_indent((memory_dir / "MEMORY.md").read_text(encoding="utf-8"), "    "))

    say("")
    say(f"==> dreamd log {memory_dir}")
    say(_indent(render_log(log_entries(store)), "    "))

    say("")
    say(f'==> dreamd recall {memory_dir} "{RECALL_QUERY}"')
    found = recall(memory_dir, RECALL_QUERY, limit=3)
    for r in found.records:
        say(f"    [{r.type}] {r.name}: {r.description}")
    if not found.records:
        say("    (nothing matched)")

    say("")
    say("==> Where everything lives")
    say(f"    memories     {memory_dir}/*.md  (plain Markdown: open, edit, delete by hand)")
    say(f"    manifest     {memory_dir / 'manifest.json'}  (the one authority)")
    say(f"    history      {memory_dir / '.history'}  (old manifests and replaced files)")
    say(f"    spool        {config.daemon.spool}  (done/ holds the processed job)")
    say(f"    config       {config_path}")
    say(f"    daemon log   {base / 'daemon.log'}  (one JSON object per line)")
    say(f"    try          dreamd status --config {shlex.quote(str(config_path))}")
    say(f"    clean up     rm -rf {shlex.quote(str(base))}")
    say(f"    ({time.monotonic() - started:.1f}s, offline, no API key)")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    return int(run_demo(Path(args.dir) if args.dir else None, out=sys.stdout))


def _demo(sp: argparse.ArgumentParser) -> None:
    sp.set_defaults(handler=cmd_demo)
    sp.add_argument("--dir", metavar="D")


ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {"demo": _demo}
